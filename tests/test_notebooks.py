"""Every code cell of every notebook in notebooks/ runs (no Jupyter needed)."""

from __future__ import annotations

import json

import matplotlib
import pytest
from conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path):
    matplotlib.use("Agg")
    nb = json.loads(path.read_text())
    namespace: dict = {}
    for k, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), f"{path.name}[{k}]", "exec"), namespace)


def test_there_is_a_notebook():
    assert NOTEBOOKS
