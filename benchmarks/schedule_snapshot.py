"""Record (or compare) the exact schedule of every registry policy on a fixed instance set.

    python benchmarks/schedule_snapshot.py record OUT.json.gz
    python benchmarks/schedule_snapshot.py compare OLD.json.gz [NEW.json.gz]

The instance set is deterministic: every ``kvopt gen`` family (random, the three
regimes, identical-prompt, arrivals on every base family, prop1, two-point with
``short_arrival``, trace samples scaled down to small memory, with and without
trace arrivals) plus hand-drawn instances with predictions and late first
arrivals.  For every (instance, policy, parameter set) it stores the attempt
list and the engine's trace rows (or the rule that excludes the instance, or
the error the run raised).  ``compare`` prints every difference; a refactor of
the engine or of a policy that must not change behaviour should show none.
"""

from __future__ import annotations

import gzip
import json
import sys
import time

import numpy as np

from kvopt.errors import InputError, PolicyError
from kvopt.generators import generate
from kvopt.instance import Instance, Job
from kvopt.policy import POLICIES
from kvopt.serving.trace import bundled_trace_dir, load_trace, trace_instance
from kvopt.simulation import simulate

VARIANTS: list[tuple[str, dict, int | None]] = [(name, {}, None) for name in POLICIES]
VARIANTS = [(n, p, 0 if POLICIES[n].seeded else None) for n, p, _ in VARIANTS] + [
    ("beta-clear", {"beta": 0.3}, 7),
    ("alpha-protect", {"alpha": 0.5}, None),
    ("greedy-area", {"backfill": True}, None),
    ("pack-and-schedule", {"packer": "nfdh"}, None),
    ("route", {"compact": True}, None),
    ("route-online", {"compact": True}, None),
    ("route-online", {"base": 3}, None),
    ("blackbox", {"compact": True}, None),
    ("clairvoyant-mix", {"compact": True}, None),
    ("sps", {"stagger": False}, None),
]


def _scaled(inst: Instance, k: int, name: str) -> Instance:
    jobs = tuple(
        Job(max(1, j.prompt // k), max(1, j.response // k), j.arrival // k, j.id) for j in inst.jobs
    )
    M = inst.memory // k
    jobs = tuple(j for j in jobs if j.prompt + j.response <= M)
    return Instance(M, jobs, name=name)


def instances() -> list[Instance]:
    out: list[Instance] = []
    rng = np.random.default_rng(20260101)
    seed = 0
    for fam in ("random", "large", "prompt-heavy", "response-heavy", "identical-prompt"):
        for _k in range(24 if fam == "random" else 16):
            seed += 1
            n = int(rng.integers(1, 13))
            M = int(rng.choice([8, 12, 16, 32, 64, 100]))
            out.append(generate(fam, seed, n=n, memory=M))
    for base in ("random", "large", "prompt-heavy", "response-heavy", "identical-prompt"):
        for _k in range(22):
            seed += 1
            n = int(rng.integers(1, 16))
            M = int(rng.choice([8, 16, 32, 64]))
            rate = float(rng.choice([0.05, 0.2, 0.5, 2.0]))
            out.append(generate("arrivals", seed, base=base, rate=rate, n=n, memory=M))
    for L in (2, 3, 4):
        for case in (1, 2):
            for order in ("x-first", "y-first"):
                if L == 4 and case == 2 and order == "y-first":
                    continue
                out.append(generate("prop1", 0, L=L, case=case, order=order))
    for _k in range(40):
        seed += 1
        M = int(rng.choice([8, 16, 32, 64]))
        out.append(
            generate(
                "two-point",
                seed,
                memory=M,
                prompt=int(rng.integers(1, max(2, M // 8) + 1)),
                long=int(rng.integers(0, 4)),
                short=int(rng.integers(1, 16)),
                short_arrival=int(rng.integers(0, 2 * M)),
            )
        )
    tr = load_trace(bundled_trace_dir())
    for k in range(50):
        scale = int(rng.choice([64, 128, 256]))
        inst = trace_instance(
            tr,
            n=int(rng.integers(3, 14)),
            memory=16384,
            seed=k,
            mode="random",
            arrivals=k % 2 == 1,
            rounds_per_second=float(rng.choice([1.0, 5.0, 50.0])),
        )
        out.append(_scaled(inst, scale, f"trace-{k}-x{scale}"))
    for k in range(100):  # predictions (also wrong ones), late first arrivals, ties
        M = int(rng.choice([8, 10, 16, 24, 40]))
        n = int(rng.integers(1, 11))
        jobs = []
        for _i in range(n):
            s = int(rng.integers(1, M))
            o = int(rng.integers(1, M - s + 1))
            a = 0
            if k % 3 != 0:
                a = int(rng.integers(0, 3 * M)) if k % 3 == 1 else int(rng.choice([0, 3, 3, 9]))
            pr = int(rng.integers(1, M)) if k % 2 == 0 else None
            jobs.append(Job(s, o, a, None, pr))
        out.append(Instance(M, tuple(jobs), name=f"hand-{k}"))
    return out


def run_all() -> dict[str, object]:
    rec: dict[str, object] = {}
    for idx, inst in enumerate(instances()):
        for name, params, seed in VARIANTS:
            key = f"{idx}:{inst.name}|{name}|{json.dumps(params, sort_keys=True)}|{seed}"
            try:
                POLICIES[name].check_applies(inst, params)
            except InputError as err:
                rec[key] = {"n/a": str(err)}
                continue
            try:
                res = simulate(inst, name, params or None, seed=seed, trace=True)
            except PolicyError as err:
                rec[key] = {"error": f"{type(err).__name__}: {err}"}
                continue
            rec[key] = {
                "attempts": [
                    [a.job, a.start, a.rounds, a.completed] for a in res.schedule.attempts
                ],
                "trace": [list(r) for r in res.trace],
            }
    return rec


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "record":
        t0 = time.perf_counter()
        rec = run_all()
        with gzip.open(argv[1], "wt") as f:
            json.dump(rec, f)
        n_inst = len(instances())
        ran = sum(1 for v in rec.values() if "attempts" in v)
        print(
            f"{n_inst} instances, {len(VARIANTS)} policy variants, {len(rec)} pairs, "
            f"{ran} simulated, {time.perf_counter() - t0:.1f} s"
        )
        return 0
    if len(argv) >= 2 and argv[0] == "compare":
        with gzip.open(argv[1], "rt") as f:
            old = json.load(f)
        if len(argv) >= 3:
            with gzip.open(argv[2], "rt") as f:
                new = json.load(f)
        else:
            new = run_all()
        diff = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
        for k in diff:
            o, nw = old.get(k), new.get(k)
            print("DIFF", k)
            for part in ("n/a", "error", "attempts"):
                if (o or {}).get(part) != (nw or {}).get(part):
                    print(
                        f"  {part}: old {(o or {}).get(part)}\n  {part}: new {(nw or {}).get(part)}"
                    )
            if (o or {}).get("trace") != (nw or {}).get("trace"):
                print("  trace rows differ")
        ran = sum(1 for v in new.values() if "attempts" in v)
        sched = sum(
            1
            for k in diff
            if any(
                (old.get(k) or {}).get(p) != (new.get(k) or {}).get(p)
                for p in ("n/a", "error", "attempts")
            )
        )
        print(
            f"{len(new)} pairs ({ran} simulated), {len(diff)} differences "
            f"({sched} in schedules or errors, {len(diff) - sched} in trace rows only)"
        )
        return 1 if diff else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
