"""The event model (``models/orders.md`` §4): CP-SAT with one start per job and the memory
checked only in each job's last round, so that its size follows ``n``, not the horizon.

Memory needs checking only in the rounds ``C_k − 1`` (``models/orders.md`` §2, the fact of
``models/bnb.md`` §2): for each ordered pair ``(i, k)`` one of three Booleans holds — ``i``
runs in ``k``'s last round (``r_ik``: ``S_i ≤ C_k − 1`` and ``C_i ≥ C_k``), ends before it
(``C_i ≤ C_k − 1``) or starts after it (``S_i ≥ C_k``) — and ``s_k + o_k + Σ_i y_ik ≤ M``
with ``y_ik ≥ s_i + C_k − S_i`` when ``r_ik`` (``i``'s memory in round ``C_k − 1``).
``2 n (n − 1)`` Booleans whatever the token lengths; start domains are intervals, so a
response of 10⁷ tokens costs what one of 10 does.

Redundant constraints, each valid for every schedule (``models/orders.md`` §4): the
staircase's lower envelope in ``pieces`` fixed-size intervals under one cumulative of
capacity ``M`` (piece ``[S_i + u_p, S_i + u_{p+1})`` of demand ``s_i + u_p + 1``); the heavy
tails (``s_i + u + 1 > M/2``) in one no-overlap, as in ``models/cpsat.md``; the objective
between the cheap lower bound of SPEC §2 and the heuristic's value; identical jobs in
index order.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...instance import Instance
from ..backend import Problem
from ..common import root_lower_bound
from .cpsat import BuildCancelled, CpSat

#: pieces of each staircase's lower envelope in the redundant cumulative (``models/orders.md``
#: §5: 16 against 4 and none on the n = 12 real-length samples)
PIECES = 16


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
    stop: threading.Event | None = None,
):
    """The event model (module doc) and its start variables.  Raises
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

    def build(self, problem: Problem, stop: threading.Event | None):
        m, starts = build_events(
            problem.instance,
            problem.objective,
            problem.lo,
            problem.hi,
            ub=problem.ub,
            lb=self.lb,
            pieces=self.pieces,
            stop=stop,
        )
        n = problem.instance.n
        return m, starts, {"pairs": n * (n - 1), "pieces": self.pieces}
