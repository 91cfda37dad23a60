"""Your analysed matches, kept: a SQLite database of every match ``bgai analyse`` judged, each decision's judgement,
and each player's error rate over time.

    >>> db = StudyDatabase(":memory:")
    >>> db.players()
    []

``StudyDatabase(path)`` opens (or creates) the file; ``default_path()`` is ``$BGAI_DB``, else ``study.sqlite`` in
bgai's data folder (``$XDG_DATA_HOME/bgai``, else ``~/.local/share/bgai``). ``add(analysis, source)`` stores one
``bgai.play.analysis.MatchAnalysis``: the match (its players, date, length, score and its record as .mat text), the
judge (network, plies), every player's summary and every decision. A match is known by its record and its judge:
analysing the same match again at the same plies replaces it, at other plies adds another analysis of it.
``import_folder(folder, bot)`` analyses and stores every match file of a folder, with a progress bar; a file that
cannot be read is reported by name and line (``ImportReport.failed``) and the rest go in.

The play page's sessions are kept here too (``save_session``, ``load_session``): a match in progress survives a
restart of the server, or its kill, as it stood after its last step.

Reading: ``players()`` (each name with its matches and decisions), ``history(name)`` (the player's error rate
match by match, oldest first: mEMG a decision and PR, gnubg's scale), ``worst(name)`` (its costliest decisions) and
``matches(name)``.

The schema has a version (SQLite's ``user_version``), and ``MIGRATIONS`` upgrades an older file in place when it is
opened: migration ``k`` takes a file of version ``k`` to ``k + 1``, in one transaction, so a file is at one version
or the next, never between. A file from a newer bgai is refused, not touched.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bgai.core.errors import BgaiError, MatchFileError

#: SQL scripts: ``MIGRATIONS[k]`` upgrades a database of schema version ``k`` to ``k + 1``.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE matches (
        id INTEGER PRIMARY KEY,
        digest TEXT NOT NULL UNIQUE,       -- the record's and the judge's: the same match judged alike is one row
        player0 TEXT NOT NULL,
        player1 TEXT NOT NULL,
        played TEXT,                       -- the match's date, where its file gives one (ISO 8601)
        analysed TEXT NOT NULL,            -- when it was analysed (ISO 8601, UTC)
        length INTEGER NOT NULL,           -- 0: a money session
        games INTEGER NOT NULL,
        score0 INTEGER NOT NULL,
        score1 INTEGER NOT NULL,
        source TEXT NOT NULL,              -- the file it came from
        record TEXT NOT NULL,              -- the match as .mat text
        bot TEXT NOT NULL,
        plies INTEGER NOT NULL,
        summary TEXT NOT NULL              -- the analysis without its decisions, as JSON
    );
    CREATE TABLE results (
        match_id INTEGER NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
        seat INTEGER NOT NULL,
        player TEXT NOT NULL,
        decisions INTEGER NOT NULL,
        error REAL NOT NULL,               -- EMG lost in all
        error_rate REAL NOT NULL,          -- mEMG a decision
        checker_rate REAL NOT NULL,
        cube_rate REAL NOT NULL,
        luck REAL NOT NULL,
        PRIMARY KEY (match_id, seat)
    );
    CREATE INDEX results_player ON results(player);
    CREATE TABLE decisions (
        match_id INTEGER NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,              -- its place in the match
        game INTEGER NOT NULL,
        seat INTEGER NOT NULL,
        kind TEXT NOT NULL,                -- move, double, take, resign, accept
        position_id TEXT NOT NULL,         -- seen from the player on roll
        cube INTEGER NOT NULL,
        cube_owner INTEGER,
        dice TEXT,                         -- "63", or NULL for a cube decision
        played TEXT NOT NULL,
        best TEXT NOT NULL,
        error REAL NOT NULL,               -- EMG
        cost REAL NOT NULL,                -- MWC in a match, points for money
        counted INTEGER NOT NULL,
        mark TEXT,                         -- doubtful, bad, very bad
        detail TEXT NOT NULL,              -- the rest of the judgement (candidates, luck, method) as JSON
        PRIMARY KEY (match_id, seq)
    );
    CREATE INDEX decisions_error ON decisions(error);
    """,
    """
    CREATE TABLE sessions (
        key TEXT PRIMARY KEY,              -- the play page's session id
        updated TEXT NOT NULL,             -- its last step (ISO 8601, UTC)
        plies INTEGER NOT NULL,            -- its bot's lookahead
        bgai TEXT NOT NULL,                -- the bgai version that saved it
        state BLOB NOT NULL                -- the session without its bot, pickled
    );
    CREATE INDEX sessions_updated ON sessions(updated);
    """,
    """
    CREATE TABLE cards (                   -- drills (bgai.play.drills): a player's error to practise
        id INTEGER PRIMARY KEY,
        player TEXT NOT NULL,
        match_id INTEGER NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        created TEXT NOT NULL,
        due TEXT NOT NULL,                 -- ISO 8601, UTC
        fsrs TEXT NOT NULL,                -- the FSRS card, as JSON
        UNIQUE (match_id, seq)
    );
    CREATE INDEX cards_due ON cards(player, due);
    CREATE TABLE reviews (
        card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
        reviewed TEXT NOT NULL,
        answer TEXT NOT NULL,
        error REAL NOT NULL,               -- EMG lost
        rating INTEGER NOT NULL            -- FSRS's: 1 Again, 2 Hard, 3 Good, 4 Easy
    );
    """,
    """
    CREATE TABLE saved (                   -- positions a player saved to practise (bgai hint --save-card, the page)
        id INTEGER PRIMARY KEY,
        player TEXT NOT NULL,
        created TEXT NOT NULL,
        kind TEXT NOT NULL,                -- move, double, take
        position_id TEXT NOT NULL,         -- seen from the player on roll (the doubler of a take)
        dice TEXT,
        cube INTEGER NOT NULL,
        cube_owner INTEGER,                -- 0: the player on roll's, 1: its opponent's, NULL: centered
        length INTEGER NOT NULL,
        score0 INTEGER NOT NULL,           -- the player on roll's
        score1 INTEGER NOT NULL,
        crawford INTEGER NOT NULL,
        post_crawford INTEGER NOT NULL,
        jacoby INTEGER NOT NULL,
        best TEXT NOT NULL,
        candidates TEXT NOT NULL           -- the cube equities (EMG, the doubler's) of a cube card, as JSON
    );
    CREATE TABLE cards_new (
        id INTEGER PRIMARY KEY,
        player TEXT NOT NULL,
        match_id INTEGER REFERENCES matches(id) ON DELETE CASCADE,
        seq INTEGER,
        saved_id INTEGER REFERENCES saved(id) ON DELETE CASCADE,
        created TEXT NOT NULL,
        due TEXT NOT NULL,
        fsrs TEXT NOT NULL,
        UNIQUE (match_id, seq),
        CHECK ((match_id IS NULL) <> (saved_id IS NULL))
    );
    INSERT INTO cards_new (id, player, match_id, seq, created, due, fsrs)
        SELECT id, player, match_id, seq, created, due, fsrs FROM cards;
    DROP TABLE cards;
    ALTER TABLE cards_new RENAME TO cards;
    CREATE INDEX cards_due ON cards(player, due);
    """,
]


def default_path() -> Path:
    """``$BGAI_DB``, else ``study.sqlite`` in bgai's data folder (``$XDG_DATA_HOME/bgai``, else
    ``~/.local/share/bgai``)."""
    if os.environ.get("BGAI_DB"):
        return Path(os.environ["BGAI_DB"])
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "bgai" / "study.sqlite"


def database_path(url: str | os.PathLike | None) -> str:
    """The SQLite file of ``--db``: a path, ``sqlite:///PATH`` or ``:memory:``; ``None``: ``default_path()``."""
    if url is None:
        return str(default_path())
    text = os.fspath(url)
    if text.startswith("sqlite:///"):
        return text[len("sqlite:///"):]
    if "://" in text:
        raise BgaiError(f"the study database is a SQLite file: give a path or sqlite:///PATH, got {text!r}")
    return text


@dataclass
class ImportReport:
    """What ``import_folder`` did: the files ``added`` (path, match id) and the ones that ``failed`` (path, why)."""

    added: list[tuple[str, int]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


class StudyDatabase:
    """The study database in ``path`` (see the module docstring), created or upgraded on opening. Use it as a
    context manager, or ``close()`` it."""

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        self.path = database_path(path)
        self._records: dict[str, object] = {}
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.connection = sqlite3.connect(self.path)
            self.connection.execute("PRAGMA foreign_keys = ON")
            self._migrate()
        except sqlite3.DatabaseError as error:
            raise BgaiError(f"{self.path} is not a bgai study database ({error})") from None

    def __enter__(self) -> StudyDatabase:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.connection.close()

    @property
    def version(self) -> int:
        return int(self.connection.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        version = self.version
        if version > len(MIGRATIONS):
            raise BgaiError(f"{self.path} is a study database of schema version {version}, newer than this bgai's "
                            f"({len(MIGRATIONS)}): upgrade bgai to read it")
        if version == len(MIGRATIONS):
            return
        # (foreign keys off while a migration rebuilds a table: dropping the old one must not cascade)
        self.connection.execute("PRAGMA foreign_keys = OFF")
        try:
            for k in range(version, len(MIGRATIONS)):
                with self.connection:  # one transaction a step: the file is at version k or k + 1
                    self.connection.executescript(f"BEGIN; {MIGRATIONS[k]}; PRAGMA user_version = {k + 1}; COMMIT;")
        finally:
            self.connection.execute("PRAGMA foreign_keys = ON")

    # Writing -----------------------------------------------------------------------------------------------------

    def add(self, analysis, source: str = "") -> int:
        """Store ``analysis`` (a ``MatchAnalysis``), replacing an analysis of the same match by the same judge;
        returns its match id."""
        from bgai.formats.matchfile import write_mat

        record = analysis.record
        text = write_mat(record)
        met = f"\n{analysis.met}" if getattr(analysis, "met", None) else ""  # (the default table: as before)
        digest = hashlib.sha256(f"{text}\n{analysis.bot}\n{analysis.plies}\n{analysis.cube_method}{met}".encode())
        summary = analysis.to_dict()
        summary.pop("decisions")  # (their own rows; the graph stays in the summary)
        played = _date_of(record.metadata)
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        with self.connection as c:
            c.execute("DELETE FROM matches WHERE digest = ?", (digest.hexdigest(),))
            match_id = c.execute(
                "INSERT INTO matches (digest, player0, player1, played, analysed, length, games, score0, score1, "
                "source, record, bot, plies, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (digest.hexdigest(), record.players[0], record.players[1], played, now, record.length,
                 len(record.games), record.score[0], record.score[1], str(source), text, analysis.bot,
                 analysis.plies, json.dumps(summary))).lastrowid
            assert match_id is not None
            c.executemany(
                "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(match_id, seat, p.name, p.decisions, p.total_error, p.error_rate, p.checker_rate, p.cube_rate,
                  p.luck) for seat, p in enumerate(analysis.players)])
            c.executemany(
                "INSERT INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [_decision_row(match_id, seq, d) for seq, d in enumerate(analysis.decisions)])
        return int(match_id)

    def import_folder(self, folder: str | os.PathLike, bot, *, progress: bool = True,
                      patterns: Iterable[str] = ("*.mat", "*.sgf", "*.txt")) -> ImportReport:
        """Analyse (by ``bot``) and store every match file of ``folder`` and its subfolders, in name order, with a
        progress bar; a file that cannot be read or holds no game is reported in ``failed`` with why, by name and
        line, and the rest go in."""
        from tqdm import tqdm

        from bgai.formats.matchfile import read_match
        from bgai.play.analysis import analyse_match

        root = Path(folder)
        if not root.is_dir():
            raise BgaiError(f"no folder {folder}")
        files = sorted({path for pattern in patterns for path in root.rglob(pattern) if path.is_file()})
        report = ImportReport()
        for path in tqdm(files, desc="import", unit="file", disable=not progress):
            try:
                record = read_match(path)
                if not record.games:
                    raise MatchFileError("it holds no game")
            except (MatchFileError, OSError, UnicodeDecodeError) as error:
                text = str(error)
                report.failed.append((str(path), text if str(path) in text else f"{path}: {text}"))
                continue
            analysis = analyse_match(record, bot, progress=False)
            report.added.append((str(path), self.add(analysis, str(path))))
        return report

    # The play page's sessions ----------------------------------------------------------------------------------

    def save_session(self, key: str, session, keep: int = 1000) -> None:
        """Keep ``session`` (a ``bgai.play.session.Session``) under ``key``: everything but its bot, whose plies
        are kept instead; the ``keep`` most recently stepped sessions are kept, the others dropped."""
        import pickle

        from bgai._version import __version__

        state = pickle.dumps({k: v for k, v in session.__dict__.items() if k != "bot"}, protocol=5)
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")
        with self.connection as c:
            c.execute("INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?, ?)",
                      (key, now, session.bot.plies, __version__, state))
            c.execute("DELETE FROM sessions WHERE key NOT IN (SELECT key FROM sessions ORDER BY updated DESC "
                      "LIMIT ?)", (keep,))

    def load_session(self, key: str, bot_of):
        """The session kept under ``key`` with its bot (``bot_of(plies)``), or ``None``: none kept, or one that this
        bgai cannot read back (saved by another version), which is then dropped."""
        import pickle

        from bgai._version import __version__
        from bgai.play.session import Session

        row = self.connection.execute("SELECT plies, bgai, state FROM sessions WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        plies, version, state = row
        try:
            if version != __version__:
                raise ValueError(f"saved by bgai {version}")
            session = Session.__new__(Session)
            session.__dict__.update(pickle.loads(state))  # (the user's own file, written by save_session)
            session.bot = bot_of(plies)
        except Exception:  # noqa: BLE001 (whatever cannot be read back is no session)
            self.delete_session(key)
            return None
        return session

    def delete_session(self, key: str) -> bool:
        """Drop the session kept under ``key``; whether there was one."""
        with self.connection as c:
            return c.execute("DELETE FROM sessions WHERE key = ?", (key,)).rowcount > 0

    # Reading -----------------------------------------------------------------------------------------------------

    def players(self) -> list[dict]:
        """Every player: ``name``, ``matches``, ``decisions`` and its overall ``error_rate`` (mEMG a decision)."""
        rows = self.connection.execute(
            "SELECT player, COUNT(*), SUM(decisions), SUM(error) FROM results GROUP BY player ORDER BY player")
        return [{"name": name, "matches": n, "decisions": int(decisions or 0),
                 "error_rate": 1000 * error / decisions if decisions else 0.0} for name, n, decisions, error in rows]

    def history(self, name: str) -> list[dict]:
        """``name``'s matches, oldest first (by the match's date, else when it was analysed): ``match_id``,
        ``date``, ``opponent``, ``length``, ``decisions``, ``error_rate`` (mEMG a decision), ``pr`` and ``plies``."""
        rows = self.connection.execute(
            "SELECT m.id, COALESCE(m.played, m.analysed), CASE r.seat WHEN 0 THEN m.player1 ELSE m.player0 END, "
            "m.length, r.decisions, r.error_rate, m.plies FROM results r JOIN matches m ON m.id = r.match_id "
            "WHERE r.player = ? ORDER BY COALESCE(m.played, m.analysed), m.id", (name,))
        return [{"match_id": i, "date": date, "opponent": opponent, "length": length, "decisions": decisions,
                 "error_rate": rate, "pr": rate / 2, "plies": plies}
                for i, date, opponent, length, decisions, rate, plies in rows]

    def worst(self, name: str, limit: int = 10) -> list[dict]:
        """``name``'s ``limit`` costliest counted decisions (EMG), worst first."""
        rows = self.connection.execute(
            "SELECT d.match_id, d.seq, d.game, d.kind, d.position_id, d.dice, d.cube, d.played, d.best, d.error, "
            "d.mark FROM decisions d JOIN results r ON r.match_id = d.match_id AND r.seat = d.seat "
            "WHERE r.player = ? AND d.counted ORDER BY d.error DESC, d.match_id, d.seq LIMIT ?", (name, limit))
        keys = ("match_id", "seq", "game", "kind", "position_id", "dice", "cube", "played", "best", "error", "mark")
        return [dict(zip(keys, row)) for row in rows]

    def matches(self, name: str | None = None) -> list[dict]:
        """The stored matches (of ``name``'s, where given), newest first."""
        where, args = ("WHERE player0 = ? OR player1 = ?", (name, name)) if name else ("", ())
        rows = self.connection.execute(
            f"SELECT id, player0, player1, COALESCE(played, analysed), length, games, score0, score1, source, plies "
            f"FROM matches {where} ORDER BY COALESCE(played, analysed) DESC, id DESC", args)
        keys = ("id", "player0", "player1", "date", "length", "games", "score0", "score1", "source", "plies")
        return [dict(zip(keys, row)) for row in rows]

    def analysis(self, match_id: int) -> dict:
        """The stored analysis of match ``match_id`` as ``MatchAnalysis.to_dict`` gives it (``bgai analyse --json``),
        with its ``match_id`` and each decision's ``seq``."""
        row = self.connection.execute("SELECT summary FROM matches WHERE id = ?", (match_id,)).fetchone()
        if row is None:
            raise BgaiError(f"no match {match_id} in {self.path}")
        out = json.loads(row[0])
        out.setdefault("graph", [])
        rows = self.connection.execute(
            "SELECT seq, game, seat, kind, position_id, cube, cube_owner, dice, played, best, error, cost, counted, "
            "mark, detail FROM decisions WHERE match_id = ? ORDER BY seq", (match_id,))
        return {"match_id": match_id, **out, "decisions": [_decision_of(row) for row in rows]}

    def decision(self, match_id: int, seq: int) -> dict:
        """Decision ``seq`` of match ``match_id`` (``analysis``'s form) with the match's ``players`` and whether
        its game is the Crawford game (``crawford``)."""
        row = self.connection.execute(
            "SELECT seq, game, seat, kind, position_id, cube, cube_owner, dice, played, best, error, cost, counted, "
            "mark, detail FROM decisions WHERE match_id = ? AND seq = ?", (match_id, seq)).fetchone()
        if row is None:
            raise BgaiError(f"match {match_id} has no decision {seq}")
        d = _decision_of(row)
        record = self.record(match_id)
        return {**d, "players": list(record.players), "crawford": record.games[d["game"] - 1].crawford}

    def record(self, match_id: int):
        """The stored match ``match_id`` as a ``MatchRecord`` (read once and shared: read it, do not change it)."""
        from bgai.formats.matchfile import parse_mat

        row = self.connection.execute("SELECT record FROM matches WHERE id = ?", (match_id,)).fetchone()
        if row is None:
            raise BgaiError(f"no match {match_id} in {self.path}")
        if row[0] not in self._records:  # (reading replays every play: once a record)
            self._records[row[0]] = parse_mat(row[0])
        return self._records[row[0]]


def _decision_of(row: tuple) -> dict:
    """A ``decisions`` row as a dict of ``MatchAnalysis.to_dict``'s decisions, with its ``seq``."""
    seq, game, seat, kind, pid, cube, owner, dice, played, best, error, cost, counted, mark, detail = row
    extra = json.loads(detail)
    return {"seq": seq, "kind": kind, "game": game, "row": extra.get("row"), "player": seat, "position_id": pid,
            "cube": cube, "cube_owner": owner, "dice": [int(c) for c in dice] if dice else None, "played": played,
            "best": best, "error": error, "cost": cost, "counted": bool(counted), "mark": mark,
            "candidates": extra.get("candidates", []), "luck": extra.get("luck"), "method": extra.get("method")}


def _decision_row(match_id: int, seq: int, d) -> tuple:
    detail = d.to_dict()
    return (match_id, seq, d.game, d.player, d.kind, d.position.position_id(), d.cube, d.cube_owner,
            "".join(map(str, d.dice)) if d.dice else None, d.played, d.best, d.error, d.cost, int(d.counted), d.mark,
            json.dumps({"candidates": detail["candidates"], "luck": detail["luck"], "method": detail["method"],
                        "row": d.row}))


def _date_of(metadata: dict) -> str | None:
    """A match file's date (its ``Date`` or ``EventDate`` field: 2024-05-01, 2024.05.01, 01.05.2024) as ISO 8601."""
    for key in ("Date", "EventDate", "DT"):
        text = str(metadata.get(key, "")).strip()
        for form in ("%Y-%m-%d", "%Y.%m.%d", "%d.%m.%Y", "%Y/%m/%d", "%d %b %Y"):
            try:
                return datetime.datetime.strptime(text, form).date().isoformat()
            except ValueError:
                continue
    return None
