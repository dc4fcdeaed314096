"""Latencies in seconds and the lower bound on Opt's total latency (SPEC §10).

:func:`seconds_report` turns a finished run (its schedule, the realized round
instance and the clock of :mod:`kvopt.engine.clock`) into the per-request lists and
per-run metrics of SPEC §10, and :func:`latency_bound` gives a lower bound on the
optimal ``Σ E_i`` for the same requests, arrival times and time model.

Per request (seconds): completion ``Ĉ_i = τ_{C_i}``; latency ``E_i = Ĉ_i − α_i``; time to
first token ``F_i = τ_{start+1} − α_i`` for its first attempt; per-token latency
``E_i / o_i``; waiting ``τ_{start} − α_i`` for its completing attempt.  ``α_i`` is the
job's ``arrival_time``; on a round instance it is ``τ_{a_i}`` (the request arrives when
its arrival round begins).

Per run: mean, median, P95, P99 (linear interpolation between order statistics, numpy's
default); token throughput ``Σ o_i / (max Ĉ_i − min α_i)``; kills and the rounds of killed
attempts; memory utilisation ``Σ K_t·d_t / (M·Σ d_t)`` over the rounds in which
something runs.

**The bound** (proofs in ``docs/explanation/seconds.md``), for any schedule, killed
attempts included:

* ``solo``: each request alone from its arrival.  Its completing attempt runs ``o_i``
  consecutive rounds starting no earlier than ``α_i``, and round ``u`` of it lasts at
  least what job ``i`` alone puts in it: ``c0 + c_b + c_k (s_i + u + 1)``, plus
  ``c_p s_i + c_q s_i²`` for ``u = 0``.  So ``E_i ≥ o_i (c0 + c_b) + c_k A_i + c_p s_i +
  c_q s_i²`` (``A_i`` the area of SPEC §1); under ``unit`` on a timed instance also
  ``+ ⌈α_i⌉ − α_i``.
* ``area``: the ``k``-th completion ``Ĉ_(k)`` is the sum of the durations of the rounds
  before it.  Those rounds held the ``k`` completed jobs' areas (≥ ``S_k``, the sum of
  the ``k`` smallest areas), so there are at least ``⌈S_k / M⌉`` of them, their ``K_t``
  sum to at least ``S_k``, their ``b_t`` to at least ``O_k`` (the ``k`` smallest
  responses), their ``P_t`` and ``Q_t`` to at least ``P_k`` and ``Q_k`` (the ``k``
  smallest prompts, squared prompts).  With every coefficient ≥ 0:
  ``Ĉ_(k) ≥ c0 ⌈S_k/M⌉ + c_b O_k + c_k S_k + c_p P_k + c_q Q_k`` and
  ``Σ E_i ≥ Σ_k Ĉ_(k) − Σ α_i``.
* ``srpt``: a single machine.  Give job ``i`` the **work** ``w_{i,t} = c0 K_{i,t}/M + c_b +
  c_k K_{i,t}`` in each round ``t`` it runs, holding ``K_{i,t}``, plus ``c_p s_i + c_q s_i²``
  in its first round.  In every round the works add up to
  ``c0 K_t/M + c_b b_t + c_k K_t + c_p P_t + c_q Q_t ≤ d_t`` (as ``K_t ≤ M``): spread over the
  round, they are a fractional schedule of one machine of speed 1.  Job ``i``'s completing
  attempt gets ``p_i = (c0/M + c_k) A_i + c_b o_i + c_p s_i + c_q s_i²`` of work, all between
  ``α_i`` and ``Ĉ_i``.  So ``Σ Ĉ_i`` is at least the optimum of ``1 | r_j, pmtn | Σ C_j``
  with works ``p_i`` released at ``α_i``, which SRPT attains (Schrage 1968; processor sharing
  does no better), and ``Σ E_i ≥ SRPT − Σ α_i``.
* ``windows``: the area bound per window of arrivals.  Split the jobs, in arrival order,
  into windows; a window ``W`` whose earliest arrival is ``r_W`` has none of its rounds
  before ``τ = r_W``, so its ``k``-th completion is at least ``r_W`` plus the area
  bound's ``Ĉ_(k)`` of ``W`` alone.  The latencies of disjoint windows add up, so
  ``Σ E_i ≥ Σ_W max(solo(W), Σ_k (r_W + Ĉ_(k)(W)) − Σ_{i∈W} α_i)`` for every partition; the
  best partition into windows of :data:`WINDOW_BLOCKS` equal blocks is found by dynamic
  programming.  (One window is the area bound; singletons are the solo bound.)
* under ``unit`` also the bounds of SPEC §2 on flow time (``kvopt bound`` minus
  ``Σ a_i``), plus ``Σ (⌈α_i⌉ − α_i)`` on a timed instance.

The report names the best of them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..bound import lower_bounds
from ..engine.clock import Clock, clock_of
from ..instance import Instance
from ..schedule import Schedule, last_ends
from .timemodel import TimeModel

#: The per-run metrics of ``simulate --json``'s ``"seconds"`` block, in order (SPEC §10).
METRICS = (
    "mean_latency",
    "median_latency",
    "p95_latency",
    "p99_latency",
    "mean_ttft",
    "p95_ttft",
    "mean_per_token",
    "p95_per_token",
    "throughput",
    "kills",
    "killed_rounds",
    "utilisation",
)


@dataclass(frozen=True)
class LatencyBound:
    """A lower bound on the optimal ``Σ E_i`` (seconds), the name of the best, every candidate."""

    value: float
    name: str
    candidates: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "name": self.name}


@dataclass(frozen=True)
class SecondsReport:
    """The ``"seconds"`` block of ``kvopt simulate --json`` (SPEC §10) and the extra lists."""

    time_model: TimeModel
    arrival_time: tuple[float, ...]
    arrival_round: tuple[int, ...]
    completion: tuple[float, ...]
    latency: tuple[float, ...]
    ttft: tuple[float, ...]
    per_token: tuple[float, ...]
    waiting: tuple[float, ...]
    metrics: Mapping[str, float]
    bound: LatencyBound

    @property
    def total_latency(self) -> float:
        return float(sum(self.latency))

    @property
    def ratio(self) -> float:
        """``Σ E_i`` over the bound: at least the true ratio to Opt (an upper bound on it)."""
        return self.total_latency / self.bound.value if self.bound.value > 0 else math.inf

    def to_dict(self) -> dict[str, Any]:
        """The JSON block of SPEC §10, exactly: the lists in job order, ``metrics``, ``bound``.

        (``total_latency`` and ``ratio`` are ``sum(latency)`` and its ratio to
        ``bound["value"]``; the time model is the one the command was given.)
        """
        return {
            "completion": list(self.completion),
            "latency": list(self.latency),
            "ttft": list(self.ttft),
            "arrival_round": list(self.arrival_round),
            "metrics": dict(self.metrics),
            "bound": self.bound.to_dict(),
        }


def arrival_seconds(
    instance: Instance, clock: Clock, realized: Instance | None = None
) -> np.ndarray:
    """``α_i``: the arrival times of a timed instance, else the start of each arrival round."""
    if instance.arrival_times is not None:
        return np.asarray(instance.arrival_times, dtype=float)
    rounds = (realized or instance).arrivals.tolist()
    return np.array([clock.tau(a) for a in rounds], dtype=float)


def quantile(values: Sequence[float] | np.ndarray, q: float) -> float:
    """The ``q``-quantile with linear interpolation between order statistics (SPEC §10)."""
    a = np.asarray(values, dtype=float)
    return float(np.quantile(a, q)) if a.size else 0.0


def latency_bound(instance: Instance, model: TimeModel) -> LatencyBound:
    """A lower bound on the optimal ``Σ E_i`` (seconds) and its name (module docstring).

    ``instance`` is the instance as given.  On a round instance with arrivals under a
    non-unit model the arrival times ``τ_{a_i}`` depend on the schedule, so only the
    ``solo`` bound (which needs none) applies there.
    """
    n = instance.n
    if n == 0:
        return LatencyBound(0.0, "none", {})
    s = instance.prompts.astype(float)
    o = instance.responses.astype(float)
    area = instance.areas.astype(float)
    m = model
    cands: dict[str, float] = {}
    solo = o * (m.c0 + m.c_b) + m.c_k * area + m.c_p * s + m.c_q * s * s
    timed = instance.arrival_times is not None
    if timed and model.is_unit:
        solo = solo + (np.ceil(instance.arrival_times) - instance.arrival_times)
    cands["solo"] = float(solo.sum())
    # area: Σ_k Ĉ_(k) − Σ α_i (needs the α_i; on a round instance α_i = τ_{a_i} is only
    # known from the schedule, so the area bounds are used there only without arrivals)
    if timed or not instance.has_arrivals:
        alpha = instance.arrival_times if timed else np.zeros(n)
        cands["area"] = _window_area(instance, model, np.arange(n), alpha)
        work = (m.c0 / instance.memory + m.c_k) * area + m.c_b * o + m.c_p * s + m.c_q * s * s
        cands["srpt"] = srpt_total(work, alpha) - float(alpha.sum())
        if timed and n > 1:
            cands["windows"] = _windows_bound(instance, model, alpha, solo)
    if model.is_unit:
        b = lower_bounds(instance)
        rounding = (
            float((np.ceil(instance.arrival_times) - instance.arrival_times).sum())
            if timed
            else 0.0
        )
        cands["flow"] = float(b.best - int(instance.arrivals.sum())) + rounding
    name, value = max(cands.items(), key=lambda kv: kv[1])
    return LatencyBound(max(0.0, value), name, cands)


def srpt_total(work: np.ndarray, release: np.ndarray) -> float:
    """``Σ C_j`` of shortest-remaining-processing-time on one machine of speed 1: the optimum
    of ``1 | r_j, pmtn | Σ C_j`` (Schrage 1968), with works ``work`` released at ``release``."""
    import heapq

    order = np.argsort(release, kind="stable")
    r = release[order].tolist()
    w = work[order].tolist()
    n = len(r)
    heap: list[tuple[float, int]] = []
    t = 0.0
    total = 0.0
    i = 0
    while i < n or heap:
        if not heap:
            t = max(t, r[i])
        while i < n and r[i] <= t:
            heapq.heappush(heap, (w[i], i))
            i += 1
        rem, j = heapq.heappop(heap)
        nxt = r[i] if i < n else math.inf
        if t + rem <= nxt:
            t += rem
            total += t
        else:
            heapq.heappush(heap, (rem - (nxt - t), j))
            t = nxt
    return total


def _window_area(instance: Instance, model: TimeModel, idx: np.ndarray, alpha: np.ndarray) -> float:
    """``Σ_k (r + LB_k) − Σ α_i`` over the jobs ``idx``, ``r`` their earliest arrival."""
    m = model
    s = instance.prompts[idx].astype(float)
    o = instance.responses[idx].astype(float)
    ks = np.cumsum(np.sort(instance.areas[idx]))
    ck = (
        m.c0 * np.ceil(ks / instance.memory)
        + m.c_b * np.cumsum(np.sort(o))
        + m.c_k * ks
        + m.c_p * np.cumsum(np.sort(s))
        + m.c_q * np.cumsum(np.sort(s * s))
    )
    a = alpha[idx]
    return float(ck.sum() + len(idx) * a.min() - a.sum())


#: Arrival windows the partition bound considers (blocks of equal count, in arrival order).
WINDOW_BLOCKS = 40


def _windows_bound(instance: Instance, model: TimeModel, alpha: np.ndarray,
                   solo: np.ndarray) -> float:  # fmt: skip
    """The best partition of the jobs, in arrival order, into windows of consecutive blocks:
    ``Σ_W max(solo(W), area(W))`` (module docstring), by dynamic programming."""
    n = instance.n
    order = np.argsort(alpha, kind="stable")
    nb = min(n, WINDOW_BLOCKS)
    cuts = [round(k * n / nb) for k in range(nb + 1)]
    solo_sorted = np.concatenate([[0.0], np.cumsum(solo[order])])
    best = [0.0] + [-math.inf] * nb
    for j in range(1, nb + 1):
        for i in range(j):
            lo, hi = cuts[i], cuts[j]
            val = max(
                float(solo_sorted[hi] - solo_sorted[lo]),
                _window_area(instance, model, order[lo:hi], alpha),
            )
            if best[i] + val > best[j]:
                best[j] = best[i] + val
    return best[nb]


def seconds_report(
    instance: Instance,
    schedule: Schedule,
    model: TimeModel,
    *,
    realized: Instance | None = None,
    clock: Clock | None = None,
) -> SecondsReport:
    """The per-request lists and per-run metrics of a checked schedule (SPEC §10).

    ``instance`` is the instance as given (timed or not); ``realized`` the round instance
    the schedule was checked against (default ``instance``); ``clock`` the run's clock
    (default: rebuilt from the schedule, :func:`~kvopt.engine.clock.clock_of`).
    """
    real = realized if realized is not None else instance
    if clock is None:
        clock = clock_of(real, schedule, model)
    n = instance.n
    alpha = arrival_seconds(instance, clock, real)
    job, start, rounds, completed = schedule.columns()  # no Attempt objects (issue 54)
    low = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(low, job, start)
    first = np.where(low == np.iinfo(np.int64).max, -1, low).tolist()
    ends = last_ends(job, start, completed & (job >= 0) & (job < n), n)
    done = [-1 if c is None else c for c in ends]
    o = instance.responses.tolist()
    tau = clock.tau
    comp = np.array([tau(done[i] + o[i]) for i in range(n)], dtype=float)
    lat = comp - alpha
    ttft = np.array([tau(first[i] + 1) for i in range(n)], dtype=float) - alpha
    wait = np.array([tau(done[i]) for i in range(n)], dtype=float) - alpha
    per_tok = lat / np.asarray(o, dtype=float) if n else lat
    span = float(comp.max() - alpha.min()) if n else 0.0
    busy = clock.busy_seconds
    metrics = {
        "mean_latency": float(lat.mean()) if n else 0.0,
        "median_latency": quantile(lat, 0.5),
        "p95_latency": quantile(lat, 0.95),
        "p99_latency": quantile(lat, 0.99),
        "mean_ttft": float(ttft.mean()) if n else 0.0,
        "p95_ttft": quantile(ttft, 0.95),
        "mean_per_token": float(per_tok.mean()) if n else 0.0,
        "p95_per_token": quantile(per_tok, 0.95),
        "throughput": float(sum(o)) / span if span > 0 else 0.0,
        "kills": int(np.count_nonzero(~completed)),
        "killed_rounds": int(rounds[~completed].sum()),
        "utilisation": clock.memory_seconds / (instance.memory * busy) if busy > 0 else 0.0,
    }
    return SecondsReport(
        time_model=model,
        arrival_time=tuple(float(x) for x in alpha),
        arrival_round=tuple(int(x) for x in real.arrivals.tolist()),
        completion=tuple(float(x) for x in comp),
        latency=tuple(float(x) for x in lat),
        ttft=tuple(float(x) for x in ttft),
        per_token=tuple(float(x) for x in per_tok),
        waiting=tuple(float(x) for x in wait),
        metrics=metrics,
        bound=latency_bound(instance, model),
    )


__all__ = [
    "METRICS",
    "LatencyBound",
    "SecondsReport",
    "arrival_seconds",
    "latency_bound",
    "quantile",
    "seconds_report",
]
