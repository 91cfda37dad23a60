"""Self-play throughput side by side, in one run: bgai's TD(λ) training (self-play and learning) against a GNU
Backgammon self-play loop (``gnubg_nn.best_move`` at 0-ply for both sides, C, one call per move, no learning).

bgai is timed twice: from scratch with the default config (its first games, played by a near-random network,
run long) and continuing the shipped run from its checkpoint (a trained network: games of normal length, like
gnubg's). Then the speed table by network size: the TD trainer's games per second for each size of a growth run
(``--sizes``), each the same trained network grown to that size (``--grow-from``; growth keeps its function, so every
size plays the same games and only the network's cost differs), its learner in float32 and in bfloat16 (the run
setting ``learner_precision``), one after the other.

    python benchmarks/selfplay_bench.py [--games 8192] [--gnubg-games 400] [--sizes 80 256,256 ...]
                                        [--learner-precisions fp32 bf16] [--json FILE]

Prints games per second of each and the ratios, and a JSON line; ``--json`` also writes them, with the command, date,
commit and machine.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import numpy as np

from bgai.core.files import provenance, write_json
from bgai.core.progress import ticking


def gnubg_selfplay(games: int, seed: int) -> float:
    """Games per second of gnubg_nn playing itself at 0-ply."""
    from bgai.formats.position import START_BOARD
    from bgai.players.gnubg import require_gnubg, to_gnubg

    gnubg = require_gnubg()
    rng = np.random.default_rng(seed)
    start = to_gnubg(START_BOARD)
    began = time.perf_counter()
    for _ in range(games):
        board = start
        d1, d2 = rng.choice(6, size=2, replace=False) + 1  # opening roll: no doubles
        while True:
            _, key = gnubg.best_move(board, int(d1), int(d2), n=0, b=1)
            # The key is the position after the play, already seen from the opponent: row 0 is the mover.
            board = [list(row) for row in gnubg.board_from_position_key(key)]
            if sum(board[0]) == 0:
                break
            d1, d2 = rng.integers(1, 7, size=2)
    return games / (time.perf_counter() - began)


# Benchmarks off: none during the stage, and the one a stage ends with and the run's last one on a single dice
# sequence (neither is in the games per second, which count the stage's rounds; they only cost the wait).
#: The network sizes of a growth run (training/configs/deep.toml), smallest first.
SIZES = ["80", "150", "150,150", "256,256", "256,256,256", "512,512,256", "512,512,256,256"]
QUIET = {"bench_every": 10**9, "bench_games": 1, "final_bench_games": 1, "checkpoint_minutes": 10**6}


def bgai_training(games: int, config_path: str | None = None, checkpoint: str | None = None,
                  workers: int | None = None, hidden: tuple[int, ...] | None = None,
                  learner_precision: str = "fp32") -> float:
    """Games per second of bgai's TD trainer (self-play plus learning), benchmarks switched off; from scratch, or
    starting from the weights of ``checkpoint`` (grown to ``hidden`` if given: ``EquityModel.grown``, the same
    network, so the same games); on the config's workers, or ``workers`` (1: in this process); the learner in
    ``learner_precision``."""
    from bgai.eval.checkpoint import load_checkpoint
    from bgai.train.config import load_config
    from bgai.train.run import run

    overrides = {"games": games, "parallel_games": 512, "learner_precision": learner_precision, **QUIET,
                 **({} if workers is None else {"workers": workers})}
    if checkpoint is not None:
        state = load_checkpoint(checkpoint)
        overrides.update(init=checkpoint, hidden=",".join(map(str, hidden or state["hidden"])),
                         encoder=state["encoder_version"], nets=",".join(state.get("phases", ["all"])))
    with tempfile.TemporaryDirectory() as run_dir:
        summary = run(load_config(config_path, overrides), run_dir, progress=False)
    return summary["games"] / (3600 * summary["hours"])


def by_size(games: int, checkpoint: str, sizes: list[str], workers: int | None,
            precisions: list[str]) -> dict[str, dict[str, float]]:
    """TD training games per second for each network size in ``sizes`` (comma-separated hidden layers), every one
    ``checkpoint``'s network grown to that size, so that each plays the same games and only the network's cost
    differs: by learner precision, then size, each size's precisions timed one after the other."""
    out: dict[str, dict[str, float]] = {precision: {} for precision in precisions}
    for size in sizes:
        hidden = tuple(int(h) for h in size.split(","))
        for precision in precisions:
            out[precision][size] = bgai_training(games, checkpoint=checkpoint, workers=workers, hidden=hidden,
                                                 learner_precision=precision)
        print(f"  {size:<20} " + ", ".join(f"{out[p][size]:,.1f} games/s ({p} learner)" for p in precisions),
              flush=True)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=8192, help="bgai training games, each way")
    parser.add_argument("--gnubg-games", type=int, default=400, help="gnubg self-play games")
    parser.add_argument("--config", default=None, help="TD run config of the run from scratch (default: the "
                                                        "default TD stage, 512 games at once)")
    parser.add_argument("--checkpoint", default="checkpoints/td-v1/checkpoint.pt", help="network to start from")
    parser.add_argument("--workers", type=int, help="bgai's worker processes (default: the config's, one per core; "
                                                    "1: all in this process)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sizes", nargs="*", default=SIZES,
                        help="network sizes of the speed table, each its hidden layers comma separated (default: a "
                             "growth run's, training/configs/deep.toml; none: no table)")
    parser.add_argument("--grow-from", default="checkpoints/deep/generations/td80.pt",
                        help="the network grown to each size: one no larger than any of them")
    parser.add_argument("--learner-precisions", nargs="+", default=["fp32", "bf16"], choices=["fp32", "bf16"],
                        help="the learner's precisions each size is timed with (the run setting learner_precision)")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)
    by_precision = by_size(args.games, args.grow_from, args.sizes, args.workers, args.learner_precisions) \
        if args.sizes else {}
    sizes = by_precision.get("fp32", {})
    figures = {
        "bgai_train_from_scratch_games_per_s": bgai_training(args.games, config_path=args.config,
                                                             workers=args.workers),
        "bgai_train_continuing_shipped_games_per_s": bgai_training(args.games, checkpoint=args.checkpoint,
                                                                   workers=args.workers),
        "gnubg_selfplay_games_per_s": gnubg_selfplay(args.gnubg_games, args.seed),
    }
    for way in ("from_scratch", "continuing_shipped"):
        ours = figures[f"bgai_train_{way}_games_per_s"]
        figures[f"ratio_{way}_vs_gnubg"] = ours / figures["gnubg_selfplay_games_per_s"]
    for key, value in figures.items():
        print(f"{key:<28} {value:,.3f}")
    print(json.dumps(figures))
    if args.json:
        from bgai.eval.network import bf16_supported  # (here: the workers re-import this script without torch)

        result = {**provenance(), "games": args.games, "gnubg_games": args.gnubg_games, "workers": args.workers,
                  **figures, "grown_from": args.grow_from if by_precision else None, "games_per_s_by_size": sizes,
                  "games_per_s_by_size_learner_bf16": by_precision.get("bf16", {}),
                  "bf16_supported": bf16_supported()}
        write_json(args.json, result, indent=2)


if __name__ == "__main__":
    with ticking("selfplay_bench"):  # the time spent, on standard error, while the parts run
        main()
