"""Serving setups (SPEC §10.1): a model on GPUs under an engine's configuration.

A :class:`Setup` names a model (:class:`ModelConfig`, the fields of its Hugging Face
``config.json``), a GPU (:class:`GPU`), a tensor-parallel degree and an engine
configuration (memory fraction, activation reserve, the cap on running requests), and
yields the three things an experiment needs: the KV budget ``memory`` (``M``, in
tokens), the batch cap ``max_batch`` (``B``, or ``None``) and a time model
(:class:`~kvopt.serving.timemodel.TimeModel`) whose terms include attention (``c_k > 0``).

**The budget rule** is vLLM's (``vllm/worker/worker.py``
``determine_num_available_blocks`` and ``vllm/worker/cache_engine.py``
``get_cache_block_size``, vllm-project/vllm, Apache-2.0): the KV cache gets
``memory_fraction × GPU memory − peak memory`` bytes per GPU, where the peak is the
weights plus what the profiling run allocates on top (activations, non-torch memory; here
the ``activation_reserve``), cut into blocks of 16 tokens of
``2 · layers · max(1, kv_heads // TP) · head_dim · 2`` bytes per token (K and V, BF16).
``M`` is the number of whole blocks times 16.  :meth:`Setup.arithmetic` prints each step.
A paper that states its ``M`` keeps it (``stated_memory``) and the setup says so.

**The time model** (SPEC §10) of a preset is in :data:`kvopt.serving.timemodel.PRESETS`
under the setup's name, so ``--time-model NAME`` takes a setup's name without this module
(the time-model module is below this one: no import circle).  The presets' numbers come
from ``benchmarks/fit_setups.py``; :func:`roofline` is the rule they follow and the time
model of a user's setup that gives no coefficients:

* ``c0`` — every round reads the weights once: ``weights per GPU / (bandwidth · η_bw)``,
  plus, under tensor parallelism, two all-reduces per layer at their fixed latency;
* ``c_b`` — each running attempt pushes one token through the linear layers and the
  LM head: ``2 · (layer + head parameters) / TP / (peak FLOPs · η_f)``, plus its share
  of the two all-reduces per layer (``2 · hidden · 2 bytes · 2(TP−1)/TP / bus bandwidth``);
* ``c_p`` — each prefilled prompt token, the same without the LM head (vLLM computes
  logits for the last prompt token only);
* ``c_k`` — decode attention reads the KV cache it holds: ``KV bytes per token per GPU /
  (bandwidth · η_bw)``;
* ``c_q`` — causal prefill attention, ``2 · layers · heads · head_dim / TP`` FLOPs per
  squared prompt token, at ``peak · η_q``.

The efficiencies are measured, not guessed, where measurements exist: ``η_bw = 0.79``
is the bandwidth Vidur's A100 profile of Llama-2-70B (TP 2) reaches in its four GEMMs at
one token (the weights' bytes over their time), ``η_f = 0.77`` the FLOP rate of the same
GEMMs at 4,096 tokens, and the all-reduce latency (39.2 µs) and bus bandwidth (195 GB/s)
are a least-squares line through Vidur's 2-GPU NVLink all-reduce profile over the sizes a
round of ≤ 4,096 tokens sends (``instances/profiles/vidur-llama2-70b-a100``, MIT).
``η_q = 0.5`` is the low end of FlashAttention-2's forward pass on an A100 (Dao 2023:
50–73 % of peak).  Left out: the element-wise kernels (norms, rope, activation,
residual; about 6 % of Vidur's measured block time) and TP > 2 all-reduce latencies
other than the 2-GPU one (vLLM's custom all-reduce is faster than the NCCL calls Vidur
timed, so this errs long).

Choices where SPEC is silent: the KV heads per GPU are ``max(1, kv_heads // TP)`` as in
vLLM (equal to ``kv_heads / TP`` when TP divides them); the activation reserve of the
vLLM presets is 2 GiB per GPU (the middle of the 1–4 GiB that the profiling run's
activations, non-torch allocations and CUDA graphs take; 1 and 4 GiB move the 8B budget
by ±2 %); an A100-80GB reports 79.25 GiB to PyTorch (``torch.cuda.mem_get_info``; e.g.
the OutOfMemoryError messages in github.com/HiDream-ai/VAREdit/issues/6 and
github.com/wbfwonderful/Vad-R1/issues/11).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, did_you_mean
from .timemodel import PRESETS as TIME_MODELS
from .timemodel import TimeModel, parse_time_model

GIB = 1024**3
#: vLLM's KV block size in tokens (``--block-size``, default 16): ``M`` is a whole number of blocks.
BLOCK_SIZE = 16
#: Bytes per weight and per KV element (BF16).
DTYPE_BYTES = 2

#: Efficiencies of the roofline (module docstring: measured on Vidur's A100 profiles, except η_q).
ETA_BW = 0.79
ETA_FLOPS = 0.77
ETA_PREFILL_ATTENTION = 0.5
#: Tensor-parallel all-reduce: fixed latency (s) and bus bandwidth (bytes/s), Vidur's 2-GPU profile.
ALLREDUCE_LATENCY = 39.2e-6
ALLREDUCE_BUS_BANDWIDTH = 195e9


def _positive_int(v: Any, field: str, source: str) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise InputError(f"must be an integer >= 1, got {v!r}", field=field, source=source)


@dataclass(frozen=True)
class ModelConfig:
    """The fields of a Hugging Face ``config.json`` a budget and a roofline need."""

    name: str
    layers: int  # num_hidden_layers
    hidden: int  # hidden_size
    heads: int  # num_attention_heads
    kv_heads: int  # num_key_value_heads
    intermediate: int  # intermediate_size
    vocab: int  # vocab_size
    head_dim: int = 0  # head_dim (0: hidden // heads)
    tied_embeddings: bool = False  # tie_word_embeddings
    source: str = ""

    def __post_init__(self) -> None:
        for key in ("layers", "hidden", "heads", "kv_heads", "intermediate", "vocab"):
            _positive_int(getattr(self, key), _HF_NAME[key], "model")
        if self.head_dim == 0:
            object.__setattr__(self, "head_dim", self.hidden // self.heads)
        _positive_int(self.head_dim, "head_dim", "model")

    @property
    def layer_params(self) -> int:
        """Parameters of one decoder layer: Q, K, V, O, gate/up/down, two RMSNorms."""
        h, kv = self.hidden, self.kv_heads * self.head_dim
        q = self.heads * self.head_dim
        return h * (q + 2 * kv) + q * h + 3 * h * self.intermediate + 2 * h

    @property
    def params(self) -> int:
        """All parameters: the layers, the embedding, the LM head (unless tied), the final norm."""
        emb = self.vocab * self.hidden
        return self.layers * self.layer_params + emb * (1 if self.tied_embeddings else 2) \
            + self.hidden  # fmt: skip

    @classmethod
    def from_hf(cls, d: Mapping[str, Any], name: str = "", source: str = "config") -> ModelConfig:
        """From a Hugging Face ``config.json``'s dict; a missing field is an error naming it."""
        kw: dict[str, Any] = {}
        for key, hf in _HF_NAME.items():
            if hf not in d:
                raise InputError("missing (a Hugging Face config needs num_hidden_layers, "
                                 "hidden_size, num_attention_heads, num_key_value_heads, "
                                 "intermediate_size, vocab_size)", field=hf, source=source)  # fmt: skip
            kw[key] = d[hf]
        try:
            return cls(name=name or str(d.get("_name_or_path", "model")),
                       head_dim=d.get("head_dim") or 0,
                       tied_embeddings=bool(d.get("tie_word_embeddings", False)),
                       source=source, **kw)  # fmt: skip
        except InputError as err:
            raise InputError(err.rule, field=err.field, source=source) from None


_HF_NAME = {
    "layers": "num_hidden_layers",
    "hidden": "hidden_size",
    "heads": "num_attention_heads",
    "kv_heads": "num_key_value_heads",
    "intermediate": "intermediate_size",
    "vocab": "vocab_size",
}


@dataclass(frozen=True)
class GPU:
    """A GPU: its memory as the framework reports it (GiB), HBM bandwidth, dense BF16 peak."""

    name: str
    memory_gib: float
    bandwidth: float  # bytes per second
    flops: float  # dense BF16 FLOP/s
    source: str = ""

    def __post_init__(self) -> None:
        for key in ("memory_gib", "bandwidth", "flops"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0 \
                    or not math.isfinite(v):  # fmt: skip
                raise InputError(f"must be a number > 0, got {v!r}", field=f"gpu.{key}",
                                 source="setup")  # fmt: skip


_A100 = "NVIDIA A100 datasheet (HBM2e bandwidth; dense BF16 tensor core peak)"
#: Known GPUs, by the name ``[setup] gpu`` takes.
GPUS: Mapping[str, GPU] = {
    "a100-80gb": GPU("a100-80gb", 79.25, 2.039e12, 312e12,
                     _A100 + "; 79.25 GiB as PyTorch reports an A100-80GB"),
    "a100-40gb": GPU("a100-40gb", 39.39, 1.555e12, 312e12,
                     _A100 + "; 39.39 GiB as PyTorch reports an A100-40GB"),
}  # fmt: skip

_HF = "https://huggingface.co/{}/blob/main/config.json"
#: The models of the presets, from their public Hugging Face configs.
MODELS: Mapping[str, ModelConfig] = {
    "llama-2-70b": ModelConfig("llama-2-70b", 80, 8192, 64, 8, 28672, 32000,
                               source=_HF.format("meta-llama/Llama-2-70b-hf")),
    "llama-3.1-8b": ModelConfig("llama-3.1-8b", 32, 4096, 32, 8, 14336, 128256,
                                source=_HF.format("meta-llama/Llama-3.1-8B")),
    "llama-3.1-70b": ModelConfig("llama-3.1-70b", 80, 8192, 64, 8, 28672, 128256,
                                 source=_HF.format("meta-llama/Llama-3.1-70B")),
}  # fmt: skip


@dataclass(frozen=True)
class Setup:
    """A model on ``tp`` GPUs under an engine configuration (module docstring).

    ``memory`` is computed on creation by the budget rule (or is ``stated_memory``);
    a budget ≤ 0 (the weights do not fit) is an error naming the setup.
    """

    name: str
    model: ModelConfig
    gpu: GPU
    tp: int = 1
    memory_fraction: float = 0.9
    activation_reserve_gib: float = 2.0
    max_batch: int | None = 256
    time_model: TimeModel | None = None  # None: the roofline of this model, GPU and TP
    source: str = ""
    stated_memory: int | None = None  # a paper's own M, kept as stated

    def __post_init__(self) -> None:
        src = f"setup {self.name}"
        _positive_int(self.tp, "tp", src)
        f = self.memory_fraction
        if isinstance(f, bool) or not isinstance(f, int | float) or not 0 < f <= 1:
            raise InputError(f"must be a number in (0, 1], got {f!r}", field="memory_fraction",
                             source=src)  # fmt: skip
        r = self.activation_reserve_gib
        if isinstance(r, bool) or not isinstance(r, int | float) or not r >= 0:
            raise InputError(f"must be a number >= 0 (GiB), got {r!r}",
                             field="activation_reserve_gib", source=src)  # fmt: skip
        if self.max_batch is not None:
            b = self.max_batch
            if isinstance(b, bool) or not isinstance(b, int) or b < 1:
                raise InputError(f"must be an integer >= 1 (or absent: no cap), got {b!r}",
                                 field="max_batch", source=src)  # fmt: skip
        if self.stated_memory is not None:
            _positive_int(self.stated_memory, "memory", src)
        if self.time_model is None:
            object.__setattr__(self, "time_model", roofline(self.model, self.gpu, self.tp,
                                                            name=self.name))  # fmt: skip
        if self.rule_memory() < 1:
            raise InputError(f"the KV budget is {self.rule_memory()} tokens: the weights "
                             f"({self.weights_gib():.2f} GiB per GPU) and the activation reserve "
                             f"do not fit in {self.memory_fraction:g} x {self.gpu.memory_gib:g} "
                             "GiB", field="memory", source=src)  # fmt: skip

    # ------------------------------------------------------------------ the budget rule
    def kv_bytes_per_token(self) -> int:
        """KV bytes per token per GPU: ``2 · layers · max(1, kv_heads // TP) · head_dim · 2``."""
        m = self.model
        return 2 * m.layers * max(1, m.kv_heads // self.tp) * m.head_dim * DTYPE_BYTES

    def weights_gib(self) -> float:
        """Weights per GPU (GiB): BF16 parameters divided by TP."""
        return self.model.params * DTYPE_BYTES / self.tp / GIB

    def kv_gib(self) -> float:
        """Bytes per GPU the KV cache gets (GiB): fraction × memory − weights − reserve."""
        return (self.memory_fraction * self.gpu.memory_gib - self.weights_gib()
                - self.activation_reserve_gib)  # fmt: skip

    def rule_memory(self) -> int:
        """``M`` by the engine's rule: whole blocks of :data:`BLOCK_SIZE` tokens."""
        blocks = math.floor(self.kv_gib() * GIB / (BLOCK_SIZE * self.kv_bytes_per_token()))
        return blocks * BLOCK_SIZE

    @property
    def memory(self) -> int:
        """The KV budget ``M`` (tokens): the paper's stated one, else the rule's."""
        return self.stated_memory if self.stated_memory is not None else self.rule_memory()

    def arithmetic(self) -> str:
        """The budget's arithmetic, one line per step (what ``kvopt setups`` prints)."""
        m, g = self.model, self.gpu
        kvh = max(1, m.kv_heads // self.tp)
        lines = [
            f"KV per token per GPU = 2 (K, V) x {m.layers} layers x ({m.kv_heads} KV heads / "
            f"TP {self.tp} = {kvh}) x head_dim {m.head_dim} x {DTYPE_BYTES} B = "
            f"{self.kv_bytes_per_token():,} B",
            f"weights per GPU = {m.params:,} params x {DTYPE_BYTES} B / TP {self.tp} = "
            f"{self.weights_gib():.2f} GiB",
            f"KV memory per GPU = {self.memory_fraction:g} x {g.memory_gib:g} GiB - "
            f"{self.weights_gib():.2f} - {self.activation_reserve_gib:g} (activations) = "
            f"{self.kv_gib():.2f} GiB",
            f"M = floor({self.kv_gib():.2f} GiB / ({BLOCK_SIZE} x {self.kv_bytes_per_token():,}"
            f" B)) x {BLOCK_SIZE} = {self.rule_memory():,} tokens",
        ]
        if self.stated_memory is not None:
            lines.append(f"M = {self.stated_memory:,} as the paper states it (kept; the "
                         "rule above is for comparison)")  # fmt: skip
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        tm = self.time_model
        assert tm is not None
        return {
            "name": self.name,
            "memory": self.memory,
            "memory_rule": self.rule_memory(),
            "memory_stated": self.stated_memory is not None,
            "max_batch": self.max_batch,
            "model": {"name": self.model.name, "layers": self.model.layers,
                      "hidden": self.model.hidden, "heads": self.model.heads,
                      "kv_heads": self.model.kv_heads, "head_dim": self.model.head_dim,
                      "intermediate": self.model.intermediate, "vocab": self.model.vocab,
                      "params": self.model.params, "source": self.model.source},
            "gpu": {"name": self.gpu.name, "memory_gib": self.gpu.memory_gib,
                    "bandwidth": self.gpu.bandwidth, "flops": self.gpu.flops},
            "tp": self.tp,
            "memory_fraction": self.memory_fraction,
            "activation_reserve_gib": self.activation_reserve_gib,
            "arithmetic": self.arithmetic().split("\n"),
            "time_model": tm.coefficients(),
            "time_model_name": tm.name,
            "time_model_source": tm.source,
            "time_model_error": tm.fit_error,
            "source": self.source,
        }  # fmt: skip


def roofline(model: ModelConfig, gpu: GPU, tp: int = 1, *, eta_bw: float = ETA_BW,
             eta_flops: float = ETA_FLOPS, eta_q: float = ETA_PREFILL_ATTENTION,
             name: str = "custom") -> TimeModel:  # fmt: skip
    """The roofline time model of ``model`` on ``tp`` × ``gpu`` (module docstring, term by term)."""
    bw, fl = gpu.bandwidth * eta_bw, gpu.flops * eta_flops
    kvh = max(1, model.kv_heads // tp)
    weights = model.params * DTYPE_BYTES / tp
    head = model.vocab * model.hidden
    c0 = weights / bw
    per_token_ar = 0.0
    if tp > 1:
        c0 += 2 * model.layers * ALLREDUCE_LATENCY
        per_token_ar = (2 * model.layers * model.hidden * DTYPE_BYTES * 2 * (tp - 1) / tp
                        / ALLREDUCE_BUS_BANDWIDTH)  # fmt: skip
    c_b = 2 * (model.layers * model.layer_params + head) / tp / fl + per_token_ar
    c_p = 2 * model.layers * model.layer_params / tp / fl + per_token_ar
    c_k = 2 * model.layers * kvh * model.head_dim * DTYPE_BYTES / bw
    c_q = 2 * model.layers * model.heads * model.head_dim / tp / (gpu.flops * eta_q)
    src = (f"roofline of {model.name} on {tp} x {gpu.name} (kvopt.serving.setups.roofline: "
           f"eta_bw {eta_bw:g}, eta_flops {eta_flops:g}, eta_q {eta_q:g})")  # fmt: skip
    return TimeModel(c0=c0, c_b=c_b, c_k=c_k, c_p=c_p, c_q=c_q, name=name, source=src,
                     fit_error="a roofline, not fitted to measurements of this case")  # fmt: skip


_VLLM = ("vLLM defaults (gpu_memory_utilization 0.9, max_num_seqs 256, block size 16, BF16); "
         "budget by vLLM's determine_num_available_blocks")  # fmt: skip
_A100_80 = GPUS["a100-80gb"]
#: The presets of SPEC §10.1 (names fixed); their time models are ``timemodel.PRESETS[name]``.
SETUPS: Mapping[str, Setup] = {
    s.name: s
    for s in (
        Setup("jaillet-llama2-70b-2xa100", MODELS["llama-2-70b"], _A100_80, tp=2,
              max_batch=None, stated_memory=16492,
              time_model=TIME_MODELS["jaillet-llama2-70b-2xa100"],
              source="Jaillet et al. 2025 §5.2 (arXiv 2502.07115): Llama-2-70B on two A100s, "
                     "M = 16,492 tokens as stated; no cap"),
        Setup("vllm-llama3.1-8b-a100-80gb", MODELS["llama-3.1-8b"], _A100_80, tp=1,
              time_model=TIME_MODELS["vllm-llama3.1-8b-a100-80gb"],
              source="Kong et al. 2026 (arXiv 2606.22327) testbed: Llama-3.1-8B on one "
                     "A100-80GB; " + _VLLM),
        Setup("vllm-llama3.1-70b-8xa100-80gb", MODELS["llama-3.1-70b"], _A100_80, tp=8,
              time_model=TIME_MODELS["vllm-llama3.1-70b-8xa100-80gb"],
              source="Kong et al. 2026 (arXiv 2606.22327) testbed: Llama-3.1-70B on eight "
                     "A100-80GB, tensor parallel 8; " + _VLLM),
    )
}  # fmt: skip

_SETUP_KEYS = {"name", "model", "config", "gpu", "tp", "memory_fraction",
               "activation_reserve_gib", "max_batch", "time_model", "memory", "source"}  # fmt: skip
_MODEL_KEYS = set(_HF_NAME.values()) | {"head_dim", "tie_word_embeddings", "name"}
_GPU_KEYS = {"name", "memory_gib", "bandwidth", "flops"}


def get_setup(spec: str | Mapping[str, Any] | Setup, source: str = "setup",
              base: str = "") -> Setup:  # fmt: skip
    """A preset's name, a ``[setup]`` table, or a setup; errors are one line naming the field.

    A table: ``name``; the model as ``model = "llama-3.1-8b"`` (a known model), an inline
    table of Hugging Face config fields (``[setup.model]``), or ``config = "path/config.json"``
    (relative to ``base``); ``gpu`` a known name (:data:`GPUS`) or ``{memory_gib, bandwidth,
    flops}``; ``tp`` (1); ``memory_fraction`` (0.9); ``activation_reserve_gib`` (2);
    ``max_batch`` (absent: no cap); ``memory`` (a stated ``M``, kept as the paper states it);
    ``time_model`` (a preset name or ``"c0=…,c_k=…"``; absent: the roofline).
    """
    if isinstance(spec, Setup):
        return spec
    if isinstance(spec, str):
        if spec not in SETUPS:
            raise InputError(f"unknown setup {spec!r} (presets: {', '.join(SETUPS)}; or a "
                             "[setup] table)" + did_you_mean(spec, SETUPS), source=source)  # fmt: skip
        return SETUPS[spec]
    if not isinstance(spec, Mapping):
        raise InputError("must be a preset name or a table", source=source)
    d = dict(spec)
    unknown = sorted(set(d) - _SETUP_KEYS)
    if unknown:
        raise InputError(f"unknown key (allowed: {', '.join(sorted(_SETUP_KEYS))})"
                         + did_you_mean(unknown[0], _SETUP_KEYS), field=f"setup.{unknown[0]}",
                         source=source)  # fmt: skip
    name = d.get("name", "custom-setup")
    if not isinstance(name, str) or not name:
        raise InputError(f"must be a non-empty string, got {name!r}", field="setup.name",
                         source=source)  # fmt: skip
    model = _model(d, source, base)
    gpu = _gpu(d.get("gpu"), source)
    tm = None
    if "time_model" in d:
        tm = parse_time_model(d["time_model"], source=f"{source}: setup.time_model")
    try:
        return Setup(name, model, gpu, tp=d.get("tp", 1),
                     memory_fraction=d.get("memory_fraction", 0.9),
                     activation_reserve_gib=d.get("activation_reserve_gib", 2.0),
                     max_batch=d.get("max_batch"), time_model=tm,
                     source=str(d.get("source", "given in the experiment file")),
                     stated_memory=d.get("memory"))  # fmt: skip
    except InputError as err:
        raise InputError(err.rule, field=f"setup.{err.field}", source=source) from None


def apply_setup(workload: Mapping[str, Any], setup: Setup, source: str) -> dict[str, Any]:
    """The ``[workload]`` table with the setup's ``memory`` and ``max_batch`` (SPEC §10.1).

    A ``memory`` or ``max_batch`` of the workload next to a setup is an error (one line
    naming it): the setup's name stands for its budget and cap, so an experiment that
    names it must run them (a variant is a ``[setup]`` table of its own).  An explicit
    ``time_model`` next to the setup, in contrast, overrides the setup's (say ``unit``, to
    count rounds at the setup's budget).
    """
    for key in ("memory", "max_batch"):
        if key in workload:
            raise InputError(f"given next to setup {setup.name!r}, which sets it "
                             f"({key} = {getattr(setup, key)}); remove one",
                             field=f"workload.{key}", source=source)  # fmt: skip
    out = dict(workload, memory=setup.memory)
    if setup.max_batch is not None:
        out["max_batch"] = setup.max_batch
    return out


def _model(d: Mapping[str, Any], source: str, base: str) -> ModelConfig:
    import os

    if ("model" in d) == ("config" in d):
        raise InputError("give the model as model = NAME or a table of config fields, or as "
                         "config = \"path/config.json\" (one of them)", field="setup.model",
                         source=source)  # fmt: skip
    if "config" in d:
        path = d["config"]
        if not isinstance(path, str):
            raise InputError("must be a path", field="setup.config", source=source)
        if base and not os.path.isabs(path):
            path = os.path.join(base, path)
        try:
            with open(path, encoding="utf-8") as fh:
                cfg = json.load(fh)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read a JSON config ({exc.__class__.__name__})",
                             field="setup.config", source=f"{source}: {path}") from None  # fmt: skip
        if not isinstance(cfg, Mapping):
            raise InputError("must be a JSON object", field="setup.config", source=path)
        return ModelConfig.from_hf(cfg, name=os.path.basename(os.path.dirname(
            os.path.abspath(path))) or "model", source=f"{source}: setup.config {path}")  # fmt: skip
    m = d["model"]
    if isinstance(m, str):
        if m not in MODELS:
            raise InputError(f"unknown model {m!r} (known: {', '.join(MODELS)}; or a table of "
                             "Hugging Face config fields, or config = PATH)",
                             field="setup.model", source=source)  # fmt: skip
        return MODELS[m]
    if not isinstance(m, Mapping):
        raise InputError("must be a model name or a table", field="setup.model", source=source)
    unknown = sorted(set(m) - _MODEL_KEYS)
    if unknown:
        raise InputError(f"unknown config field (allowed: {', '.join(sorted(_MODEL_KEYS))})",
                         field=f"setup.model.{unknown[0]}", source=source)  # fmt: skip
    try:
        return ModelConfig.from_hf(m, name=str(m.get("name", "model")), source="setup.model")
    except InputError as err:
        raise InputError(err.rule, field=f"setup.model.{err.field}", source=source) from None


def _gpu(g: Any, source: str) -> GPU:
    if isinstance(g, str):
        if g.lower() not in GPUS:
            raise InputError(f"unknown GPU {g!r} (known: {', '.join(GPUS)}; or a table "
                             "{memory_gib, bandwidth, flops})", field="setup.gpu", source=source)  # fmt: skip
        return GPUS[g.lower()]
    if not isinstance(g, Mapping):
        raise InputError("missing: a known GPU name or a table {memory_gib, bandwidth, flops}",
                         field="setup.gpu", source=source)  # fmt: skip
    unknown = sorted(set(g) - _GPU_KEYS)
    missing = sorted({"memory_gib", "bandwidth", "flops"} - set(g))
    if unknown or missing:
        key = unknown[0] if unknown else missing[0]
        raise InputError("unknown field" if unknown else "missing", field=f"setup.gpu.{key}",
                         source=source)  # fmt: skip
    try:
        return GPU(str(g.get("name", "gpu")), g["memory_gib"], g["bandwidth"], g["flops"],
                   source="given in the experiment file")  # fmt: skip
    except InputError as err:
        raise InputError(err.rule, field=f"setup.{err.field}", source=source) from None


__all__ = [
    "GPU",
    "GPUS",
    "MODELS",
    "SETUPS",
    "ModelConfig",
    "Setup",
    "apply_setup",
    "get_setup",
    "roofline",
]
