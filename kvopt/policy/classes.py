"""The classes of instances a built-in policy applies to (its registry entry's ``check``).

Each check returns ``None`` when the instance is in the policy's class, else the rule it
breaks in words (``kvopt compare`` prints it as "n/a"; ``kvopt simulate`` refuses the run).
"""

from __future__ import annotations

from typing import Any

from ..instance import Instance


def no_arrivals(inst: Instance) -> str | None:
    if inst.has_arrivals:
        j = int(inst.arrivals.nonzero()[0][0])
        return f"job {j} arrives at round {int(inst.arrivals[j])} (this policy is offline)"
    return None


def _lam_large(inst: Instance, lam: float) -> list[bool]:
    from fractions import Fraction

    lamf = Fraction(str(lam))
    return [s > lamf * inst.memory for s in inst.prompts.tolist()]


def _check_rect(inst: Instance, p: dict[str, Any]) -> str | None:
    r = no_arrivals(inst)
    if r:
        return r
    large = _lam_large(inst, p["lam"])
    for j, (s, o) in enumerate(zip(inst.prompts.tolist(), inst.responses.tolist())):
        if not large[j] and o > s:
            return f"small job {j} is response-heavy (response {o} > prompt {s})"
    return None


def _check_response(inst: Instance, p: dict[str, Any]) -> str | None:
    r = no_arrivals(inst)
    if r:
        return r
    for j, (s, o) in enumerate(zip(inst.prompts.tolist(), inst.responses.tolist())):
        if o <= s:
            return f"job {j} is not response-heavy (response {o} <= prompt {s})"
    return None


def _check_offline(inst: Instance, p: dict[str, Any]) -> str | None:
    return no_arrivals(inst)


def _check_sps(inst: Instance, p: dict[str, Any]) -> str | None:
    r = no_arrivals(inst)
    if r or inst.n == 0:
        return r
    smax, omax = int(inst.prompts.max()), int(inst.responses.max())
    if p["proxy"] and p["proxy"] < smax:
        return f"proxy prompt {p['proxy']} is below the largest prompt {smax}"
    if p["cap"] and p["cap"] < omax:
        return f"cap {p['cap']} is below the largest response {omax} (jobs would not finish)"
    return None
