"""A user's own claims (SPEC §4): ``kvopt validate --policy REF --ratio-at-most C``, ``--bounded``,
``--claims-file FILE.toml``.

A user's claim becomes a :class:`~kvopt.claim.Claim` of kind ``ratio`` and is
validated by the very procedure of the SPEC §7 ratio claims
(:func:`kvopt.validation.ratio.ratio_claim`): campaigns inside its class that
maximise the certified ratio divided by the constant (``violated`` with a
certified record, ``holds`` with the worst certified ratio and the effort,
``inconclusive`` when only optimistic ratios exceed it), or, for a
``bounded`` claim (no constant: "the ratio stays bounded"), growth sweeps of the
worst records (SPEC §9: ``holds`` when every direction swept is bounded,
``violated`` when one grows with certified ratios).

The class of a claim is the policy's default search space
(:meth:`kvopt.policy.PolicySpec.default_space`: its instance class, arrivals
when it accepts them) changed by the claim's ``space`` table (the fields of
``--space``: ``regimes``, ``identical_prompts``, ``n_max``, …).

**Claims file** (TOML)::

    [[claim]]
    id = "mine-within-4"                 # unique, not a SPEC §7 id
    policy = "policies/mine.py:Mine"     # a reference (SPEC §4) or a built-in name;
                                         # a relative path is relative to the claims file
    params = { slack = 2 }               # optional: the policy's parameters
    kind = "ratio"                       # "ratio" (needs constant) or "bounded"
    constant = 4                         # a number, or a formula in alpha, n, M: "1 + 2/(1-alpha)"
    objective = "total"                  # "total" (default), "makespan" or "latency"
    space = { regimes = ["large"] }      # optional: narrows the class searched
    source = "my note, Lemma 2"          # optional: where the claim comes from

A missing or mistyped field is bad input naming the file, the claim and the
field (exit status 2), before anything runs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..claim import CLAIMS, RATIO, Claim, Formula
from ..errors import InputError

#: The fields of a ``[[claim]]`` table; ``REQUIRED`` must be present.
FIELDS = ("id", "policy", "params", "kind", "constant", "objective", "space", "source")
REQUIRED = ("id", "policy", "kind")
USER_KINDS = ("ratio", "bounded")
USER_OBJECTIVES = ("total", "makespan", "latency")


def _space_fields(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in raw.items():
        if k == "regimes":
            if isinstance(v, str):
                v = [x for x in v.replace(",", "+").split("+") if x]
            if not isinstance(v, list | tuple) or not all(isinstance(x, str) for x in v):
                raise InputError("must be a list of regime names", source=f"{where}.regimes")
            out[k] = tuple(v)
        elif k == "peak_limit":
            try:
                out[k] = Fraction(str(v))
            except (ValueError, ZeroDivisionError):
                raise InputError(
                    f"must be a fraction, got {v!r}", source=f"{where}.peak_limit"
                ) from None
        else:
            out[k] = v
    return out


def make_claim(
    *,
    id: str,
    policy: Any,
    kind: str = "ratio",
    constant: Any = None,
    objective: str = "total",
    params: Mapping[str, Any] | None = None,
    space: Mapping[str, Any] | None = None,
    source: str = "",
    where: str = "claim",
    options: Mapping[str, str] | None = None,
) -> Claim:
    """A user's claim (see the module docstring); errors name ``where`` and the field, or the
    field's command-line option when ``options`` names one (``{"constant": "--ratio-at-most"}``:
    ``kvopt validate --policy fcfs --ratio-at-most 1+1/alfa`` is an error of that option)."""
    from ..policy import resolve_policy
    from ..space import space_from_dict

    def at(field: str) -> str:
        return (options or {}).get(field) or f"{where}.{field}"

    if not isinstance(id, str) or not re.fullmatch(r"[A-Za-z0-9_.:-]+", id or ""):
        raise InputError(f"must be a non-empty name of letters, digits, - _ . :, got {id!r}",
                         source=at("id"))  # fmt: skip
    if id in CLAIMS:
        raise InputError(f"{id!r} is a SPEC §7 claim; choose another id", source=at("id"))
    if kind not in USER_KINDS:
        raise InputError(f"must be one of {', '.join(USER_KINDS)}, got {kind!r}",
                         source=at("kind"))  # fmt: skip
    if objective not in USER_OBJECTIVES:
        raise InputError(f"must be one of {', '.join(USER_OBJECTIVES)}, got {objective!r}",
                         source=at("objective"))  # fmt: skip
    if params is not None and not isinstance(params, Mapping):
        raise InputError("must be a table of parameters", source=at("params"))
    ref = resolve_policy(policy, params)  # a ResolvedPolicy (cli validate) is not resolved again
    spec, resolved = ref.spec, dict(ref.params)
    bound: float | None = None
    formula: str | None = None
    fn = None
    if kind == "ratio":
        if constant is None:
            raise InputError("a ratio claim needs a constant", source=at("constant"))
        if isinstance(constant, bool):
            raise InputError(f"must be a number or a formula, got {constant!r}",
                             source=at("constant"))  # fmt: skip
        if isinstance(constant, str):  # "2.5" on the command line is the number 2.5
            try:
                constant = float(constant)
            except ValueError:
                fn = Formula(constant, source=at("constant"))
                formula = constant
        if isinstance(constant, int | float):
            if not (math.isfinite(constant) and constant >= 1):  # ALG >= Opt: below 1 is no claim
                raise InputError(f"must be a finite number >= 1, got {constant!r}",
                                 source=at("constant"))  # fmt: skip
            bound = float(constant)
        elif formula is None:
            raise InputError(f"must be a number or a formula, got {constant!r}",
                             source=at("constant"))  # fmt: skip
    elif constant is not None:
        raise InputError("a bounded claim has no constant (it states that the ratio stays "
                         "bounded as instances grow)", source=at("constant"))  # fmt: skip
    if space is not None and not isinstance(space, Mapping):
        raise InputError("must be a table of space fields", source=f"{where}.space")
    try:
        sp = space_from_dict(_space_fields(space or {}, f"{where}.space"),
                             base=spec.default_space())  # fmt: skip
    except InputError as err:
        raise InputError(err.rule, source=f"{where}.{err.source or 'space'}") from None
    if sp.kind == "typed":
        raise InputError("a claim's class is a per-job space (search the typed space with "
                         "validate --space kind=typed)", source=f"{where}.space.kind")  # fmt: skip
    what = f"{spec.name} {objective}"
    if kind == "ratio":
        statement = f"{what} <= {formula or f'{bound:g}'} Opt"
    else:
        statement = f"{what} ratio stays bounded as instances grow (a constant, not given)"
    return Claim(
        id=id,
        statement=statement,
        source=str(source or "user claim"),
        kind=RATIO,
        klass=f"{spec.applies_to}; searched in {_describe_space(space)}",
        space=sp,
        policies=(spec.name,),
        bound=bound,
        bound_formula=formula,
        bound_fn=fn,
        objective=objective,
        params=resolved,
        note=(
            "a user's claim (kvopt validate --policy / --claims-file)"
            + (
                "; no constant: judged by growth sweeps of the worst records (SPEC §9)"
                if kind == "bounded"
                else ""
            )
        ),  # fmt: skip
    )


def _describe_space(space: Mapping[str, Any] | None) -> str:
    if not space:
        return "the policy's default space"
    return "the policy's default space with " + ", ".join(f"{k}={v}" for k, v in space.items())


def load_claims_file(path: str | Path) -> list[Claim]:
    """The ``[[claim]]`` tables of a TOML file as claims (see the module docstring)."""
    import tomllib

    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("file not found", source=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read ({exc})", source=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", source=str(path)) from None
    extra = sorted(set(data) - {"claim"})
    if extra:
        raise InputError(
            "unknown top-level key (only [[claim]] tables)", source=f"{path}: {extra[0]}"
        )
    tables = data.get("claim")
    if not isinstance(tables, list) or not tables:
        raise InputError("no [[claim]] table", source=str(path))
    out: list[Claim] = []
    seen: set[str] = set()
    for k, t in enumerate(tables):
        where = f"{path}: claim[{k}]"
        if not isinstance(t, dict):
            raise InputError("must be a table", source=where)
        unknown = sorted(set(t) - set(FIELDS))
        if unknown:
            raise InputError(f"unknown field (fields: {', '.join(FIELDS)})",
                             source=f"{where}.{unknown[0]}")  # fmt: skip
        for key in REQUIRED:
            if key not in t:
                raise InputError("missing required field", source=f"{where}.{key}")
        if t.get("kind") == "ratio" and "constant" not in t:
            raise InputError("missing required field (a ratio claim needs it)",
                             source=f"{where}.constant")  # fmt: skip
        if "objective" not in t:
            raise InputError("missing required field (total, makespan or latency)",
                             source=f"{where}.objective")  # fmt: skip
        for key in ("id", "policy", "kind", "objective", "source"):
            if key in t and not isinstance(t[key], str):
                raise InputError(f"must be a string, got {t[key]!r}", source=f"{where}.{key}")
        where = f"{path}: claim {t['id']!r}"
        if t["id"] in seen:
            raise InputError("id given twice", source=f"{where}.id")
        seen.add(t["id"])
        policy = _relative_to(t["policy"], path.parent)
        try:
            claim = make_claim(
                id=t["id"], policy=policy, kind=t["kind"], constant=t.get("constant"),
                objective=t["objective"], params=t.get("params"), space=t.get("space"),
                source=t.get("source", ""), where=where,
            )  # fmt: skip
        except InputError as err:
            if err.source and str(path) in err.source:
                raise
            src = f"{where}.policy ({err.source})" if err.source else f"{where}.policy"
            raise InputError(err.rule, source=src) from None
        out.append(claim)
    return out


def _relative_to(ref: str, folder: Path) -> str:
    """A file reference relative to the claims file's folder (a built-in name is kept)."""
    from ..usercode import is_reference, split_reference

    if not is_reference(ref):
        return ref
    head = ref.split("[", 1)[0]
    target, attr = split_reference(head)
    rest = ref[len(head) :]
    if (target.endswith(".py") or "/" in target) and not Path(target).is_absolute():
        cand = folder / target
        if cand.is_file():
            return f"{cand}:{attr}{rest}"
    return ref


__all__ = ["FIELDS", "REQUIRED", "USER_KINDS", "load_claims_file", "make_claim"]
