"""Backgammon for other people's agents: Gymnasium and PettingZoo environments on bgai's engine.

``import bgai.envs`` registers ``bgai/Backgammon-v0`` with Gymnasium:

* ``gymnasium.make("bgai/Backgammon-v0", opponent="pubeval")``: one agent against a built-in opponent
  (``bgai.envs.backgammon.BackgammonEnv``; the opponents are ``bgai.envs.opponents``'s);
* ``gymnasium.make_vec("bgai/Backgammon-v0", num_envs=1024)``: that many games stepped at once on the batched
  engine (``bgai.envs.vector.BackgammonVectorEnv``);
* ``bgai.envs.backgammon_v0.env()``: both seats as agents, a PettingZoo AEC environment.

The observation, the action order and the action mask are the same in all three (``bgai.envs.spaces``). None of
them imports torch: the opponents and the encoder run on numpy and numba.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

import gymnasium

from bgai.envs.backgammon import BackgammonEnv
from bgai.envs.policies import policy_agent
from bgai.envs.spaces import (
    DICE_UNITS,
    MAX_PLAYS,
    PlayList,
    action_space,
    observation_size,
    observation_space,
)
from bgai.envs.vector import BackgammonVectorEnv

#: The Gymnasium id registered on import.
ENV_ID = "bgai/Backgammon-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(ENV_ID, entry_point="bgai.envs.backgammon:BackgammonEnv",
                       vector_entry_point="bgai.envs.vector:BackgammonVectorEnv")

#: The PettingZoo id registered on import, where PettingZoo is installed (``pettingzoo.make("aec", AEC_ID)``).
AEC_ID = "bgai/backgammon-v0"

if importlib.util.find_spec("pettingzoo") is not None:
    import pettingzoo

    if hasattr(pettingzoo, "register") and AEC_ID not in pettingzoo.aec_registry:  # (PettingZoo 1.27 and later)
        pettingzoo.register("aec", AEC_ID, entry_point="bgai.envs.backgammon_v0:env")


def __getattr__(name: str) -> ModuleType:
    # The PettingZoo environment imports pettingzoo: only when asked for.
    if name == "backgammon_v0":
        return importlib.import_module("bgai.envs.backgammon_v0")
    raise AttributeError(f"module 'bgai.envs' has no attribute {name!r}")


__all__ = [
    "DICE_UNITS",
    "AEC_ID",
    "ENV_ID",
    "MAX_PLAYS",
    "BackgammonEnv",
    "BackgammonVectorEnv",
    "PlayList",
    "action_space",
    "observation_size",
    "observation_space",
    "policy_agent",
]
