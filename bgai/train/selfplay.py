"""TD(λ) self-play: one network plays both sides of hundreds of games at once and learns from them.

Learning target. Each position a game passes through (seen from the player on roll there) is trained towards its
λ-return, computed backwards when the game is over:

    G_t = flip((1 - λ) V(s_{t+1}) + λ G_{t+1}),        G_{T-1} = the real result, seen from s_{T-1}

where ``V`` is the network's evaluation made while the move was chosen and ``flip`` turns probabilities to the
other player's side (the player on roll alternates). This is the forward view of TD(λ) (Sutton & Barto,
*Reinforcement Learning*, ch. 12) with the values the players saw, rather than per-weight eligibility traces: with
hundreds of games in flight, traces would need one copy of every weight per game, while λ-returns cost one pass
over finished games and let the learner train on shuffled minibatches. λ = 1 is Monte Carlo, λ = 0 is TD(0).
Terminal targets are exact: win, gammon and backgammon as the game ended.

Separation. A ``SelfPlayWorker`` owns a snapshot of the weights and plays games into ``Experience`` (boards and
targets only, cheap to send between processes); a ``Learner`` owns the model and optimizer and trains on
experience. The TD stage of a training run (``bgai.train.training``) drives them, the worker with a fresh snapshot each
round; nothing in either class depends on sharing memory with the other. With worker processes or Ray actors
(``bgai.core.workers``) a round's games are split into ``SelfPlayTask``s of consecutive game ids, each played by
``play_task`` from a ``ModelSnapshot`` of the weights, and their experience merged in task order.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bgai.core.game import game_over, id_ranges, roll_dice
from bgai.core.movegen import afterstates, group_starts
from bgai.core.phase import classify
from bgai.eval import encoding, kernels
from bgai.eval.bot import Bot, exact_probabilities
from bgai.eval.weights import ModelSnapshot, equity, flip, one_blas_thread
from bgai.formats.position import START_BOARD

if TYPE_CHECKING:
    import torch

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

    def __init__(self, model: EquityModel | ModelSnapshot, lam: float, seed: int, epsilon: float = 0.0):
        self.model = model if isinstance(model, ModelSnapshot) else copy.deepcopy(model).eval()
        self.bot = Bot(self.model, name="self-play")
        self.lam = lam
        self.seed = seed
        self.epsilon = epsilon

    def load_snapshot(self, snapshot: ModelSnapshot) -> None:
        """Play on with ``snapshot`` (the numpy pass, as a worker process's task does)."""
        self.model = snapshot
        self.bot = Bot(snapshot, name="self-play")

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
            values = self.bot.probabilities(moves.after)
            pick = kernels.best_plays(values, moves.owner, len(live))
            explore = np.zeros(len(live), dtype=bool)
            if self.epsilon > 0:
                explore = rng.random(len(live)) < self.epsilon
                if explore.any():
                    starts, counts = group_starts(moves.owner, len(live))
                    pick[explore] = starts[explore] + (rng.random(explore.sum()) * counts[explore]).astype(np.int64)
            chosen = moves.after[pick]
            over = game_over(chosen)
            record.append((live, boards[live], chosen, values[pick], over, explore))
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


def play_task(snapshot: ModelSnapshot, task: SelfPlayTask) -> Experience:
    """The experience of ``task``'s games, played with ``snapshot``'s weights: a function of its arguments only
    (the dice are counter-based, the exploration draws seeded by the run's seed and the first game's id), so a
    task played again after its worker died gives the same experience."""
    worker = SelfPlayWorker(snapshot, task.lam, task.seed, task.epsilon)
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


# Learning ----------------------------------------------------------------------------------------------------


def bce(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Binary cross-entropy of the five cumulative outputs against targets in [0, 1]: the loss of every learner."""
    from torch import nn

    return nn.functional.binary_cross_entropy(pred.clamp(1e-6, 1 - 1e-6), target)


def outcomes(probs: torch.Tensor) -> torch.Tensor:
    """(N, 5) cumulative probabilities (win, win gammon, win backgammon, lose gammon, lose backgammon) to the (N, 6)
    chances of the six outcomes: a single win, a gammon win, a backgammon win, and the same three losses. Each
    difference is clamped at 0 (a target averaged from rollouts with variance reduction can put a gammon a hair
    above its win)."""
    import torch

    win, win_gammon, win_bg, lose_gammon, lose_bg = probs.unbind(1)
    six = torch.stack([win - win_gammon, win_gammon - win_bg, win_bg,
                       1 - win - lose_gammon, lose_gammon - lose_bg, lose_bg], dim=1)
    return six.clamp(min=0)


def outcome_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the six outcomes (``outcomes``) of ``pred`` against those of ``target``, a mean over the
    positions: the loss of a 6-way softmax over the game's results (wildbg's), here on bgai's own head, whose chain
    of conditional probabilities is a full parametrisation of the same six chances. Unlike ``bce`` it weighs each
    gammon and backgammon chance by how often its win or loss happens."""
    t = outcomes(target)
    t = t / t.sum(1, keepdim=True).clamp(min=1e-12)
    return -(t * outcomes(pred).clamp(min=1e-7).log()).sum(1).mean()


#: The supervised learners' losses: ``bce`` (binary cross-entropy of the five cumulative outputs, the default) and
#: ``outcomes`` (``outcome_loss``, the cross-entropy of the six outcomes).
LOSSES = {"bce": bce, "outcomes": outcome_loss}


def pair_loss(pred: torch.Tensor, target: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
    """Mean squared error of the cubeless equities of ``pred`` about the mean of their group, against the same of
    ``target`` (both (n, 5) probabilities; ``groups`` (n,) int64): the error of the differences between the
    members of a group, whatever error they share. A group of one adds nothing (its centred values are 0)."""
    import torch

    _, index = torch.unique(groups, return_inverse=True)
    k = int(index.max()) + 1 if len(index) else 0
    count = torch.zeros(k).index_add_(0, index, torch.ones(len(index)))

    def centred(values: torch.Tensor) -> torch.Tensor:
        return values - (torch.zeros(k).index_add_(0, index, values) / count)[index]

    return ((centred(equity(pred)) - centred(equity(target))) ** 2).mean()


def inputs(model: EquityModel, boards: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """The encoded positions and their phases, as ``model`` reads them."""
    import torch

    return (torch.from_numpy(encoding.encode(boards, version=model.encoder_version)),
            torch.from_numpy(classify(boards)))


class Learner:
    """Owns a model and its optimizer (Adam, or AdamW: decoupled ``weight_decay``); trains on experience with
    ``loss`` (``LOSSES``: binary cross-entropy on the 5 outputs, or the cross-entropy of the 6 outcomes)."""

    def __init__(self, model: EquityModel, lr: float, batch_size: int, epochs: int, optimizer: str = "adam",
                 weight_decay: float = 0.0, loss: str = "bce"):
        import torch

        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {loss!r}")
        self.loss = LOSSES[loss]
        self.model = model
        self.optimizer: torch.optim.Optimizer
        if optimizer == "adamw":
            self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
        elif optimizer == "adam":
            self.optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
        else:
            raise ValueError(f"optimizer must be 'adam' or 'adamw', got {optimizer!r}")
        self.batch_size = batch_size
        self.epochs = epochs

    def update(self, experience: Experience, rng: np.random.Generator, lr_schedule=None,
               progress: bool = False, groups: np.ndarray | None = None, pairs: float = 0.0,
               pair_targets: np.ndarray | None = None) -> float:
        """Train on the positions and targets of ``experience`` for ``epochs`` shuffled passes; returns the mean
        loss. ``lr_schedule`` ``(start, end)`` moves the learning rate linearly from start to end over these
        passes (else it stays as it is).

        ``groups`` (N,) int: positions that are plays of one decision share a number (-1: none); with ``pairs``
        above 0 a decision's positions are shuffled together into the same minibatch, and the loss adds ``pairs``
        times the mean squared error of their cubeless equities about their decision's mean (``pair_loss``): the
        differences between a decision's plays, which choosing a play reads, learned as such. ``pair_targets``
        (N, 5): the targets whose differences that loss reads, where they are not ``experience.targets``."""
        import torch
        from tqdm.auto import tqdm

        self.model.train()
        x, phase = inputs(self.model, experience.boards)
        y = torch.from_numpy(experience.targets).clamp(0, 1)
        if pair_targets is not None and np.shape(pair_targets) != tuple(y.shape):
            raise ValueError(f"pair_targets must have the targets' shape {tuple(y.shape)}, got "
                             f"{np.shape(pair_targets)}")
        y_pairs = y if pair_targets is None else torch.from_numpy(np.asarray(pair_targets, np.float32)).clamp(0, 1)
        decision = None  # with pairs: each position's decision, numbered 0.. (a group of its own where none)
        if groups is not None and pairs > 0:
            numbers = np.asarray(groups, dtype=np.int64)
            if numbers.shape != (len(x),):
                raise ValueError(f"groups must hold one number a position ({len(x)}), got shape {numbers.shape}")
            numbers = np.where(numbers >= 0, numbers, numbers.max(initial=0) + 1 + np.arange(len(numbers)))
            decision = np.unique(numbers, return_inverse=True)[1].reshape(-1)
        steps = self.epochs * -(-len(x) // self.batch_size)
        losses: list[float] = []
        with tqdm(total=steps, unit="batch", disable=not progress, desc="training", leave=False) as bar:
            for _ in range(self.epochs):
                if decision is not None:  # the decisions in a random order, each one's plays together
                    rank = rng.permutation(int(decision.max()) + 1)[decision]
                    order = torch.from_numpy(np.argsort(rank, kind="stable"))
                else:
                    order = torch.from_numpy(rng.permutation(len(x)))
                for start in range(0, len(x), self.batch_size):
                    if lr_schedule is not None:
                        lr = lr_schedule[0] + (lr_schedule[1] - lr_schedule[0]) * len(losses) / steps
                        for group in self.optimizer.param_groups:
                            group["lr"] = lr
                    batch = order[start:start + self.batch_size]
                    pred = self.model(x[batch], phase[batch])
                    loss = self.loss(pred, y[batch])
                    if decision is not None:
                        loss = loss + pairs * pair_loss(pred, y_pairs[batch],
                                                        torch.from_numpy(decision[batch.numpy()]))
                    self.optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    self.optimizer.step()
                    losses.append(loss.item())
                    bar.update()
        self.model.eval()
        return float(np.mean(losses)) if losses else float("nan")
