"""The per-job space (``kind="jobs"``): every job of an instance drawn on its own.

A :class:`Space` describes a class of instances structurally — how many jobs,
which memory budgets, which regimes (main paper §3 with Λ = M/4), arrivals or
not, identical prompts, a cap on the peak ``s + o`` — so that one object can
both *decide* membership (:meth:`Space.rule`, the broken rule or ``None``) and
*produce* members: :meth:`Space.sample` (random), :meth:`Space.mutate` (local
moves that stay inside), :meth:`Space.enumerate` (every member of a small
grid).  The instance classes of SPEC §7 are spaces (:mod:`kvopt.claim`), and
every policy has a default space inside its registry class
(:func:`kvopt.campaign.policy_space`).  Spaces only hold numbers and strings, so they pickle
to worker processes.

Every random choice takes a ``numpy.random.Generator``; the same generator
state gives the same instance.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from ..errors import InputError, did_you_mean
from ..instance import Instance, Job

#: The regimes of the main paper (§3, Λ = M/4), by the names the spaces use.
REGIMES = ("large", "prompt-heavy", "response-heavy")

#: The local moves of :meth:`Space.mutate` (the anneal strategy's mutations).
MUTATIONS = (
    "prompt",  # change one job's prompt
    "response",  # change one job's response
    "add",  # add a sampled job
    "remove",  # remove a job
    "duplicate",  # duplicate a job (identical jobs stress tie-breaking)
    "swap",  # swap two jobs (index order breaks ties in every policy)
    "scale",  # scale M and every length by one factor
    "arrival",  # shift one arrival
    "regime",  # move one job into another regime
)


def regime_of(prompt: int, response: int, memory: int) -> str:
    """The regime of a job (``s > M/4`` large; else ``o ≤ s`` prompt-heavy; else response-heavy)."""
    if 4 * prompt > memory:
        return "large"
    return "prompt-heavy" if response <= prompt else "response-heavy"


@dataclass(frozen=True)
class Space:
    """A class of instances (see the module docstring).

    ``n_min … n_max`` jobs, memory ``memory_min … memory_max``; every response
    ``≤ max_response`` (0: no cap beyond ``M``); every job's regime in
    ``regimes``; ``all_response_heavy`` additionally asks ``o > s`` of every job
    (large ones too — the class of the ``response`` policy); arrivals in
    ``0 … max_arrival`` when ``arrivals`` (else all jobs at round 0);
    ``identical_prompts`` asks one common prompt; the peak ``s + o`` is at
    most ``peak_limit · M`` (strictly below it when ``peak_strict``: e.g.
    ``α < 1`` of the greedy-area claim is ``peak_limit = 1, peak_strict``).
    """

    #: The value of ``--space kind=…`` that selects this space (not a field: ``to_dict`` omits it).
    kind: ClassVar[str] = "jobs"

    n_min: int = 2
    n_max: int = 8
    memory_min: int = 8
    memory_max: int = 48
    max_response: int = 0
    regimes: tuple[str, ...] = REGIMES
    all_response_heavy: bool = False
    arrivals: bool = False
    max_arrival: int = 0
    identical_prompts: bool = False
    peak_limit: Fraction = Fraction(1)
    peak_strict: bool = False

    def __post_init__(self) -> None:
        def need(ok: bool, field: str, rule: str) -> None:
            if not ok:
                raise InputError(rule, source=f"space.{field}")

        # types first (--space arrivals=maybe was kept as the string 'maybe', read as true)
        for name in ("all_response_heavy", "arrivals", "identical_prompts", "peak_strict"):
            v = getattr(self, name)
            need(isinstance(v, bool | np.bool_), name, f"must be true or false, got {v!r}")
        for name in ("n_min", "n_max", "memory_min", "memory_max", "max_response", "max_arrival"):
            v = getattr(self, name)
            need(isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_), name,
                 f"must be an integer, got {v!r}")  # fmt: skip
        need(
            0 <= self.n_min <= self.n_max,
            "n_min",
            f"need 0 <= n_min <= n_max, got {self.n_min}, {self.n_max}",
        )
        need(
            2 <= self.memory_min <= self.memory_max,
            "memory_min",
            f"need 2 <= memory_min <= memory_max, got {self.memory_min}, {self.memory_max}",
        )
        need(self.max_response >= 0, "max_response", f"must be >= 0, got {self.max_response}")
        need(self.max_arrival >= 0, "max_arrival", f"must be >= 0, got {self.max_arrival}")
        regs = tuple(self.regimes)
        need(
            bool(regs) and all(r in REGIMES for r in regs),
            "regimes",
            f"must be a non-empty subset of {', '.join(REGIMES)}, got {regs!r}",
        )
        object.__setattr__(self, "regimes", tuple(r for r in REGIMES if r in regs))
        object.__setattr__(self, "peak_limit", Fraction(self.peak_limit))
        need(0 < self.peak_limit <= 1, "peak_limit", f"must be in (0, 1], got {self.peak_limit}")
        if self.all_response_heavy:
            need("prompt-heavy" not in self.regimes, "regimes",
                 "all_response_heavy excludes the prompt-heavy regime")  # fmt: skip
        for m in (self.memory_min, self.memory_max):  # the class must not be empty at the ends
            if self.job_choices(m, probe=True) == 0:
                need(False, "memory_min", f"no job of the class fits memory {m}")

    # ----------------------------------------------------------------- helpers
    def replace(self, **changes: Any) -> Space:
        return dataclasses.replace(self, **changes)

    def peak_cap(self, memory: int) -> int:
        """Largest allowed ``s + o`` for memory ``M``."""
        lim = self.peak_limit * memory
        cap = math.floor(lim)
        if self.peak_strict and cap == lim:
            cap -= 1
        return min(cap, memory)

    def response_cap(self, memory: int) -> int:
        return memory if self.max_response <= 0 else min(self.max_response, memory)

    def _ranges(self, memory: int, regime: str) -> list[tuple[int, int, int]]:
        """``(s, o_lo, o_hi)`` for every allowed prompt ``s`` of ``regime`` under memory ``M``."""
        peak, ocap, small = self.peak_cap(memory), self.response_cap(memory), memory // 4
        out = []
        if regime == "large":
            s_lo, s_hi = small + 1, memory - 1
        else:
            s_lo, s_hi = 1, small
        for s in range(s_lo, s_hi + 1):
            o_lo, o_hi = 1, min(peak - s, ocap)
            if regime == "prompt-heavy":
                o_hi = min(o_hi, s)
            if regime == "response-heavy" or self.all_response_heavy:
                o_lo = max(o_lo, s + 1)
            if o_lo <= o_hi:
                out.append((s, o_lo, o_hi))
        return out

    def job_choices(self, memory: int, probe: bool = False) -> int:
        """How many ``(s, o)`` pairs the class allows under memory ``M`` (any regime)."""
        return sum(
            o_hi - o_lo + 1 for r in self.regimes for _, o_lo, o_hi in self._ranges(memory, r)
        )

    # -------------------------------------------------------------- membership
    def rule(self, inst: Instance, sizes: bool = True) -> str | None:
        """The first rule of this class that ``inst`` breaks, or ``None`` if it belongs.

        ``sizes=False`` checks only the structural rules (regimes, response-heavy,
        peak limit, arrivals or not, identical prompts, no predictions) and not
        the size ranges (n, M, ``max_response``, ``max_arrival``): that is the
        instance class of a claim, whose space only bounds where search looks.
        """
        n, M = inst.n, inst.memory
        if sizes and not self.n_min <= n <= self.n_max:
            return f"has {n} jobs, the class has {self.n_min}..{self.n_max}"
        if sizes and not self.memory_min <= M <= self.memory_max:
            return f"memory {M} outside {self.memory_min}..{self.memory_max}"
        peak = self.peak_cap(M)
        ocap = self.response_cap(M) if sizes else M
        prompts = set()
        for j, job in enumerate(inst.jobs):
            s, o, a = job.prompt, job.response, job.arrival
            reg = regime_of(s, o, M)
            if reg not in self.regimes:
                return (
                    f"job {j} (s={s}, o={o}) is {reg}; the class allows {', '.join(self.regimes)}"
                )
            if self.all_response_heavy and o <= s:
                return f"job {j} is not response-heavy (o={o} <= s={s})"
            if s + o > peak:
                rel = "<" if self.peak_strict else "<="
                return (
                    f"job {j} has peak s+o={s + o}; the class needs s+o {rel} {self.peak_limit}*M"
                )
            if o > ocap:
                return f"job {j} has response {o} > max_response {ocap}"
            if a and not self.arrivals:
                return f"job {j} arrives at round {a}; the class has all jobs at round 0"
            if sizes and a > self.arrival_cap(M):
                return f"job {j} arrives at round {a} > max_arrival {self.arrival_cap(M)}"
            if job.predicted_response is not None:
                return f"job {j} carries a predicted_response; the class uses true lengths"
            prompts.add(s)
        if self.identical_prompts and len(prompts) > 1:
            return f"prompts differ ({sorted(prompts)[:4]}…); the class has identical prompts"
        return None

    def arrival_cap(self, memory: int) -> int:
        if not self.arrivals:
            return 0
        return self.max_arrival if self.max_arrival > 0 else max(1, memory // 2)

    # ---------------------------------------------------------------- sampling
    def _sample_job(self, rng: np.random.Generator, memory: int, prompt: int | None = None,
                    regime: str | None = None, log_response: bool = False) -> Job | None:  # fmt: skip
        """A job of a random allowed regime; its response uniform in the allowed range, or
        log-uniform with ``log_response`` (the typed space's scale-free draw)."""
        regs = [regime] if regime else list(self.regimes)
        rng.shuffle(regs)
        for reg in regs:
            ranges = self._ranges(memory, reg)
            if prompt is not None:
                ranges = [r for r in ranges if r[0] == prompt]
            if not ranges:
                continue
            s, o_lo, o_hi = ranges[int(rng.integers(len(ranges)))]
            if log_response:
                u = float(rng.uniform(math.log(o_lo), math.log(o_hi + 1)))
                o = min(o_hi, max(o_lo, int(math.exp(u))))
            else:
                o = int(rng.integers(o_lo, o_hi + 1))
            return Job(prompt=s, response=o, arrival=self._sample_arrival(rng, memory))
        return None

    def _sample_arrival(self, rng: np.random.Generator, memory: int) -> int:
        cap = self.arrival_cap(memory)
        if cap == 0 or rng.random() < 0.5:
            return 0
        return int(rng.integers(0, cap + 1))

    def _common_prompt(self, rng: np.random.Generator, memory: int) -> int | None:
        ps = sorted({s for r in self.regimes for s, _, _ in self._ranges(memory, r)})
        return int(ps[int(rng.integers(len(ps)))]) if ps else None

    def sample(self, rng: np.random.Generator, tries: int = 200) -> Instance:
        """A random member: n and M uniform in their ranges, then each job in a random allowed regime."""
        for _ in range(tries):
            n = int(rng.integers(self.n_min, self.n_max + 1))
            M = int(rng.integers(self.memory_min, self.memory_max + 1))
            common = self._common_prompt(rng, M) if self.identical_prompts else None
            if self.identical_prompts and common is None:
                continue
            jobs = [self._sample_job(rng, M, prompt=common) for _ in range(n)]
            if any(j is None for j in jobs):
                continue
            inst = Instance(memory=M, jobs=tuple(jobs))
            if self.rule(inst) is None:
                return inst
        raise InputError("could not sample an instance of the class (is it empty?)", source="space")

    # ---------------------------------------------------------------- mutation
    def mutate(
        self, inst: Instance, rng: np.random.Generator, tries: int = 50
    ) -> tuple[Instance, str]:
        """One local move (:data:`MUTATIONS`) that keeps the instance in the class.

        Returns the new instance and the move's name.  Moves that cannot apply
        (remove at ``n_min``, arrival without arrivals, …) are skipped; after
        ``tries`` failed attempts a fresh sample is returned (move ``"restart"``).
        """
        for _ in range(tries):
            move = MUTATIONS[int(rng.integers(len(MUTATIONS)))]
            cand = self._move(inst, move, rng)
            if cand is not None and cand != inst and self.rule(cand) is None:
                return cand, move
        return self.sample(rng), "restart"

    def _move(self, inst: Instance, move: str, rng: np.random.Generator) -> Instance | None:
        jobs = list(inst.jobs)
        n, M = len(jobs), inst.memory
        pick = int(rng.integers(n)) if n else -1
        try:
            if move in ("prompt", "response") and n:
                j = jobs[pick]
                if move == "prompt":
                    if self.identical_prompts:
                        s = self._common_prompt(rng, M)
                        new = self._reprompt_all(jobs, s, rng, M)
                        return None if new is None else inst.replace(jobs=tuple(new))
                    s = _nudge(rng, j.prompt, 1, M - 1)
                    jobs[pick] = dataclasses.replace(j, prompt=s, response=min(j.response, M - s))
                else:
                    jobs[pick] = dataclasses.replace(
                        j, response=_nudge(rng, j.response, 1, M - j.prompt)
                    )
            elif move == "add" and n < self.n_max:
                common = jobs[0].prompt if (self.identical_prompts and jobs) else None
                job = self._sample_job(rng, M, prompt=common)
                if job is None:
                    return None
                jobs.insert(int(rng.integers(n + 1)), job)
            elif move == "remove" and n > self.n_min:
                del jobs[pick]
            elif move == "duplicate" and 0 < n < self.n_max:
                jobs.insert(int(rng.integers(n + 1)), jobs[pick])
            elif move == "swap" and n >= 2:
                a, b = rng.choice(n, size=2, replace=False)
                jobs[a], jobs[b] = jobs[b], jobs[a]
            elif move == "scale":
                f = float(rng.choice([0.5, 2 / 3, 0.8, 1.25, 1.5, 2.0]))
                M2 = int(round(M * f))
                if not self.memory_min <= M2 <= self.memory_max or M2 == M:
                    return None
                jobs = [
                    dataclasses.replace(
                        j,
                        prompt=max(1, round(j.prompt * f)),
                        response=max(1, round(j.response * f)),
                        arrival=round(j.arrival * f),
                    )
                    for j in jobs
                ]
                return Instance(memory=M2, jobs=tuple(jobs))
            elif move == "arrival" and self.arrivals and n:
                cap = self.arrival_cap(M)
                j = jobs[pick]
                jobs[pick] = dataclasses.replace(j, arrival=_nudge(rng, j.arrival, 0, cap))
            elif move == "regime" and n and not self.identical_prompts and len(self.regimes) > 1:
                j = jobs[pick]
                others = [r for r in self.regimes if r != regime_of(j.prompt, j.response, M)]
                job = self._sample_job(rng, M, regime=others[int(rng.integers(len(others)))])
                if job is None:
                    return None
                jobs[pick] = dataclasses.replace(job, arrival=j.arrival)
            else:
                return None
            return inst.replace(jobs=tuple(jobs))
        except InputError:  # e.g. s + o > M after a move: not a member
            return None

    def _reprompt_all(self, jobs, s, rng, M):
        if s is None:
            return None
        out = []
        for j in jobs:
            o = min(j.response, M - s)
            out.append(dataclasses.replace(j, prompt=s, response=max(o, 1)))
        return out

    # ------------------------------------------------------------- enumeration
    def pairs(self, memory: int) -> list[tuple[int, int]]:
        """Every allowed ``(s, o)`` under memory ``M``, sorted."""
        return sorted((s, o) for r in self.regimes for s, lo, hi in self._ranges(memory, r)
                      for o in range(lo, hi + 1))  # fmt: skip

    def enumerate(self, ordered: bool = True) -> Iterator[Instance]:
        """Every member with all jobs at round 0, by n, then M, then job tuples in lexicographic order.

        ``ordered=False`` lists each multiset of jobs once (sorted), which is
        enough for index-order-free questions; policies break ties by job
        index, so the default lists every order.
        """
        for n in range(self.n_min, self.n_max + 1):
            for M in range(self.memory_min, self.memory_max + 1):
                pairs = self.pairs(M)
                combos = (itertools.product(pairs, repeat=n) if ordered
                          else itertools.combinations_with_replacement(pairs, n))  # fmt: skip
                for combo in combos:
                    if self.identical_prompts and len({s for s, _ in combo}) > 1:
                        continue
                    inst = Instance(memory=M, jobs=tuple(Job(s, o) for s, o in combo))
                    if self.rule(inst) is None:
                        yield inst

    def count(self, ordered: bool = True) -> int:
        """Size of :meth:`enumerate` (without building the instances)."""
        total = 0
        for n in range(self.n_min, self.n_max + 1):
            for M in range(self.memory_min, self.memory_max + 1):
                pairs = self.pairs(M)
                if self.identical_prompts:
                    by_s: dict[int, int] = {}
                    for s, _ in pairs:
                        by_s[s] = by_s.get(s, 0) + 1
                    total += sum(
                        (c**n if ordered else math.comb(c + n - 1, n)) for c in by_s.values()
                    )
                else:
                    k = len(pairs)
                    total += k**n if ordered else math.comb(k + n - 1, n)
        return total

    # ------------------------------------------------------------------ output
    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["regimes"] = list(self.regimes)
        d["peak_limit"] = str(self.peak_limit)
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Space:
        d = dict(data)
        if "regimes" in d:
            d["regimes"] = tuple(d["regimes"])
        if "peak_limit" in d:
            d["peak_limit"] = Fraction(str(d["peak_limit"]))
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise InputError(f"unknown key (known: {', '.join(sorted(known))})"
                             + did_you_mean(unknown[0], known), field=unknown[0], source="space")  # fmt: skip
        return cls(**d)

    def describe(self) -> str:
        parts = [f"n {self.n_min}..{self.n_max}", f"M {self.memory_min}..{self.memory_max}",
                 "regimes " + "/".join(self.regimes)]  # fmt: skip
        if self.max_response:
            parts.append(f"o <= {self.max_response}")
        if self.all_response_heavy:
            parts.append("o > s for all jobs")
        if self.identical_prompts:
            parts.append("identical prompts")
        if self.peak_limit != 1 or self.peak_strict:
            parts.append(f"s+o {'<' if self.peak_strict else '<='} {self.peak_limit}*M")
        parts.append("arrivals" if self.arrivals else "all at round 0")
        return ", ".join(parts)


def _nudge(rng: np.random.Generator, value: int, lo: int, hi: int) -> int:
    """A new value in ``lo..hi``: a small step (±1..±25 %) or, one time in four, uniform."""
    if hi < lo:
        return value
    if rng.random() < 0.25:
        return int(rng.integers(lo, hi + 1))
    step = max(1, int(round(abs(value) * float(rng.uniform(0.05, 0.25)))))
    new = value + (step if rng.random() < 0.5 else -step)
    return int(min(max(new, lo), hi))


__all__ = ["MUTATIONS", "REGIMES", "Space", "regime_of"]
