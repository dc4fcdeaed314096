"""The direction finder of a growth sweep (SPEC §9): the fastest-growing exponent vectors.

Without a given direction, ``kvopt grow`` probes directions of the exponent lattice
``{0, ½, 1}^(1+4T)`` (:mod:`kvopt.campaign.families`) with short sweeps and returns the
best ones for a full sweep (:func:`kvopt.campaign.growth.grow`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..space.typed import JobType
from .families import Direction, finder_starts, neighbours, parse_direction
from .strategies import fit_exponent

#: Probes in all (the named directions included), the doublings of one probe, the directions
#: returned for a full sweep, and the exponent margin a climb needs.
FIND_BUDGET = 60
FIND_DOUBLINGS = 3
FIND_TOP = 3
FIND_MARGIN = 0.02


@dataclass(frozen=True)
class Probe:
    """A direction probed by the finder: its short sweep's exponent and last certified ratio."""

    direction: Direction
    exponent: float | None
    ratio: float
    doublings: float

    @property
    def score(self) -> tuple[float, float]:
        return (-math.inf if self.exponent is None else round(self.exponent, 3), self.ratio)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.direction.name, "vector": self.direction.vector(),
                "exponent": self.exponent, "ratio_certified": self.ratio,
                "doublings": round(self.doublings, 3)}  # fmt: skip


@dataclass(frozen=True)
class Finder:
    """What :func:`find_directions` did: every probe in order and the directions it chose."""

    probes: tuple[Probe, ...]
    chosen: tuple[Direction, ...]
    budget: int

    def to_dict(self) -> dict[str, Any]:
        return {"method": "first-improvement coordinate ascent over the exponent lattice from "
                          "the named directions (find_directions)",
                "budget": self.budget, "probe_doublings": FIND_DOUBLINGS,
                "chosen": [d.name for d in self.chosen],
                "probes": [p.to_dict() for p in self.probes]}  # fmt: skip


def find_directions(n_types: int, sweep, *, budget: int = FIND_BUDGET, top: int = FIND_TOP,
                    types: Sequence[JobType] | None = None, key=None, say=None,
                    stop=None) -> Finder:  # fmt: skip
    """The fastest-growing directions of an instance of ``n_types`` types (SPEC §9).

    ``sweep(direction)`` returns a short family (:data:`FIND_DOUBLINGS` doublings of the axis,
    cheap certified ratios).  A probe is scored by the least-squares exponent of its certified
    ratio over all its points (per doubling of its axis), then by its last ratio.

    The search is a first-improvement coordinate ascent over the exponent lattice: it probes
    the starts (:func:`~kvopt.campaign.families.finder_starts`: the named directions, and M with
    the prompts, with or without the counts), then climbs from the best start not yet climbed
    from, scanning the neighbours of :func:`~kvopt.campaign.families.neighbours` (one knob —
    M, a type's count, prompt, response, sizes or arrival — moved to another value of
    {0, ½, 1}) in order and moving to the first whose exponent is higher by more than
    :data:`FIND_MARGIN`, until no neighbour improves; then the next start.  Why coordinate
    ascent: the lattice has ``3^(1+4T)`` points but a growth law is reached from a named
    direction by one or two knob moves (the square-root laws move one or two counts from 1 to
    ½), each probe costs a few simulations, and a first-improvement scan spends the budget on
    the climb rather than on a full neighbourhood.  ``budget`` probes in all (starts
    included); ``key(direction)`` identifies directions that build the same family (default
    the vector text); the ``top`` best distinct probes are returned.  Deterministic.
    ``stop()`` (a time budget) ends the search early once it returns true: the first probe
    always runs, so that a direction is returned.
    """
    key = key or (lambda d: d.text())
    probes: dict[Any, Probe] = {}
    order: list[Probe] = []

    def probe(d: Direction) -> Probe | None:
        k = key(d)
        if k in probes:
            return probes[k]
        if len(order) >= budget or (order and stop is not None and stop()):
            return None
        pts = sweep(d)
        xs, rs = [p.factor for p in pts], [p.point.ratio_ub for p in pts]
        pr = Probe(d, fit_exponent(xs, rs) if len(pts) >= 2 else None, rs[-1],
                   math.log2(xs[-1]) if xs else 0.0)  # fmt: skip
        probes[k] = pr
        order.append(pr)
        if say:
            e = "-" if pr.exponent is None else f"{pr.exponent:.3f}"
            say(f"finder: probe {len(order)}/{budget} {d.name}: exponent {e}, ratio {pr.ratio:.4g}")
        return pr

    starts = [p for p in (probe(parse_direction(n, n_types)) for n in finder_starts(n_types))
              if p is not None]  # fmt: skip
    climbed: set[Any] = set()
    for start in sorted(starts, key=lambda p: p.score, reverse=True):
        if len(order) >= budget:
            break
        cur = start
        while len(order) < budget and key(cur.direction) not in climbed:
            climbed.add(key(cur.direction))
            nxt = None
            for cand in neighbours(cur.direction, types):
                got = probe(cand)
                if got is None:
                    break
                if got.score[0] > cur.score[0] + FIND_MARGIN:
                    nxt = got
                    break
            if nxt is None:
                break
            cur = nxt
    ranked = sorted(order, key=lambda p: p.score, reverse=True)
    return Finder(tuple(order), tuple(p.direction for p in ranked[:top]), budget)


__all__ = [
    "FIND_BUDGET",
    "FIND_DOUBLINGS",
    "FIND_MARGIN",
    "FIND_TOP",
    "Finder",
    "Probe",
    "find_directions",
]
