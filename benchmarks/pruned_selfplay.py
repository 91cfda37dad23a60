"""Self-play through a pruning net (a TD stage's ``pruner``, ``bgai.train.selfplay``): what it costs the model's own
choices and what it saves, side by side in one run.

* Choices: on the positions of the model's own self-play, each with a fresh roll, how often the pruned choice (the
  model's best among the pruning net's best K plays) misses the model's own best play, and the model's equity that
  costs a move (millipoints, by the model's own values), for each K.
* Speed: the TD trainer's games a second (self-play and learning, TD(0), rounds of 512 games, on the workers),
  without the pruning net and with it at each K, in turn (A B C A B C ...), the best of the repeats.

    python benchmarks/pruned_selfplay.py --checkpoint CHECKPOINT --pruner NPZ [--keeps 5 8] [--games 4096]
                                         [--positions-games 200] [--repeats 2] [--json FILE]

The pruning net is one ``training/pruner.py`` trained on the model's own values.
"""

from __future__ import annotations

import argparse
import json
import tempfile

import numpy as np

from bgai.core.files import provenance, write_json


def trainer_speed(games: int, checkpoint: str, workers: int | None, settings: dict) -> float:
    """Games a second of the TD trainer (self-play and learning, TD(0), rounds of 512 games, benchmarks off) from
    ``checkpoint``'s weights, with the stage ``settings`` given."""
    from bgai.eval.checkpoint import load_checkpoint
    from bgai.train.config import load_config
    from bgai.train.run import run

    saved = load_checkpoint(checkpoint)
    overrides = {"games": games, "parallel_games": 512, "lam": 0.0, "init": checkpoint,
                 "hidden": ",".join(map(str, saved["hidden"])), "encoder": saved["encoder_version"],
                 "nets": ",".join(saved.get("phases", ["all"])), "bench_every": 10**9, "bench_games": 1,
                 "final_bench_games": 1, "checkpoint_minutes": 10**6,
                 **({} if workers is None else {"workers": workers}), **settings}
    with tempfile.TemporaryDirectory() as run_dir:
        summary = run(load_config(None, overrides), run_dir, progress=False)
    return summary["games"] / (3600 * summary["hours"])


def choices(checkpoint: str, pruner_path: str, keeps: list[int], games: int, seed: int) -> dict:
    """The pruned choices against the model's own, on the positions of ``games`` games of its self-play."""
    from bgai.core.movegen import afterstates
    from bgai.eval import kernels
    from bgai.eval.bot import Bot, load_pruner
    from bgai.eval.checkpoint import load_checkpoint, model_from_checkpoint
    from bgai.eval.network import equity, flip
    from bgai.eval.weights import ModelSnapshot, one_blas_thread
    from bgai.train.selfplay import SelfPlayWorker

    snapshot = ModelSnapshot.of(model_from_checkpoint(load_checkpoint(checkpoint)))
    pruner, _ = load_pruner(pruner_path)
    rng = np.random.default_rng(seed)
    with one_blas_thread():
        boards = SelfPlayWorker(snapshot, 0.0, seed=seed).trajectories(0, games, rng).boards
        moves = afterstates(boards, rng.integers(1, 7, size=(len(boards), 2)), validate=False)
        n = len(boards)
        probs = Bot(snapshot).probabilities(moves.after)
        values = equity(flip(probs.astype(np.float64)))
        best = kernels.best_plays(probs, moves.owner, n)
        plays = np.bincount(moves.owner, minlength=n)
        out = {"positions": n, "plays_per_move": float(plays.mean()), "by_keep": {}}
        for keep in keeps:
            pick, _ = Bot(snapshot, pruner=pruner, prune=keep).replies(moves.after, moves.owner, n)
            out["by_keep"][str(keep)] = {
                "missed": float((pick != best).mean()),
                "mp_lost_per_move": float(1000 * (values[best] - values[pick]).mean()),
                "plays_judged_share": float(np.minimum(plays, keep).sum() / plays.sum()),
            }
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default="checkpoints/deep/generations/d512x4-c.pt")
    parser.add_argument("--pruner", required=True, help="the pruning net (.npz of training/pruner.py)")
    parser.add_argument("--keeps", type=int, nargs="+", default=[5, 8], help="plays a move the model judges")
    parser.add_argument("--games", type=int, default=4096, help="TD training games of each timing")
    parser.add_argument("--positions-games", type=int, default=200, help="self-play games of the choices' positions")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--workers", type=int, help="the trainer's worker processes (default one per core)")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args(argv)

    result = {"checkpoint": args.checkpoint, "pruner": args.pruner,
              "choices": choices(args.checkpoint, args.pruner, args.keeps, args.positions_games, args.seed)}
    print(json.dumps(result["choices"]), flush=True)
    arms = {"unpruned": {}, **{f"prune {k}": {"pruner": args.pruner, "prune": k} for k in args.keeps}}
    rates: dict[str, list[float]] = {arm: [] for arm in arms}
    for _ in range(args.repeats):
        for arm, settings in arms.items():
            rates[arm].append(trainer_speed(args.games, args.checkpoint, args.workers, settings))
            print(f"  {arm:<10} {rates[arm][-1]:,.1f} games/s", flush=True)
    result["games_per_s"] = {arm: max(r) for arm, r in rates.items()}
    result["runs"] = rates
    result["speedup"] = {arm: result["games_per_s"][arm] / result["games_per_s"]["unpruned"] for arm in arms}
    print(json.dumps({"games_per_s": result["games_per_s"], "speedup": result["speedup"]}))
    if args.json:
        write_json(args.json, {**provenance(), "games": args.games, "workers": args.workers, **result}, indent=2)


if __name__ == "__main__":
    main()
