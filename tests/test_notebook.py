"""The notebook runs from top to bottom against the shipped bot."""

import json
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "bgai.ipynb"


def test_the_notebook_executes(monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert len(code) >= 6
    namespace: dict = {}
    for i, source in enumerate(code):
        exec(compile(source, f"{NOTEBOOK.name} cell {i}", "exec"), namespace)
    assert namespace["summary"]["games"] == 200
    assert namespace["history"], "the shipped checkpoint carries its learning curve"
    assert namespace["turn"] > 0
    assert namespace["evaluation"].source == "exact"  # the bear-off database answered
    assert namespace["rollout"].equity.se > 0


def test_the_notebook_is_stored_with_its_outputs():
    """Each code cell's output is in the file, so the notebook reads on GitHub without running it. After changing it:
    pip install 'bgai[notebook]'; jupyter nbconvert --execute --to notebook --inplace notebooks/bgai.ipynb."""
    cells = [c for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]
    assert all(c.get("outputs") for c in cells), "run the notebook and save it with its outputs"
    text = json.dumps(cells)
    assert "Traceback" not in text and "/work/" not in text and "/home/" not in text  # no errors, no local paths

