"""The public API (issue 10): every docstring example runs (doctest), names resolve, results print."""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import inspect
import json
import os
import warnings

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


def test_objectives_names_are_one_type_on_every_result():
    """Issue 68: ``objectives`` is the dict ``{total_completion, makespan}`` on the three results;
    ``SolveResult.objective`` stays the optimised value (SPEC §4); the old dict name
    ``objective`` of a simulation or a check warns and returns the same dict."""
    inst = kvopt.generate("random", seed=2, n=5, memory=24)
    sim = kvopt.simulate(inst, "fcfs")
    chk = kvopt.check_schedule(inst, sim.schedule)
    opt = kvopt.solve(inst, time_limit=20)
    ct = sim.completion_times
    want = {"total_completion": sum(ct), "makespan": max(ct)}
    assert dict(sim.objectives) == chk.objectives == want
    assert (sim.total_completion, sim.makespan) == (chk.total_completion, chk.makespan)
    assert (sim.total_completion, sim.makespan) == (want["total_completion"], want["makespan"])
    assert isinstance(sim.total_completion, int) and isinstance(chk.makespan, int)
    assert opt.objectives == kvopt.check_schedule(inst, opt.schedule).objectives
    assert opt.objective == opt.objectives["total_completion"]  # the number, SPEC §4
    for res, cls in ((sim, "SimulationResult"), (chk, "CheckResult")):
        with pytest.warns(DeprecationWarning, match=rf"{cls}\.objective is deprecated.*0\.3"):
            old = res.objective
        assert old is res.objectives
    # the JSON forms keep SPEC §4's key
    assert sim.to_dict(inst.n)["objective"] == want and chk.to_dict()["objective"] == want
    assert opt.to_dict()["objective"] == opt.objective


def test_objectives_of_an_incomplete_check_and_an_unsolved_result_are_none():
    inst = kvopt.generate("random", seed=2, n=3, memory=24)
    empty = kvopt.check_schedule(inst, kvopt.Schedule((), inst.memory))
    assert not empty.valid and empty.objectives is None
    assert empty.total_completion is None and empty.makespan is None
    unsolved = dataclasses.replace(kvopt.solve(inst, time_limit=20), schedule=None, objective=None)
    assert unsolved.objectives is None


def test_the_package_never_reads_its_deprecated_names(cli, tmp_path):
    """simulate, check, compare and plot (API and command line) without the deprecation."""
    matplotlib.use("Agg")
    inst = kvopt.generate("random", seed=3, n=5, memory=24)
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(inst.to_dict()))
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "error", message=".*objective is deprecated", category=DeprecationWarning
        )
        sim = kvopt.simulate(inst, "fcfs")
        kvopt.compare(inst, ["fcfs", "route"])
        kvopt.plot_schedule(inst, sim, out=tmp_path / "p.png")
        for args in (("--json",), ()):
            r = cli("simulate", path, "--policy", "fcfs", "--out", tmp_path / "s.json", *args)
            assert r.code == 0, r.err
            r = cli("check", path, tmp_path / "s.json", *args)
            assert r.code == 0, r.err
        assert cli("check", path, tmp_path / "s.json", "--json").json()["objective"] == dict(
            sim.objectives
        )
