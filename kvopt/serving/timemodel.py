"""Time models: the duration of a round in seconds (SPEC §10).

Round ``t`` lasts ``d_t = c0 + c_b·b_t + c_k·K_t + c_p·P_t + c_q·Q_t`` seconds: ``b_t``
attempts run, holding ``K_t = Σ (s_i + u + 1)`` memory; ``P_t = Σ s_i`` and
``Q_t = Σ s_i²`` are over the attempts in their first round (``u = 0``, where the
prompt is prefilled).  Every coefficient is ≥ 0 and ``c0 > 0``.

:data:`PRESETS` is the one table of named models (``kvopt time-models`` prints it):

* ``unit`` — ``c0 = 1``: seconds equal rounds, every result of SPEC §1–§9 unchanged.
* ``llama2-70b-a100-tp2`` — fitted by ``benchmarks/fit_time_model.py`` to Vidur's A100
  profiles of Llama-2-70B with tensor parallelism 2 (microsoft/vidur, MIT; the data used
  and its licence are in ``instances/profiles/vidur-llama2-70b-a100/``).  The copy of the
  profiles we could read lacks the attention kernels (``attention.csv``), so the fit
  covers every other operation of a transformer block (projections, MLP, norms, the two
  tensor-parallel all-reduces) and sets ``c_k = c_q = 0``: rounds holding long contexts
  are timed too short, by the attention kernels' share.  Fit error over the profiled
  1–4,096 tokens per round: mean 3.5 %, max 27.6 % relative (the max at a few tokens,
  where the GEMMs do not yet scale).

* ``jaillet-llama2-70b-2xa100``, ``vllm-llama3.1-8b-a100-80gb``,
  ``vllm-llama3.1-70b-8xa100-80gb`` — the time models of the serving setups of the same
  names (SPEC §10.1, :mod:`kvopt.serving.setups`), each with attention (``c_k > 0``): for
  Llama-2-70B the measured coefficients above plus a roofline's ``c_k`` and ``c_q``; for the
  Llama-3.1 models a roofline whose efficiencies are measured on Vidur's A100 profile (its
  non-attention part is within mean 5.1 %, max 25.5 % of that profile).
  ``benchmarks/fit_setups.py`` prints them, their errors and the comparison with GenZ.

Users give their own coefficients with :func:`parse_time_model`
(``"c0=0.02,c_b=1e-4"``, omitted terms 0) or :class:`TimeModel` directly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InputError

COEFFICIENTS = ("c0", "c_b", "c_k", "c_p", "c_q")


@dataclass(frozen=True)
class TimeModel:
    """The coefficients of SPEC §10's round duration, with the model's name and source."""

    c0: float = 1.0
    c_b: float = 0.0
    c_k: float = 0.0
    c_p: float = 0.0
    c_q: float = 0.0
    name: str = "custom"
    source: str = "given by the user"
    fit_error: str = ""

    def __post_init__(self) -> None:
        for key in COEFFICIENTS:
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise InputError(f"must be a finite number >= 0, got {v!r}", field=key,
                                 source="time model")  # fmt: skip
            if v < 0:
                raise InputError(f"must be >= 0, got {v!r}", field=key, source="time model")
            object.__setattr__(self, key, float(v))
        if self.c0 <= 0:
            raise InputError(
                f"must be > 0 (an idle round lasts c0), got {self.c0!r}",
                field="c0",
                source="time model",
            )

    @property
    def is_unit(self) -> bool:
        """Seconds equal rounds (``c0 = 1``, every other term 0)."""
        return self.c0 == 1.0 and not (self.c_b or self.c_k or self.c_p or self.c_q)

    def coefficients(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in COEFFICIENTS}

    def duration(self, b: int, k: int, p: int = 0, q: int = 0) -> float:
        """``d_t`` of one round with ``b`` attempts holding ``k``, prefilling ``p`` (``q`` = Σ s²)."""
        return self.c0 + self.c_b * b + self.c_k * k + self.c_p * p + self.c_q * q

    def stretch(self, rounds: int, b: int, k0: int, p: int = 0, q: int = 0) -> float:
        """Seconds of ``rounds`` consecutive rounds with the same ``b`` running attempts.

        The first round holds ``k0`` and prefills ``p`` (``q``); each later round holds
        ``b`` more (every attempt grows by one token) and prefills nothing.  Closed form:
        one step however long the stretch (SPEC §10, issue 53 item 7).
        """
        if rounds <= 0:
            return 0.0
        per = self.c0 + self.c_b * b + self.c_k * k0
        return (
            rounds * per + self.c_k * b * (rounds * (rounds - 1) // 2) + self.c_p * p + self.c_q * q
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, **self.coefficients(), "source": self.source}
        if self.fit_error:
            d["fit_error"] = self.fit_error
        return d

    def label(self) -> str:
        if self.name != "custom":
            return self.name
        return ",".join(f"{k}={v:g}" for k, v in self.coefficients().items() if v)


_VIDUR_ERROR = "MLP part: mean 3.5 %, max 27.6 % relative (Vidur profile); attention: a roofline"
_ROOFLINE_ERROR = (
    "a roofline; its MLP part is within mean 5.1 %, max 25.5 % of Vidur's Llama-2-70B profile"
)
#: How each setup's preset compares with GenZ (benchmarks/fit_setups.py --genz).
_GENZ = "; {} x GenZ's peak-efficiency rounds (median {})"

#: The named time models (SPEC §10).  Each non-unit row names its model, hardware,
#: data and fit error; ``benchmarks/fit_time_model.py`` reproduces the fitted numbers.
PRESETS: Mapping[str, TimeModel] = {
    "unit": TimeModel(
        1.0, name="unit", source="one round is one time unit (SPEC §10): every §1-§9 result"
    ),
    "llama2-70b-a100-tp2": TimeModel(
        c0=0.03926,
        c_b=3.161e-4,
        c_p=3.161e-4,
        name="llama2-70b-a100-tp2",
        source=(
            "Llama-2-70B on 2 x A100 (tensor parallel 2), fitted to Vidur's profiles "
            "(microsoft/vidur data/profiling, MIT; instances/profiles/vidur-llama2-70b-a100, "
            "benchmarks/fit_time_model.py); attention kernels not in the readable data, "
            "so c_k = c_q = 0"
        ),
        fit_error="mean 3.5 %, max 27.6 % relative over 1-4096 tokens per round",
    ),
    # The serving setups' time models (SPEC §10.1; kvopt.serving.setups, same names), each
    # with attention (c_k > 0); benchmarks/fit_setups.py prints these numbers and the errors.
    "jaillet-llama2-70b-2xa100": TimeModel(
        c0=0.03926,
        c_b=3.161e-4,
        c_k=1.017e-7,
        c_p=3.161e-4,
        c_q=4.201e-9,
        name="jaillet-llama2-70b-2xa100",
        source=(
            "Llama-2-70B on 2 x A100-80GB (TP 2): c0, c_b, c_p measured (the Vidur fit of "
            "llama2-70b-a100-tp2); attention from the roofline of kvopt.serving.setups "
            "(c_k: KV bytes per token per GPU at 0.79 x 2.039 TB/s; c_q: causal prefill "
            "FLOPs at 0.5 x 312 TFLOP/s); benchmarks/fit_setups.py"
        ),
        fit_error=_VIDUR_ERROR + _GENZ.format("1.22-2.26", 1.48),
    ),
    "vllm-llama3.1-8b-a100-80gb": TimeModel(
        c0=9.970e-3,
        c_b=6.248e-5,
        c_k=8.137e-8,
        c_p=5.811e-5,
        c_q=1.680e-9,
        name="vllm-llama3.1-8b-a100-80gb",
        source=(
            "Llama-3.1-8B on 1 x A100-80GB: the roofline of kvopt.serving.setups (weights "
            "and KV read at 0.79 x 2.039 TB/s, GEMMs at 0.77 x 312 TFLOP/s, efficiencies "
            "measured on Vidur's A100 profile); benchmarks/fit_setups.py"
        ),
        fit_error=_ROOFLINE_ERROR + _GENZ.format("1.16-2.40", 1.65),
    ),
    "vllm-llama3.1-70b-8xa100-80gb": TimeModel(
        c0=1.722e-2,
        c_b=9.585e-5,
        c_k=2.543e-8,
        c_p=9.476e-5,
        c_q=1.050e-9,
        name="vllm-llama3.1-70b-8xa100-80gb",
        source=(
            "Llama-3.1-70B on 8 x A100-80GB (TP 8): the roofline of kvopt.serving.setups "
            "(as the 8B preset, plus two all-reduces per layer at Vidur's measured 2-GPU "
            "latency and bus bandwidth); benchmarks/fit_setups.py"
        ),
        fit_error=_ROOFLINE_ERROR + _GENZ.format("1.13-1.94", 1.65),
    ),
}


def parse_time_model(text: str | Mapping[str, Any] | TimeModel | None,
                     source: str = "--time-model") -> TimeModel:  # fmt: skip
    """A preset name, ``"c0=…,c_b=…"`` (omitted terms 0), a mapping, or a model; ``None`` is unit.

    Bad input (an unknown preset or key, a negative coefficient, ``c0 = 0``) raises
    :class:`~kvopt.errors.InputError` naming ``source``.
    """
    if text is None:
        return PRESETS["unit"]
    if isinstance(text, TimeModel):
        return text
    if isinstance(text, Mapping):
        if "preset" in text or "name" in text and str(text.get("name")) in PRESETS:
            key = str(text.get("preset", text.get("name")))
            if key not in PRESETS:
                raise _unknown(key, source)
            return PRESETS[key]
        items = dict(text)
    else:
        text = str(text).strip()
        if "=" not in text:
            if text not in PRESETS:
                raise _unknown(text, source)
            return PRESETS[text]
        items = {}
        for part in text.split(","):
            key, sep, value = part.partition("=")
            key = key.strip()
            if not sep or not key:
                raise InputError(f"expected KEY=VALUE, got {part!r}", source=source)
            try:
                items[key] = float(value)
            except ValueError:
                raise InputError(f"must be a number, got {value.strip()!r}", field=key,
                                 source=source) from None  # fmt: skip
    unknown = sorted(set(items) - set(COEFFICIENTS) - {"name"})
    if unknown:
        raise InputError(f"unknown coefficient (allowed: {', '.join(COEFFICIENTS)})",
                         field=unknown[0], source=source)  # fmt: skip
    coef = {k: items.get(k, 0.0) for k in COEFFICIENTS}
    try:
        model = TimeModel(**coef)
    except InputError as err:
        raise InputError(err.rule, field=err.field, source=source) from None
    return PRESETS["unit"] if model.is_unit else model


def _unknown(name: str, source: str) -> InputError:
    return InputError(
        f"unknown time model {name!r} (presets: {', '.join(PRESETS)}; or c0=…,c_b=…,c_k=…,c_p=…,c_q=…)",
        source=source,
    )


__all__ = ["COEFFICIENTS", "PRESETS", "TimeModel", "parse_time_model"]
