"""XGID, eXtreme Gammon's position string, read and written in one place: the board and the context it carries.

The board is 26 characters: the first O's bar, then points 1..24 numbered from X's side, then X's bar; ``-`` is
empty, ``A``..``O`` are 1..15 of X's checkers, ``a``..``o`` 1..15 of O's. The fields after it are the cube's
exponent, its position (1: X owns it, -1: O, 0: centered), the turn (1: X on roll, -1: O), the dice (``00``
before the roll, ``D`` after a double), X's score, O's score, the Crawford flag (a match: 1 in the Crawford game;
money: the Jacoby rule), the match length (0: money) and the maximum cube (10). ``Position.from_xgid`` and
``Position.xgid`` use the board alone; ``xgid_context`` reads the cube and the score from the side of the player on
roll, ``format_xgid`` writes them all.

    >>> from bgai import Position
    >>> text = format_xgid(Position.start().board, cube=2, owner=1, dice=(3, 1), score=(2, 4), length=7)
    >>> text
    'XGID=-b----E-C---eE---c-e----B-:1:1:1:31:2:4:0:7:10'
    >>> cube, owner, match = xgid_context(text)
    >>> cube, owner, str(match)
    (2, <CubeOwner.ON_ROLL: 1>, '2-4 in a 7-point match')
"""

from __future__ import annotations

import re

import numpy as np

from bgai.core.cube import CENTERED, ON_ROLL, OPPONENT
from bgai.core.errors import BgaiError, InvalidPositionError, shown
from bgai.core.match import MatchScore
from bgai.core.movegen import BOARD_SIZE, OPP_BAR, OWN_BAR, switch, validate_boards


def encode_xgid_board(board: np.ndarray) -> str:
    chars = []
    for count in np.asarray(board, dtype=np.int64):
        chars.append("-" if count == 0 else chr((ord("A") if count > 0 else ord("a")) + abs(int(count)) - 1))
    return "".join(chars)


def is_xgid(text: str) -> bool:
    """Whether ``text`` is read as an XGID rather than a Position ID: it starts ``XGID=`` (any case) or has
    fields (``:``), as eXtreme Gammon's are often pasted without their prefix."""
    text = text.strip()
    return text[:5].upper() == "XGID=" or ":" in text


def xgid_fields(xgid: str) -> list[str]:
    """The XGID's fields (board first) without its ``XGID=`` prefix (any case)."""
    text = xgid.strip()
    return (text[5:] if text[:5].upper() == "XGID=" else text).split(":")


#: An XGID's dice field before the roll (``00``, or ``0``) and after a cube action (``D`` doubled, ``B`` beavered,
#: ``R`` raccooned), when there is no roll yet.
NOT_ROLLED, CUBE_ACTIONS = ("00", "0"), ("D", "B", "R")


def xgid_dice(xgid: str) -> tuple[int, int] | str | None:
    """The dice an XGID carries: the roll of the player on roll, ``(6, 3)`` for ``63``; ``None`` before the roll
    (``00``, or no dice field); the cube action's letter (``D``, ``B`` or ``R``) after one.
    ``InvalidPositionError`` for anything else."""
    fields = xgid_fields(xgid)
    roll = fields[4] if len(fields) > 4 else "00"
    if roll in NOT_ROLLED:
        return None
    if roll in CUBE_ACTIONS:
        return roll
    if not re.fullmatch(r"[1-6]{2}", roll, re.ASCII):
        raise InvalidPositionError(f"an XGID's dice field is a roll such as 63, 00 before the roll, or D after a "
                                   f"double; got {shown(roll)}")
    return int(roll[0]), int(roll[1])


def decode_xgid(xgid: str) -> np.ndarray:
    if not isinstance(xgid, str):
        raise InvalidPositionError(f"an XGID is a string, got {type(xgid).__name__}")
    fields = xgid_fields(xgid)
    layout = fields[0]
    if len(layout) != BOARD_SIZE or not re.fullmatch(r"[-A-Oa-o]+", layout):
        raise InvalidPositionError(
            f"an XGID starts with 26 characters of '-', 'A'-'O' and 'a'-'o', got {shown(fields[0])}"
        )
    board = np.zeros(BOARD_SIZE, dtype=np.int64)
    for i, char in enumerate(layout):
        if char != "-":
            board[i] = (ord(char) - ord("A") + 1) if char.isupper() else -(ord(char) - ord("a") + 1)
    if board[OWN_BAR] < 0 or board[OPP_BAR] > 0:
        raise InvalidPositionError(f"XGID {shown(xgid, 80)} puts a checker on the other player's bar")
    turn = fields[3] if len(fields) > 3 else "1"
    if turn not in ("1", "-1"):
        raise InvalidPositionError(f"XGID turn field must be 1 or -1, got {shown(turn)}")
    board = validate_boards(board[None])[0]
    return board if turn == "1" else switch(board)


def xgid_context(xgid: str):
    """(cube value, cube owner, ``MatchScore`` or ``None``) told by an XGID, from the side of the player on roll.

    XGID fields after the board: cube exponent, cube position (1: X owns, -1: O owns, 0: centered), turn (1: X on
    roll), dice, X's score, O's score, Crawford (in a match: 1 in the Crawford game), match length (0: money).
    A 1-away score that is not the Crawford game is post-Crawford.
    """
    fields = xgid_fields(xgid)
    numbers = [fields[i] if i < len(fields) else "" for i in (1, 2, 3, 5, 6, 7, 8)]
    if not all(re.fullmatch(r"-?[0-9]{1,4}", f, re.ASCII) for f in numbers):
        raise BgaiError(f"an XGID's fields after the board are cube:owner:turn:dice:score:score:crawford:length, "
                        f"each a small whole number; got {shown(xgid, 80)}")
    exponent, position, turn, x_score, o_score, crawford, length = (int(f) for f in numbers)
    scores = (x_score, o_score)
    if length < 0:
        raise BgaiError(f"XGID {shown(xgid, 80)}: the match length is 0 (money) or more")
    if not 0 <= exponent <= 6 or position not in (-1, 0, 1) or turn not in (-1, 1):
        raise BgaiError(f"XGID {shown(xgid, 80)}: cube exponent 0..6, cube position -1/0/1 and turn -1/1 expected")
    owner = CENTERED if position == 0 else ON_ROLL if position == turn else OPPONENT
    if turn == -1:
        scores = scores[::-1]
    match = None
    if length > 0:
        one_away = any(length - s == 1 for s in scores)
        match = MatchScore.from_score(length, scores, post_crawford=one_away and not crawford)
    return 2**exponent, owner, match


def format_xgid(board, *, cube: int = 1, owner: int = 0, x_on_roll: bool = True, dice=None,
                score: tuple[int, int] = (0, 0), crawford: bool = False, length: int = 0,
                jacoby: bool = False) -> str:
    """An XGID (the inverse of ``decode_xgid`` with ``xgid_context``), X being the player whose side ``board``
    (a ``Position.board``) is seen from.

    ``owner``: 1 X owns the cube, -1 O owns it, 0 centered; ``x_on_roll``: whose turn; ``dice``: the roll of the
    player on roll, ``None`` before it rolls, or ``"D"`` when it has doubled and its opponent must answer;
    ``score``: (X's, O's); ``crawford``: this is the Crawford game (matches; for money ``jacoby`` instead).
    """
    if cube not in (1, 2, 4, 8, 16, 32, 64) or owner not in (-1, 0, 1):
        raise BgaiError(f"an XGID's cube is 1..64 owned by 1 (X), -1 (O) or 0 (centered), got {cube} and {owner}")
    if dice is None:
        roll = "00"
    elif dice == "D":
        roll = "D"
    else:
        roll = "".join(str(int(d)) for d in dice)
    flag = int(crawford) if length > 0 else int(jacoby)
    fields = [encode_xgid_board(board), int(cube).bit_length() - 1, owner, 1 if x_on_roll else -1, roll,
              score[0], score[1], flag, length, 10]
    return "XGID=" + ":".join(str(f) for f in fields)
