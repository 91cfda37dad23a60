"""sb3-contrib's MaskablePPO, with its documented defaults, learns backgammon from bgai's environment against the
random player, and plays on bgai's bench as it goes (docs/envs.md, "A learned agent").

    python examples/maskable_ppo.py [--steps 1000000] [--envs 8] [--every 100000] [--games 500] [--seed 0]
                                    [--action steps|plays] [--against random pubeval] [--load MODEL.zip]
                                    [--n-steps 2048] [--json FILE] [--save MODEL.zip]

The model is ``MaskablePPO("MlpPolicy", envs)`` as sb3-contrib's docs write it (its defaults: two hidden layers of
64, 2,048 steps an environment between updates, 10 epochs of minibatches of 64, learning rate 3e-4), on ``--envs``
games at once (``bgai.envs.sb3.BackgammonVecEnv``, observations without the mask: ``observation="box"``) against the
``random`` opponent, on one torch thread (``--action``: the action space, ``plays``, the index of a whole legal
play, or ``steps``, a checker step: ``bgai.envs.steps``; steps by default, which learns far faster). Every
``--every`` steps, and at the end, the greedy policy (``bgai.envs.policy_agent``: the most probable legal action)
plays ``--games`` duplicate pairs against each of ``--against`` (default ``random``) on
``bgai.play.agents.bench_agent`` (the dice of ``--seed``, the seats swapped): the learning curve, written to
``--json`` after every point with the command that made it.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from bgai.core.files import provenance, write_atomically
from bgai.envs import policy_agent
from bgai.envs.sb3 import BackgammonVecEnv
from bgai.play.agents import bench_agent


def bench(model, games: int, seed: int, action: str, against: list[str]) -> dict:
    """The greedy policy's duplicate games against each opponent of ``against``: the first one's figures at the top
    level, the others' under ``also``."""
    agent = policy_agent(model, observation="box", action=action, name="maskable-ppo")
    out: dict = {}
    for result in bench_agent(agent, against, games=games, seed=seed, timeout=None).results:
        summary = result.summary()
        figures = {"ppg": summary["ppg"], "ppg_se": summary["ppg_se"], "win_rate": summary["win_rate"],
                   "games": summary["games"], "forfeits": summary["forfeits"]}
        if not out:
            out.update(figures)
        else:
            out.setdefault("also", {})[result.opponent] = figures
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1_000_000, help="environment steps in all (default 1M)")
    parser.add_argument("--envs", type=int, default=8, help="games stepped at once (default 8)")
    parser.add_argument("--every", type=int, default=100_000, help="steps between bench points (default 100k)")
    parser.add_argument("--games", type=int, default=500, help="duplicate pairs of games a bench point (500)")
    parser.add_argument("--seed", type=int, default=0, help="the model's, the games' and the bench's seed")
    parser.add_argument("--n-steps", type=int, default=2048, help="steps an environment between updates "
                        "(sb3's default 2048; the test's tiny run gives fewer)")
    parser.add_argument("--action", choices=("plays", "steps"), default="steps",
                        help="the action space (default steps, which learns far faster: docs/envs.md)")
    parser.add_argument("--against", nargs="+", default=["random"], metavar="OPPONENT",
                        help="the bench's opponents (default random; the first is the curve's)")
    parser.add_argument("--load", type=Path, help="go on from this saved model (with --steps at most its own: "
                                                  "bench it only)")
    parser.add_argument("--json", type=Path, help="write the learning curve here")
    parser.add_argument("--save", type=Path, help="save the model here at the end (SB3's .zip)")
    args = parser.parse_args(argv)
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    envs = BackgammonVecEnv(args.envs, "random", observation="box", action=args.action)
    envs.seed(args.seed)
    if args.load:
        model = MaskablePPO.load(args.load, env=envs)
    else:
        model = MaskablePPO("MlpPolicy", envs, n_steps=args.n_steps, seed=args.seed)
    record = {**provenance(), "algorithm": "sb3-contrib MaskablePPO, MlpPolicy, defaults", "opponent": "random",
              "against": args.against, "loaded": str(args.load) if args.load else None,
              "action": args.action, "envs": args.envs, "n_steps": args.n_steps, "curve": []}
    start = time.perf_counter()

    def point() -> None:
        figures = {"steps": int(model.num_timesteps), "seconds": round(time.perf_counter() - start, 1),
                   **bench(model, args.games, args.seed, args.action, args.against)}
        record["curve"].append(figures)
        print(json.dumps(figures), flush=True)
        if args.json:
            text = json.dumps(record, indent=1) + "\n"
            write_atomically(args.json, lambda handle: handle.write(text.encode()))

    point()
    while model.num_timesteps < args.steps:
        model.learn(min(args.every, args.steps - model.num_timesteps), reset_num_timesteps=False)
        point()
    if args.save:
        model.save(args.save)
    return record


if __name__ == "__main__":
    main()
