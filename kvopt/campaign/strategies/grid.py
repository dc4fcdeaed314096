"""Strategies over fixed grids: a construction's parameter grid (with growth exponents) and
every member of a small space."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ...errors import InputError
from ..types import Evaluation, OptStatus
from .base import Proposal, SearchContext, _boolean, _in_range, _options


@dataclass(frozen=True)
class FamilyPoint:
    """One evaluated grid point of the family strategy."""

    params: Mapping[str, Any]
    n: int
    memory: int
    ratio_certified: float | None
    ratio_optimistic: float | None
    opt_status: OptStatus | None

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class GrowthFit:
    """The log–log slope of the ratios against one parameter, the others ``fixed``;
    ``points`` are ``(value, certified, optimistic)``."""

    fixed: Mapping[str, str]
    points: tuple[tuple[float, float, float], ...]
    exponent_certified: float
    exponent_optimistic: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"fixed": dict(self.fixed), "points": [list(p) for p in self.points],
                "exponent_certified": self.exponent_certified,
                "exponent_optimistic": self.exponent_optimistic}  # fmt: skip


@dataclass(frozen=True)
class ParamGrowth:
    param: str
    fits: tuple[GrowthFit, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"param": self.param, "fits": [f.to_dict() for f in self.fits]}


@dataclass(frozen=True)
class FamilySummary:
    """The family strategy's report: every point, and the growth fits per parameter."""

    points: tuple[FamilyPoint, ...]
    growth: tuple[ParamGrowth, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"points": [p.to_dict() for p in self.points],
                "growth": [g.to_dict() for g in self.growth]}  # fmt: skip


@dataclass(frozen=True)
class GridSummary:
    """The exhaustive strategy's report: the grid's size and whether job orders count."""

    grid_size: int
    ordered: bool

    def to_dict(self) -> dict[str, Any]:
        return {"grid_size": self.grid_size, "ordered": self.ordered}


#: Default grids of the ``family`` strategy (list-valued ``--param``s replace them).
FAMILY_GRIDS: dict[str, dict[str, list[Any]]] = {
    "prop1": {"L": [2, 3, 4, 5, 6, 7, 8], "case": [1, 2]},
    "two-point": {"memory": [16, 32, 64, 128, 256], "short": [8, 16, 32, 64]},
    "random": {"n": [4, 6, 8, 10, 12]},
    "large": {"n": [4, 6, 8, 10, 12]},
    "prompt-heavy": {"n": [4, 6, 8, 10, 12]},
    "response-heavy": {"n": [4, 6, 8, 10, 12]},
    "identical-prompt": {"n": [4, 6, 8, 10, 12]},
}


def fit_exponent(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of ``log y`` against ``log x`` (``None`` with < 2 distinct x)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0]
    if len({p[0] for p in pts}) < 2:
        return None
    lx = np.array([p[0] for p in pts])
    ly = np.array([p[1] for p in pts])
    return float(np.polyfit(lx, ly, 1)[0])


class FamilyStrategy:
    """Every point of a parameter grid of a construction, then growth exponents.

    List-valued ``--param`` (``L=2,3,4``) span the grid (default grids in
    :data:`FAMILY_GRIDS`); scalar ones are fixed.  Option ``seeds`` (1)
    draws several instances per point for random families.  Points outside
    the policy's class are skipped (an error if none is inside).  The summary
    reports, for every numeric parameter taking at least three values and every
    setting of the others, the least-squares exponent of the certified ratio
    against it (log–log) with the points.
    """

    name = "family"

    def __init__(self, ctx: SearchContext, options: Mapping[str, Any]):
        from ...generators import GENERATORS, generate

        opts = _options(self.name, options, {"seeds": 1})
        _in_range(self.name, "seeds", opts["seeds"], 1, 10**6, integer=True)
        if not ctx.family:
            raise InputError(
                "strategy family needs --family (e.g. prop1, two-point)", source="--family"
            )
        gen = GENERATORS[ctx.family]
        fixed, grid = {}, {}
        for k, v in FAMILY_GRIDS.get(ctx.family, {}).items():
            grid[k] = list(v)
        for k, v in ctx.family_params.items():
            if isinstance(v, list | tuple):
                grid[k] = list(v)
            else:
                fixed[k] = v
                grid.pop(k, None)
        if not grid:
            raise InputError(
                f"strategy family needs a list-valued --param for family {ctx.family!r} "
                f"(e.g. --param {next(iter(gen.defaults), 'n')}=4,8,16)",
                source="--param",
            )
        self.ctx = ctx
        self.keys = list(grid)
        points = []
        import itertools

        for combo in itertools.product(*(grid[k] for k in self.keys)):
            params = {**fixed, **dict(zip(self.keys, combo))}
            for rep in range(int(opts["seeds"])):
                inst = generate(ctx.family, ctx.seed + rep, **params)
                rule = ctx.rule(inst)
                if rule is None:
                    points.append((params, rep, inst))
                else:
                    last_rule = rule
        if not points:
            raise InputError(
                f"no point of the family {ctx.family!r} grid is in policy {ctx.policy!r}'s class "
                f"({last_rule})",
                source="--family",
            )
        self.points = points
        self.pos = 0
        self.results: list[tuple[dict[str, Any], Evaluation]] = []
        self.exhausted = False

    def propose(self, batch: int, size: int) -> list[Proposal]:
        chunk = self.points[self.pos : self.pos + size]
        self.pos += len(chunk)
        self.exhausted = self.pos >= len(self.points)
        return [
            Proposal(
                inst,
                "family " + ",".join(f"{k}={v}" for k, v in params.items()),
                {"params": params, "rep": rep},
            )  # fmt: skip
            for params, rep, inst in chunk
        ]

    def tell(self, proposals, results) -> None:
        for p, r in zip(proposals, results):
            self.results.append((dict(p.info["params"]), r))

    def summary(self) -> FamilySummary:
        rows = [
            FamilyPoint(params, r.n, r.memory, r.ratio_certified, r.ratio_optimistic, r.opt_status)
            for params, r in self.results
        ]
        growth = []
        for key in self.keys:
            groups: dict[tuple, list[tuple[float, float, float]]] = {}
            for params, r in self.results:
                if r.ratio_certified is None or not isinstance(params[key], int | float):
                    continue
                other = tuple(sorted((k, str(v)) for k, v in params.items() if k != key))
                groups.setdefault(other, []).append(
                    (float(params[key]), r.ratio_certified, r.ratio_optimistic)
                )
            fits = []
            for other, pts in groups.items():
                pts.sort()
                if len({p[0] for p in pts}) < 3:  # a growth exponent needs three values at least
                    continue
                e_cert = fit_exponent([p[0] for p in pts], [p[1] for p in pts])
                e_opt = fit_exponent([p[0] for p in pts], [p[2] for p in pts])
                if e_cert is not None:
                    fits.append(GrowthFit(dict(other), tuple(pts), e_cert, e_opt))
            if fits:
                growth.append(ParamGrowth(key, tuple(fits)))
        return FamilySummary(tuple(rows), tuple(growth))


# --------------------------------------------------------------------------- exhaustive


class ExhaustiveStrategy:
    """Every member of the space with all jobs at round 0, in :meth:`Space.enumerate` order.

    Size the grid with the space (``--n 1:3 --memory 4:10 --max-response 6``);
    option ``ordered`` (true) lists every job order (policies break ties by
    index), ``ordered=false`` each multiset once.  The campaign ends when the
    grid is exhausted; the best certified ratio is then the exact worst case
    of the class (screening only skips the exact solve of candidates that
    cannot beat the best).
    """

    name = "exhaustive"

    def __init__(self, ctx: SearchContext, options: Mapping[str, Any]):
        opts = _options(self.name, options, {"ordered": True})
        _boolean(self.name, "ordered", opts["ordered"])
        if ctx.family:
            raise InputError(
                "strategy exhaustive enumerates the space, not a family", source="--family"
            )
        self.ctx = ctx
        self.ordered = bool(opts["ordered"])
        self.total = ctx.space.count(self.ordered)
        self._it = ctx.space.enumerate(self.ordered)
        self.exhausted = False

    def propose(self, batch: int, size: int) -> list[Proposal]:
        out = []
        while len(out) < size:
            try:
                inst = next(self._it)
            except StopIteration:
                self.exhausted = True
                break
            if self.ctx.rule(inst) is None:
                out.append(Proposal(inst, "grid"))
        return out

    def tell(self, proposals, results) -> None:
        pass

    def summary(self) -> GridSummary:
        return GridSummary(self.total, self.ordered)


__all__ = [
    "FAMILY_GRIDS",
    "ExhaustiveStrategy",
    "FamilyPoint",
    "FamilyStrategy",
    "FamilySummary",
    "GridSummary",
    "GrowthFit",
    "ParamGrowth",
    "fit_exponent",
]
