"""The runs and probes of the conformance battery (:mod:`kvopt.conformance`): one simulation
with its decisions, and the perturbation checks ``blind``, ``predictions`` (SPEC §10.1),
``visibility`` and ``deterministic`` (each returns the failure in words, or ``None``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import BudgetError, InputError, PolicyError, UserCodeError
from ..instance import Instance
from ..policy import ResolvedPolicy
from ..schedule import check_schedule

#: Attempts a battery run may make (a policy that restarts forever is stopped, not hung).
MAX_ATTEMPTS = 20_000

# --------------------------------------------------------------------------- one run


@dataclass
class _Run:
    """One simulation: its decisions and schedule, or what went wrong."""

    decisions: tuple | None = None
    trace: tuple | None = None
    attempts: tuple | None = None
    error: str | None = None  # "model: …" or "no-exception: …" or "budget: …"
    kind: str | None = None


def _simulate(policy: ResolvedPolicy, inst: Instance, seed, adversary=None) -> _Run:
    from ..simulation import simulate

    try:
        res = simulate(inst, policy, seed=seed if policy.seeded else None, trace=True,
                       adversary=adversary, max_attempts=MAX_ATTEMPTS)  # fmt: skip
    except PolicyError as err:
        kind = "kills" if "kills = False" in str(err) else "model"
        return _Run(error=str(err), kind=kind)
    except BudgetError as err:
        return _Run(error=str(err), kind="budget")
    except InputError as err:
        return _Run(error=str(err), kind="input")
    except AssertionError as err:  # the checker refused the schedule (ScheduleInvalid)
        return _Run(error=str(err), kind="model")
    except UserCodeError as err:  # names the round and the policy's file and line
        return _Run(error=str(err), kind="no-exception")
    except Exception as err:  # noqa: BLE001 - a user's policy may raise anything
        return _Run(error=f"{type(err).__name__}: {err}", kind="no-exception")
    final = res.instance
    chk = check_schedule(final, res.schedule)
    if not chk.valid:
        return _Run(error=f"the schedule fails the checker: {chk.errors[0].message}", kind="model")
    trace = tuple(res.trace or ())
    decisions = tuple(r for r in trace if r[1] in ("start", "kill"))
    attempts = tuple(sorted((a.start, a.job, a.rounds, a.completed) for a in res.schedule.attempts))
    if _never_kills(policy, final, seed) and any(not a[3] for a in attempts):
        return _Run(error="an attempt was killed although the policy declares kills = False",
                    kind="kills")  # fmt: skip
    return _Run(decisions=decisions, trace=trace, attempts=attempts)


def _never_kills(policy: ResolvedPolicy, inst: Instance, seed) -> bool:
    """Whether the policy object declares ``kills = False`` for a run on ``inst`` (a
    parameter may change the mark; ``kills_when_mispredicted``: not where a prediction is
    wrong), as the engine holds it (:meth:`kvopt.engine.core._Engine.never_kills`)."""
    obj = policy.make(seed if policy.seeded else None)
    if getattr(obj, "kills", True) is not False:
        return False
    if getattr(obj, "kills_when_mispredicted", False):
        return bool((inst.predicted == inst.responses).all())
    return True


def _first_completion(trace: Sequence[tuple], jobs: set[int]) -> float:
    return min((t for t, what, j, _ in trace if what == "completion" and j in jobs),
               default=float("inf"))  # fmt: skip


def _prefix(decisions: Sequence[tuple], before: float) -> list[tuple]:
    return [d for d in decisions if d[0] < before]


def _first_difference(a: Sequence[tuple], b: Sequence[tuple]) -> str:
    for x, y in zip(a, b):
        if x != y:
            return f"round {x[0]}: {x[1]} job {x[2]} vs round {y[0]}: {y[1]} job {y[2]}"
    longer, which = (a, "first") if len(a) > len(b) else (b, "second")
    x = longer[min(len(a), len(b))]
    return f"round {x[0]}: {x[1]} job {x[2]} only in the {which} run"


# --------------------------------------------------------------------------- perturbations


def _early_difference(base: _Run, run: _Run, jobs: set[int]) -> tuple[float, str] | None:
    """Where two runs' decisions differ before the first completion of one of ``jobs`` (in
    either run): that round and the first difference, or ``None`` when they agree."""
    assert base.trace is not None and run.trace is not None
    before = min(_first_completion(base.trace, jobs), _first_completion(run.trace, jobs))
    a, b = _prefix(base.decisions or (), before), _prefix(run.decisions or (), before)
    return None if a == b else (before, _first_difference(a, b))


def _responses_changed(inst: Instance, how: str, rng_seed: int) -> Instance:
    """``inst`` with (some) response lengths changed, prompts and arrivals kept."""
    rng = np.random.default_rng(rng_seed)
    jobs = []
    for j in inst.jobs:
        room = inst.memory - j.prompt
        if how == "longer":
            o = min(room, 2 * j.response + 1)
        elif how == "shorter":
            o = max(1, j.response // 2)
        else:
            o = int(rng.integers(1, room + 1))
        jobs.append(dataclasses.replace(j, response=int(o), predicted_response=None))
    return inst.replace(jobs=tuple(jobs))


def _blind_failure(policy: ResolvedPolicy, inst, seed) -> str | None:
    base = _simulate(policy, inst, seed)
    if base.error:
        return None  # another check reports it
    for how in ("longer", "shorter", "random"):
        other = _responses_changed(inst, how, seed + inst.n)
        changed = {k for k, (x, y) in enumerate(zip(inst.jobs, other.jobs)) if x != y}
        if not changed:
            continue
        run = _simulate(policy, other, seed)
        if run.error:
            return None
        diff = _early_difference(base, run, changed)
        if diff:
            return (f"with the responses made {how} (jobs {sorted(changed)[:6]}), the decisions "
                    f"before round {diff[0]} differ: {diff[1]} — the policy "
                    "reads response lengths it has not seen")  # fmt: skip
    return None


def _with_predictions(inst: Instance, rng_seed: int) -> Instance:
    """``inst`` with a ``predicted_response`` on every job (often wrong, within ``M − s``)."""
    rng = np.random.default_rng(rng_seed)
    jobs = tuple(
        dataclasses.replace(j, predicted_response=int(rng.integers(1, inst.memory - j.prompt + 1)))
        for j in inst.jobs
    )
    return inst.replace(jobs=jobs)


def _truths_changed(inst: Instance, how: str, rng_seed: int) -> Instance:
    """``inst`` with its true responses changed and its predictions kept."""
    rng = np.random.default_rng(rng_seed)
    jobs = []
    for j in inst.jobs:
        room = inst.memory - j.prompt
        o = {"longer": min(room, 2 * j.response + 1), "shorter": max(1, j.response // 2)}.get(
            how, int(rng.integers(1, room + 1))
        )
        jobs.append(dataclasses.replace(j, response=int(o)))
    return inst.replace(jobs=tuple(jobs))


def _predictions_failure(policy: ResolvedPolicy, inst, seed) -> str | None:
    """SPEC §10.1: with predictions given, the true responses change no decision before the
    first completion (of any job, in either run)."""
    base_inst = _with_predictions(inst, seed + 31 * inst.n)
    base = _simulate(policy, base_inst, seed)
    if base.error:
        return None  # another check reports it
    for how in ("longer", "shorter", "random"):
        other = _truths_changed(base_inst, how, seed + inst.n)
        if other.jobs == base_inst.jobs:
            continue
        run = _simulate(policy, other, seed)
        if run.error:
            continue
        diff = _early_difference(base, run, set(range(base_inst.n)))
        if diff:
            return (f"with the same predictions and the true responses made {how}, the "
                    f"decisions before the first completion (round {diff[0]}) differ: "
                    f"{diff[1]} — the policy reads true lengths, not only "
                    "the predictions")  # fmt: skip
    return None


def uses_intervals(policy: ResolvedPolicy) -> bool:
    """Whether ``policy`` plans from interval predictions (its class sets ``uses_intervals``;
    the built-in ``a-max`` and ``a-min``)."""
    from ..policy.intervals import AMax, AMin

    cls = policy.spec.policy_class
    return bool(getattr(cls, "uses_intervals", False)) or issubclass(cls, AMax | AMin)


def with_intervals(inst: Instance, rng_seed: int) -> tuple[Instance, Instance]:
    """Two instances with the same ``predicted_interval`` on every job and true responses
    inside them that differ where the interval allows (prompts and arrivals kept).

    Job ``j`` gets ``lo = max(1, ⌈o/2⌉ − r)``, ``hi = min(M − s, 2o + r)`` (``r`` drawn in
    ``0..2``); the first instance keeps ``o``, the second draws a response in ``[lo, hi]``
    other than ``o`` where one exists (``hi`` or ``lo`` alternately, else uniform).
    """
    rng = np.random.default_rng(rng_seed)
    a, b = [], []
    for k, j in enumerate(inst.jobs):
        room = inst.memory - j.prompt
        r = int(rng.integers(0, 3))
        lo = max(1, (j.response + 1) // 2 - r)
        hi = max(lo, min(room, 2 * j.response + r))
        other = (hi if k % 2 == 0 else lo) if rng.random() < 0.7 else int(rng.integers(lo, hi + 1))
        if other == j.response and lo < hi:
            other = hi if j.response != hi else lo
        base = dataclasses.replace(j, predicted_response=None, predicted_interval=(lo, hi))
        a.append(base)
        b.append(dataclasses.replace(base, response=int(other)))
    return inst.replace(jobs=tuple(a)), inst.replace(jobs=tuple(b))


def _interval_blind_failure(policy: ResolvedPolicy, inst, seed) -> str | None:
    """The ``interval-blind`` check on ``inst`` (see :func:`with_intervals`); ``None`` when it
    holds or cannot be judged (a run failed: another check reports it)."""
    first, second = with_intervals(inst, seed + 7 * inst.n + 1)
    changed = {k for k, (x, y) in enumerate(zip(first.jobs, second.jobs)) if x != y}
    if not changed:
        return None
    base, run = _simulate(policy, first, seed), _simulate(policy, second, seed)
    if base.error or run.error:
        return None
    diff = _early_difference(base, run, changed)
    if diff:
        return (f"with the same intervals and other true responses inside them (jobs "
                f"{sorted(changed)[:6]}), the decisions before round {diff[0]} differ: "
                f"{diff[1]} — the policy reads true lengths, not the intervals")  # fmt: skip
    return None


def _visibility_failure(policy: ResolvedPolicy, inst, seed) -> str | None:
    late = [k for k, j in enumerate(inst.jobs) if j.arrival > 0]
    if not late:
        return None
    base = _simulate(policy, inst, seed)
    if base.error:
        return None
    for k in late[:3]:
        j = inst.jobs[k]
        s = max(1, min(inst.memory - 1, j.prompt * 2 if j.prompt * 2 < inst.memory else 1))
        o = max(1, min(inst.memory - s, j.response + 3))
        jobs = list(inst.jobs)
        jobs[k] = dataclasses.replace(j, prompt=s, response=o, predicted_response=None)
        other = inst.replace(jobs=tuple(jobs))
        if other.jobs[k] == j:
            continue
        run = _simulate(policy, other, seed)
        if run.error:
            return None
        a, b = _prefix(base.decisions or (), j.arrival), _prefix(run.decisions or (), j.arrival)
        if a != b:
            return (f"changing job {k}, which arrives at round {j.arrival}, changes the decisions "
                    f"before its arrival: {_first_difference(a, b)}")  # fmt: skip
    return None


def _deterministic_failure(policy: ResolvedPolicy, inst, seed) -> str | None:
    first = _simulate(policy, inst, seed)
    if first.error:
        return None
    for _ in range(2):
        again = _simulate(policy, inst, seed)
        if again.error:
            return f"a second run with the same seed failed: {again.error}"
        if again.attempts != first.attempts:
            return (f"two runs with seed {seed} give different schedules: "
                    f"{_first_difference(first.decisions or (), again.decisions or ())}")  # fmt: skip
    return None
