"""A person playing the bot: one game or match, move by move, with the doubling cube.

``Session`` is the one game engine of both front ends (``bgai play`` in the terminal, ``bgai serve`` in the
browser); they only show its state and pass on what the person does. The rules come from the library: plays from
the move generator (checker by checker through ``bgai.formats.steps.PartialPlay``), who may double from
``bgai.core.cube.may_double``, scores from ``bgai.core.game.result_points``, the Crawford rule from ``bgai.core.match``.
The bot's decisions (its cube action, its answer to a double or a resignation, its plays) come from
``bgai.eval.bot.Bot``.

Seats are ``HUMAN`` (0) and ``BOT`` (1). As everywhere in bgai, ``position`` is seen from the player on roll
(``turn``); ``human_board()`` is the board from the person's side. Every value a hint gives is the person's: plays
with the mover's cubeless equity and chances, cube decisions in units of the current stake for money or in
match-winning chances for a match.

The person acts in phases:

* ``ROLL``: its turn, before rolling, when it may double (``roll()``, ``double()``). When it may not double
  (the bot owns the cube, the Crawford game, a cube at 64), its dice are rolled at once.
* ``MOVE``: dice rolled, its play made checker by checker (``step``, ``play``, ``undo``) and finished (``finish``).
  A roll with no play passes the turn at once.
* ``TAKE``: the bot has doubled (``take()``, ``drop()``).
* ``GAME_OVER`` (``next_game()``) and ``MATCH_OVER``.

``resign(points)`` offers the bot 1, 2 or 3 times the cube on the person's turn. The bot's turn runs inside the
action that hands it over. Dice come from one seeded generator, so a session is replayed exactly by its seed and
the person's actions. ``games`` keeps a record of every game: each action with its player, dice and play.
"""

from __future__ import annotations

import copy
import enum
import functools
import random
import secrets
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from bgai.core.cube import CENTERED, ON_ROLL, CubeDecision, CubeOwner, cube_state, may_double, payoff_of
from bgai.core.errors import BgaiError, GameStateError, InvalidPositionError
from bgai.core.game import result_points
from bgai.core.match import MatchScore, crawford_next
from bgai.eval.bot import Bot, RankedPlay, cube_rollout_refusal
from bgai.formats.position import Move, Position
from bgai.formats.steps import PartialPlay, Step
from bgai.formats.xgid import decode_xgid, format_xgid, is_xgid, xgid_context, xgid_dice, xgid_fields
from bgai.play.analysis import MARKS, mark_of

HUMAN, BOT = 0, 1
RESIGN_NAMES = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


class Phase(str, enum.Enum):  # noqa: UP042 (str() stays "Phase.ROLL"; the API sends .value)
    ROLL = "roll"
    MOVE = "move"
    TAKE = "take"
    GAME_OVER = "game_over"
    MATCH_OVER = "match_over"


#: The tutor's threshold unless told otherwise: the EMG lost at which the analysis marks a decision doubtful.
TUTOR_THRESHOLD = min(threshold for threshold, _ in MARKS)


class TutorWarning(GameStateError):
    """The tutor's warning (``Session.tutor``): the person's action would lose ``error`` EMG, at least the tutor's
    threshold, against ``best``; the session is as it was, and the same action with ``confirm=True`` makes it.
    ``mark``: the analysis's word for that error (doubtful, bad, very bad)."""

    def __init__(self, action: str, best: str, error: float) -> None:
        self.action, self.best, self.error, self.mark = action, best, float(error), mark_of(error) or "doubtful"
        super().__init__(f"the tutor: {action} loses {self.error:.3f} EMG ({self.mark}); {best} is best. Confirm "
                         f"to play it anyway, or choose again")


@dataclass(frozen=True)
class PlayHint:
    """One play of a session's hint (``Session.play_hints``): the bot's cubeless judgement of it (``ranked``: the
    equity and chances at the ply it was judged at), the person's ``cubeful`` equity after it, the cube as it is
    (money: in units of the current stake, as GNU Backgammon normalises; a match: the match-winning chance), and
    ``difference``, that cubeful equity minus the first play's."""

    ranked: RankedPlay
    cubeful: float
    difference: float


@dataclass(frozen=True)
class Action:
    """One thing a player did. ``kind``: ``move`` (``dice`` and ``play`` in the mover's numbering; ``play`` is
    ``"no play"`` when the roll cannot be played), ``double`` (``cube`` is the new value), ``take``, ``drop``,
    ``resign`` (``points`` offered), ``accept``/``reject`` (a resignation), ``win`` (``points`` won).
    ``position_id``: the position before the action, from the side of the player acting. ``opening``: the move is
    the game's first, its dice the opening roll, one die each (the higher one the mover's)."""

    player: int
    kind: str
    dice: tuple[int, int] | None = None
    play: str | None = None
    cube: int | None = None
    points: int | None = None
    position_id: str | None = None
    opening: bool = False

    def describe(self, names: tuple[str, str] = ("You", "bgai")) -> str:
        """The action in words, e.g. ``bgai rolls 52 and plays 13/11 13/8`` (``You roll ...`` for "You")."""
        who = names[self.player]

        def verb(word: str) -> str:
            return word if who == "You" else word + "es" if word.endswith("s") else word + "s"

        if self.kind == "move":
            dice = self.dice or (0, 0)  # (a move's action has its dice)
            roll = f"{who} {verb('roll')} {dice[0]}{dice[1]}"
            if self.opening:  # one die each: the mover's the higher
                roll = f"{who} {verb('win')} the opening roll, {dice[0]} against {dice[1]},"
                return f"{roll} and {verb('play')} {self.play}"
            return f"{roll}: no play" if self.play == "no play" else f"{roll} and {verb('play')} {self.play}"
        if self.kind == "double":
            return f"{who} {verb('double')} to {self.cube}"
        if self.kind in ("take", "accept", "reject"):
            return f"{who} {verb(self.kind)}" + (" the resignation" if self.kind != "take" else "")
        if self.kind == "drop":
            return f"{who} {verb('pass')}"
        if self.kind == "resign":
            return f"{who} {verb('offer')} to resign {RESIGN_NAMES[self.points or 1]}"
        if self.kind == "win":
            return f"{who} {verb('win')} {self.points} point{'s' if self.points != 1 else ''}"
        return f"{who}: {self.kind}"


@dataclass
class GameLog:
    """One game of the session: its number (from 1), the score (human, bot) and Crawford flag it began with, the
    position it began from (``None``: the standard start; a set-up position otherwise, from the side of the first
    player to act, ``first``), its actions, and at the end the ``winner`` with the ``points`` won."""

    number: int
    score: tuple[int, int]
    crawford: bool
    start: Position | None = None
    first: int | None = None
    actions: list[Action] = field(default_factory=list)
    winner: int | None = None
    points: int = 0
    resigned: bool = False


@dataclass(frozen=True)
class CubeHint:
    """The bot's advice on the person's cube decision, in the person's units (money: the current stake; match:
    match-winning chances). ``kind`` is ``double`` (before its roll) with ``no_double``, ``double_take`` and
    ``double_pass``, or ``take`` (answering the bot's double) with ``take`` and ``pass``. ``action`` says what to
    do in words; ``decision`` is the bot's ``CubeDecision``, from the doubler's side."""

    kind: Literal["double", "take"]
    action: str
    equities: dict[str, float | None]
    decision: CubeDecision


def _all_or_nothing(action):
    """The person's action either happens whole or, when it raises (an illegal play, a refused set-up, an error in
    the bot's turn), leaves the session exactly as it was: dice, record, score and match settings included."""

    @functools.wraps(action)
    def atomic(self: Session, *args, **kwargs):
        saved = self._snapshot()
        try:
            return action(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    return atomic


class Session:
    """A money session (``match_length=0``, games one after another) or a match to ``match_length`` points
    between a person and ``bot``. ``seed`` makes the dice reproducible (``None``: a random seed, kept in
    ``seed``). ``jacoby``: money games with the Jacoby rule. The first game starts at once.

    ``tutor``: a threshold in EMG (``TUTOR_THRESHOLD``, the analysis's "doubtful", is the usual one; ``None``: no
    tutor). With it, a checker play or cube action of the person's that loses at least that much against the bot's
    choice, judged by the bot at ``tutor_plies`` (default: its own plies), raises ``TutorWarning`` instead of
    happening; the same action with ``confirm=True`` makes it."""

    def __init__(self, bot: Bot, *, match_length: int = 0, seed: int | None = None, jacoby: bool = False,
                 names: tuple[str, str] = ("You", "bgai"), tutor: float | None = None,
                 tutor_plies: int | None = None) -> None:
        if not isinstance(match_length, int) or isinstance(match_length, bool) or match_length < 0:
            raise BgaiError(f"a match length is a whole number of points (0: money game), got {match_length!r}")
        if match_length:
            MatchScore(match_length, (0, 0))  # the match equity table's range
        if jacoby and match_length:
            raise BgaiError("the Jacoby rule is for money games, not matches")
        self.bot = bot
        if tutor is not None and not tutor >= 0:
            raise BgaiError(f"the tutor's threshold is the EMG an action may lose unwarned, 0 or more, got {tutor!r}")
        self.tutor, self.tutor_plies = tutor, tutor_plies
        self.match_length = match_length
        self.jacoby = jacoby
        self.names = names
        self.seed = secrets.randbits(32) if seed is None else int(seed)
        self._rng = random.Random(self.seed)
        self.score = [0, 0]
        self.crawford = False
        self.crawford_played = False
        self.games: list[GameLog] = []
        # The game under way (set by _new_game and set_position): the position of the player to act, its cube
        # and owner seat (None: centered), the person's roll and its play so far (while it moves), whose turn it
        # is, what state the game is in, and the last play made (seat, move) with whether it was the opening.
        self.position: Position
        self.cube: int
        self._owner: int | None
        self.dice: tuple[int, int] | None
        self.partial: PartialPlay | None
        self.turn: int
        self.phase: Phase
        self._opening: bool
        self._last: tuple[int, Any] | None
        self.version = 0  # counts the changes of state: every action the person makes and every one of the bot
        self._new_game()

    # State ------------------------------------------------------------------------------------------------------

    @property
    def game(self) -> GameLog:
        return self.games[-1]

    @property
    def is_match(self) -> bool:
        return self.match_length > 0

    @property
    def cube_rollout_refusal(self) -> str | None:
        """Why the cube hint cannot be rolled out in this session (a match, the Jacoby rule), in one line; ``None``
        where it can."""
        if self.is_match:
            return cube_rollout_refusal(MatchScore(self.match_length, (0, 0)))
        return cube_rollout_refusal(jacoby=self.jacoby)

    @property
    def may_double_now(self) -> bool:
        """Whether the person may double now (its turn, before rolling)."""
        return self.phase is Phase.ROLL and self._may_double(HUMAN)

    @property
    def roll_text(self) -> str:
        """The person's roll, ``"63"``, while it moves (``""`` otherwise)."""
        return "" if self.dice is None else f"{self.dice[0]}{self.dice[1]}"

    @property
    def play_so_far(self) -> str:
        """The person's play so far in notation, while it moves (``""`` otherwise)."""
        return "" if self.partial is None else self.partial.text()

    def play_under_way(self) -> PartialPlay:
        """The person's play under way (there is one while the phase is ``MOVE``)."""
        if self.partial is None:
            raise GameStateError("no play is under way: roll first")
        return self.partial

    def human_board(self) -> np.ndarray:
        """The board seen from the person's side (its checkers positive), with the steps of its play so far."""
        if self.phase is Phase.MOVE:
            return self.play_under_way().board
        return self.position.board if self.turn == HUMAN else self.position.switched().board

    def pip_counts(self) -> tuple[int, int]:
        """(the person's pips, the bot's), the person's play so far included."""
        pips = Position(self.human_board()).pip_counts()
        return pips

    def cube_owner(self) -> int | None:
        """``HUMAN``, ``BOT`` or ``None`` (centered)."""
        return self._owner

    def position_id(self) -> str:
        """GNU Backgammon Position ID of the position on roll (before any step of the play being made)."""
        return self.position.position_id()

    def xgid(self) -> str:
        """The XGID of the game now, the person as X (at the bottom): board, cube, turn, dice, score, match."""
        board = self.position.board if self.turn == HUMAN else self.position.switched().board
        dice = "D" if self.phase is Phase.TAKE else self.dice if self.phase is Phase.MOVE else None
        owner = {None: 0, HUMAN: 1, BOT: -1}[self._owner]
        return format_xgid(board, cube=self.cube, owner=owner, x_on_roll=self.turn == HUMAN, dice=dice,
                           score=(self.score[HUMAN], self.score[BOT]) if self.is_match else (0, 0),
                           crawford=self.crawford, length=self.match_length, jacoby=self.jacoby)

    def match_score(self, player: int = HUMAN) -> MatchScore | None:
        """The match score from ``player``'s side (``None`` for money)."""
        if not self.is_match or self.phase is Phase.MATCH_OVER:
            return None
        return MatchScore(self.match_length, (self.score[player], self.score[1 - player]), crawford=self.crawford,
                          post_crawford=self.crawford_played and not self.crawford)

    # The person's actions ---------------------------------------------------------------------------------------

    @_all_or_nothing
    def roll(self, confirm: bool = False) -> tuple[int, int]:
        """Roll the dice (phase ``ROLL``). A roll with no legal play passes the turn at once. With the tutor, rolling
        where the person should double is a cube error it warns of (``confirm``: roll all the same)."""
        self._expect(Phase.ROLL, "roll")
        if not confirm and self._may_double(HUMAN):
            self._tutor_cube("no double")
        dice = self._roll_dice()
        if not self._human_rolled(dice):
            self._advance()
        return dice

    @_all_or_nothing
    def double(self, confirm: bool = False) -> bool:
        """Double the bot (phase ``ROLL``). Returns whether it took; if it passed, the person wins the game.
        ``confirm``: double even where the tutor warns of it."""
        self._expect(Phase.ROLL, "double")
        if not self._may_double(HUMAN):
            raise GameStateError(f"you may not double now: {self._why_no_double(HUMAN)}")
        if not confirm:
            self._tutor_cube("double")
        answer = self._decision(HUMAN)
        self._record(HUMAN, "double", cube=2 * self.cube)
        if not answer.should_take:
            self._record(BOT, "drop")
            self._end_game(HUMAN, self.cube)
            return False
        self.cube *= 2
        self._owner = BOT
        self._record(BOT, "take")
        if not self._human_rolled(self._roll_dice()):
            self._advance()
        return True

    @_all_or_nothing
    def take(self, confirm: bool = False) -> None:
        """Take the bot's double (phase ``TAKE``): the cube doubles and is the person's; the bot rolls.
        ``confirm``: take even where the tutor warns of it."""
        self._expect(Phase.TAKE, "take")
        if not confirm:
            self._tutor_cube("take")
        self.cube *= 2
        self._owner = HUMAN
        self._record(HUMAN, "take")
        self._bot_plays(self._roll_dice())
        self._advance()

    @_all_or_nothing
    def drop(self, confirm: bool = False) -> None:
        """Pass the bot's double (phase ``TAKE``): the bot wins the game at the cube before the double.
        ``confirm``: pass even where the tutor warns of it."""
        self._expect(Phase.TAKE, "pass")
        if not confirm:
            self._tutor_cube("pass")
        self._record(HUMAN, "drop")
        self._end_game(BOT, self.cube)

    @_all_or_nothing
    def step(self, src: int, dst: int) -> list[Step]:
        """Move one checker of the person's play (phase ``MOVE``; see ``PartialPlay.step``)."""
        self._expect(Phase.MOVE, "move a checker")
        steps = self.play_under_way().step(src, dst)
        self.version += 1
        return steps

    @_all_or_nothing
    def play(self, text: str, finish: bool = True, reset: bool = False, confirm: bool = False) -> bool:
        """Make moves written in standard notation (phase ``MOVE``): a whole play or part of it, after the steps
        already made (``reset``: instead of them). With ``finish``, a play that is then complete is finished too
        (``confirm``: even where the tutor warns of it). Returns whether the play was finished."""
        self._expect(Phase.MOVE, "play")
        self.play_under_way().play_text(text, reset=reset)
        self.version += 1
        if finish and self.play_under_way().complete:
            return self.finish(confirm=confirm)
        return False

    @_all_or_nothing
    def undo(self) -> list[Step]:
        """Take back the last checker move of the play being made (phase ``MOVE``)."""
        self._expect(Phase.MOVE, "undo")
        steps = self.play_under_way().undo()
        self.version += 1
        return steps

    @_all_or_nothing
    def finish(self, confirm: bool = False) -> bool:
        """Finish the person's play (phase ``MOVE``, the play complete); the bot's turn follows. ``confirm``: even
        where the tutor warns of the play."""
        self._expect(Phase.MOVE, "finish a play")
        move = self.play_under_way().move()
        if not confirm:
            self._tutor_play(move)
        self._human_moved(move)
        return True

    # The tutor ------------------------------------------------------------------------------------------------

    def _tutor_bot(self) -> Bot:
        plies = self.bot.plies if self.tutor_plies is None else self.tutor_plies
        return self.bot if plies == self.bot.plies else self.bot.replace(plies=plies)

    def _emg_scale(self, player: int) -> float:
        """EMG per unit of ``player``'s cubeful equity: 1 for money (equities per unit of the stake), in a match 2
        over the match-winning chances between losing and winning the cube."""
        if not self.is_match:
            return 1.0
        state = self._state(player)
        lose, win = payoff_of(state)(np.stack([-state.value, state.value], axis=1))[0]
        return float(2 / (win - lose))

    def _tutor_play(self, move: Move) -> None:
        """``TutorWarning`` if ``move`` loses at least the tutor's threshold against the best of the bot's top
        plays, each judged by its cubeful equity for the person at the tutor's plies."""
        if self.tutor is None or len(self.play_under_way().legal) < 2:
            return
        bot = self._tutor_bot()
        best = self.play_hints(5, bot=bot)[0]
        chosen = self.cubeful_equities([move], bot)[0]
        error = (best.cubeful - chosen) * self._emg_scale(HUMAN)
        if error >= self.tutor and str(move) != str(best.ranked.move):
            raise TutorWarning(f"{move}", f"{best.ranked.move}", error)

    def _tutor_cube(self, action: str) -> None:
        """``TutorWarning`` if the person's cube ``action`` (no double, double, take, pass) loses at least the
        tutor's threshold against the bot's, at the tutor's plies (its cube plies for that checker play)."""
        if self.tutor is None:
            return
        hint = self.cube_hint(bot=self._tutor_bot())
        d = hint.decision  # (each equity the person's: the doubler's, or the taker's in hint.equities)
        if d.double_take is None or d.double_pass is None:
            return
        if hint.kind == "double":
            equities = {"no double": d.no_double, "double": min(d.double_take, d.double_pass)}
        else:
            equities = {"take": float(hint.equities["take"] or 0.0), "pass": float(hint.equities["pass"] or 0.0)}
        best = max(equities, key=lambda name: equities[name])
        error = (equities[best] - equities[action]) * self._emg_scale(HUMAN)
        if error >= self.tutor and action != best:
            raise TutorWarning(action, best, error)

    @_all_or_nothing
    def resign(self, points: int = 1) -> bool:
        """Offer the bot ``points`` times the cube (1 single, 2 gammon, 3 backgammon) on the person's turn.
        The bot accepts when that is worth at least as much to it as playing on (its cubeful equity); then the
        game ends. Returns whether it accepted."""
        if self.phase not in (Phase.ROLL, Phase.MOVE):
            raise GameStateError(f"you may resign on your turn only (now: {self._phase_text()})")
        if points not in RESIGN_NAMES:
            raise BgaiError(f"resign 1 (single game), 2 (gammon) or 3 (backgammon) points, got {points!r}")
        worth = points * self.cube
        if self.jacoby and self._owner is None:
            worth = self.cube  # gammons count single while the cube is centered
        self._record(HUMAN, "resign", points=points)
        if self._bot_accepts(worth):
            self._record(BOT, "accept")
            self.game.resigned = True
            self._end_game(BOT, worth)
            return True
        self._record(BOT, "reject")
        return False

    @_all_or_nothing
    def next_game(self) -> None:
        """Start the next game (phase ``GAME_OVER``)."""
        self._expect(Phase.GAME_OVER, "start the next game")
        self._new_game()

    # Hints --------------------------------------------------------------------------------------------------------

    def hint(self, bot: Bot | None = None) -> list[RankedPlay]:
        """The person's plays of this roll ranked by the bot (phase ``MOVE``; ``bot``: another judge than the
        session's, as the tutor's plies): the mover's cubeless equity and chances after each play, best first."""
        if self.phase is not Phase.MOVE:
            raise GameStateError(f"a hint on the plays needs your roll (now: {self._phase_text()})")
        return (bot or self.bot).hint(self.position, self.dice)

    def play_hints(self, top: int, ranked: list[RankedPlay] | None = None, bot: Bot | None = None) -> list[PlayHint]:
        """The person's ``top`` best plays of this roll by the bot (phase ``MOVE``), each with its cubeful equity for
        the person, the cube as it is (``cubeful_equities``), and ranked by it: the bot's ``top`` best by cubeless
        equity (``hint``, or ``ranked`` when the caller has it), then in the order of what the cube makes of them,
        ``difference`` each one's cubeful equity minus the first's. One rule for the terminal's, the page's and the
        API's hint. ``bot``: as in ``hint``."""
        ranked = (self.hint(bot) if ranked is None else ranked)[:top]
        cubeful = self.cubeful_equities([r.move for r in ranked], bot)
        order = sorted(range(len(ranked)), key=lambda i: -cubeful[i])  # (stable: ties keep the cubeless order)
        best = cubeful[order[0]] if order else 0.0
        return [PlayHint(ranked[i], cubeful[i], cubeful[i] - best) for i in order]

    def cubeful_equities(self, moves: list[Move], bot: Bot | None = None) -> list[float]:
        """The person's cubeful equity after each of its ``moves`` of this roll, the cube as it is (money: in units
        of the current stake; a match: match-winning chances), by the bot at the plies of its checker play (not the
        deeper ply of its own cube decisions, ``Bot.cube_plies``: a hint ranks every play at once): the bot, on roll
        after the play, takes its best cube action (``Bot.cube_equities``), and the person's equity is the rest of
        it. ``bot``: as in ``hint``."""
        if self.phase is not Phase.MOVE:
            raise GameStateError(f"cubeful equities of plays need your roll (now: {self._phase_text()})")
        if not moves:
            return []
        boards = np.stack([m.after.board for m in moves])  # the bot on roll after each
        state = self._state(BOT).select(np.zeros(len(moves), dtype=np.int64))
        bot = bot or self.bot
        theirs = bot.cube_equities(boards, state, plies=bot.plies).equity
        return [float(v) for v in ((1.0 - theirs) if self.is_match else -theirs)]

    def cube_hint(self, rollout: bool | dict = False, bot: Bot | None = None) -> CubeHint:
        """The bot's advice on the person's cube decision: to double (phase ``ROLL``) or to take (``TAKE``).

        ``rollout``: decide from a cubeful rollout instead of the formula (``Bot.cube_decision``'s ``rollout``:
        ``True``, or a dict of its options), about a second; a money session without the Jacoby rule only
        (``cube_rollout_refusal`` says why not, and a ``BgaiError`` says it here). ``bot``: as in ``hint``."""
        if self.phase not in (Phase.ROLL, Phase.TAKE):
            raise GameStateError(f"there is no cube decision to make now ({self._phase_text()})")
        if rollout and self.cube_rollout_refusal:
            raise BgaiError(self.cube_rollout_refusal)
        if self.phase is Phase.ROLL:
            d = self._decision(HUMAN, rollout=rollout, bot=bot)
            equities = {"no_double": d.no_double, "double_take": d.double_take, "double_pass": d.double_pass}
            return CubeHint("double", d.action, equities, d)
        d = self._decision(BOT, rollout=rollout, bot=bot)
        other = (lambda v: 1 - v) if self.is_match else (lambda v: -v)
        equities = {"take": other(d.double_take), "pass": other(d.double_pass)}
        return CubeHint("take", "Take" if d.should_take else "Pass", equities, d)

    # The record -------------------------------------------------------------------------------------------------

    def match_record(self):
        """The games so far as a ``bgai.formats.matchfile.MatchRecord`` (the person is seat 0, the bot seat 1), replayed
        through its rules. A .mat file has no way to start from a set-up position, so the record holds the games
        played from the opening position since the last set-up one (``games_left_out`` says how many are not in
        it), and a game in which nothing has been done yet (its opening roll not played: the person quits there) is
        no game of it; accepted resignations are recorded, rejected offers are not."""
        from bgai.formats.matchfile import MatchRecord

        record = MatchRecord(self.names, self.match_length, jacoby=self.jacoby,
                             metadata={"Seed": str(self.seed), "Bot": f"{self.bot.name} {self.bot.plies}-ply"})
        for game in self.games[self._first_recorded():]:
            if not game.actions:
                continue
            first = not record.games
            rec = record.new_game(score=game.score if first else None, crawford=game.crawford if first else None)
            actions = game.actions
            for i, action in enumerate(actions):
                if action.kind == "move":
                    rec.add_play(action.dice, None if action.play == "no play" else action.play,
                                 player=action.player)
                elif action.kind == "double":
                    rec.add_double(action.player)
                elif action.kind == "take":
                    rec.add_take(action.player)
                elif action.kind == "drop":
                    rec.add_drop(action.player)
                elif action.kind == "resign" and i + 1 < len(actions) and actions[i + 1].kind == "accept":
                    rec.add_resign(action.points, player=action.player)
            if game.winner is not None and (rec.result is None or (rec.result.player, rec.result.points)
                                            != (game.winner, game.points)):
                raise GameStateError(f"game {game.number} does not replay to its result in the match record")
        return record

    @property
    def games_left_out(self) -> int:
        """Games of the session that ``match_record`` leaves out (those up to the last set-up position)."""
        return self._first_recorded()

    def _first_recorded(self) -> int:
        set_up = [i for i, game in enumerate(self.games) if game.start is not None]
        return set_up[-1] + 1 if set_up else 0

    def mat_text(self) -> str:
        """The games so far as a .mat file (see ``match_record``)."""
        from bgai.formats.matchfile import write_mat

        return write_mat(self.match_record())

    # Setting up a position ------------------------------------------------------------------------------------

    @_all_or_nothing
    def setup(self, text: str) -> None:
        """Play on from a position: a Position ID (the person on roll, before rolling, the cube and score as they
        are) or an XGID (its board, cube, turn, dice and, for a match, score and length; X is the person). The
        game in progress is abandoned unscored. A new game of the record starts from that position."""
        text = text.strip()
        cube, owner_rel, dice, human_on_roll = 1, CENTERED, None, True
        if is_xgid(text):
            board = decode_xgid(text)
            cube, owner_rel, match = xgid_context(text)
            fields = xgid_fields(text)
            human_on_roll = fields[3] == "1"
            dice = xgid_dice(text)
            if dice in ("B", "R"):
                raise InvalidPositionError("an XGID after a beaver or a raccoon is not a position a session takes up: "
                                           "give the one before it (dice 00, or D after the double)")
            if match is not None:
                self.match_length = match.length
                on_roll, other = match.score
                self.score = [on_roll, other] if human_on_roll else [other, on_roll]
                self.crawford, self.crawford_played = match.crawford, match.crawford or match.post_crawford
                self.jacoby = False
            elif self.is_match:
                raise InvalidPositionError("this XGID is of a money game; the session is a match (a match XGID "
                                           "sets its length and score)")
            position = Position(board)
        else:
            if self.phase is Phase.MATCH_OVER:
                raise GameStateError("the match is over: set up a match position with an XGID")
            position = Position.from_position_id(text)
        if position.is_game_over():
            raise InvalidPositionError(f"{text!r}: the game is over in that position")
        on_roll = HUMAN if human_on_roll else BOT
        owner = None if owner_rel == CENTERED else on_roll if owner_rel == ON_ROLL else 1 - on_roll
        if owner is None and cube != 1:
            raise InvalidPositionError(f"a centered cube has value 1, got {cube}")
        if self.games and self.game.winner is None:
            self.games.pop()  # the game in progress, abandoned unscored
        self.games.append(GameLog(len(self.games) + 1, (self.score[0], self.score[1]), self.crawford, position,
                                  on_roll))
        self.position, self.turn, self.cube, self._owner = position, on_roll, cube, owner
        self.dice, self.partial, self.phase = None, None, Phase.ROLL
        self._opening, self._last = False, None
        self.version += 1
        if dice == "D":
            if on_roll == BOT:
                self.phase = Phase.TAKE  # the bot has doubled
                self._require_may_double(BOT)
                self.version += 1
                return
            self._require_may_double(HUMAN)
            self.double()
            return
        rolled = None if dice is None or isinstance(dice, str) else dice  # ("D" is handled above)
        if on_roll == HUMAN and rolled is not None:
            if not self._human_rolled(rolled):
                self._advance()
            return
        if on_roll == BOT and rolled is not None:
            self._bot_plays(rolled)
        self._advance()

    # The flow of the game -----------------------------------------------------------------------------------------

    def _new_game(self) -> None:
        self.games.append(GameLog(len(self.games) + 1, (self.score[0], self.score[1]), self.crawford))
        self.position = Position.start()
        self.cube, self._owner = 1, None
        self.dice, self.partial = None, None
        self._opening, self._last = True, None
        self.phase = Phase.ROLL
        self.version += 1
        # The opening roll: one die each, again on a tie; the higher die moves first with both.
        while True:
            mine, theirs = self._rng.randint(1, 6), self._rng.randint(1, 6)
            if mine != theirs:
                break
        self.turn = HUMAN if mine > theirs else BOT
        if self.turn == HUMAN:
            self._human_rolled((mine, theirs))
        else:
            self._bot_plays((theirs, mine))
            self._advance()

    def _advance(self) -> None:
        """Play on until the person has something to decide or the game is over."""
        while self.phase not in (Phase.GAME_OVER, Phase.MATCH_OVER):
            if self.turn == BOT:
                if self._may_double(BOT):
                    decision = self._decision(BOT)
                    if decision.should_double:
                        self._record(BOT, "double", cube=2 * self.cube)
                        self.phase = Phase.TAKE
                        return
                self._bot_plays(self._roll_dice())
            else:
                if self._may_double(HUMAN):
                    self.phase = Phase.ROLL
                    self.dice = None
                    return
                if self._human_rolled(self._roll_dice()):
                    return

    def _human_rolled(self, dice: tuple[int, int]) -> bool:
        """The person's dice are ``dice``: True when it has a play to make (phase ``MOVE``); with no legal play
        the turn passes at once (False)."""
        self.dice = (max(dice), min(dice))
        self.partial = PartialPlay(self.position, dice)
        self.phase = Phase.MOVE
        self.version += 1
        if self.partial.no_play:
            self._human_moved(self.play_under_way().move(), advance=False)
            return False
        return True

    def _human_moved(self, move: Move, advance: bool = True) -> None:
        self._record(HUMAN, "move", dice=self.dice, play=str(move), opening=self._opening)
        self._opening = False
        self.partial = None
        self.phase = Phase.ROLL
        self._last = (HUMAN, move)
        if self._moved(move, HUMAN) and advance:
            self._advance()

    def _bot_plays(self, dice: tuple[int, int]) -> None:
        self.dice = (max(dice), min(dice))
        move = self.bot.choose_move(self.position, dice)
        self._record(BOT, "move", dice=self.dice, play=str(move), opening=self._opening)
        self._opening = False
        self._last = (BOT, move)
        self._moved(move, BOT)

    def _moved(self, move: Move, mover: int) -> bool:
        """Apply ``move``: the game ends or the other player is on roll. True when the game goes on."""
        self.position = move.after
        self.dice = None
        if move.after.is_game_over():
            points = int(result_points(move.after.board[None])[0])
            if self.jacoby and self._owner is None:
                points = 1
            self._end_game(mover, points * self.cube)
            return False
        self.turn = 1 - mover
        self.phase = Phase.ROLL
        return True

    def _end_game(self, winner: int, points: int) -> None:
        self.game.winner, self.game.points = winner, points
        self._record(winner, "win", points=points)
        self.score[winner] += points
        self.dice, self.partial = None, None
        if self.is_match:
            self.crawford_played |= self.crawford
            self.crawford = bool(crawford_next(np.array(self.score), self.match_length, self.crawford_played))
            if max(self.score) >= self.match_length:
                self.phase = Phase.MATCH_OVER
                return
        self.phase = Phase.GAME_OVER

    # The cube -----------------------------------------------------------------------------------------------------

    def _cube_args(self, player: int):
        """(cube, owner, match) for ``Bot.cube_decision`` from ``player``'s side."""
        owner = CubeOwner.of_seat(self._owner, player)
        return self.cube, owner, self.match_score(player)

    def _decision(self, player: int, position: Position | None = None, rollout: bool | dict = False,
                  bot: Bot | None = None) -> CubeDecision:
        """The bot's (or ``bot``'s) cube decision for ``player`` on roll in ``position`` (default: the position
        now)."""
        return (bot or self.bot).cube_decision(self.position if position is None else position,
                                               *self._cube_args(player), jacoby=self.jacoby, rollout=rollout)

    def _state(self, player: int):
        return cube_state(*self._cube_args(player), jacoby=self.jacoby)

    def _may_double(self, player: int) -> bool:
        return not self._opening and bool(may_double(self._state(player))[0])

    def _why_no_double(self, player: int) -> str:
        if self._opening:
            return "the opening roll comes first"
        if self._owner is not None and self._owner != player:
            return f"{self.names[1 - player]} owns the cube"
        if self.crawford:
            return "this is the Crawford game"
        return f"the cube is at {self.cube}, its highest value"

    def _require_may_double(self, player: int) -> None:
        if not self._may_double(player):
            raise InvalidPositionError(f"{self.names[player]} may not double in that position: "
                                       f"{self._why_no_double(player)}")

    def _bot_accepts(self, points: int) -> bool:
        """Whether the bot takes ``points`` now rather than play on (its own cubeful equity, both in points for
        money or in match-winning chances for a match)."""
        if self.phase is Phase.MOVE:
            # With the person's dice on the board, play on from the bot's view of the person's best play.
            after = self.bot.choose_move(self.position, self.dice).after
            if after.is_game_over():
                return True
            view, side = after, BOT
        else:
            view, side = self.position, HUMAN
        decision = self._decision(side, view)
        best = decision.no_double
        take, drop = decision.double_take, decision.double_pass
        if decision.may_double and take is not None and drop is not None:
            best = max(best, min(take, drop))
        if not self.is_match:
            best *= self.cube
        playing_on = best if side == BOT else (1 - best if self.is_match else -best)
        accepting = float(payoff_of(self._state(BOT))(np.array([[points]]))[0, 0])
        return accepting >= playing_on

    # Bookkeeping --------------------------------------------------------------------------------------------------

    def _snapshot(self) -> dict:
        """What an action may change, copied: the attributes, the game in progress (the only one actions
        change; earlier games are finished and only read), the score, the play being made and the dice's state."""
        saved = dict(self.__dict__)
        saved["games"] = self.games[:-1] + [copy.copy(self.game)] if self.games else []
        if self.games:
            saved["games"][-1].actions = list(self.game.actions)
        saved["score"] = list(self.score)
        saved["_rng"] = copy.deepcopy(self._rng)
        if self.partial is not None:
            saved["partial"] = self.partial.snapshot()
        return saved

    def _roll_dice(self) -> tuple[int, int]:
        return self._rng.randint(1, 6), self._rng.randint(1, 6)

    def _record(self, player: int, kind: str, **details) -> None:
        if details.get("dice") is not None:
            details["dice"] = tuple(sorted(details["dice"], reverse=True))
        pos = self.position if player == self.turn else self.position.switched()
        self.game.actions.append(Action(player, kind, position_id=pos.position_id(), **details))
        self.version += 1

    def _expect(self, phase: Phase, what: str) -> None:
        if self.phase is not phase:
            raise GameStateError(f"you cannot {what} now: {self._phase_text()}")

    def _phase_text(self) -> str:
        return {
            Phase.ROLL: "it is your turn to roll or double",
            Phase.MOVE: f"you have rolled {self.dice[0]}{self.dice[1]} and must play" if self.dice else "",
            Phase.TAKE: f"{self.names[BOT]} has doubled to {2 * self.cube}: take or pass",
            Phase.GAME_OVER: "the game is over (start the next game)",
            Phase.MATCH_OVER: "the match is over",
        }[self.phase]

    @property
    def last_move(self) -> tuple[int, Move] | None:
        """(player, move) of the last play made in this game, if any."""
        return self._last

    def status(self) -> str:
        """One line: whose turn and what is to be done."""
        if self.phase in (Phase.GAME_OVER, Phase.MATCH_OVER):
            g = self.game
            how = " (resigned)" if g.resigned else " (double passed)" if g.actions[-2].kind == "drop" else ""
            name = self.names[g.winner or 0]  # (a finished game has its winner)
            line = f"{name} won game {g.number}: {g.points} point{'s' if g.points != 1 else ''}{how}"
            if self.phase is Phase.MATCH_OVER:
                winner = HUMAN if self.score[HUMAN] >= self.match_length else BOT
                line += (f"; {self.names[winner]} won the {self.match_length}-point match "
                         f"{self.score[winner]}-{self.score[1 - winner]}")
            return line
        return self._phase_text()
