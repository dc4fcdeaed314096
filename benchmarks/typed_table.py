"""Per registry policy: a typed campaign and the growth sweep of its record (issue 16's table).

    python benchmarks/typed_table.py [--seconds 300] [--workers 2] [--seed 1]
                                     [--policies fcfs,sjf,…] [--out runs/typed-table]
                                     [--grow-steps 4] [--grow-time-limit 5] [--certify 1]

For each policy (default: every registry policy, the classes where the theory
allows growth first), runs

    kvopt search --policy P --space kind=typed [--space arrivals=false]
                 --seconds S --seed 1 --workers 2 --out OUT/P
    kvopt grow OUT/P/best.json --steps 4 --time-limit 5 --certify 1

(``--space KEY=VALUE`` adds a typed-space option, e.g. ``n_max=64`` for
``beta-clear``, whose random kill-all thrashes on large typed instances:
450,000 kills and 20 s for one 336-job simulation)

(``arrivals=false`` for ``fcfs``, ``sjf`` and ``mcsf``: heterogeneous prompts, all
jobs at round 0, the class of the claims ``fcfs-growth`` and ``sf-growth``;
every other policy searches its own default class, typed) and prints one
Markdown row per policy: the certified ratio of the bundled per-job record
(``instances/worst/small/P.json``), the typed record's certified ratio with
its n, M and types, and the sweep's verdict with the best direction's
exponent.  A policy whose ``OUT/P/table-row.json`` exists is not run again
(the table resumes).  A ``--seconds`` campaign stops on the clock, so the
rows depend on the machine and its load (printed with each row).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from kvopt.campaign import search
from kvopt.campaign.growth import grow
from kvopt.policy import POLICIES
from kvopt.record import load_record
from kvopt.space import TypedSpace

#: Searched first, with ``arrivals=false`` (heterogeneous prompts, all at round 0) where listed.
FIRST = ("fcfs", "sjf", "mcsf", "greedy-area")
AT_ROUND_0 = ("fcfs", "sjf", "mcsf")


def bundled(policy: str) -> float | None:
    """The certified ratio of the bundled per-job record (either layout of ``instances/worst``)."""
    root = Path(__file__).resolve().parent.parent / "instances" / "worst"
    for path in (root / "small" / f"{policy}.json", root / f"{policy}.json"):
        if path.exists():
            return float(json.loads(path.read_text())["ratio_certified"])
    return None


def run(policy: str, args, out: Path) -> dict:
    space = {"kind": "typed"}
    if policy in AT_ROUND_0:
        space["arrivals"] = False
    for item in args.space:
        key, _, value = item.partition("=")
        space[key] = int(value) if value.lstrip("-").isdigit() else value
    load = open("/proc/loadavg").read().split()[0]
    t0 = time.perf_counter()
    res = search(policy, space=space, seconds=args.seconds, seed=args.seed,
                 workers=args.workers, out=out, progress=False)  # fmt: skip
    row = {"policy": policy, "bundled": bundled(policy), "load_at_start": load,
           "evaluations": res.evaluations, "exact_solves": res.exact_solves,
           "campaign_seconds": round(time.perf_counter() - t0, 1)}  # fmt: skip
    best = out / "best.json"
    if res.best is None or not best.exists():
        return row
    rec = load_record(best)
    types = TypedSpace.types(rec.instance)
    row.update(ratio=rec.ratio_certified, optimistic=rec.ratio_optimistic, n=rec.instance.n,
               memory=rec.instance.memory, opt_status=str(rec.opt_status),
               types=[list(t) for t in types])  # fmt: skip
    return sweep(row, args, out)


def sweep(row: dict, args, out: Path) -> dict:
    """``row`` with the growth sweep of ``out/best.json`` (into ``out/grow``)."""
    best = out / "best.json"
    t1 = time.perf_counter()
    g = grow(best, steps=args.grow_steps, time_limit=args.grow_time_limit, out=out / "grow",
             certify=args.certify, progress=False)  # fmt: skip
    d = g.direction(g.best_direction) if g.best_direction else None
    row.update(verdict=str(g.verdict), direction=g.best_direction,
               exponent=None if d is None else d.exponent,
               sweep_best=None if d is None else max(p.ratio_certified for p in d.steps),
               grow_seconds=round(time.perf_counter() - t1, 1))  # fmt: skip
    return row


def fmt(row: dict) -> str:
    def num(x, f="{:.2f}"):
        return "–" if x is None else f.format(x)

    types = ", ".join(f"({s},{o},{a})×{c}" for s, o, a, c in row.get("types", []))
    return (f"| `{row['policy']}` | {num(row['bundled'])} | {num(row.get('ratio'))} "
            f"| {row.get('n', '–')} | {row.get('memory', '–')} | {types} "
            f"| {row.get('verdict', '–')} ({row.get('direction') or '–'}, "
            f"exp {num(row.get('exponent'))}; best {num(row.get('sweep_best'))}) "
            f"| {row['evaluations']} | {row['load_at_start']} |")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--policies", default=None, help="comma-separated (default: every policy)")
    ap.add_argument("--out", default="runs/typed-table")
    ap.add_argument("--grow-steps", type=int, default=4)
    ap.add_argument("--grow-time-limit", type=float, default=5.0)
    ap.add_argument("--certify", type=int, default=1)
    ap.add_argument("--regrow", action="store_true",
                    help="sweep the records of finished rows again (keep their campaigns)")  # fmt: skip
    ap.add_argument("--space", action="append", default=[], metavar="KEY=VALUE",
                    help="typed-space option for every policy listed (e.g. n_max=64)")  # fmt: skip
    args = ap.parse_args(argv)
    names = args.policies.split(",") if args.policies else [
        *FIRST, *(p for p in POLICIES if p not in FIRST)]  # fmt: skip
    for p in names:
        if p not in POLICIES:
            ap.error(f"--policies: unknown policy {p!r}")
    print("| policy | bundled | typed | n | M | types (s,o,a)×count | growth | evals | load |")
    print("|---|---|---|---|---|---|---|---|---|", flush=True)
    for p in names:
        out = Path(args.out) / p
        done = out / "table-row.json"
        if done.exists() and not (args.regrow and (out / "best.json").exists()):
            row = json.loads(done.read_text())
        else:
            row = (
                sweep(json.loads(done.read_text()), args, out)
                if done.exists()
                else run(p, args, out)
            )
            tmp = done.with_suffix(".tmp")
            tmp.write_text(json.dumps(row, indent=1))
            tmp.replace(done)
        print(fmt(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
