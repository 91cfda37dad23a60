"""The exceptions bgai raises for bad input.

Every one is a ``ValueError``, so callers that only care about "bad input" can catch that, and every message says
what was wrong with the input it was given.
"""

from __future__ import annotations


class BgaiError(ValueError):
    """Base class of bgai's input errors."""


class InvalidPositionError(BgaiError):
    """A board, Position ID or XGID that is malformed or describes no legal backgammon position."""


class InvalidDiceError(BgaiError):
    """Dice that are not two integers in 1..6."""


class IllegalMoveError(BgaiError):
    """A play that is malformed or not legal for the position and dice."""


class GameStateError(BgaiError):
    """An action that the game does not allow now: out of turn, the wrong phase, a cube that may not be turned."""
