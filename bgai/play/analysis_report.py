"""Reports of a match analysis (``bgai.play.analysis.MatchAnalysis``): plain text and a self-contained HTML page with
the board of each marked error (``bgai.formats.svg.board_svg``) and an equity graph over the match."""

from __future__ import annotations

from html import escape

from bgai.core.cube import CubeOwner
from bgai.formats.svg import board_svg
from bgai.play.analysis import Decision, MatchAnalysis

_MARK_COLOURS = {"very bad": "#c92a2a", "bad": "#e8590c", "doubtful": "#f2b705"}


def _title(analysis: MatchAnalysis) -> str:
    record = analysis.record
    return f"{record.players[0]} v {record.players[1]}"


def _setting(analysis: MatchAnalysis) -> str:
    record = analysis.record
    kind = f"{record.length}-point match" if record.length else "money session"
    games = f"{len(record.games)} game{'s' if len(record.games) != 1 else ''}"
    score = f"final score {record.score[0]}-{record.score[1]}"
    winner = f", {record.players[record.winner]} wins" if record.winner is not None else ""
    return f"{kind}, {games}, {score}{winner}"


def _who(analysis: MatchAnalysis, d: Decision) -> str:
    return analysis.record.players[d.player]


def _dice(d: Decision) -> str:
    """A checker play's roll, ``"63"`` (a cube decision has none)."""
    return "" if d.dice is None else f"{d.dice[0]}{d.dice[1]}"


def _decision_text(analysis: MatchAnalysis, d: Decision) -> str:
    if d.kind == "move":
        return f"{_dice(d)}: played {d.played}, best {d.best}"
    if d.kind == "double":
        return f"cube: {d.played}, best {d.best}{_cube_equities(d)}"
    if d.kind in ("resign", "accept"):
        shown = ", ".join(f"{text.lower()} {value:+.3f}" for text, value in d.candidates)
        what = "resignation" if d.kind == "resign" else "accepting a resignation"
        return f"{what}: {d.played}, best {d.best} ({shown}; EMG for the resigner)"
    return f"answer to a double: {d.played}, best {d.best}{_cube_equities(d)}"


def _cube_equities(d: Decision) -> str:
    """A cube decision's cubeful equities as the text report gives them, in EMG for the doubler (the HTML report's
    table in one line)."""
    shown = ", ".join(f"{text.lower().replace(', ', '/')} {value:+.3f}" for text, value in d.candidates)
    return f" ({shown}; EMG for the doubler)" if shown else ""


def _summary_rows(analysis: MatchAnalysis) -> list[tuple[str, str, str]]:
    a, b = analysis.players
    money = analysis.record.length == 0
    unit = "points" if money else "MWC"

    def both(f):
        return f(a), f(b)

    def marks(p, which):
        m = getattr(p, which)
        return f"{m['doubtful']} / {m['bad']} / {m['very bad']}"

    def result(value):
        return f"{value:+.2f} points" if money else f"{100 * value:+.1f}%"

    rows = [
        ("Checker plays (unforced)", *both(lambda p: f"{p.moves} ({p.unforced})")),
        ("  marked doubtful / bad / very bad", *both(lambda p: marks(p, "checker_marks"))),
        ("  error, EMG (" + unit + ")", *both(lambda p: f"{p.checker_error:.3f} ({_cost(p.checker_cost, money)})")),
        ("  error rate, mEMG per move", *both(lambda p: f"{p.checker_rate:.1f}")),
        ("Cube decisions (close or actual)", *both(lambda p: f"{p.cube_decisions} ({p.close_cube})")),
        ("  doubles / takes / passes", *both(lambda p: f"{p.doubles} / {p.takes} / {p.drops}")),
        ("  marked doubtful / bad / very bad", *both(lambda p: marks(p, "cube_marks"))),
        ("  error, EMG (" + unit + ")", *both(lambda p: f"{p.cube_error:.3f} ({_cost(p.cube_cost, money)})")),
        ("  error rate, mEMG per decision", *both(lambda p: f"{p.cube_rate:.1f}")),
        ("Resignations (offered or accepted)", *both(lambda p: f"{p.resignations}")),
        ("  error, EMG (" + unit + ")", *both(lambda p: f"{p.resign_error:.3f} ({_cost(p.resign_cost, money)})")),
        ("Error rate, mEMG per decision", *both(lambda p: f"{p.error_rate:.1f}")),
        ("PR-style (500 x EMG / decision)", *both(lambda p: f"{p.pr:.1f}")),
        ("Rating", *both(lambda p: p.rating)),
        ("Luck, EMG (" + unit + ")", *both(lambda p: f"{p.luck:+.3f} ({_cost(p.luck_cost, money, sign=True)})")),
        ("  very lucky / lucky / unlucky / very unlucky", *both(
            lambda p: " / ".join(str(p.luck_marks[k]) for k in ("very lucky", "lucky", "unlucky", "very unlucky")))),
        ("Actual result", *both(lambda p: result(p.actual_result))),
        ("Luck-adjusted result", *both(lambda p: result(p.luck_adjusted_result))),
    ]
    return rows


def _cost(value: float, money: bool, sign: bool = False) -> str:
    if money:
        return f"{value:+.2f}" if sign else f"{value:.2f}"
    return f"{100 * value:+.2f}%" if sign else f"{100 * value:.2f}%"


# Text --------------------------------------------------------------------------------------------------------------


def text_report(analysis: MatchAnalysis) -> str:
    """The analysis as plain text: the summary, the marked errors, the definitions."""
    a, b = analysis.players
    lines = [f"{_title(analysis)}: {_setting(analysis)}",
             f"Analysed by {analysis.bot} at {analysis.plies}-ply in {analysis.seconds:.1f} s "
             f"({len(analysis.decisions)} decisions). Errors in EMG; costs in "
             f"{'points' if analysis.record.length == 0 else 'match-winning chance (MWC)'}.",
             f"Cube decisions judged by {analysis.cube_method_text}.", ""]
    rows = _summary_rows(analysis)
    width = max(len(r[0]) for r in rows) + 2
    lines.append(f"{'':<{width}}{a.name[:20]:>22}{b.name[:20]:>22}")
    lines += [f"{label:<{width}}{x:>22}{y:>22}" for label, x, y in rows]
    marked = analysis.marked
    lines += ["", f"Marked errors ({len(marked)}):"]
    for d in marked:
        lines.append(f"  game {d.game} row {d.row:>3}  {_who(analysis, d):<12} {d.mark:<9} {-d.error:+.3f}  "
                     f"{_decision_text(analysis, d)}  [{d.position.position_id()}]")
    if not marked:
        lines.append("  none")
    lines += ["", "Definitions:"] + [f"  {name}: {text}" for name, text in analysis.definitions.items()]
    return "\n".join(lines) + "\n"


# HTML --------------------------------------------------------------------------------------------------------------

_CSS = """
body{margin:0;background:#f7f4ee;color:#222;font:15px/1.45 -apple-system,'Segoe UI',Helvetica,Arial,sans-serif}
main{max-width:1100px;margin:0 auto;padding:28px 24px 60px}
h1{margin:0 0 4px;font-size:28px}
h2{margin:34px 0 12px;font-size:20px;border-bottom:2px solid #e2dccf;padding-bottom:4px}
.sub{color:#666;margin:0}
table{border-collapse:collapse;background:#fff;box-shadow:0 1px 2px #0001}
th,td{padding:5px 12px;text-align:right;border-bottom:1px solid #eee;white-space:nowrap}
th:first-child,td:first-child{text-align:left}
thead th{background:#efe9dc;font-weight:600}
tr.sep td{border-top:2px solid #e2dccf}
.num{font-variant-numeric:tabular-nums}
.errors{display:grid;grid-template-columns:1fr;gap:18px}
.err{background:#fff;box-shadow:0 1px 3px #0002;border-radius:8px;padding:14px 16px;
  display:flex;gap:18px;align-items:flex-start;flex-wrap:wrap}
.err h3{margin:0 0 8px;font-size:16px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-size:12px;font-weight:600;
  margin-left:6px;vertical-align:2px}
.played td{font-weight:600}.best td{color:#2b8a3e}
.small{color:#777;font-size:12px}
dl{background:#fff;padding:12px 18px;box-shadow:0 1px 2px #0001}
dt{font-weight:600;margin-top:8px}dd{margin:2px 0 0 0;color:#444}
.legend span{display:inline-block;margin-right:16px}
.sw{display:inline-block;width:12px;height:12px;border-radius:6px;vertical-align:-1px;margin-right:4px}
"""


def html_report(analysis: MatchAnalysis) -> str:
    """A self-contained HTML page: summary table, equity graph, each marked error with its board, definitions."""
    a, b = analysis.players
    out = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
           f"<title>bgai analysis: {escape(_title(analysis))}</title><style>{_CSS}</style></head><body><main>",
           f"<h1>{escape(_title(analysis))}</h1>",
           f"<p class='sub'>{escape(_setting(analysis))}. Analysed by {escape(analysis.bot)} at {analysis.plies}-ply "
           f"in {analysis.seconds:.1f} s ({len(analysis.decisions)} decisions); cube decisions judged by "
           f"{escape(analysis.cube_method_text)}.</p>"]
    # Summary.
    out.append("<h2>Summary</h2><table class='num'><thead><tr><th></th>"
               f"<th>{escape(a.name)}</th><th>{escape(b.name)}</th></tr></thead><tbody>")
    for label, x, y in _summary_rows(analysis):
        sep = " class='sep'" if not label.startswith(" ") and label != "Checker plays (unforced)" else ""
        name = escape(label.strip()) if not label.startswith(" ") else "&emsp;" + escape(label.strip())
        out.append(f"<tr{sep}><td>{name}</td><td>{escape(x)}</td><td>{escape(y)}</td></tr>")
    out.append("</tbody></table>")
    # Graph.
    out.append("<h2>Equity over the match</h2>")
    out.append(equity_graph_svg(analysis))
    # Marked errors.
    marked = analysis.marked
    out.append(f"<h2>Marked errors ({len(marked)})</h2>")
    if not marked:
        out.append("<p>None: no decision lost 0.03 EMG or more.</p>")
    out.append("<div class='errors'>")
    for d in marked:
        out.append(_error_card(analysis, d))
    out.append("</div>")
    # Definitions.
    out.append("<h2>Definitions</h2><dl>")
    for name, text in analysis.definitions.items():
        out.append(f"<dt>{escape(name.replace('_', ' ').capitalize())}</dt><dd>{escape(text)}</dd>")
    out.append("</dl></main></body></html>")
    return "\n".join(out)


def _on_roll(d: Decision) -> int:
    """The seat the decision's position is seen from (the mover, or the doubler of a take decision)."""
    return d.player if d.kind not in ("take", "accept") else 1 - d.player


#: The arrows' colours: the best play's, the play made's.
BEST_COLOUR, PLAYED_COLOUR = "#2f9e44", "#e03131"


def decision_board(position, kind: str, player: int, dice, cube: int, cube_owner: int | None, played: str | None,
                   best: str | None, players: tuple[str, str], crawford: bool, width: int = 430) -> str:
    """The SVG board of a decision, seen from the player on roll (the mover, or the doubler of a take decision),
    with arrows for the best play (green) and the play made (red) of a checker play (none where they are
    ``None``)."""
    from bgai.formats.position import parse_move

    on_roll = player if kind not in ("take", "accept") else 1 - player
    arrows = []
    if kind == "move":
        for text, paint in ((best, BEST_COLOUR), (played, PLAYED_COLOUR)):
            if text is not None and text != "no play":
                steps = parse_move(position, text, dice).checker_steps()
                arrows += [(src, max(dst, 0), paint) for src, dst, _ in steps]
    owner = None if crawford else CubeOwner.of_seat(cube_owner, on_roll).word
    return board_svg(position, dice=dice, cube=cube, cube_owner=owner, arrows=arrows,
                     names=(players[on_roll], players[1 - on_roll]), width=width)


def _error_card(analysis: MatchAnalysis, d: Decision) -> str:
    record = analysis.record
    players = record.players
    on_roll = _on_roll(d)
    colour = _MARK_COLOURS[d.mark or ""]
    board = decision_board(d.position, d.kind, d.player, d.dice, d.cube, d.cube_owner, d.played, d.best,
                           players, record.games[d.game - 1].crawford)
    what = f"{_dice(d)} to play" if d.kind == "move" else {
        "double": "cube decision", "take": "answer to a double", "resign": "resignation",
        "accept": "accepting a resignation"}[d.kind]
    head = (f"<h3>Game {d.game}, row {d.row}: {escape(players[d.player])}, {what}"
            f"<span class='badge' style='background:{colour}'>{d.mark} {-d.error:+.3f}</span></h3>")
    rows = []
    if d.kind == "move":
        _, best, deepest = d.candidates[0]
        rows.append("<tr><th>Play</th><th>Equity</th><th>Diff</th><th>Ply</th></tr>")
        for text, value, ply in d.candidates:
            cls = " class='played'" if text == d.played else (" class='best'" if text == d.best else "")
            diff = f"{value - best:+.3f}" if ply == deepest else "—"  # equities of different plies do not compare
            rows.append(f"<tr{cls}><td>{escape(text)}</td><td>{value:+.3f}</td><td>{diff}</td><td>{ply}</td></tr>")
        shallow = any(ply != deepest for _, _, ply in d.candidates)
        legend = "<p class='small'>Arrows: <b style='color:#e03131'>played</b>, <b style='color:#2f9e44'>best</b>." \
                 " Equities in EMG for the player to move, each at its Ply" + (
                     f"; a play of a lower Ply was dropped by move filtering before {deepest}-ply, and its equity, "
                     "of that ply, is not compared with the best play's (—)" if shallow else "") + ".</p>"
    elif d.kind in ("resign", "accept"):
        rows.append("<tr><th>Choice</th><th>Equity</th></tr>")
        for text, value in d.candidates:
            picked = text.lower() == d.played or (d.kind == "accept" and text.startswith("Resign"))
            rows.append(f"<tr{' class=played' if picked else ''}><td>{escape(text)}</td><td>{value:+.3f}</td></tr>")
        resigner = players[on_roll]
        legend = (f"<p class='small'>Cubeful equities in EMG for {escape(resigner)}, the resigner; best: "
                  f"{escape(d.best)}.</p>")
    else:
        rows.append("<tr><th>Cube action</th><th>Equity</th></tr>")
        chosen = {"double": "Double", "no double": "No double", "take": "Double, take", "pass": "Double, pass"}
        for text, value in d.candidates:
            cls = " class='played'" if text.startswith(chosen[d.played]) else ""
            rows.append(f"<tr{cls}><td>{escape(text)}</td><td>{value:+.3f}</td></tr>")
        doubler, taker = escape(players[on_roll]), escape(players[1 - on_roll])
        how = " (a cubeful rollout)" if d.method == "rollout" else ""
        if d.kind == "double":
            done = "doubled" if d.played == "double" else "did not double"
            legend = (f"<p class='small'>Cubeful equities{how} in EMG for {doubler}, on roll. {doubler} {done}; "
                      f"best: {escape(d.best)}.</p>")
        else:
            done = "took" if d.played == "take" else "passed"
            legend = (f"<p class='small'>{doubler} doubled. Cubeful equities{how} in EMG for {doubler}; {taker} "
                      f"{done}, the best answer was to {escape(d.best)}.</p>")
    pid = d.position.position_id()
    table = (f"<div>{head}<table class='num'>{''.join(rows)}</table>{legend}"
             f"<p class='small'>Position ID {pid} (from the side of {escape(players[on_roll])})</p></div>")
    return f"<article class='err'>{board}{table}</article>"


def equity_graph_svg(analysis: MatchAnalysis, width: int = 1040, height: int = 300) -> str:
    """Seat 0's match-winning chance (or, for money, expected points won) after each play, game by game, with
    the marked errors of both players as dots."""
    record = analysis.record
    points = analysis.graph
    if not points:
        return "<p>No plays.</p>"
    left, right, top, bottom = 56, 16, 16, 36
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [p["value"] for p in points]
    if record.length:
        lo, hi = 0.0, 1.0
    else:
        lo, hi = min(values + [0.0]), max(values + [0.0])
        pad = max(0.5, 0.1 * (hi - lo))
        lo, hi = lo - pad, hi + pad
    n = len(points)

    def x(i: float) -> float:
        return left + plot_w * (i / max(n - 1, 1))

    def y(v: float) -> float:
        return top + plot_h * (1 - (v - lo) / (hi - lo))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
           f'style="max-width:{width}px;background:#fff;box-shadow:0 1px 2px #0001" '
           'font-family="Helvetica, Arial, sans-serif" font-size="12">']
    ticks = [0, 0.25, 0.5, 0.75, 1.0] if record.length else _nice_ticks(lo, hi)
    for t in ticks:
        label = f"{100 * t:.0f}%" if record.length else ("0" if t == 0 else f"{t:+g}")
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#e7e2d6" '
                   f'stroke-width="{1.6 if (t == 0.5 and record.length) or (t == 0 and not record.length) else 1}"/>'
                   f'<text x="{left - 6}" y="{y(t) + 4:.1f}" text-anchor="end" fill="#666">{label}</text>')
    # Game boundaries.
    for i, p in enumerate(points):
        if p["label"] == "start":
            out.append(f'<line x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{top}" y2="{top + plot_h}" stroke="#bbb" '
                       f'stroke-dasharray="3,3"/><text x="{x(i) + 3:.1f}" y="{top + plot_h + 14}" fill="#666">'
                       f'G{p["game"]}</text>')
    path = " ".join(f"{'M' if i == 0 else 'L'}{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
    out.append(f'<path d="{path}" fill="none" stroke="#1c5d99" stroke-width="2"/>')
    # Marked errors: dots at the play (or cube decision) they belong to.
    moves = {(p["game"], p["row"], p["player"]): i for i, p in enumerate(points) if p["row"]}
    for d in analysis.marked:
        at = moves.get((d.game, d.row, d.player))
        if at is None:  # a cube decision: the last point before it
            before = [k for k, p in enumerate(points) if (p["game"], p["row"] or 0) <= (d.game, d.row)]
            if not before:
                continue
            at = before[-1]
        i = at
        out.append(f'<circle cx="{x(i):.1f}" cy="{y(values[i]):.1f}" r="5" fill="{_MARK_COLOURS[d.mark or ""]}" '
                   f'stroke="#fff" stroke-width="1.5"><title>Game {d.game} row {d.row}: '
                   f'{escape(record.players[d.player])} {d.mark} {-d.error:+.3f}</title></circle>')
    whose = "Your" if record.players[0] == "You" else f"{escape(record.players[0])}'s"
    what = f"{whose} match-winning chance" if record.length else f"{whose} expected points won"
    out.append(f'<text x="{left}" y="{height - 4}" fill="#444">{what} after each play (bgai 0-ply); dots: marked '
               f'errors (<tspan fill="{_MARK_COLOURS["very bad"]}">very bad</tspan>, '
               f'<tspan fill="{_MARK_COLOURS["bad"]}">bad</tspan>, '
               f'<tspan fill="#b08900">doubtful</tspan>)</text>')
    out.append("</svg>")
    return "".join(out)


def _nice_ticks(lo: float, hi: float) -> list[float]:
    span = hi - lo
    step = next(s for s in (0.5, 1, 2, 5, 10, 20, 50, 100) if span / s <= 6)
    first = int(lo // step + 1) * step
    return [first + k * step for k in range(int((hi - first) // step) + 1)]
