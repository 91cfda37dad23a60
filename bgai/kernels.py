"""Compiled kernels (numba) for the hot paths whose numpy versions pay more in per-call overhead than in work.

A 0-ply move encodes some twenty afterstates and a 1-ply move a few thousand; the numpy encoder
(``bgai.encoding``) makes about 150 array calls per batch whatever its size, so on such batches it cost more than
the network itself (1.1 ms of a 1.8 ms 0-ply move, 7 of 18 ms at 1-ply). The kernel here computes the same
features one board at a time in one compiled loop. ``bgai.encoding.encode`` uses it; the numpy version stays as
the readable, vectorized statement of each feature, and the tests hold the two equal.

The same holds for the move generator (``afterstates_of``, ``bgai.movegen``), and for the network's pass
(``bgai.weights``): its first layer from the inputs that changed since the row before (``first_layer``: a move's
boards differ in a few of them), its head with the sigmoids and cumulative outputs in one loop (``head``), and the
bot's bookkeeping around it (``phases_of``, ``rule_out``, ``best_plays``, ``keep_best``: each a dozen numpy calls
on a 0-ply move's twenty boards, one compiled pass here).

numba compiles each kernel the first time it is called in a process, or reads the compiled code cached beside
this file (``cache=True``) after the first run on a machine. Importing numba takes about 0.4 s, so this module is
imported only when a kernel is first needed (never by ``bgai --help`` or the rules alone).
"""

from __future__ import annotations

import numba
import numpy as np

from bgai import encoding
from bgai.dice import ROLLS

# The encoder's constants, read from bgai.encoding (numba compiles module-level numbers and arrays in as constants).
_POINT_BITS = int(encoding._POINT_BITS)  # points 1..24
_HOME_BITS = int(encoding._HOME_BITS)  # points 1..6
_THEIR_HOME_BITS = int(encoding._THEIR_HOME_BITS)  # points 19..24
_THEIR_SIDE_BITS = int(encoding._THEIR_SIDE_BITS)  # points 13..24
_ANCHOR_BITS = int(encoding._ANCHOR_BITS)  # points 18..24
_ROLLS = ROLLS.astype(np.int64)  # the 21 distinct rolls (bgai.dice)
_DEBRUIJN_BIT = encoding._DEBRUIJN_BIT.astype(np.int64)

# Where each side feature goes within a half: version 3's offsets, versions 1's and 2's being prefixes of them.
_AT = encoding.LAYOUTS[3].offsets
assert all(_AT[name] == at for v in (1, 2) for name, at in encoding.LAYOUTS[v].offsets.items())
_POINTS, _BAR, _OFF, _PIPS, _PIP_LEAD, _BLOTS = (_AT[k] for k in ("points", "bar", "off", "pips", "pip_lead", "blots"))
_HIT_CHANCE, _BACK_CHECKERS, _HOME_POINTS, _PRIME, _ANCHORS, _ESCAPES = (
    _AT[k] for k in ("hit_chance", "back_checkers", "home_points", "prime", "anchors", "escapes"))
_BREAK_CONTACT, _BACK_CHECKER, _BACK_ANCHOR, _FORWARD_ANCHOR, _CONTAINMENT, _PIP_LOSS, _DOUBLE_SHOT, _ENTER = (
    _AT[k] for k in ("break_contact", "back_checker", "back_anchor", "forward_anchor", "containment", "pip_loss",
                     "double_shot", "enter"))
_MOBILITY, _TIMING, _BACK_GAME, _BACK_GAME1 = (_AT[k] for k in ("mobility", "timing", "back_game", "back_game1"))


@numba.njit(cache=True, inline="always")
def _popcount(x: int) -> int:
    """Set bits of a 32-bit mask (a SWAR sum)."""
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & 0xFFFFFFFF) >> 24


@numba.njit(cache=True, inline="always")
def _lowest(x: int) -> int:
    """Index of the lowest set bit of a 32-bit mask x > 0 (a de Bruijn multiply, as bgai.encoding.lowest_bit)."""
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


@numba.njit(cache=True)
def _hit_masks(blots: int, held: int, shooters: int, on_bar: int, masks: np.ndarray) -> None:
    """``bgai.encoding.hit_masks`` for one board: the mask of our blots each of the 21 rolls can hit."""
    open_ = ~held & _POINT_BITS
    for r in range(21):
        a, b = _ROLLS[r, 0], _ROLLS[r, 1]
        if on_bar == 0:
            via_a = (shooters << a) & open_
            if a != b:
                via_b = (shooters << b) & open_
                mask = ((shooters << a) | (shooters << b) | (via_a << b) | (via_b << a)) & blots
            else:
                mask, reach = (shooters << a) & blots, via_a
                for _ in range(3):
                    reach = (reach << a) & open_
                    mask |= reach & blots
        else:  # their checkers on the bar enter first
            entry_a, entry_b = 1 << a, 1 << b
            if a != b:
                mask = (blots & entry_a) | (blots & entry_b)
                if on_bar == 1:  # it enters with one die, then any checker (it too) plays the other
                    if open_ & entry_a:
                        mask |= ((shooters | entry_a) << b) & blots
                    if open_ & entry_b:
                        mask |= ((shooters | entry_b) << a) & blots
            elif open_ & entry_a:
                reach, mask = shooters | entry_a, blots & entry_a
                for k in range(1, 4):
                    reach = (reach << a) & open_
                    if 4 - on_bar >= k:
                        mask |= reach & blots
            else:
                mask = 0
        masks[r] = mask


@numba.njit(cache=True)
def _side(side: np.ndarray, out: np.ndarray, o: int, version: int, units: np.ndarray, escapes: np.ndarray,
          masks: np.ndarray) -> np.float32:
    """One side's features of one board ``side`` (26, seen from the side described) into ``out[o:]``; returns
    its pips feature (for ``pip_lead``, which the caller writes). Offsets from ``bgai.encoding``'s layouts."""
    f32 = np.float32
    pips = 0
    on_board = 0
    back_checkers = 0
    blots = held = theirs = their_held = checkers = 0
    for j in range(26):
        n = side[j]
        if n > 0:
            pips += n * j
            checkers |= 1 << j
            if j >= 1:
                on_board += n
            if j >= 19:
                back_checkers += n
            if 1 <= j <= 24:
                if n == 1:
                    blots |= 1 << j
                else:
                    held |= 1 << j
        elif n < 0:
            theirs |= 1 << j
            if n <= -2 and 1 <= j <= 24:
                their_held |= 1 << j
    for p in range(1, 25):
        n = side[p] if side[p] > 0 else 0
        for k in range(4):
            out[o + _POINTS + 4 * (p - 1) + k] = units[n, k]
    own_bar = side[25] if side[25] > 0 else 0
    out[o + _BAR] = own_bar * f32(0.5)
    out[o + _OFF] = f32(15 - on_board) * f32(1 / 15)
    if version == 0:
        return f32(0.0)
    pips_feature = f32(pips) * f32(0.01)
    out[o + _PIPS] = pips_feature
    # pip_lead: written by the caller, which pairs the sides
    out[o + _BLOTS] = f32(_popcount(blots)) * f32(0.2)
    shooters = theirs & _POINT_BITS
    on_bar = -side[0] if side[0] < 0 else 0
    _hit_masks(blots, held, shooters, on_bar, masks)
    hits = 0
    for r in range(21):
        if masks[r]:
            hits += 1 if _ROLLS[r, 0] == _ROLLS[r, 1] else 2
    out[o + _HIT_CHANCE] = f32(hits) * f32(1 / 36)
    out[o + _BACK_CHECKERS] = f32(back_checkers) * f32(0.2)
    out[o + _HOME_POINTS] = f32(_popcount(held & _HOME_BITS)) * f32(1 / 6)
    run, prime = held, 0
    for _ in range(6):
        if run:
            prime += 1
        run &= run >> 1
    out[o + _PRIME] = f32(prime) * f32(1 / 6)
    out[o + _ANCHORS] = f32(_popcount(held & _THEIR_HOME_BITS)) * f32(0.5)
    rearmost = _highest(checkers) if checkers else 0
    ahead = their_held & ((1 << rearmost) - 1)
    blockade = ahead & _THEIR_SIDE_BITS
    farthest = rearmost - _lowest(blockade) if blockade else 0
    out[o + _ESCAPES] = escapes[farthest, ((ahead << 12) >> rearmost) & 0xFFF]
    if version < 2:
        return pips_feature

    front = _lowest(theirs) if theirs else 0
    count = 0
    below = 0  # pips of our checkers below ``front``, each point's in int8 as version 2 has always computed them
    for j in range(26):
        n = side[j]
        if n > 0:
            if j >= front:
                count += n
            else:
                below += ((n * j + 128) & 0xFF) - 128
    behind = pips - below
    out[o + _BREAK_CONTACT] = f32(behind - (front - 1) * count) * f32(0.01) if theirs else f32(0.0)
    out[o + _BACK_CHECKER] = f32(rearmost) * f32(1 / 25)
    back = held & _THEIR_HOME_BITS
    out[o + _BACK_ANCHOR] = f32(_highest(back) - 18) * f32(1 / 6) if back else f32(0.0)
    forward = held & _ANCHOR_BITS
    out[o + _FORWARD_ANCHOR] = f32(25 - _lowest(forward)) * f32(1 / 7) if forward else f32(0.0)
    worst = f32(1.0)
    wall = their_held & _THEIR_SIDE_BITS
    lowest = _lowest(wall) if wall else 32
    for start in range(15, 25):
        reach = start - lowest if lowest < start else 0
        value = escapes[reach, ((their_held << 12) >> start) & 0xFFF]
        if value < worst:
            worst = value
    out[o + _CONTAINMENT] = f32(1.0) - worst
    loss = 0
    doubles = 0
    for r in range(21):
        mask = masks[r]
        weight = 1 if _ROLLS[r, 0] == _ROLLS[r, 1] else 2
        if mask:
            loss += (25 - _lowest(mask)) * weight
        if _popcount(mask) >= 2:
            doubles += weight
    out[o + _PIP_LOSS] = (f32(loss) * f32(1 / 36)) * f32(1 / 25)
    out[o + _DOUBLE_SHOT] = f32(doubles) * f32(1 / 36)
    closed = f32(_popcount(their_held & _THEIR_HOME_BITS))
    out[o + _ENTER] = f32(1.0) - (closed / f32(6)) ** 2
    if version < 3:
        return pips_feature

    moves = 0
    timing = 0
    for p in range(2, 26):
        n = side[p]
        if n > 0:
            if p > 6:
                timing += n * (p - 6)
            for d in range(1, 7):
                if p - d >= 1 and not (their_held >> (p - d)) & 1:
                    moves += n
    out[o + _MOBILITY] = f32(moves) * f32(1 / 90)
    out[o + _TIMING] = f32(timing) * f32(0.01)
    anchors = _popcount(held & _THEIR_HOME_BITS)
    back_game = f32(back_checkers) * f32(1 / 15)
    out[o + _BACK_GAME] = back_game if anchors >= 2 else f32(0.0)
    out[o + _BACK_GAME1] = back_game if anchors == 1 else f32(0.0)
    return pips_feature


@numba.njit(cache=True, nogil=True)
def encode_boards(boards: np.ndarray, out: np.ndarray, version: int, side_size: int, units: np.ndarray,
                  escapes: np.ndarray) -> None:
    """``bgai.encoding.encode`` of (N, 26) int8 boards into (N, n_features) float32 ``out``, for ``version``'s
    layout (own half, opp half, contact)."""
    side = np.empty(26, dtype=np.int64)
    masks = np.empty(21, dtype=np.int64)
    for i in range(boards.shape[0]):
        board = boards[i]
        for j in range(26):
            side[j] = board[j]
        own = _side(side, out[i], 0, version, units, escapes, masks)
        for j in range(26):
            side[j] = -board[25 - j]
        opp = _side(side, out[i], side_size, version, units, escapes, masks)
        if version > 0:
            out[i, _PIP_LEAD] = opp - own
            out[i, side_size + _PIP_LEAD] = own - opp
        # contact, as bgai.players.pubeval.is_race: our rearmost checker (1..25) behind their rearmost (0..24)
        back, opp_back = -1, 26
        for j in range(1, 26):
            if board[j] > 0:
                back = j
        for j in range(24, -1, -1):
            if board[j] < 0:
                opp_back = j
        out[i, 2 * side_size] = np.float32(1.0) if back > opp_back else np.float32(0.0)


# Move generation ---------------------------------------------------------------------------------------------------


@numba.njit(cache=True, inline="always")
def _may_step(b: np.ndarray, s: int, d: int, limit: int, must: int, all_home: bool, highest: int) -> bool:
    """Whether one checker may move ``d`` pips from ``s`` on board ``b`` (the rule of ``bgai.movegen._step``)."""
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
    """``bgai.movegen.afterstates`` of (N, 26) int8 boards and (N, 2) dice: (after (M, 26) int8, owner (M,),
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


# The network's first layer ----------------------------------------------------------------------------------------

#: A row of ``first_layer`` is computed afresh (from its nonzero inputs) at least every this many rows, so that
#: the rounding of a chain of float32 updates stays small: on 361,000 boards of a rollout's variance reduction the
#: probabilities were within 4e-7 of float64 sums', and 5,000 0-ply moves chose the same plays.
FRESH_EVERY = 32
_FEW_CHANGES = 16  # a board with this many changed inputs or fewer is always updated from the row before


@numba.njit(cache=True, nogil=True, fastmath=True)
def first_layer(x: np.ndarray, w: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out = max(x @ w + b, 0)``: the network's first hidden layer of (N, F) float32 inputs ``x`` with weights
    ``w`` (F, H) and bias ``b`` (H,), into (N, H) float32 ``out``, each row from the inputs that differ from the
    row before it.

    The inputs of the boards a move or a lookahead evaluates in a row differ in a few features (a move's
    afterstates from one another: 9 of 231 inputs in the median, 14 on average), and a board's own nonzero inputs
    are about 50: so row i's sums are row i - 1's plus ``w``'s rows for the changed inputs times their change,
    or, where fewer inputs are nonzero than changed, the sum over its nonzero ones (also every ``FRESH_EVERY``
    rows). The sums are float32, as the dense product's and torch's are (twice as fast as float64's: 16 µs against
    28 for a 0-ply move's 26 boards on the 512-unit layer): a row's values agree with the dense product's within
    about 2e-6, though not always to the last bit of the same board's in another pass or elsewhere in this one (as
    numpy's BLAS products, whose rounding too depends on a row's place in the batch)."""
    n, features = x.shape
    hidden = w.shape[1]
    acc = np.empty(hidden, dtype=np.float32)
    index = np.empty(features, dtype=np.int64)  # the inputs a row's sum goes over, and their factors
    factor = np.empty(features, dtype=np.float32)
    since = FRESH_EVERY
    for i in range(n):
        row = x[i]
        m = 0
        fresh = since >= FRESH_EVERY
        if not fresh:
            last = x[i - 1]
            for j in range(features):
                if row[j] != last[j]:
                    index[m] = j
                    factor[m] = row[j] - last[j]
                    m += 1
            if m > _FEW_CHANGES:  # then perhaps fewer nonzero inputs than changed ones
                nonzero = 0
                for j in range(features):
                    if row[j] != 0:
                        nonzero += 1
                fresh = nonzero <= m
        if fresh:
            m = 0
            for j in range(features):
                if row[j] != 0:
                    index[m] = j
                    factor[m] = row[j]
                    m += 1
            for k in range(hidden):
                acc[k] = b[k]
            since = 0
        since += 1
        for t in range(m):
            f = factor[t]
            wj = w[index[t]]
            for k in range(hidden):
                acc[k] += f * wj[k]
        o = out[i]
        for k in range(hidden):
            o[k] = acc[k] if acc[k] > 0 else 0.0


@numba.njit(cache=True, nogil=True, fastmath=True)
def board_first_layer(boards: np.ndarray, table: np.ndarray, bias: np.ndarray, contact: np.ndarray,
                      out: np.ndarray) -> None:
    """``first_layer`` of encoder version 0's inputs (Tesauro's units and ``contact``, ``bgai.encoding``) straight
    from (N, 26) int8 boards, never encoded, into (N, H) float32 ``out``. ``table`` (26, 31, H) float32: row
    ``[j, n + 15]`` is what count n on board cell j adds to the layer's sums (its units' weights, and its share of
    the ``off`` inputs'); ``bias`` (H,) the sums of an empty board; ``contact`` (H,) the contact input's weights.
    A row's sums are the row before's plus the rows of the cells that changed (a lookahead's plays of one roll
    differ in 4 of the 26 on average), afresh every ``FRESH_EVERY`` rows. The sums are float32 (70 ns a board
    where float64's took 160): within about 1e-5 of the dense product's, for the pruning nets that rank plays."""
    n = boards.shape[0]
    hidden = bias.shape[0]
    acc = np.empty(hidden, dtype=np.float32)
    since = FRESH_EVERY
    for i in range(n):
        if since >= FRESH_EVERY:
            for k in range(hidden):
                acc[k] = bias[k]
            for j in range(26):
                v = boards[i, j]
                if v != 0:
                    for k in range(hidden):
                        acc[k] += table[j, v + 15, k]
            since = 0
        else:
            for j in range(26):
                v, u = boards[i, j], boards[i - 1, j]
                if v != u:
                    for k in range(hidden):
                        acc[k] += table[j, v + 15, k] - table[j, u + 15, k]
        since += 1
        back, opp_back = -1, 26  # contact, as encode_boards has it
        for j in range(1, 26):
            if boards[i, j] > 0:
                back = j
        for j in range(24, -1, -1):
            if boards[i, j] < 0:
                opp_back = j
        on = np.float32(1.0) if back > opp_back else np.float32(0.0)
        for k in range(hidden):
            x = acc[k] + on * contact[k]
            out[i, k] = x if x > 0 else np.float32(0.0)


@numba.njit(cache=True, nogil=True, fastmath=True)
def sparse_layer(h: np.ndarray, w: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out = max(h @ w + b, 0)``: a hidden layer after the first, of (N, F) float32 ``h``, the layer before's
    ReLU outputs, with weights ``w`` (F, H) and bias ``b`` (H,), into (N, H) float32 ``out``, summing over the
    nonzero entries of each row of ``h`` only. A ReLU layer of a bgai network is about 80% zeros on the boards of
    a move (the shipped 512-unit first layer: 20% active, 8% to 39% a board), so this is 1.5 times faster than the
    dense (BLAS) product for a layer of 64 units after 512, 3 times for 256 (25 or 400 boards, one thread). The
    nonzero entries are gathered first without a branch, and four weight rows are added in each pass over the
    sums."""
    n, features = h.shape
    hidden = w.shape[1]
    acc = np.empty(hidden, dtype=np.float32)
    active = np.empty(features, dtype=np.int64)
    for i in range(n):
        row = h[i]
        m = 0
        for j in range(features):  # the nonzero entries, found without a branch to mispredict
            active[m] = j
            m += row[j] != 0
        for k in range(hidden):
            acc[k] = b[k]
        t = 0
        while t + 4 <= m:  # four weight rows a pass over the sums: a quarter of the loads and stores of them
            j0, j1, j2, j3 = active[t], active[t + 1], active[t + 2], active[t + 3]
            v0, v1, v2, v3 = row[j0], row[j1], row[j2], row[j3]
            w0, w1, w2, w3 = w[j0], w[j1], w[j2], w[j3]
            for k in range(hidden):
                acc[k] += v0 * w0[k] + v1 * w1[k] + v2 * w2[k] + v3 * w3[k]
            t += 4
        while t < m:
            j = active[t]
            v = row[j]
            wj = w[j]
            for k in range(hidden):
                acc[k] += v * wj[k]
            t += 1
        o = out[i]
        for k in range(hidden):
            o[k] = acc[k] if acc[k] > 0 else 0.0


# The bot's bookkeeping around the network -------------------------------------------------------------------------

_OVER, _BEAROFF, _RACE, _CONTACT, _CRASHED = 0, 1, 2, 3, 4  # bgai.phase's classes
_CRASHED_CHECKERS = 6  # bgai.phase.CRASHED_CHECKERS


@numba.njit(cache=True, nogil=True, inline="always")
def _side_crashed(n: int, ace: int, deuce: int) -> bool:
    """``bgai.phase.is_crashed``'s test of one side: ``n`` checkers in play, ``ace`` and ``deuce`` on its own one
    and two points."""
    most = _CRASHED_CHECKERS
    if n <= most:
        return True
    if ace > 1:
        return n - ace <= most or (deuce > 1 and n - ace - deuce + 1 <= most)
    return n - deuce + 1 <= most


@numba.njit(cache=True, nogil=True)
def phases_of(boards: np.ndarray, out: np.ndarray) -> None:
    """``bgai.phase.classify`` of (N, 26) int8 boards into (N,) int8 ``out``, one pass over each board: over (the
    opponent has no checker left), bear-off (both sides all home, none on a bar, both with checkers left), race
    (``bgai.players.pubeval.is_race``: our rearmost checker before their rearmost), else crashed
    (``bgai.phase.is_crashed``) or contact."""
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
def rule_out(boards: np.ndarray, probs: np.ndarray) -> None:
    """``bgai.bot.without_impossible_outcomes`` in place: (N, 5) float32 ``probs`` of (N, 26) int8 ``boards``
    (on-roll view) with the outcomes the rules make impossible set to zero."""
    for i in range(boards.shape[0]):
        b = boards[i]
        mine = theirs = 0
        back, opp_back = -1, 26
        for j in range(26):
            v = b[j]
            if v > 0:
                mine += v
                back = j
            elif v < 0:
                theirs -= v
                if opp_back == 26:
                    opp_back = j
        p = probs[i]
        if theirs < 15:  # they have borne off a checker: no gammon against them
            p[1] = 0.0
            p[2] = 0.0
        if mine < 15:
            p[3] = 0.0
            p[4] = 0.0
        if back < opp_back:  # a race: no backgammon against a side with nothing left in the winner's home or bar
            theirs_back = b[0] < 0
            mine_back = b[25] > 0
            for j in range(1, 7):
                theirs_back |= b[j] < 0
            for j in range(19, 25):
                mine_back |= b[j] > 0
            if not theirs_back:
                p[2] = 0.0
            if not mine_back:
                p[4] = 0.0


@numba.njit(cache=True, nogil=True)
def best_plays(probs: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """For each of ``n`` groups of a grouped ``owner`` array, the row of ``probs`` (M, 5) float32, each the
    opponent's (on roll after the play), whose cubeless equity for the mover is highest, the first on ties: as
    ``segment_argmax(equity(flip(probs)), owner, n)``, in float32 as they compute it."""
    best = np.full(n, -1, dtype=np.int64)
    value = np.empty(n, dtype=np.float32)
    two, one = np.float32(2.0), np.float32(1.0)
    for i in range(probs.shape[0]):
        p = probs[i]
        e = two * (one - p[0]) - one + p[3] + p[4] - p[1] - p[2]
        g = owner[i]
        if best[g] < 0 or e > value[g]:
            best[g], value[g] = i, e
    return best



@numba.njit(cache=True, nogil=True, fastmath=True)
def head(h: np.ndarray, wt: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """The network's output layer: (N, 5) float32 cumulative probabilities ``out`` (``bgai.weights.cumulative``
    of the sigmoids of ``h @ wt.T + b``) of (N, F) float32 ``h``, the last hidden layer, with ``wt`` (5, F) (the
    head's weights as torch stores them) and ``b`` (5,), in one pass. In float32 throughout, the logits clipped to
    ±80 (where a float32 sigmoid is 0 or 1 already): within 3e-7 of float64 sums and exponentials, at half their
    time or less (the five sigmoids of a board were most of it)."""
    n, features = h.shape
    z = np.empty(5, dtype=np.float32)
    s = np.empty(5, dtype=np.float32)
    one, limit = np.float32(1.0), np.float32(80.0)
    for i in range(n):
        row = h[i]
        for k in range(5):
            w = wt[k]
            acc = np.float32(0.0)
            for j in range(features):
                acc += row[j] * w[j]
            z[k] = min(max(acc + b[k], -limit), limit)
        for k in range(5):
            s[k] = one / (one + np.exp(-z[k]))
        win = s[0]
        win_gammon = win * s[1]
        lose_gammon = (one - win) * s[3]
        o = out[i]
        o[0] = win
        o[1] = win_gammon
        o[2] = win_gammon * s[2]
        o[3] = lose_gammon
        o[4] = lose_gammon * s[4]


@numba.njit(cache=True, nogil=True)
def keep_best(values: np.ndarray, owner: np.ndarray, keep: int) -> np.ndarray:
    """Mask of the ``keep`` highest ``values`` of each group of a grouped ``owner`` array (all of a smaller
    group), ties going to the earlier row: ``bgai.bot.MoveFilter(keep, inf).apply(values, owner)``. One pass over
    each group, its best ``keep`` so far kept in order (a later row displaces one only by being strictly higher)."""
    n = len(values)
    mask = np.zeros(n, dtype=np.bool_)
    best_value = np.empty(max(keep, 1), dtype=values.dtype)
    best_row = np.empty(max(keep, 1), dtype=np.int64)
    start = 0
    while start < n:
        end = start
        while end < n and owner[end] == owner[start]:
            end += 1
        if end - start <= keep:
            mask[start:end] = True
        else:
            held = 0
            for i in range(start, end):
                v = values[i]
                if held == keep and not v > best_value[held - 1]:
                    continue
                at = held if held < keep else keep - 1  # where it goes: after every kept row it is not above
                while at > 0 and v > best_value[at - 1]:
                    best_value[at], best_row[at] = best_value[at - 1], best_row[at - 1]
                    at -= 1
                best_value[at], best_row[at] = v, i
                if held < keep:
                    held += 1
            for k in range(held):
                mask[best_row[k]] = True
        start = end
    return mask


@numba.njit(cache=True, nogil=True)
def distinct_rows(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, inverse) of an (N, 4) uint64 array, boards padded to 32 bytes (``bgai.bot``): the row numbers of its
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
    """``bgai.movegen.group_starts``: (first row, row count) of each of the ``n`` groups of the grouped ``owner``
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
    """``bgai.game.game_over``: the boards (on-roll view) with no checker of the opponent left."""
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
    """``bgai.game.result_points``: the points (1..3) the mover won with its last checker off, from ``after`` seen
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
