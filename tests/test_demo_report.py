"""The demo's figure (attitude error against the exact solution, methods grouped) and its
report (the problem stated first, each engine that did not run named with its extra)."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from gymnasium.error import DependencyNotInstalled

from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.physics.rotation.trajectory import Trajectory
from rigidrot_gym.tools import demo

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _runs(names, t, q_of):
    omega = np.tile([0.01, 2.0, 0.01], (t.size, 1))
    return {
        name: Trajectory(t, q_of(name), omega, np.diag([1.0, 2.0, 3.0]), name, np.zeros(()), np.zeros(()))
        for name in names
    }


@pytest.fixture
def figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.linspace(0.0, 30.0, 301)
    q_ref = np.stack([np.cos(0.05 * t), 0 * t, 0 * t, np.sin(0.05 * t)], axis=-1)
    # each method off the reference by its own fixed turn about body x: 1e-6·2^k rad
    angles = {name: 1e-6 * 2.0**k for k, name in enumerate(integrators.names())}

    def q_of(name):
        half = 0.5 * angles[name]
        return np.stack(
            [
                q_ref[:, 0] * np.cos(half) - q_ref[:, 1] * np.sin(half),
                q_ref[:, 0] * np.sin(half) + q_ref[:, 1] * np.cos(half),
                q_ref[:, 2] * np.cos(half) + q_ref[:, 3] * np.sin(half),
                q_ref[:, 3] * np.cos(half) - q_ref[:, 2] * np.sin(half),
            ],
            axis=-1,
        )  # q_ref ⊗ (cos, sin, 0, 0), written out

    fig = demo.figure(_runs(integrators.names(), t, q_of), q_ref, demo.describe())
    yield fig, angles
    plt.close(fig)


def test_each_method_is_drawn_once_in_a_panel_of_at_most_six_told_apart(figure):
    fig, _ = figure
    drawn = []
    for ax in fig.axes:
        lines = ax.get_lines()
        assert 1 <= len(lines) <= 6
        looks = {(str(line.get_color()), line.get_linestyle(), line.get_marker()) for line in lines}
        assert len(looks) == len(lines), ax.get_title(loc="left")  # no two alike in a panel
        labels = [text.get_text() for text in ax.get_legend().get_texts()]
        assert labels == [line.get_label() for line in lines]  # a key per panel
        assert ax.get_yscale() == "log" and "(deg)" in ax.get_ylabel()
        drawn += [label.split()[0] for label in labels]
    assert sorted(drawn) == sorted(integrators.names())
    assert fig.axes[-1].get_xlabel() == "t (s)"
    panel = {
        name: k
        for k, ax in enumerate(fig.axes)
        for name in (label.split()[0] for label in ax.get_legend_handles_labels()[1])
    }
    # the first-order methods apart from the fourth-order ones, the engines apart from ours
    assert panel["euler"] == panel["semi_implicit"] != panel["rk4"] == panel["rkmk4"]
    assert panel["pybullet"] not in (panel["euler"], panel["rk4"])


def test_the_curves_are_the_rotation_angle_from_the_exact_attitude_in_degrees(figure):
    fig, angles = figure
    for ax in fig.axes:
        for line in ax.get_lines():
            name = line.get_label().split()[0]
            np.testing.assert_allclose(line.get_ydata(), np.degrees(angles[name]), rtol=1e-6)
            assert line.get_xdata()[0] == pytest.approx(0.1)  # from the first step: t = 0 is exact


def test_the_title_states_the_problem(figure):
    fig, _ = figure
    title = " ".join(fig._suptitle.get_text().split())
    for words in ("I = (1, 2, 3) kg·m²", "ω0 = (0.01, 2, 0.01) rad/s", "dt = 0.01 s", "30 s"):
        assert words in title


def test_every_engine_names_the_extra_that_installs_it():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    # each engine's distribution on PyPI
    distribution = {"PyBullet": "pybullet", "MuJoCo": "mujoco", "Basilisk": "bsk"}
    engines = {integrators.get(n).engine for n in integrators.names()} - {""}
    assert engines == set(distribution)
    for engine in engines:
        requirements = extras[demo.ENGINE_EXTRAS[engine]]
        assert any(r.startswith(distribution[engine]) for r in requirements), (engine, requirements)


def test_the_report_states_the_problem_and_names_each_missing_engine(tmp_path, monkeypatch):
    real = demo.propagate
    absent = {"MuJoCo", "Basilisk", "PyBullet"}

    def without_engines(*args, method, **kwargs):
        if integrators.get(method).engine in absent:
            raise DependencyNotInstalled(f"{method}: not installed here")
        return real(*args, method=method, **kwargs)

    def no_gif(path):
        raise DependencyNotInstalled("pybullet is not installed")

    monkeypatch.setattr(demo, "propagate", without_engines)
    # a short run of the same tumbler: the table's content is not what this checks
    monkeypatch.setattr(demo, "compare_methods", functools.partial(demo.compare_methods, duration=0.05))
    monkeypatch.setattr(demo, "tumble_gif", no_gif)
    monkeypatch.setattr(demo, "control_episode", lambda: "the episode")
    report = demo.run(tmp_path, workers=1)

    methods = (tmp_path / "methods.md").read_text()
    lines = methods.splitlines()
    # the tumbler's body and step, and the duration this test ran it for
    assert "I = (1, 2, 3) kg·m²" in lines[0] and "dt = 0.01 s, 0.05 s" in lines[0]
    hints = {line.split()[0]: line for line in lines if "not installed" in line}
    assert set(hints) == absent
    assert 'pip install "rigidrot-gym[mujoco]"' in hints["MuJoCo"]
    assert 'pip install "rigidrot-gym[basilisk]"' in hints["Basilisk"]
    assert 'pip install "rigidrot-gym[render]"' in hints["PyBullet"] and "animation" in hints["PyBullet"]
    for name in integrators.names():
        engine = integrators.get(name).engine
        if engine:
            assert name in hints[engine]  # the rows it took away
            assert f"| {name} |" not in methods
        else:
            assert f"| {name} |" in methods
    assert methods.strip() in report
    assert sorted(p.name for p in tmp_path.iterdir()) == ["attitude_error.png", "control.md", "methods.md"]
