"""The getting-started notebook (``docs/getting-started.ipynb``) runs from top to bottom in a
Jupyter kernel, and says what the getting-started page says it shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")

pytestmark = [pytest.mark.docs, pytest.mark.slow]

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "getting-started.ipynb"


def test_the_getting_started_notebook_runs_and_shows_what_it_says(tmp_path, monkeypatch):
    # the kernel draws figures as outputs (Jupyter's inline backend), whatever the suite set
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    # Run in a scratch folder: nothing the notebook does may land in the checkout.
    nbclient.NotebookClient(notebook, timeout=600, resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )
    errors = dict(re.findall(r"(\w+): largest attitude error (\S+) deg", text))
    # The exact solution is independent of both methods: the game-engine step never flips
    # (its error is of the order of the flip itself), RK4 at 0.01 s is accurate to 4th order.
    assert float(errors["semi_implicit"]) > 30.0
    assert float(errors["rk4"]) < 1e-3
    assert "success: True" in text
    assert (
        sum(
            output.get("output_type") == "display_data"
            for c in notebook.cells
            for output in c.get("outputs", [])
        )
        == 2
    )
