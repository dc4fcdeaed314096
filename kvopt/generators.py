"""Instance generators: ``kvopt gen FAMILY --seed S [--param KEY=VALUE …]``.

Every family is deterministic per seed (``numpy.random.default_rng(seed)``)
and writes its provenance into ``meta`` (family, seed, every parameter).
:data:`GENERATORS` is the one registry; :func:`generate` checks parameters
(unknown key or wrong type → :class:`InputError` naming ``--param KEY``).

Families
--------
``random``          mixed regimes; relative shares ``large``, ``prompt_heavy``,
                    ``response_heavy``; lengths uniform within each regime.
``large`` / ``prompt-heavy`` / ``response-heavy``   one regime only.
``identical-prompt`` one common prompt, responses uniform in ``1..max_response``.
``arrivals``        Poisson arrivals (``rate`` per round) on top of any family
                    (``base``); other parameters go to the base family.
``trace``           ``n`` requests of a trace CSV under a memory budget.
``prop1``           main paper, Proposition 1: X = (1, L), Y = (L³, 1), M = L³ + 1;
                    case 1: one X and ⌊√L⌋ Y; case 2: L² − L + 1 X and ⌊L^{3/2}⌋ Y.
``two-point``       Feng, Yang, Zhang 2026: one shared prompt, a few
                    memory-filling long jobs (``s + o = M``) and many one-token jobs.
``intervals``       interval predictions (issue 69; Chen, Ye, Zhou 2025) on top of any
                    family (``base``): each job gets ``predicted_interval`` of relative
                    width ``width`` around its truth; with ``miss > 0`` a miscalibrated
                    predictor's interval misses the truth with probability ``miss``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import InputError, did_you_mean
from .instance import Instance, Job
from .params import convert_value
from .serving.lengths import profile_names
from .serving.trace import DEFAULT_ROUNDS_PER_SECOND, bundled_trace_dir, trace_instance
from .usercode import FAMILY_GROUP, UserCode, call_user, load, register_object


@dataclass(frozen=True)
class Generator:
    """A family: its function ``fn(rng, seed, params) -> Instance``, parameter defaults, one-line doc."""

    name: str
    fn: Callable[[np.random.Generator, int, dict[str, Any]], Instance]
    defaults: dict[str, Any]
    doc: str
    passthrough: bool = False  # extra params are forwarded (arrivals)
    #: a user's family (SPEC §4 references): where its function comes from; ``None``: built-in
    code: UserCode | None = None


def _need(cond: bool, key: str, rule: str) -> None:
    if not cond:
        raise InputError(rule, source=f"--param {key}")


def _uniform(rng: np.random.Generator, lo: int, hi: int) -> int:
    """Uniform integer in ``lo..hi`` inclusive."""
    return int(rng.integers(lo, hi + 1))


def _random_regimes(rng: np.random.Generator, seed: int, p: dict[str, Any]) -> Instance:
    n, M, cap = p["n"], p["memory"], p["max_response"]
    _need(n >= 0, "n", f"must be >= 0, got {n}")
    _need(M >= 2, "memory", f"must be >= 2, got {M}")
    cap = M if cap <= 0 else cap
    shares = np.array([p["large"], p["prompt_heavy"], p["response_heavy"]], dtype=float)
    _need(
        (shares >= 0).all() and shares.sum() > 0,
        "large",
        "regime shares must be >= 0 and not all 0",
    )
    small_cap = M // 4  # small means s <= M/4
    if shares[1] > 0 or shares[2] > 0:
        _need(small_cap >= 1, "memory", f"small jobs need memory >= 4, got {M}")
    if shares[2] > 0:
        _need(cap >= 2, "max_response", "response-heavy jobs need max_response >= 2")
        _need(M >= 3, "memory", "response-heavy jobs need memory >= 3")
    probs = shares / shares.sum()
    jobs = []
    for _ in range(n):
        regime = int(rng.choice(3, p=probs))
        if regime == 0:  # large: M/4 < s <= M-1, 1 <= o <= M-s
            s = _uniform(rng, small_cap + 1, M - 1)
            o = _uniform(rng, 1, min(M - s, cap))
        elif regime == 1:  # small prompt-heavy: o <= s
            s = _uniform(rng, 1, small_cap)
            o = _uniform(rng, 1, min(s, cap))
        else:  # small response-heavy: o > s, s + o <= M
            s = _uniform(rng, 1, max(1, min(small_cap, cap - 1, (M - 1) // 2)))
            o = _uniform(rng, s + 1, min(M - s, cap))
        jobs.append(Job(prompt=s, response=o))
    return Instance(memory=M, jobs=tuple(jobs))


def _single_regime(which: str):
    def fn(rng, seed, p):
        q = dict(p, large=0.0, prompt_heavy=0.0, response_heavy=0.0)
        q[which] = 1.0
        return _random_regimes(rng, seed, q)

    return fn


def _identical_prompt(rng, seed, p):
    n, M = p["n"], p["memory"]
    _need(M >= 2, "memory", f"must be >= 2, got {M}")
    s = p["prompt"] if p["prompt"] > 0 else max(1, M // 8)
    _need(1 <= s <= M - 1, "prompt", f"must be in 1..memory-1, got {s}")
    cap = p["max_response"] if p["max_response"] > 0 else M - s
    _need(cap <= M - s, "max_response", f"prompt + max_response must be <= memory, got {s} + {cap}")
    _need(n >= 0, "n", f"must be >= 0, got {n}")
    jobs = tuple(Job(prompt=s, response=_uniform(rng, 1, cap)) for _ in range(n))
    return Instance(memory=M, jobs=jobs)


def _arrivals(rng, seed, p):
    base = p.pop("base")
    rate = p.pop("rate")
    _need(base in GENERATORS and base not in ("arrivals",), "base", f"unknown base family {base!r}")
    _need(rate > 0, "rate", f"must be > 0, got {rate}")
    inst = generate(base, seed, **p)
    arr_rng = np.random.default_rng([seed, 1])  # independent of the base family's stream
    gaps = arr_rng.exponential(1.0 / rate, size=inst.n)
    times = np.floor(np.cumsum(gaps)).astype(np.int64)
    if inst.n:
        times -= times[0]  # the first request arrives at round 0
    jobs = tuple(dataclasses.replace(j, arrival=int(t)) for j, t in zip(inst.jobs, times))
    meta = dict(inst.meta)
    meta["base"] = base
    return Instance(memory=inst.memory, jobs=jobs, meta=meta)


def interval_around(rng: np.random.Generator, o: int, room: int, width: float,
                    miss: float) -> tuple[int, int]:  # fmt: skip
    """An interval prediction of a response ``o`` (issue 69), ``1 ≤ lo ≤ hi ≤ room``.

    Calibrated (the draw ``≥ miss``): ``lo = max(1, ⌊o(1 − w·u)⌋)``, ``hi = min(room,
    ⌈o(1 + w(1 − u))⌉)`` with ``u`` uniform in ``[0, 1]`` — an interval of relative width
    about ``w = width`` (``(hi − lo)/o``) that contains ``o`` at a random place.
    Miscalibrated (probability ``miss``): the same interval shifted wholly below ``o``
    (``hi = o − 1``) or above it (``lo = o + 1``), each half the time, when there is room;
    it then misses the truth.  ``room = M − s``: no job is predicted longer than fits.
    """
    u = float(rng.random())
    lo = max(1, math.floor(o * (1 - width * u)))
    hi = min(room, max(lo, math.ceil(o * (1 + width * (1 - u)))))
    if miss > 0 and float(rng.random()) < miss:
        span = hi - lo
        below = float(rng.random()) < 0.5
        if below and o >= 2:
            hi = o - 1
            lo = max(1, hi - span)
        elif o + 1 <= room:
            lo = o + 1
            hi = min(room, lo + span)
    return lo, hi


def _intervals(rng, seed, p):
    base, width, miss = p.pop("base"), p.pop("width"), p.pop("miss")
    _need(
        base in GENERATORS and base not in ("intervals",), "base", f"unknown base family {base!r}"
    )
    _need(width >= 0, "width", f"must be >= 0, got {width}")
    _need(0 <= miss <= 1, "miss", f"must be in [0, 1], got {miss}")
    inst = generate(base, seed, **p)
    iv_rng = np.random.default_rng([seed, 2])  # independent of the base family's stream
    jobs = tuple(
        dataclasses.replace(j, predicted_interval=interval_around(
            iv_rng, j.response, inst.memory - j.prompt, width, miss))
        for j in inst.jobs
    )  # fmt: skip
    meta = dict(inst.meta)
    meta["base"] = base
    return inst.replace(jobs=jobs, meta=meta)


def _trace(rng, seed, p):
    path = p["path"] or str(bundled_trace_dir())
    return trace_instance(
        path,
        n=p["n"],
        memory=p["memory"],
        seed=seed,
        mode=p["mode"],
        offset=p["offset"],
        arrivals=p["arrivals"],
        rounds_per_second=p["rounds_per_second"],
    )


def _prop1(rng, seed, p):
    L, case = p["L"], p["case"]
    _need(L >= 2, "L", f"must be >= 2, got {L}")
    _need(case in (1, 2), "case", f"must be 1 or 2, got {case}")
    M = L**3 + 1
    if case == 1:
        nx, ny = 1, math.isqrt(L)
    else:
        nx, ny = L * L - L + 1, math.isqrt(L**3)  # ⌊L^{3/2}⌋ = ⌊√(L³)⌋
    x = [Job(prompt=1, response=L, id=f"X{k}") for k in range(nx)]
    y = [Job(prompt=L**3, response=1, id=f"Y{k}") for k in range(ny)]
    _need(p["order"] in ("x-first", "y-first"), "order", "must be x-first or y-first")
    jobs = x + y if p["order"] == "x-first" else y + x
    return Instance(memory=M, jobs=tuple(jobs))


def _two_point(rng, seed, p):
    M, s = p["memory"], p["prompt"]
    _need(M >= 2, "memory", f"must be >= 2, got {M}")
    _need(1 <= s <= M - 1, "prompt", f"must be in 1..memory-1, got {s}")
    _need(p["long"] >= 0, "long", "must be >= 0")
    _need(p["short"] >= 0, "short", "must be >= 0")
    _need(p["short_arrival"] >= 0, "short_arrival", "must be >= 0")
    long_jobs = [Job(prompt=s, response=M - s, id=f"long{k}") for k in range(p["long"])]
    short_jobs = [
        Job(prompt=s, response=1, arrival=p["short_arrival"], id=f"short{k}")
        for k in range(p["short"])
    ]
    return Instance(memory=M, jobs=tuple(long_jobs + short_jobs))


def _workload(rng, seed, p):
    """A timed instance (SPEC §10) of :class:`kvopt.serving.workload.Workload`: lengths from a
    trace, or from ``prompt``/``response`` distributions or a length ``profile`` (SPEC §10.1;
    empty: none), arrivals in seconds (``rate`` in requests per second; ignored for a burst),
    ``max_batch`` the instance's batch cap (0: none).  ``setup`` (a preset of ``kvopt
    setups``) sets ``memory`` and ``max_batch`` to the setup's ``M`` and cap; giving either
    of them too is an error (SPEC §10.1)."""
    from .serving.setups import get_setup
    from .serving.workload import Workload

    fields = {k: p[k] for k in ("trace", "n", "memory", "arrivals", "lengths", "paired",
                                 "offset", "prediction_noise")}  # fmt: skip
    fields.update({k: p[k] for k in ("prompt", "response", "profile") if p[k]})
    if p["max_batch"]:
        fields["max_batch"] = p["max_batch"]
    if p["setup"]:
        setup = get_setup(p["setup"], source="--param setup")
        for key, default in (("memory", 16384), ("max_batch", 0)):
            _need(p[key] == default, key, f"given with --param setup={setup.name}, which sets "
                  f"it ({getattr(setup, key)}); remove one")  # fmt: skip
        fields["memory"] = setup.memory
        if setup.max_batch is not None:
            fields["max_batch"] = setup.max_batch
    try:
        wl = Workload(**fields)
        rate = None if wl.arrivals == "burst" or (wl.arrivals == "trace" and not p["rate"]) \
            else p["rate"]  # fmt: skip
        return wl.instance(rate, seed)
    except InputError as err:
        where = f"--param {err.field or 'trace'}"
        if err.source and err.source != "workload":
            where += f": {err.source}"
        raise InputError(err.rule, source=where) from None


_RANDOM_DEFAULTS = {
    "n": 10,
    "memory": 64,
    "max_response": 0,
    "large": 1.0,
    "prompt_heavy": 1.0,
    "response_heavy": 1.0,
}
_ONE_REGIME_DEFAULTS = {"n": 10, "memory": 64, "max_response": 0}

#: Every instance family, by the name ``kvopt gen`` takes.
GENERATORS: dict[str, Generator] = {
    g.name: g
    for g in (
        Generator("random", _random_regimes, _RANDOM_DEFAULTS,
                  "mixed regimes (shares large/prompt_heavy/response_heavy; max_response 0 = no cap)"),
        Generator("large", _single_regime("large"), _ONE_REGIME_DEFAULTS, "large jobs only (s > M/4)"),
        Generator("prompt-heavy", _single_regime("prompt_heavy"), _ONE_REGIME_DEFAULTS,
                  "small prompt-heavy jobs only (s <= M/4, o <= s)"),
        Generator("response-heavy", _single_regime("response_heavy"), _ONE_REGIME_DEFAULTS,
                  "small response-heavy jobs only (s <= M/4, o > s)"),
        Generator("identical-prompt", _identical_prompt,
                  {"n": 10, "memory": 64, "prompt": 0, "max_response": 0},
                  "one common prompt (0 = M/8), responses uniform in 1..max_response"),
        Generator("arrivals", _arrivals, {"base": "random", "rate": 0.2},
                  "Poisson arrivals (rate per round) on top of a base family", passthrough=True),
        Generator("intervals", _intervals, {"base": "random", "width": 1.0, "miss": 0.0},
                  "interval predictions of relative width around the truth on a base family; "
                  "miss > 0: a miscalibrated predictor misses with that probability",
                  passthrough=True),
        Generator("trace", _trace,
                  {"path": "", "n": 20, "memory": 16384, "mode": "head", "offset": 0,
                   "arrivals": False, "rounds_per_second": DEFAULT_ROUNDS_PER_SECOND},
                  "n requests of a trace CSV or folder (default: bundled Azure 2023 trace)"),
        Generator("workload", _workload,
                  {"trace": "azure-conv", "n": 100, "memory": 16384, "arrivals": "poisson",
                   "rate": 8.0, "lengths": "sample", "paired": False, "offset": 0,
                   "prediction_noise": 0.0, "prompt": "", "response": "", "profile": "",
                   "max_batch": 0, "setup": ""},
                  "timed instance (arrival_time in seconds, SPEC §10): trace lengths, or "
                  "prompt/response distributions such as 'lognormal(mean=40.62, median=11)' or "
                  f"a profile ({', '.join(profile_names())}); burst / poisson at rate per "
                  "second / trace timestamps rescaled to rate (0: as is); max_batch 0: no cap; "
                  "setup NAME (kvopt setups) sets memory and max_batch"),
        Generator("prop1", _prop1, {"L": 4, "case": 2, "order": "x-first"},
                  "main paper Prop. 1: X=(1,L), Y=(L^3,1), M=L^3+1, case 1 or 2"),
        Generator("two-point", _two_point,
                  {"memory": 64, "prompt": 1, "long": 2, "short": 20, "short_arrival": 0},
                  "shared prompt, memory-filling long jobs and one-token jobs (Feng, Yang, Zhang 2026)"),
    )
}  # fmt: skip


def _convert(key: str, value: Any, default: Any) -> Any:
    """Accept a string (from ``--param``) or a value of the default's type."""
    where = f"--param {key}"
    if isinstance(value, str) and not isinstance(default, str):
        return convert_value(key, value, default)
    if isinstance(default, bool):
        _need(isinstance(value, bool), key, f"must be true or false, got {value!r}")
    elif isinstance(default, int):
        ok = isinstance(value, int | np.integer) and not isinstance(value, bool)
        if not ok:
            raise InputError(f"must be an integer, got {value!r}", source=where)
        value = int(value)
    elif isinstance(default, float):
        ok = isinstance(value, int | float | np.number) and not isinstance(value, bool)
        if not ok:
            raise InputError(f"must be a number, got {value!r}", source=where)
        value = float(value)
        _need(math.isfinite(value), key, f"must be finite, got {value}")
    elif isinstance(default, str) and not isinstance(value, str):
        raise InputError(f"must be a string, got {value!r}", source=where)
    return value


def get_generator(family: Any, source: str = "FAMILY") -> Generator:
    """The family named ``family``: a built-in name or a reference to a user's function (SPEC §4).

    A reference (``path/to/fam.py:function``, ``package.module:function``, a name
    registered in the entry-point group ``kvopt.families``, or the function itself)
    names a function ``f(rng, **params) -> Instance`` of a
    :class:`numpy.random.Generator` and keyword parameters with defaults (their
    types are the defaults' types, as for ``--param``).
    """
    if callable(family) and not isinstance(family, str):
        family = register_object(family)[0]
    if not isinstance(family, str):
        raise InputError(f"must be a family name or reference, got {family!r}", source=source)
    if family in GENERATORS:
        return GENERATORS[family]
    try:
        fn, code = load(family, FAMILY_GROUP)
    except KeyError:
        if family.endswith(".py"):  # a file without its function: kvopt never guesses which
            raise InputError(
                f"{family!r} names a file, not a family: add the function after a colon "
                f"({family}:function)",
                source=source,
            ) from None
        raise InputError(
            f"unknown family {family!r} (known: {', '.join(GENERATORS)}; or a reference "
            f"fam.py:function, package.module:function, or a name registered in the "
            f"entry-point group {FAMILY_GROUP})" + did_you_mean(family, GENERATORS),
            source=source,
        ) from None
    return _user_generator(family, fn, code)


def _user_generator(ref: str, fn: Any, code: UserCode) -> Generator:
    import inspect

    if not callable(fn) or isinstance(fn, type):
        raise InputError(f"{code.attr} is not a function", source=repr(ref))
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise InputError(f"cannot read the signature: {exc}", source=repr(ref)) from None
    ps = list(sig.parameters.values())
    if not ps or ps[0].kind not in (ps[0].POSITIONAL_ONLY, ps[0].POSITIONAL_OR_KEYWORD):
        raise InputError(
            "a family is a function f(rng, **params) -> Instance: its first argument is the "
            "numpy.random.Generator",
            source=repr(ref),
        )
    defaults: dict[str, Any] = {}
    for p in ps[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is inspect.Parameter.empty or not isinstance(
            p.default, bool | int | float | str
        ):
            raise InputError(
                f"argument {p.name!r} needs a default of type int, float, bool or str "
                "(the type --param converts to)",
                source=repr(ref),
            )
        defaults[p.name] = p.default

    def run(rng: np.random.Generator, seed: int, p: dict[str, Any]) -> Instance:
        inst = call_user(fn, ref, "family", rng, **p)
        if not isinstance(inst, Instance):
            raise InputError(
                f"{code.attr} returned {type(inst).__name__}, not a kvopt.Instance",
                source=repr(ref),
            )
        return inst

    doc = (inspect.getdoc(fn) or "").splitlines()
    return Generator(ref, run, defaults, doc[0] if doc else f"user family {ref}", code=code)


def generate(family: Any, seed: int, **params: Any) -> Instance:
    """Generate an instance of ``family`` with ``seed``; provenance goes into ``meta``.

    ``family`` is a built-in name or a reference to a user's function
    (:func:`get_generator`); a user family's ``meta`` also names its source
    (``family_source``: reference, path and SHA-256 of the file).
    """
    gen = get_generator(family)
    family = gen.name
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError(f"must be an integer >= 0, got {seed!r}", source="--seed")
    seed = int(seed)
    p: dict[str, Any] = dict(gen.defaults)
    extra: dict[str, Any] = {}
    for key, value in params.items():
        if key in gen.defaults:
            p[key] = _convert(key, value, gen.defaults[key])
        elif gen.passthrough:
            extra[key] = value
        else:
            raise InputError(
                f"unknown parameter for family {family!r} (known: {', '.join(gen.defaults)})"
                + did_you_mean(key, gen.defaults),
                source=f"--param {key}",
            )
    rng = np.random.default_rng(seed)
    inst = gen.fn(rng, seed, {**p, **extra}) if gen.passthrough else gen.fn(rng, seed, p)
    meta = dict(inst.meta)
    all_params = {**meta.get("params", {}), **p, **extra} if gen.passthrough else p
    meta.update(source=f"kvopt gen {family}", family=family, seed=seed, params=all_params)
    if gen.passthrough:
        meta["family"] = family
    if gen.code is not None:
        meta["family_source"] = gen.code.to_dict()
    stem = family if gen.code is None else gen.code.attr
    name = f"{stem}-s{seed}"
    return inst.replace(name=name, meta=meta)
