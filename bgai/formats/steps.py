"""A play built one checker at a time, as a person makes it on a board.

The generator knows whole plays only (afterstates). People move one checker, then another, in any order, and may
take a checker back. ``PartialPlay`` is the judge of those steps: a checker step is allowed if and only if some
legal play of the roll starts with the steps made so far followed by it. Each step is one die, by the rule of a
single checker step (``bgai.core.movegen.single_steps``); legality of the whole is the generator's (``afterstates``):
a sequence of steps is a legal play when it uses as many dice as every legal play does and ends in one of the
legal afterstates. So "both dice if possible, else the larger" is never decided here, step by step.

Points are numbered from the mover's side: 25 is its bar, 0 means borne off.

    >>> from bgai import Position
    >>> play = PartialPlay(Position.start(), (6, 1))
    >>> sorted(play.destinations(13))  # 12 is the opponent's mid-point
    [6, 7]
    >>> play.step(13, 7)
    [Step(src=13, dst=7, hit=False, die=6)]
    >>> play.step(8, 7)
    [Step(src=8, dst=7, hit=False, die=1)]
    >>> play.complete
    True
    >>> str(play.move())
    '13/7 8/7'
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bgai.core.errors import IllegalMoveError
from bgai.core.movegen import OWN_BAR, single_steps, switch
from bgai.core.notation import format_steps, parse_paths
from bgai.formats.position import Move, Position, parse_dice, parse_move


@dataclass(frozen=True)
class Step:
    """One checker step of one die: ``src`` to ``dst`` (0: off) in the mover's numbering, and whether it hit."""

    src: int
    dst: int
    hit: bool
    die: int


def _name(point: int) -> str:
    return "bar" if point == OWN_BAR else "off" if point == 0 else str(point)


class PartialPlay:
    """The play of ``position`` (the mover on roll) with ``dice``, made step by step.

    ``step(src, dst)`` moves one checker from ``src`` to ``dst``, with one die or several in a row (the path is
    found; one without a hit on the way is preferred, as a player writing ``13/2`` would mean); ``undo()`` takes
    the last such move back. ``complete`` says the steps made are a whole legal play, ``move()`` gives it.
    """

    def __init__(self, position: Position, dice) -> None:
        self.position = position
        self.dice = tuple(sorted(parse_dice(dice), reverse=True))
        self.legal: list[Move] = position.legal_moves(self.dice)
        self.length = len(self.legal[0].checker_steps())
        self._by_board = {switch(m.after.board).tobytes(): m for m in self.legal}
        d1, d2 = self.dice
        start = (position.board.tobytes(), (d1,) * 4 if d1 == d2 else (d1, d2))
        self._boards: dict[tuple, np.ndarray] = {start: position.board}
        self._edges: dict[tuple, list[tuple[Step, tuple]]] = {}
        self._build(start)
        self._start = start
        self._moves: list[list[tuple[Step, tuple]]] = []  # each user move: its one-die steps with the state after

    # The tree of step sequences ---------------------------------------------------------------------------------

    def _build(self, start: tuple) -> None:
        """Expand every sequence of ``length`` single steps, then keep the edges that lead to a legal afterstate."""
        levels = [[start]]
        for _ in range(self.length):
            jobs = [(key, die) for key in levels[-1] for die in sorted(set(key[1]), reverse=True)]
            nxt: dict[tuple, None] = {}
            if jobs:
                boards = np.stack([self._boards[key] for key, _ in jobs])
                parent, src, dst, hit, child = single_steps(boards, np.array([die for _, die in jobs]))
                for k, s, t, h, board in zip(parent, src, dst, hit, child):
                    key, die = jobs[k]
                    rest = list(key[1])
                    rest.remove(die)
                    child_key = (board.tobytes(), tuple(rest))
                    self._boards.setdefault(child_key, board)
                    self._edges.setdefault(key, []).append((Step(int(s), int(t), bool(h), die), child_key))
                    nxt[child_key] = None
            levels.append(list(nxt))
        good = {key for key in levels[-1] if key[0] in self._by_board}
        for level in reversed(levels[:-1]):
            for key in level:
                kept = [(step, child) for step, child in self._edges.get(key, []) if child in good]
                self._edges[key] = kept
                if kept:
                    good.add(key)

    def snapshot(self) -> PartialPlay:
        """A copy whose steps change apart from this one's (the tree of steps, which never changes, is shared)."""
        twin = copy.copy(self)
        twin._moves = list(self._moves)
        return twin

    @property
    def _state(self) -> tuple:
        return self._moves[-1][-1][1] if self._moves else self._start

    # Queries ----------------------------------------------------------------------------------------------------

    @property
    def board(self) -> np.ndarray:
        """The board with the steps made so far, still from the mover's side (read-only)."""
        board = self._boards[self._state].copy()
        board.flags.writeable = False
        return board

    @property
    def steps(self) -> list[Step]:
        """The one-die steps made so far, in order."""
        return [step for move in self._moves for step, _ in move]

    @property
    def remaining_dice(self) -> tuple[int, ...]:
        """Dice not used yet (dice left when the play is complete could not be played)."""
        return self._state[1]

    @property
    def complete(self) -> bool:
        return len(self.steps) == self.length

    @property
    def no_play(self) -> bool:
        """True when the roll cannot be played at all."""
        return self.length == 0

    def text(self) -> str:
        """The steps made so far in standard notation (``""`` before the first)."""
        return format_steps([(s.src, s.dst, s.hit) for s in self.steps]) if self._moves else ""

    def sources(self) -> list[int]:
        """Points (25: the bar) from which a checker can make the next step, highest first."""
        return sorted({step.src for step, _ in self._edges.get(self._state, [])}, reverse=True)

    def destinations(self, src: int) -> dict[int, list[Step]]:
        """Where the checker on ``src`` can go next, one die or several in a row: destination (0: off) -> steps.

        Of several paths to one destination the one with the fewest hits on the way is kept, then the shortest,
        then the one using the smaller dice (bearing off with a 3 rather than a 6 keeps the 6), then the one
        playing the larger die first.
        """
        found: dict[int, tuple[tuple, list]] = {}
        frontier: list[tuple[tuple, int, list]] = [(self._state, src, [])]
        while frontier:
            state, point, path = frontier.pop(0)
            for step, child in self._edges.get(state, []):
                if step.src != point:
                    continue
                route = path + [(step, child)]
                hits_on_way = sum(s.hit for s, _ in route[:-1])
                rank = (hits_on_way, len(route), sum(s.die for s, _ in route))
                if step.dst not in found or rank < found[step.dst][0]:
                    found[step.dst] = (rank, route)
                if step.dst > 0:
                    frontier.append((child, step.dst, route))
        return {dst: [s for s, _ in route] for dst, (_, route) in sorted(found.items(), reverse=True)}

    def targets(self) -> dict[int, list[int]]:
        """Every source with its destinations (the points a board lights up), highest first."""
        return {src: list(self.destinations(src)) for src in self.sources()}

    # Making and taking back steps ---------------------------------------------------------------------------------

    def step(self, src: int, dst: int) -> list[Step]:
        """Move the checker on ``src`` to ``dst`` (0: off); the one-die steps it took. ``IllegalMoveError`` if no
        legal play continues that way (nothing changes then)."""
        route = self._route(src, dst)
        self._moves.append(route)
        return [step for step, _ in route]

    def _route(self, src: int, dst: int) -> list[tuple[Step, tuple]]:
        if not (isinstance(src, (int, np.integer)) and isinstance(dst, (int, np.integer))
                and 1 <= src <= OWN_BAR and 0 <= dst < OWN_BAR):
            raise IllegalMoveError(f"a checker moves from a point 1..24 or the bar (25) to a point 0..24 "
                                   f"(0: off), got {src!r} to {dst!r}")
        if self.complete:
            what = "the roll cannot be played" if self.no_play else f"the play is complete ({self.text()})"
            raise IllegalMoveError(f"no checker can move: {what}")
        move = f"{_name(src)}/{_name(dst)}"
        board = self._boards[self._state]
        if board[src] <= 0:
            where = "the bar" if src == OWN_BAR else str(src)
            raise IllegalMoveError(f"{move}: there is no checker of yours on {where}")
        if board[OWN_BAR] > 0 and src != OWN_BAR:
            raise IllegalMoveError(f"{move}: a checker on the bar must enter first")
        if dst >= src:
            raise IllegalMoveError(f"{move}: checkers move forward, towards 1 and off")
        paths = self.destinations(src)
        if dst not in paths:
            if not paths:
                can = ", ".join(_name(p) for p in self.sources())
                raise IllegalMoveError(f"{move}: the checker on {_name(src)} cannot move in any legal play of "
                                       f"{self._dice_text()} from here (checkers that can: {can})")
            reach = ", ".join(_name(p) for p in paths)
            raise IllegalMoveError(f"{move} is not part of any legal play of {self._dice_text()} from here "
                                   f"(the checker on {_name(src)} can go to {reach})")
        route, state = [], self._state
        for step in paths[dst]:
            child = next(c for s, c in self._edges[state] if s == step)
            route.append((step, child))
            state = child
        return route

    def _dice_text(self) -> str:
        left = self.remaining_dice
        return f"{self.dice[0]}{self.dice[1]}" + (f" (left: {'-'.join(map(str, left))})" if self._moves else "")

    def play_text(self, text: str, reset: bool = False) -> list[Step]:
        """Make the moves written in standard notation (part of a play or all of it, e.g. ``13/7`` then
        ``8/7``, or ``bar/22* 6/off``), after the steps made so far or, with ``reset``, instead of them. All or
        nothing: on ``IllegalMoveError`` the steps are as they were."""
        paths = parse_paths(text)
        if not paths:
            raise IllegalMoveError("write a play such as 13/7 8/7, bar/22* or 6/off")
        saved = list(self._moves)
        if reset:
            self._moves.clear()
        made = len(self._moves)
        try:
            hits = set()
            for path in paths:
                for _ in range(path.repeat):
                    for src, dst in path.hops():
                        for step in self.step(src, dst):
                            if step.hit:
                                hits.add(step.dst)
                for point, star in zip(path.points, path.stars):
                    if star and point not in hits:
                        raise IllegalMoveError(f"{path.token!r} in {text!r} marks a hit on {point}, but no "
                                               "opposing blot is hit there")
        except IllegalMoveError as error:
            done = self.complete and len(self._moves) > made
            self._moves[:] = saved
            if done:
                raise IllegalMoveError(f"{text!r} is not a legal play of {self.dice[0]}{self.dice[1]} here: it "
                                       "moves more checkers than the roll allows") from None
            if made == 0:  # a whole play, typed at once
                try:
                    whole_play = parse_move(self.position, text, self.dice)
                except IllegalMoveError as whole:
                    if len(paths) > 1:  # say what is wrong with it whole
                        raise whole from None
                    raise error from None
                # Legal as a whole, only in another order than written: with 66, ``11/off 6/off(2)`` bears the
                # checkers on 6 off before the one from 11 may bear off from 5. Make it in an order that works.
                self._moves.clear()
                for src, dst, _ in whole_play.checker_steps():
                    self.step(src, dst)
                return [step for move in self._moves for step, _ in move]
            raise error
        return [step for move in self._moves[made:] for step, _ in move]

    def undo(self) -> list[Step]:
        """Take the last move back (all of its one-die steps); ``IllegalMoveError`` when there is none."""
        if not self._moves:
            raise IllegalMoveError("there is no step to take back in this play")
        return [step for step, _ in self._moves.pop()]

    def reset(self) -> None:
        """Take every step back."""
        self._moves.clear()

    def move(self) -> Move:
        """The legal play the steps make; ``IllegalMoveError`` while it is not complete."""
        if not self.complete:
            need = self.length - len(self.steps)
            raise IllegalMoveError(f"the play is not complete: {need} more checker step{'s' if need > 1 else ''} "
                                   f"to play ({self._dice_text()})")
        return self._by_board[self._boards[self._state].tobytes()]

    def choose(self, move: Move | str) -> None:
        """Replace the steps made by a whole legal play (a ``Move`` of this roll, or its notation)."""
        if isinstance(move, str):
            move = self.position.play(move, self.dice)
        target = switch(move.after.board).tobytes()

        def path_from(state):
            if state[0] == target and len(state[1]) == len(self._start[1]) - self.length:
                return []
            for step, child in self._edges.get(state, []):
                rest = path_from(child)
                if rest is not None:
                    return [(step, child)] + rest
            return None

        route = path_from(self._start)
        if route is None:  # cannot happen for a legal move of this roll
            raise IllegalMoveError(f"{move} is not a play of {self.dice[0]}{self.dice[1]} in this position")
        self._moves = [[edge] for edge in route] if route else []


def replay(position: Position, dice, moves: Sequence[tuple[int, int]]) -> PartialPlay:
    """A ``PartialPlay`` with the checker moves ``(src, dst)`` made in order."""
    play = PartialPlay(position, dice)
    for src, dst in moves:
        play.step(src, dst)
    return play
