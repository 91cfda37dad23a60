"""The study database (``bgai.play.database``): analysed matches kept in SQLite.

Given matches analysed at 0-ply,
- a stored analysis reads back as it was: the players' error rates, the decisions, the record;
- the same match judged alike is stored once, judged otherwise twice;
- a folder imports its readable match files and names the unreadable ones, with their line;
- the schema upgrades an older file in place, and refuses a newer one or a file that is no database;
- ``bgai analyse`` stores its analysis unless told not to, and ``bgai study`` reads it back.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from bgai.core.errors import BgaiError
from bgai.eval.bot import load_bot
from bgai.formats.matchfile import read_match
from bgai.frontends.cli import main
from bgai.play import database
from bgai.play.analysis import analyse_match
from bgai.play.database import StudyDatabase, database_path

MATCHES = Path(__file__).parent / "data" / "matches"
THREE = MATCHES / "gnubg-3pt-seed6.mat"


@pytest.fixture(scope="module")
def bot():
    return load_bot(plies=0)


@pytest.fixture(scope="module")
def analysis(bot):
    return analyse_match(read_match(THREE), bot, progress=False)


def test_a_stored_analysis_reads_back_as_it_was(tmp_path, analysis):
    with StudyDatabase(tmp_path / "study.sqlite") as db:
        match_id = db.add(analysis, str(THREE))
        players = {row["name"]: row for row in db.players()}
        for summary in analysis.players:
            row = players[summary.name]
            assert row["matches"] == 1 and row["decisions"] == summary.decisions
            assert row["error_rate"] == pytest.approx(summary.error_rate)
            (history,) = db.history(summary.name)
            assert history["match_id"] == match_id and history["error_rate"] == pytest.approx(summary.error_rate)
            assert history["pr"] == pytest.approx(summary.pr) and history["length"] == 3
        seat = analysis.players[0].name
        worst = db.worst(seat, limit=3)
        mine = sorted((d for d in analysis.decisions if d.player == 0 and d.counted), key=lambda d: -d.error)[:3]
        assert [w["error"] for w in worst] == pytest.approx([d.error for d in mine])
        assert [w["position_id"] for w in worst] == [d.position.position_id() for d in mine]
        assert db.record(match_id) == analysis.record
        (match,) = db.matches(seat)
        assert match["id"] == match_id and match["source"] == str(THREE) and match["plies"] == 0
        with pytest.raises(BgaiError, match="no match 99"):
            db.record(99)


def test_the_same_match_judged_alike_is_stored_once(tmp_path, analysis, bot):
    with StudyDatabase(tmp_path / "study.sqlite") as db:
        first = db.add(analysis)
        again = db.add(analysis)
        assert len(db.matches()) == 1 and db.matches()[0]["id"] in (first, again)
        deeper = analyse_match(read_match(THREE), load_bot(plies=1), progress=False)
        db.add(deeper)
        assert len(db.matches()) == 2
        count = db.connection.execute("SELECT COUNT(*) FROM decisions").fetchone()[0]
        assert count == len(analysis.decisions) + len(deeper.decisions)  # the replaced one's are gone


def test_a_folder_imports_its_match_files_and_names_the_bad_ones(tmp_path, bot):
    folder = tmp_path / "matches"
    (folder / "sub").mkdir(parents=True)
    shutil.copy(THREE, folder / "a.mat")
    shutil.copy(MATCHES / "gnubg-money-seed3.sgf", folder / "sub" / "b.sgf")
    (folder / "bad.mat").write_text(" 3 point match\n\n Game 1\n Alice : 0    Bob : 0\n  1) 52: 13/8 13/1\n")
    (folder / "notes.md").write_text("not a match")
    with StudyDatabase(tmp_path / "study.sqlite") as db:
        report = db.import_folder(folder, bot, progress=False)
        assert [Path(p).name for p, _ in report.added] == ["a.mat", "b.sgf"]
        ((path, why),) = report.failed
        assert Path(path).name == "bad.mat" and "bad.mat" in why and "line" in why
        assert len(db.matches()) == 2
        with pytest.raises(BgaiError, match="no folder"):
            db.import_folder(tmp_path / "missing", bot, progress=False)


def test_the_schema_upgrades_in_place_and_refuses_what_it_cannot_read(tmp_path, analysis, monkeypatch):
    path = tmp_path / "study.sqlite"
    with StudyDatabase(path) as db:
        db.add(analysis)
        assert db.version == len(database.MIGRATIONS)
    # a later bgai adds a column: the file upgrades when opened, its rows kept
    monkeypatch.setattr(database, "MIGRATIONS", [*database.MIGRATIONS, "ALTER TABLE matches ADD COLUMN note TEXT"])
    with StudyDatabase(path) as db:
        assert db.version == len(database.MIGRATIONS) and len(db.matches()) == 1
        assert db.connection.execute("SELECT note FROM matches").fetchone() == (None,)
    monkeypatch.setattr(database, "MIGRATIONS", database.MIGRATIONS[:1])
    with pytest.raises(BgaiError, match="newer than this bgai"):
        StudyDatabase(path)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(BgaiError, match="not a bgai study database"):
        StudyDatabase(junk)
    connection = sqlite3.connect(tmp_path / "half.sqlite")  # a failed migration leaves the version before it
    connection.close()
    monkeypatch.setattr(database, "MIGRATIONS", ["CREATE TABLE t (x INTEGER); CREATE TABLE t (y INTEGER)"])
    with pytest.raises(BgaiError):
        StudyDatabase(tmp_path / "half.sqlite")
    check = sqlite3.connect(tmp_path / "half.sqlite")
    assert check.execute("PRAGMA user_version").fetchone() == (0,)
    assert check.execute("SELECT name FROM sqlite_master WHERE name = 't'").fetchone() is None
    check.close()


def test_database_paths():
    assert database_path("sqlite:///tmp/x.sqlite") == "tmp/x.sqlite"
    assert database_path("/tmp/x.sqlite") == "/tmp/x.sqlite" and database_path(":memory:") == ":memory:"
    with pytest.raises(BgaiError, match="SQLite"):
        database_path("postgresql://host/db")


def test_analyse_stores_its_analysis_and_study_reads_it(tmp_path, capsys):
    db = tmp_path / "study.sqlite"
    assert main(["analyse", str(THREE), "--plies", "0", "--quiet", "--db", str(db)]) in (None, 0)
    assert "Stored as match 1" in capsys.readouterr().out
    assert main(["analyse", str(THREE), "--plies", "0", "--quiet", "--no-db", "--db", str(tmp_path / "no.sqlite")]) \
        in (None, 0)
    assert not (tmp_path / "no.sqlite").exists()
    assert main(["study", "players", "--db", str(db)]) in (None, 0)
    out = capsys.readouterr().out
    names = read_match(THREE).players
    assert all(name in out for name in names)
    assert main(["study", "history", names[0], "--db", str(db)]) in (None, 0)
    assert "match    1" in capsys.readouterr().out
    assert main(["study", "worst", names[1], "--limit", "2", "--db", str(db)]) in (None, 0)
    assert "costliest" in capsys.readouterr().out
    assert main(["study", "history", "Nobody", "--db", str(db)]) == 2
    assert "no analysed match of 'Nobody'" in capsys.readouterr().err
