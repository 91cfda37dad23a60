"""The JSON API's request and response models: typed classes that are the OpenAPI schema too.

Positions come as a GNU Backgammon Position ID, an XGID or the 26-number board (bgai's layout: index 1..24 the
points of the player on roll, 25 its bar, 0 the opponent's bar, its checkers positive). Every value says whose
point of view it is in: the player on roll's for positions, the person's ("you") for sessions.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bgai.core.errors import BgaiError
from bgai.core.match import MatchScore
from bgai.eval.bot import CUBE_ROLLOUT
from bgai.formats.position import Position, parse_dice

MAX_TEXT = 200  # characters of a position, a play or an XGID in a request; the longest real one is under 70

PositionText = Annotated[
    str | list,
    Field(description="A GNU Backgammon Position ID (4HPwATDgc/ABMA), an XGID (XGID=...) or 26 integers: index "
                      "1..24 the points of the player on roll, 25 its bar, 0 the opponent's bar; its checkers "
                      "positive, the opponent's negative.",
          examples=["4HPwATDgc/ABMA"]),
]
DiceText = Annotated[
    str | list,
    Field(description="The roll: two digits ('63', '6-3') or two integers [6, 3].", examples=["63"]),
]
Plies = Annotated[int, Field(ge=0, le=2, description="Lookahead of the bot: 0, 1 or 2 plies.")]
ROLLOUT_HELP = (f"Decide the cube from a cubeful, variance-reduced rollout ({CUBE_ROLLOUT['trials']} trials truncated "
                f"after {CUBE_ROLLOUT['truncate']} plies, {CUBE_ROLLOUT['plies']}-ply play; about a second) instead of "
                "Janowski's formula. Money games without the Jacoby rule or beavers only: otherwise a 422 says why.")


def to_position(value: str | list) -> Position:
    """The ``Position`` a request names (raises ``BgaiError`` with the reason)."""
    if isinstance(value, str):
        if not value.strip():
            raise BgaiError("a position is a Position ID, an XGID or 26 integers; got an empty string")
        if len(value) > MAX_TEXT:
            raise BgaiError(f"a position is at most {MAX_TEXT} characters, got {len(value)}")
        return Position.parse(value)
    if len(value) != 26 or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise BgaiError("a board is 26 integers (index 1..24 the points, 25 the bar of the player on roll, 0 the "
                        "opponent's bar), got " + (f"{len(value)} values" if len(value) != 26 else "other values"))
    return Position(value)


class In(BaseModel):
    """A request body: a field it does not know is refused (a 422 naming it), never silently ignored."""

    model_config = ConfigDict(extra="forbid")


def _check_position(value):
    try:
        to_position(value)
    except BgaiError as error:
        raise ValueError(str(error)) from None
    return value


def _check_dice(value):
    if len(value) > 10:
        raise ValueError("dice are two digits ('63') or two integers ([6, 3])")
    try:
        return list(parse_dice(value))
    except BgaiError as error:
        raise ValueError(str(error)) from None


MetName = Literal["kazaross-xg2", "rockwell-kazaross", "jacobs-trice", "woolsey", "snowie"]
MET_HELP = ("The match equity table (bgai.core.match.METS): Kazaross-XG2 by default; Rockwell-Kazaross, Jacobs & "
            "Trice, Woolsey and Snowie 2.1 as published (the last two go to 15 points).")


class MatchIn(In):
    """A match score, the player on roll first."""

    length: int = Field(ge=1, le=25, description="Match length in points (1..25, the match equity table's).")
    score: tuple[Annotated[int, Field(ge=0, le=24)], Annotated[int, Field(ge=0, le=24)]] = Field(
        (0, 0), description="Points won: [player on roll, opponent].")
    post_crawford: bool = Field(False, description="With a player one point away: the Crawford game is over.")
    met: MetName = Field("kazaross-xg2", description=MET_HELP)

    def to_score(self) -> MatchScore:
        return MatchScore.from_score(self.length, self.score, post_crawford=self.post_crawford, met=self.met)


class CubeIn(In):
    position: PositionText
    cube: int | None = Field(None, ge=1, le=64, description="Cube value 1, 2, 4, ..., 64 (default 1, or the XGID's).")
    owner: Literal["center", "me", "opponent"] | None = Field(
        None, description="Who owns the cube: center, me (the player on roll) or opponent (default center, or the "
                          "XGID's).")
    match: MatchIn | None = Field(None, description="The match score; none for a money game (or the XGID's).")
    jacoby: bool = Field(False, description="Money: the Jacoby rule.")
    plies: Plies | None = Field(None, description="Lookahead (default: the server's --plies).")
    rollout: bool = Field(False, description=ROLLOUT_HELP)

    _position = field_validator("position")(_check_position)


class EvaluateIn(CubeIn):
    pass


class MovesIn(In):
    position: PositionText
    dice: DiceText
    plies: Plies | None = Field(None, description="Lookahead (default: the server's --plies).")
    limit: int | None = Field(None, ge=1, le=10_000, description="At most this many plays, best first (default: all).")

    _position = field_validator("position")(_check_position)
    _dice = field_validator("dice")(_check_dice)


class Probabilities(BaseModel):
    """Cubeless chances (gammons include backgammons) and the cubeless equity, for the side named."""

    win: float
    win_gammon: float
    win_backgammon: float
    lose_gammon: float
    lose_backgammon: float
    equity: float


class CubeOut(BaseModel):
    """A cube decision of the player on roll before rolling. Equities are its own: money in units of the current
    stake, a match in match-winning chances."""

    action: str = Field(description="The proper cube action in words, e.g. 'Double, take'.")
    should_double: bool
    should_take: bool = Field(description="Whether the opponent should take a double.")
    too_good: bool
    may_double: bool
    no_double: float
    double_take: float | None
    double_pass: float | None
    cubeless: float
    efficiency: float | None = Field(description="The cube efficiency (Janowski's x) of the position itself: the "
                                                 "bot's own, fitted to its rollouts, for the shipped networks; at "
                                                 "2-ply the formula decides at the tree's leaves, each with its own. "
                                                 "None for a rollout, which assumes none.")
    unit: Literal["stake", "mwc"]
    method: Literal["formula", "rollout"] = Field(
        description="How the decision was made: 'formula', the bot's cubeless probabilities made cubeful by "
                    "Janowski's formula (match equity tables for a match) at its cube's plies; 'rollout', a cubeful "
                    "rollout of no double and double/take on the same dice.")
    plies: int | None = Field(None, description="The formula's lookahead (the bot's cube looks an even number of "
                                                "plies ahead: 2 for a 1-ply bot); None for a rollout.")


class EvaluateOut(BaseModel):
    position_id: str
    xgid: str
    pips: tuple[int, int] = Field(description="[player on roll, opponent]")
    plies: int
    perspective: str = "the player on roll, before rolling"
    evaluation: Probabilities
    cube: CubeOut


class RankedPlayOut(BaseModel):
    play: str = Field(description="Standard notation, points numbered from the mover's side.")
    steps: list[tuple[int, int, bool]] = Field(description="[from, to, hit] per checker step (25 bar, 0 off).")
    equity: float = Field(description="Cubeless equity for the mover after the play.")
    difference: float = Field(description="Equity minus the first play's equity at the same ply (plies): a play "
                                          "that move filtering dropped is compared with the first play judged at "
                                          "its own, shallower ply, never with a deeper value.")
    plies: int = Field(description="The ply the play was judged at (plays dropped by move filtering: shallower).")
    chances: Probabilities = Field(description="The mover's chances after the play.")
    position_id: str = Field(description="The position after the play, from the opponent's side (on roll next).")
    cubeful_equity: float | None = Field(
        None, description="In a session: your cubeful equity after the play, the cube as it is (money: units of the "
                          "current stake; a match: match-winning chances), the bot answering with its best cube "
                          "action, at the bot's ply. A session's hint gives it for its first 10 plays and ranks them "
                          "by it (the rest, when asked for, follow by cubeless equity). None for positions given "
                          "without a cube.")
    cubeful_difference: float | None = Field(
        None, description="In a session: the play's cubeful equity minus the first play's. None where "
                          "cubeful_equity is.")


class MovesOut(BaseModel):
    position_id: str
    dice: tuple[int, int]
    plies: int = Field(description="The bot's lookahead: the ply of the plays that move filtering kept to the end.")
    network: str = Field(description="The network that judged every play, at every ply.")
    perspective: str = "the player on roll, who makes the play"
    plays: list[RankedPlayOut]


# Sessions ---------------------------------------------------------------------------------------------------------


TUTOR_HELP = ("The tutor: a play or cube action of yours (rolling where you should double included) that loses this "
              "much EMG or more against the bot's choice is refused with a 409 whose 'tutor' says what it loses and "
              "what is best; the same request with ?confirm=true makes it. 0.03 is the analysis's doubtful error; "
              "null: no tutor (the page turns it on).")
CONFIRM_HELP = "Make the action even where the session's tutor warns of it."


class NewSession(In):
    match_length: int = Field(0, ge=0, le=25, description="Match length in points; 0 for money games.")
    plies: Plies | None = Field(None, description="The bot's lookahead (default: the server's --plies).")
    seed: int | None = Field(None, ge=0, lt=2**63, description="Seed of the dice (default: random).")
    jacoby: bool = Field(False, description="Money: the Jacoby rule.")
    position: str | None = Field(None, max_length=MAX_TEXT,
                                 description="Start from this Position ID or XGID (X is you).")
    tutor: float | None = Field(None, ge=0, le=10, description=TUTOR_HELP)


class StepIn(In):
    from_point: int = Field(alias="from", ge=1, le=25, description="Your point, 25 for the bar.")
    to_point: int = Field(alias="to", ge=0, le=24, description="Your point, 0 to bear off.")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)




class TutorOut(BaseModel):
    action: str = Field(description="What you asked for: a play, or no double, double, take, pass.")
    best: str = Field(description="What the bot would do.")
    error: float = Field(description="The EMG your action loses against it.")
    mark: str = Field(description="The analysis's word for that error: doubtful, bad or very bad.")


class PlayIn(In):
    move: str = Field(max_length=MAX_TEXT, examples=["13/7 8/7"],
                      description="Your play in standard notation, whole or in part: '13/7 8/7', 'bar/22*'.")
    finish: bool = Field(True, description="Finish the play when it is complete (the bot then moves).")
    reset: bool = Field(False, description="Replace the checker moves made so far instead of adding to them.")


class ResignIn(In):
    points: Literal[1, 2, 3] = Field(1, description="1 single game, 2 gammon, 3 backgammon (times the cube).")


class SetupIn(In):
    position: str = Field(max_length=MAX_TEXT,
                          description="A Position ID (you on roll, cube centered) or an XGID (X is you: its cube, "
                                      "turn, dice and match score too).")


class CubeState(BaseModel):
    value: int
    owner: Literal["you", "bot"] | None = Field(description="None: centered.")
    may_double: bool = Field(description="Whether you may double now.")
    offered: bool = Field(description="The bot has doubled; take or pass.")


class PlayState(BaseModel):
    """Your play being made, checker by checker."""

    text: str = Field(description="The checker moves made so far, in standard notation.")
    steps: list[tuple[int, int, bool]]
    complete: bool = Field(description="The moves made are a whole legal play: finish it (or undo).")
    targets: dict[int, list[int]] = Field(description="Point (25 bar) -> where its checker may go (0 off).")


class LastMove(BaseModel):
    player: Literal["you", "bot"]
    dice: tuple[int, int]
    play: str
    steps: list[tuple[int, int, bool]] = Field(description="In the mover's numbering (25 bar, 0 off).")


class SessionState(BaseModel):
    id: str
    version: int = Field(description="Counts every change of state (actions of both players).")
    phase: Literal["roll", "move", "take", "game_over", "match_over"]
    status: str
    turn: Literal["you", "bot"]
    names: tuple[str, str]
    bot: str
    plies: int
    seed: int
    match_length: int
    jacoby: bool = Field(False, description="Money: the Jacoby rule (gammons count once the cube is turned).")
    tutor: float | None = Field(None, description="The tutor's threshold in EMG (null: no tutor).")
    score: tuple[int, int] = Field(description="[you, bot]")
    crawford: bool = Field(description="This game is the Crawford game.")
    post_crawford: bool
    game: int
    cube: CubeState
    dice: tuple[int, int] | None = Field(description="Your roll, when you are to play it.")
    dice_left: list[int] | None
    play: PlayState | None
    last_move: LastMove | None
    pips: tuple[int, int] = Field(description="[you, bot], your moves so far included.")
    position_id: str = Field(description="The position on roll (before your checker moves this turn).")
    xgid: str = Field(description="The whole game state (X is you).")
    log: list[str] = Field(description="This game's actions in words.")
    svg: str | None = Field(None, description="The board, when asked for (?svg=true).")


class ScoresIn(In):
    position: PositionText
    length: int = Field(ge=1, le=25, description="Match length in points (1..25, the match equity table's): every "
                                                 "score of it, each side 1..length points away.")
    cube: int = Field(1, ge=1, le=64, description="Cube value 1, 2, 4, ..., 64.")
    owner: Literal["center", "me", "opponent"] = Field("center", description="Who owns the cube.")
    plies: Plies | None = Field(None, description="Lookahead (default: the server's --plies).")
    met: MetName = Field("kazaross-xg2", description=MET_HELP)

    _position = field_validator("position")(_check_position)


class ScoreCellOut(BaseModel):
    """The cube decision at one score, from the side of the player on roll."""

    away: tuple[int, int] | None = Field(description="Points the player on roll and its opponent still need (a side "
                                                     "one away: post-Crawford); null for money.")
    action: str = Field(description="The proper cube action in words.")
    short: str = Field(description="The same as a grid writes it: ND/T, D/T, D/P, TG/P (/B a beaver), '-' where "
                                   "the player on roll may not double.")
    no_double: float = Field(description="Match-winning chances (money: units of the stake).")
    double_take: float | None
    double_pass: float | None
    emg: tuple[float, float | None, float | None] = Field(
        description="No double, double/take, double/pass as money equivalents (EMG).")


class ScoresOut(BaseModel):
    position_id: str
    length: int
    met: str = Field(description="The match equity table.")
    cube: int
    owner: Literal["center", "me", "opponent"]
    plies: int = Field(description="The cube's lookahead.")
    cells: list[list[ScoreCellOut]] = Field(description="cells[i][j]: the player on roll i + 1 away, its opponent "
                                                        "j + 1 away.")
    money: ScoreCellOut


class AnalysisIn(In):
    match: str = Field(description="The match file's text: .mat (Jellyfish, GNU Backgammon, eXtreme Gammon) or GNU "
                                   "Backgammon SGF, at most 1 MiB.")
    name: str | None = Field(None, max_length=200, description="Where it came from (a file name), kept with it.")
    plies: Plies | None = Field(None, description="The judge's lookahead (default: the server's --plies).")


class AnalysisJob(BaseModel):
    id: str
    status: Literal["queued", "running", "done", "failed"]
    done: int = Field(description="Decisions judged so far.")
    total: int = Field(description="Decisions to judge (0 until it starts).")
    match_id: int | None = Field(description="The match's id in the study database, once stored.")
    error: str | None = Field(description="Why it failed, where it did.")
    analysis: dict | None = Field(None, description="The analysis (as bgai analyse --json writes it), once done; "
                                                    "GET /api/analyses/{id} only.")


class StoredMatch(BaseModel):
    id: int
    player0: str
    player1: str
    date: str
    length: int
    games: int
    score0: int
    score1: int
    source: str
    plies: int


class DrillAnswerIn(In):
    answer: str = Field(max_length=100, description="A play in standard notation ('13/7 8/7'), or 'double', 'no "
                                                    "double', 'take', 'pass' for a cube card.")
    plies: Plies | None = Field(None, description="The judge's lookahead (default: the server's --plies).")


class SaveCardIn(In):
    player: str | None = Field(None, max_length=200, description="Whose drill (default: the session's name for "
                                                                 "you).")


class SavedCardOut(BaseModel):
    card: int
    player: str
    kind: Literal["move", "double", "take"]


class VerdictOut(BaseModel):
    answer: str
    error: float = Field(description="EMG the answer loses against the best.")
    best: str
    ranked: list[tuple[str, float]] = Field(description="The best answers with their equities (EMG), best first.")
    rating: str = Field(description="FSRS's rating of the answer: Good (the best), Hard (within 0.03), Again.")
    due: str = Field(description="When the card comes back (ISO 8601, UTC).")


class CubeHintOut(BaseModel):
    kind: Literal["double", "take"]
    action: str
    unit: Literal["stake", "mwc"]
    perspective: str = "you"
    equities: dict[str, float | None]
    decision: CubeOut = Field(description="The bot's decision from the doubler's side (you, or the bot).")
    method: Literal["formula", "rollout"] = Field(description="How the advice was made (as decision.method); ask "
                                                              "?rollout=true for a rollout's.")
    rollout_refusal: str | None = Field(
        description="Why this session's cube hint cannot be rolled out (a match, the Jacoby rule); None where it "
                    "can.")
