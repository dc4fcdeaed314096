"""A hand-built two-type family on which shortest-first rules grow (claim ``sf-growth``).

    python instances/worst/typed/sf_family.py [--out instances/worst/typed]

Head-of-line blocking by short wide jobs: type 0 is ``k`` jobs of prompt
``M/2`` and response 1 (no two fit side by side: peak ``M/2 + 1``), type 1 is
``m`` narrow jobs of prompt 1 and a long response ``R``.  ``sjf`` and ``mcsf``
run the type-0 jobs first (shortest response), one per round, and the narrow
jobs, which all fit at once, wait ``k`` rounds; Opt runs the narrow jobs first.
The sweep direction ``memory:0`` (M and type 0's prompt and response ×2, type
1's count ×2) keeps type 0 exclusive and shortest while ``r_0 < R``: ALG
grows like ``m·k·r_0`` and Opt like ``m·R``, so the ratio grows with M over
the four doublings.  This is a construction, not a discovery: the typed
campaigns' best records exploit ties of equal responses instead, and every
doubling direction of SPEC §9 leaves their ratio flat (see README.md).

For each policy the script picks ``k``, ``m`` (with ``m·(R + 1) ≤ M``) and ``R``
from a small grid at ``M = 64`` by the certified ratio of the cheap bounds,
solves it exactly (proved in about a second), saves the record
(``sf-family-POLICY.json``), then sweeps it with
``kvopt grow`` (4 doublings, exact solves of 10 s on the 2 best directions)
and saves the sweep's JSON (``sf-family-POLICY-growth.json``, point records
left out).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from kvopt.campaign.evaluate import cheap_lb, cheap_ub
from kvopt.campaign.growth import grow
from kvopt.exact import solve
from kvopt.instance import Instance, Job
from kvopt.record import make_record, save_record
from kvopt.schedule import Schedule
from kvopt.simulation import simulate

M = 64


def family(k: int, m: int, response: int) -> Instance:
    jobs = [Job(prompt=M // 2, response=1)] * k + [Job(prompt=1, response=response)] * m
    return Instance(memory=M, jobs=tuple(jobs), name=f"sf-family-k{k}-m{m}-R{response}")


def best_member(policy: str):
    best = None
    for response in (16, 32):
        for k in (2, 3, 4, 6, 8):
            for m in range(1, M // (response + 1) + 1):
                inst = family(k, m, response)
                res = simulate(inst, policy)
                starts, ub, _ = cheap_ub(inst, "total", typed=True)
                ratio = sum(res.completion_times) / ub
                if best is None or ratio > best[0]:
                    best = (ratio, inst, res, starts)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent))
    ap.add_argument("--policies", default="sjf,mcsf")
    args = ap.parse_args(argv)
    out = Path(args.out)
    for policy in args.policies.split(","):
        _, inst, res, starts = best_member(policy)
        opt = Schedule.from_starts(inst, starts, producer="cheap-ub")
        lb, status = cheap_lb(inst, "total")[0], "feasible"
        exact = solve(inst, time_limit=60, threads=1, warm_start=opt, deterministic=True)
        if exact.status.value == "optimal":
            opt, lb, status = exact.schedule, int(exact.bound), "optimal"
        rec = make_record(inst, policy, {}, None, "total", res.schedule, opt, lb, status,
                          found_by={"how": "hand-built family (sf_family.py)"})  # fmt: skip
        path = out / f"sf-family-{policy}.json"
        save_record(rec, path)
        with tempfile.TemporaryDirectory() as tmp:
            g = grow(path, steps=4, time_limit=10, certify=2, out=Path(tmp) / "g", plot=False,
                     progress=False)  # fmt: skip
        data = g.to_dict()
        for d in data["directions"]:
            for p in d["steps"]:
                p.pop("record", None)
        (out / f"sf-family-{policy}-growth.json").write_text(json.dumps(data, indent=1) + "\n")
        d = g.direction(g.best_direction)
        print(f"{policy}: k={inst.n - sum(1 for j in inst.jobs if j.prompt == 1)} "
              f"record {rec.ratio_certified:.3f}; sweep {g.verdict} along {g.best_direction} "
              f"(exponent {d.exponent:.2f}): "
              + ", ".join(f"{p.ratio_certified:.2f}" for p in d.steps))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
