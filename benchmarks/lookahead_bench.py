"""Milliseconds per move of the shipped bot at each ply, one position at a time (as a user asking for a play).

    python benchmarks/lookahead_bench.py [--positions 100]

Positions are sampled from pubeval self-play games, each with a fresh roll.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import sample_pairs  # noqa: E402

from bgai.bot import MAX_PLIES, load_bot  # noqa: E402
from bgai.position import Position  # noqa: E402


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    boards, dice = sample_pairs(args.positions, args.seed)
    pairs = [(Position(b), (int(d1), int(d2))) for b, (d1, d2) in zip(boards, dice)]
    figures = {}
    for plies in range(MAX_PLIES + 1):
        bot = load_bot(plies=plies)
        bot.choose_move(*pairs[0])  # warm up
        start = time.perf_counter()
        for pos, roll in pairs:
            bot.choose_move(pos, roll)
        figures[f"ms_per_move_{plies}_ply"] = 1000 * (time.perf_counter() - start) / len(pairs)
    for key, value in figures.items():
        print(f"{key:<18} {value:.1f}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
