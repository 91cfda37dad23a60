"""Issue 40's side-by-side speed check: the same work in the new layout or the old flat one (imports by whichever
the bgai on the path has). Run it here, and with PYTHONPATH pointing at a worktree of the old commit, alternating:

    BGAI_THREADS=1 OMP_NUM_THREADS=1 farm-bench -n 5 \\
        --vs "sh -c 'PYTHONPATH=OLD_TREE python benchmarks/layout/speed.py'" -- python benchmarks/layout/speed.py

Prints milliseconds: encoding 400 positions, 200 0-ply moves, 10 1-ply moves, a 2-position rollout.
"""

import json
import time

import numpy as np

try:
    from bgai.core.movegen import afterstates
    from bgai.eval import encoding
    from bgai.eval.bot import load_bot
    from bgai.eval.rollout import rollout_values
except ImportError:  # the flat layout before issue 40
    from bgai import encoding
    from bgai.bot import load_bot
    from bgai.movegen import afterstates
    from bgai.rollout import rollout_values
from bgai import Position

rng = np.random.default_rng(7)
bot0, bot1 = load_bot(), load_bot(plies=1)
boards = []
b = Position.start().board.copy()
for _ in range(400):  # positions of the bot's own play
    moves = afterstates(b[None], rng.integers(1, 7, size=(1, 2)))
    b = moves.after[bot0.choose(b[None], moves.after, moves.owner)[0]].copy()
    if (b > 0).sum() == 0 or (b < 0).sum() == 0 or abs(b).sum() < 10:
        b = Position.start().board.copy()
    boards.append(b.copy())
boards = np.array(boards, dtype=np.int8)
dice = rng.integers(1, 7, size=(len(boards), 2))
out = {}


def timed(name, fn, reps):
    fn()  # warm-up
    started = time.perf_counter()
    for _ in range(reps):
        fn()
    out[name] = (time.perf_counter() - started) / reps


def moves(bot, count):
    for k in range(count):
        found = afterstates(boards[k:k + 1], dice[k:k + 1])
        bot.choose(boards[k:k + 1], found.after, found.owner)


timed("encode 400", lambda: encoding.encode(boards), 50)
timed("0-ply 200 moves", lambda: moves(bot0, 200), 3)
timed("1-ply 10 moves", lambda: moves(bot1, 10), 2)
timed("rollout 2 positions x 36 trials", lambda: rollout_values(bot0, boards[50:52], trials=36, truncate=7, seed=1), 1)
print(json.dumps({k: round(v * 1000, 2) for k, v in out.items()}))
