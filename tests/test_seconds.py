"""Time in seconds (SPEC §10): time models, the engine's clock, timed arrivals, metrics, bounds.

Every expected number here is computed by hand in the comments.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kvopt.engine.clock import Clock, clock_of
from kvopt.errors import InputError
from kvopt.instance import Instance, Job
from kvopt.schedule import Attempt, Schedule, checked
from kvopt.serving.seconds import latency_bound, quantile, seconds_report
from kvopt.serving.timemodel import PRESETS, TimeModel, parse_time_model
from kvopt.simulation import simulate

HALF = TimeModel(c0=1, c_b=0.5)


# ----------------------------------------------------------------------- time models
def test_presets_cite_their_source():
    assert PRESETS["unit"].is_unit
    for name, m in PRESETS.items():
        assert m.name == name and m.source
        if name != "unit":
            assert m.fit_error


@pytest.mark.parametrize(
    "text, field",
    [
        ("no-such-model", None),
        ("c0=-1", "c0"),
        ("c0=1,c_b=-0.1", "c_b"),
        ("c0=0", "c0"),
        ("c_b=1", "c0"),  # c0 omitted is 0: not allowed
        ("c0=1,c_z=2", "c_z"),
        ("c0=abc", "c0"),
    ],
)
def test_bad_time_models_are_input_errors(text, field):
    with pytest.raises(InputError) as err:
        parse_time_model(text)
    assert err.value.field == field
    assert "--time-model" in str(err.value)


def test_parse_time_model():
    assert parse_time_model(None) is PRESETS["unit"]
    assert parse_time_model("c0=1") is PRESETS["unit"]
    m = parse_time_model("c0=0.5,c_k=0.25")
    assert (m.c0, m.c_b, m.c_k, m.c_p, m.c_q) == (0.5, 0, 0.25, 0, 0)
    assert parse_time_model({"c0": 2}).c0 == 2
    assert parse_time_model("llama2-70b-a100-tp2") is PRESETS["llama2-70b-a100-tp2"]


def test_duration_and_stretch():
    m = TimeModel(c0=1, c_b=2, c_k=0.5, c_p=3, c_q=0.25)
    # b=2, K=10, P=4, Q=16: 1 + 4 + 5 + 12 + 4 = 26
    assert m.duration(2, 10, 4, 16) == 26
    # three rounds of b=2 from K=10 (then 12, 14), prefill only in the first:
    # 26 + (1 + 4 + 6) + (1 + 4 + 7) = 49
    assert m.stretch(3, 2, 10, 4, 16) == 49
    assert m.stretch(0, 2, 10, 4, 16) == 0


def test_fitted_preset_matches_the_fit_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parent.parent / "benchmarks" / "fit_time_model.py"
    spec = importlib.util.spec_from_file_location("fit_time_model", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = mod.fit()
    m = PRESETS["llama2-70b-a100-tp2"]
    assert m.c0 == pytest.approx(res["c0"], rel=1e-3)
    assert m.c_b == pytest.approx(res["c_b"], rel=1e-3)
    assert m.c_p == pytest.approx(res["c_p"], rel=1e-3)
    assert m.c_k == 0 and m.c_q == 0
    assert res["mean_rel_error"] < 0.05


# ---------------------------------------------------------------------------- clock
def test_clock_stretches_and_tau():
    c = Clock(HALF)
    c.advance(2, 0, 0)  # idle: 1 s per round
    c.advance(5, 2, 6)  # two attempts: 2 s per round
    assert [c.tau(t) for t in range(7)] == [0, 1, 2, 4, 6, 8, 9]
    assert c.busy_seconds == 6
    # memory-seconds: K = 6, 8, 10 in rounds 2..4, each 2 s long
    assert c.memory_seconds == 2 * (6 + 8 + 10)


def test_clock_first_round_reaching():
    c = Clock(HALF)
    # from round 0 with b=2 (2 s per round): τ = 0, 2, 4, 6 … ; 4.5 is first reached at round 3
    assert c.first_round_reaching(4.5, 2, 5, 0, 0, None) == 3
    assert c.first_round_reaching(4.0, 2, 5, 0, 0, None) == 2
    assert c.first_round_reaching(4.5, 2, 5, 0, 0, 2) is None  # the next event comes first
    assert c.first_round_reaching(0.5, 0, 0, 0, 0, None) == 1


def test_unit_clock_is_rounds():
    inst = Instance.from_arrays(20, [3, 2, 5], [4, 6, 2], [0, 3, 1])
    res = simulate(inst, "fcfs", time_model="unit")
    assert [res.clock.tau(t) for t in range(15)] == list(range(15))


# -------------------------------------------------------------------- timed instances
def _timed():
    # M = 10; job 0 (2, 3) at 0 s; job 1 (2, 2) at 2.5 s; job 2 (3, 2) at 2.6 s
    return Instance(10, (Job(2, 3, arrival_time=0.0), Job(2, 2, arrival_time=2.5),
                         Job(3, 2, arrival_time=2.6)))  # fmt: skip


def test_timed_arrival_release_and_every_metric():
    inst = _timed()
    res = simulate(inst, "fcfs", time_model=HALF)
    # rounds 0, 1: job 0 alone (1.5 s each): τ_1 = 1.5, τ_2 = 3.0 ≥ 2.6 → jobs 1, 2 arrive at
    # round 2.  Round 2 holds job 0 (5) + job 1 (3) = 8; job 2 (4) would make 12 > 10: waits.
    assert res.instance.arrivals.tolist() == [0, 2, 2]
    assert [(a.job, a.start, a.rounds) for a in res.schedule.attempts] == [
        (0, 0, 3), (1, 2, 2), (2, 3, 2)]  # fmt: skip
    checked(res.instance, res.schedule)
    rep = seconds_report(inst, res.schedule, HALF, realized=res.instance, clock=res.clock)
    # durations: 1.5, 1.5, 2 (b=2), 2 (b=2), 1.5 → τ = 0, 1.5, 3, 5, 7, 8.5
    assert rep.completion == (5.0, 7.0, 8.5)
    assert rep.latency == pytest.approx((5.0, 4.5, 5.9))
    assert rep.ttft == pytest.approx((1.5, 2.5, 4.4))  # τ_1 − 0, τ_3 − 2.5, τ_4 − 2.6
    assert rep.waiting == pytest.approx((0.0, 0.5, 2.4))
    assert rep.per_token == pytest.approx((5 / 3, 4.5 / 2, 5.9 / 2))
    assert rep.arrival_round == (0, 2, 2)
    m = rep.metrics
    assert m["mean_latency"] == pytest.approx(15.4 / 3)
    assert m["median_latency"] == pytest.approx(5.0)
    assert m["p95_latency"] == pytest.approx(5.0 + 0.9 * 0.9)  # between 5.0 and 5.9
    assert m["p99_latency"] == pytest.approx(5.0 + 0.98 * 0.9)
    assert m["mean_ttft"] == pytest.approx(8.4 / 3)
    assert m["p95_ttft"] == pytest.approx(2.5 + 0.9 * 1.9)
    assert m["mean_per_token"] == pytest.approx((5 / 3 + 2.25 + 2.95) / 3)
    assert m["throughput"] == pytest.approx(7 / 8.5)
    assert m["kills"] == 0 and m["killed_rounds"] == 0
    # K = 3, 4, 8, 8, 5 with d = 1.5, 1.5, 2, 2, 1.5: Σ K d = 50 over M Σ d = 85
    assert m["utilisation"] == pytest.approx(50 / 85)
    # the clock rebuilt from the schedule alone says the same
    again = seconds_report(inst, res.schedule, HALF, realized=res.instance)
    assert again.to_dict() == rep.to_dict()
    # solo bound: Σ o (c0 + c_b) = 7 · 1.5
    assert rep.bound.value == pytest.approx(10.5) and rep.bound.name == "solo"


def test_timed_instance_under_unit_is_the_ceiling_round_instance():
    inst = Instance(20, tuple(Job(2, 3, arrival_time=t) for t in (0.0, 0.2, 1.0, 2.5)))
    rounds = Instance.from_arrays(20, [2] * 4, [3] * 4, [0, 1, 1, 3])
    assert inst.arrivals.tolist() == [0, 1, 1, 3]
    for pol in ("fcfs", "sjf", "mcsf"):
        a = simulate(inst, pol, time_model="unit")
        b = simulate(rounds, pol)
        assert a.schedule.attempts == b.schedule.attempts


def test_kills_and_killed_rounds():
    inst = Instance.from_arrays(10, [2, 2], [3, 2])
    # job 0 killed after 2 rounds, restarted at 2; job 1 runs 0..1
    sched = Schedule((Attempt(0, 0, 2, False), Attempt(1, 0, 2, True), Attempt(0, 2, 3, True)),
                     10)  # fmt: skip
    checked(inst, sched)
    rep = seconds_report(inst, sched, PRESETS["unit"])
    assert rep.metrics["kills"] == 1 and rep.metrics["killed_rounds"] == 2
    assert rep.ttft == (1.0, 1.0)  # the first round of the first attempt
    assert rep.waiting == (2.0, 0.0)  # the start of the completing attempt
    assert rep.completion == (5.0, 2.0)


def test_quantile_is_linear_interpolation():
    assert quantile([1, 2, 3, 4], 0.5) == 2.5
    assert quantile([0, 10], 0.95) == pytest.approx(9.5)


def test_round_instance_alpha_is_tau_of_arrival_round():
    inst = Instance.from_arrays(10, [2, 2], [2, 2], [0, 1])
    res = simulate(inst, "fcfs", time_model=HALF)
    rep = seconds_report(inst, res.schedule, HALF, realized=res.instance, clock=res.clock)
    # round 0: job 0 alone (1.5), round 1: both (2), round 2: job 1 (1.5)
    assert rep.arrival_time == (0.0, 1.5)
    assert rep.latency == pytest.approx((3.5, 3.5))


# ----------------------------------------------------------------------------- bounds
def _min_total_latency(inst: Instance, model: TimeModel, horizon: int) -> float:
    """Brute force over start vectors (one attempt per job) of the optimal Σ E_i in seconds.

    A start vector is feasible when memory holds in every round and each job starts no
    earlier than its arrival round, the first round whose start τ_t (in *this*
    schedule's clock) reaches its arrival time.
    """
    s, o = inst.prompts.tolist(), inst.responses.tolist()
    best = np.inf
    for starts in itertools.product(range(horizon), repeat=inst.n):
        end = max(st + oo for st, oo in zip(starts, o))
        if any(
            sum(
                s[j] + t - starts[j] + 1 for j in range(inst.n) if starts[j] <= t < starts[j] + o[j]
            )
            > inst.memory
            for t in range(end)
        ):
            continue
        sched = Schedule(tuple(Attempt(j, starts[j], o[j], True) for j in range(inst.n)),
                         inst.memory)  # fmt: skip
        real = inst if not inst.is_timed else inst.realized(list(starts))
        clock = clock_of(real, sched, model)
        if inst.is_timed:
            alpha = inst.arrival_times
            if any(clock.tau(starts[j]) < alpha[j] for j in range(inst.n)):
                continue
            # the schedule's realized arrival rounds must not be after the starts
            # (τ_{start} ≥ α is exactly that)
        else:
            if any(starts[j] < inst.arrivals[j] for j in range(inst.n)):
                continue
            alpha = [clock.tau(int(a)) for a in inst.arrivals]
        total = sum(clock.tau(starts[j] + o[j]) - alpha[j] for j in range(inst.n))
        best = min(best, total)
    return best


MODELS = [
    TimeModel(c0=1, c_b=0.5),
    TimeModel(c0=0.5, c_k=0.1, c_p=0.3, c_q=0.05),
    TimeModel(c0=0.2, c_b=0.1, c_k=0.02, c_p=0.01, c_q=0.001),
]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.label())
@pytest.mark.parametrize("seed", range(4))
def test_bound_never_exceeds_brute_force_opt(model, seed):
    rng = np.random.default_rng(seed)
    n = 3
    s = rng.integers(1, 4, n).tolist()
    o = rng.integers(1, 4, n).tolist()
    M = max(a + b for a, b in zip(s, o)) + int(rng.integers(0, 4))
    timed = Instance(M, tuple(Job(s[i], o[i], arrival_time=float(rng.uniform(0, 3)))
                              for i in range(n)))  # fmt: skip
    burst = Instance.from_arrays(M, s, o)
    for inst in (timed, burst):
        # starts searched up to ⌈max α / c0⌉ + Σ o rounds (every job has arrived by then)
        late = float(inst.arrival_times.max()) / model.c0 if inst.is_timed else 0.0
        opt = _min_total_latency(inst, model, horizon=int(np.ceil(late)) + sum(o) + 1)
        lb = latency_bound(inst, model)
        assert lb.value <= opt + 1e-9, (inst.to_dict(), lb, opt)
        for pol in ("fcfs", "sjf", "mcsf"):
            res = simulate(inst, pol, time_model=model)
            rep = seconds_report(inst, res.schedule, model, realized=res.instance, clock=res.clock)
            assert rep.total_latency >= opt - 1e-9  # no policy beats the optimum


def test_unit_bound_never_exceeds_exact_opt():
    from kvopt.exact import solve

    rng = np.random.default_rng(3)
    for _ in range(4):
        n = 5
        s = rng.integers(1, 6, n).tolist()
        o = rng.integers(1, 6, n).tolist()
        a = rng.uniform(0, 6, n).tolist()
        M = max(x + y for x, y in zip(s, o)) + 3
        inst = Instance(M, tuple(Job(s[i], o[i], arrival_time=a[i]) for i in range(n)))
        res = solve(inst, time_limit=30)
        assert res.status.value == "optimal"
        opt_latency = res.objective - sum(a)  # Σ (C_i − α_i) under unit
        lb = latency_bound(inst, PRESETS["unit"])
        assert lb.value <= opt_latency + 1e-9


# ------------------------------------------------------------------------- command line
def _write(tmp_path, inst: Instance, name: str = "timed.json"):
    from kvopt.instance import save_instance

    path = tmp_path / name
    save_instance(inst, path)
    return path


def test_simulate_json_seconds_block(cli, tmp_path):
    import json

    from kvopt.instance import load_instance
    from kvopt.schedule import load_schedule
    from kvopt.serving.seconds import METRICS

    path = _write(tmp_path, _timed())
    out = tmp_path / "s.json"
    r = cli("simulate", path, "--policy", "fcfs", "--time-model", "c0=1,c_b=0.5", "--json",
            "--out", out)  # fmt: skip
    assert r.code == 0, r.err
    d = json.loads(r.out)["seconds"]
    assert list(d) == ["completion", "latency", "ttft", "arrival_round", "metrics", "bound"]
    assert list(d["metrics"]) == list(METRICS)
    assert set(d["bound"]) == {"value", "name"}
    assert d["completion"] == [5.0, 7.0, 8.5] and d["arrival_round"] == [0, 2, 2]
    # the realized instance beside the schedule; the checker accepts the pair
    real = load_instance(tmp_path / "s.realized.json")
    assert real.arrivals.tolist() == [0, 2, 2]
    checked(real, load_schedule(out))
    assert cli("check", tmp_path / "s.realized.json", out).code == 0


def test_simulate_without_time_model_has_no_seconds_block(cli):
    import json

    r = cli("simulate", "instances/random/mixed-n10.json", "--policy", "fcfs", "--json")
    assert r.code == 0 and "seconds" not in json.loads(r.out)


@pytest.mark.parametrize("value", ["nope", "c0=-1", "c0=0", "c0=1,c_k=-2"])
def test_bad_time_model_exits_2_with_one_line(cli, value):
    for cmd in ("simulate", "compare"):
        extra = ["--policy", "fcfs"] if cmd == "simulate" else ["--policies", "fcfs"]
        r = cli(cmd, "instances/random/mixed-n10.json", *extra, "--time-model", value)
        assert r.code == 2 and r.err.count("\n") == 1 and "--time-model" in r.err


def test_time_models_command(cli):
    import json

    r = cli("time-models", "--json")
    assert r.code == 0
    names = [m["name"] for m in json.loads(r.out)["time_models"]]
    assert names == list(PRESETS)
    assert cli("time-models").code == 0


def test_compare_in_seconds(cli, tmp_path):
    import json

    path = _write(tmp_path, _timed())
    r = cli("compare", path, "--policies", "fcfs,sjf", "--time-model", "c0=1,c_b=0.5", "--json")
    assert r.code == 0, r.err
    ic = json.loads(r.out)["instances"][0]
    assert ic["latency_bound"] == {"value": 10.5, "name": "solo"}
    for row in ic["policies"]:
        assert row["latency"]["ratio"] >= 1
    r = cli("compare", path, "--policies", "fcfs", "--time-model", "c0=1,c_b=0.5", "--exact")
    assert r.code == 2 and "--exact" in r.err


# ------------------------------------------------------------------ the engine's clock
@pytest.mark.parametrize("seed", range(6))
def test_engine_clock_matches_the_schedule_and_releases_at_the_first_round(seed):
    """The clock the engine builds stretch by stretch equals the one rebuilt from the
    schedule, and every timed job arrives at the first round whose start reaches it."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 25))
    s = rng.integers(1, 30, n).tolist()
    o = rng.integers(1, 30, n).tolist()
    M = max(a + b for a, b in zip(s, o)) * 2
    model = TimeModel(c0=float(rng.uniform(0.01, 1)), c_b=float(rng.uniform(0, 0.1)),
                      c_k=float(rng.uniform(0, 0.01)), c_p=float(rng.uniform(0, 0.05)),
                      c_q=float(rng.uniform(0, 0.001)))  # fmt: skip
    at = np.sort(rng.uniform(0, 40, n)).tolist()
    inst = Instance(M, tuple(Job(s[i], o[i], arrival_time=at[i]) for i in range(n)))
    for pol in ("fcfs", "sjf", "svf", "mcsf", "rect", "route-online"):
        try:
            res = simulate(inst, pol, time_model=model)
        except InputError:
            continue  # the policy's class excludes the instance
        real = res.instance
        rebuilt = clock_of(real, res.schedule, model)
        end = max(res.completion_times)
        for t in range(end + 1):
            assert res.clock.tau(t) == pytest.approx(rebuilt.tau(t), rel=1e-9, abs=1e-9)
        for j, a in enumerate(real.arrivals.tolist()):
            assert res.clock.tau(a) >= at[j] - 1e-9
            assert a == 0 or res.clock.tau(a - 1) < at[j]


def test_srpt_total_by_hand():
    from kvopt.serving.seconds import srpt_total

    # job 0 (work 3) at 0, job 1 (work 1) at 1: job 1 preempts, done at 2; job 0 at 4
    assert srpt_total(np.array([3.0, 1.0]), np.array([0.0, 1.0])) == 6.0
    # an idle gap: job 1 released at 5 after job 0 finished at 1
    assert srpt_total(np.array([1.0, 2.0]), np.array([0.0, 5.0])) == 1.0 + 7.0
    # no releases: shortest first, 1 + 3 + 6
    assert srpt_total(np.array([3.0, 1.0, 2.0]), np.zeros(3)) == 10.0


def test_srpt_bound_sees_overload():
    # ten identical jobs of area 26 in M = 8, one per second: the server needs 26/8 s of work
    # per job, so the queue grows: SRPT gives Σ C = Σ_k (3.25 k) and Σ E ≈ 3.4 × solo
    inst = Instance(8, tuple(Job(4, 4, arrival_time=float(k)) for k in range(10)))
    lb = latency_bound(inst, TimeModel(c0=1.0, c_b=1e-9))
    assert lb.candidates["srpt"] == pytest.approx(3.25 * 55 - 45, abs=1e-6)
    assert lb.value >= lb.candidates["srpt"] > 3 * lb.candidates["solo"]


def test_unit_clock_fast_path_is_the_general_formula():
    """Issue 54: ``Clock.advance`` under ``unit`` skips the general sums; the same floats."""
    import random

    rng = random.Random(3)
    fast, slow = Clock(), Clock()
    slow._unit = False  # the general formula with the unit coefficients
    for _ in range(3000):
        to = fast.now + rng.choice([1, 2, 3, 17, 1000, 123456])
        b = rng.choice([0, 0, 1, 5, 40])
        k0 = 0 if not b else rng.randint(b, 10**7)
        p = rng.choice([0, 0, 300])
        for c in (fast, slow):
            c.advance(to, b, k0, p, p * p)
    assert fast.tau_now == slow.tau_now
    assert fast.busy_seconds == slow.busy_seconds
    assert fast.memory_seconds == slow.memory_seconds
    assert (fast._t, fast._tau, fast._b, fast._k0) == (slow._t, slow._tau, slow._b, slow._k0)
