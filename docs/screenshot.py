"""Take docs/board.png, the screenshot of the play page in the README, docs/board-phone.png, the same page on a
phone's screen (390 x 844), and the study views of docs/study.md: docs/analysis.png (the analysis page with a match
file analysed at 0-ply), docs/player.png (a player's error rate over time and worst decisions), docs/drill.png (a
drill answered) and docs/score-grid.png (a cube hint's grid at every score).

Runs the web app in this process, plays a seeded game through the API to a middle-game position with the person
to move, then shows it in Debian's headless Chromium (through Playwright's Python package) with a checker picked
up and the hint open, and saves the screenshot.

    .venv/bin/python docs/screenshot.py [--out docs/board.png] [--phone docs/board-phone.png] [--seed 7] [--turns 9]
                                        [--analysis docs/analysis.png] [--player docs/player.png]
                                        [--drill docs/drill.png] [--score-grid docs/score-grid.png]
"""

from __future__ import annotations

import argparse
import socket
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn
from playwright.sync_api import sync_playwright

from bgai.eval.bot import PLAY_PLIES
from bgai.frontends.web import create_app

MATCH = Path(__file__).parents[1] / "tests" / "data" / "matches" / "gnubg-5pt-seed12.mat"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).with_name("board.png")))
    parser.add_argument("--phone", default=str(Path(__file__).with_name("board-phone.png")))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--turns", type=int, default=9, help="the person's plays before the picture")
    parser.add_argument("--analysis", default=str(Path(__file__).with_name("analysis.png")))
    parser.add_argument("--player", default=str(Path(__file__).with_name("player.png")))
    parser.add_argument("--drill", default=str(Path(__file__).with_name("drill.png")))
    parser.add_argument("--score-grid", default=str(Path(__file__).with_name("score-grid.png")))
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    study = Path(tempfile.mkdtemp(prefix="bgai-shot-db-")) / "study.sqlite"  # (not the user's study database)
    server = uvicorn.Server(uvicorn.Config(create_app(db=str(study)), host="127.0.0.1", port=port,
                                           log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"

    # A 7-point match; the person plays the bot's favourite plays and takes, until its play of turn --turns.
    api = httpx.Client(base_url=base, timeout=60)
    state = api.post("/api/sessions", json={"match_length": 7, "seed": args.seed, "plies": PLAY_PLIES}).json()
    key, turns = state["id"], 0
    while True:
        if state["phase"] == "roll":
            state = api.post(f"/api/sessions/{key}/roll").json()
        elif state["phase"] == "take":
            state = api.post(f"/api/sessions/{key}/take").json()
        elif state["phase"] == "move":
            if turns == args.turns:
                break
            best = api.get(f"/api/sessions/{key}/hint?limit=1").json()["plays"][0]["play"]
            state = api.post(f"/api/sessions/{key}/play", json={"move": best}).json()
            turns += 1
        else:
            raise SystemExit(f"the game ended before turn {args.turns}: try another --seed")

    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            tempfile.mkdtemp(prefix="bgai-shot-"), executable_path=args.chromium, headless=True, args=ARGS,
            viewport={"width": 1440, "height": 860}, device_scale_factor=1)
        page = context.new_page()
        page.goto(f"{base}/?session={key}")
        page.wait_for_selector("#board svg")
        page.click("#hint")
        page.wait_for_selector("#advice:not([hidden]) tr.pick")
        source = next(iter(state["play"]["targets"]))
        page.click(f'.hit[data-point="{"bar" if source == "25" else source}"]', force=True)
        page.wait_for_timeout(200)
        page.screenshot(path=args.out, full_page=False)
        page.set_viewport_size({"width": 390, "height": 844})
        page.wait_for_timeout(200)
        page.screenshot(path=args.phone, full_page=False)
        # The analysis page: a 5-point match of the test suite's, analysed at 0-ply, its second error shown.
        page.set_viewport_size({"width": 1440, "height": 1000})
        page.goto(f"{base}/analysis")
        page.set_input_files("#upload-file", str(MATCH))
        page.select_option("#upload-plies", "0")
        page.click("#upload-submit")
        page.wait_for_selector("#decisions li.current", timeout=120_000)
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => document.querySelector('#decision-board img').complete")
        page.wait_for_timeout(300)
        page.screenshot(path=args.analysis, full_page=False)
        # A player's view, then a drill of its errors answered with the play it made.
        page.select_option("#player-name", "Alice")
        page.click("#player-show")
        page.wait_for_selector("#decision ol li")
        page.screenshot(path=args.player, full_page=False)
        page.select_option("#drill-player", "Alice")
        page.click("#drill-start")
        page.wait_for_selector("#decision h3:has-text('Card')")
        card = page.evaluate("() => drill.due.find((c) => c.kind === 'move')")
        page.evaluate(f"() => {{ drill.index = drill.due.findIndex((c) => c.card === {card['card']}); showCard(); }}")
        page.fill("#drill-text", card["played"])
        page.click("#drill-answer button")
        page.wait_for_selector("#drill-verdict .verdict")
        page.wait_for_function("() => document.querySelector('#decision-board img').src.includes('answer=')")
        page.wait_for_timeout(500)
        page.screenshot(path=args.drill, full_page=False)
        # The cube hint's grid at every score, in a double/take position of a 7-point match.
        xgid = "XGID=---CDDD-----------bcddb---:0:0:1:00:0:0:0:7:10"
        page.goto(f"{base}/?new=1&tutor=off&plies=0&position={xgid.replace('=', '%3D')}")
        page.wait_for_selector("#board svg")
        page.click("#cube-hint")
        page.wait_for_selector("#cube-scores")
        page.click("#cube-scores")
        page.wait_for_selector("#score-grid table.grid")
        page.wait_for_timeout(300)
        page.screenshot(path=args.score_grid, full_page=False)
        context.close()
    server.should_exit = True
    print(f"wrote {args.out}: {state['xgid']}")


if __name__ == "__main__":
    main()
