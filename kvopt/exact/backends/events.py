"""The event model (``models/orders.md`` §4): CP-SAT with one start per job and the memory
checked only in each job's last round, so that its size follows ``n``, not the horizon.

Memory needs checking only in the rounds ``C_k − 1`` (``models/orders.md`` §2, the fact of
``models/bnb.md`` §2): for each ordered pair ``(i, k)`` one of three Booleans holds — ``i``
runs in ``k``'s last round (``r_ik``: ``S_i ≤ C_k − 1`` and ``C_i ≥ C_k``), ends before it
(``C_i ≤ C_k − 1``) or starts after it (``S_i ≥ C_k``) — and ``s_k + o_k + Σ_i y_ik ≤ M``
with ``y_ik ≥ s_i + C_k − S_i`` when ``r_ik`` (``i``'s memory in round ``C_k − 1``).
``2 n (n − 1)`` Booleans whatever the token lengths; start domains are intervals, so a
response of 10⁷ tokens costs what one of 10 does.

With a batch cap (SPEC §10.1) the jobs' intervals go under a cumulative of capacity ``B``,
demand 1 each, as in the time-indexed CP-SAT model
(:func:`~kvopt.exact.backends.cpsat.add_batch_cap`): exact, and its size follows ``n`` too.

Redundant constraints, each valid for every schedule (``models/orders.md`` §4): the
staircase's lower envelope in ``pieces`` fixed-size intervals under one cumulative of
capacity ``M`` (piece ``[S_i + u_p, S_i + u_{p+1})`` of demand ``s_i + u_p + 1``); the heavy
tails (``s_i + u + 1 > M/2``) in one no-overlap, as in ``models/cpsat.md``; the objective
between the cheap lower bound of SPEC §2 and the heuristic's value; identical jobs in
index order.

With ``lagrange`` (issue 46, ``models/orders.md`` §10) the time-indexed LP over the windows
is solved first (:mod:`kvopt.exact.bounds.lagrange`); its prices cut the windows to the starts
some schedule of value ``≤ UB`` can use, and the model gets the Lagrangian inequality
``K Σ C_i ≥ ⌈K base / D⌉ + Σ_i e_i`` with each ``e_i`` above the lower convex hull of job
``i``'s scaled reduced costs in ``S_i`` — so the bound rises in every node where a start's
domain leaves the cheap starts, not only at the root.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from ...instance import Instance
from ..backend import NO_HOOKS, Hooks, Limits, Problem
from ..common import RawResult, root_lower_bound
from .cpsat import BuildCancelled, CpSat, add_batch_cap

#: pieces of each staircase's lower envelope in the redundant cumulative (``models/orders.md``
#: §5: 16 against 4 and none on the n = 12 real-length samples)
PIECES = 16
#: the Lagrangian rows count ``Σ C`` in units of ``1 / LAGRANGE_UNITS`` (each job's reduced
#: costs are rounded down to that unit, so the rows lose less than ``n / LAGRANGE_UNITS``)
LAGRANGE_UNITS = 64
#: share of a phase's time limit the LP of ``lagrange`` may take
LAGRANGE_SHARE = 0.5


def envelope(o: int, pieces: int) -> list[tuple[int, int]]:
    """The pieces ``(u_p, u_{p+1})`` that split a response of ``o`` rounds into at most
    ``pieces`` runs of near-equal length (integer cut points, ascending, covering
    ``0 … o``)."""
    if o < 1 or pieces < 1:
        raise ValueError(f"o and pieces must be >= 1, got {o}, {pieces}")
    cuts = sorted({(p * o) // pieces for p in range(pieces)} | {o})
    return list(zip(cuts, cuts[1:]))


def build_events(
    inst: Instance,
    objective: str,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    ub: int | None = None,
    lb: int | None = None,
    pieces: int = PIECES,
    prices=None,
    stop: threading.Event | None = None,
):
    """The event model (module doc) and its start variables; with ``prices``
    (:class:`~kvopt.exact.bounds.lagrange.Prices` over windows that contain ``[lo, hi]``,
    total completion) the Lagrangian rows of the module doc.  Raises
    :class:`~kvopt.exact.backends.cpsat.BuildCancelled` when ``stop`` is set while building."""
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    n, M = inst.n, inst.memory
    s = [int(x) for x in inst.prompts]
    o = [int(x) for x in inst.responses]
    starts = [m.new_int_var(int(lo[i]), int(hi[i]), f"S{i}") for i in range(n)]
    ends = [starts[i] + o[i] for i in range(n)]
    for k in range(n):
        if stop is not None and stop.is_set():
            raise BuildCancelled
        room = M - s[k] - o[k]  # what the others may hold in k's last round
        terms = []
        for i in range(n):
            if i == k:
                continue
            # i's memory in round C_k − 1 when it runs there: s_i + C_k − S_i ∈ [s_i + 1, peak]
            cap = s[i] + o[i]
            if int(hi[i]) + o[i] < int(lo[k]) + o[k] or int(lo[i]) >= int(hi[k]) + o[k]:
                continue  # within the windows i ends before k's last round or starts after it
            run = m.new_bool_var(f"r{i}_{k}")
            before = m.new_bool_var(f"b{i}_{k}")
            after = m.new_bool_var(f"a{i}_{k}")
            m.add_bool_or([run, before, after])
            m.add(ends[i] <= ends[k] - 1).only_enforce_if(before)
            m.add(starts[i] >= ends[k]).only_enforce_if(after)
            m.add(starts[i] <= ends[k] - 1).only_enforce_if(run)
            m.add(ends[i] >= ends[k]).only_enforce_if(run)
            y = m.new_int_var(0, cap, f"y{i}_{k}")
            m.add(y >= s[i] + ends[k] - starts[i]).only_enforce_if(run)
            terms.append(y)
        if terms:
            m.add(sum(terms) <= room)
    add_batch_cap(m, inst, starts)
    if pieces and n:
        intervals, demands = [], []
        for i in range(n):
            for u0, u1 in envelope(o[i], pieces):
                intervals.append(m.new_fixed_size_interval_var(starts[i] + u0, u1 - u0, ""))
                demands.append(s[i] + u0 + 1)
        m.add_cumulative(intervals, demands, M)
    tails = []
    for i in range(n):
        u0 = max(0, M // 2 - s[i])  # first u with 2 (s + u + 1) > M
        if u0 < o[i]:
            tails.append(m.new_fixed_size_interval_var(starts[i] + u0, o[i] - u0, f"tail{i}"))
    if len(tails) > 1:
        m.add_no_overlap(tails)
    lb = max(root_lower_bound(inst, objective), lb or 0)
    if objective == "total":
        expr = sum(starts) + sum(o)
        if prices is not None:
            _lagrange_rows(m, starts, expr, prices, lo, hi)
            lb = max(lb, prices.bound)
        m.add(expr >= lb)
        if ub is not None:
            m.add(expr <= ub)
        m.minimize(expr)
    else:
        hmax = int(max((int(hi[i]) + o[i] for i in range(n)), default=0))
        z = m.new_int_var(lb, max(hmax, lb), "z")
        for i in range(n):
            m.add(z >= ends[i])
        if ub is not None:
            m.add(z <= ub)
        m.minimize(z)
    seen: dict[tuple[int, int, int], int] = {}
    for i in range(n):
        key = (s[i], o[i], int(inst.arrivals[i]))
        if key in seen:
            m.add(starts[seen[key]] <= starts[i])
        seen[key] = i
    return m, starts


def _lagrange_rows(m, starts, expr, prices, lo, hi) -> None:
    """``K Σ C ≥ ⌈K base / D⌉ + Σ_i e_i``, ``e_i`` above the hull rows of
    :meth:`~kvopt.exact.bounds.lagrange.Prices.lines` (``K = LAGRANGE_UNITS``): valid for
    every schedule in the windows, since ``e_i = ⌊K T_i(S_i) / D⌋`` satisfies every row and
    ``D Σ C ≥ base + Σ_i T_i(S_i)``."""
    from ..bounds.lagrange import SCALE

    K = LAGRANGE_UNITS
    extra = []
    for i, S in enumerate(starts):
        a, b = int(lo[i]), int(hi[i])
        rows = prices.lines(i, a, b, K)
        # the hull is convex, so its largest value is at an end of the window; both ends are
        # vertices, where the row through them is exact (an integer) and the others are below
        top = max(max((q * (b - a) + r) // p, r // p) for p, q, r in rows)
        e = m.new_int_var(0, max(top, 0), f"e{i}")
        for p, q, r in rows:
            m.add(p * e >= q * (S - a) + r)
        extra.append(e)
    m.add(K * expr >= -(-K * prices.base // SCALE) + sum(extra))


@dataclass(frozen=True)
class CpSatEvents(CpSat):
    """CP-SAT on the event model of :func:`build_events` (``models/orders.md`` §4): the
    search, limits, hooks and status table of :class:`~kvopt.exact.backends.cpsat.CpSat`,
    another model.  Its size is ``O(n²)`` variables and constraints plus ``pieces · n``
    intervals, whatever the token lengths.  Model options: ``pieces`` (the redundant
    cumulative's envelope; 0: none) and ``lb``; CpSat's ``redundant`` and ``time_indexed``
    are ignored (the redundant rows above are always added, the time-indexed ones never)."""

    name: ClassVar[str] = "events"

    pieces: int = PIECES
    lagrange: bool = False
    #: with ``lagrange``: the ``k`` of the completion cliques separated into the LP before its
    #: prices are read (``kvopt.exact.bounds.cliques``, ``models/cliques.md``; () none)
    cliques: tuple[int, ...] = ()
    #: with ``lagrange``: the share of the limit the LP may take (it stops sooner when it
    #: converges)
    share: float = LAGRANGE_SHARE
    #: set by solve() when lagrange: the LP's prices for this problem (not part of equality)
    prices: object = field(default=None, compare=False, repr=False)

    def solve(self, problem: Problem, limits: Limits, hooks: Hooks = NO_HOOKS) -> RawResult:
        """With ``lagrange`` (total completion): the LP's prices first (at most ``share``
        of the limit), the windows cut by them for the problem's ``ub``,
        then the model with the Lagrangian rows for the rest; the LP's bound is reported at
        least.  Without prices (too large, not solved in time) the plain model."""
        if not self.lagrange or self.prices is not None or problem.objective != "total":
            return super().solve(problem, limits, hooks)
        from ..bounds.lagrange import priced_windows

        prices, rest, lo, hi = priced_windows(problem, limits, self.share, self.cliques)
        if prices is None:
            return super().solve(problem, rest, hooks)
        r = replace(self, prices=prices).solve(replace(problem, lo=lo, hi=hi), rest, hooks)
        stats = dict(
            r.stats,
            lagrange=prices.bound,
            lp=round(prices.lp, 3),
            lp_seconds=round(prices.seconds, 3),
            window_starts=int((hi - lo + 1).sum()),
        )
        bound = prices.bound if r.bound is None else max(r.bound, prices.bound)
        return replace(r, bound=bound, stats=stats)

    def build(self, problem: Problem, stop: threading.Event | None):
        m, starts = build_events(
            problem.instance,
            problem.objective,
            problem.lo,
            problem.hi,
            ub=problem.ub,
            lb=self.lb,
            pieces=self.pieces,
            prices=self.prices,
            stop=stop,
        )
        n = problem.instance.n
        return m, starts, {"pairs": n * (n - 1), "pieces": self.pieces}
