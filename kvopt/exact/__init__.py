"""Exact clairvoyant Opt (SPEC §5): the time-indexed IP (numpy → highspy, and the Pyomo
reference), the CP-SAT model and a dedicated branch and bound, behind one :func:`solve`.

The folders show the parts: ``portfolio/`` (``auto``'s routes as a table with the
provenance of their numbers, :func:`~kvopt.exact.portfolio.route_for`, the two
executors, ``auto``'s own backends, the report ``kvopt solve --explain`` prints),
``backends/`` (HiGHS, CP-SAT, Pyomo: one module each, each translating its solver's
statuses), ``bnb/`` (the branch and bound: the Python search, the compiled kernel, the
split searches), ``bounds/`` (the LP relaxation and its duals, reduced-cost fixing, the
time-block bound).  Beside them: :mod:`.solve` (the pipeline), :mod:`.common` (result,
statuses, start windows), :mod:`.backend` (the protocol), :mod:`.registry` (backends by
name), :mod:`.heuristic`, :mod:`.workers` (solver threads), :mod:`.tools`.

Pyomo, highspy, OR-Tools and Numba are imported only inside this package (and only
when a backend runs).  The formulations are written out in ``models/``.
"""

from __future__ import annotations

from .bounds.relax import typed_bound
from .common import SolveResult, SolveStatus
from .portfolio import ROUTES, Portfolio, route_for
from .solve import SOLVERS, solve
from .tools import export_model, lp_bound

__all__ = [
    "ROUTES",
    "SOLVERS",
    "Portfolio",
    "SolveResult",
    "SolveStatus",
    "export_model",
    "lp_bound",
    "route_for",
    "solve",
    "typed_bound",
]
