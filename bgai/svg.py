"""A backgammon board as SVG: a pure function of a position (and what to show with it).

The board is drawn from the side of the player on roll, as ``Position.__str__`` draws it: its checkers (light)
move from the top left around to its home board at the bottom right, points numbered 1..24 from its side; the
opponent's checkers are dark. The bar is in the middle (the player on roll's checkers in its lower half), the
borne-off trays on the right (the player on roll's below), the cube on the side of its owner (in the middle when
centered), the dice on the right half, pip counts under and over the board.

    >>> from bgai import Position
    >>> svg = board_svg(Position.start(), dice=(6, 5), arrows=[(24, 18), (18, 13)])
    >>> svg.startswith("<svg") and "167" in svg
    True
"""

from __future__ import annotations

from html import escape

from bgai.position import Position

# Geometry, in viewBox units.
_POINT_W = 40
_BORDER = 12
_CUBE_W = 52  # the column left of the board where the cube sits
_BAR_W = 44
_TRAY_W = 56
_LABEL_H = 22
_BOARD_H = 420
_CHECKER_R = 18
_STACK = 5  # checkers drawn on a point before a count is shown
_QUARTER = 6 * _POINT_W
_LEFT_X = _CUBE_W
_BAR_X = _LEFT_X + _QUARTER
_RIGHT_X = _BAR_X + _BAR_W
_TRAY_X = _RIGHT_X + _QUARTER + _BORDER
_NAME_H = 20
WIDTH = _TRAY_X + _TRAY_W + _BORDER
_FRAME_TOP = _NAME_H + _LABEL_H
TOP = _FRAME_TOP + _BORDER
BOTTOM = TOP + _BOARD_H
_FRAME_BOTTOM = BOTTOM + _BORDER
HEIGHT = _FRAME_BOTTOM + _LABEL_H + _NAME_H

THEME = {
    "frame": "#5b3a21", "felt": "#1f5e45", "point_a": "#d8c39a", "point_b": "#a44a3f", "bar": "#4a2f1b",
    "tray": "#3d2716", "mine": "#f6f1e7", "mine_edge": "#5d5548", "theirs": "#2a2a2e", "theirs_edge": "#0d0d0f",
    "text": "#2b2b2b", "label": "#f0e6d2", "cube": "#fffdf7", "die": "#fffdf7", "pip": "#1d1d1d",
    "arrow": "#e0442f",
}


def _point_x(point: int) -> float:
    """Centre x of point 1..24 (the on-roll player's numbering)."""
    if point <= 12:  # bottom row, 12 at the left ... 1 at the right
        column = 12 - point
    else:  # top row, 13 at the left ... 24 at the right
        column = point - 13
    base = _LEFT_X if column < 6 else _RIGHT_X
    return base + (column % 6) * _POINT_W + _POINT_W / 2


def _slot_y(point: int, slot: int) -> float:
    """Centre y of the ``slot``-th checker (0 = the edge) on a point."""
    slot = min(slot, _STACK - 1)
    step = 2 * _CHECKER_R
    if point <= 12:
        return BOTTOM - _CHECKER_R - 1 - slot * step
    return TOP + _CHECKER_R + 1 + slot * step


def _bar_slot(mine: bool, slot: int) -> tuple[float, float]:
    x = _BAR_X + _BAR_W / 2
    middle = TOP + _BOARD_H / 2
    offset = 2 * _CHECKER_R + 8 + min(slot, 3) * 2 * _CHECKER_R
    return x, (middle + offset if mine else middle - offset)


def _tray_point(mine: bool) -> tuple[float, float]:
    return _TRAY_X + _TRAY_W / 2, (BOTTOM - 60 if mine else TOP + 60)


def _checker(x: float, y: float, mine: bool, label: str = "") -> str:
    fill, edge = (THEME["mine"], THEME["mine_edge"]) if mine else (THEME["theirs"], THEME["theirs_edge"])
    out = (f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{_CHECKER_R - 1}" fill="{fill}" stroke="{edge}" '
           f'stroke-width="2"/>'
           f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{_CHECKER_R - 7}" fill="none" stroke="{edge}" '
           f'stroke-opacity="0.35" stroke-width="1.5"/>')
    if label:
        color = THEME["text"] if mine else THEME["label"]
        out += (f'<text x="{x:.1f}" y="{y + 5:.1f}" text-anchor="middle" font-size="15" font-weight="bold" '
                f'fill="{color}">{label}</text>')
    return out


def _die(x: float, y: float, value: int, size: float = 34) -> str:
    pips = {1: [(1, 1)], 2: [(0, 0), (2, 2)], 3: [(0, 0), (1, 1), (2, 2)], 4: [(0, 0), (0, 2), (2, 0), (2, 2)],
            5: [(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)], 6: [(0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2)]}[value]
    out = [f'<rect x="{x:.1f}" y="{y:.1f}" width="{size}" height="{size}" rx="6" fill="{THEME["die"]}" '
           f'stroke="#333" stroke-width="1.5"/>']
    for column, row in pips:
        cx, cy = x + size * (0.22 + 0.28 * column), y + size * (0.22 + 0.28 * row)
        out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{size * 0.08:.1f}" fill="{THEME["pip"]}"/>')
    return "".join(out)


def board_svg(position: Position, *, dice=None, cube: int = 1, cube_owner: str | None = "centered",
              arrows=(), names: tuple[str, str] | None = None, show_pips: bool = True, width: int | None = 540,
              title: str | None = None) -> str:
    """An SVG drawing of ``position`` from the side of the player on roll (see the module docstring).

    ``dice``: a roll to show (two ints); ``cube``: its value; ``cube_owner``: ``"centered"``, ``"me"`` (the
    player on roll), ``"opponent"`` or ``None`` (no cube drawn, e.g. the Crawford game); ``arrows``: checker steps
    to draw, ``(from, to)`` or ``(from, to, colour)`` in the on-roll player's numbering (25 its bar, 0 off);
    ``names``: (player on roll, opponent) shown with the pip counts; ``width``: the rendered width in pixels
    (``None`` to scale with the container); ``title``: a tooltip.
    """
    board = position.board
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}"'
             + (f' width="{width}" height="{round(width * HEIGHT / WIDTH)}"' if width else "")
             + ' font-family="Helvetica, Arial, sans-serif" role="img">']
    if title:
        parts.append(f"<title>{escape(title)}</title>")
    # Frame, felt, bar, tray.
    parts.append(f'<rect x="0" y="{_FRAME_TOP}" width="{WIDTH}" height="{_FRAME_BOTTOM - _FRAME_TOP}" rx="10" '
                 f'fill="{THEME["frame"]}"/>')
    for x in (_LEFT_X, _RIGHT_X):
        parts.append(f'<rect x="{x}" y="{TOP}" width="{_QUARTER}" height="{_BOARD_H}" fill="{THEME["felt"]}"/>')
    parts.append(f'<rect x="{_BAR_X}" y="{TOP}" width="{_BAR_W}" height="{_BOARD_H}" fill="{THEME["bar"]}"/>')
    parts.append(f'<rect x="{_TRAY_X}" y="{TOP}" width="{_TRAY_W}" height="{_BOARD_H}" fill="{THEME["tray"]}"/>')
    parts.append(f'<line x1="{_TRAY_X}" y1="{TOP + _BOARD_H / 2}" x2="{_TRAY_X + _TRAY_W}" '
                 f'y2="{TOP + _BOARD_H / 2}" stroke="{THEME["frame"]}" stroke-width="4"/>')
    # Points and their numbers.
    depth = _BOARD_H * 0.4
    for point in range(1, 25):
        x = _point_x(point)
        colour = THEME["point_a"] if point % 2 else THEME["point_b"]
        tip, edge = (BOTTOM - depth, BOTTOM) if point <= 12 else (TOP + depth, TOP)
        half = _POINT_W / 2 - 1
        parts.append(f'<polygon points="{x - half:.1f},{edge} {x + half:.1f},{edge} {x:.1f},{tip:.1f}" '
                     f'fill="{colour}"/>')
        label_y = _FRAME_BOTTOM + 15 if point <= 12 else _FRAME_TOP - 5
        parts.append(f'<text x="{x:.1f}" y="{label_y}" text-anchor="middle" font-size="13" '
                     f'fill="{THEME["text"]}">{point}</text>')
    # Checkers on the points.
    for point in range(1, 25):
        count = int(board[point])
        if count == 0:
            continue
        mine, n = count > 0, abs(count)
        for slot in range(min(n, _STACK)):
            label = str(n) if n > _STACK and slot == _STACK - 1 else ""
            parts.append(_checker(_point_x(point), _slot_y(point, slot), mine, label))
    # The bar: the player on roll's checkers below the middle, the opponent's above.
    for mine, count in ((True, int(board[25])), (False, -int(board[0]))):
        for slot in range(min(count, 4)):
            x, y = _bar_slot(mine, slot)
            parts.append(_checker(x, y, mine, str(count) if count > 4 and slot == 3 else ""))
    # Borne-off trays.
    off_mine, off_theirs = position.borne_off()
    for mine, count in ((True, off_mine), (False, off_theirs)):
        if not count:
            continue
        fill, edge = (THEME["mine"], THEME["mine_edge"]) if mine else (THEME["theirs"], THEME["theirs_edge"])
        for k in range(count):
            y = (BOTTOM - 6 - (k + 1) * 12) if mine else (TOP + 6 + k * 12)
            parts.append(f'<rect x="{_TRAY_X + 8}" y="{y}" width="{_TRAY_W - 16}" height="10" rx="3" '
                         f'fill="{fill}" stroke="{edge}" stroke-width="1"/>')
        ty = (BOTTOM - 16 - count * 12) if mine else (TOP + 28 + count * 12)
        parts.append(f'<text x="{_TRAY_X + _TRAY_W / 2}" y="{ty}" text-anchor="middle" font-size="13" '
                     f'fill="{THEME["label"]}">{count}</text>')
    # The cube, left of the board: in the middle when centered, else on its owner's side.
    if cube_owner is not None:
        size = 38
        cy = {"centered": TOP + (_BOARD_H - size) / 2, "me": BOTTOM - size - 6, "opponent": TOP + 6}.get(cube_owner)
        if cy is None:
            raise ValueError(f"cube_owner is 'centered', 'me', 'opponent' or None, got {cube_owner!r}")
        cx = (_CUBE_W - size) / 2 + 2
        label = 64 if cube_owner == "centered" and cube == 1 else cube
        parts.append(f'<rect x="{cx:.1f}" y="{cy:.1f}" width="{size}" height="{size}" rx="6" fill="{THEME["cube"]}" '
                     f'stroke="#222" stroke-width="2"/><text x="{cx + size / 2:.1f}" y="{cy + size / 2 + 7:.1f}" '
                     f'text-anchor="middle" font-size="20" font-weight="bold" fill="#222">{label}</text>')
    # Dice, on the right half (the player on roll's side of the board).
    if dice:
        d1, d2 = dice
        y = TOP + _BOARD_H / 2 - 17
        parts.append(_die(_RIGHT_X + _QUARTER / 2 - 42, y, int(d1)) + _die(_RIGHT_X + _QUARTER / 2 + 8, y, int(d2)))
    # Arrows.
    if arrows:
        parts.append(_arrows(board, arrows))
    # Pip counts and names.
    if show_pips:
        mine, theirs = position.pip_counts()
        me, them = names or ("on roll", "opponent")
        off_mine, off_theirs = position.borne_off()
        for text_y, who, pips, off in ((HEIGHT - 4, me, mine, off_mine), (14, them, theirs, off_theirs)):
            parts.append(f'<text x="{_LEFT_X}" y="{text_y}" font-size="14" fill="{THEME["text"]}">'
                         f'<tspan font-weight="bold">{escape(who)}</tspan>  pips {pips}'
                         + (f", {off} off" if off else "") + "</text>")
    parts.append("</svg>")
    return "".join(parts)


def _arrows(board, arrows) -> str:
    counts = {p: abs(int(board[p])) if board[p] > 0 else 0 for p in range(1, 25)}
    counts[25] = int(board[25])
    out = ['<defs><marker id="bgai-head" viewBox="0 0 10 10" refX="7" refY="5" markerWidth="5" markerHeight="5" '
           'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>']
    for arrow in arrows:
        src, dst = int(arrow[0]), int(arrow[1])
        colour = arrow[2] if len(arrow) > 2 else THEME["arrow"]
        if src == 25:
            x1, y1 = _bar_slot(True, max(counts[25] - 1, 0))
        else:
            x1, y1 = _point_x(src), _slot_y(src, max(counts.get(src, 1) - 1, 0))
        counts[src] = max(counts.get(src, 1) - 1, 0)
        if dst <= 0:
            x2, y2 = _tray_point(True)
        else:
            opposing = board[dst] < 0
            slot = 0 if opposing else counts.get(dst, 0)
            x2, y2 = _point_x(dst), _slot_y(dst, slot)
            counts[dst] = 1 if opposing else counts.get(dst, 0) + 1
        out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}" '
                   f'stroke-width="5" stroke-opacity="0.85" stroke-linecap="round" marker-end="url(#bgai-head)"/>')
    return "".join(out)
