"""The LP with completion cliques by column generation (``kvopt.exact.bounds.colgen``,
``models/cliques.md`` §13): every round's bound is valid, the converged value is the full
LP's, and the prices built from it hold for every schedule."""

from __future__ import annotations

import functools
import time

import numpy as np
import pytest
from conftest import lemma_l1_values
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cliques import _brute, _inst, _jobs, _known_total_optima, _summaries_like

import kvopt.exact.bounds.cliques as cliques_module
import kvopt.exact.bounds.colgen as colgen_module
from kvopt.errors import SolverError
from kvopt.exact.backends.highs_glue import to_highs
from kvopt.exact.backends.highs_matrix import build_matrix
from kvopt.exact.bounds.cliques import DEFAULT_KS, Nodes, add_cliques, clique_bound
from kvopt.exact.bounds.colgen import add_cliques_colgen
from kvopt.exact.bounds.lagrange import time_indexed_prices
from kvopt.exact.common import start_windows, value_of
from kvopt.exact.heuristic import heuristic_starts


def _model(inst, ub=None):
    lo, hi = start_windows(inst, "total", ub)
    model = build_matrix(inst, "total", lo, hi, aggregate=False)
    return lo, hi, model, Nodes.of(inst, model.col_group, model.col_start, model.groups)


def _full(inst, model, nodes):
    h = to_highs(model, relax=True)
    return add_cliques(h, inst, nodes, deadline=time.monotonic() + 60)


@pytest.mark.parametrize("seed,n", [(7, 10), (3, 12), (11, 14)])
def test_converges_to_the_value_of_the_full_lp_with_the_rows(seed, n):
    """Jaillet et al.'s setting: the restricted master, priced to the end, has the value of
    the LP over every start column with the rows, from a hint or from none."""
    inst = _summaries_like(seed, n)
    hint = heuristic_starts(inst, "total", seconds=0.05)
    _, _, model, nodes = _model(inst)
    full = _full(inst, model, nodes)
    assert full.converged
    for h in (hint, None):
        cg = add_cliques_colgen(inst, model, nodes, deadline=time.monotonic() + 60, hint=h)
        assert cg.converged
        assert cg.value == pytest.approx(full.value, rel=1e-7, abs=1e-5)
        assert cg.columns < model.n_cols  # it did not need every column
        assert cg.duals is not None and len(cg.duals) == model.n_rows + len(cg.added)


@settings(max_examples=30, deadline=None)
@given(st.integers(3, 12), _jobs, st.integers(1, 6))
def test_every_round_gives_a_bound_below_opt(memory, jobs, rounds):
    """Stopped after any number of rounds (columns still to price, rows still violated), the
    Lagrangian bound of its best round is at most Opt."""
    inst = _inst(memory, jobs)
    _, opt = _brute(inst)
    _, _, model, nodes = _model(inst)
    cg = add_cliques_colgen(
        inst, model, nodes, deadline=time.monotonic() + 30, max_rounds=rounds, hint=None
    )
    assert cg.value <= opt + 1e-6


@settings(max_examples=25, deadline=None)
@given(st.integers(3, 12), _jobs, st.integers(1, 4))
def test_its_prices_hold_for_every_schedule_in_the_windows(memory, jobs, rounds):
    """Lemma L1 with the duals of column generation's best round, converged or stopped after
    ``rounds`` (the windows' other starts priced too): ``SCALE·ΣC ≥ base + Σ T_i(S_i)`` for
    every feasible schedule in the windows, and the bound is at most Opt."""
    inst = _inst(memory, jobs)
    ub = value_of(inst, heuristic_starts(inst, "total", seconds=0.01), "total")
    lo, hi = start_windows(inst, "total", ub)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(cliques_module, "COLGEN_COLUMNS", 0)
        m.setattr(
            colgen_module,
            "add_cliques_colgen",
            functools.partial(add_cliques_colgen, max_rounds=rounds),
        )
        prices = time_indexed_prices(inst, lo, hi, 10.0, DEFAULT_KS)
    assert prices is not None
    lemma_l1_values(inst, prices, lo, hi)


def test_the_prices_are_those_of_the_full_lp_once_converged(monkeypatch):
    """The routes' prices: by column generation or over every column, the same bound (up to
    the rounding of the duals)."""
    inst = _summaries_like(3, 12)
    ub = value_of(inst, heuristic_starts(inst, "total", seconds=0.05), "total")
    lo, hi = start_windows(inst, "total", ub)
    full = time_indexed_prices(inst, lo, hi, 60.0, DEFAULT_KS)
    monkeypatch.setattr(cliques_module, "COLGEN_COLUMNS", 0)
    cg = time_indexed_prices(inst, lo, hi, 60.0, DEFAULT_KS)
    assert full is not None and cg is not None
    assert abs(cg.bound - full.bound) <= 1
    assert cg.lp == pytest.approx(full.lp, rel=1e-7, abs=1e-5)


def test_no_master_solved_in_time_is_an_error_and_no_prices():
    inst = _summaries_like(7, 10)
    _, _, model, nodes = _model(inst)
    with pytest.raises(SolverError, match="not solved in time"):
        add_cliques_colgen(inst, model, nodes, deadline=time.monotonic() - 1)


def test_a_hint_outside_the_windows_is_clipped():
    inst = _summaries_like(7, 10)
    _, _, model, nodes = _model(inst)
    hint = np.full(inst.n, 10**6)
    cg = add_cliques_colgen(inst, model, nodes, deadline=time.monotonic() + 60, hint=hint)
    assert cg.converged and cg.value == pytest.approx(_full(inst, model, nodes).value, abs=1e-5)


def test_makespan_or_grouped_models_are_refused():
    inst = _inst(10, [(1, 3, 0), (1, 3, 0)])
    lo, hi = start_windows(inst, "total")
    grouped = build_matrix(inst, "total", lo, hi)  # the two identical jobs in one group
    nodes = Nodes.of(inst, grouped.col_group, grouped.col_start, grouped.groups)
    with pytest.raises(SolverError, match="one group per job"):
        add_cliques_colgen(inst, grouped, nodes, deadline=time.monotonic() + 10)


@pytest.mark.parametrize("case", _known_total_optima(), ids=lambda c: c[0].name)
def test_bundled_records_below_their_proven_opt(monkeypatch, case):
    """Every bundled record with a closed bracket (total completion): ``kvopt bound
    --cliques`` by column generation is at most Opt."""
    from kvopt.exact.bounds.lagrange import nonzeros

    inst, opt = case
    lo, hi = start_windows(inst, "total", opt)
    if nonzeros(inst, lo, hi) > 300_000:
        pytest.skip("LP too large for the default run")
    monkeypatch.setattr(cliques_module, "COLGEN_COLUMNS", 0)
    b = clique_bound(inst, time_limit=30)
    assert b.columns is not None  # column generation ran
    assert b.value <= opt + 1e-6


def test_the_master_holds_every_row_over_every_column_it_has():
    """A column priced in after a row lists it enters that row: HiGHS's rows are exactly the
    clique rows over the master's columns, after columns and rows were added in turn and
    some rows dropped."""
    from kvopt.exact.bounds.colgen import RestrictedMaster

    inst = _summaries_like(7, 10)
    _, _, model, _ = _model(inst)
    rmp = RestrictedMaster(model)
    rng = np.random.default_rng(0)
    for step in range(6):
        rmp.add_columns(rng.choice(model.n_cols, 15))
        rmp.add_rows([(1 + step % 3, np.sort(rng.choice(model.n_cols, 40, replace=False)))])
        if step == 3:
            rmp.drop_rows(np.array([True, False, True, False]))
    h = rmp.h
    assert h.getNumCol() == inst.n + len(rmp.master) and h.getNumRow() == model.n_rows + 4
    for j, c in enumerate(rmp.master):  # the model's entries, unchanged
        _, cost, _, _, _ = h.getCol(inst.n + j)
        _, idx, val = h.getColEntries(inst.n + j)
        a, b = model.a_start[c], model.a_start[c + 1]
        model_part = sorted(zip(idx, val))[: b - a]
        assert cost == model.col_cost[c]
        assert model_part == sorted(zip(model.a_index[a:b].tolist(), model.a_value[a:b]))
    for r, (k, cols) in enumerate(rmp.rows):
        _, _, upper, _ = h.getRow(model.n_rows + r)
        _, idx, val = h.getRowEntries(model.n_rows + r)
        want = sorted(int(rmp.pos[c]) for c in cols if rmp.pos[c] >= 0)
        have = sorted(int(i) for i, v in zip(idx, val) if v != 0)  # highspy: [0], [0.] if empty
        assert upper == k and have == want and set(val) - {0.0} <= {1.0}
    x = rmp.x(np.arange(h.getNumCol(), dtype=float))
    assert (
        x[rmp.master[0]] == inst.n
        and x[[c for c in range(model.n_cols) if rmp.pos[c] < 0]].sum() == 0
    )


def test_an_artificial_too_cheap_is_raised_until_it_leaves(monkeypatch):
    """With artificials cheaper than any start (cost 0.5) the master first takes them; they are
    raised tenfold until none is left, and the value is the full LP's (the bound held on the
    way)."""
    inst = _summaries_like(7, 10)
    _, _, model, nodes = _model(inst)
    monkeypatch.setattr(colgen_module, "ARTIFICIAL", 0.5 - float(model.col_cost.max()))
    cg = add_cliques_colgen(inst, model, nodes, deadline=time.monotonic() + 60)
    assert cg.converged
    assert cg.value == pytest.approx(_full(inst, model, nodes).value, abs=1e-5)


def test_windows_without_a_schedule_stop_unconverged_with_a_valid_bound():
    """Windows too narrow for any fractional schedule: the artificials cannot leave, their
    cost stops rising at the cap, and the result is not converged (its bound, however large,
    is what the duals prove for these windows)."""
    inst = _inst(10, [(1, 9, 0)] * 3)  # no two of them may overlap
    lo = np.zeros(3, dtype=np.int64)
    model = build_matrix(inst, "total", lo, lo, aggregate=False)  # all three at round 0
    nodes = Nodes.of(inst, model.col_group, model.col_start, model.groups)
    cg = add_cliques_colgen(inst, model, nodes, deadline=time.monotonic() + 30)
    assert not cg.converged
