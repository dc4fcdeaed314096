"""The public API (issue 10): every docstring example runs (doctest), names resolve, results print."""

from __future__ import annotations

import doctest
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
        "validate",
        "plot_schedule",
        "policies",
        "claims",
    ],  # fmt: skip
)
def test_public_names_are_callable_with_docs(name):
    obj = getattr(kvopt, name)
    assert callable(obj)
    call_doc = type(obj).__call__.__doc__ if isinstance(obj, type(kvopt)) else obj.__doc__
    assert call_doc and ">>>" in call_doc


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
