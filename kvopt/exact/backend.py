"""What every exact backend is given, and the one method it answers (``docs/CONTRIBUTING.md``).

A backend is an object with a ``name`` and
``solve(problem, limits, hooks) -> RawResult``, and ``batch_cap = True`` when it models the
batch cap of SPEC §10.1 (``Instance.max_batch``; a backend without it is refused on a
capped instance, :func:`kvopt.exact.portfolio.cappedrows.check_batch_cap`):

* :class:`Problem` — what to solve: the instance, the objective, the start
  windows ``[lo_i, hi_i]`` (:func:`kvopt.exact.common.start_windows`), a
  kill-free warm start and its value ``ub``;
* :class:`Limits` — how far to go: time limit, threads, seed, relative gap and
  ``bound_focus`` (CP-SAT's bound-moving workers, ``models/cpsat.md``) or
  ``proof_focus`` (its two tree searches, ``models/orders.md`` §7);
* :class:`Hooks` — how it talks to a race: a stop event, a ``monitor(value,
  bound)`` callback for incumbents and bounds as they are found, and
  ``outside()``, the value of a racing solver's best schedule.

The three bundles are frozen and travel whole from :func:`kvopt.exact.solve`
through :data:`kvopt.exact.registry.BACKENDS` to the backend, so no knob can be
dropped on the way.  A backend reads the fields it supports and ignores the
others (each backend's docstring says which); its own model options are
fields of the backend object (``Highs(cuts=())``).  The result is a
:class:`~kvopt.exact.common.RawResult`; :func:`kvopt.exact.common.finish`
checks it and sets the :class:`~kvopt.exact.common.SolveStatus`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import numpy as np

from ..instance import Instance
from .common import RawResult

#: ``monitor(value, bound)``: an incumbent value and/or a proven bound (either may be ``None``)
Monitor = Callable[[float | None, float | None], None]


@dataclass(frozen=True, eq=False)
class Problem:
    """The instance, the objective and the start windows, with a warm start and its value."""

    instance: Instance
    objective: str
    lo: np.ndarray
    hi: np.ndarray
    warm: np.ndarray | None = None  # starts of a kill-free schedule inside the windows
    ub: int | None = None  # value of ``warm`` (an upper bound on Opt)
    #: Lagrangian duals for the branch and bound's bound (``Prices.duals`` of
    #: :mod:`kvopt.exact.bounds.lagrange`; valid whatever the windows), or ``None``: it
    #: solves its own LP
    duals: tuple | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Limits:
    """Time limit (seconds), threads, seed, relative gap and CP-SAT's ``bound_focus`` or
    ``proof_focus``."""

    time_limit: float = 60.0
    threads: int = 1
    seed: int = 0
    gap: float = 0.0
    bound_focus: bool = False
    proof_focus: bool = False


@dataclass(frozen=True)
class Hooks:
    """How a backend is stopped and reports while racing another (all optional)."""

    stop: threading.Event | None = None
    monitor: Monitor | None = None
    outside: Callable[[], float] | None = None


#: no stop event, no callbacks
NO_HOOKS = Hooks()


class Backend(Protocol):
    """An exact backend: ``solve(problem, limits, hooks)`` returns what it found."""

    name: ClassVar[str]

    def solve(self, problem: Problem, limits: Limits, hooks: Hooks = NO_HOOKS) -> RawResult: ...
