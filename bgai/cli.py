"""The ``bgai`` command line: thin wrappers over the library.

Bad input (a malformed position, dice outside 1..6, an unknown player) ends with a one-line message on stderr and
exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys

from bgai.errors import BgaiError
from bgai.position import Position, parse_dice


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


def _duel(args: argparse.Namespace) -> None:
    from bgai.game import play_duplicate
    from bgai.players import make_player

    first, second = make_player(args.player1), make_player(args.player2)
    if args.games < 1:
        raise BgaiError(f"--games must be at least 1, got {args.games}")
    results = play_duplicate(first, second, args.games, seed=args.seed, batch=args.batch, progress=not args.quiet)
    s = results.summary()
    print(f"{args.player1} v {args.player2}: {s['games']} duplicate games ({args.games} dice sequences x 2 seats)")
    print(f"  points per game  {s['ppg']:+.3f} ± {s['ppg_se']:.3f} (for {args.player1})")
    print(f"  wins             {100 * s['win_rate']:.1f}%")
    print(f"  gammons          {100 * s['gammon_rate']:.1f}%   backgammons {100 * s['backgammon_rate']:.1f}%")
    print(f"  speed            {s['games_per_s']:.0f} games/s")
    print(json.dumps({"player1": args.player1, "player2": args.player2, **s}))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bgai", description="bgai: a backgammon engine")
    commands = parser.add_subparsers(dest="command", required=True)

    show = commands.add_parser("show", help="draw a position")
    show.add_argument("position", help="GNU Backgammon Position ID (e.g. 4HPwATDgc/ABMA) or XGID")
    show.set_defaults(run=_show)

    moves = commands.add_parser("moves", help="list the legal plays of a position and roll")
    moves.add_argument("position", help="GNU Backgammon Position ID or XGID")
    moves.add_argument("dice", help="the roll, e.g. 63 or 6-3")
    moves.set_defaults(run=_moves)

    duel = commands.add_parser("duel", help="play duplicate cubeless games between two built-in players")
    duel.add_argument("player1", nargs="?", default="pubeval", help="random, heuristic or pubeval (default pubeval)")
    duel.add_argument("player2", nargs="?", default="heuristic", help="random, heuristic or pubeval (default heuristic)")
    duel.add_argument("--games", type=int, default=2000, help="dice sequences; each is played twice (default 2000)")
    duel.add_argument("--seed", type=int, default=0, help="seed of the dice (default 0)")
    duel.add_argument("--batch", type=int, default=2048, help="games played at once (default 2048)")
    duel.add_argument("--quiet", action="store_true", help="no progress bar")
    duel.set_defaults(run=_duel)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except (BgaiError, ValueError) as error:
        print(f"bgai {args.command}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
