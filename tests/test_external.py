"""bgai as GNU Backgammon's external player (bgai.frontends.external): its answers, its socket server, and whole matches
that Debian's gnubg plays against it through the interface."""

import os
import re
import shutil
import socket
import subprocess
import sys
import threading

import numpy as np
import pytest

from bgai.core.cube import CENTERED, ON_ROLL
from bgai.eval.bot import load_bot
from bgai.formats.fibs import FibsBoard, to_fibs
from bgai.formats.matchfile import read_match
from bgai.formats.matchfile.record import CheckerPlay
from bgai.formats.position import Position, parse_move
from bgai.frontends.external import ExternalPlayer, serve

GNUBG = "/usr/games/gnubg"


@pytest.fixture(scope="module")
def bot():
    return load_bot()


def gnubg_line(position: Position, dice=None, **context) -> str:
    """A board as GNU Backgammon writes it for its player 1 (the player on turn is player 1: both dialects agree
    but for the last field, 0 only in the Crawford game)."""
    line = to_fibs(position, dice, **context)
    board = FibsBoard.parse(line)
    return line[: line.rindex(":")] + (":0" if board.crawford else ":1")


def test_plays_are_the_bots_and_legal(bot):
    player = ExternalPlayer(bot)
    rng = np.random.default_rng(3)
    pos = Position.start()
    for _ in range(60):
        dice = tuple(int(d) for d in rng.integers(1, 7, 2))
        answer = player.answer(gnubg_line(pos, dice))
        chosen = bot.choose_move(pos, dice)
        if not chosen.checker_steps():
            assert answer == ""
            pos = chosen.after
            continue
        move = parse_move(pos, answer, dice)
        assert move.after == chosen.after
        pos = move.after if not move.after.is_game_over() else Position.start()


def test_cube_answers_are_the_bots_decisions(bot):
    player = ExternalPlayer(bot, jacoby=True)
    rng = np.random.default_rng(5)
    pos, seen = Position.start(), set()
    for _ in range(200):
        for owner, cube in ((CENTERED, 1), (ON_ROLL, 2)):
            decision = bot.cube_decision(pos, cube, owner, jacoby=True)
            offer = player.answer(gnubg_line(pos, cube=cube, owner=owner))
            assert offer == ("double" if decision.should_double else "roll")
            answer = player.answer(gnubg_line(pos, cube=cube, owner=owner, was_doubled=True))
            assert answer == ("take" if decision.should_take else "drop")
            seen |= {offer, answer}
        moves = pos.legal_moves(tuple(int(d) for d in rng.integers(1, 7, 2)))
        pos = moves[rng.integers(len(moves))].after
        if pos.is_game_over():
            pos = Position.start()
    assert seen == {"double", "roll", "take", "drop"}


def test_match_scores_reach_the_cube(bot):
    """At 4-2 to 5 post-Crawford the trailer doubles at once (the free drop aside, a gammonless race for the match);
    in the Crawford game gnubg never asks, and the answer would be no double."""
    player = ExternalPlayer(bot)
    pos = Position.start().play("8/5 6/5", (3, 1)).after.switched()  # the opening 31, seen from its player
    trailing = gnubg_line(pos, match_length=5, score=(2, 4), post_crawford=True)
    assert FibsBoard.parse(trailing, dialect="gnubg").post_crawford
    assert player.answer(trailing) == "double"
    crawford = gnubg_line(pos, match_length=5, score=(2, 4))
    assert FibsBoard.parse(crawford, dialect="gnubg").crawford
    assert player.answer(crawford) == "roll"


def test_a_certain_loss_is_resigned_once(bot):
    # Six checkers left against one on the opponent's ace point: no roll bears six off, the opponent is off next.
    pos = Position.from_points({6: 6}, {24: 1})
    line = gnubg_line(pos, (6, 6))
    player = ExternalPlayer(bot)
    assert player.answer(line) == "resign normal"
    assert parse_move(pos, player.answer(line), (6, 6))  # declined: asked again, it plays on
    nothing_off = Position.from_points({6: 5, 5: 5, 4: 5}, {24: 1})
    assert ExternalPlayer(bot).answer(gnubg_line(nothing_off, (2, 1))) != "resign normal"  # not exact: plays


@pytest.mark.parametrize("line", [
    "", "hello", "board:" + "1:" * 60, "board:a:b:0:0:0:" + "0:" * 26 + "1:3:1:3:1:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1",
    to_fibs(Position.start(), (3, 1)).replace(":3:1:", ":9:1:", 1),
    to_fibs(Position.start(), (3, 1), match_length=99, score=(3, 4)),  # beyond the match equity table
    "board:(x):y:" + "0:" * 49 + "0",
])
def test_bad_lines_get_one_error_line(bot, line):
    answer = ExternalPlayer(bot).answer(line)
    assert re.fullmatch(r"Error \([^()\n]+\)", answer), answer


def serve_in_thread(bot, connections: int):
    ports = []
    thread = threading.Thread(target=serve, args=(bot, "127.0.0.1", 0),
                              kwargs=dict(ready=ports.append, connections=connections), daemon=True)
    thread.start()
    while not ports:
        thread.join(0.01)
    return thread, ports[0]


def read_lines(sock: socket.socket, n: int) -> list[str]:
    data = b""
    while data.count(b"\n") < n:
        chunk = sock.recv(4096)
        assert chunk, "the server closed the connection"
        data += chunk
    return data.decode().split("\n")[:n]


def test_the_server_answers_line_by_line_and_survives_bad_input(bot):
    thread, port = serve_in_thread(bot, connections=2)
    first = to_fibs(Position.start(), (3, 1)) + "\n\0"  # gnubg writes each line with a NUL after it
    second = to_fibs(Position.start()) + "\n\0"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall((first + second[:40]).encode())
        sock.sendall((second[40:] + "nonsense\n").encode() + b"\xff\xfe\n" + b"x" * 5000)
        answers = read_lines(sock, 5)
    assert answers[0] == "8/5 6/5" and answers[1] == "roll"
    assert all(a.startswith("Error (") for a in answers[2:])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:  # the next connection is served
        sock.sendall(first.encode())
        assert read_lines(sock, 1) == ["8/5 6/5"]
    thread.join(30)
    assert not thread.is_alive()


# Whole matches inside GNU Backgammon ------------------------------------------------------------------------------

needs_gnubg = pytest.mark.skipif(not os.path.exists(GNUBG), reason="needs Debian's gnubg (make system-deps)")


def gnubg_commands(seat: int, port: int, out: str, *, length: int, games: int = 1, seed: int) -> list[str]:
    other = 1 - seat
    lines = [f"set seed {seed}", "set threads 1", "set jacoby on", f"set player {seat} external 127.0.0.1:{port}",
             f"set player {other} gnubg", f"set player {other} chequerplay evaluation plies 0",
             f"set player {other} cubedecision evaluation plies 0"]
    if length:
        lines.append(f"new match {length}")
    else:
        lines += ["set automatic game off", "new session"] + ["new game"] * (games - 1)
    # Names after the play ("new match" resets them), so that the record says who was who.
    return lines + [f"set player {seat} name bgai", f"set player {other} name gnubg", f"export match mat {out}",
                    "quit", "y"]


def bgai_decisions(log: str) -> list[tuple[str, str]]:
    """(board, answer) pairs from ``bgai external --verbose``'s log."""
    lines = log.splitlines()
    return [(a[2:], b[2:]) for a, b in zip(lines, lines[1:]) if a.startswith("< ") and b.startswith("> ")]


@needs_gnubg
@pytest.mark.slow
def test_gnubg_plays_whole_matches_against_bgai_external(tmp_path):
    bgai = [sys.executable, "-m", "bgai.frontends.cli"] if not shutil.which("bgai") else [shutil.which("bgai")]
    server = subprocess.Popen([*bgai, "external", "--port", "0", "--verbose"], stderr=subprocess.PIPE, text=True)
    try:
        banner = server.stderr.readline()
        port = int(re.search(r"listening on 127\.0\.0\.1:(\d+)", banner)[1])
        log = []
        reader = threading.Thread(target=lambda: log.extend(server.stderr), daemon=True)
        reader.start()
        runs = [(0, dict(length=3, seed=7)), (1, dict(length=0, games=4, seed=2))]
        for i, (seat, options) in enumerate(runs):
            out = str(tmp_path / f"run{i}.mat")
            done = subprocess.run([GNUBG, "-t", "-q"], input="\n".join(gnubg_commands(seat, port, out, **options)),
                                  capture_output=True, text=True, timeout=600)
            text = done.stdout + done.stderr
            for bad in ("Error (", "Warning", "Unable", "badly formed", "illegal", "External connection closed"):
                assert bad not in text, text[-3000:]
            if options["length"]:
                assert "has won the match" in text
            record = read_match(out)  # bgai reads gnubg's record of the match: every play in it legal
            assert len(record.games) >= (1 if options["length"] else options["games"])
            assert record.games[-1].result is not None
            runs[i] = (seat, record)
    finally:
        server.terminate()
        server.wait(30)
    reader.join(10)
    decisions = bgai_decisions("".join(log))
    # Every play bgai answered is the one gnubg recorded for bgai's seat, from the board gnubg sent.
    answered = [(FibsBoard.parse(board, "gnubg"), answer) for board, answer in decisions
                if FibsBoard.parse(board, "gnubg").dice and not answer.startswith(("Error", "resign"))]
    recorded = [(state, action) for seat, record in runs for game in record.games for state, action in game.steps()
                if isinstance(action, CheckerPlay) and action.player == seat]
    assert len(answered) == len(recorded) > 50
    for (board, answer), (state, action) in zip(answered, recorded):
        assert Position(board.board) == state.position and sorted(board.dice) == sorted(action.dice)
        assert parse_move(Position(board.board), answer, board.dice).after == action.move.after
    cube = {answer for _, answer in decisions if answer in ("roll", "double", "take", "drop")}
    assert {"roll", "double"} <= cube and cube & {"take", "drop"}

    analysed = subprocess.run([*bgai, "analyse", str(tmp_path / "run0.mat"), "--quiet"], capture_output=True,
                              text=True, timeout=300)
    assert analysed.returncode == 0, analysed.stderr
    assert analysed.stdout.startswith("bgai v gnubg: 3-point match, ")
    assert "Analysed by bgai" in analysed.stdout


def test_the_command_refuses_bad_settings_in_one_line(capsys):
    from bgai.frontends.cli import main

    assert main(["external", "--plies", "7"]) == 2
    assert "plies must be an integer 0..2" in capsys.readouterr().err
    with socket.create_server(("127.0.0.1", 0)) as taken:
        assert main(["external", "--port", str(taken.getsockname()[1])]) == 2
        err = capsys.readouterr().err
        assert "cannot listen on 127.0.0.1:" in err and "in use" in err
