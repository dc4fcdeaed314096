"""The compiled branch and bound against the Python one: ``python benchmarks/bnb_compiled.py``.

On ``K`` instances of the throughput family (``benchmarks/exact.py --throughput``: random
mixed, ``M`` in ``--memory``, responses ≤ ``--max-response``), both searches run on the same
problem (textbook windows, no incumbent, the root LP's duals): prints per instance the node
counts (they must be equal), the optimum and the seconds of each, then the sums over all
instances but the first (whose compiled run loads the compiled code).  Needs Numba
(``pip install kvopt[fast]``); ``models/bnb.md`` §7.

``--split``: the compiled search on one thread against the same search split between two
threads (``run_compiled(threads=2)``): the optima must be equal; the node counts differ.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from exact import throughput_instances  # noqa: E402

from kvopt.exact import bnb  # noqa: E402
from kvopt.exact.bnb import compiled as bnbfast  # noqa: E402
from kvopt.exact.bounds.relax import lp_duals  # noqa: E402
from kvopt.exact.common import start_windows  # noqa: E402


def _search(inst):
    lo, hi = start_windows(inst, "total", None)
    s = bnb._Search(inst, "total", lo, hi, 10**9, None, time.monotonic() + 3600, None, None, None)
    s.set_duals(*lp_duals(inst, lo, hi, 10.0))
    return s


def _range(text: str) -> tuple[int, int]:
    """``LO-HI`` with ``1 ≤ LO ≤ HI`` (argparse turns the error into one line, exit 2)."""
    try:
        lo, hi = (int(x) for x in text.split("-"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not LO-HI (two integers)") from None
    if not 1 <= lo <= hi:
        raise argparse.ArgumentTypeError(f"{text!r}: need 1 <= LO <= HI")
    return lo, hi


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=20, help="instances")
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--memory", type=_range, default=(40, 60), metavar="LO-HI")
    ap.add_argument("--max-response", type=int, default=10)
    ap.add_argument("--split", action="store_true", help="one thread against two (compiled)")
    args = ap.parse_args(argv)
    if not bnbfast.available():
        print("Numba is not installed (pip install kvopt[fast])", file=sys.stderr)
        return 1
    if args.k < 1 or args.n < 1 or args.max_response < 1:
        ap.error("--k, --n and --max-response must be at least 1")
    insts = throughput_instances(args.k, args.n, args.memory, args.max_response)
    if args.split:
        return _split(insts)
    sums = [0.0, 0.0]
    same = 0
    for i, inst in enumerate(insts):
        py = _search(inst)
        t = time.perf_counter()
        py.run()
        t_py = time.perf_counter() - t
        fast = _search(inst)
        t = time.perf_counter()
        bnbfast.run_compiled(fast, bnb.MEMO_LIMIT, bnb._CHECK_EVERY)
        t_fast = time.perf_counter() - t
        ok = (py.nodes, py.best, py.best_starts) == (fast.nodes, fast.best, fast.best_starts)
        same += ok
        print(
            f"{i:3d} M={inst.memory:3d} Opt {py.best:5d} nodes {py.nodes:8d} / {fast.nodes:8d} "
            f"python {t_py:7.3f} s compiled {t_fast:7.3f} s {'same' if ok else 'DIFFERENT'}",
            flush=True,
        )
        if i:
            sums[0] += t_py
            sums[1] += t_fast
    print(
        f"same tree on {same}/{len(insts)}; instances 2-{len(insts)}: python {sums[0]:.2f} s, "
        f"compiled {sums[1]:.2f} s ({sums[0] / max(sums[1], 1e-9):.0f}x)"
    )
    return 0 if same == len(insts) else 1


def _split(insts) -> int:
    """One thread against two, compiled: the same optimum, and the seconds of each."""
    sums = [0.0, 0.0]
    same = 0
    for i, inst in enumerate(insts):
        runs = []
        for threads in (1, 2):
            s = _search(inst)
            t = time.perf_counter()
            done = bnbfast.run_compiled(s, bnb.MEMO_LIMIT, bnb._CHECK_EVERY, threads=threads)
            runs.append((done, s.best, s.nodes, time.perf_counter() - t))
        ok = runs[0][:2] == runs[1][:2] == (True, runs[0][1])
        same += ok
        print(
            f"{i:3d} M={inst.memory:3d} Opt {runs[0][1]:5d} / {runs[1][1]:5d} nodes "
            f"{runs[0][2]:8d} / {runs[1][2]:8d}  1 thread {runs[0][3]:7.3f} s  2 threads "
            f"{runs[1][3]:7.3f} s {'same optimum' if ok else 'DIFFERENT'}",
            flush=True,
        )
        if i:
            sums[0] += runs[0][3]
            sums[1] += runs[1][3]
    print(
        f"same optimum on {same}/{len(insts)}; instances 2-{len(insts)}: 1 thread "
        f"{sums[0]:.2f} s, 2 threads {sums[1]:.2f} s ({sums[0] / max(sums[1], 1e-9):.1f}x)"
    )
    return 0 if same == len(insts) else 1


if __name__ == "__main__":
    sys.exit(main())
