"""The independent schedule checker (SPEC §1).

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
* ``max-batch``     with a batch cap ``B`` (``max_batch``, SPEC §10.1) at most ``B``
  attempts run in any round;
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

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from .memory import AttemptColumns, memory_segments

if TYPE_CHECKING:
    from .instance import Instance


class CheckableSchedule(AttemptColumns, Protocol):
    """What the checker reads of a schedule (:class:`kvopt.schedule.Schedule` has it all): the
    attempt columns, the budget it was made for and the derived fields a file stated.  A
    protocol rather than the class keeps ``schedule`` → ``checker`` → ``memory`` one way."""

    @property
    def memory(self) -> int: ...
    @property
    def producer(self) -> str: ...
    @property
    def stated_completion_times(self) -> tuple[int, ...] | None: ...
    @property
    def stated_objective(self) -> Mapping[str, int] | None: ...


_S = TypeVar("_S", bound=CheckableSchedule)

#: How many memory violations are listed one by one before a summary.
MAX_MEMORY_ERRORS = 50


def objective_of(completion_times: Sequence[int]) -> dict[str, int]:
    """``total_completion = Σ C_i`` and ``makespan = max C_i`` (0 for no jobs)."""
    ct = [int(c) for c in completion_times]
    return {"total_completion": int(sum(ct)), "makespan": int(max(ct, default=0))}


def last_ends(job: np.ndarray, end: np.ndarray, mask: np.ndarray, n: int) -> list[int | None]:
    """``end`` of the last row (in order) of each job ``0 … n−1`` among the rows ``mask``
    selects (jobs in range), ``None`` for a job without one: the completion times a loop
    over the attempts in order gives, from the columns."""
    idx = np.flatnonzero(mask)
    j = job[idx]
    if len(idx) and np.bincount(j, minlength=n).max() > 1:  # a job twice: its last row
        last = np.unique(j[::-1], return_index=True)[1]
        idx = idx[::-1][last]
        j = job[idx]
    cta = np.zeros(n, dtype=np.int64)
    cta[j] = end[idx]
    ct: list[int | None] = cta.tolist()
    if len(idx) < n:
        has = np.zeros(n, dtype=bool)
        has[j] = True
        ct = [c if h else None for c, h in zip(ct, has.tolist(), strict=True)]
    return ct


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
    """What the checker found.

    ``objectives`` is ``{"total_completion": ΣC_i, "makespan": max C_i}``, or ``None`` unless
    every job completes; :attr:`total_completion` and :attr:`makespan` read it (``None`` then
    too).  It was called ``objective`` until kvopt 0.2 renamed it (issue 68:
    :attr:`kvopt.exact.SolveResult.objective` is a number); that name still works for one
    release, with a :class:`DeprecationWarning`, and is removed in kvopt 0.3.  The JSON form
    (:meth:`to_dict`, ``kvopt check --json``) keeps SPEC §4's key ``objective``.
    """

    valid: bool
    errors: tuple[Violation, ...]
    completion_times: tuple[int | None, ...]
    objectives: dict[str, int] | None
    peak_memory: int

    @property
    def total_completion(self) -> int | None:
        """``ΣC_i`` (rounds), ``None`` unless every job completes."""
        return None if self.objectives is None else int(self.objectives["total_completion"])

    @property
    def makespan(self) -> int | None:
        """``max C_i`` (rounds), ``None`` unless every job completes."""
        return None if self.objectives is None else int(self.objectives["makespan"])

    @property
    def objective(self) -> dict[str, int] | None:
        """Deprecated alias of :attr:`objectives` (the same dict); removed in kvopt 0.3."""
        warnings.warn(
            "CheckResult.objective is deprecated; use .objectives (a dict) or "
            ".total_completion / .makespan; removed in kvopt 0.3",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.objectives

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "errors": [e.to_dict() for e in self.errors],
            "objective": self.objectives,
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


def check_schedule(instance: Instance, schedule: CheckableSchedule) -> CheckResult:
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
    jc = np.where(ok, job, 0) if bad_job.any() else job  # (issue 54: no copy when all are)
    o = instance.responses[jc] if n else np.zeros(len(job), np.int64)
    a = instance.arrivals[jc] if n else np.zeros(len(job), np.int64)
    checks = [
        (
            "start",
            ok & (start < 0),
            lambda k: f"job {job[k]}: attempt starts at negative round {start[k]}",
            lambda k: start[k],
        ),
        (
            "rounds",
            ok & (rounds < 1),
            lambda k: (
                f"job {job[k]}: attempt at round {start[k]} has {rounds[k]} rounds (must be >= 1)"
            ),
            lambda k: rounds[k],
        ),
        (
            "arrival",
            ok & (start < a) & (start >= 0),
            lambda k: f"job {job[k]}: attempt starts at round {start[k]} before arrival {a[k]}",
            lambda k: a[k] - start[k],
        ),
        (
            "rounds-exceed-response",
            ok & (rounds > o),
            lambda k: (
                f"job {job[k]}: attempt at round {start[k]} runs {rounds[k]} rounds, response is {o[k]}"
            ),
            lambda k: rounds[k] - o[k],
        ),
        (
            "completed-flag",
            ok & (rounds >= 1) & (rounds <= o) & (done != (rounds == o)),
            lambda k: (
                f"job {job[k]}: attempt at round {start[k]} has rounds={rounds[k]}, response={o[k]} "
                f"but completed={'true' if done[k] else 'false'}"
            ),
            lambda k: rounds[k],
        ),
    ]
    for rule, mask, msg, amount in checks:
        for k in np.flatnonzero(mask):
            errors.append(
                Violation(rule, msg(k), job=int(job[k]), round=int(start[k]), amount=int(amount(k)))
            )

    # --- per-job rules: no overlap, exactly one completion, and it is last --
    okr = ok & (rounds >= 1)
    every = not bad_job.any()  # no row to leave out: no copies (issue 54)
    idx = None if every else np.flatnonzero(ok)
    js, ss = (job, start) if idx is None else (job[idx], start[idx])
    if len(ss) < 2 or bool((ss[1:] >= ss[:-1]).all()):
        # ordered by start (as kvopt writes schedules): a stable sort by job gives the same
        # order as the two keys, in about half the time (issue 54)
        order = np.argsort(js, kind="stable")
    else:
        order = np.lexsort((ss, js))
    if idx is not None:
        order = idx[order]
    oj, os_, ro = job[order], start[order], rounds[order]
    # a completing attempt (of its job's response): read before ``oe`` reuses the array
    oo = o[order]
    odone = done[order] & (ro == oo)
    oe = np.add(os_, ro, out=oo)
    del ro
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
        js, ss, rs = (
            (job, start, rounds) if mrows.all() else (job[mrows], start[mrows], rounds[mrows])
        )
        bounds, C, K = memory_segments(instance.prompts, js, ss, rs)
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
        for t0, amt in mem_errors[:MAX_MEMORY_ERRORS]:
            # the attempts running in round t0; the job named is the one started last (ties:
            # the larger index), as the engine names it: the start that broke the budget
            live, last, shown = _running_at(t0, js, ss, rs)
            held = int(sum(int(instance.prompts[js[k]]) + t0 - int(ss[k]) + 1 for k in live))
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
        if instance.max_batch is not None:
            errors.extend(_batch_errors(instance.max_batch, bounds, Ks, js, ss, rs))

    # --- derived fields -----------------------------------------------------
    # C_i of the last completing attempt of job i in the file's order (as a loop would)
    ct = last_ends(job, start + rounds, ok & done & (rounds == o), n)
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


def _batch_errors(
    B: int, bounds: np.ndarray, Ks: np.ndarray, js: np.ndarray, ss: np.ndarray, rs: np.ndarray
) -> list[Violation]:
    """``max-batch`` violations: the stretches of rounds in which more than ``B`` attempts
    run (``Ks`` = running attempts per segment of :func:`~kvopt.memory.memory_segments`),
    one per stretch, naming its first round and the attempt started last there (ties: the
    larger job index, as the engine names the start that broke the cap)."""
    over = np.flatnonzero(Ks > B)
    if not len(over):
        return []
    runs: list[tuple[int, int]] = []  # (first segment, largest count) of each stretch
    prev = None
    for k in over.tolist():
        if prev is not None and k == prev + 1:  # adjacent segments: one stretch
            runs[-1] = (runs[-1][0], max(runs[-1][1], int(Ks[k])))
        else:
            runs.append((k, int(Ks[k])))
        prev = k
    out = []
    for k, most in runs[:MAX_MEMORY_ERRORS]:
        t0 = int(bounds[k])
        live, last, shown = _running_at(t0, js, ss, rs)
        out.append(
            Violation(
                "max-batch",
                f"job {int(js[last])}, round {t0}: {len(live)} attempts run (jobs {shown}) > "
                f"max_batch {B} (job {int(js[last])}, started at round {int(ss[last])}, is the "
                f"last one started; up to {most} in this stretch)",
                job=int(js[last]),
                round=t0,
                amount=most - B,
            )
        )
    if len(runs) > MAX_MEMORY_ERRORS:
        out.append(
            Violation(
                "max-batch",
                f"... and {len(runs) - MAX_MEMORY_ERRORS} more stretches over max_batch {B}",
            )
        )
    return out


def _running_at(t0: int, js, ss, rs) -> tuple[np.ndarray, int, str]:
    """The attempts running in round ``t0`` (indices into the columns), the one started last
    (ties: the larger job index, as the engine names the start that broke a rule), and their
    jobs as text (at most 8)."""
    live = np.flatnonzero((ss <= t0) & (t0 < ss + rs))
    last = max(live.tolist(), key=lambda k: (int(ss[k]), int(js[k])))
    names = sorted(int(js[k]) for k in live)
    return live, last, ", ".join(map(str, names[:8])) + (", …" if len(names) > 8 else "")


def checked(instance: Instance, schedule: _S, what: str | None = None) -> _S:
    """Return ``schedule`` after it passed :func:`check_schedule`; raise otherwise.

    Every schedule kvopt produces goes through here before it is reported.
    """
    check_schedule(instance, schedule).raise_if_invalid(what or (schedule.producer or "schedule"))
    return schedule
