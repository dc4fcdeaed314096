"""Execute the tutorial notebooks and store their outputs in the files (issue 55).

    python notebooks/store_outputs.py                 # every notebook
    python notebooks/store_outputs.py 03-adversarial-search.ipynb

Why stored outputs: the documentation site renders the notebooks as they are stored, so their
tables and figures appear on the site without executing them at every build (all six take
several minutes on 2 cores; the build takes seconds).  What keeps the stored outputs true is
``tests/test_notebooks.py``: it executes every notebook again in a kernel and compares the
outputs cell by cell with the stored ones (the same kinds of output and the same number of
figures in every cell, the same text once numbers and temporary paths are set aside), so a
notebook whose code changed without running this script fails the tests.

Each notebook runs in ``notebooks/`` (it reads the bundled instances by relative path) with
the ``python3`` kernel of this environment; timings are not recorded, so rerunning changes
only what the code prints and draws.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def execute(path: Path):
    """The notebook at ``path`` executed in a fresh kernel (nbformat node, not written)."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3", record_timing=False,
                                     resources={"metadata": {"path": str(path.parent)}})  # fmt: skip
    client.execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    return nb


def main(names: list[str]) -> int:
    import nbformat

    paths = [HERE / n for n in names] if names else sorted(HERE.glob("*.ipynb"))
    for path in paths:
        print(f"executing {path.name} …", file=sys.stderr, flush=True)
        nbformat.write(execute(path), path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
