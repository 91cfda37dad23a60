"""The ONNX export (bgai.eval.export, ``bgai export --onnx``): onnxruntime running the file gives bgai's own network
pass within 1e-5, on boards of every phase, for one net and for split ones; the file is the same bytes every
time; ``bgai.onnx_feeds`` makes its inputs; bad input is one clear line.
"""

import json
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime
import pytest

import bgai
from bgai.core.errors import BgaiError
from bgai.core.phase import BEAROFF, CONTACT, CRASHED, RACE, classify
from bgai.eval import export
from bgai.eval.bot import DEFAULT_NETWORKS, SHIPPED_NPZ
from bgai.eval.weights import ModelSnapshot, weight_shapes
from bgai.frontends.cli import main


@pytest.fixture(scope="module")
def boards():
    """Boards of games, with every phase a network sees."""
    sample = export.sample_boards(600, seed=3)
    assert set(classify(sample)) == {BEAROFF, RACE, CONTACT, CRASHED}, "the sample lacks a phase"
    return sample


def run(model, feeds):
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def random_snapshot(phases, hidden, seed=0):
    """A network of random weights, each net different: so that a row evaluated by the wrong net shows."""
    rng = np.random.default_rng(seed)
    weights = {key: rng.normal(0, 0.3, shape).astype(np.float32) for key, shape in
               weight_shapes(hidden, phases, 2).items()}
    return ModelSnapshot(hidden, phases, 2, weights)


# onnxruntime equals bgai -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("network", [None, SHIPPED_NPZ], ids=["fast-contact-race", "shipped-one-net"])
def test_onnxruntime_gives_bgais_probabilities_within_1e_5(network, boards):
    snapshot = export.snapshot_of(network)
    split = len(snapshot.phases) > 1
    ours = snapshot.board_probabilities(boards, classify(boards) if split else None)
    theirs = run(export.onnx_bytes(snapshot), bgai.onnx_feeds(boards, snapshot))
    assert theirs.shape == (len(boards), 5) and theirs.dtype == np.float32
    assert np.abs(theirs - ours).max() < 1e-5
    dense = snapshot.reference_probabilities(bgai.onnx_feeds(boards, snapshot)["inputs"], classify(boards))
    assert np.abs(theirs - dense).max() < 1e-5


@pytest.mark.parametrize("phases", [("all",), ("contact", "race"), ("race", "contact"), ("contact", "crashed", "race")])
def test_every_row_goes_through_the_net_of_its_phase(phases, boards):
    snapshot = random_snapshot(phases, (16, 8))
    phase = classify(boards)
    ours = snapshot.reference_probabilities(export.onnx_feeds(boards, snapshot)["inputs"], phase)
    theirs = run(export.onnx_bytes(snapshot), export.onnx_feeds(boards, snapshot))
    assert np.abs(theirs - ours).max() < 1e-5
    if len(phases) > 1:  # the nets differ: a wrong route would show
        other = snapshot.reference_probabilities(export.onnx_feeds(boards, snapshot)["inputs"],
                                                 np.full_like(phase, RACE))
        assert np.abs(theirs - other).max() > 1e-2


def test_an_empty_batch_and_one_board(boards):
    model = export.onnx_bytes()
    assert run(model, bgai.onnx_feeds(boards[:0])).shape == (0, 5)
    one = run(model, bgai.onnx_feeds(boards[7]))
    assert np.abs(one - run(model, bgai.onnx_feeds(boards[7:8]))).max() == 0


def test_the_outputs_are_cumulative_probabilities_for_the_player_on_roll(boards):
    p = run(export.onnx_bytes(), bgai.onnx_feeds(boards))
    assert ((p >= 0) & (p <= 1)).all()
    assert (p[:, 1] <= p[:, 0] + 1e-7).all() and (p[:, 2] <= p[:, 1] + 1e-7).all()  # gammons within wins
    assert (p[:, 3] <= 1 - p[:, 0] + 1e-7).all() and (p[:, 4] <= p[:, 3] + 1e-7).all()


# The file ---------------------------------------------------------------------------------------------------------


def test_the_file_is_the_same_bytes_every_time_and_says_what_it_holds(tmp_path):
    first, second = tmp_path / "a.onnx", tmp_path / "b.onnx"
    report = export.export_onnx(first, check=0)
    export.export_onnx(second, check=0)
    assert first.read_bytes() == second.read_bytes() == export.onnx_bytes()
    assert report["bytes"] == first.stat().st_size and report["inputs"] == ["inputs", "phase"]
    model = onnx.load(str(first))
    assert model.opset_import[0].version == export.OPSET
    meta = {prop.key: prop.value for prop in model.metadata_props}
    snapshot = ModelSnapshot.load_npz(DEFAULT_NETWORKS[0])[0]
    assert meta["bgai.encoder_version"] == str(snapshot.encoder_version)
    assert meta["bgai.nets"] == ",".join(snapshot.phases)
    assert meta["bgai.outputs"] == "win,win_gammon,win_backgammon,lose_gammon,lose_backgammon"
    assert [i.name for i in model.graph.input] == ["inputs", "phase"]
    assert [o.name for o in model.graph.output] == ["probabilities"]


def test_a_failed_check_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(export, "TOLERANCE", -1.0)
    path = tmp_path / "bgai.onnx"
    with pytest.raises(BgaiError, match="nothing written"):
        export.export_onnx(path, check=20)
    assert not path.exists() and list(tmp_path.iterdir()) == []


# The feeds --------------------------------------------------------------------------------------------------------


def test_feeds_are_the_encoders_features_and_the_phases(boards, tmp_path):
    feeds = bgai.onnx_feeds(boards)
    assert set(feeds) == {"inputs", "phase"}
    assert feeds["inputs"].dtype == np.float32 and feeds["inputs"].shape == (len(boards), 231)
    assert feeds["phase"].dtype == np.int64 and (feeds["phase"] == classify(boards)).all()
    assert set(bgai.onnx_feeds(boards, SHIPPED_NPZ)) == {"inputs"}  # one net: no phase
    path = tmp_path / "one.onnx"
    export.export_onnx(path, SHIPPED_NPZ, check=0)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for told in (path, str(path), session):  # read from the file's metadata
        assert set(bgai.onnx_feeds(boards, told)) == {"inputs"}


def test_import_bgai_stays_light_and_the_export_needs_no_torch(tmp_path):
    code = ("import sys, bgai; assert not {'bgai.eval.export', 'onnx', 'onnxruntime', 'torch', 'numba'} & "
            "set(sys.modules); bgai.onnx_feeds; assert 'bgai.eval.export' in sys.modules and 'onnx' not in sys.modules"
            f"; bgai.eval.export.export_onnx({str(tmp_path / 'x.onnx')!r}, check=50)"
            "; assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert (tmp_path / "x.onnx").read_bytes() == export.onnx_bytes()


@pytest.mark.parametrize("given, message", [
    (np.zeros((3, 25), dtype=np.int8), "N×26"),
    (np.zeros((2, 3, 26), dtype=np.int8), "N×26"),
    (np.zeros((1, 26)), "whole checker counts"),
    (np.full((1, 26), 40, dtype=np.int16), "at most 15"),
])
def test_bad_boards_are_one_clear_error(given, message):
    with pytest.raises(BgaiError, match=message):
        bgai.onnx_feeds(given)


def test_feeds_for_a_file_bgai_did_not_export(tmp_path):
    foreign = tmp_path / "foreign.onnx"
    model = onnx.load_from_string(export.onnx_bytes())
    del model.metadata_props[:]
    foreign.write_bytes(model.SerializeToString())
    with pytest.raises(BgaiError, match="not exported by bgai"):
        bgai.onnx_feeds(np.zeros((1, 26), dtype=np.int8), foreign)
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00not onnx at all" * 10)
    with pytest.raises(BgaiError, match="not a readable ONNX file"):
        bgai.onnx_feeds(np.zeros((1, 26), dtype=np.int8), garbage)
    with pytest.raises(BgaiError, match="no ONNX file"):
        bgai.onnx_feeds(np.zeros((1, 26), dtype=np.int8), tmp_path / "missing.onnx")


# The command ------------------------------------------------------------------------------------------------------


def test_bgai_export_writes_the_file_after_checking_it(tmp_path, capsys, boards):
    path = tmp_path / "bgai.onnx"
    assert main(["export", "--onnx", str(path), "--check", "200"]) == 0
    out = capsys.readouterr().out
    assert f"wrote {path}" in out and "onnxruntime agrees with bgai within" in out and "on 200 positions" in out
    ours = export.snapshot_of(None).board_probabilities(boards, classify(boards))
    assert np.abs(run(str(path), bgai.onnx_feeds(boards, path)) - ours).max() < 1e-5


def test_bgai_export_json_and_another_network(tmp_path, capsys):
    path = tmp_path / "shipped.onnx"
    assert main(["export", "--onnx", str(path), "--checkpoint", str(SHIPPED_NPZ), "--check", "100", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["inputs"] == ["inputs"] and report["positions"] == 100
    assert report["max_difference"] < 1e-5 and report["bytes"] == path.stat().st_size
    assert "all [512, 256]" in report["network"]


@pytest.mark.parametrize("argv, message", [
    (["--check", "-1"], "the check takes a number of positions >= 0"),
    (["--checkpoint", "missing.pt"], "no checkpoint file missing.pt"),
    (["--onnx-folder"], "is a folder"),
])
def test_bgai_export_bad_input_is_one_line_and_exit_status_2(tmp_path, capsys, argv, message):
    argv = ["--onnx", str(tmp_path)] if argv == ["--onnx-folder"] else ["--onnx", str(tmp_path / "x.onnx"), *argv]
    assert main(["export", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bgai export: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "x.onnx").exists()
