"""Load test and hint latency of ``bgai serve``'s JSON API, on localhost.

    python -m bgai.coach.web_load [--clients 16] [--seconds 20] [--json benchmarks/results/web.json]

The server runs as ``bgai serve`` in its own process (one uvicorn worker, the bot at --plies, default 0); the
clients run in this one.

* **Latency** first, on the idle server, one request at a time: ``POST /api/moves`` (a hint: every play of a roll
  ranked, with equities and chances) at each ply, 0 to 2, on ``--latency`` positions met in the bot's own games
  with a random roll each; median and 95th percentile of the time to the response, in milliseconds.
* **Load**: ``--clients`` concurrent clients (asyncio and httpx) for ``--seconds``. Each starts its own game
  session (money games, seeded) and loops over: a hint on a random position, an evaluation of one, and an action in
  its session (roll, a checker step chosen among the legal ones the server lists, finishing the play, the next
  game). Reported: requests per second, errors (any non-2xx answer or failed request), and per endpoint the count
  and latency.
* **No lost state**: every answer of a session must carry a higher ``version`` than the one before; at the end each
  session's version must be the last one its client saw, and its .mat record must hold exactly the plays the client
  finished (plus the rolls that could not be played).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from bgai.core.files import provenance, write_json
from bgai.eval.bot import MAX_PLIES
from bgai.formats.matchfile import CheckerPlay, read_mat
from bgai.formats.position import Position


def game_positions(count: int, seed: int) -> list[str]:
    """Position IDs met in random games (both sides to roll), for requests."""
    rng = np.random.default_rng(seed)
    found: list[str] = []
    pos = Position.start()
    while len(found) < count:
        moves = pos.legal_moves(tuple(int(d) for d in rng.integers(1, 7, size=2)))
        pos = moves[rng.integers(len(moves))].after
        if pos.is_game_over():
            pos = Position.start()
        else:
            found.append(pos.position_id())
    return found


def start_server(plies: int, env: dict | None = None) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    bgai = Path(sys.executable).with_name("bgai")
    command = [str(bgai), "serve", "--port", str(port), "--plies", str(plies)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env={**os.environ, **(env or {})})
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if httpx.get(f"{base}/openapi.json", timeout=1).status_code == 200:
                return server, base
        except httpx.HTTPError:
            time.sleep(0.2)
    server.kill()
    errors = server.stderr.read().decode() if server.stderr is not None else ""
    raise SystemExit(f"bgai serve did not start: {errors}")


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q)) if values else float("nan")


def latency(base: str, positions: list[str], plies: int, rng: random.Random) -> dict:
    times = []
    with httpx.Client(base_url=base, timeout=60) as client:
        client.post("/api/moves", json={"position": positions[0], "dice": "31", "plies": plies})  # warm up
        for pos in positions:
            dice = [rng.randint(1, 6), rng.randint(1, 6)]
            started = time.perf_counter()
            r = client.post("/api/moves", json={"position": pos, "dice": dice, "plies": plies})
            times.append(1000 * (time.perf_counter() - started))
            r.raise_for_status()
    return {"plies": plies, "requests": len(times), "median_ms": statistics.median(times),
            "p95_ms": percentile(times, 95), "mean_ms": statistics.fmean(times)}


class Client:
    """One simulated user: hints and evaluations on random positions, and a game session played to and fro."""

    def __init__(self, number: int, http: httpx.AsyncClient, positions: list[str], stats: dict) -> None:
        self.number = number
        self.http = http
        self.positions = positions
        self.stats = stats
        self.rng = random.Random(number)
        self.key: str | None = None
        self.state: dict | None = None
        self.version = -1
        self.finished_plays = 0
        self.lost: list[str] = []

    async def request(self, name: str, method: str, path: str, body=None) -> dict | None:
        started = time.perf_counter()
        r: httpx.Response | None = None
        try:
            r = await self.http.request(method, path, json=body)
        except httpx.HTTPError as error:
            self.stats["failures"].append(f"{name}: {type(error).__name__}")
        ms = 1000 * (time.perf_counter() - started)
        entry = self.stats["endpoints"].setdefault(name, {"count": 0, "errors": 0, "ms": []})
        entry["count"] += 1
        entry["ms"].append(ms)
        if r is None or r.status_code >= 300:
            entry["errors"] += 1
            if r is not None:
                self.stats["failures"].append(f"{name}: {r.status_code} {r.text[:200]}")
            return None
        return r.json() if r.headers.get("content-type", "").startswith("application/json") else {"text": r.text}

    def seen(self, state: dict | None) -> None:
        if state is None:
            return
        if state["version"] <= self.version:
            self.lost.append(f"session {self.key}: version {state['version']} after {self.version}")
        self.version = state["version"]
        self.state = state

    async def session_action(self) -> None:
        s, key = self.state, self.key
        if s is None:  # (the session was made in run before any action)
            return
        if s["phase"] == "roll":
            self.seen(await self.request("session roll", "POST", f"/api/sessions/{key}/roll"))
        elif s["phase"] == "take":
            self.seen(await self.request("session take", "POST", f"/api/sessions/{key}/take"))
        elif s["phase"] == "move" and s["play"]["complete"]:
            state = await self.request("session finish", "POST", f"/api/sessions/{key}/finish")
            if state is not None:
                self.finished_plays += 1
            self.seen(state)
        elif s["phase"] == "move":
            source, targets = self.rng.choice(sorted(s["play"]["targets"].items()))
            body = {"from": int(source), "to": self.rng.choice(targets)}
            self.seen(await self.request("session step", "POST", f"/api/sessions/{key}/step", body))
        elif s["phase"] == "game_over":
            self.seen(await self.request("session next", "POST", f"/api/sessions/{key}/next"))

    async def run(self, until: float) -> None:
        state = await self.request("session new", "POST", "/api/sessions", {"seed": self.number, "plies": 0})
        if state is None:
            return
        self.key = state["id"]
        self.seen(state)
        turn = 0
        while time.perf_counter() < until:
            kind = turn % 3
            turn += 1
            if kind == 0:
                dice = [self.rng.randint(1, 6), self.rng.randint(1, 6)]
                await self.request("hint (moves)", "POST", "/api/moves",
                                   {"position": self.rng.choice(self.positions), "dice": dice, "limit": 5})
            elif kind == 1:
                await self.request("evaluate", "POST", "/api/evaluate", {"position": self.rng.choice(self.positions)})
            else:
                await self.session_action()

    async def check(self) -> bool:
        """The session holds what this client did: the version it last saw, and exactly its plays."""
        if self.key is None:
            return False
        final = await self.request("session get", "GET", f"/api/sessions/{self.key}")
        if final is None or final["version"] != self.version:
            self.lost.append(f"session {self.key}: version {final and final['version']}, client saw {self.version}")
            return False
        mat = await self.request("session .mat", "GET", f"/api/sessions/{self.key}/match.mat")
        if mat is None:
            self.lost.append(f"session {self.key}: its match.mat did not answer")
            return False
        record = read_mat(mat["text"])
        plays = sum(1 for g in record.games for a in g.actions
                    if isinstance(a, CheckerPlay) and a.player == 0 and str(a.move) != "no play")
        if plays != self.finished_plays:
            self.lost.append(f"session {self.key}: {plays} plays recorded, client finished {self.finished_plays}")
            return False
        return True


async def load(base: str, clients: int, seconds: float, positions: list[str]) -> dict:
    stats: dict[str, Any] = {"endpoints": {}, "failures": []}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:
        users = [Client(i, http, positions, stats) for i in range(clients)]
        started = time.perf_counter()
        await asyncio.gather(*(u.run(started + seconds) for u in users))
        elapsed = time.perf_counter() - started
        requests = sum(e["count"] for e in stats["endpoints"].values())
        errors = sum(e["errors"] for e in stats["endpoints"].values())
        verified = await asyncio.gather(*(u.check() for u in users))
    endpoints = {name: {"count": e["count"], "errors": e["errors"], "median_ms": statistics.median(e["ms"]),
                        "p95_ms": percentile(e["ms"], 95)}
                 for name, e in sorted(stats["endpoints"].items())}
    lost = [message for u in users for message in u.lost]
    return {
        "clients": clients, "seconds": elapsed, "requests": requests, "requests_per_s": requests / elapsed,
        "errors": errors, "failures": stats["failures"][:20], "sessions": clients,
        "sessions_verified": int(sum(verified)), "lost_state": lost,
        "plays_finished": sum(u.finished_plays for u in users), "endpoints": endpoints,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients (default 16)")
    parser.add_argument("--seconds", type=float, default=20, help="length of the load test (default 20)")
    parser.add_argument("--latency", type=int, default=200, help="hints timed at each ply (default 200)")
    parser.add_argument("--plies", type=int, default=0, help="the server's default plies (default 0)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--torch-threads", type=int, help="OMP_NUM_THREADS of the server (default: torch's own)")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)

    positions = game_positions(max(args.latency, 500), args.seed)
    threads = {"OMP_NUM_THREADS": str(args.torch_threads)} if args.torch_threads else None
    server, base = start_server(args.plies, threads)
    try:
        rng = random.Random(args.seed)
        hint = {f"{p}-ply": latency(base, positions[:args.latency], p, rng) for p in range(MAX_PLIES + 1)}
        for name, h in hint.items():
            print(f"hint latency {name}: median {h['median_ms']:.1f} ms, p95 {h['p95_ms']:.1f} ms "
                  f"({h['requests']} sequential requests)")
        result = asyncio.run(load(base, args.clients, args.seconds, positions))
    finally:
        server.terminate()
        server.wait(10)
    print(f"load: {result['clients']} clients for {result['seconds']:.1f} s: {result['requests']} requests, "
          f"{result['requests_per_s']:.1f} requests/s, {result['errors']} errors; sessions verified "
          f"{result['sessions_verified']}/{result['sessions']}, lost state: {len(result['lost_state'])}, "
          f"{result['plays_finished']} plays finished")
    for name, e in result["endpoints"].items():
        print(f"  {name:<16} {e['count']:6d} requests  {e['errors']} errors  median {e['median_ms']:7.1f} ms  "
              f"p95 {e['p95_ms']:7.1f} ms")
    for failure in result["failures"]:
        print("  failure:", failure)
    if args.json:
        command = " ".join(["python", "-m", "bgai.coach.web_load", *(argv if argv is not None else sys.argv[1:])])
        figures = {**provenance(command), "platform": platform.platform(),
                   "load_average_1min_after": os.getloadavg()[0], "hint_latency": hint, "load": result}
        write_json(args.json, figures)
        print(f"wrote {args.json}")
    if result["errors"] or result["lost_state"] or result["sessions_verified"] != result["sessions"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
