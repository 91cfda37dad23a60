"""README.md's status table is rendered from the committed results files (``benchmarks/status.py``): the README
and the files agree, each row names the command that wrote its file, and a figure changed in a file is caught,
named by its row, and rendered again."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATUS = ROOT / "benchmarks" / "status.py"
BEGIN, END = "<!-- status: generated", "<!-- /status -->"


def status(*options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(STATUS), *options], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def table(readme: Path) -> list[str]:
    lines = readme.read_text().splitlines()
    begin = next(i for i, line in enumerate(lines) if line.startswith(BEGIN))
    return [line for line in lines[begin + 1:lines.index(END, begin)] if line]


def copy_of_the_repository(folder: Path) -> Path:
    """README.md and the results files, as the status script reads them, under ``folder``."""
    shutil.copy(ROOT / "README.md", folder / "README.md")
    (folder / "benchmarks").mkdir()
    shutil.copy(ROOT / "benchmarks" / "results.json", folder / "benchmarks" / "results.json")
    shutil.copytree(ROOT / "benchmarks" / "results", folder / "benchmarks" / "results")
    return folder


def test_the_readme_status_table_agrees_with_the_results_files():
    done = status("--check")
    assert done.returncode == 0, f"{done.stdout}{done.stderr}"


def test_each_row_names_the_command_recorded_in_the_file_it_writes():
    checked = 0
    for line in table(ROOT / "README.md")[2:]:
        command = line.rstrip(" |").rsplit(" | ", 1)[1]
        written = re.fullmatch(r"`([^`]*--json (\S+))`( \(\d{4}-\d\d-\d\d\))?", command)
        if written is None:  # the rules' test, runs gathered in one file, a run played in parts
            continue
        figures = json.loads((ROOT / written[2]).read_text())
        assert figures["command"] == written[1]
        assert {"command", "date", "commit", "machine"} <= set(figures), written[2]
        checked += 1
    assert checked >= 8


def test_a_figure_changed_in_its_file_is_named_by_its_row_then_rendered(tmp_path):
    # Given a copy of the README and the results files, the 1-ply checker-play error changed in its file
    root = copy_of_the_repository(tmp_path)
    path = root / "benchmarks" / "results" / "move_accuracy.json"
    figures = json.loads(path.read_text())
    was = " / ".join(f"{figures[f'bgai {p}-ply']['mp_per_move']:.2f}" for p in (0, 1, 2))
    figures["bgai 1-ply"]["mp_per_move"] += 0.1
    now = " / ".join(f"{figures[f'bgai {p}-ply']['mp_per_move']:.2f}" for p in (0, 1, 2))
    path.write_text(json.dumps(figures))
    options = ["--root", str(root), "--readme", str(root / "README.md")]
    before = (root / "README.md").read_text()

    # When the README is checked: the row is named, with what each side says
    checked = status("--check", *options)
    assert checked.returncode == 1
    assert "row 'checker play' differs" in checked.stdout
    assert was in checked.stdout and now in checked.stdout
    assert checked.stdout.count("differs") == 1

    # Then rendering rewrites that row and nothing else, and the check passes
    assert status(*options).returncode == 0
    after = (root / "README.md").read_text()
    assert [a for a, b in zip(after.splitlines(), before.splitlines()) if a != b] == [
        line for line in table(root / "README.md") if now in line]
    assert len(after.splitlines()) == len(before.splitlines())
    assert status("--check", *options).returncode == 0


def test_a_results_file_without_its_command_stops_the_rendering_and_names_the_row(tmp_path):
    root = copy_of_the_repository(tmp_path)
    path = root / "benchmarks" / "results" / "cube_accuracy.json"
    figures = json.loads(path.read_text())
    del figures["command"]
    path.write_text(json.dumps(figures))
    done = status("--check", "--root", str(root), "--readme", str(root / "README.md"))
    assert done.returncode == 2
    assert "'cube decisions'" in done.stderr and "benchmarks/results/cube_accuracy.json" in done.stderr
    assert "no command recorded" in done.stderr


def test_the_cube_row_names_the_1ply_bots_figure_only_where_it_differs_from_its_plys_own(load_script):
    module = load_script(STATUS)
    figures = json.loads((ROOT / "benchmarks" / "results" / "cube_accuracy.json").read_text())
    bot = figures["bgai 1-ply bot"]
    two = figures[f"bgai {bot['cube_plies']}-ply"]["mp_per_decision"]
    # the same network deciding at the same ply: the row says so instead of printing the figure twice
    figures["bgai 1-ply bot"] = {**bot, "mp_per_decision": two}
    assert module.play_bot(figures) == f"; the 1-ply bot's cube is the {bot['cube_plies']}-ply one"
    # another network at 2-ply (as before 2026-12-06): the 1-ply bot's own figure
    figures["bgai 1-ply bot"] = {**bot, "mp_per_decision": two + 0.25}
    assert module.play_bot(figures) == f"; the 1-ply bot's, at {bot['cube_plies']}-ply: **{two + 0.25:.2f}**"
    del figures["bgai 1-ply bot"]
    assert module.play_bot(figures) == ""
