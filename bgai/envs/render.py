"""The board as a picture for the environments' ``render_mode="rgb_array"`` (Gymnasium's video recorder, SB3's
``make_vec_env``): an (``HEIGHT``, ``WIDTH``, 3) uint8 array drawn with numpy alone.

The board is seen from the side it is given from (bgai's boards: the player on roll): its checkers white, moving
anticlockwise to its home at the bottom right, the opponent's black; points 13 to 24 along the top from left to
right, 12 to 1 along the bottom. Each point shows up to ``STACK`` checkers and a red mark under the last where
more stand there. The bar is the middle column (the player's checkers on it at the bottom, the opponent's at the
top), the borne-off checkers are thin slabs in the right-hand column (the player's at the bottom), and the roll's
two dice sit in the middle of the right-hand half.

    >>> from bgai import Position
    >>> image = board_image(Position.start().board, (6, 5))
    >>> image.shape, image.dtype
    ((208, 296, 3), dtype('uint8'))
"""

from __future__ import annotations

from functools import cache

import numpy as np

from bgai.core.movegen import CHECKERS, OPP_BAR, OWN_BAR

COLUMN = 20  # pixels a column: 12 points, the bar, the borne-off checkers
MARGIN = 8
HEIGHT = 208
WIDTH = 14 * COLUMN + 2 * MARGIN
STACK = 5  # checkers drawn on a point
_MIDDLE = HEIGHT // 2
_RADIUS = COLUMN // 2 - 1

_FELT = (60, 110, 70)
_LIGHT = (225, 205, 160)
_DARK = (150, 70, 40)
_FRAME = (95, 60, 30)
_MINE = (245, 245, 240)
_THEIRS = (30, 30, 35)
_MORE = (200, 30, 30)
_DIE = (250, 250, 250)
_PIP = (20, 20, 20)


@cache
def _grid() -> tuple[np.ndarray, np.ndarray]:
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    return y, x


def _column(point: int) -> int:
    """The column (0-13, 6 the bar) of ``point`` (1-24)."""
    if point <= 6:
        return 13 - point
    if point <= 12:
        return 12 - point
    if point <= 18:
        return point - 13
    return point - 12


def _left(column: int) -> int:
    return MARGIN + column * COLUMN


@cache
def _background() -> np.ndarray:
    """The empty board: felt, the frame, the bar, the off column and the 24 points."""
    y, x = _grid()
    image = np.empty((HEIGHT, WIDTH, 3), dtype=np.uint8)
    image[:] = _FELT
    image[(x < MARGIN) | (x >= WIDTH - MARGIN) | (y < 2) | (y >= HEIGHT - 2)] = _FRAME
    for column in (6, 13):
        image[:, _left(column):_left(column) + COLUMN] = _FRAME
    depth = _MIDDLE - 14  # a point's length
    for point in range(1, 25):
        centre = _left(_column(point)) + COLUMN / 2
        reach = depth * (1 - np.abs(x - centre + 0.5) / (COLUMN / 2))  # a triangle's height at each x
        inside = np.abs(x - centre + 0.5) < COLUMN / 2
        if point <= 12:
            triangle = inside & (HEIGHT - 2 - y < reach)
        else:
            triangle = inside & (y - 2 < reach)
        image[triangle] = _LIGHT if point % 2 else _DARK
    return image


def _disc(image: np.ndarray, cx: float, cy: float, colour, radius: float = _RADIUS) -> None:
    y, x = _grid()
    lo, hi = int(cy - radius - 1), int(cy + radius + 2)
    left, right = int(cx - radius - 1), int(cx + radius + 2)
    ys, xs = y[lo:hi, left:right], x[lo:hi, left:right]
    image[lo:hi, left:right][(ys - cy) ** 2 + (xs - cx) ** 2 <= radius ** 2] = colour


def _stack(image: np.ndarray, column: int, count: int, colour, bottom: bool) -> None:
    """``count`` checkers in ``column`` from the bottom edge up (``bottom``) or the top edge down."""
    cx = _left(column) + COLUMN / 2 - 0.5
    for k in range(min(count, STACK)):
        offset = 3 + _RADIUS + k * 2 * _RADIUS
        cy = HEIGHT - 1 - offset if bottom else offset
        _disc(image, cx, cy, colour)
        if k == STACK - 1 and count > STACK:
            _disc(image, cx, cy, _MORE, radius=3)


def _die(image: np.ndarray, left: int, value: int) -> None:
    size = 16
    top = _MIDDLE - size // 2
    image[top:top + size, left:left + size] = _DIE
    spots = {1: [(1, 1)], 2: [(0, 0), (2, 2)], 3: [(0, 0), (1, 1), (2, 2)], 4: [(0, 0), (0, 2), (2, 0), (2, 2)],
             5: [(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)], 6: [(0, 0), (1, 0), (2, 0), (0, 2), (1, 2), (2, 2)]}
    for row, col in spots[value]:
        _disc(image, left + 3.5 + col * 4.5, top + 3.5 + row * 4.5, _PIP, radius=1.6)


def board_image(board: np.ndarray, dice=(0, 0)) -> np.ndarray:
    """The picture of ``board`` (26 integers, from its player's side) with ``dice`` (two 0s: no roll shown); see
    the module docstring."""
    board = np.asarray(board)
    if board.shape != (26,):
        raise ValueError(f"a board has 26 entries, got shape {board.shape}")
    image = _background().copy()
    for point in range(1, 25):
        n = int(board[point])
        if n:
            _stack(image, _column(point), abs(n), _MINE if n > 0 else _THEIRS, bottom=point <= 12)
    _stack(image, 6, int(board[OWN_BAR]), _MINE, bottom=True)
    _stack(image, 6, -int(board[OPP_BAR]), _THEIRS, bottom=False)
    mine_off = CHECKERS - int(board[board > 0].sum())
    theirs_off = CHECKERS + int(board[board < 0].sum())
    for k in range(mine_off):
        image[HEIGHT - 6 - 5 * k:HEIGHT - 3 - 5 * k, _left(13) + 2:_left(13) + COLUMN - 2] = _MINE
    for k in range(theirs_off):
        image[3 + 5 * k:6 + 5 * k, _left(13) + 2:_left(13) + COLUMN - 2] = _THEIRS
    high, low = int(max(dice)), int(min(dice))
    if low > 0:
        _die(image, _left(9) - 10, high)
        _die(image, _left(10) + 2, low)
    return image
