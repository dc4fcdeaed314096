"""Ctrl-C at random moments: ``python benchmarks/sigint_stress.py [--runs 90] [--parallel 3]``.

Starts ``kvopt search`` (the command of ``tests/test_search.py``'s SIGINT test, with a
budget it does not reach) ``--runs`` times, ``--parallel`` at once, sends each SIGINT at a
random moment 1.5–6 s after its start (seeded by the run's index) and counts the exit
statuses: every run must exit 130.  Before ``kvopt.exact.workers`` about one in 25 aborted
(−6, "terminate called without an active exception": a solver thread was still running when
the interpreter finalized).  A run that exits otherwise has its stderr printed.
"""

from __future__ import annotations

import argparse
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor


def _one(i: int) -> tuple[int, str]:
    with tempfile.TemporaryDirectory(prefix="kvopt-sigint-") as d:
        cmd = [sys.executable, "-m", "kvopt", "search", "--policy", "fcfs", "--budget", "5000",
               "--seed", str(2 + i % 5), "--n", "2:6", "--memory", "8:24", "--out", d + "/out",
               "--json", "--no-progress"]  # fmt: skip
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(random.Random(i).uniform(1.5, 6.0))
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        return p.returncode, err


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=90)
    ap.add_argument("--parallel", type=int, default=3)
    args = ap.parse_args(argv)
    if args.runs < 1 or args.parallel < 1:
        ap.error("--runs and --parallel must be at least 1")
    with ThreadPoolExecutor(args.parallel) as ex:
        results = list(ex.map(_one, range(args.runs)))
    counts = Counter(rc for rc, _ in results)
    for i, (rc, err) in enumerate(results):
        if rc != 130:
            print(f"run {i}: exit {rc}\n{err[-2000:]}", file=sys.stderr)
    print(f"exit statuses over {args.runs} runs: {dict(sorted(counts.items()))}")
    return 0 if set(counts) == {130} else 1


if __name__ == "__main__":
    sys.exit(main())
