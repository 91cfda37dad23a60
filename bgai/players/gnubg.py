"""GNU Backgammon as a benchmark opponent, through the optional ``gnubg-nn`` package (``pip install bgai[gnubg]``).

It is an opponent and a yardstick only: bgai never learns from it.

gnubg_nn's board is two rows of 25 counts, ``[opponent, player on roll]``, each numbered from its own player's
side (index 0..23 its points 1..24, index 24 its bar). ``best_move(board, d1, d2, n=0, b=1)`` returns the play and
the key of the position after it, already seen from the opponent.
"""

from __future__ import annotations

import numpy as np

from bgai.core.errors import BgaiError
from bgai.players.base import engine_picks


def require_gnubg():
    """The ``gnubg_nn`` module, or a clear error saying how to install it."""
    try:
        import gnubg_nn
    except ImportError:
        raise BgaiError("the gnubg opponent needs GNU Backgammon's gnubg-nn: pip install 'bgai[gnubg]'") from None
    return gnubg_nn


def to_gnubg(board) -> list[list[int]]:
    """Our board (on-roll view) as gnubg_nn's ``[opponent, on roll]`` rows."""
    b = np.asarray(board, dtype=np.int64)
    points = b[1:25]
    on_roll = np.append(np.maximum(points, 0), b[25])
    opponent = np.append(np.maximum(-points, 0)[::-1], -b[0])  # its point q is our point 25 - q
    return [opponent.tolist(), on_roll.tolist()]


def from_gnubg(rows) -> np.ndarray:
    """gnubg_nn's ``[opponent, on roll]`` rows (..., 2, 25) as our int8 board(s)."""
    rows = np.asarray(rows, dtype=np.int64)
    if rows.shape[-2:] != (2, 25):
        raise ValueError(f"expected 2x25 gnubg board(s), got shape {rows.shape}")
    opponent, on_roll = rows[..., 0, :], rows[..., 1, :]
    out = np.zeros(rows.shape[:-2] + (26,), dtype=np.int8)
    out[..., 1:25] = on_roll[..., :24] - opponent[..., 23::-1]
    out[..., 25] = on_roll[..., 24]
    out[..., 0] = -opponent[..., 24]
    return out


class GnubgPlayer:
    """GNU Backgammon's 0-ply neural-net player: ``gnubg_nn.best_move``, one C call per position."""

    name = "gnubg"

    def __init__(self) -> None:
        self.gnubg = require_gnubg()

    def choose(self, boards, after, owner, rng=None, dice=None):
        return engine_picks(boards, after, owner, dice, self.play, "gnubg")

    def play(self, board, d1: int, d2: int) -> np.ndarray:
        """gnubg's play of ``board`` (on-roll view), the board after it seen by the opponent."""
        _, key = self.gnubg.best_move(to_gnubg(board), d1, d2, n=0, b=1)
        return from_gnubg(self.gnubg.board_from_position_key(key))
