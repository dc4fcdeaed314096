"""The trace strategy: windows of a real trace and bounded perturbations of the best."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...errors import InputError
from ...instance import Instance, Job
from .base import Proposal, SearchContext, _in_range, _options, probe, score


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
        from ...serving.trace import DEFAULT_ROUNDS_PER_SECOND, bundled_trace_dir, load_trace

        opts = _options(self.name, options, {"path": "", "delta": 0.25,
                                              "rounds_per_second": DEFAULT_ROUNDS_PER_SECOND})  # fmt: skip
        # delta: each move is at most this share of the value (a share above 1 could move a
        # prompt to 0); rounds_per_second scales the trace's clock into rounds
        _in_range(self.name, "delta", opts["delta"], 0.0, 1.0)
        _in_range(self.name, "rounds_per_second", opts["rounds_per_second"], 0.0, 1e9,
                  open_low=True)  # fmt: skip
        if not isinstance(opts["path"], str):
            raise InputError(f"trace option path must be a path, got {opts['path']!r}",
                             source="--option")  # fmt: skip
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


__all__ = ["TraceStrategy"]
