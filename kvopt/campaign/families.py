"""Growth families (SPEC §9): the directions that double an instance, and the verdict rules.

A direction builds ``I_0, I_1, …`` from an instance's types (its runs of
identical consecutive jobs, :meth:`kvopt.space.TypedSpace.types`, indexed
from 0): ``memory``, ``count``, ``count:T``, ``memory-count``, ``memory:T+U…``
(see :class:`Direction`).  :func:`direction_verdict` and :func:`sweep_verdict`
turn certified ratios into ``grows``, ``bounded`` or ``unclear``;
:mod:`kvopt.campaign.growth` runs the sweeps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from ..errors import InputError
from ..space.typed import JobType
from .strategies import fit_exponent

#: A direction grows when its exponent reaches this …
GROWS_EXPONENT = 0.25
#: … over at least this many doublings.
GROWS_DOUBLINGS = 4
#: A direction is bounded when its certified ratio changes by less than this over the last two
#: doublings.
BOUNDED_CHANGE = 0.05


class GrowthVerdict(StrEnum):
    """The verdict of a direction or of a sweep (its value is the JSON string)."""

    __repr__ = str.__repr__

    GROWS = "grows"
    BOUNDED = "bounded"
    UNCLEAR = "unclear"


# --------------------------------------------------------------------------- directions


@dataclass(frozen=True)
class Direction:
    """One way of doubling an instance (see the module docstring)."""

    name: str
    kind: str  # "memory", "count", "count:T", "memory-count", "memory:T"
    types: tuple[int, ...] = ()

    def step(self, memory: int, types: Sequence[JobType]) -> tuple[int, list[JobType]]:
        """The next instance of the family: ``(M, types)`` doubled along this direction."""

        def sized(t: JobType) -> JobType:
            return t._replace(prompt=2 * t.prompt, response=2 * t.response, arrival=2 * t.arrival)

        if self.kind == "memory":
            return 2 * memory, [sized(t) for t in types]
        if self.kind == "count":
            return memory, [t._replace(count=2 * t.count) for t in types]
        if self.kind == "count:T":
            return memory, [t._replace(count=2 * t.count) if k in self.types else t
                            for k, t in enumerate(types)]  # fmt: skip
        if self.kind == "memory-count":
            return 2 * memory, [t._replace(count=2 * t.count) for t in types]
        return 2 * memory, [sized(t) if k in self.types else t._replace(count=2 * t.count)
                            for k, t in enumerate(types)]  # fmt: skip


def parse_direction(name: str, n_types: int) -> Direction:
    """The direction called ``name`` for an instance of ``n_types`` types (:class:`InputError`
    naming ``--directions`` otherwise)."""
    text = name.strip()
    if text in ("memory", "count", "memory-count"):
        return Direction(text, text)
    head, sep, rest = text.partition(":")
    if sep and head in ("count", "memory"):
        try:
            idx = tuple(int(x) for x in rest.split("+"))
        except ValueError:
            idx = ()
        if not idx or any(not 0 <= k < n_types for k in idx) or len(set(idx)) != len(idx):
            raise InputError(
                f"direction {text!r} needs type indices 0..{n_types - 1} (the record's instance "
                f"has {n_types} type(s))",
                source="--directions",
            )
        if head == "count" and len(idx) != 1:
            raise InputError(f"direction {text!r}: count:T takes one type", source="--directions")
        return Direction(text, f"{head}:T", tuple(sorted(idx)))
    raise InputError(
        f"unknown direction {text!r} (known: memory, count, count:T, memory-count, memory:T+U…)",
        source="--directions",
    )


def directions_for(n_types: int) -> list[str]:
    """Every direction that applies to an instance of ``n_types`` types (one type: the three
    global ones; more: also ``count:T`` and ``memory:T`` for every type)."""
    out = ["memory", "count", "memory-count"]
    if n_types > 1:
        out += [f"count:{k}" for k in range(n_types)]
        out += [f"memory:{k}" for k in range(n_types)]
    return out


# --------------------------------------------------------------------------- verdicts


def tail_exponent(factors: Sequence[float], ratios: Sequence[float]) -> float | None:
    """Least-squares slope of ``log ratio`` against ``log factor`` over the upper half of the
    points (at least two); ``None`` with fewer than two points."""
    pts = sorted(zip(factors, ratios))
    if len(pts) < 2:
        return None
    tail = pts[len(pts) // 2 :] if len(pts) >= 4 else pts[-2:]
    return fit_exponent([p[0] for p in tail], [p[1] for p in tail])


def direction_verdict(
    factors: Sequence[float], ratios: Sequence[float]
) -> tuple[float | None, GrowthVerdict]:
    """``(exponent, verdict)`` of one direction's certified ratios (module docstring).

    >>> direction_verdict([1, 2, 4, 8, 16], [1, 1.5, 2, 2.8, 4])[1]
    'grows'
    >>> direction_verdict([1, 2, 4], [3, 3.05, 3.06])[1]
    'bounded'
    """
    pts = sorted(zip(factors, ratios))
    exp = tail_exponent([p[0] for p in pts], [p[1] for p in pts])
    doublings = math.log2(pts[-1][0] / pts[0][0]) if len(pts) >= 2 else 0.0
    if exp is not None and exp >= GROWS_EXPONENT and doublings >= GROWS_DOUBLINGS - 1e-9:
        return exp, GrowthVerdict.GROWS
    last = [p for p in pts if p[0] >= pts[-1][0] / 4 - 1e-12]
    if len(pts) >= 3 and pts[-1][0] / last[0][0] >= 4 - 1e-9:
        lo, hi = min(p[1] for p in last), max(p[1] for p in last)
        if lo > 0 and hi / lo - 1 < BOUNDED_CHANGE:
            return exp, GrowthVerdict.BOUNDED
    return exp, GrowthVerdict.UNCLEAR


def sweep_verdict(verdicts: Sequence[str]) -> GrowthVerdict:
    """``grows`` if any direction grows, ``bounded`` if every one is bounded, else ``unclear``."""
    if any(v == GrowthVerdict.GROWS for v in verdicts):
        return GrowthVerdict.GROWS
    if verdicts and all(v == GrowthVerdict.BOUNDED for v in verdicts):
        return GrowthVerdict.BOUNDED
    return GrowthVerdict.UNCLEAR


__all__ = [
    "BOUNDED_CHANGE",
    "GROWS_DOUBLINGS",
    "GROWS_EXPONENT",
    "Direction",
    "GrowthVerdict",
    "direction_verdict",
    "directions_for",
    "parse_direction",
    "sweep_verdict",
    "tail_exponent",
]
