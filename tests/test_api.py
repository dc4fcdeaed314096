"""The public API (issue 10): every docstring example runs (doctest), names resolve, results print."""

from __future__ import annotations

import doctest
import importlib
import inspect
import os

import matplotlib
import pytest
from conftest import REPO

import kvopt
import kvopt.api


def test_docstring_examples_run(monkeypatch):
    matplotlib.use("Agg")
    monkeypatch.chdir(REPO)  # examples read bundled instances by relative path
    res = doctest.testmod(kvopt.api, optionflags=doctest.ELLIPSIS, raise_on_error=False)
    assert res.attempted >= 12
    assert res.failed == 0


@pytest.mark.parametrize(
    "name",
    [
        "load_instance",
        "generate",
        "solve",
        "simulate",
        "compare",
        "bounds",
        "search",
        "grow",
        "validate",
        "plot_schedule",
        "policies",
        "claims",
    ],  # fmt: skip
)
def test_public_names_are_functions_with_docs(name):
    obj = getattr(kvopt, name)
    assert inspect.isfunction(obj), f"kvopt.{name} is {type(obj).__name__}, not a plain function"
    assert obj.__doc__ and ">>>" in obj.__doc__


@pytest.mark.parametrize(
    "name,impl",
    [
        ("solve", "kvopt.exact:solve"),
        ("simulate", "kvopt.simulation:simulate"),
        ("compare", "kvopt.comparison:compare"),
        ("search", "kvopt.campaign:search"),
        ("grow", "kvopt.campaign.growth:grow"),
        ("validate", "kvopt.validation:validate"),
    ],
)
def test_public_signatures_match_the_implementation(name, impl):
    """The API spells out every option of the function it calls (names, kinds, defaults)."""
    module, attr = impl.split(":")
    target = inspect.signature(getattr(importlib.import_module(module), attr))
    mine = inspect.signature(getattr(kvopt, name))
    assert "kwargs" not in mine.parameters and "args" not in mine.parameters
    theirs = {p.name: p.default for p in list(target.parameters.values())[1:]}
    ours = {p.name: p.default for p in list(mine.parameters.values())[1:]}
    assert ours == theirs


def test_modules_stay_reachable():
    from kvopt.campaign import shrink  # noqa: F401

    assert "fcfs" in kvopt.policy.POLICIES
    assert "route" in kvopt.claim.CLAIMS
    assert callable(kvopt.comparison.compare_instance)


def test_tables_and_reprs():
    t = kvopt.policies()
    assert "route" in repr(t) and t.to_dict()[0]["name"] == "rect"
    pd = pytest.importorskip("pandas")
    assert isinstance(kvopt.claims().to_dataframe(), pd.DataFrame)
    inst = kvopt.generate("random", seed=2, n=4, memory=24)
    assert "fcfs" in repr(kvopt.simulate(inst, "fcfs"))
    assert os.path.exists(REPO / "instances")
