"""Adapters between bgai's board and the external oracles (gnubg-nn, bgsage).

Used only by the differential tests and the speed benchmarks; the engine never imports this.

Our board (see the project conventions)
---------------------------------------
``int8[26]`` seen from the player ON ROLL: ``board[1..24]`` are points by the
on-roll player's pip distance (they move high -> low and bear off past 1),
``board[25]`` is the on-roll player's bar, ``board[0]`` the opponent's bar.
On-roll checkers are positive, the opponent's negative (``board[0] <= 0``).
Switching to the opponent's view is ``-board[::-1]``.  An *afterstate* is the
board after the mover has played, switched to the opponent's view (the
opponent is then on roll), so it is again in our normal convention.

gnubg_nn (package ``gnubg-nn``), facts checked by hand
-------------------------------------------------------
* Board: ``[row0, row1]``, two lists of 25 non-negative counts.  **row 1 is
  the player on roll, row 0 the opponent.**  In each row, index ``i`` (0..23)
  is that row owner's own point ``i + 1`` (counted from that player's own
  home), index 24 is that player's bar.  So our ``board[p]`` (p = 1..24) is
  ``row1[p - 1]`` when positive and ``-row0[24 - p]`` when negative;
  ``board[25] = row1[24]``, ``board[0] = -row0[24]``.
* ``moves(board, d1, d2)`` (positional args only) -> tuple of 20-char
  position *keys* (``key_of_board`` format, letters A..P), one per distinct
  resulting position (no duplicates).  The keys are **not switched**: decoded
  with ``board_from_position_key`` they give ``(row0, row1)`` tuples where
  row 1 is still the mover, after the move.  With a 4th positional arg
  ``verbose=1`` it returns ``((key, ((from, to), ...)), ...)``, from/to being
  the mover's 1-based points.  No legal move -> ``()``.
* ``best_move(board, d1, d2, n=0, b=1)`` -> ``(move_tuple, key)``.  This key
  **is switched**: row 0 is the player who just moved, row 1 the opponent
  (now on roll).  With no legal move it returns ``((), key_of_switched_input)``.
  Without ``b=1`` only the move tuple is returned.
* ``position_id(board)`` / ``board_from_position_id(pid)``: gnubg's 14-char
  Position ID.  The bit string encodes **row 0 first, then row 1** (exactly
  gnubg's C ``PositionKey``), i.e. the opponent first and the player on roll
  second (the manual's prose says "player on roll first"; the code follows
  the array order).  Checked against a hand-built encoder and against IDs
  that other backgammon tools publish in their tests: start
  ``4HPwATDgc/ABMA``; after 31 played 8/5 6/5, mover still on roll
  ``4HPwATCwZ/ABMA``, opponent on roll ``sGfwATDgc/ABMA``.
  ``board_from_position_id`` returns ``[row0, row1]`` as lists.
* ``pub_eval_score(board)`` is Tesauro's pubeval of a *post-move* position
  given in the switched orientation (row 0 = the player who just moved,
  row 1 = the player now on roll); larger is better for row 0.  The race
  weights are used iff the given position is a race.  ``pub_best_move``
  (flat 0-based from/to list, bar 24, off -1) is the argmax of this except
  when the pre-move position has contact and some candidate is a race
  (~1% of random-game pairs): it then seems to score every candidate with
  the pre-move (contact) weights.

bgsage (``bgsage.possible_moves``, a wrapper of ``bgbot_cpp.possible_moves``)
------------------------------------------------------------------------------
* Board: list of 26 ints from the on-roll player's view, identical to ours
  (same point indexing, mover positive, ``[25]`` = mover's bar) **except the
  opponent's bar ``[0]`` is a non-negative count** (ours is ``<= 0``).
  ``bgsage.STARTING_BOARD`` equals our start position.
* ``possible_moves(board, d1, d2)`` -> list of distinct 26-int boards in the
  same format, **not switched** (still the mover's view, after the move; a hit
  checker shows up as ``+1`` in ``[0]``).  With no legal move it returns
  ``[board]`` (the unchanged input), not ``[]`` as its docstring says.
* ``flip_board`` maps ``[0] <-> [25]`` unnegated and ``[i] -> -[25 - i]``.

Known disagreement between the oracles
--------------------------------------
When the mover can bear off their last checker(s) without using every die,
but another order hits an opponent blot on the way and uses more dice (e.g.
one checker on our 2-point, an opponent blot on our 1-point, roll 3-1: 2/off
leaves the 1 unused, 2/1*/off uses both), gnubg returns only the play that
uses the most dice (the literal "use both dice if you can" rule) while bgsage
also returns the shorter play.  Both afterstates end the game with the same
result (the hit checker moves from the winner's home board to the bar, and
both count for a backgammon), so only the afterstate sets differ.  Found once in 40,000 random-game pairs; 35
of 6,930 (position, roll) pairs in a targeted bear-off family.
"""

from __future__ import annotations

import numpy as np

from bgai.players.gnubg import from_gnubg as _gnubg_to_ours
from bgai.players.gnubg import to_gnubg
from bgai.players.sage import from_sage as from_bgsage
from bgai.players.sage import to_sage as to_bgsage

try:
    import gnubg_nn
except ImportError:  # pragma: no cover - optional test dependency
    gnubg_nn = None

try:
    import bgsage
except ImportError:  # pragma: no cover - optional test dependency
    bgsage = None

__all__ = [
    "START",
    "switch",
    "to_gnubg",
    "from_gnubg",
    "to_bgsage",
    "from_bgsage",
    "gnubg_afterstates",
    "bgsage_afterstates",
    "gnubg_best_after",
    "gnubg_position_id",
    "gnubg_board_from_id",
    "gnubg_pubeval",
]

#: The opening position in our convention.
START = np.zeros(26, dtype=np.int8)
START[[24, 13, 8, 6]] = [2, 5, 3, 5]
START[[1, 12, 17, 19]] = [-2, -5, -3, -5]
START.flags.writeable = False


def _require(module, name: str):
    if module is None:
        raise ImportError(f"{name} is not installed (pip install bgai[dev])")
    return module


def _as_board(board) -> np.ndarray:
    b = np.asarray(board)
    if b.shape != (26,):
        raise ValueError(f"expected a board of shape (26,), got {b.shape}")
    return b.astype(np.int8, copy=False)


def switch(board) -> np.ndarray:
    """The same position seen from the other player (a new int8[26] array)."""
    return np.ascontiguousarray(-_as_board(board)[::-1])


# --------------------------------------------------------------------------
# gnubg_nn
# --------------------------------------------------------------------------

def from_gnubg(b2x25) -> np.ndarray:
    """gnubg_nn's ``[row0 = opponent, row1 = on roll]`` -> our int8[26]."""
    rows = np.asarray(b2x25, dtype=np.int64)
    if rows.shape != (2, 25):
        raise ValueError(f"expected a 2x25 gnubg board, got shape {rows.shape}")
    return _gnubg_to_ours(rows)


def _afterstates_from_keys(keys) -> np.ndarray:
    """``moves()`` keys (row 1 = mover, unswitched) -> int8[n, 26] afterstates.

    Swapping the rows makes the opponent row 1 (on roll), which is exactly the
    switched board, i.e. the afterstate in our convention.
    """
    rows = np.array([gnubg_nn.board_from_position_key(k) for k in keys], dtype=np.int64)
    return _gnubg_to_ours(rows[:, ::-1, :])


def gnubg_afterstates(board, d1: int, d2: int) -> set[bytes]:
    """Distinct legal afterstates per ``gnubg_nn.moves``, as ``tobytes()``.

    Each afterstate is in our convention from the opponent's view.  With no
    legal move the only afterstate is the switched input board.
    """
    _require(gnubg_nn, "gnubg-nn")
    keys = gnubg_nn.moves(to_gnubg(board), int(d1), int(d2))
    if not keys:
        return {switch(board).tobytes()}
    return {row.tobytes() for row in _afterstates_from_keys(keys)}


def gnubg_best_after(board, d1: int, d2: int) -> np.ndarray:
    """The afterstate (opponent's view) chosen by ``gnubg_nn.best_move`` at 0-ply.

    Uses whatever net is active in gnubg_nn (the bundled one by default).
    """
    _require(gnubg_nn, "gnubg-nn")
    _, key = gnubg_nn.best_move(to_gnubg(board), int(d1), int(d2), n=0, b=1)
    # best_move's key is already switched: row 0 = mover, row 1 = opponent.
    return from_gnubg(gnubg_nn.board_from_position_key(key))


def gnubg_position_id(board) -> str:
    """gnubg's Position ID of our board (our on-roll player on roll)."""
    _require(gnubg_nn, "gnubg-nn")
    return gnubg_nn.position_id(to_gnubg(board))


def gnubg_board_from_id(pid: str) -> np.ndarray:
    """Inverse of :func:`gnubg_position_id`."""
    _require(gnubg_nn, "gnubg-nn")
    return from_gnubg(gnubg_nn.board_from_position_id(pid))


def gnubg_pubeval(afterstate) -> float:
    """Tesauro's pubeval (gnubg's implementation) of an afterstate.

    ``afterstate`` is in our convention from the view of the player now on
    roll (as returned by :func:`gnubg_afterstates`); the score is for the
    player who just moved (not on roll): larger is better for them.  The
    race weights are used iff ``afterstate`` is a race, so the argmax over a
    roll's afterstates can differ from ``gnubg_nn.pub_best_move`` when the
    move breaks contact (see the module docstring).
    """
    _require(gnubg_nn, "gnubg-nn")
    return float(gnubg_nn.pub_eval_score(to_gnubg(afterstate)))


# --------------------------------------------------------------------------
# bgsage
# --------------------------------------------------------------------------

def bgsage_afterstates(board, d1: int, d2: int) -> set[bytes]:
    """Distinct legal afterstates per ``bgsage.possible_moves``, as ``tobytes()``.

    Same convention as :func:`gnubg_afterstates`.
    """
    _require(bgsage, "bgsage")
    results = bgsage.possible_moves(to_bgsage(board), int(d1), int(d2))
    if not results:  # documented for "no legal move"; bgsage returns [board]
        return {switch(board).tobytes()}
    boards = np.array(results, dtype=np.int8)
    boards[:, 0] = -boards[:, 0]  # bgsage's opponent bar count -> ours (<= 0)
    afters = np.ascontiguousarray(-boards[:, ::-1])
    return {row.tobytes() for row in afters}


def gnubg_positions(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``n`` distinct unfinished boards (N×26, on-roll view) met in gnubg-nn's 0-ply self-play and a fresh roll
    for each (N×2); then the warm-up boards and rolls: one board of each phase (contact, race, bear-off, bear-off
    within the two-sided database) met in the same games but not picked, so that every engine's lazily built
    tables are built before the clock starts (``benchmarks/ply_speed.py``'s positions)."""
    from bgai.core.game import game_over
    from bgai.core.phase import classify
    from bgai.eval import bearoff
    from bgai.formats.position import START_BOARD
    from bgai.players.gnubg import require_gnubg

    gnubg = require_gnubg()
    rng = np.random.default_rng(seed)
    board = START_BOARD.copy()
    pool: dict[bytes, np.ndarray] = {}
    moves = max(2000, 25 * n)  # about 90 games for 200 positions, so that most picks come from different games
    for _ in range(moves):
        d1, d2 = (int(d) for d in rng.integers(1, 7, size=2))
        _, key = gnubg.best_move(to_gnubg(board), d1, d2, n=0, b=1)
        board = _gnubg_to_ours(gnubg.board_from_position_key(key))
        if game_over(board[None])[0]:
            board = START_BOARD.copy()
        pool.setdefault(board.tobytes(), board)
    if len(pool) < n:
        raise SystemExit(f"only {len(pool)} distinct positions in {moves} moves of self-play; ask for fewer")
    boards = np.stack(list(pool.values()))
    chosen = rng.choice(len(boards), size=n, replace=False)
    dice = rng.integers(1, 7, size=(n, 2))
    rest = np.delete(boards, chosen, axis=0)
    exact = (np.maximum(rest, 0).sum(axis=1) <= bearoff.TWO_SIDED_CHECKERS) & (
        np.maximum(-rest, 0).sum(axis=1) <= bearoff.TWO_SIDED_CHECKERS)
    kinds = classify(rest).astype(np.int64) * 2 + exact
    warm = rest[np.unique(kinds, return_index=True)[1]]
    return boards[chosen], dice, warm, rng.integers(1, 7, size=(len(warm), 2))
