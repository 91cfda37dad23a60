"""Lookahead (0, 1 and 2-ply) and move filtering, checked against slow references written with plain loops."""

import numpy as np
import pytest

import bgai.eval.bot
from bgai import Position
from bgai.core.dice import ROLL_WEIGHTS, ROLLS
from bgai.core.errors import BgaiError
from bgai.core.movegen import afterstates
from bgai.eval.bot import Bot, MoveFilter, load_bot
from bgai.eval.network import EquityModel, equity, flip


@pytest.fixture(scope="module")
def bot0():
    return load_bot()


def mover_equity(probs) -> float:
    """The equity, for the player who just moved, of probabilities seen by the player now on roll."""
    return float(equity(flip(np.asarray(probs, dtype=np.float64)[None]))[0])


def exact_result(pos: Position):
    """The outcome of a finished game for the player on roll (the loser), from the rules: None if not finished."""
    board = pos.board
    if (board < 0).any():
        return None
    on_board = int(board[board > 0].sum())
    gammon = on_board == 15
    backgammon = gammon and int(board[19:26].clip(min=0).sum()) > 0  # in the winner's home board or on the bar
    return np.array([0, 0, 0, gammon, backgammon], dtype=np.float64)


def slow_lookahead(bot0, pos: Position, plies: int) -> np.ndarray:
    """n-ply by the definition, one position and one roll at a time: over the 21 rolls, the (n-1)-ply value of
    the play with the best 0-ply equity, seen from the side of the player on roll."""
    finished = exact_result(pos)
    if finished is not None:
        return finished
    if plies == 0:
        return bot0.probabilities(pos.board[None])[0].astype(np.float64)
    plays = [pos.legal_moves((int(d1), int(d2))) for d1, d2 in ROLLS]
    values = bot0.probabilities(np.stack([m.after.board for moves in plays for m in moves]))  # one network call
    total, first = np.zeros(5), 0
    for moves, weight in zip(plays, ROLL_WEIGHTS):
        best = max(range(len(moves)), key=lambda i: mover_equity(values[first + i]))
        after = moves[best].after
        if plies == 1 and exact_result(after) is None:
            value = values[first + best]  # its 0-ply value, at hand
        else:
            value = slow_lookahead(bot0, after, plies - 1)
        total += weight * flip(value[None])[0]
        first += len(moves)
    return total


def game_positions(bot0, count: int, seed: int) -> list[Position]:
    """The first ``count`` positions after the opening of a game the 0-ply bot plays against itself."""
    rng = np.random.default_rng(seed)
    pos, seen = Position.start(), []
    while len(seen) < count:
        pos = bot0.choose_move(pos, tuple(int(d) for d in rng.integers(1, 7, size=2))).after
        seen.append(pos)
    return seen


# Evaluating positions --------------------------------------------------------------------------------------


def test_one_ply_averages_the_opponents_best_reply_over_its_21_rolls(bot0):
    """Given a position, 1-ply is the weighted mean over the 21 rolls of the 0-ply value of the best play, seen
    from the side of the player on roll: checked against a slow loop over Position.legal_moves."""
    bot1 = load_bot(plies=1, pruner=False)  # the reference judges every reply
    pos = Position.start().play("8/5 6/5", "31").after
    expected = slow_lookahead(bot0, pos, 1)
    assert np.allclose(bot1.lookahead(pos.board[None], 1)[0], expected, atol=1e-5)
    assert bot1.evaluate(pos).equity == pytest.approx(float(equity(expected[None])[0]), abs=1e-4)


def test_two_ply_agrees_with_the_slow_reference(bot0):
    """Given positions from a game, one with a checker on the bar, and a bear-off, the batched 2-ply values equal
    the definition evaluated one position and one roll at a time."""
    positions = [
        Position.start(),
        *game_positions(bot0, 4, seed=7)[:2],
        Position.from_points({"bar": 1, 6: 4, 8: 3, 13: 5, 24: 2}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 1: 5}),
        Position.from_points({1: 2, 2: 3, 4: 1}, {22: 2, 23: 3, 24: 2}),
    ]
    bot2 = load_bot(plies=2, pruner=False)
    got = bot2.lookahead(np.stack([p.board for p in positions]), 2)
    zero = Bot(bot2.model)  # the 2-ply bot's own network, without its lookahead
    for pos, value in zip(positions, got):
        assert np.allclose(value, slow_lookahead(zero, pos, 2), atol=1e-5), pos


def test_two_ply_values_of_every_play_agree_with_the_reference_at_full_width(bot0):
    """Given a roll with few plays, rank_moves at 2-ply without filters gives each play its 2-ply equity."""
    pos = Position.from_points({24: 2, 13: 5, 8: 3, 6: 5}, {18: 2, 17: 2, 16: 2, 12: 3, 5: 2, 3: 2, 1: 2})
    bot2 = load_bot(plies=2, filters=(), pruner=False)
    ranked = bot2.rank_moves(pos, (6, 6))
    assert 2 <= len(ranked) <= 6
    for move, value in ranked:
        assert value == pytest.approx(mover_equity(slow_lookahead(Bot(bot2.model), move.after, 2)), abs=1e-4)
    assert [v for _, v in ranked] == sorted((v for _, v in ranked), reverse=True)


def test_finished_games_are_scored_exactly_at_every_depth():
    """Given a game just lost by a backgammon, every depth scores it exactly; given a position where every roll
    bears off the last checker (the opponent still has a checker in our home board, none off), 1 and 2-ply see a
    certain backgammon win."""
    lost = Position.from_points({3: 1, 19: 14}, {})  # on roll, the opponent has borne off all 15
    assert exact_result(lost).tolist() == [0, 0, 0, 1, 1]
    winning = Position.from_points({1: 1}, {3: 1, 19: 14})
    for plies in range(3):
        bot = load_bot(plies=plies)
        assert bot.lookahead(lost.board[None], plies)[0].tolist() == [0, 0, 0, 1, 1]
        if plies:
            assert bot.lookahead(winning.board[None], plies)[0].tolist() == [1, 1, 1, 0, 0]
    assert load_bot(plies=2).evaluate(winning).equity == 3


@pytest.mark.parametrize("threads", [1, 2])
def test_the_network_judges_only_what_neither_the_rules_nor_the_database_answer(bot0, threads):
    import torch

    from bgai.core.game import game_over, play_games
    from bgai.core.phase import classify
    from bgai.eval import bearoff, encoding
    from bgai.eval.bot import exact_probabilities
    from bgai.players.base import RandomPlayer

    class Recorder(RandomPlayer):  # every afterstate of random games: contact, races, bear-offs, finished games
        seen = []

        def choose(self, boards, after, owner, rng, dice=None):
            self.seen.append(after)
            return super().choose(boards, after, owner, rng, dice)

    play_games(Recorder(), Recorder(), 20, seed=5)
    boards = np.concatenate(Recorder.seen)
    over, bear = game_over(boards), bearoff.is_bearoff(boards)
    rest = ~over & ~bear
    assert over.any() and bear.any() and rest.any()
    before = torch.get_num_threads()
    torch.set_num_threads(threads)  # passes of NET_CHUNK or NET_CHUNK_ONE_THREAD boards
    try:
        probs = bot0.probabilities(boards)
    finally:
        torch.set_num_threads(before)
    with torch.inference_mode():
        x = encoding.encode(boards[rest], version=bot0.model.encoder_version)
        phase = torch.from_numpy(classify(boards[rest]))  # each board by its phase's net
        network = EquityModel.of(bot0.model)(torch.from_numpy(x), phase).numpy()  # the snapshot's torch model
    # the network's own outputs, the outcomes the rules rule out set to zero (some of these random games' races)
    expected = bgai.eval.bot.without_impossible_outcomes(boards[rest], network)
    assert (expected != network).any()
    np.testing.assert_allclose(probs[rest], expected, atol=5e-6)  # the bot's numpy pass agrees with torch's
    np.testing.assert_array_equal(probs[over], exact_probabilities(boards[over]))
    np.testing.assert_array_equal(probs[bear], bearoff.database().probabilities(boards[bear]))


def test_chunked_levels_give_the_same_values(bot0, monkeypatch):
    """Given memory bounds small enough to cut every level into many chunks, 2-ply values do not change."""
    boards = np.stack([p.board for p in game_positions(bot0, 6, seed=3)])
    bot2 = load_bot(plies=2)
    whole = bot2.lookahead(boards, 2)
    monkeypatch.setattr(bgai.eval.bot, "PAIR_CHUNK", 50)
    monkeypatch.setattr(bgai.eval.bot, "NET_CHUNK", 1000)
    assert np.allclose(bot2.lookahead(boards, 2), whole, atol=1e-6)


# Move filtering -----------------------------------------------------------------------------------------------


def slow_filter(values, owner, keep, window) -> set[int]:
    """The plays a filter keeps, position by position: the best ``keep`` within ``window`` of the best."""
    kept = set()
    for group in set(owner.tolist()):
        rows = sorted(np.flatnonzero(owner == group), key=lambda i: (-values[i], i))
        best = values[rows[0]]
        kept.update(int(i) for i in rows[:keep] if values[i] >= best - window)
    return kept


@pytest.mark.parametrize("keep,window", [(1, 0.5), (3, 0.04), (8, 0.16), (50, 0.16), (4, 0.0)])
def test_a_filter_keeps_the_best_and_every_play_within_the_window_up_to_its_count(keep, window):
    """Given random equities of plays grouped by position (ties included), a filter keeps each position's best
    play, no play outside the window, and drops a play within the window only when ``keep`` better ones stay."""
    rng = np.random.default_rng(keep)
    owner = np.sort(rng.integers(0, 40, size=600))
    values = np.round(rng.normal(0, 0.1, size=600), 2)  # rounding makes ties
    kept = MoveFilter(keep, window).apply(values, owner)
    assert set(np.flatnonzero(kept).tolist()) == slow_filter(values, owner, keep, window)
    for group in np.unique(owner):
        rows = owner == group
        assert kept[rows].any() and values[rows & kept].max() == values[rows].max()
        within = rows & (values >= values[rows].max() - window)
        assert kept[within].sum() == min(keep, within.sum())


def test_filtered_two_ply_plays_the_best_survivor_at_two_ply(bot0):
    """Given a roll with many plays, the 2-ply choice is the best, at 2-ply, of the plays kept by filtering at
    0-ply and then at 1-ply (the filters applied here by hand); the dropped plays follow it in the ranking."""
    pos = game_positions(bot0, 6, seed=11)[-1]
    moves = pos.legal_moves((4, 2))
    boards = np.stack([m.after.board for m in moves])
    bot2 = load_bot(plies=2)
    first, second = bot2.filters
    zero = np.array([mover_equity(v) for v in bot0.probabilities(boards)])
    alive = sorted(slow_filter(zero, np.zeros(len(moves), int), first.keep, first.window))
    one = np.array([mover_equity(v) for v in bot2.lookahead(boards[alive], 1)])
    alive = [alive[i] for i in sorted(slow_filter(one, np.zeros(len(alive), int), second.keep, second.window))]
    two = [mover_equity(v) for v in bot2.lookahead(boards[alive], 2)]
    ranked = bot2.rank_moves(pos, (4, 2))
    assert len(ranked) == len(moves) > second.keep
    assert ranked[0][0] == moves[alive[int(np.argmax(two))]]
    assert ranked[0][1] == pytest.approx(max(two), abs=1e-6)
    assert {str(m) for m, _ in ranked[:len(alive)]} == {str(moves[i]) for i in alive}
    assert bot2.choose_move(pos, (4, 2)) == ranked[0][0]


class Pessimist(bgai.eval.bot.Bot):
    """A bot whose every judgement deeper than 0-ply says the mover loses a backgammon."""

    def lookahead(self, boards, plies):
        if plies == 0:
            return super().lookahead(boards, 0)
        return np.tile(np.array([1, 1, 1, 0, 0], dtype=np.float32), (len(boards), 1))


@pytest.mark.parametrize("plies", [1, 2])
def test_a_play_the_filters_dropped_is_never_chosen_whatever_its_shallower_equity(bot0, plies):
    """Given deeper judgements worse than any 0-ply one, the bot still plays one of the two plays its filter kept
    (the two best at 0-ply), and rank_moves lists them first."""
    bot = Pessimist(bot0.model, plies=plies, filters=(MoveFilter(2, 1.0),))
    pos = Position.start()
    moves = pos.legal_moves((6, 2))
    boards = np.stack([m.after.board for m in moves])
    zero = [mover_equity(v) for v in bot0.probabilities(boards)]
    kept = {str(moves[i]) for i in np.argsort(zero)[-2:]}
    ranked = bot.rank_moves(pos, (6, 2))
    assert {str(m) for m, _ in ranked[:2]} == kept and [v for _, v in ranked[:2]] == [-3, -3]
    after = np.stack([m.after.board for m in moves])
    pick = bot.choose(pos.board[None], after, np.zeros(len(after), dtype=np.int64))[0]
    assert str(moves[pick]) in kept


@pytest.mark.parametrize("plies", [1, 2])
def test_batched_choices_equal_the_head_of_rank_moves(bot0, plies):
    """Given a batch of positions and rolls, Bot.choose (which stops early on a settled choice) picks the play
    that rank_moves puts first, position by position."""
    positions = game_positions(bot0, 8, seed=plies)[:4] + [Position.from_points({1: 2, 2: 1}, {24: 1, 20: 3})]
    rolls = np.array([(6, 5), (3, 3), (2, 1), (4, 1), (6, 6)][:len(positions)])
    bot = load_bot(plies=plies)
    boards = np.stack([p.board for p in positions])
    moves = afterstates(boards, rolls)
    chosen = moves.after[bot.choose(boards, moves.after, moves.owner)]
    for pos, roll, after in zip(positions, rolls, chosen):
        head = bot.rank_moves(pos, tuple(int(d) for d in roll))[0][0]
        assert np.array_equal(head.after.board, after)
        # choose_move (one position, only the chosen play written out) is that same play, notation and all
        move = bot.choose_move(pos, tuple(int(d) for d in roll))
        assert move == head and str(move) == str(head)


def test_choose_move_is_the_head_of_rank_moves_at_0_ply_and_when_forced(bot0):
    positions = game_positions(bot0, 30, seed=9)
    rng = np.random.default_rng(4)
    blocked = Position.from_points({24: 2}, {i: 2 for i in range(18, 24)} | {1: 3})  # 6-6 cannot move
    for pos, roll in [(p, tuple(int(d) for d in rng.integers(1, 7, size=2))) for p in positions] + [(blocked, (6, 6))]:
        head = bot0.rank_moves(pos, roll)[0][0]
        move = bot0.choose_move(pos, roll)
        assert move == head and str(move) == str(head)


def test_a_hint_gives_the_movers_chances_behind_each_equity(bot0):
    """Given the opening 6-5 at 1-ply, each hinted play's probabilities are the mover's after the play: at the ply
    it was judged at, they give its equity, and at 1-ply they are the flipped lookahead of the afterstate."""
    bot = load_bot(plies=1)
    hint = bot.hint(Position.start(), (6, 5))
    assert [(r.move, r.equity, r.plies) for r in hint] == bot.rank_moves(Position.start(), (6, 5), with_plies=True)
    for r in hint:
        probs = np.array([r.evaluation.win, r.evaluation.win_gammon, r.evaluation.win_backgammon,
                          r.evaluation.lose_gammon, r.evaluation.lose_backgammon])
        assert r.evaluation.equity == pytest.approx(r.equity)
        assert float(equity(probs[None])[0]) == pytest.approx(r.equity, abs=1e-9)
        expected = flip(bot.lookahead(r.move.after.board[None], r.plies).astype(np.float64))[0]
        assert probs == pytest.approx(expected, abs=1e-6)


# Bad input ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("plies", [3, -1, 1.5, "2", True])
def test_plies_outside_0_to_2_are_refused(plies):
    with pytest.raises(BgaiError, match="plies must be an integer 0..2"):
        load_bot(plies=plies)


@pytest.mark.parametrize("keep,window,message", [
    (0, 0.1, "keeps at least 1"), (2.5, 0.1, "keeps at least 1"), (2, -0.01, "window"), (2, "wide", "window"),
])
def test_bad_filters_are_refused(keep, window, message):
    with pytest.raises(BgaiError, match=message):
        MoveFilter(keep, window)


def test_filters_must_fit_the_plies():
    with pytest.raises(BgaiError, match="at most 1 MoveFilter"):
        load_bot(plies=1, filters=(MoveFilter(8, 0.16), MoveFilter(2, 0.04)))
    with pytest.raises(BgaiError, match="MoveFilter or None"):
        load_bot(plies=2, filters=((8, 0.16),))


def test_outcomes_the_rules_rule_out_are_zero():
    """No gammon against a side that has borne off; in a race, no backgammon against a side with no checker in the
    winner's home board; where contact remains (a checker can still be hit and sent back), backgammons stay."""
    from bgai.eval.bot import load_bot, without_impossible_outcomes

    bot = load_bot()
    # Race, the player on roll far behind but past the opponent's home board; the opponent has borne off one.
    # (Both sides' points in the on-roll player's numbering: the opponent's home board is 19 to 24.)
    race = Position.from_points({13: 4, 15: 4, 17: 4, 18: 3}, {19: 3, 20: 3, 21: 3, 22: 3, 23: 2})
    # Contact: the player on roll has a checker back on the opponent's 1-point (its 24).
    contact = Position.from_points({24: 1, 13: 4, 15: 4, 17: 3, 18: 3}, {19: 3, 20: 3, 21: 3, 22: 3, 23: 3})
    probs = bot.probabilities(np.stack([race.board, race.switched().board, contact.switched().board]))
    assert probs[0, 1] == probs[0, 2] == 0 and probs[0, 4] == 0  # no gammon for us, no backgammon against us
    assert probs[1, 3] == probs[1, 4] == 0 and probs[1, 2] == 0  # the same position from the other side
    assert probs[1, 1] > 0.5  # the gammon stays
    assert probs[2, 2] > 0  # contact: a backgammon is still possible
    raw = np.full((1, 5), 0.3)
    assert np.array_equal(without_impossible_outcomes(race.board[None], raw), [[0.3, 0, 0, 0.3, 0]])


def test_the_compiled_bookkeeping_gives_the_numpy_results():
    """bgai.core.kernels' rule_out and best_plays are without_impossible_outcomes and the argmax of the mover's equity
    (segment_argmax(equity(flip(...)))), on the afterstates of games (contact, races, bear-offs, finished ones)
    with random probabilities, ties included."""
    from bgai.core.movegen import segment_argmax
    from bgai.eval import kernels
    from bgai.eval.bot import MoveFilter, without_impossible_outcomes
    from bgai.eval.weights import equity, flip
    from tests.test_encoding import game_positions

    boards = game_positions(2000, seed=3)
    moves = afterstates(boards, np.random.default_rng(3).integers(1, 7, size=(len(boards), 2)))
    rng = np.random.default_rng(4)
    probs = rng.random((len(moves.after), 5)).astype(np.float32)
    probs[::7] = probs[1::7][:len(probs[::7])]  # neighbours with equal values: the first wins
    expected = without_impossible_outcomes(moves.after, probs)
    got = probs.copy()
    kernels.rule_out(moves.after, got)
    assert (expected != probs).any() and np.array_equal(got, expected)
    assert np.array_equal(kernels.best_plays(got, moves.owner, len(boards)),
                          segment_argmax(equity(flip(got)), moves.owner, len(boards)))
    values = equity(flip(got))
    ties = np.round(values * 4) / 4  # many equal values in a group: the earlier rows win
    for keep in (1, 2, 3, 4, 5, 8):
        for v in (values, ties):
            expected = MoveFilter(keep, np.inf).apply(v, moves.owner)
            assert np.array_equal(kernels.keep_best(v, moves.owner, keep), expected)


# The pruning net of the replies (Bot.replies) -------------------------------------------------------------------


def test_a_pruner_that_keeps_every_reply_changes_nothing(bot0):
    """Given a pruning net and a prune count above any roll's number of plays, the lookahead is the full one."""
    from bgai.eval.bot import Bot
    from bgai.eval.network import EquityModel
    from bgai.eval.weights import ModelSnapshot

    pruner = ModelSnapshot.of(EquityModel.create((8,)))  # an untrained net: its ranking is arbitrary
    positions = game_positions(bot0, 6, seed=3)
    boards = np.stack([p.board for p in positions])
    for plies in (1, 2):
        full = Bot(bot0.model, plies=plies).lookahead(boards, plies)
        wide = Bot(bot0.model, plies=plies, pruner=pruner, prune=10_000).lookahead(boards, plies)
        np.testing.assert_array_equal(wide, full)


def test_a_pruner_may_read_other_inputs_than_the_network(bot0):
    """A pruning net on encoder version 0 (Tesauro's units, as training/pruner.py --encoder 0 makes) prunes a
    version-2 network's replies: with a prune count above any roll's plays the lookahead is the full one, and
    with 2 it still plays legal moves."""
    from bgai.eval.bot import Bot
    from bgai.eval.network import EquityModel
    from bgai.eval.weights import ModelSnapshot

    pruner = ModelSnapshot.of(EquityModel.create((8,), encoder_version=0))
    assert pruner.encoder_version == 0 != bot0.model.encoder_version
    boards = np.stack([p.board for p in game_positions(bot0, 4, seed=5)])
    full = Bot(bot0.model, plies=1).lookahead(boards, 1)
    np.testing.assert_array_equal(Bot(bot0.model, plies=1, pruner=pruner, prune=10_000).lookahead(boards, 1), full)
    narrow = Bot(bot0.model, plies=1, pruner=pruner, prune=2)
    move = narrow.choose_move(Position.start(), (6, 5))
    assert move.after in [m.after for m in Position.start().legal_moves((6, 5))]


def test_pruned_replies_are_the_network_s_best_among_the_pruner_s_best(bot0):
    from bgai.eval.bot import Bot, MoveFilter
    from bgai.eval.network import EquityModel
    from bgai.eval.weights import ModelSnapshot

    pruner = ModelSnapshot.of(EquityModel.create((8,)))
    bot = Bot(bot0.model, plies=1, pruner=pruner, prune=3)
    boards = np.stack([p.board for p in game_positions(bot0, 4, seed=5)])
    rows = np.repeat(np.arange(len(boards)), len(ROLLS))
    moves = afterstates(boards[rows], np.tile(ROLLS, (len(boards), 1)), validate=False)
    pick, probs = bot.replies(moves.after, moves.owner, len(rows))
    rough = equity(flip(bot.probabilities(moves.after, pruner)))
    kept = MoveFilter(3, np.inf).apply(rough, moves.owner)
    value = equity(flip(bot.probabilities(moves.after)))
    # (another pass: numpy's BLAS may round a board's values in the last bits otherwise in another batch)
    np.testing.assert_allclose(probs, bot.probabilities(moves.after[pick]), rtol=1e-6, atol=1e-7)
    for group in range(len(rows)):
        plays = np.flatnonzero(moves.owner == group)
        candidates = plays if len(plays) <= 3 else plays[kept[plays]]
        assert pick[group] in candidates
        assert value[pick[group]] >= value[candidates].max() - 1e-6


def test_the_shipped_bot_prunes_its_replies_unless_told_not_to():
    from bgai.eval.bot import SHIPPED_PRUNER

    # (a 0-ply bot carries it for rollouts' variance reduction; its own plays never use it)
    assert load_bot(plies=1).pruner is not None and load_bot(plies=0).pruner is not None
    assert load_bot(plies=0, pruner=False).name == load_bot(plies=0).name
    assert load_bot(plies=2, pruner=False).pruner is None
    assert load_bot(plies=1, pruner=False).name.endswith("-unpruned")
    assert load_bot(SHIPPED_PRUNER, plies=1).pruner is None  # another network gets none by default


def test_a_pruning_net_s_file_says_how_many_plays_the_network_judges(tmp_path):
    from bgai.eval.bot import PRUNE_KEEP, SHIPPED_PRUNER
    from bgai.eval.network import EquityModel
    from bgai.eval.weights import ModelSnapshot

    shipped = ModelSnapshot.load_npz(SHIPPED_PRUNER)
    assert shipped[0].encoder_version == 0 and load_bot(plies=1).prune == shipped[1]["keep"] == 5
    net = ModelSnapshot.of(EquityModel.create((8,), encoder_version=0))
    net.save_npz(tmp_path / "plain.npz")  # a file that does not say: PRUNE_KEEP
    assert load_bot(plies=1, pruner=tmp_path / "plain.npz").prune == PRUNE_KEEP
    for bad in ("all", 0, True, 10**30):
        net.save_npz(tmp_path / "bad.npz", info={"keep": bad})
        with pytest.raises(BgaiError, match="bad.npz says it leaves the network keep="):
            load_bot(plies=1, pruner=tmp_path / "bad.npz")


def test_the_default_bot_plays_each_ply_with_the_network_shipped_for_it():
    from bgai.eval.bot import (
        DEFAULT_NETWORKS,
        FAST_NPZ,
        FAST_PRUNER,
        MAX_PLIES,
        OWN_PRUNERS,
        SHIPPED,
        SHIPPED_NPZ,
        SHIPPED_PRUNER,
    )
    from bgai.eval.weights import ModelSnapshot

    assert set(DEFAULT_NETWORKS) == set(range(MAX_PLIES + 1))
    for plies, npz in DEFAULT_NETWORKS.items():
        pruner = OWN_PRUNERS[npz]
        bot = load_bot(plies=plies)
        expected = ModelSnapshot.load_npz(npz)[0]
        assert bot.model.hidden == expected.hidden
        assert all(np.array_equal(bot.model.weights[k], v) for k, v in expected.weights.items())
        assert all(np.array_equal(bot.pruner.weights[k], v)
                   for k, v in ModelSnapshot.load_npz(pruner)[0].weights.items())
    assert all(load_bot(plies=plies).model.hidden == (512, 64) for plies in range(MAX_PLIES + 1))
    # a shipped network named by its path gets its own pruning net too
    for path, pruner in ((SHIPPED, SHIPPED_PRUNER), (SHIPPED_NPZ, SHIPPED_PRUNER), (FAST_NPZ, FAST_PRUNER)):
        own = ModelSnapshot.load_npz(pruner)[0]
        assert all(np.array_equal(load_bot(path, plies=1).pruner.weights[k], v) for k, v in own.weights.items())


def test_bad_pruning_settings_are_refused(bot0):
    from bgai.eval.bot import Bot
    from bgai.eval.network import EquityModel
    from bgai.eval.weights import ModelSnapshot

    with pytest.raises(BgaiError, match="at least 1"):
        Bot(bot0.model, plies=1, pruner=ModelSnapshot.of(EquityModel.create((8,))), prune=0)
