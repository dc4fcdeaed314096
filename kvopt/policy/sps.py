"""``sps`` — Staggered Pipeline Scheduling (SPEC §6.1; **the toolkit's reconstruction**).

The SPS subroutine of Feng, Yang, Zhang (2026) was not available to us; this is
the reconstruction SPEC §6.1 prescribes, and every claim that depends on it
(``response``, ``gsa``) depends on this reconstruction.

Input: jobs in a fixed order (job index in every caller), a common proxy
prompt ``p`` and a common cap ``τ``.  Every attempt is budgeted as if it held
``p + u + 1`` for all ``τ`` rounds.  Jobs start in groups of ``g``, group ``j``
at offset ``j·d``; the pattern's peak proxy memory is
``g · max_x Σ_{q ≥ 0, x+qd < τ} (p + x + qd + 1)`` over ``x = 0 … d−1``.
:func:`sps_plan` picks ``(g, d)`` with peak ≤ ``M`` maximising ``g/d`` (ties:
smaller ``d``), ``g`` at most the number of jobs ``k``; when all jobs fit at
once (``k (p + τ) ≤ M``) they all start together.  Each attempt runs until it
completes or reaches ``τ``.  Groups start at their fixed offsets even when
earlier attempts end early.

``stagger=False`` (an option) restricts SPS to plain batches (``d = τ``).

When no ``(g, d)`` fits (``p + τ > M``) the jobs run *one after another*,
each starting when the previous attempt ends (Response's rule for
``τ > M/2``, SPEC §6.1; we read "one after another" as back to back).

The standalone policy ``sps`` runs SPS once on all jobs with ``p`` = the largest
prompt and ``τ`` = the largest response unless given: knowing ``τ`` makes it
clairvoyant.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from ..engine.contract import (
    COMPLETION,
    EXPIRY,
    Actions,
    ClairvoyantPolicy,
    ClairvoyantView,
    Event,
    View,
)


def peak_one(p: int, tau: int, d: int) -> int:
    """``max_x Σ_{q ≥ 0, x+qd < τ} (p + x + qd + 1)`` over ``x = 0 … d−1`` (one job per group)."""
    best = 0
    # within offsets with the same number of terms the sum grows with x, so only the
    # last offset with m = ⌈τ/d⌉ terms and the last offset (d − 1) can be the maximum
    for x in {(tau - 1) % d, d - 1}:
        if x >= tau:
            continue
        m = (tau - x + d - 1) // d
        best = max(best, m * (p + x + 1) + d * m * (m - 1) // 2)
    return best


@lru_cache(maxsize=4096)
def _gmax(p: int, tau: int, memory: int) -> tuple[int, ...]:
    """``⌊M / peak_one(d)⌋`` for ``d = 1 … τ`` (index ``d − 1``)."""
    return tuple(memory // peak_one(p, tau, d) for d in range(1, tau + 1))


@lru_cache(maxsize=4096)
def sps_plan(
    p: int, tau: int, k: int, memory: int, stagger: bool = True, max_batch: int | None = None
) -> tuple[int, int] | None:
    """``(g, d)`` for ``k`` jobs with proxy prompt ``p`` and cap ``τ``; ``None`` if nothing fits.

    All jobs together (``g = k``, ``d = τ``) when ``k (p + τ) ≤ M``.  Otherwise the
    feasible ``(g, d)`` (``d ≤ τ``; a larger ``d`` never helps) with the largest
    ``g/d``, ties to the smaller ``d``.

    With a batch cap ``B`` (``max_batch``, SPEC §10.1) a pattern is feasible only if it
    never runs more than ``B`` attempts: groups start every ``d`` rounds and an attempt
    runs at most ``τ``, so at most ``⌈τ/d⌉`` groups overlap, and ``g·⌈τ/d⌉ ≤ B`` is
    required (all together: ``k ≤ B``).  ``g = 1, d = τ`` always qualifies, so the cap
    never turns a feasible plan into none.  Without a cap the plan is unchanged.
    """
    if k <= 0:
        return None
    if k * (p + tau) <= memory and (max_batch is None or k <= max_batch):
        return (k, tau)
    if p + tau > memory:
        return None
    if not stagger:
        g = min(k, memory // (p + tau))
        return (g if max_batch is None else min(g, max_batch), tau)
    gm = _gmax(p, tau, memory)
    best_g, best_d = 0, 1
    for d in range(1, tau + 1):
        g = gm[d - 1]
        if g > k:
            g = k
        if max_batch is not None:
            g = min(g, max_batch // -(-tau // d))  # at most ⌈τ/d⌉ groups overlap
        if g and g * best_d > best_g * d:  # strictly better throughput; ties keep smaller d
            best_g, best_d = g, d
    return (best_g, best_d)


class SPSRun:
    """One SPS run started at round ``t0`` on ``order`` (event-driven helper).

    ``plan`` is ``(g, d)`` or ``None`` for one-after-another.  Call
    :meth:`advance` at every event time; :meth:`ended` when an attempt of the
    run ends.  :attr:`finished` is true once every attempt has started and ended.
    """

    __slots__ = ("order", "plan", "t0", "cap", "next_idx", "live")

    def __init__(self, order: Sequence[int], plan: tuple[int, int] | None, t0: int, cap: int):
        self.order = list(order)
        self.plan = plan
        self.t0 = t0
        self.cap = cap
        self.next_idx = 0
        self.live: set[int] = set()

    def advance(self, now: int, act: Actions) -> None:
        """Start every group due at ``now`` and ask for the next group's wake-up."""
        order = self.order
        if self.plan is None:
            if not self.live and self.next_idx < len(order):
                j = order[self.next_idx]
                self.next_idx += 1
                self.live.add(j)
                act.start(j, self.cap)
            return
        g, d = self.plan
        while self.next_idx < len(order):
            grp = self.next_idx // g
            due = self.t0 + grp * d
            if due > now:
                act.wake(due)
                break
            for j in order[self.next_idx : self.next_idx + g]:
                self.live.add(j)
                act.start(j, self.cap)
            self.next_idx = min(len(order), self.next_idx + g)

    def ended(self, job: int) -> bool:
        """Record the end of ``job``'s attempt; true if it belonged to this run."""
        if job in self.live:
            self.live.discard(job)
            return True
        return False

    @property
    def finished(self) -> bool:
        return self.next_idx >= len(self.order) and not self.live


class SPS(ClairvoyantPolicy):
    """SPS run once on all jobs (job-index order); ``proxy``/``cap`` 0 mean largest prompt/response."""

    name = "sps"
    kills = False  # the cap is at least the largest response (its class check)

    def __init__(self, proxy: int = 0, cap: int = 0, stagger: bool = True):
        self.proxy = int(proxy)
        self.cap = int(cap)
        self.stagger = bool(stagger)
        self.params = {"proxy": proxy, "cap": cap, "stagger": stagger}

    def setup(self, view: ClairvoyantView) -> None:
        instance = view.instance  # offline: every job is visible at round 0
        p = self.proxy or int(instance.prompts.max())
        tau = self.cap or int(instance.responses.max())
        jobs = sorted(view.jobs)
        plan = sps_plan(p, tau, len(jobs), view.memory, self.stagger, view.max_batch)
        self.run = SPSRun(jobs, plan, 0, tau)
        self.p, self.tau = p, tau

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        for e in events:
            if e.kind in (COMPLETION, EXPIRY):
                self.run.ended(e.job)
        self.run.advance(now, act)


def sps_proxy_ok(prompts: Sequence[int], proxy: int) -> bool:
    """SPS needs every real prompt ≤ the proxy prompt (then real memory ≤ the proxy budget)."""
    return all(int(s) <= proxy for s in prompts)


__all__ = ["SPS", "SPSRun", "peak_one", "sps_plan", "sps_proxy_ok"]
