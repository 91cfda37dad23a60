"""Match files: the match record, Jellyfish/GNU Backgammon .mat text (read and write) and GNU Backgammon's SGF
(``GM[6]``, read and write).

Every reader replays each game through the rules (``bgai.movegen`` for the plays, ``bgai.cube`` and the Crawford
rule for the cube), so a record read from a file holds only legal games; a malformed line or an illegal action
raises ``bgai.errors.MatchFileError`` naming the line. What ``write_mat`` (``write_sgf``) writes,
``read_mat`` (``read_sgf``) reads back to an equal record.

    >>> from bgai.matchfile import MatchRecord, read_mat, write_mat
    >>> match = MatchRecord(("Alice", "Bob"), length=5)
    >>> game = match.new_game()
    >>> _ = game.add_play("52", "13/8 13/11", player=0)
    >>> _ = game.add_play("64", "24/18 13/9")
    >>> _ = game.add_double()
    >>> _ = game.add_drop()
    >>> read_mat(write_mat(match)) == match
    True
    >>> match.score, match.games[0].result
    ((1, 0), Win(player=0, points=1))
"""

from bgai.errors import MatchFileError
from bgai.matchfile.mat import read_mat, write_mat
from bgai.matchfile.record import (
    Action, CheckerPlay, Double, Drop, GameRecord, GameState, MatchRecord, Resign, Take, Win, parse_play,
)
from bgai.matchfile.sgf import read_sgf, write_sgf


def read_match(source) -> MatchRecord:
    """A match from a .mat or SGF file (text or path), told apart by its content: SGF starts with ``(;``."""
    from bgai.matchfile.mat import _read_text

    text = _read_text(source)
    return read_sgf(text) if text.lstrip().startswith("(") else read_mat(text)


__all__ = [
    "Action", "CheckerPlay", "Double", "Drop", "GameRecord", "GameState", "MatchFileError", "MatchRecord", "Resign",
    "Take", "Win", "parse_play", "read_mat", "read_match", "read_sgf", "write_mat", "write_sgf",
]
