"""Lower bounds on the clairvoyant optimum (SPEC §2).

* :func:`area_bound` — main paper, Lemma 1: with areas sorted ascending,
  ``Opt ≥ (1/M) Σ_r (n − r + 1) A_(r)``.  The r-th job to complete cannot
  finish before ``M`` area per round has paid for the ``r`` smallest areas.
  Because ``Opt`` is an integer, the reported bound is the ceiling
  (``area_exact`` keeps the fraction's value).
* :func:`processing_bound` — Lemma 3: ``Opt ≥ Σ (a_i + o_i)``.
* :func:`makespan_bounds` — ``Opt_span ≥ max(max_i (a_i+o_i), ⌈Σ A_i / M⌉)``.
* :func:`machines_bound` — only with a batch cap ``B`` (SPEC §10.1, ``max_batch``), and the
  one bound here that uses it (reported as ``machines``): at most ``B`` jobs run in any
  round, so the jobs' intervals ``[S_i, C_i)`` colour with ``B`` colours (interval graphs
  are perfect) and a capped schedule is a schedule on ``B`` identical machines, none
  starting before ``a_min = min_i a_i``.  On ``B`` machines SPT minimises ``Σ C_i``
  (Conway, Maxwell and Miller, *Theory of Scheduling*, 1967, §5.3), so with the responses
  sorted ascending ``o_(0) ≤ … ≤ o_(n−1)``:
  ``Opt ≥ n a_min + Σ_r ⌈(n − r)/B⌉ o_(r)`` (the job at position ``r`` delays the
  ``n − r`` jobs from it on, ``⌈(n − r)/B⌉`` of them on its own machine); makespan:
  ``Opt_span ≥ a_min + ⌈Σ o_i / B⌉``.  Every other bound ignores the cap and stays a lower
  bound (a capped schedule is a schedule of the uncapped model).
* The LP relaxation lives with the exact models (``kvopt.exact``) and is
  passed in by callers that computed it; so is the LP with the completion cliques
  (``kvopt.exact.bounds.cliques``, ``models/cliques.md``: rows that see how far running jobs
  grow, reported as ``cliques``); so does the rank bound
  (``kvopt.exact.bounds.conflict``, ``models/orders.md`` §9: per completion rank, the
  best of the area and of bin-packing bounds that see which jobs cannot share memory),
  which ``kvopt bound`` reports as ``rank``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .instance import Instance


def area_bound_fraction(instance: Instance) -> Fraction:
    """Lemma 1 of the main paper, exactly, as a fraction."""
    n = instance.n
    if n == 0:
        return Fraction(0)
    a = np.sort(instance.areas)
    weights = np.arange(n, 0, -1, dtype=object)  # n − r + 1 for r = 1..n
    total = int(np.dot(a.astype(object), weights))
    return Fraction(total, instance.memory)


def area_bound(instance: Instance) -> int:
    """``⌈(1/M) Σ_r (n − r + 1) A_(r)⌉`` (Lemma 1; ceiling since Opt is integral)."""
    f = area_bound_fraction(instance)
    return -(-f.numerator // f.denominator)


def processing_bound(instance: Instance) -> int:
    """``Σ (a_i + o_i)`` (Lemma 3, with arrivals)."""
    return int(instance.arrivals.sum() + instance.responses.sum())


def makespan_bounds(instance: Instance) -> dict[str, int]:
    """Lower bounds on the optimal makespan: processing ``max(a_i+o_i)`` and area ``⌈Σ A/M⌉``;
    with a batch cap also ``machines``, ``a_min + ⌈Σ o_i / B⌉`` (module doc)."""
    if instance.n == 0:
        out = {"processing": 0, "area": 0}
    else:
        proc = int((instance.arrivals + instance.responses).max())
        area = -(-instance.total_area // instance.memory)
        out = {"processing": proc, "area": int(area)}
    if instance.max_batch is not None:
        out["machines"] = machines_makespan(instance)
    return out


def machines_bound(instance: Instance) -> int | None:
    """The ``B``-machine bound on the total completion under the batch cap ``B`` (module doc:
    SPT on ``B`` identical machines, shifted by the earliest arrival); ``None`` without a cap."""
    cap = instance.max_batch
    if cap is None:
        return None
    n = instance.n
    if n == 0:
        return 0
    o = np.sort(instance.responses).astype(np.int64)
    weights = -(-np.arange(n, 0, -1, dtype=np.int64) // cap)  # ⌈(n − r)/B⌉, r = 0 … n−1
    return int(n * int(instance.arrivals.min()) + int(o @ weights))


def machines_makespan(instance: Instance) -> int:
    """``a_min + ⌈Σ o_i / B⌉`` under the batch cap ``B`` (module doc; 0 without jobs)."""
    if instance.n == 0 or instance.max_batch is None:
        return 0
    return int(instance.arrivals.min()) + -(-int(instance.responses.sum()) // instance.max_batch)


@dataclass(frozen=True)
class Bounds:
    """The lower bounds of SPEC §2 for one instance and the best of them."""

    area: int
    area_exact: float
    processing: int
    lp: float | None
    best: int
    best_name: str
    makespan: dict[str, int]
    makespan_best: int
    makespan_best_name: str
    rank: int | None = None
    cliques: float | None = None
    #: the B-machine bound, only with a batch cap (the one bound that uses it)
    machines: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "area": self.area,
            "area_exact": self.area_exact,
            "processing": self.processing,
        }
        if self.machines is not None:
            d["machines"] = self.machines
        if self.lp is not None:
            d["lp"] = self.lp
        if self.rank is not None:
            d["rank"] = self.rank
        if self.cliques is not None:
            d["cliques"] = self.cliques
        d.update(
            best=self.best,
            best_name=self.best_name,
            makespan={
                **self.makespan,
                "best": self.makespan_best,
                "best_name": self.makespan_best_name,
            },
        )
        return d


def lower_bounds(
    instance: Instance, lp: float | None = None, rank: Any = None, cliques: float | None = None
) -> Bounds:
    """All applicable lower bounds; ``lp`` is the LP relaxation value if computed, ``rank``
    the rank bound if computed (a ``kvopt.exact.bounds.conflict.RankBound``: its ``value``
    bounds the total completion, its ``makespan`` the makespan), ``cliques`` the value of the
    LP with the completion cliques if computed.

    With a batch cap the ``machines`` bound joins them (total and makespan; the only one that
    uses the cap).  Ties in ``best`` go to the cheaper bound (area, then processing, then
    machines, then rank, then lp, then cliques).  The LP values are rounded up (Opt is an integer) after a small
    tolerance for solver round-off.
    """
    area = area_bound(instance)
    proc = processing_bound(instance)
    cands = [("area", area), ("processing", proc)]
    machines = machines_bound(instance)
    if machines is not None:
        cands.append(("machines", machines))
    if rank is not None:
        cands.append(("rank", int(rank.value)))
    if lp is not None:
        cands.append(("lp", int(np.ceil(lp - 1e-6))))
    if cliques is not None:
        cands.append(("cliques", int(np.ceil(cliques - 1e-6))))
    best_name, best = max(cands, key=lambda c: c[1])  # max keeps the first of equals
    ms = makespan_bounds(instance)
    if rank is not None:
        ms["rank"] = int(rank.makespan)
    ms_name, ms_best = max(ms.items(), key=lambda c: c[1])
    return Bounds(
        area=area,
        area_exact=float(area_bound_fraction(instance)),
        processing=proc,
        lp=lp,
        best=int(best),
        best_name=best_name,
        makespan=ms,
        makespan_best=int(ms_best),
        makespan_best_name=ms_name,
        rank=None if rank is None else int(rank.value),
        cliques=cliques,
        machines=machines,
    )
