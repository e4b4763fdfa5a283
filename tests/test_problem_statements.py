"""Every benchmark table file says what it ran: the problem, the settings the run was
given (checked here against values this test passes in), the machine where it timed."""

from __future__ import annotations

import os

import numpy as np

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.scenario import find
from rigidrot_gym.control import CONTROLLERS
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.tools import crosscheck as cc
from rigidrot_gym.tools.bench import accuracy, control


def _cores() -> str:
    return f"{len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()} cores"


def test_the_control_table_states_its_seeds_and_scenario(tmp_path):
    env_id = "RigidRot/Reorient-v0"
    scenario = find(env_id).with_overrides(dt=0.25, max_episode_steps=20)
    makers = {"quaternion_feedback": CONTROLLERS["quaternion_feedback"]}
    tasks = control.plan(makers, [scenario], ["rk4"], seeds=[3, 4, 5, 9], scales=[1.0])
    # what the episodes measured does not matter here: made up, so that nothing compiles
    episodes = [control.Episode(True, 2.0, 0.5, 30.0, 0.1, 0.2, 5.0)] * 4
    summaries = [control.summarise("quaternion_feedback", env_id, "rk4", 1.0, episodes)]
    trace = {
        "t": np.array([0.0, 0.25]),
        "pointing_error_deg": np.array([9.0, 8.0]),
        "torque": np.zeros((2, 3)),
    }
    text = control.write(tmp_path, summaries, {("quaternion_feedback", env_id): trace}, tasks)
    first = (tmp_path / "control.md").read_text().splitlines()[0]
    moments = ", ".join(f"{m:g}" for m in np.diag(find(env_id).inertia))
    for words in (
        "seeds 3–5, 9",
        env_id,
        f"J = diag({moments}) kg·m²",
        "dt = 0.25 s",
        "at most 20 steps (5 s)",
        "integrator rk4",
    ):
        assert words in first, words
    assert "| quaternion_feedback | RigidRot/Reorient-v0 | rk4 | ×1 | 4 |" in text  # the table follows
    assert (tmp_path / "control.md").read_text() == text + "\n"


def _accuracy_inputs():
    problem = accuracy.Problem(
        key="p",
        title="a test body",
        inertia=np.array([1.5, 2.5, 3.5]),
        q0=quat.identity(),
        omega0=np.array([0.3, -0.2, 0.7]),
        duration=7.0,
        steps=(0.04, 0.02, 0.01),
        dt_ref=0.02,
        reference=None,
    )
    point = accuracy.Point("p", "rk4", 0.02, 350, 5, 1e-6, 1e-6, 0.0, 1400.0, 0.01)
    drift = accuracy.Drift("rk4", 1000, 0.01, 1e-9, 1e-9, 1e-15)
    return [problem], [point], {("p", "rk4"): 4.0}, [drift], ["rk4"], 5


def test_the_accuracy_tables_state_each_problem_the_batch_and_the_machine():
    report = accuracy.accuracy_markdown(*_accuracy_inputs()).splitlines()
    headline = accuracy.headline_markdown(*_accuracy_inputs()).splitlines()
    assert report[0] == "# Accuracy against cost"
    for line in (report[2], headline[0]):  # the first line under the title, the file's first
        for words in (
            "a test body: I = (1.5, 2.5, 3.5) kg·m²",
            "ω0 = (0.3, -0.2, 0.7) rad/s",
            "T = 7 s",
            "dt = 0.04 … 0.01 s",
            "5 bodies",
            _cores(),
        ):
            assert words in line, (words, line)


def test_the_crosscheck_tables_state_their_steps_machine_and_long_run(tmp_path):
    problem = cc.Problem("p", "a test body", (1.5, 2.5, 3.5), (0.3, -0.2, 0.7), 0.4)
    points = cc.run(["rk4"], problems=(problem,), steps=(0.05, 0.025), timed_steps=10)
    drifts, curves = cc.long_horizon(["rk4"], steps=200, dt=0.02, chunk=100)
    cc.write(tmp_path, cc.Results(points, ["rk4"], (problem,), drifts, curves, [], []))
    lines = (tmp_path / "crosscheck.md").read_text().splitlines()
    assert "dt = 1/20, 1/40 s" in lines[2] and "`p`" in lines[2] and _cores() in lines[2]
    assert "## a test body: I = (1.5, 2.5, 3.5) kg·m², ω0 = (0.3, -0.2, 0.7) rad/s, 0.4 s" in lines
    first = (tmp_path / "drift.md").read_text().splitlines()[0]
    # the long run is the crosscheck's tumbler, at the steps this test asked for
    assert "200 steps of 0.02 s" in first and "I = (1.0, 2.0, 3.0) kg·m²" in first
    assert "ω0 = (0.01, 2.0, 0.01) rad/s" in first
