"""Solve one benchmark set with the kvopt of a given source tree, one JSON line per instance
(issue 34's before/after measurements; run it for two trees in turn, A B A B).

    python benchmarks/before_after.py TREE SET [TIME_LIMIT] [K,K,...]

``TREE``: a checkout of kvopt (its ``kvopt/`` and ``benchmarks/exact.py`` are used, so an
older tree is measured with its own code); ``SET``: ``n12`` (the issue 17 family: 20
instances, n = 12, M 40-60, responses <= 10), ``n10`` (20 instances, n = 10, M 40-60) or
``table`` (the 14 instances of ``benchmarks/exact.py``'s table: n = 12-30, seeds 1, 2);
``TIME_LIMIT`` seconds per solve (default 60), 2 threads; ``K,...`` only those instances.
Each line: ``k``, ``n``, ``status``, ``objective``, ``bound``, ``seconds``, ``solver`` and the
load average when it ended.
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[1] not in ("n12", "n10", "table"):
        print(__doc__)
        return 2
    tree, which = argv[0], argv[1]
    tl = float(argv[2]) if len(argv) > 2 else 60.0
    only = {int(x) for x in argv[3].split(",")} if len(argv) > 3 else None
    sys.path[:0] = [tree, f"{tree}/benchmarks"]
    import exact as bench  # that tree's benchmarks/exact.py

    from kvopt.exact import solve

    if which == "n12":
        insts = bench.throughput_instances(20, 12, (40, 60), 10)
    elif which == "n10":
        insts = bench.throughput_instances(20, 10)
    else:
        insts = [bench.instance(n, s) for n in bench.SIZES for s in bench.SEEDS]
    for k, inst in enumerate(insts):
        if only is not None and k not in only:
            continue
        res = solve(inst, time_limit=tl, threads=2)
        row = {"k": k, "n": inst.n, "status": res.status.value, "objective": res.objective,
               "bound": res.bound, "seconds": round(res.seconds, 3), "solver": res.solver,
               "load": open("/proc/loadavg").read().split()[0]}  # fmt: skip
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
