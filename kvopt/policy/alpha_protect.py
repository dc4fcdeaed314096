"""``alpha-protect`` and ``beta-clear`` — the vLLM-style benchmarks of Jaillet et al.
(2025, §5.2).  Non-clairvoyant.

Both keep the FCFS queue (arrival order, ties by job index) and give running
jobs priority: a waiting job is admitted only if the memory held in the
current round plus its ``s_i + 1`` stays ``≤ (1 − α)·M`` (stop at the first
that does not fit).  When the running set overflows (the engine's overflow
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

    def admit_limit(self) -> float:
        return (1.0 - self.alpha) * self.M

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
