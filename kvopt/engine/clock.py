"""The clock in seconds of a run (SPEC §10): ``τ_0 = 0``, ``τ_{t+1} = τ_t + d_t``.

A run is a sequence of **stretches**: rounds ``t0 … t1−1`` in which the same ``b``
attempts run.  In a stretch the memory grows by ``b`` per round and only its first
round prefills (attempts start at the event that opens the stretch), so its seconds,
its memory-seconds and the first round at which ``τ`` reaches a given time have closed
forms (:meth:`kvopt.serving.timemodel.TimeModel.stretch`): one step per stretch however many
rounds it holds, as the event engine takes one step per event time.

:class:`Clock` is built stretch by stretch — by the engine while it runs
(:func:`kvopt.engine.core.run`), or afterwards from a schedule by :func:`clock_of` —
and answers ``τ_t`` for any round ``t`` (:meth:`Clock.tau`).  Seconds are floating
point; under ``unit`` every ``τ_t`` is the integer ``t`` exactly.
"""

from __future__ import annotations

import bisect
import math

from ..instance import Instance
from ..schedule import Schedule
from ..serving.timemodel import PRESETS, TimeModel


class Clock:
    """``τ_t`` of a run under a time model, one record per stretch of rounds."""

    __slots__ = ("model", "_t", "_tau", "_b", "_k0", "_p", "_q", "now", "tau_now",
                 "busy_seconds", "memory_seconds", "_unit")  # fmt: skip

    def __init__(self, model: TimeModel | None = None):
        self.model = PRESETS["unit"] if model is None else model
        self._unit = self.model.is_unit
        self._t: list[int] = []  # first round of each stretch
        self._tau: list[float] = []  # τ at that round
        self._b: list[int] = []
        self._k0: list[int] = []
        self._p: list[int] = []
        self._q: list[int] = []
        self.now = 0  # the round the clock has reached
        self.tau_now = 0.0  # τ_now
        self.busy_seconds = 0.0  # Σ d_t over rounds in which something runs
        self.memory_seconds = 0.0  # Σ K_t·d_t over the same rounds

    def advance(self, to: int, b: int, k0: int, p: int = 0, q: int = 0) -> None:
        """Rounds ``now … to−1`` run ``b`` attempts holding ``k0`` in round ``now`` (growing
        by ``b`` per round), prefilling ``p`` prompt tokens (``q`` = Σ s²) in round ``now``."""
        r = to - self.now
        if r <= 0:
            return
        m = self.model
        if not (b or p or q) and self._b and not self._b[-1] and not self._p[-1]:
            pass  # an idle stretch continuing an idle one: one record
        else:
            self._t.append(self.now)
            self._tau.append(self.tau_now)
            self._b.append(b)
            self._k0.append(k0)
            self._p.append(p)
            self._q.append(q)
        if self._unit:  # c0 = 1, all else 0: the general sums below, term for term
            secs = float(r)
            if b:
                self.busy_seconds += secs
                self.memory_seconds += r * k0 * 1.0 + b * 1.0 * (r * (r - 1) / 2)
            self.tau_now += secs
            self.now = to
            return
        secs = m.stretch(r, b, k0, p, q)
        if b:
            self.busy_seconds += secs
            d0 = m.c0 + m.c_b * b + m.c_k * k0
            s1 = r * (r - 1) / 2
            s2 = (r - 1) * r * (2 * r - 1) / 6
            self.memory_seconds += (
                r * k0 * d0
                + (k0 * m.c_k * b + b * d0) * s1
                + m.c_k * b * b * s2
                + k0 * (m.c_p * p + m.c_q * q)
            )
        self.tau_now += secs
        self.now = to

    def first_round_reaching(self, alpha: float, b: int, k0: int, p: int, q: int,
                             limit: int | None) -> int | None:  # fmt: skip
        """The first round ``t > now`` with ``τ_t ≥ alpha`` if the current stretch (``b``,
        ``k0``, ``p``, ``q`` from round ``now``) lasts until it; ``None`` when that round would
        be after ``limit`` (the next event round).  Rounds at or before ``now`` are the
        caller's (``τ_now ≥ alpha`` releases at ``now``)."""
        m = self.model
        need = alpha - self.tau_now
        hi = max(1, math.ceil(need / m.c0) + 1)  # every round lasts at least c0
        if limit is not None:
            hi = min(hi, limit - self.now)
            if hi < 1 or self.tau_now + m.stretch(hi, b, k0, p, q) < alpha:
                return None
        lo = 1
        while lo < hi:  # the smallest k in [lo, hi] with τ_now + stretch(k) ≥ alpha
            mid = (lo + hi) // 2
            if self.tau_now + m.stretch(mid, b, k0, p, q) >= alpha:
                hi = mid
            else:
                lo = mid + 1
        return self.now + lo

    def tau(self, t: int) -> float:
        """``τ_t``, the start of round ``t`` (the end of round ``t − 1``); after the last
        recorded round the clock runs idle (``c0`` per round)."""
        if t >= self.now:
            return self.tau_now + (t - self.now) * self.model.c0
        i = bisect.bisect_right(self._t, t) - 1
        if i < 0:
            return 0.0
        return self._tau[i] + self.model.stretch(
            t - self._t[i], self._b[i], self._k0[i], self._p[i], self._q[i]
        )

    @property
    def steps(self) -> int:
        """Stretch records kept (at most one per engine step)."""
        return len(self._t)


def clock_of(instance: Instance, schedule: Schedule, model: TimeModel | None = None) -> Clock:
    """The clock of a finished schedule, rebuilt from its attempts alone (SPEC §10).

    ``instance`` is the round instance the schedule was checked against (for a timed
    instance, the realized one).  The stretches are the rounds between consecutive
    starts and ends of attempts.
    """
    prompts = instance.prompts.tolist()
    starts: dict[int, list[int]] = {}
    ends: dict[int, list[int]] = {}
    for a in schedule.attempts:
        starts.setdefault(a.start, []).append(a.job)
        ends.setdefault(a.start + a.rounds, []).append(a.job)
    clock = Clock(model)
    b = 0
    c = 0  # memory in round t is c + b·t
    events = sorted({*starts, *ends})
    if events:
        clock.advance(events[0], 0, 0)  # idle until the first start
    live: dict[int, int] = {}
    for i, t in enumerate(events):
        for j in ends.get(t, ()):
            s0 = live.pop(j)
            b -= 1
            c -= prompts[j] + 1 - s0
        p = q = 0
        for j in starts.get(t, ()):
            live[j] = t
            b += 1
            c += prompts[j] + 1 - t
            p += prompts[j]
            q += prompts[j] * prompts[j]
        if i + 1 < len(events):
            clock.advance(events[i + 1], b, c + b * t, p, q)
    return clock


__all__ = ["Clock", "clock_of"]
