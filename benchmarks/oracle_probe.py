"""Throughput of the move-generation oracles, called raw in their native formats.

Measures (position, roll) pairs per second of

* ``gnubg_nn.moves(board2x25, d1, d2)``     (returns position keys)
* ``bgsage.possible_moves(board26, d1, d2)`` (returns lists of 26-int boards)
* ``bgbot_cpp.possible_moves``               (the C++ call bgsage wraps)

on positions sampled from random-play games (uniformly random legal
afterstate each turn).  Inputs are converted to each oracle's format before
timing, so the timed loop is one Python call per pair plus the oracle's work.
Single-threaded.

    python benchmarks/oracle_probe.py --pairs 20000 --repeats 3
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import oracles  # noqa: E402  (tests/oracles.py)


def random_game_pairs(n: int, seed: int) -> list[tuple[np.ndarray, int, int]]:
    """n (position, d1, d2) triples from consecutive random-play games."""
    rng = np.random.default_rng(seed)
    pairs = []
    pos = oracles.START.copy()
    while len(pairs) < n:
        d1, d2 = (int(d) for d in rng.integers(1, 7, size=2))
        pairs.append((pos, d1, d2))
        afters = sorted(oracles.gnubg_afterstates(pos, d1, d2))
        nxt = np.frombuffer(afters[rng.integers(len(afters))], dtype=np.int8).copy()
        # The mover (negative in the afterstate) has borne off everything.
        pos = oracles.START.copy() if not (nxt < 0).any() else nxt
    return pairs


def rate(fn, inputs, repeats: int) -> tuple[float, int]:
    """Best-of-`repeats` pairs/second, and the number of results of the last run."""
    best = float("inf")
    for _ in range(repeats):
        n_results = 0
        t0 = time.perf_counter()
        for b, d1, d2 in inputs:
            n_results += len(fn(b, d1, d2))
        best = min(best, time.perf_counter() - t0)
    return len(inputs) / best, n_results


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    import bgbot_cpp
    import bgsage
    import gnubg_nn

    pairs = random_game_pairs(args.pairs, args.seed)
    gnubg_in = [(oracles.to_gnubg(p), d1, d2) for p, d1, d2 in pairs]
    bgsage_in = [(oracles.to_bgsage(p), d1, d2) for p, d1, d2 in pairs]

    print(f"{len(pairs)} (position, roll) pairs from random games, seed {args.seed}")
    for name, fn, inputs in [
        ("gnubg_nn.moves", gnubg_nn.moves, gnubg_in),
        ("bgsage.possible_moves", bgsage.possible_moves, bgsage_in),
        ("bgbot_cpp.possible_moves", bgbot_cpp.possible_moves, bgsage_in),
        ("oracles.gnubg_afterstates", oracles.gnubg_afterstates, pairs),
        ("oracles.bgsage_afterstates", oracles.bgsage_afterstates, pairs),
    ]:
        per_s, n_results = rate(fn, inputs, args.repeats)
        print(f"{name:28s} {per_s:10,.0f} pairs/s   ({n_results / len(inputs):.1f} results/pair)")


if __name__ == "__main__":
    main()
