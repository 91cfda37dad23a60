"""The Jellyfish .mat text format, as GNU Backgammon and eXtreme Gammon write it.

A file is optional ``; [Key "Value"]`` header lines, the match length (`` 7 point match``; 0 for a money session),
then each game: `` Game N``, the score line `` Alice : 0      Bob : 2`` (seat 0 on the left), numbered rows of
two cells (seat 0's action on the left, seat 1's on the right) and the result ``Wins N point(s)`` under the
winner's column. A cell is a roll with its play (``53: 8/3 6/3``; bar is 25 or ``bar``, off 0 or ``off``; empty
when no checker can move), `` Doubles => N``, `` Takes`` or `` Drops``. A game that ends with checkers still on
both sides and no drop was ended by a resignation, which the format records only as its result.

Layout of the rows, as GNU Backgammon writes them: ``%3d) `` then the left cell padded to 28 characters, so the
right cell starts at column 34 (1-based); the result goes in the winner's next cell: beside a lone left cell when
the right-hand player wins, else on a line of its own at column 7 (left) or 35 (right). The reader does not rely on
columns beyond telling a lone cell's side; any whitespace between the parts is accepted.

    >>> from bgai.formats.matchfile import MatchRecord, read_mat, write_mat
    >>> match = MatchRecord(("Alice", "Bob"), 1)
    >>> game = match.new_game()
    >>> _ = game.add_play("31", "8/5 6/5", player=1)
    >>> _ = game.add_resign(2)
    >>> text = write_mat(match)
    >>> print(text)  # doctest: +NORMALIZE_WHITESPACE
     1 point match
    <BLANKLINE>
     Game 1
     Alice : 0                      Bob : 0
      1)                             31: 8/5 6/5
                                      Wins 2 points
    <BLANKLINE>
    >>> read_mat(text) == match
    True
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NoReturn

from bgai.core.errors import BgaiError, IllegalMoveError, MatchFileError, shown
from bgai.formats.matchfile.record import CheckerPlay, Double, Drop, GameRecord, MatchRecord, Resign, Take, Win

# Header keys that set the rules rather than describe the match: read into MatchRecord fields, written from them.
RULE_KEYS = ("Jacoby", "Crawford")

# The largest match file (.mat or SGF) the readers take, in bytes (characters for a text): checked before a file is
# read. Real files are tens of KB (a long money session a few hundred); reading replays every play, so the limit
# bounds the time a file can take (docs/figures.md, "Tuning constants"). Raise it here for larger archives.
MAX_MATCH_FILE_BYTES = 1 << 20
# The largest number a match file may hold (match length, score, cube, points): far above any real one, and it
# keeps a line of digits from becoming a huge integer.
MAX_NUMBER = 999_999

# Every pattern is linear in the line's length: each quantifier is followed by something its class cannot match,
# so a failing match backtracks at most once over each character (no ``\s*(.*?)\s+`` pairs, which are cubic).
_METADATA = re.compile(r'^;\s*\[(?P<key>[^"\]]*)"(?P<value>[^"]*)"\s*\]$', re.ASCII)
_LENGTH = re.compile(r"^\s*(?P<length>\d+)\s+point\s+match$", re.IGNORECASE | re.ASCII)
_GAME = re.compile(r"^\s*Game\s+(?P<number>\d+)$", re.IGNORECASE | re.ASCII)
# A score line's first score: the first ": N" followed by the second name (the last ": N" ends the line).
_SCORE0 = re.compile(r":\s*(?P<score>\d+)\s+(?=\S)", re.ASCII)
_ROW = re.compile(r"^\s*(?P<number>\d+)\)(?P<cells>.*)$", re.ASCII)
_STEP = r"(?:bar|\d{1,2})(?:/(?:\d{1,2}|off)\*?)+(?:\(\d\))?"
_CELL = re.compile(
    r"(?P<roll>(?P<dice>[1-6]{2}):(?P<play>(?:[ \t]+" + _STEP + r")*))"
    r"|(?P<double>Doubles\s*=>\s*(?P<cube>\d+))"
    r"|(?P<take>Takes|Accepts)"
    r"|(?P<drop>Drops|Passes|Rejects)"
    r"|(?P<beaver>Beavers\s*=>\s*\d+)"
    r"|(?P<wins>Wins\s+(?P<points>\d+)\s+points?(?:\s+and\s+the\s+match)?)",
    re.IGNORECASE | re.ASCII,
)
# The longest play text read: a legal play is at most four checker steps, under 40 characters however written
# (``bar/21* 21/17* 17/13* 13/9*``); longer text is refused before it is parsed.
_MAX_PLAY = 100
# A lone cell starting more than this many columns after its row's ")" is the right-hand one.
_LEFT_CELL_SLACK = 10
# A lone result line starting at or beyond this column is the right-hand player's.
_RIGHT_RESULT_COLUMN = 20


def _points(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def _cell(action) -> str:
    if isinstance(action, CheckerPlay):
        steps = " ".join(f"{src}/{max(dst, 0)}{'*' if hit else ''}" for src, dst, hit in action.move.checker_steps())
        return f"{action.dice[0]}{action.dice[1]}: {steps}".rstrip()
    if isinstance(action, Double):
        return f" Doubles => {action.cube}"
    if isinstance(action, Take):
        return " Takes"
    if isinstance(action, Drop):
        return " Drops"
    raise TypeError(f"no .mat cell for {action!r}")


def row_numbers(game: GameRecord) -> list[int | None]:
    """The .mat row (1, 2, ...) of each of ``game``'s actions (``None`` for a resignation and the result, which
    have no cell of their own): seat 0's action starts a row, seat 1's fills the row's right cell or starts one."""
    numbers: list[int | None] = []
    row, right_free = 0, False
    for action in game.actions:
        if isinstance(action, (Resign, Win)):
            numbers.append(None)
            continue
        if action.player == 0 or not right_free:
            row += 1
        right_free = action.player == 0
        numbers.append(row)
    return numbers


def write_mat(record: MatchRecord) -> str:
    """The .mat text of ``record`` (GNU Backgammon's layout; ``read_mat`` reads it back to an equal record).

    Plays are written one checker step at a time, bar as 25 and off as 0, hits marked ``*``. A resignation
    appears as its result only, as in GNU Backgammon's files.
    """
    lines = [f'; [{key} "{value}"]' for key, value in record.metadata.items()]
    if record.length == 0 and record.jacoby:
        lines.append('; [Jacoby "On"]')
    if record.length and not record.crawford:
        lines.append('; [Crawford "Off"]')
    if lines:
        lines.append("")
    lines += [f" {record.length} point match", ""]
    for game in record.games:
        lines.append(f" Game {game.number}")
        left = f" {record.players[0]} : {game.score[0]}"
        lines.append(f"{left:<32}{' ' if len(left) >= 32 else ''}{record.players[1]} : {game.score[1]}")
        rows: list[list[str]] = []
        for action, row in zip(game.actions, row_numbers(game)):
            if row is not None:
                if row > len(rows):
                    rows.append([""] if action.player == 1 else [])
                rows[-1].append(_cell(action))
        # The result goes where the winner's next cell would be, as GNU Backgammon writes it (and reads it back):
        # beside a lone left cell when the right-hand player wins, else on a line of its own.
        won = game.result
        result = f"Wins {_points(won.points)}" if won is not None else None
        beside = won is not None and won.player == 1 and bool(rows) and len(rows[-1]) == 1
        if beside and result is not None:
            rows[-1].append(result)
        for number, cells in enumerate(rows, 1):
            text = f"{number:3d}) {cells[0]:<28}" + (f"{' ' if len(cells[0]) >= 28 else ''}{cells[1]}"
                                                      if len(cells) == 2 else "")
            lines.append(text.rstrip())
        if won is not None and result is not None and not beside:
            lines.append(" " * (6 if won.player == 0 else 34) + result)
        lines.append("")
    return "\n".join(lines) + "\n"


def read_mat(source: str | Path) -> MatchRecord:
    """The match of a .mat file: ``source`` is its text, or a path (a ``Path``, or a string without a newline
    that names an existing file).

    Every play and cube action is replayed through the rules; anything malformed or illegal raises
    ``MatchFileError`` naming the line, as does a file over ``MAX_MATCH_FILE_BYTES``. The last game may be
    unfinished (no result); every other game needs one.
    """
    return parse_mat(read_source(source))


def parse_mat(text: str) -> MatchRecord:
    """The match of a .mat text; unlike ``read_mat``, never a path (for text from elsewhere, such as an upload)."""
    check_size(text)
    return _MatReader(text.splitlines()).read()


def check_size(text: str) -> None:
    """Refuse a match text over ``MAX_MATCH_FILE_BYTES`` characters."""
    if not isinstance(text, str):
        raise MatchFileError(f"a match file's text is a str, got {type(text).__name__}")
    if len(text) > MAX_MATCH_FILE_BYTES:
        raise MatchFileError(f"the match text has {len(text):,} characters; a match file may have at most "
                             f"{MAX_MATCH_FILE_BYTES:,} (MAX_MATCH_FILE_BYTES)")


def read_source(source: str | Path) -> str:
    """The text of a match file given as its path (a ``Path``, or a string without a newline that names an existing
    file) or as its text, which is returned as it is. A path's size is checked before its content is read, and at
    most ``MAX_MATCH_FILE_BYTES`` are read; bytes that are not UTF-8 read as U+FFFD."""
    if isinstance(source, str) and not _names_file(source):
        return source
    if not isinstance(source, (str, Path)):
        raise MatchFileError(f"a match file is given as its text or its path, got {type(source).__name__}")
    try:
        with open(source, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            data = b"" if size > MAX_MATCH_FILE_BYTES else file.read(MAX_MATCH_FILE_BYTES + 1)
    except (OSError, ValueError) as error:
        raise MatchFileError(f"cannot read {shown(str(source), 60)}: {getattr(error, 'strerror', None) or error}") \
            from None
    if size > MAX_MATCH_FILE_BYTES or len(data) > MAX_MATCH_FILE_BYTES:  # a pipe has no size until it is read
        told = f"{size:,} bytes" if size > MAX_MATCH_FILE_BYTES else f"over {MAX_MATCH_FILE_BYTES:,} bytes"
        raise MatchFileError(f"{shown(str(source), 60)} is {told}; a match file may have at most "
                             f"{MAX_MATCH_FILE_BYTES:,} (MAX_MATCH_FILE_BYTES)")
    return data.decode("utf-8-sig", errors="replace")


def _names_file(text: str) -> bool:
    """Whether a string given as a match file is the path of one: no newline, and an existing file. Never raises:
    ``os.path.isfile`` answers False for a string too long for a path or holding a NUL."""
    return "\n" not in text and os.path.isfile(text)


def _cut(name: str, limit: int = 40) -> str:
    """A player's name as an error message shows it, cut to ``limit`` characters."""
    return name if len(name) <= limit else name[:limit] + "..."


def _score_line(line: str) -> tuple[str, str, str, str] | None:
    """(name0, score0, name1, score1) of a score line `` Alice : 0      Bob : 2`` (names may hold spaces and
    colons), or ``None``. The second score is after the last colon; the first is the first ``: N`` followed by
    more text, as a lazy regular expression would read it, found in one pass."""
    before, colon, last = line.strip().rpartition(":")
    score1 = last.strip()
    if not colon or not (score1.isascii() and score1.isdigit()):
        return None
    before = before.rstrip()
    first = _SCORE0.search(before, 1)
    if first is None:
        return None
    name0, name1 = before[:first.start()].rstrip(), before[first.end():]
    return name0, first["score"], name1, score1


def read_number(digits: str, what: str, line: int | None) -> int:
    """The ASCII ``digits`` a pattern matched as an ``int``, refused (``MatchFileError`` naming ``what`` and the
    line) above ``MAX_NUMBER``."""
    if len(digits) > len(str(MAX_NUMBER)) or int(digits) > MAX_NUMBER:
        raise MatchFileError(f"{what} {shown(digits, 20)} is more than {MAX_NUMBER:,}, the most a match file holds",
                             line)
    return int(digits)


class _MatReader:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.match: MatchRecord | None = None
        self.game: GameRecord | None = None
        self.game_line = 0
        self.result: tuple[int, int, int] | None = None  # (seat, points, line) of the game's "Wins" line
        self.names: tuple[str, str] | None = None

    def fail(self, message: str, line: int | None) -> NoReturn:
        raise MatchFileError(message, line)

    @property
    def record(self) -> MatchRecord:
        """The match being read (made at its first game's title)."""
        assert self.match is not None, "a game line before the match"
        return self.match

    @property
    def current(self) -> GameRecord:
        """The game being read (made at its score line)."""
        assert self.game is not None, "a play before a game's score line"
        return self.game

    def read(self) -> MatchRecord:
        metadata: dict[str, str] = {}
        length = None
        expect_score = False
        for n, raw in enumerate(self.lines, 1):
            line = raw.rstrip()
            if not line.strip():
                continue
            if line.lstrip().startswith(";"):
                found = _METADATA.match(line.strip())
                if found and self.match is None:
                    metadata[found["key"].strip()] = found["value"]
                continue  # other comments, and header lines among the games, carry nothing to replay
            if length is None:
                found = _LENGTH.match(line)
                if not found:
                    self.fail(f"expected the match length (' 7 point match', 0 for money), got "
                              f"{shown(line.strip(), 60)}", n)
                length = read_number(found["length"], "the match length", n)
                continue
            found = _GAME.match(line)
            if found:
                self._end_game()
                if self.match is None:
                    self.match = self._new_match(length, metadata, n)
                self.game_line = n
                expect_score = True
                continue
            if expect_score:
                self._start_game(line, n)
                expect_score = False
                continue
            if self.game is None:
                self.fail(f"expected ' Game 1' after the match length, got {shown(line.strip(), 60)}", n)
            self._row(line, n)
        if length is None:
            self.fail("not a .mat file: no ' N point match' line", None)
        if expect_score:
            self.fail("the file ends after a game's title, before its score line", len(self.lines))
        if self.match is None:
            self.match = self._new_match(length, metadata, None)
        self._end_game(last=True)
        return self.match

    def _new_match(self, length: int, metadata: dict[str, str], line: int | None) -> MatchRecord:
        rules = {key: metadata.pop(key) for key in list(metadata) if key in RULE_KEYS}
        jacoby = rules.get("Jacoby", "Off").strip().lower() in ("on", "yes", "true", "1")
        crawford = rules.get("Crawford", "On").strip().lower() in ("on", "yes", "true", "1")
        if length and jacoby:
            jacoby = False  # the Jacoby rule does not apply to matches; XG still writes the setting
        try:
            return MatchRecord(("Player 1", "Player 2"), length, metadata=metadata, crawford=crawford, jacoby=jacoby)
        except BgaiError as error:
            self.fail(str(error), line)

    def _start_game(self, line: str, n: int) -> None:
        found = _score_line(line)
        if not found:
            self.fail(f"expected the score line ('Alice : 0     Bob : 0'), got {shown(line.strip(), 60)}", n)
        names = (found[0], found[2])
        if self.names is None:
            self.names = names
            self.record.players = names
        elif names != self.names:
            self.fail(f"the players are {_cut(self.names[0])} and {_cut(self.names[1])}, not {_cut(names[0])} and "
                      f"{_cut(names[1])}", n)
        score = (read_number(found[1], "a score", n), read_number(found[3], "a score", n))
        try:
            self.game = self.record.new_game(score)
        except BgaiError as error:
            self.fail(str(error), n)
        self.result = None

    def _row(self, line: str, n: int) -> None:
        row = _ROW.match(line)
        cells_text = row["cells"] if row else line
        cells = []
        pos = 0
        while pos < len(cells_text):
            if cells_text[pos].isspace():
                pos += 1
                continue
            found = _CELL.match(cells_text, pos)
            if not found:
                rest = cells_text[pos:].strip()
                self.fail(f"cannot read {shown(rest, 60)}: expected a roll and its play ('53: 8/3 6/3'), "
                          f"'Doubles => N', 'Takes', 'Drops' or 'Wins N points'", n)
            cells.append(found)
            pos = found.end()
            if len(cells) > 2:
                self.fail("a row has at most two cells (one per player), found more", n)
        if not cells:
            return
        if not row and not (len(cells) == 1 and cells[0]["wins"]):
            self.fail(f"a row of plays starts with its number ('12) ...'), got {shown(line.strip(), 60)}", n)
        if len(cells) == 2:
            seats = [0, 1]
        elif row:
            seats = [0 if cells[0].start() <= _LEFT_CELL_SLACK else 1]
        else:
            seats = [0 if len(line) - len(line.lstrip()) < _RIGHT_RESULT_COLUMN else 1]
        for seat, cell in zip(seats, cells):
            self._cell(seat, cell, n)

    def _cell(self, seat: int, cell: re.Match, n: int) -> None:
        game = self.current
        players = self.record.players
        name = _cut(players[seat])
        if self.result is not None:
            self.fail(f"{name}'s action comes after the game's result (line {self.result[2]})", n)
        if cell["wins"]:
            self.result = (seat, read_number(cell["points"], "the points won", n), n)
            return
        if game.result is not None:
            self.fail(f"the game is already over ({_cut(players[game.result.player])} won "
                      f"{_points(game.result.points)}), yet {name} acts", n)
        cube = read_number(cell["cube"], "the cube", n) if cell["double"] else None
        try:
            if cell["roll"]:
                dice = (int(cell["dice"][0]), int(cell["dice"][1]))
                play = " ".join(cell["play"].split())
                if game.turn is not None and not game.doubled and game.turn != seat:
                    raise BgaiError(f"it is {_cut(players[game.turn])}'s turn to roll, not {name}'s")
                if len(play) > _MAX_PLAY:
                    raise BgaiError(f"{name}'s play {shown(play, 60)} is longer than any play of four checker steps")
                try:
                    game.add_play(dice, play, player=seat)
                except IllegalMoveError as error:
                    reason = "" if "is not a legal play" in str(error) else f": {error}"
                    raise BgaiError(f"{name}'s {play or 'no play'} is not a legal play of {dice[0]}{dice[1]} in "
                                    f"this position ({game.position.position_id()}){reason}") from None
            elif cell["double"]:
                action = game.add_double(player=seat)
                if cube != action.cube:
                    raise BgaiError(f"{name} doubles to {action.cube}, not {cell['cube']}")
            elif cell["take"]:
                game.add_take(player=seat)
            elif cell["drop"]:
                game.add_drop(player=seat)
            else:
                raise BgaiError("beavers are not supported")
        except BgaiError as error:
            self.fail(self._named(str(error)), n)

    def _named(self, message: str) -> str:
        for seat in (0, 1):
            message = message.replace(f"seat {seat}", _cut(self.record.players[seat]))
        return message

    def _end_game(self, last: bool = False) -> None:
        game = self.game
        if game is None:
            return
        if self.result is None:
            if not game.is_over and not last:
                self.fail(f"game {game.number} ends without a result ('Wins N points')", self.game_line)
            return
        seat, points, n = self.result
        try:
            game.settle(seat, points)
        except BgaiError as error:
            self.fail(self._named(str(error)), n)
