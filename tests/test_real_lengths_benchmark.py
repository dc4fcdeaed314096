"""The instances of ``benchmarks/real_lengths.py`` (issue 35): the figures of
``models/orders.md`` §6–§8 are quoted per seed, so each seed must keep naming the same
instance, built by the documented rule."""

from __future__ import annotations

import math

import pytest
from conftest import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("real_lengths")


def _memory_rule(inst) -> int:
    peaks = [j.prompt + j.response for j in inst.jobs]
    return max(max(peaks), math.ceil(sum(peaks) / 3))


def test_arriving_instances_are_consecutive_requests_with_their_arrivals(bench):
    from kvopt.serving.trace import bundled_trace_dir, load_trace

    tr = load_trace(bundled_trace_dir())
    for seed in (1, 2, 3):
        inst = bench.arriving_instance(12, seed)
        assert inst == bench.arriving_instance(12, seed)  # the seed names the instance
        assert inst.n == 12 and inst.memory == _memory_rule(inst)
        a = inst.arrivals.tolist()
        assert a[0] == 0 and a == sorted(a) and a[-1] > 0
        assert all(j.prompt + j.response <= bench.MAX_PEAK for j in inst.jobs)
        # consecutive usable requests of the trace: their (prompt, response) pairs appear in a row
        usable = [
            (int(p), int(r))
            for p, r in zip(tr.prompt, tr.response)
            if p >= 1 and r >= 1 and p + r <= bench.MAX_PEAK
        ]
        pairs = [(j.prompt, j.response) for j in inst.jobs]
        assert any(usable[k : k + 12] == pairs for k in range(len(usable) - 11))
    assert bench.arriving_instance(12, 1) != bench.arriving_instance(12, 2)


def test_real_length_instances_follow_the_memory_rule(bench):
    inst = bench.real_length_instance(12, 4)
    assert inst.n == 12 and inst.memory == _memory_rule(inst) and set(inst.arrivals) == {0}
    x10 = bench.real_length_instance(12, 4, scale=10)
    assert [j.response for j in x10.jobs] == [10 * j.response for j in inst.jobs]
