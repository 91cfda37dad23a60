"""A person against the bot (bgai.play.session.Session): the flow of a game, the cube, the match score and Crawford,
resignations, setting up a position, and the record of every action.

Positions are built from the side of the player on roll with ``Position.from_points`` and set up through an XGID
in which X is the person.
"""

from __future__ import annotations

import numpy as np
import pytest

from bgai import Position, load_bot
from bgai.core.errors import BgaiError, GameStateError, IllegalMoveError, InvalidPositionError
from bgai.formats.xgid import format_xgid
from bgai.play.session import BOT, HUMAN, Phase, Session
from tests.test_cube import exact_cube_equities

# Races with the person's home board full (69 pips) against the opponent's 74 pips, as the bot sees them:
# "Double, take" for the player on roll; and 63 pips against 74: "Double, pass" (GNU Backgammon 2-ply gives the
# player on roll 80.5% there; at 66 pips against 74, 76.4%, it is a take).
DOUBLE_TAKE = Position.from_points({6: 4, 5: 4, 4: 4, 3: 3}, {18: 2, 19: 3, 20: 4, 21: 4, 22: 2})
DOUBLE_PASS = Position.from_points({6: 2, 5: 4, 4: 4, 3: 5}, {17: 1, 19: 4, 20: 4, 21: 4, 22: 2})
# The player on roll is bearing off against fifteen checkers in its outfield: a gammon is all but certain.
GAMMON = Position.from_points({6: 3, 5: 3, 4: 3, 3: 3, 2: 3}, {7: 4, 8: 4, 10: 4, 12: 3})


@pytest.fixture(scope="module")
def bot():
    return load_bot()


def xgid(on_roll: Position, human_on_roll: bool = True, **fields) -> str:
    """The XGID (X the person) of ``on_roll``, seen from the player on roll, who is the person or the bot."""
    board = on_roll.board if human_on_roll else on_roll.switched().board
    return format_xgid(board, x_on_roll=human_on_roll, **fields)


def play_out(session: Session, human_doubles: bool = False, max_actions: int = 2000) -> None:
    """The person plays the bot's favourite play, rolls (or doubles) and takes, until the game is over."""
    for _ in range(max_actions):
        if session.phase is Phase.ROLL:
            session.double() if human_doubles and session.may_double_now else session.roll()
        elif session.phase is Phase.MOVE:
            session.play(str(session.hint()[0].move))
        elif session.phase is Phase.TAKE:
            session.take()
        else:
            return
    raise AssertionError("the game did not end")


def replay_game(game) -> None:
    """Every play of the record is legal in the position it was made from, and the game ends where it says."""
    pos = game.start or Position.start()
    for action in game.actions:
        if action.kind == "move":
            assert action.position_id == pos.position_id()
            pos = pos.play(action.play, action.dice).after
    if game.winner is not None and not game.resigned and game.actions[-2].kind != "drop":
        assert pos.is_game_over()


# A whole game -------------------------------------------------------------------------------------------------


def test_a_whole_money_game_is_played_to_the_end_and_recorded(bot):
    """Given a money session with seed 1, When the person plays on to the end,
    Then the game ends with a winner, the score counts its points, and the record replays legally."""
    session = Session(bot, seed=1)
    play_out(session)
    game = session.game
    assert session.phase is Phase.GAME_OVER and game.winner in (HUMAN, BOT)
    assert session.score[game.winner] == game.points > 0
    assert game.actions[-1].kind == "win" and game.actions[-1].points == game.points
    replay_game(game)
    session.next_game()
    assert session.game.number == 2 and session.phase in (Phase.ROLL, Phase.MOVE)


def test_the_same_seed_and_the_same_actions_give_the_same_session(bot):
    one, two = Session(bot, seed=7), Session(bot, seed=7)
    play_out(one)
    play_out(two)
    assert one.game.actions == two.game.actions


def test_the_opening_roll_is_told_as_one_die_each_and_only_the_first_move(bot):
    told = {}
    for seed in range(20):
        session = Session(bot, seed=seed)
        if not session.game.actions:  # the person won it: its play is recorded as the opening too
            session.play(str(bot.choose_move(session.position, session.dice)))
        first = session.game.actions[0]
        high, low = first.dice
        said = first.describe(session.names)
        assert first.opening and f"the opening roll, {high} against {low}, and " in said, said
        assert not any(a.opening for a in session.game.actions[1:])
        told[first.player] = said
    assert told[HUMAN].startswith("You win the opening roll") and told[BOT].startswith("bgai wins the opening roll")


def test_the_opening_roll_is_never_a_double_and_the_higher_die_moves_first(bot):
    for seed in range(20):
        session = Session(bot, seed=seed)
        first = session.game.actions[0] if session.game.actions else None
        if first is None:  # the person won the opening roll and plays it
            assert session.phase is Phase.MOVE and session.dice[0] != session.dice[1]
            assert session.turn == HUMAN and session.dice[0] > session.dice[1]  # its own die is the first
            with pytest.raises(GameStateError):  # no cube before the opening play
                session.double()
        else:
            assert first.player == BOT and first.kind == "move" and first.dice[0] != first.dice[1]


# Moving checkers ------------------------------------------------------------------------------------------------


def test_a_play_made_checker_by_checker_can_be_undone_before_it_is_finished(bot):
    session = Session(bot)
    session.setup(xgid(Position.start(), dice=(3, 1)))
    session.step(8, 5)
    assert session.pip_counts() == (164, 167)
    session.undo()
    session.step(6, 5)
    session.step(8, 5)
    assert session.phase is Phase.MOVE and session.partial.complete
    session.finish()
    assert session.game.actions[0].play == "8/5 6/5" and session.turn == HUMAN or session.phase is not Phase.MOVE


def test_an_illegal_play_is_refused_and_the_person_plays_again(bot):
    session = Session(bot)
    session.setup(xgid(Position.start(), dice=(6, 5)))
    for bad, message in [("24/13 6/1", "more checkers than the roll allows"), ("24/14", "not part of any legal play"),
                         ("13/7 13/", "cannot read"), ("8/2*", "marks a hit"), ("12/7", "no checker of yours")]:
        with pytest.raises(IllegalMoveError, match=message):
            session.play(bad)
        assert session.phase is Phase.MOVE and session.partial.steps == []
    assert session.play("24/13") and session.game.actions[0].play == "24/13"


def test_a_roll_with_no_play_passes_the_turn(bot):
    """Given the person on the bar against a closed board, its roll is played as "no play" at once."""
    closed = Position.from_points({"bar": 1, 6: 14}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 1: 3})
    session = Session(bot, seed=3)
    session.setup(xgid(closed, dice=(4, 4)))
    assert session.game.actions[0].play == "no play" and session.game.actions[1].player == BOT


# The cube ---------------------------------------------------------------------------------------------------------


def test_the_bot_takes_a_double_it_should_take_and_the_cube_is_its(bot):
    session = Session(bot, seed=2)
    session.setup(xgid(DOUBLE_TAKE))
    assert session.may_double_now and session.cube_hint().action == "Double, take"
    assert session.double() is True
    assert session.cube == 2 and session.cube_owner() == BOT
    assert [a.kind for a in session.game.actions[:2]] == ["double", "take"]
    assert session.phase is Phase.MOVE  # the person rolled after the take


def test_the_bot_passes_a_double_it_should_pass_and_the_person_wins_the_cube(bot):
    session = Session(bot, seed=2)
    session.setup(xgid(DOUBLE_PASS, cube=2, owner=1))
    assert session.double() is False
    assert session.phase is Phase.GAME_OVER and session.score == [2, 0]
    assert [a.kind for a in session.game.actions] == ["double", "drop", "win"]


def test_the_bot_doubles_when_it_should_and_the_person_takes(bot):
    session = Session(bot, seed=4)
    session.setup(xgid(DOUBLE_TAKE, human_on_roll=False))
    assert session.phase is Phase.TAKE and session.game.actions[0].kind == "double"
    hint = session.cube_hint()
    assert hint.kind == "take" and hint.action == "Take" and hint.equities["take"] > hint.equities["pass"] == -1
    session.take()
    assert session.cube == 2 and session.cube_owner() == HUMAN
    assert session.game.actions[2].player == BOT and session.game.actions[2].kind == "move"


# Seven checkers on the ace point against six: every roll leaves both sides in the two-sided bear-off database, so a
# rollout's cube decision there is exact (tests/test_cube.py). Double, pass.
SEVEN_ON_THE_ACE = Position.from_position_id("aAcAgD8AAAAAAA")
FEW_TRIALS = {"trials": 36, "jobs": 1}  # the position is exact: one roll each of the 36 is the whole expectation


def test_a_cube_hint_by_rollout_is_the_rollouts_on_both_sides_of_the_double(bot):
    """Given seven on the ace point against six in a money session, When the person on roll asks the cube hint by
    rollout, Then it is the rollout's decision, whose no double and double/take are the database's exact ones; and
    facing the bot's double in the same position, the rollout's hint is to pass (take: minus double/take)."""
    nd, dt = exact_cube_equities(SEVEN_ON_THE_ACE.board)
    session = Session(bot, seed=2)
    session.setup(xgid(SEVEN_ON_THE_ACE))
    assert session.cube_rollout_refusal is None
    hint = session.cube_hint(rollout=FEW_TRIALS)
    assert hint.kind == "double" and hint.action == "Double, pass" and "a cubeful rollout" in str(hint.decision)
    assert hint.equities["no_double"] == pytest.approx(nd, abs=1e-4)
    assert hint.equities["double_take"] == pytest.approx(dt, abs=1e-4) and hint.equities["double_pass"] == 1.0
    assert "cube efficiency" in str(session.cube_hint().decision)  # without rollout: the formula's
    session.setup(xgid(SEVEN_ON_THE_ACE, human_on_roll=False))
    assert session.phase is Phase.TAKE
    hint = session.cube_hint(rollout=FEW_TRIALS)
    assert hint.kind == "take" and hint.action == "Pass" and "a cubeful rollout" in str(hint.decision)
    assert hint.equities == {"take": pytest.approx(-dt, abs=1e-4), "pass": -1.0}


@pytest.mark.parametrize("options, reason", [
    ({"match_length": 5}, "not a 5-point match"), ({"jacoby": True}, "not a game with the Jacoby rule"),
])
def test_a_cube_hint_by_rollout_is_refused_where_the_rollouts_rules_do_not_hold(bot, options, reason):
    session = Session(bot, seed=2, **options)
    session.setup(xgid(DOUBLE_TAKE, length=options.get("match_length", 0)))
    assert reason in session.cube_rollout_refusal
    with pytest.raises(BgaiError, match=reason):
        session.cube_hint(rollout=True)
    assert session.cube_hint().action  # the formula's hint is there


def test_passing_the_bots_double_loses_the_cube_before_the_double(bot):
    session = Session(bot, seed=4)
    session.setup(xgid(DOUBLE_PASS, human_on_roll=False, cube=2, owner=-1))
    assert session.phase is Phase.TAKE and session.game.actions[0].cube == 4
    session.drop()
    assert session.score == [0, 2] and session.phase is Phase.GAME_OVER


def test_only_the_cube_owner_redoubles(bot):
    session = Session(bot, seed=5)
    session.setup(xgid(DOUBLE_TAKE, cube=2, owner=-1))  # the bot owns the cube: the person's dice are rolled
    assert session.phase is Phase.MOVE and not session.may_double_now
    with pytest.raises(GameStateError, match="cannot double now"):
        session.double()


def test_a_cube_at_64_is_not_turned(bot):
    session = Session(bot, seed=5)
    session.setup(xgid(DOUBLE_TAKE, cube=64, owner=1))
    assert session.phase is Phase.MOVE  # no cube decision to make: rolled at once


def test_the_jacoby_rule_counts_a_gammon_single_with_the_cube_centered(bot):
    session = Session(bot, seed=1, jacoby=True)
    session.setup(xgid(Position.from_points({1: 1}, {7: 15}), dice=(2, 1)))
    session.play("1/off")
    assert session.phase is Phase.GAME_OVER and session.score == [1, 0]
    plain = Session(bot, seed=1)
    plain.setup(xgid(Position.from_points({1: 1}, {7: 15}), dice=(2, 1)))
    plain.play("1/off")
    assert plain.score == [2, 0]


# Matches and Crawford -------------------------------------------------------------------------------------------


def test_a_match_scores_each_game_and_plays_the_crawford_game_without_the_cube(bot):
    """Given a 3-point match, When the person plays on (doubling whenever it may),
    Then games are scored until one side reaches 3; the game after the first side reaches 2 is the Crawford
    game, in which no one doubles, and the cube comes back after it."""
    session = Session(bot, match_length=3, seed=11)
    seen_crawford = False
    while session.phase is not Phase.MATCH_OVER:
        game = session.game
        assert game.crawford == session.crawford
        if game.crawford:
            seen_crawford = True
            assert 2 in game.score and not any(a.kind == "double" for a in game.actions)
        play_out(session, human_doubles=True)
        if session.game.crawford:
            assert not any(a.kind == "double" for a in session.game.actions)
        replay_game(session.game)
        if session.phase is Phase.GAME_OVER:
            assert session.crawford == (2 in session.score and not seen_crawford and not session.game.crawford)
            session.next_game()
    assert max(session.score) >= 3 and sum(g.points for g in session.games) == sum(session.score)
    with pytest.raises(GameStateError, match="match is over"):
        session.roll()


def test_doubling_is_refused_in_the_crawford_game(bot):
    session = Session(bot, match_length=5, seed=1)
    session.setup(xgid(DOUBLE_TAKE, score=(4, 2), crawford=True, length=5))
    assert session.crawford and session.phase is Phase.MOVE  # no cube decision: the dice were rolled
    session.setup(xgid(DOUBLE_TAKE, score=(4, 2), crawford=False, length=5))  # post-Crawford
    assert session.may_double_now and session.match_score().post_crawford


def test_a_match_gammon_wins_the_match_even_past_its_length(bot):
    session = Session(bot, match_length=3, seed=1)
    session.setup(xgid(Position.from_points({1: 1, 2: 1}, {7: 4, 8: 4, 10: 4, 12: 3}), dice=(6, 5), score=(2, 0),
                       length=3))
    session.play("2/off 1/off")
    assert session.phase is Phase.MATCH_OVER and session.score == [4, 0]
    assert "won the 3-point match" in session.status()


# Resigning ------------------------------------------------------------------------------------------------------


def test_the_bot_accepts_a_resignation_worth_as_much_as_playing_on(bot):
    session = Session(bot, seed=1)
    session.setup(xgid(GAMMON, human_on_roll=False, dice=None))
    # The bot is too good to double and plays on; a single game is not enough for it, a gammon is.
    assert session.game.actions[0].player == BOT and session.game.actions[0].kind == "move"
    assert session.phase is Phase.ROLL
    assert session.resign(1) is False and session.phase is Phase.ROLL
    assert session.resign(2) is True
    assert session.phase is Phase.GAME_OVER and session.score == [0, 2] and session.game.resigned
    assert [a.kind for a in session.game.actions[-5:]] == ["resign", "reject", "resign", "accept", "win"]


def test_resigning_is_only_on_the_persons_turn(bot):
    session = Session(bot, seed=4)
    session.setup(xgid(DOUBLE_TAKE, human_on_roll=False))
    with pytest.raises(GameStateError, match="on your turn"):
        session.resign(1)


# Wrong moments and bad input --------------------------------------------------------------------------------------


def test_every_action_out_of_its_phase_is_refused_with_the_reason(bot):
    session = Session(bot, seed=2)
    session.setup(xgid(DOUBLE_TAKE))  # phase ROLL
    for action in (session.take, session.drop, session.finish, session.undo, session.next_game, session.hint):
        with pytest.raises(GameStateError, match="your turn to roll or double"):
            action()
    with pytest.raises(GameStateError):
        session.step(6, 1)
    session.roll()  # phase MOVE
    for action in (session.roll, session.double, session.take, session.next_game, session.cube_hint):
        with pytest.raises(GameStateError, match="you have rolled"):
            action()
    with pytest.raises(IllegalMoveError, match="not complete"):
        session.finish()


@pytest.mark.parametrize("text, error", [
    ("4HPwATDgc/ABM", "14 base64"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:7x:0:0:0:0:10", "dice field"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", None),
    ("XGID=-b----E-C---eE---c-e----B-:1:0:1:00:0:0:0:0:10", "centered cube has value 1"),
])
def test_setting_up_a_bad_position_is_refused_and_changes_nothing(bot, text, error):
    session = Session(bot, seed=1)
    before = session.xgid()
    if error is None:
        session.setup(text)
        return
    with pytest.raises(InvalidPositionError, match=error):
        session.setup(text)
    assert session.xgid() == before


def test_a_money_xgid_is_refused_in_a_match(bot):
    session = Session(bot, match_length=5, seed=1)
    with pytest.raises(InvalidPositionError, match="money game"):
        session.setup(xgid(DOUBLE_TAKE))


def test_the_xgid_of_a_session_sets_up_the_same_game(bot):
    session = Session(bot, match_length=7, seed=3)
    session.setup(xgid(DOUBLE_TAKE, cube=2, owner=1, score=(3, 4), length=7, dice=(5, 2)))
    copy = Session(bot, match_length=7, seed=99)
    copy.setup(session.xgid())
    assert copy.xgid() == session.xgid()
    assert (copy.cube, copy.cube_owner(), copy.score, copy.dice, copy.phase) == (2, HUMAN, [3, 4], (5, 2), Phase.MOVE)


@pytest.mark.parametrize("kwargs, message", [
    ({"match_length": -1}, "match length"),
    ({"match_length": 99}, "match length must be"),
    ({"match_length": 5, "jacoby": True}, "Jacoby"),
])
def test_bad_session_options_are_refused(bot, kwargs, message):
    with pytest.raises(ValueError, match=message):
        Session(bot, **kwargs)


def test_with_its_dice_rolled_the_person_may_still_resign(bot):
    """Given the bot owning the cube at 2 and far ahead, the person's dice are rolled at once; the bot judges a
    resignation by the person's best play of those dice."""
    session = Session(bot, seed=1)
    session.setup(xgid(GAMMON, human_on_roll=False, cube=2, owner=-1))
    assert session.phase is Phase.MOVE
    assert session.resign(1) is False
    assert session.resign(2) is True and session.score == [0, 4]


# The record as a .mat file ------------------------------------------------------------------------------------


def test_a_match_is_saved_as_a_mat_file_that_reads_back_the_same(bot):
    """Given a 3-point match played to its end with doubles, When it is written through bgai.formats.matchfile,
    Then the file reads back to the same games, scores and results, and the seed is in its header."""
    from bgai.formats.matchfile import Double, Take, read_mat

    session = Session(bot, match_length=3, seed=11)
    while session.phase is not Phase.MATCH_OVER:
        play_out(session, human_doubles=True)
        if session.phase is Phase.GAME_OVER:
            session.next_game()
    text = session.mat_text()
    record = read_mat(text)
    assert record == session.match_record() and '; [Seed "11"]' in text
    assert record.players == ("You", "bgai") and record.length == 3
    assert list(record.score) == session.score and record.winner == (HUMAN if session.score[0] >= 3 else BOT)
    assert [(g.result.player, g.result.points) for g in record.games] == [(g.winner, g.points) for g in session.games]
    kinds = [type(a) for g in record.games for a in g.actions]
    assert Double in kinds and Take in kinds


def test_the_record_keeps_accepted_resignations_and_leaves_out_set_up_games(bot):
    session = Session(bot, seed=1)
    session.setup(xgid(GAMMON, human_on_roll=False))
    session.resign(1)  # rejected: not recorded
    session.resign(2)
    assert session.games_left_out == 1 and session.match_record().games == []
    session.next_game()
    play_out(session)
    record = session.match_record()
    assert len(record.games) == 1 and record.games[0].score == (0, 2)  # the score the set-up game left
    assert record.games[0].result.points == session.game.points


def test_an_unfinished_game_is_saved_as_far_as_it_went(bot):
    from bgai.formats.matchfile import read_mat

    session = Session(bot, seed=5)
    session.roll() if session.phase is Phase.ROLL else None
    session.play(str(session.hint()[0].move))
    record = read_mat(session.mat_text())
    assert record.games[0].result is None and len(record.games[0].actions) >= 2


def test_a_game_quit_before_anything_was_done_in_it_is_no_game_of_the_record(bot):
    from bgai.formats.matchfile import read_mat

    for seed in range(40):  # a session whose second game the person's opening roll starts, nothing played yet
        session = Session(bot, seed=seed)
        play_out(session)
        session.next_game()
        if not session.game.actions:
            break
    assert len(session.games) == 2 and not session.game.actions and session.phase is Phase.MOVE
    text = session.mat_text()
    assert "Game 1" in text and "Game 2" not in text and len(read_mat(text).games) == 1


def _state(s: Session):
    """Everything a person can see of a session, to compare before and after a refused action."""
    return (s.phase, s.turn, s.dice, s.cube, s.cube_owner(), s.match_length, tuple(s.score), s.crawford,
            s.version, s.xgid(), len(s.games), [list(g.actions) for g in s.games], s.mat_text())


@pytest.mark.parametrize("text", [
    # A 5-point match at 3-2 whose game is over: refused, and the match settings must not leak into the session.
    format_xgid(Position.from_points({}, {6: 2}).board, score=(3, 2), length=5),
    # A doubled position with a centered cube of 2: refused; the game in progress must not be abandoned.
    "XGID=-b----E-C---eE---c-e----B-:1:0:1:D:0:0:0:0:10",
    "XGID=-b----E-C---eE---c-e----B-:0:0:1:77:0:0:0:0:10",
    "not a position",
])
def test_a_refused_setup_leaves_the_session_as_it_was(bot, text):
    """Given a session with a game in progress, When a set-up is refused,
    Then nothing of the session changed: not the match length, the score, the game in progress or its record."""
    s = Session(bot, seed=5)
    before = _state(s)
    with pytest.raises(BgaiError):
        s.setup(text)
    assert _state(s) == before
    s.step(8, 3)  # and the game goes on: the person plays its opening 53
    assert s.partial.text() == "8/3"


def test_a_refused_play_leaves_the_steps_made_so_far(bot):
    s = Session(bot, seed=5)  # the person has the opening roll, 53
    assert s.phase is Phase.MOVE
    s.step(8, 3)
    before = _state(s), s.partial.text()
    with pytest.raises(IllegalMoveError):
        s.play("24/1", finish=True)
    assert (_state(s), s.partial.text()) == before


def test_resigning_on_the_opening_roll_leaves_a_writable_record(bot):
    """Given the person's opening roll (seed 5), When the person resigns before playing it,
    Then the game is over and the match record is still written and read back, the resignation its result."""
    from bgai.formats.matchfile import read_mat

    s = Session(bot, seed=5, match_length=3)
    assert s.phase is Phase.MOVE and not s.game.actions
    assert s.resign(1) and s.phase is Phase.GAME_OVER
    record = read_mat(s.mat_text())
    assert record.games[0].result.player == BOT and record.games[0].result.points == 1
    s.next_game()  # (game 2 is in the record once something is done in it)
    assert ("Game 2" in s.mat_text()) == bool(s.game.actions) and read_mat(s.mat_text()).games[0] == record.games[0]


def test_cubeful_equities_of_plays_count_the_cube_as_it_is(bot):
    """Given the person far behind in a race it cannot be gammoned in (it has borne checkers off), When it asks the
    cubeful equity of its plays, Then each is exactly -1: the bot, on roll after any play, doubles and the person
    must pass (while the cubeless equity is above -1). In a match they are match-winning chances."""
    behind = Position.from_points({6: 2, 5: 2, 4: 2, 3: 2}, {24: 2, 23: 2, 22: 2})  # 8 checkers against 6
    s = Session(bot, seed=1)
    s.setup(xgid(behind, dice=(2, 1)))
    moves = s.partial.legal
    cubeful = s.cubeful_equities(moves)
    assert cubeful == pytest.approx([-1.0] * len(moves))
    assert all(r.equity > -1.0 for r in s.hint())
    match = Session(bot, seed=1, match_length=5)
    match.setup(xgid(behind, dice=(2, 1), length=5))
    assert all(0.0 <= v <= 1.0 for v in match.cubeful_equities(match.partial.legal))
    rolling = Session(bot, seed=0)  # the person to roll: no plays yet
    assert rolling.phase is Phase.ROLL
    with pytest.raises(GameStateError):
        rolling.cubeful_equities(moves)


def test_cubeful_equities_of_plays_are_at_the_bots_checker_plies_not_its_deeper_cube():
    # A 1-ply bot decides its own cube at 2-ply (CUBE_PLIES); the hint's cubeful equities rank every play at once,
    # at the 1-ply of its checker play, as the page says
    from bgai.core.cube import CubeState

    one = load_bot(plies=1)
    s = Session(one, seed=1)
    s.setup(xgid(Position.from_position_id("4HPwATDgc/ABMA"), dice=(2, 1)))
    moves = s.partial.legal[:4]
    boards = np.stack([m.after.board for m in moves])
    at_one = -load_bot(plies=1, cube_plies=1).cube_equities(boards, CubeState.money(len(moves))).equity
    assert one.cube_plies == 2 and s.cubeful_equities(moves) == pytest.approx(at_one.tolist(), abs=1e-9)


def test_the_tutor_warns_of_a_bad_play_before_it_is_made_and_makes_it_when_confirmed(bot):
    from bgai.play.session import TUTOR_THRESHOLD, TutorWarning

    # Given the opening 31 to play with the tutor on, at the analysis's "doubtful" threshold
    assert TUTOR_THRESHOLD == 0.03
    session = Session(bot, seed=1, tutor=TUTOR_THRESHOLD)
    session.setup(xgid(Position.start(), dice=(3, 1)))
    before = _state(session)
    # When the person plays 24/21 24/23, which loses about a tenth of a point to 8/5 6/5
    with pytest.raises(TutorWarning) as warned:
        session.play("24/21 24/23")
    # Then the tutor says so, with the best play and the error's mark, and the session is as it was
    assert warned.value.best == "8/5 6/5" and warned.value.error >= TUTOR_THRESHOLD and warned.value.mark
    assert str(warned.value).startswith("the tutor: 24/23 24/21 loses") and warned.value.action == "24/23 24/21"
    assert _state(session) == before
    # and confirmed, the play is made; the best play is made without a word
    assert session.play("24/21 24/23", confirm=True) and session.game.actions[0].play == "24/23 24/21"
    again = Session(bot, seed=1, tutor=TUTOR_THRESHOLD)
    again.setup(xgid(Position.start(), dice=(3, 1)))
    assert again.play("8/5 6/5")
    # and without the tutor nothing is checked
    quiet = Session(bot, seed=1)
    quiet.setup(xgid(Position.start(), dice=(3, 1)))
    assert quiet.play("24/21 24/23")


def test_the_tutor_warns_of_cube_errors_a_missed_double_and_a_wrong_take(bot):
    from bgai.play.session import TutorWarning

    # Given the person on roll in a race it should double and the bot pass (DOUBLE_PASS), with the tutor on
    session = Session(bot, seed=2, tutor=0.03)
    session.setup(xgid(DOUBLE_PASS))
    with pytest.raises(TutorWarning) as warned:
        session.roll()  # rolling is not doubling
    assert (warned.value.action, warned.value.best) == ("no double", "double") and warned.value.error > 0.03
    assert session.phase is Phase.ROLL and session.dice is None
    session.roll(confirm=True)
    # And given the bot doubling the person in that race, the person should pass: a take is warned of
    facing = Session(bot, seed=2, tutor=0.03)
    facing.setup(xgid(DOUBLE_PASS, human_on_roll=False))
    if facing.phase is Phase.TAKE:  # (the bot doubled at once)
        with pytest.raises(TutorWarning) as warned:
            facing.take()
        assert (warned.value.action, warned.value.best) == ("take", "pass")
        facing.drop()  # the right answer passes unwarned
        assert facing.phase in (Phase.GAME_OVER, Phase.MATCH_OVER)
    else:
        pytest.fail(f"the bot did not double in a double/pass race: {facing.phase}")
