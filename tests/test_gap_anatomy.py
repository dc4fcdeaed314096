"""``benchmarks/gap_anatomy.py`` (issue 46, ``models/time-indexed.md`` §12): the Lagrangian bound
with the heavy tails kept disjoint is a lower bound — at any prices ``y, h ≤ 0`` it is at most
``Σ C`` of every feasible schedule in the windows (brute force over every start vector), and at
the LP's duals it is at least the LP's value."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import feasible_start_vectors, load_benchmark
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.instance import Instance, Job


@pytest.fixture(scope="module")
def anatomy():
    return load_benchmark("gap_anatomy")  # it imports benchmarks/exact.py as ``exact``


_jobs = st.lists(st.tuples(st.integers(1, 9), st.integers(1, 3)), min_size=1, max_size=3)


@settings(max_examples=40, deadline=None)
@given(st.integers(6, 14), _jobs, st.integers(0, 2**31 - 1))
def test_heavy_kept_bound_is_below_every_schedule(anatomy, memory, jobs, seed):
    jobs = [(min(s, memory - 1), min(o, memory - min(s, memory - 1))) for s, o in jobs]
    inst = Instance(memory=memory, jobs=tuple(Job(prompt=s, response=o) for s, o in jobs))
    lo = np.zeros(inst.n, dtype=np.int64)
    last = int(inst.responses.sum())  # the jobs one after another fit in windows [0, Σ o]
    hi = np.full(inst.n, last, dtype=np.int64)
    H = int((hi + inst.responses).max())
    rng = np.random.default_rng(seed)
    pad = H + int(inst.responses.max()) + 1
    y = np.zeros(pad)
    h = np.zeros(pad)
    y[:H] = -rng.random(H) * rng.choice([0.0, 0.05, 0.5])
    h[:H] = -rng.random(H) * rng.choice([0.0, 1.0, 4.0])
    bound, _ = anatomy.HeavyKept(inst, lo, hi, H).value(y, h)
    best = min(
        (
            sum(t + j.response for t, j in zip(starts, inst.jobs))
            for starts in feasible_start_vectors(inst, lo, hi)
        ),
        default=None,
    )
    assert best is not None
    assert bound <= best + 1e-9


def test_heavy_kept_bound_at_the_lp_duals_is_at_least_the_lp(anatomy):
    from kvopt.exact.backends.highs_matrix import build_matrix
    from kvopt.exact.bounds.relax import solve_lp
    from kvopt.exact.common import start_windows

    inst = anatomy.instance(12, 1)
    lo, hi = start_windows(inst, "total", 171)  # Opt of this benchmark instance
    model = build_matrix(inst, "total", lo, hi, aggregate=False, cuts=(1,))
    lp = solve_lp(model, 60.0)
    H, n = model.horizon, inst.n
    pad = H + int(inst.responses.max()) + 1
    y, h = np.zeros(pad), np.zeros(pad)
    y[:H] = np.minimum(lp.row_dual[n : n + H], 0.0)
    h[:H] = np.minimum(lp.row_dual[n + H : n + 2 * H], 0.0)
    bound, starts = anatomy.HeavyKept(inst, lo, hi, H).value(y, h)
    assert lp.value - 1e-6 <= bound <= 171
    assert sorted(starts) == list(range(n))
