"""Self-play: one network plays both sides of hundreds of games at once, for the positions they pass through and the
λ-returns that TD(λ) learns (``bgai.train.td``).

Learning target. Each position a game passes through (seen from the player on roll there) is trained towards its
λ-return, computed backwards when the game is over:

    G_t = flip((1 - λ) V(s_{t+1}) + λ G_{t+1}),        G_{T-1} = the real result, seen from s_{T-1}

where ``V`` is the network's evaluation made while the move was chosen and ``flip`` turns probabilities to the
other player's side (the player on roll alternates). This is the forward view of TD(λ) (Sutton & Barto,
*Reinforcement Learning*, ch. 12) with the values the players saw, rather than per-weight eligibility traces: with
hundreds of games in flight, traces would need one copy of every weight per game, while λ-returns cost one pass
over finished games and let the learner train on shuffled minibatches. λ = 1 is Monte Carlo, λ = 0 is TD(0).
Terminal targets are exact: win, gammon and backgammon as the game ended.

Separation. A ``SelfPlayWorker`` owns a snapshot of the weights and plays games into ``Experience`` (boards and targets
only, cheap to send between processes); a ``Learner`` (``bgai.train.learner``) owns the model and optimizer and learns
from them. The TD stage of a training run (``bgai.train.td``) drives them, the worker with a fresh snapshot each round;
nothing in either class depends on sharing memory with the other. With worker processes or Ray actors
(``bgai.core.workers``) a round's games are split into ``SelfPlayTask``s of consecutive game ids, each played by
``play_task`` from a ``ModelSnapshot`` of the weights, and their experience merged in task order.

``sample_positions`` and ``sample_trajectories`` keep the positions of self-play games rather than their targets:
a lookahead generation's positions, the pruning net's and the tests'.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bgai.core.game import game_over, id_ranges, roll_dice
from bgai.core.movegen import afterstates, group_starts
from bgai.core.phase import BEAROFF, OVER, classify
from bgai.core.workers import Pool
from bgai.eval import kernels
from bgai.eval.bot import PRUNE_KEEP, Bot, exact_probabilities
from bgai.eval.weights import ModelSnapshot, flip, one_blas_thread
from bgai.formats.position import START_BOARD

if TYPE_CHECKING:

    from bgai.eval.network import EquityModel

# Self-play ---------------------------------------------------------------------------------------------------


@dataclass
class Experience:
    """Positions (on-roll view) and their λ-return targets, from finished games."""

    boards: np.ndarray
    targets: np.ndarray
    games: int
    turns: int
    gammons: int
    backgammons: int


@dataclass
class Trajectories:
    """The positions self-play games passed through: ``boards[i]`` (on-roll view, before the roll) was position
    number i of game ``game[i]``, in order within each game (games in increasing id), from the starting position to
    the last before the game ended; ``explored[i]``: the move made there was a random one (exploration), not the
    player's choice."""

    boards: np.ndarray
    game: np.ndarray
    explored: np.ndarray


class SelfPlayWorker:
    """Plays self-play games with a snapshot of a model's weights: its own copy of a torch ``model``, or a
    ``ModelSnapshot`` as it is (the numpy pass, ``bgai.eval.weights``: a worker process's task, and each round of a TD
    stage in the learner's process, ``load_snapshot``)."""

    def __init__(self, model: EquityModel | ModelSnapshot, lam: float, seed: int, epsilon: float = 0.0,
                 pruner: ModelSnapshot | None = None, prune: int = PRUNE_KEEP):
        self.model = model if isinstance(model, ModelSnapshot) else copy.deepcopy(model).eval()
        self.pruner, self.prune = pruner, prune
        self.bot = self._bot()
        self.lam = lam
        self.seed = seed
        self.epsilon = epsilon

    def _bot(self) -> Bot:
        """The player: the model at 0-ply, each move chosen among the pruning net's best ``prune`` plays if there is
        one (``Bot.replies``)."""
        return Bot(self.model, name="self-play", pruner=self.pruner, prune=self.prune)

    def load_snapshot(self, snapshot: ModelSnapshot) -> None:
        """Play on with ``snapshot`` (the numpy pass, as a worker process's task does)."""
        self.model = snapshot
        self.bot = self._bot()

    def play(self, first_game: int, n_games: int, rng: np.random.Generator) -> Experience:
        """Play games ``first_game .. first_game + n_games - 1`` to the end and return their experience."""
        return self._lambda_returns(self._play(first_game, n_games, rng), n_games)

    def trajectories(self, first_game: int, n_games: int, rng: np.random.Generator) -> Trajectories:
        """Play games ``first_game .. first_game + n_games - 1`` to the end and return the positions they passed
        through, in order (see ``Trajectories``)."""
        record = self._play(first_game, n_games, rng)
        boards = np.concatenate([before for _, before, _, _, _, _ in record])
        game = np.concatenate([games for games, _, _, _, _, _ in record])
        turn = np.concatenate([np.full(len(games), t) for t, (games, *_) in enumerate(record)])
        explored = np.concatenate([explore for *_, explore in record])
        order = np.lexsort((turn, game))
        return Trajectories(boards[order], first_game + game[order], explored[order])

    def _play(self, first_game: int, n_games: int, rng: np.random.Generator) -> list:
        """The record of the games, per turn: (games on roll, their positions before the roll, the chosen
        afterstates, their values, finished?, explored?)."""
        ids = np.arange(first_game, first_game + n_games)
        boards = np.repeat(START_BOARD[None], n_games, axis=0)
        live = np.arange(n_games)
        record = []
        turn = 0
        while len(live):
            dice = roll_dice(self.seed, ids[live], np.full(len(live), turn))
            moves = afterstates(boards[live], dice, validate=False)
            values = None
            if self.pruner is None:
                values = self.bot.probabilities(moves.after)
                pick = kernels.best_plays(values, moves.owner, len(live))
            else:  # the model judges the pruning net's best few plays of each move
                pick, value = self.bot.replies(moves.after, moves.owner, len(live))
            explore = np.zeros(len(live), dtype=bool)
            if self.epsilon > 0:
                explore = rng.random(len(live)) < self.epsilon
                if explore.any():
                    starts, counts = group_starts(moves.owner, len(live))
                    pick[explore] = starts[explore] + (rng.random(explore.sum()) * counts[explore]).astype(np.int64)
            if values is not None:
                value = values[pick]
            elif explore.any():  # (a random play the model may not have judged)
                value[explore] = self.bot.probabilities(moves.after[pick[explore]])
            chosen = moves.after[pick]
            over = game_over(chosen)
            record.append((live, boards[live], chosen, value, over, explore))
            boards[live] = chosen
            live = live[~over]
            turn += 1
        return record

    def _lambda_returns(self, record, n_games: int) -> Experience:
        lam = np.float32(self.lam)
        next_value = np.zeros((n_games, 5), dtype=np.float32)
        next_target = np.zeros((n_games, 5), dtype=np.float32)
        boards, targets = [], []
        gammons = backgammons = 0
        for games, _, chosen, values, over, _ in reversed(record):
            # The state reached at this turn (chosen, opponent on roll) gets its target from the state after it.
            target = flip((1 - lam) * next_value[games] + lam * next_target[games])
            if over.any():
                exact = exact_probabilities(chosen[over])
                values[over] = exact
                target[over] = exact
                gammons += int(exact[:, 3].sum())
                backgammons += int(exact[:, 4].sum())
            keep = ~over
            boards.append(chosen[keep])
            targets.append(target[keep])
            next_value[games] = values
            next_target[games] = target
        return Experience(
            boards=np.concatenate(boards[::-1]),
            targets=np.concatenate(targets[::-1]).astype(np.float32),
            games=n_games,
            turns=len(record),
            gammons=gammons,
            backgammons=backgammons,
        )


@dataclass(frozen=True)
class SelfPlayTask:
    """Games ``first_game .. first_game + games - 1`` of a run, for a worker (``bgai.core.workers``) to play."""

    first_game: int
    games: int
    lam: float
    seed: int
    epsilon: float = 0.0
    pruner: ModelSnapshot | None = None  # (SelfPlayWorker's)
    prune: int = PRUNE_KEEP


def play_task(snapshot: ModelSnapshot, task: SelfPlayTask) -> Experience:
    """The experience of ``task``'s games, played with ``snapshot``'s weights: a function of its arguments only
    (the dice are counter-based, the exploration draws seeded by the run's seed and the first game's id), so a
    task played again after its worker died gives the same experience."""
    worker = SelfPlayWorker(snapshot, task.lam, task.seed, task.epsilon, task.pruner, task.prune)
    with one_blas_thread():  # one worker a core
        return worker.play(task.first_game, task.games, np.random.default_rng([task.seed, task.first_game]))


def trajectories_task(snapshot: ModelSnapshot, task: SelfPlayTask) -> Trajectories:
    """The trajectories of ``task``'s games (``SelfPlayWorker.trajectories``), as reproducible as ``play_task``."""
    worker = SelfPlayWorker(snapshot, task.lam, task.seed, task.epsilon)
    with one_blas_thread():
        return worker.trajectories(task.first_game, task.games, np.random.default_rng([task.seed, task.first_game]))


def split_games(first_game: int, games: int, parts: int, **settings) -> list[SelfPlayTask]:
    """``games`` games from ``first_game`` as at most ``parts`` tasks of consecutive game ids, sizes within one."""
    return [SelfPlayTask(lo, hi - lo, **settings) for lo, hi in id_ranges(first_game, games, parts)]


def merge_experience(parts: list[Experience]) -> Experience:
    """One ``Experience`` of several tasks' (in task order)."""
    return Experience(
        boards=np.concatenate([p.boards for p in parts]),
        targets=np.concatenate([p.targets for p in parts]),
        games=sum(p.games for p in parts),
        turns=max(p.turns for p in parts),
        gammons=sum(p.gammons for p in parts),
        backgammons=sum(p.backgammons for p in parts),
    )


def sample_positions(model: EquityModel, games: int, first_game: int, seed: int, epsilon: float,
                     rng: np.random.Generator, keep: int, pool: Pool | None = None,
                     progress: bool = False) -> np.ndarray:
    """Up to ``keep`` distinct positions (on-roll view, before the roll) from ``games`` self-play games of
    ``model`` at 0-ply with ``epsilon`` exploration, bear-offs and finished games left out, in random order.

    With a ``pool`` the games are played by its workers, each task's exploration seeded by ``seed`` and its first
    game; without, here, exploring with ``rng`` (as bgai did before it had workers). ``rng`` shuffles."""
    parts = _self_play(model, games, first_game, seed, epsilon, rng, pool, progress,
                       lambda worker, lo, n: worker.play(lo, n, rng).boards, _positions_task)
    boards = _distinct_live(np.concatenate(parts))
    return boards[rng.permutation(len(boards))[:keep]]


def sample_trajectories(model: EquityModel, games: int, first_game: int, seed: int, epsilon: float,
                        rng: np.random.Generator, keep: int, pool: Pool | None = None,
                        progress: bool = False) -> dict[str, np.ndarray]:
    """``sample_positions`` that also keeps the order the games went through them, for ``trace_returns``.

    Returns ``boards``, up to ``keep`` distinct positions (as ``sample_positions``), and the games' trajectories
    up to their bear-off or end: ``sequence`` (each position's row in ``boards``, -1 for one not kept), ``game``
    (its game) and ``explored`` (the move made there was random)."""
    parts = _self_play(model, games, first_game, seed, epsilon, rng, pool, progress,
                       lambda worker, lo, n: worker.trajectories(lo, n, rng), trajectories_task)
    paths = Trajectories(*(np.concatenate([getattr(p, name) for p in parts]) for name in ("boards", "game",
                                                                                           "explored")))
    live = ~np.isin(classify(paths.boards), (OVER, BEAROFF))  # a game's live positions come before all others
    distinct, row = np.unique(paths.boards[live], axis=0, return_inverse=True)
    order = rng.permutation(len(distinct))[:keep]
    rows_kept = np.full(len(distinct), -1, dtype=np.int64)
    rows_kept[order] = np.arange(len(order))
    return {"boards": distinct[order], "sequence": rows_kept[row.reshape(-1)], "game": paths.game[live],
            "explored": paths.explored[live]}


def _self_play(model: EquityModel, games: int, first_game: int, seed: int, epsilon: float,
               rng: np.random.Generator, pool: Pool | None, progress: bool, here, task) -> list:
    """The results of self-play games ``first_game ..`` of ``model`` (0-ply, ``epsilon`` exploration), in game
    order: ``here(worker, first, n)`` for batches of 1,024 played in this process (exploring with ``rng``), else
    ``task(snapshot, SelfPlayTask)`` for tasks run by the ``pool``'s workers (each seeded by ``seed`` and its
    first game)."""
    from tqdm.auto import tqdm

    results = []
    with tqdm(total=games, unit="game", disable=not progress, desc="sampling positions") as bar:
        if pool is None:
            worker = SelfPlayWorker(model, lam=0.0, seed=seed, epsilon=epsilon)
            for lo in range(first_game, first_game + games, 1024):
                n = min(1024, first_game + games - lo)
                results.append(here(worker, lo, n))
                bar.update(n)
        else:
            parts = max(pool.workers, -(-games // 1024))
            tasks = split_games(first_game, games, parts, lam=0.0, seed=seed, epsilon=epsilon)
            results = [None] * len(tasks)
            for i, result in pool.imap(task, tasks, ModelSnapshot.of(model)):
                results[i] = result
                bar.update(tasks[i].games)
    return results


def _distinct_live(boards: np.ndarray) -> np.ndarray:
    """The distinct boards, sorted, without bear-offs and finished games."""
    boards = np.unique(boards, axis=0)
    return boards[~np.isin(classify(boards), (OVER, BEAROFF))]


def _positions_task(snapshot: ModelSnapshot, task) -> np.ndarray:
    """The distinct live positions of one task's self-play games (a worker's share of ``sample_positions``)."""
    return _distinct_live(play_task(snapshot, task).boards)
