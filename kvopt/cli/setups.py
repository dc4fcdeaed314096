"""``kvopt setups [--json]`` — the serving setups (SPEC §10.1) with their KV budget's arithmetic.

Text: for each preset its ``M``, the cap, the budget's arithmetic line by line (vLLM's
rule, or the paper's stated ``M``), the time model and the sources.

JSON: one object (SPEC §4: exactly one object on stdout), ``{"setups": [...]}``, whose
list holds one object per preset (SPEC §10.1's "list of objects", wrapped so that the
output is one object as every other ``--json``, as ``kvopt time-models`` does): ``name``,
``memory`` (``M`` in tokens), ``memory_rule`` (the engine rule's ``M``), ``memory_stated``
(true when ``memory`` is the paper's own), ``max_batch`` (``null``: no cap), ``model``,
``gpu``, ``tp``, ``memory_fraction``, ``activation_reserve_gib``, ``arithmetic`` (the
lines of the text), ``time_model`` (``{"c0", "c_b", "c_k", "c_p", "c_q"}``),
``time_model_name`` (a value of ``--time-model``), ``time_model_source``,
``time_model_error`` and ``source``.  A setup's name is a value of ``--time-model``
(``simulate``, ``compare``), of an experiment's ``setup`` and of ``kvopt gen workload
--param setup=NAME``.
"""

from __future__ import annotations

from .common import emit_json


def add_parser(sub) -> None:
    p = sub.add_parser(
        "setups",
        help="list the serving setups: KV budget M (with its arithmetic), cap, time model",
        description="List the serving setups of SPEC §10.1: a model on GPUs under an engine "
        "configuration, giving the KV budget M (vLLM's rule: memory fraction x GPU memory - "
        "weights per GPU - activation reserve, over the KV bytes per token per GPU; or the "
        "paper's stated M), the batch cap and a time model with attention.  A setup's name is "
        "accepted by --time-model, by an experiment's setup = NAME and by kvopt gen workload "
        "--param setup=NAME.",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..serving.setups import SETUPS
    from ..serving.timemodel import COEFFICIENTS

    if args.json:
        emit_json({"setups": [s.to_dict() for s in SETUPS.values()]})
        return 0
    for s in SETUPS.values():
        tm = s.time_model
        assert tm is not None
        cap = "none" if s.max_batch is None else f"{s.max_batch}"
        stated = " (as the paper states it)" if s.stated_memory is not None else ""
        print(f"{s.name}\n  M = {s.memory:,} tokens{stated}; max_batch {cap}")
        print(f"  model {s.model.name} ({s.model.source}); {s.tp} x {s.gpu.name}, memory "
              f"fraction {s.memory_fraction:g}")  # fmt: skip
        for line in s.arithmetic().split("\n"):
            print(f"    {line}")
        coef = "  ".join(f"{k}={getattr(tm, k):.4g}" for k in COEFFICIENTS)
        print(f"  time model {tm.name}: {coef}")
        if tm.fit_error:
            print(f"    error: {tm.fit_error}")
        print(f"  source: {s.source}")
    return 0
