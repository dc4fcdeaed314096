"""``benchmarks/mcsf_jaillet.py --setting summaries`` (issue 52): the certified brackets over
every instance, proved or not (SPEC §8), and a run that resumes from its ``--out``."""

from __future__ import annotations

import json
import math

import pytest
from conftest import load_benchmark
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("mcsf_jaillet")


# one instance: (Opt, how far the bound is below it, how far the best schedule is above it,
# how far the policy is above Opt)
_case = st.tuples(st.integers(1, 500), st.floats(0, 200), st.integers(0, 50), st.integers(0, 100))


@settings(max_examples=200, deadline=None)
@given(st.lists(_case, min_size=1, max_size=8))
def test_the_brackets_hold_the_true_figures(bench, cases):
    """Whatever Opt is inside each instance's ``[bound, ub]``, the policy's mean ratio, its
    count of exactly optimal instances and its worst ratio lie inside the brackets."""
    rows, ratios = [], []
    for opt, below, above, extra in cases:
        bound = max(opt - below, 0.5)
        rows.append({"policies": {"p": opt + extra}, "ub": opt + above, "bound": bound})
        ratios.append((opt + extra) / opt)
    b = bench.brackets(rows, "p")
    lo, hi = b["mean_ratio"]
    assert lo <= sum(ratios) / len(ratios) + 1e-12 and sum(ratios) / len(ratios) <= hi + 1e-12
    exact = sum(1 for opt, _, _, extra in cases if extra == 0)
    assert b["optimal"][0] <= exact <= b["optimal"][1]
    assert b["worst_ratio"][0] <= max(ratios) + 1e-12 <= b["worst_ratio"][1] + 2e-12
    assert b["instances"] == len(cases)


def test_proved_instances_close_the_brackets(bench):
    rows = [
        {"policies": {"p": 12}, "ub": 10, "bound": 10.0},
        {"policies": {"p": 7}, "ub": 7, "bound": 6.2},  # ⌈6.2⌉ = 7: proved by rounding
    ]
    b = bench.brackets(rows, "p")
    assert b["mean_ratio"] == [pytest.approx(1.1), pytest.approx(1.1)]
    assert b["optimal"] == [1, 1] and b["worst_ratio"] == [pytest.approx(1.2)] * 2
    rows.append({"policies": {"p": 5}, "ub": 5, "bound": None})  # no bound: lb = 0
    b = bench.brackets(rows, "p")
    assert b["optimal"] == [1, 2] and math.isinf(b["mean_ratio"][1])


def test_by_n_splits_the_proved_figures_by_the_number_of_jobs(bench):
    """Per n: every instance counted once, the proved ones apart, and each policy's mean and
    exactly optimal count over the proved ones only (an open instance has no Opt)."""
    rows = [
        {"n": 15, "status": "optimal", "objective": 10, "policies": {"p": 11}},
        {"n": 15, "status": "optimal", "objective": 20, "policies": {"p": 20}},
        {"n": 15, "status": "feasible", "objective": 30, "policies": {"p": 99}},
        {"n": 17, "status": "feasible", "objective": 40, "policies": {"p": 41}},
    ]
    table = bench.by_n(rows, ["p"])
    assert list(table) == [15, 17]
    assert (table[15]["instances"], table[15]["proved"]) == (3, 2)
    assert table[15]["p"] == {"mean_ratio": pytest.approx(1.05), "optimal": 1}
    assert table[17] == {"instances": 1, "proved": 0, "p": {"mean_ratio": None, "optimal": 0}}


def test_a_run_resumes_from_its_out_file(bench, tmp_path, monkeypatch, capsys):
    """Every instance is saved as it is solved; a rerun with the same settings solves only
    the instances not saved, and other settings are refused."""
    out = tmp_path / "run.json"
    args = ["--setting", "summaries", "--model", "1", "--n-min", "3", "--n-max", "4"]
    args += ["--time-limit", "10", "--threads", "1", "--policies", "mcsf", "--out", str(out)]
    assert bench.main([*args, "--instances", "2"]) == 0
    first = json.loads(out.read_text())
    assert [r["seed"] for r in first["rows"]] == [0, 1]
    calls = []
    real = bench.solve
    monkeypatch.setattr(bench, "solve", lambda inst, **kw: calls.append(inst) or real(inst, **kw))
    assert bench.main([*args, "--instances", "3"]) == 0
    assert len(calls) == 1  # only seed 2
    again = json.loads(out.read_text())
    assert [r["seed"] for r in again["rows"]] == [0, 1, 2]
    assert again["rows"][:2] == first["rows"]
    assert "brackets" in again["summary"]["mcsf"]
    with pytest.raises(SystemExit) as exit_:
        bench.main([*args[:-2], "--policies", "mcsf,fcfs", "--out", str(out)])
    assert exit_.value.code == 2
    assert "written with other settings" in capsys.readouterr().err.splitlines()[-1]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(SystemExit) as exit_:
        bench.main([*args[:-2], "--out", str(bad)])
    assert exit_.value.code == 2 and bad.read_text() == "{not json"  # nothing overwritten
