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
  rewritten atomically whenever a new best is merged.  At the end of a run
  that was not interrupted, the **certify stage** tightens its bracket with
  one exact solve of at most ``certify_seconds`` (``--certify-seconds``;
  :func:`kvopt.campaign.certify.certify_record`, every thread, the typed
  aggregated model where the instance is typed): the record is rewritten
  (its old bracket kept in ``history``) when that made it tighter, and the
  result reports it (``certify``) and its seconds (``certify_seconds``)
  apart from the search's (``search_seconds``).  The log keeps the
  evaluation's bracket as the search found it.
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

import dataclasses
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..exact.workers import DeferredCtrlC, SeenCtrlC
from ..fileio import write_json_atomic
from ..instance import Instance
from ..policy import ResolvedPolicy, resolve_policy
from ..schedule import Schedule
from .evaluate import canonical, evaluate, instance_key
from .executors import make_executor
from .log import (
    BEST_NAME,
    HEADER_NAME,
    LOG_NAME,
    EvaluationLog,
    check_header,
    lock_folder,
    read_history,
    read_log,
    record_is_for,
)
from .strategies import Proposal, score
from .types import (
    Best,
    CampaignHeader,
    CampaignResult,
    CompactInstance,
    EvalTask,
    Evaluation,
    ExactResult,
    ExactStatus,
    Outcome,
    StopReason,
)

# --------------------------------------------------------------------------- the campaign


@dataclass
class _State:
    best: Evaluation | None = None
    best_opt: float | None = None
    evaluations: int = 0
    exact_solves: int = 0
    errors: int = 0
    skipped: int = 0  # over their attempt budget (Outcome.SKIPPED)
    cache: dict[str, ExactResult] = field(default_factory=dict)
    seen: dict[str, Evaluation] = field(default_factory=dict)


def run_campaign(
    *,
    header: CampaignHeader,
    strategy,
    rule: Callable[[Instance], str | None],
    budget: int | None,
    seconds: float | None,
    workers: int,
    scheduler: str | None,
    out: Path,
    make_record: Callable[[Evaluation, Path], Any],
    progress: bool = True,
    dask_timeout: float = 10.0,
    label: str | None = None,
    certify_seconds: float = 0.0,
    policy: ResolvedPolicy | None = None,
) -> CampaignResult:
    """Run (or resume) the campaign described by ``header`` (see the module docstring);
    ``certify_seconds`` > 0 runs the certify stage on the best record at the end.
    ``policy`` is the header's policy as the caller resolved it (resolved here if not
    given): its :meth:`~kvopt.policy.ResolvedPolicy.shipped` form goes to the workers."""
    t_start = time.monotonic()
    if policy is None:
        policy = resolve_policy(header.policy, header.params)
    out.mkdir(parents=True, exist_ok=True)
    lock = lock_folder(out)
    try:
        res = _run(header, strategy, rule, budget, seconds, workers, scheduler, out,
                   make_record, progress, dask_timeout, t_start, label, policy)  # fmt: skip
        if certify_seconds > 0 and res.stopped != StopReason.INTERRUPTED:
            # a Ctrl-C in the stage's exact solve ends the solve, which returns its bracket;
            # the stage then finishes, and the result says the user interrupted it
            with SeenCtrlC() as seen:
                try:
                    res = _certify_stage(res, certify_seconds)
                except KeyboardInterrupt:
                    pass
            if seen.came:
                res = dataclasses.replace(res, stopped=StopReason.INTERRUPTED)
        return res
    finally:
        lock.close()


def _best_means(res: CampaignResult) -> str:
    """What the certify line's record is the best by, when it is not the ratio (issue 68: a
    claim's campaign maximises ratio ÷ bound or a slack, so its best record's ratio can be
    1.0 while the validation's worst certified ratio is higher)."""
    if not res.claim:
        return ""
    from ..claim import get_claim

    claim = get_claim(res.claim)
    if claim.kind in ("per-job", "invariant"):
        return " (the campaign's best by the claim's slack lhs/rhs, not by its ratio)"
    if claim.kind != "ratio":
        return ""
    if claim.bound_fn is not None:
        return (
            f" (the campaign's best by ratio ÷ the bound {claim.bound_text()}, not the "
            "highest ratio: the validation reports that as its worst certified ratio)"
        )
    return ""


def _certify_stage(res: CampaignResult, certify_seconds: float) -> CampaignResult:
    """The certify stage (module doc): ``res`` with its best record certified."""
    from ..logs import progress_logger
    from ..record import load_record, save_record
    from .certify import certify_record

    if res.best is None or res.best.record is None:
        return res
    t0 = time.monotonic()
    say = progress_logger(__name__, True, "kvopt search")
    rec = load_record(res.best.record)
    new, report = certify_record(rec, time_limit=certify_seconds, by="campaign certify stage")
    if new is not rec:
        save_record(new, res.best.record)
    report = dataclasses.replace(report, path=res.best.record)
    say(f"certify stage: {report.text()}{_best_means(res)}")
    b = res.best
    score = b.score
    if score is not None and b.ratio_certified and b.ratio_certified > 0 and res.claim:
        from ..claim import get_claim

        if get_claim(res.claim).kind == "ratio":  # score = certified ratio / the claim's bound
            score = score * new.ratio_certified / b.ratio_certified
    best = dataclasses.replace(b, ratio_certified=new.ratio_certified,
                               ratio_optimistic=new.ratio_optimistic,
                               opt_status=new.opt_status, score=score)  # fmt: skip
    spent = time.monotonic() - t0
    return dataclasses.replace(res, best=best, seconds=res.seconds + spent,
                               search_seconds=res.seconds, certify_seconds=spent,
                               certify=report.to_dict())  # fmt: skip


def _run(header: CampaignHeader, strategy, rule, budget, seconds, workers, scheduler, out,
         make_record, progress, dask_timeout, t_start, label,
         policy: ResolvedPolicy) -> CampaignResult:  # fmt: skip
    check_header(out, header)
    log_path = out / LOG_NAME
    logged = read_log(log_path)
    t_base = max((float(r.t or 0.0) for r in logged.values()), default=0.0)
    best_path = out / BEST_NAME
    state = _State()
    batch_size = int(header.batch)
    deadline = None if seconds is None else t_start + seconds
    executor = None
    log = EvaluationLog(log_path)
    stopped = StopReason.BUDGET
    bar = _Progress(progress, header, budget, label)
    results: dict[int, Evaluation] = {}
    typed = (header.space or {}).get("kind") == "typed"
    shipped = policy.shipped()  # a user's policy goes to the workers with its code
    from ..claim import USER_CLAIMS

    user_claim = USER_CLAIMS.get(header.claim) if header.claim else None

    def now() -> float:
        return round(t_base + time.monotonic() - t_start, 3)

    try:
        b = 0
        while True:
            if budget is not None and state.evaluations >= budget:
                stopped = StopReason.BUDGET
                break
            if deadline is not None and time.monotonic() >= deadline:
                stopped = StopReason.SECONDS
                break
            if strategy.exhausted:
                stopped = StopReason.EXHAUSTED
                break
            proposals: list[Proposal] = strategy.propose(b, batch_size)
            if not proposals:
                stopped = StopReason.EXHAUSTED
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
                    if rec.key != key:
                        raise InputError(
                            f"evaluation {k} in the log is of another instance than this "
                            "campaign proposes (was the log written by another kvopt version?)",
                            source=str(log_path),
                        )
                    results[k] = rec
                    continue
                if key in state.seen:  # the same instance was evaluated before: reuse
                    seen = state.seen[key]
                    rec = dataclasses.replace(seen, index=k, batch=b, origin=prop.origin,
                                              reused_from=seen.index, exact=ExactStatus.REUSED,
                                              exact_result=None, t=now())  # fmt: skip
                    log.append(rec)
                    results[k] = rec
                    bar.advance(rec, state, fresh=True)
                    continue
                ckey, _ = canonical(prop.instance)
                tasks.append(
                    EvalTask(
                        index=k,
                        batch=b,
                        instance=CompactInstance.of(prop.instance),
                        origin=prop.origin,
                        policy=shipped,
                        policy_seed=header.policy_seed,
                        objective=header.objective,
                        threshold=threshold,
                        exact_time_limit=header.exact_time_limit,
                        cached=state.cache.get(ckey),
                        claim=header.claim,
                        typed=typed,
                        user_claim=user_claim,
                    )
                )
            for k in sorted(results):
                if k in logged:
                    bar.advance(results[k], state, fresh=False)
            if tasks:
                if executor is None:
                    executor = make_executor(workers, scheduler, dask_timeout)

                def on_result(rec: Evaluation, _results=results):
                    rec = dataclasses.replace(rec, t=now())
                    log.append(rec)
                    _results[rec.index] = rec
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
                    StopReason.BUDGET
                    if (budget is not None and state.evaluations >= budget)
                    else StopReason.SECONDS
                )
                break
            strategy.tell(proposals, ordered)
            b += 1
    except KeyboardInterrupt:
        stopped = StopReason.INTERRUPTED
    except BaseException:
        log.close()
        if executor is not None:
            executor.close(abort=True)
        bar.close()
        raise
    # The wrap-up runs to its end: a Ctrl-C in it (a search that had finished its budget a
    # moment before) is held and makes the result "interrupted", so the command still prints
    # what was found and exits 130 (found by CI, where 200 evaluations take a second).
    held = DeferredCtrlC()
    try:
        if stopped == StopReason.INTERRUPTED:
            state.evaluations += len(results)  # logged, not merged: a rerun reads the log
            if executor is not None:
                executor.close(abort=True)
                executor = None
        log.close()
        if executor is not None:
            executor.close()
        bar.close()
        result = _result(header, strategy, state, bar, best_path, stopped, out, t_start)
    finally:
        came = held.restore()
    if came:
        result = dataclasses.replace(result, stopped=StopReason.INTERRUPTED)
    return result


def _result(header, strategy, state, bar, best_path, stopped, out, t_start) -> CampaignResult:
    """The typed result of a finished (or stopped) run."""
    if state.skipped:
        logging.getLogger(__name__).warning(
            "%d candidates skipped: their simulation went past its attempt budget "
            "(kvopt.campaign.evaluate.max_attempts)",
            state.skipped,
        )
    best = None
    if state.best is not None:
        r = state.best
        best = Best(
            ratio_certified=r.ratio_certified,
            ratio_optimistic=r.ratio_optimistic,
            evaluation=r.index,
            record=str(best_path) if best_path.exists() else None,
            n=r.n,
            memory=r.memory,
            opt_status=r.opt_status,
            seconds=float(r.t or 0.0),
            score=r.score,
        )
    return CampaignResult(
        policy=header.policy,
        params=header.params,
        strategy=header.strategy,
        seed=header.seed,
        objective=header.objective,
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
        claim=header.claim,
    )


def _merge(rec: Evaluation, state: _State, best_path: Path, make_record) -> None:
    state.evaluations += 1
    if rec.exact == ExactStatus.SOLVED:
        state.exact_solves += 1
    er = rec.exact_result
    if er is not None and er.key:
        state.cache[er.key] = er
    if rec.failed:
        state.errors += 1
        err_path = best_path.parent / "errors" / f"eval-{rec.index}.json"
        if not err_path.exists():
            inst = rec.to_instance(name=f"error-eval-{rec.index}")
            d = inst.to_dict()
            d["meta"] = {"error": rec.error, "evaluation": rec.index}
            write_json_atomic(err_path, d)
        return
    if rec.outcome == Outcome.SKIPPED:  # over its attempt budget: no result, no finding
        state.skipped += 1
        return
    state.seen.setdefault(rec.key, rec)
    ro = rec.ratio_optimistic
    state.best_opt = ro if state.best_opt is None else max(state.best_opt, ro)
    if state.best is None or score(rec) > score(state.best):
        state.best = rec
        if not record_is_for(best_path, rec):
            make_record(rec, best_path)


def record_from_log(
    header: CampaignHeader, rec: Evaluation, meta=None, policy: ResolvedPolicy | None = None
):
    """Rebuild the record (SPEC §8) of one logged evaluation: re-simulate, rebuild the UB
    schedule.  ``policy``: the header's policy already resolved (else resolved here)."""
    from ..certify import start_bracket, with_policy
    from ..record import record_from_bracket
    from ..simulation import simulate

    if policy is None:
        policy = resolve_policy(header.policy, header.params)
    inst = rec.to_instance(name=f"{header.policy}-worst-eval{rec.index}")
    res = simulate(inst, policy, seed=header.policy_seed)
    opt = Schedule.from_starts(inst, rec.ub_starts, producer=f"clairvoyant ({rec.ub_source})")
    b = with_policy(start_bracket(inst, opt, objective=header.objective, lb=rec.lb,
                                  lb_source=rec.lb_name or "bound"), inst, res.schedule)  # fmt: skip
    found_by: dict[str, Any] = {"strategy": header.strategy, "evaluation": rec.index,
                                "seconds": rec.t, "seed": header.seed, "origin": rec.origin}  # fmt: skip
    if (header.space or {}).get("kind") == "typed":  # SPEC §9: a typed record lists its types
        from ..space import TypedSpace

        found_by["types"] = [list(t) for t in TypedSpace.types(inst)]
    return record_from_bracket(
        inst,
        policy,
        header.params,
        header.seed,  # the campaign seed (it seeds the policy when the policy is seeded)
        b,
        found_by=found_by,
        meta=meta,
    )


# --------------------------------------------------------------------------- progress


class _Progress:
    """A rich progress bar on stderr: evaluations, evaluations/s, best certified/optimistic."""

    def __init__(self, enabled: bool, header: CampaignHeader, budget: int | None, label=None):
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
            label or f"search {header.policy}/{header.strategy}",
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
        bc = f"{state.best.ratio_certified:.4f}" if state.best else "-"
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
    "evaluate",
    "progress_enabled",
    "read_history",
    "read_log",
    "record_from_log",
    "run_campaign",
]
