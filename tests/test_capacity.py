"""``benchmarks/capacity.py``: the capacity the reproductions page quotes (the saturated output
token rate of a burst over the mean response, the best policy's) and ρ = load / capacity."""

from __future__ import annotations

import math

from conftest import load_benchmark

cap = load_benchmark("capacity")


def test_the_saturated_rate_counts_tokens_until_the_queue_empties():
    # T = 5 (the last first token); job 0 done (2 tokens), job 1 half way (5 of 10), job 2
    # started at T (0 of 1): G = 7 tokens in 5 s, mean response 13/3
    rate, nm = cap.saturated_rate([0.0, 0.0, 5.0], [2.0, 10.0, 6.0], [2, 10, 1])
    assert math.isclose(rate, 7 / 5 / (13 / 3)) and math.isclose(nm, 3 / 10)
    rate, nm = cap.saturated_rate([0.0, 0.0], [1.0, 4.0], [1, 4])  # one batch, no queue
    assert rate == nm == 0.5


def test_capacity_separates_the_loads_below_and_above_it(tmp_path):
    import kvopt
    from kvopt.serving.experiment import Experiment

    d = {"name": "cap", "time_model": "llama2-70b-a100-tp2", "policies": ["fcfs", "svf"],
         "loads": [1], "seeds": 2,
         "workload": {"profile": "lmsys-jaillet", "n": 150, "memory": 1500,
                      "arrivals": "poisson"}}  # fmt: skip
    rep = cap.capacity(Experiment.from_dict(d), 2)
    c = rep["capacity"]
    assert c == max(rep["per_policy"].values()) > 0 and rep["best_policy"] in ("fcfs", "svf")
    assert rep["rho"] == {"1": 1 / c}
    # a rate at a quarter of the capacity keeps the queue short, four times it does not
    low, high = round(c / 4, 3), round(4 * c, 3)
    res = kvopt.run_experiment({**d, "policies": ["fcfs"], "loads": [low, high]}, tmp_path,
                               report=False)  # fmt: skip
    wait = res.summary("mean_ttft")
    assert wait[("fcfs", high)][0] > 10 * wait[("fcfs", low)][0]
