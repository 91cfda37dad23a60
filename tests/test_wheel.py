"""The package a user installs: ``python -m build`` makes a source archive and, from it, a wheel; pip installs the
wheel with no extras into a fresh virtual environment (no system site-packages, no torch: a player's install), and
its commands work from a folder outside the repository.

One slow test (under a minute) builds and installs once, then checks each command as a subtest. One test, not a
module fixture shared by several: pytest-xdist could hand those to both workers, and each would build and install
its own. The faster tests before it run a player's commands where torch cannot be imported."""

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from bgai import __version__
from bgai.frontends.cli import main

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# the version is written once, in bgai/_version.py, which pyproject.toml reads
assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "bgai._version.__version__"}
VERSION = __version__
START = "4HPwATDgc/ABMA"
BEAROFF = "MgMAwLABAAAAAA"  # X: 2 on the 6, 5 and 1 points; O: 2 on its 6 and 4 points, 1 on its 2 point
SHIPPED = ("bgai/data/bgai-default.pt", "bgai/data/bgai-default.npz", "bgai/data/bgai-pruner.npz",
           "bgai/data/bgai-fast.npz", "bgai/data/bgai-fast-pruner.npz", "bgai/data/bearoff-v1.npz",
           "bgai/data/met/kazaross-xg2.json", "bgai/frontends/web/static/index.html",
           "bgai/frontends/web/static/app.js",
           "bgai/py.typed")  # (the PEP 561 marker: type checkers read the annotations)


def test_serve_without_the_web_extra_names_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn raises ImportError
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'bgai[web]'" in err
    assert err.count("\n") == 1


# A player's commands, run where torch and tensorboard cannot be imported (a player's install has neither): each must
# work; training must name the extra that adds them.
_NO_TORCH = """
import sys
from importlib.abc import MetaPathFinder

class NoTraining(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("torch", "tensorboard"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NoTraining())
from bgai import __version__
from bgai.frontends.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("args, expect", [
    (["hint", START, "31"], "8/5 6/5"),
    (["eval", START], "equity"),
    (["rollout", START, "--trials", "36", "--truncate", "2", "--quiet"], "trials"),
    (["analyse", str(ROOT / "tests/data/matches/gnubg-3pt-seed6.mat"), "--quiet"], "Analysed by bgai"),
    (["hint", BEAROFF, "31"], "6/3 1/off"),
])
def test_a_players_commands_need_no_torch(args, expect, tmp_path):
    done = subprocess.run([sys.executable, "-c", _NO_TORCH, *args], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert expect in done.stdout


def test_training_without_torch_names_the_extra(tmp_path):
    done = subprocess.run([sys.executable, "-c", _NO_TORCH, "train", "--games", "10"], capture_output=True,
                          text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
    assert done.returncode == 2
    assert done.stderr.startswith("bgai train: error: this needs torch") and "pip install 'bgai[train]'" in done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.slow
def test_the_wheel_installs_without_extras_and_runs_from_any_folder(tmp_path, subtests):
    user = _install(tmp_path)
    with subtests.test("the wheel holds the package and its data, nothing else"):
        _check_contents(user)
    with subtests.test("bgai runs from the installed package, not the repository"):
        assert user.site.is_relative_to(user.venv) and not user.site.is_relative_to(ROOT)
    with subtests.test("a player's install has no torch, and training names the extra that adds it"):
        done = _run([user.venv / "bin" / "python", "-c", "import importlib.util as u; print(u.find_spec('torch'))"],
                    cwd=user.work, env=user.env)
        assert done.stdout.strip() == "None"
        done = _bgai(user, "train", "--games", "10")
        assert done.returncode == 2
        assert "pip install 'bgai[train]'" in done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    with subtests.test("bgai --version"):
        done = _bgai(user, "--version")
        assert (done.returncode, done.stdout.strip()) == (0, f"bgai {VERSION}")
    with subtests.test("bgai hint"):
        _check_hint(user)
    with subtests.test("the bear-off database ships with the package: nothing is built or cached"):
        _check_bearoff(user)
    with subtests.test("bgai play, driven from stdin"):
        _check_play(user)
    with subtests.test("bgai serve without the web extra"):
        done = _bgai(user, "serve")
        assert done.returncode == 2
        assert "pip install 'bgai[web]'" in done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert done.stdout == ""
    with subtests.test("bgai external --help"):  # last: the newest command
        done = _bgai(user, "external", "--help")
        assert done.returncode == 0, done.stderr
        assert "usage: bgai external" in done.stdout
    shutil.rmtree(user.venv)  # pytest keeps the temporary folders of the last three runs


def _install(tmp: Path) -> SimpleNamespace:
    """The wheel built from a copy of the repository, installed into a fresh virtual environment; a user's
    environment to run it in: a home of its own (the bear-off database is cached under it), no path into the
    repository, a working folder outside it."""
    source = _source_tree(tmp / "src")
    _run([sys.executable, "-m", "build", "--outdir", str(tmp / "dist"), str(source)])
    (wheel,) = (tmp / "dist").glob("*.whl")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    _run([python, "-m", "pip", "install", "--quiet", str(wheel)])
    env = {name: value for name, value in os.environ.items()
           if name not in ("PYTHONPATH", "VIRTUAL_ENV", "BGAI_CACHE_DIR", "XDG_CACHE_HOME", "NUMBA_CACHE_DIR")}
    env.update(HOME=str(tmp / "home"), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    work = tmp / "work"
    work.mkdir()
    site = Path(_run([python, "-c", "import bgai; print(bgai.__file__)"], cwd=work, env=env).stdout.strip()).parent
    return SimpleNamespace(wheel=wheel, source=source, venv=venv, env=env, work=work, home=tmp / "home", site=site)


def _source_tree(target: Path) -> Path:
    """The working tree as git sees it (tracked and untracked files, nothing ignored), copied to ``target``: the
    build writes build/ and bgai.egg-info/ into its source folder, and others may be using the repository's."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=False)
    if listed.returncode != 0:  # not a git checkout: everything but the usual ignored folders
        shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", "runs", "checkpoints"))
        return target
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is left out, as the build would
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def _run(command: list, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{command} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _bgai(user: SimpleNamespace, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    """``bgai ARGS`` of the installed wheel, run from the user's working folder."""
    return subprocess.run([user.venv / "bin" / "bgai", *args], input=stdin, capture_output=True, text=True,
                          cwd=user.work, env=user.env, timeout=300)


def _ranked(out: str) -> list[tuple[int, str, float]]:
    """(rank, play, equity) of each line of a hint (its columns: rank, play, ply, equity, difference)."""
    return [(int(rank), play, float(equity))
            for rank, play, equity in re.findall(r"^\s+(\d+)\. (\S.*?)\s+\d\s+([+-]\d+\.\d+)", out, re.M)]


def _check_contents(user: SimpleNamespace) -> None:
    names = set(zipfile.ZipFile(user.wheel).namelist())
    assert {name.split("/")[0] for name in names} == {"bgai", f"bgai-{VERSION}.dist-info"}  # no tests, benchmarks
    package = {path.relative_to(user.source).as_posix() for path in (user.source / "bgai").rglob("*")
               if path.is_file() and "__pycache__" not in path.parts}
    assert {name for name in names if name.startswith("bgai/")} == package
    assert set(SHIPPED) <= names


def _check_hint(user: SimpleNamespace) -> None:
    done = _bgai(user, "hint", START, "31", "--plies", "0")
    assert done.returncode == 0, done.stderr
    assert "16 legal plays of 31" in done.stdout
    ranked = _ranked(done.stdout)
    assert [rank for rank, _, _ in ranked] == list(range(1, 11))  # the top 10, then "... 6 more"
    assert ranked[0][1] == "8/5 6/5"
    assert [equity for _, _, equity in ranked] == sorted((equity for _, _, equity in ranked), reverse=True)


def _check_bearoff(user: SimpleNamespace) -> None:
    """Shipped in the package (bgai/data/bearoff-v1.npz): the first bear-off hint builds nothing and caches
    nothing."""
    done = _bgai(user, "hint", BEAROFF, "31")
    assert done.returncode == 0, done.stderr
    assert "building" not in done.stderr
    assert not (user.home / ".cache" / "bgai" / "bearoff-v1.npz").exists()
    assert (user.site / "data" / "bearoff-v1.npz").is_file()
    assert _ranked(done.stdout)[0][1] == "6/3 1/off"


def _check_play(user: SimpleNamespace) -> None:
    """With seed 1 bgai opens 52 and the user rolls 31: a hint, a play, quit; the match is saved where bgai runs."""
    done = _bgai(user, "play", "--seed", "1", "--save", "game.mat", stdin="r\nhint 3\n8/5 6/5\nq\n")
    assert done.returncode == 0, done.stderr
    assert "You rolled 31." in done.stdout
    assert "1. 8/5 6/5" in done.stdout  # the hint's best play
    assert "Saved the match to game.mat." in done.stdout
    assert "31: 8/5 6/5" in (user.work / "game.mat").read_text()
