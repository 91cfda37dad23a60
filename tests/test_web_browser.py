"""The play page in a real browser: Debian's headless Chromium, driven with Playwright's Python package.

The server runs in a thread on a free port (bot at 0-ply, so the bot answers at once). Each test loads the page and
plays as a person does: clicking and dragging checkers, asking a hint, doubling, taking, finishing a game. The page
keeps the session in a global ``state`` (what the server last sent), which the tests read to know what to click.
"""

from __future__ import annotations

import re
import shutil
import tempfile

import pytest

from bgai import Position
from bgai.formats.xgid import format_xgid

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(shutil.which("chromium") is None,
                                reason="Debian's chromium is not installed (make system-deps installs it)")
playwright_api = pytest.importorskip("playwright.sync_api", reason="the playwright package (pip install -e '.[dev]')")

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DOUBLE_TAKE = Position.from_points({6: 4, 5: 4, 4: 4, 3: 3}, {18: 2, 19: 3, 20: 4, 21: 4, 22: 2})


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            tempfile.mkdtemp(prefix="bgai-chromium-"), executable_path=CHROMIUM, headless=True, args=ARGS,
            viewport={"width": 1400, "height": 950})
        yield context
        context.close()


@pytest.fixture
def new_page(browser):
    """An opener of pages (``new_page(base)``, ``page.base`` its server), each page's script errors collected: the
    pages still open are closed after the test, which fails if any of them raised one. (A test that starts servers
    names ``serve`` before it, so that its pages close before its servers stop.)"""
    pages, errors = [], []

    def open_page(base: str | None = None):
        page = browser.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.base = base
        pages.append(page)
        return page
    yield open_page
    for page in pages:
        if not page.is_closed():
            page.close()
    assert not errors, errors


@pytest.fixture
def page(new_page, web_server):
    return new_page(web_server)


def open_game(page, query: str) -> dict:
    page.goto(f"{page.base}/?{query}" + ("" if "tutor=" in query else "&tutor=off"))  # (the tutor: its own tests)
    page.wait_for_selector("#board svg")
    page.wait_for_function("() => typeof state === 'object' && state !== null")
    return page.evaluate("() => state")


def state(page) -> dict:
    return page.evaluate("() => state")


def wait_after(page, version: int) -> dict:
    page.wait_for_function("v => state.version > v", arg=version)
    return state(page)


def click_point(page, point: int) -> None:
    name = "bar" if point == 25 else "off" if point == 0 else str(point)
    page.click(f'.hit[data-point="{name}"]', force=True)


def play_by_clicking(page) -> dict:
    """Make the play one checker at a time, clicking a lit checker then a lit point, then click the dice."""
    s = state(page)
    while not s["play"]["complete"]:
        source, targets = next(iter(s["play"]["targets"].items()))
        click_point(page, int(source))
        lit = page.eval_on_selector_all(".hit.lit", "els => els.map(e => e.dataset.point)")
        assert lit, "the points the checker can reach light up"
        click_point(page, targets[0])
        s = wait_after(page, s["version"])
    page.click(".dice", force=True)
    return wait_after(page, s["version"])


def test_playing_moves_by_clicking_and_dragging_and_asking_a_hint(page):
    s = open_game(page, "seed=4&match=0&plies=0")
    moves_made = 0
    while moves_made < 3:
        if s["phase"] in ("roll", "take"):
            page.click("#roll" if s["phase"] == "roll" else "#take")
            s = wait_after(page, s["version"])
            continue
        assert s["phase"] == "move"
        if moves_made == 0:
            page.click("#hint")
            page.wait_for_selector("#advice:not([hidden]) tr.pick")
            best = page.inner_text("#advice tr.pick td:nth-child(2)")
            api = page.evaluate(f"() => fetch('/api/sessions/{s['id']}/hint?limit=8').then(r => r.json())")
            assert best == api["plays"][0]["play"]
        if moves_made == 1:  # drag a checker to a lit point
            source, targets = next(iter(s["play"]["targets"].items()))
            src = page.locator(f'.hit[data-point="{"bar" if source == "25" else source}"]').bounding_box()
            dst = page.locator(f'.hit[data-point="{targets[0] or "off"}"]').bounding_box()
            page.mouse.move(src["x"] + src["width"] / 2, src["y"] + src["height"] / 2)
            page.mouse.down()
            page.mouse.move(dst["x"] + dst["width"] / 2, dst["y"] + dst["height"] / 2, steps=8)
            page.mouse.up()
            s = wait_after(page, s["version"])
            assert s["play"]["steps"], "the dragged checker moved"
        log_before = len(s["log"])
        s = play_by_clicking(page)
        moves_made += 1
        assert any(line.startswith(("You roll", "You win the opening roll")) for line in s["log"][log_before:])
    assert page.locator("#log li").count() == len(s["log"])


def test_undo_and_a_typed_play(page):
    open_game(page, "match=0&plies=0&position=" + format_xgid(Position.start().board, dice=(6, 5)).replace("=", "%3D"))
    s = state(page)
    click_point(page, 24)
    click_point(page, 18)
    s = wait_after(page, s["version"])
    assert s["play"]["text"] == "24/18" and not page.is_disabled("#undo")
    page.click("#undo")
    s = wait_after(page, s["version"])
    assert s["play"]["steps"] == []
    page.fill("#play-text", "24/14")
    page.click("#play-form button")
    page.wait_for_selector("#error:not([hidden])")
    assert "not part of any legal play" in page.inner_text("#error")
    page.fill("#play-text", "24/13")
    page.click("#play-form button")
    s = wait_after(page, s["version"])
    assert s["log"][0] == "You roll 65 and play 24/13" and page.is_hidden("#error")


def test_doubling_and_taking_in_the_browser(page):
    s = open_game(page, "plies=0&match=0&seed=2")
    page.fill("#setup-text", format_xgid(DOUBLE_TAKE.board))
    page.click("#setup-form button")
    s = wait_after(page, s["version"])
    assert not page.is_disabled("#double")
    page.click("#cube-hint")
    page.wait_for_selector("#advice:not([hidden])")
    assert "Double, take" in page.inner_text("#advice")
    page.click("#double")
    s = wait_after(page, s["version"])
    assert s["log"][:2] == ["You double to 2", "bgai takes"]
    assert "cube 2 (bgai's)" in page.inner_text("#scoreboard")
    assert page.locator('.cube[data-owner="top"]').count() == 1  # drawn on the bot's side
    # The bot doubles: take it.
    page.fill("#setup-text", format_xgid(DOUBLE_TAKE.switched().board, x_on_roll=False))
    page.click("#setup-form button")
    s = wait_after(page, s["version"])
    assert s["phase"] == "take" and not page.is_disabled("#take")
    page.click("#take")
    s = wait_after(page, s["version"])
    assert s["cube"]["owner"] == "you" and "You take" in s["log"]


def test_the_cube_hints_roll_out_button_shows_the_rollouts_answer(page):
    """Given seven on the ace point against six in a money game (every roll leaves both sides in the two-sided
    bear-off database: a rollout's answer there is exact), When the person asks the cube hint and clicks its Roll
    out button, Then the box says the answer is a rollout's and shows the rollout's equities, the API's; in a match
    the button is disabled and its tooltip says why."""
    s = open_game(page, "match=0&plies=0&position=aAcAgD8AAAAAAA")
    assert s["phase"] == "roll"
    page.click("#cube-hint")
    page.wait_for_selector("#advice:not([hidden]) #cube-rollout:not([disabled])")
    assert "formula" in page.inner_text("#advice .note")
    page.evaluate("""() => {  // the button says it is busy while the rollout runs
      const button = document.getElementById("cube-rollout");
      window.busySeen = [];
      new MutationObserver(() => { if (button.getAttribute("aria-busy") === "true") {
        window.busySeen.push([button.textContent, button.disabled]); } }).observe(button, { attributes: true });
    }""")
    page.click("#cube-rollout")
    page.wait_for_selector("#advice h3:has-text('(rollout)')")
    assert ["Rolling out…", True] in page.evaluate("() => window.busySeen")
    assert page.inner_text("#advice h3") == "Cube hint (rollout): Double, pass"
    assert "cubeful rollout" in page.inner_text("#advice .note") and page.is_disabled("#cube-rollout")
    rows = page.eval_on_selector_all("#advice tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    api = page.evaluate(f"() => fetch('/api/sessions/{s['id']}/cube-hint?rollout=true').then(r => r.json())")
    assert api["method"] == "rollout"
    assert rows == [["No double", f"+{api['equities']['no_double']:.3f}"],
                    ["Double, take", f"+{api['equities']['double_take']:.3f}"], ["Double, pass", "+1.000"]]
    assert rows[:2] == [["No double", "+0.956"], ["Double, take", "+1.694"]]  # the database's (docs/cube.md)
    open_game(page, "new=1&plies=0&position=" + format_xgid(DOUBLE_TAKE.board, length=5).replace("=", "%3D"))
    page.click("#cube-hint")
    page.wait_for_selector("#advice:not([hidden]) #cube-rollout")
    assert page.is_disabled("#cube-rollout") and "5-point match" in page.get_attribute("#cube-rollout", "title")


def test_finishing_a_game_and_starting_the_next(page):
    """Given the person bearing off its last two checkers with 6-5, When it bears them off by clicking and
    clicks the dice, Then the game is over, the page says so, and Next game starts game 2."""
    near_end = Position.from_points({1: 1, 2: 1}, {24: 3, 23: 2})
    s = open_game(page, "plies=0&match=3&seed=1&position=" + format_xgid(near_end.board, dice=(6, 5), length=3)
                  .replace("=", "%3D"))
    assert s["phase"] == "move"
    assert s["play"]["targets"] == {"2": [0]}  # [Off] the 1-point checker must wait: the 2 is higher
    s = play_by_clicking(page)
    assert s["phase"] == "game_over" and s["score"] == [1, 0]
    assert "You won game 1" in page.inner_text("#status")
    assert not page.is_disabled("#next")
    page.click("#next")
    s = wait_after(page, s["version"])
    assert s["game"] == 2 and s["phase"] in ("roll", "move")
    with page.expect_download() as download:
        page.click("#download")
    text = open(download.value.path()).read()
    # The set-up game cannot be in a .mat file (it starts every game from the opening position); game 2 is.
    assert " 3 point match" in text and " You : 1 " in text


def test_a_bad_position_to_set_up_shows_the_reason(page):
    s = open_game(page, "plies=0&seed=1&new=1")
    page.fill("#setup-text", "4HPwATDgc/ABM")
    page.click("#setup-form button")
    page.wait_for_selector("#error:not([hidden])")
    assert "14 base64 characters" in page.inner_text("#error")
    assert state(page)["version"] == s["version"]


def test_a_hint_never_outlives_the_decision_it_answers(page):
    """Given the hint on the person's plays open, When it finishes its play and the game moves on, Then the hint is
    gone (it never shows a roll other than the current one); the same for the cube hint before rolling."""
    s = open_game(page, "seed=4&match=0&plies=0")
    checked = set()
    for _ in range(40):
        if checked == {"plays", "cube"}:
            break
        if s["phase"] == "move":
            page.click("#hint")
            page.wait_for_selector("#advice:not([hidden]) tr.pick")
            assert f"{s['dice'][0]}-{s['dice'][1]}" in page.inner_text("#advice h3")
            click_point(page, int(next(iter(s["play"]["targets"]))))  # a step of the same play keeps it up
            first = next(iter(s["play"]["targets"].items()))
            click_point(page, first[1][0])
            s = wait_after(page, s["version"])
            assert page.is_visible("#advice") or s["phase"] != "move"
            s = play_by_clicking(page) if s["phase"] == "move" else s
            assert page.is_hidden("#advice"), "the hint of a finished play is gone"
            checked.add("plays")
        elif s["phase"] == "roll":
            if s["cube"]["may_double"] and "cube" not in checked:
                page.click("#cube-hint")
                page.wait_for_selector("#advice:not([hidden])")
                page.click("#roll")
                s = wait_after(page, s["version"])
                assert page.is_hidden("#advice"), "the cube hint of a roll made is gone"
                checked.add("cube")
            else:
                page.click("#roll")
                s = wait_after(page, s["version"])
        elif s["phase"] == "take":
            page.click("#take")
            s = wait_after(page, s["version"])
        else:
            page.click("#next")
            s = wait_after(page, s["version"])
    assert checked == {"plays", "cube"}


def test_the_api_docs_render_offline(page):
    """/docs loads Swagger UI from the server itself: every request the page makes goes to the server, and the
    endpoints are listed."""
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{page.base}/docs")
    page.wait_for_selector(".opblock", timeout=15000)
    assert page.locator(".opblock").count() >= 10  # the position and session endpoints
    assert requested and all(url.startswith(page.base) for url in requested), requested


@pytest.mark.parametrize("width, height", [(390, 844), (1280, 800)])
def test_the_page_fits_a_phone_without_scrolling_sideways(page, width, height):
    """At 390 x 844 (a phone) and 1280 x 800 the page is no wider than the screen: no horizontal scroll, the API
    link and the score on screen, the board at least 360 px wide, also with the hint open."""
    page.set_viewport_size({"width": width, "height": height})
    s = open_game(page, "seed=4&match=5&plies=0")
    while s["phase"] != "move":
        page.click("#roll" if s["phase"] == "roll" else "#take")
        s = wait_after(page, s["version"])
    page.click("#hint")
    page.wait_for_selector("#advice:not([hidden]) tr.pick")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    for selector in ("header nav a", "#scoreboard", "#board svg"):
        box = page.locator(selector).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, (selector, box)
    assert page.locator("#board svg").bounding_box()["width"] >= 360


def test_resigning_asks_first_and_the_new_game_form_shows_the_game_being_played(page):
    s = open_game(page, "seed=4&match=5&plies=0")
    assert page.input_value("#new-length") == "5" and page.input_value("#new-plies") == "0"
    while s["phase"] not in ("roll", "move"):
        page.click("#take")
        s = wait_after(page, s["version"])
    page.select_option("#resign-level", "2")
    assert page.inner_text("#resign-level option[value='2']") == f"gammon ({2 * s['cube']['value']} points)"
    page.click("#resign")
    assert "Sure? Resign a gammon" in page.inner_text("#resign")
    page.wait_for_timeout(200)
    assert state(page)["version"] == s["version"]  # one click resigns nothing
    page.click("#resign")
    s = wait_after(page, s["version"])
    assert any("resign" in line for line in s["log"])
    money = open_game(page, "new")  # a plain page opens a money game
    assert money["match_length"] == 0 and page.input_value("#new-length") == "0"


def test_a_roll_with_no_play_is_shown_with_its_dice(page):
    """Given the person on the bar against a closed board, When it rolls, Then the turn passes at once and the status
    line says what it rolled (You roll NN: no play) beside the bot's reply."""
    closed = Position.from_points({"bar": 1, 6: 14}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 12: 3})
    s = open_game(page, "seed=4&match=0&plies=0&position=" + format_xgid(closed.board))
    assert s["phase"] == "roll"
    page.click("#roll")
    s = wait_after(page, s["version"])
    status = page.inner_text("#status")
    assert re.search(r"You roll \d\d: no play", status), status
    assert "bgai rolls" in status


def test_the_first_paint_claims_no_game(page):
    """Given the page drawn before its script runs (JavaScript off), When a money game is asked for, Then no action
    button is lit or enabled, and nothing says a match length (the New game form, which the script fills in with
    the game's own, is hidden); the page says it needs its script."""
    session = page.context.new_cdp_session(page)
    session.send("Emulation.setScriptExecutionDisabled", {"value": True})
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{page.base}/?match=0")
    enabled = page.eval_on_selector_all("button, select, #play-text",
                                        "els => els.filter(e => !e.disabled && e.getClientRects().length)"
                                        ".map(e => e.id || e.textContent)")
    assert enabled == []
    lit = page.eval_on_selector_all("button", "els => els.filter(e => getComputedStyle(e).backgroundColor !== "
                                              "getComputedStyle(document.querySelector('#roll')).backgroundColor)"
                                              ".map(e => e.id)")
    assert lit == []  # Take, Done and Next game are green only when enabled
    text = page.inner_text("body")
    assert not re.search(r"\d+[- ]points?\b|match", text, re.I), text
    assert page.is_hidden("#new-card") and page.is_hidden("#download")
    assert "turn JavaScript on" in text


def visible_text_sizes(page) -> list:
    """[text, size in screen pixels] of every piece of text drawn: the board's (its font size times the board's
    scale on screen), every text node and every form control of the page."""
    return page.evaluate("""() => {
      const out = [];
      const svg = document.querySelector("#board svg");
      const scale = svg.getScreenCTM().a;
      for (const t of svg.querySelectorAll("text")) {
        if (t.getClientRects().length && t.getBoundingClientRect().width > 0) {
          out.push([t.textContent, parseFloat(getComputedStyle(t).fontSize) * scale]);
        }
      }
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      while (walker.nextNode()) {
        const node = walker.currentNode, element = node.parentElement;
        if (!node.textContent.trim() || element.closest("svg, option, script, noscript")) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        if (range.getClientRects().length) {
          out.push([node.textContent.trim().slice(0, 40), parseFloat(getComputedStyle(element).fontSize)]);
        }
      }
      for (const e of document.querySelectorAll("input, select, button")) {
        if (e.getClientRects().length) out.push([e.id || e.tagName, parseFloat(getComputedStyle(e).fontSize)]);
      }
      return out;
    }""")


def test_on_a_phone_no_text_is_under_11_px(page):
    """At 390 x 844, with the hint open on a board with a stack of six (its count drawn on the checker), checkers
    borne off (their count in the tray) and the cube turned: the pip counts, in the score line there, and every other
    text, the board's included (its font size times its scale on screen), are at least 11 px high."""
    page.set_viewport_size({"width": 390, "height": 844})
    stacked = Position.from_points({6: 7, 5: 3, 4: 2}, {19: 6, 20: 4, 24: 2})  # 3 off each
    s = open_game(page, "match=0&plies=0&position=" + format_xgid(stacked.board, dice=(3, 1), cube=2, owner=1)
                  .replace("=", "%3D"))
    assert s["phase"] == "move"
    page.click("#hint")
    page.wait_for_selector("#advice:not([hidden]) tr.pick")
    pips = page.eval_on_selector_all("#scoreboard .pips", "els => els.map(e => [e.textContent, "
                                                          "parseFloat(getComputedStyle(e).fontSize)])")
    assert [text for text, _ in pips] == [f"{s['pips'][0]} pips", f"{s['pips'][1]} pips"]
    assert all(size >= 11 for _, size in pips) and page.is_visible("#scoreboard .pips")
    assert page.is_hidden("#board .pip-counts")  # the board's own would be under 6 px
    sizes = visible_text_sizes(page)
    drawn = [text for text, _ in sizes]
    assert {"7", "3", "2", "24", "1"} <= set(drawn)  # the stack's count, the trays', the cube, point numbers
    small = [(text, round(size, 1)) for text, size in sizes if size < 11]
    assert small == []
    page.set_viewport_size({"width": 1280, "height": 800})  # a wide screen: the board's pip counts, none in the line
    assert page.is_visible("#board .pip-counts") and page.is_hidden("#scoreboard .pips")


def test_the_pages_hint_is_in_the_order_of_what_it_shows(page):
    """Given the opening 64 against the 1-ply bot (move filtering leaves most of its 14 plays at 0-ply), When the
    person asks for a hint, Then the rows are the API's, ranked by the cubeful equity of the first column, each
    row's Diff from the first row's cubeful equity, each play's cubeless equity at its Ply, and the note names the
    one network and the unit once."""
    s = open_game(page, "match=0&plies=1&position=" + format_xgid(Position.start().board, dice=(6, 4))
                  .replace("=", "%3D"))
    page.click("#hint")
    page.wait_for_selector("#advice:not([hidden]) tr.pick")
    heads = page.eval_on_selector_all("#advice th", "els => els.map(e => e.textContent)")
    assert heads[:6] == ["#", "Play", "Cubeful", "Diff", "Cubeless", "Ply"]
    rows = page.eval_on_selector_all("#advice tr.pick", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    api = page.evaluate(f"() => fetch('/api/sessions/{s['id']}/hint?limit=8').then(r => r.json())")
    assert [(row[1], int(row[5])) for row in rows] == [(p["play"], p["plies"]) for p in api["plays"]]
    assert {p["plies"] for p in api["plays"]} == {0, 1} and rows[0][3] == ""
    cubeful = [float(row[2]) for row in rows]
    assert cubeful == sorted(cubeful, reverse=True)
    for row in rows[1:]:
        assert float(row[3]) == pytest.approx(float(row[2]) - cubeful[0], abs=1.5e-3)
    note = page.inner_text("#advice .note")
    assert note.count("bgai:") == 1 and "units of the stake" in note and "at 1-ply" in note


def test_the_pages_tutor_asks_before_a_bad_play_and_takes_it_back_or_makes_it(page):
    """Given the opening 31 with the tutor on (the page's default), When the person types 24/21 24/23 and answers
    the tutor's question with Cancel, Then nothing is played and the page says what is best; When it types it again
    and answers OK, Then the play is made."""
    s = open_game(page, "tutor=on&match=0&plies=0&position=" + format_xgid(Position.start().board, dice=(3, 1))
                  .replace("=", "%3D"))
    assert s["tutor"] == 0.03 and page.is_checked("#new-tutor")
    asked = []

    def answer(accept):
        def handle(dialog):
            asked.append(dialog.message)
            dialog.accept() if accept else dialog.dismiss()
        return handle

    page.once("dialog", answer(False))
    page.fill("#play-text", "24/21 24/23")
    page.click("#play-form button")
    page.wait_for_selector("#error:not([hidden])")
    assert "Taken back: 8/5 6/5 is best." in page.inner_text("#error") and state(page)["log"] == []
    assert asked and asked[0].startswith("The tutor: 24/23 24/21 loses") and "a very bad error" in asked[0]
    page.once("dialog", answer(True))
    page.fill("#play-text", "24/21 24/23")
    page.click("#play-form button")
    s = wait_after(page, s["version"])
    assert s["log"][0] == "You roll 31 and play 24/23 24/21" and len(asked) == 2


def test_the_cube_hint_shows_the_cube_action_at_every_score(page):
    """Given a double/take position on the person's roll in a 5-point match, When it asks the cube hint and then
    At every score, Then a grid of 5 by 5 scores and a money row shows the API's verdict for each, with each cell's
    equities in its tooltip."""
    open_game(page, "new=1&plies=0&position=" + format_xgid(DOUBLE_TAKE.board, length=5).replace("=", "%3D"))
    page.click("#cube-hint")
    page.wait_for_selector("#advice:not([hidden]) #cube-scores")
    page.click("#cube-scores")
    page.wait_for_selector("#score-grid table.grid")
    rows = page.eval_on_selector_all("#score-grid tbody tr",
                                     "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    s = state(page)
    api = page.evaluate("p => fetch('/api/cube/scores', {method: 'POST', headers: {'Content-Type': "
                        "'application/json'}, body: JSON.stringify({position: p, length: 5})}).then(r => r.json())",
                        s["position_id"])
    assert len(rows) == 6 and rows[-1] == ["money", api["money"]["short"]]
    assert [row[1:] for row in rows[:5]] == [[c["short"] for c in row] for row in api["cells"]]
    assert "5-point match" in page.inner_text("#score-grid h3")
    assert "EMG" in page.get_attribute("#score-grid tbody td", "title")


def test_a_match_file_uploaded_is_analysed_browsed_and_found_again_after_a_restart(tmp_path, serve, new_page):
    """Given the analysis page, When a player uploads a 5-point match file, Then a progress bar runs and the
    analysis opens: the players' figures, a graph with its errors marked, the errors listed, the first one's board
    with its candidates; the right arrow steps to the next error; and after the server restarts on the same
    database, the match is listed and opens again."""
    from pathlib import Path

    match_file = Path(__file__).parent / "data" / "matches" / "gnubg-5pt-seed12.mat"
    db = tmp_path / "study.sqlite"
    base, stop = serve(db=str(db))
    page = new_page()
    page.goto(f"{base}/analysis")
    page.set_input_files("#upload-file", str(match_file))
    page.select_option("#upload-plies", "0")
    page.click("#upload-submit")
    page.wait_for_selector("#decisions li.current", timeout=60_000)
    assert "done" in page.inner_text("#progress")
    assert "Alice" in page.inner_text("#summary") and "Error rate" in page.inner_text("#summary")
    assert page.locator("#graph circle.pt.very-bad, #graph circle.pt.bad").count() > 0
    first = page.inner_text("#decisions li.current")
    heading = page.inner_text("#decision h3")
    assert heading in first or heading.split(" · ")[0] in first
    page.wait_for_function("() => document.querySelector('#decision-board img').naturalWidth > 0")
    assert page.locator("#decision table tr").count() >= 2
    page.keyboard.press("ArrowRight")
    assert page.inner_text("#decisions li.current") != first
    match_id = int(page.evaluate("() => match.match_id"))
    page.close()
    stop()
    base, stop = serve(db=str(db))  # a new server on the same database
    page = new_page()
    page.goto(f"{base}/analysis")
    page.wait_for_selector("#stored li a")
    assert "Alice v Bob, 5-point" in page.inner_text("#stored")
    page.click("#stored li a")
    page.wait_for_selector("#decisions li.current")
    assert page.evaluate("() => match.match_id") == match_id
    # the player's view: its error rate over time (one match) and its worst decisions, which open
    page.select_option("#player-name", "Alice")
    page.click("#player-show")
    page.wait_for_selector("#decision ol li")
    assert page.locator("#graph circle").count() == 1
    page.click("#decision ol li")
    page.wait_for_selector("#decisions li.current")
    assert page.evaluate("() => match.match_id") == match_id


def start_drills(page, base: str, player: str):
    """``page`` on the analysis page at ``base``, its drills started for ``player``."""
    page.goto(f"{base}/analysis")
    page.wait_for_selector("#drill-player option", state="attached")
    page.select_option("#drill-player", player)
    page.click("#drill-start")
    return page


def test_a_drill_in_the_browser(tmp_path, serve, new_page):
    """Given a stored analysis, When the player starts its drills on the analysis page and types the play it made
    on a checker-play card, Then the page says how much it loses and which play is best, draws both on the board,
    and the progress counts the drill."""
    from pathlib import Path

    from bgai.eval.bot import load_bot
    from bgai.formats.matchfile import read_match
    from bgai.play.analysis import analyse_match
    from bgai.play.database import StudyDatabase
    from bgai.play.drills import Drills

    path = Path(__file__).parent / "data" / "matches" / "gnubg-3pt-seed6.mat"
    db = tmp_path / "study.sqlite"
    record = read_match(path)
    with StudyDatabase(db) as study:
        study.add(analyse_match(record, load_bot(plies=0), progress=False))
        drills = Drills(study)
        drills.make_cards(record.players[0])
        first = drills.due(record.players[0])[0]
    base, stop = serve(db=str(db))
    page = start_drills(new_page(), base, record.players[0])
    page.wait_for_selector("#decision h3")
    assert page.inner_text("#decision h3").startswith("Card 1 of")
    if first["kind"] == "move":
        page.fill("#drill-text", first["played"])
        page.click("#drill-answer button")
    else:
        page.click(f"#drill-answer button:has-text('{first['played'].capitalize()}')")
    page.wait_for_selector("#drill-verdict .verdict")
    verdict = page.inner_text("#drill-verdict .verdict")
    assert f"loses {first['error']:.3f} EMG" in verdict and first["best"] in verdict
    if first["kind"] == "move":
        page.wait_for_function("() => document.querySelector('#decision-board img').src.includes('answer=')")
    page.wait_for_selector("#drill-progress:has-text('1 drills so far')")
    page.click("#drill-next")
    page.wait_for_selector("#decision h3:has-text('Card 2 of')")
    page.close()
    stop()
    base, _ = serve(db=str(db))  # after a restart, the cards and their reviews are there
    page = start_drills(new_page(), base, record.players[0])
    page.wait_for_selector("#drill-progress:has-text('1 drills so far')")


def test_save_as_drill_keeps_the_decision(page):
    """Given the person on roll, When it clicks Save as drill, Then the page says the cube decision is saved as a
    drill, and the drills' API lists it as a card of the person's, due."""
    s = open_game(page, "match=5&plies=0&seed=4")
    for _ in range(10):
        if s["phase"] in ("roll", "move"):
            break
        page.click("#roll")
        s = wait_after(page, s["version"])
    page.click("#save-card")
    page.wait_for_selector("#advice:not([hidden]) h3:has-text('as a drill')")
    kind = "cube decision" if s["phase"] == "roll" else "play"
    assert kind in page.inner_text("#advice h3")
    due = page.evaluate("() => fetch('/api/drills?player=You').then(r => r.json())")["due"]
    assert due and due[-1]["position_id"] == s["position_id"] and due[-1]["match_id"] is None


def test_the_decision_shown_rolls_out(tmp_path, serve, new_page):
    """Given a stored money session's analysis, When the player opens a checker-play error and clicks Roll out,
    Then the rollout's plays replace the button, best first, each with its standard error."""
    from pathlib import Path

    from bgai.eval.bot import load_bot
    from bgai.formats.matchfile import read_match
    from bgai.play.analysis import analyse_match
    from bgai.play.database import StudyDatabase

    path = Path(__file__).parent / "data" / "matches" / "gnubg-money-seed3.mat"
    db = tmp_path / "study.sqlite"
    with StudyDatabase(db) as study:
        match_id = study.add(analyse_match(read_match(path), load_bot(plies=0), progress=False))
    base, _ = serve(db=str(db))
    page = new_page()
    page.goto(f"{base}/analysis?match={match_id}")
    page.wait_for_selector("#decisions li.current")
    index = page.evaluate("() => shown.findIndex((d) => d.kind === 'move')")
    assert index >= 0
    page.evaluate(f"() => select({index})")
    page.click("#roll-out")
    page.wait_for_selector("#rollout table tr", timeout=60_000)
    rows = page.eval_on_selector_all("#rollout tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    assert 2 <= len(rows) <= 4 and all(row[2].startswith("± ") for row in rows)
    assert page.inner_text("#rollout h3").startswith("Rollout: " + rows[0][0])


def test_a_drill_played_on_the_board(tmp_path, serve, new_page):
    """Given saved drill cards (a roll's play, an answer to a double), When the player opens each on the play page
    (``/?drill=CARD``, the analysis page's "Play it on the board") and makes its decision there as in a game, Then the
    page shows the verdict of the drill instead of playing on, and the card's review is recorded."""
    from bgai import Position
    from bgai.eval.bot import load_bot
    from bgai.play.database import StudyDatabase
    from bgai.play.drills import Drills

    db = tmp_path / "study.sqlite"
    bot = load_bot(plies=0)
    with StudyDatabase(db) as study:
        drills = Drills(study)
        move = drills.save("Eve", Position.start(), "move", bot, dice="31")
        take = drills.save("Eve", DOUBLE_TAKE, "take", bot)
    base, _ = serve(db=str(db))
    page = new_page()
    page.goto(f"{base}/?drill={move}")
    page.wait_for_selector("#board svg")
    page.wait_for_function("() => state && state.phase === 'move'")
    assert state(page)["dice"] == [3, 1]
    page.fill("#play-text", "8/5 6/5")
    page.click("#play-form button")
    page.wait_for_selector("#advice:not([hidden]) h3:has-text('Right: 8/5 6/5')")
    assert state(page)["phase"] == "move"  # the bot did not play on
    page.goto(f"{base}/?drill={take}")
    page.wait_for_function("() => state && state.phase === 'take'")
    page.click("#pass")
    page.wait_for_selector("#advice:not([hidden]) h3")
    assert "take" in page.inner_text("#advice h3").lower()  # (a double/take position: pass is wrong)
    with StudyDatabase(db) as study:
        assert Drills(study).progress("Eve")["reviews"] == 2
