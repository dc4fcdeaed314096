"""Simulation speed on the bundled Azure LLM inference trace 2023 (issue 4, "Speed").

    python benchmarks/simulate.py [--sizes 5000,20000] [--policies route,...] [--memory 16384]

Instances: the first ``n`` usable requests of the bundled trace (both CSVs
merged by timestamp; prompt = ContextTokens, response = GeneratedTokens,
requests with prompt + response > M skipped), all arriving at round 0.
For every policy that applies to the instance it prints the seconds of the
simulation (engine + policy; the schedule checker's time is listed apart),
the number of events, events per second, and the total completion time
against the area bound.  Target: route on 20,000 requests in under 60 s and a
20k/5k time ratio ≤ 6.
"""

from __future__ import annotations

import argparse
import sys
import time

from kvopt.bound import area_bound
from kvopt.errors import InputError
from kvopt.policy import POLICIES
from kvopt.simulation import simulate
from kvopt.trace import bundled_trace_dir, load_trace, trace_instance

DEFAULT_POLICIES = "route,blackbox,gsa,route-online,sps"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="5000,20000")
    ap.add_argument("--policies", default=DEFAULT_POLICIES)
    ap.add_argument("--memory", type=int, default=16384)
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    names = [x.strip() for x in args.policies.split(",") if x.strip()]
    tr = load_trace(bundled_trace_dir())
    print(f"trace {bundled_trace_dir()} ({len(tr)} requests), M = {args.memory}")
    print(
        f"{'policy':14s} {'n':>6s} {'seconds':>8s} {'check_s':>8s} {'events':>9s} "
        f"{'events/s':>9s} {'total/area':>10s}"
    )
    times: dict[str, dict[int, float]] = {}
    for n in sizes:
        inst = trace_instance(tr, n=n, memory=args.memory, mode="head")
        lb = area_bound(inst)
        for name in names:
            try:
                POLICIES[name].check_applies(inst)
            except InputError as err:
                print(f"{name:14s} {n:6d} skipped: {err}")
                continue
            t0 = time.perf_counter()
            res = simulate(inst, name)
            total = time.perf_counter() - t0
            sec = res.stats.seconds
            times.setdefault(name, {})[n] = sec
            print(
                f"{name:14s} {n:6d} {sec:8.2f} {total - sec:8.2f} {res.stats.events:9d} "
                f"{res.stats.events / max(sec, 1e-9):9.0f} "
                f"{res.objective['total_completion'] / lb:10.3f}",
                flush=True,
            )
    if len(sizes) >= 2:
        a, b = sizes[0], sizes[-1]
        for name, t in times.items():
            if a in t and b in t:
                print(f"{name}: time ratio {b}/{a} = {t[b] / t[a]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
