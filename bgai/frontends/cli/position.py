"""The commands about one position: ``bgai show``, ``moves``, ``eval``, ``hint`` and ``rollout``."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import TYPE_CHECKING

from bgai.core.errors import BgaiError
from bgai.formats.position import Position, parse_dice
from bgai.frontends.cli.common import (
    PERSON_PLIES_DEFAULT,
    person_plies,
)

if TYPE_CHECKING:
    pass


def _cube_context(args: argparse.Namespace, text: str):
    """Cube and match of ``eval``: an XGID's own, overridden by the command-line flags."""
    from bgai.core.cube import CENTERED, CubeOwner
    from bgai.core.match import MatchScore, parse_score
    from bgai.formats.xgid import is_xgid, xgid_context

    cube, owner, match = xgid_context(text) if is_xgid(text) else (1, CENTERED, None)
    if args.cube is not None:
        cube = args.cube
        owner = CubeOwner.parse(args.owner or "me")
    elif args.owner is not None:
        owner = CubeOwner.parse(args.owner)
    if args.match is not None:
        score = parse_score(args.score) if args.score else (0, 0)
        match = MatchScore.from_score(args.match, score, post_crawford=args.post_crawford)
    elif args.score:
        raise BgaiError("--score needs --match N")
    if args.met is not None:
        if match is None and args.scores is None:
            raise BgaiError("--met is a match's equity table: give --match N (or an XGID of a match), or --scores N")
        if match is not None:
            match = dataclasses.replace(match, met=args.met)  # (checks the name, and the length against it)
    return cube, owner, match


def _rollout_file(args: argparse.Namespace) -> None:
    """``bgai rollout --positions FILE``: every position of the file, cubeless (``bgai.eval.rollout.rollout_file``)."""
    from bgai.eval.bot import load_bot
    from bgai.eval.rollout import RolloutSettings, read_positions, rollout_file

    refused = [flag for flag, given in (("POSITION", args.position is not None), ("DICE", args.dice is not None),
                                        ("--top", args.top is not None), ("--cubeful", args.cubeful),
                                        ("--opening", args.opening)) if given]
    if refused:
        raise BgaiError(f"--positions rolls out the positions of a file, cubeless: drop {', '.join(refused)}")
    entries = read_positions(args.positions)  # every line checked before any work starts
    bot = load_bot(args.checkpoint, plies=args.plies)
    settings = RolloutSettings(trials=args.trials, truncate=args.truncate, plies=args.plies, seed=args.seed,
                               variance_reduction=not args.no_vr, bearoff=args.bearoff)
    results = rollout_file(bot, entries, settings, out=args.out, jobs=args.jobs, progress=not args.quiet)
    if args.json:
        for record in results:
            print(json.dumps(record))
        return
    print(f"{len(results)} positions of {args.positions} rolled out: {args.trials} trials each, {args.plies}-ply "
          f"play, {f'truncated at {args.truncate} plies' if args.truncate else 'played to the end'}, "
          f"{'without' if args.no_vr else 'with'} variance reduction, seed {args.seed} (for the player on roll, "
          f"before the roll; ± one standard error)")
    print(f"{'line':>5}  {'position':<22} {'equity':>15}  {'win':>6} {'win g':>6} {'win bg':>6} {'lose g':>6} "
          f"{'lose bg':>7}")
    for r in results:
        p = r["probabilities"]
        print(f"{r['line']:>5}  {r['position_id']:<22} {r['equity']['mean']:+.3f} ± {r['equity']['se']:.3f}  "
              + " ".join(f"{100 * p[name]['mean']:5.1f}%" for name in ("win", "win_gammon", "win_backgammon",
                                                                      "lose_gammon"))
              + f" {100 * p['lose_backgammon']['mean']:6.1f}%")
    if args.out:
        print(f"(also in {args.out}, one JSON object a line)")


def _show(args: argparse.Namespace) -> None:
    pos = Position.parse(args.position)
    print(pos)
    print(f"Position ID: {pos.position_id()}")
    print(f"XGID:        {pos.xgid()}")


def add_show(commands) -> None:
    """``bgai show``: its arguments."""
    show = commands.add_parser("show", help="draw a position")
    show.add_argument("position", help="GNU Backgammon Position ID (e.g. 4HPwATDgc/ABMA) or XGID")
    show.set_defaults(run=_show)


def _moves(args: argparse.Namespace) -> None:
    pos = Position.parse(args.position)
    dice = parse_dice(args.dice)
    # in reading order: by the checkers' journeys, the farthest from home first (the bar before 24, 24 before 13)
    moves = sorted(pos.legal_moves(dice), key=lambda m: sorted(((-f, -t) for f, t in m.checker_journeys())))
    print(pos)
    print(f"{len(moves)} legal play{'s' if len(moves) != 1 else ''} of {dice[0]}{dice[1]}, the farthest checker "
          f"first:")
    for i, move in enumerate(moves, 1):
        print(f"{i:4d}. {move}")


def add_moves(commands) -> None:
    """``bgai moves``: its arguments."""
    moves = commands.add_parser("moves", help="list the legal plays of a position and roll")
    moves.add_argument("position", help="GNU Backgammon Position ID or XGID")
    moves.add_argument("dice", help="the roll, e.g. 63 or 6-3")
    moves.set_defaults(run=_moves)


def _eval(args: argparse.Namespace) -> None:
    from bgai.eval.bot import SOURCES, load_bot
    from bgai.eval.rollout import RolloutResult

    pos = Position.parse(args.position)
    cube, owner, match = _cube_context(args, args.position)
    if args.rollout and args.cube_plies is not None:
        raise BgaiError("--cube-plies is the formula's lookahead; --rollout decides from a rollout instead (its "
                        "cube decisions inside at 0-ply): leave out one of them")
    if args.scores is not None:
        given = [flag for flag, on in (("--match", args.match is not None), ("--score", bool(args.score)),
                                       ("--rollout", args.rollout), ("--jacoby", args.jacoby),
                                       ("--beavers", args.beavers)) if on]
        if given:
            raise BgaiError(f"--scores shows every score of a match (and money, plain): drop {', '.join(given)}")
    bot = load_bot(args.checkpoint, plies=person_plies(args), cube_plies=args.cube_plies)
    if args.save_card:
        _save_card(args.save_card, pos, "double", bot, cube=cube, owner=owner, match=match, jacoby=args.jacoby)
    if args.scores is not None:
        grid = bot.score_grid(pos, args.scores, cube, owner, met=args.met)
        print(pos)
        print(f"Position ID: {pos.position_id()}   ({bot.network}, cube at {bot.cube_plies}-ply, player on roll's "
              "view, before the roll)")
        print(grid)
        return
    decision = bot.cube_decision(pos, cube, owner, match, jacoby=args.jacoby, beavers=args.beavers,
                                 rollout=args.rollout)
    print(pos)
    rolled = decision.rollout
    if isinstance(rolled, RolloutResult):  # the rollout's own chances and equities, with their standard errors
        print(f"Position ID: {pos.position_id()}   ({bot.network} rolling out at {rolled.settings['plies']}-ply, "
              f"player on roll's view, before the roll)")
        print(rolled.describe(cube=False))
    else:
        print(f"Position ID: {pos.position_id()}   ({bot.network}, {bot.plies}-ply, player on roll's view, before "
              "the roll)")
        evaluation = bot.evaluate(pos)
        print(evaluation)
        print(f"evaluated by {SOURCES[evaluation.source]}")
    print(decision)


def add_eval(commands) -> None:
    """``bgai eval``: its arguments."""
    evaluate = commands.add_parser("eval", help="evaluate a position: probabilities, equity and cube action")
    evaluate.add_argument("position", help="GNU Backgammon Position ID or XGID (an XGID's cube and score are used)")
    evaluate.add_argument("--plies", type=int, help=f"lookahead: 0, 1 or 2 ({PERSON_PLIES_DEFAULT})")
    evaluate.add_argument("--cube-plies", type=int, help="lookahead of the cube decision: 0, 1 or 2 (default: an "
                                                         "even ply, 2 at --plies 1; bgai.eval.bot.CUBE_PLIES)")
    evaluate.add_argument("--cube", type=int, help="cube value 1..64 (default 1, centered)")
    evaluate.add_argument("--owner", help="cube owner: center, me (the player on roll) or opponent (default "
                                          "center; me with --cube)")
    evaluate.add_argument("--match", type=int, help="match length (default: money game)")
    evaluate.add_argument("--score", help="match score A-B, player on roll first (default 0-0)")
    evaluate.add_argument("--scores", type=int, metavar="N",
                          help="the cube action at every score of an N-point match and for money, with its "
                               "equities (a side 1-away post-Crawford)")
    evaluate.add_argument("--met", help="the match equity table of --match or --scores: "
                                        "kazaross-xg2 (default), rockwell-kazaross, jacobs-trice, woolsey, snowie")
    evaluate.add_argument("--post-crawford", action="store_true",
                          help="with a player one point away: the Crawford game has been played")
    evaluate.add_argument("--jacoby", action="store_true", help="money: Jacoby rule")
    evaluate.add_argument("--beavers", action="store_true", help="money: beavers allowed")
    evaluate.add_argument("--rollout", action="store_true",
                          help="the cube decision from a cubeful rollout (money, no Jacoby or beavers: 72 trials "
                               "truncated at 11 plies, variance reduction, 0-ply play, every core; bgai.eval.bot."
                               "CUBE_ROLLOUT), not from the cube formula")
    evaluate.add_argument("--checkpoint", help="checkpoint to load (default: the network shipped with bgai)")
    evaluate.add_argument("--save-card", metavar="NAME", help="also save the position as a drill of NAME's: the cube "
                                                              "decision of the player on roll (bgai study drill NAME)")
    evaluate.set_defaults(run=_eval)


def _save_card(player: str, pos, kind: str, bot, **context) -> None:
    """Save ``pos`` as a drill card of ``player``'s in the study database, and say so."""
    from bgai.play.database import StudyDatabase
    from bgai.play.drills import Drills

    with StudyDatabase() as db:
        card = Drills(db).save(player, pos, kind, bot, **context)
    print(f"Saved as card {card} of {player}'s drills in {db.path} (bgai study drill {player})")


def _hint(args: argparse.Namespace) -> None:
    from bgai.eval.bot import load_bot

    pos = Position.parse(args.position)
    dice = _roll(args)
    bot = load_bot(args.checkpoint, plies=person_plies(args))
    ranked = bot.hint(pos, dice)
    print(pos)
    deep = sum(r.plies == bot.plies for r in ranked)
    print(f"{len(ranked)} legal play{'s' if len(ranked) != 1 else ''} of {dice[0]}{dice[1]} by {bot.network}: the "
          f"mover's cubeless equity at each play's Ply, Diff from the first's.")
    if deep < len(ranked):  # the plays move filtering dropped keep a shallower ply's equity: not compared
        print(f"Move filtering kept {deep} to {bot.plies}-ply; the others keep the equity of a lower Ply, not "
              f"compared (—).")
    print(f"   #  {'Play':<28} Ply  {'Equity':>6}  {'Diff':>7}")
    for i, r in enumerate(ranked[: args.top], 1):
        diff = "" if i == 1 else "—" if r.plies != ranked[0].plies else f"{r.equity - ranked[0].equity:+.3f}"
        print(f"{i:4d}. {str(r.move):<28} {r.plies:>3}  {r.equity:+.3f}  {diff:>7}".rstrip())
    if len(ranked) > args.top:
        print(f"      ... {len(ranked) - args.top} more (--top)")
    if args.save_card:
        from bgai.formats.xgid import is_xgid, xgid_context

        cube, owner, match = xgid_context(args.position) if is_xgid(args.position) else (1, "centered", None)
        _save_card(args.save_card, pos, "move", bot, dice=dice, cube=cube, owner=owner, match=match)


def _roll(args: argparse.Namespace) -> tuple[int, int]:
    """``hint``'s roll: DICE, else the roll its XGID carries (``XGID=...:52:...``, as eXtreme Gammon copies it)."""
    from bgai.formats.xgid import is_xgid, xgid_dice

    if args.dice is not None:
        return parse_dice(args.dice)
    carried = xgid_dice(args.position) if is_xgid(args.position) else None
    if not isinstance(carried, tuple):
        raise BgaiError("give the DICE to play (e.g. bgai hint POSITION 63): this position carries no roll")
    return carried


def add_hint(commands) -> None:
    """``bgai hint``: its arguments."""
    hint = commands.add_parser("hint", help="rank the plays of a position and roll")
    hint.add_argument("position", help="GNU Backgammon Position ID or XGID")
    hint.add_argument("dice", nargs="?", help="the roll, e.g. 63 or 6-3 (default: the roll an XGID carries)")
    hint.add_argument("--plies", type=int, help=f"lookahead: 0, 1 or 2 ({PERSON_PLIES_DEFAULT})")
    hint.add_argument("--top", type=int, default=10, help="plays shown (default 10)")
    hint.add_argument("--checkpoint", help="checkpoint to load (default: the network shipped with bgai)")
    hint.add_argument("--save-card", metavar="NAME", help="also save the position and roll as a drill of NAME's "
                                                          "(bgai study drill NAME)")
    hint.set_defaults(run=_hint)


def _rollout(args: argparse.Namespace) -> None:
    from bgai.eval.bot import load_bot
    from bgai.eval.rollout import RolloutSettings, rollout, rollout_plays

    if args.positions is not None:
        _rollout_file(args)
        return
    if args.position is None:
        raise BgaiError("give a POSITION to roll out, or --positions FILE")
    pos = Position.parse(args.position)
    if args.dice is None and args.top is not None:
        raise BgaiError("--top needs the dice of the plays to roll out (bgai rollout POSITION DICE --top N)")
    if args.dice is not None and args.opening:
        raise BgaiError("--opening is for the rollout of a position, not of the plays of a roll")
    settings = RolloutSettings(trials=args.trials, truncate=args.truncate, plies=args.plies, seed=args.seed,
                               cubeful=args.cubeful, variance_reduction=not args.no_vr, bearoff=args.bearoff,
                               opening=args.opening)
    if args.dice is None:
        bot = load_bot(args.checkpoint, plies=args.plies)  # the network shipped for that ply
        result = rollout(bot, pos, settings, progress=not args.quiet, jobs=args.jobs)
        if args.json:
            print(result.to_json())
        else:
            print(pos)
            print(result)
        return
    dice = parse_dice(args.dice)
    bot = load_bot(args.checkpoint, plies=args.plies)
    results = rollout_plays(bot, pos, dice, settings, top=4 if args.top is None else args.top,
                            progress=not args.quiet, jobs=args.jobs)
    if args.json:
        print(json.dumps({"position_id": pos.position_id(), "dice": f"{dice[0]}{dice[1]}",
                          "plays": [r.to_dict() for r in results]}))
        return
    first = results[0]
    s = first.settings
    print(pos)
    depth = f"truncated at {s['truncate']} plies" if s["truncate"] else "played to the end"
    vr = "with" if s["variance_reduction"] else "without"
    print(f"{len(results)} plays of {dice[0]}{dice[1]} rolled out on the same dice: {first.trials} trials each, "
          f"{s['plies']}-ply play, {depth}, {vr} variance reduction, seed {s['seed']} (equities for the mover)")
    key = "cubeful" if args.cubeful else "equity"
    best = getattr(first, key).mean
    label = "cubeful" if args.cubeful else "cubeless"
    print(f"   #  {'Play':<24} {label + ' equity ± se':<22} {'95% interval':<18} {'Diff':>7}   "
          f"{'win':>5} {'win g':>5} {'win b':>5} {'los g':>5} {'los b':>5}")
    for i, r in enumerate(results, 1):
        e = getattr(r, key)
        lo, hi = e.ci
        diff = "" if i == 1 else f"{e.mean - best:+.3f}"
        probs = " ".join(f"{100 * p.mean:5.1f}" for p in r.probabilities)
        shown, interval = f"{e.mean:+.3f} ± {e.se:.3f}", f"{lo:+.3f} .. {hi:+.3f}"
        print(f"{i:4d}. {r.play:<24} {shown:<22} {interval:<18} {diff:>7}   {probs}")
    print(f"      (chances in %: win, win a gammon, win a backgammon, lose a gammon, lose a backgammon; Diff: the "
          f"play's equity minus the first's; {first.seconds:.1f} s)")


def add_rollout(commands) -> None:
    """``bgai rollout``: its arguments."""
    roll = commands.add_parser("rollout", help="roll out a position, or the best plays of a roll on the same dice",
                               description="Roll out a position (the player on roll, before the roll) or, given "
                                           "dice, the best plays of that roll, with the bot playing both sides; "
                                           "or every position of a file (--positions). Results with standard "
                                           "errors and 95% intervals; --json for scripts.")
    roll.add_argument("position", nargs="?", help="GNU Backgammon Position ID or XGID")
    roll.add_argument("dice", nargs="?", help="roll out the best plays of this roll (e.g. 31) instead")
    roll.add_argument("--top", type=int, help="with dice: how many of the bot's best plays (default 4)")
    roll.add_argument("--trials", type=int, default=1296, help="games played out (default 1296: every pair of "
                                                               "first two rolls once)")
    roll.add_argument("--truncate", type=int, metavar="N", help="stop each trial after N plies and evaluate "
                                                                "(default: play to the end)")
    roll.add_argument("--plies", type=int, default=0, help="lookahead of the checker play: 0, 1 or 2 (default 0)")
    roll.add_argument("--seed", type=int, default=0, help="seed of the dice (default 0)")
    roll.add_argument("--cubeful", action="store_true", help="money cubeful equities too (cube decisions at 0-ply)")
    roll.add_argument("--no-vr", action="store_true", help="no variance reduction")
    roll.add_argument("--bearoff", choices=("race", "exact", "off"),
                      help="where the bear-off database ends a trial: race (any bear-off, cubeless default), exact "
                           "(six checkers a side or fewer, cubeful default) or off")
    roll.add_argument("--opening", action="store_true", help="the first roll is an opening roll (no doubles)")
    roll.add_argument("--jobs", type=int, default=0,
                      help="threads sharing the trials, worker processes beyond 4; with --positions worker processes "
                           "sharing the positions (default 0: one per core)")
    roll.add_argument("--positions", metavar="FILE",
                      help="roll out every position of FILE instead (one Position ID or XGID a line; blank lines "
                           "and lines starting with # are skipped), cubeless, on worker processes (--jobs); every "
                           "line is checked before any work starts")
    roll.add_argument("--out", metavar="FILE",
                      help="with --positions: write each result to FILE (JSON lines) as it finishes; the same "
                           "command resumes a stopped run from it")
    roll.add_argument("--json", action="store_true", help="print the results as JSON instead (with --positions: one "
                                                          "object a line, in the file's order)")
    roll.add_argument("--quiet", action="store_true", help="no progress bar")
    roll.add_argument("--checkpoint", help="checkpoint to load (default: the network shipped with bgai)")
    roll.set_defaults(run=_rollout)
