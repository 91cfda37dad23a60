"""The cube-decision reference set (bgai/coach/data/cube_reference.json) and its scoring rule.

The set was written by bgai.coach.cube_reference with Debian's GNU Backgammon; these tests only read it.
"""

import json
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from bgai.coach.cube_accuracy import REFERENCE as DATA
from bgai.coach.cube_reference import (
    CUBE_STATES,
    KINDS,
    SCORING,
    descendants,
    gnubg_0ply_score,
    reference_decisions,
    score_decisions,
)
from bgai.core.errors import BgaiError
from bgai.formats.position import Position


def entry(nd, dt, dp=1.0):
    return {"no_double": nd, "double_take": dt, "double_pass": dp}


def test_scoring_on_five_hand_made_decisions():
    # Given five positions, judged by the reference (ND, DT, DP), and a player's (double, take) on each
    entries = [
        entry(0.5, 0.7),   # double, take      player: no double, take   -> doubler loses 0.7 - 0.5
        entry(0.9, 1.05),  # double, pass      player: double, take      -> taker loses 1.05 - 1.0
        entry(0.3, 0.1),   # no double, take   player: double            -> doubler loses 0.3 - 0.1
        entry(1.3, 1.5),   # too good, pass    player: no double         -> right
        entry(1.0, 1.9),   # tie: ND = DP = 1, an optional double; pass. player: no double, pass -> costs nothing
    ]
    doubles = [False, True, True, False, False]
    takes = [True, True, False, True, False]

    score = score_decisions(entries, doubles, takes)

    # Then every entry is a doubler's decision, and the three the reference doubles are takers' decisions
    assert score["double_decisions"] == 5
    assert score["double_agreement"] == pytest.approx(2 / 5)
    assert score["double_mp"] == pytest.approx((200 + 0 + 200 + 0 + 0) / 5)
    assert score["take_decisions"] == 3
    assert score["take_agreement"] == pytest.approx(2 / 3)
    assert score["take_mp"] == pytest.approx(50 / 3)
    assert score["decisions"] == 8
    assert score["mp_per_decision"] == pytest.approx(450 / 8)
    # By kind: the first a missed double, the third a wrong (too early) double, the second a wrong take; the
    # optional double the last one keeps costs nothing and is no error
    kinds = score["by_kind"]
    assert list(kinds) == list(KINDS)
    assert {k: v["count"] for k, v in kinds.items()} == {"missed double": 1, "wrong double": 1, "wrong take": 1,
                                                          "wrong pass": 0}
    assert kinds["missed double"]["mp"] == pytest.approx(200 / 8) and kinds["wrong take"]["mp"] == pytest.approx(50 / 8)
    assert sum(v["mp"] for v in kinds.values()) == pytest.approx(score["mp_per_decision"])


def test_scoring_splits_the_loss_by_class_when_every_entry_has_one():
    # Given the five decisions above, the first three contact, the last two race
    entries = [entry(0.5, 0.7), entry(0.9, 1.05), entry(0.3, 0.1), entry(1.3, 1.5), entry(1.0, 1.9)]
    for e, c in zip(entries, ["contact"] * 3 + ["race"] * 2):
        e["class"] = c
    doubles, takes = [False, True, True, False, False], [True, True, False, True, False]

    score = score_decisions(entries, doubles, takes)

    # Then contact holds three doubler's decisions and the takers' of the first two (the reference doubles them),
    # race two and one: 200 + 0 + 200 doubler's and 0 + 50 taker's mp over five, nothing lost in race
    assert score["by_class"] == {"contact": {"decisions": 5, "mp_per_decision": pytest.approx(450 / 5)},
                                 "race": {"decisions": 3, "mp_per_decision": 0.0}}
    assert sum(c["decisions"] for c in score["by_class"].values()) == score["decisions"]
    # and without a class on every entry there is no split
    assert "by_class" not in score_decisions([entry(0.5, 0.7)], [False], [True])


def test_the_reference_itself_scores_perfectly():
    entries = [entry(0.5, 0.7), entry(0.9, 1.05), entry(0.3, 0.1), entry(1.3, 1.5)]
    decisions = [reference_decisions(e) for e in entries]
    score = score_decisions(entries, [d for d, _ in decisions], [t for _, t in decisions])
    assert score["double_agreement"] == score["take_agreement"] == 1
    assert score["mp_per_decision"] == 0


def test_scoring_needs_one_decision_per_entry():
    with pytest.raises(ValueError):
        score_decisions([entry(0.5, 0.7)], [True, False], [True])


@pytest.fixture(scope="module")
def reference():
    return json.loads(DATA.read_text())


def test_reference_metadata_describes_the_set(reference):
    meta, entries = reference["metadata"], reference["entries"]
    assert meta["scoring"] == SCORING
    assert "GNU Backgammon 1.07" in meta["gnubg_version"]
    counts = Counter(e["owner"] for e in entries)
    assert meta["counts"] == {"entries": len(entries), **counts}
    assert 1000 <= len(entries) <= 2000
    assert all(counts[owner] >= 300 for owner, _ in CUBE_STATES)
    assert "python benchmarks/cube_reference.py" in meta["command"]


def test_reference_entries_are_money_cube_decisions(reference):
    cube_states = dict(CUBE_STATES)
    for e in reference["entries"]:
        position = Position.from_position_id(e["position_id"])
        assert position.position_id() == e["position_id"]
        assert not position.is_game_over()
        assert e["cube"] == cube_states[e["owner"]]
        assert e["double_pass"] == 1.0  # money equities normalised to the cube: a pass gives the cube's value
        assert e["gnubg_0ply"]["double_pass"] == 1.0
        win, win_gammon, win_backgammon, lose_gammon, lose_backgammon = e["probabilities"]
        assert 0 <= win_backgammon <= win_gammon <= win <= 1
        assert 0 <= lose_backgammon <= lose_gammon <= 1 - win + 1e-6
    assert len({(e["position_id"], e["owner"]) for e in reference["entries"]}) == len(reference["entries"])


def test_gnubg_words_match_its_equities(reference):
    for e in reference["entries"]:
        double, take = reference_decisions(e)
        words = e["decision"].lower()
        assert double == words.startswith(("double", "redouble", "optional")), e
        assert take == words.endswith("take"), e


def test_stored_gnubg_0ply_score_is_the_scoring_applied_to_it(reference):
    entries = reference["entries"]
    score = gnubg_0ply_score(entries)
    stored = reference["metadata"]["gnubg_0ply_score"]  # made before the errors by kind were counted
    assert {k: score[k] for k in stored} == pytest.approx(stored)
    # A wrong pass is a take the reference calls for, passed at a cost
    passes = [e for e in entries if reference_decisions(e) == (True, True)
              and not reference_decisions(e["gnubg_0ply"])[1] and e["double_pass"] > e["double_take"]]
    assert score["by_kind"]["wrong pass"]["count"] == len(passes) > 0



# The match-play set (cube_reference --match) ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def match_reference():
    from bgai.coach.cube_accuracy import MATCH_REFERENCE

    return json.loads(MATCH_REFERENCE.read_text())


def test_match_reference_entries_are_cube_decisions_at_a_score_of_a_7_point_match(match_reference):
    from bgai.coach.cube_reference import MATCH_LENGTH, match_states
    from bgai.core.match import MatchScore

    meta, entries = match_reference["metadata"], match_reference["entries"]
    assert meta["description"].startswith("Match-play") and "--match" in meta["command"]
    assert meta["counts"] == {"entries": len(entries), **Counter(e["owner"] for e in entries)}
    assert 500 <= len(entries) <= 2000
    states = match_states()
    assert len(states) == MATCH_LENGTH**2 - 1 and not any(s["crawford"] for s in states)
    cube_states = dict(CUBE_STATES)
    for e in entries:
        m = e["match"]
        assert m in states  # a non-Crawford score of the match, post-Crawford where a side is one away
        score = MatchScore(m["length"], tuple(m["score"]), crawford=m["crawford"], post_crawford=m["post_crawford"])
        assert score.post_crawford == any(m["length"] - s == 1 for s in m["score"])
        assert e["cube"] == cube_states[e["owner"]]
        assert e["double_pass"] == pytest.approx(1.0, abs=1e-5)  # normalised to the cube, as money equities are
        double, take = reference_decisions(e)
        doubler, taker = e["decision"].lower().split(", ", 1)  # "never double, take (dead cube)" too
        tie = abs(min(e["double_take"], e["double_pass"]) - e["no_double"]) < 1e-5  # gnubg's floats: either way
        if doubler.startswith("never"):  # a dead cube: doubling changes nothing (a tie scores as no error)
            assert min(e["double_take"], e["double_pass"]) <= e["no_double"] + 1e-5, e
        elif not tie:
            assert double == doubler.startswith(("double", "redouble", "optional")), e
        assert take == taker.startswith("take"), e
    scores = Counter(tuple(e["match"]["score"]) for e in entries)
    assert len(scores) >= 30  # the scores spread over the match


def test_match_reference_gnubg_0ply_score_is_the_scoring_applied_to_it(match_reference):
    score = gnubg_0ply_score(match_reference["entries"])
    stored = match_reference["metadata"]["gnubg_0ply_score"]
    assert score["by_kind"] == stored.pop("by_kind")
    assert {k: score[k] for k in stored} == pytest.approx(stored)


def test_post_crawford_trailer_doubles_where_gnubg_does_and_the_leader_never_needs_to(match_reference):
    """The match rules the cube reads, checked against gnubg: after the Crawford game the trailer doubles at once
    (a take costs the leader nothing it could keep), and the leader, one point away, gains nothing by doubling."""
    from bgai.coach.cube_accuracy import boards_and_cubes
    from bgai.eval.bot import load_bot

    entries = match_reference["entries"]
    trailer = [e for e in entries if e["match"]["post_crawford"] and e["owner"] == "centered"
               and 7 - e["match"]["score"][1] == 1]
    leader = [e for e in entries if e["match"]["post_crawford"] and 7 - e["match"]["score"][0] == 1]
    assert len(trailer) >= 10 and len(leader) >= 10
    # gnubg: the trailer doubles, or is too good to (a gammon would win it the match); never "no double"
    assert {e["decision"].split(",")[0] for e in trailer} <= {"Double", "Optional double", "Too good to double"}
    boards, state = boards_and_cubes(trailer)
    ours = load_bot().cube_equities(boards, state)
    gnubg_doubles = np.array([reference_decisions(e)[0] for e in trailer])
    assert ours.should_double[gnubg_doubles].all()
    # the leader: gnubg calls the cube dead, and bgai never turns it
    assert all(e["decision"].startswith(("Never double", "Never redouble")) for e in leader)
    boards, state = boards_and_cubes(leader)
    assert not load_bot().cube_equities(boards, state).should_double.any()


# --- the set judged again by gnubg's rollouts ----------------------------------------------------------------------


def fake_rollouts(entries, indices, shift=0.0):
    """A rollouts file's contents for ``indices`` of ``entries``: their 2-ply equities, no double moved by
    ``shift``."""
    rows = [{"index": i, "position_id": entries[i]["position_id"], "cube": entries[i]["cube"],
             "owner": entries[i]["owner"], "no_double": entries[i]["no_double"] + shift, "no_double_se": 0.01,
             "double_take": entries[i]["double_take"], "double_take_se": 0.02} for i in indices]
    return {"metadata": {"trials": 1296}, "entries": rows}


def test_rollout_order_is_a_fixed_shuffle_of_every_entry():
    from bgai.coach.cube_reference import rollout_order

    order = rollout_order(1547)
    assert sorted(order) == list(range(1547)) and order != sorted(order)
    # the same every time, on any Python: the sample grows, it is never drawn again
    assert order[:8] == [1309, 862, 878, 1483, 208, 135, 750, 1429]


def test_judged_entries_are_the_longest_whole_run_of_the_order_and_take_the_rollouts_equities(reference):
    from bgai.coach.cube_reference import judged_by_rollouts, judged_prefix, rollout_order

    entries = reference["entries"]
    order = rollout_order(len(entries))
    rollouts = fake_rollouts(entries, order[:5] + order[6:9], shift=0.25)  # the sixth is missing
    assert judged_prefix(entries, rollouts) == order[:5]
    judged, former = judged_by_rollouts(entries, rollouts)
    assert former == [entries[i] for i in order[:5]]
    for new, old in zip(judged, former):
        assert new["position_id"] == old["position_id"] and new["class"] == old["class"]
        assert new["no_double"] == pytest.approx(old["no_double"] + 0.25)
        assert new["double_take"] == old["double_take"] and new["double_pass"] == 1.0
        assert new["gnubg_0ply"] == old["gnubg_0ply"]  # gnubg 0-ply's own equities stay, to be judged anew


def test_rollouts_made_for_another_set_are_refused(reference):
    from bgai.coach.cube_reference import judged_prefix, rollout_order

    entries = reference["entries"]
    order = rollout_order(len(entries))
    rollouts = fake_rollouts(entries, order[:3])
    rollouts["entries"][1]["position_id"] = entries[order[1] + 1]["position_id"]
    with pytest.raises(ValueError, match="another reference set"):
        judged_prefix(entries, rollouts)
    with pytest.raises(ValueError, match="has 1547 entries"):
        judged_prefix(entries, {"entries": [{**rollouts["entries"][0], "index": 5000}]})


def test_rolling_out_resumes_where_it_stopped_and_a_stop_loses_only_the_entry_in_progress(tmp_path, monkeypatch):
    from bgai.coach import cube_reference
    from bgai.coach.cube_reference import roll_out_reference, rollout_order

    calls = []

    def fake(position_id, cube, owner, trials, seed, gnubg):
        calls.append(seed)
        if len(calls) >= 4 and stop:
            raise KeyboardInterrupt  # killed while rolling out the fourth
        return {"no_double": seed / 10000, "no_double_se": 0.01, "double_take": 0.5, "double_take_se": 0.02,
                "double_pass": 1.0}

    monkeypatch.setattr(cube_reference, "gnubg_cube_rollout", fake)
    monkeypatch.setattr(cube_reference, "gnubg_version", lambda gnubg: "a fake gnubg")
    out = tmp_path / "rollouts.json"
    order = rollout_order(1547)
    stop = True
    with pytest.raises(KeyboardInterrupt):
        roll_out_reference(out=out, trials=36, limit=6, progress=False)
    assert [row["index"] for row in json.loads(out.read_text())["entries"]] == order[:3]
    stop = False
    calls.clear()
    done = roll_out_reference(out=out, trials=36, limit=6, progress=False)
    assert [row["index"] for row in done["entries"]] == order[:6]
    assert sorted(calls) == sorted(1000 + i for i in order[3:6])  # the first three are not rolled out again
    assert done["entries"][0]["no_double"] == (1000 + order[0]) / 10000
    assert done["metadata"]["trials"] == 36 and done["metadata"]["entries_in_reference"] == 1547
    with pytest.raises(ValueError, match="36 trials, not 1296"):
        roll_out_reference(out=out, trials=1296, limit=7, progress=False)
    monkeypatch.setattr(cube_reference, "gnubg_version", lambda gnubg: "another gnubg")
    with pytest.raises(ValueError, match="was made by a fake gnubg"):
        roll_out_reference(out=out, trials=36, limit=7, progress=False)


def test_rolling_out_in_parallel_keeps_the_order_and_an_entry_that_fails_is_named_and_the_rest_kept(
        tmp_path, monkeypatch):
    from bgai.coach import cube_reference
    from bgai.coach.cube_reference import roll_out_reference, rollout_order

    order = rollout_order(1547)
    failing = {order[1]}

    def fake(position_id, cube, owner, trials, seed, gnubg):
        if seed - 1000 in failing:
            time.sleep(0.5)  # (the other one finishes first)
            raise IndexError("list index out of range")  # what an unreadable gnubg output raised
        return {"no_double": 0.5, "no_double_se": 0.01, "double_take": 0.6, "double_take_se": 0.02,
                "double_pass": 1.0}

    monkeypatch.setattr(cube_reference, "gnubg_cube_rollout", fake)
    monkeypatch.setattr(cube_reference, "gnubg_version", lambda gnubg: "a fake gnubg")
    out = tmp_path / "rollouts.json"
    with pytest.raises(RuntimeError, match=f"rollout of entry {order[1]} .*failed: list index out of range"):
        roll_out_reference(out=out, trials=36, limit=2, jobs=2, progress=False)
    assert [row["index"] for row in json.loads(out.read_text())["entries"]] == [order[0]]  # the other one is kept
    failing.clear()
    done = roll_out_reference(out=out, trials=36, limit=8, jobs=2, progress=False)
    assert [row["index"] for row in done["entries"]] == order[:8]  # in the order, whichever finished first


def test_a_rollouts_file_is_written_by_one_process_at_a_time(tmp_path, monkeypatch):
    from bgai.coach import cube_reference
    from bgai.core.files import locked_file

    monkeypatch.setattr(cube_reference, "gnubg_version", lambda gnubg: "a fake gnubg")
    out = tmp_path / "rollouts.json"
    with locked_file(out, "gnubg rollout job"):
        with pytest.raises(BgaiError, match="being written by another gnubg rollout job"):
            cube_reference.roll_out_reference(out=out, trials=36, limit=1, progress=False)
    assert not out.exists()


def test_gnubg_rollout_commands_roll_out_no_double_then_double_take_with_the_opponent_owning_the_cube():
    from bgai.coach.cube_reference import gnubg_rollout_commands

    lines = gnubg_rollout_commands("4HPwATDgc/ABMA", 2, "on_roll", 1296, 1007).splitlines()
    assert "set rollout trials 1296" in lines and "set rollout seed 1007" in lines
    assert "set rollout cubeful on" in lines and "set rollout truncation enable off" in lines
    first, second = lines.index("rollout"), len(lines) - 1
    assert lines[second] == "rollout" and first < second
    assert lines[first - 4:first] == ["set cube value 2", "set cube owner 1", "set turn 1", "set board 4HPwATDgc/ABMA"]
    assert lines[second - 4:second] == ["set cube value 4", "set cube owner 0", "set turn 1",
                                        "set board 4HPwATDgc/ABMA"]


def test_the_committed_rollouts_judge_the_reference_set_itself(reference):
    from bgai.coach.cube_reference import ROLLOUTS, judged_by_rollouts

    rollouts = json.loads(ROLLOUTS.read_text())
    judged, _ = judged_by_rollouts(reference["entries"], rollouts)  # the same positions and cubes, or this raises
    assert len(judged) >= 1 and rollouts["metadata"]["trials"] == 1296
    assert rollouts["metadata"]["reference"] == DATA.name
    for e in judged:
        assert -3 <= e["no_double"] <= 3 and -6 <= e["double_take"] <= 6
        assert e["no_double_se"] >= 0 and e["double_take_se"] >= 0


@pytest.mark.parametrize("argv, message", [
    (["--rollouts", "--games", "5"], "takes no option of building a set"),
    (["--rollouts", "--seed=3"], "takes no option of building a set"),
    (["--rollouts", "--match"], "takes no option of building a set"),
    (["--trials", "36"], "go with --rollouts"),
    (["--rollouts", "--gam", "5"], "unrecognized arguments: --gam"),  # no abbreviation slips past the checks
])
def test_the_command_refuses_options_that_do_not_go_together(argv, message, capsys):
    from bgai.coach.cube_reference import main

    with pytest.raises(SystemExit):
        main(argv)
    assert message in capsys.readouterr().err


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_stopped_rollout_run_leaves_no_gnubg_behind(tmp_path):
    # SIGTERM stops the run as Ctrl-C does: the gnubg processes of the entries in progress end with it (before, they
    # ran on to the end of their rollouts). A stand-in for gnubg that sleeps plays the long rollouts; like Debian's
    # gnubg, it outlives the closing of script's terminal (it ignores the hang-up), so it must be ended itself.
    import signal
    import subprocess
    import sys
    import time

    fake = tmp_path / "gnubg"
    fake.write_text('#!/bin/sh\nif [ "$1" = "--version" ]; then echo "GNU Backgammon 0.stand-in"; exit 0; fi\n'
                    "trap '' HUP\nexec sleep 120\n")
    fake.chmod(0o755)
    run = subprocess.Popen([sys.executable, "-m", "bgai.coach.cube_reference", "--rollouts", "--gnubg", str(fake),
                            "--out", str(tmp_path / "rollouts.json"), "--jobs", "2", "--limit", "2"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    sleeping: list[int] = []
    while time.monotonic() < deadline and len(sleeping) < 2:
        time.sleep(0.2)
        sleeping = [p for p in descendants(run.pid) if Path(f"/proc/{p}/comm").read_text().strip() == "sleep"]
    below = descendants(run.pid)
    assert len(sleeping) == 2, "the two rollouts did not start"
    run.send_signal(signal.SIGTERM)
    run.communicate(timeout=30)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(p) for p in below):
        time.sleep(0.2)
    assert not [p for p in below if _alive(p)] and run.returncode != 0
    assert not (tmp_path / "rollouts.json").exists()  # nothing finished, nothing written


def test_gnubg_judges_a_cube_decision_in_its_own_process_through_the_job_runner():
    # (bgai.coach.gnubg_job: cube_reference.gnubg_evaluate runs in Debian gnubg's embedded Python, without numpy)
    from bgai.coach.cube_reference import run_gnubg

    [start] = run_gnubg([["4HPwATDgc/ABMA", "centered", 1]], 0, True)
    assert start["class"] == "contact" and start["decision"].startswith("No double")
    assert start["no_double"] > min(start["double_take"], start["double_pass"])  # (what "no double" says)
    assert 0.45 < start["probabilities"][0] < 0.6
