"""FIBS board lines: the ``board:...`` state the First Internet Backgammon Server sends its clients, and that GNU
Backgammon sends an external player (``set player N external HOST:PORT``).

A board line is 53 colon-separated fields (FIBS's "rawboard" help, fibs.com/macfibs/help/fibsCommands/pages/
rawboard.html; Evan McLean's FIBS Client Protocol specification)::

    board:NAME:OPPONENT:MATCH LENGTH:PLAYER'S SCORE:OPPONENT'S SCORE:
    26 board fields:TURN:DICE x2:OPPONENT'S DICE x2:CUBE:PLAYER MAY DOUBLE:OPPONENT MAY DOUBLE:WAS DOUBLED:
    COLOR:DIRECTION:HOME:BAR:ON HOME x2:ON BAR x2:CAN MOVE:FORCED MOVE:DID CRAWFORD:REDOUBLES

"Player" is the client the line is for; its ``COLOR`` is +1 (O, whose checkers are positive on the board) or -1
(X, negative). ``DIRECTION`` -1 means the player moves from field 24 down to field 1, with its home at 0 and its bar
at 25; +1 the other way round. ``TURN`` is the colour on turn (0 once the game is over). A match length of 9999
(FIBS's unlimited match) and 0 (GNU Backgammon's money game) both mean a money game here. ``DID CRAWFORD`` is 1 once
the Crawford game has been played, so a game with one player one point away is the Crawford game while it is 0.

GNU Backgammon's boards (its "dialect", ``dialect="gnubg"``; seen from Debian's 1.07) differ in two ways. The board,
the colour and the may-double flags are written from its player 1's side, but the names and the scores with the
player whose turn it is first; the two agree only when that is player 1. And the last field (FIBS's ``REDOUBLES``)
is 0 in the Crawford game and 1 in every other game, so the gnubg dialect reads the Crawford game from it (and a
match played without the Crawford rule as post-Crawford once a player is one point away).

``bgai`` reads every board into the position of the player whose turn it is (``FibsBoard.board``, bgai's one
perspective) with its cube, dice and match score from that player's side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from bgai.core.cube import CENTERED, MAX_CUBE, ON_ROLL, OPPONENT
from bgai.core.dice import parse_dice
from bgai.core.errors import InvalidPositionError, shown
from bgai.core.movegen import CHECKERS, afterstates, validate_boards
from bgai.core.phase import game_over

#: Fields in a board line (the ``board`` keyword included).
FIELDS = 53
#: A longer line is refused before it is split (two 31-character names and 51 numbers fit in well under this).
MAX_LINE = 1000
#: FIBS's match length for an unlimited match.
UNLIMITED = 9999

_NUMBER = re.compile(r"[+-]?[0-9]{1,4}", re.ASCII)


class FibsBoardError(InvalidPositionError):
    """A FIBS board line that is malformed or describes no legal position."""


@dataclass(frozen=True, eq=False)
class FibsBoard:
    """One FIBS board line, read from the side of the player whose turn it is ("the mover").

    ``board`` the board from the mover's side (26 int8, read-only; ``Position(board)`` is the position, and
    ``Position.from_fibs`` reads it alone); ``dice`` the mover's roll, or ``None`` when it has not rolled; ``cube``
    the cube's value and ``owner`` ``CENTERED``/``ON_ROLL``/``OPPONENT`` from the mover's side (``bgai.core.cube``);
    ``was_doubled``: a double has just been offered and awaits its answer (on GNU Backgammon's boards the mover is
    then the doubler); ``match_length`` 0 for money; ``score`` (mover's, opponent's);
    ``crawford``: this game is the Crawford game; ``post_crawford``: it has been played; ``names`` (mover's,
    opponent's); ``mover_is_player``: the mover is the player the line was written for (its colour).
    """

    board: np.ndarray
    dice: tuple[int, int] | None
    cube: int
    owner: int
    was_doubled: bool
    match_length: int
    score: tuple[int, int]
    crawford: bool
    post_crawford: bool
    names: tuple[str, str]
    mover_is_player: bool

    @classmethod
    def parse(cls, line: str, dialect: str = "fibs") -> FibsBoard:
        """Read a board line as FIBS writes it (``dialect="fibs"``) or as GNU Backgammon writes it for its external
        player (``"gnubg"``; see the module docstring). Malformed lines raise ``FibsBoardError`` naming the field."""
        if dialect not in ("fibs", "gnubg"):
            raise ValueError(f"dialect must be 'fibs' or 'gnubg', got {dialect!r}")
        if not isinstance(line, str):
            raise FibsBoardError(f"a FIBS board is a line of text, got {type(line).__name__}")
        if len(line) > MAX_LINE:
            raise FibsBoardError(f"a FIBS board line has at most {MAX_LINE} characters, got {len(line)}")
        fields = line.strip().split(":")
        if fields[0] != "board":
            raise FibsBoardError(f"a FIBS board line starts with 'board:', got {shown(line)}")
        if len(fields) != FIELDS:
            raise FibsBoardError(f"a FIBS board line has {FIELDS} colon-separated fields, got {len(fields)}")
        names = fields[1], fields[2]
        for name in names:
            if not name or not name.isprintable():
                raise FibsBoardError(f"player names must be printable and not empty, got {shown(name)}")
        for i, text in enumerate(fields[3:], 3):
            if not _NUMBER.fullmatch(text):
                raise FibsBoardError(f"field {i + 1} ({_field_name(i)}) must be a whole number, got {shown(text)}")
        n = [0, 0, 0] + [int(text) for text in fields[3:]]
        length, score = n[3], (n[4], n[5])
        raw = np.array(n[6:32], dtype=np.int64)
        turn, dice, opp_dice, cube = n[32], (n[33], n[34]), (n[35], n[36]), n[37]
        may_double, was_doubled, color, direction, home, bar = (n[38], n[39]), n[40], n[41], n[42], n[43], n[44]
        did_crawford, last = n[51], n[52]

        if length == UNLIMITED:
            length = 0
        if not 0 <= length <= 999 or any(not 0 <= s for s in score) or (length and max(score) >= length):
            raise FibsBoardError(f"scores {score[0]}-{score[1]} do not fit a match to {length} (0: money)")
        if color not in (-1, 1) or direction not in (-1, 1):
            raise FibsBoardError(f"colour and direction are -1 or 1, got {color} and {direction}")
        if (home, bar) != ((0, 25) if direction == -1 else (25, 0)):
            raise FibsBoardError(f"direction {direction} has its home at {0 if direction == -1 else 25} and its "
                                 f"bar at {25 if direction == -1 else 0}, got home {home} and bar {bar}")
        if turn == 0:
            raise FibsBoardError("turn 0: the game is over, there is nothing to decide")
        if turn not in (-1, 1):
            raise FibsBoardError(f"turn is -1 (X), 1 (O) or 0 (game over), got {turn}")
        for pair, whose in ((dice, "the player's"), (opp_dice, "the opponent's")):
            if not (pair == (0, 0) or all(1 <= d <= 6 for d in pair)):
                raise FibsBoardError(f"{whose} dice must be two of 1..6 or 0:0 (not rolled), got {pair[0]}:{pair[1]}")
        if cube < 1 or cube > MAX_CUBE or cube & (cube - 1):
            raise FibsBoardError(f"the cube is 1, 2, 4, ..., {MAX_CUBE}; got {cube}")
        if any(flag not in (0, 1) for flag in (*may_double, was_doubled, did_crawford)):
            raise FibsBoardError("the may-double, was-doubled and did-Crawford fields are 0 or 1")
        if last < 0 or (dialect == "gnubg" and last not in (0, 1)):
            raise FibsBoardError(f"the last field is 0 or 1 on GNU Backgammon's boards, a count on FIBS's; got {last}")
        if np.abs(raw).max() > CHECKERS:
            raise FibsBoardError(f"board fields hold -{CHECKERS}..{CHECKERS} checkers, got {int(np.abs(raw).max())}")
        mover_is_player = turn == color
        mover_direction = direction if mover_is_player else -direction
        # bgai's layout is FIBS's with the mover positive, moving down (home 0, bar 25).
        board = turn * (raw if mover_direction == -1 else raw[::-1])
        try:
            board = validate_boards(board.astype(np.int8)[None])[0]
        except InvalidPositionError as exc:
            raise FibsBoardError(f"the board describes no legal position: {exc}") from None
        board.flags.writeable = False
        if game_over(board[None])[0] or not (board > 0).any():
            raise FibsBoardError("a player has borne off all its checkers: the game is over, there is nothing to "
                                 "decide")

        if not mover_is_player:
            may_double = may_double[::-1]
            opp_dice, dice = dice, opp_dice
        if dice == (0, 0):
            dice = opp_dice  # FIBS sends the roll in the player's fields only; GNU Backgammon in both
        if dialect == "fibs" and not mover_is_player:
            score, names = score[::-1], names[::-1]
        one_away = [length - s == 1 for s in score] if length else [False, False]
        if dialect == "gnubg":  # its own flag, which also covers matches without the Crawford rule
            crawford = bool(length) and last == 0
            if crawford and sum(one_away) != 1:
                raise FibsBoardError(f"the Crawford game needs exactly one player one point away, not "
                                     f"{score[0]}-{score[1]} to {length}")
        else:
            crawford = sum(one_away) == 1 and not did_crawford
        post_crawford = any(one_away) and not crawford
        mover_may, opponent_may = may_double
        owner = CENTERED if mover_may == opponent_may else ON_ROLL if mover_may else OPPONENT
        return cls(board, None if dice == (0, 0) else dice, cube, owner, bool(was_doubled), length,
                   (int(score[0]), int(score[1])), crawford, post_crawford, (names[0], names[1]), mover_is_player)

    def format(self) -> str:
        """This board as a FIBS line written for the mover: it is O (colour 1), moving down, on turn."""
        return to_fibs(self.board, self.dice, cube=self.cube, owner=self.owner, was_doubled=self.was_doubled,
                       match_length=self.match_length, score=self.score, post_crawford=self.post_crawford,
                       names=self.names)


def to_fibs(position, dice=None, *, cube: int = 1, owner: int = CENTERED, was_doubled: bool = False,
            match_length: int = 0, score=(0, 0), post_crawford: bool = False, names=("bgai", "opponent")) -> str:
    """A FIBS board line for the player on roll in ``position`` (a ``Position`` or its board; O, colour 1, moving
    from 24 down, on turn), with its ``dice`` (``None`` before it rolls), the cube (``owner`` from its side), match
    length (0: money), score (its own first) and whether the Crawford game has been played (``post_crawford``: a game
    with one player one point away is the Crawford game without it)."""
    one_away = bool(match_length) and any(match_length - s == 1 for s in score)
    crawford = one_away and sum(match_length - s == 1 for s in score) == 1 and not post_crawford
    board = np.asarray(getattr(position, "board", position), dtype=np.int64)
    roll = (0, 0) if dice is None else parse_dice(dice)
    mine, theirs = owner != OPPONENT, owner != ON_ROLL  # as the cube stands (the Crawford game is told apart)
    off = (CHECKERS - board[board > 0].sum(), CHECKERS + board[board < 0].sum())
    can_move = 0
    if dice is not None:
        steps = afterstates(board.astype(np.int8)[None], np.array([roll]), return_steps=True, validate=False).steps
        assert steps is not None  # asked for
        can_move = max(int((s[:, 0] >= 0).sum()) for s in steps)
    fields = ["board", *names, match_length, *score, *board.tolist(), 1, *roll, 0, 0, cube, int(mine), int(theirs),
              int(was_doubled), 1, -1, 0, 25, *off, int(board[25]), int(-board[0]), can_move, 0,
              int(one_away and not crawford), 0]
    return ":".join(str(f) for f in fields)


_NAMES = {3: "match length", 4: "player's score", 5: "opponent's score", 32: "turn", 33: "die", 34: "die",
          35: "opponent's die", 36: "opponent's die", 37: "cube", 38: "player may double", 39: "opponent may double",
          40: "was doubled", 41: "colour", 42: "direction", 43: "home", 44: "bar", 45: "on home", 46: "on home",
          47: "on bar", 48: "on bar", 49: "can move", 50: "forced move", 51: "did Crawford", 52: "redoubles"}


def _field_name(i: int) -> str:
    return _NAMES.get(i, f"board field {i - 6}")
