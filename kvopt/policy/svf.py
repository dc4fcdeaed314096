"""``svf`` — Smallest Volume First and ``svf-1bit`` (Kong et al. 2026, §2.2 and Theorem 3.3).

``svf`` orders jobs by volume (area) ``A(s, õ) = s·õ + õ(õ+1)/2`` with ``õ`` the
predicted response (the true one when the instance has no prediction), ties by
job index, and admits — non-preemptively, at every round (SPEC §6; the shared
loop of :class:`~kvopt.policy.mcsf.FutureCheckGreedy` wakes up exactly when the
next job can pass) — the next job in that order while the exact future memory
of the running jobs plus it stays ``≤ M`` in every future round
(:mod:`kvopt.futurememory`).  Kong et al.'s scheduler "pops requests with the
highest priority … until the KV cache capacity is fully utilized", so the scan
stops at the first job that does not fit (strict priority, as ``mcsf``).

``svf-1bit`` knows one bit per job: whether ``õ_i ≤ θ = √T``, taken from
the **predicted** length ``õ_i`` (the true one where the instance gives no
prediction; SPEC §10.1 corrects §6.2, which took the bit and the admission from the
true lengths: more than the deployed 1-bit SVF knows).  It orders by the proxy volume
with proxy length ``T^{1/4}`` (short) or ``T^{3/4}`` (long) and admits with the
predicted lengths, like ``svf`` (``admission=vllm``: vLLM's admission, which needs no
length).

``T`` (parameter ``T``, an integer ``≥ 1``) is Kong et al.'s "bounded system
hyperparameter of maximum model length" (``s + o ≤ T``, §2.2 and Theorem 3.3).  Unset
(the default) it is ``M``, the KV budget, as SPEC §6.2 fixes it: in the model every
job has ``s + o ≤ M``, so ``M`` is the tightest bound the instance itself guarantees.
A serving reproduction sets it to the engine's maximum model length instead — Kong
et al. configured a context window of 65,536 tokens (their §4.1) — because there the
KV budget is far larger (445,376 tokens for Llama-3.1-8B on one A100-80GB: ``√M ≈ 667``
makes about 98 % of LMSYS-like predictions "short", and the bit says almost nothing;
at ``T = 65,536``, ``√T = 256``, it is 92 %: docs/explanation/reproductions.md).  A ``T``
below some job's ``s + o`` is accepted: the job is scheduled all the same (its bit says
long), only Theorem 3.3's premise ``s + o ≤ T`` fails for it.

Overflow and stall handling with wrong predictions are those of
:class:`~kvopt.policy.mcsf.FutureCheckGreedy`.
"""

from __future__ import annotations

from ..engine.contract import ClairvoyantView
from ..errors import InputError
from ..instance import area
from .mcsf import FutureCheckGreedy


class SVF(FutureCheckGreedy):
    """Smallest Volume First: (predicted) area order, exact future-memory admission."""

    name = "svf"

    def priority(self, view: ClairvoyantView, j: int):
        return area(view.prompts[j], view.predicted[j])


class SVF1Bit(FutureCheckGreedy):
    """1-bit SVF: proxy-volume order from one bit (predicted ``õ ≤ √T``), predicted-length
    admission (SPEC §10.1).

    ``T`` is Kong et al.'s maximum model length (``s + o ≤ T``): ``None`` (the default)
    takes ``M`` (SPEC §6.2); a serving reproduction passes the engine's maximum model
    length (Kong et al.: 65,536), since its KV budget ``M`` is far above any one request
    and ``√M`` would call nearly every request short.
    """

    name = "svf-1bit"

    def __init__(self, admission: str = "future", T: int | None = None) -> None:
        super().__init__(admission)
        if T is not None and (isinstance(T, bool) or not isinstance(T, int) or T < 1):
            raise InputError(f"must be an integer >= 1 (or unset: M), got {T!r}",
                             source="--param T")  # fmt: skip
        self.T = T
        self.params["T"] = T

    def priority(self, view: ClairvoyantView, j: int):
        T = view.memory if self.T is None else self.T
        s, o = view.prompts[j], view.predicted[j]
        proxy = T**0.25 if o * o <= T else T**0.75
        return s * proxy + proxy * (proxy + 1) / 2
