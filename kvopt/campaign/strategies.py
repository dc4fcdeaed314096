"""Search strategies: propose a batch → evaluate → accept (``kvopt search --strategy``).

A strategy is a small object with :meth:`~Strategy.propose` (a deterministic
batch of candidate instances for batch number ``b`` and a generator seeded
from ``(seed, b)``), :meth:`~Strategy.tell` (the evaluations of that batch, in
proposal order) and ``exhausted``.  Because a batch depends only on the seed,
the batch number and the results told before, a campaign replays exactly:
serial, local processes and Dask propose the same batches, and a resumed
campaign re-proposes the same candidates and takes their results from the
log.

Every proposal lies inside the class (:class:`SearchContext.rule`: the
policy's registry class, and the claim's class when validating), so no
evaluation is wasted on "not applicable".

:data:`STRATEGIES` is the one registry:

``random``      independent samples of the space, or of a ``kvopt gen`` family;
``anneal``      simulated annealing from the best so far with the class-keeping
                moves of :meth:`kvopt.space.Space.mutate`;
``cma``         CMA-ES (the ``cma`` package, optional extra ``kvopt[cma]``) over a
                fixed-size continuous encoding (``[0, 1]`` per M, and per job its
                presence, prompt, response and arrival), decoded to the nearest
                allowed job;
``family``      a grid over list-valued parameters of a construction
                (``--family prop1 --param L=2,3,4,5``), with growth exponents;
``trace``       windows of the bundled Azure trace, scaled to the memory budget,
                and bounded perturbations (±``delta``) of the best window;
``exhaustive``  every member of a small grid (the space's n, M and response
                ranges), in a fixed order: the true worst case of a tiny class.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

from ..errors import InputError
from ..instance import Instance, Job
from ..space import Space


@dataclass(frozen=True)
class Proposal:
    """A candidate: the instance, where it comes from (``origin``) and strategy data (``info``)."""

    instance: Instance
    origin: str
    info: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class SearchContext:
    """What a strategy knows: the class, the space to draw from, the family, the seed."""

    policy: str
    params: Mapping[str, Any]
    space: Space
    rule: Callable[[Instance], str | None]
    seed: int
    family: str | None = None
    family_params: Mapping[str, Any] = field(default_factory=dict)

    def rng(self, batch: int, tag: int = 0) -> np.random.Generator:
        return np.random.default_rng([self.seed, batch, tag])


class Strategy(Protocol):
    """The plug-in protocol (see the module docstring)."""

    name: ClassVar[str]
    exhausted: bool

    def propose(self, batch: int, size: int) -> list[Proposal]: ...

    def tell(self, proposals: list[Proposal], results: list[dict[str, Any]]) -> None: ...

    def summary(self) -> dict[str, Any] | None: ...


def score(result: dict[str, Any]) -> float:
    """What strategies maximise: the ``score`` (validation) or else the certified ratio.

    ``-inf`` for a failed evaluation (the policy broke the model).
    """
    r = result.get("score", result.get("ratio_certified"))
    return -math.inf if r is None else float(r)


# --------------------------------------------------------------------------- helpers


def _family_instance(ctx: SearchContext, rng: np.random.Generator, params=None) -> Instance | None:
    """One instance of the context's family (fresh generator seed), if it lies in the class."""
    from ..generators import generate

    seed = int(rng.integers(0, 2**31 - 1))
    inst = generate(ctx.family, seed, **dict(params if params is not None else ctx.family_params))
    return inst if ctx.rule(inst) is None else None


def _sample(ctx: SearchContext, rng: np.random.Generator, tries: int = 200) -> Proposal:
    """A fresh member: from the family if one is given, else from the space."""
    last = None
    for _ in range(tries):
        if ctx.family:
            inst = _family_instance(ctx, rng)
            if inst is not None:
                return Proposal(inst, f"family {ctx.family}")
            continue
        inst = ctx.space.sample(rng)
        last = ctx.rule(inst)
        if last is None:
            return Proposal(inst, "sample")
    what = f"family {ctx.family!r}" if ctx.family else f"space ({ctx.space.describe()})"
    raise InputError(
        f"the {what} yields no instance of policy {ctx.policy!r}'s class"
        + (f" ({last})" if last else ""),
        source="--family" if ctx.family else "--policy",
    )


def probe(ctx: SearchContext) -> None:
    """Fail early (:class:`InputError`) when the class is empty for this family/space."""
    _sample(ctx, ctx.rng(0, 99), tries=60)


# --------------------------------------------------------------------------- random


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
    """Simulated annealing over the class-keeping moves of :meth:`Space.mutate`.

    Each proposal mutates the current instance (one move, or more with
    probability ½ each) — or, one time in five, the best so far; one in
    twenty is a fresh sample.  Results are accepted in proposal order by the
    Metropolis rule on the certified ratio with temperature
    ``t0 · cooling^batch`` (options ``t0`` = 0.05, ``cooling`` = 0.97); after
    ``patience`` batches without a new best (default 25) the walk restarts
    from the best.
    """

    name = "anneal"

    def __init__(self, ctx: SearchContext, options: Mapping[str, Any]):
        opts = _options(self.name, options, {"t0": 0.05, "cooling": 0.97, "patience": 25})
        self.t0, self.cooling, self.patience = opts["t0"], opts["cooling"], int(opts["patience"])
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
        self.current: tuple[Instance, float] | None = None
        self.best: tuple[Instance, float] | None = None
        self.since_best = 0
        self.exhausted = False

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
        for _ in range(size):
            if self.current is None or rng.random() < 0.05:
                out.append(_sample(self.ctx, rng))
                continue
            parent = self.best[0] if (self.best and rng.random() < 0.2) else self.current[0]
            out.append(self._child(parent, rng))
        self._batch = batch
        return out

    def tell(self, proposals, results) -> None:
        rng = self.ctx.rng(self._batch, 1)
        temp = self.t0 * self.cooling**self._batch
        improved = False
        for p, r in zip(proposals, results):
            s = score(r)
            if not math.isfinite(s):
                continue
            if self.best is None or s > self.best[1]:
                self.best = (p.instance, s)
                improved = True
            if self.current is None or s >= self.current[1]:
                self.current = (p.instance, s)
            elif temp > 0 and rng.random() < math.exp((s - self.current[1]) / temp):
                self.current = (p.instance, s)
        self.since_best = 0 if improved else self.since_best + 1
        if self.since_best >= self.patience and self.best is not None:
            self.current = self.best
            self.since_best = 0

    def summary(self):
        return None


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


# --------------------------------------------------------------------------- family sweep

#: Default grids of the ``family`` strategy (list-valued ``--param``s replace them).
FAMILY_GRIDS: dict[str, dict[str, list[Any]]] = {
    "prop1": {"L": [2, 3, 4, 5, 6, 7, 8], "case": [1, 2]},
    "two-point": {"memory": [16, 32, 64, 128, 256], "short": [8, 16, 32, 64]},
    "random": {"n": [4, 6, 8, 10, 12]},
    "large": {"n": [4, 6, 8, 10, 12]},
    "prompt-heavy": {"n": [4, 6, 8, 10, 12]},
    "response-heavy": {"n": [4, 6, 8, 10, 12]},
    "identical-prompt": {"n": [4, 6, 8, 10, 12]},
}


def fit_exponent(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of ``log y`` against ``log x`` (``None`` with < 2 distinct x)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0]
    if len({p[0] for p in pts}) < 2:
        return None
    lx = np.array([p[0] for p in pts])
    ly = np.array([p[1] for p in pts])
    return float(np.polyfit(lx, ly, 1)[0])


class FamilyStrategy:
    """Every point of a parameter grid of a construction, then growth exponents.

    List-valued ``--param`` (``L=2,3,4``) span the grid (default grids in
    :data:`FAMILY_GRIDS`); scalar ones are fixed.  Option ``seeds`` (1)
    draws several instances per point for random families.  Points outside
    the policy's class are skipped (an error if none is inside).  The summary
    reports, for every numeric parameter taking at least three values and every
    setting of the others, the least-squares exponent of the certified ratio
    against it (log–log) with the points.
    """

    name = "family"

    def __init__(self, ctx: SearchContext, options: Mapping[str, Any]):
        from ..generators import GENERATORS, generate

        opts = _options(self.name, options, {"seeds": 1})
        if not ctx.family:
            raise InputError(
                "strategy family needs --family (e.g. prop1, two-point)", source="--family"
            )
        gen = GENERATORS[ctx.family]
        fixed, grid = {}, {}
        for k, v in FAMILY_GRIDS.get(ctx.family, {}).items():
            grid[k] = list(v)
        for k, v in ctx.family_params.items():
            if isinstance(v, list | tuple):
                grid[k] = list(v)
            else:
                fixed[k] = v
                grid.pop(k, None)
        if not grid:
            raise InputError(
                f"strategy family needs a list-valued --param for family {ctx.family!r} "
                f"(e.g. --param {next(iter(gen.defaults), 'n')}=4,8,16)",
                source="--param",
            )
        self.ctx = ctx
        self.keys = list(grid)
        points = []
        import itertools

        for combo in itertools.product(*(grid[k] for k in self.keys)):
            params = {**fixed, **dict(zip(self.keys, combo))}
            for rep in range(int(opts["seeds"])):
                inst = generate(ctx.family, ctx.seed + rep, **params)
                rule = ctx.rule(inst)
                if rule is None:
                    points.append((params, rep, inst))
                else:
                    last_rule = rule
        if not points:
            raise InputError(
                f"no point of the family {ctx.family!r} grid is in policy {ctx.policy!r}'s class "
                f"({last_rule})",
                source="--family",
            )
        self.points = points
        self.pos = 0
        self.results: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.exhausted = False

    def propose(self, batch: int, size: int) -> list[Proposal]:
        chunk = self.points[self.pos : self.pos + size]
        self.pos += len(chunk)
        self.exhausted = self.pos >= len(self.points)
        return [
            Proposal(
                inst,
                "family " + ",".join(f"{k}={v}" for k, v in params.items()),
                {"params": params, "rep": rep},
            )  # fmt: skip
            for params, rep, inst in chunk
        ]

    def tell(self, proposals, results) -> None:
        for p, r in zip(proposals, results):
            self.results.append((dict(p.info["params"]), r))

    def summary(self) -> dict[str, Any]:
        rows = [
            {
                "params": params,
                "n": r.get("n"),
                "memory": r.get("memory"),
                "ratio_certified": r.get("ratio_certified"),
                "ratio_optimistic": r.get("ratio_optimistic"),
                "opt_status": r.get("opt_status"),
            }
            for params, r in self.results
        ]
        growth = []
        for key in self.keys:
            groups: dict[tuple, list[tuple[float, float, float]]] = {}
            for params, r in self.results:
                if r.get("ratio_certified") is None or not isinstance(params[key], int | float):
                    continue
                other = tuple(sorted((k, str(v)) for k, v in params.items() if k != key))
                groups.setdefault(other, []).append(
                    (float(params[key]), r["ratio_certified"], r["ratio_optimistic"])
                )
            fits = []
            for other, pts in groups.items():
                pts.sort()
                if len({p[0] for p in pts}) < 3:  # a growth exponent needs three values at least
                    continue
                e_cert = fit_exponent([p[0] for p in pts], [p[1] for p in pts])
                e_opt = fit_exponent([p[0] for p in pts], [p[2] for p in pts])
                if e_cert is not None:
                    fits.append({"fixed": dict(other), "points": [list(p) for p in pts],
                                 "exponent_certified": e_cert, "exponent_optimistic": e_opt})  # fmt: skip
            if fits:
                growth.append({"param": key, "fits": fits})
        return {"points": rows, "growth": growth}


# --------------------------------------------------------------------------- trace


class TraceStrategy:
    """Windows of a real trace, scaled to the memory budget, and bounded perturbations of the best.

    A window is ``n`` consecutive usable requests (n uniform in the space's
    range) from a random offset of the trace (option ``path``, default the
    bundled Azure LLM inference trace 2023); M is drawn from the space's
    range and every length is scaled by ``M / q`` with ``q`` the 95th
    percentile of ``s + o`` over the trace (rounded, at least 1; requests that
    do not fit are skipped).  With arrivals (online policies) the timestamps
    become rounds at ``rounds_per_second`` (option, default 50) times the same
    scale.  Half of each batch perturbs the best window found so far: every
    prompt, response and arrival moves by at most ``delta`` (option, 0.25)
    of its value in the window — realistic adversaries.
    """

    name = "trace"

    def __init__(self, ctx: SearchContext, options: Mapping[str, Any]):
        from ..trace import DEFAULT_ROUNDS_PER_SECOND, bundled_trace_dir, load_trace

        opts = _options(self.name, options, {"path": "", "delta": 0.25,
                                              "rounds_per_second": DEFAULT_ROUNDS_PER_SECOND})  # fmt: skip
        if ctx.family:
            raise InputError("strategy trace draws from the trace, not a family", source="--family")
        tr = load_trace(opts["path"] or bundled_trace_dir())
        ok = (tr.prompt >= 1) & (tr.response >= 1)
        self.prompt = tr.prompt[ok]
        self.response = tr.response[ok]
        ts = tr.timestamp[ok]
        self.time = np.where(np.isnan(ts), 0.0, ts)
        self.q = float(np.percentile(self.prompt + self.response, 95))
        self.delta = float(opts["delta"])
        self.rps = float(opts["rounds_per_second"])
        self.ctx = ctx
        self.best: tuple[Proposal, float] | None = None
        self.exhausted = False
        probe(ctx)

    def _window(self, rng: np.random.Generator) -> Proposal | None:
        sp = self.ctx.space
        n = int(rng.integers(sp.n_min, sp.n_max + 1))
        M = int(rng.integers(sp.memory_min, sp.memory_max + 1))
        f = M / self.q
        start = int(rng.integers(0, max(1, len(self.prompt) - 4 * n)))
        base = []
        k = start
        while len(base) < n and k < len(self.prompt):
            s = max(1, round(self.prompt[k] * f))
            o = max(1, round(self.response[k] * f))
            if sp.max_response:
                o = min(o, sp.response_cap(M))
            if s + o <= sp.peak_cap(M):
                a = 0
                if sp.arrivals:
                    a = int((self.time[k] - self.time[start]) * self.rps * f)
                    a = min(max(a, 0), sp.arrival_cap(M))
                base.append((s, o, a))
            k += 1
        if len(base) < max(sp.n_min, 1):
            return None
        inst = Instance(memory=M, jobs=tuple(Job(s, o, a) for s, o, a in base))
        if self.ctx.rule(inst) is not None:
            return None
        return Proposal(inst, f"trace window {start}", {"base": base, "memory": M, "offset": start})

    def _perturb(self, prop: Proposal, rng: np.random.Generator) -> Proposal | None:
        M, base = prop.info["memory"], prop.info["base"]
        d = self.delta

        def move(v: int, lo: int) -> int:
            span = int(math.floor(v * d))
            return max(lo, v + int(rng.integers(-span, span + 1))) if span else v

        jobs = []
        for s, o, a in base:
            s2, o2, a2 = move(s, 1), move(o, 1), move(a, 0) if a else 0
            if s2 + o2 > M:
                return None
            jobs.append(Job(s2, o2, a2))
        try:
            inst = Instance(memory=M, jobs=tuple(jobs))
        except InputError:
            return None
        if self.ctx.rule(inst) is not None:
            return None
        return Proposal(inst, f"trace perturb {prop.info['offset']}", prop.info)

    def propose(self, batch: int, size: int) -> list[Proposal]:
        rng = self.ctx.rng(batch)
        out = []
        for i in range(size):
            for _ in range(200):
                if self.best is not None and i % 2 == 1:
                    p = self._perturb(self.best[0], rng)
                else:
                    p = self._window(rng)
                if p is not None:
                    out.append(p)
                    break
            else:
                raise InputError(
                    f"no window of the trace is in policy {self.ctx.policy!r}'s class "
                    f"({self.ctx.space.describe()})",
                    source="--strategy",
                )
        return out

    def tell(self, proposals, results) -> None:
        for p, r in zip(proposals, results):
            s = score(r)
            if math.isfinite(s) and (self.best is None or s > self.best[1]):
                self.best = (p, s)

    def summary(self):
        return None


# --------------------------------------------------------------------------- exhaustive


class ExhaustiveStrategy:
    """Every member of the space with all jobs at round 0, in :meth:`Space.enumerate` order.

    Size the grid with the space (``--n 1:3 --memory 4:10 --max-response 6``);
    option ``ordered`` (true) lists every job order (policies break ties by
    index), ``ordered=false`` each multiset once.  The campaign ends when the
    grid is exhausted; the best certified ratio is then the exact worst case
    of the class (screening only skips the exact solve of candidates that
    cannot beat the best).
    """

    name = "exhaustive"

    def __init__(self, ctx: SearchContext, options: Mapping[str, Any]):
        opts = _options(self.name, options, {"ordered": True})
        if ctx.family:
            raise InputError(
                "strategy exhaustive enumerates the space, not a family", source="--family"
            )
        self.ctx = ctx
        self.ordered = bool(opts["ordered"])
        self.total = ctx.space.count(self.ordered)
        self._it = ctx.space.enumerate(self.ordered)
        self.exhausted = False

    def propose(self, batch: int, size: int) -> list[Proposal]:
        out = []
        while len(out) < size:
            try:
                inst = next(self._it)
            except StopIteration:
                self.exhausted = True
                break
            if self.ctx.rule(inst) is None:
                out.append(Proposal(inst, "grid"))
        return out

    def tell(self, proposals, results) -> None:
        pass

    def summary(self) -> dict[str, Any]:
        return {"grid_size": self.total, "ordered": self.ordered}


# --------------------------------------------------------------------------- registry


def _no_options(name: str, options: Mapping[str, Any]) -> None:
    if options:
        raise InputError(f"strategy {name!r} takes no options, got {', '.join(options)}",
                         source="--option")  # fmt: skip


def _options(name: str, options: Mapping[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    from ..params import convert_value

    out = dict(defaults)
    for k, v in options.items():
        if k not in defaults:
            raise InputError(
                f"unknown option of strategy {name!r} (known: {', '.join(defaults)})",
                source=f"--option {k}",
            )
        out[k] = convert_value(k, v, defaults[k], option="--option") if isinstance(v, str) else v
    return out


#: Every strategy, by its ``--strategy`` name.  Explicit on purpose: grep here.
STRATEGIES: dict[str, type] = {
    cls.name: cls
    for cls in (
        RandomStrategy,
        AnnealStrategy,
        CMAStrategy,
        FamilyStrategy,
        TraceStrategy,
        ExhaustiveStrategy,
    )
}


def make_strategy(name: str, ctx: SearchContext, options: Mapping[str, Any] | None = None):
    """A fresh strategy object; :class:`InputError` naming ``--strategy`` if unknown."""
    if name not in STRATEGIES:
        raise InputError(
            f"unknown strategy {name!r} (known: {', '.join(STRATEGIES)})", source="--strategy"
        )
    ctx = dataclasses.replace(ctx)  # strategies may widen the space; keep the caller's intact
    return STRATEGIES[name](ctx, dict(options or {}))


__all__ = [
    "FAMILY_GRIDS",
    "STRATEGIES",
    "Proposal",
    "SearchContext",
    "Strategy",
    "fit_exponent",
    "make_strategy",
    "probe",
    "score",
]
