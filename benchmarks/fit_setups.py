"""The time models of the serving setups (SPEC §10.1): calibration, coefficients, errors, comparison.

Prints, in order:

1. **Calibration** of the roofline in :mod:`kvopt.serving.setups` on Vidur's measured
   A100 profile of Llama-2-70B, TP 2 (``instances/profiles/vidur-llama2-70b-a100``, MIT):
   the HBM efficiency ``η_bw`` (the four GEMMs' weight bytes over their time at one
   token), the FLOP efficiency ``η_f`` (their FLOPs over their time at 4,096 tokens), and
   the all-reduce latency and bus bandwidth (a least-squares line through the 2-GPU NVLink
   profile over the sizes a round of ≤ 4,096 tokens sends, ``N · 8192 · 2`` bytes).
2. **The presets' coefficients**: the roofline of each setup (the Jaillet setup keeps
   the measured ``c0, c_b, c_p`` of ``llama2-70b-a100-tp2`` and takes ``c_k, c_q`` from
   the roofline) next to what ``kvopt/serving/timemodel.py`` ships (4 significant digits).
3. **The roofline against the measurements** (the one case with both): the non-attention
   part of the Llama-2-70B/TP2 roofline (80 layers, no LM head) against Vidur's profiled
   block times, ``N = 1 … 4,096`` tokens per round: mean and max relative error; the same
   for the linear Vidur fit (``benchmarks/fit_time_model.py``).
4. With ``--genz [FILE]`` (the output of ``benchmarks/genz_rounds.py``, run in a separate
   environment with ``genz-llm``; without FILE the copy shipped in
   ``instances/profiles/genz-a100-rounds/``): for each case, each shipped preset's error against
   GenZ's round times, a non-negative least-squares fit of the five coefficients to
   GenZ's rounds with its error, and for Llama-2-70B a table of rounds under the measured
   preset, the roofline and GenZ.  GenZ assumes peak efficiency; kvopt ships the
   roofline with measured efficiencies, so a ratio above 1 against GenZ is expected.

Run: ``python benchmarks/fit_setups.py [--genz [rounds.jsonl]]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from kvopt.serving.setups import (  # noqa: E402
    ALLREDUCE_BUS_BANDWIDTH,
    ALLREDUCE_LATENCY,
    ETA_BW,
    ETA_FLOPS,
    GPUS,
    MODELS,
    SETUPS,
    roofline,
)
from kvopt.serving.timemodel import COEFFICIENTS, PRESETS, TimeModel  # noqa: E402

DATA = os.path.join(HERE, "..", "instances", "profiles", "vidur-llama2-70b-a100")
GENZ = os.path.join(HERE, "..", "instances", "profiles", "genz-a100-rounds", "rounds.jsonl")
GEMMS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")
TP = 2
A100 = GPUS["a100-80gb"]
L2 = MODELS["llama-2-70b"]


def _profile() -> dict[int, list[dict[str, float]]]:
    rows: dict[int, list[dict[str, float]]] = {}
    with open(os.path.join(DATA, "mlp_tp2.csv"), newline="") as fh:
        for r in csv.DictReader(fh):
            rows.setdefault(int(r["num_tokens"]), []).append(
                {k: float(v) for k, v in r.items() if k.startswith("time_stats")}
            )
    return rows


def _gemm_seconds(rows, n: int) -> float:
    return float(np.mean([sum(r[f"time_stats.{g}.mean"] for g in GEMMS) for r in rows[n]])) / 1e3


def calibrate() -> dict[str, float]:
    """η_bw, η_f, all-reduce latency and bus bandwidth from Vidur's profiles (module doc)."""
    rows = _profile()
    gemm_params = L2.layer_params - 2 * L2.hidden  # the layer without its two norms
    eta_bw = gemm_params * 2 / TP / _gemm_seconds(rows, 1) / A100.bandwidth
    eta_f = 2 * 4096 * gemm_params / TP / _gemm_seconds(rows, 4096) / A100.flops
    with open(os.path.join(DATA, "all_reduce_2.csv"), newline="") as fh:
        ar = [(float(r["size"]), float(r["time_stats.all_reduce.median"]) / 1e3)
              for r in csv.DictReader(fh)]  # fmt: skip
    s = np.array([a for a, _ in ar])
    t = np.array([b for _, b in ar])
    keep = s <= 4096 * L2.hidden * 2
    a = np.vstack([np.ones(keep.sum()), s[keep]]).T
    (lat, inv), *_ = np.linalg.lstsq(a, t[keep], rcond=None)
    return {"eta_bw": eta_bw, "eta_flops": eta_f, "allreduce_latency": float(lat),
            "allreduce_bus_bandwidth": float(1 / inv)}  # fmt: skip


def presets() -> dict[str, TimeModel]:
    """The coefficients each setup's preset should hold (before rounding)."""
    out = {}
    for name, s in SETUPS.items():
        rl = roofline(s.model, s.gpu, s.tp, name=name)
        if name == "jaillet-llama2-70b-2xa100":
            vidur = PRESETS["llama2-70b-a100-tp2"]
            rl = TimeModel(vidur.c0, vidur.c_b, rl.c_k, vidur.c_p, rl.c_q, name=name)
        out[name] = rl
    return out


def roofline_vs_vidur() -> dict[str, float]:
    """The roofline's non-attention part (80 layers, no LM head) against Vidur's block times."""
    sys.path.insert(0, HERE)
    import fit_time_model

    ns, measured = fit_time_model.load()
    bw, fl = A100.bandwidth * ETA_BW, A100.flops * ETA_FLOPS
    w = L2.layers * L2.layer_params * 2 / TP
    c0 = w / bw + 2 * L2.layers * ALLREDUCE_LATENCY
    beta = 2 * L2.layers * L2.layer_params / TP / fl + (
        2 * L2.layers * L2.hidden * 2 * 2 * (TP - 1) / TP / ALLREDUCE_BUS_BANDWIDTH
    )
    pred = c0 + beta * ns
    rel = np.abs(pred - measured) / measured
    lin = fit_time_model.fit()
    return {"roofline_mean": float(rel.mean()), "roofline_max": float(rel.max()),
            "roofline_at_1": float(pred[0] / measured[0]),
            "roofline_at_4096": float(pred[-1] / measured[-1]),
            "vidur_fit_mean": lin["mean_rel_error"], "vidur_fit_max": lin["max_rel_error"]}  # fmt: skip


_GENZ_CASE = {
    "llama2-70b-tp2": ("jaillet-llama2-70b-2xa100", "llama2-70b-a100-tp2"),
    "llama3-8b-tp1": ("vllm-llama3.1-8b-a100-80gb",),
    "llama3.1-70b-tp8": ("vllm-llama3.1-70b-8xa100-80gb",),
}


def _duration(tm: TimeModel, r: dict) -> float:
    return tm.duration(r["b"], r["K"], r["P"], r["Q"])


def _nonnegative_lstsq(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares with every coefficient ≥ 0 and the first (c0) kept: the best of the
    unconstrained fits over every subset of the other columns whose solution is ≥ 0."""
    best, best_res = None, np.inf
    k = a.shape[1]
    for mask in range(1 << (k - 1)):
        cols = [0] + [j + 1 for j in range(k - 1) if mask >> j & 1]
        x, *_ = np.linalg.lstsq(a[:, cols], y, rcond=None)
        if (x < 0).any():
            continue
        res = float(np.sum((a[:, cols] @ x - y) ** 2))
        if res < best_res:
            best_res, best = res, np.zeros(k)
            best[cols] = x
    assert best is not None
    return best


def genz_comparison(path: str = GENZ) -> dict[str, dict]:
    """Per GenZ case: each preset's ratio to GenZ (median, min, max), a fit of the five
    terms to GenZ's rounds (coefficients; mean and max relative error), GenZ's attention share."""
    with open(path) as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    out: dict[str, dict] = {}
    for case, names in _GENZ_CASE.items():
        rs = [r for r in rows if r["case"] == case]
        if not rs:
            continue
        g = np.array([r["seconds"] for r in rs])
        ratios = {}
        for name in names:
            ratio = np.array([_duration(PRESETS[name], r) for r in rs]) / g
            ratios[name] = (float(np.median(ratio)), float(ratio.min()), float(ratio.max()))
        a = np.array([[1.0, r["b"], r["K"], r["P"], r["Q"]] for r in rs])
        scale = a.max(axis=0)
        x = _nonnegative_lstsq(a / scale, g) / scale
        rel = np.abs(a @ x - g) / g
        share = [r["attention_seconds"] / r["seconds"] for r in rs if r["attention_seconds"]]
        out[case] = {"rounds": rs, "ratios": ratios, "fit": dict(zip(COEFFICIENTS, map(float, x))),
                     "fit_error": (float(rel.mean()), float(rel.max())),
                     "attention_share": (min(share), max(share)) if share else None}  # fmt: skip
    return out


def print_genz(path: str) -> None:
    for case, res in genz_comparison(path).items():
        rs = res["rounds"]
        print(f"\nGenZ {case}: {len(rs)} rounds (decode b=1..256 x context 128..1700; "
              "prefill 128..4096)")  # fmt: skip
        for name, (med, lo, hi) in res["ratios"].items():
            print(f"  preset {name}: preset/GenZ ratio median {med:.2f}, range {lo:.2f}-{hi:.2f}")
        coef = ", ".join(f"{k}={v:.4g}" for k, v in res["fit"].items())
        mean, mx = res["fit_error"]
        print(f"  least-squares fit to GenZ: {coef}; error mean {mean:.1%}, max {mx:.1%}")
        if res["attention_share"]:
            lo, hi = res["attention_share"]
            print(f"  GenZ attention share of a round: {lo:.0%}-{hi:.0%}")
        if case == "llama2-70b-tp2":
            rl = roofline(L2, A100, TP)
            measured = PRESETS[_GENZ_CASE[case][0]]
            print("  rounds (ms):      b       K       P   measured+attn  roofline    GenZ")
            for r in rs:
                if r["b"] in (1, 64, 256) and r["K"] in (129, 64 * 513, 256 * 1701) or r["P"]:
                    print(f"  {'':14s}{r['b']:4d} {r['K']:7d} {r['P']:7d} "
                          f"{_duration(measured, r) * 1e3:12.1f} "
                          f"{_duration(rl, r) * 1e3:9.1f} {r['seconds'] * 1e3:8.1f}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--genz", metavar="FILE", nargs="?", const=GENZ,
                    help="compare with GenZ's rounds (benchmarks/genz_rounds.py's output; "
                    "default: the shipped instances/profiles/genz-a100-rounds/rounds.jsonl)")  # fmt: skip
    args = ap.parse_args(argv)
    cal = calibrate()
    print("calibration on Vidur's Llama-2-70B/TP2 A100 profile:")
    print(f"  eta_bw {cal['eta_bw']:.3f} (shipped {ETA_BW}), eta_flops {cal['eta_flops']:.3f} "
          f"(shipped {ETA_FLOPS}), all-reduce latency {cal['allreduce_latency'] * 1e6:.1f} us "
          f"(shipped {ALLREDUCE_LATENCY * 1e6:.1f}), bus bandwidth "
          f"{cal['allreduce_bus_bandwidth'] / 1e9:.0f} GB/s (shipped "
          f"{ALLREDUCE_BUS_BANDWIDTH / 1e9:.0f})")  # fmt: skip
    print("\npresets (computed / shipped):")
    for name, tm in presets().items():
        shipped = PRESETS[name]
        print(f"  {name}  M = {SETUPS[name].memory:,}")
        for k in COEFFICIENTS:
            print(f"    {k:4s} {getattr(tm, k):.4g} / {getattr(shipped, k):.4g}")
        print(f"    attention at M: c_k*M = {shipped.c_k * SETUPS[name].memory * 1e3:.2f} ms "
              f"per round; c0 = {shipped.c0 * 1e3:.2f} ms")  # fmt: skip
    rv = roofline_vs_vidur()
    print("\nroofline (non-attention part) vs Vidur's measured Llama-2-70B/TP2 blocks, "
          "N = 1..4096 tokens per round:")  # fmt: skip
    print(f"  roofline: mean {rv['roofline_mean']:.1%}, max {rv['roofline_max']:.1%} relative; "
          f"roofline/measured {rv['roofline_at_1']:.2f} at N = 1, {rv['roofline_at_4096']:.2f} "
          f"at N = 4096")  # fmt: skip
    print(f"  linear Vidur fit (llama2-70b-a100-tp2): mean {rv['vidur_fit_mean']:.1%}, "
          f"max {rv['vidur_fit_max']:.1%}")  # fmt: skip
    if args.genz:
        print_genz(args.genz)
    return 0


if __name__ == "__main__":
    sys.exit(main())
