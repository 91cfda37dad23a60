"""The fitted cube efficiency: its features, its model file, the bots that use it, its labels and its fit."""

import json

import numpy as np
import pytest

from bgai.coach.cube_reference import decision_losses
from bgai.core.cube import (
    CENTERED,
    EFFICIENCY_FEATURES,
    EFFICIENCY_RANGE,
    ON_ROLL,
    OPPONENT,
    SHIFT_RANGE,
    CubeState,
    EfficiencyModel,
    cube_equities,
    cube_state,
    decide,
    efficiency,
    efficiency_features,
    shift_fade,
    shift_win,
)
from bgai.core.cube import decision_losses as cube_losses
from bgai.core.errors import BgaiError
from bgai.core.match import MatchScore
from bgai.formats.position import Position
from bgai.train import cube_efficiency as ce


def feature(name: str) -> int:
    return EFFICIENCY_FEATURES.index(name)


def test_features_of_a_hand_made_position():
    # On roll: 2 on its 6 point, 2 on its 5, blots on its 8 and 7 points, 2 back on the 24 point, 7 on the 13; the
    # opponent (points numbered from the side on roll): 3 on its 6 point (19), a blot on its 2 (23), 10 on its 8
    # (17) and one on the bar.
    pos = Position.from_points({6: 2, 5: 2, 8: 1, 7: 1, 24: 2, 13: 7}, {19: 3, 23: 1, 17: 10, "bar": 1})
    probs = np.array([[0.6, 0.2, 0.01, 0.1, 0.005]])
    f = efficiency_features(pos.board[None], probs, np.array([ON_ROLL]))[0]
    pips = 6 * 2 + 5 * 2 + 8 + 7 + 24 * 2 + 13 * 7
    their_pips = 6 * 3 + 2 + 8 * 10 + 25
    expected = {"bias": 1, "contact": 1, "crashed": 0, "win - 1/2": 0.1, "win gammon": 0.2, "lose gammon": 0.1,
                "backgammons": 0.015, "pips / 100": pips / 100, "pip lead / 100": (their_pips - pips) / 100,
                "owns the cube": 1, "checkers back / 5": 2 / 5, "their checkers back / 5": 1 / 5,
                "home points / 6": 2 / 6, "their home points / 6": 1 / 6, "blots / 3": 2 / 3,
                "their blots / 3": 1 / 3, "4 (win - 1/2)^2": 0.04, "10 win gammon x lose gammon": 0.2}
    assert set(expected) == set(EFFICIENCY_FEATURES)
    for name, value in expected.items():
        assert f[feature(name)] == pytest.approx(value), name
    centered = efficiency_features(pos.board[None], probs, np.array([CENTERED]))[0]
    assert centered[feature("owns the cube")] == 0
    # Crashed (gnubg's class): one on its own bar (25 pips, and back), 14 on its 1 and 2 points; the opponent's
    # checkers on our 24 and 13 points (its 1 and 12), a cube the opponent owns.
    crashed = Position.from_points({"bar": 1, 1: 7, 2: 7}, {24: 2, 13: 13})
    f = efficiency_features(crashed.board[None], probs, np.array([OPPONENT]))[0]
    assert f[feature("crashed")] == 1 and f[feature("contact")] == 0 and f[feature("owns the cube")] == 0
    assert f[feature("pips / 100")] == pytest.approx((25 + 7 + 14) / 100)
    assert f[feature("checkers back / 5")] == pytest.approx(1 / 5)
    assert f[feature("their checkers back / 5")] == 0 and f[feature("home points / 6")] == pytest.approx(2 / 6)
    assert f[feature("pip lead / 100")] == pytest.approx((2 * 1 + 13 * 12 - 46) / 100)


def test_a_model_is_its_features_times_its_weights_clipped_and_survives_its_file(tmp_path):
    rng = np.random.default_rng(3)
    boards = np.stack([Position.start().board, Position.from_position_id("4PPgASTgc/ABMA").board])
    probs = np.array([[0.5, 0.15, 0.01, 0.14, 0.01], [0.7, 0.3, 0.02, 0.05, 0.0]])
    weights = rng.normal(0, 0.1, len(EFFICIENCY_FEATURES))
    weights[0] = 0.7
    model = EfficiencyModel(weights, {"note": "test"})
    owner = np.array([CENTERED, ON_ROLL])
    expected = np.clip(efficiency_features(boards, probs, owner) @ weights, *EFFICIENCY_RANGE)
    assert np.allclose(model(boards, probs, owner), expected, rtol=0, atol=1e-12)  # (summed in another order)
    huge = EfficiencyModel(np.r_[5.0, np.zeros(len(EFFICIENCY_FEATURES) - 1)], {})
    assert (huge(boards, probs, owner) == EFFICIENCY_RANGE[1]).all()
    path = tmp_path / "model.json"
    path.write_text(model.to_json())
    again = EfficiencyModel.load(path)
    assert np.array_equal(again.weights, model.weights) and again.info == {"note": "test"} and again.shift is None
    assert model.win_shift(model.base(boards, probs), owner, probs) is None
    # with a shift of the win chance: its own weights, clipped to SHIFT_RANGE, the cube's owner counted
    shift = rng.normal(0, 0.01, len(EFFICIENCY_FEATURES))
    shift[feature("bias")] = 1.0  # far beyond the range for the first position
    shift[feature("win - 1/2")] = -5.0  # which the second's win chance brings back within it
    moved = EfficiencyModel(weights, {}, shift)
    likely = np.array([[0.6, 0.15, 0.01, 0.14, 0.01], probs[1]])  # both where the shift applies in full
    expected_shift = efficiency_features(boards, likely, owner) @ shift
    assert expected_shift[0] > 0.3 and SHIFT_RANGE[0] < expected_shift[1] < SHIFT_RANGE[1]
    assert np.allclose(moved.win_shift(moved.base(boards, likely), owner, likely), [SHIFT_RANGE[1], expected_shift[1]],
                       rtol=0, atol=1e-12)
    # faded in over SHIFT_DOMAIN: none at the first position's win chance of 0.5, half of it at 0.525
    assert moved.win_shift(moved.base(boards, probs), owner, probs)[0] == 0
    halfway = np.array([[0.525, 0.15, 0.01, 0.14, 0.01], probs[1]])
    assert moved.win_shift(moved.base(boards, halfway), owner, halfway)[0] == pytest.approx(SHIFT_RANGE[1] / 2)
    assert shift_fade(np.array([0.4, 0.5, 0.525, 0.55, 0.9])) == pytest.approx([0, 0, 0.5, 1, 1])
    assert np.array_equal(moved(boards, probs, owner), model(boards, probs, owner))  # x the same
    path.write_text(moved.to_json())
    assert np.array_equal(EfficiencyModel.load(path).shift, shift)
    with pytest.raises(BgaiError, match="shift are 18 finite weights"):
        EfficiencyModel(weights, {}, np.r_[shift, 0.0])
    data = json.loads(moved.to_json())  # a file with a malformed shift is refused with its name
    for bad in ([0.1] * 3, "0.1", [[0.1] * 18], [float("nan")] * 18, {"a": 1}):
        path.write_text(json.dumps({**data, "shift": bad}))
        with pytest.raises(BgaiError, match="model.json: unreadable cube efficiency model"):
            EfficiencyModel.load(path)
    path.write_text(json.dumps({**data, "shift": None}))  # null, or no key at all (the files before): no shift
    assert EfficiencyModel.load(path).shift is None


@pytest.mark.parametrize("text, message", [
    ('{"format": "bgai-cube-efficiency", "features": ["bias"], "weights": [0.7]}', "not a bgai cube efficiency"),
    ('{"format": "bgai-cube-efficiency", "features": FEATURES, "weights": [0.7]}', "finite weights"),
    ('{"format": "bgai-cube-efficiency", "features": FEATURES, "weights": NANS}', "finite weights"),
    ('{"format": "something else"}', "not a bgai cube efficiency"),
    ('{"format": "bgai-cube-efficiency", "feat', "unreadable"),
    ("[1, 2]", "unreadable"),
])
def test_a_bad_model_file_is_refused_with_its_name(tmp_path, text, message):
    path = tmp_path / "bad.json"
    nans = json.dumps([0.7] * (len(EFFICIENCY_FEATURES) - 1)).replace("]", ", NaN]")
    path.write_text(text.replace("FEATURES", json.dumps(list(EFFICIENCY_FEATURES))).replace("NANS", nans))
    with pytest.raises(BgaiError, match=message) as refused:
        EfficiencyModel.load(path)
    assert "bad.json" in str(refused.value)


def test_each_shipped_network_decides_its_cube_with_its_own_fitted_efficiency(tmp_path):
    import shutil

    from bgai.eval.bot import FAST_CUBE_EFFICIENCY, SHIPPED, SHIPPED_NPZ, load_bot

    bot = load_bot()
    assert bot.cube_efficiency is not None and FAST_CUBE_EFFICIENCY.is_file()
    assert load_bot(cube_efficiency=False).cube_efficiency is None
    for shipped in (load_bot(), load_bot(plies=2), load_bot(SHIPPED_NPZ), load_bot(SHIPPED)):
        # a model belongs to the network it was fitted with
        assert shipped.cube_efficiency is not None and shipped.cube_efficiency.info["network"] == _digest(shipped)
    assert load_bot(SHIPPED_NPZ).cube_efficiency.info != bot.cube_efficiency.info  # each network its own
    copy = tmp_path / "mine.npz"  # any other network: the manual's x, unless given a model
    shutil.copy(SHIPPED_NPZ, copy)
    assert load_bot(copy).cube_efficiency is None
    assert load_bot(copy, cube_efficiency=FAST_CUBE_EFFICIENCY).cube_efficiency is not None
    boards = np.stack([Position.from_position_id(p).board for p in ("4PPgASTgc/ABMA", "m1kJZAjvAQAAAQ",
                                                                      "sNuOAFC2vQMBEA", "xk5wDBjM3g4MAA")])
    for owner in (CENTERED, ON_ROLL, OPPONENT):
        state = CubeState.money(len(boards), 1 if owner == CENTERED else 2, owner)
        probs = bot.probabilities(boards)
        x = bot.cube_efficiency(boards, probs, state.owner)
        got = bot.cube_equities(boards, state)
        assert np.array_equal(got.efficiency, x) and not np.allclose(x, efficiency(boards))
        shift = bot.cube_efficiency.win_shift(bot.cube_efficiency.base(boards, probs), state.owner, probs)
        expected = cube_equities(probs, boards, state, x=x, win_shift=shift)
        assert np.array_equal(got.no_double, expected.no_double)
        assert np.array_equal(got.cubeless, cube_equities(probs, boards, state).cubeless)  # the network's own
        assert np.array_equal(got.double_take, expected.double_take, equal_nan=True)
        manual = bot.replace(cube_efficiency=None).cube_equities(boards, state)
        assert np.array_equal(manual.efficiency, efficiency(boards))
    # the bot's decision says the efficiency it used
    decision = bot.cube_decision(Position(boards[0]))
    assert decision.efficiency == pytest.approx(float(bot.cube_efficiency(boards[:1], bot.probabilities(boards[:1]),
                                                                          np.array([CENTERED]))[0]))
    assert decision.fitted and not decision.exact and "; the bot at 0-ply)" in str(decision)
    assert f"  cube efficiency        {decision.efficiency:.2f} (fitted to the bot's own rollouts)" in str(decision)
    manual = bot.replace(cube_efficiency=None).cube_decision(Position(boards[0]))
    assert manual.fitted is False and "(the manual's)" in str(manual)
    alone = decide(bot.probabilities(boards[:1])[0], boards[0])  # no bot: nothing said of where x came from
    assert alone.fitted is None and "fitted" not in str(alone) and "manual" not in str(alone)
    # a bear-off the database knows: its money equities are exact, whatever x, and the text says so
    board = np.zeros(26, dtype=np.int8)
    board[1:7], board[24:18:-1] = (0, 0, 2, 2, 1, 0), -np.array([0, 0, 0, 2, 2, 1])  # five checkers a side
    bearoff = Position(board)
    exact = bot.cube_decision(bearoff)
    assert exact.exact and "exact, from the bear-off database" in str(exact) and "efficiency" not in str(exact)
    assert not bot.cube_decision(bearoff, match=MatchScore(7, (3, 3))).exact  # a match: the formula, on MWC
    with pytest.raises(BgaiError, match="cube_efficiency must be"):
        bot.replace(cube_efficiency="0.7")
    # a model that shifts the win chance: the bot's equities are the formula's at its x and shift, at the root and
    # at the leaves of its 2-ply cube, and its cubeless equity stays the network's
    model = bot.cube_efficiency
    assert model.shift is not None  # the shipped models shift the win chance the formula reads, at the root and at
    # the leaves of a deeper cube
    state = CubeState.money(len(boards))
    unshifted = bot.replace(cube_efficiency=EfficiencyModel(model.weights, {}))
    for plies in (0, 2):
        got, without = (b.cube_equities(boards, state, plies=plies) for b in (bot, unshifted))
        assert not np.array_equal(got.no_double, without.no_double)
        assert np.array_equal(got.cubeless, without.cubeless)  # the network's own, at any depth


def _digest(bot):
    from bgai.train.labels import network_digest

    return network_digest(bot)


# Fitting ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plain_bot():
    from bgai.eval.bot import load_bot

    return load_bot(cube_efficiency=False)


def synthetic(bot, weights, n=400, shift=None):
    """Labels whose rollouts are exactly Janowski's equities at the x of ``weights`` (and the win chance moved by
    the ``shift`` weights): the positions and cubes of the committed labels (near the doubling window)."""
    committed = sorted(ce.LABELS.glob("labels-*.npz"))[0]
    arrays, _ = ce.read_labels(committed)
    boards, owner = arrays["boards"][:n], arrays["owner"][:n]
    probs = bot.probabilities(boards)
    state = CubeState(np.ones(n, np.int64), owner)
    model = EfficiencyModel(weights, {}, shift)
    x = model(boards, probs, owner)
    eq = cube_equities(probs, boards, state, x=x, win_shift=model.win_shift(model.base(boards, probs), owner, probs))
    return {"boards": boards, "owner": owner, "no_double": eq.no_double, "double_take": eq.double_take,
            "no_double_se": np.zeros(n), "double_take_se": np.zeros(n)}, x


def test_the_fit_finds_the_efficiency_that_made_the_labels(plain_bot):
    # Labels made at a known x, as a function of the features: the fit finds that function again
    weights = np.zeros(len(EFFICIENCY_FEATURES))
    weights[[feature("bias"), feature("contact"), feature("pips / 100"), feature("owns the cube")]] = [
        0.5, -0.1, 0.15, 0.05]
    arrays, x = synthetic(plain_bot, weights)
    data = ce.prepared(plain_bot, arrays)
    fitted, none = ce.fit(data, ridge=0.0, shift=False)
    kept = ~plain_bot._exact_bearoffs(arrays["boards"])
    assert none is None and np.abs(np.clip(data["features"] @ fitted, *EFFICIENCY_RANGE) - x[kept]).max() < 0.01
    # the labels' own x makes no error, the manual's does
    assert ce.decision_losses(data, x[kept]).max() == 0
    assert ce.decision_losses(data, data["manual"]).sum() > 0


def test_the_fit_finds_the_shift_of_the_win_chance_that_made_the_labels(plain_bot):
    # Labels made with a known x and a known shift of the win chance (both functions of the features): the joint
    # fit finds the shift again, and its decisions lose next to nothing where x fitted alone loses more
    weights = np.zeros(len(EFFICIENCY_FEATURES))
    weights[[feature("bias"), feature("contact")]] = [0.7, -0.05]
    shift = np.zeros(len(EFFICIENCY_FEATURES))
    shift[[feature("bias"), feature("win - 1/2"), feature("crashed")]] = [-0.03, 0.1, 0.02]
    arrays, x = synthetic(plain_bot, weights, shift=shift)
    data = ce.prepared(plain_bot, arrays)
    w, u = ce.fit(data, ridge=0.0)
    got_x, got_shift = ce.model_of(w, u, data)
    true_shift = np.clip(data["features"] @ shift, *SHIFT_RANGE) * data["fade"]
    assert np.abs(got_shift - true_shift).mean() < 0.003 and np.abs(got_x - data["features"] @ weights).mean() < 0.02
    assert 1000 * ce.decision_losses(data, got_x, shift=got_shift).mean() < 0.2
    alone = ce.model_of(*ce.fit(data, ridge=0.0, shift=False), data)[0]
    assert ce.decision_losses(data, alone).mean() > ce.decision_losses(data, got_x, shift=got_shift).mean()


def test_shifting_the_win_chance_keeps_gammon_shares_and_the_cubeless_equity():
    probs = np.array([[0.6, 0.2, 0.01, 0.1, 0.005], [0.3, 0.0, 0.0, 0.25, 0.05], [0.98, 0.5, 0.1, 0.01, 0.0]])
    moved = shift_win(probs, np.array([0.05, -0.1, 0.1]))
    assert moved[:, 0] == pytest.approx([0.65, 0.2, 1.0])
    assert moved[0, 1] / moved[0, 0] == pytest.approx(0.2 / 0.6) and moved[0, 3] / (1 - moved[0, 0]) == pytest.approx(
        0.1 / 0.4)
    assert moved[1, 3] == pytest.approx(0.25 * 0.8 / 0.7) and moved[2, 3:].tolist() == [0.0, 0.0]  # a sure win
    assert (np.diff(moved[:, :3], axis=1) <= 0).all() and (moved[:, 4] <= moved[:, 3]).all()
    boards = np.stack([Position.start().board] * 3)
    state = CubeState.money(3)
    plain = cube_equities(probs, boards, state, x=0.7)
    shifted = cube_equities(probs, boards, state, x=0.7, win_shift=np.array([0.05, -0.1, 0.1]))
    assert np.array_equal(shifted.cubeless, plain.cubeless)  # the network's own cubeless equity
    assert np.allclose(shifted.no_double, cube_equities(moved, boards, state, x=0.7).no_double)
    assert shifted.no_double[0] > plain.no_double[0] and shifted.no_double[1] < plain.no_double[1]
    assert np.array_equal(cube_equities(probs, boards, state, x=0.7, win_shift=np.zeros(3)).no_double, plain.no_double)
    # in a match too the cubeless match-winning chance stays the probabilities' own
    match = cube_state(1, "centered", MatchScore(7, (2, 4)))
    match = CubeState(np.ones(3, np.int64), np.full(3, CENTERED, np.int8), away=np.repeat(match.away, 3, axis=0))
    shifted = cube_equities(probs, boards, match, x=0.7, win_shift=np.array([0.05, -0.1, 0.1]))
    assert np.array_equal(shifted.cubeless, cube_equities(probs, boards, match, x=0.7).cubeless)
    assert not np.array_equal(shifted.no_double, cube_equities(probs, boards, match, x=0.7).no_double)
    # the ends: a sure loss moved up gains no gammons; a sure win moved down loses no gammons; a sure win stays one
    ends = shift_win(np.array([[0.0, 0.0, 0.0, 0.3, 0.1], [1.0, 0.4, 0.1, 0.0, 0.0], [1.0, 0.4, 0.1, 0.0, 0.0]]),
                     np.array([0.1, -0.1, 0.1]))
    assert np.allclose(ends, [[0.1, 0, 0, 0.27, 0.09], [0.9, 0.36, 0.09, 0, 0], [1.0, 0.4, 0.1, 0, 0]], atol=1e-12)


def test_decision_losses_by_hand():
    # Four positions whose Janowski lines are flat (the same equities at any x), so x does not matter: the formula
    # doubles the first, third and fourth (ND 0.5 < DT 0.7; 0.55 < min(1.2, 1)), not the second, and passes the
    # third and fourth.
    lines = (np.array([0.5, 0.6, 0.55, 0.5]), np.zeros(4), np.array([0.7, 0.4, 1.2, 1.2]), np.zeros(4))
    data = {"lines": lines, "no_double": np.array([0.55, 0.5, 0.5, 0.6]),
            "double_take": np.array([0.6, 0.7, 0.9, 0.6])}
    losses = ce.decision_losses(data, np.full(4, 0.68))
    # doubles: truth 0.55 v 0.6 (double: right), 0.5 v 0.7 (no double: loses 0.2), 0.5 v 0.9 (double: right), a
    # tie 0.6 v 0.6 (either is right); takes where the truth doubles, a tie counting as a double (as the reference
    # sets are scored): the third passes where the truth takes (0.9 <= 1), losing 0.1, the fourth 0.4
    assert losses == pytest.approx([0.0, 0.2, 0.0, 0.0, 0.0, 0.0, 0.1, 0.4])
    # the same losses as the reference sets' scoring gives these decisions
    entries = [{"no_double": nd, "double_take": dt, "double_pass": 1.0}
               for nd, dt in zip(data["no_double"], data["double_take"])]
    assert losses == pytest.approx(decision_losses(entries, [True, False, True, True], [True, True, False, False]))
    with pytest.raises(ValueError, match="one no double"):  # the rule itself refuses columns of unequal length
        cube_losses(data["no_double"], data["double_take"][:3], np.ones(4), [True] * 4, [True] * 4)


def test_labels_are_the_bots_own_rollout_cube_decisions_and_a_run_resumes(plain_bot, tmp_path):
    from bgai.eval.bot import load_bot

    fitted = load_bot()  # labelled with the manual's x whatever model the bot has
    assert fitted.cube_efficiency is not None
    out = tmp_path / "labels.npz"
    ce.label(fitted, out, range(0, 1), seed=4, limit=1, progress=False)
    ce.label(fitted, out, range(0, 1), seed=4, limit=2, progress=False)  # resumed: one more
    arrays, meta = ce.read_labels(out)
    assert len(arrays["boards"]) == meta["positions"] == 2 and meta["settings"]["seed"] == 4
    boards, owner = ce.window_positions(plain_bot, ce.source_boards(range(0, 1)), 4, 0.12)
    assert np.array_equal(arrays["boards"], boards[:2]) and np.array_equal(arrays["owner"], owner[:2])
    state = CubeState(np.ones(2, np.int64), owner[:2])
    assert (plain_bot.cube_equities(boards[:2], state, plies=0).margin < 0.12).all()
    # each label is what the bot's own rollout cube decision of that position finds, on the same dice (a rollout
    # decides its cube inside with the manual's x too)
    for i in range(2):
        d = fitted.cube_decision(Position(boards[i]), owner="centered" if owner[i] == CENTERED else "me",
                                    rollout={"seed": 4, "jobs": 1})
        assert arrays["no_double"][i] == pytest.approx(d.no_double, abs=1e-9)
        assert arrays["double_take"][i] == pytest.approx(d.double_take, abs=1e-9)
    with pytest.raises(BgaiError, match="other settings"):
        ce.label(plain_bot, out, range(0, 1), seed=5, limit=2, progress=False)
    with pytest.raises(BgaiError, match="more than the 1 asked"):
        ce.label(plain_bot, out, range(0, 1), seed=4, limit=1, progress=False)


def test_a_model_is_fitted_only_to_its_own_networks_labels(plain_bot, tmp_path):
    from bgai.core.files import write_npz

    arrays, _ = synthetic(plain_bot, np.r_[0.7, np.zeros(len(EFFICIENCY_FEATURES) - 1)], n=60)
    meta = {"settings": {"network": "0123456789abcdef"}}
    write_npz(tmp_path / "other.npz", **arrays, meta=np.array(json.dumps(meta)))
    with pytest.raises(BgaiError, match="another network"):
        ce.fit_model(plain_bot, [tmp_path / "other.npz"])
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(BgaiError, match="junk.npz: not a cube efficiency labels file"):
        ce.read_labels(tmp_path / "junk.npz")


def test_the_fit_command_writes_a_model_with_its_held_out_figures(plain_bot, tmp_path, capsys):
    # Labels made by a known model (x and a shift), written as a labels file of this network: the command fits
    # the shift by default, x alone with --no-shift, and each model's info holds its cross-validated figures
    from bgai.core.files import write_npz

    weights = np.r_[0.7, np.zeros(len(EFFICIENCY_FEATURES) - 1)]
    shift = np.zeros(len(EFFICIENCY_FEATURES))
    shift[[feature("bias"), feature("win - 1/2")]] = [-0.02, 0.12]
    arrays, _ = synthetic(plain_bot, weights, n=300, shift=shift)
    meta = {"settings": {"network": _digest(plain_bot), "seed": 9}}
    write_npz(tmp_path / "labels.npz", **arrays, meta=np.array(json.dumps(meta)))
    ce.main(["fit", str(tmp_path / "labels.npz"), "--out", str(tmp_path / "both.json")])
    ce.main(["fit", str(tmp_path / "labels.npz"), "--no-shift", "--out", str(tmp_path / "x.json")])
    out = capsys.readouterr().out
    assert "win shift mean" in out and "x fitted alone" in out and "weights of the shift" in out
    both, alone = EfficiencyModel.load(tmp_path / "both.json"), EfficiencyModel.load(tmp_path / "x.json")
    assert alone.shift is None and "shift" not in alone.info and "x_alone_mp" not in alone.info["cross_validation"]
    cv = both.info["cross_validation"]
    assert both.shift is not None and both.info["labels"][0]["seed"] == 9 and both.info["fitted_positions"] <= 300
    # the labels were made with a shift: held out, the model with one loses less than x fitted alone
    assert cv["fitted_mp"] < cv["x_alone_mp"] and cv["minus_x_alone_mp"] == pytest.approx(cv["fitted_mp"] -
                                                                                          cv["x_alone_mp"])
    assert both.info["shift"]["p95"] > both.info["shift"]["p5"]


def test_cube_accuracy_pairs_the_fitted_efficiency_with_the_manuals(tmp_path, capsys):
    from bgai.coach.cube_accuracy import REFERENCE, main

    reference = json.loads(REFERENCE.read_text())
    reference["entries"] = reference["entries"][:80]
    path = tmp_path / "reference.json"
    path.write_text(json.dumps(reference))
    main(["--plies", "0", "--reference", str(path), "--manual-x", "--json", str(tmp_path / "out.json")])
    rows = json.loads((tmp_path / "out.json").read_text())
    fitted, manual = rows["bgai 0-ply"], rows["bgai 0-ply, manual x"]
    assert fitted["minus_manual_x"]["mp_per_decision"] == pytest.approx(
        fitted["mp_per_decision"] - manual["mp_per_decision"])
    assert "minus the same with the manual's x" in capsys.readouterr().out
    # the manual row is what the bot without its model decides, the other what the bot with it does
    from bgai.coach.cube_accuracy import bgai_decisions
    from bgai.coach.cube_reference import score_decisions
    from bgai.eval.bot import load_bot

    entries = reference["entries"]
    bot = load_bot()
    alone = bot.replace(cube_efficiency=EfficiencyModel(bot.cube_efficiency.weights, {}))  # the shipped model's x
    assert bot.cube_efficiency.shift is not None and fitted["minus_x_alone"]["mp_per_decision"] == pytest.approx(
        fitted["mp_per_decision"] - rows["bgai 0-ply, x alone"]["mp_per_decision"])
    for each, row in ((load_bot(cube_efficiency=False), manual), (bot, fitted), (alone, rows["bgai 0-ply, x alone"])):
        doubles, takes, _ = bgai_decisions(each, entries)
        assert score_decisions(entries, list(doubles), list(takes))["mp_per_decision"] == row["mp_per_decision"]
    assert fitted["double_agreement"] != manual["double_agreement"] or fitted["mp_per_decision"] != manual[
        "mp_per_decision"]
