"""The package's shape, enforced: bgai's modules import one another without a cycle (counting the imports made
inside functions, which run as surely as the ones at the top), and each layer imports only the layers below it.

The layers, lowest first (``docs/architecture.md`` draws them):

- ``bgai._version``: the version, written once;
- ``bgai.core``: the rules on boards, the turn loop, the cube's and match's rules, the compiled rules' kernels;
- ``bgai.players``: the simple players (random, heuristic, pubeval, gnubg's as an opponent);
- ``bgai.formats``: ``Position`` and ``Move``, Position IDs, XGID, FIBS, SVG, match files;
- ``bgai.eval``: the encoder, the network's weights, the bot, bear-offs, rollouts, the ONNX export;
- ``bgai.train``: the training config, its run and state, the learner, self-play, one module a training method
  (TD(lambda), lookahead, rollouts; none imports another), the label shards;
- ``bgai.play`` and ``bgai.envs``: the game session, analysis and report, other people's agents, the environments;
- ``bgai.frontends``: the command line, the terminal, the web server, the external player and UBGI;
- ``bgai.coach``: the measuring library, which the engine never imports.

``bgai`` itself (``from bgai import Position, load_bot``) is the front door: it imports the layers, and no module
of the package imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "bgai"

LAYERS = (
    ("bgai._version",),
    ("bgai.core",),
    ("bgai.players",),
    ("bgai.formats",),
    ("bgai.eval",),
    ("bgai.train",),
    ("bgai.play", "bgai.envs"),
    ("bgai.frontends",),
    ("bgai.coach",),
)


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


MODULES = _modules()


def _owner(name: str) -> str:
    """The module ``name`` (a dotted import target) is in: itself, or the package it names a member of."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def imports_of(module: str) -> set[str]:
    """The bgai modules ``module`` imports anywhere in its source: at the top, in functions, in ``TYPE_CHECKING``
    blocks. ``from bgai.x import y`` imports the module ``bgai.x.y`` when there is one, else ``bgai.x``."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            members = [f"{base}.{alias.name}" for alias in node.names]
            targets = [m for m in members if m in MODULES]
            if len(targets) < len(members):
                targets.append(base)
        else:
            continue
        found |= {_owner(t) for t in targets if t == "bgai" or t.startswith("bgai.")}
    return found - {module, ""}


GRAPH = {module: imports_of(module) for module in MODULES}


def _rank(module: str) -> int | None:
    for rank, layer in enumerate(LAYERS):
        if any(module == top or module.startswith(top + ".") for top in layer):
            return rank
    return None


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_graph_sees_the_imports_inside_functions():
    # (a reader that missed these would pass any cycle made of them)
    assert "bgai.eval.rollout" in GRAPH["bgai.eval.bot"]  # imported in Bot.cube_decision's rollout branch
    assert "bgai.core.kernels" in GRAPH["bgai.core.movegen"]  # imported where the compiled generator first runs
    assert "bgai.eval.bot" in GRAPH["bgai"]  # load_bot, on first use


def test_no_module_imports_another_that_imports_it_back():
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_every_module_is_in_a_layer():
    assert not [m for m in MODULES if m != "bgai" and _rank(m) is None]


@pytest.mark.parametrize("layer", [top for layer in LAYERS for top in layer])
def test_a_layer_imports_only_the_layers_below_it(layer):
    rank = LAYERS.index(next(lay for lay in LAYERS if layer in lay))
    upward = sorted(f"{m} -> {t}" for m in GRAPH if m == layer or m.startswith(layer + ".")
                    for t in GRAPH[m] if t == "bgai" or (_rank(t) or 0) > rank
                    or (t != m and _rank(t) == rank and not (t == layer or t.startswith(layer + "."))))
    assert not upward, f"{layer} imports from above itself (or the front door, or its neighbour): {upward}"


#: The training methods (``bgai.train.run.METHODS``): one module each, none importing another.
METHODS = ("bgai.train.td", "bgai.train.lookahead", "bgai.train.rollouts")


def test_no_training_method_imports_another():
    crossed = sorted(f"{m} -> {t}" for m in METHODS for t in GRAPH[m] if t in METHODS)
    assert not crossed, f"training methods import one another: {crossed}"


def test_every_training_method_has_its_module_and_its_settings():
    from bgai.train.config import STAGES
    from bgai.train.run import METHODS as TRAINS

    assert set(STAGES) == set(TRAINS) == {m.rpartition(".")[2] for m in METHODS}
    assert all(TRAINS[name].__module__ == f"bgai.train.{name}" for name in TRAINS)


def test_the_training_config_and_bgai_train_help_import_no_torch():
    import subprocess
    import sys

    script = ("import sys\nfrom bgai.train import config\nfrom bgai.frontends.cli import build_parser\n"
              "build_parser(train_settings=True).parse_args(['train', '--games', '5'])\n"
              "assert 'torch' not in sys.modules, 'torch was imported'\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
