"""The TD learner's time a round, by the way Adam steps: torch's fused Adam (what ``bgai.train.learner.Learner``
uses on the CPU) against torch's default one, side by side, on the rounds of a growth run.

One round of a TD stage: ``--games`` self-play games of ``--checkpoint``'s network (grown to each of ``--sizes``,
the same function, so the same games), then one pass of ``Learner.fit`` over their positions, batches of 512 as in
training/configs/deep.toml. The fit is timed for each way of stepping and each learner precision in turn, alternating
(after a warm-up of each), ``--runs`` times, one thread. The two ways' weights after the same fits are compared
too: the same update, rounded differently, and Adam scales each weight's step to about the learning rate however
small its gradient, so where a gradient is next to nothing (a grown network's silent units) the roundings' signs
show, a step's size at most each time.

    python benchmarks/learner_bench.py [--checkpoint checkpoints/deep/generations/w512.pt]
                                       [--sizes 512,512,256,256] [--runs 7] [--json FILE]

Prints each median and the ratio fused / default, and with ``--json`` writes them with the command, date, commit and
machine.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time

import numpy as np

from bgai.core.files import provenance, write_json

WAYS = ("default", "fused")


def learner(model, precision: str, way: str):
    """A TD stage's learner of ``model`` (its Adam fused on the CPU), or the same with torch's default Adam."""
    import torch

    from bgai.train.learner import Learner

    made = Learner(model, 5e-5, 512, 1, precision=precision)
    if way == "default":
        made.optimizer, made.fused = torch.optim.Adam(model.parameters(), lr=5e-5), False
    return made


def round_times(checkpoint: str, hidden: tuple[int, ...], games: int, runs: int, precisions: list[str]) -> dict:
    """Seconds of each learner's fit of one round's positions (``runs`` each, alternating), and the largest weight
    difference between the ways after the same fits."""
    import torch

    from bgai.eval.checkpoint import load_checkpoint, model_from_checkpoint
    from bgai.eval.network import ModelSnapshot
    from bgai.train.selfplay import SelfPlayWorker

    torch.set_num_threads(1)
    start = model_from_checkpoint(load_checkpoint(checkpoint))
    if start.hidden != hidden:
        start = start.grown(hidden, seed=0)
    experience = SelfPlayWorker(ModelSnapshot.of(start), 0.0, seed=1).play(0, games, np.random.default_rng(1))
    out: dict = {"positions": len(experience.boards)}
    for precision in precisions:
        learners = {way: learner(copy.deepcopy(start), precision, way) for way in WAYS}
        seconds: dict[str, list[float]] = {way: [] for way in WAYS}
        for run in range(runs + 1):  # the first of each a warm-up
            for way, each in learners.items():
                began = time.perf_counter()
                each.fit(experience.boards, experience.targets, np.random.default_rng(run))
                if run:
                    seconds[way].append(time.perf_counter() - began)
        weights = [each.model.state_dict() for each in learners.values()]
        median = {way: statistics.median(seconds[way]) for way in WAYS}
        out[precision] = {"median_seconds": median, "every_run": seconds,
                          "ratio_fused_over_default": median["fused"] / median["default"],
                          "largest_weight_difference": max(float((a - b).abs().max())
                                                           for a, b in zip(*(w.values() for w in weights)))}
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="checkpoints/deep/generations/w512.pt",
                        help="the network, grown to each size (no larger than any of them)")
    parser.add_argument("--sizes", nargs="+", default=["512,512,256,256"], help="hidden layers, comma separated")
    parser.add_argument("--games", type=int, default=512, help="self-play games of the round (default 512)")
    parser.add_argument("--runs", type=int, default=7, help="timed fits of each learner (default 7)")
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16"], choices=["fp32", "bf16"])
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)
    by_size = {}
    for size in args.sizes:
        hidden = tuple(int(h) for h in size.split(","))
        by_size[size] = figures = round_times(args.checkpoint, hidden, args.games, args.runs, args.precisions)
        for precision in args.precisions:
            each = figures[precision]
            print(f"{size:<18} {precision}: a round's fit ({figures['positions']:,} positions) "
                  + ", ".join(f"{way} {each['median_seconds'][way]:.3f} s" for way in WAYS)
                  + f"; fused / default {each['ratio_fused_over_default']:.2f}"
                  + f" (weights within {each['largest_weight_difference']:.1e})", flush=True)
    if args.json:
        write_json(args.json, {**provenance(), "checkpoint": args.checkpoint, "games": args.games,
                               "runs": args.runs, "threads": 1, "by_size": by_size}, indent=2)


if __name__ == "__main__":
    main()
