"""The one Markdown table writer of every tool: cells escaped so that tables render."""

import re

import pytest

from rigidrot_gym.tools.report import markdown_table


def _columns(line: str) -> int:
    """Cells of a Markdown table line: pipes not preceded by a backslash, minus one."""
    return len(re.findall(r"(?<!\\)\|", line)) - 1


def test_pipes_in_headers_and_cells_are_escaped():
    table = markdown_table(("method", "|L| drift", "|ω| (rad/s)"), [("rk4", "1e-9", "a|b")])
    assert table.splitlines() == [
        r"| method | \|L\| drift | \|ω\| (rad/s) |",
        "|---|---:|---:|",
        r"| rk4 | 1e-9 | a\|b |",
    ]
    assert {_columns(line) for line in table.splitlines()} == {3}


def test_already_escaped_pipes_are_not_escaped_twice():
    assert markdown_table(("\\|L\\|",), [(1,)], "r").splitlines()[0] == r"| \|L\| |"


def test_alignment_and_rejections():
    assert markdown_table(("a", "b"), [], "rl").splitlines()[1] == "|---:|---|"
    with pytest.raises(ValueError, match="row 0 has 1 cells"):
        markdown_table(("a", "b"), [(1,)])
    with pytest.raises(ValueError, match="align"):
        markdown_table(("a", "b"), [], "lx")


def test_demo_and_crosscheck_tables_render_with_one_cell_per_column():
    from rigidrot_gym.tools.crosscheck import PROBLEMS, Point, problem_table
    from rigidrot_gym.tools.demo import Row as DemoRow
    from rigidrot_gym.tools.demo import format_table as demo_table

    demo = demo_table([DemoRow("rk4", 1e-8, 1e-9, 1e-12, 2e-12, 3.0)])
    points = [
        Point("tumbler", "rk4", "", dt, 1, 1e-8, 1e-8, 1e-12, 1e-12, 0.01, 0.1) for dt in (1 / 64, 1 / 256)
    ]
    cross = problem_table(points, PROBLEMS[0], ["rk4"])
    for table, width in ((demo, 6), (cross, 9)):
        assert {_columns(line) for line in table.splitlines()} == {width}
