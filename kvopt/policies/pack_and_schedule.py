"""``pack-and-schedule`` — geometric stages with rectangle packing (main paper, Appendix A.3,
Algorithm 7, Theorem 6: ``≤ 16·Opt``).  Clairvoyant.

Each job is a rectangle of width ``ℓ_i = s_i + o_i`` (its peak memory) and
height ``o_i``.  Stage ``r = 0, 1, …`` has ``L = 2^r`` and a window of ``2L``
rounds; windows follow each other, so stage ``r``'s window starts at
``2(2^r − 1)``.  In stage ``r``, among the unscheduled jobs with ``o_i ≤ L``,
sort by rectangle area ``ℓ_i·o_i`` (ties by job index) and take the longest
prefix with total area ``≤ M·L`` (the paper's knapsack step becomes this exact
prefix); pack those rectangles into a strip of width ``M`` and height ``2L``
with Steinberg's algorithm (:func:`kvopt.packing.pack_steinberg`), and start
each job at window start + its rectangle's ``y``.  Rectangles at the same
round have disjoint memory intervals, so memory never exceeds ``M``, and every
job completes inside its window; nothing is killed.

Choices (documented): windows have their full length even when a stage packs
nothing (the schedule of the theorem; it keeps the ``4·2^r`` completion bound
of the proof); ``y`` is made integral by dropping rectangles downwards (see
:mod:`kvopt.packing`), which only makes jobs start earlier.  With arrivals, a
job is eligible in stage ``r`` only if it has arrived by the window's start.

``packer=nfdh`` uses next-fit decreasing height in windows of ``3L`` rounds
(NFDH's height ``≤ 2·area/M + L ≤ 3L``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..engine import Actions, ClairvoyantPolicy, Event, View
from ..errors import InputError
from ..instance import Instance
from ..packing import pack_nfdh, pack_steinberg


def pack_and_schedule_starts(instance: Instance, packer: str = "steinberg") -> list[int]:
    """Start round of every job under pack-and-schedule (the whole clairvoyant plan)."""
    if packer not in ("steinberg", "nfdh"):
        raise InputError(f"must be 'steinberg' or 'nfdh', got {packer!r}", source="--param packer")
    n, M = instance.n, instance.memory
    o = [int(x) for x in instance.responses]
    ell = [int(x) for x in instance.peaks]
    arr = [int(x) for x in instance.arrivals]
    factor = 2 if packer == "steinberg" else 3
    starts: list[int | None] = [None] * n
    left = set(range(n))
    r, window = 0, 0
    while left:
        L = 1 << r
        elig = sorted(
            (j for j in left if o[j] <= L and arr[j] <= window), key=lambda j: (ell[j] * o[j], j)
        )
        chosen, area = [], 0
        for j in elig:
            if area + ell[j] * o[j] > M * L:
                break
            chosen.append(j)
            area += ell[j] * o[j]
        if chosen:
            W = [ell[j] for j in chosen]
            H = [o[j] for j in chosen]
            if packer == "steinberg":
                p = pack_steinberg(W, H, M, L)
            else:
                p = pack_nfdh(W, H, M)
            for j, y in zip(chosen, p.y):
                assert 0 <= y and y + o[j] <= factor * L, "packing left its window"
                starts[j] = window + int(y)
                left.discard(j)
        window += factor * L
        r += 1
    return starts  # type: ignore[return-value]


class PlannedPolicy(ClairvoyantPolicy):
    """Replays a precomputed kill-free plan (start round per job) through the engine."""

    name = "planned"

    def plan(self, instance: Instance) -> list[int]:  # pragma: no cover - abstract
        raise NotImplementedError

    def setup(self, instance: Instance, view: View) -> None:
        starts = self.plan(instance)
        self.queue = sorted(((int(t), j) for j, t in enumerate(starts)), reverse=True)

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        q = self.queue
        while q and q[-1][0] <= now:
            t, j = q.pop()
            assert t == now, "planned start missed"
            act.start(j)
        if q:
            act.wake(q[-1][0])


class PackAndSchedule(PlannedPolicy):
    """Pack-and-schedule with Steinberg (default) or NFDH packing."""

    name = "pack-and-schedule"

    def __init__(self, packer: str = "steinberg"):
        if packer not in ("steinberg", "nfdh"):
            raise InputError(
                f"must be 'steinberg' or 'nfdh', got {packer!r}", source="--param packer"
            )
        self.packer = packer
        self.params = {"packer": packer}

    def plan(self, instance: Instance) -> list[int]:
        return pack_and_schedule_starts(instance, self.packer)
