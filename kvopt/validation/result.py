"""What validation reports: a :class:`Verdict` per claim with its evidence (:class:`ClaimVerdict`),
and all of one run (:class:`ValidationResult`, ``validation.json``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..claim import RATIO, ClaimKind
from .scope import Scope


class Verdict(StrEnum):
    """The verdict on a claim (its value is the string in ``validation.json``)."""

    __repr__ = str.__repr__  # shows as its string, as before the enum

    HOLDS = "holds"
    VIOLATED = "violated"
    REPRODUCED = "reproduced"
    INCONCLUSIVE = "inconclusive"


VERDICTS = tuple(v.value for v in Verdict)


@dataclass(frozen=True)
class ClaimVerdict:
    """The verdict on one claim, with its evidence (``kvopt validate --json``: :meth:`to_dict`)."""

    id: str
    verdict: Verdict
    bound: float | str | None
    bound_text: str
    worst_certified_ratio: float | None
    worst_optimistic_ratio: float | None
    instances: int
    exact_solves: int
    seconds: float
    text: str
    record: str | None = None
    kind: ClaimKind = RATIO
    source: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)
    #: The bracket of ``record`` (the record deciding the verdict; :mod:`kvopt.certify`).
    bracket: Mapping[str, Any] | None = None
    #: The record of the instance with the worst certified ratio (:mod:`kvopt.validation.worst`).
    worst_record: str | None = None
    #: What the verdict rests on: the space searched, the evaluations, the seconds
    #: (:mod:`kvopt.validation.scope`); ``holds`` means "nothing found in this scope".
    scope: Scope | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", Verdict(self.verdict))
        object.__setattr__(self, "kind", ClaimKind(self.kind))
        if isinstance(self.scope, dict):
            object.__setattr__(self, "scope", Scope.from_dict(self.scope))

    def to_dict(self) -> dict[str, Any]:
        d = {
            "id": self.id,
            "verdict": self.verdict,
            "bound": self.bound,
            "bound_text": self.bound_text,
            "worst_certified_ratio": self.worst_certified_ratio,
            "worst_optimistic_ratio": self.worst_optimistic_ratio,
            "instances": self.instances,
            "exact_solves": self.exact_solves,
            "seconds": round(self.seconds, 2),
            "text": self.text,
            "kind": self.kind,
            "source": self.source,
            "data": self.data,
            "scope": self.scope.to_dict() if self.scope is not None else None,
        }
        if self.record is not None or self.verdict == Verdict.VIOLATED:
            d["record"] = self.record
        if self.bracket is not None:
            d["bracket"] = dict(self.bracket)
        if self.worst_record is not None:
            d["worst_record"] = self.worst_record
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ClaimVerdict:
        """The inverse of :meth:`to_dict` (e.g. to redraw a report from ``validation.json``)."""
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})

    def __repr__(self) -> str:
        w = "-" if self.worst_certified_ratio is None else f"{self.worst_certified_ratio:.4g}"
        return f"ClaimVerdict({self.id}: {self.verdict}, worst certified {w} vs bound {self.bound_text})"


@dataclass(frozen=True)
class ValidationResult:
    """All verdicts of one ``kvopt validate`` run."""

    claims: tuple[ClaimVerdict, ...]
    seed: int
    quick: bool
    seconds: float
    out: str
    report: str | None = None
    #: The effort by its numbers (:func:`kvopt.validation.effort.effort_dict`; ``None`` when
    #: read from an older file).
    effort: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "claims": [c.to_dict() for c in self.claims],
            "seed": self.seed,
            "quick": self.quick,
            "effort": dict(self.effort) if self.effort is not None else None,
            "seconds": round(self.seconds, 2),
            "out": self.out,
            "report": self.report,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ValidationResult:
        """The inverse of :meth:`to_dict`: ``ValidationResult.from_dict(json.load(open(
        "OUT/validation.json")))`` and :func:`kvopt.validation.report.write_report` redraw a report."""
        return cls(
            claims=tuple(ClaimVerdict.from_dict(c) for c in d["claims"]),
            seed=d["seed"], quick=d["quick"], seconds=d["seconds"], out=d["out"],
            report=d.get("report"), effort=d.get("effort"),
        )  # fmt: skip

    def verdict(self, claim_id: str) -> ClaimVerdict:
        for c in self.claims:
            if c.id == claim_id:
                return c
        raise KeyError(claim_id)

    def table(self) -> str:
        """The verdicts as a Markdown table."""
        return format_table(self.claims)

    def to_dataframe(self):
        """The verdicts as a pandas DataFrame (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(
            [{k: v for k, v in c.to_dict().items() if k != "data"} for c in self.claims]
        )

    def __repr__(self) -> str:
        counts: dict[str, int] = {}
        for c in self.claims:
            counts[c.verdict] = counts.get(c.verdict, 0) + 1
        summary = ", ".join(f"{v} {k}" for k, v in counts.items())
        return f"ValidationResult({len(self.claims)} claims: {summary}; {self.seconds:.0f}s)"


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def scope_text(c: ClaimVerdict) -> str:
    """The verdict's scope in words (``-`` when it has none, e.g. read from an older file)."""
    return c.scope.text() if c.scope is not None else "-"


def format_table(claims: Sequence[ClaimVerdict]) -> str:
    head = (
        "| claim | verdict | scope (what was searched) | bound | worst certified | worst optimistic "
        "| instances | exact solves | seconds |\n|---|---|---|---|---|---|---|---|---|"
    )
    rows = [
        f"| `{c.id}` | **{c.verdict}** | {scope_text(c)} | {c.bound_text} | "
        f"{fmt(c.worst_certified_ratio)} | {fmt(c.worst_optimistic_ratio)} | {c.instances} | "
        f"{c.exact_solves} | {c.seconds:.1f} |"
        for c in claims
    ]
    named = [f"- `{c.id}`: {c.worst_record}" for c in claims if c.worst_record]
    if named:  # the instance behind each "worst certified" figure, saved as a record
        rows += ["", "Worst certified ratio on the instance of:", *named]
    return "\n".join([head, *rows])


__all__ = ["VERDICTS", "ClaimVerdict", "ValidationResult", "Verdict", "fmt", "format_table",
           "scope_text"]  # fmt: skip
