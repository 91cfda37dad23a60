"""A backgammon board as SVG: a pure function of a position and what to show on it.

One drawing serves the web page (``bgai serve``), the HTML analysis report and notebooks. ``board_svg`` draws the
position with the player on roll at the bottom (or its opponent, ``bottom="opponent"``): wooden frame, felt, points
numbered from the bottom player's side, the bar (each side's checkers on its own half), the borne-off trays on the
right (the bottom player's below), pip counts, the cube on its owner's side (in the middle when centered), the dice
of the player on roll on its side, and marks: arrows, the last play, a picked-up checker and where it may go.

Point numbers given to it are the player on roll's (1..24, 25 its bar, 0 off), except ``last_move``, which is in
the numbering of the player who made it. Clickable parts carry ``data-point`` attributes in the bottom player's
numbering (``"1"``..``"24"``, ``"bar"`` and ``"off"`` for its bar and tray), for a page to use; the drawing knows no
rules.

    >>> from bgai import Position
    >>> svg = board_svg(Position.start(), dice=(6, 5), arrows=[(24, 18), (18, 13)])
    >>> svg.startswith("<svg") and svg.count('class="checker') == 30 and "167" in svg
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

import numpy as np

from bgai.core.cube import CubeOwner
from bgai.core.errors import BgaiError
from bgai.core.movegen import OPP_BAR, OWN_BAR

# Geometry (SVG user units). Points are PW wide; checkers R in radius; five fit on a point.
PW = 56
R = 26
CUBE_W = 70  # the frame's left side, where the cube waits
FRAME = 14  # the frame between the right half and the trays, and right of the trays
HALF = 6 * PW
BAR_W = 56
TRAY_W = 76
NUMBERS = 30  # the frame above and below the points, where their numbers are written
POINT_H = 250
INNER_H = 580
NAME_H = 24  # a band above and below the board for the players' names, when given

LEFT = CUBE_W  # x of the left half's edge
BAR_X = LEFT + HALF
RIGHT = BAR_X + BAR_W
TRAY_X = RIGHT + HALF + FRAME
WIDTH = TRAY_X + TRAY_W + FRAME
TOP = NUMBERS  # y of the inner board's top
BOTTOM = TOP + INNER_H
MID = TOP + INNER_H // 2
HEIGHT = BOTTOM + NUMBERS

THEME = {
    "wood": "#6b4423", "wood_dark": "#4a2e17", "wood_light": "#8a5a32", "felt": "#1f5c40", "felt_dark": "#184a33",
    "point_light": "#e9d9b4", "point_dark": "#a5432c", "numbers": "#f1e6cf",
    "bottom": "#f6efe0", "bottom_edge": "#b9ab8f", "bottom_text": "#3a2a1a",
    "top": "#2a2522", "top_edge": "#0d0b0a", "top_text": "#f1e6cf",
    "highlight": "#ffd54a", "target": "#7dd3fc", "last": "#ffb74d", "arrow": "#e0442f", "names": "#2b2b2b",
}


def point_xy(point: int, slot: int) -> tuple[float, float]:
    """Centre of the ``slot``-th checker (from the edge) on ``point`` (1..24, the bottom player's numbering)."""
    if point <= 6:
        x = RIGHT + (6 - point) * PW + PW / 2
    elif point <= 12:
        x = LEFT + (12 - point) * PW + PW / 2
    elif point <= 18:
        x = LEFT + (point - 13) * PW + PW / 2
    else:
        x = RIGHT + (point - 19) * PW + PW / 2
    slot = min(slot, 4)
    y = BOTTOM - R - slot * 2 * R if point <= 12 else TOP + R + slot * 2 * R
    return x, y


def _bar_xy(bottom: bool, slot: int) -> tuple[float, float]:
    slot = min(slot, 3)
    dy = 40 + R + slot * 2 * R
    return BAR_X + BAR_W / 2, (MID + dy - R) if bottom else (MID - dy + R)


def board_svg(
    position,
    *,
    dice: Sequence[int] | None = None,
    cube: int = 1,
    cube_owner: str | CubeOwner | None = "centered",
    arrows: Iterable[tuple] = (),
    names: tuple[str, str] | None = None,
    show_pips: bool = True,
    width: int | None = 540,
    title: str | None = None,
    bottom: str = "on_roll",
    dice_left: Sequence[int] | None = None,
    dice_roller: str = "me",
    cube_offered: bool = False,
    last_move: Iterable[tuple[int, int]] = (),
    last_mover: str = "opponent",
    selected: int | None = None,
    targets: Iterable[int] = (),
    point_numbers: bool = True,
    interactive: bool = False,
) -> str:
    """The SVG of ``position``, a ``Position`` or its board (seen from the player on roll, as always).

    ``dice``: the roll of the player on roll, drawn on its side; ``dice_left``: the dice it has still to play (the
    others are drawn faded); ``dice_roller``: ``"opponent"`` draws ``dice`` on the opponent's side instead (the
    roll it has just played, say). ``cube``: its value; ``cube_owner``: a ``CubeOwner``, ``"centered"``, ``"me"`` (the
    player on roll), ``"opponent"`` or ``None`` (no cube, e.g. in the Crawford game); ``cube_offered``: the cube, at
    value ``cube``, is being offered (drawn in the middle, lit). ``arrows``: checker steps ``(from, to)`` or
    ``(from, to, colour)`` in the player on roll's numbering. ``names``: (player on roll, opponent), written with
    the pip counts above and below the board; without names the pip counts stand between the trays
    (``show_pips``). ``width``: in pixels (``None``: scales to its container); ``title``: a tooltip.

    ``bottom``: ``"on_roll"`` (default) or ``"opponent"``, the player drawn at the bottom (moving from 24 at the
    top right round to 1 at the bottom right, bearing off to the right). ``last_move``: the checker steps of the
    last play, in the numbering of ``last_mover`` (``"me"`` the player on roll, or ``"opponent"``), marked by a
    dashed ring where a checker left and a ring where it landed. ``selected``: a point whose top checker is
    picked up; ``targets``: points it may go to. ``interactive``: add click areas (``class="hit"``) and hidden
    landing marks (``class="landing"``, where a checker would land on each point and in the tray) for a page.
    """
    if bottom not in ("on_roll", "opponent"):
        raise ValueError(f"bottom must be 'on_roll' or 'opponent', got {bottom!r}")
    if cube_owner is not None:
        try:
            cube_owner = CubeOwner.parse(cube_owner).word
        except BgaiError:
            raise ValueError(f"cube_owner is 'centered', 'me', 'opponent', a CubeOwner or None, got {cube_owner!r}") \
                from None
    if last_mover not in ("me", "opponent"):
        raise ValueError(f"last_mover is 'me' or 'opponent', got {last_mover!r}")
    if dice_roller not in ("me", "opponent"):
        raise ValueError(f"dice_roller is 'me' or 'opponent', got {dice_roller!r}")
    flip = bottom == "opponent"
    board = np.asarray(getattr(position, "board", position), dtype=np.int64)
    if flip:
        board = -board[::-1]
    roller = "top" if flip else "bottom"

    def side_of(whose: str) -> str:  # "me"/"opponent" -> where that player is drawn
        return ("bottom" if whose == "me" else "top") if not flip else ("top" if whose == "me" else "bottom")

    def drawn(point: int, whose: str = "me"):
        """A point of ``whose`` numbering as the drawing's: 1..24 bottom numbering, or bar/off of a side."""
        side = side_of(whose)
        if point == OWN_BAR:
            return "bar" if side == "bottom" else "top-bar"
        if point <= 0:
            return "off" if side == "bottom" else "top-off"
        return point if side == "bottom" else 25 - point

    targets = {drawn(int(t)) for t in targets}
    selected = None if selected is None else drawn(int(selected))
    extra = 2 * NAME_H if names else 0
    parts: list[str] = []
    add = parts.append
    width_attr = f' width="{width}" height="{round(width * (HEIGHT + extra) / WIDTH)}"' if width else ""
    add(f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT + extra}"{width_attr} '
        f'class="bgai-board" font-family="Helvetica, Arial, sans-serif" role="img">')
    if title:
        add(f"<title>{escape(title)}</title>")
    add(_defs())
    if names:
        add(f'<g transform="translate(0 {NAME_H})">')
    # Frame, felt, bar, trays.
    add(f'<rect x="1.5" y="1.5" width="{WIDTH - 3}" height="{HEIGHT - 3}" rx="14" fill="url(#bg-wood)" '
        f'stroke="{THEME["wood_dark"]}" stroke-width="3"/>')
    for x0 in (LEFT, RIGHT):
        add(f'<rect x="{x0}" y="{TOP}" width="{HALF}" height="{INNER_H}" fill="url(#bg-felt)" '
            f'stroke="{THEME["wood_dark"]}" stroke-width="3"/>')
    add(f'<rect x="{BAR_X}" y="{TOP - 8}" width="{BAR_W}" height="{INNER_H + 16}" rx="3" fill="url(#bg-bar)" '
        f'stroke="{THEME["wood_dark"]}" stroke-width="1.5"/>')
    for y0 in (TOP, MID + 20):
        add(f'<rect x="{TRAY_X}" y="{y0}" width="{TRAY_W}" height="{INNER_H // 2 - 20}" rx="4" '
            f'fill="{THEME["wood_dark"]}" stroke="#2e1c0e" stroke-width="2"/>')
    # Points.
    for point in range(1, 25):
        x, _ = point_xy(point, 0)
        up = point <= 12
        base = BOTTOM if up else TOP
        tip = base - POINT_H if up else base + POINT_H
        colour = THEME["point_dark"] if point % 2 else THEME["point_light"]
        add(f'<polygon class="point" points="{x - PW / 2 + 2},{base} {x + PW / 2 - 2},{base} {x},{tip}" '
            f'fill="{colour}" stroke="rgba(0,0,0,0.25)" stroke-width="1"/>')
        if point_numbers:  # centred on the frame (dominant-baseline): a page may draw them larger
            ny = BOTTOM + NUMBERS / 2 if up else NUMBERS / 2
            add(f'<text class="number" x="{x}" y="{ny}" text-anchor="middle" dominant-baseline="central" '
                f'font-size="16" font-weight="700" fill="{THEME["numbers"]}">{point}</text>')
    moved_from = [drawn(int(a), last_mover) for a, _ in last_move]
    moved_to = [drawn(int(b), last_mover) for _, b in last_move]
    # Checkers.
    for point in range(1, 25):
        count = int(board[point])
        for slot in range(min(abs(count), 5)):
            x, y = point_xy(point, slot)
            label = abs(count) if slot == 4 and abs(count) > 5 else None
            add(_checker(x, y, "bottom" if count > 0 else "top", point, label))
    for side, index in (("bottom", OWN_BAR), ("top", OPP_BAR)):
        count = abs(int(board[index]))
        for slot in range(min(count, 4)):
            x, y = _bar_xy(side == "bottom", slot)
            label = count if slot == 3 and count > 4 else None
            add(_checker(x, y, side, "bar" if side == "bottom" else "top-bar", label))
    off_bottom = 15 - int(board[board > 0].sum())
    off_top = 15 + int(board[board < 0].sum())
    for side, off in (("bottom", off_bottom), ("top", off_top)):
        for i in range(off):
            sx = TRAY_X + (TRAY_W - 2 * R) / 2
            sy = BOTTOM - 6 - (i + 1) * 16 if side == "bottom" else TOP + 6 + i * 16
            edge = THEME["bottom_edge"] if side == "bottom" else "#6d635b"
            add(f'<rect class="borne-off {side}" x="{sx}" y="{sy}" width="{2 * R}" height="13" rx="4" '
                f'fill="url(#bg-{side})" stroke="{edge}" stroke-width="1.5"/>')
        if off:
            ty = BOTTOM - 12 - off * 16 if side == "bottom" else TOP + 24 + off * 16
            add(f'<text class="off-count" x="{TRAY_X + TRAY_W / 2}" y="{ty}" text-anchor="middle" font-size="13" '
                f'font-weight="700" fill="{THEME["numbers"]}">{off}</text>')
    # Marks: the last play, the picked-up checker, the targets.
    for point in moved_from:
        add(_ring_at(board, point, THEME["last"], dashed=True, empty_slot=True))
    for point in moved_to:
        add(_ring_at(board, point, THEME["last"]))
    if selected is not None:
        add(_ring_at(board, selected, THEME["highlight"], width=4))
    for point in sorted(targets, key=str):
        add(_target_mark(board, point))
    if arrows:
        add(_arrows(board, [(drawn(int(a[0])), drawn(int(a[1])), *a[2:]) for a in arrows]))
    # Pip counts, between the trays (or with the names); the cube; the dice.
    if show_pips and not names:
        p_bottom = int(np.where(board > 0, board, 0) @ np.arange(26))
        p_top = int(np.where(board < 0, -board, 0) @ (25 - np.arange(26)))
        cx = TRAY_X + TRAY_W / 2
        add('<g class="pip-counts">')
        for side, value, y in (("top", p_top, MID - 3), ("bottom", p_bottom, MID + 15)):
            add(f'<circle cx="{cx - 24}" cy="{y - 5}" r="5" fill="url(#bg-{side})" stroke="#1a1512" '
                f'stroke-width="0.8"/><text class="pips {side}" x="{cx + 6}" y="{y}" text-anchor="middle" '
                f'font-size="14" font-weight="700" fill="{THEME["numbers"]}">{value}</text>')
        add(f'<text x="{cx}" y="{MID - 22}" text-anchor="middle" font-size="10" fill="{THEME["numbers"]}" '
            f'opacity="0.75">PIPS</text></g>')
    if cube_owner is not None or cube_offered:
        add(_cube(cube, None if cube_owner in ("centered", None) else side_of(cube_owner), cube_offered))
    if interactive:
        add(_interaction(board))
    if dice is not None:  # above the click areas: a page may let the dice be clicked
        add(_dice(dice, dice_left, roller if dice_roller == "me" else side_of("opponent")))
    if names:
        add("</g>")
        p_bottom = int(np.where(board > 0, board, 0) @ np.arange(26))
        p_top = int(np.where(board < 0, -board, 0) @ (25 - np.arange(26)))
        drawn_names = names[::-1] if flip else names
        for who, pips, off, y in ((drawn_names[1], p_top, off_top, NAME_H - 6),
                                  (drawn_names[0], p_bottom, off_bottom, HEIGHT + 2 * NAME_H - 6)):
            text = f"  pips {pips}" + (f", {off} off" if off else "") if show_pips else ""
            add(f'<text x="{LEFT}" y="{y}" font-size="15" fill="{THEME["names"]}"><tspan font-weight="bold">'
                f'{escape(who)}</tspan>{text}</text>')
    add("</svg>")
    return "\n".join(parts)


def _interaction(board: np.ndarray) -> str:
    """Click areas, on top of the drawing: a column per point, the bottom player's bar and tray; and a hidden
    landing mark on each point and the tray, for a page to show where a checker may go."""
    parts: list[str] = []
    add = parts.append
    for point in range(1, 25):
        x, _ = point_xy(point, 0)
        y0 = MID if point <= 12 else TOP
        add(f'<rect class="hit" data-point="{point}" x="{x - PW / 2}" y="{y0}" width="{PW}" height="{INNER_H // 2}" '
            f'fill="transparent"/>')
    add(f'<rect class="hit" data-point="bar" x="{BAR_X}" y="{MID}" width="{BAR_W}" height="{INNER_H // 2}" '
        f'fill="transparent"/>')
    add(f'<rect class="hit" data-point="off" x="{TRAY_X}" y="{MID + 20}" width="{TRAY_W}" '
        f'height="{INNER_H // 2 - 20}" fill="transparent"/>')
    for point in range(1, 25):
        count = int(board[point])
        x, y = point_xy(point, min(count, 4) if count > 0 else 0)
        add(f'<circle class="landing" data-point="{point}" cx="{x}" cy="{y}" r="{R * 0.42}" '
            f'fill="{THEME["target"]}" fill-opacity="0.9" stroke="#0c4a6e" stroke-width="2" visibility="hidden" '
            f'pointer-events="none"/>')
    add(f'<rect class="landing" data-point="off" x="{TRAY_X + 3}" y="{MID + 23}" width="{TRAY_W - 6}" '
        f'height="{INNER_H // 2 - 26}" rx="4" fill="{THEME["target"]}" fill-opacity="0.25" stroke="{THEME["target"]}" '
        f'stroke-width="3" visibility="hidden" pointer-events="none"/>')
    return "".join(parts)


def _defs() -> str:
    t = THEME
    return f"""<defs>
<linearGradient id="bg-wood" x1="0" y1="0" x2="1" y2="1">
<stop offset="0" stop-color="{t['wood_light']}"/><stop offset="0.5" stop-color="{t['wood']}"/>
<stop offset="1" stop-color="{t['wood_dark']}"/></linearGradient>
<linearGradient id="bg-bar" x1="0" y1="0" x2="1" y2="0">
<stop offset="0" stop-color="{t['wood_dark']}"/><stop offset="0.5" stop-color="{t['wood_light']}"/>
<stop offset="1" stop-color="{t['wood_dark']}"/></linearGradient>
<radialGradient id="bg-felt" cx="0.5" cy="0.5" r="0.75">
<stop offset="0" stop-color="{t['felt']}"/><stop offset="1" stop-color="{t['felt_dark']}"/></radialGradient>
<radialGradient id="bg-bottom" cx="0.35" cy="0.3" r="0.8">
<stop offset="0" stop-color="#ffffff"/><stop offset="0.6" stop-color="{t['bottom']}"/>
<stop offset="1" stop-color="#d9ccb0"/></radialGradient>
<radialGradient id="bg-top" cx="0.35" cy="0.3" r="0.8">
<stop offset="0" stop-color="#5b514b"/><stop offset="0.6" stop-color="{t['top']}"/>
<stop offset="1" stop-color="#141110"/></radialGradient>
<filter id="bg-shadow" x="-20%" y="-20%" width="140%" height="140%">
<feDropShadow dx="1.5" dy="2" stdDeviation="1.5" flood-opacity="0.45"/></filter>
</defs>"""


def _checker(x: float, y: float, side: str, point, label: int | None) -> str:
    t = THEME
    text = ""
    if label is not None:
        text = (f'<text x="{x}" y="{y}" text-anchor="middle" dominant-baseline="central" font-size="17" '
                f'font-weight="700" fill="{t[side + "_text"]}">{label}</text>')
    return (f'<g class="checker {side}" data-point="{point}" filter="url(#bg-shadow)">'
            f'<circle cx="{x}" cy="{y}" r="{R - 1}" fill="url(#bg-{side})" stroke="{t[side + "_edge"]}" '
            f'stroke-width="2"/><circle cx="{x}" cy="{y}" r="{R - 8}" fill="none" stroke="{t[side + "_edge"]}" '
            f'stroke-width="1" opacity="0.6"/>{text}</g>')


def _stack_top(board: np.ndarray, point) -> tuple[float, float, int]:
    """(x, y) of the top checker of a point or bar (and how many there are); of the first slot when empty."""
    if point in ("bar", "top-bar"):
        bottom = point == "bar"
        count = abs(int(board[OWN_BAR if bottom else OPP_BAR]))
        return (*_bar_xy(bottom, max(count - 1, 0)), count)
    count = abs(int(board[point]))
    return (*point_xy(point, max(count - 1, 0)), count)


def _ring_at(board, point, colour: str, dashed: bool = False, width: float = 3, empty_slot: bool = False) -> str:
    if point in ("off", "top-off"):
        y0 = MID + 20 if point != "top-off" else TOP
        return (f'<rect class="mark" x="{TRAY_X + 2}" y="{y0 + 2}" width="{TRAY_W - 4}" height="{INNER_H // 2 - 24}" '
                f'rx="4" fill="none" stroke="{colour}" stroke-width="{width}" pointer-events="none"/>')
    if empty_slot:
        if point in ("bar", "top-bar"):
            return ""
        count = abs(int(board[point]))
        if count >= 5:
            return ""
        x, y = point_xy(point, count)
    else:
        x, y, _ = _stack_top(board, point)
    dash = ' stroke-dasharray="5 4"' if dashed else ""
    return (f'<circle class="mark" cx="{x}" cy="{y}" r="{R}" fill="none" stroke="{colour}" '
            f'stroke-width="{width}"{dash} pointer-events="none"/>')


def _target_mark(board: np.ndarray, point) -> str:
    colour = THEME["target"]
    if point in ("bar", "top-bar", "top-off"):
        return ""
    if point == "off":
        return (f'<rect class="target" data-point="off" x="{TRAY_X + 2}" y="{MID + 22}" width="{TRAY_W - 4}" '
                f'height="{INNER_H // 2 - 24}" rx="4" fill="{colour}" fill-opacity="0.25" stroke="{colour}" '
                f'stroke-width="3" pointer-events="none"/>')
    count = int(board[point])
    slot = count if count > 0 else 0  # a blot is hit: land on its spot
    x, y = point_xy(point, min(slot, 4))
    return (f'<circle class="target" data-point="{point}" cx="{x}" cy="{y}" r="{R * 0.45}" fill="{colour}" '
            f'fill-opacity="0.8" stroke="#0c4a6e" stroke-width="1.5" pointer-events="none"/>')


def _cube(value: int, owner: str | None, offered: bool) -> str:
    size = 46
    x = CUBE_W / 2
    y: float
    if offered:
        y = MID
    else:
        y = MID if owner is None else BOTTOM - size / 2 - 4 if owner == "bottom" else TOP + size / 2 + 4
    shown = 64 if owner is None and value == 1 and not offered else value
    stroke = THEME["highlight"] if offered else "#3b2a1a"
    return (f'<g class="cube" data-owner="{owner or "center"}"><rect x="{x - size / 2}" y="{y - size / 2}" '
            f'width="{size}" height="{size}" rx="7" fill="#fbf7ee" stroke="{stroke}" '
            f'stroke-width="{4 if offered else 2}" filter="url(#bg-shadow)"/>'
            f'<text x="{x}" y="{y}" text-anchor="middle" dominant-baseline="central" '
            f'font-size="{22 if shown < 10 else 19}" font-weight="800" fill="#3b2a1a">{shown}</text></g>')


_PIPS = {1: [(0, 0)], 2: [(-1, -1), (1, 1)], 3: [(-1, -1), (0, 0), (1, 1)], 4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
         5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)], 6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)]}


def _dice(dice: Sequence[int], left: Sequence[int] | None, roller: str) -> str:
    d1, d2 = int(dice[0]), int(dice[1])
    faces = [d1, d2] * (2 if d1 == d2 else 1)
    remaining = list(faces if left is None else left)
    used = []
    for face in faces:  # the dice still to play stay bright, the rest fade
        if face in remaining:
            remaining.remove(face)
            used.append(False)
        else:
            used.append(True)
    size = 46 if len(faces) == 2 else 40
    gap = 12 if len(faces) == 2 else 8
    total = len(faces) * size + (len(faces) - 1) * gap
    cx = RIGHT + HALF / 2 if roller == "bottom" else LEFT + HALF / 2
    fill, pip = ("#fbf7ee", "#2a2522") if roller == "bottom" else ("#2a2522", "#fbf7ee")
    out = [f'<g class="dice" data-roller="{roller}">', f'<rect x="{cx - total / 2 - 4}" y="{MID - size / 2 - 4}" '
           f'width="{total + 8}" height="{size + 8}" fill="transparent"/>']
    for i, (face, faded) in enumerate(zip(faces, used)):
        x = cx - total / 2 + i * (size + gap)
        y = MID - size / 2
        opacity = ' opacity="0.35"' if faded else ""
        out.append(f'<g class="die{" used" if faded else ""}"{opacity}><rect x="{x}" y="{y}" width="{size}" '
                   f'height="{size}" rx="8" fill="{fill}" stroke="#1a1512" stroke-width="1.5" '
                   f'filter="url(#bg-shadow)"/>')
        for px, py in _PIPS[face]:
            out.append(f'<circle cx="{x + size / 2 + px * size * 0.26}" cy="{y + size / 2 + py * size * 0.26}" '
                       f'r="{size * 0.09}" fill="{pip}"/>')
        out.append("</g>")
    out.append("</g>")
    return "".join(out)


def _arrows(board: np.ndarray, arrows) -> str:
    """Lines with heads from each step's source checker to where it lands, in order (drawn numbering)."""
    counts: dict[int | str, int] = {p: abs(int(board[p])) for p in range(1, 25)}
    counts["bar"], counts["top-bar"] = abs(int(board[OWN_BAR])), abs(int(board[OPP_BAR]))
    out = ['<defs><marker id="bg-head" viewBox="0 0 10 10" refX="7" refY="5" markerWidth="4" markerHeight="4" '
           'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>']
    for arrow in arrows:
        src, dst = arrow[0], arrow[1]
        colour = arrow[2] if len(arrow) > 2 else THEME["arrow"]
        x2: float
        y2: float
        x1, y1 = _slot_xy(src, max(counts.get(src, 1) - 1, 0))
        counts[src] = max(counts.get(src, 1) - 1, 0)
        if dst in ("off", "top-off"):
            x2, y2 = TRAY_X + TRAY_W / 2, (BOTTOM - 40) if dst == "off" else (TOP + 40)
        else:
            hit = isinstance(dst, int) and counts.get(dst, 0) == 1 and (board[dst] > 0) != (
                board[src] > 0 if isinstance(src, int) else src == "bar")
            slot = 0 if hit else counts.get(dst, 0)
            x2, y2 = _slot_xy(dst, slot)
            counts[dst] = 1 if hit else counts.get(dst, 0) + 1
        out.append(f'<line class="arrow" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}" '
                   f'stroke-width="7" stroke-opacity="0.8" stroke-linecap="round" marker-end="url(#bg-head)" '
                   f'pointer-events="none"/>')
    return "".join(out)


def _slot_xy(point, slot: int) -> tuple[float, float]:
    if point in ("bar", "top-bar"):
        return _bar_xy(point == "bar", slot)
    return point_xy(point, slot)
