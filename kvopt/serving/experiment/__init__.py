"""Experiments as data (SPEC §10): a declarative grid run cell by cell, resumable, with a report.

An experiment (a TOML file for ``kvopt experiment run``, or a dict for
:func:`run_experiment`) names a workload (:class:`kvopt.serving.workload.Workload`), a time
model (:mod:`kvopt.serving.timemodel`), policies (built-in names, ``NAME[K=V;…]``, or
references to your own, SPEC §4), loads (rates in requests per second, or
``"burst"``) and seeds.  A policy written ``oracle:NAME`` runs on the true lengths
(the workload's ``prediction_noise`` predictions removed), as the papers' oracle
variants do::

    name = "example"
    time_model = "llama2-70b-a100-tp2"        # or {c0 = 0.02, c_b = 1e-4}
    policies = ["fcfs", "sjf", "mcsf", "my_policy.py:MyPolicy"]
    loads = ["burst", 2, 8]                   # requests per second
    seeds = 3                                 # or a list [0, 1, 2]
    notes = "what stands in for what"         # goes into the report

    [workload]
    trace = "azure-conv"
    n = 200
    memory = 16492
    arrivals = "poisson"                      # burst | poisson | trace

Instead of ``trace``, lengths may come from distributions (``prompt = "lognormal(mean=40.62,
median=11)"``, ``response = "…"``; a relative ``empirical(PATH, …)`` is read beside the
file) or a named ``profile`` (:mod:`kvopt.serving.lengths`); each row's ``redrawn`` counts
the requests drawn again because ``prompt + response > memory``, and the report says it.

**Setups.**  ``setup = "NAME"`` (a preset of ``kvopt setups``) or a ``[setup]`` table
(:func:`kvopt.serving.setups.get_setup`: a model's config, GPU, TP, memory fraction, cap)
sets the workload's ``memory`` and ``max_batch`` and the time model (SPEC §10.1).  A
``memory`` or ``max_batch`` in ``[workload]`` next to it is an error; an explicit
``time_model`` overrides the setup's.  The setup is part of every cell's key and of the
report (its budget's arithmetic).

**Cells.**  One cell is one (policy, load, seed): the workload's timed instance for
that load and seed (the same requests for every policy), the policy simulated under the
time model, and every metric of :func:`kvopt.serving.seconds.seconds_report` with the lower
bound on Opt's total latency and the ratio.  Each cell is written to
``OUT/cells/<key>.json`` as soon as it finishes; its key is the SHA-256 of everything
that determines it (workload, time model, policy with its parameters and — for a
reference to a file — the file's SHA-256, load, seed, kvopt's cell format).  A rerun
resumes: a cell whose key is on disk is not run again, so Ctrl-C loses no finished cell;
a changed experiment starts anew, since every cell it changes has a new key (cells of
the old one stay on disk, unused; an unchanged cell — say after adding a seed — is
reused).

**Results.**  ``OUT/results.csv``, one tidy row per cell (columns :data:`COLUMNS`),
``OUT/summary.csv`` (per policy, load and metric: the mean over seeds with the range
over seeds below :data:`BOOTSTRAP_MIN_SEEDS` (10) seeds, else its 95 % bootstrap interval;
SPEC §10.1, "Reports"), ``OUT/experiment.json`` (the experiment as run), and ``OUT/report.md``
with the plots ``OUT/latency-vs-load.png`` (the report's first two latency metrics, mean
over seeds with the same range or interval as a band) and ``OUT/latency-cdf.png`` (per-request latency
CDFs, seeds pooled).

Bad input (an unknown key, preset or policy, a negative coefficient, ``c0 = 0``, a rate
≤ 0, a trace without the needed columns) raises :class:`~kvopt.errors.InputError`, one
line naming the file and the field, before any cell runs.
"""

from __future__ import annotations

from .core import (
    BOOTSTRAP_MIN_SEEDS,
    CELL_FORMAT,
    COLUMNS,
    ORACLE,
    REPORT_METRICS,
    Cell,
    Experiment,
    ExperimentResult,
    bootstrap_ci,
    cell_instance,
    load_experiment,
    run_cell,
    run_experiment,
    seed_interval,
)
from .report import (
    SUMMARY_METRICS,
    exp_metrics,
    plot_latency_cdf,
    plot_latency_vs_load,
    report_markdown,
    summary_csv,
    write_report,
)

__all__ = [
    "CELL_FORMAT",
    "COLUMNS",
    "ORACLE",
    "REPORT_METRICS",
    "SUMMARY_METRICS",
    "Cell",
    "Experiment",
    "ExperimentResult",
    "BOOTSTRAP_MIN_SEEDS",
    "bootstrap_ci",
    "seed_interval",
    "cell_instance",
    "exp_metrics",
    "load_experiment",
    "plot_latency_cdf",
    "plot_latency_vs_load",
    "report_markdown",
    "run_cell",
    "run_experiment",
    "summary_csv",
    "write_report",
]
