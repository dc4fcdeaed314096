"""``benchmarks/capacity.py``: the capacity the reproductions page quotes (the best policy's
``n / makespan`` on a burst of the same requests) and ρ = load / capacity."""

from __future__ import annotations

import math

import pytest
from conftest import load_benchmark

cap = load_benchmark("capacity")


def _row(policy, load, n, makespan):
    return {"policy": policy, "load": load, "n": n, "makespan_seconds": makespan}


def test_capacity_is_the_best_policys_mean_burst_throughput():
    rows = [_row("a", "burst", 100, 10.0), _row("a", "burst", 100, 20.0),  # 10 and 5 req/s
            _row("b", "burst", 100, 12.5), _row("b", "burst", 100, 12.5),  # 8 and 8
            _row("a", 4.0, 100, 1.0)]  # a rate's row is not a burst: left out  # fmt: skip
    c, best, per = cap.capacity_from_rows(rows)
    assert per == {"a": 7.5, "b": 8.0} and best == "b" and c == 8.0
    with pytest.raises(ValueError):
        cap.capacity_from_rows([_row("a", 4.0, 100, 1.0)])


def test_capacity_of_a_small_experiment_and_rho(tmp_path):
    exp = {"name": "cap", "time_model": "llama2-70b-a100-tp2", "policies": ["fcfs", "svf"],
           "loads": ["burst", 2, 50], "seeds": 2,
           "workload": {"profile": "lmsys-jaillet", "n": 40, "memory": 2000,
                        "arrivals": "poisson"}}  # fmt: skip
    import kvopt
    from kvopt.serving.experiment import Experiment

    e = Experiment.from_dict(exp)
    res = kvopt.run_experiment(e, tmp_path, report=False)
    rep = cap.capacity(e, 2, str(tmp_path))  # the burst cells are on disk: reused
    bursts = {p: [r["n"] / r["makespan_seconds"] for r in res.rows
                  if r["policy"] == p and r["load"] == "burst"] for p in ("fcfs", "svf")}  # fmt: skip
    expect = max(sum(v) / 2 for v in bursts.values())
    assert math.isclose(rep["capacity"], expect) and rep["capacity"] > 0
    assert rep["rho"] == {"2.0": 2 / expect, "50.0": 50 / expect}
    assert len(list((tmp_path / "cells").iterdir())) == len(res.rows)  # nothing new was run
