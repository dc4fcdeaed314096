"""``gba`` — Geometric Batching, the clairvoyant counterpart of GSA (Feng, Yang, Zhang 2026;
SPEC §6.2; claim ``gba``: ``≤ 10.67·Opt`` for identical prompts).

Jobs are grouped into classes of response length ``(2^{p−1}, 2^p]``
(``p = 0`` holds ``o = 1``).  The non-empty classes run one after another,
shortest first; class ``p`` starts when the last attempt of the previous class
has ended.  Each class is run by SPS (:mod:`kvopt.policy.sps`, the toolkit's
reconstruction of Feng et al.'s subroutine) on its jobs in job-index order,
with proxy prompt ``P`` = the class's largest prompt and cap ``τ`` = the
class's largest response; a job completes at its true length ``o_i ≤ τ``, so
nothing is killed, and since every real prompt is ``≤ P`` the real memory never
exceeds SPS's proxy budget.  When ``P + τ > M`` (possible only with
non-identical prompts) SPS has no pattern and the class's jobs run one at a
time, back to back.

Defined for instances without arrivals (the batch model of the paper).  Under a batch
cap (SPEC §10.1) each class's SPS plan respects it (:func:`~kvopt.policy.sps.sps_plan`);
classes never overlap.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.contract import (
    COMPLETION,
    EXPIRY,
    Actions,
    ClairvoyantPolicy,
    ClairvoyantView,
    Event,
    View,
)
from ..instance import Instance
from .sps import SPSRun, sps_plan, sps_proxy_ok


def gba_classes(instance: Instance) -> list[list[int]]:
    """Non-empty response-length classes ``(2^{p−1}, 2^p]``, shortest first, jobs by index."""
    classes: dict[int, list[int]] = {}
    for j in range(instance.n):
        o = int(instance.responses[j])
        p = (o - 1).bit_length()  # smallest p with o ≤ 2^p
        classes.setdefault(p, []).append(j)
    return [classes[p] for p in sorted(classes)]


class GBA(ClairvoyantPolicy):
    """Geometric Batching: response-length classes, each run by SPS, shortest class first."""

    name = "gba"
    kills = False  # SPS with cap = the class's largest response

    def __init__(self, stagger: bool = True):
        self.stagger = bool(stagger)
        self.params = {"stagger": self.stagger}

    def setup(self, view: ClairvoyantView) -> None:
        instance = view.instance  # offline: every job is visible at round 0
        self.inst = instance
        self.M = instance.memory
        self.classes = gba_classes(instance)
        self.next_class = 0
        self.run: SPSRun | None = None
        self.plans: list[tuple[int, int, tuple[int, int] | None]] = []

    def _start_class(self, now: int) -> None:
        jobs = self.classes[self.next_class]
        self.next_class += 1
        P = max(int(self.inst.prompts[j]) for j in jobs)
        tau = max(int(self.inst.responses[j]) for j in jobs)
        assert sps_proxy_ok([int(self.inst.prompts[j]) for j in jobs], P)
        plan = sps_plan(P, tau, len(jobs), self.M, self.stagger, self.inst.max_batch)
        self.plans.append((P, tau, plan))
        self.run = SPSRun(jobs, plan, now, tau)

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        for e in events:
            if e.kind in (COMPLETION, EXPIRY) and self.run is not None:
                self.run.ended(e.job)
        if self.run is None or self.run.finished:
            if self.next_class < len(self.classes):
                self._start_class(now)
        if self.run is not None:
            self.run.advance(now, act)

    def report(self, instance: Instance):
        return {"classes": [list(c) for c in self.classes], "plans": self.plans}
