"""Decisions complete at events (SPEC §6 preamble), for every policy of the registry.

A policy decides at every event and also at every round at which its admission
test can newly pass without an event.  Wrapped so that the engine also calls it
at *every* round (one extra wake-up per round), a policy that honours this
produces exactly the same schedule: the extra calls find nothing to do.  This is
the check that found ``mcsf``, ``mc-benchmark``, ``svf`` and ``svf-1bit``
deciding only at events (issue 18).

Excluded: ``alpha-protect`` and ``beta-clear``.  Their second termination rule
(SPEC §6.3) restarts only the head of the queue in the round of a kill-all and
lets the others wait for the next event; called at every round they restart the
others one round later, which is the kill-all loop that rule exists to break —
many such runs never finish (about one random instance in ten here).
:func:`test_alpha_protect_head_only_rule_is_tied_to_events` pins that reason, so
the exclusion is revisited if the rule changes.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from kvopt.engine import BlindPolicy, ClairvoyantPolicy
from kvopt.errors import InputError
from kvopt.instance import Instance, Job
from kvopt.policy import POLICIES, make_policy
from kvopt.simulation import simulate

TIED_TO_EVENTS = ("alpha-protect", "beta-clear")


class _EveryRound:
    """Delegates to a policy and asks for a wake-up at the next round after every call."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.params = dict(getattr(inner, "params", {}) or {})

    def setup(self, view) -> None:
        self.inner.setup(view)

    def on_events(self, now, events, view, act) -> None:
        self.inner.on_events(now, events, view, act)
        act.wake(now + 1)


class _EveryRoundBlind(_EveryRound, BlindPolicy):
    pass


class _EveryRoundClairvoyant(_EveryRound, ClairvoyantPolicy):
    pass


def every_round(inner):
    return (_EveryRoundClairvoyant if inner.clairvoyant else _EveryRoundBlind)(inner)


def _attempts(res):
    return sorted((a.job, a.start, a.rounds, a.completed) for a in res.schedule.attempts)


def _applies(name: str, inst: Instance) -> bool:
    try:
        POLICIES[name].check_applies(inst)
    except InputError:
        return False
    return True


@st.composite
def _instances(draw, name: str):
    """Small instances in the policy's class (prompt- / response-heavy where it needs them)."""
    M = draw(st.integers(4, 40))
    online = _applies(name, Instance(M, (Job(1, 1, 0), Job(1, 1, 1))))
    arrivals = online and draw(st.booleans())
    predictions = draw(st.booleans())
    jobs = []
    for _ in range(draw(st.integers(1, 7))):
        if name == "response":
            s = draw(st.integers(1, (M - 1) // 2))
            o = draw(st.integers(s + 1, M - s))
        else:
            s = draw(st.integers(1, M - 1))
            small = 4 * s <= M  # rect: small jobs must be prompt-heavy
            o = draw(st.integers(1, min(s, M - s) if name == "rect" and small else M - s))
        a = draw(st.integers(0, 2 * M)) if arrivals else 0
        p = draw(st.integers(1, M)) if predictions else None
        jobs.append(Job(s, o, a, None, p))
    return Instance(M, tuple(jobs), name="hypothesis")


@pytest.mark.parametrize("name", [n for n in POLICIES if n not in TIED_TO_EVENTS])
def test_calling_at_every_round_changes_nothing(name):
    seed = 0 if POLICIES[name].seeded else None

    @settings(
        max_examples=60,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(inst=_instances(name))
    def check(inst):
        assume(_applies(name, inst))
        note(json.dumps(inst.to_dict()))
        plain = simulate(inst, make_policy(name, seed=seed))
        woken = simulate(inst, every_round(make_policy(name, seed=seed)))
        assert _attempts(woken) == _attempts(plain)
        assert woken.stats.event_times >= plain.stats.event_times  # the wrapper did wake it

    check()


def test_alpha_protect_head_only_rule_is_tied_to_events():
    # M = 17: job 1 arrives at 10, job 3 at 14; a kill-all at 18 restarts only job 1.
    # At events only, job 3 waits for job 1's completion (33); called at every round it
    # is restarted at 19, one round after the kill-all: the rule is defined by events.
    inst = Instance.from_arrays(17, [16, 2, 5, 2], [1, 15, 5, 6], [0, 10, 0, 14])
    plain = _attempts(simulate(inst, "alpha-protect"))
    woken = _attempts(simulate(inst, every_round(make_policy("alpha-protect"))))
    assert (1, 18, 15, True) in plain and (1, 18, 15, True) in woken
    assert (3, 33, 6, True) in plain
    assert (3, 19, 6, True) in woken
