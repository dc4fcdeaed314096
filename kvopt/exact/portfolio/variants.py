"""``auto``'s own backends, beside those of :data:`kvopt.exact.registry.BACKENDS` (not
``solver=`` choices): the branch and bound climbing its ladder of thresholds
(``models/bnb.md`` §8), the iterated local search (§9), the time-block column
generation's bound (``models/time-indexed.md`` §9.6, §9.8) and HiGHS on the plain
aggregated model, without the rounded rows (``highs-plain``, §10).  Each answers the backend
protocol of :mod:`kvopt.exact.backend`, so that a route's phase names it like any other."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from ...errors import SolverError
from ..backend import NO_HOOKS, Backend, Hooks, Limits, Problem
from ..backends.events import CpSatEvents
from ..backends.highs import Highs
from ..bnb import BranchAndBound
from ..bounds.cliques import DEFAULT_KS
from ..common import RawResult, SolveStatus, value_of, within_cap
from ..heuristic import LocalSearchInterrupted, improve_starts

#: the version string of the block bound in results
BLOCKS_VERSION = "kvopt-blocks 1"


@dataclass(frozen=True)
class LocalSearch:
    """A phase that improves the incumbent and proves nothing: the iterated local search of
    :func:`~kvopt.exact.heuristic.improve_starts` from the problem's warm start, for the time
    limit (its schedule is checked with every other one, its bound is ``None``).  It reads
    neither the windows nor the threads."""

    name: ClassVar[str] = "ils"
    #: its serial placement respects the batch cap (kvopt.exact.heuristic)
    batch_cap: ClassVar[bool] = True

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
            status=SolveStatus.FEASIBLE,
            interrupted=interrupted,
            stats={
                "seconds": time.monotonic() - t0,
                "from": int(before),
                "to": int(value_of(inst, starts, objective)),
            },
        )


@dataclass(frozen=True)
class BlockBound:
    """The time-block column generation's lower bound (:func:`kvopt.exact.bounds.blocks.block_bound`,
    total completion) over the problem's windows, from its warm start and ``ub``, with
    blocks of ``share`` of the largest response (half: every pricing round finished on the
    typed benchmark instances; the whole response did not on two of four,
    ``models/time-indexed.md`` §9.8).  No schedule; ``monitor(None, bound)`` on every
    bound it meets; ``stop`` ends it within about 0.1 s.  A failed LP or master gives no
    bound (status ``unknown``, native ``failed: …``); Ctrl-C an interrupted result."""

    name: ClassVar[str] = "blocks"

    share: float = 0.5

    def solve(self, problem: Problem, limits: Limits, hooks: Hooks = NO_HOOKS) -> RawResult:
        from ..bounds.blocks import block_bound, block_length

        inst = problem.instance
        monitor = hooks.monitor
        on_bound = None if monitor is None else (lambda value: monitor(None, value))
        try:
            bound, stats = block_bound(
                inst,
                problem.ub,
                block_length(inst, self.share),
                limits.time_limit,
                starts=problem.warm,
                windows=(problem.lo, problem.hi),
                stop=hooks.stop,
                on_bound=on_bound,
            )
        except SolverError as e:
            return self._result(-math.inf, {}, native=f"failed: {e}")
        except KeyboardInterrupt:
            return self._result(-math.inf, {}, native="interrupted", interrupted=True)
        return self._result(bound, stats)

    @staticmethod
    def _result(
        bound: float, stats: dict, *, native: str | None = None, interrupted: bool = False
    ) -> RawResult:
        """The bound as a result without a schedule (its statistics JSON-safe: ``lp`` is NaN
        when no restricted master was solved, and kvopt writes no NaN)."""
        stats = {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in stats.items()
            if k != "trace"
        }
        if native is None:
            native = "converged" if stats.get("converged") else "stopped"
        return RawResult(
            starts=None,
            bound=bound if math.isfinite(bound) else None,
            native_status=native,
            solver="blocks",
            solver_version=BLOCKS_VERSION,
            status=SolveStatus.UNKNOWN,
            interrupted=interrupted,
            stats=stats,
        )


@dataclass(frozen=True)
class CliqueWindows:
    """``inner`` over the windows cut by the prices of the LP with the completion cliques
    (``models/cliques.md`` §3; total completion): the LP (with the rows of ``ks``, at most
    ``share`` of the limit, cached per instance for the phases after it) and its
    reduced-cost fixing for the problem's ``ub`` (``Prices.windows``: every schedule of value
    ``≤ ub`` keeps its starts), then ``inner`` for what is left, given the prices' duals
    (``Problem.duals``: the branch and bound bounds every node with them, ``models/cliques.md``
    §14); the bound reported is at least the prices'.  Makespan, no ``ub``, or no prices (too
    large, not solved in time): ``inner`` on the windows as they are."""

    inner: Backend
    ks: tuple[int, ...] = DEFAULT_KS
    share: float = 0.5
    label: str = "clique-windows"

    @property
    def name(self) -> str:
        return self.label

    @property
    def batch_cap(self) -> bool:
        """Whether ``inner`` models the batch cap (the prices come from the LP without the
        count rows, a relaxation: valid under a cap)."""
        return bool(getattr(self.inner, "batch_cap", False))

    def solve(self, problem: Problem, limits: Limits, hooks: Hooks = NO_HOOKS) -> RawResult:
        from ..bounds.lagrange import priced_windows

        if problem.objective != "total" or problem.ub is None:
            return self.inner.solve(problem, limits, hooks)
        prices, rest, lo, hi = priced_windows(problem, limits, self.share, self.ks)
        if prices is None:
            return self.inner.solve(problem, rest, hooks)
        # the inner search prices with the same duals (the branch and bound's node bound:
        # models/cliques.md §14)
        r = self.inner.solve(replace(problem, lo=lo, hi=hi, duals=prices.duals), rest, hooks)
        stats = dict(
            r.stats,
            cliques=prices.bound,
            cliques_lp=round(prices.lp, 3),
            cliques_seconds=round(prices.seconds, 3),
            window_starts=int((np.asarray(hi) - np.asarray(lo) + 1).sum()),
        )
        bound = prices.bound if r.bound is None else max(r.bound, prices.bound)
        return replace(r, bound=bound, stats=stats)


@dataclass(frozen=True)
class WithoutCap:
    """``inner`` on the relaxation without the batch cap (SPEC §10.1; ``models/time-indexed.md``
    §13): for a backend that does not model the cap (the branch and bound).  Every capped
    schedule is an uncapped one, so ``inner``'s proven bound is a lower bound under the cap
    too; its schedule is kept only when it respects the cap (:func:`~kvopt.exact.common.within_cap`),
    else the problem's warm start (capped) stands in, so that a bound meeting the warm start's
    value ends the plan as a proof.  A schedule kept and proven optimal without the cap is
    optimal with it.  Races see its bounds only (``monitor(None, bound)``): its incumbents may
    break the cap.  Without a cap: ``inner`` as it is."""

    inner: Backend
    label: str = "without-cap"
    #: safe on a capped instance: it never returns a schedule that breaks the cap
    batch_cap: ClassVar[bool] = True

    @property
    def name(self) -> str:
        return self.label

    def solve(self, problem: Problem, limits: Limits, hooks: Hooks = NO_HOOKS) -> RawResult:
        inst = problem.instance
        if inst.max_batch is None:
            return self.inner.solve(problem, limits, hooks)
        monitor = hooks.monitor
        quiet = replace(
            hooks, monitor=None if monitor is None else (lambda _value, bound: monitor(None, bound))
        )
        free = replace(problem, instance=inst.replace(max_batch=None))
        r = self.inner.solve(free, limits, quiet)
        keep = r.starts is not None and within_cap(inst, r.starts)
        starts = r.starts if keep else problem.warm
        if keep:
            status = r.status
        elif r.infeasible:  # no uncapped schedule in the windows: none capped either
            status = SolveStatus.INFEASIBLE
        else:
            status = SolveStatus.FEASIBLE if starts is not None else SolveStatus.UNKNOWN
        return replace(
            r,
            starts=None if starts is None else np.asarray(starts, dtype=np.int64),
            status=status,
            solver=self.label,
            native_status=f"{r.native_status} (without the cap; "
            + ("its schedule keeps it)" if keep else "its schedule breaks it: dropped)"),
            stats=dict(r.stats, schedule_kept=bool(keep)),
        )


#: the share of its phase the LP with the cliques may take in ``events-cliques``: from about
#: 45 jobs on, by column generation, it is still rising when CP-SAT would start, and CP-SAT
#: adds little to its bound there (``models/cliques.md`` §13: 0.5 → 0.8 raised six bounds at
#: n = 45–59 by 2–5 %, and changed nothing where the LP converges sooner)
CLIQUES_SHARE = 0.8

#: name → ``auto``'s own backends (looked up after the portfolio's and before the registry's)
VARIANTS = {
    "ladder": BranchAndBound(ladder=True),
    "ils": LocalSearch(),
    "blocks": BlockBound(),
    # the typed rows' HiGHS: the aggregated model without the rounded rows of §4.2, which
    # cost it bound on the typed records (models/time-indexed.md §10)
    "highs-plain": Highs(cuts=(), label="highs-plain"),
    # the event model after the time-indexed LP's prices (models/orders.md §10)
    "events-lagrange": CpSatEvents(lagrange=True),
    # … with the completion cliques in the LP (models/cliques.md: responses as long as memory)
    "events-cliques": CpSatEvents(lagrange=True, cliques=DEFAULT_KS, share=CLIQUES_SHARE),
    # the branch and bound over the windows cut by those prices (route 'cliques')
    "bnb-cliques": CliqueWindows(BranchAndBound(), label="bnb-cliques"),
    # … climbing proved thresholds from the root (the last phase of the routes 'cliques',
    # 'cliques-ils' and 'cliques-arrivals-bnb': a bound where the search above did not
    # finish; models/cliques.md §14-15)
    "bnb-cliques-ladder": CliqueWindows(BranchAndBound(ladder=True), label="bnb-cliques-ladder"),
    # the branch and bound on the relaxation without the batch cap: its bound, and its
    # schedule when that keeps the cap (the routes of kvopt.exact.portfolio.cappedrows)
    "bnb-without-cap": WithoutCap(BranchAndBound(), label="bnb-without-cap"),
    # … climbing its ladder of proved thresholds (their bounds hold under the cap)
    "ladder-without-cap": WithoutCap(BranchAndBound(ladder=True), label="ladder-without-cap"),
}
