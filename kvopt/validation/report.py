"""The validation report: a Markdown table and, beside it, PNG plots.

:func:`write_report` writes ``FILE.md`` with the verdict table, the text of
every verdict, the growth data (points and fitted exponents) and these
pictures in the same folder:

* ``FILE-ratios.png`` — per ratio claim, the certified ratios of every
  instance evaluated (dots; brackets up to the optimistic ratios) and of the
  records given with ``--from`` that count for it (stars) against the
  claim's bound (a red bar; per-instance bounds are drawn as ratio/bound
  against 1), log scale;
* ``FILE-perjob.png`` — per per-job/invariant claim, the distribution of
  ``max_i lhs_i/rhs_i`` against 1;
* ``FILE-prop1.png`` — Proposition 1: worst certified ratio against L per
  policy (log–log) with the least-squares lines and exponents;
* ``FILE-sqrtn.png`` — the adaptive adversary: latency ratio against n per
  policy (log–log) with fitted lines and a √n reference;
* ``FILE-linearn.png`` — the Θ(n) construction (``online-linear-n``): latency
  ratio against n per policy (log–log), fitted lines, a slope-1 reference and
  the ``(n−1)/12`` lower bound (:func:`kvopt.plotting.plot_linear_n`), with the
  table of ratios per policy and n in the Markdown;
* ``FILE-scaling.png`` — Route's (and Route-online's) worst ratio against n
  and M over the scaling sweep;
* ``FILE-sweeps-CLAIM.png`` — per claim judged by growth sweeps (SPEC §7 and
  §9: ``route``, ``route-makespan``, ``route-online`` from
  :func:`kvopt.validation.sweeps.judge_constant_free`; ``fcfs-growth``,
  ``sf-growth`` from :func:`kvopt.validation.sweeps.discovery_claim`), one
  panel per sweep: certified ratio against the doubling factor, log–log, one
  line per direction (:func:`kvopt.plotting.plot_growth_panels`, the picture of
  ``kvopt grow``), with the points listed in the Markdown.  A claim whose data
  holds no sweep point gets no picture and no reference.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..fileio import write_bytes_atomic
from ..plotting import draw_brackets


def _fig():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> None:
    from ..plotting import save_figure

    save_figure(fig, path)


def _plain_log_ticks(ax, which: str) -> None:
    """Log axes labelled 0.2, 0.5, 1, 2, 5, 10 … instead of 2×10⁰ (and not "0" below 1)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for name in which:
        axis = ax.xaxis if name == "x" else ax.yaxis
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())


def plot_ratio_claims(result, path: Path) -> bool:
    claims = [c for c in result.claims if c.kind == "ratio" and c.data.get("distribution")]
    claims += [
        c for c in result.claims if c.kind == "ratio" and c.data.get("scaling") and c not in claims
    ]
    if not claims:
        return False
    plt = _fig()
    # wide enough for the legend beside the axes and the title above both (issue 55: with one
    # claim the axes' own title was clipped to "io claims…")
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(claims) + 4), 4.8))
    rng = np.random.default_rng(0)
    bracketed = given_shown = False
    for k, c in enumerate(claims):
        dist = c.data.get("distribution") or {}
        per_instance = isinstance(c.bound, str)  # a formula evaluated per instance
        ys = dist.get("score") if per_instance else dist.get("ratio_certified")
        if not ys and c.data.get("scaling"):
            ys = [r["ratio_certified"] for r in c.data["scaling"]["rows"]]
        ys = np.asarray(ys or [], dtype=float)
        x = k + rng.uniform(-0.25, 0.25, len(ys))
        if len(ys):
            ax.scatter(
                x, ys, s=9, alpha=0.45, color="tab:blue", zorder=3,
                label="certified" if k == 0 else None,
            )  # fmt: skip
        yo = dist.get("ratio_optimistic")
        if yo and not per_instance and len(yo) == len(ys):  # each instance's bracket, as a bar
            if draw_brackets(ax, x, ys, yo, "tab:gray", lw=1.2, alpha=0.3) and not bracketed:
                ax.plot([], [], "-", color="tab:gray", alpha=0.5, label="bracket (up to ALG/LB)")
                bracketed = True
        given = [
            g["score"] if per_instance else g["ratio_certified"]
            for g in dist.get("given") or ()
            if g.get("score") is not None or not per_instance
        ]
        if given:  # the --from records that count with the search's finds (issue 68)
            ax.scatter(
                [k] * len(given),
                given,
                s=70,
                marker="*",
                color="tab:orange",
                zorder=4,
                label="given record (--from)" if not given_shown else None,
            )
            given_shown = True
        bound = 1.0 if per_instance else (c.bound if isinstance(c.bound, int | float) else None)
        if bound:
            ax.plot([k - 0.4, k + 0.4], [bound, bound], color="tab:red", lw=2.5,
                    label="bound" if k == 0 else None)  # fmt: skip
        ax.text(k, 1.01, c.verdict, ha="center", va="bottom", fontsize=8,
                transform=ax.get_xaxis_transform(),
                color="darkgreen" if c.verdict == "holds" else "darkred")  # fmt: skip
    ax.set_yscale("log")
    ax.set_xticks(range(len(claims)))
    ax.set_xticklabels(
        [c.id + ("\n(ratio/bound)" if isinstance(c.bound, str) else "") for c in claims],
        rotation=30, ha="right", fontsize=8,
    )  # fmt: skip
    ax.set_ylabel("ALG / Opt (certified: ALG/UB), log scale")
    fig.suptitle("Ratio claims: every instance evaluated against the claim's bound", fontsize=11)
    ax.grid(True, which="both", axis="y", alpha=0.3)
    _plain_log_ticks(ax, "y")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return True


def plot_per_job(result, path: Path) -> bool:
    claims = [
        c for c in result.claims if c.kind in ("per-job", "invariant") and c.data.get("scores")
    ]
    if not claims:
        return False
    plt = _fig()
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(claims) + 2), 4.2))
    data = [np.asarray(c.data["scores"], dtype=float) for c in claims]
    ax.boxplot(data, whis=(0, 100))
    ax.axhline(1.0, color="tab:red", lw=2, label="claim: lhs/rhs <= 1")
    ax.set_xticks(range(1, len(claims) + 1))
    ax.set_xticklabels([f"{c.id}\n({c.verdict}, {c.instances} runs)" for c in claims], fontsize=8)
    ax.set_ylabel("max over jobs / states of lhs / rhs")
    ax.set_title("Per-job and invariant claims: slack of every run")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return True


def _has_points(claim) -> bool:
    """A construction's growth data (``data["policies"][p]["points"]``), not a discovery's."""
    pols = (claim.data or {}).get("policies") or {}
    return any(isinstance(d, Mapping) and "points" in d for d in pols.values())


def _growth_plot(per_policy: dict, xlabel: str, title: str, path: Path, ref: float | None) -> None:
    plt = _fig()
    fig, ax = plt.subplots(figsize=(10.5, 4.8))
    for k, (pol, d) in enumerate(per_policy.items()):
        pts = np.asarray(d["points"], dtype=float)
        if not len(pts):
            continue
        color = f"C{k}"
        e, et = d.get("exponent_certified"), d.get("exponent_tail")
        label = pol if e is None else f"{pol}: exponent {e:.2f}"
        if et is not None:
            label += f" (upper half {et:.2f})"
        if "case" in d:
            label += f", case {d['case']}"
        ax.loglog(pts[:, 0], pts[:, 1], "o", color=color, label=label)
        if pts.shape[1] > 2:  # [x, certified, optimistic]: the brackets where they differ
            draw_brackets(ax, pts[:, 0], pts[:, 1], pts[:, 2], color)
        for c, other in sorted((d.get("by_case") or {}).items()):
            if pol == "route" and str(c) != str(d.get("case")):  # Route: both families
                op = np.asarray(other["points"], dtype=float)
                et = other.get("exponent_tail")
                ax.loglog(op[:, 0], op[:, 1], "s", mfc="none", color=color,
                          label=f"{pol}, case {c}" + ("" if et is None else f" (upper half {et:.2f})"))  # fmt: skip
        if e is not None and len(pts) >= 2:
            lx, ly = np.log(pts[:, 0]), np.log(pts[:, 1])
            slope, icpt = np.polyfit(lx, ly, 1)
            xs = np.linspace(lx.min(), lx.max(), 20)
            ax.loglog(np.exp(xs), np.exp(icpt + slope * xs), "-", color=color, lw=1)
    if ref is not None:
        allx = np.concatenate(
            [np.asarray(d["points"], float)[:, 0] for d in per_policy.values() if d["points"]]
        )
        ally = np.concatenate(
            [np.asarray(d["points"], float)[:, 1] for d in per_policy.values() if d["points"]]
        )
        x0, y0 = allx.min(), ally.min()
        xs = np.geomspace(allx.min(), allx.max(), 20)
        ax.loglog(xs, y0 * (xs / x0) ** ref, "k--", lw=1, label=f"reference slope {ref}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("worst certified ratio (log; bars: up to the optimistic ratio)")
    _plain_log_ticks(ax, "xy")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.subplots_adjust(left=0.08, right=0.6, bottom=0.12, top=0.9)
    _save(fig, path)
    plt.close(fig)


def plot_scaling(result, path: Path) -> bool:
    claims = [c for c in result.claims if c.data.get("scaling")]
    if not claims:
        return False
    from matplotlib.ticker import NullLocator

    plt = _fig()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    xs: tuple[set, set] = (set(), set())
    for k, c in enumerate(claims):
        sc = c.data["scaling"]
        for ax, key, ek in ((axes[0], "points_n", "exponent_n"),
                            (axes[1], "points_memory", "exponent_memory")):  # fmt: skip
            pts = np.asarray(sc[key], dtype=float)
            if len(pts):
                xs[ax is axes[1]].update(pts[:, 0].tolist())
                if pts.shape[1] > 2:  # [x, certified, optimistic]: brackets where they differ
                    draw_brackets(ax, pts[:, 0], pts[:, 1], pts[:, 2], f"C{k}")
                e = sc.get(ek)
                ax.loglog(pts[:, 0], pts[:, 1], "o-", color=f"C{k}",
                          label=f"{c.id} (exponent {e:.2f})" if e is not None else c.id)  # fmt: skip
    for ax, values, lab in zip(axes, xs, ("n (jobs)", "M (memory, tokens)"), strict=True):
        ax.set_xlabel(lab)
        ax.set_ylabel("worst certified ratio (log)")
        _plain_log_ticks(ax, "xy")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        if values:  # ticks at the sweep's own n and M values
            ax.set_xticks(sorted(values), [f"{v:g}" for v in sorted(values)])
            ax.xaxis.set_minor_locator(NullLocator())
    axes[0].set_title("Constant-free claims: worst ratio against n")
    axes[1].set_title("... and against M")
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return True


def claim_sweeps(claim) -> list[tuple[str, Mapping[str, Any]]]:
    """The growth sweeps in a verdict's data, as ``(policy, sweep)`` pairs (a sweep is
    ``kvopt grow --json``'s object plus ``record``): ``data["growth"]["sweeps"]`` of a
    constant-free claim, ``data["policies"][policy]["sweeps"]`` of a discovery claim.  Sweeps
    without any point are left out."""
    data = claim.data or {}
    found = [
        (sw.get("policy", claim.id), sw) for sw in (data.get("growth") or {}).get("sweeps", ())
    ]
    for policy, f in (data.get("policies") or {}).items():
        if isinstance(f, Mapping):
            found += [(policy, sw) for sw in f.get("sweeps", ())]
    return [(p, sw) for p, sw in found if any(d.get("steps") for d in sw.get("directions", ()))]


def _short(path: str, parts: int = 3) -> str:
    return "/".join(Path(path).parts[-parts:]) if path else "-"


def _direction_label(d: Mapping[str, Any]) -> str:
    e = d.get("exponent")
    return f"{d['name']}: {d['verdict']}" + ("" if e is None else f", exponent {e:.2f}")


def _limits(sw: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    """The limit estimates of a sweep's bounded directions, by panel label (SPEC §9)."""
    return {_direction_label(d): (d["limit"], d.get("limit_spread") or 0.0)
            for d in sw["directions"] if d.get("steps") and d.get("limit") is not None}  # fmt: skip


def plot_sweeps(claim, path: Path) -> bool:
    """:func:`claim_sweeps` of ``claim`` drawn to ``path``; False (nothing written) without any."""
    from ..plotting import plot_growth_panels

    sweeps = claim_sweeps(claim)
    if not sweeps:
        return False
    panels = [
        (f"{policy}: sweep of {_short(sw.get('record', ''))} ({sw['verdict']})",
         {_direction_label(d): [(p["factor"], p["ratio_certified"], p["ratio_optimistic"])
                                for p in d["steps"]]
          for d in sw["directions"] if d.get("steps")}, _limits(sw))
        for policy, sw in sweeps
    ]  # fmt: skip
    title = (f"{claim.id} ({claim.verdict}): certified ratio against the axis factor "
             "(bars: brackets up to the optimistic ratio where Opt is not proved; dashed: limit "
             "estimates of bounded directions)")  # fmt: skip
    plot_growth_panels(panels, path, title=title)
    return True


def sweep_lines(claim) -> list[str]:
    """The Markdown list of :func:`claim_sweeps`: per sweep, every direction's verdict, exponent
    and certified ratio at each factor."""
    lines = []
    for policy, sw in claim_sweeps(claim):
        dirs = []
        for d in sw["directions"]:
            e = d.get("exponent")
            pts = ", ".join(f"x{p['factor']:g} {p['ratio_certified']:.3f}" for p in d["steps"])
            lim = (f", limit {d['limit']:.4g} ± {d.get('limit_spread') or 0:.2g} "
                   f"({d.get('bounded_rule')})" if d.get("limit") is not None else "")  # fmt: skip
            dirs.append(f"{d['name']} {d['verdict']} (exponent {'-' if e is None else f'{e:.3f}'}"
                        f" per doubling of {d.get('axis', 'the factor')}{lim})"
                        f": {pts or 'no point'}")  # fmt: skip
        lines.append(f"* {policy}, sweep of `{sw.get('record', '-')}` (**{sw['verdict']}**): "
                     + "; ".join(dirs))  # fmt: skip
    return lines


def _effort_words(result) -> str:
    """The run's effort by its numbers ("default" only when it is the default one)."""
    if result.effort:
        from .effort import effort_text

        return f"effort: {effort_text(result.effort)}"
    return "quick effort" if result.quick else "effort not recorded (an older validation.json)"


def write_report(result, path: str | os.PathLike) -> list[str]:
    """Write the Markdown report and its PNGs; return the files written."""
    from . import format_table
    from .result import scope_text

    path = Path(path)
    stem = path.with_suffix("")
    pics: list[tuple[str, str]] = []
    written = []
    for suffix, fn, caption in (
        ("ratios", plot_ratio_claims, "Ratio claims: certified ratios against the bound"),
        ("perjob", plot_per_job, "Per-job and invariant claims: slack of every run"),
        ("scaling", plot_scaling, "Constant-free claims: worst ratio against n and M"),
    ):
        p = Path(f"{stem}-{suffix}.png")
        if fn(result, p):
            pics.append((p.name, caption))
            written.append(str(p))
    growth = {c.id: c for c in result.claims if c.kind == "growth"}
    if "single-priority" in growth:
        p = Path(f"{stem}-prop1.png")
        _growth_plot(growth["single-priority"].data["policies"], "L (Proposition 1 parameter)",
                     "Proposition 1: worst certified ratio against L", p, 0.5)  # fmt: skip
        pics.append((p.name, "Proposition 1 families: ratio against L with fitted exponents"))
        written.append(str(p))
    if "online-sqrt-n" in growth:
        p = Path(f"{stem}-sqrtn.png")
        _growth_plot(growth["online-sqrt-n"].data["policies"], "n (jobs: 1 long + M/2 released)",
                     "Adaptive adversary (Jaillet et al.): latency ratio against n", p, 0.5)  # fmt: skip
        pics.append((p.name, "Ω(√n) construction: latency ratio against n with fitted exponents"))
        written.append(str(p))
    if "online-linear-n" in growth:
        from ..plotting import plot_linear_n

        p = Path(f"{stem}-linearn.png")
        plot_linear_n(growth["online-linear-n"].data, p)
        pics.append((p.name, "Θ(n) construction: latency ratio against n, slope 1 and (n−1)/12"))
        written.append(str(p))
    for c in result.claims:
        p = Path(f"{stem}-sweeps-{c.id}.png")
        if plot_sweeps(c, p):
            pics.append((p.name, f"{c.id}: growth sweeps, certified ratio against the doubling "
                                 f"factor (log–log), one line per direction"))  # fmt: skip
            written.append(str(p))
    lines = [
        "# kvopt validate report",
        "",
        f"Seed {result.seed}, {_effort_words(result)}, {result.seconds:.1f} s, "
        f"campaigns in `{result.out}`.",
        "",
        format_table(result.claims),
        "",
        "## Verdicts",
        "",
    ]
    for c in result.claims:
        rec = f" Record: `{c.record}`." if c.record else ""
        lines.append(f"* **`{c.id}`** ({c.source}) — **{c.verdict}** [scope: {scope_text(c)}]: "
                     f"{c.text}.{rec}")  # fmt: skip
    for cid, c in growth.items():
        if not _has_points(c):  # discovery claims: their sweeps are listed below
            continue
        lines += ["", f"## Growth data: `{cid}`", ""]
        if cid == "online-linear-n":
            from .linear_n import linear_n_table

            lines += [linear_n_table(c.data), ""]
        for pol, d in c.data["policies"].items():
            pts = ", ".join(f"({x:g}, {y:.3f})" for x, y, _ in d["points"])
            e = d.get("exponent_certified")
            lines.append(f"* {pol}: exponent {'-' if e is None else f'{e:.3f}'}; points {pts}")
    for c in result.claims:
        sc = c.data.get("scaling")
        if sc:
            lines += ["", f"## Scaling: `{c.id}`", ""]
            for key, ek in (("points_n", "exponent_n"), ("points_memory", "exponent_memory")):
                pts = ", ".join(f"({x:g}, {y:.3f})" for x, y in sc[key])
                e = sc.get(ek)
                lines.append(
                    f"* {key[7:]}: exponent {'-' if e is None else f'{e:.3f}'}; worst ratio by value: {pts}"
                )
    for c in result.claims:
        sweeps = sweep_lines(c)
        if sweeps:
            lines += ["", f"## Growth sweeps: `{c.id}`", "", *sweeps]
    if pics:
        lines += ["", "## Pictures", ""]
        for name, caption in pics:
            lines += [f"![{caption}]({name})", "", f"*{caption}.*", ""]
    write_bytes_atomic(path, ("\n".join(lines) + "\n").encode())
    written.insert(0, str(path))
    return written
