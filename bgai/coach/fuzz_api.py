"""Hostile input for the parsers and every endpoint of ``bgai serve``'s JSON API, seeded and counted.

    python -m bgai.coach.fuzz_api [--inputs 20000] [--seed 1] [--json FILE]

Each input starts from a valid request (or a valid string for a parser) and is mutated: a field replaced by a
hostile value (huge or negative integers, NaN / Infinity / 1e400 literals, lone surrogates, long or Unicode-digit
strings, nested containers, booleans, null), a field dropped or added, the JSON cut, bytes flipped, or the body
replaced by garbage. An input passes when the answer is one bgai means to give:

* the parsers (``Position.parse``, ``Position(board)``, ``parse_dice``, ``Position.play``, ``parse_score``,
  ``xgid_context``): a result, or a ``bgai.BgaiError`` (a ``ValueError``) -- never another exception;
* the API: a 2xx whose numbers are finite, or a 4xx / 503 with a JSON ``detail`` -- never a 5xx or an exception --
  and, after every session action, the session's ``match.mat`` still answers 200 (a game record is always
  writable).

Reported: inputs, accepted, refused, failures (with the first few reproductions) and the slowest input. Exit status
1 on any failure. The test suite runs a short, seeded run of the same fuzzer (tests/test_web_api.py).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

from bgai.core.errors import BgaiError
from bgai.core.files import module_command

START = "4HPwATDgc/ABMA"
XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
MATCH_XGID = "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:3:0:7:10"
HOSTILE: list[Any] = [
    2**70, -(2**70), 2**63, 2**62, -1, 0, 10**6, True, False, None, 3.9, -0.0, "", " ", "\x00", "٦٣", "６３",
    "99999999999999999999", "1e400", "x" * 5000, "9" * 300, "XGID=" + ":" * 50, "4HPwATDgc/ABM=", [], {}, [[[]]],
    {"a": {"b": {"c": []}}}, [2**62] * 26, [0] * 26, [16] + [0] * 25, list(range(26)), [1, 2], [7, 7], ["6", "3"],
    "bar/off " * 30, "13/7 8/7", "24/18*(2)", "66", "6-3", "center", "me", "opponent",
]
# Literals that json.dumps cannot write but a client can send; the server must refuse them cleanly.
START_BOARD = [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0]
RAW = ["NaN", "Infinity", "-Infinity", "1e400", '"\\ud800"', '"\\udfff\\ud800"', "[" * 200 + "]" * 200, "00012"]


def _mutate_value(rng: random.Random, value):
    return rng.choice(HOSTILE + [value])


def _mutate_body(rng: random.Random, body: Any) -> str | bytes:
    """A mutation of ``body`` as the raw bytes of a request."""
    body = dict(body)
    kind = rng.random()
    if kind < 0.45 and body:
        key = rng.choice(list(body))
        if rng.random() < 0.25:
            text = json.dumps({**body, key: "@RAW@"})
            return text.replace('"@RAW@"', rng.choice(RAW))
        body[key] = _mutate_value(rng, body[key])
    elif kind < 0.55 and body:
        body.pop(rng.choice(list(body)))
    elif kind < 0.65:
        body[rng.choice(["extra", "Position", "\u00e9", "plies ", "__proto__"])] = rng.choice(HOSTILE)
    elif kind < 0.75:
        text = json.dumps(body)
        return text[: rng.randrange(len(text) + 1)]
    elif kind < 0.85:
        data = bytearray(json.dumps(body).encode())
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    elif kind < 0.9:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))
    else:
        for key in list(body):
            if rng.random() < 0.5:
                body[key] = _mutate_value(rng, body[key])
    return json.dumps(body)


def _finite(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


# Parsers --------------------------------------------------------------------------------------------------------


def _parser_input(rng: random.Random):
    """(name, call) of one hostile parser input."""
    value: Any  # a string, a board, a roll: whatever the parser of the branch takes
    from bgai.core.cube import CubeOwner
    from bgai.core.match import parse_score
    from bgai.formats.position import Position, parse_dice
    from bgai.formats.xgid import xgid_context

    def text(base: str) -> str:
        s = list(base)
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            at = rng.randrange(len(s) + 1)
            if op < 0.4 and s:
                s[min(at, len(s) - 1)] = rng.choice("0123456789:-=/*()abcxyzABOo\u0663\ud800 \x00")
            elif op < 0.7:
                s.insert(at, rng.choice(["9" * 30, ":", "-1", "XGID=", "\u0666", " " * 50]))
            elif s:
                del s[min(at, len(s) - 1)]
        return "".join(s)

    choice = rng.randrange(7)
    if choice == 0:
        value = text(rng.choice([START, XGID, MATCH_XGID]))
        return "Position.parse", lambda: Position.parse(value)
    if choice == 1:
        values = [0, 1, -1, 15, -15, 16, 2**62, -(2**62), 2**63 - 1]
        board = [rng.choice(values) for _ in range(rng.choice([25, 26, 27]))]
        return "Position(board)", lambda: Position(board)
    if choice == 2:
        value = rng.choice(HOSTILE + [text("63"), (rng.choice(HOSTILE), 2), [float("inf"), 2]])
        return "parse_dice", lambda: parse_dice(value)
    if choice == 3:
        value = text(rng.choice(["24/18 13/11", "8/5(2) 6/5*", "bar/22 6/off"]))
        return "Position.play", lambda: Position.start().play(value, "61")
    if choice == 4:
        value = text(rng.choice([MATCH_XGID, XGID]))
        return "xgid_context", lambda: xgid_context(value)
    if choice == 5:
        value = text("2-3")
        return "parse_score", lambda: parse_score(value)
    value = rng.choice(HOSTILE)
    return "CubeOwner.parse", lambda: CubeOwner.parse(value)


def fuzz_parsers(inputs: int, seed: int) -> dict:
    rng = random.Random(seed)
    counts: dict[str, Any] = {"inputs": 0, "accepted": 0, "refused": 0, "failures": []}
    slowest = (0.0, "")
    for _ in range(inputs):
        name, call = _parser_input(rng)
        start = time.perf_counter()
        try:
            call()
            counts["accepted"] += 1
        except BgaiError:
            counts["refused"] += 1
        except Exception as error:  # noqa: BLE001 -- the point: anything else is a failure
            counts["failures"].append(f"{name}: {type(error).__name__}: {str(error)[:200]}")
        elapsed = time.perf_counter() - start
        slowest = max(slowest, (elapsed, name))
        counts["inputs"] += 1
    counts["slowest_s"], counts["slowest"] = slowest
    return counts


# The API --------------------------------------------------------------------------------------------------------

SESSION_ACTIONS = [
    ("POST", "roll", None), ("POST", "double", None), ("POST", "take", None), ("POST", "pass", None),
    ("POST", "step", {"from": 13, "to": 7}), ("POST", "play", {"move": "13/7 8/7", "finish": True}),
    ("POST", "undo", None), ("POST", "finish", None), ("POST", "resign", {"points": 1}), ("POST", "next", None),
    ("POST", "setup", {"position": MATCH_XGID}), ("GET", "", None), ("GET", "hint", None),
    ("GET", "cube-hint", None),
]
POSITION_REQUESTS = [
    ("/api/evaluate", {"position": START, "plies": 0}),
    ("/api/evaluate", {"position": MATCH_XGID, "cube": 2, "owner": "me", "match": {"length": 7, "score": [2, 3]}}),
    ("/api/moves", {"position": START, "dice": "31", "plies": 0, "limit": 3}),
    ("/api/moves", {"position": START_BOARD, "dice": [6, 6]}),
    ("/api/cube", {"position": XGID, "jacoby": True}),
    ("/api/sessions", {"match_length": 5, "seed": 3, "plies": 0}),
    ("/api/sessions", {"position": MATCH_XGID, "seed": 1}),
]


def _slow(body) -> bool:
    """Requests the fuzzer does not send: deep searches cost seconds and prove nothing more than 0-ply ones."""
    return isinstance(body, dict) and body.get("plies") in (1, 2)


def fuzz_api(client, inputs: int, seed: int) -> dict:
    """``inputs`` hostile requests sent through ``client`` (a ``fastapi.testclient.TestClient`` or an
    ``httpx.Client``), alternating between position requests and actions on a few live sessions."""
    rng = random.Random(seed)
    counts: dict[str, Any] = {"inputs": 0, "accepted": 0, "refused": 0, "failures": [], "statuses": {}}
    slowest = (0.0, "")
    sessions = [client.post("/api/sessions", json={"seed": s, "plies": 0, "match_length": s % 3}).json()["id"]
                for s in range(3)]

    def check(label: str, response, raw) -> None:
        status = response.status_code
        counts["statuses"][status] = counts["statuses"].get(status, 0) + 1
        problem = None
        if status >= 500 and status != 503:
            problem = f"HTTP {status}"
        elif status not in (204,) and not label.endswith("match.mat"):
            try:
                body = response.json()
            except ValueError:
                problem = "the answer is not JSON"
            else:
                if status >= 400 and "detail" not in body:
                    problem = "an error without a detail"
                elif status < 300 and not _finite(body):
                    problem = "a number that is not finite"
                elif status < 300 and "evaluation" in body and body["evaluation"]["equity"] is None:
                    problem = "an evaluation without an equity"
        if problem:
            counts["failures"].append(f"{label} {str(raw)[:300]!s}: {problem}: {response.text[:200]}")
        elif status < 300:
            counts["accepted"] += 1
        else:
            counts["refused"] += 1

    for i in range(inputs):
        if i % 2 == 0:
            path, body = rng.choice(POSITION_REQUESTS)
            method = "POST"
        else:
            key = rng.choice(sessions)
            method, action, body = rng.choice(SESSION_ACTIONS)
            path = f"/api/sessions/{key}" + (f"/{action}" if action else "")
            if action == "hint" and rng.random() < 0.5:
                path += "?limit=" + str(rng.choice([0, -1, 3, "x", 2**70, "1e400"]))
        raw = None if body is None else _mutate_body(rng, body)
        if raw is not None and rng.random() < 0.02:
            raw = json.dumps(body)  # the valid request too, now and then, so sessions move on
        if raw is not None and _slow(_loads(raw)):
            continue
        start = time.perf_counter()
        try:
            if method == "GET":
                response = client.get(path)
            elif raw is None:
                response = client.post(path)
            else:
                response = client.post(path, content=raw, headers={"content-type": "application/json"})
        except Exception as error:  # noqa: BLE001 -- the server raised through the test client: a failure
            counts["failures"].append(f"{method} {path} {str(raw)[:300]}: {type(error).__name__}: {error}")
            continue
        check(f"{method} {path}", response, raw)
        elapsed = time.perf_counter() - start
        slowest = max(slowest, (elapsed, f"{method} {path} {str(raw)[:100]}"))
        counts["inputs"] += 1
        if path.startswith("/api/sessions/") and method == "POST":
            record = client.get(f"/api/sessions/{path.split('/')[3]}/match.mat")
            if record.status_code != 200:
                counts["failures"].append(f"after {method} {path} {str(raw)[:200]}: match.mat answers "
                                          f"{record.status_code}: {record.text[:200]}")
        if path == "/api/sessions" and response.status_code == 201:
            client.delete(f"/api/sessions/{response.json()['id']}")
    counts["slowest_s"], counts["slowest"] = slowest
    return counts


def _loads(raw):
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=20000, help="inputs for the API and as many for the parsers")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="write the counts here")
    args = parser.parse_args(argv)
    from fastapi.testclient import TestClient

    from bgai.frontends.web import create_app

    start = time.perf_counter()
    parsers = fuzz_parsers(args.inputs, args.seed)
    with TestClient(create_app(plies=0), base_url="http://127.0.0.1:8000") as client:
        api = fuzz_api(client, args.inputs, args.seed)
    results = {"command": module_command("bgai.coach.fuzz_api", argv),
               "parsers": parsers, "api": api, "seconds": time.perf_counter() - start}
    for name, counts in (("parsers", parsers), ("api", api)):
        print(f"{name:8s} {counts['inputs']} inputs: {counts['accepted']} accepted, {counts['refused']} refused, "
              f"{len(counts['failures'])} failures; slowest {1000 * counts['slowest_s']:.0f} ms ({counts['slowest']})")
        for failure in counts["failures"][:10]:
            print("   ", failure)
    print("API statuses:", dict(sorted(api["statuses"].items())))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str) + "\n")
    return 1 if parsers["failures"] or api["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
