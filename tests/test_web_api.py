"""The JSON API of ``bgai serve`` through FastAPI's TestClient: every endpoint, and every kind of bad input gets a
4xx with a message that says what was wrong (422 for input, 409 for an action out of turn, 404 for no session)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from bgai import Position
from bgai.formats.xgid import format_xgid
from bgai.frontends.web import create_app
from tests.test_cube import exact_cube_equities

START = "4HPwATDgc/ABMA"
DOUBLE_TAKE = Position.from_points({6: 4, 5: 4, 4: 4, 3: 3}, {18: 2, 19: 3, 20: 4, 21: 4, 22: 2})


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(plies=0), base_url="http://127.0.0.1:8000") as c:
        yield c


def detail(response) -> str:
    body = response.json()["detail"]
    return body if isinstance(body, str) else " ".join(f"{'.'.join(map(str, d['loc']))}: {d['msg']}" for d in body)


# Positions ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("position", [START, "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10",
                                      Position.start().board.tolist()])
def test_evaluate_takes_a_position_id_an_xgid_or_26_numbers(client, position):
    r = client.post("/api/evaluate", json={"position": position})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["position_id"] == START and body["pips"] == [167, 167] and body["plies"] == 0
    e = body["evaluation"]
    assert 0.4 < e["win"] < 0.6 and abs(e["equity"]) < 0.2
    assert body["cube"]["action"] == "No double, take" and body["cube"]["unit"] == "stake"


def test_evaluate_uses_an_xgids_cube_and_match_score(client):
    xgid = format_xgid(DOUBLE_TAKE.board, cube=2, owner=1, score=(2, 4), length=7)
    body = client.post("/api/evaluate", json={"position": xgid}).json()
    assert body["cube"]["unit"] == "mwc" and body["cube"]["may_double"]
    assert "edouble" in body["cube"]["action"]  # the owner redoubles


def test_cube_scores_gives_the_bots_score_grid(client):
    """Given a position, a length, a cube and its owner, then the grid is ``Bot.score_grid``'s cell for cell (the
    server's 0-ply bot); a length beyond the match equity table's, a bad position or owner is a 422."""
    from bgai import load_bot

    body = client.post("/api/cube/scores", json={"position": DOUBLE_TAKE.position_id(), "length": 4, "cube": 2,
                                                 "owner": "me"}).json()
    grid = load_bot(plies=0).score_grid(DOUBLE_TAKE, 4, 2, "me")
    assert body["plies"] == 0 and body["owner"] == "me" and len(body["cells"]) == 4
    assert [[c["short"] for c in row] for row in body["cells"]] == [[c.short for c in row] for row in grid.cells]
    assert body["cells"][2][1]["away"] == [3, 2] and body["money"]["away"] is None
    assert body["money"]["action"] == grid.money.action
    assert abs(body["cells"][0][3]["no_double"] - grid.cells[0][3].no_double) < 1e-9
    for bad in ({"length": 26}, {"length": 0}, {"length": 3, "owner": "bot"}, {"length": 3, "position": "x"}):
        r = client.post("/api/cube/scores", json={"position": START, **bad})
        assert r.status_code == 422, bad


def test_cube_gives_the_cube_action_money_and_match(client):
    money = client.post("/api/cube", json={"position": DOUBLE_TAKE.board.tolist()}).json()
    assert money["action"] == "Double, take" and money["should_double"] and money["should_take"]
    match = client.post("/api/cube", json={"position": DOUBLE_TAKE.position_id(),
                                           "match": {"length": 3, "score": [0, 0]}}).json()
    assert match["unit"] == "mwc" and 0 < match["no_double"] < 1
    owned = client.post("/api/cube", json={"position": START, "cube": 2, "owner": "opponent"}).json()
    assert not owned["may_double"] and owned["double_take"] is None


def test_moves_ranks_the_plays_of_a_roll_best_first(client):
    r = client.post("/api/moves", json={"position": START, "dice": "31"})
    body = r.json()
    assert r.status_code == 200 and body["dice"] == [3, 1] and len(body["plays"]) == 16
    best = body["plays"][0]
    assert best["play"] == "8/5 6/5" and best["difference"] == 0 and best["chances"]["equity"] == best["equity"]
    equities = [p["equity"] for p in body["plays"]]
    assert equities == sorted(equities, reverse=True)
    assert len(client.post("/api/moves", json={"position": START, "dice": [6, 5], "limit": 3}).json()["plays"]) == 3
    deeper = client.post("/api/moves", json={"position": START, "dice": "65", "plies": 1}).json()
    assert deeper["plies"] == 1 and deeper["plays"][0]["plies"] == 1


def test_a_plays_difference_is_from_the_first_play_at_its_own_ply(client):
    """Given 64 from the opening at 1-ply, where move filtering leaves 9 of the 14 plays at 0-ply, Then each play's
    difference is its equity minus the first play's equity at that play's ply: for a play left at 0-ply, the first
    play's 0-ply equity (as a 0-ply request gives it, the same network), never its 1-ply one."""
    deep = client.post("/api/moves", json={"position": START, "dice": "64", "plies": 1}).json()
    flat = client.post("/api/moves", json={"position": START, "dice": "64", "plies": 0}).json()
    assert deep["network"] == flat["network"] == "bgai:bgai-fast"
    first = deep["plays"][0]
    first_at = {1: first["equity"], 0: next(p["equity"] for p in flat["plays"] if p["play"] == first["play"])}
    assert abs(first_at[1] - first_at[0]) > 1e-3 and {p["plies"] for p in deep["plays"]} == {0, 1}
    for p in deep["plays"]:
        assert p["difference"] == pytest.approx(p["equity"] - first_at[p["plies"]], abs=1e-5), p["play"]


@pytest.mark.parametrize("path, body, field, message", [
    ("/api/evaluate", {"position": "4HPwATDgc/ABM"}, "position", "14 base64 characters"),
    ("/api/evaluate", {"position": "XGID=nonsense"}, "position", "26 characters"),
    ("/api/evaluate", {"position": [0] * 25}, "position", "26 integers"),
    ("/api/evaluate", {"position": [16] + [0] * 25}, "position", "opponent's bar"),
    ("/api/evaluate", {"position": [0, 16] + [0] * 24}, "position", "more than 15"),
    ("/api/evaluate", {"position": ""}, "position", "empty"),
    ("/api/evaluate", {}, "position", "Field required"),
    ("/api/evaluate", {"position": START, "plies": 3}, "plies", "less than or equal to 2"),
    ("/api/evaluate", {"position": START, "owner": "nobody"}, "owner", "center"),
    ("/api/evaluate", {"position": START, "match": {"length": 0}}, "length", "greater than or equal to 1"),
    ("/api/cube", {"position": START, "cube": 3}, None, "cube values must be"),
    ("/api/cube", {"position": START, "match": {"length": 5, "score": [4, 7]}}, None, "scores must be 0..4"),
    ("/api/cube", {"position": START, "jacoby": True, "match": {"length": 5}}, None, "money-game options"),
    ("/api/moves", {"position": START, "dice": "77"}, "dice", "each die must be in 1..6"),
    ("/api/moves", {"position": START, "dice": [6]}, "dice", "dice must be two"),
    ("/api/moves", {"position": START}, "dice", "Field required"),
    ("/api/moves", {"position": START, "dice": "31", "limit": 0}, "limit", "greater than or equal to 1"),
])
def test_bad_input_is_a_422_naming_what_is_wrong(client, path, body, field, message):
    r = client.post(path, json=body)
    assert r.status_code == 422
    text = detail(r)
    assert message in text
    if field is not None:
        assert field in text  # the field is named


def test_openapi_documents_every_endpoint(client):
    schema = client.get("/openapi.json").json()
    paths = set(schema["paths"])
    assert {"/api/evaluate", "/api/moves", "/api/cube", "/api/sessions", "/api/sessions/{key}/play",
            "/api/sessions/{key}/step", "/api/sessions/{key}/hint", "/api/sessions/{key}/cube-hint"} <= paths
    assert "EvaluateOut" in schema["components"]["schemas"]
    assert client.get("/docs").status_code == 200
    page = client.get("/")
    assert page.status_code == 200 and "bgai" in page.text and "/static/app.js" in page.text


# Sessions -----------------------------------------------------------------------------------------------------


def new(client, **options) -> dict:
    r = client.post("/api/sessions", json=options)
    assert r.status_code == 201, r.text
    return r.json()


def test_a_session_game_step_by_step(client):
    """Given a session set up at the opening 3-1, When the person moves 8/5, undoes it, moves 8/5 and 6/5 and
    finishes, Then the bot replies and it is the person's turn again, the log telling both plays."""
    s = new(client, seed=1, position=format_xgid(Position.start().board, dice=(3, 1)))
    key = s["id"]
    assert s["phase"] == "move" and s["dice"] == [3, 1] and s["play"]["targets"]["8"] == [7, 5, 4]
    s = client.post(f"/api/sessions/{key}/step", json={"from": 8, "to": 5}).json()
    assert s["play"]["text"] == "8/5" and s["dice_left"] == [1] and s["pips"] == [164, 167]
    s = client.post(f"/api/sessions/{key}/undo").json()
    assert s["play"]["steps"] == []
    client.post(f"/api/sessions/{key}/step", json={"from": 8, "to": 5})
    s = client.post(f"/api/sessions/{key}/step", json={"from": 6, "to": 5}).json()
    assert s["play"]["complete"]
    version = s["version"]
    s = client.post(f"/api/sessions/{key}/finish").json()
    assert s["version"] > version and s["log"][0] == "You roll 31 and play 8/5 6/5"
    assert s["log"][1].startswith("bgai rolls") and s["last_move"]["player"] == "bot"
    assert s["phase"] in ("roll", "move") and s["turn"] == "you"
    assert client.get(f"/api/sessions/{key}").json()["version"] == s["version"]


def test_a_session_played_to_the_end_through_the_api(client):
    s = new(client, seed=3)
    key = s["id"]
    for _ in range(500):
        if s["phase"] == "roll":
            s = client.post(f"/api/sessions/{key}/roll").json()
        elif s["phase"] == "move":
            best = client.get(f"/api/sessions/{key}/hint?limit=1").json()["plays"][0]["play"]
            s = client.post(f"/api/sessions/{key}/play", json={"move": best}).json()
        elif s["phase"] == "take":
            s = client.post(f"/api/sessions/{key}/take").json()
        else:
            break
    assert s["phase"] == "game_over" and sum(s["score"]) > 0
    s = client.post(f"/api/sessions/{key}/next").json()
    assert s["game"] == 2 and s["log"] == [] or s["log"][0].startswith(("bgai", "You"))


def test_doubling_taking_and_the_cube_hint_in_a_session(client):
    s = new(client, seed=2, position=format_xgid(DOUBLE_TAKE.board))
    key = s["id"]
    hint = client.get(f"/api/sessions/{key}/cube-hint").json()
    assert hint["kind"] == "double" and hint["action"] == "Double, take" and hint["perspective"] == "you"
    s = client.post(f"/api/sessions/{key}/double").json()
    assert s["cube"] == {"value": 2, "owner": "bot", "may_double": False, "offered": False}
    assert s["log"][:2] == ["You double to 2", "bgai takes"]
    offered = new(client, seed=2, position=format_xgid(DOUBLE_TAKE.switched().board, x_on_roll=False))
    assert offered["phase"] == "take" and offered["cube"]["offered"]
    hint = client.get(f"/api/sessions/{offered['id']}/cube-hint").json()
    assert hint["kind"] == "take" and set(hint["equities"]) == {"take", "pass"}
    s = client.post(f"/api/sessions/{offered['id']}/pass").json()
    assert s["phase"] == "game_over" and s["score"] == [0, 1]


# Seven checkers on the ace point against six: every roll leaves both sides in the two-sided bear-off database, so a
# rollout's no double and double/take are exact, and equal the database's (tests/test_cube.py). Double, pass.
SEVEN_ON_THE_ACE = "aAcAgD8AAAAAAA"


def strict_json(response) -> dict:
    """The answer's JSON, refusing NaN and infinities, which JSON does not have."""
    def refuse(constant):
        raise AssertionError(f"{constant} in the answer: {response.text[:200]}")

    return json.loads(response.text, parse_constant=refuse)


@pytest.mark.parametrize("path", ["/api/cube", "/api/evaluate"])
def test_a_rollout_cube_decision_through_the_api_is_the_bear_off_databases(client, path):
    """Given seven on the ace point against six, When the cube decision is asked with rollout, Then it is the
    rollout's (method "rollout", no cube efficiency: null, never NaN) and its no double and double/take are the
    database's exact ones; without rollout it is the formula's, with its efficiency."""
    nd, dt = exact_cube_equities(Position.from_position_id(SEVEN_ON_THE_ACE).board)
    r = client.post(path, json={"position": SEVEN_ON_THE_ACE, "rollout": True})
    assert r.status_code == 200, r.text
    cube = strict_json(r)["cube"] if path == "/api/evaluate" else strict_json(r)
    assert cube["method"] == "rollout" and cube["efficiency"] is None and cube["plies"] is None
    assert cube["no_double"] == pytest.approx(nd, abs=1e-4) and cube["double_take"] == pytest.approx(dt, abs=1e-4)
    assert cube["double_pass"] == 1.0 and cube["action"] == "Double, pass" and cube["unit"] == "stake"
    formula = strict_json(client.post(path, json={"position": SEVEN_ON_THE_ACE}))
    formula = formula["cube"] if path == "/api/evaluate" else formula
    assert formula["method"] == "formula" and 0.5 < formula["efficiency"] <= 1 and formula["plies"] == 0
    # a 1-ply bot's formula looks 2 plies ahead, and says so
    deep = strict_json(client.post(path, json={"position": SEVEN_ON_THE_ACE, "plies": 1}))
    assert (deep["cube"] if path == "/api/evaluate" else deep)["plies"] == 2


@pytest.mark.parametrize("body, reason", [
    ({"match": {"length": 5, "score": [1, 2]}}, "not a 5-point match"),
    ({"jacoby": True}, "not a game with the Jacoby rule"),
    ({"position": "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:2:1:0:7:10"}, "not a 7-point match"),
])
@pytest.mark.parametrize("path", ["/api/cube", "/api/evaluate"])
def test_a_rollout_cube_decision_where_its_rules_do_not_hold_is_a_422_saying_why(client, path, body, reason):
    r = client.post(path, json={"position": START, **body, "rollout": True})
    assert r.status_code == 422 and "for money games without the Jacoby rule or beavers" in detail(r)
    assert reason in detail(r)
    assert client.post(path, json={"position": START, **body}).status_code == 200  # the formula's is there


def test_a_sessions_cube_hint_by_rollout(client):
    """A money session's cube hint with ?rollout=true is the rollout's (before the person rolls: the database's
    exact answer here; facing the bot's double: take or pass from it); a match's or one with the Jacoby rule says
    why it cannot be rolled out, in the formula's hint and in a 422."""
    nd, dt = exact_cube_equities(Position.from_position_id(SEVEN_ON_THE_ACE).board)
    s = new(client, seed=3, position=SEVEN_ON_THE_ACE)
    formula = strict_json(client.get(f"/api/sessions/{s['id']}/cube-hint"))
    assert formula["method"] == formula["decision"]["method"] == "formula" and formula["rollout_refusal"] is None
    r = client.get(f"/api/sessions/{s['id']}/cube-hint?rollout=true")
    assert r.status_code == 200, r.text
    hint = strict_json(r)
    assert hint["method"] == hint["decision"]["method"] == "rollout" and hint["decision"]["efficiency"] is None
    assert hint["kind"] == "double" and hint["action"] == "Double, pass"
    assert hint["equities"]["no_double"] == pytest.approx(nd, abs=1e-4)
    assert hint["equities"]["double_take"] == pytest.approx(dt, abs=1e-4)
    # The bot on roll with the same position doubles at once: the person's hint is to pass, by the rollout too.
    offered = new(client, seed=3, position=format_xgid(Position.from_position_id(SEVEN_ON_THE_ACE).switched().board,
                                                        x_on_roll=False))
    assert offered["phase"] == "take"
    hint = strict_json(client.get(f"/api/sessions/{offered['id']}/cube-hint?rollout=true"))
    assert hint["kind"] == "take" and hint["action"] == "Pass" and hint["method"] == "rollout"
    assert hint["equities"]["take"] == pytest.approx(-dt, abs=1e-4) and hint["equities"]["pass"] == -1.0
    for options, reason in (({"match_length": 5}, "not a 5-point match"),
                            ({"jacoby": True}, "not a game with the Jacoby rule")):
        s = new(client, seed=3, position=format_xgid(DOUBLE_TAKE.board, length=options.get("match_length", 0)),
                **options)
        formula = client.get(f"/api/sessions/{s['id']}/cube-hint").json()
        assert reason in formula["rollout_refusal"]
        r = client.get(f"/api/sessions/{s['id']}/cube-hint?rollout=true")
        assert r.status_code == 422 and reason in detail(r)


def test_a_typed_play_a_resignation_and_the_board_svg(client):
    s = new(client, seed=1, position=format_xgid(Position.start().board, dice=(6, 5)))
    key = s["id"]
    s = client.post(f"/api/sessions/{key}/play?svg=true", json={"move": "24/13", "finish": False}).json()
    assert s["play"]["complete"] and s["svg"].startswith("<svg") and 'data-point="bar"' in s["svg"]
    s = client.post(f"/api/sessions/{key}/play", json={"move": "13/8 13/7", "finish": False, "reset": True}).json()
    assert s["play"]["text"] == "13/8 13/7"
    s = client.post(f"/api/sessions/{key}/resign", json={"points": 1}).json()
    assert s["log"][-2:] in (["You offer to resign a single game", "bgai rejects the resignation"],
                             ["bgai accepts the resignation", "bgai wins 1 point"])


@pytest.mark.parametrize("setup, action, body, status, message", [
    (None, "take", None, 409, "cannot take now"),
    (None, "pass", None, 409, "cannot pass now"),
    (None, "finish", None, 409, "cannot finish"),
    (None, "undo", None, 409, "cannot undo"),
    (None, "next", None, 409, "cannot start the next game"),
    ("move", "roll", None, 409, "cannot roll now"),
    ("move", "double", None, 409, "cannot double now"),
    ("move", "step", {"from": 8, "to": 1}, 422, "not part of any legal play"),
    ("move", "step", {"from": 5, "to": 1}, 422, "no checker of yours on 5"),
    ("move", "step", {"from": 26, "to": 1}, 422, "from"),
    ("move", "step", {"from": 8}, 422, "to"),
    ("move", "play", {"move": "24/20"}, 422, "not part of any legal play"),
    ("move", "play", {"move": "hello"}, 422, "cannot read"),
    ("move", "play", {}, 422, "move"),
    ("move", "finish", None, 422, "not complete"),
    ("move", "undo", None, 422, "no step to take back"),
    ("move", "resign", {"points": 4}, 422, "points"),
    ("move", "setup", {"position": "nonsense"}, 422, "14 base64"),
])
def test_session_actions_out_of_turn_or_illegal_are_4xx_with_the_reason(client, setup, action, body, status,
                                                                          message):
    position = format_xgid(DOUBLE_TAKE.board) if setup is None else format_xgid(Position.start().board, dice=(6, 5))
    s = new(client, seed=1, position=position)
    r = client.post(f"/api/sessions/{s['id']}/{action}", json=body)
    assert r.status_code == status, r.text
    assert message in detail(r)
    after = client.get(f"/api/sessions/{s['id']}").json()
    assert after["version"] == s["version"] and after["xgid"] == s["xgid"]  # nothing changed


def test_hints_at_the_wrong_moment_are_409(client):
    s = new(client, seed=1, position=format_xgid(DOUBLE_TAKE.board))
    assert client.get(f"/api/sessions/{s['id']}/hint").status_code == 409
    s = new(client, seed=1, position=format_xgid(Position.start().board, dice=(6, 5)))
    r = client.get(f"/api/sessions/{s['id']}/cube-hint")
    assert r.status_code == 409 and "no cube decision" in detail(r)


@pytest.mark.parametrize("options, message", [
    ({"match_length": 30}, "less than or equal to 25"),
    ({"match_length": 5, "jacoby": True}, "Jacoby"),
    ({"plies": 7}, "less than or equal to 2"),
    ({"seed": -1}, "greater than or equal to 0"),
    ({"position": "XGID=garbage"}, "26 characters"),
])
def test_bad_session_options_are_422(client, options, message):
    r = client.post("/api/sessions", json=options)
    assert r.status_code == 422 and message in detail(r)


def test_an_unknown_or_ended_session_is_404(client):
    assert client.get("/api/sessions/nope").status_code == 404
    assert client.post("/api/sessions/nope/roll").status_code == 404
    s = new(client, seed=1)
    assert client.delete(f"/api/sessions/{s['id']}").status_code == 204
    r = client.get(f"/api/sessions/{s['id']}")
    assert r.status_code == 404 and "no session" in detail(r)


def test_concurrent_requests_on_one_session_apply_one_after_the_other(client):
    """Given one session in its move phase, When eight threads undo and redo a checker step at once,
    Then every request gets an answer (200, or a 422 when its undo found nothing to take back), and the versions
    the successful ones saw are all different: no two applied at the same time."""
    s = new(client, seed=1, position=format_xgid(Position.start().board, dice=(6, 5)))
    key = s["id"]
    seen, errors = [], []

    def worker():
        for i in range(10):
            path, body = ("step", {"from": 24, "to": 18}) if i % 2 == 0 else ("undo", None)
            r = client.post(f"/api/sessions/{key}/{path}", json=body)
            if r.status_code == 200:
                seen.append(r.json()["version"])
            elif r.status_code != 422:
                errors.append(r.text)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(seen) == len(set(seen))
    final = client.get(f"/api/sessions/{key}").json()
    assert final["version"] == s["version"] + len(seen)


def test_the_games_download_as_a_mat_file(client):
    from bgai.formats.matchfile import read_mat

    s = new(client, seed=3, match_length=3)
    key = s["id"]
    s = client.post(f"/api/sessions/{key}/resign", json={"points": 3}).json()
    r = client.get(f"/api/sessions/{key}/match.mat")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    assert r.headers["content-disposition"] == 'attachment; filename="bgai-match.mat"'
    record = read_mat(r.text)
    assert record.length == 3 and list(record.score) == s["score"] == [0, 3]


# Hostile requests ------------------------------------------------------------------------------------------------


def post_raw(client, path: str, raw: str | bytes, **headers):
    return client.post(path, content=raw, headers={"content-type": "application/json", **headers})


@pytest.mark.parametrize("raw, field", [
    ('{"position": "\\ud800"}', "position"),  # a lone surrogate: cannot be written back as UTF-8
    ('{"position": NaN}', "position"),
    ('{"position": "4HPwATDgc/ABMA", "cube": Infinity}', "cube"),
    ('{"position": "4HPwATDgc/ABMA", "cube": 1e400}', "cube"),
    ('{"position": "4HPwATDgc/ABMA", "cube": 1180591620717411303424}', "cube"),  # 2**70
    ('{"position": [4611686018427387904, 4611686018427387904, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '
     '0, 0, 0, 0, 0, 0]}', "position"),  # 2**62: its sum wraps around in int64
    ('{"position": "4HPwATDgc/ABMA", "\\ud800": 1}', "body"),
    ('{"position": "4HPwATDgc/ABMA", "dice": "31"}', "dice"),  # a field /api/evaluate does not have
])
def test_hostile_values_are_a_422_naming_the_field_without_echoing_the_input(client, raw, field):
    r = post_raw(client, "/api/evaluate", raw)
    assert r.status_code == 422, r.text
    assert field in detail(r)
    assert all("input" not in error for error in r.json()["detail"])  # the input is never sent back


@pytest.mark.parametrize("path, body, message", [
    ("/api/moves", {"position": START, "dice": [3.9, 1.2]}, "two integers"),
    ("/api/moves", {"position": START, "dice": [True, 1]}, "two integers"),
    ("/api/moves", {"position": START, "dice": "\u0666\u0663"}, "two digits"),
    ("/api/moves", {"position": START, "dice": "31", "limit": -1}, "greater than or equal to 1"),
    ("/api/evaluate", {"position": [True] + [0] * 25}, "26 integers"),
    ("/api/evaluate", {"position": "x" * 1000}, "at most 200 characters"),
    ("/api/sessions", {"seed": 2**70}, "less than"),
    ("/api/sessions", {"match_length": 3, "jacobi": True}, "Extra inputs are not permitted"),
])
def test_floats_bools_foreign_digits_and_unknown_fields_are_refused(client, path, body, message):
    r = client.post(path, json=body)
    assert r.status_code == 422 and message in detail(r), r.text


def test_a_body_over_the_limit_is_a_413_whether_its_length_is_given_or_not(client):
    from bgai.frontends.web.app import MAX_BODY

    big = b'{"position": "' + b"x" * (MAX_BODY + 10) + b'"}'
    assert post_raw(client, "/api/evaluate", big).status_code == 413

    def chunks():  # no Content-Length: the body arrives in pieces
        for start in range(0, len(big), 8192):
            yield big[start:start + 8192]

    r = client.post("/api/evaluate", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and "at most" in r.json()["detail"]


def test_a_host_header_naming_another_site_is_refused(client):
    """A page of another site whose name is rebound to 127.0.0.1 (DNS rebinding) sends its own name as Host."""
    r = client.post("/api/evaluate", json={"position": START}, headers={"host": "evil.example"})
    assert r.status_code == 400
    assert client.post("/api/evaluate", json={"position": START}, headers={"host": "localhost:8000"}).status_code == 200


def test_hint_limits_below_one_are_refused(client):
    key = client.post("/api/sessions", json={"seed": 5}).json()["id"]  # the person has the opening roll
    for limit in (0, -1):
        r = client.get(f"/api/sessions/{key}/hint?limit={limit}")
        assert r.status_code == 422 and "limit" in detail(r)
    assert len(client.get(f"/api/sessions/{key}/hint?limit=2").json()["plays"]) == 2


def test_a_refused_setup_leaves_the_session_as_it_was(client):
    key = client.post("/api/sessions", json={"seed": 5}).json()["id"]
    before = client.get(f"/api/sessions/{key}").json()
    over = format_xgid(Position.from_points({}, {6: 2}).board, score=(3, 2), length=5)
    r = client.post(f"/api/sessions/{key}/setup", json={"position": over})
    assert r.status_code == 422 and "over" in detail(r)
    after = client.get(f"/api/sessions/{key}").json()
    assert after == before and after["match_length"] == 0 and after["score"] == [0, 0]


def test_beyond_its_slots_and_queue_the_server_answers_503_with_retry_after():
    from bgai.frontends.web.app import Work

    work = Work(slots=1, queue=0)
    app = create_app(plies=0, work=work)
    with TestClient(app, base_url="http://127.0.0.1") as c:
        with work.slot():  # a search in progress holds the one slot
            r = c.post("/api/evaluate", json={"position": START})
        assert r.status_code == 503 and r.headers["retry-after"] and "busy" in r.json()["detail"]
        assert c.post("/api/evaluate", json={"position": START}).status_code == 200  # the slot is free again


def test_fuzzed_requests_get_4xx_answers_never_a_5xx_and_every_record_stays_writable(client):
    """A short, seeded run of bgai.coach.fuzz_api over every endpoint (the longer run is ``make fuzz``'s)."""
    from bgai.coach.fuzz_api import fuzz_api, fuzz_parsers

    api = fuzz_api(client, inputs=600, seed=11)
    assert api["failures"] == [] and api["inputs"] > 500
    assert api["refused"] > 100 and api["accepted"] > 20  # it tried both
    parsers = fuzz_parsers(inputs=3000, seed=11)
    assert parsers["failures"] == [] and parsers["refused"] > 1000 and parsers["accepted"] > 50


def test_a_session_hint_gives_each_play_its_cubeful_equity_too(client):
    key = client.post("/api/sessions", json={"seed": 5, "match_length": 5}).json()["id"]  # the person's 53
    plays = client.get(f"/api/sessions/{key}/hint?limit=3").json()["plays"]
    assert len(plays) == 3 and all(0.0 < p["cubeful_equity"] < 1.0 for p in plays)  # match-winning chances
    # ranked by it, each play's difference from the first's
    cubeful = [p["cubeful_equity"] for p in plays]
    assert cubeful == sorted(cubeful, reverse=True)
    assert [p["cubeful_difference"] for p in plays] == pytest.approx([c - cubeful[0] for c in cubeful])
    # and past the first 10, the rest follow by cubeless equity, without one (the opening 64's 14 plays)
    session = client.post("/api/sessions", json={"seed": 1, "position": format_xgid(Position.start().board,
                                                                                       dice=(6, 4))}).json()
    every = client.get(f"/api/sessions/{session['id']}/hint").json()["plays"]
    assert len(every) == 14 and all(p["cubeful_equity"] is None for p in every[10:])
    assert all(p["cubeful_equity"] is not None for p in every[:10])
    bare = client.post("/api/moves", json={"position": START, "dice": "53"}).json()["plays"]
    assert all(p["cubeful_equity"] is None for p in bare)  # a position without a cube has none


def test_the_bots_last_roll_is_shown_on_its_side_until_the_person_rolls(client):
    state = client.post("/api/sessions?svg=true", json={"seed": 0}).json()  # bgai opened with 31; the person rolls
    assert state["phase"] == "roll" and state["last_move"]["player"] == "bot"
    assert 'class="dice" data-roller="top"' in state["svg"]


def test_the_terminal_the_page_and_the_hint_share_one_default_ply(monkeypatch):
    """Without --plies, bgai play, bgai serve, bgai hint and bgai eval all get bgai.eval.bot.PLAY_PLIES, and so do the
    app's new sessions and its positions' requests; each command's help says the value, and the page's New game
    form offers it before it knows the game."""
    from pathlib import Path

    import bgai.frontends.cli as cli
    from bgai.eval.bot import PLAY_PLIES
    from bgai.frontends.cli.common import PERSON_PLIES_DEFAULT, person_plies

    parser = cli.build_parser(train_settings=False, label_settings=False)
    commands = {"play": [], "serve": [], "hint": [START, "31"], "eval": [START], "analyse": ["match.mat"]}
    for command, rest in commands.items():
        assert person_plies(parser.parse_args([command, *rest])) == PLAY_PLIES, command
        assert person_plies(parser.parse_args([command, *rest, "--plies", "2"])) == 2, command
    assert PERSON_PLIES_DEFAULT.startswith(f"default {PLAY_PLIES},")
    served = {}
    monkeypatch.setattr("uvicorn.run", lambda app, **options: served.update(app=app))
    monkeypatch.setattr("bgai.frontends.terminal.Terminal.run",
                        lambda terminal: served.update(terminal=terminal.session.bot))
    assert cli.main(["serve"]) == 0 and cli.main(["play", "--no-save"]) == 0
    assert served["app"].state.bots.default_plies == served["terminal"].plies == PLAY_PLIES
    with TestClient(create_app(), base_url="http://127.0.0.1:8000") as c:
        assert c.app.state.bots.default_plies == PLAY_PLIES
        assert c.post("/api/sessions", json={"seed": 1}).json()["plies"] == PLAY_PLIES
        assert c.post("/api/moves", json={"position": START, "dice": "31"}).json()["plies"] == PLAY_PLIES
    page = (Path(cli.__file__).parents[1] / "web" / "static" / "index.html").read_text()
    assert f'<option value="{PLAY_PLIES}" selected>' in page


def test_the_playing_page_names_every_endpoint_of_the_api_as_the_api_names_it():
    """docs/playing.md's table of endpoints and the app's routes (the OpenAPI page's) are the same paths, written
    the same way: the table's cells give a path, then siblings of it as /suffix."""
    import re
    from pathlib import Path

    table = (Path(__file__).resolve().parents[1] / "docs" / "playing.md").read_text()
    named = set()
    for cell in re.findall(r"^\| `(?:GET|POST|DELETE) (/api/[^`]+)`(.*?)\|", table, re.M):
        base = cell[0].split("?")[0]
        named.add(base)
        for suffix in re.findall(r"`(/[a-z.-]+)", cell[1]):
            named.add(base.rsplit("/", 1)[0] + suffix if base.count("/") > 3 else base + suffix)
    routes = {route.path for route in create_app(plies=0).routes if getattr(route, "path", "").startswith("/api/")}
    assert named == routes, (sorted(named - routes), sorted(routes - named))


def test_the_tutor_refuses_a_bad_play_with_a_409_that_says_why_and_confirm_makes_it(client):
    start = format_xgid(Position.start().board, dice=(3, 1))
    key = client.post("/api/sessions", json={"seed": 1, "position": start, "tutor": 0.03}).json()["id"]
    refused = client.post(f"/api/sessions/{key}/play", json={"move": "24/21 24/23"})
    assert refused.status_code == 409
    tutor = refused.json()["tutor"]
    assert tutor["action"] == "24/23 24/21" and tutor["best"] == "8/5 6/5" and tutor["error"] >= 0.03
    assert tutor["mark"] in ("doubtful", "bad", "very bad") and "the tutor" in refused.json()["detail"]
    assert client.get(f"/api/sessions/{key}").json()["log"] == []  # nothing happened
    made = client.post(f"/api/sessions/{key}/play?confirm=true", json={"move": "24/21 24/23"})
    assert made.status_code == 200 and made.json()["log"][0] == "You roll 31 and play 24/23 24/21"
    # a session without the tutor (the API's default) plays it at once
    plain = client.post("/api/sessions", json={"seed": 1, "position": start}).json()
    assert plain["tutor"] is None
    assert client.post(f"/api/sessions/{plain['id']}/play", json={"move": "24/21 24/23"}).status_code == 200
    # and a threshold below 0 is refused with the field named
    bad = client.post("/api/sessions", json={"tutor": -1})
    assert bad.status_code == 422 and "tutor" in str(bad.json())


# Match analyses ---------------------------------------------------------------------------------------------------

def test_a_match_file_is_analysed_with_progress_and_stored(client):
    """Given a match file's text, When it is posted, Then the job starts at once (202), its progress counts the
    decisions, and once done it holds the analysis (the same as bgai analyse --json's figures) and the match is in
    the study database's list."""
    import time

    from bgai.eval.bot import load_bot
    from bgai.formats.matchfile import read_match
    from bgai.play.analysis import analyse_match

    path = Path(__file__).parent / "data" / "matches" / "gnubg-3pt-seed6.mat"
    r = client.post("/api/analyses", json={"match": path.read_text(), "name": path.name})
    assert r.status_code == 202, r.text
    job = r.json()
    assert job["status"] in ("queued", "running", "done") and job["analysis"] is None
    deadline = time.time() + 180  # (a busy machine: the suite's other worker builds a wheel meanwhile)
    while time.time() < deadline:
        job = client.get(f"/api/analyses/{job['id']}").json()
        if job["status"] in ("done", "failed"):
            break
        time.sleep(0.05)
    assert job["status"] == "done", job
    assert job["done"] == job["total"] > 0 and job["match_id"] is not None
    expected = analyse_match(read_match(path), load_bot(plies=0), progress=False)
    assert [p["error_rate"] for p in job["analysis"]["players"]] == \
        pytest.approx([p.error_rate for p in expected.players], abs=1e-3)
    stored = client.get("/api/analyses").json()
    assert any(m["id"] == job["match_id"] and m["source"] == path.name for m in stored)
    # the stored analysis reads back as the job gave it, and each decision's board is drawn with its arrows
    kept = client.get(f"/api/matches/{job['match_id']}").json()
    assert [d["played"] for d in kept["decisions"]] == [d["played"] for d in job["analysis"]["decisions"]]
    assert kept["graph"] == job["analysis"]["graph"] and kept["players"] == job["analysis"]["players"]
    move = next(d for d in kept["decisions"] if d["kind"] == "move" and d["played"] != d["best"])
    svg = client.get(f"/api/matches/{job['match_id']}/decisions/{move['seq']}/board.svg")
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    assert "#2f9e44" in svg.text and "#e03131" in svg.text  # the best play's arrows, the played one's
    assert client.get("/api/matches/9999").status_code == 404
    name = job["analysis"]["players"][0]["name"]
    view = client.get(f"/api/players/{name}").json()
    assert any(h["match_id"] == job["match_id"] for h in view["history"])
    worst = view["worst"][0]
    assert kept["decisions"][worst["seq"]]["error"] == worst["error"] and worst["match_id"] is not None
    assert client.get("/api/players/Nobody").status_code == 404
    assert client.get(f"/api/matches/{job['match_id']}/decisions/99999/board.svg").status_code == 404
    assert client.get("/analysis").status_code == 200


def test_bad_match_uploads_get_a_clear_4xx(client):
    from bgai.formats.matchfile import MAX_MATCH_FILE_BYTES

    illegal = " 3 point match\n\n Game 1\n Alice : 0   Bob : 0\n  1) 52: 13/8 13/1\n"
    r = client.post("/api/analyses", json={"match": illegal})
    assert r.status_code == 422 and "line" in detail(r)
    r = client.post("/api/analyses", json={"match": "x" * (MAX_MATCH_FILE_BYTES + 100_000)})
    assert r.status_code == 413
    r = client.post("/api/analyses", json={"match": " 3 point match\n"})
    assert r.status_code == 422 and "no game" in detail(r)
    assert client.get("/api/analyses/nope").status_code == 404
    assert client.post("/api/evaluate", json={"position": "x" * 70_000}).status_code == 413  # the usual bound


def test_a_session_survives_a_restart_as_it_stood_after_its_last_step(tmp_path):
    """Given a session that has rolled and stepped a checker, When the server restarts on the same study
    database, Then the session reads back with the same state (dice, the play so far, its log, its version), goes
    on, and a deleted session is gone after a restart too."""
    db = str(tmp_path / "study.sqlite")
    with TestClient(create_app(plies=0, db=db), base_url="http://127.0.0.1:8000") as c:
        s = c.post("/api/sessions", json={"match_length": 3, "seed": 5}).json()
        key = s["id"]
        while s["phase"] != "move":
            s = c.post(f"/api/sessions/{key}/roll").json()
        source, targets = next(iter(s["play"]["targets"].items()))
        s = c.post(f"/api/sessions/{key}/step", json={"from": int(source), "to": targets[0]}).json()
        other = c.post("/api/sessions", json={"match_length": 0}).json()["id"]
        assert c.delete(f"/api/sessions/{other}").status_code == 204
    with TestClient(create_app(plies=0, db=db), base_url="http://127.0.0.1:8000") as c:
        again = c.get(f"/api/sessions/{key}").json()
        assert again == s
        assert c.post(f"/api/sessions/{key}/undo").json()["version"] > s["version"]
        assert c.get(f"/api/sessions/{other}").status_code == 404
        assert c.get("/api/sessions/" + "x" * 500).status_code == 404


def test_drills_through_the_api(tmp_path):
    """Given an analysed match in the study database, When a player's drills are asked for, Then its errors are
    cards, due at once; an answer is judged (the play made loses what the analysis said) and the card goes back
    to the schedule; a bad answer is a 422, an unknown card a 404; a card's board is drawn, with the answer's and
    the best play's arrows when given."""
    from bgai.eval.bot import load_bot
    from bgai.formats.matchfile import read_match
    from bgai.play.analysis import analyse_match
    from bgai.play.database import StudyDatabase

    path = Path(__file__).parent / "data" / "matches" / "gnubg-3pt-seed6.mat"
    db = tmp_path / "study.sqlite"
    with StudyDatabase(db) as study:
        study.add(analyse_match(read_match(path), load_bot(plies=0), progress=False))
    name = read_match(path).players[0]
    with TestClient(create_app(plies=0, db=str(db)), base_url="http://127.0.0.1:8000") as c:
        body = c.get("/api/drills", params={"player": name}).json()
        assert body["added"] == body["progress"]["cards"] == body["progress"]["due"] > 0
        card = next(d for d in body["due"] if d["kind"] == "move")
        verdict = c.post(f"/api/drills/{card['card']}/answer", json={"answer": card["played"]}).json()
        assert verdict["error"] == pytest.approx(card["error"], abs=1e-6) and verdict["rating"] == "Again"
        assert verdict["best"] == card["best"] and verdict["ranked"][0][0] == card["best"]
        again = c.get("/api/drills", params={"player": name}).json()
        assert again["added"] == 0 and again["progress"]["reviews"] == 1
        r = c.post(f"/api/drills/{card['card']}/answer", json={"answer": "24/1"})
        assert r.status_code == 422
        assert c.post("/api/drills/99999/answer", json={"answer": "pass"}).status_code == 404
        plain = c.get(f"/api/drills/{card['card']}/board.svg")
        assert plain.status_code == 200 and "#e03131" not in plain.text
        arrows = c.get(f"/api/drills/{card['card']}/board.svg", params={"answer": card["played"],
                                                                       "best": card["best"]})
        assert "#e03131" in arrows.text and "#2f9e44" in arrows.text
        assert c.get(f"/api/drills/{card['card']}/board.svg", params={"answer": "24/1", "best": "x"}).status_code \
            == 422


def test_a_decision_saved_from_a_session_becomes_a_drill(tmp_path):
    """Given a session on the person's roll, When it saves the decision, Then a card of the person's (its own name,
    or the one given) holds that position and roll, is due, judges an answer like any card, and the person is
    among the drills' players."""
    db = str(tmp_path / "study.sqlite")
    with TestClient(create_app(plies=0, db=db), base_url="http://127.0.0.1:8000") as c:
        s = c.post("/api/sessions", json={"match_length": 5, "seed": 3}).json()
        key = s["id"]
        while s["phase"] != "move":
            s = c.post(f"/api/sessions/{key}/roll").json()
        saved = c.post(f"/api/sessions/{key}/save-card", json={}).json()
        assert saved["kind"] == "move" and saved["player"] == "You"
        assert "You" in c.get("/api/drills/players").json()
        (card,) = c.get("/api/drills", params={"player": "You"}).json()["due"]
        assert card["position_id"] == s["position_id"] and card["dice"] == sorted(s["dice"], reverse=True)
        assert card["length"] == 5 and card["match_id"] is None
        verdict = c.post(f"/api/drills/{card['card']}/answer", json={"answer": card["best"]}).json()
        assert verdict["error"] == pytest.approx(0.0, abs=1e-9) and verdict["rating"] == "Good"
        other = c.post(f"/api/sessions/{key}/save-card", json={"player": "Zoe"}).json()
        assert other["player"] == "Zoe"


def test_a_stored_decision_rolls_out(tmp_path):
    """Given a money session's stored analysis, then a checker play's rollout gives its roll's best plays with
    standard errors, a cube decision's a cubeful rollout's equities; in a match the cube is refused, saying why."""
    from bgai.eval.bot import load_bot
    from bgai.formats.matchfile import read_match
    from bgai.play.analysis import analyse_match
    from bgai.play.database import StudyDatabase

    data = Path(__file__).parent / "data" / "matches"
    db = tmp_path / "study.sqlite"
    bot = load_bot(plies=0)
    with StudyDatabase(db) as study:
        money = study.add(analyse_match(read_match(data / "gnubg-money-seed3.mat"), bot, progress=False))
        match = study.add(analyse_match(read_match(data / "gnubg-3pt-seed6.mat"), bot, progress=False))
        money_decisions = study.analysis(money)["decisions"]
        match_decisions = study.analysis(match)["decisions"]
    with TestClient(create_app(plies=0, db=str(db)), base_url="http://127.0.0.1:8000") as c:
        move = next(d for d in money_decisions if d["kind"] == "move" and d["counted"])
        r = c.post(f"/api/matches/{money}/decisions/{move['seq']}/rollout").json()
        assert r["kind"] == "move" and 1 <= len(r["plays"]) <= 4 and r["trials"] > 0
        assert all(p["se"] > 0 for p in r["plays"]) and r["plays"] == sorted(r["plays"], key=lambda p: -p["equity"])
        cube = next(d for d in money_decisions if d["kind"] == "double")
        r = c.post(f"/api/matches/{money}/decisions/{cube['seq']}/rollout").json()
        assert r["kind"] == "cube" and r["double_pass"] == 1.0 and r["se"][0] > 0
        cube = next(d for d in match_decisions if d["kind"] == "double")
        r = c.post(f"/api/matches/{match}/decisions/{cube['seq']}/rollout")
        assert r.status_code == 422 and "match" in r.json()["detail"]
        assert c.post(f"/api/matches/{money}/decisions/99999/rollout").status_code == 404


def test_the_server_answers_while_a_match_is_analysed(tmp_path):
    """Given a 5-point match being analysed at 2-ply on the server's analysis thread, When the play page asks for an
    evaluation meanwhile, Then it is answered at once, before the analysis is done."""
    import time

    path = Path(__file__).parent / "data" / "matches" / "gnubg-5pt-seed12.mat"
    with TestClient(create_app(plies=0, db=str(tmp_path / "study.sqlite")), base_url="http://127.0.0.1:8000") as c:
        job = c.post("/api/analyses", json={"match": path.read_text(), "plies": 2}).json()
        deadline = time.time() + 60
        while c.get(f"/api/analyses/{job['id']}").json()["status"] == "queued" and time.time() < deadline:
            time.sleep(0.02)
        started = time.perf_counter()
        r = c.post("/api/evaluate", json={"position": START})
        seconds = time.perf_counter() - started
        still = c.get(f"/api/analyses/{job['id']}").json()
        assert r.status_code == 200 and seconds < 2.0, seconds
        assert still["status"] == "running" and still["done"] < still["total"]
