"""The event-driven engine: enforcement, hidden information, event order, overflow, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kvopt.cli import main
from kvopt.engine import (
    ARRIVAL,
    COMPLETION,
    EXPIRY,
    OVERFLOW,
    WAKE,
    BlindPolicy,
    ClairvoyantPolicy,
    View,
)
from kvopt.errors import InputError, PolicyError
from kvopt.instance import Instance, Job, save_instance
from kvopt.policy import POLICIES, get_policy, make_policy
from kvopt.schedule import memory_profile
from kvopt.simulation import simulate


class Scripted(BlindPolicy):
    """Runs a fixed script: {round: [("start", job, cap) | ("kill", job) | ("wake", t)]}."""

    name = "scripted"

    def __init__(self, script):
        self.script = script
        self.calls = []

    def on_events(self, now, events, view, act):
        self.calls.append((now, [(e.kind, e.job, e.info) for e in events]))
        for step in self.script.get(now, []):
            if step[0] == "start":
                act.start(step[1], step[2] if len(step) > 2 else None)
            elif step[0] == "kill":
                act.kill(step[1])
            else:
                act.wake(step[1])


def inst3():
    return Instance.from_arrays(20, [3, 4, 2], [5, 2, 6], [0, 0, 4])


def test_scripted_run_and_event_order():
    # job 0 runs 0..4 (completes at 5); job 1 is capped at 1 round (expires at 1), restarts at 1
    # and completes at 3; job 2 arrives at 4 and starts on a wake-up at 6.
    pol = Scripted(
        {
            0: [("start", 0), ("start", 1, 1), ("wake", 6)],
            1: [("start", 1, 5)],
            6: [("start", 2)],
        }
    )
    res = simulate(inst3(), pol, trace=True)
    got = [(a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts]
    assert got == [(0, 0, 5, True), (1, 0, 1, False), (1, 1, 2, True), (2, 6, 6, True)]
    assert res.completion_times == (5, 3, 12)
    assert res.stats.kills == 1 and res.stats.wasted_rounds == 1
    calls = dict(pol.calls)
    assert calls[0] == [(ARRIVAL, 0, 0), (ARRIVAL, 1, 0)]
    assert calls[1] == [(EXPIRY, 1, 1)]
    assert calls[3] == [(COMPLETION, 1, 2)]
    assert calls[4] == [(ARRIVAL, 2, 0)]
    assert calls[5] == [(COMPLETION, 0, 5)]
    assert calls[6] == [(WAKE, -1, 0)]
    assert (6, "wake", -1, 0) in res.trace and (6, "start", 2, -1) in res.trace
    assert (0, "start", 1, 1) in res.trace and (1, "expiry", 1, 1) in res.trace


def test_simultaneous_events_order():
    # completions (by job), then expiries (by job), then arrivals, then one wake
    inst = Instance.from_arrays(40, [1, 1, 1, 1, 1], [2, 9, 2, 9, 3], [0, 0, 0, 0, 2])
    pol = Scripted(
        {
            0: [
                ("start", 3, 2),
                ("start", 2),
                ("start", 1, 2),
                ("start", 0),
                ("wake", 2),
                ("wake", 2),
            ]
        }
    )
    pol.script[2] = [("start", 4)]
    pol.script[2].extend([("start", 1), ("start", 3)])
    simulate(inst, pol)
    assert pol.calls[1] == (
        2,
        [
            (COMPLETION, 0, 2),
            (COMPLETION, 2, 2),
            (EXPIRY, 1, 2),
            (EXPIRY, 3, 2),
            (ARRIVAL, 4, 0),
            (WAKE, -1, 0),
        ],
    )


@pytest.mark.parametrize(
    "script, match",
    [
        ({0: [("start", 2)]}, "job 2, round 0: started before its arrival"),
        ({0: [("start", 0), ("start", 0)]}, "job 0, round 0: started while an attempt"),
        ({0: [("start", 1)], 2: [("start", 1)]}, "job 1, round 2: started after it finished"),
        ({0: [("start", 0), ("kill", 0)]}, "job 0, round 0: killed in the round it started"),
        ({0: [("kill", 1)]}, "job 1, round 0: killed but not running"),
        ({0: [("start", 0, 0)]}, "cap must be >= 1"),
        ({0: [("wake", 0)]}, "not in the future"),
        ({0: [("start", 0)]}, "stalled"),
        ({0: [("start", 7)]}, "unknown job"),
    ],
)
def test_bad_decisions_raise(script, match):
    if match == "job 1, round 2: started after it finished":
        script = {0: [("start", 1), ("wake", 2)], 2: [("start", 1)]}
    with pytest.raises(PolicyError, match="scripted") as exc:
        simulate(inst3(), Scripted(script))
    assert match in str(exc.value)


class Poller(BlindPolicy):
    """Wakes every round; starts the first unfinished job (one at a time) once ``now >= after``."""

    name = "poller"

    def __init__(self, after):
        self.after = after

    def on_events(self, now, events, view, act):
        left = [j for j in view.jobs if j not in view.done]
        if now >= self.after and left and not view.running:
            act.start(left[0])
        act.wake(now + 1)


def test_a_policy_that_only_wakes_makes_no_progress_and_fails():
    """Issue 55: a policy that wakes forever and starts nothing used to hang the engine (the
    stall guard only caught one that stops waking).  It fails like a stall, naming the round."""
    from kvopt.engine.core import IDLE_CALLS

    with pytest.raises(PolicyError, match="'poller'") as exc:
        simulate(inst3(), Poller(after=10**9))
    msg = str(exc.value)
    assert f"round {IDLE_CALLS + 5}: no progress" in msg  # job 2 arrives at round 4
    assert "no job left to arrive" in msg and "e.g. job 0" in msg
    # polling is no progress only while nothing runs and nothing is left to arrive: waking
    # every round through long attempts and a far arrival, or idling a while, is fine
    res = simulate(Instance.from_arrays(40, [1, 1], [30, 2]), Poller(after=IDLE_CALLS - 5))
    assert res.completion_times == (IDLE_CALLS + 25, IDLE_CALLS + 27)
    far = Instance.from_arrays(40, [1, 1], [2, 2], [0, 3 * IDLE_CALLS])
    res = simulate(far, Poller(after=0))
    assert res.completion_times == (2, 3 * IDLE_CALLS + 2)
    assert res.stats.event_times > 3 * IDLE_CALLS


class Quiet(BlindPolicy):
    """Starts nothing and asks for no wake-up (no ``name``: it goes by its class)."""

    def on_events(self, now, events, view, act):
        pass


def test_a_nameless_users_object_is_named_by_its_class_once():
    """Issue 55: an object of a user's class without a ``name`` was called 'policy' in the
    engine's errors ("your policy 'Quiet' broke the model: policy 'policy': round 4: …")."""
    with pytest.raises(PolicyError) as exc:
        simulate(inst3(), Quiet())
    msg = str(exc.value)
    assert msg.startswith("your policy 'Quiet' broke the model: round 4: stalled"), msg
    assert "'policy'" not in msg


def test_overflow_by_start_names_job_and_round():
    inst = Instance.from_arrays(10, [5, 5], [3, 3])
    with pytest.raises(
        PolicyError, match=r"'scripted'.*: job 1, round 0: running attempts hold 12"
    ):
        simulate(inst, Scripted({0: [("start", 0), ("start", 1)]}))


class KillNewest(BlindPolicy):
    """Start everything; on overflow kill the most recently started job (fcfs-like)."""

    name = "kill-newest"

    def __init__(self):
        self.overflows = []

    def on_events(self, now, events, view, act):
        if any(e.kind == OVERFLOW for e in events):
            self.overflows.append((now, view.memory_now()))
            while view.memory_now() > view.memory:
                newest = max(view.running, key=lambda j: (view.running[j], j))
                act.kill(newest)
        for j in view.unfinished():
            if not view.is_running(j) and view.memory_now() + view.prompts[j] + 1 <= view.memory:
                act.start(j)


def test_overflow_event_at_first_overflowing_round():
    # two jobs s=2 started at 0 hold 2(2+t+1) = 6 + 2t; M = 12 -> first overflow at t = 4
    inst = Instance.from_arrays(12, [2, 2], [8, 8])
    pol = KillNewest()
    res = simulate(inst, pol)
    assert pol.overflows[0] == (4, 14)
    assert res.schedule.attempts[1] == type(res.schedule.attempts[1])(1, 0, 4, False)
    prof = memory_profile(inst, res.schedule)
    assert prof.max() <= 12


def test_unresolved_overflow_raises():
    inst = Instance.from_arrays(12, [2, 2], [8, 8])
    with pytest.raises(PolicyError, match="round 4: running attempts hold 14 > memory 12"):
        simulate(inst, Scripted({0: [("start", 0), ("start", 1)]}))


class Peeker(BlindPolicy):
    name = "peeker"

    def on_events(self, now, events, view, act):
        if now == 0:
            act.start(0)
            self.seen = view.response(0)


def test_blind_view_hides_responses():
    inst = Instance.from_arrays(20, [3, 4], [5, 2])
    with pytest.raises(PolicyError, match="response length of job 0 is not visible"):
        simulate(inst, Peeker())

    seen = {}

    class Collect(BlindPolicy):
        name = "collect"

        def on_events(self, now, events, view, act):
            seen["view"], seen["act"] = view, act
            for j in view.unfinished():
                if not view.is_running(j):
                    act.start(j)

    simulate(inst, Collect())
    view, act = seen["view"], seen["act"]
    # nothing reachable from the view or the actions is the instance or its responses
    reachable = [getattr(view, k) for k in View.__slots__] + [
        getattr(act, k) for k in type(act).__slots__
    ]
    assert not any(isinstance(x, Instance) for x in reachable)
    assert view.response(1) == 2  # revealed by completion


def test_clairvoyant_policy_receives_instance():
    class Clair(ClairvoyantPolicy):
        name = "clair"

        def setup(self, view):
            # offline (no arrivals): the whole instance is visible through the view
            self.order = list(np.argsort(view.instance.responses, kind="stable"))
            assert [view.responses[j] for j in view.jobs] == [5, 2]

        def on_events(self, now, events, view, act):
            if not view.running and self.order:
                act.start(int(self.order.pop(0)))

    res = simulate(Instance.from_arrays(20, [3, 4], [5, 2]), Clair())
    assert res.completion_times == (7, 2)


def test_registry_entries():
    for name, spec in POLICIES.items():
        assert spec.name == name
        pol = make_policy(name, seed=0 if spec.seeded else None)
        assert pol.clairvoyant == spec.clairvoyant
        assert isinstance(pol, ClairvoyantPolicy if spec.clairvoyant else BlindPolicy)
        d = spec.to_dict()
        assert {"name", "clairvoyant", "params", "source", "claims"} <= set(d)
    with pytest.raises(InputError, match="--policy: unknown policy 'nope'"):
        get_policy("nope")
    with pytest.raises(InputError, match="--param x: unknown parameter"):
        make_policy("route", {"x": "1"})
    assert make_policy("route", {"base": "3"}).base == 3


def test_registry_declares_arrivals_and_default_space():
    """``arrivals`` agrees with the class check; the default search space stays in the class."""
    from kvopt.campaign import policy_space

    probe = Instance(memory=8, jobs=(Job(1, 2, arrival=1),))  # only rule broken: a late arrival
    rng = np.random.default_rng(0)
    for name, spec in POLICIES.items():
        rule = spec.check(probe, spec.resolve_params({})) if spec.check else None
        assert spec.arrivals == (rule is None), (name, rule)
        space = policy_space(name)
        assert space == spec.default_space()
        assert space.arrivals == spec.arrivals and space.max_response == 16
        for _ in range(10):
            spec.check_applies(space.sample(rng))
    assert policy_space("rect").regimes == ("large", "prompt-heavy")
    assert policy_space("response").all_response_heavy
    assert policy_space("gba").identical_prompts and not policy_space("route").arrivals
    assert policy_space("fcfs", n_max=5).replace(n_max=8) == policy_space("fcfs")
    assert policy_space("fcfs").max_arrival == 16


def test_class_check_for_rect():
    inst = Instance.from_arrays(64, [2, 20], [5, 3])  # job 0 small and response-heavy
    with pytest.raises(InputError, match="small job 0 is response-heavy"):
        simulate(inst, "rect")


def test_cli_simulate_and_policies(tmp_path, capsys):
    path = tmp_path / "i.json"
    save_instance(Instance.from_arrays(16, [2, 1, 5, 2], [1, 6, 3, 2], name="i"), path)
    out = tmp_path / "s.json"
    assert main(["simulate", str(path), "--policy", "route", "--json", "--out", str(out)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d) == {"policy", "params", "objective", "schedule", "stats"}
    assert {"kills", "wasted_rounds", "events", "seconds"} <= set(d["stats"])
    assert d["objective"]["total_completion"] == sum(d["schedule"]["completion_times"])
    assert json.loads(out.read_text())["attempts"] == d["schedule"]["attempts"]
    assert main(["check", str(path), str(out)]) == 0
    capsys.readouterr()
    assert main(["policies", "--json"]) == 0
    names = [p["name"] for p in json.loads(capsys.readouterr().out)["policies"]]
    assert {"rect", "sps", "response", "blackbox", "route", "route-online", "gsa"} <= set(names)
    for argv, needle in [
        (["--policy", "rect"], "--policy: policy 'rect' applies to"),
        (["--policy", "nope"], "--policy: unknown policy"),
        (["--policy", "route", "--param", "zz=1"], "--param zz"),
        (["--policy", "route", "--param", "base=1"], "--param base: must be >= 2"),
    ]:
        assert main(["simulate", str(path), *argv]) == 2
        err = capsys.readouterr().err
        assert needle in err and "Traceback" not in err


def test_simulate_takes_the_bracket_form_of_compare_and_search(cli, tmp_path):
    """``NAME[K=V;…]`` works in ``simulate`` (the API and the command) as in ``compare``,
    ``search`` and ``validate``; a key given twice is bad input (issue 55, a new user's
    walkthrough: the API page promised it and it raised)."""
    from kvopt.simulation import simulate

    inst = Instance.from_arrays(30, [3, 9, 5, 2, 7, 4], [6, 2, 8, 3, 5, 4])
    a = simulate(inst, "route[compact=true]")
    b = simulate(inst, "route", params={"compact": True})
    assert a.schedule.attempts == b.schedule.attempts
    assert a.params["compact"] is True
    with pytest.raises(InputError, match="given both"):
        simulate(inst, "route[compact=true]", params={"compact": False})
    path = tmp_path / "six.json"
    save_instance(inst, path)
    r = cli("simulate", str(path), "--policy", "route[compact=true]", "--json")
    assert r.code == 0, r.err
    assert r.json()["params"]["compact"] is True
    r = cli("simulate", str(path), "--policy", "route[compact=true]", "--param", "compact=false")
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1
