"""Drills from a player's own mistakes (``bgai.play.drills``).

Given a match analysed at 0-ply and stored,
- every error of a player's of at least the threshold becomes one card, once;
- answering a card with the play made loses what the analysis said it lost, the best play loses nothing, and a cube
  card is judged by the stored cube equities the same way;
- the scheduler takes the rating the error gives: a right answer's card is due later, a wrong one's soon;
- a bad answer is refused and changes nothing; the progress counts cards, due cards, reviews and errors by day;
- ``bgai study drill`` asks the due cards at the prompt, and ``cards`` shows the progress.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from bgai.core.errors import BgaiError
from bgai.eval.bot import load_bot
from bgai.formats.matchfile import read_match
from bgai.frontends.cli import main
from bgai.play.analysis import analyse_match
from bgai.play.database import StudyDatabase
from bgai.play.drills import DRILL_THRESHOLD, Drills, rating_of_error

MATCH = Path(__file__).parent / "data" / "matches" / "gnubg-3pt-seed6.mat"


@pytest.fixture(scope="module")
def bot():
    return load_bot(plies=0)


@pytest.fixture(scope="module")
def analysis(bot):
    return analyse_match(read_match(MATCH), bot, progress=False)


@pytest.fixture
def stored(tmp_path, analysis):
    db = StudyDatabase(tmp_path / "study.sqlite")
    db.add(analysis, str(MATCH))
    yield db, analysis
    db.close()


def test_each_error_becomes_one_card(stored):
    db, analysis = stored
    drills = Drills(db)
    name = analysis.players[0].name
    errors = [d for d in analysis.decisions if d.player == 0 and d.counted and d.error >= DRILL_THRESHOLD - 1e-12
              and d.kind in ("move", "double", "take")]
    assert drills.make_cards(name) == len(errors) > 0
    assert drills.make_cards(name) == 0
    due = drills.due(name, limit=1000)
    assert len(due) == len(errors)
    assert {(c["kind"], c["position_id"], c["played"]) for c in due} == \
        {(d.kind, d.position.position_id(), d.played) for d in errors}


def test_answers_are_judged_as_the_analysis_judged_them(stored, bot):
    db, analysis = stored
    drills = Drills(db)
    name = analysis.players[0].name
    drills.make_cards(name)
    cards = drills.due(name, limit=1000)
    moves = [c for c in cards if c["kind"] == "move"][:4]
    cubes = [c for c in cards if c["kind"] != "move"]
    assert moves
    for card in moves:
        played = drills.answer(card["card"], card["played"], bot)
        assert played.error == pytest.approx(card["error"], abs=1e-6)
        assert played.rating == "Again" and played.best == card["best"]
        best = drills.answer(card["card"], card["best"], bot)
        assert best.error == pytest.approx(0.0, abs=1e-9) and best.rating == "Good"
        assert [name for name, _ in best.ranked][0] == card["best"]
    for card in cubes:
        verdict = drills.answer(card["card"], card["played"], bot)
        assert verdict.error == pytest.approx(card["error"], abs=1e-6) and verdict.answer == card["played"]
        assert drills.answer(card["card"], verdict.best, bot).error == 0.0


def test_the_schedule_follows_the_rating(stored, bot):
    db, analysis = stored
    drills = Drills(db)
    name = analysis.players[0].name
    drills.make_cards(name)
    card = next(c for c in drills.due(name, limit=1000) if c["kind"] == "move")
    now = datetime.datetime.now(datetime.UTC)
    right = drills.answer(card["card"], card["best"], bot, now=now)
    later = datetime.datetime.fromisoformat(right.due)
    assert later > now and card["card"] not in [c["card"] for c in drills.due(name, now=now, limit=1000)]
    assert card["card"] in [c["card"] for c in drills.due(name, now=later, limit=1000)]
    wrong = drills.answer(card["card"], card["played"], bot, now=later)
    assert datetime.datetime.fromisoformat(wrong.due) - later < later - now + datetime.timedelta(days=1)
    assert (rating_of_error(0.0).name, rating_of_error(0.01).name, rating_of_error(0.2).name) == \
        ("Good", "Hard", "Again")


def test_a_bad_answer_changes_nothing_and_progress_counts(stored, bot):
    db, analysis = stored
    drills = Drills(db)
    name = analysis.players[0].name
    drills.make_cards(name)
    card = next(c for c in drills.due(name, limit=1000) if c["kind"] == "move")
    before = drills.progress(name)
    with pytest.raises(BgaiError):
        drills.answer(card["card"], "24/1", bot)
    with pytest.raises(BgaiError, match="no card"):
        drills.card(10**6)
    assert drills.progress(name) == before and before["reviews"] == 0 and before["due"] == before["cards"]
    drills.answer(card["card"], card["best"], bot)
    drills.answer(card["card"], card["played"], bot)
    after = drills.progress(name)
    (day,) = after["by_day"]
    assert after["reviews"] == day["reviews"] == 2 and day["error"] == pytest.approx(card["error"] / 2, abs=1e-6)


def test_study_drill_asks_the_due_cards(tmp_path, monkeypatch, capsys, bot):
    db = tmp_path / "study.sqlite"
    assert main(["analyse", str(MATCH), "--plies", "0", "--quiet", "--db", str(db)]) in (None, 0)
    name = read_match(MATCH).players[0]
    with StudyDatabase(db) as study:
        Drills(study).make_cards(name)
        first = Drills(study).due(name)[0]
    answers = iter(["nonsense", first["best"] if first["kind"] == "move" else first["played"], "quit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    capsys.readouterr()
    assert main(["study", "drill", name, "--db", str(db), "--plies", "0", "--limit", "2"]) in (None, 0)
    out = capsys.readouterr().out
    assert "Card 1 of 2" in out and "next due" in out
    assert main(["study", "cards", name, "--db", str(db)]) in (None, 0)
    assert "1 reviews" in capsys.readouterr().out


def test_a_saved_position_is_a_card(tmp_path, bot):
    """Given positions saved by hand (a roll's play, a cube decision, an answer to a double), then each is a card
    due at once, judged like the others; a roll with one legal play, or a cube the player on roll may not turn, is
    refused."""
    from bgai import Position
    from bgai.core.match import MatchScore

    with StudyDatabase(tmp_path / "study.sqlite") as db:
        drills = Drills(db)
        start = Position.start()
        move = drills.save("Eve", start, "move", bot, dice="31")
        double = drills.save("Eve", "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "double", bot,
                             match=MatchScore.from_score(7, (3, 5)))
        take = drills.save("Eve", start, "take", bot, cube=2, owner="me")
        cards = {c["card"]: c for c in drills.due("Eve")}
        assert set(cards) == {move, double, take}
        assert cards[move]["dice"] == [3, 1] and cards[move]["best"] == "8/5 6/5"
        assert cards[double]["length"] == 7 and cards[double]["score"] == [3, 5]
        assert cards[take]["player"] == 1 and cards[take]["players"] == ["opponent", "Eve"]
        assert drills.answer(move, "8/5 6/5", bot).error == pytest.approx(0.0, abs=1e-9)
        assert drills.answer(move, "24/21 24/23", bot).error > 0.03
        verdict = drills.answer(take, "pass", bot)
        assert verdict.best in ("take", "pass") and verdict.error >= 0
        with pytest.raises(BgaiError, match="one legal play"):
            drills.save("Eve", Position.from_points({1: 1}, {24: 1}), "move", bot, dice="66")
        with pytest.raises(BgaiError, match="may not double"):
            drills.save("Eve", start, "double", bot, cube=2, owner="opponent")
        with pytest.raises(BgaiError, match="needs the roll"):
            drills.save("Eve", start, "move", bot)


def test_cards_and_reviews_survive_the_upgrade_that_rebuilds_the_cards_table(tmp_path, analysis, bot):
    """Given a study database of schema version 3 with a card and its review, When it opens with today's schema
    (version 4 rebuilds the cards table for saved positions), Then the card and its review are still there."""
    import sqlite3

    from bgai.play import database

    path = tmp_path / "old.sqlite"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA foreign_keys = ON")
    for k, script in enumerate(database.MIGRATIONS[:3]):
        connection.executescript(f"BEGIN; {script}; PRAGMA user_version = {k + 1}; COMMIT;")
    connection.close()
    name = analysis.players[0].name
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(database, "MIGRATIONS", database.MIGRATIONS[:3])
        with StudyDatabase(path) as db:
            match_id = db.add(analysis)
            assert db.version == 3
            seq = next(i for i, d in enumerate(analysis.decisions) if d.player == 0 and d.kind == "move"
                       and d.error >= 0.03)
            with db.connection as c:  # a card and a review as version 3 kept them
                c.execute("INSERT INTO cards (id, player, match_id, seq, created, due, fsrs) VALUES "
                          "(7, ?, ?, ?, '2026-12-01T00:00:00+00:00', '2026-12-01T00:00:00+00:00', ?)",
                          (name, match_id, seq, '{"card_id": 7, "state": 1, "step": 0, "stability": null, '
                           '"difficulty": null, "due": "2026-12-01T00:00:00+00:00", "last_review": null}'))
                c.execute("INSERT INTO reviews VALUES (7, '2026-12-01T00:00:00+00:00', '24/21', 0.1, 1)")
    with StudyDatabase(path) as db:
        assert db.version == len(database.MIGRATIONS) >= 4
        drills = Drills(db)
        assert drills.progress(name)["reviews"] == 1
        card = drills.card(7)
        assert card["position_id"] == analysis.decisions[seq].position.position_id()
        assert drills.answer(7, card["best"], bot).error == pytest.approx(0.0, abs=1e-9)
