"""Issue 40's training check: 200 TD self-play games and one learning epoch on them, in either layout (run as
benchmarks/layout/speed.py is, alternating). Prints seconds and the positions played (the same in both)."""

import copy
import json
import time

import numpy as np

try:
    from bgai.eval.bot import load_bot
    from bgai.eval.network import EquityModel
    from bgai.train.td import Learner, SelfPlayTask, play_task
except ImportError:  # the flat layout before issue 40
    from bgai.bot import load_bot
    from bgai.td import Learner, SelfPlayTask, play_task
    EquityModel = None

bot = load_bot()
play_task(bot.model, SelfPlayTask(0, 8, 0.7, 1))  # warm-up
started = time.perf_counter()
experience = play_task(bot.model, SelfPlayTask(100, 200, 0.7, 1))
selfplay = time.perf_counter() - started
model = EquityModel.of(bot.model) if EquityModel else bot.model.model()
learner = Learner(copy.deepcopy(model), 1e-4, 256, 1)
started = time.perf_counter()
learner.update(experience, np.random.default_rng(0))
learn = time.perf_counter() - started
print(json.dumps({"selfplay 200 games s": round(selfplay, 3), "learn one epoch s": round(learn, 3),
                  "positions": len(experience.boards)}))
