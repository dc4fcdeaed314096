"""A policy's conformance battery: ``kvopt policies --check REF`` (SPEC §4).

kvopt holds its own policies to the model with tests; this module runs the
same checks on anyone's policy (a reference, SPEC §4, or a built-in name), on
a battery of instances chosen to reach the corners where policies break:

==================  =========================================================
group               instances
==================  =========================================================
``random``          mixed regimes (main paper's large / prompt-heavy /
                    response-heavy), 1–10 jobs, several memories
``arrivals``        the same with Poisson arrivals
``one-job``         a single job (also one whose peak is exactly ``M``)
``full-peak``       a job whose peak ``s + o`` equals ``M`` among others
``identical``       many identical jobs (40 copies)
``long``            few jobs with long responses (hundreds of rounds)
``capped``          random instances (some with arrivals) with a batch cap
                    ``max_batch`` of 1 to 3 (SPEC §10.1)
``adversary``       the adaptive releases of the ``online-sqrt-n`` and
                    ``online-linear-n`` constructions (:mod:`kvopt.adversary`)
==================  =========================================================

Instances outside the policy's class (its ``check``) are skipped and counted.
The checks, on every instance:

* ``no-exception`` — the policy raises nothing (a :class:`~kvopt.errors.PolicyError`
  is the engine refusing a decision, counted by ``model``);
* ``model`` — every decision is allowed (no overflow, no start before arrival, …)
  and the schedule passes the independent checker (SPEC §1);
* ``deterministic`` — two runs with the same seed give the same schedule (an
  unseeded random choice fails it);
* ``blind`` (non-clairvoyant policies) — on two instances that differ only in
  response lengths, the decisions are the same up to the first round at which a
  changed job completes in either run (the first round the difference is
  observable; SPEC §1: ``o_i`` is revealed only at completion);
* ``predictions`` (policies that plan with ``predicted_response``, their class's
  ``predictions = True``, and non-clairvoyant ones) — on two instances that carry the
  same predictions and differ only in true responses, the decisions are the same up
  to the first round at which any job completes in either run (SPEC §10.1: a
  completion is what reveals a true length; running attempts' progress is visible to
  every policy);
* ``visibility`` (policies that accept arrivals) — changing a job that has not
  arrived changes no decision before its arrival;
* ``kills`` (policies declaring ``kills = False``) — no attempt is killed and no
  cap expires (the engine refuses both);
* ``interval-blind`` (policies that use interval predictions, issue 69) — every job
  is given an interval ``[lo, hi]`` around its response; on a second instance with
  the same intervals and other true responses inside them, the decisions are the
  same up to the first round at which a changed job completes in either run
  (:func:`_interval_blind_failure`: predictions stay predictions, SPEC §6.4).

A failing check is shrunk (delta debugging: drop jobs, then lower the numbers,
while the same check still fails) and the smallest failing instance is saved
as ``<out>/<check>.json`` with the failure in its ``meta``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..fileio import write_json_atomic
from ..instance import Instance, Job
from .probes import (  # noqa: F401  (MAX_ATTEMPTS, the probes: re-exported)
    MAX_ATTEMPTS,
    _blind_failure,
    _deterministic_failure,
    _interval_blind_failure,
    _predictions_failure,
    _simulate,
    _visibility_failure,
    uses_intervals,
    with_intervals,
)

#: The checks, in report order, with what each means (``kvopt policies --check``).
CHECKS: dict[str, str] = {
    "no-exception": "the policy raises no exception",
    "model": "every decision is allowed and every schedule passes the checker (SPEC §1)",
    "deterministic": "the same seed gives the same schedule",
    "blind": "same decisions when only responses it has not seen change (BlindPolicy)",
    "predictions": "given predictions, decisions before the first completion ignore the true "
    "responses (SPEC §10.1)",
    "visibility": "a job that has not arrived changes no decision before its arrival",
    "kills": "kills = False is honoured: no attempt killed, no cap expires",
    "interval-blind": "same decisions when only true lengths inside the same intervals change",
}


@dataclass(frozen=True)
class CheckOutcome:
    """One check over the battery: how many runs it judged, the first failure, the saved file."""

    name: str
    description: str
    runs: int = 0
    failures: int = 0
    message: str | None = None
    instance: str | None = None  # where the smallest failing instance was saved
    group: str | None = None  # the battery group of the first failure
    applicable: bool = True

    @property
    def status(self) -> str:
        """``passed``, ``failed``, ``n/a`` (the check does not apply to this policy) or
        ``not-run`` (it applies, but no run could be judged by it: every run it needed
        raised first, or no instance of the battery had what it needs)."""
        if not self.applicable:
            return "n/a"
        if self.failures:
            return "failed"
        return "passed" if self.runs else "not-run"

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.name,
            "status": self.status,
            "description": self.description,
            "runs": self.runs,
            "failures": self.failures,
            "message": self.message,
            "group": self.group,
            "instance": self.instance,
        }


@dataclass(frozen=True)
class ConformanceReport:
    """What ``kvopt policies --check REF`` reports (``--json``: :meth:`to_dict`)."""

    policy: str
    clairvoyant: bool
    kills: bool
    checks: tuple[CheckOutcome, ...]
    instances: int
    skipped: int
    seconds: float
    out: str
    params: Mapping[str, Any] = field(default_factory=dict)
    reference: Mapping[str, Any] | None = None

    @property
    def passed(self) -> bool:
        """Every applicable check ran at least once and none failed (a check not run is not
        a pass)."""
        return all(c.status in ("passed", "n/a") for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "params": dict(self.params),
            "reference": dict(self.reference) if self.reference else None,
            "clairvoyant": self.clairvoyant,
            "kills": self.kills,
            "passed": self.passed,
            "instances": self.instances,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 3),
            "out": self.out,
            "checks": [c.to_dict() for c in self.checks],
        }


# --------------------------------------------------------------------------- the battery


def _fit(jobs: Iterable[tuple[int, int, int]], memory: int, name: str, group: str) -> Instance:
    js = tuple(Job(int(s), int(o), int(a)) for s, o, a in jobs)
    return Instance(memory=int(memory), jobs=js, name=name, meta={"battery": group})


def battery(seed: int = 0, size: int = 1) -> list[tuple[str, Instance]]:
    """The battery's instances as ``(group, instance)`` (deterministic in ``seed``).

    ``size`` scales the number of random instances (1: about 60 instances in all).
    """
    from ..generators import generate

    out: list[tuple[str, Instance]] = []
    k = 0
    for rep in range(12 * size):
        n = 1 + rep % 10
        memory = (16, 24, 40, 64)[rep % 4]
        inst = generate("random", seed + rep, n=n, memory=memory)
        out.append(("random", inst.replace(name=f"random-{rep}")))
    for rep in range(10 * size):
        n = 2 + rep % 8
        memory = (24, 40, 64)[rep % 3]
        inst = generate("arrivals", seed + 100 + rep, n=n, memory=memory, rate=0.3)
        out.append(("arrivals", inst.replace(name=f"arrivals-{rep}")))
    rng = np.random.default_rng(seed)
    out.append(("one-job", _fit([(3, 5, 0)], 16, "one-job", "one-job")))
    out.append(("one-job", _fit([(7, 9, 0)], 16, "one-job-full", "one-job")))
    out.append(("one-job", _fit([(2, 3, 4)], 8, "one-job-late", "one-job")))
    for rep in range(4 * size):
        memory = int(rng.integers(12, 48))
        s = int(rng.integers(1, memory))
        others = [(int(rng.integers(1, memory // 3 + 1)), int(rng.integers(1, memory // 3 + 1)), 0)
                  for _ in range(int(rng.integers(1, 6)))]  # fmt: skip
        others = [(a, b, 0) for a, b, _ in others if a + b <= memory]
        jobs = [*others[: len(others) // 2], (s, memory - s, 0), *others[len(others) // 2 :]]
        out.append(("full-peak", _fit(jobs, memory, f"full-peak-{rep}", "full-peak")))
        k += 1
    for memory, s, o, count in ((32, 2, 3, 40), (64, 5, 5, 40), (20, 9, 10, 12)):
        jobs = [(s, o, 0)] * count
        out.append(("identical", _fit(jobs, memory, f"identical-{s}-{o}x{count}", "identical")))
    for rep in range(6 * size):
        n = 3 + rep % 8
        memory = (24, 40, 64)[rep % 3]
        family, extra = ("arrivals", {"rate": 0.5}) if rep % 2 else ("random", {})
        inst = generate(family, seed + 200 + rep, n=n, memory=memory, **extra)
        out.append(("capped", inst.replace(name=f"capped-{rep}", max_batch=1 + rep % 3)))
    for rep in range(3 * size):
        memory = int(rng.integers(300, 700))
        jobs = []
        for _ in range(int(rng.integers(2, 6))):
            o = int(rng.integers(100, memory // 2))
            s = int(rng.integers(1, memory - o))
            jobs.append((s, o, 0))
        out.append(("long", _fit(jobs, memory, f"long-{rep}", "long")))
    return out


def _adversary_runs() -> list[tuple[str, Instance, Callable[[], Any]]]:
    """The adaptive constructions: (name, start instance, adversary factory)."""
    from ..adversary import (
        LinearNAdversary,
        SqrtNAdversary,
        linear_n_instance,
        sqrt_n_instance,
    )

    return [
        ("sqrt-n-16", sqrt_n_instance(16), lambda: SqrtNAdversary(16)),
        ("linear-n-6", linear_n_instance(6), lambda: LinearNAdversary(6)),
    ]


# --------------------------------------------------------------------------- shrinking


def _shrink(inst: Instance, fails: Callable[[Instance], bool], seconds: float) -> Instance:
    """The smallest instance found on which ``fails`` still holds (drop jobs, lower numbers)."""
    deadline = time.monotonic() + seconds

    def ok(c: Instance) -> bool:
        try:
            return fails(c)
        except InputError:
            return False

    cur = inst
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        chunk = max(1, cur.n // 2)
        while chunk >= 1 and time.monotonic() < deadline:  # drop chunks of jobs
            k = 0
            while k < cur.n and cur.n > 1 and time.monotonic() < deadline:
                jobs = cur.jobs[:k] + cur.jobs[k + chunk :]
                cand = cur.replace(jobs=jobs) if jobs else None
                if cand is not None and ok(cand):
                    cur, changed = cand, True
                else:
                    k += chunk
            chunk //= 2
        for cand in _lower_numbers(cur):  # lower M, prompts, responses, arrivals
            if time.monotonic() >= deadline:
                break
            if ok(cand):
                cur, changed = cand, True
                break
    return cur


def _lower_numbers(inst: Instance) -> Iterable[Instance]:
    peak = max((j.prompt + j.response for j in inst.jobs), default=1)
    for m in (peak, (inst.memory + peak) // 2, inst.memory - 1):
        if peak <= m < inst.memory:
            yield inst.replace(memory=m)
    for k, j in enumerate(inst.jobs):
        for field_, low in (("response", 1), ("prompt", 1), ("arrival", 0)):
            v = getattr(j, field_)
            for w in (low, v // 2, v - 1):
                if low <= w < v:
                    jobs = list(inst.jobs)
                    jobs[k] = dataclasses.replace(j, **{field_: w})
                    yield inst.replace(jobs=tuple(jobs))


# --------------------------------------------------------------------------- the command


def check_policy(
    policy: Any,
    *,
    params: Mapping[str, Any] | None = None,
    seed: int = 0,
    out: str | Path | None = None,
    size: int = 1,
    shrink_seconds: float = 20.0,
    progress: Callable[[str], None] | None = None,
) -> ConformanceReport:
    """Run ``policy`` (a name, a reference or a class; SPEC §4) through the battery.

    Failing checks save their smallest failing instance under ``out`` (default
    ``kvopt-check/<policy>``); nothing is written when every check passes.
    """
    from ..policy import resolve_policy

    ref = resolve_policy(policy, params)  # once: every run of the battery uses it
    spec, resolved = ref.spec, dict(ref.params)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"must be an integer >= 0, got {seed!r}", source="--seed")
    out_dir = Path(out) if out is not None else Path("kvopt-check") / spec.slug
    say = progress or (lambda msg: None)
    t0 = time.monotonic()
    # the object's own mark: a parameter may change it (``svf admission=vllm`` preempts)
    never_kills = getattr(ref.make(seed if spec.seeded else None), "kills", True) is False
    applicable = {
        "no-exception": True,
        "model": True,
        "deterministic": True,
        "blind": not spec.clairvoyant,
        "predictions": spec.predictions or not spec.clairvoyant,
        "visibility": spec.arrivals,
        "kills": never_kills,
        "interval-blind": uses_intervals(ref),
    }
    runs = dict.fromkeys(CHECKS, 0)
    fails: dict[str, list[tuple[str, Instance, str, Callable[[Instance], bool] | None]]] = {
        c: [] for c in CHECKS
    }
    instances = skipped = 0

    def in_class(inst: Instance) -> bool:
        try:
            return not ref.rule(inst)
        except InputError:
            return False

    def run_fails(kind: str) -> Callable[[Instance], bool]:
        def f(c: Instance) -> bool:
            if not in_class(c):
                return False
            r = _simulate(ref, c, seed)
            return r.kind == kind

        return f  # fmt: skip

    def probe_fails(probe) -> Callable[[Instance], bool]:
        return lambda c: in_class(c) and probe(ref, c, seed) is not None

    last_group = None
    # the battery, plus instances drawn from the policy's own class (its default search space),
    # so that a policy with a narrow class (Rect's prompt-heavy small jobs) is checked as widely
    cases = battery(seed, size)
    try:
        space = spec.default_space()
        rng = np.random.default_rng([seed, 7])
        cases += [("class", space.sample(rng).replace(name=f"class-{k}")) for k in range(12 * size)]
    except InputError:
        pass  # a class the space cannot sample: the battery alone
    for group, inst in cases:
        if not in_class(inst):
            skipped += 1
            continue
        instances += 1
        if group != last_group:
            say(f"{group} instances")
            last_group = group
        base = _simulate(ref, inst, seed)
        runs["no-exception"] += 1
        if base.kind not in ("no-exception", "input"):  # a run that raised judges no decision
            for c in ("model", "kills"):
                if applicable[c]:
                    runs[c] += 1
        if base.error:
            kind = base.kind if base.kind in ("no-exception", "model", "kills") else "model"
            if kind == "kills" and not applicable["kills"]:
                kind = "model"
            fails[kind].append((group, inst, base.error, run_fails(base.kind or kind)))
            continue
        for c, probe in (("deterministic", _deterministic_failure), ("blind", _blind_failure),
                         ("predictions", _predictions_failure),
                         ("visibility", _visibility_failure),
                         ("interval-blind", _interval_blind_failure)):  # fmt: skip
            if not applicable[c]:
                continue
            if c == "visibility" and not inst.has_arrivals:
                continue
            runs[c] += 1
            msg = probe(ref, inst, seed)
            if msg:
                fails[c].append((group, inst, msg, probe_fails(probe)))
                if c == "deterministic":  # runs that differ anyway say nothing of blindness
                    break
    if spec.arrivals:  # the adversary's releases
        for label, start, make_adv in _adversary_runs():
            if not in_class(start):
                skipped += 1
                continue
            instances += 1
            say(f"adversary: {label}")
            r = _simulate(ref, start, seed, adversary=make_adv())
            runs["no-exception"] += 1
            if r.kind not in ("no-exception", "input"):
                runs["model"] += 1
                if never_kills:
                    runs["kills"] += 1
            if r.error:
                kind = r.kind if r.kind in ("no-exception", "model", "kills") else "model"
                fails[kind].append((f"adversary {label}", start, r.error, None))
            else:
                again = _simulate(ref, start, seed, adversary=make_adv())
                runs["deterministic"] += 1
                if again.attempts != r.attempts:
                    fails["deterministic"].append(
                        (f"adversary {label}", start, "two runs against the adversary with the "
                         "same seed give different schedules", None))  # fmt: skip
    outcomes = []
    for c, desc in CHECKS.items():
        found = fails[c]
        if not found:
            outcomes.append(CheckOutcome(c, desc, runs[c], 0, applicable=applicable[c]))
            continue
        # the smallest self-contained failure first (an adversary's run needs its adversary)
        group, inst, msg, still_fails = min(
            found, key=lambda f: (f[3] is None, f[1].n, f[1].memory)
        )
        small = inst
        if still_fails is not None:
            say(f"{c}: shrinking the smallest failing instance ({inst.n} jobs)")
            small = _shrink(inst, still_fails, shrink_seconds)
            if small is not inst:
                again = {
                    "deterministic": lambda x: _deterministic_failure(ref, x, seed),
                    "blind": lambda x: _blind_failure(ref, x, seed),
                    "predictions": lambda x: _predictions_failure(ref, x, seed),
                    "visibility": lambda x: _visibility_failure(ref, x, seed),
                    "interval-blind": lambda x: _interval_blind_failure(ref, x, seed),
                }.get(c)
                now = again(small) if again is not None else _simulate(ref, small, seed).error
                msg = now or f"{msg} (on the instance before shrinking)"
        path = out_dir / f"{c}.json"
        d = small.replace(name=f"{spec.slug}-{c}").to_dict()
        d["meta"] = {"source": "kvopt policies --check", "policy": spec.name,
                     "params": dict(resolved), "seed": seed, "check": c, "group": group,
                     "failure": msg}  # fmt: skip
        if still_fails is None:  # an adversary's run: the instance it starts from
            d["meta"]["adversary"] = group.removeprefix("adversary ")
        write_json_atomic(path, d)
        outcomes.append(CheckOutcome(c, desc, runs[c], len(found), msg, str(path), group))
    return ConformanceReport(
        policy=spec.name,
        clairvoyant=spec.clairvoyant,
        kills=not never_kills,
        checks=tuple(outcomes),
        instances=instances,
        skipped=skipped,
        seconds=time.monotonic() - t0,
        out=str(out_dir),
        params=resolved,
        reference=spec.code.to_dict() if spec.code is not None else None,
    )


def format_report(rep: ConformanceReport) -> str:
    """The report as text: one line per check."""
    kind = "clairvoyant" if rep.clairvoyant else "non-clairvoyant (BlindPolicy)"
    lines = [
        f"kvopt policies --check {rep.policy}: {kind}, "
        f"{'may kill' if rep.kills else 'declares kills = False'}; {rep.instances} instances "
        f"({rep.skipped} outside its class skipped), {rep.seconds:.1f}s",
    ]
    w = max(len(c) for c in CHECKS)
    for c in rep.checks:
        tail = f"{c.runs} run(s)" if c.applicable else "not applicable"
        if c.status == "not-run":
            tail = "0 runs: " + _NOT_RUN.get(c.name, "no run could be judged")
        lines.append(f"  {c.status.upper().replace('-', ' '):7} {c.name:<{w}}  {tail}")
        if c.failures:
            lines.append(
                f"         {c.failures} failing instance(s); smallest ({c.group}): {c.message}"
            )
            lines.append(f"         smallest failing instance saved: {c.instance}")
    if rep.passed:
        lines.append("all checks passed")
    elif any(c.failures for c in rep.checks):
        lines.append("some checks FAILED")
    else:
        lines.append("not every check could run: NOT RUN is not a pass")
    return "\n".join(lines)


#: Why a check judged no run (``format_report``).
_NOT_RUN = {
    "no-exception": "no instance of the battery is in the policy's class",
    "model": "every run raised before it made a schedule (see no-exception)",
    "kills": "every run raised before it made a schedule (see no-exception)",
    "deterministic": "every run raised or broke the model before it could be repeated",
    "blind": "every run raised or broke the model before responses could be changed",
    "predictions": "every run raised or broke the model before responses could be changed",
    "visibility": "no run on an instance with arrivals ended without an error",
    "interval-blind": "every run with intervals raised or broke the model",
}


__all__ = ["CHECKS", "CheckOutcome", "ConformanceReport", "battery", "check_policy",
           "format_report"]  # fmt: skip
