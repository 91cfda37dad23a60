"use strict";
// The analysis page: upload or paste a match file (or ?session=KEY, the match just played on the play page), follow
// the server's analysis (POST /api/analyses, then its progress), and browse a stored analysis (GET /api/matches/ID):
// the players' figures, the equity graph, the decisions with their marks, each decision's board with arrows for the
// best play and the play made, its candidates or cube equities. Keys: arrows step through the decisions.

let match = null;      // the analysis shown (GET /api/matches/ID)
let shown = [];        // the decisions listed (all, or the marked ones)
let current = -1;      // the index in `shown` of the decision on the board
const MARK_CLASS = { doubtful: "doubtful", bad: "bad", "very bad": "very-bad" };


function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

const emg = (v) => (v === null || v === undefined ? "—" : (v >= 0 ? "+" : "") + v.toFixed(3));

// Analysing ------------------------------------------------------------------------------------------------------

async function analyse(text, name) {
  showError("");
  const bar = $("progress");
  bar.hidden = false;
  bar.querySelector(".bar").style.width = "0%";
  bar.querySelector("span").textContent = "starting…";
  $("upload-submit").disabled = true;
  try {
    let job = await api("/api/analyses", "POST", { match: text, name, plies: Number($("upload-plies").value) });
    while (job.status === "queued" || job.status === "running") {
      const share = job.total ? job.done / job.total : 0;
      bar.querySelector(".bar").style.width = `${Math.round(100 * share)}%`;
      bar.querySelector("span").textContent = job.total ? `${job.done} of ${job.total} decisions` : job.status;
      await new Promise((resolve) => setTimeout(resolve, 300));
      job = await api(`/api/analyses/${job.id}`);
    }
    if (job.status === "failed") throw new Error(job.error || "the analysis failed");
    bar.querySelector(".bar").style.width = "100%";
    bar.querySelector("span").textContent = `done: ${job.total} decisions`;
    await loadStored();
    await openMatch(job.match_id);
  } catch (error) {
    showError(error.message);
    bar.hidden = true;
  } finally {
    $("upload-submit").disabled = false;
  }
}

$("upload-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const file = $("upload-file").files[0];
  const text = file ? await file.text() : $("upload-text").value;
  if (!text.trim()) {
    showError("choose a match file, or paste one");
    return;
  }
  analyse(text, file ? file.name : "pasted");
});

// Browsing -------------------------------------------------------------------------------------------------------

async function loadStored() {
  const list = $("stored");
  list.innerHTML = "";
  const matches = await api("/api/analyses");
  const names = await api("/api/drills/players");  // (players of analysed matches, and of saved drills)
  for (const id of ["drill-player", "player-name"]) {
    const select = $(id);
    const chosen = select.value;
    select.innerHTML = "";
    const list = id === "player-name" ? [...new Set(matches.flatMap((m) => [m.player0, m.player1]))].sort() : names;
    for (const name of list) select.add(new Option(name, name));
    if (list.includes(chosen)) select.value = chosen;
  }
  $("drill-start").disabled = !names.length;
  $("player-show").disabled = !matches.length;
  if (!matches.length) list.innerHTML = "<li>None yet.</li>";
  for (const m of matches) {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = `?match=${m.id}`;
    const kind = m.length ? `${m.length}-point` : "money";
    link.textContent = `${m.player0} v ${m.player1}, ${kind}, ${m.score0}-${m.score1} (${m.date.slice(0, 10)}, ` +
      `${m.plies}-ply)`;
    link.addEventListener("click", (event) => {
      event.preventDefault();
      openMatch(m.id);
    });
    item.appendChild(link);
    list.appendChild(item);
  }
}

async function openMatch(id) {
  showError("");
  match = await api(`/api/matches/${id}`);
  history.replaceState(null, "", `?match=${id}`);
  const m = match.match;
  $("title").textContent = `${m.players[0]} v ${m.players[1]} · ` +
    (m.length ? `${m.length}-point match, ${m.score[0]}-${m.score[1]} final` : `money, ${m.games} games`) +
    ` · judged at ${match.plies}-ply`;
  renderSummary();
  $("graph").hidden = false;
  renderGraph();
  listDecisions();
  $("view").hidden = false;
}

function renderSummary() {
  const box = $("summary");
  const [a, b] = match.players;
  const rows = [
    ["Decisions", (p) => p.decisions],
    ["Error rate (mEMG a decision)", (p) => p.error_rate.toFixed(1)],
    ["PR-style (half of it)", (p) => p.pr.toFixed(1)],
    ["Rating (gnubg's scale)", (p) => p.rating],
    ["Checker play (mEMG a move)", (p) => p.checker_rate.toFixed(1)],
    ["Cube (mEMG a decision)", (p) => p.cube_rate.toFixed(1)],
    ["Errors: doubtful / bad / very bad", (p) => ["doubtful", "bad", "very bad"]
      .map((k) => p.checker_marks[k] + p.cube_marks[k]).join(" / ")],
    ["Luck (EMG)", (p) => emg(p.luck)],
    ["Luck-adjusted result", (p) => emg(p.luck_adjusted_result)],
  ];
  box.innerHTML = "<h2>Players</h2><table class='summary'><thead><tr><th></th><th></th><th></th></tr></thead>" +
    "<tbody></tbody></table><div class=note></div>";
  const head = box.querySelectorAll("thead th");
  head[1].textContent = a.name;
  head[2].textContent = b.name;
  const body = box.querySelector("tbody");
  for (const [label, value] of rows) {
    const tr = document.createElement("tr");
    tr.innerHTML = "<td></td><td class=num></td><td class=num></td>";
    tr.children[0].textContent = label;
    tr.children[1].textContent = value(a);
    tr.children[2].textContent = value(b);
    body.appendChild(tr);
  }
  box.querySelector(".note").textContent = `EMG: equivalent to money game. Marks: doubtful ≥ 0.03, bad ≥ 0.06, ` +
    `very bad ≥ 0.12 EMG lost (GNU Backgammon's). Cube decisions judged by ${match.cube_method}.`;
  box.hidden = false;
}

function renderGraph() {
  const points = match.graph;
  const box = $("graph");
  if (!points.length) {
    box.innerHTML = "";
    return;
  }
  const w = 900, h = 160, pad = 8;
  const values = points.map((p) => p.value);
  let lo = Math.min(...values), hi = Math.max(...values);
  if (match.match.length) [lo, hi] = [0, 1];
  if (hi - lo < 1e-9) hi = lo + 1;
  const x = (i) => pad + (i * (w - 2 * pad)) / Math.max(points.length - 1, 1);
  const y = (v) => h - pad - ((v - lo) * (h - 2 * pad)) / (hi - lo);
  const path = points.map((p, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ");
  let svg = `<svg viewBox="0 0 ${w} ${h}" role="img"><title>${match.match.players[0]}'s ` +
    `${match.match.length ? "match-winning chance" : "points"} after each play</title>` +
    `<line x1="${pad}" x2="${w - pad}" y1="${y(match.match.length ? 0.5 : 0)}" ` +
    `y2="${y(match.match.length ? 0.5 : 0)}" class="axis"/><path d="${path}" class="line"/>`;
  points.forEach((p, i) => {
    const d = p.player === null ? null : match.decisions.find((d) => d.kind === "move" && d.game === p.game &&
      d.row === p.row && d.player === p.player);
    const mark = d && d.mark ? MARK_CLASS[d.mark] : "";
    svg += `<circle cx="${x(i).toFixed(1)}" cy="${y(p.value).toFixed(1)}" r="${mark ? 5 : 3}" ` +
      `class="pt ${mark}" data-seq="${d ? d.seq : ""}"><title>${p.label}: ${p.value.toFixed(3)}</title></circle>`;
  });
  box.innerHTML = svg + "</svg>";
  box.querySelectorAll("circle[data-seq]").forEach((c) => {
    if (c.dataset.seq === "") return;
    c.addEventListener("click", () => selectSeq(Number(c.dataset.seq)));
  });
}

function describe(d) {
  const who = match.match.players[d.player];
  const what = d.kind === "move" ? `${d.dice.join("")} to play` : { double: "cube decision",
    take: "answer to a double", resign: "resignation", accept: "accepting a resignation" }[d.kind];
  return `Game ${d.game}, row ${d.row ?? ""}: ${who}, ${what}`;
}

function listDecisions() {
  const onlyMarked = $("only-marked").checked;
  shown = match.decisions.filter((d) => d.counted && (!onlyMarked || d.mark));
  const list = $("decisions");
  list.innerHTML = "";
  shown.forEach((d, i) => {
    const item = document.createElement("li");
    item.className = d.mark ? MARK_CLASS[d.mark] : "";
    item.textContent = `${describe(d)}: ${d.played}` + (d.mark ? ` (${d.mark}, ${emg(-d.error)})` : "");
    item.dataset.index = String(i);
    item.addEventListener("click", () => select(i));
    list.appendChild(item);
  });
  $("moves-card").hidden = false;
  if (shown.length) select(0);
  else {
    $("decision").textContent = onlyMarked ? "No errors: no decision lost 0.03 EMG or more." : "No decisions.";
    $("decision-board").innerHTML = "";
  }
}

function selectSeq(seq) {
  let i = shown.findIndex((d) => d.seq === seq);
  if (i < 0) {  // an unmarked play: list every decision
    $("only-marked").checked = false;
    listDecisions();
    i = shown.findIndex((d) => d.seq === seq);
  }
  if (i >= 0) select(i);
}

function select(i) {
  if (i < 0 || i >= shown.length) return;
  current = i;
  const d = shown[i];
  document.querySelectorAll("#decisions li").forEach((li) => li.classList.toggle("current",
    Number(li.dataset.index) === i));
  document.querySelector("#decisions li.current")?.scrollIntoView({ block: "nearest" });
  document.querySelectorAll("#graph circle").forEach((c) => c.classList.toggle("current",
    c.dataset.seq === String(d.seq)));
  $("decision-board").innerHTML = `<img alt="the board of this decision" ` +
    `src="/api/matches/${match.match_id}/decisions/${d.seq}/board.svg">`;
  const box = $("decision");
  box.innerHTML = "<h3></h3><table class='candidates'></table><div class=note></div>";
  box.querySelector("h3").textContent = `${describe(d)}` + (d.mark ? ` · ${d.mark} ${emg(-d.error)}` : "");
  const table = box.querySelector("table");
  if (d.kind === "move") {
    table.innerHTML = "<tr><th>Play</th><th>Equity</th><th>Diff</th><th>Ply</th></tr>";
    const [, best, deepest] = d.candidates[0];
    for (const [play, value, ply] of d.candidates) {
      const tr = document.createElement("tr");
      tr.className = play === d.played ? "played" : play === d.best ? "best" : "";
      tr.innerHTML = "<td></td><td class=num></td><td class=num></td><td class=num></td>";
      tr.children[0].textContent = play;
      tr.children[1].textContent = emg(value);
      tr.children[2].textContent = ply === deepest ? emg(value - best) : "—";
      tr.children[3].textContent = ply;
      table.appendChild(tr);
    }
    box.querySelector(".note").textContent = "Arrows on the board: the best play green, the play made red. " +
      "Equities in EMG for the player to move, each at its Ply" +
      (d.luck === null ? "." : `; the roll's luck ${emg(d.luck)}.`);
  } else {
    for (const [name, value] of d.candidates) {
      const tr = document.createElement("tr");
      tr.innerHTML = "<td></td><td class=num></td>";
      tr.children[0].textContent = name;
      tr.children[1].textContent = emg(value);
      table.appendChild(tr);
    }
    box.querySelector(".note").textContent = `Played: ${d.played}; best: ${d.best}. Cubeful equities in EMG, the ` +
      `doubler's (${d.method === "rollout" ? "a cubeful rollout" : "the bot's formula"}).`;
  }
  if (["move", "double", "take"].includes(d.kind)) {
    const button = document.createElement("button");
    button.id = "roll-out";
    button.type = "button";
    button.textContent = "Roll out";
    button.title = d.kind === "move" ? "Roll out this roll's best plays on the same dice (216 trials, truncated)"
      : "Decide this cube by a cubeful rollout (money sessions without the Jacoby rule)";
    button.addEventListener("click", () => rollOut(d, button));
    box.appendChild(button);
  }
}

async function rollOut(d, button) {
  button.disabled = true;
  button.textContent = "Rolling out…";
  try {
    const r = await api(`/api/matches/${match.match_id}/decisions/${d.seq}/rollout`, "POST");
    if (shown[current] !== d) return;  // (another decision is shown by now)
    const out = document.createElement("div");
    out.id = "rollout";
    out.innerHTML = "<h3></h3><table class=candidates></table><div class=note></div>";
    const table = out.querySelector("table");
    const row = (name, value, se) => {
      const tr = document.createElement("tr");
      tr.innerHTML = "<td></td><td class=num></td><td class=num></td>";
      tr.children[0].textContent = name;
      tr.children[1].textContent = emg(value);
      tr.children[2].textContent = se === null || se === undefined ? "" : `± ${se.toFixed(3)}`;
      tr.className = name === d.played ? "played" : "";
      table.appendChild(tr);
    };
    if (r.kind === "move") {
      out.querySelector("h3").textContent = `Rollout: ${r.plays[0].play} is best`;
      r.plays.forEach((p) => row(p.play, p.equity, p.se));
      out.querySelector(".note").textContent = `${r.trials} trials of each play on the same dice, truncated, ` +
        "0-ply play: cubeless equity for the mover ± its standard error.";
    } else {
      out.querySelector("h3").textContent = `Rollout: ${r.action}`;
      row("No double", r.no_double, r.se[0]);
      row("Double, take", r.double_take, r.se[1]);
      row("Double, pass", r.double_pass, null);
      out.querySelector(".note").textContent = `A cubeful rollout, ${r.trials} trials: the doubler's equity, in ` +
        "units of the stake.";
    }
    button.replaceWith(out);
  } catch (error) {
    showError(error.message);
    button.disabled = false;
    button.textContent = "Roll out";
  }
}

// Drills: the player's errors as cards, the due ones one at a time; an answer is typed (a play in notation) or
// clicked (a cube action), then judged by the server, the board showing the answer (red) and the best (green).
let drill = null;  // {player, due: [...cards], index}

async function startDrills(event) {
  event?.preventDefault();
  showError("");
  const player = $("drill-player").value;
  if (!player) return;
  try {
    const d = await api(`/api/drills?player=${encodeURIComponent(player)}`);
    drill = { player, due: d.due, index: 0 };
    showProgress(d.progress, d.added);
    match = null;
    $("graph").hidden = true;
    $("view").hidden = false;
    $("moves-card").hidden = true;
    $("summary").hidden = true;
    $("title").textContent = `Drills: ${player}`;
    showCard();
  } catch (error) {
    showError(error.message);
  }
}

function showProgress(p, added) {
  $("drill-progress").textContent = `${p.cards} cards (${added ? `${added} new, ` : ""}${p.due} due, ` +
    `${p.learnt} learnt), ${p.reviews} drills so far` +
    (p.by_day.length ? `; today's mean loss ${(1000 * p.by_day[p.by_day.length - 1].error).toFixed(1)} mEMG` : "");
}

function cardScore(c) {
  return c.length ? `${c.score[0]}-${c.score[1]} in a ${c.length}-point match` : "money";
}

function showCard() {
  const box = $("decision");
  if (!drill || drill.index >= drill.due.length) {
    $("decision-board").innerHTML = "";
    box.innerHTML = "<h3>No card is due now.</h3><div class=note>Cards come back when their schedule says; " +
      "analyse more matches for new ones.</div>";
    return;
  }
  const c = drill.due[drill.index];
  $("decision-board").innerHTML = `<img alt="the drill's position" src="/api/drills/${c.card}/board.svg">`;
  const who = c.players[c.player];
  const question = c.kind === "move" ? `${who} to play ${c.dice.join("")}`
    : c.kind === "double" ? `${who} on roll: double?` : `${who}, doubled: take or pass?`;
  box.innerHTML = "<h3></h3><div class=note></div><form id=drill-answer class=play-form autocomplete=off></form>" +
    "<div id=drill-verdict></div>";
  box.querySelector("h3").textContent = `Card ${drill.index + 1} of ${drill.due.length}: ${question}`;
  box.querySelector(".note").innerHTML = "";
  box.querySelector(".note").append(`${cardScore(c)}, cube ${c.cube}. ` +
    (c.match_id === null ? "A position you saved. " : `From match ${c.match_id}, game ${c.game}. `));
  const onBoard = document.createElement("a");
  onBoard.href = `/?drill=${c.card}`;
  onBoard.textContent = "Play it on the board";
  box.querySelector(".note").append(onBoard);
  const form = box.querySelector("form");
  if (c.kind === "move") {
    form.innerHTML = "<input id=drill-text placeholder='your play: 13/7 8/7' aria-label='your play'>" +
      "<button type=submit>Answer</button>";
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      answerCard(c, $("drill-text").value);
    });
    $("drill-text").focus();
  } else {
    const choices = c.kind === "double" ? ["double", "no double"] : ["take", "pass"];
    for (const choice of choices) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = choice[0].toUpperCase() + choice.slice(1);
      button.addEventListener("click", () => answerCard(c, choice));
      form.appendChild(button);
    }
  }
}

async function answerCard(c, text) {
  showError("");
  try {
    const v = await api(`/api/drills/${c.card}/answer`, "POST", { answer: text });
    const out = $("drill-verdict");
    out.innerHTML = "<p class=verdict></p><table class=candidates></table><button id=drill-next type=button>" +
      "Next card</button>";
    out.querySelector(".verdict").textContent = v.error <= 0.001 ? `Right: ${v.best}.`
      : `${v.answer} loses ${v.error.toFixed(3)} EMG; ${v.best} is best.`;
    const table = out.querySelector("table");
    for (const [name, value] of v.ranked) {
      const tr = document.createElement("tr");
      tr.className = name === v.answer ? "played" : name === v.best ? "best" : "";
      tr.innerHTML = "<td></td><td class=num></td>";
      tr.children[0].textContent = name;
      tr.children[1].textContent = emg(value);
      table.appendChild(tr);
    }
    if (c.kind === "move") {
      $("decision-board").innerHTML = `<img alt="your play and the best" src="/api/drills/${c.card}/board.svg?` +
        `answer=${encodeURIComponent(v.answer)}&best=${encodeURIComponent(v.best)}">`;
    }
    $("drill-answer").querySelectorAll("input, button").forEach((e) => { e.disabled = true; });
    $("drill-next").addEventListener("click", () => {
      drill.index += 1;
      showCard();
    });
    $("drill-next").focus();
    const d = await api(`/api/drills?player=${encodeURIComponent(drill.player)}&limit=1`);
    showProgress(d.progress, 0);
  } catch (error) {
    showError(error.message);
  }
}

$("drill-form").addEventListener("submit", startDrills);

// A player's error rate match by match (a line over time; click a point to open that match) and worst decisions.
async function showPlayer(event) {
  event?.preventDefault();
  showError("");
  const name = $("player-name").value;
  if (!name) return;
  try {
    const p = await api(`/api/players/${encodeURIComponent(name)}`);
    match = null;
    $("view").hidden = false;
    $("graph").hidden = false;
    $("moves-card").hidden = true;
    $("summary").hidden = true;
    $("title").textContent = `${name}: ${p.history.length} analysed match${p.history.length === 1 ? "" : "es"}`;
    const w = 900, h = 160, pad = 24;
    const rates = p.history.map((m) => m.error_rate);
    const hi = Math.max(...rates, 1) * 1.1;
    const x = (i) => pad + (i * (w - 2 * pad)) / Math.max(p.history.length - 1, 1);
    const y = (v) => h - pad - (v * (h - 2 * pad)) / hi;
    const path = p.history.map((m, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(m.error_rate).toFixed(1)}`).join(" ");
    let svg = `<svg viewBox="0 0 ${w} ${h}" role="img"><title>${name}'s error rate (mEMG a decision), ` +
      `match by match, oldest first</title><path d="${path}" class="line"/>` +
      `<text x="${pad}" y="14" class="label">mEMG a decision (max ${hi.toFixed(0)})</text>`;
    p.history.forEach((m, i) => {
      svg += `<circle cx="${x(i).toFixed(1)}" cy="${y(m.error_rate).toFixed(1)}" r="5" class="pt" ` +
        `data-match="${m.match_id}"><title>${m.date.slice(0, 10)} v ${m.opponent}: ` +
        `${m.error_rate.toFixed(1)} (PR ${m.pr.toFixed(1)})</title></circle>`;
    });
    $("graph").innerHTML = svg + "</svg>";
    $("graph").querySelectorAll("circle").forEach((c) => c.addEventListener("click",
      () => openMatch(Number(c.dataset.match))));
    $("decision-board").innerHTML = "";
    const box = $("decision");
    box.innerHTML = "<h3>Worst decisions</h3><ol class=decisions></ol>" +
      "<div class=note>Click one to open it in its match; the line above is the error rate of each match.</div>";
    const list = box.querySelector("ol");
    for (const d of p.worst) {
      const item = document.createElement("li");
      item.className = d.mark ? MARK_CLASS[d.mark] : "";
      item.textContent = `${emg(-d.error)} match ${d.match_id}, game ${d.game}: ${d.kind}` +
        (d.dice ? ` ${d.dice}` : "") + `, played ${d.played}, best ${d.best}`;
      item.addEventListener("click", async () => {
        await openMatch(d.match_id);
        selectSeq(d.seq);
      });
      list.appendChild(item);
    }
  } catch (error) {
    showError(error.message);
  }
}

$("player-form").addEventListener("submit", showPlayer);
$("only-marked").addEventListener("change", () => match && listDecisions());
document.addEventListener("keydown", (event) => {
  if (!match || event.target.closest("input, textarea, select")) return;  // (drills: no arrow stepping)
  if (event.key === "ArrowRight" || event.key === "ArrowDown") select(current + 1);
  else if (event.key === "ArrowLeft" || event.key === "ArrowUp") select(current - 1);
  else return;
  event.preventDefault();
});

// Start: ?match=ID opens a stored analysis; ?session=KEY analyses the match of a play page's session.
(async () => {
  try {
    await loadStored();
    const params = new URLSearchParams(location.search);
    if (params.get("match")) await openMatch(Number(params.get("match")));
    else if (params.get("session")) {
      const response = await fetch(`/api/sessions/${encodeURIComponent(params.get("session"))}/match.mat`);
      if (!response.ok) throw new Error("that game is no longer on the server");
      await analyse(await response.text(), "played on the page");
    }
  } catch (error) {
    showError(error.message);
  }
})();
