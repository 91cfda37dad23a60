"""Open Sage as a benchmark opponent, through the optional ``bgsage`` package (``pip install bgai[sage]``).

It is an opponent and a yardstick only: bgai never learns from it. ``SagePlayer(plies)`` plays Open Sage's cubeless
checker play at bgai's ``plies`` (Open Sage counts its raw network as one ply: bgai's 0-ply is its "1ply", 1-ply
its "2ply"), through its public ``BgBotAnalyzer.checker_play``.

bgsage's board is bgai's but for the opponent's bar, ``[0]``, counted positive; its plays are seen from the mover.
Where the two rule sets differ (bgsage also lists the shorter last bear-off when a hit on the way would use both
dice: ``bgai.coach.oracles``), both plays end the game with the same score, so the game-ending play bgai lists
stands for bgsage's.
"""

from __future__ import annotations

import numpy as np

from bgai.core.errors import BgaiError
from bgai.core.movegen import switch
from bgai.players.base import engine_picks

#: The plies ``SagePlayer`` plays at (bgsage's levels "1ply" and "2ply"; deeper ones take seconds a move).
SAGE_PLIES = (0, 1)


def require_bgsage():
    """The ``bgsage`` module, or a clear error saying how to install it."""
    try:
        import bgsage
    except ImportError:
        raise BgaiError("the Open Sage opponent needs the bgsage package: pip install 'bgai[sage]'") from None
    return bgsage


def to_sage(board) -> list[int]:
    """A bgai board (on-roll view) as bgsage's 26-int list: the opponent's bar counted positive."""
    b = np.asarray(board)
    if b.shape != (26,):
        raise ValueError(f"expected a board of shape (26,), got {b.shape}")
    sage = b.astype(np.int8).tolist()
    sage[0] = -sage[0]
    return sage


def from_sage(sage) -> np.ndarray:
    """bgsage's 26-int board as bgai's int8[26] (the inverse of ``to_sage``)."""
    board = np.array(sage, dtype=np.int8)
    if board.shape != (26,):
        raise ValueError(f"expected a bgsage board of length 26, got {board.shape}")
    board[0] = -board[0]
    return board


class SagePlayer:
    """Open Sage's cubeless checker play at ``plies`` (0 or 1), one call per position with a choice."""

    def __init__(self, plies: int = 0) -> None:
        if plies not in SAGE_PLIES:
            raise BgaiError(f"the Open Sage opponent plays at 0 or 1-ply, not {plies!r}")
        self.analyzer = require_bgsage().BgBotAnalyzer(eval_level=f"{plies + 1}ply", cubeful=False)
        self.name = "sage" if plies == 0 else f"sage{plies}"

    def choose(self, boards, after, owner, rng=None, dice=None):
        return engine_picks(boards, after, owner, dice, self.play, "Open Sage", last_checker_off=True)

    def play(self, board, d1: int, d2: int) -> np.ndarray:
        """Open Sage's first play of ``board`` (on-roll view), the board after it seen by the opponent."""
        return switch(from_sage(self.analyzer.checker_play(to_sage(board), d1, d2).moves[0].board))
