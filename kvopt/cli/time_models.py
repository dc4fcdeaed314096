"""``kvopt time-models [--json]`` — the time-model presets with their sources (SPEC §10).

JSON: ``{"time_models": [{"name", "c0", "c_b", "c_k", "c_p", "c_q", "source",
"fit_error"?}, …]}``.  Any of them is a value of ``--time-model`` (``simulate``,
``compare``) and of an experiment's ``time_model``; so is ``c0=…,c_b=…,…``.
"""

from __future__ import annotations

from .common import emit_json


def add_parser(sub) -> None:
    p = sub.add_parser(
        "time-models",
        help="list the time-model presets (seconds per round) with their sources",
        description="List the time models of SPEC §10: each round lasts "
        "c0 + c_b·b + c_k·K + c_p·P + c_q·Q seconds (b attempts running, K the memory they "
        "hold, P and Q = Σ s and Σ s² of the prompts prefilled in it).  --time-model takes a "
        "preset's name or c0=…,c_b=…,c_k=…,c_p=…,c_q=….",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..serving.timemodel import COEFFICIENTS, PRESETS

    if args.json:
        emit_json({"time_models": [m.to_dict() for m in PRESETS.values()]})
        return 0
    for m in PRESETS.values():
        coef = "  ".join(f"{k}={getattr(m, k):.4g}" for k in COEFFICIENTS)
        print(f"{m.name}\n  {coef}\n  source: {m.source}")
        if m.fit_error:
            print(f"  fit error: {m.fit_error}")
    return 0
