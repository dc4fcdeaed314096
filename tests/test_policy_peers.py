"""The peers' policies of issue 69: ``sorted-f``, ``a-max``, ``a-min``, ``wait``, ``nested-wait``,
interval predictions in the instance format, the ``intervals`` family, the ``interval-blind``
conformance check and the claims (SPEC §6.4 of docs/spec.md)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.claim import CLAIMS, a_max_bound, a_min_bound, interval_ratio
from kvopt.conformance import _interval_blind_failure, check_policy, with_intervals
from kvopt.engine.contract import ClairvoyantView
from kvopt.errors import InputError
from kvopt.generators import generate
from kvopt.instance import Instance, Job, load_instance
from kvopt.policy import POLICIES, resolve_policy
from kvopt.policy.mcsf import MCSF
from kvopt.policy.sorted_f import best_batch, sorted_f_batches
from kvopt.schedule import check_schedule
from kvopt.simulation import simulate

REPO = Path(__file__).resolve().parent.parent
PEERS = ("sorted-f", "a-max", "a-min", "wait", "nested-wait")


@st.composite
def offline_instances(draw, with_intervals: bool = False):
    M = draw(st.integers(6, 40))
    n = draw(st.integers(1, 7))
    jobs = []
    for _ in range(n):
        s = draw(st.integers(1, M - 1))
        o = draw(st.integers(1, M - s))
        iv = None
        if with_intervals:
            lo = draw(st.integers(1, o + 3))
            iv = (lo, lo + draw(st.integers(0, 2 * o)))
        jobs.append(Job(s, o, predicted_interval=iv))
    return Instance(M, tuple(jobs))


# --------------------------------------------------------------------------- registry


def test_registered_with_source_class_and_params():
    classes = {"sorted-f": "clairvoyant", "a-max": "prediction-based",
               "a-min": "prediction-based", "wait": "clairvoyant",
               "nested-wait": "non-clairvoyant"}  # fmt: skip
    for name, knowledge in classes.items():
        spec = POLICIES[name]
        assert spec.knowledge == knowledge
        assert spec.to_dict()["knowledge"] == knowledge
        assert "arXiv" in spec.source and "reconstruct" in spec.source
        assert spec.policy_class.__doc__ or sys.modules[spec.policy_class.__module__].__doc__
        assert "reconstructed" in sys.modules[spec.policy_class.__module__].__doc__.lower()
    assert POLICIES["mcsf"].knowledge == "clairvoyant"
    assert POLICIES["fcfs"].knowledge == "non-clairvoyant"
    assert [p.name for p in POLICIES["nested-wait"].params] == ["threshold", "buffer", "base",
                                                                "first"]  # fmt: skip


def test_kvopt_policies_lists_them():
    out = subprocess.run([sys.executable, "-m", "kvopt", "policies", "--json"], capture_output=True,
                         text=True, check=True, cwd=REPO)  # fmt: skip
    listed = {p["name"]: p for p in json.loads(out.stdout)["policies"]}
    for name in PEERS:
        assert name in listed
    assert listed["a-min"]["knowledge"] == "prediction-based"
    assert listed["sorted-f"]["claims"] == ["sorted-f"]


# --------------------------------------------------------------------------- valid schedules


@settings(max_examples=40, deadline=None)
@given(offline_instances(), st.sampled_from(PEERS))
def test_every_schedule_checks_without_intervals(inst, name):
    res = simulate(inst, name)
    assert check_schedule(inst, res.schedule).valid
    assert None not in res.schedule.completion_times(inst.n)


@settings(max_examples=40, deadline=None)
@given(offline_instances(with_intervals=True), st.sampled_from(("a-max", "a-min")))
def test_every_schedule_checks_with_intervals_that_may_miss(inst, name):
    res = simulate(inst, name)
    assert check_schedule(inst, res.schedule).valid


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(("wait", "nested-wait")))
def test_online_peers_with_arrivals(seed, name):
    inst = generate("arrivals", seed, n=8, memory=40, rate=0.3)
    res = simulate(inst, name)
    assert check_schedule(inst, res.schedule).valid


def test_a_max_never_kills_when_every_interval_holds_its_truth():
    for seed in range(15):
        inst = generate("intervals", seed, n=8, memory=40, width=1.0, miss=0.0)
        assert simulate(inst, "a-max").stats.kills == 0


def test_wait_and_sorted_f_never_kill():
    for seed in range(10):
        inst = generate("random", seed, n=8, memory=40)
        assert simulate(inst, "sorted-f").stats.kills == 0
        assert simulate(inst, "sorted-f", params={"pipeline": True}).stats.kills == 0
        assert simulate(inst, "wait").stats.kills == 0


# --------------------------------------------------------------------------- Sorted-F


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 9), st.integers(1, 9)), min_size=1, max_size=7),
       st.integers(10, 30), st.one_of(st.none(), st.integers(1, 4)))  # fmt: skip
def test_best_batch_is_the_least_f_feasible_batch(jobs, memory, cap):
    """Brute force over every batch with Σ(s+o) ≤ M and, under a cap, |X| ≤ B (SPEC §10.1)."""
    jobs = [(s, o) for s, o in jobs if s + o <= memory] or [(1, 1)]
    s, o = [j[0] for j in jobs], [j[1] for j in jobs]
    pick = best_batch(s, o, memory, cap)
    assert sum(s[i] + o[i] for i in pick) <= memory
    assert cap is None or len(pick) <= cap
    f = Fraction(sum(o[i] for i in pick), len(pick) ** 2)
    for k in range(1, (len(jobs) if cap is None else min(cap, len(jobs))) + 1):
        for combo in itertools.combinations(range(len(jobs)), k):
            if sum(s[i] + o[i] for i in combo) <= memory:
                assert f <= Fraction(sum(o[i] for i in combo), k * k)


def test_sorted_f_partition_is_feasible_and_sorted():
    inst = generate("random", 5, n=12, memory=48)
    s, o = inst.prompts.tolist(), inst.responses.tolist()
    batches = sorted_f_batches(s, o, inst.memory)
    assert sorted(j for b in batches for j in b) == list(range(inst.n))
    fs = [Fraction(sum(o[j] for j in b), len(b) ** 2) for b in batches]
    assert fs == sorted(fs)
    assert all(sum(s[j] + o[j] for j in b) <= inst.memory for b in batches)
    res = simulate(inst, "sorted-f")
    starts = {a.job: a.start for a in res.schedule.attempts}
    for b in batches:  # a batch starts whole
        assert len({starts[j] for j in b}) == 1


def test_sorted_f_under_a_cap_runs_batches_of_at_most_b():
    """The cap is a second knapsack constraint: batches of at most B jobs, each started
    whole when nothing runs (so never beyond the free slots)."""
    base = generate("random", 5, n=12, memory=48)
    s, o = base.prompts.tolist(), base.responses.tolist()
    assert max(len(b) for b in sorted_f_batches(s, o, base.memory)) > 2  # the cap binds
    inst = base.replace(max_batch=2)
    batches = sorted_f_batches(s, o, inst.memory, 2)
    assert sorted(j for b in batches for j in b) == list(range(inst.n))
    assert all(len(b) <= 2 and sum(s[j] + o[j] for j in b) <= inst.memory for b in batches)
    res = simulate(inst, "sorted-f")
    assert check_schedule(inst, res.schedule).valid
    by_start: dict[int, set[int]] = {}
    for a in res.schedule.attempts:
        by_start.setdefault(a.start, set()).add(a.job)
    assert [by_start[t] for t in sorted(by_start)] == [set(b) for b in batches]


# --------------------------------------------------------------------------- blindness


def _decisions_until_first_completion(inst, name):
    res = simulate(inst, name, trace=True)
    first = min(t for t, what, _, _ in res.trace if what == "completion")
    return [r for r in res.trace if r[1] in ("start", "kill") and r[0] < first]


@pytest.mark.parametrize("name", ["a-max", "a-min"])
def test_same_intervals_other_truths_same_attempts_until_first_completion(name):
    """Issue 69's acceptance: two instances with the same intervals and different true lengths
    inside them start the same attempts until the first completion."""
    a = Instance(30, (Job(4, 6, predicted_interval=(3, 9)), Job(5, 2, predicted_interval=(2, 8)),
                      Job(3, 8, predicted_interval=(4, 12)), Job(6, 5, predicted_interval=(2, 10)),
                      Job(2, 3, predicted_interval=(1, 6))))  # fmt: skip
    b = a.replace(jobs=tuple(j.__class__(j.prompt, r, predicted_interval=j.predicted_interval)
                             for j, r in zip(a.jobs, (9, 8, 4, 10, 6))))  # fmt: skip
    da, db = _decisions_until_first_completion(a, name), _decisions_until_first_completion(b, name)
    first = min(
        min(t for t, w, _, _ in simulate(x, name, trace=True).trace if w == "completion")
        for x in (a, b)
    )
    assert [d for d in da if d[0] < first] == [d for d in db if d[0] < first]
    assert any(d[1] == "start" for d in da)


@settings(max_examples=30, deadline=None)
@given(offline_instances(), st.integers(0, 1000), st.sampled_from(("a-max", "a-min")))
def test_interval_blind_holds(inst, seed, name):
    first, second = with_intervals(inst, seed)
    assert [j.predicted_interval for j in first.jobs] == [j.predicted_interval for j in second.jobs]
    assert all(lo <= j.response <= hi for j in first.jobs for lo, hi in [j.predicted_interval])
    assert _interval_blind_failure(resolve_policy(name), inst, seed) is None


class _PeeksAtTruth(MCSF):
    """Says it plans from intervals but orders by the true length (view.predicted is the
    truth when the instance has no predicted_response): the check must catch it."""

    name = "peeks"
    uses_intervals = True


def test_interval_blind_check_catches_a_policy_that_reads_the_truth(tmp_path):
    rep = check_policy(_PeeksAtTruth, out=tmp_path)
    check = {c.name: c for c in rep.checks}["interval-blind"]
    assert check.status == "failed"
    assert "reads true lengths" in check.message
    assert (tmp_path / "interval-blind.json").is_file()


@pytest.mark.parametrize("name", PEERS)
def test_conformance_battery_passes(name, tmp_path):
    rep = check_policy(name, out=tmp_path)
    assert rep.passed, [c.to_dict() for c in rep.checks if c.status != "passed"]
    applies = {c.name: c.applicable for c in rep.checks}
    assert applies["interval-blind"] == (name in ("a-max", "a-min"))


def test_view_exposes_intervals_not_only_truth():
    seen = {}

    class Probe(MCSF):
        def setup(self, view: ClairvoyantView) -> None:
            seen.update({j: view.intervals[j] for j in view.jobs})
            super().setup(view)

    inst = Instance(20, (Job(2, 5, predicted_interval=(3, 7)), Job(3, 4, predicted_response=6)))
    simulate(inst, Probe)
    assert seen == {0: (3, 7), 1: (6, 6)}


# --------------------------------------------------------------------------- instance format


@settings(max_examples=60, deadline=None)
@given(offline_instances(with_intervals=True))
def test_intervals_round_trip(inst):
    d = inst.to_dict()
    assert all(isinstance(j["predicted_interval"], list) for j in d["jobs"])
    assert Instance.from_dict(json.loads(json.dumps(d))) == inst


def test_existing_files_round_trip_identically():
    for path in sorted((REPO / "instances" / "random").glob("*.json")):
        raw = json.loads(path.read_text())
        assert load_instance(path).to_dict() == raw
        assert "predicted_interval" not in json.dumps(raw)


@pytest.mark.parametrize(("value", "rule"), [
    ([3, 2], "predicted_interval: needs lo <= hi, got [3, 2]"),
    ([0, 2], "predicted_interval[0]: must be an integer >= 1, got 0"),
    ([1.0, 2], "predicted_interval[0]: must be an integer >= 1, got float 1.0"),
    ([1, 2, 3], "predicted_interval: must be a list of two integers [lo, hi], got a list of length 3"),
    (5, "predicted_interval: must be a list of two integers [lo, hi], got 5"),
    ([1, True], "predicted_interval[1]: must be an integer >= 1, got boolean true"),
])  # fmt: skip
def test_bad_intervals_name_file_field_and_rule(tmp_path, value, rule):
    bad = {"format": "kvopt.instance", "version": 1, "memory": 20,
           "jobs": [{"prompt": 2, "response": 3, "predicted_interval": value}]}  # fmt: skip
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(InputError) as err:
        load_instance(path)
    assert str(err.value) == f"{path}: jobs[0].{rule}"
    cli = subprocess.run([sys.executable, "-m", "kvopt", "simulate", str(path), "--policy", "a-max"],
                         capture_output=True, text=True, cwd=REPO)  # fmt: skip
    assert cli.returncode == 2 and cli.stdout == ""
    assert cli.stderr.count("\n") == 1 and rule in cli.stderr


# --------------------------------------------------------------------------- generator


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.floats(0, 3))
def test_calibrated_intervals_contain_the_truth(seed, width):
    inst = generate("intervals", seed, n=8, memory=48, width=width)
    for j in inst.jobs:
        lo, hi = j.predicted_interval
        assert 1 <= lo <= j.response <= hi <= inst.memory - j.prompt
    assert generate("intervals", seed, n=8, memory=48, width=width) == inst


def test_miscalibrated_intervals_miss():
    inst = generate("intervals", 4, n=40, memory=64, width=0.5, miss=1.0)
    misses = sum(not lo <= j.response <= hi for j in inst.jobs for lo, hi in [j.predicted_interval])
    assert misses >= 30  # every job that has room on one side misses
    with pytest.raises(InputError, match="--param miss"):
        generate("intervals", 1, miss=2.0)


# --------------------------------------------------------------------------- claims


def test_claims_registered_with_their_forms():
    for cid in ("sorted-f", "a-max", "a-min"):
        c = CLAIMS[cid]
        assert c.policies == (cid,) and c.reconstruction and "reconstruction" in c.reconstructed
        assert cid in POLICIES[cid].claims
    assert CLAIMS["sorted-f"].bound == 48.0
    hull = Instance.from_arrays(40, [3, 3, 3], [2, 8, 4])  # u/l = 4
    assert interval_ratio(hull) == 4
    assert a_max_bound(hull) == pytest.approx(4 * 5 / 2)
    assert a_min_bound(hull) == pytest.approx(4 * (1 + 2))
    exact = Instance.from_arrays(40, [3, 3], [5, 5])
    assert a_max_bound(exact) == 1.0 and a_min_bound(exact) == 4.0
    given_iv = Instance(
        40, (Job(3, 5, predicted_interval=(2, 10)), Job(3, 4, predicted_interval=(4, 6)))
    )
    assert interval_ratio(given_iv) == 5
    assert (
        CLAIMS["a-max"].rule(Instance.from_arrays(40, [3, 4], [2, 8])) is not None
    )  # prompts differ
