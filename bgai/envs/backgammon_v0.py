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

Actions: an integer, Python's or numpy's (a 0-d array too, as ``model.predict`` returns one).

Infos: the agent on roll's info is ``bgai.envs.spaces.play_info``'s (``board``, ``dice``, ``illegal_action``; with
``afterstates=True`` also ``plays`` in notation, ``afterstates`` and ``afterstate_boards``); the other agent's is
empty until the game ends.

Rendering, from the side of the agent on roll: ``render_mode="ansi"`` (``render()`` returns the board as text),
``"human"`` (``render()`` prints it) and ``"rgb_array"`` (a picture, ``bgai.envs.render.board_image``).

``import bgai.envs`` registers it with PettingZoo too: ``pettingzoo.make("aec", "bgai/backgammon-v0")``.

**Self-play.** ``SelfPlayEnv`` is a Gymnasium environment over it for a single-agent library: the learner plays
one seat and ``opponent`` (a policy: the learner's own, to play itself) the other, the seats swapping every game,
so the learner's return is its own, losses included. (The pattern of PettingZoo's tutorial, one model acting for
whichever agent is on roll and rewarded as the agent that just acted, only ever rewards the winner: the game ends
on the winner's play.)
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from bgai.core.errors import GameStateError, IllegalMoveError
from bgai.core.game import game_over, result_points
from bgai.core.movegen import switch
from bgai.envs.games import check_start, legal_plays, no_plays, opening_rolls, roll
from bgai.envs.render import board_image
from bgai.envs.spaces import action_space, check_observation, observation_space, observe, play_info
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
    encoder the observations use; ``afterstates``: the legal plays in the infos; ``render_mode``: ``"ansi"``,
    ``"human"`` or ``"rgb_array"``. ``reset(options={"position": ..., "agent": "player_1"})`` starts from a given
    position with that agent on roll (default ``player_0``) and a fresh roll."""

    metadata: dict[str, Any] = {"name": "backgammon_v0", "render_modes": ["ansi", "human", "rgb_array"],
                                "is_parallelizable": False, "render_fps": 4}

    def __init__(self, encoder: int = ENCODER_VERSION, render_mode: str | None = None,
                 afterstates: bool = False) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got "
                             f"{render_mode!r}")
        self.encoder = encoder
        self.render_mode = render_mode
        self.afterstates = bool(afterstates)
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
        if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
            action = action.item()  # (a 0-d array: what a model's predict returns for one observation)
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

    def render(self) -> Any:
        if self.render_mode == "rgb_array":
            return board_image(self._board, self._dice)
        if self.render_mode not in ("ansi", "human"):
            return None
        agent = self._viewer
        other = AGENTS[1 - AGENTS.index(agent)]
        board = render_board(self._board, players=(f"{agent} (X)", f"{other} (O)"))
        if self._over:
            text = board + "\ngame over"
        else:
            text = board + f"\n{agent} to play {self._dice[0]}-{self._dice[1]}: {int(self._plays.counts[0])} plays"
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # -----------------------------------------------------------------------------------------------------------

    def _expand(self) -> None:
        """The legal plays of the agent on roll, and the agents' infos."""
        self._plays = legal_plays(self._board[None], self._dice[None], steps=True)
        agent = self._viewer = self.agent_selection
        other = AGENTS[1 - AGENTS.index(agent)]
        assert self._plays.steps is not None
        self.infos = {agent: play_info(self._board, self._dice, self._plays.after, self._plays.steps, self.encoder,
                                       afterstates=self.afterstates), other: {}}

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
                                       self.encoder, illegal_action=self._illegal == agent,
                                       afterstates=self.afterstates) for agent in AGENTS}


class SelfPlayEnv(gym.Env):
    """The AEC game as one agent's Gymnasium environment: the learner plays ``player_0`` in the first game,
    ``player_1`` in the next, and so on; ``opponent`` plays the other seat: a policy ``opponent(observation) ->
    action`` (the observation a dict, as the AEC env's; set the attribute to the learner's own policy once it
    exists, to play itself), or ``None``, a uniformly random legal play. The reward is the learner's: the game's
    points when it ends, won or lost, 0 before. ``observation``: ``"dict"`` or ``"box"`` (``bgai.envs.spaces``);
    ``action_masks()`` the learner's mask. An opponent's action outside its mask raises ``IllegalMoveError``; the
    learner's resigns the game, as in every bgai environment.

        from sb3_contrib import MaskablePPO
        env = SelfPlayEnv()
        model = MaskablePPO("MultiInputPolicy", env)
        env.opponent = lambda obs: model.predict(obs, action_masks=obs["action_mask"] == 1)[0]   # it plays itself
        model.learn(100_000)
    """

    metadata = {"render_modes": BackgammonAECEnv.metadata["render_modes"], "render_fps": 4}

    def __init__(self, opponent: Any = None, *, encoder: int = ENCODER_VERSION, observation: str = "dict",
                 render_mode: str | None = None) -> None:
        self.game = BackgammonAECEnv(encoder=encoder, render_mode=render_mode)
        self.render_mode = render_mode
        self.opponent = opponent
        self.observation_kind = check_observation(observation)
        self.observation_space = observation_space(encoder, observation)
        self.action_space = action_space()
        self.learner = AGENTS[1]  # (the first reset makes it player_0)
        self._started = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        if seed is not None or not self._started:
            self.game.reset(seed=int(self.np_random.integers(2 ** 31)), options=options)
        else:
            self.game.reset(options=options)
        self._started = True
        self.learner = AGENTS[1 - AGENTS.index(self.learner)]
        self._opponent_plays()
        return self._observation(), dict(self.game.infos[self.learner])

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        if self.game.terminations[self.learner]:
            raise GameStateError("the game is over: call reset() to start another")
        self.game.step(action)
        self._opponent_plays()
        over = bool(self.game.terminations[self.learner])
        reward = float(self.game.rewards[self.learner]) if over else 0.0
        return self._observation(), reward, over, False, dict(self.game.infos[self.learner])

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions now, as booleans (``MAX_PLAYS``,)."""
        return self.game.observe(self.learner)["action_mask"] == 1

    def render(self) -> Any:
        return self.game.render()

    def _observation(self) -> Any:
        obs = self.game.observe(self.learner)
        return obs["observation"] if self.observation_kind == "box" else obs

    def _opponent_plays(self) -> None:
        game = self.game
        while not game.terminations[self.learner] and game.agent_selection != self.learner:
            obs = game.observe(game.agent_selection)
            legal = int(obs["action_mask"].sum())
            if self.opponent is None:
                action = int(self.np_random.integers(max(legal, 1)))
            else:
                action = self.opponent(obs)
                chosen = np.asarray(action)
                if chosen.dtype.kind not in "iu" or chosen.size != 1 or not 0 <= int(chosen) < max(legal, 1):
                    raise IllegalMoveError(f"the opponent chose action {action!r}, but its legal plays are the "
                                           f"actions 0..{max(legal, 1) - 1}")
                action = int(chosen)
            game.step(action)
