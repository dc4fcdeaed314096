"""``rect`` — Rect, non-clairvoyant rectangle strip scheduling (main paper, Algorithm 1, §4).

Each job is a rectangle of known width ``w_i`` and unknown processing time
``p_i``.  Attempt level ``r`` has length cap ``base^r`` and area budget
``B = w_i·base^r``.  All level-0 attempts start pending; the pending queue is
ordered by budget, ties by job index (then level).  At time 0 and after each
event — processed one at a time, completions before expiries, each kind by job
index (the engine's event order) — the greedy admission scan runs: while the
queue is non-empty and its minimum-budget attempt fits (active widths + ``w``
≤ ``M``), start it; stop at the first that does not fit (no skipping).  Under a
batch cap ``B`` (SPEC §10.1) the scan also stops while ``B`` attempts run.  An
attempt that runs its cap without completing expires; level ``r+1`` is queued.

As a KV policy (SPEC §6.1): ``w_i = M`` for large jobs (``s_i > Λ``, Λ =
``lam·M``), ``w_i = 2 s_i`` for small ones.  The real memory ``s_i + u + 1``
stays ≤ ``w_i`` when small jobs are prompt-heavy, which is the instance class
Rect is defined for.  With ``capped=True`` (Route's prompt-heavy branch) the
job's length is ``min(o_i, s_i)``: an attempt is capped at ``min(base^r, s_i)``
rounds and reaching ``s_i`` rounds counts as completing the capped job (it
certifies ``o_i > s_i``).

Instrumentation (``instrument``): the queue state of every settled state, as
``(time, min pending budget or None, max active budget or None)`` rows, for
queue monotonicity (Lemma 4).  :func:`lemma5_bounds` gives Lemma 5's per-job
bound values.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from fractions import Fraction

from ..engine.contract import COMPLETION, EXPIRY, Actions, BlindPolicy, Event, View
from ..instance import Instance


def is_large(prompt: int, memory: int, lam: Fraction) -> bool:
    """``s > Λ = lam·M`` in exact arithmetic."""
    return prompt > lam * memory


def widths(prompts: Sequence[int], memory: int, lam: Fraction) -> list[int]:
    """Rect's KV widths: ``M`` for large jobs, ``2 s`` for small ones (SPEC §6.1)."""
    return [memory if is_large(s, memory, lam) else 2 * s for s in prompts]


class Rect(BlindPolicy):
    """Rect (Algorithm 1) on the jobs visible at time 0 (or the slot's pool)."""

    name = "rect"
    kills = True  # an attempt that reaches its cap 2^r expires

    def __init__(self, lam: float = 0.25, base: int = 2, capped: bool = False):
        self.lam = Fraction(str(lam))
        self.base = int(base)
        self.capped = bool(capped)
        self.params = {"lam": lam, "base": base}
        self.queue_states: list[tuple[int, int | None, int | None]] = []

    def setup(self, view: View) -> None:
        M = view.memory
        jobs = list(view.jobs)
        prompts = view.prompts
        self.M = M
        self.w: dict[int, int] = {}
        heap = []
        for j in jobs:
            s = int(prompts[j])
            w = M if is_large(s, M, self.lam) else 2 * s
            self.w[j] = w
            heap.append((w, j, 0))
        heapq.heapify(heap)
        self.heap = heap
        self.active: dict[int, int] = {}  # job -> level
        self.used = 0
        self.started = False
        self.queue_states = []

    def _scan(self, act: Actions, view: View) -> None:
        heap, w, active, M = self.heap, self.w, self.active, self.M
        base = self.base
        while heap:
            b, j, lv = heap[0]
            wj = w[j]
            if self.used + wj > M or not view.has_slot():
                break
            heapq.heappop(heap)
            self.used += wj
            active[j] = lv
            cap = base**lv
            if self.capped:
                s = int(view.prompts[j])
                if cap > s:
                    cap = s
            act.start(j, cap)
        if self.instrument:
            mx = max((w[j] * base ** active[j] for j in active), default=None)
            self.queue_states.append((view.now, heap[0][0] if heap else None, mx))

    def on_events(self, now: int, events: Sequence[Event], view: View, act: Actions) -> None:
        if not self.started:
            self.started = True
            self._scan(act, view)
        for e in events:
            k = e.kind
            if k == COMPLETION:
                j = e.job
                if j in self.active:
                    del self.active[j]
                    self.used -= self.w[j]
                    self._scan(act, view)
            elif k == EXPIRY:
                j = e.job
                if j not in self.active:
                    continue
                lv = self.active.pop(j)
                self.used -= self.w[j]
                if not (self.capped and e.info >= int(view.prompts[j])):
                    lv += 1
                    heapq.heappush(self.heap, (self.w[j] * self.base**lv, j, lv))
                self._scan(act, view)

    def report(self, instance: Instance):
        return {"queue_states": list(self.queue_states)}


def lemma5_bounds(
    memory: int, widths_: Sequence[int], p: Sequence[int]
) -> tuple[list[Fraction], int]:
    """Lemma 5 per-job bound values ``4 p_i + (4/U) Σ_j min(A_i, A_j)`` with ``A = w·p``.

    ``U = max(δ, M − Δ)`` for widths in ``[δ, Δ]`` (the given jobs' range).
    Returns the exact bound values (in the given job order) and ``U``.
    """
    n = len(p)
    if n == 0:
        return [], memory
    A = [int(w) * int(q) for w, q in zip(widths_, p)]
    U = max(min(widths_), memory - max(widths_))
    order = sorted(range(n), key=lambda i: A[i])
    S = [0] * n
    prefix = 0
    for rank, i in enumerate(order):
        S[i] = prefix + A[i] * (n - rank)
        prefix += A[i]
    return [Fraction(4 * int(p[i]) * U + 4 * S[i], U) for i in range(n)], int(U)
