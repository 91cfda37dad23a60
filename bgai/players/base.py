"""The one interface every player has: pick one of the legal afterstates of each position in a batch."""

from __future__ import annotations

import numpy as np

from bgai.core.game import Player  # noqa: F401 (the interface, defined by the turn loop that calls it)
from bgai.core.movegen import group_starts, segment_argmax, switch


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
