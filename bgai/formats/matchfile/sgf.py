"""GNU Backgammon's SGF for backgammon (``GM[6]``, the Smart Game Format's backgammon variant: red-bean.com/sgf).

A file is one game tree per game: ``(;FF[4]GM[6]MI[length:7][game:0][ws:0][bs:0]PW[Alice]PB[Bob]RU[Crawford]
RE[W+2] ;B[53addi] ;W[double] ;B[take] ...)``. The root node's ``MI`` gives the match length (0: money) and the
score at the start of the game (``ws`` White's, ``bs`` Black's), ``PW``/``PB`` the players, ``RU`` the rules
(``Crawford``, ``Crawford:CrawfordGame`` in the Crawford game, ``Jacoby``), ``RE`` the result (``W+2``: White
wins 2 points; a trailing ``R``: by resignation). White is seat 0, Black seat 1.

A move is ``W[...]`` or ``B[...]``: ``double``, ``take``, ``drop``, or the dice followed by one letter pair per
checker step, from and to. Letters ``a``..``x`` are points: ``a`` is White's 1 point and Black's 24 point; ``y``
is the bar and ``z`` off (borne off). ``B[61yg]`` is Black's bar/18. Analysis properties (GNU Backgammon's ``A``,
``DA``, ``LU``, marks ...) are ignored; of a tree's variations the first (main) line is read.

    >>> from bgai.formats.matchfile import MatchRecord, read_sgf, write_sgf
    >>> match = MatchRecord(("Alice", "Bob"), 3)
    >>> game = match.new_game()
    >>> _ = game.add_play("61", "13/7 8/7", player=1)
    >>> _ = game.add_play("62", "13/7 13/11")
    >>> text = write_sgf(match)
    >>> print(text)
    (;FF[4]GM[6]CA[UTF-8]AP[bgai]MI[length:3][game:0][ws:0][bs:0]PW[Alice]PB[Bob]RU[Crawford]
    ;B[61lrqr]
    ;W[62mgmk])
    <BLANKLINE>
    >>> read_sgf(text) == match
    True
"""

from __future__ import annotations

import bisect
import re
from pathlib import Path

from bgai.core.errors import BgaiError, IllegalMoveError, MatchFileError, shown
from bgai.formats.matchfile.mat import _cut, check_size, read_number, read_source
from bgai.formats.matchfile.record import CheckerPlay, Double, Drop, GameRecord, MatchRecord, Resign, Take, Win

# Root properties kept as the record's metadata, under the names .mat headers use.
METADATA_PROPERTIES = {"EV": "Event", "PC": "Site", "RO": "Round", "DT": "EventDate", "AN": "Annotator",
                       "GC": "Comment", "SO": "Source", "US": "Transcriber"}
_SETUP = {"AE", "AB", "AW", "PL", "DI"}
# Linear patterns (see bgai.formats.matchfile.mat); ASCII, so that a digit is 0-9.
_MOVE = re.compile(r"^([1-6])([1-6])((?:[a-z]{2}){0,4})$")
_RESULT = re.compile(r"^\s*([WB])\+(\d+)(R?)\s*$", re.IGNORECASE | re.ASCII)


class _Node:
    __slots__ = ("line", "props")

    def __init__(self, line: int) -> None:
        self.line = line
        self.props: dict[str, tuple[list[str], int]] = {}

    def get(self, key: str, default=None):
        return self.props[key][0][0] if key in self.props else default


class _Tree:
    __slots__ = ("line", "nodes", "children")

    def __init__(self, line: int) -> None:
        self.line = line
        self.nodes: list[_Node] = []
        self.children: list[_Tree] = []

    def main_line(self) -> list[_Node]:
        nodes, tree = list(self.nodes), self
        while tree.children:
            tree = tree.children[0]
            nodes += tree.nodes
        return nodes


def _parse(text: str) -> list[_Tree]:
    """The game trees of an SGF text (the grammar of SGF FF[4]: trees of ;-nodes of PROP[value]...)."""
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def line(i: int) -> int:
        return bisect.bisect_right(starts, i)

    trees: list[_Tree] = []
    stack: list[_Tree] = []
    node: _Node | None = None
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "(":
            tree = _Tree(line(i))
            (stack[-1].children if stack else trees).append(tree)
            stack.append(tree)
            node = None
            i += 1
        elif c == ")":
            if not stack:
                raise MatchFileError("')' closes no game tree", line(i))
            stack.pop()
            node = None
            i += 1
        elif c == ";":
            if not stack:
                raise MatchFileError("a node (';') outside any game tree '(...)'", line(i))
            if stack[-1].children:
                raise MatchFileError("a node after the variations of a game tree", line(i))
            node = _Node(line(i))
            stack[-1].nodes.append(node)
            i += 1
        elif c.isalpha():
            j = i
            while j < n and text[j].isalpha():
                j += 1
            key = text[i:j]
            if node is None:
                raise MatchFileError(f"property {_cut(key)} outside a node (nodes start with ';')", line(i))
            values = []
            at = line(i)
            while True:
                while j < n and text[j].isspace():
                    j += 1
                if j >= n or text[j] != "[":
                    break
                value, j = _value(text, j + 1, line)
                values.append(value)
            if not values:
                raise MatchFileError(f"property {_cut(key)} has no value ('{_cut(key)}[...]')", at)
            if not key.isupper():  # FF[3] allowed lower-case letters in names; they do not count
                key = "".join(ch for ch in key if ch.isupper())
            node.props[key] = (values, at)
            i = j
        else:
            raise MatchFileError(f"unexpected {c!r} (SGF is made of '(', ';', PROPERTY[value] and ')')", line(i))
    if stack:
        raise MatchFileError("the file ends inside a game tree (a ')' is missing)", line(n - 1) if n else 1)
    return trees


def _value(text: str, i: int, line) -> tuple[str, int]:
    out = []
    start = i
    while i < len(text):
        c = text[i]
        if c == "\\":
            if i + 1 < len(text) and text[i + 1] == "\n":  # a soft line break
                i += 2
                continue
            if i + 1 < len(text):
                out.append(text[i + 1])
            i += 2
        elif c == "]":
            return "".join(out), i + 1
        else:
            out.append(c)
            i += 1
    raise MatchFileError("a property value is not closed (a ']' is missing)", line(start))


def _point(letter: str, seat: int) -> int:
    """A move letter in the mover's own numbering: 25 bar, 0 off."""
    if letter == "y":
        return 25
    if letter == "z":
        return 0
    index = ord(letter) - ord("a")
    return index + 1 if seat == 0 else 24 - index


def _letter(point: int, seat: int) -> str:
    if point >= 25:
        return "y"
    if point <= 0:
        return "z"
    return chr(ord("a") + (point - 1 if seat == 0 else 24 - point))


def read_sgf(source: str | Path) -> MatchRecord:
    """The match of a GNU Backgammon SGF file (its text, or a path, as ``read_mat`` takes them): one game tree per
    game, each replayed through the rules. Anything malformed or illegal raises ``MatchFileError`` naming the line,
    as does a file over ``MAX_MATCH_FILE_BYTES``."""
    return parse_sgf(read_source(source))


def parse_sgf(text: str) -> MatchRecord:
    """The match of an SGF text; unlike ``read_sgf``, never a path."""
    check_size(text)
    trees = _parse(text)
    if not trees:
        raise MatchFileError("no game tree: an SGF file starts with '(;'")
    match: MatchRecord | None = None
    for number, tree in enumerate(trees, 1):
        nodes = tree.main_line()
        if not nodes:
            raise MatchFileError(f"game tree {number} has no node", tree.line)
        match = _read_game(match, nodes, number, last=number == len(trees))
    assert match is not None  # (at least one tree)
    return match


def _read_game(match: MatchRecord | None, nodes: list[_Node], number: int, last: bool) -> MatchRecord:
    root = nodes[0]
    if root.get("GM", "6").strip() != "6":
        raise MatchFileError(f"GM[{shown(root.get('GM'), 20)}] is not backgammon (GM[6])", root.props["GM"][1])
    info = {}
    if "MI" in root.props:
        values, at = root.props["MI"]
        for value in values:
            tag, _, content = value.partition(":")
            info[tag.strip().lower()] = (content.strip(), at)

    def number_of(tag: str, default: int) -> int:
        if tag not in info:
            return default
        content, at = info[tag]
        if not (content.isascii() and content.isdigit()):
            raise MatchFileError(f"MI[{tag}:...] is not a whole number: {shown(content, 20)}", at)
        return read_number(content, f"MI[{tag}:...]", at)

    length = number_of("length", 0)
    score = (number_of("ws", 0), number_of("bs", 0))
    names = (root.get("PW", "White").strip() or "White", root.get("PB", "Black").strip() or "Black")
    rules = {part.strip().lower() for part in root.get("RU", "").split(":")}
    for key in ("CV", "CO"):
        if key in root.props and root.get(key).strip().lower() not in ("1", "c", "centred", "centered"):
            raise MatchFileError(f"{key}[{shown(root.get(key), 20)}]: games starting with a turned cube are not "
                                 f"supported", root.props[key][1])
    try:
        if match is None:
            metadata = {label: root.get(key) for key, label in METADATA_PROPERTIES.items() if key in root.props}
            match = MatchRecord(names, length, metadata=metadata, crawford="crawford" in rules,
                                jacoby="jacoby" in rules)
        elif (names, length) != (match.players, match.length):
            raise BgaiError(f"game {number} is between {_cut(names[0])} and {_cut(names[1])} to {length}, not "
                            f"between {_cut(match.players[0])} and {_cut(match.players[1])} to {match.length} as "
                            f"game 1")
        one_away = length > 0 and any(length - s == 1 for s in score)
        crawford = True if "crawfordgame" in rules else (False if one_away and match.crawford else None)
        game = match.new_game(score, crawford=crawford)
    except BgaiError as error:
        raise MatchFileError(_named(str(error), match or names), root.line) from None
    for node in nodes:
        for key in _SETUP:
            if key in node.props:
                raise MatchFileError(f"{key}[...]: set-up positions are not supported, only games from the start",
                                     node.props[key][1])
        for key in ("W", "B"):
            if key in node.props:
                values, at = node.props[key]
                _move(game, match, 0 if key == "W" else 1, values[0], at)
    if "RE" in root.props:
        result, at = root.props["RE"]
        found = _RESULT.match(result[0])
        if not found:
            raise MatchFileError(f"RE[{shown(result[0], 20)}] is not a result such as W+2 or B+1R", at)
        points = read_number(found[2], "RE[...]'s points", at)
        try:
            game.settle(0 if found[1].upper() == "W" else 1, points)
        except BgaiError as error:
            raise MatchFileError(_named(str(error), match.players), at) from None
    elif not game.is_over and not last:
        raise MatchFileError(f"game {number} ends unfinished and without a result (RE[...])", root.line)
    return match


def _named(message: str, players) -> str:
    names = players.players if isinstance(players, MatchRecord) else players
    for seat in (0, 1):
        message = message.replace(f"seat {seat}", _cut(names[seat]))
    return message


def _move(game: GameRecord, match: MatchRecord, seat: int, value: str, line: int) -> None:
    text = value.strip().lower()
    name = _cut(match.players[seat])
    try:
        if game.is_over:
            raise BgaiError(f"the game is already over ({game.result}), yet {name} moves")
        if text == "double":
            if game.doubled:
                raise BgaiError("beavers are not supported")
            game.add_double(player=seat)
        elif text == "take":
            game.add_take(player=seat)
        elif text in ("drop", "pass"):
            game.add_drop(player=seat)
        else:
            found = _MOVE.match(text)
            if not found:
                raise BgaiError(f"cannot read the move {shown(value, 60)}: expected dice and letter pairs (W[31hefe]), "
                                f"double, take or drop")
            dice = (int(found[1]), int(found[2]))
            pairs = found[3]
            play = " ".join(f"{_point(pairs[k], seat)}/{_point(pairs[k + 1], seat)}" for k in range(0, len(pairs), 2))
            if game.turn is not None and not game.doubled and game.turn != seat:
                raise BgaiError(f"it is {_cut(match.players[game.turn])}'s turn to roll, not {name}'s")
            try:
                game.add_play(dice, play, player=seat)
            except IllegalMoveError as error:
                reason = "" if "is not a legal play" in str(error) else f": {error}"
                raise BgaiError(f"{name}'s {play or 'no play'} ({value}) is not a legal play of {dice[0]}{dice[1]} "
                                f"in this position ({game.position.position_id()}){reason}") from None
    except BgaiError as error:
        raise MatchFileError(_named(str(error), match), line) from None


def _escape(value: str) -> str:
    return str(value).replace("\\", "\\\\").replace("]", "\\]")


def write_sgf(record: MatchRecord, application: str = "bgai") -> str:
    """GNU Backgammon-style SGF of ``record``, one game tree per game (``read_sgf`` reads it back to an equal
    record; of the metadata, only the keys of ``METADATA_PROPERTIES`` have an SGF property and are written)."""
    reverse = {label: key for key, label in METADATA_PROPERTIES.items()}
    trees = []
    for index, game in enumerate(record.games):
        root = [f"FF[4]GM[6]CA[UTF-8]AP[{_escape(application)}]",
                f"MI[length:{record.length}][game:{index}][ws:{game.score[0]}][bs:{game.score[1]}]",
                f"PW[{_escape(record.players[0])}]PB[{_escape(record.players[1])}]"]
        if index == 0:
            root += [f"{reverse[key]}[{_escape(value)}]" for key, value in record.metadata.items() if key in reverse]
        rules = [name for name, on in (("Crawford", record.length and record.crawford),
                                       ("CrawfordGame", game.crawford), ("Jacoby", record.jacoby)) if on]
        if rules:
            root.append(f"RU[{':'.join(rules)}]")
        if game.result is not None:
            resigned = any(isinstance(a, Resign) for a in game.actions)
            root.append(f"RE[{'WB'[game.result.player]}+{game.result.points}{'R' if resigned else ''}]")
        nodes = [";" + "".join(root)]
        for action in game.actions:
            colour = "WB"[action.player]
            if isinstance(action, CheckerPlay):
                pairs = "".join(_letter(src, action.player) + _letter(dst, action.player)
                                for src, dst, _ in action.move.checker_steps())
                nodes.append(f";{colour}[{action.dice[0]}{action.dice[1]}{pairs}]")
            elif isinstance(action, Double):
                nodes.append(f";{colour}[double]")
            elif isinstance(action, Take):
                nodes.append(f";{colour}[take]")
            elif isinstance(action, Drop):
                nodes.append(f";{colour}[drop]")
            elif not isinstance(action, (Resign, Win)):
                raise TypeError(f"no SGF node for {action!r}")
        trees.append("(" + "\n".join(nodes) + ")")
    return "\n".join(trees) + "\n"
