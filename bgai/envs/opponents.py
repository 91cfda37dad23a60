"""The opponents an environment plays its agent against.

An ``opponent`` is one of:

* ``"random"``, ``"heuristic"`` or ``"pubeval"``: bgai's built-in players (``bgai.players``; ``"gnubg"`` too, with
  the ``gnubg`` extra installed);
* ``"bgai"``: bgai's shipped network at ``plies`` of lookahead, 0 to 2 (``bgai.eval.bot.load_bot``);
* a player: anything with bgai's player interface, ``choose(boards, after, owner, rng, dice=None)``
  (``bgai.players.Player``), such as a ``Bot`` of your own network (the vector environment calls it for one block
  of games at a time, unless it has a true ``threadsafe`` attribute: then for several blocks on parallel threads);
* any other callable, a policy: it is called as the agent is, ``policy(observation, info) -> action``, with the
  observation and info of the opponent's seat (batched in the vector environment, where it returns one action a
  game). A policy's action outside its mask raises ``IllegalMoveError``: that is a bug in the policy, not a move.

Every opponent but ``"random"`` (and a policy that draws its own numbers) plays the same play in the same position.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from bgai.core.errors import BgaiError, IllegalMoveError
from bgai.envs.games import Opponent, Plays
from bgai.envs.spaces import batch_info, observe, play_info
from bgai.eval.encoding import ENCODER_VERSION
from bgai.players import PLAYERS, HeuristicPlayer, PubevalPlayer, RandomPlayer, make_player

#: The opponents named by a string.
NAMES = (*PLAYERS, "gnubg", "bgai")


def make_opponent(opponent: Any = "random", *, plies: int = 0, encoder: int = ENCODER_VERSION,
                  batched: bool = False) -> Opponent:
    """The ``Opponent`` of a name, a player or a policy (see the module docstring). ``plies`` is the lookahead of
    ``"bgai"``; ``encoder`` the encoder version of a policy's observations; ``batched``: a policy takes a batch
    (the vector environment's), else one observation at a time."""
    if plies != 0 and opponent != "bgai":
        raise BgaiError(f"plies is the lookahead of opponent='bgai', not of {opponent!r}")
    if isinstance(opponent, str):
        if opponent == "bgai":
            # The network loads only for this opponent (reading it and compiling its kernels takes a second).
            from bgai.eval.bot import load_bot

            return _of_player(load_bot(plies=plies))
        if opponent not in NAMES:
            raise BgaiError(f"unknown opponent {opponent!r}; choose one of {', '.join(NAMES)}, a player or a policy")
        return _of_player(make_player(opponent))
    if callable(getattr(opponent, "choose", None)):
        return _of_player(opponent)
    if callable(opponent):
        return _of_policy(opponent, encoder, batched)
    raise BgaiError(f"an opponent is a name ({', '.join(NAMES)}), a player or a policy, got {opponent!r}")


def _of_player(player: Any) -> Opponent:
    def choose(boards: np.ndarray, dice: np.ndarray, plays: Plays, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(player.choose(boards, plays.after, plays.owner, rng, dice=dice), dtype=np.int64)

    # bgai's own players keep no state between calls (their exact classes: a subclass may add some); another player
    # says it may be called from several threads at once with a true ``threadsafe`` attribute (a Bot has one)
    threadsafe = type(player) in (RandomPlayer, HeuristicPlayer, PubevalPlayer) or getattr(player, "threadsafe", False)
    return Opponent(str(getattr(player, "name", type(player).__name__)), choose, threadsafe=bool(threadsafe))


def _of_policy(policy: Callable[..., Any], encoder: int, batched: bool) -> Opponent:
    name = getattr(policy, "__name__", type(policy).__name__)

    def checked(action: Any, count: int) -> int:
        if not isinstance(action, (int, np.integer)) or isinstance(action, (bool, np.bool_)) \
                or not 0 <= action < count:
            raise IllegalMoveError(f"the opponent {name} chose action {action!r}, but its legal plays are the "
                                   f"actions 0..{count - 1}")
        return int(action)

    def choose(boards: np.ndarray, dice: np.ndarray, plays: Plays, rng: np.random.Generator) -> np.ndarray:
        obs = observe(boards, dice, plays.counts, encoder)
        if batched:
            actions = np.asarray(policy(obs, batch_info(boards, dice, plays, encoder, afterstates=True)))
            if actions.shape != (len(boards),):
                raise IllegalMoveError(f"the opponent {name} returned actions of shape {actions.shape} for "
                                       f"{len(boards)} games")
            local = [checked(a.item(), int(c)) for a, c in zip(actions, plays.counts)]
        else:
            assert plays.steps is not None  # asked for (Opponent.steps)
            local = []
            for i in range(len(boards)):
                rows = slice(int(plays.starts[i]), int(plays.starts[i] + plays.counts[i]))
                info = play_info(boards[i], dice[i], plays.after[rows], plays.steps[rows], encoder)
                local.append(checked(policy({k: v[i] for k, v in obs.items()}, info), int(plays.counts[i])))
        return plays.starts + np.asarray(local, dtype=np.int64)

    return Opponent(name, choose, steps=True)
