"""Growth sweeps (``kvopt grow``, SPEC §9): is a policy's ratio bounded along a family, or growing?

From a record, a *direction* builds the family ``I_0 = record's instance, I_1,
I_2, …`` by doubling (the instance's types are its runs of identical
consecutive jobs, :meth:`kvopt.space.TypedSpace.types`, indexed from 0):

* ``memory`` — M and every prompt, response and arrival ×2;
* ``count`` — every count ×2, M kept;
* ``count:T`` — type T's count ×2;
* ``memory-count`` — M and every count ×2, job sizes kept;
* ``memory:T+U…`` — M and the prompts, responses and arrivals of the listed
  types ×2, the other types' sizes unchanged and their counts ×2.

Every point is evaluated as in a search (:mod:`kvopt.campaign.evaluate`):
the policy is simulated with the record's parameters and seed, the cheap
bounds give ``LB`` and a checked kill-free clairvoyant schedule ``UB``.  The
directions are then *screened* by the optimistic ratio ``ALG/LB`` of their last point (the
largest the true ratio can be there): the ``certify`` best get exact solves (``time_limit`` seconds each, instances of
at most ``exact_max_n`` jobs), which can only raise the certified ratio
``ALG/UB`` and prove Opt.  Each point is saved as a record (SPEC §8; its
``found_by`` names the direction and the factor) that passes ``kvopt check``.

The exponent of a direction is the least-squares slope of ``log
ratio_certified`` against ``log factor`` over the upper half of its points;
its verdict (:func:`~kvopt.campaign.families.direction_verdict`) is ``grows`` when the exponent is ≥
:data:`GROWS_EXPONENT` over at least :data:`GROWS_DOUBLINGS` doublings,
``bounded`` when the certified ratio changes by less than
:data:`BOUNDED_CHANGE` over the last two doublings, else ``unclear``; the
sweep's verdict (:func:`sweep_verdict`) is ``grows`` if any direction grows,
``bounded`` if all are bounded, else ``unclear``.  A direction stops early
(and says why) when its next point would have more than :data:`MAX_N` jobs or
memory above :data:`MAX_MEMORY`, or leaves the policy's class.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..certify import (
    CERTIFY_SECONDS,
    CERTIFY_THREADS,
    Bracket,
    Effort,
    bracket,
    solve_bracket,
    tighten,
)
from ..errors import BudgetError, InputError, PolicyError
from ..fileio import write_json_atomic
from ..instance import Instance
from ..logs import progress_logger
from ..schedule import Schedule
from ..space import TypedSpace
from ..space.typed import JobType
from .evaluate import instance_key, max_attempts
from .families import (
    BOUNDED_CHANGE,
    GEOMETRIC_Q,
    GROWS_DOUBLINGS,
    GROWS_EXPONENT,
    Direction,
    GrowthVerdict,
    direction_verdict,
    directions_for,
    finder_starts,
    neighbours,
    parse_direction,
    sweep_verdict,
    tail_exponent,
)
from .strategies import fit_exponent

#: Sane sizes: a direction stops before a point with more jobs or more memory.  16,384 jobs
#: lets a typed record of about 1,000 jobs take the four doublings a ``grows`` verdict needs
#: (a point of 6,000 jobs costs seconds: one simulation and the cheap bounds; exact solves
#: stop at ``exact_max_n``).
MAX_N = 16384
MAX_MEMORY = 2**20
#: At most this many steps per direction (a ½ exponent needs two steps per doubling).
MAX_STEPS = 64
#: Doublings a sweep may add beyond ``--steps`` while its verdict is ``unclear``.
EXTRA_DOUBLINGS = 3
#: The direction finder: probes in all (the named directions included), the doublings of one
#: probe, the directions it returns for a full sweep, and the exponent margin a climb needs.
FIND_BUDGET = 60
FIND_DOUBLINGS = 3
FIND_TOP = 3
FIND_MARGIN = 0.02
#: The summary file of a sweep, in its folder.
SUMMARY_NAME = "growth.json"
PLOT_NAME = "growth.png"


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class GrowthPoint:
    """One point of a direction: the instance at ``factor`` (of the direction's axis: M's factor,
    or n's when M is fixed), its bounds and ratios, its record."""

    factor: float
    n: int
    memory: int
    alg: int
    ub: int
    lb: int
    ratio_certified: float
    ratio_optimistic: float
    opt_status: str
    record: str
    #: The point's bracket (:meth:`kvopt.certify.Bracket.to_dict`: lb, ub, sources, solving).
    bracket: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class GrowthDirection:
    """A direction's points, exponent and verdict; ``stopped`` says why it ended early."""

    name: str
    steps: tuple[GrowthPoint, ...]
    exponent: float | None
    verdict: GrowthVerdict
    stopped: str | None = None
    certified: bool = False  # screened in: its points got exact solves
    vector: dict[str, float] = field(default_factory=dict)
    axis: str = "memory"  # what ``factor`` measures: "memory", "n" or "step"
    limit: float | None = None  # when bounded: the limit estimate …
    limit_spread: float | None = None  # … its spread …
    rule: str | None = None  # … and the rule that said bounded ("change" or "geometric")

    def to_dict(self) -> dict[str, Any]:
        d = {"name": self.name, "vector": self.vector, "axis": self.axis,
             "steps": [p.to_dict() for p in self.steps],
             "exponent": self.exponent, "verdict": self.verdict}  # fmt: skip
        if self.verdict == GrowthVerdict.BOUNDED:
            d.update(limit=self.limit, limit_spread=self.limit_spread, bounded_rule=self.rule)
        if self.stopped:
            d["stopped"] = self.stopped
        return d


@dataclass(frozen=True)
class GrowthResult:
    """A sweep (``kvopt grow --json``: :meth:`to_dict`, the keys of SPEC §4)."""

    policy: str
    directions: tuple[GrowthDirection, ...]
    best_direction: str | None
    verdict: GrowthVerdict
    source: str = ""
    out: str = ""
    plot: str | None = None
    seconds: float = 0.0
    exact_solves: int = 0
    finder: dict[str, Any] | None = None  # what the direction finder probed, when it ran
    certify_seconds: float = 0.0  # the certify stage's seconds (in ``seconds`` too)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = {"policy": self.policy, "directions": [d.to_dict() for d in self.directions],
             "best_direction": self.best_direction, "verdict": self.verdict}  # fmt: skip
        if self.finder is not None:
            d["finder"] = self.finder
        return d

    def direction(self, name: str) -> GrowthDirection:
        for d in self.directions:
            if d.name == name:
                return d
        raise KeyError(name)

    def family(self) -> str:
        """The best direction in words: its certified ratios against the factor."""
        if self.best_direction is None:
            return "no direction"
        d = self.direction(self.best_direction)
        pts = ", ".join(f"x{p.factor:g}: n={p.n} M={p.memory} {p.ratio_certified:.3g}"
                        for p in d.steps)  # fmt: skip
        e = "-" if d.exponent is None else f"{d.exponent:.3f}"
        lim = (f", limit {d.limit:.4g} ± {d.limit_spread:.2g}"
               if d.verdict == GrowthVerdict.BOUNDED and d.limit is not None else "")  # fmt: skip
        return (
            f"direction {d.name} ({d.verdict}, exponent {e} per doubling of {d.axis}{lim}): {pts}"
        )

    def to_dataframe(self):
        """One row per point (needs pandas)."""
        import pandas as pd

        return pd.DataFrame([{"direction": d.name, **p.to_dict()} for d in self.directions
                             for p in d.steps])  # fmt: skip

    def __repr__(self) -> str:
        return f"GrowthResult({self.policy}: {self.verdict}; best {self.family()})"


# --------------------------------------------------------------------------- the sweep


@dataclass
class _Point:
    """A point's instance and its bracket (:mod:`kvopt.certify`; replaced when tightened)."""

    inst: Instance
    bracket: Bracket
    solved: bool = False
    certified: bool = False  # tightened by the certify stage

    @property
    def alg(self) -> int:
        return self.bracket.alg

    @property
    def schedule(self) -> Schedule:
        return self.bracket.schedule

    @property
    def ratio_lb(self) -> float:
        return self.bracket.ratio_optimistic

    @property
    def ratio_ub(self) -> float:
        return self.bracket.ratio_certified


@dataclass(frozen=True)
class _Step:
    """A point of one direction: the step index, the axis factor, the (shared) point."""

    step: int
    factor: float
    point: _Point


def _load_source(record, policy: str | None):
    """``(record-like, source)``: a :class:`~kvopt.record.Record`, a record file, an
    :class:`~kvopt.instance.Instance` or an instance file (these two need ``policy``)."""
    from ..fileio import read_json
    from ..instance import load_instance
    from ..record import Record, load_record

    if isinstance(record, Record | Instance):
        return record, ""
    source = str(record)
    fmt = read_json(source).get("format") if Path(source).is_file() else None
    if fmt == "kvopt.instance":
        if not policy:
            raise InputError("an instance needs --policy NAME (a record names its policy)",
                             source=f"{source}: --policy")  # fmt: skip
        return load_instance(source), source
    return load_record(source), source


def _base_record(inst: Instance, policy: str, params, seed: int | None, source: str):
    """A record of ``policy`` on ``inst`` with the cheap bounds (the sweep's ``I_0``)."""
    from ..policy import get_policy
    from ..record import record_from_bracket
    from ..simulation import simulate

    spec = get_policy(policy)
    prm = dict(params or {})
    spec.resolve_params(prm)
    why = spec.check(inst, spec.resolve_params(prm)) if spec.check else None
    if why:
        raise InputError(f"the instance is outside {policy}'s class: {why}",
                         source=source or "instance")  # fmt: skip
    sd = seed if spec.seeded else None
    res = simulate(inst, policy, params=prm or None, seed=sd)
    b = bracket(res.schedule, inst, objective="total")
    return record_from_bracket(inst, policy, prm, sd if sd is not None else 0, b,
                               found_by={"strategy": "input", "source": source or None})  # fmt: skip


def _split_directions(directions) -> list[str]:
    """Direction texts from a list or one string (vectors, which contain ``=``, are separated by
    ``;``; names by ``,`` or ``;``)."""
    if directions is None:
        return []
    items = [directions] if isinstance(directions, str) else list(directions)
    out: list[str] = []
    for item in items:
        text = str(item)
        if "=" in text:
            out += [x for x in text.split(";") if x.strip()]
        else:
            out += [x for x in text.replace(";", ",").split(",") if x.strip()]
    return out


def grow(
    record,
    *,
    policy: str | None = None,
    params: dict[str, Any] | None = None,
    seed: int | None = None,
    steps: int = 4,
    directions: Sequence[str] | str | None = None,
    time_limit: float = 10.0,
    out: str | os.PathLike | None = None,
    certify: int = 2,
    exact_max_n: int = 128,
    find_budget: int = FIND_BUDGET,
    find_top: int = FIND_TOP,
    extra: int = EXTRA_DOUBLINGS,
    plot: bool = True,
    progress: bool | None = None,
    certify_seconds: float = CERTIFY_SECONDS,
) -> GrowthResult:
    """The growth sweep of ``record`` (a :class:`~kvopt.record.Record`, a record file, or an
    :class:`~kvopt.instance.Instance` / instance file with ``policy``).

    ``steps`` doublings of the axis (M, or n when M is fixed) per direction, and up to
    ``extra`` more while the verdict is ``unclear`` and the instance stays within
    :data:`MAX_N` / :data:`MAX_MEMORY`; ``directions`` (aliases or exponent vectors, SPEC §9;
    a list, or one string); without directions the fastest-growing ones are found
    (:func:`find_directions`, ``find_budget`` probes, the ``find_top`` best swept in full).
    ``time_limit`` seconds per exact solve, on the points of the ``certify`` directions
    screened best (by ALG/LB) with at most ``exact_max_n`` jobs; ``out`` the folder of the
    point records, ``growth.json`` and the plot (default ``kvopt-grow/<source>``).  With a
    record, ``policy`` (if given) must be the record's.

    **Certify stage** (``certify_seconds`` > 0): the points that decide the verdict — those of
    the growing directions when the sweep grows, of every direction when it is bounded, of the
    unclear ones otherwise — are tightened at the end by an exact solve of at most
    ``certify_seconds`` each, whatever their size (:func:`kvopt.certify.solve_bracket`, every
    thread, the typed aggregated model on typed instances), and the verdicts are judged again on
    the certified ratios.  ``growth.json`` reports its seconds apart (``certify_seconds``).

    >>> res = grow("instances/worst/small/fcfs.json", steps=1, directions="count",
    ...            out=tmp / "g", time_limit=2, extra=0, progress=False)
    >>> [p.factor for p in res.direction("count").steps], res.verdict
    ([1, 2], 'unclear')
    """
    from ..policy import get_policy
    from ..record import Record

    record, source = _load_source(record, policy)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise InputError(f"must be an integer >= 1, got {steps!r}", source="--steps")
    if not (isinstance(time_limit, int | float) and time_limit > 0):
        raise InputError(f"must be a positive number, got {time_limit!r}", source="--time-limit")
    from .certify import check_time_limit

    certify_seconds = check_time_limit(certify_seconds, "--certify-seconds")
    for name, v, low in (("certify", certify, 0), ("--find-budget", find_budget, 1),
                         ("find_top", find_top, 1), ("--extra", extra, 0)):  # fmt: skip
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise InputError(f"must be an integer >= {low}, got {v!r}", source=name)
    if isinstance(record, Instance):
        record = _base_record(record, policy, params, seed, source)
    elif policy is not None and get_policy(policy).name != record.policy:
        raise InputError(f"the record is of policy {record.policy!r}, not {policy!r} (give the "
                         "instance file to sweep another policy)", source="--policy")  # fmt: skip
    assert isinstance(record, Record)
    types = TypedSpace.types(record.instance)
    texts = _split_directions(directions)
    if directions is not None and not texts:
        raise InputError("no direction given", source="--directions")
    stem = Path(source).stem if source else f"{record.policy}-record"
    out = Path(out) if out is not None else Path("kvopt-grow") / stem
    if out.exists() and not out.is_dir():
        raise InputError("is a file, expected a folder", source=f"--out {out}")
    dirs = [parse_direction(d, len(types)) for d in texts]
    dirs = list({d.text(): d for d in dirs}.values())
    spec = get_policy(record.policy)
    params = spec.resolve_params(record.params)
    seed = record.seed if spec.seeded else None
    say = progress_logger("kvopt.campaign.growth", progress is not False, "kvopt grow")
    t0 = time.monotonic()

    cache: dict[str, _Point] = {}

    def point(inst: Instance, factor: float) -> _Point | str:
        key = instance_key(inst)
        if key in cache:
            return cache[key]
        why = spec.check(inst, params) if spec.check else None
        if why:
            return f"the point at factor {factor:g} is outside the policy's class: {why}"
        try:
            from ..simulation import simulate

            # grown points have the campaign's attempt budget (the record's own instance does
            # not: it is what the record claims); a policy that thrashes on a grown point
            # ends that direction instead of running for hours
            budget = max_attempts(inst.n) if factor > 1 else None
            res = simulate(
                inst, record.policy, params=dict(record.params) or None, seed=seed,
                max_attempts=budget,
            )  # fmt: skip
        except BudgetError as err:
            return f"the point at factor {factor:g} is over the attempt budget: {err}"
        except (PolicyError, InputError) as err:
            return f"simulating the point at factor {factor:g} fails: {err}"
        p = _Point(inst, bracket(res.schedule, inst, objective=record.objective))
        cache[key] = p
        return p

    # ---- I_0: the record's instance, with what the record already knows
    base = point(record.instance, 1)
    if isinstance(base, str):
        raise InputError(base, source=source or "record")
    base.bracket = tighten(base.bracket, base.inst, lb=record.lb,
                           lb_source=record.lb_source or "record", ub_schedule=record.opt_schedule,
                           ub_source="record")  # fmt: skip
    M0, n0 = record.instance.memory, record.instance.n

    def walk(d: Direction, doublings: int, more: int) -> tuple[list[_Step], str | None]:
        """The family of ``d`` until the axis has doubled ``doublings`` times (and up to ``more``
        doublings further while the cheap verdict is ``unclear``)."""
        pts, why = [_Step(0, 1, base)], None
        last_key = instance_key(record.instance)
        i = 0
        while i < MAX_STEPS:
            i += 1
            M, ts = d.at(M0, types, i)
            n = sum(t.count for t in ts)
            if n > MAX_N or M > MAX_MEMORY:
                why = (f"stopped before step {i}: n = {n}, M = {M} exceed the sane sizes "
                       f"(n <= {MAX_N}, M <= {MAX_MEMORY})")  # fmt: skip
                break
            x = M / M0 if d.axis == "memory" else n / n0 if d.axis == "n" else 2.0**i
            if x <= pts[-1].factor * (1 + 1e-12):
                continue  # rounding kept the axis (a ½ exponent on a count of 1): next step
            try:
                inst = TypedSpace.build(M, ts, name=f"{stem}-{_slug(d.name)}-s{i}")
            except InputError as err:
                why = f"stopped before step {i}: the grown instance is not valid ({err})"
                break
            if instance_key(inst) == last_key:
                continue
            got = point(inst, x)
            if isinstance(got, str):
                why = got
                break
            last_key = instance_key(inst)
            pts.append(_Step(i, _tidy(x), got))
            say(f"{d.name} step {i} (x{x:.3g}): n={got.inst.n} M={M} ALG/UB "
                f"{got.ratio_ub:.4g} ALG/LB {got.ratio_lb:.4g}")  # fmt: skip
            reached = math.log2(x)
            if reached >= doublings - 1e-9:
                j = direction_verdict([p.factor for p in pts], [p.point.ratio_ub for p in pts])
                if j.verdict != GrowthVerdict.UNCLEAR or reached >= doublings + more - 1e-9:
                    break
        return pts, why

    # ---- the directions: given, or found by a search over the exponent lattice
    finder = None
    if not dirs:

        def family_key(d: Direction):  # directions that build the same instances are one
            return tuple((m, tuple(ts)) for m, ts in (d.at(M0, types, i) for i in (1, 2, 3)))

        finder = find_directions(len(types), lambda d: walk(d, FIND_DOUBLINGS, 0)[0],
                                 budget=find_budget, top=find_top, types=types, key=family_key,
                                 say=say)  # fmt: skip
        dirs = list(finder.chosen)

    families: dict[str, list[_Step]] = {}
    stopped: dict[str, str | None] = {}
    for d in dirs:
        families[d.name], stopped[d.name] = walk(d, steps, extra)
        if stopped[d.name]:
            say(f"{d.name}: {stopped[d.name]}")

    # ---- screen by ALG/LB, certify the best directions with exact solves
    def screen(name: str) -> tuple[float, float]:  # the largest possible ratio at the end
        pts = families[name]
        e = tail_exponent([p.factor for p in pts], [p.point.ratio_lb for p in pts])
        return (pts[-1].point.ratio_lb, e if e is not None else -math.inf)

    chosen = sorted(families, key=screen, reverse=True)[:certify]
    solves = 0
    for name in chosen:
        for s in families[name]:
            p = s.point
            if p.bracket.optimal or p.solved or p.inst.n > exact_max_n:
                continue
            p.bracket = solve_bracket(p.bracket, p.inst, Effort(exact_seconds=float(time_limit)))
            p.solved = True
            solves += 1
            say(f"{name} x{s.factor:g}: exact {p.bracket.status} ({p.bracket.lb_source}) in "
                f"{p.bracket.exact_seconds:.1f}s, ALG/UB {p.ratio_ub:.4g}")  # fmt: skip

    # ---- the certify stage: the points that decide the verdict, solved at the end (docstring)
    t_cert = time.monotonic()
    if certify_seconds > 0:
        cheap = {d.name: direction_verdict([s.factor for s in families[d.name]],
                                           [s.point.ratio_ub for s in families[d.name]]).verdict
                 for d in dirs}  # fmt: skip
        overall = sweep_verdict(list(cheap.values()))
        deciding = [n for n, v in cheap.items() if v == overall]
        effort = Effort(exact_seconds=certify_seconds, typed=True, solver="auto",
                        deterministic=False, threads=CERTIFY_THREADS)  # fmt: skip
        for name in deciding:
            for s in families[name]:
                p = s.point
                if p.bracket.optimal or p.certified:
                    continue
                before = p.bracket
                p.bracket = solve_bracket(p.bracket, p.inst, effort)
                p.certified = True
                solves += 1
                say(f"certify {name} x{s.factor:g}: {before.text()} -> {p.bracket.text()}")
    certify_spent = time.monotonic() - t_cert

    # ---- records, exponents, verdicts
    saved: dict[int, str] = {}
    results = []
    for d in dirs:
        steps_out = []
        for s in families[d.name]:
            if id(s.point) not in saved:
                saved[id(s.point)] = _save_point(record, s, d, out, source)
            steps_out.append(_summary(s, saved[id(s.point)]))
        j = direction_verdict([p.factor for p in steps_out],
                              [p.ratio_certified for p in steps_out])  # fmt: skip
        results.append(GrowthDirection(d.name, tuple(steps_out), j.exponent, j.verdict,
                                       stopped[d.name], certified=d.name in chosen,
                                       vector=d.vector(), axis=d.axis, limit=j.limit,
                                       limit_spread=j.spread, rule=j.rule))  # fmt: skip
    best = _best(results)
    res = GrowthResult(
        policy=record.policy,
        directions=tuple(results),
        best_direction=best,
        verdict=sweep_verdict([r.verdict for r in results]),
        source=source,
        out=str(out),
        seconds=time.monotonic() - t0,
        exact_solves=solves,
        finder=None if finder is None else finder.to_dict(),
        certify_seconds=certify_spent,
    )
    if plot:
        res = _with_plot(res, out / PLOT_NAME)
    write_json_atomic(out / SUMMARY_NAME, {**res.to_dict(), "source": source, "plot": res.plot,
                                           "seconds": round(res.seconds, 2),
                                           "certify_seconds": round(certify_spent, 2),
                                           "exact_solves": solves})  # fmt: skip
    say(f"verdict {res.verdict}; best {res.family()}")
    return res


# --------------------------------------------------------------------------- the direction finder


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
                    types: Sequence[JobType] | None = None, key=None, say=None) -> Finder:  # fmt: skip
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
    """
    key = key or (lambda d: d.text())
    probes: dict[Any, Probe] = {}
    order: list[Probe] = []

    def probe(d: Direction) -> Probe | None:
        k = key(d)
        if k in probes:
            return probes[k]
        if len(order) >= budget:
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


def _tidy(x: float) -> float:
    """An integer factor as an ``int`` (``x2``, not ``x2.0``), others to six decimals."""
    r = round(x)
    return int(r) if abs(x - r) < 1e-9 else round(x, 6)


def _slug(name: str) -> str:
    s = name.replace(":", "-").replace("=", "").replace(",", "_").replace("/", "-")
    if len(s) > 48:
        import hashlib

        s = s[:36] + "-" + hashlib.sha1(name.encode()).hexdigest()[:8]
    return s


def _best(results: Sequence[GrowthDirection]) -> str | None:
    if not results:
        return None

    def key(d: GrowthDirection):
        e = d.exponent if d.exponent is not None else -math.inf
        return (d.verdict == GrowthVerdict.GROWS, e, d.steps[-1].ratio_certified)

    return max(results, key=key).name


def _save_point(record, s: _Step, d: Direction, out: Path, source: str) -> str:
    from ..record import record_from_bracket, save_record

    p = s.point
    rec = record_from_bracket(
        p.inst, record.policy, dict(record.params), record.seed, p.bracket,
        found_by={"strategy": "grow", "direction": d.name if s.step else None,
                  "vector": d.vector() if s.step else None, "step": s.step,
                  "factor": s.factor, "source": source or None,
                  "types": [list(t) for t in TypedSpace.types(p.inst)]},
    )  # fmt: skip
    name = "x1.json" if s.step == 0 else f"{_slug(d.name)}-s{s.step}.json"
    path = out / name
    save_record(rec, path)
    return str(path)


def _summary(s: _Step, path: str) -> GrowthPoint:
    b = s.point.bracket
    return GrowthPoint(s.factor, s.point.inst.n, s.point.inst.memory, b.alg, b.ub, b.lb,
                       b.ratio_certified, b.ratio_optimistic, str(b.status), path,
                       b.to_dict())  # fmt: skip


def _with_plot(res: GrowthResult, path: Path) -> GrowthResult:
    from dataclasses import replace

    from ..plotting import plot_growth

    series = {d.name: [(p.factor, p.ratio_certified, p.ratio_optimistic) for p in d.steps]
              for d in res.directions}  # fmt: skip
    limits = {d.name: (d.limit, d.limit_spread or 0.0) for d in res.directions
              if d.verdict == GrowthVerdict.BOUNDED and d.limit is not None}  # fmt: skip
    plot_growth(series, path, title=f"{res.policy}: certified ratio along each direction "
                f"(verdict {res.verdict})", limits=limits)  # fmt: skip
    return replace(res, plot=str(path))


# --------------------------------------------------------------------------- after a campaign


@dataclass(frozen=True)
class CampaignGrowth:
    """Growth sweeps of a campaign's best records: one :class:`GrowthResult` per record, the
    overall verdict (:func:`sweep_verdict` over the records' verdicts) and the family found."""

    sweeps: tuple[GrowthResult, ...]
    verdict: GrowthVerdict

    @property
    def best(self) -> GrowthResult | None:
        """The sweep whose best direction grows fastest (``None`` without sweeps)."""
        if not self.sweeps:
            return None

        def key(g: GrowthResult):
            d = g.direction(g.best_direction) if g.best_direction else None
            e = d.exponent if d is not None and d.exponent is not None else -math.inf
            return (g.verdict == GrowthVerdict.GROWS, e)

        return max(self.sweeps, key=key)

    def family(self) -> str:
        b = self.best
        return "no sweep" if b is None else f"{b.source}: {b.family()}"

    def to_dict(self) -> dict[str, Any]:
        b = self.best
        return {"verdict": self.verdict, "family": self.family(),
                "best": None if b is None else b.source,
                "sweeps": [{"record": g.source, "out": g.out, **g.to_dict()}
                           for g in self.sweeps]}  # fmt: skip


def best_records(folder: str | os.PathLike, top: int = 2) -> list[str]:
    """The records of a campaign's ``top`` best distinct evaluations (by certified ratio): its
    ``best.json`` first, then records rebuilt from its log into ``folder/top-<index>.json``."""
    from ..record import save_record
    from .log import BEST_NAME, HEADER_NAME, LOG_NAME, read_log
    from .runner import record_from_log
    from .types import CampaignHeader

    folder = Path(folder)
    out: list[str] = []
    if (folder / BEST_NAME).exists():
        out.append(str(folder / BEST_NAME))
    if top <= len(out) or not (folder / LOG_NAME).exists():
        return out[:top]
    from ..fileio import read_json

    raw = read_json(folder / HEADER_NAME)
    header = CampaignHeader(**{k: raw[k] for k in CampaignHeader.__dataclass_fields__})
    log = [r for r in read_log(folder / LOG_NAME).values() if r.certified]
    log.sort(key=lambda r: (-r.ratio_certified, r.index))
    seen = set()
    if out:
        from ..record import load_record

        seen.add(instance_key(load_record(out[0]).instance))
    for r in log:
        if len(out) >= top:
            break
        if r.key in seen:
            continue
        seen.add(r.key)
        rec = record_from_log(header, r)
        path = folder / f"top-{r.index}.json"
        save_record(rec, path)
        out.append(str(path))
    return out


def grow_campaign(
    folder: str | os.PathLike,
    *,
    top: int = 2,
    steps: int = 4,
    time_limit: float = 10.0,
    certify: int = 2,
    out: str | os.PathLike | None = None,
    find_budget: int = FIND_BUDGET,
    progress: bool | None = None,
    certify_seconds: float = CERTIFY_SECONDS,
) -> CampaignGrowth:
    """Growth sweeps of the ``top`` best records of the campaign in ``folder`` (directions found
    by :func:`find_directions` with ``find_budget`` probes; sweeps in ``out/<record>``, default
    ``folder/growth``)."""
    base = Path(out) if out is not None else Path(folder) / "growth"
    sweeps = []
    for path in best_records(folder, top):
        sweeps.append(grow(path, steps=steps, time_limit=time_limit, certify=certify,
                           out=base / Path(path).stem, find_budget=find_budget,
                           progress=progress, certify_seconds=certify_seconds))  # fmt: skip
    return CampaignGrowth(tuple(sweeps), sweep_verdict([g.verdict for g in sweeps]))


__all__ = [
    "BOUNDED_CHANGE",
    "CampaignGrowth",
    "EXTRA_DOUBLINGS",
    "FIND_BUDGET",
    "FIND_DOUBLINGS",
    "FIND_TOP",
    "Finder",
    "GEOMETRIC_Q",
    "GROWS_DOUBLINGS",
    "GROWS_EXPONENT",
    "MAX_MEMORY",
    "MAX_N",
    "Direction",
    "GrowthDirection",
    "GrowthPoint",
    "GrowthResult",
    "GrowthVerdict",
    "best_records",
    "direction_verdict",
    "directions_for",
    "find_directions",
    "grow",
    "grow_campaign",
    "parse_direction",
    "sweep_verdict",
    "tail_exponent",
]
