"""A user's policy class as a registry entry (SPEC §4, "References (user code)").

:func:`spec_from_class` reads what the registry states for a built-in policy
(:class:`~kvopt.policy.PolicySpec`) from the class itself:

* **clairvoyance** from its type: a subclass of
  :class:`~kvopt.engine.contract.BlindPolicy` is non-clairvoyant (the engine
  hands it a :class:`~kvopt.engine.contract.View` without unseen response
  lengths), of :class:`~kvopt.engine.contract.ClairvoyantPolicy` clairvoyant;
* **parameters** from ``__init__``'s keyword arguments, their defaults and
  annotations (``int``, ``float``, ``bool``, ``str``; the type of the default
  otherwise; a default ``None`` with an optional annotation such as ``int | None``
  is an optional parameter, unset unless given), or from a class attribute ``parameters`` — a tuple of
  :class:`~kvopt.policy.Param` with ranges, choices and help text; an
  argument ``seed`` makes the policy seeded (it gets the run's seed);
* optional class attributes: ``kills`` (``False``: never kills an attempt;
  the engine refuses a kill or an expiring cap of such a policy; default
  ``True``), ``arrivals`` (``False``: an offline policy, instances with
  arrivals are refused), ``applies_to`` (the instance class in words),
  ``check_instance(instance, params) -> str | None`` (a static method returning
  the rule an instance breaks), ``search_space`` (a dict of
  :class:`~kvopt.space.Space` fields for the default search space),
  ``source`` (the paper it comes from) and ``summary`` (default: the first line
  of the class docstring).

A bad class is bad input naming the reference: not a class, not a policy,
an ``__init__`` argument without a default, a parameter default of a type
``--param`` cannot convert.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from ..engine.contract import BlindPolicy, ClairvoyantPolicy, Policy
from ..errors import InputError
from ..instance import Instance
from ..usercode import UserCode, call_user, user_error
from .spec import Param, PolicySpec

_TYPES: dict[Any, type] = {int: int, float: float, bool: bool, str: str,
                           "int": int, "float": float, "bool": bool, "str": str}  # fmt: skip


def _param_from_signature(ref: str, p: inspect.Parameter) -> Param:
    if p.default is inspect.Parameter.empty:
        raise InputError(
            f"__init__ argument {p.name!r} has no default (every parameter needs one, "
            "so that the policy runs without --param)",
            source=repr(ref),
        )
    default = p.default
    if default is None:  # an optional parameter: ``x: int | None = None`` (unset by default)
        kind = _optional_kind(p.annotation)
        if kind is None:
            raise InputError(
                f"__init__ argument {p.name!r} has default None: annotate it as an optional "
                "int, float, bool or str (e.g. 'int | None'), or declare a 'parameters' tuple "
                "of Param",
                source=repr(ref),
            )
        return Param(p.name, None, f"{kind.__name__} or unset (from {p.name}'s signature)",
                     kind=kind)  # fmt: skip
    kind = _TYPES.get(p.annotation)
    if kind is None and isinstance(p.annotation, str):  # "int | None" etc.: the default decides
        kind = _TYPES.get(p.annotation.strip())
    if kind is None:
        kind = type(default) if isinstance(default, bool | int | float | str) else None
    if kind is None:
        raise InputError(
            f"__init__ argument {p.name!r} has default {default!r}: a parameter must be an int, "
            "float, bool or str (annotate it, or declare a 'parameters' tuple of Param)",
            source=repr(ref),
        )
    if kind is float and isinstance(default, int) and not isinstance(default, bool):
        default = float(default)
    if not isinstance(default, kind) or (kind is int and isinstance(default, bool)):
        raise InputError(
            f"__init__ argument {p.name!r}: default {default!r} is not of its type {kind.__name__}",
            source=repr(ref),
        )
    return Param(p.name, default, f"{kind.__name__} (from {p.name}'s signature)")


def _optional_kind(annotation: Any) -> type | None:
    """The value type of an optional parameter's annotation (``int | None``,
    ``Optional[int]``, as text under ``from __future__ import annotations`` or as an
    object), or ``None`` when it names no single int, float, bool or str."""
    text = annotation if isinstance(annotation, str) else str(annotation)
    text = text.replace("typing.", "").replace(" ", "").strip("'\"")  # "'int | None'" too
    if text.startswith("Optional[") and text.endswith("]"):
        text = text[len("Optional[") : -1]
    parts = [x for x in text.replace("<class'", "").replace("'>", "").split("|") if x != "None"]
    return _TYPES.get(parts[0]) if len(parts) == 1 else None


def _signature(cls: type, ref: str) -> inspect.Signature:
    try:
        return inspect.signature(cls.__init__)
    except (TypeError, ValueError) as exc:
        raise InputError(f"cannot read __init__'s signature: {exc}", source=repr(ref)) from None


def spec_from_class(cls: Any, code: UserCode) -> PolicySpec:
    """The registry entry of a user's policy class (see the module docstring)."""
    ref = code.reference
    if not isinstance(cls, type):
        what = "a policy object" if isinstance(cls, Policy) else type(cls).__name__
        raise InputError(
            f"{code.attr} is {what}, not a policy class (name the class)", source=repr(ref)
        )
    if not issubclass(cls, BlindPolicy | ClairvoyantPolicy):
        raise InputError(
            f"{code.attr} is not a policy: subclass kvopt.BlindPolicy (non-clairvoyant) or "
            "kvopt.ClairvoyantPolicy",
            source=repr(ref),
        )
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
        raise InputError(f"{code.attr} is abstract (define {missing})", source=repr(ref))
    sig = _signature(cls, ref)
    args = {
        k: p
        for k, p in list(sig.parameters.items())[1:]
        if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    }
    seeded = "seed" in args
    declared = getattr(cls, "parameters", None)
    if declared is not None:
        if not isinstance(declared, tuple | list) or not all(
            isinstance(x, Param) for x in declared
        ):
            raise InputError("'parameters' must be a tuple of kvopt.Param", source=repr(ref))
        params = tuple(declared)
        unknown = [p.name for p in params if p.name not in args and not _has_var_kw(sig)]
        if unknown:
            raise InputError(
                f"'parameters' names {unknown[0]!r}, which __init__ does not take",
                source=repr(ref),
            )
    else:
        params = tuple(_param_from_signature(ref, p) for k, p in args.items() if k != "seed")
    own_check = getattr(cls, "check_instance", None)
    arrivals = bool(getattr(cls, "arrivals", True))
    check = _combined_check(own_check, arrivals, ref)
    doc = inspect.getdoc(cls) or ""
    summary = getattr(cls, "summary", None) or (doc.splitlines()[0] if doc else cls.__name__)
    default_class = "all instances (arrivals allowed)" if arrivals else "instances without arrivals"
    space = getattr(cls, "search_space", None) or {}
    if not isinstance(space, Mapping):
        raise InputError("'search_space' must be a dict of Space fields", source=repr(ref))

    def make(resolved: dict[str, Any], seed: int | None):
        kwargs = dict(resolved)
        if seeded:
            kwargs["seed"] = seed
        return call_user(cls, ref, "policy", **kwargs)

    make.policy_class = lambda: cls  # type: ignore[attr-defined]
    return PolicySpec(
        name=ref,
        factory=make,
        clairvoyant=issubclass(cls, ClairvoyantPolicy),
        source=str(getattr(cls, "source", None) or f"user code: {code.target or ref}"),
        summary=str(summary),
        applies_to=str(getattr(cls, "applies_to", None) or default_class),
        params=params,
        check=check,
        seeded=seeded,
        arrivals=arrivals,
        search_space=dict(space),
        code=code,
    )


def _has_var_kw(sig: inspect.Signature) -> bool:
    return any(p.kind == inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())


def _combined_check(
    own: Callable[..., Any] | None, arrivals: bool, ref: str
) -> Callable[[Instance, dict[str, Any]], str | None] | None:
    if own is None and arrivals:
        return None

    from . import no_arrivals

    def check(inst: Instance, params: dict[str, Any]) -> str | None:
        if not arrivals:
            rule = no_arrivals(inst)
            if rule:
                return rule
        if own is None:
            return None
        try:
            rule = own(inst, dict(params))
        except InputError as exc:  # the user's own word that the instance is bad input
            raise InputError(f"check_instance: {exc}", source=repr(ref)) from None
        except Exception as exc:  # noqa: BLE001 - a user's check may raise anything
            raise user_error(exc, ref, where="in check_instance") from exc
        if rule is not None and not isinstance(rule, str):
            raise InputError(
                f"check_instance must return a str (the broken rule) or None, got {rule!r}",
                source=repr(ref),
            )
        return rule or None

    return check


__all__ = ["spec_from_class"]
