"""What each ply of lookahead buys in play: duplicate cubeless games of the shipped bot at some ply against an
opponent, written to JSON after every chunk of games so that a long run can be read (or stopped) midway.

    python benchmarks/ply_strength.py --plies 2 --opponent bgai0 --games 200 --json benchmarks/results/x.json
    python benchmarks/ply_strength.py --compare A.json B.json     # A's gain over B on the same dice sequences

``--opponent`` is ``bgai0``/``bgai1``/``bgai2`` (the same network at that ply) or a built-in player
(``pubeval``, ``heuristic``, ``random``). ``--games`` counts dice sequences; each is played twice with the seats
swapped (duplicate games), so a run plays twice as many games.

Standard errors: the two games of one dice sequence are not independent (the same dice favour the same seat),
so the honest standard error is that of the per-sequence mean, over sequences (``ppg_se``). The figure
``bgai bench`` prints treats all games as independent (``ppg_se_unpaired``); it is reported for comparison.
The JSON keeps the bot's points of every game (``points``: per sequence, seat 0 then seat 1), so that runs with
the same seed can be compared sequence by sequence.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from bgai.bot import load_bot
from bgai.game import play_games
from bgai.players import make_player


def opponent_player(name: str):
    if name.startswith("bgai") and name[4:].isdigit():
        return load_bot(plies=int(name[4:]))
    return make_player(name)


def summary(points: np.ndarray, turns: np.ndarray, seconds: float) -> dict:
    """``points``: (sequences, 2) of the bot's points, seat 0 then seat 1 with the same dice."""
    pair_mean = points.mean(axis=1)
    n = len(points)
    flat = points.ravel()
    return {
        "sequences": n,
        "games": 2 * n,
        "ppg": float(pair_mean.mean()),
        "ppg_se": float(pair_mean.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan"),
        "ppg_se_unpaired": float(flat.std(ddof=1) / np.sqrt(2 * n)) if n > 1 else float("nan"),
        "win_rate": float((flat > 0).mean()),
        "gammon_rate": float((np.abs(flat) >= 2).mean()),
        "mean_turns": float(turns.mean()),
        "seconds": seconds,
        "games_per_hour": 3600 * 2 * n / seconds,
    }


def compare(first: Path, second: Path) -> dict:
    """The difference in points per game of two runs with the same seed, sequence by sequence (the same dice):
    what the first bot gains over the second against their opponents."""
    a, b = (json.loads(Path(f).read_text()) for f in (first, second))
    if a["seed"] != b["seed"] or "points" not in a or "points" not in b:
        raise SystemExit("compare needs two runs with the same seed, each with its points")
    n = min(len(a["points"]), len(b["points"]))
    diff = np.asarray(a["points"][:n], dtype=float).mean(axis=1) - np.asarray(b["points"][:n], dtype=float).mean(axis=1)
    figures = {"first": str(first), "second": str(second), "sequences": n, "ppg_difference": float(diff.mean()),
               "ppg_difference_se": float(diff.std(ddof=1) / np.sqrt(n))}
    print(f"{first} - {second}: {figures['ppg_difference']:+.3f} ± {figures['ppg_difference_se']:.3f} points/game "
          f"over the same {n} dice sequences")
    return figures


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", nargs=2, type=Path, metavar="JSON", help="compare two runs (see compare)")
    parser.add_argument("--plies", type=int, help="lookahead of the shipped bot")
    parser.add_argument("--opponent", default="bgai0", help="bgai0, bgai1, bgai2 or a built-in player")
    parser.add_argument("--games", type=int, default=100, help="dice sequences, each played twice (default 100)")
    parser.add_argument("--chunk", type=int, default=50, help="sequences played at once between writes")
    parser.add_argument("--seed", type=int, default=0, help="seed of the dice")
    parser.add_argument("--json", type=Path, help="write the figures here after every chunk")
    args = parser.parse_args(argv)
    if args.compare:
        print(json.dumps(compare(*args.compare)))
        return
    if args.plies is None:
        parser.error("--plies is required")

    bot, opponent = load_bot(plies=args.plies), opponent_player(args.opponent)
    command = "python " + shlex.join([sys.argv[0], *(argv if argv is not None else sys.argv[1:])])
    points = np.zeros((0, 2), dtype=np.int64)
    turns = np.zeros((0, 2), dtype=np.int64)
    start = time.perf_counter()
    for lo in range(0, args.games, args.chunk):
        n = min(args.chunk, args.games - lo)
        one = play_games(bot, opponent, n, seed=args.seed, first_game=lo, batch=n)
        two = play_games(bot, opponent, n, seed=args.seed, first_game=lo, batch=n, swap_seats=True)
        points = np.concatenate([points, np.stack([one.points, two.points], axis=1)])
        turns = np.concatenate([turns, np.stack([one.turns, two.turns], axis=1)])
        figures = {"bot": bot.name, "opponent": opponent.name, "plies": args.plies, "seed": args.seed,
                   "command": command, "load_average": os.getloadavg()[0], "done": len(points) == args.games,
                   **summary(points, turns, time.perf_counter() - start),
                   "points": points.tolist()}
        print(f"{figures['sequences']:5d} sequences  {figures['ppg']:+.3f} ± {figures['ppg_se']:.3f} points/game "
              f"(unpaired ± {figures['ppg_se_unpaired']:.3f})  {figures['games_per_hour']:.0f} games/h  "
              f"load {figures['load_average']:.1f}", flush=True)
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps({k: v for k, v in figures.items() if k != "points"}))


if __name__ == "__main__":
    main()
