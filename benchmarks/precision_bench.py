"""bfloat16 against float32 network passes, side by side on one thread: the speed of 0-ply evaluation and of 1-ply
lookahead targets, how far bfloat16 moves the targets, and what it does to 0-ply play (duplicate games, a bf16 bot
against the same network in float32).

    python benchmarks/precision_bench.py [--checkpoint FILE] [--positions 3000] [--games 2000]
                                         [--json benchmarks/results/precision.json]

The positions come from the network's own self-play (``--self-play`` games); 0-ply evaluation is timed on
``--boards`` of them (repeated). bfloat16 pays only on a CPU with bfloat16 instructions
(``bgai.eval.network.bf16_supported``); elsewhere torch emulates it and it is slower.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import torch

from bgai.coach.strength import duel
from bgai.core.files import provenance, write_json
from bgai.core.progress import ticking
from bgai.eval.bot import Bot, load_bot
from bgai.eval.network import bf16_supported, equity
from bgai.train.lookahead import lookahead_targets
from bgai.train.selfplay import sample_positions


def timed(fn, *args, **kwargs):
    fn(*[a[:50] if isinstance(a, np.ndarray) else a for a in args], **kwargs)  # warm up on a few positions
    started = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - started


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", help="default: the shipped network")
    parser.add_argument("--positions", type=int, default=3000, help="positions of the 1-ply target measurement")
    parser.add_argument("--games", type=int, default=2000, help="dice sequences of the duel (x2 games; 0: none)")
    parser.add_argument("--self-play", type=int, default=200, help="self-play games the positions come from")
    parser.add_argument("--boards", type=int, default=32768, help="boards of the 0-ply evaluation timing")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)

    exact = load_bot(args.checkpoint)
    model = exact.model
    boards = sample_positions(model, args.self_play, 0, seed=args.seed, epsilon=0.0,
                              rng=np.random.default_rng(args.seed), keep=args.positions)
    many = np.concatenate([boards] * max(1, args.boards // len(boards)))[:args.boards]
    fast = Bot(model, bf16=True)
    p32, t32 = timed(exact.probabilities, many)
    p16, t16 = timed(fast.probabilities, many)
    y32, s32 = timed(lookahead_targets, model, boards, 1)
    y16, s16 = timed(lookahead_targets, model, boards, 1, bf16=True)
    moved0 = np.abs(equity(p32) - equity(p16))
    moved1 = np.abs(equity(y32) - equity(y16))
    out = {
        "checkpoint": args.checkpoint or "shipped", "model": model.describe(), "cpu": platform.processor(),
        "bf16_supported": bf16_supported(),
        "eval_0ply_per_s": {"fp32": len(many) / t32, "bf16": len(many) / t16, "ratio": t32 / t16},
        "targets_1ply_per_s": {"fp32": len(boards) / s32, "bf16": len(boards) / s16, "ratio": s32 / s16},
        "equity_moved_0ply": {"mean": float(moved0.mean()), "p99": float(np.percentile(moved0, 99)),
                              "max": float(moved0.max())},
        "equity_moved_1ply_targets": {"mean": float(moved1.mean()), "p99": float(np.percentile(moved1, 99)),
                                      "max": float(moved1.max())},
    }
    print(f"{model.describe()}, one thread; bfloat16 instructions: {'yes' if out['bf16_supported'] else 'no'}")
    for key, label in (("eval_0ply_per_s", "0-ply evaluations/s"), ("targets_1ply_per_s", "1-ply targets/s")):
        r = out[key]
        print(f"  {label:<20} fp32 {r['fp32']:>10,.0f}   bf16 {r['bf16']:>10,.0f}   bf16/fp32 {r['ratio']:.2f}x")
    for key, label in (("equity_moved_0ply", "0-ply values"), ("equity_moved_1ply_targets", "1-ply targets")):
        r = out[key]
        print(f"  {label:<20} moved by bf16: mean {r['mean']:.4f}, p99 {r['p99']:.4f}, max {r['max']:.4f} equity")
    if args.games:
        fast.name = "bgai bf16"
        out["duel_bf16_v_fp32"] = duel(fast, exact, args.games, args.seed)
        d = out["duel_bf16_v_fp32"]
        print(f"  0-ply play, bf16 v fp32: {d['ppg']:+.3f} ± {d['ppg_se']:.3f} ({d['games']:,} duplicate games)")
    if args.json:
        figures = {**provenance(), **out}
        write_json(args.json, figures, indent=2)


if __name__ == "__main__":
    with ticking("precision_bench"):  # the time spent, on standard error, while the parts run
        main()
