"""Certifying records (SPEC §8): ``kvopt certify`` and a campaign's certify stage.

:func:`certify_record` tightens a record's bracket (:class:`kvopt.certify.Bracket`)
with what the toolkit can prove in a time limit: the cheap bounds again (the
typed cheap upper bound included: it is never worse than the plain one), the
record's own bracket (never lost: ``lb`` only rises, ``ub`` only falls), then
one exact solve of :func:`kvopt.exact.solve` with ``solver="auto"`` — on typed
instances (few job types, many copies) its route is HiGHS on the aggregated
time-indexed model (``models/time-indexed.md`` §9.4), the model the issue's
measurements found strongest there — on ``threads`` threads, warm-started
from the record's clairvoyant schedule.  All of it is merged by
:func:`kvopt.certify.tighten`, the one merge rule.

A record whose bracket got tighter is rewritten with the new bracket (a
lower ``ub`` raises the certified ratio ``alg/ub``, a higher ``lb`` lowers the
optimistic ``alg/lb``); its old bracket is appended to ``history`` with what
replaced it.  A record whose bracket did not change is left as it was.

:func:`certify_file` does the same for a file: the record is verified first
(:func:`kvopt.record.verify_record`: both schedules pass the checker, the
stated values match, the policy replays) and any problem is an
:class:`~kvopt.errors.InputError` naming the file and the rule, before
anything is solved or written; the new file is written atomically (a
temporary file in the same folder, fsync, :func:`os.replace`), so a process
killed at any moment leaves the old file or the new one, never a mix.
"""

from __future__ import annotations

import datetime
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..certify import CERTIFY_SECONDS, CERTIFY_THREADS, Bracket, Effort, bracket
from ..errors import InputError
from ..record import Record, load_record, record_from_bracket, save_record, verify_record


@dataclass(frozen=True)
class Certified:
    """One record certified: its bracket ``before`` and ``after``, whether the record changed
    (``tighter``), the file (``None`` for a record in memory), and the certify seconds."""

    path: str | None
    before: Bracket
    after: Bracket
    seconds: float
    time_limit: float

    @property
    def tighter(self) -> bool:
        return self.after.tighter_than(self.before)

    def to_dict(self) -> dict[str, Any]:
        return {
            "record": self.path,
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            "tighter": self.tighter,
            "seconds": round(self.seconds, 3),
            "time_limit": self.time_limit,
        }

    def text(self) -> str:
        what = "tighter" if self.tighter else "unchanged"
        return (
            f"{self.path or 'record'}: {self.before.text()} -> {self.after.text()} "
            f"[{self.after.status}, {what}, {self.seconds:.1f}s]"
        )


def check_time_limit(time_limit: float, option: str = "--time-limit") -> float:
    """``time_limit`` as a float ≥ 0 (0: the cheap bounds only), else :class:`InputError`."""
    ok = not isinstance(time_limit, bool) and isinstance(time_limit, int | float)
    if not ok or not (0 <= time_limit < float("inf")):
        raise InputError(f"must be a number >= 0, got {time_limit!r}", source=option)
    return float(time_limit)


def certify_record(
    record: Record,
    *,
    time_limit: float = CERTIFY_SECONDS,
    threads: int = CERTIFY_THREADS,
    by: str = "kvopt certify",
) -> tuple[Record, Certified]:
    """``record`` with its bracket tightened (module doc) and the :class:`Certified` report.

    The record is returned unchanged (the same object) when nothing got
    tighter.  ``by`` names what certified it in the history entry.
    """
    time_limit = check_time_limit(time_limit)
    t0 = time.monotonic()
    before = record.bracket
    inst = record.instance
    effort = Effort(exact_seconds=time_limit, typed=True, solver="auto", deterministic=False,
                    threads=threads)  # fmt: skip
    after = bracket(record.schedule, inst, effort, objective=record.objective, prior=before)
    seconds = time.monotonic() - t0
    report = Certified(None, before, after, seconds, time_limit)
    if not after.tighter_than(before):
        return record, report
    entry = {
        **record.bracket_entry(),
        "replaced": {
            "by": by,
            "at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "time_limit": time_limit,
            "seconds": round(seconds, 3),
        },
    }
    new = record_from_bracket(
        inst, record.policy, dict(record.params), record.seed, after,
        found_by=dict(record.found_by), meta=dict(record.meta),
        history=(*record.history, entry), source=record.policy_source,
    )  # fmt: skip
    return new, report


def certify_file(
    path: str | os.PathLike,
    *,
    time_limit: float = CERTIFY_SECONDS,
    threads: int = CERTIFY_THREADS,
) -> Certified:
    """Certify the record file ``path`` in place (module doc); :class:`InputError` when it is
    not a valid record (the file is then untouched)."""
    time_limit = check_time_limit(time_limit)
    rec = load_record(path)
    problems = verify_record(rec)
    if problems:
        p = problems[0]
        where = f"{p.schedule}: " if p.schedule and not p.rule.startswith(p.schedule) else ""
        raise InputError(f"{where}{p.message} (rule {p.rule}; kvopt check lists every problem)",
                         field=p.rule.split(":")[0], source=str(path))  # fmt: skip
    new, report = certify_record(rec, time_limit=time_limit, threads=threads)
    if new is not rec:
        save_record(new, path)
    return Certified(str(path), report.before, report.after, report.seconds, time_limit)


def certify_files(
    paths: Sequence[str | os.PathLike],
    *,
    time_limit: float = CERTIFY_SECONDS,
    threads: int = CERTIFY_THREADS,
    say=None,
) -> list[Certified]:
    """:func:`certify_file` on each path in turn; every path is read and verified before
    the first solve, so bad input stops the command before any file is rewritten."""
    time_limit = check_time_limit(time_limit)
    if not paths:
        raise InputError("give at least one record file", source="RECORD")
    for p in paths:
        rec = load_record(p)
        problems = verify_record(rec)
        if problems:
            q = problems[0]
            raise InputError(f"{q.message} (rule {q.rule}; kvopt check lists every problem)",
                             field=q.rule.split(":")[0], source=str(p))  # fmt: skip
    out = []
    for p in paths:
        c = certify_file(p, time_limit=time_limit, threads=threads)
        if say is not None:
            say(c.text())
        out.append(c)
    return out


__all__ = [
    "CERTIFY_SECONDS",
    "CERTIFY_THREADS",
    "Certified",
    "certify_file",
    "certify_files",
    "certify_record",
    "check_time_limit",
]
