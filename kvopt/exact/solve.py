"""One ``solve()`` over the exact backends (SPEC §5).

Pipeline: a kill-free heuristic (and the caller's warm start, if better)
gives an upper bound ``UB`` and a warm start; ``UB`` shrinks every job's start
window (:func:`kvopt.exact.common.start_windows`); then the chosen backend
runs.  What ``solver="auto"`` does depends on the instance (issue 11,
``models/bnb.md`` for the figures):

* **small** (``n ≤ SMALL_N`` and ``Σ o_i ≤ SMALL_ROUNDS``; mixed instances up to
  ``SMALL_N_COMPILED`` (one thread) or ``SMALL_N_SPLIT`` (two) when the branch and bound
  runs compiled, with Numba), total
  completion: the heuristic gets at most 20 ms, no LP windows (beyond ``SMALL_N``,
  2 threads: the compiled search for ``MID_BNB_SHARE`` of the limit, then CP-SAT with its
  bound workers, or at n = 19, 20 the search for ``SPLIT_BNB_SHARE``, then the ladder of
  proven thresholds (``models/bnb.md`` §8), each over windows tightened as on the
  long-limit path), and the dedicated branch
  and bound (:mod:`kvopt.exact.bnb`) runs: compiled from ``bnb.COMPILED_MIN_N`` jobs on
  (:mod:`kvopt.exact.bnbfast`; with ``threads ≥ 2`` its tree split between two threads),
  otherwise in Python, with
  ``threads ≥ 2`` in two processes (:mod:`kvopt.exact.bnbsplit`); with ``threads ≥ 2`` CP-SAT
  (``threads − 1`` workers) joins after ``CPSAT_DELAY`` seconds or
  ``CPSAT_DELAY_SHARE`` of the time limit, whichever is later, and the two
  share incumbents; with one thread the branch and bound gets ``BNB_ALONE``
  of the time limit, then CP-SAT the rest.  Small makespan instances go to
  CP-SAT alone (the branch and bound's makespan bound is weak);
* **long limits** (mixed instances, total completion, ``n`` a key of
  ``SMALL_LONG`` beyond the small path, and a time limit of at least its value; one thread:
  ``SMALL_LONG_ONE_THREAD`` times it): CP-SAT as beyond the small path for
  ``LONG_CPSAT_FIRST`` of the limit, the branch and bound alone (split with
  two threads) for ``LONG_BNB_SHARE``, then CP-SAT the rest; each phase
  starts from the best schedule so far, its windows tightened with its value;
* **otherwise** the start windows are tightened further with the LP value of
  the other jobs (:func:`kvopt.exact.highs_matrix.lp_windows`, within 10 %
  of the time limit); then, up to ``RACE_N`` jobs (since ``SMALL_N = RACE_N``:
  instances whose responses add up to more than ``SMALL_ROUNDS``), HiGHS races
  CP-SAT as in round 1, and beyond that
  CP-SAT runs alone with, on 2 threads, two full workers that move the bound
  (``default_lp`` and ``lb_tree_search``): nothing is proven there in a
  minute; its bounds are the highest of the configurations measured
  (``models/time-indexed.md`` §8);
* **the ladder's route** (:func:`_takes_ladder`: mixed, ``SMALL_N_SPLIT < n ≤ LADDER_N``,
  total completion, compiled, 2 threads): the iterated local search
  (:func:`kvopt.exact.heuristic.improve_starts`) for ``LADDER_ILS_SHARE`` of the limit, the
  incumbent, then the ladder, the bound (``models/bnb.md`` §8, §9); beyond it up to
  ``ILS_N`` jobs (mixed, total completion, 2 threads) the same local search, then CP-SAT;
* **typed** instances beyond the small path (at most ``TYPED_GROUPS``
  distinct jobs): HiGHS alone on the aggregated model, every thread (it
  proves or closes more than CP-SAT there, ``models/time-indexed.md`` §9);
* ``SERIAL_PHASES`` (off: measured no better at n = 12, ``models/time-indexed.md``
  §9.5): with one thread the small path runs the branch and bound for
  ``BNB_FIRST`` seconds, CP-SAT for ``CPSAT_SHARE`` of the rest, then the
  branch and bound again; beyond the small path (and before CP-SAT in those
  phases) the windows are shrunk by reduced-cost fixing (``RC_FIX``,
  :func:`kvopt.exact.relax.lagrange_fix`: exact, it drops only starts that no
  schedule of value ``≤ UB`` uses).

``solver="race"`` is round 1's ``auto`` (LP windows, then HiGHS on one thread
racing CP-SAT on the others; both report incumbents and bounds as they go,
the race ends when one finishes or one's bound meets the other's
incumbent), kept for comparison (``benchmarks/exact.py``).  ``bnb`` runs the
branch and bound alone (no time split, no LP windows); ``highs``, ``cpsat``,
``pyomo`` one backend after the LP windows.
Backends are looked up by name in :data:`kvopt.exact.registry.BACKENDS` and
all take the same three frozen bundles (:mod:`kvopt.exact.backend`): the
:class:`~kvopt.exact.backend.Problem` (instance, objective, windows, warm
start and its value), the :class:`~kvopt.exact.backend.Limits` (time limit,
threads, seed, gap, ``bound_focus``) and the :class:`~kvopt.exact.backend.Hooks`
(stop event, monitor, outside incumbent) of the race.
Every schedule passes :func:`kvopt.schedule.checked` before it is returned,
and the status is ``optimal`` only when the proven bound meets it.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from ..errors import InputError, SolverError
from ..instance import Instance
from ..logs import progress_logger
from ..schedule import Schedule, check_schedule
from . import workers
from .backend import NO_HOOKS, Hooks, Limits, Problem
from .bnb import BranchAndBound, uses_compiled
from .common import (
    BOUND_TOL,
    RawResult,
    SolveResult,
    check_objective,
    finish,
    start_windows,
    value_of,
)
from .heuristic import LocalSearchInterrupted, heuristic_starts, improve_starts
from .registry import BACKENDS

#: ``solver=`` values: the two strategies, then the backends of the registry
SOLVERS = ("auto", "race", *BACKENDS)

#: ``auto`` takes the small-instance path (no LP windows; branch and bound) up to this many jobs
#: (12 until issue 17's last session: the split search proves n = 13-16 faster than the race,
#: ``models/bnb.md``)
SMALL_N = 16
#: … and when the responses add up to at most this many rounds (the search walks rounds)
SMALL_ROUNDS = 400
#: … up to this many jobs when the branch and bound runs compiled (``bnb.uses_compiled``:
#: Numba installed) on mixed instances, total completion.  On the n = 17, 18 benchmark
#: instances (seeds 1-6) the small path then proved 8 of 12 within 60 s (2 threads), where
#: the path beyond (CP-SAT) proved 3; the compiled search alone proved none of six at n = 20
#: (``models/bnb.md`` §7)
SMALL_N_COMPILED = 18
#: … there, with ``threads ≥ 2``, the compiled branch and bound runs alone for this share of
#: the limit, then CP-SAT with its bound workers for the rest (:func:`_long`'s phases).  On
#: those 12 instances at 60 s it proved the same 8 as the race of the small path (compiled
#: search beside one CP-SAT worker) and ended the other four at 0.8-7.5 % instead of 3.8-8.9 %
MID_BNB_SHARE = 0.4
#: … with ``threads ≥ 2`` the compiled search splits its tree between two threads
#: (:func:`kvopt.exact.bnbfast.run_compiled`), and the small path reaches this many jobs:
#: beyond ``SMALL_N_COMPILED`` the search gets ``SPLIT_BNB_SHARE`` of the limit, then
#: CP-SAT.  On the n = 19, 20 benchmark instances (seeds 1-6, 60 s) that proved 3 of 12
#: (the CP-SAT path: none; a share of 0.4: 1) and ended the others 4.1-9.3 % from their
#: bound (CP-SAT path: 3.8-8.7 % on the same nine; ``models/bnb.md`` §7)
SMALL_N_SPLIT = 20
SPLIT_BNB_SHARE = 0.65
#: … and, when above 0, the iterated local search for this share first (off: better schedules
#: on 3-4 of the 9 instances left open, lower bounds on 1-2, within the ladder's noise;
#: ``models/bnb.md`` §10)
SPLIT_ILS_SHARE = 0.0
#: beyond the small path, mixed instances (total completion, the compiled search, ``threads ≥
#: 2``) up to this many jobs: the iterated local search for ``LADDER_ILS_SHARE`` of the limit
#: (the incumbent), then the branch and bound's ladder (``models/bnb.md`` §8: its proven
#: thresholds were above CP-SAT's bound on every n = 20-30 benchmark instance).  Until
#: session 29 CP-SAT with its bound workers had 0.3 of the limit before the ladder; on the
#: n = 22-30 benchmark instances it never improved the heuristic's schedule, which the local
#: search did on all six (``models/bnb.md`` §9)
LADDER_N = 30
LADDER_ILS_SHARE = 0.2
#: beyond ``LADDER_N`` up to this many jobs (mixed, total completion, ``threads ≥ 2``): the
#: local search for ``LADDER_ILS_SHARE`` of the limit before CP-SAT (with its bound workers);
#: on the n = 35, 40 and 60 benchmark instances its schedules were 0.5-6.6 % better than
#: CP-SAT's alone (``models/bnb.md`` §9).  Larger instances were not measured
ILS_N = 60
#: beyond ``SMALL_N``, mixed instances of ``n`` jobs (more than ``TYPED_GROUPS`` distinct
#: ones) take the long-limit path (:func:`_long`: CP-SAT, the branch and bound, CP-SAT)
#: when the time limit is at least ``SMALL_LONG[n]`` seconds (with one thread
#: ``SMALL_LONG_ONE_THREAD`` times that).  The two prove different instances: on the n = 17
#: benchmark instances (seeds 1-6) the split branch and bound alone proved seeds 1-3 in
#: 45-79 s and none of 4-6 in 300 s, CP-SAT (the path beyond) seed 4 in 8 s but not seeds
#: 1, 2 in 300 s; in turn they prove seeds 1-5 within 160 s (``models/bnb.md``).  At
#: n = 18 the branch and bound alone takes 187-194 s (seeds 1, 2); in turn they prove both
#: in 252-276 s of 400 s, where CP-SAT left gaps of 4.6-4.9 % after 300 s.
SMALL_LONG = {17: 160.0, 18: 400.0}
#: … one thread: the search runs on one core instead of two (at 320 s, n = 17 seeds 4 and 1
#: were proved in 5.2 and 115.6 s)
SMALL_LONG_ONE_THREAD = 2.0
#: … there CP-SAT runs first for this share of the time limit, …
LONG_CPSAT_FIRST = 0.2
#: … then the branch and bound alone for this share, then CP-SAT the rest
LONG_BNB_SHARE = 0.5
#: the heuristic's local search on the small path up to ``SMALL_N``, at most this many seconds
#: (50 and 100 ms were slower at n = 12: 0.414 s median against 0.464 and 0.532 s)
SMALL_HEURISTIC = 0.02
#: beyond the small path and up to this many jobs ``auto`` races HiGHS and CP-SAT (round 1)
RACE_N = 16
#: ``auto`` gives instances beyond the small path with at most this many distinct jobs
#: (same prompt, response, arrival: typed instances) to HiGHS on the aggregated model
TYPED_GROUPS = 4
#: typed instances, ``threads ≥ 2``: the block length of the column generation beside HiGHS,
#: as a share of the largest response (half: every pricing round finished on the typed
#: benchmark instances; the whole response did not on two of four, ``models/time-indexed.md`` §9.8)
TYPED_BLOCK_SHARE = 0.5
#: typed instances, one thread: HiGHS's share of the time limit before the block bound
#: (0: HiGHS alone)
TYPED_HIGHS_SHARE = 0.5
#: … only when that leaves the block bound at least this many seconds (at a 10 s limit the
#: split was no better than HiGHS alone; at 60 s it closed 3-6 points of gap)
TYPED_BLOCK_MIN = 15.0
#: the version string of the block bound in results
BLOCKS_VERSION = "kvopt-blocks 1"
#: with one thread, the share of the time limit the branch and bound gets before CP-SAT
BNB_ALONE = 0.5
#: with two threads or more, CP-SAT joins the branch and bound after this many seconds
#: (0.2 until issue 17 round 3: at n = 12 CP-SAT alone is far slower, models/bnb.md)
CPSAT_DELAY = 1.0
#: … or after this share of the time limit, if later (the split branch and bound uses both
#: cores; CP-SAT beside it proved none of the n = 14-16 benchmark instances first and slowed
#: the search by 15-28 %, models/bnb.md)
CPSAT_DELAY_SHARE = 0.25
#: one thread: the branch and bound first runs this many seconds (then CP-SAT, then it again)
BNB_FIRST = 0.3
#: … and CP-SAT gets this share of the time left after it (the branch and bound the rest)
CPSAT_SHARE = 0.5
#: one thread: the three phases above (``False``, the default: round 2's branch and bound
#: for ``BNB_ALONE`` of the limit, then CP-SAT; the phases measured no better at n = 12)
SERIAL_PHASES = False
#: ``deterministic=True``: the heuristic's local search makes ``16 n`` moves, at most this many
#: (it ignores the clock; each move is a serial placement of all n jobs, ~0.4 ms at n = 100;
#: at n = 12 the 192 moves instead of 48 save 7 % of the branch and bound's nodes)
DETERMINISTIC_MOVES = 256
#: reduced-cost fixing of the start windows (total completion, ``models/time-indexed.md`` §9)
RC_FIX = True


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


def _tightened(inst: Instance, lo, hi, ub: int, *, seconds: float):
    """The windows of the path beyond the small one (total completion): the LP value of the
    other jobs (:func:`~kvopt.exact.highs_matrix.lp_windows`), then reduced-cost fixing
    (``RC_FIX``), each within ``seconds``; both keep every schedule of value ``≤ ub``."""
    from .highs_matrix import lp_windows

    hi = lp_windows(inst, ub, lo, hi, seconds=seconds)
    if RC_FIX:
        lo, hi = _rc_fix(inst, lo, hi, ub, seconds=seconds)
    return lo, hi


def _rc_fix(inst: Instance, lo, hi, ub: int, *, seconds: float):
    """The windows after reduced-cost fixing (:func:`kvopt.exact.relax.lagrange_fix`);
    unchanged if the LP is not solved within ``seconds``.  Ctrl-C is raised again (it
    used to be swallowed here, and the solve then ran on to its time limit)."""
    from .relax import lagrange_fix

    try:
        nlo, nhi, _ = lagrange_fix(inst, lo, hi, ub, time_limit=seconds)
    except SolverError:
        return lo, hi
    return nlo, nhi


def _groups(inst: Instance) -> int:
    """The number of distinct jobs (prompt, response, arrival)."""
    return len(set(zip(inst.prompts.tolist(), inst.responses.tolist(), inst.arrivals.tolist())))


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


@dataclass(frozen=True)
class _LocalSearch:
    """A phase of ``auto`` that improves the incumbent and proves nothing: the iterated local
    search of :func:`~kvopt.exact.heuristic.improve_starts` from the problem's warm start, for
    the time limit (its schedule is checked with every other one, its bound is ``None``)."""

    name: ClassVar[str] = "ils"

    def solve(self, problem: Problem, limits: Limits, hooks: Hooks = NO_HOOKS) -> RawResult:
        t0 = time.monotonic()
        inst, objective = problem.instance, problem.objective
        before = value_of(inst, problem.warm, objective)
        interrupted = False
        try:
            starts = improve_starts(
                inst, problem.warm, objective, seed=limits.seed, seconds=limits.time_limit
            )
        except LocalSearchInterrupted as e:  # Ctrl-C: reported like the backends
            starts, interrupted = e.starts, True
        return RawResult(
            starts=starts,
            bound=None,
            native_status="interrupted" if interrupted else "stopped",
            solver="ils",
            solver_version="kvopt-ils 1",
            interrupted=interrupted,
            stats={
                "seconds": time.monotonic() - t0,
                "from": int(before),
                "to": int(value_of(inst, starts, objective)),
            },
        )


#: ``auto``'s own backend variants (not ``solver=`` choices): the branch and bound climbing its
#: ladder of thresholds (``models/bnb.md`` §8), the local search (§9)
_VARIANTS = {"ladder": BranchAndBound(ladder=True), "ils": _LocalSearch()}


def _run(name: str, problem: Problem, limits: Limits, hooks: Hooks = NO_HOOKS) -> RawResult:
    """The backend ``name`` of :data:`~kvopt.exact.registry.BACKENDS` (looked up at call time),
    or one of ``auto``'s variants."""
    backend = _VARIANTS[name] if name in _VARIANTS else BACKENDS[name]
    return backend.solve(problem, limits, hooks)


class _Shared:
    """Best incumbent value and best bound reported live by the racing solvers."""

    def __init__(self, ub: int, gap: float):
        self.lock = threading.Lock()
        self.value = float(ub)
        self.bound = -float("inf")
        self.gap = gap

    def report(self, value, bound) -> None:
        with self.lock:
            if value is not None and value == value:
                self.value = min(self.value, float(value))
            if bound is not None and bound == bound:
                self.bound = max(self.bound, float(bound))

    def closed(self) -> bool:
        """The bound of one solver meets the incumbent of either (within ``gap``)."""
        with self.lock:
            lb = math.ceil(self.bound - BOUND_TOL) if math.isfinite(self.bound) else -math.inf
            return lb >= self.value or (
                self.gap > 0 and self.value - lb <= self.gap * max(abs(self.value), 1)
            )


def _in_thread(
    out: dict, stop: threading.Event, name: str, problem: Problem, limits: Limits, hooks: Hooks
) -> workers.Worker:
    """A (not yet started) thread running the backend ``name`` into ``out[name]``; an
    exception is stored there too (re-raised by the caller), and finishing sets ``stop``."""

    def run():
        try:
            out[name] = _run(name, problem, limits, hooks)
        except BaseException as exc:  # reported in the caller's thread
            out[name] = exc
        finally:
            stop.set()  # the first to finish ends the race

    return workers.thread(run, name=f"kvopt-{name}", stop=stop.set)


def _join(threads: list[workers.Worker], shared: _Shared, stop: threading.Event) -> bool:
    """Wait for the racing ``threads``, setting ``stop`` once one's bound meets an incumbent
    (``shared.closed()``) or on Ctrl-C; returns whether Ctrl-C came."""
    interrupted = False
    for w in threads:
        while not w.finished():
            try:
                w.wait(0.05)
                if shared.closed():
                    stop.set()
            except KeyboardInterrupt:
                interrupted = True
                stop.set()
    return interrupted


def _race(problem: Problem, limits: Limits) -> RawResult:
    """HiGHS (1 thread) and CP-SAT (``threads − 1`` workers) in parallel; merge their findings.

    Both report incumbents and bounds as they go; the race ends when one
    finishes or when one's bound meets the other's incumbent.
    """
    stop = threading.Event()
    shared = _Shared(problem.ub, limits.gap)
    out: dict[str, RawResult | BaseException] = {}
    hooks = Hooks(stop=stop, monitor=shared.report)
    racers = [
        _in_thread(out, stop, "highs", problem, replace(limits, threads=1), hooks),
        _in_thread(out, stop, "cpsat", problem, replace(limits, threads=limits.threads - 1), hooks),
    ]
    for w in racers:
        w.start()
    interrupted = _join(racers, shared, stop)
    results = [r for r in out.values() if isinstance(r, RawResult)]
    if not results:
        raise next(r for r in out.values() if isinstance(r, BaseException))
    return _merge(problem, results, interrupted=interrupted)


def _typed(problem: Problem, limits: Limits) -> RawResult:
    """Typed instances beyond the small path (total completion): HiGHS on the aggregated model.

    With ``threads ≥ 2`` HiGHS gets ``threads − 1`` of them and the time-block
    column generation (:func:`kvopt.exact.blocks.block_bound`, blocks of
    ``TYPED_BLOCK_SHARE`` of the largest response, over the same windows) runs
    here beside it: its bound is the strongest measured on typed instances
    (``models/time-indexed.md`` §9.6, §9.8), HiGHS's search gives the schedules.
    The result has the better of the two bounds; either one meeting the
    incumbent ends both.  With one thread: :func:`_typed_serial`.
    """
    if limits.threads < 2:
        return _typed_serial(problem, limits)
    from .blocks import block_bound, block_length

    inst = problem.instance
    stop = threading.Event()
    shared = _Shared(problem.ub, limits.gap)
    out: dict[str, RawResult | BaseException] = {}
    hooks = Hooks(stop=stop, monitor=shared.report)
    worker = _in_thread(
        out, stop, "highs", problem, replace(limits, threads=limits.threads - 1), hooks
    )
    worker.start()

    def on_bound(value: float) -> None:
        shared.report(None, value)
        if shared.closed():
            stop.set()

    L = block_length(inst, TYPED_BLOCK_SHARE)
    interrupted = False
    try:
        bb, stats = block_bound(
            inst,
            problem.ub,
            L,
            limits.time_limit,
            starts=problem.warm,
            windows=(problem.lo, problem.hi),
            stop=stop,
            on_bound=on_bound,
        )
        out["blocks"] = _blocks_result(bb, stats)
    except SolverError:
        pass  # no block bound (the time-indexed LP or the master failed): HiGHS's alone
    except KeyboardInterrupt:
        interrupted = True
        stop.set()
    interrupted = _join([worker], shared, stop) or interrupted
    if isinstance(out.get("highs"), BaseException):
        raise out["highs"]
    results = [out["highs"]] + ([out["blocks"]] if "blocks" in out else [])
    raw = _merge(problem, results, interrupted=interrupted)
    raw.solver = "auto(highs)"
    return raw


def _typed_serial(problem: Problem, limits: Limits) -> RawResult:
    """One thread: HiGHS for ``TYPED_HIGHS_SHARE`` of the time, then (if it did not prove) the
    block bound in the rest, over the windows of the best schedule found; HiGHS alone when the
    rest would be under ``TYPED_BLOCK_MIN`` seconds (``models/time-indexed.md`` §9.8)."""
    from .blocks import block_bound, block_length

    t0 = time.monotonic()
    inst, objective = problem.instance, problem.objective
    blocks = (
        TYPED_HIGHS_SHARE > 0 and (1 - TYPED_HIGHS_SHARE) * limits.time_limit >= TYPED_BLOCK_MIN
    )
    share = TYPED_HIGHS_SHARE if blocks else 1.0
    a = _run("highs", problem, replace(limits, time_limit=share * limits.time_limit))
    results = [a]
    left = limits.time_limit - (time.monotonic() - t0)
    best = a.starts if a.starts is not None else problem.warm
    ub = value_of(inst, best, objective)
    lb = math.ceil(a.bound - BOUND_TOL) if a.bound is not None else -math.inf
    if blocks and left > 0.5 and lb < ub and not a.interrupted:
        lo, hi = start_windows(inst, objective, ub)
        lo, hi = np.maximum(lo, problem.lo), np.minimum(hi, problem.hi)
        L = block_length(inst, TYPED_BLOCK_SHARE)
        try:
            bb, stats = block_bound(inst, ub, L, left, starts=best, windows=(lo, hi))
            results.append(_blocks_result(bb, stats))
        except SolverError:
            pass
        except KeyboardInterrupt:
            a.interrupted = True
    raw = _merge(problem, results, interrupted=a.interrupted)
    raw.solver = "auto(highs)"
    return raw


def _blocks_result(bound: float, stats: dict) -> RawResult:
    """The block bound as a result without a schedule (its statistics JSON-safe: ``lp`` is
    NaN when no restricted master was solved, and kvopt writes no NaN)."""
    stats = {
        k: (None if isinstance(v, float) and not math.isfinite(v) else v)
        for k, v in stats.items()
        if k != "trace"
    }
    return RawResult(
        starts=None,
        bound=bound if math.isfinite(bound) else None,
        native_status="converged" if stats.get("converged") else "stopped",
        solver="blocks",
        solver_version=BLOCKS_VERSION,
        stats=stats,
    )


def _small_n(instance: Instance, objective: str, threads: int = 1) -> int:
    """The small path's largest ``n`` for this instance: for mixed instances of more than
    ``SMALL_N`` jobs, total completion, when the branch and bound runs compiled,
    ``SMALL_N_SPLIT`` with ``threads ≥ 2`` (the search split between two threads) and
    ``SMALL_N_COMPILED`` with one; ``SMALL_N`` otherwise."""
    if (
        instance.n > SMALL_N
        and objective == "total"
        and uses_compiled(instance.n)
        and _groups(instance) > TYPED_GROUPS
    ):
        return SMALL_N_SPLIT if threads >= 2 else SMALL_N_COMPILED
    return SMALL_N


def takes_small_path(instance: Instance, objective: str, time_limit: float, threads: int) -> bool:
    """Does ``auto`` give this instance to the branch and bound: the small path (``SMALL_N``,
    ``SMALL_ROUNDS``), or at n = 17, 18 with a long enough limit the long-limit path
    (``SMALL_LONG``, :func:`_long`)?"""
    n = instance.n
    if int(instance.responses.sum()) > SMALL_ROUNDS:
        return False
    if n <= _small_n(instance, objective, threads):
        return True
    need = SMALL_LONG.get(n)
    if need is None or objective != "total" or _groups(instance) <= TYPED_GROUPS:
        return False
    return time_limit >= need * (1.0 if threads >= 2 else SMALL_LONG_ONE_THREAD)


def _takes_ladder(instance: Instance, objective: str, threads: int) -> bool:
    """Does ``auto`` give the local search, then the ladder, this instance:
    mixed, of ``SMALL_N_SPLIT`` < n ≤ ``LADDER_N`` jobs, total completion, the compiled
    search, two threads?"""
    return (
        objective == "total"
        and threads >= 2
        and SMALL_N_SPLIT < instance.n <= LADDER_N
        and uses_compiled(instance.n)
        and _groups(instance) > TYPED_GROUPS
    )


def cpsat_delay(time_limit: float) -> float:
    """Seconds after which CP-SAT joins the branch and bound on the small path (2+ threads)."""
    return max(CPSAT_DELAY, CPSAT_DELAY_SHARE * time_limit)


#: small path, 2 threads: the branch and bound splits its tree (with CP-SAT joining later)
SMALL_SPLIT = True


def _small(problem: Problem, limits: Limits) -> RawResult:
    """Small instances: the branch and bound of ``models/bnb.md``, raced against CP-SAT.

    With ``threads ≥ 2`` CP-SAT (``threads − 1`` workers) runs in a thread while
    the branch and bound runs here; each prunes with the other's incumbent and
    the first proof ends both.  With one thread the branch and bound runs
    alone for ``BNB_ALONE`` of the time limit, then CP-SAT gets the rest,
    warm-started with the best schedule found.
    """
    t0 = time.monotonic()
    if limits.threads < 2:
        phases = _small_serial if SERIAL_PHASES else _small_split
        return phases(problem, limits, t0)
    stop = threading.Event()
    shared = _Shared(problem.ub, limits.gap)
    out: dict[str, RawResult | BaseException] = {}
    cpsat_limits = replace(limits, threads=limits.threads - 1)
    worker = _in_thread(
        out, stop, "cpsat", problem, cpsat_limits, Hooks(stop=stop, monitor=shared.report)
    )
    launch_at = t0 + cpsat_delay(limits.time_limit)

    def outside():
        # CP-SAT starts only when the branch and bound has not finished within cpsat_delay
        # (building its model in Python would slow the search down on easy instances)
        if worker.ident is None and time.monotonic() >= launch_at:
            worker.start()
        return shared.value

    interrupted = False
    try:
        bnb_limits = limits if SMALL_SPLIT else replace(limits, threads=1)
        out["bnb"] = _run("bnb", problem, bnb_limits, Hooks(stop=stop, outside=outside))
        if out["bnb"].native_status in ("optimal", "exhausted"):
            stop.set()
    except KeyboardInterrupt:
        interrupted = True
    stop.set()
    while worker.ident is not None and not worker.finished():
        try:
            worker.wait(0.05)
        except KeyboardInterrupt:
            interrupted = True
    results = [r for r in out.values() if isinstance(r, RawResult)]
    if not results:
        raise next(r for r in out.values() if isinstance(r, BaseException))
    return _merge(problem, results, interrupted=interrupted)


def _small_split(problem: Problem, limits: Limits, t0: float) -> RawResult:
    """One thread, round 2: the branch and bound for ``BNB_ALONE`` of the limit, then CP-SAT."""
    inst, objective = problem.instance, problem.objective
    a = _run("bnb", problem, replace(limits, time_limit=BNB_ALONE * limits.time_limit))
    if a.native_status == "optimal" or a.native_status == "exhausted":
        a.solver = "auto(bnb)"
        return a
    if a.interrupted:  # Ctrl-C: what the search found, no CP-SAT after it
        return _merge(problem, [a], interrupted=True)
    better = a.starts if a.starts is not None else problem.warm
    rest = max(limits.time_limit - (time.monotonic() - t0), 0.05)
    b = _run(
        "cpsat",
        replace(problem, warm=better, ub=value_of(inst, better, objective)),
        replace(limits, time_limit=rest, threads=1),
    )
    return _merge(problem, [a, b], interrupted=False)


def _long(
    problem: Problem,
    limits: Limits,
    t0: float,
    phases: tuple[tuple[str, float], ...] | None = None,
) -> RawResult:
    """Backends in turn, each for its share of the time limit (``math.inf``: the rest);
    CP-SAT with its bound workers when given 2 threads.  By default the long-limit path at
    n = 17, 18 (``SMALL_LONG``, total completion): CP-SAT as beyond the small path for
    ``LONG_CPSAT_FIRST`` of the limit, then the branch and bound alone (split with two
    threads) for ``LONG_BNB_SHARE``, then CP-SAT the rest.  Each phase is warm-started with
    the best schedule so far, over the windows of its value tightened by :func:`_tightened`
    (they hold every schedule of value ``≤`` it; not for the local search, ``"ils"``, which
    does not read them); the first proof ends."""
    inst, objective = problem.instance, problem.objective
    tl = limits.time_limit
    results: list[RawResult] = []
    lo, hi = problem.lo, problem.hi

    def left() -> float:
        return max(tl - (time.monotonic() - t0), 0.05)

    def best_problem(tighten: bool = True) -> Problem:
        nonlocal lo, hi
        best = _best_starts(problem, results)
        ub = value_of(inst, best, objective)
        if not tighten:  # the local search does not read the windows
            return replace(problem, lo=lo, hi=hi, warm=best, ub=ub)
        wlo, whi = start_windows(inst, objective, ub)
        lo, hi = np.maximum(lo, wlo), np.minimum(hi, whi)
        lo, hi = _tightened(inst, lo, hi, ub, seconds=min(0.05 * left(), 10.0))
        return replace(problem, lo=lo, hi=hi, warm=best, ub=ub)

    focus = limits.threads >= 2
    if phases is None:
        phases = (("cpsat", LONG_CPSAT_FIRST), ("bnb", LONG_BNB_SHARE), ("cpsat", math.inf))
    phases = [(name, share * tl, focus and name == "cpsat") for name, share in phases]
    interrupted = False
    for name, seconds, bound_focus in phases:
        try:
            p = best_problem(tighten=name != "ils")
            lim = replace(limits, time_limit=min(seconds, left()), bound_focus=bound_focus)
            r = _run(name, p, lim)
        except KeyboardInterrupt:
            if not results:
                raise
            interrupted = True  # Ctrl-C: what the phases before found
            break
        results.append(r)
        if r.interrupted or _proven(inst, objective, r) or left() <= 0.1:
            break
    return _merge(problem, results, interrupted=interrupted)


def _small_serial(problem: Problem, limits: Limits, t0: float) -> RawResult:
    """One thread: the branch and bound for ``BNB_FIRST`` seconds (it settles the easy
    instances), then CP-SAT for ``CPSAT_SHARE`` of what is left (windows shrunk by
    reduced-cost fixing with the best value found), then the branch and bound again with
    that value as its threshold.  Each phase is warm-started with the best schedule."""
    inst, objective = problem.instance, problem.objective
    tl = limits.time_limit
    results = []

    def left() -> float:
        return max(tl - (time.monotonic() - t0), 0.05)

    def best_problem() -> Problem:
        best = _best_starts(problem, results)
        return replace(problem, warm=best, ub=value_of(inst, best, objective))

    a = _run("bnb", problem, replace(limits, time_limit=min(BNB_FIRST, BNB_ALONE * tl)))
    results.append(a)
    if a.native_status in ("optimal", "exhausted"):
        a.solver = "auto(bnb)"
        return a
    if a.interrupted:
        return _merge(problem, results, interrupted=True)
    p = best_problem()
    if RC_FIX and p.ub is not None and inst.n >= 2:
        lo, hi = _rc_fix(inst, p.lo, p.hi, p.ub, seconds=min(0.05 * tl, 2.0))
        p = replace(p, lo=lo, hi=hi)
    b = _run("cpsat", p, replace(limits, time_limit=CPSAT_SHARE * left(), threads=1))
    results.append(b)
    if b.interrupted or _proven(inst, objective, b) or left() <= 0.1:
        return _merge(problem, results, interrupted=False)
    c = _run("bnb", replace(best_problem(), lo=p.lo, hi=p.hi), replace(limits, time_limit=left()))
    results.append(c)
    return _merge(problem, results, interrupted=False)


def _best_starts(problem: Problem, results: list[RawResult]) -> np.ndarray:
    """The best schedule among the results and the problem's warm start."""
    inst, objective = problem.instance, problem.objective
    return min(
        (r.starts for r in results if r.starts is not None),
        key=lambda st: value_of(inst, st, objective),
        default=problem.warm,
    )


def _proven(inst: Instance, objective: str, r: RawResult) -> bool:
    """Has this result proved its schedule optimal (in the windows it was given)?"""
    return r.native_status in ("optimal", "exhausted", "OPTIMAL") or (
        r.bound is not None
        and r.starts is not None
        and math.ceil(r.bound - BOUND_TOL) >= value_of(inst, r.starts, objective)
    )


def _merge(problem: Problem, results: list[RawResult], *, interrupted: bool) -> RawResult:
    """The best schedule and the best bound of several backends' results."""
    inst, objective = problem.instance, problem.objective
    best = None
    for r in results:
        if r.starts is not None and (
            best is None
            or value_of(inst, r.starts, objective) < value_of(inst, best.starts, objective)
        ):
            best = r
    best = best or results[0]
    bounds = [r.bound for r in results if r.bound is not None]
    return RawResult(
        starts=best.starts,
        bound=max(bounds) if bounds else None,
        native_status="; ".join(f"{r.solver}: {r.native_status}" for r in results),
        solver=f"auto({best.solver})",
        solver_version="; ".join(f"{r.solver} {r.solver_version}" for r in results),
        infeasible=any(r.infeasible for r in results),
        interrupted=interrupted or any(r.interrupted for r in results),
        stats={r.solver: r.stats for r in results},
    )


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
    The empty instance has Opt 0.
    """
    _check_args(objective, solver, time_limit, threads, gap)
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
    small = solver == "bnb" or (
        solver == "auto" and takes_small_path(instance, objective, time_limit, threads)
    )
    # the small path's searches take milliseconds to seconds: 20 ms of local search (more
    # was slower at n = 12); the long-limit path (n > SMALL_N) runs for minutes
    small_n = _small_n(instance, objective, threads)
    quick = small and n <= small_n
    heur_seconds = min(SMALL_HEURISTIC, 0.01 * time_limit) if quick else min(0.5, 0.05 * time_limit)
    warm = heuristic_starts(
        instance,
        objective,
        seed=seed,
        seconds=heur_seconds,
        moves=min(16 * n, DETERMINISTIC_MOVES) if deterministic else None,
    )
    ub = value_of(instance, warm, objective)
    if warm_start is not None:
        user = _warm_starts(instance, warm_start)
        if value_of(instance, user, objective) < ub:
            warm, ub = user, value_of(instance, user, objective)
    lo, hi = start_windows(instance, objective, ub)
    if objective == "total" and n >= 2 and not small:
        lo, hi = _tightened(instance, lo, hi, ub, seconds=min(0.1 * time_limit, 10.0))
    say(
        f"n={n} M={instance.memory} objective={objective} heuristic UB={ub} "
        f"horizon={int((hi + instance.responses).max())}"
    )
    remaining = max(time_limit - (time.monotonic() - t0), 0.05)
    problem = Problem(instance, objective, lo, hi, warm=warm, ub=ub)
    limits = Limits(time_limit=remaining, threads=threads, seed=seed, gap=gap)
    if solver == "auto" and small and objective == "total" and n > small_n:
        # n = 17, 18 with a long time limit: CP-SAT and the branch and bound in turn (each
        # proves instances the other does not, models/bnb.md)
        raw = _long(problem, limits, time.monotonic())
    elif solver == "auto" and small and objective == "total" and n > SMALL_N and threads >= 2:
        # n = 17-20 with the compiled branch and bound: it alone, then CP-SAT's bound workers
        # (n = 17, 18) or the ladder (n = 19, 20)
        if n <= SMALL_N_COMPILED:
            phases = (("bnb", MID_BNB_SHARE), ("cpsat", math.inf))
        else:  # n = 19, 20: the search, then the ladder for the bound
            phases = (("ils", SPLIT_ILS_SHARE),) if SPLIT_ILS_SHARE > 0 else ()
            phases += (("bnb", SPLIT_BNB_SHARE), ("ladder", math.inf))
        raw = _long(problem, limits, time.monotonic(), phases)
    elif solver == "auto" and small and objective == "total":
        raw = _small(problem, limits)
    elif solver == "auto" and small:
        # makespan: the branch and bound's bound is weak there (models/bnb.md); CP-SAT alone
        raw = _run("cpsat", problem, limits)
        raw.solver = "auto(cpsat)"
    elif solver == "auto" and objective == "total" and _groups(instance) <= TYPED_GROUPS:
        # few job types, many copies: HiGHS's aggregated model (models/time-indexed.md §9.4),
        # with the time-block column generation's bound beside it (§9.6, §9.8)
        raw = _typed(problem, limits)
    elif solver == "auto" and _takes_ladder(instance, objective, threads):
        # mixed instances beyond the small path: the local search's incumbent, the ladder's bound
        # (the shares are read here, not at import, so that a patched constant holds)
        phases = (("ils", LADDER_ILS_SHARE), ("ladder", math.inf))
        raw = _long(problem, limits, time.monotonic(), phases)
    elif (solver == "auto" and n <= RACE_N) or solver == "race":
        # medium instances (and solver="race", round 1's auto): HiGHS races CP-SAT
        raw = (
            _race(problem, limits)
            if threads >= 2
            else _run("cpsat", problem, replace(limits, threads=1))
        )
    elif solver == "auto" and objective == "total" and threads >= 2 and LADDER_N < n <= ILS_N:
        # larger mixed instances: the local search's incumbent, then CP-SAT with its bound workers
        raw = _long(
            problem, limits, time.monotonic(), (("ils", LADDER_ILS_SHARE), ("cpsat", math.inf))
        )
    elif solver == "auto":
        # larger instances: CP-SAT, with two bound-moving full workers when given 2 threads
        raw = _run("cpsat", problem, replace(limits, bound_focus=True))
        raw.solver = "auto(cpsat)"
    else:
        raw = _run(solver, problem, limits)
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
    res = finish(
        instance,
        objective,
        starts,
        raw.bound,
        seconds=time.monotonic() - t0,
        solver=raw.solver,
        solver_version=raw.solver_version,
        native_status=raw.native_status,
        interrupted=raw.interrupted,
        stats=dict(raw.stats, heuristic_ub=ub, incumbent_from=source),
    )
    say(
        f"{res.status.value}: objective={res.objective} bound={res.bound} "
        f"({res.seconds:.2f}s, {res.solver})"
    )
    return res
