"""The grid of an experiment (SPEC §10): :class:`Experiment`, its cells, running them.

See :mod:`kvopt.serving.experiment` for the file format, the cells and the results; the summary,
the report and its plots are :mod:`kvopt.serving.experiment.report`.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InputError, Interrupted, did_you_mean
from ...fileio import read_json, write_bytes_atomic, write_json_atomic
from ...logs import progress_logger
from ...simulation import simulate
from ..lengths import Empirical, parse_length
from ..seconds import METRICS, seconds_report
from ..setups import Setup, apply_setup, get_setup
from ..timemodel import PRESETS, TimeModel, parse_time_model
from ..workload import BUNDLED, Workload
from .intervals import (
    BOOTSTRAP_MIN_SEEDS,
    bootstrap_ci,
    interval_kind,
    interval_words,
    seed_interval,
)
from .report import summary_csv, write_report

#: Version of the cell file; part of every cell's key.
CELL_FORMAT = 2  # 2: the srpt bound (kvopt.serving.seconds)
#: The columns of ``results.csv``, in order.
COLUMNS = (
    "experiment",
    "policy",
    "load",
    "seed",
    "n",
    "memory",
    "time_model",
    *METRICS,
    "total_latency",
    "bound",
    "bound_name",
    "ratio",
    "total_completion_rounds",
    "makespan_rounds",
    "makespan_seconds",
    "wall_seconds",
    "redrawn",  # requests redrawn because prompt + response > M (length distributions; else empty)
)
#: Metrics the report tabulates unless the experiment lists its own (``metrics = [...]``).
REPORT_METRICS = ("mean_latency", "p95_latency", "mean_per_token", "throughput", "ratio")
_KEYS = {"name", "description", "notes", "workload", "time_model", "setup", "policies", "loads",
         "seeds", "metrics"}  # fmt: skip


@dataclass(frozen=True)
class Experiment:
    """A declarative grid (module docstring); build with :meth:`from_dict` or :func:`load_experiment`."""

    name: str
    workload: Workload
    time_model: TimeModel
    policies: tuple[str, ...]
    loads: tuple[float | str, ...]
    seeds: tuple[int, ...]
    description: str = ""
    notes: str = ""
    metrics: tuple[str, ...] = REPORT_METRICS
    base: str = field(default="", compare=False)  # folder that relative policy files are in
    setup: Setup | None = None  # a serving setup (SPEC §10.1): it set memory, max_batch, time model

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "experiment",
                  base: str = "") -> Experiment:  # fmt: skip
        """Check every field once; errors name ``source`` and the field."""
        from ...policy import resolve_policy

        if not isinstance(d, Mapping):
            raise InputError("must be a table (a dict)", source=source)
        unknown = sorted(set(d) - _KEYS)
        if unknown:
            raise InputError(f"unknown key (allowed: {', '.join(sorted(_KEYS))})"
                             + did_you_mean(unknown[0], _KEYS), field=unknown[0], source=source)  # fmt: skip
        for key in ("workload", "policies"):
            if key not in d:
                raise InputError("missing required field", field=key, source=source)
        name = d.get("name", "experiment")
        if not isinstance(name, str) or not name or "/" in name:
            raise InputError(f"must be a non-empty string without '/', got {name!r}",
                             field="name", source=source)  # fmt: skip
        if not isinstance(d["workload"], Mapping):
            raise InputError("must be a table", field="workload", source=source)
        wl_d = dict(d["workload"])
        trace = wl_d.get("trace")
        if isinstance(trace, str) and base and trace not in BUNDLED and not os.path.isabs(trace):
            wl_d["trace"] = os.path.normpath(os.path.join(base, trace))  # beside the file
        for key in ("prompt", "response"):  # an empirical CSV is read beside the file too
            if isinstance(wl_d.get(key), str) and base:
                try:
                    dist = parse_length(wl_d[key], field=key, base=base)
                except InputError:
                    dist = None  # Workload.from_dict reports it, as for every field
                if isinstance(dist, Empirical):
                    wl_d[key] = str(dist)
        setup = None
        if "setup" in d:
            try:
                setup = get_setup(d["setup"], source=source, base=base)
            except InputError as err:
                if err.field:
                    raise
                raise InputError(err.rule, field="setup", source=source) from None
            wl_d = apply_setup(wl_d, setup, source)
        wl = Workload.from_dict(wl_d, source=f"{source}: workload")
        tm_raw = d.get("time_model", "unit")
        try:
            tm = parse_time_model(tm_raw, source="time_model")
        except InputError as err:
            raise InputError(err.rule, field=err.field or "time_model", source=source) from None
        if setup is not None and "time_model" not in d:
            assert setup.time_model is not None
            tm = setup.time_model  # an explicit time_model next to the setup overrides it
        pols = d["policies"]
        if isinstance(pols, str) or not isinstance(pols, Sequence) or not pols:
            raise InputError("must be a non-empty list of policy names or references",
                             field="policies", source=source)  # fmt: skip
        labels = []
        for k, p in enumerate(pols):
            if not isinstance(p, str):
                raise InputError(f"must be a string, got {p!r}", field=f"policies[{k}]",
                                 source=source)  # fmt: skip
            oracle, body = _oracle(p.strip())
            p = (
                ORACLE + _absolute_reference(body, base)
                if oracle
                else _absolute_reference(body, base)
            )
            try:
                resolve_policy(_oracle(p)[1])  # checked here; each cell resolves its own
            except InputError as err:
                raise InputError(err.rule, field=f"policies[{k}]", source=source) from None
            labels.append(p)
        default_loads: list[Any] = ["burst"] if wl.arrivals == "burst" else []
        loads_raw = d.get("loads", default_loads)
        if not isinstance(loads_raw, Sequence) or isinstance(loads_raw, str) or not loads_raw:
            raise InputError("must be a non-empty list of rates (requests per second) or "
                             "\"burst\"", field="loads", source=source)  # fmt: skip
        loads: list[float | str] = []
        for k, x in enumerate(loads_raw):
            if x == "burst":
                loads.append("burst")
                continue
            if x == "trace" and wl.arrivals == "trace":
                loads.append("trace")  # the trace's own timestamps, not rescaled
                continue
            try:
                wl.check_load(x)
            except InputError as err:
                raise InputError(err.rule, field=f"loads[{k}]", source=source) from None
            if wl.arrivals == "burst":
                raise InputError("a rate with burst arrivals: use \"burst\" or arrivals = "
                                 "\"poisson\"", field=f"loads[{k}]", source=source)  # fmt: skip
            loads.append(float(x))
        seeds_raw = d.get("seeds", 1)
        if isinstance(seeds_raw, int) and not isinstance(seeds_raw, bool):
            if seeds_raw < 1:
                raise InputError(f"must be >= 1, got {seeds_raw}", field="seeds", source=source)
            seeds = tuple(range(seeds_raw))
        elif (
            isinstance(seeds_raw, Sequence)
            and seeds_raw
            and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds_raw)
        ):
            seeds = tuple(int(s) for s in seeds_raw)
        else:
            raise InputError(f"must be a count >= 1 or a list of integers >= 0, got "
                             f"{seeds_raw!r}", field="seeds", source=source)  # fmt: skip
        metrics = d.get("metrics", list(REPORT_METRICS))
        allowed = set(METRICS) | {"ratio", "total_latency"}
        if (
            not isinstance(metrics, Sequence)
            or isinstance(metrics, str)
            or not all(m in allowed for m in metrics)
        ):
            raise InputError(f"must be a list of metrics from {', '.join(sorted(allowed))}",
                             field="metrics", source=source)  # fmt: skip
        for key in ("description", "notes"):
            if not isinstance(d.get(key, ""), str):
                raise InputError("must be a string", field=key, source=source)
        return cls(name, wl, tm, tuple(labels), tuple(loads), seeds, d.get("description", ""),
                   d.get("notes", ""), tuple(metrics), base, setup)  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "notes": self.notes,
            "workload": self.workload.to_dict(),
            "time_model": self.time_model.to_dict(),
            **({"setup": self.setup.to_dict()} if self.setup is not None else {}),
            "policies": list(self.policies),
            "loads": list(self.loads),
            "seeds": list(self.seeds),
            "metrics": list(self.metrics),
        }

    def cells(self) -> list[Cell]:
        """Every (policy, load, seed), seed-major so that early cells cover every policy."""
        return [Cell(self, p, load, s) for s in self.seeds for load in self.loads
                for p in self.policies]  # fmt: skip


#: Prefix of a policy run on the true lengths (the workload's predictions removed).
ORACLE = "oracle:"


def _oracle(label: str) -> tuple[bool, str]:
    """``("oracle:sjf")`` → ``(True, "sjf")``: the policy sees true lengths, not predictions."""
    if label.startswith(ORACLE):
        return True, label[len(ORACLE) :]
    return False, label


def _absolute_reference(ref: str, base: str) -> str:
    """A ``file.py:Class`` reference relative to the experiment file's folder, made absolute."""
    from ...usercode import is_reference

    if not base or not is_reference(ref):
        return ref
    head, bracket, rest = ref.partition("[")
    target, _, attr = head.rpartition(":")
    if target.endswith(".py") and not os.path.isabs(target):
        target = os.path.normpath(os.path.join(base, target))
        return f"{target}:{attr}" + (bracket + rest if bracket else "")
    return ref


def _policy_fingerprint(label: str) -> str:
    """The policy label plus, for a reference to a file, the file's SHA-256."""
    from ...usercode import is_reference, sha256_of

    head = _oracle(label)[1].partition("[")[0]
    if is_reference(head):
        target = head.rpartition(":")[0]
        if target.endswith(".py") and os.path.exists(target):
            return f"{label}@{sha256_of(target)}"
    return label


def _lengths_fingerprint(wl: Workload) -> dict[str, str]:
    """The SHA-256 of each CSV an ``empirical`` length distribution reads (empty without):
    an edited file gives new cells, as an edited policy file does."""
    from ...usercode import sha256_of

    out = {}
    for key in ("prompt", "response"):
        text = getattr(wl, key)
        if text is not None:
            dist = parse_length(text, field=key)
            if isinstance(dist, Empirical) and os.path.exists(dist.path):
                out[key] = sha256_of(dist.path)
    return out


@dataclass(frozen=True)
class Cell:
    """One (policy, load, seed) of an experiment."""

    experiment: Experiment
    policy: str
    load: float | str
    seed: int

    @property
    def key(self) -> str:
        e = self.experiment
        d = {"format": CELL_FORMAT, "workload": e.workload.to_dict(),
             "time_model": e.time_model.coefficients(), "policy": _policy_fingerprint(self.policy),
             "load": self.load, "seed": self.seed}  # fmt: skip
        if e.setup is not None:  # only then: the keys of every other experiment stay as they were
            d["setup"] = e.setup.name
        files = _lengths_fingerprint(e.workload)
        if files:
            d["length_files"] = files
        blob = json.dumps(d, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]

    def describe(self) -> str:
        load = self.load if isinstance(self.load, str) else f"{self.load:g}/s"
        return f"{self.policy} load={load} seed={self.seed}"


def cell_instance(workload: Workload, load: float | str, seed: int):
    """The timed instance of one load and seed (every policy of the cell row sees it)."""
    wl = workload
    rate: float | None
    if load == "burst":
        wl = Workload(**{**workload.to_dict(), "arrivals": "burst"})
        rate = None
    elif load == "trace":
        rate = None
    else:
        rate = float(load)
    return wl.instance(rate, seed)


_INSTANCE_CACHE: dict[tuple, Any] = {}


def run_cell(task: tuple[dict[str, Any], str, Any, int]) -> dict[str, Any]:
    """Run one cell from its plain-data task (picklable, for worker processes)."""
    exp_d, policy, load, seed = task
    wl = Workload.from_dict(exp_d["workload"])
    tm_d = exp_d["time_model"]
    if tm_d.get("name") in PRESETS:
        tm = PRESETS[tm_d["name"]]
    else:  # given coefficients, or a user's setup (its own name, source and error kept)
        tm = TimeModel(**{k: tm_d[k] for k in ("c0", "c_b", "c_k", "c_p", "c_q")},
                       name=tm_d.get("name", "custom"), source=tm_d.get("source", ""),
                       fit_error=tm_d.get("fit_error", ""))  # fmt: skip
    ckey = (json.dumps(exp_d["workload"], sort_keys=True), str(load), seed)
    inst = _INSTANCE_CACHE.get(ckey)
    if inst is None:
        _INSTANCE_CACHE.clear()
        inst = cell_instance(wl, load, seed)
        _INSTANCE_CACHE[ckey] = inst
    from ...policy import resolve_policy

    oracle, body = _oracle(policy)
    if oracle and inst.has_predictions:
        inst = inst.replace(
            jobs=tuple(dataclasses.replace(j, predicted_response=None) for j in inst.jobs)
        )
    ref = resolve_policy(body)  # once per cell (cells travel to workers as plain data)
    t0 = time.perf_counter()
    res = simulate(inst, ref, seed=seed if ref.seeded else None, time_model=tm)
    rep = seconds_report(inst, res.schedule, tm, realized=res.instance, clock=res.clock)
    wall = time.perf_counter() - t0
    row = {
        "experiment": exp_d["name"],
        "policy": policy,
        "load": load,
        "seed": seed,
        "n": inst.n,
        "memory": inst.memory,
        "time_model": tm.label(),
        **rep.metrics,
        "total_latency": rep.total_latency,
        "bound": rep.bound.value,
        "bound_name": rep.bound.name,
        "ratio": rep.ratio,
        "total_completion_rounds": res.total_completion,
        "makespan_rounds": res.makespan,
        "makespan_seconds": max(rep.completion, default=0.0),
        "wall_seconds": round(wall, 3),
        "redrawn": inst.meta.get("redrawn"),
    }
    return {"row": row, "latency": [round(x, 6) for x in rep.latency]}


# ------------------------------------------------------------------------------ executors
def _ignore_sigint() -> None:  # worker initializer: Ctrl-C is handled by the main process
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _execute(tasks: list[tuple], workers: int, scheduler: str | None,
             on_result: Callable[[int, dict], None]) -> None:  # fmt: skip
    """Run the tasks in this process, in ``workers`` local processes, or on a Dask cluster."""
    if scheduler:
        try:
            from distributed import Client, as_completed
        except ImportError:  # pragma: no cover - dask is a dependency
            raise InputError("needs dask.distributed", source="--scheduler") from None
        client = Client(scheduler)
        try:
            futs = {client.submit(run_cell, t, pure=False): k for k, t in enumerate(tasks)}
            for f in as_completed(futs):
                on_result(futs[f], f.result())
        finally:
            client.close()
        return
    if workers <= 1:
        for k, t in enumerate(tasks):
            on_result(k, run_cell(t))
        return
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    ex = ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"),
                             initializer=_ignore_sigint)  # fmt: skip
    try:
        futs = {ex.submit(run_cell, t): k for k, t in enumerate(tasks)}
        pending = set(futs)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                on_result(futs[f], f.result())
    except BaseException:
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown()


# --------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class ExperimentResult:
    """What :func:`run_experiment` returns: the rows, the per-request latencies, the files."""

    experiment: Experiment
    rows: tuple[dict[str, Any], ...]
    latencies: Mapping[str, list[float]]  # cell key → per-request latencies
    out: str
    ran: int
    reused: int
    files: tuple[str, ...] = ()

    def to_dataframe(self):
        import pandas as pd

        return pd.DataFrame(list(self.rows), columns=list(COLUMNS))

    def summary(
        self, metric: str = "mean_latency"
    ) -> dict[tuple[str, Any], tuple[float, float, float]]:
        """(policy, load) → (mean over seeds, low, high) of ``metric``: the range over seeds
        with fewer than :data:`BOOTSTRAP_MIN_SEEDS` seeds, else the 95 % bootstrap interval
        (:func:`seed_interval`; :meth:`interval_kind` names which)."""
        out: dict[tuple[str, Any], tuple[float, float, float]] = {}
        for p in self.experiment.policies:
            for load in self.experiment.loads:
                vals = [r[metric] for r in self.rows if r["policy"] == p and r["load"] == load]
                if vals:
                    out[(p, load)] = seed_interval(vals)
        return out

    def interval_kind(self) -> str:
        """What :meth:`summary`'s low and high are: ``"range"`` (min and max over seeds) or
        ``"bootstrap95"`` (:func:`interval_kind`)."""
        return interval_kind(len(self.experiment.seeds))


def load_experiment(path: str | os.PathLike) -> Experiment:
    """Read an experiment TOML file (errors name the file and the field)."""
    import tomllib

    src = str(path)
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise InputError("file not found", source=src) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", source=src) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", source=src) from None
    exp = Experiment.from_dict(data, source=src, base=os.path.dirname(os.path.abspath(src)))
    _probe(exp, src)
    return exp


def _probe(exp: Experiment, src: str) -> None:
    """Draw the first cell's instance once: the trace loads and has the needed columns."""
    try:
        cell_instance(exp.workload, exp.loads[0], exp.seeds[0])
    except InputError as err:
        where = ": ".join(x for x in (err.source, err.field) if x and x != "workload")
        what = "workload" if exp.workload.drawn else "workload.trace"
        raise InputError(err.rule, field=f"{what} {where}" if where else "workload",
                         source=src) from None  # fmt: skip


def _csv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k) for k in COLUMNS})
    return buf.getvalue()


def run_experiment(
    experiment: Experiment | Mapping[str, Any] | str | os.PathLike,
    out: str | os.PathLike | None = None,
    *,
    workers: int = 1,
    scheduler: str | None = None,
    progress: bool = False,
    report: bool = True,
) -> ExperimentResult:
    """Run (or resume) an experiment; write its cells, ``results.csv`` and the report.

    ``experiment`` is an :class:`Experiment`, a dict of the TOML's fields, or a TOML path.
    ``out`` defaults to ``<name>-results`` in the working folder, for a file too (a shipped
    experiment run from elsewhere leaves the checkout clean; issue 68).
    ``workers`` > 1 runs cells in local processes, ``scheduler`` on a Dask cluster.
    Finished cells are on disk as they finish: interrupting (Ctrl-C) loses none, and a
    rerun runs only the cells not yet on disk.
    """
    if isinstance(experiment, str | os.PathLike):
        path = Path(experiment)
        exp = load_experiment(path)
        default_out = Path(f"{exp.name}-results")  # the working folder, not the file's (issue 68)
    elif isinstance(experiment, Experiment):
        exp, default_out = experiment, Path(f"{experiment.name}-results")
    else:
        exp = Experiment.from_dict(experiment)
        _probe(exp, "experiment")
        default_out = Path(f"{exp.name}-results")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"must be an integer >= 1, got {workers!r}", source="--workers")
    outdir = Path(out) if out is not None else default_out
    cells_dir = outdir / "cells"
    cells_dir.mkdir(parents=True, exist_ok=True)
    say = progress_logger(__name__, progress, "kvopt experiment")
    write_json_atomic(outdir / "experiment.json", exp.to_dict())
    cells = exp.cells()
    stored: dict[str, dict[str, Any]] = {}
    todo: list[Cell] = []
    for c in cells:
        f = cells_dir / f"{c.key}.json"
        if f.exists():
            try:
                stored[c.key] = read_json(f)
                continue
            except InputError:
                pass  # an unreadable cell is run again
        todo.append(c)
    reused = len(cells) - len(todo)
    say(f"{exp.name}: {len(cells)} cells, {reused} on disk, {len(todo)} to run"
        + (f" on {workers} workers" if workers > 1 and todo else ""))  # fmt: skip
    exp_d = exp.to_dict()
    tasks = [(exp_d, c.policy, c.load, c.seed) for c in todo]
    t0 = time.monotonic()
    done = 0

    def on_result(k: int, res: dict[str, Any]) -> None:
        nonlocal done
        c = todo[k]
        res["key"] = c.key
        write_json_atomic(cells_dir / f"{c.key}.json", res, indent=None)
        stored[c.key] = res
        done += 1
        el = time.monotonic() - t0
        eta = el / done * (len(todo) - done)
        bar = "#" * int(20 * done / len(todo))
        say(f"[{bar:<20}] {done}/{len(todo)} {c.describe()}: mean latency "
            f"{res['row']['mean_latency']:.4g} s (elapsed {el:.0f} s, eta {eta:.0f} s)")  # fmt: skip

    try:
        _execute(tasks, workers, scheduler, on_result)
    except KeyboardInterrupt as exc:
        raise Interrupted(
            f"{reused + done} of {len(cells)} cells kept in {cells_dir}; run the same command "
            "again to resume (finished cells are not run again)"
        ) from exc
    rows = []
    lats: dict[str, list[float]] = {}
    for c in cells:
        r = dict(stored[c.key]["row"])
        r["experiment"], r["policy"], r["load"], r["seed"] = exp.name, c.policy, c.load, c.seed
        rows.append(r)
        lats[c.key] = stored[c.key]["latency"]
    write_bytes_atomic(outdir / "results.csv", _csv_text(rows).encode())
    result = ExperimentResult(exp, tuple(rows), lats, str(outdir), len(todo), reused)
    write_bytes_atomic(outdir / "summary.csv", summary_csv(result).encode())
    files = [str(outdir / "results.csv"), str(outdir / "summary.csv")]
    if report:
        files += write_report(result)
    return ExperimentResult(exp, tuple(rows), lats, str(outdir), len(todo), reused, tuple(files))


__all__ = [
    "CELL_FORMAT",
    "COLUMNS",
    "Cell",
    "Experiment",
    "ExperimentResult",
    "BOOTSTRAP_MIN_SEEDS",
    "bootstrap_ci",
    "interval_kind",
    "interval_words",
    "seed_interval",
    "load_experiment",
    "run_cell",
    "run_experiment",
]
