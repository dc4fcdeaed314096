"""``kvopt experiment run EXP.toml [--out DIR] [--workers K] [--scheduler ADDRESS] [--json]``.

Runs (or resumes) a declarative experiment (SPEC §10; the file format is
:mod:`kvopt.serving.experiment`): one cell per (policy, load, seed), each saved as it
finishes under ``DIR/cells/``, then ``DIR/results.csv`` (one tidy row per cell),
``DIR/report.md`` and its plots.  Progress goes to stderr.  Ctrl-C stops it (exit
130) without losing a finished cell; the same command resumes.  Bad input (an unknown
preset or policy, a negative coefficient, ``c0 = 0``, a rate ≤ 0, a trace without the
needed columns) exits 2 with one line, before any cell runs.  JSON: ``experiment``,
``out``, ``cells``, ``ran``, ``reused``, ``files``.
"""

from __future__ import annotations

from .common import emit_json, positive_int


def add_parser(sub) -> None:
    p = sub.add_parser(
        "experiment",
        help="run a declarative experiment in seconds (latency against load, with bounds)",
        description="Experiments in seconds (SPEC §10): a grid of policies × loads × seeds "
        "on a workload under a time model; a tidy CSV, a markdown report and plots.",
    )
    sub2 = p.add_subparsers(dest="action", metavar="ACTION")
    sub2.required = True
    r = sub2.add_parser("run", help="run or resume an experiment file (TOML)",
                        description="Run or resume EXP.toml; finished cells are kept.")  # fmt: skip
    r.add_argument("file", metavar="EXP.toml", help="experiment file")
    r.add_argument("--out", metavar="DIR", help="results folder (default <name>-results in the "
                   "current folder, wherever the file is)")  # fmt: skip
    r.add_argument("--workers", type=positive_int("--workers"), default=1,
                   help="local worker processes (default 1)")  # fmt: skip
    r.add_argument("--scheduler", metavar="ADDRESS", help="run the cells on this Dask scheduler")
    r.add_argument("--no-report", action="store_true", help="write the CSV only")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.set_defaults(func=run)


def run(args) -> int:
    from ..serving.experiment import run_experiment

    res = run_experiment(args.file, args.out, workers=args.workers, scheduler=args.scheduler,
                         progress=True, report=not args.no_report)  # fmt: skip
    if args.json:
        emit_json({"experiment": res.experiment.name, "out": res.out, "cells": len(res.rows),
                   "ran": res.ran, "reused": res.reused, "files": list(res.files)})  # fmt: skip
        return 0
    print(f"experiment {res.experiment.name}: {len(res.rows)} cells "
          f"({res.ran} run, {res.reused} reused) in {res.out}")  # fmt: skip
    for f in res.files:
        print(f"wrote {f}")
    return 0
