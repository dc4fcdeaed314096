"""Every notebook runs top to bottom in a real Jupyter kernel (nbclient), as a user opens it.

The notebooks are stored without outputs (``test_outputs_are_stripped``); each is executed in
``notebooks/`` (they read the bundled instances by relative path) with the ``python3`` kernel of
this environment (ipykernel).
"""

from __future__ import annotations

import json

import pytest
from conftest import REPO

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def test_there_are_the_six_notebooks():
    names = [p.name for p in NOTEBOOKS]
    assert names == [
        "00-quickstart.ipynb",
        "01-exact-opt.ipynb",
        "02-compare-policies.ipynb",
        "03-adversarial-search.ipynb",
        "04-validate-theorems.ipynb",
        "05-your-own-policy.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_outputs_are_stripped(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs", []) == [] and cell.get("execution_count") is None


#: the notebooks whose kernel run takes 15-30 s: they run with -m slow (CI runs both passes)
SLOW = {"01-exact-opt.ipynb", "03-adversarial-search.ipynb", "05-your-own-policy.ipynb"}


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.slow) if p.name in SLOW else p for p in NOTEBOOKS],
    ids=[p.name for p in NOTEBOOKS],
)
def test_notebook_runs_in_a_kernel(path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError with the cell and the traceback on failure
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors
