"""Compare policies with each other, with the lower bounds and with exact Opt (``kvopt compare``).

For each instance, every requested policy is simulated (a policy whose
instance class does not contain the instance is listed as not applicable, with
the rule, and not run).  Ratios follow SPEC §8 for the total completion time:

* ``ratio_lb`` — ``ALG / LB`` with ``LB`` the best lower bound of SPEC §2
  (area, processing): an upper bound on the true ratio that needs no solver;
* ``ratio_optimistic`` — ``ALG / LB*`` with ``LB*`` the best *proven* lower
  bound (``LB`` and the exact solver's bound): SPEC §8's optimistic ratio;
* ``ratio_ub`` — ``ALG / UB``, with ``UB`` the best objective of a checked
  schedule seen (every policy's schedule, the cheap clairvoyant kill-free
  schedules of :func:`kvopt.certify.cheap_ub` — their serial orders
  only while ``horizon × Σ o ≤`` :data:`SERIAL_UB_MAX_WORK` — and the exact
  solver's incumbent): the *certified* ratio, a lower bound on the true one;
* ``ratio_opt`` — ``ALG / Opt`` when the exact solver proved optimality
  (then ``LB = UB = Opt`` and the three agree), else ``None``; the table then
  shows the interval ``[ratio_ub, ratio_optimistic]``.

Policies are registry names, optionally with parameters, ``NAME[KEY=VALUE;…]``
(:func:`kvopt.policy.parse_policy`); the row keeps that label.  Makespans are reported too (ratios are for total completion time, the
objective the SPEC's claims are about).  Seeded policies (``beta-clear``) get
``seed``.  Every schedule has passed the checker (the engine and the exact
solver check before returning).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .bound import lower_bounds
from .errors import InputError
from .fileio import read_json
from .instance import FORMAT as INSTANCE_FORMAT
from .instance import Instance, load_instance
from .logs import progress_logger
from .policy import ResolvedPolicy
from .schedule import Schedule, checked
from .texttable import Column, render_table


@dataclass(frozen=True)
class PolicyRow:
    """One policy on one instance; ``applicable=False`` rows carry ``reason`` and no numbers."""

    policy: str
    applicable: bool
    reason: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    total_completion: int | None = None
    makespan: int | None = None
    kills: int | None = None
    wasted_rounds: int | None = None
    seconds: float | None = None
    ratio_lb: float | None = None
    ratio_optimistic: float | None = None
    ratio_ub: float | None = None
    ratio_opt: float | None = None
    schedule: Schedule | None = field(default=None, compare=False, repr=False)
    latency: dict[str, float] | None = None  # with a time model (SPEC §10): seconds metrics

    def to_dict(self) -> dict[str, Any]:
        extra = {} if self.latency is None else {"latency": dict(self.latency)}
        return {**self._base_dict(), **extra}

    def _base_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "applicable": self.applicable,
            "reason": self.reason,
            "params": dict(self.params),
            "total_completion": self.total_completion,
            "makespan": self.makespan,
            "kills": self.kills,
            "wasted_rounds": self.wasted_rounds,
            "seconds": None if self.seconds is None else round(self.seconds, 4),
            "ratio_lb": self.ratio_lb,
            "ratio_optimistic": self.ratio_optimistic,
            "ratio_ub": self.ratio_ub,
            "ratio_opt": self.ratio_opt,
        }


@dataclass(frozen=True)
class InstanceComparison:
    """All policies on one instance, with the bounds and (optionally) the exact result."""

    instance: Instance
    source: str
    rows: tuple[PolicyRow, ...]
    lb: int
    lb_name: str
    proven_lb: int
    proven_lb_name: str
    ub: int | None
    ub_name: str | None
    exact: dict[str, Any] | None = None
    opt_schedule: Schedule | None = field(default=None, compare=False, repr=False)
    time_model: Any = None  # the TimeModel when compared in seconds (SPEC §10)
    latency_bound: dict[str, Any] | None = None  # lower bound on Opt's Σ E_i (seconds)

    @property
    def label(self) -> str:
        """What the table and the pictures call the instance: the file it was read from
        (``mixed-n10.json``; the name stored inside, such as ``random-s1``, is shared by every
        instance generated alike), else the instance's name."""
        src = self.source or ""
        if src and src != self.instance.name and (src.endswith(".json") or os.sep in src):
            return os.path.basename(src)
        return self.instance.name or src

    @property
    def opt(self) -> int | None:
        """Opt when certified (the exact solver proved optimality), else ``None``."""
        if self.exact and self.exact.get("status") == "optimal":
            return self.exact["objective"]
        return None

    def row(self, policy: str) -> PolicyRow:
        for r in self.rows:
            if r.policy == policy:
                return r
        raise KeyError(policy)

    def worst(self) -> PolicyRow | None:
        """The applicable policy with the largest total completion time (ties: listed first)."""
        rows = [r for r in self.rows if r.applicable]
        return max(rows, key=lambda r: r.total_completion) if rows else None

    def to_dict(self) -> dict[str, Any]:
        inst = self.instance
        return {
            "instance": inst.name,  # deprecated (kvopt 0.2): "name"; removed in the next release
            "name": inst.name,
            "label": self.label,
            "source": self.source,
            "n": inst.n,
            "memory": inst.memory,
            "lower_bound": {"value": self.lb, "name": self.lb_name},
            "proven_lower_bound": {"value": self.proven_lb, "name": self.proven_lb_name},
            "upper_bound": {"value": self.ub, "name": self.ub_name},
            "opt": self.opt,
            "exact": self.exact,
            "policies": [r.to_dict() for r in self.rows],
        } | (
            {}
            if self.time_model is None
            else {"time_model": self.time_model.to_dict(), "latency_bound": self.latency_bound}
        )


@dataclass(frozen=True)
class Comparison:
    """The comparison over several instances, with a per-policy summary."""

    instances: tuple[InstanceComparison, ...]
    policies: tuple[str, ...]
    exact: bool
    time_limit: float | None
    seed: int

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per policy: instances run / not applicable, mean and max of the reference ratio.

        The reference ratio is ``ratio_opt`` where Opt is certified, else
        ``ratio_optimistic`` (to the best proven lower bound).

        """
        out: dict[str, dict[str, Any]] = {}
        for p in self.policies:
            vals, na, ref = [], 0, set()
            for ic in self.instances:
                r = ic.row(p)
                if not r.applicable:
                    na += 1
                    continue
                if r.ratio_opt is not None:
                    vals.append(r.ratio_opt)
                    ref.add("opt")
                elif r.ratio_optimistic is not None:
                    vals.append(r.ratio_optimistic)
                    ref.add("lb")
            out[p] = {
                "instances": len(vals),
                "not_applicable": na,
                "mean_ratio": (sum(vals) / len(vals)) if vals else None,
                "max_ratio": max(vals) if vals else None,
                "reference": "+".join(sorted(ref)) or None,
            }
        return out

    def to_dataframe(self):
        """One row per (instance, policy): the numbers of :class:`PolicyRow` (needs pandas).

        The instance is named as in ``--json`` (:meth:`InstanceComparison.to_dict`): ``label``
        (the file it was read from, else its name) and ``name`` (the name stored inside).  The
        column ``instance`` (the label) is deprecated since kvopt 0.2 — it meant the label here
        and the stored name in ``--json`` — and goes in the next release: use ``label``."""
        import pandas as pd

        rows = []
        for ic in self.instances:
            for r in ic.rows:
                d = r.to_dict()
                d.pop("params", None)
                rows.append({"label": ic.label, "name": ic.instance.name,
                             "instance": ic.label,  # deprecated: "label"
                             "n": ic.instance.n, "memory": ic.instance.memory, "opt": ic.opt,
                             **d})  # fmt: skip
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        kind = "exact Opt" if self.exact else "lower bounds"
        return (f"Comparison({len(self.instances)} instance(s) x {len(self.policies)} policies, "
                f"ratios to {kind})\n" + format_summary(self))  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {
            "policies": list(self.policies),
            "exact": self.exact,
            "time_limit": self.time_limit,
            "seed": self.seed,
            "instances": [ic.to_dict() for ic in self.instances],
            "summary": self.summary(),
        }


def split_policies(text: str) -> list[str]:
    """Split a ``--policies`` value at the commas outside brackets."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [x.strip() for x in out if x.strip()]


#: The serial orders of the cheap UB scan about ``horizon × Σ o`` memory cells each
#: (seconds beyond this, e.g. 15 s for a 40-request trace sample spread over 180,000 rounds).
SERIAL_UB_MAX_WORK = 3 * 10**7


def _ratio(a: int | None, b: int | None) -> float | None:
    if a is None or b is None:
        return None
    if b == 0:
        return 1.0 if a == 0 else None
    return a / b


def compare_instance(
    inst: Instance,
    policies: Sequence[str | type | ResolvedPolicy] | None = None,
    *,
    exact: bool = False,
    time_limit: float = 60.0,
    threads: int = 2,
    seed: int = 0,
    solver: str = "auto",
    source: str = "",
    progress: Callable[[str], None] | None = None,
    time_model: Any = None,
) -> InstanceComparison:
    """Run ``policies`` (default: every registered policy) on ``inst``; see the module doc.

    ``time_model`` (SPEC §10; a :class:`~kvopt.serving.timemodel.TimeModel`, a preset name or
    ``"c0=…"``) adds to each row its latencies in seconds (``latency``: ``total``, the
    metrics of :data:`kvopt.serving.seconds.METRICS`, ``ratio`` = total over the latency bound)
    and to the instance the latency bound.  On a timed instance under a non-unit model
    the arrival rounds depend on each schedule, so the round bracket and ``exact`` (both
    in rounds) are left out.
    """
    from .serving.seconds import seconds_report
    from .serving.timemodel import parse_time_model

    tm = None if time_model is None else parse_time_model(time_model)
    rounds_apart = tm is not None and inst.is_timed and not tm.is_unit
    if rounds_apart and exact:
        raise InputError(
            "exact Opt is in rounds: on a timed instance under a non-unit time model the "
            "arrival rounds depend on the schedule (SPEC §10); drop --exact",
            source="--exact",
        )
    from .policy import POLICIES, resolve_policy
    from .simulation import simulate

    # each policy is resolved once (a ResolvedPolicy from compare() is not resolved again);
    # a class (API) stands for its reference (SPEC §4); the row is labelled with the text
    refs = [resolve_policy(p) for p in (policies if policies is not None else POLICIES)]
    say = progress or (lambda msg: None)
    rows: list[PolicyRow] = []
    for ref in refs:
        label = ref.label
        rule = ref.rule(inst)
        if rule:
            rows.append(
                PolicyRow(label, False, reason=f"{rule} (applies to {ref.spec.applies_to})")
            )
            continue
        say(f"{inst.name or source}: {label}")
        res = simulate(inst, ref, seed=seed if ref.seeded else None, time_model=tm)
        latency = None
        if tm is not None:
            rep = seconds_report(inst, res.schedule, tm, realized=res.instance, clock=res.clock)
            latency = {"total": rep.total_latency, **rep.metrics, "ratio": rep.ratio}
        rows.append(
            PolicyRow(
                label,
                True,
                params=dict(res.params),
                total_completion=res.total_completion,
                makespan=res.makespan,
                kills=res.stats.kills,
                wasted_rounds=res.stats.wasted_rounds,
                seconds=res.stats.seconds,
                schedule=None if rounds_apart else res.schedule,
                latency=latency,
            )
        )
    b = lower_bounds(inst)
    lb0, lb0_name = b.best, b.best_name
    lb, lb_name, ub, ub_name = lb0, lb0_name, None, None
    exact_info, opt_sched = None, None
    if inst.n and not rounds_apart:
        # one bracket (kvopt.certify): the policies' schedules (killed attempts dropped they are
        # clairvoyant schedules), the cheap kill-free schedules, the exact solve — one merge rule
        from .certify import Effort, bracket, from_solve, start_bracket, tighten

        br = None
        for r in rows:
            if r.applicable:
                src = f"policy {r.policy}"
                br = (start_bracket(inst, r.schedule, lb=lb0, lb_source=lb0_name, ub_source=src)
                      if br is None else tighten(br, inst, ub_schedule=r.schedule, ub_source=src))  # fmt: skip
        say(f"{inst.name or source}: cheap clairvoyant kill-free upper bound")
        from .exact.common import spec_horizon

        serial = (spec_horizon(inst) + 1) * int(inst.responses.sum()) <= SERIAL_UB_MAX_WORK
        cheap = bracket(None, inst, Effort(serial_ub=serial), prior=br)
        if br is None or cheap.ub < br.ub:
            cheap = replace(cheap, ub_source=f"kill-free {cheap.ub_source}")
        br = cheap
        if exact:
            from .exact import solve

            say(f"{inst.name or source}: exact Opt (time limit {time_limit:g}s)")
            t0 = time.monotonic()
            res = solve(inst, objective="total", solver=solver, time_limit=time_limit,
                        threads=threads)  # fmt: skip
            exact_info = {
                "status": res.status.value,
                "objective": res.objective,
                "bound": res.bound,
                "gap": res.gap,
                "solver": res.solver,
                "seconds": round(time.monotonic() - t0, 3),
            }
            if res.schedule is not None:
                opt_sched = checked(inst, res.schedule, what="exact schedule")
            br = tighten(br, inst, exact=from_solve(res, inst, "total", exact_info["seconds"]))
        lb, lb_name, ub, ub_name = br.lb, br.lb_source, br.ub, br.ub_source
    elif not rounds_apart:
        for r in rows:
            if r.applicable and (ub is None or r.total_completion < ub):
                ub, ub_name = r.total_completion, f"policy {r.policy}"
    certified = exact_info is not None and exact_info["status"] == "optimal"
    final = []
    for r in rows:
        if not r.applicable:
            final.append(r)
            continue
        final.append(
            PolicyRow(
                **{
                    **{k: getattr(r, k) for k in r.__dataclass_fields__},
                    "ratio_lb": None if rounds_apart else _ratio(r.total_completion, lb0),
                    "ratio_optimistic": None if rounds_apart else _ratio(r.total_completion, lb),
                    "ratio_ub": _ratio(r.total_completion, ub),
                    "ratio_opt": _ratio(r.total_completion, ub) if certified else None,
                }
            )
        )
    lat_bound = None
    if tm is not None:
        from .serving.seconds import latency_bound

        lbs = latency_bound(inst, tm)
        lat_bound = {"value": lbs.value, "name": lbs.name}
    return InstanceComparison(
        inst, source, tuple(final), lb0, lb0_name, lb, lb_name, ub, ub_name, exact_info, opt_sched,
        tm, lat_bound,
    )  # fmt: skip


def instance_paths(items: Iterable[str]) -> list[str]:
    """Files named, and the instance files (``format: kvopt.instance``) in folders named.

    A folder's other JSON files (schedules, records) are skipped; a missing path
    is an :class:`InputError`.
    """
    out: list[str] = []
    for item in items:
        if os.path.isdir(item):
            found = []
            for name in sorted(os.listdir(item)):
                path = os.path.join(item, name)
                if not name.endswith(".json") or not os.path.isfile(path):
                    continue
                data = read_json(path)
                if isinstance(data, dict) and data.get("format") == INSTANCE_FORMAT:
                    found.append(path)
            if not found:
                raise InputError("folder holds no instance file (*.json)", source=item)
            out.extend(found)
        elif os.path.exists(item):
            out.append(item)
        else:
            raise InputError("file not found", source=item)
    return out


def compare(
    paths_or_instances: Sequence[str | Instance],
    policies: Sequence[str | type | ResolvedPolicy] | None = None,
    *,
    exact: bool = False,
    time_limit: float = 60.0,
    threads: int = 2,
    seed: int = 0,
    solver: str = "auto",
    progress: bool = False,
    time_model: Any = None,
) -> Comparison:
    """:func:`compare_instance` over instances (paths, folders or :class:`Instance` objects)."""
    from .policy import POLICIES, resolve_policy

    if isinstance(policies, str | type):
        policies = [policies]
    # every policy resolved once, here: unknown names and parameters fail before any work
    refs = [resolve_policy(p) for p in (policies if policies is not None else POLICIES)]
    names = tuple(ref.label for ref in refs)
    items: list[tuple[Instance, str]] = []
    strs = [p for p in paths_or_instances if isinstance(p, str)]
    paths = iter(instance_paths(strs)) if strs else iter(())
    for p in paths_or_instances:
        if isinstance(p, Instance):
            items.append((p, p.name))
    for path in paths:
        items.append((load_instance(path), path))
    say = progress_logger(__name__, True, "kvopt compare") if progress else None

    out = []
    for k, (inst, src) in enumerate(items):
        if say:
            say(f"instance {k + 1}/{len(items)}: {src or inst.name} (n={inst.n}, M={inst.memory})")
        out.append(
            compare_instance(
                inst,
                refs,
                exact=exact,
                time_limit=time_limit,
                threads=threads,
                seed=seed,
                solver=solver,
                source=src,
                progress=say,
                time_model=time_model,
            )
        )
    return Comparison(tuple(out), names, exact, time_limit if exact else None, seed)


# ---------------------------------------------------------------------------
# Text output and pictures


def _fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def format_table(ic: InstanceComparison) -> str:
    """A readable table for one instance."""
    inst = ic.instance
    lines = [
        f"instance {ic.label}  ("
        + (f"{inst.name}, " if inst.name and inst.name != ic.label else "")
        + f"n={inst.n}, M={inst.memory})",
        f"  lower bound {ic.lb} ({ic.lb_name}: the better of the area and processing bounds, "
        "SPEC §2; kvopt bound may give a higher one: its rank bound, or --lp)"
        + (f"; best schedule {ic.ub} ({ic.ub_name})" if ic.ub is not None else ""),
    ]
    tm = ic.time_model
    if tm is not None and inst.is_timed and not tm.is_unit:  # rounds differ per schedule
        lines[1] = (
            "  rounds: each schedule realizes its own arrival rounds (SPEC §10), so the round "
            "totals are not compared with a round bound"
        )
    if ic.exact is not None:
        e = ic.exact
        if e["status"] == "optimal":
            lines.append(
                f"  Opt = {e['objective']} (proved optimal by {e['solver']}, {e['seconds']}s)"
            )
        else:
            lines.append(
                f"  Opt not certified: status {e['status']}, incumbent {e['objective']}, "
                f"proven bound {e['bound']} ({e['seconds']}s)"
            )
    certified = ic.opt is not None
    w = max([18, *(len(r.policy) for r in ic.rows)])
    lb_head = f"/LB({ic.lb_name})"  # the ratio to the bound named in the header line
    cols = [Column("policy", "<", w), Column("total", ">", 9), Column("makespan", ">", 9),
            Column("kills", ">", 6), Column(lb_head, ">", max(8, len(lb_head))),
            Column("/UB", ">", 8)]  # fmt: skip
    if ic.exact is not None:
        cols.append(Column("/Opt", ">", 17))
    timed = ic.time_model is not None
    if timed:
        lb = ic.latency_bound or {}
        lines.append(
            f"  seconds: time model {ic.time_model.label()}; lower bound on Opt's total latency "
            f"{lb.get('value', 0):.4g} s ({lb.get('name')}, SPEC §10)"
        )
        cols += [Column("mean s", ">", 10), Column("p95 s", ">", 10),
                 Column("ΣE/LB", ">", 8)]  # fmt: skip
    rows = []
    for r in ic.rows:
        if not r.applicable:
            rows.append([r.policy, f"not applicable: {r.reason}"])
            continue
        row = [r.policy, str(r.total_completion), str(r.makespan), str(r.kills),
               _fmt_ratio(r.ratio_lb)]  # fmt: skip
        row.append(_fmt_ratio(r.ratio_ub))
        if ic.exact is not None:
            if certified:
                row.append(_fmt_ratio(r.ratio_opt))
            else:
                row.append(f"[{_fmt_ratio(r.ratio_ub)}, {_fmt_ratio(r.ratio_optimistic)}]")
        if timed and r.latency is not None:
            row += [f"{r.latency['mean_latency']:.4g}", f"{r.latency['p95_latency']:.4g}",
                    _fmt_ratio(r.latency["ratio"])]  # fmt: skip
        rows.append(row)
    lines += render_table(cols, rows, indent="  ", sep=" ", rule="line")
    return "\n".join(lines)


def format_summary(cmp: Comparison) -> str:
    s = cmp.summary()
    lines = [f"summary over {len(cmp.instances)} instances (ratio to Opt where certified, else LB)"]
    w = max([18, *(len(p) for p in s)])
    cols = [Column("policy", "<", w), Column("runs", ">", 5), Column("n/a", ">", 5),
            Column("mean", ">", 8), Column("max", ">", 8)]  # fmt: skip
    rows = [[p, str(d["instances"]), str(d["not_applicable"]), _fmt_ratio(d["mean_ratio"]),
             _fmt_ratio(d["max_ratio"])] for p, d in s.items()]  # fmt: skip
    lines += render_table(cols, rows, indent="  ", sep=" ")
    return "\n".join(lines)


def plot_comparison(cmp: Comparison, path: str) -> str:
    """Bar chart of each policy's ratio (to Opt where certified, else to the best LB)."""
    from .plotting import plot_ratios

    ratios: dict[str, dict[str, float | None]] = {}
    refs = set()
    for ic in cmp.instances:
        label = ic.label
        while label in ratios:
            label += "'"
        d: dict[str, float | None] = {}
        for r in ic.rows:
            if r.ratio_opt is not None:
                d[r.policy] = r.ratio_opt
                refs.add("Opt")
            else:
                d[r.policy] = r.ratio_optimistic
                if r.applicable:
                    refs.add("best lower bound")
        ratios[label] = d
    ref = " / ".join(sorted(refs)) or "Opt"
    return plot_ratios(ratios, path, reference=ref, title="total completion time ratio")


def plot_policy_summary(cmp: Comparison, path: str, title: str | None = None) -> str:
    """One bar per policy: its worst ratio over the instances (mean as a dot), log scale.

    The reference is Opt where certified, else the best lower bound (then the
    ratio is an upper estimate).  Policies that apply to no instance are left out.
    """
    import numpy as np

    from .plotting import ShownFigure, save_figure

    summ = cmp.summary()
    names = [p for p in cmp.policies if summ[p]["instances"]]
    worst = np.array([summ[p]["max_ratio"] for p in names], dtype=float)
    mean = np.array([summ[p]["mean_ratio"] for p in names], dtype=float)
    fig = ShownFigure(figsize=(8.0, 0.32 * len(names) + 1.6))
    fig.set_layout_engine("constrained")
    ax = fig.subplots()
    y = np.arange(len(names))[::-1]
    ax.barh(y, worst - 1.0, left=1.0, color="tab:blue", alpha=0.75, label="worst ratio")
    ax.plot(mean, y, "o", color="k", ms=4, label="mean ratio")
    for yy, w, p in zip(y, worst, names):
        na = summ[p]["not_applicable"]
        ax.text(w * 1.03, yy, f"{w:.2f}" + (f"  ({na} n/a)" if na else ""), va="center", fontsize=7)
    ax.set_xscale("log")
    ax.set_yticks(y)
    ax.set_yticklabels(names, fontsize=8)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xlim(0.95, max(2.0, float(np.nanmax(worst)) * 1.6))
    ax.set_xlabel(
        "total completion time / Opt (certified; '<=' instances: / best lower bound), log"
    )
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, axis="x", which="both", alpha=0.3)
    ax.set_title(
        title or f"every policy on {len(cmp.instances)} instances: worst and mean ratio",
        fontsize=10,
    )
    save_figure(fig, path)
    return str(path)


def plot_worst_vs_opt(ic: InstanceComparison, path: str) -> str | None:
    """Side-by-side picture of the worst applicable policy and Opt's schedule (needs ``exact``)."""
    from .plotting import plot_schedules

    worst = ic.worst()
    if worst is None or ic.opt_schedule is None:
        return None
    opt_label = "Opt" if ic.opt is not None else "best exact schedule"
    return plot_schedules(
        ic.instance,
        [worst.schedule, ic.opt_schedule],
        path,
        [worst.policy, opt_label],
        title=f"{ic.label}: worst policy vs {opt_label}",
    )
