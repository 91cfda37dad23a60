"""The command line: output for good input, one-line errors and exit status 2 for bad input."""

import json
import re
from pathlib import Path

import pytest

from bgai.frontends.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_show_draws_the_board_and_its_ids(capsys):
    assert main(["show", "4HPwATDgc/ABMA"]) == 0
    out = capsys.readouterr().out
    assert "Position ID: 4HPwATDgc/ABMA" in out
    assert "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10" in out
    assert "pips 167" in out


def test_show_accepts_an_xgid(capsys):
    assert main(["show", "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"]) == 0
    assert "Position ID: 4HPwATDgc/ABMA" in capsys.readouterr().out


def test_moves_lists_every_legal_play(capsys):
    assert main(["moves", "4HPwATDgc/ABMA", "6-5"]) == 0
    out = capsys.readouterr().out
    assert "7 legal plays of 65, the farthest checker first:" in out
    plays = re.findall(r"^ +\d+\. (.+)$", out, re.M)
    # in reading order: the plays that move a back checker first, and among them the farthest journey first
    assert plays == ["24/18 13/8", "24/18 8/3", "24/13", "13/8 13/7", "13/7 8/3", "13/2", "8/3 8/2"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["show", "4HPwATDgc/ABM"], "14 base64 characters"),
        (["show", "4HPwATDgc/AB!A"], "14 base64 characters"),
        (["moves", "4HPwATDgc/ABMA", "75"], "each die must be in 1..6"),
        (["moves", "4HPwATDgc/ABMA", "six"], "dice must be two digits"),
        (["duel", "pubeval", "gnu", "--games", "2"], "unknown player"),
        (["eval", "4HPwATDgc/ABMA", "--cube", "3"], "cube values must be"),
        (["eval", "4HPwATDgc/ABMA", "--owner", "nobody"], "cube owner"),
        (["eval", "4HPwATDgc/ABMA", "--match", "5", "--score", "4-7"], "scores must be 0..4"),
        (["eval", "4HPwATDgc/ABMA", "--score", "1-2"], "--score needs --match"),
        (["eval", "4HPwATDgc/ABMA", "--plies", "5"], "plies must be"),
        (["eval", "4HPwATDgc/ABMA", "--cube-plies", "-1"], "cube_plies must be"),
        (["eval", "4HPwATDgc/ABMA", "--cube-plies", "2", "--rollout"], "leave out one of them"),
        (["eval", "4HPwATDgc/ABMA", "--jacoby", "--match", "5"], "money-game options"),
        (["hint", "4HPwATDgc/ABMA", "77"], "each die must be in 1..6"),
        (["hint", "4HPwATDgc/ABMZ", "31"], "too many checkers"),
    ],
)
def test_bad_input_is_one_line_and_exit_status_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_duel_prints_a_summary_and_a_json_line(capsys):
    assert main(["duel", "pubeval", "random", "--games", "20", "--quiet"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    figures = json.loads(last)
    assert figures["games"] == 40 and figures["ppg"] > 0


def test_bench_plays_the_shipped_bot_against_an_opponent(capsys):
    assert main(["bench", "--opponent", "random", "--games", "10", "--quiet"]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["games"] == 20 and figures["opponent"] == "random" and figures["ppg"] > 0


def test_bench_plays_two_networks_head_to_head(capsys):
    # The same network on both sides of duplicate games: every dice sequence is played from both seats, so the
    # points cancel exactly.
    td = str(ROOT / "checkpoints" / "td-v1" / "checkpoint.pt")
    assert main(["bench", "--checkpoint", td, "--opponent", td, "--games", "6", "--quiet"]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["games"] == 12 and figures["opponent"] == td and figures["ppg"] == 0


def test_bench_luck_adjusted_results_and_their_refusal_with_the_cube(capsys):
    # The same network on both sides: every game's points and luck cancel with its seat-swapped twin.
    td = str(ROOT / "checkpoints" / "td-v1" / "checkpoint.pt")
    assert main(["bench", "--checkpoint", td, "--opponent", td, "--games", "4", "--luck", "--quiet"]) == 0
    out = capsys.readouterr().out
    figures = json.loads(out.strip().splitlines()[-1])
    assert "luck-adjusted" in out and figures["ppg"] == 0 and abs(figures["ppg_luck_adjusted"]) < 1e-9
    # and the standard errors, paired by dice sequence, are exactly zero
    assert figures["ppg_se"] == figures["ppg_luck_adjusted_se"] == 0
    assert main(["bench", "--cube", "--luck", "--games", "2", "--quiet"]) == 2
    assert "--luck is for cubeless games" in capsys.readouterr().err


def test_bench_with_a_corrupt_checkpoint_is_a_one_line_error(tmp_path, capsys):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"\x00" * 64)
    assert main(["bench", "--checkpoint", str(bad), "--games", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "not a readable bgai checkpoint" in err and err.count("\n") == 1


def test_train_smoke_run_and_refusal_to_overwrite(tmp_path, capsys):
    argv = ["train", "--games", "32", "--parallel-games", "32", "--hidden", "8", "--bench-every", "1000000",
            "--bench-games", "2", "--final-bench-games", "2", "--threads", "1", "--run-dir", str(tmp_path), "--quiet"]
    assert main([*argv, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["games"] == 32 and (tmp_path / "checkpoint.pt").is_file()
    assert json.loads((tmp_path / "summary.json").read_text())["games"] == 32
    assert main(argv) == 2
    assert "--resume" in capsys.readouterr().err


def test_a_finished_training_run_says_where_it_is_and_what_to_do_next(tmp_path, capsys):
    argv = ["train", "--games", "16", "--parallel-games", "16", "--hidden", "8", "--bench-every", "1000000",
            "--bench-games", "2", "--final-bench-games", "2", "--threads", "1", "--run-dir", str(tmp_path), "--quiet"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "± " in out and f"the run is in {tmp_path}/" in out
    assert f"tensorboard --logdir {tmp_path}/tensorboard" in out
    assert f"bgai play --checkpoint {tmp_path}/checkpoint.pt" in out
    assert not out.strip().splitlines()[-1].startswith("{")  # the JSON is for --json


def test_gnubg_opponent_missing_is_a_clear_error(monkeypatch, capsys):
    import builtins

    real_import = builtins.__import__

    def no_gnubg(name, *args, **kwargs):
        if name == "gnubg_nn":
            raise ImportError("no gnubg_nn")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_gnubg)
    assert main(["bench", "--opponent", "gnubg", "--games", "2", "--quiet"]) == 2
    assert "pip install 'bgai[gnubg]'" in capsys.readouterr().err


def test_eval_prints_probabilities_and_the_cube_action(capsys):
    assert main(["eval", "4HPwATDgc/ABMA"]) == 0
    out = capsys.readouterr().out
    assert "win " in out and "money game, centered cube" in out
    assert "Proper cube action: No double, take" in out  # the opening position is nowhere near a double
    # the default 2-ply bot decides its cube 2 plies deep and says so; --cube-plies 1 asks for another ply's
    assert "2-ply, player on roll's view" in out
    assert "centered cube; the bot at 2-ply)" in out
    assert re.search(r"^  cube efficiency +0\.\d\d \(fitted to the bot's own rollouts\)$", out, re.M)  # its model
    assert main(["eval", "m1kJZAjvAQAAAQ", "--cube-plies", "1"]) == 0
    one = capsys.readouterr().out
    assert main(["eval", "m1kJZAjvAQAAAQ"]) == 0
    two = capsys.readouterr().out
    cube_lines = lambda out: out[out.index("Cube decision"):]  # noqa: E731
    assert "; the bot at 1-ply)" in one and "; the bot at 2-ply)" in two
    assert cube_lines(one) != cube_lines(two)


def test_eval_takes_cube_and_score_from_an_xgid_and_flags(capsys):
    # O owns a 4-cube, X on roll, 3-5 in a 7-point match (X needs 4, O needs 2).
    assert main(["eval", "XGID=-b----E-C---eE---c-e----B-:2:-1:1:00:3:5:0:7:10"]) == 0
    out = capsys.readouterr().out
    assert "3-5 in a 7-point match, cube 4 owned by the opponent" in out
    assert "No double: the opponent owns the cube" in out
    assert main(["eval", "4HPwATDgc/ABMA", "--match", "7", "--score", "6-2"]) == 0
    assert "No double: Crawford game" in capsys.readouterr().out


def _hint_rows(out: str) -> list[tuple[str, int, float, float | str | None]]:
    """(play, ply, equity, diff) of each row of ``bgai hint``'s table (diff None on the first row, "—" where not
    compared)."""
    rows = []
    for line in out.splitlines():
        match = re.match(r"\s*\d+\. (.+?)\s+(\d)\s+([+-]\d\.\d{3})(?:\s+([+-]\d\.\d{3}|—))?$", line)
        if match:
            play, ply, value, diff = match.groups()
            rows.append((play, int(ply), float(value), diff if diff in (None, "—") else float(diff)))
    return rows


def test_hint_ranks_the_plays_best_first(capsys):
    """At 0-ply every play is judged at the same ply: the header names the network once and says nothing of move
    filtering, the table has its column headings, and each difference is from the first play, on screen."""
    assert main(["hint", "4HPwATDgc/ABMA", "31", "--top", "16", "--plies", "0"]) == 0
    out = capsys.readouterr().out
    assert "16 legal plays of 31 by bgai:bgai-fast: the mover's cubeless equity at each play's Ply" in out
    assert "filter" not in out.lower() and "@" not in out and out.count("bgai:") == 1
    assert re.search(r"^   #  Play +Ply +Equity +Diff$", out, re.M)
    rows = _hint_rows(out)
    values = [value for _, _, value, _ in rows]
    assert len(rows) == 16 and values == sorted(values, reverse=True) and {ply for _, ply, _, _ in rows} == {0}
    assert rows[0][0] == "8/5 6/5"  # the 3-1 opening: make the 5-point
    assert all(diff == pytest.approx(value - values[0], abs=2e-3) for _, _, value, diff in rows[1:])


def test_hint_compares_a_play_only_with_a_number_on_screen_of_its_own_ply(capsys):
    """Given 64 from the opening at 1-ply (move filtering keeps 5 of its 14 plays to 1-ply), Then every row says its
    ply, the plays kept come first, each in the order of its equity, the header says that filtering happened and
    names one network, and a play kept to 1-ply shows its difference from the first row's equity, a play left at
    0-ply none (—): the first play's 0-ply equity is not on the screen."""
    assert main(["hint", "4HPwATDgc/ABMA", "64", "--plies", "1", "--top", "20"]) == 0
    out = capsys.readouterr().out
    rows = _hint_rows(out)
    plies = [ply for _, ply, _, _ in rows]
    assert len(rows) == 14 and plies[0] == 1 and plies == sorted(plies, reverse=True) and 0 in plies
    assert "by bgai:bgai-fast" in out and out.count("bgai:") == 1
    assert "Move filtering kept 5 to 1-ply" in out
    for ply in (0, 1):
        values = [value for _, p, value, _ in rows if p == ply]
        assert values == sorted(values, reverse=True)
    for play, ply, value, diff in rows[1:]:
        assert diff == "—" if ply == 0 else diff == pytest.approx(value - rows[0][2], abs=2e-3), play


def test_version(capsys):
    from bgai import __version__

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"bgai {__version__}"


def test_output_cut_short_by_its_reader_stops_quietly():
    """``bgai hint ... | head -1``: the reader has closed the pipe; bgai stops with 141 (128 + SIGPIPE), no
    traceback."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader is gone before bgai writes a byte: its first write fails
    try:
        run = subprocess.run([sys.executable, "-m", "bgai.frontends.cli", "hint", "4HPwATDgc/ABMA", "64"], stdout=write,
                             stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write)
    assert run.returncode == 141, run.stderr
    assert "Traceback" not in run.stderr and "Broken pipe" not in run.stderr


def test_under_ci_a_skipped_test_fails(pytester, monkeypatch):
    # tests/conftest.py's rule: CI (.ci/run sets CI=true) must not stay green with a check that never ran
    from pathlib import Path

    pytester.makeconftest(Path(__file__).with_name("conftest.py").read_text())
    pytester.makepyfile(test_oracle="import pytest\n\n\ndef test_needs_it():\n"
                                    "    pytest.importorskip('no_such_oracle')\n")
    monkeypatch.delenv("CI", raising=False)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(skipped=1)
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*skipped under CI=true*no_such_oracle*"])


def test_hint_takes_the_roll_an_xgid_carries_and_asks_for_dice_where_there_is_none(capsys):
    # Given the start as eXtreme Gammon copies it after a roll of 31 (its dice field: 31)
    carried = "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10"
    assert main(["hint", carried, "--plies", "0", "--top", "3"]) == 0
    with_roll = capsys.readouterr().out
    # Then the hint is the one for 31, as if the dice were given
    assert main(["hint", carried, "31", "--plies", "0", "--top", "3"]) == 0
    assert capsys.readouterr().out == with_roll and "legal plays of 31" in with_roll
    # and a position with no roll (a Position ID, or an XGID before the roll) needs DICE, and says so
    for position in ("4HPwATDgc/ABMA", carried.replace(":31:", ":00:")):
        assert main(["hint", position]) == 2
        assert "give the DICE" in capsys.readouterr().err


def test_eval_by_rollout_shows_the_rollouts_own_chances_and_equities_with_their_errors(capsys, monkeypatch):
    monkeypatch.setattr("bgai.eval.bot.CUBE_ROLLOUT", {"trials": 36, "truncate": 3, "plies": 0, "jobs": 1})
    assert main(["eval", "4HPwATDgc/ABMA", "--rollout"]) == 0
    out = capsys.readouterr().out
    # the rollout's chances and cubeless equity, each with its standard error, and its trials; not the network's
    assert "36 trials" in out and re.search(r"^  ± SE ", out, re.M) and "evaluated by" not in out
    rolled = float(re.search(r"^  cubeless equity +([+-]\d\.\d{3}) ± \d\.\d{3}", out, re.M)[1])
    # the cube block's equities are the rollout's, no double and double/take with theirs
    block = out[out.index("Cube decision"):]
    assert "a cubeful rollout, 36 trials" in block and float(block.split()[block.split().index("equity") + 1]) == rolled
    assert re.search(r"^  No double +[+-]\d\.\d{3} ± \d\.\d{3}", block, re.M)
    assert re.search(r"^  Double, take +[+-]\d\.\d{3} ± \d\.\d{3}", block, re.M)
    assert "Proper cube action: No double, take" in block
