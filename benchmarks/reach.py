"""How far ``kvopt solve`` proves Opt (issue 68): the README's reach table.

``python benchmarks/reach.py [--draws 10] [--seconds 60] [--ns 8,12,16] [--tight 2,4]
[--sources random,azure] [--json FILE] [--rows FILE]``

For each source, each ``n`` and each tightness ``k``, ``--draws`` instances (seeds 1, 2, …)
are solved by ``kvopt.solve`` (``solver="auto"``, 2 threads, ``--seconds`` each); the table
gives per cell the fraction proved optimal and the median solve time (an instance not proved
counts with the seconds it ran, about the limit, so a median of ``≥ S`` means that at most half
were proved).

* **Sources.**  ``random``: the bundled ``random`` family (``kvopt gen random``, mixed
  regimes, job sizes drawn against ``memory = 64``).  ``azure``: ``n`` requests drawn at
  random from the bundled Azure LLM inference trace 2023 (``trace`` family, ``mode =
  "random"``, requests with ``prompt + response ≤ 4096``: real token lengths), all at round 0.
* **How tight M is.**  Whatever the source, ``M = max(largest peak, ⌈Σ peaks / k⌉)`` with
  ``peak = prompt + response`` (the rule of ``benchmarks/real_lengths.py``, ``k = 3`` there):
  with ``k = 2`` the jobs' peaks add up to about twice the memory (loose), with ``k = 4`` to
  four times (tight).  The jobs are the source's; only ``M`` is set by the rule.

Every schedule ``solve`` returns has passed the checker, and ``optimal`` means its proven bound
meets the objective (SPEC §5).  The table, and with ``--json`` every solve, are printed; the
run's settings head the table, so a reduced run says what it is; ``--rows FILE`` prints the
table of a ``--json`` file again (with its settings) without solving.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kvopt import Instance, generate, solve  # noqa: E402
from kvopt.instance import Job  # noqa: E402

SOURCES = ("random", "azure")


def instance(source: str, n: int, k: int, seed: int) -> Instance:
    """The draw ``seed`` of ``source`` with ``n`` jobs and ``M`` by tightness ``k`` (module doc)."""
    if source == "random":
        base = generate("random", seed=seed, n=n, memory=64)
    elif source == "azure":
        base = generate("trace", seed=seed, n=n, memory=4096, mode="random")
    else:
        raise SystemExit(f"reach.py: --sources: unknown source {source!r} (valid: random, azure)")
    jobs = tuple(Job(prompt=j.prompt, response=j.response, id=j.id) for j in base.jobs)
    peaks = [j.prompt + j.response for j in jobs]
    memory = max(max(peaks), math.ceil(sum(peaks) / k))
    return Instance(memory=memory, jobs=jobs, name=f"{source}-n{n}-k{k}-s{seed}",
                    meta={"source": source, "tightness": k})  # fmt: skip


def run(args) -> list[dict]:
    # compile (Numba) and import the solvers once, so the first draw's time is its own
    solve(instance("random", 4, 2, 1), time_limit=5, threads=2)
    rows = []
    for source in args.sources:
        for n in args.ns:
            for k in args.tight:
                for seed in range(1, args.draws + 1):
                    inst = instance(source, n, k, seed)
                    t0 = time.monotonic()
                    res = solve(inst, time_limit=args.seconds, threads=2)
                    secs = time.monotonic() - t0
                    rows.append({"source": source, "n": n, "k": k, "seed": seed,
                                 "memory": inst.memory, "status": str(res.status),
                                 "optimal": res.optimal, "seconds": round(secs, 2),
                                 "gap": res.gap, "solver": res.solver})  # fmt: skip
                    print(f"{inst.name}: M={inst.memory} {res.status} in {secs:.1f} s "
                          f"({res.solver}, gap {res.gap})", file=sys.stderr, flush=True)  # fmt: skip
    return rows


def table(rows: list[dict], args) -> str:
    """The Markdown table: a row per n, a column per source and tightness, each cell the
    proved fraction and the median solve time (the README's table)."""
    names = {"random": "random", "azure": "Azure 2023"}
    head = (f"Proved optimal within {args.seconds:g} s (of {args.draws} draw(s), seeds "
            f"1-{args.draws}) and the median time; `python benchmarks/reach.py --draws "
            f"{args.draws} --seconds {args.seconds:g}`; `k`: the jobs' peaks add up to about "
            "k·M.")  # fmt: skip
    cols = [(source, k) for source in args.sources for k in args.tight]
    lines = [head, "", "| n | " + " | ".join(f"{names[s]}, k = {k}" for s, k in cols) + " |",
             "|---:|" + "---|" * len(cols)]  # fmt: skip
    for n in args.ns:
        cells = []
        for source, k in cols:
            cell = [r for r in rows if (r["source"], r["n"], r["k"]) == (source, n, k)]
            proved = sum(r["optimal"] for r in cell)
            med = statistics.median(r["seconds"] for r in cell)
            unproved_median = sum(not r["optimal"] for r in cell) * 2 >= len(cell)
            when = f"≥ {args.seconds:g} s" if unproved_median else f"{med:.1f} s"
            cells.append(f"{proved}/{len(cell)}, {when}")
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _ints(text: str) -> list[int]:
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected integers separated by commas, got {text!r}"
        ) from None
    if not vals or min(vals) < 1:
        raise argparse.ArgumentTypeError(f"expected integers >= 1, got {text!r}")
    return vals


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--draws", type=int, default=10, help="instances per cell (default 10)")
    p.add_argument("--seconds", type=float, default=60.0, help="limit per solve (default 60)")
    p.add_argument("--ns", type=_ints, default=[8, 12, 16], help="job counts (default 8,12,16)")
    p.add_argument(
        "--tight",
        type=_ints,
        default=[2, 4],
        help="tightness k: M = max(largest peak, ceil(sum of peaks / k)) (default 2,4)",
    )
    p.add_argument("--sources", type=lambda s: s.split(","), default=list(SOURCES),
                   help="random, azure (default both)")  # fmt: skip
    p.add_argument("--json", metavar="FILE", help="also write every solve and the table here")
    p.add_argument("--rows", metavar="FILE",
                   help="print the table of a --json file's solves instead of solving")  # fmt: skip
    args = p.parse_args(argv)
    if args.draws < 1 or not args.seconds > 0:
        p.error("--draws must be >= 1 and --seconds > 0")
    bad = [s for s in args.sources if s not in SOURCES]
    if bad:
        p.error(f"--sources: unknown source {bad[0]!r} (valid: {', '.join(SOURCES)})")
    if args.rows is not None:  # the solves and the settings of an earlier run
        saved = json.loads(Path(args.rows).read_text())
        for key in ("draws", "seconds", "ns", "tight", "sources"):
            setattr(args, key, saved["settings"][key])
        rows = saved["rows"]
    else:
        rows = run(args)
    text = table(rows, args)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps({"settings": vars(args) | {"json": None},
                                               "rows": rows, "table": text}, indent=1))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
