"""Rollouts (bgai.eval.rollout): stratified dice, variance reduction, the bear-off database, self-play, the CLI."""

import json
import re
from collections import Counter

import numpy as np
import pytest

from bgai.core.cube import CENTERED
from bgai.core.errors import BgaiError
from bgai.core.game import play_games, roll_dice
from bgai.eval import bearoff
from bgai.eval import rollout as ro
from bgai.eval.bot import load_bot
from bgai.eval.network import equity
from bgai.formats.position import Position
from bgai.frontends.cli import main

START = "4HPwATDgc/ABMA"
MIDDLE_GAME = "4HPkAxDguWHAIQ"  # the bot's own game, 10 turns in: contact, about even


@pytest.fixture(scope="module")
def bot():
    return load_bot()


def as_tuples(rolls):
    return [tuple(r) for r in rolls.tolist()]


# Dice ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 7])
def test_every_prefix_of_36k_trials_deals_each_first_and_second_roll_k_times(seed):
    rolls = ro.first_two_rolls(seed, np.arange(1296))
    for k in range(1, 37):
        first, second = Counter(as_tuples(rolls[:36 * k, 0])), Counter(as_tuples(rolls[:36 * k, 1]))
        assert len(first) == 36 and set(first.values()) == {k}
        assert len(second) == 36 and set(second.values()) == {k}


def test_1296_trials_deal_every_pair_of_first_two_rolls_once_and_the_next_1296_again():
    rolls = ro.first_two_rolls(3, np.arange(2 * 1296))
    for cycle in (rolls[:1296], rolls[1296:]):
        pairs = Counter(tuple(r.ravel()) for r in cycle)
        assert len(pairs) == 1296 and set(pairs.values()) == {1}
    assert not (rolls[:1296] == rolls[1296:]).all()  # a new cycle is a new arrangement


def test_opening_rollouts_never_start_with_a_double_and_cover_the_30_x_36_pairs():
    rolls = ro.first_two_rolls(0, np.arange(1080), opening=True)
    assert (rolls[:, 0, 0] != rolls[:, 0, 1]).all()
    assert set(Counter(as_tuples(rolls[:30, 0])).values()) == {1}
    assert len({tuple(r.ravel()) for r in rolls}) == 1080


def test_a_trials_dice_depend_only_on_the_seed_and_its_number():
    whole = np.stack([ro.rollout_dice(5, np.arange(100), turn) for turn in range(4)])
    part = np.stack([ro.rollout_dice(5, np.arange(40, 60), turn) for turn in range(4)])
    assert (whole[:, 40:60] == part).all()
    assert not (ro.rollout_dice(6, np.arange(100), 0) == whole[0]).all()


# Variance reduction and the bear-off database -----------------------------------------------------------------


# X (on roll) bears off 5 checkers (points 1, 1, 3, 5, 5), O 5 (its points 2, 2, 4, 4, 6): exact in the database.
EXACT_BEAROFF = Position.from_points({1: 2, 3: 1, 5: 2}, {23: 2, 21: 2, 19: 1})


def test_a_bearoff_rollout_agrees_with_the_database_and_luck_removes_all_its_variance(bot):
    db = bearoff.database()
    exact = float(db.probabilities(EXACT_BEAROFF.board[None])[0, 0])
    result = bot.rollout(EXACT_BEAROFF, trials=360, bearoff_stop="off", seed=1)
    win = result.probabilities[0]
    # Without variance reduction the trials (played out: no early stop) agree within their interval...
    assert win.plain_se > 0.01
    assert abs(win.plain_mean - exact) < 3 * win.plain_se
    # ...and with it, luck judged by exact values telescopes to the exact answer, trial by trial.
    assert win.se < 1e-6 and win.mean == pytest.approx(exact, abs=1e-6)
    assert result.equity.mean == pytest.approx(2 * exact - 1, abs=1e-5)


def test_a_cubeful_bearoff_rollout_agrees_with_the_databases_cube_equities(bot):
    nd, dt = bearoff.database().cube_equities(EXACT_BEAROFF.board[None], [CENTERED])
    result = bot.rollout(EXACT_BEAROFF, trials=360, cubeful=True, bearoff_stop="off", seed=2)
    for rolled, exact in ((result.no_double, nd[0]), (result.double_take, dt[0])):
        assert abs(rolled.plain_mean - exact) < 3 * rolled.plain_se
        # Cubeless checker play by the bot is not always the cubeful best play: near, not equal.
        assert rolled.mean == pytest.approx(exact, abs=0.005) and rolled.se < 0.002
    assert result.cube_action == "double, take" and result.cubeful == result.double_take


def test_stopping_at_exact_bearoffs_answers_from_the_database_at_once(bot):
    result = bot.rollout(EXACT_BEAROFF, trials=36)  # the start is an exact bear-off: every trial stops there
    exact = float(bearoff.database().probabilities(EXACT_BEAROFF.board[None])[0, 0])
    assert result.probabilities[0].plain_mean == pytest.approx(exact, abs=1e-6)
    assert result.probabilities[0].plain_se == 0


def test_variance_reduction_is_unbiased_and_shrinks_the_standard_error(bot):
    # 16 rollouts of 36 trials with different dice, truncated at 6 plies: luck has mean zero, so the reduced and
    # the plain estimates agree (on every seed within their own errors, and pooled within the pooled error).
    start = ro.Start(Position.parse(MIDDLE_GAME).board[None], np.array([1]), np.array([-1]))
    luck, plain, reduced = [], [], []
    for seed in range(16):
        settings = ro.RolloutSettings(trials=36, truncate=6, seed=seed)
        values = ro.run_trials(bot, start, np.arange(36), settings)
        trial_luck = equity(values.plain[0]) - equity(values.plain[0] - values.luck[0])
        luck.append(trial_luck)
        plain.append(equity(values.plain[0]))
        reduced.append(equity(values.plain[0] - values.luck[0]))
    luck = np.concatenate(luck)
    assert abs(luck.mean()) < 3 * luck.std(ddof=1) / np.sqrt(len(luck))
    per_seed_se = lambda v: np.std(v, ddof=1) / 6  # noqa: E731
    assert all(per_seed_se(r) < per_seed_se(p) / 3 for r, p in zip(reduced, plain))
    gap = np.mean([r.mean() - p.mean() for r, p in zip(reduced, plain)])
    assert abs(gap) < 3 * np.std([r.mean() - p.mean() for r, p in zip(reduced, plain)], ddof=1) / 4


def test_the_pruning_net_changes_a_few_plays_and_not_the_estimate(bot):
    # The shipped bot's variance reduction finds each roll's play among its pruning net's best (Bot.replies), and
    # the trials play those plays (rollout._LuckPlays); without the pruning net every play is the network's choice
    # among all. Most trials are played alike, and the rollout's estimate stays well within its standard error.
    assert bot.pruner is not None
    start = ro.Start(Position.parse(MIDDLE_GAME).board[None], np.array([1]), np.array([-1]))
    settings = ro.RolloutSettings(trials=72, truncate=6, seed=5)
    pruned = ro.run_trials(bot, start, np.arange(72), settings)
    full = ro.run_trials(load_bot(pruner=False), start, np.arange(72), settings)
    alike = np.all(np.abs(pruned.plain[0] - full.plain[0]) < 1e-6, axis=1)
    assert 0.6 < alike.mean() < 1  # 78% here: a play in 25 differs, 6 plays a trial
    reduced, reference = (equity(v.plain[0] - v.luck[0]) for v in (pruned, full))
    gap = reduced - reference
    assert np.abs(gap).mean() < 0.02 and np.abs(gap).max() < 0.15
    assert abs(gap.mean()) < 0.5 * reference.std(ddof=1) / np.sqrt(len(reference))


def test_the_trials_play_the_plays_the_variance_reduction_found(bot):
    # _LuckPlays takes each roll's play from the luck's expansion; without the pruning net that is the network's
    # choice among all plays, so the trials are those the bot plays on its own
    start = ro.Start(Position.parse(MIDDLE_GAME).board[None], np.array([1]), np.array([-1]))
    unpruned = load_bot(pruner=False)
    reduced = ro.run_trials(unpruned, start, np.arange(36), ro.RolloutSettings(trials=36, truncate=6, seed=3))
    plain = ro.run_trials(unpruned, start, np.arange(36),
                          ro.RolloutSettings(trials=36, truncate=6, seed=3, variance_reduction=False))
    np.testing.assert_allclose(reduced.plain, plain.plain, atol=1e-6)


def test_the_opening_rollout_matches_the_bots_self_play(bot):
    # Self-play games, from the side of the first mover (it won the opening roll and plays it), and the rollout
    # of the opening (the first roll never a double, every (opening, reply) pair once) estimate the same things:
    # the equity and how often a game ends in a gammon either way.
    games = 2000
    with ro.torch_threads(1):
        played = play_games(bot, bot, games, seed=11)
    opening = roll_dice(11, np.arange(games), np.zeros(games, dtype=np.int64))
    points = np.where(opening[:, 0] > opening[:, 1], 1, -1) * played.points
    gammons = (np.abs(points) >= 2).astype(float)
    result = bot.rollout(START, trials=1080, opening=True, variance_reduction=False, seed=11)
    win_gammon, lose_gammon = result.probabilities[1], result.probabilities[3]
    # (The standard error of a sum is at most the sum of the two.)
    for mean, se, sample in ((result.equity.mean, result.equity.se, points),
                             (win_gammon.mean + lose_gammon.mean, win_gammon.se + lose_gammon.se, gammons)):
        sample_se = sample.std(ddof=1) / np.sqrt(games)
        assert abs(mean - sample.mean()) < 1.96 * np.hypot(se, sample_se)


# Chunks, plays, results -----------------------------------------------------------------------------------------


def test_chunks_of_trials_concatenate_to_the_whole_rollout(bot):
    start = ro.Start(Position.parse(MIDDLE_GAME).board[None], np.array([1]), np.array([-1]))
    settings = ro.RolloutSettings(trials=72, truncate=4, seed=3)
    whole = ro.run_trials(bot, start, np.arange(72), settings)
    parts = ro.TrialValues.concatenate([ro.run_trials(bot, start, np.arange(0, 36), settings),
                                        ro.run_trials(bot, start, np.arange(36, 72), settings)])
    np.testing.assert_allclose(parts.plain, whole.plain, atol=1e-5)
    np.testing.assert_allclose(parts.luck, whole.luck, atol=1e-5)


def test_jobs_on_threads_split_the_trials_into_chunks_with_the_same_result(bot, monkeypatch):
    """Up to THREAD_JOBS jobs play chunks of trials on threads of this process: the same values as one thread,
    each thread expanding its own boards."""
    from bgai.core import movegen

    one = bot.rollout(MIDDLE_GAME, trials=108, truncate=3, cubeful=True)
    seen = []
    run = ro.run_trials
    monkeypatch.setattr(ro, "run_trials", lambda *a, **k: seen.append((len(a[2]), movegen.threads())) or run(*a, **k))
    monkeypatch.setattr(ro, "_run_in_processes", lambda *a: pytest.fail("processes started for 2 jobs"))
    two = bot.rollout(MIDDLE_GAME, trials=108, truncate=3, cubeful=True, jobs=2)
    assert sorted(seen) == [(36, 1), (72, 1)]  # chunks of multiples of 36, one thread each
    assert not getattr(movegen._LOCAL, "single", False) and two.trials == 108  # this thread as it was
    assert two.equity.mean == pytest.approx(one.equity.mean, abs=1e-6)
    assert two.equity.plain_se == pytest.approx(one.equity.plain_se, abs=1e-6)
    assert two.cubeful.mean == pytest.approx(one.cubeful.mean, abs=1e-6)


def test_jobs_split_the_trials_into_chunks_with_the_same_result(bot, monkeypatch):
    monkeypatch.setattr(ro, "THREAD_JOBS", 1)  # two jobs go to worker processes
    one = bot.rollout(MIDDLE_GAME, trials=108, truncate=3)
    sent = []
    in_processes = ro._run_in_processes
    monkeypatch.setattr(ro, "_run_in_processes", lambda *a: sent.append(len(a[2])) or in_processes(*a))
    monkeypatch.setattr(ro, "POOL_START_S", 0.0)  # workers cost nothing: the trials after the probe go to them
    two = bot.rollout(MIDDLE_GAME, trials=108, truncate=3, jobs=2)  # 36 here, then two processes, 36 each
    assert sent == [108 - ro.PROBE_TRIALS]
    assert two.equity.mean == pytest.approx(one.equity.mean, abs=1e-6)
    assert two.equity.plain_se == pytest.approx(one.equity.plain_se, abs=1e-6)


def test_a_rollout_shorter_than_the_workers_start_up_stays_in_this_process(bot, monkeypatch):
    monkeypatch.setattr(ro, "THREAD_JOBS", 1)
    monkeypatch.setattr(ro, "_run_in_processes", lambda *a: pytest.fail("workers started for a short rollout"))
    monkeypatch.setattr(ro, "POOL_START_S", 1e9)
    short = bot.rollout(MIDDLE_GAME, trials=108, truncate=3, jobs=2)
    assert short.equity.mean == pytest.approx(bot.rollout(MIDDLE_GAME, trials=108, truncate=3).equity.mean, abs=1e-6)


def test_candidate_plays_are_rolled_out_on_the_same_dice(bot, monkeypatch):
    calls = []
    dealt = ro.rollout_dice

    def spy(seed, trials, turn, opening=False):
        calls.append((turn, np.array(trials)))
        return dealt(seed, trials, turn, opening)

    monkeypatch.setattr(ro, "rollout_dice", spy)
    results = ro.rollout_plays(bot, START, "31", top=3, trials=36, truncate=2)
    assert len(results) == 3 and len({r.play for r in results}) == 3
    first_turn = np.concatenate([trials for turn, trials in calls if turn == 0])
    assert Counter(first_turn.tolist()) == {t: 3 for t in range(36)}  # each trial's dice, once for each play
    assert results[0].play == "8/5 6/5"  # making the 5 point
    assert results[0].equity.mean >= results[1].equity.mean >= results[2].equity.mean


def test_a_result_prints_and_round_trips_through_json(bot):
    result = bot.rollout(MIDDLE_GAME, trials=36, truncate=2, cubeful=True)
    d = json.loads(result.to_json())
    assert d["trials"] == 36 and d["settings"]["truncate"] == 2 and d["settings"]["cubeful"]
    assert set(d["probabilities"]) == set(ro.PROBABILITY_NAMES)
    assert d["equity"]["mean"] == pytest.approx(result.equity.mean, abs=1e-6)
    lo, hi = d["equity"]["ci95"]
    assert lo < d["equity"]["mean"] < hi
    assert {"no_double", "double_take", "cubeful", "cube_action"} <= set(d)
    text = str(result)
    assert "cubeless equity" in text and "95% CI" in text and "double/take" in text


def test_lookahead_checker_play_and_bad_settings(bot):
    result = bot.rollout(MIDDLE_GAME, trials=36, truncate=1, plies=1, variance_reduction=False)
    assert result.settings["plies"] == 1
    assert 0 < result.probabilities[0].mean < 1
    for bad in (dict(trials=0), dict(truncate=0), dict(seed=-1), dict(bearoff_stop="sometimes"),
                dict(cubeful=True, bearoff_stop="race"), dict(jobs=-1), dict(plies=3)):
        with pytest.raises(ValueError):
            bot.rollout(MIDDLE_GAME, **bad)


def test_one_settings_object_is_every_rollout_function_s_parameter(bot):
    settings = ro.RolloutSettings(trials=36, truncate=3, seed=7)
    given = bot.rollout(MIDDLE_GAME, settings)
    assert given.equity == bot.rollout(MIDDLE_GAME, trials=36, truncate=3, seed=7).equity  # the same dice, estimate
    assert given.settings["plies"] == bot.plies  # plies None: the bot's own
    changed = ro.rollout(bot, MIDDLE_GAME, settings, seed=8)  # a keyword changes that field of the settings
    assert changed.settings["seed"] == 8 and changed.settings["trials"] == 36
    assert ro.rollout(bot, MIDDLE_GAME, settings, bearoff_stop="off").settings["bearoff"] == "off"  # its old name
    boards = np.stack([Position.parse(MIDDLE_GAME).board, Position.start().board])
    many = ro.rollout_values(bot, boards, settings)
    assert np.allclose(many, ro.rollout_values(bot, boards, trials=36, truncate=3, seed=7))
    assert np.allclose(many[0], [e.mean for e in given.probabilities])  # the batch gives each position its own
    plays = ro.rollout_plays(bot, MIDDLE_GAME, "31", settings, top=2)
    assert len(plays) == 2 and all(p.trials == 36 for p in plays)
    with pytest.raises(TypeError, match="unexpected rollout setting.*trails"):
        bot.rollout(MIDDLE_GAME, trails=36)  # a misspelt setting is refused, not ignored
    with pytest.raises(BgaiError, match="must be a bgai.eval.rollout.RolloutSettings"):
        ro.rollout(bot, MIDDLE_GAME, {"trials": 36})
    with pytest.raises(BgaiError, match="cubeless"):
        ro.rollout_batch(bot, boards, settings, cubeful=True)
    decided = bot.cube_decision(Position.parse(MIDDLE_GAME), rollout=ro.RolloutSettings(trials=36, truncate=2))
    assert decided.action and np.isnan(decided.efficiency)  # a rollout's decision, with the settings given


# The command line -------------------------------------------------------------------------------------------------


def test_cli_rolls_out_a_position_as_text_and_as_json(capsys):
    assert main(["rollout", MIDDLE_GAME, "--trials", "36", "--truncate", "2", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "Rollout of 4HPkAxDguWHAIQ" in text and "without variance reduction" in text
    assert main(["rollout", MIDDLE_GAME, "--trials", "36", "--truncate", "2", "--quiet", "--json", "--no-vr"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["trials"] == 36 and d["settings"]["variance_reduction"] is False
    assert d["equity"]["se"] == d["equity"]["plain_se"]


def test_cli_rolls_out_the_plays_of_a_roll(capsys):
    assert main(["rollout", START, "64", "--top", "2", "--trials", "36", "--truncate", "2", "--quiet",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["dice"] == "64" and len(d["plays"]) == 2
    assert all(p["trials"] == 36 for p in d["plays"])
    # and the table says what each column is, the second play's Diff against the first's equity on screen
    assert main(["rollout", START, "64", "--top", "2", "--trials", "36", "--truncate", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^   #  Play +cubeless equity ± se +95% interval +Diff +win win g win b los g los b$", out, re.M)
    lines = [line for line in out.splitlines() if re.match(r" +\d\. ", line)]
    rows = [(float(re.search(r"([+-]\d\.\d{3}) ±", line)[1]),
             re.search(r"\.\. [+-]\d\.\d{3} +([+-]\d\.\d{3})?", line)[1]) for line in lines]
    assert len(rows) == 2 and rows[0][1] is None
    assert float(rows[1][1]) == pytest.approx(rows[1][0] - rows[0][0], abs=1.5e-3)


@pytest.mark.parametrize("argv, message", [
    (["rollout", "nonsense"], "Position ID"),
    (["rollout", START, "70"], "die"),
    (["rollout", START, "--trials", "0"], "trials"),
    (["rollout", START, "--top", "2"], "--top needs the dice"),
    (["rollout", START, "--cubeful", "--bearoff", "race"], "cubeful"),
])
def test_cli_bad_input_is_one_line_and_exit_status_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bgai rollout: error:") and message in err


def test_rollout_values_of_many_positions_are_each_position_s_own_rollout():
    # rollout_values (the training's rollout targets) rolls many positions out at once; each gets what rolling it
    # out alone with the same settings gives
    bot = load_bot()
    positions = [Position.start()] + [Position.from_position_id(p) for p in ("4HPkAxDguWHAIQ", "3N0zAAC2uycAAA")]
    boards = np.stack([p.board for p in positions])
    together = ro.rollout_values(bot, boards, trials=36, truncate=3, seed=7)
    for pos, values in zip(positions, together):
        alone = ro.rollout(bot, pos, trials=36, truncate=3, seed=7, jobs=1)
        np.testing.assert_allclose(values, [e.mean for e in alone.probabilities], atol=1e-6)
    over = Position.from_points({6: 1}, {}).board  # the opponent has borne off: lost, as it stands
    assert np.allclose(ro.rollout_values(bot, over[None], trials=36), bot.probabilities(over[None]))


# Many positions: rollout_batch, rollout_chunks, files ------------------------------------------------------------

FEW = ("4HPkAxDguWHAIQ", "3N0zAAC2uycAAA", "trsDADBsuw0GAA")


def test_a_batch_rollout_gives_each_position_its_own_rollout_with_its_standard_errors(bot):
    boards = np.stack([Position.from_position_id(p).board for p in FEW])
    together = ro.rollout_batch(bot, boards, trials=36, truncate=3, seed=7)
    for i, pid in enumerate(FEW):
        alone = ro.rollout(bot, pid, trials=36, truncate=3, seed=7, jobs=1)
        np.testing.assert_allclose(together.probabilities[i], [e.mean for e in alone.probabilities], atol=1e-6)
        np.testing.assert_allclose(together.se[i], [e.se for e in alone.probabilities], atol=1e-6)
        assert together.equity_se[i] == pytest.approx(alone.equity.se, abs=1e-6)
    assert (together.equity_se > 0).all()


@pytest.mark.parametrize("thread_jobs", [4, 1], ids=["threads", "processes"])
def test_positions_shared_by_threads_or_workers_get_what_one_thread_gives_them(bot, monkeypatch, thread_jobs):
    monkeypatch.setattr(ro, "THREAD_JOBS", thread_jobs)
    boards = np.stack([Position.from_position_id(p).board for p in FEW + (START,)])
    here = ro.rollout_batch(bot, boards, trials=8, truncate=2, seed=3, jobs=1)
    parts = list(ro.rollout_chunks(bot, boards, trials=8, truncate=2, seed=3, jobs=2, chunk=1))
    assert sorted(int(i) for rows, _ in parts for i in rows) == [0, 1, 2, 3]
    for rows, part in parts:
        np.testing.assert_allclose(part.probabilities, here.probabilities[rows], atol=1e-6)
        np.testing.assert_allclose(part.se, here.se[rows], atol=1e-6)


def test_worker_processes_get_the_callers_bot_with_all_its_settings(bot):
    # Workers once rebuilt the bot from a few of its fields and dropped bf16 and the move filters.
    from bgai.eval.bot import MoveFilter
    from bgai.eval.network import EquityModel
    from bgai.eval.weights import ModelSnapshot

    special = bot.replace(plies=1, filters=(MoveFilter(3, 0.05),), bf16=True, use_bearoff=False, name="special",
                          cube_plies=1, network="its network")
    on_torch = special.replace(model=EquityModel.create((8,), ("all",), 2))  # sent as a snapshot: a new bot
    for original in (special, on_torch):
        sent = ro._portable(original)
        assert isinstance(sent.model, ModelSnapshot) and (sent is original) == (original is special)
        for name in ("plies", "filters", "bf16", "use_bearoff", "prune", "name", "cube_plies", "network"):
            assert getattr(sent, name) == getattr(original, name)
        assert sent.pruner is original.pruner


def test_a_bot_replaced_keeps_what_is_not_changed_and_refuses_unknown_settings(bot):
    deeper = bot.replace(plies=2)
    assert deeper.plies == 2 and deeper.model is bot.model and deeper.pruner is bot.pruner
    assert deeper.filters == load_bot(plies=2).filters  # a new ply gets its default filters
    with pytest.raises(ro.BgaiError, match="no setting"):
        bot.replace(depth=2)


def write_positions(path, lines):
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_positions_file_is_read_whole_before_any_work_and_its_bad_line_named(tmp_path):
    good = write_positions(tmp_path / "good.txt", ["# a comment", FEW[0], "", Position.start().xgid()])
    entries = ro.read_positions(good)
    assert [e.line for e in entries] == [2, 4]
    assert entries[1].position == Position.start()
    bad = write_positions(tmp_path / "bad.txt", [FEW[0], FEW[1], "not-a-position"])
    with pytest.raises(ro.BgaiError, match="bad.txt, line 3"):
        ro.read_positions(bad)
    over = Position.from_points({6: 1}, {}).position_id()
    with pytest.raises(ro.BgaiError, match="line 2: the game is over"):
        ro.read_positions(write_positions(tmp_path / "over.txt", [FEW[0], over]))
    with pytest.raises(ro.BgaiError, match="no position"):
        ro.read_positions(write_positions(tmp_path / "empty.txt", ["# nothing"]))


def test_a_stopped_file_rollout_resumes_to_the_file_a_whole_run_writes(bot, tmp_path, monkeypatch):
    entries = ro.read_positions(write_positions(tmp_path / "p.txt", list(FEW) + [START]))
    options = dict(trials=6, truncate=2, seed=1, jobs=1, chunk=1)
    whole = tmp_path / "whole.jsonl"
    results = ro.rollout_file(bot, entries, out=whole, **options)
    assert [r["line"] for r in results] == [1, 2, 3, 4]
    alone = ro.rollout(bot, FEW[1], trials=6, truncate=2, seed=1, jobs=1)
    assert results[1]["equity"]["mean"] == pytest.approx(alone.equity.mean, abs=1e-5)
    assert results[1]["equity"]["se"] == pytest.approx(alone.equity.se, abs=1e-5)

    chunks = ro.rollout_chunks
    calls = []

    def stop_after_two(*args, **kwargs):
        for k, item in enumerate(chunks(*args, **kwargs)):
            if k == 2:
                raise KeyboardInterrupt
            calls.append(len(item[0]))
            yield item

    stopped = tmp_path / "stopped.jsonl"
    monkeypatch.setattr(ro, "rollout_chunks", stop_after_two)
    with pytest.raises(KeyboardInterrupt):
        ro.rollout_file(bot, entries, out=stopped, **options)
    assert len(stopped.read_text().splitlines()) == 3  # the header and the two chunks that finished
    rolled = []

    def counting(b, boards, *args, **kwargs):
        rolled.append(len(boards))
        return chunks(b, boards, *args, **kwargs)

    monkeypatch.setattr(ro, "rollout_chunks", counting)
    assert ro.rollout_file(bot, entries, out=stopped, **options) == results
    assert rolled == [2]  # only what the file lacked
    assert stopped.read_text() == whole.read_text()
    with pytest.raises(ro.BgaiError, match="other rollouts"):
        ro.rollout_file(bot, entries, out=stopped, **{**options, "seed": 2})


def test_cli_rolls_out_a_file_of_positions_in_its_order(tmp_path, capsys):
    path = write_positions(tmp_path / "p.txt", [FEW[1], "# skipped", FEW[0]])
    assert main(["rollout", "--positions", str(path), "--trials", "4", "--truncate", "1", "--json", "--quiet",
                 "--jobs", "1"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["line"], r["position_id"]) for r in records] == [(1, FEW[1]), (3, FEW[0])]
    assert all(set(r["probabilities"]) == set(ro.PROBABILITY_NAMES) for r in records)


@pytest.mark.parametrize("extra, message", [
    (["--cubeful"], "drop --cubeful"),
    ([START], "drop POSITION"),
])
def test_cli_file_rollouts_refuse_what_they_cannot_do(tmp_path, capsys, extra, message):
    path = write_positions(tmp_path / "p.txt", [FEW[0]])
    assert main(["rollout", "--positions", str(path), *extra]) == 2
    assert message in capsys.readouterr().err


def test_cli_file_rollouts_name_the_bad_line_before_rolling_anything(tmp_path, capsys):
    path = write_positions(tmp_path / "p.txt", [FEW[0], "XGID=garbage"])
    assert main(["rollout", "--positions", str(path)]) == 2
    err = capsys.readouterr().err
    assert "line 2" in err and err.count("\n") == 1
