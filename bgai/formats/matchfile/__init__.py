"""Match files: the match record, Jellyfish/GNU Backgammon .mat text (read and write) and GNU Backgammon's SGF
(``GM[6]``, read and write).

Every reader replays each game through the rules (``bgai.core.movegen`` for the plays, ``bgai.core.cube`` and the
Crawford rule for the cube), so a record read from a file holds only legal games; a malformed line or an illegal action
raises ``bgai.MatchFileError`` naming the line. What ``write_mat`` (``write_sgf``) writes,
``read_mat`` (``read_sgf``) reads back to an equal record.

Hostile files are refused, never crash or stall a reader: any malformed input raises ``MatchFileError``; a file
over ``MAX_MATCH_FILE_BYTES`` is refused before it is read; every pattern is linear in the line's length. The
``read_*`` functions take a text or a path; the ``parse_*`` ones a text only, never taken for a path (use them for
text from elsewhere, such as an upload).

    >>> from bgai.formats.matchfile import MatchRecord, read_mat, write_mat
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

from bgai.core.errors import MatchFileError
from bgai.formats.matchfile.mat import MAX_MATCH_FILE_BYTES, check_size, parse_mat, read_mat, read_source, write_mat
from bgai.formats.matchfile.record import (
    Action,
    CheckerPlay,
    Double,
    Drop,
    GameRecord,
    GameState,
    MatchRecord,
    Resign,
    Take,
    Win,
    parse_play,
)
from bgai.formats.matchfile.sgf import parse_sgf, read_sgf, write_sgf


def read_match(source) -> MatchRecord:
    """A match from a .mat or SGF file (text or path, as ``read_mat`` takes them), told apart by its content: SGF
    starts with ``(;``. The file is read once and its content parsed as text."""
    return parse_match(read_source(source))


def parse_match(text: str) -> MatchRecord:
    """A match from a .mat or SGF text (never a path), told apart by its content."""
    check_size(text)
    return parse_sgf(text) if text.lstrip().startswith("(") else parse_mat(text)


__all__ = [
    "MAX_MATCH_FILE_BYTES", "Action", "CheckerPlay", "Double", "Drop", "GameRecord", "GameState", "MatchFileError",
    "MatchRecord", "Resign", "Take", "Win", "parse_mat", "parse_match", "parse_play", "parse_sgf", "read_mat",
    "read_match", "read_sgf", "write_mat", "write_sgf",
]
