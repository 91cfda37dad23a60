"""The rules of backgammon, one named scenario each.

Every test builds a small position with ``Position.from_points(mine, theirs)`` (both numbered from the side of X,
the player on roll, who moves from 24 down to 1 and bears off past 1), states the roll, and asserts the exact set
of legal plays in standard notation, and where it matters what the afterstate holds.

The rules are cited from the standard rules of backgammon, as published by the US Backgammon Federation and on
bkgm.com ("Rules of Backgammon", sections *Movement of the Checkers*, *Hitting and Entering*, *Bearing Off*), and
restated in the docstring of ``bgai.core.movegen``. Short forms used below:

* [Move]   A checker may land on an open point: empty, holding own checkers, or a single opposing checker.
           A point held by two or more opposing checkers is closed, also as a stop on the way of one checker
           that plays both dice.
* [Both]   Both dice must be played when possible; when only one can be played, the larger if it can be;
           doubles are played four times, or as many times as possible.
* [Hit]    A checker landing on a single opposing checker (a blot) hits it; the blot goes to the bar.
* [Enter]  A player with checkers on the bar must enter them all (die N enters on the opponent's N-point, which is
           X's point 25 - N) before moving any other checker.
* [Off]    Bearing off starts only when all fifteen checkers are home (points 1..6). A die bears off a checker
           from the point of its number, or from the highest occupied point when no checker stands higher;
           a checker hit meanwhile must re-enter and come home before bearing off resumes.

Diagrams show only the points that matter (the code has the whole position): a row of point numbers, then X's
and O's checkers on them. Checkers missing from a position are borne off; it need not have fifteen on the board.
"""

from __future__ import annotations

import pytest

from bgai.core.errors import IllegalMoveError
from bgai.core.notation import NO_PLAY
from bgai.formats.position import Position

ALL_ROLLS = [f"{a}{b}" for a in range(1, 7) for b in range(1, a + 1)]


def plays(position: Position, dice) -> set[str]:
    """The legal plays of ``position`` with ``dice``, in standard notation."""
    return {str(move) for move in position.legal_moves(dice)}


def mover_after(position: Position, play: str, dice) -> Position:
    """The position after ``play``, seen again from the mover (X) rather than the opponent on roll next."""
    return position.play(play, dice).after.switched()


# Both dice, the larger die ------------------------------------------------------------------------------------


def test_must_use_both_dice_when_possible():
    """[Both] Playing the 6 with the checker on 9 leaves no 5 (13/8 is blocked), so that play is illegal:
    the only legal play uses both dice.

        point: 13  12  11  10   9   8   7   6   5   4   3   2   1
        X:      1                1                               13
        O:                           2                       2

    Given X on 13 and 9 (the rest on the ace point, which cannot bear off while 13 and 9 are out),
    When X rolls 6-5,
    Then 9/3 alone (a legal 6 after which no 5 can be played) is not allowed; only 13/7 9/4 is.
    """
    position = Position.from_points({13: 1, 9: 1, 1: 13}, {8: 2, 2: 2, 20: 3})

    assert plays(position, "65") == {"13/7 9/4"}
    with pytest.raises(IllegalMoveError):
        position.play("9/3", "65")


def test_must_play_the_larger_die_when_only_one_can_be_played():
    """[Both] Either die alone can be played, but not both: then the larger one must be played.

        point: 13  12  11  10   9   8   7   6   5   4   3   2   1
        X:      1                                                14
        O:                                                   2

    Given X's only mobile checker on 13 and O's point on 2 (13/7/2 and 13/8/2 both end there),
    When X rolls 6-5,
    Then the only legal play is 13/7, not 13/8.
    """
    position = Position.from_points({13: 1, 1: 14}, {2: 2, 20: 2})

    assert plays(position, "65") == {"13/7"}
    with pytest.raises(IllegalMoveError):
        position.play("13/8", "65")


def test_may_play_the_smaller_die_when_the_larger_cannot_be_played():
    """[Both] When the larger die cannot be played at all, the smaller one must be played.

        point: 13  12  11  10   9   8   7   6   5   4   3   2   1
        X:      1                                                14
        O:                               2                   2

    Given O's points on 7 (no 6 from 13) and 2 (no 6 after 13/8),
    When X rolls 6-5,
    Then the only legal play is 13/8.
    """
    position = Position.from_points({13: 1, 1: 14}, {7: 2, 2: 2, 20: 2})

    assert plays(position, "65") == {"13/8"}


def test_no_legal_play_loses_the_turn():
    """[Both] When neither die can be played the turn is lost: one empty play, the position handed over as is.

    Given X's only mobile checker on 24 behind O's points on 18 and 19,
    When X rolls 6-5,
    Then there is exactly one play, "no play", whose afterstate is the same position seen by O.
    """
    position = Position.from_points({24: 1, 1: 14}, {18: 2, 19: 2})

    (move,) = position.legal_moves("65")
    assert str(move) == NO_PLAY
    assert move.checker_steps() == []
    assert move.after == position.switched()
    assert position.play("no play", "65") == move


# Closed points ------------------------------------------------------------------------------------------------


def test_closed_point_blocks_a_checker_on_its_way():
    """[Move] A checker playing both dice stops on the way; the stop must be open too.

        point: 24  23  22  21  20  19  18  17  ...  13
        X:      1
        O:                          2   2

    Given X on 24 and O's points on 19 (24/19) and 18 (24/18),
    When X rolls 6-5,
    Then 24/13 is not legal (both of its stops are closed): X has no play.
    And with only 18 closed, 24/19/13 goes through and 24/13 is the one play.
    """
    blocked = Position.from_points({24: 1, 1: 14}, {18: 2, 19: 2})
    assert plays(blocked, "65") == {NO_PLAY}
    with pytest.raises(IllegalMoveError, match="not a legal play"):
        blocked.play("24/13", "65")

    one_way = Position.from_points({24: 1, 1: 14}, {18: 2})
    assert plays(one_way, "65") == {"24/13"}


# Hitting and entering -----------------------------------------------------------------------------------------


def test_hitting_a_blot_sends_it_to_the_bar():
    """[Hit] A checker that lands on a blot puts it on the bar; hits are marked with '*'.

        point:  8   7   6   5   4
        X:      2       2
        O:                  1

    Given O's blot on X's 5-point,
    When X rolls 3-1 and plays 8/5* 6/5,
    Then O has one checker on its bar (its own index 25 in the afterstate, where O is on roll),
    And O still has all its checkers on the board.
    """
    position = Position.from_points({8: 2, 6: 2}, {5: 1, 20: 2})

    assert plays(position, "31") == {
        "8/5* 6/5", "8/7 8/5*", "8/5*/4", "6/5*/2", "6/5* 6/3", "8/7 6/3", "8/4", "6/2",
    }
    after = position.play("8/5* 6/5", "31").after
    assert after.board[25] == 1  # O (on roll in ``after``) has a checker on its bar
    assert after.borne_off() == (15 - 3, 15 - 4)  # O: 3 on the board, X: 4
    assert after.switched() == Position.from_points({8: 1, 6: 1, 5: 2}, {"bar": 1, 20: 2})


def test_hitting_on_the_way_is_marked_at_the_stop():
    """[Hit] A checker may hit on its stop and move on; notation shows the stop: 8/5*/4.

    Given the same position as above,
    When X plays 3-1 with one checker from 8, 3 first,
    Then the blot is on the bar and the checker ends on 4.
    """
    position = Position.from_points({8: 2, 6: 2}, {5: 1, 20: 2})

    after = mover_after(position, "8/5*/4", "31")
    assert after == Position.from_points({8: 1, 6: 2, 4: 1}, {"bar": 1, 20: 2})


def test_two_on_the_bar_with_one_entry_point_open_enter_one_and_nothing_else_moves():
    """[Enter] Both checkers on the bar must enter before anything else moves.

        point: 24  23  22  21  20  19     13
        X:                                 1      bar: 2
        O:      2   2   .   2   2   2

    Given X with two checkers on the bar and O's board closed except for X's 22 (O's 3-point),
    When X rolls 6-3,
    Then the 3 enters one checker on 22, the 6 cannot enter the other (19 is closed),
    And the checker on 13 may not use the 6 while X still has a checker on the bar.
    """
    position = Position.from_points({"bar": 2, 13: 1, 1: 12}, {19: 2, 20: 2, 21: 2, 23: 2, 24: 2})

    assert plays(position, "63") == {"bar/22"}
    after = mover_after(position, "bar/22", "63")
    assert after.board[25] == 1  # one checker still on X's bar
    assert after == Position.from_points({"bar": 1, 22: 1, 13: 1, 1: 12}, {19: 2, 20: 2, 21: 2, 23: 2, 24: 2})


def test_enter_with_the_die_that_can_then_play_the_other():
    """[Enter] + [Both] With one checker on the bar, entering frees the other die for any checker.

        point: 24  23  22  21  20  19  ...  13  ...  10
        X:                                   1           bar: 1
        O:                          2                 2

    Given X on the bar, O's point on 19 (no entry with the 6) and 22 open,
    When X rolls 6-3,
    Then X enters with the 3 and plays the 6 with the entered checker (bar/16) or another (bar/22 13/7).
    """
    position = Position.from_points({"bar": 1, 13: 1, 1: 13}, {19: 2, 10: 2})

    assert plays(position, "63") == {"bar/16", "bar/22 13/7"}


def test_could_enter_with_either_die_but_must_use_the_larger():
    """[Enter] + [Both] Either die enters, but then the other cannot be played: the larger die must enter.

        point: 24  23  22  21  20  19  18  17  16
        X:                                             bar: 1
        O:                                       2

    Given X on the bar and O's point on 16 (bar/19/16 and bar/22/16 both end there),
    When X rolls 6-3,
    Then X must enter with the 6: bar/19, not bar/22.
    """
    position = Position.from_points({"bar": 1, 1: 14}, {16: 2})

    assert plays(position, "63") == {"bar/19"}
    with pytest.raises(IllegalMoveError):
        position.play("bar/22", "63")


def test_entering_on_a_blot_hits_it():
    """[Enter] + [Hit] A checker may enter on a blot and hits it.

    Given X on the bar and O's blot on X's 22 (O's 3-point),
    When X rolls 3-3,
    Then bar/22* enters and hits, and the other three 3s carry the same checker on to 13
    (the checkers on the ace point cannot move before all are home).
    """
    position = Position.from_points({"bar": 1, 1: 14}, {22: 1, 10: 2})

    assert plays(position, "33") == {"bar/22*/13"}
    assert position.play("bar/22*/13", "33").after.board[25] == 1


@pytest.mark.parametrize("dice", ALL_ROLLS)
def test_closed_board_with_a_checker_on_the_bar_is_no_play(dice):
    """[Enter] A checker on the bar facing a closed board cannot enter, and nothing else may move.

        point: 24  23  22  21  20  19     13
        X:                                 2      bar: 1
        O:      2   2   2   2   2   2

    Given X on the bar against O's six home points,
    When X rolls anything,
    Then the only play is "no play", and its afterstate is the position unchanged, seen by O.
    """
    position = Position.from_points({"bar": 1, 13: 2, 6: 12}, {p: 2 for p in range(19, 25)})

    (move,) = position.legal_moves(dice)
    assert str(move) == NO_PLAY
    assert move.after == position.switched()


# Doubles ------------------------------------------------------------------------------------------------------


def test_doubles_are_played_four_times():
    """[Both] A double is played four times.

    Given X's only mobile checker on 24 and nothing in its way,
    When X rolls 3-3,
    Then it moves 12 pips in four steps: 24/12.
    """
    position = Position.from_points({24: 1, 1: 14}, {})

    (move,) = position.legal_moves("33")
    assert str(move) == "24/12"
    assert [(f, t) for f, t, _ in move.checker_steps()] == [(24, 21), (21, 18), (18, 15), (15, 12)]


def test_doubles_played_only_twice_when_the_third_is_blocked():
    """[Both] A double is played as many times as possible.

        point: 24  ...  19  ...  14  ...   9
        X:      1
        O:                                 2

    Given X's only mobile checker on 24 and O's point on 9,
    When X rolls 5-5,
    Then 24/19/14 is played and the third and fourth 5 are lost.
    """
    position = Position.from_points({24: 1, 1: 14}, {9: 2})

    (move,) = position.legal_moves("55")
    assert str(move) == "24/14"
    assert len(move.checker_steps()) == 2


def test_doubles_played_three_times_when_that_is_the_most():
    """[Both] As many of the four as possible, spread over several checkers if need be.

        point: 24  ...  20  ...  16  ...  12  ...   8
        X:      1        1
        O:                                 2         2

    Given X on 24 and 20, with O's points on 12 and 8,
    When X rolls 4-4,
    Then three 4s are the most that can be played, and they all end with both checkers on 16.
    """
    position = Position.from_points({24: 1, 20: 1, 1: 13}, {12: 2, 8: 2})

    (move,) = position.legal_moves("44")
    assert len(move.checker_steps()) == 3
    assert move.after.switched() == Position.from_points({16: 2, 1: 13}, {12: 2, 8: 2})
    assert str(move) == "24/16 20/16"


# Bearing off --------------------------------------------------------------------------------------------------


def test_bear_off_with_the_exact_number():
    """[Off] A die bears off a checker from the point of its number.

        point:  6   5   4   3   2   1
        X:          1       1

    Given X with two checkers left, on 5 and 3,
    When X rolls 5-3,
    Then 5/off 3/off takes both off; the only other play, 5/2 3/off, moves 5/2 with the 3 and bears off
    from 3 (now the highest point) with the 5.
    """
    position = Position.from_points({5: 1, 3: 1}, {20: 2})

    assert plays(position, "53") == {"5/off 3/off", "5/2 3/off"}
    after = position.play("5/off 3/off", "53").after
    assert after.borne_off() == (13, 15)  # (O, now on roll: 2 left on the board; X: all off)
    assert after.is_game_over()


def test_bear_off_from_the_highest_point_with_a_larger_die():
    """[Off] A die larger than the highest occupied point bears off from that point.

    Given X's last two checkers on the 3-point,
    When X rolls 6-5,
    Then both come off: 3/off(2).
    """
    position = Position.from_points({3: 2}, {20: 2})

    assert plays(position, "65") == {"3/off(2)"}


def test_bear_off_double_takes_off_as_many_as_there_are():
    """[Off] + [Both] A double bears off up to four checkers; with fewer left, the game ends early.

    Given X's last two checkers on the 6-point,
    When X rolls 6-6,
    Then both come off, and the two remaining 6s have nothing to move.
    """
    position = Position.from_points({6: 2}, {20: 2})

    (move,) = position.legal_moves("66")
    assert str(move) == "6/off(2)"
    assert move.after.is_game_over()


def test_cannot_bear_off_with_a_larger_die_while_a_higher_point_is_occupied():
    """[Off] A larger die bears off only from the highest point; with a checker higher up, it must move that one.

        point:  6   5   4   3   2   1
        X:      1               1

    Given X with checkers on 6 and 2,
    When X rolls 5-3,
    Then the 5 cannot take the checker off 2 (6 is higher): it plays 6/1, or finishes 6/3/off,
    So 6/3 2/off (the 5 bearing off from 2) is illegal.
    """
    position = Position.from_points({6: 1, 2: 1}, {20: 2})

    assert plays(position, "53") == {"6/1 2/off", "6/off"}
    with pytest.raises(IllegalMoveError):
        position.play("6/3 2/off", "53")


def test_cannot_bear_off_while_a_checker_is_outside_home():
    """[Off] Bearing off starts only when all fifteen checkers are home.

        point: 10   9   8   7 | 6   5   4   3   2   1
        X:      1             |                     14

    Given X with one checker on 10 and the rest on the ace point,
    When X rolls 2-1,
    Then the 1 cannot bear off from the ace point: both dice move the outside checker, 10/7.
    """
    position = Position.from_points({10: 1, 1: 14}, {20: 2})

    assert plays(position, "21") == {"10/7"}
    with pytest.raises(IllegalMoveError):
        position.play("10/8 1/off", "21")


def test_a_checker_brought_home_by_one_die_lets_the_other_bear_off():
    """[Off] Once the last checker is home, the rest of the same roll may bear off.

        point:  8   7 | 6   5   4   3   2   1
        X:      1     |             14

    Given X with one checker on 8 and fourteen on 3,
    When X rolls 3-2,
    Then 8/6 brings it home and the 3 bears off (8/6 3/off), besides the plays that bear nothing off;
    But the 3 cannot bear off first (8/5 3/off is illegal: 8 is still out when the 3 is played).
    """
    position = Position.from_points({8: 1, 3: 14}, {20: 2})

    assert plays(position, "32") == {"8/6 3/off", "8/3", "8/5 3/1"}
    with pytest.raises(IllegalMoveError):
        position.play("8/5 3/off", "32")


def test_a_checker_hit_while_bearing_off_must_come_back_home_first():
    """[Off] + [Enter] A hit checker re-enters, comes round, and only then may X bear off again.

        point: 24  ...  19  ...  16 | 6   5   4   3   2   1
        X:                          |             14            bar: 1
        O:                                                  1

    Given X, hit while bearing off, with fourteen checkers on 3 and one on the bar,
    When X rolls 6-3,
    Then X must enter and may not bear off (the checker on the bar is not home): the only play is bar/16,
    And the 3 cannot bear off a checker from the 3-point.
    """
    position = Position.from_points({"bar": 1, 3: 14}, {1: 1, 20: 2})

    assert plays(position, "63") == {"bar/16"}
    with pytest.raises(IllegalMoveError):
        position.play("bar/19 3/off", "63")


def test_six_three_bear_off_from_the_five_and_two_points():
    """[Off] + [Both] The 6-3 bear-off (our own worked example, not a quoted one).

        point:  6   5   4   3   2   1
        X:          1           1

    Given X's last two checkers on 5 and 2,
    When X rolls 6-3,
    Then, working through the rules:
      * 6 first: no checker on 6, none higher than 5, so the 6 bears off from 5; the 3 then bears off
        from 2 (now the highest point): 5/off 2/off, the game is over.
      * 3 first: the 3 cannot bear off from 2 while 5 is occupied, so it plays 5/2; the 6 then bears off
        from 2: one checker left on 2. Written 5/off (5/2/off), the same afterstate as 5/2 2/off.
    So exactly these two plays are legal; 2/off with the 3 first is not.
    """
    position = Position.from_points({5: 1, 2: 1}, {20: 2})

    assert plays(position, "63") == {"5/off 2/off", "5/off"}
    assert position.play("5/off 2/off", "63").after.is_game_over()
    assert mover_after(position, "5/off", "63") == Position.from_points({2: 1}, {20: 2})
    assert mover_after(position, "5/2 2/off", "63") == mover_after(position, "5/off", "63")


def test_bear_off_must_still_use_both_dice():
    """[Both] in the bear-off: a shorter play that ends the game does not excuse the other die.

        point:  2   1
        X:      1
        O:          1

    Given X's last checker on 2 and an O blot on X's ace point,
    When X rolls 3-1,
    Then 2/off with the 3 alone would leave the 1 unplayed, while 2/1*/off uses both dice:
    only 2/1*/off is legal, and it puts O's blot on the bar.
    """
    position = Position.from_points({2: 1}, {1: 1, 20: 2})

    assert plays(position, "31") == {"2/1*/off"}
    with pytest.raises(IllegalMoveError):
        position.play("2/off", "31")
    after = position.play("2/1*/off", "31").after
    assert after.is_game_over()
    assert after.board[25] == 1  # O on roll, with its hit checker on its bar


def test_bear_off_with_one_die_when_the_other_has_no_use():
    """[Off] With one checker left, a die that takes it off ends the game; the other die has nothing to move.

    Given X's last checker on 2 and O's blot on X's ace point,
    When X rolls 3-3,
    Then 2/off is the play (no 3 reaches the ace point to hit).
    """
    position = Position.from_points({2: 1}, {1: 1, 20: 2})

    assert plays(position, "33") == {"2/off"}
