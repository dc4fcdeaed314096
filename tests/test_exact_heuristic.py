"""The heuristic's schedules and the iterated local search (:mod:`kvopt.exact.heuristic`).

``improve_starts`` must return a schedule the checker accepts, never worse than the one
it was given, the same one for the same seed and move count, and it must leave the
local optima of ``heuristic_starts`` on instances where they are not optimal.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_exact import brute_force
from test_exact_bnb import SETTINGS, instances

from kvopt.errors import InputError
from kvopt.exact.common import value_of
from kvopt.exact.heuristic import heuristic_starts, improve_starts, place
from kvopt.exact.portfolio.variants import LocalSearch
from kvopt.generators import generate
from kvopt.schedule import Schedule, check_schedule


def _valid(inst, starts) -> bool:
    return check_schedule(inst, Schedule.from_starts(inst, starts)).valid


@pytest.mark.parametrize("objective", ["total", "makespan"])
@given(inst=instances(max_n=7, max_o=4), seed=st.integers(0, 3), backwards=st.booleans())
@settings(max_examples=60, **SETTINGS)
def test_improve_is_valid_no_worse_and_seeded(inst, objective, seed, backwards):
    # from the heuristic's schedule, or from the serial schedule of the reversed order
    # (often poor, and not the order of its own starts when jobs overtake each other)
    if backwards:
        given_starts = place(inst, list(range(inst.n))[::-1])
    else:
        given_starts = heuristic_starts(inst, objective, seed=seed, moves=20)
    out = improve_starts(inst, given_starts, objective, seed=seed, moves=300)
    assert out.dtype == np.int64 and out.shape == (inst.n,)
    assert _valid(inst, out)
    assert value_of(inst, out, objective) <= value_of(inst, given_starts, objective)
    again = improve_starts(inst, given_starts, objective, seed=seed, moves=300)
    assert np.array_equal(out, again)
    # no schedule beats the optimum
    if inst.n <= 5:
        assert value_of(inst, out, objective) >= brute_force(inst, objective)


def test_improve_leaves_the_heuristics_local_optima():
    """On benchmark-like instances (``benchmarks/exact.py``'s family) where the heuristic's
    local search stops, the kicks find better schedules (``models/bnb.md`` §9)."""
    better = 0
    for seed in range(1, 4):
        inst = generate("random", seed, n=12, memory=72, max_response=12)
        h = heuristic_starts(inst, "total", seed=0, moves=60 * 12 * 12)
        out = improve_starts(inst, h, "total", seed=0, moves=20_000)
        assert _valid(inst, out)
        better += value_of(inst, out, "total") < value_of(inst, h, "total")
    assert better >= 2


def test_improve_handles_tiny_instances():
    inst = generate("random", 0, n=1, memory=10, max_response=3)
    st0 = heuristic_starts(inst, "total", moves=0)
    assert np.array_equal(improve_starts(inst, st0, "total", moves=10), st0)


def _ctrl_c_after_evaluations(monkeypatch, count: int) -> list[int]:
    """A real SIGINT, raised in this (main) thread by the ``count``-th schedule the local
    search evaluates: the Ctrl-C lands inside the search at a point fixed by the seed, not
    by how fast the machine is (the search runs on a clock far longer than it needs).
    Returns the list that counts the evaluations."""
    import signal

    from kvopt.exact import heuristic

    calls: list[int] = []
    real = heuristic._valuer

    def valuer(inst, objective):
        value = real(inst, objective)

        def counted(starts):
            calls.append(1)
            if len(calls) == count:
                signal.raise_signal(signal.SIGINT)
            return value(starts)

        return counted

    monkeypatch.setattr(heuristic, "_valuer", valuer)
    return calls


def test_ctrl_c_keeps_the_best_schedule_so_far(monkeypatch):
    """Ctrl-C inside the local search: ``LocalSearchInterrupted`` (a ``KeyboardInterrupt``)
    carries a checked schedule no worse than the one given, and ``auto``'s phase reports it
    as interrupted, like the backends do.  (A real SIGINT, raised by the 400th evaluation:
    by then the seeded search has improved on the heuristic's schedule; issue 56.)"""
    from kvopt.exact.backend import Limits, Problem
    from kvopt.exact.common import start_windows
    from kvopt.exact.heuristic import LocalSearchInterrupted

    inst = generate("random", 2, n=12, memory=72, max_response=12)
    h = heuristic_starts(inst, "total", seed=0, moves=50)

    calls = _ctrl_c_after_evaluations(monkeypatch, 400)
    with pytest.raises(LocalSearchInterrupted) as caught:
        improve_starts(inst, h, "total", seconds=3600.0)
    # stopped by the Ctrl-C where it was raised (then two evaluations pick the better of the
    # best found and the schedule given)
    assert 400 <= len(calls) <= 402
    assert isinstance(caught.value, KeyboardInterrupt)
    assert _valid(inst, caught.value.starts)
    assert value_of(inst, caught.value.starts, "total") < value_of(inst, h, "total")

    ub = value_of(inst, h, "total")
    lo, hi = start_windows(inst, "total", ub)
    calls = _ctrl_c_after_evaluations(monkeypatch, 50)
    raw = LocalSearch().solve(
        Problem(inst, "total", lo, hi, warm=h, ub=ub), Limits(time_limit=3600.0, threads=2)
    )
    assert 50 <= len(calls) <= 52
    assert raw.interrupted and raw.bound is None
    assert _valid(inst, raw.starts) and value_of(inst, raw.starts, "total") <= ub


def test_improve_names_a_wrong_length():
    inst = generate("random", 0, n=4, memory=20, max_response=3)
    with pytest.raises(InputError, match="starts: must hold one start per job"):
        improve_starts(inst, [0, 0, 0], "total", moves=5)
