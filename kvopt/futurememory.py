"""The exact future-memory check shared by ``svf``, ``svf-1bit``, ``mcsf`` and ``mc-benchmark``.

Jaillet et al. (2025, MC-SF, Algorithm 1) and Kong et al. (2026, SVF) admit a
job only if the memory of the running jobs *plus* the new ones stays within
``M`` in every future round, counting the KV cache's growth.  This module is
the one place that check is computed.

At the current round ``t`` (the next round to run) job ``j`` has a prompt
``s_j``, has already decoded ``g_j`` tokens of its current attempt (``g_j = 0``
for a job starting now) and is expected to run ``r_j ≥ 1`` more rounds
(``t … t + r_j − 1``).  In round ``t + k`` it holds ``s_j + g_j + k + 1`` if
``k < r_j`` and nothing afterwards, so the total is

    m(k) = Σ_{j : r_j > k} (s_j + g_j + k + 1).

Between two completions ``m`` is increasing in ``k``, so its maximum over all
``k ≥ 0`` is attained in the last round of some job, ``k = r_j − 1``: checking
those ``n`` rounds is exact (module tests compare it with a round-by-round
count).  With jobs sorted by ``r`` ascending, ``m(r_p − 1) = Σ_{q ≥ p} (c_q + r_p)``
with ``c_q = s_q + g_q``, a suffix sum — ``O(n log n)`` in total.

:func:`next_fit_round` answers the question the per-round rule of SPEC §6 asks
between events: at which round would a waiting job first pass the check beside
the running jobs, which only age until the next event?
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence

import numpy as np


def future_peak(
    prompts: Sequence[int] | np.ndarray,
    progress: Sequence[int] | np.ndarray,
    remaining: Sequence[int] | np.ndarray,
) -> int:
    """Largest total memory in any round from now on (0 if no job).

    ``prompts[j]``, ``progress[j]`` (tokens already decoded in the current
    attempt) and ``remaining[j] ≥ 1`` (rounds still to run, including this one).

    Small sets given as lists (the running batch of a policy's admission scan, a
    dozen jobs on the Azure trace) are computed in plain Python, about twice as fast
    there as numpy with its per-call overhead (issue 54); both forms give the same
    integer (the module tests compare them).
    """
    if not isinstance(prompts, np.ndarray) and len(prompts) <= _SMALL:
        return _future_peak_small(prompts, progress, remaining)
    s = np.asarray(prompts, dtype=np.int64)
    g = np.asarray(progress, dtype=np.int64)
    r = np.asarray(remaining, dtype=np.int64)
    if s.size == 0:
        return 0
    if (r < 1).any():
        raise ValueError("remaining must be >= 1 for every job")
    order = np.argsort(r, kind="stable")
    c = (s + g)[order]
    rr = r[order]
    suffix = np.cumsum(c[::-1])[::-1]  # Σ_{q ≥ p} c_q
    count = np.arange(len(c), 0, -1, dtype=np.int64)  # jobs with r_q ≥ r_p (ties included)
    return int((suffix + count * rr).max())


#: Largest list :func:`future_peak` computes in plain Python: measured (issue 54), 12 jobs
#: take 10 µs against numpy's 19 µs, 64 jobs about 28 µs both, 128 jobs 62 µs against 40 µs.
_SMALL = 64


def _future_peak_small(
    prompts: Sequence[int], progress: Sequence[int], remaining: Sequence[int]
) -> int:
    """:func:`future_peak` in plain Python: ``max_p Σ_{q ≥ p} c_q + (n − p) r_p`` over the
    jobs sorted by ``r`` (ties in any order: a later one of equal ``r`` gives less)."""
    if not prompts:
        return 0
    if min(remaining) < 1:
        raise ValueError("remaining must be >= 1 for every job")
    jobs = sorted(zip(remaining, [s + g for s, g in zip(prompts, progress)]))
    acc = sum(c for _, c in jobs)  # Σ_{q ≥ p} c_q
    k = len(jobs)  # jobs with r_q ≥ r_p
    best = 0
    for r, c in jobs:
        v = acc + k * r
        if v > best:
            best = v
        acc -= c
        k -= 1
    return int(best)


def fits_future(
    memory: int,
    prompts: Sequence[int] | np.ndarray,
    progress: Sequence[int] | np.ndarray,
    remaining: Sequence[int] | np.ndarray,
) -> bool:
    """``True`` when the jobs (running ones and candidates starting now) stay ``≤ memory``
    in every future round; see :func:`future_peak`."""
    return future_peak(prompts, progress, remaining) <= memory


class FutureMemory:
    """Incremental form for a greedy admission scan: the running set plus admitted candidates.

    ``try_add(s, r)`` admits a job starting now with prompt ``s`` and ``r`` rounds
    if the check still passes (and returns whether it did).  Each call costs one
    :func:`future_peak` over the current set.
    """

    def __init__(self, memory: int, prompts=(), progress=(), remaining=()):
        self.memory = int(memory)
        self.prompts = [int(x) for x in prompts]
        self.progress = [int(x) for x in progress]
        self.remaining = [int(x) for x in remaining]

    def peak_with(self, prompt: int, rounds: int) -> int:
        return future_peak(
            self.prompts + [int(prompt)], self.progress + [0], self.remaining + [int(rounds)]
        )

    def fits(self, prompt: int, rounds: int) -> bool:
        return self.peak_with(prompt, rounds) <= self.memory

    def try_add(self, prompt: int, rounds: int) -> bool:
        if not self.fits(prompt, rounds):
            return False
        self.prompts.append(int(prompt))
        self.progress.append(0)
        self.remaining.append(int(rounds))
        return True


def next_fit_round(
    memory: int,
    prompts: Sequence[int],
    starts: Sequence[int],
    estimates: Sequence[int],
    now: int,
    prompt: int,
    rounds: int,
) -> int | None:
    """First round ``u > now`` at which a job (``prompt``, ``rounds``) starting at ``u`` passes
    the check beside the running jobs, if nothing else changes; ``None`` if no round does.

    Running job ``j`` started at ``starts[j]`` with estimated length ``estimates[j] ≥ 1``;
    at round ``u`` it has decoded ``u − starts[j]`` tokens and is expected to run
    ``max(estimates[j] − (u − starts[j]), 1)`` more rounds (the rule of
    :class:`~kvopt.policy.mcsf.FutureCheckGreedy`), so it holds ``c_j + τ`` in round
    ``τ`` (``c_j = s_j − starts[j] + 1``) up to its last round ``max(L_j, u)`` with
    ``L_j = starts[j] + estimates[j] − 1``.  The check at ``u`` is exact at the rounds
    ``τ = u``, ``τ = W = u + rounds − 1`` (the new job's last round) and ``τ = L_j > u``
    (memory grows between them).  Each failing round certifies a run of failing
    start rounds, so the search jumps instead of trying every round:

    * ``τ = u`` — the running jobs only grow: it fails for every later ``u`` (``None``);
    * ``τ = L_p`` inside the window — fails until ``u`` reaches the round at which the
      new job, started later, holds little enough there, or ``u > L_p``;
    * ``τ = W`` — fails until ``W`` passes the next ``L_j ≥ W`` (``None`` if none);
    * ``τ = L_p`` after the window — fails until the window reaches ``L_p``.

    Every jump passes a round that can only fail, so the first round found is the
    first at which :meth:`FutureMemory.fits` (with the remaining lengths above) passes.

    Lists of up to ``_SMALL`` running jobs take :func:`_next_fit_round_small`, the same
    steps in plain Python (issue 54; the module tests compare the two).
    """
    if not isinstance(prompts, np.ndarray) and len(prompts) <= _SMALL:
        return _next_fit_round_small(memory, prompts, starts, estimates, now, prompt, rounds)
    M = int(memory)
    s = np.asarray(prompts, dtype=np.int64)
    st = np.asarray(starts, dtype=np.int64)
    e = np.asarray(estimates, dtype=np.int64)
    sc, ec = int(prompt), int(rounds)
    K = int(s.size)
    c = s - st + 1
    L = st + e - 1
    order = np.argsort(L, kind="stable")
    Ls = L[order]
    suf = np.zeros(K + 1, dtype=np.int64)
    suf[:K] = np.cumsum(c[order][::-1])[::-1]  # suf[i] = Σ_{q ≥ i} c of the i-th by L
    C = int(suf[0])
    u = int(now) + 1
    while True:
        if K * u + C + sc + 1 > M:  # round u itself: only gets worse
            return None
        W = u + ec - 1
        target = u
        i0 = int(np.searchsorted(Ls, u, side="right"))  # jobs with L_j > u
        if i0 < K:
            Lp = Ls[i0:]
            first = np.searchsorted(Ls, Lp, side="left")  # jobs with L_j ≥ L_p
            held = suf[first] + (K - first) * Lp  # running jobs in round L_p
            inwin = Lp <= W
            bad = held + np.where(inwin, sc + 1 + Lp - u, 0) > M
            if bad.any():
                grow = np.minimum(held + sc + 1 + Lp - M, Lp + 1)  # inside the window
                wait = Lp - ec + 1  # after the window: until the window reaches L_p
                target = max(target, int(np.where(inwin, grow, wait)[bad].max()))
        if ec >= 2:
            i = int(np.searchsorted(Ls, W, side="left"))  # jobs still running in round W
            if int(suf[i]) + (K - i) * W + sc + ec > M:
                if i == K:
                    return None
                target = max(target, int(Ls[i]) - ec + 2)
        if target == u:
            return u
        u = target


def _next_fit_round_small(
    memory: int,
    prompts: Sequence[int],
    starts: Sequence[int],
    estimates: Sequence[int],
    now: int,
    prompt: int,
    rounds: int,
) -> int | None:
    """:func:`next_fit_round` in plain Python, step for step (``bisect`` for ``searchsorted``)."""
    jobs = sorted(
        (int(st) + int(e) - 1, int(s) - int(st) + 1) for s, st, e in zip(prompts, starts, estimates)
    )  # (L_j, c_j) by L (ties: the order does not change a sum over L_j ≥ L_p)
    return next_fit_round_sorted(
        memory, [L for L, _ in jobs], [c for _, c in jobs], now, prompt, rounds
    )


def next_fit_round_sorted(
    memory: int, Ls: Sequence[int], cs: Sequence[int], now: int, prompt: int, rounds: int
) -> int | None:
    """:func:`next_fit_round` for running jobs given as ``L_j = start + estimate − 1`` in
    ascending order (``Ls``) with ``c_j = s_j − start + 1`` beside them (``cs``; ties of
    ``L`` in any order), as :class:`RunningSet` keeps them: no sort per call (issue 54)."""
    M = int(memory)
    sc, ec = int(prompt), int(rounds)
    K = len(Ls)
    suf = [0] * (K + 1)
    for i in range(K - 1, -1, -1):
        suf[i] = suf[i + 1] + cs[i]  # suf[i] = Σ_{q ≥ i} c of the i-th by L
    C = suf[0]
    u = int(now) + 1
    while True:
        if K * u + C + sc + 1 > M:  # round u itself: only gets worse
            return None
        W = u + ec - 1
        target = u
        for p in range(bisect_right(Ls, u), K):  # jobs with L_j > u
            Lp = Ls[p]
            first = bisect_left(Ls, Lp)  # jobs with L_j ≥ L_p
            held = suf[first] + (K - first) * Lp  # running jobs in round L_p
            if Lp <= W:  # inside the window
                if held + sc + 1 + Lp - u > M:
                    target = max(target, min(held + sc + 1 + Lp - M, Lp + 1))
            elif held > M:  # after the window: until the window reaches L_p
                target = max(target, Lp - ec + 1)
        if ec >= 2:
            i = bisect_left(Ls, W)  # jobs still running in round W
            if suf[i] + (K - i) * W + sc + ec > M:
                if i == K:
                    return None
                target = max(target, Ls[i] - ec + 2)
        if target == u:
            return u
        u = target


def peak_sorted(Ls: Sequence[int], cs: Sequence[int], now: int) -> int:
    """:func:`future_peak` at round ``now`` of jobs given by ``L_j`` (ascending) and ``c_j``.

    A job with ``L_j`` (its expected last round) and ``c_j`` holds ``c_j + τ`` in round
    ``τ`` up to round ``max(L_j, now)`` (a running job past its estimate is expected to
    end now; a job starting now with ``s`` and ``r`` rounds has ``c = s + 1 − now``,
    ``L = now + r − 1``).  The peak is ``max_p Σ_{q ≥ p} (c_q + max(L_p, now))``: one
    backward pass, no sort (the same integer as :func:`future_peak`, which sorts by
    ``remaining = max(L, now) − now + 1``; ``s + g = c + now − 1``).
    """
    acc = k = best = 0
    for i in range(len(Ls) - 1, -1, -1):
        acc += cs[i]
        k += 1
        T = Ls[i]
        v = acc + k * (T if T > now else now)
        if v > best:
            best = v
    return best


class RunningSet:
    """The running jobs of a future-check policy, kept sorted by ``L_j`` (issue 54).

    :class:`~kvopt.policy.mcsf.FutureCheckGreedy` rebuilt and sorted the running set's
    lists at every call (a dozen jobs, 160,000 calls per 10⁵ requests); ``L_j =
    start + estimate − 1`` and ``c_j = s_j − start + 1`` do not change while the job
    runs, so the set is kept in ``L`` order, updated on start and end, and read by
    :func:`peak_sorted` and :func:`next_fit_round_sorted` as it is.
    """

    __slots__ = ("Ls", "cs", "keys", "where")

    def __init__(self) -> None:
        self.Ls: list[int] = []  # L_j, ascending
        self.cs: list[int] = []  # c_j beside them
        self.keys: list[tuple[int, int]] = []  # (L_j, job), the sort key
        self.where: dict[int, int] = {}  # job -> L_j

    def __len__(self) -> int:
        return len(self.Ls)

    def add(self, job: int, prompt: int, start: int, estimate: int) -> None:
        L = start + estimate - 1
        i = bisect_left(self.keys, (L, job))
        self.keys.insert(i, (L, job))
        self.Ls.insert(i, L)
        self.cs.insert(i, prompt - start + 1)
        self.where[job] = L

    def remove(self, job: int) -> None:
        L = self.where.pop(job)
        i = bisect_left(self.keys, (L, job))
        del self.keys[i], self.Ls[i], self.cs[i]
