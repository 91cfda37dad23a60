"""The measurements behind bgai's tuning constants, each against the values around it, in one run (docs/figures.md,
"Tuning constants"): the code keeps the reason for a constant, this script and its results file the figures.

    python benchmarks/tuning.py [--repeats 3] [--json benchmarks/results/tuning.json]

* **Encoder chunks** (``bgai.eval.encoding._chunk_size``): boards encoded a second, ``--boards`` from random
  games (200,000), on one thread and on two, in chunks of each size.
* **Move-generation chunks** (``bgai.core.movegen.chunk_size``): positions expanded a second, a quarter of them.
* **Network passes on one thread** (``bgai.eval.bot.NET_CHUNK_ONE_THREAD``): a truncated rollout of the opening
  (216 trials of 7 plies, variance reduction, the shipped bot at 0-ply, one thread) in passes of each size.
* **Rollout chunks** (``bgai.eval.rollout.ROLLOUT_CHUNK``): seconds a position of ``rollout_batch`` (72 trials of
  7 plies) when 48 positions are rolled out in chunks of each size.
* **Reading a match file** (``bgai.formats.matchfile.mat.MAX_MATCH_FILE_BYTES``): milliseconds a play of
  ``read_match`` on the test suite's gnubg match files (it replays every play).
* **The collector's walk at exit** (``gc.freeze`` in ``bgai.frontends.cli.main``): seconds of one ``gc.collect()``
  in a fresh process once the CLI, torch and the shipped bot are loaded, as the interpreter's last collection is.

Each setting is timed ``--repeats`` times, alternating with the others, and the fastest kept. Run it on an idle
machine (the load average is recorded).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bgai.core import movegen
from bgai.core.files import provenance, write_json
from bgai.eval import bot as bot_module
from bgai.eval import encoding
from bgai.eval import rollout as rollout_module
from bgai.eval.bot import load_bot
from bgai.formats.matchfile import read_match
from bgai.formats.matchfile.record import CheckerPlay
from bgai.formats.position import Position

ROOT = Path(__file__).resolve().parents[1]
MATCHES = ROOT / "tests" / "data" / "matches"


def random_boards(n: int, seed: int = 0, plies: int = 30) -> np.ndarray:
    """``n`` boards (on-roll view) from random games: each ply every game makes a random legal play, and a board is
    kept from a random ply of each."""
    rng = np.random.default_rng(seed)
    boards = np.repeat(Position.start().board[None], n, axis=0).astype(np.int8)
    kept = boards.copy()
    when = rng.integers(0, plies, n)
    for ply in range(plies):
        dice = rng.integers(1, 7, (n, 2)).astype(np.int8)
        after, owner = movegen.afterstates(boards, dice)[:2]
        counts = np.bincount(owner, minlength=n)
        pick = np.cumsum(counts) - counts + (rng.random(n) * counts).astype(np.int64)
        over = (after[pick] < 0).sum(axis=1) == 0  # the mover has borne off (its checkers are negative there)
        boards = np.where(over[:, None], boards, after[pick])
        kept[when == ply] = boards[when == ply]
    return kept


def best_of(repeats: int, settings: dict, run) -> dict:
    """The fastest of ``repeats`` runs of ``run(setting)`` for each setting, alternating."""
    times = {name: [] for name in settings}
    for _ in range(repeats):
        for name, setting in settings.items():
            start = time.perf_counter()
            run(setting)
            times[name].append(time.perf_counter() - start)
    return {name: min(t) for name, t in times.items()}


def chunks(module, attribute: str, sizes, work, items: int, repeats: int) -> dict:
    """Items a second of ``work()`` with ``module.attribute`` (a chunk-size function) returning each size, on one
    thread and two."""
    saved = getattr(module, attribute)
    out = {}
    try:
        for threads in (1, 2):
            os.environ["BGAI_THREADS"] = str(threads)

            def run(size):
                setattr(module, attribute, lambda n, workers, size=size: size)
                work()
            best = best_of(repeats, {size: size for size in sizes}, run)
            out[f"{threads} thread{'s' * (threads > 1)}"] = {str(s): round(items / t) for s, t in best.items()}
    finally:
        setattr(module, attribute, saved)
        os.environ.pop("BGAI_THREADS", None)
    return out


def net_passes(repeats: int, trials: int) -> dict:
    bot = load_bot(plies=0)
    opening = Position.start()
    saved = bot_module.NET_CHUNK_ONE_THREAD

    def run(size):
        bot_module.NET_CHUNK_ONE_THREAD = size
        rollout_module.rollout(bot, opening, trials=trials, truncate=7)
    try:
        os.environ["BGAI_THREADS"] = "1"
        rollout_module.rollout(bot, opening, trials=36, truncate=7)  # compile and warm
        best = best_of(repeats, {size: size for size in (2048, 4096, 8192, 32768)}, run)
    finally:
        bot_module.NET_CHUNK_ONE_THREAD = saved
        os.environ.pop("BGAI_THREADS", None)
    return {str(size): round(t, 3) for size, t in best.items()}


def rollout_chunks(repeats: int, positions: int) -> dict:
    bot = load_bot(plies=0)
    boards = random_boards(positions, seed=1)
    boards = boards[(boards > 0).sum(axis=1) > 0]

    def run(size):
        rollout_module.rollout_batch(bot, boards, trials=72, truncate=7, chunk=size)
    best = best_of(repeats, {size: size for size in sorted({4, 12, positions})}, run)
    return {str(size): round(t / len(boards), 4) for size, t in best.items()}


def match_files() -> dict:
    out = {}
    for path in sorted(MATCHES.glob("gnubg-*.mat")):
        record = read_match(path)
        plays = sum(isinstance(a, CheckerPlay) for game in record.games for a in game.actions)
        start = time.perf_counter()
        read_match(path)
        out[path.name] = {"bytes": path.stat().st_size, "plays": plays,
                          "ms_a_play": round(1e3 * (time.perf_counter() - start) / max(plays, 1), 3)}
    return out


def exit_collection() -> float:
    code = ("import gc, time, torch; from bgai.frontends.cli import main; from bgai.eval.bot import load_bot; "
            "bot = load_bot(); start = time.perf_counter(); gc.collect(); print(time.perf_counter() - start)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return round(float(run.stdout.split()[-1]), 3)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each setting, alternating; the fastest kept")
    parser.add_argument("--boards", type=int, default=200_000, help="boards encoded (a quarter of them expanded)")
    parser.add_argument("--trials", type=int, default=216, help="trials of the opening's rollout (network passes)")
    parser.add_argument("--positions", type=int, default=48, help="positions of the chunked rollouts")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    boards = random_boards(args.boards)
    dice = np.random.default_rng(2).integers(1, 7, (len(boards), 2)).astype(np.int8)
    encoding.encode(boards[:10_000])  # compile and warm
    movegen.afterstates(boards[:10_000], dice[:10_000])
    figures = {**provenance(), "load_average_at_start": os.getloadavg()[0]}
    print("encoder chunks ...", flush=True)
    figures["encoder_boards_a_second"] = chunks(encoding, "_chunk_size", (2048, 4096, 8192, 16384, 65536),
                                                lambda: encoding.encode(boards), len(boards), args.repeats)
    print("move-generation chunks ...", flush=True)
    few = slice(0, max(1, args.boards // 4))
    figures["movegen_positions_a_second"] = chunks(
        movegen, "chunk_size", (512, 1024, 2048, 4096, 16384),
        lambda: movegen.afterstates(boards[few], dice[few], validate=False), few.stop, args.repeats)
    print("network passes on one thread ...", flush=True)
    figures["rollout_seconds_by_net_chunk"] = net_passes(args.repeats, args.trials)
    print("rollout chunks ...", flush=True)
    figures["rollout_seconds_a_position_by_chunk"] = rollout_chunks(args.repeats, args.positions)
    figures["match_file_read"] = match_files()
    figures["exit_collection_seconds"] = exit_collection()
    figures["load_average_at_end"] = os.getloadavg()[0]
    print(json.dumps(figures, indent=2))
    if args.json:
        write_json(args.json, figures, indent=2)


if __name__ == "__main__":
    main()
