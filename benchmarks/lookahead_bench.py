"""What each ply of lookahead costs, and what the move filters lose, one position at a time (as a user asking for
a hint would).

    python benchmarks/lookahead_bench.py [--positions 100] [--json FILE]     # milliseconds per move by ply
    python benchmarks/lookahead_bench.py --filters [--positions 300] [--max-plies 2]   # the filter study
    python benchmarks/lookahead_bench.py --memory                            # peak memory of 2-ply on a batch

The positions come from the shipped bot's own games (0-ply against itself), each with a fresh roll: the positions
the bot meets when it plays.

* **Speed**: milliseconds per ``rank_moves`` call (``choose_move`` is its head), at 0, 1 and 2-ply with the
  default filters, and at 1 and 2-ply judging every play (``filters=()``) for comparison.
* **Filter study** (``--filters``): every play of every unforced position is judged at 0, 1 and 2-ply at full
  width once. Each candidate filter then replays on those values through ``Bot.judge`` itself; its loss is the
  full-width equity of the best play minus that of the play the filter leads to, in millipoints per unforced
  move, measured at the bot's ply. Full width is the reference here, so the loss is what filtering costs, not
  the bot's error. The cost is the number of plays judged at each ply per move.
* **Memory** (``--memory``, also run by the speed figures): the peak resident memory of a fresh process before
  and after it chooses 2-ply plays for one game position, then for a batch of them (``Bot.choose``, as in games).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bgai.core.files import provenance, write_json
from bgai.core.game import game_over
from bgai.core.movegen import afterstates
from bgai.core.progress import ticking
from bgai.eval.bot import FILTERS, MAX_PLIES, Bot, MoveFilter, load_bot
from bgai.formats.position import START_BOARD, Position


def sample_positions(n: int, seed: int, bot: Bot | None = None,
                     steps: int = 400) -> list[tuple[Position, tuple[int, int]]]:
    """``n`` (position, roll) pairs met in the first ``steps`` turns of 64 of the bot's 0-ply games against itself
    (a finished game starts again), each with a fresh roll."""
    bot = bot or load_bot()
    rng = np.random.default_rng(seed)
    boards = np.repeat(START_BOARD[None], 64, axis=0)
    seen = []
    for _ in range(steps):
        boards = bot.choose_many(boards, rng.integers(1, 7, size=(len(boards), 2)))
        boards[game_over(boards)] = START_BOARD
        seen.append(boards.copy())
    seen = np.concatenate(seen)
    picked = seen[rng.choice(len(seen), size=n, replace=False)]
    return [(Position(b), (int(rng.integers(1, 7)), int(rng.integers(1, 7)))) for b in picked]


def ms_per_move(bot: Bot, pairs) -> float:
    bot.rank_moves(*pairs[0])  # warm up
    start = time.perf_counter()
    for pos, roll in pairs:
        bot.rank_moves(pos, roll)
    return 1000 * (time.perf_counter() - start) / len(pairs)


def bench_speed(pairs) -> dict:
    figures = {}
    for plies in range(MAX_PLIES + 1):
        figures[f"ms_per_move_{plies}_ply"] = ms_per_move(load_bot(plies=plies), pairs)
    for plies in range(1, MAX_PLIES + 1):
        figures[f"ms_per_move_{plies}_ply_full_width"] = ms_per_move(load_bot(plies=plies, filters=()), pairs)
    return figures


# The filter study --------------------------------------------------------------------------------------------


class ReplayBot(Bot):
    """A bot whose lookahead reads values judged beforehand, so that filters replay through ``Bot.judge``."""

    def __init__(self, net, plies, filters, table: dict) -> None:
        super().__init__(net, plies=plies, filters=filters)
        self.table = table
        self.judged = np.zeros(plies + 1, dtype=np.int64)  # plays judged at each ply

    def lookahead(self, boards, plies):
        self.judged[plies] += len(boards)
        return np.stack([self.table[b.tobytes(), plies] for b in boards])


def full_width_table(pairs, bot: Bot, max_plies: int = MAX_PLIES) -> tuple[list, dict, float]:
    """The unforced (position, roll) pairs' plays and their probabilities at 1..``max_plies``, at full width."""
    table, unforced = {}, []
    start = time.perf_counter()
    for pos, roll in pairs:
        moves = afterstates(pos.board[None], np.array([roll]))
        if len(moves.after) < 2:
            continue
        unforced.append(moves.after)
        for plies in range(1, max_plies + 1):
            for board, probs in zip(moves.after, bot.lookahead(moves.after, plies)):
                table[board.tobytes(), plies] = probs
    return unforced, table, time.perf_counter() - start


def replay(net, unforced, table, plies: int, filters) -> dict:
    """Loss (millipoints per unforced move, against full width) and plays judged per move of one filter."""
    bot = ReplayBot(net, plies, filters, table)
    full = ReplayBot(net, plies, (), table)
    losses = []
    for after in unforced:
        owner = np.zeros(len(after), dtype=np.int64)
        truth, _ = full.judge(after, owner, 1)
        pick = bot.choose(np.zeros((1, 26)), after, owner)[0]
        losses.append(truth.max() - truth[pick])
    losses = np.array(losses)
    return {
        "filters": [None if f is None else [f.keep, f.window] for f in filters],
        "loss_mpt": 1000 * losses.mean(),
        "loss_mpt_se": 1000 * losses.std(ddof=1) / np.sqrt(len(losses)),
        "changed_pct": 100 * (losses > 0).mean(),
        "judged_per_move": (bot.judged / len(unforced)).round(2).tolist()[1:],
    }


def candidate_filters() -> dict[int, list]:
    one = [(MoveFilter(k, w),) for k in (2, 3, 4, 5, 6, 8, 12) for w in (0.04, 0.08, 0.16, 0.32)]
    two = [(first, second) for first in (MoveFilter(5, 0.16), MoveFilter(8, 0.16), MoveFilter(12, 0.24))
           for second in [None] + [MoveFilter(k, w) for k in (1, 2, 3, 4, 5) for w in (0.02, 0.04, 0.08, 0.16)]]
    return {1: one, 2: two}


def bench_filters(pairs, max_plies: int = MAX_PLIES) -> dict:
    bot = load_bot()
    unforced, table, seconds = full_width_table(pairs, bot, max_plies)
    print(f"{len(unforced)} unforced positions judged at full width in {seconds:.0f} s")
    results = {"unforced": len(unforced), "full_width_seconds": seconds, "plies": {}}
    for plies, candidates in candidate_filters().items():
        if plies > max_plies:
            continue
        rows = [replay(bot.model, unforced, table, plies, f) for f in candidates]
        rows.sort(key=lambda r: (r["judged_per_move"][-1], r["loss_mpt"]))
        default = replay(bot.model, unforced, table, plies, FILTERS[plies])
        print(f"\n{plies}-ply (judged per move: plays at " + ", ".join(f"{p}-ply" for p in range(1, plies + 1))
              + f"); default {FILTERS[plies]}")
        for r in rows + [dict(default, filters="default")]:
            print(f"  {str(r['filters']):<34} loss {r['loss_mpt']:6.2f} ± {r['loss_mpt_se']:4.2f} mpt  "
                  f"changed {r['changed_pct']:5.1f}%  judged {r['judged_per_move']}")
        results["plies"][plies] = {"candidates": rows, "default": default}
    return results


# Memory ------------------------------------------------------------------------------------------------------


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_memory(batch: int, seed: int, steps: int) -> dict:
    bot = load_bot(plies=2)
    pairs = sample_positions(batch, seed, steps=steps)
    boards = np.stack([p.board for p, _ in pairs])
    moves = afterstates(boards, np.array([r for _, r in pairs]))
    before = peak_rss_mb()
    bot.choose(boards[:1], moves.after[moves.owner == 0], moves.owner[moves.owner == 0])
    one = peak_rss_mb()
    start = time.perf_counter()
    bot.choose(boards, moves.after, moves.owner)
    return {"batch": batch, "peak_rss_mb_before": before, "peak_rss_mb_one_position": one,
            "peak_rss_mb_batch": peak_rss_mb(), "seconds_batch": time.perf_counter() - start}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--filters", action="store_true", help="the filter study instead of the speed figures")
    parser.add_argument("--max-plies", type=int, default=MAX_PLIES, choices=range(1, MAX_PLIES + 1),
                        help="the filter study up to this ply (full width at 2-ply is the slow part)")
    parser.add_argument("--memory", action="store_true", help="peak memory of 2-ply choices on a batch")
    parser.add_argument("--batch", type=int, default=256, help="positions in the --memory batch")
    parser.add_argument("--steps", type=int, default=400, help="turns of the bot's games the positions are drawn "
                                                                "from (default 400)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    figures = {**provenance(), "load_average_at_start": os.getloadavg()[0], "positions": args.positions,
               "seed": args.seed}
    if args.memory:
        figures.update(bench_memory(args.batch, args.seed, args.steps))
    elif args.filters:
        figures.update(bench_filters(sample_positions(args.positions, args.seed, steps=args.steps),
                                     args.max_plies))
    else:
        # First, while this process is small: a child's peak memory starts from its parent's at the fork.
        run = subprocess.run([sys.executable, __file__, "--memory", "--batch", str(args.batch), "--steps",
                              str(args.steps)], capture_output=True, text=True, check=True)
        memory = json.loads(run.stdout.splitlines()[-1])
        figures.update(bench_speed(sample_positions(args.positions, args.seed, steps=args.steps)))
        figures["memory"] = {k: memory[k] for k in memory if k.startswith(("batch", "peak", "seconds"))}
        for key, value in figures.items():
            print(f"{key:<34} {value:.1f}" if isinstance(value, float) else f"{key:<34} {value}")
    figures["load_average_at_end"] = os.getloadavg()[0]
    print(json.dumps(figures))
    if args.json:
        write_json(args.json, figures, indent=2)


if __name__ == "__main__":
    with ticking("lookahead_bench"):  # the time spent, on standard error, while the parts run
        main()
