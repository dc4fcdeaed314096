"""``benchmarks/tree_prices.py`` (issue 52, ``models/cliques.md`` §17): the two bounds it sets
side by side at a node of the branch and bound are bounds on the node's completions, and the
subtree search it runs below a listed node searches that subtree, to its end."""

from __future__ import annotations

import math

import pytest
from conftest import load_benchmark

from kvopt.exact import solve
from kvopt.exact.bnb import compiled


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("tree_prices")


@pytest.mark.parametrize("seed", [3, 11])
def test_both_bounds_stay_below_opt_along_an_optimal_path(bench, seed):
    """On the path of an optimal schedule every node holds that schedule, so Lemma B1 with the
    root's prices, the same with another node's prices, and the node's own LP are at most Opt;
    the own LP is at least the root's LP (its windows are narrower)."""
    inst = load_benchmark("mcsf_jaillet").summaries_instance(seed, 1, 8, 9)
    res = solve(inst, time_limit=60, threads=1)
    assert res.optimal
    tree = bench._Tree(inst, None)
    assert tree.value >= res.objective
    starts = {a.job: a.start for a in res.schedule.attempts}
    order = sorted(starts, key=lambda j: (starts[j], j))
    other = None
    for k in range(1, inst.n):
        placed = [(j, starts[j]) for j in order[:k]]
        b1, est = tree.bound(tree.search, placed)
        own = tree.own(placed, est)
        assert own is not None
        assert b1 <= res.objective + 1e-6 and own.lp <= res.objective + 1e-6
        assert own.lp >= tree.root.lp - 1e-6
        if other is not None:
            assert tree.bound(other, placed)[0] <= res.objective + 1e-6
        other = tree.priced(own)
    assert math.ceil(tree.root.lp - 1e-6) <= res.objective


@pytest.mark.skipif(not compiled.available(), reason="needs the compiled search (fast extra)")
def test_the_subtrees_of_the_listed_nodes_hold_the_optimum(bench):
    """Searched one by one below the listed nodes, with the threshold Opt + 1, the subtrees
    finish, one of them finds a schedule of value Opt and another finds none; with the
    threshold Opt none finds one."""
    from kvopt.exact.bnb.search import _CHECK_EVERY, MEMO_LIMIT

    inst = load_benchmark("mcsf_jaillet").summaries_instance(5, 1, 9, 9)
    res = solve(inst, time_limit=60, threads=1)
    assert res.optimal
    compiled.prepare()
    tree = bench._Tree(inst, None)
    tree.search.best = res.objective + 1  # list the nodes that may hold a schedule of value Opt
    table, _ = compiled.list_tasks(tree.search, 2, MEMO_LIMIT, _CHECK_EVERY)
    assert len(table) > 1
    for below, found in ((res.objective + 1, res.objective), (res.objective, None)):
        best = []
        for row in table:
            done, _, value = bench._subtree(tree, tree.search, row, 2, 60.0, below)
            assert done
            best.append(value)
        assert min(best) == (below if found is None else found)
        assert max(best) == below  # the subtrees are the nodes', not the whole tree
