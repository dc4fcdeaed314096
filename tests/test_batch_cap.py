"""The batch cap ``max_batch`` (SPEC §10.1) in the checker, the engine and every policy; the
``admission=`` parameter; predictions that stay predictions."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from kvopt import BlindPolicy, simulate
from kvopt.conformance import _predictions_failure, check_policy
from kvopt.engine import fastpath
from kvopt.errors import InputError, PolicyError, UserCodeError
from kvopt.instance import Instance, Job
from kvopt.memory import memory_segments
from kvopt.policy import POLICIES, resolve_policy
from kvopt.policy.sps import peak_one, sps_plan
from kvopt.policy.svf import SVF1Bit
from kvopt.schedule import Attempt, Schedule, check_schedule

ROOT = Path(__file__).resolve().parent.parent

#: every built-in policy, each admission= value where it has one, and svf-1bit with T given
VARIANTS = (
    [(name, {}) for name in sorted(POLICIES)]
    + [
        (name, {"admission": a})
        for name in ("svf", "svf-1bit", "mcsf", "mc-benchmark", "sjf")
        for a in ("future", "vllm")
    ]
    + [("svf-1bit", {"T": 9}), ("svf-1bit", {"admission": "vllm", "T": 65536})]
)
#: the built-in policies that plan with predicted_response (SPEC §10.1)
PREDICTING = [(n, p) for n, p in VARIANTS if POLICIES[n].predictions]


def most_running(sched: Schedule, inst: Instance) -> int:
    """The largest number of attempts running in one round (from the checker's segments)."""
    job, start, rounds, _ = sched.columns()
    if not len(job):
        return 0
    _, _, K = memory_segments(inst.prompts, job, start, rounds)
    return int(K.max())


def test_the_predicting_policies_are_the_expected_ones():
    assert {n for n, _ in PREDICTING} == {"svf", "svf-1bit", "mcsf", "mc-benchmark", "sjf"}


# --------------------------------------------------------------------------- the checker


def test_checker_rejects_a_round_over_the_cap():
    inst = Instance.from_arrays(100, [1, 2, 3], [3, 4, 5], max_batch=2)
    sched = Schedule(
        [Attempt(0, 0, 3, True), Attempt(1, 0, 4, True), Attempt(2, 1, 5, True)], memory=100
    )
    res = check_schedule(inst, sched)
    assert not res.valid
    (err,) = res.errors
    assert (err.rule, err.job, err.round, err.amount) == ("max-batch", 2, 1, 1)
    assert "3 attempts run (jobs 0, 1, 2) > max_batch 2" in err.message
    assert check_schedule(inst.replace(max_batch=3), sched).valid
    assert check_schedule(inst.replace(max_batch=None), sched).valid
    # back to back is within a cap of one (an attempt ends before the next round)
    serial = Schedule([Attempt(0, 0, 3, True), Attempt(1, 3, 4, True), Attempt(2, 7, 5, True)],
                      memory=100)  # fmt: skip
    assert check_schedule(inst.replace(max_batch=1), serial).valid


def test_kvopt_check_exits_1_on_an_over_cap_round(tmp_path):
    inst = Instance.from_arrays(20, [1, 1], [2, 2], max_batch=1, name="c")
    ipath, spath = tmp_path / "c.json", tmp_path / "s.json"
    ipath.write_text(json.dumps(inst.to_dict()))
    sched = simulate(inst.replace(max_batch=None), "fcfs").schedule
    assert most_running(sched, inst) == 2
    from kvopt.schedule import save_schedule

    save_schedule(sched, spath)
    proc = subprocess.run([sys.executable, "-m", "kvopt", "check", str(ipath), str(spath)],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "max_batch 1" in proc.stdout + proc.stderr


# --------------------------------------------------------------------------- the engine


class Greedy(BlindPolicy):
    """Starts every visible job at once: breaks any cap below n."""

    name = "greedy-all"

    def on_events(self, now, events, view, act):
        for j in view.jobs:
            if j not in view.running and j not in view.done:
                act.start(j)


def test_engine_refuses_a_start_beyond_the_cap():
    inst = Instance.from_arrays(40, [1, 1, 1], [2, 2, 2], max_batch=2)
    with pytest.raises((PolicyError, UserCodeError), match=r"job 2, round 0.*max_batch = 2"):
        simulate(inst, Greedy())
    assert simulate(inst.replace(max_batch=3), Greedy()).makespan == 2


def test_view_reports_the_free_slots():
    seen = []

    class Probe(BlindPolicy):
        def on_events(self, now, events, view, act):
            seen.append((view.max_batch, view.free_slots, view.has_slot()))
            for j in view.jobs:
                if view.has_slot() and j not in view.running and j not in view.done:
                    act.start(j)

    simulate(Instance.from_arrays(40, [1, 1, 1], [2, 3, 2], max_batch=2), Probe())
    # round 0: two free; round 2: job 0 completed, job 1 runs: one free
    assert seen[0] == (2, 2, True) and seen[1] == (2, 1, True)
    seen.clear()
    simulate(Instance.from_arrays(40, [1], [2]), Probe())
    assert seen[0] == (None, None, True)


def test_compiled_loop_is_not_used_under_a_cap(monkeypatch):
    from kvopt.generators import generate

    inst = generate("arrivals", 3, n=12, memory=40, rate=0.5).replace(max_batch=2)
    got = simulate(inst, "route-online")
    assert most_running(got.schedule, inst) <= 2
    monkeypatch.setattr(fastpath, "ENABLED", False)
    assert simulate(inst, "route-online").schedule.attempts == got.schedule.attempts


# --------------------------------------------------------------------------- every policy


def _capped_case(name: str, seed: int, cap: int, predictions: bool) -> Instance:
    rng = np.random.default_rng(seed)
    inst = POLICIES[name].default_space(n_max=8, memory_max=40).sample(rng)
    if predictions:
        inst = inst.replace(jobs=tuple(
            dataclasses.replace(j, predicted_response=int(rng.integers(1, inst.memory)))
            for j in inst.jobs))  # fmt: skip
    return inst.replace(max_batch=cap)


@pytest.mark.parametrize(("name", "params"), VARIANTS, ids=[f"{n}{p}" for n, p in VARIANTS])
def test_every_policy_respects_the_cap(name, params):
    ref = resolve_policy(name, params)
    ran = []

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(seed=st.integers(0, 2**31), cap=st.integers(1, 3), pred=st.booleans())
    def check(seed, cap, pred):
        inst = _capped_case(name, seed, cap, pred)
        if ref.rule(inst):
            return
        ran.append(cap)
        note(json.dumps(inst.to_dict()))
        res = simulate(inst, ref, seed=seed if ref.seeded else None)  # checked, cap included
        assert check_schedule(inst, res.schedule).valid
        assert most_running(res.schedule, inst) <= cap

    check()
    assert len(ran) >= 10, f"only {len(ran)} instances in the policy's class"


def test_sps_plan_under_a_cap_never_runs_more_than_it():
    for p, tau, k, M in ((1, 6, 20, 40), (2, 9, 30, 60), (3, 4, 9, 25), (1, 1, 5, 3)):
        assert sps_plan(p, tau, k, M) == sps_plan(p, tau, k, M, True, None)
        for B in (1, 2, 3, 5, 8):
            for stagger in (True, False):
                plan = sps_plan(p, tau, k, M, stagger, B)
                assert plan is not None
                g, d = plan
                assert 1 <= g and g * -(-tau // d) <= B
                assert g * peak_one(p, tau, d) <= M or g * (p + tau) <= M


def test_pack_and_schedule_widens_rectangles_to_m_over_b():
    from kvopt.policy.pack_and_schedule import cap_width, pack_and_schedule_starts

    assert cap_width(40, None) == 0 and cap_width(40, 3) == 14 and cap_width(40, 1) == 40
    inst = Instance.from_arrays(40, [1] * 6, [2] * 6, max_batch=2)
    starts = pack_and_schedule_starts(inst)
    res = simulate(inst, "pack-and-schedule")
    assert [res.schedule.attempts[k].start for k in range(6)] == sorted(starts)
    assert most_running(res.schedule, inst) <= 2


# --------------------------------------------------------------------------- predictions


def _with_truths(inst: Instance, truths: list[int]) -> Instance:
    return inst.replace(jobs=tuple(dataclasses.replace(j, response=o)
                                   for j, o in zip(inst.jobs, truths)))  # fmt: skip


@st.composite
def _pairs(draw):
    """An instance with predictions on every job and a second one with other true responses."""
    M = draw(st.integers(6, 40))
    jobs, other = [], []
    for _ in range(draw(st.integers(1, 7))):
        s = draw(st.integers(1, M - 1))
        jobs.append(Job(s, draw(st.integers(1, M - s)), draw(st.integers(0, 6)), None,
                        draw(st.integers(1, M))))  # fmt: skip
        other.append(draw(st.integers(1, M - s)))
    cap = draw(st.one_of(st.none(), st.integers(1, 3)))
    inst = Instance(M, tuple(jobs), name="pair", max_batch=cap)
    return inst, _with_truths(inst, other)


def _decisions_before_first_completion(inst, ref):
    res = simulate(inst, ref, trace=True)
    first = min((t for t, what, _, _ in res.trace if what == "completion"), default=None)
    return first, [r for r in res.trace if r[1] in ("start", "kill") and r[0] < first]


@pytest.mark.parametrize(("name", "params"), PREDICTING, ids=[f"{n}{p}" for n, p in PREDICTING])
def test_predictions_stay_predictions(name, params):
    """SPEC §10.1: same predictions, other true responses: the same decisions (starts and
    kills) in every round before the first completion of either run."""
    ref = resolve_policy(name, params)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(pair=_pairs())
    def check(pair):
        a, b = pair
        note(json.dumps(a.to_dict()))
        note(json.dumps(b.to_dict()))
        fa, da = _decisions_before_first_completion(a, ref)
        fb, db = _decisions_before_first_completion(b, ref)
        first = min(fa, fb)
        assert [d for d in da if d[0] < first] == [d for d in db if d[0] < first]

    check()


class OldSVF1Bit(SVF1Bit):
    """``svf-1bit`` as it was before SPEC §10.1: the bit and the admission from the truth."""

    def priority(self, view, j):
        T, s, o = view.memory, view.prompts[j], view.responses[j]
        proxy = T**0.25 if o * o <= T else T**0.75
        return s * proxy + proxy * (proxy + 1) / 2

    def length(self, view, j):
        return view.responses[j]


def test_the_conformance_check_catches_true_lengths():
    ref = resolve_policy(OldSVF1Bit)
    assert ref.spec.predictions  # declared by the class it derives from
    failures = [_predictions_failure(ref, inst, 0) for inst in _leaky_cases()]
    assert any(failures), "the predictions check did not catch svf-1bit on true lengths"
    assert all(_predictions_failure(resolve_policy("svf-1bit"), i, 0) is None
               for i in _leaky_cases())  # fmt: skip


def _leaky_cases():
    from kvopt.generators import generate

    return [generate("random", s, n=6, memory=40) for s in range(12)]


def test_conformance_report_has_the_predictions_check():
    rep = check_policy("mcsf", shrink_seconds=1)
    by = {c.name: c for c in rep.checks}
    assert by["predictions"].status == "passed" and by["predictions"].runs > 0
    rep = check_policy("greedy-area", shrink_seconds=1)
    assert {c.name: c for c in rep.checks}["predictions"].status == "n/a"


# --------------------------------------------------------------------------- admission


def _attempts(res):
    return sorted((a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts)


def test_admission_vllm_by_hand():
    """M = 10; jobs (s, o) = (2, 3), (2, 4), (3, 2); mcsf order: 2, 0, 1.

    vllm, no cap: round 0 admits 2 (3+1 = 4), 0 (+3 = 7), 1 (+3 = 10 ≤ 10).  Round 1
    holds 5 + 4 + 4 = 13 > 10: preempt the newest (all from round 0; ties: the later in
    mcsf's order, job 1); 9 + 3 > 10 keeps it waiting.  Round 2: job 2 completes, job 0
    holds 5, 5 + 3 ≤ 10: job 1 restarts and completes at 6.  With max_batch = 2 job 1
    waits for the first completion instead (round 2), and nothing is preempted."""
    inst = Instance.from_arrays(10, [2, 2, 3], [3, 4, 2])
    vllm = simulate(inst, "mcsf", {"admission": "vllm"})
    assert _attempts(vllm) == [(0, 0, 3, True), (1, 0, 1, False), (1, 2, 4, True),
                               (2, 0, 2, True)]  # fmt: skip
    capped = simulate(inst.replace(max_batch=2), "mcsf", {"admission": "vllm"})
    assert _attempts(capped) == [(0, 0, 3, True), (1, 2, 4, True), (2, 0, 2, True)]
    # the same order under the exact future check never preempts
    assert all(a.completed for a in simulate(inst, "mcsf").schedule.attempts)
    # sjf with admission=vllm is fcfs's machinery (killed jobs to the front): same here
    assert _attempts(simulate(inst, "sjf")) == _attempts(vllm)
    # sjf with admission=future is mcsf
    assert _attempts(simulate(inst, "sjf", {"admission": "future"})) == _attempts(
        simulate(inst, "mcsf")
    )


def test_admission_defaults_and_listing():
    d = {n: {p.name: p.default for p in POLICIES[n].params} for n in POLICIES}
    assert d["fcfs"]["admission"] == d["sjf"]["admission"] == "vllm"
    assert d["svf"]["admission"] == d["svf-1bit"]["admission"] == d["mcsf"]["admission"] == "future"
    proc = subprocess.run([sys.executable, "-m", "kvopt", "policies", "--json"],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    listed = {p["name"]: p for p in json.loads(proc.stdout)["policies"]}
    for name in ("fcfs", "sjf", "svf", "svf-1bit", "mcsf"):
        assert listed[name]["params"]["admission"]["choices"] == ["future", "vllm"]
    assert listed["mcsf"]["predictions"] and not listed["greedy-area"]["predictions"]


@pytest.mark.parametrize(
    ("policy", "value", "words"),
    [
        ("svf", "fifo", "--param admission: must be one of future, vllm, got 'fifo'"),
        (
            "fcfs",
            "future",
            "--param admission: fcfs is non-clairvoyant and takes only admission=vllm",
        ),
    ],
)
def test_bad_admission_exits_2_one_line(policy, value, words):
    path = ROOT / "instances" / "random" / "mixed-n10.json"
    proc = subprocess.run([sys.executable, "-m", "kvopt", "simulate", str(path), "--policy", policy,
                           "--param", f"admission={value}"], capture_output=True, text=True,
                          cwd=ROOT)  # fmt: skip
    assert proc.returncode == 2 and not proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0]
    with pytest.raises(InputError):
        resolve_policy(policy, {"admission": value}).make()
