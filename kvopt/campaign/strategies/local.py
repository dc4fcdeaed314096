"""Strategies that walk the space: independent samples, simulated annealing, CMA-ES."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import InputError
from ...instance import Instance, Job
from .base import Proposal, SearchContext, _in_range, _no_options, _options, _sample, score


class RandomStrategy:
    """Independent samples of the space (or of ``--family`` with its ``--param``s)."""

    name = "random"

    def __init__(self, ctx: SearchContext, options: Mapping[str, Any]):
        _no_options(self.name, options)
        self.ctx = ctx
        self.exhausted = False

    def propose(self, batch: int, size: int) -> list[Proposal]:
        rng = self.ctx.rng(batch)
        return [_sample(self.ctx, rng) for _ in range(size)]

    def tell(self, proposals, results) -> None:
        pass

    def summary(self):
        return None


# --------------------------------------------------------------------------- anneal


class AnnealStrategy:
    """Simulated annealing over the class-keeping moves of :meth:`Space.mutate`, in ``chains``
    independent walks with restarts.

    Proposal ``i`` of a batch belongs to chain ``i mod chains``; it mutates the chain's current
    instance (one move, or more with probability ½ each) — or, one time in five, the chain's
    best; one in twenty is a fresh start.  Results are accepted per chain in proposal order by
    the Metropolis rule on the certified ratio with temperature ``t0 · cooling^batch`` (options
    ``t0`` = 0.05, ``cooling`` = 0.97).  After ``patience`` batches without a new best of its
    own (default 25) a chain restarts: from a fresh start when ``motifs`` is on, else from the
    campaign's best.

    A fresh start on a typed space with ``motifs`` (the default there) is, one time in two, a
    structural motif (:meth:`~kvopt.space.TypedSpace.motif`: one long job and many short ones,
    few long blockers ahead of many unit jobs, wide before narrow, √M heavy jobs ahead of M
    small ones), else a plain sample.  Typed spaces default to ``chains`` = 4 and ``motifs`` =
    1, per-job spaces to 1 and 0 (the annealing of kvopt 0.2).  Every choice draws from the
    campaign's seeded generators.
    """

    name = "anneal"

    def __init__(self, ctx: SearchContext, options: Mapping[str, Any]):
        typed = getattr(ctx.space, "kind", "jobs") == "typed" and not ctx.family
        opts = _options(self.name, options, {"t0": 0.05, "cooling": 0.97, "patience": 25,
                                             "chains": 4 if typed else 1,
                                             "motifs": 1 if typed else 0})  # fmt: skip
        for key, low, high in (("t0", 0.0, math.inf), ("cooling", 0.0, 1.0),
                               ("patience", 1, math.inf), ("chains", 1, 64),
                               ("motifs", 0, 1)):  # fmt: skip
            v = opts[key]
            if not (isinstance(v, int | float) and not isinstance(v, bool) and low <= v <= high):
                raise InputError(f"anneal option {key} must be in [{low}, {high}], got {v!r}",
                                 source="--option")  # fmt: skip
        if opts["motifs"] and not typed:
            raise InputError("anneal option motifs=1 needs a typed space (--space kind=typed)",
                             source="--option")  # fmt: skip
        self.t0, self.cooling, self.patience = opts["t0"], opts["cooling"], int(opts["patience"])
        self.n_chains, self.motifs = int(opts["chains"]), bool(opts["motifs"])
        self.ctx = ctx
        if ctx.family:  # the walk may leave the family, but not its sizes
            first = _sample(ctx, ctx.rng(0, 7)).instance
            sp = ctx.space
            ctx.space = sp.replace(
                n_max=max(sp.n_max, first.n),
                memory_min=min(sp.memory_min, first.memory),
                memory_max=max(sp.memory_max, first.memory),
                max_response=0 if sp.max_response == 0 else max(sp.max_response, int(first.responses.max(initial=1))),
                arrivals=sp.arrivals or first.has_arrivals,
                max_arrival=max(sp.max_arrival, int(first.arrivals.max(initial=0))),
            )  # fmt: skip
        self.chains = [_Chain() for _ in range(self.n_chains)]
        self.best: tuple[Instance, float] | None = None
        self.exhausted = False

    # the single-chain view of earlier versions (tests and notebooks read these)
    @property
    def current(self) -> tuple[Instance, float] | None:
        return self.chains[0].current

    @property
    def since_best(self) -> int:
        return self.chains[0].since_best

    def _fresh(self, rng: np.random.Generator) -> Proposal:
        if self.motifs and rng.random() < 0.5:
            for _ in range(20):
                inst, motif = self.ctx.space.motif(rng)
                if self.ctx.rule(inst) is None:
                    return Proposal(inst, f"motif:{motif}")
        return _sample(self.ctx, rng)

    def _child(self, parent: Instance, rng: np.random.Generator) -> Proposal:
        sp = self.ctx.space
        inst, moves = parent, []
        for _ in range(20):
            cand, move = sp.mutate(inst, rng)
            if self.ctx.rule(cand) is None:
                inst = cand
                moves.append(move)
                if rng.random() >= 0.5:
                    break
        if not moves:
            return _sample(self.ctx, rng)
        return Proposal(inst, "mutate:" + "+".join(moves))

    def propose(self, batch: int, size: int) -> list[Proposal]:
        rng = self.ctx.rng(batch)
        out = []
        for i in range(size):
            ch = self.chains[i % self.n_chains]
            if ch.current is None or rng.random() < 0.05:
                out.append(self._fresh(rng))
                continue
            parent = ch.best[0] if (ch.best and rng.random() < 0.2) else ch.current[0]
            out.append(self._child(parent, rng))
        self._batch = batch
        return out

    def tell(self, proposals, results) -> None:
        rng = self.ctx.rng(self._batch, 1)
        temp = self.t0 * self.cooling**self._batch
        improved = [False] * self.n_chains
        for i, (p, r) in enumerate(zip(proposals, results)):
            k = i % self.n_chains
            ch = self.chains[k]
            s = score(r)
            if not math.isfinite(s):
                continue
            if self.best is None or s > self.best[1]:
                self.best = (p.instance, s)
            if ch.best is None or s > ch.best[1]:
                ch.best = (p.instance, s)
                improved[k] = True
            if ch.current is None or s >= ch.current[1]:
                ch.current = (p.instance, s)
            elif temp > 0 and rng.random() < math.exp((s - ch.current[1]) / temp):
                ch.current = (p.instance, s)
        for k, ch in enumerate(self.chains):
            ch.since_best = 0 if improved[k] else ch.since_best + 1
            if ch.since_best >= self.patience and ch.best is not None:
                ch.since_best = 0
                if self.motifs:  # a new start: the chain's walk has settled
                    ch.current, ch.best = None, None
                else:
                    ch.current = self.best

    def summary(self):
        return None


class _Chain:
    """One walk of :class:`AnnealStrategy`: its current instance, its best, its patience."""

    __slots__ = ("best", "current", "since_best")

    def __init__(self) -> None:
        self.current: tuple[Instance, float] | None = None
        self.best: tuple[Instance, float] | None = None
        self.since_best = 0


# --------------------------------------------------------------------------- cma


class CMAStrategy:
    """CMA-ES (Hansen's ``cma`` package) over a fixed-size encoding in ``[0, 1]``.

    Coordinates: M, then per job slot (``n_max`` of them) presence (the job
    exists when ≥ 0.25; at least ``n_min`` exist), prompt, response and —
    with arrivals — arrival.  A decoded job is the allowed ``(s, o)`` of the
    class nearest to the encoded point (identical-prompt classes use the
    first job's prompt for all).  Population = batch size; fitness = −
    certified ratio.  Options: ``sigma0`` (0.3).
    """

    name = "cma"

    def __init__(self, ctx: SearchContext, options: Mapping[str, Any]):
        opts = _options(self.name, options, {"sigma0": 0.3})
        # the search runs in the unit cube (decode clips to it): a step above 1 means nothing
        _in_range(self.name, "sigma0", opts["sigma0"], 0.0, 1.0, open_low=True)
        try:
            import cma
        except ImportError:
            raise InputError(
                "strategy cma needs the optional extra: pip install 'kvopt[cma]'",
                source="--strategy",
            ) from None
        if ctx.family:
            raise InputError("strategy cma searches the space, not a family", source="--family")
        self.cma = cma
        self.ctx = ctx
        sp = ctx.space
        self.per_job = 4 if sp.arrivals else 3
        self.dim = 1 + sp.n_max * self.per_job
        self.sigma0 = float(opts["sigma0"])
        self.es = None
        self._pairs: dict[int, np.ndarray] = {}
        self.exhausted = False

    def _start(self, size: int):
        x0 = np.full(self.dim, 0.5)
        self.es = self.cma.CMAEvolutionStrategy(
            x0,
            self.sigma0,
            {"seed": self.ctx.seed + 1, "popsize": size, "bounds": [0, 1], "verbose": -9},
        )

    def _pairs_for(self, M: int) -> np.ndarray:
        if M not in self._pairs:
            self._pairs[M] = np.array(self.ctx.space.pairs(M), dtype=np.int64).reshape(-1, 2)
        return self._pairs[M]

    def decode(self, x: np.ndarray) -> Instance:
        sp = self.ctx.space
        x = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
        M = sp.memory_min + int(round(x[0] * (sp.memory_max - sp.memory_min)))
        pairs = self._pairs_for(M)
        slots = x[1:].reshape(sp.n_max, self.per_job)
        present = np.flatnonzero(slots[:, 0] >= 0.25)
        if len(present) < sp.n_min:
            present = np.sort(np.argsort(-slots[:, 0])[: sp.n_min])
        jobs = []
        common = None
        for k in present:
            s_x, o_x = slots[k, 1], slots[k, 2]
            cand = pairs if common is None else pairs[pairs[:, 0] == common]
            # nearest allowed pair in normalised (s/M, o/M) coordinates
            d = (cand[:, 0] / M - s_x) ** 2 + (cand[:, 1] / M - o_x) ** 2
            s, o = (int(v) for v in cand[int(np.argmin(d))])
            if sp.identical_prompts and common is None:
                common = s
            a = int(round(slots[k, 3] * sp.arrival_cap(M))) if sp.arrivals else 0
            jobs.append(Job(prompt=s, response=o, arrival=a))
        return Instance(memory=M, jobs=tuple(jobs))

    def propose(self, batch: int, size: int) -> list[Proposal]:
        if self.es is None:
            self._start(size)
        self._xs = self.es.ask()
        out = []
        for x in self._xs:
            inst = self.decode(x)
            if self.ctx.rule(inst) is not None:  # outside the policy's class: resample
                prop = _sample(self.ctx, self.ctx.rng(batch, 2 + len(out)))
                out.append(Proposal(prop.instance, "cma:repaired"))
            else:
                out.append(Proposal(inst, "cma"))
        return out

    def tell(self, proposals, results) -> None:
        fit = [(-score(r) if math.isfinite(score(r)) else 0.0) for r in results]
        self.es.tell(self._xs, fit)

    def summary(self):
        return None


__all__ = ["AnnealStrategy", "CMAStrategy", "RandomStrategy"]
