"""Schedules (SPEC §3): building, comparing, reading and writing them.

A :class:`Schedule` is a list of :class:`Attempt` — ``(job, start, rounds,
completed)`` — plus the memory budget it was made for; ``attempts`` is the
whole truth and everything else (completion times, objectives) is derived.

:func:`check_schedule` (:mod:`kvopt.checker`, re-exported here) re-verifies a schedule
against its instance using nothing but SPEC §1.

Attempts may be kept as objects or as numpy columns (:meth:`Schedule.from_columns`; the
columns and the file text: :mod:`kvopt.attempts`).
"""

from __future__ import annotations

import itertools
import json
import mmap
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .attempts import (
    Attempt,
    Columns,
    attempts_from_list,
    attempts_of,
    attempts_text,
    check_columns,
    columns_of,
    parse_attempts_text,
)
from .checker import (  # noqa: F401  (re-exported: kvopt.schedule is their usual home)
    MAX_MEMORY_ERRORS,
    CheckResult,
    ScheduleInvalid,
    Violation,
    check_schedule,
    checked,
    last_ends,
    objective_of,
)
from .errors import InputError
from .fileio import (
    EncodedItems,
    _reject_constant,
    dumps_json,
    gc_paused,
    read_json,
    write_chunks_atomic,
    write_json_atomic,
)
from .instance import Instance, _describe, _is_int, check_header
from .memory import memory_profile  # noqa: F401  (re-exported)

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


@dataclass(frozen=True)
class Schedule:
    """An immutable schedule: attempts plus the memory budget (SPEC §3).

    ``stated_completion_times`` / ``stated_objective`` hold what a file claimed
    (``None`` when built in memory); the checker compares them with the truth.

    A schedule made by :meth:`from_columns` keeps four read-only numpy columns and
    builds ``attempts`` only when it is first read (then keeps it); the checker, the
    file writer, ``completion_times``, ``kills`` and ``to_dict`` read the columns
    (issue 54: 35 M attempts).  Either form compares equal to the other when the
    attempts, ``memory``, ``instance`` and ``producer`` are the same.
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

    def __getattr__(self, name: str) -> Any:
        # only reached for a missing attribute: the attempts of a columnar schedule
        cols = self._columns()
        if name != "attempts" or cols is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        attempts = attempts_of(cols)
        object.__setattr__(self, "attempts", attempts)
        return attempts

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Schedule)
        if (self.memory, self.instance, self.producer) != (
            other.memory,
            other.instance,
            other.producer,
        ):
            return False
        mine, theirs = self._columns(), other._columns()
        if mine is not None and theirs is not None:
            return all(np.array_equal(a, b) for a, b in zip(mine, theirs, strict=True))
        return self.attempts == other.attempts

    def __hash__(self) -> int:
        k = self._count()
        ends = (self._attempt(0), self._attempt(k - 1)) if k else ()
        return hash((k, *ends, self.memory, self.instance, self.producer))

    def __getstate__(self) -> dict[str, Any]:
        # a pickle (worker processes) carries the columns, not what is rebuilt from them
        state = dict(self.__dict__)
        state.pop("_derived", None)
        if "_cols" in state:
            state.pop("attempts", None)
        return state

    def _columns(self) -> Columns | None:
        """The columns of a schedule made by :meth:`from_columns` (else ``None``)."""
        return self.__dict__.get("_cols")

    def _count(self) -> int:
        cols = self._columns()
        return len(cols[0]) if cols is not None else len(self.attempts)

    def _attempt(self, k: int) -> Attempt:
        cols = self._columns()
        if cols is None:
            return self.attempts[k]
        return Attempt(int(cols[0][k]), int(cols[1][k]), int(cols[2][k]), bool(cols[3][k]))

    # ------------------------------------------------------------ building
    @classmethod
    def from_columns(
        cls,
        job: Any,
        start: Any,
        rounds: Any,
        completed: Any,
        *,
        memory: int,
        instance: str = "",
        producer: str = "",
        meta: Mapping[str, Any] | None = None,
    ) -> Schedule:
        """A schedule of the attempts ``(job[k], start[k], rounds[k], completed[k])``.

        ``job``, ``start``, ``rounds``: 1-D integer arrays (stored as int64);
        ``completed``: a 1-D boolean array; all of one length.  An int64 / bool array is
        not copied but made read-only (the schedule owns it).  Nothing else is checked
        here: :func:`check_schedule` says whether the attempts obey SPEC §1.  Bad
        arguments raise :class:`~kvopt.errors.InputError` naming the argument and the rule.
        """
        cols = check_columns(job, start, rounds, completed)
        if not _is_int(memory):
            raise InputError(f"must be an integer, got {_describe(memory)}", field="memory")
        return cls._columnar(cols, int(memory), instance, producer, None, None, dict(meta or {}))

    @classmethod
    def _columnar(cls, cols: Columns, memory, instance, producer, ct, obj, meta) -> Schedule:
        self = object.__new__(cls)
        for key, val in (("memory", memory), ("instance", instance), ("producer", producer),
                         ("stated_completion_times", ct), ("stated_objective", obj),
                         ("meta", meta), ("_cols", cols)):  # fmt: skip
            object.__setattr__(self, key, val)
        return self

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
    def columns(self) -> Columns:
        """``(job, start, rounds, completed)`` as read-only int64 / bool numpy arrays
        (a columnar schedule's own; else built from the attempts once)."""
        cols = self._columns() or self.__dict__.get("_derived")
        if cols is None:
            cols = columns_of(self.attempts)
            for a in cols:
                a.flags.writeable = False
            object.__setattr__(self, "_derived", cols)
        return cols

    def completion_times(self, n: int) -> list[int | None]:
        """``C_i`` from the (last) completing attempt of each job; ``None`` if none."""
        cols = self._columns()
        if cols is not None:
            job, start, rounds, done = cols
            return last_ends(job, start + rounds, done & (job >= 0) & (job < n), n)
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
        cols = self._columns()
        if cols is not None:
            return int(len(cols[3]) - np.count_nonzero(cols[3]))
        return sum(1 for a in self.attempts if not a.completed)

    @property
    def wasted_rounds(self) -> int:
        """Job-rounds spent in killed attempts."""
        cols = self._columns()
        if cols is not None:
            return int(cols[2][~cols[3]].sum())
        return sum(a.rounds for a in self.attempts if not a.completed)

    # ---------------------------------------------------------- JSON form
    def to_dict(self, n: int | None = None, *, attempts: bool = True) -> dict[str, Any]:
        """The file form of SPEC §3; ``n`` (the instance size) fills the derived fields.

        ``attempts=False`` leaves the ``attempts`` list empty (its key in its place; for
        :func:`save_schedule`, which writes the attempts itself)."""
        cols = self._columns()
        if not attempts:
            items: list[dict[str, Any]] = []
        elif cols is not None:  # the same dicts, without an Attempt each
            items = [
                {"job": j, "start": s, "rounds": r, "completed": c}
                for j, s, r, c in zip(*(c.tolist() for c in cols), strict=True)
            ]
        else:
            items = [a.to_dict() for a in self.attempts]
        d: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "instance": self.instance,
            "producer": self.producer,
            "memory": self.memory,
            "attempts": items,
        }
        if n is None:
            if cols is not None:
                n = 1 + int(cols[0].max()) if len(cols[0]) else 0
            else:
                n = 1 + max((a.job for a in self.attempts), default=-1)
        ct = self.completion_times(n)
        if all(c is not None for c in ct):
            d["completion_times"] = ct
            d["objective"] = objective_of(ct)  # type: ignore[arg-type]
        if self.meta:
            d["meta"] = dict(self.meta)
        return d

    @classmethod
    def from_dict(cls, data: Any, *, source: str | None = None, cols=None) -> Schedule:
        try:
            return cls._from_dict(data, cols)
        except InputError as err:
            raise err.with_source(source) if source else err from None

    @classmethod
    def _from_dict(cls, data: Any, cols: Columns | None = None) -> Schedule:
        """``cols``: the attempts, already read from the file's text (``data["attempts"]``
        is then a placeholder; :func:`read_columnar`)."""
        check_header(data, FORMAT, VERSION, _TOP_KEYS)
        for key in ("memory", "attempts"):
            if key not in data:
                raise InputError("missing required field", field=key)
        memory = data["memory"]
        if not _is_int(memory) or memory < 1:
            raise InputError(f"must be an integer >= 1, got {_describe(memory)}", field="memory")
        raw = data["attempts"]
        if cols is None and not isinstance(raw, list):
            raise InputError(f"must be a list, got {_describe(raw)}", field="attempts")
        attempts = attempts_from_list(raw) if cols is None else ()
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
        if cols is not None:
            names = (data.get("instance", ""), data.get("producer", ""))
            return cls._columnar(cols, int(memory), *names, stated_ct, stated_obj, meta)
        return cls(
            attempts,
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
        sched = read_columnar(path)
        return sched if sched is not None else Schedule.from_dict(read_json(path), source=str(path))


#: Where a file that :func:`save_schedule` wrote has its attempts (one such line).
_ITEMS = b'\n "attempts": [\n'
_PLACEHOLDER = b'"kvopt.schedule: attempts read as columns"'
#: :func:`read_columnar` reads the attempts' text in blocks of about this many bytes (1 MB:
#: the block's arrays stay in the processor's cache; 16 MB took 1.6 times as long).
_BLOCK = 1 << 20


def read_columnar(path: str | os.PathLike) -> Schedule | None:
    """The schedule of ``path`` read with its attempts as columns, when the file is a
    schedule whose attempts are exactly as :func:`save_schedule` writes them; else
    ``None`` (read it with :func:`~kvopt.fileio.read_json` and :meth:`Schedule.from_dict`,
    which also word any error).

    The attempts' text is parsed with numpy and accepted only if writing the parsed
    columns gives the same bytes (so every rule of an attempt item holds); the rest of
    the file, with a placeholder for the attempts, goes through ``from_dict``'s checks
    (issue 54: 35 M attempts are gigabytes of JSON)."""
    try:
        fh = open(path, "rb")  # closed by the with below
    except OSError:  # no such file, a folder: the general path says so
        return None
    with fh:
        try:  # mapped, not read: the blocks are sliced from the page cache (issue 54)
            raw = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # an empty file, …
            return None
        with raw:
            return _read_mapped(raw, path)


def _read_mapped(raw: mmap.mmap, path: str | os.PathLike) -> Schedule | None:
    at = raw.find(_ITEMS)
    end = raw.find(b"\n ]", at) if at >= 0 else -1
    if end < 0 or raw.find(_ITEMS, at + 1) >= 0:
        return None
    head, tail = raw[: at + len(_ITEMS) - 2], raw[end + 3 :]
    if _PLACEHOLDER in head or _PLACEHOLDER in tail:
        return None
    try:
        text = (head + _PLACEHOLDER + tail).decode("utf-8")
        data = json.loads(text, parse_constant=_reject_constant)
    except ValueError:  # JSONDecodeError, UnicodeDecodeError, a NaN: the general path says it
        return None
    if not (isinstance(data, dict) and data.get("format") == FORMAT and
            data.get("attempts") == _PLACEHOLDER.decode()[1:-1]):  # fmt: skip
        return None
    parts = []
    lo = at + len(_ITEMS)
    while lo < end:  # blocks of whole lines: each but the last ends with ",\n"
        cut = raw.find(b",\n", lo + _BLOCK, end) if end - lo > _BLOCK else -1
        hi = cut + 2 if cut >= 0 else end
        cols = parse_attempts_text(raw[lo:hi], last=hi == end)
        if cols is None:
            return None
        parts.append(cols)
        lo = hi
    if not parts:
        return None
    joined = tuple(np.concatenate([p[c] for p in parts]) for c in range(4))
    return Schedule.from_dict(data, source=str(path), cols=check_columns(*joined))


def save_schedule(schedule: Schedule, path: str | os.PathLike, n: int | None = None) -> None:
    """Write ``schedule.to_dict(n)`` as a JSON file (atomically), byte for byte as
    :func:`~kvopt.fileio.write_json_atomic` writes that dict.

    The attempts are formatted straight to text: a columnar schedule's with numpy, a block
    of rows at a time (:func:`~kvopt.attempts.attempts_text`: 35 M attempts in seconds),
    others when every field is a plain ``int`` (``completed`` a ``bool``) with one format
    string each instead of a dict and an encoder call each (issue 54;
    ``tests/test_schedule_io.py`` and ``tests/test_schedule_columns.py`` compare the bytes).
    """
    cols = schedule._columns()
    if cols is None or not len(cols[0]):
        write_json_atomic(path, _file_dict(schedule, n))
        return
    d = schedule.to_dict(n, attempts=False)
    d["attempts"] = EncodedItems("\0")  # JSON text has no raw NUL elsewhere
    head, tail = dumps_json(d).split("\0")
    write_chunks_atomic(
        path, itertools.chain([head.encode()], attempts_text(cols), [(tail + "\n").encode()])
    )


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
