"""Plays in standard notation (``24/18 13/11*``, ``bar/22``, ``6/off``, ``8/5(2)``): the edge between people and
the batched generator, which knows only afterstates.

Points are numbered from the side of the player making the play; ``bar`` is its bar, ``off`` bears a checker off,
``*`` marks a hit. One checker's consecutive steps are written as one path (``24/16``), showing an intermediate
point only where it hit (``24/20*/16``); identical paths are counted (``6/2(2)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from bgai.core.errors import IllegalMoveError
from bgai.core.movegen import OPP_BAR, OWN_BAR

NO_PLAY = "no play"


def _point_name(point: int) -> str:
    return "bar" if point == OWN_BAR else "off" if point <= 0 else str(point)


def journeys(steps: list[tuple[int, int, bool]]) -> list[list[tuple[int, bool]]]:
    """The checkers' journeys of a sequence of checker steps: each ``[(point, hit there), ...]`` from its source.
    A step that ends where another starts is one checker's journey as far as the board can tell, whichever checker
    physically moved first (``13/7 7/1`` is ``13/1``)."""
    paths = [[(src, False), (dst, hit)] for src, dst, hit in steps]
    merged = True
    while merged:
        merged = False
        for i, first in enumerate(paths):
            end = first[-1][0]
            j = next((j for j, p in enumerate(paths) if j != i and end > 0 and p[0][0] == end), None)
            if j is not None:
                paths[i] = first + paths[j][1:]
                del paths[j]
                merged = True
                break
    return paths


def format_steps(steps: list[tuple[int, int, bool]]) -> str:
    """Standard notation of a sequence of checker steps."""
    if not steps:
        return NO_PLAY
    paths = journeys(steps)
    # Identical journeys are written once with a count; the one checker that hit marks the group
    # (``24/22*(2)``, not ``24/22* 24/22``).
    groups: dict[tuple[int, ...], tuple[int, list[bool]]] = {}
    for path in sorted(paths, key=lambda p: (-p[0][0], -p[-1][0])):
        route = tuple(point for point, _ in path)
        count, hits = groups.get(route, (0, [False] * len(path)))
        groups[route] = (count + 1, [a or b for a, (_, b) in zip(hits, path)])
    texts = []
    for route, (count, hits) in groups.items():
        shown = [0] + [i for i in range(1, len(route) - 1) if hits[i]] + [len(route) - 1]
        text = "/".join(_point_name(route[i]) + ("*" if hits[i] else "") for i in shown)
        texts.append(text if count == 1 else f"{text}({count})")
    return " ".join(texts)


MAX_PLAY_TEXT = 200  # characters; the longest play ("bar/24/23/22/21 ...") is under 50
_TOKEN = re.compile(r"^(bar|\d{1,2})((?:/(?:\d{1,2}|off)\*?)+)(?:\((\d)\))?$", re.ASCII)


@dataclass(frozen=True)
class Path:
    """One token of a written play: a checker's journey through ``points`` (25 the bar, 0 off), ``stars`` telling
    which landings are marked as hits, ``repeat`` times over (``8/5(2)``)."""

    token: str
    points: tuple[int, ...]
    stars: tuple[bool, ...]
    repeat: int = 1

    def hops(self) -> list[tuple[int, int]]:
        """The (from, to) hops of one journey, as written."""
        return list(zip(self.points, self.points[1:]))


def check_length(text: str) -> None:
    if len(text) > MAX_PLAY_TEXT:
        raise IllegalMoveError(f"a play is written in at most {MAX_PLAY_TEXT} characters, got {len(text)}")


def parse_paths(text: str) -> list[Path]:
    """The tokens of a play written in standard notation, read but not checked against any position."""
    check_length(text)
    paths = []
    for token in text.strip().lower().split():
        match = _TOKEN.match(token)
        if not match:
            raise IllegalMoveError(f"cannot read {token!r} in {text!r}: write plays like 24/18 13/11* bar/22 6/off "
                                   f"8/5(2)")
        landings = re.findall(r"/(\d{1,2}|off)(\*?)", match[2], re.ASCII)
        points = [match[1]] + [p for p, _ in landings]
        numbers = [OWN_BAR if p == "bar" else 0 if p == "off" else int(p) for p in points]
        repeat = int(match[3] or 1)
        if repeat < 1:
            raise IllegalMoveError(f"{token!r} in {text!r} repeats a move {repeat} times")
        stars = [False] + [bool(star) and point != "off" for point, star in landings]
        paths.append(Path(token, tuple(numbers), tuple(stars), repeat))
    return paths


def apply_step(board: np.ndarray, src: int, dst: int, text: str) -> bool:
    """Move one checker on ``board`` (in place); True if it hit."""
    if not (1 <= src <= OWN_BAR) or not (0 <= dst < src):
        raise IllegalMoveError(f"{_point_name(src)}/{_point_name(dst)} in {text!r} does not move a checker forward")
    if board[src] <= 0:
        raise IllegalMoveError(f"{text!r} moves a checker from {_point_name(src)}, where the player has none")
    board[src] -= 1
    if dst == 0:
        return False
    if board[dst] <= -2:
        raise IllegalMoveError(f"{text!r} lands on point {dst}, which the opponent holds")
    hit = board[dst] == -1
    if hit:
        board[dst] = 0
        board[OPP_BAR] -= 1
    board[dst] += 1
    return bool(hit)
