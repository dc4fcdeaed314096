"""BlackBoxMeta (main paper, Algorithm 3): Lemma 10's per-job bound and the slot mechanism."""

from __future__ import annotations

import json

from hypothesis import given, note, settings
from hypothesis import strategies as st

from kvopt.engine import ClairvoyantPolicy
from kvopt.instance import Instance, Job
from kvopt.policy.blackbox import BlackBoxMeta
from kvopt.simulation import simulate


@st.composite
def any_instance(draw):
    M = draw(st.integers(4, 80))
    n = draw(st.integers(1, 8))
    jobs = []
    for _ in range(n):
        s = draw(st.integers(1, M - 1))
        jobs.append(Job(s, draw(st.integers(1, M - s))))
    return Instance(M, tuple(jobs))


@settings(max_examples=120, deadline=None)
@given(inst=any_instance())
def test_per_job_bound_lemma10(inst):
    note(json.dumps(inst.to_dict()))
    res = simulate(inst, "blackbox", instrument=True)
    rep = res.instrumentation
    k = rep["k"]
    for i, c in enumerate(res.completion_times):
        ell, iso = rep["part"][i], rep["isolated"][i]
        assert c <= (2 * (k + ell - 1) + 1) * iso <= (4 * k - 1) * iso, (i, c, ell, iso)


class InOrder(ClairvoyantPolicy):
    """A clairvoyant sub-policy: one job at a time, shortest response first."""

    name = "in-order"

    def setup(self, view):
        self.order = sorted(view.jobs, key=lambda j: (view.responses[j], j))

    def on_events(self, now, events, view, act):
        if not view.running:
            while self.order and view.is_done(self.order[0]):
                self.order.pop(0)
            if self.order:
                act.start(self.order.pop(0))


def test_custom_partition_with_clairvoyant_subpolicies():
    # Parts {0, 1} and {2}; stage r gives each part 2^r rounds.  Part 1 in isolation: job 1
    # (o=1) at 0, job 0 (o=2) at 1 -> done at 3.  Part 2: job 2 (o=3) at 0, done at 3.
    # Stage 0: part 1 [0,1): job 1 completes at 1.  Part 2 [1,2): job 2 runs 1 round, killed.
    # Stage 1: part 1 [2,4): fresh run, job 1 is a dummy (virtually runs [2,3)), job 0 starts
    # at 3 and is killed at the slot end 4.  Part 2 [4,6): job 2 killed after 2 rounds.
    # Stage 2: part 1 [6,10): dummy job 1 [6,7), job 0 [7,9) completes.  Part 2 [10,14): job 2
    # completes at 13.
    inst = Instance.from_arrays(10, [2, 2, 3], [2, 1, 3])
    pol = BlackBoxMeta(lambda inst: [[0, 1], [2]], [InOrder, InOrder], name="bb-test")
    res = simulate(inst, pol)
    assert [(a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts] == [
        (1, 0, 1, True),
        (2, 1, 1, False),
        (0, 3, 1, False),
        (2, 4, 2, False),
        (0, 7, 2, True),
        (2, 10, 3, True),
    ]


@settings(max_examples=60, deadline=None)
@given(inst=any_instance())
def test_compact_slots_never_later(inst):
    note(json.dumps(inst.to_dict()))
    lit = simulate(inst, "blackbox").completion_times
    com = simulate(inst, "blackbox", {"compact": True}).completion_times
    assert all(c <= d for c, d in zip(com, lit))
