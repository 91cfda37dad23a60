"""Backgammon for two agents, a PettingZoo AEC environment: ``bgai.envs.backgammon_v0.env()``.

    >>> from bgai.envs import backgammon_v0
    >>> env = backgammon_v0.env()
    >>> env.reset(seed=1)
    >>> points = {}
    >>> for agent in env.agent_iter():
    ...     obs, reward, terminated, truncated, info = env.last()
    ...     points[agent] = points.get(agent, 0) + reward
    ...     env.step(None if terminated else env.action_space(agent).sample(obs["action_mask"]))
    >>> points["player_0"] == -points["player_1"] and abs(points["player_0"]) in (1, 2, 3)
    True

The agents are ``player_0`` and ``player_1``; each game is one episode. The opening roll decides who plays first
(``player_0`` rolls the first die). The agent selected is the one on roll; it plays one action a turn, every turn,
even a roll with no legal play (one action, 0, which passes).

Spaces: each agent's observation and action space are the single-agent environment's (``bgai.envs.spaces``): the
position from the agent's own side and its roll, and the mask of its legal plays. The agent not on roll observes
the position from its side with no dice and an empty mask; after the game, both observe the final position so.

Rewards: when the game ends, the winner gets the game's points (1, 2 for a gammon, 3 for a backgammon) and the
loser minus them; 0 until then. An action outside the mask resigns: the agent that played it gets -1, the other +1,
and its ``info["illegal_action"]`` is true. There is no cube.

Infos: the agent on roll's info is ``bgai.envs.spaces.play_info``'s (``board``, ``dice``, ``plays`` in notation,
``afterstates`` and ``afterstate_boards``, ``illegal_action``); the other agent's is empty until the game ends.

Rendering: ``render_mode="ansi"``, the board as text from the side of the agent on roll.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from bgai.core.game import game_over, result_points
from bgai.core.movegen import switch
from bgai.envs.games import check_start, legal_plays, no_plays, opening_rolls, roll
from bgai.envs.spaces import action_space, observation_space, observe, play_info
from bgai.eval.encoding import ENCODER_VERSION
from bgai.formats.position import START_BOARD, render_board

AGENTS = ("player_0", "player_1")


def env(**kwargs: Any) -> AECEnv:
    """The environment, wrapped as PettingZoo's classic games are (it enforces the order of calls)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


def raw_env(**kwargs: Any) -> BackgammonAECEnv:
    """The environment without wrappers."""
    return BackgammonAECEnv(**kwargs)


class BackgammonAECEnv(AECEnv):
    """Two agents, one cubeless money game an episode (see the module docstring). ``encoder``: the version of bgai's
    encoder the observations use. ``reset(options={"position": ..., "agent": "player_1"})`` starts from a given
    position with that agent on roll (default ``player_0``) and a fresh roll."""

    metadata: dict[str, Any] = {"name": "backgammon_v0", "render_modes": ["ansi"], "is_parallelizable": False,
                                "render_fps": 4}

    def __init__(self, encoder: int = ENCODER_VERSION, render_mode: str | None = None) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got "
                             f"{render_mode!r}")
        self.encoder = encoder
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.observation_spaces = {agent: observation_space(encoder) for agent in AGENTS}
        self.action_spaces = {agent: action_space() for agent in AGENTS}
        self._rng: np.random.Generator | None = None
        self._board = START_BOARD.copy()  # from the side of `_viewer`: the agent on roll, after the game the winner
        self._viewer = AGENTS[0]
        self._dice = np.zeros(2, dtype=np.int8)
        self._over = True
        self._illegal = ""  # the agent that played outside its mask, if one did

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None or self._rng is None:
            self._rng, _ = seeding.np_random(seed)
        rng = self._rng
        self.agents = list(AGENTS)
        self.rewards = {agent: 0 for agent in AGENTS}
        self._cumulative_rewards = {agent: 0 for agent in AGENTS}
        self.terminations = {agent: False for agent in AGENTS}
        self.truncations = {agent: False for agent in AGENTS}
        position = (options or {}).get("position")
        if position is not None:
            self._board = check_start(position).copy()
            self.agent_selection = (options or {}).get("agent", AGENTS[0])
            if self.agent_selection not in AGENTS:
                raise ValueError(f"options['agent'] must be one of {AGENTS}, got {self.agent_selection!r}")
            self._dice = roll(rng, 1)[0]
        else:
            opening = opening_rolls(rng, 1)[0]
            self._board = START_BOARD.copy()
            self.agent_selection = AGENTS[0] if opening[0] > opening[1] else AGENTS[1]
            self._dice = np.sort(opening)[::-1].copy()
        self._over = False
        self._illegal = ""
        self._expand()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        other = AGENTS[1 - AGENTS.index(agent)]
        self._cumulative_rewards[agent] = 0
        self._clear_rewards()
        plays = self._plays
        count = int(plays.counts[0])
        if not isinstance(action, (int, np.integer)) or isinstance(action, (bool, np.bool_)):
            raise TypeError(f"an action is an integer, got {action!r}")
        if not 0 <= action < count:  # outside the mask: a resignation
            self._illegal = agent
            self._end(winner=other, loser=agent, points=1, board=switch(self._board))
        else:
            after = plays.after[int(action)]
            if game_over(after[None])[0]:
                self._end(winner=agent, loser=other, points=int(result_points(after[None])[0]), board=switch(after))
            else:
                assert self._rng is not None  # (made by reset)
                self._board = after
                self._dice = roll(self._rng, 1)[0]
                self.agent_selection = other
                self._expand()
        self._accumulate_rewards()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if agent == self._viewer and not self._over:
            obs = observe(self._board[None], self._dice[None], self._plays.counts, self.encoder)
        else:  # the agent waiting for its turn, or either agent after the game: the board from its side, no roll
            board = self._board if agent == self._viewer else switch(self._board)
            obs = observe(board[None], np.zeros((1, 2), dtype=np.int8), np.zeros(1), self.encoder)
        return {key: value[0] for key, value in obs.items()}

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        agent = self._viewer
        other = AGENTS[1 - AGENTS.index(agent)]
        board = render_board(self._board, players=(f"{agent} (X)", f"{other} (O)"))
        if self._over:
            return board + "\ngame over"
        return board + f"\n{agent} to play {self._dice[0]}-{self._dice[1]}: {int(self._plays.counts[0])} plays"

    def close(self) -> None:
        pass

    # -----------------------------------------------------------------------------------------------------------

    def _expand(self) -> None:
        """The legal plays of the agent on roll, and the agents' infos."""
        self._plays = legal_plays(self._board[None], self._dice[None], steps=True)
        agent = self._viewer = self.agent_selection
        other = AGENTS[1 - AGENTS.index(agent)]
        assert self._plays.steps is not None
        self.infos = {agent: play_info(self._board, self._dice, self._plays.after, self._plays.steps, self.encoder),
                      other: {}}

    def _end(self, winner: str, loser: str, points: int, board: np.ndarray) -> None:
        """The game is over: ``board`` is the final position from ``winner``'s side."""
        self._over = True
        self.agent_selection = self._viewer = winner
        self._board = np.array(board, dtype=np.int8)
        self._dice = np.zeros(2, dtype=np.int8)
        self._plays = no_plays(1, steps=True)
        self.rewards = {winner: points, loser: -points}
        self.terminations = {agent: True for agent in AGENTS}
        empty = (np.zeros((0, 26), dtype=np.int8), np.zeros((0, 4, 3), dtype=np.int8))
        self.infos = {agent: play_info(board if agent == winner else switch(board), self._dice, *empty,
                                       self.encoder, illegal_action=self._illegal == agent) for agent in AGENTS}
