"""``greedy-area`` — area-order greedy with peak reservation (main paper, Appendix A.1;
the proof form of Kong et al.'s SVF, their Theorem 3.2).

Jobs are ordered by area ``A_i = s_i·o_i + o_i(o_i+1)/2`` (ties by job index).
At time 0 and at every event (arrival, completion) the scan starts the next
waiting job in that order while the reserved widths of the running jobs plus
its own fit in ``M``, and stops at the first that does not fit
(``backfill=true`` skips it and keeps scanning).  A job reserves its peak
``ℓ_i = s_i + o_i`` for its whole run, so memory never exceeds ``M`` and no job
is ever killed.  Only arrived jobs wait (online arrivals are handled as they
come): a job's prompt and response are read from the
:class:`~kvopt.engine.ClairvoyantView` on its arrival.  Guarantee (α = max ℓ_i / M < 1): ``≤ (1 + 2/(1−α))·Opt``.

Under a batch cap ``B`` (SPEC §10.1) the scan also stops (with ``backfill``: starts
nothing more) while ``B`` attempts run; a completion frees a slot and calls it again.

``reserve="memory"`` makes every job reserve the whole budget ``M`` (one job at
a time, in area order) — the wide-job branch of ``clairvoyant-mix``.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Sequence

from ..engine.contract import (
    ARRIVAL,
    COMPLETION,
    Actions,
    ClairvoyantPolicy,
    ClairvoyantView,
    Event,
)
from ..errors import InputError
from ..instance import area


class GreedyArea(ClairvoyantPolicy):
    """Area-order greedy list scheduling with peak (or full-memory) reservation."""

    name = "greedy-area"
    kills = False  # peak reservation: memory never overflows

    def __init__(self, backfill: bool = False, reserve: str = "peak"):
        if reserve not in ("peak", "memory"):
            raise InputError(f"must be 'peak' or 'memory', got {reserve!r}", source="reserve")
        self.backfill = bool(backfill)
        self.reserve = reserve
        self.params = {"backfill": self.backfill}

    def setup(self, view: ClairvoyantView) -> None:
        self.M = view.memory
        self.width: dict[int, int] = {}
        # (area, job) in the policy's order: a sorted list with backfill (the scan goes
        # past a job that does not fit), else a heap (the scan pops its head; issue 54)
        self.waiting: list[tuple[int, int]] = []
        self.reserved = 0
        for j in view.jobs:
            self._arrive(j, view)

    def _arrive(self, j: int, view: ClairvoyantView) -> None:
        if j not in self.width:
            s, o = view.prompts[j], view.responses[j]
            self.width[j] = self.M if self.reserve == "memory" else s + o
            if self.backfill:
                bisect.insort(self.waiting, (area(s, o), j))
            else:
                heapq.heappush(self.waiting, (area(s, o), j))

    def on_events(
        self, now: int, events: Sequence[Event], view: ClairvoyantView, act: Actions
    ) -> None:
        for e in events:
            if e.kind == COMPLETION:
                self.reserved -= self.width[e.job]
            elif e.kind == ARRIVAL:
                self._arrive(e.job, view)
        if not self.backfill:
            waiting = self.waiting
            while (
                waiting and self.reserved + self.width[waiting[0][1]] <= self.M and view.has_slot()
            ):
                j = heapq.heappop(waiting)[1]
                act.start(j)
                self.reserved += self.width[j]
            return
        keep = []
        for a, j in self.waiting:
            if self.reserved + self.width[j] <= self.M and view.has_slot():
                act.start(j)
                self.reserved += self.width[j]
            else:
                keep.append((a, j))
        self.waiting = keep
