"""The checker-play reference set (bgai/coach/data/move_reference.json) and its scoring rule.

The set was written by bgai.coach.move_reference with Debian's GNU Backgammon; these tests only read it.
"""

import json
import math
from collections import Counter

import numpy as np
import pytest

from bgai.coach.move_accuracy import REFERENCE as DATA
from bgai.coach.move_accuracy import bot_choices, decisions
from bgai.coach.move_reference import CLASSES, SCORING, gnubg_0ply_choices, score_moves
from bgai.core.movegen import afterstates
from bgai.core.phase import NAMES, classify
from bgai.eval.bot import load_bot
from bgai.formats.position import Position, encode_position_id


def entry(equities, cls="contact", zero_ply=None):
    plays = [f"play{i}" for i in range(len(equities))]
    return {"position_id": "hand-made", "class": cls, "plays": plays, "equities": equities,
            "equities_0ply": zero_ply or equities}


def test_scoring_on_four_hand_made_decisions():
    # Given four decisions judged by the reference, and a player's choice in each
    entries = [
        entry([0.30, 0.25, 0.10]),               # plays the second: loses 0.05
        entry([-0.40, -0.41], cls="race"),       # plays the best: loses nothing
        entry([0.9, 0.9, 0.5], cls="bearoff"),   # a tie for best; plays the other best: loses nothing
        entry([0.0, -0.1, -0.2]),                # plays the worst: loses 0.2
    ]
    chosen = [1, 0, 1, 2]

    score = score_moves(entries, chosen)

    # Then the mean error is 0.25 / 4, half the moves are a best play, and each class is scored apart
    assert score["decisions"] == 4
    assert score["mp_per_move"] == pytest.approx(250 / 4)
    assert score["best_play"] == pytest.approx(2 / 4)
    errors = np.array([50, 0, 0, 200])
    assert score["mp_se"] == pytest.approx(errors.std(ddof=1) / 2)
    contact = score["by_class"]["contact"]
    assert (contact["decisions"], contact["mp_per_move"], contact["best_play"]) == (2, pytest.approx(125), 0)
    assert score["by_class"]["race"] == {"decisions": 1, "mp_per_move": 0, "mp_se": 0, "best_play": 1}
    assert score["by_class"]["bearoff"]["best_play"] == 1


def test_the_reference_best_scores_perfectly_and_gnubg_0ply_picks_its_own_best():
    entries = [entry([0.3, 0.1], zero_ply=[0.1, 0.2]), entry([0.5, 0.5, 0.1], zero_ply=[0.0, 0.0, -0.1])]
    assert score_moves(entries, [0, 0])["mp_per_move"] == 0
    assert gnubg_0ply_choices(entries) == [1, 0]  # a 0-ply tie goes to the first play
    assert score_moves(entries, gnubg_0ply_choices(entries))["mp_per_move"] == pytest.approx(100)


def test_scoring_needs_one_play_per_entry_among_its_plays():
    with pytest.raises(ValueError):
        score_moves([entry([0.1, 0.0])], [0, 1])
    with pytest.raises(ValueError):
        score_moves([entry([0.1, 0.0])], [2])


@pytest.fixture(scope="module")
def reference():
    return json.loads(DATA.read_text())


def test_reference_metadata_describes_the_set(reference):
    meta, entries = reference["metadata"], reference["entries"]
    assert meta["scoring"] == SCORING
    assert "GNU Backgammon 1.07" in meta["gnubg_version"]
    assert "evalcontext(0, 2, 1, 1, 0.0)" in meta["evaluation"]
    counts = Counter(e["class"] for e in entries)
    assert meta["counts"]["decisions"] == len(entries)
    assert all(meta["counts"][c] == counts[c] for c in CLASSES)
    assert meta["counts"]["plays"] == sum(len(e["plays"]) for e in entries)
    assert 1500 <= len(entries) <= 2500
    assert counts["contact"] > counts["race"] > 0 and counts["bearoff"] > 0
    assert "python benchmarks/move_reference.py" in meta["command"]
    assert DATA.stat().st_size < 4_000_000


def test_reference_entries_are_unforced_decisions_with_every_legal_play(reference):
    entries = reference["entries"]
    assert len({(e["position_id"], tuple(e["dice"])) for e in entries}) == len(entries)
    boards, dice = decisions(entries)
    assert all(Position(b).position_id() == e["position_id"] for b, e in zip(boards, entries))
    classes = classify(boards)
    assert [NAMES[c] for c in classes] == [e["class"] for e in entries]  # crashed apart from contact
    assert {e["class"] for e in entries} == set(CLASSES)
    assert all(d[0] >= d[1] for d in dice)
    moves = afterstates(boards, dice)
    starts = np.searchsorted(moves.owner, np.arange(len(entries) + 1))
    for i, e in enumerate(entries):
        legal = {encode_position_id(after) for after in moves.after[starts[i]:starts[i + 1]]}
        assert len(e["plays"]) == len(set(e["plays"])) >= 2
        assert set(e["plays"]) == legal, (e["position_id"], e["dice"])


def test_reference_equities_are_finite_and_sorted_best_first(reference):
    tied = []
    for k, e in enumerate(reference["entries"]):
        assert len(e["equities"]) == len(e["equities_0ply"]) == len(e["plays"])
        for value in e["equities"] + e["equities_0ply"]:
            assert math.isfinite(value) and -3 <= value <= 3
            assert round(value, 5) == value
        assert e["equities"] == sorted(e["equities"], reverse=True)
        if e["equities"].count(e["equities"][0]) > 1:
            tied.append(k)
    # the best play is unique, except in the entries the metadata lists
    assert reference["metadata"]["tied_best"]["entries"] == tied


def test_stored_gnubg_0ply_score_is_the_scoring_applied_to_it(reference):
    entries = reference["entries"]
    score = score_moves(entries, gnubg_0ply_choices(entries))
    stored = reference["metadata"]["gnubg_0ply_score"]
    assert {k: v for k, v in score.items() if k != "by_class"} == pytest.approx(
        {k: v for k, v in stored.items() if k != "by_class"})
    for name in CLASSES:
        assert score["by_class"][name] == pytest.approx(stored["by_class"][name])
    assert 0 < score["mp_per_move"] < 10


def test_bgai_0ply_is_scored_on_a_slice(reference):
    entries = reference["entries"][::40]
    chosen, _ = bot_choices(load_bot(plies=0), entries)
    score = score_moves(entries, chosen)
    assert score["decisions"] == len(entries)
    assert 0 <= score["mp_per_move"] < 50
    assert 0.3 < score["best_play"] <= 1


def test_gnubg_evaluates_afterstates_in_its_own_process_through_the_job_runner():
    # (bgai.coach.gnubg_job: the function runs in Debian gnubg's embedded Python, its result comes back as JSON)
    from bgai.coach.move_reference import run_gnubg

    start = Position.start()
    out = run_gnubg([start.position_id(), "4HPwATDgc/ABMA"], [0])
    first, second = out["results"]
    # the start position, the side on roll to move: gnubg's 0-ply equity of it is a small edge, its chances coherent
    for result in (first, second):
        win, win_gammon, win_bg, lose_gammon, lose_bg, equity = result["0"]
        assert 0.45 < win < 0.6 and 0 <= win_bg <= win_gammon <= win and 0 <= lose_bg <= lose_gammon <= 1 - win
        assert abs(equity - (2 * win - 1 + win_gammon - lose_gammon + win_bg - lose_bg)) < 1e-4
    assert first == second and out["cpu_seconds"] >= 0


def test_gnubg_plays_a_match_of_its_own_and_saves_it(tmp_path):
    from bgai.coach.gnubg_matches import make_match
    from bgai.formats.matchfile import read_match

    paths = make_match(tmp_path, 1, 5)
    match = read_match(paths["mat"])
    assert paths["sgf"].exists() and match.length == 1 and len(match.games) >= 1
