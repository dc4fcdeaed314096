"""The ``online-linear-n`` adversary (SPEC §7, the Θ(n) abstract) and its growth procedure."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from kvopt.adversary import (
    LinearNAdversary,
    linear_n_instance,
    linear_n_memory,
    run_linear_n,
    total_latency,
)
from kvopt.claim import CLAIMS
from kvopt.errors import InputError
from kvopt.plotting import plot_linear_n
from kvopt.policy import POLICIES
from kvopt.record import load_record, verify_record
from kvopt.schedule import check_schedule
from kvopt.simulation import simulate
from kvopt.validation import QUICK, validate
from kvopt.validation import linear_n as ln

ONLINE = [name for name, spec in POLICIES.items() if spec.check is None]


def _rows(res):
    return [(a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts]


def _opt_latency(n: int, b: int) -> int:
    """Opt's latency on the final instance, by hand: either the long request first (at 0) and the
    shorts together after it (or on arrival, when it is later), or the shorts first, together on
    arrival, and the long request after them (no short overlaps the long one)."""
    long_first = 2 * n + (n - 1) * (1 + max(n - b, 0))
    shorts_first = (n - 1) + (b + n + 1 + 2 * n)
    return min(long_first, shorts_first)


@pytest.mark.parametrize("policy", ONLINE)
@pytest.mark.parametrize("n", [3, 4, 7])
def test_run_checks_replays_and_shorts_never_overlap_the_long_one(policy, n):
    res = run_linear_n(policy, n, seed=1 if POLICIES[policy].seeded else None, trace=True)
    inst = res.instance
    M = 2 * (n - 1) * n
    assert inst.n == n and inst.memory == M == linear_n_memory(n)
    assert inst.meta["adversary"] == "online-linear-n" and inst.meta["released"] == n - 1
    b = min(a.start for a in res.schedule.attempts if a.job == 0)
    assert inst.arrivals.tolist() == [0] + [b + n] * (n - 1)
    assert inst.prompts.tolist() == [M - 2 * n] + [2 * n - 1] * (n - 1)
    assert inst.responses.tolist() == [2 * n] + [1] * (n - 1)
    assert inst.peaks.tolist() == [M] + [2 * n] * (n - 1)
    assert check_schedule(inst, res.schedule).valid
    long_runs = [(a.start, a.end) for a in res.schedule.attempts if a.job == 0]
    for a in res.schedule.attempts:  # the checker's memory rule, stated for this construction
        if a.job > 0:
            assert all(not (s <= a.start < e) for s, e in long_runs)
    if not POLICIES[policy].kills:  # non-preemptive: every short waits for the long run's end
        assert min(a.start for a in res.schedule.attempts if a.job > 0) >= b + 2 * n
    again = simulate(inst, policy, seed=1 if POLICIES[policy].seeded else None, trace=True)
    assert _rows(again) == _rows(res) and again.trace == res.trace
    assert total_latency(res) == sum(res.completion_times) - (n - 1) * (b + n)


def test_serial_and_mcsf_latency_by_hand():
    for n in (3, 6, 11):
        serial = run_linear_n("serial", n)  # shorts one at a time after the long run
        assert total_latency(serial) == 2 * n + sum(n + 1 + k for k in range(n - 1))
        mcsf = run_linear_n("mcsf", n)  # shorts all together after the long run
        assert total_latency(mcsf) == 2 * n + (n - 1) * (n + 1)


@pytest.mark.parametrize("policy", ["mcsf", "serial", "pack-and-schedule", "route-online"])
@pytest.mark.parametrize("n", [3, 5, 8])
def test_reference_is_the_exact_opt(policy, n):
    res = run_linear_n(policy, n)
    b = min(a.start for a in res.schedule.attempts if a.job == 0)
    ref = ln._reference(res.instance, 20.0)
    assert ref.status == "optimal" and ref.ub == ref.lb == _opt_latency(n, b)


def test_bad_n_and_memory():
    for n in (2, 1, 0, -3, "5", 3.0, True, None):
        with pytest.raises(InputError, match=r"^n: must be an integer >= 3") as err:
            linear_n_instance(n)  # type: ignore[arg-type]
        assert "\n" not in str(err.value)
        with pytest.raises(InputError, match=r"^n: "):
            LinearNAdversary(n)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"^memory: the online-linear-n construction with n = 4 "
                                         r"uses M = 2\(n-1\)n = 24, got 30"):  # fmt: skip
        linear_n_instance(4, memory=30)
    assert linear_n_instance(4, memory=24).memory == 24
    with pytest.raises(InputError, match="runs on linear_n_instance"):
        simulate(linear_n_instance(4), "fcfs", adversary=LinearNAdversary(5))


def test_select_ns():
    assert ln.select_ns((3, 5, 9)) == [3, 5, 9]
    with pytest.raises(InputError, match="^n: "):
        ln.select_ns((2, 5))
    grid = (3, 5, 9, 17, 33)
    assert ln.select_ns(grid, {"n_min": 1, "n_max": 6}) == [3, 4, 5, 6]
    assert ln.select_ns(grid, {"memory_max": 60}) == [3, 4, 5, 6]  # M = 12, 24, 40, 60
    assert ln.select_ns(grid, {"n_min": 20}) == [20, 23, 26, 29, 33]  # up to the grid's largest
    many = ln.select_ns((3, 5, 9), {"n_max": 200})  # at most as many points as the grid
    assert len(many) == 3 and many[0] == 3 and many[-1] == 200
    for sizes, option in (({"n_min": 1, "n_max": 3}, "--n 1:3"),
                          ({"memory_min": 5, "memory_max": 20}, "--memory 5:20")):  # fmt: skip
        with pytest.raises(InputError, match=f"^{option}: the online-linear-n construction needs"):
            ln.select_ns((3, 5), sizes)


def test_growth_rows_exponents_check_and_verdict(tmp_path):
    pols = ("serial", "mcsf", "fcfs", "route-online")
    data = ln.online_linear_n((3, 5, 9, 17), pols, time_limit=10.0, record_dir=tmp_path)
    assert data["ns"] == [3, 5, 9, 17] and len(data["rows"]) == 16
    assert data["exact"]["optimal"] == data["exact"]["instances"]
    for r in data["rows"]:
        assert r["opt_status"] == "optimal" and r["ratio_certified"] == r["ratio_optimistic"]
        assert r["line"] == pytest.approx((r["n"] - 1) / 12)
        assert r["check"] == ("not judged" if POLICIES[r["policy"]].kills else "above")
    pol = data["policies"]
    assert pol["serial"]["never_kills"] and not pol["fcfs"]["never_kills"]
    assert 0.85 < pol["serial"]["exponent_tail"] <= 1.0
    assert pol["mcsf"]["exponent_tail"] >= ln.REPRODUCED_EXPONENT
    assert [p[0] for p in pol["mcsf"]["points"]] == [3, 5, 9, 17]
    v = ln.linear_n_verdict(data)
    assert v["verdict"] == "reproduced" and v["record"] is None and v["instances"] == 16
    assert "not judged (may kill" in v["text"] and "fcfs, route-online" in v["text"]
    table = ln.linear_n_table(data)
    assert "| (n-1)/12 |" in table and "| serial | never |" in table and "not judged" in table
    assert (tmp_path / "p.png").exists() is False
    plot_linear_n(data, tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 5000


def test_a_never_kill_policy_below_the_line_is_violated_with_a_record(tmp_path, monkeypatch):
    """A line far above every ratio (10 n) stands for a bug: violated, and a record that checks."""
    monkeypatch.setattr(ln, "lower_line", lambda n: 10.0 * n)
    data = ln.online_linear_n((3, 5), ("mcsf", "fcfs"), record_dir=tmp_path)
    assert {r["policy"]: r["check"] for r in data["rows"] if r["n"] == 3} == {
        "mcsf": "below", "fcfs": "not judged"}  # fmt: skip
    v = ln.linear_n_verdict(data)
    assert v["verdict"] == "violated" and "mcsf (never kills)" in v["text"]
    rec = load_record(v["record"])
    assert verify_record(rec) == [] and rec.policy == "mcsf" and rec.objective == "latency"
    assert rec.ratio_optimistic < rec.meta["lower_bound"] == 30.0
    assert json.loads((tmp_path / "violation-mcsf-n3.json").read_text())["meta"]["claim"] == (
        "online-linear-n"
    )


def test_unproved_opt_with_the_line_between_the_ratios_is_unresolved(monkeypatch):
    real = ln._reference

    def weak(inst, time_limit):  # forget the proof: the bracket of the cheap schedule, lb 1
        out = real(inst, time_limit)
        return replace(out, lb=1, status="feasible", lb_source="weak")

    monkeypatch.setattr(ln, "_reference", weak)
    monkeypatch.setattr(ln, "lower_line", lambda n: float(n * n))
    data = ln.online_linear_n((3, 5, 9), ("serial",))
    assert {r["check"] for r in data["rows"]} == {"unresolved"}
    v = ln.linear_n_verdict(data)
    assert v["verdict"] == "inconclusive" and "Opt not proved" in v["text"]


# --------------------------------------------------------------------------- the two claims


def test_claims_are_registered():
    c = CLAIMS["online-linear-n"]
    assert c.kind == "growth" and c.objective == "latency" and "serial" in c.policies
    assert all(POLICIES[p].check is None and not POLICIES[p].seeded for p in c.policies)
    s = CLAIMS["serial-upper"]
    assert s.kind == "ratio" and s.policies == ("serial",) and s.objective == "latency"
    assert s.space.arrivals and s.bound_text() == "n"
    assert s.bound_for(linear_n_instance(5)) == 1.0
    assert "online-linear-n" in POLICIES["serial"].claims
    assert "serial-upper" in POLICIES["serial"].claims


def test_validate_both_claims_with_report(tmp_path):
    eff = replace(QUICK, budget=12, linear_ns=(3, 5, 9, 17))
    res = validate(["online-linear-n", "serial-upper"], out=tmp_path / "v", progress=False,
                   effort=eff, report=tmp_path / "r.md")  # fmt: skip
    lin, ser = res.claims
    assert lin.verdict == "reproduced" and lin.kind == "growth" and lin.bound == "(n-1)/12"
    assert lin.data["ns"] == [3, 5, 9, 17] and lin.exact_solves >= 4
    assert ser.verdict == "holds" and ser.bound == "n" and ser.instances >= 12
    assert max(ser.data["distribution"]["score"]) <= 1.0
    md = (tmp_path / "r.md").read_text()
    assert "| `online-linear-n` | **reproduced** |" in md and "| (n-1)/12 |" in md
    assert (tmp_path / "r-linearn.png").stat().st_size > 5000
    assert (tmp_path / "r-ratios.png").stat().st_size > 5000
    # bounded by --n: n = 3..6 only
    res = validate(["online-linear-n"], out=tmp_path / "w", progress=False, effort=eff,
                   space={"n_min": 3, "n_max": 6})  # fmt: skip
    assert res.claims[0].data["ns"] == [3, 4, 5, 6]


def test_cli_bad_range_exits_2_with_one_line(cli, tmp_path):
    for args, option in ((("--n", "1:2"), "--n 1:2"), (("--memory", "5:20"), "--memory 5:20")):
        r = cli("validate", "--claims", "online-linear-n", *args, "--out", tmp_path / "v")
        assert r.code == 2, r.err
        assert len(r.err.strip().splitlines()) == 1 and option in r.err and "n >= 3" in r.err
        assert not (tmp_path / "v" / "validation.json").exists()
