"""The documentation site (issue 45): the contract's sections, the generated reference.

The reference pages are generated from the code (``docs/_ext/kvopt_docs.py``) at every build;
these tests call the same generators, so a command, option, policy or claim that the
documentation would miss fails here, and every "SPEC §N" the code cites must be a heading of
``docs/spec.md``.
"""

from __future__ import annotations

import argparse
import re
import sys

import pytest
from conftest import REPO

DOCS = REPO / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import kvopt_docs  # noqa: E402

_CITATION = re.compile(r"SPEC ((?:§\d+(?:\.\d+)?(?:\s*,\s*)?)+)")


def _citations() -> dict[str, list[str]]:
    """Every section cited as "SPEC §N" (or "SPEC §N, §M") in kvopt/, with where."""
    found: dict[str, list[str]] = {}
    for path in sorted((REPO / "kvopt").rglob("*.py")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in _CITATION.finditer(line):
                for sec in re.findall(r"§(\d+(?:\.\d+)?)", m.group(1)):
                    found.setdefault(sec, []).append(f"{path.relative_to(REPO)}:{lineno}")
    return found


def _spec_headings() -> set[str]:
    text = (DOCS / "spec.md").read_text(encoding="utf-8")
    heads = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", text, flags=re.M))
    labels = set(re.findall(r"^\(spec-(\d+(?:\.\d+)?)\)=$", text, flags=re.M))
    assert heads == labels, "every numbered heading of docs/spec.md has its (spec-N)= label"
    return heads


def test_every_spec_citation_in_the_code_has_a_heading_in_the_docs():
    cites = _citations()
    assert len(cites) >= 10 and sum(map(len, cites.values())) > 200  # the pattern finds them
    heads = _spec_headings()
    missing = {sec: where[:3] for sec, where in cites.items() if sec not in heads}
    assert not missing, f"SPEC sections cited in kvopt/ with no heading in docs/spec.md: {missing}"


def test_spec_page_keeps_the_contracts_sections_in_order():
    heads = [
        h for h in re.findall(r"^#{2,3} (\d+(?:\.\d+)?)", (DOCS / "spec.md").read_text(), re.M)
    ]
    assert heads == [
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
        "6.1",
        "6.2",
        "6.3",
        "6.4",
        "7",
        "8",
        "9",
        "10",
        "10.1",
    ]


def test_docstring_citations_become_links():
    assert kvopt_docs.link_spec("see SPEC §6.1 and SPEC §4, §8.") == (
        "see SPEC :ref:`§6.1 <spec-6.1>` and SPEC :ref:`§4 <spec-4>`, :ref:`§8 <spec-8>`."
    )


def _all_actions(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        yield action


def test_cli_reference_has_every_command_and_option():
    text = kvopt_docs.cli_markdown()
    commands = kvopt_docs.commands()
    assert {"solve", "search", "validate", "grow", "certify", "shrink"} <= set(commands)
    for name, parser in commands.items():
        assert f"## kvopt {name}\n" in text
        section = text.split(f"## kvopt {name}\n", 1)[1].split("\n## kvopt ", 1)[0]
        for action in _all_actions(parser):
            names = action.option_strings or [action.metavar or action.dest]
            for opt in names:
                assert opt in section, f"kvopt {name}: {opt} missing from the CLI reference"
            if action.option_strings:
                assert "(no help text)" not in _row(section, action.option_strings[0]), (
                    f"kvopt {name} {action.option_strings[0]} has no help text"
                )


def _row(section: str, option: str) -> str:
    return next((line for line in section.splitlines() if line.startswith(f"| `{option}")), "")


def test_a_new_option_appears_in_the_reference(monkeypatch):
    import kvopt.cli as cli

    real = cli.build_parser

    def patched():
        parser = real()
        sub = kvopt_docs._subparsers(parser)
        sub.choices["bound"].add_argument("--brand-new", help="an option added to the parser")
        return parser

    monkeypatch.setattr(cli, "build_parser", patched)
    assert "--brand-new" in kvopt_docs.cli_markdown()


def test_every_help_ends_with_the_exit_status_table():
    for name, parser in kvopt_docs.commands().items():
        text = parser.format_help()
        assert "exit status:" in text and "  2    bad input" in text, name
        assert "  130  interrupted" in text, name


def test_a_subcommands_help_ends_with_the_exit_status_table_too():
    # `kvopt experiment run --help` ended at its options: README says every `kvopt COMMAND
    # --help` ends with its own table (issue 55 walkthrough)
    from kvopt.cli import build_parser

    top = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    nested = {
        f"{name} {child_name}": child
        for name, command in top.choices.items()
        for a in command._actions
        if isinstance(a, argparse._SubParsersAction)
        for child_name, child in a.choices.items()
    }
    assert "experiment run" in nested
    for name, parser in nested.items():
        text = parser.format_help()
        assert "exit status:" in text and "  2    bad input" in text, name
        assert "  130  interrupted" in text, name
    assert "every finished cell is kept" in nested["experiment run"].format_help()


def test_policy_reference_has_every_registered_policy():
    from kvopt.policy import POLICIES

    text = kvopt_docs.policies_markdown()
    for name, spec in POLICIES.items():
        assert f"(policy-{name})=\n## `{name}`" in text
        section = text.split(f"## `{name}`", 1)[1].split("\n## `", 1)[0]
        for field in ("**Source:**", "**Clairvoyance:**", "**Kills:**", "**Applies to:**"):
            assert field in section, (name, field)
        for param in spec.params:
            assert f"`{param.name}`" in section, (name, param.name)
        assert spec.source and "papers/" not in spec.source, name
        assert "**Papers:** {ref}" in section, f"{name}: its source cites no bibliography entry"


def test_claim_reference_has_every_registered_claim():
    from kvopt.claim import CLAIMS

    text = kvopt_docs.claims_markdown()
    for cid, claim in CLAIMS.items():
        assert f"(claim-{cid})=\n## `{cid}`" in text
        assert claim.source and "papers/" not in claim.source, cid
        section = text.split(f"## `{cid}`", 1)[1].split("\n## `", 1)[0]
        assert "**Papers:** {ref}" in section, f"{cid}: its source cites no bibliography entry"
    assert "α = max_i (s_i + o_i) / M" in text


def test_api_reference_has_every_public_name():
    import kvopt

    text = kvopt_docs.api_markdown()
    for name in kvopt.__all__:
        assert f"## `kvopt.{name}`" in text, name


def test_every_result_class_of_the_api_is_documented_with_its_fields():
    """Issue 55: SolveResult, SimulationResult, Comparison, records and verdicts were not in the
    API reference; their fields were only in examples."""
    import dataclasses

    from kvopt.campaign.growthtypes import GrowthPoint, GrowthResult
    from kvopt.comparison import Comparison, InstanceComparison, PolicyRow
    from kvopt.engine.results import SimulationResult, Stats
    from kvopt.exact import SolveResult
    from kvopt.record import Record
    from kvopt.validation.result import ClaimVerdict, ValidationResult, Verdict
    from kvopt.validation.scope import Scope

    found = kvopt_docs.result_classes()
    for cls in (SolveResult, SimulationResult, Stats, Comparison, InstanceComparison, PolicyRow,
                Record, ValidationResult, ClaimVerdict, Verdict, Scope, GrowthResult,
                GrowthPoint):  # fmt: skip
        assert cls in found, cls
    page = kvopt_docs.api_markdown()
    import kvopt

    for cls in found:
        exported = any(getattr(kvopt, n) is cls for n in kvopt.__all__)
        path = f"kvopt.{cls.__name__}" if exported else f"{cls.__module__}.{cls.__qualname__}"
        assert f".. autoclass:: {path}" in page, path
        doc = cls.__doc__ or ""
        assert doc.strip() and not doc.startswith(cls.__name__ + "("), f"{path} has no docstring"
        if dataclasses.is_dataclass(cls):
            assert ":undoc-members:" in page.split(f".. autoclass:: {path}")[1].split("```")[0]


def test_no_source_string_cites_a_file_outside_the_repository():
    hits = [
        str(p.relative_to(REPO))
        for p in (REPO / "kvopt").rglob("*.py")
        if "papers/related-abstracts" in p.read_text(encoding="utf-8")
    ]
    assert not hits


def test_readme_is_short_and_links_into_the_site():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "python -m sphinx -W --keep-going -b html docs docs/_build/html" in readme
    for page in ("getting-started.md", "howto/index.md", "reference/index.md", "spec.md"):
        assert f"docs/{page}" in readme and (DOCS / page).exists(), page


def test_readme_and_getting_started_quote_the_same_demo_time():
    # the walkthrough: README said "kvopt demo (about 45 s)", getting-started "10-20 s on 2
    # cores"; measured on 2 shared cores: 9 s, warm or with a fresh matplotlib cache
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    start = " ".join((DOCS / "getting-started.md").read_text(encoding="utf-8").split())
    said = re.search(r"`kvopt demo` \(([^)]*)\) runs the main job", start)
    assert said, "getting-started.md no longer says how long the demo takes"
    assert f"`kvopt demo` ({said.group(1)}) is explained" in readme


def test_the_toctrees_reach_every_page():
    """Every page in docs/ is in a toctree (Sphinx warns otherwise; -W makes it an error)."""
    pages = [p for p in DOCS.rglob("*.md") if "_build" not in p.parts and p.name != "README.md"]
    assert len(pages) >= 30


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built once (``sphinx -W --keep-going``): ``(returncode, stderr, html folder)``."""
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_nb")
    import os
    import subprocess

    html = tmp_path_factory.mktemp("site") / "html"
    out = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS),
         str(html)],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    return out.returncode, out.stderr, html


@pytest.mark.slow
def test_sphinx_build_has_no_warnings(site):
    code, stderr, _ = site
    assert code == 0, stderr[-3000:]


_INCLUDE = re.compile(r"^```\{include\}\s+(\S+)", re.M)


def _page_text(html_file) -> str:
    """The text a reader sees in a built page's article (tags dropped, entities decoded)."""
    import html

    text = html_file.read_text(encoding="utf-8")
    m = re.search(r"<article\b.*?</article>", text, flags=re.S)  # not the navigation
    text = m.group(0) if m else text
    text = re.sub(r"<(script|style)\b.*?</\1>", "", text, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def _page_source(html_root, html_file) -> str | None:
    """The source of a built page as Sphinx copied it (``_sources``), with its includes."""
    rel = html_file.relative_to(html_root).with_suffix("")
    found = sorted((html_root / "_sources" / rel.parent).glob(rel.name + ".*.txt"))
    if not found:
        return None
    text = found[0].read_text(encoding="utf-8")
    folder = DOCS / rel.parent
    for inc in _INCLUDE.findall(text):
        text += (folder / inc).resolve().read_text(encoding="utf-8")
    return text


@pytest.mark.slow
def test_no_en_dash_stands_where_the_source_has_two_hyphens(site):
    """``--out`` must not render as ``–out`` (issue 55: the generated command-line and
    exit-status pages showed 39 of them; ``smartquotes_action`` in ``docs/conf.py``)."""
    _, _, html = site
    pages = sorted(p for p in html.rglob("*.html") if "_sources" not in p.parts)
    checked = 0
    for page in pages:
        source = _page_source(html, page)
        if source is None:
            continue
        text = _page_text(page)
        checked += 1
        options = set(re.findall(r"(?<![\w-])--([A-Za-z][\w-]*)", source))
        dashed = sorted(w for w in options if f"\u2013{w}" in text and f"\u2013{w}" not in source)
        assert not dashed, f"{page.relative_to(html)}: --{dashed[0]} is shown as \u2013{dashed[0]}"
        assert text.count("\u2013") <= source.count("\u2013"), page.relative_to(html)
    names = {p.relative_to(html).as_posix() for p in pages}
    assert {"reference/generated/cli.html", "reference/generated/exit-codes.html"} <= names
    assert checked >= 30


@pytest.mark.slow
def test_the_api_page_lists_the_fields_of_the_results(site):
    """The built API page shows each result's fields (autodoc of the dataclasses)."""
    _, _, html = site
    text = _page_text(html / "reference" / "generated" / "api.html")
    for field in ("SolveResult", "native_status", "SimulationResult", "completion_times",
                  "ClaimVerdict", "worst_certified_ratio", "scope", "lb_source", "history",
                  "ratio_opt", "GrowthPoint", "ratio_certified"):  # fmt: skip
        assert field in text, field


@pytest.mark.slow
def test_every_tutorial_page_shows_the_figures_its_notebook_draws(site):
    """Issue 55: the tutorials showed no outputs and no pictures.  The site renders the
    notebooks' stored outputs (tests/test_notebooks.py keeps them true): each page has at least
    as many pictures as its notebook draws, and its printed output too."""
    import json

    _, _, html = site
    for nb in sorted((REPO / "notebooks").glob("*.ipynb")):
        cells = [c for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code"]
        drawn = sum("image/png" in o.get("data", {}) for c in cells for o in c["outputs"])
        page = (html / "tutorials" / nb.with_suffix(".html").name).read_text(encoding="utf-8")
        article = re.search(r"<article\b.*?</article>", page, flags=re.S).group(0)
        shown = len(re.findall(r"<img\b", article))
        assert drawn >= 1, f"{nb.name} draws no figure"
        assert shown >= drawn, f"{nb.name}: the page shows {shown} of its {drawn} figures"
        assert "cell_output" in article, f"{nb.name}: the page shows no output"
