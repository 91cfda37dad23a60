"""Positions, always seen from the player on roll, and their notations (GNU Backgammon Position ID, XGID).

``Position.board`` is an int8 array of 26: index 1..24 are the points by the on-roll player's pip distance, 25 its
bar, 0 the opponent's bar; the on-roll player's checkers are positive, the opponent's negative. Borne-off counts
are derived: 15 minus the checkers on the board.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field

import numpy as np

from bgai.core.dice import parse_dice  # noqa: F401 (its API too)
from bgai.core.errors import IllegalMoveError, InvalidPositionError, shown
from bgai.core.movegen import BOARD_SIZE, CHECKERS, OPP_BAR, OWN_BAR, START_BOARD, afterstates, switch, validate_boards
from bgai.core.notation import NO_PLAY, apply_step, check_length, format_steps, journeys, parse_paths
from bgai.formats.xgid import decode_xgid, encode_xgid_board, is_xgid

_PIPS = np.arange(BOARD_SIZE)


@dataclass(frozen=True, eq=False)
class Position:
    """An immutable backgammon position seen from the player on roll."""

    _board: np.ndarray = field(repr=False)

    def __init__(self, board) -> None:
        array = np.array(board)
        if array.shape != (BOARD_SIZE,):
            raise InvalidPositionError(f"a board has {BOARD_SIZE} entries, got shape {array.shape}")
        array = validate_boards(array[None])[0].copy()
        array.flags.writeable = False
        object.__setattr__(self, "_board", array)

    @classmethod
    def _unchecked(cls, board: np.ndarray) -> Position:
        """The position of an int8 board the rules made (the move generator's), without checking it again."""
        pos = cls.__new__(cls)
        array = np.array(board, dtype=np.int8)
        array.flags.writeable = False
        object.__setattr__(pos, "_board", array)
        return pos

    # Construction -------------------------------------------------------------------------------------------

    @classmethod
    def start(cls) -> Position:
        """The opening position."""
        return cls(START_BOARD)

    @classmethod
    def from_points(cls, mine: dict | None = None, theirs: dict | None = None) -> Position:
        """A position from ``{point: checkers}`` maps, both numbered from the on-roll player's side.

        ``"bar"`` is a player's own bar. ``Position.from_points({6: 2, "bar": 1}, {20: 2})``.
        """
        board = np.zeros(BOARD_SIZE, dtype=np.int64)
        for sign, points, bar in ((1, mine or {}, OWN_BAR), (-1, theirs or {}, OPP_BAR)):
            for point, count in points.items():
                index = bar if point == "bar" else point
                if point != "bar" and not (isinstance(point, (int, np.integer)) and 1 <= point <= 24):
                    raise InvalidPositionError(f"no point {point!r}: use 1..24 or 'bar'")
                if not isinstance(count, (int, np.integer)) or count < 0:
                    raise InvalidPositionError(f"checker count on point {point!r} must be a whole number >= 0, "
                                               f"got {count!r}")
                if board[index] != 0 and count:
                    raise InvalidPositionError(f"both players have checkers on point {point!r}")
                board[index] = sign * count
        return cls(board)

    @property
    def board(self) -> np.ndarray:
        """The read-only int8 board of 26 (see the module docstring)."""
        return self._board

    # Derived facts --------------------------------------------------------------------------------------------

    def switched(self) -> Position:
        """The same position seen from the opponent."""
        return Position(switch(self._board))

    def pip_counts(self) -> tuple[int, int]:
        """(on-roll player's pips, opponent's pips); a checker on the bar counts 25."""
        return _pips(self._board.astype(np.int64))

    def borne_off(self) -> tuple[int, int]:
        """(on-roll player's, opponent's) checkers borne off."""
        return _borne_off(self._board.astype(np.int64))

    def is_game_over(self) -> bool:
        """True when either player has borne off all fifteen checkers."""
        return CHECKERS in self.borne_off()

    # Moves --------------------------------------------------------------------------------------------------

    def legal_moves(self, dice) -> list[Move]:
        """The distinct legal plays with ``dice``; one empty move when no checker can move."""
        d1, d2 = sorted(parse_dice(dice), reverse=True)
        result = afterstates(self._board[None], np.array([[d1, d2]]), return_steps=True, validate=False)
        # The generator's afterstates are positions by construction: no need to check them again.
        assert result.steps is not None  # asked for
        return [Move(self, (d1, d2), Position._unchecked(after), steps)
                for after, steps in zip(result.after, result.steps)]

    def play(self, move: str, dice) -> Move:
        """The legal play written ``move`` (e.g. ``"24/18 13/11*"``); ``IllegalMoveError`` if there is none."""
        return parse_move(self, move, dice)

    # Notation -----------------------------------------------------------------------------------------------

    def position_id(self) -> str:
        """GNU Backgammon's Position ID (14 characters of base64, the start is ``4HPwATDgc/ABMA``)."""
        return encode_position_id(self._board)

    @classmethod
    def from_position_id(cls, position_id: str) -> Position:
        """The position a GNU Backgammon Position ID describes, from the side of the player on roll."""
        return cls(decode_position_id(position_id))

    def xgid(self) -> str:
        """An XGID with the on-roll player as X (bottom) on roll, centered cube, money game, no dice."""
        return "XGID=" + encode_xgid_board(self._board) + ":0:0:1:00:0:0:0:0:10"

    @classmethod
    def from_xgid(cls, xgid: str) -> Position:
        """The position of an XGID, from the side of the player on roll (its turn field); other fields ignored."""
        return cls(decode_xgid(xgid))

    def to_fibs(self, dice=None, **context) -> str:
        """A FIBS board line for the player on roll (``bgai.formats.fibs.to_fibs``: its dice, cube, score and names)."""
        from bgai.formats.fibs import to_fibs

        return to_fibs(self._board, dice, **context)

    @classmethod
    def from_fibs(cls, line: str, dialect: str = "fibs") -> Position:
        """The position of a FIBS board line, from the side of the player whose turn it is; ``FibsBoard.parse``
        (``bgai.formats.fibs``) also gives the dice, cube, score and names. ``dialect``: ``"fibs"`` or ``"gnubg"`` (the
        boards GNU Backgammon writes for its external player)."""
        from bgai.formats.fibs import FibsBoard

        return cls(FibsBoard.parse(line, dialect).board)

    @classmethod
    def parse(cls, text: str) -> Position:
        """A position from a GNU Position ID or an XGID (the CLI's POSITION argument)."""
        text = text.strip()
        if is_xgid(text):
            return cls.from_xgid(text)
        return cls.from_position_id(text)

    # Python protocol --------------------------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and np.array_equal(self._board, other._board)

    def __hash__(self) -> int:
        return hash(self._board.tobytes())

    def __repr__(self) -> str:
        return f"Position.from_position_id({self.position_id()!r})"

    def __str__(self) -> str:
        return render_board(self._board)

    def _repr_svg_(self) -> str:
        """The board drawn in notebooks (``bgai.formats.svg.board_svg``)."""
        from bgai.formats.svg import board_svg

        return board_svg(self._board)


# GNU Backgammon Position ID ---------------------------------------------------------------------------------------
#
# Documented in the GNU Backgammon manual ("A technical description of the Position ID"): for each player, first
# the opponent of the player on roll and then the player on roll, for each of its 25 slots (points 1..24 from that
# player's own side, then its bar) as many 1-bits as checkers followed by a 0-bit. The 80 bits fill 10 bytes from
# the least significant bit of the first byte, which are written in base64 without the trailing padding.

_ID_CHARS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _slots(board: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(opponent's 25 slots, on-roll player's 25 slots), each from that player's own side, bar last."""
    mine = np.maximum(board[1:], 0)  # points 1..24 then the bar (index 25)
    theirs = np.maximum(switch(board)[1:], 0)
    return theirs, mine


def encode_position_id(board: np.ndarray) -> str:
    bits = []
    for side in _slots(np.asarray(board, dtype=np.int8)):
        for count in side:
            bits.extend([1] * int(count) + [0])
    bits.extend([0] * (80 - len(bits)))
    key = np.packbits(np.array(bits, dtype=np.uint8), bitorder="little").tobytes()
    return base64.b64encode(key).decode("ascii")[:14]


def decode_position_id(position_id: str) -> np.ndarray:
    if not isinstance(position_id, str):
        raise InvalidPositionError(f"a Position ID is a string, got {type(position_id).__name__}")
    text = position_id.strip()
    if len(text) != 14 or not set(text) <= _ID_CHARS:
        raise InvalidPositionError(
            f"a Position ID is 14 base64 characters (A-Z a-z 0-9 + /), got {shown(position_id)}"
        )
    try:
        key = base64.b64decode(text + "==", validate=True)
    except binascii.Error as error:
        raise InvalidPositionError(f"Position ID {position_id!r} is not valid base64: {error}") from None
    bits = np.unpackbits(np.frombuffer(key, dtype=np.uint8), bitorder="little")
    counts, run, used = [], 0, 0
    for bit in bits:
        used += 1
        if bit:
            run += 1
            continue
        counts.append(run)
        run = 0
        if len(counts) == 50:
            break
    if len(counts) < 50:
        raise InvalidPositionError(f"Position ID {position_id!r} has too many checkers (it ends inside a point)")
    if bits[used:].any() or base64.b64encode(key).decode("ascii")[:14] != text:
        raise InvalidPositionError(f"Position ID {position_id!r} has stray bits after the last point")
    theirs, mine = np.array(counts[:25]), np.array(counts[25:])
    for who, side in (("the opponent", theirs), ("the player on roll", mine)):
        if side.sum() > CHECKERS:
            raise InvalidPositionError(
                f"Position ID {position_id!r} gives {who} {int(side.sum())} checkers (at most {CHECKERS})"
            )
    # The opponent's point p (its own numbering) is the on-roll player's point 25 - p.
    clash = (mine[:24] > 0) & (theirs[:24][::-1] > 0)
    if clash.any():
        point = int(np.flatnonzero(clash)[0]) + 1
        raise InvalidPositionError(f"Position ID {position_id!r} puts both players' checkers on point {point}")
    board = np.zeros(BOARD_SIZE, dtype=np.int8)
    board[1:] = mine
    board -= np.concatenate([[theirs[24]], theirs[:24][::-1], [0]]).astype(np.int8)
    return board


# ASCII board ---------------------------------------------------------------------------------------------------


def render_board(board: np.ndarray, players: tuple[str, str] = ("X (on roll)", "O")) -> str:
    """An ASCII diagram: X is the player whose side ``board`` is seen from (moving from 24 down to 1, home at the
    bottom right), O the other; ``players`` names them on the last line."""
    b = np.asarray(board, dtype=np.int64)
    rows = 5

    def cell(point: int, row: int) -> str:
        count = int(b[point])
        n = abs(count)
        if n == 0 or row >= min(n, rows):
            return " . " if row == 0 and n == 0 else "   "
        if row == rows - 1 and n > rows:
            return f"{n:^3d}"
        return " X " if count > 0 else " O "

    top, bottom = list(range(13, 25)), list(range(12, 0, -1))
    header = " " + "".join(f"{p:^3d}" for p in top[:6]) + "|   |" + "".join(f"{p:^3d}" for p in top[6:])
    footer = " " + "".join(f"{p:^3d}" for p in bottom[:6]) + "|   |" + "".join(f"{p:^3d}" for p in bottom[6:])
    line = "+" + "-" * 18 + "+---+" + "-" * 18 + "+"
    opp_bar, own_bar = -int(b[OPP_BAR]), int(b[OWN_BAR])
    lines = [header, line]
    def bar_cell(count: int, row: int, mark: str) -> str:
        if row == rows - 1 and count > rows:
            return f"{count:^3d}"
        return f" {mark} " if row < count else "   "

    for row in range(rows):
        bar = bar_cell(opp_bar, row, "O")
        left, right = "".join(cell(p, row) for p in top[:6]), "".join(cell(p, row) for p in top[6:])
        lines.append(f"|{left}|{bar}|{right}|")
    lines.append("|" + " " * 18 + "|BAR|" + " " * 18 + "|")
    for row in reversed(range(rows)):
        bar = bar_cell(own_bar, row, "X")
        left, right = "".join(cell(p, row) for p in bottom[:6]), "".join(cell(p, row) for p in bottom[6:])
        lines.append(f"|{left}|{bar}|{right}|")
    lines += [line, footer]
    pips = _pips(b)
    off = _borne_off(b)
    lines.append(f"{players[0]}: pips {pips[0]}, off {off[0]}    {players[1]}: pips {pips[1]}, off {off[1]}")
    return "\n".join(lines)


def _pips(b: np.ndarray) -> tuple[int, int]:
    return int(np.where(b > 0, b, 0) @ _PIPS), int(np.where(b < 0, -b, 0) @ (BOARD_SIZE - 1 - _PIPS))


def _borne_off(b: np.ndarray) -> tuple[int, int]:
    return CHECKERS - int(b[b > 0].sum()), CHECKERS + int(b[b < 0].sum())


@dataclass(frozen=True)
class Move:
    """A legal play: ``before`` (the mover on roll), ``dice``, and ``after`` (seen from the opponent, on roll next)."""

    before: Position
    dice: tuple[int, int]
    after: Position
    steps: np.ndarray = field(repr=False, compare=False)

    def checker_steps(self) -> list[tuple[int, int, bool]]:
        """One way of playing it: (from, to, hit) per checker step, in the mover's numbering (25 bar, 0 off)."""
        return [(int(f), int(t), bool(h)) for f, t, h in self.steps if f >= 0]

    def checker_journeys(self) -> list[tuple[int, int]]:
        """(from, to) of each checker's journey (``journeys``): where the checkers started and ended, not the
        points they passed through."""
        return [(path[0][0], path[-1][0]) for path in journeys(self.checker_steps())]

    def __str__(self) -> str:
        return format_steps(self.checker_steps())

    def __repr__(self) -> str:
        return f"<Move {self} with {self.dice[0]}{self.dice[1]} from {self.before!r}>"


def parse_move(position: Position, text: str, dice) -> Move:
    """The legal play of ``position`` with ``dice`` written as ``text``; raises ``IllegalMoveError`` otherwise."""
    dice = parse_dice(dice)
    if not isinstance(text, str):
        raise IllegalMoveError(f"a play is written as text, such as '24/18 13/11', got {type(text).__name__}")
    check_length(text)  # (before the legal plays are generated, and on the text as given, not stripped)
    legal = position.legal_moves(dice)
    cleaned = text.strip().lower()
    if cleaned in ("", "-", NO_PLAY, "pass"):
        if len(legal) == 1 and not legal[0].checker_steps():
            return legal[0]
        raise IllegalMoveError(f"a play of {dice[0]}{dice[1]} is possible here, so {text!r} is not legal")
    board = position.board.astype(np.int64).copy()
    hit_points: set[int] = set()
    starred: set[tuple[int, str]] = set()
    for path in parse_paths(cleaned):
        for _ in range(path.repeat):
            for src, dst in path.hops():
                if apply_step(board, src, dst, text):
                    hit_points.add(dst)
        starred |= {(point, path.token) for point, star in zip(path.points, path.stars) if star}
    for point, token in sorted(starred):
        if point not in hit_points:
            raise IllegalMoveError(f"{token!r} in {text!r} marks a hit on {point}, but no opposing blot is hit there")
    after = Position(switch(board.astype(np.int8)))
    for move in legal:
        if move.after == after:
            return move
    raise IllegalMoveError(f"{text!r} is not a legal play of {dice[0]}{dice[1]} in this position")
