"""Would Sorted-F help the exact solvers' heuristic upper bound? (issue 69)

``python benchmarks/peers_upper.py [--seeds 20] [--sizes 8,20,60]``

The exact solvers start from :func:`kvopt.exact.heuristic.heuristic_starts`: the best of
six fixed serial orders (``place``: each job at its earliest feasible start), then a
seeded local search.  Sorted-F could enter in two ways: its schedule as an incumbent
(``sorted-f`` and ``sorted-f[pipeline=true]``, the better of the two), or its batch order
(batches in ``F`` order, jobs by index within a batch) as a seventh fixed order for
``place``.  For instances without arrivals of the ``random`` family (all regimes) this
prints, per size, how often each candidate is strictly below the fixed orders' best
(``moves=0``: no local search) and below the heuristic with its local search
(``moves = 60 n²``, deterministic), and the mean relative gap.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from kvopt.exact.heuristic import _valuer, heuristic_starts, place  # noqa: E402
from kvopt.generators import generate  # noqa: E402
from kvopt.policy.sorted_f import sorted_f_batches  # noqa: E402
from kvopt.simulation import simulate  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--sizes", default="8,20,60")
    ap.add_argument("--memory", type=int, default=64)
    args = ap.parse_args(argv)
    print(
        "n    | fixed orders best | + local search | sorted-f schedule: < fixed, < LS, "
        "mean gap to LS | sorted-f order in place: < fixed, < LS, mean gap to LS"
    )
    for n in (int(x) for x in args.sizes.split(",")):
        stats = {"sf<fix": 0, "sf<ls": 0, "ord<fix": 0, "ord<ls": 0, "gap_sf": [], "gap_ord": []}
        fixed_v, ls_v = [], []
        t0 = time.monotonic()
        for seed in range(args.seeds):
            inst = generate("random", seed, n=n, memory=args.memory)
            value = _valuer(inst, "total")
            fix = value(heuristic_starts(inst, moves=0))
            ls = value(heuristic_starts(inst, moves=60 * n * n))
            sf = min(simulate(inst, "sorted-f", params={"pipeline": p}).objective["total_completion"]
                     for p in (False, True))  # fmt: skip
            order = [j for b in sorted_f_batches(inst.prompts.tolist(), inst.responses.tolist(),
                                                  inst.memory) for j in b]  # fmt: skip
            od = value(place(inst, np.asarray(order)))
            fixed_v.append(fix)
            ls_v.append(ls)
            stats["sf<fix"] += sf < fix
            stats["sf<ls"] += sf < ls
            stats["ord<fix"] += od < fix
            stats["ord<ls"] += od < ls
            stats["gap_sf"].append((sf - ls) / ls)
            stats["gap_ord"].append((od - ls) / ls)
        k = args.seeds
        print(f"{n:<4} | {np.mean(fixed_v):17.1f} | {np.mean(ls_v):14.1f} | "
              f"{stats['sf<fix']}/{k}, {stats['sf<ls']}/{k}, {100 * np.mean(stats['gap_sf']):+.1f} % | "
              f"{stats['ord<fix']}/{k}, {stats['ord<ls']}/{k}, {100 * np.mean(stats['gap_ord']):+.1f} %"
              f"   ({time.monotonic() - t0:.0f} s)", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
