"""Training runs: one model improved by a sequence of named stages, resumable, with TensorBoard curves.

A run's config (a TOML file; ``RunConfig``) says what model it trains (encoder version, hidden layers, one net for
every phase or one each for contact and race positions, optionally the weights it starts from) and lists its
stages (the phases of the run) in order, each a table ``[[stage]]`` with a ``name`` and a ``method``:

``td`` (``TDStage``)
    TD(λ) self-play (``bgai.train.td``): the model plays itself and learns from the λ-returns of its games.
``rollouts`` (``RolloutStage``)
    Supervised learning on positions each labelled by a rollout of an earlier network (``bgai label``,
    ``bgai.train.labels``: shards of the bot's own positions, 72 trials truncated at 7 plies with variance reduction),
    as GNU Backgammon's, wildbg's and Open Sage's later nets learned: ``epochs`` passes (Adam or AdamW, the learning
    rate falling linearly from ``lr`` to ``lr_end``), a share of the positions held out by a hash of the board
    measuring the model after each; the best epoch is kept. ``ply1`` mixes in the labelling network's own 1-ply
    values. A position in several shards is learned once, its labels averaged. With shards of a decision's plays
    side by side (``bgai label --plays``), ``pairs`` adds a loss on the differences between a decision's plays
    (``bgai.train.td.pair_loss``), the comparisons choosing a play makes.
``lookahead`` (``LookaheadStage``)
    Generations of supervised learning on the model's own search. Each generation: (1) the model plays
    ``games`` self-play games (0-ply, with ``epsilon`` exploration) and ``positions`` of the positions they pass
    through are kept (bear-offs and finished games left out: the bear-off database answers those); (2) a frozen
    copy of the model evaluates each at ``plies`` of lookahead (``Bot.lookahead``: the mean over the 21 rolls of
    the position after the play it would choose, bear-offs at the leaves from the bear-off database, finished
    games exact); (3) the model is trained on those targets and on the previous ``buffer - 1`` generations'
    (minibatch Adam, the learning rate falling linearly from ``lr`` to ``lr_end`` within each generation), a
    held-out share measuring its error. So generation k + 1 learns what generation k's lookahead saw; this is
    how the strongest engines trained their nets, with their own earlier nets. A stage may name a ``teacher``, an
    earlier bgai network (say the TD-trained one), that plays the games and computes the targets in (1) and (2)
    instead: a new model's first lessons, from a network bgai trained itself.

    With ``lam`` above 0 the targets follow the games too (``trace_returns``): the positions are sampled with the
    order each game passed through them, and each is trained towards its lookahead value plus the λ-discounted
    lookahead corrections of the positions that followed it in its game, the dice's luck removed. A 1-ply target
    carries what the network learns about the game's end back one ply a generation; λ near 1 carries it all the
    way in one, at the price of noisier targets (each position's corrections are those of one game's future).

    With ``rollouts`` above 0 that share of each part's positions, those whose lookahead value moved farthest from
    the model's own 0-ply value (where the network is least sure of itself; or with ``rollout_pick = "cube"`` those
    whose money cube decisions are closest), get rollout targets instead: each is
    rolled out by the frozen model at 0-ply on ``rollout_trials`` trials, variance-reduced, truncated after
    ``rollout_truncate`` plies (``bgai.eval.rollout.rollout_values``). The model then learns from its own rollouts,
    as gnubg's, wildbg's and Open Sage's later nets learned from their earlier nets' rollouts.

A config without stages is a one-stage TD run whose stage settings sit at the top level (bgai 0.1's format).

Workers (``bgai.core.workers``). With ``workers`` above 1 (the default: one per core) or ``ray`` set, self-play games,
position sampling, target parts and the benchmarks' games run in worker processes or Ray actors that get a
snapshot of the weights once per round (generation); the learner, the writing of data and checkpoints stay in this
process. A round's games are split between the workers by game id, each task's exploration seeded by the run's
seed and its first game, so a run is reproducible for a seed and worker count (on processes or on Ray alike), and a
worker that dies has its task played again with nothing lost. ``workers = 1`` keeps everything in this process
(its rounds played, as on workers, with the numpy pass on a snapshot of the weights).

Everything a run needs to continue is in ``RUN_DIR/checkpoint.pt`` (written atomically every
``checkpoint_minutes`` and at the end of every stage and generation; each generation's network is also kept,
playable, as ``RUN_DIR/generations/STAGE-NNN.pt``) and, for a lookahead stage, in the generation's
data files under ``RUN_DIR/data/`` (positions, then targets in parts, each written once, atomically). ``run(...,
resume=True)`` continues where it stopped; a killed run loses at most a checkpoint interval of TD games or one
part of target computation. Curves go to ``RUN_DIR/tensorboard`` under ``<stage name>/...``.
"""

from __future__ import annotations

import concurrent.futures
import copy
import dataclasses
import json
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from bgai.core.errors import BgaiError
from bgai.core.files import locked_folder, write_atomically, write_npz
from bgai.core.game import play_duplicate
from bgai.core.movegen import afterstates
from bgai.core.phase import BEAROFF, OVER, classify
from bgai.core.workers import Pool, default_workers, open_pool
from bgai.eval import bearoff, encoding
from bgai.eval.bot import MAX_PLIES, PRUNE_KEEP, Bot, Ensemble, load_bot, load_pruner
from bgai.eval.checkpoint import CheckpointError, load_checkpoint, model_from_checkpoint, model_payload, save_checkpoint
from bgai.eval.network import EquityModel, ModelSnapshot, bf16_supported, check_growth, equity, flip, phase_nets
from bgai.players import HeuristicPlayer, PubevalPlayer
from bgai.train.td import (
    LOSSES,
    Experience,
    Learner,
    SelfPlayWorker,
    Trajectories,
    bce,
    inputs,
    merge_experience,
    play_task,
    split_games,
    trajectories_task,
)


def _field(default, help: str):
    return field(default=default, metadata={"help": help})


@dataclass
class TDStage:
    """TD(λ) self-play (``bgai.train.td``)."""

    name: str = _field("td", "name of the stage (its TensorBoard namespace)")
    method: str = _field("td", "td")
    games: int = _field(20_000, "self-play games to train on in this stage")
    parallel_games: int = _field(256, "games of one round, played at once (split between the workers)")
    lam: float = _field(0.7, "λ of the λ-returns: 0 is TD(0), 1 is Monte Carlo (in a lookahead stage: 0 is the "
                             "lookahead value alone, above 0 trace_returns along the games)")
    lr: float = _field(1e-3, "Adam learning rate at the start of the stage")
    lr_end: float = _field(-1.0, "learning rate reached linearly at the stage's last game (negative: constant lr)")
    batch_size: int = _field(512, "learner minibatch size")
    epochs: int = _field(1, "passes of the learner over each round's experience")
    epsilon: float = _field(0.0, "chance that a self-play move is random (exploration beyond the dice)")
    bench_every: int = _field(5_000, "games between benchmarks against pubeval and the heuristic player")
    hidden: str = _field("", "hidden layer sizes the model grows to when the stage starts (EquityModel.grown: the "
                             "same function, new units and layers silent; comma separated); empty: as it is")
    warmup: int = _field(0, "games over which the learning rate rises linearly from 0 to lr at the stage's start "
                            "(after a growth, so that the new units' first steps are small)")

    def check(self) -> None:
        """``BgaiError`` naming every setting out of its range."""
        problems = _counts(self, "games", "parallel_games", "batch_size", "epochs", "bench_every") \
            + _shares(self, "lam", "epsilon") + _rates(self)
        if not 0 <= self.warmup <= self.games:
            problems.append(f"warmup must be 0..games ({self.games}), got {self.warmup}")
        if self.hidden:
            try:
                _sizes(self.hidden, "hidden")
            except BgaiError as error:
                problems.append(str(error))
        _refuse(self.name, problems)

    def lr_at(self, step: int) -> float:
        """The learning rate at the stage's game ``step``: linear from ``lr`` to ``lr_end`` over the stage (constant
        with a negative ``lr_end``), times the warm-up's share over its first ``warmup`` games."""
        lr = self.lr if self.lr_end < 0 else self.lr + (self.lr_end - self.lr) * step / self.games
        return lr * min(1.0, (step + 1) / self.warmup) if self.warmup else lr


def _counts(stage, *names: str) -> list[str]:
    """The problems of settings that count something, each at least 1."""
    return [f"{name} must be at least 1, got {getattr(stage, name)}" for name in names if getattr(stage, name) < 1]


def _shares(stage, *names: str) -> list[str]:
    """The problems of settings that are shares or weights, each in 0..1."""
    return [f"{name} must be in 0..1, got {getattr(stage, name)}" for name in names
            if not 0 <= getattr(stage, name) <= 1]


def _rates(stage) -> list[str]:
    return [] if stage.lr > 0 else [f"lr must be above 0, got {stage.lr}"]


def _one_of(stage, name: str, choices) -> list[str]:
    """The problem of a setting that must be one of ``choices``, if it is not."""
    value = getattr(stage, name)
    return [] if value in choices else [f"{name} must be one of {', '.join(choices)}, got {value!r}"]


def _loss_field():
    """The ``loss`` setting of the stages that learn by minibatch (lookahead and rollouts)."""
    return _field("bce", "the learner's loss: 'bce' (binary cross-entropy of the five outputs) or 'outcomes' (the "
                         "cross-entropy of the six outcomes, bgai.train.td.outcome_loss)")


def _refuse(name: str, problems: list[str]) -> None:
    if problems:
        raise BgaiError(f"stage {name}: " + "; ".join(problems))


@dataclass
class LookaheadStage:
    """Generations of supervised learning on the model's own lookahead (see the module docstring)."""

    name: str = _field("lookahead", "name of the stage (its TensorBoard namespace)")
    method: str = _field("lookahead", "lookahead")
    generations: int = _field(4, "generations in this stage")
    games: int = _field(4_000, "self-play games a generation samples its positions from")
    positions: int = _field(100_000, "positions kept per generation (at most; distinct ones, drawn at random)")
    plies: int = _field(1, "lookahead of the targets: 1 or 2 (0, with an ensemble: the networks' mean itself)")
    epsilon: float = _field(0.02, "chance that a self-play move is random while sampling positions")
    buffer: int = _field(3, "generations of data the model trains on (this one and the ones before)")
    epochs: int = _field(2, "passes over the buffer per generation")
    lr: float = _field(3e-4, "Adam learning rate at the start of each generation's training")
    lr_end: float = _field(3e-5, "learning rate at the end of each generation's training")
    batch_size: int = _field(256, "minibatch size")
    validation: float = _field(0.05, "share of each generation's positions held out to measure the model's error")
    part: int = _field(20_000, "positions per part of the target computation (the unit of resuming)")
    bench_every: int = _field(1, "generations between benchmarks against pubeval and the heuristic player")
    deeper: float = _field(0.0, "share of each part's positions, those whose lookahead value moved farthest from the "
                                "model's own 0-ply value, evaluated one ply deeper")
    rollouts: float = _field(0.0, "share of each part's positions, those rollout_pick names, whose targets are "
                                  "rollouts instead (bgai.eval.rollout.rollout_values: 0-ply, variance reduction, the "
                                  "frozen model)")
    rollout_pick: str = _field("moved", "which positions the rollouts go to: 'moved' (those whose lookahead value "
                                        "moved farthest from the 0-ply value) or 'cube' (those whose money cube "
                                        "decisions, centered or owned by the player on roll, are closest by the "
                                        "model's own 0-ply value: bgai.core.cube.money_margin)")
    rollout_trials: int = _field(72, "trials of each rollout target")
    rollout_truncate: int = _field(7, "plies a rollout target's trials are played before the network's value ends "
                                      "them (0: played to the end)")
    pruner: str = _field("", "pruning net (an .npz of training/pruner.py) that ranks each reply's plays in the "
                             "targets' lookahead, the network judging only its best few (Bot.replies; as in play, "
                             "about half the time of a 2-ply target); empty: every play goes through the network")
    teacher: str = _field("", "checkpoint of an earlier bgai network that plays the games and computes the targets "
                              "instead of the model being trained (a new model's first lessons); empty: the model")
    ensemble: str = _field("", "checkpoints of other bgai networks, comma separated, whose probabilities the targets "
                               "average with the teacher's (or the model's) wherever they read a network "
                               "(bgai.eval.bot.Ensemble): a teacher of several networks, the games still played "
                               "by the first; empty: none")
    precision: str = _field("fp32", "'fp32', or 'bf16': the targets' network passes in bfloat16 where the CPU has "
                                    "bfloat16 instructions (about 2.3x faster 1-ply targets, within about 0.001 "
                                    "equity of fp32's on average), fp32 elsewhere")
    loss: str = _loss_field()
    lam: float = _field(0.0, "λ of the targets' returns along the self-play games (see trace_returns): 0 is the "
                             "lookahead value alone; above 0 each target adds the λ-discounted lookahead "
                             "corrections of the positions that followed it in its game, carrying the game's end "
                             "back faster than one ply a generation")

    def check(self) -> None:
        """``BgaiError`` naming every setting out of its range (and a pruner that is not a file)."""
        problems = _counts(self, "generations", "games", "positions", "buffer", "epochs", "batch_size", "part",
                           "bench_every") + _shares(self, "epsilon", "lam") + _rates(self)
        if self.plies not in ((0, 1, 2) if self.ensemble else (1, 2)):
            problems.append(f"plies must be 1 or 2 (or 0 with an ensemble), got {self.plies}")
        for path in self.ensemble_paths():
            if not Path(path).is_file():
                problems.append(f"ensemble network {path!r} is not a file (a bgai checkpoint or network file)")
        if not 0 <= self.validation < 1:
            problems.append(f"validation must be a share from 0 up to 1, got {self.validation}")
        if not (0 <= self.deeper <= 1 and (self.deeper == 0 or self.plies + 1 <= MAX_PLIES)):
            problems.append(f"deeper must be a share 0..1, and plies + 1 at most {MAX_PLIES}, got "
                            f"deeper={self.deeper} with plies={self.plies}")
        if not (0 <= self.rollouts <= 1 and self.rollout_trials >= 1 and self.rollout_truncate >= 0):
            problems.append(f"rollouts must be a share 0..1, rollout_trials at least 1 and rollout_truncate 0 or "
                            f"more, got {self.rollouts}, {self.rollout_trials} and {self.rollout_truncate}")
        problems += _one_of(self, "rollout_pick", ROLLOUT_PICKS) + _one_of(self, "loss", LOSSES)
        if self.precision not in ("fp32", "bf16"):
            problems.append(f"precision must be 'fp32' or 'bf16', got {self.precision!r}")
        if self.pruner and not Path(self.pruner).is_file():
            problems.append(f"pruner {self.pruner!r} is not a file (a pruning net's .npz, training/pruner.py)")
        _refuse(self.name, problems)

    def ensemble_paths(self) -> list[str]:
        """The ``ensemble`` setting's checkpoints."""
        return [path.strip() for path in self.ensemble.split(",") if path.strip()]


@dataclass
class RolloutStage:
    """Supervised learning on rollout-labelled positions (``bgai.train.labels``; see the module docstring)."""

    name: str = _field("rollouts", "name of the stage (its TensorBoard namespace)")
    method: str = _field("rollouts", "rollouts")
    labels: str = _field("checkpoints/labels/split-scale", "folders of label shards (bgai label), comma separated")
    epochs: int = _field(20, "passes over the labelled positions")
    lr: float = _field(1e-3, "learning rate at the start of the stage")
    lr_end: float = _field(1e-5, "learning rate reached linearly at the end of the stage's last epoch")
    batch_size: int = _field(256, "minibatch size")
    optimizer: str = _field("adam", "'adam' or 'adamw' (decoupled weight decay)")
    weight_decay: float = _field(0.0, "weight decay (with adamw: decoupled from the gradient's scale)")
    loss: str = _loss_field()
    validation: float = _field(0.05, "share of the positions held out (by a hash of the board: the same positions "
                                     "whatever the shards) to measure the model after each epoch; the epoch that "
                                     "measures best is the one the stage keeps")
    ply1: float = _field(0.0, "weight of the labelling network's own 1-ply values in the targets (0: the rollouts "
                              "alone; the held-out positions are always measured against the rollouts)")
    picks: str = _field("all", "which of the labelled positions the stage learns and holds out: 'all', 'uniform' "
                               "(those drawn uniformly from the games) or 'disagreement' (those picked where the "
                               "labelling network's 1-ply and 0-ply values differ most)")
    anchor: float = _field(0.0, "anchor positions learned beside the labelled ones, as a multiple of their number: "
                                "the plays of a seeded roll of each labelled position (most of which its own play "
                                "never reaches, but which choosing a play compares), with the starting network's "
                                "own 0-ply values as targets, so that it keeps its judgement where no label is (0: "
                                "none)")
    anchor_plays: str = _field("sample", "which plays the anchors are: 'sample' (a seeded sample of the plays of "
                                         "a seeded roll of each labelled position) or 'best' (for each of anchor "
                                         "seeded rolls of each labelled position, the play the starting network "
                                         "chooses: the positions a 1-ply lookahead of it reads)")
    pairs: float = _field(0.0, "weight of a second loss on the differences between the plays of one decision "
                               "(label shards made with bgai label --plays): the squared error of their cubeless "
                               "equities about the decision's mean, each decision's plays in one minibatch (0: none)")
    pairs_rollouts: bool = _field(False, "the differences' loss reads the rollouts alone, not the targets that "
                                         "ply1 mixes: the levels from the mix, the differences from the rollouts")
    bench_every: int = _field(5, "epochs between benchmarks against pubeval and the heuristic player")

    def check(self) -> None:
        """``BgaiError`` naming every setting out of its range."""
        problems: list[str] = []
        if self.epochs < 1 or self.batch_size < 1:
            problems.append(f"epochs and batch_size must be at least 1, got {self.epochs} and {self.batch_size}")
        if not (self.lr > 0 and self.lr_end >= 0):
            problems.append(f"lr must be above 0 and lr_end 0 or more, got {self.lr} and {self.lr_end}")
        if self.optimizer not in ("adam", "adamw"):
            problems.append(f"optimizer must be 'adam' or 'adamw', got {self.optimizer!r}")
        if self.weight_decay < 0:
            problems.append(f"weight_decay must be 0 or more, got {self.weight_decay}")
        problems += _one_of(self, "loss", LOSSES)
        if not 0 < self.validation < 1:
            problems.append(f"validation must be a share between 0 and 1, got {self.validation}")
        if not 0 <= self.ply1 <= 1:
            problems.append(f"ply1 must be a weight 0..1, got {self.ply1}")
        if self.bench_every < 1:
            problems.append(f"bench_every must be at least 1, got {self.bench_every}")
        problems += _one_of(self, "picks", LABEL_PICKS)
        if not self.anchor >= 0:
            problems.append(f"anchor must be 0 or more (a multiple of the labelled positions), got {self.anchor}")
        if self.anchor_plays not in ANCHOR_PLAYS:
            problems.append(f"anchor_plays must be one of {', '.join(ANCHOR_PLAYS)}, got {self.anchor_plays!r}")
        elif self.anchor_plays == "best" and self.anchor != int(self.anchor):
            problems.append(f"with anchor_plays = 'best', anchor counts seeded rolls a labelled position: a whole "
                            f"number, got {self.anchor}")
        if not self.pairs >= 0:
            problems.append(f"pairs must be 0 or more (the weight of the differences' loss), got {self.pairs}")
        _refuse(self.name, problems)


STAGES = {"td": TDStage, "lookahead": LookaheadStage, "rollouts": RolloutStage}
#: ``RolloutStage.anchor_plays``: which plays of the labelled positions' rolls become anchors
ANCHOR_PLAYS = ("sample", "best")


@dataclass
class RunConfig:
    """A training run: the model, then its stages. Every field can be set in a TOML file (``--config``); the
    command line overrides run fields, and a stage field of the one stage that has it (``load_config``)."""

    run_name: str = _field("default", "name of the run (its folder under runs/ unless --run-dir is given)")
    seed: int = _field(0, "seed of the dice, the weight initialisation, sampling and shuffling")
    encoder: int = _field(encoding.ENCODER_VERSION, "encoder version of the model's inputs (bgai.eval.encoding)")
    hidden: str = _field("128", "hidden layer sizes, comma separated (e.g. '128' or '256,128')")
    nets: str = _field("all", "'all' (one net for every phase), 'contact,race' (one net each) or "
                              "'contact,crashed,race' (GNU Backgammon's three classes)")
    init: str = _field("", "checkpoint whose weights the run starts from (the same network grown to hidden if "
                           "it is smaller: EquityModel.grown; each net starts as the one that evaluated its phases "
                           "there: a one-net model's weights start every net of a split one, a contact net a crashed "
                           "one; inputs a later encoder adds start with zero weight, and new hidden units and layers "
                           "with zero weight out); empty: random")
    threads: int = _field(0, "torch threads of the main process (0: 2 with workers=1, where it plays too, as "
                             "before; 1 with workers, which have the cores while it learns)")
    workers: int = _field(0, "worker processes for self-play and lookahead targets (0: one per core this process "
                             "may use, or with --ray one per free CPU of the cluster; 1: everything in this process)")
    ray: str = _field("", "run the workers as Ray actors (pip install 'bgai[ray]'): 'local', or --ray alone (the "
                          "cluster `ray start` made on this machine, else a new local Ray instance), 'auto' (a "
                          "running cluster, an error if none) or a cluster's address; empty: worker processes")
    checkpoint_minutes: float = _field(5.0, "minutes between checkpoints (one is also written at stage ends)")
    bench_games: int = _field(250, "dice sequences per benchmark (each played twice, seats swapped)")
    final_bench_games: int = _field(1_000, "dice sequences of the benchmark at the end of the run")
    stages: list = _field(None, "the stages, in order")  # type: ignore[assignment]

    def hidden_sizes(self) -> tuple[int, ...]:
        """The hidden layers the run's model starts with."""
        return _sizes(self.hidden, "hidden")

    def hidden_at(self, stage: int) -> tuple[int, ...]:
        """The hidden layers of the model during stage number ``stage`` (0-based): the run's, grown by the stages
        up to that one that name theirs (``TDStage.hidden``)."""
        sizes = self.hidden_sizes()
        for s in self.stages[:stage + 1]:
            if getattr(s, "hidden", ""):
                sizes = _sizes(s.hidden, "hidden")
        return sizes

    def net_names(self) -> tuple[str, ...]:
        names = tuple(part.strip() for part in self.nets.split(",") if part.strip())
        try:
            phase_nets(names)
        except ValueError:
            raise BgaiError(f"nets must be 'all', 'contact,race' or 'contact,crashed,race', got {self.nets!r}") \
                from None
        return names

    def as_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "stages"}
        out["stages"] = [dataclasses.asdict(stage) for stage in self.stages]
        return out


def _sizes(text, name: str) -> tuple[int, ...]:
    """Hidden layer sizes from their comma-separated text; ``BgaiError`` naming the setting unless they are."""
    try:
        sizes = tuple(int(part) for part in str(text).split(",") if part.strip())
    except ValueError:
        raise BgaiError(f"{name} must be comma-separated layer sizes, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise BgaiError(f"{name} must name at least one positive layer size, got {text!r}")
    return sizes


_KINDS = {int: "a whole number", float: "a number", str: "a string", bool: "true or false"}


def _coerced(kind: type, value):
    """``value`` as a setting of type ``kind`` (int, float, str or bool), from TOML's types or the command line's
    text (a whole number is a string's text too: ``hidden = 128``); ``ValueError`` for anything else: a bool where
    no bool belongs, a fraction for a whole number (``games = 1.9`` is no number of games), a fraction or a table
    for a string."""
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise ValueError(value)
    if isinstance(value, bool):
        raise ValueError(value)
    if kind is str:
        if not isinstance(value, (str, int)):
            raise ValueError(value)
        return str(value)
    if isinstance(value, str):  # the command line's text, checked below as TOML's numbers are
        try:
            value = int(value)
        except ValueError:
            value = float(value)  # "1e-4", "2e4" games; "1.5" for a whole number is refused below
    if not isinstance(value, (int, float)) or value != value:  # (NaN)
        raise ValueError(value)
    if kind is int:
        if not float(value).is_integer():
            raise ValueError(value)
        return int(value)
    return float(value)


def _typed(cls, values: dict, where: str):
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise BgaiError(f"unknown {where} key(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}")
    obj = cls()
    for key, value in values.items():
        kind = type(getattr(obj, key))
        try:
            setattr(obj, key, _coerced(kind, value))
        except (TypeError, ValueError, OverflowError):
            raise BgaiError(f"{where} {key} must be {kind.__name__} ({_KINDS.get(kind, kind.__name__)}), got "
                            f"{value!r}") from None
    return obj


def load_config(path: str | Path | None, overrides: dict | None = None, qualified: dict | None = None) -> RunConfig:
    """A run config from defaults, then a TOML file, then overrides; unknown keys are an error.

    ``overrides`` are settings by name (``None`` values ignored): a run setting, or a stage setting that one stage of
    the run has. A setting that several stages have is refused, naming them, rather than set in all of them (the
    stages' learning rates, games and λ mean different things). ``qualified`` says which: ``{"STAGE.KEY": value}``
    for the stage called STAGE (``bgai train --set STAGE.KEY=VALUE``), ``{"KEY": value}`` for a run setting.
    """
    values: dict = {}
    if path is not None:
        try:
            values = tomllib.loads(Path(path).read_text())
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise BgaiError(f"cannot read config {path}: {error}") from None
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    run_keys = {f.name for f in dataclasses.fields(RunConfig)} - {"stages"}
    stage_tables = values.pop("stage", None)
    flat_td = {k: values.pop(k) for k in list(values) if k not in run_keys}
    if stage_tables is None:  # bgai 0.1's format: one TD stage, its settings at the top level
        stage_tables = [flat_td]
    elif flat_td:
        raise BgaiError(f"unknown config key(s) {', '.join(sorted(flat_td))}; stage settings go in [[stage]] tables")
    if not stage_tables:
        raise BgaiError("a run needs at least one [[stage]]")
    kinds = []
    for i, table in enumerate(stage_tables):
        method = table.get("method", "td")
        if method not in STAGES:
            raise BgaiError(f"stage {i + 1}: unknown method {method!r}; known: {', '.join(STAGES)}")
        kinds.append(STAGES[method])
    labels = [str(table.get("name", cls().name)) for table, cls in zip(stage_tables, kinds)]
    settings = [{f.name for f in dataclasses.fields(cls)} - {"name", "method"} for cls in kinds]
    run_values: dict = {}
    stage_values: list[dict] = [{} for _ in kinds]
    for key, value in overrides.items():
        having = [i for i, names in enumerate(settings) if key in names]
        if key in run_keys:
            run_values[key] = value
        elif len(having) > 1:
            which = ", ".join(labels[i] for i in having)
            raise BgaiError(f"{key} is a setting of {len(having)} stages of this run ({which}); say which: "
                            f"--set {labels[having[0]]}.{key}={value}")
        elif having:
            stage_values[having[0]][key] = value
    for target, value in (qualified or {}).items():
        stage, dot, key = str(target).partition(".")
        if not dot:
            if stage not in run_keys:
                raise BgaiError(f"{stage} is not a run setting (a stage's is written STAGE.{stage}); run settings: "
                                f"{', '.join(sorted(run_keys))}")
            run_values[stage] = value
            continue
        if stage not in labels:
            raise BgaiError(f"this run has no stage called {stage!r}; its stages: {', '.join(labels)}")
        i = labels.index(stage)
        if key not in settings[i]:
            raise BgaiError(f"stage {stage} has no setting {key!r}; its settings: {', '.join(sorted(settings[i]))}")
        stage_values[i][key] = value
    config = _typed(RunConfig, {**values, **run_values}, "config")
    stages, names = [], set()
    for i, (table, cls) in enumerate(zip(stage_tables, kinds)):
        stage = _typed(cls, {**table, **stage_values[i]}, f"stage {i + 1}")
        if stage.name in names:
            raise BgaiError(f"two stages are called {stage.name!r}")
        names.add(stage.name)
        stages.append(stage)
    unused = sorted(set(overrides) - run_keys - {f.name for s in stages for f in dataclasses.fields(s)})
    if unused:
        raise BgaiError(f"no stage of this run has the setting(s) {', '.join(unused)}")
    for stage in stages:
        stage.check()
    config.stages = stages
    config.net_names()
    sizes = config.hidden_sizes()
    for i, stage in enumerate(stages):  # each growth a network EquityModel.grown can make
        grown = config.hidden_at(i)
        if grown != sizes:
            try:
                check_growth(sizes, grown)
            except ValueError as error:
                raise BgaiError(f"stage {stage.name}: {error}") from None
        sizes = grown
    if config.encoder not in encoding.VERSIONS:
        raise BgaiError(f"encoder must be one of {', '.join(map(str, encoding.VERSIONS))}, got {config.encoder!r}")
    return config


# Benchmarks ---------------------------------------------------------------------------------------------------


def benchmark(model: EquityModel, sequences: int, seed: int = 12345, pool: Pool | None = None) -> dict:
    """Duplicate-game results of the model at 0-ply against pubeval and the heuristic player, played with the numpy
    pass on a snapshot of its weights, as the bot plays (several times faster than the torch model's small
    batches); by the ``pool``'s workers if there is one (the same games: see ``play_duplicate``)."""
    keys = ("games", "ppg", "ppg_se", "win_rate", "gammon_rate", "backgammon_rate")
    if sequences <= 0:  # bench_games = 0: nothing played, no figure (None, which JSON writes as null)
        return {name: {k: 0 if k == "games" else None for k in keys} for name in ("pubeval", "heuristic")}
    bot = Bot(ModelSnapshot.of(model))
    out = {}
    for name, opponent in (("pubeval", PubevalPlayer()), ("heuristic", HeuristicPlayer())):
        s = play_duplicate(bot, opponent, sequences, seed=seed, batch=1024, pool=pool).summary()
        out[name] = {k: s[k] for k in keys}
    return out


# The run ------------------------------------------------------------------------------------------------------


class Run:
    """The state of a training run and the writing of it: model, stage position, history, clocks."""

    def __init__(self, config: RunConfig, run_dir: Path, resume: bool, progress: bool,
                 pool: Pool | None = None) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.config, self.run_dir, self.progress = config, run_dir, progress
        self.path = run_dir / "checkpoint.pt"
        in_process = pool is None and not config.ray and (config.workers or default_workers()) == 1
        # With workers, a second learner thread gains little on the small matrices of these nets and costs much on
        # a busy machine (measured: benchmarks/workers_bench.py).
        torch.set_num_threads(config.threads if config.threads > 0 else 2 if in_process else 1)
        torch.manual_seed(config.seed)
        self.model = EquityModel.create(config.hidden_sizes(), config.net_names(), config.encoder)
        self.rng = np.random.default_rng(config.seed)
        self.stage, self.step, self.games, self.seconds, self.history = 0, 0, 0, 0.0, []
        self.optimizer_state = None
        self.play_weights = None  # a TD stage on workers: the weights its next round is played with
        if resume:
            state = load_checkpoint(self.path)
            saved = model_from_checkpoint(state)
            if self.model.hidden != config.hidden_at(state["stage"]):  # a stage grew it: the model it grew to
                self.model = EquityModel.create(config.hidden_at(state["stage"]), config.net_names(), config.encoder)
            if (saved.phases, saved.hidden, saved.encoder_version) != (
                    self.model.phases, self.model.hidden, self.model.encoder_version):
                raise CheckpointError(f"{self.path} holds {saved.describe()}; the config asks "
                                      f"{self.model.describe()}")
            self.model = saved
            self.rng.bit_generator.state = state["numpy_rng"]
            torch.set_rng_state(state["torch_rng"])
            self.stage, self.step = state["stage"], state["step"]
            self.games, self.seconds, self.history = state["games"], state["seconds"], state["history"]
            self.optimizer_state = state.get("optimizer")
            if state.get("play_weights") is not None:
                self.play_weights = ModelSnapshot(saved.hidden, saved.phases, saved.encoder_version,
                                                  {k: v.numpy() for k, v in state["play_weights"].items()})
        elif self.path.exists():
            raise BgaiError(f"{self.path} exists: pass --resume to continue that run, or choose another --run-dir")
        elif config.init:
            start = model_from_checkpoint(load_checkpoint(config.init))
            if start.encoder_version != self.model.encoder_version:
                try:  # new inputs start with zero weight: the same network, free to learn to use them
                    start = start.reading(self.model.encoder_version)
                except ValueError as e:
                    raise BgaiError(f"--init {config.init}: {e}") from None
            if start.hidden != self.model.hidden:
                try:  # new units and layers start silent: the same network, free to learn what to add
                    start = start.grown(self.model.hidden, config.seed)
                except ValueError as e:
                    raise BgaiError(f"--init {config.init}: {e}") from None
            weights = start.state_dict()
            if self.model.phases != start.phases:
                # Each net starts as the start's net of its phases, then learns its own phases alone.
                source, state, weights = start.route.numpy(), weights, {}
                for name, phases in phase_nets(self.model.phases).items():
                    was = f"nets.{start.phases[source[phases[0]]]}."
                    weights.update({f"nets.{name}.{key[len(was):]}": value
                                    for key, value in state.items() if key.startswith(was)})
            try:
                self.model.load_state_dict(weights)
            except RuntimeError:
                raise BgaiError(f"--init {config.init} holds {start.describe()}; the config asks "
                                f"{self.model.describe()}") from None
        self.writer = SummaryWriter(log_dir=str(run_dir / "tensorboard"), purge_step=self.games or None)
        if not resume:
            self.writer.add_text("config", "    " + json.dumps(config.as_dict(), indent=2).replace("\n", "\n    "))
        self.last_save = time.monotonic()
        self._pool, self._own_pool = pool, pool is None

    @property
    def pool(self) -> Pool | None:
        """The workers of self-play and target computation: the pool given to ``run``, else the one the config asks
        for, started on first use; ``None`` when everything runs in this process (``workers`` 1, no Ray), exactly
        as before there were workers."""
        workers, ray = self.config.workers, self.config.ray
        if self._pool is None and self._own_pool and (ray or (workers or default_workers()) > 1):
            self._pool = open_pool(workers, ray)
            where = f"Ray actors ({ray})" if ray else "worker processes"
            self.writer.add_text("workers", f"{self._pool.workers} {where}")
            if self.progress:
                print(f"self-play and targets on {self._pool.workers} {where}", flush=True)
        return self._pool

    def close(self) -> None:
        if self._pool is not None and self._own_pool:
            if self._pool.replaced:
                self.writer.add_text("workers", f"{self._pool.replaced} workers died and were replaced")
            self._pool.close()
            self._pool = None
        self.writer.close()

    def save(self, optimizer: torch.optim.Optimizer | None = None) -> None:
        save_checkpoint(self.path, {
            **model_payload(self.model),
            "optimizer": None if optimizer is None else optimizer.state_dict(),
            "config": self.config.as_dict(),
            "stage": self.stage,
            "step": self.step,
            "games": self.games,
            "seconds": self.seconds,
            "numpy_rng": self.rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(),
            "history": self.history,
            "play_weights": None if self.play_weights is None else
            {key: torch.from_numpy(value) for key, value in self.play_weights.weights.items()},
        })
        self.last_save = time.monotonic()

    def save_if_due(self, optimizer: torch.optim.Optimizer) -> None:
        if time.monotonic() - self.last_save > 60 * self.config.checkpoint_minutes:
            self.save(optimizer)

    def bench(self, stage_name: str, x: int) -> dict:
        """Benchmark the model (on the workers, if the run has them; none may be busy) and record it; returns its
        figures against pubeval (``ppg``, ``ppg_se``, ...; with ``bench_games = 0``, no games and nothing
        recorded)."""
        result = benchmark(self.model, self.config.bench_games, pool=self.pool)
        if not result["pubeval"]["games"]:
            return result["pubeval"]
        self.history.append({"stage": stage_name, "step": self.step, "games": self.games,
                             "seconds": self.seconds, **result})
        for name, figures in result.items():
            self.writer.add_scalar(f"{stage_name}/eval/ppg_vs_{name}", figures["ppg"], x)
            self.writer.add_scalar(f"eval/ppg_vs_{name}", figures["ppg"], self.games)
        return result["pubeval"]


def run(config: RunConfig, run_dir: str | Path, resume: bool = False, progress: bool = True,
        pool: Pool | None = None) -> dict:
    """Run (or continue) the stages of ``config`` in ``run_dir``; returns the final summary. ``pool``: workers to
    use instead of those ``config.workers`` and ``config.ray`` ask for (``bgai.core.workers``; left open)."""
    run_dir = Path(run_dir)
    with locked_folder(run_dir):
        return _run(config, run_dir, resume, progress, pool)


def _run(config: RunConfig, run_dir: Path, resume: bool, progress: bool, pool: Pool | None) -> dict:
    state = Run(config, run_dir, resume, progress, pool)
    try:
        while state.stage < len(config.stages):
            stage = config.stages[state.stage]
            grown = config.hidden_at(state.stage)
            if state.model.hidden != grown:  # the stage grows the model as it starts; its optimizer starts anew
                state.model = state.model.grown(grown, seed=config.seed + state.stage)
                state.writer.add_text("growth", f"stage {stage.name}: {state.model.describe()}", state.games)
            if isinstance(stage, TDStage):
                _td_stage(state, stage)
            elif isinstance(stage, RolloutStage):
                _rollout_stage(state, stage)
            else:
                _lookahead_stage(state, stage)
            # Not saved: a finished run resumed with a longer last stage goes on with that stage.
            state.stage, state.step, state.optimizer_state, state.play_weights = state.stage + 1, 0, None, None
        final = benchmark(state.model, config.final_bench_games, seed=777, pool=state.pool)
        summary = {"run_dir": str(run_dir), "games": state.games, "hours": state.seconds / 3600,
                   "stages": [s.name for s in config.stages], "final": final}
        state.writer.add_hparams(
            {k: v for k, v in config.as_dict().items() if isinstance(v, (int, float, str))},
            {f"hparam/ppg_vs_{name}": figures["ppg"] for name, figures in final.items() if figures["games"]},
            run_name=".",
        )
        text = json.dumps(summary, indent=2) + "\n"
        write_atomically(run_dir / "summary.json", lambda f: f.write(text.encode()))
        return summary
    finally:
        state.close()


def _td_stage(state: Run, stage: TDStage) -> None:
    """TD(λ) self-play; ``state.step`` counts the stage's games.

    In this process, each round is played with the latest weights, then learned from. On a worker pool the rounds
    overlap: while the learner trains on round k, the workers already play round k + 1 with the weights from
    before that update (one update, ``parallel_games`` games, behind), so neither waits for the other, except at a
    benchmark, whose games wait for the round in flight to end (they go to the workers too). The checkpoint keeps
    those weights too, so a resumed run plays exactly what it would have.
    """
    from tqdm.auto import tqdm

    rounds = _TDRounds(state, stage)  # on workers, the first round is played while the learner is made
    try:
        learner = Learner(state.model, stage.lr, stage.batch_size, stage.epochs)
        if state.optimizer_state is not None:
            learner.optimizer.load_state_dict(state.optimizer_state)
    except BaseException:
        rounds.close()  # (the round in flight must not outlive the pool it plays on)
        raise
    next_bench = (state.step // stage.bench_every + 1) * stage.bench_every
    last = state.history[-1]["pubeval"] if state.history else None
    bar = tqdm(total=stage.games, initial=state.step, unit="game", disable=not state.progress,
               desc=f"{state.config.run_name}/{stage.name}")
    try:
        while state.step < stage.games:
            started = time.perf_counter()
            n = min(stage.parallel_games, stage.games - state.step)
            for group in learner.optimizer.param_groups:
                group["lr"] = stage.lr_at(state.step)
            experience = rounds.next(n)
            play_seconds = time.perf_counter() - started
            loss = learner.update(experience, state.rng)
            elapsed = time.perf_counter() - started
            state.seconds += elapsed
            state.step += n
            state.games += n
            bar.update(n)
            w, x = state.writer, state.games
            w.add_scalar(f"{stage.name}/loss/td", loss, x)
            w.add_scalar(f"{stage.name}/opt/lr", learner.optimizer.param_groups[0]["lr"], x)
            w.add_scalar(f"{stage.name}/perf/games_per_s", n / elapsed, x)
            w.add_scalar(f"{stage.name}/perf/selfplay_wait_s", play_seconds, x)
            w.add_scalar(f"{stage.name}/selfplay/gammon_rate", experience.gammons / n, x)
            w.add_scalar(f"{stage.name}/selfplay/backgammon_rate", experience.backgammons / n, x)
            if state.step >= next_bench or state.step >= stage.games:
                rounds.settle()  # the benchmark's games go to the workers too
                last = state.bench(stage.name, x)
                next_bench += stage.bench_every
            # (tqdm shows the games a second itself; pubeval's figure once there is one)
            shown = {"td_loss": f"{loss:.4f}"}
            if last is not None and last["games"]:
                shown["v_pubeval"] = f"{last['ppg']:+.3f}±{last['ppg_se']:.3f}"
            bar.set_postfix(shown)
            state.save_if_due(learner.optimizer)
        state.save(learner.optimizer)
    finally:
        rounds.close()
        bar.close()


class _TDRounds:
    """The self-play rounds of a TD stage (see ``_td_stage``): ``next(n)`` is the experience of the run's next ``n``
    games. Game ids follow the run's games, so every stage and round plays new dice."""

    def __init__(self, state: Run, stage: TDStage) -> None:
        self.state, self.stage = state, stage
        self.worker: SelfPlayWorker | None = None
        self.ahead: tuple[int, concurrent.futures.Future] | None = None  # the round the workers are playing
        self.executor: concurrent.futures.ThreadPoolExecutor | None = None
        if state.pool is None:
            self.worker = SelfPlayWorker(ModelSnapshot.of(state.model), stage.lam, state.config.seed, stage.epsilon)
        else:
            from concurrent.futures import ThreadPoolExecutor

            self.executor = ThreadPoolExecutor(1, thread_name_prefix="bgai-td-round")
            if state.step < stage.games:
                self._submit(state.games, min(stage.parallel_games, stage.games - state.step),
                             state.play_weights or ModelSnapshot.of(state.model))

    def _submit(self, first_game: int, n: int, weights) -> None:
        stage, pool, executor = self.stage, self.state.pool, self.executor
        assert pool is not None and executor is not None  # (rounds on workers only)
        tasks = split_games(first_game, n, pool.workers, lam=stage.lam, seed=self.state.config.seed,
                            epsilon=stage.epsilon)
        self.ahead = (n, executor.submit(lambda: merge_experience(pool.map(play_task, tasks, weights))))

    def next(self, n: int) -> Experience:
        state = self.state
        if self.worker is not None:
            # The round's games are played with the numpy pass on a snapshot of the weights, as on workers: several
            # times faster than the torch model's small batches.
            self.worker.load_snapshot(ModelSnapshot.of(state.model))
            return self.worker.play(state.games, n, state.rng)
        assert self.ahead is not None  # the stage's first round was submitted when it started, each next one below
        games, future = self.ahead
        if games != n:
            raise AssertionError(f"the round in flight has {games} games, the stage wants {n}")
        experience = future.result()
        # The next round starts now, with the weights as they are: the learner has not learned from this one yet.
        following = min(self.stage.parallel_games, self.stage.games - state.step - n)
        state.play_weights = ModelSnapshot.of(state.model)
        if following > 0:
            self._submit(state.games + n, following, state.play_weights)
        else:
            self.ahead = None
        return experience

    def settle(self) -> None:
        """Return once the round in flight, if any, has been played: the workers are free for other work (its
        experience is still the next one ``next`` returns)."""
        if self.ahead is not None:
            concurrent.futures.wait([self.ahead[1]])

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)


# Lookahead generations ----------------------------------------------------------------------------------------


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


def _distinct_live(boards: np.ndarray) -> np.ndarray:
    """The distinct boards, sorted, without bear-offs and finished games."""
    boards = np.unique(boards, axis=0)
    return boards[~np.isin(classify(boards), (OVER, BEAROFF))]


def _positions_task(snapshot: ModelSnapshot, task) -> np.ndarray:
    """The distinct live positions of one task's self-play games (a worker's share of ``sample_positions``)."""
    return _distinct_live(play_task(snapshot, task).boards)


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


#: How a generation picks the positions it rolls out: where the lookahead moved the value farthest from the
#: network's own 0-ply value, or where the network's own 0-ply money cube decisions are closest.
ROLLOUT_PICKS = ("moved", "cube")


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


def evaluation_error(model: EquityModel, boards: np.ndarray, targets: np.ndarray) -> dict:
    """The model's cross-entropy and mean absolute cubeless-equity error against ``targets``."""
    model.eval()
    with torch.inference_mode():
        x, phase = inputs(model, boards)
        pred = model(x, phase)
        y = torch.from_numpy(targets).clamp(0, 1)
        return {"bce": float(bce(pred, y)), "equity_mae": float((equity(pred) - equity(y)).abs().mean())}


def _lookahead_stage(state: Run, stage: LookaheadStage) -> None:
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
        learner = Learner(state.model, stage.lr, stage.batch_size, stage.epochs, loss=stage.loss)
        loss = learner.update(Experience(boards, targets, 0, 0, 0, 0), state.rng,
                              lr_schedule=(stage.lr, stage.lr_end), progress=state.progress)
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
        # Each generation's network stays playable (load_bot), to compare generations head to head.
        save_checkpoint(state.run_dir / "generations" / f"{stage.name}-{generation:03d}.pt",
                        {**model_payload(state.model), "games": state.games, "seconds": state.seconds,
                         "validation": after})
        state.save()


# Rollout labels -------------------------------------------------------------------------------------------------


#: ``RolloutStage.picks``: the positions a stage learns, by how their shard picked them (``bgai.train.labels``).
LABEL_PICKS = ("all", "uniform", "disagreement")


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


def _rollout_stage(state: Run, stage: RolloutStage) -> None:
    """Supervised epochs on rollout labels; ``state.step`` counts finished epochs. After each, the held-out
    positions measure the model; the best epoch's weights are kept (``RUN_DIR/best-STAGE.pt``) and are the
    model when the stage ends."""
    boards, labels, ply1, decision = labelled_positions(stage.labels, stage.picks)
    hold = held_out(boards, stage.validation)
    if hold.all() or not hold.any():
        raise BgaiError(f"stage {stage.name}: {len(boards)} labelled positions are too few to hold {stage.validation} "
                        f"of them out")
    targets = ((1 - stage.ply1) * labels + stage.ply1 * ply1).astype(np.float32)
    train = Experience(boards[~hold], targets[~hold], 0, 0, 0, 0)
    pair_targets = labels[~hold].astype(np.float32) if stage.pairs_rollouts else None
    groups = decision[~hold]
    if stage.pairs > 0 and (np.bincount(groups[groups >= 0]) < 2).all():
        raise BgaiError(f"stage {stage.name}: pairs needs label shards of a decision's plays side by side (bgai "
                        f"label --plays), and {stage.labels} has none")
    if stage.anchor > 0:
        anchors, anchor_targets = _stage_anchors(state, stage, boards[~hold])
        train = Experience(np.concatenate([train.boards, anchors]), np.concatenate([train.targets, anchor_targets]),
                           0, 0, 0, 0)
        if pair_targets is not None:  # (anchors are no decision's plays: the differences' loss skips them)
            pair_targets = np.concatenate([pair_targets, anchor_targets])
        groups = np.concatenate([groups, np.full(len(anchors), -1)])
    val_boards, val_labels = boards[hold], labels[hold]
    best_path = state.run_dir / f"best-{stage.name}.pt"
    log_path = state.run_dir / f"{stage.name}-epochs.json"
    epochs = json.loads(log_path.read_text()) if state.step and log_path.exists() else []
    learner = Learner(state.model, stage.lr, stage.batch_size, 1, stage.optimizer, stage.weight_decay, stage.loss)
    if state.optimizer_state is not None:
        learner.optimizer.load_state_dict(state.optimizer_state)
    if not epochs:
        start = evaluation_error(state.model, val_boards, val_labels)
        epochs.append({"epoch": 0, **start})
        if state.progress:
            print(f"{stage.name}: {len(train.boards):,} positions to learn, {len(val_boards):,} held out; "
                  f"held-out equity error {start['equity_mae']:.4f} before", flush=True)
    while state.step < stage.epochs:
        e = state.step
        lr = (stage.lr + (stage.lr_end - stage.lr) * e / stage.epochs,
              stage.lr + (stage.lr_end - stage.lr) * (e + 1) / stage.epochs)
        started = time.perf_counter()
        loss = learner.update(train, state.rng, lr_schedule=lr, progress=state.progress, groups=groups,
                              pairs=stage.pairs, pair_targets=pair_targets)
        state.seconds += time.perf_counter() - started
        after = evaluation_error(state.model, val_boards, val_labels)
        state.step += 1
        best = min((r for r in epochs if r["epoch"] > 0), key=lambda r: r["equity_mae"], default=None)
        if best is None or after["equity_mae"] < best["equity_mae"]:
            save_checkpoint(best_path, {**model_payload(state.model), "games": state.games, "seconds": state.seconds,
                                        "validation": after, "step": state.step})
        epochs.append({"epoch": state.step, f"train_{stage.loss}": loss, "lr": lr[1], **after})
        write_atomically(log_path, lambda f: f.write((json.dumps(epochs, indent=1) + "\n").encode()))
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

