"""A backgammon board as SVG: a pure function of a position and what to show on it.

``board_svg(position, ...)`` draws the board with the player on roll at the bottom (or its opponent, with
``bottom="opponent"``): wooden frame, felt, points numbered from the bottom player's side, the bar, the borne-off
trays, pip counts, the cube by its owner, the dice of the player on roll, and optional marks (the last play, a
selected checker, the points it may go to). Every point number it takes is the bottom player's: 1..24, 25 for its
bar, 0 for its tray.

Clickable parts carry ``data-point`` attributes for a page to use (``"1"``..``"24"``, ``"bar"`` and ``"off"`` for
the bottom player's bar and tray); the drawing itself knows no rules.

    >>> from bgai import Position
    >>> svg = board_svg(Position.start(), dice=(6, 5))
    >>> svg.startswith("<svg") and svg.count('class="checker') == 30
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from bgai.movegen import OPP_BAR, OWN_BAR
from bgai.position import Position

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
    "highlight": "#ffd54a", "target": "#7dd3fc", "last": "#ffb74d",
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
    position: Position,
    *,
    bottom: str = "on_roll",
    dice: Sequence[int] | None = None,
    dice_left: Sequence[int] | None = None,
    cube: int = 1,
    cube_owner: str | None = None,
    cube_offered: bool = False,
    last_move: Iterable[tuple[int, int]] = (),
    last_mover: str = "bottom",
    selected: int | None = None,
    targets: Iterable[int] = (),
    point_numbers: bool = True,
    pips: bool = True,
    size: int | None = None,
) -> str:
    """The SVG of ``position`` (seen from the player on roll, as always).

    ``bottom``: ``"on_roll"`` draws the player on roll at the bottom (moving from 24 at the top right round to 1
    at the bottom right, bearing off to the right), ``"opponent"`` its opponent. ``dice``: the roll of the player
    on roll, drawn on its side; ``dice_left``: the dice it has still to play (the others are drawn faded).
    ``cube``, ``cube_owner`` (``"bottom"``, ``"top"`` or ``None`` for centered) and ``cube_offered`` (the cube,
    at its new value, is being offered to the player ``cube_owner`` names). ``last_move``: (from, to) checker
    steps of the last play, in the numbering of ``last_mover`` (``"bottom"`` or ``"top"``; 25 its bar, 0 off).
    ``selected``: a point (25: the bar) whose top checker is picked up; ``targets``: points it may go to (0:
    off). ``size``: width in pixels (default: scales to its container).
    """
    if bottom not in ("on_roll", "opponent"):
        raise ValueError(f"bottom must be 'on_roll' or 'opponent', got {bottom!r}")
    board = position.board.astype(np.int64) if bottom == "on_roll" else position.switched().board.astype(np.int64)
    roller = "bottom" if bottom == "on_roll" else "top"
    targets = set(int(t) for t in targets)
    parts: list[str] = []
    add = parts.append
    width_attr = f' width="{size}" height="{round(size * HEIGHT / WIDTH)}"' if size else ""
    add(f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}"{width_attr} '
        f'class="bgai-board" font-family="Helvetica, Arial, sans-serif">')
    add(_defs())
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
        if point_numbers:
            ny = BOTTOM + NUMBERS / 2 + 6 if up else NUMBERS / 2 + 5
            add(f'<text class="number" x="{x}" y="{ny}" text-anchor="middle" font-size="16" font-weight="700" '
                f'fill="{THEME["numbers"]}">{point}</text>')
    # Marks under the checkers: the last play's sources.
    moved_from, moved_to = _last_move_points(last_move, last_mover)
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
    # Marks: the last play, the picked-up checker, the targets.
    for point in moved_from:
        add(_ring_at(board, point, THEME["last"], dashed=True, empty_slot=True))
    for point in moved_to:
        add(_ring_at(board, point, THEME["last"]))
    if selected is not None:
        add(_ring_at(board, selected, THEME["highlight"], width=4))
    for point in sorted(targets):
        add(_target_mark(board, point))
    # Pip counts, between the trays; the cube; the dice.
    if pips:
        p_bottom = int(np.where(board > 0, board, 0) @ np.arange(26))
        p_top = int(np.where(board < 0, -board, 0) @ (25 - np.arange(26)))
        cx = TRAY_X + TRAY_W / 2
        for side, value, y in (("top", p_top, MID - 3), ("bottom", p_bottom, MID + 15)):
            add(f'<circle cx="{cx - 24}" cy="{y - 5}" r="5" fill="url(#bg-{side})" stroke="#1a1512" '
                f'stroke-width="0.8"/><text class="pips {side}" x="{cx + 6}" y="{y}" text-anchor="middle" '
                f'font-size="14" font-weight="700" fill="{THEME["numbers"]}">{value}</text>')
        add(f'<text x="{cx}" y="{MID - 22}" text-anchor="middle" font-size="10" fill="{THEME["numbers"]}" '
            f'opacity="0.75">PIPS</text>')
    add(_cube(cube, cube_owner, cube_offered))
    # Click areas, on top of everything: a column per point, the bottom player's bar and tray.
    for point in range(1, 25):
        x, _ = point_xy(point, 0)
        y0 = MID if point <= 12 else TOP
        add(f'<rect class="hit" data-point="{point}" x="{x - PW / 2}" y="{y0}" width="{PW}" height="{INNER_H // 2}" '
            f'fill="transparent"/>')
    add(f'<rect class="hit" data-point="bar" x="{BAR_X}" y="{MID}" width="{BAR_W}" height="{INNER_H // 2}" '
        f'fill="transparent"/>')
    add(f'<rect class="hit" data-point="off" x="{TRAY_X}" y="{MID + 20}" width="{TRAY_W}" '
        f'height="{INNER_H // 2 - 20}" fill="transparent"/>')
    if dice is not None:  # above the click areas: a page may let the dice be clicked
        add(_dice(dice, dice_left, roller))
    add("</svg>")
    return "\n".join(parts)


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
        text = (f'<text x="{x}" y="{y + 6}" text-anchor="middle" font-size="17" font-weight="700" '
                f'fill="{t[side + "_text"]}">{label}</text>')
    return (f'<g class="checker {side}" data-point="{point}" filter="url(#bg-shadow)">'
            f'<circle cx="{x}" cy="{y}" r="{R - 1}" fill="url(#bg-{side})" stroke="{t[side + "_edge"]}" '
            f'stroke-width="2"/><circle cx="{x}" cy="{y}" r="{R - 8}" fill="none" stroke="{t[side + "_edge"]}" '
            f'stroke-width="1" opacity="0.6"/>{text}</g>')


def _last_move_points(steps, mover: str) -> tuple[list, list]:
    """Sources and destinations of the last play in the bottom player's numbering (``"top-bar"`` etc. aside)."""
    sources, dests = [], []
    for src, dst in steps:
        if mover == "top":
            src = "top-bar" if src == OWN_BAR else 25 - src
            dst = "top-off" if dst <= 0 else 25 - dst
        else:
            src = "bar" if src == OWN_BAR else src
            dst = "off" if dst <= 0 else dst
        sources.append(src)
        dests.append(dst)
    return sources, dests


def _stack_top(board: np.ndarray, point) -> tuple[float, float, int]:
    """(x, y) of the top checker of a point or bar (and how many there are); of the first slot when empty."""
    if point in ("bar", OWN_BAR, "top-bar"):
        bottom = point != "top-bar"
        count = abs(int(board[OWN_BAR if bottom else OPP_BAR]))
        return (*_bar_xy(bottom, max(count - 1, 0)), count)
    count = abs(int(board[point]))
    return (*point_xy(point, max(count - 1, 0)), count)


def _ring_at(board, point, colour: str, dashed: bool = False, width: float = 3, empty_slot: bool = False) -> str:
    if point in ("off", 0, "top-off"):
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


def _target_mark(board: np.ndarray, point: int) -> str:
    colour = THEME["target"]
    if point == 0:
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
    if offered:
        y = MID
    else:
        y = MID if owner is None else BOTTOM - size / 2 - 4 if owner == "bottom" else TOP + size / 2 + 4
    shown = 64 if owner is None and value == 1 and not offered else value
    stroke = THEME["highlight"] if offered else "#3b2a1a"
    return (f'<g class="cube" data-owner="{owner or "center"}"><rect x="{x - size / 2}" y="{y - size / 2}" '
            f'width="{size}" height="{size}" rx="7" fill="#fbf7ee" stroke="{stroke}" '
            f'stroke-width="{4 if offered else 2}" filter="url(#bg-shadow)"/>'
            f'<text x="{x}" y="{y + 8}" text-anchor="middle" font-size="{22 if shown < 10 else 19}" '
            f'font-weight="800" fill="#3b2a1a">{shown}</text></g>')


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
