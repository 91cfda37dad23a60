"""bgai's UBGI engine spoken to in the v0.2 draft (bgai.frontends.ubgi: keys, bare go, move= in bestturn, four error
codes), tested as tests/test_ubgi.py tests v0.1: line in, lines out, answers checked against the library's own and the
rules, never against copied engine output.

Given an engine that has answered a command only v0.2 has (``set``, ``get``, ``keys``, ``go`` without ``role``),
when a GUI asks it anything, then it answers in v0.2's terms; before that, in v0.1's (tests/test_ubgi.py).
"""

import re

import pytest
from test_ubgi import BEAVER, START, ask, assert_legal, cube_equity, info_fields

from bgai.eval.bot import MAX_PLIES, load_bot
from bgai.formats.position import Position
from bgai.frontends import ubgi
from bgai.frontends.ubgi import Engine

NAME = re.compile(r"(engine|game)\.[a-z0-9_.]+")
INTEGER = re.compile(r"-?[0-9]+")


def parse_key(line):
    """A ``keys`` line read by the draft's grammar, ``key <name> int [<min>..<max>|*] <value> | bool <value> |
    enum <a|b|...> <value> | string * <value>``, then an optional standalone ``!`` and a description: a dict."""
    words = line.split()
    assert words[0] == "key" and NAME.fullmatch(words[1]), line
    kind, rest = words[2], words[3:]
    bounds = None
    if kind == "int" and (rest[0] == "*" or ".." in rest[0]):
        bounds, rest = rest[0], rest[1:]
    elif kind in ("enum", "string"):
        bounds, rest = rest[0], rest[1:]
    else:
        assert kind in ("int", "bool"), line
    value, rest = rest[0], rest[1:]
    minor = rest[:1] == ["!"]
    return {"name": words[1], "kind": kind, "range": bounds, "value": value, "minor": minor,
            "text": " ".join(rest[1:] if minor else rest)}


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
    return []


@pytest.fixture
def engine(bots, calls):
    def factory(plies):
        calls.append(plies)
        return bots(plies)

    return Engine(factory)


def keys(engine):
    """The ``keys`` answer, each line read by the draft's grammar."""
    return {key["name"]: key for key in map(parse_key, engine.handle("keys"))}


# The handshake and the keys ---------------------------------------------------------------------------------------


def test_the_handshake_says_proto_0_2_before_ubgiok(engine):
    replies = engine.handle("ubgi")
    assert replies[:3] == [f"id name {ubgi.NAME}", f"id author {ubgi.AUTHOR}", "proto 0.2"]
    assert replies[-1] == "ubgiok"


def test_keys_lists_every_key_in_the_drafts_form_with_its_value_now(engine):
    listed = keys(engine)
    assert set(listed) == set(ubgi.KEYS)
    ply = listed["engine.ply"]
    assert (ply["kind"], ply["range"], ply["value"], ply["minor"]) == ("int", f"1..{MAX_PLIES + 1}", "1", False)
    assert listed["engine.seed"]["minor"] and listed["engine.deterministic"]["minor"]
    assert listed["game.variant"]["range"] == "backgammon" and listed["game.variant"]["value"] == "backgammon"
    for match in listed.values():
        assert match["text"], f"{match['name']} has no description"
        if match["kind"] == "int":
            assert INTEGER.fullmatch(match["value"])
            if match["range"] not in (None, "*"):
                low, high = map(int, match["range"].split(".."))
                assert low <= int(match["value"]) <= high
        if match["kind"] == "bool":
            assert match["value"] in ("true", "false")
        if match["kind"] == "enum":
            assert match["value"] in match["range"].split("|")


@pytest.mark.parametrize("key, value", [("engine.ply", "1"), ("engine.ply", "3"), ("engine.seed", "42"),
                                        ("game.jacoby", "true"), ("game.beavers", "true"),
                                        ("game.variant", "backgammon"), ("engine.deterministic", "true")])
def test_set_answers_nothing_and_get_and_keys_give_the_value_back(engine, key, value):
    assert engine.handle(f"set {key} {value}") == []
    assert engine.handle(f"get {key}") == [f"value {key} {value}"]
    assert keys(engine)[key]["value"] == value


def test_engine_ply_counts_the_root_so_it_is_bgais_plies_plus_one(engine, calls, bots):
    ask(engine, "set engine.ply 2", "isready")
    assert calls == [1]
    replies = ask(engine, f"position gnubgid {START}", "dice 6 2", "go chequer")
    assert info_fields(replies[0])["depth"] == "2"
    assert replies[-1] == f"bestmove {ubgi.play_text(bots(1).choose_move(Position.start(), (6, 2)))}"
    assert engine.handle("setoption name Plies value 0") == []  # v0.1's options stay accepted (section 8)
    assert engine.handle("get engine.ply") == ["value engine.ply 1"]


# Decisions --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("go", ["go", "go chequer"])
@pytest.mark.parametrize("dice", [(3, 1), (6, 6), (5, 2)])
def test_bare_go_and_go_chequer_answer_the_bots_play(engine, bots, go, dice):
    replies = ask(engine, "setoption name BestMoveId value true", f"position gnubgid {START}",
                  f"dice {dice[0]} {dice[1]}", go)
    assert [line.split()[0] for line in replies] == ["info", "bestmove"]  # no bestmoveid in v0.2
    play = replies[-1].removeprefix("bestmove ")
    assert assert_legal(Position.start(), dice, play) == bots(0).choose_move(Position.start(), dice).after


def test_go_turn_carries_the_play_itself(engine, bots):
    replies = ask(engine, f"position gnubgid {START}", "dice 3 1", "go turn")
    cube, move = replies[-1].removeprefix("bestturn ").split(" ", 1)
    assert cube == "cube=nodouble" and move.startswith("move=")
    play = move.removeprefix("move=")
    assert assert_legal(Position.start(), (3, 1), play) == bots(0).choose_move(Position.start(), (3, 1)).after
    assert info_fields(replies[0])["pv"] == play


def test_go_cube_and_the_keys_of_the_money_rules(engine, bots):
    pos = Position.start()
    replies = ask(engine, "set game.jacoby true", f"position gnubgid {START}", "go cube")
    assert replies[-1] == "bestcube nodouble"
    jacoby = cube_equity(bots(0).cube_decision(pos, jacoby=True))
    assert float(info_fields(replies[0])["eq"]) == pytest.approx(jacoby, abs=1e-4)
    replies = ask(engine, "set game.beavers true", f"position gnubgid {BEAVER.position_id()}", "go take")
    assert replies[-1] == "bestcube beaver"


# Errors -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("setup, line, code", [
    ([], "frob", "bad_command"),
    ([], "set engine.ply", "bad_command"),
    ([], "set engine.ply 2 3", "bad_command"),
    ([], "get", "bad_command"),
    ([], "keys now", "bad_command"),
    ([], "dice 3", "bad_command"),
    ([], "setoption Plies 1", "bad_command"),
    ([], "set engine.ply 9", "bad_value"),
    ([], "set engine.ply two", "bad_value"),
    ([], "set game.jacoby maybe", "bad_value"),
    ([], "dice 7 1", "bad_value"),
    ([], "position gnubgid nonsense", "bad_value"),
    ([], "go", "bad_state"),
    ([f"position gnubgid {START}"], "go chequer", "bad_state"),
    ([f"position gnubgid {START}"], "go turn", "bad_state"),
    ([], "set engine.threads 4", "unsupported"),
    ([], "get engine.threads", "unsupported"),
    ([], "set game.variant nackgammon", "unsupported"),
    ([], "set engine.deterministic false", "unsupported"),
    ([], "position fen x", "unsupported"),
])
def test_bad_input_gets_one_error_line_with_one_of_the_four_codes(engine, setup, line, code):
    ask(engine, "get engine.ply", *setup)  # a v0.2 command first: the GUI speaks v0.2
    replies = engine.handle(line)
    assert len(replies) == 1
    words = replies[0].split(" ", 2)
    assert words[0] == "error" and words[1] == code and len(words) == 3 and words[2]
    assert engine.running
    assert ask(engine, f"position gnubgid {START}", "dice 3 1", "go")[-1].startswith("bestmove ")


def test_the_first_v0_2_command_is_answered_in_v0_2s_terms(engine):
    assert engine.handle("go role chequer")[0].startswith("error missing_context ")  # v0.1 so far
    assert engine.handle("set engine.nope 1")[0].startswith("error unsupported ")
    assert engine.handle("go role chequer")[0].startswith("error bad_state ")  # and from then on


def test_a_failing_bot_is_bad_state_in_v0_2(capsys):
    def broken(plies):
        raise RuntimeError("no network here")

    engine = Engine(broken)
    error, ready = ask(engine, "keys", "isready")
    assert error.startswith("error bad_state ") and "no network here" in error and ready == "readyok"
