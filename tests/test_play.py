"""``bgai play``: the terminal game, driven by scripted input. Every prompt gets bad input too: each bad line gets a
one-line explanation and the same prompt again, never a crash."""

from __future__ import annotations

import io

import pytest

from bgai import Position, load_bot
from bgai.formats.xgid import format_xgid
from bgai.frontends.cli import main
from bgai.frontends.terminal import Terminal
from bgai.play.session import BOT, Phase, Session

DOUBLE_TAKE = Position.from_points({6: 4, 5: 4, 4: 4, 3: 3}, {18: 2, 19: 3, 20: 4, 21: 4, 22: 2})
# The same for a 3-point match at 0-0 (69 pips against 74).
MATCH_DOUBLE_TAKE = Position.from_points({6: 4, 5: 4, 4: 4, 3: 3}, {17: 1, 19: 4, 20: 4, 21: 4, 22: 2})
# The person bears off its last checkers against fifteen in the bot's outfield (a gammon whatever it rolls).
WINNING = Position.from_points({1: 2}, {7: 4, 8: 4, 10: 4, 12: 3})


@pytest.fixture(scope="module")
def bot():
    return load_bot()


class Script:
    """Input for the terminal: the given lines first, then (if ``agent``) lines chosen from the session's state
    the way a person types them; ``EOFError`` at the end. Keeps every prompt it was shown."""

    def __init__(self, lines=(), session: Session | None = None, limit: int = 3000) -> None:
        self.lines = list(lines)
        self.session = session
        self.prompts: list[str] = []
        self.limit = limit

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if len(self.prompts) > self.limit:
            raise AssertionError("the script ran too long")
        if self.lines:
            return self.lines.pop(0)
        s = self.session
        if s is None or s.phase is Phase.GAME_OVER:
            raise EOFError
        if s.phase is Phase.MOVE:
            return str(s.partial.legal[0])  # the first legal play, typed in standard notation
        return {Phase.ROLL: "roll", Phase.TAKE: "take"}[s.phase]


def run_terminal(session: Session, script: Script, tmp_path=None) -> str:
    out = io.StringIO()
    save = None if tmp_path is None else tmp_path / "game.mat"
    assert Terminal(session, script, out, save_path=save).run() == 0
    return out.getvalue()


def xgid(pos: Position, human_on_roll: bool = True, **fields) -> str:
    board = pos.board if human_on_roll else pos.switched().board
    return format_xgid(board, x_on_roll=human_on_roll, **fields)


def test_a_whole_game_is_played_to_the_end_in_the_terminal(bot):
    """Given a seeded money session, When the person types a legal play at every turn and rolls,
    Then the game reaches its end, the terminal says who won, and every bot play was shown."""
    session = Session(bot, seed=5)
    script = Script(session=session)
    out = run_terminal(session, script)
    assert session.phase is Phase.GAME_OVER
    winner = session.names[session.game.winner]
    assert f"{winner} won game 1" in out
    bot_moves = [a for a in session.game.actions if a.player == BOT and a.kind == "move"]
    assert all(a.describe(session.names) in out for a in bot_moves)
    assert "Game over" in script.prompts[-1]


def test_a_match_with_a_cube_action_in_the_terminal(bot):
    """Given a 3-point match set up in a double/take race, When the person doubles, gets hints and plays on,
    Then bgai takes and owns the cube at 2, and the match goes on game after game to its end."""
    session = Session(bot, match_length=3, seed=2)
    session.setup(xgid(MATCH_DOUBLE_TAKE, length=3))
    script = Script(["cube", "double", "hint 3", "pips", "id"], session=session)

    def read(prompt):
        return "next" if session.phase is Phase.GAME_OVER else script(prompt)

    out = io.StringIO()
    Terminal(session, read, out).run()
    text = out.getvalue()
    assert "Proper cube action: Double, take" in text
    assert "You double to 2." in text and "bgai takes." in text
    assert "Cube 2, owned by bgai" in text
    assert "Your plays of" in text and "Pips: You" in text and "XGID=" in text
    assert session.phase is Phase.MATCH_OVER and "won the 3-point match" in text.splitlines()[-1]
    assert len(session.games) > 1 and "--- Game 2 ---" in text


def test_bad_input_at_every_prompt_gets_one_line_and_the_prompt_again(bot):
    """Given each prompt in turn (roll or double, the play, take or pass, game over),
    When the person types nonsense, out-of-turn commands and illegal plays,
    Then each bad line gets exactly one line of explanation, the same prompt comes back, and nothing changes."""
    ended = Session(bot, seed=1)
    ended.setup(xgid(WINNING, dice=(2, 1)))
    ended.play("1/off(2)")
    cases = [
        # roll or double: the person on roll in a double/take race
        (xgid(DOUBLE_TAKE), ["13/7", "take", "pass", "undo", "resign maybe", "fly", "next", "bar/20"]),
        # the play: the opening 6-5
        (xgid(Position.start(), dice=(6, 5)), ["24/12", "13/7*", "bar/20", "6/0 6/0", "25/", "double", "take",
                                               "cube", "undo", "next", "roll", "24/13 13/2 6/1", "13/7 13/", "x"]),
        # take or pass: bgai has doubled
        (xgid(DOUBLE_TAKE, human_on_roll=False), ["roll", "double", "8/2", "undo", "resign", "next", "x", ""]),
        # game over
        (None, ["roll", "13/7", "take", "hint", "cube", "resign", "double", "undo"]),
    ]
    for position, bad in cases:
        session = ended
        if position is not None:
            session = Session(bot, seed=1)
            session.setup(position)
        before = session.xgid()
        quiet = run_terminal(session, Script([]))  # what the terminal shows with no input at all
        script = Script(bad)
        out = run_terminal(session, script)
        extra = out.splitlines()[len(quiet.splitlines()) - 1:-1]
        assert len(script.prompts) == len(bad) + 1, out  # every bad line, then the end of input
        assert len(set(script.prompts)) == 1, script.prompts  # the same prompt each time
        assert session.xgid() == before  # nothing changed
        explained = [line for line in extra if line.startswith("  ")]
        assert len(explained) == len([line for line in bad if line]) == len(extra), extra


def test_a_play_typed_in_parts_can_be_undone(bot):
    session = Session(bot, seed=1)
    session.setup(xgid(Position.start(), dice=(3, 1)))
    script = Script(["8/5", "undo", "6/5", "8/5"])
    out = run_terminal(session, script)
    assert script.prompts[1] == "Your play with 31 [8/5] > " and script.prompts[2] == "Your play with 31 > "
    assert session.game.actions[0].play == "8/5 6/5" and "Played so far: 6/5." in out


def test_resigning_in_the_terminal(bot):
    session = Session(bot, seed=1)
    session.setup(xgid(WINNING.switched(), human_on_roll=True, cube=2, owner=-1))
    out = run_terminal(session, Script(["resign", "resign backgammon"]))
    assert "bgai rejects: play on." in out and "bgai accepts the resignation." in out
    assert session.score == [0, 6]


def test_bgai_play_through_the_command_line(monkeypatch, capsys):
    """``bgai play`` reads standard input: here a resignation accepted at once, then the end of input."""
    monkeypatch.setattr("sys.stdin", io.StringIO("help\nbackgammon\nresign backgammon\n"))
    hopeless = xgid(WINNING.switched(), cube=2, owner=-1)
    assert main(["play", "--seed", "3", "--no-save", "--position", hopeless]) == 0
    out = capsys.readouterr().out
    assert "Commands" in out and "cannot read 'backgammon'" in out and "bgai wins 6 points" in out


@pytest.mark.parametrize("argv, message", [
    (["play", "--plies", "4"], "plies must be"),
    (["play", "--match", "0"], "--match must be at least 1"),
    (["play", "--match", "5", "--jacoby"], "Jacoby rule is for money"),
    (["play", "--position", "nonsense"], "14 base64 characters"),
])
def test_bad_play_options_are_one_line_and_exit_status_2(capsys, argv, message):
    assert main(argv + ["--no-save"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_the_match_is_saved_as_a_mat_file_on_exit_and_on_request(bot, tmp_path):
    """Given a seeded session played to the end of a game, When the person saves and then quits,
    Then both files hold the game as .mat, which bgai.formats.matchfile reads back to the same result."""
    from bgai.formats.matchfile import read_mat

    session = Session(bot, seed=5)
    asked = tmp_path / "asked.mat"
    script = Script(session=session)

    def read(prompt):
        return f"save {asked}" if session.phase is Phase.GAME_OVER and not asked.exists() else script(prompt)

    out = run_terminal(session, read, tmp_path)
    assert f"Saved the match to {asked}." in out and f"Saved the match to {tmp_path / 'game.mat'}." in out
    for path in (asked, tmp_path / "game.mat"):
        record = read_mat(path)
        assert (record.games[0].result.player, record.games[0].result.points) == (session.game.winner,
                                                                                   session.game.points)


def test_bgai_play_saves_where_it_is_told(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr("sys.stdin", io.StringIO("resign backgammon\n"))
    path = tmp_path / "m.mat"
    assert main(["play", "--seed", "3", "--match", "5", "--save", str(path)]) == 0
    assert path.read_text().startswith('; [Seed "3"]') and " 5 point match" in path.read_text()


def test_bgai_play_saves_in_the_games_folder_not_the_current_one(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr("sys.stdin", io.StringIO("resign backgammon\n"))
    monkeypatch.setenv("BGAI_GAMES_DIR", str(tmp_path / "games"))
    monkeypatch.chdir(tmp_path)
    assert main(["play", "--seed", "3", "--match", "3"]) == 0
    saved = list((tmp_path / "games").glob("bgai-*.mat"))
    assert len(saved) == 1 and " 3 point match" in saved[0].read_text()
    assert not list(tmp_path.glob("*.mat"))
    monkeypatch.delenv("BGAI_GAMES_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    from bgai.core.files import games_dir

    assert games_dir() == tmp_path / "data" / "bgai" / "games"


def test_quitting_before_playing_writes_no_match_file(bot, tmp_path):
    session = Session(bot, seed=5)  # the person has the opening roll
    out = run_terminal(session, Script(["quit"], session=session), tmp_path)
    assert "Nothing played: no match file written." in out and not (tmp_path / "game.mat").exists()


@pytest.mark.parametrize("plies", [0, 1])
def test_the_terminal_fits_80_columns_and_says_who_leads_the_race(plies):
    """A whole 5-point match game with every informative command: no line of the board, the prompts, the hints
    (of every play: hint 30), the cube hint, the pips or the help is wider than 80 columns."""
    from bgai import load_bot

    session = Session(load_bot(plies=plies), seed=5, match_length=5)
    out = run_terminal(session, Script(["hint 30", "pips", "id", "cube", "help", "hint"], session=session,
                                       limit=400))
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "Pips: You 167, bgai 167: even" in out
    from bgai.frontends.terminal import pips_line

    ahead = Session(load_bot(), seed=1)
    ahead.setup(xgid(DOUBLE_TAKE))  # the person 69 pips, bgai 74
    assert pips_line(ahead) == "Pips: You 69, bgai 74: You lead by 5"
    ahead.setup(xgid(DOUBLE_TAKE, human_on_roll=False))
    assert pips_line(ahead) == "Pips: You 74, bgai 69: bgai leads by 5"


@pytest.mark.parametrize("plies", [0, 1])
def test_the_terminals_hint_is_in_the_order_of_what_it_shows(plies):
    """Given the opening 64 to play (14 plays; at 1-ply move filtering keeps 5 to 1-ply), When the person asks for
    all of them, Then the hint has its column headings under a legend of two lines that says the unit once, ranks
    the plays by the cubeful equity of its first column (every play's at the bot's ply), and gives each play's
    Diff from the first row's cubeful equity, a number on the screen; each play's cubeless equity is at its Ply."""
    import re

    session = Session(load_bot(plies=plies), seed=1)
    session.setup(xgid(Position.start(), dice=(6, 4)))
    out = run_terminal(session, Script(["hint 14", "quit"], session=session))
    hint = out[out.index("Your plays of 64"):]
    lines = hint.splitlines()
    assert re.match(r"^   #  Play +Cubeful +Diff +Cubeless +Ply +Win +Gam +Bg +LGam +LBg$", lines[2]), lines[:3]
    legend = " ".join(line.strip() for line in lines[:2])
    assert "bgai:bgai-fast" in legend and "units of the stake" in legend and "@" not in hint
    rows = re.findall(r"^ +\d+\. (.+?) +([+-]\d\.\d{3}) +([+-]\d\.\d{3})? +([+-]\d\.\d{3}) +(\d) ", hint, re.M)
    hints = session.play_hints(14)
    assert [play for play, *_ in rows] == [str(h.ranked.move) for h in hints] and len(rows) == 14
    cubeful = [float(c) for _, c, *_ in rows]
    assert cubeful == sorted(cubeful, reverse=True) and rows[0][2] == ""
    for _, c, diff, *_ in rows[1:]:
        assert float(diff) == pytest.approx(float(c) - cubeful[0], abs=1.5e-3)
    assert {int(ply) for *_, ply in rows} == ({0, 1} if plies else {0})
    by_play = {str(h.ranked.move): h for h in hints}
    assert all(float(cubeless) == pytest.approx(by_play[play].ranked.equity, abs=6e-4)
               and int(ply) == by_play[play].ranked.plies for play, _, _, cubeless, ply in rows)


def test_the_terminals_tutor_warns_before_a_bad_play_and_asks_whether_to_make_it(bot):
    import argparse

    from bgai.frontends.cli.play import add_play
    from bgai.play.session import TUTOR_THRESHOLD

    # Given the opening 31 with the tutor on (bgai play --tutor: the analysis's doubtful threshold)
    commands = argparse.ArgumentParser().add_subparsers()
    add_play(commands)
    assert commands.choices["play"].parse_args(["--tutor"]).tutor == TUTOR_THRESHOLD
    session = Session(bot, seed=1, tutor=TUTOR_THRESHOLD)
    session.setup(xgid(Position.start(), dice=(3, 1)))
    # When the person types a bad play, declines to make it, then makes it after a second warning
    out = run_terminal(session, Script(["24/21 24/23", "n", "24/21 24/23", "y", "quit"], session=session))
    # Then the tutor named the error and the best play twice, the first time took it back, the second made it
    assert out.count("The tutor: 24/23 24/21 loses") == 2 and "8/5 6/5 is best" in out
    assert "Taken back: choose again." in out
    assert session.game.actions[0].play == "24/23 24/21"
    # and the tutor can be switched off from the terminal
    quiet = Session(bot, seed=1, tutor=TUTOR_THRESHOLD)
    quiet.setup(xgid(Position.start(), dice=(3, 1)))
    out = run_terminal(quiet, Script(["tutor off", "24/21 24/23", "quit"], session=quiet))
    assert "The tutor is off." in out and "The tutor:" not in out and quiet.game.actions[0].play == "24/23 24/21"


def test_the_terminal_colours_the_checkers_on_a_terminal_and_nowhere_else(bot):
    from bgai.frontends.terminal import COLOURS

    session = Session(bot, seed=5)
    plain = run_terminal(session, Script(["quit"], session=session))
    assert "\x1b[" not in plain  # not a terminal (and NO_COLOR, TERM=dumb the same): plain text
    out = io.StringIO()
    Terminal(Session(bot, seed=5), Script(["quit"]), out, colour=True).run()
    board = [line for line in out.getvalue().splitlines() if line.startswith("|")]
    assert board and all("X" not in line.replace(COLOURS["X"], "") for line in board)
    assert any(COLOURS["X"] in line for line in board) and any(COLOURS["O"] in line for line in board)
    assert "\x1b[" not in out.getvalue().split("\n", 1)[0]  # the words around the board stay plain


def test_a_person_plays_bgai_play_with_the_tutor_on_through_a_pseudo_terminal(tmp_path):
    """bgai play --tutor as a person runs it: a real process on a pseudo-terminal (so the board is in colour), read
    screen by screen and typed into. Given the opening 31, a bad play is warned of and taken back, the best play
    made, and quitting saves the match (the game from a set-up position left out of the .mat, as it says)."""
    import os
    import pty
    import select
    import subprocess
    import sys
    import time

    position = xgid(Position.start(), dice=(3, 1))
    save = tmp_path / "game.mat"
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "bgai.frontends.cli", "play", "--tutor", "--plies", "0",
                                "--seed", "1", "--position", position, "--save", str(save)],
                               stdin=follower, stdout=follower, stderr=follower, close_fds=True,
                               env={**os.environ, "TERM": "xterm", "NO_COLOR": ""})
    os.close(follower)
    screen = ""

    def read_until(text: str, timeout: float = 60) -> str:
        nonlocal screen
        deadline = time.monotonic() + timeout
        while text not in screen:
            left = deadline - time.monotonic()
            assert left > 0, f"never saw {text!r}; the screen:\n{screen[-2000:]}"
            ready, _, _ = select.select([leader], [], [], left)
            if ready:
                try:
                    screen += os.read(leader, 65536).decode("utf-8", "replace")
                except OSError:  # the process is gone
                    break
        return screen

    try:
        read_until("Your play with 31")
        assert "\x1b[1;33mX\x1b[0m" in screen  # the checkers in colour on a terminal
        os.write(leader, b"24/21 24/23\n")
        read_until("Make it anyway? (y/n) >")
        assert "The tutor: 24/23 24/21 loses" in screen and "8/5 6/5 is best" in screen
        os.write(leader, b"n\n")
        read_until("Taken back: choose again.")
        os.write(leader, b"8/5 6/5\n")
        read_until("Roll or double")  # the bot has played; the person's turn to roll
        os.write(leader, b"quit\n")
        read_until("Saved the match to")
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    assert "from a set-up position left out" in screen and save.read_text().startswith('; [Seed "1"]')
