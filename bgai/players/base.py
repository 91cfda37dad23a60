"""The one interface every player has: pick one of the legal afterstates of each position in a batch."""

from __future__ import annotations

import numpy as np

from bgai.core.errors import BgaiError
from bgai.core.game import Player  # noqa: F401 (the interface, defined by the turn loop that calls it)
from bgai.core.movegen import group_starts, segment_argmax, switch


def engine_picks(boards, after, owner, dice, play, engine: str, last_checker_off: bool = False) -> np.ndarray:
    """The rows of ``after`` that another engine's plays are, one per position: ``play(board, d1, d2)`` is its play
    of a position with a choice (the board after it, seen by the opponent as bgai's afterstates are). With
    ``last_checker_off``, a play that bears the mover's last checker off another way than bgai's rules allow (one
    that uses fewer dice: ``bgai.coach.oracles``) stands for bgai's game-ending play, which scores the same."""
    if dice is None:
        raise BgaiError(f"the {engine} player needs the dice of each position")
    first, count = group_starts(owner, len(boards))
    picks = np.empty(len(boards), dtype=np.int64)
    for i, (board, (d1, d2)) in enumerate(zip(boards, dice)):
        lo, hi = first[i], first[i] + count[i]
        if hi - lo == 1:
            picks[i] = lo
            continue
        played = play(board, int(d1), int(d2))
        match = [j for j in range(lo, hi) if np.array_equal(after[j], played)]
        if not match and last_checker_off and not (played < 0).any():
            match = [j for j in range(lo, hi) if not (after[j] < 0).any()]
        if not match:
            raise RuntimeError(f"{engine} played a move bgai does not list as legal (position {i})")
        picks[i] = match[0]
    return picks


class RandomPlayer:
    """Plays uniformly at random among the distinct legal afterstates."""

    name = "random"

    def choose(self, boards, after, owner, rng, dice=None):
        starts, counts = group_starts(owner, len(boards))
        return starts + (rng.random(len(boards)) * counts).astype(np.int64)


class ValuePlayer:
    """A player that scores each afterstate from the mover's side and plays the best."""

    name = "value"

    def score(self, boards: np.ndarray, movers: np.ndarray, owner: np.ndarray) -> np.ndarray:
        """Scores (higher is better for the mover) of ``movers``: the afterstates seen from the mover."""
        raise NotImplementedError

    def choose(self, boards, after, owner, rng, dice=None):
        return segment_argmax(self.score(boards, switch(after), owner), owner, len(boards))
