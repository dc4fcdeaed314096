"""One evaluation of the adversarial search: screen cheaply, then certify (SPEC §8).

:func:`evaluate` takes an :class:`~kvopt.campaign.types.EvalTask` (it pickles
to worker processes and Dask workers) and returns an
:class:`~kvopt.campaign.types.Evaluation`, one line of ``evaluations.jsonl``:

1. simulate the policy → ``alg`` (the engine checks the schedule);
2. cheap lower bound ``LB`` (area / processing bounds of SPEC §2, or the
   makespan bounds) and cheap upper bound ``UB``: the best of the kill-free
   serial schedules of :func:`kvopt.exact.heuristic.place` (computed by the
   faster, equal :func:`kvopt.upper.place`; fixed orders, no
   timed local search, so the result is deterministic) and the kill-free
   clairvoyant policies greedy-area (backfill), MC-SF and SVF — every one a
   checked schedule;
3. **screen**: ``alg/LB`` is an upper estimate of the true ratio, ``alg/UB`` a
   certified lower one.  Only a candidate whose ``alg/LB`` exceeds the
   task's ``threshold`` (the best score before its batch) can beat the
   best, so only those are solved exactly, with ``exact_time_limit``
   seconds on one thread; exact results found earlier for the same job
   multiset (Opt does not depend on job order) come with the task as
   ``cached`` and are not solved again;
4. **typed campaigns** (``EvalTask.typed``, SPEC §9; hundreds of copies of
   a few job types): the cheap UB orders job types (:mod:`~kvopt.upper`)
   and is only the type orders unless the candidate could beat the best
   (``alg/LB`` above the threshold) and comes near it with them (``alg/UB``
   above :data:`TYPED_NEAR` times the threshold).  A candidate of at most
   :data:`TYPED_EXACT_N` jobs is solved exactly only when its cheap UB already
   makes it a new best (``alg/UB`` above the threshold; the solve can only
   raise its ratio): small typed instances with long responses often run
   into the time limit, and solving every close call left the walk 20
   evaluations a minute.  A candidate of more than :data:`TYPED_EXACT_N` jobs
   gets no exact solve in the loop: its certified
   ratio is ``alg/UB`` with the cheap UB (``kvopt grow``, ``kvopt shrink`` and
   ``kvopt solve`` certify a record further).  Measured (sjf and mcsf, 60 s,
   2 workers, n ≈ 100): exact solves at 10 s took 80 % of the time and raised
   the certified ratios they touched by 2 % at most, while the type-order UB is
   within a few per cent of the solvers' best schedules;
5. the result is a bracket (:func:`kvopt.certify.bracket` for steps 1–2 and
   4, the cached or new exact result merged by :func:`kvopt.certify.tighten`,
   the one merge rule); its ratios follow SPEC §8: ``ratio_certified =
   alg/ub`` and ``ratio_optimistic = alg/lb``, equal when optimal.  The
   campaign's best record is certified further at the end
   (:func:`kvopt.campaign.certify.certify_record`, ``--certify-seconds``).

The starts of the clairvoyant schedule of value ``ub`` are returned
(``ub_starts``, kill-free), so a record can be rebuilt from the log alone.

With a ``claim`` (validation), the result carries a ``score`` that campaigns
maximise instead of the certified ratio: for a ratio claim ``ratio / bound``
(the bound evaluated on the instance, e.g. ``1 + 2/(1−α)``), so a score above
1 is a certified violation; for a per-job or invariant claim the slack of
:func:`kvopt.claimchecks.claim_metrics` (no Opt needed, so no exact solve).
Every result carries the area bound (``area``) for the ``area-lb`` check.

The ``latency`` objective is ``Σ (C_i − a_i)``: the same schedules are optimal
as for ``total``; its bounds are the total-completion bounds minus ``Σ a_i``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..bound import lower_bounds
from ..certify import Effort, bracket, exact_opt, starts_of, tighten
from ..claim import USER_CLAIMS
from ..claimchecks import claim_metrics, needs_instrument
from ..errors import BudgetError, PolicyError, UserCodeError
from ..instance import Instance
from .types import (
    BUDGET_PREFIX,
    CompactInstance,
    EvalTask,
    Evaluation,
    ExactStatus,
    Screen,
)

#: The ``error`` of an evaluation whose user policy raised (SPEC §4): kept as a finding.
CRASH_PREFIX = "PolicyCrash: "

#: Typed candidates with more jobs than this are not solved exactly in the loop (module doc).
TYPED_EXACT_N = 16
#: The exact backend for large typed records (:func:`solve_options`; ``benchmarks/typed.py``).
TYPED_SOLVER = "highs"
#: Exact solves of typed candidates are deterministic up to this many jobs (:func:`exact_opt`).
DETERMINISTIC_N = 48
#: Typed candidates get the full cheap UB (local search over type orders, MC-SF, SVF) only
#: when ``alg/UB`` with the type orders alone is above this share of the best score.
TYPED_NEAR = 0.9


#: A candidate's simulation stops after ``ATTEMPTS_PER_JOB · n + ATTEMPTS_BASE`` attempts; the
#: evaluation is then skipped (``error`` starts with :data:`BUDGET_PREFIX`), not a finding.
#: The largest legitimate runs of the typed table had about 30,000 attempts (fcfs,
#: alpha-protect, sjf at n ≈ 400–500); beta-clear's random kill-alls made 450,000–670,000 on
#: typed instances of 50–330 jobs (20–50 s each) and one candidate stalled a campaign.
ATTEMPTS_PER_JOB = 200
ATTEMPTS_BASE = 100_000


def max_attempts(n: int) -> int:
    """The attempt budget of a candidate's simulation (see :data:`ATTEMPTS_PER_JOB`)."""
    return ATTEMPTS_PER_JOB * n + ATTEMPTS_BASE


def instance_key(inst: Instance) -> str:
    """Content hash of an instance as the policy sees it (job order matters)."""
    payload = [inst.memory, [(j.prompt, j.response, j.arrival) for j in inst.jobs]]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:20]


def canonical(inst: Instance) -> tuple[str, np.ndarray]:
    """Content hash of the job *multiset* (Opt's cache key) and the sorting permutation."""
    jobs = [(j.prompt, j.response, j.arrival) for j in inst.jobs]
    order = np.array(sorted(range(len(jobs)), key=lambda i: jobs[i]), dtype=np.int64)
    payload = [inst.memory, [jobs[i] for i in order]]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:20], order


def compact_instance(inst: Instance) -> CompactInstance:
    """The instance as three lists (what a log line stores)."""
    return CompactInstance.of(inst)


def expand_instance(d: CompactInstance | Mapping[str, Any], name: str = "") -> Instance:
    """The instance of a compact one (or of its JSON form)."""
    if not isinstance(d, CompactInstance):
        d = CompactInstance.from_dict(d)
    return d.expand(name=name)


def solve_options(inst: Instance, typed: bool) -> dict[str, Any]:
    """:func:`exact_opt`'s ``solver`` and ``deterministic`` for a candidate (typed or not).

    Typed candidates of more than :data:`TYPED_EXACT_N` jobs use
    :data:`TYPED_SOLVER` (HiGHS on the aggregated model: on typed instances of
    about 100 jobs it proved more optima and better bounds than ``auto`` in
    the same time, ``benchmarks/typed.py``'s notes), deterministic up to
    :data:`DETERMINISTIC_N` jobs.
    """
    if typed and inst.n > TYPED_EXACT_N:
        return {"solver": TYPED_SOLVER, "deterministic": inst.n <= DETERMINISTIC_N}
    return {"solver": "auto", "deterministic": True}


def evaluate(task: EvalTask) -> Evaluation:
    """Evaluate one candidate (see the module docstring); never raises for a policy failure.

    A :class:`~kvopt.errors.PolicyError` (the policy broke the model) is a
    finding, returned as ``error`` — the search logs it and goes on.
    """
    from ..simulation import simulate

    t0 = time.perf_counter()
    inst = task.instance.expand(name=f"eval-{task.index}")
    objective = task.objective
    key = instance_key(inst)
    ckey, order = canonical(inst)
    head = dict(index=task.index, batch=task.batch, key=key, n=inst.n, memory=inst.memory,
                instance=task.instance, origin=task.origin)  # fmt: skip
    claim_id = task.claim
    try:
        # a user's policy: its code is installed, exactly what the campaign loaded, and the
        # policy resolved once for this task
        policy = task.policy.resolve()
        if task.user_claim is not None:
            USER_CLAIMS[task.user_claim.id] = task.user_claim
        res = simulate(
            inst,
            policy,
            seed=task.policy_seed,
            instrument=needs_instrument(claim_id),
            max_attempts=max_attempts(inst.n),
        )
        metrics = claim_metrics(claim_id, inst, res) if claim_id else {}
    except PolicyError as err:
        return Evaluation(**head, error=f"PolicyError: {err}",
                          seconds=round(time.perf_counter() - t0, 4))  # fmt: skip
    except BudgetError as err:
        return Evaluation(**head, error=f"{BUDGET_PREFIX}{err}",
                          seconds=round(time.perf_counter() - t0, 4))  # fmt: skip
    except Exception as err:  # noqa: BLE001 - a user's policy may raise anything: a finding
        if task.policy.code is None:
            raise
        what = str(err) if isinstance(err, UserCodeError) else f"{type(err).__name__}: {err}"
        return Evaluation(**head, error=f"{CRASH_PREFIX}{what}",
                          seconds=round(time.perf_counter() - t0, 4))  # fmt: skip
    per_job = "score" in metrics  # per-job / invariant claims: the score needs no Opt
    bound = metrics.get("bound")
    scale = bound if (bound is not None and 0 < bound < float("inf")) else 1.0
    # typed: the full cheap UB (local search over type orders, MC-SF, SVF) only for a candidate
    # that could beat the best and comes near it with the type orders alone (TYPED_NEAR)
    full = not task.typed or per_job
    br = bracket(res.schedule, inst, Effort(typed=task.typed, full_ub=full), objective=objective)
    screen_lb = br.ratio_optimistic
    could_beat = screen_lb / scale > task.threshold
    near = br.ratio_certified / scale > TYPED_NEAR * task.threshold
    if task.typed and not full and could_beat and near:
        br = bracket(res.schedule, inst, Effort(typed=True), objective=objective, prior=br)
    exact = ExactStatus.SKIPPED
    exact_seconds = 0.0
    screen = Screen(ratio_lb=screen_lb, ratio_ub=br.ratio_certified)
    cached = task.cached
    if task.typed and (inst.n > TYPED_EXACT_N or br.ratio_certified / scale <= task.threshold):
        # the cheap bounds are all a large typed candidate gets, and a small one is solved only
        # when its cheap UB already makes it a new best (module doc)
        could_beat = False
    if cached is None and not per_job and could_beat and inst.n > 0 and not br.optimal:
        warm = starts_of(br.ub_schedule, inst.n)
        cached = exact_opt(inst, objective, task.exact_time_limit, warm,
                           **solve_options(inst, task.typed))  # fmt: skip
        # store in canonical job order, so any permutation of these jobs can reuse it
        starts = cached.starts
        if starts is not None:
            starts = tuple(starts[i] for i in order.tolist())
        cached = dataclasses.replace(cached, key=ckey, starts=starts)
        exact = ExactStatus.SOLVED
        exact_seconds = cached.seconds
    elif cached is not None:
        exact = ExactStatus.CACHED
    if cached is not None:  # back to this instance's job order, merged by the one rule
        st = None
        if cached.starts is not None:
            perm = np.zeros(inst.n, dtype=np.int64)
            perm[order] = np.asarray(cached.starts, dtype=np.int64)
            st = tuple(perm.tolist())
        br = tighten(br, inst, exact=dataclasses.replace(cached, starts=st))
    b = lower_bounds(inst)
    claim_fields: dict[str, Any] = {}
    if per_job:
        claim_fields = dict(score=metrics["score"], violation=metrics.get("violation"))
    elif claim_id:
        claim_fields = dict(bound=bound, score=br.ratio_certified / scale,
                            score_optimistic=br.ratio_optimistic / scale)  # fmt: skip
    return Evaluation(
        **head,
        **claim_fields,
        area=b.area,
        alg=br.alg,
        lb=br.lb,
        lb_name=br.lb_source,
        ub=br.ub,
        ub_source=br.ub_source,
        opt_status=br.status,
        exact=exact,
        ratio_certified=br.ratio_certified,
        ratio_optimistic=br.ratio_optimistic,
        screen=screen,
        kills=res.stats.kills,
        ub_starts=tuple(int(x) for x in starts_of(br.ub_schedule, inst.n)),
        exact_result=cached if exact == ExactStatus.SOLVED else None,
        exact_seconds=exact_seconds,
        seconds=round(time.perf_counter() - t0, 4),
    )


__all__ = [
    "BUDGET_PREFIX",
    "canonical",
    "compact_instance",
    "evaluate",
    "exact_opt",
    "solve_options",
    "expand_instance",
    "instance_key",
    "max_attempts",
]
