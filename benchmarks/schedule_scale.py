"""Columnar schedules at the scale of ``route-online`` at 10⁶ requests (issue 54).

    python benchmarks/schedule_scale.py [--jobs 1000000] [--per-job 35] [--objects]

Builds a valid synthetic schedule of ``jobs × per-job`` attempts with numpy (job ``i``
arrives at round ``i`` with prompt 1 and response 2, and is killed after one round
``per-job − 1`` times before it runs to completion: many short attempts, as Route's
restarts make them, on a memory of 16,492 that they never fill) and times, in CPU
seconds of this process (``time.process_time``) with the wall seconds and
``os.getloadavg()`` beside them:

* ``from_columns``: :meth:`Schedule.from_columns` of the four arrays;
* ``check``: :func:`check_schedule` (must say valid);
* ``save``: :func:`save_schedule` to a temporary folder (the file's size is printed);
* ``load``: :func:`load_schedule` of that file (read as columns);
* ``check(load)``: the checker on what was read (``kvopt check``'s work).

``--objects`` also times the same steps the way an attempt-built schedule takes them
(``Schedule(tuple of Attempt)``, its checker, writer and ``load_schedule`` through
``json`` with the columnar reader switched off): use it at a smaller ``--jobs``, it needs
several GB per 10⁷ attempts.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import kvopt.schedule as schedule_module
from kvopt.instance import Instance
from kvopt.schedule import Attempt, Schedule, check_schedule, load_schedule, save_schedule


def synthetic(jobs: int, per_job: int) -> tuple[Instance, tuple[np.ndarray, ...]]:
    """The instance and the columns ``(job, start, rounds, completed)``, by start then job."""
    inst = Instance.from_arrays(16_492, [1] * jobs, [2] * jobs, range(jobs), name="scale")
    job = np.repeat(np.arange(jobs, dtype=np.int64), per_job)
    step = np.tile(np.arange(per_job, dtype=np.int64), jobs)
    start = job + step
    last = step == per_job - 1
    rounds = np.where(last, 2, 1).astype(np.int64)
    order = np.lexsort((job, start))
    return inst, (job[order], start[order], rounds[order], last[order])


def _timed(label: str, fn, *args):
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn(*args)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    print(f"{label:24s} {cpu:8.2f} {wall:8.2f}   load {os.getloadavg()[0]:.1f}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1_000_000)
    ap.add_argument("--per-job", type=int, default=35)
    ap.add_argument("--objects", action="store_true", help="also time attempt-built schedules")
    args = ap.parse_args(argv)
    inst, cols = synthetic(args.jobs, args.per_job)
    k = len(cols[0])
    print(f"{k:,} attempts of {inst.n:,} jobs; CPU s, wall s")
    print(f"{'step':24s} {'cpu':>8s} {'wall':>8s}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "schedule.json"
        sched = _timed("from_columns", lambda: Schedule.from_columns(*cols, memory=inst.memory))
        res = _timed("check", check_schedule, inst, sched)
        assert res.valid, res.errors[:3]
        _timed("save", save_schedule, sched, path, inst.n)
        print(f"  file: {path.stat().st_size / 1e9:.2f} GB")
        back = _timed("load", load_schedule, path)
        assert back._columns() is not None and back == sched
        assert _timed("check(load)", check_schedule, inst, back).valid
        del back, sched
        if args.objects:
            atts = _timed(
                "objects: build", lambda: tuple(map(Attempt, *(c.tolist() for c in cols)))
            )
            obj = Schedule(atts, inst.memory)
            assert _timed("objects: check", check_schedule, inst, obj).valid
            _timed("objects: save", save_schedule, obj, path, inst.n)
            keep = schedule_module.read_columnar
            schedule_module.read_columnar = lambda p: None  # the json path of load_schedule
            try:
                _timed("objects: load (json)", load_schedule, path)
            finally:
                schedule_module.read_columnar = keep
    return 0


if __name__ == "__main__":
    sys.exit(main())
