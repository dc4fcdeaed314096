"""Earliest fit on the piecewise-linear memory profile (``models/orders.md`` §3): the serial
placement of :mod:`kvopt.exact.heuristic` without an array over the horizon.

The placed jobs hold ``c_i + τ`` in rounds ``S_i ≤ τ < C_i`` (``c_i = s_i + 1 − S_i``), so
the profile is linear between its breakpoints (starts and completions).  A job ``(s, o)``
fits at ``t`` iff ``mem(ρ) + s + ρ − t + 1 ≤ M`` in the rounds ``ρ`` of
``{C_i − 1 : t ≤ C_i − 1 < t + o} ∪ {t + o − 1}`` (``models/orders.md`` §2: between two
such rounds the memory only grows), and its earliest start ``≥ a`` is the smallest fitting
one among ``a``, the completions ``C_i`` and ``g(C_i − 1) − (M − s − 1)`` with
``g(ρ) = mem(ρ) + ρ`` (§3).  ``O(n)`` candidates, each checked in ``O(n log n)``: no cost
depends on the token lengths; all integer arithmetic.

With a batch cap ``B`` (SPEC §10.1, ``Instance.max_batch``) a start must also leave every
round of the job below ``B`` running jobs: the count of a segment is its ``k``, so
:meth:`Profile.last_full` finds the last full round ``ρ`` in the job's rounds, and no start
``≤ ρ`` can hold (each would run in ``ρ``); the search goes on from ``ρ + 1``
(:meth:`Profile.earliest_capped`).
"""

from __future__ import annotations

from bisect import bisect_right, insort


class Profile:
    """The memory of placed jobs as sorted breakpoints with the running count ``k`` and the
    sum ``c`` of ``c_i`` of each segment: ``mem(τ) = c + k τ`` on
    ``[points[j], points[j+1])``."""

    __slots__ = ("M", "points", "cs", "ks", "ends")

    def __init__(self, memory: int):
        self.M = memory
        self.points: list[int] = []  # breakpoints (ascending)
        self.cs: list[int] = []  # Σ c_i of the jobs running from points[j] on
        self.ks: list[int] = []  # how many run from points[j] on
        self.ends: list[int] = []  # completions C_i of the placed jobs (sorted)

    def mem(self, tau: int) -> int:
        """Memory held in round ``tau``."""
        j = bisect_right(self.points, tau) - 1
        if j < 0:
            return 0
        return self.cs[j] + self.ks[j] * tau

    def _split(self, x: int) -> int:
        """Index of breakpoint ``x``, inserted if missing (its segment continues the last)."""
        j = bisect_right(self.points, x) - 1
        if j >= 0 and self.points[j] == x:
            return j
        c, k = (self.cs[j], self.ks[j]) if j >= 0 else (0, 0)
        self.points.insert(j + 1, x)
        self.cs.insert(j + 1, c)
        self.ks.insert(j + 1, k)
        return j + 1

    def add(self, start: int, prompt: int, response: int) -> None:
        """Place a job: it holds ``prompt + u + 1`` in round ``start + u``."""
        end = start + response
        a = self._split(start)
        b = self._split(end)
        c = prompt + 1 - start
        for j in range(a, b):
            self.cs[j] += c
            self.ks[j] += 1
        insort(self.ends, end)

    def fits(self, t: int, prompt: int, response: int) -> bool:
        """Whether a job ``(prompt, response)`` started at ``t`` keeps every round ≤ M."""
        lim = self.M - prompt - 1 + t  # mem(ρ) + ρ must stay ≤ this in the checked rounds
        last = t + response - 1
        if self.mem(last) + last > lim:
            return False
        ends = self.ends
        for j in range(bisect_right(ends, t), len(ends)):  # C_i − 1 ≥ t
            rho = ends[j] - 1
            if rho >= last:
                break
            if self.mem(rho) + rho > lim:
                return False
        return True

    def earliest(self, arrival: int, prompt: int, response: int) -> int:
        """The earliest start ``≥ arrival`` at which the job fits (module doc)."""
        lim0 = self.M - prompt - 1
        cands = {arrival}
        for e in self.ends:
            if e > arrival:
                cands.add(e)
                v = self.mem(e - 1) + e - 1 - lim0
                if v > arrival:
                    cands.add(v)
        for t in sorted(cands):
            if self.fits(t, prompt, response):
                return t
        raise AssertionError("a job fits after every placed job ends")  # pragma: no cover

    def last_full(self, t: int, response: int, cap: int) -> int:
        """The last round ``ρ`` in ``[t, t + response)`` in which ``cap`` or more placed jobs
        run (``-1``: none)."""
        end = t + response
        j = bisect_right(self.points, end - 1) - 1  # the segment holding round end − 1
        while j >= 0:
            seg_end = self.points[j + 1] if j + 1 < len(self.points) else end
            if seg_end <= t:
                break
            if self.ks[j] >= cap:
                return min(seg_end, end) - 1
            j -= 1
        return -1

    def earliest_capped(self, arrival: int, prompt: int, response: int, cap: int) -> int:
        """The earliest start ``≥ arrival`` at which the job fits under the memory and leaves
        fewer than ``cap`` placed jobs in each of its rounds (module doc): the earliest memory
        fit, pushed past the last full round, until both hold (no start skipped can)."""
        t = arrival
        while True:
            t = self.earliest(t, prompt, response)
            rho = self.last_full(t, response, cap)
            if rho < 0:
                return t
            t = rho + 1


def place_events(
    memory: int,
    prompts: list[int],
    responses: list[int],
    arrivals: list[int],
    order,
    max_batch: int | None = None,
) -> list[int]:
    """Starts of the serial schedule for ``order`` (each job at its earliest fit on top of
    the jobs before it, holes filled): the same schedule as the array placement of
    :func:`kvopt.exact.heuristic.place`, at a cost that follows ``n``, not the horizon.
    ``max_batch``: the batch cap (at most that many jobs in any round; ``None``: none)."""
    prof = Profile(memory)
    starts = [0] * len(prompts)
    last: dict[tuple[int, int, int], int] = {}
    for i in order:
        s, o, a = prompts[i], responses[i], arrivals[i]
        key = (s, o, a)
        # an identical job cannot fit earlier (under a cap too: placing jobs only fills rounds)
        t = (
            prof.earliest(last.get(key, a), s, o)
            if max_batch is None
            else prof.earliest_capped(last.get(key, a), s, o, max_batch)
        )
        prof.add(t, s, o)
        starts[i] = t
        last[key] = t
    return starts
