"""The dedicated branch and bound for small instances (``models/bnb.md``): the backend
:class:`BranchAndBound` and its ladder of thresholds (§8).

The package: :mod:`.search` — the search in Python (``_Search``, the reference), its
constants and :class:`Split` (the one split configuration); :mod:`.kernel` — the same
search compiled with Numba (the ``fast`` extra); :mod:`.compiled` — running the kernel
(one thread, or the tree split between two); :mod:`.split` — the Python search's tree split
between two processes.  ``tests/test_exact_bnb_compiled.py`` checks the two searches node
for node.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...errors import SolverError
from ..backend import NO_HOOKS, Hooks, Limits, Problem
from ..common import RawResult, root_lower_bound, status_of, value_of
from .search import (
    _CHECK_EVERY,
    COMPILED_MIN_N,
    MEMO_LIMIT,
    SPLIT,
    Split,
    _Search,
    _Stopped,
    bnb_version,
    uses_compiled,
)

__all__ = [
    "COMPILED_MIN_N",
    "MEMO_LIMIT",
    "SPLIT",
    "BranchAndBound",
    "Split",
    "bnb_version",
    "uses_compiled",
]


#: the ladder (``BranchAndBound(ladder=True)``, ``models/bnb.md`` §8): the first rung lies this
#: share of the way from the proven bound to the incumbent, …
LADDER_FIRST = 0.03
#: … each later one where the search is predicted to take this many times the last rung's
#: time (the time grows about exponentially with the rung: fitted on the last two rungs), …
LADDER_GROWTH = 4.0
#: … and at most this share of the time left
LADDER_FIT = 0.6


def _next_rung(lower: int, best: int, rungs: list[tuple[int, float]], left: float) -> int:
    """The next threshold of the ladder: above ``lower`` (proven), at most ``best``; from the
    rungs climbed so far, ``(threshold, seconds)``, where the search is predicted to take
    ``LADDER_GROWTH`` times the last one's time, or ``LADDER_FIT`` of the time ``left``."""
    gap = best - lower
    timed = [(v, sec) for v, sec in rungs if sec >= 0.05]
    if len(timed) >= 2 and timed[-1][1] > timed[-2][1] and timed[-1][0] > timed[-2][0]:
        (v1, s1), (v2, s2) = timed[-2:]
        rate = math.log(s2 / s1) / (v2 - v1)  # log-seconds per unit of threshold
        target = min(LADDER_GROWTH * s2, LADDER_FIT * left)
        step = math.log(max(target, 1e-3) / s2) / rate
        step += lower - v2  # from the fitted rung's threshold to the proven bound
    elif rungs:  # the rungs are quick: double the last step (1 after the first rung)
        step = 2 * (rungs[-1][0] - rungs[-2][0] if len(rungs) > 1 else 1)
    else:
        step = LADDER_FIRST * gap
    return int(min(best, lower + max(1, math.floor(step))))


@dataclass(frozen=True)
class BranchAndBound:
    """The branch and bound (see module doc): in Python, or compiled with Numba
    (``compiled``, :mod:`kvopt.exact.bnb.compiled`: the same tree); one core (HiGHS for the root
    LP's duals when ``lagrange``; without them, or if that LP fails, the combinatorial
    bounds alone).

    Reads the problem (windows, warm start, ``ub``), only ``time_limit`` of
    the limits, and all three hooks: ``stop``, ``monitor`` (called once, with
    the final incumbent and bound) and ``outside()``, the value of the best
    schedule a racing solver holds; the search then looks only for better
    ones, and when it finishes that value is proven optimal (the schedule is
    the other's).  ``node_limit`` stops the search after that many nodes.
    ``bound`` is the optimum when the search finished.  With ``limits.threads ≥ 2``
    (and ``split``) the tree is split: the compiled search's between two threads
    (:func:`kvopt.exact.bnb.compiled.run_compiled`), the Python search's between this process
    and a forked one (:mod:`kvopt.exact.bnb.split`); ``node_limit`` then holds in each.
    """

    name: ClassVar[str] = "bnb"
    #: the search, its dominance rules and the compiled kernel know nothing of the batch cap
    #: (SPEC §10.1): a capped instance is refused (kvopt.exact.portfolio.cappedrows)
    batch_cap: ClassVar[bool] = False

    node_limit: int | None = None
    #: price the rows with the root LP's duals (total completion; ``models/bnb.md`` §3)
    lagrange: bool = True
    #: with ``threads ≥ 2``, split the tree between two threads (compiled) or between this
    #: process and a forked one (Python, :mod:`kvopt.exact.bnb.split`)
    split: bool = True
    #: run the search compiled (:mod:`kvopt.exact.bnb.compiled`, the ``fast`` extra) when Numba is
    #: installed, the objective is total completion with the Lagrangian bound and the
    #: instance has at least ``COMPILED_MIN_N`` jobs; the same tree, about 30 times faster
    compiled: bool = True
    #: compiled only: instead of one search with the incumbent as its threshold, climb a
    #: ladder of thresholds from the root bound up (``models/bnb.md`` §8): each rung searched
    #: to its end proves its threshold a lower bound; the last rung, the incumbent's value,
    #: proves it optimal.  For the bound, when the search cannot finish in time
    ladder: bool = False
    #: how the tree is split with ``threads ≥ 2`` (:class:`Split`)
    splitting: Split = SPLIT
    #: the compiled search from this many jobs on (:func:`uses_compiled`)
    compiled_min_n: int = COMPILED_MIN_N
    #: states remembered at most (then the memo starts afresh)
    memo_limit: int = MEMO_LIMIT

    def solve(self, problem: Problem, limits: Limits, hooks: Hooks = NO_HOOKS) -> RawResult:
        t0 = time.monotonic()
        inst, objective, warm, ub = problem.instance, problem.objective, problem.warm, problem.ub
        if warm is not None:
            ub_val = value_of(inst, warm, objective)
            ub = ub_val if ub is None else min(ub, ub_val)
        if ub is None:
            ub = 10**18
        # prune at ``>= best``: start one above the incumbent so that it can be proven optimal
        search = _Search(
            inst,
            objective,
            problem.lo,
            problem.hi,
            ub + 1,
            None,
            t0 + limits.time_limit,
            hooks.stop,
            self.node_limit,
            hooks.outside,
        )
        from ..bounds.relax import lp_duals
        from . import split as bnbsplit

        if self.lagrange and objective == "total" and inst.n >= 2:
            if problem.duals is not None:  # the clique LP's (models/cliques.md §14)
                search.set_duals(*problem.duals)
            else:
                try:
                    ym, yc = lp_duals(
                        inst, problem.lo, problem.hi, max(0.05, 0.2 * limits.time_limit)
                    )
                    search.set_duals(ym, yc)
                except SolverError:
                    pass  # no duals: the combinatorial bound alone
        root = search.root_bound()
        done = interrupted = False
        search.memo_limit = self.memo_limit
        split = self.split and limits.threads >= 2 and inst.n >= self.splitting.python_min_n
        fast = self.compiled and search.lag and uses_compiled(inst.n, self.compiled_min_n)
        threads = limits.threads if self.split else 1
        climb = _Climb(int(root), value_of(inst, warm, objective) if warm is not None else ub)
        laddered = fast and self.ladder and warm is not None
        try:
            if laddered:
                done = climb.run(search, problem, threads, hooks, self)
                if climb.found is not None:
                    search = climb.found
            elif fast:
                from . import compiled as bnbfast

                done = bnbfast.run_compiled(
                    search, self.memo_limit, _CHECK_EVERY, threads=threads, split=self.splitting
                )
            elif split and bnbsplit.can_split():
                done = bnbsplit.search_split(
                    search, hooks.stop, hooks.outside, self.splitting.python_depth
                )
            else:
                search.run()
                done = True
        except _Stopped:
            pass
        except KeyboardInterrupt:  # reported like the other backends: what was found so far
            interrupted = True
            if climb.found is not None:
                search = climb.found
        except RecursionError:  # pragma: no cover - depth is n, far below the limit
            pass
        starts = None
        if search.best_starts is not None:
            starts = np.asarray(search.best_starts, dtype=np.int64)
        elif warm is not None:
            starts = np.asarray(warm, dtype=np.int64)
        if done:
            # no schedule of value < search.best exists (each pruned subtree was shown not to
            # hold one, against a threshold that only decreased); search.best is attained by
            # our incumbent, or by the racing solver's (outside) schedule, or is ub + 1 when
            # no schedule of value <= ub is in the windows (impossible for a valid ub)
            bound = float(min(search.best, ub + 1))
            native = "optimal" if search.best_starts is not None else "exhausted"
            if laddered and climb.found is None:  # the ladder reached the warm start's value
                bound, native = float(climb.ub), "optimal"
        else:
            bound = float(max(root, root_lower_bound(inst, objective), climb.lower))
            if search.task_lower is not None:
                bound = max(bound, float(min(search.best, ub + 1, search.task_lower)))
            native = "stopped"
        if hooks.monitor is not None and starts is not None:
            hooks.monitor(value_of(inst, starts, objective), bound)
        return RawResult(
            starts=starts,
            bound=bound,
            native_status=native,
            solver="bnb-ladder" if climb.rungs else "bnb",
            status=status_of(starts, proven=done),
            solver_version=bnb_version(),
            interrupted=interrupted,
            stats={
                "nodes": climb.nodes if climb.rungs else search.nodes,
                "memo": getattr(search, "memo_keys", 0) if fast else len(search.memo),
                "compiled": fast,
                "seconds": time.monotonic() - t0,
                **({"split": search.split_stats} if search.split_stats else {}),
                **({"ladder": climb.rungs} if climb.rungs else {}),
            },
        )


class _Climb:
    """The ladder of ``BranchAndBound(ladder=True)`` (``models/bnb.md`` §8): compiled searches
    with thresholds ``v`` rising from the root bound to the incumbent's value ``ub``.  A search
    with threshold ``v`` that ends without a schedule proves that none of value below ``v``
    lies in the windows (every rule keeps some optimal schedule unless its value is
    ``≥ v``), so ``lower = v``; one that finds a schedule has ``v > Opt`` and, ended, proves
    its best optimal.  ``lower``, ``found`` (the search that found a schedule) and ``rungs``
    (``[threshold, seconds, finished]``) hold what was climbed, also after Ctrl-C."""

    def __init__(self, root: int, ub: int):
        self.lower = root
        self.ub = ub
        self.found: _Search | None = None
        self.rungs: list[list] = []
        self.nodes = 0

    def run(
        self, first: _Search, problem: Problem, threads: int, hooks: Hooks, bb: BranchAndBound
    ) -> bool:
        """Climb until the time, the stop event or the incumbent ends it; ``True`` when a rung
        proved a schedule optimal (the incumbent's value reached, or a schedule found below a
        rung and the search ended)."""
        from . import compiled as bnbfast

        inst = problem.instance
        self.lower = max(self.lower, root_lower_bound(inst, "total"))
        done: list[tuple[int, float]] = []
        while self.lower < self.ub:
            left = first.deadline - time.monotonic()
            if left < 0.05 or (hooks.stop is not None and hooks.stop.is_set()):
                return False
            v = _next_rung(self.lower, self.ub, done, left)
            s = _Search(
                inst,
                "total",
                problem.lo,
                problem.hi,
                v,
                None,
                first.deadline,
                hooks.stop,
                first.node_limit,
                None,
            )
            s.set_duals(first.ym, first.yc, first.cliques)
            t = time.monotonic()
            rung = [v, 0.0, False]
            self.rungs.append(rung)
            try:
                ended = bnbfast.run_compiled(
                    s, bb.memo_limit, _CHECK_EVERY, threads=threads, split=bb.splitting
                )
            finally:
                rung[1] = round(time.monotonic() - t, 3)
                self.nodes += s.nodes
                if s.best_starts is not None:
                    self.found = s
            if s.best_starts is not None:  # a schedule below v: v > Opt
                return ended
            if not ended:
                if s.task_lower is not None and math.isfinite(s.task_lower):
                    self.lower = max(self.lower, min(v, int(s.task_lower)))
                return False
            rung[2] = True
            self.lower = v
            done.append((v, rung[1]))
        return True
