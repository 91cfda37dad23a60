"""What each kind of training target costs as ``bgai train`` computes it: milliseconds a position on one thread.

    python benchmarks/target_cost.py [--positions 300] [--rollouts 20] [--json FILE]

The positions are met in the fast network's own self-play (0-ply, 2% random moves, as a lookahead stage samples
them; bear-offs left out). Each kind is ``bgai.train.lookahead.lookahead_targets`` on the fast network
(``load_bot()``'s, 512-64), as a lookahead stage's workers call it: 1-ply and 2-ply targets judging every reply, and
with the fast network's pruning net (``LookaheadStage.pruner``: the network judges the pruning net's best 5 plays of
each roll); rollout targets (72 trials, variance reduction, truncated at 7, ``LookaheadStage.rollouts``) on the first
``--rollouts`` positions. Beside them, the same 1 and 2-ply lookahead in torch (``Bot`` of the torch model, how the
targets were computed before they moved to the numpy pass), and how far each pruned target's equity lies from
the unpruned one (mean absolute difference).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from bgai.core.files import provenance, write_json
from bgai.core.progress import ticking
from bgai.eval.bot import FAST_NPZ, FAST_PRUNER, Bot, load_pruner
from bgai.eval.network import EquityModel
from bgai.eval.weights import ModelSnapshot, equity
from bgai.train.lookahead import Pruning, RolloutTargets, lookahead_targets
from bgai.train.selfplay import sample_positions


def timed(fn, n: int) -> tuple[np.ndarray, float]:
    started = time.perf_counter()
    out = fn()
    return out, 1000 * (time.perf_counter() - started) / n


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--rollouts", type=int, default=20, help="positions of the rollout targets' timing")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--self-play", type=int, help="self-play games the positions come from (default: a tenth "
                                                       "of --positions, at least 50)")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)
    games = max(50, args.positions // 10) if args.self_play is None else args.self_play
    torch.set_num_threads(1)
    snapshot, _ = ModelSnapshot.load_npz(FAST_NPZ)
    pruning = Pruning(*load_pruner(FAST_PRUNER))
    rng = np.random.default_rng(args.seed)
    boards = sample_positions(EquityModel.of(snapshot), games, 0, args.seed, 0.02, rng, keep=args.positions)
    n = len(boards)
    lookahead_targets(snapshot, boards[:4], 2, pruning=pruning)  # warm-up: kernels loaded, tables built
    torch_bot = Bot(EquityModel.of(snapshot))
    figures: dict = {**provenance(), "positions": n, "ms_per_position": {}, "pruned_equity_difference": {}}
    ms = figures["ms_per_position"]
    for plies in (1, 2):
        full, ms[f"{plies}-ply"] = timed(lambda plies=plies: lookahead_targets(snapshot, boards, plies), n)
        pruned, ms[f"{plies}-ply, pruning net"] = timed(
            lambda plies=plies: lookahead_targets(snapshot, boards, plies, pruning=pruning), n)
        _, ms[f"{plies}-ply, torch (before)"] = timed(lambda plies=plies: torch_bot.lookahead(boards, plies), n)
        figures["pruned_equity_difference"][f"{plies}-ply"] = float(np.abs(equity(pruned) - equity(full)).mean())
    rolled = boards[:args.rollouts]
    share = RolloutTargets(1.0, trials=72, truncate=7)
    _, ms["rollout, 72 trials, truncated at 7"] = timed(
        lambda: lookahead_targets(snapshot, rolled, 1, rollouts=share), len(rolled))
    _, ms["rollout, pruning net"] = timed(
        lambda: lookahead_targets(snapshot, rolled, 1, rollouts=share, pruning=pruning), len(rolled))
    for name, value in ms.items():
        print(f"{name:40s} {value:8.2f} ms a position")
    for name, value in figures["pruned_equity_difference"].items():
        print(f"{name} pruned v every reply judged: {value:.5f} equity (mean absolute difference)")
    if args.json:
        write_json(args.json, figures, indent=2)
    return figures


if __name__ == "__main__":
    with ticking("target_cost"):  # the time spent, on standard error, while the parts run
        main()
