"""Sphinx extension of kvopt's documentation: reference pages generated from the code.

At ``builder-inited`` it writes Markdown pages into ``docs/reference/generated/``
(not tracked by git) from the real objects, so a new command, option, policy or
claim appears in the documentation without editing it:

* ``cli.md`` — every subcommand of :func:`kvopt.cli.build_parser`, every option;
* ``exit-codes.md`` — :mod:`kvopt.cli.exitcodes`, the table every ``--help`` ends with;
* ``policies.md`` — every entry of :data:`kvopt.policy.POLICIES`;
* ``claims.md`` — every claim of :data:`kvopt.claim.CLAIMS`;
* ``api.md`` — an autodoc entry for every name in ``kvopt.__all__``, then one for every class
  a result of those functions is made of (:func:`result_classes`: ``SolveResult``,
  ``SimulationResult``, ``Comparison``, verdicts, …), with their fields.

It also turns "SPEC §N" in docstrings into links to the contract's sections
(``autodoc-process-docstring``).  ``tests/test_docs.py`` calls the same functions.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

GENERATED = Path(__file__).resolve().parent.parent / "reference" / "generated"

_SPEC = re.compile(r"SPEC (§\d+(?:\.\d+)?(?:\s*(?:,|and)\s*§\d+(?:\.\d+)?)*)")
_SECTION = re.compile(r"§(\d+(?:\.\d+)?)")


def _md_escape(text: str) -> str:
    """Text for a Markdown table cell or paragraph: no pipes, no stray markup."""
    text = " ".join(str(text).split())
    for ch in "|*_<>[]`":
        text = text.replace(ch, "\\" + ch)
    return text


def _code(text: str) -> str:
    text = str(text).replace("|", "\\|")  # a pipe would end the table cell
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    raise LookupError("the parser has no subcommands")


def commands() -> dict[str, argparse.ArgumentParser]:
    """Every subcommand of the real parser, in ``kvopt --help`` order."""
    from kvopt.cli import build_parser

    return dict(_subparsers(build_parser()).choices)


def _option_row(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    # argparse's own spelling, as --help shows it: "--objective {total,makespan}", "--out FILE"
    names = parser._get_formatter()._format_action_invocation(action)
    help_text = action.help or ""
    if help_text == argparse.SUPPRESS:
        return ""
    if "%(" in help_text:
        try:
            help_text = help_text % {**vars(action), "prog": "kvopt"}
        except (KeyError, TypeError, ValueError):
            pass
    if isinstance(action, argparse._SubParsersAction) and not help_text:
        # the actions of a command with its own subcommands (kvopt experiment run): each is
        # a section of its own below
        help_text = "one of: " + "; ".join(
            f"{c.dest} ({c.help})" if c.help else c.dest for c in action._choices_actions
        )
    extra = []
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        extra.append("choices: " + ", ".join(_code(c) for c in action.choices))
    if action.required and action.option_strings:
        extra.append("required")
    cell = _md_escape(help_text) if help_text else "*(no help text)*"
    if extra:
        cell += " (" + "; ".join(extra) + ")"
    return f"| {_code(names)} | {cell} |"


def _option_table(parser: argparse.ArgumentParser) -> list[str]:
    """The markdown table of a parser's arguments (no lines when it has none)."""
    rows = [
        _option_row(parser, a) for a in parser._actions if not isinstance(a, argparse._HelpAction)
    ]
    rows = [r for r in rows if r]
    return ["| argument | meaning |", "|---|---|", *rows, ""] if rows else []


def cli_markdown() -> str:
    """The command-line reference: one section per subcommand, one row per option."""
    from kvopt.cli import build_parser
    from kvopt.cli.exitcodes import statuses

    top = build_parser()
    lines = [
        "# Command line",
        "",
        "Generated from the real parser (`kvopt.cli.build_parser`) at every build: every "
        "subcommand and every option is here, with the help text `kvopt COMMAND --help` "
        "prints. `--json` makes a command print exactly one JSON object on stdout "
        "(SPEC §4); progress goes to stderr. Exit statuses: [](exit-codes.md).",
        "",
        "```text",
        top.format_usage().strip(),
        "```",
        "",
    ]
    sub = _subparsers(top)
    summaries = {a.dest: a.help for a in sub._choices_actions}
    for name, parser in sub.choices.items():
        lines += [f"(cli-{name})=", f"## kvopt {name}", ""]
        if summaries.get(name):
            lines += [f"*{_md_escape(summaries[name])}*", ""]
        lines += ["```text", parser.format_usage().strip(), "```", ""]
        if parser.description:
            if parser.formatter_class is argparse.RawDescriptionHelpFormatter:
                lines += ["```text", parser.description.strip(), "```", ""]
            else:
                lines += [_md_escape(parser.description), ""]
        lines += _option_table(parser)
        for action in parser._actions:  # a command's own subcommands, each with its options
            if not isinstance(action, argparse._SubParsersAction):
                continue
            helps = {c.dest: c.help for c in action._choices_actions}
            for sname, sp in action.choices.items():
                lines += [f"(cli-{name}-{sname})=", f"### kvopt {name} {sname}", ""]
                if helps.get(sname):
                    lines += [f"*{_md_escape(helps[sname])}*", ""]
                lines += ["```text", sp.format_usage().strip(), "```", ""]
                lines += _option_table(sp)
        lines += ["Exit status:", "", "| status | meaning |", "|---|---|"]
        lines += [f"| {code} | {_md_escape(text)} |" for code, text in statuses(name).items()]
        lines.append("")
    return "\n".join(lines)


def exit_codes_markdown() -> str:
    from kvopt.cli.exitcodes import COMMON, PER_COMMAND, statuses

    lines = [
        "(exit-codes)=",
        "# Exit statuses",
        "",
        "Generated from `kvopt.cli.exitcodes`, the table that also ends every "
        "`kvopt COMMAND --help`. Every command:",
        "",
        "| status | meaning |",
        "|---|---|",
    ]
    lines += [f"| {code} | {_md_escape(text)} |" for code, text in statuses().items()]
    lines += ["", "Where a command gives a status its own meaning:", ""]
    lines += ["| command | status | meaning |", "|---|---|---|"]
    for command, table in PER_COMMAND.items():
        for code, text in sorted(table.items()):
            lines.append(f"| [`kvopt {command}`](#cli-{command}) | {code} | {_md_escape(text)} |")
    lines += [
        "",
        f"Every other command uses only the common statuses ({', '.join(map(str, COMMON))}). "
        "A violated claim, a growing ratio or a bad record found by a search is a finding, "
        "not an error: those commands exit 0.",
        "",
    ]
    return "\n".join(lines)


#: words of a source string → the bibliography entry they cite (docs/bibliography.md)
_PAPERS = (
    (("Feng, Liu, Yang, Zhang", "main paper", "regime-aware"), "bib-feng-routing",
     "Feng, Liu, Yang, Zhang 2026"),
    (("Feng, Yang, Zhang",), "bib-feng-gsa", "Feng, Yang, Zhang 2026"),
    (("Jaillet",), "bib-jaillet", "Jaillet et al. 2025"),
    (("Kong",), "bib-kong", "Kong et al. 2026"),
    (("Wang, Ye, Zhou",), "bib-wang", "Wang, Ye, Zhou 2025"),
    (("Chen, Ye, Zhou",), "bib-chen", "Chen, Ye, Zhou 2025"),
    (("Ao, Luo, Simchi-Levi, Wang",), "bib-ao", "Ao, Luo, Simchi-Levi, Wang 2025"),
    (("Θ(n)", "Theta(n)"), "bib-theta-n", "the Θ(n) abstract"),
    (("Steinberg",), "bib-steinberg", "Steinberg 1997"),
    (("vLLM", "Kwon"), "bib-kwon", "Kwon et al. 2023"),
)  # fmt: skip


def papers(source: str) -> list[str]:
    """Links to the bibliography entries a source string cites (in the bibliography's order)."""
    return [
        f"{{ref}}`{title} <{label}>`"
        for words, label, title in _PAPERS
        if any(w in source for w in words)
    ]


def _param_text(param) -> str:
    bits = [f"{_code(param.name)} = {_code(repr(param.default))}"]
    if param.choices:
        bits.append("one of " + ", ".join(_code(c) for c in param.choices))
    if param.minimum is not None or param.maximum is not None:
        lo = "" if param.minimum is None else f"{param.minimum:g} ≤ "
        hi = "" if param.maximum is None else f" ≤ {param.maximum:g}"
        bits.append(f"{lo}value{hi}")
    return "; ".join(bits) + (f": {_md_escape(param.help)}" if param.help else "")


def _knowledge_text(spec) -> str:
    if spec.knowledge == "prediction-based":
        return (
            "prediction-based (a clairvoyant type that decides from the predictions: "
            "`predicted_interval`, issue 69)"
        )
    if spec.clairvoyant:
        return "clairvoyant (knows `o_i`)"
    return "non-clairvoyant (learns `o_i` when the job completes)"


def policies_markdown() -> str:
    """One section per registered policy (kvopt.policy.POLICIES)."""
    from kvopt.claim import claims_for_policy
    from kvopt.policy import POLICIES

    lines = [
        "(policies)=",
        "# Policies",
        "",
        "Generated from the registry `kvopt.policy.POLICIES` (what `kvopt policies` prints). "
        "The algorithms are specified in [SPEC §6](#spec-6); the papers are in the "
        "[bibliography](../../bibliography.md). *Clairvoyant* policies know every response length "
        "`o_i` (SPEC §1); *kills* says whether the policy may stop an attempt before it "
        "completes (its progress is then lost).",
        "",
        "| policy | knows `o_i` | kills | applies to |",
        "|---|---|---|---|",
    ]
    for name, spec in POLICIES.items():
        lines.append(
            f"| [`{name}`](#policy-{name}) | {'yes' if spec.clairvoyant else 'no'} | "
            f"{'may kill' if spec.kills else 'never'} | {_md_escape(spec.applies_to)} |"
        )
    lines.append("")
    for name, spec in POLICIES.items():
        lines += [f"(policy-{name})=", f"## `{name}`", "", _md_escape(spec.summary) + ".", ""]
        lines += [
            f"- **Source:** {_md_escape(spec.source)}",
            f"- **Papers:** {', '.join(papers(spec.source + ' ' + spec.summary)) or '—'}",
            f"- **Clairvoyance:** {_knowledge_text(spec)}",
            f"- **Kills:** {'may kill attempts (preemptive, progress lost)' if spec.kills else 'never kills (non-preemptive)'}",
            f"- **Applies to:** {_md_escape(spec.applies_to)}"
            + ("" if spec.arrivals else " (offline: no arrivals after round 0)"),
            f"- **Seeded:** {'yes (`--seed`)' if spec.seeded else 'no (deterministic)'}",
        ]
        claims = claims_for_policy(name)
        if claims:
            lines.append("- **Claims:** " + ", ".join(f"[`{c}`](#claim-{c})" for c in claims))
        if spec.params:
            lines.append("- **Parameters** (`--param KEY=VALUE`):")
            lines += [f"  - {_param_text(p)}" for p in spec.params]
        else:
            lines.append("- **Parameters:** none")
        lines.append("")
    return "\n".join(lines)


def claims_markdown() -> str:
    """One section per claim (kvopt.claim.CLAIMS)."""
    from kvopt.claim import CLAIMS

    lines = [
        "(claims)=",
        "# Claims",
        "",
        "Generated from the registry `kvopt.claim.CLAIMS` (what `kvopt validate --list` prints); "
        "the contract is [SPEC §7](#spec-7), the verdicts are defined there. In a constant, "
        "**α = max_i (s_i + o_i) / M**: the largest peak memory of a job as a share of the "
        "budget (a claim with α is about instances with α < 1, checked per instance).",
        "",
        "| claim | kind | policy | constant | objective |",
        "|---|---|---|---|---|",
    ]
    for cid, c in CLAIMS.items():
        pol = ", ".join(f"`{p}`" for p in c.policies) or "—"
        lines.append(
            f"| [`{cid}`](#claim-{cid}) | {c.kind} | {pol} | {_md_escape(c.bound_text())} | "
            f"{c.objective} |"
        )
    lines.append("")
    for cid, c in CLAIMS.items():
        lines += [f"(claim-{cid})=", f"## `{cid}`", "", _md_escape(c.statement) + ".", ""]
        lines += [
            f"- **Kind:** {c.kind}",
            f"- **Constant:** {_md_escape(c.bound_text())}",
            f"- **Instance class:** {_md_escape(c.klass)}",
            f"- **Source:** {_md_escape(c.source)}",
            f"- **Papers:** {', '.join(papers(c.source)) or '—'}",
            f"- **Objective:** {c.objective}",
        ]
        if c.policies:
            lines.append(
                "- **Policies:** " + ", ".join(f"[`{p}`](#policy-{p})" for p in c.policies)
            )
        if c.params:
            lines.append(
                "- **Parameters validated:** "
                + ", ".join(f"{_code(f'{k}={v}')}" for k, v in c.params.items())
            )
        if c.reconstruction:
            lines.append(
                "- **Rests on the SPS reconstruction** (SPEC §6.1): the verdict is on kvopt's "
                "reconstruction, not on the source's unpublished SPS."
            )
        if c.note:
            lines.append(f"- **Note:** {_md_escape(c.note)}")
        lines.append("")
    return "\n".join(lines)


def api_markdown() -> str:
    """An autodoc entry for every name in ``kvopt.__all__``."""
    import inspect

    import kvopt

    lines = [
        "# Python API",
        "",
        "Every name `import kvopt` exports (`kvopt.__all__`), from its docstring. Results have a "
        "readable `repr`, `to_dict()` (the object the command line prints with `--json`) and, "
        "where a table is natural, `to_dataframe()`.",
        "",
        "Objectives: `SolveResult.objective` is a number, the value of the objective solved for "
        '(`objective_name`); `objectives` is the dict `{"total_completion", "makespan"}` on '
        "`SolveResult` (of its schedule; `None` without one), `SimulationResult` and `CheckResult`, "
        "whose `total_completion` and `makespan` read it. The `--json` of `simulate`, `check` and "
        "`solve` keeps the key `objective` (SPEC §4). The dict's old name "
        "`SimulationResult.objective` / `CheckResult.objective` still works in kvopt 0.2 with a "
        "`DeprecationWarning` and is removed in kvopt 0.3.",
        "",
        "```{eval-rst}",
        ".. module:: kvopt",
        "   :no-index:",
        "```",
        "",
    ]
    for name in kvopt.__all__:
        obj = getattr(kvopt, name)
        lines += [f"## `kvopt.{name}`", ""]
        if name == "__version__":
            lines += ["The installed version of kvopt (a string); every record stores it.", ""]
            continue
        if isinstance(obj, int):  # an event kind of the policy contract (kvopt.engine.contract)
            lines += [f"`{obj}`: the kind of a `{name.lower()}` event "
                      "(`Event.kind`, `kvopt.engine.contract.EVENT_KINDS`).", ""]  # fmt: skip
            continue
        if inspect.isclass(obj):
            directive = "autoclass"
            options = ["   :members:", "   :undoc-members:"]
            if name == "Regime":
                options = ["   :members:"]
        else:
            directive = "autofunction"
            options = []
        lines += ["```{eval-rst}", f".. {directive}:: kvopt.{name}", *options, "```", ""]
    exported = {id(getattr(kvopt, n)) for n in kvopt.__all__}
    results = [c for c in result_classes() if id(c) not in exported]
    lines += [
        "# Result classes",
        "",
        "What the functions above return, and what those results are made of: each class with "
        "its fields (the keys of its `to_dict()`, where it has one). They are imported from "
        "their modules, as named in each heading.",
        "",
    ]
    for cls in results:
        path = f"{cls.__module__}.{cls.__qualname__}"
        lines += [f"## `{path}`", "", "```{eval-rst}", f".. autoclass:: {path}", "   :members:",
                  "   :undoc-members:", "   :no-index:", "```", ""]  # fmt: skip
    return "\n".join(lines)


def _namespace(module) -> dict:
    """``module``'s names with the types it imports for annotations only (its ``if
    TYPE_CHECKING:`` block: ``kvopt.api`` imports its result types so), so that its
    annotations resolve."""
    import ast
    import importlib
    import inspect

    ns = dict(vars(module))
    package = module.__name__ if hasattr(module, "__path__") else module.__name__.rpartition(".")[0]
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                if isinstance(imp, ast.ImportFrom):
                    mod = importlib.import_module("." * imp.level + (imp.module or ""), package)
                    for alias in imp.names:
                        ns[alias.asname or alias.name] = getattr(mod, alias.name)
    return ns


def _kvopt_classes(tp, out: list) -> None:
    import inspect
    import typing

    if isinstance(tp, str):
        return
    for arg in typing.get_args(tp):
        _kvopt_classes(arg, out)
    if inspect.isclass(tp) and (tp.__module__ or "").split(".")[0] == "kvopt" and tp not in out:
        out.append(tp)


def result_classes() -> list[type]:
    """The classes the functions of ``kvopt.__all__`` return, and the kvopt classes their fields
    hold (dataclasses, recursively; enums included), in the order found."""
    import dataclasses
    import inspect
    import typing

    import kvopt

    found: list[type] = []
    for name in kvopt.__all__:
        fn = getattr(kvopt, name)
        if inspect.isfunction(fn):
            hints = typing.get_type_hints(fn, globalns=_namespace(inspect.getmodule(fn)))
            _kvopt_classes(hints.get("return"), found)
    k = 0
    while k < len(found):
        cls = found[k]
        k += 1
        if not dataclasses.is_dataclass(cls):
            continue
        ns = _namespace(inspect.getmodule(cls))
        for f in dataclasses.fields(cls):
            try:
                tp = typing.get_type_hints(cls, globalns=ns).get(f.name)
            except NameError:  # a name the module never binds: read the fields one by one
                try:
                    tp = eval(f.type, ns) if isinstance(f.type, str) else f.type  # noqa: S307
                except NameError:
                    continue
            _kvopt_classes(tp, found)
    return found


PAGES = {
    "cli.md": cli_markdown,
    "exit-codes.md": exit_codes_markdown,
    "policies.md": policies_markdown,
    "claims.md": claims_markdown,
    "api.md": api_markdown,
}


def write_pages(out: Path = GENERATED) -> list[Path]:
    """Write every generated page (only those whose text changed: incremental builds)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, make in PAGES.items():
        path = out / name
        text = make()
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            # atomically: two builds at once (the slow docs tests under pytest -n 2) never read
            # a page half written
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        written.append(path)
    return written


def link_spec(text: str) -> str:
    """A docstring's "SPEC §N" (and "SPEC §N, §M") as links to the contract's sections."""

    def one(match: re.Match) -> str:
        return _SECTION.sub(lambda m: f":ref:`§{m.group(1)} <spec-{m.group(1)}>`", match.group(0))

    return _SPEC.sub(one, text)


def _process_docstring(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        if "SPEC §" in line and "``" not in line:
            lines[i] = link_spec(line)


def _builder_inited(app):
    write_pages()


def setup(app):
    app.connect("builder-inited", _builder_inited)
    app.connect("autodoc-process-docstring", _process_docstring)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
