"""``kvopt demo`` — the main job on bundled data.

1. Regenerates every bundled instance (``instances/``) from the generator,
   seed and parameters in its ``meta`` and checks it is identical (so every
   bundled file is reproducible) and valid.
2. Prints each instance's lower bounds (SPEC §2) as a table.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..bounds import lower_bounds
from ..generators import generate
from ..instance import Instance, load_instance
from .common import emit_json


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
    if args.json:
        emit_json({"instances": report, "all_reproducible": ok})
    else:
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
    return 0 if ok else 1
