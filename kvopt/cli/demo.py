"""``kvopt demo`` — the main job on bundled data.

1. Regenerates every bundled instance (``instances/``) from the generator,
   seed and parameters in its ``meta`` and checks it is identical (so every
   bundled file is reproducible) and valid.
2. Prints each instance's lower bounds (SPEC §2) as a table.
3. Solves every small bundled instance exactly (certified Opt), runs every
   policy of the registry that applies, and prints each policy's ratio to Opt
   (to the best lower bound on the trace sample, too large for the exact
   models).
4. Saves the side-by-side picture (memory over time and Gantt chart) of the
   worst policy/instance pair found in 3 and Opt's schedule.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ..bounds import lower_bounds
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
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _bundled(folder: Path) -> list[tuple[str, Instance]]:
    files = sorted(f for f in folder.rglob("*.json") if "records" not in f.parts)
    return [(str(f.relative_to(folder)), load_instance(f)) for f in files]


def _regenerate(inst: Instance) -> Instance | None:
    meta = inst.meta
    if "family" not in meta or "seed" not in meta:
        return None
    params = dict(meta.get("params", {}))
    return generate(meta["family"], meta["seed"], **params)


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[k])) for r in [header, *rows]) for k in range(len(header))]

    def fmt(r):
        cells = (
            str(c).rjust(w) if k else str(c).ljust(w) for k, (c, w) in enumerate(zip(r, widths))
        )
        return "  ".join(cells)

    return "\n".join([fmt(header), fmt(["-" * w for w in widths]), *map(fmt, rows)])


#: Instances with more jobs than this are compared with the lower bound only.
EXACT_MAX_JOBS = 25


def _compare_all(items, time_limit: float, say):
    """Exact Opt and every applicable policy on each bundled instance."""
    from ..compare import compare_instance

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
    from ..policies import POLICIES

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

    comps = _compare_all(items, args.time_limit, say)
    header, rows, worst = _policy_matrix(comps)
    picture = None
    if worst is not None:
        from ..compare import plot_worst_vs_opt

        Path(args.out).mkdir(parents=True, exist_ok=True)
        ratio, rel, ic, row = worst
        picture = plot_worst_vs_opt(ic, str(Path(args.out) / "worst-vs-opt.png"))
    if args.json:
        emit_json(
            {
                "instances": report,
                "all_reproducible": ok,
                "comparisons": {rel: ic.to_dict() for rel, ic in comps},
                "worst": None
                if worst is None
                else {
                    "instance": worst[1],
                    "policy": worst[3].policy,
                    "ratio_opt": worst[0],
                    "picture": picture,
                },
            }
        )
        return 0 if ok else 1
    opt_row = ["Opt (certified)"]
    for _, ic in comps:
        opt_row.append(str(ic.opt) if ic.opt is not None else "-")
    print("\nTotal completion time of each policy divided by the certified Opt")
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
    solved = [ic for _, ic in comps if ic.exact is not None]
    proved = sum(1 for ic in solved if ic.opt is not None)
    print(
        f"\nEvery schedule above passed the independent checker; {proved} of {len(solved)} exact "
        "optima are proved (bound = objective)."
    )
    return 0 if ok else 1
