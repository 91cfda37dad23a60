"""The README and the documentation site stay true: the site builds strictly, the README stays short, every relative
link points at a file, and every example runs.

Given the README and the pages under docs/,
- when the site is built with ``mkdocs build --strict``, then it builds (a broken link or anchor, a page missing
  from the nav, a docstring mkdocstrings cannot render are all errors), and the command-line reference has a
  section for every ``bgai`` command;
- then the README is at most 12 KB, and every relative link in it and in the pages names an existing file;
- when the ``pycon`` blocks of a file are run as one doctest (the blocks share their names, top to bottom, as in a
  session), then every example gives the output written under it. A ``>>>`` outside a ``pycon`` block would not
  be run, so there is none.
"""

from __future__ import annotations

import argparse
import doctest
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
README_LIMIT = 12 * 1024

FENCE = re.compile(r"^(`{3,})(\w*)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _blocks(text: str):
    """(language, first line number, lines) of each fenced block."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening:
            fence, language = opening.groups()
            j = i + 1
            while j < len(lines) and not lines[j].startswith(fence):
                j += 1
            yield language, i + 1, lines[i + 1:j]
            i = j
        i += 1


def _outside_code(text: str) -> str:
    """The text with fenced blocks and inline code blanked out, so that links are read from the prose only."""
    lines = text.split("\n")
    for _, first, body in _blocks(text):
        for k in range(first - 1, first + len(body) + 1):
            if k < len(lines):
                lines[k] = ""
    return re.sub(r"`[^`\n]*`", "", "\n".join(lines))


def _doctest_source(text: str) -> str:
    """The ``pycon`` blocks of a Markdown file as one doctest text, each example on its own line number."""
    lines = [""] * (text.count("\n") + 1)
    for language, first, body in _blocks(text):
        if language == "pycon":
            lines[first:first + len(body)] = body
            lines[first + len(body)] = ""  # the end of a block ends its last example's expected output
    return "\n".join(lines)


# The site -------------------------------------------------------------------------------------------------------

def test_the_site_builds_strictly_with_a_reference_for_every_command(tmp_path):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        pytest.skip("mkdocs is not installed: pip install -e '.[docs]' (the dev extra has it)")
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    from bgai.frontends.cli import build_parser

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    reference = (site / "cli" / "index.html").read_text(encoding="utf-8")
    missing = [name for name, parser in commands.choices.items()
               if parser.prog == f"bgai {name}" and f'id="bgai-{name}"' not in reference]
    assert not missing, f"no section in the command-line reference for {missing}"
    layout = (site / "architecture" / "index.html").read_text(encoding="utf-8")
    assert "bgai/formats/position.py" in layout and "<!-- bgai-layout -->" not in layout
    # mkdocs checks the anchors between its pages; the README's anchors into them are checked here.
    missing = []
    for target in LINK.findall(_outside_code(README.read_text(encoding="utf-8"))):
        page, _, anchor = target.partition("#")
        if anchor and page.startswith("docs/") and page.endswith(".md"):
            built = site / page.removeprefix("docs/").removesuffix(".md").removesuffix("index") / "index.html"
            if f'id="{anchor}"' not in built.read_text(encoding="utf-8"):
                missing.append(target)
    assert not missing, f"README.md links to anchors the site does not have: {missing}"


def test_the_committed_command_line_reference_is_the_parsers():
    """docs/cli.md holds the reference between its markers, as Markdown a reader sees without the site: the same
    text ``python docs/hooks.py`` writes from the parser now (after a change to an option, run it)."""
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    committed = hooks.committed_cli_reference()
    assert committed == hooks.cli_reference(), "docs/cli.md's reference is stale: run python docs/hooks.py"
    assert committed.count("\n## bgai ") >= 14 and "| `--rollout` |" in committed


# Size and links -------------------------------------------------------------------------------------------------

def test_the_readme_is_at_most_12_kb():
    size = len(README.read_bytes())
    assert size <= README_LIMIT, f"README.md is {size:,} bytes, over {README_LIMIT:,}: move the detail into docs/"


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_names_an_existing_file(path):
    broken = []
    for target in LINK.findall(_outside_code(path.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL, or an anchor in the same page (mkdocs checks anchors between pages)
        file = target.split("#")[0]
        if not (path.parent / file).exists():
            broken.append(target)
    assert not broken, f"{path.relative_to(ROOT)} links to missing files: {broken}"


def test_the_readme_has_a_line_for_every_command():
    from bgai.frontends.cli import build_parser

    commands = next(a for a in build_parser(train_settings=False)._actions
                    if isinstance(a, argparse._SubParsersAction))
    text = README.read_text(encoding="utf-8")
    missing = [name for name, parser in commands.choices.items()
               if parser.prog == f"bgai {name}" and f"| `bgai {name}" not in text]
    assert not missing, f"README.md's command table lacks {missing}"


# Examples -------------------------------------------------------------------------------------------------------

WITH_EXAMPLES = [p for p in [README, *PAGES] if "```pycon" in p.read_text(encoding="utf-8")]


def test_some_pages_have_examples():
    assert README in WITH_EXAMPLES and len(WITH_EXAMPLES) >= 5


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_example_is_in_a_pycon_block(path):
    text = path.read_text(encoding="utf-8")
    inside = {first + k for language, first, body in _blocks(text) if language == "pycon" for k in range(len(body))}
    stray = [n + 1 for n, line in enumerate(text.split("\n")) if line.lstrip().startswith(">>>") and n not in inside]
    assert not stray, f"{path.relative_to(ROOT)}: '>>>' outside a pycon block (never run) on lines {stray}"


@pytest.mark.parametrize("path", WITH_EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_examples_run(path, monkeypatch):
    monkeypatch.chdir(ROOT)  # examples name files from the repository root, as a reader runs them
    name = str(path.relative_to(ROOT))
    test = doctest.DocTestParser().get_doctest(_doctest_source(path.read_text(encoding="utf-8")), {}, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def _shell_commands(path: Path) -> list[tuple[int, str]]:
    """(line number, command) of each ``bgai`` command in the file's ``sh`` blocks, its comment cut off."""
    found = []
    for language, first, lines in _blocks(path.read_text()):
        if language not in ("sh", "bash", "shell", "console"):
            continue
        joined: list[tuple[int, str]] = []  # (a line continued with a backslash, joined to the next)
        for n, line in enumerate(lines, first):
            if joined and joined[-1][1].endswith("\\"):
                joined[-1] = (joined[-1][0], joined[-1][1][:-1] + " " + line.strip())
            else:
                joined.append((n, line.strip().removeprefix("$ ")))
        found += [(n, line.split("  #")[0].split(" # ")[0].strip()) for n, line in joined if line.startswith("bgai ")]
    return found


@pytest.mark.parametrize("path", [README, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_bgai_command_in_a_shell_block_parses(path):
    """Each ``bgai ...`` line of the README's and the pages' shell blocks is one the parser accepts: its command,
    and every option with a value of the right kind (a shell substitution stands for one word; a synopsis's
    optional ``[...]`` parts are read as given)."""
    import shlex

    from bgai.frontends.cli import build_parser

    parser = build_parser()
    for n, command in _shell_commands(path):
        words = shlex.split(re.sub(r"\$\([^)]*\)", "WORD", command).replace("[", "").replace("]", ""))[1:]
        try:
            parser.parse_args(words)
        except SystemExit:
            pytest.fail(f"{path.name}:{n}: the parser refuses `{command}`")


def test_the_shell_commands_are_found():
    assert len(_shell_commands(README)) >= 5 and any("bgai train" in c for p in PAGES for _, c in _shell_commands(p))
