"""Simulation speed at scale: the Azure conversation trace tiled, every built-in policy (issue 54).

    python benchmarks/simulate.py [--sizes 100000,1000000] [--policies mcsf,...] [--memory 16492]
                                  [--rounds-per-second 50] [--offline] [--inner] [--keep DIR]

Instance: the bundled Azure LLM inference trace 2023, conversation file (19,366
requests, all usable at ``M = 16,492``), with arrivals at
``⌊(t_i − t_first) · rounds_per_second⌋`` (``kvopt gen trace`` with
``arrivals=true``), **tiled**: copy ``c`` of the trace arrives ``c · (span + 1)``
rounds after copy 0, ``span`` being the last arrival round of one copy; a size
``n`` takes the first ``n`` requests of the tiling (:func:`tiled_instance`).
``--offline`` sets every arrival to round 0, the instances of the offline policies
(``rect``, ``route``, ``blackbox``, ``gsa``, ``sps``, … refuse arrivals; this was the
benchmark of issue 4).

For every size it writes the instance JSON once (not timed), then for every
built-in policy that applies to it times **the whole command**
``python -m kvopt simulate FILE --policy NAME --out SCHEDULE`` in a fresh process
(start-up, load, simulation, the schedule checker, writing the schedule) and
prints the seconds and requests per second (and the command's CPU seconds, user +
system: on a shared machine the wall time also counts the waits for a core), then the
growth factor of the time
between the first and the last size (``×10`` requests at linear cost gives
``×10``).  ``--inner`` also times the simulation alone in this process
(:func:`kvopt.simulation.simulate`: engine + policy, checker listed apart).
Policies whose class rule excludes the instance (``kvopt policies --check``)
are listed as skipped.  Timings on a shared machine are noisy: the script
prints ``os.getloadavg()`` beside each figure.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kvopt.errors import InputError
from kvopt.instance import Instance, Job, save_instance
from kvopt.policy import POLICIES
from kvopt.serving.trace import bundled_trace_dir, trace_instance
from kvopt.simulation import simulate

CONV = bundled_trace_dir() / "AzureLLMInferenceTrace_conv.csv"


def tiled_instance(
    n: int, memory: int = 16492, rounds_per_second: float = 50.0, offline: bool = False
) -> Instance:
    """The first ``n`` requests of the conversation trace tiled end to end (see the module);
    ``offline``: all at round 0."""
    one = trace_instance(CONV, n=19366, memory=memory, arrivals=True,
                         rounds_per_second=rounds_per_second)  # fmt: skip
    period = max(j.arrival for j in one.jobs) + 1
    k = len(one.jobs)
    jobs = tuple(
        Job(
            j.prompt,
            j.response,
            0 if offline else j.arrival + (i // k) * period,
            f"c{i // k}-{j.id}",
        )
        for i, j in ((i, one.jobs[i % k]) for i in range(n))
    )
    meta = {"source": f"{CONV.name} tiled", "requests": n, "copy": k, "period": period}
    name = f"azure-conv-tiled-n{n}" + ("-offline" if offline else "")
    return Instance(memory, jobs, name=name, meta=meta)


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="19366,193660")
    ap.add_argument("--policies", default="", help="comma-separated (default: every built-in)")
    ap.add_argument("--memory", type=int, default=16492)
    ap.add_argument("--rounds-per-second", type=float, default=50.0)
    ap.add_argument("--offline", action="store_true", help="every request arrives at round 0")
    ap.add_argument("--inner", action="store_true", help="also time the simulation in-process")
    ap.add_argument("--keep", help="write the instances and schedules here (default: a temp dir)")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    names = [x.strip() for x in args.policies.split(",") if x.strip()] or list(POLICIES)
    tmp = tempfile.TemporaryDirectory() if args.keep is None else None
    where = Path(args.keep if args.keep is not None else tmp.name).resolve()  # type: ignore[union-attr]
    where.mkdir(parents=True, exist_ok=True)
    arrive = "all at round 0" if args.offline else f"{args.rounds_per_second} rounds/s"
    print(f"trace {CONV.name} tiled, M = {args.memory}, {arrive}")
    print(f"{'policy':18s} {'n':>8s} {'command_s':>9s} {'req/s':>8s} {'cpu_s':>7s} "
          f"{'sim_s':>7s} {'check_s':>7s}  load")  # fmt: skip
    times: dict[str, dict[int, float]] = {}
    for n in sizes:
        inst = tiled_instance(n, args.memory, args.rounds_per_second, args.offline)
        path = where / f"{inst.name}.json"
        save_instance(inst, path)
        for name in names:
            try:
                POLICIES[name].check_applies(inst)
            except InputError as err:
                print(f"{name:18s} {n:8d} skipped: {err.rule}", flush=True)
                continue
            out = where / f"{inst.name}.{name}.schedule.json"
            cmd = [sys.executable, "-m", "kvopt", "simulate", str(path), "--policy", name]
            if POLICIES[name].seeded:
                cmd += ["--seed", "0"]
            t0 = time.perf_counter()
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            # run from the instance's folder: ``-m`` puts the working directory first on
            # sys.path, so a checkout's own kvopt would shadow PYTHONPATH's
            subprocess.run([*cmd, "--out", str(out)], check=True, capture_output=True, cwd=where)
            sec = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
            times.setdefault(name, {})[n] = sec
            sim = chk = ""
            if args.inner:
                t0 = time.perf_counter()
                res = simulate(inst, name, seed=0 if POLICIES[name].seeded else None)
                whole = time.perf_counter() - t0
                sim, chk = f"{res.stats.seconds:7.2f}", f"{whole - res.stats.seconds:7.2f}"
            print(f"{name:18s} {n:8d} {sec:9.2f} {n / sec:8.0f} {cpu:7.2f} {sim:>7s} {chk:>7s}  "
                  f"{_load()}", flush=True)  # fmt: skip
    if len(sizes) >= 2:
        a, b = sizes[0], sizes[-1]
        print(f"growth of the command's time from {a} to {b} requests (×{b / a:g} requests):")
        for name, t in times.items():
            if a in t and b in t:
                print(f"  {name:18s} ×{t[b] / t[a]:.2f}")
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
