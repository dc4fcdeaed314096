"""An attempt, and a schedule's attempts as columns and as file text (SPEC §3; issue 54).

:class:`Attempt` is one run of a job.  A schedule of tens of millions of attempts
(``route-online`` at 10⁶ requests makes about 35 per request) is kept as four numpy
columns instead (:meth:`kvopt.schedule.Schedule.from_columns`); this module holds what
works on those columns without building an :class:`Attempt` each:

* :func:`check_columns`: the arguments of ``from_columns`` (1-D, one length, integer
  ``job``/``start``/``rounds``, boolean ``completed``), each error naming the argument;
* :func:`attempts_text`: the ``attempts`` items of a schedule file, the bytes
  :func:`kvopt.fileio.dumps_json` writes for them (one ``"  {…}"`` line per attempt,
  joined by ``",\\n"``), formatted a block of rows at a time with numpy;
* :func:`parse_attempts_text`: the reverse, for a file in exactly that form (anything
  else returns ``None`` and the caller reads the file the general way).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import InputError
from .instance import _describe, _is_int


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


Columns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

#: ``(job, start, rounds)`` of an attempt, for :func:`columns_of`.
_FIELDS = operator.attrgetter("job", "start", "rounds")
_NAMES = ("job", "start", "rounds", "completed")


def columns_of(attempts: Sequence[Attempt]) -> Columns:
    """``(job, start, rounds, completed)`` of ``attempts`` as int64 / bool arrays."""
    k = len(attempts)
    # one pass over the attempts (issue 54: four generator passes were half the check)
    rows = np.array(list(map(_FIELDS, attempts)), dtype=np.int64).reshape(k, 3)
    job, start, rounds = (np.ascontiguousarray(rows[:, c]) for c in range(3))
    done = np.fromiter((bool(a.completed) for a in attempts), dtype=bool, count=k)
    return job, start, rounds, done


def attempts_of(columns: Columns) -> tuple[Attempt, ...]:
    """The :class:`Attempt` of each row (plain ``int`` and ``bool`` fields)."""
    job, start, rounds, done = columns
    return tuple(map(Attempt, job.tolist(), start.tolist(), rounds.tolist(), done.tolist()))


def check_columns(job: Any, start: Any, rounds: Any, completed: Any) -> Columns:
    """The four columns as read-only 1-D int64 / bool arrays of one length.

    An array already of that dtype is not copied: it is marked read-only in place (the
    schedule owns it from then on).  Errors are :class:`~kvopt.errors.InputError` naming
    the argument and the rule."""
    out = []
    for name, x in zip(_NAMES, (job, start, rounds, completed), strict=True):
        a = np.asarray(x)
        if a.ndim != 1:
            raise InputError(f"must be a 1-D array, got {a.ndim} dimensions", field=name)
        if a.size == 0:
            a = a.astype(bool if name == "completed" else np.int64)
        elif name == "completed":
            if a.dtype != np.bool_:
                raise InputError(f"must be a boolean array, got dtype {a.dtype}", field=name)
        elif a.dtype.kind not in "iu":
            raise InputError(f"must be an integer array, got dtype {a.dtype}", field=name)
        else:
            if a.dtype == np.uint64 and int(a.max()) >= 2**63:
                raise InputError(f"values must fit int64, got {int(a.max())}", field=name)
            a = a.astype(np.int64, copy=False)
        a = np.ascontiguousarray(a)
        a.flags.writeable = False
        out.append(a)
    lengths = [len(a) for a in out]
    if len(set(lengths)) > 1:
        shown = ", ".join(f"{n} {k}" for n, k in zip(_NAMES, lengths, strict=True))
        raise InputError(f"must have the same length as job ({shown})", field=_NAMES[
            next(i for i, k in enumerate(lengths) if k != lengths[0])])  # fmt: skip
    return tuple(out)  # type: ignore[return-value]


_ATTEMPT_KEYS = {"job", "start", "rounds", "completed"}


def attempts_from_list(raw: list[Any]) -> tuple[Attempt, ...]:
    """The attempts of a schedule file's ``attempts`` list; a broken item is an
    :class:`~kvopt.errors.InputError` naming ``attempts[k].field`` and the rule."""
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
    return tuple(attempts)


# ---------------------------------------------------------------------------
# File text

_LITERALS = (b'  {"job": ', b', "start": ', b', "rounds": ', b', "completed": ')
#: ``completed`` and the row's end; the NUL pads ``true`` to the width of ``false``
_FLAG = np.frombuffer(b"\0true},\nfalse},\n", np.uint8).reshape(2, 8)
_B9 = np.uint64(10**9)
_P10 = np.array([10**p for p in range(20)], dtype=np.uint64)
#: Rows formatted at once: 16,384 rows of about 80 bytes stay in the processor's cache.
ROWS = 16384


def _width(v: np.ndarray) -> int:
    """Characters of the longest decimal of ``v`` (sign included)."""
    return max(len(str(int(v.min()))), len(str(int(v.max())))) if len(v) else 1


def _put_digits(out: np.ndarray, v: np.ndarray) -> None:
    """The decimal of each ``v`` right-aligned in the rows of ``out`` (``uint8``, at least
    as wide as the longest), NUL bytes before it (removed from the text afterwards)."""
    w = out.shape[1]
    neg = v < 0
    mag = v.astype(np.uint64)
    if neg.any():
        mag[neg] = (~v[neg]).astype(np.uint64) + np.uint64(1)  # |v|, also for -2**63
    if int(mag.max()) < 2**32:  # the usual case: 32-bit arithmetic, pads where nothing is left
        lo = mag.astype(np.uint32)
        for p in range(w - 1, -1, -1):
            nxt = lo // np.uint32(10)
            digit = (lo - nxt * np.uint32(10)).astype(np.uint8) + np.uint8(48)
            out[:, p] = digit if p == w - 1 else digit * (lo != 0)
            lo = nxt
    else:  # blocks of 9 digits, then the pads from each number's length
        q, p = mag, w
        while p > 0:
            lo = (q % _B9).astype(np.uint32)
            q = q // _B9
            for _ in range(min(9, p)):
                nxt = lo // np.uint32(10)
                p -= 1
                out[:, p] = (lo - nxt * np.uint32(10)).astype(np.uint8) + np.uint8(48)
                lo = nxt
        out[np.arange(w) < (w - _ndigits(mag))[:, None]] = 0
    if neg.any():
        rows = np.flatnonzero(neg)
        out[rows, w - 1 - _ndigits(mag[rows])] = ord("-")


def _ndigits(mag: np.ndarray) -> np.ndarray:
    return 1 + np.searchsorted(_P10[1:], mag, side="right")


def attempts_text(columns: Columns, *, last: bool = True) -> Iterator[bytes]:
    """The attempts' lines of a schedule file, in blocks of :data:`ROWS` rows.

    ``b"".join(...)`` is ``",\\n".join('  {"job": J, "start": S, "rounds": R,
    "completed": true|false}' …)`` encoded, byte for byte as :func:`kvopt.fileio.dumps_json`
    writes the items; with ``last=False`` every line ends with ``",\\n"``."""
    job, start, rounds, done = columns
    k = len(job)
    for i in range(0, k, ROWS):
        m = min(ROWS, k - i)
        cols = (job[i : i + m], start[i : i + m], rounds[i : i + m])
        widths = [_width(v) for v in cols]
        template = b"".join(lit + b"\0" * w for lit, w in zip(_LITERALS, widths)) + _LITERALS[3]
        rows = np.empty((m, len(template) + 8), np.uint8)
        rows[:, : len(template)] = np.frombuffer(template, np.uint8)
        c = 0
        for lit, w, v in zip(_LITERALS, widths, cols):
            c += len(lit)
            _put_digits(rows[:, c : c + w], v)
            c += w
        rows[:, -8:] = _FLAG[(~done[i : i + m]).view(np.uint8)]
        text = rows.tobytes().replace(b"\0", b"")
        yield text[:-2] if (last and i + m >= k) else text


def parse_attempts_text(text: bytes, *, last: bool = True) -> Columns | None:
    """The columns of ``text`` if it is exactly what :func:`attempts_text` (with ``last``)
    writes for them (read back and written again: the same bytes), else ``None``.

    The lines are cut at their commas (four a line: after the job, the start, the rounds
    and at the end; the last line has no end comma when ``last``); any text that is not
    in that form reads as something that is written differently, so the comparison
    refuses it."""
    b = np.frombuffer(text, np.uint8)
    commas = np.flatnonzero(b == ord(","))
    if last:
        commas = np.append(commas, len(b))
    m = len(commas) // 4
    if not m or len(commas) != 4 * m:
        return None
    c = commas.reshape(m, 4)
    line = np.zeros(m, np.int64)
    line[1:] = c[:-1, 3] + 2
    job = _parse_ints(b, line + 10, c[:, 0])
    start = _parse_ints(b, c[:, 0] + 11, c[:, 1])
    rounds = _parse_ints(b, c[:, 1] + 12, c[:, 2])
    if job is None or start is None or rounds is None or c[-1, 2] + 15 >= len(b):
        return None
    cols = (job, start, rounds, b[c[:, 2] + 15] == ord("t"))
    at = 0
    for block in attempts_text(cols, last=last):
        if not text.startswith(block, at):
            return None
        at += len(block)
    return cols if at == len(text) else None


def _parse_ints(b: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray | None:
    """The decimals ``b[lo:hi]`` of each row as int64 (``-`` first for a negative); a
    non-digit gives some number (the caller compares the text written again)."""
    if not (lo < hi).all() or (hi - lo > 20).any() or hi[-1] > len(b):
        return None
    neg = b[lo] == ord("-")
    nd = hi - lo - neg
    if (nd < 1).any() or (nd > 19).any():
        return None
    val = np.zeros(len(lo), np.uint64)
    short = int(nd.min())
    for p in range(int(nd.max())):
        pos = hi - 1 - p
        if p < short:
            val += (b[pos] - np.uint8(48)).astype(np.uint64) * _P10[p]
        else:
            has = p < nd
            val += (
                np.where(has, b[np.where(has, pos, 0)] - np.uint8(48), 0).astype(np.uint64)
                * _P10[p]
            )
    out = val.view(np.int64)
    return np.where(neg, -out, out) if neg.any() else out
