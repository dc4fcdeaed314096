"""``serial`` — the uniform causal serial policy (SPEC §6.3; the Θ(n) abstract of the
documentation's bibliography, "closing the gap" of Jaillet et al.'s online model).

One request at a time, in arrival order (ties by job index): each is started
as soon as the previous one has completed and it has arrived.  It never kills
and reads nothing but arrivals and completions (non-clairvoyant, online
arrivals allowed).  Every job fits alone (``s_i + o_i ≤ M``), so the run is
always feasible.

The abstract proves that this policy's total latency ``Σ (C_i − a_i)`` is at
most ``n`` times Opt's (claim ``serial-upper``), which with the ``(n−1)/12``
lower bound of the same abstract (claim ``online-linear-n``) makes the
optimal deterministic ratio ``Θ(n)``.

Implementation: arrived jobs wait in a heap keyed ``(arrival, job)``; when
nothing runs, the head starts.  Because a job enters the heap only when it
arrives, the head is always the earliest-arrived waiting job, so the order
is the arrival order of the whole instance.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from ..engine.contract import ARRIVAL, Actions, BlindPolicy, Event, View


class Serial(BlindPolicy):
    """One job at a time in arrival order, never killed (see the module docstring)."""

    name = "serial"
    kills = False

    def __init__(self) -> None:
        self.params: dict = {}

    def setup(self, view: View) -> None:
        self.waiting: list[tuple[int, int]] = []
        self.seen: set[int] = set()
        for j in view.jobs:
            self._arrive(view, j)

    def _arrive(self, view: View, j: int) -> None:
        if j not in self.seen:
            self.seen.add(j)
            heapq.heappush(self.waiting, (view.arrival(j), j))

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        for e in events:
            if e.kind == ARRIVAL:
                self._arrive(view, e.job)
        if not view.running and self.waiting:
            act.start(heapq.heappop(self.waiting)[1])


__all__ = ["Serial"]
