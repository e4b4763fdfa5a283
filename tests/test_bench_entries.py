"""Any policy enters the control benchmark: ``--policies package.module:Name`` from a module
outside the package (run as a user runs it), policy objects through
:func:`~rigidrot_gym.tools.bench.control.benchmark`, and the entries that cannot run: an
error naming the entry before any work, or a failed entry with its reason while the others
run."""

from __future__ import annotations

import csv
import os
import pickle
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.scenario import find
from rigidrot_gym.tools.bench import campaign, control, policies
from rigidrot_gym.tools.cli import main

ROOT = Path(__file__).resolve().parents[1]
REORIENT = "RigidRot/Reorient-v0"

# A user's own package, outside rigidrot_gym: the docs' example (a PD law written from the
# observation, for torquers only), and policies that go wrong in the ways a run must survive.
CONTROLLER = (
    (ROOT / "docs" / "examples" / "my_gnc" / "controller.py").read_text()
    + '''

class TwoActions(MyPD):
    def predict(self, observation, state=None, episode_start=None, deterministic=True):
        return np.zeros((len(observation), 2), dtype=np.float32), state


class Raises(MyPD):
    steps = 0

    def predict(self, observation, state=None, episode_start=None, deterministic=True):
        self.steps += 1
        if self.steps > 3:
            raise RuntimeError("star tracker lost")
        return super().predict(observation, state)


class NaNs(MyPD):
    steps = 0

    def predict(self, observation, state=None, episode_start=None, deterministic=True):
        self.steps += 1
        action, state = super().predict(observation, state)
        if self.steps > 2 and len(action) > 1:  # on body 1, where there is one
            action[1, 0] = np.nan
        return action, state


class NoPredict:
    pass


def make():
    """A factory with no arguments: MyPD on Reorient-v0's limits."""
    return MyPD([0.01, 0.01, 0.01], 1.5)
'''
)


@pytest.fixture
def user_package(tmp_path, monkeypatch) -> Path:
    """``my_gnc/controller.py`` (a namespace package) and ``my_gnc/broken.py`` in a folder
    on ``sys.path``; the modules forgotten again afterwards."""
    folder = tmp_path / "user"
    (folder / "my_gnc").mkdir(parents=True)
    (folder / "my_gnc" / "controller.py").write_text(CONTROLLER)
    (folder / "my_gnc" / "broken.py").write_text('raise ImportError("needs the flight library")\n')
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    for name in [n for n in sys.modules if n == "my_gnc" or n.startswith("my_gnc.")]:
        del sys.modules[name]


def _rows(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "control.csv", newline="") as f:
        return {f"{r['policy']} {r['scenario']}": r for r in csv.DictReader(f)}


def _plain_rollout(policy, seed: int) -> tuple[bool, float, float]:
    """One episode of Reorient-v0 in a single env, measured by hand: success (inside the
    pointing and rate tolerances for the last ``success_hold_steps`` steps), the final
    pointing error (deg) and ∫|τ| dt with τ = a ⊙ τ_max."""
    env = gym.make(REORIENT)
    s = env.unwrapped.scenario
    obs, info = env.reset(seed=seed)
    effort, streak, done = 0.0, 0, False
    while not done:
        action, _ = policy.predict(obs)
        obs, _, terminated, truncated, info = env.step(action)
        effort += np.linalg.norm(np.clip(action, -1, 1) * s.max_torque) * s.dt
        inside = info["pointing_error_deg"] <= s.pointing_tolerance_deg and info["rate"] <= s.rate_tolerance
        streak = streak + 1 if inside else 0
        done = terminated or truncated
    env.close()
    return streak >= s.success_hold_steps, float(info["pointing_error_deg"]), effort


def test_an_import_entry_runs_end_to_end_as_its_own_rollout(user_package, tmp_path, capsys):
    from my_gnc.controller import MyPD

    entry = "my_gnc.controller:MyPD"
    argv = ["bench", "control", "--policies", entry, "pd"]
    argv += ["--scenarios", REORIENT, "RigidRot/WheelReorient-v0"]
    argv += ["--integrators", "rk4", "--inertia-scales", "1", "--seeds", "3", "--out", str(tmp_path / "out")]
    assert main([*argv, "--no-progress"]) == 0
    out = capsys.readouterr().out
    rows = _rows(tmp_path / "out")
    assert set(rows) == {f"{entry} {REORIENT}", f"pd {REORIENT}", "pd RigidRot/WheelReorient-v0"}
    assert f"left out: {entry} gave no policy (None) for RigidRot/WheelReorient-v0\n" in out
    row = rows[f"{entry} {REORIENT}"]
    assert row["failure"] == "" and row["episodes"] == "3"
    # The same law, built here and rolled out by hand, one env per seed.
    plain = [_plain_rollout(MyPD.for_scenario(find(REORIENT)), seed) for seed in range(3)]
    assert float(row["success_rate"]) == np.mean([p[0] for p in plain]) > 0
    assert np.isclose(float(row["final_error_deg"]), np.mean([p[1] for p in plain]), rtol=1e-6)
    assert np.isclose(float(row["effort"]), np.mean([p[2] for p in plain]), rtol=1e-6)
    # and through run_episodes with the object itself: the entry changes no number
    episodes, _ = control.run_episodes(MyPD.for_scenario(find(REORIENT)), REORIENT, [0, 1, 2], "rk4")
    direct = control.summarise(entry, REORIENT, "rk4", 1.0, episodes)
    assert {k: str(v) for k, v in vars(direct).items()} == {k: row[k] for k in vars(direct)}


def test_a_user_runs_the_cli_on_a_module_of_their_own(user_package, tmp_path):
    """As a user runs it: ``python -m rigidrot_gym.tools.cli`` with the module's folder on
    PYTHONPATH, and from the module's folder without it (where the ``rigidrot`` script's
    ``sys.path`` lacks the current folder, as ``python -P`` has it)."""
    args = ["bench", "control", "--policies", "my_gnc.controller:MyPD", "--scenarios", REORIENT]
    args += ["--integrators", "rk4", "--inertia-scales", "1", "--seeds", "2", "--no-progress"]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    runs = {
        "pythonpath": ([sys.executable, "-m", "rigidrot_gym.tools.cli"], tmp_path, [user_package, ROOT]),
        "current folder": (
            [
                sys.executable,
                "-P",
                "-c",
                "import sys; from rigidrot_gym.tools.cli import main; sys.exit(main())",
            ],
            user_package,
            [ROOT],
        ),
    }
    tables = []
    for name, (program, cwd, path) in runs.items():
        out_dir = tmp_path / name
        run_env = {**env, "PYTHONPATH": os.pathsep.join(map(str, path))}
        done = subprocess.run(
            [*program, *args, "--out", str(out_dir)], cwd=cwd, env=run_env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        (row,) = _rows(out_dir).values()
        assert row["policy"] == "my_gnc.controller:MyPD" and row["episodes"] == "2"
        tables.append(row)
    assert tables[0] == tables[1]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "no_such_gnc.controller:MyPD",
            "policy 'no_such_gnc.controller:MyPD': module 'no_such_gnc.controller' does not import: "
            "ModuleNotFoundError: No module named 'no_such_gnc'",
        ),
        (
            "my_gnc.broken:MyPD",
            "policy 'my_gnc.broken:MyPD': module 'my_gnc.broken' does not import: "
            "ImportError: needs the flight library",
        ),
        ("my_gnc.controller:MyPd", "policy 'my_gnc.controller:MyPd': my_gnc.controller has no 'MyPd'"),
        (
            "my_gnc.controller:NoPredict",
            "policy 'my_gnc.controller:NoPredict': built for RigidRot/Reorient-v0 it is a NoPredict, "
            "which has no predict(",
        ),
        ("my_gnc.controller:", "policy 'my_gnc.controller:': expected package.module:Name"),
    ],
)
def test_an_entry_that_cannot_be_built_is_an_error_naming_it(user_package, tmp_path, capsys, entry, message):
    argv = ["bench", "control", "--policies", "pd", entry, "--scenarios", REORIENT, "--seeds", "1"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"rigidrot: error: {message}") and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_failing_policies_are_failed_entries_and_the_others_run(user_package, tmp_path, capsys):
    failing = [f"my_gnc.controller:{name}" for name in ("TwoActions", "Raises", "NaNs")]
    argv = ["bench", "control", "--policies", "my_gnc.controller:MyPD", *failing, "--scenarios", REORIENT]
    argv += ["--integrators", "rk4", "semi_implicit", "--inertia-scales", "1", "--seeds", "2"]
    assert main([*argv, "--out", str(tmp_path / "out"), "--no-progress"]) == 1
    out = capsys.readouterr().out
    case = f"on {REORIENT} (rk4, ×1)"
    reasons = {
        "TwoActions": "predict returned an action of shape (2, 2) at step 0; expected (2, 3): "
        f"2 bodies × 3 commands of {REORIENT} in [-1, 1]",
        "Raises": "predict raised RuntimeError at step 3: star tracker lost",
        "NaNs": "predict returned a non-finite action at step 2 (body 1:",
    }
    for name, reason in reasons.items():
        assert f"failed: my_gnc.controller:{name} {case}: {reason}" in out
    rows = _rows(tmp_path / "out")
    assert rows[f"my_gnc.controller:MyPD {REORIENT}"]["failure"] == ""
    for name in reasons:
        assert rows[f"my_gnc.controller:{name} {REORIENT}"]["failure"].startswith(reasons[name])
    markdown = (tmp_path / "out" / "control.md").read_text()
    assert f"| my_gnc.controller:MyPD | {REORIENT} | rk4 |" in markdown
    assert f"failed: my_gnc.controller:TwoActions {case}" in markdown
    assert "| my_gnc.controller:TwoActions" not in markdown  # not a row of the table


def test_a_failed_block_is_reported_not_stored_and_the_campaign_goes_on(user_package, tmp_path):
    """NaNs fails on a block of two bodies (body 1 at step 2) and runs on a block of one:
    the case is failed as a whole, its good block's shard stored, the failed one not (a
    resumed campaign runs it again)."""
    makers = policies.resolve(["my_gnc.controller:NaNs", "pd"])
    tasks = control.plan(makers, [REORIENT], ["rk4"], seeds=[0, 1, 2], scales=[1.0], block_size=2)
    blocks = campaign.run(tasks, makers, tmp_path / "shards", progress=False)
    nans = [t for t in tasks if t.policy == "my_gnc.controller:NaNs"]
    assert [blocks[t.key].failure is not None for t in nans] == [True, False]
    assert blocks[nans[0].key].failure.startswith(
        "predict returned a non-finite action at step 2 (body 1: [nan,"
    )
    stored = {p.stem for p in (tmp_path / "shards").glob("*.json")}
    assert stored == {t.key for t in tasks} - {nans[0].key}
    summaries, traces = control.gather(tasks, blocks)
    (failed,) = [s for s in summaries if s.failure]
    assert (
        failed.policy == "my_gnc.controller:NaNs" and failed.episodes == 0 and np.isnan(failed.success_rate)
    )
    assert failed.line == f"failed: my_gnc.controller:NaNs on {REORIENT} (rk4, ×1): {failed.failure}"
    assert set(traces) == {("pd", REORIENT)}
    assert control.failure_lines(summaries) == [failed.line]


def test_benchmark_takes_policy_objects_classes_and_factories(user_package):
    from my_gnc import controller

    pd = controller.MyPD.for_scenario(find(REORIENT))
    entries = {
        "object": pd,
        "class": controller.MyPD,
        "factory": controller.make,
        "maker": lambda scenario: controller.MyPD.for_scenario(scenario),
        "wrong size": controller.TwoActions.for_scenario(find(REORIENT)),
    }
    summaries, traces = control.benchmark(entries, [REORIENT], ["rk4"], seeds=[0, 1], scales=[1.0])
    by_name = {s.policy: s for s in summaries}
    episodes, _ = control.run_episodes(pd, REORIENT, [0, 1], "rk4")
    expected = vars(control.summarise("object", REORIENT, "rk4", 1.0, episodes))
    for name in ("object", "class", "factory", "maker"):
        assert repr(vars(by_name[name])) == repr({**expected, "policy": name})  # NaN as NaN
    assert by_name["wrong size"].failure.startswith("predict returned an action of shape (2, 2) at step 0")
    assert set(traces) == {(name, REORIENT) for name in ("object", "class", "factory", "maker")}


def test_an_object_without_predict_is_refused_by_name():
    with pytest.raises(policies.PolicyError, match=r"policy 'mine': built for RigidRot/Reorient-v0 it is a"):
        control.benchmark({"mine": lambda scenario: object()}, [REORIENT], ["rk4"], [0], [1.0])
    with pytest.raises(policies.PolicyError, match=r"policy 'seven': building it for .* raised TypeError"):
        control.plan({"seven": 7}, [REORIENT], ["rk4"], [0], [1.0])


def test_an_import_maker_travels_as_its_entry_and_knows_its_code(user_package):
    maker = policies.ImportMaker("my_gnc.controller:MyPD")
    data = pickle.dumps(maker)
    assert len(data) < 1000 and b"my_gnc.controller:MyPD" in data
    copy = pickle.loads(data)
    assert copy.fingerprint == maker.fingerprint and copy.root == str(user_package)
    scenario = find(REORIENT)
    obs = np.array([[1.0, 0.2, -0.1, 0.05, 0.1, 0.0, -0.2]])
    np.testing.assert_array_equal(copy(scenario).predict(obs)[0], maker(scenario).predict(obs)[0])
    # an edit of the package's code makes another fingerprint, so another task key
    tasks = control.plan({"e": maker}, [REORIENT], ["rk4"], [0], [1.0])
    (user_package / "my_gnc" / "gains.py").write_text("K = 0.03\n")
    edited = policies.ImportMaker("my_gnc.controller:MyPD")
    assert edited.fingerprint != maker.fingerprint
    assert control.plan({"e": edited}, [REORIENT], ["rk4"], [0], [1.0])[0].key != tasks[0].key


def test_an_import_entry_on_ray_equals_the_local_run_bit_for_bit(ray_cluster, user_package, tmp_path):
    """The workers do not have the user's folder on their path: each imports the entry from
    the folder the maker found it in. A failed entry fails there with the same reason."""
    import struct

    makers = policies.resolve(["my_gnc.controller:MyPD", "my_gnc.controller:NaNs", "pd"])
    tasks = control.plan(makers, [REORIENT], ["rk4"], seeds=range(4), scales=[1.0, 1.2], block_size=2)
    local = control.gather(tasks, campaign.run(tasks, makers, tmp_path / "local", progress=False))
    there = control.gather(tasks, campaign.run(tasks, makers, tmp_path / "ray", use_ray=True, progress=False))
    pack = lambda v: struct.pack("<d", v) if isinstance(v, float) else v  # noqa: E731
    assert [[pack(v) for v in vars(s).values()] for s in there[0]] == [
        [pack(v) for v in vars(s).values()] for s in local[0]
    ]
    assert there[1].keys() == local[1].keys() == {("my_gnc.controller:MyPD", REORIENT), ("pd", REORIENT)}
    for key in local[1]:
        assert all(np.array_equal(there[1][key][k], local[1][key][k]) for k in local[1][key])
    assert sum(bool(s.failure) for s in there[0]) == 2  # NaNs at both scales
