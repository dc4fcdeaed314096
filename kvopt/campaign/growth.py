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

import numpy as np

from ..errors import BudgetError, InputError, PolicyError
from ..fileio import write_json_atomic
from ..instance import Instance
from ..logs import progress_logger
from ..schedule import Schedule
from ..space import TypedSpace
from .evaluate import cheap_lb, cheap_ub, exact_opt, instance_key, max_attempts
from .families import (
    BOUNDED_CHANGE,
    GROWS_DOUBLINGS,
    GROWS_EXPONENT,
    Direction,
    GrowthVerdict,
    direction_verdict,
    directions_for,
    parse_direction,
    sweep_verdict,
    tail_exponent,
)

#: Sane sizes: a direction stops before a point with more jobs or more memory.  16,384 jobs
#: lets a typed record of about 1,000 jobs take the four doublings a ``grows`` verdict needs
#: (a point of 6,000 jobs costs seconds: one simulation and the cheap bounds; exact solves
#: stop at ``exact_max_n``).
MAX_N = 16384
MAX_MEMORY = 2**20
#: The summary file of a sweep, in its folder.
SUMMARY_NAME = "growth.json"
PLOT_NAME = "growth.png"


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class GrowthPoint:
    """One point of a direction: the instance at ``factor``, its bounds and ratios, its record."""

    factor: int
    n: int
    memory: int
    alg: int
    ub: int
    lb: int
    ratio_certified: float
    ratio_optimistic: float
    opt_status: str
    record: str

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

    def to_dict(self) -> dict[str, Any]:
        d = {"name": self.name, "steps": [p.to_dict() for p in self.steps],
             "exponent": self.exponent, "verdict": self.verdict}  # fmt: skip
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
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "directions": [d.to_dict() for d in self.directions],
                "best_direction": self.best_direction, "verdict": self.verdict}  # fmt: skip

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
        pts = ", ".join(f"x{p.factor}: n={p.n} M={p.memory} {p.ratio_certified:.3g}"
                        for p in d.steps)  # fmt: skip
        e = "-" if d.exponent is None else f"{d.exponent:.3f}"
        return f"direction {d.name} ({d.verdict}, exponent {e}): {pts}"

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
    inst: Instance
    factor: int
    alg: int
    schedule: Schedule
    lb: int
    ub: int
    starts: np.ndarray
    ub_schedule: Schedule | None = None  # a better clairvoyant schedule than ``starts`` (I_0)
    optimal: bool = False
    solved: bool = False

    @property
    def ratio_lb(self) -> float:
        return _ratio(self.alg, self.lb)


def grow(
    record,
    *,
    steps: int = 4,
    directions: Sequence[str] | str | None = None,
    time_limit: float = 10.0,
    out: str | os.PathLike | None = None,
    certify: int = 2,
    exact_max_n: int = 128,
    plot: bool = True,
    progress: bool | None = None,
) -> GrowthResult:
    """The growth sweep of ``record`` (a :class:`~kvopt.record.Record` or a record file).

    ``steps`` doublings per direction; ``directions`` (names or a comma list;
    default every direction that applies); ``time_limit`` seconds per exact
    solve, on the points of the ``certify`` directions screened best (by
    ALG/LB) with at most ``exact_max_n`` jobs; ``out`` the folder of the point
    records, ``growth.json`` and the plot (default ``kvopt-grow/<record>``).

    >>> res = grow("instances/worst/small/fcfs.json", steps=1, directions="count",
    ...            out=tmp / "g", time_limit=2, progress=False)
    >>> [p.factor for p in res.direction("count").steps], res.verdict
    ([1, 2], 'unclear')
    """
    from ..policy import get_policy
    from ..record import Record, load_record

    source = ""
    if not isinstance(record, Record):
        source = str(record)
        record = load_record(record)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise InputError(f"must be an integer >= 1, got {steps!r}", source="--steps")
    if not (isinstance(time_limit, int | float) and time_limit > 0):
        raise InputError(f"must be a positive number, got {time_limit!r}", source="--time-limit")
    if isinstance(certify, bool) or not isinstance(certify, int) or certify < 0:
        raise InputError(f"must be an integer >= 0, got {certify!r}", source="certify")
    types = TypedSpace.types(record.instance)
    if isinstance(directions, str):
        directions = [d for d in directions.split(",") if d.strip()]
    names = list(directions) if directions else directions_for(len(types))
    if not names:
        raise InputError("no direction given", source="--directions")
    dirs = [parse_direction(d, len(types)) for d in names]
    dirs = list({d.name: d for d in dirs}.values())
    stem = Path(source).stem if source else f"{record.policy}-record"
    out = Path(out) if out is not None else Path("kvopt-grow") / stem
    if out.exists() and not out.is_dir():
        raise InputError("is a file, expected a folder", source=f"--out {out}")
    spec = get_policy(record.policy)
    params = spec.resolve_params(record.params)
    seed = record.seed if spec.seeded else None
    say = progress_logger("kvopt.campaign.growth", progress is not False, "kvopt grow")
    t0 = time.monotonic()

    cache: dict[str, _Point] = {}

    def point(inst: Instance, factor: int) -> _Point | str:
        key = instance_key(inst)
        if key in cache:
            return cache[key]
        why = spec.check(inst, params) if spec.check else None
        if why:
            return f"the point at factor {factor} is outside the policy's class: {why}"
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
            return f"the point at factor {factor} is over the attempt budget: {err}"
        except (PolicyError, InputError) as err:
            return f"simulating the point at factor {factor} fails: {err}"
        alg = _objective(inst, res.schedule, record.objective)
        lb, _ = cheap_lb(inst, record.objective)
        starts, ub, _ = cheap_ub(inst, record.objective)
        p = _Point(inst, factor, alg, res.schedule, int(lb), int(ub), starts)
        p.optimal = p.lb >= p.ub
        cache[key] = p
        return p

    # ---- I_0: the record's instance, with what the record already knows
    base = point(record.instance, 1)
    if isinstance(base, str):
        raise InputError(base, source=source or "record")
    if record.ub < base.ub:
        base.ub, base.ub_schedule = record.ub, record.opt_schedule
    base.lb = max(base.lb, min(record.lb, base.ub))
    base.optimal = base.optimal or record.optimal or base.lb >= base.ub

    # ---- every direction, cheaply
    families: dict[str, list[_Point]] = {}
    stopped: dict[str, str | None] = {}
    for d in dirs:
        pts, M, ts, why = [base], record.instance.memory, types, None
        for i in range(1, steps + 1):
            M, ts = d.step(M, ts)
            n = sum(t.count for t in ts)
            if n > MAX_N or M > MAX_MEMORY:
                why = (f"stopped before factor {2**i}: n = {n}, M = {M} exceed the sane sizes "
                       f"(n <= {MAX_N}, M <= {MAX_MEMORY})")  # fmt: skip
                break
            got = point(TypedSpace.build(M, ts, name=f"{stem}-{d.name}-x{2**i}"), 2**i)
            if isinstance(got, str):
                why = got
                break
            pts.append(got)
            say(f"{d.name} x{2**i}: n={got.inst.n} M={M} ALG/UB {_ratio(got.alg, got.ub):.4g} "
                f"ALG/LB {got.ratio_lb:.4g}")  # fmt: skip
        families[d.name], stopped[d.name] = pts, why
        if why:
            say(f"{d.name}: {why}")

    # ---- screen by ALG/LB, certify the best directions with exact solves
    def screen(name: str) -> tuple[float, float]:  # the largest possible ratio at the end
        pts = families[name]
        e = tail_exponent([p.factor for p in pts], [p.ratio_lb for p in pts])
        return (pts[-1].ratio_lb, e if e is not None else -math.inf)

    chosen = sorted(families, key=screen, reverse=True)[:certify]
    solves = 0
    for name in chosen:
        for p in families[name]:
            if p.optimal or p.solved or p.inst.n > exact_max_n:
                continue
            warm = p.starts if p.ub_schedule is None else _starts(p.ub_schedule, p.inst.n)
            ex = exact_opt(p.inst, record.objective, float(time_limit), warm)
            p.solved = True
            solves += 1
            if ex.objective is not None and ex.starts is not None and ex.objective < p.ub:
                p.ub, p.starts, p.ub_schedule = int(ex.objective), np.asarray(ex.starts), None
            if ex.bound is not None:
                p.lb = max(p.lb, min(int(ex.bound), p.ub))
            p.optimal = p.optimal or ex.optimal or p.lb >= p.ub
            say(f"{name} x{p.factor}: exact {ex.status} in {ex.seconds:.1f}s, "
                f"ALG/UB {_ratio(p.alg, p.ub):.4g}")  # fmt: skip

    # ---- records, exponents, verdicts
    saved: dict[int, str] = {}
    results = []
    for d in dirs:
        steps_out = []
        for p in families[d.name]:
            if id(p) not in saved:
                saved[id(p)] = _save_point(record, p, d.name, out, source)
            steps_out.append(_summary(p, saved[id(p)]))
        exp, verdict = direction_verdict([p.factor for p in steps_out],
                                         [p.ratio_certified for p in steps_out])  # fmt: skip
        results.append(GrowthDirection(d.name, tuple(steps_out), exp, verdict, stopped[d.name],
                                       certified=d.name in chosen))  # fmt: skip
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
    )
    if plot:
        res = _with_plot(res, out / PLOT_NAME)
    write_json_atomic(out / SUMMARY_NAME, {**res.to_dict(), "source": source, "plot": res.plot,
                                           "seconds": round(res.seconds, 2),
                                           "exact_solves": solves})  # fmt: skip
    say(f"verdict {res.verdict}; best {res.family()}")
    return res


def _best(results: Sequence[GrowthDirection]) -> str | None:
    if not results:
        return None

    def key(d: GrowthDirection):
        e = d.exponent if d.exponent is not None else -math.inf
        return (d.verdict == GrowthVerdict.GROWS, e, d.steps[-1].ratio_certified)

    return max(results, key=key).name


def _save_point(record, p: _Point, direction: str, out: Path, source: str) -> str:
    from ..record import make_record, save_record

    opt = p.ub_schedule or Schedule.from_starts(p.inst, p.starts, producer="clairvoyant (grow)")
    rec = make_record(
        p.inst, record.policy, dict(record.params), record.seed, record.objective, p.schedule,
        opt, p.ub if p.optimal else p.lb, "optimal" if p.optimal else "feasible",
        found_by={"strategy": "grow", "direction": direction if p.factor > 1 else None,
                  "factor": p.factor, "source": source or None,
                  "types": [list(t) for t in TypedSpace.types(p.inst)]},
    )  # fmt: skip
    name = "x1.json" if p.factor == 1 else f"{direction.replace(':', '-')}-x{p.factor}.json"
    path = out / name
    save_record(rec, path)
    return str(path)


def _summary(p: _Point, path: str) -> GrowthPoint:
    lb = p.ub if p.optimal else min(p.lb, p.ub)
    return GrowthPoint(p.factor, p.inst.n, p.inst.memory, p.alg, p.ub, lb, _ratio(p.alg, p.ub),
                       _ratio(p.alg, lb), "optimal" if p.optimal else "feasible", path)  # fmt: skip


def _with_plot(res: GrowthResult, path: Path) -> GrowthResult:
    from dataclasses import replace

    from ..plotting import plot_growth

    series = {d.name: [(p.factor, p.ratio_certified) for p in d.steps] for d in res.directions}
    plot_growth(series, path, title=f"{res.policy}: certified ratio along each direction "
                f"(verdict {res.verdict})")  # fmt: skip
    return replace(res, plot=str(path))


def _starts(sched: Schedule, n: int) -> np.ndarray:
    st = np.zeros(n, dtype=np.int64)
    for a in sched.attempts:
        if a.completed:
            st[a.job] = a.start
    return st


def _objective(inst: Instance, sched: Schedule, objective: str) -> int:
    from ..record import objective_value

    return objective_value(inst, sched, objective)


def _ratio(a: int, b: int) -> float:
    if b <= 0:
        return 1.0 if a <= 0 else float("inf")
    return a / b


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
    progress: bool | None = None,
) -> CampaignGrowth:
    """Growth sweeps of the ``top`` best records of the campaign in ``folder`` (every direction
    that applies; sweeps in ``out/<record>``, default ``folder/growth``)."""
    base = Path(out) if out is not None else Path(folder) / "growth"
    sweeps = []
    for path in best_records(folder, top):
        sweeps.append(grow(path, steps=steps, time_limit=time_limit, certify=certify,
                           out=base / Path(path).stem, progress=progress))  # fmt: skip
    return CampaignGrowth(tuple(sweeps), sweep_verdict([g.verdict for g in sweeps]))


__all__ = [
    "BOUNDED_CHANGE",
    "CampaignGrowth",
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
    "grow",
    "grow_campaign",
    "parse_direction",
    "sweep_verdict",
    "tail_exponent",
]
