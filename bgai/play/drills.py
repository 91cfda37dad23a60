"""Drills from your own mistakes: every error of a player's analysed matches becomes a card, and the cards come back
on a spaced-repetition schedule until the right answer sticks.

    >>> from bgai.play.database import StudyDatabase
    >>> drills = Drills(StudyDatabase(":memory:"))
    >>> drills.make_cards("Alice")                      # none yet: no analysed match of hers
    0

A card is a decision of the study database (``bgai.play.database``) that the player got wrong by at least
``threshold`` EMG (``DRILL_THRESHOLD``, the analysis's "doubtful"): a checker play (the position, the roll, the cube
and the score) or a cube decision (to double, or to take). ``make_cards(player)`` adds the cards of every stored
error not yet a card. ``due(player)`` lists the cards due now, the most overdue first.

``answer(card_id, answer, bot)`` judges an answer: a play in standard notation (``"13/7 8/7"``), or ``"double"``,
``"no double"``, ``"take"``, ``"pass"``. A play is judged as the analysis judges one
(``bgai.play.analysis.judge_plays``: cubeful, in EMG, at the bot's plies through its move filters, the answer itself
at full depth), against every legal play of the roll; a cube answer by the cube equities the analysis stored. The
error rates the answer for the scheduler (``rating_of_error``: the best play is Good, within the threshold Hard,
worse Again) and the card's next date comes from FSRS (the ``fsrs`` package, the Free Spaced Repetition Scheduler).
``progress(player)`` counts the cards, those due, those learnt (in FSRS's review state) and the error of the
drills day by day.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from bgai.core.errors import BgaiError, IllegalMoveError

#: The least error (EMG) that makes a decision a card: the analysis's "doubtful".
DRILL_THRESHOLD = 0.03
#: The cube answers a cube card takes, by its kind.
CUBE_ANSWERS = {"double": ("double", "no double"), "take": ("take", "pass")}


def rating_of_error(error: float, threshold: float = DRILL_THRESHOLD):
    """FSRS's rating of an answer that lost ``error`` EMG: Good for the best answer (within a millipoint), Hard
    within ``threshold``, Again beyond."""
    from fsrs import Rating

    if error <= 0.001:
        return Rating.Good
    return Rating.Hard if error < threshold else Rating.Again


@dataclass(frozen=True)
class Verdict:
    """An answer judged: the ``answer`` as written, its ``error`` (EMG lost against the best), the ``best`` answer,
    the ``ranked`` answers with their equities (EMG, best first: the top plays, or the cube's), the ``rating``
    given to the scheduler and the card's next ``due`` date."""

    answer: str
    error: float
    best: str
    ranked: list[tuple[str, float]]
    rating: str
    due: str


class Drills:
    """The drills of a study database ``db`` (a ``StudyDatabase``, open)."""

    def __init__(self, db) -> None:
        self.db = db
        self.connection = db.connection

    def make_cards(self, player: str, threshold: float = DRILL_THRESHOLD) -> int:
        """Add a card for every stored error of ``player`` of at least ``threshold`` EMG not yet a card; returns
        how many were added. Each is due at once."""
        from fsrs import Card

        rows = self.connection.execute(
            "SELECT d.match_id, d.seq FROM decisions d JOIN results r ON r.match_id = d.match_id AND "
            "r.seat = d.seat WHERE r.player = ? AND d.counted AND d.error >= ? AND d.kind IN ('move', 'double', "
            "'take') AND NOT EXISTS (SELECT 1 FROM cards c WHERE c.match_id = d.match_id AND c.seq = d.seq) "
            "ORDER BY d.match_id, d.seq", (player, threshold - 1e-12)).fetchall()
        now = _now()
        with self.connection as c:
            for match_id, seq in rows:
                card = Card(due=now)
                c.execute("INSERT INTO cards (player, match_id, seq, created, due, fsrs) VALUES (?, ?, ?, ?, ?, ?)",
                          (player, match_id, seq, now.isoformat(), now.isoformat(), json.dumps(card.to_dict())))
        return len(rows)

    def save(self, player: str, position, kind: str, bot, dice=None, cube: int = 1, owner="centered", match=None,
             jacoby: bool = False) -> int:
        """Save a position to practise as a card of ``player``'s, due at once; returns the card's id. ``kind``:
        ``"move"`` (the player on roll in ``position`` plays ``dice``), ``"double"`` (it is on roll, before its
        roll: double or not) or ``"take"`` (``position`` is the doubler's, on roll; the player answers its double).
        ``cube``, ``owner`` (``bgai.core.cube.CubeOwner`` or its name, from the side of the player on roll) and
        ``match`` (a ``bgai.core.match.MatchScore``, the player on roll's score first; ``None``: money) as
        ``Bot.cube_decision`` takes them. ``bot`` judges the best answer now, as the card will be judged."""
        from fsrs import Card

        from bgai.core.cube import CubeOwner
        from bgai.formats.position import Position, parse_dice

        pos = position if isinstance(position, Position) else Position.parse(position)
        if kind not in ("move", "double", "take"):
            raise BgaiError(f"a card is a move, double or take decision, got {kind!r}")
        on_roll_owner = CubeOwner.parse(owner)
        seat = {CubeOwner.CENTERED: None, CubeOwner.ON_ROLL: 0, CubeOwner.OPPONENT: 1}[on_roll_owner]
        row: dict[str, Any] = {"kind": kind, "position_id": pos.position_id(), "cube": int(cube), "cube_owner": seat,
               "length": match.length if match else 0, "score": list(match.score) if match else [0, 0],
               "crawford": bool(match and match.crawford), "post_crawford": bool(match and match.post_crawford),
               "jacoby": bool(jacoby), "player": 1 if kind == "take" else 0, "dice": None}
        if kind == "move":
            if dice is None:
                raise BgaiError("a checker-play card needs the roll")
            row["dice"] = list(parse_dice(dice))
            if len(pos.legal_moves(tuple(row["dice"]))) < 2:
                raise BgaiError("this roll has one legal play at most: nothing to practise")
            best = self._judge_play(row, str(pos.legal_moves(tuple(row["dice"]))[0]), bot)[1]
            candidates: list = []
        else:
            d = bot.cube_decision(pos, int(cube), on_roll_owner, match, jacoby=jacoby)
            if not d.may_double or d.double_take is None or d.double_pass is None:
                raise BgaiError(f"the player on roll may not double here ({d.action})")
            emg = d.emg or (d.no_double, d.double_take, d.double_pass)
            candidates = [["No double", emg[0]], ["Double, take", emg[1]], ["Double, pass", emg[2]]]
            best = ("double" if d.should_double else "no double") if kind == "double" else (
                "take" if d.should_take else "pass")
        now = _now()
        with self.connection as c:
            saved = c.execute(
                "INSERT INTO saved (player, created, kind, position_id, dice, cube, cube_owner, length, score0, "
                "score1, crawford, post_crawford, jacoby, best, candidates) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                "?, ?, ?, ?)",
                (player, now.isoformat(), kind, row["position_id"], "".join(map(str, row["dice"] or [])) or None,
                 row["cube"], seat, row["length"], row["score"][0], row["score"][1], int(row["crawford"]),
                 int(row["post_crawford"]), int(row["jacoby"]), best, json.dumps(candidates))).lastrowid
            card_id = c.execute("INSERT INTO cards (player, saved_id, created, due, fsrs) VALUES (?, ?, ?, ?, ?)",
                                (player, saved, now.isoformat(), now.isoformat(),
                                 json.dumps(Card(due=now).to_dict()))).lastrowid
        assert card_id is not None
        return int(card_id)

    def due(self, player: str, now: datetime.datetime | None = None, limit: int = 50) -> list[dict]:
        """The cards of ``player`` due at ``now`` (default: now), the most overdue first: each ``card`` (its id),
        the decision (``bgai.play.database.StudyDatabase.decision``'s form) and the match's ``score`` and
        ``length``."""
        moment = (now or _now()).isoformat()
        rows = self.connection.execute("SELECT id, match_id, seq, due FROM cards WHERE player = ? AND due <= ? "
                                       "ORDER BY due, id LIMIT ?", (player, moment, limit)).fetchall()
        return [self.card(card_id) for card_id, *_ in rows]

    def card(self, card_id: int) -> dict:
        """Card ``card_id``: its decision, the score (the player's first) and the match's length."""
        row = self.connection.execute("SELECT match_id, seq, player, due, saved_id FROM cards WHERE id = ?",
                                      (card_id,)).fetchone()
        if row is None:
            raise BgaiError(f"no card {card_id}")
        match_id, seq, player, due, saved_id = row
        if saved_id is not None:
            return self._saved_card(card_id, player, due, saved_id)
        decision = self.db.decision(match_id, seq)
        record = self.db.record(match_id)
        game = record.games[decision["game"] - 1]
        seat = decision["player"]
        return {"card": card_id, "player": player, "due": due, "match_id": match_id, **decision,
                "length": record.length, "score": [game.score[seat], game.score[1 - seat]], "jacoby": record.jacoby,
                "post_crawford": game.post_crawford}

    def _saved_card(self, card_id: int, player: str, due: str, saved_id: int) -> dict:
        """A saved position's card, in ``card``'s form: the player on roll is seat 0 (the doubler of a take card,
        whose decider is seat 1), the other seat "opponent"."""
        (kind, pid, dice, cube, owner, length, s0, s1, crawford, post, jacoby, best, candidates) = \
            self.connection.execute(
                "SELECT kind, position_id, dice, cube, cube_owner, length, score0, score1, crawford, post_crawford, "
                "jacoby, best, candidates FROM saved WHERE id = ?", (saved_id,)).fetchone()
        decider = 1 if kind == "take" else 0
        names = ["opponent", player] if kind == "take" else [player, "opponent"]
        score = [s1, s0] if kind == "take" else [s0, s1]
        return {"card": card_id, "player": decider, "due": due, "match_id": None, "seq": None, "game": None,
                "row": None, "saved": saved_id, "owner": player, "kind": kind, "position_id": pid,
                "dice": [int(c) for c in dice] if dice else None, "cube": cube, "cube_owner": owner,
                "played": None, "best": best, "error": None, "counted": True, "mark": None,
                "candidates": json.loads(candidates), "players": names, "crawford": bool(crawford),
                "post_crawford": bool(post), "length": length, "score": score, "jacoby": bool(jacoby)}

    def board_xgid(self, card_id: int) -> str:
        """Card ``card_id``'s decision as an XGID, the player to decide as X: its position, roll (``D``: facing a
        double), cube and score, for a board to set it up on (the play page's drills)."""
        from bgai.core.cube import CubeOwner
        from bgai.core.movegen import switch
        from bgai.formats.position import Position
        from bgai.formats.xgid import format_xgid

        c = self.card(card_id)
        board = Position.from_position_id(c["position_id"]).board
        on_roll = c["player"] if c["kind"] != "take" else 1 - c["player"]
        owner = CubeOwner.of_seat(c["cube_owner"], on_roll)  # (from the side of the player on roll)
        x_on_roll = c["kind"] != "take"
        x_owns = {CubeOwner.CENTERED: 0, CubeOwner.ON_ROLL: 1, CubeOwner.OPPONENT: -1}[owner] * (1 if x_on_roll
                                                                                                  else -1)
        return format_xgid(board if x_on_roll else switch(board), cube=c["cube"], owner=x_owns, x_on_roll=x_on_roll,
                           dice=c["dice"] if c["kind"] == "move" else ("D" if c["kind"] == "take" else None),
                           score=(c["score"][0], c["score"][1]), crawford=c["crawford"], length=c["length"],
                           jacoby=c["jacoby"])

    def answer(self, card_id: int, answer: str, bot, now: datetime.datetime | None = None) -> Verdict:
        """Judge ``answer`` to card ``card_id`` (see the module docstring), schedule the card by it and record the
        review. An answer that is no legal play of the roll, or no answer a cube card takes, raises ``BgaiError``
        and changes nothing."""
        from fsrs import Card, Scheduler

        card = self.card(card_id)
        if card["kind"] == "move":
            error, best, ranked, written = self._judge_play(card, answer, bot)
        else:
            error, best, ranked, written = _judge_cube(card, answer)
        rating = rating_of_error(error)
        moment = now or _now()
        state = json.loads(self.connection.execute("SELECT fsrs FROM cards WHERE id = ?",
                                                   (card_id,)).fetchone()[0])
        scheduled, _ = Scheduler().review_card(Card.from_dict(state), rating, moment)
        with self.connection as c:
            c.execute("UPDATE cards SET due = ?, fsrs = ? WHERE id = ?",
                      (scheduled.due.isoformat(), json.dumps(scheduled.to_dict()), card_id))
            c.execute("INSERT INTO reviews (card_id, reviewed, answer, error, rating) VALUES (?, ?, ?, ?, ?)",
                      (card_id, moment.isoformat(), written, error, rating.value))
        return Verdict(written, error, best, ranked, rating.name, scheduled.due.isoformat())

    def progress(self, player: str, now: datetime.datetime | None = None) -> dict:
        """``player``'s drills: ``cards``, ``due`` now, ``learnt`` (FSRS's review state), ``reviews`` and the mean
        error of the drills day by day (``by_day``: date, reviews, mean EMG lost)."""
        from fsrs import State

        moment = (now or _now()).isoformat()
        cards = self.connection.execute("SELECT fsrs, due FROM cards WHERE player = ?", (player,)).fetchall()
        learnt = sum(json.loads(state)["state"] == State.Review.value for state, _ in cards)
        days = self.connection.execute(
            "SELECT substr(v.reviewed, 1, 10), COUNT(*), AVG(v.error) FROM reviews v JOIN cards c ON c.id = v.card_id "
            "WHERE c.player = ? GROUP BY substr(v.reviewed, 1, 10) ORDER BY 1", (player,)).fetchall()
        return {"cards": len(cards), "due": sum(due <= moment for _, due in cards), "learnt": learnt,
                "reviews": sum(n for _, n, _ in days),
                "by_day": [{"date": day, "reviews": n, "error": error} for day, n, error in days]}

    def _judge_play(self, card: dict, answer: str, bot) -> tuple[float, str, list, str]:
        from bgai.core.cube import CubeState
        from bgai.formats.position import Position, parse_move
        from bgai.play.analysis import _notation, judge_plays

        position = Position.from_position_id(card["position_id"])
        dice = tuple(card["dice"])
        try:
            move = parse_move(position, answer, dice)
        except (IllegalMoveError, BgaiError, ValueError) as error:
            raise BgaiError(str(error)) from None
        owner = _owner_of(card["cube_owner"], card["player"])
        if card["length"]:
            mine, theirs = card["score"]
            game_state = (card["length"] - mine, card["length"] - theirs)
            crawford, post = card["crawford"], card["post_crawford"]
            mover = CubeState(np.array([card["cube"]]), np.array([owner], np.int8), np.array([game_state]),
                              np.array([crawford]), np.array([post]))
        else:
            mover = CubeState(np.array([card["cube"]]), np.array([owner], np.int8), jacoby=card["jacoby"])
        boards = position.board[None]
        roll = np.array([sorted(dice, reverse=True)], dtype=np.int8)
        moves, values, depth, is_played = judge_plays(bot, boards, roll, mover, move.after.board[None])
        steps = moves.steps
        assert steps is not None
        ranked = np.lexsort((-values, -depth))
        best = int(ranked[0])
        mine_row = int(np.flatnonzero(is_played)[0])
        lost = max(0.0, float(values[best] - values[mine_row])) if len(values) > 1 else 0.0
        top = [(_notation(steps[r]), float(values[r])) for r in ranked[:5]]
        return lost, _notation(steps[best]), top, str(move)


def _judge_cube(card: dict, answer: str) -> tuple[float, str, list, str]:
    """A cube answer's error from the stored equities (no double, double/take, double/pass: EMG, the doubler's),
    by the analysis's rule."""
    word = " ".join(str(answer).lower().split())
    choices = CUBE_ANSWERS[card["kind"]]
    if word not in choices:
        raise BgaiError(f"the answer to this card is one of {', '.join(choices)}; got {answer!r}")
    equities = {name.lower(): value for name, value in card["candidates"]}
    nd, dt, dp = (equities.get(k) for k in ("no double", "double, take", "double, pass"))
    if nd is None or dt is None or dp is None:
        raise BgaiError("this cube card has no equities stored")
    doubled = min(dt, dp)
    if card["kind"] == "double":
        values = {"double": doubled, "no double": nd}
        best = max(values, key=lambda k: values[k])
        error = values[best] - values[word]
        ranked = sorted(values.items(), key=lambda kv: -kv[1])
    else:  # the taker's: its equity is minus the doubler's
        values = {"take": -dt, "pass": -dp}
        best = max(values, key=lambda k: values[k])
        error = values[best] - values[word]
        ranked = sorted(values.items(), key=lambda kv: -kv[1])
    return max(0.0, float(error)), best, [(k, float(v)) for k, v in ranked], word


def _owner_of(owner_seat: int | None, mover: int) -> int:
    from bgai.core.cube import CubeOwner

    return int(CubeOwner.of_seat(owner_seat, mover))


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)
