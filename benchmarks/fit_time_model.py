"""Fit the ``llama2-70b-a100-tp2`` time model (SPEC §10) to Vidur's published A100 profiles.

Data: ``instances/profiles/vidur-llama2-70b-a100/`` — the tensor-parallel-2 rows of
``data/profiling/compute/a100/meta-llama/Llama-2-70b-hf/mlp.csv`` and the 2-worker
all-reduce rows of ``data/profiling/network/a100_pairwise_nvlink/all_reduce.csv`` from
microsoft/vidur (commit 7d47513, MIT licence, shipped beside the data).

What is fitted.  Vidur times one transformer block as the sum of its operations
(``vidur/entities/execution_time.py``: pre/post projections, rope, two norms, MLP
up/down/activation, the residual add, and two tensor-parallel all-reduces) plus the
attention kernels.  The attention profile (``attention.csv``) is **not** in the copy we
could read (the snapshot lists it but holds no content), so the fit covers everything
but the attention kernels: a round that processes ``N`` tokens (decode tokens plus
prefilled prompt tokens) lasts ``80 · block(N)`` (Llama-2-70B has 80 blocks), with each
all-reduce of ``N · 8192 · 2`` bytes (Vidur's own size rule, fp16 hidden states)
interpolated in the all-reduce profile (median, as Vidur's predictor uses).  A least-squares
line ``d = c0 + β·N`` over the profiled ``N = 1 … 4096`` gives ``c0`` and ``c_b = c_p = β``
(each running attempt decodes one token; a starting one also prefills its ``s_i``
prompt tokens).  ``c_k = c_q = 0``: the data that would fit the KV-memory and the
quadratic prefill terms is the missing attention profile, so the preset states that it
leaves them out rather than inventing them.

Run: ``python benchmarks/fit_time_model.py`` prints the coefficients (the preset in
``kvopt/serving/timemodel.py`` holds them, rounded to 4 significant digits; the test
``tests/test_timemodel.py`` re-runs this fit) and the fit's error.
"""

from __future__ import annotations

import csv
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "instances", "profiles", "vidur-llama2-70b-a100")
LAYERS = 80
HIDDEN = 8192
OPS = (
    "input_layernorm",
    "attn_pre_proj",
    "attn_rope",
    "attn_post_proj",
    "post_attention_layernorm",
    "mlp_up_proj",
    "mlp_act",
    "mlp_down_proj",
    "add",
)


def load(data: str = DATA) -> tuple[np.ndarray, np.ndarray]:
    """Tokens per round ``N`` and the round's seconds (without attention kernels)."""
    with open(os.path.join(data, "all_reduce_2.csv"), newline="") as fh:
        ar = sorted((int(r["size"]), float(r["time_stats.all_reduce.median"]))
                    for r in csv.DictReader(fh))  # fmt: skip
    sizes = np.array([s for s, _ in ar], dtype=float)
    ar_ms = np.array([t for _, t in ar])
    per_n: dict[int, list[float]] = {}
    with open(os.path.join(data, "mlp_tp2.csv"), newline="") as fh:
        for r in csv.DictReader(fh):
            n = int(r["num_tokens"])
            ms = sum(float(r[f"time_stats.{op}.mean"]) for op in OPS)
            ms += 2 * float(np.interp(n * HIDDEN * 2, sizes, ar_ms))
            per_n.setdefault(n, []).append(ms)
    ns = np.array(sorted(per_n), dtype=float)
    secs = np.array([LAYERS * float(np.mean(per_n[int(n)])) / 1000.0 for n in ns])
    return ns, secs


def fit(data: str = DATA) -> dict[str, float]:
    """Least-squares ``c0 + β·N``; the errors are relative to the profiled round time."""
    ns, secs = load(data)
    a = np.vstack([np.ones_like(ns), ns]).T
    (c0, beta), *_ = np.linalg.lstsq(a, secs, rcond=None)
    pred = c0 + beta * ns
    rel = np.abs(pred - secs) / secs
    small = ns <= 512
    return {
        "c0": float(c0),
        "c_b": float(beta),
        "c_p": float(beta),
        "points": int(ns.size),
        "mean_rel_error": float(rel.mean()),
        "max_rel_error": float(rel.max()),
        "mean_rel_error_n_le_512": float(rel[small].mean()),
        "max_rel_error_n_le_512": float(rel[small].max()),
        "rmse_seconds": float(np.sqrt(np.mean((pred - secs) ** 2))),
    }


def main() -> int:
    res = fit()
    for k, v in res.items():
        print(f"{k:26s} {v:.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
