"""The batch cap (SPEC §10.1, ``Instance.max_batch``) in the exact models: the time-indexed IP
(HiGHS, Pyomo), the CP-SAT models, the serial placement, the routes and the bounds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.bound import lower_bounds, machines_bound, machines_makespan
from kvopt.errors import InputError
from kvopt.exact import ROUTES, solve
from kvopt.exact.bounds.cliques import clique_bound
from kvopt.exact.common import lower_bound, root_lower_bound, start_windows
from kvopt.exact.heuristic import heuristic_starts, place
from kvopt.exact.placement import place_events
from kvopt.exact.portfolio.cappedrows import CAPPED_MAX_CELLS, CAPPED_ROUTES
from kvopt.exact.portfolio.routes import MODEL_MAX_CELLS
from kvopt.exact.tools import lp_bound
from kvopt.instance import Instance, Job
from kvopt.schedule import Schedule, check_schedule


@st.composite
def capped(draw, max_n: int = 6, max_memory: int = 16, arrivals: bool = True) -> Instance:
    """Small instances with a batch cap of 1 … n (Hypothesis strategy)."""
    memory = draw(st.integers(4, max_memory))
    n = draw(st.integers(1, max_n))
    jobs = []
    for _ in range(n):
        s = draw(st.integers(1, memory - 1))
        o = draw(st.integers(1, min(memory - s, 6)))
        a = draw(st.integers(0, 4)) if arrivals else 0
        jobs.append(Job(prompt=s, response=o, arrival=a))
    cap = draw(st.integers(1, max(n, 1)))
    return Instance(memory=memory, jobs=tuple(jobs), max_batch=cap)


def uncapped(inst: Instance) -> Instance:
    return inst.replace(max_batch=None)


def rounds_ok(inst: Instance, starts) -> bool:
    """Every round's memory ≤ M and at most B jobs running, counted round by round (not by
    the code under test); every start at or after its arrival."""
    mem: dict[int, int] = {}
    cnt: dict[int, int] = {}
    for s, o, a, t in zip(inst.prompts, inst.responses, inst.arrivals, starts):
        if int(t) < int(a):
            return False
        for u in range(int(o)):
            mem[int(t) + u] = mem.get(int(t) + u, 0) + int(s) + u + 1
            cnt[int(t) + u] = cnt.get(int(t) + u, 0) + 1
    cap = inst.max_batch if inst.max_batch is not None else inst.n
    return all(v <= inst.memory for v in mem.values()) and all(v <= cap for v in cnt.values())


def starts_of(result) -> list[int]:
    st_ = [0] * result.n
    for a in result.schedule.attempts:
        if a.completed:
            st_[a.job] = a.start
    return st_


def brute_opt(inst: Instance, objective: str = "total") -> int:
    """Opt by enumerating every start vector in the SPEC §1 windows (tiny instances only)."""
    import itertools

    lo, hi = start_windows(inst, objective)
    best = None
    for starts in itertools.product(*(range(int(a), int(b) + 1) for a, b in zip(lo, hi))):
        if rounds_ok(inst, starts):
            ends = [t + int(o) for t, o in zip(starts, inst.responses)]
            v = sum(ends) if objective == "total" else max(ends)
            best = v if best is None or v < best else best
    assert best is not None
    return best


# ------------------------------------------------------------------ serial placement


def _earliest_by_rounds(inst: Instance, order) -> list[int]:
    """The serial schedule by a round-by-round scan (independent of the code under test)."""
    H = int(inst.arrivals.max() + inst.responses.sum()) + 2
    mem = [0] * (H + int(inst.responses.max()) + 2)
    cnt = [0] * len(mem)
    B = inst.max_batch
    out = [0] * inst.n
    for i in order:
        s, o, t = int(inst.prompts[i]), int(inst.responses[i]), int(inst.arrivals[i])
        while not all(mem[t + u] + s + u + 1 <= inst.memory and cnt[t + u] < B for u in range(o)):
            t += 1
        out[i] = t
        for u in range(o):
            mem[t + u] += s + u + 1
            cnt[t + u] += 1
    return out


@settings(max_examples=150)
@given(inst=capped(max_n=8, max_memory=30), data=st.data())
def test_capped_placement_is_the_earliest_fit(inst, data):
    order = data.draw(st.permutations(range(inst.n)))
    expect = _earliest_by_rounds(inst, order)
    assert place(inst, order).tolist() == expect  # the array placement
    args = (inst.memory, inst.prompts.tolist(), inst.responses.tolist(), inst.arrivals.tolist())
    assert place_events(*args, order, inst.max_batch) == expect  # the profile placement


def test_heuristic_respects_the_cap_on_the_profile_path():
    """Long responses take the piecewise-linear profile (``PROFILE_ROUNDS_PER_PAIR``): the cap
    holds there too."""
    rng = np.random.default_rng(5)
    s = rng.integers(1, 50, 6)
    o = rng.integers(2_000, 5_000, 6)
    inst = Instance.from_arrays(20_000, s, o, max_batch=2)
    st_ = heuristic_starts(inst, seconds=0.05)
    ends = sorted((int(t), int(t + r)) for t, r in zip(st_, o))
    for t, _ in ends:  # the count is largest at a start
        assert sum(1 for a, b in ends if a <= t < b) <= 2


# ------------------------------------------------------------------ the exact models


@settings(max_examples=25)
@given(inst=capped())
def test_ip_and_cpsat_agree_under_the_cap(inst):
    ip = solve(inst, solver="highs", time_limit=30, threads=1)
    cp = solve(inst, solver="cpsat", time_limit=30, threads=1)
    ev = solve(inst, solver="events", time_limit=30, threads=1)
    assert ip.optimal and cp.optimal and ev.optimal
    assert ip.objective == cp.objective == ev.objective
    for r in (ip, cp, ev):
        assert rounds_ok(inst, starts_of(r))
    # the cap only removes schedules; B ≥ n removes none
    free = solve(uncapped(inst), solver="highs", time_limit=30, threads=1)
    assert ip.objective >= free.objective
    if inst.max_batch >= inst.n:
        assert ip.objective == free.objective


@settings(max_examples=12)
@given(inst=capped(max_n=4, max_memory=10))
def test_models_reach_the_enumerated_optimum(inst):
    """Both objectives against enumeration, with Pyomo too."""
    for objective in ("total", "makespan"):
        want = brute_opt(inst, objective)
        for solver in ("highs", "cpsat", "pyomo", "auto"):
            r = solve(inst, objective=objective, solver=solver, time_limit=30, threads=1)
            assert r.optimal and r.objective == want, (solver, objective)


@settings(max_examples=25)
@given(inst=capped())
def test_auto_under_the_cap(inst):
    """``auto`` takes a capped row, its schedule passes the checker and keeps the cap, and
    every bound stays at most Opt."""
    r = solve(inst, time_limit=30, threads=2)
    assert r.optimal
    assert r.route.name.startswith("capped")
    assert rounds_ok(inst, starts_of(r)) and check_schedule(inst, r.schedule).valid
    b = lower_bounds(inst)
    assert b.machines is not None and b.best <= r.objective
    assert max(b.area, b.processing, b.machines) <= r.objective
    assert lower_bound(inst, "total") <= root_lower_bound(inst, "total") <= r.objective
    assert lp_bound(inst, time_limit=10) <= r.objective + 1e-6
    assert clique_bound(inst, time_limit=10).value <= r.objective + 1e-6
    span = solve(inst, objective="makespan", time_limit=30, threads=2)
    assert span.optimal and rounds_ok(inst, starts_of(span))
    assert max(b.makespan.values()) <= span.objective
    assert root_lower_bound(inst, "makespan") <= span.objective


def test_cap_binds_and_bound_names_it():
    """A cap of 1 serialises the jobs: Opt is SPT's ``Σ_r (n − r) o_(r)``, which the machines
    bound meets (and names); without the cap the same jobs run side by side."""
    inst = Instance.from_arrays(100, [1, 1, 1, 1], [3, 1, 4, 2], max_batch=1)
    r = solve(inst, time_limit=30)
    assert r.optimal and r.objective == 1 * 4 + 2 * 3 + 3 * 2 + 4 * 1
    b = lower_bounds(inst)
    assert (b.best, b.best_name) == (r.objective, "machines")
    assert b.makespan["machines"] == 10 == machines_makespan(inst)
    assert "machines" in b.to_dict()
    free = uncapped(inst)
    assert machines_bound(free) is None and "machines" not in lower_bounds(free).to_dict()
    assert solve(free, time_limit=30).objective == 3 + 1 + 4 + 2
    two = inst.replace(max_batch=2)  # SPT on two machines: 1, 2, then 3 after 1, 4 after 2
    assert machines_bound(two) == 1 + 2 + 4 + 6 == solve(two, time_limit=30).objective


def test_branch_and_bound_refuses_a_capped_instance():
    inst = Instance.from_arrays(30, [3, 4, 2], [5, 6, 3], max_batch=2)
    with pytest.raises(InputError, match="does not model the batch cap"):
        solve(inst, solver="bnb", time_limit=5)
    assert solve(uncapped(inst), solver="bnb", time_limit=5).optimal


def test_capped_rows_come_first_and_name_only_capped_backends():
    from kvopt.exact.portfolio import DEFAULT

    assert ROUTES[: len(CAPPED_ROUTES)] == CAPPED_ROUTES
    assert CAPPED_MAX_CELLS == MODEL_MAX_CELLS
    for route in CAPPED_ROUTES:
        assert route.when.capped is True
        for phase in route.phases:
            assert DEFAULT.backend(phase.backend).batch_cap
    for name in ("bnb", "ladder", "bnb-cliques", "blocks"):
        assert not getattr(DEFAULT.backend(name), "batch_cap", False)


def test_uncapped_instances_take_no_capped_row():
    inst = Instance.from_arrays(30, [3, 4, 2, 5], [5, 6, 3, 2])
    assert not solve(inst, time_limit=10).route.name.startswith("capped")


def test_worker_process_keeps_the_cap():
    """HiGHS in its worker process (large models) rebuilds the instance with the cap."""
    from kvopt.exact.backends.highs import Highs
    from kvopt.exact.registry import BACKENDS

    inst = Instance.from_arrays(100, [1, 1, 1, 1], [3, 1, 4, 2], max_batch=1)
    portfolio_backends = {"highs": Highs(isolate=True)}
    from kvopt.exact.portfolio import Portfolio

    r = solve(inst, solver="highs", time_limit=30, portfolio=Portfolio(backends=portfolio_backends))
    assert r.optimal and r.objective == 20
    assert BACKENDS["highs"].batch_cap


@settings(max_examples=25)
@given(inst=capped(max_n=7))
def test_branch_and_bound_without_the_cap_keeps_it(inst):
    """``bnb-without-cap`` returns a schedule that keeps the cap (its own when that does, else
    the warm start) and a bound at most the capped Opt."""
    from kvopt.exact.backend import Limits, Problem
    from kvopt.exact.portfolio.variants import VARIANTS

    warm = heuristic_starts(inst, seconds=0.01)
    ub = int((warm + inst.responses).sum())
    lo, hi = start_windows(inst, "total", ub)
    opt = solve(inst, solver="cpsat", time_limit=30, threads=1)
    assert opt.optimal
    for name in ("bnb-without-cap", "ladder-without-cap"):
        r = VARIANTS[name].solve(
            Problem(inst, "total", lo, hi, warm=warm, ub=ub), Limits(time_limit=20)
        )
        assert r.starts is not None and rounds_ok(inst, r.starts)
        assert r.bound <= opt.objective + 1e-6
        if r.proven:
            assert int((r.starts + inst.responses).sum()) == opt.objective


def test_the_checker_rejects_the_uncapped_optimum_under_a_cap():
    """The uncapped optimum of four short jobs runs them side by side: under a cap of 1 the
    checker (SPEC §10.1's rule) refuses it, and the capped solve returns another schedule."""
    inst = Instance.from_arrays(100, [1, 1, 1, 1], [3, 1, 4, 2], max_batch=1)
    free = solve(uncapped(inst), time_limit=30)
    side_by_side = Schedule.from_starts(inst, starts_of(free), producer="test")
    assert not check_schedule(inst, side_by_side).valid
    assert check_schedule(inst, solve(inst, time_limit=30).schedule).valid


def test_capped_ladder_route_keeps_the_cap():
    """n = 21 (the route 'capped-ladder': the local search, the ladder without the cap, the
    event model): whatever the ladder finds without the cap, the schedule returned keeps it,
    and the bound is at most the objective and at least the machines bound."""
    from kvopt.exact.portfolio import Portfolio
    from kvopt.generators import generate

    inst = generate("random", 3, n=21).replace(max_batch=2)
    r = solve(inst, time_limit=6, threads=2, portfolio=Portfolio(compiled=True))
    assert r.route.name == "capped-ladder"
    assert rounds_ok(inst, starts_of(r)) and check_schedule(inst, r.schedule).valid
    assert machines_bound(inst) <= r.bound <= r.objective
