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
job joins the first stage whose window starts at or after its arrival (it is
eligible in stage ``r`` only if it has arrived by the window's start).

**Online.**  The policy learns a job's prompt and response on its arrival
(:class:`~kvopt.engine.ClairvoyantView`) and plans each stage from the jobs
arrived by the stage's window start: a stage is fixed at the first call at or
after its window start.  To be called when the next job must start it asks for
a wake-up at the earliest start it can foresee — the next start of a fixed
stage, or else the first start of the next stage planned with the jobs seen so
far (a later arrival before that stage re-plans it; then that wake-up may find
nothing to start).  :func:`pack_and_schedule_starts` is the same plan computed
offline from the whole instance; the two agree.

**Batch cap** (SPEC §10.1).  With ``max_batch = B`` every rectangle is at least
``⌈M/B⌉`` wide (:func:`cap_width`): rectangles at one round have disjoint intervals of
``[0, M]``, so at most ``B`` of them overlap any round and the cap holds by the packing
itself.  Without a cap the widths are the peaks, as in the paper.  (The ``16·Opt``
guarantee is the paper's, for the uncapped model.)

``packer=nfdh`` uses next-fit decreasing height in windows of ``3L`` rounds
(NFDH's height ``≤ 2·area/M + L ≤ 3L``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from ..engine.contract import ARRIVAL, Actions, ClairvoyantPolicy, ClairvoyantView, Event, View
from ..errors import InputError
from ..instance import Instance
from ..packing import pack_nfdh, steinberg_starts


def _check_packer(packer: str) -> int:
    """The window factor (2 for Steinberg, 3 for NFDH); InputError for another packer."""
    if packer not in ("steinberg", "nfdh"):
        raise InputError(f"must be 'steinberg' or 'nfdh', got {packer!r}", source="--param packer")
    return 2 if packer == "steinberg" else 3


def cap_width(memory: int, max_batch: int | None) -> int:
    """The least rectangle width under a batch cap: ``⌈M/B⌉`` (0 without a cap)."""
    return 0 if max_batch is None else -(-memory // max_batch)


def _level(o: int) -> int:
    """The least ``r ≥ 0`` with ``2^r ≥ o``: the first stage a job of response ``o`` may join."""
    return max(int(o) - 1, 0).bit_length()


def stage_plan(
    r: int,
    candidates: Collection[int],
    o: Mapping[int, int] | Sequence[int],
    ell: Mapping[int, int] | Sequence[int],
    memory: int,
    packer: str = "steinberg",
) -> list[tuple[int, int]]:
    """Stage ``r``'s ``(job, y)`` pairs from ``candidates`` (unscheduled, arrived by its start).

    The jobs with ``o ≤ L = 2^r``, by rectangle area ``ℓ·o`` (ties by job index),
    longest prefix of total area ``≤ M·L``, packed by ``packer`` into a window of
    ``factor·L`` rounds.  Never empty when some candidate has ``o ≤ L``.
    """
    factor = _check_packer(packer)
    L = 1 << r
    # by area, ties by job index: a stable sort by area of the jobs in index order
    elig = sorted(j for j in candidates if o[j] <= L)
    elig.sort(key=lambda j: ell[j] * o[j])
    chosen, area = [], 0
    for j in elig:
        if area + ell[j] * o[j] > memory * L:
            break
        chosen.append(j)
        area += ell[j] * o[j]
    if not chosen:
        return []
    W = [ell[j] for j in chosen]
    H = [o[j] for j in chosen]
    ys = steinberg_starts(W, H, memory, L) if packer == "steinberg" else pack_nfdh(W, H, memory).y
    out = []
    for j, y in zip(chosen, ys):
        assert 0 <= y and y + o[j] <= factor * L, "packing left its window"
        out.append((j, int(y)))
    return out


def pack_and_schedule_starts(instance: Instance, packer: str = "steinberg") -> list[int]:
    """Start round of every job under pack-and-schedule (the plan computed offline)."""
    factor = _check_packer(packer)
    n, M = instance.n, instance.memory
    o = [int(x) for x in instance.responses]
    w0 = cap_width(M, instance.max_batch)
    ell = [max(int(x), w0) for x in instance.peaks]
    arr = [int(x) for x in instance.arrivals]
    starts: list[int | None] = [None] * n
    left = set(range(n))
    r, window = 0, 0
    while left:
        for j, y in stage_plan(r, [j for j in left if arr[j] <= window], o, ell, M, packer):
            starts[j] = window + y
            left.discard(j)
        window += factor << r
        r += 1
    return starts  # type: ignore[return-value]


class PackAndSchedule(ClairvoyantPolicy):
    """Pack-and-schedule with Steinberg (default) or NFDH packing, planned stage by stage."""

    name = "pack-and-schedule"
    kills = False  # each packed rectangle runs to completion in its window

    def __init__(self, packer: str = "steinberg"):
        self.factor = _check_packer(packer)
        self.packer = packer
        self.params = {"packer": packer}

    def setup(self, view: ClairvoyantView) -> None:
        self.M = view.memory
        self.w0 = cap_width(view.memory, view.max_batch)
        self.o: dict[int, int] = {}
        self.ell: dict[int, int] = {}
        self.arr: dict[int, int] = {}
        self.pending: set[int] = set()  # arrived, not yet in a fixed stage
        # how many pending jobs have each ``_level(o)``: the first stage a pending job may
        # join, without a heap of the pending jobs (issue 54; :meth:`_foresee`)
        self.levels: list[int] = [0] * 64
        self.r, self.window = 0, 0  # the first stage not fixed yet and its window start
        # (start, job) of the fixed stages in increasing order, started up to ``qi``: the
        # stages' windows are disjoint and in order, so a stage's sorted starts are appended
        self.queue: list[tuple[int, int]] = []
        self.qi = 0
        self.memo: dict[tuple[int, tuple[int, ...]], list[tuple[int, int]]] = {}
        self.woken = -1  # the last wake-up asked for (the engine keeps it until it is due)
        for j in view.jobs:
            self._arrive(j, view)

    def _arrive(self, j: int, view: ClairvoyantView) -> None:
        if j in self.o:  # a job visible at setup comes again as an arrival event at round 0
            return
        o = view.responses[j]
        self.o[j] = o
        self.ell[j] = max(view.prompts[j] + o, self.w0)
        self.arr[j] = view.arrival(j)
        self.pending.add(j)
        b = _level(o)
        if b >= len(self.levels):
            self.levels.extend([0] * (b + 1 - len(self.levels)))
        self.levels[b] += 1

    def _plan(self, r: int, candidates: Collection[int]) -> list[tuple[int, int]]:
        key = (r, tuple(sorted(j for j in candidates if self.o[j] <= 1 << r)))
        plan = self.memo.get(key)
        if plan is None:
            plan = stage_plan(r, key[1], self.o, self.ell, self.M, self.packer)
            if len(self.memo) > 64:  # plans of past stages are not asked for again
                self.memo.clear()
            self.memo[key] = plan
        return plan

    def _foresee(self) -> int | None:
        """Window start of the next non-empty stage if no other job arrived (None: nothing left).

        A stage is non-empty exactly when some pending job has ``o ≤ L`` (:func:`stage_plan`),
        so no packing is needed here; waking at the window start rather than at its first
        planned start changes nothing: the stage is fixed then with the same jobs (those
        arrived by the window start) and its starts are queued and woken for.
        """
        if not self.pending:
            return None
        # the shortest pending response's level: the first r with 2^r ≥ it (``_level`` is
        # monotone, so this is the level of the shortest; it was a heap of the pending jobs)
        shortest = next(b for b, c in enumerate(self.levels) if c)
        r, window = self.r, self.window
        while r < shortest:
            window += self.factor << r
            r += 1
        return window

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        for e in events:
            if e.kind == ARRIVAL:
                self._arrive(e.job, view)  # type: ignore[arg-type]
        # fix every stage whose window has started: all its arrivals are known now
        while self.window <= now:
            arr, window = self.arr, self.window
            plan = self._plan(self.r, [j for j in self.pending if arr[j] <= window])
            new = sorted((window + y, j) for j, y in plan)
            q = self.queue[self.qi :]
            if q and new and q[-1] > new[0]:  # pragma: no cover - windows are in order
                new = sorted(q + new)
                q = []
            self.queue, self.qi = q + new, 0
            o, levels = self.o, self.levels
            for j, _ in plan:
                self.pending.discard(j)
                levels[_level(o[j])] -= 1
            self.window += self.factor << self.r
            self.r += 1
        q, qi = self.queue, self.qi
        while qi < len(q) and q[qi][0] <= now:
            t, j = q[qi]
            qi += 1
            assert t == now, "planned start missed"
            act.start(j)
        self.qi = qi
        nxt = q[qi][0] if qi < len(q) else self._foresee()
        # a wake-up asked for again before it is due adds nothing: the engine still holds the
        # first, and one or several at a round make the same single WAKE event (issue 54)
        if nxt is not None and nxt != self.woken:
            act.wake(nxt)
            self.woken = nxt
