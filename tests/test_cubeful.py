"""Cubeful games and matches: doubles, takes, passes, the Jacoby and Crawford rules, scripted cube players."""

import json

import numpy as np
import pytest

from bgai.core.cube import CENTERED, MAX_CUBE, ON_ROLL, OPPONENT
from bgai.core.game import (
    WithoutCube,
    play_duplicate,
    play_duplicate_matches,
    play_games,
    play_matches,
    result_points,
    roll_dice,
)
from bgai.players import PubevalPlayer, RandomPlayer

POINTS = np.arange(26)


class Scripted:
    """Plays the checkers like ``inner``; doubles and takes by fixed answers, and remembers what it was asked."""

    def __init__(self, double: bool, take: bool, inner=None):
        self.inner = inner or PubevalPlayer()
        self.name = f"scripted(double={double}, take={take})"
        self.double, self.take = double, take
        self.asked = []  # (boards, state) of every call

    def choose(self, boards, after, owner, rng, dice=None):
        return self.inner.choose(boards, after, owner, rng, dice=dice)

    def cube_actions(self, boards, state):
        self.asked.append((boards.copy(), state))
        n = len(boards)
        return np.full(n, self.double), np.full(n, self.take)


class PipCube(Scripted):
    """A race-minded cube: doubles with a pip lead of 10% or more, takes unless the doubler leads by 20%."""

    def __init__(self):
        super().__init__(False, True)
        self.name = "pipcube"

    def cube_actions(self, boards, state):
        self.asked.append((boards.copy(), state))
        mine = (np.maximum(boards, 0) * POINTS).sum(axis=1)
        theirs = (np.maximum(-boards, 0) * (25 - POINTS)).sum(axis=1)
        return mine <= 0.9 * theirs, mine >= 0.8 * theirs


def first_roller_is_seat0(games, seed):
    opening = roll_dice(seed, games, np.zeros(len(games), dtype=np.int64))
    return opening[:, 0] > opening[:, 1]


def assert_points_are_stakes(result):
    """Every game is worth its cube: once on a pass, 1..3 times when played out."""
    stake = np.abs(result.points) // result.cube
    assert (np.abs(result.points) == stake * result.cube).all()
    assert (stake[result.passed] == 1).all()
    assert set(stake[~result.passed].tolist()) <= {1, 2, 3}
    assert np.isin(result.cube, [1, 2, 4, 8, 16, 32, 64]).all()


# Money games --------------------------------------------------------------------------------------------------


def test_players_that_never_double_play_exactly_the_cubeless_games():
    cubeless = play_games(PubevalPlayer(), RandomPlayer(), 100, seed=9, batch=32)
    never = play_games(Scripted(False, True), Scripted(False, False, RandomPlayer()), 100, seed=9, batch=32, cube=True)
    assert np.array_equal(cubeless.points, never.points) and np.array_equal(cubeless.turns, never.turns)
    assert (never.cube == 1).all() and not never.passed.any()
    assert cubeless.cube is None and "mean_cube" not in cubeless.summary()


def test_the_cube_is_ignored_unless_asked_for():
    """A player with ``cube_actions`` in a cubeless game is never asked."""
    doubler = Scripted(True, False)
    result = play_games(doubler, doubler, 50, seed=1)
    assert doubler.asked == [] and result.cube is None


def test_double_and_pass_ends_every_game_on_turn_1_for_the_doubler():
    """Given both players double at once and pass every double, when the second player is on roll it doubles and
    the first passes: the doubler (who lost the opening roll) wins the 1-point stake."""
    result = play_games(Scripted(True, False), Scripted(True, False), 300, seed=4, cube=True)
    seat0_first = first_roller_is_seat0(np.arange(300), 4)
    assert np.array_equal(result.points, np.where(seat0_first, -1, 1))
    assert (result.turns == 1).all() and result.passed.all() and (result.cube == 1).all()


def test_double_and_take_every_turn_redoubles_to_64_and_stops():
    """Given both players double whenever they may and always take, the cube doubles before every roll after the
    opening one, the taker redoubles on its next turn, and it stops at 64."""
    a, b = Scripted(True, True), Scripted(True, True)
    result = play_games(a, b, 100, seed=6, batch=25, cube=True)
    assert np.array_equal(result.cube, 2 ** np.minimum(result.turns - 1, 6))
    assert (result.cube == MAX_CUBE).all() and not result.passed.any()  # no game is over in 7 turns
    assert_points_are_stakes(result)
    for player in (a, b):
        for _, state in player.asked:
            assert (state.value < MAX_CUBE).all() and (state.owner != OPPONENT).all()
            # Centered only at the first double of a game; after that the roller always owns the cube it took.
            assert ((state.owner == CENTERED) == (state.value == 1)).all()
            assert ((state.owner == ON_ROLL) == (state.value > 1)).all()


def test_only_the_owner_redoubles():
    """Given seat 0 always doubles and seat 1 only takes, seat 0's first double is taken and seat 1 owns the cube
    from then on: seat 0 is never asked again, and the cube ends at 2 (1 if seat 0 never had a turn after the
    opening roll)."""
    doubler, taker = Scripted(True, True), Scripted(False, True)
    result = play_games(doubler, taker, 300, seed=8, cube=True)
    seat0_first = first_roller_is_seat0(np.arange(300), 8)
    seat0_rolled_after_opening = np.where(seat0_first, result.turns >= 3, result.turns >= 2)
    assert np.array_equal(result.cube, np.where(seat0_rolled_after_opening, 2, 1))
    assert not result.passed.any()
    asked = sum(len(boards) for boards, _ in doubler.asked)
    assert asked == seat0_rolled_after_opening.sum()  # once a game, at its first turn after the opening roll
    assert all((state.owner == CENTERED).all() and (state.value == 1).all() for _, state in doubler.asked)
    # The taker is asked about doubling only while the cube is centered or its own (it never doubles).
    assert all(np.isin(state.owner, [CENTERED, ON_ROLL]).all() for _, state in taker.asked)
    assert_points_are_stakes(result)


def test_race_doubling_gives_takes_passes_and_conserved_points():
    """A pip-count cube on both sides: some doubles are taken, some passed, every game scores its stake, and
    identical deterministic players in swapped seats score exactly opposite points (nothing created or lost)."""
    result = play_duplicate(PipCube(), PipCube(), 200, seed=3, cube=True)
    one, two = result.points[:200], result.points[200:]
    assert np.array_equal(one, -two) and result.points.sum() == 0
    assert result.passed.any() and (result.cube[~result.passed] > 1).any()
    assert_points_are_stakes(result)
    s = result.summary()
    assert s["mean_cube"] > 1 and 0 < s["pass_rate"] < 1 and s["ppg"] == 0


def test_jacoby_rule_counts_gammons_single_while_the_cube_is_centered():
    plain = play_games(PubevalPlayer(), RandomPlayer(), 200, seed=5)
    assert (np.abs(plain.points) > 1).any()
    jacoby = play_games(PubevalPlayer(), RandomPlayer(), 200, seed=5, cube=True, jacoby=True)
    assert np.array_equal(jacoby.points, np.sign(plain.points))
    # Once the cube is turned, gammons count again: the cubes of always-doubling players are turned at turn 1.
    turned = play_games(Scripted(True, True), Scripted(True, True, RandomPlayer()), 200, seed=5, cube=True,
                        jacoby=True)
    assert (np.abs(turned.points) // turned.cube > 1).any()
    with pytest.raises(ValueError, match="Jacoby"):
        play_games(PubevalPlayer(), RandomPlayer(), 2, jacoby=True)


def test_without_cube_hides_cube_actions():
    hidden = WithoutCube(Scripted(True, False))
    assert not hasattr(hidden, "cube_actions") and hidden.name.endswith("(no cube)")
    result = play_games(hidden, hidden, 50, seed=2, cube=True)
    assert (result.cube == 1).all() and not result.passed.any()
    plain = play_games(PubevalPlayer(), PubevalPlayer(), 50, seed=2)
    assert np.array_equal(result.points, plain.points)


def test_cube_actions_of_the_wrong_shape_are_an_error():
    class Broken(Scripted):
        def cube_actions(self, boards, state):
            return np.ones(len(boards) + 1, dtype=bool), np.ones(len(boards), dtype=bool)

    with pytest.raises(ValueError, match="cube_actions gave shape"):
        play_games(Broken(True, True), Broken(True, True), 4, cube=True)


# Matches ------------------------------------------------------------------------------------------------------


def check_match_bookkeeping(result):
    """Scores are the sums of the games; the winner alone reaches the length; the Crawford game is the game after
    the first reaching of length - 1, there is at most one, and no one doubles in it."""
    length = result.length
    assert (result.played.cube[result.crawford] == 1).all() and not result.played.passed[result.crawford].any()
    for m in range(result.matches):
        games = result.played.points[result.match == m]
        assert len(games) == result.games[m] <= 2 * length - 1
        assert result.score[m].tolist() == [games[games > 0].sum(), -games[games < 0].sum()]
        assert result.score[m, result.winner[m]] >= length > result.score[m, 1 - result.winner[m]]
        running = np.zeros(2, dtype=np.int64)
        crawford_seen = False
        for g, points in enumerate(games):
            expected = not crawford_seen and (running == length - 1).any()
            assert result.crawford[result.match == m][g] == expected
            crawford_seen |= expected or (running == length - 1).any()
            running += [max(points, 0), max(-points, 0)]
    assert_points_are_stakes(result.played)


def test_match_of_double_and_pass_plays_the_crawford_game_out():
    """Given players who double at once and pass, every game is a 1-point pass except the Crawford game, which is
    played out; the game after the first to 2 points (in a 3-point match) is the Crawford game."""
    a, b = Scripted(True, False), Scripted(True, False)
    result = play_matches(a, b, 40, 3, seed=2, batch=16)
    check_match_bookkeeping(result)
    assert result.crawford.sum() == 40  # someone reaches 2 of 3 one point at a time, and no one wins 3 at once
    assert (result.played.passed == ~result.crawford).all()
    for player in (a, b):
        for _, state in player.asked:
            assert not state.crawford.any()  # never asked in the Crawford game
            assert ((state.away >= 1) & (state.away <= 3)).all()
            # Post-Crawford only once someone is a point away.
            assert (state.away[state.post_crawford] == 1).any(axis=1).all()
    assert any(state.post_crawford.any() for _, state in a.asked + b.asked)


class DoublesWhenTrailing(Scripted):
    """Doubles only when behind in the match (more points away than its opponent), passes every double."""

    def __init__(self):
        super().__init__(False, False)
        self.name = "trailer"

    def cube_actions(self, boards, state):
        self.asked.append((boards.copy(), state))
        return state.away[:, 0] > state.away[:, 1], np.zeros(len(boards), dtype=bool)


def test_match_cube_states_are_from_the_side_of_the_player_on_roll():
    """Given players who double only when trailing and pass every double, a game from a tied score is played out
    and any other (but the Crawford game) ends with the trailer's double passed: the trailer gains one point."""
    result = play_matches(DoublesWhenTrailing(), DoublesWhenTrailing(), 60, 4, seed=7)
    check_match_bookkeeping(result)
    for m in range(result.matches):
        mine = result.match == m
        running = np.zeros(2, dtype=np.int64)
        for points, passed, crawford in zip(result.played.points[mine], result.played.passed[mine],
                                            result.crawford[mine]):
            if crawford or running[0] == running[1]:
                assert not passed
            else:
                trailer = int(np.argmin(running))
                assert passed and points == (1 if trailer == 0 else -1)
            running += [max(points, 0), max(-points, 0)]
    assert result.played.passed.mean() > 0.3


def test_always_redoubling_players_end_a_match_in_one_game():
    result = play_matches(Scripted(True, True), Scripted(True, True, RandomPlayer()), 30, 5, seed=1)
    assert (result.games == 1).all()
    check_match_bookkeeping(result)


def test_duplicate_matches_of_identical_players_mirror_each_other():
    result = play_duplicate_matches(PipCube(), PipCube(), 30, 3, seed=11)
    one, two = slice(0, 30), slice(30, 60)
    assert np.array_equal(result.winner[one], 1 - result.winner[two])
    assert np.array_equal(result.score[one], result.score[two][:, ::-1])
    assert result.summary()["win_rate"] == 0.5
    check_match_bookkeeping(result)


def test_cubeless_players_in_a_match_play_one_point_games():
    """Players without ``cube_actions`` never double, and a 1-point match is a single game with no Crawford."""
    result = play_matches(PubevalPlayer(), RandomPlayer(), 50, 1, seed=3)
    assert (result.games == 1).all() and not result.crawford.any()
    assert (result.played.cube == 1).all() and not result.played.passed.any()
    s = result.summary()
    assert s["matches"] == 50 and s["win_rate"] > 0.9 and s["win_rate_se"] < 0.05


def test_match_summary_and_bad_length():
    s = play_matches(PipCube(), PubevalPlayer(), 20, 3, seed=5).summary()
    assert s["matches"] == 20 and s["length"] == 3 and s["games"] >= 40 and 0 <= s["win_rate"] <= 1
    with pytest.raises(ValueError, match="at least 1 point"):
        play_matches(PubevalPlayer(), PubevalPlayer(), 2, 0)


def test_result_points_are_widened_for_big_cubes():
    result = play_games(Scripted(True, True), Scripted(True, True, RandomPlayer()), 100, seed=13, cube=True)
    assert result.points.dtype.itemsize >= 2
    assert np.abs(result.points).max() > 127  # a gammon or backgammon at 64
    assert result_points(np.zeros((1, 26), dtype=np.int8)).tolist() == [1]


# The command line ---------------------------------------------------------------------------------------------


def test_bench_cube_plays_the_cubeful_bot_against_itself_without_the_cube(capsys):
    from bgai.frontends.cli import main

    assert main(["bench", "--cube", "--games", "2", "--quiet"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    figures = json.loads(out[-1])
    assert figures["games"] == 4 and figures["cube"] is True and figures["match"] is None
    assert figures["opponent"].endswith("(no cube)") and figures["mean_cube"] >= 1
    assert figures["pass_rate"] == 0  # the opponent always takes, and the bot is never doubled
    assert figures["plies"] == figures["cube_plies"] == 0
    assert "points per game" in out[1]


def test_bench_match_plays_duplicate_matches(capsys):
    from bgai.frontends.cli import main

    assert main(["bench", "--match", "3", "--opponent", "random", "--games", "2", "--quiet"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    figures = json.loads(out[-1])
    assert figures["matches"] == 4 and figures["length"] == 3 and figures["match"] == 3
    assert figures["win_rate"] + figures["win_rate_se"] > 0 and "match wins" in out[1]


@pytest.mark.parametrize("argv, message", [
    (["bench", "--jacoby", "--games", "2"], "--jacoby needs --cube"),
    (["bench", "--cube-plies", "1", "--games", "2"], "--cube-plies needs --cube or --match"),
    (["bench", "--cube", "--cube-plies", "3", "--games", "2"], "cube_plies must be an integer 0..2"),
    (["bench", "--match", "5", "--jacoby", "--games", "2"], "Jacoby rule is for money games"),
    (["bench", "--match", "0", "--games", "2"], "at least 1 point"),
])
def test_bench_cube_bad_options_are_one_line_errors(capsys, argv, message):
    from bgai.frontends.cli import main

    assert main(argv + ["--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
