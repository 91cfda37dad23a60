"""Games and matches, many at once, with or without the doubling cube.

The rules of a game (standard rules of backgammon): each player rolls one die for the opening roll, ties are
rolled again, and the player with the higher die moves first, playing both dice. Players then alternate. The first
to bear off all fifteen checkers wins one point (single game), two if the loser has borne off none (gammon), three
if the loser has borne off none and still has a checker on the bar or in the winner's home board (backgammon).

The cube (rules in ``bgai.core.cube``): from the second turn on, the player on roll may double before it rolls, when
``bgai.core.cube.may_double`` allows it. Its opponent passes (the game ends; the doubler wins the stake before the
double) or takes (the stake doubles and the taker owns the cube). A game's points are its stake times 1, 2 or 3.
With the Jacoby rule (money only), gammons and backgammons count single while the cube is centered. A match is
won by the first to ``length`` points; the game after a player first reaches ``length - 1`` is the Crawford game,
in which no one may double, and the games after it are post-Crawford.

Dice are counter-based: the roll of game ``g`` at turn ``t`` depends only on (seed, g, t), so the same dice can
be dealt to a game played again with the seats swapped (duplicate games), whatever else is in the batch.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
from tqdm.auto import tqdm

from bgai.core.cube import CubeOwner, CubeState, may_double
from bgai.core.dice import OPENING_ROLLS, ORDERED_ROLLS
from bgai.core.errors import BgaiError
from bgai.core.match import crawford_next as next_is_crawford
from bgai.core.movegen import START_BOARD, afterstates
from bgai.core.phase import game_over, result_points  # noqa: F401 (the rules of a game's end: its API too)

if TYPE_CHECKING:
    from bgai.core.workers import Pool


@runtime_checkable
class Player(Protocol):
    """Chooses plays for a batch of positions.

    ``choose(boards, after, owner, rng, dice=None)``: ``boards`` (N×26) are the positions on roll, ``after``
    (M×26) and ``owner`` (M,) their legal afterstates as ``bgai.core.movegen.afterstates`` returns them (each seen from
    the opponent, grouped by owner), ``dice`` (N×2) the rolls, for players that need them. Returns, for each of
    the N positions, the index into ``after`` of its play.
    """

    name: str

    def choose(
        self, boards: np.ndarray, after: np.ndarray, owner: np.ndarray, rng: np.random.Generator, dice=None
    ) -> np.ndarray:
        ...


@runtime_checkable
class Evaluator(Protocol):
    """Values positions: ``probabilities(boards)``, for N boards (N×26, each seen from its player on roll), the
    (N, 5) cumulative probabilities of that player (win, win a gammon, win a backgammon, lose a gammon, lose a
    backgammon). ``bgai.eval.bot.Bot`` is one; the luck of the rolls (``bgai.play.analysis.roll_luck``) takes any.
    """

    def probabilities(self, boards: np.ndarray) -> np.ndarray:
        ...


class CubePlayer(Player, Protocol):
    """A player that handles the cube as well as the checkers.

    ``cube_actions(boards, state)``: ``boards`` (N×26) are positions seen from the player on roll, before it
    rolls, and ``state`` their cubes (``bgai.core.cube.CubeState``, relative to the player on roll). Returns two (N,)
    bool arrays, both as judged by the player whose method it is: whether the player on roll should double, and
    whether its opponent should take if doubled. The runner asks the roller for the first and, where it doubles,
    the opponent for the second, on the same boards and states. It asks only where ``may_double`` allows a
    double. A player without ``cube_actions`` never doubles and always takes.
    """

    def cube_actions(self, boards: np.ndarray, state: CubeState) -> tuple[np.ndarray, np.ndarray]:
        ...


class WithoutCube:
    """``player`` with its cube hidden: it plays the same checkers, never doubles and always takes."""

    def __init__(self, player: Player) -> None:
        self.player = player
        self.name = f"{player.name} (no cube)"

    def choose(self, boards, after, owner, rng, dice=None):
        return self.player.choose(boards, after, owner, rng, dice=dice)


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
    return np.where(turn[:, None] == 0, OPENING_ROLLS[h % np.uint64(30)], ORDERED_ROLLS[h % np.uint64(36)])


@dataclass(frozen=True)
class GameResults:
    """Finished games; ``points`` are seat 0's (positive: seat 0 won that many points).

    With the cube in play, ``cube`` holds each game's final cube value and ``passed`` whether it ended by a pass
    (``points`` are then ± the cube); both are ``None`` for cubeless games. ``luck`` (cubeless games played with a
    luck evaluator) is seat 0's luck over each game, the luck of its rolls minus the luck of the opponent's
    (``bgai.play.analysis.roll_luck``): ``points - luck`` is the luck-adjusted result, whose mean estimates the same
    points per game with far less variance. ``duplicate``: the games are duplicate ones (``play_duplicate``), the
    second half the first half's dice with the seats swapped; their standard errors are then the paired ones
    (``paired_mean``).
    """

    points: np.ndarray
    turns: np.ndarray
    seconds: float
    cube: np.ndarray | None = None
    passed: np.ndarray | None = None
    luck: np.ndarray | None = None
    duplicate: bool = False

    @property
    def games(self) -> int:
        return len(self.points)

    def _mean_se(self, values: np.ndarray) -> tuple[float, float]:
        values = values.astype(np.float64)
        if self.duplicate:
            return paired_mean(values.reshape(2, -1).T)
        n = len(values)
        return float(values.mean()), float(values.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")

    def summary(self) -> dict:
        """Points per game with its standard error (paired for duplicate games), rates of wins, gammons and
        backgammons (as scored: with the Jacoby rule a gammon with the cube centered counts single), and, with the
        cube, the mean final cube and the share of games ended by a pass."""
        p = self.points.astype(np.float64)
        n = len(p)
        ppg, ppg_se = self._mean_se(p)
        stake = np.ones(n, dtype=np.int64) if self.cube is None else self.cube
        won = np.abs(self.points) // stake  # 1..3 a game (1 on a pass)
        played_out = np.ones(n, dtype=bool) if self.passed is None else ~self.passed
        s = {
            "games": n,
            "ppg": ppg,
            "ppg_se": ppg_se,
            "win_rate": float((p > 0).mean()),
            "gammon_rate": float(((won == 2) & played_out).mean()),
            "backgammon_rate": float(((won == 3) & played_out).mean()),
            "mean_turns": float(self.turns.mean()),
            "games_per_s": n / self.seconds if self.seconds > 0 else float("inf"),
        }
        if self.cube is not None and self.passed is not None:  # (cubeful games record both)
            s["mean_cube"] = float(self.cube.mean())
            s["pass_rate"] = float(self.passed.mean())
        if self.luck is not None:
            s["ppg_luck_adjusted"], s["ppg_luck_adjusted_se"] = self._mean_se(p - self.luck)
        return s


def paired_mean(values: np.ndarray) -> tuple[float, float]:
    """Mean and standard error of (sequences, 2) per-game values of duplicate games, the two games of a dice
    sequence averaged first, so that the luck they share cancels."""
    pairs = np.asarray(values, dtype=np.float64).mean(axis=1)
    n = len(pairs)
    return float(pairs.mean()), float(pairs.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")


def concat_results(parts: list[GameResults]) -> GameResults:
    """One ``GameResults`` of the games of ``parts``, in order (``duplicate`` is the caller's to set: games of one
    seat then the other, as ``play_duplicate`` plays them)."""
    cubeful = parts[0].cube is not None
    return GameResults(
        np.concatenate([r.points for r in parts]),
        np.concatenate([r.turns for r in parts]),
        sum(r.seconds for r in parts),
        np.concatenate([r.cube for r in parts]) if cubeful else None,
        np.concatenate([r.passed for r in parts]) if cubeful else None,
        np.concatenate([r.luck for r in parts]) if parts[0].luck is not None else None,
    )


@dataclass(frozen=True)
class CubeRules:
    """The cube of a batch of games. ``away`` (n×2, by seat), ``crawford`` and ``post_crawford`` (n,) are the match
    score before each game, ``None`` for money games."""

    jacoby: bool = False
    away: np.ndarray | None = None
    crawford: np.ndarray | None = None
    post_crawford: np.ndarray | None = None


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
    cube: bool = False,
    jacoby: bool = False,
    luck=None,
) -> GameResults:
    """Play ``games`` money games of ``player0`` (seat 0) against ``player1``, ``batch`` at a time.

    Game ``i`` gets the dice of game id ``first_game + i``. With ``swap_seats`` the players exchange seats but
    keep the dice, and ``points`` are still ``player0``'s: two runs, with and without it, make duplicate games.
    Games are cubeless unless ``cube``: then players with ``cube_actions`` (see ``CubePlayer``) double and take,
    and ``jacoby`` applies the Jacoby rule. With ``luck``, a function ``luck(boards, dice, opening)`` giving the
    luck of each roll for its roller (``functools.partial(bgai.play.analysis.roll_luck, evaluator)``), cubeless games
    also keep each game's luck (``GameResults.luck``).
    """
    if jacoby and not cube:
        raise BgaiError("the Jacoby rule needs the cube (cube=True)")
    if luck is not None and cube:
        raise BgaiError("luck-adjusted results are for cubeless games")
    rng = np.random.default_rng(seed)
    players = (player1, player0) if swap_seats else (player0, player1)
    points = np.zeros(games, dtype=np.int32)
    turns = np.zeros(games, dtype=np.int32)
    stakes = np.ones(games, dtype=np.int64)
    passed = np.zeros(games, dtype=bool)
    luck_sum: np.ndarray | None = np.zeros(games, dtype=np.float64) if luck is not None else None
    rules = CubeRules(jacoby=jacoby) if cube else None
    started = time.perf_counter()
    with tqdm(total=games, disable=not progress, unit="game", desc=f"{player0.name} v {player1.name}") as bar:
        for lo in range(0, games, batch):
            ids = np.arange(lo, min(lo + batch, games))
            points[ids], turns[ids], stakes[ids], passed[ids], batch_luck = _play_batch(
                players, ids + first_game, seed, rng, max_turns, rules, luck
            )
            if luck_sum is not None:
                luck_sum[ids] = batch_luck
            bar.update(len(ids))
    if swap_seats:
        points = -points
        luck_sum = None if luck_sum is None else -luck_sum
    seconds = time.perf_counter() - started
    return GameResults(points, turns, seconds, stakes if cube else None, passed if cube else None, luck_sum)


def new_games(game_ids: np.ndarray, seed: int):
    """The games ``game_ids`` of ``seed`` at their start, and their dice: ``(table, dice)``, ``dice(rows, turn)``
    as ``run_turns`` asks for it. Whoever rolled the higher die moves first, with the opening roll; each game's
    dice come from its id alone."""
    n = len(game_ids)
    opening = roll_dice(seed, game_ids, np.zeros(n, dtype=np.int64))
    table = Table.start(np.repeat(START_BOARD[None], n, axis=0), np.where(opening[:, 0] > opening[:, 1], 0, 1))

    def dice(rows, turn):
        return opening[rows] if turn == 0 else roll_dice(seed, game_ids[rows], np.full(len(rows), turn))

    return table, dice


def _play_batch(players, game_ids, seed, rng, max_turns, rules: CubeRules | None = None, luck=None):
    """Play one batch of games to the end: seat 0's points, turns, final cube values, passes and (with ``luck``,
    see ``play_games``) luck, game by game. Without ``rules`` no one is asked about the cube."""
    n = len(game_ids)
    table, dice = new_games(game_ids, seed)
    seat0_luck = np.zeros(n, dtype=np.float64) if luck is not None else None

    def observe(turn, rows, boards, rolls, seat):
        seat0_luck[rows] += np.where(seat == 0, 1, -1) * luck(boards, rolls, turn == 0)

    run_turns(players, table, dice, rng, rules=rules, max_turns=max_turns,
              observe=observe if luck is not None else None)
    return table.points, table.turns, table.stake, table.passed, seat0_luck


@dataclass
class Table:
    """A batch of games in progress, which ``run_turns`` plays on.

    ``boards`` (n×26) each game's position from the side of the seat on roll; ``seat`` (n,) that seat (0 or 1);
    ``stake`` (n,) the cube value and ``holder`` (n,) the seat that owns the cube, -1 while it is centered;
    ``points`` (n,) seat 0's points once a game is over; ``turns`` (n,) turns played; ``passed`` (n,) games ended
    by a pass; ``live`` the indices of the games still being played. A game that is not live has ended: by its
    last checker or a pass (``finished``), or cut short by ``run_turns`` (``plies``, ``stop``), its board then
    being the position where it stopped, before the roll of ``seat``.
    """

    boards: np.ndarray
    seat: np.ndarray
    stake: np.ndarray
    holder: np.ndarray
    points: np.ndarray
    turns: np.ndarray
    passed: np.ndarray
    finished: np.ndarray
    live: np.ndarray

    @classmethod
    def start(cls, boards: np.ndarray, seat: np.ndarray, stake: np.ndarray | None = None,
              holder: np.ndarray | None = None) -> Table:
        """Games from ``boards`` (on-roll view, before the roll) with ``seat`` on roll; cubes centered at 1 unless
        ``stake`` and ``holder`` are given."""
        n = len(boards)
        return cls(
            boards=np.array(boards, dtype=np.int8),
            seat=np.array(seat, dtype=np.int64),
            stake=np.ones(n, dtype=np.int64) if stake is None else np.array(stake, dtype=np.int64),
            holder=np.full(n, -1, dtype=np.int8) if holder is None else np.array(holder, dtype=np.int8),
            points=np.zeros(n, dtype=np.int32),
            turns=np.zeros(n, dtype=np.int32),
            passed=np.zeros(n, dtype=bool),
            finished=np.zeros(n, dtype=bool),
            live=np.arange(n),
        )


def run_turns(players, table: Table, dice, rng, *, rules: CubeRules | None = None, max_turns: int = 5000,
              first_offer: int = 1, plies: int | None = None, stop=None, observe=None) -> Table:
    """Play the games of ``table`` turn by turn, all live games at once, until each ends.

    ``players`` are seat 0's and seat 1's; ``dice(rows, turn)`` the rolls (len(rows)×2) of the games ``rows`` at
    ``turn`` (0 is the first turn played here). With ``rules`` the cube is in play (see ``_offer_doubles``), from
    turn ``first_offer`` on. A game can also be cut short, left where it stands before a roll: after ``plies``
    turns, or before a turn where ``stop(boards)`` (on-roll view) is true. ``observe(turn, rows, boards, dice,
    seat)`` is shown each turn's positions, rolls and seats on roll before the players choose. Returns ``table``,
    updated in place.
    """
    boards, seat, stake, holder, points = table.boards, table.seat, table.stake, table.holder, table.points
    live = table.live
    asks = rules is not None and any(hasattr(player, "cube_actions") for player in players)
    turn = 0
    while len(live):
        if plies is not None and turn >= plies:
            break
        if turn >= max_turns:
            raise RuntimeError(f"{len(live)} games still running after {max_turns} turns")
        if stop is not None:
            live = live[~np.asarray(stop(boards[live]), dtype=bool)]
            if not len(live):
                break
        if asks and turn >= first_offer:
            dropped = _offer_doubles(players, boards, live, seat, stake, holder, rules)
            if dropped.any():
                finished = live[dropped]
                points[finished] = np.where(seat[finished] == 0, 1, -1) * stake[finished]
                table.passed[finished] = True
                table.finished[finished] = True
                live = live[~dropped]
                if not len(live):
                    break
        rolls = np.asarray(dice(live, turn), dtype=np.int8)
        on_roll = boards[live]
        movers = seat[live]
        if observe is not None:
            observe(turn, live, on_roll, rolls, movers)
        moves = afterstates(on_roll, rolls, validate=False)
        chosen = np.empty(len(live), dtype=np.int64)
        for s, player in enumerate(players):
            mine = movers == s
            if not mine.any():
                continue
            rows = np.flatnonzero(mine[moves.owner])
            local = (np.cumsum(mine) - 1)[moves.owner[rows]]
            pick = player.choose(on_roll[mine], moves.after[rows], local, rng, dice=rolls[mine])
            chosen[mine] = rows[pick]
        after = moves.after[chosen]
        boards[live] = after
        table.turns[live] += 1
        won = game_over(after)
        if won.any():
            finished = live[won]
            single = rules is not None and rules.jacoby
            counted = np.where(single & (holder[finished] == -1), 1, result_points(after[won]))
            points[finished] = np.where(seat[finished] == 0, 1, -1) * stake[finished] * counted
            table.finished[finished] = True
        seat[live] = 1 - seat[live]
        live = live[~won]
        turn += 1
    table.live = live
    return table


def _cube_state(games, seat, stake, holder, rules: CubeRules) -> CubeState:
    """The cubes of ``games`` from the side of the seat on roll in each."""
    on_roll = seat[games]
    owner = CubeOwner.of_seats(holder[games], on_roll)
    away = None
    if rules.away is not None:
        away = np.stack([rules.away[games, on_roll], rules.away[games, 1 - on_roll]], axis=1)
    crawford = None if rules.crawford is None else rules.crawford[games]
    post = None if rules.post_crawford is None else rules.post_crawford[games]
    return CubeState(stake[games].copy(), owner.astype(np.int8), away, crawford, post, jacoby=rules.jacoby)


def _ask(player, boards, state, which: int) -> np.ndarray:
    answer = np.asarray(player.cube_actions(boards, state)[which], dtype=bool)
    if answer.shape != (len(boards),):
        raise ValueError(f"{player.name}.cube_actions gave shape {answer.shape} for {len(boards)} positions")
    return answer


def _offer_doubles(players, boards, live, seat, stake, holder, rules) -> np.ndarray:
    """Before the roll in the ``live`` games: the player on roll may double, its opponent takes or passes.
    Updates ``stake`` and ``holder`` where a double is taken; returns which of ``live`` end with a pass."""
    on_roll = seat[live]
    allowed = may_double(_cube_state(live, seat, stake, holder, rules))
    doubled = np.zeros(len(live), dtype=bool)
    for s, player in enumerate(players):
        rows = np.flatnonzero(allowed & (on_roll == s))
        if len(rows) and hasattr(player, "cube_actions"):
            games = live[rows]
            doubled[rows] = _ask(player, boards[games], _cube_state(games, seat, stake, holder, rules), 0)
    taken = doubled.copy()
    for s, player in enumerate(players):
        rows = np.flatnonzero(doubled & (on_roll != s))  # s is the opponent of the doubler
        if len(rows) and hasattr(player, "cube_actions"):
            games = live[rows]
            taken[rows] = _ask(player, boards[games], _cube_state(games, seat, stake, holder, rules), 1)
    took = live[taken]
    stake[took] *= 2
    holder[took] = 1 - seat[took]
    return doubled & ~taken


def play_duplicate(player0: Player, player1: Player, sequences: int, pool: Pool | None = None,
                   **kwargs) -> GameResults:
    """Duplicate games: each of ``sequences`` dice sequences played twice, the seats swapped the second time.

    ``points`` are ``player0``'s, the first half from seat 0 and the second from seat 1 (same dice, game by game).
    Keyword arguments go to ``play_games``. With a ``pool`` (``bgai.core.workers``) its workers play the games, each
    seat's split into ranges of consecutive dice sequences: each game's dice come from its id, so the games are
    the ones this process would play, for players that choose without random draws (every bot and built-in player
    but ``random``, whose draws would restart with each range). (A bot's sums may differ in their last bits with a
    board's place in a batch, ``bgai.eval.kernels.first_layer``, so a play tied to within about 1e-7 may go the other
    way.)
    """
    if pool is None or sequences == 0:
        one = play_games(player0, player1, sequences, **kwargs)
        two = play_games(player0, player1, sequences, swap_seats=True, **kwargs)
        return dataclasses.replace(concat_results([one, two]), duplicate=True)
    first = kwargs.pop("first_game", 0)
    kwargs.pop("progress", None)  # one bar a worker would be noise
    ranges = id_ranges(first, sequences, pool.workers)
    tasks = [DuplicateTask(swap, lo, hi - lo) for swap in (False, True) for lo, hi in ranges]
    parts = pool.map(_duplicate_task, tasks, DuplicatePlayers(player0, player1, kwargs))
    return dataclasses.replace(concat_results(parts), duplicate=True)


def id_ranges(first: int, count: int, parts: int) -> list[tuple[int, int]]:
    """The ids ``first .. first + count - 1`` as at most ``parts`` ranges ``(lo, hi)`` of consecutive ones, their
    sizes within one: how the games of a round or a benchmark are split between workers."""
    bounds = np.linspace(first, first + count, min(parts, count) + 1).round().astype(np.int64)
    return [(int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]


@dataclass(frozen=True)
class DuplicatePlayers:
    """What every worker of ``play_duplicate`` shares: the two players and ``play_games``'s other options."""

    player0: Player
    player1: Player
    options: dict


@dataclass(frozen=True)
class DuplicateTask:
    """A worker's part of ``play_duplicate``: ``count`` dice sequences from ``first``, seats swapped or not."""

    swap_seats: bool
    first: int
    count: int


def _duplicate_task(shared: DuplicatePlayers, task: DuplicateTask) -> GameResults:
    """A worker's part of ``play_duplicate``: one seat's games of ``count`` dice sequences from ``first``."""
    return play_games(shared.player0, shared.player1, task.count, first_game=task.first, swap_seats=task.swap_seats,
                      **shared.options)


# Matches ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchResults:
    """Finished matches to ``length`` points, from ``player0``'s side.

    ``winner`` (M,) 0 where ``player0`` won the match, 1 where ``player1`` did; ``score`` (M×2) the final points
    of ``player0`` and ``player1`` (the winner's may pass ``length``); ``games`` (M,) games played. ``played``
    holds every game of every match, match by match in order (points ``player0``'s, final cube, passes); ``match``
    the match each of them belongs to and ``crawford`` whether it was the Crawford game.
    """

    length: int
    winner: np.ndarray
    score: np.ndarray
    games: np.ndarray
    seconds: float
    played: GameResults
    match: np.ndarray
    crawford: np.ndarray

    @property
    def matches(self) -> int:
        return len(self.winner)

    def summary(self) -> dict:
        """Match win rate of ``player0`` with its standard error, games per match, mean cube, share of passes."""
        won = (self.winner == 0).astype(np.float64)
        n = len(won)
        assert self.played.cube is not None and self.played.passed is not None  # matches are cubeful
        return {
            "matches": n,
            "length": self.length,
            "win_rate": float(won.mean()),
            "win_rate_se": float(won.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan"),
            "games": self.played.games,
            "mean_games": float(self.games.mean()),
            "mean_cube": float(self.played.cube.mean()),
            "pass_rate": float(self.played.passed.mean()),
            "matches_per_s": n / self.seconds if self.seconds > 0 else float("inf"),
            "games_per_s": self.played.games / self.seconds if self.seconds > 0 else float("inf"),
        }


def play_matches(
    player0: Player,
    player1: Player,
    matches: int,
    length: int,
    *,
    seed: int = 0,
    first_match: int = 0,
    batch: int = 1024,
    swap_seats: bool = False,
    progress: bool = False,
    max_turns: int = 5000,
) -> MatchResults:
    """Play ``matches`` matches to ``length`` points of ``player0`` (seat 0) against ``player1``, with the cube
    (players with ``cube_actions`` use it) and the Crawford rule.

    Up to ``batch`` matches are played together, round by round: round r plays the r-th game of every unfinished
    match in one batch, each game's cube starting from its match score. Game r of match ``i`` gets the dice of
    game id ``(first_match + i) * 2 * length + r`` (no match lasts ``2 * length`` games: each game scores a
    point), so with ``swap_seats`` the players exchange seats and every game keeps its dice; the results stay
    ``player0``'s.
    """
    if length < 1:
        raise BgaiError(f"a match is played to at least 1 point, got {length}")
    rng = np.random.default_rng(seed)
    players = (player1, player0) if swap_seats else (player0, player1)
    score = np.zeros((matches, 2), dtype=np.int64)  # by seat
    games = np.zeros(matches, dtype=np.int32)
    crawford_next = np.zeros(matches, dtype=bool)
    crawford_played = np.zeros(matches, dtype=bool)
    log = []
    started = time.perf_counter()
    with tqdm(total=matches, disable=not progress, unit="match", desc=f"{player0.name} v {player1.name}") as bar:
        for lo in range(0, matches, batch):
            live = np.arange(lo, min(lo + batch, matches))
            game = 0
            while len(live):
                crawford = crawford_next[live]
                rules = CubeRules(away=length - score[live], crawford=crawford, post_crawford=crawford_played[live])
                ids = (first_match + live) * 2 * length + game
                points, turns, stake, passed, _ = _play_batch(players, ids, seed, rng, max_turns, rules)
                log.append((live, np.full(len(live), game), points, turns, stake, passed, crawford))
                score[live, 0] += np.maximum(points, 0)
                score[live, 1] += np.maximum(-points, 0)
                games[live] += 1
                crawford_played[live] |= crawford
                over = (score[live] >= length).any(axis=1)
                crawford_next[live] = next_is_crawford(score[live], length, crawford_played[live])
                bar.update(int(over.sum()))
                live = live[~over]
                game += 1
    seconds = time.perf_counter() - started
    match, number, points, turns, stake, passed, crawford = (np.concatenate(column) for column in zip(*log))
    order = np.lexsort((number, match))
    sign = -1 if swap_seats else 1
    played = GameResults(sign * points[order], turns[order], seconds, stake[order], passed[order])
    if swap_seats:
        score = score[:, ::-1].copy()
    winner = np.where(score[:, 0] >= length, 0, 1)
    return MatchResults(length, winner, score, games, seconds, played, match[order], crawford[order])


def play_duplicate_matches(player0: Player, player1: Player, sequences: int, length: int, **kwargs) -> MatchResults:
    """Duplicate matches: each of ``sequences`` dice sequences played twice, the seats swapped the second time.
    Results are ``player0``'s, the first half from seat 0; keyword arguments go to ``play_matches``."""
    one = play_matches(player0, player1, sequences, length, **kwargs)
    two = play_matches(player0, player1, sequences, length, swap_seats=True, **kwargs)
    return MatchResults(
        length,
        np.concatenate([one.winner, two.winner]),
        np.concatenate([one.score, two.score]),
        np.concatenate([one.games, two.games]),
        one.seconds + two.seconds,
        concat_results([one.played, two.played]),
        np.concatenate([one.match, two.match + sequences]),
        np.concatenate([one.crawford, two.crawford]),
    )
