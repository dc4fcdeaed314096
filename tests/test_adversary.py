"""The engine's adversary hook and the ``online-sqrt-n`` adversary (SPEC §7, Jaillet et al.)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from kvopt.adversary import (
    SqrtNAdversary,
    half_sqrt_ceil,
    run_sqrt_n,
    sqrt_n_instance,
    total_latency,
)
from kvopt.engine import COMPLETION, BlindPolicy, ClairvoyantPolicy
from kvopt.errors import InputError, PolicyError
from kvopt.instance import Instance
from kvopt.policy import POLICIES
from kvopt.schedule import check_schedule
from kvopt.simulation import simulate

ONLINE = [name for name in POLICIES if POLICIES[name].check is None]


def _rows(res):
    return [(a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts]


# --------------------------------------------------------------------------- online-sqrt-n


def test_half_sqrt_ceil_is_exact():
    for M in range(1, 3000):
        k = half_sqrt_ceil(M)
        assert 4 * k * k >= M and (k == 0 or 4 * (k - 1) ** 2 < M)
    assert [half_sqrt_ceil(M) for M in (4, 16, 36, 64, 100, 102)] == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("policy", ["fcfs", "mcsf", "route-online", "greedy-area"])
@pytest.mark.parametrize("memory", [4, 16, 50])
def test_sqrt_n_run_checks_and_replays(policy, memory):
    res = run_sqrt_n(policy, memory, trace=True)
    inst = res.instance
    assert inst.n == memory // 2 + 1 and inst.memory == memory
    assert inst.meta["adversary"] == "online-sqrt-n" and inst.meta["released"] == memory // 2
    b = min(a.start for a in res.schedule.attempts if a.job == 0)
    r = b + memory - half_sqrt_ceil(memory)
    assert r > b
    assert inst.arrivals.tolist() == [0] + [r] * (memory // 2)
    assert inst.prompts.tolist() == [1] * inst.n
    assert inst.responses.tolist() == [memory - 1] + [1] * (memory // 2)
    cr = check_schedule(inst, res.schedule)
    assert cr.valid, cr.errors
    assert list(cr.completion_times) == list(res.completion_times)
    # the final instance replays as a normal instance: same schedule, same trace
    again = simulate(inst, policy, trace=True)
    assert _rows(again) == _rows(res) and again.trace == res.trace
    assert total_latency(res) == sum(res.completion_times) - memory // 2 * r


def test_sqrt_n_latency_grows_like_sqrt_n_for_fcfs():
    # fcfs starts the long job at 0; at least ~M/2 - M/16 shorts wait about sqrt(M)/2
    for M in (64, 256):
        res = run_sqrt_n("fcfs", M)
        k = half_sqrt_ceil(M)
        shorts = [c - (M - k) for c in res.completion_times[1:]]
        assert sum(1 for x in shorts if x >= k) >= M // 2 - M // 16 - 1


def test_sqrt_n_rejects_bad_memory_and_instance():
    for M in (2, 3, 15, 0, "8"):
        with pytest.raises(InputError, match="memory: must be an even integer >= 4"):
            sqrt_n_instance(M)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="runs on sqrt_n_instance"):
        simulate(sqrt_n_instance(8), "fcfs", adversary=SqrtNAdversary(16))


@pytest.mark.parametrize("policy", sorted(set(POLICIES) - set(ONLINE)))
def test_offline_policies_are_refused_before_the_run(policy):
    # (rect is refused by its own rule already: the long job is small and response-heavy)
    with pytest.raises(InputError, match=r"--policy: policy '.*' applies to .*(offline|heavy)"):
        run_sqrt_n(policy, 16)
    spec = POLICIES[policy]
    fits = [
        i
        for i in (
            Instance.from_arrays(16, [1, 2], [1, 1]),
            Instance.from_arrays(16, [1, 2], [2, 3]),
        )
        if spec.check(i, spec.resolve_params(None)) is None
    ]
    inst = fits[0]  # an instance of the policy's class
    with pytest.raises(InputError, match=r"offline\) \(an adversary releases jobs"):
        simulate(inst, policy, adversary=Recorder())


def test_policy_class_is_checked_on_the_final_instance(monkeypatch):
    # a class rule that only the released jobs break is reported after the run
    from kvopt.policy import PolicySpec

    spec = POLICIES["fcfs"]
    strict = PolicySpec(
        **{
            **{f: getattr(spec, f) for f in spec.__dataclass_fields__},
            "check": lambda inst, p: "too many jobs" if inst.n > 3 else None,
        }
    )
    monkeypatch.setitem(POLICIES, "fcfs", strict)
    with pytest.raises(InputError, match="too many jobs .in the instance after the adversary"):
        run_sqrt_n("fcfs", 16)


# --------------------------------------------------------------------------- the hook


class Recorder:
    """Records every call; releases the jobs of ``plan``: {round: [(s, o, arrival), ...]}."""

    name = "recorder"

    def __init__(self, plan=None):
        self.plan = plan or {}
        self.calls = []
        self.release = None

    def setup(self, instance):
        self.instance = instance

    def on_decisions(self, now, starts, kills, release, events):
        self.calls.append((now, list(starts), list(kills), [(e.kind, e.job) for e in events]))
        self.release = release
        for s, o, a in self.plan.get(now, []):
            release(s, o, a)


class OneByOne(BlindPolicy):
    name = "one-by-one"

    def __init__(self):
        self.seen = []

    def on_events(self, now, events, view, act):
        self.seen.append((now, view.n, tuple(view.jobs)))
        if not view.running:
            for j in view.unfinished():
                act.start(j)
                break


def test_hook_sees_decisions_and_released_jobs_arrive_later():
    inst = Instance.from_arrays(20, [2, 3], [2, 1])
    adv = Recorder({0: [(4, 3, 5)], 2: [(1, 1, 3)]})
    pol = OneByOne()
    res = simulate(inst, pol, adversary=adv)
    assert adv.instance is inst
    assert adv.calls[0] == (0, [0], [], [(2, 0), (2, 1)])  # arrivals at round 0
    assert adv.calls[1] == (2, [1], [], [(COMPLETION, 0)])
    assert res.instance.n == 4
    assert res.instance.arrivals.tolist() == [0, 0, 5, 3]
    assert res.instance.prompts.tolist() == [2, 3, 4, 1]
    # job 3 (released at round 2) is visible from round 3, job 2 from round 5
    assert (3, 3, (0, 1, 3)) in pol.seen and (5, 4, (0, 1, 3, 2)) in pol.seen
    assert all(n <= 2 for t, n, _ in pol.seen if t < 3)
    assert check_schedule(res.instance, res.schedule).valid
    assert simulate(res.instance, OneByOne()).schedule == res.schedule
    # releases after the run ended are refused
    with pytest.raises(InputError, match="the run has ended"):
        adv.release(1, 1, 10**6)


def test_without_adversary_the_result_instance_is_the_input():
    inst = Instance.from_arrays(20, [2, 3], [2, 1])
    res = simulate(inst, "fcfs")
    assert res.instance is inst
    assert set(res.to_dict()) == {"policy", "params", "objective", "schedule", "stats"}


@pytest.mark.parametrize(
    "job, match",
    [
        ((1, 1, 0), "arrival: must be after the current round 0"),
        ((1, 1, -1), "arrival: must be an integer >= 0"),
        ((15, 6, 9), "prompt: prompt \\+ response = 15 \\+ 6 = 21 exceeds memory 20"),
        ((0, 1, 9), "prompt: must be an integer >= 1"),
        ((1, 2.0, 9), "response: must be an integer >= 1"),
        ((1, True, 9), "response: must be an integer >= 1"),
    ],
)
def test_bad_releases_raise(job, match):
    inst = Instance.from_arrays(20, [2], [2])
    with pytest.raises(InputError, match="adversary 'recorder', release at round 0: " + match):
        simulate(inst, OneByOne(), adversary=Recorder({0: [job]}))


def test_release_ids_must_be_new():
    class Dup(Recorder):
        def on_decisions(self, now, starts, kills, release, events):
            if now == 0:
                release(1, 1, 4, id="x")
                release(1, 1, 4, id="x")

    with pytest.raises(InputError, match="id: must be a new string or integer"):
        simulate(Instance.from_arrays(20, [2], [2]), OneByOne(), adversary=Dup())


def test_released_jobs_are_hidden_until_arrival():
    reads = []

    class Clair(ClairvoyantPolicy):
        name = "clair"

        def on_events(self, now, events, view, act):
            for j in (1,):
                try:
                    reads.append((now, view.prompts[j], view.responses[j]))
                except PolicyError as err:
                    reads.append((now, str(err)))
            if not view.running:
                for j in view.unfinished():
                    act.start(j)
                    break

    res = simulate(
        Instance.from_arrays(20, [2], [3]), Clair(), adversary=Recorder({0: [(5, 7, 2)]})
    )
    assert res.instance.n == 2
    assert reads[0] == (
        0,
        "prompt length of job 1 is not visible at round 0 (the job has not arrived)",
    )
    assert (2, 5, 7) in reads


class RandomAdversary:
    """Releases jobs at random future rounds in reaction to starts, kills and completions."""

    name = "random"

    def __init__(self, seed: int, budget: int):
        self.rng = np.random.default_rng(seed)
        self.budget = budget

    def setup(self, instance):
        self.M = instance.memory

    def on_decisions(self, now, starts, kills, release, events):
        triggers = len(starts) + len(kills) + sum(e.kind == COMPLETION for e in events)
        for _ in range(triggers):
            if self.budget and self.rng.random() < 0.5:
                self.budget -= 1
                s = int(self.rng.integers(1, self.M))
                o = int(self.rng.integers(1, self.M - s + 1))
                pred = int(self.rng.integers(1, self.M + 1)) if self.rng.random() < 0.5 else None
                release(s, o, now + int(self.rng.integers(1, 2 * self.M)), predicted_response=pred)


@pytest.mark.parametrize("policy", ONLINE)
def test_adaptive_runs_replay_as_normal_instances(policy):
    seed = 5 if POLICIES[policy].seeded else None
    released: list[int] = []

    @settings(
        max_examples=40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(
        M=st.integers(4, 40),
        rows=st.lists(
            st.tuples(st.integers(1, 39), st.integers(1, 39), st.integers(0, 20)),
            min_size=1,
            max_size=5,
        ),
        adv_seed=st.integers(0, 10**6),
    )
    def check(M, rows, adv_seed):
        jobs = [(min(s, M - 1), a) for s, _, a in rows]
        inst = Instance.from_arrays(
            M,
            [s for s, _ in jobs],
            [max(1, min(o, M - s)) for (s, _), (_, o, _) in zip(jobs, rows)],
            [a for _, a in jobs],
        )
        adv = RandomAdversary(adv_seed, 6)
        res = simulate(inst, policy, seed=seed, trace=True, adversary=adv)
        released.append(res.instance.n - inst.n)
        note(json.dumps(res.instance.to_dict()))
        assert check_schedule(res.instance, res.schedule).valid
        again = simulate(res.instance, policy, seed=seed, trace=True)
        assert _rows(again) == _rows(res) and again.trace == res.trace

    check()
    assert sum(released) > 0
