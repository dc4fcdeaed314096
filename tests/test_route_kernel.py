"""The compiled route-online loop (kvopt.policy.routekernel) against the reference (issue 54).

Every run here goes twice through :func:`kvopt.engine.core.run`: once with the compiled
loops switched off (``kvopt.engine.fastpath.ENABLED``: the event loop with the Python
``RouteOnline``, Rect, Response and slot host, the reference) and once with them on.  The
attempts, the completion times, the objective, the engine statistics and the clock's sums
must be the same; a run the loop leaves to the reference must fail or succeed exactly as
the reference does.  Skipped without Numba (the ``fast`` extra; CI installs it).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

pytest.importorskip("numba")

from kvopt.engine import fastpath  # noqa: E402
from kvopt.engine.core import run  # noqa: E402
from kvopt.generators import generate  # noqa: E402
from kvopt.instance import Instance  # noqa: E402
from kvopt.policy import routekernel  # noqa: E402
from kvopt.policy.route import RouteOnline  # noqa: E402
from kvopt.serving.trace import bundled_trace_dir, trace_instance  # noqa: E402
from kvopt.simulation import simulate  # noqa: E402


class _Spy:
    """Counts the compiled runs that finished (``compiled_run`` returned a result)."""

    def __init__(self, monkeypatch):
        self.used = 0
        orig = RouteOnline.compiled_run

        def wrapped(policy, instance, idle_calls):
            out = orig(policy, instance, idle_calls)
            self.used += out is not None
            return out

        monkeypatch.setattr(RouteOnline, "compiled_run", wrapped)


def _outcome(instance, make, **kw):
    try:
        return run(instance, make(), **kw), None
    except Exception as err:  # noqa: BLE001 - compared as type and message
        return None, (type(err).__name__, str(err))


def _summary(res):
    st_ = res.stats
    clock = res.clock
    return {
        "attempts": [(a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts],
        "completion_times": res.completion_times,
        "objective": dict(res.objectives),
        "stats": (st_.kills, st_.wasted_rounds, st_.events, st_.event_times),
        "clock": (clock.now, clock.tau_now, clock.busy_seconds, clock.memory_seconds),
        "schedule": (res.schedule.memory, res.schedule.instance, res.schedule.producer),
        "policy": (res.policy, dict(res.params)),
    }


def both(monkeypatch, instance, make=RouteOnline, **kw):
    """Reference and compiled outcomes of ``run(instance, make(), **kw)``; the compiled
    outcome says whether the loop was used."""
    monkeypatch.setattr(fastpath, "ENABLED", False)
    ref, ref_err = _outcome(instance, make, **kw)
    monkeypatch.setattr(fastpath, "ENABLED", True)
    spy = _Spy(monkeypatch)
    new, new_err = _outcome(instance, make, **kw)
    monkeypatch.undo()
    assert new_err == ref_err
    if ref is not None:
        assert _summary(new) == _summary(ref)
    return spy.used


@st.composite
def instances(draw):
    """Small memory, many kills: prompts and responses up to ``M``, arrivals in bursts."""
    M = draw(st.integers(4, 48))
    n = draw(st.integers(1, 14))
    jobs = []
    for _ in range(n):
        s = draw(st.integers(1, M - 1))
        o = draw(st.integers(1, M - s))
        jobs.append((s, o, draw(st.integers(0, 40))))
    if draw(st.booleans()):  # some instances without arrivals
        jobs = [(s, o, 0) for s, o, _ in jobs]
    prompts, responses, arrivals = zip(*jobs, strict=True)
    return Instance.from_arrays(M, prompts, responses, arrivals)


_PARAMS = st.fixed_dictionaries(
    {
        "lam": st.sampled_from([0.1, 0.25, 0.3, 0.5]),
        "base": st.sampled_from([2, 3]),
        "stagger": st.booleans(),
    }
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(inst=instances(), params=_PARAMS)
def test_random_instances_identical(monkeypatch, inst, params):
    note(repr(inst.to_dict()))
    used = both(monkeypatch, inst, lambda: RouteOnline(**params))
    assert used == 1


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(inst=instances(), lam=st.sampled_from([0.6, 0.8, 1.0]))
def test_large_lambda_same_outcome(monkeypatch, inst, lam):
    # with lam > 1/2 a small job's width 2 s may exceed M: Rect never starts it, and the
    # run is one the reference fails (no progress); the loop leaves it to the reference
    note(repr(inst.to_dict()))
    both(monkeypatch, inst, lambda: RouteOnline(lam=lam))


def test_the_hosts_overflow_wake_up(monkeypatch):
    # the slot host expects the attempt of job 0 to run to its cap (8 rounds, it knows no
    # response length), so after each start it asks to be woken at the first round the
    # running set would overflow, M - s = 5 rounds on; the job completes at that round, and
    # the wake-up is one more event there (SlotHost._call; found by Hypothesis)
    inst = Instance.from_arrays(6, [1], [5])
    assert both(monkeypatch, inst, lambda: RouteOnline(lam=0.1, stagger=False)) == 1
    assert run(inst, RouteOnline(lam=0.1)).stats.events == 30


def test_a_run_left_to_the_reference(monkeypatch):
    # job 0: s = 6 > M/2 is small for lam = 0.9 but its width 12 exceeds M = 10, so Rect
    # never starts it and the slots double until the reference fails (its clock's float
    # overflows before the idle guard); the kernel stops (numbers past int64) and the
    # reference runs and fails as it does without the kernel (``both`` compares the errors)
    inst = Instance.from_arrays(10, [6, 1], [1, 2], [0, 3])
    assert both(monkeypatch, inst, lambda: RouteOnline(lam=0.9)) == 0
    with pytest.raises(OverflowError):
        run(inst, RouteOnline(lam=0.9))


@pytest.mark.parametrize("family", ["random", "arrivals", "prompt-heavy", "response-heavy",
                                    "large", "identical-prompt", "two-point", "trace",
                                    "workload"])  # fmt: skip
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generated_instances_identical(monkeypatch, family, seed):
    inst = generate(family, seed)
    assert both(monkeypatch, inst) == 1


@pytest.mark.parametrize("n", [40, 200])
def test_generated_arrivals_many_jobs(monkeypatch, n):
    inst = generate("arrivals", 7, n=n, memory=256)
    assert both(monkeypatch, inst) == 1


def test_trace_family_with_arrivals(monkeypatch):
    inst = generate("trace", 0, n=300, memory=8192, arrivals=True, mode="random")
    assert both(monkeypatch, inst) == 1


def test_bundled_trace_identical(monkeypatch):
    # the first 3,000 requests of the conversation trace at 50 rounds per second (the
    # instance of benchmarks/simulate.py): about 100,000 attempts
    inst = trace_instance(bundled_trace_dir() / "AzureLLMInferenceTrace_conv.csv", n=3000,
                          memory=16492, arrivals=True, rounds_per_second=50.0)  # fmt: skip
    assert both(monkeypatch, inst) == 1


def test_by_name_through_simulate(monkeypatch):
    inst = generate("arrivals", 3)
    spy = _Spy(monkeypatch)
    res = simulate(inst, "route-online", {"base": 3})
    assert spy.used == 1
    monkeypatch.setattr(fastpath, "ENABLED", False)
    assert _summary(simulate(inst, "route-online", {"base": 3})) == _summary(res)


class _MyRoute(RouteOnline):
    """A subclass: it may change any hook, so it runs the reference."""


@pytest.mark.parametrize(
    "make, kw",
    [
        (lambda: RouteOnline(compact=True), {}),
        (_MyRoute, {}),
        (RouteOnline, {"trace": True}),
        (RouteOnline, {"instrument": True}),
        (RouteOnline, {"max_attempts": 10**6}),
    ],
)
def test_not_plain_runs_the_reference(monkeypatch, make, kw):
    inst = generate("arrivals", 1)
    spy = _Spy(monkeypatch)
    run(inst, make(), **kw)
    assert spy.used == 0


def test_time_model_not_unit_runs_the_reference(monkeypatch):
    from kvopt.serving.timemodel import parse_time_model

    inst = generate("arrivals", 1)
    spy = _Spy(monkeypatch)
    run(inst, RouteOnline(), time_model=parse_time_model("c0=1,c_b=0.5"))
    assert spy.used == 0
    run(inst, RouteOnline(), time_model=parse_time_model("unit"))
    assert spy.used == 1


def test_without_numba_runs_the_reference(monkeypatch):
    inst = generate("arrivals", 1)
    want = _summary(run(inst, RouteOnline()))
    monkeypatch.setattr(routekernel, "_numba", None)
    assert RouteOnline().compiled_run(inst, 10) is None
    spy = _Spy(monkeypatch)
    assert _summary(run(inst, RouteOnline())) == want
    assert spy.used == 0


def test_sps_plan_matches_the_reference():
    from kvopt.policy.sps import sps_plan

    for M in (7, 16, 40, 100):
        for tau in range(1, M // 2 + 1):
            for k in (1, 2, 5, 30):
                for stagger in (True, False):
                    want = sps_plan(tau, tau, k, M, stagger)
                    g, d = routekernel._sps_plan(tau, tau, k, M, stagger)
                    assert (None if g == 0 else (g, d)) == want
