"""The registry's never-kill mark (``PolicySpec.kills``, from the ``kills`` attribute each policy
class declares) against the schedules the policies produce.

Every policy runs on random instances of its class (``kvopt.campaign.policy_space``), with
arrivals and — for the policies that accept them — without.  A policy marked never-kill must
never produce a killed attempt; a policy marked as killing must be observed killing on at least
one instance of this small fixed set (otherwise the mark is stale: a policy that stopped
killing, or a new one that forgot ``kills = False``).  Every registered policy is observed
killing here, so there is no exception to document.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from kvopt.campaign import policy_space
from kvopt.engine import BlindPolicy, ClairvoyantPolicy
from kvopt.generators import generate
from kvopt.policy import POLICIES
from kvopt.simulation import simulate

#: Parameter variants run besides the defaults (the mark is per class, whatever the parameters).
VARIANTS = {
    "greedy-area": [{"backfill": True}],
    "pack-and-schedule": [{"packer": "nfdh"}],
    "route": [{"compact": True}],
    "blackbox": [{"compact": True}],
    "sps": [{"stagger": False}],
}
SAMPLES = 40


def _spaces(name: str):
    sp = policy_space(name)
    yield sp
    yield sp.replace(memory_max=96, max_response=40)
    if sp.arrivals:
        yield sp.replace(arrivals=False)


@pytest.mark.parametrize("name", list(POLICIES))
def test_kill_mark_matches_the_schedules(name):
    spec = POLICIES[name]
    cls = spec.policy_class
    assert "kills" in {k for c in cls.__mro__ for k in vars(c)}, f"{cls.__name__} declares no mark"
    assert issubclass(cls, ClairvoyantPolicy if spec.clairvoyant else BlindPolicy)
    seed = 1 if spec.seeded else None
    observed = 0
    for params in [{}, *VARIANTS.get(name, [])]:
        for k, sp in enumerate(_spaces(name)):
            rng = np.random.default_rng([11, k])
            for _ in range(SAMPLES):
                inst = sp.sample(rng)
                res = simulate(inst, name, params=params or None, seed=seed)
                kills = sum(not a.completed for a in res.schedule.attempts)
                assert kills == res.stats.kills
                if not spec.kills:
                    assert kills == 0, (name, params, json.dumps(inst.to_dict()))
                observed += kills
    if spec.kills and getattr(cls, "kills_only_when_intervals_miss", False):
        # a-max (issue 69): kills only when an interval misses its truth, never on the sampled
        # instances above (no intervals: the hull, which holds every length)
        for seed in range(SAMPLES):
            inst = generate("intervals", seed, n=8, memory=48, width=0.5, miss=1.0)
            observed += simulate(inst, name).stats.kills
    if spec.kills:
        assert observed > 0, f"{name} is marked as killing but never killed on the fixed set"


def test_kill_mark_is_shown_by_kvopt_policies(cli):
    r = cli("policies", "--json")
    marks = {p["name"]: p["kills"] for p in json.loads(r.out)["policies"]}
    assert marks == {n: s.kills for n, s in POLICIES.items()}
    assert marks["serial"] is False and marks["mcsf"] is False and marks["fcfs"] is True
    text = cli("policies").out
    assert "serial  (non-clairvoyant, never kills)" in text
    assert "fcfs  (non-clairvoyant, may kill)" in text
