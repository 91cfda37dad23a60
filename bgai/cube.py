"""The doubling cube: its state and the rules of who may double, for a batch of positions.

Rules (standard rules of backgammon): before rolling, a player may offer to double the stakes if the cube is in
the middle (centered) or on its side. The opponent either passes (resigns the game and loses the current stake)
or takes (plays on for twice the stake and owns the cube: only it may redouble). The cube goes no higher than 64
here. In a match, no one may double in the Crawford game: the first game after one player reaches one point away
from winning the match.

Every state is relative to the player on roll: ``owner`` is ``CENTERED``, ``ON_ROLL`` (the player on roll owns the
cube) or ``OPPONENT``; ``away`` counts the points each side still needs to win the match, on-roll side first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bgai.errors import BgaiError

CENTERED, ON_ROLL, OPPONENT = 0, 1, 2
MAX_CUBE = 64


@dataclass(frozen=True)
class CubeState:
    """The cube (and match score) of N positions, from the side of the player on roll in each.

    ``value`` (N,) the cube value 1..64; ``owner`` (N,) ``CENTERED``/``ON_ROLL``/``OPPONENT``; ``away`` (N, 2) the
    points the player on roll and its opponent still need, or ``None`` for money games; ``crawford`` (N,) whether
    this game is the Crawford game; ``post_crawford`` (N,) whether the Crawford game has been played. ``jacoby``
    (money: gammons count only once the cube has been turned) and ``beavers`` (money: the taker may redouble at
    once, keeping the cube) are options of the whole batch.
    """

    value: np.ndarray
    owner: np.ndarray
    away: np.ndarray | None = None
    crawford: np.ndarray | None = None
    post_crawford: np.ndarray | None = None
    jacoby: bool = False
    beavers: bool = False

    @classmethod
    def money(cls, n: int, value: int = 1, owner: int = CENTERED, **options) -> "CubeState":
        """N money positions with the same cube."""
        return cls(np.full(n, value, dtype=np.int64), np.full(n, owner, dtype=np.int8), **options)

    def __len__(self) -> int:
        return len(self.value)

    @property
    def is_match(self) -> bool:
        return self.away is not None

    def switched(self) -> "CubeState":
        """The same cubes seen from the other side (after the turn passes)."""
        owner = np.select([self.owner == ON_ROLL, self.owner == OPPONENT], [OPPONENT, ON_ROLL], CENTERED)
        away = None if self.away is None else self.away[:, ::-1].copy()
        return CubeState(self.value, owner.astype(np.int8), away, self.crawford, self.post_crawford,
                         self.jacoby, self.beavers)


def may_double(state: CubeState) -> np.ndarray:
    """(N,) whether the rules let the player on roll double: the cube is centered or its own, below 64, and this
    is not the Crawford game. (Whether doubling can help it is for the cube decision to say.)"""
    allowed = (state.owner != OPPONENT) & (state.value < MAX_CUBE)
    if state.crawford is not None:
        allowed &= ~np.asarray(state.crawford, dtype=bool)
    return allowed


def validate(state: CubeState) -> None:
    """Raise ``BgaiError`` unless ``state`` is a possible cube: values powers of two 1..64, a known owner, a
    centered cube only at 1, match scores at least one point away."""
    value = np.asarray(state.value)
    if not np.isin(value, [1, 2, 4, 8, 16, 32, 64]).all():
        raise BgaiError(f"cube values must be 1, 2, 4, ..., 64; got {sorted(set(value.tolist()))}")
    owner = np.asarray(state.owner)
    if not np.isin(owner, [CENTERED, ON_ROLL, OPPONENT]).all():
        raise BgaiError("cube owner must be centered, the player on roll or its opponent")
    if ((owner == CENTERED) & (value != 1)).any():
        raise BgaiError("a centered cube has value 1 (once turned, the cube has an owner)")
    if state.away is not None:
        away = np.asarray(state.away)
        if away.ndim != 2 or away.shape[1] != 2 or (away < 1).any():
            raise BgaiError("match scores must leave each side at least one point away")
