"""Writing a benchmark's results: its Markdown table and a CSV of its dataclass rows."""

from __future__ import annotations

import csv
from dataclasses import astuple, fields
from pathlib import Path


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
