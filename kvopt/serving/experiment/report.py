"""The summary, the report and the plots of an experiment's result (SPEC §10).

:func:`summary_csv` (``summary.csv``: per policy, load and metric, the mean over seeds with
the range over seeds below 10 seeds, else its 95 % bootstrap interval; SPEC §10.1, "Reports"),
:func:`report_markdown` (``report.md``),
:func:`plot_latency_vs_load` and :func:`plot_latency_cdf` (its two plots), and
:func:`write_report`, which writes the report with its plots.  They read an
:class:`~kvopt.serving.experiment.ExperimentResult` only (:mod:`kvopt.serving.experiment.core` runs the cells).
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...fileio import write_bytes_atomic
from ..seconds import METRICS

if TYPE_CHECKING:
    from .core import ExperimentResult

#: The metrics of ``summary.csv`` (every numeric column of a row that varies by cell).
SUMMARY_METRICS = (*METRICS, "total_latency", "bound", "ratio", "makespan_seconds")


def summary_csv(result: ExperimentResult) -> str:
    """One row per (policy, load, metric): the mean over seeds, ``low`` and ``high`` and what
    they are (``interval``: ``range``, the min and max over fewer than 10 seeds, or
    ``bootstrap95``, the 95 % bootstrap interval of the mean; :func:`~.core.seed_interval`)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["experiment", "policy", "load", "metric", "mean", "low", "high", "interval",
                "seeds"])  # fmt: skip
    exp = result.experiment
    kind = result.interval_kind()
    for metric in SUMMARY_METRICS:
        summ = result.summary(metric)
        for p in exp.policies:
            for load in exp.loads:
                if (p, load) in summ:
                    m, lo, hi = summ[(p, load)]
                    w.writerow([exp.name, p, load, metric, m, lo, hi, kind, len(exp.seeds)])
    return buf.getvalue()


# ---------------------------------------------------------------------------------- report
def _load_label(load: float | str) -> str:
    return load if isinstance(load, str) else f"{load:g}"


def _fmt(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.4g}"


def _usable_text(wl) -> str:
    """Which of the trace's requests the draws come from: those that fit M (and the caps)."""
    usable, total = wl.usable()
    if usable == total:
        return f"; drawn from all {total:,} requests of the trace"
    caps = " and within max_prompt / max_response" if (
        wl.max_prompt is not None or wl.max_response is not None) else ""  # fmt: skip
    return (f"; drawn from the {usable:,} of the trace's {total:,} requests that fit "
            f"(prompt + response <= M{caps}; the others are left out)")  # fmt: skip


def _redrawn_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """How many requests were drawn again (``s + o > M``), per seed: the lengths are those of
    the distributions given that a request fits (:mod:`kvopt.serving.lengths`)."""
    by_seed: dict[int, int] = {}
    for r in rows:
        if r.get("redrawn") is not None:
            by_seed.setdefault(r["seed"], int(r["redrawn"]))
    if not by_seed:
        return ""
    vals = sorted(by_seed.values())
    span = f"{vals[0]:,}" if vals[0] == vals[-1] else f"{vals[0]:,}–{vals[-1]:,}"
    return (
        f"; {span} requests per seed redrawn because prompt + response > M (the lengths "
        "are the distributions' given that a request fits)"
    )


def _workload_text(wl, rows: Sequence[Mapping[str, Any]]) -> str:
    cap = f", batch cap {wl.max_batch}" if wl.max_batch is not None else ""
    if wl.drawn:
        return (f"* **Workload**: lengths from {wl.lengths_text()}, n = {wl.n} requests, "
                f"M = {wl.memory}{cap}, arrivals `{wl.arrivals}`"
                + (f" (timestamps of trace `{wl.trace}`)" if wl.arrivals == "trace" else "")
                + _redrawn_text(rows))  # fmt: skip
    return (f"* **Workload**: trace `{wl.trace}`, n = {wl.n} requests, M = {wl.memory}{cap}, "
            f"arrivals `{wl.arrivals}`, lengths `{wl.lengths}`"
            + (", paired" if wl.paired else "") + _usable_text(wl))  # fmt: skip


def _setup_text(exp) -> list[str]:
    """The serving setup (SPEC §10.1) and its budget's arithmetic, when the experiment names one."""
    s = exp.setup
    if s is None:
        return []
    cap = "no cap" if s.max_batch is None else f"cap {s.max_batch}"
    steps = "; ".join(s.arithmetic().split("\n"))
    return [f"* **Setup**: `{s.name}` — M = {s.memory:,}, {cap} ({steps}); {s.source}"]


def report_markdown(result: ExperimentResult, plots: Sequence[str] = ()) -> str:
    """The markdown report: what ran, then one table per metric (the mean over seeds [its
    range below 10 seeds, else its 95 % bootstrap interval], as the report says)."""
    exp = result.experiment
    tm = exp.time_model
    wl = exp.workload
    lines = [f"# Experiment `{exp.name}`", ""]
    if exp.description:
        lines += [exp.description, ""]
    lines += [
        f"* **Time model**: `{tm.label()}` — {tm.source}"
        + (f"; fit error {tm.fit_error}" if tm.fit_error else ""),
        _workload_text(wl, result.rows),
        *_setup_text(exp),
        f"* **Loads** (requests per second): {', '.join(_load_label(x) for x in exp.loads)}; "
        f"**seeds**: {', '.join(map(str, exp.seeds))}",
        f"* **Policies**: {', '.join(f'`{p}`' for p in exp.policies)}",
        "* **Bound**: each cell's `ratio` is the policy's total latency over a lower bound on "
        "Opt's total latency for the same requests, arrival times and time model (SPEC §10; "
        "`kvopt.serving.seconds`), so it is at least the true ratio to Opt.",
    ]
    if exp.notes:
        lines += [f"* **Notes**: {exp.notes}"]
    from .core import interval_words

    lines += ["", f"Each entry: the mean over seeds [{interval_words(len(exp.seeds))}].", ""]
    for metric in exp.metrics:
        summ = result.summary(metric)
        lines += [f"## {metric}", ""]
        head = "| policy | " + " | ".join(f"load {_load_label(x)}" for x in exp.loads) + " |"
        lines += [head, "|---|" + "---:|" * len(exp.loads)]
        for p in exp.policies:
            cells = []
            for load in exp.loads:
                m, lo, hi = summ.get((p, load), (math.nan,) * 3)
                cells.append(_fmt(m) if lo == hi else f"{_fmt(m)} [{_fmt(lo)}, {_fmt(hi)}]")
            lines.append(f"| `{p}` | " + " | ".join(cells) + " |")
        lines.append("")
    for pth in plots:
        lines += [f"![{Path(pth).stem}]({Path(pth).name})", ""]
    lines += [f"Rows: `{Path(result.out).name}/results.csv` ({len(result.rows)} cells).", ""]
    return "\n".join(lines)


def plot_latency_vs_load(result: ExperimentResult, path: str | os.PathLike,
                         metrics: Sequence[str] = ("mean_latency", "p95_latency")) -> str:  # fmt: skip
    """Mean over seeds of each metric against load, one line per policy, with a band: the
    range over seeds below 10 seeds, else the 95 % bootstrap interval (the title says which)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    exp = result.experiment
    xs = list(range(len(exp.loads)))
    fig, axes = plt.subplots(1, len(metrics), figsize=(6 * len(metrics), 4.2), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        summ = result.summary(metric)
        for p in exp.policies:
            pts = [summ.get((p, load), (math.nan,) * 3) for load in exp.loads]
            ax.plot(xs, [x[0] for x in pts], marker="o", label=p)
            ax.fill_between(xs, [x[1] for x in pts], [x[2] for x in pts], alpha=0.2)
        ax.set_xticks(xs, [_load_label(x) for x in exp.loads])
        ax.set_xlabel("load (requests per second)")
        timed = "latency" in metric or "ttft" in metric or "per_token" in metric
        ax.set_ylabel(f"{metric} (s)" if timed else metric)
        if summ and all(v[0] > 0 for v in summ.values()):
            ax.set_yscale("log")
        ax.set_title(f"{metric}", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    band = ("band: range over seeds (min–max)" if result.interval_kind() == "range"
            else "band: 95 % bootstrap interval")  # fmt: skip
    fig.suptitle(f"{exp.name}: mean over {len(exp.seeds)} seed(s), {band}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


def plot_latency_cdf(result: ExperimentResult, path: str | os.PathLike) -> str:
    """Per-request latency CDFs, one panel per load, seeds pooled."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    exp = result.experiment
    k = len(exp.loads)
    cols = min(k, 4)
    rows = (k + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.0 * rows), squeeze=False)
    by = {(c.policy, c.load): [] for c in exp.cells()}
    for c in exp.cells():
        by[(c.policy, c.load)] += result.latencies.get(c.key, [])
    for i, load in enumerate(exp.loads):
        ax = axes[i // cols][i % cols]
        for p in exp.policies:
            v = np.sort(np.asarray(by[(p, load)], dtype=float))
            if v.size:
                ax.plot(v, np.arange(1, v.size + 1) / v.size, label=p)
        ax.set_xscale("log")
        ax.set_title(f"load {_load_label(load)}", fontsize=9)
        ax.set_xlabel("latency (s)", fontsize=8)
        ax.grid(alpha=0.3)
    for j in range(k, rows * cols):
        axes[j // cols][j % cols].axis("off")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"{exp.name}: per-request end-to-end latency CDF", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


def exp_metrics(result: ExperimentResult) -> list[str]:
    """The report's metrics, the latency ones first (for the plot)."""
    ms = list(result.experiment.metrics)
    return [m for m in ms if "latency" in m or "per_token" in m] + [
        m for m in ms if not ("latency" in m or "per_token" in m)
    ]


def write_report(result: ExperimentResult) -> list[str]:
    """``report.md`` with its two plots, in the result's folder; returns the files written."""
    out = Path(result.out)
    first = [m for m in exp_metrics(result) if m != "ratio"][:2] or ["mean_latency"]
    plots = [plot_latency_vs_load(result, out / "latency-vs-load.png", first),
             plot_latency_cdf(result, out / "latency-cdf.png")]  # fmt: skip
    md = out / "report.md"
    write_bytes_atomic(md, report_markdown(result, plots).encode("utf-8"))
    return [str(md), *plots]


__all__ = [
    "SUMMARY_METRICS",
    "exp_metrics",
    "plot_latency_cdf",
    "plot_latency_vs_load",
    "report_markdown",
    "summary_csv",
    "write_report",
]
