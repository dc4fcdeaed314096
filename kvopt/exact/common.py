"""Shared pieces of the exact backends: statuses, the result, start windows.

* :class:`SolveStatus` and :class:`SolveResult` (SPEC §5, STYLE: "why the
  solver stopped" is kept apart from "what solution it has").
* :func:`start_windows` — the per-job start windows ``[lo_i, hi_i]`` every
  model uses: ``lo_i = a_i``; ``hi_i = H_i − o_i`` with ``H_i`` the smallest of
  the SPEC §1 horizon ``max_j a_j + Σ_j o_j`` and, given a feasible schedule of
  value ``UB``, ``UB − LB(J∖{i})`` (total completion; ``LB`` = best of the area
  and processing bounds of the other jobs, valid because dropping ``i`` from an
  optimal schedule leaves a feasible one) or ``UB`` (makespan).  Some optimal
  schedule lies inside the windows, see ``models/time-indexed.md``.
* :func:`finish` — turns a solver's incumbent and bound into a checked result;
  ``optimal`` only when the (integer-rounded) bound meets the objective.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from ..bound import area_bound, machines_bound, makespan_bounds, processing_bound
from ..errors import InputError
from ..instance import Instance
from ..schedule import Schedule, checked

if TYPE_CHECKING:
    from .portfolio.report import RouteReport

OBJECTIVES = ("total", "makespan")
#: tolerance when rounding a floating-point dual bound up to the next integer
BOUND_TOL = 1e-6


class SolveStatus(StrEnum):
    """Outcome of an exact solve (SPEC §4/§5)."""

    OPTIMAL = "optimal"  # a checked schedule whose value equals the proven bound
    FEASIBLE = "feasible"  # a checked schedule, optimality not proven
    INFEASIBLE = "infeasible"  # the model has no solution (never for a valid instance)
    UNKNOWN = "unknown"  # no schedule found within the limits

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class SolveResult:
    """Result of :func:`kvopt.exact.solve`.

    ``objective`` and ``schedule`` are ``None`` without an incumbent; ``bound`` is
    the proven lower bound on the optimum (an integer: the objective is
    integral, so a fractional dual bound is rounded up); ``gap`` is
    ``(objective − bound) / objective`` (0 when both are 0, ``None`` without an
    incumbent).  ``schedule`` has passed :func:`kvopt.schedule.checked`.

    ``objective`` is the number: the value of the optimised objective (``objective_name``),
    as in SPEC §4's ``solve --json``.  :attr:`objectives` is the dict
    ``{"total_completion", "makespan"}`` of the schedule, as on
    :class:`~kvopt.simulation.SimulationResult` and :class:`~kvopt.checker.CheckResult`
    (issue 68: one name, one type across the three results).
    """

    status: SolveStatus
    objective: int | None
    bound: int | None
    gap: float | None
    schedule: Schedule | None
    seconds: float
    solver: str
    solver_version: str
    native_status: str
    objective_name: str = "total"
    n: int = 0
    interrupted: bool = False
    stats: dict[str, Any] = field(default_factory=dict, compare=False)
    #: the route :func:`kvopt.exact.solve` took (``kvopt solve --explain``); ``None`` for the
    #: empty instance and for results built outside ``solve()``
    route: RouteReport | None = field(default=None, compare=False)

    @property
    def optimal(self) -> bool:
        return self.status is SolveStatus.OPTIMAL

    @property
    def objectives(self) -> dict[str, int] | None:
        """``{"total_completion": ΣC_i, "makespan": max C_i}`` of the checked schedule, or
        ``None`` without one (both values, whichever objective was optimised)."""
        return None if self.schedule is None else self.schedule.objective(self.n)

    def __repr__(self) -> str:
        gap = "" if self.gap is None else f", gap={100 * self.gap:.2f}%"
        return (
            f"SolveResult({self.status.value}: {self.objective_name} objective={self.objective}, "
            f"bound={self.bound}{gap}, solver={self.solver}, {self.seconds:.2f}s, n={self.n})"
        )

    def to_dict(self) -> dict[str, Any]:
        """The ``kvopt solve --json`` object of SPEC §4."""
        return {
            "status": self.status.value,
            "objective": self.objective,
            "objective_name": "total_completion" if self.objective_name == "total" else "makespan",
            "bound": self.bound,
            "gap": self.gap,
            "solver": self.solver,
            "solver_version": self.solver_version,
            "native_status": self.native_status,
            "seconds": round(self.seconds, 3),
            "interrupted": self.interrupted,
            "stats": dict(self.stats),
            "route": None if self.route is None else self.route.to_dict(),
            "schedule": None if self.schedule is None else self.schedule.to_dict(self.n),
        }


def first_fit(gm: list[int], t: int, o: int, lim: int, hi: int) -> int:
    """Earliest start in ``[t, hi]`` of a job of response ``o`` on the profile
    ``gm[τ] = used(τ) + τ`` (``-1``: none), where ``lim = M − s − 1``: the job fits
    at ``t`` iff ``max(gm[t : t + o]) ≤ lim + t`` (its round ``t + u`` holds
    ``s + u + 1``).  A failed start jumps: the fullest round ``τ`` of its window,
    ``gm[τ] = m``, stays in the window of every start up to ``τ`` and needs a start
    ``≥ m − lim`` there, so no start before ``min(m − lim, τ + 1)`` fits.  (The
    branch and bound's node loop has this scan inlined, for speed.)"""
    while t <= hi:
        w = gm[t : t + o]
        m = max(w)
        if m <= lim + t:
            return t
        tau = t + w.index(m) + 1
        t = m - lim if m - lim < tau else tau
    return -1


def first_fit_array(gm: np.ndarray, t: int, o: int, lim: int, hi: int) -> int:
    """:func:`first_fit` on a numpy profile (the same start, the same jumps)."""
    while t <= hi:
        w = gm[t : t + o]
        j = int(w.argmax())
        m = int(w[j])
        if m <= lim + t:
            return t
        t = m - lim if m - lim < t + j + 1 else t + j + 1
    return -1


def within_cap(inst: Instance, starts) -> bool:
    """Whether the kill-free schedule ``starts`` runs at most ``max_batch`` jobs in every round
    (SPEC §10.1; always true without a cap).  The count only rises at a start, so the rounds
    checked are the starts: a sweep over starts and completions, ``O(n log n)``."""
    cap = inst.max_batch
    if cap is None or inst.n <= cap:
        return True
    st = np.asarray(starts, dtype=np.int64)
    # at equal times a completion (C = t: the job is gone in round t) comes before a start
    events = sorted(
        [(int(t), 1) for t in st] + [(int(t + o), 0) for t, o in zip(st, inst.responses)]
    )
    running = 0
    for _, kind in events:
        running += 1 if kind else -1
        if running > cap:
            return False
    return True


def check_objective(objective: str) -> str:
    if objective not in OBJECTIVES:
        raise InputError(
            f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}", source="objective"
        )
    return objective


def value_of(inst: Instance, starts: np.ndarray, objective: str) -> int:
    """Objective of the kill-free schedule with the given starts."""
    c = np.asarray(starts, dtype=np.int64) + inst.responses
    if inst.n == 0:
        return 0
    return int(c.sum()) if objective == "total" else int(c.max())


def lower_bound(inst: Instance, objective: str) -> int:
    """Cheap proven lower bound (SPEC §2): area/processing, or the makespan bounds; with a
    batch cap also the ``B``-machine bound (:func:`kvopt.bound.machines_bound`)."""
    if inst.n == 0:
        return 0
    if objective == "total":
        return max(area_bound(inst), processing_bound(inst), machines_bound(inst) or 0)
    return max(makespan_bounds(inst).values())


#: rank bounds already computed, by instance data (a solve asks for one several times)
_RANK_CACHE: dict[tuple, tuple[int, int]] = {}


def instance_key(inst: Instance) -> tuple:
    """The instance's data (memory, prompts, responses, arrivals) as a dictionary key, for the
    caches of what a solve computes once per instance (names and metadata left out)."""
    return (
        inst.memory,
        inst.prompts.tobytes(),
        inst.responses.tobytes(),
        inst.arrivals.tobytes(),
    )


def root_lower_bound(inst: Instance, objective: str) -> int:
    """The best bound known before any model is solved: :func:`lower_bound` and the rank bound
    (``kvopt.exact.bounds.conflict``, ``models/orders.md`` §9), which is never below it.
    The exact routes start from it (CP-SAT's objective lower bound, the branch and bound's
    root, the bound :func:`finish` reports at least)."""
    if inst.n == 0:
        return 0
    from .bounds.conflict import rank_bound

    key = instance_key(inst)
    if key not in _RANK_CACHE:
        if len(_RANK_CACHE) > 64:
            _RANK_CACHE.clear()
        rb = rank_bound(inst)
        _RANK_CACHE[key] = (rb.value, rb.makespan)
    total, span = _RANK_CACHE[key]
    return max(lower_bound(inst, objective), total if objective == "total" else span)


def spec_horizon(inst: Instance) -> int:
    """SPEC §1: some optimal schedule ends by ``max_i a_i + Σ_i o_i``."""
    if inst.n == 0:
        return 0
    return int(inst.arrivals.max() + inst.responses.sum())


def start_windows(
    inst: Instance, objective: str, ub: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-job start windows ``(lo, hi)`` (inclusive) that contain some optimal schedule.

    Without ``ub`` this is the textbook window ``[a_i, H − o_i]``, ``H`` from
    :func:`spec_horizon`.  With ``ub`` (the value of a feasible schedule) the
    completion of job ``i`` is also capped by ``ub − LB(J∖{i})`` (total) or
    ``ub`` (makespan); the windows keep every schedule of value ``≤ ub``.
    """
    n = inst.n
    lo = inst.arrivals.astype(np.int64).copy()
    cap = np.full(n, spec_horizon(inst), dtype=np.int64)
    if ub is not None and n:
        if objective == "makespan":
            cap = np.minimum(cap, ub)
        else:
            cap = np.minimum(cap, ub - total_bounds_without_each(inst))
    hi = cap - inst.responses
    return lo, hi


def total_bounds_without_each(inst: Instance) -> np.ndarray:
    """``lower_bound(J ∖ {i}, "total")`` for every job ``i`` at once, in ``O(n log n)``: the
    processing bound less ``a_i + o_i``, and the area bound (SPEC §2) of the areas sorted
    ascending with the one at position ``p`` removed — the ``p`` smaller ones lose one of
    their weight, the larger ones keep theirs, so the weighted sum drops by
    ``(n − p) A_(p) + Σ_{q<p} A_(q)``.  (It was ``n`` bounds of ``n − 1``-job instances:
    10 s at n = 1,000 before any solve began, minutes at n ≈ 2,000.)"""
    n = inst.n
    if n <= 1:
        return np.zeros(n, dtype=np.int64)
    order = np.argsort(inst.areas, kind="stable")
    areas = [int(x) for x in inst.areas[order]]
    total = sum((n - r) * a for r, a in enumerate(areas))  # weights n, n − 1, …, 1
    M = inst.memory
    proc = int(inst.arrivals.sum() + inst.responses.sum())
    ends = (inst.arrivals + inst.responses).tolist()
    out = np.empty(n, dtype=np.int64)
    prefix = 0
    for p, a in enumerate(areas):
        i = int(order[p])
        rest = total - (n - p) * a - prefix
        out[i] = max(-(-rest // M), proc - ends[i])
        prefix += a
    return out


def finish(
    inst: Instance,
    objective: str,
    starts: np.ndarray | None,
    bound: float | None,
    *,
    seconds: float,
    solver: str,
    solver_version: str,
    native_status: str,
    infeasible: bool = False,
    interrupted: bool = False,
    stats: dict[str, Any] | None = None,
    route: RouteReport | None = None,
) -> SolveResult:
    """Build a :class:`SolveResult`: check the schedule, round the bound, set the status.

    The bound is the best of the solver's dual bound and the cheap bounds of
    SPEC §2, rounded up with a tolerance of ``BOUND_TOL``; the status is
    ``optimal`` exactly when it meets the checked objective.
    """
    sched = None
    value = None
    if starts is not None:
        sched = checked(
            inst,
            Schedule.from_starts(inst, [int(x) for x in starts], producer=f"exact:{solver}"),
        )
        value = value_of(inst, np.asarray(starts), objective)
    lb = root_lower_bound(inst, objective)
    if bound is not None and math.isfinite(bound):
        lb = max(lb, math.ceil(bound - BOUND_TOL))
    if value is not None:
        lb = min(lb, value)  # a bound above a checked value would be a solver bug; never report it
    if infeasible and value is None:
        status = SolveStatus.INFEASIBLE
    elif value is None:
        status = SolveStatus.UNKNOWN
    elif lb >= value:
        status = SolveStatus.OPTIMAL
    else:
        status = SolveStatus.FEASIBLE
    gap = None
    if value is not None:
        gap = 0.0 if value == lb else (value - lb) / max(abs(value), 1)
    return SolveResult(
        status=status,
        objective=value,
        bound=int(lb),
        gap=gap,
        schedule=sched,
        seconds=seconds,
        solver=solver,
        solver_version=solver_version,
        native_status=native_status,
        objective_name=objective,
        n=inst.n,
        interrupted=interrupted,
        stats=dict(stats or {}),
        route=route,
    )


#: one redirection of file descriptor 1 shared by every thread (see :func:`stdout_to_stderr`)
_REDIRECT_LOCK = threading.Lock()
_redirect: dict[str, Any] = {"depth": 0, "saved": None}


@contextlib.contextmanager
def stdout_to_stderr(silence: bool = False):
    """Send file descriptor 1 to stderr (or to ``os.devnull`` when ``silence``) for the duration.

    Solver banners and logs must never reach stdout (``--json`` prints one object).
    File descriptor 1 belongs to the process, and racing solvers enter and leave
    this context in their own threads in any order: the first to enter redirects
    it (to its own target), the last to leave restores it (each restoring the
    descriptor it had seen left stdout on stderr when two overlapped: the JSON of
    ``kvopt solve --json`` then went to stderr).
    """
    with _REDIRECT_LOCK:
        if _redirect["depth"] == 0:
            try:
                sys.stdout.flush()
                saved = os.dup(1)
            except (OSError, ValueError):  # no real stdout (e.g. captured): nothing to protect
                saved = None
            if saved is not None:
                if silence:
                    fd = os.open(os.devnull, os.O_WRONLY)
                    os.dup2(fd, 1)
                    os.close(fd)
                else:
                    os.dup2(2, 1)
            _redirect["saved"] = saved
        _redirect["depth"] += 1
    try:
        yield
    finally:
        with _REDIRECT_LOCK:
            _redirect["depth"] -= 1
            saved = _redirect["saved"]
            if _redirect["depth"] == 0 and saved is not None:
                with contextlib.suppress(OSError, ValueError):
                    sys.stdout.flush()
                os.dup2(saved, 1)
                os.close(saved)
                _redirect["saved"] = None


@dataclass(frozen=True)
class RawResult:
    """What one backend found, before checking: starts (or ``None``), dual bound, the native
    status and its translation.

    ``status`` is the backend's own verdict in kvopt's vocabulary, set inside the backend
    from its native status (each backend keeps one table for that, STYLE: "translate
    foreign vocabularies at the border"): ``OPTIMAL`` — ``starts`` is proven optimal within
    the windows it was given (within ``limits.gap`` when that is above 0); ``FEASIBLE`` —
    a schedule, not proven; ``INFEASIBLE`` — the backend proved its model has no solution;
    ``UNKNOWN`` — no schedule.  Nothing downstream compares ``native_status`` (kept for the
    user, in :class:`SolveResult`).  Frozen: the portfolio relabels a result with
    :func:`dataclasses.replace`.
    """

    starts: np.ndarray | None
    bound: float | None
    native_status: str
    solver: str
    solver_version: str
    status: SolveStatus
    interrupted: bool = False
    stats: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        has = self.starts is not None
        if self.status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE) and not has:
            raise ValueError(f"{self.solver}: status {self.status.value} without a schedule")
        if self.status is SolveStatus.UNKNOWN and has:
            raise ValueError(f"{self.solver}: status unknown with a schedule (feasible)")

    @property
    def infeasible(self) -> bool:
        return self.status is SolveStatus.INFEASIBLE

    @property
    def proven(self) -> bool:
        """Did the backend prove its schedule optimal (in its windows)?"""
        return self.status is SolveStatus.OPTIMAL


def status_of(starts, *, proven: bool = False, infeasible: bool = False) -> SolveStatus:
    """kvopt's status of a backend's result: ``INFEASIBLE`` if it proved its model empty,
    else ``OPTIMAL`` / ``FEASIBLE`` by ``proven`` when it has a schedule, else ``UNKNOWN``."""
    if infeasible:
        return SolveStatus.INFEASIBLE
    if starts is None:
        return SolveStatus.UNKNOWN
    return SolveStatus.OPTIMAL if proven else SolveStatus.FEASIBLE
