"""Intervals over seeds (SPEC §10.1, "Reports"): the range below 10 seeds, else a bootstrap.

A bootstrap over 2 or 3 values is no more than their min and max, so below
:data:`BOOTSTRAP_MIN_SEEDS` seeds a summary gives the range and says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

#: From this many seeds on, a summary gives a 95 % bootstrap interval of the mean; below it,
#: the range over seeds (SPEC §10.1, "Reports": a bootstrap over 2 or 3 values is no more
#: than their min and max, so it is called what it is).
BOOTSTRAP_MIN_SEEDS = 10


def interval_kind(seeds: int) -> str:
    """``"range"`` below :data:`BOOTSTRAP_MIN_SEEDS` seeds, else ``"bootstrap95"``."""
    return "range" if seeds < BOOTSTRAP_MIN_SEEDS else "bootstrap95"


def interval_words(seeds: int) -> str:
    """How a report names the interval of ``seeds`` seeds."""
    if interval_kind(seeds) == "range":
        return (f"range over the {seeds} seed(s) (min–max; fewer than {BOOTSTRAP_MIN_SEEDS} "
                "seeds, so no bootstrap interval)")  # fmt: skip
    return "95 % bootstrap interval of the mean"


def seed_interval(values: Iterable[float]) -> tuple[float, float, float]:
    """The mean of ``values`` (one per seed) with their range when fewer than
    :data:`BOOTSTRAP_MIN_SEEDS`, else with its 95 % bootstrap interval (:func:`bootstrap_ci`)."""
    a = np.asarray(list(values), dtype=float)
    if a.size == 0:
        return (math.nan, math.nan, math.nan)
    if interval_kind(a.size) == "range":
        return (float(a.mean()), float(a.min()), float(a.max()))
    return bootstrap_ci(a)


def bootstrap_ci(values: Iterable[float], level: float = 0.95, resamples: int = 2000,
                 seed: int = 0) -> tuple[float, float, float]:  # fmt: skip
    """The mean of ``values`` and its percentile bootstrap interval (seeded, reproducible)."""
    a = np.asarray(list(values), dtype=float)
    if a.size == 0:
        return (math.nan, math.nan, math.nan)
    m = float(a.mean())
    if a.size == 1:
        return (m, m, m)
    rng = np.random.default_rng(seed)
    means = a[rng.integers(0, a.size, size=(resamples, a.size))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, 1 - (1 - level) / 2])
    return (m, float(lo), float(hi))
