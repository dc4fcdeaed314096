"""Attempt budgets: a run past ``max_attempts`` stops with BudgetError; a campaign skips it."""

from __future__ import annotations

import pytest

from kvopt.campaign import evaluate as ev
from kvopt.campaign import read_log, search
from kvopt.campaign.types import Outcome
from kvopt.errors import BudgetError, InputError
from kvopt.instance import Instance, Job
from kvopt.simulation import simulate

# fcfs kills on this instance: the long jobs overflow as they grow (SPEC §6.3)
THRASH = Instance(memory=12, jobs=tuple([Job(3, 6)] * 3 + [Job(1, 1)] * 4))


def test_a_run_past_its_budget_stops():
    res = simulate(THRASH, "fcfs")
    made = len(res.schedule.attempts)
    assert res.stats.kills > 0
    assert len(simulate(THRASH, "fcfs", max_attempts=made).schedule.attempts) == made
    with pytest.raises(BudgetError, match="max_attempts"):
        simulate(THRASH, "fcfs", max_attempts=made - res.stats.kills - 1)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_a_bad_budget_is_named(bad):
    with pytest.raises(InputError, match="max_attempts"):
        simulate(THRASH, "fcfs", max_attempts=bad)


def test_a_campaign_skips_over_budget_candidates(tmp_path, monkeypatch):
    monkeypatch.setattr(ev, "ATTEMPTS_PER_JOB", 1)
    monkeypatch.setattr(ev, "ATTEMPTS_BASE", 0)  # every run that kills is over budget
    res = search("fcfs", budget=24, seed=2, out=tmp_path / "c", progress=False,
                 space={"n_max": 6, "memory_max": 16, "max_response": 6})  # fmt: skip
    log = read_log(tmp_path / "c" / "evaluations.jsonl").values()
    skipped = [r for r in log if r.outcome == Outcome.SKIPPED]
    assert skipped and all(r.error.startswith("over budget: ") for r in skipped)
    assert res.errors == 0 and not (tmp_path / "c" / "errors").exists()  # not findings
    assert res.best is not None and res.best.ratio_certified is not None
    assert all(r.kills == 0 for r in log if r.outcome != Outcome.SKIPPED)
