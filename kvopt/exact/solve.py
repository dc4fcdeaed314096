"""One ``solve()`` over the exact backends (SPEC §5).

Pipeline: :func:`~kvopt.exact.portfolio.routes.route_for` picks the route — the first row
of :data:`~kvopt.exact.portfolio.routes.ROUTES` that holds for the ``solver=`` value, the
instance (size, typed or mixed, Σ o_i), the objective, the threads, the time limit and
whether the branch and bound runs compiled; the table, with the provenance of every
number, is the documentation of what ``auto`` does (``kvopt solve --explain`` prints the
row taken).  Then a kill-free heuristic (and the caller's warm start, if better) gives an
upper bound ``UB`` and a warm start (the route says how long its local search runs);
``UB`` shrinks every job's start window (:func:`kvopt.exact.common.start_windows`),
tightened further by the LP value of the other jobs and reduced-cost fixing when the
route asks (:func:`tightened`); then the route's plan runs
(:func:`kvopt.exact.portfolio.execute.run_plan`: phases in turn, or a race).

Backends are looked up by name in the :class:`~kvopt.exact.portfolio.Portfolio` (then
``auto``'s own, :data:`~kvopt.exact.portfolio.variants.VARIANTS`, then
:data:`kvopt.exact.registry.BACKENDS`) and all take the same three frozen bundles
(:mod:`kvopt.exact.backend`): the :class:`~kvopt.exact.backend.Problem` (instance,
objective, windows, warm start and its value), the :class:`~kvopt.exact.backend.Limits`
(time limit, threads, seed, gap, ``bound_focus``) and the
:class:`~kvopt.exact.backend.Hooks` (stop event, monitor, outside incumbent) of a race.
Every schedule passes :func:`kvopt.schedule.checked` before it is returned, and the
status is ``optimal`` only when the proven bound meets it.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import InputError, SolverError
from ..instance import Instance
from ..logs import progress_logger
from ..schedule import Schedule, check_schedule
from .backend import Limits, Problem
from .common import (
    RawResult,
    SolveResult,
    SolveStatus,
    check_objective,
    finish,
    start_windows,
    value_of,
)
from .heuristic import LocalSearchInterrupted, heuristic_starts
from .portfolio import DEFAULT, SMALL_HEURISTIC, Portfolio, Route, RouteReport, route_for
from .portfolio.cappedrows import check_batch_cap
from .portfolio.execute import run_plan
from .portfolio.report import source_dict
from .registry import BACKENDS

#: ``solver=`` values: the two strategies, then the backends of the registry
SOLVERS = ("auto", "race", *BACKENDS)

#: ``deterministic=True``: the heuristic's local search makes ``16 n`` moves, at most this many
#: (it ignores the clock; each move is a serial placement of all n jobs, ~0.4 ms at n = 100;
#: at n = 12 the 192 moves instead of 48 save 7 % of the branch and bound's nodes)
DETERMINISTIC_MOVES = 256


def _warm_starts(inst: Instance, warm: Schedule) -> np.ndarray:
    """Starts of the completing attempts of a (checked) schedule; killed attempts are dropped."""
    res = check_schedule(inst, warm)
    if not res.valid:
        first = res.errors[0].message if res.errors else "invalid"
        raise InputError(f"warm start fails the checker: {first}", source="warm_start")
    st = np.zeros(inst.n, dtype=np.int64)
    for a in warm.attempts:
        if a.completed:
            st[a.job] = a.start
    return st


def tightened(inst: Instance, lo, hi, ub: int, seconds: float, *, lp_values: bool = True):
    """The windows beyond the quick routes (total completion): the LP value of the other
    jobs (:func:`~kvopt.exact.backends.highs_matrix.lp_windows`), then reduced-cost fixing
    (:func:`kvopt.exact.bounds.relax.lagrange_fix`: exact, it drops only starts that no schedule of
    value ``≤ ub`` uses; ``models/time-indexed.md`` §9), each within ``seconds``; both keep
    every schedule of value ``≤ ub``.  The fixing is skipped when its LP is not solved in
    time; Ctrl-C is raised again (it used to be swallowed there, and the solve then ran on
    to its time limit).  ``lp_values=False``: the fixing alone (the typed rows: there the LP
    windows used their whole budget and cut almost nothing, ``models/time-indexed.md`` §10)."""
    from .backends.highs_matrix import lp_windows
    from .bounds.relax import lagrange_fix

    if lp_values:
        hi = lp_windows(inst, ub, lo, hi, seconds=seconds)
    try:
        nlo, nhi, _ = lagrange_fix(inst, lo, hi, ub, time_limit=seconds)
    except SolverError:
        return lo, hi
    return nlo, nhi


def heuristic_seconds(route: Route, time_limit: float) -> float:
    """The heuristic's local search budget on ``route``: at most ``SMALL_HEURISTIC`` (1 % of
    the limit) on the quick routes, where the searches take milliseconds to seconds (more
    was slower at n = 12), else ``min(0.5 s, 5 %)``."""
    if route.quick:
        return min(SMALL_HEURISTIC, 0.01 * time_limit)
    return min(0.5, 0.05 * time_limit)


def _check_args(objective, solver, time_limit, threads, gap) -> None:
    check_objective(objective)
    if solver not in SOLVERS:
        raise InputError(f"must be one of {', '.join(SOLVERS)}, got {solver!r}", source="solver")
    if not (time_limit > 0):
        raise InputError(f"must be > 0, got {time_limit!r}", source="time_limit")
    if int(threads) < 1:
        raise InputError(f"must be >= 1, got {threads!r}", source="threads")
    if not (0 <= gap < 1):
        raise InputError(f"must be in [0, 1), got {gap!r}", source="gap")


def solve(
    instance: Instance,
    *,
    objective: str = "total",
    solver: str = "auto",
    time_limit: float = 60.0,
    threads: int = 2,
    seed: int = 0,
    warm_start: Schedule | None = None,
    gap: float = 0.0,
    progress: bool = False,
    deterministic: bool = False,
    portfolio: Portfolio | None = None,
) -> SolveResult:
    """Exact clairvoyant Opt (SPEC §5) for ``objective`` ``"total"`` (Σ C_i) or ``"makespan"``.

    ``deterministic=True`` replaces the heuristic's timed local search by a
    fixed number of moves, so that with one thread the schedule returned
    depends only on the input whenever the solvers finish within the time
    limit (the adversarial search uses it: serial, process and Dask runs then
    write identical records).

    ``time_limit`` (seconds) covers everything, heuristic and model building
    included; a solver that ignores its own limit is stopped after a short
    grace period.  ``gap`` > 0 lets the solver stop early (the status is then
    ``feasible`` unless the bound happens to meet the objective).  Ctrl-C
    stops the solvers and returns what was found with ``interrupted=True``.
    The empty instance has Opt 0.  ``portfolio`` replaces the routes or the
    backends (a variant, :class:`~kvopt.exact.portfolio.Portfolio`); the route taken
    is in ``SolveResult.route``.
    """
    _check_args(objective, solver, time_limit, threads, gap)
    if portfolio is not None and not isinstance(portfolio, Portfolio):
        raise InputError(f"must be a Portfolio, got {type(portfolio).__name__}", source="portfolio")
    portfolio = portfolio or DEFAULT
    t0 = time.monotonic()
    n = instance.n
    if n == 0:
        return finish(
            instance,
            objective,
            np.zeros(0, np.int64),
            0.0,
            seconds=0.0,
            solver=solver,
            solver_version="",
            native_status="empty instance",
        )
    say = progress_logger(__name__, bool(progress), "kvopt solve")
    case = portfolio.case(instance, objective, time_limit, threads, solver)
    route = route_for(case, portfolio.routes)
    check_batch_cap(route, portfolio.backend, instance.max_batch)
    heur_seconds = heuristic_seconds(route, time_limit)
    user = None if warm_start is None else _warm_starts(instance, warm_start)
    # Ctrl-C before the plan ran (in the heuristic's local search, the LP windows, or a
    # plan whose first phase had found nothing yet) is not lost: the best schedule so far
    # is reported, interrupted (under load a Ctrl-C 1.5 s after the start landed in the
    # heuristic and was raised instead, tests/test_exact_workers.py)
    raw, runs, lp, cut = None, (), False, False
    try:
        warm = heuristic_starts(
            instance,
            objective,
            seed=seed,
            seconds=heur_seconds,
            moves=min(16 * n, DETERMINISTIC_MOVES) if deterministic else None,
        )
    except LocalSearchInterrupted as e:
        warm, cut = e.starts, True
    ub = value_of(instance, warm, objective)
    if user is not None and value_of(instance, user, objective) < ub:
        warm, ub = user, value_of(instance, user, objective)
    try:
        if not cut:
            lo, hi = start_windows(instance, objective, ub)
            lp = objective == "total" and n >= 2 and route.lp_windows
            if lp:
                lo, hi = tightened(
                    instance, lo, hi, ub, min(0.1 * time_limit, 10.0), lp_values=route.lp_values
                )
            say(
                f"n={n} M={instance.memory} objective={objective} heuristic UB={ub} "
                f"horizon={int((hi + instance.responses).max())} route={route.name}"
            )
            remaining = max(time_limit - (time.monotonic() - t0), 0.05)
            problem = Problem(instance, objective, lo, hi, warm=warm, ub=ub)
            limits = Limits(time_limit=remaining, threads=threads, seed=seed, gap=gap)
            raw, runs = run_plan(route, problem, limits, portfolio.backend, tightened)
    except KeyboardInterrupt:
        cut = True
    if raw is None:  # interrupted before any backend reported
        raw = RawResult(warm, None, "interrupted", "warm start", "", SolveStatus.FEASIBLE,
                        interrupted=True)  # fmt: skip
    if raw.infeasible:
        raise SolverError(
            f"{raw.solver} reports the model infeasible although a schedule of value {ub} "
            f"exists (native status: {raw.native_status})"
        )
    starts = raw.starts
    source = raw.solver
    if starts is None or value_of(instance, starts, objective) > ub:
        starts = warm  # the heuristic (or the caller's) schedule is a valid incumbent
        source = "warm start"
    report = RouteReport(
        name=route.name,
        why=route.why,
        kind=route.kind,
        when=route.when.describe(),
        case=case.to_dict(),
        source=source_dict(route.source),
        lp_windows=lp,
        lp_values=lp and route.lp_values,
        heuristic_seconds=heur_seconds,
        phases=runs,
    )
    res = finish(
        instance,
        objective,
        starts,
        raw.bound,
        seconds=time.monotonic() - t0,
        solver=raw.solver,
        solver_version=raw.solver_version,
        native_status=raw.native_status,
        interrupted=raw.interrupted or cut,
        stats=dict(raw.stats, heuristic_ub=ub, incumbent_from=source),
        route=report,
    )
    say(
        f"{res.status.value}: objective={res.objective} bound={res.bound} "
        f"({res.seconds:.2f}s, {res.solver}, route {route.name})"
    )
    return res
