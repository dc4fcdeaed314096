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
    m = len(start)
    if not m:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    times = np.concatenate([start, start + rounds])
    # a stable sort (timsort) merges the runs of a schedule already ordered by start; the
    # sums run in int64 (exact), read at the last event of each distinct round (issue 54:
    # np.unique's sort and inverse were half the checker at 35 M attempts)
    order = np.argsort(times, kind="stable")
    t = times[order]
    const = prompts[job] + 1 - start  # memory in round t is const + t
    dC = np.concatenate([const, -const])[order]
    dK = np.where(order < m, 1, -1)
    last = np.append(np.flatnonzero(t[1:] != t[:-1]), 2 * m - 1)
    return t[last], np.cumsum(dC)[last], np.cumsum(dK)[last]


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
