"""A dedicated branch and bound for small instances, written out in ``models/bnb.md``.

Jobs are placed in order of their start (ties by job index): a node fixes the
starts of a set ``P`` of jobs, the last of which started at round ``t``; every
job still to place starts at ``t`` or later, so rounds before ``t`` are final.
A child places one more job ``j`` at a round ``t' ≥ t`` (``t' > t`` or
``j`` > the last placed index) where its staircase fits on top of ``P``.
Every kill-free schedule is reached exactly once this way.

Pruning (each rule is proved in ``models/bnb.md``):

* bound: ``Σ_P C + Σ_k max(L_(k), T_(k))`` with ``L_j`` = the earliest
  completion of ``j`` on top of ``P`` and ``T_(k)`` the first round by which
  the memory left free by ``P`` holds the ``k`` smallest areas (total
  completion, used only without the Lagrangian bound), or the analogous
  makespan bound;
* total completion: a Lagrangian bound, the root LP's row duals ``y ≤ 0``
  pricing the memory and "one job above M/2" rows (:func:`~kvopt.exact.bounds.relax.lp_duals`): the
  placed cost, the priced slack of rounds from the earliest start left on and
  each job left's cheapest reduced cost from its earliest start on; a child is
  generated only if a lower estimate of its own Lagrangian bound (its reduced
  cost, the others' starts pushed to its start) stays below the incumbent;
* identical jobs (same prompt, response, arrival) are placed in index order;
* total completion only: a job that could start earlier with every other job
  fixed is never part of an optimal schedule ("active" rule); a job (placed,
  or still to place) that fits now at an earlier start ``p`` must be blocked
  by a job starting by ``p``'s last round, so children start no later, and a
  job left that fits wholly before ``t`` kills the node;
* a memo of states (jobs left, earliest start left ``tmin``, the memory profile of ``P``
  from ``tmin`` on): a state reached again at no lower cost, from no later ``(t, last)``,
  is dropped.

:class:`BranchAndBound` stops at a time or node limit; it then returns its incumbent
with the root bound (never a claim of optimality).  With Numba installed (the ``fast``
extra) it runs the same search compiled (:mod:`kvopt.exact.bnb.compiled`, ``models/bnb.md`` §7).
"""

from __future__ import annotations

import functools
import heapq
import importlib.util
import math
import time
from dataclasses import dataclass
from itertools import accumulate
from operator import add as _add
from operator import sub as _sub

from ...instance import Instance
from ..bounds.lagrange import clique_terms
from ..common import first_fit

#: states remembered at most (then the memo starts afresh)
MEMO_LIMIT = 1_000_000

#: how often (in nodes) the clock and the stop flag are looked at
_CHECK_EVERY = 256


#: the compiled search (``uses_compiled``) from this many jobs on: below, the Python search
#: takes milliseconds, less than loading the compiled one (about 0.7 s per process)
COMPILED_MIN_N = 10


#: the compiled search keeps its placed set in one int64: at most this many jobs
MAX_N = 62


@functools.cache
def numba_installed() -> bool:
    """Is Numba installed (the ``fast`` extra)?  Asked without importing it: ``solve()``
    routes with this before anything is computed, and importing Numba takes a second or
    more under load (a Ctrl-C landing in that import had nothing to report; the import
    now happens in the branch and bound, where Ctrl-C is reported)."""
    return importlib.util.find_spec("numba") is not None


def uses_compiled(n: int, min_n: int = COMPILED_MIN_N) -> bool:
    """Does the branch and bound run compiled on ``n`` jobs (Numba installed, ``n`` from
    ``min_n`` (``COMPILED_MIN_N``) to ``MAX_N``)?  Total completion with duals only."""
    return min_n <= n <= MAX_N and numba_installed()


@dataclass(frozen=True)
class Split:
    """How the tree is split with ``threads ≥ 2``: the one split configuration of both
    searches.  The compiled search (:func:`kvopt.exact.bnb.compiled.run_compiled`) splits between
    two threads that claim the tasks one by one, the subtrees of the nodes with
    ``compiled_depth`` jobs placed, from ``compiled_min_n`` jobs on (``models/bnb.md`` §7);
    the Python search (:mod:`kvopt.exact.bnb.split`) between this process and a forked one,
    at ``python_depth``, from ``python_min_n`` jobs on (a fork costs milliseconds, so it
    pays from smaller trees; deeper cuts even out the two halves, ``models/bnb.md`` §4)."""

    compiled_depth: int = 2
    compiled_min_n: int = 12
    python_depth: int = 3
    python_min_n: int = 6


#: the default split
SPLIT = Split()


#: the pruning rules of the search (each proved in ``models/bnb.md``), by ID.  Both searches
#: tag the code of each rule with ``[rule <ID>]`` in a comment: the Python one here
#: (``_Search.dfs``), the compiled one in :mod:`kvopt.exact.bnb.kernel`;
#: ``tests/test_exact_bnb_compiled.py`` checks that they name the same set (the compiled search
#: runs total completion with the Lagrangian bound only: not the rules of ``PYTHON_ONLY``)
RULES = {
    "leaf-active": "a complete schedule counts only if no placed job could start earlier",
    "lagrange-node": "the node's Lagrangian bound reaches the incumbent",
    "window": "a job left cannot start in its window on top of the placed jobs",
    "combinatorial": "the combinatorial (or makespan) bound reaches the incumbent",
    "active-left": "a job left fits wholly before t (prune), else it bounds the children's starts",
    "memo": "a state reached before at no higher cost, from no later (t, last)",
    "active-placed": "a placed job that could move earlier bounds the children's starts",
    "identical": "identical jobs (prompt, response, arrival) are placed in index order",
    "child-quick": "a child's quick bound, or its Lagrangian estimate, reaches the incumbent",
}
#: the rules only the Python search has (without duals, or makespan)
PYTHON_ONLY = frozenset({"combinatorial"})


class _Stopped(Exception):
    pass


def bnb_version() -> str:
    return "kvopt-bnb 1"


class _Search:
    """The depth-first search (see the module doc); plain Python lists for speed."""

    #: states remembered at most (``BranchAndBound.memo_limit`` sets it per search)
    memo_limit: int = MEMO_LIMIT

    def __init__(
        self, inst: Instance, objective: str, lo, hi, ub: int, warm, deadline, stop, nodes, outside
    ):
        n, M = inst.n, inst.memory
        self.n, self.M = n, M
        self.total = objective == "total"
        self.s = [int(x) for x in inst.prompts]
        self.o = [int(x) for x in inst.responses]
        self.a = [max(int(x), int(y)) for x, y in zip(inst.arrivals, lo)]
        self.hi = [int(x) for x in hi]
        self.area = [int(x) for x in inst.areas]
        H = max(h + o for h, o in zip(self.hi, self.o)) + 2
        self.H = H
        # the profile: gm[τ] = mem[τ] + τ, j fits at t iff max(gm[t : t + o_j]) <= M - s_j - 1 + t
        self.gm = list(range(H + 1))
        self.stair = [[s + 1 + u for u in range(o)] for s, o in zip(self.s, self.o)]
        self.start = [-1] * n
        self.best = int(ub)  # value of the incumbent (prune at >= best)
        self.best_starts = None if warm is None else [int(x) for x in warm]
        pred = [-1] * n
        seen: dict[tuple[int, int, int], int] = {}
        for j in range(n):
            key = (self.s[j], self.o[j], int(inst.arrivals[j]))
            if key in seen:
                pred[j] = seen[key]
            seen[key] = j
        self.pred = pred
        self.memo: dict = {}
        self.nodes = 0
        self.deadline = deadline
        self.stop = stop
        self.node_limit = nodes
        self.outside = outside  # value of a schedule found elsewhere (racing solver), or None
        self.full = (1 << n) - 1
        # heavy tails: rounds u >= u0 of job j hold more than M/2 (no two overlap)
        self.u0 = [max(0, M // 2 - s) for s in self.s]
        self.tail_cap = M - M // 2 - 1  # a tail fits only where the others hold <= this
        self.lag = False  # the Lagrangian bound (set_duals)
        self.cliques: tuple = ()  # the clique rows priced (set_duals)
        self.lims = [M - s - 1 for s in self.s]  # j fits at t iff max(gm[t:t + o_j]) <= lim + t
        self.plain = type(self).fits_at is _Search.fits_at  # a child at est_j fits
        self.split_stats: dict | None = None  # set by kvopt.exact.bnb.split
        #: set by the compiled split search when it stops: no schedule is below it
        self.task_lower: float | None = None

    def set_duals(self, ym: list[float], yc: list[float], cliques=()) -> None:
        """Price the memory rows with ``ym[τ] ≤ 0`` and the "one job above M/2" rows with
        ``yc[τ] ≤ 0`` (dyadic values: every sum below is exact in floating point), and the
        rows ``Σ x ≤ k`` of ``cliques`` (``(k, μ, jobs, starts)``, ``μ ≤ 0`` dyadic; the rows of
        Lemma C1, ``models/cliques.md`` §14).  A row is priced like a round's memory row at
        the latest start ``τ'`` among its nodes in the windows: its term ``μ (k − placed
        nodes)`` sits in ``dslack[τ']``, so it is dropped with the rounds before the earliest
        start left (every node of it is then placed or out of reach, and its slack ≥ 0;
        :func:`~kvopt.exact.bounds.lagrange.clique_terms`)."""
        H, M, n = self.H, self.M, self.n
        ym = list(ym) + [0.0] * (H + 1 - len(ym))
        yc = list(yc) + [0.0] * (H + 1 - len(yc))
        self.ym, self.yc, self.cliques = ym, yc, tuple(cliques)
        crow, extra = clique_terms(self.cliques, self.a, self.hi, self.start, H)
        heavy = [0] * (H + 1)
        for i in range(n):
            if self.start[i] >= 0:
                for u in range(self.o[i]):
                    if 2 * (self.s[i] + u + 1) > M:
                        heavy[self.start[i] + u] += 1
        mem = self.mem
        self.dslack = [
            ym[k] * (M - mem[k]) + yc[k] * (1 - heavy[k]) + crow[k] for k in range(H + 1)
        ]
        # bsuf[τ] = Σ_{τ' ≥ τ} dslack[τ'], valid while no job is added in rounds ≥ τ
        self.bsuf = list(accumulate(reversed(self.dslack), initial=0.0))[::-1]
        inf = float("inf")
        self.rc = []
        self.sufmin = []
        self.dd = []  # dd[j][t]: the change of dslack over rounds t … t + o_j − 1 (j at t)
        for j in range(n):
            s, o = self.s[j], self.o[j]
            r = [inf] * (H + 2)
            dj: list[list[float]] = [[] for _ in range(H + 1)]
            for t in range(self.a[j], self.hi[j] + 1):
                v = float(t + o)
                delta = []
                for u in range(o):
                    w = s + u + 1
                    x = ym[t + u] * w + (yc[t + u] if 2 * w > M else 0.0)
                    delta.append(x)
                e = extra.get((j, t))
                if e:
                    for u, mu in e.items():
                        delta[u] += mu
                for x in delta:
                    v -= x
                r[t] = v
                dj[t] = delta
            self.dd.append(dj)
            suf = [inf] * (H + 2)
            for t in range(H, -1, -1):
                suf[t] = min(r[t], suf[t + 1])
            self.rc.append(r)
            self.sufmin.append(suf)
        self.lag = True

    # --- memory helpers -------------------------------------------------------------
    @property
    def mem(self) -> list[int]:
        """The memory the placed jobs hold in each round."""
        return [g - tau for tau, g in enumerate(self.gm)]

    @staticmethod
    def dominates(ta: int, la: int, t: int, last: int, tmin: int) -> bool:
        """Every completion of a node ``(t, last)`` is one of a node ``(ta, la)`` with the same
        jobs left, the same earliest start left ``tmin`` and the same profile from ``tmin``
        on (``models/bnb.md`` §4, rule 3): its jobs start at ``≥ tmin``, so only a start at
        ``ta = tmin`` could break the tie rule there."""
        return ta < tmin or (ta == t and la <= last)

    def memo_drops(
        self, placed: int, tmin: int, prof: list[int], t: int, last: int, cost: int
    ) -> bool:
        """Whether a state searched before, at no higher cost, holds every completion of this
        node; if not, this node is remembered."""
        key = (placed, tmin, tuple(prof))
        memo = self.memo
        seen = memo.get(key)
        if seen is None:
            if len(memo) >= self.memo_limit:
                memo.clear()  # forgetting states only weakens the pruning
            memo[key] = [(t, last, cost)]
            return False
        dominates = self.dominates
        for ta, la, ca in seen:
            if ca <= cost and dominates(ta, la, t, last, tmin):
                return True
        seen.append((t, last, cost))
        return False

    def fits(self, j: int, t: int) -> bool:
        """Does ``j`` fit at ``t`` on top of the placed jobs? (``mem[τ] + s_j + 1 + τ − t ≤ M``)"""
        return max(self.gm[t : t + self.o[j]]) <= self.M - self.s[j] - 1 + t

    def add(self, j: int, t: int, sign: int) -> None:
        e = t + self.o[j]
        st = self.stair[j]
        op, inv = (_add, _sub) if sign > 0 else (_sub, _add)
        self.gm[t:e] = map(op, self.gm[t:e], st)
        if self.lag:
            self.dslack[t:e] = map(inv, self.dslack[t:e], self.dd[j][t])

    def _fits_moved(self, k: int, t2: int) -> bool:
        """Does ``k`` fit at ``t2 < start_k``, its own staircase (at its start) taken away?

        Rounds before ``start_k`` hold only the others; in a round ``τ ≥ start_k`` its own
        ``s_k + 1 + τ − start_k`` leaves and the moved one needs ``s_k + 1 + τ − t2``."""
        sk, e = self.start[k], t2 + self.o[k]
        M = self.M
        a = sk if sk < e else e
        if max(self.gm[t2:a]) > M - self.s[k] - 1 + t2:
            return False
        return sk >= e or max(map(_sub, self.gm[sk:e], range(sk, e))) <= M - sk + t2

    def first_move(self, k: int, p0: int = -1) -> int:
        """The earliest start before its own where ``k`` fits, every other job fixed (-1: none);
        starts before ``p0`` are known not to fit (memory only grows). ``_fits_moved``
        inlined; a failed start jumps over the starts that fail for the same round."""
        sk, ok, gm, M = self.start[k], self.o[k], self.gm, self.M
        lim = M - self.s[k] - 1
        p = self.a[k] if self.a[k] > p0 else p0
        while p < sk:
            e = p + ok
            w = gm[p : e if e < sk else sk]
            m = max(w)
            if m > lim + p:  # as in the earliest start (models/bnb.md)
                tau = p + w.index(m) + 1
                p = m - lim if m - lim < tau else tau
            elif e <= sk:
                return p
            else:  # its own rounds: a later start keeps round argmax in its window
                m = max(map(_sub, gm[sk:e], range(sk, e)))  # the memory held
                if m <= M - sk + p:
                    return p
                p = m - M + sk
        return -1

    # --- bound ----------------------------------------------------------------------
    def earliest(self, j: int, t: int, last: int) -> int:
        """Earliest start ``≥ t`` of ``j`` on top of the placed jobs (``-1``: none in its window)."""
        t0 = max(t, self.a[j])
        if t0 == t and j < last:
            t0 = t + 1
        return first_fit(self.gm, t0, self.o[j], self.lims[j], self.hi[j])

    def tails(self, rest: list[int], t: int, est: list[int]) -> tuple[int, list[int]]:
        """SRPT bound on Σ C of the jobs with heavy tails; returns (sum, the other jobs)."""
        o, u0 = self.o, self.u0
        jobs = [(est[j] + u0[j], o[j] - u0[j]) for j in rest if u0[j] < o[j]]
        if len(jobs) < 2:
            return 0, rest
        light = [j for j in rest if u0[j] >= o[j]]
        jobs.sort()
        gm, cap, H = self.gm, self.tail_cap, self.H
        heap: list[int] = []
        total = 0
        i = 0
        tau = jobs[0][0]
        m = len(jobs)
        done = 0
        while done < m:
            while i < m and jobs[i][0] <= tau:
                heapq.heappush(heap, jobs[i][1])
                i += 1
            if not heap:
                tau = jobs[i][0]
                continue
            if tau > H or gm[tau] - tau <= cap:
                r = heapq.heappop(heap) - 1
                if r == 0:
                    total += tau + 1
                    done += 1
                else:
                    heapq.heappush(heap, r)
            tau += 1
        return total, light

    def bound(self, rest: list[int], t: int, cost: int, est: list[int]) -> int:
        """Lower bound on the best completion of this node (see module doc)."""
        if self.total:
            b1 = self._bound(rest, t, cost, est)
            if b1 >= self.best:
                return b1
            tsum, light = self.tails(rest, t, est)
            if tsum:
                b2 = self._bound(light, t, cost + tsum, est) if light else cost + tsum
                return max(b1, b2)
            return b1
        return self._bound(rest, t, cost, est)

    def _bound(self, rest: list[int], t: int, cost: int, est: list[int]) -> int:
        o, s = self.o, self.s
        L = sorted(est[j] + o[j] for j in rest)
        areas = sorted(self.area[j] for j in rest)
        gm, M, H = self.gm, self.M, self.H
        # T_(k): first T with Σ_{τ=t0}^{T-1} free(τ) ≥ the k smallest areas, where t0 is the
        # earliest start of a remaining job and free(τ) = M − mem[τ], or 0 when even the
        # smallest remaining job (s + 1) cannot run beside the placed jobs
        smin = min(s[j] for j in rest) + 1
        tau = min(est[j] for j in rest)
        cap = 0
        if self.total:
            lb = cost
            need = 0
            for k in range(len(rest)):
                need += areas[k]
                while cap < need:
                    f = M - (gm[tau] - tau if tau <= H else 0)
                    if f >= smin:
                        cap += f
                    tau += 1
                lb += L[k] if L[k] > tau else tau
            return lb
        need = sum(areas)
        while cap < need:
            f = M - (gm[tau] - tau if tau <= H else 0)
            if f >= smin:
                cap += f
            tau += 1
        return max(cost, L[-1], tau)

    # --- search ---------------------------------------------------------------------
    def check(self) -> None:
        """The clock, the stop flag, the node limit and the racing solver's value (``dfs``
        counts the nodes and calls this every ``_CHECK_EVERY`` of them)."""
        if time.monotonic() > self.deadline or (self.stop is not None and self.stop.is_set()):
            raise _Stopped
        if self.node_limit is not None and self.nodes > self.node_limit:
            raise _Stopped
        if self.outside is not None:
            v = self.outside()
            if v is not None and v < self.best:
                self.best = int(v)  # search only for schedules better than that one

    def root_bound(self) -> int:
        rest = list(range(self.n))
        est = [0] * self.n
        for j in rest:
            est[j] = self.earliest(j, 0, -1)
        b = self.bound(rest, 0, 0, est)
        if self.lag and min(est) >= 0:  # the Lagrangian value (the LP's, with its duals)
            b = max(b, math.ceil(sum(self.dslack) + sum(self.sufmin[j][est[j]] for j in rest)))
        return b

    def run(self) -> None:
        self.dfs(0, 0, -1, 0, [], list(self.a), list(self.a), list(range(self.n)), 0)

    def fits_at(self, j: int, t2: int, ends) -> bool:
        """``fits(j, t2)`` for a child (``ends`` unused: the hook of the path test)."""
        return max(self.gm[t2 : t2 + self.o[j]]) <= self.M - self.s[j] - 1 + t2

    def dfs(
        self,
        placed: int,
        t: int,
        last: int,
        cost: int,
        pending: list[int],
        past: list[int],
        pest: list[int],
        rest: list[int],
        end: int,
    ) -> None:
        """Search below a node: ``rest`` the jobs left, the placed ones hold memory before
        round ``end``; ``pending`` the placed jobs (with the first start to try) that could
        still move earlier; ``past``/``pest`` lower bounds on the earliest starts of the
        jobs left before ``t`` / on top of the placed jobs (both only grow down the tree)."""
        self.nodes += 1
        if not self.nodes % _CHECK_EVERY:
            self.check()
        o, start, total = self.o, self.start, self.total
        if placed == self.full:  # [rule leaf-active]
            if total and any(self.first_move(k, p0) >= 0 for k, p0 in pending):
                return
            if cost < self.best:
                self.best = cost
                self.best_starts = list(start)
            return
        est = [0] * self.n
        hi, lims, gm, lagged = self.hi, self.lims, self.gm, self.lag
        best = self.best
        bm1 = best - 1
        # adding jobs only adds memory: no start of j before its earliest at the parent, and
        # that start still fits unless the job just placed (at t) holds memory in its window
        free = t + o[last] if last >= 0 else self.H + 2
        todo = []  # the jobs whose start must be tested
        lag = 0.0
        t0 = self.H
        if lagged:
            sufmin = self.sufmin
        for j in rest:
            t2 = pest[j]
            if t2 <= t:
                t2 = t + 1 if j < last else t
                todo.append(j)
            elif t2 < free:
                todo.append(j)
            est[j] = t2
            if t2 < t0:
                t0 = t2
            if lagged:
                lag += sufmin[j][t2]
        if lagged:
            # rows of rounds before the earliest start left price no column of R: dropped
            # (rounds from end on hold no placed job: their sum is fixed); with these lower
            # bounds on the starts, a lower bound on the node's Lagrangian value
            dslack = self.dslack
            lag += cost + (sum(dslack[t0:end]) + self.bsuf[end] if t0 < end else self.bsuf[t0])
            if lag > bm1:  # [rule lagrange-node]
                return
        tmin = t0
        for j in reversed(todo):
            # earliest start on top of P (common.first_fit, inlined)
            t2 = est[j]
            lim = lims[j]
            oj = o[j]
            hj = hi[j]
            while t2 <= hj:
                w = gm[t2 : t2 + oj]
                m = max(w)
                if m <= lim + t2:
                    break
                # the fullest round tau stays in the window of every start up to tau, and
                # needs a start >= m - lim there
                tau = t2 + w.index(m) + 1
                t2 = m - lim if m - lim < tau else tau
            else:
                return  # some job cannot start in its window [rule window]
            if t2 > est[j]:
                if lagged:
                    lag += sufmin[j][t2] - sufmin[j][est[j]]
                    if lag > bm1:
                        return
                if est[j] == t0:
                    tmin = -1  # the minimum may have moved
                est[j] = t2
        if tmin < 0:
            tmin = min([est[j] for j in rest])
            if lagged and tmin > t0:
                lag -= sum(dslack[t0:tmin])  # the node's Lagrangian value
                if lag > bm1:
                    return
        # with the Lagrangian bound the combinatorial one prunes few more nodes (~5 %) and
        # costs more than they do (models/bnb.md, round 3): only without duals
        if not lagged and self.bound(rest, t, cost, est) >= best:  # [rule combinatorial]
            return
        # the active rule for the jobs left: a job that fits at p < t now (memory only grows)
        # is movable to p wherever it starts (at >= t) unless a job starting by p's last
        # round blocks it; past[j]: no start of j before it fitted at the parent [rule active-left]
        limit = self.H + 1  # children start before this round
        if total:
            past = list(past)
            for j in rest:
                p = past[j]
                if p >= t:
                    continue
                oj = o[j]
                lim = lims[j]
                while p < t:
                    w = gm[p : p + oj]
                    m = max(w)
                    if m <= lim + p:
                        break
                    tau = p + w.index(m) + 1
                    p = m - lim if m - lim < tau else tau
                past[j] = p
                if p < t:
                    e = p + oj  # blockers start before e
                    if e <= t:
                        return  # j fits at p whatever follows: no completion is active
                    if e < limit:
                        limit = e
        # memo: the same jobs left, the same profile from the earliest start left on, and
        # an earlier (t, last): every completion here is one there (models/bnb.md §4) [rule memo]
        if self.memo_drops(placed, tmin, gm[tmin:end], t, last, cost):
            return
        # the active rule for jobs placed earlier: decided by rounds before their last one,
        # which are final in every child starting at or after that last round [rule active-placed]
        keep_after: list[tuple[int, int]] = []
        if total:
            first_move = self.first_move
            for k, p0 in pending:
                p = first_move(k, p0)
                if p >= 0:
                    # k fits at p now; only a job starting by p's last round can block it
                    if p + o[k] < limit:
                        limit = p + o[k]
                    keep_after.append((k, p))  # checked again in the child, from p on
                # else: k cannot move now, nor once more jobs hold memory
            if limit <= t:
                return
        # children: (j, t') in order of a quick bound
        kids = []
        if lagged:
            # pre[i] = the priced slack of rounds tmin .. tmin + i - 1 (each term <= 0)
            pre = list(accumulate(dslack[tmin:limit], initial=0.0))
            info = [(est[k], sufmin[k], sufmin[k][est[k]]) for k in rest]
            rc = self.rc
        base = cost + sum([est[k] + o[k] for k in rest])
        pred, fits_at, plain = self.pred, self.fits_at, self.plain
        lq = -math.inf  # (no Lagrangian test of the child)
        for i, j in enumerate(rest):
            p = pred[j]
            if p >= 0 and not placed >> p & 1:
                continue  # identical jobs in index order [rule identical]
            ej = est[j]  # (> t below the last index: the tie rule holds)
            top = hi[j] if hi[j] < limit else limit - 1
            if not total:
                others = max((est[k] + o[k] for k in rest if k != j), default=0)
                mo = max((o[k] for k in rest if k != j), default=0)
            elif lagged:
                rj = rc[j]
                lj = lag - sufmin[j][ej]
                below, above = info[:i], info[i + 1 :]
            for t2 in range(ej, top + 1):
                if not total:
                    quick = max(cost, t2 + o[j], others, t2 + mo)
                elif lagged:
                    # the child's Lagrangian bound without its own earliest starts: the
                    # others start at >= t2 (> t2 below j), rounds < t2 are dropped
                    quick = base + t2 - ej
                    lq = lj + rj[t2] - pre[t2 - tmin]
                    e = t2 + 1
                    for ek, sk, s0 in below:
                        if ek < e:
                            quick += e - ek
                            lq += sk[e] - s0
                    for ek, sk, s0 in above:
                        if ek < t2:
                            quick += t2 - ek
                            lq += sk[t2] - s0
                else:
                    quick = base + t2 - ej
                    for k in rest:
                        if est[k] < t2 and k != j:
                            quick += t2 - est[k]
                if quick >= best:  # [rule child-quick]
                    break  # the quick bound only grows with t2
                if lq <= bm1 and (t2 == ej and plain or fits_at(j, t2, None)):
                    kids.append((quick, t2, j))
        kids.sort()
        stair = self.stair
        if lagged:
            dd = self.dd
        for quick, t2, j in kids:
            if quick >= self.best:
                break
            # placed by slices, undone by restoring them (cheaper than subtracting again)
            c = t2 + o[j]
            old_gm = gm[t2:c]
            gm[t2:c] = map(_add, old_gm, stair[j])
            if lagged:
                old_d = dslack[t2:c]
                dslack[t2:c] = map(_sub, old_d, dd[j][t2])
            start[j] = t2
            left = rest.copy()
            left.remove(j)
            cc, e = cost + c if total else max(cost, c), c if c > end else end
            self.dfs(placed | 1 << j, t2, j, cc, keep_after + [(j, -1)], past, est, left, e)
            start[j] = -1
            gm[t2:c] = old_gm
            if lagged:
                dslack[t2:c] = old_d
