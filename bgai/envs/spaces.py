"""What an agent in bgai's environments observes, and how it names its plays.

An observation is a dict of two arrays, as PettingZoo's classic games have it (``observation="dict"``, the default
of every environment; with ``observation="box"`` it is the ``observation`` array alone, a plain ``Box`` for a
library's ``MlpPolicy``, and the mask comes from the environment's ``action_masks()``):

``observation`` (float32, ``observation_size(encoder)``)
    The position the agent faces, seen from its side (it is on roll), as bgai's encoder writes it
    (``bgai.eval.encoding.encode``: the own half, the opp half, contact; ``n_features(encoder)`` inputs), followed by
    ``DICE_UNITS`` units for its roll: a one-hot of the larger die (6 units, die 1 first), then a one-hot of the
    smaller die (6 units). A double sets the same unit in both. A finished game, or a seat not on roll, has
    the dice units all zero. Every input lies in ``[OBSERVATION_LOW, OBSERVATION_HIGH]``: the least is the pip
    lead of a side with all fifteen checkers on the bar against none left (-3.75), the most fifteen checkers on
    the bar (the ``bar`` input, 15 / 2).
``action_mask`` (int8, ``MAX_PLAYS``)
    1 at each action that is a legal play now, 0 elsewhere: the first ``n`` entries for ``n`` legal plays. All zero
    when the game is over or the seat is not on roll.

Actions: action ``i`` is the ``i``-th distinct legal play of the position and roll, in the order of
``bgai.core.movegen.afterstates`` (the order of ``Position.legal_moves``). A roll with no legal play has one action, 0,
which passes. The order is the generator's search order, fixed for a position and roll: plays found playing the
larger die first come before those found playing the smaller die first, each search trying the checkers from the
lowest point up (the bar last), and each distinct afterstate is listed where it is first found.

    >>> from bgai import Position
    >>> from bgai.envs.spaces import observe
    >>> obs = observe(Position.start().board[None], np.array([[6, 5]]), np.array([7]))
    >>> obs["observation"].shape, int(obs["action_mask"].sum())
    ((1, 243), 7)
    >>> obs["observation"][0, -12:].tolist()  # the 6 and the 5
    [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]

The bound on the plays
----------------------
``MAX_PLAYS`` (2,399) is the most distinct plays any position and roll can have, by this argument:

* A roll that is not a double plays at most one step of each die: a play is then a pair (step of the larger die,
  step of the smaller die), each from one of 25 sources, so at most 25 x 25 = 625 plays.
* A double of ``d`` plays up to four steps of ``d`` pips, each from some point ``p`` to ``p - d`` (or off). Call
  ``f[p]`` the number of checkers that step from ``p``: the afterstate is the starting board minus the checkers that
  left plus those that arrived, and along each chain ``p, p - d, p - 2d, ...`` those counts determine ``f``, so
  distinct afterstates have distinct ``f``. Every legal ``f`` sums to the steps played (at most 4) and moves no more
  checkers from ``p`` than stood there or arrived there: ``f[p] <= s[p] + f[p + d]`` for ``s[p]`` the player's
  checkers on ``p`` (fifteen at most). The greatest number of such ``f`` over every placement of fifteen checkers,
  ignoring everything else the rules forbid (closed points, the bar, bearing off), is 2,399 (a die of 1 and four
  steps; 2,392 to 2,398 for the other dice), computed exactly by a dynamic programme over the chains, which
  ``tests/test_envs.py`` runs.

The bound is nearly reached: with fifteen checkers spread over points 3 to 24 and no opposing checker in the way, a
1-1 has 2,226 distinct plays (the tests hold that position). In games the counts are far smaller: over 300,000
positions of random games the median was 11, one in a hundred had more than 141, and the most was 868. A position
with more plays than ``MAX_PLAYS`` would raise ``RuntimeError`` in the environments; by the argument above there is
none.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np
from gymnasium import spaces

from bgai.core.notation import format_steps
from bgai.eval.encoding import ENCODER_VERSION, encode, n_features

#: The most distinct legal plays of any position and roll (see the module docstring): the size of the action space.
MAX_PLAYS = 2_399
#: The roll's units at the end of an observation: a one-hot of the larger die, then of the smaller.
DICE_UNITS = 12
#: The bounds of every observation input (see the module docstring).
OBSERVATION_LOW = -3.75
OBSERVATION_HIGH = 7.5

#: The observation kinds of every environment's ``observation`` argument (see the module docstring).
OBSERVATIONS = ("dict", "box")
#: The action kinds of the Gymnasium environments' ``action`` argument: whole plays, or checker steps.
ACTIONS = ("plays", "steps")
#: Actions of a checker step (``bgai.envs.steps``): 6 dice for each of 26 board cells (cell 0, the opponent's bar, is
#: never a source; action 0 is the pass).
STEP_ACTIONS = 26 * 6
#: The units after the dice units of a step observation: a one-hot of the steps left this turn (1 to 4).
STEP_UNITS = 4

_FACES = np.arange(1, 7)
_ACTIONS = np.arange(MAX_PLAYS)


def observation_size(encoder: int = ENCODER_VERSION) -> int:
    """The length of ``observation``: the encoder's inputs and the dice units."""
    return n_features(encoder) + DICE_UNITS


def observation_space(encoder: int = ENCODER_VERSION, observation: str = "dict", action: str = "plays"
                      ) -> spaces.Dict | spaces.Box:
    """One agent's observation space: ``observation`` and ``action_mask`` (``"dict"``), or the ``observation`` array
    alone (``"box"``); see the module docstring. With ``action="steps"`` the observation has the step units too and
    the mask is over the step actions (``bgai.envs.steps``)."""
    steps = check_action(action) == "steps"
    size = observation_size(encoder) + (STEP_UNITS if steps else 0)
    box = spaces.Box(OBSERVATION_LOW, OBSERVATION_HIGH, (size,), np.float32)
    if check_observation(observation) == "box":
        return box
    return spaces.Dict({"observation": box,
                        "action_mask": spaces.Box(0, 1, (STEP_ACTIONS if steps else MAX_PLAYS,), np.int8)})


def check_action(action: str) -> str:
    """``action`` if it names an action kind (``ACTIONS``: ``"plays"``, the index of a whole legal play, or
    ``"steps"``, one checker step, ``bgai.envs.steps``), else ``ValueError``."""
    if action not in ACTIONS:
        raise ValueError(f"action must be one of {', '.join(map(repr, ACTIONS))}, got {action!r}")
    return action


def check_observation(observation: str) -> str:
    """``observation`` if it names an observation kind (``OBSERVATIONS``), else ``ValueError``."""
    if observation not in OBSERVATIONS:
        raise ValueError(f"observation must be one of {', '.join(map(repr, OBSERVATIONS))}, got {observation!r}")
    return observation


def action_space(action: str = "plays") -> spaces.Discrete:
    """One agent's action space: the index of its play in the legal plays, ``Discrete(MAX_PLAYS)``; with
    ``action="steps"`` a checker step, ``Discrete(STEP_ACTIONS)`` (``bgai.envs.steps``)."""
    return spaces.Discrete(STEP_ACTIONS if check_action(action) == "steps" else MAX_PLAYS)


def observe(boards: np.ndarray, dice: np.ndarray, counts: np.ndarray, encoder: int = ENCODER_VERSION,
            out: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """The observations of a batch: ``boards`` (n, 26) seen from the side observing, ``dice`` (n, 2) its rolls (0s
    where it has none), ``counts`` (n,) its legal plays (0 where it has none to choose from). Returns
    ``observation`` (n, ``observation_size``) float32 and ``action_mask`` (n, ``MAX_PLAYS``) int8, new arrays, or
    those of ``out`` filled in (its ``action_mask`` all zeros on the way in: a block of rows of a larger batch's)."""
    n = len(boards)
    width = n_features(encoder)
    if out is None:
        observation = np.empty((n, width + DICE_UNITS), dtype=np.float32)
    else:
        observation = out["observation"]
        if observation.shape != (n, width + DICE_UNITS) or out["action_mask"].shape != (n, MAX_PLAYS):
            raise ValueError(f"out holds observations of shape {observation.shape} and masks of shape "
                             f"{out['action_mask'].shape} for {n} boards")
    encode(boards, out=observation[:, :width], version=encoder)
    dice = np.asarray(dice)
    counts = np.asarray(counts, dtype=np.int64)
    if counts.max(initial=0) > MAX_PLAYS:
        raise RuntimeError(f"a position has {int(counts.max())} legal plays, more than MAX_PLAYS = {MAX_PLAYS}: "
                           f"the bound in bgai.envs.spaces is wrong")
    # The dice units and the masks: for a few games, a few comparisons are the fewest calls; for many, a compiled
    # pass that sets each legal play's cell is far less work than comparing every cell of every mask.
    if out is None and n <= 16:
        observation[:, width:width + 6] = dice.max(axis=1)[:, None] == _FACES  # no unit for a die of 0
        observation[:, width + 6:] = dice.min(axis=1)[:, None] == _FACES
        return {"observation": observation, "action_mask": (_ACTIONS < counts[:, None]).view(np.int8)}
    from bgai.core import kernels

    mask = np.zeros((n, MAX_PLAYS), dtype=np.int8) if out is None else out["action_mask"]
    kernels.dice_and_mask(dice.astype(np.int8, copy=False), counts, observation, width, mask)
    return {"observation": observation, "action_mask": mask}


class PlayList(Sequence[str]):
    """The legal plays of one position in standard notation (``24/18 13/11*``), play ``i`` being action ``i``;
    each is written out when first read (writing them all would cost more than a step of the game).

        >>> from bgai import Position
        >>> from bgai.envs.games import legal_plays
        >>> plays = legal_plays(Position.start().board[None], np.array([[6, 5]]), steps=True)
        >>> PlayList(plays.steps)
        ['8/3 8/2', '13/2', '13/7 8/3', '13/8 13/7', '24/18 8/3', '24/18 13/8', '24/13']
    """

    def __init__(self, steps: np.ndarray) -> None:
        self._steps = steps
        self._text: list[str | None] = [None] * len(steps)

    def __len__(self) -> int:
        return len(self._steps)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        i = range(len(self))[index]  # IndexError, negative indices
        text = self._text[i]
        if text is None:
            text = self._text[i] = format_steps([(int(f), int(t), bool(h)) for f, t, h in self._steps[i] if f >= 0])
        return text

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PlayList):
            return np.array_equal(self._steps, other._steps)
        if isinstance(other, (list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return repr(list(self))


def play_info(board: np.ndarray, dice: np.ndarray, after: np.ndarray, steps: np.ndarray,
              encoder: int = ENCODER_VERSION, illegal_action: bool = False, afterstates: bool = True) -> dict:
    """The ``info`` of one seat (new objects): ``board`` (26,) its position from its side, ``dice`` (2,) its roll
    (0s when it has none) and ``illegal_action``: whether the game just ended by an action outside the mask; the
    same shapes every step. With ``afterstates``, its legal plays too: ``plays`` in notation (a ``PlayList``),
    ``afterstates`` their encodings (n, ``n_features(encoder)``) and ``afterstate_boards`` (n, 26), each seen from
    the opponent, who is on roll after the play (their length changes from step to step: a vectorizer that stacks
    infos, Gymnasium's ``SyncVectorEnv`` or Tianshou's buffer, needs them off)."""
    info: dict = {"board": np.array(board, dtype=np.int8), "dice": np.array(dice, dtype=np.int8),
                  "illegal_action": bool(illegal_action)}
    if afterstates:
        info["plays"] = PlayList(steps)
        info["afterstates"] = encode(after, version=encoder)
        info["afterstate_boards"] = np.array(after, dtype=np.int8)
    return info


def batch_info(boards: np.ndarray, dice: np.ndarray, plays: Any, encoder: int = ENCODER_VERSION,
               afterstates: bool = False) -> dict:
    """The ``info`` of a batch of seats (the vector environment's; new objects): ``board`` (n, 26) and ``dice``
    (n, 2) as in ``play_info``, each with the mask Gymnasium's vector environments pair an info with (``_board``,
    ``_dice``: all true). With ``afterstates``, the legal plays of every game too, flat, game by game in order, a
    game's action ``i`` its ``i``-th row: ``afterstates`` (M, ``n_features(encoder)``), ``afterstate_boards``
    (M, 26), ``afterstate_env`` (M,) the game of each row, and, where ``plays`` has its steps, ``plays`` (n,), an
    object array of each game's ``PlayList``."""
    n = len(boards)
    info: dict = {"board": np.array(boards, dtype=np.int8), "_board": np.ones(n, dtype=bool),
                  "dice": np.array(dice, dtype=np.int8), "_dice": np.ones(n, dtype=bool)}
    if afterstates:
        if plays is None:
            raise ValueError("the info with afterstates needs the plays")
        info["afterstates"] = encode(plays.after, version=encoder)
        info["afterstate_boards"] = np.array(plays.after, dtype=np.int8)
        info["afterstate_env"] = np.array(plays.owner, dtype=np.int64)
        if plays.steps is not None:
            lists = np.empty(n, dtype=object)
            for i in range(n):
                lists[i] = PlayList(plays.steps[plays.starts[i]:plays.starts[i] + plays.counts[i]])
            info["plays"], info["_plays"] = lists, np.ones(n, dtype=bool)
    return info

