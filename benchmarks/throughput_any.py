"""Time ``kvopt.exact.solve`` of whichever kvopt is imported on the throughput set.

The set is ``benchmarks/exact.py``'s ``throughput_instances(k, n, (lo, hi), max_response)``
(the same instances), built here from ``kvopt.generators.generate`` alone, so that the
script also runs against old revisions whose ``benchmarks/exact.py`` lacks the options::

    git worktree add /tmp/old 59ad31b
    PYTHONPATH=/tmp/old python benchmarks/throughput_any.py --n 12 --threads 1
    python benchmarks/throughput_any.py --n 12 --threads 1

It prints the kvopt it imported, then the median and maximum wall-clock seconds of
``solve(instance, objective=…, solver=…, time_limit=…, threads=…)`` (heuristic and model building
included) and how many were proven optimal.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=50, help="number of instances")
    ap.add_argument("--n", type=int, default=12, help="jobs per instance")
    ap.add_argument("--memory", default="40-60", help="M uniform in LO-HI")
    ap.add_argument("--max-response", type=int, default=10)
    ap.add_argument("--objective", choices=("total", "makespan"), default="total")
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--solver", default="auto", help="solve(solver=...)")
    args = ap.parse_args(argv)

    import kvopt
    from kvopt.exact import solve
    from kvopt.generators import generate

    lo, hi = (int(x) for x in args.memory.split("-"))
    print(f"kvopt from {kvopt.__file__}; machine load {open('/proc/loadavg').read().split()[0]}")
    rng = np.random.default_rng(1000)  # as throughput_instances in benchmarks/exact.py
    secs, proven = [], 0
    for j in range(args.k):
        memory = int(rng.integers(lo, hi + 1))
        inst = generate("random", 1000 + j, n=args.n, memory=memory, max_response=args.max_response)
        t = time.monotonic()
        res = solve(
            inst,
            objective=args.objective,
            solver=args.solver,
            time_limit=args.time_limit,
            threads=args.threads,
        )
        secs.append(time.monotonic() - t)
        proven += res.status.value == "optimal"
    print(
        f"n = {args.n}, {args.objective}, {args.solver}, {args.threads} thread(s), "
        f"{args.time_limit:g} s: "
        f"median {np.median(secs):.3f} s, max {max(secs):.3f} s, proven {proven}/{args.k}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
