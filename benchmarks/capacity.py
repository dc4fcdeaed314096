"""The capacity of a serving experiment's server, and the load relative to it (ρ) at each rate.

**Definition.** The capacity of an experiment (its setup, time model and requests) is the
highest request throughput any of its policies reaches when all its ``n`` requests arrive at
once: for each policy, ``n / makespan`` in requests per second on a burst of the same requests
(the same draw of each seed as at every rate), averaged over seeds; the capacity is the largest
of these means. A burst keeps the queue full from the first round to the last, so no rate of
arrivals can be served faster by that policy on these requests; a Poisson rate λ is then at
``ρ = λ / capacity`` of it: ρ < 1 the queue drains between arrivals, ρ > 1 it grows for the
whole run and latency is dominated by waiting (SPEC §10.1: "a workload that puts the server at
50 times its capacity answers a different question").

The burst cells are ordinary experiment cells (load ``"burst"``): pointed at the folder of an
experiment that already has a burst column (``--out``), they are reused, not run again.

Run: ``python benchmarks/capacity.py EXP.toml [--seeds K] [--out DIR] [--json]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from kvopt.serving.experiment import Experiment, load_experiment, run_experiment  # noqa: E402


def burst_throughputs(rows: Sequence[dict[str, Any]]) -> dict[str, list[float]]:
    """Policy → ``n / makespan_seconds`` (requests per second) of each of its burst rows."""
    out: dict[str, list[float]] = {}
    for r in rows:
        if r["load"] == "burst" and r["makespan_seconds"] > 0:
            out.setdefault(r["policy"], []).append(r["n"] / r["makespan_seconds"])
    return out


def capacity_from_rows(rows: Sequence[dict[str, Any]]) -> tuple[float, str, dict[str, float]]:
    """(capacity, the policy that reaches it, each policy's mean burst throughput) in req/s."""
    per = {p: sum(v) / len(v) for p, v in burst_throughputs(rows).items()}
    if not per:
        raise ValueError("no burst rows with a positive makespan")
    best = max(per, key=lambda p: per[p])
    return per[best], best, per


def capacity(exp: Experiment, seeds: int, out: str) -> dict[str, Any]:
    """Run (or reuse) the burst cells of ``exp`` for its first ``seeds`` seeds; the capacity and ρ."""
    burst = dataclasses.replace(exp, loads=("burst",), seeds=exp.seeds[:seeds])
    res = run_experiment(burst, out, report=False)
    cap, best, per = capacity_from_rows(res.rows)
    rates = [x for x in exp.loads if x != "burst"]
    return {
        "experiment": exp.name,
        "seeds": len(burst.seeds),
        "n": exp.workload.n,
        "capacity": cap,
        "best_policy": best,
        "per_policy": per,
        "rho": {str(x): float(x) / cap for x in rates},
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("experiment", help="experiment TOML file")
    ap.add_argument("--seeds", type=int, default=3, help="seeds of the burst (default 3)")
    ap.add_argument("--out", help="results folder (reuses its burst cells; default: a temp dir)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    exp = load_experiment(args.experiment)
    out = args.out or tempfile.mkdtemp(prefix="capacity-")
    rep = capacity(exp, args.seeds, out)
    if args.json:
        print(json.dumps(rep))
        return 0
    print(f"{rep['experiment']}: n = {rep['n']}, burst over {rep['seeds']} seeds")
    for p, v in sorted(rep["per_policy"].items(), key=lambda kv: -kv[1]):
        print(f"  {p:40s} {v:10.3f} requests/s")
    print(f"capacity = {rep['capacity']:.3f} requests/s ({rep['best_policy']})")
    for x, rho in rep["rho"].items():
        print(f"  load {x:>6s}/s: rho = {rho:.3g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
