"""Imports point one way (kvopt.layers), solver packages stay inside kvopt.exact, and blind
policies never hold an Instance."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kvopt.layers import SOLVER_PACKAGES, layer_of

PKG = Path(__file__).resolve().parent.parent / "kvopt"


def _modules():
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG.parent).with_suffix("")
        name = ".".join(rel.parts)
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        yield name, path


def _imports(name: str, path: Path):
    tree = ast.parse(path.read_text())
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base[: len(base) - (node.level - 1)]
                mod = ".".join(parent + ([node.module] if node.module else []))
                if not node.module:
                    for a in node.names:
                        sub = PKG.parent.joinpath(*mod.split("."), a.name)
                        is_module = sub.with_suffix(".py").exists() or sub.is_dir()
                        yield (f"{mod}.{a.name}" if is_module else mod), node.lineno
                    continue
                yield mod, node.lineno
            else:
                yield node.module, node.lineno


MODULES = list(_modules())


@pytest.mark.parametrize("name,path", MODULES, ids=[m for m, _ in MODULES])
def test_imports_point_down(name, path):
    mine = layer_of(name)
    for target, line in _imports(name, path):
        if target.split(".")[0] == "kvopt" and target != "kvopt":
            assert layer_of(target) <= mine, (
                f"{path.name}:{line}: {name} (layer {mine}) imports {target} (layer {layer_of(target)})"
            )
        if target.split(".")[0] in SOLVER_PACKAGES:
            assert name.startswith("kvopt.exact"), (
                f"{path.name}:{line}: {target} imported outside kvopt.exact"
            )
