"""The notebook runs from top to bottom against the shipped bot."""

import json
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "bgai.ipynb"
TD0_NOTEBOOK = NOTEBOOK.with_name("td0_agent.ipynb")


def _code_cells(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def test_the_notebook_executes(monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    code = _code_cells(NOTEBOOK)
    assert len(code) >= 6
    namespace: dict = {}
    for i, source in enumerate(code):
        exec(compile(source, f"{NOTEBOOK.name} cell {i}", "exec"), namespace)
    assert namespace["summary"]["games"] == 200
    assert namespace["history"], "the shipped checkpoint carries its learning curve"
    assert namespace["turn"] > 0
    assert namespace["evaluation"].source == "exact"  # the bear-off database answered
    assert namespace["rollout"].equity.se > 0


def test_the_td0_notebook_trains_an_agent_and_benchmarks_it():
    """The TD(0) notebook at a tiny size: its first code cell holds the sizes, which the test shrinks after running
    it; the rest runs as stored."""
    import gymnasium
    import numpy as np

    code = _code_cells(TD0_NOTEBOOK)
    assert "TRAIN_GAMES =" in code[0] and "EVAL_GAMES =" in code[0]
    namespace: dict = {}
    for i, source in enumerate(code):
        exec(compile(source, f"{TD0_NOTEBOOK.name} cell {i}", "exec"), namespace)
        if i == 0:
            namespace.update(TRAIN_GAMES=6, EVAL_GAMES=4)
    value = namespace["value"]
    w1, w2 = namespace["start_weights"]
    assert not np.array_equal(value.W1, w1) and not np.array_equal(value.w2, w2), "TD(0) moved the weights"
    # Every play of training and benchmark was checked against the mask (the notebook asserts it), and there were
    # some: the winner of a game needs seven turns at least (167 pips, 24 a turn), so the agent plays six or more.
    assert namespace["decisions"] >= 6 * (6 + 3 * 4)
    results = namespace["results"]
    assert set(results) == {"random", "pubeval", "bgai"}
    for mean, se in results.values():
        assert np.isfinite(mean) and -3 <= mean <= 3
        assert np.isfinite(se) and se >= 0
    # The trained agent, on positions of its own games, picks a legal play, the one its network scores worst for
    # the opponent.
    env = gymnasium.make("bgai/Backgammon-v0", opponent="random", afterstates=True)
    obs, info = env.reset(seed=5)
    greedy, terminated = namespace["greedy"], False
    while not terminated:
        action = greedy(obs, info)
        assert obs["action_mask"][action] == 1
        assert np.isclose(value(info["afterstates"][action]), value(info["afterstates"]).min())
        obs, _, terminated, _, info = env.step(action)
    assert not info["illegal_action"]


@pytest.mark.parametrize("path", [NOTEBOOK, TD0_NOTEBOOK], ids=lambda p: p.name)
def test_the_notebook_is_stored_with_its_outputs(path):
    """Each code cell's output is in the file, so the notebook reads on GitHub without running it. After changing it:
    pip install 'bgai[notebook]'; jupyter nbconvert --execute --to notebook --inplace notebooks/<name>.ipynb."""
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    assert all(c.get("outputs") for c in cells), "run the notebook and save it with its outputs"
    text = json.dumps(cells)
    assert "Traceback" not in text and "/work/" not in text and "/home/" not in text  # no errors, no local paths

