"""Growth sweeps (``kvopt grow``, SPEC §9): is a policy's ratio bounded along a family, or growing?

From a record (or an instance and a policy), a *direction* — an exponent vector of
:mod:`kvopt.campaign.families`: per step, M and each type's count, prompt, response and
arrival ×2^e with e ∈ {0, ½, 1} — builds the family ``I_0 = the instance, I_1, I_2, …`` (the
instance's types are its runs of identical consecutive jobs, indexed from 0).  Without a
given direction the finder (:mod:`kvopt.campaign.finder`) picks the fastest-growing ones.

Every point is evaluated as in a search (:mod:`kvopt.campaign.evaluate`): the policy is
simulated with the record's parameters and seed, the cheap bounds give ``LB`` and a checked
kill-free clairvoyant schedule ``UB``.  The directions are then *screened* by the
optimistic ratio ``ALG/LB`` of their last point: the ``certify`` best get exact solves
(``time_limit`` seconds each, instances of at most ``exact_max_n`` jobs), which can only
raise the certified ratio ``ALG/UB`` and prove Opt.  Each point is saved as a record (SPEC
§8; ``found_by`` names the direction, its vector and the factor) that passes ``kvopt
check``.

The exponent of a direction is the least-squares slope of ``log ratio_certified`` against
``log2`` of its axis factor (M's, or n's when M is fixed) over the upper half of its points;
its verdict (:func:`~kvopt.campaign.families.direction_verdict`) is ``grows``, ``bounded``
(with Aitken's limit estimate when the increments shrink geometrically) or ``unclear``; a
direction that is not ``bounded`` after ``steps`` doublings takes up to :data:`EXTRA_DOUBLINGS` more
(within the sizes): to settle, or to confirm its growth.
The sweep's verdict (:func:`sweep_verdict`) is ``grows`` if any direction grows,
``bounded`` if all are bounded, else ``unclear``.  A direction stops early (and says why)
when its next point would have more than :data:`MAX_N` jobs or memory above
:data:`MAX_MEMORY`, or leaves the policy's class.

**Nothing is lost** (issue 55).  Every point is saved as a record in ``DIR/points/`` as soon
as it is evaluated, and saved again whenever an exact solve tightens it; a rerun with the same
``out`` takes every saved point of the same policy, parameters, seed, objective and source
file from there instead of simulating and solving it again, so an interrupted sweep resumes
where it stopped.  **A time budget** (``seconds``, ``kvopt grow --seconds``, default
:data:`kvopt.cli.grow.DEFAULT_SECONDS` on the command line) bounds the whole sweep: the finder, the walks and
their exact solves stop at :data:`SWEEP_SHARE` of it, the certify stage shares what is left
between the points it certifies, and what was judged is reported (``stopped`` says where the
budget ran out).  Progress — each probe of the finder, each point (the extra doublings
marked), each exact solve before it starts — goes to stderr.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..certify import (
    CERTIFY_SECONDS,
    CERTIFY_THREADS,
    Effort,
    bracket,
    solve_bracket,
    tighten,
)
from ..errors import BudgetError, InputError, PolicyError
from ..fileio import write_json_atomic
from ..instance import Instance
from ..logs import progress_logger
from ..space import TypedSpace
from .evaluate import instance_key, max_attempts
from .families import (
    BOUNDED_CHANGE,
    GEOMETRIC_Q,
    GROWS_DOUBLINGS,
    GROWS_EXPONENT,
    Direction,
    GrowthVerdict,
    Judgement,
    direction_verdict,
    directions_for,
    judged_steps,
    parse_direction,
    sweep_verdict,
    tail_exponent,
)
from .finder import FIND_BUDGET, FIND_DOUBLINGS, FIND_TOP, Finder, find_directions
from .growthpoints import POINTS_DIR, Point, Step, Store
from .growthtypes import GrowthDirection, GrowthPoint, GrowthResult

#: Sane sizes: a direction stops before a point with more jobs or more memory.  16,384 jobs
#: lets a typed record of about 1,000 jobs take the four doublings a ``grows`` verdict needs
#: (a point of 6,000 jobs costs seconds: one simulation and the cheap bounds; exact solves
#: stop at ``exact_max_n``).
MAX_N = 16384
MAX_MEMORY = 2**20
#: At most this many steps per direction (a ½ exponent needs two steps per doubling).
MAX_STEPS = 64
#: Doublings a direction adds beyond ``--steps`` until it is ``bounded`` (within the sizes).  A
#: growing direction takes them too, to confirm its growth: four doublings from a small base
#: can rise by chance — Route on a 5-job record rose 34.5 → 50.7 over four doublings of M and
#: settled at 47.8 over ten — and exact solves at the small points can flatten what the cheap
#: ratios showed.
EXTRA_DOUBLINGS = 6
#: The summary file of a sweep, in its folder.
SUMMARY_NAME = "growth.json"
PLOT_NAME = "growth.png"
#: The share of the budget for the finder, the walks and their exact solves; the rest is the
#: certify stage's (the certified ratios decide the verdict, so they get a fixed part of it).
SWEEP_SHARE = 0.6
#: A solve is not started with less than this many seconds of the budget left.
MIN_SOLVE_SECONDS = 1.0


# --------------------------------------------------------------------------- the sweep


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
    from ..policy import resolve_policy
    from ..record import record_from_bracket
    from ..simulation import simulate

    ref = resolve_policy(policy, params)  # once: the run and the record's policy_source
    why = ref.rule(inst)
    if why:
        raise InputError(f"the instance is outside {policy}'s class: {why}",
                         source=source or "instance")  # fmt: skip
    sd = seed if ref.seeded else None
    res = simulate(inst, ref, seed=sd)
    b = bracket(res.schedule, inst, objective="total")
    return record_from_bracket(inst, ref, dict(ref.given), sd if sd is not None else 0, b,
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
    seconds: float | None = None,
) -> GrowthResult:
    """The growth sweep of ``record`` (a :class:`~kvopt.record.Record`, a record file, or an
    :class:`~kvopt.instance.Instance` / instance file with ``policy``).

    ``steps`` doublings of the axis (M, or n when M is fixed) per direction, and up to
    ``extra`` more until the verdict is ``bounded`` and the instance stays within
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

    ``seconds`` bounds the whole sweep (``None``: no bound; the module docstring says how it is
    shared).  Every point is saved in ``out/points/`` as it is evaluated, and a rerun with the
    same ``out`` resumes from them.

    >>> res = grow("instances/worst/small/fcfs.json", steps=1, directions="count",
    ...            out=tmp / "g", time_limit=2, extra=0, progress=False)
    >>> [p.factor for p in res.direction("count").steps], res.verdict
    ([1, 2], 'unclear')
    """
    from ..policy import get_policy, policy_reference, resolve_policy
    from ..record import Record, replay_name

    if policy is not None:
        policy = policy_reference(policy)  # a class (API) stands for its reference (SPEC §4)
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
    if seconds is not None and not (
        isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds > 0
    ):
        raise InputError(f"must be a positive number of seconds, got {seconds!r}",
                         source="--seconds")  # fmt: skip
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
    # resolved once: every point of the sweep runs this object (replay_name: the very code)
    ref = resolve_policy(replay_name(record, source), record.params)
    spec = ref.spec
    stem = Path(source).stem if source else f"{spec.slug}-record"
    out = Path(out) if out is not None else Path("kvopt-grow") / stem
    if out.exists() and not out.is_dir():
        raise InputError("is a file, expected a folder", source=f"--out {out}")
    # a vector is named by the option that takes vectors (--direction), a name by --directions
    dirs = [parse_direction(d, len(types), "--direction" if "=" in d else "--directions")
            for d in texts]  # fmt: skip
    dirs = list({d.text(): d for d in dirs}.values())
    seed = record.seed if spec.seeded else None
    say = progress_logger("kvopt.campaign.growth", progress is not False, "kvopt grow")
    t0 = time.monotonic()
    # the budget: the sweep (finder, walks, their solves) until ``sweep_end``, the certify stage
    # until ``end`` (module docstring)
    end = None if seconds is None else t0 + float(seconds)
    sweep_end = None if seconds is None else t0 + SWEEP_SHARE * float(seconds)
    budget_note: list[str] = []  # where the budget ran out, once

    def out_of_time(until: float | None, what: str) -> bool:
        if until is None or time.monotonic() < until:
            return False
        if not budget_note:
            budget_note.append(f"the --seconds budget ({seconds:g} s) ran out {what}")
            say(f"{budget_note[0]}; judging what was evaluated")
        return True

    store = Store(out, record, spec)
    cache: dict[str, Point] = {}

    def point(inst: Instance, factor: float) -> Point | str:
        key = instance_key(inst)
        if key in cache:
            return cache[key]
        why = ref.rule(inst)
        if why:
            return f"the point at factor {factor:g} is outside the policy's class: {why}"
        saved_point = store.load(key, inst)
        if saved_point is not None:  # evaluated by an earlier run into the same folder
            cache[key] = saved_point
            return saved_point
        if factor > 1 and out_of_time(sweep_end, "during the walks"):
            return f"the --seconds budget ran out before the point at factor {factor:g}"
        try:
            from ..simulation import simulate

            # grown points have the campaign's attempt budget (the record's own instance does
            # not: it is what the record claims); a policy that thrashes on a grown point
            # ends that direction instead of running for hours
            budget = max_attempts(inst.n) if factor > 1 else None
            res = simulate(inst, ref, seed=seed, max_attempts=budget)
        except BudgetError as err:
            return f"the point at factor {factor:g} is over the attempt budget: {err}"
        except (PolicyError, InputError) as err:
            return f"simulating the point at factor {factor:g} fails: {err}"
        p = Point(inst, bracket(res.schedule, inst, objective=record.objective))
        cache[key] = p
        store.save(key, p)
        return p

    # ---- I_0: the record's instance, with what the record already knows
    base = point(record.instance, 1)
    if isinstance(base, str):
        raise InputError(base, source=source or "record")
    base.bracket = tighten(base.bracket, base.inst, lb=record.lb,
                           lb_source=record.lb_source or "record", ub_schedule=record.opt_schedule,
                           ub_source="record")  # fmt: skip
    store.save(instance_key(base.inst), base)
    M0, n0 = record.instance.memory, record.instance.n

    def walk(d: Direction, doublings: int, more: int) -> tuple[list[Step], str | None]:
        """The family of ``d`` until the axis has doubled ``doublings`` times (and up to ``more``
        doublings further while the cheap verdict is ``unclear``)."""
        pts, why = [Step(0, 1, base)], None
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
            pts.append(Step(i, _tidy(x), got))
            reached = math.log2(x)
            tag = (f" (extra: {reached - doublings:.3g} doubling(s) beyond --steps, up to "
                   f"{more}; not bounded yet)" if reached > doublings + 1e-9 else "")  # fmt: skip
            say(f"{d.name} step {i} (x{x:.3g}): n={got.inst.n} M={M} ALG/UB "
                f"{got.ratio_ub:.4g} ALG/LB {got.ratio_lb:.4g}{tag}")  # fmt: skip
            if reached >= doublings - 1e-9 and (not d.half or i % 2 == 0):
                seen = [pts[k] for k in judged_steps(d, [p.step for p in pts])]
                j = _judge(seen)
                # bounded: done; grows or unclear: more doublings (within ``more`` and the
                # sizes) to confirm growth on the certified ratios or to let the ratio settle.
                # Bounded by the ALG/LB ceiling alone (rule ``upper``) walks on too: more
                # points may settle the certified ratios themselves, a tighter limit
                if settled(j) or reached >= doublings + more - 1e-9:
                    break
        return pts, why

    # ---- the directions: given, or found by a search over the exponent lattice
    finder = None
    if not dirs:

        def family_key(d: Direction):  # directions that build the same instances are one
            return tuple((m, tuple(ts)) for m, ts in (d.at(M0, types, i) for i in (1, 2, 3)))

        say(f"finder: up to {find_budget} probes of {FIND_DOUBLINGS} doublings each, the "
            f"{find_top} fastest-growing directions then swept in full")  # fmt: skip
        finder = find_directions(len(types), lambda d: walk(d, FIND_DOUBLINGS, 0)[0],
                                 budget=find_budget, top=find_top, types=types, key=family_key,
                                 say=say, stop=lambda: out_of_time(sweep_end, "in the finder"))  # fmt: skip
        dirs = list(finder.chosen)
        say("finder: sweeping " + ", ".join(d.name for d in dirs))

    families: dict[str, list[Step]] = {}
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

    by_name = {d.name: d for d in dirs}

    def deciding_first(names: Sequence[str]) -> list[tuple[str, Step]]:
        """The points of ``names``' families, those that decide the verdict first (issue 68)."""
        return _deciding_first({n: families[n] for n in names}, by_name)

    def judged(d: Direction):
        pts = families[d.name]
        seen = [pts[k] for k in judged_steps(d, [p.step for p in pts])]
        return _judge(seen)

    def solve_points() -> None:
        nonlocal solves
        for name, s in deciding_first(chosen):
            p = s.point
            if p.bracket.optimal or p.solved or p.inst.n > exact_max_n:
                continue
            limit = float(time_limit)
            if sweep_end is not None:
                limit = min(limit, sweep_end - time.monotonic())
                if limit < MIN_SOLVE_SECONDS:
                    out_of_time(time.monotonic(), "before the exact solves")
                    return
            p.bracket = solve_bracket(p.bracket, p.inst, Effort(exact_seconds=limit))
            p.solved = True
            store.save(instance_key(p.inst), p)
            solves += 1
            say(f"{name} x{s.factor:g}: exact {p.bracket.status} ({p.bracket.lb_source}) in "
                f"{p.bracket.exact_seconds:.1f}s, ALG/UB {p.ratio_ub:.4g}")  # fmt: skip

    solve_points()
    # The walk judged the cheap ratios; the exact solves can move the early points.  A direction
    # that is not bounded on its certified ratios walks on (the points so far are cached, and
    # judged as they are now) within its doublings, and its new points get exact solves too.
    again = [d for d in dirs if stopped[d.name] is None and not settled(judged(d))]
    for d in again:
        before = len(families[d.name])
        families[d.name], stopped[d.name] = walk(d, steps, extra)
        if len(families[d.name]) > before:
            say(f"{d.name}: {len(families[d.name]) - before} more point(s) after the exact solves")
    if again:
        solve_points()

    # ---- the certify stage: the points that decide the verdict, solved at the end (docstring)
    t_cert = time.monotonic()
    if certify_seconds > 0:
        cheap = {d.name: judged(d).verdict for d in dirs}
        overall = sweep_verdict(list(cheap.values()))
        deciding = [n for n, v in cheap.items() if v == overall]
        todo = deciding_first(deciding)
        todo = [(name, s) for k, (name, s) in enumerate(todo)
                if not (s.point.bracket.optimal or s.point.certified)
                and all(s.point is not t.point for _, t in todo[:k])]  # fmt: skip
        if todo:
            left = "" if end is None else f", {end - time.monotonic():.0f} s of the budget left"
            say(f"certify stage: {len(todo)} point(s) decide the verdict, an exact solve of at "
                f"most {certify_seconds:g} s each{left}")  # fmt: skip
        for k, (name, s) in enumerate(todo):
            p = s.point
            limit = certify_seconds
            if end is not None:
                limit = min(limit, (end - time.monotonic()) / (len(todo) - k))
                if limit < MIN_SOLVE_SECONDS:
                    out_of_time(time.monotonic(), f"in the certify stage ({k} of {len(todo)} "
                                "points certified)")  # fmt: skip
                    break
            effort = Effort(exact_seconds=limit, typed=True, solver="auto",
                            deterministic=False, threads=CERTIFY_THREADS)  # fmt: skip
            say(f"certify {k + 1}/{len(todo)} {name} x{s.factor:g} (n={p.inst.n}, "
                f"M={p.inst.memory}): solving, at most {limit:.0f} s")  # fmt: skip
            before = p.bracket
            p.bracket = solve_bracket(p.bracket, p.inst, effort)
            p.certified = True
            store.save(instance_key(p.inst), p)
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
        seen = [steps_out[k] for k in judged_steps(d, [s.step for s in families[d.name]])]
        j = direction_verdict([p.factor for p in seen], [p.ratio_certified for p in seen],
                              [p.ratio_optimistic for p in seen])  # fmt: skip
        limit = j.limit
        if j.rule == "peak":  # the highest certified ratio of every point, judged or not
            limit = max([limit, *(p.ratio_certified for p in steps_out)])
        results.append(GrowthDirection(d.name, tuple(steps_out), j.exponent, j.verdict,
                                       stopped[d.name], certified=d.name in chosen,
                                       vector=d.vector(), axis=d.axis, limit=limit,
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
        policy_source=dict(record.policy_source) if record.policy_source is not None else None,
        seconds_budget=None if seconds is None else float(seconds),
        stopped=budget_note[0] if budget_note else None,
        resumed_points=store.resumed,
    )
    if plot:
        res = _with_plot(res, out / PLOT_NAME)
    write_json_atomic(out / SUMMARY_NAME, {**res.to_dict(), "source": source, "plot": res.plot,
                                           "seconds": round(res.seconds, 2),
                                           "certify_seconds": round(certify_spent, 2),
                                           "exact_solves": solves})  # fmt: skip
    say(f"verdict {res.verdict}; best {res.family()}")
    return res


def _deciding_first(families: dict[str, list[Step]],
                    dirs: dict[str, Direction]) -> list[tuple[str, Step]]:  # fmt: skip
    """The points of ``families`` in the order their exact solves are worth the time (issue 68:
    the defaults' time ran out before the points that decide the verdict were solved): first,
    direction by direction in turn, the judged points of each family's upper half (they decide
    the exponent and the rules ``change`` and ``peak``) and its highest ALG/LB point (where a
    peak's maximum can be certified higher): that point first, then the largest factors
    first; then its other judged points; then the points a verdict does not read (the odd
    steps of a ½ exponent)."""
    ranked: list[tuple[int, int, int, str, Step]] = []
    for order, (name, pts) in enumerate(families.items()):
        judged = judged_steps(dirs[name], [p.step for p in pts])
        upper = set(judged[len(judged) // 2 :] if len(judged) >= 4 else judged[-2:])
        top = max(judged, key=lambda k: pts[k].point.ratio_lb) if judged else None
        upper |= {top} if top is not None else set()
        for k, s in enumerate(pts):
            rank = 0 if k in upper else 1 if k in judged else 2
            where = -1 if k == top else len(pts) - 1 - k  # the peak, then from the family's end
            ranked.append((rank, where, order, name, s))
    ranked.sort(key=lambda r: (r[0], r[1], r[2]))
    out: list[tuple[str, Step]] = []
    for _, _, _, name, s in ranked:
        if all(s.point is not t.point for _, t in out):
            out.append((name, s))
    return out


def _judge(seen: Sequence[Step]) -> Judgement:
    """The verdict of a walk's judged points: certified ALG/UB, with ALG/LB as the ceiling."""
    return direction_verdict([p.factor for p in seen], [p.point.ratio_ub for p in seen],
                             [p.point.ratio_lb for p in seen])  # fmt: skip


def settled(j: Judgement) -> bool:
    """Whether a direction's walk may end: bounded on its certified ratios (rules ``change``
    or ``geometric``); rule ``upper`` (the ALG/LB ceiling) is the final reading only."""
    return j.verdict == GrowthVerdict.BOUNDED and j.rule != "upper"


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


def _save_point(record, s: Step, d: Direction, out: Path, source: str) -> str:
    from ..record import record_from_bracket, save_record

    p = s.point
    rec = record_from_bracket(
        p.inst, record.policy, dict(record.params), record.seed, p.bracket,
        found_by={"strategy": "grow", "direction": d.name if s.step else None,
                  "vector": d.vector() if s.step else None, "step": s.step,
                  "factor": s.factor, "source": source or None,
                  "types": [list(t) for t in TypedSpace.types(p.inst)]},
        source=record.policy_source,
    )  # fmt: skip
    name = "x1.json" if s.step == 0 else f"{_slug(d.name)}-s{s.step}.json"
    path = out / name
    save_record(rec, path)
    return str(path)


def _summary(s: Step, path: str) -> GrowthPoint:
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


__all__ = [
    "BOUNDED_CHANGE",
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
    "POINTS_DIR",
    "SWEEP_SHARE",
    "Direction",
    "GrowthDirection",
    "GrowthPoint",
    "GrowthResult",
    "GrowthVerdict",
    "direction_verdict",
    "directions_for",
    "find_directions",
    "grow",
    "parse_direction",
    "sweep_verdict",
    "tail_exponent",
]
