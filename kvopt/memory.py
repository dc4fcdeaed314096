"""Memory held over time by a set of attempts (SPEC §1: an attempt of job ``i`` started at
``S`` holds ``s_i + (t − S) + 1`` in round ``t``): the exact piecewise-linear profile the
checker reads (:func:`memory_segments`) and the dense per-round one plots draw
(:func:`memory_profile`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from .instance import Instance


class AttemptColumns(Protocol):
    """What this module and :mod:`kvopt.checker` read of a schedule: its attempt columns
    ``(job, start, rounds, completed)``.  :class:`kvopt.schedule.Schedule` has them; naming
    the protocol here, not the class, keeps ``schedule`` → ``checker`` → ``memory`` one way
    (no import circle, not even for types)."""

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...


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
    m = len(start)
    end = start + rounds
    const = prompts[job].astype(np.int64, copy=False)  # memory in round t is const + t; in
    const += 1  # place: at 35 M attempts a new array costs (page faults) more than the sum
    const -= start
    # the starts and the ends each in order (a stable sort: timsort takes a schedule ordered
    # by start, and its nearly ordered ends, in about linear time), the sums of ``const``
    # over each, and the rounds where something starts or ends; at a bound b the running
    # attempts are those started at or before b less those ended at or before b, all in
    # int64 (exact; issue 54: np.unique's sort and inverse were half the checker at 35 M)
    cs = np.zeros(m + 1, np.int64)
    ce = np.zeros(m + 1, np.int64)
    if bool((start[1:] >= start[:-1]).all()):  # the usual order: no sort, no copies
        s_sorted = start
        np.cumsum(const, out=cs[1:])
    else:
        so = np.argsort(start, kind="stable")
        s_sorted = start[so]
        np.cumsum(const[so], out=cs[1:])
    eo = np.argsort(end, kind="stable")
    np.take(const, eo, out=ce[1:])
    np.cumsum(ce[1:], out=ce[1:])
    np.take(end, eo, out=const)  # the ends in order (const is summed already)
    both = np.concatenate([s_sorted, const])
    both.sort(kind="stable")
    keep = np.empty(len(both), bool)
    np.not_equal(both[1:], both[:-1], out=keep[:-1])
    keep[-1] = True
    bounds = both[keep]
    ks = np.searchsorted(s_sorted, bounds, side="right")
    ke = np.searchsorted(const, bounds, side="right")
    return bounds, cs[ks] - ce[ke], ks - ke


def memory_profile(
    instance: Instance, schedule: AttemptColumns, horizon: int | None = None
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


__all__ = ["AttemptColumns", "memory_profile", "memory_segments"]
