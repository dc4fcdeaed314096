"""The exact backends by name: ``solve(solver=name)`` and the races of ``auto`` and ``race``
look them up here, at call time.

Each entry is a :class:`~kvopt.exact.backend.Backend` with its default model
options; importing this module imports no solver package (each backend
imports its own inside ``solve``).
"""

from __future__ import annotations

from .backend import Backend
from .backends.cpsat import CpSat
from .backends.events import CpSatEvents
from .backends.highs import Highs
from .backends.pyomo_model import PyomoHighs
from .bnb import BranchAndBound

#: name → backend (``solver=`` of :func:`kvopt.exact.solve`, after ``auto`` and ``race``)
BACKENDS: dict[str, Backend] = {
    b.name: b for b in (Highs(), CpSat(), BranchAndBound(), PyomoHighs(), CpSatEvents())
}
