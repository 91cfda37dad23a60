"""Match analysis: every checker play and cube decision of both players judged by the bot, with error rates,
marks and luck counted the way GNU Backgammon counts them.

    >>> from bgai.eval.bot import load_bot
    >>> from bgai.formats.matchfile import MatchRecord
    >>> match = MatchRecord(("Alice", "Bob"), length=0)
    >>> game = match.new_game()
    >>> _ = game.add_play("65", "13/2", player=0)   # the opening 65 should run a back checker: 24/13
    >>> _ = game.add_resign(1)
    >>> analysis = analyse_match(match, load_bot(), progress=False)
    >>> blunder = analysis.decisions[0]
    >>> blunder.best, blunder.mark, round(analysis.players[0].error_rate) > 120
    ('24/13', 'very bad', True)

Definitions (``DEFINITIONS`` says them in words, with their sources):

* **Equity** is cubeful and measured in EMG, "equivalent to money game": for a match, the match-winning chance
  (MWC, from the Kazaross-XG2 match equity table) rescaled so that losing the current cube is -1 and winning it
  +1; for money, the equity per unit of the current cube. Errors are equity lost, in EMG, as GNU Backgammon reports
  them; their cost is also given in MWC (matches) or points (money).
* **Checker play**: each legal play is judged at the bot's plies (with its move filters; the play made always goes
  through to full depth), its n-ply cubeless probabilities turned into a cubeful equity by Janowski's formula
  with the opponent on roll (``bgai.core.cube``). The error is the best play's equity minus the play made's. A play is
  *forced* when the roll has one legal play (or none): it is not a decision and counts nowhere.
* **Cube**: at every turn where the player on roll may double (and the cube is alive: in a match, it does not
  already win the match with the cube as it is), the bot's cubeful equities of no double (ND), double/take (DT)
  and double/pass (DP = +1 EMG) at its cube's plies (``Bot.cube_equities``, ``Bot.cube_plies``: 2-ply for a
  1-ply bot). Doubling is worth min(DT, DP); the error of
  the decision made is max(ND, min(DT, DP)) minus the worth of the decision made. The taker's error is DT - DP
  for a wrong take and DP - DT for a wrong pass. A double, a take and a pass always count as decisions; a turn
  without a double counts only when it was close: the best equity minus min(DT, 1) is below 0.16 EMG
  (GNU Backgammon's ``isCloseCubedecision``). With ``cube_rollout`` (money sessions without the Jacoby rule), ND
  and DT come from a cubeful rollout by the bot instead (``Bot.cube_decision(..., rollout=...)``), about a second
  a decision; each cube decision says how it was judged (``method``).
* **Error rate** = 1000 x total error / (unforced checker plays + counted cube decisions), in millipoints (mEMG)
  per decision; **PR** (eXtreme Gammon's performance rating, approximately) = 500 x total error / the same
  decisions, i.e. half the error rate.
* **Marks**: doubtful >= 0.03, bad >= 0.06, very bad >= 0.12 EMG lost (GNU Backgammon 1.07's defaults).
* **Luck** of a roll = the equity after the best play of the roll rolled minus the mean, over the 36 rolls, of the
  equity after the best play of each (0-ply, cubeful, EMG, the roller's view). The opening roll is averaged over
  the 30 non-doubles. Rolls are marked lucky (> 0.3), very lucky (> 0.6), unlucky (< -0.3), very unlucky (< -0.6).
* **Luck-adjusted result** = actual result minus (own luck - opponent's luck), in MWC for a match (the actual
  result being the final match-winning chance minus the one at the start) and in points for money.
"""

from __future__ import annotations

import math
import time
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np

from bgai.core.cube import CENTERED, MAX_CUBE, ON_ROLL, CubeOwner, CubeState, payoff_of
from bgai.core.dice import ROLL_INDEX, ROLL_WEIGHTS, ROLLS
from bgai.core.game import Evaluator
from bgai.core.match import match_equity
from bgai.core.movegen import Afterstates, afterstates
from bgai.core.notation import format_steps
from bgai.eval.bot import CUBE_ROLLOUT, Bot, cube_rollout_refusal
from bgai.eval.weights import equity, flip
from bgai.formats.matchfile import CheckerPlay, Double, Drop, GameRecord, GameState, MatchRecord, Resign, Take
from bgai.formats.matchfile.mat import row_numbers
from bgai.formats.position import Position

# GNU Backgammon 1.07's default thresholds (its "show analysis"), in EMG.
MARKS = ((0.12, "very bad"), (0.06, "bad"), (0.03, "doubtful"))
LUCK_MARKS = ((0.6, "very lucky"), (0.3, "lucky"), (-0.3, "unlucky"), (-0.6, "very unlucky"))
CLOSE_CUBE = 0.16
# GNU Backgammon's ratings by error per decision (EMG).
RATINGS = ((0.002, "Supernatural"), (0.005, "World class"), (0.008, "Expert"), (0.012, "Advanced"),
           (0.018, "Intermediate"), (0.026, "Casual player"), (0.035, "Beginner"), (math.inf, "Awful!"))
CANDIDATES = 5  # plays kept per checker decision for the reports
CHUNK = 64  # decisions judged together (and the progress bar's step)
_OPENING_ROLLS = ROLLS[ROLLS[:, 0] != ROLLS[:, 1]]
_OPENING_INDEX = np.full((7, 7), -1, dtype=np.int64)  # like ROLL_INDEX, into _OPENING_ROLLS; -1 for doubles
for _i, (_a, _b) in enumerate(_OPENING_ROLLS):
    _OPENING_INDEX[_a, _b] = _OPENING_INDEX[_b, _a] = _i

DEFINITIONS = {
    "equity": "Cubeful equity in EMG (equivalent to money game): for a match, the match-winning chance (Kazaross-XG2 "
              "table) rescaled so that losing the current cube is -1 and winning it +1; for money, equity per unit "
              "of the current cube. Costs are also given in MWC (match) or points (money). [GNU Backgammon manual, "
              "'normalized equity' / EMG]",
    "checker_error": "Best play's equity minus the equity of the play made, each judged at the bot's plies (move "
                     "filters as the bot's; the play made always judged at full depth), n-ply cubeless "
                     "probabilities made cubeful by Janowski's formula with the opponent on roll. A roll with one "
                     "legal play (or none) is forced: not a decision.",
    "cube_error": "ND, DT, DP = cubeful equities of no double, double/take, double/pass (DP = +1) at the plies of "
                  "the bot's cube (cube_plies). Doubler's error = max(ND, min(DT, DP)) minus min(DT, DP) if it "
                  "doubled, ND if not; taker's error = DT - DP for a wrong take, DP - DT for a wrong pass. Turns "
                  "where the cube is not available (or dead: the doubler wins the match with the current cube) are "
                  "not decisions.",
    "counted_decisions": "Unforced checker plays, every double, take and pass, and the turns without a double whose "
                         "decision was close: max(ND, min(DT, DP)) - min(DT, 1) < 0.16. [GNU Backgammon eval.c "
                         "isCloseCubedecision, analysis.c]",
    "error_rate": "1000 x total error (EMG) / counted decisions, in mEMG per decision. [GNU Backgammon's 'error "
                  "rate']",
    "pr": "500 x total error (EMG) / counted decisions (half the error rate): a PR-style figure. eXtreme Gammon's "
          "PR counts its 'non-obvious' decisions its own way, so this approximates it.",
    "marks": "doubtful >= 0.03, bad >= 0.06, very bad >= 0.12 EMG lost. [GNU Backgammon 1.07 defaults, 'show "
             "analysis'; earlier releases used 0.04/0.08/0.16]",
    "ratings": "By error per decision (EMG): < 0.002 Supernatural, < 0.005 World class, < 0.008 Expert, < 0.012 "
               "Advanced, < 0.018 Intermediate, < 0.026 Casual player, < 0.035 Beginner, else Awful!. [GNU "
               "Backgammon]",
    "luck": "Equity after the best play of the roll rolled minus the mean over the 36 rolls (30 non-doubles for "
            "the opening roll) of the equity after each roll's best play; 0-ply, cubeful, EMG, the roller's view. "
            "Marks: lucky > 0.3, very lucky > 0.6, unlucky < -0.3, very unlucky < -0.6. [GNU Backgammon analysis]",
    "luck_adjusted_result": "Actual result minus (own luck - opponent's luck): in MWC for a match (actual result = "
                            "final match-winning chance minus the one at the start), in points for money. [GNU "
                            "Backgammon]",
}
#: The definition an analysis adds where a rollout judged its cube decisions (``analyse_match(cube_rollout=...)``).
CUBE_ROLLOUT_DEFINITION = (
    "ND and DT of each cube decision from a cubeful rollout by the bot (no double and double/take on the same dice; "
    "Bot.cube_decision(..., rollout=...)) instead of its formula; DP = +1. Money sessions without the Jacoby rule or "
    "beavers only, the rollout's rules. The decisions so judged say method 'rollout'.")


@dataclass
class Decision:
    """One decision and the bot's judgement of it, from the side of ``player``, the seat deciding.

    ``kind``: ``"move"`` (a checker play), ``"double"`` (the player on roll's choice to double or not) or
    ``"take"`` (the answer to a double). ``position`` is seen from the player on roll (the mover; for cube decisions
    the doubler, also for the taker's). ``played`` and ``best`` are plays in standard notation or ``"double"``,
    ``"no double"``, ``"take"``, ``"pass"``. ``error`` is the EMG lost (>= 0), ``cost`` the same in MWC (match) or
    points (money). ``counted``: it counts in the error rate. ``candidates``: for moves, (play, EMG equity for the
    mover, plies) best first; for cube decisions, the equities of no double, double/take and double/pass (EMG,
    the doubler's). ``luck`` (moves only): the roll's luck in EMG. ``method`` (cube decisions only): how the bot
    judged it, ``"formula"`` (its cubeless probabilities made cubeful, at its cube's plies) or ``"rollout"`` (a cubeful
    rollout).
    """

    kind: str
    game: int
    row: int
    player: int
    position: Position
    cube: int
    cube_owner: int | None
    dice: tuple[int, int] | None
    played: str
    best: str
    error: float
    cost: float
    counted: bool
    candidates: list = field(default_factory=list)
    luck: float | None = None
    luck_cost: float | None = None
    method: str | None = None

    @property
    def mark(self) -> str | None:
        return mark_of(self.error) if self.counted else None

    @property
    def luck_mark(self) -> str | None:
        return None if self.luck is None else luck_mark_of(self.luck)

    def to_dict(self) -> dict:
        return {
            "kind": self.kind, "game": self.game, "row": self.row, "player": self.player,
            "position_id": self.position.position_id(), "cube": self.cube, "cube_owner": self.cube_owner,
            "dice": list(self.dice) if self.dice else None, "played": self.played, "best": self.best,
            "error": round(self.error, 6), "cost": round(self.cost, 6), "counted": self.counted, "mark": self.mark,
            "candidates": [[c[0]] + [round(float(v), 6) if isinstance(v, float) else v for v in c[1:]]
                           for c in self.candidates],
            "luck": None if self.luck is None else round(self.luck, 6), "luck_mark": self.luck_mark,
            "method": self.method,
        }


def mark_of(error: float) -> str | None:
    return next((name for threshold, name in MARKS if error >= threshold - 1e-12), None)


def luck_mark_of(luck: float) -> str | None:
    """The mark of a roll's luck (EMG, the mover's): the most extreme of ``LUCK_MARKS`` it passes, as gnubg marks
    it (a roll of -0.706 is very unlucky, not unlucky)."""
    for threshold, name in sorted(LUCK_MARKS, key=lambda mark: -abs(mark[0])):
        if (threshold > 0 and luck > threshold) or (threshold < 0 and luck < threshold):
            return name
    return None


def rating_of(error_per_decision: float) -> str:
    return next(name for limit, name in RATINGS if error_per_decision < limit)


@dataclass
class PlayerSummary:
    """One player's figures (errors in EMG, costs in MWC for a match or points for money)."""

    name: str
    moves: int = 0
    unforced: int = 0
    checker_error: float = 0.0
    checker_cost: float = 0.0
    checker_marks: dict = field(default_factory=lambda: {"doubtful": 0, "bad": 0, "very bad": 0})
    cube_decisions: int = 0
    close_cube: int = 0
    doubles: int = 0
    takes: int = 0
    drops: int = 0
    cube_error: float = 0.0
    cube_cost: float = 0.0
    cube_marks: dict = field(default_factory=lambda: {"doubtful": 0, "bad": 0, "very bad": 0})
    luck: float = 0.0
    luck_cost: float = 0.0
    luck_marks: dict = field(default_factory=lambda: {name: 0 for _, name in LUCK_MARKS})
    resignations: int = 0
    resign_error: float = 0.0
    resign_cost: float = 0.0
    actual_result: float = 0.0
    luck_adjusted_result: float = 0.0

    @property
    def decisions(self) -> int:
        return self.unforced + self.close_cube + self.resignations

    @property
    def total_error(self) -> float:
        return self.checker_error + self.cube_error + self.resign_error

    @property
    def checker_rate(self) -> float:
        """mEMG per unforced checker play."""
        return 1000 * self.checker_error / self.unforced if self.unforced else 0.0

    @property
    def cube_rate(self) -> float:
        """mEMG per counted cube decision."""
        return 1000 * self.cube_error / self.close_cube if self.close_cube else 0.0

    @property
    def error_rate(self) -> float:
        """mEMG per counted decision (checker, cube and resignation)."""
        return 1000 * self.total_error / self.decisions if self.decisions else 0.0

    @property
    def pr(self) -> float:
        return self.error_rate / 2

    @property
    def rating(self) -> str:
        return rating_of(self.error_rate / 1000)

    def to_dict(self) -> dict:
        out = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.__dict__.items()}
        out.update(decisions=self.decisions, total_error=round(self.total_error, 6),
                   checker_rate=round(self.checker_rate, 3), cube_rate=round(self.cube_rate, 3),
                   error_rate=round(self.error_rate, 3), pr=round(self.pr, 3), rating=self.rating)
        return out


@dataclass
class MatchAnalysis:
    """The analysis of a match: its decisions in order, each player's summary, the equity graph and the time.
    ``cube_rollout``: the rollout's settings where a rollout judged the cube decisions (else ``None``);
    ``cube_rollout_refusal``: why a rollout asked for did not (a match, the Jacoby rule), else ``None``."""

    record: MatchRecord
    bot: str
    plies: int
    decisions: list[Decision]
    players: tuple[PlayerSummary, PlayerSummary]
    graph: list[dict]
    seconds: float
    cube_rollout: dict | None = None
    cube_rollout_refusal: str | None = None
    cube_plies: int | None = None  # the lookahead of the formula's cube decisions (None: the same as plies)
    met: str | None = None  # the match equity table (None: the default, Kazaross-XG2)

    @property
    def marked(self) -> list[Decision]:
        return [d for d in self.decisions if d.mark]

    @property
    def cube_method(self) -> str:
        """How the cube decisions were judged: ``"rollout"`` or ``"formula"``."""
        return "formula" if self.cube_rollout is None else "rollout"

    @property
    def definitions(self) -> dict:
        """``DEFINITIONS``, with the rollout's where a rollout judged the cube decisions."""
        return DEFINITIONS if self.cube_rollout is None else {**DEFINITIONS, "cube_rollout": CUBE_ROLLOUT_DEFINITION}

    @property
    def cube_method_text(self) -> str:
        """How the cube decisions were judged, in words (and why not by a rollout asked for)."""
        o = self.cube_rollout
        if o is None:
            why = f": {self.cube_rollout_refusal}" if self.cube_rollout_refusal else ""
            return f"the bot's formula at {self.plies if self.cube_plies is None else self.cube_plies}-ply{why}"
        depth = f"truncated after {o['truncate']} plies" if o.get("truncate") else "played to the end"
        reduced = "with" if o.get("variance_reduction", True) else "without"
        play = self.plies if o.get("plies") is None else o["plies"]
        return f"a cubeful rollout ({o['trials']} trials {depth}, {play}-ply play, {reduced} variance reduction)"

    def to_dict(self) -> dict:
        """Everything as JSON-ready data (``bgai analyse --json``)."""
        record = self.record
        return {
            "match": {"players": list(record.players), "length": record.length, "games": len(record.games),
                      "score": list(record.score), "winner": record.winner, "metadata": record.metadata,
                      "crawford": record.crawford, "jacoby": record.jacoby},
            "bot": self.bot, "plies": self.plies, "cube_plies": self.cube_plies, "seconds": round(self.seconds, 3),
            "met": self.met or "kazaross-xg2",
            "cube_method": self.cube_method, "cube_rollout": self.cube_rollout,
            "cube_rollout_refusal": self.cube_rollout_refusal,
            "units": {"error": "EMG", "cost": "MWC" if record.length else "points"},
            "definitions": self.definitions,
            "players": [p.to_dict() for p in self.players],
            "decisions": [d.to_dict() for d in self.decisions],
            "graph": self.graph,
        }


# The cube states of decisions --------------------------------------------------------------------------------------


#: The match equity table of the analysis under way (``analyse_match``'s ``met``; None: the default).
_MET: ContextVar = ContextVar("bgai_analysis_met", default=None)


def _cube_state(rows: list[tuple[GameRecord, int, int, int | None]], jacoby: bool) -> CubeState:
    """A ``CubeState`` of (game, seat on roll, cube value, owning seat or None) rows, from each seat on roll."""
    value = np.array([r[2] for r in rows], dtype=np.int64)
    owner = np.array([CubeOwner.of_seat(r[3], r[1]) for r in rows], np.int8)
    game = rows[0][0] if rows else None
    if game is None or game.length == 0:
        return CubeState(value, owner, jacoby=jacoby)
    away = np.array([(g.length - g.score[s], g.length - g.score[1 - s]) for g, s, _, _ in rows], dtype=np.int64)
    crawford = np.array([g.crawford for g, *_ in rows])
    post = np.array([g.post_crawford for g, *_ in rows])
    return CubeState(value, owner, away, crawford, post, met=_MET.get())


def _stake(state: CubeState) -> tuple[np.ndarray, np.ndarray]:
    """(lose the cube, win the cube) of each row, in the units of ``cube_equities`` (MWC, or 1 per cube)."""
    if not state.is_match:
        return -np.ones(len(state)), np.ones(len(state))
    ends = payoff_of(state)(np.stack([-state.value, state.value], axis=1))
    return ends[:, 0], ends[:, 1]


def _emg(values: np.ndarray, state: CubeState) -> np.ndarray:
    lose, win = _stake(state)
    return 2 * (values - lose) / (win - lose) - 1


def _cost(emg: np.ndarray, state: CubeState) -> np.ndarray:
    """EMG differences in MWC (match) or points (money)."""
    lose, win = _stake(state)
    return emg * (win - lose) / 2 * (1 if state.is_match else state.value)


def _after_values(bot: Bot, probs: np.ndarray, after: np.ndarray, mover: CubeState) -> np.ndarray:
    """The mover's cubeful equity (MWC, or per cube for money) after plays ``after`` (the opponent on roll, its
    cubeless ``probs``), the opponent taking its best cube action: Janowski's formula with the bot's cube
    efficiency (``Bot.janowski``)."""
    theirs = bot.janowski(probs, after, mover.switched()).equity
    return 1 - theirs if mover.is_match else -theirs


# Luck ------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RollSpread:
    """Every roll of N positions (on-roll view, before the roll) with every play of each roll, for the luck of
    rolls (``luck``): R rolls in all, 21 a position (15 non-doubles for an opening roll)."""

    turn_of: np.ndarray  # (R,) the position each roll belongs to
    first: np.ndarray  # (N,) each position's first roll (an index into R)
    opening: np.ndarray  # (N,) whose rolls are opening rolls
    weights: np.ndarray  # (R,) each roll's probability
    plays: Afterstates  # the plays of all rolls, ``owner`` indexing the R rolls

    @classmethod
    def of(cls, boards: np.ndarray, opening=False) -> RollSpread:
        """``opening`` (N,) or one bool: which positions are rolled for by an opening roll (no doubles)."""
        boards = np.asarray(boards, dtype=np.int8)
        n = len(boards)
        opening = np.broadcast_to(np.asarray(opening, dtype=bool), (n,))
        counts = np.where(opening, len(_OPENING_ROLLS), len(ROLLS))
        turn_of = np.repeat(np.arange(n), counts)
        rolls = np.concatenate([_OPENING_ROLLS if first else ROLLS for first in opening])
        weights = np.concatenate([np.full(len(_OPENING_ROLLS), 1 / len(_OPENING_ROLLS)) if first else ROLL_WEIGHTS
                                  for first in opening])
        plays = afterstates(boards[turn_of], rolls, validate=False)
        return cls(turn_of, np.r_[0, np.cumsum(counts)[:-1]], opening, weights, plays)

    def index(self, dice: np.ndarray, rows=None) -> np.ndarray:
        """The roll (index into R) of ``dice`` (K×2) rolled at positions ``rows`` (K,; default all N in order)."""
        rows = np.arange(len(self.first)) if rows is None else np.asarray(rows)
        dice = np.asarray(dice, dtype=np.int64)
        among = np.where(self.opening[rows], _OPENING_INDEX[dice[:, 0], dice[:, 1]], ROLL_INDEX[dice[:, 0], dice[:, 1]])
        if (among < 0).any():
            raise ValueError("every roll must be one of its position's rolls (an opening roll: no doubles)")
        return self.first[rows] + among

    def luck(self, values: np.ndarray, actual: np.ndarray) -> np.ndarray:
        """(K,) the luck of the rolls ``actual`` (indices into R, see ``index``) for the player who rolled: with
        ``values`` (one per row of ``plays``, the mover's value of that play, higher is better), the value of the
        best play of the roll rolled minus the mean over its position's rolls of their best plays' values."""
        starts = np.flatnonzero(np.r_[True, self.plays.owner[1:] != self.plays.owner[:-1]])
        best = np.maximum.reduceat(np.asarray(values, dtype=np.float64), starts)
        mean = np.bincount(self.turn_of, weights=self.weights * best, minlength=len(self.first))
        return best[actual] - mean[self.turn_of[actual]]


def roll_luck(bot: Evaluator, boards: np.ndarray, dice: np.ndarray, opening=False) -> np.ndarray:
    """(N,) the cubeless luck of each roll ``dice`` (N×2) rolled at ``boards`` (on-roll view) for the player who
    rolled it, in points a game (gammons and backgammons counted): the equity (``bot`` at 0-ply) after the best
    play of the roll minus the mean over the rolls of their best plays' (see ``RollSpread``); ``opening``: the
    rolls open the game (15 non-doubles). A position met several times is expanded once.

    Whatever the evaluator, a roll's luck averages to zero over the rolls that could have come, so a game's
    result minus the luck of its rolls is an unbiased estimate of the game's expected result with far less
    variance: ``bgai.core.game.play_games(luck=...)``.
    """
    boards = np.asarray(boards, dtype=np.int8)
    opening = np.broadcast_to(np.asarray(opening, dtype=bool), (len(boards),))
    keyed = np.concatenate([boards, opening[:, None].astype(np.int8)], axis=1)
    unique, inverse = np.unique(keyed, axis=0, return_inverse=True)
    spread = RollSpread.of(unique[:, :-1], unique[:, -1].astype(bool))
    values = equity(flip(bot.probabilities(spread.plays.after).astype(np.float64)))
    return spread.luck(values, spread.index(dice, inverse.ravel()))

# The analysis --------------------------------------------------------------------------------------------------------


@dataclass
class _Turn:
    game: GameRecord
    index: int  # of the action in the game
    row: int
    seat: int
    state: GameState
    action: CheckerPlay


def analyse_match(record: MatchRecord, bot: Bot, progress: bool = True,
                  cube_rollout: bool | dict = False, on_progress=None, met: str | None = None) -> MatchAnalysis:
    """Judge every decision of ``record`` with ``bot`` (checker play at its plies, the cube at its ``cube_plies``).
    See the module docstring for the definitions. ``progress`` shows a tqdm bar over the decisions;
    ``on_progress(done, total)`` is called as they are judged (the web page's progress); ``met``: the match equity
    table of a match (``bgai.core.match.METS``; default Kazaross-XG2).

    ``cube_rollout``: judge the cube decisions of a money session by a cubeful rollout (``True``: ``CUBE_ROLLOUT``'s
    settings; a dict of ``bgai.eval.rollout.rollout``'s options changes them), about a second a decision, instead of the
    bot's formula. A match, or money with the Jacoby rule, keeps the formula, and the analysis's
    ``cube_rollout_refusal`` says why.
    """
    from bgai.core.match import met_table

    token = _MET.set(met_table(met) if met else None)
    try:
        analysis = _analyse(record, bot, progress, cube_rollout, on_progress)
    finally:
        _MET.reset(token)
    analysis.met = met
    return analysis


def _analyse(record: MatchRecord, bot: Bot, progress: bool, cube_rollout: bool | dict, on_progress) -> MatchAnalysis:
    from tqdm.auto import tqdm

    started = time.perf_counter()
    rollout, refusal = None, None
    if cube_rollout:
        refusal = cube_rollout_refusal(record if record.length else None, jacoby=record.jacoby)
        if not refusal:
            rollout = {**CUBE_ROLLOUT, **(cube_rollout if isinstance(cube_rollout, dict) else {})}
    turns: list[_Turn] = []
    # (game, action index, row, state, Double or None): the player on roll's cube decision before its roll.
    cube_points: list[tuple[GameRecord, int, int, GameState, Double | None]] = []
    answers: dict = {}  # index in cube_points -> (action index, row, the Take/Drop that answered its double)
    # each accepted resignation: (game, action index, the row it was written on, state, Resign)
    resignations: list[tuple[GameRecord, int, int, GameState, Resign]] = []
    for game in record.games:
        last_row = 1
        for index, ((state, action), row) in enumerate(zip(game.steps(), row_numbers(game))):
            if isinstance(action, Resign) and action.player == state.turn:  # (one out of turn is not judged)
                resignations.append((game, index, last_row, state, action))
            if row is None:  # a resignation or the result: no decision of a row of its own
                continue
            last_row = row
            if isinstance(action, CheckerPlay):
                turns.append(_Turn(game, index, row, action.player, state, action))
                if _cube_available(game, state):
                    cube_points.append((game, index, row, state, None))
            elif isinstance(action, Double):
                cube_points.append((game, index, row, state, action))
            elif isinstance(action, (Take, Drop)):
                answers[len(cube_points) - 1] = (index, row, action)
    # The bar counts what the report counts: the checker plays, the cube decisions and the answers to doubles.
    bar = _Progress(tqdm(total=len(turns) + len(cube_points) + len(answers) + 2 * len(resignations),
                         desc="analysing", unit="decision", disable=not progress), on_progress)
    decisions: list[tuple[tuple, Decision]] = []
    for lo in range(0, len(cube_points), CHUNK):
        decisions += _cube_decisions(record, bot, cube_points[lo:lo + CHUNK], answers, lo, rollout, bar)
    decisions += _resignations(record, bot, resignations)
    bar.update(2 * len(resignations))
    graph_points: dict = {}
    for lo in range(0, len(turns), CHUNK):
        chunk = turns[lo:lo + CHUNK]
        decisions += _checker_decisions(record, bot, chunk, graph_points)
        bar.update(len(chunk))
    bar.close()
    decisions.sort(key=lambda item: item[0])
    ordered = [d for _, d in decisions]
    players = _summaries(record, ordered)
    graph = _graph(record, turns, graph_points)
    return MatchAnalysis(record, bot.name, bot.plies, ordered, players, graph, time.perf_counter() - started,
                         cube_rollout=rollout, cube_rollout_refusal=refusal, cube_plies=bot.cube_plies)


class _Progress:
    """A tqdm bar that also tells ``on_progress(done, total)``."""

    def __init__(self, bar, on_progress) -> None:
        self.bar, self.on_progress, self.done = bar, on_progress, 0
        if on_progress is not None:
            on_progress(0, bar.total)

    def update(self, n: int) -> None:
        self.bar.update(n)
        self.done += n
        if self.on_progress is not None:
            self.on_progress(self.done, self.bar.total)

    def close(self) -> None:
        self.bar.close()


def _cube_available(game: GameRecord, state) -> bool:
    """The rules let the player on roll double here, and a double could gain it something."""
    if state.moves == 0 or state.doubled or game.crawford or state.cube >= MAX_CUBE:
        return False
    if state.cube_owner not in (None, state.turn):
        return False
    return not (game.length and game.length - game.score[state.turn] <= state.cube)


def _order(game: GameRecord, index: int, rank: int) -> tuple:
    """Decisions in the order they were made: by game, action, and before a roll the cube before the play."""
    return (game.number, index, rank)


def _cube_decisions(record: MatchRecord, bot: Bot, points: list, answers: dict, offset: int, rollout: dict | None,
                    bar) -> list:
    """The cube decisions of ``points`` (and the answers to their doubles): by the bot's formula, all at once, or
    with ``rollout`` (money) one cubeful rollout a point, the progress ``bar`` moved after each."""
    if not points:
        return []
    if rollout is None:
        boards = np.stack([state.position.board for _, _, _, state, _ in points])
        state = _cube_state([(g, s.turn, s.cube, s.cube_owner) for g, _, _, s, _ in points], record.jacoby)
        eq = bot.cube_equities(boards, state)
        nd, dt, dp = (eq.emg(v) for v in (eq.no_double, eq.double_take, eq.double_pass))
    else:  # money: equities per current stake are EMG already
        nd, dt, dp = (np.empty(len(points)) for _ in range(3))
        for i, (_, _, _, s, _) in enumerate(points):
            owner = CENTERED if s.cube_owner is None else ON_ROLL  # a cube point's cube is never the opponent's
            d = bot.cube_decision(s.position, s.cube, owner, rollout=rollout)
            nd[i], dt[i], dp[i] = d.no_double, d.double_take, d.double_pass
            bar.update(1)
    method = "formula" if rollout is None else "rollout"
    out = []
    for i, (game, index, row, s, action) in enumerate(points):
        doubled_worth = min(dt[i], dp[i])
        best = max(nd[i], doubled_worth)
        doubled = action is not None
        error = best - (doubled_worth if doubled else nd[i])
        close = bool(best - min(dt[i], 1.0) < CLOSE_CUBE)
        candidates = [("No double", float(nd[i])), ("Double, take", float(dt[i])), ("Double, pass", float(dp[i]))]
        one = _cube_state([(game, s.turn, s.cube, s.cube_owner)], record.jacoby)
        common = dict(game=game.number, position=s.position, cube=s.cube, cube_owner=s.cube_owner, dice=None,
                      candidates=candidates, method=method)
        out.append((_order(game, index, 0), Decision(
            kind="double", row=row, player=s.turn, played="double" if doubled else "no double",
            best="double" if doubled_worth > nd[i] else "no double", error=float(error),
            cost=float(_cost(np.array([error]), one)[0]), counted=doubled or close, **common)))
        if doubled and offset + i in answers:
            answer_index, answer_row, answer = answers[offset + i]
            take = isinstance(answer, Take)
            wrong = (dt[i] - dp[i]) if take else (dp[i] - dt[i])
            error = max(0.0, float(wrong))
            out.append((_order(game, answer_index, 0), Decision(
                kind="take", row=answer_row, player=answer.player, played="take" if take else "pass",
                best="take" if dt[i] <= dp[i] else "pass", error=error,
                cost=float(_cost(np.array([error]), one)[0]), counted=True, **common)))
    bar.update(len(out) - (0 if rollout is None else len(points)))
    return out


#: A resignation's level in words.
RESIGN_LEVELS = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


def _resignations(record: MatchRecord, bot: Bot, resignations: list) -> list:
    """Each accepted resignation judged twice: the resigner's choice (to resign, against playing on) and its
    opponent's (to accept, against playing on), by the bot's cubeful equity of the position (its cube plies, the
    player on roll's best cube action included), in EMG. Playing on is worth that equity to the resigner, the
    resignation ``level`` times the cube against it; whichever side misjudged loses the difference. (The resigner
    is the player on roll, whose side the position and the equities are seen from.)"""
    out = []
    for game, index, row, s, action in resignations:
        one = _cube_state([(game, s.turn, s.cube, s.cube_owner)], record.jacoby)
        eq = bot.cube_equities(s.position.board[None], one)
        play_on = float(eq.emg(eq.equity)[0])
        if record.length:  # the match-winning chance of losing those points, as EMG
            resigned = float(_emg(payoff_of(one)(np.array([[-action.level * s.cube]]))[:, 0], one)[0])
        else:
            resigned = -float(action.level)
        words = RESIGN_LEVELS.get(action.level, f"{action.level} times the cube")
        candidates = [("Play on", play_on), (f"Resign {words}", resigned)]
        common = dict(game=game.number, row=row, position=s.position, cube=s.cube, cube_owner=s.cube_owner,
                      dice=None, counted=True, candidates=candidates)
        error = max(0.0, play_on - resigned)
        out.append((_order(game, index, 0), Decision(
            kind="resign", player=action.player, played=f"resign {words}",
            best=f"resign {words}" if resigned >= play_on else "play on", error=error,
            cost=float(_cost(np.array([error]), one)[0]), **common)))
        error = max(0.0, resigned - play_on)  # (the acceptor's side: -resigned against -play_on)
        out.append((_order(game, index, 1), Decision(
            kind="accept", player=1 - action.player, played="accept",
            best="accept" if resigned >= play_on else "play on", error=error,
            cost=float(_cost(np.array([error]), one)[0]), **common)))
    return out


def judge_plays(bot: Bot, boards: np.ndarray, dice: np.ndarray, mover: CubeState, played: np.ndarray):
    """Every legal play of N positions (on-roll view) and rolls, judged as the analysis judges a checker play: each
    play's cubeful equity for the mover in EMG (``mover``: its cube and score), at 0-ply, then deeper through the
    bot's move filters up to its plies, the play ``played`` (N afterstates, the opponent's view) always judged at
    full depth. Returns ``(moves, values, depth, is_played)``: ``bgai.core.movegen.afterstates``' plays with their
    steps, each one's EMG, the ply it was judged at, and which is the one played (a roll with one play: 0-ply)."""
    n = len(boards)
    moves = afterstates(boards, dice, return_steps=True, validate=False)
    is_played = (moves.after == played[moves.owner]).all(axis=1)
    state_rows = mover.select(moves.owner)
    values = _emg(_after_values(bot, bot.probabilities(moves.after), moves.after, state_rows), state_rows)
    depth = np.zeros(len(moves.after), dtype=np.int64)
    alive = np.arange(len(moves.after))
    sizes = np.bincount(moves.owner, minlength=n)
    alive = alive[sizes[moves.owner[alive]] > 1]  # forced plays are no decision
    for ply in range(1, bot.plies + 1):
        stage = bot.filters[ply - 1] if ply - 1 < len(bot.filters) else None
        if stage is not None and len(alive):
            keep = stage.apply(values[alive], moves.owner[alive]) | is_played[alive]
            alive = alive[keep]
        following = bot.filters[ply] if ply < len(bot.filters) else None
        if not len(alive) or (ply < bot.plies and following is None):
            continue
        probs = bot.lookahead(moves.after[alive], ply)
        sub = state_rows.select(alive)
        values[alive] = _emg(_after_values(bot, probs, moves.after[alive], sub), sub)
        depth[alive] = ply
    return moves, values, depth, is_played


def _checker_decisions(record: MatchRecord, bot: Bot, turns: list[_Turn], graph_points: dict) -> list:
    """Errors of the plays of ``turns`` (at the bot's plies) and the luck of their rolls (0-ply)."""
    mover = _cube_state([(t.game, t.seat, t.state.cube, t.state.cube_owner) for t in turns], record.jacoby)
    boards = np.stack([t.state.position.board for t in turns])
    dice = np.array([sorted(t.action.dice, reverse=True) for t in turns], dtype=np.int8)

    # Luck, and every play's 0-ply value for the roll rolled: all rolls of every turn at once.
    spread = RollSpread.of(boards, np.array([t.state.moves == 0 for t in turns]))
    rows_state = mover.select(spread.turn_of[spread.plays.owner])
    native = _after_values(bot, bot.probabilities(spread.plays.after), spread.plays.after, rows_state)
    emg = _emg(native, rows_state)
    actual = spread.index(dice)
    luck = spread.luck(emg, actual)
    luck_native = spread.luck(native, actual)
    luck_cost = luck_native * (1 if mover.is_match else mover.value)
    for i, t in enumerate(turns):  # the play made, at 0-ply: the equity graph
        rows = np.flatnonzero(spread.plays.owner == actual[i])
        hit = rows[(spread.plays.after[rows] == t.action.move.after.board).all(axis=1)]
        graph_points[(t.game.number, t.row, t.seat)] = float(native[hit[0]])

    # The plays of the rolls rolled, judged at the bot's plies.
    played_board = np.stack([t.action.move.after.board for t in turns])
    moves, values, depth, is_played = judge_plays(bot, boards, dice, mover, played_board)
    steps = moves.steps
    assert steps is not None  # (asked for)

    out = []
    for i, t in enumerate(turns):
        rows = np.flatnonzero(moves.owner == i)
        played_row = rows[is_played[rows]][0]
        ranked = rows[np.lexsort((-values[rows], -depth[rows]))]
        forced = len(rows) == 1
        best_row = ranked[0]
        error = 0.0 if forced else max(0.0, float(values[best_row] - values[played_row]))
        one = mover.select([i])
        candidates = [(_notation(steps[r]), float(values[r]), int(depth[r])) for r in ranked[:CANDIDATES]]
        if played_row not in ranked[:CANDIDATES]:
            candidates.append((_notation(steps[played_row]), float(values[played_row]), int(depth[played_row])))
        out.append((_order(t.game, t.index, 1), Decision(
            kind="move", game=t.game.number, row=t.row, player=t.seat, position=t.state.position,
            cube=t.state.cube, cube_owner=t.state.cube_owner, dice=(int(t.action.dice[0]), int(t.action.dice[1])),
            played=str(t.action.move), best=_notation(steps[best_row]), error=error,
            cost=float(_cost(np.array([error]), one)[0]), counted=not forced, candidates=candidates,
            luck=float(luck[i]), luck_cost=float(luck_cost[i]))))
    return out


def _notation(steps: np.ndarray) -> str:
    return format_steps([(int(f), int(t), bool(h)) for f, t, h in steps if f >= 0])


def _summaries(record: MatchRecord, decisions: list[Decision]) -> tuple[PlayerSummary, PlayerSummary]:
    players = (PlayerSummary(record.players[0]), PlayerSummary(record.players[1]))
    for d in decisions:
        p = players[d.player]
        if d.kind in ("resign", "accept"):
            p.resignations += 1
            p.resign_error += d.error
            p.resign_cost += d.cost
            continue
        if d.kind == "move":
            p.moves += 1
            if d.luck is not None and d.luck_cost is not None:  # (every checker play's)
                p.luck += d.luck
                p.luck_cost += d.luck_cost
            if d.luck_mark:
                p.luck_marks[d.luck_mark] += 1
            if d.counted:
                p.unforced += 1
                p.checker_error += d.error
                p.checker_cost += d.cost
                if d.mark:
                    p.checker_marks[d.mark] += 1
            continue
        p.cube_decisions += 1
        if d.kind == "double" and d.played == "double":
            p.doubles += 1
        elif d.kind == "take":
            p.takes += d.played == "take"
            p.drops += d.played == "pass"
        if d.counted:
            p.close_cube += 1
            p.cube_error += d.error
            p.cube_cost += d.cost
            if d.mark:
                p.cube_marks[d.mark] += 1
    # Actual and luck-adjusted results: MWC for a match, points for money.
    if record.games:
        first, final = record.games[0].score, record.score
        for seat, p in enumerate(players):
            if record.length:
                start = float(match_equity(record.length - first[seat], record.length - first[1 - seat],
                                           record.games[0].post_crawford, _MET.get()))
                end = _final_mwc(record, seat)
                p.actual_result = end - start
            else:
                p.actual_result = float((final[seat] - first[seat]) - (final[1 - seat] - first[1 - seat]))
        for seat, p in enumerate(players):
            p.luck_adjusted_result = p.actual_result - (p.luck_cost - players[1 - seat].luck_cost)
    return players


def _final_mwc(record: MatchRecord, seat: int) -> float:
    score = record.score
    if record.winner is not None:
        return 1.0 if record.winner == seat else 0.0
    last = record.games[-1]
    if last.result is None:  # the unfinished game counts at its starting score
        score = last.score
    post = any(g.crawford or g.post_crawford for g in record.games) and any(
        record.length - s == 1 for s in score)
    return float(match_equity(record.length - score[seat], record.length - score[1 - seat], post, _MET.get()))


def _graph(record: MatchRecord, turns: list[_Turn], values: dict) -> list[dict]:
    """Seat 0's match-winning chance (match) or expected points won so far (money) after each checker play
    (0-ply), with the value at the start and end of each game."""
    points = []
    length = record.length
    by_game: dict[int, list[_Turn]] = {}
    for t in turns:
        by_game.setdefault(t.game.number, []).append(t)
    for game in record.games:
        s0, s1 = game.score
        base = s0 - s1 - (record.games[0].score[0] - record.games[0].score[1])

        def value(v_seat0: float, base=base) -> float:
            return v_seat0 if length else base + v_seat0

        start = (float(match_equity(length - s0, length - s1, game.post_crawford, _MET.get())) if length else 0.0)
        points.append({"game": game.number, "row": 0, "player": None, "value": round(value(start), 6),
                       "label": "start"})
        for t in by_game.get(game.number, []):
            native = values[(game.number, t.row, t.seat)]
            if length:
                v = native if t.seat == 0 else 1 - native
            else:
                v = (native if t.seat == 0 else -native) * t.state.cube
            points.append({"game": game.number, "row": t.row, "player": t.seat, "value": round(value(v), 6),
                           "label": f"{t.action.dice[0]}{t.action.dice[1]} {t.action.move}"})
        if game.result is not None:
            won = game.result.points if game.result.player == 0 else -game.result.points
            if length:
                after = (s0 + max(won, 0), s1 + max(-won, 0))
                end = (1.0 if after[0] >= length else 0.0 if after[1] >= length else
                       float(match_equity(length - after[0], length - after[1], game.crawford or game.post_crawford,
                                          _MET.get())))
            else:
                end = float(won)
            points.append({"game": game.number, "row": None, "player": None, "value": round(value(end), 6),
                           "label": "end"})
    return points
