"""bgai as a UBGI engine: the Universal Backgammon Interface, a line protocol on stdin/stdout for GUIs and duellers.

The protocol is the UBGI v0.1 draft, https://github.com/bungogood/bgci/blob/main/docs/ubgi-v0.1-spec.md, and beside
it the v0.2 draft (``docs/ubgi-v0.2-spec.md`` there; what changed is below): a
UCI-like handshake (``ubgi`` ... ``ubgiok``, ``isready``/``readyok``), ``setoption``, session context
(``newgame``, ``newsession``, ``setscore``, ``setcube``, ``setturn``), ``position``, ``dice`` and ``go``, answered
by ``bestmove``, ``bestcube`` or ``bestturn``, with ``info`` lines before them and ``error <code> <message>`` for
every command that cannot be carried out. ``Engine`` holds the state and answers one line at a time (no
subprocess needed to test it); ``main`` runs it on two streams (``bgai ubgi``).

A session, GUI lines marked ``>``::

    > ubgi
    id name bgai 0.1.0
    id author the bgai authors
    proto 0.2
    option name Plies type spin default 0 min 0 max 2
    ...
    ubgiok
    > isready
    readyok
    > position gnubgid 4HPwATDgc/ABMA
    > dice 3 1
    > go role chequer
    info role chequer depth 1 time_ms 4 eq 0.1670 pwin 0.5558 pgammon 0.1557 pbg 0.0063 pv 8/5 6/5
    bestmove 8/5 6/5

**What the draft leaves open, and how bgai reads it.**

* Perspective. A GNU Backgammon Position ID is from the side of the player on roll (as GNU Backgammon writes it:
  that player's checkers second in the key), and so is every answer: points in ``bestmove`` are numbered from the
  mover's side. ``p0``/``p1`` are seats: ``setturn`` says which seat is on roll (default ``p0``), and it is through
  it that ``setscore`` (seat order) and ``setcube ... owner p0|p1`` are told from the player on roll. An XGID is
  read whole: its board and turn (X is ``p0``), cube, score, match length, Crawford or Jacoby flag, and its dice
  when it has them, so one ``position xgid`` line sets the whole context.
* ``bestmove``: one ``from/to`` token per die used, in an order in which they can be played, ``bar`` and ``off``
  for the bar and bearing off, no ``*`` for hits and no ``(2)`` counts (``24/18 18/13``, ``8/5 8/5 6/3 6/3``);
  ``pass`` when the roll cannot be played (the v0.2 draft's word; v0.1 has none). It is the last line of the
  answer. ``bestmoveid`` (the option ``BestMoveId``, off by default because duellers that read until ``bestmove``
  take any other ``best...`` line for a protocol error) comes just before it: the Position ID after the play,
  seen from the opponent, now on roll, as a dueller's list of legal children has it.
* ``go role cube`` is the player on roll's decision before it rolls: ``bestcube double`` or ``bestcube nodouble``
  (``nodouble`` too when it may not double: the opponent owns the cube, the Crawford game, a cube at 64, and when
  it is too good to double). ``go role turn`` answers ``bestturn cube=<double|nodouble> moveid=<Position ID>``: the
  cube action, then the play of the dice given by ``dice`` (after a take, when it doubles: bgai's checker play is
  cubeless, so the play is the same). An extension, ``go role take``: the opponent's answer to the player on roll
  doubling now, with the cube as it stands before the double: ``bestcube take``, ``bestcube pass`` or, with the
  option ``Beavers`` in a money game, ``bestcube beaver``.
* ``go ... depth <n>`` counts the root, as the v0.2 draft's ``engine.ply`` does: depth 1 is bgai's 0-ply (every
  play judged by the network), depth 2 its 1-ply, depth 3 its 2-ply; ``info ... depth`` is told the same way. The
  option ``Plies`` is bgai's (and GNU Backgammon's) count, 0..2. ``movetime``, ``nodes`` and ``trials`` are read
  and ignored: bgai searches to a fixed depth and plays no rollouts here.
* ``info`` (one line before each answer): ``role``, ``depth``, ``time_ms``, then ``eq`` (cubeless equity after
  the play for checker play; cubeful equity of the best cube action for cube decisions, for money in units of the
  current stake, for a match its money equivalent), ``mwc`` (matches), ``pwin``/``pgammon``/``pbg`` (cubeless
  chances of winning, winning a gammon or more, a backgammon), and ``pv`` (the play) last. Every number is for the
  side the decision is for: the mover, the player on roll, or for ``take`` the player answering the double.
* The Crawford game. ``newsession type match length <N>`` applies the Crawford rule unless ``crawford off``.
  With exactly one side one point away, the first such score a decision is asked at in the session is the Crawford
  game (no one may double) and every other is post-Crawford: the game after the Crawford game always has another
  score, so no ``newgame`` bookkeeping is needed (a score below the last one starts a new match). An extension says
  it outright, for a GUI that joins a match after its Crawford game: ``setscore <p0> <p1> crawford`` or
  ``... postcrawford``; an XGID's own flag does the same.
* ``position`` clears the dice (so a forgotten ``dice`` is an error, not the last turn's roll); ``newgame``
  clears the position and dice and centres the cube; ``newsession`` resets the score too. Options stay.
* Errors: ``unknown_command``, ``bad_argument`` (malformed or impossible input: the message says what),
  ``missing_context`` (``go`` before a position, a checker play before the dice), ``unsupported_feature``, and
  ``internal`` should bgai itself fail. The engine never stops on bad input; only ``quit`` or the end of its
  input stop it.

**Compliance.** Level 2 of the draft's section 8: Level 0 (``ubgi``, ``isready``, ``newgame``, ``position
gnubgid``, ``dice``, ``go role chequer``, ``bestmove``, ``quit``), Level 1 (cube actions, the deterministic
options ``Seed`` and ``Deterministic``: bgai has no randomness, so it is always deterministic and ``Seed`` changes
nothing; ``bestmoveid``), and ``info`` lines. ``stop`` is accepted and does nothing: every search has finished
before the next line is read, so ``search_in_progress`` never arises. Not supported: ``EvalMode cubeful`` (bgai's
checker play is cubeless), ``Threads``, variants other than backgammon, time and node budgets, rollouts.

**v0.2.** The v0.2 draft keeps the handshake, ``newgame``, ``position``, ``dice``, ``bestmove`` and ``bestcube``, and
changes the rest: the handshake says ``proto 0.2`` (bgai's does, after ``id``; v0.1 GUIs read past it to
``ubgiok``); options become keys, ``set <key> <value>``, ``get <key>`` (answered ``value <key> <value>``) and
``keys`` (one ``key <name> <type> <value> [!] <description>`` line each, ``!`` marking a minor key); ``go``,
``go chequer``, ``go cube`` and ``go turn`` replace ``go role ...``, and ``bestturn`` carries the play,
``move=<play>``, instead of ``moveid=``; ``newsession``, ``setscore``, ``setcube``, ``setturn`` and ``bestmoveid``
are gone (an XGID carries the cube and score); the error codes are four, ``bad_command`` (an unknown or malformed
command), ``bad_value``, ``bad_state`` (``go`` without a position or dice) and ``unsupported``. bgai speaks both:
v0.1 until the GUI sends a command only v0.2 has (``set``, ``get``, ``keys``, ``go`` without ``role``), v0.2 from
then on (its error codes, bgai's own failures as ``bad_state``, ``bestturn ... move=``, no ``bestmoveid``); every
v0.1 command stays accepted, as the draft's section 8 allows. The keys (``KEYS``): ``engine.ply`` (1..3,
root-inclusive as the draft defines it: ``Plies`` + 1), ``game.jacoby``, ``game.beavers``, ``game.variant``
(backgammon), and the minor ``engine.seed`` and ``engine.deterministic``. A v0.2 session, GUI lines marked ``>``::

    > set engine.ply 2
    > get engine.ply
    value engine.ply 2
    > position gnubgid 4HPwATDgc/ABMA
    > dice 3 1
    > go turn
    info role turn depth 2 time_ms 41 eq 0.1142 pwin 0.5291 pgammon 0.1328 pbg 0.0054 pv 8/5 6/5
    bestturn cube=nodouble move=8/5 6/5
    > set engine.ply 7
    error bad_value engine.ply must be in 1..3, got 7
"""

from __future__ import annotations

import io
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from bgai._version import __version__
from bgai.core.errors import BgaiError, InvalidPositionError, shown

if TYPE_CHECKING:
    from bgai.formats.position import Position

NAME = f"bgai {__version__}"
AUTHOR = "the bgai authors"
#: The deepest lookahead, as ``bgai.eval.bot.MAX_PLIES`` (not imported from there: loading the bot module takes most of
#: a second, and the handshake lists it).
MAX_PLIES = 2
#: Longest command line read; the longest the protocol needs (an XGID) is under 100 characters.
MAX_LINE = 4096
ROLES = ("chequer", "cube", "turn", "take")
LIMITS = ("movetime", "depth", "nodes", "trials")
CUBE_VALUES = (1, 2, 4, 8, 16, 32, 64)
SEATS = {"p0": 0, "p1": 1}


class UbgiError(Exception):
    """A command that cannot be carried out: answered ``error <code> <message>``. ``code`` is v0.1's; ``syntax``
    tells v0.2's ``bad_command`` (a malformed command) from its ``bad_value`` (a value that cannot be)."""

    def __init__(self, code: str, message: str, syntax: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.syntax = syntax


def _syntax(message: str) -> UbgiError:
    """A malformed command: v0.1's ``bad_argument``, v0.2's ``bad_command``."""
    return UbgiError("bad_argument", message, syntax=True)


#: v0.1's error codes as the v0.2 draft's four (``bad_argument`` is ``bad_value``, or ``bad_command`` for a
#: malformed command; v0.2 has no code of its own for bgai's own failures).
V02_CODES = {"unknown_command": "bad_command", "missing_context": "bad_state", "unsupported_feature": "unsupported",
             "internal": "bad_state"}


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _integer(word: str, what: str, low: int | None = None, high: int | None = None) -> int:
    """A whole number written in ASCII digits, within ``low..high``."""
    if not re.fullmatch(r"-?[0-9]{1,9}", word, re.ASCII):
        raise UbgiError("bad_argument", f"{what} must be a whole number, got {shown(word)}")
    value = int(word)
    if (low is not None and value < low) or (high is not None and value > high):
        span = f"{low}.." + ("" if high is None else str(high))
        raise UbgiError("bad_argument", f"{what} must be in {span}, got {value}")
    return value


def _switch(word: str, what: str) -> bool:
    if word not in ("on", "off"):
        raise UbgiError("bad_argument", f"{what} is on or off, got {shown(word)}")
    return word == "on"


@dataclass(frozen=True)
class Option:
    """An option as the handshake lists it (UCI's form): ``kind`` spin, check or combo."""

    name: str
    kind: str
    default: object
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()

    def line(self) -> str:
        default = str(self.default).lower() if self.kind == "check" else self.default
        text = f"option name {self.name} type {self.kind} default {default}"
        if self.kind == "spin":
            text += f" min {self.low} max {self.high}"
        return text + "".join(f" var {choice}" for choice in self.choices)

    def parse(self, word: str):
        return _setting(word, self.name, self.kind, self.low, self.high, self.choices)


def _setting(word: str, name: str, kind: str, low, high, choices: tuple[str, ...]):
    """The value of option or key ``name`` written ``word``: ``kind`` "spin"/"int" (``low``..``high``),
    "check"/"bool" (true or false) or a choice among ``choices`` (v0.1's combo, v0.2's enum)."""
    if kind in ("spin", "int"):
        return _integer(word, name, low, high)
    if kind in ("check", "bool"):
        if word not in ("true", "false"):
            raise UbgiError("bad_argument", f"{name} is true or false, got {shown(word)}")
        return word == "true"
    if word not in choices:
        raise UbgiError("bad_argument", f"{name} is one of {', '.join(choices)}, got {shown(word)}")
    return word


@dataclass(frozen=True)
class Key:
    """A v0.2 key as ``keys`` lists it: ``kind`` int, bool or enum, ``low``/``high`` an int's bounds (``None``:
    unbounded, written ``*``), ``choices`` an enum's, ``minor`` the draft's ``!`` (not part of the engine's
    identity for ratings). The default a line shows is the engine's value now."""

    name: str
    kind: str
    description: str
    low: int | None = None
    high: int | None = None
    choices: tuple[str, ...] = ()
    minor: bool = False

    def show(self, value) -> str:
        return str(value).lower() if self.kind == "bool" else str(value)

    def line(self, value) -> str:
        if self.kind == "int":
            kind = "int " + ("*" if self.low is None else f"{self.low}..{self.high}")
        elif self.kind == "enum":
            kind = "enum " + "|".join(self.choices)
        else:
            kind = self.kind
        return f"key {self.name} {kind} {self.show(value)}{' !' if self.minor else ''} {self.description}"

    def parse(self, word: str):
        return _setting(word, self.name, self.kind, self.low, self.high, self.choices)


#: The v0.2 draft's keys bgai has (``set``, ``get``, ``keys``): its options under the draft's names.
KEYS = {key.name: key for key in (
    Key("engine.ply", "int", "root-inclusive checker-play depth (1 is bgai's 0-ply)", 1, MAX_PLIES + 1),
    Key("engine.seed", "int", "accepted and unused: bgai has no randomness", 0, 2**31 - 1, minor=True),
    Key("engine.deterministic", "bool", "always true", minor=True),
    Key("game.variant", "enum", "the game", choices=("backgammon",)),
    Key("game.jacoby", "bool", "money: gammons count single while the cube is centered"),
    Key("game.beavers", "bool", "money: bgai may beaver a double"),
)}


def _options(plies: int) -> dict[str, Option]:
    options = [
        Option("Plies", "spin", plies, 0, MAX_PLIES),
        Option("BestMoveId", "check", False),
        Option("Beavers", "check", False),
        Option("Deterministic", "check", True),
        Option("Seed", "spin", 0, 0, 2**31 - 1),
        Option("EvalMode", "combo", "cubeless", choices=("cubeless",)),
    ]
    return {option.name.lower(): option for option in options}


class Engine:
    """The UBGI engine: ``handle(line)`` carries out one command and returns its reply lines (also written to
    ``out``, flushed after each line, when given).

    ``bot_factory(plies)`` makes the bot (a ``bgai.eval.bot.Bot``) for a lookahead; it is called at the first
    ``isready`` or ``go`` that needs that lookahead, never during the handshake, and its bots are kept.
    ``plies``: the default lookahead (the option ``Plies``). ``running`` turns false at ``quit``.
    """

    def __init__(self, bot_factory: Callable[[int], object], *, plies: int = 0, out: TextIO | None = None) -> None:
        if not (isinstance(plies, int) and not isinstance(plies, bool) and 0 <= plies <= MAX_PLIES):
            raise BgaiError(f"plies must be an integer 0..{MAX_PLIES}, got {plies!r}")
        self.bot_factory = bot_factory
        self.out = out
        self.running = True
        self.options = _options(plies)
        self.values: dict[str, Any] = {key: option.default for key, option in self.options.items()}
        self._bots: dict[int, Any] = {}
        self.protocol = "0.1"  # the draft the GUI speaks, as far as it has shown: "0.2" from its first v0.2 command
        self.turn = 0
        self._new_session(length=0, jacoby=False, crawford_rule=True)

    # The state ----------------------------------------------------------------------------------------------

    def _new_session(self, length: int, jacoby: bool, crawford_rule: bool) -> None:
        self.length, self.jacoby, self.crawford_rule = length, jacoby, crawford_rule
        self.score = (0, 0)
        self.crawford_flag: bool | None = None  # said outright (setscore's extension, an XGID)
        self._crawford_score: tuple[int, int] | None = None  # the first 1-away score decided at
        self._new_game()

    def _new_game(self) -> None:
        self.position: Position | None = None
        self.dice: tuple[int, int] | None = None
        self.cube = 1
        self.owner: int | None = None  # the seat owning the cube; None: centered

    def _bot(self, plies: int | None = None):
        plies = self.values["plies"] if plies is None else plies
        if plies not in self._bots:
            self._bots[plies] = self.bot_factory(plies)
        return self._bots[plies]

    # Lines --------------------------------------------------------------------------------------------------

    def handle(self, line: str) -> list[str]:
        """Carry out one command line; its replies (none for most context commands)."""
        words = line.split()
        if not words:
            return []
        if words[0] in ("set", "get", "keys") or (words[0] == "go" and words[1:2] != ["role"]):
            self.protocol = "0.2"  # commands only the v0.2 draft has: answer in its terms from now on
        command = self.COMMANDS.get(words[0])
        try:
            if command is None:
                raise UbgiError("unknown_command", f"{shown(words[0])} is no UBGI command")
            replies = command(self, words[1:])
        except UbgiError as error:
            replies = [self._error(error)]
        except BgaiError as error:  # bgai's input errors say what was wrong
            replies = [self._error(UbgiError("bad_argument", str(error)))]
        except Exception as error:  # a bug of bgai's: answered, so the GUI goes on, and told on stderr too
            message = _one_line(f"{type(error).__name__}: {error}")
            print(f"bgai ubgi: internal error on {shown(line, 80)}: {message}", file=sys.stderr, flush=True)
            replies = [self._error(UbgiError("internal", message))]
        self.send(replies)
        return replies

    def _error(self, error: UbgiError) -> str:
        """The ``error <code> <message>`` line, with the code of the draft the GUI speaks."""
        code = error.code
        if self.protocol == "0.2":
            code = ("bad_command" if error.syntax else "bad_value") if code == "bad_argument" else V02_CODES[code]
        return f"error {code} {_one_line(error)}"

    def send(self, replies: list[str]) -> None:
        """Write ``replies`` to ``out`` (when given), flushing after each line, as the protocol asks."""
        if self.out is not None:
            for reply in replies:
                self.out.write(reply + "\n")
                self.out.flush()

    # Handshake ----------------------------------------------------------------------------------------------

    def _ubgi(self, args: list[str]) -> list[str]:
        self._no_arguments("ubgi", args)
        return [f"id name {NAME}", f"id author {AUTHOR}", "proto 0.2", *(o.line() for o in self.options.values()),
                "ubgiok"]

    def _isready(self, args: list[str]) -> list[str]:
        self._no_arguments("isready", args)
        try:
            self._bot()
        except Exception as error:  # still ready for the next command: the error says why there is no bot
            return [self._error(UbgiError("internal", f"cannot load the bot: {error}")), "readyok"]
        return ["readyok"]

    def _quit(self, args: list[str]) -> list[str]:
        self._no_arguments("quit", args)
        self.running = False
        return []

    def _stop(self, args: list[str]) -> list[str]:
        self._no_arguments("stop", args)
        return []  # every search has already ended: commands are read one at a time

    def _setoption(self, args: list[str]) -> list[str]:
        if len(args) < 4 or args[0] != "name" or "value" not in args[2:]:
            raise _syntax("expected setoption name <Name> value <Value>")
        split = args.index("value", 2)
        name, value = " ".join(args[1:split]), " ".join(args[split + 1:])
        key = name.lower()
        if key == "threads":
            raise UbgiError("unsupported_feature", "Threads: bgai evaluates in one thread")
        if key not in self.options:
            raise UbgiError("bad_argument", f"no option {shown(name)}; the options are "
                                            f"{', '.join(o.name for o in self.options.values())}")
        if not value:
            raise UbgiError("bad_argument", f"setoption name {name} needs a value")
        option = self.options[key]
        if key == "evalmode" and value == "cubeful":
            raise UbgiError("unsupported_feature", "EvalMode cubeful: bgai's checker play is cubeless")
        parsed = option.parse(value)
        if key == "deterministic" and not parsed:
            raise UbgiError("unsupported_feature", "Deterministic false: bgai has no randomness to turn on")
        self.values[key] = parsed
        return []

    # v0.2's keys ---------------------------------------------------------------------------------------------

    def _keys(self, args: list[str]) -> list[str]:
        self._no_arguments("keys", args)
        return [key.line(self._key_value(key)) for key in KEYS.values()]

    def _get(self, args: list[str]) -> list[str]:
        if len(args) != 1:
            raise _syntax("expected get <key>")
        key = self._key(args[0])
        return [f"value {key.name} {key.show(self._key_value(key))}"]

    def _set(self, args: list[str]) -> list[str]:
        if len(args) != 2:
            raise _syntax("expected set <key> <value>")
        key = self._key(args[0])
        if key.name == "game.variant" and args[1] != "backgammon":
            raise UbgiError("unsupported_feature", f"game.variant {shown(args[1])}: bgai plays backgammon only")
        value = key.parse(args[1])
        if key.name == "engine.ply":
            self.values["plies"] = value - 1
        elif key.name == "game.jacoby":
            self.jacoby = value
        elif key.name == "game.beavers":
            self.values["beavers"] = value
        elif key.name == "engine.seed":
            self.values["seed"] = value
        elif key.name == "engine.deterministic" and not value:
            raise UbgiError("unsupported_feature", "engine.deterministic false: bgai has no randomness to turn on")
        return []

    @staticmethod
    def _key(name: str) -> Key:
        if name not in KEYS:
            raise UbgiError("unsupported_feature", f"no key {shown(name)}; the keys are {', '.join(KEYS)}")
        return KEYS[name]

    def _key_value(self, key: Key):
        return {"engine.ply": self.values["plies"] + 1, "engine.seed": self.values["seed"],
                "engine.deterministic": True, "game.variant": "backgammon", "game.jacoby": self.jacoby,
                "game.beavers": self.values["beavers"]}[key.name]

    # Context ------------------------------------------------------------------------------------------------

    def _newgame(self, args: list[str]) -> list[str]:
        self._no_arguments("newgame", args)
        self._new_game()
        return []

    def _newsession(self, args: list[str]) -> list[str]:
        pairs = self._pairs("newsession", args, ("type", "length", "jacoby", "crawford"))
        kind = pairs.get("type")
        if kind not in ("money", "match"):
            raise _syntax("expected newsession type <money|match> [length <N>] [jacoby <on|off>] "
                                            "[crawford <on|off>]")
        jacoby = _switch(pairs.get("jacoby", "off"), "jacoby")
        crawford_rule = _switch(pairs.get("crawford", "on"), "crawford")
        if kind == "money":
            if "length" in pairs:
                raise UbgiError("bad_argument", "a money session has no length")
            length = 0
        else:
            if "length" not in pairs:
                raise UbgiError("bad_argument", "a match session needs its length: newsession type match length <N>")
            from bgai.core.match import kazaross_xg2

            length = _integer(pairs["length"], "match length", 1, kazaross_xg2().length)
            if jacoby:
                raise UbgiError("bad_argument", "the Jacoby rule is for money sessions, not matches")
        self._new_session(length, jacoby, crawford_rule)
        return []

    def _setscore(self, args: list[str]) -> list[str]:
        if len(args) not in (2, 3) or (len(args) == 3 and args[2] not in ("crawford", "postcrawford")):
            raise _syntax("expected setscore <p0> <p1> (points won by each seat), optionally "
                                            "followed by crawford or postcrawford")
        score = (_integer(args[0], "p0's score", 0), _integer(args[1], "p1's score", 0))
        if self.length and max(score) >= self.length:
            raise UbgiError("bad_argument", f"scores must be 0..{self.length - 1} in a match to {self.length}, "
                                            f"got {score[0]} {score[1]}")
        if score[0] < self.score[0] or score[1] < self.score[1]:
            self._crawford_score = None  # scores only grow in a match: this is a new one
        self.score = score
        self.crawford_flag = None if len(args) == 2 else args[2] == "crawford"
        return []

    def _setcube(self, args: list[str]) -> list[str]:
        pairs = self._pairs("setcube", args, ("value", "owner"))
        if set(pairs) != {"value", "owner"}:
            raise _syntax("expected setcube value <N> owner <center|p0|p1>")
        value = _integer(pairs["value"], "cube value", 1, CUBE_VALUES[-1])
        if value not in CUBE_VALUES:
            raise UbgiError("bad_argument", f"the cube is 1, 2, 4, ..., 64, got {value}")
        owner = pairs["owner"]
        if owner != "center" and owner not in SEATS:
            raise UbgiError("bad_argument", f"the cube owner is center, p0 or p1, got {shown(owner)}")
        if owner == "center" and value != 1:
            raise UbgiError("bad_argument", f"a centered cube is at 1 (once turned, the cube has an owner), "
                                            f"got {value}")
        self.cube, self.owner = value, SEATS.get(owner)
        return []

    def _setturn(self, args: list[str]) -> list[str]:
        if len(args) != 1 or args[0] not in SEATS:
            raise _syntax("expected setturn <p0|p1>")
        self.turn = SEATS[args[0]]
        return []

    def _position(self, args: list[str]) -> list[str]:
        from bgai.formats.position import Position

        if len(args) != 2:
            raise _syntax("expected position gnubgid <Position ID> or position xgid <XGID>")
        kind, text = args
        if kind == "gnubgid":
            position = Position.from_position_id(text)
            self.position, self.dice = position, None
        elif kind == "xgid":
            self._read_xgid(text)
        else:
            raise UbgiError("unsupported_feature", f"position {shown(kind)}: bgai reads gnubgid and xgid")
        return []

    def _read_xgid(self, text: str) -> None:
        """Board, turn, cube, score, match and dice from an XGID (X is p0), all checked before any is kept."""
        from bgai.formats.position import Position
        from bgai.formats.xgid import xgid_context, xgid_dice, xgid_fields

        position = Position.from_xgid(text)
        cube, _, _ = xgid_context(text)  # checks the numeric fields, the score against the length
        fields = xgid_fields(text)
        cube_at, turn = int(fields[2]), int(fields[3])
        score, flag, length = (int(fields[5]), int(fields[6])), int(fields[7]), int(fields[8])
        try:
            roll = xgid_dice(text)
        except InvalidPositionError as error:
            raise UbgiError("bad_argument", str(error)) from None
        dice = roll if isinstance(roll, tuple) else None  # (not rolled yet, or doubled, beavered, raccooned)
        if (cube == 1) != (cube_at == 0):
            raise UbgiError("bad_argument", "an XGID's cube is centered (cube position 0) exactly when it is at 1")
        self._new_session(length, jacoby=length == 0 and bool(flag & 1), crawford_rule=True)
        self.crawford_flag = bool(flag) if length else None
        self.score = score
        self.turn = 0 if turn == 1 else 1
        self.cube, self.owner = cube, {0: None, 1: 0, -1: 1}[cube_at]
        self.position, self.dice = position, dice

    def _dice(self, args: list[str]) -> list[str]:
        if len(args) != 2:
            raise _syntax(f"expected dice <d1> <d2>, each 1..6, got {shown(' '.join(args))}")
        if not all(re.fullmatch(r"[1-6]", d, re.ASCII) for d in args):
            raise UbgiError("bad_argument", f"expected dice <d1> <d2>, each 1..6, got {shown(' '.join(args))}")
        self.dice = (int(args[0]), int(args[1]))
        return []

    # Decisions ----------------------------------------------------------------------------------------------

    def _go(self, args: list[str]) -> list[str]:
        role, rest = "chequer", args
        if args and args[0] == "role":
            if len(args) < 2 or args[1] not in ROLES:
                raise _syntax(f"expected go role <{'|'.join(ROLES)}>, got "
                                                f"{shown(' '.join(args[1:2]))}")
            role, rest = args[1], args[2:]
        elif args and args[0] in ROLES:  # the v0.2 draft's go <role>
            role, rest = args[0], args[1:]
        limits = self._pairs("go", rest, LIMITS)
        plies = self.values["plies"]
        if "depth" in limits:
            plies = _integer(limits["depth"], "depth", 1, MAX_PLIES + 1) - 1
        for key in ("movetime", "nodes", "trials"):
            if key in limits:
                _integer(limits[key], key, 0)
        if self.position is None:
            raise UbgiError("missing_context", f"go role {role} needs a position first (position gnubgid <ID>)")
        if self.position.is_game_over():
            raise UbgiError("bad_argument", "the game is over in this position: there is nothing to decide")
        if role in ("chequer", "turn") and self.dice is None:
            raise UbgiError("missing_context", f"go role {role} needs the dice first (dice <d1> <d2>)")
        bot = self._bot(plies)
        started = time.perf_counter()
        if role == "chequer":
            return self._chequer(bot, plies, started)
        if role == "take":
            return self._take(bot, plies, started)
        decision = self._cube_decision(bot)
        cube = "double" if decision.should_double else "nodouble"
        if role == "cube":
            return [self._cube_info(bot, role, plies, started, decision), f"bestcube {cube}"]
        move = bot.choose_move(self.position, self.dice)
        info = self._cube_info(bot, role, plies, started, decision)
        answer = f"move={play_text(move)}" if self.protocol == "0.2" else f"moveid={move.after.position_id()}"
        return [f"{info} pv {play_text(move)}", f"bestturn cube={cube} {answer}"]

    def _chequer(self, bot, plies: int, started: float) -> list[str]:
        best = bot.hint(self.position, self.dice)[0]
        chances = best.evaluation
        play = play_text(best.move)
        info = (f"info role chequer depth {plies + 1} time_ms {_ms(started)} eq {best.equity:.4f} "
                f"pwin {chances.win:.4f} pgammon {chances.win_gammon:.4f} pbg {chances.win_backgammon:.4f} "
                f"pv {play}")
        replies = [info]
        if self.values["bestmoveid"] and self.protocol == "0.1":
            replies.append(f"bestmoveid {best.move.after.position_id()}")
        return replies + [f"bestmove {play}"]

    def _take(self, bot, plies: int, started: float) -> list[str]:
        decision = self._cube_decision(bot)
        if not decision.may_double:
            raise UbgiError("bad_argument", f"the player on roll may not double here ({decision.action})")
        answer = "beaver" if decision.beaver else "take" if decision.should_take else "pass"
        # The taker's side: the doubler's equities negated (money), or its match-winning chances' complement.
        worst = min(decision.double_take, decision.double_pass)
        info = f"info role take depth {plies + 1} time_ms {_ms(started)}"
        if decision.match is None:
            info += f" eq {-worst:.4f}"
        else:
            info += f" eq {-min(decision.emg[1:]):.4f} mwc {1 - worst:.4f}"
        return [info, f"bestcube {answer}"]

    def _cube_decision(self, bot):
        from bgai.core.cube import CubeOwner

        owner = CubeOwner.of_seat(self.owner, self.turn)
        money = self.length == 0
        return bot.cube_decision(self.position, self.cube, owner, self._match_score(), jacoby=money and self.jacoby,
                                 beavers=money and self.values["beavers"])

    def _cube_info(self, bot, role: str, plies: int, started: float, decision) -> str:
        chances = bot.evaluate(self.position)
        values = [decision.no_double]
        if decision.may_double:
            values.append(min(decision.double_take, decision.double_pass))
        best = max(values)
        info = f"info role {role} depth {plies + 1} time_ms {_ms(started)}"
        if decision.match is None:
            info += f" eq {best:.4f}"
        else:
            emg = decision.emg[0] if not decision.may_double else max(decision.emg[0], min(decision.emg[1:]))
            info += f" eq {emg:.4f} mwc {best:.4f}"
        return (f"{info} pwin {chances.win:.4f} pgammon {chances.win_gammon:.4f} "
                f"pbg {chances.win_backgammon:.4f}")

    def _match_score(self):
        """The match score from the player on roll's side (``MatchScore``), or ``None`` for money."""
        from bgai.core.match import MatchScore

        if not self.length:
            return None
        if max(self.score) >= self.length:
            raise UbgiError("bad_argument", f"scores must be 0..{self.length - 1} in a match to {self.length}, "
                                            f"got {self.score[0]} {self.score[1]}")
        score = self.score if self.turn == 0 else self.score[::-1]
        one_away = sum(self.length - s == 1 for s in score)
        if one_away != 1:
            return MatchScore.from_score(self.length, score)
        if not self.crawford_rule:
            crawford = False
        elif self.crawford_flag is not None:
            crawford = self.crawford_flag
        else:
            if self._crawford_score is None:
                self._crawford_score = self.score
            crawford = self.score == self._crawford_score
        return MatchScore(self.length, score, crawford=crawford, post_crawford=not crawford)

    # Helpers ------------------------------------------------------------------------------------------------

    @staticmethod
    def _no_arguments(command: str, args: list[str]) -> None:
        if args:
            raise _syntax(f"{command} takes no arguments, got {shown(' '.join(args))}")

    @staticmethod
    def _pairs(command: str, args: list[str], keys: tuple[str, ...]) -> dict[str, str]:
        """``key value`` pairs, each key one of ``keys`` at most once."""
        if len(args) % 2:
            raise _syntax(f"{command}: {shown(args[-1])} has no value")
        pairs: dict[str, str] = {}
        for key, value in zip(args[::2], args[1::2]):
            if key not in keys:
                raise _syntax(f"{command} takes {', '.join(keys)}; got {shown(key)}")
            if key in pairs:
                raise _syntax(f"{command}: {key} given twice")
            pairs[key] = value
        return pairs

    COMMANDS = {
        "ubgi": _ubgi, "isready": _isready, "quit": _quit, "stop": _stop, "setoption": _setoption,
        "newgame": _newgame, "newsession": _newsession, "setscore": _setscore, "setcube": _setcube,
        "setturn": _setturn, "position": _position, "dice": _dice, "go": _go, "set": _set, "get": _get,
        "keys": _keys,
    }


def _ms(started: float) -> int:
    return round(1000 * (time.perf_counter() - started))


def play_text(move) -> str:
    """A play as UBGI writes it: a ``from/to`` token per die, ``bar``/``off``, no hit marks; ``pass`` for none."""
    def name(point: int) -> str:
        return "bar" if point == 25 else "off" if point <= 0 else str(point)

    steps = move.checker_steps()
    return " ".join(f"{name(src)}/{name(dst)}" for src, dst, _ in steps) if steps else "pass"


def _read_line(stream: TextIO) -> str | None:
    """The next line (``None`` at the end), or ``""`` for one longer than ``MAX_LINE``, read to its end so that
    memory stays bounded whatever comes in."""
    line = stream.readline(MAX_LINE + 1)
    if not line:
        return None
    if len(line) > MAX_LINE and not line.endswith("\n"):
        while True:
            rest = stream.readline(MAX_LINE)
            if not rest or rest.endswith("\n"):
                return ""
    return line


def main(stdin: TextIO | None = None, stdout: TextIO | None = None, *, plies: int = 0,
         checkpoint: str | None = None, bot_factory: Callable[[int], object] | None = None) -> int:
    """Run the engine on ``stdin``/``stdout`` (default the process's, as UTF-8) until ``quit`` or the end of the
    input. ``bot_factory(plies)`` makes the bots; by default ``load_bot(checkpoint, plies=..., cube_plies=...)``:
    a GUI or dueller gets every answer at the depth it asked for, cube decisions too (not the deeper cube
    ``bgai.eval.bot.CUBE_PLIES`` gives a 1-ply bot elsewhere)."""
    if checkpoint is not None and not os.path.isfile(checkpoint):
        raise BgaiError(f"no checkpoint file {checkpoint}")
    if bot_factory is None:
        def bot_factory(depth: int):
            from bgai.eval.bot import load_bot

            return load_bot(checkpoint, plies=depth, cube_plies=depth)  # the depth asked, the cube's too
    engine = Engine(bot_factory, plies=plies)  # (checks plies before any stream is touched)
    wrapped = []  # the process's streams as UTF-8 text, let go of (not closed) at the end
    if stdin is None:
        sys.stdout.flush()
        stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        wrapped.append(stdin)
    if stdout is None:
        stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="replace", line_buffering=True)
        wrapped.append(stdout)
    engine.out = stdout
    try:
        while engine.running:
            line = _read_line(stdin)
            if line is None:
                break
            if line:
                engine.handle(line)
            else:
                engine.send([f"error bad_argument a command is one line of at most {MAX_LINE} characters"])
    except (KeyboardInterrupt, BrokenPipeError):
        pass  # the GUI went away
    finally:
        for stream in wrapped:
            try:
                stream.flush()
                stream.detach()
            except (OSError, ValueError):
                pass  # a pipe already closed by the GUI
    return 0
