"""Tesauro's public evaluation function ("pubeval", 1993), vectorized.

pubeval is a linear move-selection heuristic that Gerald Tesauro (IBM Research)
posted to rec.games.backgammon in 1993 as a public-domain benchmark opponent.
A position is turned into 122 inputs ``x`` and scored as ``w . x``, with one
weight vector for contact positions and another for races.  A player using
it scores every position reachable with the roll and plays the highest.  The
evaluator code below is our own; only the two weight vectors are Tesauro's.

Board convention (``bgai``)
---------------------------
A board is an integer array of length 26 seen from one player, "us":
``board[1..24]`` are the points numbered by our pip distance (we move from
high to low indices and bear off past point 1), ``board[25]`` is our bar and
``board[0]`` the opponent's bar.  Our checkers are positive, the opponent's
negative (so ``board[0] <= 0``).  Our borne-off count is 15 minus our checkers
on the board, the bar included.  Batches have shape ``(..., 26)``.

For pubeval, "us" is the player who has JUST MOVED: pubeval scores the
position after the mover's play, from the mover's side; higher is better for
the mover.

The 122 inputs
--------------
Points are taken from our farthest point (24) down to our ace point (1).
For ``k`` in ``0..23`` the block ``x[5k : 5k+5]`` describes our point
``p = 24 - k``, whose content is ``n = board[p]``:

====== =========================================================
slot   value
====== =========================================================
5k+0   1 if the opponent has exactly one checker there (``n == -1``)
5k+1   1 if we have exactly one checker there (``n == 1``)
5k+2   1 if we have two or more checkers there (``n >= 2``)
5k+3   1 if we have exactly three checkers there (``n == 3``)
5k+4   ``(n - 3) / 2`` if we have four or more checkers there (``n >= 4``)
====== =========================================================

Everything else in a block is 0; in particular points the opponent holds
with two or more checkers contribute nothing.

- ``x[120]``: the opponent's checkers on the bar, divided by 2 (``-board[0] / 2``).
- ``x[121]``: our borne-off checkers, divided by 15.

Our own checkers on the bar have no input of their own (they only count as
not borne off), and neither have the opponent's borne-off checkers.  When we
have borne off all 15 checkers pubeval does not use the weights: it returns
the fixed score 99999999.0 (the best possible result).
"""

from __future__ import annotations

import numpy as np

from bgai.core.movegen import segment_argmax, switch
from bgai.core.phase import is_race

__all__ = [
    "CONTACT_WEIGHTS",
    "RACE_WEIGHTS",
    "N_INPUTS",
    "ALL_OFF_SCORE",
    "pubeval_inputs",
    "pubeval_score",
    "PubevalPlayer",
]

N_INPUTS = 122
#: Score pubeval gives a position in which the mover has borne off all 15 checkers.
ALL_OFF_SCORE = 99999999.0

# ---------------------------------------------------------------------------
# Weights: published data, not our work.
#
# Source: Gerald Tesauro, "pubeval.c" (1993), posted to rec.games.backgammon
# and placed in the public domain ("Provided as a public service to the
# backgammon programming community by Gerry Tesauro, IBM Research").  The
# values are the arrays ``wc[122]`` (contact) and ``wr[122]`` (race) of that
# file, transcribed unchanged from the copy of pubeval.c in the public GitHub
# repository markusfreyr/Backgammon (the copy in weekend37/Backgammon is
# identical; GNU Backgammon carries the same numbers, with the 5k+4, 120 and
# 121 entries pre-divided).  tests/test_pubeval.py checks the resulting scores
# against GNU Backgammon's pubeval (gnubg_nn.pub_eval_score).
# Indices follow the input layout described in the module docstring.
# ---------------------------------------------------------------------------
_CONTACT_WEIGHTS_PUBLISHED = (
    0.25696, -0.66937, -1.66135, -2.02487, -2.53398,
    -0.16092, -1.11725, -1.06654, -0.92830, -1.99558,
    -1.10388, -0.80802, 0.09856, -0.62086, -1.27999,
    -0.59220, -0.73667, 0.89032, -0.38933, -1.59847,
    -1.50197, -0.60966, 1.56166, -0.47389, -1.80390,
    -0.83425, -0.97741, -1.41371, 0.24500, 0.10970,
    -1.36476, -1.05572, 1.15420, 0.11069, -0.38319,
    -0.74816, -0.59244, 0.81116, -0.39511, 0.11424,
    -0.73169, -0.56074, 1.09792, 0.15977, 0.13786,
    -1.18435, -0.43363, 1.06169, -0.21329, 0.04798,
    -0.94373, -0.22982, 1.22737, -0.13099, -0.06295,
    -0.75882, -0.13658, 1.78389, 0.30416, 0.36797,
    -0.69851, 0.13003, 1.23070, 0.40868, -0.21081,
    -0.64073, 0.31061, 1.59554, 0.65718, 0.25429,
    -0.80789, 0.08240, 1.78964, 0.54304, 0.41174,
    -1.06161, 0.07851, 2.01451, 0.49786, 0.91936,
    -0.90750, 0.05941, 1.83120, 0.58722, 1.28777,
    -0.83711, -0.33248, 2.64983, 0.52698, 0.82132,
    -0.58897, -1.18223, 3.35809, 0.62017, 0.57353,
    -0.07276, -0.36214, 4.37655, 0.45481, 0.21746,
    0.10504, -0.61977, 3.54001, 0.04612, -0.18108,
    0.63211, -0.87046, 2.47673, -0.48016, -1.27157,
    0.86505, -1.11342, 1.24612, -0.82385, -2.77082,
    1.23606, -1.59529, 0.10438, -1.30206, -4.11520,
    5.62596, -2.75800,
)

_RACE_WEIGHTS_PUBLISHED = (
    0.00000, -0.17160, 0.27010, 0.29906, -0.08471,
    0.00000, -1.40375, -1.05121, 0.07217, -0.01351,
    0.00000, -1.29506, -2.16183, 0.13246, -1.03508,
    0.00000, -2.29847, -2.34631, 0.17253, 0.08302,
    0.00000, -1.27266, -2.87401, -0.07456, -0.34240,
    0.00000, -1.34640, -2.46556, -0.13022, -0.01591,
    0.00000, 0.27448, 0.60015, 0.48302, 0.25236,
    0.00000, 0.39521, 0.68178, 0.05281, 0.09266,
    0.00000, 0.24855, -0.06844, -0.37646, 0.05685,
    0.00000, 0.17405, 0.00430, 0.74427, 0.00576,
    0.00000, 0.12392, 0.31202, -0.91035, -0.16270,
    0.00000, 0.01418, -0.10839, -0.02781, -0.88035,
    0.00000, 1.07274, 2.00366, 1.16242, 0.22520,
    0.00000, 0.85631, 1.06349, 1.49549, 0.18966,
    0.00000, 0.37183, -0.50352, -0.14818, 0.12039,
    0.00000, 0.13681, 0.13978, 1.11245, -0.12707,
    0.00000, -0.22082, 0.20178, -0.06285, -0.52728,
    0.00000, -0.13597, -0.19412, -0.09308, -1.26062,
    0.00000, 3.05454, 5.16874, 1.50680, 5.35000,
    0.00000, 2.19605, 3.85390, 0.88296, 2.30052,
    0.00000, 0.92321, 1.08744, -0.11696, -0.78560,
    0.00000, -0.09795, -0.83050, -1.09167, -4.94251,
    0.00000, -1.00316, -3.66465, -2.56906, -9.67677,
    0.00000, -2.77982, -7.26713, -3.40177, -12.32252,
    0.00000, 3.42040,
)


def _frozen(values: tuple[float, ...]) -> np.ndarray:
    arr = np.array(values, dtype=np.float64)
    if arr.shape != (N_INPUTS,):
        raise AssertionError(f"expected {N_INPUTS} weights, got {arr.shape}")
    arr.setflags(write=False)
    return arr


#: Tesauro's contact weights ``wc[122]`` (read-only float64 array).
CONTACT_WEIGHTS = _frozen(_CONTACT_WEIGHTS_PUBLISHED)
#: Tesauro's race weights ``wr[122]`` (read-only float64 array).
RACE_WEIGHTS = _frozen(_RACE_WEIGHTS_PUBLISHED)


# ---------------------------------------------------------------------------
# Evaluator (our own code)
# ---------------------------------------------------------------------------
def _as_batch(boards) -> tuple[np.ndarray, tuple[int, ...]]:
    """Return ``boards`` as an (N, 26) int16 array plus the leading batch shape."""
    b = np.asarray(boards)
    if b.ndim == 0 or b.shape[-1] != 26:
        raise ValueError(f"boards must have shape (..., 26), got {b.shape}")
    if not np.issubdtype(b.dtype, np.integer):
        raise TypeError(f"boards must be an integer array, got dtype {b.dtype}")
    lead = b.shape[:-1]
    return b.reshape(-1, 26).astype(np.int16, copy=False), lead


def _borne_off(b: np.ndarray) -> np.ndarray:
    """Our borne-off count per board, (N,) int16, for (N, 26) int16 boards."""
    return 15 - np.clip(b[:, 1:26], 0, None).sum(axis=1, dtype=np.int16)


def pubeval_inputs(boards) -> np.ndarray:
    """Pubeval's 122-input encoding of ``boards`` (see the module docstring).

    ``boards``: integer array of shape (N, 26) (any leading batch shape works),
    seen from the player who has just moved.  Returns float32 of shape (N, 122).
    """
    b, lead = _as_batch(boards)
    n_boards = b.shape[0]
    x = np.zeros((n_boards, N_INPUTS), dtype=np.float32)

    # Column k holds our point 24 - k: board indices 24, 23, ..., 1.
    pts = b[:, 24:0:-1]
    blocks = x[:, :120].reshape(n_boards, 24, 5)  # a view into x
    blocks[:, :, 0] = pts == -1
    blocks[:, :, 1] = pts == 1
    blocks[:, :, 2] = pts >= 2
    blocks[:, :, 3] = pts == 3
    blocks[:, :, 4] = np.where(pts >= 4, (pts - 3) * 0.5, 0.0)

    x[:, 120] = np.clip(-b[:, 0], 0, None) * 0.5
    x[:, 121] = _borne_off(b) / 15.0
    return x.reshape(lead + (N_INPUTS,))


def pubeval_score(boards, race=None) -> np.ndarray:
    """Pubeval's score of ``boards`` for the player who has just moved.

    ``boards``: integer array of shape (N, 26), each the position after the
    mover's play, seen from the mover; higher scores are better for the mover.
    ``race``: which weight vector to use; ``None`` (default) means
    ``is_race(boards)``, otherwise a bool or an (N,) bool array.  Tesauro's
    original decides race/contact from the position *before* the move, so a
    move selector that wants to follow it exactly passes that flag here.
    Boards where the mover has borne off all 15 checkers score
    ``ALL_OFF_SCORE`` (99999999.0).  Returns float64 of shape (N,).
    """
    b, lead = _as_batch(boards)
    x = pubeval_inputs(b).astype(np.float64)
    if race is None:
        race_flags = is_race(b)
    else:
        race_flags = np.broadcast_to(np.asarray(race, dtype=bool).reshape(-1), (b.shape[0],))
    score = np.where(race_flags, x @ RACE_WEIGHTS, x @ CONTACT_WEIGHTS)
    score = np.where(_borne_off(b) == 15, ALL_OFF_SCORE, score)
    return score.reshape(lead)


class PubevalPlayer:
    """Plays the afterstate pubeval scores highest, choosing contact or race weights from the position before
    the play, as Tesauro's own driver does."""

    name = "pubeval"

    def choose(self, boards, after, owner, rng, dice=None):
        race = is_race(boards)[owner]
        return segment_argmax(pubeval_score(switch(after), race=race), owner, len(boards))
