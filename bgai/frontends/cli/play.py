"""The commands to play and analyse: ``bgai play``, ``serve``, ``external``, ``analyse`` and ``ubgi``."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from bgai.core.errors import BgaiError
from bgai.frontends.cli.common import (
    PERSON_PLIES_DEFAULT,
    person_plies,
)

if TYPE_CHECKING:
    pass


def _play(args: argparse.Namespace) -> None:
    import datetime

    from bgai.eval.bot import load_bot
    from bgai.frontends.terminal import Terminal
    from bgai.play.session import Session

    if args.match is not None and args.match < 1:
        raise BgaiError(f"--match must be at least 1 point, got {args.match}")
    if args.tutor is not None and not args.tutor >= 0:
        raise BgaiError(f"--tutor is the EMG an action may lose unwarned, 0 or more, got {args.tutor}")
    bot = load_bot(args.checkpoint, plies=person_plies(args))
    session = Session(bot, match_length=args.match or 0, seed=args.seed, jacoby=args.jacoby, tutor=args.tutor,
                      tutor_plies=args.tutor_plies)
    if args.position:
        session.setup(args.position)
    from bgai.core.files import games_dir

    stamp = datetime.datetime.now().strftime("bgai-%Y%m%d-%H%M%S.mat")
    save = None if args.no_save else args.save or str(games_dir() / stamp)
    Terminal(session, save_path=save).run()


def add_play(commands) -> None:
    """``bgai play``: its arguments."""
    play = commands.add_parser("play", help="play the bot in the terminal (money games or a match, with the cube)")
    play.add_argument("--match", type=int, metavar="N", help="a match to N points (default: money games)")
    play.add_argument("--plies", type=int, help=f"the bot's lookahead: 0, 1 or 2 ({PERSON_PLIES_DEFAULT})")
    play.add_argument("--seed", type=int, help="seed of the dice, to replay a session (default: random)")
    play.add_argument("--jacoby", action="store_true", help="money: the Jacoby rule")
    play.add_argument("--position", help="start from this Position ID or XGID (an XGID's cube, turn, dice and "
                                         "score too; X is you)")
    play.add_argument("--save", metavar="FILE", help="save the games as a .mat file on exit (default "
                                                     "~/.local/share/bgai/games/bgai-DATE-TIME.mat, or under "
                                                     "$BGAI_GAMES_DIR or $XDG_DATA_HOME/bgai/games)")
    play.add_argument("--no-save", action="store_true", help="do not save the games")
    # (the bare flag's threshold is bgai.play.session.TUTOR_THRESHOLD, written here so as not to import the bot)
    play.add_argument("--tutor", type=float, nargs="?", const=0.03, metavar="EMG",
                      help="the tutor: before a play or cube action that loses EMG or more (alone: 0.03, the "
                           "analysis's doubtful error), say so and ask whether to make it; off by default (the "
                           "terminal's tutor on|off too)")
    play.add_argument("--tutor-plies", type=int, help="the lookahead the tutor judges at (default: the bot's)")
    play.add_argument("--checkpoint", help="checkpoint to load (default: the network shipped with bgai)")
    play.set_defaults(run=_play)


def _serve(args: argparse.Namespace) -> None:
    try:
        import uvicorn

        from bgai.frontends.web import create_app
    except ImportError as error:
        if (error.name or "").partition(".")[0] == "bgai":
            raise  # a bug in bgai.frontends.web, not a missing extra
        raise BgaiError(f"the web app needs the web extra: pip install 'bgai[web]' ({error})") from None
    from bgai.eval.bot import MAX_PLIES

    plies = person_plies(args)
    if not 0 <= plies <= MAX_PLIES:
        raise BgaiError(f"plies must be an integer 0..{MAX_PLIES}, got {plies}")
    if not 0 < args.port < 65536:
        raise BgaiError(f"--port must be 1..65535, got {args.port}")
    from bgai.frontends.web.app import LOCAL_HOSTS

    hosts = (*LOCAL_HOSTS, *([] if args.host in ("0.0.0.0", "::") else [args.host]), *args.allow_host)
    app = create_app(plies=plies, checkpoint=args.checkpoint, hosts=hosts, db=args.db)
    app.state.bots.get()  # load the bot before the first request
    print(f"bgai serve: play at http://{args.host}:{args.port}/  (API docs: /docs; Ctrl-C to stop)", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


def add_serve(commands) -> None:
    """``bgai serve``: its arguments."""
    serve = commands.add_parser("serve", help="the web app: play the bot in the browser, and the JSON API (/docs)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--plies", type=int, help="default lookahead of the bot and its hints: 0, 1 or 2 "
                                                 f"({PERSON_PLIES_DEFAULT})")
    serve.add_argument("--checkpoint", help="checkpoint to load (default: the network shipped with bgai)")
    serve.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                       help="a further name the Host header may give (this machine's names and --host are allowed; "
                            "repeat for several; '*' allows any, which lets web pages of other sites reach the API "
                            "through DNS rebinding)")
    serve.add_argument("--db", metavar="PATH", help="the study database the page's match analyses go into (default "
                                                    "$BGAI_DB, else study.sqlite in bgai's data folder)")
    serve.set_defaults(run=_serve)


def _external(args: argparse.Namespace) -> None:
    from bgai.frontends.external import main

    main(args)


def add_external(commands) -> None:
    """``bgai external``: its arguments."""
    external = commands.add_parser("external", help="be GNU Backgammon's external player (gnubg: set player 0 external "
                                                     "127.0.0.1:5555)")
    external.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine "
                                                              "only)")
    external.add_argument("--port", type=int, default=5555, help="port (default 5555; 0 picks a free one)")
    external.add_argument("--plies", type=int, default=0, help="the bot's lookahead: 0, 1 or 2 (default 0)")
    external.add_argument("--checkpoint", help="checkpoint to load (default: the network shipped with bgai)")
    external.add_argument("--no-jacoby", dest="jacoby", action="store_false",
                          help="money games without the Jacoby rule (gnubg's 'set jacoby off'; its default is on)")
    external.add_argument("--beavers", action="store_true",
                          help="bgai may beaver in money games (only if gnubg allows them: 'set beavers')")
    external.add_argument("--verbose", action="store_true", help="print every board gnubg sends and bgai's answer")
    external.set_defaults(run=_external)


def _analyse(args: argparse.Namespace) -> None:
    import os
    from pathlib import Path

    from bgai.core.errors import MatchFileError
    from bgai.eval.bot import load_bot
    from bgai.formats.matchfile import read_match
    from bgai.play.analysis import analyse_match
    from bgai.play.analysis_report import html_report, text_report

    if not os.path.isfile(args.file):  # unlike Path.is_file, never raises (a name too long is no file)
        raise BgaiError(f"no match file {args.file}")
    try:
        record = read_match(Path(args.file))
    except MatchFileError as error:  # the file's name, then the line and what is wrong there
        raise BgaiError(str(error) if args.file in str(error) else f"{args.file}: {error}") from None
    if not record.games:
        raise BgaiError(f"{args.file} holds no game to analyse")
    bot = load_bot(args.checkpoint, plies=person_plies(args))
    analysis = analyse_match(record, bot, progress=not args.quiet, cube_rollout=args.cube_rollout, met=args.met)
    if args.json:
        text = json.dumps(analysis.to_dict(), indent=1)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n")
    if args.html:
        Path(args.html).write_text(html_report(analysis))
    if args.json != "-":
        print(text_report(analysis), end="")
    if not args.no_db:
        from bgai.play.database import StudyDatabase

        with StudyDatabase(args.db) as db:
            match_id = db.add(analysis, os.path.abspath(args.file))
        if args.json != "-":
            print(f"Stored as match {match_id} in {db.path} (bgai study; --no-db to leave it out)")


def add_analyse(commands) -> None:
    """``bgai analyse``: its arguments."""
    analyse = commands.add_parser("analyse", aliases=["analyze"],
                                  help="judge every decision of a match file (.mat or SGF): errors, error rates, luck")
    analyse.add_argument("file", help="a .mat (Jellyfish, GNU Backgammon, eXtreme Gammon) or GNU Backgammon SGF file")
    analyse.add_argument("--plies", type=int, help=f"lookahead of the judge: 0, 1 or 2 ({PERSON_PLIES_DEFAULT})")
    analyse.add_argument("--json", metavar="PATH", help="write the analysis as JSON to PATH ('-': standard output, "
                                                        "instead of the text report)")
    analyse.add_argument("--html", metavar="PATH", help="write an HTML report (boards of the marked errors, equity "
                                                        "graph) to PATH")
    analyse.add_argument("--checkpoint", help="checkpoint to load (default: the network shipped with bgai)")
    analyse.add_argument("--cube-rollout", action="store_true",
                         help="judge the cube decisions by a cubeful rollout (as bgai eval --rollout; about a second "
                              "a decision) instead of the formula: money sessions without the Jacoby rule only, a "
                              "match keeps the formula and the report says so")
    analyse.add_argument("--quiet", action="store_true", help="no progress bar")
    analyse.add_argument("--met", help="a match's equity table: kazaross-xg2 (default), rockwell-kazaross, "
                                       "jacobs-trice, woolsey, snowie")
    analyse.add_argument("--db", metavar="PATH", help="the study database to store the analysis in (default "
                                                      "$BGAI_DB, else study.sqlite in bgai's data folder)")
    analyse.add_argument("--no-db", action="store_true", help="do not store the analysis")
    analyse.set_defaults(run=_analyse)


def _study(args: argparse.Namespace) -> None:
    from bgai.play.database import StudyDatabase

    with StudyDatabase(args.db) as db:
        if args.action == "import":
            from bgai.eval.bot import load_bot

            if not args.name:
                raise BgaiError("bgai study import FOLDER: the folder of match files to analyse and store")
            bot = load_bot(args.checkpoint, plies=person_plies(args))
            report = db.import_folder(args.name, bot, progress=not args.quiet)
            for _, why in report.failed:
                print(f"skipped {why}")
            print(f"{len(report.added)} match{'es' * (len(report.added) != 1)} analysed and stored in {db.path}; "
                  f"{len(report.failed)} file{'s' * (len(report.failed) != 1)} skipped")
            return
        if args.action == "players":
            rows = db.players()
            if not rows:
                print(f"no analysed match in {db.path} yet: bgai analyse FILE, or bgai study import FOLDER")
            for row in rows:
                print(f"{row['name']:<24} {row['matches']:>4} matches {row['decisions']:>6} decisions  "
                      f"{row['error_rate']:6.1f} mEMG a decision (PR {row['error_rate'] / 2:.1f})")
            return
        if not args.name:
            raise BgaiError(f"bgai study {args.action} NAME: the player's name, as bgai study players lists it")
        if args.action in ("drill", "cards"):
            _drill(db, args)
            return
        if args.action == "history":
            rows = db.history(args.name)
            if not rows:
                raise BgaiError(f"no analysed match of {args.name!r} in {db.path}")
            print(f"{args.name}: error rate match by match, oldest first (mEMG a decision; PR half of it)")
            for row in rows:
                length = f"{row['length']}-point" if row["length"] else "money"
                print(f"  {row['date'][:10]}  match {row['match_id']:>4}  v {row['opponent']:<16} {length:<9} "
                      f"{row['decisions']:>4} decisions  {row['error_rate']:6.1f}  (PR {row['pr']:.1f}, "
                      f"{row['plies']}-ply)")
        else:
            rows = db.worst(args.name, args.limit)
            if not rows:
                raise BgaiError(f"no analysed decision of {args.name!r} in {db.path}")
            print(f"{args.name}: the {len(rows)} costliest decisions (EMG lost)")
            for row in rows:
                roll = f" {row['dice']}" if row["dice"] else ""
                print(f"  {row['error']:.3f} {row['mark'] or '':<9} match {row['match_id']} game {row['game']} "
                      f"{row['kind']}{roll}: played {row['played']}, best {row['best']}  ({row['position_id']})")


def _drill(db, args: argparse.Namespace) -> None:
    """``bgai study drill NAME`` (the due cards, one at a time, answered at the prompt) and ``cards NAME``."""
    from bgai.formats.position import Position, render_board
    from bgai.play.drills import Drills

    drills = Drills(db)
    added = drills.make_cards(args.name)
    if added:
        print(f"{added} new card{'s' * (added != 1)} from {args.name}'s errors")
    if args.action == "cards":
        p = drills.progress(args.name)
        print(f"{args.name}: {p['cards']} cards, {p['due']} due now, {p['learnt']} learnt, {p['reviews']} reviews")
        for day in p["by_day"]:
            print(f"  {day['date']}  {day['reviews']:>4} drills  {1000 * day['error']:6.1f} mEMG lost on average")
        return
    due = drills.due(args.name, limit=args.limit)
    if not due:
        print(f"no card of {args.name} is due: come back later (bgai study cards {args.name})")
        return
    from bgai.eval.bot import load_bot

    bot = load_bot(args.checkpoint, plies=person_plies(args))
    for number, card in enumerate(due, 1):
        on_roll = card["player"] if card["kind"] != "take" else 1 - card["player"]
        names = tuple(card["players"][s] for s in (on_roll, 1 - on_roll))
        source = (f"from match {card['match_id']}, game {card['game']}" if card["match_id"] is not None
                  else "a position saved")
        print(f"\nCard {number} of {len(due)} ({source})")
        print(render_board(Position.from_position_id(card["position_id"]).board, players=names))
        score = (f"{card['score'][0]}-{card['score'][1]} in a {card['length']}-point match" if card["length"]
                 else "money")
        if card["kind"] == "move":
            ask = f"{card['players'][card['player']]} to play {card['dice'][0]}{card['dice'][1]} ({score}): your play? "
        elif card["kind"] == "double":
            ask = f"{card['players'][card['player']]} on roll ({score}, cube {card['cube']}): double or no double? "
        else:
            ask = f"{card['players'][card['player']]}, doubled ({score}, cube {card['cube']}): take or pass? "
        while True:
            try:
                text = input(ask).strip()
            except EOFError:
                return
            if text in ("quit", "q"):
                return
            if text in ("skip", ""):
                break
            try:
                verdict = drills.answer(card["card"], text, bot)
            except BgaiError as error:
                print(f"  {error}")
                continue
            if verdict.error <= 0.001:
                print(f"  Right: {verdict.best}.")
            else:
                print(f"  {verdict.answer} loses {verdict.error:.3f} EMG; {verdict.best} is best.")
            for name, value in verdict.ranked:
                print(f"    {name:<24} {value:+.3f}")
            print(f"  (next due {verdict.due[:16].replace('T', ' ')} UTC)")
            break


def add_study(commands) -> None:
    """``bgai study``: its arguments."""
    study = commands.add_parser("study", help="your analysed matches: import a folder, players, error rate over "
                                              "time, worst decisions (the study database)")
    study.add_argument("action", choices=("import", "players", "history", "worst", "drill", "cards"),
                       help="import FOLDER: analyse and store every match file in it; players: who is stored; "
                            "history NAME: a player's error rate match by match; worst NAME: its costliest "
                            "decisions; drill NAME: practise its errors that are due (spaced repetition); cards "
                            "NAME: its drills' progress")
    study.add_argument("name", nargs="?", help="the folder (import) or the player's name (history, worst)")
    study.add_argument("--db", metavar="PATH", help="the study database (default $BGAI_DB, else study.sqlite in "
                                                    "bgai's data folder)")
    study.add_argument("--plies", type=int, help=f"import, drill: lookahead of the judge: 0, 1 or 2 "
                                                 f"({PERSON_PLIES_DEFAULT})")
    study.add_argument("--checkpoint", help="import: checkpoint to load (default: the network shipped with bgai)")
    study.add_argument("--limit", type=int, default=10, help="worst, drill: how many decisions or cards (default 10)")
    study.add_argument("--quiet", action="store_true", help="import: no progress bar")
    study.set_defaults(run=_study)


def _ubgi(args: argparse.Namespace) -> None:
    from bgai.frontends.ubgi import main

    main(plies=args.plies, checkpoint=args.checkpoint)


def add_ubgi(commands) -> None:
    """``bgai ubgi``: its arguments."""
    ubgi = commands.add_parser("ubgi", help="be an engine for UBGI GUIs and duellers (the UBGI v0.1 text protocol "
                                            "on standard input and output)")
    ubgi.add_argument("--plies", type=int, default=0, help="default lookahead: 0, 1 or 2 (default 0; the GUI's "
                                                           "Plies option changes it)")
    ubgi.add_argument("--checkpoint", help="checkpoint to load (default: the network shipped with bgai)")
    ubgi.set_defaults(run=_ubgi)
