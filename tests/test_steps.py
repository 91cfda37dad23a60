"""Plays built one checker at a time (bgai.formats.steps.PartialPlay): a step is allowed if and only if some legal play
of the roll starts with the steps made so far, whatever order a person moves the checkers in."""

from __future__ import annotations

import numpy as np
import pytest

from bgai.core.errors import IllegalMoveError
from bgai.formats.position import Position
from bgai.formats.steps import PartialPlay

ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]


def random_positions(count: int, seed: int) -> list[Position]:
    """Positions met in random games (every position on roll, before its roll)."""
    rng = np.random.default_rng(seed)
    found, pos = [], Position.start()
    while len(found) < count:
        moves = pos.legal_moves(tuple(rng.integers(1, 7, size=2)))
        pos = moves[rng.integers(len(moves))].after
        if pos.is_game_over():
            pos = Position.start()
        else:
            found.append(pos)
    return found


def reachable(play: PartialPlay) -> set[Position]:
    """Every afterstate a person can reach by moving checkers to the destinations the board lights up."""
    if play.complete:
        return {play.move().after}
    out = set()
    for src, dsts in play.targets().items():
        for dst in dsts:
            play.step(src, dst)
            out |= reachable(play)
            play.undo()
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_the_plays_a_person_can_make_step_by_step_are_exactly_the_legal_plays(seed):
    """Given positions from random games and every roll,
    When a person tries every checker move the board allows, in every order,
    Then the plays they can complete are exactly the generator's legal plays, no more and no fewer."""
    for pos in random_positions(12, seed):
        for dice in ROLLS:
            play = PartialPlay(pos, dice)
            assert reachable(play) == {m.after for m in pos.legal_moves(dice)}, (repr(pos), dice)


def test_checkers_may_be_moved_in_either_order():
    """Given the opening roll 6-1, 13/7 8/7 may be made starting with either checker."""
    for order in ([(13, 7), (8, 7)], [(8, 7), (13, 7)]):
        play = PartialPlay(Position.start(), "61")
        for src, dst in order:
            play.step(src, dst)
        assert play.complete and str(play.move()) == "13/7 8/7"


def test_one_checker_may_play_both_dice_in_one_move():
    """Given 6-5 from the start, 24/13 is one drag of the back checker (24/18/13)."""
    play = PartialPlay(Position.start(), "65")
    assert 13 in play.destinations(24)
    steps = play.step(24, 13)
    assert [s.die for s in steps] == [6, 5] and play.complete and str(play.move()) == "24/13"


def test_a_step_that_no_legal_play_continues_is_refused_and_changes_nothing():
    """[Both] Given X on 13 and 9 with 13 checkers on the ace point and O holding 8 and 2, with 6-5:
    after 9/3 no 5 can be played (13/8 is blocked), so 9/3 is refused: the one legal play is 13/7 9/4."""
    pos = Position.from_points({13: 1, 9: 1, 1: 13}, {8: 2, 2: 2})
    play = PartialPlay(pos, "65")
    with pytest.raises(IllegalMoveError, match="not part of any legal play"):
        play.step(9, 3)
    assert play.steps == [] and not play.complete


def test_the_bar_enters_first():
    pos = Position.from_points({"bar": 1, 13: 14}, {1: 2})
    play = PartialPlay(pos, "31")
    with pytest.raises(IllegalMoveError, match="on the bar must enter first"):
        play.step(13, 10)
    assert sorted(play.destinations(25)) == [21, 22, 24]


def test_undo_takes_the_last_move_back_whole():
    play = PartialPlay(Position.start(), "65")
    play.step(24, 13)
    play.undo()
    assert play.steps == [] and play.text() == ""
    with pytest.raises(IllegalMoveError, match="no step to take back"):
        play.undo()


def test_a_play_typed_in_pieces_is_all_or_nothing():
    """Given 3-1 from the start, typing 8/5 then 6/5 makes the play; a bad piece keeps nothing of its line."""
    play = PartialPlay(Position.start(), "31")
    play.play_text("8/5")
    with pytest.raises(IllegalMoveError):
        play.play_text("6/5 24/21")  # 6/5 alone is fine, 24/21 is not: neither is kept
    assert play.text() == "8/5"
    play.play_text("6/5")
    assert str(play.move()) == "8/5 6/5"


def test_a_whole_play_legal_only_in_another_order_than_written_is_made():
    """Given 6-6 with two checkers on the 6 point and one on 11 (the rest lower), the checker from 11 may bear off
    from 5 only after both 6s are off (11/5, 6/off, 6/off, 5/off); the bot writes the play 11/off 6/off(2), and
    typing it makes that play."""
    pos = Position.from_points({11: 1, 6: 2, 5: 3, 4: 3, 3: 2, 2: 1, 1: 3}, {19: 3, 20: 2, 21: 3, 22: 4, 24: 3})
    whole = next(m for m in pos.legal_moves((6, 6)) if str(m) == "11/off 6/off(2)")
    play = PartialPlay(pos, "66")
    play.play_text("11/off 6/off(2)")
    assert play.complete and play.move().after == whole.after
    # Typed as a piece after other steps, the written order still decides
    play = PartialPlay(pos, "66")
    play.step(11, 5)
    with pytest.raises(IllegalMoveError, match="5/off: the checker on 5 cannot move"):
        play.play_text("5/off 6/off(2)")
    assert play.text() == "11/5"
    play.play_text("6/off(2) 5/off")
    assert play.move().after == whole.after


def test_a_hit_marked_where_nothing_is_hit_is_refused():
    play = PartialPlay(Position.start(), "31")
    with pytest.raises(IllegalMoveError, match="marks a hit on 5"):
        play.play_text("8/5* 6/5")
    assert play.steps == []


def test_bearing_off_uses_the_smaller_die_that_can():
    """[Off] Given X's last checkers on the 2 and ace points with 6-3, 2/off uses the 3 and keeps the 6."""
    pos = Position.from_points({2: 1, 1: 1}, {24: 2})
    play = PartialPlay(pos, "63")
    assert [s.die for s in play.step(2, 0)] == [3]
    play.step(1, 0)
    assert play.complete


def test_a_roll_with_no_play_is_complete_at_once():
    pos = Position.from_points({"bar": 2, 6: 13}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2})
    play = PartialPlay(pos, "66")
    assert play.no_play and play.complete and str(play.move()) == "no play"
    with pytest.raises(IllegalMoveError, match="cannot be played"):
        play.step(25, 19)


def test_the_play_is_not_finished_before_its_last_step():
    play = PartialPlay(Position.start(), "44")
    play.step(24, 20)
    with pytest.raises(IllegalMoveError, match="3 more checker steps"):
        play.move()


def test_choose_replaces_the_steps_by_a_whole_play():
    play = PartialPlay(Position.start(), "44")
    play.step(13, 9)
    play.choose("24/20(2) 13/9(2)")
    assert play.complete and str(play.move()) == "24/20(2) 13/9(2)"


@pytest.mark.parametrize("src, dst, message", [
    (5, 1, "no checker of yours on 5"),
    (8, 9, "move forward"),
    (26, 3, "from a point 1..24 or the bar"),
    (8, -1, "to a point 0..24"),
])
def test_bad_steps_say_what_is_wrong(src, dst, message):
    with pytest.raises(IllegalMoveError, match=message):
        PartialPlay(Position.start(), "31").step(src, dst)
