"""Cube decisions: Janowski's money formulas, the options, match play and the one-position API."""

import dataclasses
import json

import numpy as np
import pytest

import bgai.core.cube
from bgai.core.cube import (
    CENTERED,
    ON_ROLL,
    OPPONENT,
    CubeOwner,
    CubeState,
    cube_equities,
    decide,
    efficiency,
    may_double,
    money_margin,
)
from bgai.core.errors import BgaiError
from bgai.core.match import MatchScore, kazaross_xg2, match_equity, parse_score
from bgai.formats.position import Position
from bgai.formats.xgid import xgid_context

START = Position.start().board


def probs_from(p, win_gammons=0.0, lose_gammons=0.0):
    """Cumulative probabilities with the given share of wins (losses) that are gammons, no backgammons."""
    p = np.atleast_1d(np.asarray(p, dtype=np.float64))
    return np.stack([p, p * win_gammons, 0 * p, (1 - p) * lose_gammons, 0 * p], axis=1)


def money(p, x=None, owner=CENTERED, value=1, **options):
    probs = np.atleast_2d(p) if np.ndim(p) == 2 else probs_from(p)
    state = CubeState.money(len(probs), value, owner, **options)
    return cube_equities(probs, np.repeat(START[None], len(probs), axis=0), state, x=x)


def bisect(f, lo, hi, steps=60):
    """The root of an increasing function on [lo, hi]."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


# Money play: Janowski -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("wg, lg, x", [(0.0, 0.0, 0.68), (0.25, 0.15, 0.68), (0.1, 0.3, 0.6), (0.0, 0.0, 1.0)])
def test_take_point_is_janowskis(wg, lg, x, monkeypatch):
    # Given average wins worth W and losses worth L to the doubler, Janowski's take point for the taker (its
    # winning chance) is (W - 1/2) / (W + L + x/2). His formula lets the cube rise forever; ours stops at 64,
    # which moves the take point by about 1e-4. Lifting the limit must give his number exactly.
    monkeypatch.setattr(bgai.core.cube, "MAX_CUBE", 2**20)
    W, L = 1 + wg, 1 + lg
    take_point = (W - 0.5) / (W + L + 0.5 * x)
    # When: the doubler's winning chance makes double/take worth exactly the pass.
    p = bisect(lambda p: money(probs_from(p, wg, lg), x=x).double_take[0] - 1.0, 0.5, 0.99)
    assert 1 - p == pytest.approx(take_point, abs=1e-7)


def test_perfectly_live_cube_equity_runs_from_take_point_to_cash_point(monkeypatch):
    # Given no gammons and a perfectly live cube (x = 1) that may rise forever: take point 20%, cash point 80%,
    # linear in between.
    monkeypatch.setattr(bgai.core.cube, "MAX_CUBE", 2**20)
    e = money([0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9], x=1.0).no_double
    np.testing.assert_allclose(e, [-1, -1, -0.5, 0, 0.5, 1, 1], atol=1e-9)


def test_dead_cube_is_the_cubeless_equity_and_the_taker_needs_25_percent():
    e = money([0.3, 0.6, 0.74, 0.76], x=0.0)
    np.testing.assert_allclose(e.no_double, e.cubeless)
    np.testing.assert_allclose(e.double_take, 2 * e.cubeless)
    assert e.should_take.tolist() == [True, True, True, False]


def test_owning_the_cube_is_worth_more_than_a_centered_one_and_that_more_than_the_opponents():
    p = np.linspace(0.3, 0.7, 9)
    mine, centered, theirs = (money(p, owner=o, value=1 if o == CENTERED else 2).no_double
                              for o in (ON_ROLL, CENTERED, OPPONENT))
    assert (mine > centered).all() and (centered > theirs).all()


def test_the_doubling_window():
    actions = [decide(probs_from(p, 0.2, 0.1)[0], START).action for p in (0.55, 0.7, 0.8, 0.95)]
    assert actions == ["No double, take", "Double, take", "Double, pass", "Too good to double, pass"]


def test_the_cube_decisions_are_closest_inside_the_window_and_far_at_an_even_game():
    # A slow reference: each position and cube alone, its margin from the decision's own equities
    probs = probs_from([0.5, 0.62, 0.68, 0.78, 0.9, 0.999], 0.2, 0.1)
    boards = np.repeat(START[None], len(probs), axis=0)
    expected = []
    for p in probs:
        closest = np.inf
        for value, owner in ((1, CENTERED), (2, ON_ROLL)):
            e = cube_equities(p[None], START[None], CubeState.money(1, value, owner))
            nd, dt, dp = e.no_double[0], e.double_take[0], e.double_pass[0]
            closest = min(closest, abs(nd - min(dt, dp)), abs(dt - dp))
        expected.append(closest)
    margins = money_margin(probs, boards)
    assert np.allclose(margins, expected)
    # Closest where the redouble and the take are both near (0.68), far at an even game (0.5)
    assert margins.argmin() == 2 and margins[2] < 0.02 and margins[0] > 0.25
    # The opponent's cube leaves the player on roll no decision
    owned = cube_equities(probs, boards, CubeState.money(len(probs), 2, OPPONENT))
    assert np.isinf(owned.margin).all()


def test_too_good_becomes_a_double_under_the_jacoby_rule():
    # Given a huge gammon threat: W = 1.6, so playing on is worth more than cashing.
    probs = probs_from(0.9, 0.6)[0]
    assert decide(probs, START).action == "Too good to double, pass"
    # With Jacoby, gammons do not count with a centered cube: cash now.
    jacoby = decide(probs, START, jacoby=True)
    assert jacoby.action == "Double, pass" and jacoby.no_double < 1


def test_beaver_when_the_double_is_a_blunder():
    e = money([0.35, 0.65], beavers=True)
    assert e.beaver.tolist() == [True, False]
    plain = money([0.35, 0.65])
    # The beaver doubles the stakes again: about twice the take, for the taker's good.
    assert e.double_take[0] == pytest.approx(2 * plain.double_take[0], rel=0.02)
    assert decide(probs_from(0.35)[0], START, beavers=True).action == "No double, beaver"


def test_who_may_double():
    state = CubeState(np.array([1, 2, 2, 64]), np.array([CENTERED, ON_ROLL, OPPONENT, ON_ROLL], np.int8))
    assert may_double(state).tolist() == [True, True, False, False]
    e = money(probs_from([0.8] * 1), owner=OPPONENT, value=2)
    assert not e.may_double[0] and np.isnan(e.double_take[0]) and not e.should_double[0]
    assert decide(probs_from(0.8)[0], START, cube=2, owner="opponent").action.startswith("No double: the opponent")
    assert decide(probs_from(0.75)[0], START, cube=2, owner="me").action.startswith("Redouble")


def test_switched_state_swaps_owner_and_score():
    state = CubeState(np.array([2, 1]), np.array([ON_ROLL, CENTERED], np.int8), np.array([[3, 5], [1, 2]]))
    other = state.switched()
    assert other.owner.tolist() == [OPPONENT, CENTERED]
    assert other.away.tolist() == [[5, 3], [2, 1]]


def test_efficiency_by_position_class():
    race_80 = Position.from_points({1: 5, 2: 5, 10: 5}, {20: 15}).board  # pips 5 + 10 + 50 = 65
    race_long = Position.from_points({13: 15}, {24: 15}).board  # 195 pips
    bearoff = Position.from_points({1: 5, 2: 5, 3: 5}, {22: 15}).board
    x = efficiency(np.stack([START, race_80, race_long, bearoff]))
    np.testing.assert_allclose(x, [0.68, 0.55 + 0.00125 * 65, 0.7, 0.6])


@pytest.mark.parametrize("bad, message", [
    (dict(cube=3), "cube values"), (dict(cube=2, owner="center"), "centered cube has value 1"),
    (dict(owner="nobody"), "cube owner"),
])
def test_bad_cube_input(bad, message):
    with pytest.raises(BgaiError, match=message):
        decide(probs_from(0.6)[0], START, **bad)


# Match play -----------------------------------------------------------------------------------------------------


def match(p, away, crawford=False, post=False, owner=CENTERED, value=1, wg=0.0, lg=0.0):
    probs = probs_from(p, wg, lg)
    n = len(probs)
    state = CubeState(np.full(n, value), np.full(n, owner, np.int8), np.tile(away, (n, 1)), np.full(n, crawford),
                      np.full(n, post))
    return cube_equities(probs, np.repeat(START[None], n, axis=0), state)


def test_match_equity_table_is_consistent():
    met = kazaross_xg2()
    pre = met.pre_crawford
    np.testing.assert_allclose(pre + pre.T, 1.0, atol=1e-6)
    assert (np.diff(pre, axis=0) < 0).all() and (np.diff(pre, axis=1) > 0).all()  # needing more points is worse
    assert met.post_crawford[0] == 0.5 and (np.diff(met.post_crawford) < 0).all()
    assert match_equity(np.array([0, 3]), np.array([2, 0]), False).tolist() == [1.0, 0.0]
    assert match_equity(2, 1, True) == met.post_crawford[1]
    assert match_equity(1, 2, True) == 1 - met.post_crawford[1]


def test_double_match_point_is_the_winning_chance_and_no_one_doubles():
    e = match([0.3, 0.6, 0.9], (1, 1), post=True, wg=0.5, lg=0.5)
    np.testing.assert_allclose(e.no_double, [0.3, 0.6, 0.9])
    assert not e.should_double.any()


def test_crawford_game_has_no_cube():
    e = match([0.4, 0.8], (1, 4), crawford=True, wg=0.2)
    assert not e.may_double.any()
    np.testing.assert_allclose(e.no_double, e.cubeless)


def test_post_crawford_trailer_doubles_at_once_and_leader_never():
    trailer = match(np.linspace(0.2, 0.6, 5), (3, 1), post=True)
    assert trailer.should_double.all() and trailer.should_take.all()
    leader = match(np.linspace(0.5, 0.95, 10), (1, 3), post=True, wg=0.3)
    assert not leader.should_double.any()


def test_long_even_match_is_close_to_money():
    p = np.array([0.55, 0.65, 0.72, 0.8])
    far = match(p, (25, 25), wg=0.2, lg=0.1)
    cash = money(probs_from(p, 0.2, 0.1))
    np.testing.assert_allclose(far.emg(far.no_double), cash.no_double, atol=0.05)
    np.testing.assert_allclose(far.emg(far.double_take), cash.double_take, atol=0.08)


def test_gammons_matter_less_when_one_game_wins_the_match():
    # Needing 2 points, a gammon is worth no more than a single win doubled: doubled gammons are wasted.
    e = match([0.7], (2, 5), owner=ON_ROLL, value=2, wg=0.5)
    assert e.no_double[0] == pytest.approx(e.cubeless[0]) and not e.should_double[0]  # the cube is dead for us


def test_match_scores():
    assert MatchScore.from_score(7, (6, 3)).crawford
    assert MatchScore.from_score(7, (6, 3), post_crawford=True).post_crawford
    assert MatchScore.from_score(7, (6, 6)).post_crawford
    assert MatchScore.from_score(7, (2, 3)).away == (5, 4)
    assert parse_score("2-3") == (2, 3)
    for bad in [lambda: MatchScore(7, (7, 0)), lambda: MatchScore(30, (0, 0)), lambda: parse_score("two-three"),
                lambda: MatchScore(7, (2, 3), crawford=True)]:
        with pytest.raises(BgaiError):
            bad()


def test_xgid_cube_and_score_from_the_side_on_roll():
    board = "-b----E-C---eE---c-e----B-"
    assert xgid_context(f"XGID={board}:0:0:1:00:0:0:0:0:10") == (1, CENTERED, None)
    # O owns a 2-cube, O on roll: the player on roll owns it; scores X 4, O 2 in a 7-point match.
    cube, owner, score = xgid_context(f"XGID={board}:1:-1:-1:00:4:2:0:7:10")
    assert (cube, owner, score.score, score.crawford) == (2, ON_ROLL, (2, 4), False)
    cube, owner, score = xgid_context(f"XGID={board}:2:-1:1:00:6:2:1:7:10")
    assert (cube, owner, score.crawford) == (4, OPPONENT, True)
    with pytest.raises(BgaiError):
        xgid_context(f"XGID={board}:9:0:1:00:0:0:0:0:10")


def test_cube_owner_parses_every_way_it_is_said_and_converts_seats_both_ways():
    said = ("center", "Centered", "me", "on_roll", "opponent", "OPP", ON_ROLL, 2, np.int8(0), CubeOwner.OPPONENT)
    assert [CubeOwner.parse(o) for o in said] == [CENTERED, CENTERED, ON_ROLL, ON_ROLL, OPPONENT, OPPONENT, ON_ROLL,
                                                   OPPONENT, CENTERED, OPPONENT]
    for bad in ("", "bottom", 3, -1, True, 1.0, None, [1]):
        with pytest.raises(BgaiError, match="cube owner must be"):
            CubeOwner.parse(bad)
    for on_roll in (0, 1):
        for holder in (None, 0, 1):
            owner = CubeOwner.of_seat(holder, on_roll)
            assert owner.seat(on_roll) == holder  # a round trip through the seats
            assert owner.switched() == CubeOwner.of_seat(holder, 1 - on_roll)  # the other player's view
    assert CubeOwner.of_seat(-1, 0) == CENTERED  # a table's -1 is centered too
    holder, on_roll = np.array([-1, 0, 1, 0, 1, -1]), np.array([0, 0, 0, 1, 1, 1])
    assert CubeOwner.of_seats(holder, on_roll).tolist() == [CubeOwner.of_seat(h, s) for h, s in zip(holder, on_roll)]
    assert [o.word for o in CubeOwner] == ["centered", "me", "opponent"]
    assert str(CubeOwner.ON_ROLL) == "1" and json.dumps([CubeOwner.OPPONENT]) == "[2]"  # a code wherever it goes


# The bot --------------------------------------------------------------------------------------------------------


def test_bot_cube_decisions_agree_with_its_own_probabilities():
    from bgai import load_bot

    bot = load_bot()
    positions = [Position.start(), Position.from_position_id("4PPgASTgc/ABMA"),
                 Position.from_points({1: 3, 2: 3, 3: 3, 4: 3, 5: 3}, {19: 15})]
    for pos in positions:
        decision = bot.cube_decision(pos)
        probs = np.array(list(vars(bot.evaluate(pos)).values())[:5])
        model = bot.cube_efficiency  # its fitted cube efficiency and shift of the win chance
        base, owner = model.base(pos.board[None], probs[None]), np.array([CENTERED])
        x, shift = model.with_owner(base, owner)[0], model.win_shift(base, owner, probs[None])[0]
        assert decision.plies == 0 and decision.fitted
        assert dataclasses.replace(decision, plies=None, fitted=None) == decide(probs, pos.board, x=x, win_shift=shift)
        if probs[0] > 0.55:  # where the shift applies, the decision is not the unshifted formula's
            assert decide(probs, pos.board, x=x).no_double != decision.no_double
    boards = np.stack([p.board for p in positions])
    double, take = bot.cube_actions(boards, CubeState.money(3))
    eq = bot.cube_equities(boards, CubeState.money(3))
    assert double.tolist() == eq.should_double.tolist() and take.tolist() == eq.should_take.tolist()
    # Bearing off 45 pips against 90, no gammon chances: double and pass.
    assert bot.cube_decision(positions[2]).action in ("Double, pass", "Too good to double, pass")


def test_cube_model_fed_gnubgs_probabilities_makes_gnubgs_decisions():
    # Differential: on GNU Backgammon's 2-ply reference set (bgai/coach/data/cube_reference.json), our Janowski model
    # given gnubg's own 2-ply cubeless probabilities should decide nearly as gnubg's full cubeful 2-ply analysis
    # does. Measured: 1.3 mp lost per decision, 99% of takes agree (gnubg's own 0-ply: 2.3 mp).
    import json

    from bgai.coach.cube_accuracy import REFERENCE, model_only

    score = model_only(json.loads(REFERENCE.read_text())["entries"])
    assert score["decisions"] > 2000
    assert score["mp_per_decision"] < 2.0 and score["take_agreement"] > 0.97 and score["double_agreement"] > 0.85


def test_random_cubes_and_scores_give_bounded_equities_rising_with_the_winning_chance():
    # Property check over many random cube states, scores and gammon rates: every equity is finite where it is
    # defined, within what the game can pay, and no worse for the player on roll as its winning chance rises.
    rng = np.random.default_rng(7)
    n = 4000
    p = rng.random(n)
    wg, lg = rng.random(n) * 0.6, rng.random(n) * 0.6
    probs = np.stack([p, p * wg, p * wg * 0.1, (1 - p) * lg, (1 - p) * lg * 0.1], axis=1)
    boards = np.repeat(START[None], n, axis=0)
    for match_play in (False, True):
        value = 2 ** rng.integers(0, 7, n)
        owner = np.where(value == 1, rng.choice([CENTERED, ON_ROLL, OPPONENT], n), rng.choice([ON_ROLL, OPPONENT], n))
        away = rng.integers(1, 12, (n, 2)) if match_play else None
        crawford = post = None
        if match_play:
            one = (away == 1).any(axis=1) & ~(away == 1).all(axis=1)
            crawford = one & (rng.random(n) < 0.5)
            post = (away == 1).any(axis=1) & ~crawford
        state = CubeState(value, owner.astype(np.int8), away, crawford, post)
        e = cube_equities(probs, boards, state)
        defined = e.may_double
        for values in (e.no_double, e.double_take[defined], e.double_pass[defined], e.equity):
            assert np.isfinite(values).all()
            low, high = (0, 1) if match_play else (-6, 6)
            assert (values >= low - 1e-9).all() and (values <= high + 1e-9).all()
        # Same cube, score and gammon rates, winning chance raised: the equity does not fall.
        probs_up = probs.copy()
        probs_up[:, 0] = np.minimum(p + 0.05, 1)
        probs_up[:, 1:3] = probs_up[:, [0]] * probs[:, 1:3] / np.maximum(p, 1e-12)[:, None]
        probs_up[:, 3:] = (1 - probs_up[:, [0]]) * probs[:, 3:] / np.maximum(1 - p, 1e-12)[:, None]
        up = cube_equities(probs_up, boards, state)
        assert (up.no_double >= e.no_double - 1e-9).all()


def test_one_ply_cubeful_equity_averages_the_opponents_cube_decision_over_its_rolls():
    # Slow reference, one position and one roll at a time: no double (and double/take) at 1-ply is the average over
    # the 21 rolls of minus the opponent's best cubeful 0-ply equity after the bot's 0-ply play, at the same cube
    # (or the doubled one, owned by the opponent); a play that bears off the last checker wins at that cube.
    from bgai import load_bot
    from bgai.core.dice import ROLL_WEIGHTS, ROLLS
    from bgai.core.game import result_points

    zero, one = load_bot(), load_bot(plies=1, pruner=False, cube_plies=1)  # the reference judges every reply
    positions = [Position.from_position_id("4PPgASTgc/ABMA"),
                 Position.from_points({1: 2, 2: 1}, {24: 1, 23: 2, 12: 1})]  # bear-offs that end the game
    for pos in positions:
        got = one.cube_equities(pos.board[None], CubeState.money(1))
        expected = []
        for value, owner in ((1, CENTERED), (2, OPPONENT)):
            total = 0.0
            for roll, weight in zip(ROLLS, ROLL_WEIGHTS):
                after = zero.choose_move(pos, tuple(int(d) for d in roll)).after
                if after.is_game_over():
                    total += weight * value * int(result_points(after.board[None])[0])
                    continue
                theirs = CubeState.money(1, value, ON_ROLL if owner == OPPONENT else CENTERED)
                best = zero.cube_equities(after.board[None], theirs).equity[0] * value
                total -= weight * best
            expected.append(total)
        assert got.no_double[0] == pytest.approx(expected[0], abs=1e-5)
        assert got.double_take[0] == pytest.approx(expected[1], abs=1e-5)  # per unit of the current cube
        assert got.double_pass[0] == 1.0


def test_two_ply_cubeful_equity_averages_the_opponents_one_ply_cube_decision_and_reads_the_two_ply_lookahead():
    # One expansion of the tree serves the cubeless value and every cube state: held to the 1-ply equities (held
    # to the slow reference above) one roll at a time, and to the bot's own 2-ply cubeless lookahead
    from bgai.core.dice import ROLL_WEIGHTS, ROLLS
    from bgai.eval.bot import FAST_NPZ, load_bot
    from bgai.eval.weights import equity

    zero, two = load_bot(FAST_NPZ), load_bot(FAST_NPZ, plies=2, pruner=False, cube_plies=2)
    pos = Position.from_position_id("4HPwATDgc/ABMA")
    for state in (CubeState.money(1), CubeState.money(1, 2, ON_ROLL)):
        got = two.cube_equities(pos.board[None], state)
        value = int(state.value[0])
        expected = []
        for doubled in (False, True):
            total = 0.0
            for roll, weight in zip(ROLLS, ROLL_WEIGHTS):
                after = zero.choose_move(pos, tuple(int(d) for d in roll)).after
                theirs = (state.doubled() if doubled else state).switched()
                total -= weight * two.cube_equities(after.board[None], theirs, plies=1).equity[0] * (
                    value * 2 if doubled else value)
            expected.append(total / value)
        assert got.no_double[0] == pytest.approx(expected[0], abs=1e-5)
        assert got.double_take[0] == pytest.approx(expected[1], abs=1e-5)
        assert got.cubeless[0] == pytest.approx(float(equity(two.lookahead(pos.board[None], 2))[0]), abs=1e-5)


def test_a_one_ply_bot_decides_its_cube_two_plies_deep_with_its_own_network():
    from bgai.eval.bot import CUBE_PLIES, FAST_NPZ, FILTERS, MoveFilter, load_bot
    from bgai.eval.rollout import _zero_ply

    boards = np.stack([Position.from_position_id(p).board for p in ("4PPgASTgc/ABMA", "m1kJZAjvAQAAAQ",
                                                                        "sNuOAFC2vQMBEA", "xk5wDBjM3g4MAA")])
    state = CubeState.money(len(boards), 2, ON_ROLL)
    one, two = load_bot(FAST_NPZ, plies=1), load_bot(FAST_NPZ, plies=2)
    assert (one.cube_plies, two.cube_plies, load_bot().cube_plies) == (2, 2, 0) == (CUBE_PLIES[1], CUBE_PLIES[2], 0)
    # The 1-ply bot's cube equities are the 2-ply bot's of the same network, not its own ply's
    ours, deep = one.cube_equities(boards, state), two.cube_equities(boards, state)
    assert np.array_equal(ours.no_double, deep.no_double) and np.array_equal(ours.double_take, deep.double_take)
    own_ply = load_bot(FAST_NPZ, plies=1, cube_plies=1).cube_equities(boards, state)
    assert not np.allclose(ours.no_double, own_ply.no_double)
    # and a call may ask for another ply without another bot
    asked = one.cube_equities(boards, state, plies=1)
    assert np.array_equal(asked.no_double, own_ply.no_double) and np.array_equal(asked.double_take, own_ply.double_take)
    # and its decision says the ply it came from
    decision = one.cube_decision(Position(boards[1]))
    assert decision.plies == 2 and "the bot at 2-ply" in str(decision) and decision.fitted
    # A new lookahead brings its own cube's unless told; a rollout's cube decisions stay at 0-ply
    assert one.replace(plies=0).cube_plies == 0 and one.replace(cube_plies=1).cube_plies == 1
    assert one.replace(plies=2, cube_plies=0).cube_plies == 0
    # the bot's own plies again keep what was set for it; another ply brings that ply's defaults
    mine = one.replace(cube_plies=1, filters=(MoveFilter(3, 0.05),))
    assert mine.replace(plies=1).cube_plies == 1 and mine.replace(plies=1).filters == (MoveFilter(3, 0.05),)
    assert mine.replace(plies=2).cube_plies == CUBE_PLIES[2] and mine.replace(plies=2).filters == FILTERS[2]
    assert _zero_ply(load_bot(FAST_NPZ, cube_plies=2)).cube_plies == 0
    with pytest.raises(BgaiError, match="cube_plies must be an integer 0..2"):
        load_bot(FAST_NPZ, plies=1, cube_plies=3)


# The rollout cube decision (Bot.cube_decision(..., rollout=...)) ----------------------------------------------------


def _bear_off(ours, theirs) -> np.ndarray:
    b = np.zeros(26, dtype=np.int8)
    b[1:7] = ours
    b[24:18:-1] = -np.asarray(theirs)
    return b


@pytest.fixture(scope="module")
def bot():
    from bgai.eval.bot import load_bot

    return load_bot()


def exact_cube_equities(board: np.ndarray) -> tuple[float, float]:
    """(no double, double/take) of the player on roll of ``board`` (money, a centered cube), exact, where every
    roll leaves a position of the two-sided bear-off database with one play: one roll's expectation of its exact
    cubeful equities (also the API's and the session's tests)."""
    from bgai.core.dice import ROLL_WEIGHTS, ROLLS
    from bgai.core.movegen import afterstates
    from bgai.eval import bearoff

    db = bearoff.database()
    plays = afterstates(np.repeat(board[None], len(ROLLS), axis=0), ROLLS)
    assert np.array_equal(plays.owner, np.arange(len(ROLLS))) and db.exact(plays.after).all()
    no_double = -(db.cubeful_equity(plays.after, CENTERED) * ROLL_WEIGHTS).sum()
    double_take = -(2 * db.cubeful_equity(plays.after, ON_ROLL) * ROLL_WEIGHTS).sum()  # they own a 2-cube
    return float(no_double), float(double_take)


# Seven checkers on the ace point: every roll bears off at least two, so after any play both sides have at most six
# and the two-sided database knows the rest exactly. ND and DT are then one roll's expectation of exact equities.
@pytest.mark.parametrize("theirs, action", [
    ((1, 1, 1, 1, 1, 0), "No double, take"),
    ((0, 0, 0, 2, 2, 1), "Double, take"),
    ((0, 0, 0, 1, 2, 3), "Double, pass"),
])
def test_a_rollout_cube_decision_equals_the_exact_one_of_the_bear_off_database(bot, theirs, action):
    from bgai.core.dice import ROLL_WEIGHTS, ROLLS
    from bgai.core.movegen import afterstates
    from bgai.eval import bearoff

    db = bearoff.database()
    board = _bear_off((7, 0, 0, 0, 0, 0), theirs)
    assert not db.exact(board[None])[0]
    plays = afterstates(np.repeat(board[None], len(ROLLS), axis=0), ROLLS)
    assert np.array_equal(plays.owner, np.arange(len(ROLLS)))  # one play a roll: bear off from the ace point
    assert db.exact(plays.after).all()
    exact_nd = -(db.cubeful_equity(plays.after, CENTERED) * ROLL_WEIGHTS).sum()
    exact_dt = -(2 * db.cubeful_equity(plays.after, ON_ROLL) * ROLL_WEIGHTS).sum()  # they own a 2-cube
    got = bot.cube_decision(Position(board), rollout={"trials": 72, "jobs": 1})
    assert got.no_double == pytest.approx(exact_nd, abs=1e-4)
    assert got.double_take == pytest.approx(exact_dt, abs=1e-4)
    assert got.action == action
    assert "a cubeful rollout" in str(got)


def test_a_rollout_cube_decision_in_an_exact_bear_off_is_the_databases(bot):
    from bgai.eval import bearoff

    db = bearoff.database()
    for owner, cube in (("centered", 1), ("me", 2)):
        board = _bear_off((0, 2, 2, 0, 0, 0), (1, 0, 1, 1, 1, 0))  # a double (redouble) and a take
        nd, dt = db.cube_equities(board[None], CENTERED if owner == "centered" else ON_ROLL)
        got = bot.cube_decision(Position(board), cube=cube, owner=owner, rollout={"trials": 36, "jobs": 1})
        assert (got.no_double, got.double_take) == (pytest.approx(nd[0], abs=1e-5), pytest.approx(dt[0], abs=1e-5))
        assert got.should_double and got.should_take


def test_a_rollout_cube_decision_where_the_opponent_owns_the_cube_rolls_out_no_double_only(bot):
    got = bot.cube_decision(Position.start(), cube=2, owner="opponent", rollout={"trials": 36, "truncate": 2,
                                                                                  "jobs": 1})
    assert not got.may_double and got.double_take is None
    assert got.action == "No double: the opponent owns the cube"
    assert -1 < got.no_double < 1


@pytest.mark.parametrize("options, message", [
    ({"match": MatchScore(5, (2, 3))}, "money games"), ({"jacoby": True}, "Jacoby"), ({"beavers": True}, "beavers"),
])
def test_a_rollout_cube_decision_refuses_rules_its_rollout_does_not_play(bot, options, message):
    with pytest.raises(BgaiError, match=message):
        bot.cube_decision(Position.start(), rollout=True, **options)


# The cube at every score ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("plies", [0, 2])
def test_the_score_grid_is_each_scores_own_cube_decision(plies):
    """Given a position where the cube matters, then every cell of its score grid (one batch of every score) is the
    cube decision of that score alone, its equities and its words, a side one away post-Crawford; the money cell
    is the money decision; the same at 2-ply, where the lookahead is shared by every score."""
    from bgai import load_bot
    from bgai.core.cube import short_action

    bot = load_bot(plies=min(plies, 1), cube_plies=plies)
    pos = Position.parse("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10")
    for cube, owner in ((1, "centered"), (2, "me")):
        grid = bot.score_grid(pos, 5 if plies else 7, cube, owner)
        for row in grid.cells:
            for cell in row:
                a, b = cell.away
                match = MatchScore(grid.length, (grid.length - a, grid.length - b), post_crawford=1 in (a, b))
                one = bot.cube_decision(pos, cube, owner, match)
                assert cell.action == one.action and cell.short == short_action(one.action)
                assert np.isclose(cell.no_double, one.no_double)
                assert (cell.double_take is None) == (one.double_take is None)
                if one.double_take is not None:
                    assert np.isclose(cell.double_take, one.double_take)
                    assert np.isclose(cell.double_pass, one.double_pass)
                    assert np.allclose(cell.emg, one.emg)
        money = bot.cube_decision(pos, cube, owner)
        assert grid.money.action == money.action and np.isclose(grid.money.no_double, money.no_double)
    text = str(grid)
    assert text.count("-away") >= 2 * 5 and "money" in text


def test_short_cube_actions():
    from bgai.core.cube import short_action

    assert [short_action(w) for w in ("No double, take", "Double, pass", "Redouble, take", "Too good to double, pass",
                                      "No redouble, beaver", "No double: Crawford game")] == \
        ["ND/T", "D/P", "D/T", "TG/P", "ND/B", "-"]


def test_eval_scores_prints_the_grid(capsys):
    from bgai.frontends.cli import main

    assert main(["eval", "4HPwATDgc/ABMA", "--plies", "0", "--scores", "3"]) in (None, 0)
    out = capsys.readouterr().out
    assert "Cube action at every score of a 3-point match" in out and out.count("-away") >= 12
    assert main(["eval", "4HPwATDgc/ABMA", "--scores", "3", "--match", "5"]) == 2
    assert "drop --match" in capsys.readouterr().err


# Match equity tables ----------------------------------------------------------------------------------------------

def test_every_shipped_match_equity_table_is_a_table():
    """Given each table bgai ships, then its pre-Crawford part is complementary (a side's chance and its opponent's
    add to one), 0.5 at equal scores, the leader's chance grows as the trailer needs more, and its post-Crawford
    part starts at 0.5 and falls; each names its source."""
    from bgai.core.match import METS, met_table

    assert METS[0] == "kazaross-xg2" and len(METS) >= 5
    for name in METS:
        t = met_table(name)
        pre, post = t.pre_crawford, t.post_crawford
        assert t.name == name and t.length in (15, 25) and len(t.source) > 20
        assert np.allclose(pre + pre.T, 1.0, atol=1e-6) and np.allclose(np.diag(pre), 0.5)
        assert (np.diff(pre, axis=1) > -1e-9).all()  # more points for the opponent to win: better
        assert post[0] == pytest.approx(0.5) and (np.diff(post) < 1e-9).all()
    with pytest.raises(BgaiError, match="unknown match equity table"):
        met_table("nonsense")


def test_a_match_score_names_the_table_its_cube_decisions_use():
    """Given a position at 4-5 of a 7-point match, then each table gives the decision its own numbers make (the
    formula's, with that table's match-winning chances at the game's ends), the default is Kazaross-XG2, and a
    match longer than a table is refused."""
    from bgai.core.match import METS, match_equity, met_table

    probs = probs_from(0.6, 0.2, 0.1)
    values = {}
    for name in METS:
        match = MatchScore.from_score(7, (4, 5), met=name)
        d = decide(probs, START, match=match)
        values[name] = d.no_double
        win_double = float(match_equity(3 - 2, 2, False, met_table(name)))  # the player on roll wins 2
        assert d.double_pass == pytest.approx(float(match_equity(3 - 1, 2, False, met_table(name))))
        assert 0 < d.no_double < 1 and win_double > d.double_pass
    assert len({round(v, 6) for v in values.values()}) > 1  # the tables differ, and so do the decisions
    default = decide(probs, START, match=MatchScore.from_score(7, (4, 5)))
    assert default.no_double == values["kazaross-xg2"]
    with pytest.raises(BgaiError, match="woolsey"):
        MatchScore.from_score(17, (0, 0), met="woolsey")


def test_eval_and_the_score_grid_take_a_table(capsys):
    from bgai import load_bot
    from bgai.frontends.cli import main

    bot = load_bot(plies=0)
    pos = Position.parse("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10")
    grid = bot.score_grid(pos, 5, met="woolsey")
    for row in grid.cells:
        for cell in row:
            a, b = cell.away
            one = bot.cube_decision(pos, match=MatchScore(5, (5 - a, 5 - b), post_crawford=1 in (a, b),
                                                          met="woolsey"))
            assert np.isclose(cell.no_double, one.no_double) and cell.action == one.action
    assert main(["eval", "4HPwATDgc/ABMA", "--plies", "0", "--match", "7", "--score", "4-5", "--met", "snowie"]) \
        in (None, 0)
    assert "MET snowie" in capsys.readouterr().out
    assert main(["eval", "4HPwATDgc/ABMA", "--plies", "0", "--met", "snowie"]) == 2
    assert "--met is a match's" in capsys.readouterr().err


def test_the_shipped_tables_are_gnubgs_files_converted(tmp_path):
    """Given GNU Backgammon's MET files (Debian's gnubg), then ``bgai.coach.met_tables`` converts each to the
    numbers bgai ships."""
    import json
    from pathlib import Path

    from bgai.coach import met_tables
    from bgai.core.match import met_table

    folder = Path("/usr/share/gnubg/met")
    if not folder.is_dir():
        pytest.skip("needs GNU Backgammon's MET files (make system-deps installs gnubg)")
    met_tables.main(["--from", str(folder), "--out", str(tmp_path)])
    for _, (name, _) in met_tables.TABLES.items():
        data = json.loads((tmp_path / f"{name}.json").read_text())
        shipped = met_table(name)
        assert np.array_equal(np.array(data["pre_crawford"]), shipped.pre_crawford)
        assert np.array_equal(np.array(data["post_crawford"]), shipped.post_crawford)
