"""The time-indexed LP's prices in exact integers and the event model's Lagrangian rows
(``kvopt.exact.bounds.lagrange``, ``models/orders.md`` §10, issue 46)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import feasible_start_vectors, job_triples, lemma_l1_values
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.exact import SolveStatus, solve
from kvopt.exact.backend import Limits, Problem
from kvopt.exact.backends.events import CpSatEvents
from kvopt.exact.bounds.lagrange import (
    SCALE,
    _lower_hull,
    cached_prices,
    nonzeros,
    time_indexed_prices,
)
from kvopt.exact.common import start_windows, value_of
from kvopt.exact.heuristic import heuristic_starts
from kvopt.instance import Instance
from kvopt.schedule import check_schedule


def _inst(memory, jobs) -> Instance:
    memory = max(memory, max(s + o for s, o, _ in jobs))
    return Instance.from_arrays(memory, *zip(*jobs))


_jobs = job_triples(6, 5, 4, 4)


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 12), _jobs)
def test_the_lagrangian_inequality_holds_for_every_schedule_in_the_windows(memory, jobs):
    """``SCALE·ΣC ≥ base + Σ T_i(S_i)`` for *every* feasible schedule inside the windows (not
    only optimal ones), so the bound, the cut windows and the rows are valid; the bound is at
    most Opt and at least the LP's value rounded down less one."""
    inst = _inst(memory, jobs)
    ub = value_of(inst, heuristic_starts(inst, "total", moves=200), "total")
    lo, hi = start_windows(inst, "total", ub)
    prices = time_indexed_prices(inst, lo, hi, 10.0)
    assert prices is not None
    values = lemma_l1_values(inst, prices, lo, hi)
    opt = min(values)
    assert prices.bound <= opt
    assert prices.bound >= int(prices.lp) - 1
    # reduced-cost fixing keeps every schedule of value <= ub
    cut = prices.windows(lo, hi, opt)
    assert cut is not None
    for starts in feasible_start_vectors(inst, lo, hi):
        if sum(int(t) + int(o) for t, o in zip(starts, inst.responses)) <= opt:
            assert all(a <= t <= b for t, a, b in zip(starts, *cut))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 10**9), min_size=1, max_size=40), st.integers(1, 256))
def test_the_hull_rows_lie_below_every_point(values, units):
    """``Prices.lines``' rows: every ``(x, ⌊units·T(x)/SCALE⌋)`` satisfies every row, and some
    row is tight at each hull vertex (so ``e`` may take exactly the table's value)."""
    from kvopt.exact.bounds.lagrange import Prices

    tab = np.asarray(values, dtype=np.int64)
    tab -= tab.min()
    p = Prices(np.array([0]), np.array([len(tab) - 1]), (tab,), 0, 0.0, 0.0)
    rows = p.lines(0, 0, len(tab) - 1, units)
    scaled = (tab * units) // SCALE
    for x, y in enumerate(scaled.tolist()):
        assert all(a * y >= b * x + c for a, b, c in rows)
    for x, y in _lower_hull(scaled):
        assert any(a * y == b * x + c for a, b, c in rows)


def test_nothing_is_built_beyond_the_size_limit(monkeypatch):
    import kvopt.exact.bounds.lagrange as lagrange

    inst = _inst(10, [(2, 3, 0), (3, 2, 0)])
    lo, hi = start_windows(inst, "total", 20)
    assert nonzeros(inst, lo, hi) > 0
    monkeypatch.setattr(lagrange, "MAX_NONZEROS", 1)
    assert time_indexed_prices(inst, lo, hi, 5.0) is None


def test_prices_over_wider_windows_are_reused():
    inst = _inst(9, [(2, 3, 0), (3, 4, 0), (1, 2, 1)])
    lo, hi = start_windows(inst, "total", 40)
    wide = cached_prices(inst, lo, hi, 5.0)
    assert wide is not None
    assert cached_prices(inst, lo + (hi > lo), hi, 5.0) is wide


def _check_lagrange(memory, jobs, with_arrivals):
    jobs = [(s, o, a if with_arrivals else 0) for s, o, a in jobs]
    inst = _inst(memory, jobs)
    ref = solve(inst, solver="highs", time_limit=30, threads=1)
    st0 = heuristic_starts(inst, "total", moves=200)
    ub = value_of(inst, st0, "total")
    lo, hi = start_windows(inst, "total", ub)
    raw = CpSatEvents(lagrange=True).solve(
        Problem(inst, "total", lo, hi, st0, ub), Limits(time_limit=30, threads=1)
    )
    assert ref.status is SolveStatus.OPTIMAL and raw.status is SolveStatus.OPTIMAL
    assert value_of(inst, raw.starts, "total") == ref.objective
    assert raw.bound <= ref.objective
    assert "lagrange" in raw.stats and raw.stats["lagrange"] <= ref.objective


@settings(max_examples=10, deadline=None)
@given(st.integers(3, 14), _jobs, st.booleans())
def test_the_event_model_with_prices_finds_opt(memory, jobs, arrivals):
    _check_lagrange(memory, jobs, arrivals)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(
    st.integers(3, 20),
    job_triples(9, 8, 10, 7),
    st.booleans(),
)
def test_the_event_model_with_prices_finds_opt_slow(memory, jobs, arrivals):
    _check_lagrange(memory, jobs, arrivals)


def test_auto_on_long_responses_reports_the_lp_bound():
    """A 14-job instance with long responses takes the route ``events``, whose first phase
    solves the LP: the bound reported is at least the LP's over the textbook windows (a
    relaxation of the one solved) and at most the schedule's value, which the checker
    accepts.  (The LP takes 0.25 s of its 150 s share here; a gap of 50 % ends the solve
    once its first schedule is in: 0.8 s instead of running to a 20 s limit, and no share
    that a loaded machine could miss, issue 56.)"""
    rng = np.random.default_rng(7)
    jobs = [(int(rng.integers(20, 120)), int(rng.integers(20, 60)), 0) for _ in range(14)]
    peaks = [s + o for s, o, _ in jobs]
    inst = _inst(max(max(peaks), sum(peaks) // 3), jobs)
    res = solve(inst, time_limit=300, threads=2, gap=0.5)
    assert res.route is not None and res.route.name == "events"
    assert res.route.phases[0].backend == "events-lagrange"
    assert check_schedule(inst, res.schedule).valid
    lo, hi = start_windows(inst, "total", res.objective)
    wide = time_indexed_prices(inst, lo, hi, 20.0)
    assert wide is not None
    assert wide.bound - 1 <= res.bound <= res.objective


def _known_total_optima():
    from test_conflict_bound import known_optima

    return [(inst, opt) for inst, objective, opt in known_optima() if objective == "total"]


@pytest.mark.parametrize("case", _known_total_optima(), ids=lambda c: c[0].name)
def test_bundled_records_below_their_proven_opt(case):
    """Every bundled record with a closed bracket (total completion): the prices over the
    windows of its Opt (which hold every optimal schedule) bound it from below, and the
    windows cut for Opt keep a checked optimal schedule's starts."""
    inst, opt = case
    lo, hi = start_windows(inst, "total", opt)
    if nonzeros(inst, lo, hi) > 300_000:
        pytest.skip("LP too large for the default run")
    prices = time_indexed_prices(inst, lo, hi, 30.0)
    assert prices is not None and prices.bound <= opt
    res = solve(inst, time_limit=30, threads=1)
    assert res.objective == opt and check_schedule(inst, res.schedule).valid
    cut = prices.windows(lo, hi, opt)
    assert cut is not None
    starts = np.asarray(res.schedule.completion_times(inst.n)) - inst.responses
    assert np.all(cut[0] <= starts) and np.all(starts <= cut[1])


@pytest.mark.parametrize("backend", ["events-cliques", "bnb-cliques"])
def test_prices_too_late_leave_the_next_model_only_the_rest_of_the_limit(monkeypatch, backend):
    """When the LP's prices are not ready within their share, the model that runs without them
    gets what is left of the phase's limit, not all of it (issue 52: at n = 54 of Jaillet et
    al.'s model 2 a 30 s solve ran 42 s, the LP's 12 s on top of the limit)."""
    import time

    import kvopt.exact.bounds.lagrange as lagrange
    from kvopt.exact.backends.cpsat import CpSat
    from kvopt.exact.bnb import BranchAndBound
    from kvopt.exact.portfolio.variants import VARIANTS

    def late(*args, **kwargs):
        time.sleep(0.3)
        return None

    given_limits = []
    for cls in (CpSat, BranchAndBound):
        original = cls.solve

        def spy(self, problem, limits, hooks=None, _original=original):
            given_limits.append(limits.time_limit)
            return (
                _original(self, problem, limits)
                if hooks is None
                else _original(self, problem, limits, hooks)
            )

        monkeypatch.setattr(cls, "solve", spy)
    monkeypatch.setattr(lagrange, "cached_prices", late)
    inst = _inst(10, [(2, 6, 0), (1, 7, 0), (3, 4, 0), (2, 3, 0)])
    st0 = heuristic_starts(inst, "total", moves=50)
    ub = value_of(inst, st0, "total")
    lo, hi = start_windows(inst, "total", ub)
    VARIANTS[backend].solve(Problem(inst, "total", lo, hi, st0, ub), Limits(time_limit=1.0))
    assert given_limits and max(given_limits) <= 0.75


@pytest.mark.parametrize("backend,share", [("events-cliques", 0.8), ("events-lagrange", 0.5)])
def test_the_lp_gets_its_share_of_the_limit(monkeypatch, backend, share):
    """``events-cliques`` lets the LP with the cliques take 0.8 of its phase (at 45–60 jobs it
    is still rising at half, ``models/cliques.md`` §13); ``events-lagrange`` keeps 0.5."""
    import kvopt.exact.bounds.lagrange as lagrange
    from kvopt.exact.portfolio.variants import VARIANTS

    asked = []

    def spy(inst, lo, hi, time_limit, *args, **kwargs):
        asked.append(time_limit)
        return None

    monkeypatch.setattr(lagrange, "cached_prices", spy)
    inst = _inst(10, [(2, 6, 0), (1, 7, 0), (3, 4, 0)])
    st0 = heuristic_starts(inst, "total", moves=50)
    ub = value_of(inst, st0, "total")
    lo, hi = start_windows(inst, "total", ub)
    VARIANTS[backend].solve(Problem(inst, "total", lo, hi, st0, ub), Limits(time_limit=2.0))
    assert asked == [pytest.approx(share * 2.0)]
