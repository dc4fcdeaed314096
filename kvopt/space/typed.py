"""The typed space (``kind="typed"``, SPEC §9): a few job types, many copies of each.

An instance of a :class:`TypedSpace` is a list of job types
``(prompt, response, arrival, count)`` — ``count`` identical jobs each, jobs
indexed type by type, ``n = Σ count`` — under one memory budget ``M``.  It is
an ordinary :class:`~kvopt.instance.Instance`; its types are recovered by
:meth:`TypedSpace.types` (maximal runs of consecutive identical jobs), and
:meth:`TypedSpace.build` turns types back into an instance.  The types are not
stored in ``Instance.meta``: a meta entry would go stale under
``Instance.replace``, while the run-length is canonical and cheap.

The *class* rules (regimes, ``all_response_heavy``, arrivals or not,
identical prompts, the peak limit) are those of the per-job
:class:`~kvopt.space.jobs.Space` and apply to every job: a typed space holds a
per-job ``Space`` with the same fields (:attr:`TypedSpace.per_job`) and
decides class membership with its code; only the sizes (number of types,
counts, n, M, responses, arrivals) are the typed space's own.  The lower-bound
constructions of the papers (Proposition 1, the Ω(√n) adversary, the
two-point family) are typed instances with two types.

The campaign's CMA strategy encodes one slot per job up to ``n_max`` and is
per-job only; random sampling, annealing (:meth:`TypedSpace.mutate`) and
exhaustive enumeration work on either kind.  Every random choice takes a
``numpy.random.Generator``; the same generator state gives the same instance.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar, NamedTuple

import numpy as np

from ..errors import InputError, did_you_mean
from ..instance import Instance, Job
from .jobs import REGIMES, Space, _nudge

#: The local moves of :meth:`TypedSpace.mutate` (SPEC §9).
TYPED_MUTATIONS = (
    "prompt",  # change one type's prompt (every type's, with identical prompts)
    "response",  # change one type's response
    "arrival",  # move one type's arrival
    "double",  # double one type's count
    "halve",  # halve one type's count
    "increment",  # one more job of a type
    "decrement",  # one job fewer of a type
    "add",  # add a sampled type
    "remove",  # remove a type
    "split",  # split a type in two that differ in arrival or size (counts summing)
    "merge",  # merge two types into one (same sizes preferred; counts summed)
    "scale",  # scale M and every type's lengths and arrival by one factor
    "scale-types",  # scale M and the lengths and arrivals of some types only
    "swap",  # swap two types in the index order (policies break ties by index)
    "snap",  # set one type's prompt so that its peak s + o sits at a memory threshold M // k (+1)
)

#: The structural motifs of :meth:`TypedSpace.motif` (restarts of typed campaigns).
MOTIFS = ("long-short", "blockers", "wide-narrow", "head-of-line")

#: The class rules a typed space shares with the per-job space (everything but the sizes).
STRUCTURE = ("regimes", "all_response_heavy", "arrivals", "identical_prompts", "peak_limit",
             "peak_strict")  # fmt: skip

_INTS = ("types_max", "n_min", "n_max", "memory_min", "memory_max", "max_response", "max_arrival")
_BOOLS = ("all_response_heavy", "arrivals", "identical_prompts", "peak_strict")
_SCALES = (Fraction(1, 2), Fraction(2, 3), Fraction(3, 2), Fraction(2))


class JobType(NamedTuple):
    """``count`` identical jobs ``(prompt, response, arrival)``."""

    prompt: int
    response: int
    arrival: int
    count: int


@dataclass(frozen=True)
class TypedSpace:
    """A class of typed instances (see the module docstring).

    At most ``types_max`` types of at most ``count_max`` jobs each (``None``:
    ``n_max``), ``n_min … n_max`` jobs in all, memory ``memory_min …
    memory_max``, responses ``≤ max_response`` (0: no cap beyond ``M``),
    arrivals in ``0 … max_arrival`` (0: ``M/2``) when ``arrivals``.  The other
    fields are the class rules of :class:`~kvopt.space.jobs.Space`, with the
    same meaning.
    """

    #: The value of ``--space kind=…`` that selects this space.
    kind: ClassVar[str] = "typed"

    types_max: int = 4
    count_max: int | None = None
    n_min: int = 2
    n_max: int = 512
    memory_min: int = 8
    memory_max: int = 256
    max_response: int = 64
    regimes: tuple[str, ...] = REGIMES
    all_response_heavy: bool = False
    arrivals: bool = False
    max_arrival: int = 0
    identical_prompts: bool = False
    peak_limit: Fraction = Fraction(1)
    peak_strict: bool = False
    #: The per-job space with the same fields: its code decides the class rules.
    per_job: Space = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        def need(ok: bool, name: str, rule: str) -> None:
            if not ok:
                raise InputError(rule, source=f"space.{name}")

        def is_int(x: Any) -> bool:
            return isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_)

        for name in _INTS + (("count_max",) if self.count_max is not None else ()):
            value = getattr(self, name)
            need(is_int(value), name, f"must be an integer, got {value!r}")
            object.__setattr__(self, name, int(value))
        for name in _BOOLS:
            value = getattr(self, name)
            need(isinstance(value, bool | np.bool_), name, f"must be true or false, got {value!r}")
            object.__setattr__(self, name, bool(value))
        need(self.types_max >= 1, "types_max", f"must be >= 1, got {self.types_max}")
        need(self.count_max is None or self.count_max >= 1, "count_max",
             f"must be >= 1, got {self.count_max}")  # fmt: skip
        need(self.n_min >= 1, "n_min", f"a typed instance has at least one job, got {self.n_min}")
        per_job = Space(**{f.name: getattr(self, f.name) for f in dataclasses.fields(Space)})
        object.__setattr__(self, "regimes", per_job.regimes)
        object.__setattr__(self, "peak_limit", per_job.peak_limit)
        object.__setattr__(self, "per_job", per_job)
        need(self.types_max * self.count_cap >= self.n_min, "n_min",
             f"{self.types_max} types of at most {self.count_cap} jobs cannot reach "
             f"n_min {self.n_min}")  # fmt: skip

    @classmethod
    def from_space(cls, space: Any, **sizes: Any) -> TypedSpace:
        """The typed space with ``space``'s class rules (:data:`STRUCTURE`) and typed sizes.

        ``space`` is a per-job :class:`~kvopt.space.jobs.Space` (a policy's or a
        claim's) or another typed space; ``sizes`` override the typed defaults
        (and may override class rules too).
        """
        return cls(**{**{f: getattr(space, f) for f in STRUCTURE}, **sizes})

    # ----------------------------------------------------------------- helpers
    def replace(self, **changes: Any) -> TypedSpace:
        return dataclasses.replace(self, **changes)

    @property
    def count_cap(self) -> int:
        """Largest count of one type (``count_max``, or ``n_max`` when unset)."""
        return min(self.n_max, self.n_max if self.count_max is None else self.count_max)

    def peak_cap(self, memory: int) -> int:
        return self.per_job.peak_cap(memory)

    def response_cap(self, memory: int) -> int:
        return self.per_job.response_cap(memory)

    def arrival_cap(self, memory: int) -> int:
        return self.per_job.arrival_cap(memory)

    def job_choices(self, memory: int, probe: bool = False) -> int:
        return self.per_job.job_choices(memory, probe)

    def pairs(self, memory: int) -> list[tuple[int, int]]:
        """Every allowed ``(s, o)`` of one job under memory ``M``, sorted."""
        return self.per_job.pairs(memory)

    # ------------------------------------------------------------------- types
    @staticmethod
    def types(inst: Instance) -> list[JobType]:
        """The types of ``inst``: maximal runs of consecutive jobs with equal (s, o, a)."""
        n = inst.n
        if n == 0:
            return []
        key = np.stack([inst.prompts, inst.responses, inst.arrivals], axis=1)
        starts = np.flatnonzero(np.r_[True, np.any(key[1:] != key[:-1], axis=1)])
        counts = np.diff(np.r_[starts, n])
        return [JobType(int(key[i, 0]), int(key[i, 1]), int(key[i, 2]), int(c))
                for i, c in zip(starts, counts)]  # fmt: skip

    @staticmethod
    def build(memory: int, types: Sequence[Sequence[int]], name: str = "") -> Instance:
        """The instance of ``types`` (``(prompt, response, arrival, count)`` each) under ``memory``.

        Inverse of :meth:`types` when consecutive types differ.
        """
        jobs: list[Job] = []
        for k, t in enumerate(types):
            s, o, a, c = t
            if not isinstance(c, int | np.integer) or isinstance(c, bool) or c < 1:
                raise InputError(f"must be an integer >= 1, got {c!r}", field=f"types[{k}].count")
            jobs.extend(itertools.repeat(Job(prompt=s, response=o, arrival=a), int(c)))
        return Instance(memory=memory, jobs=tuple(jobs), name=name)

    # -------------------------------------------------------------- membership
    def rule(self, inst: Instance, sizes: bool = True) -> str | None:
        """The first rule of this class that ``inst`` breaks, or ``None`` if it belongs.

        The class rules are checked job by job by the per-job space's code;
        ``sizes=False`` stops there (a claim's class).  Then: number of types,
        counts, n, M, responses and arrivals.
        """
        why = self.per_job.rule(inst, sizes=False)
        if why is not None or not sizes:
            return why
        types = self.types(inst)
        if len(types) > self.types_max:
            return f"has {len(types)} job types, the class has at most {self.types_max}"
        n, M = inst.n, inst.memory
        for k, t in enumerate(types):
            if t.count > self.count_cap:
                return f"type {k} has {t.count} jobs > count_max {self.count_cap}"
        if not self.n_min <= n <= self.n_max:
            return f"has {n} jobs, the class has {self.n_min}..{self.n_max}"
        if not self.memory_min <= M <= self.memory_max:
            return f"memory {M} outside {self.memory_min}..{self.memory_max}"
        ocap, acap = self.response_cap(M), self.arrival_cap(M)
        for k, t in enumerate(types):
            if t.response > ocap:
                return f"type {k} has response {t.response} > max_response {ocap}"
            if t.arrival > acap:
                return f"type {k} arrives at round {t.arrival} > max_arrival {acap}"
        return None

    # ---------------------------------------------------------------- sampling
    def _sample_count(self, rng: np.random.Generator) -> int:
        """A count log-uniform in ``1 … count_cap``."""
        cap = self.count_cap
        return min(cap, max(1, int(math.exp(float(rng.uniform(0.0, math.log(cap + 1)))))))

    def _fit(self, counts: list[int]) -> list[int] | None:
        """Counts scaled (proportionally, each ≥ 1, ≤ count_cap) so that n is in range."""
        n, cap = sum(counts), self.count_cap
        if n > self.n_max:
            counts = [max(1, c * self.n_max // n) for c in counts]
        elif n < self.n_min:
            counts = [min(cap, -(-c * self.n_min // n)) for c in counts]
        while sum(counts) > self.n_max:  # at most one per type after the scaling
            k = int(np.argmax(counts))
            if counts[k] == 1:
                return None
            counts[k] -= 1
        return counts if sum(counts) >= self.n_min else None

    def sample(self, rng: np.random.Generator, tries: int = 200) -> Instance:
        """A random member (SPEC §9).

        Number of types uniform in ``1 … types_max`` (from ``n_min / count_max``
        up, so that n can reach ``n_min``), M uniform in its range,
        each type's ``(s, o)`` and arrival as the per-job space samples a job
        (identical prompts: one common prompt), counts log-uniform in
        ``1 … count_max``, then scaled into the n range.
        """
        pj = self.per_job
        for _ in range(tries):
            k = int(
                rng.integers(-(-self.n_min // self.count_cap), min(self.types_max, self.n_max) + 1)
            )
            M = int(rng.integers(self.memory_min, self.memory_max + 1))
            common = pj._common_prompt(rng, M) if self.identical_prompts else None
            if self.identical_prompts and common is None:
                continue
            # responses log-uniform in half the samples: the papers' families mix scales (1 and L)
            scale_free = bool(rng.random() < 0.5)
            jobs = [pj._sample_job(rng, M, prompt=common, log_response=scale_free)
                    for _ in range(k)]  # fmt: skip
            counts = self._fit([self._sample_count(rng) for _ in range(k)])
            if counts is None or any(j is None for j in jobs):
                continue
            types = _merged([JobType(j.prompt, j.response, j.arrival, c)
                             for j, c in zip(jobs, counts)])  # fmt: skip
            inst = self.build(M, types)
            if self.rule(inst) is None:
                return inst
        raise InputError("could not sample an instance of the class (is it empty?)", source="space")

    # ------------------------------------------------------------------ motifs
    def motif(self, rng: np.random.Generator, name: str | None = None,
              tries: int = 60) -> tuple[Instance, str]:  # fmt: skip
        """A member built from a structural motif of the worst cases known (:data:`MOTIFS`):
        ``(instance, motif name)``, or a plain :meth:`sample` (motif ``"sample"``) when no motif
        fits the class in ``tries`` draws.

        * ``long-short`` — one long job (small prompt, response near the cap) ahead of many
          unit jobs (arriving one round later where arrivals are allowed): the shape of the
          greedy-area record;
        * ``blockers`` — one to three types of a few large jobs ahead of many unit jobs (the
          FCFS, Serial, SPS and MC-Benchmark records);
        * ``wide-narrow`` — many wide jobs (prompt just over ``M/k``, short response) before
          narrow ones (small prompt, longer response): head-of-line blocking, the MC-SF and SJF
          records;
        * ``head-of-line`` — about ``√M`` heavy jobs ahead of about ``M`` small ones: the
          square-root laws of the single-priority rules.

        Sizes are drawn inside the class's caps (peak, response, arrival, counts, n, M), each
        motif's counts then fitted into the n range; the class rules decide membership.
        """
        names = MOTIFS if name is None else (name,)
        for _ in range(tries):
            m = names[int(rng.integers(len(names)))]
            M = int(rng.integers(self.memory_min, self.memory_max + 1))
            if rng.random() < 0.5:  # the records sit in the upper half of the memory range
                M = int(rng.integers((self.memory_min + self.memory_max) // 2, self.memory_max + 1))
            try:
                types = self._motif_types(m, M, rng)
            except ValueError:
                continue
            if types is None or len(types) > self.types_max:
                continue
            counts = self._fit([t.count for t in types])
            if counts is None:
                continue
            types = _merged([t._replace(count=c) for t, c in zip(types, counts)])
            try:
                inst = self.build(M, types)
            except InputError:
                continue
            if self.rule(inst) is None:
                return inst, m
        return self.sample(rng), "sample"

    def _motif_types(self, motif: str, M: int, rng: np.random.Generator) -> list[JobType] | None:
        peak = self.peak_cap(M)
        rcap = min(self.response_cap(M), peak - 1)
        if peak < 2 or rcap < 1:
            return None
        late = 1 if self.arrivals and self.arrival_cap(M) >= 1 else 0
        many = int(rng.integers(max(2, self.n_max // 4), self.n_max + 1))

        def job(s: int, o: int, a: int = 0, c: int = 1) -> JobType:
            o = max(1, min(int(o), rcap))
            s = max(1, min(int(s), peak - o))
            return JobType(s, o, a, max(1, min(int(c), self.count_cap)))

        if motif == "long-short":
            long = job(int(rng.integers(1, 3)), rcap - int(rng.integers(0, max(1, rcap // 8))))
            c = min(many, int(rng.integers(max(1, M // 2), M + 1)))
            return [long, job(1, int(rng.integers(1, 3)), late, c)]
        if motif == "blockers":
            out = []
            for _ in range(int(rng.integers(1, min(3, self.types_max - 1) + 1))):
                o = int(rng.integers(max(1, rcap // 4), rcap + 1))
                s = int(rng.integers(1, max(2, peak - o + 1)))
                out.append(job(s, o, 0, int(rng.integers(1, 9))))
            return out + [job(1, 1, 0, many)]
        if motif == "wide-narrow":
            k = int(rng.integers(2, 5))
            o_w = int(rng.integers(1, max(2, min(rcap, 12) + 1)))
            wide = job(M // k + 1, o_w, 0, int(rng.integers(max(1, M // 8), max(2, M) + 1)))
            narrow = job(int(rng.integers(1, 3)), int(rng.integers(1, max(2, min(rcap, 16) + 1))),
                         0, int(rng.integers(max(1, M // 4), 2 * M + 1)))  # fmt: skip
            return [wide, narrow]
        if motif == "head-of-line":
            root = max(1, int(math.isqrt(M)))
            o = int(rng.integers(1, max(2, min(rcap, 64) + 1)))
            heavy = job(peak - o, o, 0, int(rng.integers(max(1, root // 2), 2 * root + 1)))
            return [
                heavy,
                job(1, int(rng.integers(1, 4)), 0, int(rng.integers(M // 2 + 1, 2 * M + 2))),
            ]
        raise ValueError(motif)

    # ---------------------------------------------------------------- mutation
    def mutate(
        self, inst: Instance, rng: np.random.Generator, tries: int = 50
    ) -> tuple[Instance, str]:
        """One local move (:data:`TYPED_MUTATIONS`) that keeps the instance in the class.

        Returns the new instance and the move's name.  Moves that cannot apply
        (remove the last type, arrival without arrivals, …) are skipped; after
        ``tries`` failed attempts a fresh sample is returned (move ``"restart"``).
        """
        types, M = self.types(inst), inst.memory
        for _ in range(tries):
            move = TYPED_MUTATIONS[int(rng.integers(len(TYPED_MUTATIONS)))]
            got = self._move(types, M, move, rng)
            if got is None:
                continue
            M2, new = got[0], _merged(got[1])
            if (M2, new) == (M, types):
                continue
            try:
                cand = self.build(M2, new)
            except InputError:  # e.g. s + o > M after a move: not a member
                continue
            if self.rule(cand) is None:
                return cand, move
        return self.sample(rng), "restart"

    def _move(self, types: list[JobType], M: int, move: str,
              rng: np.random.Generator) -> tuple[int, list[JobType]] | None:  # fmt: skip
        ts, k = list(types), len(types)
        if k == 0:
            return None
        i = int(rng.integers(k))
        t, n = ts[i], sum(x.count for x in ts)
        if move == "prompt" and self.identical_prompts:
            s = self.per_job._common_prompt(rng, M)
            if s is None:
                return None
            ts = [x._replace(prompt=s, response=max(1, min(x.response, M - s))) for x in ts]
        elif move in ("prompt", "response") or (move == "arrival" and self.arrivals):
            ts[i] = self._nudged(t, move, M, rng)
        elif move in ("double", "halve", "increment", "decrement"):
            c = {"double": 2 * t.count, "halve": t.count // 2, "increment": t.count + 1,
                 "decrement": t.count - 1}[move]  # fmt: skip
            if c < 1:
                return None
            ts[i] = t._replace(count=c)
        elif move == "add" and k < self.types_max:
            common = ts[0].prompt if self.identical_prompts else None
            job = self.per_job._sample_job(rng, M, prompt=common)
            c = min(self._sample_count(rng), self.n_max - n)
            if job is None or c < 1:
                return None
            ts.insert(int(rng.integers(k + 1)), JobType(job.prompt, job.response, job.arrival, c))
        elif move == "remove" and k >= 2:
            del ts[i]
        elif move == "split" and k < self.types_max and t.count >= 2:
            fields = ["response"]
            fields += ["arrival"] if self.arrivals else []
            fields += [] if self.identical_prompts else ["prompt"]
            other = self._nudged(t, fields[int(rng.integers(len(fields)))], M, rng)
            if other == t:
                return None
            c = int(rng.integers(1, t.count))
            ts[i : i + 1] = [t._replace(count=c), other._replace(count=t.count - c)]
        elif move == "merge" and k >= 2:
            pairs = list(itertools.combinations(range(k), 2))
            same = [(a, b) for a, b in pairs if ts[a][:2] == ts[b][:2]]
            a, b = (same or pairs)[int(rng.integers(len(same or pairs)))]
            ts[a] = ts[a]._replace(count=ts[a].count + ts[b].count)
            del ts[b]
        elif move in ("scale", "scale-types"):
            f = _SCALES[int(rng.integers(len(_SCALES)))]
            M2 = round(M * f)
            if M2 == M or not self.memory_min <= M2 <= self.memory_max:
                return None
            chosen = np.ones(k, dtype=bool)
            if move == "scale-types":
                chosen = rng.random(k) < 0.5
                chosen[int(rng.integers(k))] = True
            ts = [_scaled(x, f) if c else x for x, c in zip(ts, chosen)]
            return M2, ts
        elif move == "snap" and not self.identical_prompts:
            s = _snap_prompt(t.response, M, rng)
            if s is None:
                return None
            ts[i] = t._replace(prompt=s)
        elif move == "swap" and k >= 2:
            a, b = (int(x) for x in rng.choice(k, size=2, replace=False))
            ts[a], ts[b] = ts[b], ts[a]
        else:
            return None
        return M, ts

    def _nudged(self, t: JobType, what: str, M: int, rng: np.random.Generator) -> JobType:
        """``t`` with its prompt, response or arrival moved (a small step or a uniform draw)."""
        if what == "prompt":
            s = _nudge(rng, t.prompt, 1, M - 1)
            return t._replace(prompt=s, response=max(1, min(t.response, M - s)))
        if what == "response":
            return t._replace(response=_nudge(rng, t.response, 1, M - t.prompt))
        return t._replace(arrival=_nudge(rng, t.arrival, 0, self.arrival_cap(M)))

    # ------------------------------------------------------------- enumeration
    def _powers(self) -> list[int]:
        """The counts of the grid: powers of two up to ``count_max``."""
        return [1 << e for e in range(self.count_cap.bit_length())]

    def _groups(self, memory: int) -> list[list[tuple[int, int]]]:
        """The allowed pairs, in groups that may share an instance (one per prompt if identical)."""
        pairs = self.pairs(memory)
        if not self.identical_prompts:
            return [pairs]
        return [list(g) for _, g in itertools.groupby(pairs, key=lambda p: p[0])]

    def enumerate(self, ordered: bool = True) -> Iterator[Instance]:
        """Every member of a small grid: all jobs at round 0, counts powers of two.

        By M, then the number of types ``k``, then ``k`` distinct allowed
        ``(s, o)`` pairs (in every order; ``ordered=False``: sorted, each set
        once), then the counts (lexicographic; n in range).
        """
        vectors = {
            k: [v for v in itertools.product(self._powers(), repeat=k)
                if self.n_min <= sum(v) <= self.n_max]
            for k in range(1, self.types_max + 1)
        }  # fmt: skip
        for M in range(self.memory_min, self.memory_max + 1):
            groups = self._groups(M)
            for k in range(1, self.types_max + 1):
                if not vectors[k]:
                    continue
                for g in groups:
                    pick = itertools.permutations if ordered else itertools.combinations
                    combos = pick(g, k)
                    for combo in combos:
                        for v in vectors[k]:
                            yield self.build(M, [JobType(s, o, 0, c)
                                                 for (s, o), c in zip(combo, v)])  # fmt: skip

    def count(self, ordered: bool = True) -> int:
        """Size of :meth:`enumerate` (without building the instances)."""
        ways = {0: 1}  # sum of the counts → number of count vectors
        vectors = []
        for _ in range(self.types_max):
            nxt: dict[int, int] = {}
            for total, w in ways.items():
                for p in self._powers():
                    if total + p <= self.n_max:
                        nxt[total + p] = nxt.get(total + p, 0) + w
            ways = nxt
            vectors.append(sum(w for total, w in ways.items() if total >= self.n_min))
        choose = math.perm if ordered else math.comb
        total = 0
        for M in range(self.memory_min, self.memory_max + 1):
            sizes = [len(g) for g in self._groups(M)]
            for k in range(1, self.types_max + 1):
                total += vectors[k - 1] * sum(choose(g, k) for g in sizes)
        return total

    # ------------------------------------------------------------------ output
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind}
        for f in dataclasses.fields(self):
            if f.init:
                d[f.name] = getattr(self, f.name)
        d["regimes"] = list(self.regimes)
        d["peak_limit"] = str(self.peak_limit)
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TypedSpace:
        d = dict(data)
        kind = d.pop("kind", cls.kind)
        if kind != cls.kind:
            raise InputError(f"must be {cls.kind!r} for a typed space, got {kind!r}",
                             source="space.kind")  # fmt: skip
        if "regimes" in d:
            d["regimes"] = tuple(d["regimes"])
        if "peak_limit" in d:
            d["peak_limit"] = Fraction(str(d["peak_limit"]))
        known = {f.name for f in dataclasses.fields(cls) if f.init}
        unknown = sorted(set(d) - known)
        if unknown:
            raise InputError(f"unknown key (known: {', '.join(sorted(known | {'kind'}))})"
                             + did_you_mean(unknown[0], known | {"kind"}), field=unknown[0],
                             source="space")  # fmt: skip
        return cls(**d)

    def describe(self) -> str:
        return (f"typed: <= {self.types_max} types of <= {self.count_cap} jobs, "
                + self.per_job.describe())  # fmt: skip


def _snap_prompt(response: int, M: int, rng: np.random.Generator) -> int | None:
    """A prompt that puts the peak ``s + o`` of a job of this response at a memory threshold:
    ``M // k`` (k copies fit side by side in their last round) or ``M // k + 1`` (only k − 1
    do), k in 1 … 8; ``None`` when no prompt ≥ 1 does it.  The worst cases of the papers
    (Proposition 1, the √n adversary, the two-point family) sit at such thresholds."""
    peak = M // int(rng.integers(1, 9)) + int(rng.integers(2))
    s = peak - response
    return s if 1 <= s <= M - 1 and peak <= M else None


def _merged(types: Sequence[JobType]) -> list[JobType]:
    """Consecutive equal types as one (counts summed): the types :meth:`TypedSpace.types` sees."""
    out: list[JobType] = []
    for t in types:
        if out and out[-1][:3] == t[:3]:
            out[-1] = out[-1]._replace(count=out[-1].count + t.count)
        else:
            out.append(t)
    return out


def _scaled(t: JobType, f: Fraction) -> JobType:
    return t._replace(prompt=max(1, round(t.prompt * f)), response=max(1, round(t.response * f)),
                      arrival=round(t.arrival * f))  # fmt: skip


__all__ = ["STRUCTURE", "TYPED_MUTATIONS", "JobType", "TypedSpace"]
