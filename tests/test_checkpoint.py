"""Network files are checked before they are trusted: corrupted or crafted checkpoints (``.pt``) and play files
(``.npz``) are refused with ``CheckpointError``, fast and without allocating the network they declare; whatever
loads is the network that was saved; ``bgai export --network`` writes one network, the mean of several, or a run's
moving average, and refuses what it cannot do in one line."""

from __future__ import annotations

import io
import json
import resource
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from bgai.core.errors import BgaiError
from bgai.core.phase import BEAROFF, CONTACT, CRASHED, RACE, reference_classify
from bgai.eval import encoding
from bgai.eval.bot import SHIPPED_NPZ, load_bot
from bgai.eval.checkpoint import (
    CheckpointError,
    load_checkpoint,
    model_payload,
    save_checkpoint,
    snapshot_from_checkpoint,
)
from bgai.eval.network import EquityModel
from bgai.eval.weights import MAX_HIDDEN, PROBE_BOARDS, ModelSnapshot, content_hash
from bgai.frontends.cli import main

ROOT = Path(__file__).resolve().parents[1]


def small_model(hidden=(8, 4), phases=("contact", "race")) -> EquityModel:
    torch.manual_seed(0)
    return EquityModel.create(hidden, phases)


def crafted_pt(path: Path, payload, signed: bool = True) -> Path:
    """``payload`` written as a checkpoint as someone who knows the format would (with a valid sha256 when
    ``signed``), so that only the structural checks can refuse it."""
    if signed and isinstance(payload, dict):
        payload = {**payload, "sha256": content_hash({k: v for k, v in payload.items() if k != "sha256"})}
    torch.save(payload, path)
    return path


def crafted_npz(path: Path, meta: dict, weights: dict, signed: bool = True) -> Path:
    """A ``.npz`` of ``meta`` and ``weights`` as ``ModelSnapshot.save_npz`` lays it out, with a valid sha256 when
    ``signed``."""
    if signed:
        meta = {**meta, "sha256": content_hash({"meta": meta, "weights": weights})}
    np.savez(path, __meta__=np.array(json.dumps(meta)), **weights)
    return path


@pytest.fixture
def payload() -> dict:
    return {"format": 2, **model_payload(small_model())}


@pytest.fixture
def npz_parts() -> tuple[dict, dict]:
    snapshot = ModelSnapshot.of(small_model())
    meta = {"format": 1, "hidden": [8, 4], "phases": ["contact", "race"], "encoder_version": 2, "info": {}}
    return meta, snapshot.weights


# The hash ------------------------------------------------------------------------------------------------------


def test_a_saved_checkpoint_carries_the_sha256_of_its_contents_and_loads_back_the_same(tmp_path):
    model = small_model()
    path = tmp_path / "c.pt"
    save_checkpoint(path, {**model_payload(model), "games": 3})
    raw = torch.load(path, weights_only=True)
    assert raw["sha256"] == content_hash({k: v for k, v in raw.items() if k != "sha256"})
    payload = load_checkpoint(path)
    assert "sha256" not in payload and payload["games"] == 3
    assert snapshot_from_checkpoint(payload).weights.keys() == model.state_dict().keys()
    for key, value in model.state_dict().items():
        assert torch.equal(payload["model"][key], value)
    save_checkpoint(path, payload)  # saved again, it gets the hash of what it holds now
    assert load_checkpoint(path)["games"] == 3


def test_a_checkpoint_whose_weights_changed_after_it_was_written_is_refused_as_corrupted(tmp_path, payload):
    signed = crafted_pt(tmp_path / "c.pt", payload)
    raw = torch.load(signed, weights_only=True)
    raw["model"]["nets.race.head.bias"][0] += 1e-3  # a finite change the shape and value checks cannot see
    torch.save(raw, signed)
    with pytest.raises(CheckpointError, match=f"{signed} is corrupted"):
        load_checkpoint(signed)


def test_an_npz_whose_weights_changed_after_it_was_written_is_refused_as_corrupted(tmp_path, npz_parts):
    meta, weights = npz_parts
    path = tmp_path / "n.npz"
    ModelSnapshot(meta["hidden"], meta["phases"], 2, weights).save_npz(path)
    stored = dict(np.load(path))
    stored["nets.contact.body.0.weight"][3, 7] += 1e-3
    np.savez(path, **stored)
    with pytest.raises(CheckpointError, match=f"{path} is corrupted"):
        load_bot(path)


def test_files_written_before_the_hash_still_load_with_every_other_check(tmp_path, payload, npz_parts):
    legacy = crafted_pt(tmp_path / "legacy.pt", payload, signed=False)
    assert load_bot(legacy).model.phases == ("contact", "race")
    meta, weights = npz_parts
    assert load_bot(crafted_npz(tmp_path / "legacy.npz", meta, weights, signed=False)).model.hidden == (8, 4)
    payload["model"]["nets.contact.body.0.bias"][0] = float("nan")
    with pytest.raises(CheckpointError, match="finite"):
        load_checkpoint(crafted_pt(tmp_path / "nan.pt", payload, signed=False))


def test_every_network_file_the_repository_ships_carries_its_hash():
    # (bgai/data/bearoff-v1.npz is the bear-off database, not a network: bgai.eval.bearoff checks its own checksum)
    networks = [p for p in ROOT.glob("bgai/data/*.npz") if not p.name.startswith("bearoff")]
    files = [*ROOT.glob("bgai/data/*.pt"), *networks, *ROOT.glob("checkpoints/**/*.pt")]
    assert len(files) >= 3
    for path in files:
        if path.suffix == ".pt":
            assert "sha256" in torch.load(path, weights_only=True), path
            load_checkpoint(path)
        else:
            with np.load(path) as stored:
                assert "sha256" in json.loads(str(stored["__meta__"])), path
            ModelSnapshot.load_npz(path)


def test_every_kind_of_network_the_repository_ships_plays_legal_moves():
    """The shipped network, its pruning net's bot, the 512-256 run it was distilled from and every experiment
    (TD, lookahead generations, students): each loads and plays a legal move of a few (position, roll) pairs."""
    from bgai.eval.bot import load_bot
    from bgai.formats.position import Position

    files = [None, *sorted(ROOT.glob("checkpoints/**/*.pt"))]
    positions = [Position.start(), Position.from_points({6: 3, 5: 3, 1: 2, "bar": 1}, {24: 2, 20: 3, 19: 4})]
    for path in files:
        bot = load_bot(path, plies=1 if path is None else 0)
        for pos in positions:
            for dice in ((6, 5), (2, 2), (3, 1)):
                legal = {m.after for m in pos.legal_moves(dice)}
                assert bot.choose_move(pos, dice).after in legal, (path, pos, dice)


def test_save_refuses_entries_a_checkpoint_may_not_have(tmp_path, payload):
    with pytest.raises(ValueError, match="no entries"):
        save_checkpoint(tmp_path / "c.pt", {**payload, "notes": "x"})


# Crafted checkpoints --------------------------------------------------------------------------------------------


def _model_with(payload: dict, key: str, value) -> dict:
    return {**payload, "model": {**payload["model"], key: value}}


def _without(payload: dict, key: str) -> dict:
    return {k: v for k, v in payload.items() if k != key}


CRAFTED_PT = {
    "negative hidden size": lambda p: {**p, "hidden": [-5, 4]},
    "zero hidden size": lambda p: {**p, "hidden": [0, 4]},
    "huge hidden sizes": lambda p: {**p, "hidden": [10**7, 10**7]},
    "hidden size over the maximum": lambda p: {**p, "hidden": [MAX_HIDDEN + 1, 4]},
    "too many layers": lambda p: {**p, "hidden": [8] * 100},
    "a string hidden size": lambda p: {**p, "hidden": ["8", 4]},
    "a float hidden size": lambda p: {**p, "hidden": [8.0, 4]},
    "a bool hidden size": lambda p: {**p, "hidden": [True, 4]},
    "hidden not a list": lambda p: {**p, "hidden": 8},
    "phases a number": lambda p: {**p, "phases": 5},
    "phases a string": lambda p: {**p, "phases": "all"},
    "unknown phases": lambda p: {**p, "phases": ["contact", "crashed"]},
    "a phase twice": lambda p: {**p, "phases": ["all", "all"]},
    "phases that disagree with the weights": lambda p: {**p, "phases": ["all"]},
    "an unknown encoder version": lambda p: {**p, "encoder_version": 9},
    "a string encoder version": lambda p: {**p, "encoder_version": "2"},
    "a float encoder version": lambda p: {**p, "encoder_version": 2.0},
    "a huge input width": lambda p: {**p, "n_inputs": 10**9},
    "a string input width": lambda p: {**p, "n_inputs": str(p["n_inputs"])},
    "an unknown format": lambda p: {**p, "format": 3},
    "a string format": lambda p: {**p, "format": "2"},
    "format 1 with two nets": lambda p: {**p, "format": 1},
    "hidden sizes that disagree with the weights": lambda p: {**p, "hidden": [16, 4]},
    "a missing weight": lambda p: {**p, "model": _without(p["model"], "nets.race.head.bias")},
    "an extra weight": lambda p: _model_with(p, "nets.race.extra", torch.zeros(3)),
    "a float64 weight": lambda p: _model_with(p, "nets.race.head.bias", torch.zeros(5, dtype=torch.float64)),
    "an int weight": lambda p: _model_with(p, "nets.race.head.bias", torch.zeros(5, dtype=torch.int32)),
    "a weight of the wrong shape": lambda p: _model_with(p, "nets.race.head.weight", torch.zeros(4, 5)),
    "a weight of the wrong rank": lambda p: _model_with(p, "nets.race.head.weight", torch.zeros(20)),
    "a 0-d weight": lambda p: _model_with(p, "nets.race.head.bias", torch.tensor(0.0)),
    "a weight that is a list": lambda p: _model_with(p, "nets.race.head.bias", [0.0] * 5),
    "a model that is a tensor": lambda p: {**p, "model": torch.zeros(3)},
    "a model that is a list": lambda p: {**p, "model": list(p["model"].values())},
    "a NaN weight": lambda p: _model_with(p, "nets.race.head.bias", torch.tensor([0, float("nan"), 0, 0, 0.0])),
    "an infinite weight": lambda p: _model_with(p, "nets.contact.body.0.bias", torch.full((8,), float("inf"))),
    "play weights of another shape": lambda p: {**p, "play_weights": {"nets.all.head.bias": torch.zeros(5)}},
    "a missing model": lambda p: _without(p, "model"),
    "a missing hidden": lambda p: _without(p, "hidden"),
    "an extra entry": lambda p: {**p, "backdoor": 1},
    "games a string": lambda p: {**p, "games": "many"},
    "history a dict": lambda p: {**p, "history": {}},
    "a payload that is a list": lambda p: [p],
    "a payload that is a tensor": lambda p: torch.zeros(3),
    "a payload that is a number": lambda p: 7,
    "an object weights_only refuses": lambda p: {**p, "config": Path("x")},
}


@pytest.mark.parametrize("case", CRAFTED_PT)
def test_a_crafted_checkpoint_is_refused_with_checkpoint_error(tmp_path, payload, case):
    path = crafted_pt(tmp_path / "crafted.pt", CRAFTED_PT[case](payload))
    with pytest.raises(CheckpointError, match=str(path)):
        load_checkpoint(path)
    with pytest.raises(CheckpointError):
        load_bot(path)


def test_huge_declared_sizes_fail_at_once_without_allocating(tmp_path, payload):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    for hidden in ([10**7, 10**7], [60_000, 60_000], [MAX_HIDDEN] * 50):
        path = crafted_pt(tmp_path / "huge.pt", {**payload, "hidden": hidden})
        with pytest.raises(CheckpointError, match="hidden layers"):
            load_bot(path)
    assert time.perf_counter() - start < 2
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB: nothing near a network


def test_a_network_whose_outputs_are_not_probabilities_is_refused(tmp_path, payload):
    # Finite weights near float32's largest overflow the hidden units to inf, and a head of mixed signs turns them
    # into inf - inf = NaN
    state = {key: torch.full_like(value, 3e38) for key, value in payload["model"].items()}
    for key in ("nets.contact.head.weight", "nets.race.head.weight"):
        state[key][:, 1::2] = -3e38
    path = crafted_pt(tmp_path / "overflow.pt", {**payload, "model": state})
    with pytest.raises(CheckpointError, match="not probabilities"):
        load_checkpoint(path)
    snapshot = ModelSnapshot(payload["hidden"], payload["phases"], 2, {k: v.numpy() for k, v in state.items()})
    npz = tmp_path / "overflow.npz"
    snapshot.save_npz(npz)
    with pytest.raises(CheckpointError, match="not probabilities"):
        ModelSnapshot.load_npz(npz)


def test_the_probe_positions_try_every_net_of_a_split_model():
    assert sorted(reference_classify(PROBE_BOARDS)) == [BEAROFF, RACE, CONTACT, CRASHED]
    assert (np.abs(PROBE_BOARDS).sum(axis=1) == 30).all() and (PROBE_BOARDS.clip(0).sum(axis=1) == 15).all()


# Crafted npz files ----------------------------------------------------------------------------------------------


CRAFTED_META = {
    "negative hidden size": {"hidden": [-5, 4]},
    "huge hidden sizes": {"hidden": [10**7, 10**7]},
    "too many layers": {"hidden": [8] * 100},
    "a float hidden size": {"hidden": [8.0, 4]},
    "hidden sizes that disagree with the weights": {"hidden": [16, 4]},
    "phases a number": {"phases": 5},
    "unknown phases": {"phases": ["contact", "crashed"]},
    "a crashed net that the weights lack": {"phases": ["contact", "crashed", "race"]},
    "phases that disagree with the weights": {"phases": ["all"]},
    "an unknown encoder version": {"encoder_version": 9},
    "a string encoder version": {"encoder_version": "2"},
    "an unknown format": {"format": 2},
    "an extra meta entry": {"backdoor": 1},
    "info not a dict": {"info": [1]},
}


@pytest.mark.parametrize("case", CRAFTED_META)
def test_an_npz_with_a_crafted_meta_is_refused_with_checkpoint_error(tmp_path, npz_parts, case):
    meta, weights = npz_parts
    path = crafted_npz(tmp_path / "crafted.npz", {**meta, **CRAFTED_META[case]}, weights)
    with pytest.raises(CheckpointError, match=str(path)):
        load_bot(path)


CRAFTED_WEIGHTS = {
    "a missing weight": lambda w: {k: v for k, v in w.items() if k != "nets.race.head.bias"},
    "an extra weight": lambda w: {**w, "nets.race.extra": np.zeros(3, np.float32)},
    "a float64 weight": lambda w: {**w, "nets.race.head.bias": np.zeros(5)},
    "a big-endian weight": lambda w: {**w, "nets.race.head.bias": np.zeros(5, ">f4")},
    "a Fortran-order weight": lambda w: {**w, "nets.race.head.weight": np.asfortranarray(w["nets.race.head.weight"])},
    "a weight of the wrong rank": lambda w: {**w, "nets.race.head.weight": np.zeros(20, np.float32)},
    "an object weight": lambda w: {**w, "nets.race.head.bias": np.array([object()] * 5, dtype=object)},
    "an infinite weight": lambda w: {**w, "nets.race.head.bias": np.full(5, np.inf, np.float32)},
}


@pytest.mark.parametrize("case", CRAFTED_WEIGHTS)
def test_an_npz_with_crafted_weights_is_refused_with_checkpoint_error(tmp_path, npz_parts, case):
    meta, weights = npz_parts
    changed = CRAFTED_WEIGHTS[case](weights)
    path = crafted_npz(tmp_path / "crafted.npz", meta, changed, signed=case != "an object weight")
    with pytest.raises(CheckpointError, match=str(path)):
        ModelSnapshot.load_npz(path)


def _npy_header(shape, dtype="<f4") -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": dtype, "fortran_order": False, "shape": shape})
    return out.getvalue()


def test_an_npz_member_that_declares_a_huge_array_is_refused_before_it_is_read(tmp_path, npz_parts):
    meta, weights = npz_parts
    path = crafted_npz(tmp_path / "huge.npz", meta, weights)
    # the same file with one member declaring (10^6, 10^6) float32 (4 TB), and a meta string declaring 1 GB
    for name, header in (("nets.race.head.weight.npy", _npy_header((10**6, 10**6))),
                         ("__meta__.npy", _npy_header((), "<U250000000"))):
        rebuilt = tmp_path / "rebuilt.npz"
        with zipfile.ZipFile(path) as source, zipfile.ZipFile(rebuilt, "w") as target:
            for info in source.infolist():
                target.writestr(info.filename, header + b"\0" * 64 if info.filename == name else source.read(info))
        start = time.perf_counter()
        with pytest.raises(CheckpointError, match="not a readable bgai network"):
            ModelSnapshot.load_npz(rebuilt)
        assert time.perf_counter() - start < 1


def test_foreign_and_missing_files_are_refused_with_checkpoint_error(tmp_path):
    for name, data in (("empty.npz", b""), ("text.npz", b"hello"), ("empty.pt", b""), ("text.pt", b"hello")):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(CheckpointError, match="not a readable"):
            load_bot(tmp_path / name)
    with pytest.raises(CheckpointError, match="no network file"):
        ModelSnapshot.load_npz(tmp_path / "none.npz")
    assert issubclass(CheckpointError, BgaiError) and issubclass(CheckpointError, ValueError)


# Random corruptions ---------------------------------------------------------------------------------------------


def _contents(path: Path) -> str:
    if path.suffix == ".npz":
        snapshot, info = ModelSnapshot.load_npz(path)
        return content_hash([snapshot.hidden, snapshot.phases, snapshot.weights, info])
    payload = load_checkpoint(path)
    return content_hash([payload, snapshot_from_checkpoint(payload).weights])


@pytest.mark.parametrize("suffix", [".pt", ".npz"])
def test_random_corruptions_are_refused_or_load_the_very_same_network(tmp_path, suffix):
    model = small_model((32, 16))
    original = tmp_path / f"original{suffix}"
    if suffix == ".pt":
        save_checkpoint(original, {**model_payload(model), "games": 64, "history": [{"step": 1}],
                                   "torch_rng": torch.get_rng_state()})
    else:
        ModelSnapshot.of(model).save_npz(original, info={"games": 64})
    data, expected = original.read_bytes(), _contents(original)
    members = [info.header_offset for info in zipfile.ZipFile(original).infolist()]
    rng = np.random.default_rng(2024)
    outcomes = {"refused": 0, "identical": 0}
    target = tmp_path / f"corrupt{suffix}"
    for i in range(300):
        at = int(rng.integers(len(data))) if i % 2 else \
            int(min(members[rng.integers(len(members))] + rng.integers(200), len(data) - 1))
        corrupted = bytearray(data)
        if i % 5 == 4:
            del corrupted[at:]
        else:
            corrupted[at] ^= 1 << int(rng.integers(8))
        target.write_bytes(bytes(corrupted))
        try:
            assert _contents(target) == expected, f"corruption {i} at byte {at} loaded a different network"
            outcomes["identical"] += 1
        except CheckpointError as error:
            assert str(target) in str(error)
            outcomes["refused"] += 1
    assert outcomes["refused"] > 200


def test_the_shipped_network_still_loads_and_plays():
    bot = load_bot()
    probs = bot.probabilities(PROBE_BOARDS)
    assert probs.shape == (len(PROBE_BOARDS), 5) and np.isfinite(probs).all()
    td = load_bot(ROOT / "checkpoints" / "td-v1" / "checkpoint.pt")
    assert td.model.encoder_version == 1 and td.model.n_inputs == encoding.n_features(1)


def _saved_network(path, hidden, seed, **entries):
    """A checkpoint of a small network of seeded random weights, with extra ``entries``."""
    torch.manual_seed(seed)
    model = EquityModel.create(hidden, ("all",), 0)
    save_checkpoint(path, {**model_payload(model), "games": 100 * seed, **entries})
    return model.state_dict()


def test_bgai_export_network_writes_one_network_a_mean_of_several_or_a_runs_moving_average(tmp_path, capsys):
    a = _saved_network(tmp_path / "a.pt", (8, 4), 1, history=[{"games": 100}], optimizer={"state": {}}, step=3)
    b = _saved_network(tmp_path / "b.pt", (8, 4), 2)
    moving = {key: value * 0.5 for key, value in b.items()}
    _saved_network(tmp_path / "run.pt", (8, 4), 3, average=moving)
    # One network: its weights, games and history, no training state
    assert main(["export", "--network", str(tmp_path / "one.pt"), "--checkpoint", str(tmp_path / "a.pt")]) == 0
    one = load_checkpoint(tmp_path / "one.pt")
    assert all(torch.equal(one["model"][k], a[k]) for k in a) and one["history"] == [{"games": 100}]
    assert one["games"] == 100 and "optimizer" not in one and "step" not in one
    assert "wrote" in capsys.readouterr().out
    # Several: the mean of their weights, the most games, no history (their benchmarks are not the mean's)
    assert main(["export", "--network", str(tmp_path / "mean.pt"), "--checkpoint", str(tmp_path / "a.pt"),
                 "--checkpoint", str(tmp_path / "b.pt"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["hidden"] == [8, 4] and report["games"] == 200 and report["average"] is False
    mean = load_checkpoint(tmp_path / "mean.pt")
    for key in a:
        torch.testing.assert_close(mean["model"][key], (a[key] + b[key]) / 2)
    assert "history" not in mean and load_bot(tmp_path / "mean.pt").model.hidden == (8, 4)
    # A run's moving average of its weights
    assert main(["export", "--network", str(tmp_path / "avg.pt"), "--checkpoint", str(tmp_path / "run.pt"),
                 "--average"]) == 0
    averaged = load_checkpoint(tmp_path / "avg.pt")["model"]
    assert all(torch.equal(averaged[k], moving[k]) for k in moving)
    capsys.readouterr()


@pytest.mark.parametrize("argv, message", [
    (["--network", "out.pt"], "--network needs the --checkpoint"),
    (["--network", "out.pt", "--checkpoint", "a.pt", "--average"], "keeps no moving average of its weights"),
    (["--network", "out.pt", "--checkpoint", "a.pt", "--checkpoint", "wide.pt"], "of another shape"),
    (["--network", "out.pt", "--onnx", "x.onnx", "--checkpoint", "a.pt"], "name one file to write"),
    (["--checkpoint", "a.pt"], "name one file to write"),
    (["--onnx", "x.onnx", "--checkpoint", "a.pt", "--checkpoint", "a.pt"], "--onnx exports one network"),
    (["--onnx", "x.onnx", "--checkpoint", "a.pt", "--average"], "--onnx exports one network"),
    (["--network", "a.pt", "--checkpoint", "a.pt", "--average"], "is one of the checkpoints the network is made"),
    (["--network", ".", "--checkpoint", "a.pt"], "is a folder"),
    (["--network", "out.pt", "--checkpoint", "net.npz"], "is not a readable bgai checkpoint"),
])
def test_bgai_export_network_bad_input_is_one_line(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    _saved_network(tmp_path / "a.pt", (8, 4), 1)
    _saved_network(tmp_path / "wide.pt", (16, 4), 2)
    (tmp_path / "net.npz").write_bytes(SHIPPED_NPZ.read_bytes())
    before = (tmp_path / "a.pt").read_bytes()
    assert main(["export", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bgai export: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "out.pt").exists() and not (tmp_path / "x.onnx").exists()
    assert (tmp_path / "a.pt").read_bytes() == before
