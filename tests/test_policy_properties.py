"""Properties every policy of issue 4 must have, on Hypothesis instances of its class.

* the schedule passes the checker, completes every job, and the reported
  objective is the checker's;
* blindness (non-clairvoyant policies): increasing one job's response length
  leaves every attempt that ends before that job's original completion unchanged.

A failing example prints the instance as JSON (``note``) so it can be replayed
with ``kvopt simulate``.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from kvopt.instance import Instance, Job
from kvopt.schedule import check_schedule
from kvopt.simulation import simulate

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _max_response(kind: str, s: int, M: int) -> int:
    if kind == "rect" and 4 * s <= M:
        return min(s, M - s)
    return M - s


@st.composite
def instances(draw, kind: str = "any", max_n: int = 7, arrivals: bool = False):
    """Instances of a policy class: any, rect (small jobs prompt-heavy), response, identical."""
    M = draw(st.integers(4, 72))
    n = draw(st.integers(1, max_n))
    common = draw(st.integers(1, (M - 1) // 2))
    jobs = []
    for _ in range(n):
        if kind == "response":
            s = draw(st.integers(1, (M - 1) // 2))
            o = draw(st.integers(s + 1, M - s))
        elif kind == "identical":
            s = common
            o = draw(st.integers(1, M - s))
        else:
            s = draw(st.integers(1, M - 1))
            o = draw(st.integers(1, _max_response(kind, s, M)))
        a = draw(st.integers(0, 2 * M)) if arrivals else 0
        jobs.append(Job(s, o, a))
    return Instance(M, tuple(jobs), name="hypothesis")


CLASSES = {
    "rect": "rect",
    "sps": "any",
    "response": "response",
    "blackbox": "any",
    "route": "any",
    "route-online": "any",
    "gsa": "identical",
}
BLIND = ["rect", "response", "route", "route-online", "gsa"]


def _show(inst: Instance) -> str:
    return json.dumps(inst.to_dict())


@pytest.mark.parametrize("policy", sorted(CLASSES))
def test_schedule_valid_and_complete(policy):
    @SETTINGS
    @given(inst=instances(CLASSES[policy], arrivals=policy == "route-online"))
    def check(inst):
        note(_show(inst))
        res = simulate(inst, policy)
        cr = check_schedule(inst, res.schedule)
        assert cr.valid, (cr.errors, _show(inst))
        assert all(c is not None for c in cr.completion_times)
        assert cr.objectives == dict(res.objectives)
        assert list(res.completion_times) == list(cr.completion_times)
        assert res.stats.kills == sum(not a.completed for a in res.schedule.attempts)

    check()


@pytest.mark.parametrize("policy", BLIND)
def test_blindness(policy):
    kind = CLASSES[policy]

    @SETTINGS
    @given(
        inst=instances(kind, arrivals=policy == "route-online"),
        pick=st.integers(0, 10**6),
        extra=st.integers(1, 40),
    )
    def check(inst, pick, extra):
        j = pick % inst.n
        s, o = int(inst.prompts[j]), int(inst.responses[j])
        top = _max_response(kind, s, inst.memory)
        assume(o < top)
        longer = inst.with_response(j, min(top, o + extra))
        note(_show(inst))
        note(f"job {j}: response {o} -> {min(top, o + extra)}")
        a = simulate(inst, policy)
        b = simulate(longer, policy)
        cj = a.completion_times[j]
        before_a = sorted(
            (x.job, x.start, x.rounds, x.completed) for x in a.schedule.attempts if x.end < cj
        )
        before_b = sorted(
            (x.job, x.start, x.rounds, x.completed) for x in b.schedule.attempts if x.end < cj
        )
        assert before_a == before_b
        assert b.completion_times[j] >= cj

    check()
