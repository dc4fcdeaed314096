"""The policy registry: every scheduling policy kvopt can simulate (SPEC §6).

How to add a policy
-------------------

1. **Write the policy** in its own module ``kvopt/policy/<name>.py`` as a
   subclass of one of the two kinds in :mod:`kvopt.engine.contract` (import
   from there only: a policy never imports the engine's event loop):

   * :class:`~kvopt.engine.contract.BlindPolicy` (non-clairvoyant): ``setup(view)`` and
     ``on_events(now, events, view, act)``.  The :class:`~kvopt.engine.contract.View`
     holds ``memory``, ``n`` (the number of jobs visible *so far*), the visible
     jobs (``view.jobs``, ``view.arrival(j)``, ``view.prompts[j]``), the running
     attempts (``view.running``: job → start, ``view.caps``) and the finished
     jobs (``view.done``, ``view.response(j)``).  It does **not** hold the
     response lengths of unfinished jobs — a completion reveals one — so a blind
     policy cannot read them.
   * :class:`~kvopt.engine.contract.ClairvoyantPolicy`: ``setup(view)`` and
     ``on_events`` receive a :class:`~kvopt.engine.contract.ClairvoyantView`, which adds
     ``view.responses[j]`` and ``view.predicted[j]`` (``predicted_response``
     where given, else the true length) of *arrived* jobs, and
     ``view.instance`` — the whole :class:`~kvopt.instance.Instance` — only
     when every job is visible at round 0 (no arrivals, no adversary; an
     offline policy restricts itself to such instances with its ``check``).

   **Visibility (SPEC §1) is enforced, not a convention.**  A job — index,
   prompt, existence — becomes visible at its arrival round; before that the
   view holds nothing of it.  ``view.prompts[j]`` (and ``responses[j]``,
   ``predicted[j]``) of a job that has not arrived raises
   :class:`~kvopt.errors.PolicyError`; these have no ``len`` and cannot be
   iterated (use ``for j in view.jobs``), and with arrivals ``view.n`` grows
   as jobs arrive, so an online policy must learn each job's data on its
   ``arrival`` event (or from ``view.jobs`` in ``setup``), never read ahead.

   ``on_events`` is called at round 0 and at every event time with the events
   in a fixed order (completions, expiries, arrivals — each by job index — then
   one ``wake``, then ``overflow`` if the running set would exceed ``M`` in
   this round).  Decide through ``act``: ``act.start(job, cap=None)`` (the
   attempt ends by itself after ``cap`` rounds: an ``expiry`` event),
   ``act.kill(job)``, ``act.wake(t)``.  The view is updated at once.
   Set ``name`` (used in errors) and ``params`` (the values used), and
   declare on the class ``kills = False`` when the policy never kills an
   attempt (non-preemptive), ``kills = True`` when it may: the registry reads
   this mark (:attr:`PolicySpec.kills`, shown by ``kvopt policies``; the
   ``online-linear-n`` validation judges only policies that never kill), and
   ``tests/test_policy_kills.py`` checks it against the schedules.

2. **What the engine enforces** (raising :class:`~kvopt.errors.PolicyError`
   with the policy, job and round, never repairing): no start before arrival
   (or of no job), of a finished job, or of a running job (two attempts); no
   reading of a job that has not arrived; no kill of a job not
   running or in its first round; caps ≥ 1; wake-ups in the future; after each
   call the running set fits ``M`` in the current round (on ``overflow`` you
   must kill); a policy may not stall with unfinished jobs, nor wake forever
   without progress (:data:`kvopt.engine.core.IDLE_CALLS`).  A refused
   decision fails the run even if the policy catches the error.  The final
   schedule is re-checked by :func:`kvopt.schedule.checked`.

3. **Register it** below in :data:`POLICIES` with a :class:`PolicySpec`:
   ``name`` (the ``--policy`` value), ``factory`` (built with :func:`_factory`,
   which imports the module lazily and calls the class with the parameters),
   ``clairvoyant``, ``params`` (:class:`Param` with typed defaults — the type
   of the default is the type ``--param KEY=VALUE`` converts to),
   ``source`` (paper and algorithm), ``applies_to`` (the instance class, in
   words) and ``check`` (a function ``(instance, params) -> str | None``
   returning the broken rule, which the command line reports with exit
   status 2).  An offline policy sets ``arrivals=False``; ``search_space``
   narrows its default search space (:meth:`PolicySpec.default_space`, the
   :class:`~kvopt.space.Space` fields its class needs, e.g. regimes).  The
   SPEC §7 claims about a policy live in :mod:`kvopt.claims` (the one
   registry; ``PolicySpec.claims`` reads it).

4. **Randomness**: a seeded policy sets ``seeded=True``; its factory receives
   ``seed`` (an int, required: :func:`make_policy` refuses ``None``) and must
   draw every random choice from ``numpy.random.default_rng(seed)``.

5. **Composition**: slot-based meta-policies reuse
   :class:`kvopt.policy.blackbox.SlotMeta` / :class:`~kvopt.policy.blackbox.BlackBoxMeta`
   (a fresh sub-policy per slot on a pool, finished jobs as dummies; the
   sub-policy's view holds only its pool).

Add a test module ``tests/test_policy_<name>.py`` (checker, completion,
blindness for blind policies).  A policy that accepts arrivals is also checked
by ``tests/test_visibility.py``: changing a job that has not arrived yet must
not change any decision before its arrival.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

from ..errors import InputError, did_you_mean
from ..usercode import POLICY_GROUP, UserCode, is_reference, load, register_object
from .classes import (  # noqa: F401  (no_arrivals: re-exported for user.py)
    _check_offline,
    _check_rect,
    _check_response,
    _check_sps,
    no_arrivals,
)
from .resolved import PolicyRef, ResolvedPolicy, resolve_policy
from .spec import Param, PolicySpec


def _factory(module: str, cls: str, seeded: bool = False):
    """A factory that imports ``kvopt.policy.<module>`` lazily and calls ``cls(**params)``."""

    def policy_class() -> type:
        return getattr(import_module(f"{__name__}.{module}"), cls)

    def make(params: dict[str, Any], seed: int | None):
        klass = policy_class()
        return klass(**params, seed=seed) if seeded else klass(**params)

    make.policy_class = policy_class  # type: ignore[attr-defined]
    return make


def _by_admission(module: str, cls: str, future_cls: str):
    """:func:`_factory` for ``cls``, building ``future_cls`` for ``admission=future`` (``sjf``:
    its queue machinery is vLLM's admission, the future check is another class)."""
    vllm, future = _factory(module, cls), _factory(module, future_cls)

    def make(params: dict[str, Any], seed: int | None):
        return (future if params.get("admission") == "future" else vllm)(params, seed)

    make.policy_class = vllm.policy_class  # type: ignore[attr-defined]
    return make


def _admission(default: str) -> Param:
    """``admission=`` of the priority policies (SPEC §10.1)."""
    return Param(
        "admission",
        default,
        "future: the exact future-memory check with predicted lengths (SPEC §6.2); vllm: "
        "admit while memory held now + s+1 fits and the batch cap allows, preempt the newest "
        "on overflow",
        choices=("future", "vllm"),
    )


_LAM = Param("lam", 0.25, "Λ as a fraction of M: jobs with s > lam·M are large", 0.0, 1.0)
_BASE = Param("base", 2, "doubling base of caps / stage lengths", 2)
_STAGGER = Param("stagger", True, "SPS may stagger groups (false: plain batches, d = τ)")
_COMPACT = Param(
    "compact", False, "end a slot as soon as its pool has no unfinished job (not in the paper)"
)
_MAIN = "Feng, Liu, Yang, Zhang 2026 (regime-aware routing)"
_WYZ = "Wang, Ye, Zhou 2025 (arXiv 2508.06133)"
_CYZ = "Chen, Ye, Zhou 2025 (arXiv 2508.14544)"
_ALSW = "Ao, Luo, Simchi-Levi, Wang 2025 (arXiv 2504.11320)"

#: Every policy, by its ``--policy`` name.  Explicit on purpose: grep here.
POLICIES: dict[str, PolicySpec] = {
    s.name: s
    for s in (
        PolicySpec(
            name="rect",
            factory=_factory("rect", "Rect"),
            clairvoyant=False,
            source=f"{_MAIN}, Algorithm 1 (Rect)",
            summary="non-clairvoyant rectangle strip scheduling with doubling caps",
            applies_to="instances without arrivals whose small jobs are all prompt-heavy",
            params=(_LAM, _BASE),
            check=_check_rect,
            arrivals=False,
            search_space={"regimes": ("large", "prompt-heavy")},
        ),
        PolicySpec(
            name="sps",
            factory=_factory("sps", "SPS"),
            clairvoyant=True,
            source="Feng, Yang, Zhang 2026 SPS subroutine — toolkit reconstruction (SPEC §6.1); "
            "claims response and gsa depend on it",
            summary="one staggered pipeline over all jobs (cap = largest response: clairvoyant)",
            applies_to="instances without arrivals",
            params=(
                Param("proxy", 0, "proxy prompt p (0: the largest prompt)", 0),
                Param("cap", 0, "cap τ (0: the largest response)", 0),
                _STAGGER,
            ),
            check=_check_sps,
            arrivals=False,
        ),
        PolicySpec(
            name="response",
            factory=_factory("response", "Response"),
            clairvoyant=False,
            source=f"{_MAIN}, Algorithm 2 (Response); SPS reconstructed",
            summary="doubling phases, SPS on jobs with s <= τ, proxy prompt min(τ, M−τ)",
            applies_to="instances without arrivals whose jobs are all response-heavy",
            params=(_BASE, _STAGGER),
            check=_check_response,
            arrivals=False,
            search_space={"regimes": ("large", "response-heavy"), "all_response_heavy": True},
        ),
        PolicySpec(
            name="blackbox",
            factory=_factory("blackbox", "RegimeBlackBox"),
            clairvoyant=True,
            source=f"{_MAIN}, Algorithm 3 (BlackBoxMeta) with the regime partition",
            summary="slots of base^r rounds per regime; Rect / Response / Rect; partition known",
            applies_to="instances without arrivals",
            params=(_LAM, _BASE, _STAGGER, _COMPACT),
            check=_check_offline,
            arrivals=False,
        ),
        PolicySpec(
            name="route",
            factory=_factory("route", "Route"),
            clairvoyant=False,
            source=f"{_MAIN}, Algorithm 4 (Route)",
            summary="routing meta-scheduler: P (capped Rect), R (Response), L (Rect) slots",
            applies_to="instances without arrivals",
            params=(_LAM, _BASE, _STAGGER, _COMPACT),
            check=_check_offline,
            arrivals=False,
        ),
        PolicySpec(
            name="route-online",
            factory=_factory("route", "RouteOnline"),
            clairvoyant=False,
            source=f"{_MAIN}, Theorem 9 / Appendix D.2 (online arrivals)",
            summary="Route with pools filled on arrival; finished jobs leave their pools",
            applies_to="all instances (arrivals allowed)",
            params=(_LAM, _BASE, _STAGGER, _COMPACT),
        ),
        PolicySpec(
            name="gsa",
            factory=_factory("gsa", "GSA"),
            clairvoyant=False,
            source="Feng, Yang, Zhang 2026, Geometric Slicing; SPS reconstructed",
            summary="phases: every unfinished job once, SPS with proxy = largest unfinished prompt",
            applies_to="instances without arrivals (designed for identical prompts)",
            params=(_BASE, _STAGGER),
            check=_check_offline,
            arrivals=False,
            search_space={"identical_prompts": True},
        ),
        # ---- clairvoyant, prediction-based and practical baselines (issue 5) ----
        PolicySpec(
            name="greedy-area",
            factory=_factory("greedy_area", "GreedyArea"),
            clairvoyant=True,
            source=f"{_MAIN}, Appendix A.1; Kong et al. 2026 SVF (proof form, Thm 3.2)",
            summary="area order; start while running peaks + own peak s+o fit in M",
            applies_to="all instances (arrivals allowed)",
            params=(Param("backfill", False, "keep scanning past a job that does not fit"),),
        ),
        PolicySpec(
            name="svf",
            factory=_factory("svf", "SVF"),
            clairvoyant=True,
            source="Kong et al. 2026, Smallest Volume First (uses predicted_response if given)",
            summary="(predicted) area order; exact future-memory admission; non-preemptive",
            applies_to="all instances (arrivals allowed)",
            params=(_admission("future"),),
        ),
        PolicySpec(
            name="svf-1bit",
            factory=_factory("svf", "SVF1Bit"),
            clairvoyant=True,
            source="Kong et al. 2026, 1-bit SVF (Theorem 3.3); T = M unless given",
            summary="proxy-volume order from the bit o <= sqrt(T); future-memory admission",
            applies_to="all instances (arrivals allowed)",
            params=(
                _admission("future"),
                Param(
                    "T",
                    None,
                    "Kong et al.'s T, the maximum model length (s + o ≤ T); threshold √T, "
                    "proxies T^(1/4), T^(3/4); default M (SPEC §6.2)",
                    minimum=1,
                    kind=int,
                ),
            ),
        ),
        PolicySpec(
            name="mcsf",
            factory=_factory("mcsf", "MCSF"),
            clairvoyant=True,
            source="Jaillet et al. 2025, MC-SF (Algorithm 1; uses predicted_response if given)",
            summary="shortest (predicted) response first under the exact future-memory check",
            applies_to="all instances (arrivals allowed)",
            params=(_admission("future"),),
        ),
        PolicySpec(
            name="mc-benchmark",
            factory=_factory("mcsf", "MCBenchmark"),
            clairvoyant=True,
            source="Jaillet et al. 2025, MC-Benchmark (§5.2, Algorithm 2)",
            summary="arrival order under MC-SF's exact future-memory check",
            applies_to="all instances (arrivals allowed)",
            params=(_admission("future"),),
        ),
        PolicySpec(
            name="clairvoyant-mix",
            factory=_factory("clairvoyant_mix", "ClairvoyantMix"),
            clairvoyant=True,
            source=f"{_MAIN}, Appendix A.2 (Clairvoyant-Mix via BlackBoxMeta)",
            summary="greedy-area on s+o <= M/2, greedy-area reserving M on the rest, k=2 slots",
            applies_to="instances without arrivals",
            params=(_BASE, _COMPACT),
            check=_check_offline,
            arrivals=False,
        ),
        PolicySpec(
            name="pack-and-schedule",
            factory=_factory("pack_and_schedule", "PackAndSchedule"),
            clairvoyant=True,
            source=f"{_MAIN}, Appendix A.3 (Theorem 6), Steinberg 1997 strip packing",
            summary="stages L=2^r: area-sorted prefix packed into M x 2L windows (Steinberg)",
            applies_to="all instances (a job joins the first stage starting after its arrival)",
            params=(
                Param(
                    "packer",
                    "steinberg",
                    "strip packer: steinberg (windows 2L) or nfdh (windows 3L)",
                    choices=("steinberg", "nfdh"),
                ),
            ),
        ),
        PolicySpec(
            name="gba",
            factory=_factory("gba", "GBA"),
            clairvoyant=True,
            source="Feng, Yang, Zhang 2026, Geometric Batching; SPS reconstructed",
            summary="response classes (2^(p-1), 2^p], shortest first, each run by SPS",
            applies_to="instances without arrivals (designed for identical prompts)",
            params=(_STAGGER,),
            check=_check_offline,
            arrivals=False,
            search_space={"identical_prompts": True},
        ),
        PolicySpec(
            name="fcfs",
            factory=_factory("fcfs", "FCFS"),
            clairvoyant=False,
            source="vLLM (Kwon et al. 2023); Jaillet et al. 2025 §5.2",
            summary="arrival order; on overflow kill the newest attempt, requeue at the front",
            applies_to="all instances (arrivals allowed)",
            params=(
                Param(
                    "admission",
                    "vllm",
                    "vllm: admit while memory held now + s+1 fits and the batch cap allows "
                    "(future needs lengths: see mc-benchmark)",
                    choices=("future", "vllm"),
                ),
            ),
        ),
        PolicySpec(
            name="alpha-protect",
            factory=_factory("alpha_protect", "AlphaProtect"),
            clairvoyant=False,
            source="Jaillet et al. 2025 §5.2 (alpha-protection greedy)",
            summary="FCFS admission below (1-alpha)M; on overflow kill all running attempts",
            applies_to="all instances (arrivals allowed)",
            params=(Param("alpha", 0.2, "protected fraction of memory", 0.0, 0.99),),
        ),
        PolicySpec(
            name="beta-clear",
            factory=_factory("alpha_protect", "BetaClear", seeded=True),
            clairvoyant=False,
            source="Jaillet et al. 2025 §5.2 (alpha-protection beta-clearing)",
            summary="as alpha-protect; on overflow kill each attempt with probability beta",
            applies_to="all instances (arrivals allowed)",
            params=(
                Param("alpha", 0.2, "protected fraction of memory", 0.0, 0.99),
                Param("beta", 0.5, "probability of killing each running attempt", 0.01, 1.0),
            ),
            seeded=True,
        ),
        PolicySpec(
            name="sjf",
            factory=_by_admission("sjf", "SJF", "SJFFuture"),
            clairvoyant=True,
            source="shortest job first on predicted_response (oracle SJF without predictions); "
            "Jaillet et al. 2025 §5.2",
            summary="queue by (predicted) response; otherwise as fcfs",
            applies_to="all instances (arrivals allowed)",
            params=(_admission("vllm"),),
        ),
        # ---- the peers' algorithms (issue 69; SPEC §6.4 of docs/spec.md) ----
        PolicySpec(
            name="sorted-f",
            factory=_factory("sorted_f", "SortedF"),
            clairvoyant=True,
            source=f"{_WYZ}, Sorted-F (F(X) = sum o / |X|^2; batch rule and execution "
            "reconstructed)",
            summary="least-F feasible batches (sum(s+o) <= M), chosen exactly, run in F order",
            applies_to="instances without arrivals (the paper's offline model)",
            params=(
                Param(
                    "pipeline",
                    False,
                    "start jobs in batch order under MC-SF's "
                    "future-memory check instead of batch after batch (not in the paper)",
                ),
            ),
            check=_check_offline,
            arrivals=False,
        ),
        PolicySpec(
            name="a-max",
            factory=_factory("intervals", "AMax"),
            clairvoyant=True,
            information="prediction-based",
            source=f"{_CYZ}, A_max (admission reconstructed: MC-SF's check at hi)",
            summary="every job planned at its interval's upper end hi; shortest hi first",
            applies_to="instances without arrivals; predicted_interval per job (else the "
            "common hull [min o, max o], the paper's model)",
            check=_check_offline,
            arrivals=False,
        ),
        PolicySpec(
            name="a-min",
            factory=_factory("intervals", "AMin"),
            clairvoyant=True,
            information="prediction-based",
            source=f"{_CYZ}, A_min (refinement and ordered eviction as summarised; reconstructed)",
            summary="estimates start at lo and rise with progress; evict least progress first",
            applies_to="instances without arrivals; predicted_interval per job (else the "
            "common hull [min o, max o], the paper's model)",
            check=_check_offline,
            arrivals=False,
        ),
        PolicySpec(
            name="wait",
            factory=_factory("wait", "Wait"),
            clairvoyant=True,
            source=f"{_ALSW}, WAIT (fluid thresholds and batching reconstructed)",
            summary="per-type groups of fluid-threshold size, started whole when they fit",
            applies_to="all instances (arrivals allowed)",
            params=(
                Param(
                    "threshold",
                    0,
                    "group size of every type (0: the fluid share M_j / (s_j + o_j))",
                    0,
                ),
            ),
        ),
        PolicySpec(
            name="nested-wait",
            factory=_factory("wait", "NestedWait"),
            clairvoyant=False,
            source=f"{_ALSW}, Nested WAIT (segments, buffer and waves reconstructed)",
            summary="nested segments first*base^k, reservations under (1-buffer)M, waves",
            applies_to="all instances (arrivals allowed)",
            params=(
                Param("threshold", 0, "wave size (0: what fills the free reserved memory)", 0),
                Param(
                    "buffer", 0.1, "safety buffer: fraction of M kept out of reservations", 0.0, 0.9
                ),
                Param("base", 2, "growth factor of the nested segments", 2),
                Param("first", 1, "length of the first segment", 1),
            ),
        ),
        PolicySpec(
            name="serial",
            factory=_factory("serial", "Serial"),
            clairvoyant=False,
            source="the Θ(n) abstract, related work of arXiv 2607.09248 (uniform causal serial "
            "policy; closes the gap of Jaillet et al.'s online model)",
            summary="one request at a time in arrival order; never kills",
            applies_to="all instances (arrivals allowed)",
        ),
    )
}


# reference → (sha256, spec) of the user policies resolved in this process
_USER_SPECS: dict[str, tuple[str | None, PolicySpec]] = {}


def get_policy(name: str | type | PolicySpec | ResolvedPolicy) -> PolicySpec:
    """The registry entry for ``name``: a built-in name or a reference (SPEC §4).

    A reference is ``path/to/file.py:Class``, ``package.module:Class``, a name an
    installed package registers in the entry-point group ``kvopt.policies``, or
    (API) the class itself; its entry is read from the class
    (:mod:`kvopt.policy.user`).  Unknown names and bad references are
    :class:`InputError` naming ``--policy`` or the reference.  A policy with its
    parameters is resolved by :func:`resolve_policy` (a :class:`ResolvedPolicy`, whose
    entry this returns as it is).
    """
    if isinstance(name, PolicySpec):
        return name
    if isinstance(name, ResolvedPolicy):
        return name.spec
    if not isinstance(name, str):
        name = policy_reference(name)
    if name in POLICIES:
        return POLICIES[name]
    try:
        obj, code = load(name, POLICY_GROUP)
    except KeyError:
        if name.endswith(".py"):  # a file without its class: kvopt never guesses which one
            raise InputError(
                f"{name!r} names a file, not a policy: add the class after a colon "
                f"({name}:ClassName)",
                source="--policy",
            ) from None
        raise InputError(
            f"unknown policy {name!r} (known: {', '.join(sorted(POLICIES))}; or a reference "
            "path/to/file.py:Class, package.module:Class, or a name registered in the "
            f"entry-point group {POLICY_GROUP})" + did_you_mean(name, POLICIES),
            source="--policy",
        ) from None
    cached = _USER_SPECS.get(name)
    if cached is not None and cached[0] == code.sha256 and cached[1].policy_class is obj:
        return cached[1]
    from .user import spec_from_class

    spec = spec_from_class(obj, code)
    _USER_SPECS[name] = (code.sha256, spec)
    return spec


def policy_reference(policy: Any) -> str:
    """The text that names ``policy`` everywhere (a name or reference as given; for a class
    handed to the API, the reference :func:`kvopt.usercode.register_object` gives it)."""
    if isinstance(policy, str):
        return policy
    if isinstance(policy, PolicySpec | ResolvedPolicy):
        return policy.name
    if isinstance(policy, type):
        for spec in POLICIES.values():
            if spec.policy_class is policy:
                return spec.name
        ref, _ = register_object(policy)
        return ref
    raise InputError(
        f"a policy is named by a string (a built-in name or a reference) or given as its class, "
        f"got {type(policy).__name__} {policy!r}",
        source="policy",
    )


def user_code(policy: str | ResolvedPolicy) -> UserCode | None:
    """The :class:`~kvopt.usercode.UserCode` of a user policy named by ``policy`` (``None``
    for a built-in): what records store and what campaign workers are sent."""
    if isinstance(policy, ResolvedPolicy):
        return policy.code
    name, _ = parse_policy(policy)
    return get_policy(name).code


def make_policy(
    name: str | type | PolicySpec | ResolvedPolicy,
    params: Mapping[str, Any] | None = None,
    seed: int | None = None,
):
    """A fresh policy object for ``name`` with ``params`` (strings are converted).

    ``name`` may be what :func:`resolve_policy` (or :func:`get_policy`) already resolved,
    so that a caller resolves a reference once (a user's file is read and hashed on every
    resolution); this is :meth:`ResolvedPolicy.make`.
    """
    return resolve_policy(name, params).make(seed)


def parse_policy(text: str | type | PolicySpec | ResolvedPolicy) -> tuple[str, dict[str, str]]:
    """``"name"`` or ``"name[key=value;key=value]"`` → ``(name, params)`` (values stay strings).

    The bracket form lets one comparison hold variants of a policy, e.g.
    ``pack-and-schedule[packer=nfdh]``; the row is labelled with the whole text.  The name
    may be a reference (``file.py:Class[k=v]``); a class (API) stands for its reference.
    """
    if not isinstance(text, str):
        return policy_reference(text), {}
    text = text.strip()
    if "[" not in text:
        return text, {}
    if not text.endswith("]"):
        raise InputError(f"expected NAME[KEY=VALUE;…], got {text!r}", source="--policies")
    name, inner = text[:-1].split("[", 1)
    params: dict[str, str] = {}
    for item in filter(None, (x.strip() for x in inner.split(";"))):
        if "=" not in item:
            raise InputError(f"expected KEY=VALUE in {text!r}, got {item!r}", source="--policies")
        key, value = (x.strip() for x in item.split("=", 1))
        if key in params:
            raise InputError(f"parameter {key!r} given twice in {text!r}", source="--policies")
        params[key] = value
    return name.strip(), params


__all__ = [
    "POLICIES",
    "Param",
    "PolicyRef",
    "PolicySpec",
    "ResolvedPolicy",
    "get_policy",
    "make_policy",
    "no_arrivals",
    "parse_policy",
    "policy_reference",
    "resolve_policy",
    "user_code",
    "is_reference",
]
