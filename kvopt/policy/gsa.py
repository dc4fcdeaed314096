"""``gsa`` — Geometric Slicing (Feng, Yang, Zhang 2026) for identical prompts (SPEC §6.1).

Phases ``p = 0, 1, …``: every unfinished job gets one attempt, scheduled by SPS
(the toolkit's reconstruction, :mod:`kvopt.policy.sps`) with proxy prompt
``P`` = the largest prompt among unfinished jobs and cap
``τ_p = min(base^p, M − P)``.  A phase ends when its last attempt ends (the
phase loop of :class:`~kvopt.policy.response.PhasedSPS`).  The claim
``gsa`` (≤ 61.92·Opt) is for identical prompts and depends on the SPS
reconstruction.
"""

from __future__ import annotations

from ..engine.contract import View
from .response import PhasedSPS


class GSA(PhasedSPS):
    """Geometric Slicing (Feng, Yang, Zhang 2026), SPEC §6.1 ``gsa``.

    Phase ``p``: every unfinished job gets one attempt, by SPS with proxy prompt
    ``P`` = the largest prompt among unfinished jobs and cap
    ``τ_p = min(base^p, M − P)``.  Made for identical prompts; on other
    instances it is still feasible (real prompts ≤ ``P``) and terminates
    (the job with the largest prompt fits ``M − P``).
    """

    name = "gsa"

    def __init__(self, base: int = 2, stagger: bool = True):
        super().__init__(base, stagger)
        self.params = {"base": base, "stagger": stagger}

    def next_phase(self, now: int, view: View):
        done = view.done
        jobs = [j for j in self.jobs if j not in done]
        if not jobs:
            return None
        P = max(int(view.prompts[j]) for j in jobs)
        M = view.memory
        tau = min(self.base**self.phase, M - P)
        return jobs, P, tau, False
