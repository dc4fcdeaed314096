"""Each policy's declared parameters (:class:`kvopt.policy.Param`, what ``kvopt policies`` and
``--param`` show) agree with its class: every ``Param`` is a keyword of the class's
``__init__`` with the same default, and every keyword of ``__init__`` (but ``seed``, which
the registry passes itself) is declared.  A default changed in one place only used to go
unnoticed: the registry's default is what runs, the class's what a direct caller gets."""

from __future__ import annotations

import inspect

import pytest

from kvopt.policy import POLICIES

#: keywords of a class's ``__init__`` that are not user parameters: other code builds the
#: class with them (each must be documented there)
INTERNAL = {
    ("rect", "capped"),  # Route's prompt-heavy branch: Rect(capped=True), kvopt/policy/route.py
    ("greedy-area", "reserve"),  # clairvoyant-mix: GreedyArea(reserve="memory"), clairvoyant_mix.py
}


def _init_params(cls) -> dict[str, inspect.Parameter]:
    sig = inspect.signature(cls.__init__)
    return {
        name: p
        for name, p in sig.parameters.items()
        if name not in ("self", "seed") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_param_defaults_match_the_class(name):
    spec = POLICIES[name]
    cls = spec.factory.policy_class()
    init = _init_params(cls)
    declared = {p.name: p for p in spec.params}
    internal = {k for (policy, k) in INTERNAL if policy == name}
    assert internal <= set(init), (name, internal)
    assert set(declared) == set(init) - internal, (name, sorted(declared), sorted(init))
    for key, param in declared.items():
        default = init[key].default
        assert default is not inspect.Parameter.empty, f"{name}: {key} has no default in __init__"
        assert default == param.default and type(default) is type(param.default), (
            f"{name}: Param {key} defaults to {param.default!r}, {cls.__name__}.__init__ to "
            f"{default!r}"
        )
    if spec.seeded:
        assert "seed" in inspect.signature(cls.__init__).parameters, name
