"""Network evaluations per second: bgai's shipped bot on batches of 1, 32 and 4,096 positions, beside GNU
Backgammon's ``calibrate``, one thread each, in one run.

    python benchmarks/eval_speed.py [--seconds 2] [--network FILE] [--json benchmarks/results/eval_speed.json]

* **bgai**: ``Bot.probabilities(boards)`` of the shipped bot (``load_bot()``; ``--network``: another network's,
  ``load_bot(FILE)``): the encoder, the network and the
  bookkeeping around it (finished games and bear-offs left to the rules and the database, impossible outcomes set
  to zero), numpy's BLAS on one thread. The boards are the afterstates of positions from the bot's own 0-ply games
  (bear-offs and finished games left out), each position's plays in the order the move generator lists them, as a
  move or a lookahead evaluates them; "shuffled" is the same boards in random order (no two neighbours alike: the
  first layer then cannot start from the row before, ``bgai.eval.kernels.first_layer``). A batch of 1 is one board a
  call.
* **gnubg**: ``calibrate`` of Debian's gnubg with ``set threads 1``: static evaluations per second of its own
  positions (its 0-ply evaluation with its inputs), the figure it prints last after ``--gnubg-seconds``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("BGAI_THREADS", "1")

import numpy as np  # noqa: E402

from bgai.core.files import provenance, write_json  # noqa: E402
from bgai.core.game import play_games  # noqa: E402
from bgai.core.movegen import afterstates  # noqa: E402
from bgai.core.phase import CONTACT, CRASHED, RACE, classify  # noqa: E402
from bgai.core.progress import ticking
from bgai.eval import bearoff  # noqa: E402
from bgai.eval.bot import load_bot  # noqa: E402

GNUBG = "/usr/games/gnubg"
BATCHES = (1, 32, 4096)


def game_afterstates(bot, n: int, seed: int) -> np.ndarray:
    """At least ``n`` live afterstates (contact or race) of positions from the bot's 0-ply games, each position's
    plays together, in the move generator's order."""

    class Recorder:
        name = "recorder"

        def __init__(self) -> None:
            self.boards, self.rng = [], np.random.default_rng(seed)

        def choose(self, boards, after, owner, rng, dice=None):
            self.boards.append(boards)
            return bot.choose(boards, after, owner, rng, dice)

    recorder = Recorder()
    play_games(recorder, recorder, 200, seed=seed)
    boards = np.concatenate(recorder.boards)
    moves = afterstates(boards, recorder.rng.integers(1, 7, size=(len(boards), 2)))
    after = moves.after[np.isin(classify(moves.after), (CONTACT, CRASHED, RACE))]
    if len(after) < n:
        raise SystemExit(f"only {len(after)} afterstates; ask for fewer")
    return after[:n]


def evaluations_per_s(bot, boards: np.ndarray, batch: int, seconds: float) -> float:
    """Boards evaluated per second by ``bot.probabilities`` in passes of ``batch``, over about ``seconds``."""
    passes = [boards[i:i + batch] for i in range(0, len(boards) - batch + 1, batch)]
    bot.probabilities(passes[0])  # compiled kernels loaded
    done, i, started = 0, 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        bot.probabilities(passes[i])
        done += batch
        i = (i + 1) % len(passes)
    return done / (time.perf_counter() - started)


def gnubg_calibrate(seconds: float) -> float:
    """The last figure gnubg's ``calibrate`` prints, on one thread, after it has run for ``seconds`` (it goes on
    until stopped, printing its running figure, and prints only to a terminal: so it runs under ``script`` and
    ``timeout``)."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("set threads 1\ncalibrate\n")
    try:
        out = subprocess.run(["script", "-qc", f"timeout {seconds} {GNUBG} -t -q < {f.name}", "/dev/null"],
                             capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    figures = re.findall(r"Calibrating: (\d+) static evaluations/second", out)
    if not figures:
        raise RuntimeError(f"no calibration figure in gnubg's output:\n{out[-1000:]}")
    return float(figures[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="timing per row")
    parser.add_argument("--gnubg-seconds", type=float, default=10.0, help="how long gnubg's calibrate runs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--network", help="a network file to time instead of the shipped one (load_bot(FILE))")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    if args.network and not os.path.isfile(args.network):
        parser.error(f"--network: no such file: {args.network}")
    bot = load_bot(args.network)
    bearoff.database()
    boards = game_afterstates(bot, 3 * 4096, args.seed)
    shuffled = boards[np.random.default_rng(args.seed).permutation(len(boards))]
    rows = []
    for batch in BATCHES:
        for order, data in (("as generated", boards), ("shuffled", shuffled)):
            rate = evaluations_per_s(bot, data, batch, args.seconds)
            rows.append({"engine": "bgai", "batch": batch, "order": order, "evaluations_per_s": rate})
            print(f"bgai   batch {batch:>5}  {order:<12}  {rate:>10,.0f} evaluations/s", flush=True)
    gnubg = gnubg_calibrate(args.gnubg_seconds)
    print(f"gnubg  calibrate (1 thread)         {gnubg:>10,.0f} evaluations/s")
    for row in rows:
        row["vs_gnubg"] = row["evaluations_per_s"] / gnubg
    print("bgai / gnubg: " + ", ".join(f"batch {r['batch']} {r['order']} {r['vs_gnubg']:.2f}x" for r in rows))
    if args.json:
        figures = {**provenance(), "network": bot.model.describe(), "network_file": args.network or "shipped",
                   "gnubg_calibrate_per_s": gnubg, "results": rows}
        write_json(args.json, figures, indent=2)


if __name__ == "__main__":
    with ticking("eval_speed"):  # the time spent, on standard error, while the parts run
        main()
