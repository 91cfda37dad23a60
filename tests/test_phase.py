"""The phase classifier (bgai.core.phase): each class by a hand-built position, symmetry, and agreement with the rules
it is made of."""

import json
from pathlib import Path

import numpy as np

from bgai import Position
from bgai.core.game import game_over
from bgai.core.movegen import switch
from bgai.core.phase import (
    BEAROFF,
    CONTACT,
    CRASHED,
    NAMES,
    OVER,
    RACE,
    classify,
    is_crashed,
    is_race,
    reference_classify,
)
from bgai.eval.bearoff import is_bearoff
from bgai.formats.position import decode_position_id
from tests.test_encoding import game_positions


def phase_of(mine: dict, theirs: dict) -> str:
    return NAMES[classify(Position.from_points(mine, theirs).board[None])[0]]


def test_each_phase_by_example():
    # Both sides home: a bear-off; one checker still outside: a race; a checker behind an opposing one: contact
    assert phase_of({1: 3, 6: 2}, {19: 4, 24: 1}) == "bearoff"
    assert phase_of({1: 3, 9: 2}, {19: 4, 24: 1}) == "race"
    assert phase_of({1: 3, 20: 1}, {19: 4}) == "crashed"  # contact, and both sides have six checkers or fewer
    assert phase_of({"bar": 1, 1: 3}, {19: 4}) == "crashed"  # a checker on the bar has to enter past them
    assert phase_of({6: 5, 8: 3, 13: 4, 20: 1}, {19: 5, 17: 3, 12: 5}) == "contact"
    assert phase_of({1: 3}, {}) == "over"  # the opponent has borne off everything
    assert phase_of({}, {}) == "over"
    assert NAMES[classify(Position.start().board[None])[0]] == "contact"


def test_classes_are_symmetric_and_made_of_the_rules_they_name():
    boards = game_positions(3000, seed=11)
    boards = boards[~game_over(boards)]  # a finished game is over for the loser on roll only
    phase = classify(boards)
    assert np.array_equal(phase, classify(switch(boards)))
    assert np.array_equal(phase == BEAROFF, is_bearoff(boards))
    assert np.array_equal(np.isin(phase, (CONTACT, CRASHED)), ~is_race(boards))
    assert np.array_equal(phase == CRASHED, ~is_race(boards) & is_crashed(boards))
    assert set(np.unique(phase)) == {BEAROFF, RACE, CONTACT, CRASHED} and OVER not in phase


def test_crashed_by_example():
    # Seven checkers in play, none buried: not crashed; six: crashed
    seven, six = {6: 2, 5: 2, 4: 3}, {6: 2, 5: 2, 4: 2}
    opponent = {3: 1, 19: 5, 17: 3, 12: 5}  # contact: a checker of theirs on our 3 point, 13 elsewhere
    assert phase_of(seven, opponent) == "contact" and phase_of(six, opponent) == "crashed"
    # Checkers stacked on our ace point no longer count: 2 there and 6 elsewhere crash, 2 and 7 do not
    assert phase_of({1: 2, 6: 2, 5: 2, 4: 2}, opponent) == "crashed"
    assert phase_of({1: 2, 6: 2, 5: 2, 4: 3}, opponent) == "contact"
    # With two or more on the ace point, those on the deuce point but one do not count either
    assert phase_of({1: 2, 2: 3, 6: 2, 5: 2, 4: 1}, opponent) == "crashed"
    assert phase_of({1: 2, 2: 3, 6: 2, 5: 2, 4: 2}, opponent) == "contact"
    # With at most one on the ace point, the deuce point's checkers but one do not count
    assert phase_of({1: 1, 2: 4, 6: 2, 5: 2}, opponent) == "crashed"
    assert phase_of({1: 1, 2: 4, 6: 2, 5: 2, 4: 1}, opponent) == "contact"


def test_crashed_as_gnu_backgammon_classifies():
    """Every contact position of the cube reference set (its class from gnubg.classifypos), classified the same."""
    entries = json.loads((Path(__file__).parents[1] / "bgai/coach/data/cube_reference.json").read_text())["entries"]
    kept = [e for e in entries if e["class"] in ("contact", "crashed")]
    boards = np.array([decode_position_id(e["position_id"]) for e in kept], dtype=np.int8)
    ours = [NAMES[c] for c in classify(boards)]
    assert ours == [e["class"] for e in kept]
    assert 100 < ours.count("crashed") < len(ours) / 2
    assert np.array_equal(reference_classify(boards), classify(boards))


def test_the_compiled_classifier_gives_the_numpy_classes():
    boards = np.concatenate([game_positions(3000, seed=12), Position.start().board[None],
                             np.zeros((1, 26), np.int8)])
    for view in (boards, switch(boards)):
        assert np.array_equal(classify(view), reference_classify(view))
    assert set(np.unique(classify(boards))) == {OVER, BEAROFF, RACE, CONTACT, CRASHED}
