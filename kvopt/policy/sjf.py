"""``sjf`` — shortest (predicted) job first, otherwise as ``fcfs`` (SPEC §6.3).

The queue is ordered by ``predicted_response`` (the true response when the
instance has no prediction: oracle SJF), ties by job index; preemption,
re-queueing at the front and admission are exactly those of
:mod:`kvopt.policy.fcfs`.  It reads only the predicted lengths (and the
non-clairvoyant view), but it is a clairvoyant policy by type because, without
predictions, it uses the true lengths.  A job's predicted length is read from
the :class:`~kvopt.engine.ClairvoyantView` when the job arrives.

``admission=vllm`` (the default) is that machinery (vLLM's admission, SPEC §10.1);
``admission=future`` is :class:`SJFFuture`: the same order under the exact
future-memory check of SPEC §6.2 with the predicted lengths (the rule of ``mcsf``).
"""

from __future__ import annotations

from ..engine.contract import ClairvoyantPolicy, ClairvoyantView, View
from ..errors import InputError
from .fcfs import QueueLogic
from .mcsf import FutureCheckGreedy, check_admission


class SJF(QueueLogic, ClairvoyantPolicy):
    """FCFS machinery with the queue ordered by (predicted) response length."""

    name = "sjf"
    predictions = True  # reads predicted_response only (SPEC §10.1)

    def __init__(self, admission: str = "vllm") -> None:
        if check_admission(admission) != "vllm":  # the registry builds SJFFuture for it
            raise InputError("SJF is vLLM's admission; use SJFFuture", source="--param admission")
        self.params: dict = {"admission": admission}

    def setup(self, view: ClairvoyantView) -> None:
        self._init_queue(view)

    def queue_key(self, view: View, j: int):
        return view.predicted[j]  # type: ignore[attr-defined]


class SJFFuture(FutureCheckGreedy):
    """``sjf`` with ``admission=future``: (predicted) response order under the exact
    future-memory check (:class:`~kvopt.policy.mcsf.FutureCheckGreedy`)."""

    name = "sjf"

    def priority(self, view: ClairvoyantView, j: int):
        return view.predicted[j]
