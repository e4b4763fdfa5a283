"""Writing a tool's results: Markdown tables (one writer for every tool) and CSV rows."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import astuple, fields
from pathlib import Path


def _cell(value: object) -> str:
    # A bare "|" ends a cell in GitHub/CommonMark tables (|L|, |ω| ...): escape it.
    return str(value).replace("\\|", "|").replace("|", "\\|").replace("\n", " ")


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]], align: str = "") -> str:
    """A Markdown table of ``rows`` under ``header``, every cell escaped.

    Args:
        header: column titles.
        rows: one sequence of cells per row (anything with ``str``), as long as ``header``.
        align: one letter per column, ``l`` (left) or ``r`` (right); default: the first
            column left, the others right.

    Raises:
        ValueError: for a row or an ``align`` whose length differs from the header's.
    """
    align = align or "l" + "r" * (len(header) - 1)
    if len(align) != len(header) or set(align) - {"l", "r"}:
        raise ValueError(f"align must hold one of 'l'/'r' per column ({len(header)}), got {align!r}")
    rule = {"l": "---", "r": "---:"}
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + "|".join(rule[a] for a in align) + "|"]
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"row {i} has {len(row)} cells, the header {len(header)}: {list(row)!r}")
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return "\n".join(lines)


def write_results(out_dir: Path, stem: str, table: str, rows: list) -> None:
    """``<stem>.md`` (``table``) and ``<stem>.csv`` (a header of the field names, then one
    line per dataclass in ``rows``) into ``out_dir``, created if missing."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{stem}.md").write_text(table + "\n")
    with open(out_dir / f"{stem}.csv", "w", newline="") as f:
        writer = csv.writer(f)
        if rows:
            writer.writerow(field.name for field in fields(rows[0]))
        writer.writerows(astuple(row) for row in rows)
