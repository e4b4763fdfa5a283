"""The versioned suite and its leaderboard: the version is the hash of what decides the
numbers, the seeds are held out, each entry's episodes are ``rigidrot evaluate``'s, the
zero action's return is the env's own summed reward, the scores are the trimmed mean of
the normalised returns worked by hand, result files are checked against their version,
an outside policy runs end to end, and Ray gives the local run's bits."""

from __future__ import annotations

import csv
import hashlib
import json
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

import rigidrot_gym
from rigidrot_gym.attitude.scenario import find
from rigidrot_gym.tools.bench import campaign, control, leaderboard, suite
from rigidrot_gym.tools.cli import main
from rigidrot_gym.tools.evaluate import EVALUATION_SEEDS, evaluate

ROOT = Path(__file__).resolve().parents[1]
REORIENT, WHEELS = "RigidRot/Reorient-v0", "RigidRot/WheelReorient-v0"
AGENT = ROOT / "training" / "agents" / "ppo" / "RigidRot-Reorient-v0_1"
USER = "my_gnc.controller:MyPD"
FAILING = """

class TwoActions(MyPD):
    def predict(self, observation, state=None, episode_start=None, deterministic=True):
        return np.zeros((len(observation), 2), dtype=np.float32), state
"""


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory):
    """The docs' ``my_gnc`` package (plus a policy of the wrong action size) in a folder on
    ``sys.path``; forgotten again afterwards."""
    folder = tmp_path_factory.mktemp("user")
    (folder / "my_gnc").mkdir()
    source = (ROOT / "docs" / "examples" / "my_gnc" / "controller.py").read_text()
    (folder / "my_gnc" / "controller.py").write_text(source + FAILING)
    sys.path.insert(0, str(folder))
    yield folder
    sys.path.remove(str(folder))
    for name in [n for n in sys.modules if n == "my_gnc" or n.startswith("my_gnc.")]:
        del sys.modules[name]


@pytest.fixture(scope="module")
def small(user_folder, tmp_path_factory):
    """Reorient-v0 and WheelReorient-v0 on 3 seeds: the references, the user's MyPD (on
    Reorient-v0 only: torquers) and a committed agent (on its own task)."""
    pytest.importorskip("stable_baselines3")
    chosen = suite.standard([REORIENT, WHEELS], seeds=3)
    makers = suite.makers_for([USER, str(AGENT)])
    shards = tmp_path_factory.mktemp("shards")
    results = suite.run(chosen, makers, shards, progress=False)
    return chosen, makers, shards, {r.entry: r for r in results}


def _episodes(result: suite.Result, task: str, dispersion: str, integrator: str) -> tuple:
    (run,) = [
        r for r in result.runs if (r.task, r.dispersion, r.integrator) == (task, dispersion, integrator)
    ]
    return run.episodes


def test_the_version_is_the_hash_of_the_scenarios_seeds_and_dispersions(monkeypatch):
    standard = suite.standard()
    definition = standard.definition()
    text = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert standard.version == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert [t["id"] for t in definition["tasks"]] == list(rigidrot_gym.ENV_IDS)
    assert [t["digest"] for t in definition["tasks"]] == [find(i).digest() for i in rigidrot_gym.ENV_IDS]
    assert definition["seeds"] == list(range(10_000, 10_100)) and definition["engine"] == "semi_implicit"
    # Another seed count, task list or dispersion is another version; the package's is not.
    assert suite.standard(seeds=99).version != standard.version
    assert suite.standard(rigidrot_gym.ENV_IDS[:-1]).version != standard.version
    monkeypatch.setattr(suite, "FAULT_SHARE", 0.4)
    assert suite.standard().version != standard.version
    monkeypatch.setattr(suite, "FAULT_SHARE", 0.5)
    monkeypatch.setattr(rigidrot_gym, "__version__", "99.0")
    assert suite.standard().version == standard.version


def test_the_seeds_are_held_out_from_every_committed_agent_s_training():
    """Training seeds env k of n with seed + k; every later start comes from the env's own
    generator. The suite's seeds are ``rigidrot evaluate``'s, above all of them."""
    from rigidrot_gym.control.agents import read_yaml

    assert suite.SEEDS[0] == EVALUATION_SEEDS
    runs = sorted((ROOT / "training" / "agents").glob("*/*/*/args.yml"))
    assert len(runs) >= 16
    for args in runs:
        last = read_yaml(args)["seed"] + read_yaml(args.parent / "config.yml")["n_envs"]
        assert last < min(suite.SEEDS), args


def test_each_task_s_dispersions():
    defined = {s.id: s for s in suite.standard().scenarios}
    for task, dispersions in suite.standard().dispersions.items():
        s = defined[task]
        names = [d.name for d in dispersions]
        assert names[:3] == ["nominal", "inertia ×0.8", "inertia ×1.2"]
        assert [d.inertia_scale for d in dispersions[:3]] == [1.0, 0.8, 1.2]
        if s.randomize_inertia or s.randomize_torque or s.randomize_inertia_rotation_deg:
            assert "randomised body" not in names, task
        else:
            body = dispersions[3].apply(s)
            assert names[3] == "randomised body" and dispersions[3].inertia_scale == 1.0
            assert (body.randomize_inertia, body.randomize_inertia_rotation_deg, body.randomize_torque) == (
                defined[WHEELS].randomize_inertia,
                defined[WHEELS].randomize_inertia_rotation_deg,
                defined[WHEELS].randomize_torque,
            )
            names, dispersions = names[:3] + names[4:], dispersions[:3] + dispersions[4:]
        own_fault = s.wheel_fault != "none" or s.thruster_fault != "none"
        extra = names[3:]
        if own_fault or not (s.wheels or s.thruster_layout != "none"):
            assert extra == [], task
            continue
        half = 0.5 * s.dt * s.max_episode_steps
        failing = dispersions[3].apply(s)
        assert tuple(failing.fault_window) == (0.0, half)
        if s.wheels:
            assert extra == ["a wheel stops"] and failing.wheel_fault == "stop"
        else:
            assert extra == ["a thruster stuck off"] and failing.thruster_fault == "off"
        assert failing.digest() != s.digest()
    assert "a wheel stops" in [d.name for d in suite.standard().dispersions[WHEELS]]
    assert [d.name for d in suite.standard().dispersions["RigidRot/NadirPointFault-v0"]][3:] == [
        "randomised body"
    ]


def test_every_entry_s_episodes_are_rigidrot_evaluate_s(small, tmp_path):
    """One implementation of an episode's measures: the agent's and two controllers' rows of
    ``rigidrot evaluate`` on the same seeds equal the suite's nominal episodes, to the digit."""
    _, _, _, results = small
    evaluate(AGENT, episodes=3, compare=["quaternion_feedback", "lqr"], out=tmp_path)
    with open(tmp_path / "evaluation.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    names = [f"agent ppo/{AGENT.name}", "quaternion_feedback", "lqr"]
    assert [row["policy"] for row in rows] == names
    for name, row in zip(names, rows, strict=True):
        episodes = _episodes(results[name], REORIENT, "nominal", "rk4")
        mine = control.summarise(row["policy"], REORIENT, "rk4", 1.0, list(episodes))
        assert {k: str(v) for k, v in vars(mine).items()} == dict(row)


def test_evaluate_compares_an_outside_policy_on_the_same_episodes(user_folder, tmp_path):
    from my_gnc.controller import MyPD

    evaluate(AGENT, episodes=2, compare=[USER], out=tmp_path)
    with open(tmp_path / "evaluation.csv", newline="") as f:
        (_, row) = list(csv.DictReader(f))
    episodes, _ = control.run_episodes(MyPD.for_scenario(find(REORIENT)), REORIENT, suite.SEEDS[:2])
    mine = control.summarise(USER, REORIENT, "rk4", 1.0, episodes)
    assert {k: str(v) for k, v in vars(mine).items()} == dict(row)
    with pytest.raises(
        ValueError, match=r"my_gnc\.controller:MyPD gave no policy \(None\) for RigidRot/Wheel"
    ):
        evaluate(ROOT / "training/agents/ppo/RigidRot-WheelReorient-v0_1", episodes=1, compare=[USER])


def test_the_zero_action_s_return_is_the_env_s_summed_reward(small):
    _, _, _, results = small
    episodes = _episodes(results[suite.ZERO], WHEELS, "inertia ×1.2", "semi_implicit")
    base = find(WHEELS)
    for seed, episode in zip(suite.SEEDS, episodes, strict=False):
        env = gym.make(WHEELS, inertia=base.inertia * 1.2, integrator="semi_implicit")
        env.reset(seed=seed)
        total, done, steps = 0.0, False, 0
        while not done:
            _, reward, terminated, truncated, _ = env.step(np.zeros(env.action_space.shape, np.float32))
            total, done, steps = total + reward, terminated or truncated, steps + 1
        env.close()
        assert steps * base.dt == episode.duration
        assert episode.episode_return == pytest.approx(total, rel=1e-12)


def test_scores_are_the_trimmed_mean_of_the_returns_normalised_by_hand(small):
    chosen, _, _, results = small
    board = leaderboard.build(list(results.values()))
    controllers = [r for r in results.values() if r.kind == "controller"]
    for task in (REORIENT, WHEELS):
        names = [d.name for d in chosen.dispersions[task]]

        def returns(result, integrator, task=task, names=names):  # (dispersions, seeds)
            return np.array(
                [[e.episode_return for e in _episodes(result, task, n, integrator)] for n in names]
            )

        zero = returns(results[suite.ZERO], "rk4").mean()
        means = {
            r.entry: returns(r, "rk4").mean() for r in controllers if any(x.task == task for x in r.runs)
        }
        best = sorted(means, key=lambda name: (-means[name], name))[0]
        ref = board.references[task]
        assert (ref.zero, ref.best, ref.best_return) == (zero, best, means[best])
        for result in results.values():
            if not any(x.task == task for x in result.runs):
                continue
            for table, integrator in (("accurate", "rk4"), ("engine", "semi_implicit")):
                per_seed = ((returns(result, integrator) - zero) / (means[best] - zero)).mean(axis=0)
                (score,) = [
                    s for s in board.scores if (s.entry, s.table, s.task) == (result.entry, table, task)
                ]
                assert score.iqm == pytest.approx(stats.trim_mean(per_seed, 0.25), abs=1e-12)
                assert score.low <= score.iqm <= score.high
    (qf,) = [
        s
        for s in board.scores
        if (s.entry, s.table, s.task) == ("quaternion_feedback", "accurate", "all tasks")
    ]
    per_task = [
        (
            (
                np.array(
                    [
                        [
                            e.episode_return
                            for e in _episodes(results["quaternion_feedback"], t, d.name, "rk4")
                        ]
                        for d in chosen.dispersions[t]
                    ]
                )
                - board.references[t].zero
            )
            / (board.references[t].best_return - board.references[t].zero)
        ).mean(axis=0)
        for t in (REORIENT, WHEELS)
    ]
    # An entry's interval is its own: the same whatever other entries are in the board.
    alone = leaderboard.build([r for r in results.values() if r.kind != "agent"])
    mine = {(s.table, s.task): (s.iqm, s.low, s.high) for s in alone.scores if s.entry == USER}
    assert mine == {(s.table, s.task): (s.iqm, s.low, s.high) for s in board.scores if s.entry == USER}
    assert qf.tasks == 2
    assert qf.iqm == pytest.approx(stats.trim_mean(np.concatenate(per_task), 0.25), abs=1e-12)


def test_a_result_file_reads_back_and_an_edited_or_mixed_one_is_refused(small, tmp_path):
    _, _, _, results = small
    result = results[USER]
    assert [r.task for r in result.runs] == [REORIENT] * 8  # torquers only: not on the wheels
    path = result.save(tmp_path)
    assert path.name == "my_gnc.controller_MyPD.json"
    assert suite.load(path).to_json() == result.to_json()
    data = json.loads(path.read_text())
    data["definition"]["seeds"][0] = 7
    (tmp_path / "edited.json").write_text(json.dumps(data))
    with pytest.raises(
        ValueError, match=r"edited\.json: its suite definition hashes to .* the file was edited"
    ):
        suite.load(tmp_path / "edited.json")
    data = json.loads(path.read_text())
    data["runs"][0]["episodes"] = {k: v[:2] for k, v in data["runs"][0]["episodes"].items()}
    (tmp_path / "short.json").write_text(json.dumps(data))
    with pytest.raises(
        ValueError, match=r"RigidRot/Reorient-v0 \(nominal, rk4\) has 2 episodes, suite \w+ 3"
    ):
        suite.load(tmp_path / "short.json")
    data = json.loads(path.read_text())
    del data["runs"][3]  # a dispersion left out: a score over the others would be cherry-picked
    (tmp_path / "partial.json").write_text(json.dumps(data))
    with pytest.raises(
        ValueError,
        match=r"RigidRot/Reorient-v0 has 7 runs; .* once \(8\), missing \['inertia ×0.8 \(semi_implicit\)'\]",
    ):
        suite.load(tmp_path / "partial.json")
    (tmp_path / "not.json").write_text("{}")
    with pytest.raises(ValueError, match=r"not\.json: not a suite result file"):
        suite.load(tmp_path / "not.json")
    other = suite.standard([REORIENT], seeds=2)
    stranger = suite.Result("stranger", "user", "x", other.version, other.definition(), "0.0", ())
    with pytest.raises(
        ValueError, match=f"2 suite versions cannot share a leaderboard: .*stranger: {other.version}"
    ):
        leaderboard.build([*results.values(), stranger])
    with pytest.raises(ValueError, match=r"entries given more than once: \['lqr'\]"):
        leaderboard.build([*results.values(), results["lqr"]])


def test_an_outside_policy_enters_from_the_command_line(user_folder, tmp_path, capsys):
    out = tmp_path / "suite"
    argv = ["bench", "suite", "--tasks", REORIENT, "--seeds", "2", "--policies", USER]
    assert main([*argv, "my_gnc.controller:TwoActions", "--out", str(out), "--no-progress"]) == 1
    printed = capsys.readouterr().out
    assert "(a part of the standard suite): 1 tasks, 2 seeds, 10 entries" in printed
    assert (
        "failed: my_gnc.controller:TwoActions on RigidRot/Reorient-v0 (nominal) (rk4, ×1): predict "
        "returned an action of shape (2, 2) at step 0; expected (2, 3)" in printed
    )
    files = sorted(p.name for p in (out / "entries").glob("*.json"))
    assert "my_gnc.controller_MyPD.json" in files and "zero_action.json" in files and len(files) == 10
    mine = suite.load(out / "entries" / "my_gnc.controller_MyPD.json")
    assert (
        mine.kind == "user" and mine.source.startswith(f"{USER}@") and all(not r.failure for r in mine.runs)
    )
    # The leaderboard remade from the files alone (no entry's code run) is the suite's own.
    assert main(["bench", "leaderboard", str(out), "--out", str(tmp_path / "board")]) == 0
    assert "not this package's" in capsys.readouterr().out
    assert (tmp_path / "board" / "leaderboard.md").read_text() == (out / "leaderboard.md").read_text()
    assert (tmp_path / "board" / "leaderboard.png").stat().st_size > 10_000
    # An entry that does not import: an error naming it, before any work.
    assert main([*argv[:-1], "my_gnc.nothing:MyPD", "--out", str(tmp_path / "bad")]) == 2
    assert "policy 'my_gnc.nothing:MyPD': module 'my_gnc.nothing' does not import" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_the_suite_resumes_from_its_shards_without_running_again(small, monkeypatch):
    chosen, makers, shards, results = small

    def refuse(task, make):
        raise AssertionError(f"ran {task.key} again")

    monkeypatch.setattr(campaign, "run_task", refuse)
    again = suite.run(chosen, makers, shards, resume=True, progress=False)
    assert [r.to_json() for r in again] == [r.to_json() for r in results.values()]


def test_the_suite_on_ray_equals_the_local_run(ray_cluster, tmp_path):
    chosen = suite.standard([REORIENT], seeds=4)
    makers = suite.makers_for(["quaternion_feedback"])
    local = suite.run(chosen, makers, tmp_path / "local", progress=False)
    on_ray = suite.run(chosen, makers, tmp_path / "ray", use_ray=True, progress=False)
    assert [r.to_json() for r in on_ray] == [r.to_json() for r in local]
    assert {p.name for p in (tmp_path / "ray").iterdir()} == {p.name for p in (tmp_path / "local").iterdir()}
