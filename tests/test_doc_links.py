"""Every relative link in the tracked Markdown resolves in the repository as tracked (issue 68).

The documentation is a Sphinx site whose source is ``docs/``; the README says so rather than
calling the files readable on GitHub.  A Markdown link ``[text](path)`` must still lead to a
tracked file or folder, wherever the file is read (GitHub, an editor, the site): pages that exist
only in the built site (the generated reference pages, the rendered notebooks) are reached with
the ``{doc}`` role instead, which the site resolves and which is not a link elsewhere.  A link's
text is not empty (MyST fills an empty one with the title, GitHub shows nothing).
"""

from __future__ import annotations

import posixpath
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"(!?)\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE = re.compile(r"`[^`\n]+`")


def _tracked() -> list[str]:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                             text=True, check=True).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [f for f in out.split("\0") if f]


def links(text: str):
    """``(is_image, text, target)`` of every Markdown link outside code blocks and spans."""
    text = FENCE.sub("", text)
    text = CODE.sub(lambda m: "c" * len(m.group(0)), text)  # a code span in a link's text counts
    for m in LINK.finditer(text):
        yield bool(m.group(1)), m.group(2), m.group(3)


def dead_links(files: list[str], read) -> list[str]:
    """``file: target`` for every relative link of the Markdown ``files`` that does not resolve
    to a tracked file or folder, and every link with an empty text."""
    tracked = set(files)
    folders = {posixpath.dirname(f) for f in files}
    for f in list(folders):
        while f:
            f = posixpath.dirname(f)
            folders.add(f)
    bad = []
    for f in files:
        if not f.endswith(".md"):
            continue
        for image, text, target in links(read(f)):
            if not image and not text.strip():
                bad.append(f"{f}: [{text}]({target}) has no text")
            if re.match(r"^[a-zA-Z][a-zA-Z+.-]*:", target) or target.startswith("#"):
                continue  # a URL or an anchor of the same page
            path = target.split("#")[0].split("?")[0]
            full = posixpath.normpath(posixpath.join(posixpath.dirname(f), path))
            if full not in tracked and full not in folders:
                bad.append(f"{f}: {target} does not resolve to a tracked file")
    return bad


def test_no_dead_relative_link_in_tracked_markdown():
    files = _tracked()
    bad = dead_links(files, lambda f: (ROOT / f).read_text(encoding="utf-8"))
    assert not bad, "\n".join(bad)


def test_the_check_fails_on_a_dead_link():
    pages = {"docs/a.md": "see [b](b.md), [gone](gone.md), [](b.md) and `[x](no.md)`",
             "docs/b.md": "# B\n```\n[y](nope.md)\n```\n![pic](../img.png) [up](../docs/)"}  # fmt: skip
    bad = dead_links([*pages, "img.png"], pages.__getitem__)
    assert bad == ["docs/a.md: gone.md does not resolve to a tracked file",
                   "docs/a.md: [](b.md) has no text"]  # fmt: skip


def test_readme_does_not_call_the_docs_readable_on_github():
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "readable on GitHub" not in text
    assert "The documentation is a Sphinx site; `docs/` is its source" in text
    assert "exist only in the built site" in text


def test_the_readme_reach_table_is_the_benchmark_output():
    """Issue 68: the README's "how far solve proves Opt" is the table ``benchmarks/reach.py``
    prints for its saved run (``--rows benchmarks/reach-3x60.json``), with its command."""
    import json
    import runpy
    from types import SimpleNamespace

    reach = runpy.run_path(str(ROOT / "benchmarks" / "reach.py"))
    saved = json.loads((ROOT / "benchmarks" / "reach-3x60.json").read_text(encoding="utf-8"))
    s = saved["settings"]
    table = reach["table"](saved["rows"], SimpleNamespace(**s)).split("\n")[2:]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "\n".join(table) in readme
    words = " ".join(readme.split())
    assert f"python benchmarks/reach.py --draws {s['draws']} --seconds {s['seconds']:g}" in words
    assert len(saved["rows"]) == len(s["ns"]) * len(s["tight"]) * len(s["sources"]) * s["draws"]
    assert "about a dozen requests in seconds" not in words
