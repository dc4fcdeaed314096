"""A policy named once: :class:`ResolvedPolicy`, :func:`resolve_policy` and :class:`PolicyRef`.

A policy is named by text — a built-in name, a reference (SPEC §4), either with
``[KEY=VALUE;…]`` — or (API) by its class.  :func:`resolve_policy` turns the name and
its parameters into one frozen :class:`ResolvedPolicy`: the registry entry (with the
factory and, for a user's policy, the code it was loaded from), every parameter typed
with its default, and the label the name was given by.  A command, a comparison, a
campaign and a record resolve once and pass this object on, as pytest resolves a
plugin and Optuna a sampler once; every public function still takes the text forms and
resolves them here.  (Resolving a user's reference reads and hashes its file.)

A registry entry holds closures, so a :class:`ResolvedPolicy` does not travel to worker
processes: :meth:`ResolvedPolicy.shipped` gives the :class:`PolicyRef` that does (the
name, the parameters given, and a user's code with its source), and
:meth:`PolicyRef.resolve` installs that code and resolves it again in the worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..errors import InputError
from ..instance import Instance
from ..usercode import UserCode, install
from .spec import PolicySpec


@dataclass(frozen=True)
class ResolvedPolicy:
    """A registry entry with its parameters, resolved once (see the module docstring).

    ``params`` holds every parameter (typed, defaults merged); ``given`` the keys the
    caller gave, with their typed values (what a campaign stores); ``label`` the text
    that named it (``pack-and-schedule[packer=nfdh]``; the name itself when it had no
    brackets), which a comparison's row keeps.
    """

    spec: PolicySpec
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    given: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    label: str = ""

    @property
    def name(self) -> str:
        """The built-in name or the reference (without parameters)."""
        return self.spec.name

    @property
    def code(self) -> UserCode | None:
        """Where a user's policy comes from (``None`` for a built-in)."""
        return self.spec.code

    @property
    def seeded(self) -> bool:
        return self.spec.seeded

    @property
    def clairvoyant(self) -> bool:
        return self.spec.clairvoyant

    @property
    def slug(self) -> str:
        return self.spec.slug

    def rule(self, instance: Instance) -> str | None:
        """The rule of the policy's class that ``instance`` breaks, or ``None``."""
        return self.spec.check(instance, dict(self.params)) if self.spec.check else None

    def check_applies(self, instance: Instance) -> None:
        """Raise :class:`InputError` (naming ``--policy`` and the rule) outside the class."""
        rule = self.rule(instance)
        if rule:
            raise InputError(
                f"policy {self.name!r} applies to {self.spec.applies_to}: {rule}",
                source="--policy",
            )

    def make(self, seed: int | None = None):
        """A fresh policy object with these parameters (``seed`` for a seeded policy)."""
        if self.spec.seeded and seed is None:
            raise InputError(f"policy {self.name!r} is randomised and needs a seed",
                             source="--seed")  # fmt: skip
        pol = self.spec.factory(dict(self.params), seed)
        pol.params = dict(self.params)
        if self.spec.code is not None:
            pol.name = self.spec.name  # errors name the reference
        return pol

    def with_params(self, params: Mapping[str, Any] | None) -> ResolvedPolicy:
        """This policy with ``params`` given on top of its own (no file is read again)."""
        if not params:
            return self
        return _resolved(self.spec, {**self.given, **dict(params)}, self.label or self.name)

    def shipped(self) -> PolicyRef:
        """What a worker process receives (picklable; a user's code with its source)."""
        code = self.spec.code.shippable() if self.spec.code is not None else None
        return PolicyRef(self.name, dict(self.given), code)


@dataclass(frozen=True)
class PolicyRef:
    """A policy as it travels to a worker: the name, the parameters given, a user's code.

    :meth:`resolve` installs the code (:func:`kvopt.usercode.install`: exactly the
    bytes the campaign loaded, even where the file does not exist) and resolves.
    """

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    code: UserCode | None = None

    def resolve(self) -> ResolvedPolicy:
        """The policy, resolved once per process: a worker that evaluates many tasks of a
        campaign reads and hashes a user's file once, not once per task (the cache is keyed
        by the code's SHA-256, so other code under the same name is resolved anew)."""
        sha = self.code.sha256 if self.code is not None else None
        key = (self.name, repr(sorted(self.params.items())), sha)
        hit = _RESOLVED.get(key) if sha is not None else None
        if hit is not None:
            return hit
        if self.code is not None:
            install(self.code)
        ref = resolve_policy(self.name, self.params)
        if sha is not None:
            if len(_RESOLVED) >= 16:  # a worker reused across many campaigns
                _RESOLVED.clear()
            _RESOLVED[key] = ref
        return ref


#: (name, parameters, SHA-256) → the user's policy as :meth:`PolicyRef.resolve` resolved it
_RESOLVED: dict[tuple[str, str, str], ResolvedPolicy] = {}


def _resolved(spec: PolicySpec, given: Mapping[str, Any], label: str) -> ResolvedPolicy:
    resolved = spec.resolve_params(given)
    typed = {k: resolved[k] for k in given}
    return ResolvedPolicy(spec, MappingProxyType(resolved), MappingProxyType(typed), label)


def resolve_policy(
    policy: str | type | PolicySpec | ResolvedPolicy,
    params: Mapping[str, Any] | None = None,
) -> ResolvedPolicy:
    """``policy`` with ``params``, resolved once (see the module docstring).

    ``policy`` is a name or a reference, either with ``[KEY=VALUE;…]`` (a key given both
    there and in ``params`` is an error), a class (API; it stands for its reference), a
    :class:`~kvopt.policy.PolicySpec`, or a :class:`ResolvedPolicy` (returned as it is,
    or with ``params`` on top).  Unknown names, bad references and unknown or mistyped
    parameters are :class:`~kvopt.errors.InputError`.
    """
    from . import get_policy, parse_policy

    if isinstance(policy, ResolvedPolicy):
        return policy.with_params(params)
    label = policy if isinstance(policy, str) else None
    name, bracket = parse_policy(policy)
    twice = sorted(set(bracket) & set(params or {}))
    if twice:
        raise InputError(f"parameter {twice[0]!r} given both in the brackets and in params",
                         source="--policy")  # fmt: skip
    spec = get_policy(policy if isinstance(policy, PolicySpec) else name)
    return _resolved(spec, {**bracket, **dict(params or {})}, label or spec.name)


__all__ = ["PolicyRef", "ResolvedPolicy", "resolve_policy"]
