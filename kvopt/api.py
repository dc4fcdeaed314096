"""The public Python API: what a notebook imports (``import kvopt``).

Every function takes an :class:`~kvopt.instance.Instance` or a path to an
instance file, and returns a result object with a readable ``repr``,
``to_dict()`` (the same object the command line prints with ``--json``) and,
where a table is natural, ``to_dataframe()`` (only if pandas is installed; it
is not a dependency).

============================  =====================================================
:func:`load_instance`         read an instance file (SPEC §3)
:func:`generate`              an instance of a ``kvopt gen`` family
:func:`bounds`                lower bounds on Opt (area, processing, LP)
:func:`solve`                 exact clairvoyant Opt with its proven bound
:func:`simulate`              run one policy (checked schedule, statistics)
:func:`latencies`             a run's latencies in seconds and the bound (SPEC §10)
:func:`run_experiment`        latency against load: a grid in seconds, resumable
:func:`compare`               every policy against Opt and the bounds
:func:`search`                adversarial search with certified records
:func:`grow`                  growth sweep of a record: bounded or growing?
:func:`validate`              verdicts on the theorem claims of SPEC §7
:func:`plot_schedule`         memory over time and the Gantt chart
:func:`policies`, :func:`claims`  the registries, as tables
============================  =====================================================

Heavy solver packages are imported only when :func:`solve` (or an exact
comparison, search or validation) runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .certify import CERTIFY_SECONDS
from .instance import Instance
from .instance import load_instance as _load_instance
from .texttable import Table

if TYPE_CHECKING:  # the result types, for signatures only (their modules load on first call)
    from .bound import Bounds
    from .campaign import CampaignResult
    from .campaign.growth import GrowthResult
    from .claim import Claim
    from .comparison import Comparison
    from .conformance import ConformanceReport
    from .engine import Adversary, SimulationResult
    from .engine.contract import Policy
    from .exact import SolveResult
    from .exact.portfolio import Portfolio
    from .record import Record
    from .schedule import Schedule
    from .serving.experiment import ExperimentResult
    from .serving.seconds import SecondsReport
    from .serving.timemodel import TimeModel
    from .space import Space, TypedSpace
    from .validation import Effort, ValidationResult


def _inst(instance: Instance | str | os.PathLike) -> Instance:
    return instance if isinstance(instance, Instance) else _load_instance(instance)


def load_instance(path: str | os.PathLike) -> Instance:
    """Read an instance file (SPEC §3); errors name the file, the field and the rule.

    >>> inst = load_instance("instances/random/mixed-n10.json")
    >>> inst.n, inst.memory
    (10, 48)
    """
    return _load_instance(path)


def generate(family: str, seed: int, **params: Any) -> Instance:
    """An instance of a ``kvopt gen`` family (deterministic per seed; provenance in ``meta``).

    ``seed`` is required, as ``kvopt gen --seed`` is (SPEC §4): every generated instance is
    reproducible from the seed it names, so none is drawn with a seed nobody chose.

    >>> inst = generate("random", seed=1, n=6, memory=32)
    >>> inst.n, inst.memory, inst.meta["family"]
    (6, 32, 'random')
    """
    from .generators import generate as _generate

    return _generate(family, seed, **params)


def bounds(instance: Instance | str | os.PathLike, *, lp: bool = False) -> Bounds:
    """Lower bounds on Opt (SPEC §2): area (Lemma 1), processing (Lemma 3), optionally the LP.

    >>> b = bounds(generate("random", seed=1, n=6, memory=32))
    >>> b.best >= b.area and b.best_name in ("area", "processing")
    True
    """
    from .bound import lower_bounds

    inst = _inst(instance)
    value = None
    if lp:
        from .exact import lp_bound

        value = lp_bound(inst)
    return lower_bounds(inst, lp=value)


def solve(
    instance: Instance | str | os.PathLike,
    *,
    objective: str = "total",
    solver: str = "auto",
    time_limit: float = 60.0,
    threads: int = 2,
    seed: int = 0,
    warm_start: Schedule | None = None,
    gap: float = 0.0,
    progress: bool = False,
    deterministic: bool = False,
    portfolio: Portfolio | None = None,
) -> SolveResult:
    """Exact clairvoyant Opt (SPEC §5) with its proven bound and a checked schedule.

    ``objective`` is ``"total"`` (total completion time) or ``"makespan"``;
    ``solver`` one of ``auto``, ``highs``, ``cpsat``, ``race``, ``bnb``,
    ``pyomo`` (:func:`kvopt.exact.solve`).  A run stopped by ``time_limit``
    reports ``feasible`` (or ``unknown``) with its bound, never ``optimal``.
    ``res.route`` says which route of the portfolio ran (``kvopt solve --explain``);
    ``portfolio`` (:class:`kvopt.exact.portfolio.Portfolio`) replaces its routes or backends.

    >>> res = solve(generate("random", seed=1, n=5, memory=24), time_limit=20)
    >>> res.status.value, res.objective == res.bound
    ('optimal', True)
    """
    from .exact import solve as _solve

    return _solve(
        _inst(instance),
        objective=objective,
        solver=solver,
        time_limit=time_limit,
        threads=threads,
        seed=seed,
        warm_start=warm_start,
        gap=gap,
        progress=progress,
        deterministic=deterministic,
        portfolio=portfolio,
    )


def simulate(
    instance: Instance | str | os.PathLike,
    policy: str | type | Policy,
    params: Mapping[str, Any] | None = None,
    seed: int | None = None,
    *,
    trace: bool = False,
    instrument: bool = False,
    adversary: Adversary | None = None,
    max_attempts: int | None = None,
    time_model: TimeModel | str | None = None,
) -> SimulationResult:
    """Run one policy (SPEC §6) with the event engine; the schedule has passed the checker.

    ``policy`` is a registry name (``kvopt policies``), optionally with
    parameters (``"route[compact=true]"``), a reference to your own policy
    (``"path/to/file.py:Class"``, ``"package.module:Class"``, an entry-point name),
    the class itself, or a policy object (one run, as it is); ``trace`` keeps the engine's event
    rows, ``instrument`` the per-job quantities the claim checks read, and
    ``adversary`` releases jobs in reaction to the policy (SPEC §7).
    ``max_attempts`` stops a run past that many attempts (:class:`kvopt.errors.BudgetError`).
    ``time_model`` (SPEC §10: a preset of ``kvopt time-models``, ``"c0=…,c_b=…"`` or a
    :class:`~kvopt.serving.timemodel.TimeModel`; default ``unit``) times the rounds: on a timed
    instance it decides the arrival rounds, and :func:`latencies` turns the result into
    seconds.  The result's ``objectives`` is ``{"total_completion", "makespan"}``, also read as
    ``.total_completion`` and ``.makespan`` (``.objective``, its old name, is deprecated).

    >>> res = simulate(generate("random", seed=1, n=6, memory=32), "fcfs")
    >>> res.policy, res.stats.kills >= 0, res.total_completion == res.objectives["total_completion"]
    ('fcfs', True, True)
    """
    from .simulation import simulate as _simulate

    return _simulate(
        _inst(instance),
        policy,
        params=params,
        seed=seed,
        trace=trace,
        instrument=instrument,
        adversary=adversary,
        max_attempts=max_attempts,
        time_model=time_model,
    )


def latencies(
    instance: Instance | str | os.PathLike,
    result: SimulationResult,
    time_model: TimeModel | str | None = None,
) -> SecondsReport:
    """The latencies in seconds of a :func:`simulate` result (SPEC §10) and the bound on Opt.

    ``time_model`` must be the one the result was simulated under (default ``unit``).
    The report holds the per-request lists (``completion``, ``latency``, ``ttft``,
    ``per_token``, ``waiting``, ``arrival_round``), ``metrics``, ``bound`` (a lower bound
    on Opt's total latency) and ``ratio``; ``to_dict()`` is the ``"seconds"`` block of
    ``kvopt simulate --json``.

    >>> from kvopt import Job
    >>> inst = Instance(10, (Job(2, 3, arrival_time=0.0), Job(2, 2, arrival_time=2.5)))
    >>> rep = latencies(inst, simulate(inst, "fcfs", time_model="c0=1,c_b=0.5"), "c0=1,c_b=0.5")
    >>> rep.latency, rep.bound.name
    ((5.0, 4.0), 'solo')
    """
    from .serving.seconds import seconds_report
    from .serving.timemodel import parse_time_model

    inst = _inst(instance)
    tm = parse_time_model(time_model, source="time_model")
    real = result.instance if result.instance is not None else inst
    return seconds_report(inst, result.schedule, tm, realized=real, clock=result.clock)


def run_experiment(
    experiment: Mapping[str, Any] | str | os.PathLike,
    out: str | os.PathLike | None = None,
    *,
    workers: int = 1,
    scheduler: str | None = None,
    progress: bool = False,
    report: bool = True,
) -> ExperimentResult:
    """Run or resume an experiment in seconds (SPEC §10), as ``kvopt experiment run`` does.

    ``experiment`` is a dict with the fields of an experiment file (``name``,
    ``workload``, ``time_model``, ``policies``, ``loads``, ``seeds``, …; see
    :mod:`kvopt.serving.experiment`) or the path of a TOML file.  Each cell is saved under
    ``out/cells/`` as it finishes (a rerun resumes); ``out/results.csv`` has one row per
    (policy, load, seed), and ``out/report.md`` the tables and plots.

    >>> import tempfile
    >>> res = run_experiment({"name": "tiny", "policies": ["fcfs", "sjf"], "loads": [2],
    ...     "time_model": "llama2-70b-a100-tp2",
    ...     "workload": {"n": 8, "memory": 8192, "arrivals": "poisson"}},
    ...     tempfile.mkdtemp(), report=False)
    >>> len(res.rows), sorted({r["policy"] for r in res.rows})
    (2, ['fcfs', 'sjf'])
    """
    from .serving.experiment import run_experiment as _run

    return _run(experiment, out, workers=workers, scheduler=scheduler, progress=progress,
                report=report)  # fmt: skip


def compare(
    instances: Instance | str | os.PathLike | Sequence[Instance | str | os.PathLike],
    policies: Sequence[str | type] | None = None,
    *,
    exact: bool = False,
    time_limit: float = 60.0,
    threads: int = 2,
    seed: int = 0,
    solver: str = "auto",
    progress: bool = False,
    time_model: TimeModel | str | None = None,
) -> Comparison:
    """Every policy (or ``policies``) against the bounds and, with ``exact=True``, against Opt.

    ``policies`` holds names, references to your own policies (SPEC §4) or classes.

    Instances may be :class:`Instance` objects, files or folders; ``time_limit``,
    ``threads``, ``seed`` and ``solver`` go to each exact solve.  ``time_model``
    (SPEC §10) adds each policy's latencies in seconds and their ratio to the bound on
    Opt's total latency.

    >>> cmp = compare(generate("random", seed=1, n=5, memory=24), ["fcfs", "sjf"])
    >>> sorted(cmp.summary())
    ['fcfs', 'sjf']
    """
    from .comparison import compare as _compare

    if isinstance(instances, Instance | str | os.PathLike):
        instances = [instances]
    items = [str(x) if isinstance(x, os.PathLike) else x for x in instances]
    return _compare(
        items,
        policies,
        exact=exact,
        time_limit=time_limit,
        threads=threads,
        seed=seed,
        solver=solver,
        progress=progress,
        time_model=time_model,
    )


def search(
    policy: str | type,
    *,
    strategy: str = "anneal",
    params: Mapping[str, Any] | None = None,
    family: str | None = None,
    family_params: Mapping[str, Any] | None = None,
    space: Space | TypedSpace | Mapping[str, Any] | None = None,
    claim: str | None = None,
    objective: str | None = None,
    budget: int | None = None,
    seconds: float | None = None,
    seed: int = 0,
    workers: int = 1,
    scheduler: str | None = None,
    out: str | os.PathLike | None = None,
    batch: int = 8,
    exact_time_limit: float = 10.0,
    options: Mapping[str, Any] | None = None,
    progress: bool | None = None,
    dask_timeout: float = 10.0,
    label: str | None = None,
    certify_seconds: float = CERTIFY_SECONDS,
) -> CampaignResult:
    """Adversarial search for ``policy``'s worst certified ratio (SPEC §8 records).

    ``strategy`` proposes instances inside ``space`` (the policy's default
    space, or a :class:`~kvopt.space.Space` / :class:`~kvopt.space.TypedSpace`
    / a dict of fields, ``{"kind": "typed", ...}`` for SPEC §9) or from a
    ``kvopt gen`` ``family``; ``claim`` restricts to a SPEC §7 claim's class.
    ``budget`` counts evaluations of the whole campaign, ``seconds`` this run;
    ``workers`` local processes or a Dask ``scheduler`` evaluate batches of
    ``batch``; ``out`` is the campaign folder (a rerun resumes it).  The best
    record is certified at the end by an exact solve of at most
    ``certify_seconds`` (its time reported apart).  See
    :func:`kvopt.campaign.search` for every option.

    >>> import tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "fcfs")
    >>> res = search("fcfs", budget=8, seed=1, out=out, progress=False,
    ...              space={"n_max": 4, "memory_max": 16})
    >>> res.evaluations, res.best.ratio_certified >= 1
    (8, True)
    """
    from .campaign import search as _search

    return _search(
        policy,
        strategy=strategy,
        params=params,
        family=family,
        family_params=family_params,
        space=space,
        claim=claim,
        objective=objective,
        budget=budget,
        seconds=seconds,
        seed=seed,
        workers=workers,
        scheduler=scheduler,
        out=out,
        batch=batch,
        exact_time_limit=exact_time_limit,
        options=options,
        progress=progress,
        dask_timeout=dask_timeout,
        label=label,
        certify_seconds=certify_seconds,
    )


def grow(
    record: Record | Instance | str | os.PathLike,
    *,
    policy: str | None = None,
    params: Mapping[str, Any] | None = None,
    seed: int | None = None,
    steps: int = 4,
    directions: Sequence[str] | str | None = None,
    extra: int = 6,
    find_budget: int = 60,
    find_top: int = 3,
    time_limit: float = 10.0,
    out: str | os.PathLike | None = None,
    certify: int = 2,
    exact_max_n: int = 128,
    plot: bool = True,
    progress: bool | None = None,
    certify_seconds: float = CERTIFY_SECONDS,
    seconds: float | None = None,
) -> GrowthResult:
    """Growth sweep of a record, or of an instance with ``policy`` (``params``, ``seed``)
    (SPEC §9): is the policy's ratio bounded along a family?

    A direction is an exponent vector (``"M=1,size:0=1,count:1=0.5"``) or an alias
    (``memory``, ``count``, ``count:T``, ``memory-count``, ``memory:T+U``); without
    ``directions`` the fastest-growing ones are found by a search over the exponent lattice
    (``find_budget`` probes, the ``find_top`` best swept in full).  Each direction takes
    ``steps`` doublings of its axis (M, or n when M is fixed), and up to ``extra`` more until
    it is ``bounded``; every point gets a bracket and a record in ``out``; the ``certify``
    directions screened best by ALG/LB get exact solves of ``time_limit`` seconds on points of
    at most ``exact_max_n`` jobs, and the points that decide the verdict an exact solve of at
    most ``certify_seconds`` at the end.  The verdict is ``grows``, ``bounded`` (with a limit
    estimate when the ratios converge) or ``unclear``.  ``seconds`` bounds the whole sweep
    (``kvopt grow --seconds``; ``None``: no bound); every point is saved in ``out/points/`` as
    it is evaluated and a rerun with the same ``out`` resumes.  See
    :func:`kvopt.campaign.growth.grow`.

    >>> import tempfile, os
    >>> res = grow("instances/worst/small/fcfs.json", steps=1, directions="memory", extra=0,
    ...            time_limit=2, out=os.path.join(tempfile.mkdtemp(), "g"), progress=False)
    >>> [p.factor for p in res.direction("memory").steps], res.verdict
    ([1, 2], 'unclear')
    """
    from .campaign.growth import grow as _grow

    return _grow(
        record,
        policy=policy,
        params=params,
        seed=seed,
        steps=steps,
        directions=directions,
        extra=extra,
        find_budget=find_budget,
        find_top=find_top,
        time_limit=time_limit,
        out=out,
        certify=certify,
        exact_max_n=exact_max_n,
        plot=plot,
        progress=progress,
        certify_seconds=certify_seconds,
        seconds=seconds,
    )


def validate(
    claims: Sequence[str] | str | None = None,
    *,
    quick: bool = False,
    budget: int | None = None,
    seconds: float | None = None,
    seed: int = 0,
    workers: int = 1,
    scheduler: str | None = None,
    out: str | os.PathLike | None = None,
    report: str | os.PathLike | None = None,
    progress: bool | None = None,
    effort: Effort | None = None,
    space: dict[str, Any] | None = None,
    user_claims: Sequence[Claim] = (),
    records: Sequence[str | os.PathLike] = (),
) -> ValidationResult:
    """Verdicts on SPEC §7's claims (all, or the ids in ``claims``), and on your own.

    ``user_claims`` are claims made by :func:`user_claim` (your policy, your constant);
    with them and no ``claims`` only they run.  ``records`` (files or folders, as
    ``kvopt validate --from``) are checked first: a valid record inside a ratio claim's
    class that beats its bound makes the claim violated at once.  Each verdict's
    ``scope`` says what it rests on (the space searched, evaluations, seconds).

    ``quick`` uses the small effort of ``kvopt validate --quick``; ``budget``
    (evaluations per claim) or ``seconds`` override it; ``out`` keeps the
    campaigns (a rerun resumes them) and ``report`` writes the HTML/PNG report.
    See :func:`kvopt.validation.validate` for every option.

    >>> import tempfile, os
    >>> res = validate(["rect-monotone"], quick=True, budget=6, progress=False,
    ...                out=os.path.join(tempfile.mkdtemp(), "v"))
    >>> res.claims[0].verdict
    'holds'
    """
    from .validation import validate as _validate

    return _validate(
        claims,
        quick=quick,
        budget=budget,
        seconds=seconds,
        seed=seed,
        workers=workers,
        scheduler=scheduler,
        out=out,
        report=report,
        progress=progress,
        effort=effort,
        space=space,
        user_claims=user_claims,
        records=records,
    )


def user_claim(
    id: str,
    policy: str | type,
    *,
    ratio_at_most: float | str | None = None,
    bounded: bool = False,
    objective: str = "total",
    params: Mapping[str, Any] | None = None,
    space: Mapping[str, Any] | None = None,
    source: str = "",
) -> Claim:
    """Your own claim about a policy (SPEC §4), for :func:`validate` (``user_claims=``).

    ``ratio_at_most`` states ``ALG <= C · Opt`` on the policy's class (``C`` a number or a
    formula in ``alpha``, ``n``, ``M`` such as ``"1 + 2/(1-alpha)"``); ``bounded=True``
    states that the ratio stays bounded as instances grow (judged by growth sweeps,
    SPEC §9).  ``space`` narrows the class searched (fields of ``--space``).

    >>> c = user_claim("fcfs-2", "fcfs", ratio_at_most=2)
    >>> c.statement
    'fcfs total <= 2 Opt'
    """
    from .errors import InputError
    from .validation.user import make_claim

    if (ratio_at_most is None) == (not bounded):
        raise InputError("give ratio_at_most=C or bounded=True (one of them)", source="user_claim")
    return make_claim(
        id=id,
        policy=policy,
        kind="bounded" if bounded else "ratio",
        constant=ratio_at_most,
        objective=objective,
        params=params,
        space=space,
        source=source,
        where=f"user_claim {id!r}",
    )


def check_policy(
    policy: str | type,
    *,
    params: Mapping[str, Any] | None = None,
    seed: int = 0,
    out: str | os.PathLike | None = None,
) -> ConformanceReport:
    """Run a policy through the conformance battery of ``kvopt policies --check`` (SPEC §4).

    Checks: no exception, every decision allowed and every schedule valid, the same
    seed gives the same schedule, blindness to unseen responses (a ``BlindPolicy``),
    visibility of jobs that have not arrived, and a declared ``kills = False``.
    A failing check saves its smallest failing instance under ``out``
    (default ``kvopt-check/<policy>``) and names it.

    >>> check_policy("serial").passed
    True
    """
    from .conformance import check_policy as _check

    return _check(policy, params=params, seed=seed, out=out)


def plot_schedule(
    instance,
    schedule=None,
    vs=None,
    *,
    labels: Sequence[str] | None = None,
    title: str | None = None,
    out: str | os.PathLike | None = None,
):
    """Memory over time above the Gantt chart; ``vs`` draws a second schedule beside it.

    ``instance`` is an :class:`Instance` (or a path) and ``schedule``/``vs`` a
    :class:`~kvopt.schedule.Schedule` or a result holding one (simulate,
    solve); or ``instance`` is a search record alone (:class:`kvopt.record.Record`),
    drawn as the policy's schedule beside the clairvoyant one.  Returns the
    matplotlib Figure (also saved to ``out`` when given).

    >>> inst = generate("random", seed=1, n=4, memory=24)
    >>> fig = plot_schedule(inst, simulate(inst, "fcfs"), solve(inst, time_limit=20))
    >>> len(fig.axes)
    4
    """
    from .plotting import panel_name, save_figure, schedule_figure
    from .record import Record

    items, names = [], []
    if isinstance(instance, Record):
        rec = instance
        inst = rec.instance
        names, items = (list(x) for x in zip(*rec.labelled_schedules()))
        if title is None:
            title = (f"{rec.policy} on n={inst.n}, M={inst.memory}: certified ratio "
                     f"{rec.ratio_certified:.3f}")  # fmt: skip
    else:
        if schedule is None:
            raise TypeError("plot_schedule needs a schedule (or a record as the first argument)")
        inst = _inst(instance)
        for given in (schedule, vs) if vs is not None else (schedule,):
            items.append(getattr(given, "schedule", given))
            names.append(panel_name(given))
    fig = schedule_figure(inst, items, list(labels) if labels else names, title=title)
    if out is not None:
        save_figure(fig, out)
    return fig


def policies() -> Table:
    """Every policy of the registry: name, clairvoyant or not, parameters, claims, source.

    >>> t = policies()
    >>> "route" in [r["name"] for r in t]
    True
    """
    from .policy import POLICIES

    rows = [{**d, "params": [f"{k}={v['default']}" for k, v in d["params"].items()]}
            for d in (s.to_dict() for s in POLICIES.values())]  # fmt: skip
    return Table(rows, ("name", "clairvoyant", "params", "claims", "summary"), "policies")


def claims() -> Table:
    """Every claim of SPEC §7: id, kind, policies, bound, class and source.

    >>> t = claims()
    >>> [r["id"] for r in t][:3]
    ['area-lb', 'rect-large', 'rect-prompt']
    """
    from .claim import CLAIMS

    rows = [{**c.to_dict(), "bound": c.bound_text()} for c in CLAIMS.values()]
    return Table(rows, ("id", "kind", "policies", "bound", "class", "source"), "claims")


__all__ = [
    "Table",
    "bounds",
    "check_policy",
    "claims",
    "compare",
    "generate",
    "grow",
    "latencies",
    "load_instance",
    "plot_schedule",
    "policies",
    "run_experiment",
    "search",
    "simulate",
    "solve",
    "user_claim",
    "validate",
]
