"""What every search strategy shares: proposals, the context, the protocol, sampling helpers."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

from ...errors import InputError
from ...instance import Instance
from ...space import Space
from ..types import Evaluation, Summary


@dataclass(frozen=True)
class Proposal:
    """A candidate: the instance, where it comes from (``origin``) and strategy data (``info``)."""

    instance: Instance
    origin: str
    info: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class SearchContext:
    """What a strategy knows: the class, the space to draw from, the family, the seed."""

    policy: str
    params: Mapping[str, Any]
    space: Space
    rule: Callable[[Instance], str | None]
    seed: int
    family: str | None = None
    family_params: Mapping[str, Any] = field(default_factory=dict)

    def rng(self, batch: int, tag: int = 0) -> np.random.Generator:
        return np.random.default_rng([self.seed, batch, tag])


class Strategy(Protocol):
    """The plug-in protocol (see the module docstring)."""

    name: ClassVar[str]
    exhausted: bool

    def propose(self, batch: int, size: int) -> list[Proposal]: ...

    def tell(self, proposals: list[Proposal], results: list[Evaluation]) -> None: ...

    def summary(self) -> Summary | None: ...


def score(result: Evaluation) -> float:
    """What strategies maximise: the ``score`` (validation) or else the certified ratio.

    ``-inf`` for a failed evaluation (the policy broke the model).
    """
    r = result.score if result.score is not None else result.ratio_certified
    return -math.inf if r is None else float(r)


# --------------------------------------------------------------------------- helpers


def _family_instance(ctx: SearchContext, rng: np.random.Generator, params=None) -> Instance | None:
    """One instance of the context's family (fresh generator seed), if it lies in the class."""
    from ...generators import generate

    seed = int(rng.integers(0, 2**31 - 1))
    inst = generate(ctx.family, seed, **dict(params if params is not None else ctx.family_params))
    return inst if ctx.rule(inst) is None else None


def _sample(ctx: SearchContext, rng: np.random.Generator, tries: int = 200) -> Proposal:
    """A fresh member: from the family if one is given, else from the space."""
    last = None
    for _ in range(tries):
        if ctx.family:
            inst = _family_instance(ctx, rng)
            if inst is not None:
                return Proposal(inst, f"family {ctx.family}")
            continue
        inst = ctx.space.sample(rng)
        last = ctx.rule(inst)
        if last is None:
            return Proposal(inst, "sample")
    what = f"family {ctx.family!r}" if ctx.family else f"space ({ctx.space.describe()})"
    raise InputError(
        f"the {what} yields no instance of policy {ctx.policy!r}'s class"
        + (f" ({last})" if last else ""),
        source="--family" if ctx.family else "--policy",
    )


def probe(ctx: SearchContext) -> None:
    """Fail early (:class:`InputError`) when the class is empty for this family/space."""
    _sample(ctx, ctx.rng(0, 99), tries=60)


def _no_options(name: str, options: Mapping[str, Any]) -> None:
    if options:
        raise InputError(f"strategy {name!r} takes no options, got {', '.join(options)}",
                         source="--option")  # fmt: skip


def _options(name: str, options: Mapping[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    from ...params import convert_value

    out = dict(defaults)
    for k, v in options.items():
        if k not in defaults:
            raise InputError(
                f"unknown option of strategy {name!r} (known: {', '.join(defaults)})",
                source=f"--option {k}",
            )
        out[k] = convert_value(k, v, defaults[k], option="--option") if isinstance(v, str) else v
    return out


def _in_range(name: str, key: str, value: Any, low: float, high: float, *,
              integer: bool = False, open_low: bool = False) -> None:  # fmt: skip
    """Range-check one option of strategy ``name`` (as the annealing's own check): a number
    (an integer when ``integer``) in ``[low, high]`` (``(low, high]`` when ``open_low``),
    else :class:`InputError` naming ``--option``."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value == value
    if ok and integer:
        ok = float(value).is_integer()
    if ok:
        ok = (low < value if open_low else low <= value) and value <= high
    if not ok:
        what = "an integer" if integer else "a number"
        span = f"{'(' if open_low else '['}{low}, {high}]"
        raise InputError(f"{name} option {key} must be {what} in {span}, got {value!r}",
                         source="--option")  # fmt: skip


def _boolean(name: str, key: str, value: Any) -> bool:
    """A boolean option of strategy ``name`` (``true``/``false``, 1/0), else :class:`InputError`."""
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise InputError(f"{name} option {key} must be true or false, got {value!r}",
                     source="--option")  # fmt: skip


__all__ = ["Proposal", "SearchContext", "Strategy", "probe", "score"]
