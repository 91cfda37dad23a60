"""The one interface every player has: pick one of the legal afterstates of each position in a batch."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from bgai.movegen import group_starts, segment_argmax, switch


class Player(Protocol):
    """Chooses plays for a batch of positions.

    ``choose(boards, after, owner, rng, dice=None)``: ``boards`` (N×26) are the positions on roll, ``after``
    (M×26) and ``owner`` (M,) their legal afterstates as ``bgai.movegen.afterstates`` returns them (each seen from
    the opponent, grouped by owner), ``dice`` (N×2) the rolls, for players that need them. Returns, for each of
    the N positions, the index into ``after`` of its play.
    """

    name: str

    def choose(
        self, boards: np.ndarray, after: np.ndarray, owner: np.ndarray, rng: np.random.Generator, dice=None
    ) -> np.ndarray:
        ...


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
