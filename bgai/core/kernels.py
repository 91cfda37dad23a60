"""Compiled kernels (numba) for the rules' hot paths, whose numpy versions pay more in per-call overhead than in
work: the move generator (``afterstates_of``, ``bgai.core.movegen``), the phase of each board (``phases_of``,
``bgai.core.phase``), the end of a game and its points (``games_over``, ``points_of``), the groups of a batch's
afterstates (``group_starts_of``), distinct boards (``distinct_rows``) and the environments' action masks
(``dice_and_mask``, ``bgai.envs``); with the bit tricks the compiled encoder (``bgai.eval.encoding``) shares. The
network's passes are compiled in ``bgai.eval.kernels``, the encoder in ``bgai.eval.encoding``: each kernel sits in
the layer of what it computes, and the numpy version beside it is the readable statement the tests hold it equal to.

numba compiles each kernel the first time it is called in a process, or reads the compiled code cached beside
this file (``cache=True``) after the first run on a machine. Importing numba is slow next to the rest of a
command's start, so this module is imported only when a kernel is first needed (never by ``bgai --help`` or the
rules alone).
"""

from __future__ import annotations

import numba
import numpy as np

# De Bruijn multiply's table: the index of a 32-bit word's lowest set bit (``bgai.eval.encoding.lowest_bit``'s).
_DEBRUIJN_BIT = np.zeros(32, dtype=np.int64)
_DEBRUIJN_BIT[[((1 << i) * 0x077CB531 & 0xFFFFFFFF) >> 27 for i in range(32)]] = np.arange(32)


@numba.njit(cache=True, inline="always")
def _popcount(x: int) -> int:
    """Set bits of a 32-bit mask (a SWAR sum)."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & 0xFFFFFFFF) >> 24


@numba.njit(cache=True, inline="always")
def _lowest(x: int) -> int:
    """Index of the lowest set bit of a 32-bit mask x > 0 (a de Bruijn multiply, as bgai.eval.encoding.lowest_bit)."""
    return _DEBRUIJN_BIT[(((x & -x) * 0x077CB531) & 0xFFFFFFFF) >> 27]


@numba.njit(cache=True, inline="always")
def _highest(x: int) -> int:
    """Index of the highest set bit of a 32-bit mask x > 0: smear it down, count."""
    x |= x >> 1
    x |= x >> 2
    x |= x >> 4
    x |= x >> 8
    x |= x >> 16
    return _popcount(x) - 1


# Move generation ---------------------------------------------------------------------------------------------------


@numba.njit(cache=True, inline="always")
def _may_step(b: np.ndarray, s: int, d: int, limit: int, must: int, all_home: bool, highest: int) -> bool:
    """Whether one checker may move ``d`` pips from ``s`` on board ``b`` (the rule of ``bgai.core.movegen._step``)."""
    if b[s] <= 0 or s > limit:
        return False
    if b[25] > 0 and s != 25:  # checkers on the bar enter before anything else moves
        return False
    if must >= 0 and not (s == must or (all_home and s <= d)):
        return False
    t = s - d
    if t >= 1:
        return b[t] >= -1
    return all_home and (t == 0 or s == highest)


@numba.njit(cache=True, inline="always")
def _unmake(b: np.ndarray, occupied: int, s: int, t: int, hit: bool) -> int:
    """Take back the step of one checker from ``s`` to ``t`` (0 or less: borne off) on ``b``; the mover's points
    held afterwards (``occupied``'s bits)."""
    b[s] += 1
    occupied |= 1 << s
    if hit:
        b[0] += 1
        b[t] = -1
        occupied &= ~(1 << t)
    elif t >= 1:
        b[t] -= 1
        if b[t] == 0:
            occupied &= ~(1 << t)
    return occupied


#: Zobrist keys: one random 64-bit word for each point (0..25) and count (-16..15, at index count + 16); a board's
#: hash is the XOR of its points' words (fixed seed: the same hashes in every process).
_ZOBRIST = np.random.default_rng(20261204).integers(0, 2**63, size=(26, 32), dtype=np.int64).astype(np.uint64)
_TABLE = 8192  # the slots of afterstates_of's table of hashes: over twice the most distinct plays of a roll
_ROOM = 2400  # the rows one position may add: its distinct plays, at most 2,399 (bgai.envs.spaces.MAX_PLAYS)


@numba.njit(cache=True, nogil=True)
def afterstates_of(boards: np.ndarray, dice: np.ndarray, want_steps: bool):
    """``bgai.core.movegen.afterstates`` of (N, 26) int8 boards and (N, 2) dice: (after (M, 26) int8, owner (M,),
    steps (M, 4, 3) int8 or an empty array), the same rows in the same order.

    Each position is expanded depth first on one board, each step made and then unmade, the dice in the order the
    numpy generator uses (the larger die first, then the smaller first; doubles four times, from non-increasing
    sources), sources in increasing order (only the points the mover holds, read from a bit mask kept with the
    board): its plays come out in the order of the generator's breadth-first rows. The plays that use the most pips
    are kept, the first of each distinct afterstate: a board's Zobrist hash is updated with each step (a few table
    reads, not a pass over the board), and a table of the hashes seen, cleared by a new generation number rather
    than by a write to each slot, finds the repeats as they come."""
    n = boards.shape[0]
    cap = 24 * n + _ROOM
    after = np.empty((cap, 26), dtype=np.int8)
    owner = np.empty(cap, dtype=np.int64)
    steps = np.empty((cap if want_steps else 0, 4, 3), dtype=np.int8)
    m = 0
    zob = _ZOBRIST
    mask = _TABLE - 1
    stamp = np.zeros(_TABLE, dtype=np.int64)
    slot_row = np.empty(_TABLE, dtype=np.int64)
    slot_hash = np.empty(_TABLE, dtype=np.uint64)
    gen = 0
    board = np.empty(26, dtype=np.int8)
    hist = np.empty((4, 3), dtype=np.int64)  # the steps made to reach each level: source, target, hit
    hashes = np.empty(5, dtype=np.uint64)
    plan = np.zeros(4, dtype=np.int64)
    next_src = np.empty(4, dtype=np.int64)
    limit = np.empty(4, dtype=np.int64)
    must = np.empty(4, dtype=np.int64)
    home = np.empty(4, dtype=np.bool_)
    top = np.empty(4, dtype=np.int64)
    for p in range(n):
        hi, lo = max(dice[p, 0], dice[p, 1]), min(dice[p, 0], dice[p, 1])
        double = hi == lo
        orders = 1 if double else 2
        if m + _ROOM > after.shape[0]:  # room for all of its plays, made once per position
            cap = 2 * after.shape[0]
            grown = np.empty((cap, 26), dtype=np.int8)
            grown[:m] = after[:m]
            after = grown
            grown_owner = np.empty(cap, dtype=np.int64)
            grown_owner[:m] = owner[:m]
            owner = grown_owner
            if want_steps:
                grown_steps = np.empty((cap, 4, 3), dtype=np.int8)
                grown_steps[:m] = steps[:m]
                steps = grown_steps
        first = m  # this position's first output row
        best = 0
        gen += 1
        h0 = np.uint64(0)
        occupied = 0  # bit s set: the mover has a checker on point s (the bar is 25)
        for j in range(26):
            board[j] = boards[p, j]
            h0 ^= zob[j, board[j] + 16]
            if board[j] > 0:
                occupied |= 1 << j
        for order in range(orders):
            if double:
                plan[0] = plan[1] = plan[2] = plan[3] = hi
                depth_max = 4
            else:
                plan[0], plan[1] = (hi, lo) if order == 0 else (lo, hi)
                depth_max = 2
            restrict = order == 1 and boards[p, 25] == 0
            level = 0
            hashes[0] = h0
            next_src[0] = 1
            top[0] = _highest(occupied) if occupied else 0
            home[0] = top[0] <= 6
            limit[0] = 25
            must[0] = -1
            used = 0
            while level >= 0:
                moved = False
                d = plan[level]
                while True:
                    # the next source to try: the lowest point from next_src up that holds a checker of the mover
                    left = occupied & ~((1 << next_src[level]) - 1) & ((2 << limit[level]) - 1)
                    if board[25] > 0:  # checkers on the bar enter before anything else moves
                        left &= 1 << 25
                    if left == 0:
                        break
                    s = _lowest(left)
                    next_src[level] = s + 1
                    if not _may_step(board, s, d, limit[level], must[level], home[level], top[level]):
                        continue
                    t = s - d
                    h = hashes[level] ^ zob[s, board[s] + 16] ^ zob[s, board[s] + 15]
                    board[s] -= 1
                    if board[s] == 0:
                        occupied &= ~(1 << s)
                    hit = t >= 1 and board[t] == -1
                    if hit:
                        h ^= zob[0, board[0] + 16] ^ zob[0, board[0] + 15] ^ zob[t, 15] ^ zob[t, 17]
                        board[0] -= 1
                        board[t] = 1
                    elif t >= 1:
                        h ^= zob[t, board[t] + 16] ^ zob[t, board[t] + 17]
                        board[t] += 1
                    if t >= 1:
                        occupied |= 1 << t
                    hist[level, 0] = s
                    hist[level, 1] = t if t > 0 else 0
                    hist[level, 2] = 1 if hit else 0
                    depth = level + 1
                    pips = used + d
                    if pips >= best:
                        if pips > best:
                            best = pips
                            m = first
                            gen += 1
                        slot = np.int64(h & np.uint64(mask))
                        dup = False
                        while stamp[slot] == gen:
                            if slot_hash[slot] == h:
                                r = slot_row[slot]
                                same = True
                                for j in range(26):
                                    if after[r, j] != -board[25 - j]:
                                        same = False
                                        break
                                if same:
                                    dup = True
                                    break
                            slot = (slot + 1) & mask
                        if not dup:
                            stamp[slot] = gen
                            slot_hash[slot] = h
                            slot_row[slot] = m
                            for j in range(26):
                                after[m, j] = -board[25 - j]
                            owner[m] = p
                            if want_steps:
                                for k in range(4):
                                    for q in range(3):
                                        steps[m, k, q] = hist[k, q] if k < depth else -1
                            m += 1
                    if depth < depth_max:
                        level = depth
                        hashes[level] = h
                        used = pips
                        next_src[level] = 1
                        top[level] = _highest(occupied) if occupied else 0
                        home[level] = top[level] <= 6
                        limit[level] = s if double else 25
                        must[level] = (t if t > 0 else 0) if (level == 1 and restrict) else -1
                        moved = True
                        break
                    # a leaf: unmake the step
                    occupied = _unmake(board, occupied, s, t, hit)
                if not moved:  # this level is done: back up, unmaking the step that led here
                    level -= 1
                    if level >= 0:
                        used -= plan[level]
                        occupied = _unmake(board, occupied, hist[level, 0], hist[level, 1], hist[level, 2] == 1)
        if m == first:  # no play
            for j in range(26):
                after[m, j] = -boards[p, 25 - j]
            owner[m] = p
            if want_steps:
                for k in range(4):
                    for q in range(3):
                        steps[m, k, q] = -1
            m += 1
    return after[:m], owner[:m], steps[:m] if want_steps else steps


# The phase of each board ---------------------------------------------------------------------------------------------

_OVER, _BEAROFF, _RACE, _CONTACT, _CRASHED = 0, 1, 2, 3, 4  # bgai.core.phase's classes
_CRASHED_CHECKERS = 6  # bgai.core.phase.CRASHED_CHECKERS


@numba.njit(cache=True, nogil=True, inline="always")
def _side_crashed(n: int, ace: int, deuce: int) -> bool:
    """``bgai.core.phase.is_crashed``'s test of one side: ``n`` checkers in play, ``ace`` and ``deuce`` on its own one
    and two points."""
    most = _CRASHED_CHECKERS
    if n <= most:
        return True
    if ace > 1:
        return n - ace <= most or (deuce > 1 and n - ace - deuce + 1 <= most)
    return n - deuce + 1 <= most


@numba.njit(cache=True, nogil=True)
def phases_of(boards: np.ndarray, out: np.ndarray) -> None:
    """``bgai.core.phase.classify`` of (N, 26) int8 boards into (N,) int8 ``out``, one pass over each board: over (the
    opponent has no checker left), bear-off (both sides all home, none on a bar, both with checkers left), race
    (``bgai.players.pubeval.is_race``: our rearmost checker before their rearmost), else crashed
    (``bgai.core.phase.is_crashed``) or contact."""
    for i in range(boards.shape[0]):
        b = boards[i]
        mine = theirs = mine_out = theirs_out = False
        back, opp_back = -1, 26
        n_mine = n_theirs = 0
        for j in range(26):
            v = b[j]
            if v > 0:
                mine = True
                back = j
                n_mine += v
                if j >= 7:
                    mine_out = True
            elif v < 0:
                if not theirs:
                    opp_back = j
                theirs = True
                n_theirs -= v
                if j <= 18:
                    theirs_out = True
        if not theirs:
            out[i] = _OVER
        elif mine and not mine_out and not theirs_out:
            out[i] = _BEAROFF
        elif back < opp_back:
            out[i] = _RACE
        elif (_side_crashed(n_mine, max(b[1], 0), max(b[2], 0))
              or _side_crashed(n_theirs, max(-b[24], 0), max(-b[23], 0))):
            out[i] = _CRASHED
        else:
            out[i] = _CONTACT


@numba.njit(cache=True, nogil=True)
def distinct_rows(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, inverse) of an (N, 4) uint64 array, boards padded to 32 bytes (``bgai.eval.bot``): the row numbers of its
    distinct rows, in the order they first occur, and for every row the index into ``first`` of the row equal to it
    (``words[first][inverse]`` is ``words``). One pass through an open-addressing table of twice the rows; rows are
    compared in full on a hash hit."""
    n = words.shape[0]
    size = 1
    while size < 2 * n:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.full(size, -1, dtype=np.int32)  # the first row of each slot's kind
    first = np.empty(n, dtype=np.int64)
    inverse = np.empty(n, dtype=np.int64)
    count = 0
    for i in range(n):
        a, b, c, d = words[i, 0], words[i, 1], words[i, 2], words[i, 3]
        h = (a * np.uint64(0x9E3779B97F4A7C15)) ^ (b * np.uint64(0xC2B2AE3D27D4EB4F))
        h ^= (c * np.uint64(0x165667B19E3779F9)) ^ (d * np.uint64(0x27D4EB2F165667C5))
        h ^= h >> np.uint64(29)
        s = h & mask
        while True:
            r = table[s]
            if r < 0:
                table[s] = i
                first[count] = i
                inverse[i] = count
                count += 1
                break
            if words[r, 0] == a and words[r, 1] == b and words[r, 2] == c and words[r, 3] == d:
                inverse[i] = inverse[r]
                break
            s = (s + np.uint64(1)) & mask
    return first[:count], inverse


# The environments' action masks -------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def dice_and_mask(dice: np.ndarray, counts: np.ndarray, observation: np.ndarray, width: int,
                  mask: np.ndarray) -> None:
    """The last of ``bgai.envs.spaces.observe``'s work, in one compiled pass with the interpreter lock released:
    each row's dice units (``observation[i, width:]``: a one-hot of the larger die, then of the smaller, none for a
    die of 0) and its first ``counts[i]`` entries of the zeroed ``mask`` set to 1."""
    for i in range(counts.shape[0]):
        hi, lo = max(dice[i, 0], dice[i, 1]), min(dice[i, 0], dice[i, 1])
        for face in range(1, 7):
            observation[i, width + face - 1] = np.float32(1.0) if hi == face else np.float32(0.0)
            observation[i, width + 5 + face] = np.float32(1.0) if lo == face else np.float32(0.0)
        for j in range(counts[i]):
            mask[i, j] = 1


@numba.njit(cache=True, nogil=True)
def group_starts_of(owner: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``bgai.core.movegen.group_starts``: (first row, row count) of each of the ``n`` groups of the grouped ``owner``
    (one compiled pass, the interpreter lock released)."""
    counts = np.zeros(n, dtype=np.int64)
    for i in range(owner.shape[0]):
        counts[owner[i]] += 1
    starts = np.empty(n, dtype=np.int64)
    total = 0
    for g in range(n):
        starts[g] = total
        total += counts[g]
    return starts, counts


@numba.njit(cache=True, nogil=True)
def games_over(boards: np.ndarray) -> np.ndarray:
    """``bgai.core.game.game_over``: the boards (on-roll view) with no checker of the opponent left."""
    over = np.empty(boards.shape[0], dtype=np.bool_)
    for i in range(boards.shape[0]):
        over[i] = True
        for j in range(26):
            if boards[i, j] < 0:
                over[i] = False
                break
    return over


@numba.njit(cache=True, nogil=True)
def points_of(after: np.ndarray) -> np.ndarray:
    """``bgai.core.game.result_points``: the points (1..3) the mover won with its last checker off, from ``after`` seen
    by the loser (on roll): a gammon when the loser has borne off none of its fifteen, a backgammon when one of
    them is still in the winner's home board (points 19..24) or on the bar."""
    points = np.empty(after.shape[0], dtype=np.int8)
    for i in range(after.shape[0]):
        left = 0
        back = False
        for j in range(1, 26):
            if after[i, j] > 0:
                left += after[i, j]
                back = back or j >= 19
        points[i] = 1 if left < 15 else (3 if back else 2)
    return points
