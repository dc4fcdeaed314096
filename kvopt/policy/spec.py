"""A registry entry: :class:`Param` (one typed parameter) and :class:`PolicySpec` (SPEC §6).

Built-in policies are registered in :data:`kvopt.policy.POLICIES`; a user's policy class gets
its entry from :func:`kvopt.policy.user.spec_from_class` (SPEC §4).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError, did_you_mean
from ..instance import Instance
from ..params import convert_value
from ..space import Space
from ..usercode import UserCode


@dataclass(frozen=True)
class Param:
    """One policy parameter: typed default, help text, optional range/choices.

    An **optional** parameter has ``default=None`` (unset: the help text says what the
    policy does then, e.g. ``svf-1bit``'s ``T`` stands for ``M``) and names its value type
    in ``kind``; a value given is converted and range-checked as for a typed default, and
    ``None`` stays unset.
    """

    name: str
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Any, ...] | None = None
    #: the value type of an optional parameter (``default=None``); else the default's type
    kind: type | None = None

    def __post_init__(self) -> None:
        if self.default is None and self.kind not in (bool, int, float, str):
            raise TypeError(f"Param {self.name!r}: default None needs kind bool, int, float or str")

    def convert(self, value: Any) -> Any:
        where = f"--param {self.name}"
        if value is None and self.default is None:
            return None  # an optional parameter left unset
        typed = self.default if self.default is not None else self.kind()  # type: ignore[misc]
        if isinstance(value, str) and not isinstance(typed, str):
            value = convert_value(self.name, value, typed)
        elif isinstance(typed, bool):
            if not isinstance(value, bool):
                raise InputError(f"must be true or false, got {value!r}", source=where)
        elif isinstance(typed, int):
            if isinstance(value, bool) or not isinstance(value, int):
                raise InputError(f"must be an integer, got {value!r}", source=where)
        elif isinstance(typed, float):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputError(f"must be a number, got {value!r}", source=where)
            value = float(value)
        if self.minimum is not None and value < self.minimum:
            raise InputError(f"must be >= {self.minimum}, got {value!r}", source=where)
        if self.maximum is not None and value > self.maximum:
            raise InputError(f"must be <= {self.maximum}, got {value!r}", source=where)
        if self.choices is not None and value not in self.choices:
            raise InputError(
                f"must be one of {', '.join(map(str, self.choices))}, got {value!r}", source=where
            )
        return value

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"default": self.default, "help": self.help}
        if self.default is None:  # optional: unset by default, the type of a value given
            d["type"] = self.kind.__name__  # type: ignore[union-attr]
        if self.minimum is not None:
            d["minimum"] = self.minimum
        if self.maximum is not None:
            d["maximum"] = self.maximum
        if self.choices is not None:
            d["choices"] = list(self.choices)
        return d


@dataclass(frozen=True)
class PolicySpec:
    """A registry entry (see the module docstring)."""

    name: str
    factory: Callable[[dict[str, Any], int | None], Any]
    clairvoyant: bool
    source: str
    summary: str
    applies_to: str
    params: tuple[Param, ...] = ()
    check: Callable[[Instance, dict[str, Any]], str | None] | None = None
    seeded: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)
    #: whether the policy accepts jobs arriving after round 0 (``False``: offline)
    arrivals: bool = True
    #: :class:`~kvopt.space.Space` fields that keep the default search space in the class
    search_space: Mapping[str, Any] = field(default_factory=dict)
    #: where a user's policy comes from (SPEC §4 references); ``None`` for a built-in
    code: UserCode | None = None
    #: what the policy decides from, when not what ``clairvoyant`` says: ``"prediction-based"``
    #: (a clairvoyant type that plans from predictions only; issue 69); ``None``: from the type
    information: str | None = None

    @property
    def builtin(self) -> bool:
        return self.code is None

    @property
    def slug(self) -> str:
        """A file-name-safe label: the name of a built-in, the class name of a user's policy."""
        if self.code is None:
            return self.name
        import re

        return re.sub(r"[^\w.-]", "_", self.code.attr) or "policy"

    @property
    def knowledge(self) -> str:
        """``clairvoyant``, ``prediction-based`` or ``non-clairvoyant`` (``kvopt policies``)."""
        if self.information:
            return self.information
        return "clairvoyant" if self.clairvoyant else "non-clairvoyant"

    @property
    def policy_class(self) -> type:
        """The class the factory builds (imported on first use)."""
        return self.factory.policy_class()  # type: ignore[attr-defined]

    @property
    def kills(self) -> bool:
        """Whether the policy may kill attempts: the ``kills`` attribute its class declares
        (``False``: it never kills, every attempt completes — non-preemptive)."""
        return bool(self.policy_class.kills)

    @property
    def predictions(self) -> bool:
        """Whether the policy plans with ``predicted_response`` and must decide from the
        predictions alone until a completion reveals a length (SPEC §10.1): the
        ``predictions`` attribute its class declares (the conformance battery checks it)."""
        return bool(getattr(self.policy_class, "predictions", False))

    @property
    def claims(self) -> tuple[str, ...]:
        """The SPEC §7 claims that name this policy (from the one registry, :mod:`kvopt.claims`)."""
        from ..claim import claims_for_policy

        return claims_for_policy(self.name)

    def resolve_params(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        """Defaults merged with ``params`` (strings converted); unknown keys are an error."""
        known = {p.name: p for p in self.params}
        out = {p.name: p.default for p in self.params}
        for key, value in (params or {}).items():
            if key not in known:
                allowed = ", ".join(known) or "none"
                raise InputError(
                    f"unknown parameter {key!r} of policy {self.name!r} (allowed: {allowed})"
                    + did_you_mean(key, known),
                    source=f"--param {key}",
                )
            try:
                out[key] = known[key].convert(value)
            except InputError as err:
                if self.code is None:
                    raise
                # a user's policy: the one line names the reference too (SPEC §4)
                raise InputError(f"{err.rule} (a parameter of policy {self.name!r})",
                                 source=err.source) from None  # fmt: skip
        return out

    def check_applies(self, instance: Instance, params: Mapping[str, Any] | None = None) -> None:
        """Raise :class:`InputError` (naming ``--policy`` and the rule) outside the class."""
        if self.check is None:
            return
        rule = self.check(instance, self.resolve_params(params))
        if rule:
            raise InputError(
                f"policy {self.name!r} applies to {self.applies_to}: {rule}", source="--policy"
            )

    def default_space(self, *, n_max: int = 8, memory_max: int = 48) -> Space:
        """A default space inside the policy's class, for search (``kvopt search``).

        Up to ``n_max`` jobs and memory ``memory_max``; responses are capped at 16
        so that exact Opt stays cheap (widen with :meth:`Space.replace`).  The
        class's own restrictions (:attr:`search_space`) apply, e.g. ``rect``'s
        prompt-heavy small jobs; a policy that accepts arrivals gets them.
        """
        space = Space(n_min=2, n_max=n_max, memory_min=8, memory_max=memory_max, max_response=16)
        if self.search_space:
            space = space.replace(**self.search_space)
        if self.arrivals:
            space = space.replace(arrivals=True, max_arrival=16)
        return space

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "clairvoyant": self.clairvoyant,
            "knowledge": self.knowledge,
            "params": {p.name: p.to_dict() for p in self.params},
            "source": self.source,
            "claims": list(self.claims),
            "applies_to": self.applies_to,
            "seeded": self.seeded,
            "kills": self.kills,
            "predictions": self.predictions,
            "summary": self.summary,
            **({"reference": self.code.to_dict()} if self.code is not None else {}),
        }


__all__ = ["Param", "PolicySpec"]
