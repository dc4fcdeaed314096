"""Every command shown in the README, the getting-started page and the how-to guides runs
(issue 45): a runner over their fenced ``console``, ``bash`` and ``python`` blocks.

A ``bash`` block is a script; a ``console`` block's lines that start with ``$ `` are commands (a line ending in ``\\`` or a
heredoc continues on the next lines); the other lines are sample output, not compared. The
commands of one page run in order, in one temporary folder that holds links to the repository's
``instances/`` (the pages' paths are relative to the repository root), with ``kvopt`` meaning
this tree's ``python -m kvopt``. An HTML comment right before a block marks it:
``<!-- docs-test: slow -->`` (run with ``-m slow``) or ``<!-- docs-test: skip (reason) -->`` (not
run: installs; the reason is required). Python blocks of the how-to guides run too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO

PAGES = [
    REPO / "README.md",
    REPO / "docs" / "getting-started.md",
    *sorted(p for p in (REPO / "docs" / "howto").glob("*.md") if p.name != "index.md"),
]
#: pages whose commands run in the default test run; the others' (a few seconds per command,
#: about two minutes in all) run with ``-m slow``, as CI does
DEFAULT_PAGES = {"README.md", "getting-started.md", "bracket.md", "grow.md", "dask.md"}
_FENCE = re.compile(
    r"(?:<!-- docs-test: (?P<mark>slow|skip[^>]*?) -->\s*\n)?^```(?P<lang>console|bash|python)[ \t]*\n"
    r"(?P<body>.*?)^```[ \t]*$",
    re.M | re.S,
)


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    mark: str | None
    body: str

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [
        Block(page, text[: m.start("body")].count("\n"), m["lang"], m["mark"], m["body"])
        for m in _FENCE.finditer(text)
    ]


def commands(block: Block) -> str:
    """The shell script of a console block: its ``$`` lines and their continuations."""
    out, cont = [], False
    heredoc = None
    if block.lang == "bash":  # every line is a command
        return block.body
    for line in block.body.splitlines():
        if heredoc is not None:
            out.append(line)
            if line.strip() == heredoc:
                heredoc = None
            continue
        if line.startswith("$ ") or cont:
            cmd = line[2:] if line.startswith("$ ") and not cont else line
            out.append(cmd)
            cont = cmd.endswith("\\")
            m = re.search(r"<<'?(\w+)'?", cmd)
            if m:
                heredoc = m.group(1)
    return "\n".join(out)


def _cases():
    """Per page: its fast blocks in order; and, marked slow, all its blocks in order (a slow
    block may use the files the fast ones before it made)."""
    out = []
    for page in PAGES:
        bs = blocks(page)
        rel = str(page.relative_to(REPO))
        fast = [] if page.name in DEFAULT_PAGES else [pytest.mark.slow]
        out.append(pytest.param(page, False, id=rel, marks=fast))
        if any(b.mark == "slow" for b in bs):
            out.append(pytest.param(page, True, id=f"{rel}-with-slow", marks=pytest.mark.slow))
    return out


def test_every_page_has_commands():
    for page in PAGES:
        assert any(b.lang in ("console", "bash") for b in blocks(page)), page


def test_skips_say_why():
    for page in PAGES:
        for b in blocks(page):
            if b.mark and b.mark.startswith("skip"):
                assert re.match(r"skip \(.{10,}\)", b.mark), b.id


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    env.pop("KVOPT_DEBUG", None)
    return env


def _run(block: Block, cwd: Path) -> None:
    if block.lang == "python":
        cmd = [sys.executable, "-c", block.body]
    else:
        shell = (
            f'kvopt() {{ "{sys.executable}" -m kvopt "$@"; }}\n'
            f'python() {{ "{sys.executable}" "$@"; }}\n'
            "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n"  # background jobs end with it
            "set -euo pipefail\n" + commands(block)
        )
        cmd = ["bash", "-c", shell]
    proc = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=900,
                          stdin=subprocess.DEVNULL)  # fmt: skip
    assert proc.returncode == 0, (
        f"{block.id} exited {proc.returncode}\n--- stdout\n{proc.stdout[-2000:]}\n"
        f"--- stderr\n{proc.stderr[-3000:]}"
    )


@pytest.mark.parametrize(("page", "with_slow"), _cases())
def test_page_commands_run(page: Path, with_slow: bool, tmp_path):
    (tmp_path / "instances").symlink_to(REPO / "instances")
    ran = 0
    for block in blocks(page):
        if block.mark and block.mark.startswith("skip"):
            continue
        if block.mark == "slow" and not with_slow:
            continue
        _run(block, tmp_path)
        ran += 1
    assert ran or page.name == "README.md"
