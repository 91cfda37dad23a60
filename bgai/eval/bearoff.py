"""Bear-off databases computed by bgai: exact endgames where every checker of both sides is in its home board.

One-sided database
------------------
Every arrangement of up to 15 checkers on a side's six home points (54,264 of them, the empty board included),
with two distributions, each for play that minimises its expected number of rolls:

* ``rolls``: the chance that bearing all of them off takes exactly k rolls, k = 0..``MAX_ROLLS - 1``;
* ``first_off``: the chance that the first checker comes off at roll k (0 when one is already off). Only a side
  that still has all 15 checkers can lose a gammon, and this is what saves it.

Both are dynamic programming over the positions in order of pip count: a roll's play always lowers the pips, so
the positions a play reaches are known before the position it leaves. Every roll's plays come from bgai's own
move generator (``bgai.core.movegen``).

Two-sided database
------------------
Every pair of positions of up to 6 checkers each (924 × 924), exactly:

* ``win[i, j]``: the cubeless chance that the player on roll with position ``i`` wins against ``j``, both sides
  playing to maximise their winning chances. With nine checkers off each, no one can be gammoned.
* ``no_double[s, i, j]``: the money equity of the player on roll, per unit of the cube, if it does not double
  now, with perfect cube and checker play from then on by both sides; the cube centered (``s = 0``), owned by the
  player on roll (``1``) or by its opponent (``2``). Before its roll the player on roll may double when it can;
  the opponent takes or passes. (No Jacoby rule: there are no gammons. No beavers.) From the side of the player
  on roll::

      ND_s(i, j) = mean over the 36 rolls of  max over plays i -> i'  of  -E_s'(j, i')     (s' = s seen by them)
      DT(i, j)   = 2 ND_2(i, j)          (they take and own the cube at twice the stake)
      E_0 = max(ND_0, min(DT, 1)),  E_1 = max(ND_1, min(DT, 1)),  E_2 = ND_2

  ``E`` is the equity with the best cube action (``cubeful_equity``). Both tables are computed pair level by pair
  level in order of the two sides' total pip count.

Using them
----------
``BearoffDatabase.probabilities(boards)`` gives the five cumulative probabilities of ``bgai.eval.network`` for boards
where both sides are bearing off (``is_bearoff``): exact from the two-sided table when both sides have at most six
checkers left, otherwise from the one-sided distributions, as if each side bore off on its own (the usual race
estimate; it ignores that a side trailing in the race may choose other plays):

    win                   = sum_n P_us(n) * P_them(rolls >= n)          (we roll first)
    win_gammon            = sum_n P_us(n) * P_them(first off >= n)      (they have all 15 checkers)
    lose_gammon           = sum_m P_them(m) * P_us(first off >= m + 1)
    backgammons           = 0                                           (no checker is left in a winner's home)

The file
--------
The tables ship with the package as one versioned, checksummed file, ``bgai/data/bearoff-v1.npz``, written by
``python -m bgai.eval.bearoff --write bgai/data/bearoff-v1.npz`` (a test checks it equals a fresh build). Building
them runs the move generator over every (position, roll) pair of the tables; loading the file is much faster, so a
player's first bear-off hint does not wait for a build (docs/bearoffs.md gives both times).

Without the shipped file (a source tree that lacks it, or a damaged one, reported on stderr) the tables are built on
first use, with a progress bar, and cached under the user's cache directory (``$BGAI_CACHE_DIR``, else
``$XDG_CACHE_HOME/bgai``, else ``~/.cache/bgai``). A file that is unreadable or whose checksum disagrees is never
used.
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
import threading
from functools import cached_property
from pathlib import Path

import numpy as np

from bgai.core.cube import CENTERED, ON_ROLL, OPPONENT
from bgai.core.dice import ROLL_WEIGHTS, ROLLS
from bgai.core.errors import BgaiError
from bgai.core.files import DATA, write_atomically
from bgai.core.movegen import BOARD_SIZE, CHECKERS, afterstates, segment_argmax
from bgai.core.phase import is_bearoff  # noqa: F401 (the positions this database answers: its API too)

POINTS = 6
MAX_ROLLS = 32  # 15 checkers on the 6 point need at most 30 rolls (checked when the table is built)
TWO_SIDED_CHECKERS = 6
VERSION = 1
FILE_NAME = f"bearoff-v{VERSION}.npz"
SHIPPED = DATA / FILE_NAME




class BearoffError(BgaiError):
    """A position outside the database, or a database file that cannot be used."""


# Positions and their ranks ----------------------------------------------------------------------------------------


def positions(max_checkers: int = CHECKERS) -> np.ndarray:
    """Every arrangement of at most ``max_checkers`` checkers on the six home points, as (K, 6) int8 counts of
    points 1..6, in rank order (lexicographic: ``rank(positions(n), n) == arange(K)``).

    >>> len(positions()), len(positions(6))
    (54264, 924)
    >>> positions(2)[:4].tolist()
    [[0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 2], [0, 0, 0, 0, 1, 0]]
    """
    rows = np.zeros((1, 0), dtype=np.int8)
    for _ in range(POINTS):
        used = rows.sum(axis=1, dtype=np.int64)
        counts = max_checkers - used + 1  # values 0..budget on the next point
        parent = np.repeat(np.arange(len(rows)), counts)
        value = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        rows = np.column_stack([rows[parent], value.astype(np.int8)])
    return rows


def _rank_tables(max_checkers: int) -> np.ndarray:
    """``t[k, budget, c]``: how many arrangements come before value ``c`` on point ``k + 1`` (0-based k), given
    ``budget`` checkers left for points k+1..6: sum over v < c of C(budget - v + 5 - k, 5 - k)."""
    t = np.zeros((POINTS, max_checkers + 1, max_checkers + 2), dtype=np.int64)
    for k in range(POINTS):
        rest = POINTS - 1 - k
        for budget in range(max_checkers + 1):
            for c in range(1, budget + 2):
                t[k, budget, c] = t[k, budget, c - 1] + math.comb(budget - (c - 1) + rest, rest)
    return t


_TABLES: dict[int, np.ndarray] = {}


def rank(counts: np.ndarray, max_checkers: int = CHECKERS) -> np.ndarray:
    """The index in ``positions(max_checkers)`` of each row of ``counts`` (N, 6): checkers on points 1..6."""
    table = _TABLES.get(max_checkers)
    if table is None:
        table = _TABLES[max_checkers] = _rank_tables(max_checkers)
    counts = np.asarray(counts, dtype=np.int64)
    budget = np.full(len(counts), max_checkers, dtype=np.int64)
    index = np.zeros(len(counts), dtype=np.int64)
    for k in range(POINTS):
        index += table[k, budget, counts[:, k]]
        budget -= counts[:, k]
    return index


def home_counts(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N, 6) checkers on points 1..6 of the player on roll, and of the opponent (in its own numbering)."""
    boards = np.asarray(boards)
    return np.maximum(boards[:, 1:7], 0), np.maximum(-boards[:, 24:18:-1], 0)


# Building -----------------------------------------------------------------------------------------------------


def _successors(pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every position (rank order) and each of the 21 rolls, the ranks its legal plays reach.

    Returns ``(pair, succ)``: ``pair = position * 21 + roll`` (grouped, ascending) and the successor's rank. The
    empty position (rank 0) has no plays: its pairs are left out.
    """
    live = np.arange(1, len(pos))
    boards = np.zeros((len(live), BOARD_SIZE), dtype=np.int8)
    boards[:, 1:7] = pos[live]
    pairs = np.repeat(live, len(ROLLS)) * len(ROLLS) + np.tile(np.arange(len(ROLLS)), len(live))
    moves = afterstates(np.repeat(boards, len(ROLLS), axis=0), np.tile(ROLLS, (len(live), 1)), validate=False)
    mine, _ = home_counts(-moves.after[:, ::-1])  # the plays seen from the mover again
    return pairs[moves.owner], rank(mine)


def _one_sided(pos: np.ndarray, pair: np.ndarray, succ: np.ndarray, done: np.ndarray) -> np.ndarray:
    """Distributions of the rolls until ``done`` (K,) holds, for play minimising their expected number.

    ``done`` positions have the distribution "0 rolls"; every other position's plays lead to positions of
    fewer pips, so levels of equal pip count are computed in increasing order.
    """
    dist = np.zeros((len(pos), MAX_ROLLS), dtype=np.float64)
    dist[done, 0] = 1.0
    mean = np.zeros(len(pos))
    pips = pos.astype(np.int64) @ np.arange(1, POINTS + 1)
    order = np.argsort(pips[pair // len(ROLLS)], kind="stable")
    pair, succ = pair[order], succ[order]
    level_of_pair = pips[pair // len(ROLLS)]
    bounds = np.searchsorted(level_of_pair, np.arange(pips.max() + 2))
    for level in range(1, pips.max() + 1):
        p, s = pair[bounds[level]:bounds[level + 1]], succ[bounds[level]:bounds[level + 1]]
        if not len(p):
            continue
        keys, group = np.unique(p, return_inverse=True)  # the (position, roll) pairs of this level
        chosen = s[segment_argmax(-mean[s], group, len(keys))]
        position, roll = np.divmod(keys, len(ROLLS))
        if dist[chosen, -1].any():
            raise AssertionError(f"a bear-off needs more than {MAX_ROLLS - 1} rolls; raise MAX_ROLLS")
        rows, local = np.unique(position, return_inverse=True)
        level_dist = np.zeros((len(rows), MAX_ROLLS))
        # (numpy's stubs refuse a slice in add.at's index; numpy takes it)
        np.add.at(level_dist, (local, slice(1, None)), dist[chosen, :-1] * ROLL_WEIGHTS[roll, None])  # type: ignore[arg-type]
        live = ~done[rows]
        dist[rows[live]] = level_dist[live]
        mean[rows[live]] = level_dist[live] @ np.arange(MAX_ROLLS)
    return dist


def best_cube_action(no_double: np.ndarray) -> np.ndarray:
    """(3, ...) equities with the best cube action from the (3, ...) no-double equities of the three cube states."""
    double = np.minimum(2.0 * no_double[OPPONENT], 1.0)
    return np.stack([np.maximum(no_double[CENTERED], double), np.maximum(no_double[ON_ROLL], double),
                     no_double[OPPONENT]])


def _two_sided(pos6: np.ndarray, pair: np.ndarray, succ: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two-sided tables (see the module docstring) for the positions ``pos6`` (K, 6) of up to 6 checkers,
    given their plays: ``pair = position * 21 + roll`` and ``succ`` ranks within ``pos6``."""
    k = len(pos6)
    pips = pos6.astype(np.int64) @ np.arange(1, POINTS + 1)
    win = np.zeros((k, k))
    no_double = np.zeros((3, k, k))
    best = np.zeros((3, k, k))  # E_s, the equity with the best cube action
    no_double[:, :, 0] = best[:, :, 0] = -1.0  # the opponent has borne off: the player "on roll" has lost
    # Each position's plays, all rolls together: entries (roll, successor), grouped by position.
    position = pair // len(ROLLS)
    entries_start = np.searchsorted(position, np.arange(k + 1))
    grid_i, grid_j = np.meshgrid(np.arange(1, k), np.arange(1, k), indexing="ij")
    i, j = grid_i.ravel(), grid_j.ravel()
    total = pips[i] + pips[j]
    order = np.argsort(total, kind="stable")
    i, j, total = i[order], j[order], total[order]
    bounds = np.searchsorted(total, np.arange(total.max() + 2))
    for level in range(total.min(), total.max() + 1):
        li, lj = i[bounds[level]:bounds[level + 1]], j[bounds[level]:bounds[level + 1]]
        if not len(li):
            continue
        n_entries = entries_start[li + 1] - entries_start[li]
        which = np.repeat(np.arange(len(li)), n_entries)
        offset = np.arange(n_entries.sum()) - np.repeat(np.cumsum(n_entries) - n_entries, n_entries)
        e = entries_start[li][which] + offset
        them, nxt = lj[which], succ[e]
        key = which * len(ROLLS) + pair[e] % len(ROLLS)  # (pair of the level, roll), grouped
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        roll = key[starts] % len(ROLLS)
        owner = key[starts] // len(ROLLS)

        def expect(values: np.ndarray, starts=starts, roll=roll, owner=owner, li=li) -> np.ndarray:
            best = np.maximum.reduceat(values, starts) * ROLL_WEIGHTS[roll]
            return np.bincount(owner, weights=best, minlength=len(li))

        win[li, lj] = expect(1.0 - win[them, nxt])
        nd = no_double[:, li, lj]
        nd[CENTERED] = expect(-best[CENTERED, them, nxt])
        nd[ON_ROLL] = expect(-best[OPPONENT, them, nxt])
        nd[OPPONENT] = expect(-best[ON_ROLL, them, nxt])
        no_double[:, li, lj] = nd
        best[:, li, lj] = best_cube_action(nd)
    return win, no_double


def build(progress: bool = False) -> dict[str, np.ndarray]:
    """Compute every table from scratch (see the module docstring); ``progress``: a bar on stderr, one step per
    table."""
    from tqdm.auto import tqdm

    bar = tqdm(total=4, desc="bear-off database", unit="table", disable=not progress, leave=False)
    pos = positions()
    pair, succ = _successors(pos)
    bar.update()
    checkers = pos.sum(axis=1)
    rolls = _one_sided(pos, pair, succ, checkers == 0)
    bar.update()
    first_off = _one_sided(pos, pair, succ, checkers < CHECKERS)
    bar.update()
    small = checkers <= TWO_SIDED_CHECKERS
    to_small = np.full(len(pos), -1, dtype=np.int64)
    to_small[small] = rank(pos[small], TWO_SIDED_CHECKERS)
    keep = small[pair // len(ROLLS)]
    small_pair = to_small[pair[keep] // len(ROLLS)] * len(ROLLS) + pair[keep] % len(ROLLS)
    order = np.argsort(small_pair, kind="stable")
    win, no_double = _two_sided(positions(TWO_SIDED_CHECKERS), small_pair[order], to_small[succ[keep]][order])
    bar.update()
    bar.close()
    return {
        "rolls": rolls.astype(np.float32),
        "first_off": first_off[checkers == CHECKERS].astype(np.float32),
        "win": win.astype(np.float32),
        "no_double": no_double.astype(np.float32),
    }


# The cached file ----------------------------------------------------------------------------------------------


def cache_dir() -> Path:
    """Where the database file lives: ``$BGAI_CACHE_DIR``, else ``$XDG_CACHE_HOME/bgai``, else ``~/.cache/bgai``."""
    if os.environ.get("BGAI_CACHE_DIR"):
        return Path(os.environ["BGAI_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "bgai"


def _checksum(tables: dict[str, np.ndarray]) -> str:
    digest = hashlib.sha256()
    for name in sorted(tables):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(tables[name]).tobytes())
    return digest.hexdigest()


def save(tables: dict[str, np.ndarray], path: Path) -> None:
    """Write the tables and their checksum to ``path`` atomically."""
    arrays: dict = {"version": np.int64(VERSION), "sha256": np.array(_checksum(tables)), **tables}
    write_atomically(path, lambda handle: np.savez_compressed(handle, **arrays))


_SHAPES = {
    "rolls": (len(positions()), MAX_ROLLS),
    "first_off": (math.comb(CHECKERS + POINTS - 1, POINTS - 1), MAX_ROLLS),
    "win": (924, 924),
    "no_double": (3, 924, 924),
}


def load(path: Path) -> dict[str, np.ndarray]:
    """Read and check a database file; ``BearoffError`` says what is wrong with it."""
    try:
        with np.load(path, allow_pickle=False) as data:
            contents = {name: data[name] for name in data.files}
    except Exception as error:  # zip, zlib and numpy raise many types for damaged files
        raise BearoffError(f"{path} is not a readable bear-off database ({type(error).__name__}: {error})") from None
    if int(contents.get("version", -1)) != VERSION:
        raise BearoffError(f"{path} is not a version {VERSION} bear-off database")
    for name, shape in _SHAPES.items():
        if name not in contents or contents[name].shape != shape:
            raise BearoffError(f"{path}: table {name} is missing or has the wrong shape")
    tables = {name: contents[name] for name in _SHAPES}
    if str(contents.get("sha256")) != _checksum(tables):
        raise BearoffError(f"{path}: checksum mismatch, the file is corrupt")
    return tables


_LOCK = threading.Lock()
_DATABASE: BearoffDatabase | None = None


def database() -> BearoffDatabase:
    """The bear-off database: the file shipped with the package, else the user's cached copy, else built (and
    cached) on first use."""
    global _DATABASE
    with _LOCK:
        if _DATABASE is None:
            _DATABASE = BearoffDatabase(_shipped() or load_or_build(cache_dir() / FILE_NAME))
        return _DATABASE


def _shipped() -> dict[str, np.ndarray] | None:
    if not SHIPPED.exists():
        return None
    try:
        return load(SHIPPED)
    except BearoffError as error:
        print(f"bgai: {error}; using the cached copy or building one instead", file=sys.stderr)
        return None


def load_or_build(path: Path, progress: bool = True) -> dict[str, np.ndarray]:
    """The tables of ``path``; built and written there when it is missing, or rebuilt when it is damaged."""
    if path.exists():
        try:
            return load(path)
        except BearoffError as error:
            print(f"bgai: {error}; rebuilding it", file=sys.stderr)
    if progress:
        print(f"bgai: building the bear-off database (once, cached in {path})", file=sys.stderr)
    tables = build(progress=progress)
    try:
        save(tables, path)
    except OSError as error:
        print(f"bgai: cannot cache the bear-off database at {path} ({error}); it is rebuilt next time",
              file=sys.stderr)
    return tables


# Queries ------------------------------------------------------------------------------------------------------


class BearoffDatabase:
    """The tables, and the evaluation of bear-off positions from them (see the module docstring)."""

    def __init__(self, tables: dict[str, np.ndarray]) -> None:
        self.rolls = tables["rolls"].astype(np.float64)
        self.win = tables["win"]
        self.no_double = tables["no_double"]
        pos = positions()
        self.checkers = pos.sum(axis=1)
        # first_off for every position: 0 rolls when a checker is already off.
        self.first_off = np.zeros_like(self.rolls)
        self.first_off[self.checkers < CHECKERS, 0] = 1.0
        self.first_off[self.checkers == CHECKERS] = tables["first_off"]

    @cached_property
    def _tails(self) -> tuple[np.ndarray, np.ndarray]:
        """P(rolls >= n) and P(first off >= n) for n = 0..MAX_ROLLS - 1."""
        def tail(dist):
            return np.cumsum(dist[:, ::-1], axis=1)[:, ::-1]
        return tail(self.rolls), tail(self.first_off)

    def ranks(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One-sided ranks of the player on roll's and the opponent's home boards."""
        ours, theirs = home_counts(boards)
        return rank(ours), rank(theirs)

    def probabilities(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) cumulative probabilities for the player on roll of N bear-off positions (``is_bearoff``)."""
        boards = np.asarray(boards)
        if not is_bearoff(boards).all():
            raise BearoffError("some positions are not bear-offs: every checker must be in its home board")
        us, them = self.ranks(boards)
        rolls_tail, first_tail = self._tails
        probs = np.zeros((len(boards), 5))
        # P(we finish at our n-th roll) * P(they need n rolls or more), n >= 1.
        probs[:, 0] = (self.rolls[us, 1:] * rolls_tail[them, 1:]).sum(axis=1)
        probs[:, 1] = (self.rolls[us, 1:] * first_tail[them, 1:]).sum(axis=1)
        # They finish at their m-th roll, after we have rolled m times; we are gammoned if we still need more.
        probs[:, 3] = (self.rolls[them, 1:-1] * first_tail[us, 2:]).sum(axis=1)
        exact = (self.checkers[us] <= TWO_SIDED_CHECKERS) & (self.checkers[them] <= TWO_SIDED_CHECKERS)
        if exact.any():
            ours, theirs = home_counts(boards[exact])
            probs[exact] = 0.0
            probs[exact, 0] = self.win[rank(ours, TWO_SIDED_CHECKERS), rank(theirs, TWO_SIDED_CHECKERS)]
        return probs.astype(np.float32)

    def exact(self, boards: np.ndarray) -> np.ndarray:
        """(N,) True where ``probabilities`` is exact: both sides bearing off with at most six checkers each."""
        boards = np.asarray(boards)
        ours, theirs = home_counts(boards)
        return is_bearoff(boards) & (ours.sum(axis=1) <= TWO_SIDED_CHECKERS) & (
            theirs.sum(axis=1) <= TWO_SIDED_CHECKERS)

    def cube_equities(self, boards: np.ndarray, cube_owner) -> tuple[np.ndarray, np.ndarray]:
        """(no double, double/take) money equities per unit of the cube for the player on roll, before its roll,
        with perfect play afterwards; ``cube_owner`` (N,) ``CENTERED``, ``ON_ROLL`` (by the player on roll) or
        ``OPPONENT``. Double/take is NaN where the player on roll may not double. Only for positions where
        ``exact`` holds."""
        boards = np.asarray(boards)
        if not self.exact(boards).all():
            raise BearoffError("cubeful equities are exact only for bear-offs of at most six checkers a side")
        ours, theirs = home_counts(boards)
        i, j = rank(ours, TWO_SIDED_CHECKERS), rank(theirs, TWO_SIDED_CHECKERS)
        owner = np.broadcast_to(np.asarray(cube_owner), (len(boards),))
        nd = self.no_double[owner, i, j].astype(np.float64)
        dt = np.where(owner == OPPONENT, np.nan, 2.0 * self.no_double[OPPONENT, i, j])
        return nd, dt

    def cubeful_equity(self, boards: np.ndarray, cube_owner) -> np.ndarray:
        """(N,) money equity per unit of the cube with the best cube action now (see ``cube_equities``)."""
        nd, dt = self.cube_equities(boards, cube_owner)
        return np.where(np.isnan(dt), nd, np.maximum(nd, np.minimum(dt, 1.0)))


def main(argv: list[str] | None = None) -> int:
    """``python -m bgai.eval.bearoff --write FILE``: build the tables and write them to FILE (the shipped file is
    ``bgai/data/bearoff-v1.npz``)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bgai.eval.bearoff", description=main.__doc__)
    parser.add_argument("--write", required=True, metavar="FILE", help="where to write the database")
    args = parser.parse_args(argv)
    save(build(progress=True), Path(args.write))
    print(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
