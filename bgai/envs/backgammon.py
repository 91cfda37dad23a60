"""``bgai/Backgammon-v0``: one agent against a built-in opponent, cubeless money games, as a Gymnasium environment.

    >>> import gymnasium
    >>> import bgai.envs
    >>> env = gymnasium.make("bgai/Backgammon-v0", opponent="pubeval", afterstates=True)
    >>> obs, info = env.reset(seed=0)
    >>> obs["observation"].shape, obs["action_mask"].shape
    ((243,), (2399,))
    >>> info["dice"].tolist(), len(info["plays"]), int(obs["action_mask"].sum())
    ([6, 1], 10, 10)
    >>> obs, reward, terminated, truncated, info = env.step(info["plays"].index("13/7 8/7"))
    >>> reward, terminated
    (0.0, False)

Each episode is one game. The agent is seat 0; the opening roll decides who plays first, and where the opponent won
it, the opponent's opening play is made before the first observation. Every step the agent plays one action (see
``bgai.envs.spaces`` for the observation, the action order and the mask); then, unless the game is over, the
opponent rolls and plays, and the agent rolls. A roll with no legal play still asks for the one action, 0 (it
passes), so the agent sees every roll it makes.

Reward: 0 until the game ends, then the game's points from the agent's side: +1, +2 (gammon) or +3 (backgammon) when
it wins, -1, -2 or -3 when it loses. The game always ends (terminated); nothing truncates it.

An action outside the mask (any integer that is not one of the legal plays, negative and too large ones included)
resigns the game: reward -1, terminated, ``info["illegal_action"]`` true. A step after the game ended raises
``GameStateError``: call ``reset()``.

``info``, at every step: ``board`` (the agent's position, its side, as bgai's boards), ``dice`` and
``illegal_action``, the same shapes every step (what Gymnasium's vectorizers and Tianshou's buffers stack). With
``afterstates=True`` also ``plays`` (the legal plays in notation, action ``i`` at index ``i``), ``afterstates``
(each play's afterstate encoded, seen from the opponent, who is on roll after it: what an afterstate-value agent
scores, TD-Gammon's way) and ``afterstate_boards`` (see ``bgai.envs.spaces.play_info``). When the game ends,
``board`` is the final position and the play lists are empty.

``action_masks()`` is the mask of the observation as booleans (sb3-contrib's ``MaskablePPO`` asks for it); with
``observation="box"`` the observation is the array alone (a plain ``Box``, for an ``MlpPolicy``) and this is where
the mask is. Rendering: ``"ansi"`` (``render()`` returns the board as text), ``"human"`` (the board printed at
every step) and ``"rgb_array"`` (``bgai.envs.render.board_image``: for Gymnasium's video recorder).

``reset(options={"position": ...})`` starts from a given position instead, the agent on roll with a fresh roll: a
``Position``, a Position ID or XGID, or 26 integers.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from bgai.core.errors import GameStateError
from bgai.envs.games import Games
from bgai.envs.opponents import make_opponent
from bgai.envs.render import board_image
from bgai.envs.spaces import action_space, check_action, check_observation, observation_space, play_info
from bgai.envs.steps import StepGames
from bgai.eval.encoding import ENCODER_VERSION
from bgai.formats.position import render_board

_ONE = np.zeros(1, dtype=np.int64)


class BackgammonEnv(gym.Env[Any, np.int64]):
    """One agent (seat 0) against ``opponent`` (``bgai.envs.opponents``: ``"random"``, ``"heuristic"``,
    ``"pubeval"``, ``"bgai"`` at ``plies`` of lookahead, a player or a policy), cubeless money games. ``encoder``:
    the version of bgai's encoder the observations use (``bgai.eval.encoding``; 0 is Tesauro's inputs alone).
    ``observation``: ``"dict"`` (the observation and its mask) or ``"box"`` (the observation alone);
    ``afterstates``: the legal plays in every info; ``render_mode``: ``"ansi"``, ``"human"`` or ``"rgb_array"``. See
    the module docstring."""

    metadata: dict[str, Any] = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4}

    def __init__(self, opponent: Any = "random", *, plies: int = 0, encoder: int = ENCODER_VERSION,
                 observation: str = "dict", action: str = "plays", afterstates: bool = False,
                 render_mode: str | None = None) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got "
                             f"{render_mode!r}")
        self.observation_kind = check_observation(observation)
        self.action = check_action(action)
        self.observation_space = observation_space(encoder, observation, action)
        self.action_space = action_space(action)
        self.render_mode = render_mode
        self.encoder = encoder
        self.afterstates = bool(afterstates)
        self.opponent = make_opponent(opponent, plies=plies, encoder=encoder)
        self._games: Any = (StepGames(1, self.opponent) if self.action == "steps"
                            else Games(1, self.opponent, steps=True))
        self._illegal = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        position = (options or {}).get("position")
        self._games.start(_ONE, self.np_random, None if position is None else [position])
        self._illegal = False
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._games.over[0]:
            raise GameStateError("the game is over: call reset() to start another")
        points, finished, illegal, _ = self._games.step(np.reshape(action, 1), self.np_random)
        self._illegal = bool(illegal[0])
        if self.render_mode == "human":
            self.render()
        return self._observation(), float(points[0]), bool(finished[0]), False, self._info()

    def action_masks(self) -> np.ndarray:
        """The legal actions now, as booleans (``MAX_PLAYS``,): the observation's mask (all false once the game is
        over)."""
        return self._games.masks()[0]

    def render(self) -> Any:
        games = self._games
        if self.render_mode == "rgb_array":
            return board_image(games.boards[0], games.dice[0])
        if self.render_mode not in ("ansi", "human"):
            return None
        board = render_board(games.boards[0], players=("agent (X)", f"{self.opponent.name} (O)"))
        if games.over[0]:
            text = board + "\ngame over"
        else:
            text = board + f"\nagent to play {games.dice[0, 0]}-{games.dice[0, 1]}: {int(games.plays.counts[0])} plays"
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _observation(self) -> Any:
        games = self._games
        obs = {key: value[0] for key, value in games.observation(self.encoder).items()}
        return obs["observation"] if self.observation_kind == "box" else obs

    def _info(self) -> dict[str, Any]:
        games = self._games
        plays = games.plays
        assert plays.steps is not None  # Games(steps=True)
        rows = slice(int(plays.starts[0]), int(plays.starts[0] + plays.counts[0]))
        return play_info(games.boards[0], games.dice[0], plays.after[rows], plays.steps[rows], self.encoder,
                         self._illegal, self.afterstates)
