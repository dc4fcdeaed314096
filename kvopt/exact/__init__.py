"""Exact clairvoyant Opt (SPEC §5): the time-indexed IP (numpy → highspy, and the Pyomo
reference) and the CP-SAT model, behind one :func:`solve`.

Pyomo, highspy and OR-Tools are imported only inside this package (and only
when a backend runs).  The formulations are written out in ``models/``.
"""

from __future__ import annotations

from .bounds.relax import typed_bound
from .common import SolveResult, SolveStatus
from .solve import SOLVERS, solve
from .tools import export_model, lp_bound

__all__ = [
    "SOLVERS",
    "SolveResult",
    "SolveStatus",
    "export_model",
    "lp_bound",
    "solve",
    "typed_bound",
]
