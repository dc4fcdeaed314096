"""Evidence about Opt (SPEC §2, §5, §8): what a bracket (:mod:`kvopt.certify`) is built from.

* the values — :func:`objective_value` (``ALG`` of a schedule, the one place it is computed for
  ``total``, ``makespan`` and ``latency``), :func:`value` (a kill-free schedule's from its
  starts), :func:`ratio`, :func:`starts_of`;
* the cheap evidence — :func:`cheap_lb` (the lower bounds of SPEC §2) and :func:`cheap_ub` (the
  best cheap clairvoyant kill-free schedule: serial placements and :data:`UB_POLICIES`);
* the exact evidence — :func:`exact_opt` (one :func:`kvopt.exact.solve`) and its record
  :class:`ExactResult`, whose ``bound`` counts when proven (``PROVEN_BOUND_STATUSES``: also
  when the time limit stopped the solver, never from ``infeasible``).

:mod:`kvopt.certify` merges these into brackets and re-exports them (its ``__all__``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .bound import lower_bounds
from .errors import InputError
from .instance import Instance
from .schedule import Schedule

OBJECTIVES = ("total", "makespan", "latency")

#: Clairvoyant kill-free policies whose schedules give the cheap upper bound.
UB_POLICIES = (("greedy-area", {"backfill": True}), ("mcsf", {}), ("svf", {}))

#: Exact statuses whose ``bound`` is a proven lower bound (module doc).
PROVEN_BOUND_STATUSES = ("optimal", "feasible", "unknown")


def _tuple(v) -> tuple[int, ...] | None:
    return None if v is None else tuple(int(x) for x in v)


@dataclass(frozen=True)
class ExactResult:
    """One exact solve: the solver's ``status`` (a :class:`kvopt.exact.SolveStatus` value),
    ``objective``/``bound`` (``None`` when it has none; in the caller's objective, so shifted
    by ``Σ a_i`` for ``latency``), the incumbent's kill-free ``starts``, ``seconds``,
    ``solver``; ``key`` is the job multiset's hash when cached by a campaign (then ``starts``
    are in that canonical job order)."""

    status: str
    objective: int | None
    bound: int | None
    starts: tuple[int, ...] | None
    seconds: float
    solver: str
    key: str | None = None

    @property
    def optimal(self) -> bool:
        return self.status == "optimal"  # OptStatus.OPTIMAL (a StrEnum)

    @property
    def proven_bound(self) -> int | None:
        """The bound, when it is proven (module doc), else ``None``."""
        return self.bound if self.status in PROVEN_BOUND_STATUSES else None

    def to_dict(self) -> dict[str, Any]:
        d = {
            "status": self.status,
            "objective": self.objective,
            "bound": self.bound,
            "starts": None if self.starts is None else list(self.starts),
            "seconds": self.seconds,
            "solver": self.solver,
        }
        if self.key is not None:
            d["key"] = self.key
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ExactResult:
        return cls(
            d["status"], d.get("objective"), d.get("bound"), _tuple(d.get("starts")),
            d.get("seconds", 0.0), d.get("solver", ""), d.get("key"),
        )  # fmt: skip


# --------------------------------------------------------------------------- values


def objective_value(inst: Instance, schedule: Schedule, objective: str) -> int:
    """The objective ``total``, ``makespan`` or ``latency`` of a (complete) schedule."""
    ct = schedule.completion_times(inst.n)
    if any(c is None for c in ct):
        raise ValueError("the schedule does not complete every job")
    if objective == "total":
        return int(sum(ct))
    if objective == "makespan":
        return int(max(ct, default=0))
    if objective == "latency":
        return int(sum(ct) - int(inst.arrivals.sum()))
    raise InputError(
        f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}", field="objective"
    )


def value(inst: Instance, starts, objective: str) -> int:
    """Objective of the kill-free schedule with these starts."""
    ends = np.asarray(starts, dtype=np.int64) + inst.responses
    if objective == "makespan":
        return int(ends.max(initial=0))
    total = int(ends.sum())
    return total - int(inst.arrivals.sum()) if objective == "latency" else total


def ratio(alg: int, ref: int) -> float:
    """``alg / ref`` (1 when both are 0, infinity when only ``ref`` is)."""
    if ref <= 0:
        return 1.0 if alg <= 0 else float("inf")
    return alg / ref


def starts_of(schedule: Schedule, n: int) -> np.ndarray:
    """The start of each job's completing attempt (a kill-free schedule's starts)."""
    st = np.zeros(n, dtype=np.int64)
    for a in schedule.attempts:
        if a.completed:
            st[a.job] = a.start
    return st


# --------------------------------------------------------------------------- cheap evidence


def cheap_lb(inst: Instance, objective: str) -> tuple[int, str]:
    """The best cheap lower bound (SPEC §2) for the objective, and its name."""
    b = lower_bounds(inst)
    if objective == "makespan":
        return b.makespan_best, b.makespan_best_name
    if objective == "latency":
        return b.best - int(inst.arrivals.sum()), b.best_name
    return b.best, b.best_name


def cheap_ub(inst: Instance, objective: str, typed: bool = False, full: bool = True, *,
             serial: bool = True) -> tuple[np.ndarray, int, str]:  # fmt: skip
    """Starts, value and source of the best cheap clairvoyant kill-free schedule (checked).

    Serial schedules (:func:`kvopt.upper.place`) over fixed job orders, and the
    kill-free clairvoyant policies of :data:`UB_POLICIES`.  With ``typed``
    (SPEC §9) the serial orders are first the orders of the job types of
    :func:`~kvopt.upper.type_orders`, then the job orders not among them, and a
    deterministic local search over the order of the types starts from the
    best type order — so the result is never worse than without ``typed``.
    ``full=False`` (typed only: the screen of a candidate that cannot beat the
    best) keeps the type orders only.  The first best wins ties, so the result
    depends only on the instance.  ``serial=False`` leaves out every serial
    placement (its cost grows with the horizon times the total response; the
    policies' does not).
    """
    from .exact.heuristic import _orders as heuristic_orders
    from .upper import improve_type_order, jobs_of, place, type_orders, type_runs

    solver_obj = "makespan" if objective == "makespan" else "total"
    best: tuple[np.ndarray, int, str] | None = None
    job_orders = heuristic_orders(inst, solver_obj) if serial and (full or not typed) else []
    if typed and serial and inst.n > 0:
        runs = type_runs(inst)
        best_types: list[int] = []
        tried: set[bytes] = set()
        for k, types in enumerate(type_orders(inst, runs)):
            order = jobs_of(runs, types)
            tried.add(order.tobytes())
            st = place(inst, order)
            v = value(inst, st, objective)
            if best is None or v < best[1]:
                best, best_types = (st, v, f"type-order-{k}"), types
        assert best is not None
        for k, order in enumerate(job_orders):
            if order.astype(np.int64).tobytes() not in tried:
                st = place(inst, order)
                v = value(inst, st, objective)
                if v < best[1]:
                    best = (st, v, f"serial-{k}")
        if full:
            _, st2, v2 = improve_type_order(inst, runs, best_types,
                                            lambda st: value(inst, st, objective), best[1])  # fmt: skip
            if st2 is not None and v2 < best[1]:
                best = (st2, v2, "type-search")
    else:
        for k, order in enumerate(job_orders):
            st = place(inst, order)
            v = value(inst, st, objective)
            if best is None or v < best[1]:
                best = (st, v, f"serial-{k}")
    best = _policy_ub(inst, objective, best, UB_POLICIES if full else ())
    return best


def _policy_ub(inst: Instance, objective: str, best, policies):
    """``best`` or the best kill-free schedule of the clairvoyant ``policies`` if smaller."""
    from .simulation import simulate

    for name, params in policies:
        try:
            res = simulate(inst, name, params=params)
        except InputError:
            continue
        st = np.zeros(inst.n, dtype=np.int64)
        ok = True
        for a in res.schedule.attempts:
            if not a.completed:
                ok = False
            st[a.job] = a.start
        if not ok:
            continue
        v = value(inst, st, objective)
        if best is None or v < best[1]:
            best = (st, v, name)
    assert best is not None
    return best


def exact_opt(inst: Instance, objective: str, time_limit: float, warm: np.ndarray,
              solver: str = "auto", deterministic: bool = True,
              threads: int = 1) -> ExactResult:  # fmt: skip
    """Exact solve → :class:`ExactResult` (``status``, ``objective``, ``bound``, ``starts``, …).

    ``deterministic``: :func:`kvopt.exact.solve`'s flag.  Its deterministic
    heuristic makes ``16 n`` serial placements (at most 256) whatever the time
    limit (seconds at a few hundred jobs), so large typed candidates run the
    heuristic on the clock instead; like any solve cut by its time limit, the
    result may then depend on the machine.  Ctrl-C reaching the solver raises
    :class:`KeyboardInterrupt` (an interrupted solve is not a result).
    """
    from .exact import solve

    solver_obj = "makespan" if objective == "makespan" else "total"
    t0 = time.perf_counter()
    res = solve(
        inst,
        objective=solver_obj,
        solver=solver,
        time_limit=time_limit,
        threads=threads,
        warm_start=Schedule.from_starts(inst, warm, producer="warm"),
        deterministic=deterministic,
    )
    if res.interrupted:
        raise KeyboardInterrupt
    return from_solve(res, inst, objective, time.perf_counter() - t0)


def from_solve(res, inst: Instance, objective: str, seconds: float) -> ExactResult:
    """A :class:`kvopt.exact.SolveResult` of ``inst`` (solved for ``total`` or ``makespan``) as
    the :class:`ExactResult` evidence :func:`tighten` merges, in ``objective`` (``latency``:
    objective and bound minus ``Σ a_i``)."""
    shift = int(inst.arrivals.sum()) if objective == "latency" else 0
    starts = None
    if res.schedule is not None:
        starts = starts_of(res.schedule, inst.n)
    return ExactResult(
        status=res.status.value,
        objective=None if res.objective is None else int(res.objective) - shift,
        bound=None if res.bound is None else int(res.bound) - shift,
        starts=None if starts is None else tuple(starts.tolist()),
        seconds=round(seconds, 4),
        solver=res.solver,
    )
