"""``kvopt demo`` — the main job on bundled data.

1. Regenerates every bundled instance (``instances/``) from the generator,
   seed and parameters in its ``meta`` and checks it is identical (so every
   bundled file is reproducible) and valid.
2. Prints each instance's lower bounds (SPEC §2) as a table.
3. Solves every small bundled instance exactly (certified Opt), runs every
   policy of the registry that applies, and prints each policy's ratio to Opt.
   The trace samples (``instances/traces/``) are too large for the exact
   models: their table gives each policy's ``ALG/LB`` (LB: the best lower bound
   of SPEC §2, an upper estimate of ``ALG/Opt``) and ``ALG/UB`` (UB: the best
   checked schedule, the policies' and the cheap clairvoyant kill-free ones of
   :func:`kvopt.comparison.compare_instance`: a certified lower estimate), and
   says whether memory binds (peak demand with every request started on arrival
   above ``M``).  ``azure-window``: 1,000 consecutive requests of the Azure
   trace, where it does.
4. Saves the side-by-side picture (memory over time and Gantt chart) of the
   worst policy/instance pair found in 3 and Opt's schedule, and the bar chart
   of every policy's ratio per instance.
5. A short adversarial search (``kvopt search --policy fcfs``, anneal, seed 1):
   the best certified ratio found, its record (re-checked), the worst case
   beside Opt, and the best-so-far curve.
6. A quick validation of two claims (``greedy-area``: a ratio claim with a
   per-instance bound; ``single-priority``: Proposition 1's √L growth), with
   the report and its plots.

Every picture goes to ``--out`` (default ``kvopt-demo/``); the closing lines
say where each one is and what it shows.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ..bound import lower_bounds
from ..generators import generate
from ..instance import Instance, load_instance
from .common import emit_json, positive_float


def bundled_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "instances"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="the main job on bundled data (see README)",
        description="Regenerate and check the bundled instances, print their bounds.",
    )
    p.add_argument(
        "--instances", default=None, help="folder of bundled instances (default: instances/)"
    )
    p.add_argument(
        "--out", default="kvopt-demo", help="folder for the pictures (default: kvopt-demo)"
    )
    p.add_argument(
        "--time-limit",
        type=positive_float("--time-limit"),
        default=60.0,
        help="seconds per exact solve (default 60)",
    )
    p.add_argument("--search-budget", type=int, default=40, help="evaluations of the demo search")
    p.add_argument(
        "--validate-budget", type=int, default=24, help="evaluations per validated claim"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _bundled(folder: Path) -> list[tuple[str, Instance]]:
    """Every instance file under ``folder`` (records and other JSON files are skipped)."""
    from ..fileio import read_json
    from ..instance import FORMAT

    out = []
    for f in sorted(folder.rglob("*.json")):
        data = read_json(f)
        if isinstance(data, dict) and data.get("format") == FORMAT:
            out.append((str(f.relative_to(folder)), load_instance(f)))
    return out


def _regenerate(inst: Instance) -> Instance | None:
    meta = inst.meta
    if "family" not in meta or "seed" not in meta:
        return None
    params = dict(meta.get("params", {}))
    return generate(meta["family"], meta["seed"], **params)


def _table(rows: list[list[str]], header: list[str]) -> str:
    from ..texttable import Column, render_table

    cols = [Column(str(h), align=">" if k else "<") for k, h in enumerate(header)]
    return "\n".join(render_table(cols, [[str(c) for c in r] for r in rows], rule="columns"))


#: Instances with more jobs than this are compared with the lower bound only.
EXACT_MAX_JOBS = 25


def _compare_all(items, time_limit: float, say):
    """Exact Opt and every applicable policy on each bundled instance."""
    from ..comparison import compare_instance

    out = []
    for rel, inst in items:
        exact = inst.n <= EXACT_MAX_JOBS and inst.memory <= 1024
        say(f"demo: {rel}: {'exact Opt and ' if exact else ''}policies")
        out.append((rel, compare_instance(inst, exact=exact, time_limit=time_limit, source=rel)))
    return out


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


def _policy_matrix(comps) -> tuple[list[str], list[list[str]], tuple | None]:
    from ..policy import POLICIES

    header = ["policy"] + [_short(rel) for rel, _ in comps]
    rows = []
    worst = None  # (ratio, rel, comparison, row)
    for name in POLICIES:
        line = [name]
        for rel, ic in comps:
            r = ic.row(name)
            if not r.applicable:
                line.append("n/a")
            elif r.ratio_opt is not None:
                line.append(f"{r.ratio_opt:.3f}")
                if worst is None or r.ratio_opt > worst[0]:
                    worst = (r.ratio_opt, rel, ic, r)
            else:
                line.append(f"<={r.ratio_optimistic:.2f}")
        rows.append(line)
    return header, rows, worst


def _demand(inst: Instance) -> tuple[int, int]:
    """Peak memory demand: every request at once (Σ (s+o)), and each started on arrival."""
    from ..schedule import Schedule, memory_profile

    on_arrival = memory_profile(inst, Schedule.from_starts(inst, inst.arrivals))
    return int(inst.peaks.sum()), int(on_arrival.max(initial=0))


def _trace_info(rel: str, ic) -> dict:
    """What the trace table says about one sample: demand, bounds, why there is no Opt."""
    inst = ic.instance
    at_once, on_arrival = _demand(inst)
    exact = None
    if ic.ub is None or ic.lb < ic.ub:
        exact = (f"not attempted: out of reach at n={inst.n} (proofs get hard beyond n ~ 15; "
                 f"the demo solves n <= {EXACT_MAX_JOBS}, M <= 1024)")  # fmt: skip
    return {
        "file": rel,
        "n": inst.n,
        "memory": inst.memory,
        "peak_all_at_once": at_once,
        "peak_on_arrival": on_arrival,
        "memory_binds": on_arrival > inst.memory,
        "meta": dict(inst.meta),
        "lb": ic.lb,
        "lb_name": ic.lb_name,
        "ub": ic.ub,
        "ub_name": ic.ub_name,
        "exact_opt": exact,
    }


def _trace_table(comps, infos) -> str:
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
    for info in infos:
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
    folder = Path(args.instances) if args.instances else bundled_dir()
    items = _bundled(folder)
    report = []
    rows = []
    for rel, inst in items:
        regen = _regenerate(inst)
        reproducible = regen is not None and regen.to_dict() == inst.to_dict()
        b = lower_bounds(inst)
        rc = inst.regime_counts()
        report.append(
            {
                "file": rel,
                "name": inst.name,
                "n": inst.n,
                "memory": inst.memory,
                "regimes": rc,
                "reproducible": reproducible,
                "bounds": b.to_dict(),
            }
        )
        rows.append(
            [
                rel,
                inst.n,
                inst.memory,
                f"{rc['large']}/{rc['prompt-heavy']}/{rc['response-heavy']}",
                "yes" if reproducible else "NO",
                b.area,
                b.processing,
                f"{b.best} ({b.best_name})",
                b.makespan_best,
            ]
        )
    ok = all(r["reproducible"] for r in report)
    if not args.json:
        print(f"Bundled instances in {folder}: regenerated from their seeds, validated, bounded.\n")
        print(
            _table(
                rows,
                [
                    "instance",
                    "n",
                    "M",
                    "L/P/R",
                    "regen",
                    "area",
                    "processing",
                    "best Opt bound",
                    "makespan",
                ],
            )
        )
        print(
            "\nL/P/R = large / small prompt-heavy / small response-heavy jobs (main paper §3, Λ = M/4)."
        )
        if not ok:
            print("Some bundled instances differ from their regenerated versions.", file=sys.stderr)
        print("\nSolving exactly and running every policy (progress on stderr) ...", flush=True)

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    everything = _compare_all(items, args.time_limit, say)
    comps = [(rel, ic) for rel, ic in everything if ic.exact is not None]
    traces = [(rel, ic) for rel, ic in everything if ic.exact is None]
    trace_infos = [_trace_info(rel, ic) for rel, ic in traces]
    header, rows, worst = _policy_matrix(comps)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pictures: list[tuple[str, str]] = []
    picture = None
    if worst is not None:
        from ..comparison import plot_worst_vs_opt

        ratio, rel, ic, row = worst
        picture = plot_worst_vs_opt(ic, str(out / "worst-vs-opt.png"))
        if picture:
            pictures.append(
                (
                    picture,
                    f"{row.policy} on {rel} (the worst ratio to Opt above, {ratio:.3f}) beside "
                    "Opt's schedule: memory over time and the attempts",
                )  # fmt: skip
            )
    from ..comparison import Comparison, plot_policy_summary

    if comps:
        cmp = Comparison(tuple(ic for _, ic in comps), tuple(r.policy for r in comps[0][1].rows),
                         True, args.time_limit, 0)  # fmt: skip
        bars = plot_policy_summary(cmp, str(out / "ratios.png"),
                                   title=f"every policy on the {len(comps)} small bundled instances")  # fmt: skip
        pictures.append((bars, "per policy, the worst (bar) and mean (dot) ratio of its total "
                         "completion time to Opt over the small bundled instances"))  # fmt: skip
    search_info = _demo_search(out, args, say, pictures)
    validation = _demo_validate(out, args, say, pictures)
    if args.json:
        emit_json(
            {
                "instances": report,
                "all_reproducible": ok,
                "comparisons": {rel: ic.to_dict() for rel, ic in everything},
                "traces": trace_infos,
                "worst": None
                if worst is None
                else {
                    "instance": worst[1],
                    "policy": worst[3].policy,
                    "ratio_opt": worst[0],
                    "picture": picture,
                },
                "search": search_info,
                "validation": validation.to_dict(),
                "pictures": [{"path": p, "shows": s} for p, s in pictures],
            }
        )
        return 0 if ok else 1
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
    if worst is not None:
        ratio, rel, ic, row = worst
        print(
            f"\nWorst ratio to Opt: {row.policy} on {rel}: {ratio:.3f} "
            f"({row.total_completion} vs Opt {ic.opt})."
        )
        if picture:
            print(f"Picture of {row.policy} beside Opt: {picture}")
    if traces:
        print("\nRequest traces (too large for the exact models): each policy's total "
              "completion time / LB and / UB")  # fmt: skip
        print("(LB: best lower bound, SPEC §2; UB: best checked schedule, the policies' and the "
              "cheap clairvoyant kill-free ones; ALG/LB >= ALG/Opt >= ALG/UB)\n")  # fmt: skip
        print(_trace_table(traces, trace_infos))
    solved = [ic for _, ic in comps if ic.exact is not None]
    proved = sum(1 for ic in solved if ic.opt is not None)
    print(
        f"\nEvery schedule above passed the independent checker; {proved} of {len(solved)} exact "
        "optima are proved (bound = objective)."
    )
    s = search_info
    print(
        f"\nAdversarial search (fcfs, anneal, seed 1, {s['evaluations']} evaluations, "
        f"{s['exact_solves']} exact solves, {s['seconds']:.0f}s): best certified ratio "
        f"{s['ratio_certified']:.3f} on n={s['n']}, M={s['memory']} ({s['opt_status']} Opt); "
        f"record {s['record']} re-checked: {'valid' if s['record_valid'] else 'INVALID'}."
    )
    print("\nQuick validation of two claims (kvopt validate --quick):")
    for c in validation.claims:
        print(f"  {c.id}: {c.verdict} — {c.text}")
    print("\nPictures:")
    for path, shows in pictures:
        print(f"  {path}: {shows}.")
    return 0 if ok else 1


def _demo_search(out: Path, args, say, pictures) -> dict:
    """A short adversarial search on fcfs; its record re-checked; two pictures."""
    import shutil

    from ..campaign import read_history, search
    from ..plotting import plot_best_so_far, plot_schedules
    from ..record import load_record, verify_record

    folder = out / "search-fcfs"
    shutil.rmtree(folder, ignore_errors=True)  # a fresh campaign each time
    say("demo: adversarial search on fcfs")
    res = search(
        "fcfs",
        strategy="anneal",
        budget=args.search_budget,
        seed=1,
        out=folder,
        space={"n_min": 2, "n_max": 6, "memory_min": 8, "memory_max": 24, "max_response": 12},
        exact_time_limit=5.0,
        progress=False,
    )
    rec = load_record(res.best.record)
    valid = verify_record(rec) == []
    prog = plot_best_so_far(
        read_history(folder),
        str(out / "search-progress.png"),
        title=f"search fcfs (anneal, seed 1): best ratio so far ({res.evaluations} evaluations)",
    )
    worst = plot_schedules(
        rec.instance,
        [rec.schedule, rec.opt_schedule],
        str(out / "search-worst-vs-opt.png"),
        ["fcfs", "Opt" if rec.optimal else "best clairvoyant (UB)"],
        title=f"fcfs on the worst case the search found (n={rec.instance.n}, M={rec.instance.memory}): "
        f"certified ratio {rec.ratio_certified:.3f}",
    )
    pictures.append((worst, "fcfs on the worst instance the search found, beside Opt: where its "
                     "kills and head-of-line blocking lose time"))  # fmt: skip
    pictures.append((prog, "the search's best certified and optimistic ratio so far, against "
                     "evaluations and seconds"))  # fmt: skip
    return {
        "evaluations": res.evaluations,
        "exact_solves": res.exact_solves,
        "seconds": res.seconds,
        "ratio_certified": rec.ratio_certified,
        "ratio_optimistic": rec.ratio_optimistic,
        "opt_status": rec.opt_status,
        "n": rec.instance.n,
        "memory": rec.instance.memory,
        "record": res.best.record,
        "record_valid": valid,
    }


def _demo_validate(out: Path, args, say, pictures):
    import shutil

    from ..validation import validate

    folder = out / "validate"
    shutil.rmtree(folder, ignore_errors=True)
    say("demo: quick validation of greedy-area and single-priority")
    res = validate(
        ["greedy-area", "single-priority"],
        quick=True,
        budget=args.validate_budget,
        seed=0,
        out=folder,
        report=out / "validation.md",
        progress=False,
    )
    ga = res.verdict("greedy-area")
    pictures.append((str(out / "validation-ratios.png"), "greedy-area's certified ratio divided by "
                     f"its bound 1 + 2/(1-alpha) on every instance validated (verdict: {ga.verdict})"))  # fmt: skip
    pictures.append((str(out / "validation-prop1.png"), "Proposition 1: the worst ratio of each "
                     "single-priority rule against L, log-log, with the fitted exponents (about 1/2)"))  # fmt: skip
    pictures.append(
        (str(out / "validation.md"), "the validation report (table, verdicts, growth data)")
    )
    return res
