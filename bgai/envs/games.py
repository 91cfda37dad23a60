"""The games behind the environments: many cubeless money games at once, on bgai's batched move generator.

``Games`` holds ``n`` games of an agent (seat 0) against an ``Opponent`` (seat 1) and stops each of them where the
agent is to play: its position (seen from its side, on roll), its roll and its legal plays. ``Games.step`` plays one
action in every game, then the opponent's reply where the game goes on, then rolls the agent's next dice; the single
environment is ``Games`` of one game, the vector environment of many. The rules are bgai's own: the legal plays are
``bgai.core.movegen.afterstates``'s (grouped by game, in its order: action ``i`` of a game is its ``i``-th row), a game
is over when the side that just moved has no checker left (``bgai.core.game.game_over``), and its points are
``bgai.core.game.result_points``'s: 1, 2 for a gammon, 3 for a backgammon.

A game starts as the standard rules say: each side rolls one die, ties are rolled again, and the higher die moves
first, playing both dice. Where the opponent won the opening roll, it has played it by the time the agent sees the
game.

Randomness: every die and every random choice of the opponent comes from the generator passed in, in a fixed
order (the agent's play, the opponent's dice and choice, the agent's next dice, then new games), so a seeded
generator replays the same games for the same actions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from bgai.core.dice import OPENING_ROLLS, ORDERED_ROLLS
from bgai.core.errors import GameStateError, InvalidPositionError
from bgai.core.game import game_over, result_points
from bgai.core.movegen import afterstates, group_starts, switch, validate_boards
from bgai.formats.position import START_BOARD, Position


class Plays(NamedTuple):
    """The legal plays of a batch of positions: ``after`` (M, 26) each seen from the opponent of the mover,
    ``owner`` (M,) the position it belongs to, ``starts`` and ``counts`` (n,) each position's first row and number of
    rows (0 for a position with nothing to play: a finished game), and with ``steps`` the checker steps of each play
    (``bgai.core.movegen.Afterstates``)."""

    after: np.ndarray
    owner: np.ndarray
    starts: np.ndarray
    counts: np.ndarray
    steps: np.ndarray | None = None


def legal_plays(boards: np.ndarray, dice: np.ndarray, steps: bool = False) -> Plays:
    """The legal plays of ``boards`` (n, 26, the side on roll) with ``dice`` (n, 2), every position with a roll."""
    moves = afterstates(boards, dice, return_steps=steps, validate=False)
    starts, counts = group_starts(moves.owner, len(boards))
    return Plays(moves.after, moves.owner, starts, counts, moves.steps)


def no_plays(n: int, steps: bool = False) -> Plays:
    """The plays of ``n`` finished games: none."""
    empty = np.zeros(0, dtype=np.int64)
    zeros = np.zeros(n, dtype=np.int64)
    return Plays(np.zeros((0, 26), dtype=np.int8), empty, zeros, zeros.copy(),
                 np.zeros((0, 4, 3), dtype=np.int8) if steps else None)


#: The 36 outcomes of two dice (``bgai.core.dice.ORDERED_ROLLS``), each with the larger die first.
_OUTCOMES = np.ascontiguousarray(np.sort(ORDERED_ROLLS, axis=1)[:, ::-1])


def roll(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` rolls of two dice (n, 2) int8, the larger die first: one of the 36 outcomes, each as likely."""
    return _OUTCOMES.take(rng.integers(36, size=n), axis=0)  # (take: a third of the time of [ ] here)


def opening_rolls(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` opening rolls (n, 2): seat 0's die, then seat 1's, never equal (drawn from the 30 unequal pairs, as
    rolling ties again does)."""
    return OPENING_ROLLS[rng.integers(len(OPENING_ROLLS), size=n)].copy()


def check_start(position: Any) -> np.ndarray:
    """The board of a position to start a game from, checked: a ``Position``, a Position ID or XGID, or 26
    integers (``Position.board``'s layout), seen from the side on roll; a position the rules allow, with both sides
    still in the game."""
    if isinstance(position, Position):
        array = position.board
    elif isinstance(position, str):
        array = Position.parse(position).board
    else:
        array = np.asarray(position)
    if array.shape != (26,):
        raise InvalidPositionError(f"a board has 26 entries, got shape {array.shape}")
    array = validate_boards(array[None])[0]
    if not (array > 0).any() or not (array < 0).any():
        raise InvalidPositionError("the game of this position is over: a side has no checker left")
    return array


@dataclass(frozen=True)
class Opponent:
    """The seat the environment plays: ``choose(boards, dice, plays, rng)`` returns, for each of the positions
    ``boards`` (k, 26, the opponent on roll) and rolls ``dice``, the row of ``plays.after`` it plays. ``steps``: it
    reads ``plays.steps`` (the plays in notation). ``threadsafe``: it may be called from several threads at once
    (bgai's built-in players; never a caller's own player or policy)."""

    name: str
    choose: Callable[[np.ndarray, np.ndarray, Plays, np.random.Generator], np.ndarray]
    steps: bool = False
    threadsafe: bool = False


class Games:
    """``n`` games of an agent (seat 0) against ``opponent``, each stopped where the agent is to play.

    ``boards`` (n, 26): the agent's position, seen from its side, on roll (in a finished game, the final position
    from its side); ``dice`` (n, 2): its roll, the larger die first (0s in a finished game); ``over`` (n,): the
    games that are finished; ``plays``: the agent's legal plays (``Plays``; with ``steps``, their checker steps).
    """

    def __init__(self, n: int, opponent: Opponent, steps: bool = False) -> None:
        self.n = n
        self.opponent = opponent
        self.steps = steps
        self.boards = np.zeros((n, 26), dtype=np.int8)
        self.dice = np.zeros((n, 2), dtype=np.int8)
        self.over = np.ones(n, dtype=bool)
        self.plays = no_plays(n, steps)
        self._every = np.arange(n)

    def observation(self, encoder: int, out: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """Every game's observation (``bgai.envs.spaces.observe``), into ``out``'s arrays where given."""
        from bgai.envs.spaces import observe

        return observe(self.boards, self.dice, self.plays.counts, encoder, out=out)

    def final_observation(self, boards: np.ndarray, encoder: int) -> dict[str, np.ndarray]:
        """The observations of finished games' final ``boards``: no dice, an empty mask."""
        from bgai.envs.spaces import observe

        return observe(boards, np.zeros((len(boards), 2), dtype=np.int8), np.zeros(len(boards)), encoder)

    def masks(self) -> np.ndarray:
        """(n, ``MAX_PLAYS``) bool: each game's legal actions now."""
        from bgai.envs.spaces import MAX_PLAYS

        return np.arange(MAX_PLAYS) < self.plays.counts[:, None]

    def snapshot(self) -> tuple:
        """The games' state, for ``restore``: a step that fails in another block of games is undone here too."""
        return self.boards.copy(), self.dice.copy(), self.over.copy(), self.plays

    def restore(self, state: tuple) -> None:
        boards, dice, over, self.plays = state
        self.boards[:], self.dice[:], self.over[:] = boards, dice, over

    def start(self, rows: np.ndarray, rng: np.random.Generator, positions: Sequence[Any] | None = None) -> None:
        """New games in ``rows``: from the opening position, or from ``positions`` (one per row, the agent on roll,
        each as ``check_start`` takes it) with a fresh roll."""
        self._start(np.asarray(rows, dtype=np.int64), rng, positions)
        self._expand()

    def step(self, actions: Any, rng: np.random.Generator, restart: bool = False, skip: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play ``actions`` (n,), one in each game: action ``i`` is the game's ``i``-th legal play; one outside
        them (``action_mask`` 0) resigns the game, a single loss. Then the opponent replies where the game goes on,
        and the agent rolls. With ``restart``, finished games start again at once. ``skip`` (n,) bool: games whose
        action is ignored this step (games just started, where the step that follows an ended game starts the next).

        Returns (points, finished, illegal, final): the agent's points in each game that ended (+1..3 won, -1..-3
        lost, 0 elsewhere), which games ended, which by an action outside the mask, and the final position of each
        that ended (the agent's side; the others' rows are their positions before this step)."""
        a = np.asarray(actions)
        if a.shape != (self.n,) or a.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.n} integers, got {a.dtype} of shape {a.shape}")
        if self.over.any():
            raise GameStateError(f"game {int(np.argmax(self.over))} is over or was never started: start it before "
                                 f"playing")
        a = a.astype(np.int64)
        plays = self.plays
        legal = (a >= 0) & (a < plays.counts)
        if skip is not None:
            legal |= skip
        finished = ~legal
        points = np.where(legal, 0, -1)
        final = self.boards.copy()
        # (Each branch below is skipped when no game takes it: one game's step is then a few dozen numpy calls.)
        if skip is not None:
            rows = np.flatnonzero(legal & ~skip)
        else:
            rows = self._every if legal.all() else np.flatnonzero(legal)
        after = plays.after[plays.starts[rows] + a[rows]]  # the opponent's side
        won = game_over(after)
        if won.any():
            ended = rows[won]
            points[ended] = result_points(after[won])
            finished[ended] = True
            final[ended] = switch(after[won])
            rows, after = rows[~won], after[~won]

        replies = self._opponent_plays(after, roll(rng, len(rows)), rng)  # the agent's side
        self.boards[rows] = replies
        lost = game_over(replies)
        if lost.any():
            ended = rows[lost]
            points[ended] = -result_points(replies[lost]).astype(np.int64)
            finished[ended] = True
            final[ended] = replies[lost]
            rows = rows[~lost]
        self.dice[rows] = roll(rng, len(rows))

        if finished.any():
            ended = np.flatnonzero(finished)
            self.boards[ended] = final[ended]
            self.dice[ended] = 0
            self.over[ended] = True
            if restart:
                self._start(ended, rng, None)
        self._expand()
        return points, finished, ~legal, final

    # -----------------------------------------------------------------------------------------------------------

    def _start(self, rows: np.ndarray, rng: np.random.Generator, positions: Sequence[Any] | None) -> None:
        if positions is not None:
            self.boards[rows] = np.stack([check_start(p) for p in positions])
            self.dice[rows] = roll(rng, len(rows))
            self.over[rows] = False
            return
        opening = opening_rolls(rng, len(rows))
        self.boards[rows] = START_BOARD
        self.dice[rows] = np.sort(opening, axis=1)[:, ::-1]
        self.over[rows] = False
        theirs = opening[:, 1] > opening[:, 0]
        if theirs.any():  # the opponent won the opening roll and plays it; an opening play never ends the game
            starts = np.repeat(START_BOARD[None], int(theirs.sum()), axis=0)
            self.boards[rows[theirs]] = self._opponent_plays(starts, self.dice[rows[theirs]], rng)
            self.dice[rows[theirs]] = roll(rng, int(theirs.sum()))

    def _opponent_plays(self, boards: np.ndarray, dice: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The opponent's plays in ``boards`` (its side, on roll) with ``dice``: the afterstates, the agent's side."""
        if not len(boards):
            return np.zeros((0, 26), dtype=np.int8)
        plays = legal_plays(boards, dice, steps=self.opponent.steps)
        return plays.after[self.opponent.choose(boards, dice, plays, rng)]

    def _expand(self) -> None:
        live = np.flatnonzero(~self.over)
        if len(live) == self.n:
            self.plays = legal_plays(self.boards, self.dice, self.steps)
            return
        if not len(live):
            self.plays = no_plays(self.n, self.steps)
            return
        some = legal_plays(self.boards[live], self.dice[live], self.steps)
        starts = np.zeros(self.n, dtype=np.int64)
        counts = np.zeros(self.n, dtype=np.int64)
        starts[live], counts[live] = some.starts, some.counts
        self.plays = Plays(some.after, live[some.owner], starts, counts, some.steps)
