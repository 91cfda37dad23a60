"""The phase of a position, for networks specialised by phase and for the bear-off database.

Every board is classified from the side of the player on roll, but the classes are symmetric: switching sides
never changes a position's class.

``OVER``
    The game is over: the opponent (the last mover) has borne off every checker.
``BEAROFF``
    Both sides have every remaining checker in their own home board, none on the bar (``bgai.eval.bearoff``
    answers these).
``RACE``
    No contact is left (``is_race``: every checker of each side has passed every checker of the other, so no hit
    or block can happen again), but some checker is still outside its home board.
``CONTACT``
    Some checker can still hit or be hit, and neither side has crashed.
``CRASHED``
    Contact where a side has crashed (``is_crashed``): GNU Backgammon's third class (eval.c's
    ``ClassifyPosition``), the positions its third net evaluates; ``CONTACT`` to a model without a crashed net.

    >>> from bgai import Position
    >>> NAMES[classify(Position.start().board[None])[0]]
    'contact'
"""

from __future__ import annotations

import numpy as np

from bgai.core.movegen import CHECKERS, OWN_BAR

OVER, BEAROFF, RACE, CONTACT, CRASHED = 0, 1, 2, 3, 4
NAMES = ("over", "bearoff", "race", "contact", "crashed")
#: A side has crashed when at most this many of its checkers are left to play with (below).
CRASHED_CHECKERS = 6


def is_race(boards) -> np.ndarray:
    """True where there is no contact left, for (..., 26) boards; returns (...,) bool.

    With ``back`` our rearmost checker (the largest index in 1..25 holding one of ours, -1 if we have none left on
    the board) and ``opp_back`` the opponent's rearmost checker (the smallest index in 0..24 holding one of theirs,
    26 if they have none left), the position is a race iff ``back < opp_back``: every one of our checkers has
    passed every opponent checker, so neither side can ever hit or block the other again. A side's bar counts as
    its rearmost point. Positions where a side has borne off everything count as races. This is the same split as
    GNU Backgammon's ``ClassifyPosition(...) <= CLASS_RACE``.
    """
    b = np.asarray(boards)
    if b.ndim == 0 or b.shape[-1] != 26:
        raise ValueError(f"boards must have shape (..., 26), got {b.shape}")
    if not np.issubdtype(b.dtype, np.integer):
        raise TypeError(f"boards must be an integer array, got dtype {b.dtype}")
    idx = np.arange(26, dtype=np.int16)
    back = np.where(b > 0, idx, -1).max(axis=-1)
    opp_back = np.where(b < 0, idx, 26).min(axis=-1)
    return back < opp_back


def is_crashed(boards) -> np.ndarray:
    """True where a side has crashed, for (..., 26) boards; returns (...,) bool. Contact is not looked at
    (``classify`` asks this of contact positions only).

    GNU Backgammon's published rule (eval.c, ``ClassifyPosition``), for each side in turn: with ``n`` its checkers
    still in play (on the board or its bar) and ``ace``, ``deuce`` those on its own one and two points, it has
    crashed when ``n <= 6``; or, holding two or more on its ace point, when ``n - ace <= 6``, or with two or more on
    its deuce point too when ``n - ace - deuce + 1 <= 6``; or, with at most one on its ace point, when
    ``n - deuce + 1 <= 6``. Checkers buried that deep no longer take part in the game, so the side plays with six
    or fewer.
    """
    b = np.asarray(boards)
    if b.ndim == 0 or b.shape[-1] != 26:
        raise ValueError(f"boards must have shape (..., 26), got {b.shape}")
    b = b.astype(np.int16)
    crashed = np.zeros(b.shape[:-1], dtype=bool)
    # our ace and deuce points are 1 and 2; the opponent's (negative counts) are 24 and 23
    for side, ace_at, deuce_at in ((b, 1, 2), (-b, 24, 23)):
        mine = np.maximum(side, 0)
        n, ace, deuce = mine.sum(axis=-1), mine[..., ace_at], mine[..., deuce_at]
        most = CRASHED_CHECKERS
        crashed |= (n <= most) | np.where(
            ace > 1, (n - ace <= most) | ((deuce > 1) & (n - ace - deuce + 1 <= most)), n - deuce + 1 <= most)
    return crashed


def is_bearoff(boards: np.ndarray) -> np.ndarray:
    """(N,) True where both sides have every checker still on the board in their home boards (nothing on a bar,
    nothing elsewhere) and both have checkers left: positions the database answers."""
    b = np.asarray(boards)
    ours_home = ~np.any(b[:, 7:OWN_BAR + 1] > 0, axis=1, keepdims=False)
    theirs_home = ~np.any(b[:, :19] < 0, axis=1, keepdims=False)
    return ours_home & theirs_home & np.any(b > 0, axis=1, keepdims=False) & np.any(b < 0, axis=1, keepdims=False)


def game_over(boards: np.ndarray) -> np.ndarray:
    """Positions (on-roll view) whose opponent, the last mover, has no checker left: the game is over."""
    if len(boards) >= 256 and boards.dtype == np.int8 and boards.ndim == 2:  # compiled, other threads run meanwhile
        from bgai.core import kernels

        return kernels.games_over(boards)
    return ~np.any(boards < 0, axis=1, keepdims=False)


def result_points(after: np.ndarray) -> np.ndarray:
    """Points the mover won with its last checker off, from ``after`` seen by the loser (now on roll): 1..3."""
    if after.dtype == np.int8 and after.ndim == 2:  # one compiled call rather than six of numpy
        from bgai.core import kernels

        return kernels.points_of(after)
    loser = np.where(after > 0, after, 0)
    gammon = loser.sum(axis=1) == CHECKERS
    backgammon = gammon & (loser[:, 19:OWN_BAR + 1].sum(axis=1) > 0)
    return 1 + gammon.astype(np.int8) + backgammon.astype(np.int8)


def classify(boards: np.ndarray) -> np.ndarray:
    """(...,) int8 phase of (..., 26) boards (on-roll view): ``OVER``, ``BEAROFF``, ``RACE``, ``CONTACT`` or
    ``CRASHED``, by one compiled pass over each board (``bgai.core.kernels.phases_of``); ``reference_classify`` is
    the same in numpy, from the tests above, and the tests hold the two equal."""
    boards = np.asarray(boards)
    if boards.ndim == 0 or boards.shape[-1] != 26:
        raise ValueError(f"boards must have shape (..., 26), got {boards.shape}")
    from bgai.core import kernels

    flat = np.ascontiguousarray(boards.reshape(-1, 26), dtype=np.int8)
    out = np.empty(len(flat), dtype=np.int8)
    kernels.phases_of(flat, out)
    return out.reshape(boards.shape[:-1])


def reference_classify(boards: np.ndarray) -> np.ndarray:
    """``classify`` in numpy, from ``game_over``, ``is_bearoff``, ``is_race`` and ``is_crashed``: the readable
    reference of the compiled pass, and what a check that must not load the compiler reads."""
    boards = np.asarray(boards)
    return np.select(
        [game_over(boards), is_bearoff(boards), is_race(boards), is_crashed(boards)], [OVER, BEAROFF, RACE, CRASHED],
        CONTACT).astype(np.int8)
