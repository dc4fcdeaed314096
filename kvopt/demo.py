"""The demo job (``kvopt demo``, SPEC §4) as a library function: :func:`run_demo` does the
work and returns a typed :class:`DemoReport`; the command line (:mod:`kvopt.cli.demo`)
renders it as text or JSON.

1. Regenerates every bundled instance (``instances/``) from the generator, seed and
   parameters in its ``meta`` and checks it is identical (so every bundled file is
   reproducible) and valid, with its lower bounds (SPEC §2).
2. Solves every small bundled instance exactly (certified Opt) and runs every policy of
   the registry that applies; the trace samples (``instances/traces/``) are too large for
   the exact models: each policy's ``ALG/LB`` and ``ALG/UB`` instead, and whether memory
   binds (:class:`TraceSample`).
3. Saves the side-by-side picture of the worst policy/instance pair found and Opt's
   schedule, and the bar chart of every policy's ratio per instance.
4. A short adversarial search (fcfs, anneal, seed 1): the best certified ratio found, its
   record (re-checked), the worst case beside Opt, the best-so-far curve.
5. A quick validation of two claims (``greedy-area``, ``single-priority``) with its report
   and plots.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bound import Bounds, lower_bounds
from .generators import generate
from .instance import Instance, load_instance


def bundled_dir() -> Path:
    """The bundled instances (``instances/`` of the source tree)."""
    return Path(__file__).resolve().parents[1] / "instances"


@dataclass(frozen=True)
class BundledInstance:
    """A bundled instance file: its size, regimes, whether it regenerates identically from
    its ``meta``, and its lower bounds.  ``reproducible`` is ``None`` for an instance made by
    hand (its ``meta`` names no generator family and seed; its folder's README gives its
    provenance): there is nothing to regenerate it from."""

    file: str
    instance: Instance
    reproducible: bool | None
    bounds: Bounds

    def to_dict(self) -> dict[str, Any]:
        inst = self.instance
        return {
            "file": self.file,
            "name": inst.name,
            "n": inst.n,
            "memory": inst.memory,
            "regimes": inst.regime_counts(),
            "reproducible": self.reproducible,
            "bounds": self.bounds.to_dict(),
        }


@dataclass(frozen=True)
class TraceSample:
    """A trace sample (too large for the exact models): its peak demand with every request
    at once and with each started on arrival, whether memory binds, and its bracket."""

    file: str
    n: int
    memory: int
    peak_all_at_once: int
    peak_on_arrival: int
    memory_binds: bool
    meta: dict[str, Any]
    lb: int
    lb_name: str
    ub: int | None
    ub_name: str | None
    exact_opt: str | None  # why no exact Opt (``None``: LB = UB = Opt)

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "n": self.n,
            "memory": self.memory,
            "peak_all_at_once": self.peak_all_at_once,
            "peak_on_arrival": self.peak_on_arrival,
            "memory_binds": self.memory_binds,
            "meta": dict(self.meta),
            "lb": self.lb,
            "lb_name": self.lb_name,
            "ub": self.ub,
            "ub_name": self.ub_name,
            "exact_opt": self.exact_opt,
        }


@dataclass(frozen=True)
class Worst:
    """The worst ratio to Opt over the small bundled instances: which policy, where, the
    comparison it comes from, and its picture beside Opt (``None`` if not drawn)."""

    file: str
    policy: str
    ratio_opt: float
    comparison: Any  # kvopt.comparison.InstanceComparison
    row: Any  # its row for the policy
    picture: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "instance": self.file,
            "policy": self.policy,
            "ratio_opt": self.ratio_opt,
            "picture": self.picture,
        }


@dataclass(frozen=True)
class SearchSummary:
    """The demo's adversarial search: its effort and its best record (re-checked)."""

    evaluations: int
    exact_solves: int
    seconds: float
    ratio_certified: float
    ratio_optimistic: float
    opt_status: str
    n: int
    memory: int
    record: str
    record_valid: bool

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class Picture:
    path: str
    shows: str


@dataclass(frozen=True)
class DemoReport:
    """What :func:`run_demo` found (``to_dict()``: the JSON of ``kvopt demo --json``)."""

    folder: str
    instances: tuple[BundledInstance, ...]
    comparisons: tuple[tuple[str, Any], ...]  # (file, InstanceComparison), every instance
    traces: tuple[TraceSample, ...]
    worst: Worst | None
    search: SearchSummary
    validation: Any  # kvopt.validation.ValidationResult
    pictures: tuple[Picture, ...] = field(default=())

    @property
    def all_reproducible(self) -> bool:
        return all(b.reproducible is not False for b in self.instances)

    @property
    def exact(self) -> tuple[tuple[str, Any], ...]:
        """The comparisons with an exact Opt (the small bundled instances)."""
        return tuple((rel, ic) for rel, ic in self.comparisons if ic.exact is not None)

    @property
    def trace_comparisons(self) -> tuple[tuple[str, Any], ...]:
        return tuple((rel, ic) for rel, ic in self.comparisons if ic.exact is None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "instances": [b.to_dict() for b in self.instances],
            "all_reproducible": self.all_reproducible,
            "comparisons": {rel: ic.to_dict() for rel, ic in self.comparisons},
            "traces": [t.to_dict() for t in self.traces],
            "worst": None if self.worst is None else self.worst.to_dict(),
            "search": self.search.to_dict(),
            "validation": self.validation.to_dict(),
            "pictures": [{"path": p.path, "shows": p.shows} for p in self.pictures],
        }


def _bundled(folder: Path) -> list[tuple[str, Instance]]:
    """Every instance file under ``folder`` (records and other JSON files are skipped)."""
    from .fileio import read_json
    from .instance import FORMAT

    out = []
    for f in sorted(folder.rglob("*.json")):
        data = read_json(f)
        if isinstance(data, dict) and data.get("format") == FORMAT:
            out.append((str(f.relative_to(folder)), load_instance(f)))
    return out


def _regenerate(inst: Instance) -> Instance | None:
    meta = inst.meta
    if "family" not in meta or "seed" not in meta:
        return None
    params = dict(meta.get("params", {}))
    return generate(meta["family"], meta["seed"], **params)


def check_bundled(folder: Path) -> tuple[BundledInstance, ...]:
    """Every bundled instance under ``folder``, regenerated from its ``meta`` and bounded."""
    out = []
    for rel, inst in _bundled(folder):
        regen = _regenerate(inst)
        ok = None if regen is None else regen.to_dict() == inst.to_dict()
        out.append(BundledInstance(rel, inst, ok, lower_bounds(inst)))
    return tuple(out)


#: Instances with more jobs than this are compared with the lower bound only.
EXACT_MAX_JOBS = 25


def _compare_all(items, time_limit: float, say):
    """Exact Opt and every applicable policy on each bundled instance."""
    from .comparison import compare_instance

    out = []
    for rel, inst in items:
        exact = inst.n <= EXACT_MAX_JOBS and inst.memory <= 1024
        say(f"demo: {rel}: {'exact Opt and ' if exact else ''}policies")
        out.append((rel, compare_instance(inst, exact=exact, time_limit=time_limit, source=rel)))
    return out


def _demand(inst: Instance) -> tuple[int, int]:
    """Peak memory demand: every request at once (Σ (s+o)), and each started on arrival."""
    from .memory import memory_profile
    from .schedule import Schedule

    on_arrival = memory_profile(inst, Schedule.from_starts(inst, inst.arrivals))
    return int(inst.peaks.sum()), int(on_arrival.max(initial=0))


def _trace_sample(rel: str, ic) -> TraceSample:
    """What the trace table says about one sample: demand, bounds, why there is no Opt."""
    inst = ic.instance
    at_once, on_arrival = _demand(inst)
    exact = None
    if ic.ub is None or ic.lb < ic.ub:
        exact = (f"not attempted: out of reach at n={inst.n} (proofs get hard beyond n ~ 15; "
                 f"the demo solves n <= {EXACT_MAX_JOBS}, M <= 1024)")  # fmt: skip
    return TraceSample(rel, inst.n, inst.memory, at_once, on_arrival, on_arrival > inst.memory,
                       dict(inst.meta), ic.lb, ic.lb_name, ic.ub, ic.ub_name, exact)  # fmt: skip


def worst_ratio(comps) -> tuple[float, str, Any, Any] | None:
    """The largest ratio to Opt over ``(file, comparison)`` pairs, in registry order:
    ``(ratio, file, comparison, row)``."""
    from .policy import POLICIES

    worst = None
    for name in POLICIES:
        for rel, ic in comps:
            r = ic.row(name)
            if (
                r.applicable
                and r.ratio_opt is not None
                and (worst is None or r.ratio_opt > worst[0])
            ):
                worst = (r.ratio_opt, rel, ic, r)
    return worst


def run_demo(
    instances: str | Path | None = None,
    out: str | Path = "kvopt-demo",
    *,
    time_limit: float = 60.0,
    search_budget: int = 40,
    validate_budget: int = 24,
    say: Callable[[str], None] | None = None,
) -> DemoReport:
    """The demo (see the module doc) on the bundled instances in ``instances`` (default:
    :func:`bundled_dir`), its pictures in ``out``; ``say`` receives progress lines."""
    say = say or (lambda msg: None)
    folder = Path(instances) if instances else bundled_dir()
    checked = check_bundled(folder)
    everything = _compare_all([(b.file, b.instance) for b in checked], time_limit, say)
    comps = [(rel, ic) for rel, ic in everything if ic.exact is not None]
    traces = tuple(_trace_sample(rel, ic) for rel, ic in everything if ic.exact is None)
    outdir = Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    pictures: list[tuple[str, str]] = []
    worst = None
    found = worst_ratio(comps)
    if found is not None:
        from .comparison import plot_worst_vs_opt

        ratio, rel, ic, row = found
        picture = plot_worst_vs_opt(ic, str(outdir / "worst-vs-opt.png"))
        if picture:
            pictures.append((picture, f"{row.policy} on {rel} (the worst ratio to Opt above, "
                             f"{ratio:.3f}) beside Opt's schedule: memory over time and the "
                             "attempts"))  # fmt: skip
        worst = Worst(rel, row.policy, ratio, ic, row, picture or None)
    from .comparison import Comparison, plot_policy_summary

    if comps:
        cmp = Comparison(tuple(ic for _, ic in comps), tuple(r.policy for r in comps[0][1].rows),
                         True, time_limit, 0)  # fmt: skip
        bars = plot_policy_summary(cmp, str(outdir / "ratios.png"),
                                   title=f"every policy on the {len(comps)} small bundled instances")  # fmt: skip
        pictures.append((bars, "per policy, the worst (bar) and mean (dot) ratio of its total "
                         "completion time to Opt over the small bundled instances"))  # fmt: skip
    search = _demo_search(outdir, search_budget, say, pictures)
    validation = _demo_validate(outdir, validate_budget, say, pictures)
    return DemoReport(
        folder=str(folder),
        instances=checked,
        comparisons=tuple(everything),
        traces=traces,
        worst=worst,
        search=search,
        validation=validation,
        pictures=tuple(Picture(p, s) for p, s in pictures),
    )


def _demo_search(out: Path, budget: int, say, pictures) -> SearchSummary:
    """A short adversarial search on fcfs; its record re-checked; two pictures."""
    import shutil

    from .campaign import read_history, search
    from .plotting import plot_best_so_far, plot_schedules
    from .record import load_record, verify_record

    folder = out / "search-fcfs"
    shutil.rmtree(folder, ignore_errors=True)  # a fresh campaign each time
    say("demo: adversarial search on fcfs")
    res = search(
        "fcfs",
        strategy="anneal",
        budget=budget,
        seed=1,
        out=folder,
        space={"n_min": 2, "n_max": 6, "memory_min": 8, "memory_max": 24, "max_response": 12},
        exact_time_limit=5.0,
        progress=False,
    )
    rec = load_record(res.best.record)
    valid = verify_record(rec) == []
    prog = plot_best_so_far(
        read_history(folder),
        str(out / "search-progress.png"),
        title=f"search fcfs (anneal, seed 1): best ratio so far ({res.evaluations} evaluations)",
    )
    labels, schedules = zip(*rec.labelled_schedules())  # the policy is fcfs
    worst = plot_schedules(
        rec.instance,
        list(schedules),
        str(out / "search-worst-vs-opt.png"),
        list(labels),
        title=f"fcfs on the worst case the search found (n={rec.instance.n}, M={rec.instance.memory}): "
        f"certified ratio {rec.ratio_certified:.3f}",
    )
    pictures.append((worst, "fcfs on the worst instance the search found, beside Opt: where its "
                     "kills and head-of-line blocking lose time"))  # fmt: skip
    pictures.append((prog, "the search's best certified and optimistic ratio so far, against "
                     "evaluations and seconds"))  # fmt: skip
    return SearchSummary(
        evaluations=res.evaluations,
        exact_solves=res.exact_solves,
        seconds=res.seconds,
        ratio_certified=rec.ratio_certified,
        ratio_optimistic=rec.ratio_optimistic,
        opt_status=rec.opt_status,
        n=rec.instance.n,
        memory=rec.instance.memory,
        record=str(res.best.record),
        record_valid=valid,
    )


def _demo_validate(out: Path, budget: int, say, pictures):
    import shutil

    from .validation import validate

    folder = out / "validate"
    shutil.rmtree(folder, ignore_errors=True)
    say("demo: quick validation of greedy-area and single-priority")
    res = validate(
        ["greedy-area", "single-priority"],
        quick=True,
        budget=budget,
        seed=0,
        out=folder,
        report=out / "validation.md",
        progress=False,
    )
    ga = res.verdict("greedy-area")
    pictures.append((str(out / "validation-ratios.png"), "greedy-area's certified ratio divided by "
                     f"its bound 1 + 2/(1-alpha) on every instance validated (verdict: {ga.verdict})"))  # fmt: skip
    pictures.append((str(out / "validation-prop1.png"), "Proposition 1: the worst ratio of each "
                     "single-priority rule against L, log-log, with the fitted exponents (about 1/2)"))  # fmt: skip
    pictures.append(
        (str(out / "validation.md"), "the validation report (table, verdicts, growth data)")
    )
    return res
