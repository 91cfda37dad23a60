"""Strength of trained networks at 0-ply: duplicate games against pubeval and GNU Backgammon 0-ply, side by side.

Each checkpoint plays the same dice sequences against each opponent, twice (seats swapped). The standard error is
the paired one: the two games of a sequence are averaged first, so the luck of the dice they share cancels.

    python benchmarks/strength.py CHECKPOINT [CHECKPOINT ...] [--pubeval 5000] [--gnubg 2000] [--seed 2024]
                                  [--json benchmarks/results/strength.json]

A checkpoint may be ``shipped`` (the network ``load_bot()`` loads). GNU Backgammon is an opponent here only;
nothing it plays reaches training.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from bgai.bot import load_bot
from bgai.game import play_duplicate
from bgai.players import make_player


def paired(points: np.ndarray) -> tuple[float, float]:
    """Mean points per game and its paired standard error, for duplicate results (first half seat 0, second half
    the same dice with the seats swapped)."""
    half = len(points) // 2
    pairs = (points[:half] + points[half:]).astype(np.float64) / 2
    return float(pairs.mean()), float(pairs.std(ddof=1) / np.sqrt(half))


def measure(checkpoint: str, opponents: dict[str, int], seed: int, progress: bool = False) -> dict:
    bot = load_bot(None if checkpoint == "shipped" else checkpoint)
    out = {"checkpoint": checkpoint, "model": bot.model.describe()}
    for name, sequences in opponents.items():
        if sequences <= 0:
            continue
        started = time.perf_counter()
        result = play_duplicate(bot, make_player(name), sequences, seed=seed, batch=2048, progress=progress)
        ppg, se = paired(result.points)
        s = result.summary()
        out[name] = {"games": s["games"], "ppg": ppg, "ppg_se": se, "win_rate": s["win_rate"],
                     "gammon_rate": s["gammon_rate"], "seconds": time.perf_counter() - started}
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+", help="checkpoint files, or 'shipped'")
    parser.add_argument("--pubeval", type=int, default=5000, help="dice sequences against pubeval (x2 games)")
    parser.add_argument("--gnubg", type=int, default=2000, help="dice sequences against gnubg 0-ply (x2 games)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    for checkpoint in args.checkpoints:
        row = measure(checkpoint, {"pubeval": args.pubeval, "gnubg": args.gnubg}, args.seed, args.progress)
        rows.append(row)
        figures = "  ".join(f"v {name} {row[name]['ppg']:+.3f} ± {row[name]['ppg_se']:.3f}"
                            for name in ("pubeval", "gnubg") if name in row)
        print(f"{checkpoint}: {figures}  ({row['model']})", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"command": "python benchmarks/strength.py " + " ".join(
            argv if argv is not None else sys.argv[1:]), "results": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
