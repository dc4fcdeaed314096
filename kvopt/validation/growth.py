"""Lower-bound constructions reproduced: measured ratios and fitted growth exponents.

* :func:`single_priority` — main paper, Proposition 1: jobs X = (1, L) and
  Y = (L³, 1), M = L³ + 1; case 1 (one X, ⌊√L⌋ Y) and case 2 (L² − L + 1 X,
  ⌊L^{3/2}⌋ Y), each in both file orders (FCFS breaks ties by order).  For
  every policy and L the worst certified ratio over the four instances; the
  claim is that every single-priority rule's ratio grows like √L (exponent
  ½ in L) while Route stays bounded.  Each rule is fitted on the family it
  loses on (area order loses on case 1, response order on case 2).
* ``fcfs-growth`` and ``sf-growth`` have no construction: they are validated
  by discovery (:func:`kvopt.validation.sweeps.discovery_claim`: typed
  campaigns, then growth sweeps of their best records).
* :func:`online_sqrt_n` — Jaillet et al.'s adaptive adversary
  (:class:`kvopt.adversary.SqrtNAdversary`): a memory-filling request
  (``s = 1, o = M − 1``) at round 0 and, once the policy starts it at ``b``,
  ``M/2`` one-token requests at ``b + M − √M/2``; ``n = M/2 + 1``.  The
  ratio is in total **latency** ``Σ (C_i − a_i)`` (SPEC §7); the claim is
  growth like √n (exponent ½ in n).

:data:`GROWTH_EXPERIMENTS` maps every growth claim of :mod:`kvopt.claim` to the
procedure that runs its construction and gives the verdict (``reproduced``
when the fitted tail exponents reach :data:`~kvopt.validation.effort.REPRODUCED_EXPONENT`).

Every ratio is certified (SPEC §8): ``ALG / UB`` with ``UB`` the best checked
clairvoyant schedule (the cheap kill-free schedules of
:mod:`kvopt.campaign.evaluate`, and the exact solver's incumbent on instances
small enough, ``exact_max_n`` jobs), beside the optimistic ``ALG / LB``.  The
exponent is the least-squares slope on log–log axes, reported with the points.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..campaign.strategies import fit_exponent
from ..certify import Bracket, Effort, bracket, with_policy
from ..claim import Claim
from ..instance import Instance
from ..simulation import simulate
from .context import Context
from .effort import GROWTH_TOLERANCE, REPRODUCED_EXPONENT
from .result import ClaimVerdict, Verdict, fmt
from .sweeps import discovery_claim

#: Policies run on the Proposition 1 families (the single-priority rules, then Route).
SINGLE_PRIORITY_RULES = ("greedy-area", "sjf", "fcfs", "svf")
#: Policies attacked by the adaptive adversary.
SQRT_N_POLICIES = ("fcfs", "mcsf", "route-online", "greedy-area")


def certified_reference(inst: Instance, objective: str, exact_max_n: int,
                        time_limit: float) -> Bracket:  # fmt: skip
    """The bracket on Opt of ``inst`` (:func:`kvopt.certify.bracket` without a policy): cheap
    bounds, tightened by the exact solver on instances of at most ``exact_max_n`` jobs."""
    effort = Effort(exact_seconds=time_limit, exact_max_n=exact_max_n)
    return bracket(None, inst, effort, objective=objective)


def _row(b: Bracket) -> dict[str, Any]:
    """A row's bracket fields (the bracket itself under ``bracket``)."""
    return {"alg": b.alg, "ub": b.ub, "lb": b.lb, "opt_status": b.status,
            "ratio_certified": b.ratio_certified, "ratio_optimistic": b.ratio_optimistic,
            "bracket": b.to_dict()}  # fmt: skip


def _fit(points: Sequence[tuple[float, float, float]]) -> dict[str, Any]:
    """Exponents over all points and over the upper half (at least 3 points): lower-bound
    constructions approach their asymptotic growth from below, so the tail is what tests it."""
    pts = sorted(points)
    xs = [p[0] for p in pts]
    tail = pts[len(pts) // 2 :] if len(pts) >= 6 else pts[-3:]
    return {
        "exponent_certified": fit_exponent(xs, [p[1] for p in pts]),
        "exponent_optimistic": fit_exponent(xs, [p[2] for p in pts]),
        "exponent_tail": fit_exponent([p[0] for p in tail], [p[1] for p in tail]),
        "tail_from": tail[0][0] if tail else None,
    }


def single_priority(
    Ls: Sequence[int] = (2, 4, 9, 16, 25, 36, 49, 64),
    policies: Sequence[str] = (*SINGLE_PRIORITY_RULES, "route"),
    *,
    case2_max_L: int = 16,
    exact_max_n: int = 12,
    time_limit: float = 10.0,
    progress=None,
) -> dict[str, Any]:
    """Proposition 1's families for growing L (see the module docstring).

    Perfect squares make ``⌊√L⌋`` and ``⌊L^{3/2}⌋`` exact, so the measured
    growth is not blurred by the floors.  Case 2 has ``L² − L + 1 + ⌊L^{3/2}⌋``
    jobs and is run up to ``case2_max_L`` (its cheap clairvoyant bound grows
    with ``n·L²``); case 1 has ``1 + ⌊√L⌋`` jobs and runs for every L.
    """
    from ..generators import generate

    rows = []
    refs: dict[tuple[int, int, str], Bracket] = {}
    for L in Ls:
        for case in (1, 2) if L <= case2_max_L else (1,):
            for order in ("x-first", "y-first"):
                inst = generate("prop1", 0, L=L, case=case, order=order)
                key = (L, case, order)
                refs[key] = certified_reference(inst, "total", exact_max_n, time_limit)
                for pol in policies:
                    b = with_policy(refs[key], inst, simulate(inst, pol).schedule)
                    rows.append(
                        {
                            "policy": pol,
                            "L": L,
                            "case": case,
                            "order": order,
                            "n": inst.n,
                            "memory": inst.memory,
                            **_row(b),
                        }  # fmt: skip
                    )
                if progress:
                    progress(f"prop1 L={L} case={case} {order}")
    per_policy = {}
    for pol in policies:
        series: dict[int, list[tuple[float, float, float]]] = {}
        for case in (1, 2):
            for L in Ls:
                mine = [r for r in rows if r["policy"] == pol and r["L"] == L and r["case"] == case]
                if mine:
                    worst = max(mine, key=lambda r: r["ratio_certified"])
                    series.setdefault(case, []).append(
                        (
                            float(L),
                            worst["ratio_certified"],
                            max(r["ratio_optimistic"] for r in mine),
                        )
                    )
        # the family the rule loses on: the larger ratio at the largest L both cases reach
        common = max(L for L in Ls if L <= case2_max_L)
        at = {c: next((p[1] for p in pts if p[0] == common), 0.0) for c, pts in series.items()}
        case = max(at, key=lambda c: (at[c], -c))
        pts = series[case]
        per_policy[pol] = {
            "case": case,
            "points": [list(p) for p in pts],
            **_fit(pts),
            "by_case": {c: {"points": [list(p) for p in s], **_fit(s)} for c, s in series.items()},
        }
    return {"Ls": list(Ls), "rows": rows, "policies": per_policy}


def sqrt_n_memories(max_memory: int) -> list[int]:
    """``M = (2k)²`` (so that ``√M/2`` is an integer) from 16 up to ``max_memory``."""
    out, k = [], 2
    while (2 * k) ** 2 <= max_memory:
        out.append((2 * k) ** 2)
        k += 1 if k < 6 else 2
    return out


def online_sqrt_n(
    memories: Sequence[int] = (16, 36, 64, 100, 144, 256, 400, 576),
    policies: Sequence[str] = SQRT_N_POLICIES,
    *,
    exact_max_n: int = 20,
    time_limit: float = 10.0,
    progress=None,
) -> dict[str, Any]:
    """Jaillet et al.'s adaptive construction against ``policies`` (see the module docstring)."""
    from ..adversary import SqrtNAdversary, sqrt_n_instance

    rows = []
    for M in memories:
        for pol in policies:
            res = simulate(sqrt_n_instance(M), pol, adversary=SqrtNAdversary(M))
            inst = res.instance
            ref = certified_reference(inst, "latency", exact_max_n, time_limit)
            b = with_policy(ref, inst, res.schedule)
            rows.append(
                {
                    "policy": pol,
                    "memory": M,
                    "n": inst.n,
                    **_row(b),
                    "release_round": int(inst.arrivals.max(initial=0)),
                    "first_start": _first_start(res),
                }  # fmt: skip
            )
            if progress:
                progress(f"sqrt-n M={M} {pol}")
    per_policy = {}
    for pol in policies:
        pts = [(float(r["n"]), r["ratio_certified"], r["ratio_optimistic"]) for r in rows
               if r["policy"] == pol]  # fmt: skip
        per_policy[pol] = {"points": [list(p) for p in pts], **_fit(pts)}
    return {"memories": list(memories), "rows": rows, "policies": per_policy}


def _first_start(res) -> int | None:
    starts = [a.start for a in res.schedule.attempts if a.job == 0]
    return min(starts) if starts else None


# --------------------------------------------------------------------------- growth claims


def _single_priority_claim(claim: Claim, ctx: Context) -> ClaimVerdict:
    """Proposition 1: every single-priority rule grows like √L (Route stays bounded)."""
    data = single_priority(ctx.eff.prop1_Ls, exact_max_n=12, time_limit=ctx.eff.exact_time_limit,
                           progress=ctx.say if ctx.show else None)  # fmt: skip
    pol = data["policies"]
    exps = {p: pol[p]["exponent_certified"] for p in pol}
    tails = {p: pol[p]["exponent_tail"] for p in pol}
    ok = all(
        tails[p] is not None and tails[p] >= REPRODUCED_EXPONENT for p in SINGLE_PRIORITY_RULES
    )
    worst_c = max(r["ratio_certified"] for r in data["rows"])
    worst_o = max(r["ratio_optimistic"] for r in data["rows"])
    Ls = ctx.eff.prop1_Ls
    text = (
        f"growth exponent in L of the worst certified ratio over L = {Ls[0]}..{Ls[-1]} (upper half "
        "of the range in brackets): "
        + ", ".join(f"{p} {fmt(exps[p])} [{fmt(tails[p])}]" for p in pol)
        + f"; claim: 1/2 for every single-priority rule (each fitted on the family it loses on), "
        f"reproduced when the upper-half exponent is >= {REPRODUCED_EXPONENT}"
    )
    if "route" in pol:
        rc = pol["route"]["by_case"]
        route_max = max(r["ratio_certified"] for r in data["rows"] if r["policy"] == "route")
        grows = any((d.get("exponent_tail") or 0) > GROWTH_TOLERANCE for d in rc.values())
        text += (
            f"; route: worst certified ratio {route_max:.3g}, upper-half exponents "
            + ", ".join(f"case {c} {fmt(d.get('exponent_tail'))}" for c, d in sorted(rc.items()))
            + (" (still growing over this range)" if grows else " (bounded over this range)")
        )
    return ClaimVerdict(
        id=claim.id, verdict=Verdict.REPRODUCED if ok else Verdict.INCONCLUSIVE, bound="sqrt(L)",
        bound_text="growth ~ L^0.5", worst_certified_ratio=worst_c, worst_optimistic_ratio=worst_o,
        instances=len(data["rows"]), exact_solves=0, seconds=0.0, text=text, kind=claim.kind,
        data=data,
    )  # fmt: skip


def _online_sqrt_n_claim(claim: Claim, ctx: Context) -> ClaimVerdict:
    """Jaillet et al.: every attacked online policy grows like √n in latency."""
    data = online_sqrt_n(ctx.eff.sqrt_memories, claim.policies, exact_max_n=20,
                         time_limit=ctx.eff.exact_time_limit,
                         progress=ctx.say if ctx.show else None)  # fmt: skip
    pol = data["policies"]
    exps = {p: pol[p]["exponent_certified"] for p in pol}
    tails = {p: pol[p]["exponent_tail"] for p in pol}
    ok = all(e is not None and e >= REPRODUCED_EXPONENT for e in tails.values())
    worst_c = max(r["ratio_certified"] for r in data["rows"])
    worst_o = max(r["ratio_optimistic"] for r in data["rows"])
    Ms = ctx.eff.sqrt_memories
    text = (
        f"latency-ratio growth exponent in n over M = {Ms[0]}..{Ms[-1]} (n = {Ms[0] // 2 + 1}.."
        f"{Ms[-1] // 2 + 1}; upper half of the range in brackets): "
        + ", ".join(f"{p} {fmt(exps[p])} [{fmt(tails[p])}]" for p in pol)
        + f"; claim: >= 1/2 asymptotically, reproduced when every upper-half exponent is >= "
        f"{REPRODUCED_EXPONENT}"
    )
    return ClaimVerdict(
        id=claim.id, verdict=Verdict.REPRODUCED if ok else Verdict.INCONCLUSIVE, bound="sqrt(n)",
        bound_text="growth ~ n^0.5 (latency)", worst_certified_ratio=worst_c,
        worst_optimistic_ratio=worst_o, instances=len(data["rows"]), exact_solves=0, seconds=0.0,
        text=text, kind=claim.kind, data=data,
    )  # fmt: skip


def _online_linear_n_claim(claim: Claim, ctx: Context) -> ClaimVerdict:
    """The Θ(n) abstract: every never-kill policy stays above (n−1)/12 (:mod:`.linear_n`)."""
    from .linear_n import linear_n_verdict, online_linear_n, select_ns

    data = online_linear_n(select_ns(ctx.eff.linear_ns, ctx.sizes), claim.policies,
                           time_limit=ctx.eff.exact_time_limit, seed=ctx.seed,
                           record_dir=ctx.out / claim.id, progress=ctx.say if ctx.show else None)  # fmt: skip
    fields = linear_n_verdict(data)
    fields["verdict"] = Verdict(fields["verdict"])
    return ClaimVerdict(id=claim.id, kind=claim.kind, seconds=0.0, data=data, **fields)


#: The experiment of every growth claim, by claim id.  Explicit on purpose: grep here.  A growth
#: claim without an entry is an error (:func:`growth_claim`), never another claim's experiment.
GROWTH_EXPERIMENTS: dict[str, Callable[[Claim, Context], ClaimVerdict]] = {
    "single-priority": _single_priority_claim,
    "online-sqrt-n": _online_sqrt_n_claim,
    "online-linear-n": _online_linear_n_claim,
    "fcfs-growth": discovery_claim,
    "sf-growth": discovery_claim,
}


def _linear_n_inputs(eff, sizes: dict[str, Any]) -> None:
    from .linear_n import select_ns

    select_ns(eff.linear_ns, sizes)  # InputError naming --n / --memory when no usable n is left


#: Input checks of growth experiments whose sizes come from ``--n``/``--memory``: run for every
#: requested claim before any claim runs, so bad input exits 2 with nothing written.
GROWTH_INPUT_CHECKS: dict[str, Callable[[Any, dict[str, Any]], None]] = {
    "online-linear-n": _linear_n_inputs,
}


def growth_experiment(claim: Claim) -> Callable[[Claim, Context], ClaimVerdict]:
    """The experiment of growth claim ``claim``; :class:`LookupError` if it has none."""
    try:
        return GROWTH_EXPERIMENTS[claim.id]
    except KeyError:
        raise LookupError(
            f"growth claim {claim.id!r} has no experiment in "
            f"kvopt.validation.growth.GROWTH_EXPERIMENTS (known: {', '.join(GROWTH_EXPERIMENTS)})"
        ) from None


def growth_claim(claim: Claim, ctx: Context) -> ClaimVerdict:
    """Run the growth claim's registered experiment (:data:`GROWTH_EXPERIMENTS`)."""
    return growth_experiment(claim)(claim, ctx)


__all__ = [
    "GROWTH_EXPERIMENTS",
    "GROWTH_INPUT_CHECKS",
    "SINGLE_PRIORITY_RULES",
    "SQRT_N_POLICIES",
    "certified_reference",
    "growth_claim",
    "growth_experiment",
    "online_sqrt_n",
    "single_priority",
    "sqrt_n_memories",
]
