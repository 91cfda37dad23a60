"""bgai.coach stands apart: the engine never imports it, it reaches the engine through the package, no file edits
``sys.path``, and each of its commands is ``python -m bgai.coach.NAME``."""

import ast
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bgai"
COACH = PACKAGE / "coach"
#: folders that hold no project code (environments, builds, caches, runs)
NOT_CODE = {".git", ".venv", "venv", "build", "dist", "runs", "__pycache__", ".pytest_cache", "node_modules"}
COMMANDS = sorted(path.stem for path in COACH.glob("*.py") if "def main(" in path.read_text())


def project_files(*suffixes: str) -> list[Path]:
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [d for d in subfolders if d not in NOT_CODE and not d.endswith(".egg-info")]
        found += [Path(folder, name) for name in files if name.endswith(suffixes)]
    return found


def engine_modules() -> list[str]:
    """Every module of the package outside bgai.coach."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if "coach" in parts or "__pycache__" in parts or parts[-1] == "__main__":  # (a program: importing it runs it)
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_no_engine_module_imports_the_coach():
    """Given a fresh interpreter, When every engine module is imported (those whose optional extra is missing
    skipped), Then no bgai.coach module is loaded."""
    script = (
        "import importlib, json, sys\n"
        "imported, skipped = [], []\n"
        f"for name in {engine_modules()!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "        imported.append(name)\n"
        "    except ImportError:\n"
        "        skipped.append(name)\n"
        "coach = sorted(m for m in sys.modules if m == 'bgai.coach' or m.startswith('bgai.coach.'))\n"
        "print(json.dumps({'imported': imported, 'skipped': skipped, 'coach': coach}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert {"bgai.eval.bot", "bgai.train.run", "bgai.frontends.cli", "bgai.core.game"} <= set(result["imported"])
    assert result["coach"] == [], f"engine modules load {result['coach']}"


def test_no_file_edits_sys_path():
    edits = re.compile(r"\bsys\.path\s*(\.\s*(insert|append|extend)\b|\[[^\]]*\]\s*=|\+=|=(?!=))")
    offenders = [str(path.relative_to(ROOT)) for path in project_files(".py", ".ipynb")
                 if edits.search(path.read_text(errors="replace"))]
    assert offenders == []


def imported_modules(path: Path) -> set[str]:
    """The top-level names of the modules a Python file imports (absolute imports)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_scripts_and_tests_reach_the_library_only_through_bgai():
    """benchmarks/ and training/ hold scripts, not a library: nothing imports them, and they import none of each
    other or of the tests (the tests may import one another)."""
    scripts = {path.stem for folder in ("benchmarks", "training") for path in (ROOT / folder).glob("*.py")}
    forbidden = scripts | {"benchmarks", "training", "oracles"}
    found = {}
    for folder in ("benchmarks", "training", "tests", "bgai"):
        for path in (ROOT / folder).rglob("*.py"):
            wrong = imported_modules(path) & (forbidden | ({"tests"} if folder != "tests" else set()))
            if wrong:
                found[str(path.relative_to(ROOT))] = sorted(wrong)
    assert found == {}


@pytest.mark.parametrize("name", COMMANDS)
def test_each_coach_command_answers_help(name, capsys):
    try:
        module = importlib.import_module(f"bgai.coach.{name}")
    except ImportError as error:
        if (error.name or "bgai").startswith("bgai"):
            raise
        pytest.skip(f"bgai.coach.{name} needs {error.name}")
    with pytest.raises(SystemExit) as stopped:
        module.main(["--help"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out.startswith("usage: ")


def test_the_coach_reads_its_reference_sets_from_the_package():
    from bgai.coach.cube_accuracy import REFERENCE as CUBE
    from bgai.coach.move_accuracy import REFERENCE as MOVES

    assert MOVES.is_file() and CUBE.is_file() and MOVES.parent == CUBE.parent == COACH / "data"


def test_an_ablation_variant_grown_from_the_teacher_starts_as_the_teacher(tmp_path, monkeypatch):
    import numpy as np
    import torch

    from bgai.coach import ablation
    from bgai.eval.checkpoint import model_payload, save_checkpoint
    from bgai.eval.network import EquityModel
    from bgai.train.config import LookaheadStage
    from bgai.train.learner import inputs
    from bgai.train.selfplay import sample_positions

    torch.manual_seed(2)
    teacher = EquityModel.create((8, 4), ("contact", "race"), 2)
    save_checkpoint(tmp_path / "teacher.pt", model_payload(teacher))
    monkeypatch.setitem(ablation.VARIANTS, "g-tiny", (2, (8, 4, 4), ("contact", "race"), "grown"))
    monkeypatch.setattr(ablation, "GROWN_FROM_TEACHER", {"g-tiny"})
    boards = sample_positions(teacher, 2, 0, seed=1, epsilon=0.0, rng=np.random.default_rng(1), keep=40)
    targets = np.full((len(boards), 5), 0.3, np.float32)
    stage = LookaheadStage(epochs=1, lr=1e-12, lr_end=1e-12, batch_size=8)  # (a step too small to move it)
    model, fit = ablation.train_variant("g-tiny", boards, targets, boards, targets, stage, 0,
                                        str(tmp_path / "teacher.pt"))
    assert model.hidden == (8, 4, 4) and fit["equity_mae"] >= 0
    with torch.no_grad():
        assert torch.allclose(model(*inputs(model, boards)), teacher(*inputs(teacher, boards)), atol=1e-5)
