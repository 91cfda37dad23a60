"""The batched move generator: counts, symmetry, batching, steps, notation, playouts and a golden game.

``bgai.core.movegen.afterstates(boards, dice)`` returns every distinct legal afterstate of each (position, roll) pair,
seen from the opponent, grouped by owner. The rule scenarios live in ``test_rules.py``; this file checks the
generator as a whole, mostly against properties that any correct generator has, and against a slow reference
written here straight from the rules.

The golden game (``tests/data/golden_game.txt``) is a regression record, generated once by

    .venv/bin/python tests/test_movegen.py --write-golden

and only compared by the tests. Regenerate it only for an intended change of the rules, the notation or the two
players, and say so in the commit.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from bgai.core.game import result_points, roll_dice
from bgai.core.movegen import (
    BOARD_SIZE,
    CHECKERS,
    OPP_BAR,
    OWN_BAR,
    afterstates,
    count_moves,
    reference_afterstates,
    switch,
    validate_boards,
)
from bgai.formats.position import START_BOARD, Position
from bgai.players import HeuristicPlayer, PubevalPlayer

GOLDEN = Path(__file__).parent / "data" / "golden_game.txt"
GOLDEN_SEED = 2025
GOLDEN_GAME = 2  # a game with hits on both sides that ends in a backgammon

# From the opening position, distinct legal afterstates per roll, as GNU Backgammon's generator counts them.
OPENING_COUNTS = {
    "21": 15, "31": 16, "41": 14, "51": 8, "61": 10, "32": 17, "42": 18, "52": 8, "62": 14, "43": 17, "53": 9,
    "63": 14, "54": 9, "64": 14, "65": 7, "11": 42, "22": 75, "33": 73, "44": 52, "55": 4, "66": 11,
}


# Sample positions ---------------------------------------------------------------------------------------------


def scattered_boards(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random legal boards: each side up to 15 checkers on a few random points; a third of them with X bearing
    off (all home), a third with X allowed on the bar too."""
    boards = np.zeros((n, BOARD_SIZE), dtype=np.int8)
    for board, kind in zip(boards, rng.integers(0, 3, size=n)):
        slots = np.arange(1, 7) if kind == 0 else np.arange(1, 25) if kind == 1 else np.arange(1, 26)
        where = rng.choice(slots, size=int(rng.integers(1, min(8, len(slots)) + 1)), replace=False)
        total = CHECKERS if rng.random() < 0.5 else int(rng.integers(1, CHECKERS + 1))
        board[where] += rng.multinomial(total, np.ones(len(where)) / len(where)).astype(np.int8)
        free = np.array([s for s in range(0, 25) if board[s] == 0])
        where = rng.choice(free, size=int(rng.integers(1, 8)), replace=False)
        total = CHECKERS if rng.random() < 0.5 else int(rng.integers(0, CHECKERS + 1))
        board[where] -= rng.multinomial(total, np.ones(len(where)) / len(where)).astype(np.int8)
    return validate_boards(boards)


def random_dice(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(1, 7, size=(n, 2))


@cache
def game_positions() -> np.ndarray:
    """Every position reached in 60 games of uniformly random play (realistic: hits, bars, closed boards, races)."""
    rng = np.random.default_rng(7)
    boards = np.repeat(START_BOARD[None], 60, axis=0)
    seen = []
    while len(boards):
        seen.append(boards)
        moves = afterstates(boards, random_dice(rng, len(boards)))
        counts = count_moves(moves.owner, len(boards))
        pick = np.cumsum(counts) - counts + (rng.random(len(boards)) * counts).astype(np.int64)
        boards = moves.after[pick]
        boards = boards[(boards < 0).any(axis=1)]  # drop finished games (the mover has nothing left)
    return np.concatenate(seen)


def sample_pairs(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n (board, dice) pairs, half from random games and half scattered."""
    rng = np.random.default_rng(seed)
    played = game_positions()
    boards = np.concatenate([played[rng.choice(len(played), n // 2, replace=False)], scattered_boards(rng, n - n // 2)])
    return boards, random_dice(rng, n)


def plays_of(result, i: int) -> set[bytes]:
    """The afterstates of position ``i`` of an ``afterstates`` result, as a set of board bytes."""
    lo, hi = np.searchsorted(result.owner, [i, i + 1])
    return {row.tobytes() for row in result.after[lo:hi]}


# A reference generator, slow and literal ----------------------------------------------------------------------


def reference_plays(board: np.ndarray, dice, sign: int) -> set[bytes]:
    """The legal results of the player whose checkers have ``sign`` on ``board``, played on the board as it
    stands: for sign -1 that is O, moving up the indices and bearing off past 24, with no switching at all.

    The rules are applied literally, one die at a time in both orders: the plays that use the most dice are
    legal; if that is one die of a non-double, only those using the larger die when any does.
    """
    def index(point: int) -> int:  # the mover's own point (25 its bar, 0 the opponent's bar) on the board
        return point if sign > 0 else BOARD_SIZE - 1 - point

    def mine(b, point):
        return sign * b[index(point)]

    def single_steps(b, die):
        on_bar = mine(b, 25) > 0
        home = all(mine(b, p) <= 0 for p in range(7, 26))
        for point in [25] if on_bar else [p for p in range(1, 25) if mine(b, p) > 0]:
            target = point - die
            child = list(b)
            child[index(point)] -= sign
            if target >= 1:
                if mine(b, target) < -1:
                    continue  # closed
                if mine(b, target) == -1:
                    child[index(target)] = 0
                    child[index(0)] -= sign  # the blot goes to its owner's bar
                child[index(target)] += sign
            elif not home or (target < 0 and any(mine(b, p) > 0 for p in range(point + 1, 7))):
                continue
            yield tuple(child)

    d1, d2 = (int(d) for d in dice)
    start = tuple(int(x) for x in board)
    uses: dict[tuple, set[tuple[int, int]]] = {start: set()}  # result -> {(dice played, first die)}
    for order in ([d1] * 4,) if d1 == d2 else ([d1, d2], [d2, d1]):
        level = {start}
        for played, die in enumerate(order, 1):
            level = {child for b in level for child in single_steps(b, die)}
            for child in level:
                uses.setdefault(child, set()).add((played, order[0]))
    most = max((played for u in uses.values() for played, _ in u), default=0)
    legal = {b for b, u in uses.items() if any(played == most for played, _ in u)} if most else {start}
    if most == 1 and d1 != d2:
        larger = {b for b, u in uses.items() if (1, max(d1, d2)) in u}
        legal = larger or legal
    return {np.array(b, dtype=np.int8).tobytes() for b in legal}


# Counts ---------------------------------------------------------------------------------------------------------


def test_opening_position_counts_per_roll():
    """Given the opening and each of the 21 rolls in one batch, the counts are GNU Backgammon's."""
    rolls = list(OPENING_COUNTS)
    boards = np.repeat(START_BOARD[None], len(rolls), axis=0)
    dice = np.array([[int(r[0]), int(r[1])] for r in rolls])

    counts = count_moves(afterstates(boards, dice).owner, len(rolls))

    assert dict(zip(rolls, counts.tolist())) == OPENING_COUNTS


def test_opening_counts_through_position_match_the_batch():
    """``Position.legal_moves`` (one position, with notation) lists the same plays as the batch."""
    start = Position.start()
    assert {roll: len(start.legal_moves(roll)) for roll in OPENING_COUNTS} == OPENING_COUNTS


# Shape of the result ----------------------------------------------------------------------------------------------


def test_dice_order_does_not_matter():
    """(d1, d2) and (d2, d1) are the same roll: the same set of afterstates."""
    boards, dice = sample_pairs(seed=1, n=1000)
    one, two = afterstates(boards, dice), afterstates(boards, dice[:, ::-1])
    for i in range(len(boards)):
        assert plays_of(one, i) == plays_of(two, i), (Position(boards[i]).position_id(), dice[i])


def test_afterstates_are_distinct_grouped_and_never_missing():
    """Rows are unique per position, grouped by owner in ascending order, and every position owns at least one
    (a roll with no play still yields the position, handed over)."""
    boards, dice = sample_pairs(seed=2, n=1500)
    result = afterstates(boards, dice)

    assert (np.diff(result.owner) >= 0).all()
    counts = count_moves(result.owner, len(boards))
    assert (counts >= 1).all() and counts.sum() == len(result.after)
    for i in range(len(boards)):
        assert len(plays_of(result, i)) == counts[i]
    validate_boards(result.after)  # every afterstate is a legal board


def test_no_play_hands_over_the_position_unchanged():
    """A play with no steps is only ever the one play of its position, and its afterstate is the position
    switched to the opponent, unchanged."""
    boards, dice = sample_pairs(seed=3, n=1500)
    result = afterstates(boards, dice, return_steps=True)
    no_play = (result.steps[:, 0, 0] < 0)
    assert no_play.any()  # the sample has some
    assert np.array_equal(result.after[no_play], switch(boards[result.owner[no_play]]))
    assert (count_moves(result.owner, len(boards))[result.owner[no_play]] == 1).all()  # and it is the only play


# Symmetry ---------------------------------------------------------------------------------------------------------


def test_switching_twice_is_identity():
    """Switching is an involution, and it swaps the bars: X's bar (25) becomes the opponent's bar (0)."""
    boards, _ = sample_pairs(seed=4, n=1000)
    assert np.array_equal(switch(switch(boards)), boards)
    assert np.array_equal(switch(boards)[:, OPP_BAR], -boards[:, OWN_BAR])


def test_movegen_commutes_with_switching():
    """The generator only ever moves the player on roll, so it relies on switching the board to play for O.

    Given any position P and roll,
    When O's plays are made directly on P's board by the reference (moving O's checkers up the indices, entering
      from index 0, bearing off past 24, never switching),
    Then they are exactly the generator's afterstates of switch(P) (which come back seen from X);
    And X's plays made on P by the reference, switched, are exactly the afterstates of P.
    """
    boards, dice = sample_pairs(seed=5, n=1200)
    for_x = afterstates(boards, dice)
    for_o = afterstates(switch(boards), dice)
    for i in range(len(boards)):
        context = (Position(boards[i]).position_id(), tuple(dice[i]))
        assert plays_of(for_o, i) == reference_plays(boards[i], dice[i], sign=-1), context
        x_plays = {switch(np.frombuffer(b, dtype=np.int8)).tobytes() for b in reference_plays(boards[i], dice[i], 1)}
        assert plays_of(for_x, i) == x_plays, context


def test_a_position_and_its_mirror_in_one_batch():
    """Putting P and switch(P) in one batch changes nothing for either: rows are independent."""
    boards, dice = sample_pairs(seed=6, n=300)
    both = afterstates(np.concatenate([boards, switch(boards)]), np.concatenate([dice, dice]))
    alone = afterstates(switch(boards), dice)
    for i in range(len(boards)):
        assert plays_of(both, len(boards) + i) == plays_of(alone, i)


# Batching -------------------------------------------------------------------------------------------------------


def test_a_batch_of_2000_equals_one_by_one():
    """Chunks (and the threads that expand them) give exactly the rows, in order, that separate calls give."""
    boards, dice = sample_pairs(seed=8, n=2000)
    batch = afterstates(boards, dice, return_steps=True)
    singles = [afterstates(boards[i:i + 1], dice[i:i + 1], return_steps=True) for i in range(len(boards))]

    assert np.array_equal(batch.after, np.concatenate([s.after for s in singles]))
    assert np.array_equal(batch.owner, np.concatenate([np.full(len(s.owner), i) for i, s in enumerate(singles)]))
    assert np.array_equal(batch.steps, np.concatenate([s.steps for s in singles]))


def test_one_thread_and_two_give_the_same_result(monkeypatch):
    """``BGAI_THREADS`` changes only the speed: the chunks expanded in parallel come back in order."""
    boards, dice = sample_pairs(seed=9, n=2000)
    monkeypatch.setenv("BGAI_THREADS", "1")
    one = afterstates(boards, dice)
    monkeypatch.setenv("BGAI_THREADS", "2")
    two = afterstates(boards, dice)
    assert np.array_equal(one.after, two.after) and np.array_equal(one.owner, two.owner)


def test_shuffling_the_batch_shuffles_the_results():
    """Each position's plays depend on that position alone, not on its place in the batch or its neighbours."""
    boards, dice = sample_pairs(seed=10, n=1200)
    order = np.random.default_rng(0).permutation(len(boards))
    plain, shuffled = afterstates(boards, dice), afterstates(boards[order], dice[order])
    for new, old in enumerate(order):
        assert plays_of(shuffled, new) == plays_of(plain, old)


def test_empty_batch():
    """No positions, no plays (and no error)."""
    result = afterstates(np.zeros((0, BOARD_SIZE), dtype=np.int8), np.zeros((0, 2), dtype=np.int64))
    assert result.after.shape == (0, BOARD_SIZE) and len(result.owner) == 0


# Steps and notation ---------------------------------------------------------------------------------------------


def replay(board: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Apply (from, to, hit) checker steps to ``board`` (mover's view), checking each one on the way."""
    b = board.astype(np.int64).copy()
    for src, dst, hit in steps[steps[:, 0] >= 0]:
        assert b[src] > 0, f"no checker on {src}"
        b[src] -= 1
        if dst > 0:
            assert bool(hit) == (b[dst] == -1), f"hit flag wrong on {dst}"
            assert b[dst] >= -1, f"landed on closed point {dst}"
            if hit:
                b[dst], b[OPP_BAR] = 0, b[OPP_BAR] - 1
            b[dst] += 1
    return b


def test_steps_replay_to_the_afterstate():
    """Given each play's steps, applying them one by one and switching gives its afterstate;
    each step moves a die's number of pips (or bears off with at most a die), and no die is used twice."""
    boards, dice = sample_pairs(seed=11, n=1500)
    result = afterstates(boards, dice, return_steps=True)
    for after, owner, steps in zip(result.after, result.owner, result.steps):
        board, roll = boards[owner], sorted(int(d) for d in dice[owner])
        assert np.array_equal(switch(replay(board, steps)), after)
        taken = steps[steps[:, 0] >= 0]
        available = roll * 2 if roll[0] == roll[1] else list(roll)
        moves = [int(src) - int(dst) for src, dst, _ in taken if dst > 0]
        bear_offs = sorted((int(src) for src, dst, _ in taken if dst == 0), reverse=True)
        for distance in moves:
            available.remove(distance)  # ValueError: no die of that number left
        for distance in bear_offs:
            available.remove(min(d for d in available if d >= distance))


def test_notation_round_trips_for_every_legal_play():
    """For every legal play of many positions, reading its notation back gives the same afterstate, and one
    checker's consecutive steps are written as one path (no part starts where another ends)."""
    boards, dice = sample_pairs(seed=12, n=150)
    for board, roll in zip(boards, dice):
        position, roll = Position(board), (int(roll[0]), int(roll[1]))
        moves = position.legal_moves(roll)
        legal = {m.after: m for m in moves}
        for move in moves:
            text = str(move)
            assert position.play(text, roll).after == move.after, (position.position_id(), roll, text)
            parts = [] if move.checker_steps() == [] else [p.split("(")[0].split("/") for p in text.split()]
            starts = {p[0] for p in parts}
            ends = {p[-1].rstrip("*") for p in parts} - {"off"}
            assert not (starts & ends), (position.position_id(), roll, text)
        assert len(legal) == len(moves)


# Playouts ---------------------------------------------------------------------------------------------------------


def test_random_playouts_keep_the_invariants():
    """Random games, turn by turn, batched:
    * every position owns at least one play, and each afterstate is a legal board;
    * each side has 15 checkers, on the board or off, and checkers off never come back;
    * the mover's pips drop by exactly the steps played, the opponent's rise only by the hits;
    * every game ends, and scores 1, 2 or 3 points.
    """
    rng = np.random.default_rng(13)
    games = 200
    boards = np.repeat(START_BOARD[None], games, axis=0)
    live = np.arange(games)
    points = np.zeros(games, dtype=np.int64)
    pips_index = np.arange(BOARD_SIZE)
    for _ in range(2000):
        if not len(live):
            break
        on_roll = boards[live]
        result = afterstates(on_roll, random_dice(rng, len(live)), return_steps=True)
        counts = count_moves(result.owner, len(live))
        assert (counts >= 1).all()
        pick = np.cumsum(counts) - counts + (rng.random(len(live)) * counts).astype(np.int64)
        after, steps = result.after[pick], result.steps[pick]
        validate_boards(after)

        before_mover = np.where(on_roll > 0, on_roll, 0).astype(np.int64)
        before_other = np.where(on_roll < 0, -on_roll, 0).astype(np.int64)
        mover = switch(after)  # back to the mover's view
        after_mover = np.where(mover > 0, mover, 0).astype(np.int64)
        after_other = np.where(mover < 0, -mover, 0).astype(np.int64)
        taken = steps[:, :, 0] >= 0
        borne = (taken & (steps[:, :, 1] == 0)).sum(axis=1)
        assert (after_other.sum(axis=1) == before_other.sum(axis=1)).all()  # hit checkers stay on the board
        assert (after_mover.sum(axis=1) == before_mover.sum(axis=1) - borne).all()
        moved = np.where(taken, steps[:, :, 0].astype(np.int64) - steps[:, :, 1], 0).sum(axis=1)
        assert (before_mover @ pips_index - after_mover @ pips_index == moved).all()
        hits = np.where(taken & (steps[:, :, 2] == 1), steps[:, :, 1].astype(np.int64), 0).sum(axis=1)
        other_pips = BOARD_SIZE - 1 - pips_index
        assert (after_other @ other_pips - before_other @ other_pips == hits).all()

        boards[live] = after
        won = ~(after < 0).any(axis=1)
        points[live[won]] = result_points(after[won])
        live = live[~won]
    assert not len(live), "games still running after 2000 turns"
    assert set(points.tolist()) <= {1, 2, 3} and 1 in points


# Golden game -------------------------------------------------------------------------------------------------------


def golden_game_lines(seed: int = GOLDEN_SEED, game: int = GOLDEN_GAME) -> list[str]:
    """One game of pubeval (seat 0) against the heuristic player (seat 1), with ``bgai.core.game``'s dice.

    Each line: turn, player, roll, the Position ID before the play (mover on roll), and the play. The plays are
    offered to the players sorted by afterstate, so the record does not depend on the generator's row order.
    """
    players = (PubevalPlayer(), HeuristicPlayer())
    rng = np.random.default_rng(0)  # neither player uses it
    ids = np.array([game])
    opening = roll_dice(seed, ids, np.zeros(1, dtype=np.int64))[0]
    seat = 0 if opening[0] > opening[1] else 1
    position = Position.start()
    lines = [f"# pubeval (seat 0) v heuristic (seat 1), bgai.core.game dice seed {seed}, game {game}"]
    for turn in range(1000):
        roll = tuple(int(d) for d in (opening if turn == 0 else roll_dice(seed, ids, np.array([turn]))[0]))
        moves = sorted(position.legal_moves(roll), key=lambda m: m.after.board.tobytes())
        after = np.stack([m.after.board for m in moves])
        pick = int(players[seat].choose(position.board[None], after, np.zeros(len(moves), np.int64), rng)[0])
        move = moves[pick]
        lines.append(f"{turn + 1:3d} {players[seat].name:9s} {roll[0]}{roll[1]} {position.position_id()} {move}")
        position = move.after
        if position.is_game_over():
            won = int(result_points(position.board[None])[0])
            lines.append(f"# {players[seat].name} wins {won} point{'s' if won > 1 else ''} in {turn + 1} turns")
            return lines
        seat = 1 - seat
    raise AssertionError("the golden game did not end")


def test_golden_game_replays_exactly():
    """A seeded game between two deterministic players is played again and compared move by move with the
    recorded one; any change in the rules, the notation or the players shows up as a diff here."""
    expected = GOLDEN.read_text().splitlines()
    actual = golden_game_lines()
    for number, (want, got) in enumerate(zip(expected, actual), 1):
        assert got == want, f"golden game differs at line {number}"
    assert len(actual) == len(expected)


def test_golden_game_record_is_legal_notation():
    """Every recorded play, read back from the recorded position and roll, is a legal play whose result is the
    next recorded position (seen from the next player)."""
    lines = [line for line in GOLDEN.read_text().splitlines() if not line.startswith("#")]
    for line, following in zip(lines, lines[1:] + [None]):
        _, _, roll, position_id, play = line.split(maxsplit=4)
        move = Position.from_position_id(position_id).play(play, roll)
        if following is not None:
            assert move.after.position_id() == following.split()[3]
        else:
            assert move.after.is_game_over()


if __name__ == "__main__":
    if sys.argv[1:] != ["--write-golden"]:
        sys.exit(f"usage: {sys.argv[0]} --write-golden   (rewrites {GOLDEN})")
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text("\n".join(golden_game_lines()) + "\n")
    print(f"wrote {GOLDEN}")


@pytest.mark.parametrize("steps", [False, True])
def test_the_compiled_generator_gives_the_numpy_generator_s_rows_in_its_order(steps):
    """bgai.core.kernels.afterstates_of expands each position depth first; its rows, owners and checker steps are the
    numpy generator's, in the same order, on game positions and on random boards of every shape (crowded bars,
    bear-offs), every roll of each."""
    from tests.test_encoding import game_positions, random_boards

    boards = np.concatenate([game_positions(1500, seed=21), random_boards(1500, seed=22)])
    rows = np.repeat(np.arange(len(boards)), 21)
    rolls = np.tile(np.array([(a, b) for a in range(1, 7) for b in range(a, 7)]), (len(boards), 1))
    compiled = afterstates(boards[rows], rolls, return_steps=steps)
    reference = reference_afterstates(boards[rows], rolls, return_steps=steps)
    np.testing.assert_array_equal(compiled.after, reference.after)
    np.testing.assert_array_equal(compiled.owner, reference.owner)
    if steps:
        np.testing.assert_array_equal(compiled.steps, reference.steps)
