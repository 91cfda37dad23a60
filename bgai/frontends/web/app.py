"""``bgai serve``: a page to play the bot, and a JSON API (OpenAPI at ``/docs``).

The web layer translates only: requests into calls of the library (``bgai.play.session.Session`` for games,
``bgai.eval.bot.Bot`` for positions), its answers and errors into JSON. Endpoints are plain functions, which FastAPI
runs in its thread pool, so the bot's thinking never blocks the event loop. Sessions live in memory, each behind its
own lock, so that concurrent requests on one session apply one after the other.

Errors: a request that does not fit the schema is a 422 naming the field (FastAPI's validation, unknown fields
included; the input itself is never echoed back); input the rules refuse (a position, dice, an illegal play) is a
422 with the reason; an action the game does not allow now (out of turn) is a 409; an unknown session is a 404.

Bounds, for a server that a web page on the same machine can reach: request bodies of at most ``MAX_BODY`` bytes
(413 beyond; a match file's upload ``MAX_UPLOAD``), a Host header naming this server (400 otherwise: a page of
another site that rebinds its DNS name to 127.0.0.1 cannot drive the API), at most ``Work.slots`` searches at
once with ``Work.queue`` more waiting (503 with Retry-After beyond, or after ``Work.wait`` seconds in the queue),
at most ``max_sessions`` sessions in memory, the least recently used dropped first, and one match analysis at a
time, the others queued.
"""

from __future__ import annotations

import dataclasses
import math
import os
import secrets
import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from bgai.core.cube import CubeDecision, CubeOwner
from bgai.core.errors import BgaiError, GameStateError
from bgai.eval.bot import PLAY_PLIES, Bot, load_bot
from bgai.formats.matchfile import MAX_MATCH_FILE_BYTES
from bgai.formats.svg import board_svg
from bgai.formats.xgid import is_xgid, xgid_context
from bgai.frontends.web import models as m
from bgai.play.session import BOT, HUMAN, Phase, Session, TutorWarning

STATIC = Path(str(files("bgai.frontends.web") / "static"))
MAX_BODY = 64 * 1024  # bytes of a request body; the largest real one (a 26-number board) is under 1 KB
#: The analysis page's rollout of a checker play: the best plays of its roll, on the same dice (about a second).
ROLLOUT_PLAYS = 4
DECISION_ROLLOUT_TRIALS, DECISION_ROLLOUT_TRUNCATE = 216, 7  # (0-ply play)
MAX_UPLOAD = MAX_MATCH_FILE_BYTES + 64 * 1024  # bytes of a match file's upload (POST /api/analyses) and its JSON
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
CUBEFUL_PLAYS = 10  # a session hint's plays given their cubeful equity too (the best, as the page shows 8)


class Bots:
    """The bot at each lookahead, loaded once and shared (evaluation is read-only)."""

    def __init__(self, checkpoint=None, default_plies: int = PLAY_PLIES) -> None:
        self.checkpoint = checkpoint
        self.default_plies = default_plies
        self._bots: dict[int, Bot] = {}
        self._lock = threading.Lock()

    def get(self, plies: int | None = None) -> Bot:
        plies = self.default_plies if plies is None else plies
        with self._lock:
            if plies not in self._bots:
                self._bots[plies] = load_bot(self.checkpoint, plies=plies)
            return self._bots[plies]


class Sessions:
    """Sessions by id, the least recently used dropped from memory beyond ``limit``; each with its own lock. With a
    study database ``db`` (``bgai.play.database``) each session is also kept there after every step (``save``), and
    one not in memory (the server restarted, or dropped it) is read back from it, its bot ``bot_of(plies)``."""

    def __init__(self, limit: int = 1000, db: str | None = None, bot_of=None) -> None:
        self.limit, self.db, self.bot_of = limit, db, bot_of
        self._items: OrderedDict[str, tuple[Session, threading.Lock]] = OrderedDict()
        self._lock = threading.Lock()

    def _study(self):
        from bgai.play.database import StudyDatabase

        return StudyDatabase(self.db)

    def add(self, session: Session) -> str:
        key = uuid.uuid4().hex
        with self._lock:
            self._put(key, session)
        self.save(key, session)
        return key

    def _put(self, key: str, session: Session) -> tuple[Session, threading.Lock]:
        self._items[key] = item = (session, threading.Lock())
        while len(self._items) > self.limit:
            self._items.popitem(last=False)
        return item

    def save(self, key: str, session: Session) -> None:
        """Keep ``session``'s state in the database (where there is one), as it stands after its last step."""
        if self.db is not None:
            with self._study() as study:
                study.save_session(key, session)

    def get(self, key: str) -> tuple[Session, threading.Lock]:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            session = None
            if self.db is not None and len(key) <= 64:
                with self._study() as study:
                    session = study.load_session(key, self.bot_of)
            if session is None:
                raise HTTPException(404, f"no session {_clean(key, 64)!r}")
            return self._put(key, session)

    def remove(self, key: str) -> None:
        with self._lock:
            gone = self._items.pop(key, None) is not None
        if self.db is not None:
            with self._study() as study:
                gone = study.delete_session(key) or gone
        if not gone:
            raise HTTPException(404, f"no session {_clean(key, 64)!r}")

    def __len__(self) -> int:
        return len(self._items)


class Work:
    """At most ``slots`` requests think at once (a search, a bot's turn); ``queue`` more wait for a slot, each at
    most ``wait`` seconds; beyond that a request is refused with a 503 and Retry-After."""

    def __init__(self, slots: int | None = None, queue: int = 16, wait: float = 30.0) -> None:
        self.slots = slots or max(1, min(4, os.cpu_count() or 1))
        self.queue, self.wait = queue, wait
        self._free = threading.BoundedSemaphore(self.slots)
        self._waiting = 0
        self._lock = threading.Lock()

    @contextmanager
    def slot(self):
        if not self._free.acquire(blocking=False):
            with self._lock:
                if self._waiting >= self.queue:
                    raise self._busy(f"{self.slots} requests are thinking and {self._waiting} are waiting")
                self._waiting += 1
            try:
                got = self._free.acquire(timeout=self.wait)
            finally:
                with self._lock:
                    self._waiting -= 1
            if not got:
                raise self._busy(f"no slot came free in {self.wait:g} s")
        try:
            yield
        finally:
            self._free.release()

    @staticmethod
    def _busy(why: str) -> HTTPException:
        return HTTPException(503, f"the server is busy ({why}); try again shortly", headers={"Retry-After": "5"})


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes is refused with a 413, whether it says its length
    (Content-Length) or not (chunked), before more than ``limit`` bytes are read."""

    def __init__(self, app, limit: int = MAX_BODY) -> None:
        self.app, self.default = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = MAX_UPLOAD if scope.get("path") == "/api/analyses" else self.default  # (a match file's upload)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            return await self._refuse(send, limit)
        received, refused = 0, False

        async def limited():
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request" and not refused:
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    await self._refuse(send, limit)
            # Once refused, the app is told the client has gone, and what it answers is dropped.
            return {"type": "http.disconnect"} if refused else message

        async def sending(message):
            if not refused:
                await send(message)

        await self.app(scope, limited, sending)

    async def _refuse(self, send, limit: int) -> None:
        body = f'{{"detail":"request bodies are at most {limit} bytes"}}'.encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def _clean(value, limit: int = 200):
    """``value`` fit for a JSON answer: strings with lone surrogates escaped and cut to ``limit`` characters."""
    if isinstance(value, str):
        text = value.encode("utf-8", "backslashreplace").decode("utf-8")
        return text if len(text) <= limit else text[:limit] + "..."
    if isinstance(value, int) and not isinstance(value, bool):
        return value if abs(value) < 2**53 else _clean(str(value), 40)
    return _clean(str(value))


class Analyses:
    """The match analyses the server runs (``POST /api/analyses``), one at a time on a thread of their own, each
    stored in the study database ``db`` when done (``bgai.play.database``); their jobs by id, the latest
    ``keep``."""

    def __init__(self, db, keep: int = 100) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.db, self.keep = db, keep
        self.jobs: OrderedDict[str, dict] = OrderedDict()
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="bgai-analyses")

    def start(self, record, bot: Bot, source: str) -> dict:
        from bgai.play.analysis import analyse_match
        from bgai.play.database import StudyDatabase

        key = secrets.token_urlsafe(12)
        job = {"id": key, "status": "queued", "done": 0, "total": 0, "match_id": None, "error": None,
               "analysis": None}
        with self.lock:
            self.jobs[key] = job
            while len(self.jobs) > self.keep:
                self.jobs.popitem(last=False)

        def progress(done: int, total: int) -> None:
            job.update(status="running", done=done, total=total)

        def run() -> None:
            try:
                analysis = analyse_match(record, bot, progress=False, on_progress=progress)
                with StudyDatabase(self.db) as db:
                    job["match_id"] = db.add(analysis, source)
                job.update(analysis=analysis.to_dict(), status="done")
            except Exception as error:  # (reported to whoever asks; the server goes on)
                job.update(status="failed", error=" ".join(str(error).split())[:500])

        self.pool.submit(run)
        return job

    def get(self, key: str) -> dict:
        with self.lock:
            job = self.jobs.get(key)
        if job is None:
            raise HTTPException(404, f"no analysis {_clean(key, 40)!r} (finished ones are in GET /api/analyses)")
        return job


def create_app(plies: int = PLAY_PLIES, checkpoint=None, max_sessions: int = 100, hosts=LOCAL_HOSTS,
               work: Work | None = None, db=None) -> FastAPI:
    """The app: ``plies`` is the default lookahead of hints, evaluations and the bot of new sessions (that of
    ``bgai play`` too, ``PLAY_PLIES``); ``hosts``
    the names the Host header may give (``("*",)``: any); ``work`` bounds the searches running at once; ``db`` the
    study database the match analyses go into (``bgai.play.database.database_path``: default ``$BGAI_DB`` or the
    data folder's)."""
    app = FastAPIOffline(  # FastAPI whose /docs serves Swagger UI's files from the package: nothing off the machine
        favicon_url="/favicon.ico",
        title="bgai",
        version="0.1.0",
        description="Play bgai, a backgammon bot, and ask it about positions. Positions are Position IDs, XGIDs "
                    "or 26-number boards, always seen from the player on roll; session values are yours.",
    )
    from bgai.play.database import database_path

    bots = Bots(checkpoint, plies)
    study = database_path(db)
    sessions = Sessions(max_sessions, study, bots.get)
    work = work or Work()
    analyses = Analyses(study)
    app.state.bots, app.state.sessions, app.state.work, app.state.analyses = bots, sessions, work, analyses
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))
    app.add_middleware(BodyLimit)

    @app.exception_handler(TutorWarning)
    def _tutored(request: Request, error: TutorWarning):
        tutor = m.TutorOut(action=error.action, best=error.best, error=error.error, mark=error.mark)
        return JSONResponse({"detail": _clean(" ".join(str(error).split()), 1000), "tutor": tutor.model_dump()},
                            status_code=409)

    @app.exception_handler(GameStateError)
    def _out_of_turn(request: Request, error: GameStateError):
        return JSONResponse({"detail": _clean(" ".join(str(error).split()), 1000)}, status_code=409)

    @app.exception_handler(BgaiError)
    def _bad_input(request: Request, error: BgaiError):
        return JSONResponse({"detail": _clean(" ".join(str(error).split()), 1000)}, status_code=422)

    @app.exception_handler(RequestValidationError)
    def _invalid(request: Request, error: RequestValidationError):
        # The field and what is wrong with it; never the input, which may be huge or not encodable as JSON.
        detail = [{"loc": [_clean(part, 100) for part in e.get("loc", ())], "msg": _clean(e.get("msg", "")),
                   "type": _clean(e.get("type", ""), 50)} for e in error.errors()[:20]]
        return JSONResponse({"detail": detail}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    def _http(request: Request, error: StarletteHTTPException):
        return JSONResponse({"detail": _clean(error.detail)}, status_code=error.status_code,
                            headers=getattr(error, "headers", None))

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    def page():
        return FileResponse(STATIC / "index.html")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon():
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    # Positions ----------------------------------------------------------------------------------------------

    @app.post("/api/evaluate", response_model=m.EvaluateOut, tags=["positions"],
              summary="Evaluate a position: chances, equity and the cube action of the player on roll")
    def evaluate(body: m.EvaluateIn) -> m.EvaluateOut:
        pos = m.to_position(body.position)
        bot = bots.get(body.plies)
        with work.slot():
            decision = _decide(bot, pos, body)
            e = bot.evaluate(pos)
        return m.EvaluateOut(position_id=pos.position_id(), xgid=pos.xgid(), pips=pos.pip_counts(),
                             plies=bot.plies, evaluation=m.Probabilities(**e.__dict__),
                             cube=_cube_out(decision, body.rollout))

    @app.post("/api/moves", response_model=m.MovesOut, tags=["positions"],
              summary="Rank the plays of a roll (a hint), with each play's equity and chances for the mover")
    def moves(body: m.MovesIn) -> m.MovesOut:
        pos = m.to_position(body.position)
        bot = bots.get(body.plies)
        with work.slot():
            ranked = bot.hint(pos, body.dice)
        return m.MovesOut(position_id=pos.position_id(), dice=tuple(body.dice), plies=bot.plies,
                          network=bot.network, plays=_plays(ranked, body.limit))

    @app.post("/api/cube", response_model=m.CubeOut, tags=["positions"],
              summary="The cube action of the player on roll, before it rolls")
    def cube(body: m.CubeIn) -> m.CubeOut:
        pos = m.to_position(body.position)
        with work.slot():
            return _cube_out(_decide(bots.get(body.plies), pos, body), body.rollout)

    @app.post("/api/cube/scores", response_model=m.ScoresOut, tags=["positions"],
              summary="The cube action of the player on roll at every score of a match, and for money")
    def cube_scores(body: m.ScoresIn) -> m.ScoresOut:
        pos = m.to_position(body.position)
        bot = bots.get(body.plies)
        with work.slot():
            grid = bot.score_grid(pos, body.length, body.cube, {"center": "centered"}.get(body.owner, body.owner),
                                  met=body.met)
        cell = lambda c: m.ScoreCellOut(**dataclasses.asdict(c))  # noqa: E731
        return m.ScoresOut(position_id=pos.position_id(), length=grid.length, met=body.met, cube=grid.cube,
                           owner=body.owner,
                           plies=bot.cube_plies, cells=[[cell(c) for c in row] for row in grid.cells],
                           money=cell(grid.money))

    # Match analyses -----------------------------------------------------------------------------------------

    @app.post("/api/analyses", response_model=m.AnalysisJob, status_code=202, tags=["analyses"],
              summary="Analyse a match file (.mat or SGF text): started at once, judged on the server's thread")
    def new_analysis(body: m.AnalysisIn) -> m.AnalysisJob:
        from bgai.core.errors import MatchFileError
        from bgai.formats.matchfile import parse_match

        try:
            record = parse_match(body.match)
        except MatchFileError as error:
            raise HTTPException(422, _clean(" ".join(str(error).split()), 500)) from None
        if not record.games:
            raise HTTPException(422, "the match holds no game to analyse")
        job = analyses.start(record, bots.get(body.plies), body.name or "upload")
        return _job(job)

    @app.get("/api/analyses/{key}", response_model=m.AnalysisJob, tags=["analyses"],
             summary="An analysis's progress, and its result when done")
    def analysis(key: str) -> m.AnalysisJob:
        return _job(analyses.get(key), full=True)

    @app.get("/api/analyses", response_model=list[m.StoredMatch], tags=["analyses"],
             summary="The analysed matches of the study database, newest first")
    def stored(player: str | None = None) -> list[m.StoredMatch]:
        from bgai.play.database import StudyDatabase

        with StudyDatabase(analyses.db) as study:
            return [m.StoredMatch(**row) for row in study.matches(player)]

    @app.get("/api/matches/{match_id}", tags=["analyses"],
             summary="A stored match's analysis (as bgai analyse --json writes it, each decision with its seq)")
    def stored_analysis(match_id: int) -> dict:
        from bgai.play.database import StudyDatabase

        with StudyDatabase(analyses.db) as study:
            try:
                return study.analysis(match_id)
            except BgaiError as error:
                raise HTTPException(404, str(error)) from None

    @app.get("/api/matches/{match_id}/decisions/{seq}/board.svg", response_class=Response, tags=["analyses"],
             summary="The board of a stored decision, arrows for the best play (green) and the play made (red)")
    def decision_svg(match_id: int, seq: int) -> Response:
        from bgai.formats.position import Position
        from bgai.play.analysis_report import decision_board
        from bgai.play.database import StudyDatabase

        with StudyDatabase(analyses.db) as study:
            try:
                d = study.decision(match_id, seq)
            except BgaiError as error:
                raise HTTPException(404, str(error)) from None
        svg = decision_board(Position.from_position_id(d["position_id"]), d["kind"], d["player"], d["dice"],
                             d["cube"], d["cube_owner"], d["played"], d["best"], tuple(d["players"]), d["crawford"],
                             width=520)
        return Response(svg, media_type="image/svg+xml")

    @app.get("/api/drills", tags=["drills"],
             summary="A player's drills: new cards from its stored errors, the cards due now, its progress")
    def drills(player: str = Query(max_length=200), limit: int = Query(20, ge=1, le=200)) -> dict:
        from bgai.play.database import StudyDatabase
        from bgai.play.drills import Drills

        with StudyDatabase(analyses.db) as study:
            practice = Drills(study)
            added = practice.make_cards(player)
            return {"player": player, "added": added, "due": practice.due(player, limit=limit),
                    "progress": practice.progress(player)}

    @app.get("/api/players/{name}", tags=["analyses"],
             summary="A player's analysed matches: error rate match by match (oldest first), worst decisions")
    def player(name: str, limit: int = Query(10, ge=1, le=100)) -> dict:
        from bgai.play.database import StudyDatabase

        with StudyDatabase(analyses.db) as study:
            history = study.history(name)
            if not history:
                raise HTTPException(404, f"no analysed match of {_clean(name, 60)!r}")
            return {"name": name, "history": history, "worst": study.worst(name, limit)}

    @app.get("/api/drills/players", tags=["drills"], summary="The players with analysed matches or drills")
    def drill_players() -> list[str]:
        from bgai.play.database import StudyDatabase

        with StudyDatabase(analyses.db) as study:
            return [row[0] for row in study.connection.execute(
                "SELECT player FROM results UNION SELECT player FROM cards ORDER BY 1")]

    @app.get("/api/drills/{card}", tags=["drills"],
             summary="A drill card: its decision, score, and an XGID to set it up on a board (the player as X)")
    def drill_card(card: int) -> dict:
        from bgai.play.database import StudyDatabase
        from bgai.play.drills import Drills

        with StudyDatabase(analyses.db) as study:
            try:
                practice = Drills(study)
                return {**practice.card(card), "xgid": practice.board_xgid(card)}
            except BgaiError as error:
                raise HTTPException(404, str(error)) from None

    @app.post("/api/drills/{card}/answer", response_model=m.VerdictOut, tags=["drills"],
              summary="Answer a drill: how much the answer loses, the best answers, when the card comes back")
    def drill_answer(card: int, body: m.DrillAnswerIn) -> m.VerdictOut:
        from bgai.play.database import StudyDatabase
        from bgai.play.drills import Drills

        with work.slot(), StudyDatabase(analyses.db) as study:
            try:
                verdict = Drills(study).answer(card, body.answer, bots.get(body.plies))
            except BgaiError as error:
                status = 404 if str(error).startswith("no card") else 422
                raise HTTPException(status, _clean(" ".join(str(error).split()), 500)) from None
        return m.VerdictOut(**dataclasses.asdict(verdict))

    @app.get("/api/drills/{card}/board.svg", response_class=Response, tags=["drills"],
             summary="A drill's board (no arrows), or with ?answer= the answer's arrows (red) and the best's (green)")
    def drill_svg(card: int, answer: str | None = Query(None, max_length=100),
                  best: str | None = Query(None, max_length=100)) -> Response:
        from bgai.formats.position import Position
        from bgai.play.analysis_report import decision_board
        from bgai.play.database import StudyDatabase
        from bgai.play.drills import Drills

        with StudyDatabase(analyses.db) as study:
            try:
                c = Drills(study).card(card)
            except BgaiError as error:
                raise HTTPException(404, str(error)) from None
        try:
            svg = decision_board(Position.from_position_id(c["position_id"]), c["kind"], c["player"], c["dice"],
                                 c["cube"], c["cube_owner"], answer, best, tuple(c["players"]), c["crawford"],
                                 width=520)
        except BgaiError as error:
            raise HTTPException(422, _clean(str(error), 300)) from None
        return Response(svg, media_type="image/svg+xml")

    @app.post("/api/matches/{match_id}/decisions/{seq}/rollout", tags=["analyses"],
              summary="Roll out a stored decision: its roll's best plays on the same dice, or its cube (money)")
    def decision_rollout(match_id: int, seq: int) -> dict:
        from bgai.eval.bot import cube_rollout_refusal
        from bgai.eval.rollout import rollout_plays
        from bgai.formats.position import Position
        from bgai.play.database import StudyDatabase

        with StudyDatabase(analyses.db) as study:
            try:
                d = study.decision(match_id, seq)
                record = study.record(match_id)
            except BgaiError as error:
                raise HTTPException(404, str(error)) from None
        pos = Position.from_position_id(d["position_id"])
        bot = bots.get(0)
        with work.slot():
            if d["kind"] == "move":
                results = rollout_plays(bot, pos, tuple(d["dice"]), top=ROLLOUT_PLAYS, trials=DECISION_ROLLOUT_TRIALS,
                                        truncate=DECISION_ROLLOUT_TRUNCATE, plies=0)
                first = results[0]
                return {"kind": "move", "trials": first.trials, "settings": first.settings,
                        "plays": [{"play": r.play, "equity": r.equity.mean, "se": r.equity.se} for r in results]}
            if d["kind"] not in ("double", "take"):
                raise HTTPException(422, f"a {d['kind']} decision is not rolled out")
            refusal = cube_rollout_refusal(record if record.length else None, jacoby=record.jacoby)
            if refusal:
                raise HTTPException(422, refusal)
            on_roll = d["player"] if d["kind"] == "double" else 1 - d["player"]
            owner = CubeOwner.of_seat(d["cube_owner"], on_roll)
            decision = bot.cube_decision(pos, d["cube"], owner, None, rollout=True)
        rolled = decision.rollout
        return {"kind": "cube", "action": decision.action, "trials": getattr(rolled, "trials", None),
                "no_double": decision.no_double, "double_take": decision.double_take,
                "double_pass": decision.double_pass,
                "se": [getattr(getattr(rolled, name, None), "se", None) for name in ("no_double", "double_take")]}

    @app.get("/analysis", include_in_schema=False)
    def analysis_page() -> FileResponse:
        return FileResponse(STATIC / "analysis.html")

    # Sessions -----------------------------------------------------------------------------------------------

    def state(key: str, session: Session, svg: bool) -> m.SessionState:
        return _state(key, session, svg)

    def act(key: str, svg: bool, action) -> m.SessionState:
        session, lock = sessions.get(key)
        if action is None:
            with lock:
                return state(key, session, svg)
        with work.slot(), lock:
            action(session)  # all or nothing: a refused action leaves the session as it was
            sessions.save(key, session)  # (a restart finds it as it stands now)
            return state(key, session, svg)

    @app.post("/api/sessions", response_model=m.SessionState, status_code=201, tags=["sessions"],
              summary="Start a game (or match) against the bot")
    def new_session(body: m.NewSession, svg: bool = False) -> m.SessionState:
        with work.slot():
            session = Session(bots.get(body.plies), match_length=body.match_length, seed=body.seed,
                              jacoby=body.jacoby, tutor=body.tutor)
            if body.position:
                session.setup(body.position)
        key = sessions.add(session)
        return state(key, session, svg)

    @app.get("/api/sessions/{key}", response_model=m.SessionState, tags=["sessions"], summary="A session's state")
    def get_session(key: str, svg: bool = False) -> m.SessionState:
        return act(key, svg, None)

    @app.delete("/api/sessions/{key}", status_code=204, tags=["sessions"], summary="End a session")
    def delete_session(key: str) -> None:
        sessions.remove(key)

    @app.post("/api/sessions/{key}/roll", response_model=m.SessionState, tags=["sessions"],
              summary="Roll the dice (your turn, when you could double instead)")
    def roll(key: str, svg: bool = False, confirm: bool = Query(False, description=m.CONFIRM_HELP)):
        return act(key, svg, lambda s: s.roll(confirm=confirm))

    @app.post("/api/sessions/{key}/double", response_model=m.SessionState, tags=["sessions"],
              summary="Double (or redouble) the bot; it takes or passes at once")
    def double(key: str, svg: bool = False, confirm: bool = Query(False, description=m.CONFIRM_HELP)):
        return act(key, svg, lambda s: s.double(confirm=confirm))

    @app.post("/api/sessions/{key}/take", response_model=m.SessionState, tags=["sessions"],
              summary="Take the bot's double")
    def take(key: str, svg: bool = False, confirm: bool = Query(False, description=m.CONFIRM_HELP)):
        return act(key, svg, lambda s: s.take(confirm=confirm))

    @app.post("/api/sessions/{key}/pass", response_model=m.SessionState, tags=["sessions"],
              summary="Pass the bot's double (the game ends)")
    def drop(key: str, svg: bool = False, confirm: bool = Query(False, description=m.CONFIRM_HELP)):
        return act(key, svg, lambda s: s.drop(confirm=confirm))

    @app.post("/api/sessions/{key}/step", response_model=m.SessionState, tags=["sessions"],
              summary="Move one checker of your play (one die or several in a row)")
    def step(key: str, body: m.StepIn, svg: bool = False):
        return act(key, svg, lambda s: s.step(body.from_point, body.to_point))

    @app.post("/api/sessions/{key}/play", response_model=m.SessionState, tags=["sessions"],
              summary="Play a move written in standard notation (whole or in part)")
    def play(key: str, body: m.PlayIn, svg: bool = False, confirm: bool = Query(False, description=m.CONFIRM_HELP)):
        return act(key, svg, lambda s: s.play(body.move, finish=body.finish, reset=body.reset, confirm=confirm))

    @app.post("/api/sessions/{key}/undo", response_model=m.SessionState, tags=["sessions"],
              summary="Take back the last checker move of your play")
    def undo(key: str, svg: bool = False):
        return act(key, svg, lambda s: s.undo())

    @app.post("/api/sessions/{key}/finish", response_model=m.SessionState, tags=["sessions"],
              summary="Finish your (complete) play; the bot then takes its turn")
    def finish(key: str, svg: bool = False, confirm: bool = Query(False, description=m.CONFIRM_HELP)):
        return act(key, svg, lambda s: s.finish(confirm=confirm))

    @app.post("/api/sessions/{key}/resign", response_model=m.SessionState, tags=["sessions"],
              summary="Offer to resign 1, 2 or 3 times the cube; the bot accepts if its equity says so")
    def resign(key: str, body: m.ResignIn, svg: bool = False):
        return act(key, svg, lambda s: s.resign(body.points))

    @app.post("/api/sessions/{key}/next", response_model=m.SessionState, tags=["sessions"],
              summary="Start the next game (after one is over)")
    def next_game(key: str, svg: bool = False):
        return act(key, svg, lambda s: s.next_game())

    @app.post("/api/sessions/{key}/setup", response_model=m.SessionState, tags=["sessions"],
              summary="Play on from a position (Position ID or XGID); the game in progress is abandoned")
    def setup(key: str, body: m.SetupIn, svg: bool = False):
        return act(key, svg, lambda s: s.setup(body.position))

    @app.get("/api/sessions/{key}/hint", response_model=m.MovesOut, tags=["sessions"],
             summary="Your plays of this roll ranked by the bot")
    def hint(key: str, limit: int | None = Query(None, ge=1, le=10_000, description="At most this many plays.")
             ) -> m.MovesOut:
        session, lock = sessions.get(key)
        with work.slot(), lock:
            ranked = session.hint()[:limit]
            hints = session.play_hints(CUBEFUL_PLAYS, ranked)  # (the rest, if asked, come after, as ranked)
            pos, dice, bot = session.position, session.dice, session.bot
        assert dice is not None  # (hint refuses a session without a roll)
        plays = [*(h.ranked for h in hints), *ranked[len(hints):]]
        return m.MovesOut(position_id=pos.position_id(), dice=dice, plies=bot.plies, network=bot.network,
                          perspective="you", plays=_plays(plays, None, hints))

    @app.get("/api/sessions/{key}/cube-hint", response_model=m.CubeHintOut, tags=["sessions"],
             summary="The bot's advice on your cube decision: to double, or to take")
    def cube_hint(key: str, rollout: bool = Query(False, description=m.ROLLOUT_HELP)) -> m.CubeHintOut:
        session, lock = sessions.get(key)
        with work.slot(), lock:
            h = session.cube_hint(rollout=rollout)
            unit: Literal["mwc", "stake"] = "mwc" if session.is_match else "stake"
            refusal = session.cube_rollout_refusal
        return m.CubeHintOut(kind=h.kind, action=h.action, unit=unit, equities=h.equities,
                             decision=_cube_out(h.decision, rollout), method="rollout" if rollout else "formula",
                             rollout_refusal=refusal)

    @app.post("/api/sessions/{key}/save-card", response_model=m.SavedCardOut, status_code=201, tags=["sessions"],
              summary="Save your decision now (your roll's play, your double, or your answer to a double) as a drill")
    def save_card(key: str, body: m.SaveCardIn) -> m.SavedCardOut:
        from bgai.play.database import StudyDatabase
        from bgai.play.drills import Drills

        session, lock = sessions.get(key)
        with work.slot(), lock:
            kind, context = _session_decision(session)
            player = body.player or session.names[HUMAN]
            with StudyDatabase(analyses.db) as study:
                card = Drills(study).save(player, session.position, kind, session.bot, **context)
        return m.SavedCardOut(card=card, player=player, kind=kind)

    @app.get("/api/sessions/{key}/match.mat", response_class=PlainTextResponse, tags=["sessions"],
             summary="The games so far as a .mat file")
    def mat(key: str):
        session, lock = sessions.get(key)
        with lock:
            text = session.mat_text()
        name = "bgai-match.mat"
        return PlainTextResponse(text, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    return app


# Translation --------------------------------------------------------------------------------------------------


def _session_decision(session: Session) -> tuple[Literal["move", "double", "take"], dict]:
    """The person's decision now, as a drill card takes it: (kind, the roll and the cube context from the side of
    the player on roll: the person, or the bot doubling it)."""
    kind: Literal["move", "double", "take"]
    if session.phase is Phase.MOVE:
        kind = "move"
    elif session.phase is Phase.ROLL:
        kind = "double"
    elif session.phase is Phase.TAKE:
        kind = "take"
    else:
        raise GameStateError("there is no decision of yours to save now: save one on your roll or facing a double")
    on_roll = HUMAN if kind != "take" else BOT
    owner = CubeOwner.of_seat(session.cube_owner(), on_roll)
    context: dict[str, Any] = {"cube": session.cube, "owner": owner, "match": session.match_score(on_roll),
                               "jacoby": session.jacoby}
    if kind == "move":
        context["dice"] = session.dice
    return kind, context


def _job(job: dict, full: bool = False) -> m.AnalysisJob:
    return m.AnalysisJob(id=job["id"], status=job["status"], done=job["done"], total=job["total"],
                         match_id=job["match_id"], error=job["error"], analysis=job["analysis"] if full else None)


def _decide(bot: Bot, pos, body: m.CubeIn) -> CubeDecision:
    """The cube decision a request asks for: an XGID's cube and score, unless the request gives its own."""
    text = body.position if isinstance(body.position, str) else ""
    cube, owner, match = xgid_context(text) if text and is_xgid(text) else (1, "center", None)
    if body.cube is not None:
        cube, owner = body.cube, body.owner or "me"
    elif body.owner is not None:
        owner = body.owner
    if body.match is not None:
        match = body.match.to_score()
    return bot.cube_decision(pos, cube, owner, match, jacoby=body.jacoby, rollout=body.rollout)


def _cube_out(d: CubeDecision, rollout: bool = False) -> m.CubeOut:
    """``d`` as JSON: a rollout's efficiency, NaN (it assumes none), becomes null; JSON has no NaN."""
    return m.CubeOut(action=d.action, should_double=d.should_double, should_take=d.should_take,
                     too_good=d.too_good, may_double=d.may_double, no_double=d.no_double, double_take=d.double_take,
                     double_pass=d.double_pass, cubeless=d.cubeless,
                     efficiency=None if math.isnan(d.efficiency) else d.efficiency,
                     unit="stake" if d.match is None else "mwc", method="rollout" if rollout else "formula",
                     plies=None if rollout else d.plies)


def _plays(ranked, limit: int | None, hints: Sequence = ()) -> list[m.RankedPlayOut]:
    """The plays of a hint; the first ``len(hints)`` with their cubeful equities (a session's ``PlayHint``s)."""
    return [
        m.RankedPlayOut(play=str(r.move), steps=r.move.checker_steps(), equity=r.equity,
                        difference=r.difference, plies=r.plies,
                        chances=m.Probabilities(**r.evaluation.__dict__), position_id=r.move.after.position_id(),
                        cubeful_equity=hints[i].cubeful if i < len(hints) else None,
                        cubeful_difference=hints[i].difference if i < len(hints) else None)
        for i, r in enumerate(ranked[:limit])
    ]


def _who(player: int | None):
    return None if player is None else "you" if player == HUMAN else "bot"


def _state(key: str, s: Session, svg: bool) -> m.SessionState:
    play = None
    if s.phase is Phase.MOVE:
        p = s.play_under_way()
        play = m.PlayState(text=p.text(), steps=[(x.src, x.dst, x.hit) for x in p.steps], complete=p.complete,
                           targets=p.targets())
    last = None
    if s.last_move is not None:
        player, move = s.last_move
        last = m.LastMove(player=_who(player), dice=move.dice, play=str(move), steps=move.checker_steps())
    ms = s.match_score() if s.is_match else None
    return m.SessionState(
        id=key, version=s.version, phase=s.phase.value, status=s.status(), turn=_who(s.turn), names=s.names,
        bot=s.bot.name, plies=s.bot.plies, seed=s.seed, match_length=s.match_length, jacoby=s.jacoby, tutor=s.tutor,
        score=(s.score[HUMAN], s.score[BOT]), crawford=s.crawford,
        post_crawford=bool(ms and ms.post_crawford), game=s.game.number,
        cube=m.CubeState(value=s.cube, owner=_who(s.cube_owner()), may_double=s.may_double_now,
                         offered=s.phase is Phase.TAKE),
        dice=s.dice if s.phase is Phase.MOVE else None,
        dice_left=list(s.play_under_way().remaining_dice) if s.phase is Phase.MOVE else None,
        play=play, last_move=last, pips=s.pip_counts(), position_id=s.position_id(), xgid=s.xgid(),
        log=[a.describe(s.names) for a in s.game.actions],
        svg=session_svg(s) if svg else None,
    )


def session_svg(s: Session) -> str:
    """The board of a session from the person's side (the person at the bottom), scaled to the page."""
    from bgai.formats.position import Position

    on_roll = s.turn
    options: dict[str, Any] = dict(cube=s.cube, cube_owner=CubeOwner.of_seat(s.cube_owner(), on_roll), width=None,
                                   interactive=True)
    if s.last_move is not None:
        player, move = s.last_move
        options.update(last_move=move.checker_journeys(),  # where its checkers started and ended
                       last_mover="me" if player == on_roll else "opponent")
    if s.phase is Phase.TAKE:  # the bot on roll has doubled: the cube waits, lit, for the person's answer
        options.update(cube=2 * s.cube, cube_offered=True)
    if s.phase is Phase.ROLL and s.last_move is not None and s.last_move[0] == BOT:
        # The bot's roll, just played, stays on its side of the board until the person rolls.
        options.update(dice=s.last_move[1].dice, dice_roller="opponent")
    if s.phase is Phase.MOVE:
        partial = s.play_under_way()
        if partial.steps:  # the person's own moves this turn show instead of the bot's last play
            options.update(last_move=[(x.src, x.dst) for x in partial.steps], last_mover="me")
        return board_svg(Position(partial.board), dice=s.dice, dice_left=partial.remaining_dice, **options)
    return board_svg(s.position, bottom="on_roll" if on_roll == HUMAN else "opponent", **options)
