"""Typed records of a campaign: what is logged, told to strategies and reported.

Like Optuna's ``FrozenTrial``/``TrialState``: one frozen dataclass per thing
a campaign writes or reads back, and string enums for its states, so that
the JSON files keep their plain strings (a :class:`~enum.StrEnum` member
*is* its string).

* :class:`Evaluation` — one line of ``evaluations.jsonl``
  (:meth:`Evaluation.to_dict` writes the keys in the order the log always
  had; :meth:`Evaluation.from_dict` reads any line, keeping keys it does not
  know in ``extra`` so that they are written back unchanged);
* :class:`CompactInstance`, :class:`Screen`, :class:`ExactResult` — its parts;
* :class:`ExactStatus` (how the evaluation got Opt), :class:`OptStatus`
  (whether ``ub`` is proved optimal), :class:`Outcome` (complete, reused,
  failed, skipped);
* :class:`EvalTask` — what a worker evaluates;
* :class:`CampaignHeader` — ``campaign.json``;
* :class:`Best`, :class:`StopReason`, :class:`CampaignResult` — what a run reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, Protocol

from ..certify import Bracket, ExactResult, OptStatus
from ..instance import Instance
from ..policy import PolicyRef


class ExactStatus(StrEnum):
    """How an evaluation got its Opt information (the log's ``exact`` field)."""

    __repr__ = str.__repr__  # shows as its string, as before the enum

    SOLVED = "solved"  # solved exactly for this evaluation
    CACHED = "cached"  # an earlier exact result for the same job multiset
    SKIPPED = "skipped"  # screened out: it could not beat the best
    REUSED = "reused"  # the same instance was evaluated before: its result copied


#: How the ``error`` of an evaluation skipped for its attempt budget starts
#: (:func:`kvopt.campaign.evaluate.max_attempts`).
BUDGET_PREFIX = "over budget: "


class Outcome(StrEnum):
    """What became of an evaluation (derived from its line, not stored)."""

    __repr__ = str.__repr__  # shows as its string, as before the enum

    COMPLETE = "complete"
    REUSED = "reused"
    FAILED = "failed"  # the policy broke the model (a PolicyError): a finding
    SKIPPED = "skipped"  # the simulation went past its attempt budget: no result, no finding


class StopReason(StrEnum):
    """Why a campaign run ended (``CampaignResult.stopped``)."""

    __repr__ = str.__repr__  # shows as its string, as before the enum

    BUDGET = "budget"
    SECONDS = "seconds"
    EXHAUSTED = "exhausted"
    INTERRUPTED = "interrupted"

    def describe(self) -> str:
        """How a summary says it: ``stopped by budget``, …, ``interrupted (Ctrl-C)``."""
        return "interrupted (Ctrl-C)" if self is StopReason.INTERRUPTED else f"stopped by {self}"


def _tuple(v) -> tuple[int, ...] | None:
    return None if v is None else tuple(int(x) for x in v)


@dataclass(frozen=True)
class CompactInstance:
    """An instance as three lists (what a log line stores); ``arrivals`` only when some are > 0."""

    memory: int
    prompts: tuple[int, ...]
    responses: tuple[int, ...]
    arrivals: tuple[int, ...] | None = None

    @classmethod
    def of(cls, inst: Instance) -> CompactInstance:
        return cls(
            inst.memory,
            tuple(inst.prompts.tolist()),
            tuple(inst.responses.tolist()),
            tuple(inst.arrivals.tolist()) if inst.has_arrivals else None,
        )

    def expand(self, name: str = "") -> Instance:
        return Instance.from_arrays(
            self.memory, list(self.prompts), list(self.responses),
            None if self.arrivals is None else list(self.arrivals), name=name,
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "memory": self.memory,
            "prompts": list(self.prompts),
            "responses": list(self.responses),
        }
        if self.arrivals is not None:
            d["arrivals"] = list(self.arrivals)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CompactInstance:
        return cls(
            int(d["memory"]), _tuple(d["prompts"]), _tuple(d["responses"]),
            _tuple(d.get("arrivals")),
        )  # fmt: skip


@dataclass(frozen=True)
class Screen:
    """The cheap estimates: ``alg/LB`` (an upper estimate) and ``alg/UB`` (certified)."""

    ratio_lb: float
    ratio_ub: float

    def to_dict(self) -> dict[str, float]:
        return {"ratio_lb": self.ratio_lb, "ratio_ub": self.ratio_ub}


#: Keys of a log line, in the order they are written (``extra`` keys follow).
_HEAD = ("index", "batch", "key", "n", "memory", "instance", "origin")
_RATIO_CLAIM = ("bound", "score", "score_optimistic")
_PER_JOB_CLAIM = ("score", "violation")
_BODY = ("area", "alg", "lb", "lb_name", "ub", "ub_source", "opt_status", "exact",
         "ratio_certified", "ratio_optimistic", "screen", "kills", "ub_starts", "exact_result",
         "exact_seconds", "seconds", "t", "reused_from")  # fmt: skip


@dataclass(frozen=True)
class Evaluation:
    """One evaluation of a campaign: a line of ``evaluations.jsonl`` (see
    :mod:`kvopt.campaign.evaluate` for what the numbers mean).

    A failed evaluation (the policy broke the model) has ``error`` and no
    numbers.  With a claim, ``score`` is what the campaign maximises:
    ``ratio_certified / bound`` for a ratio claim (then ``score_optimistic``
    too), the slack ``max lhs/rhs`` for a per-job or invariant claim (then
    ``violation``, the first broken inequality).  ``t`` is the campaign's
    cumulative seconds when it finished; ``reused_from`` the evaluation whose
    result a repeated instance copied.
    """

    index: int
    batch: int
    key: str
    n: int
    memory: int
    instance: CompactInstance
    origin: str = ""
    error: str | None = None
    bound: float | None = None
    score: float | None = None
    score_optimistic: float | None = None
    violation: Mapping[str, Any] | None = None
    area: int | None = None
    alg: int | None = None
    lb: int | None = None
    lb_name: str | None = None
    ub: int | None = None
    ub_source: str | None = None
    opt_status: OptStatus | None = None
    exact: ExactStatus | None = None
    ratio_certified: float | None = None
    ratio_optimistic: float | None = None
    screen: Screen | None = None
    kills: int | None = None
    ub_starts: tuple[int, ...] | None = None
    exact_result: ExactResult | None = None
    exact_seconds: float | None = None
    seconds: float | None = None
    t: float | None = None
    reused_from: int | None = None
    #: Keys of the line this version does not know, written back unchanged.
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def outcome(self) -> Outcome:
        if self.error is not None:
            return Outcome.SKIPPED if self.error.startswith(BUDGET_PREFIX) else Outcome.FAILED
        return Outcome.REUSED if self.reused_from is not None else Outcome.COMPLETE

    @property
    def failed(self) -> bool:
        """The policy broke the model (a finding); not an over-budget skip."""
        return self.outcome == Outcome.FAILED

    @property
    def certified(self) -> bool:
        """A usable result: no error, and a certified ratio."""
        return self.error is None and self.ratio_certified is not None

    def to_instance(self, name: str = "") -> Instance:
        return self.instance.expand(name=name)

    def bracket(self, objective: str, inst: Instance | None = None) -> Bracket | None:
        """The evaluation's bracket (:class:`kvopt.certify.Bracket`; ``None`` without one):
        its ``lb``, ``ub`` and status, with the clairvoyant schedule rebuilt from
        ``ub_starts``.  ``objective`` is the campaign's (a log line does not store it)."""
        if not self.certified or self.ub_starts is None or self.lb is None or self.ub is None:
            return None
        from ..schedule import Schedule

        inst = inst if inst is not None else self.to_instance()
        src = self.ub_source or "schedule"
        return Bracket(self.alg, self.lb, self.ub, self.opt_status or OptStatus.FEASIBLE,
                       Schedule.from_starts(inst, self.ub_starts, producer=src), src,
                       self.lb_name or "bound", objective, None,
                       self.exact_seconds or 0.0, int(self.exact == "solved"))  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """The log line (keys in the order kvopt has always written them)."""
        d: dict[str, Any] = {k: getattr(self, k) for k in _HEAD}
        d["instance"] = self.instance.to_dict()
        if self.error is not None:
            d["error"] = self.error
            d["seconds"] = self.seconds
            for k in ("t", "reused_from"):
                if getattr(self, k) is not None:
                    d[k] = getattr(self, k)
            return {**d, **self.extra}
        if self.score_optimistic is not None:
            d.update((k, getattr(self, k)) for k in _RATIO_CLAIM)
        elif self.score is not None:
            d.update((k, getattr(self, k)) for k in _PER_JOB_CLAIM)
        for k in _BODY:
            v = getattr(self, k)
            if k in ("t", "reused_from") and v is None:
                continue
            if k == "screen" and v is not None:
                v = v.to_dict()
            elif k == "ub_starts" and v is not None:
                v = list(v)
            elif k == "exact_result" and v is not None:
                v = v.to_dict()
            d[k] = v
        return {**d, **self.extra}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Evaluation:
        """Read a log line (any kvopt version's: missing keys are ``None``, unknown ones kept)."""
        known = {f.name for f in fields(cls)} - {"extra"}
        kw: dict[str, Any] = {k: v for k, v in d.items() if k in known}
        kw["instance"] = CompactInstance.from_dict(d["instance"])
        kw.setdefault("batch", 0)
        inst = kw["instance"]
        kw.setdefault("n", len(inst.prompts))
        kw.setdefault("memory", inst.memory)
        if kw.get("opt_status") is not None:
            kw["opt_status"] = OptStatus(kw["opt_status"])
        if kw.get("exact") is not None:
            kw["exact"] = ExactStatus(kw["exact"])
        if kw.get("screen") is not None:
            kw["screen"] = Screen(**kw["screen"])
        if kw.get("exact_result") is not None:
            kw["exact_result"] = ExactResult.from_dict(kw["exact_result"])
        kw["ub_starts"] = _tuple(kw.get("ub_starts"))
        extra = {k: v for k, v in d.items() if k not in known}
        return cls(**kw, extra=extra)


@dataclass(frozen=True)
class EvalTask:
    """One candidate for a worker (pickles to processes and Dask workers).

    ``threshold`` is the best score before the candidate's batch (only a
    candidate that could beat it is solved exactly); ``cached`` an exact
    result of the same job multiset from an earlier batch.  ``typed``: the
    campaign searches the typed space (SPEC §9), so the cheap upper bound
    orders job types and large candidates are screened with the LP bound.
    """

    index: int
    batch: int
    instance: CompactInstance
    origin: str
    #: the campaign's policy as it travels (:class:`~kvopt.policy.PolicyRef`): its name, its
    #: parameters and a user's code, so that local worker processes and Dask workers
    #: elsewhere run exactly what was loaded here (:func:`kvopt.usercode.install`)
    policy: PolicyRef
    policy_seed: int | None
    objective: str
    threshold: float
    exact_time_limit: float
    cached: ExactResult | None = None
    claim: str | None = None
    typed: bool = False
    #: a user's claim (SPEC §4) travels whole: workers do not have it in their registry
    user_claim: Any = None


@dataclass(frozen=True)
class CampaignHeader:
    """What defines a campaign (``campaign.json``; see :mod:`kvopt.campaign.runner`)."""

    policy: str
    params: Mapping[str, Any]
    strategy: str
    options: Mapping[str, Any]
    family: str | None
    family_params: Mapping[str, Any]
    space: Mapping[str, Any] | None
    claim: str | None
    objective: str
    seed: int
    policy_seed: int | None
    batch: int
    exact_time_limit: float
    #: a user's policy (SPEC §4): reference, kind, path and SHA-256 of its source (``None``:
    #: built-in); part of the campaign's identity, so a changed file does not resume its log
    policy_source: Mapping[str, Any] | None = None
    #: the same for a user's instance family (``--family file.py:function``)
    family_source: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Best:
    """The best certified find of a campaign."""

    ratio_certified: float
    ratio_optimistic: float
    evaluation: int
    record: str | None
    n: int
    memory: int
    opt_status: OptStatus
    seconds: float
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "ratio_certified": self.ratio_certified,
            "ratio_optimistic": self.ratio_optimistic,
            "record": self.record,
            "evaluation": self.evaluation,
            "n": self.n,
            "memory": self.memory,
            "opt_status": self.opt_status,
            "seconds": self.seconds,
        }


class Summary(Protocol):
    """A strategy's own report (e.g. the family strategy's growth table)."""

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class CampaignResult:
    """What ``kvopt search`` reports (``--json``: :meth:`to_dict`) and :func:`kvopt.search` returns.

    ``evaluations``/``exact_solves`` count the whole campaign (resumed runs
    included), ``new_evaluations`` this run; ``seconds`` is this run's wall
    time; ``best`` the best certified find (``None`` if nothing was
    evaluated); ``best_optimistic`` the largest optimistic ratio of any
    evaluation; ``stopped`` why the run ended (``budget``, ``seconds``,
    ``exhausted``, ``interrupted``); ``summary`` the strategy's own report
    (the family strategy's growth table).
    """

    policy: str
    params: Mapping[str, Any]
    strategy: str
    seed: int
    objective: str
    evaluations: int
    new_evaluations: int
    exact_solves: int
    seconds: float
    best: Best | None
    best_optimistic: float | None
    stopped: StopReason
    out: str
    errors: int = 0
    summary: Summary | None = None
    claim: str | None = None
    #: The certify stage (:func:`kvopt.campaign.runner.run_campaign`): the search's seconds and
    #: the certify stage's apart (``seconds`` is their sum), and its report (the best record's
    #: bracket before and after, :meth:`kvopt.campaign.certify.Certified.to_dict`).
    search_seconds: float | None = None
    certify_seconds: float = 0.0
    certify: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "params": dict(self.params),
            "strategy": self.strategy,
            "seed": self.seed,
            "objective": self.objective,
            "evaluations": self.evaluations,
            "new_evaluations": self.new_evaluations,
            "exact_solves": self.exact_solves,
            "seconds": round(self.seconds, 3),
            "search_seconds": round(
                self.seconds if self.search_seconds is None else self.search_seconds, 3
            ),
            "certify_seconds": round(self.certify_seconds, 3),
            "certify": None if self.certify is None else dict(self.certify),
            "best": None if self.best is None else self.best.to_dict(),
            "best_optimistic": self.best_optimistic,
            "stopped": self.stopped,
            "out": self.out,
            "errors": self.errors,
            "claim": self.claim,
            "summary": None if self.summary is None else self.summary.to_dict(),
        }

    def __repr__(self) -> str:
        b = self.best
        best = (
            f"best certified {b.ratio_certified:.4f} (optimistic {b.ratio_optimistic:.4f}, "
            f"n={b.n}, M={b.memory}, {b.record})"
            if b
            else "nothing found"
        )
        return (
            f"CampaignResult({self.policy}/{self.strategy}, seed {self.seed}: "
            f"{self.evaluations} evaluations, {self.exact_solves} exact solves, "
            f"{self.seconds:.1f}s, {StopReason(self.stopped).describe()}; {best})"
        )

    def record(self):
        """The best record (:class:`kvopt.record.Record`), read from disk."""
        from ..record import load_record

        if self.best is None or self.best.record is None:
            return None
        return load_record(self.best.record)

    def history(self):
        """Best-so-far curves from the log (see :func:`kvopt.campaign.log.read_history`)."""
        from .log import read_history

        return read_history(self.out)


__all__ = [
    "Best",
    "CampaignHeader",
    "CampaignResult",
    "CompactInstance",
    "EvalTask",
    "Evaluation",
    "ExactResult",
    "ExactStatus",
    "OptStatus",
    "Outcome",
    "Screen",
    "StopReason",
    "Summary",
]
