"""Train the pruning net: a small network that ranks the replies of a lookahead so that the big one judges few.

    python training/pruner.py [--checkpoint NET] [--games 3000] [--hidden 128] [--encoder 0] [--keep 5]
        [--threads 1] [--out bgai/data/bgai-pruner.npz] [--json FILE]

In an n-ply lookahead the bot picks, for each of the 21 rolls, the reply the network would play at 0-ply
(``Bot.replies``): some twenty plays a roll go through the 512-256 network so that one is kept. A pruning net
ranks them first and the network judges only its best few (``Bot(pruner=..., prune=K)``), as GNU Backgammon's
pruning nets do. It learns only from bgai's own network: the positions come from the network's 0-ply self-play
(``bgai.train.selfplay.sample_positions``), each with one random roll, and every play of that roll the network would
evaluate (finished games and bear-offs left out: the rules and the database answer those) is a training board
whose target is the network's own 0-ply probabilities.

It reports, on held-out (position, roll) groups, how often the network's choice is among the pruning net's best
K plays (K = 1..8), and writes the net as an ``.npz`` for play (``bgai.eval.weights.ModelSnapshot``), with those
figures in its info.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

from bgai.core.files import provenance, write_json
from bgai.core.movegen import afterstates, segment_argmax
from bgai.core.phase import BEAROFF, OVER, classify
from bgai.eval.bot import SHIPPED, Bot, MoveFilter
from bgai.eval.checkpoint import load_checkpoint, model_from_checkpoint
from bgai.eval.network import EquityModel, equity, flip
from bgai.eval.weights import ModelSnapshot
from bgai.train.learner import Learner
from bgai.train.selfplay import sample_positions

ROOT = Path(__file__).resolve().parents[1]


def reply_groups(boards: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Every play of one random roll of each position that the network would evaluate: (plays, group)."""
    dice = rng.integers(1, 7, size=(len(boards), 2))
    moves = afterstates(boards, dice, validate=False)
    live = ~np.isin(classify(moves.after), (OVER, BEAROFF))
    return moves.after[live], moves.owner[live]


def recall(bot: Bot, pruner: ModelSnapshot, plays: np.ndarray, group: np.ndarray, ks=range(1, 9)) -> dict:
    """Share of the groups (of two plays or more) whose network choice is among the pruning net's best k."""
    _, group = np.unique(group, return_inverse=True)
    n = int(group.max()) + 1
    counts = np.bincount(group, minlength=n)
    rows = np.flatnonzero(counts[group] >= 2)
    plays, group = plays[rows], np.unique(group[rows], return_inverse=True)[1]
    n = int(group.max()) + 1
    best = segment_argmax(equity(flip(bot.probabilities(plays))), group, n)
    rough = equity(flip(bot.probabilities(plays, pruner)))
    values = equity(flip(bot.probabilities(plays))).astype(np.float64)
    figures, losses = {}, {}
    for k in ks:
        kept = MoveFilter(k, np.inf).apply(rough, group)
        figures[k] = float(kept[best].mean())
        rows = np.flatnonzero(kept)
        chosen = rows[segment_argmax(values[rows], group[rows], n)]
        losses[k] = float(1000 * (values[best] - values[chosen]).mean())
    return {"groups": n, "plays_per_group": len(plays) / n, "recall": figures, "millipoints_lost": losses}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default=str(SHIPPED), help="the network the pruning net learns from")
    parser.add_argument("--games", type=int, default=3000, help="self-play games the positions come from")
    parser.add_argument("--hidden", default="128", help="the pruning net's hidden layers, comma separated")
    parser.add_argument("--encoder", type=int, default=0, help="the pruning net's inputs (bgai.eval.encoding version; "
                        "0, the default: Tesauro's units, summed from the boards' cells; -1: the network's own)")
    parser.add_argument("--keep", type=int, default=5, help="plays per roll the network judges among the pruning "
                        "net's best (written into its info: load_bot reads it)")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads of its training (more than one crawls on a machine busy with other work)")
    parser.add_argument("--out", default=str(ROOT / "bgai" / "data" / "bgai-pruner.npz"))
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)
    if args.keep < 1:
        parser.error("--keep must be at least 1")

    started = time.perf_counter()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    model = model_from_checkpoint(load_checkpoint(args.checkpoint))
    bot = Bot(ModelSnapshot.of(model))
    positions = sample_positions(model, args.games, 0, args.seed, 0.02, rng, keep=10 ** 9, progress=True)
    held = len(positions) // 10
    plays, group = reply_groups(positions[held:], rng)
    plays = np.unique(plays, axis=0)
    targets = bot.probabilities(plays)
    print(f"{len(positions):,} positions, {len(plays):,} distinct plays to learn from", flush=True)

    hidden = tuple(int(h) for h in args.hidden.split(","))
    encoder = model.encoder_version if args.encoder < 0 else args.encoder
    pruner = EquityModel.create(hidden, ("all",), encoder)
    Learner(pruner, args.lr, 512, args.epochs).fit(plays, targets, rng, lr=(args.lr, args.lr / 30), progress=True)
    snapshot = ModelSnapshot.of(pruner.eval())
    test_plays, test_group = reply_groups(positions[:held], rng)
    figures = recall(bot, snapshot, test_plays, test_group)
    error = float(np.abs(equity(bot.probabilities(test_plays, snapshot)) - equity(bot.probabilities(test_plays)))
                  .mean())
    figures.update({**provenance(" ".join(["python training/pruner.py", *(sys.argv[1:] if argv is None else argv)])),
                    "checkpoint": str(args.checkpoint), "games": args.games, "hidden": list(hidden),
                    "encoder_version": encoder, "keep": args.keep,
                    "epochs": args.epochs, "seed": args.seed, "train_plays": len(plays),
                    "equity_mae": error, "seconds": time.perf_counter() - started})
    snapshot.save_npz(args.out, info=figures)
    print(f"pruning net {list(hidden)}: mean equity error {error:.4f}; the network's choice among its best k: "
          + ", ".join(f"{k}: {100 * r:.1f}%" for k, r in figures["recall"].items())
          + "; millipoints of the network's equity lost a reply: "
          + ", ".join(f"{k}: {m:.2f}" for k, m in figures["millipoints_lost"].items()))
    if args.json:
        write_json(args.json, figures, indent=2)


if __name__ == "__main__":
    main()
