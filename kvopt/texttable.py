"""The one plain-text table renderer (``kvopt compare``, ``kvopt demo``, ``Table`` reprs).

Plain aligned columns, no box characters, so that the printed text stays
what tests, the README and users' scripts expect (a rich table would draw
borders).  A column's width is fixed (``width``; a longer cell overflows, as
with a format spec) or the widest of its header and cells (cells cut at
``max_width``).  A row with fewer cells than columns ends in a cell that
spans the rest of the line, unpadded ("not applicable: …").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


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


__all__ = ["Column", "render_table"]
