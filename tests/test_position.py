"""Positions: construction, the GNU Backgammon Position ID, XGID, repr and the ASCII board, and bad input.

A ``Position`` is always seen from X, the player on roll: board index 1..24 are X's points by pip distance, 25 X's
bar, 0 O's bar; X's checkers positive, O's negative. Every input error is a ``ValueError`` subclass from
``bgai.core.errors`` whose message names what was wrong.

The Position ID format is the one in the GNU Backgammon manual ("A technical description of the Position ID"):
for O then X, each of its 25 slots (points 1..24 from that player's side, then its bar) as that many 1-bits and a
0-bit, packed from the least significant bit of 10 bytes, then base64 without padding (14 characters).
"""

from __future__ import annotations

import base64

import numpy as np
import pytest

from bgai.core.errors import BgaiError, IllegalMoveError, InvalidDiceError, InvalidPositionError
from bgai.core.movegen import afterstates
from bgai.formats.position import Position

START_ID = "4HPwATDgc/ABMA"
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
AFTER_31_MOVER_ON_ROLL_ID = "4HPwATCwZ/ABMA"  # 8/5 6/5 played, the position still seen from the mover
AFTER_31_ID = "sGfwATDgc/ABMA"  # the same position with the opponent on roll


def random_positions(seed: int, n: int) -> list[Position]:
    """Random legal positions: each side 0..15 checkers anywhere it may stand, bars included."""
    rng = np.random.default_rng(seed)
    positions = []
    for _ in range(n):
        board = np.zeros(26, dtype=np.int64)
        for sign, slots in ((1, range(1, 26)), (-1, range(0, 25))):
            free = [s for s in slots if board[s] == 0]
            where = rng.choice(free, size=int(rng.integers(1, 9)), replace=False)
            total = 15 if rng.random() < 0.5 else int(rng.integers(0, 16))
            board[where] += sign * rng.multinomial(total, np.ones(len(where)) / len(where))
        positions.append(Position(board))
    return positions


def id_from_slots(theirs: list[int], mine: list[int], stray_bit: int | None = None) -> str:
    """A Position ID written by hand from the manual's description: any slot counts, valid or not."""
    bits = []
    for side in (theirs, mine):
        for count in side:
            bits += [1] * count + [0]
    bits += [0] * (80 - len(bits))
    if stray_bit is not None:
        bits[stray_bit] = 1
    key = bytes(sum(bit << i for i, bit in enumerate(bits[k:k + 8])) for k in range(0, 80, 8))
    return base64.b64encode(key).decode("ascii")[:14]


def slots(points: dict) -> list[int]:
    """25 slot counts from ``{point: checkers}`` (``"bar"`` for slot 25), in a player's own numbering."""
    return [points.get(point, 0) for point in range(1, 25)] + [points.get("bar", 0)]


# Known values ---------------------------------------------------------------------------------------------------


def test_start_position_id_is_gnubgs():
    """Given the opening position, its Position ID is GNU Backgammon's 4HPwATDgc/ABMA, both ways."""
    assert Position.start().position_id() == START_ID
    assert Position.from_position_id(START_ID) == Position.start()


def test_position_id_after_the_31_point_making_play():
    """Given the start and 3-1 played 8/5 6/5,
    Then the ID is 4HPwATCwZ/ABMA with the mover still on roll and sGfwATDgc/ABMA with the opponent on roll
    (the ID always encodes the player not on roll first, so the two differ)."""
    move = Position.start().play("8/5 6/5", "31")

    assert move.after.position_id() == AFTER_31_ID
    assert move.after.switched().position_id() == AFTER_31_MOVER_ON_ROLL_ID
    assert Position.from_position_id(AFTER_31_MOVER_ON_ROLL_ID) == Position.from_points(
        {24: 2, 13: 5, 8: 2, 6: 4, 5: 2}, {1: 2, 12: 5, 17: 3, 19: 5}
    )


def test_start_xgid_is_the_one_extreme_gammon_writes():
    """The opening as XG writes it, with X on roll; an XGID with O on roll is read from O's side."""
    assert Position.start().xgid() == START_XGID
    assert Position.from_xgid(START_XGID) == Position.start()
    # The opening is symmetric, so O on roll (turn -1) reads as the same position.
    assert Position.from_xgid(START_XGID.replace(":0:0:1:", ":0:0:-1:")) == Position.start()


def test_xgid_with_o_on_roll_is_the_switched_position():
    """Given an asymmetric XGID, flipping its turn field to -1 gives the same board seen from O."""
    xgid = "XGID=-CCCBBB------------cccbbb-:0:0:1:00:0:0:0:0:8"
    x_on_roll = Position.from_xgid(xgid)

    assert x_on_roll == Position.from_points(
        {1: 3, 2: 3, 3: 3, 4: 2, 5: 2, 6: 2}, {19: 3, 20: 3, 21: 3, 22: 2, 23: 2, 24: 2}
    )
    assert Position.from_xgid(xgid.replace(":0:0:1:", ":0:0:-1:")) == x_on_roll.switched()


def test_pip_counts_of_the_start_are_167_each():
    assert Position.start().pip_counts() == (167, 167)
    assert Position.start().borne_off() == (0, 0)


def test_pip_counts_are_from_the_player_on_roll_first():
    """Given 3-1 played 8/5 6/5 (4 pips), the afterstate has O on roll: (O's 167, X's 163).
    A checker on the bar counts 25 pips."""
    after = Position.start().play("8/5 6/5", "31").after
    assert after.pip_counts() == (167, 163)
    assert Position.from_points({"bar": 1}, {"bar": 2}).pip_counts() == (25, 50)


def test_borne_off_and_game_over():
    assert Position.from_points({6: 1}, {19: 15}).borne_off() == (14, 0)
    assert not Position.from_points({6: 1}, {19: 15}).is_game_over()
    assert Position.from_points({}, {19: 1}).is_game_over()


def test_str_draws_the_board():
    """The ASCII board: X on roll at the bottom, moving 24 -> 1, home at the bottom right."""
    expected = """
 13 14 15 16 17 18 |   |19 20 21 22 23 24
+------------------+---+------------------+
| X  .  .  .  O  . |   | O  .  .  .  .  X |
| X           O    |   | O              X |
| X           O    |   | O                |
| X                |   | O                |
| X                |   | O                |
|                  |BAR|                  |
| O                |   | X                |
| O                |   | X                |
| O           X    |   | X                |
| O           X    |   | X              O |
| O  .  .  .  X  . |   | X  .  .  .  .  O |
+------------------+---+------------------+
 12 11 10  9  8  7 |   | 6  5  4  3  2  1
X (on roll): pips 167, off 0    O: pips 167, off 0
""".strip("\n")
    drawn = str(Position.start())
    assert [line.rstrip() for line in drawn.splitlines()] == expected.splitlines()


def test_str_shows_the_bars_and_tall_stacks():
    drawn = str(Position.from_points({"bar": 2, 6: 13}, {"bar": 1, 19: 14}))
    assert "13" in drawn and "14" in drawn  # stacks taller than the diagram are labelled with their count
    assert "X (on roll): pips 128, off 0    O: pips 109, off 0" in drawn
    bar_column = [line[19:24] for line in drawn.splitlines()[2:13]]
    assert bar_column.count("| O |") == 1 and bar_column.count("| X |") == 2


# Round trips ----------------------------------------------------------------------------------------------------

POSITIONS = random_positions(seed=1, n=400)


def test_position_id_round_trips():
    """Random positions (bars and borne-off checkers included) survive Position ID -> Position."""
    for position in POSITIONS:
        assert Position.from_position_id(position.position_id()) == position, position.position_id()


def test_xgid_round_trips():
    """... and XGID -> Position."""
    for position in POSITIONS:
        assert Position.from_xgid(position.xgid()) == position, position.xgid()


def test_parse_reads_both_notations():
    """``Position.parse`` (the CLI's reader) tells the two apart; an XGID may omit its "XGID=" prefix."""
    for position in POSITIONS[:50]:
        assert Position.parse(position.position_id()) == position
        assert Position.parse(position.xgid()) == position
        assert Position.parse("  " + position.xgid()[len("XGID="):] + "\n") == position


def test_repr_pastes_back_as_code():
    for position in POSITIONS[:50]:
        assert eval(repr(position), {"Position": Position}) == position
    assert repr(Position.start()) == f"Position.from_position_id({START_ID!r})"


def test_switched_twice_is_the_same_position():
    """Switching sides twice is the identity; once, it swaps the pip counts and the borne-off counts."""
    for position in POSITIONS:
        once = position.switched()
        assert once.switched() == position
        assert once.pip_counts() == position.pip_counts()[::-1]
        assert once.borne_off() == position.borne_off()[::-1]


def test_positions_compare_and_hash_by_board():
    a = Position.from_points({6: 2}, {18: 2})
    b = Position.from_position_id(a.position_id())
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != a.switched() and a != a.board


def test_board_is_read_only():
    with pytest.raises(ValueError):
        Position.start().board[6] = 0


# Bad positions --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, message", [
    ("4HPwATDgc/ABM", "14 base64 characters"),
    ("4HPwATDgc/ABMAA", "14 base64 characters"),
    ("4HPwATDgc/AB!A", "14 base64 characters"),
    ("4HPwATDgc-ABMA", "14 base64 characters"),
    ("", "14 base64 characters"),
    ("//////////////", "too many checkers"),
    (id_from_slots(slots({6: 16}), slots({})), "gives the opponent 16 checkers"),
    (id_from_slots(slots({}), slots({6: 10, "bar": 6})), "gives the player on roll 16 checkers"),
    # O's own 1-point is X's 24-point.
    (id_from_slots(slots({1: 1}), slots({24: 1})), "both players' checkers on point 24"),
    (id_from_slots(slots({}), slots({}), stray_bit=70), "stray bits"),
    (START_ID[:-1] + "B", "stray bits"),  # the last character's unused low bits must be zero
], ids=["13 chars", "15 chars", "bad char !", "bad char -", "empty", "all ones", "16 for O", "16 for X",
        "shared point", "stray bit", "unused bits"])
def test_malformed_position_ids_are_rejected(text, message):
    with pytest.raises(InvalidPositionError, match=message):
        Position.from_position_id(text)


def test_position_id_must_be_a_string():
    with pytest.raises(InvalidPositionError, match="string"):
        Position.from_position_id(12345)


def test_hand_written_ids_match_the_engine():
    """The test's own encoder agrees with the engine, so the bad IDs above are bad for the reason given."""
    assert id_from_slots(slots({6: 5, 8: 3, 13: 5, 24: 2}), slots({6: 5, 8: 3, 13: 5, 24: 2})) == START_ID
    assert Position.from_position_id(id_from_slots(slots({6: 15}), slots({"bar": 1}))) == (
        Position.from_points({"bar": 1}, {19: 15})
    )


@pytest.mark.parametrize("text, message", [
    ("XGID=-b----E-C---eE---c-e----B:0:0:1:00:0:0:0:0:10", "26 characters"),
    ("XGID=-b----E-C---eE---c-e----Bz:0:0:1:00:0:0:0:0:10", "26 characters"),
    ("XGID=-b----E-C---eE---c-e----P-:0:0:1:00:0:0:0:0:10", "26 characters"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:2:00:0:0:0:0:10", "turn field must be 1 or -1"),
    ("XGID=-b----E-C---eE---c-e----Ba:0:0:1:00:0:0:0:0:10", "other player's bar"),
    ("XGID=Ab----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "other player's bar"),
    ("XGID=-b----O-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "more than 15 checkers"),
    ("XGID=-o----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "opponent has more than 15 checkers"),
], ids=["25 chars", "bad char z", "P is 16", "turn 2", "O on X's bar", "X on O's bar", "16 for X", "28 for O"])
def test_malformed_xgids_are_rejected(text, message):
    with pytest.raises(InvalidPositionError, match=message):
        Position.from_xgid(text)


def test_boards_with_too_many_checkers_are_rejected():
    with pytest.raises(InvalidPositionError, match="on-roll player has more than 15"):
        Position.from_points({6: 10, 8: 6}, {})
    with pytest.raises(InvalidPositionError, match="opponent has more than 15"):
        Position.from_points({}, {19: 15, "bar": 1})


@pytest.mark.parametrize("board, message", [
    (np.zeros(25, dtype=np.int8), "26 entries"),
    (np.zeros((2, 26), dtype=np.int8), "26 entries"),
    (np.zeros(26, dtype=np.float64), "integers"),
    (np.r_[0, np.zeros(24), -1].astype(np.int8), "on-roll player's bar"),
    (np.r_[1, np.zeros(25)].astype(np.int8), "opponent's bar"),
], ids=["25 long", "2-D", "floats", "O on X's bar", "X on O's bar"])
def test_boards_of_the_wrong_shape_or_layout_are_rejected(board, message):
    with pytest.raises(InvalidPositionError, match=message):
        Position(board)


@pytest.mark.parametrize("mine, theirs, message", [
    ({25: 1}, {}, "no point 25"),
    ({0: 1}, {}, "no point 0"),
    ({6: -1}, {}, "must be a whole number >= 0"),
    ({6: 2}, {6: 2}, "both players have checkers on point 6"),
])
def test_from_points_names_the_bad_entry(mine, theirs, message):
    with pytest.raises(InvalidPositionError, match=message):
        Position.from_points(mine, theirs)


# Dice and plays -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dice, message", [
    ("70", "1..6"),
    ("07", "1..6"),
    ((0, 3), "1..6"),
    ((3, 7), "1..6"),
    ("6", "two digits"),
    ("six-three", "two digits"),
    ((1, 2, 3), "two integers"),
    (None, "two integers"),
    ((float("inf"), 2), "two integers"),
    ((3.9, 1.2), "two integers"),  # refused, never truncated to 31
    ((3.0, 1), "two integers"),
    ((True, 1), "two integers"),
    ("\u0666\u0663", "two digits"),  # Arabic-Indic 63: only ASCII digits are dice
    ("\uff16\uff13", "two digits"),  # full-width 63
    ((2**70, 1), "1..6"),
])
def test_dice_outside_one_to_six_are_rejected(dice, message):
    with pytest.raises(InvalidDiceError, match=message):
        Position.start().legal_moves(dice)


def test_dice_spellings():
    start = Position.start()
    expected = {str(m) for m in start.legal_moves((6, 3))}
    for dice in ("63", "6-3", "6 3", "36", (3, 6), [6, 3]):
        assert {str(m) for m in start.legal_moves(dice)} == expected


def test_batched_generator_rejects_bad_dice_and_boards():
    start = Position.start().board[None]
    with pytest.raises(InvalidDiceError, match="1..6"):
        afterstates(start, np.array([[0, 6]]))
    with pytest.raises(InvalidDiceError, match=r"shape \(N, 2\)"):
        afterstates(start, np.array([[1, 2, 3]]))
    with pytest.raises(InvalidDiceError, match="integers"):
        afterstates(start, np.array([[1.0, 2.0]]))
    with pytest.raises(InvalidDiceError, match="1 boards but 2 rolls"):
        afterstates(start, np.array([[1, 2], [3, 4]]))
    with pytest.raises(InvalidPositionError, match=r"shape \(N, 26\)"):
        afterstates(start[:, :25], np.array([[1, 2]]))


def test_play_in_standard_notation():
    """Given the opening and 6-2, "24/18 13/11" is read and is the play the generator lists."""
    start = Position.start()
    move = start.play("24/18 13/11", "62")

    assert str(move) == "24/18 13/11"
    assert move.before == start and move.dice == (6, 2)
    assert move.after.switched() == Position.from_points(
        {24: 1, 18: 1, 13: 4, 11: 1, 8: 3, 6: 5}, {1: 2, 12: 5, 17: 3, 19: 5}
    )
    assert move in start.legal_moves("62")
    # Order of the parts, spacing and case do not matter; paths may show their stops.
    assert start.play("  13/11   24/18 ", "62") == move
    assert start.play("24/18 13/11", "26").after == move.after
    assert start.play("24/16", "62") == start.play("24/18/16", "62")
    assert start.play("13/11(2) 6/4(2)", "22") == start.play("6/4 13/11 6/4 13/11", "22")


@pytest.mark.parametrize("text, dice, message", [
    ("24/18 13/10", "62", "not a legal play of 62"),
    ("24/18", "62", "not a legal play of 62"),  # only one die used
    ("24/18 13/11", "61", "not a legal play of 61"),
    ("24/19", "51", "which the opponent holds"),
    ("23/17 13/11", "62", "from 23, where the player has none"),
    ("18/24 13/11", "62", "does not move a checker forward"),
    ("24-18 13/11", "62", "cannot read '24-18'"),
    ("hello", "62", "cannot read 'hello'"),
    ("no play", "62", "a play of 62 is possible"),
    ("bar/22", "31", "from bar, where the player has none"),
])
def test_illegal_or_malformed_plays_raise(text, dice, message):
    with pytest.raises(IllegalMoveError, match=message):
        Position.start().play(text, dice)


def test_every_input_error_is_a_value_error():
    for error in (InvalidPositionError, InvalidDiceError, IllegalMoveError):
        assert issubclass(error, BgaiError) and issubclass(error, ValueError)


@pytest.mark.parametrize("board", [
    [0] * 24 + [2**62, 2**62],  # the sum of the on-roll player's checkers wraps around in int64
    [0] * 12 + [-(2**62)] * 2 + [0] * 12,
    np.array([0] * 25 + [2**63 + 5], dtype=np.uint64),
    [0, 0] + [2**62] * 4 + [-(2**62)] * 4 + [0] * 16,
])
def test_boards_with_huge_entries_are_refused_not_wrapped_around(board):
    """Given a board whose entries are near 2**62 (their sum wraps around in int64 and used to pass),
    Then it is refused as a board with more than 15 checkers on a point."""
    with pytest.raises(InvalidPositionError, match="more than 15|bar"):
        Position(board)


def test_an_xgid_without_its_prefix_is_read_whole_cube_and_score_included():
    from bgai.formats.xgid import is_xgid, xgid_context

    text = "-b----E-C---eE---c-e----B-:1:1:1:00:2:3:0:7:10"
    assert is_xgid(text) and is_xgid("xgid=" + text) and not is_xgid("4HPwATDgc/ABMA")
    assert Position.parse(text) == Position.parse("XGID=" + text)
    cube, owner, match = xgid_context(text)
    assert (cube, owner, match.length, match.score) == (2, 1, 7, (2, 3))
    assert xgid_context("xgid=" + text) == (cube, owner, match)


@pytest.mark.parametrize("text", [
    "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:3:0:99999999999999999999:10",
    "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:\u0662:3:0:7:10",
    "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:3:0:-7:10",
    "XGID=-b----E-C---eE---c-e----B-:1:1",
])
def test_malformed_xgid_fields_are_refused_with_a_clear_error(text):
    from bgai.formats.xgid import xgid_context

    with pytest.raises(BgaiError, match="XGID"):
        xgid_context(text)


def test_scores_are_ascii_digits():
    from bgai.core.match import parse_score

    assert parse_score(" 2-3 ") == (2, 3)
    for text in ("\u0662-\u0663", "2-3-4", "99999-1", "-"):
        with pytest.raises(BgaiError, match="A-B"):
            parse_score(text)


def test_a_play_longer_than_any_real_one_is_refused_before_it_is_read():
    with pytest.raises(IllegalMoveError, match="at most 200 characters"):
        Position.start().play("13/7 " * 1000, "61")


def test_a_moves_journeys_say_where_its_checkers_started_and_ended():
    start = Position.start()
    assert start.play("13/6", "61").checker_journeys() == [(13, 6)]  # one checker, two steps
    assert sorted(start.play("13/7 8/7", "61").checker_journeys()) == [(8, 7), (13, 7)]
    assert sorted(start.play("13/9(2) 6/2(2)", "44").checker_journeys()) == [(6, 2), (6, 2), (13, 9), (13, 9)]


def test_an_xgid_carries_a_roll_no_roll_or_a_cube_action():
    from bgai.core.errors import InvalidPositionError
    from bgai.formats.xgid import xgid_dice

    start = "XGID=-b----E-C---eE---c-e----B-:0:0:1:{}:0:0:0:0:10"
    assert xgid_dice(start.format("52")) == (5, 2) and xgid_dice(start.format("66")) == (6, 6)
    assert xgid_dice(start.format("00")) is None and xgid_dice("-b----E-C---eE---c-e----B-") is None
    assert [xgid_dice(start.format(action)) for action in "DBR"] == ["D", "B", "R"]
    for bad in ("70", "5", "XY"):
        with pytest.raises(InvalidPositionError, match="dice field"):
            xgid_dice(start.format(bad))
