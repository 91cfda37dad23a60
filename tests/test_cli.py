"""The command line: output for good input, one-line errors and exit status 2 for bad input."""

import json

import pytest

from bgai.cli import main


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
    assert "7 legal plays of 65:" in out
    assert "24/13" in out and "13/2" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["show", "4HPwATDgc/ABM"], "14 base64 characters"),
        (["show", "4HPwATDgc/AB!A"], "14 base64 characters"),
        (["moves", "4HPwATDgc/ABMA", "75"], "each die must be in 1..6"),
        (["moves", "4HPwATDgc/ABMA", "six"], "dice must be two digits"),
        (["duel", "pubeval", "gnu", "--games", "2"], "unknown player"),
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
