"""Adversarial search for the worst certified ratio of a policy (``kvopt search``, SPEC §4, §8).

:func:`search` is the one entry point (the command line and notebooks call
it).  A campaign proposes candidates with a strategy
(:mod:`kvopt.campaign.strategies`) inside the policy's class, evaluates them —
simulate, screen with cheap bounds, solve exactly only what could beat the
best (:mod:`kvopt.campaign.evaluate`) — logs every evaluation and keeps the
best record (:mod:`kvopt.campaign.runner`).  :func:`shrink` makes a worst
case small (:mod:`kvopt.campaign.shrink`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..certify import CERTIFY_SECONDS
from ..errors import InputError, did_you_mean
from ..space import Space, TypedSpace, space_from_dict
from .certify import check_time_limit
from .log import read_history, read_log
from .runner import record_from_log, run_campaign
from .strategies import STRATEGIES, SearchContext, make_strategy
from .types import (
    Best,
    CampaignHeader,
    CampaignResult,
    Evaluation,
    ExactResult,
    ExactStatus,
    OptStatus,
    Outcome,
    StopReason,
)

OBJECTIVES = ("total", "makespan", "latency")


def policy_space(policy: str, *, n_max: int = 8, memory_max: int = 48) -> Space:
    """A default space inside ``policy``'s registry class, for search.

    The registry declares it (:meth:`kvopt.policy.PolicySpec.default_space`):
    offline policies get all jobs at round 0, ``rect`` small jobs prompt-heavy,
    ``response`` every job response-heavy, ``gsa``/``gba`` identical prompts;
    online policies get arrivals.  Responses are capped at 16 so that exact
    Opt stays cheap; widen with :meth:`Space.replace`.
    """
    from ..policy import get_policy

    return get_policy(policy).default_space(n_max=n_max, memory_max=memory_max)


def _space_fields(space: Mapping[str, Any] | None) -> dict[str, Any]:
    """``space`` as fields for :func:`~kvopt.space.space_from_dict`; errors name ``--space``."""
    if space is None:
        return {}
    if not isinstance(space, Mapping):
        raise InputError(f"must be a Space, a TypedSpace or a dict, got {type(space).__name__}",
                         source="--space")  # fmt: skip
    return dict(space)


def _param_without_family(fam_params: Mapping[str, Any], ref) -> str:
    """The rule broken by ``--param`` without ``--family``: in ``kvopt search`` it sets a
    family's parameter (``kvopt simulate --param`` sets the policy's), so name the option a
    policy's parameters go to, with the user's own keys when they are the policy's."""

    def text(v: Any) -> str:
        if isinstance(v, list | tuple):
            return ",".join(text(x) for x in v)
        return str(v).lower() if isinstance(v, bool) else str(v)

    mine = [k for k in fam_params if k in ref.params]
    if not mine:
        return (
            "sets a parameter of --family, and no --family is given (a policy's parameters: "
            "--policy-param KEY=VALUE, or --policy 'NAME[KEY=VALUE]')"
        )
    kv = " ".join(f"--policy-param {k}={text(fam_params[k])}" for k in mine)
    inner = ";".join(f"{k}={text(fam_params[k])}" for k in mine)
    name = ref.spec.name
    return (
        f"sets a parameter of --family, and no --family is given; {', '.join(map(repr, mine))} "
        f"{'is a parameter' if len(mine) == 1 else 'are parameters'} of the policy {name!r}: "
        f"give {'it' if len(mine) == 1 else 'them'} as {kv} (or --policy '{name}[{inner}]')"
    )


def search(
    policy: str,
    *,
    strategy: str = "anneal",
    params: Mapping[str, Any] | None = None,
    family: str | None = None,
    family_params: Mapping[str, Any] | None = None,
    space: Space | Mapping[str, Any] | None = None,
    claim: str | None = None,
    objective: str | None = None,
    budget: int | None = None,
    seconds: float | None = None,
    seed: int = 0,
    workers: int = 1,
    scheduler: str | None = None,
    out: str | os.PathLike | None = None,
    batch: int = 8,
    exact_time_limit: float = 10.0,
    options: Mapping[str, Any] | None = None,
    progress: bool | None = None,
    dask_timeout: float = 10.0,
    label: str | None = None,
    certify_seconds: float = CERTIFY_SECONDS,
) -> CampaignResult:
    """Search for instances on which ``policy`` is far from Opt; return the campaign's result.

    ``policy`` is a registry name, optionally with parameters
    (``"route[compact=true]"``, or ``params=``), or a reference to a user's policy
    (``"path/to/file.py:Class"``, ``"package.module:Class"``, an entry-point name, or the
    class itself; SPEC §4), which worker processes and Dask workers receive with its code.
    ``family`` may likewise be a reference to a user's function (``"fam.py:function"``).  ``strategy`` is one of
    :data:`STRATEGIES`; ``family``/``family_params`` draw instances from a
    ``kvopt gen`` family (lists in ``family_params`` span the ``family``
    strategy's grid); ``space`` bounds the instances (a :class:`Space` or a
    dict of its fields overriding the policy's default space); ``claim``
    restricts the search to a SPEC §7 claim's class and records its bound.
    ``budget`` counts evaluations (the whole campaign), ``seconds`` this run;
    with neither, the budget is 200.  ``workers`` local processes or a Dask
    ``scheduler`` address evaluate batches of ``batch`` candidates; every
    exact solve has ``exact_time_limit`` seconds on one thread.  ``out`` is
    the campaign folder (default ``kvopt-search/<policy>-<strategy>-s<seed>``);
    rerunning with the same folder resumes.  ``label`` names the progress bar.
    At the end, the best record's bracket is certified with an exact solve of
    at most ``certify_seconds`` (0: no certify stage; see
    :mod:`kvopt.campaign.runner`), reported apart from the search's seconds.

    >>> res = search("fcfs", budget=8, seed=1, out=tmp / "fcfs", progress=False)
    >>> res.evaluations, res.best.ratio_certified >= 1
    (8, True)
    """
    from ..claim import get_claim
    from ..policy import resolve_policy

    # ---- every input check, in one place (InputError names the option and the rule)
    ref = resolve_policy(policy, params)  # once: the header, the workers and records get it
    spec, resolved = ref.spec, dict(ref.params)
    if strategy not in STRATEGIES:
        raise InputError(
            f"unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)})", source="--strategy"
        )
    cl = get_claim(claim) if claim else None
    if cl is not None and spec.name not in cl.policies:
        raise InputError(
            f"claim {cl.id!r} is about {', '.join(cl.policies) or 'no policy'}, not {spec.name!r}",
            source="--claim",
        )
    if objective is None:
        objective = cl.objective if cl else "total"
    if objective not in OBJECTIVES:
        raise InputError(
            f"must be one of {', '.join(OBJECTIVES)}, got {objective!r}", source="--objective"
        )
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, int) or budget < 1
    ):
        raise InputError(f"must be an integer >= 1, got {budget!r}", source="--budget")
    if seconds is not None and not (
        isinstance(seconds, int | float) and seconds > 0 and math.isfinite(seconds)
    ):
        raise InputError(
            f"must be a positive number of seconds, got {seconds!r}", source="--seconds"
        )
    if budget is None and seconds is None:
        budget = 200
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"must be an integer >= 0, got {seed!r}", source="--seed")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"must be an integer >= 1, got {workers!r}", source="--workers")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise InputError(f"must be an integer >= 1, got {batch!r}", source="--batch")
    if not (exact_time_limit > 0):
        raise InputError(f"must be > 0, got {exact_time_limit!r}", source="--time-limit")
    certify_seconds = check_time_limit(certify_seconds, "--certify-seconds")
    fam_params = dict(family_params or {})
    gen = None
    if family is not None:
        from ..generators import get_generator

        gen = get_generator(family, source="--family")
        family = gen.name
        for k in fam_params:
            if k not in gen.defaults and not gen.passthrough:
                raise InputError(
                    f"unknown parameter for family {family!r} (known: {', '.join(gen.defaults)})"
                    + did_you_mean(k, gen.defaults),
                    source=f"--param {k}",
                )
        if strategy != "family" and any(isinstance(v, list | tuple) for v in fam_params.values()):
            raise InputError("list values are for --strategy family", source="--param")
    elif fam_params:
        raise InputError(_param_without_family(fam_params, ref), source="--param")
    base = cl.space if (cl is not None and cl.space is not None) else spec.default_space()
    if isinstance(space, Space | TypedSpace):
        sp = space
    else:
        sp = space_from_dict(_space_fields(space), base=base)
    if sp.kind == "typed" and strategy in ("cma", "trace"):
        raise InputError(f"strategy {strategy} works on the per-job space only (use anneal, "
                         "random or exhaustive with --space kind=typed)", source="--strategy")  # fmt: skip
    default_out = out is None
    if out is None:
        out = Path("kvopt-search") / f"{spec.slug}-{strategy}-s{seed}"
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError("is a file, expected a folder for the campaign", source=f"--out {out}")
    if out.exists() and not os.access(out, os.W_OK):
        raise InputError("is not writable", source=f"--out {out}")

    def rule(inst):
        r = ref.rule(inst)
        if r is None and cl is not None and cl.space is not None:
            r = cl.rule(inst)
        return r

    ctx = SearchContext(
        policy=spec.name,
        params=resolved,
        space=sp,
        rule=rule,
        seed=seed,
        family=family,
        family_params=fam_params,
    )
    strat = make_strategy(strategy, ctx, options)
    if strategy in ("random", "anneal"):
        from .strategies import probe

        probe(ctx)
    header = CampaignHeader(
        policy=spec.name,
        params={k: ref.given[k] for k in sorted(ref.given)},
        strategy=strategy,
        options=dict(options or {}),
        family=family,
        family_params=fam_params,
        space={"kind": sp.kind, **sp.to_dict()}
        if family is None or strategy in ("anneal",)
        else None,
        claim=cl.id if cl else None,
        objective=objective,
        seed=seed,
        policy_seed=seed if spec.seeded else None,
        batch=batch,
        exact_time_limit=float(exact_time_limit),
        policy_source=spec.code.to_dict() if spec.code is not None else None,
        family_source=gen.code.to_dict() if gen is not None and gen.code is not None else None,
    )

    def make(rec: Evaluation, path: Path):
        from ..record import save_record

        meta = None
        if cl is not None:
            b = cl.bound_for(rec.to_instance())
            meta = {"claim": cl.id, "bound": b, "bound_text": cl.bound_text()}
        record = record_from_log(header, rec, meta=meta, policy=ref)
        save_record(record, path)
        return record

    from .runner import progress_enabled

    res = run_campaign(
        header=header,
        strategy=strat,
        rule=rule,
        budget=budget,
        seconds=seconds,
        workers=workers,
        scheduler=scheduler,
        out=out,
        make_record=make,
        progress=progress_enabled(progress),
        dask_timeout=dask_timeout,
        label=label,
        certify_seconds=certify_seconds,
        policy=ref,
    )
    if default_out:  # no out= given: say where the campaign went (the current folder)
        from ..logs import progress_logger

        progress_logger(__name__, True, "kvopt search")(f"results written to {out.resolve()}")
    return res


from .shrink import shrink  # noqa: E402  (shrink uses search's evaluation pieces)

__all__ = [
    "Best",
    "CampaignHeader",
    "CampaignResult",
    "Evaluation",
    "ExactResult",
    "ExactStatus",
    "OptStatus",
    "Outcome",
    "StopReason",
    "OBJECTIVES",
    "STRATEGIES",
    "read_history",
    "read_log",
    "search",
    "policy_space",
    "shrink",
]
