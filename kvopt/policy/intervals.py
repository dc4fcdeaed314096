"""``a-max`` and ``a-min`` — scheduling with interval predictions (Chen, Ye, Zhou 2025,
"Adaptively Robust LLM Inference Optimization under Prediction Uncertainty", arXiv 2508.14544).

Each request comes with an interval prediction ``[lo, hi]`` of its output length
(``predicted_interval`` in the instance, SPEC §3 as extended by issue 69).  The
paper's model: identical prompts, every request at time 0, one interval ``[ℓ, u]``
for all requests containing every true length; ``α = ℓ/u``; the benchmark is the
hindsight shortest-first schedule H-SF.

**What was read and what was reconstructed.**  The paper's own text (arXiv HTML v1
and v2) could not be read here beyond its abstract; the rest comes from public
summaries of it (EmergentMind, MarkTechPost-style digests) and is marked:

* ``A_max`` "schedules requests based on the upper bound of predicted output
  lengths to prevent memory overflow" (abstract).  Its competitive ratio, as the
  summaries give it, is at most ``α⁻¹(1 + α⁻¹)/2`` and at least
  ``α⁻¹(1 + α^{-1/2})/2`` (the fraction bar was lost in the summary's rendering and
  is this module's reading: it makes the upper bound 1 at ``α = 1``, where
  ``A_max`` is H-SF).  **Reconstructed:** admission is the exact future-memory check
  of :mod:`kvopt.futurememory` (MC-SF's check, per round) with every job's length
  taken as ``hi`` (capped at ``M − s``, which every policy knows), waiting jobs in
  ascending ``hi`` (shortest first on the estimate, as H-SF), ties by job index,
  stop at the first that does not fit.  It never overflows while every interval
  contains its truth; when one misses (a miscalibrated predictor), the newest
  attempt is killed as in ``mcsf``.
* ``A_min`` "initially treats the predicted lower bound as the output length and
  dynamically refines this estimate during inferencing", and "relies solely on the
  lower bound" (abstract); summaries describe the refinement as a *pseudo lower
  bound* that rises with the tokens generated ("if a request has already emitted 100
  tokens, its lower bound becomes at least 100") and an **ordered eviction**: on
  overflow, active requests are sorted by their current pseudo lower bounds and the
  ones with the smallest (least progress) are evicted first, ties broken at random.
  The paper proves ``O(log α⁻¹)`` (its constant could not be read).
  **Reconstructed:** the estimate of job ``j`` starts at ``lo_j`` (capped at
  ``M − s_j``); admission as ``A_max`` with the estimates (ascending estimate,
  future-memory check, per round); a running job that has decoded its estimate
  without finishing is expected to finish in the next round (its pseudo lower
  bound is its progress + 1, the refinement); on overflow, running jobs are evicted
  in ascending order of ``max(estimate, progress)``, ties by least progress ("least
  progress first") and then by job index instead of at random (kvopt's policies are
  deterministic unless seeded), until the round
  fits, and an evicted job's estimate becomes ``progress + 1`` (it is known to be
  longer than what it decoded).  ``hi`` is never read.

Both are prediction-based: they decide from the intervals (``view.intervals``), never
from the true lengths — the conformance battery's ``interval-blind`` check holds them to
it (:mod:`kvopt.conformance`).  On an instance without ``predicted_interval`` the
interval of every job is the paper's common interval, the **hull**
``[min_i o_i, max_i o_i]`` of the true lengths (Chen et al.'s model gives every
request one interval containing all lengths, and this is the tightest such); with
``predicted_response`` and no intervals, the point ``[p, p]``.  Offline (all jobs at
round 0), as the paper's model.

**Not ``predictions = True``** (SPEC §10.1).  That flag (inherited from
:class:`~kvopt.policy.mcsf.FutureCheckGreedy`) means "plans with ``predicted_response``
and decides from it alone"; its conformance check (``predictions``) gives two instances
with the same ``predicted_response`` and other true responses.  These policies plan from
intervals, and where an instance gives none they fall back to the hull of the *true*
lengths — the paper's model, in which the common bounds are known — so the point
predictions alone do not decide.  They declare ``predictions = False``; what they must
not read is checked by ``interval-blind`` instead (same intervals, other true lengths
inside them: the same decisions).

**No ``admission=``.**  The ``admission`` choice of the ``FutureCheckGreedy`` family
(SPEC §10.1) is not offered: ``A_max`` *is* the future-memory check at ``hi`` (with
``admission=vllm`` it would be another algorithm, and no longer overflow-free when the
intervals hold), and ``A_min``'s admission under its refined estimates goes with its own
ordered eviction (vLLM's newest-first preemption would replace it).  Both always admit by
the future-memory check; their constructors take no parameter.

**Batch cap** ``B`` (``max_batch``, SPEC §10.1): the admission scan of
``FutureCheckGreedy`` also stops while ``B`` attempts run; a completion (or an eviction)
frees a slot and calls the policy again.
"""

from __future__ import annotations

import heapq

from ..engine.contract import ClairvoyantView, View
from .mcsf import FutureCheckGreedy


def interval_source(view: ClairvoyantView):
    """A function ``j -> (lo, hi)``: the interval a prediction-based policy uses for job ``j``
    (see the module docstring): the instance's ``predicted_interval``, else the point
    ``predicted_response``, else the common hull of the true lengths (the paper's model;
    read once from the whole instance, which an offline policy sees at round 0)."""
    inst = view.instance
    if inst.has_intervals or inst.has_predictions:
        return view.intervals.__getitem__
    o = inst.responses
    hull = (int(o.min()), int(o.max())) if inst.n else (1, 1)
    return lambda j: hull


class _IntervalPolicy(FutureCheckGreedy):
    """The shared part of ``a-max`` and ``a-min``: where the intervals come from, the
    future-memory admission (no ``admission=``), ``predictions = False`` (module docstring)."""

    #: plans from intervals (``interval-blind`` checks it), not from ``predicted_response``
    predictions = False

    def __init__(self) -> None:
        super().__init__("future")
        self.params = {}

    def setup(self, view: ClairvoyantView) -> None:
        self.interval = interval_source(view)
        super().setup(view)


class AMax(_IntervalPolicy):
    """``A_max``: every job planned at its interval's upper end ``hi`` (capped at ``M − s``)."""

    name = "a-max"
    kills = True  # only when an interval misses its truth (o > hi); never otherwise
    kills_only_when_intervals_miss = True

    def priority(self, view: ClairvoyantView, j: int):
        return self.interval(j)[1]

    def length(self, view: ClairvoyantView, j: int) -> int:
        return max(1, min(self.interval(j)[1], view.memory - view.prompts[j]))


class AMin(_IntervalPolicy):
    """``A_min``: estimates start at ``lo`` and are refined; ordered eviction on overflow."""

    name = "a-min"
    kills = True

    def priority(self, view: ClairvoyantView, j: int):
        return self.length(view, j)

    def length(self, view: ClairvoyantView, j: int) -> int:
        return max(1, min(self.interval(j)[0], view.memory - view.prompts[j]))

    def _resolve_overflow(self, view: View, act) -> None:
        """Ordered eviction: ascending pseudo lower bound ``max(estimate, progress)``, ties
        by least progress, then job index; an evicted job's estimate becomes ``progress + 1`` (capped at
        ``M − s``) and it waits again under that estimate."""
        while view.memory_now() > self.M:
            victim = min(
                view.running,
                key=lambda j: (max(self.est[j], view.progress(j)), view.progress(j), j),
            )
            done = view.progress(victim)
            act.kill(victim)
            self.running.remove(victim)
            est = max(1, min(max(self.est[victim], done + 1), self.M - self.prompts[victim]))
            self.est[victim] = est
            self.key[victim] = (est, victim)
            heapq.heappush(self.waiting, self.key[victim])
