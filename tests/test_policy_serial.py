"""``serial`` (SPEC §6.3): checker, completion, the registry entry, blindness.

The attempt-for-attempt comparison with a naive reference is in
``tests/test_reference_policies.py`` (``serial_ref``); visibility of future
arrivals in ``tests/test_visibility.py``.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from kvopt.engine import BlindPolicy
from kvopt.instance import Instance, Job
from kvopt.policy import POLICIES, make_policy
from kvopt.schedule import check_schedule
from kvopt.simulation import simulate

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@st.composite
def instances(draw, max_n: int = 7):
    M = draw(st.integers(2, 60))
    jobs = []
    for _ in range(draw(st.integers(1, max_n))):
        s = draw(st.integers(1, M - 1))
        o = draw(st.integers(1, M - s))
        jobs.append(Job(s, o, draw(st.integers(0, 3 * M))))
    return Instance(M, tuple(jobs), name="hypothesis")


def test_registry_entry():
    spec = POLICIES["serial"]
    assert not spec.clairvoyant and not spec.kills and spec.check is None
    assert isinstance(make_policy("serial"), BlindPolicy)
    assert spec.to_dict()["kills"] is False


def test_one_at_a_time_in_arrival_order():
    # job 2 arrives first, jobs 0 and 1 tie at round 3 (index order); job 3 arrives while idle
    inst = Instance.from_arrays(10, [2, 5, 1, 3], [4, 2, 3, 1], [3, 3, 0, 30])
    res = simulate(inst, "serial")
    got = [(a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts]
    assert got == [(2, 0, 3, True), (0, 3, 4, True), (1, 7, 2, True), (3, 30, 1, True)]
    assert res.stats.kills == 0


@SETTINGS
@given(inst=instances())
def test_schedule_valid_serial_and_complete(inst):
    note(json.dumps(inst.to_dict()))
    res = simulate(inst, "serial")
    cr = check_schedule(inst, res.schedule)
    assert cr.valid and cr.objectives == dict(res.objectives)
    atts = sorted(res.schedule.attempts, key=lambda a: a.start)
    assert all(a.completed for a in atts) and len(atts) == inst.n
    for prev, nxt in zip(atts, atts[1:]):  # never two at once, no idle round with a job waiting
        assert nxt.start == max(prev.end, int(inst.arrivals[nxt.job]))


@SETTINGS
@given(inst=instances(), pick=st.integers(0, 10**6), extra=st.integers(1, 40))
def test_blindness(inst, pick, extra):
    """A longer response of job j changes no attempt that ends before j's original completion."""
    j = pick % inst.n
    s, o = int(inst.prompts[j]), int(inst.responses[j])
    assume(s + o < inst.memory)
    longer = inst.with_response(j, min(inst.memory - s, o + extra))
    note(json.dumps(inst.to_dict()))
    a, b = simulate(inst, "serial"), simulate(longer, "serial")
    cj = a.completion_times[j]

    def before(res):
        return sorted(
            (x.job, x.start, x.rounds, x.completed) for x in res.schedule.attempts if x.end < cj
        )

    assert before(a) == before(b)
    assert b.completion_times[j] > cj
