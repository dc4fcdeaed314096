"""Sphinx configuration of kvopt's documentation.

Build (warnings are errors): ``python -m sphinx -W --keep-going -b html docs docs/_build/html``.
Nothing is downloaded at build time: no remote inventories, and the notebooks are rendered
from their files with their stored outputs (``notebooks/store_outputs.py`` writes them;
``tests/test_notebooks.py`` executes every notebook again and compares; ``KVOPT_DOCS_EXECUTE=1``
executes them at build instead, several minutes, cached in ``docs/_build/.jupyter_cache``).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
sys.path.insert(0, str(REPO))  # document the kvopt of this tree, not another install
sys.path.insert(0, str(DOCS / "_ext"))

import kvopt  # noqa: E402

project = "kvopt"
author = "the kvopt authors"
copyright = "the kvopt authors, MIT licence"
release = kvopt.__version__
version = release

extensions = [
    "myst_nb",  # Markdown pages (MyST) and notebooks
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "kvopt_docs",  # reference pages generated from the parser and the registries
]

# the notebooks: copied from notebooks/ (their home) at every build
_TUTORIALS = DOCS / "tutorials"
for _nb in sorted((REPO / "notebooks").glob("*.ipynb")):
    _dest = _TUTORIALS / _nb.name
    if not _dest.exists() or _dest.read_bytes() != _nb.read_bytes():
        _tmp = _dest.with_name(f".{_dest.name}.{os.getpid()}.tmp")  # atomically: builds at once
        shutil.copyfile(_nb, _tmp)
        os.replace(_tmp, _dest)

nb_execution_mode = "cache" if os.environ.get("KVOPT_DOCS_EXECUTE") else "off"
if nb_execution_mode != "off":
    # the notebooks read the bundled instances as ../instances, from notebooks/; here they run
    # in docs/tutorials/, so docs/instances points at them (git-ignored, excluded below)
    _link = DOCS / "instances"
    if not _link.exists():
        _link.symlink_to(REPO / "instances", target_is_directory=True)
nb_execution_cache_path = str(DOCS / "_build" / ".jupyter_cache")
nb_execution_timeout = 900
nb_execution_raise_on_error = True

# smart quotes and ellipses, but no dashes: "--" stays "--" (the option names in help text,
# on the generated command-line and exit-status pages, must be copyable; issue 55)
smartquotes_action = "qe"

myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]  # models/*.md and the notebooks skip heading levels

source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "README.md", "instances", "**/.ipynb_checkpoints"]

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = True

html_theme = "furo"
html_title = f"kvopt {release}"
html_static_path: list[str] = []
html_show_sourcelink = True
