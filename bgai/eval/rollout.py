"""Rollouts: the value of a position, or of the plays of a roll, as the mean result of many games played out.

A rollout plays ``trials`` games from one position with the bot playing both sides, all of them at once through
the batched turn loop of ``bgai.core.game`` (``run_turns``), and averages their results: the five cumulative
probabilities and the cubeless equity, and with ``cubeful`` the money cubeful equities. Every result is from the
side of the player on roll in the position rolled out, before its roll; for the plays of a roll (``rollout_plays``)
from the side of the player who makes the play, the rollout starting after it with the opponent on roll.

Dice
----
Trial ``t`` is dealt a fixed dice sequence that depends only on (``seed``, ``t``), so trials split into chunks
(ranges of trial numbers, ``run_trials``) that any executor can play and that concatenate to the same rollout, and
the plays of one roll, or the two cube branches of a position, are rolled out on the same dice trial by trial.

* The first two rolls are stratified (quasi-random): trial ``t`` of each cycle of 36 × 36 = 1,296 trials gets the
  ``t``-th cell of a Latin-square design over the pairs (first roll, second roll), with rolls as ordered pairs of
  dice, relabelled by permutations drawn from (seed, cycle). Each block of 36 trials deals every first roll once and
  every second roll once, so any prefix of 36·k trials has each first (and second) roll exactly k times, and 1,296
  trials deal every pair exactly once: a rollout stopped early stays balanced. (With ``opening``, the first roll is
  an opening roll, never a double: 30 × 36 cells, blocks of 30.)
* Later rolls come from the counter-based generator ``bgai.core.game.roll_dice(seed, t, turn)``.

Variance reduction
------------------
Luck adjustment with the bot's own 0-ply evaluation. Before each roll of each trial, the position of the player on
roll is expanded over the 21 rolls: for roll r, ``f(r)`` is the value, for the roller, of the play the bot's 0-ply
evaluation prefers (the five probabilities, and with the cube the 0-ply cubeful equity of the position after it,
the opponent to act on the cube). The luck of the roll that came is ``f(actual) - sum_r w_r f(r)`` (``w_r`` = 1/36
or 2/36). The rollout's estimate of each quantity is the trial's result minus the sum of the luck of every roll
of the trial, each turned to the side the rollout reports. Whatever ``f`` is, each luck term has mean zero given
the position before the roll, so the estimate stays unbiased; where ``f`` is close to the true value the sum of
luck follows the result closely and the variance falls. Results report the mean and standard error both with it
and without it on the same trials (the ``plain_*`` fields). It costs a 0-ply evaluation of all the plays of the 21
rolls at every turn (positions that recur among trials, as in the first turns, are expanded once). With a pruning
net (``Bot.pruner``; the shipped bot has one), the play of each roll is the network's choice among the pruning
net's best few (``Bot.replies``), as in a lookahead: about a fifth of the network passes. At 0-ply the trial then
plays the play the expansion found for the roll that came (``_LuckPlays``), as GNU Backgammon's rollouts do (its
rollout.c: "0-ply play: best move is already recorded"), so the roll's plays are not judged twice; without a
pruning net that is the network's choice among all plays, so nothing changes. With one, about one play in 25 is
the pruned choice where the network alone would have played another; the estimate stays unbiased for the
trials as they are played.

Ending a trial
--------------
A trial ends when a side bears off its last checker (or, with the cube, passes a double), after ``truncate``
turns (plies; its position is then evaluated by the bot at 0-ply: the network, or the bear-off database), or when
it reaches a bear-off position the database answers (``bearoff``): ``"exact"`` stops at positions with at most
six checkers a side, scored exactly by the two-sided database (cubeless probabilities, or its exact money cubeful
equity); ``"race"`` (cubeless only, the default there, as GNU Backgammon does) stops as soon as both sides are
bearing off, scored by the database's one-sided race estimate where a side has more than six checkers (close, not
exact); ``"off"`` plays every bear-off out. With the cube, the cubeless probabilities of a game that ends by a
pass are the 0-ply evaluation of the position where the double was passed.

Cube
----
Money game, cube centered at 1 at the start, no Jacoby rule, no beavers; cube decisions inside the rollout by the
bot at 0-ply (``Bot.cube_actions``). A position is rolled out twice on the same dice: with no double (cube
centered) and after a double that is taken (cube 2, owned by the opponent), both in units of the initial cube, and
its cubeful equity is max(ND, min(DT, DP = +1)). The plays of a roll are rolled out with the opponent free to
double at its first turn.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from bgai.core.cube import CENTERED, OPPONENT, CubeOwner, CubeState
from bgai.core.dice import OPENING_ROLLS, ORDERED_ROLLS, ROLL_INDEX, ROLL_WEIGHTS, ROLLS
from bgai.core.errors import BgaiError
from bgai.core.files import write_atomically
from bgai.core.game import CubeRules, Table, game_over, result_points, roll_dice, run_turns
from bgai.core.movegen import afterstates
from bgai.eval import bearoff
from bgai.eval.weights import equity, flip, one_blas_thread
from bgai.formats.position import Position, parse_dice

PROBABILITY_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
BEAROFF_STOPS = ("race", "exact", "off")
Z95 = 1.959963984540054

# Positions expanded over the 21 rolls at once for the luck of a turn (about 27 plays each: ~1.4M afterstates).
EXPAND_CHUNK = 2048


# Dice -------------------------------------------------------------------------------------------------------------


def first_two_rolls(seed: int, trials, opening: bool = False) -> np.ndarray:
    """(T, 2, 2) the first and second rolls of ``trials`` (trial numbers), stratified (see the module docstring).

    >>> rolls = first_two_rolls(0, np.arange(1296))
    >>> len({(tuple(a), tuple(b)) for a, b in rolls.tolist()})
    1296
    """
    trials = np.asarray(trials, dtype=np.int64)
    firsts = OPENING_ROLLS if opening else ORDERED_ROLLS
    m = len(firsts)
    cycle, cell = np.divmod(trials, m * len(ORDERED_ROLLS))
    q, r = np.divmod(cell, m)
    out = np.empty((len(trials), 2, 2), dtype=np.int8)
    for c in np.unique(cycle):
        rows = cycle == c
        shuffle = np.random.default_rng([seed, int(c)])
        first, second = shuffle.permutation(m), shuffle.permutation(len(ORDERED_ROLLS))
        out[rows, 0] = firsts[first[r[rows]]]
        out[rows, 1] = ORDERED_ROLLS[second[(r[rows] + q[rows]) % len(ORDERED_ROLLS)]]
    return out


def rollout_dice(seed: int, trials, turn: int, opening: bool = False) -> np.ndarray:
    """(T, 2) the roll of each of ``trials`` at ``turn`` (0: the first roll of the rollout)."""
    trials = np.asarray(trials, dtype=np.int64)
    if turn < 2:
        return first_two_rolls(seed, trials, opening)[:, turn]
    return roll_dice(seed, trials, np.full(len(trials), turn))


# Results ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """A rolled-out quantity: its ``mean`` over the trials, the standard error ``se`` of that mean, and the same
    two without variance reduction, on the same trials (``plain_mean``, ``plain_se``; equal to ``mean`` and
    ``se`` when the rollout had none)."""

    mean: float
    se: float
    plain_mean: float
    plain_se: float

    @property
    def ci(self) -> tuple[float, float]:
        """The 95% confidence interval of the mean (normal approximation)."""
        return (self.mean - Z95 * self.se, self.mean + Z95 * self.se)

    @classmethod
    def of(cls, values: np.ndarray, plain: np.ndarray) -> Estimate:
        return cls(*_mean_se(values), *_mean_se(plain))

    def to_dict(self) -> dict:
        return {**{k: _number(v) for k, v in asdict(self).items()}, "ci95": [_number(v) for v in self.ci]}


def _mean_se(values: np.ndarray) -> tuple[float, float]:
    n = len(values)
    se = float(np.std(values, ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
    return float(np.mean(values)), se


def _number(v: float):
    return None if v is None or not math.isfinite(v) else round(float(v), 6)


@dataclass(frozen=True)
class RolloutResult:
    """The rollout of a position (before its roll, for the player on roll) or of a play (for its mover).

    ``probabilities``: the five cumulative probabilities (``PROBABILITY_NAMES``) and ``equity`` the cubeless
    equity, each an ``Estimate``. With the cube (money): ``cubeful`` the cubeful equity per initial cube unit, and
    for a position ``no_double`` and ``double_take`` (DT in initial cube units; a pass is +1) and ``cube_action``.
    ``settings`` says how it was rolled out; ``seconds`` how long it took.
    """

    position_id: str
    play: str | None
    trials: int
    probabilities: tuple[Estimate, ...]
    equity: Estimate
    settings: dict
    seconds: float
    cubeful: Estimate | None = None
    no_double: Estimate | None = None
    double_take: Estimate | None = None
    cube_action: str | None = None

    @property
    def trials_per_s(self) -> float:
        return self.trials / self.seconds if self.seconds > 0 else float("inf")

    def to_dict(self) -> dict:
        out: dict = {
            "position_id": self.position_id,
            "play": self.play,
            "trials": self.trials,
            "equity": self.equity.to_dict(),
            "probabilities": {name: e.to_dict() for name, e in zip(PROBABILITY_NAMES, self.probabilities)},
        }
        for name in ("cubeful", "no_double", "double_take"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value.to_dict()
        if self.cube_action is not None:
            out["cube_action"] = self.cube_action
        out["settings"] = self.settings
        out["seconds"] = round(self.seconds, 3)
        return out

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def __str__(self) -> str:
        return self.describe()

    def describe(self, cube: bool = True) -> str:
        """The rollout in lines: its settings, the chances and the cubeless equity with their standard errors, and
        with ``cube`` the cubeful equities there are."""
        s = self.settings
        what = f"play {self.play} (for its mover)" if self.play else "position (player on roll, before the roll)"
        depth = f"truncated at {s['truncate']} plies" if s["truncate"] else "played to the end"
        vr = "with variance reduction" if s["variance_reduction"] else "without variance reduction"
        lines = [
            f"Rollout of {self.position_id}, {what}: {self.trials} trials, {s['plies']}-ply play, {depth}, {vr}, "
            f"seed {s['seed']}",
            "             " + "  ".join(f"{n:>15}" for n in ("win", "win gammon", "win bg", "lose gammon",
                                                                "lose bg")),
            "  mean       " + "  ".join(f"{100 * e.mean:14.2f}%" for e in self.probabilities),
            "  ± SE       " + "  ".join(f"{100 * e.se:14.2f}%" for e in self.probabilities),
            _line("cubeless equity", self.equity, s["variance_reduction"]),
        ]
        if cube and self.no_double is not None and self.double_take is not None:
            lines.append(_line("no double", self.no_double, s["variance_reduction"]))
            lines.append(_line("double/take", self.double_take, s["variance_reduction"]))
            lines.append("  double/pass      +1.000")
        if cube and self.cubeful is not None:
            action = f"  ({self.cube_action})" if self.cube_action else ""
            lines.append(_line("cubeful equity", self.cubeful, s["variance_reduction"]) + action)
        lines.append(f"  {self.seconds:.1f} s, {self.trials_per_s:.1f} trials/s")
        return "\n".join(lines)


def _line(label: str, e: Estimate, vr: bool) -> str:
    lo, hi = e.ci
    text = f"  {label:<16} {e.mean:+.3f} ± {e.se:.3f}  (95% CI {lo:+.3f} .. {hi:+.3f})"
    if vr:
        text += f"; without variance reduction {e.plain_mean:+.3f} ± {e.plain_se:.3f}"
    return text


# Settings ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RolloutSettings:
    """How to roll out (see the module docstring): the one parameter every rollout function takes (``rollout``,
    ``rollout_plays``, ``rollout_batch``, ``rollout_chunks``, ``rollout_values``, ``rollout_file``,
    ``Bot.cube_decision(..., rollout=...)``), each field also a keyword of theirs that changes it:

        rollout(bot, pos, RolloutSettings(trials=72, truncate=7))  # as rollout(bot, pos, trials=72, truncate=7)

    ``plies``: the bot's lookahead when it chooses plays (cube decisions, luck and truncation evaluations are always
    0-ply; ``None``: the bot's own); ``truncate``: stop each trial after that many plies (``None``: play to the end);
    ``bearoff``: ``"race"``, ``"exact"`` or ``"off"`` (``None``: ``"race"`` cubeless, ``"exact"`` with the cube);
    ``opening``: the first roll is an opening roll (no doubles)."""

    trials: int = 1296
    truncate: int | None = None
    plies: int | None = None
    seed: int = 0
    cubeful: bool = False
    variance_reduction: bool = True
    bearoff: str | None = None
    opening: bool = False
    batch: int = 2592

    def __post_init__(self) -> None:
        def whole(name, low, allow_none=False):
            value = getattr(self, name)
            if value is None and allow_none:
                return
            if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= low):
                raise BgaiError(f"{name} must be an integer >= {low}, got {value!r}")

        whole("trials", 1)
        whole("truncate", 1, allow_none=True)
        whole("plies", 0, allow_none=True)
        whole("seed", 0)
        whole("batch", 1)
        if self.bearoff is not None and self.bearoff not in BEAROFF_STOPS:
            raise BgaiError(f"bearoff must be one of {', '.join(BEAROFF_STOPS)}, got {self.bearoff!r}")
        if self.cubeful and self.bearoff == "race":
            raise BgaiError("a cubeful rollout can stop only at exact bear-offs (bearoff 'exact' or 'off'): the "
                            "one-sided race estimate has no cubeful equity")

    def for_bot(self, bot) -> RolloutSettings:
        """These settings with ``plies`` said: the bot's own lookahead where it is ``None``."""
        return self if self.plies is not None else replace(self, plies=bot.plies)

    @property
    def bearoff_stop(self) -> str:
        if self.bearoff is not None:
            return self.bearoff
        return "exact" if self.cubeful else "race"

    def describe(self, bot) -> dict:
        d = asdict(self)
        d.pop("batch")
        d["bearoff"] = self.bearoff_stop if bot.use_bearoff else "off (the bot does not use the database)"
        d["bot"] = bot.name
        d["dice"] = "first two rolls stratified over 36x36 (quasi-random), then counter-based"
        return d


# Playing the trials -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Start:
    """Where the games of a rollout start: ``boards`` (S×26, on-roll view, before the roll); the cube of each
    (``stake``, and ``holder``: 0 the player on roll, 1 its opponent, -1 centered); ``first_offer``: the first
    turn at which a player may double (0: the player on roll may double at once)."""

    boards: np.ndarray
    stake: np.ndarray
    holder: np.ndarray
    first_offer: int = 1


@dataclass
class TrialValues:
    """Per-trial results of S starts rolled out on the same trials, all from the side of the player on roll at
    the start (seat 0): ``plain`` (S, T, 5) the probabilities each trial ended with, ``luck`` (S, T, 5) the sum of
    its luck; with the cube ``cube_plain`` and ``cube_luck`` (S, T) likewise for its points per initial cube."""

    trials: np.ndarray
    plain: np.ndarray
    luck: np.ndarray
    cube_plain: np.ndarray | None = None
    cube_luck: np.ndarray | None = None

    @staticmethod
    def concatenate(parts: list[TrialValues]) -> TrialValues:
        def cat(name, axis):
            values = [getattr(p, name) for p in parts]
            return None if values[0] is None else np.concatenate(values, axis=axis)

        return TrialValues(cat("trials", 0), cat("plain", 1), cat("luck", 1), cat("cube_plain", 1),
                           cat("cube_luck", 1))


class _RolloutPlayer:
    """Checker play by ``checkers`` (the bot at the rollout's plies), cube decisions by ``cube`` (at 0-ply)."""

    def __init__(self, checkers, cube) -> None:
        self.checkers, self.cube = checkers, cube
        self.name = checkers.name

    def choose(self, boards, after, owner, rng, dice=None):
        return self.checkers.choose(boards, after, owner, rng, dice=dice)

    def cube_actions(self, boards, state):
        return self.cube.cube_actions(boards, state)


class _LuckPlays:
    """0-ply checker play that takes each roll's play from the variance reduction (``_Luck``), which has just found
    the play the bot makes with every roll of every board on roll (``Bot.replies``: the network's choice among the
    pruning net's best, as in a lookahead): the roll's plays are not judged a second time. A board the luck did
    not see is left to ``player``."""

    def __init__(self, player, luck: _Luck) -> None:
        self.player, self.luck = player, luck
        self.name = player.name

    def choose(self, boards, after, owner, rng, dice=None):
        keys, plays = self.luck.keys, self.luck.plays
        if keys is None or plays is None or dice is None:  # the same play as the luck's expansion would choose
            return self.luck.bot0.replies(after, np.asarray(owner, dtype=np.int64), len(boards))[0]
        void = np.ascontiguousarray(boards).view(np.dtype((np.void, boards.shape[1]))).ravel()
        at = np.minimum(np.searchsorted(keys, void), len(keys) - 1)
        seen = keys[at] == void
        wanted = plays[at, ROLL_INDEX[dice[:, 0], dice[:, 1]]]  # (n, 26)
        hit = np.flatnonzero(seen[owner] & (after == wanted[owner]).all(axis=1))
        pick = np.full(len(boards), -1, dtype=np.int64)
        first = hit[np.r_[True, owner[hit][1:] != owner[hit][:-1]]] if len(hit) else hit
        pick[owner[first]] = first
        left = np.flatnonzero(pick < 0)
        if len(left):
            rows = np.flatnonzero(np.isin(owner, left))
            local = np.searchsorted(left, owner[rows])
            pick[left] = rows[self.player.choose(boards[left], after[rows], local, rng, dice=dice[left])]
        return pick

    def cube_actions(self, boards, state):
        return self.player.cube_actions(boards, state)


def _zero_ply(bot):
    """The bot of a rollout's cube decisions, luck and truncated trials: 0-ply, its cube at 0-ply with the GNU
    Backgammon manual's cube efficiency (a fitted one, ``Bot.cube_efficiency``, did not decide the rollout's cube
    better: docs/cube.md)."""
    if bot.plies == bot.cube_plies == 0 and bot.cube_efficiency is None:
        return bot
    return bot.replace(plies=0, cube_plies=0, cube_efficiency=None)


def _at_plies(bot, plies: int):
    return bot if bot.plies == plies else bot.replace(name=f"{bot.name}@{plies}ply", plies=plies)


def _seat_view(probs: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """Probabilities seen by the player on roll in each game turned to seat 0's side."""
    return np.where((seat == 0)[:, None], probs, flip(probs))


def _flip_difference(d: np.ndarray) -> np.ndarray:
    """A difference of probabilities seen by one side, seen by the other (``flip(a) - flip(b)``)."""
    return np.stack([-d[:, 0], d[:, 3], d[:, 4], d[:, 1], d[:, 2]], axis=1)


def _cube_states(table: Table, games: np.ndarray, seat: np.ndarray) -> CubeState:
    """Money cube states of ``games`` from the side of ``seat`` (per game)."""
    holder = table.holder[games]
    owner = CubeOwner.of_seats(holder, seat)
    return CubeState(table.stake[games].copy(), owner)


class _Luck:
    """The ``observe`` hook of ``run_turns`` that sums each game's luck (see the module docstring), seat 0's side,
    and counts finished games for the progress bar."""

    def __init__(self, bot0, table: Table, cubeful: bool, reduce: bool, bar) -> None:
        n = len(table.boards)
        self.bot0, self.table, self.reduce, self.bar = bot0, table, reduce, bar
        self.probs = np.zeros((n, 5))
        self.cube: np.ndarray | None = np.zeros(n) if cubeful else None
        self.shown = 0
        # This turn's distinct boards (sorted, as bytes) and the play found for each of them and each roll.
        self.keys: np.ndarray | None = None
        self.plays: np.ndarray | None = None

    def __call__(self, turn, rows, boards, dice, seat) -> None:
        ended = len(self.table.boards) - len(rows)
        self.bar.update(ended - self.shown)
        self.shown = ended
        if not self.bar.disable:  # games end late: the turn says the bar is alive before the first one does
            self.bar.set_postfix_str(f"turn {turn + 1}", refresh=False)
            self.bar.refresh()
        self.keys = self.plays = None
        if not self.reduce:
            return
        unique, inverse = np.unique(boards.view(np.dtype((np.void, boards.shape[1]))).ravel(), return_inverse=True)
        keys = unique
        unique = unique.view(np.int8).reshape(len(unique), boards.shape[1])
        inverse = inverse.ravel()
        actual = ROLL_INDEX[dice[:, 0], dice[:, 1]]
        plays = np.empty((len(unique), len(ROLLS), boards.shape[1]), dtype=np.int8)
        for lo in range(0, len(unique), EXPAND_CHUNK):
            rows_here = np.flatnonzero((inverse >= lo) & (inverse < lo + EXPAND_CHUNK))
            if not len(rows_here):
                continue
            values, after, after_probs = self._best_plays(unique[lo:lo + EXPAND_CHUNK])
            plays[lo:lo + len(after)] = after
            local = inverse[rows_here] - lo
            mean = np.einsum("urk,r->uk", values, ROLL_WEIGHTS)
            luck = values[local, actual[rows_here]] - mean[local]
            movers = seat[rows_here]
            luck = np.where((movers == 0)[:, None], luck, _flip_difference(luck))
            self.probs[rows[rows_here]] += luck
            if self.cube is not None:
                self._cube_luck(rows[rows_here], movers, local, actual[rows_here], after, after_probs)
        self.keys, self.plays = keys, plays  # the plays the network chose: the trials play them (_LuckPlays)

    def _best_plays(self, boards: np.ndarray):
        """For U boards and each of the 21 rolls, the 0-ply choice: its probabilities for the roller (U, 21, 5),
        its afterstate (U, 21, 26, opponent's view) and the probabilities of that afterstate (opponent's view)."""
        n = len(boards)
        moves = afterstates(np.repeat(boards, len(ROLLS), axis=0), np.tile(ROLLS, (n, 1)), validate=False)
        pick, chosen = self.bot0.replies(moves.after, moves.owner, n * len(ROLLS))
        chosen = chosen.astype(np.float64)
        shape = (n, len(ROLLS))
        return (flip(chosen).reshape(shape + (5,)), moves.after[pick].reshape(shape + (-1,)),
                chosen.reshape(shape + (5,)))

    def _cube_luck(self, games, movers, local, actual, after, after_probs) -> None:
        """Cubeful luck of ``games``: their best plays' 0-ply cubeful values for the roller, in initial cubes."""
        k = len(games)
        rolls = len(ROLLS)
        boards = after[local].reshape(k * rolls, -1)
        probs = after_probs[local].reshape(k * rolls, 5)
        theirs = _cube_states(self.table, np.repeat(games, rolls), np.repeat(1 - movers, rolls))
        stake = theirs.value.astype(np.float64)
        value = np.empty(k * rolls)
        over = game_over(boards)
        if over.any():  # the roller bore off its last checker
            value[over] = result_points(boards[over]) * stake[over]
        live = ~over
        if live.any():
            eq = self.bot0.cube_equities(boards[live], theirs.select(live), probs=probs[live])
            value[live] = -eq.equity * stake[live]
        by_roll = value.reshape(k, rolls)
        luck = by_roll[np.arange(k), actual] - by_roll @ ROLL_WEIGHTS
        assert self.cube is not None  # (observed only in cubeful rollouts)
        self.cube[games] += np.where(movers == 0, luck, -luck)


def _stop_rule(bot0, stop: str):
    if not bot0.use_bearoff or stop == "off":
        return None
    if stop == "race":
        return bearoff.is_bearoff
    db = bearoff.database()
    return db.exact


def run_trials(bot, start: Start, trials, settings: RolloutSettings, progress: bool = False,
               bar=None) -> TrialValues:
    """Roll out every start of ``start`` on the trials numbered ``trials`` (any range: chunks of one rollout run
    apart concatenate, ``TrialValues.concatenate``, to the same result), seat 0's side. Torch runs on one thread
    meanwhile (``torch_threads``). ``bar``: a progress bar (``tqdm``) to move by each game as it ends, shared by
    the threads of a rollout, instead of one of its own (``progress``)."""
    trials = np.asarray(trials, dtype=np.int64)
    settings = settings.for_bot(bot)
    assert settings.plies is not None  # (said by for_bot)
    bot0 = _zero_ply(bot)
    checkers = _at_plies(bot, settings.plies)
    player = _RolloutPlayer(checkers, bot0) if settings.cubeful else checkers
    players = (player, player)
    n_starts, n_trials = len(start.boards), len(trials)
    total = n_starts * n_trials
    plain = np.zeros((total, 5))
    luck = np.zeros((total, 5))
    cube_plain = np.zeros(total) if settings.cubeful else None
    cube_luck = np.zeros(total) if settings.cubeful else None
    stop = _stop_rule(bot0, settings.bearoff_stop)
    rng = np.random.default_rng(settings.seed)
    own = tqdm(total=total, disable=not progress or bar is not None, unit="trial", desc="rollout")
    bar = own if bar is None else bar
    with torch_threads(1), own:
        for lo in range(0, total, settings.batch):
            games = np.arange(lo, min(lo + settings.batch, total))
            which, trial = np.divmod(games, n_trials)
            trial_ids = trials[trial]
            table = Table.start(start.boards[which], np.zeros(len(games), dtype=np.int64), start.stake[which],
                                start.holder[which])
            over = game_over(table.boards)
            if over.any():  # a play that bore off the last checker: the mover (seat 1) has won
                table.points[over] = -result_points(table.boards[over]) * table.stake[over]
                table.finished[over] = True
                table.live = np.flatnonzero(~over)

            def dice(rows, turn, trial_ids=trial_ids):
                return rollout_dice(settings.seed, trial_ids[rows], turn, settings.opening)

            observer = _Luck(bot0, table, settings.cubeful, settings.variance_reduction, bar)
            if settings.variance_reduction and settings.plies == 0:
                players = (_LuckPlays(player, observer),) * 2
            run_turns(players, table, dice, rng, rules=CubeRules() if settings.cubeful else None,
                      first_offer=start.first_offer, plies=settings.truncate, stop=stop, observe=observer)
            p, c = _final_values(bot0, table, start.first_offer)
            plain[games], luck[games] = p, observer.probs
            if cube_plain is not None and cube_luck is not None:
                cube_plain[games], cube_luck[games] = c, observer.cube
            bar.update(len(games) - observer.shown)
    shape = (n_starts, n_trials)
    return TrialValues(trials, plain.reshape(shape + (5,)), luck.reshape(shape + (5,)),
                       None if cube_plain is None else cube_plain.reshape(shape),
                       None if cube_luck is None else cube_luck.reshape(shape))


def _final_values(bot0, table: Table, first_offer: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Each game's result for seat 0: (N, 5) cubeless probabilities (0 or 1 for a game played out; the 0-ply
    evaluation where it was cut short or passed) and (N,) points per initial cube (0-ply cubeful equity times the
    stake where it was cut short; its no-double equity where the game stopped before its first turn and that turn
    could not double, ``first_offer`` above 0: a start that is an exact bear-off is the no-double branch's own
    value, not the cube action it may not take)."""
    n = len(table.boards)
    probs = np.zeros((n, 5))
    points = table.points.astype(np.float64)
    played = table.finished & ~table.passed
    won = points > 0
    counted = np.abs(table.points) // table.stake
    outcome = np.stack([won, won & (counted >= 2), won & (counted == 3), ~won & (counted >= 2),
                        ~won & (counted == 3)], axis=1).astype(np.float64)
    probs[played] = outcome[played]
    judged = np.flatnonzero(~played)
    if len(judged):
        seat = table.seat[judged]
        boards = table.boards[judged]
        here = bot0.probabilities(boards).astype(np.float64)
        probs[judged] = _seat_view(here, seat)
        cut = np.flatnonzero(~table.finished[judged])
        if len(cut):
            games = judged[cut]
            state = _cube_states(table, games, seat[cut])
            cubeful = bot0.cube_equities(boards[cut], state, probs=here[cut])
            unmoved = (table.turns[games] == 0) & (first_offer > 0)
            eq = np.where(unmoved, cubeful.no_double, cubeful.equity) * table.stake[games]
            points[games] = np.where(seat[cut] == 0, eq, -eq)
    return probs, points


# The API ----------------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def torch_threads(n: int):
    """Run with torch on ``n`` intra-op threads, then restore the setting. Rollouts run torch on one thread: the
    network passes are small and many, and on the 2-core machine, shared with other jobs, torch's second thread
    made them 2-4 times slower (its threads wait by spinning); the move generator and the encoder still use two
    threads (``bgai.core.movegen.threads``). Nothing to do where torch is not loaded: a bot loaded for play
    (``bgai.eval.bot.load_bot``) evaluates in numpy."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


#: Seconds it takes to start the worker processes of a rollout and send them the bot (docs/rollouts.md, "Threads
#: instead of processes", has the measurement); a rollout on processes whose trials take less than about that here
#: stays in this process.
POOL_START_S = 1.7
#: Trials played in this process first, to time them, before a rollout on processes decides where the rest go.
PROBE_TRIALS = 36
#: Up to this many jobs a rollout runs on threads of this process, beyond it on worker processes. Its trials
#: spend nine tenths of their time in the compiled kernels, which run without the interpreter lock, and threads
#: start at once and share the bot (docs/rollouts.md, "Threads instead of processes", has the times). On more
#: cores the tenth in Python, one thread at a time, would hold threads back.
THREAD_JOBS = 4


def _run(bot, start: Start, settings: RolloutSettings, progress: bool, jobs: int) -> tuple[TrialValues, float]:
    """Play the rollout's trials: in this process with ``jobs`` 1; on ``jobs`` threads of this process up to
    ``THREAD_JOBS``; beyond it, the first ``PROBE_TRIALS`` here, timed, and the rest on ``jobs`` worker processes
    only if that is faster than here with their start-up (``POOL_START_S``) counted: a short rollout (a race, a
    truncated one) does not wait for workers it does not need. A trial's values depend only on its number, so
    where it is played changes nothing."""
    started = time.perf_counter()
    trials = np.arange(settings.trials)
    if jobs <= 1 or len(trials) <= PROBE_TRIALS:
        values = run_trials(bot, start, trials, settings, progress)
        return values, time.perf_counter() - started
    if jobs <= THREAD_JOBS:
        return _run_in_threads(bot, start, trials, settings, progress, jobs), time.perf_counter() - started
    probe = run_trials(bot, start, trials[:PROBE_TRIALS], settings)
    rest = trials[PROBE_TRIALS:]
    here = (time.perf_counter() - started) * len(rest) / PROBE_TRIALS  # (an upper bound: larger batches are cheaper)
    if here <= POOL_START_S + here / jobs:
        values = run_trials(bot, start, rest, settings, progress)
    else:
        values = _run_in_processes(bot, start, rest, settings, progress, jobs)
    return TrialValues.concatenate([probe, values]), time.perf_counter() - started


def _chunks(trials: np.ndarray, jobs: int) -> list[np.ndarray]:
    """``jobs`` chunks of trials or fewer, each a multiple of 36 (so that each stays balanced) but the last."""
    size = max(36, -(-len(trials) // jobs // 36) * 36)
    return [trials[i:i + size] for i in range(0, len(trials), size)]


def _run_in_threads(bot, start, trials, settings, progress, jobs) -> TrialValues:
    """Chunks of trials played by ``jobs`` threads of this process, each expanding and encoding its own boards
    (``bgai.core.movegen.one_thread``), the bot shared (nothing in it changes while it plays)."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from bgai.core.movegen import one_thread

    bearoff.database()  # loaded (or built) once, before the threads need it

    chunks = _chunks(trials, jobs)
    results: list = [None] * len(chunks)
    # One bar for every thread, moved as each game ends (tqdm's updates take a lock), not once a chunk.
    with tqdm(total=len(start.boards) * len(trials), disable=not progress, unit="trial", desc="rollout") as bar:
        def play(chunk):
            with one_thread():
                return run_trials(bot, start, chunk, settings, bar=bar if progress else None)

        with ThreadPoolExecutor(len(chunks), thread_name_prefix="bgai-rollout") as pool:
            futures = {pool.submit(play, chunk): i for i, chunk in enumerate(chunks)}
            for future in as_completed(futures):
                results[futures[future]] = future.result()
    return TrialValues.concatenate(results)


def _run_in_processes(bot, start, trials, settings, progress, jobs) -> TrialValues:
    """Chunks of trials (multiples of 36, to keep each balanced) played by ``jobs`` workers of the shared worker
    pool (``bgai.core.workers``), the bot sent once as a snapshot of its weights."""
    from bgai.core.workers import open_pool

    chunks = _chunks(trials, jobs)
    shared = TrialsJob(_portable(bot), settings, start)
    results: list = [None] * len(chunks)
    with open_pool(min(jobs, len(chunks))) as pool, \
            tqdm(total=len(trials), disable=not progress, unit="trial", desc="rollout") as bar:
        for i, values in pool.imap(_trials_task, chunks, shared):
            results[i] = values
            bar.update(len(values.trials))
    return TrialValues.concatenate(results)


def _portable(bot):
    """The bot as worker processes get it: the same bot, its network as a ``ModelSnapshot`` (numpy; a torch
    model would need torch there)."""
    from bgai.eval.weights import ModelSnapshot

    return bot if isinstance(bot.model, ModelSnapshot) else bot.replace(model=ModelSnapshot.of(bot.model))


@dataclass(frozen=True)
class TrialsJob:
    """What the workers of one rollout share: the ``bot`` (its network as a ``ModelSnapshot``), the ``settings``,
    and for the trials of one position its ``start``; each worker's task is its trials (``_trials_task``) or its
    positions (``_chunk_task``)."""

    bot: Any
    settings: RolloutSettings
    start: Start | None = None


def _trials_task(shared: TrialsJob, chunk: np.ndarray) -> TrialValues:
    """One worker's chunk of a rollout's trials (see ``_run_in_processes``)."""
    assert shared.start is not None  # a job of trials has its start
    with one_blas_thread():  # one worker a core
        return run_trials(shared.bot, shared.start, chunk, shared.settings)


def _estimates(values: TrialValues, index: int, reduce: bool, mover: bool):
    """Estimates for start ``index``: (five probabilities, cubeless equity, cubeful equity or None), turned to the
    mover's side when ``mover`` (a play: seat 1 moved before the rollout began)."""
    plain = values.plain[index]
    reduced = plain - values.luck[index] if reduce else plain
    if mover:
        plain, reduced = flip(plain), flip(reduced)
    probs = tuple(Estimate.of(reduced[:, k], plain[:, k]) for k in range(5))
    eq = Estimate.of(equity(reduced), equity(plain))
    cubeful = None
    if values.cube_plain is not None and values.cube_luck is not None:
        cplain = values.cube_plain[index]
        creduced = cplain - values.cube_luck[index] if reduce else cplain
        sign = -1.0 if mover else 1.0
        cubeful = Estimate.of(sign * creduced, sign * cplain)
    return probs, eq, cubeful


#: The keyword ``bearoff_stop`` of the rollout functions is ``RolloutSettings.bearoff``.
_KEYWORDS = {"bearoff_stop": "bearoff"}


def _resolve(bot, settings: RolloutSettings | None, base: RolloutSettings, changes: dict) -> RolloutSettings:
    """The settings a rollout runs with: ``settings`` (else ``base``, the function's own defaults) with the
    keywords ``changes`` applied, and the bot's own lookahead where ``plies`` is ``None``."""
    if settings is not None and not isinstance(settings, RolloutSettings):
        raise BgaiError(f"settings must be a bgai.eval.rollout.RolloutSettings, got {type(settings).__name__}")
    changes = {_KEYWORDS.get(key, key): value for key, value in changes.items()}
    unknown = sorted(set(changes) - {f.name for f in fields(RolloutSettings)})
    if unknown:
        raise TypeError(f"unexpected rollout setting(s): {', '.join(unknown)} (RolloutSettings has "
                        f"{', '.join(f.name for f in fields(RolloutSettings))})")
    return replace(settings or base, **changes).for_bot(bot)


def _position(position) -> Position:
    if isinstance(position, Position):
        return position
    if isinstance(position, str):
        return Position.parse(position)
    return Position(position)


def _check_jobs(jobs) -> int:
    """Worker processes for a rollout; 0 means one per core this process may use."""
    from bgai.core.workers import default_workers

    if not (isinstance(jobs, int) and not isinstance(jobs, bool) and jobs >= 0):
        raise BgaiError(f"jobs must be an integer >= 0 (0: one per core), got {jobs!r}")
    return jobs or default_workers()


def rollout(bot, position, settings: RolloutSettings | None = None, *, progress: bool = False, jobs: int = 1,
            cube_owner: CubeOwner | int | str = CENTERED, **changes) -> RolloutResult:
    """Roll out ``position`` (a ``Position``, Position ID or XGID; the player on roll before its roll) with ``bot``
    playing both sides. ``plies`` defaults to the bot's own. With ``cubeful``, ``cube_owner`` says who holds the
    cube at the start (``bgai.core.cube``'s ``CENTERED``, ``ON_ROLL`` or ``OPPONENT``; the cube's value is the unit):
    where the opponent holds it the player on roll cannot double, and only the no-double branch is rolled out.
    ``settings`` (``RolloutSettings``, its defaults: 1,296 trials played out at the bot's own lookahead), each of
    its fields also a keyword here (``trials=72``, ``truncate=7``, ``cubeful=True``, ...; ``bearoff_stop`` is
    ``bearoff``). See the module docstring for the rest."""
    settings = _resolve(bot, settings, RolloutSettings(), changes)
    cubeful, variance_reduction = settings.cubeful, settings.variance_reduction
    jobs = _check_jobs(jobs)
    cube_owner = CubeOwner.parse(cube_owner)
    pos = _position(position)
    if pos.is_game_over():
        raise BgaiError("the game is over in this position: there is nothing to roll out")
    board = pos.board[None]
    # Start.holder: the seat that owns the cube (the player on roll is seat 0), -1 centered
    seat = cube_owner.seat(on_roll=0)
    holder = -1 if seat is None else seat
    if cubeful and cube_owner != OPPONENT:
        # no double (the cube as it is) and double/take (twice the cube, on the opponent's side), the same dice
        start = Start(np.repeat(board, 2, axis=0), np.array([1, 2]), np.array([holder, 1]), first_offer=1)
    else:
        start = Start(board, np.array([1]), np.array([holder if cubeful else -1]), first_offer=1)
    values, seconds = _run(bot, start, settings, progress, jobs)
    probs, eq, nd = _estimates(values, 0, variance_reduction, mover=False)
    result = RolloutResult(pos.position_id(), None, settings.trials, probs, eq, settings.describe(bot), seconds)
    if not cubeful:
        return result
    if cube_owner == OPPONENT:
        return replace(result, cubeful=nd, no_double=nd, cube_action="no double (the opponent holds the cube)")
    _, _, dt = _estimates(values, 1, variance_reduction, mover=False)
    best, action = _cube_choice(nd, dt)
    return RolloutResult(pos.position_id(), None, settings.trials, probs, eq, settings.describe(bot), seconds,
                         cubeful=best, no_double=nd, double_take=dt, cube_action=action)


#: Positions a task of ``rollout_chunks`` rolls out together: small enough that a chunk written to a file as it
#: finishes loses little when a run stops, and large enough that a position costs no more than in one big batch
#: (docs/figures.md, "Tuning constants").
ROLLOUT_CHUNK = 12


@dataclass(frozen=True)
class BatchRollout:
    """The rollouts of N positions at once (``rollout_batch``), each from the side of its player on roll before
    the roll: ``probabilities`` (N, 5) the five cumulative probabilities, ``se`` (N, 5) their standard errors and
    ``equity_se`` (N,) the standard error of the cubeless equity (the equity itself is
    ``bgai.eval.weights.equity(probabilities)``), all over the trials (with variance reduction, of the reduced
    estimate). A finished game has its result and standard errors of 0."""

    probabilities: np.ndarray
    se: np.ndarray
    equity_se: np.ndarray


#: The defaults of the rollouts of many positions (``rollout_batch``, ``rollout_chunks``, ``rollout_values``): the
#: labels' and targets' 72 trials truncated after 7 plies, checker play at 0-ply.
BATCH_ROLLOUT = RolloutSettings(trials=72, truncate=7, plies=0)


def rollout_batch(bot, boards: np.ndarray, settings: RolloutSettings | None = None, *, jobs: int = 1,
                  chunk: int = ROLLOUT_CHUNK, progress: bool = False, **changes) -> BatchRollout:
    """Roll out N positions (on-roll view, before the roll) by ``bot`` (its checker play at ``plies``), cubeless,
    all on the same ``trials`` (truncated after ``truncate`` plies, the network's value there; ``None``: played
    out), with variance reduction: what ``rollout`` gives each position alone (the same dice, the same
    estimate), for many positions at once, in lock-step batches of ``batch`` games. Returns the means and
    standard errors (``BatchRollout``). ``settings`` (``RolloutSettings``; ``BATCH_ROLLOUT``'s by default), its
    fields also keywords here, as for ``rollout``; cubeless only. With ``jobs`` above 1 (0: one a core) threads of this
    process (up to ``THREAD_JOBS``; worker processes beyond) share the positions, ``chunk`` at a time
    (``rollout_chunks``); a position's result does not depend on where it was played. Training labels
    (``bgai.train.labels``), rollout targets (``bgai.train.lookahead``) and ``bgai rollout --positions`` are made
    here."""
    boards = np.asarray(boards, dtype=np.int8)
    out = BatchRollout(np.empty((len(boards), 5)), np.zeros((len(boards), 5)), np.zeros(len(boards)))
    for rows, part in rollout_chunks(bot, boards, _resolve(bot, settings, BATCH_ROLLOUT, changes), jobs=jobs,
                                     chunk=chunk, progress=progress):
        out.probabilities[rows], out.se[rows], out.equity_se[rows] = part.probabilities, part.se, part.equity_se
    return out


def rollout_chunks(bot, boards: np.ndarray, settings: RolloutSettings | None = None, *, jobs: int = 1,
                   chunk: int = ROLLOUT_CHUNK, progress: bool = False, **changes):
    """``rollout_batch`` a chunk at a time: yields ``(rows, BatchRollout)`` (``rows`` the chunk's indices into
    ``boards``) as each chunk finishes, for a caller that writes results as they come (``bgai rollout
    --positions --out``): in this process (``jobs`` 1), on ``jobs`` threads of it up to ``THREAD_JOBS`` (the
    kernels run without the interpreter lock, and threads need no start-up: docs/rollouts.md has the figures),
    on worker processes beyond (0: one a core); in the order they finish. Positions of finished games get their
    result (standard errors 0)."""
    boards = np.asarray(boards, dtype=np.int8)
    if boards.ndim != 2 or boards.shape[1] != 26:
        raise BgaiError(f"boards must be (N, 26), got shape {boards.shape}")
    if not (isinstance(chunk, int) and not isinstance(chunk, bool) and chunk >= 1):
        raise BgaiError(f"chunk must be an integer >= 1, got {chunk!r}")
    settings = _resolve(bot, settings, BATCH_ROLLOUT, changes)
    if settings.cubeful or settings.opening:
        raise BgaiError("the rollouts of many positions are cubeless and start from the positions as they are: "
                        "roll out one position (rollout) for a cubeful one or an opening roll")
    jobs = _check_jobs(jobs)
    parts = [np.arange(lo, min(lo + chunk, len(boards))) for lo in range(0, len(boards), chunk)]
    with tqdm(total=len(boards), disable=not progress, unit="pos", desc="rollouts") as bar:
        if jobs <= 1 or len(parts) <= 1:
            for rows in parts:
                yield rows, _rollout_chunk(bot, boards[rows], settings)
                bar.update(len(rows))
            return
        bearoff.database()  # built here once if it is not on disk yet, rather than by every worker at once
        if jobs <= THREAD_JOBS:
            yield from _chunks_in_threads(bot, boards, parts, settings, jobs, bar)
            return
        from bgai.core.workers import open_pool

        with open_pool(min(jobs, len(parts))) as pool:
            job = TrialsJob(_portable(bot), settings)
            for i, part in pool.imap(_chunk_task, [boards[rows] for rows in parts], job):
                yield parts[i], part
                bar.update(len(parts[i]))


def _chunks_in_threads(bot, boards, parts, settings, jobs, bar):
    """``rollout_chunks`` on ``jobs`` threads of this process (see ``THREAD_JOBS``), the bot shared, each thread
    expanding and encoding its own boards; chunks yielded as they finish, at most ``2 * jobs`` queued."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    from bgai.core.movegen import one_thread

    def play(rows):
        with one_thread():
            return rows, _rollout_chunk(bot, boards[rows], settings)

    waiting = list(reversed(parts))
    with one_blas_thread(), ThreadPoolExecutor(jobs, thread_name_prefix="bgai-rollout") as pool:
        running = {pool.submit(play, waiting.pop()) for _ in range(min(2 * jobs, len(waiting)))}
        while running:
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                rows, part = future.result()
                if waiting:
                    running.add(pool.submit(play, waiting.pop()))
                yield rows, part
                bar.update(len(rows))


def _chunk_task(shared: TrialsJob, boards: np.ndarray) -> BatchRollout:
    """One worker's chunk of ``rollout_chunks``: its positions."""
    with one_blas_thread():  # one worker a core
        return _rollout_chunk(shared.bot, boards, shared.settings)


def _rollout_chunk(bot, boards: np.ndarray, settings: RolloutSettings) -> BatchRollout:
    trials = settings.trials
    probs = np.empty((len(boards), 5))
    se = np.zeros((len(boards), 5))
    equity_se = np.zeros(len(boards))
    over = game_over(boards)
    if over.any():
        probs[over] = bot.probabilities(boards[over])
    live = np.flatnonzero(~over)
    if len(live):
        n = len(live)
        start = Start(boards[live], np.ones(n, dtype=np.int64), np.full(n, -1))
        values = run_trials(bot, start, np.arange(trials), settings)
        reduced = values.plain - values.luck if settings.variance_reduction else values.plain  # (n, trials, 5)
        probs[live] = reduced.mean(axis=1)
        if trials > 1:
            se[live] = reduced.std(axis=1, ddof=1) / math.sqrt(trials)
            per_trial = equity(reduced.reshape(-1, 5)).reshape(n, trials)
            equity_se[live] = per_trial.std(axis=1, ddof=1) / math.sqrt(trials)
        else:
            se[live] = equity_se[live] = np.nan
    return BatchRollout(probs, se, equity_se)


def rollout_values(bot, boards: np.ndarray, settings: RolloutSettings | None = None, **changes) -> np.ndarray:
    """(N, 5) cubeless probabilities of N positions (on-roll view, before the roll): ``rollout_batch``'s means
    (the rollout targets of ``bgai.train.lookahead``), in this process. Finished games count as they stand."""
    return rollout_batch(bot, boards, settings, **changes).probabilities


# Files of positions -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PositionLine:
    """A position read from a file (``read_positions``): its line number (from 1), its text and the position."""

    line: int
    text: str
    position: Position


def read_positions(path: str | Path) -> list[PositionLine]:
    """The positions of a text file, one GNU Backgammon Position ID or XGID a line (blank lines and lines starting
    with ``#`` skipped). The whole file is checked first: a line that is not a position, or a finished game, is
    refused with its line number, before any work starts."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise BgaiError(f"cannot read {path}: {e}") from None
    entries = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            pos = Position.parse(line)
        except (BgaiError, ValueError) as e:
            raise BgaiError(f"{path}, line {number}: {e}") from None
        if pos.is_game_over():
            raise BgaiError(f"{path}, line {number}: the game is over in this position: there is nothing to roll "
                            f"out")
        entries.append(PositionLine(number, line, pos))
    if not entries:
        raise BgaiError(f"{path} holds no position (one Position ID or XGID a line)")
    return entries


ROLLOUT_FILE_FORMAT = "bgai-rollouts/1"


def _record(entry: PositionLine, part: BatchRollout, i: int, trials: int) -> dict:
    probs, se = part.probabilities[i], part.se[i]
    return {"line": entry.line, "position_id": entry.position.position_id(), "trials": trials,
            "equity": {"mean": _number(float(equity(probs[None])[0])), "se": _number(float(part.equity_se[i]))},
            "probabilities": {name: {"mean": _number(float(probs[k])), "se": _number(float(se[k]))}
                              for k, name in enumerate(PROBABILITY_NAMES)}}


def _resume(out: Path, header: dict) -> dict[int, dict]:
    """The records already in ``out`` (by line number), once its header says it is this run's."""
    records: dict[int, dict] = {}
    lines = out.read_text(encoding="utf-8").splitlines()
    if not lines:
        return records
    try:
        found = json.loads(lines[0])
    except ValueError:
        found = None
    if found != header:
        raise BgaiError(f"{out} holds other rollouts (other positions or settings) or is not a rollout file: give "
                        f"another --out, or delete it to start again")
    for k, text in enumerate(lines[1:], 2):
        try:
            record = json.loads(text)
            records[int(record["line"])] = record
        except (ValueError, KeyError, TypeError):
            if k == len(lines):  # the line being written when the run stopped
                break
            raise BgaiError(f"{out}, line {k}: not a rollout record; delete the file to start again") from None
    return records


#: The defaults of ``rollout_file`` (``bgai rollout --positions``): 1,296 trials played out, checker play at 0-ply.
FILE_ROLLOUT = RolloutSettings(plies=0)


def rollout_file(bot, entries: list[PositionLine], settings: RolloutSettings | None = None, *,
                 out: str | Path | None = None, jobs: int = 0, chunk: int = ROLLOUT_CHUNK, progress: bool = False,
                 **changes) -> list[dict]:
    """Roll out the positions of a file (``read_positions``), cubeless, each on the same dice as ``rollout`` gives
    it alone with these settings; returns one record per position, in the file's order: its ``line``,
    ``position_id``, ``trials``, and ``equity`` and each of the five ``probabilities`` as ``mean`` and ``se`` (the
    standard error), for the player on roll before the roll. ``settings`` (``FILE_ROLLOUT``'s by default), its
    fields also keywords here, as for ``rollout``.

    With ``out`` every chunk's records are appended to that file (JSON lines after a header line naming the
    positions and settings) as the chunk finishes, and the finished file is rewritten in order; run again with
    the same arguments, it rolls out only what the file lacks, so a stopped run loses at most the chunks in
    progress."""
    settings = _resolve(bot, settings, FILE_ROLLOUT, changes)
    digest = hashlib.sha256("\n".join(e.position.position_id() for e in entries).encode()).hexdigest()[:16]
    header = {"format": ROLLOUT_FILE_FORMAT, "positions": len(entries), "digest": digest,
              "settings": settings.describe(bot)}
    header = json.loads(json.dumps(header))
    done: dict[int, dict] = {}
    handle = None
    if out is not None:
        out = Path(out)
        if out.exists():
            done = _resume(out, header)
        else:
            write_atomically(out, lambda f: f.write((json.dumps(header) + "\n").encode()))
        handle = open(out, "a", encoding="utf-8")
    try:
        todo = [e for e in entries if e.line not in done]
        boards = np.stack([e.position.board for e in todo]) if todo else np.zeros((0, 26), dtype=np.int8)
        for rows, part in rollout_chunks(bot, boards, settings, jobs=jobs, chunk=chunk, progress=progress):
            records = [_record(todo[r], part, i, settings.trials) for i, r in enumerate(rows)]
            for record in records:
                done[record["line"]] = record
            if handle is not None:
                handle.write("".join(json.dumps(r) + "\n" for r in records))
                handle.flush()
                os.fsync(handle.fileno())
    finally:
        if handle is not None:
            handle.close()
    results = [done[e.line] for e in entries]
    if out is not None:  # whole: in the file's order
        text = json.dumps(header) + "\n" + "".join(json.dumps(r) + "\n" for r in results)
        write_atomically(out, lambda f: f.write(text.encode()))
    return results


def _cube_choice(nd: Estimate, dt: Estimate) -> tuple[Estimate, str]:
    """The cubeful equity with the best cube action, max(ND, min(DT, DP = 1)), and the action's name."""
    if dt.mean >= 1.0:
        double, answer = Estimate(1.0, 0.0, 1.0, 0.0), "pass"
    else:
        double, answer = dt, "take"
    if nd.mean >= double.mean:
        return nd, ("too good to double, pass" if answer == "pass" and nd.mean > 1.0 else f"no double, {answer}")
    return double, f"double, {answer}"


def rollout_plays(bot, position, dice, settings: RolloutSettings | None = None, *, top: int = 4,
                  progress: bool = False, jobs: int = 1, **changes) -> list[RolloutResult]:
    """Roll out the ``top`` plays of ``dice`` in ``position`` that ``bot`` ranks best, all on the same dice trial by
    trial, each from its mover's side; returned best first (by cubeful equity with ``cubeful``, else cubeless).
    ``settings`` and its keywords as for ``rollout`` (no opening roll: the dice are given)."""
    settings = _resolve(bot, settings, RolloutSettings(), changes)
    if settings.opening:
        raise BgaiError("the plays of a roll are rolled out from the positions after them: opening does not apply")
    cubeful, variance_reduction = settings.cubeful, settings.variance_reduction
    jobs = _check_jobs(jobs)
    if not (isinstance(top, int) and not isinstance(top, bool) and top >= 1):
        raise BgaiError(f"top must be an integer >= 1, got {top!r}")
    pos = _position(position)
    if pos.is_game_over():
        raise BgaiError("the game is over in this position: there is no play to roll out")
    roll = parse_dice(dice)
    ranked = [move for move, _ in bot.rank_moves(pos, roll)[:top]]
    boards = np.stack([move.after.board for move in ranked])
    n = len(boards)
    start = Start(boards, np.ones(n, dtype=np.int64), np.full(n, -1), first_offer=0)
    values, seconds = _run(bot, start, settings, progress, jobs)
    results = []
    for i, move in enumerate(ranked):
        probs, eq, cubeful_eq = _estimates(values, i, variance_reduction, mover=True)
        described = {**settings.describe(bot), "plays": n,  # rolled out together: ``seconds`` is for all of them
                     "dice": f"{roll[0]}{roll[1]}, then the rollout's dice, the same for every play"}
        results.append(RolloutResult(pos.position_id(), str(move), settings.trials, probs, eq, described, seconds,
                                     cubeful=cubeful_eq))
    key = (lambda r: r.cubeful.mean) if cubeful else (lambda r: r.equity.mean)
    return sorted(results, key=key, reverse=True)
