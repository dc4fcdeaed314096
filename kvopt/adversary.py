"""Adaptive adversaries for lower-bound constructions (SPEC §7), run by the engine's hook.

An adversary (:class:`kvopt.engine.Adversary`) watches a policy's decisions as
they happen and releases new jobs at future rounds
(``simulate(..., adversary=...)``).  The jobs it releases are invisible to the
policy until they arrive, like any other job; ``SimulationResult.instance`` is
the final instance, which replays as an ordinary instance (same schedule for a
deterministic policy) and can be solved exactly.

``online-sqrt-n`` — Jaillet et al. 2025, the lower-bound theorem ("Fix a
deterministic algorithm …"): every deterministic online policy has ratio
``Ω(√n)`` in total latency ``Σ (C_i − a_i)`` under adaptive arrivals.  With
memory ``M`` (even, ``≥ 4``) and ``s_i = 1`` throughout:

* round 0: one long job, ``s = 1``, ``o = M − 1`` (job 0);
* when the policy *first* starts job 0, at round ``b``, release ``M/2`` short
  jobs, ``s = 1``, ``o = 1`` (jobs ``1 … M/2``), all arriving at round
  ``r = b + M − k`` with ``k = ⌈√M / 2⌉``; ``n = M/2 + 1``.

Integer rounding (the paper's ``r = b + M − √M/2`` is not an integer in
general): ``k = ⌈√M/2⌉``, computed exactly as the least ``k`` with ``4k² ≥ M``,
so ``r = b + M − k ≤ b + M − √M/2`` (``r`` rounded down: the shorts arrive at
least ``√M/2`` rounds before ``b + M``).  The proof's argument is unchanged:
from ``r`` until the long job completes at ``b + M − 1`` it holds ``t − b + 2``
in round ``t``, leaving ``b + M − 2 − t ≤ k − 2`` tokens free, room for about
``k²/4 ≈ M/16`` one-round shorts (each holds 2); the other shorts start at
``b + M − 1`` or later, each with latency ``≥ k ≥ √M/2``, while Opt's latency
is ``≤ 3.5 M``.  ``r > b`` because ``k < M`` for ``M ≥ 4``, so the release is
always for a future round.  A later restart of job 0 (after a kill) releases
nothing more.  (The argument assumes the long job keeps running; a policy that
kills it to run the shorts pays for its restart instead — the construction is
the paper's, the verdict is measured.)

``online-linear-n`` — the Θ(n) abstract (the documentation's bibliography)
("closing the gap" of Jaillet et al.'s online model): every deterministic
**non-preemptive** online policy has total-latency ratio ``≥ (n−1)/12``.  The
abstract fixes ``M = 2(n−1)n``; the other constants are this toolkit's reading
of its one-sentence description (SPEC §7):

* round 0: one memory-filling long request, ``s = M − 2n``, ``o = 2n`` (job 0;
  its peak is exactly ``M``);
* when the policy *first* starts job 0, at round ``b``, release ``n − 1`` wide
  one-token requests, ``s = 2n − 1``, ``o = 1`` (jobs ``1 … n−1``), all
  arriving at round ``b + n`` (halfway through the long run).

While job 0 runs it holds at least ``M − 2n + 1``, leaving at most ``2n − 1``
free, and a short needs ``2n``: no short overlaps the long one.  The shorts
fill ``M`` exactly when all run together (``(n−1)·2n = M``).  So a
non-preemptive policy that started job 0 runs the shorts only after
``b + 2n``; a hindsight schedule may instead run the shorts at ``b + n`` and
the long job after them.  ``n ≥ 3``: at ``n = 2`` the long request's prompt
``M − 2n`` would be 0, which the model does not allow (``s_i ≥ 1``).  As for
``online-sqrt-n``, a later restart of job 0 releases nothing more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .engine import Event, Release, SimulationResult
from .errors import InputError
from .instance import Instance, Job
from .simulation import simulate


def half_sqrt_ceil(memory: int) -> int:
    """``⌈√M / 2⌉`` exactly: the least ``k ≥ 0`` with ``4k² ≥ M``."""
    k = 0
    while 4 * k * k < memory:
        k += 1
    return k


def _check_memory(memory: Any) -> int:
    if isinstance(memory, bool) or not isinstance(memory, int) or memory < 4 or memory % 2:
        raise InputError(f"must be an even integer >= 4, got {memory!r}", source="memory")
    return int(memory)


def sqrt_n_instance(memory: int) -> Instance:
    """The initial instance of ``online-sqrt-n``: one long job ``s = 1, o = M − 1`` at round 0."""
    M = _check_memory(memory)
    return Instance(
        M,
        (Job(1, M - 1, 0, "long"),),
        name=f"online-sqrt-n-M{M}",
        meta={"source": "Jaillet et al. 2025, lower-bound theorem (online-sqrt-n)"},
    )


class _ShortsOnFirstStart:
    """Both constructions: when the policy first starts the long job 0 (round ``b``), release
    the short jobs of :meth:`_shorts` at round :meth:`_release_round`; nothing else."""

    b: int | None = None  # round the policy first started job 0
    r: int | None = None  # release round of the shorts
    shorts: list[int]

    def _release_round(self, b: int) -> int:
        raise NotImplementedError

    def _shorts(self) -> tuple[int, int, int]:
        """``(prompt, response, count)`` of the released jobs."""
        raise NotImplementedError

    def on_decisions(
        self,
        now: int,
        starts: Sequence[int],
        kills: Sequence[int],
        release: Release,
        events: Sequence[Event],
    ) -> None:
        if self.b is not None or 0 not in starts:
            return
        self.b = now
        self.r = self._release_round(now)
        prompt, response, count = self._shorts()
        self.shorts = [release(prompt, response, self.r, id=f"short{q}") for q in range(count)]


class SqrtNAdversary(_ShortsOnFirstStart):
    """The adaptive adversary of ``online-sqrt-n`` (see the module docstring)."""

    name = "online-sqrt-n"

    def __init__(self, memory: int):
        self.memory = _check_memory(memory)
        self.k = half_sqrt_ceil(self.memory)
        self.b: int | None = None  # round the policy first started job 0
        self.r: int | None = None  # release round of the shorts
        self.shorts: list[int] = []

    def setup(self, instance: Instance) -> None:
        if (
            instance.memory != self.memory
            or instance.n < 1
            or instance.jobs[0].response != (self.memory - 1)
        ):
            raise InputError(
                "the online-sqrt-n adversary runs on sqrt_n_instance(memory)", source="instance"
            )

    def _release_round(self, b: int) -> int:
        return b + self.memory - self.k  # M − ⌈√M/2⌉ rounds into the long job's run

    def _shorts(self) -> tuple[int, int, int]:
        return 1, 1, self.memory // 2


def linear_n_memory(n: Any) -> int:
    """``M = 2(n−1)n``, the memory of the ``online-linear-n`` construction; ``n ≥ 3`` (see the
    module docstring), else :class:`InputError` naming ``n``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 3:
        raise InputError(
            f"must be an integer >= 3 (the long request's prompt M - 2n = 2n(n-2) must be >= 1), "
            f"got {n!r}",
            source="n",
        )
    return 2 * (int(n) - 1) * int(n)


def _check_linear(n: Any, memory: Any) -> tuple[int, int]:
    M = linear_n_memory(n)
    if memory is not None and (isinstance(memory, bool) or memory != M):
        raise InputError(
            f"the online-linear-n construction with n = {n} uses M = 2(n-1)n = {M}, got {memory!r}",
            source="memory",
        )
    return int(n), M


def linear_n_instance(n: int, memory: int | None = None) -> Instance:
    """The initial instance of ``online-linear-n``: one long job ``s = M − 2n, o = 2n`` at round 0,
    ``M = 2(n−1)n`` (``memory``, if given, must be that value)."""
    n, M = _check_linear(n, memory)
    return Instance(
        M,
        (Job(M - 2 * n, 2 * n, 0, "long"),),
        name=f"online-linear-n-n{n}",
        meta={
            "source": "Theta(n) abstract, related work of arXiv 2607.09248 (online-linear-n); "
            "constants beyond M = 2(n-1)n are the toolkit's reading",
            "n": n,
        },
    )


class LinearNAdversary(_ShortsOnFirstStart):
    """The adaptive adversary of ``online-linear-n`` (see the module docstring)."""

    name = "online-linear-n"

    def __init__(self, n: int, memory: int | None = None):
        self.n, self.memory = _check_linear(n, memory)
        self.b: int | None = None  # round the policy first started job 0
        self.r: int | None = None  # release round of the shorts
        self.shorts: list[int] = []

    def setup(self, instance: Instance) -> None:
        n, M = self.n, self.memory
        if (
            instance.memory != M
            or instance.n != 1
            or (instance.jobs[0].prompt, instance.jobs[0].response) != (M - 2 * n, 2 * n)
        ):
            raise InputError(
                "the online-linear-n adversary runs on linear_n_instance(n)", source="instance"
            )

    def _release_round(self, b: int) -> int:
        return b + self.n  # halfway through the long job's 2n rounds

    def _shorts(self) -> tuple[int, int, int]:
        return 2 * self.n - 1, 1, self.n - 1


def run_linear_n(
    policy: str,
    n: int,
    params: Mapping[str, Any] | None = None,
    seed: int | None = None,
    trace: bool = False,
) -> SimulationResult:
    """Run ``policy`` (a registry name) against :class:`LinearNAdversary` on
    :func:`linear_n_instance`; the result's ``instance`` holds the ``n`` jobs."""
    adv = LinearNAdversary(n)
    return simulate(
        linear_n_instance(n), policy, params=params, seed=seed, trace=trace, adversary=adv
    )


def run_sqrt_n(
    policy: str,
    memory: int,
    params: Mapping[str, Any] | None = None,
    seed: int | None = None,
    trace: bool = False,
) -> SimulationResult:
    """Run ``policy`` (a registry name) against :class:`SqrtNAdversary` on :func:`sqrt_n_instance`.

    The result's ``instance`` holds the ``M/2 + 1`` jobs; the policy's class is
    checked on it.  Total latency: ``sum(result.completion_times) −
    sum(result.instance.arrivals)``.
    """
    adv = SqrtNAdversary(memory)
    return simulate(
        sqrt_n_instance(memory), policy, params=params, seed=seed, trace=trace, adversary=adv
    )


def total_latency(result: SimulationResult) -> int:
    """``Σ (C_i − a_i)`` of a run over its final instance."""
    inst = result.instance
    assert inst is not None
    return int(sum(result.completion_times) - int(inst.arrivals.sum()))


__all__ = [
    "LinearNAdversary",
    "SqrtNAdversary",
    "half_sqrt_ceil",
    "linear_n_instance",
    "linear_n_memory",
    "run_linear_n",
    "run_sqrt_n",
    "sqrt_n_instance",
    "total_latency",
]
