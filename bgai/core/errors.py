"""The exceptions bgai raises for bad input.

Every one is a ``ValueError``, so callers that only care about "bad input" can catch that, and every message says
what was wrong with the input it was given.
"""

from __future__ import annotations


def shown(value, limit: int = 40) -> str:
    """``value`` quoted for an error message (its ``repr``, which escapes what cannot be printed: control
    characters, lone surrogates), cut to about ``limit`` characters, so that a hostile input stays one short line."""
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else repr(value[:limit]) + "..."
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


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


class MatchFileError(BgaiError):
    """A match file (.mat or SGF) that is malformed or records something the rules forbid; the message names the
    line. ``line`` is that line number (1-based), or ``None`` when the error is not tied to one line."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line


# The errors bgai exports are shown by the name they are imported by (``bgai.IllegalMoveError``), not by this module's.
for _error in (BgaiError, InvalidPositionError, InvalidDiceError, IllegalMoveError, GameStateError, MatchFileError):
    _error.__module__ = "bgai"
del _error
