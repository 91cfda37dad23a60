"""The ``lookahead`` training method: generations of supervised learning on the model's own search.

Each generation: (1) the model plays ``games`` self-play games (0-ply, with ``epsilon`` exploration) and
``positions`` of the positions they pass through are kept (bear-offs and finished games left out: the bear-off
database answers those); (2) a frozen copy of the model evaluates each at ``plies`` of lookahead (``Bot.lookahead``:
the mean over the 21 rolls of the position after the play it would choose, bear-offs at the leaves from the bear-off
database, finished games exact); (3) the model is trained on those targets and on the previous ``buffer - 1``
generations' (minibatch Adam, the learning rate falling linearly from ``lr`` to ``lr_end`` within each
generation, or once over the stage with ``lr_schedule = "stage"``), a held-out share measuring its error. So
generation k + 1 learns what generation k's lookahead saw; this is how the strongest engines trained their nets,
with their own earlier nets. A stage may name a ``teacher``, an earlier bgai network (say the TD-trained one),
that plays the games and computes the targets in (1) and (2) instead: a new model's first lessons, from a
network bgai trained itself.

With ``lam`` above 0 the targets follow the games too (``trace_returns``): the positions are sampled with the order
each game passed through them, and each is trained towards its lookahead value plus the λ-discounted lookahead
corrections of the positions that followed it in its game, the dice's luck removed. A 1-ply target carries what the
network learns about the game's end back one ply a generation; λ near 1 carries it all the way in one, at the price
of noisier targets (each position's corrections are those of one game's future).

With ``rollouts`` above 0 that share of each part's positions, those whose lookahead value moved farthest from the
model's own 0-ply value (where the network is least sure of itself; or with ``rollout_pick = "cube"`` those whose
money cube decisions are closest), get rollout targets instead: each is rolled out by the frozen model at 0-ply on
``rollout_trials`` trials, variance-reduced, truncated after ``rollout_truncate`` plies
(``bgai.eval.rollout.rollout_values``). The model then learns from its own rollouts, as gnubg's, wildbg's and Open
Sage's later nets learned from their earlier nets' rollouts.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bgai.core.errors import BgaiError
from bgai.core.files import write_npz
from bgai.eval import bearoff
from bgai.eval.bot import PRUNE_KEEP, Bot, Ensemble, load_bot, load_pruner
from bgai.eval.checkpoint import load_checkpoint, model_from_checkpoint, model_payload, save_checkpoint
from bgai.eval.network import ModelSnapshot, bf16_supported, equity, flip
from bgai.train.config import LookaheadStage
from bgai.train.learner import Learner, evaluation_error
from bgai.train.selfplay import sample_positions, sample_trajectories
from bgai.train.state import Run


def trace_returns(lookahead: np.ndarray, values: np.ndarray, game: np.ndarray, cut: np.ndarray,
                  lam: float) -> np.ndarray:
    """(M, 5) λ-returns of the M positions of self-play trajectories (each on-roll view), from their lookahead
    values and their 0-ply values (both (M, 5), the same network's).

    Position t of a game gets

        G_t = L(s_t) + λ (flip(G_{t+1}) - flip(V(s_{t+1})))

    where L is the lookahead value, V the 0-ply value and flip turns probabilities to the other side. At 1-ply,
    L(s_t) is the mean over the rolls of flip(V) of the play chosen for each, and s_{t+1} is the play of the roll
    that came, so over the dice E[G_t] = (1 - λ) L(s_t) + λ E[flip(G_{t+1})], the λ-return of TD(λ) with the
    lookahead as its bootstrap, while the roll's luck (flip(V(s_{t+1})) - L(s_t)) is subtracted out: unrolled,
    G_t is the lookahead value plus the λ-discounted corrections (L - V, each turned to s_t's side) of the
    positions that followed. λ = 0 is the lookahead alone; λ = 1 carries the game's end back to its start in one
    generation (in expectation the result of the network's own play). The trace stops (no correction) after a
    game's last position in the trajectory (its bear-off or end comes next, valued exactly or by the bear-off
    database at every depth), and where ``cut`` is set: a random move was made there (the position that followed
    is not the network's choice), or the position after it has no lookahead value. ``game``: each position's
    game; a game's positions are consecutive, in order."""
    lookahead, values = lookahead.astype(np.float64), values.astype(np.float64)
    n = len(game)
    follows = np.zeros(n, dtype=bool)
    follows[:-1] = (game[1:] == game[:-1]) & ~cut[:-1]
    # Positions from the end of their trace: the last one first, then the ones before it, a step at a time.
    trace_end = np.minimum.accumulate(np.where(follows, n, np.arange(n))[::-1])[::-1]
    from_end = trace_end - np.arange(n)
    returns = lookahead.copy()
    for k in range(1, int(from_end.max(initial=0)) + 1):
        rows = np.flatnonzero(from_end == k)
        returns[rows] += lam * (flip(returns[rows + 1]) - flip(values[rows + 1]))
    return returns


@dataclass(frozen=True)
class TargetsTask:
    """One part of a generation's target computation, as a worker gets it: the part's ``boards``, the lookahead's
    ``plies`` (``deeper``: the share searched one ply deeper), ``bf16`` passes, whether the network's own 0-ply
    ``values`` come back too (for ``trace_returns``), and where ``rollouts`` and ``pruning`` apply."""

    boards: np.ndarray
    plies: int
    deeper: float
    bf16: bool
    values: bool
    rollouts: RolloutTargets
    pruning: Pruning
    others: tuple[ModelSnapshot, ...] = ()


def _targets_task(snapshot: ModelSnapshot, task: TargetsTask) -> dict[str, np.ndarray]:
    """One part of a generation's target computation (a worker's share, or this process's): the ``targets``,
    and with ``values`` the network's own 0-ply ``values`` too (for ``trace_returns``), in the same precision."""
    return _part_targets(snapshot, task.boards, task.plies, task.deeper, task.bf16, task.values, task.rollouts,
                         task.pruning, task.others)


@dataclass(frozen=True)
class RolloutTargets:
    """Where a part's targets are rollouts (``LookaheadStage.rollouts``): the ``share`` of its positions that
    ``pick`` names (``ROLLOUT_PICKS``), each rolled out on ``trials`` trials truncated after ``truncate`` plies
    (0: played out)."""

    share: float = 0.0
    trials: int = 72
    truncate: int = 7
    pick: str = "moved"

    @classmethod
    def of(cls, stage: LookaheadStage) -> RolloutTargets:
        return cls(stage.rollouts, stage.rollout_trials, stage.rollout_truncate, stage.rollout_pick)


def rollout_rows(boards: np.ndarray, values: np.ndarray, targets: np.ndarray, count: int, pick: str) -> np.ndarray:
    """The ``count`` rows of ``boards`` a generation rolls out, from the model's 0-ply ``values`` and its lookahead
    ``targets`` (both (N, 5), on-roll view): those whose target moved farthest from the value (``pick`` "moved"),
    or those whose money cube decisions are closest by the value (``pick`` "cube", ``bgai.core.cube.money_margin``).
    Ties keep the boards' order."""
    if pick == "cube":
        from bgai.core.cube import money_margin

        return np.argsort(money_margin(values, boards), kind="stable")[:count]
    return np.argsort(-np.abs(equity(targets) - equity(values)), kind="stable")[:count]


@dataclass(frozen=True)
class Pruning:
    """The pruning net of a lookahead's replies (``LookaheadStage.pruner``; ``Bot.replies``): its weights and the
    plays per roll it leaves the network. ``net`` None: every play goes through the network."""

    net: ModelSnapshot | None = None
    keep: int = PRUNE_KEEP

    @classmethod
    def of(cls, stage: LookaheadStage) -> Pruning:
        return cls(*load_pruner(stage.pruner)) if stage.pruner else cls()


def _part_targets(model, boards: np.ndarray, plies: int, deeper: float, bf16: bool, values: bool,
                  rollouts: RolloutTargets = RolloutTargets(), pruning: Pruning = Pruning(),
                  others: tuple = ()) -> dict[str, np.ndarray]:
    out = {"targets": lookahead_targets(model, boards, plies, deeper, bf16, rollouts, pruning,
                                        others).astype(np.float32)}
    if values:
        out["values"] = _target_bot(ModelSnapshot.of(model), others, bf16=bf16).probabilities(boards)
    return out


def _target_bot(model, others: tuple = (), **settings) -> Bot:
    """The bot of ``model`` that computes targets, an ``Ensemble`` with ``others``."""
    return Ensemble(model, others, **settings) if others else Bot(model, **settings)


def lookahead_targets(model, boards: np.ndarray, plies: int, deeper: float = 0.0, bf16: bool = False,
                      rollouts: RolloutTargets = RolloutTargets(), pruning: Pruning = Pruning(),
                      others: tuple = ()) -> np.ndarray:
    """(N, 5) probabilities of ``boards`` (on-roll view) at ``plies`` of lookahead by a bot of ``model`` (an
    ``EquityModel`` or its ``ModelSnapshot``; either way the bot evaluates with the numpy pass, as in play, about
    twice as fast as torch's small batches, or in torch with ``bf16``).

    With ``deeper`` > 0, that share of the boards, those whose ``plies`` value moved farthest (in cubeless equity)
    from the model's own 0-ply value, are evaluated at ``plies + 1`` instead: the search goes deeper where the
    network and its lookahead disagree most. With ``rollouts.share`` > 0 that share of the boards, those that moved
    farthest or those whose cube decisions are closest (``rollouts.pick``, ``rollout_rows``), are rolled out
    instead (``bgai.eval.rollout.rollout_values``, by the model at 0-ply, each part's dice seeded by its boards),
    whatever ``deeper`` gave them. With ``bf16`` the network's passes run in bfloat16 (see
    ``Bot``; never in the rollouts). With a ``pruning`` net the lookahead's replies (and the rollouts' variance
    reduction) are chosen among the plays it ranks best (``Bot.replies``). With ``others`` (networks) every
    network value, lookahead and rollouts alike, is the mean of ``model``'s and theirs (``Ensemble``); at 0
    ``plies`` the targets are that mean itself."""
    model = ModelSnapshot.of(model)
    bot = _target_bot(model, others, plies=plies, bf16=bf16, pruner=pruning.net, prune=pruning.keep)
    targets = bot.lookahead(boards, plies)
    count = int(round(deeper * len(boards)))
    rolled = int(round(rollouts.share * len(boards)))
    if count or rolled:
        values = bot.probabilities(boards)
        # Both picks are made before the deeper values replace any target; each only where it is used
        rows = rollout_rows(boards, values, targets, rolled, rollouts.pick) if rolled else None
        if count:
            deepened = rollout_rows(boards, values, targets, count, "moved")
            targets[deepened] = bot.lookahead(boards[deepened], plies + 1)
        if rows is not None:
            import zlib

            from bgai.eval.rollout import rollout_values

            seed = zlib.crc32(np.ascontiguousarray(boards).tobytes())
            roller = _target_bot(model, others, pruner=pruning.net, prune=pruning.keep)
            targets[rows] = rollout_values(roller, boards[rows], trials=rollouts.trials,
                                           truncate=rollouts.truncate or None, seed=seed)
    return targets


def _generation_folder(state: Run, stage: LookaheadStage, generation: int) -> Path:
    return state.run_dir / "data" / f"{stage.name}-{generation:03d}"


def _generation_data(state: Run, stage: LookaheadStage, generation: int) -> Path:
    """The folder of one generation's data; its positions and targets are made (or found) there."""
    from tqdm.auto import tqdm

    folder = _generation_folder(state, stage, generation)
    positions = folder / "positions.npz"
    source = model_from_checkpoint(load_checkpoint(stage.teacher)) if stage.teacher else state.model
    if not positions.exists():
        first_game = state.games
        args = (source, stage.games, first_game, state.config.seed, stage.epsilon, state.rng, stage.positions,
                state.pool, state.progress)
        data: dict = sample_trajectories(*args) if stage.lam > 0 else {"boards": sample_positions(*args)}
        write_npz(positions, **data, first_game=first_game)
        state.games += stage.games
        state.save()
    with np.load(positions) as stored:
        boards, traced = stored["boards"], "sequence" in stored.files  # as _traced, the file opened once
    parts = range(0, len(boards), stage.part)
    bf16 = stage.precision == "bf16" and bf16_supported()
    frozen = ModelSnapshot.of(copy.deepcopy(source).eval())
    others = tuple(load_bot(path, cube_efficiency=False).model for path in stage.ensemble_paths())
    pruning = Pruning.of(stage)
    bar = tqdm(total=len(boards), unit="pos", disable=not state.progress,
               desc=f"{state.config.run_name}/{stage.name} gen {generation} {stage.plies}-ply targets"
                    + (" (bf16)" if bf16 else ""))

    def path(i: int) -> Path:
        return folder / f"targets-{i:04d}.npz"

    if state.pool is None:
        for i, lo in enumerate(parts):
            if not path(i).exists():
                started = time.perf_counter()
                part = _part_targets(frozen, boards[lo:lo + stage.part], stage.plies, stage.deeper, bf16, traced,
                                     RolloutTargets.of(stage), pruning, others)
                write_npz(path(i), **part)
                elapsed = time.perf_counter() - started
                state.seconds += elapsed
                state.writer.add_scalar(f"{stage.name}/perf/targets_per_s", len(part["targets"]) / elapsed,
                                        state.games)
            bar.update(min(stage.part, len(boards) - lo))
    else:
        # The workers compute the missing parts; this process writes each as it comes, so a killed run keeps
        # every finished part, whichever worker finished it.
        missing = [i for i in range(len(parts)) if not path(i).exists()]
        bar.update(len(boards) - sum(len(boards[parts[i]:parts[i] + stage.part]) for i in missing))
        bearoff.database()  # built here once if it is not on disk yet, rather than by every worker at once
        tasks = [TargetsTask(boards[parts[i]:parts[i] + stage.part], stage.plies, stage.deeper, bf16, traced,
                             RolloutTargets.of(stage), pruning, others) for i in missing]
        started, last, done = time.perf_counter(), time.perf_counter(), 0
        for k, part in state.pool.imap(_targets_task, tasks, frozen):
            write_npz(path(missing[k]), **part)
            now = time.perf_counter()
            state.seconds += now - last
            last, done = now, done + len(part["targets"])
            state.writer.add_scalar(f"{stage.name}/perf/targets_per_s", done / (now - started), state.games)
            bar.update(len(part["targets"]))
    bar.close()
    return folder


def _traced(positions: Path) -> bool:
    """Whether a generation's positions file holds the games' trajectories (``sample_trajectories``)."""
    with np.load(positions) as stored:
        return "sequence" in stored.files


def _stored_arrays(path: Path) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file, read, the file closed after."""
    with np.load(path) as stored:
        return {name: stored[name] for name in stored.files}


def load_generation(folder: Path, lam: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """A generation's positions and the targets the model learns for them: the lookahead values, or with
    trajectories (a stage with ``lam`` above 0) each position's mean ``trace_returns`` over its occurrences."""
    positions = _stored_arrays(folder / "positions.npz")
    parts = [_stored_arrays(p) for p in sorted(folder.glob("targets-*.npz"))]
    boards, targets = positions["boards"], np.concatenate([p["targets"] for p in parts]) if parts else None
    if targets is None or len(targets) != len(boards):
        raise BgaiError(f"{folder}: {0 if targets is None else len(targets)} targets for {len(boards)} positions")
    if "sequence" not in positions:
        return boards, targets
    values = np.concatenate([p["values"] for p in parts])
    row = positions["sequence"]
    kept = row >= 0
    cut = positions["explored"].copy()
    cut[:-1] |= ~kept[1:]
    returns = trace_returns(np.where(kept[:, None], targets[row], 0), np.where(kept[:, None], values[row], 0),
                            positions["game"], cut, lam)
    counts = np.bincount(row[kept], minlength=len(boards))
    means = np.stack([np.bincount(row[kept], returns[kept, k], minlength=len(boards)) for k in range(5)], axis=1)
    return boards, (means / counts[:, None]).astype(np.float32)


def train(state: Run, stage: LookaheadStage) -> None:
    """Generations of lookahead targets and supervised learning; ``state.step`` counts finished generations."""
    while state.step < stage.generations:
        generation = state.step
        recent = [_generation_folder(state, stage, g) for g in range(max(0, generation - stage.buffer + 1),
                                                                      generation + 1)]
        for folder in recent:
            positions = folder / "positions.npz"
            if folder != recent[-1] and not positions.exists():  # e.g. resumed on another machine from a checkpoint
                raise BgaiError(f"{folder} is missing: generation {generation} learns the data of the "
                                f"{stage.buffer - 1} generation(s) before it (buffer = {stage.buffer}). Copy that "
                                f"folder there, or resume with --buffer 1 to learn this generation's data alone")
            if stage.lam > 0 and positions.exists() and not _traced(positions):
                raise BgaiError(f"{positions} was sampled without the games' trajectories that lam = {stage.lam} "
                                f"needs: a stage's lam stays as its run began (or resume with --buffer 1 after a "
                                f"finished generation)")
        _generation_data(state, stage, generation)
        data = [load_generation(f, stage.lam) for f in recent]
        held = max(1, int(len(data[-1][0]) * stage.validation))
        val_boards, val_targets = data[-1][0][:held], data[-1][1][:held]
        data[-1] = (data[-1][0][held:], data[-1][1][held:])
        boards = np.concatenate([b for b, _ in data])
        targets = np.concatenate([t for _, t in data])
        before = evaluation_error(state.model, val_boards, val_targets)
        started = time.perf_counter()
        learner = Learner(state.model, stage.lr, stage.batch_size, stage.epochs, loss=stage.loss,
                          device=state.device, precision=state.config.learner_precision)
        loss = learner.fit(boards, targets, state.rng, lr=stage.generation_rates(generation),
                           progress=state.progress)
        state.seconds += time.perf_counter() - started
        after = evaluation_error(state.model, val_boards, val_targets)
        state.step += 1
        w, x = state.writer, state.step
        w.add_scalar(f"{stage.name}/loss/train_{stage.loss}", loss, x)
        for key in after:
            w.add_scalar(f"{stage.name}/loss/validation_{key}_before", before[key], x)
            w.add_scalar(f"{stage.name}/loss/validation_{key}", after[key], x)
        w.add_scalar(f"{stage.name}/data/buffer_positions", len(boards), x)
        if state.step % stage.bench_every == 0 or state.step == stage.generations:
            pubeval = state.bench(stage.name, x)
            if state.progress:
                versus = (f"; v pubeval {pubeval['ppg']:+.3f} ± {pubeval['ppg_se']:.3f} "
                          f"({pubeval['games']:,} duplicate games)" if pubeval["games"] else "")
                print(f"{stage.name} generation {generation}: validation equity error {before['equity_mae']:.4f} "
                      f"-> {after['equity_mae']:.4f}{versus}", flush=True)
        # Each generation's network (or every keep_every-th, and the last) stays playable (load_bot), to compare
        # generations head to head.
        if state.step % stage.keep_every == 0 or state.step == stage.generations:
            save_checkpoint(state.run_dir / "generations" / f"{stage.name}-{generation:03d}.pt",
                            {**model_payload(state.model), "games": state.games, "seconds": state.seconds,
                             "validation": after})
        state.save()
