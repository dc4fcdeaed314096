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
"""

from __future__ import annotations

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
    """
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
