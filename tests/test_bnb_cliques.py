"""The branch and bound priced by the LP with the completion cliques (issue 52,
``models/cliques.md`` §14): the rows of Lemma C1 in its Lagrangian bound.

Independent checks: brute force (every feasible start vector) for Opt; the rows come from
the separation of ``kvopt.exact.bounds.cliques`` on random fractional points, so each is a
row of Lemma C1, valid for every feasible schedule (``tests/test_cliques.py``)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_cliques import _summaries_like
from test_exact import brute_force
from test_exact_bnb import instances

from kvopt.exact.backend import Limits, Problem
from kvopt.exact.backends.highs_matrix import build_matrix
from kvopt.exact.bnb import BranchAndBound, _Search
from kvopt.exact.bounds.cliques import DEFAULT_KS, Nodes, separate
from kvopt.exact.bounds.lagrange import time_indexed_prices
from kvopt.exact.common import start_windows, value_of

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
PRICE = st.integers(-(2**22), 0).map(lambda v: v / 2**20)


def _random_rows(inst, lo, hi, data) -> list:
    """Rows of Lemma C1 separated on a random fractional point of the windows, each with a
    random dual ``μ ≤ 0``, as ``set_duals`` takes them."""
    m = build_matrix(inst, "total", lo, hi, aggregate=False, cuts=(1,))
    nodes = Nodes.of(inst, m.col_group, m.col_start, m.groups)
    group, start = np.asarray(m.col_group), np.asarray(m.col_start)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    x = np.zeros(m.n_cols)
    for i in range(inst.n):
        cols = np.flatnonzero(group == i)
        x[cols] = rng.dirichlet(np.full(len(cols), 0.3))
    rows = []
    for k, cols in separate(nodes, x, inst.memory, DEFAULT_KS):
        rows.append((k, data.draw(PRICE), group[cols].tolist(), start[cols].tolist()))
    return rows


@given(inst=instances(max_n=6, max_o=5, max_memory=14, arrivals=True), data=st.data())
@settings(max_examples=80, **SETTINGS)
def test_any_clique_duals_keep_an_optimal_schedule(inst, data):
    """Any duals ``≤ 0`` on the memory rows, the "one above M/2" rows and rows of Lemma C1
    give a bound at most Opt at the root, and the search pruning with it (every node, every
    child) still finds a schedule of value Opt when started at ``ub = Opt``."""
    opt = brute_force(inst, "total")
    lo, hi = start_windows(inst, "total", opt)
    search = _Search(inst, "total", lo, hi, opt + 1, None, float("inf"), None, None, None)
    ym = data.draw(st.lists(PRICE, min_size=search.H + 1, max_size=search.H + 1))
    yc = data.draw(st.lists(PRICE, min_size=search.H + 1, max_size=search.H + 1))
    rows = _random_rows(inst, lo, hi, data)
    search.set_duals(ym, yc, rows)
    root = sum(search.dslack) + sum(search.sufmin[j][search.a[j]] for j in range(inst.n))
    assert root <= opt
    search.run()
    assert search.best == opt and search.best_starts is not None


@given(inst=instances(max_n=6, max_o=5, max_memory=14, arrivals=True))
@settings(max_examples=40, **SETTINGS)
def test_the_clique_lps_duals_prove_opt(inst):
    """``BranchAndBound`` with the duals of the LP with the cliques (``Prices.duals``, as
    ``bnb-cliques`` passes them) proves the brute-force Opt."""
    opt = brute_force(inst, "total")
    lo, hi = start_windows(inst, "total", opt + 3)
    prices = time_indexed_prices(inst, lo, hi, 30.0, DEFAULT_KS)
    assert prices is not None and prices.duals is not None
    raw = BranchAndBound().solve(
        Problem(inst, "total", lo, hi, None, opt + 3, duals=prices.duals),
        Limits(time_limit=30, threads=1),
    )
    assert raw.native_status == "optimal" and raw.bound == opt
    assert value_of(inst, raw.starts, "total") == opt


def test_the_clique_duals_are_what_prunes_in_the_setting():
    """n14 s1 of ``models/cliques.md`` §4 (Opt 793; the LP 595.7, with the rows 734.4):
    priced by the LP with the rows, the search starts from the rows' bound and proves Opt
    (with the plain LP's duals it needs about 90 times the nodes, §14)."""
    inst = _summaries_like(1, 14)
    lo, hi = start_windows(inst, "total", 793)
    prices = time_indexed_prices(inst, lo, hi, 60.0, DEFAULT_KS)
    search = _Search(inst, "total", lo, hi, 794, None, float("inf"), None, None, None)
    search.set_duals(*prices.duals)
    assert prices.bound >= 734 and search.root_bound() >= prices.bound - 1
    raw = BranchAndBound(compiled=False, split=False).solve(
        Problem(inst, "total", lo, hi, None, 800, duals=prices.duals),
        Limits(time_limit=120, threads=1),
    )
    assert raw.native_status == "optimal" and raw.bound == 793


def test_the_ladder_priced_by_the_rows_stays_below_opt():
    """``bnb-cliques-ladder`` (route ``cliques-ils``'s last phase): the LP with the rows, its
    windows, then the ladder of proved thresholds priced by the same duals, from the
    heuristic's schedule — proves n14 s1's Opt (793), or stops with a bound between the
    rows' and Opt; its schedule is never worse than the warm start."""
    from kvopt.exact.heuristic import heuristic_starts
    from kvopt.exact.portfolio.variants import VARIANTS

    inst = _summaries_like(1, 14)
    warm = heuristic_starts(inst, "total", seconds=0.2)
    ub = value_of(inst, warm, "total")
    lo, hi = start_windows(inst, "total", ub)
    raw = VARIANTS["bnb-cliques-ladder"].solve(
        Problem(inst, "total", lo, hi, warm, ub), Limits(time_limit=60, threads=1)
    )
    assert 734 <= raw.bound <= 793
    assert value_of(inst, raw.starts, "total") <= ub
    if raw.native_status == "optimal":
        assert raw.bound == 793 == value_of(inst, raw.starts, "total")
