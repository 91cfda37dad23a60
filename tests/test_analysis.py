"""Match analysis: errors, marks, forced plays, cube decisions, error rates, luck; the reports and the SVG board."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from bgai import Position
from bgai.eval.bot import PLAY_PLIES, load_bot
from bgai.formats.matchfile import MatchRecord, read_mat, write_mat
from bgai.formats.svg import board_svg
from bgai.frontends.cli import main
from bgai.play.analysis import CLOSE_CUBE, analyse_match, mark_of, rating_of
from bgai.play.analysis_report import html_report, text_report

DATA = Path(__file__).parent / "data" / "matches"


@pytest.fixture(scope="module")
def bot():
    return load_bot()


@pytest.fixture(scope="module")
def gnubg_match(bot):
    return analyse_match(read_mat(DATA / "gnubg-3pt-seed6.mat"), bot, progress=False)


def test_a_known_blunder_is_marked_very_bad(bot):
    """Given the opening 65 played 13/2 instead of running 24/13, the analysis marks it very bad, best 24/13."""
    match = MatchRecord(("Alice", "Bob"), 0)
    game = match.new_game()
    game.add_play("65", "13/2", player=0)
    game.add_play("31", "8/5 6/5")
    game.add_resign(1, player=0)
    first = analyse_match(match, bot, progress=False).decisions[0]
    assert first.kind == "move" and first.played == "13/2" and first.best == "24/13"
    assert first.error > 0.12 and first.mark == "very bad" and first.counted
    assert first.candidates[0][0] == "24/13" and first.candidates[0][1] - first.error == pytest.approx(
        next(v for text, v, _ in first.candidates if text == "13/2"))


def test_at_1_ply_the_play_made_and_the_best_are_judged_at_1_ply():
    analysis = analyse_match(read_mat(DATA / "edge-cases.mat"), load_bot(plies=1), progress=False)
    assert analysis.plies == 1
    for d in analysis.decisions:
        if d.kind == "move" and d.counted:
            depths = {text: ply for text, _, ply in d.candidates}
            assert depths[d.best] == 1 and depths[d.played] == 1
    # The report's error cards compare a play with the best only when both were judged at the same ply; a play that
    # move filtering left at 0-ply shows its ply and no difference.
    cards = re.findall(r"<tr><th>Play</th>.*?</table>", html_report(analysis))
    rows = [re.findall(r"<td>([^<]*)</td><td>([+-][\d.]+)</td><td>([^<]*)</td><td>(\d)</td>", card) for card in cards]
    assert cards and all(rows)
    for card in rows:
        (_, best, _, deepest), *others = card
        assert deepest == "1" and any(ply == "0" for *_, ply in others) == any(diff == "—" for _, _, diff, _ in others)
        for _, value, diff, ply in others:
            assert diff == "—" if ply != deepest else float(diff) == pytest.approx(float(value) - float(best), abs=2e-3)
    assert any(ply == "0" for card in rows for *_, ply in card)  # the rule was put to the test


def test_a_forced_play_has_no_error_and_is_not_counted(bot):
    """Bob, on the bar against Alice's 6 point, rolls 66: no play is possible. It is not a decision."""
    analysis = analyse_match(read_mat(DATA / "edge-cases.mat"), bot, progress=False)
    dance = next(d for d in analysis.decisions if d.kind == "move" and d.played == "no play")
    assert dance.dice == (6, 6) and dance.error == 0 and not dance.counted and dance.mark is None
    bob = analysis.players[1]
    legal = [len(d.position.legal_moves(d.dice)) for d in analysis.decisions if d.kind == "move" and d.player == 1]
    assert bob.moves == len(legal) and bob.unforced == sum(n > 1 for n in legal)


def test_error_rates_are_the_sums_over_the_counted_decisions(gnubg_match):
    for seat, p in enumerate(gnubg_match.players):
        mine = [d for d in gnubg_match.decisions if d.player == seat and d.counted]
        moves = [d for d in mine if d.kind == "move"]
        cube = [d for d in mine if d.kind in ("double", "take")]
        assert p.unforced == len(moves) and p.close_cube == len(cube)
        assert p.checker_rate == pytest.approx(1000 * sum(d.error for d in moves) / len(moves))
        total = sum(d.error for d in mine)
        assert p.error_rate == pytest.approx(1000 * total / len(mine))
        assert p.pr == pytest.approx(p.error_rate / 2)
        assert p.rating == rating_of(total / len(mine))
        assert sum(p.checker_marks.values()) == sum(1 for d in moves if d.mark)
    assert all(d.error >= 0 for d in gnubg_match.decisions)


def test_cube_errors_follow_from_the_three_equities(gnubg_match):
    """Doubler: best of ND and min(DT, DP) minus what it chose; taker: DT - DP for a wrong take, DP - DT for a
    wrong pass; a no double counts only when close (GNU Backgammon's 0.16 rule); doubles and answers always."""
    cube = [d for d in gnubg_match.decisions if d.kind in ("double", "take")]
    assert {d.kind for d in cube} == {"double", "take"}
    for d in cube:
        (_, nd), (_, dt), (_, dp) = d.candidates
        assert dp == pytest.approx(1.0)
        if d.kind == "double":
            doubled = d.played == "double"
            assert d.error == pytest.approx(max(nd, min(dt, dp)) - (min(dt, dp) if doubled else nd))
            assert d.counted == (doubled or max(nd, min(dt, dp)) - min(dt, 1.0) < CLOSE_CUBE)
        else:
            wrong = dt - dp if d.played == "take" else dp - dt
            assert d.error == pytest.approx(max(0.0, wrong)) and d.counted


# Judging the cube by a cubeful rollout (analyse_match(cube_rollout=...), bgai analyse --cube-rollout) --------------

FEW_TRIALS = {"trials": 36, "truncate": 2, "jobs": 1}  # a rollout short enough for a test


@pytest.fixture
def money_without_jacoby(tmp_path) -> Path:
    """xg-style-money.mat without its Jacoby rule: a short money session (9 cube decisions and an answer) whose
    cube a rollout may judge."""
    path = tmp_path / "money.mat"
    lines = (DATA / "xg-style-money.mat").read_text().splitlines(keepends=True)
    path.write_text("".join(line for line in lines if "Jacoby" not in line))
    return path


def test_a_rollout_judges_a_money_sessions_cube_decisions_and_marks_them(bot, money_without_jacoby):
    """Given a money session without the Jacoby rule, When it is analysed with cube_rollout, Then every cube
    decision (and answer to a double) says it was judged by rollout and carries the rollout's ND, DT and DP = 1 (the
    decision Bot.cube_decision(..., rollout=...) gives there), its error follows from them as the formula's would;
    the checker plays are judged as without it, and the JSON says how the cube was judged."""
    record = read_mat(money_without_jacoby)
    assert record.length == 0 and not record.jacoby
    rolled = analyse_match(record, bot, progress=False, cube_rollout=FEW_TRIALS)
    plain = analyse_match(record, bot, progress=False)
    cube = [d for d in rolled.decisions if d.kind in ("double", "take")]
    assert {d.kind for d in cube} == {"double", "take"} and len(cube) == 10
    plain_cube = [d for d in plain.decisions if d.kind in ("double", "take")]
    assert {d.method for d in cube} == {"rollout"} and {d.method for d in plain_cube} == {"formula"}
    for d in cube:
        owner = "centered" if d.cube_owner is None else "me"
        truth = bot.cube_decision(d.position, d.cube, owner, rollout=FEW_TRIALS)
        (_, nd), (_, dt), (_, dp) = d.candidates
        assert (nd, dt, dp) == (pytest.approx(truth.no_double), pytest.approx(truth.double_take), 1.0)
        if d.kind == "double":
            doubled = d.played == "double"
            assert d.error == pytest.approx(max(nd, min(dt, dp)) - (min(dt, dp) if doubled else nd))
        else:
            assert d.error == pytest.approx(max(0.0, dt - dp if d.played == "take" else dp - dt))
    assert any(a.candidates != b.candidates for a, b in zip(cube, plain_cube))
    moves = [d.to_dict() for d in rolled.decisions if d.kind == "move"]
    assert moves == [d.to_dict() for d in plain.decisions if d.kind == "move"]
    data = json.loads(json.dumps(rolled.to_dict()))
    assert data["cube_method"] == "rollout" and data["cube_rollout"]["trials"] == 36
    assert data["cube_rollout_refusal"] is None and "cube_rollout" in data["definitions"]
    assert {d["method"] for d in data["decisions"]} == {"rollout", None}
    assert "Cube decisions judged by a cubeful rollout (36 trials truncated after 2 plies" in text_report(rolled)
    assert "Cubeful equities (a cubeful rollout) in EMG" in html_report(rolled)


@pytest.mark.parametrize("name, reason", [("gnubg-3pt-seed6.mat", "not a 3-point match"),
                                          ("xg-style-money.mat", "not a game with the Jacoby rule")])
def test_a_match_or_the_jacoby_rule_keeps_the_formula_and_says_so_in_one_line(bot, name, reason):
    record = read_mat(DATA / name)
    asked = analyse_match(record, bot, progress=False, cube_rollout=True)
    plain = analyse_match(record, bot, progress=False)
    assert asked.cube_method == "formula" and asked.cube_rollout is None and reason in asked.cube_rollout_refusal
    assert [d.to_dict() for d in asked.decisions] == [d.to_dict() for d in plain.decisions]
    line = next(line for line in text_report(asked).splitlines() if line.startswith("Cube decisions judged by"))
    assert line.startswith("Cube decisions judged by the bot's formula at 0-ply: a rollout cube decision is for "
                           "money games") and reason in line
    assert asked.to_dict()["cube_rollout_refusal"] == asked.cube_rollout_refusal


def test_cli_analyse_cube_rollout(money_without_jacoby, capsys, monkeypatch):
    """bgai analyse --cube-rollout judges a money session's cube by the rollout (its settings shortened here, the
    default being bgai.eval.bot.CUBE_ROLLOUT's, about a second a decision), and a match's by the formula, saying why."""
    monkeypatch.setattr("bgai.play.analysis.CUBE_ROLLOUT", {**FEW_TRIALS, "plies": 0})
    assert main(["analyse", str(money_without_jacoby), "--cube-rollout", "--json", "-", "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cube_method"] == "rollout" and data["cube_rollout"] == {**FEW_TRIALS, "plies": 0}
    assert {d["method"] for d in data["decisions"] if d["kind"] in ("double", "take")} == {"rollout"}
    assert main(["analyse", str(DATA / "edge-cases.mat"), "--cube-rollout", "--quiet", "--plies", "0"]) == 0
    assert "formula at 0-ply: a rollout cube decision is for money games" in capsys.readouterr().out
    assert main(["analyse", str(money_without_jacoby), "--quiet"]) == 0  # without it: the formula, at PLAY_PLIES
    assert f"Cube decisions judged by the bot's formula at {PLAY_PLIES}-ply.\n" in capsys.readouterr().out


def test_the_opening_rolls_luck_averages_to_zero(bot):
    """Luck is the roll's best equity minus the mean over the rolls: over the 15 opening rolls (each 2 ways out of
    30) it averages to zero."""
    match = MatchRecord(("Alice", "Bob"), 0)
    for high in range(2, 7):
        for low in range(1, high):
            game = match.new_game()
            game.add_play((high, low), bot.choose_move(game.position, (high, low)), player=0)
            game.add_resign(1, player=0)
    analysis = analyse_match(match, bot, progress=False)
    luck = [d.luck for d in analysis.decisions if d.kind == "move"]
    # (zero within float32's rounding: the same board's value in another row of a pass may differ in the last
    # bits, bgai.eval.kernels.first_layer)
    assert len(luck) == 15 and abs(np.mean(luck)) < 1e-6 and max(luck) > 0.05 > -0.05 > min(luck)


def test_luck_totals_and_the_luck_adjusted_result(gnubg_match):
    """A player's luck is the sum of its rolls' luck; the luck-adjusted result is the actual result minus the
    difference in luck (MWC); the actual results of a finished match are +-50%."""
    a, b = gnubg_match.players
    for seat, p in enumerate(gnubg_match.players):
        assert p.luck == pytest.approx(sum(d.luck for d in gnubg_match.decisions
                                           if d.kind == "move" and d.player == seat))
    assert (a.actual_result, b.actual_result) == (pytest.approx(-0.5), pytest.approx(0.5))
    assert a.luck_adjusted_result == pytest.approx(a.actual_result - (a.luck_cost - b.luck_cost))
    assert a.luck_adjusted_result == pytest.approx(-b.luck_adjusted_result)


def test_the_equity_graph_runs_game_by_game_within_match_winning_chances(gnubg_match):
    graph = gnubg_match.graph
    starts = [p for p in graph if p["label"] == "start"]
    assert [p["game"] for p in starts] == [1, 2, 3, 4] and starts[0]["value"] == pytest.approx(0.5)
    assert all(0 <= p["value"] <= 1 for p in graph)
    assert graph[-1]["value"] == 0.0  # Alice lost the match


def test_marks_and_ratings_use_gnubgs_thresholds():
    assert [mark_of(e) for e in (0.0, 0.029, 0.03, 0.06, 0.119, 0.12)] == [
        None, None, "doubtful", "bad", "bad", "very bad"]
    assert rating_of(0.0019) == "Supernatural" and rating_of(0.011) == "Advanced" and rating_of(0.05) == "Awful!"


def test_money_sessions_count_results_in_points(bot):
    analysis = analyse_match(read_mat(DATA / "xg-style-money.mat"), bot, progress=False)
    carol, dave = analysis.players
    assert (carol.actual_result, dave.actual_result) == (-3.0, 3.0)
    assert analysis.graph[-1]["value"] == pytest.approx(-3.0)


def test_reports_text_json_html(gnubg_match):
    text = text_report(gnubg_match)
    assert "Error rate, mEMG per decision" in text and "Marked errors" in text and "isCloseCubedecision" in text
    data = json.loads(json.dumps(gnubg_match.to_dict()))
    assert data["match"]["players"] == ["Alice", "Bob"] and data["units"] == {"error": "EMG", "cost": "MWC"}
    assert len(data["decisions"]) == len(gnubg_match.decisions)
    # each marked cube error gives the three cubeful equities it was judged by, as the HTML report does
    cube = [d for d in gnubg_match.marked if d.kind in ("double", "take")]
    assert cube
    for d in cube:
        nd, dt, dp = (value for _, value in d.candidates)
        assert f"(no double {nd:+.3f}, double/take {dt:+.3f}, double/pass {dp:+.3f}; EMG for the doubler)" in text
    html = html_report(gnubg_match)
    assert html.startswith("<!doctype html>") and html.count("<svg") == 1 + len(gnubg_match.marked)
    assert "http" not in re.sub(r'xmlns="http://www.w3.org/2000/svg"', "", html)  # self-contained


def test_board_svg_draws_the_position_from_the_player_on_roll():
    pos = Position.from_points({6: 5, 8: 3, "bar": 2}, {1: 2, 19: 5})
    svg = board_svg(pos, dice=(3, 1), cube=4, cube_owner="opponent", arrows=[(25, 22), (8, 7, "#0a0")],
                    names=("Alice", "Bob"))
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "Alice</tspan>  pips 104, 5 off" in svg  # 5x6 + 3x8 + 2x25, 10 checkers on the board
    assert "Bob</tspan>  pips 78, 8 off" in svg  # from its side: 2 on its 24 point, 5 on its 6
    assert svg.count("<line") >= 2 and ">4</text>" in svg
    with pytest.raises(ValueError, match="cube_owner"):
        board_svg(pos, cube_owner="nobody")


# The command line ----------------------------------------------------------------------------------------------


def test_cli_analyse_prints_a_report_and_writes_json_and_html(tmp_path, capsys):
    out_json, out_html = tmp_path / "a.json", tmp_path / "a.html"
    assert main(["analyse", str(DATA / "edge-cases.mat"), "--json", str(out_json), "--html", str(out_html),
                 "--quiet"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Alice v Bob: 3-point match, 4 games, final score 5-2, Alice wins")
    data = json.loads(out_json.read_text())
    assert data["plies"] == PLAY_PLIES and data["players"][0]["name"] == "Alice"  # (the default: play's)
    assert "<svg" in out_html.read_text()


def test_cli_analyse_json_to_standard_output(capsys):
    assert main(["analyse", str(DATA / "gnubg-money-seed3.sgf"), "--json", "-", "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["match"]["length"] == 0 and data["units"]["cost"] == "points"
    assert all(math.isfinite(d["error"]) for d in data["decisions"])


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no match file"),
        (" 3 point match\n\n Game 1\n Alice : 0    Bob : 0\n  1) 31: 8/3\n", "line 5: Alice's 8/3 is not a legal play"),
        ("(;GM[6]MI[length:3];W[31hefe];B[31hefe])", "line 1:"),
    ],
)
def test_cli_analyse_bad_file_is_a_one_line_error(tmp_path, capsys, content, message):
    path = tmp_path / "bad.mat"
    if content is not None:
        path.write_text(content)
    assert main(["analyse", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("bgai analyse: error:")


def test_a_written_match_analyses_the_same_as_the_file_it_came_from(bot, tmp_path):
    record = read_mat(DATA / "edge-cases.mat")
    path = tmp_path / "copy.mat"
    path.write_text(write_mat(record))
    one = analyse_match(record, bot, progress=False)
    two = analyse_match(read_mat(path), bot, progress=False)
    assert [d.to_dict() for d in one.decisions] == [d.to_dict() for d in two.decisions]


def test_roll_luck_matches_a_roll_by_roll_reference_and_averages_to_zero(bot):
    """``roll_luck`` (all rolls of all positions at once) against a slow reference: for each roll, the best of its
    plays' 0-ply equities, one position and one roll at a time. Over every roll that could come, weighted by its
    chance, the luck of a position is zero."""
    from bgai.core.dice import ROLL_WEIGHTS, ROLLS
    from bgai.core.movegen import afterstates
    from bgai.eval.network import equity, flip
    from bgai.play.analysis import roll_luck

    boards = np.stack([Position.start().board, Position.from_position_id("4HPwATDgc/ABMA").board,
                       Position.from_position_id("sGfwATDgc/ABMA").board])

    def best(board, roll):
        plays = afterstates(board[None], np.array([roll]))
        return equity(flip(bot.probabilities(plays.after).astype(np.float64))).max()

    for board in boards:
        values = np.array([best(board, roll) for roll in ROLLS])
        mean = (ROLL_WEIGHTS * values).sum()
        every = roll_luck(bot, np.repeat(board[None], len(ROLLS), axis=0), ROLLS)
        assert np.allclose(every, values - mean, atol=1e-6)
        assert abs((ROLL_WEIGHTS * every).sum()) < 1e-9
    opening = ROLLS[ROLLS[:, 0] != ROLLS[:, 1]]
    start = np.repeat(boards[:1], len(opening), axis=0)
    opening_luck = roll_luck(bot, start, opening, opening=True)
    assert abs(opening_luck.mean()) < 1e-9 and opening_luck.max() > 0.02 > -0.02 > opening_luck.min()
    with pytest.raises(ValueError, match="opening"):
        roll_luck(bot, boards[:1], np.array([[3, 3]]), opening=True)


def test_luck_adjusted_results_estimate_the_same_points_with_less_variance(bot):
    """Games keep each game's luck for seat 0 without changing the play; with the same player on both seats the
    swapped games mirror, luck included; and points minus luck vary far less than points."""
    from functools import partial

    from bgai.core.game import play_games
    from bgai.play.analysis import roll_luck
    from bgai.players import HeuristicPlayer, PubevalPlayer

    luck = partial(roll_luck, bot)
    plain = play_games(PubevalPlayer(), HeuristicPlayer(), 40, seed=9)
    lucky = play_games(PubevalPlayer(), HeuristicPlayer(), 40, seed=9, luck=luck)
    assert plain.luck is None and np.array_equal(plain.points, lucky.points)
    assert lucky.luck.shape == (40,) and np.abs(lucky.luck).max() > 0.5
    adjusted = lucky.points - lucky.luck
    assert adjusted.var() < plain.points.var() / 2
    s = lucky.summary()
    assert s["ppg_luck_adjusted"] == pytest.approx(adjusted.mean())
    assert s["ppg_luck_adjusted_se"] < s["ppg_se"] / 1.4
    one = play_games(PubevalPlayer(), PubevalPlayer(), 20, seed=4, luck=luck)
    two = play_games(PubevalPlayer(), PubevalPlayer(), 20, seed=4, luck=luck, swap_seats=True)
    assert np.array_equal(one.points, -two.points) and np.allclose(one.luck, -two.luck)
    with pytest.raises(Exception, match="cubeless"):
        play_games(bot, bot, 2, cube=True, luck=luck)


@pytest.mark.parametrize("luck, mark", [(0.706, "very lucky"), (0.45, "lucky"), (0.1, None), (-0.1, None),
                                        (-0.45, "unlucky"), (-0.706, "very unlucky")])
def test_a_roll_gets_the_most_extreme_luck_mark_it_passes(luck, mark):
    from bgai.play.analysis import luck_mark_of

    assert luck_mark_of(luck) == mark


def test_the_progress_bar_counts_the_decisions_the_report_counts(bot, monkeypatch):
    """The bar's total and its updates are the report's decisions, the answers to doubles included."""
    import tqdm.auto

    seen = {}

    class Bar:
        def __init__(self, total, **options):
            seen["total"], seen["done"] = total, 0

        def update(self, n):
            seen["done"] += n

        def close(self):
            pass

    monkeypatch.setattr(tqdm.auto, "tqdm", Bar)
    record = read_mat(DATA / "gnubg-5pt-seed12.mat")
    analysis = analyse_match(record, bot, progress=True)
    assert any(d.kind == "take" for d in analysis.decisions)  # a match with answers to doubles
    assert seen["total"] == seen["done"] == len(analysis.decisions)


def test_a_resignation_and_its_acceptance_are_judged_against_playing_on(bot):
    """Given Alice resigning a single game after the opening (she is about even: a big error) and Bob accepting
    (no error: a point won for an even game), Then the analysis judges both, the resigner's error her equity of
    playing on minus the point she gave, and counts it in her error rate; the reports say so."""
    match = MatchRecord(("Alice", "Bob"), 0)
    game = match.new_game()
    game.add_play("65", "24/13", player=0)
    game.add_play("31", "8/5 6/5")
    game.add_resign(1, player=0)
    analysis = analyse_match(match, bot, progress=False)
    resign, accept = (d for d in analysis.decisions if d.kind in ("resign", "accept"))
    assert (resign.kind, resign.player, accept.kind, accept.player) == ("resign", 0, "accept", 1)
    play_on = dict(resign.candidates)["Play on"]
    assert -0.5 < play_on < 0.5 and dict(resign.candidates)["Resign a single game"] == -1.0
    assert resign.error == pytest.approx(play_on + 1) and resign.mark == "very bad" and resign.best == "play on"
    assert accept.error == 0.0 and accept.mark is None
    alice, bob = analysis.players
    assert alice.resignations == bob.resignations == 1 and alice.resign_error == pytest.approx(resign.error)
    assert alice.total_error == pytest.approx(alice.checker_error + alice.cube_error + resign.error)
    text = text_report(analysis)
    assert "resignation: resign a single game, best play on (play on " in text and "Resignations" in text
    assert "resignation" in html_report(analysis)


def test_a_match_is_analysed_with_the_table_asked_for():
    """Given a 3-point match analysed with Woolsey's table, then the analysis says so, its equity graph starts at
    that table's chance (0.5 at 0-0, then each game's score by that table), and its cube errors are judged with
    it: not the default table's figures."""
    from bgai.core.match import match_equity, met_table
    from bgai.eval.bot import load_bot
    from bgai.formats.matchfile import read_match
    from bgai.play.analysis import analyse_match

    record = read_match(Path(__file__).parent / "data" / "matches" / "gnubg-3pt-seed6.mat")
    bot = load_bot(plies=0)
    woolsey = analyse_match(record, bot, progress=False, met="woolsey")
    default = analyse_match(record, bot, progress=False)
    assert woolsey.to_dict()["met"] == "woolsey" and default.to_dict()["met"] == "kazaross-xg2"
    starts = [p for p in woolsey.graph if p["label"] == "start"]
    for point, game in zip(starts, record.games):
        s0, s1 = game.score
        assert point["value"] == pytest.approx(float(match_equity(3 - s0, 3 - s1, game.post_crawford,
                                                                  met_table("woolsey"))), abs=1e-6)
    assert [d.error for d in woolsey.decisions] != [d.error for d in default.decisions]
