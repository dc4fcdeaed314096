"""Imports point one way (kvopt.layers), policies see only the engine's contract, solver
packages stay inside kvopt.exact; the import-linter contracts in pyproject.toml say the same."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from kvopt.layers import DOORS, LAYERS, NUMBA_MODULES, SOLVER_PACKAGES, SPLIT_PACKAGES, layer_of

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "kvopt"


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
            assert name.startswith("kvopt.exact") or (
                target.split(".")[0] == "numba" and name in NUMBA_MODULES
            ), f"{path.name}:{line}: {target} imported outside kvopt.exact"
        assert not _door_refuses(name, target), (
            f"{path.name}:{line}: {name} imports {target}; it may import "
            f"kvopt.{DOORS[name.split('.')[1]].split('.')[0]} only through "
            f"kvopt.{DOORS[name.split('.')[1]]} (kvopt.layers.DOORS)"
        )


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _door_refuses(importer: str, target: str) -> bool:
    """Whether kvopt.layers.DOORS forbids ``importer`` to import ``target``."""
    parts = importer.split(".")
    door = DOORS.get(parts[1]) if len(parts) > 1 else None
    if door is None:
        return False
    return _within(target, f"kvopt.{door.split('.')[0]}") and not _within(target, f"kvopt.{door}")


def test_doors_refuse_the_engine_core():
    assert _door_refuses("kvopt.policy.route", "kvopt.engine")
    assert _door_refuses("kvopt.policy.route", "kvopt.engine.core")
    assert not _door_refuses("kvopt.policy.route", "kvopt.engine.contract")
    assert not _door_refuses("kvopt.simulation", "kvopt.engine.core")


# --------------------------------------------------------------------------- import-linter


def _contracts() -> dict[str, dict]:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert cfg["root_package"] == "kvopt"
    return {c["id"]: c for c in cfg["contracts"]}


def _top_modules() -> list[str]:
    """Every top-level module or package of kvopt, in LAYERS order (not the package itself)."""
    return [p for _, (_, prefixes) in sorted(LAYERS.items()) for p in prefixes if p != "__init__"]


def test_every_top_module_has_a_layer():
    found = {p.stem for p in PKG.glob("*.py")} | {p.parent.name for p in PKG.glob("*/__init__.py")}
    assert found - {"__init__"} == {p.split(".")[0] for p in _top_modules()}


def test_split_packages_import_nothing_of_kvopt():
    """A package placed module by module (kvopt.layers.SPLIT_PACKAGES) has an empty __init__."""
    for package in SPLIT_PACKAGES:
        init = PKG / package / "__init__.py"
        assert not [t for t, _ in _imports(f"kvopt.{package}", init) if t.startswith("kvopt")]


def test_import_linter_layers_mirror_layers_table():
    c = _contracts()["layers"]
    assert c["type"] == "layers" and c["containers"] == ["kvopt"]
    expected = [
        " : ".join(p for p in prefixes if p != "__init__")
        for _, (_, prefixes) in sorted(LAYERS.items(), reverse=True)
    ]
    assert c["layers"] == expected


def test_import_linter_doors_mirror_doors_table():
    c = _contracts()["doors"]
    assert c["type"] == "forbidden"
    assert c["source_modules"] == [f"kvopt.{k}" for k in DOORS]
    (door,) = set(DOORS.values())
    package = door.split(".")[0]
    siblings = {p.stem for p in (PKG / package).glob("*.py")} - {"__init__", door.split(".")[1]}
    assert set(c["forbidden_modules"]) == {f"kvopt.{package}.{m}" for m in siblings}


def test_import_linter_solvers_mirror_solver_packages():
    c = _contracts()["solvers"]
    assert c["type"] == "forbidden" and c["allow_indirect_imports"] is True
    assert c["forbidden_modules"] == list(SOLVER_PACKAGES)
    assert c["source_modules"] == [f"kvopt.{p}" for p in _top_modules() if p != "exact"]
    assert c["ignore_imports"] == [f"{m} -> numba" for m in NUMBA_MODULES]
