"""``pack-and-schedule`` (SPEC §6.2; main paper Appendix A.3) — windows, prefix rule, packers."""

from __future__ import annotations

import heapq

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.engine.contract import ARRIVAL
from kvopt.errors import InputError
from kvopt.instance import Instance
from kvopt.policy import make_policy
from kvopt.policy.pack_and_schedule import PackAndSchedule, _level, pack_and_schedule_starts
from kvopt.simulation import simulate


def test_hand_example():
    # M = 10, unit responses, rectangle areas 2, 4, 9.  Stage 0 (L=1, window [0, 2)):
    # prefix 2 + 4 <= 10 (adding 9 exceeds M·L); stage 1 (window [2, 6)) takes the last.
    inst = Instance.from_arrays(10, [1, 3, 8], [1, 1, 1])
    assert simulate(inst, "pack-and-schedule").completion_times == (1, 1, 3)
    # NFDH: windows of 3L, stage 1 starts at 3
    res = simulate(inst, "pack-and-schedule", params={"packer": "nfdh"})
    assert res.completion_times == (1, 1, 4)


def test_arrivals_wait_for_the_next_window():
    inst = Instance.from_arrays(10, [1, 3, 8], [1, 1, 1], [0, 1, 0])
    starts = pack_and_schedule_starts(inst)
    assert starts[0] == 0 and starts[1] >= 2 and starts[2] >= 2


@pytest.mark.parametrize("packer,factor", [("steinberg", 2), ("nfdh", 3)])
def test_every_job_inside_one_window(packer, factor):
    rng = np.random.default_rng(4)
    for _ in range(40):
        M = int(rng.integers(5, 120))
        n = int(rng.integers(1, 30))
        s = rng.integers(1, M, n)
        o = np.array([rng.integers(1, M - si + 1) for si in s])
        inst = Instance.from_arrays(M, s, o)
        res = simulate(inst, "pack-and-schedule", params={"packer": packer})
        assert res.stats.kills == 0
        for a in res.schedule.attempts:
            r = max(0, (a.rounds - 1).bit_length())  # first stage with o <= 2^r
            # find the window holding the start; it must be stage >= r and hold the end too
            q = 0
            while factor * ((1 << (q + 1)) - 1) <= a.start:
                q += 1
            lo, hi = factor * ((1 << q) - 1), factor * ((1 << (q + 1)) - 1)
            assert q >= r
            assert lo <= a.start and a.start + a.rounds <= hi


def test_prefix_by_rectangle_area():
    # stage 0 (L = 1): rectangle areas (s+o)·o = 5, 3, 8 -> order 1, 0, 2; M·L = 10 takes
    # 3 + 5 and not 8; job 2 goes to stage 1
    inst = Instance.from_arrays(10, [4, 2, 7], [1, 1, 1])
    starts = pack_and_schedule_starts(inst)
    assert starts[0] < 2 and starts[1] < 2 and starts[2] >= 2


def test_bad_packer():
    with pytest.raises(InputError):
        make_policy("pack-and-schedule", {"packer": "ffdh"})


class _HeapPackAndSchedule(PackAndSchedule):
    """The policy's bookkeeping before issue 54's third round: the pending jobs in a heap
    by response (stale entries skipped), the fixed starts in a heap, a wake-up asked for at
    every call."""

    def setup(self, view):
        self.by_response = []
        super().setup(view)
        self.heap = []

    def _arrive(self, j, view):
        super()._arrive(j, view)
        heapq.heappush(self.by_response, (view.responses[j], j))

    def on_events(self, now, events, view, act):
        for e in events:
            if e.kind == ARRIVAL:
                self._arrive(e.job, view)
        while self.window <= now:
            arr, window = self.arr, self.window
            for j, y in self._plan(self.r, [j for j in self.pending if arr[j] <= window]):
                heapq.heappush(self.heap, (window + y, j))
                self.pending.discard(j)
            self.window += self.factor << self.r
            self.r += 1
        q = self.heap
        while q and q[0][0] <= now:
            t, j = heapq.heappop(q)
            assert t == now
            act.start(j)
        if q:
            act.wake(q[0][0])
        elif self.pending:
            h = self.by_response
            while h[0][1] not in self.pending:
                heapq.heappop(h)
            r, window = self.r, self.window
            while (1 << r) < h[0][0]:
                window += self.factor << r
                r += 1
            act.wake(window)


@settings(max_examples=120, deadline=None)
@given(
    st.integers(20, 60),
    st.lists(
        st.tuples(
            st.integers(1, 15),
            st.one_of(st.integers(1, 3), st.integers(1, 40)),
            st.one_of(st.just(0), st.integers(0, 120)),
        ),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from(["steinberg", "nfdh"]),
)
def test_same_run_as_the_heap_bookkeeping(M, jobs, packer):
    """Levels instead of a heap of the pending jobs, a sorted list of starts, one wake-up
    per round asked for once (issue 54): the same attempts and the same engine trace
    (every event, every decision) as the heaps and a wake-up at every call."""
    prompts = [min(p, M - o) if M > o else 1 for p, o, _ in jobs]
    responses = [min(o, M - 1) for _, o, _ in jobs]
    inst = Instance.from_arrays(M, prompts, responses, [a for _, _, a in jobs])
    new = simulate(inst, PackAndSchedule(packer), trace=True)
    old = simulate(inst, _HeapPackAndSchedule(packer), trace=True)
    assert new.schedule.attempts == old.schedule.attempts
    assert new.trace == old.trace


def test_jobs_at_round_zero_counted_once():
    """Jobs visible at setup come again as arrival events at round 0: counted once (a
    short job counted twice made the policy foresee a stage too early and wake for it)."""
    jobs = [(1, 19, 0), (19, 1, 0), (8, 18, 0), (8, 23, 1), (6, 10, 4)]
    inst = Instance.from_arrays(32, *(list(c) for c in zip(*jobs)))
    new = simulate(inst, PackAndSchedule(), trace=True)
    old = simulate(inst, _HeapPackAndSchedule(), trace=True)
    assert new.trace == old.trace


@settings(max_examples=300, deadline=None)
@given(st.integers(-3, 2**70))
def test_level_is_the_first_stage_long_enough(o):
    r = _level(o)
    assert (1 << r) >= o and (r == 0 or (1 << (r - 1)) < o)
