"""The parts of the docs written from the code itself.

- ``docs/cli.md``: between its two marker lines, one section per ``bgai`` command, made from
  ``bgai.frontends.cli.build_parser()``: the usage line, then every argument with its help, group by group. So the
  reference says what ``bgai COMMAND --help`` says. It is committed, so that the page reads as Markdown in the
  repository too: ``python docs/hooks.py`` writes it again, and a test (and the site's build) refuses a stale one.
- ``docs/architecture.md``: its marker line becomes the table of ``bgai/``'s modules at build time (an mkdocs hook,
  ``hooks:`` in mkdocs.yml), each with the first paragraph of its docstring (read with ``ast``, nothing imported),
  linked to its API page where it has one.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKERS = {"architecture.md": "<!-- bgai-layout -->"}
#: The lines around the command-line reference in docs/cli.md.
CLI_BEGIN, CLI_END = ("<!-- bgai-cli-reference: written by python docs/hooks.py from the parser; do not edit -->",
                      "<!-- /bgai-cli-reference -->")
CLI_PAGE = ROOT / "docs" / "cli.md"


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _help(formatter: argparse.HelpFormatter, action: argparse.Action) -> str:
    if not action.help or action.help == argparse.SUPPRESS:
        return ""
    return " ".join(formatter._expand_help(action).split())  # %(default)s and the like, as --help shows them


def _names(formatter: argparse.HelpFormatter, action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{formatter._format_args(action, formatter._get_default_metavar_for_positional(action))}`"
    if action.nargs == 0:
        return ", ".join(f"`{name}`" for name in action.option_strings)
    args = formatter._format_args(action, formatter._get_default_metavar_for_optional(action))
    return ", ".join(f"`{name} {args}`" for name in action.option_strings)


def _command(name: str, parser: argparse.ArgumentParser, summary: str, aliases: list[str]) -> str:
    formatter = parser._get_formatter()
    lines = [f"## bgai {name}", ""]
    if summary:
        lines += [summary[0].upper() + summary[1:] + ("" if summary.endswith(".") else "."), ""]
    if aliases:
        lines += ["Also: " + ", ".join(f"`bgai {alias}`" for alias in aliases) + ".", ""]
    # argparse indents the usage's continuation lines under "usage: bgai NAME"; without "usage: ", 7 fewer.
    usage = "\n".join(line.removeprefix("       ") for line in
                      parser.format_usage().removeprefix("usage: ").rstrip().splitlines())
    lines += ["```text", usage, "```", ""]
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if not isinstance(a, argparse._HelpAction)]
        if not actions:
            continue
        title = {"positional arguments": "Arguments", "options": "Options"}.get(group.title, group.title)
        lines += [f"**{title[0].upper() + title[1:]}**", "", "| argument | what it does |", "| --- | --- |"]
        lines += [f"| {_names(formatter, a)} | {_escape(_help(formatter, a))} |" for a in actions]
        lines.append("")
    return "\n".join(lines)


def cli_reference() -> str:
    """The reference of every ``bgai`` command, in Markdown (usage lines wrapped at 100 columns, whatever the
    terminal)."""
    import os

    from bgai.frontends.cli import build_parser

    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps its usage lines to the terminal it finds
    try:
        parser = build_parser()
        return _cli_sections(parser).strip("\n")
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns


def committed_cli_reference(text: str | None = None) -> str:
    """The reference committed between docs/cli.md's markers."""
    text = CLI_PAGE.read_text(encoding="utf-8") if text is None else text
    if CLI_BEGIN not in text or CLI_END not in text:
        raise ValueError(f"docs/cli.md lost its marker lines {CLI_BEGIN} and {CLI_END}")
    return text.split(CLI_BEGIN, 1)[1].split(CLI_END, 1)[0].strip("\n")


def write_cli_reference() -> None:
    """docs/cli.md with the reference between its markers made anew."""
    text = CLI_PAGE.read_text(encoding="utf-8")
    committed_cli_reference(text)  # (the markers are there)
    before, rest = text.split(CLI_BEGIN, 1)
    after = rest.split(CLI_END, 1)[1]
    CLI_PAGE.write_text(f"{before}{CLI_BEGIN}\n{cli_reference()}\n{CLI_END}{after}", encoding="utf-8")


def _cli_sections(parser: argparse.ArgumentParser) -> str:
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    summaries = {choice.dest: choice.help or "" for choice in commands._choices_actions}
    seen: dict[int, str] = {}
    aliases: dict[str, list[str]] = {}
    for name, sub in commands.choices.items():
        if id(sub) in seen:
            aliases[seen[id(sub)]].append(name)
        else:
            seen[id(sub)] = name
            aliases[name] = []
    sections = [_command(name, commands.choices[name], summaries.get(name, ""), aliases[name])
                for name in aliases]
    return "\n".join(sections)


def _documented() -> dict[str, str]:
    """Module name -> the API page (relative to docs/) whose ``::: name`` line documents it."""
    pages = {}
    for page in sorted((ROOT / "docs" / "api").glob("*.md")):
        for name in re.findall(r"^::: *([\w.]+)", page.read_text(encoding="utf-8"), re.MULTILINE):
            pages[name] = f"api/{page.name}"
    return pages


def layout_table() -> str:
    """The table of bgai's modules and packages, each with its docstring's first paragraph, in Markdown."""
    documented = _documented()
    rows = ["| module | what it is |", "| --- | --- |"]
    for path in sorted((ROOT / "bgai").rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        relative = path.relative_to(ROOT)
        package = path.name == "__init__.py"
        parts = relative.with_suffix("").parts[:-1] if package else relative.with_suffix("").parts
        name = ".".join(parts)
        shown = f"`{relative.parent}/`" if package else f"`{relative}`"
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        first = " ".join(doc.split("\n\n")[0].split())
        if name in documented:
            shown = f"[{shown}]({documented[name]}#{name})"
        rows.append(f"| {shown} | {_escape(first).replace('``', '`')} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri == "cli.md" and committed_cli_reference(markdown) != cli_reference():
        raise ValueError("docs/cli.md's command-line reference is stale: run python docs/hooks.py")
    marker = MARKERS.get(page.file.src_uri)
    if marker is None:
        return markdown
    if marker not in markdown:
        raise ValueError(f"docs/{page.file.src_uri} lost its marker line {marker}")
    return markdown.replace(marker, layout_table())


if __name__ == "__main__":
    write_cli_reference()
    print(f"wrote the command-line reference into {CLI_PAGE}")
