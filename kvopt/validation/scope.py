"""The scope of a verdict: what was searched to reach it (issue 55).

``holds`` means "no counterexample in the searched space" (SPEC §7), so a
verdict is read with its scope: the instance space its campaigns searched (the
union of their spaces: ``n``, ``M`` and response ranges, arrivals or not, the
per-job or typed space, or a family), the evaluations, the seconds, the seed,
the records given with ``--from`` that were in the claim's class, the claim's class
in words (``class``: what the claim quantifies over, which the searched space
only samples), the distinct instances among the evaluations
(``distinct_instances``: campaigns that share a seed share their first batch, so
the evaluations count some instances twice) and the effort by its numbers
(``effort``: :func:`kvopt.validation.effort.effort_dict`, "default" only when it
is the default effort).  A claim
judged by a construction (the growth claims) searched no space: its scope says
so (``space = "construction"``).  The table, the report and ``--json`` (a
``scope`` object per claim) all show it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..campaign.log import HEADER_NAME


@dataclass(frozen=True)
class Scope:
    """What a verdict rests on (``kvopt validate --json``: ``scope`` per claim).

    ``space`` is ``jobs`` (the per-job space), ``typed`` (SPEC §9), ``family``,
    ``mixed`` (campaigns of several kinds), ``construction`` (no search: the
    claim's own construction) or ``records`` (no search: a record given with
    ``--from`` decided it); ``n``, ``memory`` are ``[min, max]`` over the
    campaigns' spaces, ``max_response`` the largest response searched (``0``: up
    to ``M``), ``arrivals`` whether jobs could arrive after round 0 (``None``
    where no space was searched); ``families`` the generator families of family
    campaigns; ``evaluations`` and ``seconds`` the effort; ``campaigns`` their
    folders; ``records`` (with ``--from``) ``given``, ``in_class`` and the
    ``worst_certified`` ratio among those in the class; ``klass`` (``class`` in
    JSON) the claim's class in words; ``distinct_instances`` the distinct instances
    (keys) among the campaigns' logged evaluations (``evaluations.jsonl``), at most
    ``evaluations``; ``effort`` the effort's numbers.
    """

    space: str
    evaluations: int
    seconds: float
    seed: int
    n: tuple[int, int] | None = None
    memory: tuple[int, int] | None = None
    max_response: int | None = None
    arrivals: bool | None = None
    families: tuple[str, ...] = ()
    campaigns: tuple[str, ...] = ()
    records: Mapping[str, Any] | None = field(default=None)
    klass: str | None = None
    distinct_instances: int | None = None
    effort: Mapping[str, Any] | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "class": self.klass,
            "space": self.space,
            "n": list(self.n) if self.n else None,
            "memory": list(self.memory) if self.memory else None,
            "max_response": self.max_response,
            "arrivals": self.arrivals,
            "families": list(self.families),
            "evaluations": self.evaluations,
            "distinct_instances": self.distinct_instances,
            "effort": dict(self.effort) if self.effort is not None else None,
            "seconds": round(self.seconds, 2),
            "seed": self.seed,
            "campaigns": list(self.campaigns),
            "records": dict(self.records) if self.records is not None else None,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Scope:
        return cls(
            space=d["space"], evaluations=d["evaluations"], seconds=d["seconds"], seed=d["seed"],
            n=tuple(d["n"]) if d.get("n") else None,  # type: ignore[arg-type]
            memory=tuple(d["memory"]) if d.get("memory") else None,  # type: ignore[arg-type]
            max_response=d.get("max_response"), arrivals=d.get("arrivals"),
            families=tuple(d.get("families") or ()), campaigns=tuple(d.get("campaigns") or ()),
            records=d.get("records"), klass=d.get("class"),
            distinct_instances=d.get("distinct_instances"), effort=d.get("effort"),
        )  # fmt: skip

    def text(self) -> str:
        """One line: ``class: alpha < 1, all jobs at time 0; searched n 1-8, M 8-48,
        responses <= 16, no arrivals (per-job space); 240 evaluations (231 distinct
        instances), 31 s, seed 1, budget 240``."""
        parts = []
        if self.space == "construction":
            parts.append("the claim's construction (no search space)")
        elif self.space == "records":
            parts.append("a given record (no search)")
        else:
            if self.n:
                parts.append(f"n {_span(self.n)}")
            if self.memory:
                parts.append(f"M {_span(self.memory)}")
            if self.max_response is not None:
                parts.append(
                    "responses up to M" if self.max_response == 0
                    else f"responses <= {self.max_response}"
                )  # fmt: skip
            if self.arrivals is not None:
                parts.append("arrivals" if self.arrivals else "no arrivals")
            if self.families:
                parts.append("family " + ", ".join(self.families))
            kind = {"jobs": "per-job space", "typed": "typed space"}.get(self.space, self.space)
            parts[-1:] = [f"{parts[-1]} ({kind})"] if parts else [kind]
        head = ", ".join(parts)
        secs = f"{self.seconds:.1f}" if self.seconds < 9.95 else f"{self.seconds:.0f}"  # not "0 s"
        distinct = ""
        if self.distinct_instances is not None and self.distinct_instances != self.evaluations:
            distinct = f" ({self.distinct_instances} distinct instances)"
        effort = f"{self.evaluations} evaluations{distinct}, {secs} s, seed {self.seed}"
        if self.effort:
            from .effort import effort_text

            effort += f", {effort_text(self.effort)}"
        if self.records:
            r = self.records
            worst = r.get("worst_certified")
            effort += (f"; --from: {r['in_class']} of {r['given']} records in the class"
                       + (f" (worst certified {worst:.4g})" if worst is not None else ""))  # fmt: skip
        klass = f"class: {self.klass}; searched " if self.klass else ""
        return f"{klass}{head}; {effort}"


def _span(pair: tuple[int, int]) -> str:
    lo, hi = pair
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def scope_of(
    folders: Iterable[Path],
    *,
    evaluations: int,
    seconds: float,
    seed: int,
    records: Mapping[str, Any] | None = None,
    searched: str = "construction",
    klass: str | None = None,
    effort: Mapping[str, Any] | None = None,
) -> Scope:
    """The scope of a verdict from the campaign folders it ran (their ``campaign.json``);
    ``searched`` names what stood instead when none ran (``construction``, ``records``)."""
    headers = []
    names = []
    for folder in folders:
        path = Path(folder) / HEADER_NAME
        if path.is_file():
            headers.append(json.loads(path.read_text(encoding="utf-8")))
            names.append(str(folder))
    extra = dict(klass=klass, effort=effort, records=records,
                 distinct_instances=_distinct(names) if names else None)  # fmt: skip
    if not headers:
        return Scope(searched, evaluations, seconds, seed, **extra)
    kinds, n, mem, resp, arr, fams = set(), [], [], [], [], []
    for h in headers:
        sp = h.get("space")
        if sp is None:  # a family campaign: the family's own instances
            kinds.add("family")
            params = ", ".join(
                f"{k}={v}" for k, v in sorted((h.get("family_params") or {}).items())
            )
            fams.append(f"{h.get('family')}" + (f" [{params}]" if params else ""))
            continue
        kinds.add(sp.get("kind", "jobs"))
        n.append((sp["n_min"], sp["n_max"]))
        mem.append((sp["memory_min"], sp["memory_max"]))
        resp.append(int(sp.get("max_response", 0)))
        arr.append(bool(sp.get("arrivals")))
    return Scope(
        space=kinds.pop() if len(kinds) == 1 else "mixed",
        evaluations=evaluations,
        seconds=seconds,
        seed=seed,
        n=(min(a for a, _ in n), max(b for _, b in n)) if n else None,
        memory=(min(a for a, _ in mem), max(b for _, b in mem)) if mem else None,
        max_response=(0 if 0 in resp else max(resp)) if resp else None,
        arrivals=any(arr) if arr else None,
        families=tuple(dict.fromkeys(fams)),
        campaigns=tuple(names),
        **extra,
    )


def _distinct(folders: Iterable[str]) -> int:
    """The distinct instances (keys) over the campaigns' ``evaluations.jsonl``."""
    from ..campaign.log import LOG_NAME, read_log

    keys: set[str] = set()
    for folder in folders:
        path = Path(folder) / LOG_NAME
        if path.is_file():
            keys.update(ev.key for ev in read_log(path).values())
    return len(keys)


__all__ = ["Scope", "scope_of"]
