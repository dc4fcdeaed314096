"""Round times from GenZ (``genz-llm``, MIT) for ``benchmarks/fit_setups.py --genz PYTHON``.

Run with the Python of a separate environment that has ``genz-llm`` (kvopt never imports
it; the fitted coefficients ship in ``kvopt/serving/timemodel.py``)::

    python3 -m venv /work/genz-venv && /work/genz-venv/bin/pip install genz-llm
    /work/genz-venv/bin/python benchmarks/genz_rounds.py > rounds.jsonl

Each line is one round of one model: ``{"case", "b", "K", "P", "Q", "seconds",
"attention_seconds"}`` in the terms of SPEC §10 (``b`` running attempts holding ``K``
tokens, prefilling ``P = Σ s`` and ``Q = Σ s²``).  A decode round of ``b`` requests with
``c`` tokens of context each is GenZ's ``chunked_moddeling`` with ``decode_kv_sizes =
[c] * b``; a prefill round of one prompt of ``s`` tokens is ``prefill_kv_sizes = [(0,
s)]``; a round whose KV cache does not fit beside the weights is skipped (stderr).
GenZ models peak efficiency (``system_eff = 1``) on ``A100_80GB_GPU``.
"""

from __future__ import annotations

import json
import sys
import warnings

#: (case name, GenZ model name, tensor parallelism)
CASES = (
    ("llama2-70b-tp2", "llama2_70b", 2),
    ("llama3-8b-tp1", "llama3_8b", 1),
    ("llama3.1-70b-tp8", "meta-llama/Llama-3.1-70B", 8),
)
DECODE = [(b, c) for b in (1, 8, 32, 64, 128, 256) for c in (128, 512, 1700)]
PREFILL = (128, 512, 2048, 4096)


def main() -> int:
    warnings.filterwarnings("ignore")
    from GenZ.LLM_inference.llm_chunked import chunked_moddeling

    for case, model, tp in CASES:
        rounds = [(b, c, 0) for b, c in DECODE] + [(0, 0, s) for s in PREFILL]
        for b, c, s in rounds:
            try:
                out = chunked_moddeling(
                    model=model,
                    prefill_kv_sizes=[(0, s)] if s else [],
                    decode_kv_sizes=[c] * b,
                    system_name="A100_80GB_GPU",
                    tensor_parallel=tp,
                )
            except ValueError as exc:  # the KV cache does not fit beside the weights
                print(f"{case} b={b} c={c} s={s}: skipped ({str(exc).splitlines()[0]})",
                      file=sys.stderr)  # fmt: skip
                continue
            br = out["Runtime_breakdown"]  # a dict subclass: item access
            row = {
                "case": case,
                # the prefilled attempt also runs (b counts it; K holds its prompt + 1)
                "b": b + (1 if s else 0),
                "K": b * (c + 1) + (s + 1 if s else 0),
                "P": s,
                "Q": s * s,
                "seconds": float(out["Latency"]) / 1000.0,
                # logit + attend kernels (GenZ gives no breakdown for some rounds)
                "attention_seconds": float(br.LA_layers) / 1000.0 if br is not None else None,
            }
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
