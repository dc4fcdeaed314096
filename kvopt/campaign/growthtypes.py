"""The results of a growth sweep (SPEC §9, ``kvopt grow --json``): points, directions, sweeps.

:func:`kvopt.campaign.growth.grow` builds them; they are re-exported there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .families import GrowthVerdict

# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class GrowthPoint:
    """One point of a direction: the instance at ``factor`` (of the direction's axis: M's factor,
    or n's when M is fixed), its bounds and ratios, its record."""

    factor: float
    n: int
    memory: int
    alg: int
    ub: int
    lb: int
    ratio_certified: float
    ratio_optimistic: float
    opt_status: str
    record: str
    #: The point's bracket (:meth:`kvopt.certify.Bracket.to_dict`: lb, ub, sources, solving).
    bracket: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class GrowthDirection:
    """A direction's points, exponent and verdict; ``stopped`` says why it ended early."""

    name: str
    steps: tuple[GrowthPoint, ...]
    exponent: float | None
    verdict: GrowthVerdict
    stopped: str | None = None
    certified: bool = False  # screened in: its points got exact solves
    vector: dict[str, float] = field(default_factory=dict)
    axis: str = "memory"  # what ``factor`` measures: "memory", "n" or "step"
    limit: float | None = None  # when bounded: the limit estimate …
    limit_spread: float | None = None  # … its spread …
    rule: str | None = None  # … and the rule that said bounded ("change", "geometric", "upper",
    #   "peak")

    def to_dict(self) -> dict[str, Any]:
        d = {"name": self.name, "vector": self.vector, "axis": self.axis,
             "steps": [p.to_dict() for p in self.steps],
             "exponent": self.exponent, "verdict": self.verdict}  # fmt: skip
        if self.verdict == GrowthVerdict.BOUNDED:
            d.update(limit=self.limit, limit_spread=self.limit_spread, bounded_rule=self.rule)
        if self.stopped:
            d["stopped"] = self.stopped
        return d


@dataclass(frozen=True)
class GrowthResult:
    """A sweep (``kvopt grow --json``: :meth:`to_dict`, the keys of SPEC §4)."""

    policy: str
    directions: tuple[GrowthDirection, ...]
    best_direction: str | None
    verdict: GrowthVerdict
    source: str = ""
    out: str = ""
    plot: str | None = None
    seconds: float = 0.0
    exact_solves: int = 0
    finder: dict[str, Any] | None = None  # what the direction finder probed, when it ran
    certify_seconds: float = 0.0  # the certify stage's seconds (in ``seconds`` too)
    extra: dict[str, Any] = field(default_factory=dict)
    #: a user's policy (SPEC §4): reference, kind, path, SHA-256 of its source; ``None``: built-in
    policy_source: dict[str, Any] | None = None
    #: the ``--seconds`` budget of the whole sweep (``None``: none), where it ran out when it
    #: did (``stopped``), and the points taken from an earlier run into the same folder
    seconds_budget: float | None = None
    stopped: str | None = None
    resumed_points: int = 0

    def to_dict(self) -> dict[str, Any]:
        d = {"policy": self.policy, "directions": [d.to_dict() for d in self.directions],
             "best_direction": self.best_direction, "verdict": self.verdict,
             "seconds_budget": self.seconds_budget, "resumed_points": self.resumed_points}  # fmt: skip
        if self.stopped is not None:
            d["stopped"] = self.stopped
        if self.finder is not None:
            d["finder"] = self.finder
        if self.policy_source is not None:
            d["policy_source"] = self.policy_source
        return d

    def direction(self, name: str) -> GrowthDirection:
        for d in self.directions:
            if d.name == name:
                return d
        raise KeyError(name)

    def family(self) -> str:
        """The best direction in words: its certified ratios against the factor."""
        if self.best_direction is None:
            return "no direction"
        d = self.direction(self.best_direction)
        pts = ", ".join(f"x{p.factor:g}: n={p.n} M={p.memory} {p.ratio_certified:.3g}"
                        for p in d.steps)  # fmt: skip
        e = "-" if d.exponent is None else f"{d.exponent:.3f}"
        lim = (f", limit {d.limit:.4g} ± {d.limit_spread:.2g}"
               if d.verdict == GrowthVerdict.BOUNDED and d.limit is not None else "")  # fmt: skip
        return (
            f"direction {d.name} ({d.verdict}, exponent {e} per doubling of {d.axis}{lim}): {pts}"
        )

    def to_dataframe(self):
        """One row per point (needs pandas)."""
        import pandas as pd

        return pd.DataFrame([{"direction": d.name, **p.to_dict()} for d in self.directions
                             for p in d.steps])  # fmt: skip

    def __repr__(self) -> str:
        return f"GrowthResult({self.policy}: {self.verdict}; best {self.family()})"


__all__ = ["GrowthDirection", "GrowthPoint", "GrowthResult"]
