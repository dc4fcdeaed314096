"""The one plain-text table renderer (``kvopt compare``, ``kvopt demo``, ``Table`` reprs).

Plain aligned columns, no box characters, so that the printed text stays
what tests, the README and users' scripts expect (a rich table would draw
borders).  A column's width is fixed (``width``; a longer cell overflows, as
with a format spec) or the widest of its header and cells (cells cut at
``max_width``).  A row with fewer cells than columns ends in a cell that
spans the rest of the line, unpadded ("not applicable: …").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Column:
    """A column: its ``header``, ``align`` (``"<"`` left, ``">"`` right), a fixed ``width``
    (else from the content) and ``max_width`` (cells are cut to it)."""

    header: str
    align: str = "<"
    width: int | None = None
    max_width: int | None = None


def render_table(
    columns: Sequence[Column],
    rows: Iterable[Sequence[str]],
    *,
    indent: str = "",
    sep: str = "  ",
    rule: str | None = None,
) -> list[str]:
    """The lines of the table: header, an optional rule, one line per row.

    ``rule`` is ``None`` (none), ``"columns"`` (dashes under each column,
    separated like the cells) or ``"line"`` (one line of dashes as long as the
    header).
    """
    rows = [[c if col.max_width is None else c[: col.max_width] for c, col in zip(r, columns)]
            for r in rows]  # fmt: skip
    widths = [
        col.width
        if col.width is not None
        else max([len(col.header), *(len(r[k]) for r in rows if k < len(r))])
        for k, col in enumerate(columns)
    ]

    def line(cells: Sequence[str]) -> str:
        out = []
        for k, c in enumerate(cells):
            if len(cells) < len(columns) and k == len(cells) - 1 and k > 0:
                out.append(c)  # spans the rest of the line
            else:
                out.append(c.rjust(widths[k]) if columns[k].align == ">" else c.ljust(widths[k]))
        return indent + sep.join(out)

    head = line([col.header for col in columns])
    lines = [head]
    if rule == "columns":
        lines.append(line(["-" * w for w in widths]))
    elif rule == "line":
        lines.append(indent + "-" * (len(head) - len(indent)))
    lines.extend(line(r) for r in rows)
    return lines


class Table(tuple):
    """Rows (dicts) with a text ``repr``, ``to_dict()`` and ``to_dataframe()``."""

    def __new__(cls, rows: Iterable[Mapping[str, Any]], columns: Sequence[str], title: str = ""):
        obj = super().__new__(cls, tuple(dict(r) for r in rows))
        obj.columns = tuple(columns)
        obj.title = title
        return obj

    def to_dict(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self]

    def to_dataframe(self):
        """A pandas DataFrame of the rows (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is optional
            raise ImportError("to_dataframe() needs pandas: pip install pandas") from None
        return pd.DataFrame(self.to_dict())

    def __repr__(self) -> str:
        def cell(v):
            if isinstance(v, list | tuple):
                return ", ".join(map(str, v))
            return "" if v is None else str(v)

        cols = [Column(c, max_width=60) for c in self.columns]
        rows = [[cell(r.get(c.header)) for c in cols] for r in self]
        lines = [self.title] if self.title else []
        return "\n".join([*lines, *render_table(cols, rows)])


__all__ = ["Column", "Table", "render_table"]
