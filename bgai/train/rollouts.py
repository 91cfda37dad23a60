"""The ``rollouts`` training method: supervised learning on positions each labelled by a rollout of an earlier network
(``bgai label``, ``bgai.train.labels``: shards of the bot's own positions, 72 trials truncated at 7 plies with
variance reduction), as GNU Backgammon's, wildbg's and Open Sage's later nets learned: ``epochs`` passes (Adam or
AdamW, the learning rate falling linearly from ``lr`` to ``lr_end``), a share of the positions held out by a hash
of the board measuring the model after each; the best epoch is kept. ``ply1`` mixes in the labelling network's own
1-ply values. A position in several shards is learned once, its labels averaged. With shards of a decision's plays
side by side (``bgai label --plays``), ``pairs`` adds a loss on the differences between a decision's plays
(``bgai.train.learner.pair_loss``), the comparisons choosing a play makes.
"""

from __future__ import annotations

import json
import time
from typing import NamedTuple

import numpy as np
import torch

from bgai.core.errors import BgaiError
from bgai.core.files import write_json, write_npz
from bgai.core.movegen import afterstates
from bgai.core.phase import BEAROFF, OVER, classify
from bgai.eval.bot import Bot
from bgai.eval.checkpoint import load_checkpoint, model_from_checkpoint, model_payload, save_checkpoint
from bgai.eval.network import EquityModel, ModelSnapshot
from bgai.train.config import RolloutStage
from bgai.train.learner import Learner, evaluation_error, inputs, linear_lr
from bgai.train.state import Run


def held_out(boards: np.ndarray, share: float) -> np.ndarray:
    """(N,) True for the positions held out for validation: a hash of each board below ``share``, so a position
    is held out (or not) whatever set it is in, as shards are added."""
    weights = np.random.default_rng(20261203).integers(1, 2**31, size=boards.shape[1], dtype=np.int64)
    h = ((boards.astype(np.int64) + 16) @ weights) % HOLD_PRIME
    return h < share * HOLD_PRIME


HOLD_PRIME = 1_000_003


class Labelled(NamedTuple):
    """The distinct labelled boards of a rollouts stage (``labelled_positions``): ``labels`` their rollouts' and
    ``ply1`` the labelling network's 1-ply probabilities (N, 5), and ``decision`` (N,) the decision each is a play
    of (a number shared by the plays of one sampled position's roll in a ``--plays`` shard; -1 for none)."""

    boards: np.ndarray
    labels: np.ndarray
    ply1: np.ndarray
    decision: np.ndarray


def labelled_positions(folders: str, picks: str = "all") -> Labelled:
    """The distinct boards of the label shards in ``folders`` (comma separated) with their rollout labels and the
    labelling network's 1-ply values, each averaged over the copies of a board (a position met in several shards,
    as the first few of a game are), and the decision of its first copy; ``picks``: only those picked that way
    (``LABEL_PICKS``)."""
    from bgai.train.labels import load_labels

    sets = [load_labels(folder.strip()) for folder in folders.split(",") if folder.strip()]
    if not sets:
        raise BgaiError("a rollouts stage needs at least one folder of label shards (labels = ...)")
    if picks != "all":
        sets = [s.subset(s.picked == (1 if picks == "disagreement" else 0)) for s in sets]
    boards = np.concatenate([s.boards for s in sets])
    probs = np.concatenate([s.probabilities for s in sets]).astype(np.float64)
    ply1 = np.concatenate([s.ply1 for s in sets]).astype(np.float64)
    # a decision is a sampled position of one shard of one folder: number them apart
    keys = np.concatenate([np.where(s.decision >= 0, (s.shard.astype(np.int64) * 1_000_000 + s.decision) * len(sets)
                                    + k, -1) for k, s in enumerate(sets)])
    distinct, first, inverse = np.unique(boards, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    counts = np.bincount(inverse, minlength=len(distinct))[:, None]

    def mean(values):
        return np.stack([np.bincount(inverse, values[:, k], minlength=len(distinct)) for k in range(5)], 1) / counts

    decision = keys[first]
    numbered = decision >= 0
    decision[numbered] = np.unique(decision[numbered], return_inverse=True)[1].reshape(-1)
    return Labelled(distinct, mean(probs).astype(np.float32), mean(ply1).astype(np.float32), decision)


def anchor_positions(model: EquityModel, boards: np.ndarray, share: float, seed: int, plays: str = "sample"
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Anchor positions and their targets (``RolloutStage.anchor``), ``model``'s own 0-ply probabilities, live
    positions only and no bear-offs. ``plays="sample"``: about ``share`` times ``len(boards)`` of them, a seeded
    sample of the plays of a seeded roll of each board. ``plays="best"``: for each of ``share`` seeded rolls of
    each board, the play ``model`` chooses at 0-ply (a ``Bot`` on it, bear-offs from the database): the positions
    a 1-ply lookahead of the board reads, whose values a 1-ply choice compares."""
    if plays == "best":
        after = _chosen_plays(model, boards, int(share), seed)
    else:
        rng = np.random.default_rng([seed, 37])
        dice = rng.integers(1, 7, size=(len(boards), 2))
        moves = afterstates(boards, dice)
        after = moves.after[~np.isin(classify(moves.after), (OVER, BEAROFF))]
        want = min(len(after), int(round(share * len(boards))))
        after = after[np.sort(rng.choice(len(after), want, replace=False))]
    model.eval()
    probs = np.empty((len(after), 5), np.float32)
    with torch.inference_mode():
        for start in range(0, len(after), 65536):  # (in parts: millions of anchors at once would fill the memory)
            x, phase = inputs(model, after[start:start + 65536])
            probs[start:start + 65536] = model(x, phase).numpy()
    return after, probs


def _chosen_plays(model: EquityModel, boards: np.ndarray, rolls: int, seed: int, part: int = 16384) -> np.ndarray:
    """For each of ``rolls`` seeded rolls of each board, the play ``model`` chooses at 0-ply, live positions only
    and no bear-offs (boards in parts of ``part``: a roll has some twenty plays)."""
    rng = np.random.default_rng([seed, 37, rolls])
    bot = Bot(ModelSnapshot.of(model))
    chosen = []
    for start in range(0, len(boards), part):
        expanded = np.repeat(boards[start:start + part], rolls, axis=0)
        chosen.append(bot.choose_many(expanded, rng.integers(1, 7, size=(len(expanded), 2))))
    after = np.concatenate(chosen) if chosen else np.zeros((0, boards.shape[1]), np.int8)
    return after[~np.isin(classify(after), (OVER, BEAROFF))]


def _stage_anchors(state: Run, stage: RolloutStage, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The stage's anchors, valued by the model as the stage found it: drawn before its first epoch and kept in
    ``RUN_DIR/anchors-STAGE.npz``, which a resumed stage reads back."""
    path = state.run_dir / f"anchors-{stage.name}.npz"
    if path.exists():
        with np.load(path) as saved:
            return saved["boards"], saved["targets"]
    if state.step:
        raise BgaiError(f"{path} is missing: the anchors of stage {stage.name} are valued by the model as the stage "
                        f"began; resume from a run folder that has it, or begin the stage again")
    anchors, targets = anchor_positions(state.model, boards, stage.anchor, state.config.seed, stage.anchor_plays)
    write_npz(path, boards=anchors, targets=targets)
    return anchors, targets


def train(state: Run, stage: RolloutStage) -> None:
    """Supervised epochs on rollout labels; ``state.step`` counts finished epochs. After each, the held-out
    positions measure the model; the best epoch's weights are kept (``RUN_DIR/best-STAGE.pt``) and are the
    model when the stage ends."""
    boards, labels, ply1, decision = labelled_positions(stage.labels, stage.picks)
    hold = held_out(boards, stage.validation)
    if hold.all() or not hold.any():
        raise BgaiError(f"stage {stage.name}: {len(boards)} labelled positions are too few to hold {stage.validation} "
                        f"of them out")
    targets = ((1 - stage.ply1) * labels + stage.ply1 * ply1).astype(np.float32)
    train_boards, train_targets = boards[~hold], targets[~hold]
    pair_targets = labels[~hold].astype(np.float32) if stage.pairs_rollouts else None
    groups = decision[~hold]
    if stage.pairs > 0 and (np.bincount(groups[groups >= 0]) < 2).all():
        raise BgaiError(f"stage {stage.name}: pairs needs label shards of a decision's plays side by side (bgai "
                        f"label --plays), and {stage.labels} has none")
    if stage.anchor > 0:
        anchors, anchor_targets = _stage_anchors(state, stage, boards[~hold])
        train_boards = np.concatenate([train_boards, anchors])
        train_targets = np.concatenate([train_targets, anchor_targets])
        if pair_targets is not None:  # (anchors are no decision's plays: the differences' loss skips them)
            pair_targets = np.concatenate([pair_targets, anchor_targets])
        groups = np.concatenate([groups, np.full(len(anchors), -1)])
    val_boards, val_labels = boards[hold], labels[hold]
    best_path = state.run_dir / f"best-{stage.name}.pt"
    log_path = state.run_dir / f"{stage.name}-epochs.json"
    epochs = json.loads(log_path.read_text()) if state.step and log_path.exists() else []
    learner = Learner(state.model, stage.lr, stage.batch_size, 1, stage.optimizer, stage.weight_decay, stage.loss,
                      state.device, state.config.learner_precision)
    if state.optimizer_state is not None:
        learner.load_optimizer_state(state.optimizer_state)
    if not epochs:
        start = evaluation_error(state.model, val_boards, val_labels)
        epochs.append({"epoch": 0, **start})
        if state.progress:
            print(f"{stage.name}: {len(train_boards):,} positions to learn, {len(val_boards):,} held out; "
                  f"held-out equity error {start['equity_mae']:.4f} before", flush=True)
    while state.step < stage.epochs:
        e = state.step
        lr = (linear_lr(stage.lr, stage.lr_end, e / stage.epochs),
              linear_lr(stage.lr, stage.lr_end, (e + 1) / stage.epochs))
        started = time.perf_counter()
        loss = learner.fit(train_boards, train_targets, state.rng, lr=lr, progress=state.progress, groups=groups,
                           pairs=stage.pairs, pair_targets=pair_targets)
        state.seconds += time.perf_counter() - started
        after = evaluation_error(state.model, val_boards, val_labels)
        state.step += 1
        best = min((r for r in epochs if r["epoch"] > 0), key=lambda r: r["equity_mae"], default=None)
        if best is None or after["equity_mae"] < best["equity_mae"]:
            save_checkpoint(best_path, {**model_payload(state.model), "games": state.games, "seconds": state.seconds,
                                        "validation": after, "step": state.step})
        epochs.append({"epoch": state.step, f"train_{stage.loss}": loss, "lr": lr[1], **after})
        write_json(log_path, epochs)
        w = state.writer
        w.add_scalar(f"{stage.name}/loss/train_{stage.loss}", loss, state.step)
        for key, value in after.items():
            w.add_scalar(f"{stage.name}/loss/validation_{key}", value, state.step)
        if state.progress:
            print(f"{stage.name} epoch {state.step}: train {stage.loss} {loss:.4f}, held-out equity error "
                  f"{after['equity_mae']:.4f} (bce {after['bce']:.4f})", flush=True)
        if state.step % stage.bench_every == 0 or state.step == stage.epochs:
            state.bench(stage.name, state.step)
        state.save(learner.optimizer)
    if best_path.exists():
        kept = load_checkpoint(best_path)
        state.model.load_state_dict(model_from_checkpoint(kept).state_dict())
        state.save()
        if state.progress:
            print(f"{stage.name}: keeping epoch {kept['step']} (held-out equity error "
                  f"{kept['validation']['equity_mae']:.4f})", flush=True)
