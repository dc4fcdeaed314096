"""Benchmark of the exact solvers: ``python benchmarks/exact.py`` (issues 3 and 11, ``models/``).

A fixed set — ``kvopt.generators.generate("random", seed, n=n, memory=6n,
max_response=n)`` (mixed regimes, shares 1:1:1) for n = 12, 15, 18, 20, 22,
25, 30 and seeds 1, 2 — solved with a time limit (default 60 s) on 2 threads
with kvopt's default (``solve(..., solver="auto")``) and with round 1's
default (``solver="race"``: heuristic, LP windows, HiGHS racing CP-SAT).
Other modes: ``textbook`` (the time-indexed IP of SPEC §5 over the horizon
``max a + Σ o``, one binary per job and start, no rounded rows, no warm
start, HiGHS with default options), ``highs``, ``highs1``, ``cpsat``, ``bnb``,
``python-bnb`` (``bnb`` with the Python search, as without Numba: the compiled
search's baseline, ``models/bnb.md`` §7), ``ladder`` (``bnb`` climbing the ladder alone,
§8).
Prints a table (status, seconds, objective, bound per mode; the area and rank bounds
(``models/orders.md`` §9); the root LP —
the time-indexed LP of ``kvopt bound --lp`` — and the root gap
``(best objective − root LP) / best objective``) and the count proven optimal.
``--quick`` runs n ≤ 18 with a 20 s limit.

``--throughput K`` measures instead what search and validation need: ``K``
random mixed instances with n = 10 (``generate("random", 1000 + k, n=10,
memory=M, max_response=10)``, ``M`` uniform in 40–60 from a fixed seed),
each solved by the default with ``--threads``; prints the median and the
largest ``seconds`` as ``solve`` reports them, and how many were proven.
``--n`` changes the size (``M`` uniform in 4n–6n, responses ≤ n);
``--memory LO-HI`` and ``--max-response R`` set the family explicitly (issue
17's n = 12 family: ``--n 12 --memory 40-60 --max-response 10``).
``--typed K`` runs the table on ``K`` typed instances instead (those of
``benchmarks/relaxations.py --typed K``; the ``seed`` column is their index).
``--deterministic`` solves as the search does (``deterministic=True``).
``--variant FILE`` measures a variant of ``auto``'s routes (a JSON file of edits,
:func:`kvopt.exact.portfolio.load_variant`; ``benchmarks/variants/`` holds the rejected ones).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import replace

import numpy as np

from kvopt.bound import area_bound
from kvopt.errors import InputError, SolverError
from kvopt.exact import lp_bound, solve
from kvopt.exact.backend import Limits, Problem
from kvopt.exact.backends.highs import Highs
from kvopt.exact.bnb import BranchAndBound
from kvopt.exact.bounds.conflict import rank_bound
from kvopt.exact.common import finish, start_windows
from kvopt.exact.portfolio import Portfolio, load_variant
from kvopt.generators import generate

SIZES = (12, 15, 18, 20, 22, 25, 30)
SEEDS = (1, 2)


def instance(n: int, seed: int):
    return generate("random", seed, n=n, memory=6 * n, max_response=n)


def textbook(inst, time_limit: float, threads: int):
    """SPEC §5 as written: horizon max a + Σ o, no tightening, no warm start, HiGHS defaults."""
    t0 = time.monotonic()
    lo, hi = start_windows(inst, "total")
    raw = Highs(aggregate=False, cuts=(), defaults=True).solve(
        Problem(inst, "total", lo, hi), Limits(time_limit=time_limit, threads=threads)
    )
    return finish(
        inst,
        "total",
        raw.starts,
        raw.bound,
        seconds=time.monotonic() - t0,
        solver="highs-textbook",
        solver_version=raw.solver_version,
        native_status=raw.native_status,
    )


DETERMINISTIC = False


#: the portfolio every mode runs with (``--variant FILE`` replaces its routes)
PORTFOLIO = Portfolio()


def _solve(inst, solver: str, tl: float, th: int, portfolio: Portfolio | None = None):
    return solve(
        inst,
        solver=solver,
        time_limit=tl,
        threads=th,
        deterministic=DETERMINISTIC,
        portfolio=portfolio or PORTFOLIO,
    )


def _python_bnb(inst, tl: float, th: int):
    """``--solver bnb`` with the Python search (as without Numba): the compiled one's baseline."""
    python = replace(PORTFOLIO, backends={"bnb": BranchAndBound(compiled=False)}, compiled=False)
    return _solve(inst, "bnb", tl, th, python)


def _ladder(inst, tl: float, th: int):
    """``--solver bnb`` climbing the ladder alone (``BranchAndBound(ladder=True)``,
    ``models/bnb.md`` §8): its proven thresholds from the heuristic's schedule up."""
    return _solve(
        inst, "bnb", tl, th, replace(PORTFOLIO, backends={"bnb": BranchAndBound(ladder=True)})
    )


MODES = {
    "default": lambda inst, tl, th: _solve(inst, "auto", tl, th),
    "race": lambda inst, tl, th: _solve(inst, "race", tl, th),
    "bnb": lambda inst, tl, th: _solve(inst, "bnb", tl, th),
    "python-bnb": _python_bnb,
    "ladder": _ladder,
    "textbook": textbook,
    "highs": lambda inst, tl, th: _solve(inst, "highs", tl, th),
    "highs1": lambda inst, tl, th: _solve(inst, "highs", tl, 1),
    "cpsat": lambda inst, tl, th: _solve(inst, "cpsat", tl, th),
}


def throughput_instances(k: int, n: int = 10, memory=None, max_response=None):
    """The throughput set: ``k`` random mixed instances, M uniform in ``memory`` (default
    4n–6n), responses ≤ ``max_response`` (default n)."""
    lo, hi = memory or (4 * n, 6 * n)
    rng = np.random.default_rng(1000)
    out = []
    for j in range(k):
        M = int(rng.integers(lo, hi + 1))
        out.append(generate("random", 1000 + j, n=n, memory=M, max_response=max_response or n))
    return out


def _nodes(res) -> str:
    """The branch and bound's node count in a result's statistics (``-`` when it did not run)."""
    st = res.stats or {}
    for v in [st, *(x for x in st.values() if isinstance(x, dict))]:
        if "nodes" in v and "memo" in v:
            return str(v["nodes"])
    return "-"


def throughput(
    k: int, modes, tl: float, threads: int, n: int = 10, memory=None, max_response=None,
    per_instance: bool = False,
) -> int:  # fmt: skip
    lo, hi = memory or (4 * n, 6 * n)
    print(
        f"throughput: {k} random mixed instances, n = {n}, M in {lo}-{hi}, "
        f"responses <= {max_response or n}; time limit {tl:g} s, {threads} thread(s); "
        f"machine load at start {open('/proc/loadavg').read().split()[0]}"
    )
    insts = throughput_instances(k, n, memory, max_response)
    secs = {m: [] for m in modes}
    proven = dict.fromkeys(modes, 0)
    nodes = dict.fromkeys(modes, 0)  # the branch and bound's nodes, summed (when it ran)
    for j, inst in enumerate(insts):  # modes interleaved, so that load changes hit them alike
        cells = []
        for m in modes:
            res = MODES[m](inst, tl, threads)
            secs[m].append(res.seconds)
            proven[m] += res.optimal
            nodes[m] += int(_nodes(res)) if _nodes(res) != "-" else 0
            cells.append(f"{m} {res.status.value:<8} {res.seconds:6.2f} s nodes {_nodes(res)}")
        if per_instance:
            print(f"{j:3d} M={inst.memory:3d} | " + " | ".join(cells), flush=True)
    for m in modes:
        print(
            f"{m:>10}: median {np.median(secs[m]):.3f} s, max {max(secs[m]):.3f} s, "
            f"mean {np.mean(secs[m]):.3f} s, proven {proven[m]}/{k}"
            + (f", branch-and-bound nodes {nodes[m]:,}" if nodes[m] else ""),
            flush=True,
        )
    print(f"machine load at end {open('/proc/loadavg').read().split()[0]}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n <= 18, 20 s limit")
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--modes", default="default,race", help=f"comma-separated, from {', '.join(MODES)}"
    )
    ap.add_argument("--sizes", default=None, help="comma-separated n values")
    ap.add_argument("--seeds", default=None, help="comma-separated seeds (default 1,2)")
    ap.add_argument(
        "--throughput",
        type=int,
        default=0,
        metavar="K",
        help="instead of the table: median/max seconds over K random n = 10 instances",
    )
    ap.add_argument(
        "--typed", type=int, default=0, metavar="K", help="K typed instances (relaxations.py)"
    )
    ap.add_argument("--n", type=int, default=10, help="n of the --throughput instances")
    ap.add_argument("--memory", default=None, metavar="LO-HI", help="M range (default 4n-6n)")
    ap.add_argument("--max-response", type=int, default=None, help="default n")
    ap.add_argument("--deterministic", action="store_true", help="solve(deterministic=True)")
    ap.add_argument(
        "--variant",
        metavar="FILE",
        default=None,
        help="a variant of the routes (kvopt.exact.portfolio.load_variant: JSON edits of "
        "rows' plans), e.g. benchmarks/variants/split-ils.json, to measure it",
    )
    ap.add_argument(
        "--per-instance",
        action="store_true",
        help="--throughput: a line per instance (status, seconds, branch-and-bound nodes)",
    )
    args = ap.parse_args(argv)
    global DETERMINISTIC, PORTFOLIO
    if args.variant:
        try:
            PORTFOLIO = Portfolio(routes=load_variant(args.variant))
        except InputError as e:
            ap.error(f"--variant: {e}")
        print(f"routes: {args.variant}", file=sys.stderr)
    DETERMINISTIC = args.deterministic
    modes = args.modes.split(",")
    for m in modes:
        if m not in MODES:
            ap.error(f"unknown mode {m!r}")
    if args.throughput:
        memory = tuple(int(x) for x in args.memory.split("-")) if args.memory else None
        return throughput(
            args.throughput,
            modes,
            args.time_limit or 60.0,
            args.threads,
            args.n,
            memory,
            args.max_response,
            args.per_instance,
        )
    sizes = (
        [int(x) for x in args.sizes.split(",")]
        if args.sizes
        else ([n for n in SIZES if n <= 18] if args.quick else list(SIZES))
    )
    seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else list(SEEDS)
    tl = args.time_limit or (20.0 if args.quick else 60.0)
    proven = dict.fromkeys(modes, 0)
    total_s = dict.fromkeys(modes, 0.0)
    head = (
        f"{'n':>3} {'seed':>4} {'M':>4} {'area':>5} {'rank':>5} {'rootLP':>7} {'rgap%':>5} "
        + " ".join(
            f"| {m[:8]:<8} {'status':<8} {'sec':>5} {'obj':>5} {'bound':>5} {'gap%':>5}"
            for m in modes
        )
    )
    print(
        f"time limit {tl:g} s, {args.threads} threads; machine load at start "
        f"{open('/proc/loadavg').read().split()[0]}"
    )
    print(head)
    print("-" * len(head))
    if args.typed:
        from relaxations import typed_instances

        cases = [(inst.n, j, inst) for j, inst in enumerate(typed_instances(args.typed))]
    else:
        cases = [(n, seed, instance(n, seed)) for n in sizes for seed in seeds]
    for n, seed, inst in cases:
        try:
            root = lp_bound(inst)
        except SolverError:  # the root LP did not end in time (n = 60): the column is blank
            root = math.nan
        cells = []
        best = None
        for m in modes:
            res = MODES[m](inst, tl, args.threads)
            proven[m] += res.optimal
            total_s[m] += res.seconds
            if res.objective is not None:
                best = res.objective if best is None else min(best, res.objective)
            gap = "-" if res.gap is None else f"{100 * res.gap:.1f}"
            cells.append(
                f"| {'':<8} {res.status.value:<8} {res.seconds:5.1f} "
                f"{str(res.objective):>5} {str(res.bound):>5} {gap:>5}"
            )
        rgap = "-" if not best or math.isnan(root) else f"{100 * (best - root) / best:.1f}"
        print(
            f"{n:>3} {seed:>4} {inst.memory:>4} {area_bound(inst):>5} {rank_bound(inst).value:>5} "
            f"{root:7.1f} {rgap:>5} " + " ".join(cells),
            flush=True,
        )
    count = len(cases)
    for m in modes:
        print(f"{m}: {proven[m]}/{count} proven optimal, {total_s[m]:.0f} s in total")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    np.set_printoptions(linewidth=120)
    raise SystemExit(main())
