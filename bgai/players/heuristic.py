"""A hand-written evaluator: the plan a club player follows, written as a linear score of a few features.

Every feature is computed from the mover's side after the play (the mover's checkers positive, the opponent on
roll next). In a race only the pip count and the checkers off matter; in contact the score also weighs blots by
the chance the opponent hits them, made points (home-board points and the bar point most), the longest prime,
anchors in the opponent's home board, and opposing checkers on the bar.
"""

from __future__ import annotations

import numpy as np

from bgai.core.movegen import CHECKERS, OPP_BAR, OWN_BAR
from bgai.core.phase import is_race
from bgai.players.base import ValuePlayer

# Chance that one opposing checker hits a blot d pips in front of it with a single roll, ignoring blocked
# points: the number of the 36 rolls that move some checker exactly d pips (e.g. 11 for d = 1, 17 for d = 6).
_HIT_ROLLS = {1: 11, 2: 12, 3: 14, 4: 15, 5: 15, 6: 17, 7: 6, 8: 6, 9: 5, 10: 3, 11: 2, 12: 3}
_POINTS = np.arange(1, 25)

# Value of owning each point (index = point number), highest for the home board's inner points and the bar point.
_POINT_VALUE = np.zeros(25)
_POINT_VALUE[1:7] = [0.4, 0.8, 1.0, 1.2, 1.5, 1.4]
_POINT_VALUE[7] = 1.1
_POINT_VALUE[8:13] = [0.6, 0.4, 0.3, 0.2, 0.1]
_POINT_VALUE[18:25] = [0.6, 0.6, 0.8, 0.7, 0.5, 0.4, 0.3]  # anchors in the opponent's home board


def hit_chances(movers: np.ndarray) -> np.ndarray:
    """(M, 24) chance, by point 1..24, that a blot there is hit next roll by some opposing checker behind it."""
    opponents = movers[:, :OWN_BAR] < 0  # index 0 is the opponent's bar; they move up the indices
    miss = np.ones((len(movers), 24))
    for distance, rolls in _HIT_ROLLS.items():
        shooters = np.zeros((len(movers), 24), dtype=bool)
        shooters[:, distance - 1:] = opponents[:, : 25 - distance]
        miss *= np.where(shooters, 1 - rolls / 36, 1.0)
    return 1 - miss


def heuristic_score(movers: np.ndarray) -> np.ndarray:
    """Score of each position (N×26, seen from the player who just moved); higher is better for that player."""
    b = movers.astype(np.int64)
    own = np.where(b > 0, b, 0)
    opp = np.where(b < 0, -b, 0)
    pips = np.arange(26)
    pip_lead = (opp @ (25 - pips) - own @ pips) / 10.0
    off = CHECKERS - own.sum(axis=1)
    # In a race, besides pips and checkers off: spread the home checkers over more points, so fewer rolls miss.
    home_points_held = (b[:, 1:7] > 0).sum(axis=1)
    race_score = pip_lead + 0.5 * off + 0.05 * home_points_held - 0.02 * np.maximum(b[:, 1:7] - 3, 0).sum(axis=1)

    points = b[:, 1:25]
    made = points >= 2
    blots = points == 1
    risk = hit_chances(b)
    blot_cost = (blots * risk * (0.5 + _POINTS / 12.0)).sum(axis=1)
    structure = made.astype(np.float64) @ _POINT_VALUE[1:25]
    run = np.zeros(len(b))
    prime = np.zeros(len(b))
    for i in range(24):
        run = (run + 1) * made[:, i]
        prime = np.maximum(prime, run)
    prime_bonus = np.maximum(prime - 2, 0) ** 1.5
    home_points = made[:, :6].sum(axis=1)
    on_bar = opp[:, OPP_BAR]
    bar_bonus = on_bar * (0.3 + 0.25 * home_points)
    stacks = np.maximum(points - 3, 0).sum(axis=1) * 0.15
    own_bar = own[:, OWN_BAR] * 1.0
    contact_score = (pip_lead * 0.6 + structure + prime_bonus + bar_bonus - 3.0 * blot_cost - stacks - own_bar
                     + 0.3 * off)
    return np.where(is_race(b), race_score, contact_score)


class HeuristicPlayer(ValuePlayer):
    """Plays the afterstate with the highest ``heuristic_score``."""

    name = "heuristic"

    def score(self, boards, movers, owner):
        return heuristic_score(movers)
