"""Compiled kernels (numba) for the network's pass and the bot's bookkeeping around it, whose numpy versions pay
more in per-call overhead than in work: a 0-ply move evaluates some twenty afterstates and a 1-ply move a few
thousand. The network's first layer from the inputs that changed since the row before (``first_layer``: a move's
boards differ in a few of them) or straight from boards (``board_first_layer``), its later layers and its head with
the sigmoids and cumulative outputs in one loop (``sparse_layer``, ``head``; ``bgai.eval.weights``), and the bot's
bookkeeping (``rule_out``, ``best_plays``, ``keep_best``: each a dozen numpy calls on a 0-ply move's twenty boards,
one compiled pass here). The rules' kernels are ``bgai.core.kernels``; the compiled encoder is in
``bgai.eval.encoding``.

numba compiles each kernel the first time it is called in a process, or reads the compiled code cached beside
this file (``cache=True``); this module is imported only when a kernel is first needed.
"""

from __future__ import annotations

import numba
import numpy as np

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
    """``first_layer`` of encoder version 0's inputs (Tesauro's units and ``contact``, ``bgai.eval.encoding``) straight
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
    nonzero entries of the rows of ``h`` only. A ReLU layer of a bgai network is about 80% zeros on the boards of
    a move (the shipped 512-unit first layer: 20% active, 8% to 39% a board), so this is 1.5 times faster than the
    dense (BLAS) product for a layer of 64 units after 512, 3 times for 256 (25 or 400 boards, one thread).

    Rows go two at a time, over the entries nonzero in either (gathered without a branch), so that each weight row
    loaded serves both: the boards of a move, or of a game's turn in self-play, come one after another and share
    about 70% of their active units. Four weight rows are added in each pass over the two rows' sums; an entry zero
    in one of the two adds zero to its sums. On issue 61's 512-512-256-256 network: 1.37 times the evaluations a
    second of one row at a time on passes of 32 boards, 1.33 on 4,096, and the growth run 1.20 times the games a
    second (benchmarks/results/eval_speed_deep*.json, deep_run_speed_sparse_pairs.json); the fast network's 512-64
    nets gain 2 to 4%."""
    n, features = h.shape
    hidden = w.shape[1]
    acc0 = np.empty(hidden, dtype=np.float32)
    acc1 = np.empty(hidden, dtype=np.float32)
    active = np.empty(features, dtype=np.int64)
    for i in range(0, n, 2):
        r0 = h[i]
        r1 = h[min(i + 1, n - 1)]  # an odd last row pairs with itself
        m = 0
        for j in range(features):  # the entries nonzero in either row, found without a branch to mispredict
            active[m] = j
            m += (r0[j] != 0) | (r1[j] != 0)
        for k in range(hidden):
            acc0[k] = b[k]
            acc1[k] = b[k]
        t = 0
        while t + 4 <= m:
            j0, j1, j2, j3 = active[t], active[t + 1], active[t + 2], active[t + 3]
            a0, a1, a2, a3 = r0[j0], r0[j1], r0[j2], r0[j3]
            c0, c1, c2, c3 = r1[j0], r1[j1], r1[j2], r1[j3]
            w0, w1, w2, w3 = w[j0], w[j1], w[j2], w[j3]
            for k in range(hidden):
                x0, x1, x2, x3 = w0[k], w1[k], w2[k], w3[k]
                acc0[k] += a0 * x0 + a1 * x1 + a2 * x2 + a3 * x3
                acc1[k] += c0 * x0 + c1 * x1 + c2 * x2 + c3 * x3
            t += 4
        while t < m:
            j = active[t]
            a0, c0, wj = r0[j], r1[j], w[j]
            for k in range(hidden):
                acc0[k] += a0 * wj[k]
                acc1[k] += c0 * wj[k]
            t += 1
        o = out[i]
        for k in range(hidden):
            o[k] = acc0[k] if acc0[k] > 0 else 0.0
        if i + 1 < n:
            o = out[i + 1]
            for k in range(hidden):
                o[k] = acc1[k] if acc1[k] > 0 else 0.0


# The bot's bookkeeping around the network -------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def rule_out(boards: np.ndarray, probs: np.ndarray) -> None:
    """``bgai.eval.bot.without_impossible_outcomes`` in place: (N, 5) float32 ``probs`` of (N, 26) int8 ``boards``
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
    """The network's output layer: (N, 5) float32 cumulative probabilities ``out`` (``bgai.eval.weights.cumulative``
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
    group), ties going to the earlier row: ``bgai.eval.bot.MoveFilter(keep, inf).apply(values, owner)``. One pass over
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
