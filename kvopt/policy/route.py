"""``route`` — Route (main paper, Algorithm 4, §6.2) and ``route-online`` (Theorem 9, App. D.2).

Route is built from Rect and Response through the slot mechanism of
BlackBoxMeta (:class:`~kvopt.policy.blackbox.SlotMeta`).  Branches, in slot
order within each stage ``r`` (each slot ``base^r`` rounds):

* **P** — small jobs (``s_i ≤ Λ = lam·M``) not yet certified, run by Rect with
  width ``2 s_i`` on the *capped* instance (length ``min(o_i, s_i)``).  An
  attempt that reaches ``s_i`` rounds without finishing certifies
  ``o_i > s_i``: it ends there and the job moves to R at once.
* **R** — certified jobs, run by Response (including jobs certified in this
  stage's P slot).
* **L** — large jobs, run by Rect with width ``M``.

Each slot runs a fresh sub-policy on its current pool; finished jobs stay in
their pool as dummies.  Certified jobs leave P (they are not P-dummies).
Slots are literal (``base^r`` rounds even if the pool has nothing left to do)
unless ``compact=True`` — see :mod:`kvopt.policy.blackbox`.

``route-online``: the same pools, but a job enters L or P when it arrives,
finished jobs leave their pools (no dummies), and a slot runs its sub-policy
on the jobs present (unfinished) at the slot's start.  It does not know how
many jobs will arrive, so the slot clock keeps running while every visible job
is finished (the paper's doubling stages go on; the engine ends the run once
all jobs are done).

Instrumentation (:func:`route_bounds`): per job the values of SPEC §6.1's
three bounds — ``C^P_i``/``C^L_i`` are Lemma 5 bound values on the capped
instance of all small jobs / the instance of all large jobs, ``C^R_i`` the
completion time of Response alone on all small response-heavy jobs — and
``7 C^P`` (prompt-heavy), ``11 C^L`` (large), ``max(8 C^P + C^R, 9 C^R)``
(response-heavy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from ..engine.contract import (
    ARRIVAL,
    COMPLETION,
    EXPIRY,
    Actions,
    BlindPolicy,
    Event,
    Policy,
    RunAlone,
    View,
)
from ..instance import Instance
from .blackbox import SlotMeta
from .rect import Rect, lemma5_bounds
from .response import Response

P_BRANCH, R_BRANCH, L_BRANCH = 0, 1, 2
BRANCHES = ("P", "R", "L")


class Route(SlotMeta, BlindPolicy):
    """Route (Algorithm 4)."""

    name = "route"
    online = False

    def __init__(
        self, lam: float = 0.25, base: int = 2, stagger: bool = True, compact: bool = False
    ):
        SlotMeta.__init__(self, base, compact)
        self.lam = lam
        self.lamf = Fraction(str(lam))
        self.stagger = bool(stagger)
        self.params = {"lam": lam, "base": base, "stagger": stagger, "compact": compact}

    def setup(self, view: View) -> None:
        self._view = view
        self.M = view.memory
        self.small: set[int] = set()
        self.large: set[int] = set()
        self.certified: dict[int, int] = {}  # job -> round of certification
        self.n_live = [0, 0, 0]  # unfinished members of P, R, L
        for j in view.jobs:
            self._enter(j, view)
        self._init_slots()

    def _enter(self, j: int, view: View) -> None:
        if int(view.prompts[j]) > self.lamf * self.M:
            self.large.add(j)
            self.n_live[L_BRANCH] += 1
        else:
            self.small.add(j)
            self.n_live[P_BRANCH] += 1

    def _branch(self, j: int) -> int:
        if j in self.large:
            return L_BRANCH
        return R_BRANCH if j in self.certified else P_BRANCH

    def n_parts(self) -> int:
        return 3

    def _members(self, part: int) -> list[int]:
        if part == P_BRANCH:
            return sorted(j for j in self.small if j not in self.certified)
        if part == R_BRANCH:
            return sorted(self.certified)
        return sorted(self.large)

    def pool(self, part: int, view: View) -> tuple[list[int], dict[int, int]]:
        jobs = self._members(part)
        done = view.done
        if self.online:
            return [j for j in jobs if j not in done], {}
        if part == P_BRANCH:
            dummies = {j: min(view.response(j), int(view.prompts[j])) for j in jobs if j in done}
        else:
            dummies = {j: view.response(j) for j in jobs if j in done}
        return jobs, dummies

    def live(self, part: int, view: View) -> bool:
        return self.n_live[part] > 0

    def make_sub(self, part: int) -> Policy:
        if part == P_BRANCH:
            return Rect(self.lam, self.base, capped=True)
        if part == R_BRANCH:
            return Response(self.base, self.stagger)
        return Rect(self.lam, self.base)

    def on_real_event(self, e: Event, view: View) -> None:
        j = e.job
        if e.kind == COMPLETION:
            self.n_live[self._branch(j)] -= 1
        elif e.kind == EXPIRY:
            if j in self.small and j not in self.certified and e.info >= int(view.prompts[j]):
                self.certified[j] = e.time
                self.n_live[P_BRANCH] -= 1
                self.n_live[R_BRANCH] += 1
        elif e.kind == ARRIVAL and self.online and j not in self.small and j not in self.large:
            self._enter(j, view)

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        self._meta_events(now, events, view, act)

    def report(self, instance: Instance) -> dict[str, Any]:
        slots = self.slots
        if self.online and self._view.done:
            # route-online cannot know that no job will arrive any more, so after the
            # last completion it opens one more slot; it ran nothing, leave it out
            end = max(self._view.done.values())
            slots = [s for s in slots if s[2] < end]
        out: dict[str, Any] = {
            "certified": dict(sorted(self.certified.items())),
            "slots": [list(s) for s in slots],
        }
        if not self.online:
            assert self.run_alone is not None  # set by the engine before report
            b = route_bounds(instance, self.lam, self.base, self.stagger, run=self.run_alone)
            out.update({k: [None if x is None else float(x) for x in v] for k, v in b.items()})
        return out


class RouteOnline(Route):
    """Route-online (Theorem 9): pools fill on arrival; finished jobs leave; no dummies.

    The classes above are the reference.  A plain run (:mod:`kvopt.engine.fastpath`) of an
    object of exactly this class with literal slots (``compact=False``) goes through
    :meth:`compiled_run`, the same run compiled (:mod:`kvopt.policy.routekernel`).
    """

    name = "route-online"
    online = True

    def compiled_run(self, instance: Instance, idle_calls: int) -> dict[str, Any] | None:
        """The plain run of this object on ``instance`` by the compiled loop, or ``None``
        (Numba missing, a subclass, ``compact=True``, a batch cap, or a run the loop leaves to the
        reference: an overflow, a stall, an idle run, numbers past int64)."""
        if type(self) is not RouteOnline or self.compact or self.base < 2:
            return None
        if instance.max_batch is not None:  # the kernel knows no batch cap (SPEC §10.1)
            return None
        from . import routekernel  # numba, lazily (kvopt.layers.SOLVER_PACKAGES)

        if not routekernel.available():
            return None
        M = instance.memory
        threshold = math.floor(self.lamf * M)  # s > lam·M  <=>  s > floor(lam·M) for integer s
        prompts = instance.prompts
        return routekernel.run_compiled(
            instance.n, M, prompts, instance.responses, prompts > threshold,
            instance.arrivals, self.base, self.stagger, idle_calls,
        )  # fmt: skip


def route_bounds(
    instance: Instance,
    lam: float = 0.25,
    base: int = 2,
    stagger: bool = True,
    *,
    run: RunAlone,
) -> dict[str, list[Fraction | int | None]]:
    """Per-job branch values and Route's per-job bounds (SPEC §6.1, Lemma 11 / Theorem 1).

    Returns lists indexed by job: ``C_P`` (small jobs), ``C_L`` (large jobs),
    ``C_R`` (small response-heavy jobs), ``bound`` (every job), exact fractions.
    ``run`` runs Response alone on the small response-heavy jobs (the engine's
    :func:`~kvopt.engine.core.run_alone`; in :meth:`Route.report`, ``self.run_alone``).
    """
    M, n = instance.memory, instance.n
    lamf = Fraction(str(lam))
    s = instance.prompts.tolist()
    o = instance.responses.tolist()
    S = [j for j in range(n) if not s[j] > lamf * M]
    L = [j for j in range(n) if s[j] > lamf * M]
    R = [j for j in S if o[j] > s[j]]
    CP: list[Fraction | int | None] = [None] * n
    CL: list[Fraction | int | None] = [None] * n
    CR: list[Fraction | int | None] = [None] * n
    if S:
        vals, _ = lemma5_bounds(M, [2 * s[j] for j in S], [min(o[j], s[j]) for j in S])
        for j, v in zip(S, vals):
            CP[j] = v
    if L:
        vals, _ = lemma5_bounds(M, [M] * len(L), [o[j] for j in L])
        for j, v in zip(L, vals):
            CL[j] = v
    if R:
        times = run(instance.subset(R), Response(base, stagger))
        for idx, j in enumerate(R):
            CR[j] = times[idx]
    bound: list[Fraction | int | None] = [None] * n
    for j in range(n):
        if CL[j] is not None:
            bound[j] = 11 * CL[j]
        elif CR[j] is not None:
            bound[j] = max(8 * CP[j] + CR[j], 9 * CR[j])
        else:
            bound[j] = 7 * CP[j]
    return {"C_P": CP, "C_L": CL, "C_R": CR, "bound": bound}
