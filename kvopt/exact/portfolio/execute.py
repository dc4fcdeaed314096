"""The two executors of a route's plan (:mod:`kvopt.exact.portfolio.routes`):
:func:`run_phases` (backends in turn, each from the best schedule so far) and
:func:`run_race` (backends at once, one joining late).  Both return the merged
:class:`~kvopt.exact.common.RawResult` and what each phase did
(:class:`PhaseRun`: backend, share, threads, seconds used, status), which
``kvopt solve --explain`` prints.

The decisions are the route's; here is only the machinery: time shares, windows
between phases, the shared incumbent and bound of a race, Ctrl-C (a phase or racer
interrupted ends the plan with what was found), and merging (the best schedule, the best
bound).  Whether a result is proven is read from its :class:`~kvopt.exact.common.SolveStatus`
(each backend translates its own status), never from a solver's string.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace

import numpy as np

from ...errors import SolverError
from ...instance import Instance
from .. import workers
from ..backend import NO_HOOKS, Backend, Hooks, Limits, Problem
from ..common import BOUND_TOL, RawResult, SolveStatus, start_windows, value_of
from .report import PhaseRun
from .routes import Phase, Race, Route

#: backend name → backend, as the executors look them up
Lookup = Callable[[str], Backend]


def _share(phase: Phase) -> float | None:
    return None if math.isinf(phase.share) else phase.share


def proven(inst: Instance, objective: str, r: RawResult) -> bool:
    """Has this result proved its schedule optimal (in the windows it was given)?"""
    return r.proven or (
        r.bound is not None
        and r.starts is not None
        and math.ceil(r.bound - BOUND_TOL) >= value_of(inst, r.starts, objective)
    )


def best_starts(problem: Problem, results: list[RawResult]) -> np.ndarray:
    """The best schedule among the results and the problem's warm start."""
    inst, objective = problem.instance, problem.objective
    return min(
        (r.starts for r in results if r.starts is not None),
        key=lambda st: value_of(inst, st, objective),
        default=problem.warm,
    )


def merge(
    problem: Problem, results: list[RawResult], *, interrupted: bool, label: bool = True
) -> RawResult:
    """The best schedule and the best bound of several backends' results, labelled
    ``auto(<the backend of the best schedule>)`` when ``label``; one result is returned
    relabelled, its native status and statistics as they are."""
    inst, objective = problem.instance, problem.objective
    if len(results) == 1:
        r = results[0]
        return replace(
            r,
            solver=f"auto({r.solver})" if label else r.solver,
            interrupted=interrupted or r.interrupted,
        )
    best = None
    for r in results:
        if r.starts is not None and (
            best is None
            or value_of(inst, r.starts, objective) < value_of(inst, best.starts, objective)
        ):
            best = r
    best = best or results[0]
    bounds = [r.bound for r in results if r.bound is not None]
    value = None if best.starts is None else value_of(inst, best.starts, objective)
    if any(r.infeasible for r in results):
        status = SolveStatus.INFEASIBLE
    elif value is None:
        status = SolveStatus.UNKNOWN
    elif (bounds and math.ceil(max(bounds) - BOUND_TOL) >= value) or any(
        r.proven and value_of(inst, r.starts, objective) == value for r in results
    ):
        status = SolveStatus.OPTIMAL
    else:
        status = SolveStatus.FEASIBLE
    return RawResult(
        starts=best.starts,
        bound=max(bounds) if bounds else None,
        native_status="; ".join(f"{r.solver}: {r.native_status}" for r in results),
        solver=f"auto({best.solver})" if label else best.solver,
        solver_version="; ".join(f"{r.solver} {r.solver_version}" for r in results),
        status=status,
        interrupted=interrupted or any(r.interrupted for r in results),
        stats={r.solver: r.stats for r in results},
    )


def _limits(phase: Phase, limits: Limits, seconds: float) -> Limits:
    return replace(
        limits,
        time_limit=seconds,
        threads=phase.thread_count(limits.threads),
        bound_focus=phase.bound_focus,
        proof_focus=phase.proof_focus,
    )


def run_phases(
    route: Route,
    problem: Problem,
    limits: Limits,
    lookup: Lookup,
    tighten: Callable[[Instance, np.ndarray, np.ndarray, int, float], tuple],
) -> tuple[RawResult, tuple[PhaseRun, ...]]:
    """The route's phases in turn, each for its share of the time limit (``math.inf``: what
    is left), warm-started with the best schedule so far over its windows (``Phase.windows``:
    kept, cut to the start windows of the best value, or those cut further by ``tighten``
    — the LP windows and reduced-cost fixing — within 5 % of what is left, at most 10 s);
    the windows only shrink from phase to phase.  The first proof, a Ctrl-C or the end of
    the time ends the plan; a phase with fewer than its ``min_seconds`` left is skipped."""
    t0 = time.monotonic()
    inst, objective = problem.instance, problem.objective
    tl = limits.time_limit
    results: list[RawResult] = []
    runs: list[PhaseRun] = []
    lo, hi = problem.lo, problem.hi

    def left() -> float:
        return max(tl - (time.monotonic() - t0), 0.05)

    def next_problem(phase: Phase) -> Problem:
        nonlocal lo, hi
        best = best_starts(problem, results)
        ub = value_of(inst, best, objective)
        if phase.windows != "keep":
            wlo, whi = start_windows(inst, objective, ub)
            lo, hi = np.maximum(lo, wlo), np.minimum(hi, whi)
        if phase.windows == "tighten":
            lo, hi = tighten(inst, lo, hi, ub, min(0.05 * left(), 10.0))
        return replace(problem, lo=lo, hi=hi, warm=best, ub=ub)

    interrupted = False
    for k, phase in enumerate(route.plan):
        if k and left() < phase.min_seconds:
            break
        start = time.monotonic() - t0
        try:
            p = next_problem(phase)
            lim = _limits(phase, limits, min(phase.share * tl, left()))
            r = lookup(phase.backend).solve(p, lim, NO_HOOKS)
        except KeyboardInterrupt:
            if not results:
                raise
            interrupted = True  # Ctrl-C: what the phases before found
            break
        results.append(r)
        runs.append(
            PhaseRun(
                phase.backend,
                _share(phase),
                lim.threads,
                start,
                time.monotonic() - t0 - start,
                r.status,
                r.native_status,
            )
        )
        if r.interrupted or proven(inst, objective, r) or left() <= 0.1:
            break
    for phase in route.plan[len(runs) :]:  # not run: the plan ended before them
        runs.append(PhaseRun(phase.backend, _share(phase), phase.thread_count(limits.threads)))
    raw = merge(problem, results, interrupted=interrupted, label=route.label_auto)
    return raw, tuple(runs)


class Shared:
    """Best incumbent value and best bound reported live by the racers."""

    def __init__(self, ub: int | None, gap: float):
        self.lock = threading.Lock()
        self.value = math.inf if ub is None else float(ub)
        self.bound = -math.inf
        self.gap = gap

    def report(self, value, bound) -> None:
        with self.lock:
            if value is not None and value == value:
                self.value = min(self.value, float(value))
            if bound is not None and bound == bound:
                self.bound = max(self.bound, float(bound))

    def closed(self) -> bool:
        """The bound of one racer meets the incumbent of either (within ``gap``)."""
        with self.lock:
            lb = math.ceil(self.bound - BOUND_TOL) if math.isfinite(self.bound) else -math.inf
            return lb >= self.value or (
                self.gap > 0 and self.value - lb <= self.gap * max(abs(self.value), 1)
            )


def run_race(
    route: Route, problem: Problem, limits: Limits, lookup: Lookup
) -> tuple[RawResult, tuple[PhaseRun, ...]]:
    """The route's :class:`~kvopt.exact.portfolio.routes.Race`: the lead here, each other
    racer in a thread started at ``race.join_at(time limit)`` seconds — at once, or
    (delayed) when the lead asks ``outside()`` after that time (the branch and bound does,
    every ``_POLL`` seconds; building CP-SAT's model in Python would slow the search on
    easy instances, so it starts only when the search has not finished by then).  Every
    racer gets the whole time limit, the stop event, ``monitor`` (incumbents and bounds
    into :class:`Shared`; a bound meeting an incumbent ends the race) and ``outside()``
    (the best incumbent value).  A racer finishing ends the race (the lead when
    ``lead_ends``); Ctrl-C stops every racer and returns what they found; an exception in
    any racer is raised once all have stopped."""
    race = route.plan
    assert isinstance(race, Race)
    t0 = time.monotonic()
    stop = threading.Event()
    shared = Shared(problem.ub, limits.gap)
    out: dict[int, RawResult | BaseException] = {}
    ended: dict[int, float] = {}

    def monitor(value, bound) -> None:
        shared.report(value, bound)
        if shared.closed():
            stop.set()

    lock = threading.Lock()
    pending = list(range(1, len(race.phases)))
    started: dict[int, float] = {}
    threads: list[workers.Worker] = []
    join_at = t0 + race.join_at(limits.time_limit)

    def make(k: int) -> workers.Worker:
        phase = race.phases[k]
        backend = lookup(phase.backend)
        lim = _limits(phase, limits, limits.time_limit)

        def run() -> None:
            try:
                out[k] = backend.solve(problem, lim, hooks)
            except BaseException as exc:  # noqa: BLE001 - reported in the caller's thread
                out[k] = exc
            finally:
                ended[k] = time.monotonic() - t0
                stop.set()  # the first to finish ends the race

        return workers.thread(run, name=f"kvopt-{phase.backend}", stop=stop.set)

    def start_due() -> None:
        with lock:
            if pending and not stop.is_set() and time.monotonic() >= join_at:
                for k in pending:
                    w = make(k)
                    threads.append(w)
                    started[k] = time.monotonic() - t0
                    w.start()
                pending.clear()

    def outside() -> float:
        start_due()
        return shared.value

    hooks = Hooks(stop=stop, monitor=monitor, outside=outside)
    interrupted = False
    start_due()  # a join at once
    lead = race.lead
    lead_limits = _limits(lead, limits, limits.time_limit)
    try:
        out[0] = lookup(lead.backend).solve(problem, lead_limits, hooks)
    except KeyboardInterrupt:
        interrupted = True
    except BaseException as exc:  # noqa: BLE001 - raised below, once every racer stopped
        out[0] = exc
    ended[0] = time.monotonic() - t0
    if race.lead_ends or interrupted or isinstance(out.get(0), BaseException):
        stop.set()
    with lock:
        pending.clear()  # a lead that ended leaves the late racers unstarted
    for w in list(threads):
        while not w.finished():
            try:
                w.wait(0.05)
                if shared.closed():
                    stop.set()
            except KeyboardInterrupt:
                interrupted = True
                stop.set()
    errors = [r for r in out.values() if isinstance(r, BaseException)]
    if errors:
        raise errors[0]
    results = [out[k] for k in sorted(out)]
    runs = []
    for k, phase in enumerate(race.phases):
        r = out.get(k)
        begun = 0.0 if k == 0 else started.get(k)
        runs.append(
            PhaseRun(
                phase.backend,
                _share(phase),
                phase.thread_count(limits.threads),
                begun,
                None if r is None or begun is None else ended[k] - begun,
                None if r is None else r.status,
                None if r is None else r.native_status,
            )
        )
    if not results:
        if interrupted:
            raise KeyboardInterrupt
        raise SolverError("no racer returned a result")
    raw = merge(problem, results, interrupted=interrupted, label=route.label_auto)
    return raw, tuple(runs)


def run_plan(
    route: Route,
    problem: Problem,
    limits: Limits,
    backends: Mapping[str, Backend] | Lookup,
    tighten,
) -> tuple[RawResult, tuple[PhaseRun, ...]]:
    """The route's plan by the executor of its kind."""
    lookup = backends if callable(backends) else backends.__getitem__
    if isinstance(route.plan, Race):
        return run_race(route, problem, limits, lookup)
    return run_phases(route, problem, limits, lookup, tighten)
