"""The theorem claims of SPEC §7, in one registry.

Each :class:`Claim` states what a paper proves, where (paper, lemma or
theorem), about which policy or invariant, on which instance class (a
:class:`~kvopt.space.Space`, so that membership is decided and members are
produced by the same object), and with which bound: a constant, a formula
evaluated per instance (``1 + 2/(1−α)``), or none (``route``: "some
constant"; then validation reports the worst ratio and its growth).

``kvopt policies`` lists, per policy, the claims that name it
(:func:`claims_for_policy`), and ``kvopt validate`` validates them
(:mod:`kvopt.validate`); both read this registry only.

Kinds (``Claim.kind``):

* ``ratio`` — ``ALG ≤ bound · Opt`` on every instance of the class (certified
  ratios, SPEC §8); ``objective`` says which objective;
* ``per-job`` — an inequality per job, checked on every schedule simulated;
* ``invariant`` — a property of every settled state of a run;
* ``bound`` — a lower bound on Opt, checked on every instance solved exactly;
* ``growth`` — a lower-bound construction whose ratio must grow (verdict
  ``reproduced``/``inconclusive``).

The constants hold for the papers' parameters (SPEC §7): ``lam = 0.25`` and
``base = 2`` for Rect, Response, BlackBoxMeta and Route; claims carry these
in ``params`` and validation runs with them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from .errors import InputError, did_you_mean
from .instance import Instance
from .space import Space


class ClaimKind(StrEnum):
    """What a claim states (see the module docstring); the value is its name in JSON."""

    def __repr__(self) -> str:  # shows as its string, as before the enum (a function, not
        return str.__repr__(self)  # str's slot: Sphinx describes ClaimVerdict's default by it)

    RATIO = "ratio"
    PER_JOB = "per-job"
    INVARIANT = "invariant"
    BOUND = "bound"
    GROWTH = "growth"


RATIO, PER_JOB, INVARIANT, BOUND, GROWTH = ClaimKind
KINDS = tuple(ClaimKind)

# What Claim.bound_text() says of a claim without a number or a formula, per kind: only a ratio
# claim has a constant that a paper may leave unnamed.
_NO_CONSTANT = {
    RATIO: "a constant (not given)",
    PER_JOB: "none: a per-job inequality (each job's lhs/rhs <= 1)",
    INVARIANT: "none: an invariant of every run",
    BOUND: "none: a lower bound on Opt",
    GROWTH: "none: the claim is that the ratio grows",
}


def alpha(inst: Instance) -> Fraction:
    """``α = max_i (s_i + o_i) / M`` (Kong et al.; main paper Cor. 2)."""
    if inst.n == 0:
        return Fraction(0)
    return Fraction(int(inst.peaks.max()), inst.memory)


def greedy_bound(inst: Instance) -> float:
    """``1 + 2/(1−α)`` (Kong et al. Thm 3.2), for ``α < 1``."""
    a = alpha(inst)
    if a >= 1:
        return float("inf")
    return float(1 + 2 / (1 - a))


def interval_ratio(inst: Instance) -> Fraction:
    """``u/ℓ = 1/α`` of Chen, Ye, Zhou 2025: the largest ``hi/lo`` of the intervals a
    prediction-based policy uses (``predicted_interval``; on an instance without intervals
    or predictions the common hull ``[min o, max o]``, the paper's model — see
    :mod:`kvopt.policy.intervals`)."""
    if inst.n == 0:
        return Fraction(1)
    if inst.has_intervals or inst.has_predictions:
        return max(Fraction(hi, lo) for lo, hi in inst.intervals)
    return Fraction(int(inst.responses.max()), int(inst.responses.min()))


def a_max_bound(inst: Instance) -> float:
    """``α⁻¹(1 + α⁻¹)/2`` with ``α⁻¹ = u/ℓ`` (:func:`interval_ratio`): A_max's upper bound as
    the summaries of Chen, Ye, Zhou 2025 give it (the fraction bar is this toolkit's reading)."""
    r = interval_ratio(inst)
    return float(r * (1 + r) / 2)


#: The constant of the toolkit's form of A_min's log-scale bound (:func:`a_min_bound`): the
#: paper proves ``O(log α⁻¹)`` but its constant could not be read; 4 was fixed before any
#: search, so that the form is falsifiable (a violation says the form is too tight for the
#: reconstruction, not that the paper is wrong).
A_MIN_CONSTANT = 4


def a_min_bound(inst: Instance) -> float:
    """``4 (1 + log2(u/ℓ))``: the toolkit's form of A_min's ``O(log α⁻¹)`` (Chen, Ye, Zhou
    2025), with :data:`A_MIN_CONSTANT`."""
    import math

    return float(A_MIN_CONSTANT * (1 + math.log2(interval_ratio(inst))))


def n_bound(inst: Instance) -> float:
    """``n``, the per-instance bound of ``serial-upper`` (the Θ(n) abstract)."""
    return float(inst.n)


@dataclass(frozen=True)
class Claim:
    """One claim of SPEC §7 (see the module docstring)."""

    id: str
    statement: str
    source: str
    kind: ClaimKind
    klass: str
    space: Space | None
    policies: tuple[str, ...] = ()
    bound: float | None = None
    bound_formula: str | None = None
    bound_fn: Callable[[Instance], float] | None = None
    objective: str = "total"
    params: Mapping[str, Any] = field(default_factory=dict)
    reconstruction: bool = False
    note: str = ""
    #: what the reconstruction is, when it is not SPS (``recon_text`` of a verdict says it)
    reconstructed: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ClaimKind(self.kind))
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    @property
    def policy(self) -> str | None:
        """The policy the claim is about (the first listed), if any."""
        return self.policies[0] if self.policies else None

    def bound_for(self, inst: Instance) -> float | None:
        """The claim's bound on ``inst`` (a constant, the formula's value, or ``None``)."""
        if self.bound_fn is not None:
            return self.bound_fn(inst)
        return self.bound

    def bound_text(self) -> str:
        """The claim's constant as printed (``kvopt validate --list``, the claims page, a
        record's ``meta``): the number or formula of a ratio claim, ``a constant (not given)``
        for a ratio claim that names none (``route``), and what stands in for a constant for the
        other kinds, which have none (``blackbox-per-job``'s ``4k-1`` is part of its
        per-job inequality, not a ratio's constant)."""
        if self.bound_formula:
            return self.bound_formula
        if self.bound is not None:
            return f"{self.bound:g}"
        return _NO_CONSTANT[self.kind]

    def rule(self, inst: Instance) -> str | None:
        """Why ``inst`` is outside the claim's class, or ``None`` (structural rules of its
        space; the space's size ranges only bound where validation searches)."""
        if self.space is None:
            return None
        rule = self.space.rule(inst, sizes=False)
        if rule is None and self.bound_fn is not None:
            b = self.bound_fn(inst)
            if not (0 < b < float("inf")):  # e.g. 1 + 2/(1-alpha) at alpha = 1: no claim there
                return f"the claim's bound {self.bound_text()} is {b} on this instance (not finite)"
        return rule

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "statement": self.statement,
            "source": self.source,
            "kind": self.kind,
            "class": self.klass,
            "policies": list(self.policies),
            "bound": self.bound,
            "bound_formula": self.bound_formula,
            "objective": self.objective,
            "params": dict(self.params),
            "reconstruction": self.reconstruction,
            "space": self.space.to_dict() if self.space else None,
            "note": self.note,
        }


_MAIN = "Feng, Liu, Yang, Zhang 2026 (arXiv 2607.09248)"
_FYZ = "Feng, Yang, Zhang 2026 (arXiv 2601.22996), abstract"
_THETA_N = (
    "the Theta(n) abstract: R_det(n) = Theta(n) for deterministic online batching under KV-cache "
    "memory (machine-checked in Lean 4; related work of arXiv 2607.09248; docs: Bibliography)"
)
_WYZ = (
    'Wang, Ye, Zhou 2025 (arXiv 2508.06133), abstract: "competitive ratios scale up '
    'sublinearly with the memory limit"'
)
_WYZ_SF = (
    "Wang, Ye, Zhou 2025 (arXiv 2508.06133): Sorted-F, F(X) = sum o / |X|^2, constant "
    "competitive ratio at most 48 (abstract and summaries; Kong et al. 2026 cite it as 48)"
)
_CYZ = "Chen, Ye, Zhou 2025 (arXiv 2508.14544)"
_PAPER = {"lam": 0.25, "base": 2}
_ROUTE = {"lam": 0.25, "base": 2, "stagger": True, "compact": False}

# The searchable classes.  Sizes are kept where exact Opt is cheap (n ≤ 8, M ≤ 48,
# responses ≤ 16); validation widens them with Space.replace where it pays.
_ANY = Space(n_min=1, n_max=8, memory_min=8, memory_max=48, max_response=16)
_ANY_ARR = _ANY.replace(arrivals=True, max_arrival=16)
_LARGE = _ANY.replace(regimes=("large",))
_PROMPT = _ANY.replace(regimes=("prompt-heavy",))
_RECT = _ANY.replace(regimes=("large", "prompt-heavy"))
_RESP_SMALL = _ANY.replace(regimes=("response-heavy",))
_RESP_ALL = _ANY.replace(regimes=("large", "response-heavy"), all_response_heavy=True)
_ALPHA = _ANY.replace(peak_strict=True)
_IDENT = _ANY.replace(identical_prompts=True)
_MCSF = _ANY.replace(identical_prompts=True, peak_limit=Fraction(1, 2), memory_min=12)

#: Every claim of SPEC §7, by id, in the SPEC's order.  Explicit on purpose: grep here.
CLAIMS: dict[str, Claim] = {
    c.id: c
    for c in (
        Claim("area-lb", "area bound <= Opt", f"{_MAIN}, Lemma 1", BOUND, "all instances", _ANY_ARR,
              note="checked on every instance solved exactly"),
        Claim("rect-large", "Rect <= 36 Opt", f"{_MAIN}, Proposition 2", RATIO,
              "all jobs large (s > M/4), all at time 0", _LARGE, ("rect",), bound=36.0,
              params=_PAPER),
        Claim("rect-prompt", "Rect <= 36 Opt", f"{_MAIN}, Proposition 3", RATIO,
              "all jobs small prompt-heavy (s <= M/4, o <= s), all at time 0", _PROMPT, ("rect",),
              bound=36.0, params=_PAPER),
        Claim("rect-monotone", "queue monotonicity holds in every settled state of Rect",
              f"{_MAIN}, Lemma 4", INVARIANT, "any Rect run", _RECT, ("rect",), params=_PAPER),
        Claim("rect-per-job", "C_i <= 4 p_i + (4/U) sum_j min(A_i, A_j) (Lemma 5) in every Rect run",
              f"{_MAIN}, Lemma 5", PER_JOB, "any Rect run", _RECT, ("rect",), params=_PAPER),
        Claim("response", "Response <= (236/3) Opt", f"{_MAIN}, Theorem 3", RATIO,
              "all jobs small (s <= M/4) and response-heavy (o > s), no arrivals", _RESP_SMALL,
              ("response",), bound=236 / 3, params={"base": 2}, reconstruction=True),
        Claim("blackbox-per-job", "C_i <= (2(k+l-1)+1) C_i^l <= (4k-1) C_i^l", f"{_MAIN}, Lemma 10",
              PER_JOB, "any partition (here: the regimes), all at time 0", _ANY, ("blackbox",),
              params=_ROUTE),
        Claim("response-subset",
              "Response on a subset containing i finishes i no later than Response on all",
              f"{_MAIN}, Lemma 15", PER_JOB, "response-heavy jobs, all at time 0", _RESP_ALL,
              ("response",), params={"base": 2}, reconstruction=True),
        Claim("route-per-job",
              "C_i <= 7 C^P_i (prompt-heavy), 11 C^L_i (large), max(8 C^P_i + C^R_i, 9 C^R_i) "
              "(response-heavy)", f"{_MAIN}, Lemma 11 / proof of Theorem 1", PER_JOB,
              "all instances, all at time 0", _ANY, ("route",), params=_ROUTE, reconstruction=True),
        Claim("route", "Route <= c Opt with c a constant", f"{_MAIN}, Theorem 1", RATIO,
              "all instances, all at time 0", _ANY, ("route",), params=_ROUTE, reconstruction=True,
              note="no constant given: judged by growth sweeps of the worst records (SPEC §9)"),
        Claim("route-makespan", "Route's makespan <= c Opt_span with c a constant",
              f"{_MAIN}, Theorem 8", RATIO, "all instances, all at time 0", _ANY, ("route",),
              objective="makespan", params=_ROUTE, reconstruction=True,
              note="no constant given: judged by growth sweeps of the worst records (SPEC §9)"),
        Claim("greedy-area", "greedy-area <= (1 + 2/(1-alpha)) Opt, alpha = max_i (s_i+o_i)/M",
              "Kong et al. 2026, Theorem 3.2; main paper Corollary 2", RATIO,
              "alpha < 1, all jobs at time 0 (burst arrivals)", _ALPHA, ("greedy-area",),
              bound_formula="1 + 2/(1-alpha)", bound_fn=greedy_bound),
        Claim("svf", "SVF <= (1 + 2/(1-alpha)) Opt (exact future-memory admission, stop at the "
              "first job that does not fit)", "Kong et al. 2026, Theorem 3.2", RATIO,
              "alpha < 1, all jobs at time 0", _ALPHA, ("svf",),
              bound_formula="1 + 2/(1-alpha)", bound_fn=greedy_bound),
        Claim("route-online", "RouteOnline <= c Opt with arrivals (c a constant)",
              f"{_MAIN}, Theorem 9", RATIO, "online arrivals", _ANY_ARR, ("route-online",),
              params=_ROUTE, reconstruction=True,
              note="no constant given: judged by growth sweeps of the worst records (SPEC §9)"),
        Claim("clairvoyant-mix", "Clairvoyant-Mix <= 28 Opt", f"{_MAIN}, Appendix A.2", RATIO,
              "all instances, all at time 0", _ANY, ("clairvoyant-mix",), bound=28.0,
              params={"base": 2, "compact": False}),
        Claim("pack-and-schedule", "Pack-and-Schedule <= 16 Opt (Steinberg)",
              f"{_MAIN}, Theorem 6", RATIO, "all jobs at time 0 (offline model)", _ANY,
              ("pack-and-schedule",), bound=16.0, params={"packer": "steinberg"}),
        Claim("gsa", "GSA <= 61.92 Opt (32 in the large-memory regime)", _FYZ, RATIO,
              "identical prompts, all at time 0 (offline batch)", _IDENT, ("gsa",), bound=61.92,
              reconstruction=True),
        Claim("gba", "GBA <= 10.67 Opt (6.75 in the large-memory regime)", _FYZ, RATIO,
              "identical prompts, all at time 0", _IDENT, ("gba",), bound=10.67,
              reconstruction=True),
        Claim("mcsf", "MC-SF <= 9216 Opt", "Jaillet et al. 2025 (arXiv 2502.07115), Theorem 4.3",
              RATIO, "identical prompts, all at time 0, s + max o <= M/2", _MCSF, ("mcsf",),
              bound=9216.0),
        Claim("fcfs-growth",
              "FCFS's ratio is not bounded by a constant: with heterogeneous prompts it grows "
              "with M", _WYZ, GROWTH, "all jobs at time 0, prompts of different sizes", _ANY,
              ("fcfs",), note="validated by discovery: typed campaigns and growth sweeps, no "
              "construction given"),
        Claim("sf-growth",
              "shortest-first rules (sjf, mcsf) are not O(1) with heterogeneous prompts: the "
              "ratio grows with M", _WYZ, GROWTH, "all jobs at time 0, prompts of different sizes",
              _ANY, ("sjf", "mcsf"), note="validated by discovery: typed campaigns and growth "
              "sweeps, no construction given"),
        Claim("online-linear-n",
              "every deterministic non-preemptive online policy has total-latency ratio >= "
              "(n-1)/12 (Theta(n), stronger than Omega(sqrt(n)))", _THETA_N, GROWTH,
              "the abstract's construction as reconstructed here: M = 2(n-1)n; one long request "
              "s = M-2n, o = 2n at time 0; when the policy starts it at b, n-1 one-token requests "
              "s = 2n-1 at b + n", None,
              ("serial", "mcsf", "mc-benchmark", "greedy-area", "svf", "svf-1bit",
               "pack-and-schedule", "fcfs", "sjf", "alpha-protect", "route-online"),
              objective="latency",
              note="policies that may kill are reported, not judged; constants beyond "
                   "M = 2(n-1)n are the toolkit's reading"),
        Claim("serial-upper", "serial's total latency <= n Opt's", _THETA_N, RATIO,
              "online arrivals", _ANY_ARR.replace(n_min=2), ("serial",), bound_formula="n",
              bound_fn=n_bound, objective="latency",
              note="searched from n = 2: at n = 1 the ratio is 1 = n on every instance"),
        Claim("single-priority",
              "no single priority rule is O(1): the ratio grows like sqrt(L) on the X=(1,L), "
              "Y=(L^3,1) families", f"{_MAIN}, Proposition 1", GROWTH,
              "Proposition 1 construction", None, ("greedy-area", "sjf", "fcfs", "svf", "route")),
        Claim("online-sqrt-n",
              "every deterministic online policy has ratio Omega(sqrt(n)) in total latency "
              "sum(C_i - a_i) under adaptive arrivals",
              "Jaillet et al. 2025, lower-bound theorem", GROWTH,
              "all s_i = 1; a long request o = M-1 at time 0; when the policy starts it at b, "
              "M/2 one-token requests at b + M - sqrt(M)/2; n = M/2 + 1", None,
              ("fcfs", "mcsf", "route-online", "greedy-area"), objective="latency"),
        Claim("sorted-f", "Sorted-F <= 48 Opt", _WYZ_SF, RATIO,
              "all jobs at time 0 (the paper's offline model), heterogeneous prompts", _ANY,
              ("sorted-f",), bound=48.0, params={"pipeline": False}, reconstruction=True,
              reconstructed="the toolkit's reconstruction of Sorted-F (docs/spec.md §6.4)",
              note="the batch rule and the execution of Sorted-F are reconstructed (batch = "
                   "sum(s+o) <= M, least F chosen exactly, batches one after the other); the "
                   "48 is stated for the large-memory regime (Kong et al.: alpha -> 0) and is "
                   "validated here on every instance of the class"),
        Claim("a-max", "A_max <= (u/l)(1 + u/l)/2 Opt (alpha = l/u; grows like alpha^-2)",
              f"{_CYZ}, A_max's competitive ratio as summaries give it", RATIO,
              "identical prompts, all at time 0, one interval [l, u] containing every length "
              "(here the hull [min o, max o])", _IDENT, ("a-max",),
              bound_formula="(u/l)(1 + u/l)/2", bound_fn=a_max_bound, reconstruction=True,
              reconstructed="the toolkit's reconstruction of A_max and its reading of the bound "
                            "(docs/spec.md §6.4)",
              note="the paper's benchmark is hindsight shortest-first (H-SF); kvopt's Opt is "
                   "at most H-SF, so a violation may come from the benchmark; the fraction "
                   "bar of the bound is this toolkit's reading of the summary"),
        Claim("a-min", "A_min <= 4 (1 + log2(u/l)) Opt: the log-scale ratio O(log 1/alpha) "
              "in the toolkit's form", f"{_CYZ}, A_min's log-scale competitive ratio", RATIO,
              "identical prompts, all at time 0, one interval [l, u] containing every length "
              "(here the hull [min o, max o])", _IDENT, ("a-min",),
              bound_formula="4 (1 + log2(u/l))", bound_fn=a_min_bound, reconstruction=True,
              reconstructed="the toolkit's reconstruction of A_min and its form of the log-scale "
                            "bound (docs/spec.md §6.4)",
              note="the paper's constant could not be read: the form 4 (1 + log2(u/l)) was "
                   "fixed before any search; A_min's refinement and eviction are reconstructed "
                   "from summaries"),
    )
}  # fmt: skip


#: A user's claims (SPEC §4: ``kvopt validate --policy REF --ratio-at-most C``, ``--bounded``,
#: ``--claims-file``), registered in this process by :func:`register_claim` while they are
#: validated (and in each worker that evaluates for them); never mixed into :data:`CLAIMS`.
USER_CLAIMS: dict[str, Claim] = {}


def register_claim(claim: Claim) -> Claim:
    """Make a user's claim known by its id in this process (:func:`get_claim` finds it)."""
    if claim.id in CLAIMS:
        raise InputError(f"id {claim.id!r} is a built-in claim of SPEC §7; choose another",
                         source="claim")  # fmt: skip
    USER_CLAIMS[claim.id] = claim
    return claim


def get_claim(claim_id: str) -> Claim:
    """The claim ``claim_id``; :class:`InputError` listing the valid ids otherwise."""
    try:
        return CLAIMS[claim_id]
    except KeyError:
        if claim_id in USER_CLAIMS:
            return USER_CLAIMS[claim_id]
        raise InputError(
            f"unknown claim {claim_id!r} (valid: {', '.join(CLAIMS)})"
            + did_you_mean(claim_id, [*CLAIMS, *USER_CLAIMS]),
            source="--claims",
        ) from None


class Formula:
    """A claim's constant as a formula in ``alpha``, ``n`` and ``M`` (SPEC §4 user claims).

    ``alpha = max_i (s_i + o_i)/M`` (:func:`alpha`), ``n`` the number of jobs, ``M`` the
    memory.  Numbers, ``+ - * / **``, parentheses and ``sqrt``, ``log`` (natural),
    ``log2``, ``min``, ``max`` are allowed, nothing else (the text is parsed, never
    executed).  Calling it on an instance gives the bound there (``inf`` where the formula
    divides by zero, e.g. ``1 + 2/(1-alpha)`` at ``alpha = 1``: no bound).  It pickles as
    its text, so worker processes evaluate the same bound.
    """

    NAMES = ("alpha", "n", "M")
    FUNCTIONS = ("sqrt", "log", "log2", "min", "max")

    def __init__(self, text: str, source: str = "constant"):
        import ast

        self.text = str(text)
        try:
            tree = ast.parse(self.text, mode="eval")
        except SyntaxError:
            raise InputError(f"not a formula: {self.text!r}", source=source) from None
        allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Load,
                   ast.Call, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd)  # fmt: skip
        for node in ast.walk(tree):
            if not isinstance(node, allowed):
                raise InputError(f"{type(node).__name__} is not allowed in a formula "
                                 f"({self.text!r})", source=source)  # fmt: skip
            if isinstance(node, ast.Constant) and (
                isinstance(node.value, bool) or not isinstance(node.value, int | float)
            ):
                raise InputError(f"only numbers are constants, got {node.value!r}", source=source)
            if isinstance(node, ast.Name) and node.id not in self.NAMES + self.FUNCTIONS:
                raise InputError(f"unknown name {node.id!r} (use {', '.join(self.NAMES)})",
                                 source=source)  # fmt: skip
            if isinstance(node, ast.Call) and not (
                isinstance(node.func, ast.Name) and node.func.id in self.FUNCTIONS
            ):
                raise InputError(f"only {', '.join(self.FUNCTIONS)} may be called", source=source)
        self._code = compile(tree, "<formula>", "eval")

    def __call__(self, inst: Instance) -> float:
        import math

        env = {"alpha": float(alpha(inst)), "n": inst.n, "M": inst.memory, "sqrt": math.sqrt,
               "log": math.log, "log2": math.log2, "min": min, "max": max}  # fmt: skip
        try:
            return float(eval(self._code, {"__builtins__": {}}, env))  # noqa: S307 - checked AST
        except (ZeroDivisionError, OverflowError, ValueError):
            return float("inf")

    def __reduce__(self):
        return (Formula, (self.text,))

    def __repr__(self) -> str:
        return f"Formula({self.text!r})"


def claims_for_policy(policy: str) -> tuple[str, ...]:
    """Ids of the claims that name ``policy``, in registry order."""
    return tuple(c.id for c in CLAIMS.values() if policy in c.policies)


__all__ = [
    "CLAIMS",
    "Formula",
    "KINDS",
    "USER_CLAIMS",
    "register_claim",
    "ClaimKind",
    "Claim",
    "alpha",
    "a_max_bound",
    "a_min_bound",
    "interval_ratio",
    "claims_for_policy",
    "get_claim",
    "greedy_bound",
    "n_bound",
]
