"""Control-benchmark campaigns: blocks stored and resumed, and on a real two-node Ray
cluster the same tables bit for bit as the local run, also when a worker is killed."""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import threading
import time
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
import yaml
from gymnasium.error import DependencyNotInstalled
from ray_cluster import descendants_named

from rigidrot_gym.tools.bench import campaign, control, policies
from rigidrot_gym.tools.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _bits(summaries) -> list[tuple]:
    """Every field of every summary, floats as their 8 bytes (NaN compares equal to NaN)."""
    pack = lambda v: struct.pack("<d", v) if isinstance(v, float) else v  # noqa: E731
    return [tuple(pack(v) for v in vars(s).values()) for s in summaries]


def _same_traces(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        np.array_equal(a[k][name], b[k][name]) for k in a for name in ("t", "pointing_error_deg", "torque")
    )


def _campaign(makers, **kwargs):
    return control.plan(
        makers,
        kwargs.get("scenarios", ["RigidRot/Reorient-v0", "RigidRot/WheelReorient-v0"]),
        kwargs.get("integrators", ["semi_implicit"]),
        seeds=range(kwargs.get("seeds", 12)),
        scales=kwargs.get("scales", [1.0, 1.2]),
        block_size=kwargs.get("block_size", 5),
    )


class _Counting:
    """A policy maker that counts the tasks it built a policy for."""

    def __init__(self, maker):
        self.maker, self.calls = maker, 0
        self.fingerprint = maker.fingerprint

    def __call__(self, scenario):
        self.calls += 1
        return self.maker(scenario)


def test_blocks_cover_the_seeds_in_order_and_plans_refuse_bad_input():
    makers = policies.resolve(["quaternion_feedback"])
    tasks = _campaign(makers)
    assert len(tasks) == 2 * 2 * 3  # scenarios × (semi_implicit at 2 scales) × blocks of 5, 5, 2 seeds
    nominal = [t for t in tasks if t.integrator == "semi_implicit" and t.inertia_scale == 1.0]
    assert [t.seeds for t in nominal[:3]] == [(0, 1, 2, 3, 4), (5, 6, 7, 8, 9), (10, 11)]
    assert [t.trace for t in nominal] == [True, False, False] * 2
    assert len({t.key for t in tasks}) == len(tasks)
    for bad in ({"block_size": 0}, {"seeds": 0}, {"scales": [1.0, 1.0]}, {"scales": [-1.0]}):
        with pytest.raises(ValueError, match=r"block_size|seeds|scales"):
            _campaign(makers, **bad)


def test_stored_blocks_read_back_bit_for_bit_and_resume_skips_them(tmp_path):
    maker = _Counting(policies.ControllerMaker("rate_damping"))
    tasks = _campaign({"rate_damping": maker}, scenarios=["RigidRot/Reorient-v0"])
    maker.calls = 0  # the plan built it once to see that it applies
    blocks = campaign.run(tasks, {"rate_damping": maker}, tmp_path, progress=False)
    assert maker.calls == len(tasks)
    for task in tasks:
        stored = campaign.load_block(tmp_path, task)
        assert _bits(stored.episodes) == _bits(blocks[task.key].episodes)
        assert (stored.trace is None) == (blocks[task.key].trace is None)
    summaries, traces = control.gather(tasks, blocks)

    # Remove one shard's manifest: a resumed run computes that task only, the others as stored.
    (tmp_path / f"{tasks[0].key}.json").unlink()
    maker.calls = 0
    resumed = campaign.run(tasks, {"rate_damping": maker}, tmp_path, resume=True, progress=False)
    assert maker.calls == 1
    again, again_traces = control.gather(tasks, resumed)
    assert _bits(again) == _bits(summaries) and _same_traces(again_traces, traces)
    with pytest.raises(ValueError, match="without a maker"):
        campaign.run(tasks, {}, tmp_path)


def test_a_wheel_block_stores_every_measure_and_reads_back_bit_for_bit(tmp_path):
    """A block with wheels (its wheel momentum used a number, not NaN) through its shard:
    the CSV's columns are the seed and every field of an episode, and it reads back bit
    for bit."""
    makers = policies.resolve(["quaternion_feedback"])
    (task,) = control.plan(makers, ["RigidRot/WheelReorient-v0"], ["rk4"], [3, 4], [1.0])
    block = control.run_task(task, makers["quaternion_feedback"])
    assert all(0.0 < e.wheel_momentum_used <= 1.0 and e.rms_error_deg > 0.0 for e in block.episodes)
    campaign.save_block(tmp_path, block)
    header = (tmp_path / f"{task.key}.csv").read_text().splitlines()[0].split(",")
    assert header == ["seed", *(f.name for f in fields(control.Episode))]
    assert {"rms_error_deg", "wheel_momentum_used"} <= set(header)
    stored = campaign.load_block(tmp_path, task)
    assert _bits(stored.episodes) == _bits(block.episodes)
    assert _same_traces({0: stored.trace}, {0: block.trace})


def _damage_csv_number(path: Path) -> None:
    lines = path.read_text().splitlines()
    cells = lines[1].split(",")
    cells[-1] = "123.5"  # the first episode's last field
    path.write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


DAMAGES = {
    "a number edited": lambda folder, key: _damage_csv_number(folder / f"{key}.csv"),
    "the CSV cut short": lambda folder, key: _truncate(folder / f"{key}.csv"),
    "the CSV emptied": lambda folder, key: (folder / f"{key}.csv").write_bytes(b""),
    "the trace cut short": lambda folder, key: _truncate(folder / f"{key}.npz"),
    "the trace gone": lambda folder, key: (folder / f"{key}.npz").unlink(),
    "the manifest not JSON": lambda folder, key: (folder / f"{key}.json").write_text("{"),
    "the manifest a list": lambda folder, key: (folder / f"{key}.json").write_text("[1, 2]"),
    "the manifest of other seeds": lambda folder, key: (folder / f"{key}.json").write_text(
        (folder / f"{key}.json").read_text().replace("[\n  0,", "[\n  100,")
    ),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_shard_is_named_in_a_warning_and_run_again(tmp_path, damage):
    """Every kind of damage: a warning that names the file, the task run again, and the
    tables bit for bit a fresh run's; never a traceback."""
    maker = _Counting(policies.ControllerMaker("rate_damping"))
    tasks = _campaign({"rate_damping": maker}, scenarios=["RigidRot/Reorient-v0"], integrators=["rk4"])
    fresh = control.gather(tasks, campaign.run(tasks, {"rate_damping": maker}, tmp_path, progress=False))
    first = next(t for t in tasks if t.trace)  # a shard with all three files
    DAMAGES[damage](tmp_path, first.key)
    maker.calls = 0
    with pytest.warns(campaign.DamagedShardWarning, match=rf"damaged shard.*{first.key}") as caught:
        resumed = campaign.run(tasks, {"rate_damping": maker}, tmp_path, resume=True, progress=False)
    assert maker.calls == 1 and len(caught) == 1
    again = control.gather(tasks, resumed)
    assert _bits(again[0]) == _bits(fresh[0]) and _same_traces(again[1], fresh[1])
    assert campaign.load_block(tmp_path, first) is not None  # the shard is whole again


def test_a_shard_is_reused_only_for_the_same_numbers(tmp_path, monkeypatch):
    """The key holds what decides a block's numbers: the scenario's content (not its id or
    file), the policy, the integrator, the scale, the seeds, the package version and its
    code (a built-in controller's code changes between versions too)."""
    import rigidrot_gym
    from rigidrot_gym.attitude.scenario import find
    from rigidrot_gym.physics.plumbing import jit

    reorient = find("RigidRot/Reorient-v0")
    text = Path(reorient.source).read_text()
    (tmp_path / "a.toml").write_text(text)
    (tmp_path / "b.toml").write_text(text)  # the same content under another name
    (tmp_path / "edited.toml").write_text(text.replace("pointing_deg = 2.0", "pointing_deg = 3.0"))

    def key(scenario=reorient, integrator="semi_implicit", seeds=2, policy="pd"):
        chosen = policies.resolve([policy])
        (task,) = control.plan(chosen, [scenario], [integrator], range(seeds), [1.0], 10)[-1:]
        return task.key

    base = key()
    assert key(tmp_path / "a.toml") == key(tmp_path / "b.toml") == base
    others = [
        key(tmp_path / "edited.toml"),  # same id, other tolerance
        key(integrator="nielsen_krenk"),
        key(seeds=3),
        key(policy="lqr"),
    ]
    monkeypatch.setattr(rigidrot_gym, "__version__", "9.9.9")
    others.append(key())
    monkeypatch.undo()
    assert key() == base
    # An edit of the package's code: a source file added to the digest, then edited.
    edited = tmp_path / "edited_module.py"
    edited.write_text("GAIN = 1.0\n")
    monkeypatch.setattr(jit, "_ALSO", [edited])
    try:
        jit.source_digest.cache_clear()
        others.append(key())
        edited.write_text("GAIN = 2.0\n")
        jit.source_digest.cache_clear()
        others.append(key())
    finally:
        monkeypatch.undo()
        jit.source_digest.cache_clear()
    assert key() == base
    assert base not in others and len(set(others)) == len(others)


def test_bench_control_runs_a_scenario_file(tmp_path, monkeypatch, capsys):
    """A scenario file works wherever an id does: planned, run, resumed, tabled by its id."""
    from rigidrot_gym.attitude.scenario import find

    text = Path(find("RigidRot/Reorient-v0").source).read_text()
    path = tmp_path / "mine.toml"
    path.write_text(text.replace('id = "RigidRot/Reorient-v0"', 'id = "Mine/Reorient-v9"'))
    argv = ["bench", "control", "--policies", "pd", "--scenarios", str(path), "--integrators", "rk4"]
    argv += ["--inertia-scales", "1", "--seeds", "2", "--no-progress", "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    assert main([*argv, "--resume"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| pd")]
    assert len(rows) == 2 and all("Mine/Reorient-v9" in row for row in rows)


@pytest.mark.ray
def test_a_local_ray_instance_listens_on_the_loopback_address_only():
    """In a fresh process without the tests' settings: Ray, left to itself, binds to the
    machine's outward address."""
    pytest.importorskip("ray")
    code = (
        "from rigidrot_gym.tools.bench import campaign\ncampaign.connect(None)\nimport ray\n"
        "print(sorted({node['NodeManagerAddress'] for node in ray.nodes()}))\nray.shutdown()"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "['127.0.0.1']"


@pytest.fixture(scope="module")
def agent_folder(tmp_path_factory) -> Path:
    """A PPO agent for Reorient-v0 (a few hundred steps of training: any weights will do)
    saved as rl_zoo3 saves a run: <env>.zip and <env>/ with args.yml and vecnormalize.pkl."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecNormalize

    from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv

    folder = tmp_path_factory.mktemp("agents") / "ppo" / "RigidRot-Reorient-v0_1"
    (folder / "RigidRot-Reorient-v0").mkdir(parents=True)
    env = VecNormalize(AttitudeSB3VecEnv(4, "RigidRot/Reorient-v0"))
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(256)
    model.save(folder / "RigidRot-Reorient-v0.zip")
    env.save(str(folder / "RigidRot-Reorient-v0" / "vecnormalize.pkl"))
    args = {"algo": "ppo", "env": "RigidRot/Reorient-v0"}
    (folder / "RigidRot-Reorient-v0" / "args.yml").write_text(yaml.safe_dump(args))
    return folder


def test_ray_gives_the_local_tables_bit_for_bit_with_any_number_of_workers(
    ray_cluster, agent_folder, tmp_path
):
    makers = policies.resolve(["quaternion_feedback", "lqr", str(agent_folder)])
    tasks = _campaign(makers, scenarios=["RigidRot/Reorient-v0"], seeds=8, block_size=4)
    assert len(tasks) == 3 * 2 * 2  # policies × cases × blocks
    assert {t.policy for t in tasks} == {"quaternion_feedback", "lqr", "agent ppo/RigidRot-Reorient-v0_1"}
    local = control.gather(tasks, campaign.run(tasks, makers, tmp_path / "local", progress=False))
    # 1 CPU per task: three at once over the two nodes; 2 CPUs: one at a time on the worker node.
    for cpus in (1, 2):
        blocks = campaign.run(tasks, makers, tmp_path / f"ray{cpus}", use_ray=True, cpus_per_task=cpus)
        summaries, traces = control.gather(tasks, blocks)
        assert _bits(summaries) == _bits(local[0])
        assert _same_traces(traces, local[1])
        assert len(list((tmp_path / f"ray{cpus}").glob("*.csv"))) == len(tasks)


def test_the_thruster_and_fault_tasks_with_their_baselines_on_ray_equal_the_local_run(ray_cluster, tmp_path):
    """ThrusterSlew-v0 under quaternion feedback (its propellant column with it) and
    NadirPointFault-v0 (shortened to 120 steps, the wheel failing in [20, 60] s) under
    quaternion feedback and ``reallocating``: the Ray campaign's tables equal the local
    run's bit for bit (every measure, the wheel momentum used with them); reallocation,
    which needs wheels, is left out of ThrusterSlew-v0."""
    from rigidrot_gym.attitude.scenario import find

    makers = policies.resolve(["quaternion_feedback", "reallocating"])
    fault = find("RigidRot/NadirPointFault-v0").with_overrides(
        max_episode_steps=120, fault_window=[20.0, 60.0]
    )
    tasks = _campaign(
        makers,
        scenarios=["RigidRot/ThrusterSlew-v0", fault],
        integrators=["rk4"],
        scales=[1.0],
        seeds=2,
        block_size=2,
    )
    cases = {(t.policy, t.scenario) for t in tasks}
    assert cases == {
        ("quaternion_feedback", "RigidRot/ThrusterSlew-v0"),
        ("quaternion_feedback", "RigidRot/NadirPointFault-v0"),
        ("reallocating", "RigidRot/NadirPointFault-v0"),
    }
    local = control.gather(tasks, campaign.run(tasks, makers, tmp_path / "local", progress=False))
    summaries, traces = control.gather(tasks, campaign.run(tasks, makers, tmp_path / "ray", use_ray=True))
    assert _bits(summaries) == _bits(local[0]) and _same_traces(traces, local[1])
    fuel = {s.scenario: s.propellant for s in summaries}
    assert fuel["RigidRot/ThrusterSlew-v0"] > 0.0 and np.isnan(fuel["RigidRot/NadirPointFault-v0"])
    momentum = {s.scenario: s.wheel_momentum_used for s in summaries}  # RW0 wheels, rods beside them
    assert 0.0 < momentum["RigidRot/NadirPointFault-v0"] <= 1.0 and np.isnan(
        momentum["RigidRot/ThrusterSlew-v0"]
    )


def test_a_killed_worker_loses_no_block(ray_cluster, tmp_path):
    makers = policies.resolve(["rate_damping"])  # never settles: every episode runs 300 steps
    tasks = _campaign(
        makers,
        scenarios=["RigidRot/WheelReorient-v0"],
        integrators=["rk4"],
        scales=[1.0, 1.1, 1.2],
        seeds=400,
        block_size=400,
    )
    local = control.gather(tasks, campaign.run(tasks, makers, tmp_path / "local", progress=False))
    killed = []

    def kill_one_running_task():
        deadline = time.monotonic() + 120
        while not killed and time.monotonic() < deadline:
            for pid in descendants_named("ray::run_task"):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                break
            time.sleep(0.005)

    killer = threading.Thread(target=kill_one_running_task)
    killer.start()
    blocks = campaign.run(tasks, makers, tmp_path / "ray", use_ray=True, progress=False)
    killer.join()
    assert len(killed) == 1 and not Path(f"/proc/{killed[0]}").exists()
    summaries, traces = control.gather(tasks, blocks)
    assert [s.episodes for s in summaries] == [400, 400, 400]
    assert _bits(summaries) == _bits(local[0]) and _same_traces(traces, local[1])


def test_cli_on_ray_writes_under_the_current_folder_and_resumes(ray_cluster, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = ["bench", "control", "--policies", "pd", "--scenarios", "RigidRot/Reorient-v0", "--integrators"]
    argv += ["semi_implicit", "--inertia-scales", "1", "--seeds", "6", "--block-size", "3", "--no-progress"]
    assert main([*argv, "--ray"]) == 0
    out = tmp_path / "outputs" / "control"
    assert f"wrote {out}/control.md" in capsys.readouterr().out
    first = (out / "control.csv").read_bytes()
    shards = sorted(out.glob("shards/*.csv"))
    assert len(shards) == 2  # semi_implicit at ×1, two blocks of 3 seeds
    stamps = [p.stat().st_mtime_ns for p in shards]
    assert main([*argv, "--resume"]) == 0
    assert [p.stat().st_mtime_ns for p in shards] == stamps  # nothing recomputed
    assert (out / "control.csv").read_bytes() == first
    assert "2 tasks, 6 episodes" in capsys.readouterr().out


def test_the_tools_load_ray_only_when_a_campaign_runs_on_it(monkeypatch):
    code = (
        "import sys\nimport rigidrot_gym.tools.cli\n"
        "from rigidrot_gym.tools.bench import campaign, distributed, policies\n"
        "print('ray' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(DependencyNotInstalled, match=r"rigidrot-gym\[ray\]"):
        campaign.import_ray()


def test_the_example_cluster_file_passes_rays_own_checks():
    from ray.autoscaler._private.util import prepare_config, validate_config

    config = yaml.safe_load((ROOT / "benchmarks" / "ray" / "cluster.yaml").read_text())
    validate_config(prepare_config(config))  # what `ray up` does first
    with pytest.raises(Exception, match="not_a_field"):
        validate_config(prepare_config({**config, "not_a_field": 1}))
