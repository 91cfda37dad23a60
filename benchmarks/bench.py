"""bgai's speed benchmarks, side by side with the C engines where one exists, in one run.

* Move generation: (position, roll) pairs per second on the same pairs, bgai's batched ``afterstates`` (one and
  two threads) against GNU Backgammon's ``gnubg_nn.moves`` (C, one call per pair, inputs prebuilt in its own
  format) and Open Sage's ``bgsage.possible_moves``. The pairs come from games between pubeval players and from
  random games, half each.
* Games per second of the batched game runner: random v random and pubeval v random.

    python benchmarks/bench.py [--pairs 50000] [--games 4000] [--json FILE]

The oracles are optional (``pip install -e '.[dev]'``); without them only bgai's own figures are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from bgai.core import movegen
from bgai.core.files import provenance, write_json
from bgai.core.game import game_over, play_games
from bgai.core.progress import ticking
from bgai.formats.position import START_BOARD
from bgai.players import PubevalPlayer, RandomPlayer


def sample_pairs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` (position, roll) pairs: positions met in pubeval-v-pubeval and random games, fresh random rolls."""
    rng = np.random.default_rng(seed)
    boards = []
    for player in (PubevalPlayer(), RandomPlayer()):
        positions = np.repeat(START_BOARD[None], 256, axis=0)
        collected = 0
        while collected < n // 2:
            dice = rng.integers(1, 7, size=(len(positions), 2))
            moves = movegen.afterstates(positions, dice)
            positions = moves.after[player.choose(positions, moves.after, moves.owner, rng)]
            positions[game_over(positions)] = START_BOARD
            boards.append(positions.copy())
            collected += len(positions)
    boards = np.concatenate(boards)[:n]
    return boards, rng.integers(1, 7, size=(len(boards), 2))


def best_rate(run, pairs: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return pairs / best


def bench_movegen(boards: np.ndarray, dice: np.ndarray, repeats: int) -> dict:
    n = len(boards)
    figures = {}
    for threads in (1, 2):
        os.environ["BGAI_THREADS"] = str(threads)
        figures[f"bgai_{threads}_thread_pairs_per_s"] = best_rate(lambda: movegen.afterstates(boards, dice), n, repeats)
    os.environ.pop("BGAI_THREADS")
    try:
        import gnubg_nn

        from bgai.coach import oracles
    except ImportError:
        print("gnubg_nn not installed: no side-by-side figure (pip install -e '.[dev]')")
        return figures
    gnubg_in = [(oracles.to_gnubg(b), int(d1), int(d2)) for b, (d1, d2) in zip(boards, dice)]

    def gnubg_run():
        for b, d1, d2 in gnubg_in:
            gnubg_nn.moves(b, d1, d2)

    figures["gnubg_pairs_per_s"] = best_rate(gnubg_run, n, repeats)
    try:
        import bgsage

        sage_in = [(oracles.to_bgsage(b), int(d1), int(d2)) for b, (d1, d2) in zip(boards, dice)]

        def sage_run():
            for b, d1, d2 in sage_in:
                bgsage.possible_moves(b, d1, d2)

        figures["bgsage_pairs_per_s"] = best_rate(sage_run, n, repeats)
    except ImportError:
        pass
    for threads in (1, 2):
        figures[f"ratio_bgai_{threads}_thread_vs_gnubg"] = (
            figures[f"bgai_{threads}_thread_pairs_per_s"] / figures["gnubg_pairs_per_s"]
        )
    return figures


def bench_games(games: int) -> dict:
    figures = {}
    for name, first in (("random_v_random", RandomPlayer()), ("pubeval_v_random", PubevalPlayer())):
        result = play_games(first, RandomPlayer(), games, seed=1, batch=games)
        figures[f"{name}_games_per_s"] = result.summary()["games_per_s"]
    return figures


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="bgai speed benchmarks")
    parser.add_argument("--pairs", type=int, default=50_000, help="(position, roll) pairs for move generation")
    parser.add_argument("--games", type=int, default=4_000, help="games for the game-runner figures")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs; the best is reported")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)

    boards, dice = sample_pairs(args.pairs, args.seed)
    moves = movegen.afterstates(boards, dice)
    figures = {
        **provenance(),
        "pairs": len(boards),
        "afterstates_per_pair": len(moves.owner) / len(boards),
    }
    figures.update(bench_movegen(boards, dice, args.repeats))
    figures.update(bench_games(args.games))
    width = max(len(k) for k in figures)
    for key, value in figures.items():
        print(f"{key:<{width}}  {value:,.3f}" if isinstance(value, float) else f"{key:<{width}}  {value}")
    print(json.dumps(figures))
    if args.json:
        write_json(args.json, figures, indent=2)


if __name__ == "__main__":
    with ticking("bench"):  # the time spent, on standard error, while the parts run
        main()
