"""The batched game runner, the dice and the built-in players."""

import numpy as np
import pytest

from bgai import Position
from bgai.core.game import game_over, play_duplicate, play_games, result_points, roll_dice
from bgai.core.movegen import afterstates, group_starts, segment_argmax, switch
from bgai.core.workers import InProcessPool
from bgai.players import HeuristicPlayer, PubevalPlayer, RandomPlayer, make_player


def test_dice_depend_only_on_seed_game_and_turn():
    games = np.arange(1000)
    a = roll_dice(7, games, np.full(1000, 3))
    b = roll_dice(7, games[::-1].copy(), np.full(1000, 3))[::-1]
    assert np.array_equal(a, b)
    assert not np.array_equal(a, roll_dice(8, games, np.full(1000, 3)))


def test_opening_roll_is_never_a_double_and_later_rolls_are_fair():
    opening = roll_dice(0, np.arange(60_000), np.zeros(60_000, dtype=np.int64))
    assert (opening[:, 0] != opening[:, 1]).all()
    later = roll_dice(0, np.arange(72_000), np.full(72_000, 5))
    counts = np.bincount((later[:, 0] - 1) * 6 + later[:, 1] - 1, minlength=36)
    # Each of the 36 rolls expected 2000 times; 5 standard deviations is about 220.
    assert np.abs(counts - 2000).max() < 250


def test_result_points_single_gammon_backgammon():
    """Given the loser on roll after the winner's last checker is off, count 1, 2 or 3 points."""
    single = Position.from_points({1: 14}, {}).board  # loser has borne off one checker
    gammon = Position.from_points({1: 15}, {}).board
    backgammon_home = Position.from_points({1: 14, 20: 1}, {}).board  # a checker in the winner's home board
    backgammon_bar = Position.from_points({1: 14, "bar": 1}, {}).board
    assert result_points(np.array([single, gammon, backgammon_home, backgammon_bar])).tolist() == [1, 2, 3, 3]


def test_the_compiled_rules_answer_as_the_numpy_ones():
    """Given the afterstates of many positions of random games (among them finished games, gammons and
    backgammons, the loser's side on roll), then the compiled kernels behind ``game_over``, ``result_points`` and
    ``group_starts`` (int8 boards, large batches) answer as their numpy statements (other dtypes, small batches)."""
    rng = np.random.default_rng(5)
    boards = np.zeros((0, 26), dtype=np.int8)
    for _ in range(12):  # bear-off and race positions, so that games end; the loser's checkers anywhere
        loser = np.zeros((400, 26), dtype=np.int8)
        np.add.at(loser, (np.repeat(np.arange(400), 15), rng.integers(1, 26, size=6000)), 1)
        winner = np.zeros((400, 26), dtype=np.int8)
        np.add.at(winner, (np.repeat(np.arange(400), 2), rng.integers(1, 3, size=800)), 1)
        loser[::3] = np.maximum(loser[::3] - rng.integers(0, 3, size=(134, 26)).astype(np.int8), 0)
        boards = np.concatenate([boards, loser - winner[:, ::-1]])
    moves = afterstates(switch(boards), rng.integers(1, 7, size=(len(boards), 2)), validate=False)
    after = moves.after
    over = game_over(after)
    assert over.any() and not over.all()
    assert np.array_equal(over, game_over(after.astype(np.int16)))
    assert np.array_equal(over[:100], game_over(after[:100]))  # (the numpy path)
    ended = after[over]
    points = result_points(ended)
    assert set(points.tolist()) == {1, 2, 3}
    assert np.array_equal(points, result_points(ended.astype(np.int16)))
    starts, counts = group_starts(moves.owner, len(boards))
    reference = group_starts(moves.owner.astype(np.int32), len(boards))
    assert np.array_equal(starts, reference[0]) and np.array_equal(counts, reference[1])


def test_every_game_ends_with_a_legal_result():
    result = play_games(RandomPlayer(), RandomPlayer(), 300, seed=3, batch=128)
    assert set(np.abs(result.points).tolist()) <= {1, 2, 3}
    assert (result.turns > 0).all()


def test_swapping_seats_keeps_the_dice_so_identical_players_mirror():
    """Duplicate games: the same deterministic player on both seats plays the same game in both runs, so what
    player 0 wins from seat 0 it loses from seat 1."""
    one = play_games(PubevalPlayer(), PubevalPlayer(), 100, seed=5)
    two = play_games(PubevalPlayer(), PubevalPlayer(), 100, seed=5, swap_seats=True)
    assert np.array_equal(one.points, -two.points) and np.array_equal(one.turns, two.turns)
    duplicate = play_duplicate(PubevalPlayer(), PubevalPlayer(), 100, seed=5)
    assert duplicate.games == 200
    # The luck the two games of a sequence share cancels in the paired standard error: here all of it
    s = duplicate.summary()
    assert s["ppg"] == 0 and s["ppg_se"] == 0 and duplicate.duplicate and not one.duplicate
    assert one.summary()["ppg_se"] > 0.1


class ThreeInProcess(InProcessPool):
    """A pool that says it has three workers and runs their tasks here: how ``play_duplicate`` splits its games."""

    workers = 3


def test_duplicate_games_split_between_workers_are_the_games_played_here():
    here = play_duplicate(PubevalPlayer(), HeuristicPlayer(), 40, seed=3, first_game=100)
    split = play_duplicate(PubevalPlayer(), HeuristicPlayer(), 40, seed=3, first_game=100, pool=ThreeInProcess())
    assert split.duplicate and split.games == 80
    assert np.array_equal(here.points, split.points) and np.array_equal(here.turns, split.turns)
    assert split.summary()["ppg_se"] == here.summary()["ppg_se"]


def test_the_standard_error_of_duplicate_games_is_that_of_their_pair_means():
    games = play_duplicate(PubevalPlayer(), HeuristicPlayer(), 60, seed=3)
    pairs = (games.points[:60] + games.points[60:]) / 2
    s = games.summary()
    assert s["ppg"] == pytest.approx(pairs.mean())
    assert s["ppg_se"] == pytest.approx(pairs.std(ddof=1) / np.sqrt(60))


def test_pubeval_and_heuristic_crush_random():
    pub = play_duplicate(PubevalPlayer(), RandomPlayer(), 200, seed=11).summary()
    heur = play_duplicate(HeuristicPlayer(), RandomPlayer(), 200, seed=11).summary()
    assert pub["win_rate"] > 0.97 and pub["ppg"] > 2.0
    assert heur["win_rate"] > 0.85 and heur["ppg"] > 1.4


def test_pubeval_beats_the_heuristic_player():
    s = play_duplicate(PubevalPlayer(), HeuristicPlayer(), 300, seed=2).summary()
    assert s["ppg"] - 3 * s["ppg_se"] > 0


def test_segment_argmax_picks_the_first_best_of_each_group():
    scores = np.array([1.0, 3.0, 3.0, 0.5, -1.0, 2.0])
    owner = np.array([0, 0, 0, 1, 2, 2])
    assert segment_argmax(scores, owner, 3).tolist() == [1, 3, 5]


def test_players_choose_one_legal_afterstate_per_position():
    rng = np.random.default_rng(0)
    boards = np.repeat(Position.start().board[None], 50, axis=0)
    dice = rng.integers(1, 7, size=(50, 2))
    moves = afterstates(boards, dice)
    for name in ("random", "heuristic", "pubeval"):
        pick = make_player(name).choose(boards, moves.after, moves.owner, rng)
        assert pick.shape == (50,)
        assert np.array_equal(moves.owner[pick], np.arange(50))


def test_pubeval_plays_the_classic_opening_31():
    """pubeval makes the 5-point with 3-1 from the start (8/5 6/5), as every strong player does."""
    boards = Position.start().board[None]
    moves = afterstates(boards, np.array([[3, 1]]), return_steps=True)
    pick = PubevalPlayer().choose(boards, moves.after, moves.owner, np.random.default_rng(0))[0]
    made = switch(moves.after[pick])
    assert made[5] == 2 and made[8] == 2 and made[6] == 4


def test_unknown_player_name_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown player 'gnu'"):
        make_player("gnu")


def test_gnubg_opponent_plays_legal_moves_and_beats_random():
    pytest.importorskip("gnubg_nn")
    from bgai.players.gnubg import GnubgPlayer

    s = play_duplicate(GnubgPlayer(), RandomPlayer(), 20, seed=4).summary()
    assert s["games"] == 40 and s["win_rate"] > 0.9


def test_open_sage_opponent_plays_its_own_choice_legally_and_beats_random():
    pytest.importorskip("bgsage")
    from bgai.core.errors import BgaiError
    from bgai.players.sage import SagePlayer, from_sage, to_sage

    # Given Open Sage at 0-ply in 20 duplicate pairs of games against random: legal plays (the games finish) and wins
    player = make_player("sage")
    assert isinstance(player, SagePlayer) and player.name == "sage" and make_player("sage1").name == "sage1"
    s = play_duplicate(player, RandomPlayer(), 20, seed=4).summary()
    assert s["games"] == 40 and s["win_rate"] > 0.9

    # And each pick is bgsage's own first play, seen by the opponent as bgai's afterstates are
    rng = np.random.default_rng(7)
    boards = np.stack([Position.start().board] * 6)
    for _ in range(6):  # a few random plies in, so the positions differ
        dice = rng.integers(1, 7, size=(len(boards), 2))
        moves = afterstates(boards, dice)
        boards = moves.after[RandomPlayer().choose(boards, moves.after, moves.owner, rng)]
    dice = rng.integers(1, 7, size=(len(boards), 2))
    moves = afterstates(boards, dice)
    picks = player.choose(boards, moves.after, moves.owner, dice=dice)
    first, count = group_starts(moves.owner, len(boards))
    for i, (board, (d1, d2)) in enumerate(zip(boards, dice)):
        assert first[i] <= picks[i] < first[i] + count[i]
        if count[i] > 1:
            best = player.analyzer.checker_play(to_sage(board), int(d1), int(d2)).moves[0].board
            assert np.array_equal(switch(moves.after[picks[i]]), from_sage(best))
    assert np.array_equal(from_sage(to_sage(boards[0])), boards[0])

    # And where bgsage bears its last checker off without the hit bgai's rules require (one checker on the 2-point,
    # an opponent blot on the 1-point, 31), the game-ending play bgai lists stands for it
    board = np.zeros(26, dtype=np.int8)
    board[2], board[1], board[24] = 1, -1, -14
    moves = afterstates(board[None], np.array([[3, 1]]))
    pick = player.choose(board[None], moves.after, moves.owner, dice=np.array([[3, 1]]))[0]
    assert not (moves.after[pick] < 0).any()  # the mover has no checker left: the game is over
    with pytest.raises(BgaiError, match="0 or 1-ply"):
        SagePlayer(plies=2)


def test_ply_strength_parts_merge_into_the_whole_run(tmp_path):
    """bgai.coach.ply_strength: a run played in two parts (``--first-sequence``) and merged is the run played
    in one piece, game for game, luck included; the luck-adjusted figures come with their own standard error."""
    import json

    from bgai.coach import ply_strength

    common = ["--plies", "0", "--opponent", "heuristic", "--chunk", "2", "--seed", "3"]
    ply_strength.main([*common, "--games", "4", "--json", str(tmp_path / "whole.json")])
    ply_strength.main([*common, "--games", "2", "--json", str(tmp_path / "a.json")])
    ply_strength.main([*common, "--games", "2", "--first-sequence", "2", "--json", str(tmp_path / "b.json")])
    ply_strength.main(["--merge", str(tmp_path / "merged.json"), str(tmp_path / "b.json"), str(tmp_path / "a.json")])
    whole, merged = (json.loads((tmp_path / f).read_text()) for f in ("whole.json", "merged.json"))
    assert merged["points"] == whole["points"] and np.allclose(merged["luck"], whole["luck"])
    assert merged["ppg"] == whole["ppg"] and merged["ppg_luck_adjusted"] == pytest.approx(whole["ppg_luck_adjusted"])
    assert whole["ppg_luck_adjusted_se"] > 0 and len(whole["luck"]) == 4
    with pytest.raises(SystemExit, match="follow each other"):
        ply_strength.main(["--merge", str(tmp_path / "bad.json"), str(tmp_path / "a.json"), str(tmp_path / "a.json")])


def test_ply_strength_sets_each_side_s_network_pruner_and_filters():
    """``--filters`` / ``--opponent-filters`` are KEEP:WINDOW stages; ``--opponent-checkpoint`` and
    ``--opponent-pruner`` choose a bgaiN opponent's network; malformed filters and settings for a built-in
    opponent are refused."""
    from bgai.coach import ply_strength
    from bgai.eval.bot import SHIPPED_NPZ, SHIPPED_PRUNER, MoveFilter

    assert ply_strength.parse_filters("8:0.16,5:0.04") == (MoveFilter(8, 0.16), MoveFilter(5, 0.04))
    assert ply_strength.parse_filters(None) is None
    with pytest.raises(SystemExit, match="KEEP:WINDOW"):
        ply_strength.parse_filters("8-0.16")
    old = ply_strength.opponent_player("bgai1", str(SHIPPED_NPZ), str(SHIPPED_PRUNER), (MoveFilter(8, 0.16),))
    assert old.filters == (MoveFilter(8, 0.16),) and old.model.hidden == (512, 256) and old.pruner is not None
    assert ply_strength.opponent_player("bgai1-unpruned", str(SHIPPED_NPZ)).pruner is None
    with pytest.raises(SystemExit, match="need a bgaiN opponent"):
        ply_strength.opponent_player("pubeval", str(SHIPPED_NPZ))


def test_the_players_and_the_bot_are_what_the_turn_loop_and_the_luck_take():
    from bgai.core.game import Evaluator, Player
    from bgai.eval.bot import load_bot
    from bgai.players import PLAYERS

    bot = load_bot()
    assert isinstance(bot, Player) and isinstance(bot, Evaluator)
    assert all(isinstance(kind(), Player) for kind in PLAYERS.values())
    assert not isinstance(PLAYERS["pubeval"](), Evaluator)  # it scores plays; it gives no probabilities
    assert not isinstance(object(), Player)
