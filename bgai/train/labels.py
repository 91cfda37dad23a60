"""Rollout-labelled positions: the training set of a generation learned from rollouts.

GNU Backgammon's nets after the first, wildbg's and Open Sage's learned positions from their own play, each
labelled by a rollout of the previous net (``shared/RESEARCH.md``, "Past parity"). This module makes such a set for
bgai, in shards that a run can stop and resume and that a repository can hold:

1. **Positions** (``shard_positions``): self-play games of the labelling bot at 0-ply, with a share ``epsilon`` of
   random plays to reach positions its own play avoids (back games, containment); the distinct positions before
   a roll, bear-offs and finished games left out (the bear-off database answers those). Of ``candidates`` times
   the shard's size, a share ``race`` of the shard is taken from the races and the rest from contact and crashed
   positions (self-play alone gives few races once each game's positions are counted once). In each group half is
   drawn uniformly (``picked`` 0) and the other half is the group's other positions whose 1-ply value is farthest
   from their 0-ply value (``picked`` 1): where the network and its own search disagree, as wildbg's later
   position finding and Sheppard's advice do. Both values are kept (``ply0``, ``ply1``).

   With ``plays`` k above 0 the sampled positions are decisions instead: each gets a seeded roll, and the positions
   after its k best plays by 0-ply (the opponent on roll) are the shard's positions, ``decision`` naming the sampled
   position each came from. A network chooses a play by comparing such positions, most of which its own play never
   reaches: labelling a roll's plays side by side teaches it the comparisons it makes (the first 100,000 labels of
   sampled positions alone, fitted better, ranked plays worse: docs/strength.md).

   With ``relabel`` a folder of shards instead, the positions of each shard are those of the shard of the same
   number there (its boards, picks and decisions; the labelling bot's own 0 and 1-ply values computed again), rolled
   out again by this bot: the whole set re-rolled with an improved network, as GNU Backgammon re-rolled its
   training sets with each better net (``shared/RESEARCH.md``). With the source's seed (and trials and batch) each
   batch rolls on the source's dice, so the two sets pair position by position; the shard's ``meta`` names its
   source (``source``: the file, a digest, its settings and labeller).
2. **Labels** (``label_shard``): each position rolled out by the bot (``bgai.eval.rollout.rollout_batch``: 0-ply,
   cubeless, variance reduction, ``trials`` trials truncated after ``truncate`` plies), ``batch`` positions at a
   time on the same dice, each batch's dice seeded by (seed, shard, batch). The means are the labels, with their
   standard errors (``se``, ``equity_se``).

Everything is seeded: a shard is a function of (bot, settings, shard number), so a stopped run resumes where it
stood (``.partial`` folder: the positions, then a file a batch) and gives the file it would have given whole.

A shard is one ``shard-NNNNN.npz``: ``boards`` (N, 26) int8, on-roll view before the roll; ``probabilities``
(N, 5) float32, the five cumulative probabilities of the player on roll (win, win gammon, win backgammon, lose
gammon, lose backgammon); ``se`` (N, 5) and ``equity_se`` (N,) float16, the standard errors; ``ply0`` and ``ply1``
(N, 5) float32, the labelling network's own values; ``picked`` (N,) int8; ``decision`` (N,) int32, the sampled
position a play's position came from (-1 without ``plays``); and ``meta``, a JSON string: the
settings, the labelling network and a digest of its weights, the command, commit, date, machine and seconds.
``MANIFEST.json`` in the folder lists the shards. No value in a shard comes from another engine.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from bgai.core.errors import BgaiError
from bgai.core.files import provenance, write_atomically, write_json, write_npz
from bgai.core.phase import BEAROFF, NAMES, OVER, RACE, classify
from bgai.eval.weights import ModelSnapshot, equity

#: A shard's file: its number, five digits.
SHARD_NAME = "shard-{:05d}.npz"
LABEL_FORMAT = 2  # 2: ``decision`` (format 1 shards are read with decision -1)


def _field(default, help: str):
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class LabelSettings:
    """How a shard is made (see the module docstring; ``help(name)`` says what a field is)."""

    positions: int = _field(5000, "positions a shard holds (with plays: at most; plays that finish the game or "
                                  "reach a bear-off are left out, and a roll may have fewer plays)")
    candidates: float = _field(3.0, "self-play positions sampled for each one kept")
    disagreement: float = _field(0.5, "share of a shard picked where the 1-ply value is farthest from the 0-ply "
                                      "value (the rest: uniformly)")
    epsilon: float = _field(0.1, "share of random plays in the self-play games")
    race: float = _field(0.2, "share of a shard taken from races (contact and crashed positions the rest), as far "
                              "as the games give them")
    trials: int = _field(72, "trials of each position's rollout")
    truncate: int = _field(7, "plies a trial is played before the network's value ends it (0: played out)")
    batch: int = _field(250, "positions rolled out together on the same dice (a stopped run loses at most one "
                             "batch)")
    lockstep: int = _field(2592, "games played in lock-step by the rollout (``RolloutSettings.batch``)")
    seed: int = _field(1, "seed of the self-play games, the picks and the rollouts' dice")
    plays: int = _field(0, "0: label the sampled positions themselves; k: for each sampled position a seeded roll, "
                           "and its k best plays by 0-ply labelled side by side (the positions after them, the "
                           "opponent on roll): what ranking a roll's plays needs")
    relabel: str = _field("", "a folder of label shards whose positions are rolled out again, each shard's from the "
                              "shard of the same number there (the sampling settings then unused; with the "
                              "source's seed, trials and batch each batch rolls on the source's dice)")

    def __post_init__(self) -> None:
        for name, low in (("positions", 1), ("trials", 2), ("truncate", 0), ("batch", 1), ("lockstep", 1),
                          ("seed", 0), ("plays", 0)):
            value = getattr(self, name)
            if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= low):
                raise BgaiError(f"{name} must be an integer >= {low}, got {value!r}")
        if not (isinstance(self.candidates, (int, float)) and self.candidates >= 1):
            raise BgaiError(f"candidates must be a number >= 1, got {self.candidates!r}")
        for name in ("disagreement", "epsilon", "race"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1):
                raise BgaiError(f"{name} must be a share from 0 to 1, got {value!r}")
        if not isinstance(self.relabel, str):
            raise BgaiError(f"relabel must be a folder's path (a string), got {self.relabel!r}")
        if self.relabel:  # one spelling of a folder, so that a resumed shard finds its own settings
            object.__setattr__(self, "relabel", os.path.normpath(self.relabel))

    @classmethod
    def help(cls, name: str) -> str:
        return next(f.metadata["help"] for f in fields(cls) if f.name == name)

    @classmethod
    def from_dict(cls, values: dict) -> LabelSettings:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


# Positions --------------------------------------------------------------------------------------------------------


#: Self-play game ids of shard k start at k times this (shards never share a game).
GAMES_PER_SHARD = 1_000_000
SELFPLAY_BATCH = 512


def _self_play_positions(bot, shard: int, settings: LabelSettings, wanted: int) -> np.ndarray:
    """At least ``wanted`` distinct live positions (or all that 2,000 batches of games give) from self-play games of
    ``bot`` at 0-ply with ``epsilon`` exploration, in a seeded random order."""
    from bgai.train.selfplay import SelfPlayWorker

    worker = SelfPlayWorker(bot.model, lam=0.0, seed=settings.seed, epsilon=settings.epsilon)
    rng = np.random.default_rng([settings.seed, shard, 0])
    seen = np.empty((0, 26), dtype=np.int8)
    first = shard * GAMES_PER_SHARD
    # A game gives some thirty new positions: a batch of games about enough, in a power of two up to 512.
    games = int(min(SELFPLAY_BATCH, 2 ** math.ceil(math.log2(max(8, wanted / 30)))))
    for k in range(2000):
        experience = worker.play(first + k * games, games, rng)
        # Experience.boards are the chosen afterstates (the opponent on roll next): positions before a roll.
        seen = np.unique(np.concatenate([seen, experience.boards]), axis=0)
        seen = seen[~np.isin(classify(seen), (OVER, BEAROFF))]
        if len(seen) >= wanted:
            break
    return seen[rng.permutation(len(seen))]


def shard_positions(bot, shard: int, settings: LabelSettings) -> dict[str, np.ndarray]:
    """The positions of shard ``shard`` with the bot's 0-ply and 1-ply values, how each was picked and the decision
    it is a play of (see the module docstring): ``boards``, ``ply0``, ``ply1``, ``picked``, ``decision``."""
    if settings.relabel:
        return _relabelled_positions(bot, shard, settings)
    wanted = settings.positions if not settings.plays else -(-settings.positions // settings.plays)
    candidates = _self_play_positions(bot, shard, settings, int(math.ceil(settings.candidates * wanted)))
    rng = np.random.default_rng([settings.seed, shard, 1])
    ply0 = bot.lookahead(candidates, 0).astype(np.float32)
    ply1 = bot.lookahead(candidates, 1).astype(np.float32)
    moved = np.abs(equity(ply1.astype(np.float64)) - equity(ply0.astype(np.float64)))
    race = classify(candidates) == RACE
    races = min(int(race.sum()), int(round(settings.race * wanted)))
    rows, picked = [], []
    for group, count in ((np.flatnonzero(race), races), (np.flatnonzero(~race), wanted - races)):
        count = min(count, len(group))
        uniform = int(round((1 - settings.disagreement) * count))
        order = group[rng.permutation(len(group))]
        chosen, rest = order[:uniform], order[uniform:]
        top = rest[np.argsort(-moved[rest], kind="stable")[:count - uniform]]
        rows += [chosen, top]
        picked += [np.zeros(len(chosen), dtype=np.int8), np.ones(len(top), dtype=np.int8)]
    index = np.concatenate(rows)
    if settings.plays:
        return _decision_plays(bot, shard, settings, candidates[index], np.concatenate(picked))
    return {"boards": candidates[index], "ply0": ply0[index], "ply1": ply1[index], "picked": np.concatenate(picked),
            "decision": np.full(len(index), -1, dtype=np.int32)}


def _decision_plays(bot, shard: int, settings: LabelSettings, roots: np.ndarray, picked: np.ndarray
                    ) -> dict[str, np.ndarray]:
    """For each root position a seeded roll and its ``plays`` best plays by the bot's 0-ply value: the positions
    after them (the opponent on roll), ``decision`` the root each came from and ``picked`` the root's pick. Plays
    that finish the game or reach a bear-off are left out (the database and the result answer those)."""
    from bgai.core.movegen import afterstates

    rng = np.random.default_rng([settings.seed, shard, 3])
    dice = rng.integers(1, 7, size=(len(roots), 2))
    moves = afterstates(roots, dice)
    ours = -equity(bot.lookahead(moves.after, 0).astype(np.float64))  # the mover's equity after each play
    order = np.lexsort((-ours, moves.owner))  # by root, the best play first
    owner = moves.owner[order]
    place = np.arange(len(order)) - np.searchsorted(owner, owner)
    keep = order[place < settings.plays]
    keep = keep[~np.isin(classify(moves.after[keep]), (OVER, BEAROFF))]
    boards, decision = moves.after[keep], moves.owner[keep].astype(np.int32)
    return {"boards": boards, "ply0": bot.lookahead(boards, 0).astype(np.float32),
            "ply1": bot.lookahead(boards, 1).astype(np.float32), "picked": picked[decision], "decision": decision}


def _relabel_source(settings: LabelSettings, shard: int) -> Path:
    """The shard whose positions shard ``shard`` rolls out again (``settings.relabel``), refused where it is not."""
    source = Path(settings.relabel) / SHARD_NAME.format(shard)
    if not source.is_file():
        raise BgaiError(f"{settings.relabel}: no {source.name} to roll out again")
    return source


def _relabelled_positions(bot, shard: int, settings: LabelSettings) -> dict[str, np.ndarray]:
    """The positions of shard ``shard`` of the folder ``settings.relabel``, with this bot's own 0 and 1-ply values."""
    before, _ = read_shard(_relabel_source(settings, shard))
    return {"boards": before.boards, "ply0": bot.lookahead(before.boards, 0).astype(np.float32),
            "ply1": bot.lookahead(before.boards, 1).astype(np.float32), "picked": before.picked,
            "decision": before.decision}


# Labels -----------------------------------------------------------------------------------------------------------


def batch_seed(settings: LabelSettings, shard: int, index: int) -> int:
    """The dice seed of batch ``index`` of shard ``shard``."""
    return int(np.random.SeedSequence([settings.seed, shard, 2, index]).generate_state(1, np.uint32)[0])


def network_digest(bot) -> str:
    """A short digest of the bot's weights (which network labelled a shard)."""
    h = hashlib.sha256()
    weights = ModelSnapshot.of(bot.model).weights  # (a torch model's too)
    for key in sorted(weights):
        h.update(key.encode())
        h.update(np.ascontiguousarray(weights[key]).tobytes())
    return h.hexdigest()[:16]


def _read_npz(path: Path, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as stored:
            missing = [n for n in names if n not in stored.files and n != "decision"]
            if missing:
                raise BgaiError(f"{path}: not a bgai label file (no {', '.join(missing)})")
            arrays = {n: stored[n] for n in names if n in stored.files}
            if "decision" in names and "decision" not in arrays:  # format 1: every position a sampled one
                arrays["decision"] = np.full(len(arrays["boards"]), -1, dtype=np.int32)
            return arrays
    except BgaiError:
        raise
    except Exception as e:  # a truncated or corrupt archive
        raise BgaiError(f"{path}: unreadable label file ({type(e).__name__}: {e})") from None


POSITION_ARRAYS = ("boards", "ply0", "ply1", "picked", "decision")
BATCH_ARRAYS = ("probabilities", "se", "equity_se")


def label_shard(bot, folder: str | Path, shard: int, settings: LabelSettings = LabelSettings(), *,
                progress: bool = False, command: str | None = None, jobs: int = 1) -> Path:
    """Make shard ``shard`` in ``folder`` (see the module docstring) and return its file; a shard already there is
    left as it is. Work in progress is kept in ``shard-NNNNN.partial/`` (the positions, then one file a batch), so
    the same call after a stop loses at most the batch that was running. ``jobs``: threads (or beyond four, worker
    processes) sharing each batch's rollouts (``rollout_batch``; 0: one a core); the labels do not depend on it."""
    from bgai.eval.rollout import rollout_batch

    if not (isinstance(shard, int) and not isinstance(shard, bool) and 0 <= shard < 100_000):
        raise BgaiError(f"shard must be a whole number from 0 to 99999, got {shard!r}")
    folder = Path(folder)
    path = folder / SHARD_NAME.format(shard)
    if path.exists():
        return path
    source = _relabel_source(settings, shard) if settings.relabel else None  # (refused before any work)
    partial = folder / (path.stem + ".partial")
    partial.mkdir(parents=True, exist_ok=True)
    settings_file = partial / "settings.json"
    if settings_file.exists():
        before = LabelSettings.from_dict(json.loads(settings_file.read_text()))
        if before != settings:
            raise BgaiError(f"{partial} was started with other settings ({before}); finish it with those or delete "
                            f"the folder")
    else:
        write_atomically(settings_file, lambda f: f.write(json.dumps(asdict(settings)).encode()))
    started = time.perf_counter()
    positions_file = partial / "positions.npz"
    if positions_file.exists():
        positions = _read_npz(positions_file, POSITION_ARRAYS)
    else:
        positions = shard_positions(bot, shard, settings)
        write_npz(positions_file, **positions)
    boards = positions["boards"]
    batches = range(0, len(boards), settings.batch)
    parts = []
    with tqdm(total=len(boards), unit="pos", disable=not progress, desc=f"shard {shard} rollouts") as bar:
        for index, lo in enumerate(batches):
            part_file = partial / f"batch-{index:04d}.npz"
            rows = boards[lo:lo + settings.batch]
            if part_file.exists():
                part = _read_npz(part_file, BATCH_ARRAYS)
            else:
                result = rollout_batch(bot, rows, trials=settings.trials, truncate=settings.truncate or None,
                                       seed=batch_seed(settings, shard, index), batch=settings.lockstep,
                                       jobs=jobs)
                part = {"probabilities": result.probabilities.astype(np.float32),
                        "se": result.se.astype(np.float16), "equity_se": result.equity_se.astype(np.float16)}
                write_npz(part_file, **part)
            parts.append(part)
            bar.update(len(rows))
    labels = {name: np.concatenate([p[name] for p in parts]) for name in BATCH_ARRAYS}
    classes = classify(boards)
    meta = {
        "format": LABEL_FORMAT,
        "shard": shard,
        "positions": int(len(boards)),
        "settings": asdict(settings),
        "labeller": {"bot": bot.name, "weights": network_digest(bot), "plies": 0,
                     "pruner": bot.pruner is not None},
        "phases": {NAMES[c]: int((classes == c).sum()) for c in np.unique(classes)},
        "mean_equity_se": float(np.mean(labels["equity_se"].astype(np.float64))),
        **({"source": _source_meta(source)} if source is not None else {}),
        **provenance(command),
        "seconds_this_run": round(time.perf_counter() - started, 1),
    }
    write_npz(path, **{k: positions[k] for k in POSITION_ARRAYS}, **labels, meta=np.array(json.dumps(meta)))
    shutil.rmtree(partial, ignore_errors=True)
    write_manifest(folder)
    return path


def _source_meta(source: Path) -> dict:
    """What a shard rolled out again came from: the source file, its digest, and its settings and labeller (the
    sampling settings that made its positions, its seed: the same seed rolls each batch on the same dice)."""
    meta = read_shard(source)[1]
    return {"file": str(source), "sha256": hashlib.sha256(source.read_bytes()).hexdigest()[:16],
            "settings": meta.get("settings"), "labeller": meta.get("labeller")}


# Reading ----------------------------------------------------------------------------------------------------------


@dataclass
class LabelSet:
    """Labelled positions (one shard or many): the arrays of the module docstring, and ``shard`` (N,) the shard
    each row came from."""

    boards: np.ndarray
    probabilities: np.ndarray
    se: np.ndarray
    equity_se: np.ndarray
    ply0: np.ndarray
    ply1: np.ndarray
    picked: np.ndarray
    decision: np.ndarray
    shard: np.ndarray

    def __len__(self) -> int:
        return len(self.boards)

    def subset(self, rows) -> LabelSet:
        return LabelSet(**{f.name: getattr(self, f.name)[rows] for f in fields(self)})


SHARD_ARRAYS = POSITION_ARRAYS + BATCH_ARRAYS


def read_shard(path: str | Path) -> tuple[LabelSet, dict]:
    """One shard's positions and labels, and its ``meta``; a file that is not a whole, consistent shard is refused
    with its name."""
    path = Path(path)
    arrays = _read_npz(path, SHARD_ARRAYS + ("meta",))
    try:
        meta = json.loads(str(arrays.pop("meta")))
    except ValueError:
        raise BgaiError(f"{path}: its meta is not JSON") from None
    n = len(arrays["boards"])
    shapes = {"boards": (n, 26), "probabilities": (n, 5), "se": (n, 5), "equity_se": (n,), "ply0": (n, 5),
              "ply1": (n, 5), "picked": (n,), "decision": (n,)}
    for name, shape in shapes.items():
        if arrays[name].shape != shape:
            raise BgaiError(f"{path}: {name} has shape {arrays[name].shape}, expected {shape}")
    if arrays["boards"].dtype != np.int8:
        raise BgaiError(f"{path}: boards must be int8, not {arrays['boards'].dtype}")
    probs = arrays["probabilities"]
    # A variance-reduced mean may stray a little outside 0..1 (a backgammon rate near 0 minus its luck): learners
    # clip it. Far outside is not a rollout's.
    if not np.isfinite(probs).all() or (probs < -0.5).any() or (probs > 1.5).any():
        raise BgaiError(f"{path}: probabilities far outside 0..1")
    return LabelSet(**arrays, shard=np.full(n, meta.get("shard", -1), dtype=np.int32)), meta


def shard_files(folder: str | Path) -> list[Path]:
    return sorted(Path(folder).glob("shard-[0-9][0-9][0-9][0-9][0-9].npz"))


def load_labels(folder: str | Path) -> LabelSet:
    """Every finished shard of ``folder``, concatenated in shard order."""
    files = shard_files(folder)
    if not files:
        raise BgaiError(f"{folder}: no label shards (shard-NNNNN.npz) there")
    sets = [read_shard(f)[0] for f in files]
    return LabelSet(**{f.name: np.concatenate([getattr(s, f.name) for s in sets]) for f in fields(LabelSet)})


def write_manifest(folder: str | Path) -> dict:
    """``MANIFEST.json``: each finished shard's meta and the totals (rewritten after each shard)."""
    folder = Path(folder)
    shards = [read_shard(f)[1] for f in shard_files(folder)]
    phases: dict[str, int] = {}
    for meta in shards:
        for name, count in meta.get("phases", {}).items():
            phases[name] = phases.get(name, 0) + count
    manifest = {"positions": sum(m["positions"] for m in shards), "shards": len(shards), "phases": phases,
                "files": [{"file": SHARD_NAME.format(m["shard"]), **m} for m in shards]}
    write_json(folder / "MANIFEST.json", manifest)
    return manifest


def parse_shards(text: str) -> range:
    """Shard numbers from ``"7"``, ``"0-9"`` (both ends included) or ``"3-"`` (from 3 on, until stopped)."""
    try:
        if "-" in text:
            lo, hi = text.split("-", 1)
            return range(int(lo), int(hi) + 1 if hi else 100_000)
        return range(int(text), int(text) + 1)
    except ValueError:
        raise BgaiError(f"--shards takes N, A-B or A- (shard numbers), got {text!r}") from None
