"""``response`` — Response (main paper, Algorithm 2, §5); its phase loop is shared with ``gsa``.

Response: phases ``r = 0, 1, …`` with cap ``τ_r = base^r``.  Eligible: unfinished
jobs with ``s_i ≤ τ_r``, in job-index order.  They run by SPS (the toolkit's
reconstruction, :mod:`kvopt.policy.sps`) with proxy prompt
``min(τ_r, M − τ_r)`` and cap ``τ_r``; when ``τ_r > M/2`` the proxy admits one
job at a time and the eligible jobs run one after another (back to back).  A
job not finished by the cap is killed (its attempt expires) and waits for the
next phase.  A phase ends when its last attempt ends; a phase with no eligible
job takes no time.  SPS requires every real prompt ≤ the proxy prompt; this is
asserted (a :class:`~kvopt.errors.PolicyError` if it fails).  Defined for
instances of response-heavy jobs (``o_i > s_i``); on others it still runs, but
the memory argument (real prompt ≤ proxy) is what is checked.  Under a batch cap
(SPEC §10.1) the SPS plans respect it (:func:`~kvopt.policy.sps.sps_plan`); phases
never overlap and a sequential phase runs one attempt at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.contract import COMPLETION, EXPIRY, Actions, BlindPolicy, Event, View
from ..errors import PolicyError
from .sps import SPSRun, sps_plan


class PhasedSPS(BlindPolicy):
    """Common phase loop: each phase runs SPS on a set of jobs chosen by :meth:`next_phase`."""

    kills = True  # a job not finished by its phase's cap is killed

    def __init__(self, base: int = 2, stagger: bool = True):
        self.base = int(base)
        self.stagger = bool(stagger)
        self.phase = -1
        self.run: SPSRun | None = None
        self.phases: list[tuple[int, int, int, int, tuple[int, int] | None]] = []

    def setup(self, view: View) -> None:
        self.jobs = sorted(view.jobs)
        self.phase = -1
        self.run = None
        self.phases = []

    def next_phase(self, now: int, view: View) -> tuple[list[int], int, int, bool] | None:
        """``(jobs, proxy, cap, sequential)`` for the next phase; ``None`` if it is empty."""
        raise NotImplementedError

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        run = self.run
        for e in events:
            if e.kind == COMPLETION or e.kind == EXPIRY:
                if run is not None:
                    run.ended(e.job)
        while True:
            if run is not None:
                run.advance(now, act)
                if not run.finished:
                    return
            done = view.done
            if all(j in done for j in self.jobs):
                self.run = None
                return
            run = None
            while run is None:
                self.phase += 1
                spec = self.next_phase(now, view)
                if spec is None:
                    continue
                jobs, proxy, cap, sequential = spec
                plan = (
                    None
                    if sequential
                    else sps_plan(proxy, cap, len(jobs), view.memory, self.stagger, view.max_batch)
                )
                if not sequential:
                    bad = [j for j in jobs if int(view.prompts[j]) > proxy]
                    if bad:
                        raise PolicyError(
                            f"policy {self.name!r}: job {bad[0]}, round {now}: prompt "
                            f"{int(view.prompts[bad[0]])} exceeds SPS proxy prompt {proxy}"
                        )
                    if plan is None:
                        raise PolicyError(
                            f"policy {self.name!r}: round {now}: SPS cannot fit proxy prompt "
                            f"{proxy} with cap {cap} in memory {view.memory}"
                        )
                run = SPSRun(jobs, plan, now, cap)
                self.phases.append((self.phase, now, proxy, cap, plan))
            self.run = run

    def report(self, instance):
        return {
            "phases": [
                {"phase": r, "start": t, "proxy": p, "cap": c, "plan": list(pl) if pl else None}
                for r, t, p, c, pl in self.phases
            ]
        }


class Response(PhasedSPS):
    """Response (Algorithm 2)."""

    name = "response"

    def __init__(self, base: int = 2, stagger: bool = True):
        super().__init__(base, stagger)
        self.params = {"base": base, "stagger": stagger}

    def next_phase(self, now: int, view: View):
        tau = self.base**self.phase
        done = view.done
        prompts = view.prompts
        jobs = [j for j in self.jobs if j not in done and int(prompts[j]) <= tau]
        if not jobs:
            return None
        M = view.memory
        if 2 * tau > M:
            return jobs, max(M - tau, 0), tau, True
        return jobs, tau, tau, False
