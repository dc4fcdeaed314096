"""Search campaigns that lose nothing: batches, the evaluation log, resumption, workers.

A campaign lives in one folder (``--out DIR``):

* ``campaign.json`` — what defines the campaign (policy and parameters,
  strategy and options, family, space, claim, objective, seed, batch size,
  exact time limit).  Rerunning with the same folder and different settings is
  refused (exit 2), so a log is never continued by another campaign.
* ``evaluations.jsonl`` — one line per evaluation, appended with a single
  ``write`` as soon as the evaluation finishes (flushed), in completion
  order: the candidate (compact instance), its numbers (``alg``, ``ub``,
  ``lb``, ratios, how the exact solve went, the starts of the clairvoyant
  schedule of value ``ub``) and ``t``, the campaign's cumulative seconds.
* ``best.json`` — the record (SPEC §8) of the best certified ratio so far,
  rewritten atomically whenever a new best is merged.
* ``errors/eval-K.json`` — the instance of every evaluation on which the
  policy broke the model (a :class:`~kvopt.errors.PolicyError` is a finding).

**Determinism.**  Batch ``b`` is proposed by the strategy from the seed, ``b``
and the results of batches ``< b`` (told in proposal order), and evaluated
with the screening threshold and exact-result cache of batches ``< b`` only.
Results are merged in proposal order whatever order they finish in, so a
serial run, ``--workers K`` and a Dask cluster find the same best record
for the same seed and budget — as long as every exact solve ends within its
time limit (a solve cut by its limit depends on the machine's speed).

**Resumption.**  A rerun replays the campaign from the seed: each proposal
whose evaluation is in the log (same index, same instance) takes its result
from there; only the rest is evaluated.  An interrupted run (Ctrl-C, a kill)
loses at most the evaluations in flight.  The budget counts every
evaluation of the campaign (logged ones included); ``seconds`` limits this
run.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..fileio import write_json_atomic
from ..instance import Instance
from ..schedule import Schedule
from .evaluate import canonical, compact_instance, evaluate, expand_instance, instance_key
from .strategies import Proposal, score

CAMPAIGN_FORMAT = "kvopt.campaign"
LOG_NAME = "evaluations.jsonl"
BEST_NAME = "best.json"
HEADER_NAME = "campaign.json"
#: Fields of ``campaign.json`` that must match for a rerun to resume.
IDENTITY = (
    "policy",
    "params",
    "strategy",
    "options",
    "family",
    "family_params",
    "space",
    "claim",
    "objective",
    "seed",
    "batch",
    "exact_time_limit",
)


@dataclass(frozen=True)
class Best:
    """The best certified find of a campaign."""

    ratio_certified: float
    ratio_optimistic: float
    evaluation: int
    record: str | None
    n: int
    memory: int
    opt_status: str
    seconds: float
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "ratio_certified": self.ratio_certified,
            "ratio_optimistic": self.ratio_optimistic,
            "record": self.record,
            "evaluation": self.evaluation,
            "n": self.n,
            "memory": self.memory,
            "opt_status": self.opt_status,
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class CampaignResult:
    """What ``kvopt search`` reports (``--json``: :meth:`to_dict`) and :func:`kvopt.search` returns.

    ``evaluations``/``exact_solves`` count the whole campaign (resumed runs
    included), ``new_evaluations`` this run; ``seconds`` is this run's wall
    time; ``best`` the best certified find (``None`` if nothing was
    evaluated); ``best_optimistic`` the largest optimistic ratio of any
    evaluation; ``stopped`` why the run ended (``budget``, ``seconds``,
    ``exhausted``, ``interrupted``); ``summary`` the strategy's own report
    (the family strategy's growth table).
    """

    policy: str
    params: Mapping[str, Any]
    strategy: str
    seed: int
    objective: str
    evaluations: int
    new_evaluations: int
    exact_solves: int
    seconds: float
    best: Best | None
    best_optimistic: float | None
    stopped: str
    out: str
    errors: int = 0
    summary: Mapping[str, Any] | None = None
    claim: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "params": dict(self.params),
            "strategy": self.strategy,
            "seed": self.seed,
            "objective": self.objective,
            "evaluations": self.evaluations,
            "new_evaluations": self.new_evaluations,
            "exact_solves": self.exact_solves,
            "seconds": round(self.seconds, 3),
            "best": None if self.best is None else self.best.to_dict(),
            "best_optimistic": self.best_optimistic,
            "stopped": self.stopped,
            "out": self.out,
            "errors": self.errors,
            "claim": self.claim,
            "summary": None if self.summary is None else dict(self.summary),
        }

    def __repr__(self) -> str:
        b = self.best
        best = (
            f"best certified {b.ratio_certified:.4f} (optimistic {b.ratio_optimistic:.4f}, "
            f"n={b.n}, M={b.memory}, {b.record})"
            if b
            else "nothing found"
        )
        return (
            f"CampaignResult({self.policy}/{self.strategy}, seed {self.seed}: "
            f"{self.evaluations} evaluations, {self.exact_solves} exact solves, "
            f"{self.seconds:.1f}s, stopped by {self.stopped}; {best})"
        )

    def record(self):
        """The best record (:class:`kvopt.record.Record`), read from disk."""
        from ..record import load_record

        if self.best is None or self.best.record is None:
            return None
        return load_record(self.best.record)

    def history(self):
        """Best-so-far curves from the log (see :func:`read_history`)."""
        return read_history(self.out)


# --------------------------------------------------------------------------- the log


def read_log(path: Path) -> dict[int, dict[str, Any]]:
    """Parse ``evaluations.jsonl``; a bad line is an :class:`InputError` naming its line number."""
    out: dict[int, dict[str, Any]] = {}
    if not path.exists():
        return out
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    complete = raw.endswith(b"\n") or not raw
    for no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line.decode("utf-8"))
            if not isinstance(rec, dict):
                raise ValueError("not a JSON object")
            idx = rec["index"]
            if not isinstance(idx, int) or isinstance(idx, bool) or idx < 0:
                raise ValueError(f"bad index {idx!r}")
            for key in ("key", "instance"):
                if key not in rec:
                    raise ValueError(f"missing {key!r}")
        except (ValueError, KeyError, UnicodeDecodeError) as exc:
            hint = (
                " (the last line is incomplete: the previous run was killed while writing it)"
                if no == len(lines) and not complete
                else ""
            )
            raise InputError(
                f"line {no} is corrupt ({exc}){hint}; the log is left as it is", source=str(path)
            ) from None
        if idx in out:
            raise InputError(f"line {no}: evaluation {idx} is logged twice", source=str(path))
        out[idx] = rec
    return out


class _Log:
    """Append-only log: one ``os.write`` per line, so a kill never leaves half a line."""

    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, rec: dict[str, Any]) -> None:
        data = (json.dumps(rec, separators=(",", ":"), allow_nan=False) + "\n").encode()
        os.write(self.fd, data)

    def close(self) -> None:
        try:
            os.fsync(self.fd)
        except OSError:
            pass
        os.close(self.fd)


def read_history(out: str | os.PathLike) -> list[dict[str, Any]]:
    """Evaluations of a campaign folder in index order, with best-so-far curves.

    Each row: ``index``, ``t`` (campaign seconds when it finished),
    ``ratio_certified``, ``ratio_optimistic``, ``best_certified`` and
    ``best_optimistic`` (running maxima in index order).
    """
    log = read_log(Path(out) / LOG_NAME)
    rows = []
    bc = bo = -math.inf
    for idx in sorted(log):
        r = log[idx]
        rc, ro = r.get("ratio_certified"), r.get("ratio_optimistic")
        if rc is not None:
            bc = max(bc, rc)
            bo = max(bo, ro)
        rows.append(
            {
                "index": idx,
                "t": r.get("t"),
                "ratio_certified": rc,
                "ratio_optimistic": ro,
                "best_certified": None if bc == -math.inf else bc,
                "best_optimistic": None if bo == -math.inf else bo,
            }
        )
    return rows


# --------------------------------------------------------------------------- executors


def _ignore_sigint() -> None:  # worker initializer: Ctrl-C is handled by the main process
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _Serial:
    name = "serial"

    def run(self, tasks, on_result, deadline):
        for t in tasks:
            if deadline is not None and time.monotonic() >= deadline:
                return
            on_result(evaluate(t))

    def close(self, abort: bool = False) -> None:
        pass


class _LocalPool:
    name = "processes"

    def __init__(self, workers: int):
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        self.ex = ProcessPoolExecutor(
            max_workers=workers, mp_context=mp.get_context("spawn"), initializer=_ignore_sigint
        )

    def run(self, tasks, on_result, deadline):
        from concurrent.futures import FIRST_COMPLETED, wait

        futs = {self.ex.submit(evaluate, t) for t in tasks}
        while futs:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            done, futs = wait(futs, timeout=timeout, return_when=FIRST_COMPLETED)
            for f in done:
                if not f.cancelled():
                    on_result(f.result())
            if deadline is not None and time.monotonic() >= deadline:
                for f in futs:
                    f.cancel()  # not started yet: skipped; running ones finish below
                deadline = None

    def close(self, abort: bool = False) -> None:
        if abort:
            for p in list(getattr(self.ex, "_processes", {}).values()):
                p.terminate()
        self.ex.shutdown(wait=not abort, cancel_futures=True)


class _Dask:
    name = "dask"

    def __init__(self, address: str, timeout: float = 10.0):
        try:
            from dask.distributed import Client
        except ImportError:
            raise InputError(
                "needs the optional extra: pip install 'kvopt[dask]'", source="--scheduler"
            ) from None
        try:
            self.client = Client(address, timeout=f"{timeout}s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(
                f"the Dask scheduler {address!r} did not answer within {timeout:g}s ({exc})",
                source="--scheduler",
            ) from None

    def run(self, tasks, on_result, deadline):
        from dask.distributed import as_completed

        futs = [self.client.submit(evaluate, t, pure=False) for t in tasks]
        self._futs = futs
        for f in as_completed(futs, loop=self.client.loop):
            if deadline is not None and time.monotonic() >= deadline:
                self.client.cancel([g for g in futs if not g.done()])
                deadline = None
            if f.status == "finished":
                on_result(f.result())

    def close(self, abort: bool = False) -> None:
        if abort and getattr(self, "_futs", None):
            self.client.cancel(self._futs)
        self.client.close()


# --------------------------------------------------------------------------- the campaign


@dataclass
class _State:
    best: dict[str, Any] | None = None
    best_opt: float | None = None
    evaluations: int = 0
    exact_solves: int = 0
    errors: int = 0
    cache: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: dict[str, dict[str, Any]] = field(default_factory=dict)


def run_campaign(
    *,
    header: dict[str, Any],
    strategy,
    rule: Callable[[Instance], str | None],
    budget: int | None,
    seconds: float | None,
    workers: int,
    scheduler: str | None,
    out: Path,
    make_record: Callable[[dict[str, Any], dict[str, Any]], Any],
    progress: bool = True,
    dask_timeout: float = 10.0,
    label: str | None = None,
) -> CampaignResult:
    """Run (or resume) the campaign described by ``header`` (see the module docstring)."""
    t_start = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    lock = _lock(out)
    try:
        return _run(header, strategy, rule, budget, seconds, workers, scheduler, out,
                    make_record, progress, dask_timeout, t_start, label)  # fmt: skip
    finally:
        lock.close()


def _lock(out: Path):
    """An exclusive lock on the folder: two runs must never append to one log."""
    import fcntl

    fh = open(out / ".lock", "w")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise InputError(
            "another kvopt search is running on this folder", source=f"--out {out}"
        ) from None
    return fh


def _run(header, strategy, rule, budget, seconds, workers, scheduler, out, make_record, progress,
         dask_timeout, t_start, label) -> CampaignResult:  # fmt: skip
    _check_header(out, header)
    log_path = out / LOG_NAME
    logged = read_log(log_path)
    t_base = max((float(r.get("t", 0.0)) for r in logged.values()), default=0.0)
    best_path = out / BEST_NAME
    state = _State()
    batch_size = int(header["batch"])
    deadline = None if seconds is None else t_start + seconds
    executor = None
    log = _Log(log_path)
    stopped = "budget"
    bar = _Progress(progress, header, budget, label)
    results: dict[int, dict[str, Any]] = {}
    try:
        b = 0
        while True:
            if budget is not None and state.evaluations >= budget:
                stopped = "budget"
                break
            if deadline is not None and time.monotonic() >= deadline:
                stopped = "seconds"
                break
            if strategy.exhausted:
                stopped = "exhausted"
                break
            proposals: list[Proposal] = strategy.propose(b, batch_size)
            if not proposals:
                stopped = "exhausted"
                break
            want = len(proposals)
            if budget is not None:
                want = min(want, budget - state.evaluations)
            threshold = score(state.best) if state.best else 0.0
            results = {}
            tasks = []
            for i, prop in enumerate(proposals[:want]):
                k = b * batch_size + i
                rule_broken = rule(prop.instance)
                if rule_broken:  # a strategy bug: never evaluate outside the class
                    raise AssertionError(
                        f"strategy proposed an instance outside the class: {rule_broken}"
                    )
                key = instance_key(prop.instance)
                if k in logged:
                    rec = logged[k]
                    if rec["key"] != key:
                        raise InputError(
                            f"evaluation {k} in the log is of another instance than this "
                            "campaign proposes (was the log written by another kvopt version?)",
                            source=str(log_path),
                        )
                    results[k] = rec
                    continue
                if key in state.seen:  # the same instance was evaluated before: reuse
                    rec = dict(state.seen[key], index=k, batch=b, origin=prop.origin,
                               reused_from=state.seen[key]["index"], exact="reused",
                               exact_result=None, t=round(t_base + time.monotonic() - t_start, 3))  # fmt: skip
                    log.append(rec)
                    results[k] = rec
                    bar.advance(rec, state, fresh=True)
                    continue
                ckey, _ = canonical(prop.instance)
                tasks.append(
                    {
                        "index": k,
                        "batch": b,
                        "instance": compact_instance(prop.instance),
                        "origin": prop.origin,
                        "policy": header["policy"],
                        "params": header["params"],
                        "policy_seed": header["policy_seed"],
                        "objective": header["objective"],
                        "threshold": threshold,
                        "exact_time_limit": header["exact_time_limit"],
                        "cached": state.cache.get(ckey),
                        "claim": header.get("claim"),
                    }
                )
            for k in sorted(results):
                if k in logged:
                    bar.advance(results[k], state, fresh=False)
            if tasks:
                if executor is None:
                    executor = _make_executor(workers, scheduler, dask_timeout)

                def on_result(rec, _results=results):
                    rec["t"] = round(t_base + time.monotonic() - t_start, 3)
                    log.append(rec)
                    _results[rec["index"]] = rec
                    bar.advance(rec, state, fresh=True)

                executor.run(tasks, on_result, deadline)
            # merge in proposal order
            complete = len(results) == len(proposals)
            ordered = [results[k] for k in sorted(results)]
            for rec in ordered:
                _merge(rec, state, best_path, make_record)
                bar.update(state)
            results = {}
            if not complete:  # budget or time cut the batch: the strategy is not told
                stopped = (
                    "budget" if (budget is not None and state.evaluations >= budget) else "seconds"
                )
                break
            strategy.tell(proposals, ordered)
            b += 1
    except KeyboardInterrupt:
        stopped = "interrupted"
        state.evaluations += len(results)  # logged, not merged: the rerun takes them from the log
        if executor is not None:
            executor.close(abort=True)
            executor = None
    finally:
        log.close()
        if executor is not None:
            executor.close()
        bar.close()
    best = None
    if state.best is not None:
        r = state.best
        best = Best(
            ratio_certified=r["ratio_certified"],
            ratio_optimistic=r["ratio_optimistic"],
            evaluation=r["index"],
            record=str(best_path) if best_path.exists() else None,
            n=r["n"],
            memory=r["memory"],
            opt_status=r["opt_status"],
            seconds=float(r.get("t", 0.0)),
            score=r.get("score"),
        )
    return CampaignResult(
        policy=header["policy"],
        params=header["params"],
        strategy=header["strategy"],
        seed=header["seed"],
        objective=header["objective"],
        evaluations=state.evaluations,
        new_evaluations=bar.fresh,
        exact_solves=state.exact_solves,
        seconds=time.monotonic() - t_start,
        best=best,
        best_optimistic=state.best_opt,
        stopped=stopped,
        out=str(out),
        errors=state.errors,
        summary=strategy.summary(),
        claim=header.get("claim"),
    )


def _make_executor(workers: int, scheduler: str | None, timeout: float):
    if scheduler:
        return _Dask(scheduler, timeout)
    if workers > 1:
        return _LocalPool(workers)
    return _Serial()


def _merge(rec, state: _State, best_path: Path, make_record) -> None:
    state.evaluations += 1
    if rec.get("exact") == "solved":
        state.exact_solves += 1
    er = rec.get("exact_result")
    if er and er.get("key"):
        state.cache[er["key"]] = er
    if "error" in rec:
        state.errors += 1
        err_path = best_path.parent / "errors" / f"eval-{rec['index']}.json"
        if not err_path.exists():
            inst = expand_instance(rec["instance"], name=f"error-eval-{rec['index']}")
            d = inst.to_dict()
            d["meta"] = {"error": rec["error"], "evaluation": rec["index"]}
            write_json_atomic(err_path, d)
        return
    state.seen.setdefault(rec["key"], rec)
    ro = rec["ratio_optimistic"]
    state.best_opt = ro if state.best_opt is None else max(state.best_opt, ro)
    if state.best is None or score(rec) > score(state.best):
        state.best = rec
        if not _record_is_for(best_path, rec):
            make_record(rec, {"path": str(best_path)})


def _record_is_for(path: Path, rec: dict[str, Any]) -> bool:
    """Whether ``best.json`` already holds the record of this evaluation (resumed runs)."""
    if not path.exists():
        return False
    try:
        data = json.loads(path.read_text())
        return data.get("found_by", {}).get("evaluation") == rec["index"]
    except (OSError, ValueError):
        return False


def _check_header(out: Path, header: dict[str, Any]) -> None:
    path = out / HEADER_NAME
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except ValueError as exc:
            raise InputError(f"not valid JSON ({exc})", source=str(path)) from None
        for key in IDENTITY:
            if _norm(old.get(key)) != _norm(header.get(key)):
                raise InputError(
                    f"this campaign was started with {key} = {json.dumps(old.get(key))}, not "
                    f"{json.dumps(header.get(key))} (rerun with the same options, or use another --out)",
                    field=key,
                    source=str(path),
                )
        return
    write_json_atomic(path, {"format": CAMPAIGN_FORMAT, "version": 1, **header})


def _norm(v):
    return json.loads(json.dumps(v, sort_keys=True))


def record_from_log(header: dict[str, Any], rec: dict[str, Any], meta=None):
    """Rebuild the record (SPEC §8) of one logged evaluation: re-simulate, rebuild the UB schedule."""
    from ..record import make_record
    from ..simulation import simulate

    inst = expand_instance(rec["instance"], name=f"{header['policy']}-worst-eval{rec['index']}")
    res = simulate(
        inst, header["policy"], params=header["params"] or None, seed=header["policy_seed"]
    )
    opt = Schedule.from_starts(inst, rec["ub_starts"], producer=f"clairvoyant ({rec['ub_source']})")
    return make_record(
        inst,
        header["policy"],
        header["params"],
        header["seed"],  # the campaign seed (it seeds the policy when the policy is seeded)
        header["objective"],
        res.schedule,
        opt,
        rec["lb"],
        rec["opt_status"],
        found_by={
            "strategy": header["strategy"],
            "evaluation": rec["index"],
            "seconds": rec.get("t"),
            "seed": header["seed"],
            "origin": rec.get("origin"),
        },  # fmt: skip
        meta=meta,
    )


# --------------------------------------------------------------------------- progress


class _Progress:
    """A rich progress bar on stderr: evaluations, evaluations/s, best certified/optimistic."""

    def __init__(self, enabled: bool, header: dict[str, Any], budget: int | None, label=None):
        self.fresh = 0
        self.p = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.p = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]} eval/s"),
            TextColumn("best certified {task.fields[bc]} optimistic {task.fields[bo]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.p.start()
        self.t0 = time.monotonic()
        self.task = self.p.add_task(
            label or f"search {header['policy']}/{header['strategy']}",
            total=budget,
            rate="-",
            bc="-",
            bo="-",
        )

    def advance(self, rec, state: _State, fresh: bool) -> None:
        if fresh:
            self.fresh += 1
        if self.p is None:
            return
        rate = self.fresh / max(time.monotonic() - self.t0, 1e-9)
        self.p.update(self.task, advance=1, rate=f"{rate:.1f}")

    def update(self, state: _State) -> None:
        if self.p is None:
            return
        bc = f"{state.best['ratio_certified']:.4f}" if state.best else "-"
        bo = f"{state.best_opt:.4f}" if state.best_opt is not None else "-"
        self.p.update(self.task, bc=bc, bo=bo)

    def close(self) -> None:
        if self.p is not None:
            self.p.stop()


def progress_enabled(flag: bool | None) -> bool:
    """Progress bars by default on a terminal (``flag`` overrides)."""
    return sys.stderr.isatty() if flag is None else bool(flag)


__all__ = [
    "BEST_NAME",
    "Best",
    "CampaignResult",
    "HEADER_NAME",
    "LOG_NAME",
    "read_history",
    "read_log",
    "record_from_log",
    "run_campaign",
]
