"""TD(λ) self-play: λ-returns, the learner, checkpoints, resuming and configs."""

import numpy as np
import pytest
import torch

from bgai.core.errors import BgaiError
from bgai.core.game import roll_dice
from bgai.core.movegen import afterstates
from bgai.eval import encoding
from bgai.eval.bot import FAST_PRUNER, Bot, load_bot, load_pruner
from bgai.eval.checkpoint import CheckpointError, load_checkpoint, model_payload, save_checkpoint
from bgai.eval.network import EquityModel, EquityNet, equity, flip
from bgai.eval.weights import ModelSnapshot
from bgai.formats.position import START_BOARD
from bgai.train.config import RunConfig, load_config
from bgai.train.run import run
from bgai.train.selfplay import SelfPlayTask, SelfPlayWorker, play_task


def tiny_config(**kw) -> RunConfig:
    values = dict(games=64, parallel_games=32, hidden="16", bench_every=10**9, bench_games=4,
                  final_bench_games=4, checkpoint_minutes=10**6, threads=1, workers=1)
    values.update(kw)
    return load_config(None, values)


def train(config, run_dir, resume=False, progress=False):
    return run(config, run_dir, resume=resume, progress=progress)


def model(hidden=(8,)) -> EquityModel:
    return EquityModel.create(hidden)


def test_network_outputs_are_coherent_by_construction():
    net = EquityNet(encoding.N_FEATURES, (32,))
    torch.manual_seed(0)
    with torch.no_grad():
        for p in net.parameters():
            p.normal_(0, 3)  # extreme weights: still coherent
        probs = net(torch.randn(500, encoding.N_FEATURES) * 5).numpy()
    win, wg, wbg, lg, lbg = probs.T
    assert ((0 <= probs) & (probs <= 1)).all()
    assert (wg <= win + 1e-7).all() and (wbg <= wg + 1e-7).all()
    assert (lg <= 1 - win + 1e-7).all() and (lbg <= lg + 1e-7).all()


def test_equity_and_flip():
    p = np.array([[0.6, 0.2, 0.05, 0.1, 0.01]])
    assert equity(p)[0] == pytest.approx(2 * 0.6 - 1 + 0.2 + 0.05 - 0.1 - 0.01)
    assert equity(flip(p))[0] == pytest.approx(-equity(p)[0])
    assert np.allclose(flip(flip(p)), p)


def test_lambda_returns_follow_the_recursion():
    """Given a three-move game recorded by hand, the targets are flip((1-λ)V' + λG') back from the exact result."""
    worker = SelfPlayWorker(model((8,)), lam=0.6, seed=0)
    b1, b2 = START_BOARD.copy(), START_BOARD.copy()
    b1[24] -= 1
    b1[23] += 1
    final = np.zeros(26, np.int8)
    final[6] = 15  # the loser on roll, nothing off: the mover won a gammon
    v1 = np.array([[0.3, 0.1, 0.0, 0.2, 0.01]], np.float32)
    v2 = np.array([[0.55, 0.15, 0.02, 0.12, 0.0]], np.float32)
    no = np.array([False])
    record = [  # (games, position before the roll, chosen afterstate, its value, finished?, explored?)
        (np.array([0]), START_BOARD[None], b1[None], v1.copy(), no, no),
        (np.array([0]), b1[None], b2[None], v2.copy(), no, no),
        (np.array([0]), b2[None], final[None], np.zeros((1, 5), np.float32), np.array([True]), no),
    ]
    exp = worker._lambda_returns(record, 1)
    exact = np.array([[0, 0, 0, 1, 0]], np.float32)  # seen by the loser, on roll in the final position
    g2 = flip(exact)  # b2's player on roll made the winning move
    g1 = flip(0.4 * v2 + 0.6 * g2)
    assert exp.boards.shape == (2, 26)
    assert np.allclose(exp.targets, np.concatenate([g1, g2]), atol=1e-6)
    assert exp.gammons == 1 and exp.backgammons == 0


def test_selfplay_targets_are_probabilities_and_games_end():
    worker = SelfPlayWorker(model((16,)), lam=0.7, seed=3)
    exp = worker.play(0, 16, np.random.default_rng(0))
    assert exp.games == 16 and len(exp.boards) == len(exp.targets) > 16
    t = exp.targets
    assert ((t >= -1e-6) & (t <= 1 + 1e-6)).all()
    assert (t[:, 1] <= t[:, 0] + 1e-6).all() and (t[:, 3] <= 1 - t[:, 0] + 1e-6).all()


def test_trajectories_are_the_positions_of_the_games_played_in_order():
    # Given the same games played for their experience and for their trajectories (the same dice and exploration)
    worker = SelfPlayWorker(model(), lam=0.0, seed=3, epsilon=0.2)
    experience = worker.play(50, 6, np.random.default_rng(1))
    paths = worker.trajectories(50, 6, np.random.default_rng(1))

    # Then each game's trajectory starts at the starting position, in game order, its turns consecutive
    first = np.flatnonzero(np.r_[True, paths.game[1:] != paths.game[:-1]])
    assert list(paths.game[first]) == list(range(50, 56)) and (np.diff(paths.game) >= 0).all()
    assert (paths.boards[first] == START_BOARD).all()
    # And every later position is one the games reached (the experience's positions, each as often)
    later = np.delete(paths.boards, first, axis=0)
    assert np.array_equal(np.unique(later, axis=0, return_counts=True)[1],
                          np.unique(experience.boards, axis=0, return_counts=True)[1])
    assert (np.unique(later, axis=0) == np.unique(experience.boards, axis=0)).all()
    # And each position is a play, with that turn's dice, from the one before it
    turn = np.arange(len(paths.game)) - np.repeat(first, np.diff(np.r_[first, len(paths.game)]))
    step = np.flatnonzero(turn > 0)
    moves = afterstates(paths.boards[step - 1], roll_dice(3, paths.game[step], turn[step] - 1), validate=False)
    reached = (moves.after == paths.boards[step][moves.owner]).all(axis=1)
    assert np.bincount(moves.owner[reached], minlength=len(step)).min() >= 1
    # And the random moves are marked: about epsilon of them, none without exploration
    assert 0.05 < paths.explored.mean() < 0.4
    assert not SelfPlayWorker(model(), 0.0, 3).trajectories(50, 6, np.random.default_rng(1)).explored.any()


def test_pruned_self_play_judges_the_pruning_nets_best_plays_only():
    pruner, _ = load_pruner(FAST_PRUNER)
    net = model((16,))
    # Given room for every play of any roll, the pruning net changes nothing: the same games and targets
    full = SelfPlayWorker(net, lam=0.0, seed=3).play(0, 4, np.random.default_rng(0))
    wide = SelfPlayWorker(net, lam=0.0, seed=3, pruner=pruner, prune=1000).play(0, 4, np.random.default_rng(0))
    assert np.array_equal(full.boards, wide.boards) and np.allclose(full.targets, wide.targets, atol=1e-6)
    # Given one play a move, each move is the pruning net's own best play of its roll (equal by its values)
    paths = SelfPlayWorker(net, lam=0.0, seed=3, pruner=pruner, prune=1).trajectories(0, 4, np.random.default_rng(0))
    first = np.flatnonzero(np.r_[True, paths.game[1:] != paths.game[:-1]])
    turn = np.arange(len(paths.game)) - np.repeat(first, np.diff(np.r_[first, len(paths.game)]))
    step = np.flatnonzero(turn > 0)
    moves = afterstates(paths.boards[step - 1], roll_dice(3, paths.game[step], turn[step] - 1), validate=False)
    rough = equity(flip(Bot(pruner).probabilities(moves.after).astype(np.float64)))
    best = np.full(len(step), -np.inf)
    np.maximum.at(best, moves.owner, rough)
    chosen = (moves.after == paths.boards[step][moves.owner]).all(axis=1)
    assert np.allclose(rough[chosen], best[moves.owner[chosen]], atol=1e-6)
    # And those are other games than the model's own choices make, with targets that are probabilities
    assert not np.array_equal(np.unique(paths.boards, axis=0), np.unique(np.r_[full.boards, START_BOARD[None]],
                                                                           axis=0))
    # And a worker's task plays the same games as the worker does
    task = SelfPlayTask(40, 3, lam=0.0, seed=3, pruner=pruner, prune=2)
    alone = SelfPlayWorker(net, lam=0.0, seed=3, pruner=pruner, prune=2).play(40, 3, np.random.default_rng([3, 40]))
    assert np.array_equal(play_task(ModelSnapshot.of(net), task).boards, alone.boards)


def test_a_td_stage_plays_with_its_pruning_net_and_refuses_a_missing_one(tmp_path):
    config = tiny_config(games=32, pruner=str(FAST_PRUNER), prune=2)
    assert train(config, tmp_path / "pruned")["games"] == 32
    with pytest.raises(BgaiError, match="pruner .* is not a file"):
        tiny_config(pruner=str(tmp_path / "missing.npz"))
    with pytest.raises(BgaiError, match="prune must be at least 0"):
        tiny_config(prune=-1)


def test_training_writes_a_checkpoint_and_resume_continues_exactly(tmp_path):
    """Given a run stopped after 32 games and resumed, the weights equal those of an uninterrupted run."""
    whole = train(tiny_config(games=64), tmp_path / "whole", progress=False)
    train(tiny_config(games=32), tmp_path / "split", progress=False)
    train(tiny_config(games=64), tmp_path / "split", resume=True, progress=False)
    a = load_checkpoint(tmp_path / "whole" / "checkpoint.pt")
    b = load_checkpoint(tmp_path / "split" / "checkpoint.pt")
    assert a["games"] == b["games"] == whole["games"] == 64
    for key in a["model"]:
        assert torch.equal(a["model"][key], b["model"][key]), key
    assert (tmp_path / "whole" / "tensorboard").is_dir()
    assert a["encoder_version"] == encoding.ENCODER_VERSION and a["config"]["hidden"] == "16"
    assert a["config"]["stages"][0]["games"] == 64


def test_starting_over_an_existing_run_is_refused(tmp_path):
    train(tiny_config(games=32), tmp_path, progress=False)
    with pytest.raises(BgaiError, match="--resume"):
        train(tiny_config(games=32), tmp_path, progress=False)


def test_corrupt_and_foreign_checkpoints_get_clear_errors(tmp_path):
    missing = tmp_path / "none.pt"
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_checkpoint(missing)
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="not a readable bgai checkpoint"):
        load_checkpoint(corrupt)
    truncated = tmp_path / "truncated.pt"
    save_checkpoint(truncated, model_payload(model((4,))))
    truncated.write_bytes(truncated.read_bytes()[:200])
    with pytest.raises(CheckpointError):
        load_checkpoint(truncated)
    other = tmp_path / "other.pt"
    torch.save({"weights": 1}, other)
    with pytest.raises(CheckpointError, match="lacks"):
        load_checkpoint(other)
    old = tmp_path / "old.pt"
    save_checkpoint(old, {"encoder_version": 1, "n_inputs": 10, "hidden": [4], "model": {}})
    with pytest.raises(CheckpointError, match="encoder version"):
        load_checkpoint(old)
    future = tmp_path / "future.pt"
    save_checkpoint(future, {**model_payload(model((4,))), "encoder_version": 9})
    with pytest.raises(CheckpointError, match="encoder version 9"):
        load_checkpoint(future)


def test_checkpoint_writes_leave_no_temporary_files(tmp_path):
    path = tmp_path / "c.pt"
    for _ in range(3):
        save_checkpoint(path, model_payload(model((4,))))
    assert [p.name for p in tmp_path.iterdir()] == ["c.pt"]


def test_config_files_and_overrides(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('games = 123\nlam = 0.5\nhidden = "64,32"\n')
    config = load_config(path, {"lam": 0.9})
    (stage,) = config.stages
    assert (stage.games, stage.lam, config.hidden_sizes()) == (123, 0.9, (64, 32))
    path.write_text("gamez = 1\n")
    with pytest.raises(BgaiError, match="unknown stage 1 key"):
        load_config(path)
    with pytest.raises(BgaiError, match="hidden"):
        load_config(None, {"hidden": "wide"})


def test_a_trained_checkpoint_loads_as_a_bot(tmp_path):
    train(tiny_config(games=32), tmp_path, progress=False)
    bot = load_bot(tmp_path / "checkpoint.pt")
    assert isinstance(bot, Bot)
    from bgai import Position

    pos = Position.start()
    ev = bot.evaluate(pos)
    assert 0 <= ev.win <= 1 and -3 <= ev.equity <= 3
    move = bot.choose_move(pos, (3, 1))
    assert move in pos.legal_moves((3, 1))
