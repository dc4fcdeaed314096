"""How ``a-max`` and ``a-min`` degrade as interval predictions widen (issue 69; docs/explanation/peers.md).

``python benchmarks/peers_widths.py [--seeds 10] [--n 8] [--memory 48] [--base identical-prompt]``

For each relative width ``w`` (``kvopt gen intervals --param width=w``: an interval of
relative width about ``w`` around each true length, calibrated) and each seed, both
policies run on the same instance and are divided by the exact Opt (``kvopt.solve``,
proved optimal or the run is reported as not proved); ``miss=0.3`` adds a
miscalibrated column (30 % of the intervals miss their truth).  Prints the mean and
the largest ratio per width, and the mean ``u/l`` of the instances (the largest
``hi/lo``).  Deterministic per seed; the seconds depend on the machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kvopt.api import generate, simulate, solve  # noqa: E402
from kvopt.claim import interval_ratio  # noqa: E402

WIDTHS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--memory", type=int, default=48)
    ap.add_argument("--base", default="identical-prompt")
    ap.add_argument("--time-limit", type=float, default=30.0)
    args = ap.parse_args(argv)
    print(f"base {args.base}, n {args.n}, M {args.memory}, seeds 0..{args.seeds - 1}; "
          "ratio = policy / exact Opt")  # fmt: skip
    print(f"{'width':>6} {'miss':>5} {'mean u/l':>9} | {'a-max mean':>10} {'max':>6} | "
          f"{'a-min mean':>10} {'max':>6} | {'mcsf (exact lengths)':>20}")  # fmt: skip
    for miss in (0.0, 0.3):
        for w in WIDTHS:
            rows = {"a-max": [], "a-min": [], "mcsf": []}
            ratios = []
            for seed in range(args.seeds):
                inst = generate("intervals", seed, base=args.base, n=args.n, memory=args.memory,
                                width=w, miss=miss)  # fmt: skip
                opt = solve(inst, time_limit=args.time_limit)
                if opt.status != "optimal":
                    print(f"  seed {seed}: Opt not proved ({opt.status}); left out", flush=True)
                    continue
                ratios.append(float(interval_ratio(inst)))
                for name in rows:
                    alg = simulate(inst, name).objective["total_completion"]
                    rows[name].append(alg / opt.objective)
            if not ratios:
                continue
            cells = [
                f"{sum(v) / len(v):10.3f} {max(v):6.3f}" for v in (rows["a-max"], rows["a-min"])
            ]
            m = rows["mcsf"]
            print(f"{w:6.2f} {miss:5.2f} {sum(ratios) / len(ratios):9.2f} | {cells[0]} | "
                  f"{cells[1]} | {sum(m) / len(m):20.3f}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
