"""Every command shown in the README, the getting-started page and the how-to guides runs
(issue 45): a runner over their fenced ``console``, ``bash`` and ``python`` blocks.

A ``bash`` block is a script; a ``console`` block's lines that start with ``$ `` are commands (a line ending in ``\\`` or a
heredoc continues on the next lines); the other lines are sample output, not compared. The
commands of one page run in order, in one temporary folder that holds links to the repository's
``instances/`` (the pages' paths are relative to the repository root), with ``kvopt`` meaning
this tree's ``python -m kvopt``. An HTML comment right before a block marks it:
``<!-- docs-test: slow -->`` (run with ``-m slow``) or ``<!-- docs-test: skip (reason) -->`` (not
run: installs; the reason is required). Python blocks of the how-to guides run too.

What the prose around the blocks promises is checked as well (issue 55): every file name a page
shows in inline code (``runs/fcfs/best.json``, ``DIR/progress.png``) exists after the page's
commands ran, in their folder or in the repository (``DIR``, ``OUT`` and ``<…>`` stand for any
folder or name); and every call of the API a page shows in inline code
(``kvopt.plot_schedule(instance, schedule, vs=None)``) binds to the function's real signature.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib
import inspect
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
    bs = blocks(page)
    for block in bs:
        if block.mark and block.mark.startswith("skip"):
            continue
        if block.mark == "slow" and not with_slow:
            continue
        _run(block, tmp_path)
        ran += 1
    assert ran or page.name == "README.md"
    if with_slow or not any(b.mark == "slow" for b in bs):  # every block that makes files ran
        missing = [name for name in promised_files(page) if not _exists(name, tmp_path)]
        assert not missing, (
            f"{page.relative_to(REPO)} names files its commands did not make: {missing}"
        )


_FENCED = re.compile(r"^```.*?^```[ \t]*$", re.M | re.S)
_FILE = re.compile(r"[\w./<>*-]+\.(?:json|jsonl|png|md|csv|toml|txt)")


def _prose_code(page: Path) -> list[str]:
    """The inline code spans of a page's prose (fenced blocks left out)."""
    return re.findall(r"`([^`\n]+)`", _FENCED.sub("", page.read_text(encoding="utf-8")))


def promised_files(page: Path) -> list[str]:
    """The file names a page shows in inline code (``best.json``, ``runs/fcfs/progress.png``)."""
    return sorted({s for s in _prose_code(page) if _FILE.fullmatch(s)})


def _pattern(name: str) -> str:
    """A shell pattern for a promised name: ``DIR``, ``OUT`` and ``<…>`` match any name."""
    parts = ["*" if p in ("DIR", "OUT") else re.sub(r"<[^>]*>", "*", p) for p in name.split("/")]
    return "/".join(parts)


def _repository_files() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    return out.stdout.split()


def _exists(name: str, folder: Path) -> bool:
    """Whether the promised file is in ``folder`` (made by the commands) or the repository.

    A bare name (``best.json``) may be anywhere below; a path (``runs/fcfs/best.json``) is
    matched against the end of the files' paths."""
    pat = _pattern(name)
    made = [p.relative_to(folder).as_posix() for p in folder.rglob("*")
            if p.is_file() and "instances" not in p.relative_to(folder).parts[:1]]  # fmt: skip
    tracked = _repository_files()
    for path in (*made, *tracked):
        if fnmatch.fnmatch(path, pat) or fnmatch.fnmatch(path, "*/" + pat):
            return True
    return False


def _api_calls(page: Path) -> list[str]:
    """The calls of kvopt's API a page shows in inline code (``kvopt.grow(record, steps=4)``)."""
    return [s for s in _prose_code(page) if re.fullmatch(r"kvopt\.[\w.]+\(.*\)", s)]


def _resolve(dotted: str):
    obj = importlib.import_module("kvopt")
    parts = dotted.split(".")[1:]
    for k, part in enumerate(parts):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(".".join(["kvopt", *parts[: k + 1]]))
    return obj


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    assert isinstance(node, ast.Attribute), ast.dump(node)
    return f"{_dotted(node.value)}.{node.attr}"


SIGNATURE_PAGES = [REPO / "README.md",
                   *sorted(p for p in (REPO / "docs").rglob("*.md")
                           if "_build" not in p.parts and "generated" not in p.parts)]  # fmt: skip


def test_every_api_call_the_docs_show_binds_to_the_real_signature():
    """``kvopt.plot_schedule(record_or_schedule, instance=None, vs=None)`` on How-to › Plot raised
    TypeError (issue 55): the names and the number of arguments a page shows must be accepted."""
    checked = []
    for page in SIGNATURE_PAGES:
        for text in _api_calls(page):
            call = ast.parse(text, mode="eval").body
            assert isinstance(call, ast.Call), text
            fn = _resolve(_dotted(call.func))
            sig = inspect.signature(fn)
            args = [object()] * len(call.args)
            kwargs = {k.arg: object() for k in call.keywords if k.arg is not None}
            try:
                sig.bind(*args, **kwargs)
            except TypeError as err:
                pytest.fail(
                    f"{page.relative_to(REPO)}: `{text}` does not fit {fn.__name__}{sig}: {err}"
                )
            checked.append(text)
    assert len(checked) >= 4, checked


def test_the_promised_file_check_catches_a_wrong_name(tmp_path):
    (tmp_path / "runs" / "fcfs").mkdir(parents=True)
    (tmp_path / "runs" / "fcfs" / "evaluations.jsonl").write_text("")
    assert _exists("evaluations.jsonl", tmp_path) and _exists("DIR/evaluations.jsonl", tmp_path)
    assert not _exists("log.jsonl", tmp_path)  # what worst-case.md promised before issue 55
    assert _exists("models/bnb.md", tmp_path)  # a file of the repository
    page = tmp_path / "p.md"
    page.write_text("writes `runs/x/log.jsonl`\n```console\n$ ls `other.json`\n```\n")
    assert promised_files(page) == ["runs/x/log.jsonl"]
