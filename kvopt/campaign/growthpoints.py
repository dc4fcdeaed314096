"""The points of a growth sweep (:mod:`kvopt.campaign.growth`): each an instance with its
bracket, saved as a record in ``out/points/<key>.json`` as it is evaluated, so that an
interrupted sweep resumes from them (SPEC §9)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..certify import Bracket
from ..errors import InputError
from ..instance import Instance
from ..schedule import Schedule
from .evaluate import instance_key

#: Every evaluated point, saved as a record as it is evaluated (the sweep resumes from them).
POINTS_DIR = "points"


@dataclass
class Point:
    """A point's instance and its bracket (:mod:`kvopt.certify`; replaced when tightened)."""

    inst: Instance
    bracket: Bracket
    solved: bool = False
    certified: bool = False  # tightened by the certify stage

    @property
    def alg(self) -> int:
        return self.bracket.alg

    @property
    def schedule(self) -> Schedule:
        return self.bracket.schedule

    @property
    def ratio_lb(self) -> float:
        return self.bracket.ratio_optimistic

    @property
    def ratio_ub(self) -> float:
        return self.bracket.ratio_certified


@dataclass(frozen=True)
class Step:
    """A point of one direction: the step index, the axis factor, the (shared) point."""

    step: int
    factor: float
    point: Point


class Store:
    """The points of a sweep saved as records in ``out/points/<key>.json`` (module docstring):
    :meth:`load` returns a saved point of the same policy, parameters, seed, objective and
    source file, :meth:`save` (re)writes one atomically."""

    def __init__(self, out: Path, record, spec):
        self.folder = out / POINTS_DIR
        self.record = record
        self.sha = spec.code.sha256 if spec.code is not None else None
        self.resumed = 0

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def load(self, key: str, inst: Instance) -> Point | None:
        from ..record import load_record

        path = self._path(key)
        if not path.is_file():
            return None
        try:
            rec = load_record(path)
        except InputError:
            return None  # a file cut by a crash: evaluated again
        own = self.record
        source = dict(rec.policy_source or {})
        if (
            (rec.policy, dict(rec.params), rec.seed, rec.objective)
            != (own.policy, dict(own.params), own.seed, own.objective)
            or source.get("sha256") != self.sha
            or instance_key(rec.instance) != key
        ):
            return None  # another sweep's point (or the policy's file changed): evaluated again
        self.resumed += 1
        flags = rec.found_by
        return Point(inst, rec.bracket, solved=bool(flags.get("solved")),
                      certified=bool(flags.get("certified")))  # fmt: skip

    def save(self, key: str, p: Point) -> None:
        from ..record import record_from_bracket, save_record

        own = self.record
        rec = record_from_bracket(
            p.inst, own.policy, dict(own.params), own.seed, p.bracket,
            found_by={"strategy": "grow-point", "solved": p.solved, "certified": p.certified},
            source=own.policy_source,
        )  # fmt: skip
        save_record(rec, self._path(key))


__all__ = ["POINTS_DIR", "Point", "Step", "Store"]
