"""``clairvoyant-mix`` — Clairvoyant-Mix (main paper, Appendix A.2: ``≤ 28·Opt``).

View each job as a rectangle of width ``ℓ_i = s_i + o_i`` and height ``o_i``
and split at ``λ = M/2``: narrow jobs (``ℓ_i ≤ M/2``) run by ``greedy-area``
with their true widths (peak reservation), wide jobs (``ℓ_i > M/2``) by
``greedy-area`` on the auxiliary instance in which every job reserves width
``M`` (so one at a time, in area order).  The two are merged by BlackBoxMeta
(Algorithm 3, ``k = 2``, the engine helper's slot mechanism
:class:`~kvopt.policy.blackbox.BlackBoxMeta`): stage ``r`` gives the narrow
part a slot of ``2^r`` rounds, then the wide part; each slot runs its greedy
afresh from its own time 0 on the whole part, finished jobs are dummies, and
what is still running when the slot ends is killed.

Choices (documented): a part with no job gets no slot (as the ``blackbox``
policy does; this only helps the bound, which then holds with ``k = 1``);
defined for instances without arrivals (BlackBoxMeta is offline).
"""

from __future__ import annotations

from ..instance import Instance
from .blackbox import BlackBoxMeta
from .greedy_area import GreedyArea


def mix_parts(instance: Instance) -> list[list[int]]:
    """``[narrow, wide]`` by ``2ℓ_i ≤ M`` (exact ``ℓ_i ≤ M/2``), each in job-index order."""
    M = instance.memory
    narrow = [j for j in range(instance.n) if 2 * int(instance.peaks[j]) <= M]
    wide = [j for j in range(instance.n) if 2 * int(instance.peaks[j]) > M]
    return [narrow, wide]


class ClairvoyantMix(BlackBoxMeta):
    """Greedy (true widths) on narrow jobs and greedy (width M) on wide jobs, via BlackBoxMeta."""

    name = "clairvoyant-mix"

    def __init__(self, base: int = 2, compact: bool = False):
        factories = {0: lambda: GreedyArea(reserve="peak"), 1: lambda: GreedyArea(reserve="memory")}
        self._mix_factories = factories
        super().__init__(
            self._nonempty,
            [],
            base=base,
            compact=compact,
            name="clairvoyant-mix",
            params={"base": base, "compact": compact},
        )

    def _nonempty(self, instance: Instance) -> list[list[int]]:
        return [p for p in mix_parts(instance) if p]

    def setup(self, view) -> None:
        kinds = [k for k, p in enumerate(mix_parts(view.instance)) if p]
        self._subs = [self._mix_factories[k] for k in kinds]
        super().setup(view)
