"""Checker steps as actions (``action="steps"``): a turn is played one checker at a time, and an action means the
same in every position.

Action ``6 * point + die - 1`` moves one of the agent's checkers from ``point`` (1-24 by its pip distance, 25 its
bar) by ``die`` pips (borne off where that passes its last point): ``STEP_ACTIONS`` (156) actions, as pgx's
backgammon has them. A turn is as many steps as its legal plays have (one to four); after each, the agent observes
the position so far and the dice it has left, and the mask allows only the steps that still lead to a legal play.
Where the roll cannot be played the one legal action is 0, a pass. Once the turn's steps make a legal play, the
opponent replies and the agent rolls, as with whole plays.

Each legal play is reached by one order of its steps, the move generator's (``bgai.core.movegen.afterstates``
with its steps): its plays found playing the larger die first come before those playing the smaller first, and a
double's steps go from the higher points down. The steps of a play that bears off with a larger die than it needs
are labelled with the dice they can use, an exact die first (``step_labels``).

The observation is the whole-play one (``bgai.envs.spaces``) of the position so far, its dice units showing the dice
left (a die used is gone; a double shows its die while steps of it remain), followed by ``STEP_UNITS`` (4) units:
a one-hot of the steps left this turn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bgai.core.movegen import OPP_BAR
from bgai.envs.games import Games, Plays, no_plays
from bgai.envs.spaces import STEP_ACTIONS, STEP_UNITS, observation_size, observe


def step_labels(plays: Plays, dice: np.ndarray) -> np.ndarray:
    """(M, 4) the step actions of every play of ``plays`` (its ``steps``), in order, -1 past the last; a play of no
    step (a roll that cannot be played) is the pass, action 0. ``dice`` (n, 2): each position's roll, the larger
    first. A step's die is the distance it moves, or, bearing off, a die at least that large: the assignment of the
    roll's two dice that matches more distances exactly (the larger die first on a tie); one step alone takes its
    exact die, else the larger."""
    steps = plays.steps
    assert steps is not None
    m = len(steps)
    labels = np.full((m, 4), -1, dtype=np.int16)
    if not m:
        return labels
    source = steps[:, :, 0].astype(np.int16)
    target = steps[:, :, 1].astype(np.int16)
    valid = source >= 0
    distance = source - np.maximum(target, 0)
    off = valid & (target <= 0)
    high = dice[plays.owner, 0].astype(np.int16)[:, None]
    low = dice[plays.owner, 1].astype(np.int16)[:, None]

    def fits(die):  # each step can have used its die: that distance, or more when bearing off
        return (distance == die) | (off & (distance < die))

    die = np.broadcast_to(high, (m, 4)).copy()  # doubles: every step the die
    two = valid[:, 1] & (high[:, 0] != low[:, 0])
    if two.any():
        a = np.concatenate([high, low], axis=1)[two]  # the larger die first
        b = a[:, ::-1]
        d, o = distance[two, :2], off[two, :2]
        fit_a = ((d == a) | (o & (d < a))).all(axis=1)
        fit_b = ((d == b) | (o & (d < b))).all(axis=1)
        exact_a, exact_b = (d == a).sum(axis=1), (d == b).sum(axis=1)
        use_b = fit_b & (~fit_a | (exact_b > exact_a))
        die[np.flatnonzero(two), :2] = np.where(use_b[:, None], b, a)
    one = valid[:, 0] & ~valid[:, 1] & (high[:, 0] != low[:, 0])
    if one.any():
        die[one, 0] = np.where(distance[one, 0] == low[one, 0], low[one, 0], high[one, 0])
    labels[valid] = (6 * source + die - 1)[valid]
    labels[~valid[:, 0], 0] = 0  # no step: the pass
    assert fits(die)[valid].all(), "a step was labelled with a die it cannot have used"
    return labels


class StepGames:
    """``Games`` played a checker step at a time (see the module docstring): the same games, rules, opponent and
    random draws for the same plays; ``boards`` the position so far this turn, ``dice`` the dice left,
    ``masks()`` the legal steps."""

    def __init__(self, n: int, opponent: Any) -> None:
        self.games = Games(n, opponent, steps=True)
        self.n = n
        self.opponent = opponent
        self._every = np.arange(n)
        self._turn()

    # The state ----------------------------------------------------------------------------------------------

    @property
    def over(self) -> np.ndarray:
        return self.games.over

    @property
    def plays(self) -> Plays:
        """The whole legal plays of this turn (the info's plays)."""
        return self.games.plays

    def _turn(self) -> None:
        """Every game at the start of its turn (after ``Games`` started or stepped them)."""
        games = self.games
        self.boards = games.boards.copy()
        self.dice = games.dice.copy()
        self.labels = step_labels(games.plays, games.dice)
        self.alive = np.ones(len(self.labels), dtype=bool)
        self.taken = np.zeros(self.n, dtype=np.int64)  # steps taken this turn
        per_play = np.maximum((self.labels >= 0).sum(axis=1), 1)
        self.length = np.zeros(self.n, dtype=np.int64)  # steps a play of this turn takes (0: the game is over)
        self.length[games.plays.owner] = per_play

    def snapshot(self) -> tuple:
        return (self.games.snapshot(), self.boards.copy(), self.dice.copy(), self.labels, self.alive.copy(),
                self.taken.copy(), self.length.copy())

    def restore(self, state: tuple) -> None:
        inner, boards, dice, self.labels, alive, taken, length = state
        self.games.restore(inner)
        self.boards, self.dice, self.alive, self.taken, self.length = boards, dice, alive, taken, length

    def masks(self) -> np.ndarray:
        """(n, ``STEP_ACTIONS``) bool: the steps each game may take now (none where it is over)."""
        mask = np.zeros((self.n, STEP_ACTIONS), dtype=bool)
        rows = np.flatnonzero(self.alive)
        owner = self.games.plays.owner[rows]
        live = ~self.games.over[owner]
        rows, owner = rows[live], owner[live]
        mask[owner, self.labels[rows, self.taken[owner]]] = True
        return mask

    def steps_left(self) -> np.ndarray:
        return np.where(self.games.over, 0, self.length - self.taken)

    def observation(self, encoder: int, out: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """Every game's step observation (the module docstring), into ``out``'s arrays where given."""
        n = self.n
        width = observation_size(encoder)
        if out is None:
            out = {"observation": np.empty((n, width + STEP_UNITS), dtype=np.float32),
                   "action_mask": np.empty((n, STEP_ACTIONS), dtype=np.int8)}
        plain = observe(self.boards, self.dice, np.zeros(n, dtype=np.int64), encoder)
        out["observation"][:, :width] = plain["observation"]
        out["observation"][:, width:] = self.steps_left()[:, None] == np.arange(1, STEP_UNITS + 1)
        out["action_mask"][:] = self.masks()
        return out

    def final_observation(self, boards: np.ndarray, encoder: int) -> dict[str, np.ndarray]:
        """The observations of finished games' final ``boards``: no dice, no step left, an empty mask."""
        n = len(boards)
        plain = observe(boards, np.zeros((n, 2), dtype=np.int8), np.zeros(n), encoder)["observation"]
        return {"observation": np.concatenate([plain, np.zeros((n, STEP_UNITS), dtype=np.float32)], axis=1),
                "action_mask": np.zeros((n, STEP_ACTIONS), dtype=np.int8)}

    # Playing ------------------------------------------------------------------------------------------------

    def start(self, rows: np.ndarray, rng: np.random.Generator, positions=None) -> None:
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) < self.n and (self.taken > 0).any():
            raise RuntimeError("games start only when none is in the middle of a turn")  # (never: see step)
        self.games.start(rows, rng, positions)
        self._turn()

    def step(self, actions: Any, rng: np.random.Generator, restart: bool = False, skip: np.ndarray | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One step in every game (``skip``: games whose action is ignored, as ``Games.step``'s). A step outside
        the mask resigns the game; a step that completes the turn's play plays it (``Games.step``: the opponent's
        reply, the next roll, a finished game's points). Returns ``Games.step``'s (points, finished, illegal, final)
        for this step."""
        a = np.asarray(actions)
        if a.shape != (self.n,) or a.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.n} integers, got {a.dtype} of shape {a.shape}")
        a = a.astype(np.int64)
        games = self.games
        playing = ~games.over if skip is None else ~games.over & ~skip
        plays = games.plays
        owner = plays.owner
        in_range = (a >= 0) & (a < STEP_ACTIONS)
        column = np.minimum(self.taken[owner], 3)
        match = self.alive & (self.labels[np.arange(len(owner)), column] == np.where(in_range, a, -2)[owner])
        legal = np.zeros(self.n, dtype=bool)
        legal[owner[match]] = True
        legal &= playing
        # the step itself, in the games where it is legal and moves a checker (not the pass)
        moving = np.flatnonzero(legal & (a > 0))
        if len(moving):
            point, die = a[moving] // 6, a[moving] % 6 + 1
            target = np.maximum(point - die, 0)
            boards = self.boards
            boards[moving, point] -= 1
            on = target > 0
            hit = on & (boards[moving, target] == -1)
            boards[moving[hit], target[hit]] = 0
            boards[moving[hit], OPP_BAR] -= 1
            boards[moving[on], target[on]] += 1
            self.dice[moving] = _dice_left(self.dice[moving], die, self.length[moving] - self.taken[moving] - 1)
        self.alive &= match | ~legal[owner]  # (a game that resigns or skips keeps its plays until it moves on)
        self.taken[legal] += 1
        done = legal & (self.taken == self.length)
        resigned = playing & ~legal
        finish = done | resigned
        points = np.zeros(self.n, dtype=np.int64)
        finished = np.zeros(self.n, dtype=bool)
        illegal = np.zeros(self.n, dtype=bool)
        final = self.boards.copy()
        if not finish.any():
            return points, finished, illegal, final
        # the games whose turn ends: their play (the one alive row) or -1 (a resignation), through Games.step
        chosen = np.full(self.n, -1, dtype=np.int64)
        rows = np.flatnonzero(self.alive & done[owner])
        chosen[owner[rows]] = rows - plays.starts[owner[rows]]
        waiting = ~finish  # every other game keeps its place in its turn
        kept = self._keep(waiting)
        points, finished, illegal, final = games.step(chosen, rng, restart=restart, skip=waiting)
        self._turn()
        self._put_back(waiting, kept)
        return points, finished, illegal, final

    def _keep(self, rows: np.ndarray) -> tuple:
        """The turn state of the games ``rows`` (a mask), to put back after ``Games`` re-expands every game."""
        plays = self.games.plays
        alive = [self.alive[plays.starts[g]:plays.starts[g] + plays.counts[g]].copy() for g in np.flatnonzero(rows)]
        return (self.boards[rows].copy(), self.dice[rows].copy(), self.taken[rows].copy(), alive)

    def _put_back(self, rows: np.ndarray, kept: tuple) -> None:
        boards, dice, taken, alive = kept
        self.boards[rows], self.dice[rows], self.taken[rows] = boards, dice, taken
        plays = self.games.plays
        for g, segment in zip(np.flatnonzero(rows), alive):
            self.alive[plays.starts[g]:plays.starts[g] + plays.counts[g]] = segment


def choose_by_steps(act, board: np.ndarray, dice, encoder: int) -> int:
    """The legal play (its index in ``Position.legal_moves``' order) that a step policy makes in ``board`` (the side on
    roll) with ``dice``: ``act(observation) -> action`` (the observation a dict, as the step environment gives it)
    is asked for each step of the turn, as ``StepGames`` would ask it. A step outside the mask raises
    ``IllegalMoveError``."""
    from bgai.core.errors import IllegalMoveError
    from bgai.envs.games import Opponent

    games = StepGames(1, Opponent("none", lambda *a: np.zeros(0, dtype=np.int64)))
    inner = games.games
    inner.boards[0], inner.dice[0] = board, np.sort(np.asarray(dice, dtype=np.int8))[::-1]
    inner.over[0] = False
    inner._expand()
    games._turn()
    while True:
        obs = {key: value[0] for key, value in games.observation(encoder).items()}
        action = int(np.asarray(act(obs)).item())
        if not (0 <= action < STEP_ACTIONS and obs["action_mask"][action]):
            raise IllegalMoveError(f"the policy chose step {action}, outside its mask")
        owner = inner.plays.owner
        match = games.alive & (games.labels[np.arange(len(owner)), np.minimum(games.taken[owner], 3)] == action)
        games.alive &= match
        games.taken[0] += 1
        if games.taken[0] == games.length[0]:
            return int(np.flatnonzero(games.alive)[0])
        if action > 0:  # the position so far, for the next step's observation
            point, die = action // 6, action % 6 + 1
            target = max(point - die, 0)
            b = games.boards[0]
            b[point] -= 1
            if target > 0:
                if b[target] == -1:
                    b[target], b[OPP_BAR] = 0, b[OPP_BAR] - 1
                b[target] += 1
            games.dice[0] = _dice_left(games.dice[:1], np.array([die]), games.length[:1] - games.taken[:1])[0]


def _dice_left(dice: np.ndarray, used: np.ndarray, left: np.ndarray) -> np.ndarray:
    """The dice (k, 2) left after a step of ``used`` with ``left`` steps still to come: a double keeps its die while
    steps remain; otherwise the die used becomes 0 (the other moves first)."""
    out = dice.copy()
    double = dice[:, 0] == dice[:, 1]
    out[double & (left <= 0)] = 0
    single = ~double
    first = single & (dice[:, 0] == used)
    out[first] = np.stack([dice[first, 1], np.zeros(first.sum(), dtype=dice.dtype)], axis=1)
    second = single & ~first
    out[second, 1] = 0
    return out


def no_step_plays(n: int) -> Plays:
    return no_plays(n, steps=True)
