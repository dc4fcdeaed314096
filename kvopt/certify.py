"""Brackets on Opt (SPEC §8): one type, one merge rule, one pipeline.

A policy's answer on an instance is a **bracket**: the true ratio ``ALG/Opt``
lies between ``ALG/UB`` (certified: ``UB`` is the value of a clairvoyant
schedule that passed the checker) and ``ALG/LB`` (optimistic: ``LB`` is a
proven lower bound on Opt).  This module owns

* :class:`Bracket` — frozen: ``alg``, ``lb``, ``ub``, ``status``, the
  schedules that justify ``alg`` and ``ub``, and where ``lb`` and ``ub`` came
  from.  Building one that breaks an invariant raises :class:`BracketError`:
  ``0 ≤ lb ≤ ub``, ``lb ≤ alg`` (the policy's schedule without its killed
  attempts is a clairvoyant schedule, so ``Opt ≤ ALG``), ``optimal`` exactly
  when ``lb = ub``, a schedule for ``ub``;
* :func:`tighten` — **the** merge rule: new evidence (a proven lower bound, a
  clairvoyant schedule, an exact solve) merged into a bracket.  ``lb`` only
  rises, ``ub`` only falls, a schedule counts only after the checker passed it
  on the instance, the status is ``optimal`` exactly when the two meet, and a
  lower bound above a checked schedule's value is a contradiction (a wrong
  bound or a wrong checker), raised, never clamped away;
* :func:`bracket` — the pipeline every caller uses: simulate the policy (or
  take its schedule), the cheap lower bounds of SPEC §2 and the cheap
  kill-free clairvoyant schedules (:func:`cheap_ub`), then, as the
  :class:`Effort` allows, an exact solve (:func:`solve_bracket`), all merged by
  :func:`tighten`.

The evidence itself (values, cheap bounds and schedules, exact solves) lives in
:mod:`kvopt.evidence`; this module re-exports it.  An exact solve's evidence
(:class:`ExactResult`): its incumbent is a schedule
like any other (checked on merging); its ``bound`` counts when it is
*proven*: :func:`kvopt.exact.solve` reports the solver's proven dual bound,
rounded up to an integer, also when the time limit stopped it (then with
status ``feasible`` or ``unknown``), so that bound counts; a solve that says
``infeasible`` (impossible on a valid instance: the solver failed) contributes
no bound.  The solver's own ``optimal`` flag is not trusted on its own: the
bracket is ``optimal`` when its bound meets a checked schedule's value, which
is what ``optimal`` means (SPEC §5).

``ALG`` is computed in one place, :func:`objective_value`, for the three
objectives: ``total`` (``Σ C_i``), ``makespan`` (``max C_i``) and ``latency``
(``Σ (C_i − a_i)``; same optimal schedules as ``total``, bounds shifted by
``Σ a_i``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from .errors import InputError
from .evidence import (
    OBJECTIVES,
    UB_POLICIES,
    ExactResult,
    cheap_lb,
    cheap_ub,
    exact_opt,
    from_solve,
    objective_value,
    ratio,
    starts_of,
    value,
)
from .instance import Instance
from .policy import ResolvedPolicy
from .schedule import Schedule, check_schedule

#: The default time limit of ``kvopt certify`` (seconds per record) and of a campaign's
#: certify stage (``--certify-seconds``): the issue's table was measured with 60 s per record,
#: and a minute is small next to the minutes of search that found the record.
CERTIFY_SECONDS = 60.0
#: Threads of the certifying solve: the two cores of the machines the tables were measured on
#: (the certify stage runs after the search's workers have stopped).
CERTIFY_THREADS = 2


class BracketError(ValueError):
    """A bracket that would break an invariant (``lb > ub``, ``optimal`` with ``lb < ub``, …).

    Never bad input: it means a bound, a schedule or a merge is wrong.
    """


class OptStatus(StrEnum):
    """Whether the bracket's ``ub`` is proved optimal (the ``opt_status`` of logs and records)."""

    __repr__ = str.__repr__  # shows as its string

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"


# --------------------------------------------------------------------------- the bracket


@dataclass(frozen=True)
class Bracket:
    """``lb ≤ Opt ≤ ub`` with ``alg`` the policy's value (``None``: a bracket on Opt alone).

    ``ub_schedule`` is the checked clairvoyant schedule of value ``ub`` (its
    producer is ``ub_source``); ``schedule`` the policy's schedule of value
    ``alg`` when known; ``lb_source`` names the bound (``area``,
    ``processing``, ``exact bound``, …).  ``exact_seconds`` and ``solves``
    count the exact solving merged in.  Build brackets with :func:`bracket`
    and :func:`tighten`; the constructor only checks the invariants
    (module doc) and raises :class:`BracketError` when one fails.
    """

    alg: int | None
    lb: int
    ub: int
    status: OptStatus
    ub_schedule: Schedule
    ub_source: str
    lb_source: str
    objective: str = "total"
    schedule: Schedule | None = field(default=None, compare=False, repr=False)
    exact_seconds: float = 0.0
    solves: int = 0

    def __post_init__(self) -> None:
        for name in ("lb", "ub") + (("alg",) if self.alg is not None else ()):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 0:
                raise BracketError(f"{name} must be an integer >= 0, got {v!r}")
            object.__setattr__(self, name, int(v))
        object.__setattr__(self, "status", OptStatus(self.status))
        if self.objective not in OBJECTIVES:
            raise BracketError(f"objective must be one of {', '.join(OBJECTIVES)}")
        if self.lb > self.ub:
            raise BracketError(
                f"lb = {self.lb} ({self.lb_source}) exceeds ub = {self.ub} ({self.ub_source})"
            )
        if self.alg is not None and self.lb > self.alg:
            raise BracketError(f"lb = {self.lb} ({self.lb_source}) exceeds alg = {self.alg}")
        if self.status == OptStatus.OPTIMAL and self.lb != self.ub:
            raise BracketError(f"status optimal with lb = {self.lb} < ub = {self.ub}")
        if self.status == OptStatus.FEASIBLE and self.lb == self.ub:
            raise BracketError(f"lb = ub = {self.ub} but status feasible (it is optimal)")
        if not isinstance(self.ub_schedule, Schedule):
            raise BracketError("ub needs the clairvoyant schedule that justifies it")

    @property
    def optimal(self) -> bool:
        return self.status == OptStatus.OPTIMAL

    @property
    def ratio_certified(self) -> float | None:
        """``alg / ub`` (a lower bound on the true ratio)."""
        return None if self.alg is None else ratio(self.alg, self.ub)

    @property
    def ratio_optimistic(self) -> float | None:
        """``alg / lb`` (an upper bound on the true ratio)."""
        return None if self.alg is None else ratio(self.alg, self.lb)

    @property
    def gap(self) -> float:
        """``(ub − lb) / ub`` (0 when optimal)."""
        return 0.0 if self.ub == 0 else (self.ub - self.lb) / self.ub

    def tighter_than(self, other: Bracket) -> bool:
        """Whether this bracket is strictly narrower than ``other`` (a higher lb or a lower ub)."""
        return self.lb > other.lb or self.ub < other.ub

    def to_dict(self) -> dict[str, Any]:
        """The bracket as JSON (without the schedules)."""
        return {
            "alg": self.alg,
            "lb": self.lb,
            "ub": self.ub,
            "opt_status": str(self.status),
            "ratio_certified": self.ratio_certified,
            "ratio_optimistic": self.ratio_optimistic,
            "lb_source": self.lb_source,
            "ub_source": self.ub_source,
            "exact_seconds": round(self.exact_seconds, 3),
            "solves": self.solves,
        }

    def text(self) -> str:
        """``alg/ub – alg/lb`` (or ``lb – ub`` without ``alg``) and the status."""
        if self.alg is None:
            body = f"Opt in [{self.lb}, {self.ub}]"
        elif self.optimal:
            body = f"{self.ratio_certified:.4f} exactly (Opt {self.ub})"
        else:
            body = f"{self.ratio_certified:.4f} - {self.ratio_optimistic:.4f} (LB {self.lb}, UB {self.ub})"
        return body


def _status(lb: int, ub: int) -> OptStatus:
    return OptStatus.OPTIMAL if lb == ub else OptStatus.FEASIBLE


def _checked_value(inst: Instance, schedule: Schedule, objective: str, what: str) -> int:
    res = check_schedule(inst, schedule)
    if not res.valid:
        e = res.errors[0]
        raise BracketError(f"{what} fails the checker: {e.rule}: {e.message}")
    return objective_value(inst, schedule, objective)


def start_bracket(
    inst: Instance,
    ub_schedule: Schedule,
    *,
    objective: str = "total",
    lb: int = 0,
    lb_source: str = "none",
    ub_source: str | None = None,
    schedule: Schedule | None = None,
) -> Bracket:
    """The first bracket of an instance: the checked schedule ``ub_schedule``, a lower bound
    ``lb`` (clamped to nothing: ``lb > ub`` raises), and the policy's ``schedule`` (checked;
    ``alg`` is its objective) when given."""
    ub = _checked_value(inst, ub_schedule, objective, "the clairvoyant schedule")
    alg = None
    if schedule is not None:
        alg = _checked_value(inst, schedule, objective, "the policy's schedule")
    lb = int(lb)
    return Bracket(alg, lb, ub, _status(lb, ub), ub_schedule,
                   ub_source or ub_schedule.producer or "schedule", lb_source, objective,
                   schedule)  # fmt: skip


def with_policy(b: Bracket, inst: Instance, schedule: Schedule) -> Bracket:
    """The bracket on Opt ``b`` (of ``inst``) for a policy whose schedule is ``schedule``
    (checked here; ``alg`` is its objective): one reference bracket serves every policy run on
    the same instance."""
    alg = _checked_value(inst, schedule, b.objective, "the policy's schedule")
    return Bracket(alg, b.lb, b.ub, b.status, b.ub_schedule, b.ub_source, b.lb_source,
                   b.objective, schedule, b.exact_seconds, b.solves)  # fmt: skip


def tighten(
    b: Bracket,
    inst: Instance,
    *,
    lb: int | None = None,
    lb_source: str = "bound",
    ub_schedule: Schedule | None = None,
    ub_source: str | None = None,
    exact: ExactResult | None = None,
) -> Bracket:
    """The one merge rule (module doc): ``b`` with a proven lower bound ``lb``, a clairvoyant
    schedule ``ub_schedule`` and/or an exact solve ``exact`` merged in.

    ``lb`` only rises and ``ub`` only falls (the first source wins ties); a
    schedule counts after the checker passed it on ``inst``; an exact solve's
    incumbent counts as a schedule (its ``starts`` in ``inst``'s job order) and
    its bound when proven; the status is ``optimal`` exactly when ``lb = ub``.
    A lower bound above the value of a checked schedule raises
    :class:`BracketError`.
    """
    new_lb, new_lb_src = b.lb, b.lb_source
    new_ub, new_ub_src, new_sched = b.ub, b.ub_source, b.ub_schedule
    evidence_lb: list[tuple[int, str]] = []
    evidence_ub: list[tuple[Schedule, str]] = []
    seconds, solves = b.exact_seconds, b.solves
    if lb is not None:
        evidence_lb.append((int(lb), lb_source))
    if ub_schedule is not None:
        evidence_ub.append((ub_schedule, ub_source or ub_schedule.producer or "schedule"))
    if exact is not None:
        seconds += float(exact.seconds)
        solves += 1
        if exact.starts is not None:
            src = f"exact ({exact.solver})" if exact.solver else "exact"
            evidence_ub.append((Schedule.from_starts(inst, exact.starts, producer=src), src))
        if exact.proven_bound is not None:
            evidence_lb.append((int(exact.proven_bound), "exact bound"))
    for sched, src in evidence_ub:
        v = _checked_value(inst, sched, b.objective, f"the schedule from {src}")
        if v < new_ub:
            new_ub, new_ub_src, new_sched = v, src, sched
    for v, src in evidence_lb:
        if v > new_lb:
            new_lb, new_lb_src = v, src
    if new_lb > new_ub:
        raise BracketError(
            f"lower bound {new_lb} ({new_lb_src}) exceeds the checked schedule of value "
            f"{new_ub} ({new_ub_src}): a bound or the checker is wrong"
        )
    return Bracket(b.alg, new_lb, new_ub, _status(new_lb, new_ub), new_sched, new_ub_src,
                   new_lb_src, b.objective, b.schedule, seconds, solves)  # fmt: skip


# --------------------------------------------------------------------------- the pipeline


@dataclass(frozen=True)
class Effort:
    """How hard :func:`bracket` works.

    ``typed``/``full_ub``/``serial_ub``: :func:`cheap_ub`'s options (type
    orders; the local search and the policies; serial placements).
    ``exact_seconds`` > 0: an exact solve of that many seconds (on
    ``threads`` threads, with ``solver`` and ``deterministic`` as in
    :func:`kvopt.exact.solve`), unless the bracket is already optimal or the
    instance has more than ``exact_max_n`` jobs (``None``: no limit).
    """

    exact_seconds: float = 0.0
    exact_max_n: int | None = None
    typed: bool = False
    full_ub: bool = True
    serial_ub: bool = True
    solver: str = "auto"
    deterministic: bool = True
    threads: int = 1

    def __post_init__(self) -> None:
        s = self.exact_seconds
        if isinstance(s, bool) or not isinstance(s, int | float) or not s >= 0:
            raise InputError(f"must be a number >= 0, got {s!r}", field="exact_seconds")
        for name, low in (("exact_max_n", 0), ("threads", 1)):
            v = getattr(self, name)
            if v is None and name == "exact_max_n":
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise InputError(f"must be an integer >= {low}, got {v!r}", field=name)

    def solves(self, inst: Instance) -> bool:
        """Whether this effort solves ``inst`` exactly: not beyond n = 16 when ``n × (max a +
        Σ o)`` passes :data:`EXACT_MAX_CELLS` (certifying a growth sweep's ×128 point, n =
        12,751 and 65,256 rounds, asked for a 1.5 GiB array; the validation run doing so had
        grown to 24 GB).  ``kvopt solve`` has its own, later guard on the model it would build
        (:data:`kvopt.exact.portfolio.routes.MODEL_MAX_CELLS`: the event model or no model);
        this one is stricter on many copies of few jobs and skips the solve altogether, so a
        sweep's largest points keep their cheap bounds at no cost."""
        return (
            self.exact_seconds > 0
            and inst.n > 0
            and (self.exact_max_n is None or inst.n <= self.exact_max_n)
            and (inst.n <= 16 or inst.n * _spec_horizon(inst) <= EXACT_MAX_CELLS)
        )


#: an exact solve is not started when ``n × horizon`` exceeds this (400 MB of int64 per
#: per-job array; :meth:`Effort.solves`): the bracket keeps its cheap bounds
EXACT_MAX_CELLS = 50_000_000


def _spec_horizon(inst: Instance) -> int:
    from .exact.common import spec_horizon  # the exact layer is imported only when used

    return spec_horizon(inst)


#: Cheap bounds only (full cheap UB).
CHEAP = Effort()


def bracket(
    policy: str | ResolvedPolicy | Schedule | None,
    inst: Instance,
    effort: Effort = CHEAP,
    *,
    objective: str = "total",
    params: Mapping[str, Any] | None = None,
    seed: int | None = None,
    max_attempts: int | None = None,
    prior: Bracket | None = None,
) -> Bracket:
    """The bracket of ``policy`` on ``inst`` (SPEC §8), as tight as ``effort`` makes it.

    ``policy``: a policy name or a :class:`~kvopt.policy.ResolvedPolicy` (simulated here
    with ``params``, ``seed`` and ``max_attempts``; :class:`~kvopt.errors.PolicyError`,
    :class:`~kvopt.errors.BudgetError` and :class:`~kvopt.errors.InputError`
    propagate), the policy's schedule (already simulated), or ``None`` for a
    bracket on Opt alone.  Then the cheap lower bound (:func:`cheap_lb`), the
    cheap clairvoyant schedule (:func:`cheap_ub`), what ``prior`` (an earlier
    bracket of the same instance) knew, and an exact solve when ``effort``
    asks for one (:func:`solve_bracket`) — merged by :func:`tighten`.
    """
    sched: Schedule | None
    if isinstance(policy, str | ResolvedPolicy):
        from .simulation import simulate

        sched = simulate(inst, policy, params=dict(params or {}) or None, seed=seed,
                         max_attempts=max_attempts).schedule  # fmt: skip
    else:
        sched = policy
    lb, lb_name = cheap_lb(inst, objective)
    starts, _, src = cheap_ub(inst, objective, typed=effort.typed, full=effort.full_ub,
                              serial=effort.serial_ub)  # fmt: skip
    ub_sched = Schedule.from_starts(inst, starts, producer=src)
    if prior is not None:
        b = start_bracket(inst, prior.ub_schedule, objective=objective, lb=prior.lb,
                          lb_source=prior.lb_source, ub_source=prior.ub_source,
                          schedule=sched if sched is not None else prior.schedule)  # fmt: skip
        b = Bracket(b.alg, b.lb, b.ub, b.status, b.ub_schedule, b.ub_source, b.lb_source,
                    b.objective, b.schedule, prior.exact_seconds, prior.solves)  # fmt: skip
        b = tighten(b, inst, lb=lb, lb_source=lb_name, ub_schedule=ub_sched, ub_source=src)
    else:
        b = start_bracket(inst, ub_sched, objective=objective, ub_source=src, schedule=sched)
        b = tighten(b, inst, lb=lb, lb_source=lb_name)
    return solve_bracket(b, inst, effort)


def solve_bracket(b: Bracket, inst: Instance, effort: Effort) -> Bracket:
    """``b`` tightened by an exact solve under ``effort`` (warm-started from ``b``'s
    schedule); ``b`` itself when it is optimal or ``effort`` solves nothing here."""
    if b.optimal or not effort.solves(inst):
        return b
    warm = starts_of(b.ub_schedule, inst.n)
    if any(not a.completed for a in b.ub_schedule.attempts):
        warm = None
    if warm is None:
        warm = np.asarray(cheap_ub(inst, b.objective, serial=True)[0])
    ex = exact_opt(inst, b.objective, float(effort.exact_seconds), warm, solver=effort.solver,
                   deterministic=effort.deterministic, threads=effort.threads)  # fmt: skip
    return tighten(b, inst, exact=ex)


__all__ = ["CERTIFY_SECONDS", "CERTIFY_THREADS", "CHEAP", "EXACT_MAX_CELLS", "OBJECTIVES",
           "UB_POLICIES", "Bracket", "BracketError", "Effort", "ExactResult", "OptStatus", "bracket",
           "cheap_lb", "cheap_ub", "exact_opt", "from_solve", "objective_value", "ratio",
           "solve_bracket", "start_bracket", "starts_of", "tighten", "value", "with_policy"]  # fmt: skip
