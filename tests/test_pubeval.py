"""Tests for bgai.players.pubeval against GNU Backgammon's pubeval (gnubg_nn).

gnubg_nn.pub_eval_score(board) convention, established by probing gnubg-nn
1.1.0a11: ``board`` is a 2x25 list; row 0 is the player who has just moved
("us"), row 1 the opponent; each row is seen from its own player (index i is
that player's point i + 1, index 24 its bar).  It chooses the race or contact
weights itself from the board it is given (GNU Backgammon's
ClassifyPosition(board) <= CLASS_RACE) and computes in float32.  Like
Tesauro's original, it counts our checkers on the bar as still on the board
(not borne off) and returns 99999999 (1e8 in float32) when we are all off.
"""

from __future__ import annotations

import numpy as np
import pytest

from bgai.players.pubeval import (
    ALL_OFF_SCORE,
    CONTACT_WEIGHTS,
    RACE_WEIGHTS,
    is_race,
    pubeval_inputs,
    pubeval_score,
)

# gnubg sums in float32, we in float64: the largest difference seen on 100,000
# random boards was 8.4e-6 (scores up to ~81 in size).  The all-off sentinel
# 99999999 is 1e8 in float32, which RTOL covers.
ATOL = 5e-5
RTOL = 1e-7

N_BOARDS = 3000


def start_board() -> np.ndarray:
    b = np.zeros(26, dtype=np.int8)
    b[[24, 13, 8, 6]] = [2, 5, 3, 5]
    b[[1, 12, 17, 19]] = [-2, -5, -3, -5]
    return b


def _place(rng, b, locations, sign):
    """Spread 15 checkers of one side over a few of ``locations`` (-1 = off)."""
    m = int(rng.integers(1, min(8, len(locations)) + 1))
    chosen = rng.choice(locations, size=m, replace=False)
    counts = rng.multinomial(15, rng.dirichlet(np.ones(m)))
    for loc, c in zip(chosen, counts):
        if loc >= 0:
            b[loc] += sign * c


def random_boards(rng, n, race):
    """n random legal boards (never both sides on one point).

    race=False: anything, with both bars and borne-off checkers allowed (mostly
    contact positions).  race=True: ours strictly below a random split point,
    theirs at or above it, bars empty.
    """
    boards = np.zeros((n, 26), dtype=np.int8)
    for b in boards:
        if race:
            k = int(rng.integers(1, 26))
            ours = list(range(1, k)) + [-1]
            theirs = list(range(k, 25)) + [-1]
        else:
            ours = list(range(1, 26)) + [-1]
            theirs = None
        _place(rng, b, np.array(ours), 1)
        if theirs is None:
            theirs = [i for i in range(0, 25) if b[i] == 0] + [-1]
        _place(rng, b, np.array(theirs), -1)
    return boards


def to_gnubg(board: np.ndarray) -> list[list[int]]:
    us = [max(0, int(board[p])) for p in range(1, 26)]
    them = [0] * 25
    for p in range(1, 25):
        them[24 - p] = max(0, -int(board[p]))
    them[24] = -int(board[0])
    return [us, them]


def test_weights_are_tesauros():
    assert CONTACT_WEIGHTS.shape == RACE_WEIGHTS.shape == (122,)
    # spot checks against pubeval.c's wc[] / wr[]
    assert CONTACT_WEIGHTS[0] == 0.25696
    assert CONTACT_WEIGHTS[119] == -4.11520
    assert CONTACT_WEIGHTS[120] == 5.62596 and CONTACT_WEIGHTS[121] == -2.75800
    assert RACE_WEIGHTS[99] == 2.30052
    assert RACE_WEIGHTS[119] == -12.32252 and RACE_WEIGHTS[121] == 3.42040
    # in a race opponent blots and the opponent's bar are irrelevant
    assert np.all(RACE_WEIGHTS[0:120:5] == 0.0) and RACE_WEIGHTS[120] == 0.0
    assert not CONTACT_WEIGHTS.flags.writeable


def test_start_position_inputs_and_score():
    x = pubeval_inputs(start_board()[None])
    assert x.shape == (1, 122) and x.dtype == np.float32
    # block k = 24 - point: 24pt (2 men) -> 0, 13pt (5) -> 11, 8pt (3) -> 16, 6pt (5) -> 18
    expected = np.zeros(122, dtype=np.float32)
    expected[[2, 57, 59, 82, 83, 92, 94]] = 1.0  # 5 men: (5-3)/2 = 1 in slot 5k+4
    np.testing.assert_array_equal(x[0], expected)
    assert not is_race(start_board()[None])[0]
    score = pubeval_score(start_board()[None])
    assert score[0] == pytest.approx(CONTACT_WEIGHTS[[2, 57, 59, 82, 83, 92, 94]].sum())
    assert score[0] == pytest.approx(6.84055, abs=1e-5)


def test_special_inputs():
    b = np.zeros(26, dtype=np.int8)
    b[[3, 7, 9, 25]] = [7, 3, 1, 2]  # 2 on our bar; 2 men off
    b[[0, 20, 22]] = [-3, -1, -11]
    x = pubeval_inputs(b)  # a single board works too
    assert x.shape == (122,)
    k3, k7, k9, k20 = 24 - 3, 24 - 7, 24 - 9, 24 - 20
    assert x[5 * k3 + 2] == 1 and x[5 * k3 + 4] == 2.0 and x[5 * k3 + 3] == 0
    assert x[5 * k7 + 2] == 1 and x[5 * k7 + 3] == 1
    assert x[5 * k9 + 1] == 1 and x[5 * k20 + 0] == 1
    assert x[(24 - 22) * 5 : (24 - 22) * 5 + 5].sum() == 0  # opponent point: nothing
    assert x[120] == 1.5 and x[121] == pytest.approx(2 / 15)  # bar men are not off
    assert x.sum() == pytest.approx((1 + 2) + (1 + 1) + 1 + 1 + 1.5 + 2 / 15)


def test_is_race_edges():
    b = np.zeros((5, 26), dtype=np.int8)
    b[0, [5, 7]] = [15, -15]             # all of ours below all of theirs: race
    b[1, [7, 6]] = [15, -15]             # we have not passed them: contact
    b[2, [1, 25, 2]] = [14, 1, -15]      # we are on the bar: contact
    b[3, [0, 24]] = [-2, -13]            # we are all off (game over): race
    b[4, 6] = 10                         # they are all off: race
    np.testing.assert_array_equal(is_race(b), [True, False, False, True, True])
    assert pubeval_score(b)[3] == ALL_OFF_SCORE
    assert pubeval_score(b)[4] != ALL_OFF_SCORE


def test_race_flag_override():
    rng = np.random.default_rng(7)
    boards = random_boards(rng, 200, race=False)
    boards = boards[(boards > 0).sum(axis=1) > 0]  # skip the all-off sentinel
    x = pubeval_inputs(boards).astype(np.float64)
    np.testing.assert_allclose(pubeval_score(boards, race=True), x @ RACE_WEIGHTS)
    np.testing.assert_allclose(pubeval_score(boards, race=False), x @ CONTACT_WEIGHTS)
    flags = np.arange(len(boards)) % 2 == 0
    np.testing.assert_allclose(
        pubeval_score(boards, race=flags), np.where(flags, x @ RACE_WEIGHTS, x @ CONTACT_WEIGHTS)
    )


@pytest.mark.parametrize("race", [False, True], ids=["contact", "race"])
def test_matches_gnubg(race):
    gnubg = pytest.importorskip("gnubg_nn")
    rng = np.random.default_rng(2024 + race)
    boards = random_boards(rng, N_BOARDS, race=race)
    gboards = [to_gnubg(b) for b in boards]
    ref = np.array([gnubg.pub_eval_score(g) for g in gboards])
    ref_race = np.array([gnubg.classify(g) <= gnubg.c_race for g in gboards])

    ours_race = is_race(boards)
    np.testing.assert_array_equal(ours_race, ref_race)
    if race:
        assert ours_race.all()
    else:
        assert (~ours_race).sum() >= 2000  # enough genuine contact positions
        assert (boards[:, 25] > 0).sum() >= 200  # and boards with us on the bar

    ours = pubeval_score(boards)
    assert ours.dtype == np.float64
    np.testing.assert_allclose(ours, ref, rtol=RTOL, atol=ATOL)
    sentinel = ref == np.float32(ALL_OFF_SCORE)
    np.testing.assert_array_equal(ours == ALL_OFF_SCORE, sentinel)
    assert np.abs(ours - ref)[~sentinel].max() < ATOL
