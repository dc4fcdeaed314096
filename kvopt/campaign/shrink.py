"""Shrinking a worst case (``kvopt shrink RECORD --min-ratio R``): delta debugging on instances.

Starting from a record's instance, :func:`shrink` repeatedly tries smaller
candidates and keeps one whenever its **certified** ratio stays ≥ ``R`` and it
stays in the class (the policy's registry class, and the claim's class when
the record names one):

1. *remove jobs* — Zeller's ddmin: remove chunks of ``n/2, n/4, …, 1`` jobs;
2. *lower numbers* — per job, prompt, response and arrival to ``1`` (or 0),
   to half, minus one; then the memory budget (to half with every length
   halved, then minus one);

until a whole pass changes nothing.  With ``space={"kind": "typed"}`` (``--space
kind=typed``, SPEC §9) the passes first work on the job *types* (maximal runs
of identical jobs, :meth:`kvopt.space.TypedSpace.types`) while the instance
has more jobs than :data:`TYPED_JOB_MOVES_N`:

0. *types and counts* — remove a type, halve a count, merge two types (the
   merged type takes either one's sizes, counts summed), one job fewer of a
   type; then each type's prompt, response and arrival lowered (to 1 or 0, to
   half, minus one) for all its jobs at once;

and the per-job moves above run only once the instance is that small (on
hundreds of copies they would try one job at a time).  A candidate's certified ratio uses the
cheapest certificate that decides it: ``alg/UB`` with the cheap clairvoyant
schedules, else (when ``alg/LB ≥ R`` leaves hope) the exact solver's
incumbent.  The result is a new record of the smallest instance, solved
exactly, whose ``found_by`` says it was shrunk from which record.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..certify import Effort, bracket, solve_bracket
from ..errors import InputError, PolicyError
from ..instance import Instance
from ..logs import progress_logger
from ..policy import ResolvedPolicy
from ..record import Record, load_record, record_from_bracket, save_record
from .evaluate import instance_key, solve_options

#: Typed shrinking uses per-job moves only at or below this many jobs.
TYPED_JOB_MOVES_N = 32


def _class_rule(record: Record, policy: ResolvedPolicy) -> Callable[[Instance], str | None]:
    from ..claim import CLAIMS, USER_CLAIMS

    cid = str(record.meta.get("claim", "")) if record.meta else ""
    claim = CLAIMS.get(cid) or USER_CLAIMS.get(cid)

    def rule(inst: Instance) -> str | None:
        r = policy.rule(inst)
        if r is None and claim is not None:
            r = claim.rule(inst)
        return r

    return rule


class _Judge:
    """Decides "certified ratio ≥ R" for candidates, caching by instance content."""

    def __init__(self, record: Record, policy: ResolvedPolicy, min_ratio: float,
                 time_limit: float, rule, typed: bool = False):  # fmt: skip
        self.rec = record
        self.policy = policy
        self.typed = typed
        self.R = min_ratio
        self.time_limit = time_limit
        self.rule = rule
        self.cache: dict[str, float | None] = {}
        self.solves = 0
        self.tried = 0

    def ratio(self, inst: Instance) -> float | None:
        """The certified ratio found for ``inst`` (``None`` outside the class or on a policy error)."""
        from ..simulation import simulate

        key = instance_key(inst)
        if key in self.cache:
            return self.cache[key]
        self.tried += 1
        r: float | None = None
        if inst.n >= 1 and self.rule(inst) is None:
            rec = self.rec
            try:
                res = simulate(inst, self.policy, seed=rec.seed)
            except (PolicyError, InputError):
                res = None
            if res is not None:
                b = bracket(res.schedule, inst, Effort(typed=self.typed), objective=rec.objective)
                r = b.ratio_certified
                if r < self.R and b.lb > 0 and b.ratio_optimistic >= self.R:
                    self.solves += 1
                    effort = Effort(exact_seconds=self.time_limit, typed=self.typed,
                                    **solve_options(inst, self.typed))  # fmt: skip
                    r = solve_bracket(b, inst, effort).ratio_certified
        self.cache[key] = r
        return r

    def keeps(self, inst: Instance) -> bool:
        r = self.ratio(inst)
        return r is not None and r >= self.R


def _without(inst: Instance, drop: set[int]) -> Instance | None:
    jobs = tuple(j for k, j in enumerate(inst.jobs) if k not in drop)
    return inst.replace(jobs=jobs) if jobs else None


def _candidates_numbers(inst: Instance):
    """Smaller numbers, one change at a time, most aggressive first."""
    for k, job in enumerate(inst.jobs):
        for field, low in (("prompt", 1), ("response", 1), ("arrival", 0)):
            v = getattr(job, field)
            for new in sorted({low, v // 2, v - 1}, key=lambda x: x):
                if low <= new < v:
                    jobs = list(inst.jobs)
                    jobs[k] = dataclasses.replace(job, **{field: new})
                    yield (
                        f"job {k} {field} {v}->{new}",
                        lambda jobs=jobs: inst.replace(jobs=tuple(jobs)),
                    )
    M = inst.memory
    if M >= 4:
        yield (
            f"halve M {M}->{M // 2}",
            lambda: Instance(
                memory=M // 2,
                jobs=tuple(
                    dataclasses.replace(
                        j,
                        prompt=max(1, j.prompt // 2),
                        response=max(1, j.response // 2),
                        arrival=j.arrival // 2,
                    )  # fmt: skip
                    for j in inst.jobs
                ),
            ),
        )
    for new_m in (int(inst.peaks.max(initial=1)), M - 1):
        if 2 <= new_m < M:
            yield f"memory {M}->{new_m}", lambda new_m=new_m: inst.replace(memory=new_m)


def _candidates_types(inst: Instance):
    """Typed moves (pass 0 of the module docstring), most aggressive first."""
    from ..space import TypedSpace

    types, M = TypedSpace.types(inst), inst.memory
    k = len(types)

    def build(ts):
        return lambda ts=ts: TypedSpace.build(M, ts)

    for i in range(k):
        if k >= 2:
            yield f"remove type {i}", build(types[:i] + types[i + 1 :])
    for i, t in enumerate(types):
        if t.count >= 2:
            yield (f"halve type {i}'s count {t.count}->{t.count // 2}",
                   build(types[:i] + [t._replace(count=t.count // 2)] + types[i + 1 :]))  # fmt: skip
    for i in range(k):
        for j in range(i + 1, k):
            c = types[i].count + types[j].count
            rest = [t for m, t in enumerate(types) if m not in (i, j)]
            for keep in (i, j):
                merged = types[keep]._replace(count=c)
                pos = min(i, j)
                yield (f"merge types {i}+{j} as {keep}",
                       build(rest[:pos] + [merged] + rest[pos:]))  # fmt: skip
    for i, t in enumerate(types):
        if t.count >= 2:
            yield (f"type {i}'s count {t.count}->{t.count - 1}",
                   build(types[:i] + [t._replace(count=t.count - 1)] + types[i + 1 :]))  # fmt: skip
    for i, t in enumerate(types):
        for field, low in (("prompt", 1), ("response", 1), ("arrival", 0)):
            v = getattr(t, field)
            for new in sorted({low, v // 2, v - 1}):
                if low <= new < v:
                    yield (f"type {i} {field} {v}->{new}",
                           build(types[:i] + [t._replace(**{field: new})] + types[i + 1 :]))  # fmt: skip


def shrink(
    record: Record | str,
    *,
    min_ratio: float,
    out: str | None = None,
    exact_time_limit: float = 10.0,
    seconds: float | None = None,
    progress: bool | None = None,
    space: Mapping[str, Any] | None = None,
) -> Record:
    """Shrink ``record``'s instance while its certified ratio stays ≥ ``min_ratio`` (see the module).

    ``space``: ``{"kind": "typed"}`` adds the typed moves (``{"kind": "jobs"}``,
    the default, keeps the per-job moves only).
    """
    from ..space import SPACES, TypedSpace
    from .runner import progress_enabled

    extra = sorted(set(space or {}) - {"kind"})
    if extra:
        raise InputError("shrink takes only the space's kind", source=f"--space {extra[0]}")
    kind = (space or {}).get("kind", "jobs")
    if kind not in SPACES:
        raise InputError(f"unknown kind {kind!r} (known: {', '.join(SPACES)})",
                         source="space.kind")  # fmt: skip
    typed = kind == "typed"

    if isinstance(record, str):
        src = record
        record = load_record(record)
    else:
        src = None
    if not (min_ratio > 0):
        raise InputError(f"must be > 0, got {min_ratio!r}", source="--min-ratio")
    if seconds is not None and not seconds > 0:
        raise InputError(f"must be > 0, got {seconds!r}", source="--seconds")
    from ..policy import resolve_policy
    from ..record import replay_name

    # a user's policy runs as the code that made the record, or not at all (SPEC §4);
    # resolved once, every candidate runs this object
    policy = resolve_policy(replay_name(record, src), record.params)
    rule = _class_rule(record, policy)
    judge = _Judge(record, policy, float(min_ratio), exact_time_limit, rule, typed=typed)
    say = progress_logger(__name__, progress_enabled(progress), "kvopt shrink")
    cur = record.instance
    if not judge.keeps(cur):
        r = judge.ratio(cur)
        raise InputError(
            f"the record's own instance has certified ratio {r if r is None else round(r, 4)} "
            f"< {min_ratio} as re-evaluated here (lower --min-ratio)",
            source="--min-ratio",
        )
    t0 = time.monotonic()

    def out_of_time() -> bool:
        return seconds is not None and time.monotonic() - t0 >= seconds

    def first_kept(candidates):
        """The first candidate (in order) that keeps the ratio, announced; ``None`` if none."""
        for what, make in candidates:
            try:
                cand = make()
            except InputError:  # the move left the model (e.g. s + o > M): skip it
                continue
            if judge.keeps(cand):
                say(what)
                return cand
        return None

    steps = 0
    changed = True
    while changed and not out_of_time():
        changed = False
        # 0. types and counts (typed), then per-job moves only on small instances
        while (
            typed
            and not out_of_time()
            and (found := first_kept(_candidates_types(cur))) is not None
        ):
            cur, changed, steps = found, True, steps + 1
        if typed and cur.n > TYPED_JOB_MOVES_N:
            continue
        # 1. ddmin over jobs
        chunk = max(1, cur.n // 2)
        while chunk >= 1 and cur.n > 1 and not out_of_time():
            removed = False
            for start in range(0, cur.n, chunk):
                drop = set(range(start, min(start + chunk, cur.n)))
                cand = _without(cur, drop)
                if cand is not None and judge.keeps(cand):
                    say(f"removed jobs {sorted(drop)}: n {cur.n} -> {cand.n}")
                    cur, removed, changed = cand, True, True
                    steps += 1
                    break
            if not removed:
                chunk //= 2
        # 2. lower numbers
        while not out_of_time() and (found := first_kept(_candidates_numbers(cur))) is not None:
            cur, changed, steps = found, True, steps + 1
    # the final record, solved exactly (certified as well as the solver can)
    from ..simulation import simulate

    cur = cur.replace(name=f"{policy.slug}-shrunk", meta={"source": "kvopt shrink"})
    res = simulate(cur, policy, seed=record.seed)
    effort = Effort(exact_seconds=exact_time_limit, typed=typed, **solve_options(cur, typed))
    b = bracket(res.schedule, cur, effort, objective=record.objective)
    new = record_from_bracket(
        cur,
        record.policy,
        dict(record.params),
        record.seed,
        b,
        source=record.policy_source,
        found_by={
            "strategy": "shrink",
            "min_ratio": float(min_ratio),
            "steps": steps,
            "candidates": judge.tried,
            "exact_solves": judge.solves + b.solves,
            "seconds": round(time.monotonic() - t0, 3),
            "from": {
                "file": src,
                "n": record.instance.n,
                "memory": record.instance.memory,
                "ratio_certified": record.ratio_certified,
                "found_by": dict(record.found_by),
            },  # fmt: skip
            **({"types": [list(t) for t in TypedSpace.types(cur)]} if typed else {}),
        },
        meta=dict(record.meta) if record.meta else None,
    )
    if out:
        save_record(new, out)
    say(f"n {record.instance.n} -> {cur.n}, M {record.instance.memory} -> {cur.memory}; "
        f"certified ratio {new.ratio_certified:.4f} (>= {min_ratio})")  # fmt: skip
    return new


__all__ = ["shrink"]
