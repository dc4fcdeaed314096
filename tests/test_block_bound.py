"""Time-block column generation (kvopt/exact/bounds/blocks.py, models/time-indexed.md §9.6)."""

from __future__ import annotations

import numpy as np
import pytest
from test_exact import brute_force
from test_exact_relax import schedules, small

from kvopt.exact.backends.highs_matrix import build_matrix, job_groups
from kvopt.exact.bounds.blocks import SCALE, block_bound, build_blocks, column_of
from kvopt.exact.bounds.relax import solve_lp
from kvopt.exact.common import start_windows
from kvopt.instance import Instance


def lp(inst: Instance, ub: int, cuts=()) -> float:
    lo, hi = start_windows(inst, "total", ub)
    return solve_lp(build_matrix(inst, "total", lo, hi, cuts=cuts), 30).value


@pytest.mark.parametrize("identical", [False, True])
def test_every_schedule_is_an_integral_point(identical):
    """Each schedule in the windows gives one column per block that satisfies every master row:
    memory ≤ M in each round of the block, convexity, assignment, linking; cost = Σ C."""
    rng = np.random.default_rng(3)
    for _ in range(6):
        inst = small(rng, identical=identical)
        opt = brute_force(inst, "total")
        lo, hi = start_windows(inst, "total", opt + 2)
        groups = job_groups(inst)
        for L in (1, 2, 3):
            master, blocks, _ = build_blocks(inst, lo, hi, L)
            for starts, value in schedules(inst, opt + 2):
                rows = np.zeros(master.n_rows)
                cost = 0.0
                for blk in blocks:
                    z = column_of(blk, starts, groups)
                    assert np.all(blk.mem.T @ z <= inst.memory)
                    rows[blk.b] += 1
                    for k in np.flatnonzero(z):
                        np.add.at(rows, blk.rows[k], blk.vals[k] * z[k])
                    cost += float(blk.cost @ z)
                nb, G = master.n_blocks, len(groups)
                assert np.all(rows[:nb] == 1)
                assert np.array_equal(rows[nb : nb + G], master.sizes)
                assert np.all(rows[nb + G :] == 0)
                assert cost == value


@pytest.mark.parametrize("identical", [False, True])
def test_bound_between_lp_and_opt(identical):
    """On tiny instances the converged bound is ≤ Opt (brute force) and ≥ the LP (k = 1 rows)."""
    rng = np.random.default_rng(11 + identical)
    above = 0
    for _ in range(8):
        inst = small(rng, n=5, M=14, identical=identical)
        opt = brute_force(inst, "total")
        for L in (2, 3):
            bound, stats = block_bound(inst, opt + 1, L, 30.0)
            assert stats["converged"]
            assert bound <= opt + 1e-6
            ref = lp(inst, opt + 1, cuts=(1,))
            # pricing costs are rounded down to 1/SCALE: at most n/SCALE per block is lost
            assert bound >= ref - inst.n * stats["blocks"] / SCALE - 1e-6
            above += bound > ref + 1e-3
    assert above  # the relaxation is stronger somewhere


def test_linking_rows_matter():
    """Two jobs that cannot overlap (s = 8, o = 4, M = 12): Opt = LP = 12.  Without the linking
    rows, block 1 starts the second job at round 2 while the first still runs: bound 10."""
    inst = Instance.from_arrays(12, [8, 8], [4, 4], [0, 0])
    assert brute_force(inst, "total") == 12
    assert lp(inst, 12) == pytest.approx(12)
    with_rows, stats = block_bound(inst, 12, 2, 30.0)
    assert stats["converged"] and with_rows == pytest.approx(12)
    without, _ = block_bound(inst, 12, 2, 30.0, linking=False)
    assert without < 12 - 1


def test_pricing_stopped_early_is_still_a_bound():
    """A pricing call stopped before CP-SAT has any solution must not report 0 (CP-SAT's bound
    then): its value stays ≤ the reduced cost of a column found by a longer call."""
    from kvopt.exact.bounds.blocks import _Pricer, _reduced, _ti_duals
    from kvopt.generators import generate

    inst = generate("random", 1, n=20, memory=120, max_response=20)
    lo, hi = start_windows(inst, "total", 650)
    master, blocks, _ = build_blocks(inst, lo, hi, 20)
    y0 = _ti_duals(inst, lo, hi, master, blocks, 30.0)
    blk = blocks[1]
    r = _reduced(blk, y0)
    pricer = _Pricer(blk, master.sizes, inst.memory)
    _, cols, _ = pricer.price(r, 3.0)
    assert cols and min(float(r @ z) for z in cols) < -1
    for seconds in (1e-4, 0.01, 0.1):
        bound, _, _ = pricer.price(r, seconds)
        assert bound <= min(float(r @ z) for z in cols) + 1e-9


def test_stop_ends_the_column_generation_quickly(monkeypatch):
    """``stop`` set as a pricing call starts: ``block_bound`` returns long before its own
    limits (the watcher stops CP-SAT; about 0.1 s on an idle machine, the call's own limit is
    600 s and each pricing call's 300 s), and a round cut short is not counted as a bound.
    The stop comes with the first pricing call, not from a timer (issue 56: a timer could
    come after a fast machine's column generation had converged)."""
    import threading
    import time

    from kvopt.exact.bounds import blocks
    from kvopt.generators import generate

    inst = generate("random", 1, n=25, memory=150, max_response=25)
    stop = threading.Event()
    real, calls = blocks._Pricer.price, []

    def price(self, r, seconds):
        calls.append(seconds)
        if len(calls) == 1:
            stop.set()
        return real(self, r, seconds)

    monkeypatch.setattr(blocks._Pricer, "price", price)
    t0 = time.monotonic()
    bound, stats = block_bound(inst, None, 25, 600.0, stop=stop, price_seconds=300.0)
    took = time.monotonic() - t0
    assert len(calls) == 1  # no pricing call after the stop
    assert took < 150, took  # an ignored stop runs a pricing call to its 300 s
    assert not stats["converged"]


def test_bound_is_valid_over_the_windows_given_and_reported_as_it_grows():
    """``windows=`` (tighter than those of ``ub``: those of Opt) and ``on_bound``: every value
    reported is a bound (≤ Opt), they increase, and the last one is the value returned."""
    rng = np.random.default_rng(23)
    for _ in range(4):
        inst = small(rng, n=5, M=14, identical=True)
        opt = brute_force(inst, "total")
        lo, hi = start_windows(inst, "total", opt)
        seen: list[float] = []
        bound, _ = block_bound(inst, opt + 5, 2, 30.0, windows=(lo, hi), on_bound=seen.append)
        assert seen and seen == sorted(seen) and seen[-1] == bound
        assert bound <= opt + 1e-6
