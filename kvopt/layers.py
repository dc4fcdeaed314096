"""The layers of kvopt and the one direction imports may point (STYLE: dependencies point one way).

A module may import modules of its own layer or of lower layers, never of a
higher one.  ``tests/test_architecture.py`` checks every import statement of
the package against this table (function-level imports included), and
``docs/architecture.py`` draws the picture in ``docs/architecture.png`` from it.
"""

from __future__ import annotations

#: Layer number → (name, module prefixes).  Lower numbers are imported by higher ones.
LAYERS: dict[int, tuple[str, tuple[str, ...]]] = {
    0: (
        "model",
        (
            "errors",
            "fileio",
            "logs",
            "texttable",
            "params",
            "instance",
            "schedule",
            "space",
            "_version",
        ),
    ),
    1: (
        "bounds, solvers, engine, policies",
        (
            "bound",
            "generators",
            "trace",
            "futurememory",
            "packing",
            "engine",
            "adversary",
            "policy",
            "exact",
            "claim",
            "plotting",
        ),
    ),  # fmt: skip
    2: ("comparison, records, search", ("claimchecks", "comparison", "record", "campaign")),
    3: ("validation", ("validation",)),
    4: ("API and command line", ("api", "cli", "__init__", "__main__", "layers")),
}


def layer_of(module: str) -> int:
    """Layer of a module given as ``kvopt.x.y`` (or ``x.y``)."""
    parts = module.split(".")
    if parts[0] == "kvopt":
        parts = parts[1:]
    head = parts[0] if parts else "__init__"
    for k, (_, prefixes) in LAYERS.items():
        if head in prefixes:
            return k
    raise KeyError(f"module {module!r} is in no layer of kvopt.layers.LAYERS")


#: Third-party solver packages, importable only inside ``kvopt.exact``.
SOLVER_PACKAGES = ("pyomo", "highspy", "ortools")
