"""Training runs (bgai.train.run and its methods): configs with stages, lookahead generations, their targets,
resuming, and every kind of checkpoint loading as a bot."""

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from bgai import Position
from bgai.core.dice import ROLLS
from bgai.core.errors import BgaiError
from bgai.core.phase import BEAROFF, CONTACT, CRASHED, OVER, RACE, classify
from bgai.eval import encoding
from bgai.eval.bot import FAST_NPZ, SHIPPED_NPZ, Bot, Ensemble, load_bot
from bgai.eval.checkpoint import export_for_play, load_checkpoint, model_from_checkpoint, model_payload, save_checkpoint
from bgai.eval.network import EquityModel, ModelSnapshot, flip
from bgai.train import lookahead, td
from bgai.train.config import LookaheadStage, TDStage, load_config
from bgai.train.learner import Learner, evaluation_error, inputs
from bgai.train.lookahead import RolloutTargets, load_generation, lookahead_targets, rollout_rows, trace_returns
from bgai.train.run import run
from bgai.train.selfplay import sample_positions, sample_trajectories
from bgai.train.state import Run
from tests.test_lookahead import slow_lookahead

# workers=1: these runs stay in this process (their rounds played with the numpy pass, as on workers;
# tests/test_workers.py runs them on worker processes and Ray actors).
TINY = dict(hidden="8", bench_games=2, final_bench_games=2, threads=1, workers=1, checkpoint_minutes=10**6)

STAGED = """
run_name = "staged"
hidden = "8"
nets = "contact,race"
bench_games = 2
final_bench_games = 2
threads = 1
workers = 1

[[stage]]
name = "warm-up"
method = "td"
games = 64
parallel_games = 32
bench_every = 1000000

[[stage]]
name = "search"
method = "lookahead"
generations = 2
games = 12
positions = 150
part = 60
epochs = 1
buffer = 2
bench_every = 100
"""


def test_a_config_names_its_stages_and_overrides_reach_them(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text(STAGED)
    config = load_config(path, {"plies": 2, "seed": 9}, {"warm-up.games": 40, "search.lr": 1e-4, "threads": 1})
    td, search = config.stages
    assert isinstance(td, TDStage) and isinstance(search, LookaheadStage)
    assert (td.name, search.name) == ("warm-up", "search")
    assert td.games == 40 and search.games == 12 and search.plies == 2  # the config's 12 left alone
    assert search.lr == 1e-4 and td.lr == TDStage().lr and config.seed == 9 and config.threads == 1
    assert config.net_names() == ("contact", "race") and config.encoder == encoding.ENCODER_VERSION


@pytest.mark.parametrize("overrides, qualified, message", [
    ({"games": 40}, None, r"games is a setting of 2 stages of this run \(warm-up, search\); say which: "
                          r"--set warm-up.games=40"),
    ({"lam": 0.5}, None, "lam is a setting of 2 stages"),
    ({"lr": 1e-3}, None, "lr is a setting of 2 stages"),
    (None, {"ply1.lr": 1e-4}, "no stage called 'ply1'; its stages: warm-up, search"),
    (None, {"warm-up.plies": 2}, "stage warm-up has no setting 'plies'"),
    (None, {"games": 5}, "games is not a run setting"),
    (None, {"search.plies": "two"}, "plies must be int"),
])
def test_a_setting_of_several_stages_must_name_one(tmp_path, overrides, qualified, message):
    path = tmp_path / "run.toml"
    path.write_text(STAGED)
    with pytest.raises(BgaiError, match=message):
        load_config(path, overrides, qualified)


def test_train_set_on_the_command_line(tmp_path, capsys):
    from bgai.frontends.cli import main
    from bgai.frontends.cli.network import _qualified

    assert _qualified(["ply1.lr=1e-4", "search.precision=bf16", 'run_name="x y"', "warm-up.games=40"]) == {
        "ply1.lr": 1e-4, "search.precision": "bf16", "run_name": "x y", "warm-up.games": 40}
    path = tmp_path / "run.toml"
    path.write_text(STAGED)
    assert main(["train", "--config", str(path), "--games", "40", "--run-dir", str(tmp_path / "run")]) == 2
    assert "say which: --set warm-up.games=40" in capsys.readouterr().err
    assert main(["train", "--config", str(path), "--set", "nonsense", "--run-dir", str(tmp_path / "run")]) == 2
    assert "--set takes STAGE.KEY=VALUE" in capsys.readouterr().err


@pytest.mark.parametrize("path", sorted((Path(__file__).parents[1] / "training" / "configs").glob("*.toml")),
                         ids=lambda p: p.name)
def test_every_shipped_config_loads(path):
    config = load_config(path)
    assert config.stages and len({stage.name for stage in config.stages}) == len(config.stages)


@pytest.mark.parametrize("text, message", [
    ('[[stage]]\nmethod = "rollout"\n', "unknown method 'rollout'"),
    ('[[stage]]\nname = "a"\n[[stage]]\nname = "a"\n', "two stages are called 'a'"),
    ('[[stage]]\nmethod = "lookahead"\nparallel_games = 5\n', "unknown stage 1 key"),
    ('[[stage]]\nmethod = "lookahead"\nlam = 1.5\n', "lam must be in 0..1"),
    ('games = 5\n[[stage]]\nmethod = "td"\n', "go in \\[\\[stage\\]\\] tables"),
    ('nets = "race"\n', "nets must be"),
    ('encoder = 7\n', "encoder must be one of"),
    ('[[stage]]\nmethod = "lookahead"\nplies = 3\n', "plies must be 1 or 2"),
    ('[[stage]]\nmethod = "lookahead"\nplies = 2\ndeeper = 0.1\n', "plies \\+ 1 at most 2"),
    ('[[stage]]\nmethod = "lookahead"\ndeeper = 1.5\n', "deeper must be a share"),
    ('[[stage]]\nmethod = "lookahead"\nprecision = "fp16"\n', "precision must be 'fp32' or 'bf16'"),
    ('[[stage]]\nmethod = "lookahead"\nloss = "mse"\n', "loss must be one of bce, outcomes"),
    ('[[stage]]\nmethod = "td"\ngames = "many"\n', "games must be int"),
    # A TD stage is checked as the others are, every problem named at once; a fraction is no whole number.
    ('[[stage]]\nmethod = "td"\ngames = 1.9\n', "stage 1 games must be int \\(a whole number\\), got 1.9"),
    ('[[stage]]\nmethod = "td"\nbench_every = 0\nlam = 1.5\nlr = 0\n',
     "stage td: bench_every must be at least 1, got 0; lam must be in 0..1, got 1.5; lr must be above 0, got 0.0"),
    ('[[stage]]\nmethod = "td"\nparallel_games = -4\n', "parallel_games must be at least 1"),
    ('[[stage]]\nmethod = "lookahead"\ngenerations = 0\n', "generations must be at least 1"),
    ('seed = true\n', "config seed must be int \\(a whole number\\), got True"),
    ('run_name = 0.5\n', "config run_name must be str \\(a string\\), got 0.5"),
    ('[[stage]]\nmethod = "td"\nlr = nan\n', "lr must be float \\(a number\\)"),
])
def test_bad_configs_say_what_is_wrong(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(BgaiError, match=message):
        load_config(path)


def test_whole_numbers_may_come_as_text_or_as_whole_floats(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text('[[stage]]\nmethod = "td"\ngames = 2e4\nlr = 1\n')
    config = load_config(path, {"hidden": 64}, qualified={"td.parallel_games": "128", "td.epsilon": "0.1"})
    assert config.hidden == "64"
    stage = config.stages[0]
    assert (stage.games, stage.parallel_games, stage.lr, stage.epsilon) == (20_000, 128, 1.0, 0.1)
    assert type(stage.games) is int and type(stage.lr) is float
    with pytest.raises(BgaiError, match="lr must be float"):  # text is held to what TOML's numbers are
        load_config(path, qualified={"td.lr": "nan"})


def test_an_override_no_stage_has_is_refused():
    with pytest.raises(BgaiError, match="no stage of this run has the setting"):
        load_config(None, {"plies": 2})  # the default run is one TD stage


def test_positions_are_sampled_from_self_play_without_bear_offs_or_duplicates():
    model = EquityModel.create((8,))
    boards = sample_positions(model, 8, 0, seed=1, epsilon=0.1, rng=np.random.default_rng(0), keep=10_000)
    assert len(boards) > 100 and len(np.unique(boards, axis=0)) == len(boards)
    assert not np.isin(classify(boards), (OVER, BEAROFF)).any()
    assert len(sample_positions(model, 8, 0, 1, 0.1, np.random.default_rng(0), keep=50)) == 50


def slow_trace_returns(lookahead, values, game, cut, lam):
    """trace_returns by its recursion, one position at a time from the end."""
    returns = lookahead.astype(np.float64).copy()
    for t in range(len(game) - 2, -1, -1):
        if game[t + 1] == game[t] and not cut[t]:
            returns[t] = lookahead[t] + lam * (flip(returns[t + 1:t + 2])[0] - flip(values[t + 1:t + 2])[0])
    return returns


def test_trace_returns_follow_their_recursion():
    rng = np.random.default_rng(5)
    game = np.sort(rng.integers(0, 12, 300))
    lookahead, values = rng.random((300, 5)), rng.random((300, 5))
    cut = rng.random(300) < 0.1
    for lam in (0.0, 0.6, 1.0):
        expected = slow_trace_returns(lookahead, values, game, cut, lam)
        assert np.allclose(trace_returns(lookahead, values, game, cut, lam), expected)
    assert np.allclose(trace_returns(lookahead, values, game, cut, 0.0), lookahead)
    # A network that agrees with its lookahead everywhere has nothing to carry back
    assert np.allclose(trace_returns(lookahead, lookahead, game, cut, 0.8), lookahead)


def test_trajectories_point_at_the_sampled_positions_and_stop_at_the_bear_off():
    model = EquityModel.create((8,))
    whole = sample_trajectories(model, 6, 0, seed=3, epsilon=0.1, rng=np.random.default_rng(0), keep=10**6)
    some = sample_trajectories(model, 6, 0, seed=3, epsilon=0.1, rng=np.random.default_rng(0), keep=40)
    # Every position of the trajectories up to its game's bear-off or end is sampled, once
    boards, rows = whole["boards"], whole["sequence"]
    assert (rows >= 0).all() and len(np.unique(boards, axis=0)) == len(boards) == len(np.unique(rows))
    assert not np.isin(classify(boards), (OVER, BEAROFF)).any()
    assert sorted(set(whole["game"])) == list(range(6)) and whole["explored"].any()
    # Keeping fewer keeps the same trajectories, the positions not kept marked -1
    assert len(some["boards"]) == 40 and (some["sequence"] >= 0).sum() >= 40
    kept = some["sequence"] >= 0
    assert (some["boards"][some["sequence"][kept]] == boards[rows[kept]]).all()
    assert np.array_equal(some["game"], whole["game"]) and np.array_equal(some["explored"], whole["explored"])


def test_lookahead_targets_match_the_slow_definition():
    bot = load_bot()
    boards = sample_positions(bot.model, 4, 100, seed=2, epsilon=0.0, rng=np.random.default_rng(1), keep=6)
    targets = lookahead_targets(bot.model, boards, 1)
    for board, target in zip(boards, targets):
        assert np.allclose(target, slow_lookahead(bot, Position(board), 1), atol=1e-5)


def test_a_staged_run_trains_contact_and_race_nets_and_its_targets_come_from_the_frozen_model(tmp_path):
    # Given a TD run, and a lookahead run that starts from its weights
    td_dir, search_dir = tmp_path / "td", tmp_path / "search"
    run(load_config(None, {**TINY, "games": 64, "parallel_games": 32, "bench_every": 10**6, "nets": "contact,race"}),
        td_dir, progress=False)
    config = load_config(None, {**TINY, "nets": "contact,race", "init": str(td_dir / "checkpoint.pt")})
    config.stages = [LookaheadStage(name="search", generations=1, games=12, positions=150, part=60, epochs=1)]
    summary = run(config, search_dir, progress=False)

    # Then generation 0's targets are the 1-ply values of the TD model, in three parts
    folder = search_dir / "data" / "search-000"
    boards = np.load(folder / "positions.npz")["boards"]
    parts = sorted(folder.glob("targets-*.npz"))
    assert len(boards) == 150 and len(parts) == 3
    td_model = model_from_checkpoint(load_checkpoint(td_dir / "checkpoint.pt"))
    stored = np.concatenate([np.load(p)["targets"] for p in parts])
    assert np.allclose(stored, lookahead_targets(td_model, boards, 1), atol=1e-6)

    # And the trained model has moved, loads as a bot with both nets, and the summary names the stage
    bot = load_bot(search_dir / "checkpoint.pt")
    assert bot.model.phases == ("contact", "race") and summary["stages"] == ["search"]
    kept = load_bot(search_dir / "generations" / "search-000.pt")  # each generation's network stays playable
    assert all(np.array_equal(a, b) for a, b in zip(kept.model.weights.values(), bot.model.weights.values()))
    assert any(not np.array_equal(a, b.numpy()) for a, b in zip(bot.model.weights.values(),
                                                                td_model.state_dict().values()))
    assert bot.choose_move(Position.start(), (3, 1)) in Position.start().legal_moves((3, 1))


def test_a_stage_schedule_lowers_the_rate_once_over_its_generations_and_keeps_every_other(tmp_path, monkeypatch):
    # Given a lookahead stage of three generations whose rate falls over the stage, keeping every second network
    rates = []
    fit = Learner.fit

    def recording(self, boards, targets, rng, lr=None, **settings):
        rates.append(lr)
        return fit(self, boards, targets, rng, lr=lr, **settings)
    monkeypatch.setattr(Learner, "fit", recording)
    config = load_config(None, {**TINY, "bench_games": 0, "final_bench_games": 0})
    config.stages = [LookaheadStage(name="search", generations=3, games=4, positions=30, part=30, epochs=1,
                                    buffer=1, lr=3e-4, lr_end=0.0, lr_schedule="stage", keep_every=2)]
    run(config, tmp_path / "run", progress=False)

    # Then each generation trains on its third of one falling line, and generations 1 and 2 (the last) are kept
    assert np.allclose(rates, [(3e-4, 2e-4), (2e-4, 1e-4), (1e-4, 0.0)])
    assert sorted(p.name for p in (tmp_path / "run" / "generations").glob("*.pt")) == ["search-001.pt",
                                                                                         "search-002.pt"]
    # And the per-generation schedule, the default, starts each generation anew; a schedule it does not know is refused
    assert LookaheadStage(generations=3, lr=3e-4, lr_end=1e-5).generation_rates(2) == (3e-4, 1e-5)
    with pytest.raises(BgaiError, match="lr_schedule must be one of generation, stage"):
        LookaheadStage(lr_schedule="epoch").check()


def test_a_run_without_benchmark_games_writes_no_figure_for_them(tmp_path, capsys):
    # Given a lookahead run with bench_games = 0 and final_bench_games = 0
    config = load_config(None, {**TINY, "bench_games": 0, "final_bench_games": 0})
    config.stages = [LookaheadStage(name="search", generations=1, games=8, positions=60, part=60, epochs=1)]
    summary = run(config, tmp_path / "run", progress=True)

    # Then its summary is strict JSON (no NaN): no games, and null where a figure would be
    def refuse(constant):
        raise AssertionError(f"{constant} in summary.json")
    written = json.loads((tmp_path / "run" / "summary.json").read_text(), parse_constant=refuse)
    assert written["final"] == summary["final"]
    assert {name: figures["games"] for name, figures in written["final"].items()} == {"pubeval": 0, "heuristic": 0}
    assert written["final"]["pubeval"]["ppg"] is None
    # And the generation's line says its error without a benchmark that was not played
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("search generation 0"))
    assert "validation equity error" in line and "pubeval" not in line and "nan" not in line


def test_a_stage_with_lam_learns_the_trace_returns_of_its_games(tmp_path):
    # Given a lookahead stage whose targets follow the games (lam = 0.7), keeping fewer positions than they pass
    path = tmp_path / "run.toml"
    path.write_text(STAGED.replace("buffer = 2", "buffer = 2\nlam = 0.7"))
    run(load_config(path, {"generations": 1}), tmp_path, progress=False)

    # Then its data holds the trajectories, and each part the frozen model's 0-ply values beside the targets
    folder = tmp_path / "data" / "search-000"
    data = dict(np.load(folder / "positions.npz"))
    assert len(data["boards"]) == 150 and (data["sequence"] == -1).any()
    parts = [dict(np.load(p)) for p in sorted(folder.glob("targets-*.npz"))]
    targets, values = (np.concatenate([p[k] for p in parts]) for k in ("targets", "values"))
    assert values.shape == targets.shape == (150, 5)

    # And what the model learns for each position is the mean of its trace returns, the trace cut where a move
    # was random or the position after it was not kept
    rows = data["sequence"]
    kept = rows >= 0
    cut = data["explored"] | np.r_[~kept[1:], False]
    returns = slow_trace_returns(np.where(kept[:, None], targets[rows], 0), np.where(kept[:, None], values[rows], 0),
                                 data["game"], cut, 0.7)
    boards, learned = load_generation(folder, 0.7)
    for i in range(0, 150, 7):
        assert np.allclose(learned[i], returns[rows == i].mean(axis=0), atol=1e-5)
    assert not np.allclose(learned, targets, atol=1e-3)  # the traces moved the targets
    assert np.array_equal(load_generation(folder, 0.0)[1], targets)


def test_a_stage_cannot_take_up_lam_on_data_sampled_without_trajectories(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text(STAGED)
    run(load_config(path, {"generations": 1}), tmp_path, progress=False)
    with pytest.raises(BgaiError, match="search-000/positions.npz was sampled without the games' trajectories"):
        run(load_config(path, None, {"search.lam": 0.5}), tmp_path, resume=True, progress=False)
    assert not (tmp_path / "data" / "search-001").exists()


def test_a_killed_run_resumes_to_the_same_weights(tmp_path, monkeypatch):
    path = tmp_path / "run.toml"
    path.write_text(STAGED)
    whole = run(load_config(path), tmp_path / "whole", progress=False)

    # Given the same run killed while computing the second part of generation 1's targets
    calls = []

    def dies_at_the_fifth_part(*args):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return lookahead_targets(*args)

    monkeypatch.setattr(lookahead, "lookahead_targets", dies_at_the_fifth_part)
    with pytest.raises(KeyboardInterrupt):
        run(load_config(path), tmp_path / "split", progress=False)
    gen1 = tmp_path / "split" / "data" / "search-001"
    assert [p.name for p in sorted(gen1.glob("targets-*"))] == ["targets-0000.npz"]

    # When it is resumed, Then it computes only the missing parts and ends with the same weights
    run(load_config(path), tmp_path / "split", resume=True, progress=False)
    assert len(calls) == 7
    a = load_checkpoint(tmp_path / "whole" / "checkpoint.pt")
    b = load_checkpoint(tmp_path / "split" / "checkpoint.pt")
    assert a["games"] == b["games"] == whole["games"] == 64 + 2 * 12
    for key in a["model"]:
        assert torch.equal(a["model"][key], b["model"][key]), key


def test_a_finished_generation_missing_data_is_an_error_not_a_silent_skip(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text(STAGED)
    run(load_config(path, {"generations": 1}), tmp_path, progress=False)
    (tmp_path / "data" / "search-000" / "targets-0001.npz").unlink()
    with pytest.raises(BgaiError, match="90 targets for 150 positions"):
        run(load_config(path), tmp_path, resume=True, progress=False)


def test_a_resumed_run_without_the_data_its_buffer_needs_says_how_to_go_on(tmp_path):
    # Given a run stopped after its first lookahead generation, resumed where that generation's data is gone
    path = tmp_path / "run.toml"
    path.write_text(STAGED)  # buffer = 2: generation 1 learns generation 0's data too
    run(load_config(path, {"generations": 1}), tmp_path, progress=False)
    gone = tmp_path / "data" / "search-000"
    for file in gone.iterdir():
        file.unlink()
    gone.rmdir()
    # Then it stops with the way forward, before computing anything
    with pytest.raises(BgaiError, match="search-000 is missing.*--buffer 1"):
        run(load_config(path), tmp_path, resume=True, progress=False)
    # And with --buffer 1 the generation learns its own data alone
    run(load_config(path, {"buffer": 1}), tmp_path, resume=True, progress=False)
    assert load_checkpoint(tmp_path / "checkpoint.pt")["step"] == 2
    assert (tmp_path / "generations" / "search-001.pt").exists() and not gone.exists()


def test_every_kind_of_checkpoint_loads_as_a_bot(tmp_path):
    # The shipped networks (the fast one split in a contact and a race net, the 512-256 one a single net), and bgai
    # 0.1's TD network kept by path (format 1, encoder version 1, one net); format 2 holds either kind
    fast, shipped = load_bot(), load_bot(SHIPPED_NPZ)
    assert fast.model.encoder_version in encoding.VERSIONS and fast.model.phases == ("contact", "race")
    assert shipped.model.encoder_version in encoding.VERSIONS and shipped.model.phases == ("all",)
    td = load_bot(Path(__file__).resolve().parents[1] / "checkpoints" / "td-v1" / "checkpoint.pt")
    assert td.model.encoder_version == 1 and td.model.describe()
    one = tmp_path / "one.pt"
    save_checkpoint(one, model_payload(EquityModel.create((8,), ("all",), 1)))
    two = tmp_path / "two.pt"
    save_checkpoint(two, model_payload(EquityModel.create((8, 4), ("contact", "race"))))
    for path, phases, version in ((one, ("all",), 1), (two, ("contact", "race"), encoding.ENCODER_VERSION)):
        bot = load_bot(path)
        assert (bot.model.phases, bot.model.encoder_version) == (phases, version)
        probs = bot.probabilities(np.stack([Position.start().board] * 3))
        assert probs.shape == (3, 5) and np.isfinite(probs).all()
    # A format-1 file exported for play becomes format 2 with the same evaluations
    legacy = tmp_path / "legacy.pt"
    torch.save({"format": 1, "encoder_version": 1, "n_inputs": encoding.n_features(1), "hidden": [8],
                "model": EquityModel.create((8,), ("all",), 1).nets["all"].state_dict()}, legacy)
    export_for_play(legacy, tmp_path / "exported.pt")
    assert load_checkpoint(tmp_path / "exported.pt")["format"] == 2
    boards = np.stack([Position.start().board])
    assert np.allclose(load_bot(legacy).probabilities(boards), load_bot(tmp_path / "exported.pt").probabilities(boards))


def test_a_checkpoint_whose_weights_do_not_fit_its_description_is_refused(tmp_path):
    path = tmp_path / "odd.pt"
    payload = model_payload(EquityModel.create((8,)))
    save_checkpoint(path, {**payload, "hidden": [16]})
    with pytest.raises(BgaiError, match="do not fit"):
        load_bot(path)
    save_checkpoint(path, {**payload, "phases": ["contact"]})
    with pytest.raises(BgaiError, match="phases"):
        load_bot(path)


def test_a_split_model_routes_each_phase_to_its_net():
    model = EquityModel.create((4,), ("contact", "race"))
    with torch.no_grad():
        model.nets["race"].head.bias.fill_(-20.0)  # the race net says: certain loss
        model.nets["contact"].head.bias.fill_(20.0)  # the contact net: certain backgammon win
    race = Position.from_points({6: 3, 5: 2, 12: 1}, {20: 4}).board
    boards = np.stack([Position.start().board, race])
    probs = Bot(model).probabilities(boards)
    assert probs[0, 2] > 0.99 and probs[1, 0] < 0.01


def test_a_teacher_plays_the_games_and_computes_the_targets(tmp_path):
    # Given a TD-trained network, and a new model of another shape that learns from it
    run(load_config(None, {**TINY, "games": 32, "parallel_games": 32, "bench_every": 10**6}), tmp_path / "td",
        progress=False)
    teacher = tmp_path / "td" / "checkpoint.pt"
    config = load_config(None, {**TINY, "hidden": "12", "encoder": 1})
    config.stages = [LookaheadStage(name="distil", generations=1, games=6, positions=80, part=80, epochs=1,
                                    teacher=str(teacher))]
    run(config, tmp_path / "student", progress=False)
    # Then the stored targets are the teacher's 1-ply values, and the student has the shape the config asks for
    folder = tmp_path / "student" / "data" / "distil-000"
    boards = np.load(folder / "positions.npz")["boards"]
    targets = np.load(folder / "targets-0000.npz")["targets"]
    assert np.allclose(targets, lookahead_targets(load_bot(teacher).model, boards, 1), atol=1e-6)
    student = load_bot(tmp_path / "student" / "checkpoint.pt").model
    assert student.hidden == (12,) and student.encoder_version == 1


def test_an_ensemble_teacher_averages_its_networks_in_the_targets(tmp_path):
    # Given a TD-trained network, and a student that learns from the mean of it and the shipped fast network
    run(load_config(None, {**TINY, "games": 32, "parallel_games": 32, "bench_every": 10**6}), tmp_path / "td",
        progress=False)
    teacher = tmp_path / "td" / "checkpoint.pt"
    config = load_config(None, {**TINY, "hidden": "12", "encoder": 1})
    config.stages = [LookaheadStage(name="distil", generations=1, games=6, positions=80, part=40, epochs=1, plies=0,
                                    teacher=str(teacher), ensemble=str(FAST_NPZ))]
    run(config, tmp_path / "student", progress=False)
    # Then its 0-ply targets are the two networks' mean probabilities (bear-offs the database's, as in play)
    folder = tmp_path / "student" / "data" / "distil-000"
    boards = np.load(folder / "positions.npz")["boards"]
    targets = np.concatenate([np.load(folder / f"targets-000{i}.npz")["targets"] for i in range(2)])
    one, two = load_bot(teacher), load_bot(FAST_NPZ)
    live = ~np.isin(classify(boards), [BEAROFF])
    mean = (one.probabilities(boards) + two.probabilities(boards)) / 2
    assert live.sum() > 40 and np.allclose(targets[live], mean[live], atol=1e-5)
    assert not np.allclose(targets[live], one.probabilities(boards)[live], atol=1e-3)
    # and at 1-ply the ensemble's lookahead reads the mean at its leaves
    ensemble = Ensemble(one.model, [two.model])
    assert np.allclose(lookahead_targets(one.model, boards[:6], 1, others=(two.model,)),
                       ensemble.lookahead(boards[:6], 1), atol=1e-6)
    # an ensemble's copy with other settings (as a rollout makes one) is still the ensemble
    copy = ensemble.replace(plies=1, name="copy")
    assert isinstance(copy, Ensemble) and copy.plies == 1 and copy.name == "copy"
    assert np.allclose(copy.probabilities(boards), ensemble.probabilities(boards), atol=1e-6)


def test_a_workers_part_of_ensemble_targets_carries_its_networks():
    # a part goes to a worker process pickled, the ensemble's other networks with it
    import pickle

    two, shipped = load_bot(FAST_NPZ).model, load_bot(SHIPPED_NPZ).model
    boards = np.stack([Position.start().board, Position.from_position_id("4HPkAxDguWHAIQ").board])
    task = lookahead.TargetsTask(boards, 0, 0.0, False, False, RolloutTargets(), lookahead.Pruning(),
                                (shipped,))
    got = lookahead._targets_task(two, pickle.loads(pickle.dumps(task)))["targets"]
    mean = (Bot(two).probabilities(boards) + Bot(shipped).probabilities(boards)) / 2
    assert np.allclose(got, mean, atol=1e-6) and not np.allclose(got, Bot(two).probabilities(boards), atol=1e-3)


def test_an_ensemble_must_name_files_and_zero_plies_needs_one():
    with pytest.raises(BgaiError, match="plies must be 1 or 2"):
        LookaheadStage(plies=0).check()
    with pytest.raises(BgaiError, match="ensemble network 'nowhere.pt' is not a file"):
        LookaheadStage(plies=0, ensemble="nowhere.pt").check()
    LookaheadStage(plies=0, ensemble=f"{FAST_NPZ}, {FAST_NPZ}").check()
    assert LookaheadStage(ensemble=f"{FAST_NPZ}, {FAST_NPZ}").ensemble_paths() == [str(FAST_NPZ)] * 2


def test_deeper_targets_search_one_ply_further_where_the_lookahead_moved_the_value_most():
    bot = load_bot()
    boards = sample_positions(bot.model, 4, 300, seed=4, epsilon=0.0, rng=np.random.default_rng(2), keep=20)
    one, two = lookahead_targets(bot.model, boards, 1), lookahead_targets(bot.model, boards, 2)
    mixed = lookahead_targets(bot.model, boards, 1, deeper=0.25)
    from bgai.eval.network import equity

    moved = np.abs(equity(one) - equity(bot.probabilities(boards)))
    deep = np.argsort(-moved, kind="stable")[:5]
    assert np.allclose(mixed[deep], two[deep], atol=1e-6)
    rest = np.setdiff1d(np.arange(20), deep)
    assert np.allclose(mixed[rest], one[rest], atol=1e-6)


def test_targets_are_the_same_from_the_torch_model_and_its_numpy_snapshot():
    # The targets evaluate with the numpy pass whatever they are given, the trainer's torch model included
    bot = load_bot()
    model = EquityModel.of(bot.model)
    boards = sample_positions(model, 4, 700, seed=8, epsilon=0.0, rng=np.random.default_rng(8), keep=12)
    torch_bot = Bot(model, plies=1)  # the torch pass, as the trainer evaluates its model
    assert np.allclose(lookahead_targets(model, boards, 1), torch_bot.lookahead(boards, 1), atol=2e-5)
    assert np.allclose(lookahead_targets(model, boards, 1), lookahead_targets(bot.model, boards, 1), atol=1e-6)


def test_a_pruning_net_that_keeps_every_play_changes_no_target_and_one_that_keeps_few_stays_close():
    from bgai.eval.bot import FAST_PRUNER
    from bgai.eval.network import equity
    from bgai.eval.weights import ModelSnapshot
    from bgai.train.lookahead import Pruning

    bot = load_bot()
    boards = sample_positions(bot.model, 4, 900, seed=9, epsilon=0.0, rng=np.random.default_rng(9), keep=10)
    net, info = ModelSnapshot.load_npz(FAST_PRUNER)
    full = lookahead_targets(bot.model, boards, 2)
    assert np.allclose(lookahead_targets(bot.model, boards, 2, pruning=Pruning(net, keep=1000)), full, atol=1e-6)
    pruned = lookahead_targets(bot.model, boards, 2, pruning=Pruning(net, keep=info["keep"]))
    # the pruned lookahead is the bot's own (as load_bot plays with the pruning net), a few mp from full width
    same = Bot(bot.model, plies=2, pruner=net, prune=info["keep"]).lookahead(boards, 2)
    assert np.allclose(pruned, same, atol=1e-6)
    assert np.abs(equity(pruned) - equity(full)).mean() < 0.005


def one_generation(tmp_path, stage: LookaheadStage) -> tuple[EquityModel, np.ndarray, np.ndarray]:
    """Run a tiny model through ``stage``'s one generation (one part): the model it started from, the generation's
    positions and their stored targets."""
    config = load_config(None, {**TINY, "hidden": "8"})
    config.stages = [stage]
    run(config, tmp_path / "run", progress=False)
    torch.manual_seed(config.seed)
    start = EquityModel.create(config.hidden_sizes(), config.net_names(), config.encoder)
    folder = tmp_path / "run" / "data" / f"{stage.name}-000"
    return start, np.load(folder / "positions.npz")["boards"], np.load(folder / "targets-0000.npz")["targets"]


def test_a_run_computes_its_targets_with_the_pruning_net_it_names(tmp_path):
    from bgai.eval.bot import FAST_PRUNER
    from bgai.train.lookahead import Pruning

    stage = LookaheadStage(name="pruned", generations=1, games=4, positions=16, part=16, epochs=1, plies=2,
                           pruner=str(FAST_PRUNER))
    start, boards, targets = one_generation(tmp_path, stage)
    pruning = Pruning.of(stage)
    assert pruning.keep == 5
    assert np.allclose(targets, lookahead_targets(start, boards, 2, pruning=pruning), atol=1e-5)


def test_a_one_net_checkpoint_starts_every_net_of_a_split_model(tmp_path):
    # Given a one-net model saved as a checkpoint
    torch.manual_seed(3)
    one = EquityModel.create((8,), ("all",), 2)
    save_checkpoint(tmp_path / "one.pt", model_payload(one))
    # When a split run starts from it
    config = load_config(None, {**TINY, "nets": "contact,race", "init": str(tmp_path / "one.pt")})
    state = Run(config, tmp_path / "run", resume=False, progress=False)
    try:
        # Then both nets are the one net, so the model plays exactly as it did
        assert state.model.phases == ("contact", "race")
        for name in ("contact", "race"):
            for key, value in one.nets["all"].state_dict().items():
                assert torch.equal(state.model.nets[name].state_dict()[key], value)
        boards = sample_positions(one, 2, 0, seed=1, epsilon=0.0, rng=np.random.default_rng(1), keep=30)
        assert np.allclose(Bot(state.model).probabilities(boards), Bot(one).probabilities(boards), atol=1e-6)
    finally:
        state.close()


def test_a_contact_net_starts_the_crashed_net_of_a_three_net_model(tmp_path):
    # Given a contact and a race net saved as a checkpoint
    torch.manual_seed(5)
    two = EquityModel.create((8,), ("contact", "race"), 2)
    save_checkpoint(tmp_path / "two.pt", model_payload(two))
    # When a run with a crashed net too starts from it
    config = load_config(None, {**TINY, "nets": "contact,crashed,race", "init": str(tmp_path / "two.pt")})
    state = Run(config, tmp_path / "run", resume=False, progress=False)
    try:
        # Then the contact and the crashed net are the contact net, the race net the race net: it plays as before
        assert state.model.phases == ("contact", "crashed", "race")
        for name, was in (("contact", "contact"), ("crashed", "contact"), ("race", "race")):
            for key, value in two.nets[was].state_dict().items():
                assert torch.equal(state.model.nets[name].state_dict()[key], value)
        boards = sample_positions(two, 8, 0, seed=1, epsilon=0.0, rng=np.random.default_rng(1), keep=2000)
        assert np.isin([CONTACT, CRASHED, RACE], classify(boards)).all()
        assert np.allclose(Bot(state.model).probabilities(boards), Bot(two).probabilities(boards), atol=1e-6)
    finally:
        state.close()
    with pytest.raises(BgaiError, match="'contact,crashed,race'"):
        load_config(None, {**TINY, "nets": "crashed,race"}).net_names()


def test_a_version_2_checkpoint_starts_a_version_3_split_model_with_the_new_inputs_at_zero_weight(tmp_path):
    # Given a one-net model on encoder version 2, saved as a checkpoint
    torch.manual_seed(4)
    old = EquityModel.create((8,), ("all",), 2)
    save_checkpoint(tmp_path / "v2.pt", model_payload(old))
    # When a split run on version 3's inputs starts from it
    config = load_config(None, {**TINY, "nets": "contact,race", "encoder": 3, "init": str(tmp_path / "v2.pt")})
    state = Run(config, tmp_path / "run", resume=False, progress=False)
    try:
        # Then it reads version 3, the new inputs' weights are zero, and it plays exactly as the old model
        model = state.model
        assert model.encoder_version == 3 and model.n_inputs == encoding.n_features(3)
        for side in ("own", "opp"):
            for name in ("mobility", "timing", "back_game", "back_game1"):
                column = encoding.LAYOUTS[3].block(f"{side}_{name}").start
                for net in model.nets.values():
                    assert not net.body[0].weight[:, column].any()
        boards = sample_positions(old, 2, 0, seed=1, epsilon=0.0, rng=np.random.default_rng(1), keep=30)
        assert np.allclose(Bot(model).probabilities(boards), Bot(old).probabilities(boards), atol=1e-6)
    finally:
        state.close()
    # A model on more inputs cannot start one on fewer
    newer = tmp_path / "v3.pt"
    save_checkpoint(newer, model_payload(EquityModel.create((8,), ("all",), 3)))
    with pytest.raises(BgaiError, match="lacks the inputs own_mobility"):
        Run(load_config(None, {**TINY, "init": str(newer)}), tmp_path / "run2", resume=False,
                     progress=False)



def test_a_narrower_checkpoint_starts_a_wider_run_as_the_same_network_whose_new_units_learn(tmp_path):
    # Given a split 8-4 model, saved as a checkpoint
    torch.manual_seed(5)
    old = EquityModel.create((8, 4), ("contact", "race"), 2)
    save_checkpoint(tmp_path / "narrow.pt", model_payload(old))
    # When a 12-6 run starts from it
    config = load_config(None, {**TINY, "nets": "contact,race", "encoder": 2, "hidden": "12,6",
                                "init": str(tmp_path / "narrow.pt")})
    state = Run(config, tmp_path / "run", resume=False, progress=False)
    try:
        model = state.model
        assert model.hidden == (12, 6)
        for name, net in model.nets.items():
            was = old.nets[name]
            # Then the old units keep their weights, the new ones have weights in and none out
            assert torch.equal(net.body[0].weight[:8], was.body[0].weight)
            assert net.body[0].weight[8:].abs().sum() > 0
            assert not net.body[2].weight[:, 8:].any() and not net.head.weight[:, 4:].any()
            assert torch.equal(net.body[2].weight[:4, :8], was.body[2].weight)
        # and it evaluates every position exactly as the narrow model
        boards = sample_positions(old, 2, 0, seed=1, epsilon=0.0, rng=np.random.default_rng(1), keep=30)
        assert np.allclose(Bot(model).probabilities(boards), Bot(old).probabilities(boards), atol=1e-6)
        # and one step of learning moves the new units' outgoing weights off zero
        x, phase = inputs(model, boards)
        model.train()
        model(x, phase).sum().backward()
        assert any(net.head.weight.grad[:, 4:].abs().sum() > 0 for net in model.nets.values())
    finally:
        state.close()
    # A deeper or narrower network cannot start from it
    for hidden in ("12", "6,6"):
        with pytest.raises(BgaiError, match="do not grow"):
            Run(load_config(None, {**TINY, "nets": "contact,race", "encoder": 2, "hidden": hidden,
                                            "init": str(tmp_path / "narrow.pt")}), tmp_path / f"run{hidden}",
                         resume=False, progress=False)

@pytest.mark.parametrize("encoder, nets", [(0, ("all",)), (2, ("contact", "race"))])
def test_a_grown_network_computes_what_its_parent_did_before_any_training(encoder, nets):
    # Given a trained-looking 8-4 model (random weights, biases pushed so that units are active and inactive)
    torch.manual_seed(3)
    parent = EquityModel.create((8, 4), nets, encoder)
    boards = sample_positions(parent, 3, 0, seed=2, epsilon=0.0, rng=np.random.default_rng(2), keep=60)
    x, phase = inputs(parent, boards)
    with torch.no_grad():
        before = parent(x, phase)
        # When it grows wider and two layers deeper (each added layer at least as wide as its last)
        grown = parent.grown((12, 4, 6, 9), seed=1)
        after = grown(x, phase)
    # Then it has the new shape and gives the same outputs on every board, by torch and by the numpy pass
    assert grown.hidden == (12, 4, 6, 9) and grown.phases == parent.phases
    assert torch.allclose(before, after, atol=1e-6)
    assert np.allclose(Bot(grown).probabilities(boards), Bot(parent).probabilities(boards), atol=1e-6)
    # and its added layers start as the identity on the units the parent had, their new units silent
    for net in grown.nets.values():
        for added in (net.body[4], net.body[6]):
            assert torch.equal(added.weight[:4, :4], torch.eye(4)) and not added.bias[:4].any()
            assert added.weight[4:].abs().sum() > 0  # (a new unit's weights in)
        assert not net.body[6].weight[:, 4:].any() and not net.head.weight[:, 4:].any()  # (and out)
    # and every weight learns: one step's gradient reaches the new layers' and units' weights
    grown.train()
    grown(x, phase).sum().backward()
    for net in grown.nets.values():
        assert net.body[6].weight.grad.abs().sum() > 0 and net.head.weight.grad[:, 4:].abs().sum() > 0


def test_growth_keeps_every_layer_and_narrows_none():
    model = EquityModel.create((8, 4), ("all",), 0)
    for hidden in ((8,), (6, 4), (8, 4, 3), (8, 2, 4)):
        with pytest.raises(ValueError, match="do not grow"):
            model.grown(hidden)


def growth_config(hidden: str, stages: list[tuple[str, str, int]]) -> str:
    """A TD run on encoder 0 from ``hidden`` through ``stages`` of (name, hidden to grow to or "", games), each
    stage's rounds of 32 games, TD(0), a warm-up of 32 games after a growth."""
    text = (f'run_name = "grown"\nhidden = "{hidden}"\nencoder = 0\nbench_games = 2\nfinal_bench_games = 2\n'
            f"threads = 1\nworkers = 1\ncheckpoint_minutes = 1000000.0\n")
    for name, grow, games in stages:
        text += (f'\n[[stage]]\nname = "{name}"\nmethod = "td"\ngames = {games}\nparallel_games = 32\nlam = 0.0\n'
                 f"bench_every = 1000000\n" + (f'hidden = "{grow}"\nwarmup = 32\n' if grow else ""))
    return text


GROWN = growth_config("4", [("small", "", 64), ("wide", "8", 64), ("deep", "8,8", 64)])


def test_a_run_grows_its_model_stage_by_stage_and_resumes_grown(tmp_path, monkeypatch, load_script):
    path = tmp_path / "grown.toml"
    path.write_text(GROWN)
    config = load_config(path)
    assert [config.hidden_at(i) for i in range(3)] == [(4,), (8,), (8, 8)]
    # Given the run stopped (killed) at the end of the deep stage's first round, a checkpoint written there
    calls = []
    real_fit = Learner.fit

    def fit_then_die(self, *args, **kwargs):
        loss = real_fit(self, *args, **kwargs)
        calls.append(tuple(self.model.hidden))
        if len(calls) == 5:
            Run.save(state_holder[0], self.optimizer)
            raise KeyboardInterrupt
        return loss

    state_holder = []
    real_init = Run.__init__

    def keep(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        state_holder[:] = [self]

    monkeypatch.setattr(Run, "__init__", keep)
    monkeypatch.setattr(Learner, "fit", fit_then_die)
    with pytest.raises(KeyboardInterrupt):
        run(config, tmp_path / "run", progress=False)
    # Then each stage learned on its own shape, the model grown as the stage began
    assert calls == [(4,), (4,), (8,), (8,), (8, 8)]
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert saved["stage"] == 2 and tuple(saved["hidden"]) == (8, 8)
    # And resumed, the run goes on with the grown model and ends with it
    monkeypatch.setattr(Learner, "fit", real_fit)
    summary = run(config, tmp_path / "run", resume=True, progress=False)
    assert summary["games"] == 192
    assert model_from_checkpoint(load_checkpoint(tmp_path / "run" / "checkpoint.pt")).hidden == (8, 8)
    # and each stage's network stays playable: the growth's milestones
    for name, hidden in (("small", (4,)), ("wide", (8,)), ("deep", (8, 8))):
        assert load_bot(tmp_path / "run" / "generations" / f"{name}.pt").model.hidden == hidden
    # and each launch logged its own settings, which benchmarks/run_speed.py reads beside its speed
    launches = load_script("benchmarks/run_speed.py").launches(tmp_path / "run", None, None, 0)
    assert len(launches) == 2 and [launch["stages"] for launch in launches] == [["small", "wide"], ["deep"]]
    assert all(launch["threads"] == 1 and launch["workers"] == 1 and launch["games"] > 0 for launch in launches)


def test_a_stage_keeps_a_moving_average_of_its_weights_across_a_resume(tmp_path, monkeypatch):
    """``average_half_life``: each round folds the model's weights into an average (half of it kept every half-life
    of games); it survives a checkpoint and resume, is saved as the stage's ``-avg`` network at its end, and the
    model learns as it would without it."""
    text = growth_config("4", [("avg", "", 128)]).replace("bench_every = 1000000\n",
                                                         "bench_every = 1000000\naverage_half_life = 32\n")
    (tmp_path / "avg.toml").write_text(text)
    config = load_config(tmp_path / "avg.toml")
    assert config.stages[0].average_half_life == 32
    # Run through, recording the weights after each round's learning
    after_rounds = []
    real_fit = Learner.fit

    def record(self, *args, **kwargs):
        loss = real_fit(self, *args, **kwargs)
        after_rounds.append({k: v.detach().clone() for k, v in self.model.state_dict().items()})
        return loss

    monkeypatch.setattr(Learner, "fit", record)
    run(config, tmp_path / "whole", progress=False)
    assert len(after_rounds) == 4  # 128 games in rounds of 32
    # The average: the first round's weights, then each round keeps half (32 games is one half-life)
    expected = after_rounds[0]
    for weights in after_rounds[1:]:
        expected = {k: 0.5 * expected[k] + 0.5 * weights[k] for k in expected}
    averaged = load_checkpoint(tmp_path / "whole" / "generations" / "avg-avg.pt")["model"]
    last = load_checkpoint(tmp_path / "whole" / "generations" / "avg.pt")["model"]
    for key, value in expected.items():
        torch.testing.assert_close(averaged[key], value)
        assert torch.equal(last[key], after_rounds[-1][key])
    assert any(not torch.equal(averaged[k], last[k]) for k in last)
    assert load_bot(tmp_path / "whole" / "generations" / "avg-avg.pt").model.hidden == (4,)
    # Killed after its second round (a checkpoint written there) and resumed, the run ends with the same average
    calls = []

    def die_after_two(self, *args, **kwargs):
        loss = real_fit(self, *args, **kwargs)
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return loss

    real_save_if_due = Run.save_if_due
    monkeypatch.setattr(Run, "save_if_due", lambda self, optimizer: self.save(optimizer))  # every round
    monkeypatch.setattr(Learner, "fit", die_after_two)
    with pytest.raises(KeyboardInterrupt):
        run(config, tmp_path / "resumed", progress=False)
    assert load_checkpoint(tmp_path / "resumed" / "checkpoint.pt")["average"] is not None
    monkeypatch.setattr(Learner, "fit", real_fit)
    monkeypatch.setattr(Run, "save_if_due", real_save_if_due)
    run(config, tmp_path / "resumed", resume=True, progress=False)
    resumed = load_checkpoint(tmp_path / "resumed" / "generations" / "avg-avg.pt")["model"]
    for key, value in averaged.items():
        torch.testing.assert_close(resumed[key], value)


def test_the_warm_up_raises_the_learning_rate_from_zero_then_the_schedule_runs():
    stage = TDStage(games=1000, lr=1e-3, lr_end=1e-4, warmup=100)
    assert td.learning_rate(stage, 0) == pytest.approx(1e-5)
    assert td.learning_rate(stage, 49) == pytest.approx(0.5 * (1e-3 - 9e-4 * 49 / 1000))
    assert td.learning_rate(stage, 500) == pytest.approx(1e-3 + (1e-4 - 1e-3) * 0.5)
    assert td.learning_rate(TDStage(lr=2e-4, lr_end=-1), 10) == 2e-4


def test_a_growth_that_would_narrow_a_layer_is_refused_with_the_config(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(GROWN.replace('hidden = "8,8"', 'hidden = "8,2"'))
    with pytest.raises(BgaiError, match="stage deep: hidden layers \\[8, 2\\] do not grow \\[8\\]"):
        load_config(path)
    path.write_text(GROWN.replace("warmup = 32", "warmup = 65", 1))
    with pytest.raises(BgaiError, match="warmup must be 0..games"):
        load_config(path)


def test_a_tiny_run_grown_from_scratch_beats_random_after_a_few_hundred_games(tmp_path):
    # Given a run from random weights: 384 games of TD(0) with sampled backups at 16 hidden units, then grown
    # to 16-16 and 128 games more
    text = growth_config("16", [("small", "", 384), ("deep", "16,16", 128)])
    path = tmp_path / "tiny.toml"
    path.write_text(text)
    run(load_config(path), tmp_path / "run", progress=False)
    model = model_from_checkpoint(load_checkpoint(tmp_path / "run" / "checkpoint.pt"))
    assert model.hidden == (16, 16)
    # Then it beats a random player over 200 duplicate games by a margin well beyond their standard error
    from bgai.core.game import play_duplicate
    from bgai.players import RandomPlayer

    result = play_duplicate(Bot(ModelSnapshot.of(model)), RandomPlayer(), 100, seed=9).summary()
    assert result["ppg"] > 0.3 and result["ppg"] > 4 * result["ppg_se"], result


def test_a_pruner_that_is_not_a_file_is_refused(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[[stage]]\nmethod = "lookahead"\npruner = "no/such/pruner.npz"\n')
    with pytest.raises(BgaiError, match="pruner 'no/such/pruner.npz' is not a file"):
        load_config(path)


def test_rollout_targets_replace_the_lookahead_where_it_moved_the_value_most():
    from bgai.eval.network import equity
    from bgai.eval.rollout import rollout_values

    bot = load_bot()
    boards = sample_positions(bot.model, 4, 300, seed=6, epsilon=0.0, rng=np.random.default_rng(5), keep=12)
    one = lookahead_targets(bot.model, boards, 1)
    mixed = lookahead_targets(bot.model, boards, 1, rollouts=RolloutTargets(0.25, trials=36, truncate=2))
    moved = np.abs(equity(one) - equity(bot.probabilities(boards)))
    rolled = np.argsort(-moved, kind="stable")[:3]
    rest = np.setdiff1d(np.arange(12), rolled)
    assert np.allclose(mixed[rest], one[rest], atol=1e-6)
    assert not np.allclose(mixed[rolled], one[rolled], atol=1e-3)  # rollouts, not the lookahead
    import zlib

    seed = zlib.crc32(np.ascontiguousarray(boards).tobytes())
    again = rollout_values(Bot(bot.model), boards[rolled], trials=36, truncate=2, seed=seed)
    assert np.allclose(mixed[rolled], again, atol=1e-6)  # the rollouts of those positions, seeded by the part
    assert np.all(np.abs(equity(mixed[rolled]) - equity(one[rolled])) < 0.5)  # two estimates of one value


def test_cube_picked_rollouts_go_where_the_models_cube_decisions_are_closest():
    from bgai.core.cube import money_margin

    bot = load_bot()
    boards = sample_positions(bot.model, 4, 300, seed=6, epsilon=0.0, rng=np.random.default_rng(5), keep=12)
    one = lookahead_targets(bot.model, boards, 1)
    mixed = lookahead_targets(bot.model, boards, 1, rollouts=RolloutTargets(0.25, trials=36, truncate=2, pick="cube"))
    values = bot.probabilities(boards)
    closest = np.argsort(money_margin(values, boards), kind="stable")[:3]
    assert list(rollout_rows(boards, values, one, 3, "cube")) == list(closest)
    rest = np.setdiff1d(np.arange(12), closest)
    assert np.allclose(mixed[rest], one[rest], atol=1e-6)
    assert not np.allclose(mixed[closest], one[closest], atol=1e-3)
    # and with deeper values too, each pick is made on the lookahead's own values, as without them
    both = lookahead_targets(bot.model, boards, 1, deeper=0.25,
                             rollouts=RolloutTargets(0.25, trials=36, truncate=2, pick="moved"))
    alone = lookahead_targets(bot.model, boards, 1, rollouts=RolloutTargets(0.25, trials=36, truncate=2))
    rolled = rollout_rows(boards, values, one, 3, "moved")
    assert np.allclose(both[rolled], alone[rolled], atol=1e-6)


def test_a_run_learns_from_rollout_targets(tmp_path):
    # Given a lookahead stage that rolls out a quarter of its positions
    stage = LookaheadStage(name="rolled", generations=1, games=4, positions=24, part=24, epochs=1, rollouts=0.25,
                           rollout_trials=36, rollout_truncate=2)
    start, boards, targets = one_generation(tmp_path, stage)
    # Then the stored targets are the frozen starting model's: its rollouts where its 1-ply moved most, else 1-ply
    expected = lookahead_targets(start, boards, 1, rollouts=RolloutTargets(0.25, trials=36, truncate=2))
    assert np.allclose(targets, expected, atol=1e-5)
    assert not np.allclose(targets, lookahead_targets(start, boards, 1), atol=1e-4)


@pytest.mark.parametrize("text", ['rollouts = 1.5', 'rollout_trials = 0', 'rollout_truncate = -1'])
def test_bad_rollout_target_settings_are_refused(tmp_path, text):
    path = tmp_path / "bad.toml"
    path.write_text(f'[[stage]]\nmethod = "lookahead"\n{text}\n')
    with pytest.raises(BgaiError, match="rollouts must be a share 0..1, rollout_trials at least 1"):
        load_config(path)


def test_an_unknown_rollout_pick_is_refused(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[[stage]]\nmethod = "lookahead"\nrollout_pick = "window"\n')
    with pytest.raises(BgaiError, match="rollout_pick must be one of moved, cube, got 'window'"):
        load_config(path)


def test_bf16_targets_stay_close_to_float32_ones():
    # bfloat16 keeps 8 bits of mantissa: the 1-ply targets move a little, nowhere near a held-out error (~0.017)
    bot = load_bot()
    boards = sample_positions(bot.model, 4, 500, seed=5, epsilon=0.0, rng=np.random.default_rng(3), keep=40)
    exact, fast = lookahead_targets(bot.model, boards, 1), lookahead_targets(bot.model, boards, 1, bf16=True)
    from bgai.eval.network import equity

    moved = np.abs(equity(exact) - equity(fast))
    assert fast.dtype == np.float32 and np.isfinite(fast).all()
    assert moved.mean() < 0.004 and moved.max() < 0.03
    assert not np.array_equal(exact, fast)  # it did run in bfloat16


def test_the_pruning_net_script_learns_the_network_s_values_and_writes_a_playable_net(tmp_path):
    out, figures = tmp_path / "pruner.npz", tmp_path / "pruner.json"
    script = Path(__file__).resolve().parents[1] / "training" / "pruner.py"
    run = subprocess.run([sys.executable, str(script), "--games", "40", "--epochs", "2", "--hidden", "16",
                          "--out", str(out), "--json", str(figures)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    from bgai.eval.weights import ModelSnapshot

    pruner, info = ModelSnapshot.load_npz(out)
    assert pruner.hidden == (16,) and info["games"] == 40
    assert pruner.encoder_version == 0 and info["keep"] == 5 and info["command"].startswith("python training/")
    recall = [info["recall"][str(k)] for k in range(1, 9)]
    assert recall == sorted(recall) and recall[-1] > recall[0] > 0.2  # more kept, the more often the best
    assert json.loads(figures.read_text())["equity_mae"] == info["equity_mae"]
    bot = load_bot(plies=1, pruner=out)
    assert bot.choose_move(Position.start(), (4, 2)) in Position.start().legal_moves((4, 2))


def test_a_second_run_into_a_run_folder_in_use_is_refused_naming_the_first(tmp_path):
    """Given a training run holding its folder (here a process that holds the lock the way ``run`` does),
    When a second run is started into that folder, Then it is refused at once, naming the first's PID, and has
    written nothing there; once the first has ended (even killed), the folder is free again."""
    path = tmp_path / "run.toml"
    path.write_text(STAGED)
    folder = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom bgai.core.files import locked_folder\n"
                               f"with locked_folder({str(folder)!r}):\n    print('held', flush=True)\n"
                               "    time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(BgaiError, match=f"in use by another training run \\(PID {holder.pid}\\)"):
            run(load_config(path, {"generations": 1}), folder, progress=False)
        assert sorted(p.name for p in folder.iterdir()) == [".lock"]
    finally:
        holder.kill()
        holder.wait()
    # The kill let go of the lock.
    run(load_config(path, {"generations": 1}, {"warm-up.games": 4, "search.games": 4}), folder, progress=False)
    assert (folder / "checkpoint.pt").exists()


# Rollout labels (RolloutStage) ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def label_folder(tmp_path_factory):
    from bgai.train.labels import LabelSettings, label_shard

    folder = tmp_path_factory.mktemp("labels")
    settings = LabelSettings(positions=60, candidates=1.5, trials=2, truncate=1, batch=30, seed=2)
    bot = load_bot()
    for shard in (0, 1):
        label_shard(bot, folder, shard, settings, command="test")
    return folder


def test_held_out_positions_depend_on_the_board_alone():
    from bgai.train.rollouts import held_out

    boards = sample_positions(EquityModel.create((8,), ("all",), 2), 20, 0, seed=4, epsilon=0.1,
                              rng=np.random.default_rng(4), keep=400)
    hold = held_out(boards, 0.25)
    assert 0.15 < hold.mean() < 0.35
    assert np.array_equal(held_out(boards[::-1], 0.25), hold[::-1])
    assert np.array_equal(held_out(boards[:50], 0.25), hold[:50])


def test_labelled_positions_are_learned_once_with_their_copies_labels_averaged(label_folder):
    from bgai.train.labels import load_labels
    from bgai.train.rollouts import labelled_positions

    raw = load_labels(label_folder)
    boards, labels, ply1, decision = labelled_positions(str(label_folder))
    assert (decision == -1).all()  # shards of sampled positions: no decision's plays side by side
    assert len(boards) == len(np.unique(raw.boards, axis=0)) <= len(raw)
    for i in (0, len(boards) // 2, len(boards) - 1):
        copies = (raw.boards == boards[i]).all(axis=1)
        np.testing.assert_allclose(labels[i], raw.probabilities[copies].mean(axis=0), atol=1e-6)
        np.testing.assert_allclose(ply1[i], raw.ply1[copies].mean(axis=0), atol=1e-6)
    # by how their shards picked them: the two kinds together are all of them
    uniform = labelled_positions(str(label_folder), "uniform").boards
    disputed = labelled_positions(str(label_folder), "disagreement").boards
    assert len(uniform) and len(disputed)
    assert {b.tobytes() for b in uniform} | {b.tobytes() for b in disputed} == {b.tobytes() for b in boards}
    assert {b.tobytes() for b in uniform} == {b.tobytes() for b in raw.boards[raw.picked == 0]}


def test_a_tiny_generation_learns_its_rollout_labels_keeps_its_best_epoch_and_resumes(label_folder, tmp_path):
    from bgai.train.config import RolloutStage
    from bgai.train.rollouts import held_out, labelled_positions

    config = load_config(None, {**TINY, "hidden": "8"})
    config.stages = [RolloutStage(labels=str(label_folder), epochs=2, lr=3e-3, lr_end=1e-3, batch_size=16,
                                  validation=0.25, optimizer="adamw", weight_decay=1e-4, bench_every=2)]
    run(config, tmp_path / "run", progress=False)
    epochs = json.loads((tmp_path / "run" / "rollouts-epochs.json").read_text())
    assert [e["epoch"] for e in epochs] == [0, 1, 2]
    best = min(epochs[1:], key=lambda e: e["equity_mae"])
    kept = load_checkpoint(tmp_path / "run" / "best-rollouts.pt")
    assert kept["step"] == best["epoch"]
    # the run's model is the best epoch's, measured again on the held-out positions
    boards, labels, _, _ = labelled_positions(str(label_folder))
    hold = held_out(boards, 0.25)
    final = model_from_checkpoint(load_checkpoint(tmp_path / "run" / "checkpoint.pt"))
    again = evaluation_error(final, boards[hold], labels[hold])
    assert again["equity_mae"] == pytest.approx(best["equity_mae"], abs=1e-6)
    # a longer stage resumes from the checkpoint, its optimizer and its epochs
    config.stages[0].epochs = 3
    run(config, tmp_path / "run", resume=True, progress=False)
    assert [e["epoch"] for e in json.loads((tmp_path / "run" / "rollouts-epochs.json").read_text())] == [0, 1, 2, 3]


def test_anchors_are_the_plays_of_labelled_positions_valued_by_the_starting_model_and_kept(label_folder, tmp_path):
    from bgai.core.movegen import afterstates
    from bgai.train.config import RolloutStage
    from bgai.train.rollouts import anchor_positions, labelled_positions

    boards = labelled_positions(str(label_folder)).boards
    start = EquityModel.create((8,), ("all",), 2)
    anchors, targets = anchor_positions(start, boards, 2.0, seed=5)
    assert abs(len(anchors) - 2 * len(boards)) <= 2
    assert not np.isin(classify(anchors), (OVER, BEAROFF)).any()
    # each anchor is a play of one of the boards: a position after some roll's play
    plays = afterstates(np.repeat(boards, 21, axis=0), np.tile(ROLLS, (len(boards), 1)))
    assert {a.tobytes() for a in anchors} <= {p.tobytes() for p in plays.after}
    with torch.inference_mode():
        np.testing.assert_allclose(targets, start(*inputs(start, anchors)).numpy(), atol=1e-6)
    again, _ = anchor_positions(start, boards, 2.0, seed=5)
    assert np.array_equal(again, anchors)
    # A stage with anchors writes them before its first epoch and learns them beside the labels
    config = load_config(None, {**TINY, "hidden": "8"})
    config.stages = [RolloutStage(labels=str(label_folder), epochs=1, lr=3e-3, lr_end=1e-3, batch_size=16,
                                  validation=0.25, anchor=1.0, bench_every=1)]
    run(config, tmp_path / "run", progress=False)
    with np.load(tmp_path / "run" / "anchors-rollouts.npz") as saved:
        assert len(saved["boards"]) > 0 and saved["targets"].shape == (len(saved["boards"]), 5)
    # resumed for a longer stage, the same anchors are read back; without them the stage refuses to guess
    kept = (tmp_path / "run" / "anchors-rollouts.npz").read_bytes()
    config.stages[0].epochs = 2
    run(config, tmp_path / "run", resume=True, progress=False)
    assert (tmp_path / "run" / "anchors-rollouts.npz").read_bytes() == kept
    (tmp_path / "run" / "anchors-rollouts.npz").unlink()
    config.stages[0].epochs = 3
    with pytest.raises(BgaiError, match="anchors-rollouts.npz is missing"):
        run(config, tmp_path / "run", resume=True, progress=False)


def test_best_play_anchors_are_the_plays_the_starting_model_chooses_for_seeded_rolls(label_folder):
    from bgai.core.movegen import afterstates
    from bgai.train.config import RolloutStage
    from bgai.train.rollouts import anchor_positions, labelled_positions

    boards = labelled_positions(str(label_folder)).boards
    start = EquityModel.create((8,), ("all",), 2)
    anchors, targets = anchor_positions(start, boards, 3.0, seed=5, plays="best")
    assert 0 < len(anchors) <= 3 * len(boards)
    assert not np.isin(classify(anchors), (OVER, BEAROFF)).any()
    with torch.inference_mode():
        np.testing.assert_allclose(targets, start(*inputs(start, anchors)).numpy(), atol=1e-6)
    # each anchor is, for one of the 21 rolls of one of the boards, the play the model's bot chooses there
    bot = Bot(ModelSnapshot.of(start))
    expanded = np.repeat(boards, 21, axis=0)
    dice = np.tile(ROLLS, (len(boards), 1))
    choices = bot.choose_many(expanded, dice)
    assert {a.tobytes() for a in anchors} <= {c.tobytes() for c in choices}
    # ... and not merely any play: a roll's worse plays are not among them
    plays = afterstates(expanded, dice).after
    assert len({p.tobytes() for p in plays} - {c.tobytes() for c in choices}) > 0
    again, _ = anchor_positions(start, boards, 3.0, seed=5, plays="best")
    assert np.array_equal(again, anchors)
    with pytest.raises(BgaiError, match="whole number"):
        RolloutStage(labels=str(label_folder), anchor=1.5, anchor_plays="best").check()
    with pytest.raises(BgaiError, match="anchor_plays must be one of"):
        RolloutStage(labels=str(label_folder), anchor=1, anchor_plays="worst").check()


@pytest.fixture(scope="module")
def plays_folder(tmp_path_factory):
    from bgai.train.labels import LabelSettings, label_shard

    folder = tmp_path_factory.mktemp("plays")
    settings = LabelSettings(positions=48, candidates=1.5, trials=2, truncate=1, batch=30, seed=3, plays=4)
    bot = load_bot()
    for shard in (0, 1):
        label_shard(bot, folder, shard, settings, command="test")
    return folder


def test_pair_loss_measures_the_differences_within_a_group_not_what_they_share():
    from bgai.train.learner import pair_loss

    target = torch.tensor([[0.5, 0.1, 0.0, 0.1, 0.0], [0.6, 0.1, 0.0, 0.1, 0.0], [0.3, 0.0, 0.0, 0.2, 0.0]])
    groups = torch.tensor([7, 7, 9])
    # a shift common to a group (here both members' win chance + 0.05: equity + 0.1) costs nothing
    shifted = target + torch.tensor([[0.05, 0, 0, 0, 0]])
    assert float(pair_loss(shifted, target, groups)) == pytest.approx(0.0, abs=1e-12)
    # a group of one adds nothing, whatever its error
    lone = target.clone()
    lone[2, 0] = 0.9
    assert float(pair_loss(lone, target, groups)) == pytest.approx(0.0, abs=1e-12)
    # the first play 0.1 in equity worse, the second as it was: centred errors -0.05 and +0.05, mean of squares
    # over the three rows
    worse = target.clone()
    worse[0, 0] -= 0.05
    assert float(pair_loss(worse, target, groups)) == pytest.approx((0.05**2 + 0.05**2) / 3, rel=1e-5)


def test_the_outcome_loss_is_the_cross_entropy_of_the_six_results():
    from bgai.train.learner import outcome_loss, outcomes

    # win 0.6 of which gammons 0.2 and backgammons 0.05; lose 0.4 of which gammons 0.1 and backgammons 0.02
    target = torch.tensor([[0.6, 0.2, 0.05, 0.1, 0.02]])
    six = outcomes(target)
    np.testing.assert_allclose(six.numpy(), [[0.4, 0.15, 0.05, 0.3, 0.08, 0.02]], atol=1e-6)
    # at the target it is the target's entropy, and anywhere else more (Gibbs' inequality), here by their KL
    entropy = -float((six * six.log()).sum())
    assert float(outcome_loss(target, target)) == pytest.approx(entropy, rel=1e-5)
    other = torch.tensor([[0.55, 0.25, 0.01, 0.12, 0.03]])
    kl = float((six * (six / outcomes(other)).log()).sum())
    assert float(outcome_loss(other, target)) == pytest.approx(entropy + kl, rel=1e-5) and kl > 0
    # a certain single win the network calls impossible costs a large but finite loss, not inf or nan
    assert 10 < float(outcome_loss(torch.tensor([[0.0, 0.0, 0.0, 0.0, 0.0]]),
                                   torch.tensor([[1.0, 0.0, 0.0, 0.0, 0.0]]))) < 20
    with pytest.raises(ValueError, match="loss must be one of"):
        Learner(EquityModel.create((8,), ("all",), 2), 1e-3, 16, 1, loss="mse")


def test_a_stage_learns_its_labels_with_the_outcome_loss(label_folder, tmp_path, monkeypatch):
    from bgai.train import learner
    from bgai.train.config import LOSSES as config_losses
    from bgai.train.config import RolloutStage
    from bgai.train.rollouts import labelled_positions

    boards, labels, _, _ = labelled_positions(str(label_folder))
    save_checkpoint(tmp_path / "start.pt", model_payload(EquityModel.create((8,), ("all",), 2)))

    def loss_of(path):
        model = model_from_checkpoint(load_checkpoint(path))
        with torch.inference_mode():
            return float(learner.outcome_loss(model(*inputs(model, boards)), torch.from_numpy(labels).clamp(0, 1)))

    assert tuple(learner.LOSSES) == config_losses  # (the names the config checks)
    calls = {name: 0 for name in learner.LOSSES}
    for name, loss in list(learner.LOSSES.items()):
        monkeypatch.setitem(learner.LOSSES, name, lambda p, t, name=name, loss=loss:
                            calls.update({name: calls[name] + 1}) or loss(p, t))
    config = load_config(None, {**TINY, "hidden": "8", "encoder": 2, "init": str(tmp_path / "start.pt")})
    config.stages = [RolloutStage(labels=str(label_folder), epochs=2, lr=3e-3, lr_end=1e-3, batch_size=16,
                                  validation=0.25, loss="outcomes", bench_every=2)]
    run(config, tmp_path / "run", progress=False)
    # every minibatch learned with the outcome loss, none with bce
    assert calls["outcomes"] >= 2 and calls["bce"] == 0
    epochs = json.loads((tmp_path / "run" / "rollouts-epochs.json").read_text())
    assert all("train_outcomes" in e for e in epochs[1:])
    assert loss_of(tmp_path / "run" / "checkpoint.pt") < loss_of(tmp_path / "start.pt")
    # and a lookahead stage (a distillation, as ens5-outcomes ran) learns with it too
    calls.update(outcomes=0, bce=0)
    config.stages = [LookaheadStage(name="distil", generations=1, games=6, positions=80, part=80, epochs=1, plies=0,
                                    ensemble=str(FAST_NPZ), loss="outcomes")]
    run(config, tmp_path / "distil", progress=False)
    assert calls["outcomes"] >= 1 and calls["bce"] == 0


def test_a_stage_learns_the_differences_between_a_decisions_plays(plays_folder, label_folder, tmp_path):
    from bgai.train.config import RolloutStage
    from bgai.train.labels import load_labels
    from bgai.train.rollouts import labelled_positions

    raw = load_labels(plays_folder)
    labelled = labelled_positions(str(plays_folder))
    # each decision of each shard one number, shared by its plays (numbered apart across shards)
    for i in (0, len(labelled.boards) - 1):
        copy = np.flatnonzero((raw.boards == labelled.boards[i]).all(axis=1))[0]
        same = (raw.shard == raw.shard[copy]) & (raw.decision == raw.decision[copy])
        mates = {b.tobytes() for b in raw.boards[same]}
        assert mates == {b.tobytes() for b in labelled.boards[labelled.decision == labelled.decision[i]]}
    assert labelled.decision.min() >= 0 and len(np.unique(labelled.decision)) == len(
        np.unique(raw.shard.astype(np.int64) * 100_000 + raw.decision))
    from bgai.train.learner import pair_loss

    def differences_error(model):
        with torch.inference_mode():
            pred = model(*inputs(model, labelled.boards))
        return float(pair_loss(pred, torch.from_numpy(labelled.labels).clamp(0, 1),
                               torch.from_numpy(labelled.decision)))

    # the same start, the same epochs, with and without the differences' loss: with it they are learned better
    save_checkpoint(tmp_path / "start.pt", model_payload(EquityModel.create((8,), ("all",), 2)))
    errors = {}
    for pairs in (0.0, 30.0):
        config = load_config(None, {**TINY, "hidden": "8", "encoder": 2, "init": str(tmp_path / "start.pt")})
        config.stages = [RolloutStage(labels=str(plays_folder), epochs=3, lr=3e-3, lr_end=1e-3, batch_size=16,
                                      validation=0.25, pairs=pairs, bench_every=3)]
        run(config, tmp_path / f"run-{pairs}", progress=False)
        errors[pairs] = differences_error(model_from_checkpoint(load_checkpoint(tmp_path / f"run-{pairs}" /
                                                                                "checkpoint.pt")))
    start = differences_error(model_from_checkpoint(load_checkpoint(tmp_path / "start.pt")))
    assert errors[30.0] < errors[0.0] and errors[30.0] < start, (start, errors)
    # shards of sampled positions have no decisions to compare: the stage says so
    config.stages = [RolloutStage(labels=str(label_folder), epochs=1, validation=0.25, pairs=1.0)]
    with pytest.raises(BgaiError, match="bgai label --plays"):
        run(config, tmp_path / "other", progress=False)


def test_the_differences_loss_can_read_other_targets_than_the_levels():
    # Given one start, one seed, and positions in decisions of two

    rng = np.random.default_rng(3)
    boards = np.stack([Position.start().play(m, d).after.board for d in ("31", "42", "65")
                       for m in [str(x) for x in Position.start().legal_moves(d)][:2]])
    targets = rng.uniform(0.1, 0.9, size=(len(boards), 5)).astype(np.float32)
    targets[:, 1:] *= 0.2
    groups = np.repeat(np.arange(len(boards) // 2), 2)
    start = EquityModel.create((8,), ("all",), 2)

    def trained(pair_targets):
        model = EquityModel.create((8,), ("all",), 2)
        model.load_state_dict(start.state_dict())
        learner = Learner(model, 1e-2, 4, 2)
        loss = learner.fit(boards, targets, np.random.default_rng(0), groups=groups, pairs=10.0,
                           pair_targets=pair_targets)
        return loss, torch.cat([p.detach().flatten() for p in model.parameters()])

    # When the differences' loss reads the targets themselves, nothing changes; other targets, another model
    same, plain = trained(targets), trained(None)
    assert same[0] == plain[0] and torch.equal(same[1], plain[1])
    other = targets.copy()
    other[::2, 0] += 0.05  # every decision's first play 0.05 better: other differences, other levels alike
    changed = trained(other)
    assert changed[0] != plain[0] and not torch.equal(changed[1], plain[1])
    with pytest.raises(ValueError, match="pair_targets"):
        trained(targets[:-1])


def test_pairs_rollouts_is_a_true_or_false_setting(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text("[[stage]]\nmethod = 'rollouts'\npairs_rollouts = true\n")
    assert load_config(path).stages[0].pairs_rollouts is True
    assert load_config(path, qualified={"rollouts.pairs_rollouts": "false"}).stages[0].pairs_rollouts is False
    with pytest.raises(BgaiError, match="true or false"):
        load_config(path, qualified={"rollouts.pairs_rollouts": "yes"})
    from bgai.frontends.cli import build_parser

    args = build_parser().parse_args(["train", "--pairs-rollouts", "false"])
    assert args.pairs_rollouts == "false"  # (read by the config's rules, not bool("false"))


@pytest.mark.parametrize("setting, message", [
    ("optimizer = 'sgd'", "optimizer"), ("validation = 1.0", "validation"), ("ply1 = 2.0", "ply1"),
    ("epochs = 0", "epochs"), ("picks = 'some'", "picks"), ("anchor = -1.0", "anchor"),
    ("pairs = -1.0", "pairs"), ("loss = 'softmax'", "loss must be one of bce, outcomes"),
])
def test_a_rollouts_stage_refuses_bad_settings(tmp_path, setting, message):
    path = tmp_path / "bad.toml"
    path.write_text(f"[[stage]]\nmethod = 'rollouts'\n{setting}\n")
    with pytest.raises(BgaiError, match=message):
        load_config(path)


def test_a_rollouts_stage_without_shards_says_so(tmp_path):
    from bgai.train.config import RolloutStage

    config = load_config(None, TINY)
    config.stages = [RolloutStage(labels=str(tmp_path / "none"), epochs=1)]
    with pytest.raises(BgaiError, match="no label shards"):
        run(config, tmp_path / "run", progress=False)


#: The learner's devices on this machine: the CPU, and CUDA where torch sees one (a lent GPU machine).
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
def test_the_learner_takes_the_same_steps_on_every_device_and_leaves_the_model_on_the_cpu(device):
    # Given a model, positions and targets (decisions' plays in pairs, for the differences' loss too)
    boards = sample_positions(EquityModel.create((8,), ("all",), 2), 4, 0, seed=3, epsilon=0.1,
                              rng=np.random.default_rng(3), keep=64)
    targets = Bot(EquityModel.create((8,), ("all",), 2)).probabilities(boards)
    groups = np.repeat(np.arange(len(boards) // 2), 2)
    torch.manual_seed(4)
    start = EquityModel.create((12, 6), ("contact", "race"), 2)

    def trained(on: str) -> EquityModel:
        model = EquityModel.create((12, 6), ("contact", "race"), 2)
        model.load_state_dict(start.state_dict())
        learner = Learner(model, 1e-2, 16, 2, device=on)
        for seed in (0, 1):  # two fits: the optimizer's state goes to the device and back in between
            learner.fit(boards, targets, np.random.default_rng(seed), lr=(1e-2, 1e-3), groups=groups, pairs=1.0)
        return model

    # When it learns them on the CPU and on the device
    reference, moved = trained("cpu"), trained(device)
    # Then the weights agree within float tolerance, and the model is back on the CPU
    for (name, a), b in zip(reference.state_dict().items(), moved.state_dict().values()):
        assert b.device.type == "cpu" and torch.allclose(a, b, atol=1e-5), name


def test_the_cpu_learner_steps_as_torchs_adam_does_fused_and_stays_fused_when_a_run_resumes():
    """Given a model, positions and targets, When a CPU learner (torch's fused Adam) and one with torch's default
    Adam in its place fit them from the same weights, Then they take the same steps; and When a resumed run's new
    learner loads the default one's saved state (a checkpoint written before the learner was fused), Then it steps
    fused again and still in step with it."""
    boards = sample_positions(EquityModel.create((8,), ("all",), 2), 4, 0, seed=3, epsilon=0.1,
                              rng=np.random.default_rng(3), keep=128)
    targets = Bot(EquityModel.create((8,), ("all",), 2)).probabilities(boards)
    torch.manual_seed(6)
    start = EquityModel.create((24, 12), ("all",), 2)

    def learner(fused: bool) -> Learner:
        model = EquityModel.create((24, 12), ("all",), 2)
        model.load_state_dict(start.state_dict())
        made = Learner(model, 3e-3, 16, 1)
        if not fused:  # torch's default Adam, as the learner stepped before it was fused
            made.optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
        return made

    def close(a: Learner, b: Learner) -> None:
        for (name, x), y in zip(a.model.state_dict().items(), b.model.state_dict().values()):
            assert torch.allclose(x, y, atol=1e-6), name

    fused, default = learner(True), learner(False)
    assert fused.fused and all(group["fused"] for group in fused.optimizer.param_groups)
    for seed in (0, 1):
        fused.fit(boards, targets, np.random.default_rng(seed))
        default.fit(boards, targets, np.random.default_rng(seed))
    close(fused, default)
    assert any(not torch.equal(a, b) for a, b in zip(start.state_dict().values(), fused.model.state_dict().values()))

    resumed = Learner(fused.model, 3e-3, 16, 1)
    resumed.load_optimizer_state(copy.deepcopy(default.optimizer.state_dict()))  # (as read from a checkpoint)
    assert all(group["fused"] for group in resumed.optimizer.param_groups)
    assert int(resumed.optimizer.state_dict()["state"][0]["step"]) == 2 * -(-len(boards) // 16)
    resumed.fit(boards, targets, np.random.default_rng(2))
    default.fit(boards, targets, np.random.default_rng(2))
    close(resumed, default)


def test_a_bfloat16_learner_takes_steps_close_to_float32_ones_and_keeps_the_weights_in_float32():
    """Given a model, positions and targets, When two learners fit them from the same weights, one in float32 and
    one with ``precision="bf16"``, Then the bfloat16 one ends near the same weights (within a quarter of the way
    either walked: its products rounded to bfloat16, its probabilities and loss in float32), its weights stay
    float32, and its loss falls as the float32 one's does. Where the CPU has no bfloat16 instructions it is the
    float32 learner itself."""
    from bgai.eval.network import bf16_supported

    boards = sample_positions(EquityModel.create((8,), ("all",), 2), 8, 0, seed=3, epsilon=0.1,
                              rng=np.random.default_rng(3), keep=256)
    targets = Bot(EquityModel.create((8,), ("all",), 2)).probabilities(boards)
    torch.manual_seed(5)
    start = EquityModel.create((32, 32, 16), ("all",), 2)

    def trained(precision: str) -> tuple[EquityModel, list[float], Learner]:
        model = EquityModel.create((32, 32, 16), ("all",), 2)
        model.load_state_dict(start.state_dict())
        learner = Learner(model, 3e-3, 32, 1, precision=precision)
        return model, [learner.fit(boards, targets, np.random.default_rng(seed)) for seed in range(6)], learner

    (reference, losses, _), (half, half_losses, learner) = trained("fp32"), trained("bf16")
    assert learner.bf16 == bf16_supported()
    assert half_losses[-1] < half_losses[0] and losses[-1] < losses[0]
    assert np.allclose(half_losses, losses, rtol=0.02)
    for (name, a), b, s in zip(reference.state_dict().items(), half.state_dict().values(),
                               start.state_dict().values()):
        # (Adam's steps are about the same size whatever the gradient's: compare the two ends to the way walked)
        assert b.dtype == torch.float32, name
        assert float((a - b).norm()) < 0.25 * float((a - s).norm()), name
    with pytest.raises(ValueError, match="precision must be one of fp32, bf16, got 'fp16'"):
        Learner(reference, 1e-3, 32, 1, precision="fp16")
    with pytest.raises(BgaiError, match="learner_precision must be one of fp32, bf16, got 'int8'"):
        load_config(None, {**TINY, "learner_precision": "int8"})


def test_a_device_that_is_not_there_is_refused_by_name(tmp_path):
    with pytest.raises(BgaiError, match="device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got 'tpu'"):
        load_config(None, {**TINY, "device": "tpu"})
    missing = f"cuda:{torch.cuda.device_count()}"  # (one past the last there is)
    with pytest.raises(BgaiError, match=f"device '{missing}': torch sees {torch.cuda.device_count()} CUDA device"):
        Run(load_config(None, {**TINY, "device": missing}), tmp_path / "run", resume=False, progress=False)
    assert load_config(None, TINY).device == "auto"


def test_a_td_run_stopped_by_sigterm_writes_its_checkpoint_where_it_stood_and_resumes_from_it(tmp_path):
    """``kill`` (SIGTERM) of ``bgai train`` with no checkpoint due for an hour: the round under way is played out,
    the checkpoint written at its end, the exit status a signal's (128 + 15), and the command to go on printed; that
    command goes on from the checkpoint's game."""
    config = tmp_path / "long.toml"
    config.write_text(growth_config("8", [("long", "", 10**7)]))
    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "bgai.frontends.cli", "train", "--config", str(config), "--run-dir",
               str(run_dir), "--quiet"]
    root = Path(__file__).resolve().parents[1]
    process = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not list(run_dir.glob("tensorboard/events.*")) and time.monotonic() < deadline:
            time.sleep(0.2)  # (the run writes its curves from its start; games are played a few seconds later)
        time.sleep(3)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGTERM, err
    saved = load_checkpoint(run_dir / "checkpoint.pt")
    assert saved["games"] > 0 and saved["games"] % 32 == 0 and saved["step"] == saved["games"]  # whole rounds
    assert "stopped by SIGTERM" in err and f"at {saved['games']:,} games" in err
    go_on = err.rpartition("go on with: ")[2].split()
    assert go_on[-1] == "--resume" and go_on[go_on.index("--run-dir") + 1] == str(run_dir)
    # The command printed, its stage cut to two rounds more, ends there: it went on from the checkpoint's game.
    finish = subprocess.run([*command, "--resume", "--games", str(saved["games"] + 64)], cwd=root,
                            capture_output=True, text=True, timeout=300)
    assert finish.returncode == 0, finish.stderr
    assert load_checkpoint(run_dir / "checkpoint.pt")["games"] == saved["games"] + 64


def test_the_device_script_resumes_a_run_stops_it_at_its_limit_and_brings_its_checkpoint_back(tmp_path):
    """training/device_run.sh, the one script a lent GPU machine runs (here on the CPU): a run that outlasts the
    limit is stopped with its last checkpoint (written every few seconds here) in the output folder; run again, it
    resumes from it."""
    root = Path(__file__).resolve().parents[1]
    config = tmp_path / "tiny.toml"
    config.write_text(growth_config("8", [("long", "", 10**7)]))
    # (a loaded machine may take long to stop: the stop is what is tested, not its speed)
    env = {**os.environ, "CONFIG": str(config), "CHECKPOINT_MINUTES": "0.02", "PYTHON": sys.executable,
           "KILL_AFTER": "240s"}

    def device_run(out):
        return subprocess.run(["bash", "training/device_run.sh", "25s", str(tmp_path / "run"), str(out)], cwd=root,
                              env=env, capture_output=True, text=True, timeout=300)

    first = device_run(tmp_path / "out1")
    assert first.returncode == 0, first.stdout + first.stderr + (tmp_path / "out1" / "train.log").read_text()
    saved = load_checkpoint(tmp_path / "out1" / "checkpoint.pt")
    assert saved["games"] > 0 and saved["stage"] == 0 and (tmp_path / "out1" / "tensorboard").is_dir()
    second = device_run(tmp_path / "out2")
    assert second.returncode == 0 and load_checkpoint(tmp_path / "out2" / "checkpoint.pt")["games"] > saved["games"]
