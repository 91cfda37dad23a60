// The play page: it shows the server's session and sends what the player does. The server is the judge of every
// rule; the page only lights up the moves the server says are legal.
"use strict";

let state = null;      // the session, as the server last sent it
let selected = null;   // the point (25: the bar) whose checker is picked up
let busy = false;
let advice = null;     // what the advice box shows: {kind, key}, the key of the state it was asked for

// The advice box stays up only while the decision it answers does: the plays of one roll in one position (the
// checkers moved meanwhile included), or the cube decision of one position and cube.
function adviceKey(s, kind) {
  return kind === "plays" ? `plays|${s.phase}|${s.position_id}|${s.dice}`
    : `cube|${s.phase}|${s.position_id}|${s.cube.value}|${s.cube.owner}`;
}

function showAdvice(kind, key) {
  if (!state || adviceKey(state, kind) !== key) return false; // the game moved on while the bot thought
  advice = { kind, key };
  $("advice").hidden = false;
  return true;
}

function hideAdvice() {
  advice = null;
  $("advice").hidden = true;
}

// The page's tutor threshold, the analysis's "doubtful" error in EMG (bgai.play.session.TUTOR_THRESHOLD).
const TUTOR = 0.03;


function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

// The tutor's warning as a player reads it, and the question whether to make the action all the same.
function tutorQuestion(t) {
  return `The tutor: ${t.action} loses ${t.error.toFixed(3)} EMG, a ${t.mark} error; ${t.best} is best.\n\n` +
    "Make it anyway? (Cancel takes it back.)";
}

async function act(action, body = undefined) {
  if (busy || !state) return;
  if (drill && drillAnswer(action, body) !== null) return answerDrill(drillAnswer(action, body));
  busy = true;
  document.body.classList.add("busy");
  try {
    const path = `/api/sessions/${state.id}/${action}?svg=true`;
    try {
      state = await api(path, "POST", body);
    } catch (error) {
      if (!error.tutor) throw error;
      if (!window.confirm(tutorQuestion(error.tutor))) {
        showError(`Taken back: ${error.tutor.best} is best.`);
        return;
      }
      state = await api(path + "&confirm=true", "POST", body);
    }
    selected = null;
    showError("");
    render();
  } catch (error) {
    showError(error.message);
  } finally {
    busy = false;
    document.body.classList.remove("busy");
  }
}

async function newSession(options, remember = true) {
  try {
    state = await api("/api/sessions?svg=true", "POST", options);
    if (remember) localStorage.setItem("bgai-session", state.id);  // (a drill's game is not the one to go back to)
    showGameInForm(state);
    selected = null;
    showError("");
    hideAdvice();
    render();
  } catch (error) {
    showError(error.message);
  }
}

// The page is first drawn with every control disabled and the New game form hidden (index.html): until the server
// has said which game this is, nothing on the page may claim one.
async function load() {
  await openGame();
  $("new-card").hidden = false;
  if (!state) $("status").textContent = "";  // no game: the error box says why
}

// A drill on the board (``/?drill=CARD``, from the analysis page's Drills): the card's decision set up as a game of
// its own, the person's answer (the play made on the board and finished, or the cube action) sent to the drill
// instead of played on, and the verdict shown.
let drill = null;  // {card, done}

function drillAnswer(action, body) {
  if (drill.done) return null;
  const phase = state.phase;
  if (action === "finish" && phase === "move" && state.play.complete) return state.play.text;
  if (action === "play" && phase === "move" && body && body.finish !== false) return body.move;
  if (phase === "roll" && action === "roll") return "no double";
  if (phase === "roll" && action === "double") return "double";
  if (phase === "take" && (action === "take" || action === "pass")) return action;
  return null;
}

async function answerDrill(answer) {
  try {
    const v = await api(`/api/drills/${drill.card}/answer`, "POST", { answer });
    drill.done = true;
    const box = $("advice");
    box.innerHTML = "<div class=advice-head><h3></h3></div><table></table><div class=note></div>";
    box.querySelector("h3").textContent = v.error <= 0.001 ? `Right: ${v.best}`
      : `${v.answer} loses ${v.error.toFixed(3)} EMG; ${v.best} is best`;
    const table = box.querySelector("table");
    for (const [name, value] of v.ranked) {
      const tr = document.createElement("tr");
      tr.innerHTML = "<td></td><td class=num></td>";
      tr.children[0].textContent = name;
      tr.children[1].textContent = (value >= 0 ? "+" : "") + value.toFixed(3);
      table.appendChild(tr);
    }
    box.querySelector(".note").innerHTML = `The card comes back ${v.due.slice(0, 16).replace("T", " ")} UTC. ` +
      '<a href="/analysis">Back to the drills</a>.';
    showAdvice("drill", adviceKey(state, "drill"));
    $("status").textContent = "Drill answered.";
  } catch (error) {
    showError(error.message);
  }
}

async function openGame() {
  const params = new URLSearchParams(location.search);
  if (params.has("drill")) {
    const card = await api(`/api/drills/${encodeURIComponent(params.get("drill"))}`);
    drill = { card: card.card, done: false };
    await newSession({ match_length: card.length, plies: 0, tutor: null, position: card.xgid }, false);
    if (state) $("status").textContent = "A drill: make your play (or your cube action) as in a game.";
    return;
  }
  const saved = params.get("session") || localStorage.getItem("bgai-session");
  if (!params.has("new") && !params.has("match") && !params.has("seed") && !params.has("position") && saved) {
    try {
      state = await api(`/api/sessions/${saved}?svg=true`);
      showGameInForm(state);
      render();
      return;
    } catch (error) { /* gone with a server restart: start a new one */ }
  }
  const options = { match_length: Number(params.get("match") ?? 0) };  // a plain "/" opens a money game
  if (params.has("plies")) options.plies = Number(params.get("plies"));
  options.tutor = params.get("tutor") === "off" ? null : TUTOR;  // on unless the address says tutor=off
  if (params.has("seed")) options.seed = Number(params.get("seed"));
  if (params.has("position")) options.position = params.get("position");
  await newSession(options);
  if (!state && options.position) { // a position that cannot be set up: say why, and start from the beginning
    const message = $("error").textContent;
    delete options.position;
    await newSession(options);
    showError(message);
  }
}

// The New game form starts as the game being played (its length and the bot's plies), for a rematch.
function showGameInForm(s) {
  const length = $("new-length");
  if (![...length.options].some((o) => Number(o.value) === s.match_length)) {
    length.add(new Option(`${s.match_length} points`, String(s.match_length)));
  }
  length.value = String(s.match_length);
  $("new-plies").value = String(s.plies);
  $("new-tutor").checked = s.tutor !== null;
}

// Drawing -----------------------------------------------------------------------------------------------------

function render() {
  const s = state;
  const board = $("board");
  board.innerHTML = s.svg;
  board.classList.toggle("moving", s.phase === "move");
  bindBoard(board.querySelector("svg"));
  renderScore(s);
  renderStatus(s);
  const phase = s.phase;
  const enable = {
    roll: phase === "roll",
    double: s.cube.may_double,
    take: phase === "take",
    pass: phase === "take",
    undo: phase === "move" && s.play.steps.length > 0,
    finish: phase === "move" && s.play.complete,
    next: phase === "game_over",
    hint: ["roll", "move", "take"].includes(phase),
    "cube-hint": phase === "roll" || phase === "take",
    "save-card": ["roll", "move", "take"].includes(phase),
    resign: phase === "roll" || phase === "move",
  };
  for (const [id, on] of Object.entries(enable)) $(id).disabled = !on;
  $("resign-level").disabled = !enable.resign;
  $("play-submit").disabled = phase !== "move";
  $("setup-submit").disabled = false;
  $("download").hidden = false;
  $("analyse").hidden = false;
  $("finish").classList.toggle("pulse", enable.finish);
  $("double").textContent = s.cube.owner === "you" ? "Redouble" : "Double";
  // The resignations as this game counts them: times the cube, gammons single under Jacoby with the cube centered.
  const single = s.jacoby && !s.match_length && s.cube.owner === null;
  ["single", "gammon", "backgammon"].forEach((name, i) => {
    const points = (single ? 1 : i + 1) * s.cube.value;
    $("resign-level").options[i].textContent = `${name} (${points} point${points === 1 ? "" : "s"})`;
  });
  $("play-text").disabled = phase !== "move";
  $("position-id").value = s.position_id;
  $("xgid").value = s.xgid;
  $("download").href = `/api/sessions/${s.id}/match.mat`;
  $("analyse").href = `/analysis?session=${encodeURIComponent(s.id)}`;
  const log = $("log");
  log.innerHTML = "";
  for (const line of s.log) {
    const item = document.createElement("li");
    item.textContent = line;
    if (!line.startsWith("You ")) item.className = "bot";
    log.appendChild(item);
  }
  log.scrollTop = log.scrollHeight;
  if (advice && adviceKey(s, advice.kind) !== advice.key) hideAdvice();
  highlight();
}

function renderScore(s) {
  const board = $("scoreboard");
  const kind = s.match_length ? `${s.match_length}-point match` : "money";
  const tags = [];
  if (s.crawford) tags.push("Crawford");
  if (s.post_crawford) tags.push("post-Crawford");
  const cube = s.cube.owner ? `cube ${s.cube.value} (${s.cube.owner === "you" ? "yours" : "bgai's"})` : "cube centered";
  board.innerHTML = "";
  // The pip counts here are for a narrow screen (style.css), where the board's own would be drawn too small to read.
  const player = (name, dotClass, points, pips, onRoll) => {
    const el = document.createElement("span");
    el.className = "player" + (onRoll ? " on-roll" : "");
    el.innerHTML = `<span class="dot ${dotClass}"></span><span></span><span class="points"></span>` +
      "<span class=pips></span>";
    el.children[1].textContent = name;
    el.children[2].textContent = points;
    el.children[3].textContent = `${pips} pips`;
    return el;
  };
  board.appendChild(player(s.names[0], "you", s.score[0], s.pips[0], s.turn === "you"));
  board.appendChild(player(s.names[1], "bot", s.score[1], s.pips[1], s.turn === "bot"));
  const info = document.createElement("span");
  info.textContent = `${kind} · ${cube} · game ${s.game}`;
  board.appendChild(info);
  for (const t of tags) {
    const tag = document.createElement("span");
    tag.className = "tag";
    tag.textContent = t;
    board.appendChild(tag);
  }
}

function renderStatus(s) {
  const status = $("status");
  let text = s.status;
  if (s.phase === "move") {
    text = `You rolled ${s.dice[0]}-${s.dice[1]}. ` + (s.play.complete
      ? "Click Done (or the dice) to finish, or undo."
      : "Drag or click a checker; the points it can reach light up.");
  } else if (s.phase === "roll") {
    text = s.cube.may_double ? "Your turn: roll, or double." : "Your turn: roll.";
  } else if (s.phase === "take") {
    text = `bgai doubles to ${s.cube.value * 2}: take or pass?`;
  }
  status.textContent = text;
  // What happened since the person's last action: the bot's actions, and the person's rolls with no play (the
  // turn passed at once, so they are shown here with their dice).
  const passed = (line) => !line.startsWith("You ") || line.endsWith(": no play");
  let since = s.log.length;
  while (since > 0 && passed(s.log[since - 1])) since -= 1;
  const bot = s.log.slice(since);
  if (bot.length && s.phase !== "game_over" && s.phase !== "match_over") {
    const latest = document.createElement("span");
    latest.className = "latest";
    latest.textContent = bot.join(" · ");
    status.appendChild(latest);
  }
}

// Moving checkers: click a checker then a lit point, or drag it there -------------------------------------------

function pointOf(element) {
  const target = element && element.closest ? element.closest("[data-point]") : null;
  if (!target) return null;
  const v = target.dataset.point;
  if (v === "bar") return 25;
  if (v === "off") return 0;
  return /^\d+$/.test(v) ? Number(v) : null;
}

function targetsOf(point) {
  if (!state || state.phase !== "move" || point === null) return [];
  return state.play.targets[point] || [];
}

function hitRect(svg, point) {
  const name = point === 25 ? "bar" : point === 0 ? "off" : String(point);
  return svg.querySelector(`.hit[data-point="${name}"]`);
}

function topChecker(svg, point) {
  const name = point === 25 ? "bar" : String(point);
  const all = svg.querySelectorAll(`.checker.bottom[data-point="${name}"]`);
  return all.length ? all[all.length - 1] : null;
}

function highlight() {
  const svg = $("board").querySelector("svg");
  if (!svg) return;
  svg.querySelectorAll(".hit.lit, .hit.source").forEach((el) => el.classList.remove("lit", "source"));
  svg.querySelectorAll(".pick-ring").forEach((el) => el.remove());
  svg.querySelectorAll(".landing.shown").forEach((el) => el.classList.remove("shown"));
  if (state.phase === "move") {
    for (const source of Object.keys(state.play.targets)) {
      const rect = hitRect(svg, Number(source));
      if (rect) rect.classList.add("source");
    }
    const dice = svg.querySelector(".dice");
    if (dice) dice.classList.toggle("ready", state.play.complete);
  }
  if (selected === null) return;
  for (const t of targetsOf(selected)) {
    const rect = hitRect(svg, t);
    if (rect) rect.classList.add("lit");
    const mark = svg.querySelector(`.landing[data-point="${t === 0 ? "off" : t}"]`);
    if (mark) mark.classList.add("shown");
  }
  const checker = topChecker(svg, selected);
  if (checker) {
    const c = checker.querySelector("circle");
    const ring = document.createElementNS("http://www.w3.org/2000/svg", "circle");
    ring.setAttribute("cx", c.getAttribute("cx"));
    ring.setAttribute("cy", c.getAttribute("cy"));
    ring.setAttribute("r", "27");
    ring.setAttribute("class", "pick-ring");
    ring.setAttribute("fill", "none");
    ring.setAttribute("stroke", "#ffd54a");
    ring.setAttribute("stroke-width", "4");
    ring.setAttribute("pointer-events", "none");
    svg.appendChild(ring);
  }
}

function select(point) {
  selected = point !== null && targetsOf(point).length ? point : null;
  highlight();
}

function svgPoint(svg, event) {
  const p = svg.createSVGPoint();
  p.x = event.clientX;
  p.y = event.clientY;
  return p.matrixTransform(svg.getScreenCTM().inverse());
}

function bindBoard(svg) {
  if (!svg) return;
  svg.addEventListener("pointerdown", (event) => {
    if (busy || state.phase !== "move") return;
    if (event.target.closest(".dice")) {
      if (state.play.complete) act("finish");
      return;
    }
    const point = pointOf(event.target);
    if (selected !== null && targetsOf(selected).includes(point)) {
      act("step", { from: selected, to: point });
      return;
    }
    if (point !== null && targetsOf(point).length) {
      select(point);
      startDrag(svg, event, point);
    } else {
      select(null);
    }
  });
}

function startDrag(svg, event, source) {
  const checker = topChecker(svg, source);
  if (!checker) return;
  const start = { x: event.clientX, y: event.clientY };
  let ghost = null;
  const move = (e) => {
    if (!ghost && Math.hypot(e.clientX - start.x, e.clientY - start.y) > 6) {
      ghost = checker.cloneNode(true);
      ghost.setAttribute("pointer-events", "none");
      ghost.classList.add("ghost");
      ghost.style.opacity = "0.85";
      svg.appendChild(ghost);
      checker.style.opacity = "0.3";
      $("board").classList.add("dragging");
    }
    if (ghost) {
      const c = checker.querySelector("circle");
      const p = svgPoint(svg, e);
      ghost.setAttribute("transform", `translate(${p.x - c.getAttribute("cx")} ${p.y - c.getAttribute("cy")})`);
    }
  };
  const up = (e) => {
    window.removeEventListener("pointermove", move);
    window.removeEventListener("pointerup", up);
    window.removeEventListener("pointercancel", up);
    $("board").classList.remove("dragging");
    if (!ghost) return; // a click: the checker stays picked up
    ghost.remove();
    checker.style.opacity = "";
    const dest = pointOf(document.elementFromPoint(e.clientX, e.clientY));
    if (dest !== null && targetsOf(source).includes(dest)) act("step", { from: source, to: dest });
  };
  window.addEventListener("pointermove", move);
  window.addEventListener("pointerup", up);
  window.addEventListener("pointercancel", up);
}

// Hints -------------------------------------------------------------------------------------------------------

const pct = (x) => `${(100 * x).toFixed(1)}%`;
const eq = (x) => (x >= 0 ? "+" : "") + x.toFixed(3);

async function showHint() {
  if (!state) return;
  if (state.phase !== "move") return showCubeHint();
  const key = adviceKey(state, "plays");
  try {
    const hint = await api(`/api/sessions/${state.id}/hint?limit=8`);
    if (adviceKey(state, "plays") !== key) return;
    const box = $("advice");
    box.innerHTML = `<h3>Your best plays of ${hint.dice[0]}-${hint.dice[1]}</h3>`;
    const table = document.createElement("table");
    const match = state.match_length > 0;
    // The plays come ranked by the cubeful equity of the first column (the API's rule, every play's at the bot's
    // ply), Diff from the first row's; the cubeless equity and chances are each play's at its own Ply.
    table.innerHTML = "<tr><th>#</th><th>Play</th><th class=num>Cubeful</th><th class=num>Diff</th>" +
      "<th class=num>Cubeless</th><th class=num>Ply</th><th class=num>Win</th><th class='num extra'>Gammon</th>" +
      "<th class='num extra'>Lose g</th></tr>";
    const cube = (value) => value === null ? "—" : match ? pct(value) : eq(value);
    hint.plays.forEach((p, i) => {
      const row = document.createElement("tr");
      row.className = "pick" + (i === 0 ? " best" : "");
      row.title = `win ${pct(p.chances.win)}, win a gammon ${pct(p.chances.win_gammon)}, lose a gammon ` +
        `${pct(p.chances.lose_gammon)} (at ${p.plies}-ply); click to put this play on the board`;
      const cells = [i + 1, p.play, cube(p.cubeful_equity), i === 0 ? "" : cube(p.cubeful_difference),
        eq(p.equity), p.plies, pct(p.chances.win), pct(p.chances.win_gammon), pct(p.chances.lose_gammon)];
      cells.forEach((value, j) => {
        const td = document.createElement("td");
        td.textContent = value;
        if (j === 1) td.className = "play";
        if (j >= 2) td.className = j >= 7 ? "num extra" : "num";
        row.appendChild(td);
      });
      row.addEventListener("click", () => act("play", { move: p.play, finish: false, reset: true }));
      table.appendChild(row);
    });
    box.appendChild(table);
    const note = document.createElement("div");
    note.className = "note";
    const unit = match ? "match-winning chances" : "units of the stake";
    note.textContent = `By ${hint.network}, your equity after each play: Cubeful at ${hint.plies}-ply in ${unit}, ` +
      "the cube as it is; Cubeless and the chances at the play's Ply.";
    box.appendChild(note);
    showAdvice("plays", key);
  } catch (error) {
    showError(error.message);
  }
}

// The cube hint by the formula first (at once); its Roll out button asks for the rollout's answer (about a second),
// which replaces it. The server says where a rollout cannot decide (a match, the Jacoby rule), and the button says
// why in its tooltip.
async function showCubeHint(rollout = false) {
  if (!state) return;
  const key = adviceKey(state, "cube");
  const button = $("cube-rollout");
  if (rollout && button) {
    button.disabled = true;
    button.classList.add("working");
    button.setAttribute("aria-busy", "true");
    button.textContent = "Rolling out…";
  }
  try {
    const h = await api(`/api/sessions/${state.id}/cube-hint${rollout ? "?rollout=true" : ""}`);
    if (adviceKey(state, "cube") !== key) return;
    renderCubeHint(h);
    showAdvice("cube", key);
  } catch (error) {
    showError(error.message);
    if (rollout && button && button.isConnected) {
      button.disabled = false;
      button.classList.remove("working");
      button.removeAttribute("aria-busy");
      button.textContent = "Roll out";
    }
  }
}

function renderCubeHint(h) {
  const box = $("advice");
  const fmt = h.unit === "mwc" ? pct : eq;
  const names = { no_double: "No double", double_take: "Double, take", double_pass: "Double, pass",
    take: "Take", pass: "Pass" };
  const rolled = h.method === "rollout";
  box.innerHTML = "<div class=advice-head><h3></h3><button id=cube-rollout type=button></button></div>";
  box.querySelector("h3").textContent = `Cube hint${rolled ? " (rollout)" : ""}: ${h.action}`;
  const button = $("cube-rollout");
  button.textContent = rolled ? "Rolled out" : "Roll out";
  button.disabled = rolled || h.rollout_refusal !== null;
  button.title = h.rollout_refusal ?? (rolled ? "This is the rollout's answer"
    : "Ask a cubeful rollout by the bot instead of its formula (about a second)");
  button.addEventListener("click", () => showCubeHint(true));
  const table = document.createElement("table");
  for (const [key, value] of Object.entries(h.equities)) {
    const row = document.createElement("tr");
    row.innerHTML = "<td></td><td class=num></td>";
    row.children[0].textContent = names[key] || key;
    row.children[1].textContent = value === null ? "—" : fmt(value);
    table.appendChild(row);
  }
  box.appendChild(table);
  const note = document.createElement("div");
  note.className = "note";
  const unit = h.unit === "mwc" ? "Your match-winning chances" : "Your equity, in units of the current stake";
  note.textContent = rolled
    ? `${unit}, from a cubeful rollout by the bot: no double and double/take played out on the same dice ` +
      "(truncated, variance-reduced; no cube efficiency assumed)."
    : `${unit}, by the bot's formula` +
      (h.decision.efficiency === null ? "." : ` (cube efficiency ${h.decision.efficiency.toFixed(2)}).`);
  box.appendChild(note);
  const scores = document.createElement("button");
  scores.id = "cube-scores";
  scores.type = "button";
  scores.textContent = "At every score";
  scores.title = "This position's cube action at every score of a match, and for money, with the equities";
  scores.addEventListener("click", () => showScoreGrid(h.kind));
  box.appendChild(scores);
}

// The cube action of the position on roll at every score of a match (the session's length, else 7), the cube as
// it is: a grid of verdicts, each cell's equities (EMG) in its tooltip and in the table under it.
async function showScoreGrid(kind, met = "kazaross-xg2") {
  if (!state) return;
  const key = adviceKey(state, "cube");
  const length = state.match_length > 0 ? state.match_length : 7;
  const mine = kind === "double";  // the position on roll is yours (your double) or the bot's (its double)
  const owner = state.cube.owner === null ? "center"
    : (state.cube.owner === "you") === mine ? "me" : "opponent";
  try {
    const g = await api("/api/cube/scores", "POST",
      { position: state.position_id, length, cube: state.cube.value, owner, met });
    if (adviceKey(state, "cube") !== key) return;
    const box = $("advice");
    box.querySelector("#score-grid")?.remove();
    const wrap = document.createElement("div");
    wrap.id = "score-grid";
    const who = mine ? "you" : "bgai";
    wrap.innerHTML = `<h3></h3><label>Match equity table <select id="grid-met">` +
      ["kazaross-xg2", "rockwell-kazaross", "jacobs-trice", "woolsey", "snowie"]
        .map((name) => `<option${name === met ? " selected" : ""}>${name}</option>`).join("") + "</select></label>" +
      `<div class="grid-scroll"><table class="grid"><thead><tr><th>away</th></tr></thead>` +
      "<tbody></tbody></table></div><div class=note></div>";
    wrap.querySelector("#grid-met").addEventListener("change", (event) => showScoreGrid(kind, event.target.value));
    wrap.querySelector("h3").textContent = `At every score of a ${length}-point match (${who} to double)`;
    const head = wrap.querySelector("thead tr");
    for (let j = 1; j <= length; j++) head.insertAdjacentHTML("beforeend", `<th>${j}</th>`);
    const body = wrap.querySelector("tbody");
    const emg = (v) => (v === null ? "—" : (v >= 0 ? "+" : "") + v.toFixed(3));
    const cellOf = (c) => {
      const td = document.createElement("td");
      td.textContent = c.short;
      td.className = c.short.startsWith("D/") ? "double" : c.short.startsWith("TG") ? "too-good" : "";
      td.title = `${c.action}\nEMG: no double ${emg(c.emg[0])}, double/take ${emg(c.emg[1])}, ` +
        `double/pass ${emg(c.emg[2])}`;
      return td;
    };
    g.cells.forEach((row, i) => {
      const tr = document.createElement("tr");
      tr.innerHTML = `<th>${i + 1}</th>`;
      row.forEach((c) => tr.appendChild(cellOf(c)));
      body.appendChild(tr);
    });
    const money = document.createElement("tr");
    money.innerHTML = "<th>money</th>";
    money.appendChild(cellOf(g.money));
    body.appendChild(money);
    wrap.querySelector(".note").textContent = `Rows: ${who === "you" ? "your" : "bgai's"} points to go; columns: ` +
      "the other side's (1 away: post-Crawford). ND no double, D double, TG too good; /T take, /P pass. " +
      `Hover a cell for its equities (EMG, the doubler's), by the bot's ${g.plies}-ply cube.`;
    box.appendChild(wrap);
  } catch (error) {
    showError(error.message);
  }
}

// Wiring ------------------------------------------------------------------------------------------------------

$("roll").addEventListener("click", () => act("roll"));
$("double").addEventListener("click", () => act("double"));
$("take").addEventListener("click", () => act("take"));
$("pass").addEventListener("click", () => act("pass"));
$("undo").addEventListener("click", () => act("undo"));
$("finish").addEventListener("click", () => act("finish"));
$("next").addEventListener("click", () => act("next"));
$("hint").addEventListener("click", showHint);
$("cube-hint").addEventListener("click", () => showCubeHint());
// Save the decision now as a drill card (the analysis page's Drills ask it again later).
$("save-card").addEventListener("click", async () => {
  if (!state) return;
  try {
    const saved = await api(`/api/sessions/${state.id}/save-card`, "POST", {});
    const box = $("advice");
    box.innerHTML = "<div class=advice-head><h3></h3></div><div class=note></div>";
    const what = { move: "this play", double: "this cube decision", take: "this take or pass" }[saved.kind];
    box.querySelector("h3").textContent = `Saved ${what} as a drill`;
    box.querySelector(".note").innerHTML = `Card ${saved.card}, in the drills of ` +
      `${saved.player.replace(/[<>&"]/g, "")}: practise it on the ` +
      '<a href="/analysis" target="_blank" rel="noopener">analysis page</a>, Drills.';
    showAdvice("saved", adviceKey(state, "saved"));
  } catch (error) {
    showError(error.message);
  }
});
// Resigning asks first: the button turns into "Sure? Resign …" for a few seconds, and a second click resigns.
let resignArmed = null;
function disarmResign() {
  clearTimeout(resignArmed);
  resignArmed = null;
  $("resign").textContent = "Resign";
  $("resign").classList.remove("armed");
}
$("resign").addEventListener("click", () => {
  if (resignArmed === null) {
    const level = $("resign-level").selectedOptions[0].textContent;
    $("resign").textContent = `Sure? Resign ${level.startsWith("single") ? "a single game" : `a ${level}`}`;
    $("resign").classList.add("armed");
    resignArmed = setTimeout(disarmResign, 4000);
    return;
  }
  disarmResign();
  act("resign", { points: Number($("resign-level").value) });
});
$("play-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("play-text").value.trim();
  if (!text) return;
  act("play", { move: text }).then(() => { if (!$("error").textContent) $("play-text").value = ""; });
});
$("setup-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("setup-text").value.trim();
  if (text) act("setup", { position: text });
});
$("new-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const options = { match_length: Number($("new-length").value), plies: Number($("new-plies").value),
    tutor: $("new-tutor").checked ? TUTOR : null };
  const seed = $("new-seed").value;
  if (seed !== "") options.seed = Number(seed);
  newSession(options);
});
for (const id of ["position-id", "xgid"]) {
  $(id).addEventListener("focus", (event) => event.target.select());
}
document.addEventListener("keydown", (event) => {
  if (["INPUT", "SELECT", "TEXTAREA"].includes(event.target.tagName) || !state) return;
  const keys = { r: "roll", d: "double", t: "take", p: "pass", u: "undo", n: "next", Enter: "finish" };
  if (event.key === "h") return showHint();
  if (event.key === "c") return showCubeHint();
  const id = keys[event.key];
  if (id && !$(id).disabled) $(id).click();
  if (event.key === "Escape") select(null);
});

load();
