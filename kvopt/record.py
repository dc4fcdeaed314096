"""Search records (SPEC §8): a policy's schedule beside the best clairvoyant schedule known.

A :class:`Record` holds everything a referee needs to replay and re-check a
ratio: the instance (inline), the policy with its parameters and seed, the
policy's schedule, the best clairvoyant schedule known (``opt_schedule``, of
value ``ub``), the best proven lower bound ``lb`` on Opt, ``opt_status``
(``optimal`` when the exact solver proved ``ub = lb = Opt``, else
``feasible``), both ratios and the versions of kvopt, HiGHS, OR-Tools and
Python.

* ``ratio_certified = alg / ub`` — a lower bound on the true ratio ``alg/Opt``
  (``ub`` is the value of a schedule that passed the checker);
* ``ratio_optimistic = alg / lb`` — an upper bound on it.

:func:`verify_record` re-checks a record using nothing but the model (SPEC §1)
and a fresh simulation: both schedules pass the checker on the inline
instance, ``alg`` and ``ub`` are their objectives, ``lb ≤ ub`` (equal when
``optimal``), the ratios are ``alg/ub`` and ``alg/lb``, the policy applies to
the instance, and re-simulating the policy with the same parameters and seed
gives the same schedule.  ``kvopt check RECORD`` prints its findings and exits
1 when one of them fails.

Objectives: ``total`` (``Σ C_i``, SPEC's default), ``makespan`` (``max C_i``)
and ``latency`` (``Σ (C_i − a_i)``, the objective of the ``online-sqrt-n``
claim; it differs from ``total`` by the constant ``Σ a_i``, so the same
schedules are optimal).
"""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .certify import Bracket, OptStatus, objective_value, ratio, start_bracket
from .errors import InputError
from .fileio import read_json, write_json_atomic
from .instance import Instance, _describe, _is_int, check_header
from .policy import ResolvedPolicy
from .schedule import Schedule, check_schedule

FORMAT = "kvopt.record"
VERSION = 1
OBJECTIVES = ("total", "makespan", "latency")
OPT_STATUSES = ("optimal", "feasible")

_KEYS = {
    "format",
    "version",
    "policy",
    "params",
    "seed",
    "objective",
    "instance",
    "schedule",
    "opt_schedule",
    "alg",
    "ub",
    "lb",
    "opt_status",
    "ratio_certified",
    "ratio_optimistic",
    "found_by",
    "versions",
    "meta",
    "lb_source",
    "history",
    "policy_source",
}
_REQUIRED = _KEYS - {"meta", "found_by", "versions", "seed", "lb_source", "history",
                     "policy_source"}  # fmt: skip

#: A stated ratio may differ from ``alg/ub`` by rounding to 4 decimals at most.
RATIO_TOL = 5e-5


def versions() -> dict[str, str]:
    """Versions of kvopt, highspy, ortools and Python (read from metadata: nothing is imported)."""
    from importlib.metadata import PackageNotFoundError, version

    from ._version import __version__

    out = {"kvopt": __version__}
    for pkg in ("highspy", "ortools"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    out["python"] = platform.python_version()
    return out


@dataclass(frozen=True)
class Record:
    """A search record (SPEC §8); see the module docstring."""

    policy: str
    params: Mapping[str, Any]
    seed: int | None
    objective: str
    instance: Instance
    schedule: Schedule
    opt_schedule: Schedule
    alg: int
    ub: int
    lb: int
    opt_status: str
    ratio_certified: float
    ratio_optimistic: float
    found_by: Mapping[str, Any] = field(default_factory=dict)
    versions: Mapping[str, str] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)
    #: Where ``lb`` came from (``area``, ``processing``, ``exact bound``, …; ``None`` in old files).
    lb_source: str | None = None
    #: The brackets the record had before (oldest first): each ``lb``, ``ub``, ``opt_status``,
    #: both ratios, ``lb_source``, ``ub_source``, and ``replaced`` (by what, when).
    history: tuple[Mapping[str, Any], ...] = ()
    #: A user's policy (SPEC §4): its ``reference``, ``kind``, ``path`` and the ``sha256`` of
    #: its source file when the record was made (``None`` for a built-in policy).
    policy_source: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        for name in ("params", "found_by", "versions", "meta"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        if self.policy_source is not None:
            object.__setattr__(self, "policy_source", MappingProxyType(dict(self.policy_source)))
        object.__setattr__(self, "history", tuple(MappingProxyType(dict(h)) for h in self.history))

    @property
    def optimal(self) -> bool:
        return self.opt_status == "optimal"

    def labelled_schedules(self) -> list[tuple[str, Schedule]]:
        """The policy's schedule and the clairvoyant one, each with the label plots give it
        ("Opt" when proven optimal, else "best clairvoyant (UB)")."""
        opt = "Opt" if self.optimal else "best clairvoyant (UB)"
        return [(self.policy, self.schedule), (opt, self.opt_schedule)]

    @property
    def bracket(self) -> Bracket:
        """The record's bracket (:class:`kvopt.certify.Bracket`); raises
        :class:`~kvopt.certify.BracketError` when the stated numbers break its invariants
        (:func:`verify_record` reports that as a problem instead)."""
        status = OptStatus.OPTIMAL if self.lb == self.ub else OptStatus.FEASIBLE
        return Bracket(self.alg, self.lb, self.ub, status, self.opt_schedule,
                       self.opt_schedule.producer or "opt_schedule", self.lb_source or "bound",
                       self.objective, self.schedule)  # fmt: skip

    def bracket_entry(self) -> dict[str, Any]:
        """The record's bracket as one entry of ``history``."""
        return {
            "lb": self.lb,
            "ub": self.ub,
            "opt_status": self.opt_status,
            "ratio_certified": self.ratio_certified,
            "ratio_optimistic": self.ratio_optimistic,
            "lb_source": self.lb_source,
            "ub_source": self.opt_schedule.producer or None,
        }

    def to_dict(self) -> dict[str, Any]:
        n = self.instance.n
        d: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "policy": self.policy,
            "params": dict(self.params),
            "seed": self.seed,
            "objective": self.objective,
            "instance": self.instance.to_dict(),
            "schedule": self.schedule.to_dict(n),
            "opt_schedule": self.opt_schedule.to_dict(n),
            "alg": self.alg,
            "ub": self.ub,
            "lb": self.lb,
            "opt_status": self.opt_status,
            "ratio_certified": self.ratio_certified,
            "ratio_optimistic": self.ratio_optimistic,
            "found_by": dict(self.found_by),
            "versions": dict(self.versions),
        }
        if self.meta:
            d["meta"] = dict(self.meta)
        if self.lb_source is not None:
            d["lb_source"] = self.lb_source
        if self.history:
            d["history"] = [dict(h) for h in self.history]
        if self.policy_source is not None:
            d["policy_source"] = dict(self.policy_source)
        return d

    def summary(self) -> str:
        inst = self.instance
        return (
            f"{self.policy} on n={inst.n}, M={inst.memory}: {self.objective} {self.alg} vs "
            f"{'Opt' if self.optimal else 'UB'} {self.ub} (LB {self.lb}): certified ratio "
            f"{self.ratio_certified:.4f}, optimistic {self.ratio_optimistic:.4f}"
        )

    def __repr__(self) -> str:
        return f"Record({self.summary()})"

    # ------------------------------------------------------------------ reading
    @classmethod
    def from_dict(cls, data: Any, *, source: str | None = None) -> Record:
        """Parse a record (structure only; :func:`verify_record` checks the content)."""
        try:
            return cls._from_dict(data)
        except InputError as err:
            raise err.with_source(source) if source else err from None

    @classmethod
    def _from_dict(cls, data: Any) -> Record:
        check_header(data, FORMAT, VERSION, _KEYS)
        missing = sorted(_REQUIRED - set(data))
        if missing:
            raise InputError("missing required field", field=missing[0])
        if not isinstance(data["policy"], str):
            raise InputError(f"must be a string, got {_describe(data['policy'])}", field="policy")
        for key in ("params", "found_by", "versions", "meta"):
            if key in data and not isinstance(data[key], dict):
                raise InputError(f"must be an object, got {_describe(data[key])}", field=key)
        lb_source = data.get("lb_source")
        if lb_source is not None and not isinstance(lb_source, str):
            raise InputError(f"must be a string, got {_describe(lb_source)}", field="lb_source")
        history = data.get("history", [])
        if not isinstance(history, list):
            raise InputError(f"must be a list, got {_describe(history)}", field="history")
        for k, h in enumerate(history):
            if not isinstance(h, dict):
                raise InputError(f"must be an object, got {_describe(h)}", field=f"history[{k}]")
        policy_source = data.get("policy_source")
        if policy_source is not None and not (
            isinstance(policy_source, dict) and isinstance(policy_source.get("reference"), str)
        ):
            raise InputError("must be an object with a string 'reference'", field="policy_source")
        seed = data.get("seed")
        if seed is not None and not _is_int(seed):
            raise InputError(f"must be an integer or null, got {_describe(seed)}", field="seed")
        if data["objective"] not in OBJECTIVES:
            raise InputError(
                f"must be one of {', '.join(OBJECTIVES)}, got {data['objective']!r}",
                field="objective",
            )
        if data["opt_status"] not in OPT_STATUSES:
            raise InputError(
                f"must be one of {', '.join(OPT_STATUSES)}, got {data['opt_status']!r}",
                field="opt_status",
            )
        for key in ("alg", "ub", "lb"):
            if not _is_int(data[key]) or data[key] < 0:
                raise InputError(f"must be an integer >= 0, got {_describe(data[key])}", field=key)
        for key in ("ratio_certified", "ratio_optimistic"):
            v = data[key]
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise InputError(f"must be a number, got {_describe(v)}", field=key)
        inst = Instance.from_dict(data["instance"], source="instance")
        sched = Schedule.from_dict(data["schedule"], source="schedule")
        opt = Schedule.from_dict(data["opt_schedule"], source="opt_schedule")
        return cls(
            policy=data["policy"],
            params=data["params"],
            seed=None if seed is None else int(seed),
            objective=data["objective"],
            instance=inst,
            schedule=sched,
            opt_schedule=opt,
            alg=int(data["alg"]),
            ub=int(data["ub"]),
            lb=int(data["lb"]),
            opt_status=data["opt_status"],
            ratio_certified=float(data["ratio_certified"]),
            ratio_optimistic=float(data["ratio_optimistic"]),
            found_by=data.get("found_by", {}),
            versions=data.get("versions", {}),
            meta=data.get("meta", {}),
            lb_source=lb_source,
            history=tuple(history),
            policy_source=policy_source,
        )


def is_record_data(data: Any) -> bool:
    return isinstance(data, dict) and data.get("format") == FORMAT


def load_record(path: str | os.PathLike) -> Record:
    """Read a record file; :class:`InputError` names the file and the field."""
    return Record.from_dict(read_json(path), source=str(path))


def save_record(record: Record, path: str | os.PathLike) -> None:
    """Write a record atomically."""
    write_json_atomic(path, record.to_dict())


def make_record(
    instance: Instance,
    policy: str,
    params: Mapping[str, Any],
    seed: int | None,
    objective: str,
    schedule: Schedule,
    opt_schedule: Schedule,
    lb: int,
    opt_status: str,
    *,
    found_by: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
    lb_source: str | None = None,
) -> Record:
    """A record from the two schedules (both are checked here; ``alg``, ``ub`` and ratios derived).

    ``lb`` is a proven lower bound (``lb > ub`` raises
    :class:`~kvopt.certify.BracketError`, nothing is clamped) and ``opt_status`` must agree
    with it: the bracket (:func:`kvopt.certify.start_bracket`) decides.
    """
    b = start_bracket(instance, opt_schedule, objective=objective, lb=int(lb),
                      lb_source=lb_source or "bound", schedule=schedule)  # fmt: skip
    if opt_status == "optimal" and not b.optimal:
        raise ValueError(f"opt_status optimal needs lb = ub, got {b.lb} and {b.ub}")
    return record_from_bracket(instance, policy, params, seed, b, found_by=found_by, meta=meta)


def record_from_bracket(
    instance: Instance,
    policy: str | ResolvedPolicy,
    params: Mapping[str, Any],
    seed: int | None,
    bracket: Bracket,
    *,
    found_by: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
    history: tuple[Mapping[str, Any], ...] = (),
    source: Mapping[str, Any] | None | str = "resolve",
) -> Record:
    """A record of a bracket (:func:`kvopt.certify.bracket`) with the policy's schedule.

    ``source`` is the ``policy_source`` to store (a user's policy, SPEC §4); by default it
    is read from the policy as resolved now — or as the caller resolved it, given a
    :class:`~kvopt.policy.ResolvedPolicy` (a record derived from another passes that
    record's ``policy_source``)."""
    if bracket.schedule is None or bracket.alg is None:
        raise ValueError("a record needs the policy's schedule in the bracket")
    return Record(
        policy_source=policy_source(policy) if isinstance(source, str) else source,
        policy=policy if isinstance(policy, str) else policy.name,
        params=dict(params),
        seed=seed,
        objective=bracket.objective,
        instance=instance,
        schedule=bracket.schedule,
        opt_schedule=bracket.ub_schedule,
        alg=bracket.alg,
        ub=bracket.ub,
        lb=bracket.lb,
        opt_status=str(bracket.status),
        ratio_certified=ratio(bracket.alg, bracket.ub),
        ratio_optimistic=ratio(bracket.alg, bracket.lb),
        found_by=dict(found_by or {}),
        versions=versions(),
        meta=dict(meta or {}),
        lb_source=bracket.lb_source,
        history=tuple(history),
    )


def policy_source(policy: str | ResolvedPolicy) -> dict[str, Any] | None:
    """What a record stores of a user's policy (SPEC §4): reference, kind, path, SHA-256."""
    from .policy import get_policy, parse_policy

    if isinstance(policy, ResolvedPolicy):
        code = policy.code
    else:
        try:
            code = get_policy(parse_policy(policy)[0]).code
        except InputError:
            return None
    return code.to_dict() if code is not None else None


def replay_name(record: Record, source: str | None = None) -> str:
    """The name under which to run a record's policy again (SPEC §4).

    A built-in's name as it is; a user's policy from a file by the absolute path the
    record stores (so the record replays from any folder).  A source file that is
    missing or changed since the record was made is :class:`InputError` (naming the
    record): the record is not re-checkable as that policy, and nothing re-simulates
    another version silently.
    """
    from .usercode import describe_change, split_reference

    src = record.policy_source
    if src is None:
        return record.policy
    change = describe_change(dict(src), record.policy)
    if change:
        raise InputError(change, source=source or "record")
    if src.get("kind") == "file" and src.get("path"):
        return f"{src['path']}:{split_reference(record.policy)[1]}"
    return record.policy


# --------------------------------------------------------------------------- verification


@dataclass(frozen=True)
class Problem:
    """One failed check of a record: the rule, a message, and where (schedule, job, round)."""

    rule: str
    message: str
    schedule: str | None = None
    job: int | None = None
    round: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "message": self.message,
            "schedule": self.schedule,
            "job": self.job,
            "round": self.round,
        }


def verify_record(record: Record, *, resimulate: bool = True) -> list[Problem]:
    """Every check of SPEC §8 on ``record``; an empty list means the record is valid.

    Rules: ``schedule`` / ``opt_schedule`` (the checker's rules, prefixed),
    ``alg`` and ``ub`` (the stated objectives), ``lb`` (``lb ≤ ub``; ``lb = ub``
    when ``optimal``), ``ratio_certified`` / ``ratio_optimistic``, ``policy``
    (known and applicable to the instance), ``replay`` (re-simulating the
    policy gives the same schedule).

    ``resimulate=False`` skips the replay: the schedules, the objectives and the bracket
    are checked, and a built-in policy's name and class; a user's policy (a record with
    ``policy_source``) is not loaded at all, so a changed or missing file is no problem
    (:func:`replay_skipped` says so).
    """
    inst = record.instance
    out: list[Problem] = []
    valid = {}
    for name, sched in (("schedule", record.schedule), ("opt_schedule", record.opt_schedule)):
        res = check_schedule(inst, sched)
        valid[name] = res.valid
        for e in res.errors:
            out.append(Problem(f"{name}:{e.rule}", e.message, name, e.job, e.round))
    values = {}
    for name, key, sched in (
        ("schedule", "alg", record.schedule),
        ("opt_schedule", "ub", record.opt_schedule),
    ):
        if valid[name]:
            values[key] = objective_value(inst, sched, record.objective)
            stated = getattr(record, key)
            if values[key] != stated:
                out.append(
                    Problem(
                        key,
                        f"{key} = {stated} but the {record.objective} objective of "
                        f"{name} is {values[key]}",
                        name,
                    )  # fmt: skip
                )
    if record.lb > record.ub:
        out.append(Problem("lb", f"lb = {record.lb} exceeds ub = {record.ub}"))
    if record.optimal and record.lb != record.ub:
        out.append(Problem("lb", f"opt_status optimal but lb = {record.lb} != ub = {record.ub}"))
    for key, den in (("ratio_certified", record.ub), ("ratio_optimistic", record.lb)):
        want = ratio(record.alg, den)
        got = getattr(record, key)
        if not abs(got - want) <= RATIO_TOL * max(1.0, abs(want)):
            den_name = "ub" if key == "ratio_certified" else "lb"
            out.append(Problem(key, f"{key} = {got} but alg/{den_name} = {want}"))
    out.extend(_check_policy(record, resimulate))
    return out


def _check_policy(record: Record, resimulate: bool) -> list[Problem]:
    from .errors import PolicyError
    from .policy import resolve_policy
    from .simulation import simulate
    from .usercode import describe_change, split_reference

    name = record.policy
    src = record.policy_source
    if src is not None and not resimulate:
        return []  # the user's code is neither run nor loaded (replay_skipped says so)
    if src is not None:
        # a user's policy (SPEC §4): replay it only as the very code that made the record
        change = describe_change(dict(src), name)
        if change:
            return [Problem("policy", change)]
        if src.get("kind") == "file" and src.get("path"):
            name = f"{src['path']}:{split_reference(name)[1]}"  # wherever the record is read
    try:
        ref = resolve_policy(name, record.params)  # once: the checks and the replay use it
    except InputError as err:
        return [Problem("policy", str(err))]
    spec = ref.spec
    if (
        src is not None
        and spec.code is not None
        and src.get("sha256")
        not in (
            None,
            spec.code.sha256,
        )
    ):
        return [
            Problem(
                "policy",
                f"{record.policy} resolves to other code than the record's "
                f"(SHA-256 {spec.code.sha256} now, {src.get('sha256')} stored)",
            )
        ]
    rule = ref.rule(record.instance)
    if rule:
        return [Problem("policy", f"policy {record.policy!r} does not apply: {rule}")]
    if not resimulate:
        return []
    seed = record.seed if spec.seeded else None
    if spec.seeded and seed is None:
        return [Problem("replay", f"policy {record.policy!r} is seeded but the record has no seed")]
    try:
        res = simulate(record.instance, ref, seed=seed)
    except (PolicyError, InputError) as err:
        return [Problem("replay", f"re-simulating the policy fails: {err}")]
    got = sorted((a.start, a.job, a.rounds, a.completed) for a in res.schedule.attempts)
    stated = sorted((a.start, a.job, a.rounds, a.completed) for a in record.schedule.attempts)
    if got != stated:
        diff = next((x for x, y in zip(got, stated) if x != y), None)
        if diff is None:
            diff = (got if len(got) > len(stated) else stated)[min(len(got), len(stated))]
        start, job, rounds, _ = diff
        return [
            Problem(
                "replay",
                f"re-simulating {record.policy} gives a different schedule (first difference: "
                f"job {job}'s attempt at round {start} of {rounds} rounds; {len(got)} attempts "
                f"re-simulated, {len(stated)} in the record)",
                "schedule",
                job,
                start,
            )
        ]
    return []


def replay_skipped(record: Record) -> str:
    """What a check without the replay (``verify_record(..., resimulate=False)``) left out,
    in words: the policy was not re-run, and for a user's policy whose source file changed
    or went missing since the record was made, that change (no problem without a replay)."""
    from .usercode import describe_change

    text = "replay skipped: the schedules, objectives and bracket were checked; the policy "
    text += "was not re-run"
    src = record.policy_source
    change = describe_change(dict(src), record.policy) if src is not None else None
    if change:
        text += f"; a replay would fail: {change}"
    return text


__all__ = [
    "FORMAT",
    "OBJECTIVES",
    "Problem",
    "Record",
    "is_record_data",
    "load_record",
    "make_record",
    "objective_value",
    "policy_source",
    "ratio",
    "replay_name",
    "record_from_bracket",
    "replay_skipped",
    "save_record",
    "verify_record",
    "versions",
]
