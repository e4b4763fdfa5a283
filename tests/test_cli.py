"""The ``rigidrot`` command line: the demo (the README's main job) and ``simulate``."""

from __future__ import annotations

import re

import numpy as np
import pytest
from reference import angle, solve

from rigidrot_gym.physics import integrators
from rigidrot_gym.tools.cli import main


def _table(text: str) -> dict[str, list[str]]:
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] in integrators.names():
            rows[cells[0]] = cells[1:]
    return rows


def test_demo_end_to_end(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = _table(out)
    assert set(rows) == set(integrators.names())
    # Against the exact solution (the demo's reference) the published orders show: the
    # accurate methods follow the flips, the game-engine step does not flip at all.
    assert float(rows["rk4"][0]) < 1e-5
    assert float(rows["exact"][0]) < 1e-6
    assert float(rows["nielsen_krenk"][2]) < 1e-12  # energy drift
    assert float(rows["semi_implicit"][0]) > 90.0
    errors = [float(m) for m in re.findall(r"^\| [\d.]+ \| ([\d.]+) \|", out, flags=re.M)]
    assert errors[0] > 10.0 and errors[-1] < 2.0  # the controller brings the body round
    assert "success" in out
    for name in ("methods.md", "omega.png", "control.md"):
        assert (tmp_path / name).stat().st_size > 0


def test_simulate_writes_a_trajectory_that_matches_dop853(tmp_path, capsys):
    path = tmp_path / "traj.csv"
    argv = ["simulate", "--inertia", "1", "2", "3", "--omega", "0.4", "1.1", "-0.3", "--dt", "0.01"]
    assert main([*argv, "--steps", "300", "--method", "rk4", "--out", str(path)]) == 0
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    assert data.shape == (301, 8)
    q_ref, w_ref = solve([1, 0, 0, 0], [0.4, 1.1, -0.3], [1, 2, 3], data[:, 0])
    assert np.max(angle(data[:, 1:5], q_ref)) < 1e-9
    assert np.max(np.abs(data[:, 5:8] - w_ref)) < 1e-9
    assert "energy drift" in capsys.readouterr().out


def test_simulate_reports_bad_input_as_an_error(capsys):
    assert main(["simulate", "--inertia", "1", "1", "3"]) == 2
    assert "triangle inequality" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["simulate", "--method", "nope"])
