"""The bear-off databases (bgai.eval.bearoff): against GNU Backgammon's one-sided database, against slow exhaustive
references on small positions, and the cached file's checks."""

from functools import cache

import numpy as np
import pytest

from bgai.core.cube import CENTERED, ON_ROLL, OPPONENT
from bgai.eval import bearoff
from bgai.eval.bearoff import BearoffError
from bgai.formats.position import Position


@pytest.fixture(scope="module")
def db():
    return bearoff.database()


def board(ours, theirs) -> np.ndarray:
    """A bear-off board from the checkers of the player on roll and of its opponent on their points 1..6."""
    b = np.zeros(26, dtype=np.int8)
    b[1:7] = ours
    b[24:18:-1] = -np.asarray(theirs)
    return b


def test_positions_are_ranked_in_order():
    for n in (15, 6, 3):
        pos = bearoff.positions(n)
        assert (bearoff.rank(pos, n) == np.arange(len(pos))).all()
        assert (pos.sum(axis=1) <= n).all() and len({p.tobytes() for p in pos}) == len(pos)
    assert len(bearoff.positions()) == 54_264 and len(bearoff.positions(6)) == 924


def test_one_sided_distributions_match_gnubg_on_every_position(db):
    gnubg = pytest.importorskip("gnubg_nn")
    pos = bearoff.positions()
    reference = np.zeros_like(db.rolls)
    reference[0, 0] = 1.0
    for i in range(1, len(pos)):
        probs = gnubg.bearoff_probabilities(tuple(int(c) for c in pos[i]))  # entry k: k + 1 rolls
        reference[i, 1:1 + len(probs)] = probs
    rolls = np.arange(bearoff.MAX_ROLLS)
    # gnubg stores each probability in 16 bits; where two plays have (nearly) the same expected number of rolls,
    # its choice can differ from ours, which moves probability between neighbouring roll counts but not the mean.
    assert np.abs(db.rolls @ rolls - reference @ rolls).max() < 3e-4
    difference = np.abs(db.rolls - reference).max(axis=1)
    assert difference.max() < 3e-3
    assert (difference < 1e-4).mean() > 0.995


ROLLS = [((a, b), 1 / 36 if a == b else 2 / 36) for a in range(1, 7) for b in range(a, 7)]


@cache
def plays(counts: tuple, dice: tuple) -> list[tuple]:
    """The home boards a side's legal plays of ``dice`` leave it, one position at a time (``Position``)."""
    moves = Position(board(counts, [0] * 5 + [1])).legal_moves(dice)
    return sorted({tuple(int(c) for c in -move.after.board[24:18:-1]) for move in moves})


@cache
def slow_rolls(counts: tuple) -> tuple:
    """Distribution of the rolls to bear ``counts`` off, minimising their mean, one position and roll at a time."""
    if sum(counts) == 0:
        return (1.0,) + (0.0,) * (bearoff.MAX_ROLLS - 1)
    dist = np.zeros(bearoff.MAX_ROLLS)
    for dice, weight in ROLLS:
        best = min((np.array(slow_rolls(after)) for after in plays(counts, dice)),
                   key=lambda d: d @ np.arange(len(d)))
        dist[1:] += best[:-1] * weight
    return tuple(dist)


def test_one_sided_distributions_match_a_slow_reference_on_small_positions(db):
    # Given every position of up to three checkers
    for counts in bearoff.positions(3):
        # Then the database's distribution is the slow recursion's
        i = bearoff.rank(counts[None])[0]
        np.testing.assert_allclose(db.rolls[i], slow_rolls(tuple(int(c) for c in counts)), atol=1e-6)


@cache
def slow_win(ours: tuple, theirs: tuple) -> float:
    """Cubeless chance that the player on roll wins, both sides maximising it, by exhaustive recursion."""
    if sum(theirs) == 0:
        return 0.0
    return sum(weight * max(1.0 - slow_win(theirs, after) for after in plays(ours, dice)) for dice, weight in ROLLS)


@cache
def slow_cubeful(ours: tuple, theirs: tuple, owner: int) -> tuple[float, float]:
    """(no double, equity with the best cube action) for money, per unit of the cube, by exhaustive recursion."""
    if sum(theirs) == 0:
        return -1.0, -1.0
    seen_by_them = {CENTERED: CENTERED, ON_ROLL: OPPONENT, OPPONENT: ON_ROLL}

    def play_on(owner_now):
        return sum(weight * max(-slow_cubeful(theirs, after, seen_by_them[owner_now])[1]
                                for after in plays(ours, dice)) for dice, weight in ROLLS)

    no_double = play_on(owner)
    if owner == OPPONENT:
        return no_double, no_double
    double_take = 2 * play_on(OPPONENT)
    return no_double, max(no_double, min(double_take, 1.0))


def test_two_sided_tables_match_exhaustive_play_of_small_positions(db):
    small = [tuple(int(c) for c in p) for p in bearoff.positions(3)[1:]]
    boards = np.array([board(o, t) for o in small for t in small])
    win = db.probabilities(boards)[:, 0]
    nd = {owner: db.cube_equities(boards, owner)[0] for owner in (CENTERED, ON_ROLL, OPPONENT)}
    best = {owner: db.cubeful_equity(boards, owner) for owner in (CENTERED, ON_ROLL, OPPONENT)}
    k = 0
    for o in small:
        for t in small:
            assert win[k] == pytest.approx(slow_win(o, t), abs=1e-6)
            for owner in (CENTERED, ON_ROLL, OPPONENT):
                ref_nd, ref_best = slow_cubeful(o, t, owner)
                assert nd[owner][k] == pytest.approx(ref_nd, abs=1e-6)
                assert best[owner][k] == pytest.approx(ref_best, abs=1e-6)
            k += 1


def test_two_sided_win_chances_match_gnubg(db):
    gnubg = pytest.importorskip("gnubg_nn")
    from bgai.players.gnubg import to_gnubg

    rng = np.random.default_rng(3)
    pos6 = bearoff.positions(6)
    boards = np.array([board(pos6[i], pos6[j]) for i, j in rng.integers(1, len(pos6), (500, 2))])
    ours = db.probabilities(boards)
    theirs = np.array([gnubg.probabilities(to_gnubg(b), 0) for b in boards])
    assert db.exact(boards).all()
    np.testing.assert_allclose(ours, theirs, atol=1e-4)  # gnubg's two-sided table is stored in 16 bits


def test_race_estimates_from_one_sided_tables_match_gnubg(db):
    gnubg = pytest.importorskip("gnubg_nn")
    from bgai.players.gnubg import to_gnubg

    rng = np.random.default_rng(4)
    pos = bearoff.positions()
    boards = np.array([board(pos[i], pos[j]) for i, j in rng.integers(1, len(pos), (500, 2))])
    boards = boards[~db.exact(boards)]
    theirs = np.array([gnubg.probabilities(to_gnubg(b), 0) for b in boards])
    np.testing.assert_allclose(db.probabilities(boards), theirs, atol=1e-3)


def test_simple_bear_offs_are_scored_by_hand(db):
    # One checker each: ours on the 6 point, theirs on the 1 point. We win only by bearing off now: 27 rolls of 36
    # (any roll with a 6, or a total of 6 or more played by one checker, or a double of 2 or more).
    assert db.probabilities(board([0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0])[None])[0, 0] == pytest.approx(27 / 36)
    # Ours: one checker on the 1 point; theirs: all fifteen on their 6 point. We win a gammon for sure.
    probs = db.probabilities(board([1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 15])[None])[0]
    assert probs[:2] == pytest.approx([1.0, 1.0]) and probs[2:].sum() == 0
    # Ours: fifteen on the 6 point; theirs: one on the 1 point. We lose, and save the gammon only by bearing a
    # checker off now: any 6 (11 rolls), 5-1 and 4-2 (2 each, one checker), 3-3 and 2-2. 19 rolls of 36 don't.
    probs = db.probabilities(board([0, 0, 0, 0, 0, 15], [1, 0, 0, 0, 0, 0])[None])[0]
    assert probs.tolist() == pytest.approx([0.0, 0.0, 0.0, 19 / 36, 0.0])


def test_cube_actions_in_a_last_roll_position(db):
    # Our last checker is on the 6 point, theirs on the 1 point: we win now with 27 rolls of 36, or they bear off
    # next. A last roll: cubeless equity 0.5; doubled, they take or pass alike (both worth 1 to us).
    b = board([0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0])[None]
    nd, dt = db.cube_equities(b, CENTERED)
    assert nd[0] == pytest.approx(0.75 - 0.25)
    assert dt[0] == pytest.approx(2 * (0.75 - 0.25))
    assert db.cubeful_equity(b, CENTERED)[0] == pytest.approx(1.0)
    assert db.cube_equities(b, ON_ROLL)[0][0] == pytest.approx(0.5)
    assert np.isnan(db.cube_equities(b, OPPONENT)[1][0])


def test_positions_outside_the_database_are_refused(db):
    start = Position.start().board[None]
    assert not bearoff.is_bearoff(start)[0]
    with pytest.raises(BearoffError, match="not bear-offs"):
        db.probabilities(start)
    with pytest.raises(BearoffError, match="at most six checkers"):
        db.cube_equities(board([0, 0, 0, 0, 0, 7], [1, 0, 0, 0, 0, 0])[None], CENTERED)


def test_a_damaged_file_is_reported_and_rebuilt(db, tmp_path, monkeypatch, capsys):
    tables = {"rolls": db.rolls.astype(np.float32), "first_off": db.first_off[db.checkers == 15].astype(np.float32),
              "win": db.win, "no_double": db.no_double}
    path = tmp_path / bearoff.FILE_NAME
    bearoff.save(tables, path)
    assert np.array_equal(bearoff.load(path)["win"], db.win)

    # Given a file whose bytes were damaged, or that was cut short
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(BearoffError, match=str(path)):
        bearoff.load(path)
    path.write_bytes(bytes(data[:1000]))
    with pytest.raises(BearoffError, match="not a readable"):
        bearoff.load(path)

    # When it is loaded through the cache, Then the damage is reported and the file is rebuilt (here: the build is
    # replaced by the known tables, to keep the test fast)
    monkeypatch.setattr(bearoff, "build", lambda progress=False: tables)
    rebuilt = bearoff.load_or_build(path)
    assert "rebuilding" in capsys.readouterr().err
    assert np.array_equal(rebuilt["no_double"], db.no_double)
    assert np.array_equal(bearoff.load(path)["rolls"], tables["rolls"])


@pytest.mark.slow
def test_the_shipped_file_is_what_a_fresh_build_computes():
    shipped = bearoff.load(bearoff.SHIPPED)
    built = bearoff.build()
    assert set(shipped) == set(built)
    for name, table in built.items():
        assert np.abs(shipped[name] - table).max() <= 1e-6, name


def test_the_database_comes_from_the_shipped_file_with_no_build_and_no_cache(tmp_path, monkeypatch):
    def no_build(progress=False):
        raise AssertionError("built although the package ships the database")

    monkeypatch.setattr(bearoff, "build", no_build)
    monkeypatch.setenv("BGAI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(bearoff, "_DATABASE", None)
    db = bearoff.database()
    assert db.win.shape == (924, 924)
    assert not list(tmp_path.iterdir())


def test_a_damaged_shipped_file_is_reported_and_never_used(db, tmp_path, monkeypatch, capsys):
    damaged = tmp_path / "shipped" / bearoff.FILE_NAME
    damaged.parent.mkdir()
    damaged.write_bytes(bearoff.SHIPPED.read_bytes()[:5000])
    tables = {"rolls": db.rolls.astype(np.float32), "first_off": db.first_off[db.checkers == 15].astype(np.float32),
              "win": db.win, "no_double": db.no_double}
    monkeypatch.setattr(bearoff, "SHIPPED", damaged)
    monkeypatch.setattr(bearoff, "build", lambda progress=False: tables)
    monkeypatch.setenv("BGAI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(bearoff, "_DATABASE", None)
    assert np.array_equal(bearoff.database().no_double, db.no_double)
    err = capsys.readouterr().err
    assert f"{damaged} is not a readable bear-off database" in err and "building" in err
    assert (tmp_path / "cache" / bearoff.FILE_NAME).is_file()


def test_a_checksum_mismatch_is_never_used(db, tmp_path):
    tables = {"rolls": db.rolls.astype(np.float32), "first_off": db.first_off[db.checkers == 15].astype(np.float32),
              "win": db.win.copy(), "no_double": db.no_double}
    path = tmp_path / bearoff.FILE_NAME
    bearoff.save(tables, path)
    # A file rewritten with one changed value and the old checksum
    with np.load(path) as data:
        contents = {name: data[name] for name in data.files}
    contents["win"] = contents["win"].copy()
    contents["win"][5, 7] += 0.25
    np.savez_compressed(path, **contents)
    with pytest.raises(BearoffError, match="checksum"):
        bearoff.load(path)


# The bot uses the database ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bots():
    from bgai.eval.bot import load_bot

    return load_bot(), load_bot(plies=1), load_bot().__class__(load_bot().model, use_bearoff=False)


def test_the_bot_scores_bear_offs_from_the_database_at_every_ply(db, bots):
    bot, deep, network_only = bots
    rng = np.random.default_rng(5)
    pos6, pos = bearoff.positions(6), bearoff.positions()
    exact = np.array([board(pos6[i], pos6[j]) for i, j in rng.integers(1, len(pos6), (50, 2))])
    race = np.array([board(pos[i], pos[j]) for i, j in rng.integers(1, len(pos), (50, 2))])
    race = race[~db.exact(race)]
    # Exact positions: the database's answer at 0 and 1-ply alike
    np.testing.assert_allclose(bot.probabilities(exact), db.probabilities(exact), atol=1e-7)
    np.testing.assert_allclose(deep.lookahead(exact, 1), db.probabilities(exact), atol=1e-7)
    assert set(bot.sources(exact)) == {"exact"} and set(deep.sources(exact)) == {"exact"}
    # Larger bear-offs: the one-sided estimate at 0-ply; 1-ply looks ahead over it
    np.testing.assert_allclose(bot.probabilities(race), db.probabilities(race), atol=1e-7)
    assert set(bot.sources(race)) == {"race"} and set(deep.sources(race)) == {"lookahead"}
    # Without the database the network answers, and differs
    assert np.abs(network_only.probabilities(exact) - db.probabilities(exact)).max() > 0.01
    assert set(network_only.sources(exact)) == {"network"}
    assert bot.evaluate(Position(exact[0])).source == "exact"


def test_the_bot_plays_bear_offs_that_maximise_its_winning_chances(db, bots):
    bot = bots[0]
    rng = np.random.default_rng(6)
    pos6 = bearoff.positions(6)
    for i, j in rng.integers(1, len(pos6), (30, 2)):
        pos = Position(board(pos6[i], pos6[j]))
        dice = tuple(int(d) for d in rng.integers(1, 7, 2))
        moves = pos.legal_moves(dice)
        # The chance of winning after each play, for the mover: 1 - the opponent's chance on roll
        after = np.stack([m.after.board for m in moves])
        best = (1 - db.probabilities(after)[:, 0]).max()
        chosen = bot.choose_move(pos, dice)
        assert 1 - db.probabilities(chosen.after.board[None])[0, 0] == pytest.approx(best, abs=1e-6)


def test_money_cube_decisions_in_exact_bear_offs_come_from_the_database(bots):
    bot = bots[0]
    # A last roll: our checker on the 6 point, theirs on the 1 point
    decision = bot.cube_decision(Position(board([0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0])))
    assert decision.should_double
    assert decision.no_double == pytest.approx(0.5) and decision.double_take == pytest.approx(1.0)
    # Owning the cube does not change a last roll's no-double equity; the opponent's cube cannot be turned
    assert bot.cube_decision(Position(board([0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0])), 2, "me").no_double == \
        pytest.approx(0.5)
    assert not bot.cube_decision(Position(board([0, 0, 0, 0, 0, 1], [1, 0, 0, 0, 0, 0])), 2, "opponent").should_double
