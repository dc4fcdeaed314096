"""``wait`` and ``nested-wait`` — WAIT and Nested WAIT (Ao, Luo, Simchi-Levi, Wang 2025,
"Optimizing LLM Inference: Fluid-Guided Online Scheduling with Memory Constraints",
arXiv 2504.11320).

The paper's setting is a queue in heavy traffic: prompts of a few *types* arrive at
rates ``λ_j``; a fluid approximation gives the equilibrium batch composition, memory
and stability region; WAIT ("Waiting for Accumulated Inference Threshold") "uses
threshold-based batching to prevent eviction by keeping the system near load balance"
when output lengths are known, and Nested WAIT handles unknown lengths: it "classifies
prompts on-the-fly: short prompts complete early and exit, while longer prompts
naturally advance to later segments", with "a safety buffer [that] provides
high-probability protection against memory overflow with only logarithmic overhead"
(abstract, v2).  Their guarantees are asymptotic (throughput near the fluid optimum in
heavy traffic), not statements about one finite instance, so kvopt states no claim for
them (issue 69: only if checkable on finite instances).

**What was reconstructed** (the algorithm boxes could not be read here; every rule below
is this module's reading of the abstract, in kvopt's round model, and is a parameter
where a choice was made):

``wait`` (clairvoyant: known lengths; arrivals allowed)
    *Types* are the distinct ``(s, o)`` pairs.  *Fluid thresholds*: in the fluid
    equilibrium a type holds memory in proportion to its load ``λ_j · A(s_j, o_j)``;
    with the counts ``c_j`` of the jobs seen so far standing in for the rates, type
    ``j``'s share of ``M`` is ``M_j = M · c_j A_j / Σ_k c_k A_k`` and its threshold is
    ``n_j = max(1, ⌊M_j / (s_j + o_j)⌋)`` — the group of type-``j`` prompts that fits its
    share at its peak (``threshold=N > 0`` sets every ``n_j = N`` instead).  Waiting
    prompts of a type accumulate; each full group of ``n_j`` (oldest first) is *ready*.
    Ready groups start — all members at once — in the order of their oldest member's
    arrival, each only when the exact future-memory check of the running jobs plus the
    group passes (true lengths; stop at the first group that does not fit).  An idle
    server does not wait: with nothing running, waiting prompts start one by one in
    arrival order while the check passes (a partial group, so that a finite instance
    drains).  Decides at every round while prompts wait beside running ones (SPEC §6:
    the check can newly pass as the batch ages); never kills.

    *Batch cap* ``B`` (``max_batch``, SPEC §10.1; not in the paper, whose fluid model
    has none): every threshold is capped, ``n_j ≤ B``, so that a group fits an empty
    batch, and a ready group starts only when it also fits the free slots
    (``len(group) ≤ view.free_slots``) — groups stay whole, never split by the cap;
    the scan stops at the first group that does not fit either way.  The idle start
    (one by one while nothing ran at the call) also stops while ``B`` attempts run.
    No deadlock: with nothing running a single prompt always starts (``B ≥ 1``), and
    a completion frees slots and calls the policy again.  Without a cap nothing changes.

``nested-wait`` (non-clairvoyant; arrivals allowed)
    *Nested segments*: ``B_0 = first``, ``B_k = first · base^k``; a running job that has
    decoded ``g`` tokens is in the first segment ``k`` with ``g < B_k`` (it has been
    classified as longer than ``B_{k−1}``) and *reserves* ``s + min(B_k, M − s)``, the
    memory it holds at the segment's end.  *Safety buffer*: admissions keep the
    reservations within ``M − ⌊buffer·M⌋``.  *Threshold*: new prompts are admitted in
    waves: only when at least ``threshold`` prompts wait (``0``: the number of
    first-segment reservations of the waiting prompts' mean prompt that fill the free
    reserved memory), or when nothing runs; a wave admits prompts in arrival order
    (a restarted prompt keeps its segment) while the reservations fit.  Segment
    advancement raises a job's reservation; the buffer absorbs it, and if the real
    memory still exceeds ``M`` the most recently started attempt is evicted (killed;
    it waits again, keeping the segment it reached — what was learnt about its length).
    Decides at every round while prompts wait beside running ones (the wave test
    changes as reservations grow).

    *Batch cap* ``B`` (``max_batch``, SPEC §10.1; not in the paper): the wave threshold
    is capped at ``B`` (a wave can never hold more), and a wave starts prompts only
    while a slot is free (``view.has_slot()``): it is cut at ``view.free_slots`` as it
    is cut where the reservations stop fitting.  With no free slot the policy waits for
    a completion (or eviction), which calls it again.  No deadlock: with nothing
    running the head of the queue always starts.  Without a cap nothing changes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from ..engine.contract import (
    ARRIVAL,
    OVERFLOW,
    Actions,
    BlindPolicy,
    ClairvoyantPolicy,
    ClairvoyantView,
    Event,
    View,
)
from ..futurememory import future_peak
from ..instance import area


class Wait(ClairvoyantPolicy):
    """WAIT: fluid-threshold groups per type, started whole under the future-memory check."""

    name = "wait"
    kills = False

    def __init__(self, threshold: int = 0) -> None:
        self.threshold = int(threshold)
        self.params = {"threshold": self.threshold}

    def setup(self, view: ClairvoyantView) -> None:
        self.M = view.memory
        self.max_batch = view.max_batch
        self.s: dict[int, int] = {}
        self.o: dict[int, int] = {}
        self.waiting: list[int] = []  # arrival order (ties by job index)
        self.count: dict[tuple[int, int], int] = {}  # jobs seen per type
        for j in view.jobs:
            self._arrive(j, view)

    def _arrive(self, j: int, view: ClairvoyantView) -> None:
        s, o = view.prompts[j], view.responses[j]
        self.s[j], self.o[j] = s, o
        self.waiting.append(j)
        self.count[(s, o)] = self.count.get((s, o), 0) + 1

    def thresholds(self) -> dict[tuple[int, int], int]:
        """``n_j`` per type (see the module docstring)."""
        if self.threshold > 0:
            n_of = dict.fromkeys(self.count, self.threshold)
        else:
            load = {t: c * area(*t) for t, c in self.count.items()}
            total = sum(load.values())
            n_of = {
                t: max(1, math.floor(Fraction(self.M * load[t], total) / (t[0] + t[1])))
                for t in self.count
            }
        if self.max_batch is not None:  # a group fits an empty batch (SPEC §10.1)
            n_of = {t: min(n, self.max_batch) for t, n in n_of.items()}
        return n_of

    def _fits(self, view: View, group: Sequence[int]) -> bool:
        run = list(view.running)
        s = [self.s[j] for j in run] + [self.s[j] for j in group]
        g = [view.progress(j) for j in run] + [0] * len(group)
        r = [self.o[j] - view.progress(j) for j in run] + [self.o[j] for j in group]
        return future_peak(s, g, r) <= self.M

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        for e in events:
            if e.kind == ARRIVAL and e.job not in self.s:
                self._arrive(e.job, view)  # type: ignore[arg-type]
        if not self.waiting:
            return
        if not view.running:  # an idle server does not wait
            while (
                self.waiting
                and view.has_slot()
                and (not view.running or self._fits(view, self.waiting[:1]))
            ):
                act.start(self.waiting.pop(0))
        n_of = self.thresholds()
        by_type: dict[tuple[int, int], list[int]] = {}
        for j in self.waiting:
            by_type.setdefault((self.s[j], self.o[j]), []).append(j)
        groups = []
        for t, js in by_type.items():
            k = n_of[t]
            groups += [js[i : i + k] for i in range(0, len(js) - k + 1, k)]
        groups.sort(key=lambda g: (view.arrival(g[0]), g[0]))
        started: set[int] = set()
        for group in groups:
            free = view.free_slots
            if (free is not None and len(group) > free) or not self._fits(view, group):
                break
            for j in group:
                act.start(j)
                started.add(j)
        if started:
            self.waiting = [j for j in self.waiting if j not in started]
        if self.waiting and view.running:  # the check can newly pass as the batch ages
            act.wake(now + 1)


class NestedWait(BlindPolicy):
    """Nested WAIT: nested segments, reservations with a safety buffer, waves of prompts."""

    name = "nested-wait"
    kills = True

    def __init__(self, threshold: int = 0, buffer: float = 0.1, base: int = 2,
                 first: int = 1) -> None:  # fmt: skip
        self.threshold = int(threshold)
        self.buffer = Fraction(str(buffer))
        self.base = int(base)
        self.first = int(first)
        self.params = {"threshold": self.threshold, "buffer": float(buffer),
                       "base": self.base, "first": self.first}  # fmt: skip

    def setup(self, view: View) -> None:
        self.M = view.memory
        self.budget = self.M - math.floor(self.buffer * self.M)
        self.level: dict[int, int] = {}  # segment a waiting job restarts in
        self.waiting: list[int] = []
        self.started_at: dict[int, int] = {}
        for j in view.jobs:
            self._arrive(j)

    def _arrive(self, j: int) -> None:
        self.level[j] = 0
        self.waiting.append(j)

    def bound(self, k: int) -> int:
        """``B_k``: the decoded length at which segment ``k`` ends."""
        return self.first * self.base**k

    def _segment(self, g: int, floor: int = 0) -> int:
        k = floor
        while self.bound(k) <= g:
            k += 1
        return k

    def reserve(self, view: View, j: int, g: int, floor: int = 0) -> int:
        s = view.prompts[j]
        return s + min(self.bound(self._segment(g, floor)), self.M - s)

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        overflow = False
        for e in events:
            if e.kind == ARRIVAL and e.job not in self.level:
                self._arrive(e.job)  # type: ignore[arg-type]
            elif e.kind == OVERFLOW:
                overflow = True
        if overflow:
            while view.memory_now() > self.M:
                victim = max(view.running, key=lambda j: (view.running[j], j))
                self.level[victim] = self._segment(view.progress(victim), self.level[victim])
                act.kill(victim)
                self.waiting.append(victim)
            self.waiting.sort(key=lambda j: (view.arrival(j), j))
        if not self.waiting:
            return
        reserved = sum(self.reserve(view, j, view.progress(j), self.level[j]) for j in view.running)
        idle = not view.running
        need = self.threshold
        if need <= 0:  # the wave that fills the free reserved memory at first-segment size
            mean_s = Fraction(sum(view.prompts[j] for j in self.waiting), len(self.waiting))
            need = max(1, math.floor((self.budget - reserved) / (mean_s + self.first)))
        if view.max_batch is not None:  # a wave holds at most B prompts (SPEC §10.1)
            if not view.has_slot():
                return  # a completion or an eviction frees a slot and calls again
            need = min(need, view.max_batch)
        if not idle and len(self.waiting) < need:
            act.wake(now + 1)  # reservations grow with progress: the wave may form later
            return
        started = []
        for j in self.waiting:
            if not view.has_slot():  # the wave is cut at the free slots
                break
            r = self.reserve(view, j, 0, self.level[j])
            if reserved + r > self.budget and not (idle and not started):
                break
            act.start(j)
            started.append(j)
            reserved += r
        if started:
            done = set(started)
            self.waiting = [j for j in self.waiting if j not in done]
        if self.waiting and view.running:
            act.wake(now + 1)
