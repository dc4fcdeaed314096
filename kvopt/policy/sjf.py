"""``sjf`` — shortest (predicted) job first, otherwise as ``fcfs`` (SPEC §6.3).

The queue is ordered by ``predicted_response`` (the true response when the
instance has no prediction: oracle SJF), ties by job index; preemption,
re-queueing at the front and admission are exactly those of
:mod:`kvopt.policy.fcfs`.  It reads only the predicted lengths (and the
non-clairvoyant view), but it is a clairvoyant policy by type because, without
predictions, it uses the true lengths.  A job's predicted length is read from
the :class:`~kvopt.engine.ClairvoyantView` when the job arrives.
"""

from __future__ import annotations

from ..engine.contract import ClairvoyantPolicy, ClairvoyantView, View
from .fcfs import QueueLogic


class SJF(QueueLogic, ClairvoyantPolicy):
    """FCFS machinery with the queue ordered by (predicted) response length."""

    name = "sjf"

    def __init__(self) -> None:
        self.params: dict = {}

    def setup(self, view: ClairvoyantView) -> None:
        self._init_queue(view)

    def queue_key(self, view: View, j: int):
        return view.predicted[j]  # type: ignore[attr-defined]
