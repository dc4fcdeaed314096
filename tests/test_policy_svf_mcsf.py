"""``mcsf``, ``mc-benchmark``, ``svf``, ``svf-1bit`` (SPEC §6.2): the shared future-memory
admission, hand-computed traces, predictions."""

from __future__ import annotations

from kvopt.instance import Instance
from kvopt.simulation import simulate


def _starts(res):
    return {a.job: a.start for a in res.schedule.attempts if a.completed}


def test_mcsf_hand_trace():
    # M = 10; (s, o) = (2, 4), (1, 2), (3, 3).  Order by o: 1, 2, 0.
    # t=0: {1}: peak 3; {1, 2}: max(3+5 at k=1, 6 at k=2) = 8; + job 0: 12 at k=1 -> stop.
    # t=2: job 1 done; job 2 holds 6 now, + job 0: max(6+3, 6) = 9 -> start.
    inst = Instance.from_arrays(10, [2, 1, 3], [4, 2, 3])
    res = simulate(inst, "mcsf")
    assert _starts(res) == {1: 0, 2: 0, 0: 2}
    assert res.completion_times == (6, 2, 3)
    assert res.stats.kills == 0


def test_mcsf_stops_at_first_failure():
    # M = 10; (s, o) = (5, 1), (5, 2), (1, 3).  t=0: {0}: 6; {0, 1}: 12 -> stop, although
    # job 2 would fit beside job 0 (6 + 2).  t=1: {1, 2}: k=0: 6+2, k=1: 7+3 = 10 -> both.
    inst = Instance.from_arrays(10, [5, 5, 1], [1, 2, 3])
    res = simulate(inst, "mcsf")
    assert _starts(res) == {0: 0, 1: 1, 2: 1}


def test_mc_benchmark_is_arrival_order():
    inst = Instance.from_arrays(8, [1, 1], [6, 1], [0, 0])
    # job 0 (o=6) first in arrival order: {0}: 7; {0,1}: k=0: 2+2=4, k=5: 7 -> both at 0
    assert _starts(simulate(inst, "mc-benchmark")) == {0: 0, 1: 0}
    inst = Instance.from_arrays(8, [3, 3], [5, 1])
    # {0}: 8; {0, 1}: k=0: 4 + 4 = 8 ok; k=4: 8 -> both at 0
    assert _starts(simulate(inst, "mc-benchmark")) == {0: 0, 1: 0}
    inst = Instance.from_arrays(8, [4, 3], [4, 1])
    # {0}: 8; {0, 1}: k=0: 5 + 4 = 9 > 8 -> job 1 waits although it is shorter
    assert _starts(simulate(inst, "mc-benchmark")) == {0: 0, 1: 4}
    # mcsf takes the shorter first
    assert _starts(simulate(inst, "mcsf")) == {1: 0, 0: 1}


def test_svf_area_order():
    # areas: job 0 = (1, 6): 6 + 21 = 27; job 1 = (5, 2): 10 + 3 = 13 -> job 1 first
    inst = Instance.from_arrays(8, [1, 5], [6, 2])
    # {1}: 7; {1, 0}: k=0: 6 + 2 = 8 ok, k=1: 7 + 3 = 10 > 8 -> job 0 waits until t=2
    assert _starts(simulate(inst, "svf")) == {1: 0, 0: 2}


def test_predictions_used_and_overflow_resolved():
    # predictions say job 0 is short; it is long: the check admits job 1 too early and
    # the real memory overflows; the newest attempt is killed and waits
    inst = Instance.from_arrays(10, [2, 2], [7, 5], predicted_response=[1, 1])
    res = simulate(inst, "mcsf")
    assert res.stats.kills >= 1
    exact = simulate(Instance.from_arrays(10, [2, 2], [7, 5]), "mcsf")
    assert exact.stats.kills == 0


def test_svf_1bit_orders_by_one_bit():
    # M = 16: threshold sqrt(16) = 4.  job 0 = (1, 5) is long (proxy 8), job 1 = (9, 4) is
    # short (proxy 2): 1-bit SVF puts job 1 first although its true area is larger.
    inst = Instance.from_arrays(16, [1, 9], [5, 4])
    assert _starts(simulate(inst, "svf-1bit"))[1] == 0
    # both: k=0: 2 + 10 = 12, k=3: 5 + 13 = 18 > 16 -> job 0 waits for job 1
    assert _starts(simulate(inst, "svf-1bit")) == {1: 0, 0: 4}
    assert _starts(simulate(inst, "svf")) == {0: 0, 1: 5}
