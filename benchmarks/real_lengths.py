"""Exact Opt at real token lengths (issue 35, ``models/orders.md``): ``python
benchmarks/real_lengths.py``.

Instances: :func:`real_length_instance` — ``n`` requests drawn (seed ``seed``, without
replacement, trace order kept) from the bundled Azure LLM inference trace 2023
(``instances/traces/azure-llm-2023/``, code and conversation merged by timestamp; nothing is
downloaded) among those with ``prompt + response ≤ 4096``, all arriving at round 0, with
``M = max(largest peak, ⌈Σ peaks / 3⌉)`` so that memory binds (peak = prompt + response);
``scale`` multiplies every prompt and response (and so ``M``).

Default run: n = 8, 10, 12, 16, seeds 1-5 (``--seeds``), ``solve(solver=--solver)`` with
``--time-limit`` (60 s) and ``--threads`` (2); prints per instance the status, seconds, peak
resident memory of the process (each solve runs in a fresh child process) and the route,
then per n the proven count, the median and the largest seconds (an unproven instance
counts with the seconds it ran, about the time limit), and beside each solver's bound the
area bound and the rank bound (``models/orders.md`` §9), computed after the solve (``--lp``: also
the time-indexed LP over the windows of the solve's value, §10).  ``--scale`` solves one
instance (``--scale-n``, seed 1) with every length ×1, ×10, ×100; ``--big`` the three-job
instance :func:`big_instance` (one response of ``--big-tokens``, default 10⁷); ``--many
400,1000,2000`` the time-limit test on :func:`many_instance` (thousands of long jobs, no model);
``--arrivals`` replaces the draw by
:func:`arriving_instance` (``n`` consecutive requests with their arrival times);
``--max-response R`` replaces the trace by the random mixed family with responses ≤ ``R``
(``memory = max(6n, R + 1)``), the moderate horizons where the route was chosen.  Run it
from the checkout being measured (``PYTHONPATH=...``): the "before" figures of
``models/orders.md`` are this script with ``PYTHONPATH`` at main.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time

from kvopt.instance import Instance, Job

SIZES = (8, 10, 12, 16)
SEEDS = (1, 2, 3, 4, 5)
#: the issue's filter: requests whose peak fits in 4096 tokens
MAX_PEAK = 4096


def real_length_instance(n: int, seed: int, scale: int = 1) -> Instance:
    """``n`` requests of the bundled Azure 2023 trace (seed ``seed``), lengths × ``scale``,
    ``M = max(largest peak, ⌈Σ peaks / 3⌉)`` (module doc)."""
    from kvopt.serving.trace import trace_instance

    base = trace_instance(n=n, memory=MAX_PEAK, seed=seed, mode="random")
    jobs = [Job(prompt=j.prompt * scale, response=j.response * scale, id=j.id) for j in base.jobs]
    peaks = [j.prompt + j.response for j in jobs]
    memory = max(max(peaks), math.ceil(sum(peaks) / 3))
    meta = dict(base.meta, scale=scale, memory_rule="max(largest peak, ceil(sum of peaks / 3))")
    return Instance(memory=memory, jobs=tuple(jobs), name=f"azure-n{n}-s{seed}-x{scale}", meta=meta)


def arriving_instance(n: int, seed: int) -> Instance:
    """``n`` *consecutive* requests of the bundled trace (``--arrivals``): from a position drawn
    with numpy seed ``seed`` among those with ``prompt + response ≤ 4096``, each arriving at
    round ``⌊(t_i − t_first) · 50⌋`` (50 decode rounds a second,
    :data:`kvopt.serving.trace.DEFAULT_ROUNDS_PER_SECOND`), ``M`` as in :func:`real_length_instance`:
    the instance of a researcher comparing an online policy with Opt on real requests."""
    import numpy as np

    from kvopt.serving.trace import bundled_trace_dir, load_trace, trace_instance, usable_requests

    tr = load_trace(bundled_trace_dir())
    usable = len(usable_requests(tr, MAX_PEAK))
    offset = int(np.random.default_rng(seed).integers(0, usable - n + 1))
    base = trace_instance(tr, n=n, memory=MAX_PEAK, mode="head", offset=offset, arrivals=True)
    peaks = [j.prompt + j.response for j in base.jobs]
    memory = max(max(peaks), math.ceil(sum(peaks) / 3))
    meta = dict(base.meta, memory_rule="max(largest peak, ceil(sum of peaks / 3))")
    return Instance(memory=memory, jobs=base.jobs, name=f"azure-arr-n{n}-s{seed}", meta=meta)


def big_instance(tokens: int = 10**7) -> Instance:
    """Three jobs, one with a response of ``tokens``, ``M = tokens + 100``: the long job
    (prompt 50), a wide one (prompt ``tokens − 10``, 100 rounds) that cannot run beside the
    long one for long, and a small one (prompt 70, 20 rounds).  Opt runs the wide and the
    small one at round 0 and the long one at 100: ``tokens + 220`` (the processing bound
    is ``tokens + 120``), so proving it takes a search."""
    return Instance(
        memory=tokens + 100,
        jobs=(
            Job(prompt=50, response=tokens),
            Job(prompt=tokens - 10, response=100),
            Job(prompt=70, response=20),
        ),
        name=f"three-jobs-{tokens}",
        meta={"source": "benchmarks/real_lengths.py big_instance"},
    )


def many_instance(n: int, seed: int = 1) -> Instance:
    """``n`` long jobs for the time-limit test (``--many``): responses 10⁴-10⁵, prompts
    1-5·10⁴ (numpy seed ``seed``), all at round 0, ``M`` three times the largest peak — far
    beyond any model (route ``no-model``), so the heuristic alone must keep the limit."""
    import numpy as np

    rng = np.random.default_rng(seed)
    o = rng.integers(10**4, 10**5, n)
    s = rng.integers(1, 5 * 10**4, n)
    inst = Instance.from_arrays(int((s + o).max() * 3), s.tolist(), o.tolist(), [0] * n)
    return Instance(memory=inst.memory, jobs=inst.jobs, name=f"many-n{n}-s{seed}")


def _one(spec: dict) -> dict:
    """Solve one instance in this process; the result with the peak resident memory."""
    from kvopt.exact import solve

    if spec["kind"] == "big":
        inst = big_instance(spec["tokens"])
    elif spec["kind"] == "many":
        inst = many_instance(spec["n"], spec["seed"])
    elif spec["kind"] == "random":
        from kvopt.generators import generate

        n, r = spec["n"], spec["max_response"]
        inst = generate("random", spec["seed"], n=n, memory=max(6 * n, r + 1), max_response=r)
    elif spec["kind"] == "arrivals":
        inst = arriving_instance(spec["n"], spec["seed"])
    else:
        inst = real_length_instance(spec["n"], spec["seed"], spec.get("scale", 1))
    t0 = time.monotonic()
    res = solve(
        inst,
        objective=spec.get("objective", "total"),
        solver=spec["solver"],
        time_limit=spec["time_limit"],
        threads=spec["threads"],
    )
    wall = time.monotonic() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MB (Linux: KB)
    from kvopt.bound import area_bound
    from kvopt.exact.bounds.conflict import rank_bound

    return {
        "name": inst.name,
        "n": inst.n,
        "memory": inst.memory,
        "rounds": int(inst.responses.sum()),
        "status": res.status.value,
        "objective": res.objective,
        "bound": res.bound,
        "seconds": round(res.seconds, 3),
        "wall": round(wall, 3),
        "rss_mb": round(rss, 1),
        "route": res.route.name if res.route is not None else res.solver,
        "solver": res.solver,
        # the cheap bounds beside the solver's (after the solve, outside its seconds)
        "area": area_bound(inst),
        "rank": rank_bound(inst).value if spec.get("objective", "total") == "total" else None,
        **(_lp(inst, res.objective) if spec.get("lp") and res.objective is not None else {}),
    }


def _lp(inst: Instance, ub: int) -> dict:
    """``--lp``: the time-indexed LP over the windows of the solve's value
    (``models/orders.md`` §10), its bound from the exact prices, its size and seconds."""
    from kvopt.exact.bounds.lagrange import nonzeros, time_indexed_prices
    from kvopt.exact.common import start_windows

    lo, hi = start_windows(inst, "total", ub)
    t0 = time.monotonic()
    p = time_indexed_prices(inst, lo, hi, 120.0)
    return {
        "lp": None if p is None else round(p.lp, 1),
        "lp_bound": None if p is None else p.bound,
        "lp_nonzeros": nonzeros(inst, lo, hi),
        "lp_seconds": round(time.monotonic() - t0, 2),
    }


def _child(spec: dict) -> dict:
    """:func:`_one` in a fresh process (its own peak memory, nothing shared between solves)."""
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--one", json.dumps(spec)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        return {"name": json.dumps(spec), "status": f"error: {out.stderr.strip()[-300:]}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _line(r: dict) -> str:
    if "seconds" not in r:
        return f"{r['name']:<28} {r['status']}"
    return (
        f"{r['name']:<28} n={r['n']:<3} M={r['memory']:<9} Σo={r['rounds']:<9} "
        f"{r['status']:<9} {r['seconds']:8.2f} s {r['rss_mb']:7.0f} MB  "
        f"obj={r['objective']} bound={r['bound']} area={r.get('area')} rank={r.get('rank')} "
        f"route={r['route']}" + (f" lp={r['lp']} ({r['lp_seconds']} s)" if "lp" in r else "")
    )


def _parse_list(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += range(int(a), int(b) + 1)
        else:
            out.append(int(part))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default=",".join(map(str, SIZES)), help="sizes, e.g. 8,10,12,16")
    ap.add_argument("--seeds", default="1-5", help="seeds, e.g. 1-5")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--solver", default="auto")
    ap.add_argument("--objective", default="total", choices=("total", "makespan"))
    ap.add_argument("--scale", action="store_true", help="the scale test (×1, ×10, ×100)")
    ap.add_argument("--scale-n", type=int, default=10)
    ap.add_argument("--big", action="store_true", help="the three-job instance")
    ap.add_argument(
        "--many",
        help="the time-limit test: many_instance(n) for each n of this list (e.g. 400,1000,2000)",
    )
    ap.add_argument("--big-tokens", type=int, default=10**7)
    ap.add_argument(
        "--max-response",
        type=int,
        help="instead of the trace: generate('random', seed, n=n, memory=max(6n, R + 1), "
        "max_response=R), the moderate horizons between the small path and the trace",
    )
    ap.add_argument(
        "--arrivals",
        action="store_true",
        help="consecutive requests of the trace with their arrival times (arriving_instance)",
    )
    ap.add_argument(
        "--lp",
        action="store_true",
        help="after each solve, the time-indexed LP over the windows of its value "
        "(models/orders.md §10)",
    )
    ap.add_argument("--one", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(_one(json.loads(a.one))))
        return 0
    common = {
        "solver": a.solver,
        "time_limit": a.time_limit,
        "threads": a.threads,
        "objective": a.objective,
        **({"lp": True} if a.lp else {}),
    }
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} load {os.getloadavg()[0]:.2f} {common}")
    if a.big:
        r = _child({"kind": "big", "tokens": a.big_tokens, **common})
        print(_line(r), flush=True)
        return 0
    if a.many:
        for n in _parse_list(a.many):
            r = _child({"kind": "many", "n": n, "seed": 1, **common})
            print(_line(r) + f" wall={r.get('wall')} s", flush=True)
        return 0
    if a.scale:
        for scale in (1, 10, 100):
            spec = {"kind": "trace", "n": a.scale_n, "seed": 1, "scale": scale, **common}
            print(_line(_child(spec)), flush=True)
        return 0
    seeds = _parse_list(a.seeds)
    summary = []
    for n in _parse_list(a.n):
        rows = []
        for seed in seeds:
            if a.arrivals:
                spec = {"kind": "arrivals", "n": n, "seed": seed}
            elif a.max_response:
                spec = {"kind": "random", "n": n, "seed": seed, "max_response": a.max_response}
            else:
                spec = {"kind": "trace", "n": n, "seed": seed}
            r = _child({**spec, **common})
            print(_line(r), flush=True)
            rows.append(r)
        proven = sum(r.get("status") == "optimal" for r in rows)
        secs = [r["seconds"] for r in rows if "seconds" in r]  # unproven: the time limit
        med = statistics.median(secs) if secs else float("nan")
        summary.append((n, proven, len(rows), med, max(secs) if secs else float("nan")))
    print("\n| n | proven | median s | max s |\n|---|---|---|---|")
    for n, proven, total, med, mx in summary:
        print(f"| {n} | {proven}/{total} | {med:.2f} | {mx:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
