"""The layers of kvopt and the one direction imports may point (STYLE: dependencies point one way).

A module may import modules of its own layer or of lower layers, never of a
higher one.  Beyond the layers, :data:`DOORS` narrows what some modules may
import of a package: a policy sees the engine's contract
(:mod:`kvopt.engine.contract`), never the event loop that runs it
(:mod:`kvopt.engine.core`), which in turn knows nothing of the policies;
running a policy by name (:mod:`kvopt.simulation`) sits above both.

``tests/test_architecture.py`` checks every import statement of the package
against these tables (function-level imports included) and checks that the
import-linter contracts in ``pyproject.toml`` (``lint-imports``) say the same;
``docs/architecture.py`` draws the picture in ``docs/architecture.png`` from
:data:`LAYERS`.
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
            "attempts",
            "checker",
            "memory",
            "space",
            "usercode",
            "_version",
            "serving.timemodel",
            "serving.setups",
        ),
    ),
    1: (
        "bounds, solvers, engine",
        (
            "bound",
            "generators",
            "futurememory",
            "packing",
            "engine",
            "exact",
            "claim",
            "plotting",
            "serving.trace",
            "serving.seconds",
            "serving.workload",
            "serving.lengths",
        ),
    ),  # fmt: skip
    2: ("policies", ("policy",)),
    3: ("policies by name, adversaries", ("simulation", "adversary")),
    4: ("brackets on Opt", ("certify", "evidence", "upper")),
    5: (
        "comparison, records, search",
        (
            "claimchecks",
            "comparison",
            "record",
            "campaign",
            "conformance",
            "serving.experiment",
        ),
    ),
    6: ("validation", ("validation",)),
    7: ("API and command line", ("api", "demo", "cli", "__init__", "__main__", "layers")),
}

#: Narrow doors: modules under the key import the package of the value only through
#: that one module (``kvopt.policy`` → ``kvopt.engine.contract``, nothing else of
#: ``kvopt.engine``: neither the package, which re-exports the core, nor the core).
DOORS: dict[str, str] = {"policy": "engine.contract"}


def layer_of(module: str) -> int:
    """Layer of a module given as ``kvopt.x.y`` (or ``x.y``).

    A prefix may be dotted (``serving.timemodel``): a package whose modules sit in
    different layers (:data:`SPLIT_PACKAGES`) is placed module by module, the longest
    matching prefix deciding; such a package's ``__init__`` is in layer 0 and imports
    nothing of kvopt.
    """
    parts = module.split(".")
    if parts[0] == "kvopt":
        parts = parts[1:]
    if not parts:
        parts = ["__init__"]
    dotted = ".".join(parts)
    if dotted in SPLIT_PACKAGES:
        return 0
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for k, (_, prefixes) in LAYERS.items():
        for p in prefixes:
            if (dotted == p or dotted.startswith(p + ".")) and (best is None or len(p) > best[0]):
                best = (len(p), k)
    if best is None:
        raise KeyError(f"module {module!r} is in no layer of kvopt.layers.LAYERS")
    return best[1]


#: Packages whose modules are placed in different layers (dotted prefixes of :data:`LAYERS`).
SPLIT_PACKAGES = tuple(
    sorted({p.split(".")[0] for _, (_, ps) in LAYERS.items() for p in ps if "." in p})
)


#: Third-party solver packages (numba: the compiled branch and bound), importable only inside
#: ``kvopt.exact`` and, for numba, in :data:`NUMBA_MODULES` outside it.
SOLVER_PACKAGES = ("pyomo", "highspy", "ortools", "numba")

#: Modules outside ``kvopt.exact`` that may import numba (lazily imported by their one user):
#: the compiled route-online loop (issue 54; ``kvopt.policy.route`` imports it on demand).
NUMBA_MODULES = ("kvopt.policy.routekernel",)
