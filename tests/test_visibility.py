"""SPEC §1 visibility, enforced by the engine's types.

A job — its index, prompt, existence, and for clairvoyant policies its
(predicted) response — is visible only from its arrival round on:

* for every policy that accepts arrivals, changing a job that has not arrived
  yet (or adding one that arrives later) changes nothing the engine records
  before that job's arrival round (Hypothesis, on the ``trace=True`` rows);
* reading ``view.prompts[j]`` / ``responses[j]`` / ``predicted[j]`` of a job
  that has not arrived raises ``PolicyError`` naming the job and the round;
  these have no length and cannot be iterated; ``view.n`` counts visible jobs;
* nothing reachable from a view or the actions object holds data of an
  unarrived job, and refused decisions cannot be used to probe;
* ``view.instance`` only without arrivals; slot sub-policies see their pool only.
"""

from __future__ import annotations

import dataclasses
import json
from types import MappingProxyType

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from kvopt.engine import BlindPolicy, ClairvoyantPolicy
from kvopt.errors import PolicyError
from kvopt.instance import Instance, Job
from kvopt.policy import POLICIES
from kvopt.policy.blackbox import BlackBoxMeta
from kvopt.policy.pack_and_schedule import pack_and_schedule_starts
from kvopt.simulation import simulate

#: every registry policy whose instance class allows arrivals
ONLINE = [
    "fcfs",
    "alpha-protect",
    "beta-clear",
    "sjf",
    "route-online",
    "greedy-area",
    "svf",
    "svf-1bit",
    "mcsf",
    "mc-benchmark",
    "pack-and-schedule",
    "serial",
    "wait",
    "nested-wait",
]

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def test_online_list_is_every_policy_that_accepts_arrivals():
    inst = Instance.from_arrays(16, [2, 3], [3, 2], [0, 4])
    accepting = []
    for name, spec in POLICIES.items():
        if spec.check is None or spec.check(inst, spec.resolve_params(None)) is None:
            accepting.append(name)
    assert sorted(accepting) == sorted(ONLINE)


@st.composite
def job(draw, M: int, min_arrival: int = 0):
    s = draw(st.integers(1, M - 1))
    o = draw(st.integers(1, M - s))
    a = draw(st.integers(min_arrival, 2 * M))
    pred = draw(st.none() | st.integers(1, M))
    return Job(s, o, a, None, pred)


@st.composite
def changed_future(draw):
    """``(instance, changed instance, round a)``: the two differ only in jobs arriving at >= a."""
    M = draw(st.integers(4, 40))
    n = draw(st.integers(1, 7))
    jobs = [draw(job(M)) for _ in range(n)]
    how = draw(st.sampled_from(["prompt", "response", "predicted", "later", "add"]))
    if how == "add":
        new = draw(job(M, min_arrival=1))
        return Instance(M, tuple(jobs)), Instance(M, (*jobs, new)), new.arrival
    late = [i for i, j in enumerate(jobs) if j.arrival > 0]
    assume(late)
    i = draw(st.sampled_from(late))
    old = jobs[i]
    if how == "prompt":
        s = draw(st.integers(1, M - old.response))
        assume(s != old.prompt)
        changed = dataclasses.replace(old, prompt=s)
    elif how == "response":
        o = draw(st.integers(1, M - old.prompt))
        assume(o != old.response)
        changed = dataclasses.replace(old, response=o)
    elif how == "predicted":
        p = draw(st.integers(1, M))
        assume(p != old.predicted_response)
        changed = dataclasses.replace(old, predicted_response=p)
    else:
        changed = dataclasses.replace(old, arrival=old.arrival + draw(st.integers(1, 2 * M)))
    jobs2 = list(jobs)
    jobs2[i] = changed
    return Instance(M, tuple(jobs)), Instance(M, tuple(jobs2)), old.arrival


def _before(res, a: int) -> list[tuple]:
    return [row for row in res.trace if row[0] < a]


@pytest.mark.parametrize("policy", ONLINE)
def test_future_jobs_do_not_change_earlier_decisions(policy):
    seed = 3 if POLICIES[policy].seeded else None

    @SETTINGS
    @given(case=changed_future())
    def check(case):
        inst, changed, a = case
        note(json.dumps(inst.to_dict()))
        note(json.dumps(changed.to_dict()))
        r1 = simulate(inst, policy, seed=seed, trace=True)
        r2 = simulate(changed, policy, seed=seed, trace=True)
        # a run ends when its last job completes: the instance without the added job can end
        # before round a, and the other run's later wake-ups are then not a difference
        cut = min(a, *(1 + max((row[0] for row in r.trace), default=-1) for r in (r1, r2)))
        assert _before(r1, cut) == _before(r2, cut)

    check()


# --------------------------------------------------------------------------- the guards


class Probe(BlindPolicy):
    """Runs one job at a time and records what the view shows at each call."""

    name = "probe"

    def __init__(self, read=None):
        self.read = read or (lambda now, view: None)
        self.seen = []

    def on_events(self, now, events, view, act):
        self.seen.append((now, view.n, tuple(view.jobs), self.read(now, view)))
        if not view.running:
            for j in view.unfinished():
                act.start(j)
                break


class ClairProbe(ClairvoyantPolicy, Probe):
    name = "clair-probe"


def _arrivals():
    # job 1 (prompt 37, response 5, predicted 9) arrives at round 5
    return Instance(
        64,
        (Job(3, 2), Job(37, 5, 5, None, 9), Job(4, 1, 5)),
    )


def _catch(fn):
    try:
        return ("ok", fn())
    except PolicyError as err:
        return ("error", str(err))


def test_prompts_of_unarrived_jobs_raise():
    pol = Probe(
        lambda now, view: (
            _catch(lambda: view.prompts[1]),
            _catch(lambda: view.prompts[99]),
            _catch(lambda: view.arrival(1)),
        )
    )
    simulate(_arrivals(), pol)
    (t0, n0, jobs0, r0), *rest = pol.seen
    assert (t0, n0, jobs0) == (0, 1, (0,))
    assert r0[0] == ("error", r0[0][1]) and "job 1" in r0[0][1] and "round 0" in r0[0][1]
    # an unarrived job and an index that is no job are indistinguishable
    assert r0[1][1] == r0[0][1].replace("job 1", "job 99")
    assert r0[2][0] == "error"
    at5 = next(s for s in pol.seen if s[0] == 5)
    assert at5[1] == 3 and at5[2] == (0, 1, 2) and at5[3][0] == ("ok", 37)


def test_prompts_have_no_length_and_no_iteration():
    pol = Probe(
        lambda now, view: (_catch(lambda: len(view.prompts)), _catch(lambda: list(view.prompts)))
    )
    simulate(Instance.from_arrays(16, [2, 3], [1, 1]), pol)
    (_, n0, _, (ln, it)) = pol.seen[0]
    assert n0 == 2  # without arrivals every job is visible at round 0
    assert ln[0] == "error" and "view.n" in ln[1]
    assert it[0] == "error" and "view.jobs" in it[1]


def test_clairvoyant_view_reveals_lengths_of_arrived_jobs_only():
    def read(now, view):
        return (
            _catch(lambda: view.responses[1]),
            _catch(lambda: view.predicted[1]),
            _catch(lambda: view.predicted[0]),
            _catch(lambda: view.instance),
        )

    pol = ClairProbe(read)
    simulate(_arrivals(), pol)
    r0 = pol.seen[0][3]
    assert r0[0][0] == "error" and "response length of job 1" in r0[0][1] and "round 0" in r0[0][1]
    assert r0[1][0] == "error"
    assert r0[2] == ("ok", 2)  # no prediction: the true response
    assert r0[3][0] == "error" and "not visible" in r0[3][1]
    at5 = next(s for s in pol.seen if s[0] == 5)[3]
    assert at5[0] == ("ok", 5) and at5[1] == ("ok", 9) and at5[3][0] == "error"
    # without arrivals the whole instance is there
    inst = Instance.from_arrays(16, [2, 3], [1, 1])
    pol = ClairProbe(read)
    simulate(inst, pol)
    assert pol.seen[0][3][3] == ("ok", inst)


def _reachable(*roots):
    """Every object reachable from ``roots`` through slots, dicts, sequences and proxies."""
    seen, out, todo = set(), [], list(roots)
    while todo:
        x = todo.pop()
        if id(x) in seen or isinstance(x, int | str | float | type(None)):
            out.append(x)
            continue
        seen.add(id(x))
        out.append(x)
        if isinstance(x, dict | MappingProxyType):
            todo.extend(x.keys())
            todo.extend(x.values())
        elif isinstance(x, list | tuple | set | frozenset):
            todo.extend(x)
        for klass in type(x).__mro__:
            for slot in getattr(klass, "__slots__", ()):
                if hasattr(x, slot):
                    todo.append(getattr(x, slot))
    return out


@pytest.mark.parametrize("clairvoyant", [False, True])
def test_nothing_of_an_unarrived_job_is_reachable(clairvoyant):
    grabbed = {}

    class Grab(ClairvoyantPolicy if clairvoyant else BlindPolicy):
        name = "grab"

        def on_events(self, now, events, view, act):
            if now == 0:
                grabbed["objs"] = _reachable(view, act)
                grabbed["keys"] = [
                    k for o in grabbed["objs"] if isinstance(o, dict) for k in o.keys()
                ]
            if not view.running:
                for j in view.unfinished():
                    act.start(j)
                    break

    inst = Instance(64, (Job(3, 2), Job(37, 23, 5, None, 29), Job(38, 21, 6)))
    simulate(inst, Grab())
    ints = {o for o in grabbed["objs"] if isinstance(o, int)}
    assert not any(isinstance(o, Instance) for o in grabbed["objs"])
    assert 1 not in grabbed["keys"] and 2 not in grabbed["keys"]
    assert not {37, 23, 29, 38, 21} & ints  # prompts, responses, prediction of jobs 1, 2


def test_refused_start_cannot_be_used_to_probe():
    messages = []

    class Prober(BlindPolicy):
        name = "prober"

        def on_events(self, now, events, view, act):
            for j in (1, 7):
                try:
                    act.start(j)
                except PolicyError as err:
                    messages.append(str(err))
            if not view.running:
                act.start(0)

    with pytest.raises(PolicyError, match="'prober'.*: job 1, round 0: started before its arrival"):
        simulate(_arrivals(), Prober())
    # what the policy saw does not tell job 1 (exists, not arrived) from job 7 (no job)
    assert messages[1] == messages[0].replace("job 1", "job 7")


def test_view_n_counts_visible_jobs():
    pol = Probe()
    simulate(_arrivals(), pol)
    assert [(t, n) for t, n, _, _ in pol.seen if t in (0, 5)] == [(0, 1), (5, 3)]
    assert max(n for _, n, _, _ in pol.seen) == 3


# --------------------------------------------------------------------------- slots, online plans


def test_clairvoyant_sub_policy_sees_its_pool_only():
    seen = {}

    class Sub(ClairvoyantPolicy):
        name = "sub"

        def setup(self, view):
            seen.setdefault("n", view.n)
            seen.setdefault("own", view.responses[view.jobs[0]])
            seen.setdefault("other", _catch(lambda: view.responses[2]))
            seen.setdefault("instance", _catch(lambda: view.instance))
            self.todo = sorted(view.jobs)

        def on_events(self, now, events, view, act):
            if not view.running:
                while self.todo and view.is_done(self.todo[0]):
                    self.todo.pop(0)
                if self.todo:
                    act.start(self.todo.pop(0))

    inst = Instance.from_arrays(20, [2, 3, 4], [3, 1, 2])
    meta = BlackBoxMeta(lambda instance: [[0, 1], [2]], [Sub, Sub])
    res = simulate(inst, meta)
    assert all(c is not None for c in res.completion_times)
    assert seen["n"] == 2 and seen["own"] == 3
    assert seen["other"][0] == "error" and "job 2" in seen["other"][1]
    assert seen["instance"][0] == "error"


def test_route_online_slot_clock_runs_while_visible_jobs_are_done():
    # job 0 finishes early; job 1 arrives much later: the doubling slots go on meanwhile
    inst = Instance.from_arrays(64, [2, 3], [1, 2], [0, 200])
    res = simulate(inst, "route-online", instrument=True)
    slots = res.instrumentation["slots"]
    assert all(b[2] == a[3] for a, b in zip(slots, slots[1:]))  # contiguous from round 0
    assert slots[0][2] == 0 and slots[-1][3] >= res.completion_times[1]
    assert res.completion_times[0] == 1


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 30), st.integers(1, 30), st.integers(0, 60)),
        min_size=1,
        max_size=9,
    ),
    st.sampled_from(["steinberg", "nfdh"]),
)
def test_pack_and_schedule_online_equals_offline_plan(rows, packer):
    M = 32
    jobs = tuple(Job(min(s, M - 1), max(1, min(o, M - min(s, M - 1))), a) for s, o, a in rows)
    inst = Instance(M, jobs)
    res = simulate(inst, "pack-and-schedule", params={"packer": packer})
    starts = [None] * inst.n
    for a in res.schedule.attempts:
        starts[a.job] = a.start
    assert starts == pack_and_schedule_starts(inst, packer)
