"""The commands that measure players in games: ``bgai duel`` and ``bench``."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from bgai.core.errors import BgaiError
from bgai.frontends.cli.common import (
    LUCK_HELP,
    play_match,
    print_record,
    print_summary,
)

if TYPE_CHECKING:
    from bgai.players import Player


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
        print_summary(bench.agent, result.opponent, s, bench.sequences)
        if result.faults:
            print(f"  forfeits         {len(result.faults)} of {s['games']} games, each scored {FORFEIT_POINTS} (the "
                  f"first: {result.faults[0]})")
    if len(faults) > shown_faults:
        print(f"({len(faults)} forfeits in all; every one is in the JSON record)", file=sys.stderr)
    print_record(args, bench.to_dict())


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
    print_record(args, {**labels, **s})


def _duel(args: argparse.Namespace) -> None:
    from bgai.players import make_player

    first, second = make_player(args.player1), make_player(args.player2)
    play_match(first, second, args, {"player1": args.player1, "player2": args.player2})


def add_duel(commands) -> None:
    """``bgai duel``: its arguments."""
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
    play_match(bot, opponent, args, {"bot": bot.name, "opponent": name, "plies": args.plies})


def add_bench(commands) -> None:
    """``bgai bench``: its arguments."""
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
