"""Pictures of schedules and of comparisons (``kvopt plot``, ``kvopt compare --plot``).

Plotting reads schedules only (and the instance, for the prompts).  Figures are
drawn with matplotlib's object API on an Agg canvas, so importing this module
never changes the user's matplotlib backend; they are :class:`ShownFigure` objects, which a
notebook shows as pictures (``fig = kvopt.plot_schedule(…); fig``).

* :func:`plot_schedules` — for each schedule, memory over time (every
  attempt's growing footprint ``s + u + 1`` stacked, killed attempts hatched
  and drawn in grey, the budget ``M`` as a red line) above a Gantt chart of the
  attempts (one row per job, killed attempts hatched and ending in a red ×; with
  arrivals, each job's arrival round as a black tick, dotted until its first start).
  Two schedules (``--vs``) are drawn side by side with the same axis limits, so
  the reader sees where one loses to the other.
* :func:`plot_ratios` — bar chart of each policy's ratio to the reference
  (Opt or the best lower bound) per instance.
* :func:`plot_best_so_far` — a search campaign's best certified and optimistic
  ratio against evaluations and against seconds (from its log's rows).
* :func:`linear_n_figure` / :func:`plot_linear_n` — the ``online-linear-n``
  construction: latency ratio against n per policy (log–log; never-kill
  policies filled, policies that may kill hollow), the fitted lines, a slope-1
  reference and the ``(n−1)/12`` lower bound (from
  :func:`kvopt.validation.linear_n.online_linear_n`'s data, plain dicts).
* :func:`plot_growth` — a growth sweep's certified ratio against the factor,
  log–log, one line per direction (``kvopt grow``); :func:`plot_growth_panels`
  several sweeps side by side (the validation report's sweep pictures).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .instance import Instance
from .memory import memory_profile
from .schedule import Schedule, check_schedule


class ShownFigure(Figure):
    """A matplotlib :class:`~matplotlib.figure.Figure` that shows itself in a notebook.

    kvopt draws with matplotlib's object API (never pyplot: the user's backend is left
    alone), and a notebook shows only pyplot's figures by itself: a cell ending in
    ``fig = kvopt.plot_schedule(…); fig`` would print ``<Figure size …>`` (issue 55: the
    tutorials showed no pictures).  This figure gives Jupyter its PNG (``_repr_png_``).
    """

    def _repr_png_(self) -> bytes:
        import io

        FigureCanvasAgg(self)
        buf = io.BytesIO()
        self.savefig(buf, format="png", dpi=90)
        return buf.getvalue()


#: Above this many (attempt × round) cells the memory panel shows the total only.
STACK_LIMIT = 3_000_000
#: Above this many attempts the memory panel shows the total only.
STACK_ATTEMPTS = 400


def _colors(n: int):
    from matplotlib import colormaps

    cmap = colormaps["tab20"]
    return [cmap(i % 20) for i in range(max(n, 1))]


def readable_label(name: str | None) -> str | None:
    """A panel's name for a schedule's producer: ``exact:auto(bnb)`` (an exact solver's
    schedule; a file does not say whether it was proved optimal) reads ``exact solver (auto,
    route bnb)``, other names stay as they are (:func:`kvopt.api.plot_schedule` names a solve
    result ``Opt`` when it is proved optimal)."""
    if not name or not name.startswith("exact"):
        return name
    solver = name.split(":", 1)[1] if ":" in name else ""
    if "(" in solver and solver.endswith(")"):
        head, route = solver[:-1].split("(", 1)
        solver = f"{head}, route {route}"
    return f"exact solver ({solver})" if solver else "exact solver"


def panel_name(result) -> str | None:
    """A readable panel name: a policy's name, ``Opt (proved; solver auto, route bnb)`` for a
    solve proved optimal, ``best found by solver … (not proved optimal, gap …)`` otherwise."""
    if getattr(result, "policy", None):
        return result.policy
    solver = getattr(result, "solver", None)
    if solver is None:
        return None
    how = readable_label(f"exact:{solver}")[len("exact solver (") : -1]
    if getattr(result, "optimal", False):
        return f"Opt (proved; {how})"
    gap = getattr(result, "gap", None)
    gap_text = "" if gap is None else f", gap {100 * gap:.1f} %"
    return f"best found by the exact solver ({how}; not proved optimal{gap_text})"


def _title(inst: Instance, sched: Schedule, label: str | None) -> str:
    res = check_schedule(inst, sched)
    name = label or readable_label(sched.producer) or "schedule"
    if res.objectives is None:
        obj = "incomplete"
    else:
        obj = f"ΣC = {res.total_completion}, makespan = {res.makespan}"
    kills = sched.kills
    extra = f", {kills} kill{'s' if kills != 1 else ''}" if kills else ""
    bad = "" if res.valid else "  [INVALID]"
    return f"{name}: {obj}{extra}{bad}"


def _draw_memory(ax, inst: Instance, sched: Schedule, horizon: int, colors) -> None:
    M = inst.memory
    atts = sorted(sched.attempts, key=lambda a: (a.start, a.job))
    edges = np.arange(horizon + 1)
    if len(atts) <= STACK_ATTEMPTS and len(atts) * horizon <= STACK_LIMIT:
        base = np.zeros(horizon + 1, dtype=np.int64)
        for a in atts:
            layer = np.zeros(horizon + 1, dtype=np.int64)
            end = min(a.start + a.rounds, horizon)
            if a.start < end:
                layer[a.start : end] = inst.prompts[a.job] + 1 + np.arange(end - a.start)
            top = base + layer
            mask = layer > 0
            # extend each run by one edge so 'post' steps cover the last round
            where = mask | np.concatenate([[False], mask[:-1]])
            if a.completed:
                ax.fill_between(
                    edges, base, top, where=where, step="post", color=colors[a.job], lw=0
                )
            else:
                ax.fill_between(
                    edges,
                    base,
                    top,
                    where=where,
                    step="post",
                    facecolor="0.85",
                    edgecolor="tab:red",
                    hatch="///",
                    lw=0,
                )
            base = top
    else:
        prof = memory_profile(inst, sched, horizon)
        ax.fill_between(edges[:-1], 0, prof, step="post", color="tab:blue", lw=0)
    ax.axhline(M, color="tab:red", ls="--", lw=1.2, label=f"budget M = {M}")
    ax.set_ylabel("memory (tokens)")
    handles, _ = ax.get_legend_handles_labels()
    if any(not a.completed for a in atts):
        from matplotlib.patches import Patch

        handles.append(
            Patch(facecolor="0.85", edgecolor="tab:red", hatch="///", label="killed attempt")
        )
    ax.legend(handles=handles, loc="upper right", fontsize=8, framealpha=0.8)


def _draw_gantt(ax, inst: Instance, sched: Schedule, colors) -> None:
    for a in sched.attempts:
        if a.completed:
            ax.barh(a.job, a.rounds, left=a.start, height=0.7, color=colors[a.job], lw=0)
        else:
            ax.barh(
                a.job,
                a.rounds,
                left=a.start,
                height=0.7,
                facecolor="0.85",
                edgecolor="tab:red",
                hatch="///",
                lw=0.5,
            )
            ax.plot([a.start + a.rounds], [a.job], marker="x", color="tab:red", ms=6, mew=1.5)
    if inst.has_arrivals:  # each job's arrival (a black tick), dotted until its first start
        jobs = np.arange(inst.n)
        arr = inst.arrivals
        first = np.full(inst.n, -1, dtype=np.int64)
        for a in sorted(sched.attempts, key=lambda a: a.start, reverse=True):
            first[a.job] = a.start
        waits = first > arr
        if waits.any():  # no legend entry for a wait no job has (issue 55 walkthrough)
            ax.hlines(jobs[waits], arr[waits], first[waits], colors="0.45", linestyles=":",
                      lw=1.0, label="waiting since arrival")  # fmt: skip
        ax.scatter(arr, jobs, marker="|", s=90, color="k", linewidths=1.6, zorder=4,
                   label="arrival")  # fmt: skip
        ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, fontsize=7,
                  frameon=False, borderaxespad=0.1)  # above the chart, not over its bars  # fmt: skip
    ax.set_ylabel("job")
    ax.set_xlabel("round")
    # job 0 at the top, in every figure: the limits are set, not inverted, since the Gantt
    # axes of a figure share y and inverting each would flip a two-column figure back
    # (issue 68: a single plot and --vs / record plots had opposite orders)
    ax.set_ylim(inst.n - 0.5, -0.5)
    if inst.n <= 30:
        ax.set_yticks(range(inst.n))
        ax.tick_params(axis="y", labelsize=7)


def schedule_figure(
    inst: Instance,
    schedules: Sequence[Schedule],
    labels: Sequence[str | None] | None = None,
    *,
    title: str | None = None,
) -> Figure:
    """The figure of :func:`plot_schedules` (one column per schedule, shared axis limits)."""
    k = len(schedules)
    labels = list(labels or [None] * k)
    horizon = max(
        (a.start + a.rounds for s in schedules for a in s.attempts),
        default=1,
    )
    horizon = max(horizon, 1)
    colors = _colors(inst.n)
    gantt_h = min(8.0, 1.2 + 0.18 * inst.n)
    fig = ShownFigure(figsize=(6.5 * k, 3.2 + gantt_h), layout="constrained")
    axes = fig.subplots(
        2, k, squeeze=False, sharex=True, sharey="row", height_ratios=[3.2, gantt_h]
    )
    peak = inst.memory
    for c, sched in enumerate(schedules):
        _draw_memory(axes[0][c], inst, sched, horizon, colors)
        _draw_gantt(axes[1][c], inst, sched, colors)
        axes[0][c].set_title(_title(inst, sched, labels[c]), fontsize=10)
        prof = memory_profile(inst, sched, horizon)
        peak = max(peak, int(prof.max()) if prof.size else 0)
    for c in range(k):
        axes[0][c].set_xlim(0, horizon)
        axes[0][c].set_ylim(0, peak * 1.08)
        if c > 0:
            axes[0][c].set_ylabel("")
            axes[1][c].set_ylabel("")
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


def save_figure(fig: Figure, path: str | os.PathLike, dpi: int = 110) -> None:
    """Write a PNG (or any format matplotlib knows from the suffix) atomically."""
    import io

    from .fileio import write_bytes_atomic

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fmt = os.path.splitext(str(path))[1].lstrip(".").lower() or "png"
    fig.savefig(buf, format=fmt, dpi=dpi)
    write_bytes_atomic(path, buf.getvalue())


def plot_schedules(
    inst: Instance,
    schedules: Sequence[Schedule],
    path: str | os.PathLike,
    labels: Sequence[str | None] | None = None,
    *,
    title: str | None = None,
) -> str:
    """Memory-over-time above a Gantt chart for one schedule or two side by side; returns path."""
    fig = schedule_figure(inst, schedules, labels, title=title)
    save_figure(fig, path)
    return str(path)


def plot_ratios(
    ratios: Mapping[str, Mapping[str, float | None]],
    path: str | os.PathLike,
    *,
    reference: str = "Opt",
    title: str | None = None,
) -> str:
    """Grouped bar chart: ``ratios[instance][policy]`` (``None`` = not applicable, skipped)."""
    instances = list(ratios)
    policies: list[str] = []
    for inst_name in instances:
        for p in ratios[inst_name]:
            if p not in policies:
                policies.append(p)
    k = max(len(instances), 1)
    width = 0.8 / k
    fig = ShownFigure(figsize=(min(16.0, max(6.0, 0.16 * len(policies) * k + 2)), 4.2))
    fig.set_layout_engine("constrained")
    ax = fig.subplots()
    colors = _colors(k)
    x = np.arange(len(policies))
    for j, inst_name in enumerate(instances):
        vals = [ratios[inst_name].get(p) for p in policies]
        ys = [v if v is not None else 0.0 for v in vals]
        bars = ax.bar(x + (j - (k - 1) / 2) * width, ys, width, label=inst_name, color=colors[j])
        for b, v in zip(bars, vals):
            if v is None:
                b.set_alpha(0)
                ax.text(
                    b.get_x() + b.get_width() / 2,
                    0.02,
                    "n/a",
                    ha="center",
                    va="bottom",
                    fontsize=8,
                    color="0.3",
                    transform=ax.get_xaxis_transform(),
                )
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels(policies, rotation=40, ha="right", fontsize=8)
    ax.set_ylabel(f"ratio to {reference}")
    if len(instances) > 1 and len(instances) <= 12:
        ax.legend(fontsize=7)
    if title:
        ax.set_title(title, fontsize=10)
    save_figure(fig, path)
    return str(path)


def plot_best_so_far(
    rows: Sequence[Mapping[str, float | None]],
    path: str | os.PathLike,
    *,
    title: str | None = None,
) -> str:
    """A search's best certified and optimistic ratio so far, against evaluations and seconds.

    ``rows`` are the evaluations in index order with ``best_certified``,
    ``best_optimistic``, ``ratio_certified`` and ``t`` (seconds), as
    :func:`kvopt.campaign.read_history` gives them.
    """
    fig = ShownFigure(figsize=(10.5, 4.0))
    fig.set_layout_engine("constrained")
    axes = fig.subplots(1, 2, sharey=True)
    k = np.arange(1, len(rows) + 1)
    t = np.array([r.get("t") or 0.0 for r in rows], dtype=float)
    order = np.argsort(t, kind="stable")  # by time: the running maximum in finishing order
    for ax, x, xlabel in ((axes[0], k, "evaluations"), (axes[1], None, "seconds (wall clock)")):
        bc = np.array(
            [np.nan if r.get("best_certified") is None else r["best_certified"] for r in rows]
        )
        bo = np.array(
            [np.nan if r.get("best_optimistic") is None else r["best_optimistic"] for r in rows]
        )
        rc = np.array(
            [np.nan if r.get("ratio_certified") is None else r["ratio_certified"] for r in rows]
        )
        if x is None:
            x = t[order]
            rc_t = rc[order]
            bc = np.fmax.accumulate(np.nan_to_num(rc_t, nan=-np.inf))
            ro = np.array([np.nan if r.get("ratio_optimistic") is None else r["ratio_optimistic"]
                           for r in rows])[order]  # fmt: skip
            bo = np.fmax.accumulate(np.nan_to_num(ro, nan=-np.inf))
            rc = rc_t
        ax.plot(x, rc, ".", ms=3, color="0.6", label="each evaluation (certified)")
        ax.step(x, bo, where="post", color="tab:orange", lw=1.2, label="best optimistic ALG/LB")
        ax.step(x, bc, where="post", color="tab:blue", lw=2, label="best certified ALG/UB")
        ax.set_xlabel(xlabel)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("ratio to Opt")
    axes[0].legend(fontsize=8, loc="lower right")
    if title:
        fig.suptitle(title, fontsize=11)
    save_figure(fig, path)
    return str(path)


_MARKERS = "osD^v<>pPXh*"


def linear_n_figure(data: Mapping, ax=None) -> Figure:
    """Latency ratio against n for the ``online-linear-n`` construction (log–log).

    ``data`` is :func:`kvopt.validation.linear_n.online_linear_n`'s result (or
    a verdict's ``data``): ``ns`` and ``policies`` (each with ``points``
    ``[n, certified, optimistic]``, ``exponent_certified``, ``exponent_tail``,
    ``never_kills``).  Draws on ``ax`` when given (e.g. a pyplot axes in a
    notebook), else on a new figure; returns the figure.
    """
    if ax is None:
        fig = ShownFigure(figsize=(10.5, 4.8))
        ax = fig.subplots()
        fig.subplots_adjust(left=0.08, right=0.58, bottom=0.12, top=0.9)
    else:
        fig = ax.figure
    ns = np.asarray(data["ns"], dtype=float)
    for k, (pol, d) in enumerate(data["policies"].items()):
        pts = np.asarray(d["points"], dtype=float)
        if not len(pts):
            continue
        color, marker = f"C{k % 10}", _MARKERS[k % len(_MARKERS)]
        e, et = d.get("exponent_certified"), d.get("exponent_tail")
        label = pol + ("" if e is None else f": exponent {e:.2f}")
        label += "" if et is None else f" (upper half {et:.2f})"
        label += "" if d.get("never_kills", True) else ", may kill: not judged"
        face = color if d.get("never_kills", True) else "none"
        ax.loglog(pts[:, 0], pts[:, 1], marker, ms=6 - 0.25 * (k % 8), color=color, mfc=face,
                  ls="none", label=label)  # fmt: skip
        if e is not None and len(pts) >= 2:
            lx, ly = np.log(pts[:, 0]), np.log(pts[:, 1])
            slope, icpt = np.polyfit(lx, ly, 1)
            ax.loglog(pts[:, 0], np.exp(icpt + slope * lx), "-", color=color, lw=0.8, alpha=0.7)
    xs = np.geomspace(ns.min(), ns.max(), 40)
    ax.loglog(xs, (xs - 1) / 12, color="tab:red", lw=2.2, label="(n-1)/12: lower bound (abstract)")
    judged = [np.asarray(d["points"], float) for d in data["policies"].values()
              if d.get("never_kills", True) and d["points"]]  # fmt: skip
    if judged:
        y0 = min(p[0, 1] for p in judged)
        ax.loglog(xs, y0 * xs / xs[0], "k--", lw=1, label="reference slope 1")
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for axis in (ax.xaxis, ax.yaxis):  # 0.2, 0.5, 1, 2, 5, 10 … rather than 2×10⁰
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("n (jobs: 1 long + n-1 released; M = 2(n-1)n)")
    ax.set_ylabel("latency ratio ALG/Opt (certified, log)")
    ax.set_title("Θ(n) construction (toolkit's reading): latency ratio against n")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def plot_linear_n(data: Mapping, path: str | os.PathLike) -> str:
    """:func:`linear_n_figure` written to ``path`` (PNG); returns the path."""
    save_figure(linear_n_figure(data), path)
    return str(path)


#: Above this many directions a growth panel's legend goes beside the axes.
GROWTH_LEGEND_INSIDE = 8


def draw_brackets(ax, xs, lo, hi, color, *, rel: float = 1e-9, **kw) -> int:
    """Vertical bars from ``lo`` to ``hi`` (a bracket: certified to optimistic ratio) at each
    ``x`` where the two differ (relative ``rel``); returns how many were drawn.  Where they
    meet the point alone shows the value (the bracket is exact there)."""
    n = 0
    for x, a, b in zip(xs, lo, hi, strict=True):
        if b is not None and a is not None and b > a * (1 + rel):
            ax.vlines(x, a, b, color=color, lw=kw.get("lw", 2.5), alpha=kw.get("alpha", 0.45))
            ax.plot([x, x], [b, b], "_", color=color, ms=8, alpha=kw.get("alpha", 0.45) + 0.2)
            n += 1
    return n


def _draw_growth(ax, series: Mapping[str, Sequence[tuple]], title: str | None,
                 limits: Mapping[str, tuple[float, float]] | None = None):  # fmt: skip
    colors = _colors(max(len(series), 1))
    bars = 0
    for k, (name, pts) in enumerate(series.items()):
        pts = sorted(pts)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=colors[k], label=name)
        if any(len(p) > 2 for p in pts):  # (factor, certified, optimistic): the brackets
            bars += draw_brackets(ax, [p[0] for p in pts], [p[1] for p in pts],
                                  [p[2] if len(p) > 2 else None for p in pts], colors[k])  # fmt: skip
        if limits and name in limits and pts:  # a bounded direction: its limit estimate ± spread
            lim, spread = limits[name]
            x0, x1 = pts[0][0], pts[-1][0] * 2
            ax.plot([x0, x1], [lim, lim], "--", color=colors[k], lw=1,
                    label=f"{name}: limit {lim:.4g} ± {spread:.2g}")  # fmt: skip
            if spread > 0:
                ax.fill_between([x0, x1], [max(lim - spread, 1e-9)] * 2, [lim + spread] * 2,
                                color=colors[k], alpha=0.12, lw=0)  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    from matplotlib.ticker import FuncFormatter, LogFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))  # 1, 2, 4 … not 2²
    for fmt in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):
        fmt(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))  # 2, 3 … not 2×10⁰
    ax.set_xlabel("factor of the axis (M, or n when M is fixed)")
    ax.set_ylabel("certified ratio ALG/UB" + (" (bars: up to ALG/LB)" if bars else ""))
    ax.grid(True, which="both", alpha=0.3)
    if len(series) > GROWTH_LEGEND_INSIDE:  # many directions: the legend beside the lines
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    elif series:
        ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=10)


def plot_growth(
    series: Mapping[str, Sequence[tuple[float, float]]],
    path: str | os.PathLike,
    *,
    title: str | None = None,
    limits: Mapping[str, tuple[float, float]] | None = None,
) -> str:
    """Certified ratio against the factor (log–log), one line per direction: ``series[name]``
    is the direction's ``(factor, ratio)`` points, or ``(factor, certified, optimistic)`` — then
    a bar shows each bracket where the two differ; ``limits[name]`` (a bounded direction's limit
    estimate and spread, SPEC §9) is drawn as a dashed line in a band."""
    return plot_growth_panels([(title, series, limits or {})], path)


def plot_growth_panels(
    panels: Sequence[tuple],
    path: str | os.PathLike,
    *,
    title: str | None = None,
) -> str:
    """Several growth sweeps (SPEC §9) in one picture, one panel per ``(panel title, series)``
    (or ``(panel title, series, limits)``) drawn as :func:`plot_growth` draws one sweep (two
    panels a row; ``title`` above them all),
    e.g. every sweep of a claim judged by sweeps in the validation report."""
    cols = min(max(len(panels), 1), 2)
    rows = -(-max(len(panels), 1) // cols)
    wide = any(len(panel[1]) > GROWTH_LEGEND_INSIDE for panel in panels)
    fig = ShownFigure(figsize=((9.5 if wide else 7.0) * cols, 4.6 * rows))
    fig.set_layout_engine("constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax, panel in zip(axes, panels, strict=False):
        _draw_growth(ax, panel[1], panel[0], panel[2] if len(panel) > 2 else None)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=11)
    save_figure(fig, path)
    return str(path)
