"""The accuracy benchmark in quick mode: its outputs exist, parse, and what it measured
agrees with the published orders and with what each method is known to do."""

from __future__ import annotations

import contextlib
import csv
import io
import math
from pathlib import Path

import pytest

from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.tools.cli import main

PROBLEMS = ("free", "tumbler", "top")


PROGRESS = io.StringIO()


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("accuracy")
    with contextlib.redirect_stderr(PROGRESS):
        assert main(["bench", "accuracy", "--quick", "--out", str(folder)]) == 0
    return folder


@pytest.mark.slow
def test_progress_bar_counts_every_run(out):
    # one run per (problem, method) and one drift per method; the library's methods only
    # (whether the engines are registered yet depends on what this process imported)
    ours = [name for name in integrators.names() if not integrators.get(name).engine]
    total = len(ours) * (len(PROBLEMS) + 1)
    assert "accuracy: 100%" in PROGRESS.getvalue() and f"{total}/{total}" in PROGRESS.getvalue()


@pytest.fixture(scope="module")
def rows(out) -> list[dict]:
    with (out / "accuracy.csv").open() as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def headline(out) -> dict[str, dict[str, str]]:
    """headline.md's table as {method: {column: cell}}."""
    lines = [line for line in (out / "headline.md").read_text().splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    table = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        table[cells[0]] = dict(zip(header, cells, strict=True))
    return table


def _errors(rows, problem: str, method: str) -> list[float]:
    return [float(r["error"]) for r in rows if r["problem"] == problem and r["method"] == method]


def test_outputs_exist_and_cover_every_method(out, rows, headline):
    assert (out / "work_precision.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| rk4 |" in (out / "accuracy.md").read_text()
    for name in integrators.names():
        if integrators.get(name).engine:  # compared by rigidrot crosscheck instead
            assert name not in headline
            continue
        assert name in headline
        for problem in PROBLEMS:
            expected = problem != "top" or integrators.get(name).accepts_torque
            assert bool(_errors(rows, problem, name)) == expected, (name, problem)


def test_measured_orders_match_the_published_ones(headline):
    assert float(headline["rk4"]["order free"]) == pytest.approx(4.0, abs=0.3)
    assert float(headline["nielsen_krenk"]["order free"]) == pytest.approx(2.0, abs=0.3)
    # With a torque the splittings have their own orders (Strang 2, Yoshida 4).
    assert float(headline["strang"]["order top"]) == pytest.approx(2.0, abs=0.3)
    assert float(headline["yoshida4"]["order top"]) == pytest.approx(4.0, abs=0.3)


def test_exact_method_is_at_round_off_on_torque_free_problems(rows):
    for problem in ("free", "tumbler"):
        errors = _errors(rows, problem, "exact")
        assert errors and max(errors) < 1e-9, (problem, errors)


def test_semi_implicit_never_flips(rows):
    # Without the gyroscopic term ω stays constant: the tumbler's flip never happens.
    assert min(_errors(rows, "tumbler", "semi_implicit")) > 0.5


def test_torque_evaluations_per_body_are_counted(rows):
    for r in rows:
        if r["method"] == "rk4" and math.isfinite(float(r["error"])):
            assert float(r["torque_evals_per_body"]) == 4 * int(r["steps"])
