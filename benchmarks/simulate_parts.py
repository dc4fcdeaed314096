"""The parts of one ``kvopt simulate`` command, each timed in this process (issue 54).

    python benchmarks/simulate_parts.py INSTANCE.json --policies fcfs,mcsf [--repeat 1]

For each policy: loading the instance (``load_instance``), the simulation
(``kvopt.simulation.simulate``: engine and policy; ``sim``), the checker run on its
schedule again (``check_schedule``; the simulation ran it once already), and writing
the schedule (``save_schedule``), in CPU seconds of this process
(``time.process_time``: on a shared machine less noisy than wall time) with the wall
seconds of the simulation and ``os.getloadavg()`` beside them.  ``benchmarks/simulate.py``
times the whole command in a fresh process; this script says where its time goes.
Make the instance with ``benchmarks/simulate.py --sizes N --keep DIR``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from kvopt.instance import load_instance
from kvopt.policy import POLICIES
from kvopt.schedule import check_schedule, save_schedule
from kvopt.simulation import simulate


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("instance")
    ap.add_argument("--policies", default="fcfs")
    ap.add_argument("--repeat", type=int, default=1, help="best of this many runs of each part")
    args = ap.parse_args(argv)
    names = [x.strip() for x in args.policies.split(",") if x.strip()]
    cpu = time.process_time
    best_load = min(_timed(load_instance, args.instance)[0] for _ in range(args.repeat))
    inst = load_instance(args.instance)
    print(f"{inst.name}: n = {inst.n}, load_instance {best_load:.2f} s cpu  "
          f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"{'policy':16s} {'sim_cpu':>8s} {'sim_wall':>8s} {'check':>6s} {'save':>6s} "
          f"{'attempts':>9s}  load")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "schedule.json"
        for name in names:
            seed = 0 if POLICIES[name].seeded else None
            runs = []
            for _ in range(args.repeat):
                t0, w0 = cpu(), time.perf_counter()
                res = simulate(inst, name, seed=seed)
                runs.append((cpu() - t0, time.perf_counter() - w0))
            sim_cpu, sim_wall = min(runs)
            sched = res.schedule
            chk = min(_timed(check_schedule, inst, sched)[0] for _ in range(args.repeat))
            sav = min(_timed(save_schedule, sched, out, inst.n)[0] for _ in range(args.repeat))
            print(f"{name:16s} {sim_cpu:8.2f} {sim_wall:8.2f} {chk:6.2f} {sav:6.2f} "
                  f"{len(res.schedule.columns()[0]):9d}  load {os.getloadavg()[0]:.1f}",
                  flush=True)  # fmt: skip
    return 0


def _timed(fn, *args):
    t0 = time.process_time()
    out = fn(*args)
    return time.process_time() - t0, out


if __name__ == "__main__":
    sys.exit(main())
