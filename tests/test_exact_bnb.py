"""The branch and bound of ``models/bnb.md`` and the small-instance path of ``solve(auto)``.

Independent checks: brute force (``tests/test_exact.py``), HiGHS and CP-SAT on
the same instances, both objectives, with arrivals and identical jobs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_exact import assert_certified, brute_force
from test_exact_relax import schedules

from kvopt.exact import SolveStatus, solve
from kvopt.exact.backend import Hooks, Limits, Problem
from kvopt.exact.bnb import BranchAndBound
from kvopt.exact.common import start_windows, value_of
from kvopt.exact.heuristic import heuristic_starts
from kvopt.generators import generate
from kvopt.instance import Instance

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def instances(draw, max_n=5, max_o=4, arrivals=True, max_memory=14):
    """Random instances; some jobs are copies of earlier ones (the identical-jobs rule)."""
    memory = draw(st.integers(4, max_memory))
    n = draw(st.integers(1, max_n))
    s_, o_, a_ = [], [], []
    for i in range(n):
        if i and draw(st.integers(0, 3)) == 0:
            k = draw(st.integers(0, i - 1))
            s_.append(s_[k])
            o_.append(o_[k])
            a_.append(a_[k])
            continue
        o = draw(st.integers(1, min(max_o, memory - 1)))
        s_.append(draw(st.integers(1, memory - o)))
        o_.append(o)
        a_.append(draw(st.integers(0, 3)) if arrivals else 0)
    return Instance.from_arrays(memory, s_, o_, a_)


@pytest.mark.parametrize("objective", ["total", "makespan"])
@given(inst=instances(max_n=5, max_o=4))
@settings(max_examples=60, **SETTINGS)
def test_bnb_agrees_with_brute_force(inst, objective):
    res = solve(inst, objective=objective, solver="bnb", time_limit=20, threads=1)
    assert res.status is SolveStatus.OPTIMAL, res.native_status
    assert res.objective == brute_force(inst, objective)
    assert_certified(inst, res, objective)


def _agree(inst, objective, solvers=("highs", "cpsat")):
    a = solve(inst, objective=objective, solver="bnb", time_limit=30, threads=1)
    assert a.status is SolveStatus.OPTIMAL
    assert_certified(inst, a, objective)
    for other in solvers:
        b = solve(inst, objective=objective, solver=other, time_limit=30, threads=1)
        assert b.status is SolveStatus.OPTIMAL
        assert a.objective == b.objective, other


@pytest.mark.parametrize("objective", ["total", "makespan"])
@given(inst=instances(max_n=7, max_o=5, max_memory=24))
@settings(max_examples=12, **SETTINGS)
def test_bnb_agrees_with_highs_and_cpsat(inst, objective):
    _agree(inst, objective)


@pytest.mark.slow
@pytest.mark.parametrize("objective", ["total", "makespan"])
@pytest.mark.parametrize("arrivals", [False, True])
@given(data=st.data())
@settings(max_examples=40, **SETTINGS)
def test_bnb_agrees_160(objective, arrivals, data):
    """4 × 40 random instances up to n = 8: branch and bound = CP-SAT."""
    inst = data.draw(instances(max_n=8, max_o=6, arrivals=arrivals, max_memory=30))
    _agree(inst, objective, solvers=("cpsat",))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("objective", ["total", "makespan"])
def test_auto_small_path_agrees_with_race(threads, objective):
    """n = 8–10 mixed instances: ``auto`` (branch and bound + CP-SAT) = round 1's ``race``."""
    for seed in (3, 4):
        inst = generate("random", seed, n=8 + seed % 3, memory=40, max_response=8)
        a = solve(inst, objective=objective, time_limit=30, threads=threads)
        b = solve(inst, objective=objective, solver="race", time_limit=30, threads=threads)
        assert a.optimal and b.optimal
        assert a.objective == b.objective
        assert_certified(inst, a, objective)
        assert a.solver.startswith("auto(")


def test_auto_small_path_with_arrivals():
    inst = generate("arrivals", 5, base="random", n=9, memory=40, max_response=8, rate=0.5)
    assert inst.arrivals.max() > 0
    a = solve(inst, time_limit=30, threads=2)
    b = solve(inst, solver="cpsat", time_limit=30, threads=1)
    assert a.optimal and b.optimal and a.objective == b.objective
    assert_certified(inst, a, "total")


def test_stopped_search_never_claims_optimal():
    inst = generate("random", 7, n=12, memory=72, max_response=12)
    w = heuristic_starts(inst, "total", seconds=0.0)
    ub = value_of(inst, w, "total")
    lo, hi = start_windows(inst, "total", ub)
    raw = BranchAndBound(node_limit=300).solve(Problem(inst, "total", lo, hi, w, ub), Limits())
    assert raw.native_status == "stopped"
    full = solve(inst, time_limit=60, threads=2)
    assert full.optimal
    assert raw.bound <= full.objective
    assert value_of(inst, raw.starts, "total") >= full.objective


def test_outside_incumbent_is_proven_not_returned():
    """With a racing solver's value the search proves it and keeps its own (worse) schedule."""
    inst = generate("random", 2, n=7, memory=40, max_response=7)
    opt = brute_force(inst, "total")
    w = heuristic_starts(inst, "total", seconds=0.0)
    ub = value_of(inst, w, "total")
    lo, hi = start_windows(inst, "total", ub)
    problem = Problem(inst, "total", lo, hi, w, ub)
    raw = BranchAndBound().solve(problem, Limits(), Hooks(outside=lambda: opt))
    assert raw.native_status in ("optimal", "exhausted")
    assert raw.bound == opt
    assert value_of(inst, raw.starts, "total") >= opt


def test_identical_jobs_only():
    inst = Instance.from_arrays(20, [4] * 6, [5] * 6)
    want = brute_force(inst, "total")
    for threads in (1, 2):
        res = solve(inst, time_limit=20, threads=threads)
        assert res.optimal and res.objective == want


def test_long_responses_take_the_general_path():
    """Beyond the small routes' rounds of responses ``auto`` skips the branch and bound."""
    from kvopt.exact.portfolio import ROUTES

    SMALL_ROUNDS = int(next(r for r in ROUTES if r.name == "small-race").when.rounds_max)
    o = [SMALL_ROUNDS // 2 + 1, SMALL_ROUNDS // 2 + 1, 3]
    inst = Instance.from_arrays(2 * SMALL_ROUNDS, [1, 1, 5], o)
    res = solve(inst, time_limit=30, threads=2)
    assert res.optimal and "bnb" not in res.solver and res.route.name == "events-small"
    assert res.objective == int(np.sum(o))


@pytest.mark.parametrize("lagrange", [False, True])
@given(inst=instances(max_n=6, max_o=5, max_memory=16))
# found by random search: each is solved wrongly if a blocking limit is one round too tight
@example(inst=Instance.from_arrays(14, [4, 8, 4, 8, 5, 5], [2, 1, 4, 1, 5, 5]))
@example(inst=Instance.from_arrays(12, [11, 3, 7, 2, 1, 11], [1, 3, 3, 3, 3, 1]))
@settings(max_examples=60, **SETTINGS)
def test_rules_keep_an_optimal_schedule(inst, lagrange):
    """Started at ``ub = Opt`` without a schedule, the search must find one of value Opt: a
    pruning rule that cut every optimal schedule (the active rule on the jobs left, the
    blocking limit, the Lagrangian bound, reduced-cost fixing) ends ``exhausted``."""
    opt = brute_force(inst, "total")
    lo, hi = start_windows(inst, "total", opt)
    raw = BranchAndBound(lagrange=lagrange).solve(
        Problem(inst, "total", lo, hi, None, opt), Limits(time_limit=30, threads=1)
    )
    assert raw.native_status == "optimal"
    assert value_of(inst, raw.starts, "total") == opt
    assert raw.bound == opt


@given(inst=instances(max_n=6, max_o=4, max_memory=12), data=st.data())
@settings(max_examples=60, **SETTINGS)
def test_lagrangian_bound_holds_for_any_duals(inst, data):
    """Any prices ``y ≤ 0`` give a valid bound (``models/bnb.md`` §3): at the root it is at
    most Opt, and a search pruning with it still finds an optimal schedule."""
    from kvopt.exact.bnb import _Search

    opt = brute_force(inst, "total")
    lo, hi = start_windows(inst, "total", opt)
    search = _Search(inst, "total", lo, hi, opt + 1, None, float("inf"), None, None, None)
    price = st.integers(-(2**22), 0).map(lambda v: v / 2**20)
    ym = data.draw(st.lists(price, min_size=search.H + 1, max_size=search.H + 1))
    yc = data.draw(st.lists(price, min_size=search.H + 1, max_size=search.H + 1))
    search.set_duals(ym, yc)
    root = sum(search.dslack) + sum(search.sufmin[j][search.a[j]] for j in range(inst.n))
    assert root <= opt
    search.run()
    assert search.best == opt and search.best_starts is not None


@given(inst=instances(max_n=5, max_o=4, max_memory=12), data=st.data())
@settings(max_examples=80, **SETTINGS)
def test_every_optimal_schedule_survives_the_rules(inst, data):
    """Each optimal schedule (identical jobs in index order, rule 1) is followed alone down
    the search tree: no bound, no active-rule test and no blocking limit may prune it."""
    from kvopt.exact.bnb import _Search
    from kvopt.exact.bounds.relax import lp_duals

    opt = brute_force(inst, "total")
    all_opt = [starts.tolist() for starts, value in schedules(inst, opt) if value == opt]
    lo, hi = start_windows(inst, "total", opt)
    ym, yc = lp_duals(inst, lo, hi, 10.0)
    key = list(zip(inst.prompts.tolist(), inst.responses.tolist(), inst.arrivals.tolist()))
    ordered = [
        st_
        for st_ in all_opt
        if all(
            st_[i] <= st_[j]
            for i in range(inst.n)
            for j in range(i + 1, inst.n)
            if key[i] == key[j]
        )
    ]
    assert ordered
    target = data.draw(st.sampled_from(ordered))

    class Path(_Search):
        def fits_at(self, j, t2, ends):
            return t2 == target[j] and super().fits_at(j, t2, ends)

    search = Path(inst, "total", lo, hi, opt + 1, None, float("inf"), None, None, None)
    if data.draw(st.booleans()):
        search.set_duals(ym, yc)
    search.run()
    assert search.best_starts == target


@given(inst=instances(max_n=6, max_o=5, max_memory=16), data=st.data())
@settings(max_examples=60, **SETTINGS)
def test_memory_checks_match_their_definition(inst, data):
    """``fits`` and ``_fits_moved`` (a maximum of ``mem + τ`` over the window, round 3) agree
    with the round-by-round definition; ``add`` undoes itself, priced slack included."""
    from kvopt.exact.bnb import _Search

    lo, hi = start_windows(inst, "total", int(np.sum(inst.responses)) * inst.n + 100)
    search = _Search(inst, "total", lo, hi, 10**9, None, float("inf"), None, None, None)
    price = st.integers(-(2**22), 0).map(lambda v: v / 2**20)
    ym = data.draw(st.lists(price, min_size=search.H + 1, max_size=search.H + 1))
    yc = data.draw(st.lists(price, min_size=search.H + 1, max_size=search.H + 1))
    search.set_duals(ym, yc)
    slack0 = list(search.dslack)
    s, o, M = inst.prompts.tolist(), inst.responses.tolist(), inst.memory

    def load(skip=-1):
        mem = [0] * (search.H + 1)
        for k in range(inst.n):
            if k != skip and search.start[k] >= 0:
                for u in range(o[k]):
                    mem[search.start[k] + u] += s[k] + 1 + u
        return mem

    def fits(j, t, skip=-1):
        mem = load(skip)
        return all(mem[t + u] + s[j] + 1 + u <= M for u in range(o[j]))

    placed = []
    for j in data.draw(st.permutations(range(inst.n))):
        t = data.draw(st.integers(search.a[j], search.hi[j]))
        assert search.fits(j, t) == fits(j, t)
        if search.fits(j, t):
            search.add(j, t, 1)
            search.start[j] = t
            placed.append(j)
            assert search.mem == load()
    for k in placed:
        for t2 in range(search.a[k], search.start[k]):
            assert search._fits_moved(k, t2) == fits(k, t2, skip=k)
    for k in reversed(placed):
        search.add(k, search.start[k], -1)
        search.start[k] = -1
    assert search.mem == [0] * (search.H + 1)
    assert search.gm == list(range(search.H + 1))
    assert search.dslack == slack0


@given(
    used=st.lists(st.integers(0, 12), min_size=1, max_size=30),
    o=st.integers(1, 6),
    s=st.integers(1, 6),
    t=st.integers(0, 30),
    span=st.integers(0, 30),
)
@settings(max_examples=300, **SETTINGS)
def test_first_fit_is_the_earliest_fitting_start(used, o, s, t, span):
    """``first_fit``'s jumps skip no fitting start: it returns the first start in ``[t, hi]``
    at which every round ``t' + u`` has room for ``s + u + 1`` (M = 12), or −1."""
    from kvopt.exact.common import first_fit

    M, hi = 12, t + span
    used = used + [0] * (hi + o + 1)  # free beyond the profile given
    gm = [u + tau for tau, u in enumerate(used)]
    want = next(
        (p for p in range(t, hi + 1) if all(used[p + u] + s + u + 1 <= M for u in range(o))), -1
    )
    assert first_fit(gm, t, o, M - s - 1, hi) == want


def _completions(inst, lo, hi, rest, t, last, used):
    """Every start assignment of the jobs ``rest`` after a node ``(t, last)`` whose placed jobs
    use ``used[τ]``, by the definition: windows, starts ``≥ t`` (``> t`` below ``last``), and
    memory round by round."""
    import itertools

    M, s, o = inst.memory, inst.prompts, inst.responses
    ranges = [range(max(int(lo[j]), t + 1 if j < last else t), int(hi[j]) + 1) for j in rest]
    out = set()
    for starts in itertools.product(*ranges):
        mem = dict(enumerate(used))
        for j, p in zip(rest, starts):
            for u in range(int(o[j])):
                mem[p + u] = mem.get(p + u, 0) + int(s[j]) + u + 1
        if max(mem.values()) <= M:
            out.add(starts)
    return out


@given(
    inst=instances(max_n=6, max_o=3, max_memory=12),
    objective=st.sampled_from(["total", "makespan"]),
)
@settings(max_examples=80, **SETTINGS)
def test_memo_drops_only_states_whose_completions_an_earlier_state_has(inst, objective):
    """The memo's rule (``models/bnb.md`` §4, rule 3): a state it drops has every completion
    (by the definition) in the completions of the earlier state it compares with."""
    from kvopt.exact.bnb import _Search

    opt = brute_force(inst, objective)
    lo, hi = start_windows(inst, objective, opt + 2)
    states = []

    class Recording(_Search):
        def memo_drops(self, placed, tmin, prof, t, last, cost):
            used = [g - tau for tau, g in enumerate(self.gm)]
            states.append((placed, tmin, tuple(prof), t, last, cost, used))
            return super().memo_drops(placed, tmin, prof, t, last, cost)

    search = Recording(inst, objective, lo, hi, opt + 3, None, float("inf"), None, None, None)
    search.run()
    assert search.best == opt
    for b, (placed, tmin, prof, t, last, _, used) in enumerate(states):
        rest = [j for j in range(inst.n) if not placed >> j & 1]
        # the key by its definition: the earliest start left on top of the placed jobs alone,
        # and the memory they hold from there on (as used(τ) + τ, up to their last round)
        alone = [min(p for (p,) in _completions(inst, lo, hi, [j], t, last, used)) for j in rest]
        assert tmin == min(alone)
        end = max((tau + 1 for tau, u in enumerate(used) if u), default=0)
        assert prof == tuple(used[tau] + tau for tau in range(tmin, end))
        for a in range(b):
            pa, ta_min, prof_a, ta, la, _, used_a = states[a]
            if (pa, ta_min, prof_a) != (placed, tmin, prof) or not _Search.dominates(
                ta, la, t, last, tmin
            ):
                continue
            mine = _completions(inst, lo, hi, rest, t, last, used)
            theirs = _completions(inst, lo, hi, rest, ta, la, used_a)
            assert mine <= theirs, (states[a][3:5], (t, last), tmin)


def test_memo_keeps_the_tie_rule_at_tmin():
    """Two states with the same jobs left, ``tmin`` and profile, where the tie rule decides:
    jobs 0 and 2 (prompt 2) placed at rounds 0 and 1 in one order or the other, jobs 1 and 3
    left, both fitting at round 1.  After ``last = 2`` job 1 may not start at round 1; after
    ``last = 0`` it may, so only the second state holds every completion of the first."""
    from kvopt.exact.bnb import _Search

    inst = Instance.from_arrays(10, [2, 1, 2, 1], [1, 1, 1, 1], [0, 0, 0, 0])
    lo, hi = np.zeros(4, dtype=np.int64), np.full(4, 4, dtype=np.int64)
    used = [3, 3]  # rounds 0 and 1 hold one placed job each
    rest, tmin = [1, 3], 1
    after_2 = _completions(inst, lo, hi, rest, 1, 2, used)
    after_0 = _completions(inst, lo, hi, rest, 1, 0, used)
    assert (1, 1) in after_0 and (1, 1) not in after_2 and after_2 < after_0
    assert _Search.dominates(1, 0, 1, 2, tmin)  # the state after 0 holds the other's
    assert not _Search.dominates(1, 2, 1, 0, tmin)
    assert _Search.dominates(0, 5, 1, 0, tmin)  # t < tmin: no completion starts at t
