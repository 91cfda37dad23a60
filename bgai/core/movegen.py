"""Batched legal-move generation: every distinct afterstate of many (position, roll) pairs at once.

Boards are int8 arrays of 26 seen from the player on roll (the layout of ``Position.board``): index 1..24 are the
points by the on-roll player's pip distance, 25 its bar, 0 the opponent's bar; own checkers positive, the
opponent's negative. A checker on index ``s`` moving ``d`` pips lands on ``s - d``; ``s - d <= 0`` bears it off.

The rules, as the standard rules of backgammon state them (e.g. the rules published by the US Backgammon
Federation and in Robertie, *Backgammon for Winners*):

* A player with checkers on the bar must enter them all before moving any other checker.
* A checker may land on a point that is empty, holds its own checkers, or holds one opposing checker (a blot),
  which is hit and put on the bar. A point with two or more opposing checkers is closed, also as the intermediate
  landing point of a checker that plays both dice.
* Both dice must be played when possible. When only one can be played, the larger must be played if it can be.
  Doubles are played four times, as many as possible.
* Bearing off starts only when all fifteen checkers are in the home board (points 1..6). A die bears off a checker
  from the point of its number, or from the highest occupied point when no checker stands on a higher point. A
  checker hit while bearing off must come back home before bearing off resumes.

The "both dice / the larger die / as many as possible" rules are one rule here: every order of the dice is
expanded one checker step at a time, and of all the plays reachable, the ones that use the greatest total of dice
pips are legal (both dice beat the larger die alone, which beats the smaller). Nothing is legal die by die.

The hot path is numpy over the whole batch; there is no per-position Python loop.
"""

from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from bgai.core.errors import InvalidDiceError, InvalidPositionError

BOARD_SIZE = 26
OWN_BAR = 25
OPP_BAR = 0
CHECKERS = 15

#: The opening position, from the side of the player on roll (read-only).
START_BOARD = np.zeros(BOARD_SIZE, dtype=np.int8)
START_BOARD[[24, 13, 8, 6]] = [2, 5, 3, 5]
START_BOARD[[1, 12, 17, 19]] = [-2, -5, -3, -5]
START_BOARD.flags.writeable = False

_SOURCES = np.arange(1, BOARD_SIZE, dtype=np.int16)  # points a checker can leave: 1..24 and the bar (25)

# Inside the generator boards are 32 bytes wide (26 used, 6 zero) so that each one reads as four uint64 words:
# a free, exact key for finding duplicates.
_WIDE = 32
_HASH_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93], dtype=np.uint64)
_GROUP_MIX = np.uint64(0xFF51AFD7ED558CCD)
_ROW_BYTES = np.dtype((np.void, _WIDE))
_ROW_LIMIT = 1 << 24
_ROW_BITS = np.uint64(_ROW_LIMIT - 1)
_HASH_BITS = ~_ROW_BITS


class Afterstates(NamedTuple):
    """The legal plays of a batch, one row per distinct afterstate.

    ``after[i]`` is seen from the opponent (the player on roll next) and came from position ``owner[i]``; rows are
    grouped by owner in ascending order and every input position owns at least one row (a roll with no legal play
    yields the switched position). With ``return_steps``, ``steps[i]`` holds the checker steps of one play leading
    there, as (from, to, hit) rows in the mover's numbering, padded with -1 (``to <= 0`` is borne off).
    """

    after: np.ndarray
    owner: np.ndarray
    steps: np.ndarray | None = None


def switch(boards: np.ndarray) -> np.ndarray:
    """The same positions seen from the other player (works on one board or a batch)."""
    return np.negative(np.asarray(boards)[..., ::-1]).astype(np.int8)


def _first_of_each(group: np.ndarray, wide: np.ndarray) -> np.ndarray:
    """Mask keeping one row of each distinct (group, board), in the rows' original order.

    Each row gets a 40-bit hash of its four words and its group, with its row number in the low 24 bits; one
    plain sort of those keys puts equal rows side by side, and rows whose hashes match are then compared in full,
    so the result is exact. Should two different rows share a hash, an exact sort on all words decides instead.
    """
    n = len(group)
    keep = np.ones(n, dtype=bool)
    if n < 2:
        return keep
    words = wide.view(np.uint64)
    g = group.astype(np.uint64)
    if n < _ROW_LIMIT:
        with np.errstate(over="ignore"):
            h = g * _GROUP_MIX
            for i in range(4):
                h += words[:, i] * _HASH_MIX[i]
            h ^= h >> np.uint64(29)
            h *= _HASH_MIX[0]
        keys = np.sort((h & _HASH_BITS) | np.arange(n, dtype=np.uint64))
        rows = (keys & _ROW_BITS).astype(np.int64)
        pairs = np.flatnonzero((keys[1:] ^ keys[:-1]) <= _ROW_BITS)
        a, b = rows[pairs], rows[pairs + 1]
        rows_as_bytes = wide.view(_ROW_BYTES).ravel()
        same = (g[a] == g[b]) & (rows_as_bytes[a] == rows_as_bytes[b])
        if same.all():
            keep[b] = False
            return keep
    order = np.lexsort((*words.T[::-1], g))
    ws, gs = words[order], g[order]
    same = (gs[1:] == gs[:-1]) & (ws[1:] == ws[:-1]).all(axis=1)
    keep[order[1:][same]] = False
    return keep


def validate_dice(dice: np.ndarray) -> np.ndarray:
    dice = np.asarray(dice)
    if dice.ndim != 2 or dice.shape[1] != 2:
        raise InvalidDiceError(f"dice must have shape (N, 2), got {dice.shape}")
    if not np.issubdtype(dice.dtype, np.integer):
        raise InvalidDiceError(f"dice must be integers, got dtype {dice.dtype}")
    bad = (dice < 1) | (dice > 6)
    if bad.any():
        row = int(np.argwhere(bad.any(axis=1))[0, 0])
        raise InvalidDiceError(f"each die must be in 1..6, got {tuple(int(d) for d in dice[row])} in row {row}")
    return dice.astype(np.int8)


def validate_boards(boards: np.ndarray) -> np.ndarray:
    """Check a batch of boards for shape, bar signs and checker counts; return it as int8."""
    boards = np.asarray(boards)
    if boards.ndim != 2 or boards.shape[1] != BOARD_SIZE:
        raise InvalidPositionError(f"boards must have shape (N, {BOARD_SIZE}), got {boards.shape}")
    if not np.issubdtype(boards.dtype, np.integer):
        raise InvalidPositionError(f"boards must be integers, got dtype {boards.dtype}")
    # Comparisons first, sums after: entries beyond +-15 are refused before anything is summed (a sum of huge
    # entries would wrap around in int64).
    checks = [
        ("the on-roll player's bar (index 25) holds opposing checkers", lambda: boards[:, OWN_BAR] < 0),
        ("the opponent's bar (index 0) holds the on-roll player's checkers", lambda: boards[:, OPP_BAR] > 0),
        (f"a point holds more than {CHECKERS} checkers", lambda: ((boards > CHECKERS) | (boards < -CHECKERS)).any(1)),
        (f"the on-roll player has more than {CHECKERS} checkers",
         lambda: np.where(boards > 0, boards, 0).astype(np.int64).sum(1) > CHECKERS),
        (f"the opponent has more than {CHECKERS} checkers",
         lambda: np.where(boards < 0, -boards.astype(np.int64), 0).sum(1) > CHECKERS),
    ]
    for what, check in checks:
        bad = check()
        if bad.any():
            raise InvalidPositionError(f"{what} (row {int(np.argmax(bad))})")
    return boards.astype(np.int8)


def _step(boards: np.ndarray, die: np.ndarray, limit: np.ndarray, must: np.ndarray):
    """Every legal single-checker move of ``die[k]`` pips on ``boards[k]``, from sources the row still allows.

    ``limit[k]``: highest source allowed; ``must[k] >= 0``: only a checker on that point, or a bear-off, may move.
    Returns (parent row, source point, target point, hit?, child boards).
    """
    occupied = boards[:, 1:BOARD_SIZE] > 0  # column j is point j + 1; the last column is the bar
    all_home = ~np.any(occupied[:, 6:], axis=1, keepdims=False)
    highest = BOARD_SIZE - 1 - np.argmax(occupied[:, ::-1], axis=1)
    own = occupied & (_SOURCES <= limit[:, None])
    own[occupied[:, -1], :-1] = False  # checkers on the bar enter before anything else moves
    restricted = np.flatnonzero(must >= 0)
    if len(restricted):
        r = restricted
        own[r] &= (_SOURCES == must[r, None]) | (all_home[r, None] & (_SOURCES <= die[r, None]))
    flat = np.flatnonzero(own)
    k, src = np.divmod(flat, BOARD_SIZE - 1)
    src += 1
    tgt = src - die[k]
    inside = tgt >= 1
    landing = boards[k, np.maximum(tgt, 0)]
    # Bearing off: all checkers home; exact, or from the highest occupied point.
    may_bear_off = all_home[k] & ((tgt == 0) | (src == highest[k]))
    legal = np.where(inside, landing >= -1, may_bear_off)
    hit = (inside & (landing == -1))[legal]

    k, src = np.divmod(flat[legal], BOARD_SIZE - 1)
    src += 1
    tgt = src - die[k]
    inside = tgt >= 1
    child = boards[k]
    rows = np.arange(len(k))
    child[rows, src] -= 1
    child[rows[hit], OPP_BAR] -= 1
    r, t = rows[inside], tgt[inside]
    child[r, t] = np.where(hit[inside], 1, child[r, t] + 1)
    return k, src, tgt, hit, child


def single_steps(boards: np.ndarray, dice: np.ndarray):
    """Every legal single-checker move of ``dice[k]`` pips on ``boards[k]`` (N×26, on-roll view), one die at a time.

    The rule of one checker step, the same one the generator expands: checkers on the bar enter first; a checker
    lands on an open point; bearing off needs all checkers home and is exact or from the highest point. Whether a
    step can be part of a legal play of the whole roll is for the caller to check against ``afterstates``.
    Returns (parent row, source point, target point (0: borne off), hit?, child boards in the mover's view).
    """
    boards = np.asarray(boards, dtype=np.int8)
    dice = np.asarray(dice, dtype=np.int16)
    k, src, tgt, hit, child = _step(boards, dice, np.full(len(boards), OWN_BAR, dtype=np.int16),
                                    np.full(len(boards), -1, dtype=np.int16))
    return k, src, np.maximum(tgt, 0), hit, child


_POOL: ThreadPoolExecutor | None = None


_LOCAL = threading.local()


@contextlib.contextmanager
def one_thread():
    """Within it, this thread expands and encodes its boards itself (``threads()`` is 1 here): for work that is
    already spread over threads of its own (a rollout's chunks of trials)."""
    before = getattr(_LOCAL, "single", False)
    _LOCAL.single = True
    try:
        yield
    finally:
        _LOCAL.single = before


def threads() -> int:
    """Threads that expand chunks in parallel: ``BGAI_THREADS``, else the cores this process may use (at most 2);
    1 inside ``one_thread``.

    numpy releases the interpreter lock inside its array loops, so two threads keep two cores busy.
    """
    if getattr(_LOCAL, "single", False):
        return 1
    value = os.environ.get("BGAI_THREADS")
    if value:
        return max(1, int(value))
    return min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None or _POOL._max_workers != threads():
        _POOL = ThreadPoolExecutor(threads(), thread_name_prefix="bgai-movegen")
    return _POOL


def chunk_size(n: int, workers: int) -> int:
    """Positions expanded together. One thread runs fastest on chunks of about 1,024 (their rows stay in the
    processor's cache); several threads want larger chunks, so that numpy works longer between the moments it
    holds the interpreter lock, but at least one chunk each (docs/figures.md, "Tuning constants")."""
    if workers == 1:
        return 1024
    return int(min(4096, max(512, -(-n // workers))))


def afterstates(boards, dice, *, return_steps: bool = False, validate: bool = True) -> Afterstates:
    """All distinct legal afterstates of ``boards`` (N×26, on-roll view) with ``dice`` (N×2).

    Returns ``(after, owner[, steps])``: ``after`` M×26 seen from the opponent, ``owner`` the index of the position
    each row came from. See ``Afterstates``. The compiled kernel (``bgai.core.kernels.afterstates_of``) expands
    them; ``reference_afterstates`` is the numpy generator of the same rows in the same order, which the tests hold
    it to (the kernel is several times faster on the few positions of a move).
    """
    boards = validate_boards(boards) if validate else np.asarray(boards, dtype=np.int8)
    dice = validate_dice(dice) if validate else np.asarray(dice, dtype=np.int8)
    if len(dice) != len(boards):
        raise InvalidDiceError(f"got {len(boards)} boards but {len(dice)} rolls")
    from bgai.core import kernels

    def expand(b, d, steps):
        after, owner, found = kernels.afterstates_of(b, d, steps)
        return Afterstates(after, owner, found if steps else None)
    if len(boards) <= 512:  # one chunk whatever the threads (chunk_size is at least 512)
        return expand(boards, dice, return_steps)
    workers = threads()
    size = chunk_size(len(boards), workers)
    if len(boards) <= size:
        return expand(boards, dice, return_steps)
    jobs = [(boards[i:i + size], dice[i:i + size], return_steps) for i in range(0, len(boards), size)]
    parts = list(_pool().map(lambda job: expand(*job), jobs)) if workers > 1 else [expand(*j) for j in jobs]
    return Afterstates(
        np.concatenate([p.after for p in parts]),
        np.concatenate([p.owner + i * size for i, p in enumerate(parts)]),
        np.concatenate([p.steps for p in parts]) if return_steps else None,
    )


def reference_afterstates(boards, dice, *, return_steps: bool = False) -> Afterstates:
    """``afterstates`` by the numpy generator below, a frontier of partial plays a die at a time: the readable
    reference the compiled kernel is tested against (the same rows in the same order). Not a hot path."""
    return _afterstates(validate_boards(boards), validate_dice(dice), return_steps)


def _afterstates(boards: np.ndarray, dice: np.ndarray, return_steps: bool) -> Afterstates:
    n = len(boards)
    hi = dice.max(axis=1).astype(np.int16)
    lo = dice.min(axis=1).astype(np.int16)
    doubles = hi == lo

    # Each frontier row carries the dice it has left to play, in order (0 = none). Non-doubles start twice, once
    # for each order of the dice; doubles once, with four dice. Rows stay grouped by position throughout.
    #
    # Most orders of the same steps reach the same afterstate; two restrictions skip those repeats before they
    # are made, and the final merge removes the few that remain:
    # * Doubles play their steps from non-increasing source points. Any legal sequence stays legal sorted that
    #   way: the bar (25) enters first, checkers come home (sources >= 7) before bearing off, checkers above a
    #   point leave before a higher die bears off from it, and a checker is on its source before it moves on.
    # * Non-doubles, smaller die first: the larger die must then move the checker that just moved, or bear off,
    #   unless the position began with checkers on the bar. Any other such play, taken larger die first, is the
    #   same legal play (the first step cannot depend on a step that did not move its checker, open the bar, or
    #   bring checkers home), and so is already found in the other order.
    twice = np.where(doubles, 1, 2)
    owner = np.repeat(np.arange(n, dtype=np.int64), twice)
    second_order = np.zeros(len(owner), dtype=bool)
    second_order[np.cumsum(twice)[~doubles] - 1] = True
    h, l = hi[owner], lo[owner]
    plan = np.column_stack([
        np.where(second_order, l, h),
        np.where(second_order, h, l),
        np.where(doubles[owner], h, 0),
        np.where(doubles[owner], h, 0),
    ]).astype(np.int16)
    wide = np.zeros((n, _WIDE), dtype=np.int8)
    wide[:, :BOARD_SIZE] = boards
    frontier = wide[owner]
    used = np.zeros(len(owner), dtype=np.int16)
    limit = np.full(len(owner), OWN_BAR, dtype=np.int16)
    must = np.full(len(owner), -1, dtype=np.int16)
    restrict_next = second_order & (boards[owner, OWN_BAR] == 0)
    # (with return_steps only: the checker steps of each candidate so far)
    history = np.full((len(owner), 4, 3), -1, dtype=np.int8) if return_steps else np.zeros((0, 4, 3), np.int8)

    # Candidates: the position itself (no play) and every partial or complete play. The legal ones are those that
    # use the most dice pips for their position.
    cand = [(wide, np.arange(n, dtype=np.int64), np.zeros(n, np.int16),
             np.full((n, 4, 3), -1, dtype=np.int8) if return_steps else None)]
    for level in range(4):
        if level > 0:
            live = plan[:, level] > 0
            if not live.any():
                break
            frontier, owner, used, plan, limit, must = (
                frontier[live], owner[live], used[live], plan[live], limit[live], must[live])
            if return_steps:
                history = history[live]
        die = plan[:, level]
        parent, src, tgt, hit, frontier = _step(frontier, die, limit, must)
        owner, used, plan = owner[parent], used[parent] + die[parent], plan[parent]
        limit = np.where(doubles[owner], src, OWN_BAR).astype(np.int16)
        if level == 0:
            must = np.where(restrict_next[parent], np.maximum(tgt, 0), -1).astype(np.int16)
        else:
            must = np.full(len(owner), -1, dtype=np.int16)
        if return_steps:
            history = history[parent]
            history[:, level, 0] = src
            history[:, level, 1] = np.maximum(tgt, 0)
            history[:, level, 2] = hit
        cand.append((frontier, owner, used, history if return_steps else None))

    best = np.zeros(n, dtype=np.int16)
    for _, o, u, _ in cand:
        np.maximum.at(best, o, u)
    # All legal plays of one position use the same dice, so they come from one level: filter each level, then
    # merge and restore the grouping by position.
    parts = [(b[u == best[o]], o[u == best[o]], None if s is None else s[u == best[o]]) for b, o, u, s in cand]
    all_wide = np.concatenate([p[0] for p in parts])
    all_owner = np.concatenate([p[1] for p in parts])
    keep = _first_of_each(all_owner, all_wide)
    rows = np.flatnonzero(keep)
    rows = rows[np.argsort(all_owner[rows], kind="stable")]
    after = np.negative(all_wide[rows][:, BOARD_SIZE - 1::-1])
    steps = np.concatenate([p[2] for p in parts])[rows] if return_steps else None
    return Afterstates(after, all_owner[rows], steps)


def count_moves(owner: np.ndarray, n: int) -> np.ndarray:
    """Number of afterstates of each of the ``n`` positions."""
    return np.bincount(owner, minlength=n)


def group_starts(owner: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(first row, row count) of each of the ``n`` groups of a grouped ``owner`` array (int64 arrays)."""
    if len(owner) >= 4096 and owner.dtype == np.int64:  # a compiled pass that lets other threads run meanwhile
        from bgai.core import kernels

        return kernels.group_starts_of(owner, n)
    counts = np.bincount(owner, minlength=n)
    return np.cumsum(counts) - counts, counts


def segment_argmax(scores: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """For each group of the grouped ``owner`` array, the index of its highest score (the first one on ties)."""
    starts, _ = group_starts(owner, n)
    best = np.maximum.reduceat(scores, starts)
    top = np.flatnonzero(scores >= best[owner])
    first = np.r_[True, owner[top][1:] != owner[top][:-1]]
    return top[first]
