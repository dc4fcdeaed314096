"""Draw ``docs/architecture.png``: kvopt's modules by layer and the direction of their imports.

``python docs/architecture.py`` reads every import statement of the package
(the same parse as ``tests/test_architecture.py``), groups modules by their
first name below ``kvopt`` (a package with a door, :data:`kvopt.layers.DOORS`,
by its modules: ``engine.contract``, ``engine.core``, …) and draws one box per group in its layer
(:data:`kvopt.layers.LAYERS`, bottom = lowest) and one arrow per pair of
groups where one imports the other.  Every arrow points down or sideways.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kvopt.layers import DOORS, LAYERS, layer_of  # noqa: E402

PKG = ROOT / "kvopt"
SPLIT = {door.split(".")[0] for door in DOORS.values()}


def group(module: str) -> str:
    parts = module.split(".")[1:]
    if not parts:
        return "__init__"
    return ".".join(parts[:2]) if parts[0] in SPLIT else parts[0]


def edges() -> set[tuple[str, str]]:
    out = set()
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        is_pkg = path.name == "__init__.py"
        base = name.split(".") if is_pkg else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.level:
                parent = base[: len(base) - (node.level - 1)]
                mod = ".".join(parent + ([node.module] if node.module else []))
                if node.module:
                    targets.append(mod)
                else:
                    for a in node.names:
                        sub = ROOT.joinpath(*mod.split("."), a.name)
                        targets.append(
                            f"{mod}.{a.name}"
                            if (sub.with_suffix(".py").exists() or sub.is_dir())
                            else mod
                        )
            elif isinstance(node, ast.Import | ast.ImportFrom):
                mods = (
                    [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
                )
                targets += [m for m in mods if m and m.startswith("kvopt.")]
            for t in targets:
                a, b = group(name), group(t)
                if a != b and not b.startswith("_"):
                    out.add((a, b))
    return out


def main() -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    es = edges()
    groups = sorted({g for e in es for g in e} | {"layers"})
    by_layer: dict[int, list[str]] = {}
    for g in groups:
        if g.startswith("_"):
            continue
        by_layer.setdefault(layer_of(f"kvopt.{g}"), []).append(g)
    pos = {}
    fig, ax = plt.subplots(figsize=(19, 7.5))
    for k, names in sorted(by_layer.items()):
        names.sort()
        for i, g in enumerate(names):
            x = 0.04 + 0.92 * (i + 0.5) / len(names)
            pos[g] = (x, k)
            ax.text(x, k, g, ha="center", va="center", fontsize=9,
                    bbox={"boxstyle": "round,pad=0.35", "fc": f"C{k}", "alpha": 0.25, "ec": f"C{k}"})  # fmt: skip
        ax.text(
            -0.01,
            k,
            f"layer {k}\n{LAYERS[k][0]}",
            ha="right",
            va="center",
            fontsize=9,
            weight="bold",
        )
    for a, b in sorted(es):
        if a in pos and b in pos:
            (x0, y0), (x1, y1) = pos[a], pos[b]
            ax.annotate("", xy=(x1, y1 + 0.12), xytext=(x0, y0 - 0.12),
                        arrowprops={"arrowstyle": "->", "color": "0.6", "lw": 0.5, "alpha": 0.7,
                                    "connectionstyle": "arc3,rad=0.05"})  # fmt: skip
    ax.set_xlim(-0.17, 1.0)
    ax.set_ylim(-0.6, max(by_layer) + 0.6)
    ax.axis("off")
    ax.set_title(
        "kvopt: modules by layer; an arrow A → B means A imports B (always down or sideways)"
    )
    out = ROOT / "docs" / "architecture.png"
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out} ({len(es)} import edges between {len(pos)} module groups)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
