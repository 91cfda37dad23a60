"""The phase of a position, for networks specialised by phase and for the bear-off database.

Every board is classified from the side of the player on roll, but the classes are symmetric: switching sides
never changes a position's class.

``OVER``
    The game is over: the opponent (the last mover) has borne off every checker.
``BEAROFF``
    Both sides have every remaining checker in their own home board, none on the bar (``bgai.bearoff``
    answers these).
``RACE``
    No contact is left (``bgai.players.pubeval.is_race``: every checker of each side has passed every checker of
    the other, so no hit or block can happen again), but some checker is still outside its home board.
``CONTACT``
    Everything else: some checker can still hit or be hit.

    >>> from bgai import Position
    >>> NAMES[classify(Position.start().board[None])[0]]
    'contact'
"""

from __future__ import annotations

import numpy as np

from bgai.bearoff import is_bearoff
from bgai.game import game_over
from bgai.players.pubeval import is_race

OVER, BEAROFF, RACE, CONTACT = 0, 1, 2, 3
NAMES = ("over", "bearoff", "race", "contact")


def classify(boards: np.ndarray, compiled: bool = True) -> np.ndarray:
    """(N,) int8 phase of N boards (on-roll view): ``OVER``, ``BEAROFF``, ``RACE`` or ``CONTACT``. ``compiled``:
    one compiled pass over each board (``bgai.kernels.phases_of``), else the numpy tests below (the same
    classes)."""
    boards = np.asarray(boards)
    if compiled and boards.ndim == 2 and boards.shape[1] == 26:
        from bgai import kernels

        out = np.empty(len(boards), dtype=np.int8)
        kernels.phases_of(np.ascontiguousarray(boards, dtype=np.int8), out)
        return out
    return np.select(
        [game_over(boards), is_bearoff(boards), is_race(boards)], [OVER, BEAROFF, RACE], CONTACT
    ).astype(np.int8)
