"""``sorted-f`` — Sorted-F (Wang, Ye, Zhou 2025, "LLM Serving Optimization with Variable
Prefill and Decode Lengths", arXiv 2508.06133).

The paper's offline model is kvopt's without arrivals: ``n`` requests with
heterogeneous prompts ``s_i`` and decode lengths ``o_i`` arrive together; minimise the
total completion time under the KV budget ``M``.  Sorted-F "repeatedly forms feasible
batches using a new selection metric that balances batch size against downstream decode
cost" (abstract); summaries give the metric as

    F(X) = (Σ_{i∈X} o_i) / |X|²

and the guarantee as a constant competitive ratio of at most 48 (Kong et al. 2026 call it
the "offline batch-partitioning" bound of the vanishing-fraction regime, ``α → 0``).

**What was reconstructed** (the paper's algorithm box could not be read here):

* *Feasible batch*: a set ``X`` whose jobs, started together, fit at their peaks,
  ``Σ_{i∈X} (s_i + o_i) ≤ M`` (then no round of the batch overflows, whatever the
  completion order).  Under a batch cap ``B`` (``max_batch``, SPEC §10.1) a feasible
  batch also has ``|X| ≤ B``: the natural extension of the paper's model (which has no
  cap) — the cap is a second knapsack constraint, on the batch's cardinality, beside the
  memory one.  A single job is always a feasible batch (``B ≥ 1``), so the partition
  always exists; without a cap nothing changes.
* *Selection*: among the unscheduled jobs, the feasible batch of least ``F`` is chosen
  exactly: for every size ``k`` (``k ≤ B`` under a cap) a 0/1 knapsack (cardinality ``k``, weight ``s_i + o_i``,
  capacity ``M``) gives the least ``Σ o`` over feasible ``k``-sets; the ``k`` of least
  ``Σ o / k²`` wins (exact rational comparison; ties: the larger batch, then the set the
  dynamic program keeps, which prefers lower job indices).  Its jobs are removed and the
  selection repeats until every job is in a batch.  Removing jobs only shrinks the
  choice, so ``F`` is non-decreasing along the selection: the "sorted" order of the
  name is the selection order.
* *Execution* (``pipeline=false``, the default: the batch-partition form the bound is
  stated for): batch ``b + 1`` starts, all its jobs together, in the round after the
  last job of batch ``b`` completes.  ``pipeline=true`` instead starts jobs in batch
  order (within a batch by job index) as soon as MC-SF's exact future-memory check
  passes (:mod:`kvopt.futurememory`, per round, stop at the first that does not fit) —
  a work-conserving variant, not in the paper.  Under a cap either execution starts at
  most ``view.free_slots`` jobs: a batch (``|X| ≤ B``) starts when nothing runs, so all
  its jobs have a slot; the pipeline's scan also stops while ``B`` attempts run (as
  ``mcsf``'s does) and a completion calls it again.

Clairvoyant (true lengths; ``predicted_response`` is not used) and offline (no arrivals).
The partition is also :func:`sorted_f_batches`, which :mod:`kvopt.exact` may use as a
heuristic upper bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from ..engine.contract import (
    COMPLETION,
    Actions,
    ClairvoyantPolicy,
    ClairvoyantView,
    Event,
    View,
)
from .mcsf import FutureCheckGreedy

_INF = np.iinfo(np.int64).max // 4


def best_batch(
    prompts: Sequence[int],
    responses: Sequence[int],
    memory: int,
    max_batch: int | None = None,
) -> list[int]:
    """Positions (into the given lists) of the feasible batch of least ``F = Σ o / |X|²``.

    A feasible batch has ``Σ (s + o) ≤ memory`` and, under a batch cap ``max_batch``
    (SPEC §10.1), ``|X| ≤ max_batch`` (the cap is a second knapsack constraint: the
    sizes ``k`` tried stop at it).  Exact: a 0/1 knapsack per batch size
    (numpy over sizes × capacities, one stage per job, the stages kept for the
    back-tracking).  Ties of ``F``: the larger batch; then the set the stages keep
    (an item enters only where it strictly improves, so lower positions win).
    """
    n = len(prompts)
    w = [int(s) + int(o) for s, o in zip(prompts, responses)]
    fits = [i for i in range(n) if w[i] <= memory]
    if not fits:
        raise ValueError("no job fits the memory on its own")
    K = min(len(fits), memory // min(w[i] for i in fits))
    if max_batch is not None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, got {max_batch}")
        K = min(K, int(max_batch))
    dp = np.full((K + 1, memory + 1), _INF, dtype=np.int64)
    dp[0, 0] = 0
    takes: list[np.ndarray] = []
    for i in fits:
        wi, oi = w[i], int(responses[i])
        cand = np.full_like(dp, _INF)
        cand[1:, wi:] = dp[:-1, : memory + 1 - wi] + oi
        take = cand < dp
        dp = np.where(take, cand, dp)
        takes.append(take)
    best_k, best_f, best_c = 0, None, 0
    for k in range(1, K + 1):
        c = int(np.argmin(dp[k]))
        v = int(dp[k, c])
        if v >= _INF:
            continue
        f = Fraction(v, k * k)
        if best_f is None or f <= best_f:  # ties: the larger k (k ascends)
            best_k, best_f, best_c = k, f, c
    chosen: list[int] = []
    k, c = best_k, best_c
    for stage in range(len(fits) - 1, -1, -1):
        if k == 0:
            break
        if takes[stage][k, c]:
            i = fits[stage]
            chosen.append(i)
            k -= 1
            c -= w[i]
    return sorted(chosen)


def sorted_f_batches(
    prompts: Sequence[int],
    responses: Sequence[int],
    memory: int,
    max_batch: int | None = None,
) -> list[list[int]]:
    """Sorted-F's partition of the jobs ``0 … n−1`` into batches, in selection (= ``F``) order
    (each of at most ``max_batch`` jobs under a batch cap, SPEC §10.1)."""
    left = list(range(len(prompts)))
    out: list[list[int]] = []
    while left:
        pick = best_batch(
            [prompts[j] for j in left], [responses[j] for j in left], memory, max_batch
        )
        batch = [left[p] for p in pick]
        out.append(batch)
        taken = set(batch)
        left = [j for j in left if j not in taken]
    return out


def _partition(view: ClairvoyantView) -> list[list[int]]:
    inst = view.instance
    return sorted_f_batches(
        inst.prompts.tolist(), inst.responses.tolist(), inst.memory, view.max_batch
    )


class SortedF(ClairvoyantPolicy):
    """Sorted-F: least-``F`` batches, run one after the other (see the module docstring)."""

    name = "sorted-f"
    kills = False

    def __init__(self, pipeline: bool = False) -> None:
        self.pipeline = bool(pipeline)
        self.params = {"pipeline": self.pipeline}
        self._inner: _SortedFPipeline | None = None

    def setup(self, view: ClairvoyantView) -> None:
        self.batches = _partition(view)
        self.next = 0
        if self.pipeline:
            rank = {j: (b, j) for b, batch in enumerate(self.batches) for j in batch}
            self._inner = _SortedFPipeline(rank)
            self._inner.setup(view)

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        if self._inner is not None:
            self._inner.on_events(now, events, view, act)
            return
        if any(e.kind == COMPLETION for e in events) or now == 0:
            if not view.running and self.next < len(self.batches):
                for j in self.batches[self.next]:
                    act.start(j)
                self.next += 1

    def report(self, instance):
        return {"batches": [list(b) for b in self.batches]}


class _SortedFPipeline(FutureCheckGreedy):
    """``pipeline=true``: batch order under the exact future-memory check (true lengths)."""

    name = "sorted-f"

    def __init__(self, rank: dict[int, tuple[int, int]]) -> None:
        super().__init__()
        self.rank = rank

    def priority(self, view: ClairvoyantView, j: int):
        return self.rank[j]

    def length(self, view: ClairvoyantView, j: int) -> int:
        return view.responses[j]
