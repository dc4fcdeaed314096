"""The backend protocol of ``kvopt.exact``: what each route of ``solve()`` hands the backends.

Fake backends replace the registry's entries and record the
:class:`~kvopt.exact.backend.Problem`, :class:`~kvopt.exact.backend.Limits`
and :class:`~kvopt.exact.backend.Hooks` they receive.  Round 2's bug —
``auto`` beyond ``RACE_N`` jobs never gave CP-SAT its bound workers, because a
positional ``_backend`` dropped ``bound_focus`` — fails
:func:`test_auto_beyond_race_n_passes_every_limit`; the last test follows
``bound_focus`` into the real CP-SAT's parameters.
"""

from __future__ import annotations

import importlib
import math
import threading
from dataclasses import fields

import pytest

from kvopt.exact import SolveStatus, solve
from kvopt.exact.backend import NO_HOOKS, Limits
from kvopt.exact.common import RawResult, value_of
from kvopt.exact.registry import BACKENDS
from kvopt.instance import Instance

solve_mod = importlib.import_module("kvopt.exact.solve")

#: the knobs these tests expect; a new Limits field must be added here (and routed)
KNOBS = {"time_limit", "threads", "seed", "gap", "bound_focus"}


class Recorder:
    """A backend that records its arguments and returns the warm start, without a bound."""

    def __init__(self, name: str, calls: list):
        self.name = name
        self.calls = calls

    def solve(self, problem, limits, hooks=NO_HOOKS):
        self.calls.append((self.name, problem, limits, hooks))
        return RawResult(problem.warm, None, "recorded", self.name, "fake")


@pytest.fixture
def calls(monkeypatch):
    # the routes of a pure-Python install; with the compiled branch and bound (Numba) the
    # small path reaches further (test_compiled_search_extends_the_small_path)
    monkeypatch.setattr(solve_mod, "uses_compiled", lambda n: False)
    out: list = []
    for name in list(BACKENDS):
        monkeypatch.setitem(BACKENDS, name, Recorder(name, out))
    for name in list(solve_mod._VARIANTS):
        monkeypatch.setitem(solve_mod._VARIANTS, name, Recorder(name, out))
    return out


def jobs(n: int) -> Instance:
    """``n`` distinct jobs (``auto`` routes instances with few distinct jobs to HiGHS)."""
    return Instance.from_arrays(
        4 * n, [1 + i // 3 for i in range(n)], [1 + i % 3 for i in range(n)]
    )


def check_limits(limits: Limits, time_limit: float, **want) -> None:
    """Every field of ``limits`` as expected: ``want`` names all but ``time_limit``."""
    assert {f.name for f in fields(Limits)} == KNOBS
    assert set(want) | {"time_limit"} == KNOBS
    assert 0 < limits.time_limit <= time_limit
    for key, value in want.items():
        assert getattr(limits, key) == value, key


def test_registry_names_the_solvers():
    assert solve_mod.SOLVERS == ("auto", "race", "highs", "cpsat", "bnb", "pyomo")
    for name, backend in BACKENDS.items():
        assert backend.name == name and callable(backend.solve)


def test_auto_beyond_race_n_passes_every_limit(calls):
    inst = jobs(solve_mod.RACE_N + 1)
    res = solve(inst, time_limit=5, threads=2, seed=7, gap=0.25)
    assert [c[0] for c in calls] == ["cpsat"]
    _, problem, limits, hooks = calls[0]
    check_limits(limits, 5, threads=2, seed=7, gap=0.25, bound_focus=True)
    assert problem.instance is inst and problem.objective == "total"
    assert problem.ub == value_of(inst, problem.warm, "total")
    assert hooks == NO_HOOKS
    assert res.solver == "auto(cpsat)" and res.objective == problem.ub


def test_long_limits_route_n17_n18_to_the_long_path(calls):
    """Mixed instances of n = 17, 18 jobs take the long-limit path (CP-SAT, the branch and
    bound, CP-SAT) only when the time limit reaches ``SMALL_LONG[n]`` (one thread:
    ``SMALL_LONG_ONE_THREAD`` times it); makespan, typed instances and n = 19 never do."""
    for n, need in solve_mod.SMALL_LONG.items():
        inst = jobs(n)
        assert n > solve_mod.SMALL_N and solve_mod._groups(inst) > solve_mod.TYPED_GROUPS
        for threads, factor in ((2, 1.0), (1, solve_mod.SMALL_LONG_ONE_THREAD)):
            short = need * factor - 1
            assert not solve_mod.takes_small_path(inst, "total", short, threads)
            assert solve_mod.takes_small_path(inst, "total", need * factor, threads)
            assert not solve_mod.takes_small_path(inst, "makespan", 10 * need, threads)
    assert solve_mod.takes_small_path(jobs(solve_mod.SMALL_N), "total", 1.0, 1)
    assert max(solve_mod.SMALL_LONG) + 1 not in solve_mod.SMALL_LONG
    assert not solve_mod.takes_small_path(jobs(max(solve_mod.SMALL_LONG) + 1), "total", 1e6, 2)
    typed = Instance.from_arrays(40, [2] * 9 + [5] * 8, [2] * 9 + [1] * 8)
    assert typed.n == 17 and not solve_mod.takes_small_path(typed, "total", 1e6, 2)
    # the routing itself: CP-SAT (bound workers) for LONG_CPSAT_FIRST of the limit, the branch
    # and bound for LONG_BNB_SHARE, CP-SAT again (the recorder proves nothing), each
    # warm-started with the best schedule over windows no wider than the first ones
    inst = jobs(17)
    tl = solve_mod.SMALL_LONG[17]
    solve(inst, time_limit=tl, threads=2, seed=5, gap=0.0)
    assert [c[0] for c in calls] == ["cpsat", "bnb", "cpsat"]
    share = (solve_mod.LONG_CPSAT_FIRST, solve_mod.LONG_BNB_SHARE, 1.0)
    for (name, problem, limits, _), part in zip(calls, share):
        check_limits(limits, part * tl, threads=2, seed=5, gap=0.0, bound_focus=name == "cpsat")
        assert problem.ub == value_of(inst, problem.warm, "total")
        assert (problem.lo >= calls[0][1].lo).all() and (problem.hi <= calls[0][1].hi).all()
    first = solve_mod.start_windows(inst, "total", calls[0][1].ub)
    assert (calls[0][1].lo >= first[0]).all() and (calls[0][1].hi <= first[1]).all()
    calls.clear()
    tl1 = tl * solve_mod.SMALL_LONG_ONE_THREAD
    solve(inst, time_limit=tl1, threads=1, seed=5, gap=0.0)
    assert [c[0] for c in calls] == ["cpsat", "bnb", "cpsat"]
    for (_, _, limits, _), part in zip(calls, share):
        check_limits(limits, part * tl1, threads=1, seed=5, gap=0.0, bound_focus=False)
    calls.clear()
    # … and below the limit CP-SAT with its bound workers, as beyond the small path
    solve(inst, time_limit=solve_mod.SMALL_LONG[17] - 1, threads=2)
    assert [c[0] for c in calls] == ["cpsat"] and calls[0][2].bound_focus


def test_compiled_search_extends_the_small_path(calls, monkeypatch):
    """With the compiled branch and bound, mixed instances up to ``SMALL_N_COMPILED`` jobs
    (one thread) or ``SMALL_N_SPLIT`` (two: the search split between them) take the small
    path (total completion) at any time limit; makespan, typed instances and larger ones do
    not.  Beyond ``SMALL_N`` with 2 threads it runs the branch and bound, then CP-SAT; the
    long-limit path is not taken."""
    monkeypatch.setattr(solve_mod, "uses_compiled", lambda n: True)
    big, split = solve_mod.SMALL_N_COMPILED, solve_mod.SMALL_N_SPLIT
    assert split >= big > solve_mod.SMALL_N
    for n in range(solve_mod.SMALL_N + 1, split + 1):
        assert solve_mod.takes_small_path(jobs(n), "total", 1.0, 2)
        assert solve_mod.takes_small_path(jobs(n), "total", 1.0, 1) == (n <= big)
        assert not solve_mod.takes_small_path(jobs(n), "makespan", 1e6, 2)
    assert not solve_mod.takes_small_path(jobs(split + 1), "total", 1.0, 2)
    assert not solve_mod.takes_small_path(jobs(big + 1), "total", 1.0, 1)
    typed = Instance.from_arrays(40, [2] * 9 + [5] * 8, [2] * 9 + [1] * 8)
    assert not solve_mod.takes_small_path(typed, "total", 1e6, 2)
    # 2 threads: the branch and bound alone for MID_BNB_SHARE of the limit, then CP-SAT with
    # its bound workers (beyond SMALL_N_COMPILED: SPLIT_BNB_SHARE, then the ladder), each
    # from the best schedule over windows no wider than the first
    for n, share in ((17, solve_mod.MID_BNB_SHARE), (split, solve_mod.SPLIT_BNB_SHARE)):
        calls.clear()
        inst = jobs(n)
        solve(inst, time_limit=60, threads=2, seed=3, gap=0.0)
        assert [c[0] for c in calls] == ["bnb", "cpsat" if n <= big else "ladder"]
        for (name, problem, limits, _), part in zip(calls, (share, 1.0)):
            focus = name == "cpsat"
            check_limits(limits, part * 60, threads=2, seed=3, gap=0.0, bound_focus=focus)
            assert problem.ub == value_of(inst, problem.warm, "total")
            assert (problem.lo >= calls[0][1].lo).all() and (problem.hi <= calls[0][1].hi).all()
        first = solve_mod.start_windows(inst, "total", calls[0][1].ub)
        assert (calls[0][1].lo >= first[0]).all() and (calls[0][1].hi <= first[1]).all()
        if n > 17:  # the first phase's limit is SPLIT_BNB_SHARE's, not MID_BNB_SHARE's
            assert calls[0][2].time_limit > solve_mod.MID_BNB_SHARE * 60
    # one thread: the small path's branch and bound first (then CP-SAT), even with the
    # long path's limit
    calls.clear()
    inst = jobs(17)
    solve(inst, time_limit=solve_mod.SMALL_LONG[17], threads=1, seed=3)
    assert [c[0] for c in calls] == ["bnb", "cpsat"]
    assert calls[0][2].time_limit <= solve_mod.BNB_ALONE * solve_mod.SMALL_LONG[17]


def test_ladder_beyond_the_small_path(calls, monkeypatch):
    """With the compiled search and 2 threads, mixed instances beyond the small path up to
    ``LADDER_N`` jobs (total completion) get the iterated local search for
    ``LADDER_ILS_SHARE`` of the limit, then the ladder from its best schedule over windows
    no wider; one thread, makespan, typed, larger instances and smaller ones off the small
    path (long responses) do not take it."""
    monkeypatch.setattr(solve_mod, "uses_compiled", lambda n: True)
    top = solve_mod.LADDER_N
    assert top > solve_mod.SMALL_N_SPLIT
    for n in (solve_mod.SMALL_N_SPLIT + 1, top):
        calls.clear()
        inst = jobs(n)
        solve(inst, time_limit=60, threads=2, seed=4, gap=0.0)
        assert [c[0] for c in calls] == ["ils", "ladder"]
        for (_, problem, limits, _), part in zip(calls, (solve_mod.LADDER_ILS_SHARE, 1.0)):
            check_limits(limits, part * 60, threads=2, seed=4, gap=0.0, bound_focus=False)
            assert problem.ub == value_of(inst, problem.warm, "total")
            assert (problem.lo >= calls[0][1].lo).all() and (problem.hi <= calls[0][1].hi).all()
    long = Instance.from_arrays(200, list(range(1, 19)), [30] * 18)  # off the small path
    assert not solve_mod.takes_small_path(long, "total", 5, 2)
    for inst, objective, threads in (
        (jobs(top + 1), "total", 2),
        (long, "total", 2),
        (jobs(top), "total", 1),
        (jobs(top), "makespan", 2),
        (Instance.from_arrays(60, [2] * 12 + [5] * 12, [2] * 12 + [1] * 12), "total", 2),
    ):
        calls.clear()
        solve(inst, objective=objective, time_limit=5, threads=threads)
        assert "ladder" not in [c[0] for c in calls]


def test_local_search_before_cpsat_beyond_the_ladder(calls):
    """Mixed instances of ``LADDER_N`` < n ≤ ``ILS_N`` jobs, total completion, 2 threads: the
    local search for ``LADDER_ILS_SHARE`` of the limit, then CP-SAT with its bound workers
    from its schedule; one thread, makespan and larger instances: CP-SAT alone."""
    for n in (solve_mod.LADDER_N + 1, solve_mod.ILS_N):
        calls.clear()
        inst = jobs(n)
        solve(inst, time_limit=60, threads=2, seed=1)
        assert [c[0] for c in calls] == ["ils", "cpsat"]
        (_, p0, l0, _), (_, p1, l1, _) = calls
        check_limits(
            l0, solve_mod.LADDER_ILS_SHARE * 60, threads=2, seed=1, gap=0.0, bound_focus=False
        )
        check_limits(l1, 60, threads=2, seed=1, gap=0.0, bound_focus=True)
        assert p1.ub == value_of(inst, p1.warm, "total") <= p0.ub
    for inst, objective, threads in (
        (jobs(solve_mod.ILS_N + 1), "total", 2),
        (jobs(solve_mod.ILS_N), "total", 1),
        (jobs(solve_mod.ILS_N), "makespan", 2),
    ):
        calls.clear()
        solve(inst, objective=objective, time_limit=5, threads=threads)
        assert [c[0] for c in calls] == ["cpsat"]


@pytest.mark.parametrize("share", [0.4, 0.001])
def test_compiled_mid_path_proves_what_highs_proves(monkeypatch, share):
    """The branch and bound, then CP-SAT (the path of n = 17, 18 with the compiled search),
    with the real solvers, moved down to n = 7: the optimum HiGHS proves, a bound not
    above it; with a tiny first phase CP-SAT runs too."""
    from kvopt.generators import generate

    monkeypatch.setattr(solve_mod, "uses_compiled", lambda n: True)
    monkeypatch.setattr(solve_mod, "SMALL_N", 5)
    monkeypatch.setattr(solve_mod, "SMALL_N_COMPILED", 7)
    monkeypatch.setattr(solve_mod, "MID_BNB_SHARE", share)
    from kvopt.exact import bnb, bnbfast

    if bnbfast.available() and share > 0.01:  # compiled and split between two threads (the
        # tiny share keeps the Python search, which does not finish within it at n = 7)
        monkeypatch.setattr(bnb, "COMPILED_MIN_N", 1)
        monkeypatch.setattr(bnbfast, "SPLIT_MIN_N", 1)
    phases = set()
    for seed in range(3):
        inst = generate("random", 50 + seed, n=7, memory=30, max_response=7)
        assert solve_mod._small_n(inst, "total") == 7
        ref = solve(inst, solver="highs", time_limit=30, threads=1)
        res = solve(inst, time_limit=20, threads=2, seed=seed)
        assert ref.status is SolveStatus.OPTIMAL and res.status is SolveStatus.OPTIMAL
        assert res.objective == ref.objective and res.bound <= ref.objective + 1e-6
        phases.add(res.native_status.count(";") + 1)
    if share < 0.01:
        assert 2 in phases  # the branch and bound stopped, CP-SAT proved


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("first, bnb", [(0.2, 0.5), (0.001, 0.5), (0.001, 0.001)])
def test_long_path_proves_what_highs_proves(monkeypatch, threads, first, bnb):
    """The long-limit path with the real solvers (moved down to n = 7): its phases end
    with the optimum HiGHS proves, and a bound that does not pass it; with tiny first
    phases the branch and bound, then the second CP-SAT phase, run too."""
    from kvopt.generators import generate

    monkeypatch.setattr(solve_mod, "SMALL_N", 5)
    monkeypatch.setattr(solve_mod, "SMALL_LONG", {7: 1.0})
    monkeypatch.setattr(solve_mod, "LONG_CPSAT_FIRST", first)
    monkeypatch.setattr(solve_mod, "LONG_BNB_SHARE", bnb)
    for seed in range(3):
        inst = generate("random", 40 + seed, n=7, memory=30, max_response=7)
        assert solve_mod.takes_small_path(inst, "total", 20.0, threads)
        ref = solve(inst, solver="highs", time_limit=30, threads=1)
        res = solve(inst, time_limit=20, threads=threads, seed=seed)
        assert ref.status is SolveStatus.OPTIMAL and res.status is SolveStatus.OPTIMAL
        assert res.objective == ref.objective and res.bound <= ref.objective


def test_race_splits_the_threads(calls):
    # up to RACE_N jobs, beyond the small path by the rounds of its responses
    n = 13
    inst = Instance.from_arrays(
        8 * n, [1 + i // 3 for i in range(n)], [40 + i % 3 for i in range(n)]
    )
    assert n <= solve_mod.RACE_N and inst.responses.sum() > solve_mod.SMALL_ROUNDS
    solve(inst, time_limit=5, threads=3, seed=4, gap=0.1)
    got = {c[0]: c for c in calls}
    assert sorted(got) == ["cpsat", "highs"]
    check_limits(got["highs"][2], 5, threads=1, seed=4, gap=0.1, bound_focus=False)
    check_limits(got["cpsat"][2], 5, threads=2, seed=4, gap=0.1, bound_focus=False)
    hooks = [got[k][3] for k in ("highs", "cpsat")]
    assert hooks[0] is hooks[1]
    assert isinstance(hooks[0].stop, threading.Event) and hooks[0].monitor is not None


@pytest.mark.parametrize("solver", ["highs", "cpsat", "bnb", "pyomo"])
def test_named_backend_gets_the_caller_limits(calls, solver):
    inst = jobs(solve_mod.RACE_N + 1)
    res = solve(inst, solver=solver, time_limit=5, threads=3, seed=9, gap=0.5, objective="makespan")
    assert [c[0] for c in calls] == [solver]
    _, problem, limits, hooks = calls[0]
    check_limits(limits, 5, threads=3, seed=9, gap=0.5, bound_focus=False)
    assert problem.objective == "makespan" and hooks == NO_HOOKS
    assert res.solver == solver


def test_small_path_one_thread_three_phases(calls, monkeypatch):
    """SERIAL_PHASES: branch and bound for BNB_FIRST s, CP-SAT, then the branch and bound again."""
    monkeypatch.setattr(solve_mod, "SERIAL_PHASES", True)
    inst = jobs(6)
    solve(inst, time_limit=4, threads=1, seed=3, gap=0.2)
    assert [c[0] for c in calls] == ["bnb", "cpsat", "bnb"]
    check_limits(calls[0][2], solve_mod.BNB_FIRST, threads=1, seed=3, gap=0.2, bound_focus=False)
    for _, problem, limits, _ in calls[1:]:
        check_limits(limits, 4, threads=1, seed=3, gap=0.2, bound_focus=False)
        assert problem.ub == value_of(inst, problem.warm, "total")
    assert calls[1][2].time_limit <= solve_mod.CPSAT_SHARE * 4


def test_small_path_one_thread_splits_the_time(calls):
    inst = jobs(6)
    solve(inst, time_limit=4, threads=1, seed=3, gap=0.2)
    assert [c[0] for c in calls] == ["bnb", "cpsat"]
    check_limits(
        calls[0][2], solve_mod.BNB_ALONE * 4, threads=1, seed=3, gap=0.2, bound_focus=False
    )
    check_limits(calls[1][2], 4, threads=1, seed=3, gap=0.2, bound_focus=False)
    assert calls[1][1].ub == value_of(inst, calls[1][1].warm, "total")


def test_small_path_two_threads_races_cpsat(calls, monkeypatch):
    """The branch and bound asks ``outside()``: CP-SAT starts only after ``cpsat_delay`` (a
    quarter of the time limit here)."""
    delay = solve_mod.cpsat_delay(6)
    assert delay == 1.5
    started = []

    class SlowBnb(Recorder):
        def solve(self, problem, limits, hooks=NO_HOOKS):
            hooks.stop.wait(delay - 0.5)
            assert hooks.outside() == problem.ub
            started.append(len(calls))  # CP-SAT not started yet
            hooks.stop.wait(0.6)
            assert hooks.outside() == problem.ub
            return super().solve(problem, limits, hooks)

    monkeypatch.setitem(BACKENDS, "bnb", SlowBnb("bnb", calls))
    solve(jobs(6), time_limit=6, threads=2, seed=1, gap=0.0)
    assert started == [0]
    got = {c[0]: c for c in calls}
    assert sorted(got) == ["bnb", "cpsat"]
    check_limits(got["bnb"][2], 6, threads=2, seed=1, gap=0.0, bound_focus=False)
    check_limits(got["cpsat"][2], 6, threads=1, seed=1, gap=0.0, bound_focus=False)
    assert got["bnb"][3].stop is got["cpsat"][3].stop
    assert got["cpsat"][3].monitor is not None and got["cpsat"][3].outside is None


def test_auto_beyond_race_n_gives_cpsat_its_bound_workers(monkeypatch):
    """``bound_focus`` reaches CP-SAT's parameters (two full bound workers, models/cpsat.md)."""
    from ortools.sat.python import cp_model

    from kvopt.exact.cpsat import BOUND_SUBSOLVERS

    seen = []

    class Solver(cp_model.CpSolver):
        def solve(self, *args, **kw):
            seen.append((self.parameters.num_full_subsolvers, list(self.parameters.subsolvers)))
            return super().solve(*args, **kw)

    monkeypatch.setattr(cp_model, "CpSolver", Solver)
    monkeypatch.setattr(solve_mod, "uses_compiled", lambda n: False)  # the Python routes
    res = solve(jobs(solve_mod.RACE_N + 1), time_limit=20, threads=2)
    assert seen == [(2, list(BOUND_SUBSOLVERS))]
    assert res.solver == "auto(cpsat)" and res.status is SolveStatus.OPTIMAL


def test_highs_worker_process_agrees_with_this_process():
    """``Highs(isolate=True)`` solves in ``python -m kvopt.exact.highs_worker``."""
    from kvopt.exact.backend import Problem
    from kvopt.exact.common import start_windows
    from kvopt.exact.heuristic import heuristic_starts
    from kvopt.exact.highs import Highs
    from kvopt.generators import generate

    inst = generate("random", 3, n=7, memory=40, max_response=6)
    warm = heuristic_starts(inst, "total", seconds=0.0)
    ub = value_of(inst, warm, "total")
    lo, hi = start_windows(inst, "total", ub)
    problem = Problem(inst, "total", lo, hi, warm, ub)
    a = Highs(isolate=True).solve(problem, Limits(time_limit=30))
    b = Highs(isolate=False).solve(problem, Limits(time_limit=30))
    assert a.native_status == b.native_status == "Optimal"
    assert value_of(inst, a.starts, "total") == value_of(inst, b.starts, "total")
    assert a.stats["columns"] == b.stats["columns"]


def test_auto_sends_typed_instances_to_highs(calls, monkeypatch):
    """Few distinct jobs beyond the small path: HiGHS (aggregated model) with every limit."""
    inst = Instance.from_arrays(20, [2] * 10 + [5] * 10, [2] * 10 + [1] * 10)
    assert inst.n > solve_mod.SMALL_N and solve_mod._groups(inst) == 2
    res = solve(inst, time_limit=5, threads=2, seed=4, gap=0.0)
    assert [c[0] for c in calls] == ["highs"]
    # two threads: HiGHS gets one, the block column generation runs beside it
    check_limits(calls[0][2], 5, threads=1, seed=4, gap=0.0, bound_focus=False)
    assert res.solver == "auto(highs)"
    assert "blocks" in res.stats
    calls.clear()
    # one thread, 5 s: too short for the block bound (TYPED_BLOCK_MIN), HiGHS alone
    res = solve(inst, time_limit=5, threads=1, seed=4, gap=0.0)
    assert [c[0] for c in calls] == ["highs"]
    check_limits(calls[0][2], 5, threads=1, seed=4, gap=0.0, bound_focus=False)
    assert calls[0][2].time_limit > 5 * solve_mod.TYPED_HIGHS_SHARE
    assert "blocks" not in res.stats
    calls.clear()
    # … and when it is long enough: HiGHS for TYPED_HIGHS_SHARE of the time, then the block
    # bound (HiGHS proved nothing here: the recorder returns no bound)
    monkeypatch.setattr(solve_mod, "TYPED_BLOCK_MIN", 1.0)
    res = solve(inst, time_limit=5, threads=1, seed=4, gap=0.0)
    assert [c[0] for c in calls] == ["highs"]
    check_limits(calls[0][2], 5 * solve_mod.TYPED_HIGHS_SHARE, threads=1, seed=4, gap=0.0,
                 bound_focus=False)  # fmt: skip
    assert "blocks" in res.stats
    calls.clear()
    mixed = Instance.from_arrays(60, list(range(1, 21)), [1 + i % 3 for i in range(20)])
    solve(mixed, time_limit=5, threads=2)
    assert [c[0] for c in calls] == ["cpsat"]


@pytest.mark.parametrize("threads", [1, 2])
def test_auto_on_typed_instances_agrees_with_highs_alone(threads):
    """The typed path (HiGHS with the block bound beside it, or after it with one thread)
    proves the optimum HiGHS alone proves, and its bound never passes it."""
    inst = Instance.from_arrays(30, [9] * 9 + [3] * 9, [3] * 9 + [6] * 9, [0] * 9 + [2] * 9)
    assert inst.n > solve_mod.SMALL_N and solve_mod._groups(inst) == 2
    ref = solve(inst, solver="highs", time_limit=30, threads=1)
    res = solve(inst, time_limit=30, threads=threads)
    assert ref.status is SolveStatus.OPTIMAL and res.status is SolveStatus.OPTIMAL
    assert res.objective == ref.objective and res.bound <= ref.objective


def test_block_results_are_json_safe():
    """No NaN or infinity from the block bound reaches a result (kvopt writes no NaN)."""
    from kvopt.fileio import dumps_json

    raw = solve_mod._blocks_result(-math.inf, {"lp": math.nan, "trace": [(0.1, math.nan)], "it": 1})
    assert raw.bound is None and raw.starts is None
    assert raw.stats == {"lp": None, "it": 1}
    dumps_json(raw.stats)
    assert solve_mod._blocks_result(12.5, {"lp": 13.0}).bound == 12.5


def test_overlapping_redirections_restore_stdout():
    """Racing solvers enter and leave ``stdout_to_stderr`` in any order (A in, B in, A out,
    B out): stdout must come back, not stay on stderr (``kvopt solve --json`` then printed
    its object to stderr)."""
    import os

    from kvopt.exact.common import stdout_to_stderr

    def where():
        st = os.fstat(1)
        return st.st_dev, st.st_ino

    before = where()
    a, b = stdout_to_stderr(), stdout_to_stderr(silence=True)
    a.__enter__()
    assert where() != before
    b.__enter__()
    a.__exit__(None, None, None)
    assert where() != before  # B still runs: still redirected
    b.__exit__(None, None, None)
    assert where() == before
