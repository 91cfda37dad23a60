"""The trainer's speed, one tree against another: the same small run of each training method, timed in this process,
alternating (after a warm-up of each) with the same script on an older tree of the package (a git worktree named by
``--vs-tree``), so that a reorganisation of the code can show it changed nothing (issue 62: the trainer split by
method).

    python benchmarks/train_speed.py --vs-tree OLD_TREE [--runs 5] [--json benchmarks/results/train_speed.json]
    python benchmarks/train_speed.py --once            # one measurement of this tree, as JSON on standard output

Each measurement, in a fresh process (one thread): a TD stage (``--games`` self-play games of a 128-unit network,
learning included), a lookahead generation (1-ply targets of ``--positions`` positions, then its training), and a
rollouts stage (one epoch on ``checkpoints/labels/split-scale``'s labelled positions), each timed alone; and
``load_bot()``'s choices on 200 seeded positions and rolls, whose digest must be the same in both trees. The script
imports each tree's trainer by the name it has there (``bgai.train.run`` and ``bgai.train.config`` since the split,
``bgai.train.training`` before). Prints, and with ``--json`` writes, each part's median seconds in both trees and
their ratio, with every run's figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STAGES = {
    "td": '[[stage]]\nname = "td"\nmethod = "td"\ngames = {games}\nparallel_games = 512\nbench_every = 1000000\n',
    "lookahead": '[[stage]]\nname = "ply1"\nmethod = "lookahead"\ngenerations = 1\ngames = 300\n'
                 'positions = {positions}\npart = {positions}\nepochs = 2\nplies = 1\nbench_every = 1000000\n',
    "rollouts": '[[stage]]\nname = "rollouts"\nmethod = "rollouts"\nlabels = "checkpoints/labels/split-scale"\n'
                'epochs = 1\nbench_every = 1000000\n',
}
RUN = ('run_name = "speed"\nseed = 3\nencoder = 2\nhidden = "128"\nworkers = 1\nthreads = 1\nbench_games = 0\n'
       'final_bench_games = 0\ncheckpoint_minutes = 1000000.0\n')


def trainer():
    """This tree's ``load_config`` and ``run``."""
    try:
        from bgai.train.config import load_config
        from bgai.train.run import run
    except ImportError:  # the tree before the split
        from bgai.train.training import load_config, run  # type: ignore[no-redef]
    return load_config, run


def moves_digest(n: int = 200) -> str:
    """A digest of ``load_bot()``'s 0-ply choices on ``n`` seeded positions (a walk of random plays from the start,
    a new game whenever one ends), each with a seeded roll."""
    import numpy as np

    from bgai.core.game import game_over
    from bgai.core.movegen import afterstates
    from bgai.eval.bot import load_bot
    from bgai.formats.position import START_BOARD

    rng = np.random.default_rng(11)
    boards, board = [], START_BOARD.copy()
    while len(boards) < n:
        moves = afterstates(board[None], rng.integers(1, 7, size=(1, 2)))
        after = moves.after[rng.integers(len(moves.after))]
        board = START_BOARD.copy() if game_over(after[None])[0] else after
        boards.append(board)
    chosen = load_bot().choose_many(np.stack(boards), rng.integers(1, 7, size=(n, 2)))
    return hashlib.sha256(np.ascontiguousarray(chosen).tobytes()).hexdigest()[:16]


def once(games: int, positions: int) -> dict:
    """One measurement of this tree: seconds of each stage's run, and the digest of load_bot()'s choices."""
    load_config, run = trainer()
    out = {}
    for name, stage in STAGES.items():
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "run.toml"
            path.write_text(RUN + "\n" + stage.format(games=games, positions=positions))
            started = time.perf_counter()
            run(load_config(path), Path(folder) / "run", progress=False)
            out[name] = time.perf_counter() - started
    out["moves_digest"] = moves_digest()
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vs-tree", help="the older tree (a git worktree) to alternate with")
    parser.add_argument("--once", action="store_true", help="one measurement of this tree, as a JSON line")
    parser.add_argument("--runs", type=int, default=5, help="measurements of each tree (default 5)")
    parser.add_argument("--games", type=int, default=2048, help="TD games of each measurement (default 2048)")
    parser.add_argument("--positions", type=int, default=4000, help="lookahead positions (default 4000)")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)
    if args.once or not args.vs_tree:
        print(json.dumps(once(args.games, args.positions)))
        return
    env = {**os.environ, "BGAI_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    here = str(Path(__file__).resolve().parents[1])
    trees = {"new": here, "old": str(Path(args.vs_tree).resolve())}
    runs: dict[str, list[dict]] = {"new": [], "old": []}
    for run in range(args.runs + 1):  # the first a warm-up: numba compiles each tree's kernels into its own cache
        for name, tree in trees.items():  # alternating: new, old, new, old, ...
            done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--once", "--games", str(args.games),
                                   "--positions", str(args.positions)], cwd=here, env={**env, "PYTHONPATH": tree},
                                  capture_output=True, text=True, check=True)
            if run:
                runs[name].append(json.loads(done.stdout.splitlines()[-1]))
                print(name, runs[name][-1], flush=True)
    digests = {name: sorted({r["moves_digest"] for r in rs}) for name, rs in runs.items()}
    medians = {name: {part: statistics.median(r[part] for r in rs) for part in STAGES} for name, rs in runs.items()}
    result = {"what": __doc__.splitlines()[0], "vs_tree": args.vs_tree, "runs": args.runs, "games": args.games,
              "positions": args.positions, "median_seconds": medians,
              "ratio_new_over_old": {part: medians["new"][part] / medians["old"][part] for part in STAGES},
              "moves_digests": digests, "same_moves": digests["new"] == digests["old"] and len(digests["new"]) == 1,
              "every_run": runs}
    print(json.dumps({k: result[k] for k in ("median_seconds", "ratio_new_over_old", "same_moves")}, indent=1))
    if args.json:
        from bgai.core.files import provenance, write_json

        write_json(args.json, {**provenance(), **result})


if __name__ == "__main__":
    main()
