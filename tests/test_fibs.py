"""FIBS board lines (bgai.formats.fibs): the FIBS client protocol's board state, and GNU Backgammon's external-player
boards."""

import numpy as np
import pytest

from bgai.core.cube import CENTERED, ON_ROLL, OPPONENT
from bgai.core.movegen import switch
from bgai.formats.fibs import FIELDS, FibsBoard, FibsBoardError, to_fibs
from bgai.formats.position import Position


def positions(n: int, seed: int = 0) -> list[Position]:
    """Positions of random games, each seen from the player on roll."""
    rng = np.random.default_rng(seed)
    found, pos = [], Position.start()
    while len(found) < n:
        moves = pos.legal_moves(tuple(int(d) for d in rng.integers(1, 7, 2)))
        pos = moves[rng.integers(len(moves))].after
        if pos.is_game_over():
            pos = Position.start()
        found.append(pos)
    return found


def as_seen_by_opponent(line: str) -> str:
    """The same board line written for the other client of the game (FIBS sends each player its own view): the
    physical board and the turn stay, names, scores, dice, may-double flags, home and bar counts change sides, and
    the colour and direction are the opponent's."""
    f = line.split(":")
    color, direction = -int(f[41]), -int(f[42])
    home, bar = (0, 25) if direction == -1 else (25, 0)
    out = [f[0], f[2], f[1], f[3], f[5], f[4], *f[6:33], f[35], f[36], f[33], f[34], f[37], f[39], f[38], f[40],
           str(color), str(direction), str(home), str(bar), f[46], f[45], f[48], f[47], *f[49:]]
    assert len(out) == FIELDS
    return ":".join(out)


def test_a_board_line_round_trips_every_field():
    for i, pos in enumerate(positions(300)):
        dice = None if i % 3 == 0 else (1 + i % 6, 1 + (i // 6) % 6)
        owner = (CENTERED, ON_ROLL, OPPONENT)[i % 3]
        cube = 1 if owner == CENTERED else 2 ** (1 + i % 4)
        length, score = (0, (0, 0)) if i % 2 else (7, (i % 7, (i // 7) % 7))
        post = 6 in score  # a cube is turned after the Crawford game only
        line = to_fibs(pos, dice, cube=cube, owner=owner, match_length=length, score=score, post_crawford=post)
        assert len(line.split(":")) == FIELDS
        board = FibsBoard.parse(line)
        assert Position(board.board) == pos
        assert board.dice == dice and board.cube == cube and board.owner == owner
        assert (board.match_length, board.score, board.mover_is_player) == (length, score, True)
        assert board.format() == line


def test_the_other_clients_view_reads_as_the_same_decision():
    """The board FIBS sends the player not on turn (colour -1, moving up) gives the mover's position, dice, cube
    and score just as the mover's own board does."""
    for i, pos in enumerate(positions(120, seed=1)):
        dice = None if i % 2 else (6, 1 + i % 6)
        owner = (CENTERED, ON_ROLL, OPPONENT)[i % 3]
        line = to_fibs(pos, dice, cube=1 if owner == CENTERED else 4, owner=owner, match_length=5, score=(3, 1),
                       names=("alice", "bob"))
        mine, theirs = FibsBoard.parse(line), FibsBoard.parse(as_seen_by_opponent(line))
        assert not theirs.mover_is_player
        assert (Position(theirs.board), theirs.dice, theirs.cube, theirs.owner) == (pos, dice, mine.cube, owner)
        assert theirs.score == (3, 1) and theirs.names == ("alice", "bob")


#: Boards Debian's GNU Backgammon 1.07 sent its external player 0 (top, O in gnubg's own drawing) in a 3-point
#: match: gnubg writes the board from player 1's side (player 1 positive, moving down) with the turn at -1, and
#: the names and scores with the player on turn first.
GNUBG_PLAYER0_AFTER_21 = ("board:gnubg:root:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:1:-5:4:0:0:0:-3:0:-5:0:0:0:1:1:0:-1"
                          ":0:0:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
GNUBG_PLAYER0_CRAWFORD = ("board:gnubg:root:3:0:2:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:-1"
                          ":5:3:5:3:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:0")
#: A double gnubg's player 1 ("root") offers its external player 0 post-Crawford, at 2-4 in a 5-point match: the
#: doubler is on turn and comes first.
GNUBG_PLAYER1_DOUBLES_POST_CRAWFORD = ("board:root:gnubg:5:2:4:0:-1:-1:0:0:0:5:0:3:0:0:0:-4:5:0:0:-1:-3:0:-5:0:0:0:0:2"
                                       ":0:1:0:0:0:0:1:1:1:1:1:-1:0:25:0:0:0:0:0:0:1:1")


def test_gnubgs_boards_for_its_player_0():
    board = FibsBoard.parse(GNUBG_PLAYER0_AFTER_21, dialect="gnubg")
    # The opponent (gnubg's player 1) opened 21 with 13/11 24/23; player 0 is to move, not yet rolled.
    opened = Position.start().play("13/11 24/23", (2, 1)).after
    assert Position(board.board) == opened and board.dice is None
    assert not board.mover_is_player and board.names == ("gnubg", "root")
    assert (board.match_length, board.score, board.cube, board.owner, board.crawford) == (3, (0, 0), 1, CENTERED, False)

    crawford = FibsBoard.parse(GNUBG_PLAYER0_CRAWFORD, dialect="gnubg")
    assert Position(crawford.board) == Position.start() and crawford.dice == (5, 3)
    assert crawford.score == (0, 2) and crawford.crawford  # player 0 has 0, player 1 is one point away
    # FIBS's own reading would give the scores to the player the colour field names, player 1.
    assert FibsBoard.parse(GNUBG_PLAYER0_CRAWFORD).score == (2, 0)

    doubled = FibsBoard.parse(GNUBG_PLAYER1_DOUBLES_POST_CRAWFORD, dialect="gnubg")
    assert doubled.was_doubled and doubled.mover_is_player and doubled.names == ("root", "gnubg")
    assert (doubled.score, doubled.crawford, doubled.post_crawford, doubled.cube) == ((2, 4), False, True, 1)


def test_a_double_waiting_for_its_answer():
    pos = positions(1, seed=4)[0]
    board = FibsBoard.parse(to_fibs(pos, None, cube=2, owner=ON_ROLL, was_doubled=True))
    assert board.was_doubled and board.owner == ON_ROLL and board.dice is None


def test_position_methods():
    pos = positions(10, seed=5)[-1]
    assert Position.from_fibs(pos.to_fibs((3, 1))) == pos
    assert Position.from_fibs(as_seen_by_opponent(pos.to_fibs())) == pos
    assert Position.from_fibs(GNUBG_PLAYER0_CRAWFORD) == Position.start()


def _with(line: str, index: int, value) -> str:
    fields = line.split(":")
    fields[index] = str(value)
    return ":".join(fields)


START = to_fibs(Position.start(), (3, 1), match_length=5, score=(1, 2))


@pytest.mark.parametrize("line, message", [
    ("", "starts with 'board:'"),
    ("board:a:b:0", "53 colon-separated fields"),
    (START + ":0", "53 colon-separated fields"),
    ("board:" + "x" * 2000, "at most 1000 characters"),
    (_with(START, 1, ""), "names must be printable"),
    (_with(START, 1, "a\x00b"), "names must be printable"),
    (_with(START, 7, "two"), "field 8 (board field 1) must be a whole number"),
    (_with(START, 7, "1e3"), "must be a whole number"),
    (_with(START, 7, "٣"), "must be a whole number"),
    (_with(START, 7, 99999), "must be a whole number"),
    (_with(START, 7, 16), "hold -15..15 checkers"),
    (_with(START, 7, 9), "more than 15 checkers"),
    (_with(START, 6, 1), "bar"),
    (_with(START, 4, 5), "do not fit a match to 5"),
    (_with(START, 3, -1), "do not fit"),
    (_with(START, 32, 0), "the game is over"),
    (_with(START, 32, 2), "turn is -1"),
    (_with(START, 33, 7), "dice must be two of 1..6"),
    (_with(START, 34, 0), "dice must be two of 1..6"),
    (_with(START, 37, 3), "the cube is 1, 2, 4"),
    (_with(START, 37, 128), "the cube is 1, 2, 4"),
    (_with(START, 38, 2), "are 0 or 1"),
    (_with(START, 41, 0), "colour and direction"),
    (_with(START, 43, 25), "has its home at 0"),
    (_with(START, 51, 2), "are 0 or 1"),
])
def test_malformed_boards_are_refused_naming_the_fault(line, message):
    with pytest.raises(FibsBoardError, match=message.replace("(", r"\(").replace(")", r"\)")):
        FibsBoard.parse(line)


def test_the_crawford_game_in_both_dialects():
    one_away = to_fibs(Position.start(), (3, 1), match_length=5, score=(4, 2))
    assert FibsBoard.parse(one_away).crawford
    played = FibsBoard.parse(to_fibs(Position.start(), (3, 1), match_length=5, score=(4, 2), post_crawford=True))
    assert played.post_crawford and not played.crawford
    assert FibsBoard.parse(_with(one_away, 52, 0), dialect="gnubg").crawford
    assert FibsBoard.parse(_with(one_away, 52, 1), dialect="gnubg").post_crawford
    with pytest.raises(FibsBoardError, match="exactly one player one point away"):
        FibsBoard.parse(_with(START, 52, 0), dialect="gnubg")
    with pytest.raises(FibsBoardError, match="the last field is 0 or 1"):
        FibsBoard.parse(_with(START, 52, 2), dialect="gnubg")


def test_unlimited_matches_are_money_games():
    board = FibsBoard.parse(_with(to_fibs(Position.start()), 3, 9999))
    assert board.match_length == 0


def test_the_bar_fields_follow_the_direction():
    pos = Position.from_points({6: 5, "bar": 2}, {19: 3, "bar": 1})
    line = pos.to_fibs((6, 6))
    assert line.split(":")[6 + 25] == "2" and line.split(":")[6] == "-1"
    assert Position.from_fibs(line) == pos
    assert Position.from_fibs(as_seen_by_opponent(line)) == pos
    assert FibsBoard.parse(as_seen_by_opponent(switch_line(line))).board.tolist() == pos.switched().board.tolist()


def switch_line(line: str) -> str:
    """The same board with the other player on turn (the turn field flipped, the dice given to it)."""
    f = line.split(":")
    f[32] = str(-int(f[32]))
    f[33:37] = f[35], f[36], f[33], f[34]
    return ":".join(f)


def test_switching_the_turn_switches_the_position():
    for pos in positions(40, seed=6):
        flipped = FibsBoard.parse(switch_line(pos.to_fibs((4, 2))))
        assert np.array_equal(flipped.board, switch(pos.board))
        assert flipped.dice == (4, 2) and not flipped.mover_is_player
