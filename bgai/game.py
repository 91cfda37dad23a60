"""Cubeless games, many at once.

The rules of a game (standard rules of backgammon): each player rolls one die for the opening roll, ties are
rolled again, and the player with the higher die moves first, playing both dice. Players then alternate. The first
to bear off all fifteen checkers wins one point (single game), two if the loser has borne off none (gammon), three
if the loser has borne off none and still has a checker on the bar or in the winner's home board (backgammon).

Dice are counter-based: the roll of game ``g`` at turn ``t`` depends only on (seed, g, t), so the same dice can
be dealt to a game played again with the seats swapped (duplicate games), whatever else is in the batch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from bgai.movegen import CHECKERS, OWN_BAR, afterstates
from bgai.players.base import Player
from bgai.position import START_BOARD

_NON_DOUBLES = np.array([(a, b) for a in range(1, 7) for b in range(1, 7) if a != b], dtype=np.int8)
_ALL_ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)], dtype=np.int8)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def roll_dice(seed: int, games: np.ndarray, turn: np.ndarray) -> np.ndarray:
    """The dice (N×2) of ``games`` at ``turn``; turn 0 is the opening roll (first die seat 0's, never a double)."""
    with np.errstate(over="ignore"):
        key = _splitmix64(np.uint64(seed % 2**64) ^ _splitmix64(games.astype(np.uint64) * np.uint64(0x100000001B3)))
        h = _splitmix64(key ^ turn.astype(np.uint64))
    # 2**64 is not a multiple of 30 or 36; the bias is below 1e-17.
    return np.where(turn[:, None] == 0, _NON_DOUBLES[h % np.uint64(30)], _ALL_ROLLS[h % np.uint64(36)])


def game_over(boards: np.ndarray) -> np.ndarray:
    """Positions (on-roll view) whose opponent, the last mover, has no checker left: the game is over."""
    return ~(boards < 0).any(axis=1)


def result_points(after: np.ndarray) -> np.ndarray:
    """Points the mover won with its last checker off, from ``after`` seen by the loser (now on roll): 1..3."""
    loser = np.where(after > 0, after, 0)
    gammon = loser.sum(axis=1) == CHECKERS
    backgammon = gammon & (loser[:, 19:OWN_BAR + 1].sum(axis=1) > 0)
    return 1 + gammon.astype(np.int8) + backgammon.astype(np.int8)


@dataclass(frozen=True)
class GameResults:
    """Finished games; ``points`` are seat 0's (positive: seat 0 won that many points)."""

    points: np.ndarray
    turns: np.ndarray
    seconds: float

    @property
    def games(self) -> int:
        return len(self.points)

    def summary(self) -> dict:
        p = self.points.astype(np.float64)
        n = len(p)
        return {
            "games": n,
            "ppg": float(p.mean()),
            "ppg_se": float(p.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan"),
            "win_rate": float((p > 0).mean()),
            "gammon_rate": float((np.abs(p) == 2).mean()),
            "backgammon_rate": float((np.abs(p) == 3).mean()),
            "mean_turns": float(self.turns.mean()),
            "games_per_s": n / self.seconds if self.seconds > 0 else float("inf"),
        }


def play_games(
    player0: Player,
    player1: Player,
    games: int,
    *,
    seed: int = 0,
    first_game: int = 0,
    batch: int = 2048,
    swap_seats: bool = False,
    progress: bool = False,
    max_turns: int = 5000,
) -> GameResults:
    """Play ``games`` cubeless games of ``player0`` (seat 0) against ``player1``, ``batch`` at a time.

    Game ``i`` gets the dice of game id ``first_game + i``. With ``swap_seats`` the players exchange seats but
    keep the dice, so ``points`` stay seat 0's: two runs, with and without it, make duplicate games.
    """
    rng = np.random.default_rng(seed)
    players = (player1, player0) if swap_seats else (player0, player1)
    points = np.zeros(games, dtype=np.int8)
    turns = np.zeros(games, dtype=np.int32)
    started = time.perf_counter()
    with tqdm(total=games, disable=not progress, unit="game", desc=f"{player0.name} v {player1.name}") as bar:
        for lo in range(0, games, batch):
            ids = np.arange(lo, min(lo + batch, games))
            p, t = _play_batch(players, ids + first_game, seed, rng, max_turns)
            points[ids], turns[ids] = p, t
            bar.update(len(ids))
    if swap_seats:
        points = -points
    return GameResults(points, turns, time.perf_counter() - started)


def _play_batch(players, game_ids, seed, rng, max_turns):
    n = len(game_ids)
    boards = np.repeat(START_BOARD[None], n, axis=0)
    opening = roll_dice(seed, game_ids, np.zeros(n, dtype=np.int64))
    seat = np.where(opening[:, 0] > opening[:, 1], 0, 1)  # whoever rolled the higher die moves first
    points = np.zeros(n, dtype=np.int8)
    turns = np.zeros(n, dtype=np.int32)
    live = np.arange(n)
    turn = 0
    while len(live):
        if turn >= max_turns:
            raise RuntimeError(f"{len(live)} games still running after {max_turns} turns")
        dice = opening[live] if turn == 0 else roll_dice(seed, game_ids[live], np.full(len(live), turn))
        on_roll = boards[live]
        moves = afterstates(on_roll, dice, validate=False)
        chosen = np.empty(len(live), dtype=np.int64)
        movers = seat[live]
        for s, player in enumerate(players):
            mine = movers == s
            if not mine.any():
                continue
            rows = np.flatnonzero(mine[moves.owner])
            local = (np.cumsum(mine) - 1)[moves.owner[rows]]
            pick = player.choose(on_roll[mine], moves.after[rows], local, rng, dice=dice[mine])
            chosen[mine] = rows[pick]
        after = moves.after[chosen]
        boards[live] = after
        turns[live] += 1
        won = game_over(after)
        if won.any():
            finished = live[won]
            sign = np.where(seat[finished] == 0, 1, -1)
            points[finished] = sign * result_points(after[won])
        seat[live] = 1 - seat[live]
        live = live[~won]
        turn += 1
    return points, turns


def play_duplicate(player0: Player, player1: Player, sequences: int, **kwargs) -> GameResults:
    """Duplicate games: each of ``sequences`` dice sequences played twice, the seats swapped the second time.

    ``points`` are ``player0``'s, the first half from seat 0 and the second from seat 1 (same dice, game by game).
    Keyword arguments go to ``play_games``.
    """
    one = play_games(player0, player1, sequences, **kwargs)
    two = play_games(player0, player1, sequences, swap_seats=True, **kwargs)
    return GameResults(
        np.concatenate([one.points, two.points]), np.concatenate([one.turns, two.turns]), one.seconds + two.seconds
    )
