"""The network played in numpy (bgai.eval.weights): the same values as torch's, the shipped file, bad files, no
torch."""

import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from bgai.core.errors import BgaiError
from bgai.core.game import play_games
from bgai.core.phase import CONTACT, CRASHED, RACE, classify
from bgai.eval import encoding
from bgai.eval.bot import SHIPPED, SHIPPED_NPZ, Bot, load_bot
from bgai.eval.checkpoint import load_checkpoint, model_from_checkpoint
from bgai.eval.network import EquityModel
from bgai.eval.weights import ModelSnapshot
from bgai.formats.position import Position
from bgai.players.base import RandomPlayer

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def boards() -> np.ndarray:
    """Afterstates of random games: contact, races, bear-offs, finished games."""

    class Recorder(RandomPlayer):
        seen = []

        def choose(self, boards, after, owner, rng, dice=None):
            self.seen.append(after)
            return super().choose(boards, after, owner, rng, dice)

    play_games(Recorder(), Recorder(), 30, seed=11)
    return np.concatenate(Recorder.seen)


@pytest.mark.parametrize("phases", [("all",), ("contact", "race"), ("contact", "crashed", "race")])
def test_the_numpy_pass_gives_the_torch_model_s_probabilities(phases, boards):
    model = EquityModel.create((32, 16), phases).eval()
    x = encoding.encode(boards)
    with torch.inference_mode():
        expected = model(torch.from_numpy(x), torch.from_numpy(classify(boards))).numpy()
    got = ModelSnapshot.of(model).probabilities(x, classify(boards))
    assert got.dtype == np.float32 and got.shape == (len(boards), 5)
    np.testing.assert_allclose(got, expected, atol=2e-6)
    # And a bot of the snapshot evaluates as a bot of the torch model
    np.testing.assert_allclose(Bot(ModelSnapshot.of(model)).probabilities(boards), Bot(model).probabilities(boards),
                               atol=2e-6)
    # Batches of one phase alone (one net answers them all, without routing) give the same rows
    phase = classify(boards)
    assert {RACE, CONTACT, CRASHED} <= set(np.unique(phase))  # every net of each set is tried
    for which in np.unique(phase):
        rows = phase == which
        np.testing.assert_allclose(ModelSnapshot.of(model).probabilities(x[rows], phase[rows]), expected[rows],
                                   atol=2e-6)


@pytest.mark.parametrize("hidden", [(64,), (48, 16)])
def test_the_incremental_first_layer_gives_the_dense_product_s_values(hidden, boards):
    """bgai.eval.kernels.first_layer computes each row from the inputs changed since the row before, or afresh: in
    the games' order (neighbours alike), shuffled (unalike), with repeated and all-zero rows, it gives the dense
    product's values."""
    torch.manual_seed(3)
    snapshot = ModelSnapshot.of(EquityModel.create(hidden, ("all",)))
    x = encoding.encode(boards)
    shuffled = x[np.random.default_rng(0).permutation(len(x))]
    odd = np.concatenate([x[:5], x[:5], np.zeros((3, x.shape[1]), np.float32), x[5:9], x[8:9].repeat(40, axis=0)])
    for inputs in (x, shuffled, odd):
        dense = snapshot.reference_probabilities(inputs)
        np.testing.assert_allclose(snapshot.probabilities(inputs), dense, atol=2e-6)
    (w, b), *_ = snapshot._net_layers()[0]
    from bgai.eval import kernels

    h = np.empty((len(x), w.shape[1]), np.float32)
    kernels.first_layer(x, w, b, h)
    np.testing.assert_allclose(h, np.maximum(x @ w + b, 0), atol=2e-6, rtol=1e-6)


@pytest.mark.parametrize("features, hidden", [(512, 256), (64, 5), (7, 33)])
def test_the_sparse_layer_gives_the_dense_product_s_values_two_rows_at_a_time(features, hidden):
    """bgai.eval.kernels.sparse_layer sums two rows at a time over the entries nonzero in either: with an odd last
    row, rows all zero, pairs of which one is zero and pairs alike or not, it gives the dense product's values,
    and each row the value it has alone."""
    from bgai.eval import kernels

    rng = np.random.default_rng(8)
    w = rng.normal(0, 0.2, (features, hidden)).astype(np.float32)
    b = rng.normal(0, 0.2, hidden).astype(np.float32)
    h = np.maximum(rng.normal(0, 1, (15, features)), 0) * (rng.random((15, features)) < 0.2)
    h[3] = 0  # a zero row paired with a nonzero one
    h[6:8] = 0  # a zero pair
    h[9] = h[8] * (rng.random(features) < 0.7)  # neighbours alike, as a move's boards are
    h = np.ascontiguousarray(h, dtype=np.float32)
    dense = np.maximum(h.astype(np.float64) @ w + b, 0)
    for rows in (slice(0, 15), slice(0, 14), slice(1, 2)):  # 15 rows (an odd last one), 14, one
        out = np.full((len(h[rows]), hidden), np.nan, dtype=np.float32)
        kernels.sparse_layer(h[rows], w, b, out)
        np.testing.assert_allclose(out, dense[rows], atol=2e-5)
    out, alone = np.empty((len(h), hidden), np.float32), np.empty((1, hidden), np.float32)
    kernels.sparse_layer(h, w, b, out)
    for i in range(len(h)):
        kernels.sparse_layer(h[i:i + 1], w, b, alone)
        np.testing.assert_allclose(out[i], alone[0], atol=1e-6)


@pytest.mark.parametrize("hidden, phases", [((64,), ("all",)), ((24, 8), ("contact", "race"))])
def test_a_version_0_net_s_first_layer_summed_from_the_cells_gives_the_torch_model_s_values(hidden, phases, boards):
    """Encoder version 0's first layer comes from the boards' cells (bgai.eval.kernels.board_first_layer), never
    encoded: in the games' order, shuffled, and with repeated boards, it gives the torch model's values."""
    torch.manual_seed(5)
    model = EquityModel.create(hidden, phases, 0).eval()
    snapshot = ModelSnapshot.of(model)
    shuffled = boards[np.random.default_rng(1).permutation(len(boards))]
    odd = np.concatenate([boards[:5], boards[:5], boards[7:8].repeat(40, axis=0), boards[9:30]])
    for batch in (boards, shuffled, odd):
        with torch.inference_mode():
            expected = model(torch.from_numpy(encoding.encode(batch, version=0)),
                             torch.from_numpy(classify(batch))).numpy()
        np.testing.assert_allclose(snapshot.board_probabilities(batch, classify(batch)), expected, atol=1e-5)
    # a snapshot sent to a worker leaves its tables behind and builds the same ones there
    sent = pickle.loads(pickle.dumps(snapshot))
    assert snapshot._tables is not None and sent._tables is None
    np.testing.assert_array_equal(sent.board_probabilities(boards, classify(boards)),
                                  snapshot.board_probabilities(boards, classify(boards)))
    # and a network of another version is encoded as before
    v2 = ModelSnapshot.of(EquityModel.create((16,)))
    np.testing.assert_array_equal(v2.board_probabilities(boards), v2.probabilities(encoding.encode(boards)))


def test_a_large_pass_uses_the_same_numbers_as_a_small_one(boards):
    # Passes of MANY_THREADS_ROWS boards or more leave numpy's BLAS its threads; the values are the same
    bot = load_bot()
    many = np.concatenate([boards] * 2)[:3000]
    np.testing.assert_allclose(bot.probabilities(many)[:500], bot.probabilities(many[:500]), atol=1e-6)


def test_distinct_rows_finds_each_board_once_in_the_order_met(boards):
    from bgai.core import kernels

    rng = np.random.default_rng(4)
    batch = np.concatenate([boards, boards[rng.integers(len(boards), size=len(boards) // 2)]])
    batch = batch[rng.permutation(len(batch))]
    padded = np.zeros((len(batch), 32), dtype=np.int8)
    padded[:, :26] = batch
    first, inverse = kernels.distinct_rows(padded.view(np.uint64))
    assert np.array_equal(batch[first][inverse], batch)
    assert len(first) == len(np.unique(batch, axis=0)) and np.all(np.diff(first) > 0)
    assert np.all(inverse[first] == np.arange(len(first)))  # each distinct board's first row is its own


def test_a_batch_with_repeated_boards_is_evaluated_once_per_board(boards, monkeypatch):
    """A batch of at least DISTINCT_MIN boards sends each distinct board through the network once; the values are
    those of every board evaluated on its own."""
    import bgai.eval.bot as bot_module

    bot = load_bot()
    batch = np.concatenate([boards[:1500]] * 3)
    seen = []
    evaluate = Bot._evaluate
    monkeypatch.setattr(Bot, "_evaluate", lambda self, b, net=None, phase=None: seen.append(len(b)) or
                        evaluate(self, b, net, phase))
    deduplicated = bot.probabilities(batch)
    assert max(seen) <= 1500
    monkeypatch.setattr(bot_module, "DISTINCT_MIN", 10**9)
    seen.clear()
    np.testing.assert_allclose(deduplicated, bot.probabilities(batch), atol=1e-6)
    assert max(seen) >= len(batch) - 1500  # every board, the known outcomes aside


def test_the_shipped_npz_holds_the_shipped_checkpoint_s_weights():
    """bgai/data/bgai-default.npz is what play loads; it must be bgai-default.pt's network, exactly (training/
    report.py --ship writes both; bgai.eval.bot.export_shipped writes the npz from the checkpoint)."""
    snapshot, info = ModelSnapshot.load_npz(SHIPPED_NPZ)
    model = model_from_checkpoint(load_checkpoint(SHIPPED))
    state = model.state_dict()
    assert snapshot.weights.keys() == state.keys()
    assert all(np.array_equal(snapshot.weights[k], v.numpy()) for k, v in state.items())
    assert (snapshot.hidden, snapshot.phases, snapshot.encoder_version) == (model.hidden, model.phases,
                                                                             model.encoder_version)
    assert info["config"] == load_checkpoint(SHIPPED)["config"]  # what it is and how it was made


def test_the_fast_npz_holds_the_ens5_distil_checkpoint_s_weights():
    """bgai/data/bgai-fast.npz is issue 37's ens5-distil network (split-scale fine-tuned on the mean of five
    networks), a contact and a race net of 512-64 (checkpoints/shipped/experiments/ens5-distil.pt), for play,
    exactly (``export_shipped(that checkpoint, FAST_NPZ)`` wrote it)."""
    from bgai.eval.bot import FAST_NPZ

    source = Path(__file__).parents[1] / "checkpoints" / "shipped" / "experiments" / "ens5-distil.pt"
    snapshot, info = ModelSnapshot.load_npz(FAST_NPZ)
    state = model_from_checkpoint(load_checkpoint(source)).state_dict()
    assert snapshot.weights.keys() == state.keys() and snapshot.hidden == (512, 64)
    assert snapshot.phases == ("contact", "race")
    assert all(np.array_equal(snapshot.weights[k], v.numpy()) for k, v in state.items())
    assert info["config"] == load_checkpoint(source)["config"]  # what it is and how it was made


def test_an_npz_round_trips_and_loads_as_a_bot_that_plays_legal_moves(tmp_path):
    model = EquityModel.create((8, 4), ("contact", "crashed", "race"))
    path = tmp_path / "net.npz"
    ModelSnapshot.of(model).save_npz(path, info={"games": 12})
    snapshot, info = ModelSnapshot.load_npz(path)
    assert info == {"games": 12} and snapshot.phases == ("contact", "crashed", "race") and snapshot.hidden == (8, 4)
    bot = load_bot(path, plies=1)
    pos = Position.start()
    assert bot.choose_move(pos, (6, 5)) in pos.legal_moves((6, 5))
    assert [p.name for p in tmp_path.iterdir()] == ["net.npz"]  # written atomically: no temporary file left


def test_bad_npz_files_are_refused_with_a_clear_error(tmp_path):
    good = tmp_path / "good.npz"
    model = EquityModel.create((8,))
    ModelSnapshot.of(model).save_npz(good)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[:300])
    with pytest.raises(BgaiError, match="not a readable bgai network"):
        load_bot(truncated)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, a=np.zeros(3))
    with pytest.raises(BgaiError, match="not a readable bgai network"):
        load_bot(foreign)

    def rewritten(name: str, **changes) -> Path:
        stored = dict(np.load(good))
        stored.update(changes)
        path = tmp_path / name
        np.savez(path, **stored)
        return path

    weights = ModelSnapshot.of(model).weights
    meta = '{"format": 1, "hidden": [9], "phases": ["all"], "encoder_version": 2}'
    with pytest.raises(BgaiError, match="do not fit"):
        load_bot(rewritten("shape.npz", __meta__=np.array(meta)))
    with pytest.raises(BgaiError, match="finite"):
        load_bot(rewritten("nan.npz", **{"nets.all.head.bias": np.full_like(weights["nets.all.head.bias"], np.nan)}))
    with pytest.raises(BgaiError, match="phases"):
        load_bot(rewritten("phases.npz", __meta__=np.array(meta.replace('"all"', '"crashed"'))))
    with pytest.raises(BgaiError, match="not a readable"):  # a pickled object array is never unpickled
        load_bot(rewritten("pickle.npz", **{"nets.all.head.bias": np.array([object()], dtype=object)}))
    assert zipfile.is_zipfile(good)


def test_hints_and_evaluations_never_import_torch():
    """The shipped network plays from its npz in numpy: ``bgai --help``, a hint and an evaluation start without
    importing torch (about 1.4 s), and so do the bot itself and a worker's self-play games."""
    script = (
        "import sys\n"
        "from bgai.frontends.cli import main\n"
        "assert main(['hint', '4HPwATDgc/ABMA', '31', '--plies', '1']) == 0\n"
        "assert main(['eval', '4HPwATDgc/ABMA']) == 0\n"
        "from bgai.eval.bot import load_bot\n"
        "from bgai.formats.position import Position\n"
        "load_bot(plies=1).choose_move(Position.start(), (3, 1))\n"
        "from bgai.train.selfplay import SelfPlayTask, play_task\n"  # nor does a self-play worker's task
        "assert play_task(load_bot().model, SelfPlayTask(0, 2, 0.7, 1)).games == 2\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "24/23" in run.stdout or "8/5" in run.stdout  # the hint was printed
    help_run = subprocess.run([sys.executable, "-c", "import sys\nfrom bgai.frontends.cli import main\n"
                               "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
                               "assert 'torch' not in sys.modules and 'numba' not in sys.modules"],
                              capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert help_run.returncode == 0, help_run.stderr
    assert "train" in help_run.stdout
