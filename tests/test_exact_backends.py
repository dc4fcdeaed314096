"""The backend protocol of ``kvopt.exact`` and the routes of ``solve()``.

The routes are a table (:data:`kvopt.exact.portfolio.ROUTES`); :func:`route_for` is checked
against a table of cases here, and every route's plan is followed into the backends:
fake backends, given as data in a :class:`~kvopt.exact.portfolio.Portfolio` (no patched
module), record the :class:`~kvopt.exact.backend.Problem`,
:class:`~kvopt.exact.backend.Limits` and :class:`~kvopt.exact.backend.Hooks` they receive.
Round 2's bug — ``auto`` beyond ``RACE_N`` jobs never gave CP-SAT its bound workers,
because a positional ``_backend`` dropped ``bound_focus`` — fails
:func:`test_auto_beyond_race_n_passes_every_limit`; a later test follows ``bound_focus``
into the real CP-SAT's parameters.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import fields, replace

import pytest

from kvopt.errors import InputError
from kvopt.exact import SolveStatus, solve
from kvopt.exact.backend import NO_HOOKS, Limits
from kvopt.exact.bnb import BranchAndBound, Split
from kvopt.exact.common import RawResult, start_windows, value_of
from kvopt.exact.portfolio import (
    ROUTES,
    Case,
    Phase,
    Portfolio,
    Race,
    groups,
    load_variant,
    route_for,
)
from kvopt.exact.portfolio.variants import VARIANTS, BlockBound
from kvopt.exact.registry import BACKENDS
from kvopt.exact.solve import SOLVERS
from kvopt.instance import Instance

#: the knobs these tests expect; a new Limits field must be added here (and routed)
KNOBS = {"time_limit", "threads", "seed", "gap", "bound_focus", "proof_focus"}


def row(name: str, solver: str = "auto"):
    """The route of that name (for ``solver``)."""
    return next(r for r in ROUTES if r.name == name and r.when.solver == solver)


class Recorder:
    """A backend that records its arguments and returns the warm start, without a bound (the
    block bound, which finds no schedules, returns nothing)."""

    def __init__(self, name: str, calls: list):
        self.name = name
        self.calls = calls

    def solve(self, problem, limits, hooks=NO_HOOKS):
        self.calls.append((self.name, problem, limits, hooks))
        starts = None if self.name == "blocks" else problem.warm
        status = SolveStatus.FEASIBLE if starts is not None else SolveStatus.UNKNOWN
        return RawResult(starts, None, "recorded", self.name, "fake", status)


@pytest.fixture
def calls():
    return []


def fake(calls: list, *, compiled: bool = False, routes=ROUTES, **extra) -> Portfolio:
    """Every backend a recorder; the routes of a pure-Python install unless ``compiled``."""
    names = {*BACKENDS, *VARIANTS}
    backends = {name: Recorder(name, calls) for name in names}
    backends.update(extra)
    return Portfolio(routes=routes, backends=backends, compiled=compiled)


def jobs(n: int) -> Instance:
    """``n`` distinct jobs (``auto`` routes instances with few distinct jobs to HiGHS)."""
    return Instance.from_arrays(
        4 * n, [1 + i // 3 for i in range(n)], [1 + i % 3 for i in range(n)]
    )


def check_limits(limits: Limits, time_limit: float, **want) -> None:
    """Every field of ``limits`` as expected: ``want`` names all but ``time_limit``
    (``proof_focus`` is False unless named: only ``events-small`` sets it)."""
    want.setdefault("proof_focus", False)
    assert {f.name for f in fields(Limits)} == KNOBS
    assert set(want) | {"time_limit"} == KNOBS
    assert 0 < limits.time_limit <= time_limit
    for key, value in want.items():
        assert getattr(limits, key) == value, key


def test_registry_names_the_solvers():
    assert SOLVERS == ("auto", "race", "highs", "cpsat", "bnb", "pyomo", "events")
    for name, backend in BACKENDS.items():
        assert backend.name == name and callable(backend.solve)
    # the ladder is the branch and bound's ("bnb"), the plain aggregated model HiGHS's, the
    # event model with the LP's prices the event model's
    own = {
        "ladder": "bnb",
        "highs-plain": "highs",
        "events-lagrange": "events",
        "events-cliques": "events",
    }
    for name, backend in VARIANTS.items():
        assert backend.name == own.get(name, name) and callable(backend.solve)


def case(n, objective="total", threads=2, time_limit=60.0, compiled=True, typed=False,
         rounds=100, solver="auto", cells=0, long=0, arrivals=False, capped=False) -> Case:  # fmt: skip
    return Case(
        solver, n, objective, threads, time_limit, compiled, typed, rounds, cells, long, arrivals,
        capped,
    )  # fmt: skip


#: (case, route name): the routing of ``auto`` and the other ``solver=`` values, row by row
TABLE = [
    (case(8), "small-race"),
    (case(16, rounds=400), "small-race"),
    (case(16, compiled=False, typed=True), "small-race"),
    (case(12, threads=1), "small-one-thread"),
    (case(12, objective="makespan"), "small-makespan"),
    (case(16, objective="makespan", threads=1), "small-makespan"),
    (case(17), "compiled-mid"),
    (case(18, time_limit=1000), "compiled-mid"),
    (case(19), "compiled-split"),
    (case(20), "compiled-split"),
    (case(17, threads=1), "compiled-one-thread"),
    (case(18, threads=1, time_limit=1e4), "compiled-one-thread"),
    (case(17, compiled=False, time_limit=160), "long-limit-17"),
    (case(17, compiled=False, time_limit=159), "cpsat"),
    (case(17, compiled=False, threads=1, time_limit=320), "long-limit-17-one-thread"),
    (case(17, compiled=False, threads=1, time_limit=319), "cpsat"),
    (case(18, compiled=False, time_limit=400), "long-limit-18"),
    (case(18, compiled=False, threads=1, time_limit=800), "long-limit-18-one-thread"),
    (case(19, compiled=False, time_limit=1e6), "cpsat"),
    (case(17, rounds=401), "cpsat"),
    (case(17, typed=True, time_limit=1e6), "typed-race"),
    (case(40, typed=True, threads=3), "typed-race-wide"),
    (case(40, typed=True, threads=64), "typed-race-wide"),
    (case(12, typed=True, rounds=401), "events-small"),
    (case(40, typed=True, threads=1, time_limit=30), "typed-serial-blocks"),
    (case(40, typed=True, threads=1, time_limit=29), "typed-serial"),
    (case(40, objective="makespan", typed=True), "cpsat"),
    (case(21), "ladder"),
    (case(30, rounds=1000), "ladder"),
    (case(30, compiled=False), "cpsat"),
    (case(25, threads=1), "cpsat"),
    (case(30, objective="makespan"), "cpsat"),
    (case(12, rounds=401), "events-small"),
    (case(3, rounds=10**6, objective="makespan", threads=1), "events-small"),
    (case(13, rounds=401), "events"),
    (case(13, rounds=401, threads=1), "events"),
    (case(13, rounds=401, objective="makespan"), "events"),
    (case(16, rounds=10**7, threads=1, compiled=False), "events"),
    (case(20, rounds=6000), "events-long"),
    (case(20, rounds=2413), "events-mid"),
    (case(18, rounds=1999), "cpsat"),
    (case(60, rounds=10**6, objective="makespan", threads=1), "events-long"),
    (case(20, rounds=5999), "events-mid"),
    (case(20, rounds=1999), "cpsat"),
    (case(20, rounds=10**6, typed=True), "typed-race"),
    (case(61, rounds=10**6), "cpsat"),
    (case(31), "ils-cpsat"),
    (case(60, compiled=False), "ils-cpsat"),
    (case(60, threads=1), "cpsat"),
    (case(61), "cpsat"),
    (case(40, objective="makespan"), "cpsat"),
    (case(5, solver="race"), "race"),
    (case(50, solver="race", threads=1), "race-one-thread"),
    (case(20, solver="bnb"), "bnb"),
    (case(8, solver="highs"), "highs"),
    (case(8, solver="cpsat"), "cpsat"),
    (case(8, solver="pyomo"), "pyomo"),
    (case(8, solver="events"), "events"),
    # a time-indexed model too large to build (MODEL_MAX_CELLS nonzeros): not built
    (case(8, cells=3 * 10**7), "events-large"),
    (case(60, typed=True, cells=10**9, objective="makespan"), "events-large"),
    (case(61, typed=True, cells=3 * 10**7), "no-model"),
    (case(61, typed=True, cells=3 * 10**7 - 1), "typed-race"),
    (case(8, solver="highs", cells=10**9), "highs"),  # a named solver is the user's choice
    # responses above M/2 for at least a quarter of the jobs (Jaillet et al.'s setting)
    (case(15, long=4), "cliques"),
    (case(15, long=2), "cliques"),  # a tenth of the jobs since issue 52 round 7 (§14)
    (case(15, long=1), "small-race"),
    (case(14, long=14), "small-race"),
    (case(15, long=4, time_limit=29), "small-race"),
    (case(15, long=4, arrivals=True), "cliques-arrivals-bnb"),  # model 2: since round 8
    (case(15, long=3, arrivals=True), "small-race"),
    (case(19, long=19, rounds=1000), "cliques"),
    # n = 20-30: the local search first since issue 52 round 4 (models/cliques.md §11)
    (case(20, long=20, rounds=1000), "cliques-ils"),
    (case(20, long=20, rounds=1001), "cpsat"),
    (case(21, long=21), "cliques-ils"),  # n = 21-30 since issue 52 round 2 (cliques.md §10)
    (case(30, long=3), "cliques-ils"),
    (case(30, long=2), "ladder"),
    (case(12, long=12), "small-race"),
    # n = 31-60, all at round 0, since issue 52 round 5 (models/cliques.md §12)
    (case(31, long=31), "cliques-events"),
    (case(60, long=15, rounds=1500), "cliques-events"),
    (case(61, long=61, rounds=1000), "cpsat"),
    (case(40, long=40, rounds=1501), "ils-cpsat"),
    (case(40, long=9), "ils-cpsat"),
    (case(40, long=40, time_limit=20.0), "ils-cpsat"),
    (case(40, long=40, threads=1), "cpsat"),
    # with arrivals, n = 21-60 since issue 52 round 4 (models/cliques.md §11); the branch
    # and bound's plan at 15-40 since round 8 (§15)
    (case(31, long=31, arrivals=True, rounds=700), "cliques-arrivals-bnb"),
    (case(21, long=6, arrivals=True, rounds=300), "cliques-arrivals-bnb"),
    (case(26, long=26, arrivals=True, rounds=300), "cliques-arrivals-bnb"),
    (case(40, long=10, arrivals=True, rounds=1500), "cliques-arrivals-bnb"),
    (case(41, long=41, arrivals=True, rounds=700), "cliques-arrivals"),
    (case(60, long=15, arrivals=True, rounds=1500), "cliques-arrivals"),
    (case(20, long=20, arrivals=True, rounds=300), "cliques-arrivals-bnb"),
    (case(14, long=14, arrivals=True, rounds=300), "small-race"),
    (case(20, long=4, arrivals=True, rounds=300), "compiled-split"),
    (case(61, long=61, arrivals=True, rounds=1000), "cpsat"),
    (case(40, long=40, arrivals=True, rounds=1501), "ils-cpsat"),
    (case(40, long=9, arrivals=True), "ils-cpsat"),
    (case(40, long=40, arrivals=True, time_limit=20.0), "ils-cpsat"),
    (case(25, long=25, arrivals=True, rounds=300), "cliques-arrivals-bnb"),
    (case(25, long=25, arrivals=True, threads=1), "cpsat"),
    (case(20, long=20, threads=1), "cpsat"),
    (case(20, long=20, objective="makespan"), "cpsat"),
    (case(20, long=20, typed=True), "typed-race"),
    (case(20, long=20, solver="highs"), "highs"),
    # a batch cap (SPEC §10.1): the capped rows, whatever else holds
    (case(8, capped=True), "capped-small"),
    (case(15, long=4, capped=True), "capped-small"),
    (case(20, capped=True, threads=1, rounds=400), "capped-small"),
    (case(21, capped=True), "capped-ladder"),
    (case(30, capped=True, rounds=5999), "capped-ladder"),
    (case(31, capped=True, threads=1), "capped"),
    (case(21, capped=True, compiled=False), "capped"),
    (case(12, objective="makespan", capped=True), "capped"),
    (case(40, capped=True), "capped-ils-cpsat"),
    (case(40, capped=True, threads=1), "capped"),
    (case(8, typed=True, capped=True), "capped-small"),
    (case(30, typed=True, capped=True), "capped-typed"),
    (case(8, typed=True, objective="makespan", capped=True), "capped"),
    (case(12, rounds=401, capped=True), "capped-events-long"),
    (case(60, rounds=5000, capped=True), "capped-events-long"),
    (case(61, rounds=5000, capped=True), "capped-ils-cpsat"),
    (case(8, cells=3 * 10**7, capped=True), "capped-events"),
    (case(61, typed=True, cells=3 * 10**7, capped=True), "capped-no-model"),
    (case(8, solver="bnb", capped=True), "bnb"),  # refused by solve(): tests/test_exact_cap.py
    (case(8, solver="events", capped=True), "events"),
]


@pytest.mark.parametrize("c, name", TABLE)
def test_route_for_takes_the_first_row_that_holds(c, name):
    r = route_for(c)
    assert r.name == name and r.when.solver == c.solver
    assert r.when.holds(c)
    assert not any(q.when.holds(c) for q in ROUTES[: ROUTES.index(r)])


def test_every_row_is_reached_and_has_its_provenance():
    """Each row of ``auto`` is the answer for some case of TABLE, and says where its numbers
    come from; the race rows join at once or after a delay, and share the threads."""
    reached = {(route_for(c).name, c.solver) for c, _ in TABLE}
    for r in ROUTES:
        assert (r.name, r.when.solver) in reached or r.name == "bnb", r.name
        if r.when.solver == "auto":
            assert r.source is not None and r.source.section.startswith("models/"), r.name
        for p in r.phases:
            assert p.backend in {*BACKENDS, *VARIANTS}, (r.name, p.backend)
    assert row("small-race").plan.join_at(60.0) == 15.0
    assert row("small-race").plan.join_at(2.0) == 1.0


def test_the_quick_routes_of_solver_bnb_follow_auto_s_small_path():
    """``solver="bnb"`` gets the small path's short heuristic where ``auto`` would take a
    quick route; beyond, the longer one."""
    for c in (case(16, solver="bnb"), case(20, solver="bnb"), case(18, threads=1, solver="bnb")):
        assert route_for(c).quick
    for c in (case(21, solver="bnb"), case(19, threads=1, solver="bnb"),
              case(17, compiled=False, solver="bnb"), case(17, objective="makespan", solver="bnb")):  # fmt: skip
        assert not route_for(c).quick


def test_phase_and_variant_files_are_checked(tmp_path):
    with pytest.raises(InputError, match="threads"):
        Phase("bnb", threads="two")
    with pytest.raises(InputError, match="share"):
        Phase("bnb", share=0)
    path = tmp_path / "v.json"
    path.write_text(json.dumps([{"route": "compiled-split", "plan": [
        {"backend": "ils", "share": 0.05}, {"backend": "bnb", "share": 0.65, "windows": "tighten"},
        {"backend": "ladder", "share": None, "windows": "tighten"}]}]))  # fmt: skip
    routes = load_variant(path)
    changed = next(r for r in routes if r.name == "compiled-split")
    assert [p.backend for p in changed.phases] == ["ils", "bnb", "ladder"]
    assert math.isinf(changed.phases[-1].share)
    assert [r.name for r in routes] == [r.name for r in ROUTES]
    path.write_text(json.dumps([{"route": "small-race", "plan": {
        "lead": {"backend": "bnb", "threads": "one"}, "others": [{"backend": "cpsat", "threads": "rest"}],
        "join_after": 1.0, "join_share": 0.25}}]))  # fmt: skip
    race = next(r for r in load_variant(path) if r.name == "small-race").plan
    assert isinstance(race, Race) and race.lead.threads == "one"
    for bad in ([{"route": "nope", "plan": []}], {"route": "cpsat"},
                [{"route": "cpsat", "plan": [{"backend": "cpsat", "speed": 2}]}]):  # fmt: skip
        path.write_text(json.dumps(bad))
        with pytest.raises(InputError):
            load_variant(path)


def test_auto_beyond_race_n_passes_every_limit(calls):
    inst = jobs(17)
    res = solve(inst, time_limit=5, threads=2, seed=7, gap=0.25, portfolio=fake(calls))
    assert [c[0] for c in calls] == ["cpsat"]
    _, problem, limits, hooks = calls[0]
    check_limits(limits, 5, threads=2, seed=7, gap=0.25, bound_focus=True)
    assert problem.instance is inst and problem.objective == "total"
    assert problem.ub == value_of(inst, problem.warm, "total")
    assert hooks == NO_HOOKS
    assert res.solver == "auto(cpsat)" and res.objective == problem.ub
    assert res.route.name == "cpsat" and [p.backend for p in res.route.phases] == ["cpsat"]


def _shares(route) -> list[float]:
    return [1.0 if math.isinf(p.share) else p.share for p in route.phases]


@pytest.mark.parametrize("threads", [2, 1])
def test_long_limit_route_runs_its_phases_in_turn(calls, threads):
    """n = 17 without Numba and a long limit: CP-SAT (bound workers with two threads), the
    branch and bound, CP-SAT, each for its share, warm-started with the best schedule over
    windows no wider than the first ones."""
    name = "long-limit-17" + ("" if threads == 2 else "-one-thread")
    route = row(name)
    tl = route.when.time_limit_min
    inst = jobs(17)
    res = solve(inst, time_limit=tl, threads=threads, seed=5, portfolio=fake(calls))
    assert res.route.name == name
    assert [c[0] for c in calls] == [p.backend for p in route.phases] == ["cpsat", "bnb", "cpsat"]
    for (name_, problem, limits, _), p, part in zip(calls, route.phases, _shares(route)):
        check_limits(limits, part * tl, threads=threads, seed=5, gap=0.0,
                     bound_focus=p.bound_focus)  # fmt: skip
        assert p.bound_focus == (threads == 2 and name_ == "cpsat")
        assert problem.ub == value_of(inst, problem.warm, "total")
        assert (problem.lo >= calls[0][1].lo).all() and (problem.hi <= calls[0][1].hi).all()
    first = start_windows(inst, "total", calls[0][1].ub)
    assert (calls[0][1].lo >= first[0]).all() and (calls[0][1].hi <= first[1]).all()
    assert [p.backend for p in res.route.phases] == ["cpsat", "bnb", "cpsat"]
    assert all(p.seconds is not None and p.status is SolveStatus.FEASIBLE for p in res.route.phases)


@pytest.mark.parametrize("n, name, after", [(17, "compiled-mid", "cpsat"),
                                            (20, "compiled-split", "ladder")])  # fmt: skip
def test_compiled_search_extends_the_small_path(calls, n, name, after):
    """With the compiled branch and bound and 2 threads: it alone for its share, then
    CP-SAT with its bound workers (n = 17, 18) or the ladder (19, 20), each from the best
    schedule over windows no wider than the first."""
    inst = jobs(n)
    res = solve(inst, time_limit=60, threads=2, seed=3, portfolio=fake(calls, compiled=True))
    assert res.route.name == name and res.route.heuristic_seconds <= 0.02
    assert [c[0] for c in calls] == ["bnb", after]
    for (c, problem, limits, _), _p, part in zip(calls, row(name).phases, _shares(row(name))):
        check_limits(limits, part * 60, threads=2, seed=3, gap=0.0, bound_focus=c == "cpsat")
        assert problem.ub == value_of(inst, problem.warm, "total")
        assert (problem.lo >= calls[0][1].lo).all() and (problem.hi <= calls[0][1].hi).all()
    assert calls[0][2].time_limit > 0.99 * row(name).phases[0].share * 60 - 1


def test_ladder_beyond_the_small_path(calls):
    """n = 21-30, compiled, 2 threads: the local search for its share, then the ladder from
    its best schedule over windows no wider."""
    route = row("ladder")
    for n in (21, 30):
        calls.clear()
        inst = jobs(n)
        solve(inst, time_limit=60, threads=2, seed=4, portfolio=fake(calls, compiled=True))
        assert [c[0] for c in calls] == ["ils", "ladder"]
        for (_, problem, limits, _), part in zip(calls, _shares(route)):
            check_limits(limits, part * 60, threads=2, seed=4, gap=0.0, bound_focus=False)
            assert problem.ub == value_of(inst, problem.warm, "total")
            assert (problem.lo >= calls[0][1].lo).all() and (problem.hi <= calls[0][1].hi).all()


def test_local_search_before_cpsat_beyond_the_ladder(calls):
    for n in (31, 60):
        calls.clear()
        inst = jobs(n)
        solve(inst, time_limit=60, threads=2, seed=1, portfolio=fake(calls))
        assert [c[0] for c in calls] == ["ils", "cpsat"]
        (_, p0, l0, _), (_, p1, l1, _) = calls
        check_limits(l0, row("ils-cpsat").phases[0].share * 60, threads=2, seed=1, gap=0.0,
                     bound_focus=False)  # fmt: skip
        check_limits(l1, 60, threads=2, seed=1, gap=0.0, bound_focus=True)
        assert p1.ub == value_of(inst, p1.warm, "total") <= p0.ub


def _down_to_7(name: str, **when) -> Portfolio:
    """The routes with ``name``'s plan moved down to n = 7 (a first row that serves it)."""
    r = row(name)
    moved = replace(r, when=replace(r.when, n_min=7, n_max=7, **when))
    return moved


@pytest.mark.parametrize("stopped", [False, True])
def test_compiled_mid_plan_proves_what_highs_proves(stopped, monkeypatch):
    """The compiled-mid plan (the branch and bound, then CP-SAT) with the real solvers, moved
    down to n = 7: the optimum HiGHS proves, a bound not above it.  ``stopped``: the branch
    and bound stops at its first node (a node limit of 0, checked at every node), so CP-SAT
    runs and proves, whatever the machine's speed (issue 56: a tiny time share was proved
    in on a fast machine, and CP-SAT never ran)."""
    from kvopt.exact.bnb import compiled as bnbfast
    from kvopt.exact.bnb import search as bnbsearch
    from kvopt.generators import generate

    r = _down_to_7("compiled-mid", compiled=None)
    backends = {}
    if stopped:
        monkeypatch.setattr(bnbsearch, "_CHECK_EVERY", 1)
        backends["bnb"] = BranchAndBound(compiled=False, node_limit=0)
    elif bnbfast.available():  # compiled and split between two threads
        backends["bnb"] = BranchAndBound(compiled_min_n=1, splitting=Split(compiled_min_n=1))
    portfolio = Portfolio(routes=(r, *ROUTES), backends=backends)
    phases = set()
    for seed in range(3):
        inst = generate("random", 50 + seed, n=7, memory=30, max_response=7)
        ref = solve(inst, solver="highs", time_limit=30, threads=1)
        res = solve(inst, time_limit=20, threads=2, seed=seed, portfolio=portfolio)
        assert res.route.name == "compiled-mid"
        assert ref.status is SolveStatus.OPTIMAL and res.status is SolveStatus.OPTIMAL
        assert res.objective == ref.objective and res.bound <= ref.objective + 1e-6
        if stopped:
            assert res.route.phases[0].native_status == "stopped"
        phases.add(sum(p.status is not None for p in res.route.phases))
    if stopped:  # CP-SAT ran after the stopped branch and bound (seeds 50, 51; on seed 52 the
        # root bound meets the heuristic's schedule, and the plan ends without it)
        assert 2 in phases


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("first, bnb", [(0.2, 0.5), (0.001, 0.5), (0.001, 0.001)])
def test_long_plan_proves_what_highs_proves(threads, first, bnb):
    """The long-limit plan with the real solvers (moved down to n = 7): its phases end with
    the optimum HiGHS proves, and a bound that does not pass it; with tiny first phases the
    branch and bound, then the second CP-SAT phase, run too."""
    from kvopt.generators import generate

    name = "long-limit-17" + ("" if threads == 2 else "-one-thread")
    r = _down_to_7(name, compiled=None, time_limit_min=1.0)
    a, b, c = r.plan
    r = replace(r, plan=(replace(a, share=first), replace(b, share=bnb), c))
    portfolio = Portfolio(routes=(r, *ROUTES))
    for seed in range(3):
        inst = generate("random", 40 + seed, n=7, memory=30, max_response=7)
        ref = solve(inst, solver="highs", time_limit=30, threads=1)
        res = solve(inst, time_limit=20, threads=threads, seed=seed, portfolio=portfolio)
        assert res.route.name == name
        assert ref.status is SolveStatus.OPTIMAL and res.status is SolveStatus.OPTIMAL
        assert res.objective == ref.objective and res.bound <= ref.objective


def test_long_responses_take_the_event_model(calls):
    """13-16 jobs off the small path (``models/orders.md`` §6, §10): the event model with the
    LP's prices (``events-lagrange``) and its bound workers, every other limit passed on, no
    LP windows (the windows of the heuristic's value only)."""
    n = 13
    inst = Instance.from_arrays(
        8 * n, [1 + i // 3 for i in range(n)], [40 + i % 3 for i in range(n)]
    )
    res = solve(inst, time_limit=5, threads=3, seed=4, gap=0.1, portfolio=fake(calls))
    assert res.route.name == "events" and [c[0] for c in calls] == ["events-lagrange"]
    _, problem, limits, _ = calls[0]
    check_limits(limits, 5, threads=3, seed=4, gap=0.1, bound_focus=True)
    lo, hi = start_windows(inst, "total", problem.ub)
    assert (problem.lo == lo).all() and (problem.hi == hi).all()
    assert not res.route.lp_windows


def test_up_to_twelve_long_jobs_take_two_tree_searches_then_the_bound_workers(calls):
    """``events-small`` (``models/orders.md`` §7): the event model with CP-SAT's two tree
    searches for half the limit, then with its bound workers for the rest (each phase with
    every other limit passed on)."""
    n = 12
    inst = Instance.from_arrays(
        8 * n, [1 + i // 3 for i in range(n)], [40 + i % 3 for i in range(n)]
    )
    res = solve(inst, time_limit=6, threads=2, seed=4, gap=0.1, portfolio=fake(calls))
    assert res.route.name == "events-small" and [c[0] for c in calls] == ["events", "events"]
    check_limits(calls[0][2], 3, threads=2, seed=4, gap=0.1, bound_focus=False, proof_focus=True)
    check_limits(calls[1][2], 6, threads=2, seed=4, gap=0.1, bound_focus=True)
    with pytest.raises(InputError, match="at most one"):
        Phase("events", bound_focus=True, proof_focus=True)


def test_race_splits_the_threads(calls):
    # solver="race" (round 1's default): HiGHS on one thread races CP-SAT on the others
    n = 13
    inst = Instance.from_arrays(
        8 * n, [1 + i // 3 for i in range(n)], [40 + i % 3 for i in range(n)]
    )
    assert inst.responses.sum() > row("small-race").when.rounds_max
    res = solve(
        inst, solver="race", time_limit=5, threads=3, seed=4, gap=0.1, portfolio=fake(calls)
    )
    assert res.route.name == "race" and res.route.kind == "race"
    got = {c[0]: c for c in calls}
    assert sorted(got) == ["cpsat", "highs"]
    check_limits(got["highs"][2], 5, threads=1, seed=4, gap=0.1, bound_focus=False)
    check_limits(got["cpsat"][2], 5, threads=2, seed=4, gap=0.1, bound_focus=False)
    hooks = [got[k][3] for k in ("highs", "cpsat")]
    assert hooks[0] is hooks[1]
    assert isinstance(hooks[0].stop, threading.Event) and hooks[0].monitor is not None


@pytest.mark.parametrize("solver", ["highs", "cpsat", "bnb", "pyomo", "events"])
def test_named_backend_gets_the_caller_limits(calls, solver):
    inst = jobs(17)
    res = solve(inst, solver=solver, time_limit=5, threads=3, seed=9, gap=0.5,
                objective="makespan", portfolio=fake(calls))  # fmt: skip
    assert [c[0] for c in calls] == [solver]
    _, problem, limits, hooks = calls[0]
    check_limits(limits, 5, threads=3, seed=9, gap=0.5, bound_focus=False)
    assert problem.objective == "makespan" and hooks == NO_HOOKS
    assert res.solver == solver and res.route.name == solver


def test_small_path_one_thread_splits_the_time(calls):
    inst = jobs(6)
    res = solve(inst, time_limit=4, threads=1, seed=3, gap=0.2, portfolio=fake(calls))
    assert res.route.name == "small-one-thread"
    assert [c[0] for c in calls] == ["bnb", "cpsat"]
    share = row("small-one-thread").phases[0].share
    check_limits(calls[0][2], share * 4, threads=1, seed=3, gap=0.2, bound_focus=False)
    check_limits(calls[1][2], 4, threads=1, seed=3, gap=0.2, bound_focus=False)
    assert calls[1][1].ub == value_of(inst, calls[1][1].warm, "total")


def test_small_path_two_threads_races_cpsat(calls):
    """The branch and bound asks ``outside()``: CP-SAT starts only after the race's join
    time (a quarter of the time limit here)."""
    delay = row("small-race").plan.join_at(6)
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

    res = solve(jobs(6), time_limit=6, threads=2, seed=1,
                portfolio=fake(calls, bnb=SlowBnb("bnb", calls)))  # fmt: skip
    assert started == [0]
    got = {c[0]: c for c in calls}
    assert sorted(got) == ["bnb", "cpsat"]
    check_limits(got["bnb"][2], 6, threads=2, seed=1, gap=0.0, bound_focus=False)
    check_limits(got["cpsat"][2], 6, threads=1, seed=1, gap=0.0, bound_focus=False)
    assert got["bnb"][3].stop is got["cpsat"][3].stop
    assert got["cpsat"][3].monitor is not None
    lead, joined = res.route.phases
    assert lead.started == 0.0 and joined.started >= delay - 0.1


@pytest.fixture
def cpsat_workers(monkeypatch):
    """The (full subsolvers, subsolver names) of every CP-SAT solve, as it starts."""
    from ortools.sat.python import cp_model

    seen = []

    class Solver(cp_model.CpSolver):
        def solve(self, *args, **kw):
            seen.append((self.parameters.num_full_subsolvers, list(self.parameters.subsolvers)))
            return super().solve(*args, **kw)

    monkeypatch.setattr(cp_model, "CpSolver", Solver)  # OR-Tools' class, not a kvopt module
    return seen


def test_auto_beyond_race_n_gives_cpsat_its_bound_workers(cpsat_workers):
    """``bound_focus`` reaches CP-SAT's parameters (two full bound workers, models/cpsat.md)."""
    from kvopt.exact.backends.cpsat import BOUND_SUBSOLVERS

    res = solve(jobs(17), time_limit=20, threads=2, portfolio=Portfolio(compiled=False))
    assert cpsat_workers == [(2, list(BOUND_SUBSOLVERS))]
    assert res.solver == "auto(cpsat)" and res.status is SolveStatus.OPTIMAL


def test_proof_focus_gives_cpsat_two_tree_searches(cpsat_workers):
    """``proof_focus`` reaches CP-SAT's parameters (two full ``default_lp`` searches,
    ``models/orders.md`` §7), and a solve that proves in it runs no second phase.  (The
    proof takes 3-11 s here, idle to loaded; the limit only has to be out of reach: issue 56,
    where 30 s did not suffice beside three other jobs on 2 cores.)"""
    from kvopt.exact.backends.cpsat import PROOF_SUBSOLVERS

    inst = Instance.from_arrays(400, [5, 9, 14, 20, 3, 8], [190, 180, 170, 160, 150, 140])
    res = solve(inst, time_limit=600, threads=2)
    assert res.route.name == "events-small" and res.status is SolveStatus.OPTIMAL
    assert cpsat_workers == [(2, list(PROOF_SUBSOLVERS))]


def test_highs_worker_process_agrees_with_this_process():
    """``Highs(isolate=True)`` solves in ``python -m kvopt.exact.backends.highs_worker``."""
    from kvopt.exact.backend import Problem
    from kvopt.exact.backends.highs import Highs
    from kvopt.exact.common import start_windows
    from kvopt.exact.heuristic import heuristic_starts
    from kvopt.generators import generate

    inst = generate("random", 3, n=7, memory=40, max_response=6)
    warm = heuristic_starts(inst, "total", seconds=0.0)
    ub = value_of(inst, warm, "total")
    lo, hi = start_windows(inst, "total", ub)
    problem = Problem(inst, "total", lo, hi, warm, ub)
    a = Highs(isolate=True).solve(problem, Limits(time_limit=30))
    b = Highs(isolate=False).solve(problem, Limits(time_limit=30))
    assert a.status is b.status is SolveStatus.OPTIMAL
    assert value_of(inst, a.starts, "total") == value_of(inst, b.starts, "total")
    assert a.stats["columns"] == b.stats["columns"]


def test_auto_sends_typed_instances_to_highs(calls):
    """Few distinct jobs beyond the small path: HiGHS (aggregated model) with every limit."""
    inst = Instance.from_arrays(20, [2] * 10 + [5] * 10, [2] * 10 + [1] * 10)
    assert inst.n > 16 and groups(inst) == 2
    res = solve(inst, time_limit=5, threads=2, seed=4, portfolio=fake(calls))
    assert res.route.name == "typed-race"
    # two threads: HiGHS on the plain aggregated model races HiGHS with the rounded rows,
    # one thread each (models/time-indexed.md §10)
    assert sorted(c[0] for c in calls) == ["highs", "highs-plain"]
    got = {c[0]: c for c in calls}
    for name in ("highs", "highs-plain"):
        check_limits(got[name][2], 5, threads=1, seed=4, gap=0.0, bound_focus=False)
    assert got["highs"][1] is got["highs-plain"][1]  # the same windows and warm start
    assert res.solver == "auto(highs-plain)" and "blocks" not in res.stats
    calls.clear()
    # three threads: the block bound joins them
    res = solve(inst, time_limit=5, threads=3, seed=4, portfolio=fake(calls))
    assert res.route.name == "typed-race-wide"
    assert sorted(c[0] for c in calls) == ["blocks", "highs", "highs-plain"]
    got = {c[0]: c for c in calls}
    check_limits(got["highs"][2], 5, threads=2, seed=4, gap=0.0, bound_focus=False)
    check_limits(got["highs-plain"][2], 5, threads=1, seed=4, gap=0.0, bound_focus=False)
    calls.clear()
    # one thread, 5 s: too short for the block bound, HiGHS alone
    res = solve(inst, time_limit=5, threads=1, seed=4, portfolio=fake(calls))
    assert res.route.name == "typed-serial" and [c[0] for c in calls] == ["highs"]
    check_limits(calls[0][2], 5, threads=1, seed=4, gap=0.0, bound_focus=False)
    calls.clear()
    # … and from 30 s: HiGHS for half the time, then the block bound (HiGHS proved nothing
    # here: the recorder returns no bound) over windows no wider
    res = solve(inst, time_limit=30, threads=1, seed=4, portfolio=fake(calls))
    assert res.route.name == "typed-serial-blocks"
    assert [c[0] for c in calls] == ["highs", "blocks"]
    check_limits(calls[0][2], 15, threads=1, seed=4, gap=0.0, bound_focus=False)
    assert (calls[1][1].hi <= calls[0][1].hi).all()
    calls.clear()
    mixed = Instance.from_arrays(60, list(range(1, 21)), [1 + i % 3 for i in range(20)])
    solve(mixed, time_limit=5, threads=2, portfolio=fake(calls))
    assert [c[0] for c in calls] == ["cpsat"]


@pytest.mark.parametrize("threads", [1, 2])
def test_auto_on_typed_instances_agrees_with_highs_alone(threads):
    """The typed path (HiGHS with the block bound beside it, or after it with one thread)
    proves the optimum HiGHS alone proves, and its bound never passes it."""
    inst = Instance.from_arrays(30, [9] * 9 + [3] * 9, [3] * 9 + [6] * 9, [0] * 9 + [2] * 9)
    assert inst.n > 16 and groups(inst) == 2
    # limits out of reach (each solve stops at its proof, 1-4 s here): issue 56
    ref = solve(inst, solver="highs", time_limit=300, threads=1)
    res = solve(inst, time_limit=300, threads=threads)
    assert ref.status is SolveStatus.OPTIMAL and res.status is SolveStatus.OPTIMAL
    assert res.objective == ref.objective and res.bound <= ref.objective


def test_typed_rows_race_the_plain_aggregated_model():
    """With two threads or more the typed rows race HiGHS on the plain aggregated model (no
    rounded rows: the stronger model on fcfs.json) against HiGHS with them (the one that
    proves mc-benchmark.json), models/time-indexed.md §10."""
    plain = VARIANTS["highs-plain"]
    assert plain.aggregate and plain.cuts == () and BACKENDS["highs"].cuts == (1,)
    for name in ("typed-race", "typed-race-wide"):
        backends = sorted(p.backend for p in row(name).phases)
        assert {"highs", "highs-plain"} <= set(backends), name
        assert row(name).source is not None and "§10" in row(name).source.section
    assert "blocks" in [p.backend for p in row("typed-race-wide").phases]


def test_typed_race_fixes_without_the_lp_windows(calls):
    """Before the typed race only the reduced-cost fixing cuts the incumbent's windows (the
    LP windows of the other jobs are skipped there, models/time-indexed.md §10); the mixed
    rows keep both."""
    from kvopt.exact.bounds.relax import lagrange_fix

    inst = Instance.from_arrays(20, [2] * 10 + [5] * 10, [2] * 10 + [1] * 10)
    res = solve(inst, time_limit=5, threads=2, seed=4, portfolio=fake(calls))
    assert res.route.name == "typed-race"
    assert res.route.lp_windows and not res.route.lp_values
    assert "reduced-cost fixing (no LP values" in "\n".join(res.route.lines())
    problem = calls[0][1]
    lo, hi = start_windows(inst, "total", problem.ub)
    flo, fhi, _ = lagrange_fix(inst, lo, hi, problem.ub, time_limit=5)
    assert (problem.lo == flo).all() and (problem.hi == fhi).all()
    assert row("typed-serial").lp_values and row("ils-cpsat").lp_values


#: a small typed instance beyond the small path (18 jobs, 3 types, two arrivals)
SMALL_TYPED = (24, [7] * 5 + [2] * 9 + [11] * 4, [4] * 5 + [2] * 9 + [3] * 4, [0] * 14 + [3] * 4)


def test_typed_route_optimum_agrees_with_the_other_solvers():
    """On a small typed instance beyond the small path, the typed route (HiGHS on the plain
    aggregated model racing HiGHS with the rounded rows) proves the optimum that CP-SAT and
    the branch and bound prove, and its bound is that optimum."""
    inst = Instance.from_arrays(*SMALL_TYPED)
    assert inst.n == 18 and groups(inst) == 3
    res = solve(inst, time_limit=300, threads=2)  # out of reach: it stops at the proof
    assert res.route.name == "typed-race" and res.status is SolveStatus.OPTIMAL
    assert res.bound == res.objective
    for solver in ("cpsat", "bnb"):
        ref = solve(inst, solver=solver, time_limit=300, threads=1)
        assert ref.status is SolveStatus.OPTIMAL and ref.objective == res.objective, solver


@pytest.mark.slow
def test_typed_route_optimum_agrees_with_the_per_job_model():
    """… and that the per-job time-indexed model (one binary per job and start, the copies'
    symmetry left in; about 9 s against 2 s aggregated) proves the same optimum."""
    from kvopt.exact.backend import Problem
    from kvopt.exact.backends.highs import Highs

    inst = Instance.from_arrays(*SMALL_TYPED)
    res = solve(inst, time_limit=300, threads=2)  # limits out of reach (issue 56)
    assert res.status is SolveStatus.OPTIMAL
    lo, hi = start_windows(inst, "total", res.objective)
    per_job = Highs(aggregate=False, cuts=()).solve(
        Problem(inst, "total", lo, hi), Limits(time_limit=600)
    )
    assert per_job.status is SolveStatus.OPTIMAL
    assert value_of(inst, per_job.starts, "total") == res.objective


def test_block_results_are_json_safe():
    """No NaN or infinity from the block bound reaches a result (kvopt writes no NaN)."""
    from kvopt.fileio import dumps_json

    raw = BlockBound._result(-math.inf, {"lp": math.nan, "trace": [(0.1, math.nan)], "it": 1})
    assert raw.bound is None and raw.starts is None and raw.status is SolveStatus.UNKNOWN
    assert raw.stats == {"lp": None, "it": 1}
    dumps_json(raw.stats)
    assert BlockBound._result(12.5, {"lp": 13.0}).bound == 12.5


def test_raw_results_are_frozen_and_their_status_fits_their_schedule():
    import dataclasses

    import numpy as np

    raw = RawResult(np.zeros(2, np.int64), 3.0, "x", "fake", "1", SolveStatus.FEASIBLE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        raw.solver = "auto(fake)"
    with pytest.raises(ValueError):
        RawResult(None, None, "x", "fake", "1", SolveStatus.OPTIMAL)
    with pytest.raises(ValueError):
        RawResult(np.zeros(2, np.int64), None, "x", "fake", "1", SolveStatus.UNKNOWN)


def test_explain_reports_the_route_taken(calls):
    """``SolveResult.route`` (``kvopt solve --explain``): the row, the case, each phase."""
    inst = jobs(31)
    res = solve(inst, time_limit=10, threads=2, portfolio=fake(calls))
    d = res.to_dict()["route"]
    assert d["name"] == "ils-cpsat" and d["kind"] == "phases"
    assert d["case"]["n"] == 31 and d["case"]["threads"] == 2
    assert [p["backend"] for p in d["phases"]] == [c[0] for c in calls] == ["ils", "cpsat"]
    assert d["phases"][0]["share"] == 0.2 and d["phases"][1]["share"] is None
    assert d["source"]["section"] == "models/bnb.md §9"
    json.dumps(d)
    text = "\n".join(res.route.lines())
    assert "ils-cpsat" in text and "phase 2   cpsat" in text


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
