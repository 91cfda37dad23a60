"""The phase classifier (bgai.phase): each class by a hand-built position, symmetry, and agreement with the rules
it is made of."""

import numpy as np

from bgai import Position
from bgai.bearoff import is_bearoff
from bgai.game import game_over
from bgai.movegen import switch
from bgai.phase import BEAROFF, CONTACT, NAMES, OVER, RACE, classify, is_race
from tests.test_encoding import game_positions


def phase_of(mine: dict, theirs: dict) -> str:
    return NAMES[classify(Position.from_points(mine, theirs).board[None])[0]]


def test_each_phase_by_example():
    # Both sides home: a bear-off; one checker still outside: a race; a checker behind an opposing one: contact
    assert phase_of({1: 3, 6: 2}, {19: 4, 24: 1}) == "bearoff"
    assert phase_of({1: 3, 9: 2}, {19: 4, 24: 1}) == "race"
    assert phase_of({1: 3, 20: 1}, {19: 4}) == "contact"
    assert phase_of({"bar": 1, 1: 3}, {19: 4}) == "contact"  # a checker on the bar has to enter past them
    assert phase_of({1: 3}, {}) == "over"  # the opponent has borne off everything
    assert phase_of({}, {}) == "over"
    assert NAMES[classify(Position.start().board[None])[0]] == "contact"


def test_classes_are_symmetric_and_made_of_the_rules_they_name():
    boards = game_positions(3000, seed=11)
    boards = boards[~game_over(boards)]  # a finished game is over for the loser on roll only
    phase = classify(boards)
    assert np.array_equal(phase, classify(switch(boards)))
    assert np.array_equal(phase == BEAROFF, is_bearoff(boards))
    assert np.array_equal(phase == CONTACT, ~is_race(boards))
    assert set(np.unique(phase)) == {BEAROFF, RACE, CONTACT} and OVER not in phase


def test_the_compiled_classifier_gives_the_numpy_classes():
    boards = np.concatenate([game_positions(3000, seed=12), Position.start().board[None],
                             np.zeros((1, 26), np.int8)])
    for view in (boards, switch(boards)):
        assert np.array_equal(classify(view), classify(view, compiled=False))
    assert set(np.unique(classify(boards))) == {OVER, BEAROFF, RACE, CONTACT}
