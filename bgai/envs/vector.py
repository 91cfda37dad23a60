"""Many games of ``bgai/Backgammon-v0`` at once, on bgai's batched engine, as a Gymnasium vector environment.

    >>> import gymnasium
    >>> import bgai.envs
    >>> envs = gymnasium.make_vec("bgai/Backgammon-v0", num_envs=64, opponent="random")
    >>> obs, info = envs.reset(seed=0)
    >>> obs["observation"].shape, obs["action_mask"].shape
    ((64, 243), (64, 2399))
    >>> actions = envs.action_space.sample(mask=tuple(obs["action_mask"]))
    >>> obs, rewards, terminations, truncations, info = envs.step(actions)

``gymnasium.make_vec`` gives this class for the registered id (it is the id's ``vector_entry_point``). Each of the
``num_envs`` games is the single environment's game (``bgai.envs.backgammon``: the same spaces, actions, rewards,
and an action outside the mask resigns), but a step plays every game at once: the agent's plays, the opponent's
replies (one call of a player for all the games) and the next rolls are a few batched calls of bgai's move
generator and encoder, whatever ``num_envs``.

Games restart as they end, in the same step (``AutoresetMode.SAME_STEP``): the observation of a game that just ended
is already its next game's first, the reward and ``terminations`` are the ended game's, and ``info["final_obs"]``
(an object array, ``None`` for the games that go on) holds the ended game's last observation and
``info["final_info"]["board"]`` its final position from the agent's side (``_board`` marks the games that ended).

``info``: ``board`` and ``dice`` of every game (with Gymnasium's ``_board`` and ``_dice`` masks), and
``illegal_action``: the games that ended by an action outside the mask. With ``afterstates=True`` also every game's
legal plays, flat (``bgai.envs.spaces.batch_info``): ``afterstates`` (the encodings an afterstate-value agent
scores), ``afterstate_boards``, ``afterstate_env`` and ``plays`` (each game's plays in notation). A policy opponent
is called with a batch: ``policy(observations, info) -> actions``, with that flat info.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from bgai.encoding import ENCODER_VERSION
from bgai.envs.games import Games
from bgai.envs.opponents import make_opponent
from bgai.envs.spaces import action_space, batch_info, observation_space, observe


class BackgammonVectorEnv(VectorEnv):
    """``num_envs`` games of an agent against ``opponent``, stepped together (see the module docstring; the
    arguments are ``bgai.envs.backgammon.BackgammonEnv``'s). ``afterstates``: every step's info also holds every
    game's legal plays and their afterstates' encodings.

    ``reset(options={"positions": boards})`` starts every game from a given position (``num_envs`` of them, each a
    ``Position``, a Position ID or XGID, or 26 integers), the agent on roll with a fresh roll; the games that follow
    start from the opening."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int, opponent: Any = "random", *, plies: int = 0, encoder: int = ENCODER_VERSION,
                 afterstates: bool = False, **unused: Any) -> None:
        if not (isinstance(num_envs, int) and num_envs >= 1):
            raise ValueError(f"num_envs must be a whole number >= 1, got {num_envs!r}")
        unused.pop("max_episode_steps", None)  # (gymnasium.make_vec passes the registered one along)
        unused.pop("render_mode", None)
        if unused:
            raise TypeError(f"unexpected arguments {', '.join(unused)}")
        self.num_envs = num_envs
        self.encoder = encoder
        self.afterstates = afterstates
        self.single_observation_space = observation_space(encoder)
        self.single_action_space = action_space()
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.opponent = make_opponent(opponent, plies=plies, encoder=encoder, batched=True)
        self._games = Games(num_envs, self.opponent, steps=afterstates)

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if isinstance(seed, list):
            raise ValueError("the games share one random generator: give reset one seed, not a list")
        super().reset(seed=seed)
        positions = (options or {}).get("positions")
        if positions is not None and len(positions) != self.num_envs:
            raise ValueError(f"options['positions'] must hold {self.num_envs} positions, got {len(positions)}")
        self._games.start(np.arange(self.num_envs), self.np_random, positions)
        info = self._info()
        info["illegal_action"], info["_illegal_action"] = np.zeros(self.num_envs, dtype=bool), np.ones(
            self.num_envs, dtype=bool)
        return self._observation(), info

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        points, finished, illegal, final = self._games.step(actions, self.np_random, restart=True)
        info = self._info()
        info["illegal_action"], info["_illegal_action"] = illegal, np.ones(self.num_envs, dtype=bool)
        ended = np.flatnonzero(finished)
        if len(ended):
            last = observe(final[ended], np.zeros((len(ended), 2), dtype=np.int8), np.zeros(len(ended)), self.encoder)
            final_obs = np.full(self.num_envs, None, dtype=object)
            for k, i in enumerate(ended):
                final_obs[i] = {key: value[k] for key, value in last.items()}
            boards = np.zeros((self.num_envs, 26), dtype=np.int8)
            boards[ended] = final[ended]
            info["final_obs"], info["_final_obs"] = final_obs, finished.copy()
            info["final_info"] = {"board": boards, "_board": finished.copy()}
            info["_final_info"] = finished.copy()
        return (self._observation(), points.astype(np.float64), finished,
                np.zeros(self.num_envs, dtype=bool), info)

    def _observation(self) -> dict[str, np.ndarray]:
        games = self._games
        return observe(games.boards, games.dice, games.plays.counts, self.encoder)

    def _info(self) -> dict[str, Any]:
        games = self._games
        return batch_info(games.boards, games.dice, games.plays, self.encoder, self.afterstates)
