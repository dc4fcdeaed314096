"""The plain aggregated time-indexed MIP on typed records, against ``kvopt solve`` (issue 33 item 3).

    python benchmarks/typed_plain.py [RECORD-OR-INSTANCE …] [--seconds 60] [--threads 2]
        [--variant plain|cuts|ubwin|warm|fix|…] [--solve] [--json OUT]

Without files: the seven typed records of issue 33 (``instances/worst/typed/``: mcsf,
greedy-area, sps, serial, fcfs, mc-benchmark, sjf).  For each file and each variant
(comma-separated, run interleaved file by file so that machine load hits them alike)
prints one line: the variant, the best schedule's value, HiGHS's proven bound (rounded up)
and the wall seconds.

The **plain** model (``models/time-indexed.md`` §9.9) is the aggregated model of
:func:`kvopt.exact.backends.highs_matrix.build_matrix` with nothing of kvopt's around it:
integer ``x[type, t]`` = copies of the type started at ``t``, one count row per type, one
memory row per round, the SPEC §1 horizon ``max a + Σ o``, no rounded rows (``cuts=()``),
no warm start, no windows from an incumbent, handed to HiGHS with ``threads`` threads and an
absolute gap below 1.  The other variants add one ingredient each (``+`` joins several,
e.g. ``ubwin+warm``):

* ``cuts``  — the rounded rows ``k = 1`` (kvopt's default, §4.2);
* ``ubwin`` — the start windows of the heuristic's schedule (``start_windows(…, ub)``);
* ``warm``  — the heuristic's schedule as HiGHS's start;
* ``fix``   — ``ubwin``, then reduced-cost fixing (``lagrange_fix``, exact);
* ``lpwin`` — ``ubwin``, then the LP windows of the other jobs (``lp_windows``) and ``fix``.
* ``cutoff`` — the heuristic's value as HiGHS's ``objective_bound`` (a cut-off);
* ``noheur`` — HiGHS's primal heuristics off (``mip_heuristic_effort = 0``);
* ``nosym``  — HiGHS's symmetry detection off (the aggregation leaves no copies to swap);
* ``perjob`` — one binary column per job and start (no aggregation: the copies' symmetry
  left to HiGHS);
* ``blocks`` (alone) — not HiGHS: the time-block column generation's bound as ``auto``'s
  ``blocks`` phase computes it, for ``--seconds`` of wall time.

``--record-warm`` gives every run the record's clairvoyant schedule when it is better than
the heuristic's (as ``kvopt certify`` does: warm start, and the windows of its value).
``--cpu 20,40,60`` measures the raw variants in CPU seconds of this process instead of
wall time (preparation included; HiGHS's branch and bound runs in one thread, so the load
of a shared machine does not move these figures): the bound proved at each mark, the run
ending at the last (``--seconds`` then only caps the wall time).
``--solve`` adds a line for ``kvopt solve`` (``auto``, the same time limit and threads);
``--routes`` (comma-separated) adds ``solve()`` with variants of the typed rows (the
``portfolio=`` of ``solve``, never a patched module), one ingredient off each:

* ``auto``       — the routes as they are;
* ``rows``       — HiGHS with the rounded rows ``k = 1`` (the ``highs`` backend, the route
  before issue 33) instead of the plain aggregated model;
* ``noblocks``   — HiGHS alone on every thread, no block bound beside it;
* ``nofix``      — no LP windows and no reduced-cost fixing before the plan (the windows of
  the heuristic's schedule only);
* ``duo``        — (two threads) HiGHS on the plain model races HiGHS with the rounded rows;
* ``trio``       — both HiGHS models and the block bound at once;
* ``blocks-plain`` — the block bound beside HiGHS on the plain model.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

from kvopt.exact import solve
from kvopt.exact.backends.highs_glue import highspy_solution, run_highs, to_highs
from kvopt.exact.backends.highs_matrix import build_matrix, lp_windows, warm_values
from kvopt.exact.bounds.relax import lagrange_fix
from kvopt.exact.common import start_windows, value_of
from kvopt.exact.heuristic import heuristic_starts
from kvopt.exact.portfolio import Phase, Portfolio
from kvopt.exact.portfolio.routes import ROUTES
from kvopt.instance import Instance
from kvopt.schedule import Schedule

RECORDS = ("mcsf", "greedy-area", "sps", "serial", "fcfs", "mc-benchmark", "sjf")
TYPED = Path(__file__).resolve().parent.parent / "instances" / "worst" / "typed"
INGREDIENTS = (
    "plain",
    "cuts",
    "ubwin",
    "warm",
    "fix",
    "lpwin",
    "cutoff",
    "noheur",
    "nosym",
    "perjob",
)
ROUTE_VARIANTS = ("auto", "rows", "noblocks", "nofix", "duo", "trio", "blocks-plain")
TYPED_ROWS = ("typed-race", "typed-serial-blocks", "typed-serial")


def portfolio(variant: str) -> Portfolio:
    """The default routes with the typed rows changed as ``variant`` says (module doc)."""
    from dataclasses import replace

    from kvopt.exact.portfolio import Race

    def edit(route):
        if route.name not in TYPED_ROWS:
            return route
        if variant == "nofix":
            return replace(route, lp_windows=False)
        if variant == "rows":
            if isinstance(route.plan, Race):
                plan = replace(
                    route.plan,
                    lead=_rows(route.plan.lead),
                    others=tuple(_rows(p) for p in route.plan.others),
                )
            else:
                plan = tuple(_rows(p) for p in route.plan)
            return replace(route, plan=plan)
        if variant == "noblocks":
            return replace(route, plan=(Phase("highs-plain"),))
        if route.name != "typed-race":
            return route
        if variant == "duo":
            return replace(
                route,
                plan=Race(Phase("highs-plain", threads="one"), (Phase("highs", threads="rest"),)),
            )
        if variant == "trio":
            return replace(
                route,
                plan=Race(
                    Phase("blocks", threads="one"),
                    (Phase("highs-plain", threads="one"), Phase("highs", threads="one")),
                    lead_ends=False,
                ),
            )
        if variant == "blocks-plain":
            return replace(
                route,
                plan=Race(
                    Phase("blocks", threads="one"),
                    (Phase("highs-plain", threads="rest"),),
                    lead_ends=False,
                ),
            )
        return route

    if variant not in ROUTE_VARIANTS:
        raise SystemExit(f"unknown route variant {variant!r}; known: {ROUTE_VARIANTS}")
    return Portfolio(routes=tuple(edit(r) for r in ROUTES))


def _rows(phase: Phase) -> Phase:
    from dataclasses import replace

    return replace(phase, backend="highs") if phase.backend == "highs-plain" else phase


def load(path: Path) -> tuple[Instance, np.ndarray | None]:
    """The instance of a record or instance file, and the starts of the record's clairvoyant
    schedule (``None`` for an instance, or when that schedule kills)."""
    data = json.loads(path.read_text())
    if data.get("format") != "kvopt.record":
        return Instance.from_dict(data), None
    inst = Instance.from_dict(data["instance"])
    sched = Schedule.from_dict(data["opt_schedule"])
    if any(not a.completed for a in sched.attempts):
        return inst, None
    starts = np.zeros(inst.n, dtype=np.int64)
    for a in sched.attempts:
        starts[a.job] = a.start
    return inst, starts


def run_variant(
    inst: Instance,
    variant: str,
    seconds: float,
    threads: int,
    seed: int,
    known=None,
    cpu: tuple[float, ...] = (),
) -> dict:
    """One HiGHS run of the aggregated model with the ingredients of ``variant``.

    ``cpu`` (ascending CPU seconds of this process, preparation included): the run ends at
    the last of them instead of at ``seconds`` of wall time (which then only caps it), and
    the bound HiGHS had proved at each is reported (``cpu_bounds``) — a measure that the
    load of a shared machine does not move (HiGHS's branch and bound runs in one thread).
    """
    cpu0 = time.process_time()
    if variant == "blocks":
        return run_blocks(inst, seconds, seed, known, cpu0)
    parts = set(variant.split("+")) - {"plain"}
    unknown = parts - set(INGREDIENTS)
    if unknown:
        raise SystemExit(f"unknown ingredient(s) {sorted(unknown)}; known: {INGREDIENTS}")
    t0 = time.monotonic()
    warm = ub = None
    if parts & {"ubwin", "warm", "fix", "lpwin", "cutoff"}:
        warm = heuristic_starts(inst, "total", seed=seed, seconds=min(0.5, 0.05 * seconds))
        if known is not None and value_of(inst, known, "total") < value_of(inst, warm, "total"):
            warm = known
        ub = value_of(inst, warm, "total")
    lo, hi = start_windows(inst, "total", ub if parts & {"ubwin", "fix", "lpwin"} else None)
    if "lpwin" in parts:
        hi = lp_windows(inst, ub, lo, hi, seconds=min(0.1 * seconds, 10.0))
    if parts & {"fix", "lpwin"}:
        lo, hi, _ = lagrange_fix(
            inst, lo, hi, ub, cuts=(1,) if "cuts" in parts else (), time_limit=10.0
        )
    model = build_matrix(
        inst, "total", lo, hi, cuts=(1,) if "cuts" in parts else (), aggregate="perjob" not in parts
    )
    h = to_highs(model)
    if "warm" in parts:
        xv = warm_values(model, warm)
        if xv is not None:
            h.setSolution(highspy_solution(xv))
    if "noheur" in parts:
        h.setOptionValue("mip_heuristic_effort", 0.0)
    if "nosym" in parts:
        h.setOptionValue("mip_detect_symmetry", False)
    if "cutoff" in parts:
        h.setOptionValue("objective_bound", float(ub) + 0.5)
    left = max(seconds - (time.monotonic() - t0), 0.05)
    stop = threading.Event()
    marks = list(cpu)
    seen: list[float | None] = []
    last = [-math.inf]

    def monitor(_value, bound) -> None:
        if bound is not None and np.isfinite(bound):
            last[0] = max(last[0], float(bound))
        used = time.process_time() - cpu0
        while marks and used >= marks[0]:
            marks.pop(0)
            seen.append(last[0])
        if cpu and not marks:
            stop.set()

    native, _, _ = run_highs(
        h, time_limit=left, threads=threads, seed=seed, gap=0.0, stop=stop, monitor=monitor
    )
    info = h.getInfo()
    value = None
    if info.primal_solution_status == 2:
        value = int(round(info.objective_function_value))
    if ub is not None and (value is None or ub < value):
        value = ub  # the heuristic's schedule stays an incumbent
    bound = info.mip_dual_bound
    bound = int(math.ceil(bound - 1e-6)) if np.isfinite(bound) else None
    if native == "Optimal" and value is not None:
        bound = value
    cpu_bounds = [None if not np.isfinite(b) else int(math.ceil(b - 1e-6)) for b in seen]
    cpu_bounds += [bound] * (len(cpu) - len(cpu_bounds))  # proved or stopped before them
    return {
        "cpu_bounds": cpu_bounds,
        "cpu_seconds": round(time.process_time() - cpu0, 1),
        "variant": variant,
        "value": value,
        "bound": bound,
        "status": native,
        "columns": model.n_cols,
        "seconds": round(time.monotonic() - t0, 1),
    }


def run_blocks(inst: Instance, seconds: float, seed: int, known, cpu0: float) -> dict:
    """The block bound as ``auto``'s ``blocks`` phase runs it: blocks of half the largest
    response, over the windows of ``solve()`` (the incumbent's, the LP windows, reduced-cost
    fixing), for ``seconds`` of wall time in all."""
    from kvopt.exact.bounds.blocks import block_bound, block_length
    from kvopt.exact.solve import tightened

    t0 = time.monotonic()
    warm = heuristic_starts(inst, "total", seed=seed, seconds=min(0.5, 0.05 * seconds))
    if known is not None and value_of(inst, known, "total") < value_of(inst, warm, "total"):
        warm = known
    ub = value_of(inst, warm, "total")
    lo, hi = start_windows(inst, "total", ub)
    lo, hi = tightened(inst, lo, hi, ub, min(0.1 * seconds, 10.0))
    left = max(seconds - (time.monotonic() - t0), 0.05)
    bound, _ = block_bound(inst, ub, block_length(inst, 0.5), left, starts=warm, windows=(lo, hi))
    return {
        "cpu_bounds": [],
        "cpu_seconds": round(time.process_time() - cpu0, 1),
        "variant": "blocks",
        "value": ub,
        "bound": int(math.ceil(bound - 1e-6)) if np.isfinite(bound) else None,
        "status": "block bound",
        "columns": None,
        "seconds": round(time.monotonic() - t0, 1),
    }


def run_solve(
    inst: Instance, variant: str, seconds: float, threads: int, seed: int, known=None
) -> dict:
    t0 = time.monotonic()
    warm = None if known is None else Schedule.from_starts(inst, known, producer="record")
    res = solve(
        inst,
        time_limit=seconds,
        threads=threads,
        seed=seed,
        warm_start=warm,
        portfolio=portfolio(variant),
    )
    return {
        "variant": f"solve:{variant} ({res.route.name if res.route else '-'})",
        "value": res.objective,
        "bound": res.bound,
        "status": res.status.value,
        "columns": None,
        "seconds": round(time.monotonic() - t0, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variant", default="plain", help="comma-separated, e.g. plain,cuts; none")
    ap.add_argument("--solve", action="store_true", help="also run kvopt solve (auto)")
    ap.add_argument("--routes", default="", help="solve() variants, e.g. auto,rows,noblocks")
    ap.add_argument(
        "--record-warm",
        action="store_true",
        help="start from the record's clairvoyant schedule when better (as kvopt certify does)",
    )
    ap.add_argument(
        "--cpu",
        default="",
        help="comma-separated CPU seconds: the raw variants stop at the last and report the "
        "bound at each (--seconds then caps the wall time)",
    )
    ap.add_argument("--json", type=Path, help="append one JSON line per run")
    args = ap.parse_args()
    files = args.files or [TYPED / f"{r}.json" for r in RECORDS]
    variants = [v for v in args.variant.split(",") if v and v != "none"]
    cpu = tuple(sorted(float(c) for c in args.cpu.split(",") if c))
    print(f"# load {os.getloadavg()[0]:.2f}  seconds {args.seconds:g}  threads {args.threads}")
    print(f"{'record':16s} {'variant':28s} {'value':>8s} {'bound':>8s} {'gap%':>6s} {'s':>6s}")
    for path in files:
        inst, known = load(path)
        if not args.record_warm:
            known = None
        routes = [r for r in args.routes.split(",") if r] + (["auto"] if args.solve else [])
        jobs = [(run_variant, v) for v in variants] + [(run_solve, v) for v in routes]
        for fn, v in jobs:
            if fn is run_variant:
                r = fn(inst, v, args.seconds, args.threads, args.seed, known, cpu)
            else:
                r = fn(inst, v, args.seconds, args.threads, args.seed, known)
            gap = (
                f"{100 * (r['value'] - r['bound']) / r['value']:.2f}"
                if r["value"] and r["bound"] is not None
                else "-"
            )
            print(
                f"{path.stem:16s} {r['variant']:28s} {r['value']!s:>8s} {r['bound']!s:>8s} "
                f"{gap:>6s} {r['seconds']:6.1f}"
                + (f"  cpu {r['cpu_seconds']} bounds {r['cpu_bounds']}" if cpu else ""),
                flush=True,
            )
            if args.json:
                with args.json.open("a") as f:
                    f.write(json.dumps({"file": str(path), "load": os.getloadavg()[0], **r}) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
