"""Rollout-labelled positions (bgai.train.labels): the positions a shard picks, its labels, stopping and resuming, the
files, the CLI."""

import json

import numpy as np
import pytest

from bgai.core.errors import BgaiError
from bgai.core.phase import BEAROFF, OVER, RACE, classify
from bgai.eval.bot import load_bot
from bgai.eval.rollout import rollout_batch
from bgai.eval.weights import equity
from bgai.frontends.cli import main
from bgai.train import labels as lb

TINY = lb.LabelSettings(positions=12, candidates=2.0, trials=4, truncate=2, batch=5, seed=3)


@pytest.fixture(scope="module")
def bot():
    return load_bot()


@pytest.fixture(scope="module")
def shard(bot, tmp_path_factory):
    folder = tmp_path_factory.mktemp("labels")
    return lb.label_shard(bot, folder, 4, TINY, command="test")


@pytest.mark.parametrize("change, message", [
    ({"positions": 0}, "positions"), ({"trials": 1}, "trials"), ({"epsilon": 1.5}, "epsilon"),
    ({"race": -0.1}, "race"), ({"candidates": 0.5}, "candidates"), ({"batch": 2.5}, "batch"),
    ({"plays": -1}, "plays"),
])
def test_label_settings_refuse_what_cannot_be(change, message):
    with pytest.raises(BgaiError, match=message):
        lb.LabelSettings(**change)


def test_a_shard_takes_live_positions_a_share_of_races_and_half_where_1_ply_moved_most(bot):
    settings = lb.LabelSettings(positions=40, candidates=3.0, seed=5)
    picked = lb.shard_positions(bot, 0, settings)
    boards = picked["boards"]
    assert boards.shape == (40, 26) and boards.dtype == np.int8
    assert len(np.unique(boards, axis=0)) == 40
    phases = classify(boards)
    assert not np.isin(phases, (OVER, BEAROFF)).any()
    assert (phases == RACE).sum() == 8  # a fifth
    assert picked["picked"].sum() == 20  # half of each group where the network and its search disagree
    np.testing.assert_allclose(picked["ply0"], bot.lookahead(boards, 0), atol=1e-6)
    np.testing.assert_allclose(picked["ply1"], bot.lookahead(boards, 1), atol=1e-6)
    moved = np.abs(equity(picked["ply1"].astype(np.float64)) - equity(picked["ply0"].astype(np.float64)))
    contact = phases != RACE
    assert moved[contact & (picked["picked"] == 1)].min() >= np.median(moved[contact & (picked["picked"] == 0)])
    again = lb.shard_positions(bot, 0, settings)
    assert all(np.array_equal(picked[k], again[k]) for k in picked)  # seeded
    other = lb.shard_positions(bot, 1, settings)
    assert not np.array_equal(other["boards"], boards)  # another shard, other games


def test_with_plays_a_shard_holds_the_best_plays_of_a_roll_of_each_sampled_position(bot):
    from bgai.core.dice import ROLLS
    from bgai.core.movegen import afterstates

    settings = lb.LabelSettings(positions=16, plays=4, candidates=2.0, seed=3)
    roots = lb.shard_positions(bot, 2, lb.LabelSettings(positions=4, candidates=2.0, seed=3))
    got = lb.shard_positions(bot, 2, settings)
    assert set(got["decision"]) <= set(range(4)) and len(got["boards"]) <= 16
    assert np.array_equal(got["picked"], roots["picked"][got["decision"]])
    assert np.allclose(got["ply0"], bot.lookahead(got["boards"], 0), atol=1e-6)
    for d in np.unique(got["decision"]):
        group = {b.tobytes() for b in got["boards"][got["decision"] == d]}
        # Some roll's 4 best plays by 0-ply (those that leave a live, not bear-off position) are the group
        found = False
        for dice in ROLLS:
            moves = afterstates(roots["boards"][d][None], dice[None])
            ours = -equity(bot.lookahead(moves.after, 0).astype(np.float64))
            best = moves.after[np.argsort(-ours, kind="stable")[:4]]
            best = best[~np.isin(classify(best), (OVER, BEAROFF))]
            found |= {b.tobytes() for b in best} == group
        assert found, f"decision {d}: its positions are not the best plays of any roll"


def test_a_shards_labels_are_the_rollouts_of_its_positions_on_its_batches_dice(bot, shard):
    labelled, meta = lb.read_shard(shard)
    assert len(labelled) == 12 and meta["positions"] == 12 and meta["settings"]["trials"] == 4
    assert meta["labeller"]["weights"] == lb.network_digest(bot) and meta["command"] == "test"
    for index, lo in enumerate(range(0, 12, TINY.batch)):
        rows = slice(lo, lo + TINY.batch)
        again = rollout_batch(bot, labelled.boards[rows], trials=4, truncate=2, seed=lb.batch_seed(TINY, 4, index))
        np.testing.assert_allclose(labelled.probabilities[rows], again.probabilities, atol=1e-6)
        np.testing.assert_allclose(labelled.se[rows], again.se, atol=2e-3)  # float16
    # every standard error is recorded; one can round to 0 in float16 where four trials agree (two checkers on the
    # bar dancing against a five-point board), not most
    assert (labelled.equity_se >= 0).all() and (labelled.equity_se > 0).sum() >= 10
    manifest = json.loads((shard.parent / "MANIFEST.json").read_text())
    assert manifest["positions"] == 12 and manifest["files"][0]["file"] == shard.name


def test_a_shard_stopped_and_resumed_is_the_shard_written_whole(bot, shard, tmp_path, monkeypatch):
    import bgai.eval.rollout as ro

    calls = []
    original = ro.rollout_batch

    def stop_at_the_third_batch(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(ro, "rollout_batch", stop_at_the_third_batch)
    with pytest.raises(KeyboardInterrupt):
        lb.label_shard(bot, tmp_path, 4, TINY, command="test")
    partial = tmp_path / "shard-00004.partial"
    assert sorted(p.name for p in partial.iterdir()) == ["batch-0000.npz", "batch-0001.npz", "positions.npz",
                                                         "settings.json"]
    with pytest.raises(BgaiError, match="other settings"):
        lb.label_shard(bot, tmp_path, 4, lb.LabelSettings(**{**TINY.__dict__, "trials": 6}))
    calls.clear()
    monkeypatch.setattr(ro, "rollout_batch", lambda *a, **k: (calls.append(1), original(*a, **k))[1])
    resumed = lb.label_shard(bot, tmp_path, 4, TINY, command="test")
    assert len(calls) == 1 and not partial.exists()  # only the batch that was missing
    a, _ = lb.read_shard(resumed)
    b, _ = lb.read_shard(shard)
    for name in ("boards", "probabilities", "se", "equity_se", "ply0", "ply1", "picked"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_a_damaged_shard_is_refused_with_its_name(shard, tmp_path):
    cut = tmp_path / "shard-00001.npz"
    cut.write_bytes(shard.read_bytes()[:300])
    with pytest.raises(BgaiError, match="shard-00001.npz"):
        lb.read_shard(cut)
    stranger = tmp_path / "shard-00002.npz"
    np.savez(stranger, boards=np.zeros((3, 26), dtype=np.int8))
    with pytest.raises(BgaiError, match="not a bgai label file"):
        lb.read_shard(stranger)
    with pytest.raises(BgaiError, match="no label shards"):
        lb.load_labels(tmp_path / "nothing")


def test_shard_numbers_from_the_command_line():
    assert lb.parse_shards("7") == range(7, 8)
    assert lb.parse_shards("2-4") == range(2, 5)
    assert lb.parse_shards("3-").start == 3
    with pytest.raises(BgaiError, match="--shards"):
        lb.parse_shards("x")


def test_cli_labels_a_shard_and_reports_the_folder(tmp_path, capsys):
    args = ["label", "--out", str(tmp_path), "--shards", "0", "--positions", "4", "--trials", "2", "--truncate",
            "1", "--candidates", "1.5", "--quiet"]
    assert main(args) == 0
    assert (tmp_path / "shard-00000.npz").exists()
    assert main(["label", "--out", str(tmp_path), "--status"]) == 0
    out = capsys.readouterr().out
    assert "1 shards, 4 labelled positions" in out
    loaded = lb.load_labels(tmp_path)
    assert len(loaded) == 4 and (loaded.shard == 0).all()


def test_a_shard_relabelled_holds_the_source_positions_rolled_out_again_by_the_new_bot(bot, tmp_path):
    plays = lb.LabelSettings(**{**TINY.__dict__, "plays": 2})  # a source with decisions: each root's best 2 plays
    source_path = lb.label_shard(bot, tmp_path / "plays", 4, plays, command="test")
    source, _ = lb.read_shard(source_path)
    assert (source.decision >= 0).all() and len(np.unique(source.decision)) < len(source)
    other = load_bot("bgai/data/bgai-default.npz")  # another network than the one that labelled the source
    again = lb.LabelSettings(**{**TINY.__dict__, "relabel": str(tmp_path / "plays") + "/", "seed": 5})
    assert again.relabel == str(tmp_path / "plays")  # one spelling of the folder
    path = lb.label_shard(other, tmp_path / "again", 4, again, command="test")
    relabelled, meta = lb.read_shard(path)
    for name in ("boards", "picked", "decision"):  # the same positions, picks and decisions
        assert np.array_equal(getattr(relabelled, name), getattr(source, name)), name
    # the new bot's own values, and its rollouts on the batches' dice
    np.testing.assert_allclose(relabelled.ply0, other.lookahead(source.boards, 0), atol=1e-6)
    np.testing.assert_allclose(relabelled.ply1, other.lookahead(source.boards, 1), atol=1e-6)
    for index, lo in enumerate(range(0, len(source), TINY.batch)):
        rows = slice(lo, lo + TINY.batch)
        rolled = rollout_batch(other, source.boards[rows], trials=4, truncate=2, seed=lb.batch_seed(again, 4, index))
        np.testing.assert_allclose(relabelled.probabilities[rows], rolled.probabilities, atol=1e-6)
    assert meta["labeller"]["weights"] == lb.network_digest(other) != lb.network_digest(bot)
    assert meta["source"]["file"] == str(source_path) and meta["source"]["settings"]["plays"] == 2
    assert meta["source"]["labeller"]["weights"] == lb.network_digest(bot)
    # the same bot and the source's seed: each batch on the source's dice, so the very labels come back
    same = lb.label_shard(bot, tmp_path / "same", 4, lb.LabelSettings(**{**plays.__dict__,
                                                                          "relabel": str(tmp_path / "plays")}))
    assert np.array_equal(lb.read_shard(same)[0].probabilities, source.probabilities)
    # a shard the source lacks is refused before any work starts
    with pytest.raises(BgaiError, match="no shard-00005.npz to roll out again"):
        lb.label_shard(other, tmp_path / "again", 5, again)
    assert not (tmp_path / "again" / "shard-00005.partial").exists()


def test_cli_relabels_every_shard_of_a_folder(shard, tmp_path, capsys):
    out = tmp_path / "again"
    base = ["label", "--out", str(out), "--relabel", str(shard.parent), "--trials", "2", "--truncate", "1",
            "--quiet"]
    assert main(base) == 0  # every shard of the source: shard 4
    assert [p.name for p in lb.shard_files(out)] == [shard.name]
    assert np.array_equal(lb.load_labels(out).boards, lb.read_shard(shard)[0].boards)
    capsys.readouterr()
    assert main([*base, "--shards", "0-3"]) == 2
    assert "no label shards (shard-NNNNN.npz) to roll out again among --shards 0-3" in capsys.readouterr().err
    assert main(["label", "--out", str(shard.parent), "--relabel", str(shard.parent), "--quiet"]) == 2
    assert "must be different folders" in capsys.readouterr().err
