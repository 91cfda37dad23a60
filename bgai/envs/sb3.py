"""Stable-Baselines3's ``VecEnv`` over bgai's batched games: ``num_envs`` games of ``bgai/Backgammon-v0`` stepped
at once by ``bgai.envs.vector.BackgammonVectorEnv``, for SB3's and sb3-contrib's algorithms (which take their own
``VecEnv`` type, not Gymnasium's vector environments). It needs the ``rl`` extra (``pip install bgai[rl]``).

    >>> from sb3_contrib import MaskablePPO
    >>> from stable_baselines3.common.vec_env import VecMonitor
    >>> from bgai.envs.sb3 import BackgammonVecEnv
    >>> envs = VecMonitor(BackgammonVecEnv(64, opponent="random"))
    >>> model = MaskablePPO("MultiInputPolicy", envs, n_steps=32, seed=0)
    >>> model = model.learn(64 * 32)

It is SB3's ``VecEnv`` as ``DummyVecEnv`` is one: ``reset()`` returns the observations alone (and ``reset_infos``),
``step`` the observations, rewards, dones and a list of infos, a game that ends restarting in the same step with its
last observation in ``info["terminal_observation"]``; ``seed(n)`` seeds the next reset. ``action_masks`` is one of
its ``env_method``\\ s, as sb3-contrib's ``MaskablePPO`` asks for the masks (``get_action_masks``). The arguments
after ``num_envs`` are the vector environment's (``opponent``, ``plies``, ``encoder``, ``observation``: ``"dict"``
for a ``MultiInputPolicy`` or ``"box"`` for an ``MlpPolicy``, ``blocks``); ``render_mode="rgb_array"`` draws every
game (``bgai.envs.render``). Wrap it in SB3's ``VecMonitor`` for the episode returns in SB3's logs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bgai.core.errors import BgaiError

try:
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as error:  # pragma: no cover (the rl extra is installed wherever the tests run)
    raise BgaiError("bgai.envs.sb3 needs Stable-Baselines3: pip install 'bgai[rl]'") from error

from bgai.envs.render import board_image
from bgai.envs.vector import BackgammonVectorEnv


class BackgammonVecEnv(VecEnv):
    """``num_envs`` games against ``opponent`` as one SB3 ``VecEnv`` (see the module docstring)."""

    def __init__(self, num_envs: int, opponent: Any = "random", *, render_mode: str | None = None,
                 **kwargs: Any) -> None:
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        if "autoreset_mode" in kwargs or "afterstates" in kwargs:
            raise TypeError("SB3's VecEnv restarts games in the same step and keeps to fixed-shape infos: "
                            "autoreset_mode and afterstates are not its to set")
        self.env = BackgammonVectorEnv(num_envs, opponent, **kwargs)
        self.render_mode = render_mode
        self._actions: np.ndarray | None = None
        self._masks: np.ndarray | None = None  # this step's masks, once asked for
        super().__init__(num_envs, self.env.single_observation_space, self.env.single_action_space)

    # SB3's VecEnv ------------------------------------------------------------------------------------------------

    def reset(self) -> Any:
        seeds = [s for s in self._seeds if s is not None]
        obs, _ = self.env.reset(seed=seeds[0] if seeds else None,
                                options=self._options[0] if self._options[0] else None)
        self._masks = _masks_of(obs)
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict]]:
        if self._actions is None:
            raise RuntimeError("step_wait without step_async")
        actions = self._actions.astype(np.int64, copy=False)
        self._actions = None
        obs, rewards, terminated, _, info = self.env.step(actions)
        self._masks = _masks_of(obs)
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        if terminated.any():
            final = info["final_obs"]
            illegal = info["illegal_action"]
            for i in np.flatnonzero(terminated):
                infos[i] = {"terminal_observation": final[i], "TimeLimit.truncated": False,
                            "illegal_action": bool(illegal[i])}
        return obs, rewards.astype(np.float32), terminated, infos

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The vector environment's attribute, once for each game of ``indices`` (the games share it)."""
        if attr_name == "render_mode":
            value = self.__dict__.get("render_mode")
        else:
            value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        rows = list(self._get_indices(indices))
        if len(rows) != self.num_envs:
            raise ValueError(f"the games share their attributes: set {attr_name} for all of them or none")
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
                   ) -> list[Any]:
        """``action_masks``: each game's mask (booleans, ``MAX_PLAYS``); another method of the vector environment
        is called once and its result given for each game of ``indices``."""
        rows = list(self._get_indices(indices))
        if method_name == "action_masks":  # (asked every step: computed once a step)
            if self._masks is None:
                self._masks = self.env.action_masks()
            return [self._masks[i] for i in rows]
        result = getattr(self.env, method_name)(*method_args, **method_kwargs)
        return [result for _ in rows]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        if self.render_mode != "rgb_array":
            return [None for _ in range(self.num_envs)]
        boards = np.concatenate([games.boards for games in self.env._shards])
        dice = np.concatenate([games.dice for games in self.env._shards])
        return [board_image(board, roll) for board, roll in zip(boards, dice)]

    def action_masks(self) -> np.ndarray:
        """Every game's mask at once (``num_envs``, ``MAX_PLAYS``) booleans."""
        if self._masks is None:
            self._masks = self.env.action_masks()
        return self._masks


def _masks_of(obs) -> np.ndarray | None:
    """The masks a dict observation already holds, as booleans (a view, no copy); ``None`` for a box one."""
    return obs["action_mask"].view(bool) if isinstance(obs, dict) else None
