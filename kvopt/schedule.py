"""Schedules (SPEC §3) and the independent schedule checker (SPEC §1).

A :class:`Schedule` is a list of :class:`Attempt` — ``(job, start, rounds,
completed)`` — plus the memory budget it was made for; ``attempts`` is the
whole truth and everything else (completion times, objectives) is derived.

:func:`check_schedule` re-verifies a schedule against its instance using
nothing but SPEC §1:

* ``job-index``     the attempt names a job of the instance;
* ``start``         ``start ≥ 0``;  ``rounds``  ``rounds ≥ 1``;
* ``arrival``       ``start ≥ a_i``;
* ``rounds-exceed-response``  no attempt runs more than ``o_i`` rounds;
* ``completed-flag`` ``completed`` is true exactly when ``rounds = o_i``;
* ``overlap``       a job never runs two attempts at once;
* ``no-completion`` / ``multiple-completions``  exactly one completing attempt;
* ``attempt-after-completion``  the completing attempt is the job's last;
* ``memory``        in every round the running attempts hold ``≤ M``
  (attempt round ``u`` holds ``s_i + u + 1``);
* ``memory-budget`` the schedule's ``memory`` equals the instance's ``M``;
* ``stated-completion-times`` / ``stated-objective``  derived fields written in
  the file, if any, agree with the attempts.

The memory check never loops over rounds: between two consecutive attempt
boundaries the running set is fixed and memory is ``C + K·t`` (an increasing
line), so difference arrays over the sorted boundaries give the exact maximum
of every segment.  Checking 100,000 attempts over 10^7 rounds takes well
under a second.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import InputError
from .fileio import EncodedItems, gc_paused, read_json, write_json_atomic
from .instance import Instance, _describe, _is_int, check_header
from .memory import memory_profile, memory_segments  # noqa: F401  (memory_profile: re-exported)

FORMAT = "kvopt.schedule"
VERSION = 1

_TOP_KEYS = {
    "format",
    "version",
    "instance",
    "producer",
    "memory",
    "attempts",
    "completion_times",
    "objective",
    "meta",
}
_ATTEMPT_KEYS = {"job", "start", "rounds", "completed"}

#: How many memory violations are listed one by one before a summary.
MAX_MEMORY_ERRORS = 50


@dataclass(frozen=True)
class Attempt:
    """Job ``job`` runs rounds ``start … start+rounds−1``; ``completed`` iff ``rounds = o_job``."""

    job: int
    start: int
    rounds: int
    completed: bool

    @property
    def end(self) -> int:
        """First round after the attempt (its completion time when ``completed``)."""
        return self.start + self.rounds

    def to_dict(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "start": self.start,
            "rounds": self.rounds,
            "completed": self.completed,
        }


#: ``(job, start, rounds)`` of an attempt, for :meth:`Schedule.columns`.
_FIELDS = operator.attrgetter("job", "start", "rounds")


def objective_of(completion_times: Sequence[int]) -> dict[str, int]:
    """``total_completion = Σ C_i`` and ``makespan = max C_i`` (0 for no jobs)."""
    ct = [int(c) for c in completion_times]
    return {"total_completion": int(sum(ct)), "makespan": int(max(ct, default=0))}


@dataclass(frozen=True)
class Schedule:
    """An immutable schedule: attempts plus the memory budget (SPEC §3).

    ``stated_completion_times`` / ``stated_objective`` hold what a file claimed
    (``None`` when built in memory); the checker compares them with the truth.
    """

    attempts: tuple[Attempt, ...]
    memory: int
    instance: str = ""
    producer: str = ""
    stated_completion_times: tuple[int, ...] | None = field(default=None, compare=False)
    stated_objective: Mapping[str, int] | None = field(default=None, compare=False)
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "attempts", tuple(self.attempts))

    # ------------------------------------------------------------ building
    @classmethod
    def from_starts(
        cls, instance: Instance, starts: Sequence[int], *, producer: str = "", meta=None
    ) -> Schedule:
        """A kill-free schedule: job ``i`` runs once, from ``starts[i]`` for ``o_i`` rounds."""
        attempts = tuple(
            Attempt(i, int(starts[i]), int(instance.responses[i]), True) for i in range(instance.n)
        )
        attempts = tuple(sorted(attempts, key=lambda a: (a.start, a.job)))
        return cls(attempts, instance.memory, instance.name, producer, meta=dict(meta or {}))

    # ------------------------------------------------------------- columns
    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(job, start, rounds, completed)`` as numpy arrays."""
        k = len(self.attempts)
        # one pass over the attempts (issue 54: four generator passes were half the check)
        rows = np.array(list(map(_FIELDS, self.attempts)), dtype=np.int64).reshape(k, 3)
        job, start, rounds = (np.ascontiguousarray(rows[:, c]) for c in range(3))
        done = np.fromiter((bool(a.completed) for a in self.attempts), dtype=bool, count=k)
        return job, start, rounds, done

    def completion_times(self, n: int) -> list[int | None]:
        """``C_i`` from the (last) completing attempt of each job; ``None`` if none."""
        ct: list[int | None] = [None] * n
        for a in self.attempts:
            if a.completed and 0 <= a.job < n:
                ct[a.job] = a.end
        return ct

    def objective(self, n: int) -> dict[str, int]:
        ct = self.completion_times(n)
        if any(c is None for c in ct):
            raise ValueError("schedule does not complete every job")
        return objective_of(ct)  # type: ignore[arg-type]

    @property
    def kills(self) -> int:
        return sum(1 for a in self.attempts if not a.completed)

    @property
    def wasted_rounds(self) -> int:
        """Job-rounds spent in killed attempts."""
        return sum(a.rounds for a in self.attempts if not a.completed)

    # ---------------------------------------------------------- JSON form
    def to_dict(self, n: int | None = None, *, attempts: bool = True) -> dict[str, Any]:
        """The file form of SPEC §3; ``n`` (the instance size) fills the derived fields.

        ``attempts=False`` leaves the ``attempts`` list empty (its key in its place; for
        :func:`save_schedule`, which writes the attempts itself)."""
        d: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "instance": self.instance,
            "producer": self.producer,
            "memory": self.memory,
            "attempts": [a.to_dict() for a in self.attempts] if attempts else [],
        }
        if n is None:
            n = 1 + max((a.job for a in self.attempts), default=-1)
        ct = self.completion_times(n)
        if all(c is not None for c in ct):
            d["completion_times"] = ct
            d["objective"] = objective_of(ct)  # type: ignore[arg-type]
        if self.meta:
            d["meta"] = dict(self.meta)
        return d

    @classmethod
    def from_dict(cls, data: Any, *, source: str | None = None) -> Schedule:
        try:
            return cls._from_dict(data)
        except InputError as err:
            raise err.with_source(source) if source else err from None

    @classmethod
    def _from_dict(cls, data: Any) -> Schedule:
        check_header(data, FORMAT, VERSION, _TOP_KEYS)
        for key in ("memory", "attempts"):
            if key not in data:
                raise InputError("missing required field", field=key)
        memory = data["memory"]
        if not _is_int(memory) or memory < 1:
            raise InputError(f"must be an integer >= 1, got {_describe(memory)}", field="memory")
        raw = data["attempts"]
        if not isinstance(raw, list):
            raise InputError(f"must be a list, got {_describe(raw)}", field="attempts")
        attempts = []
        for k, ra in enumerate(raw):
            # the usual attempt passes this test at once; any other gets the checks one by
            # one (issue 54: 10⁶ attempts)
            if (
                type(ra) is dict
                and ra.keys() == _ATTEMPT_KEYS
                and type(ra["job"]) is int
                and type(ra["start"]) is int
                and type(ra["rounds"]) is int
                and type(ra["completed"]) is bool
            ):
                attempts.append(Attempt(ra["job"], ra["start"], ra["rounds"], ra["completed"]))
                continue
            where = f"attempts[{k}]"
            if not isinstance(ra, dict):
                raise InputError(f"must be an object, got {_describe(ra)}", field=where)
            unknown = sorted(set(ra) - _ATTEMPT_KEYS)
            if unknown:
                raise InputError("unknown key", field=f"{where}.{unknown[0]}")
            for key in ("job", "start", "rounds"):
                if key not in ra:
                    raise InputError("missing required field", field=f"{where}.{key}")
                if not _is_int(ra[key]):
                    raise InputError(
                        f"must be an integer, got {_describe(ra[key])}", field=f"{where}.{key}"
                    )
            if "completed" not in ra:
                raise InputError("missing required field", field=f"{where}.completed")
            if not isinstance(ra["completed"], bool):
                raise InputError(
                    f"must be true or false, got {_describe(ra['completed'])}",
                    field=f"{where}.completed",
                )
            attempts.append(
                Attempt(int(ra["job"]), int(ra["start"]), int(ra["rounds"]), ra["completed"])
            )
        stated_ct = None
        if "completion_times" in data and data["completion_times"] is not None:
            ct = data["completion_times"]
            if not isinstance(ct, list) or not all(_is_int(c) for c in ct):
                raise InputError("must be a list of integers", field="completion_times")
            stated_ct = tuple(int(c) for c in ct)
        stated_obj = None
        if "objective" in data and data["objective"] is not None:
            obj = data["objective"]
            if not isinstance(obj, dict):
                raise InputError(f"must be an object, got {_describe(obj)}", field="objective")
            for key, val in obj.items():
                if key not in ("total_completion", "makespan"):
                    raise InputError(
                        "unknown key (allowed: makespan, total_completion)",
                        field=f"objective.{key}",
                    )
                if not _is_int(val):
                    raise InputError(
                        f"must be an integer, got {_describe(val)}", field=f"objective.{key}"
                    )
            stated_obj = {k: int(v) for k, v in obj.items()}
        for key in ("instance", "producer"):
            if key in data and not isinstance(data[key], str):
                raise InputError(f"must be a string, got {_describe(data[key])}", field=key)
        meta = data.get("meta", {})
        if not isinstance(meta, dict):
            raise InputError(f"must be an object, got {_describe(meta)}", field="meta")
        return cls(
            tuple(attempts),
            int(memory),
            data.get("instance", ""),
            data.get("producer", ""),
            stated_completion_times=stated_ct,
            stated_objective=stated_obj,
            meta=meta,
        )


def load_schedule(path: str | os.PathLike) -> Schedule:
    """Read a schedule JSON file; structural problems are :class:`InputError` (exit 2)."""
    with gc_paused():
        return Schedule.from_dict(read_json(path), source=str(path))


def save_schedule(schedule: Schedule, path: str | os.PathLike, n: int | None = None) -> None:
    """Write ``schedule.to_dict(n)`` as a JSON file (atomically), byte for byte as
    :func:`~kvopt.fileio.write_json_atomic` writes that dict.

    The attempts are formatted straight to text when every field is a plain ``int``
    (``completed`` a ``bool``): 10⁶ attempts in about a second instead of a dict and an
    encoder call each (issue 54; ``tests/test_schedule_io.py`` compares the bytes).
    """
    write_json_atomic(path, _file_dict(schedule, n))


def _file_dict(schedule: Schedule, n: int | None) -> dict[str, Any]:
    """:meth:`Schedule.to_dict` with the attempts as :class:`~kvopt.fileio.EncodedItems`
    when they are plain (else the dict itself)."""
    att = schedule.attempts
    plain = all(
        type(a.job) is int
        and type(a.start) is int
        and type(a.rounds) is int
        and type(a.completed) is bool
        for a in att
    )
    if not plain:
        return schedule.to_dict(n)
    fmt = '  {{"job": {}, "start": {}, "rounds": {}, "completed": {}}}'.format
    text = ",\n".join([
        fmt(a.job, a.start, a.rounds, "true" if a.completed else "false") for a in att
    ])  # fmt: skip
    d = schedule.to_dict(n, attempts=False)
    return {k: (EncodedItems(text) if k == "attempts" else v) for k, v in d.items()}


# ---------------------------------------------------------------------------
# The checker


@dataclass(frozen=True)
class Violation:
    """One broken rule: which ``rule``, which ``job`` and ``round`` (when they apply), how much."""

    rule: str
    message: str
    job: int | None = None
    round: int | None = None
    amount: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "job": self.job,
            "round": self.round,
            "amount": self.amount,
            "message": self.message,
        }


@dataclass(frozen=True)
class CheckResult:
    """What the checker found.  ``objective`` is ``None`` unless every job completes."""

    valid: bool
    errors: tuple[Violation, ...]
    completion_times: tuple[int | None, ...]
    objective: dict[str, int] | None
    peak_memory: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "errors": [e.to_dict() for e in self.errors],
            "objective": self.objective,
            "completion_times": list(self.completion_times),
            "peak_memory": self.peak_memory,
        }

    def raise_if_invalid(self, what: str = "schedule") -> None:
        if not self.valid:
            first = "; ".join(e.message for e in self.errors[:3])
            more = f" (+{len(self.errors) - 3} more)" if len(self.errors) > 3 else ""
            raise ScheduleInvalid(f"{what} fails the checker: {first}{more}", self)


class ScheduleInvalid(AssertionError):
    """Raised by :meth:`CheckResult.raise_if_invalid` when kvopt produced a bad schedule."""

    def __init__(self, message: str, result: CheckResult):
        super().__init__(message)
        self.result = result


def check_schedule(instance: Instance, schedule: Schedule) -> CheckResult:
    """Check ``schedule`` against ``instance`` by every rule of SPEC §1 (see module doc)."""
    errors: list[Violation] = []
    n, M = instance.n, instance.memory
    if schedule.memory != M:
        errors.append(
            Violation(
                "memory-budget",
                f"schedule memory {schedule.memory} differs from instance memory {M}",
                amount=schedule.memory,
            )
        )
    job, start, rounds, done = schedule.columns()

    # --- per-attempt rules (vectorised) -----------------------------------
    bad_job = (job < 0) | (job >= n)
    for k in np.flatnonzero(bad_job):
        errors.append(
            Violation(
                "job-index",
                f"attempt {k}: job {job[k]} is not a job of the instance (0..{n - 1})",
                job=int(job[k]),
                round=int(start[k]),
            )
        )
    ok = ~bad_job
    jc = np.where(ok, job, 0)
    o = instance.responses[jc] if n else np.zeros(len(job), np.int64)
    a = instance.arrivals[jc] if n else np.zeros(len(job), np.int64)
    checks = [
        (
            "start",
            ok & (start < 0),
            lambda k: f"job {job[k]}: attempt starts at negative round {start[k]}",
        ),
        (
            "rounds",
            ok & (rounds < 1),
            lambda k: (
                f"job {job[k]}: attempt at round {start[k]} has {rounds[k]} rounds (must be >= 1)"
            ),
        ),
        (
            "arrival",
            ok & (start < a) & (start >= 0),
            lambda k: f"job {job[k]}: attempt starts at round {start[k]} before arrival {a[k]}",
        ),
        (
            "rounds-exceed-response",
            ok & (rounds > o),
            lambda k: (
                f"job {job[k]}: attempt at round {start[k]} runs {rounds[k]} rounds, response is {o[k]}"
            ),
        ),
        (
            "completed-flag",
            ok & (rounds >= 1) & (rounds <= o) & (done != (rounds == o)),
            lambda k: (
                f"job {job[k]}: attempt at round {start[k]} has rounds={rounds[k]}, response={o[k]} "
                f"but completed={'true' if done[k] else 'false'}"
            ),
        ),
    ]
    amounts = {
        "start": start,
        "rounds": rounds,
        "arrival": a - start,
        "rounds-exceed-response": rounds - o,
        "completed-flag": rounds,
    }
    for rule, mask, msg in checks:
        for k in np.flatnonzero(mask):
            errors.append(
                Violation(
                    rule, msg(k), job=int(job[k]), round=int(start[k]), amount=int(amounts[rule][k])
                )
            )

    # --- per-job rules: no overlap, exactly one completion, and it is last --
    okr = ok & (rounds >= 1)
    idx = np.flatnonzero(ok)
    order = idx[np.lexsort((start[idx], job[idx]))]
    oj, os_, oe = job[order], start[order], start[order] + rounds[order]
    same = oj[1:] == oj[:-1]
    for p in np.flatnonzero(same & (os_[1:] < oe[:-1])):
        j = int(oj[p])
        errors.append(
            Violation(
                "overlap",
                f"job {j}: attempt starting at round {os_[p + 1]} overlaps the attempt "
                f"running rounds {os_[p]}..{oe[p] - 1}",
                job=j,
                round=int(os_[p + 1]),
                amount=int(oe[p] - os_[p + 1]),
            )
        )
    # a completing attempt followed by another attempt of the same job
    odone = done[order] & (rounds[order] == o[order])
    for p in np.flatnonzero(same & odone[:-1]):
        j = int(oj[p])
        errors.append(
            Violation(
                "attempt-after-completion",
                f"job {j}: attempt at round {os_[p + 1]} comes after the job completed at round {oe[p]}",
                job=j,
                round=int(os_[p + 1]),
            )
        )
    n_done = np.bincount(job[ok & done], minlength=n) if n else np.zeros(0, np.int64)
    for j in np.flatnonzero(n_done == 0):
        errors.append(Violation("no-completion", f"job {j}: no completing attempt", job=int(j)))
    for j in np.flatnonzero(n_done > 1):
        errors.append(
            Violation(
                "multiple-completions",
                f"job {j}: {n_done[j]} attempts marked completed",
                job=int(j),
                amount=int(n_done[j]),
            )
        )

    # --- memory ≤ M in every round ----------------------------------------
    mrows = okr & (start >= 0)
    peak = 0
    if mrows.any():
        bounds, C, K = memory_segments(instance.prompts, job[mrows], start[mrows], rounds[mrows])
        seg_last = bounds[1:] - 1  # last round of each segment
        Cs, Ks = C[:-1], K[:-1]
        top = Cs + Ks * seg_last
        peak = int(top.max()) if len(top) else 0
        over = np.flatnonzero(top > M)
        mem_errors: list[Violation] = []
        run_first = run_amount = None
        prev_end = None
        for k in over:
            # first violating round in the segment: C + K t > M  <=>  t > (M - C) / K
            t0 = max(int(bounds[k]), (M - int(Cs[k])) // int(Ks[k]) + 1)
            amt = int(top[k])
            if run_first is not None and prev_end is not None and t0 == prev_end + 1:
                run_amount = max(run_amount, amt)
            else:
                if run_first is not None:
                    mem_errors.append((run_first, run_amount))
                run_first, run_amount = t0, amt
            prev_end = int(seg_last[k])
        if run_first is not None:
            mem_errors.append((run_first, run_amount))
        js, ss, rs = job[mrows], start[mrows], rounds[mrows]
        for t0, amt in mem_errors[:MAX_MEMORY_ERRORS]:
            # the attempts running in round t0; the job named is the one started last (ties:
            # the larger index), as the engine names it: the start that broke the budget
            live = np.flatnonzero((ss <= t0) & (t0 < ss + rs))
            held = int(sum(int(instance.prompts[js[k]]) + t0 - int(ss[k]) + 1 for k in live))
            last = max(live, key=lambda k: (int(ss[k]), int(js[k])))
            names = sorted(int(js[k]) for k in live)
            shown = ", ".join(map(str, names[:8])) + (", …" if len(names) > 8 else "")
            errors.append(
                Violation(
                    "memory",
                    f"job {int(js[last])}, round {t0}: the running attempts of jobs {shown} hold "
                    f"{held} > memory {M} (job {int(js[last])}, started at round {int(ss[last])}, "
                    f"is the last one started; up to {amt} in this stretch)",
                    job=int(js[last]),
                    round=t0,
                    amount=amt - M,
                )
            )
        if len(mem_errors) > MAX_MEMORY_ERRORS:
            errors.append(
                Violation(
                    "memory",
                    f"... and {len(mem_errors) - MAX_MEMORY_ERRORS} more stretches over memory {M}",
                )
            )

    # --- derived fields -----------------------------------------------------
    # C_i of the last completing attempt of job i in the file's order (as a loop would)
    fin = np.flatnonzero(ok & done & (rounds == o))
    ct: list[int | None] = [None] * n
    if n and n_done.max() > 1:  # a job completes twice (an error above): the loop's order
        for k in fin:
            ct[int(job[k])] = int(start[k] + rounds[k])
    elif len(fin):
        cta = np.zeros(n, dtype=np.int64)
        cta[job[fin]] = start[fin] + rounds[fin]  # each job at most once
        ct = cta.tolist()
        if len(fin) < n:
            has = np.zeros(n, dtype=bool)
            has[job[fin]] = True
            ct = [c if h else None for c, h in zip(ct, has.tolist(), strict=True)]
    objective = objective_of(ct) if all(c is not None for c in ct) else None  # type: ignore[arg-type]
    if (
        schedule.stated_completion_times is not None
        and list(schedule.stated_completion_times) != ct
    ):
        diff = [
            i
            for i in range(max(n, len(schedule.stated_completion_times)))
            if i >= n
            or i >= len(schedule.stated_completion_times)
            or schedule.stated_completion_times[i] != ct[i]
        ]
        j = diff[0]
        errors.append(
            Violation(
                "stated-completion-times",
                f"completion_times in the file disagree with the attempts (first at job {j})",
                job=j if j < n else None,
            )
        )
    if schedule.stated_objective is not None and objective is not None:
        for key, val in schedule.stated_objective.items():
            if objective.get(key) != val:
                errors.append(
                    Violation(
                        "stated-objective",
                        f"objective.{key} in the file is {val}, the attempts give {objective[key]}",
                        amount=val - objective[key],
                    )
                )
    return CheckResult(not errors, tuple(errors), tuple(ct), objective, peak)


def checked(instance: Instance, schedule: Schedule, what: str | None = None) -> Schedule:
    """Return ``schedule`` after it passed :func:`check_schedule`; raise otherwise.

    Every schedule kvopt produces goes through here before it is reported.
    """
    check_schedule(instance, schedule).raise_if_invalid(what or (schedule.producer or "schedule"))
    return schedule
