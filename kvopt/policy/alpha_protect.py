"""``alpha-protect`` and ``beta-clear`` — the vLLM-style benchmarks of Jaillet et al.
(2025, §5.2).  Non-clairvoyant.

Both keep the FCFS queue (arrival order, ties by job index) and give running
jobs priority: a waiting job is admitted only if the memory held in the
current round plus its ``s_i + 1`` stays ``≤ (1 − α)·M`` (stop at the first
that does not fit; exact arithmetic, SPEC §6.3: ``α`` is read as the decimal
fraction it is written as, not as a float product).  When the running set overflows (the engine's overflow
event):

* ``alpha-protect`` kills **all** running attempts;
* ``beta-clear`` kills each running attempt independently with probability
  ``β`` (in job-index order, from a generator seeded with the run's seed),
  repeating until the round fits.

Killed jobs go back to the queue "as unprocessed", at their place in arrival
order.  Two choices the paper leaves open, both needed for termination in the
discrete model (documented):

* when nothing is running the head of the queue is admitted even above
  ``(1 − α)M`` (its true peak ``s + o ≤ M`` fits), so a large prompt cannot
  stall the queue;
* after an overflow that left nothing running, only the head of the queue is
  restarted in that round (the others wait for the next event); without this,
  two jobs that overflow together would be restarted together and overflow
  again forever.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..engine.contract import Actions, BlindPolicy, View
from ..errors import InputError
from .fcfs import QueueLogic


def _check_alpha(alpha: float) -> float:
    alpha = float(alpha)
    if not 0 <= alpha < 1:
        raise InputError(f"must be in [0, 1), got {alpha}", source="--param alpha")
    return alpha


class AlphaProtect(QueueLogic, BlindPolicy):
    """α-protection greedy: admit below ``(1−α)M``; on overflow clear every running attempt."""

    name = "alpha-protect"
    killed_to_front = False

    def __init__(self, alpha: float = 0.2):
        self.alpha = _check_alpha(alpha)
        self.params = {"alpha": self.alpha}

    def setup(self, view: View) -> None:
        self._init_queue(view)
        # ⌊(1 − α)·M⌋ in exact arithmetic (α as the fraction it is written as, as blackbox
        # does for Λ): memory is an integer, so used + s + 1 ≤ (1 − α)M exactly when it is
        # ≤ this; a float product can fall just below an integer (α = 0.8, M = 20 gives
        # 3.9999999999999996 and would refuse 4)
        self._limit = math.floor((1 - Fraction(str(self.alpha))) * self.M)

    def admit_limit(self) -> int:
        return self._limit

    def resolve_overflow(self, view: View, act: Actions) -> bool:
        for j in sorted(view.running):
            act.kill(j)
            self._requeue(j)
        return True


class BetaClear(AlphaProtect):
    """α-protection β-clearing: on overflow kill each running attempt with probability β."""

    name = "beta-clear"

    def __init__(self, alpha: float = 0.2, beta: float = 0.5, seed: int | None = None):
        super().__init__(alpha)
        beta = float(beta)
        if not 0 < beta <= 1:
            raise InputError(f"must be in (0, 1], got {beta}", source="--param beta")
        self.beta = beta
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.params = {"alpha": self.alpha, "beta": self.beta}

    def resolve_overflow(self, view: View, act: Actions) -> bool:
        killed = False
        while view.memory_now() > self.M:
            for j in sorted(view.running):
                if self.rng.random() < self.beta:
                    act.kill(j)
                    self._requeue(j)
                    killed = True
        return killed
