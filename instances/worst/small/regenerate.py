"""Regenerate the bundled worst-case records: ``python instances/worst/small/regenerate.py``.

For every policy of the registry, one ``kvopt search`` campaign per strategy
(``anneal`` and ``random`` by default; seed 1; ``--budget`` evaluations each,
in the policy's default space, see :func:`kvopt.campaign.policy_space`); the
record with the best certified ratio is copied to ``instances/worst/small/<policy>.json``
(after :func:`kvopt.record.verify_record` accepts it) and the table in
``instances/worst/small/README.md`` is rewritten.  The campaigns are kept in
``--work`` (default ``kvopt-search/worst``), so an interrupted run resumes.

With the same budget and seed the campaigns find the same records (when every
exact solve ends within its time limit); the seconds in the table depend on
the machine.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from kvopt.campaign import search  # noqa: E402
from kvopt.policy import POLICIES  # noqa: E402
from kvopt.record import load_record, verify_record  # noqa: E402

HEADER = """# Small worst cases found by search (per-job space)

One record (SPEC §8) per policy of the registry: the instance on which
`kvopt search` found the policy farthest from the clairvoyant optimum, the
policy's schedule, the best clairvoyant schedule known (Opt when
`opt_status` is `optimal`), and both ratios.  Every file passes
`kvopt check instances/worst/small/<policy>.json` (both schedules re-checked, the
ratios recomputed, the policy re-simulated); `kvopt plot instances/worst/small/<policy>.json`
draws the policy beside Opt; `kvopt shrink` makes one smaller.

Regenerate with (from the repository root; the campaigns go to
`kvopt-search/worst/`, resumable):

```bash
python instances/worst/small/regenerate.py --budget {budget}
```

Settings of this table: {settings}.  Certified ratio = ALG/UB (a lower bound
on the true ratio), optimistic = ALG/LB (an upper bound); equal when Opt is
proved.  "seconds" is when the campaign found the record.

| policy | certified ratio | optimistic ratio | Opt | n | M | strategy | evaluation | seconds |
|---|---|---|---|---|---|---|---|---|
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--budget", type=int, default=160, help="evaluations per campaign (default 160)"
    )
    ap.add_argument("--strategies", default="anneal,random")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=10.0, help="seconds per exact solve")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--work", default="kvopt-search/worst")
    args = ap.parse_args(argv)
    rows = []
    t_all = time.monotonic()
    for name in args.policies.split(","):
        best = None
        for strategy in args.strategies.split(","):
            res = search(
                name,
                strategy=strategy,
                budget=args.budget,
                seed=args.seed,
                workers=args.workers,
                out=Path(args.work) / f"{name}-{strategy}",
                exact_time_limit=args.time_limit,
                progress=None,
            )
            b = res.best
            print(f"{name:<18} {strategy:<8} certified {b.ratio_certified:.4f} optimistic "
                  f"{b.ratio_optimistic:.4f} ({res.evaluations} evaluations, {res.seconds:.0f}s)",
                  flush=True)  # fmt: skip
            if best is None or b.ratio_certified > best[1].ratio_certified:
                best = (strategy, b)
        strategy, b = best
        rec = load_record(b.record)
        problems = verify_record(rec)
        if problems:
            raise SystemExit(f"{name}: the best record fails the checks: {problems[0].message}")
        shutil.copyfile(b.record, HERE / f"{name}.json")
        rows.append(
            f"| `{name}` | {rec.ratio_certified:.4f} | {rec.ratio_optimistic:.4f} | {rec.opt_status} | "
            f"{rec.instance.n} | {rec.instance.memory} | {strategy} | {b.evaluation} | {b.seconds:.1f} |"
        )
    settings = (f"seed {args.seed}, strategies {args.strategies}, {args.budget} evaluations each, "
                f"{args.time_limit:g} s per exact solve; {time.monotonic() - t_all:.0f} s in all")  # fmt: skip
    done = args.policies.split(",")
    if set(done) != set(POLICIES) and (HERE / "README.md").is_file():
        # some policies only: keep the other rows and the settings they were made with
        old = (HERE / "README.md").read_text()
        kept = {line.split("`")[1]: line for line in old.splitlines()
                if line.startswith("| `") and line.split("`")[1] not in done}  # fmt: skip
        mine = dict(zip(done, rows))
        rows = [kept.get(n) or mine[n] for n in POLICIES if n in kept or n in mine]
        before = old.split("Settings of this table: ", 1)[1].split(".  Certified ratio", 1)[0]
        settings = f"{before}; {', '.join(done)} regenerated alone ({settings})"
    text = HEADER.format(budget=args.budget, settings=settings) + "\n".join(rows) + "\n"
    (HERE / "README.md").write_text(text)
    print(f"wrote {HERE / 'README.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
