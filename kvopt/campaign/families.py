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
from fractions import Fraction
from typing import NamedTuple

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
#: … or when its increments per doubling shrink at least this fast over the last three steps.
#: 0.7 ≈ 1/√2 accepts a ratio that converges like ``L − c/√x`` or faster (the slowest rate of
#: the paper constructions' corrections) and rejects, with margin, every power law (increments
#: grow by ``2^a`` per doubling) and a logarithm (constant increments, ratio 1).
GEOMETRIC_Q = 0.7
#: A direction whose certified ratio peaked inside the range is ``bounded`` (rule ``peak``)
#: when the points after the peak span at least this many doublings.
PEAK_DOUBLINGS = 2


class GrowthVerdict(StrEnum):
    """The verdict of a direction or of a sweep (its value is the JSON string)."""

    __repr__ = str.__repr__

    GROWS = "grows"
    BOUNDED = "bounded"
    UNCLEAR = "unclear"


# --------------------------------------------------------------------------- directions

#: The exponent lattice of SPEC §9: per step a quantity is multiplied by ``2^e``.
LATTICE = (Fraction(0), Fraction(1, 2), Fraction(1))
#: The per-type fields a direction scales, in :class:`~kvopt.space.typed.JobType` order.
TYPE_FIELDS = ("prompt", "response", "arrival", "count")
#: Vector keys that name several fields of a type at once (``size`` = prompt, response, arrival).
FIELD_GROUPS = {"size": ("prompt", "response", "arrival"), "prompt": ("prompt",),
                "response": ("response",), "arrival": ("arrival",), "count": ("count",)}  # fmt: skip
_ALIASES = ("memory", "count", "memory-count")


def _exp_text(e: Fraction) -> str:
    return str(int(e)) if e.denominator == 1 else "0.5"


@dataclass(frozen=True)
class Direction:
    """A direction of SPEC §9: an exponent vector over M and every type's fields.

    Step ``i`` multiplies M by ``2^(memory·i)`` and each type's prompt, response, arrival and
    count by ``2^(e·i)`` with the field's own ``e`` (``types[T]`` in :data:`TYPE_FIELDS`
    order), every ``e`` in :data:`LATTICE`.  Values are computed from the base instance (no
    rounding drift), rounded half up, and counts, prompts and responses are kept at least 1.
    ``name`` is an alias (``memory``, ``count:1``, …) or the canonical vector text
    (:meth:`text`).
    """

    name: str
    memory: Fraction
    types: tuple[tuple[Fraction, Fraction, Fraction, Fraction], ...]

    def __post_init__(self) -> None:
        for e in (self.memory, *(x for t in self.types for x in t)):
            if e not in LATTICE:  # pragma: no cover - parse_direction checks first
                raise ValueError(f"exponent {e} outside the lattice {{0, 1/2, 1}}")

    # ------------------------------------------------------------------ the vector
    def vector(self) -> dict[str, float]:
        """The non-zero exponents by key (``M``, ``count:0``, ``prompt:1``, …)."""
        out: dict[str, float] = {}
        if self.memory:
            out["M"] = float(self.memory)
        for k, t in enumerate(self.types):
            for f, e in zip(TYPE_FIELDS, t):
                if e:
                    out[f"{f}:{k}"] = float(e)
        return out

    def text(self) -> str:
        """The canonical vector text, parseable by :func:`parse_direction`
        (``size:T`` where a type's three sizes share an exponent)."""
        parts = [f"M={_exp_text(self.memory)}"] if self.memory else []
        for k, (s, o, a, c) in enumerate(self.types):
            if s == o == a:
                if s:
                    parts.append(f"size:{k}={_exp_text(s)}")
            else:
                parts += [f"{f}:{k}={_exp_text(e)}" for f, e in zip(TYPE_FIELDS[:3], (s, o, a))
                          if e]  # fmt: skip
            if c:
                parts.append(f"count:{k}={_exp_text(c)}")
        return ",".join(parts)

    @property
    def endless(self) -> bool:
        """Whether the family goes on forever: no job's prompt or response grows faster than M
        (else that job outgrows M after finitely many steps, and a finite family says nothing
        about growth).  The direction finder only proposes endless directions."""
        return all(max(t[0], t[1]) <= self.memory for t in self.types)

    @property
    def half(self) -> bool:
        """Whether some exponent is ½: then only the even steps are exact (every field an exact
        power-of-two multiple of the base), the odd ones ×√2 rounded, and verdicts read the even
        steps (:func:`judged_steps`)."""
        return any(e.denominator == 2 for e in (self.memory, *(x for t in self.types for x in t)))

    @property
    def axis(self) -> str:
        """What the exponent is measured against: ``memory`` when M grows, else ``n`` when some
        count grows, else ``step`` (the step factor ``2^i``)."""
        if self.memory:
            return "memory"
        return "n" if any(t[3] for t in self.types) else "step"

    @property
    def axis_exponent(self) -> Fraction:
        """Doublings of the axis per step when it is ``memory`` or ``step`` (``n`` varies)."""
        return self.memory if self.memory else Fraction(1)

    def with_exponent(self, key: str, e: Fraction) -> Direction:
        """A copy with ``key`` (``M``, or ``FIELD:T`` / ``size:T``) set to ``e``."""
        if key == "M":
            return Direction(_vector_name(e, self.types), e, self.types)
        field, _, k = key.partition(":")
        k = int(k)
        ts = [list(t) for t in self.types]
        for f in FIELD_GROUPS[field]:
            ts[k][TYPE_FIELDS.index(f)] = e
        types = tuple(tuple(t) for t in ts)
        return Direction(_vector_name(self.memory, types), self.memory, types)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ stepping
    def at(self, memory: int, types: Sequence[JobType], step: int) -> tuple[int, list[JobType]]:
        """``(M, types)`` of the family's instance ``I_step`` from the base ``(memory, types)``."""
        M = _scaled(memory, self.memory, step, low=1)
        out = []
        for t, (es, eo, ea, ec) in zip(types, self.types):
            out.append(JobType(_scaled(t.prompt, es, step, low=1),
                               _scaled(t.response, eo, step, low=1),
                               _scaled(t.arrival, ea, step, low=0),
                               _scaled(t.count, ec, step, low=1)))  # fmt: skip
        return M, out

    def step(self, memory: int, types: Sequence[JobType]) -> tuple[int, list[JobType]]:
        """One step from ``(memory, types)`` (exact for integer exponents; a ½ exponent rounds:
        sweeps use :meth:`at` from the base instance instead)."""
        return self.at(memory, types, 1)


def _scaled(x: int, e: Fraction, step: int, low: int) -> int:
    """``x · 2^(e·step)`` rounded half up, at least ``low`` (``x`` itself when ``e = 0``)."""
    if not e or not x:
        return int(x)
    power = e * step
    whole = int(power)  # power >= 0
    value = x * (1 << whole)
    if power != whole:  # a half: × √2
        value = math.floor(value * math.sqrt(2) + 0.5)
    return max(low, int(value))


def _vector_name(memory: Fraction, types) -> str:
    return Direction("-", memory, tuple(types)).text() or "zero"


def alias_vector(name: str, n_types: int) -> Direction:
    """The exponent vector of a named direction (SPEC §9 aliases)."""
    one, zero = Fraction(1), Fraction(0)
    size = (one, one, one, zero)
    cnt = (zero, zero, zero, one)
    keep = (zero, zero, zero, zero)
    if name == "memory":
        return Direction(name, one, (size,) * n_types)
    if name == "count":
        return Direction(name, zero, (cnt,) * n_types)
    if name == "memory-count":
        return Direction(name, one, (cnt,) * n_types)
    head, _, rest = name.partition(":")
    idx = {int(x) for x in rest.split("+")}
    if head == "count":
        return Direction(name, zero, tuple(cnt if k in idx else keep for k in range(n_types)))
    return Direction(name, one, tuple(size if k in idx else cnt for k in range(n_types)))


def _parse_exponent(text: str, key: str, where: str) -> Fraction:
    t = text.strip().replace("½", "1/2")
    try:
        e = Fraction(t)
    except (ValueError, ZeroDivisionError):
        raise InputError(
            f"{key}={text!r}: an exponent is 0, 0.5 (or 1/2) or 1", source=where
        ) from None
    if e not in LATTICE:
        raise InputError(f"{key}={text!r}: exponent outside the lattice {{0, 1/2, 1}}",
                         source=where)  # fmt: skip
    return e


def parse_vector(text: str, n_types: int, where: str = "--direction") -> Direction:
    """A direction written as an exponent vector: ``KEY=E`` items separated by commas.

    Keys: ``M`` (memory); ``count``, ``prompt``, ``response``, ``arrival`` and ``size``
    (prompt, response and arrival together), each for every type or, with ``:T``, for type T
    only.  Exponents: ``0``, ``0.5`` (or ``1/2``, ``½``), ``1``.  Keys for every type are applied
    first, then the per-type keys; unnamed fields keep exponent 0.  A key given twice, an
    unknown key, a type index out of range, an exponent off the lattice or a vector that
    changes nothing is an :class:`InputError` naming ``where``.

    >>> parse_vector("M=1,size=1,count:0=0.5", 2).text()
    'M=1,size:0=1,count:0=0.5,size:1=1'
    """
    zero = Fraction(0)
    memory = zero
    ts = [[zero] * 4 for _ in range(n_types)]
    seen: set[str] = set()
    general: list[tuple[str, Fraction]] = []
    specific: list[tuple[str, int, Fraction]] = []
    items = [x for x in text.split(",") if x.strip()]
    if not items:
        raise InputError(f"{text!r}: an empty direction", source=where)
    for item in items:
        key, eq, val = item.partition("=")
        key = key.strip()
        if not eq:
            raise InputError(f"{item.strip()!r}: a vector item is KEY=EXPONENT (e.g. M=1, "
                             "count:0=0.5)", source=where)  # fmt: skip
        if key in seen:
            raise InputError(f"{key!r} is given twice", source=where)
        seen.add(key)
        e = _parse_exponent(val, key, where)
        if key in ("M", "memory"):
            memory = e
            continue
        field, sep, idx = key.partition(":")
        if field not in FIELD_GROUPS:
            raise InputError(f"unknown key {key!r} (known: M, count, prompt, response, arrival, "
                             "size, each optionally :T)", source=where)  # fmt: skip
        if not sep:
            general.append((field, e))
            continue
        try:
            k = int(idx)
        except ValueError:
            k = -1
        if not 0 <= k < n_types:
            raise InputError(f"{key!r}: type index must be 0..{n_types - 1} (the instance has "
                             f"{n_types} type(s))", source=where)  # fmt: skip
        specific.append((field, k, e))
    for field, e in general:
        for t in ts:
            for f in FIELD_GROUPS[field]:
                t[TYPE_FIELDS.index(f)] = e
    for field, k, e in specific:
        for f in FIELD_GROUPS[field]:
            ts[k][TYPE_FIELDS.index(f)] = e
    types = tuple(tuple(t) for t in ts)
    d = Direction("-", memory, types)  # type: ignore[arg-type]
    if not d.vector():
        raise InputError(f"{text!r} changes nothing (every exponent is 0)", source=where)
    return Direction(d.text(), memory, types)  # type: ignore[arg-type]


def parse_direction(name: str, n_types: int, where: str = "--directions") -> Direction:
    """The direction ``name`` (an alias of SPEC §9 or an exponent vector, :func:`parse_vector`)
    for an instance of ``n_types`` types (:class:`InputError` naming ``where`` otherwise)."""
    text = name.strip()
    if "=" in text:
        return parse_vector(text, n_types, where)
    if text in _ALIASES:
        return alias_vector(text, n_types)
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
                source=where,
            )
        if head == "count" and len(idx) != 1:
            raise InputError(f"direction {text!r}: count:T takes one type", source=where)
        return alias_vector(f"{head}:{'+'.join(str(k) for k in sorted(idx))}", n_types)
    raise InputError(
        f"unknown direction {text!r} (known: memory, count, count:T, memory-count, memory:T+U…, "
        "or an exponent vector such as M=1,size=1,count:0=0.5)",
        source=where,
    )


def directions_for(n_types: int) -> list[str]:
    """Every named direction that applies to an instance of ``n_types`` types (one type: the
    three global ones; more: also ``count:T`` and ``memory:T`` for every type)."""
    out = ["memory", "count", "memory-count"]
    if n_types > 1:
        out += [f"count:{k}" for k in range(n_types)]
        out += [f"memory:{k}" for k in range(n_types)]
    return out


def finder_starts(n_types: int) -> list[str]:
    """Where the direction finder starts: every named direction, then M with every prompt (the
    memory axis with the time axis kept: responses, and so ties of equal responses, unchanged)
    and M with every prompt and count."""
    return directions_for(n_types) + ["M=1,prompt=1", "M=1,prompt=1,count=1"]


def neighbours(d: Direction, types: Sequence[JobType] | None = None) -> list[Direction]:
    """The lattice neighbours of ``d`` for coordinate ascent: one knob moved to each other
    lattice value.  Knobs: M, then per type its count, prompt, response, its three sizes
    together, and its arrival — the arrival only where ``types`` gives the type a non-zero
    arrival (scaling 0 changes nothing).  Vectors that change nothing are left out; the order is
    deterministic; only endless directions (:attr:`Direction.endless`) are proposed."""
    out: list[Direction] = []
    keys = ["M"]
    for k in range(len(d.types)):
        keys += [f"count:{k}", f"prompt:{k}", f"response:{k}", f"size:{k}"]
        if types is None or types[k].arrival > 0:
            keys.append(f"arrival:{k}")
    for key in keys:
        for e in LATTICE:
            cand = d.with_exponent(key, e)
            if cand.vector() and cand.text() != d.text() and cand.endless:
                out.append(cand)
    uniq: dict[str, Direction] = {}
    for c in out:
        uniq.setdefault(c.text(), c)
    return list(uniq.values())


# --------------------------------------------------------------------------- verdicts


def tail_exponent(factors: Sequence[float], ratios: Sequence[float]) -> float | None:
    """Least-squares slope of ``log ratio`` against ``log factor`` over the upper half of the
    points (at least two); ``None`` with fewer than two points."""
    pts = sorted(zip(factors, ratios))
    if len(pts) < 2:
        return None
    tail = pts[len(pts) // 2 :] if len(pts) >= 4 else pts[-2:]
    return fit_exponent([p[0] for p in tail], [p[1] for p in tail])


class Judgement(NamedTuple):
    """The verdict of one direction (SPEC §9): the exponent, the verdict, and when ``bounded`` the
    limit estimate with its spread and the rule that said so (``change`` or ``geometric``)."""

    exponent: float | None
    verdict: GrowthVerdict
    limit: float | None = None
    spread: float | None = None
    rule: str | None = None


def shrinks_geometrically(factors: Sequence[float], ratios: Sequence[float],
                          q: float = GEOMETRIC_Q) -> bool:  # fmt: skip
    """Whether the increments of the last three steps shrink geometrically: each increment per
    doubling of the axis at most ``q^Δ`` times the previous one (Δ the doublings between the two
    increments' midpoints; equal steps of one doubling compare with ``q``).  Needs four points."""
    pts = sorted(zip(factors, ratios))[-4:]
    if len(pts) < 4:
        return False
    xs = [math.log2(p[0]) for p in pts]
    rs = [p[1] for p in pts]
    if any(b - a <= 0 for a, b in zip(xs, xs[1:])):
        return False
    slopes = [(rs[i + 1] - rs[i]) / (xs[i + 1] - xs[i]) for i in range(3)]
    mids = [(xs[i + 1] + xs[i]) / 2 for i in range(3)]
    tol = 1e-12 * max(1.0, max(abs(r) for r in rs))
    return all(abs(slopes[i + 1]) <= q ** (mids[i + 1] - mids[i]) * abs(slopes[i]) + tol
               for i in range(2))  # fmt: skip


def limit_estimate(ratios: Sequence[float]) -> tuple[float, float]:
    """Aitken's Δ² extrapolation of the last three ratios and its spread.

    The limit is ``r₃ + d₃·ρ/(1−ρ)`` with ``d`` the increments and ``ρ = d₃/d₂`` (exact for a
    geometric tail); the spread is the distance to the same estimate one step earlier (or, with
    fewer than four points or no usable earlier estimate, to the last ratio).  Where ``ρ`` is not
    in (−1, 1) the last ratio is the estimate.

    >>> round(limit_estimate([53, 64, 69, 72, 73.6])[0], 1)
    75.4
    """

    def aitken(r: Sequence[float]) -> float | None:
        d2, d3 = r[-2] - r[-3], r[-1] - r[-2]
        if d3 == 0:
            return float(r[-1])
        if d2 == 0:
            return None
        rho = d3 / d2
        if not -1 < rho < 1:
            return None
        return float(r[-1] + d3 * rho / (1 - rho))

    rs = [float(r) for r in ratios]
    if len(rs) < 3:
        return rs[-1], 0.0
    now = aitken(rs)
    if now is None:
        return rs[-1], abs(rs[-1] - rs[-2])
    before = aitken(rs[:-1]) if len(rs) >= 4 else None
    return now, abs(now - (before if before is not None else rs[-1]))


def direction_verdict(factors: Sequence[float], ratios: Sequence[float],
                      upper: Sequence[float] | None = None) -> Judgement:  # fmt: skip
    """The :class:`Judgement` of one direction's certified ratios against the axis factor.

    ``grows``: the exponent is ≥ :data:`GROWS_EXPONENT` over at least :data:`GROWS_DOUBLINGS`
    doublings and the increments do not shrink geometrically; the toolkit also asks that the
    last ratio be the highest of the upper half (a family whose certified ratio has just fallen
    has not shown growth yet: its sweep takes more steps, SPEC §9's "when the rule needs
    them").  ``bounded``: the ratio changes by
    less than :data:`BOUNDED_CHANGE` over the last two doublings (rule ``change``), or the
    increments of the last three steps shrink geometrically with :data:`GEOMETRIC_Q` (rule
    ``geometric``); either way with the limit estimate of :func:`limit_estimate`.
    ``bounded`` too when the ratio stopped growing inside the range (rule ``peak``, issue 68):
    the highest certified ratio is at a point strictly inside the range (after the first: it
    rose, before the last and strictly above it: it fell), the
    points after it span at least :data:`PEAK_DOUBLINGS` doublings, and the slope over the
    upper half is not positive — of the certified ratios and, when given, of the optimistic
    ones ``upper`` (the ceiling falls too, so the true ratio is not growing there); the limit
    estimate is then that maximum (spread 0): the family never certified more.  This rule is
    read before ``change`` and ``geometric``, whose extrapolation of a falling ratio would put
    the estimate below a ratio the family has certified.

    ``upper`` (optional) are the same points' optimistic ratios ALG/LB — at every point an
    upper bound on the true ratio, as the certified ALG/UB is a lower one.  When the certified
    ratios settle by neither rule but the upper bounds do (by either rule), the direction is
    ``bounded`` by rule ``upper``: the true ratio lies between the two, so a ceiling that stops
    moving bounds it, while a lower bound that zigzags (a heuristic UB that is better at some
    sizes than others, at thousands of jobs) says nothing either way.  This is the toolkit's
    reading of SPEC §9 ("the certified ratio converges"), which a certified ratio oscillating
    within a band for many doublings never meets; its limit ± spread is then the interval from
    the highest certified ratio over the last two doublings up to the upper bounds' limit
    estimate (plus that estimate's spread), so it is a bracket on the limit, not a point.
    Else ``unclear``.

    >>> direction_verdict([1, 2, 4, 8, 16], [1, 1.5, 2, 2.8, 4]).verdict
    'grows'
    >>> direction_verdict([1, 2, 4], [3, 3.05, 3.06]).verdict
    'bounded'
    >>> j = direction_verdict([1, 2, 4, 8, 16], [53, 64, 69, 72, 73.6])
    >>> j.verdict, j.rule, round(j.limit, 1)
    ('bounded', 'geometric', 75.4)
    >>> j = direction_verdict([1, 2, 4, 8, 16, 32], [3.1, 3.92, 3.4, 2.9, 2.5, 2.2])
    >>> j.verdict, j.rule, j.limit
    ('bounded', 'peak', 3.92)
    >>> ceiling = [118, 126, 129, 129.4, 129.5]
    >>> j = direction_verdict([1, 2, 4, 8, 16], [100, 88, 101, 85, 97], ceiling)
    >>> j.verdict, j.rule, round(j.limit - j.spread, 1), round(j.limit + j.spread, 1)
    ('bounded', 'upper', 101.0, 130.0)
    """
    pts = sorted(zip(factors, ratios))
    xs, rs = [p[0] for p in pts], [p[1] for p in pts]
    exp = tail_exponent(xs, rs)
    doublings = math.log2(xs[-1] / xs[0]) if len(pts) >= 2 else 0.0
    geometric = shrinks_geometrically(xs, rs)
    tail = rs[len(rs) // 2 :] if len(rs) >= 4 else rs[-2:]
    rising = rs[-1] >= max(tail) * (1 - 1e-12)
    if (not geometric and rising and exp is not None and exp >= GROWS_EXPONENT
            and doublings >= GROWS_DOUBLINGS - 1e-9):  # fmt: skip
        return Judgement(exp, GrowthVerdict.GROWS)
    # the last two doublings: from the last point at or below a quarter of the last factor
    peak = peaked(xs, rs, upper if upper is None else [u for _, u in sorted(zip(factors, upper))])
    if peak is not None:
        return Judgement(exp, GrowthVerdict.BOUNDED, peak, 0.0, "peak")
    below = [x for x in xs if x <= xs[-1] / 4 * (1 + 1e-9)]
    last = [p for p in pts if below and p[0] >= below[-1]]
    if len(pts) >= 3 and last:
        lo, hi = min(p[1] for p in last), max(p[1] for p in last)
        if lo > 0 and hi / lo - 1 < BOUNDED_CHANGE:
            limit, spread = limit_estimate(rs)
            if abs(limit - rs[-1]) > (hi - lo) + spread:  # an extrapolation from noise
                limit = rs[-1]
            return Judgement(exp, GrowthVerdict.BOUNDED, limit, max(spread, hi - lo), "change")
    if geometric:
        limit, spread = limit_estimate(rs)
        return Judgement(exp, GrowthVerdict.BOUNDED, limit, spread, "geometric")
    if upper is not None and len(upper) == len(rs) and len(rs) >= 3:
        us = [u for _, u in sorted(zip(factors, upper))]
        ceiling = direction_verdict(xs, us)
        if ceiling.verdict == GrowthVerdict.BOUNDED and ceiling.limit is not None:
            floor = max((p[1] for p in last), default=max(rs[-2:]))  # last two doublings
            lo, hi = floor, max(ceiling.limit + (ceiling.spread or 0.0), floor)
            return Judgement(exp, GrowthVerdict.BOUNDED, (lo + hi) / 2, (hi - lo) / 2, "upper")
    return Judgement(exp, GrowthVerdict.UNCLEAR)


def peaked(xs: Sequence[float], rs: Sequence[float],
           upper: Sequence[float] | None = None) -> float | None:  # fmt: skip
    """The highest ratio of ``rs`` (sorted by factor ``xs``) when the family stopped growing
    inside the range (rule ``peak`` of :func:`direction_verdict`), else ``None``."""
    if len(rs) < 3:
        return None
    top = max(range(len(rs)), key=lambda k: (rs[k], -k))  # the first point of the maximum
    if top in (0, len(rs) - 1) or not rs[top] > rs[-1] * (1 + 1e-9):
        return None
    if math.log2(xs[-1] / xs[top]) < PEAK_DOUBLINGS - 1e-9:
        return None
    for ys in (rs, upper):
        if ys is None:
            continue
        e = tail_exponent(xs, ys)
        if e is None or e > 0:
            return None
    return rs[top]


def judged_steps(d: Direction, steps: Sequence[int]) -> list[int]:
    """The indices (into ``steps``, the step numbers of a family's points) that a verdict reads:
    every point, or for a direction with a ½ exponent the even steps only — the odd ones are
    rounded by √2 and alternate with the even ones (a count 7 → 10 → 14 → 20 → 28 changes its
    remainder against M at every odd step), which would hide a limit behind the zigzag."""
    if not d.half:
        return list(range(len(steps)))
    return [i for i, s in enumerate(steps) if s % 2 == 0]


def sweep_verdict(verdicts: Sequence[str]) -> GrowthVerdict:
    """``grows`` if any direction grows, ``bounded`` if every one is bounded, else ``unclear``."""
    if any(v == GrowthVerdict.GROWS for v in verdicts):
        return GrowthVerdict.GROWS
    if verdicts and all(v == GrowthVerdict.BOUNDED for v in verdicts):
        return GrowthVerdict.BOUNDED
    return GrowthVerdict.UNCLEAR


__all__ = [
    "BOUNDED_CHANGE",
    "PEAK_DOUBLINGS",
    "GEOMETRIC_Q",
    "LATTICE",
    "Judgement",
    "alias_vector",
    "judged_steps",
    "limit_estimate",
    "finder_starts",
    "neighbours",
    "parse_vector",
    "shrinks_geometrically",
    "GROWS_DOUBLINGS",
    "GROWS_EXPONENT",
    "Direction",
    "GrowthVerdict",
    "direction_verdict",
    "peaked",
    "directions_for",
    "parse_direction",
    "sweep_verdict",
    "tail_exponent",
]
