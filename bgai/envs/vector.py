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
replies (one call of a player for each block of games) and the next rolls are a few batched calls of bgai's move
generator and encoder, whatever ``num_envs``.

The games are stepped in ``blocks`` blocks (2 by default, none smaller than ``MIN_BLOCK`` games: one block for
fewer than 512 games), each with its own random generator, drawn from the environment's at ``reset``: a seed
replays the same games for the same ``num_envs`` and ``blocks``, whatever the machine's cores. With a built-in
opponent (``random``, ``heuristic``, ``pubeval``) or a ``Bot`` (``bgai``: threads may share a bot) the blocks step
on parallel threads (``bgai.core.movegen.threads()``: ``BGAI_THREADS``, else up to two cores; give as many blocks as the
cores you give it); another player or a policy of the caller's is called for one block at a time, never from two
threads at once (unless it has a true ``threadsafe`` attribute). A step is all or nothing: where an opponent
raises in one block (a policy's action outside its mask, say), every game is left as it was before the step.

Games restart as they end, in the same step (``autoreset_mode="same_step"``, Gymnasium's ``AutoresetMode.SAME_STEP``,
the default): the observation of a game that just ended is already its next game's first, the reward and
``terminations`` are the ended game's, and ``info["final_obs"]`` (an object array, ``None`` for the games that go
on) holds the ended game's last observation and ``info["final_info"]["board"]`` its final position from the agent's
side (``_board`` marks the games that ended). With ``autoreset_mode="next_step"`` (``AutoresetMode.NEXT_STEP``,
what Gymnasium's observation wrappers ask for) the ended game's last observation is returned as it is (an empty
mask), and the step after starts its next game: that step ignores the game's action and gives it reward 0, not
terminated.

``action_masks()``: every game's mask as booleans (sb3-contrib's ``MaskablePPO``); ``observation="box"``: the
observations without their masks (``bgai.envs.spaces``).

``info``: ``board`` and ``dice`` of every game (with Gymnasium's ``_board`` and ``_dice`` masks), and
``illegal_action``: the games that ended by an action outside the mask. With ``afterstates=True`` also every game's
legal plays, flat (``bgai.envs.spaces.batch_info``): ``afterstates`` (the encodings an afterstate-value agent
scores), ``afterstate_boards``, ``afterstate_env`` and ``plays`` (each game's plays in notation). A policy opponent
is called with a batch: ``policy(observations, info) -> actions``, with that flat info.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from bgai.core.errors import GameStateError
from bgai.core.movegen import one_thread, threads
from bgai.envs.games import Games, Plays
from bgai.envs.opponents import make_opponent
from bgai.envs.spaces import (
    MAX_PLAYS,
    action_space,
    batch_info,
    check_action,
    check_observation,
    observation_size,
    observation_space,
)
from bgai.envs.steps import STEP_ACTIONS, STEP_UNITS, StepGames
from bgai.eval.encoding import ENCODER_VERSION

#: The fewest games of a block (``BackgammonVectorEnv``'s ``blocks``): smaller blocks cost more in the interpreter
#: than a thread of their own saves.
MIN_BLOCK = 256


class BackgammonVectorEnv(VectorEnv):
    """``num_envs`` games of an agent against ``opponent``, stepped together (see the module docstring; the
    arguments are ``bgai.envs.backgammon.BackgammonEnv``'s). ``afterstates``: every step's info also holds every
    game's legal plays and their afterstates' encodings. ``blocks``: the blocks of games stepped on threads of
    their own (the module docstring; one for fewer than ``2 * MIN_BLOCK`` games).

    ``reset(options={"positions": boards})`` starts every game from a given position (``num_envs`` of them, each a
    ``Position``, a Position ID or XGID, or 26 integers), the agent on roll with a fresh roll; the games that follow
    start from the opening."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int, opponent: Any = "random", *, plies: int = 0, encoder: int = ENCODER_VERSION,
                 observation: str = "dict", action: str = "plays", afterstates: bool = False, blocks: int = 2,
                 autoreset_mode: str | AutoresetMode = AutoresetMode.SAME_STEP, **unused: Any) -> None:
        if not (isinstance(num_envs, int) and num_envs >= 1):
            raise ValueError(f"num_envs must be a whole number >= 1, got {num_envs!r}")
        modes = {AutoresetMode.SAME_STEP: AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP: AutoresetMode.NEXT_STEP,
                 "same_step": AutoresetMode.SAME_STEP, "next_step": AutoresetMode.NEXT_STEP}
        if autoreset_mode not in modes:
            raise ValueError(f"autoreset_mode must be 'same_step' or 'next_step' (or Gymnasium's AutoresetMode), got "
                             f"{autoreset_mode!r}")
        self.metadata = {**self.metadata, "autoreset_mode": modes[autoreset_mode]}
        self.observation_kind = check_observation(observation)
        self.action = check_action(action)
        if not (isinstance(blocks, int) and not isinstance(blocks, bool) and blocks >= 1):
            raise ValueError(f"blocks must be a whole number >= 1, got {blocks!r}")
        unused.pop("max_episode_steps", None)  # (gymnasium.make_vec passes the registered one along)
        unused.pop("render_mode", None)
        if unused:
            raise TypeError(f"unexpected arguments {', '.join(unused)}")
        self.num_envs = num_envs
        self.encoder = encoder
        self.afterstates = afterstates
        self.single_observation_space = observation_space(encoder, observation, action)
        self.single_action_space = action_space(action)
        steps = self.action == "steps"
        self._width = observation_size(encoder) + (STEP_UNITS if steps else 0)
        self._actions = STEP_ACTIONS if steps else MAX_PLAYS
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.opponent = make_opponent(opponent, plies=plies, encoder=encoder, batched=True)
        edges = np.linspace(0, num_envs, max(1, min(blocks, num_envs // MIN_BLOCK)) + 1).round().astype(int)
        self._bounds = [(int(lo), int(hi)) for lo, hi in zip(edges[:-1], edges[1:])]
        self._shards: list[Any] = [StepGames(hi - lo, self.opponent) if self.action == "steps" else
                                   Games(hi - lo, self.opponent, steps=afterstates) for lo, hi in self._bounds]
        self._rngs: list[np.random.Generator] = []
        self._pool: ThreadPoolExecutor | None = None

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if isinstance(seed, list):  # (one a game, as Gymnasium's own vectorizers take them): all of them seed the
            # one generator the games share
            if len(seed) != self.num_envs:
                raise ValueError(f"a list of seeds holds one for each of the {self.num_envs} games, got {len(seed)}")
            given = [int(s) for s in seed if s is not None]
            seed = int(np.random.SeedSequence(given).generate_state(1)[0]) if given else None
        super().reset(seed=seed)
        positions = (options or {}).get("positions")
        if positions is not None and len(positions) != self.num_envs:
            raise ValueError(f"options['positions'] must hold {self.num_envs} positions, got {len(positions)}")
        # One block plays from the environment's generator itself (the single environment's games, for the same
        # seed); several draw one each from it.
        self._rngs = [self.np_random] if len(self._shards) == 1 else self.np_random.spawn(len(self._shards))
        for (lo, hi), games, rng in zip(self._bounds, self._shards, self._rngs):
            games.start(np.arange(hi - lo), rng, None if positions is None else positions[lo:hi])
        info = self._info()
        info["illegal_action"], info["_illegal_action"] = np.zeros(self.num_envs, dtype=bool), np.ones(
            self.num_envs, dtype=bool)
        return self._kind(self._observation()), info

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.num_envs} integers, got {a.dtype} of shape {a.shape}")
        if not self._rngs:
            raise GameStateError("the games were never started: call reset before step")
        observation = self._blank()

        next_step = self.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP

        def step(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
            (lo, hi), games = self._bounds[k], self._shards[k]
            with one_thread():
                skip = None
                if next_step and games.over.any():  # the games that ended last step start their next ones
                    skip = games.over.copy()
                    games.start(np.flatnonzero(skip), self._rngs[k])
                result = games.step(a[lo:hi], self._rngs[k], restart=not next_step, skip=skip)
                self._observe(k, observation)
            return result

        # All or nothing: a policy that raises in one block (an illegal action, say) leaves every game as it was.
        saved = [(games.snapshot(), rng.bit_generator.state) for games, rng in zip(self._shards, self._rngs)]
        try:
            parts = self._map(step)
        except BaseException:
            for games, rng, (state, dice) in zip(self._shards, self._rngs, saved):
                games.restore(state)
                rng.bit_generator.state = dice
            raise
        points, finished, illegal, final = (np.concatenate(column) for column in zip(*parts))
        info = self._info()
        info["illegal_action"], info["_illegal_action"] = illegal, np.ones(self.num_envs, dtype=bool)
        ended = np.flatnonzero(finished)
        if len(ended) and not next_step:
            last = self._shards[0].final_observation(final[ended], self.encoder)
            final_obs = np.full(self.num_envs, None, dtype=object)
            for k, i in enumerate(ended):
                final_obs[i] = self._kind({key: value[k] for key, value in last.items()})
            boards = np.zeros((self.num_envs, 26), dtype=np.int8)
            boards[ended] = final[ended]
            info["final_obs"], info["_final_obs"] = final_obs, finished.copy()
            info["final_info"] = {"board": boards, "_board": finished.copy()}
            info["_final_info"] = finished.copy()
        return (self._kind(observation), points.astype(np.float64), finished, np.zeros(self.num_envs, dtype=bool),
                info)

    def action_masks(self) -> np.ndarray:
        """Every game's legal actions now, as booleans (``num_envs``, ``MAX_PLAYS``): the observations' masks."""
        if not self._rngs:
            return np.zeros((self.num_envs, self._actions), dtype=bool)
        return np.concatenate([games.masks() for games in self._shards])

    def _kind(self, observation: dict[str, np.ndarray]) -> Any:
        return observation["observation"] if self.observation_kind == "box" else observation

    def _map(self, work: Any) -> list[Any]:
        """``work(k)`` of every block, in order: on parallel threads where the opponent allows it."""
        blocks = len(self._shards)
        workers = min(threads(), blocks) if self.opponent.threadsafe else 1
        if workers == 1:
            return [work(k) for k in range(blocks)]
        # this thread steps the first block while the pool's threads (one fewer than the workers) step the rest
        if self._pool is None or self._pool._max_workers != workers - 1:
            self._pool = ThreadPoolExecutor(workers - 1, thread_name_prefix="bgai-envs")
        rest = [self._pool.submit(work, k) for k in range(1, blocks)]
        return [work(0)] + [future.result() for future in rest]

    def _blank(self) -> dict[str, np.ndarray]:
        """New observation arrays of every game, to be filled block by block (the mask's zeros set)."""
        return {"observation": np.empty((self.num_envs, self._width), dtype=np.float32),
                "action_mask": np.zeros((self.num_envs, self._actions), dtype=np.int8)}

    def _observe(self, k: int, observation: dict[str, np.ndarray]) -> None:
        """Block ``k``'s rows of ``observation`` (``_blank``'s arrays), written from its games."""
        (lo, hi), games = self._bounds[k], self._shards[k]
        games.observation(self.encoder, out={key: value[lo:hi] for key, value in observation.items()})

    def _observation(self) -> dict[str, np.ndarray]:
        observation = self._blank()
        for k in range(len(self._shards)):
            self._observe(k, observation)
        return observation

    def _info(self) -> dict[str, Any]:
        shards = self._shards
        if len(shards) == 1:
            games = shards[0]
            return batch_info(games.boards, games.dice, games.plays, self.encoder, self.afterstates)
        boards = np.concatenate([games.boards for games in shards])
        dice = np.concatenate([games.dice for games in shards])
        plays = None
        if self.afterstates:  # every block's plays as one batch's: rows and games numbered across the blocks
            rows = np.cumsum([0] + [len(games.plays.after) for games in shards])
            plays = Plays(np.concatenate([games.plays.after for games in shards]),
                          np.concatenate([games.plays.owner + lo for (lo, _), games in zip(self._bounds, shards)]),
                          np.concatenate([games.plays.starts + rows[k] for k, games in enumerate(shards)]),
                          np.concatenate([games.plays.counts for games in shards]),
                          np.concatenate([games.plays.steps for games in shards]))
        return batch_info(boards, dice, plays, self.encoder, self.afterstates)
