"""The ``bgai`` command line: thin wrappers over the library.

Bad input (a malformed position, dice outside 1..6, an unknown player) ends with a one-line message on stderr and
exit status 2.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shlex
import sys
from typing import TYPE_CHECKING

from bgai.core.errors import BgaiError
from bgai.formats.position import Position, parse_dice

if TYPE_CHECKING:
    from bgai.players import Player


def _show(args: argparse.Namespace) -> None:
    pos = Position.parse(args.position)
    print(pos)
    print(f"Position ID: {pos.position_id()}")
    print(f"XGID:        {pos.xgid()}")


def _moves(args: argparse.Namespace) -> None:
    pos = Position.parse(args.position)
    dice = parse_dice(args.dice)
    moves = pos.legal_moves(dice)
    print(pos)
    print(f"{len(moves)} legal play{'s' if len(moves) != 1 else ''} of {dice[0]}{dice[1]}:")
    for i, move in enumerate(moves, 1):
        print(f"{i:4d}. {move}")


LUCK_HELP = ("also the luck-adjusted points per game: the same estimate with several times less variance (each "
             "roll's luck measured by the network at 0-ply; slower; cubeless games only)")


def _play_match(first, second, args: argparse.Namespace, labels: dict) -> None:
    """Duplicate games of ``first`` against ``second``; a summary for people, then a JSON line for scripts."""
    from bgai.core.game import play_duplicate

    if args.games < 1:
        raise BgaiError(f"--games must be at least 1, got {args.games}")
    luck = None
    if args.luck:
        from functools import partial

        from bgai.eval.bot import load_bot
        from bgai.play.analysis import roll_luck

        luck = partial(roll_luck, load_bot(getattr(args, "checkpoint", None)))
    results = play_duplicate(first, second, args.games, seed=args.seed, batch=args.batch, progress=not args.quiet,
                             luck=luck)
    s = results.summary()
    _print_summary(first.name, second.name, s, args.games)
    _print_record(args, {**labels, **s})


def _print_summary(first: str, second: str, s: dict, sequences: int) -> None:
    """The figures of ``GameResults.summary`` (``s``) of duplicate games of ``first`` against ``second``."""
    print(f"{first} v {second}: {s['games']} duplicate games ({sequences} dice sequences x 2 seats)")
    print(f"  points per game  {s['ppg']:+.3f} ± {s['ppg_se']:.3f} (for {first}; ± the standard error, "
          f"paired by dice sequence)")
    if "ppg_luck_adjusted" in s:
        print(f"  luck-adjusted    {s['ppg_luck_adjusted']:+.3f} ± {s['ppg_luck_adjusted_se']:.3f} (luck of every roll "
              f"by the network at 0-ply)")
    print(f"  wins             {100 * s['win_rate']:.1f}%")
    print(f"  gammons          {100 * s['gammon_rate']:.1f}%   backgammons {100 * s['backgammon_rate']:.1f}%")
    print(f"  speed            {s['games_per_s']:.0f} games/s")


def _print_record(args: argparse.Namespace, record: dict) -> None:
    """The results as one JSON line, for scripts; with ``--json PATH`` also written to PATH, atomically (the file
    is the whole record or not there). Both begin with the command, date, commit and machine that made it."""
    from bgai.core.files import provenance, write_atomically

    record = {**provenance(getattr(args, "command_line", None)), **record}
    print(json.dumps(record))
    path = getattr(args, "json", None)
    if path:
        text = json.dumps(record, indent=1) + "\n"
        write_atomically(path, lambda handle: handle.write(text.encode()))


LABEL_OPTIONS = ("positions", "plays", "trials", "truncate", "batch", "seed", "epsilon", "race", "disagreement",
                 "candidates", "lockstep", "relabel")


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


def _label(args: argparse.Namespace) -> None:
    from bgai.train.labels import LabelSettings, label_shard, parse_shards, write_manifest

    if args.status:
        manifest = write_manifest(args.out)
        phases = ", ".join(f"{k} {v:,}" for k, v in sorted(manifest["phases"].items()))
        print(f"{args.out}: {manifest['shards']} shards, {manifest['positions']:,} labelled positions ({phases})")
        return
    settings = LabelSettings(**{name: getattr(args, name) for name in LABEL_OPTIONS})
    shards: range | list[int] = parse_shards(args.shards or "0")
    if settings.relabel:  # the source's shards (those of --shards among them)
        if os.path.realpath(settings.relabel) == os.path.realpath(args.out):
            raise BgaiError("--relabel and --out must be different folders: the labels rolled out again are a new set")
        from bgai.train.labels import shard_files

        there = [int(f.stem.split("-")[1]) for f in shard_files(settings.relabel)]
        shards = [n for n in there if args.shards is None or n in shards]
        if not shards:
            raise BgaiError(f"{settings.relabel}: no label shards (shard-NNNNN.npz) to roll out again"
                            + (f" among --shards {args.shards}" if args.shards else ""))
    from bgai.eval.bot import load_bot

    bot = load_bot(args.checkpoint)
    for shard in shards:
        path = label_shard(bot, args.out, shard, settings, progress=not args.quiet, jobs=args.jobs)
        print(f"{path}", flush=True)


def _duel(args: argparse.Namespace) -> None:
    from bgai.players import make_player

    first, second = make_player(args.player1), make_player(args.player2)
    _play_match(first, second, args, {"player1": args.player1, "player2": args.player2})


def _external(args: argparse.Namespace) -> None:
    from bgai.frontends.external import main

    main(args)


def _train(args: argparse.Namespace) -> None:
    from bgai.train.config import load_config
    from bgai.train.run import run

    overrides = {name: getattr(args, name) for name in _train_settings()}
    config = load_config(args.config, overrides, _qualified(args.set))
    run_dir = args.run_dir or f"runs/{config.run_name}"
    summary = run(config, run_dir, resume=args.resume, progress=not args.quiet)
    final = summary["final"]
    if args.json:
        print(json.dumps(summary))
        return
    print(f"trained stages {', '.join(summary['stages'])}: {summary['games']:,} self-play games in "
          f"{summary['hours']:.2f} h")
    for name, figures in final.items():
        if not figures["games"]:  # final_bench_games = 0
            continue
        print(f"  v {name:<9} {figures['ppg']:+.3f} ± {figures['ppg_se']:.3f} points/game (± the standard error), "
              f"{100 * figures['win_rate']:.1f}% wins ({figures['games']} duplicate games)")
    checkpoint = f"{run_dir}/checkpoint.pt"
    print(f"the run is in {run_dir}/: checkpoint.pt (the network), summary.json (these figures), tensorboard/")
    print("next:")
    for command, what in ((f"tensorboard --logdir {run_dir}/tensorboard", "the training curves"),
                          (f"bgai play --checkpoint {checkpoint}", "play it in the terminal"),
                          (f"bgai bench --checkpoint {checkpoint} --opponent pubeval --games 2000",
                           "measure it against pubeval"),
                          (f"bgai train --config CONFIG --run-dir {run_dir} --resume", "train it on (a longer stage)")):
        print(f"  {command:<72} # {what}")


def _bench(args: argparse.Namespace) -> None:
    from bgai.eval.bot import load_bot
    from bgai.players import make_player

    if args.agent is not None or args.engine is not None:
        return _bench_agent(args)
    if args.timeout is not None:
        raise BgaiError("--timeout is for --agent and --engine")
    if args.batch is None:
        args.batch = 1024
    if args.cube or args.match is not None:
        return _bench_cube(args)
    if args.jacoby:
        raise BgaiError("--jacoby needs --cube")
    if args.cube_plies is not None:
        raise BgaiError("--cube-plies needs --cube or --match (cubeless games make no cube decisions)")
    name = args.opponent or "pubeval"
    bot = load_bot(args.checkpoint, plies=args.plies)
    # "bgai": the network load_bot() plays 0-ply with (DEFAULT_NETWORKS);
    # a checkpoint file: that network at 0-ply.
    opponent: Player
    if name == "bgai":
        opponent = load_bot(args.checkpoint)
    elif name.endswith((".pt", ".npz")):
        opponent = load_bot(name)
        opponent.name = f"{opponent.name} ({name})"
    else:
        opponent = make_player(name)
    _play_match(bot, opponent, args, {"bot": bot.name, "opponent": name, "plies": args.plies})


def _bench_agent(args: argparse.Namespace) -> None:
    """``bench --agent`` or ``--engine``: duplicate cubeless games against each opponent (``bgai.play.agents``)."""
    from tqdm.auto import tqdm

    from bgai.play.agents import DEFAULT_TIMEOUT, FORFEIT_POINTS, bench_agent

    if args.agent is not None and args.engine is not None:
        raise BgaiError("bench --agent or --engine, not both")
    if args.cube or args.match is not None or args.jacoby or args.cube_plies is not None:
        raise BgaiError("an agent's bench is cubeless: drop --cube, --match, --jacoby and --cube-plies")
    if args.games < 1:
        raise BgaiError(f"--games must be at least 1, got {args.games}")
    if args.batch is not None and args.batch < 1:
        raise BgaiError(f"--batch must be at least 1, got {args.batch}")
    shown_faults, faults = 5, []

    def told(fault) -> None:  # the first few as they happen; every one is in the record
        faults.append(fault)
        if len(faults) <= shown_faults:
            tqdm.write(f"bgai bench: forfeit: {fault}", file=sys.stderr)

    opponents = None if args.opponent is None else [name.strip() for name in args.opponent.split(",")]
    bench = bench_agent(args.agent, opponents, engine=args.engine, games=args.games, seed=args.seed, luck=args.luck,
                        timeout=DEFAULT_TIMEOUT if args.timeout is None else args.timeout or None, batch=args.batch,
                        checkpoint=args.checkpoint, plies=args.plies, progress=not args.quiet, on_fault=told)
    for result in bench.results:
        s = result.summary()
        _print_summary(bench.agent, result.opponent, s, bench.sequences)
        if result.faults:
            print(f"  forfeits         {len(result.faults)} of {s['games']} games, each scored {FORFEIT_POINTS} (the "
                  f"first: {result.faults[0]})")
    if len(faults) > shown_faults:
        print(f"({len(faults)} forfeits in all; every one is in the JSON record)", file=sys.stderr)
    _print_record(args, bench.to_dict())


def _bench_cube(args: argparse.Namespace) -> None:
    """Duplicate cubeful money games (or matches, with --match) of the bot with its cube against an opponent
    without one (by default the same bot): what the bot's cube decisions are worth."""
    from bgai.core.game import WithoutCube, play_duplicate, play_duplicate_matches
    from bgai.eval.bot import load_bot
    from bgai.players import make_player

    if args.games < 1:
        raise BgaiError(f"--games must be at least 1, got {args.games}")
    if args.luck:
        raise BgaiError("--luck is for cubeless games (leave out --cube and --match)")
    if args.match is not None and args.match < 1:
        raise BgaiError(f"--match must be at least 1 point, got {args.match}")
    if args.match is not None and args.jacoby:
        raise BgaiError("the Jacoby rule is for money games, not matches (--match)")
    bot = load_bot(args.checkpoint, plies=args.plies, cube_plies=args.cube_plies)
    player: Player
    if args.opponent is None:
        player = load_bot(args.checkpoint, plies=args.plies)
    else:
        player = load_bot(args.checkpoint) if args.opponent == "bgai" else make_player(args.opponent)
    opponent = WithoutCube(player)  # never doubles, always takes
    labels = {"bot": bot.name, "opponent": opponent.name, "plies": args.plies, "cube_plies": bot.cube_plies,
              "cube": True, "match": args.match}
    options = {"seed": args.seed, "batch": args.batch, "progress": not args.quiet}
    if args.match is None:
        s = play_duplicate(bot, opponent, args.games, cube=True, jacoby=args.jacoby, **options).summary()
        rule = " (Jacoby rule)" if args.jacoby else ""
        print(f"{bot.name} v {opponent.name}: {s['games']} duplicate cubeful money games{rule} "
              f"({args.games} dice sequences x 2 seats)")
        print(f"  points per game  {s['ppg']:+.3f} ± {s['ppg_se']:.3f} (for {bot.name}, with the cube)")
        print(f"  wins             {100 * s['win_rate']:.1f}%")
        print(f"  mean cube        {s['mean_cube']:.2f}   passes {100 * s['pass_rate']:.1f}%")
        print(f"  speed            {s['games_per_s']:.0f} games/s")
        labels["jacoby"] = args.jacoby
    else:
        s = play_duplicate_matches(bot, opponent, args.games, args.match, **options).summary()
        print(f"{bot.name} v {opponent.name}: {s['matches']} duplicate {args.match}-point matches "
              f"({args.games} dice sequences x 2 seats)")
        print(f"  match wins       {100 * s['win_rate']:.1f}% ± {100 * s['win_rate_se']:.1f}% (for {bot.name}, "
              f"with the cube)")
        print(f"  games per match  {s['mean_games']:.2f}   mean cube {s['mean_cube']:.2f}   "
              f"passes {100 * s['pass_rate']:.1f}%")
        print(f"  speed            {s['games_per_s']:.0f} games/s")
    _print_record(args, {**labels, **s})


def _ubgi(args: argparse.Namespace) -> None:
    from bgai.frontends.ubgi import main

    main(plies=args.plies, checkpoint=args.checkpoint)


def _export(args: argparse.Namespace) -> None:
    from bgai.eval.export import export_onnx

    if args.checkpoint is not None and not os.path.isfile(args.checkpoint):
        raise BgaiError(f"no checkpoint file {args.checkpoint}")
    report = export_onnx(args.onnx, args.checkpoint, check=args.check)
    if args.json:
        print(json.dumps(report))
        return
    inputs = " and ".join(f"'{name}'" for name in report["inputs"])
    print(f"wrote {report['path']} ({report['bytes'] / 1e6:.1f} MB): {report['network']}; inputs {inputs} "
          f"(bgai.onnx_feeds), output 'probabilities' (N, 5)")
    if args.check:
        print(f"onnxruntime agrees with bgai within {report['max_difference']:.1e} on {report['positions']:,} "
              f"positions of games (the largest difference of a probability)")
        print(f"boards a second, one thread, from the boards: onnxruntime {report['onnxruntime_boards_per_s']:,.0f} "
              f"in one batch, {report['onnxruntime_move_boards_per_s']:,.0f} in batches of 20; bgai "
              f"{report['bgai_boards_per_s']:,.0f} and {report['bgai_move_boards_per_s']:,.0f}")


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
    return cube, owner, match


def _eval(args: argparse.Namespace) -> None:
    from bgai.eval.bot import SOURCES, load_bot

    pos = Position.parse(args.position)
    cube, owner, match = _cube_context(args, args.position)
    if args.rollout and args.cube_plies is not None:
        raise BgaiError("--cube-plies is the formula's lookahead; --rollout decides from a rollout instead (its "
                        "cube decisions inside at 0-ply): leave out one of them")
    bot = load_bot(args.checkpoint, plies=_person_plies(args), cube_plies=args.cube_plies)
    decision = bot.cube_decision(pos, cube, owner, match, jacoby=args.jacoby, beavers=args.beavers,
                                 rollout=args.rollout)
    print(pos)
    print(f"Position ID: {pos.position_id()}   ({bot.network}, {bot.plies}-ply, player on roll's view, before the "
          "roll)")
    evaluation = bot.evaluate(pos)
    print(evaluation)
    print(f"evaluated by {SOURCES[evaluation.source]}")
    print(decision)


# The commands a person plays or asks (play, serve, hint, eval) share one default lookahead, bgai.eval.bot.PLAY_PLIES.
# The parser leaves --plies None so as not to import the bot (about a second) for every command; its help says the
# value, which tests/test_cli.py holds to the constant.
PERSON_PLIES_DEFAULT = "default 2, shared by bgai play, serve, hint and eval"


def _person_plies(args: argparse.Namespace) -> int:
    """``--plies`` of play, serve, hint and eval: ``bgai.eval.bot.PLAY_PLIES`` when not given."""
    from bgai.eval.bot import PLAY_PLIES

    return PLAY_PLIES if args.plies is None else args.plies


def _hint(args: argparse.Namespace) -> None:
    from bgai.eval.bot import load_bot

    pos = Position.parse(args.position)
    dice = parse_dice(args.dice)
    bot = load_bot(args.checkpoint, plies=_person_plies(args))
    ranked = bot.hint(pos, dice)
    print(pos)
    print(f"{len(ranked)} legal play{'s' if len(ranked) != 1 else ''} of {dice[0]}{dice[1]}, ranked by {bot.network} "
          f"at {bot.plies}-ply: the mover's cubeless equity after each play.")
    deep = sum(r.plies == bot.plies for r in ranked)
    if deep < len(ranked):  # some plays were dropped by move filtering: their values are of a shallower ply
        print(f"Move filtering kept {deep} play{'s' if deep != 1 else ''} to {bot.plies}-ply; each of the others "
              f"keeps the equity of the ply where it was dropped (Ply).")
        print("Diff: the play's equity minus the first play's at the same ply.")
    else:
        print("Diff: the play's equity minus the first play's.")
    print(f"   #  {'Play':<28} Ply  {'Equity':>6}  {'Diff':>7}")
    for i, r in enumerate(ranked[: args.top], 1):
        diff = "" if i == 1 else f"{r.difference:+.3f}"
        print(f"{i:4d}. {str(r.move):<28} {r.plies:>3}  {r.equity:+.3f}  {diff:>7}".rstrip())
    if len(ranked) > args.top:
        print(f"      ... {len(ranked) - args.top} more (--top)")


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
    for i, r in enumerate(results, 1):
        e = getattr(r, key)
        lo, hi = e.ci
        diff = "" if i == 1 else f"({e.mean - best:+.3f})"
        probs = " ".join(f"{100 * p.mean:5.1f}" for p in r.probabilities)
        print(f"{i:4d}. {r.play:<24} {e.mean:+.3f} ± {e.se:.3f} (95% CI {lo:+.3f} .. {hi:+.3f}) {diff:>8}   {probs}")
    label = "cubeful equity" if args.cubeful else "cubeless equity"
    print(f"      ({label}; then win, win gammon, win bg, lose gammon, lose bg in %; {first.seconds:.1f} s)")


def _play(args: argparse.Namespace) -> None:
    import datetime

    from bgai.eval.bot import load_bot
    from bgai.frontends.terminal import Terminal
    from bgai.play.session import Session

    if args.match is not None and args.match < 1:
        raise BgaiError(f"--match must be at least 1 point, got {args.match}")
    bot = load_bot(args.checkpoint, plies=_person_plies(args))
    session = Session(bot, match_length=args.match or 0, seed=args.seed, jacoby=args.jacoby)
    if args.position:
        session.setup(args.position)
    from bgai.core.files import games_dir

    stamp = datetime.datetime.now().strftime("bgai-%Y%m%d-%H%M%S.mat")
    save = None if args.no_save else args.save or str(games_dir() / stamp)
    Terminal(session, save_path=save).run()


def _serve(args: argparse.Namespace) -> None:
    try:
        import uvicorn

        from bgai.frontends.web import create_app
    except ImportError as error:
        if (error.name or "").partition(".")[0] == "bgai":
            raise  # a bug in bgai.frontends.web, not a missing extra
        raise BgaiError(f"the web app needs the web extra: pip install 'bgai[web]' ({error})") from None
    from bgai.eval.bot import MAX_PLIES

    plies = _person_plies(args)
    if not 0 <= plies <= MAX_PLIES:
        raise BgaiError(f"plies must be an integer 0..{MAX_PLIES}, got {plies}")
    if not 0 < args.port < 65536:
        raise BgaiError(f"--port must be 1..65535, got {args.port}")
    from bgai.frontends.web.app import LOCAL_HOSTS

    hosts = (*LOCAL_HOSTS, *([] if args.host in ("0.0.0.0", "::") else [args.host]), *args.allow_host)
    app = create_app(plies=plies, checkpoint=args.checkpoint, hosts=hosts)
    app.state.bots.get()  # load the bot before the first request
    print(f"bgai serve: play at http://{args.host}:{args.port}/  (API docs: /docs; Ctrl-C to stop)", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


def _analyse(args: argparse.Namespace) -> None:
    import os
    from pathlib import Path

    from bgai.core.errors import MatchFileError
    from bgai.eval.bot import load_bot
    from bgai.formats.matchfile import read_match
    from bgai.play.analysis import analyse_match
    from bgai.play.report import html_report, text_report

    if not os.path.isfile(args.file):  # unlike Path.is_file, never raises (a name too long is no file)
        raise BgaiError(f"no match file {args.file}")
    try:
        record = read_match(Path(args.file))
    except MatchFileError as error:  # the file's name, then the line and what is wrong there
        raise BgaiError(str(error) if args.file in str(error) else f"{args.file}: {error}") from None
    if not record.games:
        raise BgaiError(f"{args.file} holds no game to analyse")
    bot = load_bot(args.checkpoint, plies=args.plies)
    analysis = analyse_match(record, bot, progress=not args.quiet, cube_rollout=args.cube_rollout)
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


def _qualified(pairs: list[str] | None) -> dict:
    """``--set STAGE.KEY=VALUE`` (or ``KEY=VALUE`` for a run setting) as ``{target: value}``; a value is read as TOML
    (``1e-4``, ``true``, ``"text"``), else taken as a string."""
    import tomllib

    out = {}
    for pair in pairs or []:
        target, eq, raw = pair.partition("=")
        if not eq or not target.strip():
            raise BgaiError(f"--set takes STAGE.KEY=VALUE (or KEY=VALUE for a run setting), got {pair!r}")
        try:
            value = tomllib.loads(f"v = {raw.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw.strip()
        out[target.strip()] = value
    return out


def _train_settings() -> dict:
    """The run and stage settings ``bgai train`` takes on the command line, by name (first definition wins)."""
    import dataclasses

    from bgai.train.config import STAGES, RunConfig

    settings: dict = {}
    for cls in (RunConfig, *STAGES.values()):
        for f in dataclasses.fields(cls):
            if f.name not in ("stages", "name", "method"):
                settings.setdefault(f.name, f)
    return settings


def build_parser(train_settings: bool = True, label_settings: bool = True) -> argparse.ArgumentParser:
    """The command line. ``train_settings``: give ``bgai train`` its settings' options, which need the training
    module and so torch (about 1.4 s to import); ``label_settings`` likewise ``bgai label``'s, from
    ``bgai.train.labels`` (numpy and the network's module: a third of a second); ``main`` leaves them out for the
    other commands."""
    from bgai._version import __version__

    parser = argparse.ArgumentParser(prog="bgai", description="bgai: a backgammon engine")
    parser.add_argument("--version", action="version", version=f"bgai {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    show = commands.add_parser("show", help="draw a position")
    show.add_argument("position", help="GNU Backgammon Position ID (e.g. 4HPwATDgc/ABMA) or XGID")
    show.set_defaults(run=_show)

    moves = commands.add_parser("moves", help="list the legal plays of a position and roll")
    moves.add_argument("position", help="GNU Backgammon Position ID or XGID")
    moves.add_argument("dice", help="the roll, e.g. 63 or 6-3")
    moves.set_defaults(run=_moves)

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
    evaluate.add_argument("--post-crawford", action="store_true",
                          help="with a player one point away: the Crawford game has been played")
    evaluate.add_argument("--jacoby", action="store_true", help="money: Jacoby rule")
    evaluate.add_argument("--beavers", action="store_true", help="money: beavers allowed")
    evaluate.add_argument("--rollout", action="store_true",
                          help="the cube decision from a cubeful rollout (money, no Jacoby or beavers: 72 trials "
                               "truncated at 11 plies, variance reduction, 0-ply play, every core; bgai.eval.bot."
                               "CUBE_ROLLOUT), not from the cube formula")
    evaluate.add_argument("--checkpoint", help="checkpoint to load (default: the network shipped with bgai)")
    evaluate.set_defaults(run=_eval)

    hint = commands.add_parser("hint", help="rank the plays of a position and roll")
    hint.add_argument("position", help="GNU Backgammon Position ID or XGID")
    hint.add_argument("dice", help="the roll, e.g. 63 or 6-3")
    hint.add_argument("--plies", type=int, help=f"lookahead: 0, 1 or 2 ({PERSON_PLIES_DEFAULT})")
    hint.add_argument("--top", type=int, default=10, help="plays shown (default 10)")
    hint.add_argument("--checkpoint", help="checkpoint to load (default: the network shipped with bgai)")
    hint.set_defaults(run=_hint)

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

    label = commands.add_parser("label", help="make rollout-labelled training positions, in resumable shards",
                                description="Sample positions from the bot's own play and label each by a rollout "
                                            "(bgai.train.labels): shards of --positions each, written to --out as they "
                                            "finish; the same command resumes a stopped run where it stood.")
    label.add_argument("--out", required=True, help="folder of the shards (shard-NNNNN.npz, MANIFEST.json)")
    label.add_argument("--shards", help="shard numbers: N, A-B or A- (from A on until stopped; default 0, or with "
                                        "--relabel every shard of that folder)")
    if label_settings:
        from bgai.train.labels import LabelSettings

        defaults = LabelSettings()
        for name in LABEL_OPTIONS:
            label.add_argument(f"--{name}", type=type(getattr(defaults, name)), default=getattr(defaults, name),
                               help=f"{LabelSettings.help(name)} (default {getattr(defaults, name) or 'none'})"
                               if name == "relabel" else
                               f"{LabelSettings.help(name)} (default {getattr(defaults, name)})")
    label.add_argument("--jobs", type=int, default=0, help="threads sharing the rollouts (default 0: one per core)")
    label.add_argument("--checkpoint", help="network that plays and labels (default: the network shipped for 0-ply)")
    label.add_argument("--status", action="store_true", help="print what the folder holds and stop")
    label.add_argument("--quiet", action="store_true", help="no progress bar")
    label.set_defaults(run=_label)

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
    play.add_argument("--checkpoint", help="checkpoint to load (default: the network shipped with bgai)")
    play.set_defaults(run=_play)

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
    serve.set_defaults(run=_serve)

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

    duel = commands.add_parser("duel", help="play duplicate cubeless games between two built-in players")
    duel.add_argument("player1", nargs="?", default="pubeval",
                      help="random, heuristic, pubeval or gnubg (default pubeval)")
    duel.add_argument("player2", nargs="?", default="heuristic",
                      help="random, heuristic, pubeval or gnubg (default heuristic)")
    duel.add_argument("--games", type=int, default=2000, help="dice sequences; each is played twice (default 2000)")
    duel.add_argument("--seed", type=int, default=0, help="seed of the dice (default 0)")
    duel.add_argument("--batch", type=int, default=2048, help="games played at once (default 2048)")
    duel.add_argument("--quiet", action="store_true", help="no progress bar")
    duel.add_argument("--luck", action="store_true", help=LUCK_HELP)
    duel.set_defaults(run=_duel)

    analyse = commands.add_parser("analyse", aliases=["analyze"],
                                  help="judge every decision of a match file (.mat or SGF): errors, error rates, luck")
    analyse.add_argument("file", help="a .mat (Jellyfish, GNU Backgammon, eXtreme Gammon) or GNU Backgammon SGF file")
    analyse.add_argument("--plies", type=int, default=0, help="lookahead of the judge: 0, 1 or 2 (default 0)")
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
    analyse.set_defaults(run=_analyse)

    train = commands.add_parser("train", help="train a model: TD(λ) self-play and lookahead generations",
                                description="Train a model through the stages of a run config (see "
                                            "bgai.train.run and training/configs/). The settings below override "
                                            "the config's: run settings, and a stage setting of the one stage that has "
                                            "it; a setting several stages have is refused: name the stage with "
                                            "--set STAGE.KEY=VALUE.")
    train.add_argument("--config", help="TOML run config (see training/configs/)")
    train.add_argument("--run-dir", help="folder of the checkpoint and TensorBoard logs (default runs/RUN_NAME)")
    train.add_argument("--resume", action="store_true", help="continue the run in --run-dir from its checkpoint")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    train.add_argument("--json", action="store_true", help="print the run's summary as JSON (summary.json) instead")
    train.add_argument("--set", action="append", metavar="STAGE.KEY=VALUE",
                       help="a setting of one stage by its name (e.g. --set ply1.lr=1e-4), or KEY=VALUE for a run "
                            "setting; repeat for several")
    for name, f in (_train_settings() if train_settings else {}).items():
        # --ray alone: Ray on this machine (the cluster `ray start` made here, else a new local instance)
        bare: dict = {"nargs": "?", "const": "local", "metavar": "ADDRESS"} if name == "ray" else {}
        kind = str if isinstance(f.default, bool) else type(f.default)  # true or false, read by the config's rules
        train.add_argument(f"--{name.replace('_', '-')}", dest=name, type=kind, default=None,
                           help=f"{f.metadata['help']} (default {f.default!r})", **bare)
    train.set_defaults(run=_train)

    bench = commands.add_parser("bench", help="duplicate games of a trained bot, your agent or a UBGI engine against "
                                              "an opponent",
                                description="Duplicate games (every dice sequence played twice, the seats swapped) "
                                            "of the bot, or of your agent (--agent) or UBGI engine (--engine, "
                                            "bgai.play.agents), against an opponent.")
    bench.add_argument("--opponent",
                       help="random, heuristic, pubeval, gnubg, sage or sage1 (Open Sage at 0 or 1-ply), bgai "
                            "(--checkpoint's network at 0-ply; without it "
                            "the fast network load_bot() plays with) or a checkpoint file "
                            "(FILE.pt: another network at 0-ply, head to head); default pubeval, or with --cube the "
                            "same bot without its cube; with --agent or --engine several, comma-separated (default "
                            "every built-in one: random, heuristic, pubeval, gnubg where installed, bgai)")
    bench.add_argument("--agent", metavar="MODULE:CALLABLE",
                       help="bench your Python agent instead: a function agent(position, dice, plays) returning a "
                            "play (an index into plays, a Move or its notation) or a player with choose "
                            "(bgai.play.agents); MODULE may be a .py file")
    bench.add_argument("--engine", metavar="COMMAND",
                       help="bench a UBGI engine instead, run as COMMAND (e.g. \"bgai ubgi --plies 1\") and spoken to "
                            "on standard input and output")
    bench.add_argument("--timeout", type=float, metavar="SECONDS",
                       help="with --agent or --engine: the time a decision may take before its game is forfeited, "
                            "an engine killed and restarted (default 10; 0: no limit)")
    bench.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH (atomically: the whole "
                                                      "record or no file; with --agent or --engine every forfeit)")
    bench.add_argument("--games", type=int, default=1000, help="dice sequences, each played twice (default 1000)")
    bench.add_argument("--checkpoint", help="checkpoint to load (default: the network shipped with bgai)")
    bench.add_argument("--plies", type=int, default=0, help="lookahead of the bot: 0, 1 or 2 (default 0)")
    bench.add_argument("--cube-plies", type=int, help="with --cube or --match: lookahead of the bot's cube "
                                                      "decisions (default: an even ply, 2 at --plies 1; "
                                                      "bgai.eval.bot.CUBE_PLIES)")
    bench.add_argument("--seed", type=int, default=0, help="seed of the dice (default 0)")
    bench.add_argument("--batch", type=int, help="games played at once (default 1024; with --agent 64, with --engine "
                                                 "1: game after game)")
    bench.add_argument("--quiet", action="store_true", help="no progress bar")
    bench.add_argument("--luck", action="store_true", help=LUCK_HELP)
    bench.add_argument("--cube", action="store_true",
                       help="cubeful money games: the bot with its cube against an opponent that never doubles and "
                            "always takes")
    bench.add_argument("--match", type=int, metavar="N", help="cubeful matches to N points (implies --cube)")
    bench.add_argument("--jacoby", action="store_true", help="with --cube: money games with the Jacoby rule")
    bench.set_defaults(run=_bench)

    ubgi = commands.add_parser("ubgi", help="be an engine for UBGI GUIs and duellers (the UBGI v0.1 text protocol "
                                            "on standard input and output)")
    ubgi.add_argument("--plies", type=int, default=0, help="default lookahead: 0, 1 or 2 (default 0; the GUI's "
                                                           "Plies option changes it)")
    ubgi.add_argument("--checkpoint", help="checkpoint to load (default: the network shipped with bgai)")
    ubgi.set_defaults(run=_ubgi)

    export = commands.add_parser("export", help="write the 0-ply network as one ONNX file, for other runtimes",
                                 description="Write the network bgai plays 0-ply with as one ONNX file "
                                             "(bgai.eval.export; inputs: bgai.onnx_feeds(boards)), after "
                                             "onnxruntime has evaluated it on positions of games within 1e-5 of "
                                             "bgai (needs the env extra).")
    export.add_argument("--onnx", required=True, metavar="FILE", help="the ONNX file to write")
    export.add_argument("--checkpoint", help="network to export (default: the one load_bot() plays 0-ply with)")
    export.add_argument("--check", type=int, default=1000, metavar="N",
                        help="positions onnxruntime is checked on before the file is written (default 1000; 0: "
                             "no check)")
    export.add_argument("--json", action="store_true", help="print what was written and measured as JSON")
    export.set_defaults(run=_export)
    return parser


# Packages of the extras, by the name an import of them fails with: (the extra, what it is).
_EXTRAS = {
    "torch": ("train", "torch (training, and reading .pt checkpoints)"),
    "tensorboard": ("train", "tensorboard (the training curves)"),
    "onnx": ("env", "onnx"),
    "onnxruntime": ("env", "onnxruntime"),
    "gymnasium": ("env", "gymnasium"),
}


def _missing_extra(error: ModuleNotFoundError, command: str | None) -> int:
    """One line naming the extra that installs a missing package, or the error itself for any other module."""
    extra = _EXTRAS.get((error.name or "").partition(".")[0])
    if extra is None:
        raise error
    print(f"bgai {command}: error: this needs {extra[1]}, which a player's install leaves out: "
          f"pip install 'bgai[{extra[0]}]'", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    command = next((word for word in words if not word.startswith("-")), None)
    try:
        # (bgai train's options come from the training module: torch, which a player's install leaves out)
        args = build_parser(train_settings=command == "train", label_settings=command == "label").parse_args(argv)
    except ModuleNotFoundError as error:
        return _missing_extra(error, command)
    args.command_line = shlex.join(["bgai", *words])  # what a results file records as the command that made it
    try:
        args.run(args)
        if argv is None:
            # Run as the program, its work done: skip the collector's last walk over every object the interpreter
            # holds at exit (about 0.5 s once torch is loaded). Files are closed and workers stopped by now. (Not
            # when called with arguments, as tests and other programs do: they go on living.)
            gc.freeze()
    except (BgaiError, ValueError) as error:
        message = " ".join(str(error).split())  # always one line
        print(f"bgai {args.command}: error: {message}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:
        return _missing_extra(error, args.command)
    except BrokenPipeError:  # the reader went away (``bgai hint ... | head``): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
        return 141  # 128 + SIGPIPE, what a shell reports for a tool a closed pipe stopped
    return 0


if __name__ == "__main__":
    sys.exit(main())
