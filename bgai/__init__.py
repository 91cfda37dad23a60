"""bgai: a backgammon engine with exact rules, a batched move generator and self-play learning.

    >>> from bgai import Position
    >>> pos = Position.start()
    >>> pos.position_id()
    '4HPwATDgc/ABMA'
    >>> [str(m) for m in pos.legal_moves((6, 5))]  # doctest: +NORMALIZE_WHITESPACE
    ['8/3 8/2', '13/2', '13/7 8/3', '13/8 13/7', '24/18 8/3', '24/18 13/8', '24/13']
"""

from bgai._version import __version__
from bgai.core.cube import CubeOwner
from bgai.core.errors import (
    BgaiError,
    GameStateError,
    IllegalMoveError,
    InvalidDiceError,
    InvalidPositionError,
    MatchFileError,
)
from bgai.core.movegen import Afterstates, afterstates
from bgai.formats.position import Move, Position


def __getattr__(name: str):
    # The bot loads the network and the compiled kernels (numpy and numba, no torch); import it only when asked
    # for, so the rules alone load fast.
    if name in ("load_bot", "Bot", "Evaluation"):
        from bgai.eval import bot

        return getattr(bot, name)
    if name == "onnx_feeds":  # the ONNX export's module: the encoder, and onnx only for a file's metadata
        from bgai.eval import export

        return export.onnx_feeds
    raise AttributeError(f"module 'bgai' has no attribute {name!r}")


__all__ = [
    "Afterstates",
    "BgaiError",
    "CubeOwner",
    "GameStateError",
    "Bot",
    "Evaluation",
    "IllegalMoveError",
    "InvalidDiceError",
    "InvalidPositionError",
    "MatchFileError",
    "Move",
    "Position",
    "afterstates",
    "load_bot",
    "onnx_feeds",
    "__version__",
]
