"""Growth sweeps (``kvopt grow``, SPEC §9): directions, verdict rules, records, bad input."""

from __future__ import annotations

import doctest
import json

import pytest
from conftest import REPO

from kvopt.campaign import families, growth
from kvopt.campaign.growth import (
    Direction,
    direction_verdict,
    directions_for,
    parse_direction,
    sweep_verdict,
)
from kvopt.errors import InputError
from kvopt.record import load_record, verify_record
from kvopt.space import TypedSpace
from kvopt.space.typed import JobType

FCFS = str(REPO / "instances" / "worst" / "small" / "fcfs.json")
KEYS = {"factor", "n", "memory", "alg", "ub", "lb", "ratio_certified", "ratio_optimistic",
        "opt_status", "record"}  # fmt: skip


# --------------------------------------------------------------------------- verdict rules


def test_grows_needs_the_exponent_and_four_doublings():
    fs = [1, 2, 4, 8, 16]
    exp, v = direction_verdict(fs, [2 * f**0.5 for f in fs])
    assert v == "grows" and exp == pytest.approx(0.5)
    # the same slope over three doublings only is not enough
    assert direction_verdict(fs[:4], [2 * f**0.5 for f in fs[:4]])[1] == "unclear"
    # a slope just under the threshold does not grow (and changes too much to be bounded)
    assert direction_verdict(fs, [f**0.2 for f in fs])[1] == "unclear"


def test_bounded_when_the_last_two_doublings_change_less_than_five_percent():
    assert direction_verdict([1, 2, 4, 8], [1.0, 3.0, 3.05, 3.1])[1] == "bounded"  # 3.3 %
    assert direction_verdict([1, 2, 4, 8], [1.0, 3.0, 3.0, 3.2])[1] == "unclear"  # 6.7 %
    assert direction_verdict([1, 2], [3.0, 3.0])[1] == "unclear"  # one doubling only
    # the exponent is fitted on the upper half of the points only
    exp, _ = direction_verdict([1, 2, 4, 8], [1.0, 8.0, 8.0, 8.0])
    assert exp == pytest.approx(0.0)


def test_sweep_verdict():
    assert sweep_verdict(["bounded", "grows", "unclear"]) == "grows"
    assert sweep_verdict(["bounded", "bounded"]) == "bounded"
    assert sweep_verdict(["bounded", "unclear"]) == "unclear"
    assert sweep_verdict([]) == "unclear"


def test_docstring_examples(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # the examples read bundled records by relative path
    for mod in (growth, families):
        res = doctest.testmod(mod, extraglobs={"tmp": tmp_path}, optionflags=doctest.ELLIPSIS,
                              raise_on_error=False, report=False)  # fmt: skip
        assert res.attempted >= 2 and res.failed == 0


# --------------------------------------------------------------------------- directions


def test_directions_double_what_they_say():
    ts = [JobType(2, 3, 1, 4), JobType(5, 1, 0, 1)]
    assert Direction("memory", "memory").step(10, ts) == (
        20, [JobType(4, 6, 2, 4), JobType(10, 2, 0, 1)])  # fmt: skip
    assert Direction("count", "count").step(10, ts)[1] == [JobType(2, 3, 1, 8),
                                                           JobType(5, 1, 0, 2)]  # fmt: skip
    assert parse_direction("count:1", 2).step(10, ts) == (10, [ts[0], JobType(5, 1, 0, 2)])
    assert Direction("memory-count", "memory-count").step(10, ts) == (
        20, [JobType(2, 3, 1, 8), JobType(5, 1, 0, 2)])  # fmt: skip
    assert parse_direction("memory:0", 2).step(10, ts) == (
        20, [JobType(4, 6, 2, 4), JobType(5, 1, 0, 2)])  # fmt: skip
    assert directions_for(1) == ["memory", "count", "memory-count"]
    assert "count:1" in directions_for(2) and "memory:0" in directions_for(2)


@pytest.mark.parametrize("bad", ["speed", "count:2", "memory:", "count:0+1", "memory:0+0"])
def test_unknown_directions_are_input_errors(bad):
    with pytest.raises(InputError, match="--directions"):
        parse_direction(bad, 2)


# --------------------------------------------------------------------------- the sweep


def test_grow_on_a_bundled_record(cli, tmp_path):
    out = tmp_path / "g"
    r = cli("grow", FCFS, "--steps", "2", "--directions", "memory,count", "--time-limit", "2",
            "--out", str(out), "--json")  # fmt: skip
    assert r.code == 0, r.err
    d = r.json()
    assert set(d) == {"policy", "directions", "best_direction", "verdict"}
    assert d["policy"] == "fcfs" and d["verdict"] in ("grows", "bounded", "unclear")
    assert [x["name"] for x in d["directions"]] == ["memory", "count"]
    assert d["best_direction"] in ("memory", "count")
    inst = load_record(FCFS).instance
    for x in d["directions"]:
        assert x["verdict"] in ("grows", "bounded", "unclear")
        assert [p["factor"] for p in x["steps"]] == [1, 2, 4]
        for p in x["steps"]:
            assert set(p) == KEYS
            assert p["ratio_certified"] == pytest.approx(p["alg"] / p["ub"])
            assert p["ratio_certified"] <= p["ratio_optimistic"] + 1e-12
            rec = load_record(p["record"])
            assert verify_record(rec) == []
            assert rec.ratio_certified == pytest.approx(p["ratio_certified"])
            assert (rec.instance.n, rec.instance.memory) == (p["n"], p["memory"])
        last = load_record(x["steps"][-1]["record"])
        assert last.found_by["direction"] == x["name"] and last.found_by["factor"] == 4
    mem = d["directions"][0]["steps"]
    assert mem[-1]["memory"] == 4 * inst.memory and mem[-1]["n"] == inst.n
    cnt = d["directions"][1]["steps"]
    assert cnt[-1]["memory"] == inst.memory and cnt[-1]["n"] == 4 * inst.n
    assert (out / "growth.png").stat().st_size > 0
    assert json.loads((out / "growth.json").read_text())["verdict"] == d["verdict"]
    assert "memory x2" in r.err  # progress on stderr


def test_every_point_passes_kvopt_check(cli, tmp_path):
    out = tmp_path / "g"
    assert cli("grow", FCFS, "--steps", "1", "--directions", "memory-count", "--out", str(out),
               "--time-limit", "2", "--json").code == 0  # fmt: skip
    for path in sorted(out.glob("*.json")):
        if path.name == "growth.json":
            continue
        rec = load_record(path)
        r = cli("check", str(path), "--json")
        assert r.code == 0, (path, r.out)
        assert TypedSpace.types(rec.instance)


def test_sane_sizes_stop_a_direction(tmp_path, monkeypatch):
    monkeypatch.setattr(growth, "MAX_N", 20)
    res = growth.grow(FCFS, steps=3, directions="count", out=tmp_path / "g", certify=0,
                      plot=False, progress=False)  # fmt: skip
    d = res.direction("count")
    assert [p.factor for p in d.steps] == [1, 2]  # n = 7, 14; 28 > 20
    assert "stopped before factor 4" in d.to_dict()["stopped"]


def test_attempt_budget_stops_a_direction(tmp_path, monkeypatch):
    """A grown point whose simulation goes past the attempt budget ends its direction (a
    thrashing policy, such as beta-clear's kill-alls, would otherwise run for hours); the
    record's own instance is simulated without a budget."""
    n0 = load_record(FCFS).instance.n
    monkeypatch.setattr(growth, "max_attempts", lambda n: n0 + 1)  # enough for I_0 only
    res = growth.grow(FCFS, steps=2, directions="count", out=tmp_path / "g", certify=0,
                      plot=False, progress=False)  # fmt: skip
    d = res.direction("count")
    assert [p.factor for p in d.steps] == [1]
    assert "factor 2 is over the attempt budget" in d.to_dict()["stopped"]
    monkeypatch.setattr(growth, "max_attempts", lambda n: 1)  # I_0 has no budget
    res = growth.grow(FCFS, steps=1, directions="count", out=tmp_path / "h", certify=0,
                      plot=False, progress=False)  # fmt: skip
    assert [p.factor for p in res.direction("count").steps] == [1]


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--steps", "0"], "--steps"),
        (["--directions", "sideways"], "--directions"),
        (["--directions", "count:9"], "--directions"),
    ],
)
def test_bad_options_exit_2_with_one_line(cli, tmp_path, argv, needle):
    r = cli("grow", FCFS, *argv, "--out", str(tmp_path / "g"), "--json")
    assert r.code == 2 and r.out == ""
    assert len(r.err.strip().splitlines()) == 1 and needle in r.err


def test_a_file_that_is_not_a_record_exits_2(cli, tmp_path):
    inst = REPO / "instances" / "random" / "mixed-n10.json"
    r = cli("grow", str(inst), "--out", str(tmp_path / "g"), "--json")
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1 and str(inst) in r.err
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2")
    r = cli("grow", str(junk), "--json")
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1 and "junk.json" in r.err


@pytest.mark.slow
def test_search_then_grow_reports_the_verdict_and_the_family(cli, tmp_path):
    out = tmp_path / "s"
    r = cli("search", "--policy", "fcfs", "--budget", "16", "--seed", "1", "--out", str(out),
            "--grow", "2", "--time-limit", "2", "--no-progress", "--n", "2:6", "--memory", "8:24",
            "--json")  # fmt: skip
    assert r.code == 0, r.err
    g = r.json()["growth"]
    assert g["verdict"] in ("grows", "bounded", "unclear") and len(g["sweeps"]) == 2
    assert g["sweeps"][0]["record"] == str(out / "best.json")
    for sweep in g["sweeps"]:
        for d in sweep["directions"]:
            for p in d["steps"]:
                assert verify_record(load_record(p["record"])) == []
