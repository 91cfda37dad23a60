"""Every script in benchmarks/ runs at a tiny size and writes what its readers need (the README's status table,
``benchmarks/status.py``, and the docs), with the command, date, commit and machine that made it.

Each script runs as a person runs it, ``python benchmarks/NAME.py`` in a process of its own, with its smallest
options and ``--json`` into a temporary folder; the coach commands whose files the status table reads run here, by
their ``main``. The figures mean nothing at these sizes: the tests check the file's shape, the invariants a run of
any size keeps (agreeing runs agree, the oracles are matched) and the provenance.
"""

from __future__ import annotations

import datetime
import json
import math
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from bgai.coach import cube_accuracy, move_accuracy, ply_strength, strength
from bgai.coach.cube_reference import decision_losses, reference_decisions

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
#: scripts tested elsewhere: the status table's renderer (tests/test_status.py)
ELSEWHERE = {"status"}


def run(command: list[str], out: Path, timeout: float = 600) -> dict:
    """Run ``command`` from the repository's root (``--json out`` appended) and return the file it wrote."""
    done = subprocess.run([sys.executable, *command, "--json", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    figures = json.loads(out.read_text())
    assert figures["command"].endswith(f"--json {out}"), figures["command"]  # the command that wrote the file
    return figures


def assert_provenance(figures: dict, command: str) -> None:
    """The file names the command that wrote it, when (UTC), the code's commit and the machine."""
    assert figures["command"].startswith(command), figures["command"]
    date = datetime.datetime.fromisoformat(figures["date"])
    assert date.tzinfo is not None and abs(datetime.datetime.now(datetime.UTC) - date) < datetime.timedelta(hours=1)
    assert re.fullmatch(r"[0-9a-f]{12}", figures["commit"]), figures["commit"]  # the tests run in a checkout
    assert re.match(r"\S+, \d+ cores, Python 3\.\d+\.\d+", figures["machine"]), figures["machine"]


def positive(*values) -> bool:
    return all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in values)


# What each script's file must hold ------------------------------------------------------------------------------


def bench(r: dict) -> None:
    assert r["pairs"] == 200 and r["afterstates_per_pair"] > 1
    assert positive(r["bgai_1_thread_pairs_per_s"], r["bgai_2_thread_pairs_per_s"], r["gnubg_pairs_per_s"],
                    r["bgsage_pairs_per_s"], r["random_v_random_games_per_s"], r["pubeval_v_random_games_per_s"])
    for threads in (1, 2):
        assert r[f"ratio_bgai_{threads}_thread_vs_gnubg"] == pytest.approx(
            r[f"bgai_{threads}_thread_pairs_per_s"] / r["gnubg_pairs_per_s"])


def selfplay_bench(r: dict) -> None:
    assert r["games"] == 8 and r["gnubg_games"] == 1 and r["workers"] == 1
    for way in ("from_scratch", "continuing_shipped"):
        assert positive(r[f"bgai_train_{way}_games_per_s"])
        assert r[f"ratio_{way}_vs_gnubg"] == pytest.approx(r[f"bgai_train_{way}_games_per_s"]
                                                           / r["gnubg_selfplay_games_per_s"])
    assert r["grown_from"] == "checkpoints/td-v1/checkpoint.pt" and list(r["games_per_s_by_size"]) == ["256", "256,256"]
    assert positive(*r["games_per_s_by_size"].values())
    # each size timed with its learner in bfloat16 too
    assert list(r["games_per_s_by_size_learner_bf16"]) == ["256", "256,256"]
    assert positive(*r["games_per_s_by_size_learner_bf16"].values()) and isinstance(r["bf16_supported"], bool)


def lookahead_bench(r: dict) -> None:
    assert r["positions"] == 1
    assert positive(*(r[f"ms_per_move_{p}_ply"] for p in (0, 1, 2)), r["ms_per_move_1_ply_full_width"],
                    r["ms_per_move_2_ply_full_width"])
    assert r["memory"]["batch"] == 1 and r["memory"]["peak_rss_mb_batch"] >= r["memory"]["peak_rss_mb_before"] > 0


def ply_speed(r: dict) -> None:
    assert [row["plies"] for row in r["rows"]] == [0, 1, 2]
    assert [row["positions"] for row in r["rows"]] == [2, 2, 1]
    for row in r["rows"]:
        assert positive(row["bgai"]["ms_per_move"], row["bgsage"]["ms_per_move"])
        assert row["ratio_bgai_bgsage"] == pytest.approx(row["bgai"]["ms_per_move"] / row["bgsage"]["ms_per_move"])
        assert row["bgai"]["unmapped"] == 0
        assert row["bgsage"]["differs_from_reference"] == 0  # the timed path plays as bgsage's own analyzer does
    assert positive(r["rows"][0]["gnubg_nn"]["ms_per_move"]) and r["system"]["cores"] >= 1


def fast_network_bench(r: dict) -> None:
    assert r["positions"] == 2 and r["trials"] == 4
    assert positive(*r["ms_per_move"].values()) and len(r["ms_per_move"]) == 6
    for rollouts in r["rollouts"].values():  # threads, processes and one thread roll the same dice
        equities = {how: rollouts[how]["equity"] for how in ("2 threads", "2 processes", "1 thread")}
        assert len(set(equities.values())) == 1, equities


def eval_speed(r: dict) -> None:
    assert positive(r["gnubg_calibrate_per_s"])
    assert [(row["batch"], row["order"]) for row in r["results"]] == [
        (batch, order) for batch in (1, 32, 4096) for order in ("as generated", "shuffled")]
    for row in r["results"]:
        assert row["vs_gnubg"] == pytest.approx(row["evaluations_per_s"] / r["gnubg_calibrate_per_s"])


def target_bench(r: dict) -> None:
    assert r["positions"] == 3 and r["counts"]["all"] == 3
    assert len(r["targets"]) == 10
    assert "fast rollout, 2 trials, played to the end" in r["targets"]
    assert "fast rollout, 8 trials, truncated at 7" in r["targets"]
    for target in r["targets"].values():
        assert 0 <= target["mean_abs_error"]["all"] < 3 and positive(target["seconds_per_position"])


def target_cost(r: dict) -> None:
    assert r["positions"] >= 1
    assert set(r["ms_per_position"]) >= {"1-ply", "2-ply", "1-ply, pruning net", "2-ply, pruning net",
                                         "rollout, 72 trials, truncated at 7"}
    assert positive(*r["ms_per_position"].values())
    assert all(0 <= d < 0.1 for d in r["pruned_equity_difference"].values())


def precision_bench(r: dict) -> None:
    for key in ("eval_0ply_per_s", "targets_1ply_per_s"):
        assert positive(r[key]["fp32"], r[key]["bf16"])
    assert r["equity_moved_0ply"]["max"] < 0.1
    assert r["duel_bf16_v_fp32"]["games"] == 2


def rollout_bench(r: dict) -> None:
    assert r["speed"]["trials"] == 8 and r["speed"]["jobs"] == 2 and len(r["speed"]["rows"]) == 4
    assert len(r["speed_race"]["rows"]) == 1 and "standard_error" not in r and "bearoff_database" not in r
    for row in r["speed"]["rows"] + r["speed_race"]["rows"]:
        assert positive(row["bgai_trials_per_s"], row["gnubg_trials_per_s"], row["ratio"], row["ratio_less_startup"])
        assert row["ratio"] == pytest.approx(row["bgai_trials_per_s"] / row["gnubg_trials_per_s"])
    assert r["gnubg"].startswith("GNU Backgammon")


def rollout_positions_bench(r: dict) -> None:
    assert r["positions"] == 2 and r["settings"]["trials"] == 2 and r["baseline"] is None
    assert set(r["seconds"]) == {"bgai_jobs2", "bgai_jobs1", "gnubg"}
    assert r["bgai_jobs2_v_jobs1_max_abs_equity"] < 1e-6  # the same dice on one thread or two
    assert positive(r["ratio_to_gnubg"]["bgai_jobs2"], *r["positions_per_s"].values())


def workers_bench(r: dict) -> None:
    best = r["training"]["best_games_per_s"]
    assert set(best) == {"this process, 2 threads (as before)", "this process, 1 thread", "1 worker process",
                         "2 worker processes"}
    assert positive(*best.values(), *r["targets_1ply"]["best_positions_per_s"].values())
    assert r["estimate"]["128"]["fixed_round"]["games_per_s"] > 0


def cube_set_rollouts(r: dict) -> None:
    assert r["positions"] == 2 and r["trials"] == 2
    assert set(r["figures"]) == {"0-ply", "1-ply", "rollouts truncated at 7", "rollouts played out"}
    assert r["figures"]["rollouts played out"]["played out"]["mean_abs"] == 0  # itself


def cube_rollout_judge(r: dict) -> None:
    assert r["entries"] == 40 and 1 <= r["top"] <= 2 and len(r["positions"]) == r["top"]
    assert sum(r["sides_with"].values()) == r["top"]
    shares = r["on_the_top_entries_mp_summed_over_the_set"]
    for p in r["positions"]:
        assert p["bgai_loss_by_2ply"] > 0  # the entries picked are ones the rollout loses on
        assert p["gnubg_rollout"]["no_double_se"] > 0 and p["gnubg_rollout"]["double_take_se"] > 0
        assert -3 < p["gnubg_rollout"]["no_double"] < 3 and -6 < p["gnubg_rollout"]["double_take"] < 6
    # the top entries' losses by the 2-ply judge are part of the rollout's whole figure
    by_2ply = 1000 * sum(p["bgai_loss_by_2ply"] for p in r["positions"]) / r["decisions"]
    assert abs(shares["bgai rollout, judged by gnubg 2-ply"] - by_2ply) < 0.01
    assert 0 < shares["bgai rollout, judged by gnubg 2-ply"] <= r["bgai_rollout_mp_per_decision"] + 0.001


def external_bench(r: dict) -> None:
    assert r["games"] == 2 and r["plies"] == r["cube_plies"] == 0
    assert 0 <= r["win_rate"] <= 1 and r["mean_abs_points"] >= 1


def analysis_vs_gnubg(r: dict) -> None:
    assert r["settings"]["length"] == 1 and r["settings"]["plies"] == [0] and r["settings"]["gnubg_plies"] == 0
    assert r["summary"]["matches"] == 1
    assert r["summary"]["gnubg"]["unforced"] == r["summary"]["bgai_0ply"]["unforced"] > 0


def rollout_ranking(r: dict) -> None:
    assert r["settings"] == {"decisions": 3, "seed": 7, "top": 4, "trials": 2, "truncate": 7}
    assert len(r["rollouts"]) == 3 and all(1 <= len(d["plays"]) == len(d["rollout"]) <= 4 for d in r["rollouts"])
    scores = r["scores"]
    # the best of the rolled-out plays by the judge's own values gives up no more than any choice among them
    assert scores["best of the top 4 by gnubg 2-ply"][0] <= scores["rollout of the top 4"][0]
    # the shipped 0-ply network scored as a checkpoint: its own picks, so no difference by either judge
    mine = r["networks"]["checkpoints/shipped/experiments/split-scale.pt"]
    assert mine["mp_per_move"] == scores["shipped 0-ply"] and mine["minus_shipped"] == [0.0, 0.0]
    assert mine["by_rollout"]["decisions"] == 3 and mine["by_rollout"]["minus_shipped"] == [0.0, 0.0]


def ensemble_bench(r: dict) -> None:
    # run with the first network as the second: the average of a network with itself is that network, so every
    # paired difference is exactly nothing, and duplicate games against itself are level on every dice sequence
    assert r["first"] == r["second"] and r["decisions"] == 4
    assert [g["seed"] for g in r["games"]] == [5] and r["games"][0]["games"] == 4 and r["games"][0]["ppg"] == 0
    assert r["checker_play"]["averaged"]["mp_per_move"] == r["checker_play"]["second"]["mp_per_move"] == 0
    for judge in ("gnubg 2-ply", "gnubg's rollouts"):
        assert r["cube"][judge]["decisions"] >= 4 and r["cube"][judge]["averaged"]["minus_first_mp"] == 0


def test_the_averaged_player_evaluates_the_mean_of_its_two_networks(load_script):
    from bgai.coach import ensemble_bench as module
    from bgai.eval.bot import FAST_NPZ, SHIPPED_NPZ, load_bot
    from bgai.formats.position import Position

    pair = module.averaged(load_bot(FAST_NPZ), load_bot(SHIPPED_NPZ))
    boards = np.stack([Position.from_position_id(p).board for p in ("4HPwATDgc/ABMA", "m1kJZAjvAQAAAQ")])
    one, two = load_bot(FAST_NPZ).probabilities(boards), load_bot(SHIPPED_NPZ).probabilities(boards)
    assert not np.allclose(one, two)
    assert np.allclose(pair.probabilities(boards), (one + two) / 2, atol=1e-6)
    # with several networks beside the first, the mean of all of them, each counted once
    three = module.averaged(load_bot(FAST_NPZ), load_bot(SHIPPED_NPZ), load_bot(FAST_NPZ))
    assert np.allclose(three.probabilities(boards), (2 * one + two) / 3, atol=1e-6)
    with pytest.raises(ValueError, match="at least one network"):
        module.averaged(load_bot(FAST_NPZ))


def cube_shift(r: dict) -> None:
    # every bot on every set, each row's difference the two models' own figures apart, x alone fitted to the
    # labels the shipped models name
    assert len(r["rows"]) == 9 and {row["entries"] for row in r["rows"]} == {5}
    for row in r["rows"]:
        assert row["decisions"] >= 5 and row["difference_mp"] == pytest.approx(row["shift_mp"] - row["x_alone_mp"])
    assert r["x_alone_labels"]["bgai-fast.npz"][0] == "ens5-distil-labels-1.npz"


def calibration(r: dict) -> None:
    assert r["labels"] == "checkpoints/labels/split-scale"
    n = r["all"]["positions"]
    assert n > 0 and sum(c["all"]["positions"] for c in r["by_class"].values()) == n
    assert sum(b["positions"] for b in r["by_band"]) == sum(b["positions"] for b in r["reliability_win"]) == n
    for c in r["by_class"].values():
        assert c["gammonish"]["positions"] + c["not gammonish"]["positions"] == c["all"]["positions"]
    # a lean is a mean of differences, no larger than their mean absolute value
    assert abs(r["all"]["equity_lean"]) <= r["all"]["equity_mean_abs"]
    assert all(b["bin"][0] <= b["ply0"] <= b["bin"][1] for b in r["reliability_win"])


def train_speed(r: dict) -> None:
    # (the tree against itself: the same moves, each part timed in both)
    assert r["runs"] == 1 and r["same_moves"] and len(r["every_run"]["new"]) == len(r["every_run"]["old"]) == 1
    for part in ("td", "lookahead", "rollouts"):
        assert positive(r["median_seconds"]["new"][part], r["median_seconds"]["old"][part])
        assert r["ratio_new_over_old"][part] == pytest.approx(r["median_seconds"]["new"][part]
                                                              / r["median_seconds"]["old"][part])


def tuning(r: dict) -> None:
    for part in ("encoder_boards_a_second", "movegen_positions_a_second"):
        assert set(r[part]) == {"1 thread", "2 threads"}
        assert all(positive(rate) for rates in r[part].values() for rate in rates.values())
    assert r["rollout_seconds_by_net_chunk"].keys() == {"2048", "4096", "8192", "32768"}
    assert all(positive(s) for s in r["rollout_seconds_a_position_by_chunk"].values())
    assert all(f["plays"] > 0 and positive(f["ms_a_play"]) for f in r["match_file_read"].values())
    assert r["exit_collection_seconds"] >= 0


def rl_loops(r: dict) -> None:
    for part in ("ppo_bgai_sb3_vec_env", "ppo_bgai_sb3_vec_env_checker_steps", "ppo_bgai_dummy_vec_env",
                 "gym_sync_bgai"):
        assert positive(r[part]["steps_per_s"]), part
    for part in ("ppo_openspiel_dummy_vec_env", "gym_sync_openspiel"):  # (measured where open_spiel is installed)
        assert "skipped" in r[part] or positive(r[part]["steps_per_s"]), part


def learner_bench(r: dict) -> None:
    fits = r["by_size"]["80,80"]
    assert r["games"] == 8 and r["runs"] == 1 and r["threads"] == 1 and fits["positions"] > 8
    for way in ("default", "fused"):
        assert positive(fits["fp32"]["median_seconds"][way]) and len(fits["fp32"]["every_run"][way]) == 1
    assert fits["fp32"]["ratio_fused_over_default"] == pytest.approx(
        fits["fp32"]["median_seconds"]["fused"] / fits["fp32"]["median_seconds"]["default"])
    assert fits["fp32"]["largest_weight_difference"] < 1e-4  # the same update, a round's few steps


def run_speed(r: dict) -> None:
    # the growth run's committed launches, each with its span and rate
    assert r["run_dir"] == "checkpoints/deep" and r["launches"]
    for launch in r["launches"]:
        assert launch["games"] > 0 and positive(launch["games_per_s"], launch["median_round_games_per_s"])
        assert launch["from"] <= launch["to"] and launch["rounds"] >= 2


def pruned_selfplay(r: dict) -> None:
    # each K's cost to the model's choices, and the trainer's speed without the pruning net and with it at each K
    assert r["pruner"] == "bgai/data/bgai-fast-pruner.npz" and r["choices"]["positions"] > 0
    for keep in ("1", "3"):
        figures = r["choices"]["by_keep"][keep]
        assert 0 <= figures["missed"] <= 1 and figures["mp_lost_per_move"] >= 0
        assert 0 < figures["plays_judged_share"] < 1
    assert r["choices"]["by_keep"]["1"]["missed"] >= r["choices"]["by_keep"]["3"]["missed"]
    assert list(r["games_per_s"]) == ["unpruned", "prune 1", "prune 3"] and positive(*r["games_per_s"].values())
    assert r["speedup"]["unpruned"] == 1


def env_bench(r: dict) -> None:
    assert positive(r["bgai_vector_env"]["games_per_s"])


#: script: (its smallest options, what its file must hold); the slowest first, so that xdist starts them first
SCRIPTS: dict[str, tuple[list[str], Callable[[dict], None]]] = {
    "workers_bench": (["--games", "4", "--parallel-games", "4", "--positions", "4", "--part", "2", "--self-play",
                       "2", "--no-ray"], workers_bench),
    "selfplay_bench": (["--games", "8", "--gnubg-games", "1", "--workers", "1", "--sizes", "256", "256,256",
                        "--grow-from", "checkpoints/td-v1/checkpoint.pt"], selfplay_bench),
    "learner_bench": (["--checkpoint", "checkpoints/deep/generations/td80.pt", "--sizes", "80,80", "--games", "8",
                       "--runs", "1", "--precisions", "fp32"], learner_bench),
    "run_speed": (["checkpoints/deep", "--skip", "0"], run_speed),
    "pruned_selfplay": (["--checkpoint", "checkpoints/deep/generations/td80.pt", "--pruner",
                         "bgai/data/bgai-fast-pruner.npz", "--keeps", "1", "3", "--games", "8", "--positions-games",
                         "2", "--repeats", "1", "--workers", "1"], pruned_selfplay),
    "ply_speed": (["--positions", "2", "--positions-2ply", "1"], ply_speed),
    "fast_network_bench": (["--positions", "2", "--trials", "4"], fast_network_bench),
    "target_cost": (["--positions", "1", "--rollouts", "1", "--self-play", "1"], target_cost),
    "precision_bench": (["--positions", "8", "--games", "1", "--self-play", "2", "--boards", "64"],
                        precision_bench),
    "rollout_bench": (["--skip", "se,bearoff", "--repeats", "1", "--trials", "8", "--jobs", "2", "--positions",
                       "race"], rollout_bench),
    "lookahead_bench": (["--positions", "1", "--steps", "1", "--batch", "1"], lookahead_bench),
    "rollout_positions_bench": (["--positions", "2", "--repeats", "1", "--trials", "2", "--baseline", ""],
                                rollout_positions_bench),
    "eval_speed": (["--seconds", "0.05", "--gnubg-seconds", "1"], eval_speed),
    "analysis_vs_gnubg": (["--seeds", "1", "--length", "1", "--plies", "0", "--gnubg-plies", "0"], analysis_vs_gnubg),
    "external_bench": (["--games", "2"], external_bench),
    "env_bench": (["--envs", "8", "--seconds", "0.2", "--no-pgx"], env_bench),
    "bench": (["--pairs", "200", "--games", "20", "--repeats", "1"], bench),
    "rl_loops": (["--envs", "2", "--steps", "64"], rl_loops),
    "tuning": (["--repeats", "1", "--boards", "5000", "--trials", "36", "--positions", "4"], tuning),
    "train_speed": (["--vs-tree", ".", "--runs", "1", "--games", "64", "--positions", "60"], train_speed),
}


#: The measuring commands of bgai.coach that were benchmarks/ scripts before: (their smallest options, what their file
#: must hold), run here as ``python -m bgai.coach.NAME`` as a user runs them.
MEASURES: dict[str, tuple[list[str], Callable[[dict], None]]] = {
    "target_bench": (["--positions", "3", "--trials", "2"], target_bench),
    "cube_set_rollouts": (["--positions", "2", "--trials", "2"], cube_set_rollouts),
    "cube_rollout_judge": (["--sample", "40", "--top", "2", "--trials", "36"], cube_rollout_judge),
    "calibration": (["--labels", "checkpoints/labels/split-scale"], calibration),
    "ensemble_bench": (["--second", "checkpoints/shipped/experiments/split-scale.pt", "--seeds", "5", "--games", "2",
                        "--decisions", "4"], ensemble_bench),
    "rollout_ranking": (["--decisions", "3", "--trials", "2", "--quiet", "--checkpoint",
                         "checkpoints/shipped/experiments/split-scale.pt"], rollout_ranking),
    "cube_shift": (["--limit", "5"], cube_shift),
}


def test_cube_set_rollouts_with_errors_rolls_out_each_position_the_0ply_cube_answers_wrongly_once(tmp_path):
    from bgai.coach.cube_reference import reference_decisions

    figures = run(["-m", "bgai.coach.cube_set_rollouts", "--errors", "--trials", "2"], tmp_path / "errors.json")
    entries = json.loads(cube_accuracy.REFERENCE.read_text())["entries"]
    _, takes, _ = cube_accuracy.bgai_decisions(cube_accuracy.load_bot(), entries)
    wrong = {e["position_id"] for e, take in zip(entries, takes)
             if reference_decisions(e)[0] and bool(take) != reference_decisions(e)[1]}
    assert figures["positions"] == len(wrong) > 10 and "wrong passes" in figures["chosen"]
    cube_set_rollouts({**figures, "positions": 2})  # the same figures as a random draw's


def test_fast_network_bench_times_other_networks_at_the_plies_asked_each_with_its_own_pruning_net(tmp_path):
    options = ["--networks", "bgai/data/bgai-default.npz", "--plies", "2", "--own-pruners", "--positions", "1"]
    figures = run(["benchmarks/fast_network_bench.py", *options], tmp_path / "cost.json")
    names = ["2-ply fast", "2-ply bgai/data/bgai-default.npz"]
    assert sorted(figures["ms_per_move"]) == sorted(names) and figures["plies"] == [2]
    # each shipped network's own pruning net
    assert [figures["pruners"][name] for name in names] == ["bgai-fast-pruner.npz", "bgai-pruner.npz"]
    assert positive(*figures["ms_per_move"].values()) and figures["ratio_to_fast"]["2-ply fast"] == 1.0
    assert figures["ratio_to_fast"][names[1]] == pytest.approx(
        figures["ms_per_move"][names[1]] / figures["ms_per_move"][names[0]])


def test_calibration_reports_what_rolling_the_same_positions_out_again_changed(tmp_path):
    import shutil

    source, again = ROOT / "checkpoints/labels/split-scale", ROOT / "checkpoints/labels/ens5-distil"
    figures = run(["-m", "bgai.coach.calibration", "--labels", str(source), "--relabelled", str(again)],
                  tmp_path / "relabelled.json")
    common = sorted({p.name for p in source.glob("shard-*.npz")} & {p.name for p in again.glob("shard-*.npz")})
    assert figures["shards"] == common and figures["all"]["positions"] == 5000 * len(common)
    assert sum(c["positions"] for c in figures["by_class"].values()) == figures["all"]["positions"]
    for f in (figures["all"], *figures["by_class"].values()):
        assert 0 <= abs(f["equity_mean_change"]) <= f["equity_mean_abs_change"] <= f["equity_change_95th_percentile"]
        assert f["first_0ply_error"] > 0 and f["second_0ply_error"] > 0
    # a folder whose shard holds other positions is refused, naming it
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(source / "shard-00001.npz", other / "shard-00000.npz")
    done = subprocess.run([sys.executable, "-m", "bgai.coach.calibration", "--labels", str(source), "--relabelled",
                           str(other), "--json", str(tmp_path / "x.json")], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode != 0 and "shard-00000.npz holds other positions" in done.stderr


def test_every_results_file_says_when_and_from_which_commit():
    """Every committed results file records its date and the commit of its code: written by the script (with its
    command and machine), or, for the files older than that, backfilled from git history and saying so."""
    files = [ROOT / "benchmarks" / "results.json", *sorted((BENCHMARKS / "results").glob("*.json"))]
    for path in files:
        figures = json.loads(path.read_text())
        assert isinstance(figures, dict), path
        datetime.datetime.fromisoformat(figures["date"])
        assert re.fullmatch(r"[0-9a-f]{12}", figures["commit"]), (path, figures["commit"])
        assert "machine" in figures or figures["provenance"].startswith("backfilled from git history"), path


def test_every_benchmark_script_has_a_smoke_test():
    scripts = {path.stem for path in BENCHMARKS.glob("*.py")}
    assert scripts - ELSEWHERE == set(SCRIPTS)


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_a_benchmark_runs_tiny_and_records_its_figures_and_provenance(name, tmp_path):
    options, holds = SCRIPTS[name]
    figures = run([f"benchmarks/{name}.py", *options], tmp_path / f"{name}.json")
    assert_provenance(figures, shlex.join(["python", f"benchmarks/{name}.py", *options]))
    holds(figures)


@pytest.mark.parametrize("name", list(MEASURES))
def test_a_measuring_command_runs_tiny_and_records_its_figures_and_provenance(name, tmp_path):
    options, holds = MEASURES[name]
    figures = run(["-m", f"bgai.coach.{name}", *options], tmp_path / f"{name}.json")
    assert_provenance(figures, shlex.join(["python", "-m", f"bgai.coach.{name}", *options]))
    holds(figures)


# The coach commands whose files the status table reads: library modules, run here by their ``main``, which
# records the command it was given ---------------------------------------------------------------------------


def coach(module, options: list[str], out: Path) -> dict:
    """``python -m bgai.coach.MODULE OPTIONS --json OUT``, run in this process: the file it wrote."""
    module.main([*options, "--json", str(out)])
    figures = json.loads(out.read_text())
    assert figures["command"] == " ".join([f"python -m {module.__name__}", *options, "--json", str(out)])
    return figures


def tiny_reference(name: str, folder: Path, entries: int) -> Path:
    """The first ``entries`` of a reference set (``bgai/coach/data/NAME``), as a file of its own."""
    reference = json.loads((ROOT / "bgai" / "coach" / "data" / name).read_text())
    path = folder / name
    path.write_text(json.dumps({**reference, "entries": reference["entries"][:entries]}))
    return path


def test_move_accuracy_records_each_ply_beside_gnubg_and_its_provenance(tmp_path):
    reference = tiny_reference("move_reference.json", tmp_path, 6)
    figures = coach(move_accuracy, ["--plies", "0", "1", "--reference", str(reference)], tmp_path / "moves.json")
    assert_provenance(figures, "python -m bgai.coach.move_accuracy")
    assert figures["reference"] == "move_reference.json"
    scored = [key for key in figures if key.endswith("-ply")]
    assert scored == ["gnubg 0-ply", "bgai 0-ply", "bgai 1-ply"]
    assert all(figures[key]["decisions"] == 6 and figures[key]["mp_per_move"] >= 0 for key in scored)


def test_move_accuracy_versus_a_network_is_the_paired_difference_of_the_two(tmp_path):
    from bgai.coach.move_reference import move_errors
    from bgai.eval.bot import FAST_NPZ, SHIPPED_NPZ

    reference = tiny_reference("move_reference.json", tmp_path, 40)
    entries = json.loads(reference.read_text())["entries"]
    options = ["--plies", "0", "--checkpoint", str(SHIPPED_NPZ), "--versus", str(FAST_NPZ), "--reference",
               str(reference)]
    versus = coach(move_accuracy, options, tmp_path / "versus.json")["bgai 0-ply"]["minus_versus"]
    ours, theirs = (move_accuracy.bot_choices(move_accuracy.load_bot(path), entries)[0] for path in (SHIPPED_NPZ,
                                                                                                       FAST_NPZ))
    diffs = 1000 * (np.array(move_errors(entries, ours)) - np.array(move_errors(entries, theirs)))
    assert versus["versus"] == str(FAST_NPZ)
    assert versus["mp_per_move"] == pytest.approx(diffs.mean())
    assert versus["mp_se"] == pytest.approx(diffs.std(ddof=1) / np.sqrt(len(diffs)))


def test_cube_accuracy_records_each_ply_beside_gnubg_and_its_provenance(tmp_path):
    reference = tiny_reference("cube_reference.json", tmp_path, 6)
    figures = coach(cube_accuracy, ["--plies", "0", "--reference", str(reference)], tmp_path / "cube.json")
    assert_provenance(figures, "python -m bgai.coach.cube_accuracy")
    assert figures["reference"] == "cube_reference.json"
    assert figures["gnubg 0-ply"]["decisions"] == figures["bgai 0-ply"]["decisions"] >= 6  # doubles, and takes
    assert figures["bgai 0-ply"]["mp_per_decision"] >= 0


def test_cube_accuracy_scores_each_plys_own_cube_and_what_the_1ply_bot_decides_at_its_deeper_one(tmp_path):
    from bgai.eval.bot import CUBE_PLIES, FAST_NPZ

    reference = tiny_reference("cube_reference.json", tmp_path, 40)
    entries = json.loads(reference.read_text())["entries"]
    figures = coach(cube_accuracy, ["--plies", "1", "--reference", str(reference)], tmp_path / "one.json")

    def mp(bot):
        return 1000 * decision_losses(entries, *cube_accuracy.bgai_decisions(bot, entries)[:2]).mean()

    own = cube_accuracy.load_bot(plies=1, cube_plies=1)
    deeper = cube_accuracy.load_bot(FAST_NPZ, plies=2)  # the same network, two plies deep
    assert figures["bgai 1-ply"]["mp_per_decision"] == pytest.approx(mp(own))
    assert figures["bgai 1-ply bot"]["cube_plies"] == CUBE_PLIES[1] == 2
    assert figures["bgai 1-ply bot"]["mp_per_decision"] == pytest.approx(mp(deeper))
    assert "bgai 0-ply bot" not in coach(cube_accuracy, ["--plies", "0", "--reference", str(reference)],
                                         tmp_path / "zero.json")  # a 0-ply bot's cube is its own ply's


def test_cube_accuracy_decides_once_for_bots_whose_cubes_are_the_same(tmp_path, monkeypatch):
    from bgai.eval.bot import SHIPPED_NPZ, Ensemble, load_bot
    from bgai.eval.network import EquityModel

    one, two, zero = load_bot(plies=1), load_bot(plies=2), load_bot(plies=0)
    key = cube_accuracy.cube_key
    # the 1-ply bot's cube looks 2 plies ahead with the network the 2-ply bot plays with: the same decisions
    assert one.cube_plies == two.cube_plies == 2 and key(one) == key(two)
    # anything its cube reads makes another key: the depth, the cube efficiency, the pruning, the network, the
    # bear-off database, bfloat16 passes, an ensemble's other networks, the torch pass instead of numpy's
    other = load_bot(SHIPPED_NPZ, plies=2)
    keys = [key(two), key(zero), key(two.replace(cube_efficiency=None)), key(two.replace(prune=2)),
            key(two.replace(pruner=None)), key(other), key(two.replace(use_bearoff=False)),
            key(two.replace(bf16=True)), key(Ensemble(two.model, [other.model], plies=2)),
            key(two.replace(model=EquityModel.of(two.model)))]
    assert len(set(keys)) == len(keys)
    reference = tiny_reference("cube_reference.json", tmp_path, 8)
    calls = []
    real = cube_accuracy.bgai_decisions
    monkeypatch.setattr(cube_accuracy, "bgai_decisions", lambda bot, *a, **k: calls.append(bot) or real(bot, *a, **k))
    figures = coach(cube_accuracy, ["--plies", "0", "1", "2", "--reference", str(reference)], tmp_path / "c.json")
    assert len(calls) == 3  # 0-ply, 1-ply, and the 1-ply bot's cube, which is 2-ply's
    assert figures["bgai 1-ply bot"]["mp_per_decision"] == figures["bgai 2-ply"]["mp_per_decision"]
    assert figures["bgai 1-ply bot"]["by_kind"] == figures["bgai 2-ply"]["by_kind"]


def test_cube_accuracy_versus_a_network_is_the_paired_difference_of_the_two(tmp_path):
    from bgai.eval.bot import FAST_NPZ, SHIPPED_NPZ

    reference = tiny_reference("cube_reference.json", tmp_path, 60)
    entries = json.loads(reference.read_text())["entries"]
    options = ["--plies", "0", "--checkpoint", str(SHIPPED_NPZ), "--versus", str(FAST_NPZ), "--reference",
               str(reference)]
    figures = coach(cube_accuracy, options, tmp_path / "versus.json")
    versus = figures["bgai 0-ply"]["minus_versus"]
    ours, theirs = (cube_accuracy.bgai_decisions(cube_accuracy.load_bot(path), entries)[:2]
                    for path in (SHIPPED_NPZ, FAST_NPZ))
    diffs = 1000 * (decision_losses(entries, *ours) - decision_losses(entries, *theirs))
    assert len(diffs) == figures["bgai 0-ply"]["decisions"] and diffs.any()  # the two networks decide differently
    assert versus["versus"] == str(FAST_NPZ)
    assert versus["mp_per_decision"] == pytest.approx(diffs.mean())
    assert versus["mp_se"] == pytest.approx(diffs.std(ddof=1) / np.sqrt(len(diffs)))
    # the losses are those the figures average
    assert 1000 * decision_losses(entries, *ours).mean() == pytest.approx(figures["bgai 0-ply"]["mp_per_decision"])


def test_cube_accuracy_profile_replaces_one_output_group_at_a_time_by_the_references(tmp_path):
    reference = tiny_reference("cube_reference.json", tmp_path, 60)
    entries = json.loads(reference.read_text())["entries"]
    judge = np.array([e["probabilities"] for e in entries])
    # Given probabilities that are the reference's but for a win chance 0.1 too high
    wrong = judge.copy()
    wrong[:, 0] = np.minimum(wrong[:, 0] + 0.1, 1.0)
    wrong[:, 3] = np.minimum(wrong[:, 3], 1 - wrong[:, 0])

    found = cube_accuracy.profile(entries, wrong)

    # Then the win chance alone is the error: replaced, the decisions are the reference's own
    replaced = found["replaced"]
    assert replaced["win"]["mp_per_decision"] == pytest.approx(replaced["all"]["mp_per_decision"])
    assert replaced["none"]["mp_per_decision"] > replaced["all"]["mp_per_decision"]
    assert replaced["gammons"]["mp_per_decision"] > replaced["all"]["mp_per_decision"]
    assert replaced["all"] == {k: cube_accuracy.model_only(entries)[k] for k in ("mp_per_decision", "by_kind")}
    assert found["difference"]["win"]["mean"] > 0.05 and found["difference"]["win gammon"]["mean_abs"] == 0
    # and the command records a profile a ply with --profile
    figures = coach(cube_accuracy, ["--plies", "0", "--profile", "--reference", str(reference)], tmp_path / "p.json")
    assert set(figures["bgai 0-ply"]["profile"]["replaced"]) == {"none", "win", "gammons", "backgammons", "all"}
    bot = cube_accuracy.load_bot()  # (with its fitted cube efficiency, as the command's rows)
    assert figures["bgai 0-ply"]["profile"]["replaced"]["none"]["mp_per_decision"] == pytest.approx(
        cube_accuracy.profile(entries, bot.probabilities(cube_accuracy.boards_and_cubes(entries)[0]), bot)[
            "replaced"]["none"]["mp_per_decision"])
    assert set(figures["bgai 0-ply"]["by_class"]) <= {"contact", "crashed", "race", "bearoff"}


def test_cube_accuracy_rolls_out_a_sample_or_at_least_the_sets_size_every_entry(tmp_path):
    reference = tiny_reference("cube_reference.json", tmp_path, 3)
    every = coach(cube_accuracy, ["--plies", "0", "--rollout", "2277", "--trials", "2", "--reference", str(reference)],
                  tmp_path / "all.json")
    assert every["positions"] == 3 and every["bgai rollout"]["decisions"] == every["bgai 0-ply"]["decisions"] >= 3
    assert every["bgai rollout"]["ms_per_position"] > 0
    sample = coach(cube_accuracy, ["--plies", "0", "--rollout", "2", "--trials", "2", "--reference", str(reference)],
                   tmp_path / "sample.json")
    assert sample["positions"] == 2 and sample["bgai rollout"]["double_decisions"] == 2


def test_cube_accuracy_in_match_play_reads_each_entrys_score(tmp_path):
    reference = tiny_reference("cube_reference_match.json", tmp_path, 40)
    figures = coach(cube_accuracy, ["--plies", "0", "--reference", str(reference)], tmp_path / "match.json")
    assert_provenance(figures, "python -m bgai.coach.cube_accuracy")
    assert figures["reference"] == "cube_reference_match.json"
    # the cube model fed gnubg's own 2-ply probabilities at each entry's score: the decisions of a match, not of a
    # money game (read as money games, the post-Crawford trailer's doubles would be missed)
    entries = json.loads(reference.read_text())["entries"]
    boards, state = cube_accuracy.boards_and_cubes(entries)
    assert state.away is not None and (state.away == [[7 - e["match"]["score"][0], 7 - e["match"]["score"][1]]
                                                      for e in entries]).all()
    money = [{k: v for k, v in e.items() if k != "match"} for e in entries]
    assert figures["Janowski on gnubg's probabilities"] == cube_accuracy.model_only(entries) != \
        cube_accuracy.model_only(money)
    with pytest.raises(SystemExit):  # the rollout cube decision is for money games
        cube_accuracy.main(["--reference", str(reference), "--rollout", "2"])


def test_strength_records_its_duels_and_provenance(tmp_path):
    figures = coach(strength, ["shipped", "--pubeval", "1", "--gnubg", "1", "--no-moves"],
                    tmp_path / "strength.json")
    assert_provenance(figures, "python -m bgai.coach.strength shipped")
    [result] = figures["results"]
    assert result["pubeval"]["games"] == result["gnubg"]["games"] == 2
    assert "checker_play" not in result and "cube" not in result


def test_ply_strength_parts_merge_into_one_run_that_records_every_command(tmp_path):
    # Given a run of 4 dice sequences played in two parts
    options = ["--plies", "0", "--opponent", "random", "--games", "2", "--chunk", "2", "--seed", "5", "--no-luck"]
    first = coach(ply_strength, [*options, "--first-sequence", "0"], tmp_path / "a.json")
    second = coach(ply_strength, [*options, "--first-sequence", "2"], tmp_path / "b.json")
    assert_provenance(first, "python -m bgai.coach.ply_strength --plies 0")
    # When they are merged (the parts given in any order)
    out = tmp_path / "merged.json"
    ply_strength.main(["--merge", str(out), str(tmp_path / "b.json"), str(tmp_path / "a.json")])
    merged = json.loads(out.read_text())
    # Then the merge records its own command and the parts' commands in order, and plays all 4 sequences
    assert_provenance(merged, f"python -m bgai.coach.ply_strength --merge {out}")
    assert merged["commands"] == [first["command"], second["command"]]
    assert merged["sequences"] == 4 and merged["points"] == first["points"] + second["points"]


def test_cube_accuracy_judged_by_rollouts_scores_the_former_judge_too_and_pairs_each_row_with_gnubg_0ply(
        tmp_path, monkeypatch):
    from bgai.coach.cube_reference import judged_by_rollouts, reference_decisions, rollout_order

    entries = json.loads(cube_accuracy.REFERENCE.read_text())["entries"]
    order = rollout_order(len(entries))[:40]

    def rollouts(shift):  # the 2-ply judge's own equities, no double moved by shift
        return {"metadata": {"trials": 1296, "settings": "fake", "gnubg_version": "none"}, "entries": [
            {"index": i, "position_id": entries[i]["position_id"], "cube": entries[i]["cube"],
             "owner": entries[i]["owner"], "no_double": entries[i]["no_double"] + shift, "no_double_se": 0.01,
             "double_take": entries[i]["double_take"], "double_take_se": 0.01} for i in order]}

    path = tmp_path / "rollouts.json"
    monkeypatch.setattr(cube_accuracy, "ROLLOUTS", path)
    # Given rollouts that agree with the 2-ply judge, the former judge loses nothing and the others what 2-ply says
    path.write_text(json.dumps(rollouts(0.0)))
    same = coach(cube_accuracy, ["--plies", "0", "--judge", "rollouts"], tmp_path / "same.json")
    assert same["positions"] == 40 and "uniform sample" in same["judge"]["what"]
    assert same["gnubg 2-ply"]["mp_per_decision"] == 0
    sample = [entries[i] for i in order]
    bgai_0ply = cube_accuracy.bgai_decisions(cube_accuracy.load_bot(plies=0, cube_plies=0), sample)[:2]
    assert same["bgai 0-ply"]["mp_per_decision"] == pytest.approx(
        1000 * decision_losses(sample, *bgai_0ply).mean())
    # Given rollouts that value no double more, each row is judged by them, and paired with gnubg 0-ply's
    path.write_text(json.dumps(rollouts(0.08)))
    moved = coach(cube_accuracy, ["--plies", "0", "--judge", "rollouts"], tmp_path / "moved.json")
    judged, _ = judged_by_rollouts(entries, rollouts(0.08))
    former = [reference_decisions(e) for e in sample]
    by_rollouts = 1000 * decision_losses(judged, *zip(*former)).mean()
    assert moved["gnubg 2-ply"]["mp_per_decision"] == pytest.approx(by_rollouts)
    assert moved["gnubg 2-ply"]["mp_per_decision"] > 0  # it doubles some that the rollouts keep
    gnubg_0ply = tuple(zip(*[reference_decisions(e["gnubg_0ply"]) for e in sample]))
    diffs = 1000 * (decision_losses(judged, *bgai_0ply) - decision_losses(judged, *gnubg_0ply))
    assert moved["bgai 0-ply"]["minus_gnubg_0ply"]["mp_per_decision"] == pytest.approx(diffs.mean())
    assert moved["bgai 0-ply"]["minus_gnubg_0ply"]["mp_se"] == pytest.approx(diffs.std(ddof=1) / np.sqrt(len(diffs)))
    assert "minus_gnubg_0ply" not in moved["gnubg 0-ply"]


def test_cube_accuracy_judged_by_rollouts_keeps_each_sampled_entry_beside_its_2ply_equities(tmp_path, monkeypatch):
    from bgai.coach.cube_reference import rollout_order

    entries = json.loads(cube_accuracy.REFERENCE.read_text())["entries"]
    order = rollout_order(len(entries))[:60]
    path = tmp_path / "rollouts.json"
    path.write_text(json.dumps({"metadata": {"trials": 1296, "settings": "fake", "gnubg_version": "none"},
                                "entries": [{"index": i, "position_id": entries[i]["position_id"],
                                             "cube": entries[i]["cube"], "owner": entries[i]["owner"],
                                             "no_double": entries[i]["no_double"] - 0.05, "no_double_se": 0.01,
                                             "double_take": entries[i]["double_take"], "double_take_se": 0.01}
                                            for i in order]}))
    by_2ply = {(e["position_id"], e["cube"], e["owner"]): reference_decisions(e) for e in entries}

    def as_2ply(bot, judged, options=None, progress=True):  # "a rollout" that decides as the 2-ply judge
        decisions = [by_2ply[e["position_id"], e["cube"], e["owner"]] for e in judged]
        return np.array([d for d, _ in decisions]), np.array([t for _, t in decisions]), 0.0

    monkeypatch.setattr(cube_accuracy, "rollout_decisions", as_2ply)
    figures = coach(cube_accuracy, ["--plies", "0", "--judge", "rollouts", "--rollouts", str(path), "--rollout",
                                    "25"], tmp_path / "sample.json")
    assert figures["positions"] == 25 and figures["judge"]["judged_entries"] == 60
    assert "a seeded sample of 25" in figures["judge"]["what"]
    assert figures["bgai rollout"]["minus_gnubg_2ply"] == {"mp_per_decision": 0.0, "mp_se": 0.0}
    assert {k: v for k, v in figures["bgai rollout"].items() if not k.startswith(("ms_", "minus_"))} \
        == {k: v for k, v in figures["gnubg 2-ply"].items() if not k.startswith("minus_")}
    assert figures["gnubg 2-ply"]["mp_per_decision"] > 0  # the 2-ply judge doubles some that the rollouts keep
    assert set(figures["judge"]["too_close_to_call"]) == {"double", "take"}
