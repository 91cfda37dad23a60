"""bgai as a UBGI engine (bgai.frontends.ubgi), driven as a GUI or a dueller drives it: line in, lines out.

Most tests talk to ``Engine`` in-process; one runs ``bgai ubgi`` as a real subprocess over pipes. The bot's answers
are checked against the library's own (``Bot.choose_move``, ``Bot.cube_decision``) and against the rules (every
``bestmove`` replayed token by token must give a legal play), never against copied engine output, except where
the answer is forced.
"""

import io
import queue
import subprocess
import sys
import threading

import numpy as np
import pytest

from bgai.core.match import MatchScore
from bgai.core.movegen import OPP_BAR, OWN_BAR, switch
from bgai.eval.bot import MAX_PLIES, load_bot
from bgai.formats.position import Position
from bgai.formats.xgid import format_xgid
from bgai.frontends import ubgi
from bgai.frontends.ubgi import Engine, main, play_text

CODES = {"unknown_command", "bad_argument", "missing_context", "unsupported_feature", "internal"}
START = "4HPwATDgc/ABMA"

# On roll: two checkers on each of its 6 and 5 points; the opponent has six left, two on each of its 6, 5 and 4
# points. The player on roll wins 90% (the bear-off database, exactly) and no gammon is possible: a textbook
# double and pass.
DOUBLE_PASS = Position.from_points({6: 2, 5: 2}, {19: 2, 20: 2, 21: 2})
# Two on each of its 5 and 4 points against two on each of the opponent's 1, 2 and 3 points: 67%, double and take.
DOUBLE_TAKE = Position.from_points({5: 2, 4: 2}, {24: 2, 23: 2, 22: 2})
# Six checkers against three: the player on roll is the underdog, and its opponent would beaver a double.
BEAVER = Position.from_points({6: 2, 5: 2, 4: 2}, {24: 2, 23: 2})


@pytest.fixture(scope="module")
def bots():
    cache = {}

    def factory(plies):
        if plies not in cache:
            cache[plies] = load_bot(plies=plies)
        return cache[plies]

    return factory


@pytest.fixture
def calls():
    """The plies of every bot the engine asked for, in order."""
    return []


@pytest.fixture
def engine(bots, calls):
    def factory(plies):
        calls.append(plies)
        return bots(plies)

    return Engine(factory)


def ask(engine, *lines):
    """Send every line; the replies to the last."""
    replies = []
    for line in lines:
        replies = engine.handle(line)
    return replies


def info_fields(line):
    """``info k v k v ... pv <play>`` as a dict (``pv`` the rest of the line)."""
    words = line.split()
    assert words[0] == "info"
    fields, i = {}, 1
    while i < len(words):
        if words[i] == "pv":
            fields["pv"] = " ".join(words[i + 1:])
            break
        fields[words[i]] = words[i + 1]
        i += 2
    return fields


def replay(pos, dice, text):
    """The position after playing ``text`` (UBGI tokens) from ``pos`` with ``dice``, checker by checker and die by
    die as a dueller does, seen from the opponent; fails on a token no die allows."""
    board = pos.board.astype(np.int64).copy()
    left = [dice[0]] * 4 if dice[0] == dice[1] else list(dice)
    if text == "pass":
        return Position(switch(board.astype(np.int8)))
    for token in text.split():
        src, dst = token.split("/")
        src = OWN_BAR if src == "bar" else int(src)
        dst = 0 if dst == "off" else int(dst)
        assert "*" not in token and "(" not in token
        distance = src - dst
        die = distance if distance in left else min((d for d in left if dst == 0 and d > distance), default=None)
        assert die is not None, f"no die left for {token} in {text} with {dice}"
        left.remove(die)
        assert board[src] > 0, f"{token}: no checker on {src}"
        board[src] -= 1
        if dst:
            assert board[dst] >= -1, f"{token}: point {dst} is held"
            if board[dst] == -1:
                board[dst], board[OPP_BAR] = 0, board[OPP_BAR] - 1
            board[dst] += 1
    return Position(switch(board.astype(np.int8)))


def assert_legal(pos, dice, text):
    after = replay(pos, dice, text)
    assert after in [m.after for m in pos.legal_moves(dice)], f"{text} is not a legal play of {dice} in {pos!r}"
    return after


def cube_equity(decision):
    """The cubeful equity of the best cube action (for money; match-winning chances in a match)."""
    if not decision.may_double:
        return decision.no_double
    return max(decision.no_double, min(decision.double_take, decision.double_pass))


# Handshake and readiness ------------------------------------------------------------------------------------------


def test_handshake_names_the_engine_lists_its_options_and_ends_with_ubgiok_without_loading_the_bot(engine, calls):
    replies = engine.handle("ubgi")
    assert replies[0].startswith("id name bgai ")
    assert replies[1].startswith("id author ")
    assert replies[2] == "proto 0.2"  # the v0.2 draft's line (tests/test_ubgi_v02.py); v0.1 GUIs read past it
    assert replies[-1] == "ubgiok"
    options = replies[3:-1]
    assert options and all(line.startswith("option name ") and " type " in line for line in options)
    assert "option name Plies type spin default 0 min 0 max 2" in options
    assert calls == []  # the handshake answers at once; the bot comes later


def test_isready_loads_the_bot_once_and_answers_readyok(engine, calls):
    assert engine.handle("isready") == ["readyok"]
    assert engine.handle("isready") == ["readyok"]
    assert calls == [0]


def test_the_plies_option_chooses_the_bot_and_go_depth_counts_the_root(engine, calls):
    ask(engine, "setoption name Plies value 1", "isready")
    assert calls == [1]
    replies = ask(engine, f"position gnubgid {START}", "dice 3 1", "go role chequer depth 1")
    assert calls == [1, 0]  # depth 1 is bgai's 0-ply: every play judged by the network alone
    assert info_fields(replies[0])["depth"] == "1"


def test_max_plies_matches_the_bots():
    assert ubgi.MAX_PLIES == MAX_PLIES


def test_context_commands_answer_nothing(engine):
    for line in ("newgame", "newsession type match length 7", "setscore 2 3", "setcube value 2 owner p1",
                 "setturn p1", f"position gnubgid {START}", "dice 6 5", "setoption name Seed value 42",
                 "setoption name Deterministic value true", "stop", ""):
        assert engine.handle(line) == [], line


# Checker play ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dice", [(3, 1), (6, 5), (5, 2), (6, 6), (2, 2)])
def test_bestmove_is_the_bots_choice_and_a_legal_play(engine, bots, dice):
    pos = Position.start()
    replies = ask(engine, f"position gnubgid {START}", f"dice {dice[0]} {dice[1]}", "go role chequer")
    assert replies[-1].startswith("bestmove ")
    play = replies[-1].removeprefix("bestmove ")
    assert assert_legal(pos, dice, play) == bots(0).choose_move(pos, dice).after
    info = info_fields(replies[0])
    assert info["role"] == "chequer" and info["pv"] == play and info["depth"] == "1"
    best = bots(0).hint(pos, dice)[0]
    assert float(info["eq"]) == pytest.approx(best.equity, abs=1e-4)
    assert float(info["pwin"]) == pytest.approx(best.evaluation.win, abs=1e-4)


def test_doubles_are_written_one_token_per_die(engine):
    replies = ask(engine, f"position gnubgid {START}", "dice 6 6", "go role chequer")
    play = replies[-1].removeprefix("bestmove ")
    assert len(play.split()) == 4
    assert_legal(Position.start(), (6, 6), play)


@pytest.mark.parametrize("pos", [
    Position.start(),
    # On the bar against blots: entering, hitting, and hitting again.
    Position.from_points({"bar": 2, 13: 5, 8: 3, 6: 5}, {20: 1, 22: 1, 18: 1, 3: 2, 12: 5, 17: 3, 19: 2}),
    # Bearing off, with gaps: larger dice bear off from lower points.
    Position.from_points({5: 2, 3: 3, 1: 1}, {24: 3, 20: 2, 19: 2}),
], ids=["start", "bar-and-blots", "bear-off"])
def test_every_legal_play_written_in_ubgi_notation_replays_to_itself(pos):
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            for move in pos.legal_moves((d1, d2)):
                text = play_text(move)
                assert "*" not in text and "(" not in text
                assert replay(pos, (d1, d2), text) == move.after, (text, d1, d2)


def test_bestmoveid_is_off_by_default_and_when_on_names_the_same_play_just_before_bestmove(engine):
    replies = ask(engine, f"position gnubgid {START}", "dice 4 2", "go role chequer")
    assert not any(line.startswith("bestmoveid") for line in replies)
    replies = ask(engine, "setoption name BestMoveId value true", "go role chequer")
    assert replies[-2].startswith("bestmoveid ") and replies[-1].startswith("bestmove ")
    after = assert_legal(Position.start(), (4, 2), replies[-1].removeprefix("bestmove "))
    assert replies[-2] == f"bestmoveid {after.position_id()}"


def test_a_single_legal_play_is_the_answer(engine):
    # Given one checker left, on the 1-point
    pos = Position.from_points({1: 1}, {24: 2, 19: 5})
    # When any roll is played, Then it bears that checker off
    assert ask(engine, f"position gnubgid {pos.position_id()}", "dice 6 5", "go role chequer")[-1] == "bestmove 1/off"


def test_a_roll_that_cannot_be_played_is_pass_and_its_id_is_the_same_board_from_the_other_side(engine):
    # Given a checker on the bar against a closed board
    pos = Position.from_points({"bar": 1, 10: 14}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 12: 3})
    replies = ask(engine, "setoption name BestMoveId value true", f"position gnubgid {pos.position_id()}", "dice 6 5",
                  "go role chequer")
    assert replies[-1] == "bestmove pass"
    assert replies[-2] == f"bestmoveid {pos.switched().position_id()}"


def test_position_clears_the_dice(engine):
    ask(engine, f"position gnubgid {START}", "dice 3 1")
    [reply] = ask(engine, f"position gnubgid {START}", "go role chequer")
    assert reply.startswith("error missing_context")


# Cube decisions --------------------------------------------------------------------------------------------------


def test_a_clear_double_and_pass(engine, bots):
    decision = bots(0).cube_decision(DOUBLE_PASS)
    assert decision.should_double and not decision.should_take  # what the position is, by the library
    replies = ask(engine, f"position gnubgid {DOUBLE_PASS.position_id()}", "go role cube")
    assert replies[-1] == "bestcube double"
    info = info_fields(replies[0])
    assert info["role"] == "cube" and float(info["eq"]) == pytest.approx(cube_equity(decision), abs=1e-4)
    assert float(info["pwin"]) > 0.75
    assert ask(engine, "go role take")[-1] == "bestcube pass"


def test_double_and_take(engine, bots):
    decision = bots(0).cube_decision(DOUBLE_TAKE)
    assert decision.should_double and decision.should_take
    assert ask(engine, f"position gnubgid {DOUBLE_TAKE.position_id()}", "go role cube")[-1] == "bestcube double"
    assert ask(engine, "go role take")[-1] == "bestcube take"


def test_no_double_at_the_start(engine):
    assert ask(engine, f"position gnubgid {START}", "go role cube")[-1] == "bestcube nodouble"


@pytest.mark.parametrize("turn, owner, answer", [
    ("p0", "p1", "bestcube nodouble"),  # the opponent owns the cube: no double, however good
    ("p0", "p0", "bestcube double"),  # the player on roll owns it: a redouble
    ("p1", "p1", "bestcube double"),
    ("p1", "p0", "bestcube nodouble"),
])
def test_cube_ownership_is_told_through_the_seat_on_roll(engine, turn, owner, answer):
    replies = ask(engine, f"setturn {turn}", f"setcube value 2 owner {owner}",
                  f"position gnubgid {DOUBLE_PASS.position_id()}", "go role cube")
    assert replies[-1] == answer


def test_take_is_refused_when_the_player_on_roll_may_not_double(engine):
    [reply] = ask(engine, "setcube value 2 owner p1", f"position gnubgid {DOUBLE_PASS.position_id()}",
                  "go role take")
    assert reply.startswith("error bad_argument")


def test_beavers_only_with_the_option(engine, bots):
    assert bots(0).cube_decision(BEAVER, beavers=True).beaver
    assert ask(engine, f"position gnubgid {BEAVER.position_id()}", "go role take")[-1] == "bestcube take"
    assert ask(engine, "setoption name Beavers value true", "go role take")[-1] == "bestcube beaver"


def test_the_jacoby_rule_of_a_money_session(engine, bots):
    pos = Position.start()
    with_jacoby = cube_equity(bots(0).cube_decision(pos, jacoby=True))
    without = cube_equity(bots(0).cube_decision(pos))
    assert with_jacoby != pytest.approx(without, abs=1e-3)
    replies = ask(engine, "newsession type money jacoby on", f"position gnubgid {START}", "go role cube")
    assert float(info_fields(replies[0])["eq"]) == pytest.approx(with_jacoby, abs=1e-4)


# Turns -----------------------------------------------------------------------------------------------------------


def test_turn_at_a_double_gives_the_cube_action_and_a_legal_child(engine):
    replies = ask(engine, f"position gnubgid {DOUBLE_PASS.position_id()}", "dice 6 5", "go role turn")
    cube, moveid = replies[-1].removeprefix("bestturn ").split()
    assert cube == "cube=double"
    assert moveid.removeprefix("moveid=") in {m.after.position_id() for m in DOUBLE_PASS.legal_moves((6, 5))}


def test_turn_without_a_double_plays_the_bots_move(engine, bots):
    pos = Position.start()
    replies = ask(engine, f"position gnubgid {START}", "dice 3 1", "go role turn")
    expected = bots(0).choose_move(pos, (3, 1)).after.position_id()
    assert replies[-1] == f"bestturn cube=nodouble moveid={expected}"
    assert info_fields(replies[0])["role"] == "turn"


def test_turn_needs_the_dice(engine):
    [reply] = ask(engine, f"position gnubgid {START}", "go role turn")
    assert reply.startswith("error missing_context")


# Matches ---------------------------------------------------------------------------------------------------------


def test_scores_are_told_from_the_seat_on_roll(engine, bots):
    pos = Position.start()
    for turn, mine in (("p0", (3, 0)), ("p1", (0, 3))):
        replies = ask(engine, "newsession type match length 5", "setscore 3 0", f"setturn {turn}",
                      f"position gnubgid {START}", "go role cube")
        expected = cube_equity(bots(0).cube_decision(pos, 1, "centered", MatchScore.from_score(5, mine)))
        assert float(info_fields(replies[0])["mwc"]) == pytest.approx(expected, abs=1e-4)
    leader = cube_equity(bots(0).cube_decision(pos, 1, "centered", MatchScore.from_score(5, (3, 0))))
    trailer = cube_equity(bots(0).cube_decision(pos, 1, "centered", MatchScore.from_score(5, (0, 3))))
    assert leader > 0.6 > 0.4 > trailer


def test_no_double_in_the_crawford_game_and_the_trailer_doubles_after_it(engine, bots):
    # Given a 5-point match and a position the player on roll would double at any other score
    ask(engine, "newsession type match length 5", f"position gnubgid {DOUBLE_PASS.position_id()}")
    # When p0 reaches 4 points, the game that follows is the Crawford game: no one doubles
    for turn in ("p0", "p1"):
        replies = ask(engine, "setscore 4 0", f"setturn {turn}", f"position gnubgid {DOUBLE_PASS.position_id()}",
                      "go role cube")
        assert replies[-1] == "bestcube nodouble"
    # Then, p1 having won the Crawford game, the next game is post-Crawford and the trailer doubles
    replies = ask(engine, "newgame", "setscore 4 1", "setturn p1", f"position gnubgid {DOUBLE_PASS.position_id()}",
                  "go role cube")
    decision = bots(0).cube_decision(DOUBLE_PASS, 1, "centered", MatchScore(5, (1, 4), post_crawford=True))
    assert decision.should_double
    assert replies[-1] == "bestcube double"


def test_a_lower_score_starts_a_new_match_with_its_own_crawford_game(engine):
    ask(engine, "newsession type match length 5", "setscore 4 0", f"position gnubgid {DOUBLE_PASS.position_id()}",
        "go role cube")
    replies = ask(engine, "setscore 0 0", "setscore 0 4", f"position gnubgid {DOUBLE_PASS.position_id()}",
                  "go role cube")
    assert replies[-1] == "bestcube nodouble"


def test_setscore_can_say_the_game_is_post_crawford(engine):
    replies = ask(engine, "newsession type match length 5", "setscore 0 4 postcrawford",
                  f"position gnubgid {DOUBLE_PASS.position_id()}", "go role cube")
    assert replies[-1] == "bestcube double"
    replies = ask(engine, "setscore 0 4 crawford", f"position gnubgid {DOUBLE_PASS.position_id()}", "go role cube")
    assert replies[-1] == "bestcube nodouble"


def test_an_xgid_sets_the_board_turn_cube_dice_and_score(engine, bots):
    # Given an XGID with O on roll holding a 2-cube, in a double-and-pass position from O's side, with 6-5 rolled
    board_from_x = DOUBLE_PASS.switched().board
    xgid = format_xgid(board_from_x, cube=2, owner=-1, x_on_roll=False, dice=(6, 5))
    assert Position.from_xgid(xgid) == DOUBLE_PASS
    # Then O redoubles, and with the XGID's own dice plays the bot's move
    assert ask(engine, f"position xgid {xgid}", "go role cube")[-1] == "bestcube double"
    play = ask(engine, "go role chequer")[-1].removeprefix("bestmove ")
    assert assert_legal(DOUBLE_PASS, (6, 5), play) == bots(0).choose_move(DOUBLE_PASS, (6, 5)).after
    # And when X owns that cube, O may not redouble
    xgid = format_xgid(board_from_x, cube=2, owner=1, x_on_roll=False)
    assert ask(engine, f"position xgid {xgid}", "go role cube")[-1] == "bestcube nodouble"
    # And in the Crawford game of a match no one doubles
    xgid = format_xgid(board_from_x, x_on_roll=False, score=(4, 1), length=5, crawford=True)
    assert ask(engine, f"position xgid {xgid}", "go role cube")[-1] == "bestcube nodouble"
    xgid = format_xgid(board_from_x, x_on_roll=False, score=(4, 1), length=5, crawford=False)
    assert ask(engine, f"position xgid {xgid}", "go role cube")[-1] == "bestcube double"


# Bad input: an error line each, and the engine goes on ---------------------------------------------------------------


@pytest.mark.parametrize("setup, line, code", [
    ([], "foo", "unknown_command"),
    ([], "UBGI", "unknown_command"),  # commands are case-sensitive
    ([], "isready now", "bad_argument"),
    ([], "position gnubgid 4HPwATDgc/ABM", "bad_argument"),
    ([], "position gnubgid 4HPwATDgc/ABMZ", "bad_argument"),  # too many checkers
    ([], "position gnubgid ééééééééééééé!", "bad_argument"),
    ([], "position gnubgid", "bad_argument"),
    ([], f"position gnubgid {START} extra", "bad_argument"),
    ([], "position xgid XGID=garbage", "bad_argument"),
    ([], "position xgid XGID=-b----E-C---eE---c-e----B-:0:0:1:77:0:0:0:0:10", "bad_argument"),
    ([], "position xgid XGID=-b----E-C---eE---c-e----B-:1:0:1:00:0:0:0:0:10", "bad_argument"),  # a centered 2
    ([], "position fibs board:You:bgai:1:0:0:0", "unsupported_feature"),
    ([], "dice 7 1", "bad_argument"),
    ([], "dice 0 3", "bad_argument"),
    ([], "dice 3", "bad_argument"),
    ([], "dice 31", "bad_argument"),
    ([], "dice a b", "bad_argument"),
    ([], "go role chequer", "missing_context"),
    ([], "go role cube", "missing_context"),
    ([f"position gnubgid {START}"], "go role chequer", "missing_context"),
    ([f"position gnubgid {START}"], "go role dance", "bad_argument"),
    ([f"position gnubgid {START}", "dice 3 1"], "go role chequer depth 9", "bad_argument"),
    ([f"position gnubgid {START}", "dice 3 1"], "go role chequer movetime -5", "bad_argument"),
    ([f"position gnubgid {START}", "dice 3 1"], "go role chequer movetime", "bad_argument"),
    ([f"position gnubgid {START}", "dice 3 1"], "go role chequer ponder 1", "bad_argument"),
    (["position gnubgid AQAAAAAAAAAAAA"], "go role cube", "bad_argument"),  # the game is over
    ([], "setoption name Plies value 3", "bad_argument"),
    ([], "setoption name Plies value two", "bad_argument"),
    ([], "setoption name Nope value 1", "bad_argument"),
    ([], "setoption Plies 1", "bad_argument"),
    ([], "setoption name BestMoveId value yes", "bad_argument"),
    ([], "setoption name Threads value 4", "unsupported_feature"),
    ([], "setoption name EvalMode value cubeful", "unsupported_feature"),
    ([], "setoption name Deterministic value false", "unsupported_feature"),
    ([], "setcube value 3 owner p0", "bad_argument"),
    ([], "setcube value 2 owner center", "bad_argument"),
    ([], "setcube value 2 owner p2", "bad_argument"),
    ([], "setcube value 2", "bad_argument"),
    ([], "setturn p2", "bad_argument"),
    ([], "setturn", "bad_argument"),
    ([], "newsession type match", "bad_argument"),
    ([], "newsession type money length 5", "bad_argument"),
    ([], "newsession type match length 99", "bad_argument"),
    ([], "newsession type match length 5 jacoby on", "bad_argument"),
    ([], "newsession type poker", "bad_argument"),
    ([], "newsession type money crawford maybe", "bad_argument"),
    ([], "setscore 1", "bad_argument"),
    ([], "setscore -1 0", "bad_argument"),
    (["newsession type match length 5"], "setscore 5 0", "bad_argument"),
    (["newsession type match length 5"], "setscore 1 2 maybe", "bad_argument"),
])
def test_bad_input_gets_one_error_line_and_the_engine_goes_on(engine, setup, line, code):
    ask(engine, *setup)
    replies = engine.handle(line)
    assert len(replies) == 1
    words = replies[0].split(" ", 2)
    assert words[0] == "error" and words[1] == code and len(words) == 3 and words[2]
    assert "\n" not in replies[0]
    assert engine.running
    assert ask(engine, f"position gnubgid {START}", "dice 3 1", "go role chequer")[-1].startswith("bestmove ")


def test_a_failing_bot_is_an_error_not_a_crash(capsys):
    def broken(plies):
        raise RuntimeError("no network here")

    engine = Engine(broken)
    assert engine.handle("ubgi")[-1] == "ubgiok"
    error, ready = engine.handle("isready")
    assert error.startswith("error internal") and "no network here" in error and ready == "readyok"
    [reply] = ask(engine, f"position gnubgid {START}", "dice 3 1", "go role chequer")
    assert reply.startswith("error internal")
    assert engine.running


# The streams ---------------------------------------------------------------------------------------------------------


def test_main_answers_until_quit_and_ignores_what_follows(bots):
    stdin = io.StringIO(f"ubgi\nposition gnubgid {START}\ndice 5 2\ngo role chequer\nquit\nisready\n")
    stdout = io.StringIO()
    assert main(stdin, stdout, bot_factory=bots) == 0
    lines = stdout.getvalue().splitlines()
    assert lines[-1].startswith("bestmove ")
    assert "readyok" not in lines
    assert_legal(Position.start(), (5, 2), lines[-1].removeprefix("bestmove "))


def test_main_stops_at_the_end_of_its_input_and_refuses_overlong_lines(bots):
    stdin = io.StringIO("x" * (ubgi.MAX_LINE + 10) + "\nisready\n")
    stdout = io.StringIO()
    assert main(stdin, stdout, bot_factory=bots) == 0
    assert stdout.getvalue().splitlines() == [
        f"error bad_argument a command is one line of at most {ubgi.MAX_LINE} characters", "readyok"]


def test_a_gui_drives_bgai_ubgi_as_a_subprocess():
    process = subprocess.Popen([sys.executable, "-m", "bgai.frontends.cli", "ubgi"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line.rstrip("\n")) for line in process.stdout], daemon=True).start()

    def send(command, until):
        process.stdin.write(command + "\n")
        process.stdin.flush()
        got = []
        while not got or not got[-1].startswith(until):
            got.append(lines.get(timeout=120))
        return got

    try:
        handshake = send("ubgi", "ubgiok")
        assert handshake[0].startswith("id name bgai")
        assert send("isready", "readyok") == ["readyok"]
        pos = Position.from_position_id("4HPwATDgc/ABMA").switched().play("13/11 24/21", (3, 2)).after
        process.stdin.write(f"position gnubgid {pos.position_id()}\ndice 4 1\n")
        reply = send("go role chequer", "bestmove")
        assert reply[0].startswith("info role chequer")
        assert_legal(pos, (4, 1), reply[-1].removeprefix("bestmove "))
        [error] = send("dice 9 9", "error")
        assert error.startswith("error bad_argument ")
        assert send("go role cube", "bestcube")[-1] in ("bestcube double", "bestcube nodouble")
        assert send("isready", "readyok") == ["readyok"]
        process.stdin.write("quit\n")
        process.stdin.flush()
        assert process.wait(timeout=60) == 0
        assert process.stderr.read() == ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
