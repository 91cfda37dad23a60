"""The match record: players, rules, games, and each game's actions, replayed through the rules as they are added.

Seats: seat 0 is the first player of a record (the left column of a .mat file, White in SGF), seat 1 the second.
A game is a list of actions, each by one seat:

* ``CheckerPlay(player, dice, move)``: a roll and its play (``move`` a legal ``bgai.core.notation.Move``; its ``str``
  is the play in standard notation, ``"no play"`` when no checker can move);
* ``Double(player, cube)``: the player on roll doubles (or redoubles) to ``cube`` before rolling;
* ``Take(player)`` / ``Drop(player)``: its opponent's answer;
* ``Resign(player, level)``: ``player`` resigns a single game (``level`` 1), a gammon (2) or a backgammon (3), and
  its opponent accepts (.mat and GNU Backgammon's SGF record only accepted resignations, as the game's result);
* ``Win(player, points)``: the game's result (.mat's ``Wins N points``). It is added by the record itself when the
  game ends: the last checker borne off, a drop or a resignation.

The rules (``bgai.core.game`` and ``bgai.core.cube``): the opening roll is not a double; plays must be legal for the
roll (``bgai.core.movegen``); the player on roll may double before rolling when the cube is centered or its own, below
64, never before the opening roll and never in the Crawford game; a drop ends the game at the cube before the double;
a game is worth its cube times 1, 2 or 3 (gammon, backgammon), gammons counting single with the Jacoby rule while
the cube is centered (money sessions only). A match ends when a player reaches its length.

Build a game as it is played:

    >>> match = MatchRecord(players=("Alice", "Bob"), length=3)
    >>> game = match.new_game()
    >>> game.add_play((3, 1), "8/5 6/5", player=0)
    CheckerPlay(player=0, dice=(3, 1), move=<Move 8/5 6/5 with 31 from Position.from_position_id('4HPwATDgc/ABMA')>)
    >>> game.turn, game.cube
    (1, 1)
    >>> game.add_double()
    Double(player=1, cube=2)
    >>> game.add_drop()
    Drop(player=0)
    >>> game.result
    Win(player=1, points=1)
    >>> match.score
    (0, 1)
"""

from __future__ import annotations

from dataclasses import dataclass

from bgai.core.cube import MAX_CUBE
from bgai.core.errors import BgaiError, IllegalMoveError, InvalidDiceError
from bgai.core.game import result_points
from bgai.core.movegen import CHECKERS
from bgai.core.notation import parse_paths
from bgai.formats.position import Move, Position, parse_dice, parse_move

# Actions ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckerPlay:
    """``player`` rolled ``dice`` (in the order written) and played ``move``."""

    player: int
    dice: tuple[int, int]
    move: Move


@dataclass(frozen=True)
class Double:
    """``player`` doubles, offering the cube at ``cube`` (its new value)."""

    player: int
    cube: int


@dataclass(frozen=True)
class Take:
    player: int


@dataclass(frozen=True)
class Drop:
    player: int


@dataclass(frozen=True)
class Resign:
    """``player`` resigns ``level`` (1 single, 2 gammon, 3 backgammon) times the cube, and its opponent accepts."""

    player: int
    level: int


@dataclass(frozen=True)
class Win:
    """The result: ``player`` wins ``points``."""

    player: int
    points: int


Action = CheckerPlay | Double | Take | Drop | Resign | Win


@dataclass(frozen=True)
class GameState:
    """A game just before one of its actions.

    ``turn`` is the seat on roll and ``position`` is seen from its side; ``cube`` the cube's value and
    ``cube_owner`` the seat that owns it (``None``: centered); ``doubled``: ``turn`` has doubled and its opponent
    is to answer; ``moves`` the checker plays made so far in the game.
    """

    turn: int
    position: Position
    cube: int
    cube_owner: int | None
    doubled: bool
    moves: int


def _seat(player) -> int:
    if player not in (0, 1) or isinstance(player, bool):
        raise BgaiError(f"a player is seat 0 or 1, got {player!r}")
    return int(player)


def parse_play(position: Position, text: str, dice) -> Move:
    """The legal play written ``text`` with ``dice`` in ``position`` (``parse_move``), also when the file lists a
    play's checker steps in an order they cannot be made in (``5/1 9/5``): its paths are tried again from the highest
    starting point down, an order that works whenever any does (a path needs a checker where it starts, and only
    paths from higher points bring one there), so an odd order costs one more try, not one per permutation."""
    try:
        return parse_move(position, text, dice)
    except IllegalMoveError as error:
        try:
            paths = parse_paths(text)
        except IllegalMoveError:
            raise error from None
        ordered = " ".join(path.token for path in sorted(paths, key=lambda path: -path.points[0]))
        if len(paths) > 1 and ordered != " ".join(text.lower().split()):
            try:
                return parse_move(position, ordered, dice)
            except IllegalMoveError:
                pass
        raise error


# Games ------------------------------------------------------------------------------------------------------------


class GameRecord:
    """One game: the score at its start, its place in the match, and its actions, checked against the rules.

    ``score`` is (seat 0's, seat 1's) points at the start; ``length`` the match length (0: money session);
    ``crawford`` whether this is the Crawford game; ``post_crawford`` whether the Crawford game has been played;
    ``jacoby`` the Jacoby rule (money). Each ``add_*`` method checks its action against the rules and raises
    ``bgai.BgaiError`` (an ``IllegalMoveError`` for an illegal play) if it breaks them, leaving the game
    unchanged.
    """

    def __init__(self, score: tuple[int, int] = (0, 0), *, length: int = 0, crawford: bool = False,
                 post_crawford: bool = False, jacoby: bool = False, number: int = 1) -> None:
        self.score = (int(score[0]), int(score[1]))
        self.length = int(length)
        self.crawford = bool(crawford)
        self.post_crawford = bool(post_crawford)
        self.jacoby = bool(jacoby)
        self.number = int(number)
        self._steps: list[tuple[GameState, Action]] = []
        self._turn: int | None = None
        self._position = Position.start()
        self._cube = 1
        self._owner: int | None = None
        self._doubled = False
        self._moves = 0
        self._result: Win | None = None

    # State ----------------------------------------------------------------------------------------------------

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(action for _, action in self._steps)

    def steps(self) -> list[tuple[GameState, Action]]:
        """Each action with the state of the game just before it."""
        return list(self._steps)

    @property
    def turn(self) -> int | None:
        """The seat on roll (``None`` before the opening roll)."""
        return self._turn

    @property
    def position(self) -> Position:
        """The position, seen from the seat on roll (seat 0's side before the opening roll)."""
        return self._position

    @property
    def cube(self) -> int:
        return self._cube

    @property
    def cube_owner(self) -> int | None:
        """The seat that owns the cube, ``None`` while it is centered."""
        return self._owner

    @property
    def doubled(self) -> bool:
        """A double waits for its answer."""
        return self._doubled

    @property
    def result(self) -> Win | None:
        """The game's ``Win``, or ``None`` while it is not over."""
        return self._result

    @property
    def is_over(self) -> bool:
        return self._result is not None

    @property
    def may_double(self) -> bool:
        """Whether the seat on roll may double now (the rules, not whether it should)."""
        return (self._result is None and self._turn is not None and self._moves > 0 and not self._doubled
                and not self.crawford and self._owner in (None, self._turn) and self._cube < MAX_CUBE)

    def match_score(self, seat: int):
        """The ``bgai.core.match.MatchScore`` of this game from ``seat``'s side (its score first), ``None`` for
        money."""
        if self.length == 0:
            return None
        from bgai.core.match import MatchScore

        seat = _seat(seat)
        return MatchScore(self.length, (self.score[seat], self.score[1 - seat]), crawford=self.crawford,
                          post_crawford=self.post_crawford)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameRecord):
            return NotImplemented
        return ((self.score, self.length, self.crawford, self.post_crawford, self.jacoby, self.number, self.actions)
                == (other.score, other.length, other.crawford, other.post_crawford, other.jacoby, other.number,
                    other.actions))

    def __repr__(self) -> str:
        over = f", {self._result}" if self._result else ""
        return f"<GameRecord {self.number} at {self.score[0]}-{self.score[1]}, {len(self._steps)} actions{over}>"

    # Building --------------------------------------------------------------------------------------------------

    def _on_roll(self) -> int:
        """The seat whose turn it is, once the opening roll has been played."""
        if self._turn is None:
            raise BgaiError("the opening roll has not been played yet")
        return self._turn

    def _state(self, turn: int) -> GameState:
        return GameState(turn, self._position, self._cube, self._owner, self._doubled, self._moves)

    def _check_open(self, what: str) -> None:
        if self._result is not None:
            raise BgaiError(f"the game is over ({self._result}); no {what} after it")

    def _check_turn(self, player, what: str) -> int:
        if self._turn is None:
            raise BgaiError(f"no {what} before the opening roll")
        if player is not None and _seat(player) != self._turn:
            raise BgaiError(f"it is seat {self._turn}'s turn, not seat {player}'s, to {what}")
        return self._turn

    def add_play(self, dice, play: Move | str | None = None, player: int | None = None) -> CheckerPlay:
        """The seat on roll rolls ``dice`` and plays ``play``: a ``Move``, standard notation (``"24/18 13/11*"``,
        ``"25/22 6/0"``), or ``None``/``""`` when no checker can move. ``player`` is needed for the opening roll
        (it tells who moves first) and checked otherwise."""
        self._check_open("play")
        dice = parse_dice(dice)
        if self._doubled:
            raise BgaiError(f"seat {1 - self._on_roll()} must take or drop the double before the next roll")
        if self._turn is None:
            if player is None:
                raise BgaiError("the opening roll needs its player (seat 0 or 1)")
            mover = _seat(player)
            if dice[0] == dice[1]:
                raise InvalidDiceError(f"the opening roll cannot be a double ({dice[0]}{dice[1]}): each player rolls "
                                       f"one die and ties are rolled again")
        else:
            mover = self._check_turn(player, "roll")
        position = self._position  # before the opening roll, the starting position: the same from both sides
        if isinstance(play, Move):
            if play.before != position or tuple(sorted(play.dice, reverse=True)) != tuple(sorted(dice, reverse=True)):
                raise IllegalMoveError(f"{play} was made from another position or roll than {dice[0]}{dice[1]} here")
            move = play
        else:
            move = parse_play(position, play or "", dice)
        action = CheckerPlay(mover, dice, move)
        self._steps.append((self._state(mover), action))
        self._turn = 1 - mover
        self._position = move.after
        self._moves += 1
        if CHECKERS in move.after.borne_off()[1:]:
            points = int(result_points(move.after.board[None])[0])
            self._finish(mover, self._value(points))
        return action

    def add_double(self, player: int | None = None) -> Double:
        """The seat on roll doubles (before its roll)."""
        self._check_open("double")
        doubler = self._check_turn(player, "double")
        if self._doubled:
            raise BgaiError("a double is already waiting for its answer (beavers are not supported)")
        if self._moves == 0:
            raise BgaiError("no one may double before the opening roll")
        if self.crawford:
            raise BgaiError("no one may double in the Crawford game")
        if self._owner is not None and self._owner != doubler:
            raise BgaiError(f"seat {doubler} cannot double: its opponent owns the cube")
        if self._cube >= MAX_CUBE:
            raise BgaiError(f"the cube is at {MAX_CUBE}, as high as bgai goes")
        action = Double(doubler, self._cube * 2)
        self._steps.append((self._state(doubler), action))
        self._doubled = True
        return action

    def _answer(self, player) -> int:
        if not self._doubled:
            raise BgaiError("there is no double to answer")
        taker = 1 - self._on_roll()
        if player is not None and _seat(player) != taker:
            raise BgaiError(f"seat {taker} answers the double, not seat {player}")
        return taker

    def add_take(self, player: int | None = None) -> Take:
        """The opponent of the doubler takes: the cube doubles and it owns it."""
        self._check_open("take")
        taker = self._answer(player)
        action = Take(taker)
        self._steps.append((self._state(self._on_roll()), action))
        self._cube *= 2
        self._owner = taker
        self._doubled = False
        return action

    def add_drop(self, player: int | None = None) -> Drop:
        """The opponent of the doubler drops (passes): the doubler wins the cube before the double."""
        self._check_open("drop")
        taker = self._answer(player)
        action = Drop(taker)
        self._steps.append((self._state(self._on_roll()), action))
        self._doubled = False
        self._finish(1 - taker, self._cube)
        return action

    def add_resign(self, level: int = 1, player: int | None = None) -> Resign:
        """``player`` (default: the seat on roll; needed before the opening roll is played, when a player may
        resign rather than play it) resigns a single game (``level`` 1), a gammon (2) or a backgammon (3), and the
        resignation is accepted. With the Jacoby rule and a centered cube it counts single
        and is recorded as level 1."""
        self._check_open("resignation")
        if self._turn is None and player is None:
            raise BgaiError("a resignation before the opening roll is played needs its player (seat 0 or 1)")
        if self._doubled:
            raise BgaiError("answer the double (take or drop) before resigning")
        if level not in (1, 2, 3) or isinstance(level, bool):
            raise BgaiError(f"a resignation is of a single game (1), a gammon (2) or a backgammon (3), got {level!r}")
        resigner = self._on_roll() if player is None else _seat(player)
        if self._jacoby_single():
            level = 1
        action = Resign(resigner, level)
        self._steps.append((self._state(resigner if self._turn is None else self._turn), action))
        self._finish(1 - resigner, level * self._cube)
        return action

    def settle(self, winner: int, points: int) -> Win:
        """Make the game's result the one a file states (``winner`` wins ``points``): checked against a game that
        is over, or, for a game still going on, recorded as the loser's resignation the points imply (1, 2 or 3
        times the cube). Returns the result."""
        winner = _seat(winner)
        if not self.is_over:
            if self._doubled:
                raise BgaiError(f"seat {1 - self._on_roll()} neither takes nor drops the double before the result")
            level, rest = divmod(points, self._cube)
            if self._jacoby_single() and points == self._cube:
                level = 1
            elif rest or not 1 <= level <= 3:
                raise BgaiError(f"seat {winner} wins {points} points with the cube at {self._cube}, but a "
                                f"resignation is worth 1, 2 or 3 times the cube")
            self.add_resign(level, player=1 - winner)
        result = self._result
        if result is None:  # (over, or settled by the resignation just added)
            raise BgaiError(f"game {self.number} has no result to settle")
        if result.player != winner:
            raise BgaiError(f"seat {winner} is said to win, but seat {result.player} won the game")
        if result.points != points:
            hint = (' (if the session used the Jacoby rule, say so: ; [Jacoby "On"] or RU[Jacoby])'
                    if self.length == 0 and not self.jacoby and points == self._cube else "")
            raise BgaiError(f"seat {winner} wins {result.points} points (cube {self._cube}), not {points}{hint}")
        return result

    def _jacoby_single(self) -> bool:
        return self.jacoby and self.length == 0 and self._owner is None

    def _value(self, points: int) -> int:
        return self._cube * (1 if self._jacoby_single() else points)

    def _finish(self, winner: int, points: int) -> None:
        self._result = Win(winner, points)
        self._steps.append((self._state(self._turn if self._turn is not None else winner), self._result))


# Matches ----------------------------------------------------------------------------------------------------------


class MatchRecord:
    """A match to ``length`` points (0: a money session) between ``players`` (seat 0's name, seat 1's).

    ``games`` are its ``GameRecord``s in order; ``metadata`` the ``; [Key "Value"]`` lines of a .mat file (or the
    game-info of an SGF file), in order; ``crawford`` whether the Crawford rule is in force (matches only: always
    ``False`` for money); ``jacoby`` the Jacoby rule (money sessions only).
    """

    def __init__(self, players: tuple[str, str] = ("Player 1", "Player 2"), length: int = 0, *,
                 metadata: dict[str, str] | None = None, crawford: bool = True, jacoby: bool = False) -> None:
        if not (isinstance(length, int) and length >= 0):
            raise BgaiError(f"a match length is a whole number of points (0 for a money session), got {length!r}")
        if length and jacoby:
            raise BgaiError("the Jacoby rule is for money sessions, not matches")
        names = tuple(str(p).strip() for p in players)
        if len(names) != 2 or not all(names):
            raise BgaiError(f"a match has two named players, got {players!r}")
        self.players = names
        self.length = length
        self.metadata = dict(metadata or {})
        self.crawford = bool(crawford) and length > 0  # a rule of matches only
        self.jacoby = bool(jacoby)
        self.games: list[GameRecord] = []

    @property
    def score(self) -> tuple[int, int]:
        """(seat 0's, seat 1's) points after the games so far (those with a result)."""
        if not self.games:
            return (0, 0)
        last = self.games[-1]
        score = list(last.score)
        if last.result is not None:
            score[last.result.player] += last.result.points
        return score[0], score[1]

    @property
    def winner(self) -> int | None:
        """The seat that has won the match, ``None`` while it goes on (and always for money sessions)."""
        if self.length == 0:
            return None
        score = self.score
        return next((seat for seat in (0, 1) if score[seat] >= self.length), None)

    def new_game(self, score: tuple[int, int] | None = None, crawford: bool | None = None) -> GameRecord:
        """Start the next game and return it. Its score is the score after the games before (``score`` may give
        it for the first game of a record that starts in the middle of a match, and is checked otherwise). Whether
        it is the Crawford game follows from the score: the first game with a player one point away (``crawford``
        says so for a first game whose history is unknown)."""
        if self.games and self.games[-1].result is None:
            raise BgaiError(f"game {len(self.games)} has no result yet; it must end before the next starts")
        if self.winner is not None:
            raise BgaiError(f"{self.players[self.winner]} has already won the match")
        expected = self.score
        if score is None:
            score = expected
        score = (int(score[0]), int(score[1]))
        if self.games and score != expected:
            raise BgaiError(f"the score after game {len(self.games)} is {expected[0]}-{expected[1]}, "
                            f"not {score[0]}-{score[1]}")
        if min(score) < 0 or (self.length and max(score) >= self.length):
            raise BgaiError(f"a game of a {self.length}-point match starts with each player below {self.length} "
                            f"points, not at {score[0]}-{score[1]}")
        one_away = [self.length > 0 and self.length - s == 1 for s in score]
        is_crawford, post = False, any(one_away)  # without the Crawford rule, 1-away games play as post-Crawford
        if self.length and self.crawford and any(one_away):
            # Scores only grow: an earlier game with a player one point away was the Crawford game or came after it.
            history = any(self.length - s == 1 for g in self.games for s in g.score)
            natural = not all(one_away) and not history
            if crawford is not None and bool(crawford) != natural and (self.games or all(one_away)):
                raise BgaiError(f"game {len(self.games) + 1} at {score[0]}-{score[1]} "
                                f"{'is' if natural else 'is not'} the Crawford game")
            is_crawford = natural if crawford is None else bool(crawford)
            post = not is_crawford
        elif crawford:
            raise BgaiError(f"the Crawford game needs the Crawford rule and a player one point away "
                            f"(score {score[0]}-{score[1]}, match to {self.length})")
        game = GameRecord(score, length=self.length, crawford=is_crawford, post_crawford=post, jacoby=self.jacoby,
                          number=len(self.games) + 1)
        self.games.append(game)
        return game

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MatchRecord):
            return NotImplemented
        return ((self.players, self.length, self.metadata, self.crawford, self.jacoby, self.games)
                == (other.players, other.length, other.metadata, other.crawford, other.jacoby, other.games))

    def __repr__(self) -> str:
        kind = f"{self.length}-point match" if self.length else "money session"
        return (f"<MatchRecord {kind} {self.players[0]} v {self.players[1]}, {len(self.games)} games, "
                f"score {self.score[0]}-{self.score[1]}>")
