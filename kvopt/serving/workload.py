"""Workloads in seconds (SPEC §10): request lengths from a trace, arrivals from a process.

A :class:`Workload` is data (it reads from a dict or an experiment's ``[workload]``
table, and checks itself once on creation); :meth:`Workload.instance` draws one timed
instance (jobs with ``arrival_time``) for a load and a seed.

* **Lengths** come from any trace :func:`kvopt.serving.trace.load_trace` reads (Azure 2023 and
  2024, BurstGPT, Mooncake-style JSONL, the SPEC §3 columns); ``trace = "azure-conv"``,
  ``"azure-code"`` and ``"azure"`` name the bundled Azure 2023 traces.  Requests that
  cannot be served (a zero length, ``prompt + response > memory``) are left out.
  ``lengths = "sample"`` draws ``n`` of them at random without replacement (seeded),
  ``"head"`` takes the first ``n`` from ``offset``.
* **Or from distributions** (SPEC §10.1): ``prompt = "lognormal(mean=40.62, median=11)"``
  and ``response = "…"`` (both, in the syntax of :mod:`kvopt.serving.lengths`), or a named
  length profile ``profile = "lmsys-jaillet"`` (either, not both), draw each request's
  lengths afresh; a request with ``prompt + response > memory`` is drawn again and the
  count is ``meta["redrawn"]``.  The trace is then read only for ``"trace"`` arrivals (its
  timestamps); ``paired``, ``lengths = "head"``, ``max_prompt`` and ``max_response`` (trace
  options) are bad input with them — a distribution clips with ``max=``.
* **Batch cap** (``max_batch``, integer >= 1): written into the instance (SPEC §10.1,
  vLLM's ``max_num_seqs``); none by default.
* **Arrivals** (``arrivals``): ``"burst"`` (every request at 0 s), ``"poisson"`` (at
  ``load`` requests per second: exponential gaps, the first request at 0 s), or
  ``"trace"`` (the trace's own timestamps of a window of ``n`` consecutive requests,
  rescaled so that their mean rate — ``(n − 1)`` gaps over the window's span — is
  ``load`` requests per second, or kept as they are when ``load`` is ``None``).
* **Paired or independent** (``paired``, for ``"trace"`` arrivals): paired keeps each
  window request's own lengths with its timestamp (a random window per seed); independent
  draws the lengths as ``lengths`` says, separately from the window.  Burst and Poisson
  arrivals are always independent of the lengths.
* **Predictions** (``prediction_noise = σ > 0``): each request carries
  ``predicted_response = max(1, round(o · e))`` with ``e`` lognormal of median 1 and
  log-standard deviation ``σ`` — a stand-in for a learned length predictor, which the
  prediction-based policies (``sjf``, ``svf``, ``svf-1bit``, ``mcsf``, …) use instead of
  the true length (SPEC §3).  With ``σ = 0`` (the default) they see the true lengths:
  the oracle variants.
* **Seeds**: the seed splits into three independent streams (lengths, arrivals,
  predictions) (``numpy.random.SeedSequence``),
  so at one seed every load and every
  policy sees the same requests (common random numbers) and only the arrival times change.
  Distributions draw from the lengths stream (which a trace sample would use), so adding
  them changed no trace workload's draws.

Bad input — an unknown process, a rate ≤ 0, a trace without the needed columns or
without timestamps for ``"trace"`` arrivals, too few usable requests — raises
:class:`~kvopt.errors.InputError` with one line naming the field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any

import numpy as np

from ..errors import InputError, did_you_mean
from ..instance import Instance, Job
from .lengths import Empirical, Mixture, draw_pairs, load_profile, parse_length
from .trace import Trace, bundled_trace_dir, load_trace, usable_requests

ARRIVAL_PROCESSES = ("burst", "poisson", "trace")
LENGTH_MODES = ("sample", "head")
#: Names of the bundled traces (``instances/traces/azure-llm-2023/``).
BUNDLED = {
    "azure": "",  # both files merged by timestamp
    "azure-conv": "AzureLLMInferenceTrace_conv.csv",
    "azure-code": "AzureLLMInferenceTrace_code.csv",
}


@lru_cache(maxsize=8)
def _load(path: str) -> Trace:
    return load_trace(path)


def resolve_trace(name: str) -> str:
    """The path of a trace: a bundled name (:data:`BUNDLED`) or a file or folder path."""
    if name in BUNDLED:
        base = bundled_trace_dir()
        return str(base / BUNDLED[name]) if BUNDLED[name] else str(base)
    return name


#: Fields written by :meth:`Workload.to_dict` only when set.
_OPTIONAL = ("prompt", "response", "profile", "max_batch")


@dataclass(frozen=True)
class Workload:
    """Requests and their arrival process (module docstring); ``load`` is given per draw."""

    trace: str = "azure-conv"
    n: int = 100
    memory: int = 16384
    arrivals: str = "poisson"
    lengths: str = "sample"
    paired: bool = False
    offset: int = 0
    max_prompt: int | None = None  # optional cap: requests with a longer prompt are left out
    max_response: int | None = None
    prediction_noise: float = 0.0  # σ of a lognormal error on predicted_response (0: none)
    prompt: str | None = None  # a length distribution (kvopt.serving.lengths) instead of a trace
    response: str | None = None
    profile: str | None = None  # a named length profile instead of prompt and response
    max_batch: int | None = None  # the instance's batch cap (SPEC §10.1)

    def __post_init__(self) -> None:
        src = "workload"
        self._check_lengths(src)
        if not isinstance(self.trace, str) or not self.trace:
            raise InputError("must be a trace path or a bundled name", field="trace", source=src)
        for key, low in (("n", 1), ("memory", 2), ("offset", 0)):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise InputError(f"must be an integer >= {low}, got {v!r}", field=key, source=src)
        for key in ("max_prompt", "max_response"):
            v = getattr(self, key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise InputError(f"must be an integer >= 1, got {v!r}", field=key, source=src)
        if self.arrivals not in ARRIVAL_PROCESSES:
            raise InputError(f"must be one of {', '.join(ARRIVAL_PROCESSES)}, got "
                             f"{self.arrivals!r}", field="arrivals", source=src)  # fmt: skip
        if self.lengths not in LENGTH_MODES:
            raise InputError(f"must be one of {', '.join(LENGTH_MODES)}, got {self.lengths!r}",
                             field="lengths", source=src)  # fmt: skip
        pn = self.prediction_noise
        if isinstance(pn, bool) or not isinstance(pn, int | float) or not pn >= 0:
            raise InputError(f"must be a number >= 0, got {pn!r}", field="prediction_noise",
                             source=src)  # fmt: skip
        if not isinstance(self.paired, bool):
            raise InputError(f"must be true or false, got {self.paired!r}", field="paired",
                             source=src)  # fmt: skip

    def _check_lengths(self, src: str) -> None:
        mb = self.max_batch
        if mb is not None and (isinstance(mb, bool) or not isinstance(mb, int) or mb < 1):
            raise InputError(f"must be an integer >= 1, got {mb!r}", field="max_batch", source=src)
        for key in ("prompt", "response", "profile"):
            v = getattr(self, key)
            if v is not None and (not isinstance(v, str) or not v.strip()):
                raise InputError(f"must be a non-empty string, got {v!r}", field=key, source=src)
        if self.profile is not None and (self.prompt is not None or self.response is not None):
            raise InputError("give a profile or prompt and response, not both", field="profile",
                             source=src)  # fmt: skip
        if (self.prompt is None) != (self.response is None):
            missing = "response" if self.response is None else "prompt"
            raise InputError("prompt and response are given together (or use profile)",
                             field=missing, source=src)  # fmt: skip
        if self.drawn:
            bad = [(k, v) for k, v in (("paired", self.paired), ("lengths", self.lengths != "sample"),
                   ("max_prompt", self.max_prompt), ("max_response", self.max_response)) if v]  # fmt: skip
            if bad:
                raise InputError("a trace option, not used with prompt/response or profile "
                                 "(clip a distribution with max=)", field=bad[0][0],
                                 source=src)  # fmt: skip
            try:
                self.mixture()  # parse once: bad distributions are reported here
            except InputError as err:
                raise InputError(err.rule, field=err.field, source=err.source or src) from None

    @property
    def drawn(self) -> bool:
        """Whether lengths come from distributions (``prompt``/``response`` or ``profile``)."""
        return self.profile is not None or self.prompt is not None

    def mixture(self) -> Mixture:
        """The distributions lengths are drawn from (a profile's mixture, or the pair)."""
        if self.profile is not None:
            return load_profile(self.profile).mixture
        pair = []
        for key in ("prompt", "response"):
            dist = parse_length(getattr(self, key), field=key)
            if isinstance(dist, Empirical):
                try:
                    dist.values()  # the file and its column are read (once) here
                except InputError as err:
                    raise InputError(err.rule, field=key, source=err.source) from None
            pair.append(dist)
        return Mixture.pair(*pair)

    def lengths_text(self) -> str:
        """How lengths are drawn, in one phrase (reports and ``meta["source"]``)."""
        if self.profile is not None:
            return f"profile {self.profile}"
        if self.prompt is not None:
            return f"prompt {self.prompt}, response {self.response}"
        return f"trace {self.trace}"

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "workload") -> Workload:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise InputError(f"unknown key (allowed: {', '.join(sorted(known))})"
                             + did_you_mean(unknown[0], known), field=unknown[0], source=source)  # fmt: skip
        try:
            return cls(**dict(d))
        except InputError as err:  # a file's own errors (an empirical CSV) keep its path
            rule = err.rule if err.source in (None, "workload") else f"{err.source}: {err.rule}"
            raise InputError(rule, field=err.field, source=source) from None

    def to_dict(self) -> dict[str, Any]:
        """Every field, except the newer optional ones (:data:`_OPTIONAL`) left unset: the
        dict of a workload without them — and so an experiment cell's key — is as before."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if not (f.name in _OPTIONAL and getattr(self, f.name) is None)}  # fmt: skip

    def check_load(self, load: float | None) -> None:
        """A load is a rate in requests per second (> 0); ``None`` only for burst and raw trace."""
        if load is None:
            if self.arrivals == "poisson":
                raise InputError("poisson arrivals need a rate (requests per second)",
                                 field="loads", source="workload")  # fmt: skip
            return
        if isinstance(load, bool) or not isinstance(load, int | float) or not math.isfinite(load):
            raise InputError(f"must be a number > 0 (requests per second), got {load!r}",
                             field="rate", source="workload")  # fmt: skip
        if load <= 0:
            raise InputError(f"must be > 0 (requests per second), got {load!r}", field="rate",
                             source="workload")  # fmt: skip

    def _usable(self) -> tuple[Trace, np.ndarray]:
        tr = _load(resolve_trace(self.trace))
        ok = usable_requests(tr, self.memory)
        if self.max_prompt is not None:
            ok = ok[tr.prompt[ok] <= self.max_prompt]
        if self.max_response is not None:
            ok = ok[tr.response[ok] <= self.max_response]
        if len(ok) < self.n:
            raise InputError(f"the trace has only {len(ok)} usable requests (prompt + response "
                             f"<= {self.memory}), asked for {self.n}", field="n",
                             source="workload")  # fmt: skip
        return tr, ok

    def usable(self) -> tuple[int, int]:
        """How many of the trace's requests the draws come from (those that can be served in
        ``memory`` and are within ``max_prompt`` / ``max_response``), and how many it has: a
        small ``memory`` keeps only the short requests, which the experiment's report says."""
        tr, ok = self._usable()
        return len(ok), len(tr)

    def instance(self, load: float | None, seed: int, name: str = "") -> Instance:
        """One timed instance (``arrival_time`` on every job) for this load and seed."""
        self.check_load(load)
        n = self.n
        len_seq, arr_seq, pred_seq = np.random.SeedSequence(seed).spawn(3)
        len_rng, arr_rng, pred_rng = (
            np.random.default_rng(s) for s in (len_seq, arr_seq, pred_seq)
        )
        tr: Trace | None = None
        window = None
        if not self.drawn or self.arrivals == "trace":
            tr, ok = self._usable()
        if self.arrivals == "trace":
            if np.isnan(tr.timestamp[ok]).any():
                raise InputError("the trace has no timestamp column (needed for trace arrivals)",
                                 field="arrivals", source="workload")  # fmt: skip
            start = int(arr_rng.integers(0, len(ok) - n + 1)) if self.offset == 0 else self.offset
            window = ok[start : start + n]
            if len(window) < n:
                raise InputError(f"offset {self.offset} leaves fewer than {n} requests",
                                 field="offset", source="workload")  # fmt: skip
        redrawn = None
        if self.drawn:
            field = "profile" if self.profile is not None else "prompt"
            prompts, responses, _, redrawn = draw_pairs(self.mixture(), n, self.memory, len_seq,
                                                        field=field)  # fmt: skip
            ids = [f"req-{i}" for i in range(n)]
        else:
            if window is not None and self.paired:
                pick = window
            elif self.lengths == "head":
                pick = ok[self.offset : self.offset + n]
            else:
                pick = np.sort(len_rng.choice(ok, size=n, replace=False))
                pick = pick[len_rng.permutation(n)]  # order independent of trace position
            prompts, responses = tr.prompt[pick], tr.response[pick]
            ids = [f"row-{int(k)}" for k in pick]
        if self.arrivals == "burst":
            at = np.zeros(n)
        elif self.arrivals == "poisson":
            gaps = arr_rng.exponential(1.0 / float(load), size=n)
            at = np.concatenate([[0.0], np.cumsum(gaps[1:])])
        else:
            ts = tr.timestamp[window] - tr.timestamp[window].min()
            ts = np.sort(ts)
            span = float(ts[-1])
            if load is not None and n > 1 and span > 0:
                ts = ts * ((n - 1) / float(load)) / span
            at = ts
        pred: list[int | None] = [None] * n
        if self.prediction_noise > 0:
            err = pred_rng.lognormal(0.0, float(self.prediction_noise), size=n)
            pred = [max(1, round(int(o) * e)) for o, e in zip(responses, err)]
        jobs = tuple(
            Job(int(s), int(o), id=i, predicted_response=p, arrival_time=float(a))
            for s, o, i, a, p in zip(prompts, responses, ids, at, pred)
        )
        src = self.lengths_text() if self.drawn else self.trace
        meta: dict[str, Any] = {"source": f"workload {src}",
                                "workload": self.to_dict(), "load": load, "seed": int(seed)}  # fmt: skip
        if redrawn is not None:
            meta["redrawn"] = int(redrawn)
        label = self.profile or ("lengths" if self.drawn else self.trace)
        return Instance(self.memory, jobs, name=name or f"{label}-{self.arrivals}", meta=meta,
                        max_batch=self.max_batch)  # fmt: skip


__all__ = ["ARRIVAL_PROCESSES", "BUNDLED", "LENGTH_MODES", "Workload", "resolve_trace"]
