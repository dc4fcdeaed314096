"""Checker speed: 100,000 attempts over 10^7 rounds (issue: "takes seconds").

    python benchmarks/checker.py

Builds a valid schedule with kills and overlapping attempts and times
``check_schedule`` (best of 3).
"""

from __future__ import annotations

import time

import numpy as np

from kvopt.instance import Instance
from kvopt.schedule import Attempt, Schedule, check_schedule


def build(n_jobs: int = 50_000, horizon: int = 10**7, seed: int = 0):
    rng = np.random.default_rng(seed)
    resp = rng.integers(50, 500, size=n_jobs)
    prompt = rng.integers(1, 200, size=n_jobs)
    inst = Instance.from_arrays(4096, prompt, resp)
    # 2 lanes; each job gets one killed attempt then its completing attempt
    lanes = np.zeros(2, dtype=np.int64)
    attempts = []
    for j in range(n_jobs):
        lane = j % 2
        kill = int(rng.integers(1, resp[j]))
        attempts.append(Attempt(j, int(lanes[lane]), kill, False))
        lanes[lane] += kill
        attempts.append(Attempt(j, int(lanes[lane]), int(resp[j]), True))
        lanes[lane] += resp[j]
    return inst, Schedule(tuple(attempts), inst.memory)


def main() -> None:
    inst, sched = build()
    t_end = max(a.end for a in sched.attempts)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        res = check_schedule(inst, sched)
        best = min(best, time.perf_counter() - t0)
    print(
        f"attempts={len(sched.attempts):,} rounds={t_end:,} valid={res.valid} "
        f"peak={res.peak_memory}/{inst.memory} check_seconds={best:.3f}"
    )


if __name__ == "__main__":
    main()
