"""The completion cliques (``kvopt.exact.bounds.cliques``, ``models/cliques.md``, issue 52):
Lemma C1 against every feasible schedule, the bound against brute-force Opt and every bundled
optimum, the prices with the rows, and ``kvopt bound --cliques``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import feasible_start_vectors, instances, job_triples, lemma_l1_values
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.cli import main
from kvopt.exact import lp_bound
from kvopt.exact.backends.highs_matrix import build_matrix
from kvopt.exact.bounds.cliques import (
    DEFAULT_KS,
    Nodes,
    clique_bound,
    separate,
    theta_range,
)
from kvopt.exact.bounds.lagrange import time_indexed_prices
from kvopt.exact.common import start_windows, value_of
from kvopt.exact.heuristic import heuristic_starts
from kvopt.instance import Instance, save_instance


def _inst(memory, jobs) -> Instance:
    memory = max(memory, max(s + o for s, o, _ in jobs))
    return Instance.from_arrays(memory, *zip(*jobs))


def _brute(inst: Instance):
    """Every feasible start vector in the textbook windows, and Opt (total completion)."""
    lo, hi = start_windows(inst, "total")
    vecs = list(feasible_start_vectors(inst, lo, hi))
    opt = min(sum(int(t) + int(o) for t, o in zip(v, inst.responses)) for v in vecs)
    return vecs, opt


def rows_hold(inst: Instance, starts, ks: tuple[int, ...]) -> bool:
    """Whether the start vector ``starts`` satisfies every row of Lemma C1 for the ``k`` in
    ``ks`` (all rounds, all ``θ``), read from the lemma's statement (not from
    :func:`theta_range`): every feasible schedule must."""
    M = inst.memory
    for tau in range(max((int(t) + int(o) for t, o in zip(starts, inst.responses)), default=0)):
        running = [
            (int(s) + tau - int(t) + 1, int(s) + int(o))  # (h, P)
            for s, o, t in zip(inst.prompts, inst.responses, starts)
            if int(t) <= tau < int(t) + int(o)
        ]
        for k in ks:
            for theta in range(1, M + 1):
                q = [1 for h, p in running if h >= theta and (k + 1) * p - k * h > M - k * theta]
                if len(q) > k:
                    return False
    return True


_jobs = job_triples(5, 6, 3, 4)


@settings(max_examples=30, deadline=None)
@given(st.integers(3, 12), _jobs)
def test_every_feasible_schedule_satisfies_every_row(memory, jobs):
    """Lemma C1 for every ``k ≤ 3``, every round and every ``θ`` on every feasible schedule
    (not only optimal ones), arrivals included."""
    inst = _inst(memory, jobs)
    vecs, _ = _brute(inst)
    for v in vecs:
        assert rows_hold(inst, v, (1, 2, 3))


def test_the_rows_cut_off_what_does_not_fit():
    """Two jobs that cannot overlap at all (``s = 1, o = 8, M = 10``): both at round 0 breaks
    a row, one after the other keeps every row.  And a node with ``h > M/2`` is in the
    ``k = 1`` row of ``θ = ⌊M/2⌋ + 1`` (the rounded row of ``models/time-indexed.md`` §4.2).
    :func:`theta_range` is the lemma's condition, ``θ`` by ``θ``."""
    inst = _inst(10, [(1, 8, 0), (1, 8, 0)])
    assert not rows_hold(inst, (0, 0), (1,))
    assert not rows_hold(inst, (0, 3), (1,))
    assert rows_hold(inst, (0, 8), (1,))
    lo, hi = theta_range(np.array([6]), np.array([6]), 1, 10)
    assert lo[0] <= 6 <= hi[0]
    for M in (7, 10, 13):
        for h in range(1, M + 1):
            for p in range(h, M + 1):
                for k in (1, 2, 3):
                    lo, hi = theta_range(np.array([h]), np.array([p]), k, M)
                    for theta in range(1, M + 1):
                        member = h >= theta and (k + 1) * p - k * h > M - k * theta
                        assert member == (lo[0] <= theta <= hi[0])


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 12), _jobs, st.sampled_from([(1,), (1, 2, 3), (2,)]))
def test_separated_rows_hold_for_every_schedule(memory, jobs, ks):
    """The rows :func:`separate` returns at the LP's point (built by the code under test, not
    by :func:`rows_hold`) hold for every feasible schedule inside the windows."""
    inst = _inst(memory, jobs)
    ub = value_of(inst, heuristic_starts(inst, "total", seconds=0.01), "total")
    lo, hi = start_windows(inst, "total", ub)
    model = build_matrix(inst, "total", lo, hi, aggregate=False)
    nodes = Nodes.of(inst, model.col_group, model.col_start, model.groups)
    # any point of the box: the LP's optimum and a spread of starts over each window
    x = np.zeros(model.n_cols)
    for i in range(inst.n):
        cols = np.flatnonzero(model.col_group == i)
        x[cols] = 1.0 / len(cols)
    x *= 3  # make rows violated wherever they can be
    cuts = separate(nodes, x, inst.memory, ks)
    for v in feasible_start_vectors(inst, lo, hi):
        xv = np.zeros(model.n_cols)
        for i, t in enumerate(v):
            xv[np.flatnonzero((model.col_group == i) & (model.col_start == t))] = 1
        for k, cols in cuts:
            assert xv[cols].sum() <= k


@settings(max_examples=40, deadline=None)
@given(instances(max_n=4, max_memory=12, arrivals=True))
def test_the_bound_is_between_the_lp_and_opt(inst):
    if inst.n == 0:
        return
    _, opt = _brute(inst)
    b = clique_bound(inst, time_limit=20)
    assert b.value <= opt + 1e-6
    assert b.value >= b.lp - 1e-6
    assert b.lp >= lp_bound(inst, time_limit=20) - 1e-6


def test_stronger_than_the_lp_where_responses_fill_the_memory():
    """Three jobs with ``s + o = M``: no two may overlap at all, so Opt is SPT on one machine
    (9 + 18 + 27 = 54); the LP smears the staircases and stays below, the cliques reach Opt."""
    inst = _inst(10, [(1, 9, 0)] * 3)
    b = clique_bound(inst, time_limit=20)
    _, opt = _brute(inst)
    assert opt == 54
    assert b.lp < opt - 1
    assert b.value == pytest.approx(opt, abs=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.integers(3, 12), _jobs)
def test_the_prices_with_cliques_hold_for_every_schedule_in_the_windows(memory, jobs):
    """Lemma L1 with the clique rows' duals: ``SCALE·ΣC ≥ base + Σ T_i(S_i)`` for every
    feasible schedule in the windows; the bound is at most Opt and at least the plain
    prices' less one."""
    inst = _inst(memory, jobs)
    ub = value_of(inst, heuristic_starts(inst, "total", seconds=0.01), "total")
    lo, hi = start_windows(inst, "total", ub)
    prices = time_indexed_prices(inst, lo, hi, 10.0, DEFAULT_KS)
    plain = time_indexed_prices(inst, lo, hi, 10.0)
    assert prices is not None and plain is not None
    lemma_l1_values(inst, prices, lo, hi)
    assert prices.bound >= plain.bound - 1
    assert prices.lp >= plain.lp - 1e-6


def _known_total_optima():
    from test_conflict_bound import known_optima

    return [(inst, opt) for inst, objective, opt in known_optima() if objective == "total"]


@pytest.mark.parametrize("case", _known_total_optima(), ids=lambda c: c[0].name)
def test_bundled_records_below_their_proven_opt(case):
    """Every bundled record with a closed bracket (total completion): the clique LP over the
    windows of its Opt is at most Opt."""
    from kvopt.exact.backends.highs_glue import to_highs
    from kvopt.exact.bounds.cliques import add_cliques
    from kvopt.exact.bounds.lagrange import nonzeros

    inst, opt = case
    lo, hi = start_windows(inst, "total", opt)
    if nonzeros(inst, lo, hi) > 300_000:
        pytest.skip("LP too large for the default run")
    import time

    model = build_matrix(inst, "total", lo, hi)
    h = to_highs(model, relax=True)
    nodes = Nodes.of(inst, model.col_group, model.col_start, model.groups)
    res = add_cliques(h, inst, nodes, deadline=time.monotonic() + 60)
    assert res.value <= opt + 1e-6
    assert res.value >= res.lp - 1e-6


def test_bound_cli_reports_the_cliques(tmp_path, capsys):
    inst = _inst(10, [(1, 9, 0), (1, 9, 0), (2, 3, 0)])
    path = tmp_path / "i.json"
    save_instance(inst, path)
    assert main(["bound", str(path), "--lp", "--cliques", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["cliques"] >= d["lp"] - 1e-6
    assert d["best"] >= int(np.ceil(d["cliques"] - 1e-6))
    assert d["best_name"] in ("rank", "cliques")  # rank sees this one too (Lemma R3)
    assert main(["bound", str(path), "--cliques"]) == 0
    assert "completion cliques" in capsys.readouterr().out


def test_auto_takes_the_route_cliques_on_long_responses():
    """Fifteen jobs with responses up to ``M − s`` (Jaillet et al.'s setting, a third of
    them above ``M/2``) take the route ``cliques``: a checked schedule, its bound at most its
    value and at least the LP's with the cliques over the textbook windows (which contain the
    route's) less one."""
    from kvopt.exact import solve
    from kvopt.schedule import check_schedule

    rng = np.random.default_rng(3)
    M = 34
    jobs = []
    for _ in range(15):
        s = int(rng.integers(1, 6))
        jobs.append((s, int(rng.integers(1, M - s + 1)), 0))
    jobs[0] = (2, 30, 0)  # at least a quarter of the jobs above M/2
    jobs[1] = (3, 25, 0)
    jobs[2] = (1, 20, 0)
    jobs[3] = (4, 18, 0)
    inst = _inst(M, jobs)
    res = solve(inst, time_limit=30, threads=2)
    assert res.route is not None and res.route.name == "cliques"
    assert [p.backend for p in res.route.phases][0] == "bnb-cliques"
    assert check_schedule(inst, res.schedule).valid
    assert res.bound <= res.objective
    ref = _textbook_cliques_lp(inst, 20.0)
    assert res.bound >= np.ceil(ref.value - 1e-6) - 1


def _textbook_cliques_lp(inst: Instance, seconds: float):
    """The LP with the completion cliques over the textbook windows (which contain every
    route's windows), separated for at most ``seconds``."""
    import time

    from kvopt.exact.backends.highs_glue import to_highs
    from kvopt.exact.bounds.cliques import add_cliques

    lo, hi = start_windows(inst, "total")
    model = build_matrix(inst, "total", lo, hi)
    h = to_highs(model, relax=True)
    nodes = Nodes.of(inst, model.col_group, model.col_start, model.groups)
    return add_cliques(h, inst, nodes, deadline=time.monotonic() + seconds)


def _summaries_like(seed: int, n: int) -> Instance:
    """Jaillet et al.'s setting as the summaries give it (``M ~ U{30..50}``, ``s ~ U{1..5}``,
    ``o ~ U{1..M − s}``, all at round 0)."""
    rng = np.random.default_rng(seed)
    M = int(rng.integers(30, 51))
    s = rng.integers(1, 6, n)
    o = [int(rng.integers(1, M - int(si) + 1)) for si in s]
    return Instance.from_arrays(M, [int(v) for v in s], o)


def test_dropping_slack_rows_keeps_the_value_and_the_row_order():
    """``drop_slack`` (rows kept only while tight, issue 52 round 2): the same converged value
    as keeping every row, fewer rows in the model at the end, and ``added`` lists exactly the
    rows HiGHS holds after the model's, in its order (the prices read their duals by it)."""
    import time

    from kvopt.exact.backends.highs_glue import to_highs
    from kvopt.exact.bounds.cliques import add_cliques

    inst = _summaries_like(7, 10)
    lo, hi = start_windows(inst, "total")
    model = build_matrix(inst, "total", lo, hi, aggregate=False)
    nodes = Nodes.of(inst, model.col_group, model.col_start, model.groups)
    out = {}
    for drop in (False, True):
        h = to_highs(model, relax=True)
        res = add_cliques(h, inst, nodes, deadline=time.monotonic() + 60, drop_slack=drop)
        assert res.converged
        assert h.getNumRow() == model.n_rows + len(res.added)
        for r, (k, cols) in enumerate(res.added):
            _, _, upper, _ = h.getRow(model.n_rows + r)
            _, idx, val = h.getRowEntries(model.n_rows + r)
            assert upper == k and sorted(idx) == sorted(cols.tolist()) and set(val) == {1.0}
        out[drop] = res
    assert out[True].value == pytest.approx(out[False].value, abs=1e-6)
    assert len(out[True].added) < len(out[False].added)  # 583 against 687 rows
    assert out[False].rows == len(out[False].added)


def test_the_routes_cliques_serve_15_to_60_jobs_at_round_0():
    """The completion cliques reach n = 60 at round 0 (issue 52, ``models/cliques.md`` §10–12):
    the setting's draws at n = 15 and 19 take ``cliques`` (the branch and bound over the cut
    windows for half the limit), at n = 20, 25 and 30 ``cliques-ils`` (the local search first,
    round 4, §11), at n = 31–60 ``cliques-events`` (the local search, then the event model with
    the prices, round 5, §12); n = 61, arrivals, a short limit or one thread take none."""
    from kvopt.exact.portfolio import case_of
    from kvopt.exact.portfolio.routes import CLIQUES_EVENTS_N, route_for

    def route(inst, threads=2, limit=60.0):
        return route_for(case_of(inst, "total", limit, threads, compiled=True)).name

    clique_routes = ("cliques", "cliques-ils", "cliques-events")
    lo, hi = CLIQUES_EVENTS_N
    for n, name in ((15, "cliques"), (19, "cliques"), (20, "cliques-ils"), (25, "cliques-ils"),
                    (30, "cliques-ils"), (lo, "cliques-events"), (45, "cliques-events"),
                    (hi, "cliques-events")):  # fmt: skip
        inst = _summaries_like(11, n)
        assert 4 * int((2 * inst.responses > inst.memory).sum()) >= n  # long share ≥ 0.25
        assert route(inst) == name
        assert route(inst, threads=1) not in clique_routes
        assert route(inst, limit=10.0) not in clique_routes
    assert route(_summaries_like(11, hi + 1)) not in clique_routes
    for n in (25, 45):
        late = _summaries_like(11, n)
        late = Instance.from_arrays(
            late.memory, late.prompts, late.responses, np.arange(late.n, dtype=np.int64)
        )
        assert route(late) not in clique_routes


@settings(max_examples=10, deadline=None)
@given(st.integers(3, 12), _jobs)
def test_the_prices_hold_when_the_rows_duals_are_stale(memory, jobs):
    """When rows were dropped and the deadline came before the next solve (``aligned`` false),
    the prices read only the memory rows' duals: Lemma L1 still holds for every schedule in
    the windows, and the bound is at most Opt."""
    from dataclasses import replace

    import kvopt.exact.bounds.cliques as cliques_module

    real = cliques_module.add_cliques

    def stale(*args, **kwargs):
        return replace(real(*args, **kwargs), aligned=False)

    inst = _inst(memory, jobs)
    ub = value_of(inst, heuristic_starts(inst, "total", seconds=0.01), "total")
    lo, hi = start_windows(inst, "total", ub)
    cliques_module.add_cliques = stale
    try:
        prices = time_indexed_prices(inst, lo, hi, 10.0, DEFAULT_KS)
    finally:
        cliques_module.add_cliques = real
    assert prices is not None
    lemma_l1_values(inst, prices, lo, hi)


def _looks_ahead(running, memory) -> bool:
    """Lemma C2 (``models/cliques.md`` §9) for one round's running nodes ``(h, P)``: for every
    ``ρ ≥ 0``, the nodes with ``P − h ≥ ρ`` hold at most ``M`` together ``ρ`` rounds later."""
    rho_max = max((p - h for h, p in running), default=-1)
    return all(
        sum(h + rho for h, p in running if p - h >= rho) <= memory for rho in range(rho_max + 1)
    )


@settings(max_examples=30, deadline=None)
@given(st.integers(3, 12), _jobs)
def test_every_feasible_schedule_looks_ahead(memory, jobs):
    """Lemma C2 on every feasible schedule (arrivals included): each round's running set
    passes the look-ahead test."""
    inst = _inst(memory, jobs)
    vecs, _ = _brute(inst)
    for v in vecs:
        end = max((int(t) + int(o) for t, o in zip(v, inst.responses)), default=0)
        for tau in range(end):
            running = [
                (int(s) + tau - int(t) + 1, int(s) + int(o))
                for s, o, t in zip(inst.prompts, inst.responses, v)
                if int(t) <= tau < int(t) + int(o)
            ]
            assert _looks_ahead(running, inst.memory)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(4, 30),
    st.lists(st.tuples(st.integers(1, 30), st.integers(0, 29)), min_size=1, max_size=6),
)
def test_lemma_c1_is_a_case_of_the_look_ahead_test(memory, pairs):
    """Every set of nodes that passes Lemma C2's test keeps every row of Lemma C1 (``k ≤ 3``,
    every ``θ``): the look-ahead hull lies inside the rows (``models/cliques.md`` §9)."""
    running = [(h, h + r) for h, r in pairs if h + r <= memory]
    if not _looks_ahead(running, memory):
        return
    for k in (1, 2, 3):
        for theta in range(1, memory + 1):
            q = [1 for h, p in running if h >= theta and (k + 1) * p - k * h > memory - k * theta]
            assert len(q) <= k


def _model2_like(seed: int, n: int) -> Instance:
    """Jaillet et al.'s model 2 as the summaries give it, with ``n`` jobs: the setting's
    lengths, arrivals spread over the first rounds (at least one after round 0)."""
    inst = _summaries_like(seed, n)
    rng = np.random.default_rng(seed + 1)
    arrivals = np.sort(rng.integers(0, max(2, (2 * n) // 3), n))
    arrivals[-1] = max(int(arrivals[-1]), 1)
    return Instance.from_arrays(inst.memory, inst.prompts, inst.responses, arrivals)


def test_the_route_cliques_arrivals_serves_model_2():
    """With arrivals (Jaillet et al.'s model 2) the draws of the setting up to
    ``CLIQUES_ARRIVALS_BNB_N[1]`` jobs take ``cliques-arrivals-bnb`` (issue 52 rounds 7-8,
    ``models/cliques.md`` §14-15: the local search, the branch and bound priced by the rows,
    its ladder), those above ``cliques-arrivals`` (round 4, §11: the local search, then the
    event model with the clique prices); one thread, a short limit, all jobs at round 0, short
    responses or n outside the two ranges do not."""
    from kvopt.exact.portfolio import case_of
    from kvopt.exact.portfolio.routes import (
        CLIQUES_ARRIVALS_BNB_N,
        CLIQUES_ARRIVALS_N,
        route_for,
    )

    def route(inst, threads=2, limit=60.0):
        return route_for(case_of(inst, "total", limit, threads, compiled=True))

    lo, hi = CLIQUES_ARRIVALS_N
    bnb_lo, bnb_hi = CLIQUES_ARRIVALS_BNB_N
    assert bnb_hi + 1 == lo  # the two rows meet
    names = ("cliques-arrivals", "cliques-arrivals-bnb")
    for n in (bnb_lo, (bnb_lo + bnb_hi) // 2, bnb_hi, lo, (lo + hi) // 2, hi):
        inst = _model2_like(5, n)
        assert 4 * int((2 * inst.responses > inst.memory).sum()) >= n  # long share ≥ 0.25
        r = route(inst)
        if n <= bnb_hi:  # the branch and bound priced by the rows (round 7, §14)
            assert r.name == "cliques-arrivals-bnb"
            assert [p.backend for p in r.phases] == ["ils", "bnb-cliques", "bnb-cliques-ladder"]
        else:
            assert r.name == "cliques-arrivals"
            assert [p.backend for p in r.phases] == ["ils", "events-cliques"]
        assert route(inst, threads=1).name not in names
        assert route(inst, limit=10.0).name not in names
        at0 = Instance.from_arrays(inst.memory, inst.prompts, inst.responses)
        assert route(at0).name not in names
        short = Instance.from_arrays(
            inst.memory, inst.prompts, np.minimum(inst.responses, 3), inst.arrivals
        )
        assert route(short).name not in names
    assert route(_model2_like(5, bnb_lo - 1)).name not in names
    assert route(_model2_like(5, hi + 1)).name not in names


@pytest.mark.slow
@pytest.mark.parametrize("above, name", [(8, "cliques-arrivals-bnb"), (0, "cliques-arrivals")])
def test_auto_takes_the_route_cliques_arrivals_and_keeps_its_bound(above, name):
    """A model-2 draw solved by ``auto`` takes ``cliques-arrivals-bnb`` (``above`` jobs over
    the least of ``CLIQUES_ARRIVALS_BNB_N``, issue 52 rounds 7-8), or ``cliques-arrivals``
    (the least of ``CLIQUES_ARRIVALS_N``): a checked schedule, a bound
    at most its value, and at least the time-indexed LP over the textbook windows less one
    (the route's LP is over narrower windows with more rows; on a loaded machine its rows may
    not converge within the limit, so the converged value is not asked for), and the
    converged LP with the cliques is above that LP here."""
    from kvopt.exact import solve
    from kvopt.exact.portfolio.routes import CLIQUES_ARRIVALS_BNB_N, CLIQUES_ARRIVALS_N
    from kvopt.schedule import check_schedule

    least = CLIQUES_ARRIVALS_BNB_N[0] if name.endswith("bnb") else CLIQUES_ARRIVALS_N[0]
    inst = _model2_like(8, least + above)
    res = solve(inst, time_limit=40, threads=2)
    assert res.route is not None and res.route.name == name
    assert check_schedule(inst, res.schedule).valid
    assert res.bound <= res.objective
    ref = _textbook_cliques_lp(inst, 60.0)
    assert res.bound >= np.ceil(ref.lp - 1e-6) - 1
    assert ref.value > ref.lp
