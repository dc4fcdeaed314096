"""``kvopt demo`` — the main job on bundled data (SPEC §4): parses the options, runs
:func:`kvopt.demo.run_demo` (which does the work and returns a typed
:class:`~kvopt.demo.DemoReport`) and prints the report as text or JSON.

The text: the bundled instances (regenerated from their seeds, validated, bounded), each
policy's ratio to the certified Opt on the small ones, the trace samples' ``ALG/LB`` and
``ALG/UB``, the adversarial search's best record, the quick validation, and where each
picture is and what it shows (``--out``, default ``kvopt-demo/``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from .common import emit_json, positive_float


def add_parser(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="the main job on bundled data (docs/getting-started.md explains each output)",
        description="The main job on the bundled data: regenerate, check and bound the bundled "
        "instances; run every policy against the proved Opt on the small ones and against the "
        "bounds LB and UB on the trace samples; a short adversarial search on fcfs; quick "
        "validations of two claims; pictures in --out (docs/getting-started.md explains each "
        "output).",
    )
    p.add_argument(
        "--instances",
        default=None,
        metavar="DIR",
        help="folder of bundled instances (default: instances/)",
    )
    p.add_argument(
        "--out",
        default="kvopt-demo",
        metavar="DIR",
        help="folder for the pictures (default: kvopt-demo)",
    )
    p.add_argument(
        "--time-limit",
        type=positive_float("--time-limit"),
        default=60.0,
        metavar="S",
        help="seconds per exact solve (default 60)",
    )
    p.add_argument("--search-budget", type=int, default=40, metavar="N",
                   help="evaluations of the demo search (default 40)")  # fmt: skip
    p.add_argument("--validate-budget", type=int, default=24, metavar="N",
                   help="evaluations per validated claim (default 24)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _table(rows: list[list[str]], header: list[str]) -> str:
    from ..texttable import Column, render_table

    cols = [Column(str(h), align=">" if k else "<") for k, h in enumerate(header)]
    return "\n".join(render_table(cols, [[str(c) for c in r] for r in rows], rule="columns"))


_ABBREV = {
    "prop1-": "p1:",
    "-case": "c",
    "two-point": "2pt",
    "identical-prompt": "ident",
    "prompt-heavy": "p-hv",
    "response-heavy": "r-hv",
    "arrivals": "arriv",
}


def _short(rel: str) -> str:
    """A short column label for a bundled file (the legend maps it back)."""
    stem = re.sub(r"-(n\d+|M\d+)", "", Path(rel).stem)
    for long, short in _ABBREV.items():
        stem = stem.replace(long, short)
    return stem[:9]


def _policy_matrix(comps) -> tuple[list[str], list[list[str]]]:
    """One row per policy: its ratio to Opt on each small bundled instance."""
    from ..policy import POLICIES

    header = ["policy"] + [_short(rel) for rel, _ in comps]
    rows = []
    for name in POLICIES:
        line = [name]
        for _, ic in comps:
            r = ic.row(name)
            if not r.applicable:
                line.append("n/a")
            elif r.ratio_opt is not None:
                line.append(f"{r.ratio_opt:.3f}")
            else:
                line.append(f"<={r.ratio_optimistic:.2f}")
        rows.append(line)
    return header, rows


def _trace_table(comps, samples) -> str:
    """One row per policy; per trace sample its ALG/LB and ALG/UB (n/a: outside the class)."""
    from ..policy import POLICIES

    header = ["policy"]
    for rel, _ in comps:
        header += [f"{_short(rel)} /LB", f"{_short(rel)} /UB"]
    rows = []
    for name in POLICIES:
        line = [name]
        for _, ic in comps:
            r = ic.row(name)
            line += [f"{r.ratio_lb:.3f}", f"{r.ratio_ub:.3f}"] if r.applicable else ["n/a"] * 2
        rows.append(line)
    notes = []
    for s in samples:
        info = s.to_dict()
        m = info["memory"]
        binds = (
            f"{info['peak_on_arrival'] / m:.1f} x M: memory binds"
            if info["memory_binds"]
            else "<= M: memory never binds, every request can start on arrival"
        )
        meta = info["meta"]
        arrivals = (
            f"arrivals from its timestamps at {meta['rounds_per_second']:g} rounds/s"
            if meta.get("arrivals")
            else "no arrivals"
        )
        notes.append(
            f"{_short(info['file'])} = {info['file']}: {info['n']} requests of "
            f"{meta.get('trace', 'a trace')} ({arrivals}), M={m}; peak demand "
            f"{info['peak_all_at_once']} with all requests at once, {info['peak_on_arrival']} "
            f"with each started on arrival ({binds})."
        )
        opt = f"exact Opt {info['exact_opt']}" if info["exact_opt"] else "LB = UB = Opt"
        notes.append(
            f"  LB {info['lb']} ({info['lb_name']}); UB {info['ub']} ({info['ub_name']}); {opt}."
        )
    return _table(rows, header) + "\n\n" + "\n".join(notes)


def run(args) -> int:
    from ..demo import run_demo

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    report = run_demo(
        args.instances,
        args.out,
        time_limit=args.time_limit,
        search_budget=args.search_budget,
        validate_budget=args.validate_budget,
        say=say,
    )
    ok = report.all_reproducible
    if args.json:
        emit_json(report.to_dict())
        return 0 if ok else 1
    _print_report(report)
    if not ok:
        print("Some bundled instances differ from their regenerated versions.", file=sys.stderr)
    return 0 if ok else 1


def _print_report(report) -> None:
    """The text of ``kvopt demo``."""
    rows = []
    for b in report.instances:
        bd, rc = b.bounds, b.instance.regime_counts()
        rows.append([b.file, b.instance.n, b.instance.memory,
                     f"{rc['large']}/{rc['prompt-heavy']}/{rc['response-heavy']}",
                     {True: "yes", False: "NO", None: "hand"}[b.reproducible], bd.area, bd.processing,
                     f"{bd.best} ({bd.best_name})", bd.makespan_best])  # fmt: skip
    print(f"Bundled instances in {report.folder}: regenerated from their seeds, validated, "
          "bounded.\n")  # fmt: skip
    print(_table(rows, ["instance", "n", "M", "L/P/R", "regen", "area", "processing",
                        "best Opt bound", "makespan"]))  # fmt: skip
    print(
        "\nL/P/R = large / small prompt-heavy / small response-heavy jobs (main paper §3, Λ = M/4)."
        + (
            "\nregen hand: made by hand, not by a generator (its folder's README gives its provenance)."
            if any(b.reproducible is None for b in report.instances)
            else ""
        )
    )
    comps = report.exact
    header, rows = _policy_matrix(comps)
    opt_row = ["Opt (certified)"]
    for _, ic in comps:
        opt_row.append(str(ic.opt) if ic.opt is not None else "-")
    print(f"\nTotal completion time of each policy divided by the certified Opt "
          f"({len(comps)} small bundled instances)")  # fmt: skip
    print(
        '("<=x": no exact Opt, ratio to the best lower bound; n/a: outside the policy\'s class)\n'
    )
    print(_table([opt_row, *rows], header))
    print("\ncolumns: " + "; ".join(f"{_short(rel)} = {rel}" for rel, _ in comps))
    w = report.worst
    if w is not None:
        print(
            f"\nWorst ratio to Opt: {w.policy} on {w.file}: {w.ratio_opt:.3f} "
            f"({w.row.total_completion} vs Opt {w.comparison.opt})."
        )
        if w.picture:
            print(f"Picture of {w.policy} beside Opt: {w.picture}")
    traces = report.trace_comparisons
    if traces:
        print("\nRequest traces (too large for the exact models): each policy's total "
              "completion time / LB and / UB")  # fmt: skip
        print("(LB: best lower bound, SPEC §2; UB: best checked schedule, the policies' and the "
              "cheap clairvoyant kill-free ones; ALG/LB >= ALG/Opt >= ALG/UB)\n")  # fmt: skip
        print(_trace_table(traces, report.traces))
    proved = sum(1 for _, ic in comps if ic.opt is not None)
    print(
        f"\nEvery schedule above passed the independent checker; {proved} of {len(comps)} exact "
        "optima are proved (bound = objective)."
    )
    s = report.search
    print(
        f"\nAdversarial search (fcfs, anneal, seed 1, {s.evaluations} evaluations, "
        f"{s.exact_solves} exact solves, {s.seconds:.0f}s): best certified ratio "
        f"{s.ratio_certified:.3f} on n={s.n}, M={s.memory} ({s.opt_status} Opt); "
        f"record {s.record} re-checked: {'valid' if s.record_valid else 'INVALID'}."
    )
    print("\nQuick validation of two claims (kvopt validate --quick):")
    for c in report.validation.claims:
        print(f"  {c.id}: {c.verdict} — {c.text}")
    print("\nPictures:")
    for p in report.pictures:
        print(f"  {p.path}: {p.shows}.")
