"""What each ply of lookahead buys in play: duplicate cubeless games of the shipped bot (or ``--checkpoint``'s) at
some ply against an opponent, written to JSON after every chunk of games so that a long run can be read (or
stopped) midway.

    python -m bgai.coach.ply_strength --plies 2 --opponent bgai0 --games 200 --json benchmarks/results/x.json
    python -m bgai.coach.ply_strength --checkpoint student.pt --pruner p.npz --plies 1 --opponent bgai1 --games 500
    python -m bgai.coach.ply_strength --plies 1 --filters 5:0.08 --opponent bgai1 --opponent-filters 8:0.16
    python -m bgai.coach.ply_strength --compare A.json B.json     # A's gain over B on the same dice sequences
    python -m bgai.coach.ply_strength --merge OUT.json A.json B.json   # one run from parts (--first-sequence)

``--opponent`` is ``bgai0``/``bgai1``/``bgai2`` (the same network at that ply), ``bgai1-unpruned``/``bgai2-unpruned``
(the same lookahead judging every reply with the network, ``load_bot(pruner=False)``) or a built-in player
(``pubeval``, ``heuristic``, ``random``). ``--games`` counts dice sequences; each is played twice with the seats
swapped (duplicate games), so a run plays twice as many games.

Standard errors: the two games of one dice sequence are not independent (the same dice favour the same seat),
so the honest standard error is that of the per-sequence mean, over sequences (``ppg_se``, as ``bgai bench``
prints it since it pairs duplicate games). The one that treats all games as independent (``ppg_se_unpaired``,
what ``bgai bench`` printed before) is reported for comparison.
The JSON keeps the bot's points of every game (``points``: per sequence, seat 0 then seat 1), so that runs with
the same seed can be compared sequence by sequence. The figures are ``bgai.core.game.GameResults.summary``'s (the one
definition of the statistics of duplicate games: its gammon rate leaves out backgammons, which have a rate of their
own), with the dice sequences, the unpaired standard error and games per hour besides.

Luck-adjusted results (on by default; ``--no-luck`` plays without): every roll's luck for the bot is measured with
the shipped 512-256 network (``SHIPPED_NPZ``) at 0-ply (``bgai.play.analysis.roll_luck``: the equity of the roll's best
play minus the mean over all rolls), and ``ppg_luck_adjusted`` is the mean of points minus luck. Each roll's luck
averages to zero over the rolls that could have come whatever the evaluator, so this estimates the same points per
game as ``ppg``, without bias, with several times less variance (its own ``ppg_luck_adjusted_se``, paired by
sequence).
The JSON keeps each game's luck beside its points (``luck``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

from bgai.core.files import provenance, write_json
from bgai.core.game import GameResults, paired_mean, play_games
from bgai.eval.bot import SHIPPED_NPZ, MoveFilter, load_bot
from bgai.play.analysis import roll_luck
from bgai.players import make_player


def parse_filters(text: str | None) -> tuple[MoveFilter, ...] | None:
    """``"8:0.16,5:0.04"``: a ``MoveFilter(keep, window)`` per ply below the bot's (``None``: the default ones)."""
    if text is None:
        return None
    try:
        return tuple(MoveFilter(int(keep), float(window))
                     for keep, window in (stage.split(":") for stage in text.split(",")))
    except ValueError as error:
        raise SystemExit(f"--filters wants KEEP:WINDOW stages separated by commas, e.g. 8:0.16, got {text!r}") \
            from error


def opponent_player(name: str, checkpoint: str | None = None, pruner: str | None = None,
                    filters: tuple[MoveFilter, ...] | None = None):
    """``bgaiN`` (a network at N plies: the default one, or ``checkpoint`` with ``pruner`` and ``filters``),
    ``bgaiN-unpruned`` (the same without the pruning net) or a built-in player."""
    if name.startswith("bgai") and name[4:].isdigit():
        return load_bot(checkpoint, plies=int(name[4:]), pruner=pruner, filters=filters)
    plies = name.removeprefix("bgai").removesuffix("-unpruned")
    if name.startswith("bgai") and name.endswith("-unpruned") and plies.isdigit():
        # the same lookahead without the pruning net
        return load_bot(checkpoint, plies=int(plies), pruner=False, filters=filters)
    if checkpoint or pruner or filters:
        raise SystemExit(f"--opponent-checkpoint, --opponent-pruner and --opponent-filters need a bgaiN opponent, "
                         f"not {name!r}")
    return make_player(name)


def summary(points: np.ndarray, turns: np.ndarray, seconds: float, luck: np.ndarray | None = None) -> dict:
    """``points``: (sequences, 2) of the bot's points, seat 0 then seat 1 with the same dice; ``luck`` the same
    shape, the bot's luck in each game. ``GameResults.summary`` of those duplicate games (paired standard errors),
    with the unpaired standard error beside the paired one."""
    n = len(points)
    # GameResults holds duplicate games as every sequence's seat-0 game, then every seat-1 game
    games = GameResults(points.T.ravel(), turns.T.ravel(), seconds, luck=None if luck is None else luck.T.ravel(),
                        duplicate=True)
    unpaired = GameResults(games.points, games.turns, seconds)
    return {
        "sequences": n,
        **games.summary(),
        "ppg_se_unpaired": unpaired.summary()["ppg_se"],
        "seconds": seconds,
        "games_per_hour": 3600 * 2 * n / seconds,
    }


def compare(first: Path, second: Path) -> dict:
    """The difference in points per game of two runs with the same seed, sequence by sequence (the same dice):
    what the first bot gains over the second against their opponents (luck-adjusted too when both have luck)."""
    a, b = (json.loads(Path(f).read_text()) for f in (first, second))
    if a["seed"] != b["seed"] or "points" not in a or "points" not in b:
        raise SystemExit("compare needs two runs with the same seed, each with its points")
    n = min(len(a["points"]), len(b["points"]))

    def difference(key_a, key_b=None):
        one = np.asarray(a["points"][:n], dtype=float) - (np.asarray(a[key_a][:n]) if key_a else 0)
        two = np.asarray(b["points"][:n], dtype=float) - (np.asarray(b[key_b][:n]) if key_b else 0)
        return paired_mean(one - two)

    figures = {"first": str(first), "second": str(second), "sequences": n}
    figures["ppg_difference"], figures["ppg_difference_se"] = difference(None)
    line = (f"{first} - {second}: {figures['ppg_difference']:+.3f} ± {figures['ppg_difference_se']:.3f} points/game "
            f"over the same {n} dice sequences")
    if "luck" in a and "luck" in b:
        figures["ppg_luck_adjusted_difference"], figures["ppg_luck_adjusted_difference_se"] = difference("luck", "luck")
        line += (f"; luck-adjusted {figures['ppg_luck_adjusted_difference']:+.3f} ± "
                 f"{figures['ppg_luck_adjusted_difference_se']:.3f}")
    print(line)
    return figures


def merge(out: Path, parts: list[Path], command: str | None = None) -> dict:
    """One run from parts played side by side (the same bot, opponent, plies and seed; ``--first-sequence`` set so
    that they follow each other): their games together, in the order of their first sequences. The merge's own
    ``command`` (default: this process's) is recorded with the date, commit and machine, the parts' in
    ``commands``."""
    runs = sorted((json.loads(Path(f).read_text()) for f in parts), key=lambda r: r.get("first_sequence", 0))
    keys = ("bot", "opponent", "plies", "seed")
    if any(tuple(r[k] for k in keys) != tuple(runs[0][k] for k in keys) for r in runs):
        raise SystemExit(f"merge needs parts of one run (the same {', '.join(keys)})")
    expected = runs[0].get("first_sequence", 0)
    for r in runs:
        if r.get("first_sequence", 0) != expected:
            raise SystemExit(f"the parts do not follow each other: sequence {expected} is missing or doubled")
        expected += r["sequences"]
    points = np.concatenate([np.asarray(r["points"], dtype=np.int64) for r in runs])
    # the parts keep only their mean turns: each part's mean stands for its games
    turns = np.concatenate([np.full((r["sequences"], 2), r["mean_turns"]) for r in runs])
    lucks = np.concatenate([np.asarray(r["luck"]) for r in runs]) if all("luck" in r for r in runs) else None
    seconds = max(r["seconds"] for r in runs)
    figures = {**provenance(command), **{k: runs[0][k] for k in keys},
               "first_sequence": runs[0].get("first_sequence", 0),
               "commands": [r["command"] for r in runs], "parts": [str(f) for f in parts],
               "done": all(r["done"] for r in runs), **summary(points, turns, seconds, lucks),
               "points": points.tolist(), **({} if lucks is None else {"luck": lucks.round(6).tolist()})}
    figures["games_per_hour"] = 3600 * figures["games"] / sum(r["seconds"] for r in runs)
    write_json(out, figures, indent=2)
    return figures


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", nargs=2, type=Path, metavar="JSON", help="compare two runs (see compare)")
    parser.add_argument("--merge", nargs="+", type=Path, metavar="JSON",
                        help="OUT PART [PART ...]: merge the parts of one run into OUT (see merge)")
    parser.add_argument("--first-sequence", type=int, default=0,
                        help="the first dice sequence to play (for a run in parts, one process each)")
    parser.add_argument("--plies", type=int, help="lookahead of the bot")
    parser.add_argument("--checkpoint", help="the bot's network (default: the shipped one), e.g. a student")
    parser.add_argument("--pruner", help="the bot's pruning net (.npz; default: the shipped network's own, and "
                                         "none for another --checkpoint)")
    parser.add_argument("--filters", help="the bot's move filters, KEEP:WINDOW per ply below its own, e.g. 8:0.16 "
                                          "(default: bgai.eval.bot.FILTERS)")
    parser.add_argument("--opponent", default="bgai0", help="bgai0, bgai1, bgai2, bgai1-unpruned, bgai2-unpruned "
                                                            "(without the pruning net) or a built-in player")
    parser.add_argument("--opponent-checkpoint", help="a bgaiN opponent's network (default: the shipped one)")
    parser.add_argument("--opponent-pruner", help="a bgaiN opponent's pruning net (as --pruner)")
    parser.add_argument("--opponent-filters", help="a bgaiN opponent's move filters (as --filters)")
    parser.add_argument("--games", type=int, default=100, help="dice sequences, each played twice (default 100)")
    parser.add_argument("--chunk", type=int, default=50, help="sequences played at once between writes")
    parser.add_argument("--seed", type=int, default=0, help="seed of the dice")
    parser.add_argument("--json", type=Path, help="write the figures here after every chunk")
    parser.add_argument("--no-luck", action="store_true", help="no luck-adjusted results (faster at 0-ply)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars (a line a chunk still)")
    args = parser.parse_args(argv)
    command = "python -m bgai.coach.ply_strength " + shlex.join(argv if argv is not None else sys.argv[1:])
    if args.compare:
        print(json.dumps(compare(*args.compare)))
        return
    if args.merge:
        if len(args.merge) < 2:
            parser.error("--merge needs OUT and at least one part")
        figures = merge(args.merge[0], args.merge[1:], command)
        print(json.dumps({k: v for k, v in figures.items() if k not in ("points", "luck")}))
        return
    if args.plies is None:
        parser.error("--plies is required")

    bot = load_bot(args.checkpoint, plies=args.plies, pruner=args.pruner, filters=parse_filters(args.filters))
    opponent = opponent_player(args.opponent, args.opponent_checkpoint, args.opponent_pruner,
                               parse_filters(args.opponent_filters))
    recorded = provenance(command)
    luck = None if args.no_luck else partial(roll_luck, load_bot(SHIPPED_NPZ, plies=0))
    points = np.zeros((0, 2), dtype=np.int64)
    turns = np.zeros((0, 2), dtype=np.int64)
    lucks = np.zeros((0, 2), dtype=np.float64)
    start = time.perf_counter()
    for lo in range(args.first_sequence, args.first_sequence + args.games, args.chunk):
        n = min(args.chunk, args.first_sequence + args.games - lo)
        one = play_games(bot, opponent, n, seed=args.seed, first_game=lo, batch=n, luck=luck, progress=not args.quiet)
        two = play_games(bot, opponent, n, seed=args.seed, first_game=lo, batch=n, swap_seats=True, luck=luck,
                         progress=not args.quiet)
        points = np.concatenate([points, np.stack([one.points, two.points], axis=1)])
        turns = np.concatenate([turns, np.stack([one.turns, two.turns], axis=1)])
        if one.luck is not None and two.luck is not None:
            lucks = np.concatenate([lucks, np.stack([one.luck, two.luck], axis=1)])
        figures = {"bot": bot.name, "opponent": opponent.name, "plies": args.plies, "seed": args.seed,
                   "first_sequence": args.first_sequence, **recorded,
                   "load_average": os.getloadavg()[0], "done": len(points) == args.games,
                   **summary(points, turns, time.perf_counter() - start, None if luck is None else lucks),
                   "points": points.tolist(), **({} if luck is None else {"luck": lucks.round(6).tolist()})}
        adjusted = ("" if luck is None else f"  luck-adjusted {figures['ppg_luck_adjusted']:+.3f} ± "
                    f"{figures['ppg_luck_adjusted_se']:.3f}")
        print(f"{figures['sequences']:5d} sequences  {figures['ppg']:+.3f} ± {figures['ppg_se']:.3f} points/game "
              f"(unpaired ± {figures['ppg_se_unpaired']:.3f}){adjusted}  {figures['games_per_hour']:.0f} games/h  "
              f"load {figures['load_average']:.1f}", flush=True)
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps({k: v for k, v in figures.items() if k not in ("points", "luck")}))


if __name__ == "__main__":
    main()
