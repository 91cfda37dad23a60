"""Training libraries' loops on bgai's environments beside the same loops on OpenSpiel's backgammon, side by side in one
run on this CPU (docs/envs.md, "Speed"):

    python benchmarks/rl_loops.py [--envs 8] [--steps 8192] [--json benchmarks/results/rl_loops.json]

1. **sb3-contrib's MaskablePPO** (``MlpPolicy``, its defaults but ``n_steps``: ``--steps`` over ``--envs`` games,
   one update, one torch thread): environment steps a second of ``model.learn(--steps)``, the collection and one
   update, on
   - bgai's SB3 VecEnv over its batched games (``bgai.envs.sb3.BackgammonVecEnv``, box observations), with whole
     plays as actions and with checker steps (``action="steps"``: 156 actions, a step a checker);
   - SB3's ``DummyVecEnv`` of bgai's single environment (``gymnasium.make("bgai/Backgammon-v0",
     observation="box")``, as ``make_vec_env`` builds it);
   - SB3's ``DummyVecEnv`` of OpenSpiel's backgammon (``pyspiel``, its C++ game), through ``OpenSpielBackgammon``
     below: the same agent against a uniformly random opponent, OpenSpiel's observation tensor (200 inputs) and
     its mask over its 1,352 distinct actions.
2. **Gymnasium's own vectorizer** (``SyncVectorEnv`` of ``--envs`` single environments, random legal actions):
   steps a second on bgai's single environment and on OpenSpiel's.

OpenSpiel is not one of bgai's dependencies: ``pip install open_spiel`` to measure it (skipped, and said so in the
results, where it cannot be imported). pgx's backgammon runs on JAX and has no Gymnasium or SB3 interface of its own
to put in these loops; ``benchmarks/env_bench.py`` has its raw speed.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import gymnasium
import numpy as np
import torch

import bgai.envs  # noqa: F401 (registers bgai/Backgammon-v0)
from bgai.core.files import provenance, write_json


class OpenSpielBackgammon(gymnasium.Env):
    """OpenSpiel's backgammon as one agent's Gymnasium environment: the agent is player 0 against a uniformly
    random player 1, chance nodes sampled, OpenSpiel's observation tensor and a mask of its legal actions
    (``action_masks()``); reward the agent's return at the end."""

    def __init__(self) -> None:
        import pyspiel

        self.game = pyspiel.load_game("backgammon")
        self.n_actions = self.game.num_distinct_actions()
        size = self.game.observation_tensor_shape()[0]
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (size,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(self.n_actions)
        self.state = None

    def _advance(self) -> None:
        """Chance nodes and the opponent's turns, until the agent is to act or the game is over."""
        state, rng = self.state, self.np_random
        while not state.is_terminal() and (state.is_chance_node() or state.current_player() != 0):
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(outcomes[int(rng.choice(len(outcomes), p=probs))])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.integers(len(legal)))])

    def _observe(self) -> np.ndarray:
        return np.asarray(self.state.observation_tensor(0), dtype=np.float32)

    def action_masks(self) -> np.ndarray:
        mask = np.zeros(self.n_actions, dtype=bool)
        if not self.state.is_terminal():
            mask[self.state.legal_actions()] = True
        return mask

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.state = self.game.new_initial_state()
        self._advance()
        return self._observe(), {}

    def step(self, action):
        self.state.apply_action(int(action))
        self._advance()
        over = self.state.is_terminal()
        return self._observe(), float(self.state.returns()[0]) if over else 0.0, over, False, {}


def _openspiel_ok() -> str | None:
    try:
        import pyspiel  # noqa: F401
    except ImportError as error:
        return f"open_spiel could not be imported ({error}); pip install open_spiel"
    return None


def ppo_steps(make_vec, steps: int, envs: int) -> dict:
    """Environment steps a second of MaskablePPO's ``learn(steps)`` on ``make_vec()``: its collection and one
    update."""
    from sb3_contrib import MaskablePPO

    venv = make_vec()
    model = MaskablePPO("MlpPolicy", venv, n_steps=max(1, steps // envs), batch_size=64, seed=0)
    model.learn(envs * 4)  # (warm: the network, the compiled kernels)
    started = time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    seconds = time.perf_counter() - started
    return {"steps_per_s": steps / seconds, "seconds": seconds}


def gym_random_steps(make_env, steps: int, envs: int) -> dict:
    """Steps a second of Gymnasium's ``SyncVectorEnv`` of ``envs`` environments, random legal actions."""
    vec = gymnasium.vector.SyncVectorEnv([make_env for _ in range(envs)])
    vec.reset(seed=0)
    rng = np.random.default_rng(0)
    done = 0
    started = time.perf_counter()
    while done < steps:
        masks = np.stack(vec.call("action_masks"))
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])  # (0: a reset step)
        vec.step(actions)
        done += envs
    seconds = time.perf_counter() - started
    vec.close()
    return {"steps_per_s": done / seconds, "seconds": seconds}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", type=int, default=8, help="games at once (default 8)")
    parser.add_argument("--steps", type=int, default=8192, help="environment steps a loop (default 8192)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    from stable_baselines3.common.vec_env import DummyVecEnv

    from bgai.envs.sb3 import BackgammonVecEnv

    def bgai_single():
        return gymnasium.make("bgai/Backgammon-v0", observation="box")

    missing = _openspiel_ok()
    results: dict = {**provenance(), "envs": args.envs, "steps": args.steps, "load_at_start": os.getloadavg()[0]}
    parts = {
        "ppo_bgai_sb3_vec_env": lambda: ppo_steps(
            lambda: BackgammonVecEnv(args.envs, "random", observation="box"), args.steps, args.envs),
        "ppo_bgai_sb3_vec_env_checker_steps": lambda: ppo_steps(
            lambda: BackgammonVecEnv(args.envs, "random", observation="box", action="steps"), args.steps, args.envs),
        "ppo_bgai_dummy_vec_env": lambda: ppo_steps(
            lambda: DummyVecEnv([bgai_single for _ in range(args.envs)]), args.steps, args.envs),
        "ppo_openspiel_dummy_vec_env": (lambda: {"skipped": missing}) if missing else lambda: ppo_steps(
            lambda: DummyVecEnv([OpenSpielBackgammon for _ in range(args.envs)]), args.steps, args.envs),
        "gym_sync_bgai": lambda: gym_random_steps(bgai_single, args.steps, args.envs),
        "gym_sync_openspiel": (lambda: {"skipped": missing}) if missing else lambda: gym_random_steps(
            OpenSpielBackgammon, args.steps, args.envs),
    }
    for name, measure in parts.items():
        results[name] = measure()
        print(f"{name}: {json.dumps(results[name])}", flush=True)
    results["load_at_end"] = os.getloadavg()[0]
    if args.json:
        write_json(args.json, results)
    return results


if __name__ == "__main__":
    main()
