"""The instance model of SPEC §1 and the instance file format of SPEC §3.

An :class:`Instance` is immutable: a memory budget ``memory`` (M) and a tuple
of :class:`Job` (prompt ``s``, response ``o``, arrival ``a``, optional ``id``
and ``predicted_response``; or, in a **timed instance** (SPEC §10), an
``arrival_time`` in seconds instead of ``a``).  Every rule of SPEC §1/§3 is checked in one
place, :func:`_validate` (called on construction), and a violation raises
:class:`~kvopt.errors.InputError` naming the field (``jobs[3].prompt``) and the
rule; the loaders add the file name.

Derived per-job quantities are read-only numpy arrays computed once:
``prompts``, ``responses``, ``arrivals``, ``areas`` (``A = s·o + o(o+1)/2``),
``peaks`` (``s + o``), ``regimes`` (:class:`Regime`: large ``s > M/4``, small
prompt-heavy ``o ≤ s``, small response-heavy ``o > s``; main paper §3 with
Λ = M/4) and ``predicted`` (``predicted_response`` where given, else the true
response).

An instance may carry a **batch cap** ``max_batch`` (SPEC §10.1, vLLM's
``max_num_seqs``): at most that many attempts run in any round.  It is written back
only when set, so a file without it round-trips byte-identical.

A timed instance carries ``arrival_time`` on every job (mixing it with ``arrival`` is
bad input).  Its ``arrivals`` are ``⌈arrival_time⌉``: the arrival rounds under the
``unit`` time model (SPEC §10), so the exact solvers, the bounds and the class checks
read it as that round instance.  Under another time model the arrival rounds depend
on the schedule: :func:`kvopt.engine.run` finds them and returns the realized instance
(:meth:`Instance.realized`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from types import MappingProxyType
from typing import Any

import numpy as np

from .errors import InputError, did_you_mean
from .fileio import gc_paused, read_json, write_json_atomic

FORMAT = "kvopt.instance"
VERSION = 1

_TOP_KEYS = {"format", "version", "name", "memory", "max_batch", "jobs", "meta"}
_JOB_KEYS = {
    "prompt",
    "response",
    "arrival",
    "arrival_time",
    "id",
    "predicted_response",
    "predicted_interval",
}


class Regime(IntEnum):
    """Geometric regime of a job (main paper §3, Λ = M/4)."""

    LARGE = 0  # s > M/4
    PROMPT_HEAVY = 1  # s <= M/4 and o <= s
    RESPONSE_HEAVY = 2  # s <= M/4 and o > s

    @property
    def label(self) -> str:
        return {0: "large", 1: "prompt-heavy", 2: "response-heavy"}[int(self)]


def area(prompt, response):
    """Memory-time area ``A(s, o) = s·o + o(o+1)/2`` of one completing attempt (SPEC §1).

    Works on integers and on integer numpy arrays; the one place the formula lives.
    """
    return prompt * response + response * (response + 1) // 2


@dataclass(frozen=True)
class Job:
    """One request: prompt ``s ≥ 1``, response ``o ≥ 1``, arrival ``a ≥ 0``."""

    prompt: int
    response: int
    arrival: int = 0
    id: str | int | None = None
    predicted_response: int | None = None
    arrival_time: float | None = None  # seconds (SPEC §10); instead of ``arrival``
    #: an interval prediction ``(lo, hi)`` of the response, ``1 ≤ lo ≤ hi`` (issue 69; Chen,
    #: Ye, Zhou 2025); it need not contain ``response`` (a miscalibrated predictor misses)
    predicted_interval: tuple[int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"prompt": self.prompt, "response": self.response}
        if self.arrival:
            d["arrival"] = self.arrival
        if self.arrival_time is not None:
            d["arrival_time"] = self.arrival_time
        if self.id is not None:
            d["id"] = self.id
        if self.predicted_response is not None:
            d["predicted_response"] = self.predicted_response
        if self.predicted_interval is not None:
            d["predicted_interval"] = [int(x) for x in self.predicted_interval]
        return d


def _is_int(x: Any) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_)


def _describe(x: Any) -> str:
    if isinstance(x, bool):
        return f"boolean {str(x).lower()}"
    if isinstance(x, float):
        return f"float {x!r}"
    if isinstance(x, str):
        return f"string {x!r}"
    if x is None:
        return "null"
    if isinstance(x, list | tuple):
        return "a list"
    if isinstance(x, dict):
        return "an object"
    return repr(x)


def _need_int(value: Any, field_name: str, minimum: int) -> int:
    if not _is_int(value):
        raise InputError(
            f"must be an integer >= {minimum}, got {_describe(value)}", field=field_name
        )
    if value < minimum:
        raise InputError(f"must be an integer >= {minimum}, got {int(value)}", field=field_name)
    return int(value)


def _validate(memory: Any, jobs: Sequence[Job]) -> _Columns | None:
    """Every rule of SPEC §1 on an instance; the one place instances are checked.

    Returns the columns of :func:`_columns_if_valid` when its whole-column test passes
    (the common case, 10⁶ jobs in a fraction of a second); otherwise the job-by-job
    checks below run, raise the first broken rule as before, and return ``None``.
    """
    cols = _columns_if_valid(memory, jobs)
    if cols is not None:
        _check_intervals(jobs)
        return cols
    _need_int(memory, "memory", 1)
    seen_ids: dict[Any, int] = {}
    timed = bool(jobs) and isinstance(jobs[0], Job) and jobs[0].arrival_time is not None
    for i, job in enumerate(jobs):
        if not isinstance(job, Job):
            raise InputError(f"must be a Job, got {type(job).__name__}", field=f"jobs[{i}]")
        s = _need_int(job.prompt, f"jobs[{i}].prompt", 1)
        o = _need_int(job.response, f"jobs[{i}].response", 1)
        _need_int(job.arrival, f"jobs[{i}].arrival", 0)
        _check_arrival_time(job, i, timed)
        if s + o > memory:
            raise InputError(
                f"prompt + response = {s} + {o} = {s + o} exceeds memory {memory}",
                field=f"jobs[{i}]",
            )
        if job.predicted_response is not None:
            _need_int(job.predicted_response, f"jobs[{i}].predicted_response", 1)
        if job.predicted_interval is not None:
            _check_interval(job.predicted_interval, i)
        if job.id is not None:
            if not (isinstance(job.id, str) or _is_int(job.id)):
                raise InputError(
                    f"must be a string or an integer, got {_describe(job.id)}",
                    field=f"jobs[{i}].id",
                )
            if job.id in seen_ids:
                raise InputError(
                    f"duplicate id {job.id!r} (also jobs[{seen_ids[job.id]}].id)",
                    field=f"jobs[{i}].id",
                )
            seen_ids[job.id] = i
    return None


def _check_intervals(jobs: Sequence[Job]) -> None:
    """``predicted_interval`` of every job that has one (issue 69)."""
    for i, job in enumerate(jobs):
        if job.predicted_interval is not None:
            _check_interval(job.predicted_interval, i)


def _check_interval(iv: Any, i: int) -> None:
    """A ``predicted_interval`` is two integers ``[lo, hi]`` with ``1 ≤ lo ≤ hi``."""
    where = f"jobs[{i}].predicted_interval"
    if not isinstance(iv, list | tuple) or len(iv) != 2:
        raise InputError(f"must be a list of two integers [lo, hi], got {_describe(iv)}"
                         + (f" of length {len(iv)}" if isinstance(iv, list | tuple) else ""),
                         field=where)  # fmt: skip
    lo = _need_int(iv[0], f"{where}[0]", 1)
    hi = _need_int(iv[1], f"{where}[1]", 1)
    if lo > hi:
        raise InputError(f"needs lo <= hi, got [{lo}, {hi}]", field=where)


#: ``(prompts, responses, arrivals, predicted)`` as lists of ints, job order.
_Columns = tuple[list[int], list[int], list[int], list[int]]

_INT = {int}
_INT_OR_NONE = {int, type(None)}
_ID_TYPES = {int, str, type(None)}


def _columns_if_valid(memory: Any, jobs: Sequence[Job]) -> _Columns | None:
    """The instance's columns when every rule of :func:`_validate` holds, else ``None``.

    The same rules, tested a column at a time (plain ``int`` fields, numpy comparisons,
    a set for the ids; issue 54: the job-by-job loop took 5 s per 10⁶ jobs).  Anything
    it does not accept at once — a broken rule, numpy integers, a timed instance,
    values near 2⁶³ — returns ``None``: the job-by-job checks then decide and word the
    error, so which error is raised never depends on this test.
    """
    if type(memory) is not int or not 1 <= memory < 2**62 or not jobs:
        return None
    if {type(j) for j in jobs} != {Job}:
        return None
    s = [j.prompt for j in jobs]
    o = [j.response for j in jobs]
    a = [j.arrival for j in jobs]
    pr = [j.predicted_response for j in jobs]
    ids = [j.id for j in jobs]
    if (
        {type(x) for x in s} != _INT
        or {type(x) for x in o} != _INT
        or {type(x) for x in a} != _INT
        or not {type(x) for x in pr} <= _INT_OR_NONE
        or not {type(x) for x in ids} <= _ID_TYPES
        or any(j.arrival_time is not None for j in jobs)
    ):
        return None
    try:
        sa = np.array(s, dtype=np.int64)
        oa = np.array(o, dtype=np.int64)
        aa = np.array(a, dtype=np.int64)
    except OverflowError:
        return None
    if sa.min() < 1 or oa.min() < 1 or aa.min() < 0 or sa.max() >= 2**61 or oa.max() >= 2**61:
        return None
    if (sa + oa > memory).any():
        return None
    given = [x for x in pr if x is not None]
    if given and min(given) < 1:
        return None
    p = pr if len(given) == len(pr) else [o[i] if x is None else x for i, x in enumerate(pr)]
    named = [x for x in ids if x is not None]
    if len(set(named)) != len(named):
        return None
    return s, o, a, p


def _check_arrival_time(job: Job, i: int, timed: bool) -> None:
    """SPEC §10: ``arrival_time`` a number >= 0, not with ``arrival``, on every job or none."""
    t = job.arrival_time
    if t is None:
        if timed:
            raise InputError(
                "missing: in a timed instance every job carries arrival_time (SPEC §10)",
                field=f"jobs[{i}].arrival_time",
            )
        return
    if not timed:
        raise InputError(
            "only some jobs carry arrival_time: give it on every job or on none",
            field=f"jobs[{i}].arrival_time",
        )
    if isinstance(t, bool) or not isinstance(t, int | float | np.integer | np.floating):
        raise InputError(
            f"must be a number >= 0 (seconds), got {_describe(t)}", field=f"jobs[{i}].arrival_time"
        )
    if not math.isfinite(t) or t < 0:
        raise InputError(
            f"must be a number >= 0 (seconds), got {t!r}", field=f"jobs[{i}].arrival_time"
        )
    if job.arrival:
        raise InputError(
            "give arrival (rounds) or arrival_time (seconds), not both",
            field=f"jobs[{i}].arrival_time",
        )


def check_header(data: Any, fmt: str, version: int, allowed: set[str]) -> None:
    """The checks every kvopt JSON file shares: an object, known keys, ``format``, ``version``."""
    if not isinstance(data, dict):
        raise InputError(f"top level must be a JSON object, got {_describe(data)}")
    other = data.get("format")
    if isinstance(other, str) and other.startswith("kvopt.") and other != fmt:
        # another kvopt file (an instance given for a record, …): say so before its keys
        raise InputError(f"must be {fmt!r}, got {other!r}", field="format")
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InputError(f"unknown key (allowed: {', '.join(sorted(allowed))})"
                         + did_you_mean(unknown[0], allowed), field=unknown[0])  # fmt: skip
    if "format" not in data:
        raise InputError(f"missing (expected {fmt!r})", field="format")
    if data["format"] != fmt:
        raise InputError(f"must be {fmt!r}, got {data['format']!r}", field="format")
    if "version" not in data:
        raise InputError(f"missing (expected {version})", field="version")
    if not _is_int(data["version"]) or data["version"] != version:
        raise InputError(
            f"unsupported version {data['version']!r} (expected {version})", field="version"
        )


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class Instance:
    """An immutable KV-cache scheduling instance (SPEC §1).

    Construct with ``Instance(memory, jobs)`` or :meth:`from_arrays`; change with
    :meth:`replace` / :meth:`with_response`, which return new instances.
    """

    memory: int
    jobs: tuple[Job, ...]
    name: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)
    #: the batch cap B of SPEC §10.1 (vLLM's ``max_num_seqs``): at most ``B`` attempts
    #: run in any round; ``None`` = no cap (every result of SPEC §1 to §9 unchanged)
    max_batch: int | None = None

    # derived arrays (not dataclass fields)
    prompts: np.ndarray = field(init=False, repr=False, compare=False)
    responses: np.ndarray = field(init=False, repr=False, compare=False)
    arrivals: np.ndarray = field(init=False, repr=False, compare=False)
    arrival_times: np.ndarray | None = field(init=False, repr=False, compare=False)
    predicted: np.ndarray = field(init=False, repr=False, compare=False)
    areas: np.ndarray = field(init=False, repr=False, compare=False)
    peaks: np.ndarray = field(init=False, repr=False, compare=False)
    regimes: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        jobs = tuple(self.jobs)
        cols = _validate(self.memory, jobs)
        if not isinstance(self.name, str):
            raise InputError(f"must be a string, got {_describe(self.name)}", field="name")
        if not isinstance(self.meta, Mapping):
            raise InputError(f"must be an object, got {_describe(self.meta)}", field="meta")
        if self.max_batch is not None:
            object.__setattr__(self, "max_batch", _need_int(self.max_batch, "max_batch", 1))
        object.__setattr__(self, "memory", int(self.memory))
        object.__setattr__(self, "jobs", jobs)
        object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))
        n = len(jobs)
        if cols is not None:  # the columns the validation built (no timed jobs)
            s = np.array(cols[0], dtype=np.int64)
            o = np.array(cols[1], dtype=np.int64)
        else:
            s = np.fromiter((j.prompt for j in jobs), dtype=np.int64, count=n)
            o = np.fromiter((j.response for j in jobs), dtype=np.int64, count=n)
        if cols is not None:
            a = np.array(cols[2], dtype=np.int64)
            object.__setattr__(self, "arrival_times", None)
        elif n and jobs[0].arrival_time is not None:  # timed: the rounds under ``unit``
            a = np.fromiter((math.ceil(j.arrival_time) for j in jobs), dtype=np.int64, count=n)
            at = np.fromiter((float(j.arrival_time) for j in jobs), dtype=float, count=n)
            object.__setattr__(self, "arrival_times", _readonly(at))
        else:
            a = np.fromiter((j.arrival for j in jobs), dtype=np.int64, count=n)
            object.__setattr__(self, "arrival_times", None)
        p = (
            np.array(cols[3], dtype=np.int64)
            if cols is not None
            else np.fromiter(
                (
                    j.response if j.predicted_response is None else j.predicted_response
                    for j in jobs
                ),
                dtype=np.int64,
                count=n,
            )
        )
        regimes = np.where(
            4 * s > self.memory,
            int(Regime.LARGE),
            np.where(o <= s, int(Regime.PROMPT_HEAVY), int(Regime.RESPONSE_HEAVY)),
        ).astype(np.int8)
        for name, arr in (
            ("prompts", s),
            ("responses", o),
            ("arrivals", a),
            ("predicted", p),
            ("areas", area(s, o)),
            ("peaks", s + o),
            ("regimes", regimes),
        ):
            object.__setattr__(self, name, _readonly(arr))

    # ------------------------------------------------------------------ basics
    @property
    def n(self) -> int:
        return len(self.jobs)

    def __len__(self) -> int:
        return len(self.jobs)

    @property
    def has_arrivals(self) -> bool:
        return bool(self.n) and bool(self.arrivals.any())

    @property
    def is_timed(self) -> bool:
        """Whether the jobs carry ``arrival_time`` in seconds (SPEC §10)."""
        return self.arrival_times is not None

    def realized(self, arrival_rounds: Iterable[int]) -> Instance:
        """The round instance with these arrival rounds (SPEC §10's realized instance).

        The jobs keep their prompts, responses, ids and predictions; the arrival times
        move to ``meta["arrival_times"]``.
        """
        a = [int(x) for x in arrival_rounds]
        if len(a) != self.n:
            raise InputError(f"has {len(a)} entries, expected {self.n}", field="arrival")
        jobs = tuple(
            dataclasses.replace(j, arrival=a[i], arrival_time=None) for i, j in enumerate(self.jobs)
        )
        meta = dict(self.meta)
        if self.arrival_times is not None:
            meta["arrival_times"] = [float(x) for x in self.arrival_times]
        return Instance(self.memory, jobs, name=self.name, meta=meta, max_batch=self.max_batch)

    @property
    def has_predictions(self) -> bool:
        return any(j.predicted_response is not None for j in self.jobs)

    @property
    def has_intervals(self) -> bool:
        """Whether some job carries a ``predicted_interval`` (issue 69)."""
        return any(j.predicted_interval is not None for j in self.jobs)

    @functools.cached_property
    def intervals(self) -> tuple[tuple[int, int], ...]:
        """Per job ``(lo, hi)``: its ``predicted_interval`` where given, else the point
        ``(p, p)`` with ``p`` = :attr:`predicted` (as ``predicted`` falls back on the truth)."""
        p = self.predicted.tolist()
        return tuple(
            (int(j.predicted_interval[0]), int(j.predicted_interval[1]))
            if j.predicted_interval is not None
            else (p[i], p[i])
            for i, j in enumerate(self.jobs)
        )

    def regime(self, i: int) -> Regime:
        return Regime(int(self.regimes[i]))

    def regime_counts(self) -> dict[str, int]:
        counts = np.bincount(self.regimes.astype(np.int64), minlength=3)
        return {Regime(k).label: int(counts[k]) for k in range(3)}

    @property
    def total_area(self) -> int:
        return int(self.areas.sum())

    # ---------------------------------------------------------------- building
    @classmethod
    def from_arrays(
        cls,
        memory: int,
        prompt: Iterable[int],
        response: Iterable[int],
        arrival: Iterable[int] | None = None,
        *,
        predicted_response: Iterable[int] | None = None,
        name: str = "",
        meta: Mapping[str, Any] | None = None,
        max_batch: int | None = None,
    ) -> Instance:
        s = [int(x) if _is_int(x) else x for x in prompt]
        o = [int(x) if _is_int(x) else x for x in response]
        if len(s) != len(o):
            raise InputError(
                f"prompt has {len(s)} entries but response has {len(o)}", field="response"
            )
        a = [0] * len(s) if arrival is None else [int(x) if _is_int(x) else x for x in arrival]
        if len(a) != len(s):
            raise InputError(f"has {len(a)} entries, expected {len(s)}", field="arrival")
        pr = [None] * len(s) if predicted_response is None else [int(x) for x in predicted_response]
        jobs = tuple(
            Job(prompt=s[i], response=o[i], arrival=a[i], predicted_response=pr[i])
            for i in range(len(s))
        )
        return cls(memory=memory, jobs=jobs, name=name, meta=dict(meta or {}), max_batch=max_batch)

    def replace(self, **changes: Any) -> Instance:
        """A new instance with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def with_response(self, i: int, response: int) -> Instance:
        """A new instance in which job ``i`` has response length ``response``."""
        jobs = list(self.jobs)
        jobs[i] = dataclasses.replace(jobs[i], response=response)
        return self.replace(jobs=tuple(jobs))

    def subset(self, indices: Iterable[int]) -> Instance:
        """The instance restricted to the given jobs (in the given order)."""
        return self.replace(jobs=tuple(self.jobs[i] for i in indices))

    # --------------------------------------------------------------- JSON form
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"format": FORMAT, "version": VERSION}
        if self.name:
            d["name"] = self.name
        d["memory"] = self.memory
        if self.max_batch is not None:
            d["max_batch"] = self.max_batch
        d["jobs"] = [j.to_dict() for j in self.jobs]
        if self.meta:
            d["meta"] = dict(self.meta)
        return d

    @classmethod
    def from_dict(cls, data: Any, *, source: str | None = None) -> Instance:
        """Build from the parsed JSON of SPEC §3; errors name ``source`` and the field."""
        try:
            return cls._from_dict(data)
        except InputError as err:
            raise err.with_source(source) if source else err from None

    @classmethod
    def _from_dict(cls, data: Any) -> Instance:
        check_header(data, FORMAT, VERSION, _TOP_KEYS)
        for key in ("memory", "jobs"):
            if key not in data:
                raise InputError("missing required field", field=key)
        raw_jobs = data["jobs"]
        if not isinstance(raw_jobs, list):
            raise InputError(f"must be a list, got {_describe(raw_jobs)}", field="jobs")
        jobs = []
        for i, rj in enumerate(raw_jobs):
            # the usual job passes the first test; any other gets the checks one by one
            if not (
                type(rj) is dict
                and rj.keys() <= _JOB_KEYS
                and "prompt" in rj
                and "response" in rj
                and not ("arrival" in rj and "arrival_time" in rj)
            ):
                _check_job_keys(rj, i)
            jobs.append(
                Job(
                    rj["prompt"],
                    rj["response"],
                    rj.get("arrival", 0),
                    rj.get("id"),
                    rj.get("predicted_response"),
                    rj.get("arrival_time"),
                    _interval_of(rj.get("predicted_interval"), i),
                )
            )
        if "max_batch" in data and data["max_batch"] is None:  # the schema's integer, not null
            raise InputError(
                "must be an integer >= 1, got null (leave the key out for no cap)",
                field="max_batch",
            )
        name = data.get("name", "")
        meta = data.get("meta", {})
        if meta is None or not isinstance(meta, dict):
            raise InputError(f"must be an object, got {_describe(meta)}", field="meta")
        return cls(
            memory=data["memory"],
            jobs=tuple(jobs),
            name=name,
            meta=meta,
            max_batch=data.get("max_batch"),
        )


def _interval_of(raw: Any, i: int) -> tuple[int, int] | None:
    """A file's ``predicted_interval`` as a tuple (checked: the error names the field)."""
    if raw is None:
        return None
    _check_interval(raw, i)
    return (int(raw[0]), int(raw[1]))


def _check_job_keys(rj: Any, i: int) -> None:
    """The structure of ``jobs[i]`` in a file: an object, known keys, the required ones."""
    if not isinstance(rj, dict):
        raise InputError(f"must be an object, got {_describe(rj)}", field=f"jobs[{i}]")
    unknown = sorted(set(rj) - _JOB_KEYS)
    if unknown:
        raise InputError(
            f"unknown key (allowed: {', '.join(sorted(_JOB_KEYS))})"
            + did_you_mean(unknown[0], _JOB_KEYS),
            field=f"jobs[{i}].{unknown[0]}",
        )
    for key in ("prompt", "response"):
        if key not in rj:
            raise InputError("missing required field", field=f"jobs[{i}].{key}")
    if "arrival" in rj and "arrival_time" in rj:
        raise InputError(
            "give arrival (rounds) or arrival_time (seconds), not both",
            field=f"jobs[{i}].arrival_time",
        )


def load_instance(path: str | os.PathLike) -> Instance:
    """Read an instance JSON file (SPEC §3); :class:`InputError` names the file and field."""
    with gc_paused():
        data = read_json(path)
        if isinstance(data, dict) and data.get("name", "") == "":  # named after the file
            data = {**data, "name": os.path.splitext(os.path.basename(str(path)))[0]}
        return Instance.from_dict(data, source=str(path))


def save_instance(inst: Instance, path: str | os.PathLike) -> None:
    """Write an instance JSON file atomically."""
    write_json_atomic(path, inst.to_dict())
