"""A training run's settings: the model (``RunConfig``) and its stages, one settings class a method (``STAGES``), read
from a TOML file and the command line's overrides by ``load_config`` and checked there, once. No torch: ``bgai
train --help`` lists these settings without it.

Each settings class is a pydantic model: a setting is a typed field whose description is its help (the command
line's too), unknown keys are refused, and every value is read by the same rules (``Int``, ``Float``, ``Str``,
``Bool``: TOML's types or the command line's text). Each class's ``check`` then names every setting out of its range.

A config without ``[[stage]]`` tables is a one-stage TD run whose stage settings sit at the top level (bgai 0.1's
format).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from bgai.core.errors import BgaiError
from bgai.eval import encoding
from bgai.eval.bot import MAX_PLIES
from bgai.eval.weights import check_growth, phase_nets

#: ``LookaheadStage.rollout_pick``: where the lookahead moved the value farthest from the network's own 0-ply value,
#: or where the network's own 0-ply money cube decisions are closest.
ROLLOUT_PICKS = ("moved", "cube")
#: ``LookaheadStage.lr_schedule``: the rate falls within each generation, or once over the stage's generations.
LR_SCHEDULES = ("generation", "stage")
#: ``RolloutStage.picks``: the positions a stage learns, by how their shard picked them (``bgai.train.labels``).
LABEL_PICKS = ("all", "uniform", "disagreement")
#: ``RolloutStage.anchor_plays``: which plays of the labelled positions' rolls become anchors
ANCHOR_PLAYS = ("sample", "best")
#: The learner's precisions (``bgai.train.learner.Learner``'s ``precision``, the run's ``learner_precision``).
PRECISIONS = ("fp32", "bf16")
#: The learners' losses by name (``bgai.train.learner.LOSSES``).
LOSSES = ("bce", "outcomes")


def _field(default, help: str):
    return Field(default, description=help)


_KINDS = {int: "a whole number", float: "a number", str: "a string", bool: "true or false"}


def _read_as(kind: type) -> BeforeValidator:
    """The rule a setting of type ``kind`` is read by (``_coerced``), its refusal naming the type."""
    def read(value):
        try:
            return _coerced(kind, value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"must be {kind.__name__} ({_KINDS[kind]})") from None
    return BeforeValidator(read)


Int = Annotated[int, _read_as(int)]
Float = Annotated[float, _read_as(float)]
Str = Annotated[str, _read_as(str)]
Bool = Annotated[bool, _read_as(bool)]


class Settings(BaseModel):
    """What every settings class shares: its fields are its settings, and a key it has no field for is refused."""

    model_config = ConfigDict(extra="forbid")


class TDStage(Settings):
    """TD(λ) self-play (``bgai.train.td``)."""

    name: Str = _field("td", "name of the stage (its TensorBoard namespace)")
    method: Str = _field("td", "td")
    games: Int = _field(20_000, "self-play games to train on in this stage")
    parallel_games: Int = _field(256, "games of one round, played at once (split between the workers)")
    lam: Float = _field(0.7, "λ of the λ-returns: 0 is TD(0), 1 is Monte Carlo (in a lookahead stage: 0 is the "
                             "lookahead value alone, above 0 trace_returns along the games)")
    lr: Float = _field(1e-3, "Adam learning rate at the start of the stage")
    lr_end: Float = _field(-1.0, "learning rate reached linearly at the stage's last game (negative: constant lr)")
    batch_size: Int = _field(512, "learner minibatch size")
    epochs: Int = _field(1, "passes of the learner over each round's experience")
    epsilon: Float = _field(0.0, "chance that a self-play move is random (exploration beyond the dice)")
    bench_every: Int = _field(5_000, "games between benchmarks against pubeval and the heuristic player")
    hidden: Str = _field("", "hidden layer sizes the model grows to when the stage starts (EquityModel.grown: the "
                             "same function, new units and layers silent; comma separated); empty: as it is")
    warmup: Int = _field(0, "games over which the learning rate rises linearly from 0 to lr at the stage's start "
                            "(after a growth, so that the new units' first steps are small)")
    average_half_life: Int = _field(0, "half-life in games of a moving average of the weights kept beside the model "
                                       "(the model plays and learns as without it), saved as the stage's network "
                                       "generations/STAGE-avg.pt at its end; 0: none")
    pruner: Str = _field("", "pruning net (an .npz of training/pruner.py) that ranks plays so that the network "
                             "judges only the best few (Bot.replies): in a TD stage each self-play move's (prune of "
                             "them; fewer evaluations a game, now and then missing the model's own best play), in a "
                             "lookahead stage the replies of its targets' lookahead (as in play, about half the time "
                             "of a 2-ply target); empty: every play goes through the network")
    prune: Int = _field(0, "a TD stage's plays of each move the model judges among the pruning net's best (0: as "
                           "many as the pruning net's file says)")

    def check(self) -> None:
        """``BgaiError`` naming every setting out of its range (and a pruner that is not a file)."""
        problems = _count_problems(self, "games", "parallel_games", "batch_size", "epochs", "bench_every") \
            + _share_problems(self, "lam", "epsilon") + _rate_problems(self)
        problems += _pruner_problems(self)
        if self.prune < 0:
            problems.append(f"prune must be at least 0 (0: the pruning net's own), got {self.prune}")
        if not 0 <= self.warmup <= self.games:
            problems.append(f"warmup must be 0..games ({self.games}), got {self.warmup}")
        if self.average_half_life < 0:
            problems.append(f"average_half_life must be at least 0 (0: no average), got {self.average_half_life}")
        if self.hidden:
            try:
                _sizes(self.hidden, "hidden")
            except BgaiError as error:
                problems.append(str(error))
        _refuse(self.name, problems)


def _count_problems(stage, *names: str) -> list[str]:
    """The problems of settings that count something, each at least 1."""
    return [f"{name} must be at least 1, got {getattr(stage, name)}" for name in names if getattr(stage, name) < 1]


def _share_problems(stage, *names: str) -> list[str]:
    """The problems of settings that are shares or weights, each in 0..1."""
    return [f"{name} must be in 0..1, got {getattr(stage, name)}" for name in names
            if not 0 <= getattr(stage, name) <= 1]


def _rate_problems(stage) -> list[str]:
    return [] if stage.lr > 0 else [f"lr must be above 0, got {stage.lr}"]


def _pruner_problems(stage) -> list[str]:
    """The problem of a ``pruner`` setting that names no file."""
    if stage.pruner and not Path(stage.pruner).is_file():
        return [f"pruner {stage.pruner!r} is not a file (a pruning net's .npz, training/pruner.py)"]
    return []


def _choice_problems(stage, name: str, choices) -> list[str]:
    """The problem of a setting that must be one of ``choices``, if it is not."""
    value = getattr(stage, name)
    return [] if value in choices else [f"{name} must be one of {', '.join(choices)}, got {value!r}"]


def _loss_field():
    """The ``loss`` setting of the stages that learn by minibatch (lookahead and rollouts)."""
    return _field("bce", "the learner's loss: 'bce' (binary cross-entropy of the five outputs) or 'outcomes' (the "
                         "cross-entropy of the six outcomes, bgai.train.learner.outcome_loss)")


def _refuse(name: str, problems: list[str]) -> None:
    if problems:
        raise BgaiError(f"stage {name}: " + "; ".join(problems))


class LookaheadStage(Settings):
    """Generations of supervised learning on the model's own lookahead (see the module docstring)."""

    name: Str = _field("lookahead", "name of the stage (its TensorBoard namespace)")
    method: Str = _field("lookahead", "lookahead")
    generations: Int = _field(4, "generations in this stage")
    games: Int = _field(4_000, "self-play games a generation samples its positions from")
    positions: Int = _field(100_000, "positions kept per generation (at most; distinct ones, drawn at random)")
    plies: Int = _field(1, "lookahead of the targets: 1 or 2 (0, with an ensemble: the networks' mean itself)")
    epsilon: Float = _field(0.02, "chance that a self-play move is random while sampling positions")
    buffer: Int = _field(3, "generations of data the model trains on (this one and the ones before)")
    epochs: Int = _field(2, "passes over the buffer per generation")
    lr: Float = _field(3e-4, "Adam learning rate at the start of each generation's training (with lr_schedule "
                             "'stage': of the stage's first generation)")
    lr_end: Float = _field(3e-5, "learning rate reached linearly at the end of each generation's training (with "
                                 "lr_schedule 'stage': of the stage's last generation; negative: constant lr)")
    lr_schedule: Str = _field("generation", "'generation': each generation's training falls from lr to lr_end; "
                                            "'stage': the rate falls once, linearly over the stage's generations, "
                                            "each generation training on its own stretch of that line (the rate "
                                            "of one online run over the stage, as PureTD's 1-ply stage; Adam "
                                            "still starts anew each generation). The line is drawn over "
                                            "generations: changing it on a resume moves the rate")
    batch_size: Int = _field(256, "minibatch size")
    validation: Float = _field(0.05, "share of each generation's positions held out to measure the model's error")
    part: Int = _field(20_000, "positions per part of the target computation (the unit of resuming)")
    bench_every: Int = _field(1, "generations between benchmarks against pubeval and the heuristic player")
    keep_every: Int = _field(1, "generations between the networks kept in the run's generations/ folder (the "
                                "stage's last is always kept)")
    deeper: Float = _field(0.0, "share of each part's positions, those whose lookahead value moved farthest from the "
                                "model's own 0-ply value, evaluated one ply deeper")
    rollouts: Float = _field(0.0, "share of each part's positions, those rollout_pick names, whose targets are "
                                  "rollouts instead (bgai.eval.rollout.rollout_values: 0-ply, variance reduction, the "
                                  "frozen model)")
    rollout_pick: Str = _field("moved", "which positions the rollouts go to: 'moved' (those whose lookahead value "
                                        "moved farthest from the 0-ply value) or 'cube' (those whose money cube "
                                        "decisions, centered or owned by the player on roll, are closest by the "
                                        "model's own 0-ply value: bgai.core.cube.money_margin)")
    rollout_trials: Int = _field(72, "trials of each rollout target")
    rollout_truncate: Int = _field(7, "plies a rollout target's trials are played before the network's value ends "
                                      "them (0: played to the end)")
    pruner: Str = _field("", "pruning net (an .npz of training/pruner.py) that ranks each reply's plays in the "
                             "targets' lookahead, the network judging only its best few (Bot.replies; as in play, "
                             "about half the time of a 2-ply target); empty: every play goes through the network")
    teacher: Str = _field("", "checkpoint of an earlier bgai network that plays the games and computes the targets "
                              "instead of the model being trained (a new model's first lessons); empty: the model")
    ensemble: Str = _field("", "checkpoints of other bgai networks, comma separated, whose probabilities the targets "
                               "average with the teacher's (or the model's) wherever they read a network "
                               "(bgai.eval.bot.Ensemble): a teacher of several networks, the games still played "
                               "by the first; empty: none")
    precision: Str = _field("fp32", "'fp32', or 'bf16': the targets' network passes in bfloat16 where the CPU has "
                                    "bfloat16 instructions (faster targets, a little less exact: docs/training.md "
                                    "gives the figures), fp32 elsewhere")
    loss: str = _loss_field()
    lam: Float = _field(0.0, "λ of the targets' returns along the self-play games (see trace_returns): 0 is the "
                             "lookahead value alone; above 0 each target adds the λ-discounted lookahead "
                             "corrections of the positions that followed it in its game, carrying the game's end "
                             "back faster than one ply a generation")

    def check(self) -> None:
        """``BgaiError`` naming every setting out of its range (and a pruner that is not a file)."""
        problems = _count_problems(self, "generations", "games", "positions", "buffer", "epochs", "batch_size",
                                   "part", "bench_every", "keep_every")
        problems += _share_problems(self, "epsilon", "lam") + _rate_problems(self)
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
        problems += _choice_problems(self, "rollout_pick", ROLLOUT_PICKS) + _choice_problems(self, "loss", LOSSES)
        problems += _choice_problems(self, "lr_schedule", LR_SCHEDULES)
        if self.precision not in ("fp32", "bf16"):
            problems.append(f"precision must be 'fp32' or 'bf16', got {self.precision!r}")
        problems += _pruner_problems(self)
        _refuse(self.name, problems)

    def generation_rates(self, generation: int) -> tuple[float, float]:
        """The learning rates at the start and end of ``generation``'s training (``Learner.fit``'s ``lr``)."""
        if self.lr_schedule == "generation" or self.lr_end < 0:
            return self.lr, self.lr_end
        at = [self.lr + (self.lr_end - self.lr) * g / self.generations for g in (generation, generation + 1)]
        return at[0], at[1]

    def ensemble_paths(self) -> list[str]:
        """The ``ensemble`` setting's checkpoints."""
        return [path.strip() for path in self.ensemble.split(",") if path.strip()]


class RolloutStage(Settings):
    """Supervised learning on rollout-labelled positions (``bgai.train.labels``; see the module docstring)."""

    name: Str = _field("rollouts", "name of the stage (its TensorBoard namespace)")
    method: Str = _field("rollouts", "rollouts")
    labels: Str = _field("checkpoints/labels/split-scale", "folders of label shards (bgai label), comma separated")
    epochs: Int = _field(20, "passes over the labelled positions")
    lr: Float = _field(1e-3, "learning rate at the start of the stage")
    lr_end: Float = _field(1e-5, "learning rate reached linearly at the end of the stage's last epoch (negative: "
                                 "constant lr)")
    batch_size: Int = _field(256, "minibatch size")
    optimizer: Str = _field("adam", "'adam' or 'adamw' (decoupled weight decay)")
    weight_decay: Float = _field(0.0, "weight decay (with adamw: decoupled from the gradient's scale)")
    loss: str = _loss_field()
    validation: Float = _field(0.05, "share of the positions held out (by a hash of the board: the same positions "
                                     "whatever the shards) to measure the model after each epoch; the epoch that "
                                     "measures best is the one the stage keeps")
    ply1: Float = _field(0.0, "weight of the labelling network's own 1-ply values in the targets (0: the rollouts "
                              "alone; the held-out positions are always measured against the rollouts)")
    picks: Str = _field("all", "which of the labelled positions the stage learns and holds out: 'all', 'uniform' "
                               "(those drawn uniformly from the games) or 'disagreement' (those picked where the "
                               "labelling network's 1-ply and 0-ply values differ most)")
    anchor: Float = _field(0.0, "anchor positions learned beside the labelled ones, as a multiple of their number: "
                                "the plays of a seeded roll of each labelled position (most of which its own play "
                                "never reaches, but which choosing a play compares), with the starting network's "
                                "own 0-ply values as targets, so that it keeps its judgement where no label is (0: "
                                "none)")
    anchor_plays: Str = _field("sample", "which plays the anchors are: 'sample' (a seeded sample of the plays of "
                                         "a seeded roll of each labelled position) or 'best' (for each of anchor "
                                         "seeded rolls of each labelled position, the play the starting network "
                                         "chooses: the positions a 1-ply lookahead of it reads)")
    pairs: Float = _field(0.0, "weight of a second loss on the differences between the plays of one decision "
                               "(label shards made with bgai label --plays): the squared error of their cubeless "
                               "equities about the decision's mean, each decision's plays in one minibatch (0: none)")
    pairs_rollouts: Bool = _field(False, "the differences' loss reads the rollouts alone, not the targets that "
                                         "ply1 mixes: the levels from the mix, the differences from the rollouts")
    bench_every: Int = _field(5, "epochs between benchmarks against pubeval and the heuristic player")

    def check(self) -> None:
        """``BgaiError`` naming every setting out of its range."""
        problems: list[str] = []
        if self.epochs < 1 or self.batch_size < 1:
            problems.append(f"epochs and batch_size must be at least 1, got {self.epochs} and {self.batch_size}")
        problems += _rate_problems(self)
        if self.optimizer not in ("adam", "adamw"):
            problems.append(f"optimizer must be 'adam' or 'adamw', got {self.optimizer!r}")
        if self.weight_decay < 0:
            problems.append(f"weight_decay must be 0 or more, got {self.weight_decay}")
        problems += _choice_problems(self, "loss", LOSSES)
        if not 0 < self.validation < 1:
            problems.append(f"validation must be a share between 0 and 1, got {self.validation}")
        if not 0 <= self.ply1 <= 1:
            problems.append(f"ply1 must be a weight 0..1, got {self.ply1}")
        if self.bench_every < 1:
            problems.append(f"bench_every must be at least 1, got {self.bench_every}")
        problems += _choice_problems(self, "picks", LABEL_PICKS)
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


#: The settings of each training method, by its name (a stage's ``method``).
STAGES: dict[str, type[Settings]] = {"td": TDStage, "lookahead": LookaheadStage, "rollouts": RolloutStage}


class RunConfig(Settings):
    """A training run: the model, then its stages. Every field can be set in a TOML file (``--config``); the
    command line overrides run fields, and a stage field of the one stage that has it (``load_config``)."""

    run_name: Str = _field("default", "name of the run (its folder under runs/ unless --run-dir is given)")
    seed: Int = _field(0, "seed of the dice, the weight initialisation, sampling and shuffling")
    encoder: Int = _field(encoding.ENCODER_VERSION, "encoder version of the model's inputs (bgai.eval.encoding)")
    hidden: Str = _field("128", "hidden layer sizes, comma separated (e.g. '128' or '256,128')")
    nets: Str = _field("all", "'all' (one net for every phase), 'contact,race' (one net each) or "
                              "'contact,crashed,race' (GNU Backgammon's three classes)")
    init: Str = _field("", "checkpoint whose weights the run starts from (the same network grown to hidden if "
                           "it is smaller: EquityModel.grown; each net starts as the one that evaluated its phases "
                           "there: a one-net model's weights start every net of a split one, a contact net a crashed "
                           "one; inputs a later encoder adds start with zero weight, and new hidden units and layers "
                           "with zero weight out); empty: random")
    threads: Int = _field(0, "torch threads of the main process (0: 2 with workers=1, where it plays too, as "
                             "before; 1 with workers, which have the cores while it learns)")
    workers: Int = _field(0, "worker processes for self-play and lookahead targets (0: one per core this process "
                             "may use, or with --ray one per free CPU of the cluster; 1: everything in this process)")
    ray: Str = _field("", "run the workers as Ray actors (pip install 'bgai[ray]'): 'local', or --ray alone (the "
                          "cluster `ray start` made on this machine, else a new local Ray instance), 'auto' (a "
                          "running cluster, an error if none) or a cluster's address; empty: worker processes")
    device: Str = _field("auto", "where the learner computes: 'cpu', 'cuda' (or 'cuda:N'), or 'auto' (CUDA where "
                                 "torch sees a device, else the CPU); self-play plays on the CPU's workers either way")
    learner_precision: Str = _field("fp32", "the learner's matrix products: 'fp32', or 'bf16' (bfloat16, on a CUDA "
                                            "device or a CPU with bfloat16 instructions, float32 elsewhere; "
                                            "bgai.train.learner.Learner)")
    checkpoint_minutes: Float = _field(5.0, "minutes between checkpoints (one is also written at stage ends)")
    bench_games: Int = _field(250, "dice sequences per benchmark (each played twice, seats swapped)")
    final_bench_games: Int = _field(1_000, "dice sequences of the benchmark at the end of the run")
    stages: list[Any] = Field(default_factory=list, description="the stages, in order")

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
        return {**self.model_dump(exclude={"stages"}), "stages": [stage.model_dump() for stage in self.stages]}


def _sizes(text, name: str) -> tuple[int, ...]:
    """Hidden layer sizes from their comma-separated text; ``BgaiError`` naming the setting unless they are."""
    try:
        sizes = tuple(int(part) for part in str(text).split(",") if part.strip())
    except ValueError:
        raise BgaiError(f"{name} must be comma-separated layer sizes, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise BgaiError(f"{name} must name at least one positive layer size, got {text!r}")
    return sizes


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
    """``cls`` read from ``values``; ``BgaiError`` naming the unknown keys, or the first setting its rule refuses."""
    try:
        return cls.model_validate(values)
    except ValidationError as error:
        problems = error.errors()
        unknown = sorted(str(p["loc"][0]) for p in problems if p["type"] == "extra_forbidden")
        if unknown:
            raise BgaiError(f"unknown {where} key(s) {', '.join(unknown)}; known: "
                            f"{', '.join(sorted(cls.model_fields))}") from None
        first = problems[0]
        reason = str(first.get("ctx", {}).get("error", first["msg"]))
        raise BgaiError(f"{where} {first['loc'][0]} {reason}, got {first['input']!r}") from None


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
    run_keys = set(RunConfig.model_fields) - {"stages"}
    stage_tables = values.pop("stage", None)
    flat_td = {k: values.pop(k) for k in list(values) if k not in run_keys}
    if stage_tables is None:  # bgai 0.1's format: one TD stage, its settings at the top level
        stage_tables = [flat_td]
    elif flat_td:
        raise BgaiError(f"unknown config key(s) {', '.join(sorted(flat_td))}; stage settings go in [[stage]] tables")
    if not stage_tables:
        raise BgaiError("a run needs at least one [[stage]]")
    kinds: list[type[Settings]] = []
    for i, table in enumerate(stage_tables):
        method = table.get("method", "td")
        if method not in STAGES:
            raise BgaiError(f"stage {i + 1}: unknown method {method!r}; known: {', '.join(STAGES)}")
        kinds.append(STAGES[method])
    labels = [str(table.get("name", cls.model_fields["name"].default)) for table, cls in zip(stage_tables, kinds)]
    settings = [set(cls.model_fields) - {"name", "method"} for cls in kinds]
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
    unused = sorted(set(overrides) - run_keys - {name for s in stages for name in type(s).model_fields})
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
    if config.learner_precision not in PRECISIONS:
        raise BgaiError(f"learner_precision must be one of {', '.join(PRECISIONS)}, got {config.learner_precision!r}")
    if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", config.device):
        raise BgaiError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {config.device!r}")
    if config.encoder not in encoding.VERSIONS:
        raise BgaiError(f"encoder must be one of {', '.join(map(str, encoding.VERSIONS))}, got {config.encoder!r}")
    return config
