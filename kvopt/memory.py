"""Memory held over time by a set of attempts (SPEC §1: an attempt of job ``i`` started at
``S`` holds ``s_i + (t − S) + 1`` in round ``t``): the exact piecewise-linear profile the
checker reads (:func:`memory_segments`) and the dense per-round one plots draw
(:func:`memory_profile`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .instance import Instance
    from .schedule import Schedule


def memory_segments(
    prompts: np.ndarray, job: np.ndarray, start: np.ndarray, rounds: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact memory as a piecewise-linear function of the round.

    Returns ``(bounds, C, K)``: for ``bounds[k] ≤ t < bounds[k+1]`` the running
    attempts hold ``C[k] + K[k]·t`` (``K[k]`` = number of running attempts).
    Attempt rows must already be valid (``rounds ≥ 1``, jobs in range).
    """
    if not len(start):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    end = start + rounds
    const = prompts[job] + 1 - start  # memory in round t is const + t
    # the starts and the ends each in order (a stable sort: timsort takes a schedule ordered
    # by start, and its nearly ordered ends, in about linear time), the sums of ``const``
    # over each, and the rounds where something starts or ends; at a bound b the running
    # attempts are those started at or before b less those ended at or before b, all in
    # int64 (exact; issue 54: np.unique's sort and inverse were half the checker at 35 M)
    if bool((start[1:] >= start[:-1]).all()):  # the usual order: no sort, no copies
        s_sorted, s_const = start, const
    else:
        so = np.argsort(start, kind="stable")
        s_sorted, s_const = start[so], const[so]
    eo = np.argsort(end, kind="stable")
    e_sorted = end[eo]
    both = np.sort(np.concatenate([s_sorted, e_sorted]), kind="stable")
    bounds = both[np.append(both[1:] != both[:-1], True)]
    ks = np.searchsorted(s_sorted, bounds, side="right")
    ke = np.searchsorted(e_sorted, bounds, side="right")
    cs = np.concatenate([[0], np.cumsum(s_const)])
    ce = np.concatenate([[0], np.cumsum(const[eo])])
    return bounds, cs[ks] - ce[ke], ks - ke


def memory_profile(
    instance: Instance, schedule: Schedule, horizon: int | None = None
) -> np.ndarray:
    """Memory held in each round ``0 … horizon−1`` (dense difference arrays; for plots and tests)."""
    job, start, rounds, _ = schedule.columns()
    keep = (job >= 0) & (job < instance.n) & (rounds >= 1) & (start >= 0)
    job, start, rounds = job[keep], start[keep], rounds[keep]
    end = start + rounds
    if horizon is None:
        horizon = int(end.max()) if len(end) else 0
    const = instance.prompts[job] + 1 - start
    dC = np.zeros(horizon + 1, dtype=np.int64)
    dK = np.zeros(horizon + 1, dtype=np.int64)
    s_clip = np.minimum(start, horizon)
    e_clip = np.minimum(end, horizon)
    np.add.at(dC, s_clip, const)
    np.add.at(dC, e_clip, -const)
    np.add.at(dK, s_clip, 1)
    np.add.at(dK, e_clip, -1)
    t = np.arange(horizon, dtype=np.int64)
    return np.cumsum(dC)[:horizon] + t * np.cumsum(dK)[:horizon]


__all__ = ["memory_profile", "memory_segments"]
