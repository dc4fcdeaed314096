"""What a solve's route did, for ``SolveResult.route`` and ``kvopt solve --explain``: the row
chosen (:class:`~kvopt.exact.portfolio.routes.Route`), why, the case it was chosen for, the
provenance of its numbers, and each phase's backend, share, threads and seconds used."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from ..common import SolveStatus


@dataclass(frozen=True)
class PhaseRun:
    """What one phase of a plan did: its backend, share of the limit (``None``: the rest),
    threads, when it started and how long it ran (seconds from the plan's start), and the
    status it reported (``None``: it did not run)."""

    backend: str
    share: float | None
    threads: int
    started: float | None = None
    seconds: float | None = None
    status: SolveStatus | None = None
    native_status: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "share": self.share,
            "threads": self.threads,
            "started": None if self.started is None else round(self.started, 3),
            "seconds": None if self.seconds is None else round(self.seconds, 3),
            "status": None if self.status is None else self.status.value,
            "native_status": self.native_status,
        }


@dataclass(frozen=True)
class RouteReport:
    """The route a solve took: the row's ``name``, its ``why``, its kind (``phases`` or
    ``race``), its conditions (``when``, in words), the ``case`` it was chosen for (what
    :func:`~kvopt.exact.portfolio.routes.route_for` read), the ``source`` of its numbers,
    whether LP windows were computed first, the heuristic's seconds, and the phases run."""

    name: str
    why: str
    kind: str
    when: str
    case: dict[str, Any]
    source: dict[str, Any] | None
    lp_windows: bool
    heuristic_seconds: float
    phases: tuple[PhaseRun, ...]
    lp_values: bool = True  # with lp_windows: the other jobs' LP values before the fixing

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "why": self.why,
            "kind": self.kind,
            "when": self.when,
            "case": dict(self.case),
            "source": self.source,
            "lp_windows": self.lp_windows,
            "lp_values": self.lp_values,
            "heuristic_seconds": round(self.heuristic_seconds, 3),
            "phases": [p.to_dict() for p in self.phases],
        }

    def lines(self) -> list[str]:
        """The report as text (``kvopt solve --explain``)."""
        c = self.case
        out = [
            f"route     {self.name} ({self.kind}): {self.why}",
            f"chosen    first row that holds: {self.when}",
            f"case      solver={c['solver']} n={c['n']} objective={c['objective']} "
            f"threads={c['threads']} time_limit={c['time_limit']:g}s "
            f"numba={'yes' if c['compiled'] else 'no'} typed={'yes' if c['typed'] else 'no'} "
            f"sum_responses={c['rounds']} model_nonzeros={c.get('cells', 0):.3g}"
            + (" batch_cap=yes" if c.get("capped") else ""),
        ]
        if self.source:
            s = self.source
            limit = "" if s["seconds"] is None else f", {s['seconds']:g} s"
            out.append(f"source    {s['section']}: {s['instances']}{limit}: {s['finding']}")
        out.append(
            f"before    heuristic {self.heuristic_seconds:.3f} s; "
            + (
                "no LP windows"
                if not self.lp_windows
                else "LP windows and reduced-cost fixing"
                if self.lp_values
                else "reduced-cost fixing (no LP values of the other jobs)"
            )
        )
        for k, p in enumerate(self.phases, 1):
            if self.kind == "race":
                share = "the whole limit, " + ("leads" if k == 1 else "joins late or at once")
            else:
                share = "the rest of the limit" if p.share is None else f"{p.share:g} of the limit"
            if p.status is None:
                ran = "not run"
            else:
                ran = f"started {p.started:.2f} s, ran {p.seconds:.2f} s, {p.status.value}"
                ran += f" ({p.native_status})" if p.native_status else ""
            out.append(f"phase {k}   {p.backend}: {share}, {p.threads} thread(s); {ran}")
        return out


def source_dict(source) -> dict[str, Any] | None:
    """A :class:`~kvopt.exact.portfolio.routes.Source` as JSON (``None`` stays)."""
    if source is None:
        return None
    d = asdict(source)
    if d["seconds"] is not None and not math.isfinite(d["seconds"]):
        d["seconds"] = None
    return d
