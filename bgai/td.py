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
targets only, cheap to send between processes); a ``Learner`` owns the network and optimizer and trains on
experience. ``train`` drives them in one process, the worker with a fresh snapshot each round; nothing in either
class depends on sharing memory with the other, so workers can move to other processes or machines.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from bgai import encoding
from bgai.bot import Bot, exact_probabilities
from bgai.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from bgai.errors import BgaiError
from bgai.game import game_over, play_duplicate, roll_dice
from bgai.movegen import afterstates
from bgai.network import EquityNet, equity, flip
from bgai.players import HeuristicPlayer, PubevalPlayer
from bgai.players.base import group_starts, segment_argmax
from bgai.position import START_BOARD


def _field(default, help: str):
    return field(default=default, metadata={"help": help})


@dataclass
class TrainConfig:
    """Hyperparameters of a TD(λ) self-play run. Every field can be set in a TOML file (``--config``) and on the
    command line (``--name value``); the command line wins."""

    run_name: str = _field("default", "name of the run (its folder under runs/ unless --run-dir is given)")
    seed: int = _field(0, "seed of the dice, the weight initialisation and the shuffling")
    games: int = _field(20_000, "self-play games to train on in total")
    parallel_games: int = _field(256, "games a worker plays at once (one round)")
    hidden: str = _field("128", "hidden layer sizes, comma separated (e.g. '128' or '256,128')")
    lam: float = _field(0.7, "λ of the λ-returns: 0 is TD(0), 1 is Monte Carlo")
    lr: float = _field(1e-3, "Adam learning rate at the start")
    lr_end: float = _field(-1.0, "learning rate reached linearly at the last game (negative: constant lr)")
    batch_size: int = _field(512, "learner minibatch size")
    epochs: int = _field(1, "passes of the learner over each round's experience")
    epsilon: float = _field(0.0, "chance that a self-play move is random (exploration beyond the dice)")
    bench_every: int = _field(5_000, "games between benchmarks against pubeval and the heuristic player")
    bench_games: int = _field(250, "dice sequences per benchmark (each played twice, seats swapped)")
    final_bench_games: int = _field(1_000, "dice sequences of the benchmark at the end of the run")
    checkpoint_minutes: float = _field(5.0, "minutes between checkpoints (one is also written at the end)")
    threads: int = _field(2, "torch threads")

    def hidden_sizes(self) -> tuple[int, ...]:
        try:
            sizes = tuple(int(part) for part in str(self.hidden).split(",") if part.strip())
        except ValueError:
            raise BgaiError(f"hidden must be comma-separated layer sizes, got {self.hidden!r}") from None
        if not sizes or min(sizes) < 1:
            raise BgaiError(f"hidden must name at least one positive layer size, got {self.hidden!r}")
        return sizes


def load_config(path: str | Path | None, overrides: dict | None = None) -> TrainConfig:
    """A config from defaults, then a TOML file, then ``overrides``; unknown keys are an error."""
    values: dict = {}
    if path is not None:
        try:
            values.update(tomllib.loads(Path(path).read_text()))
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise BgaiError(f"cannot read config {path}: {error}") from None
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    names = {f.name: f for f in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise BgaiError(f"unknown config key(s) {', '.join(unknown)}; known: {', '.join(names)}")
    config = TrainConfig()
    for key, value in values.items():
        kind = type(getattr(config, key))
        try:
            setattr(config, key, kind(value))
        except (TypeError, ValueError):
            raise BgaiError(f"config {key} must be {kind.__name__}, got {value!r}") from None
    config.hidden_sizes()
    return config


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


class SelfPlayWorker:
    """Plays self-play games with a snapshot of the network's weights."""

    def __init__(self, n_inputs: int, hidden: tuple[int, ...], lam: float, seed: int, epsilon: float = 0.0):
        self.net = EquityNet(n_inputs, hidden).eval()
        self.bot = Bot(self.net, name="self-play")
        self.lam = lam
        self.seed = seed
        self.epsilon = epsilon

    def load_weights(self, state_dict: dict) -> None:
        self.net.load_state_dict(state_dict)

    def play(self, first_game: int, n_games: int, rng: np.random.Generator) -> Experience:
        """Play games ``first_game .. first_game + n_games - 1`` to the end and return their experience."""
        ids = np.arange(first_game, first_game + n_games)
        boards = np.repeat(START_BOARD[None], n_games, axis=0)
        live = np.arange(n_games)
        record = []  # per turn: (games, chosen afterstates, their values, finished?)
        turn = 0
        while len(live):
            dice = roll_dice(self.seed, ids[live], np.full(len(live), turn))
            moves = afterstates(boards[live], dice, validate=False)
            values = self.bot.probabilities(moves.after)
            pick = segment_argmax(equity(flip(values)), moves.owner, len(live))
            if self.epsilon > 0:
                explore = rng.random(len(live)) < self.epsilon
                if explore.any():
                    starts, counts = group_starts(moves.owner, len(live))
                    pick[explore] = starts[explore] + (rng.random(explore.sum()) * counts[explore]).astype(np.int64)
            chosen = moves.after[pick]
            over = game_over(chosen)
            record.append((live, chosen, values[pick], over))
            boards[live] = chosen
            live = live[~over]
            turn += 1
        return self._lambda_returns(record, n_games)

    def _lambda_returns(self, record, n_games: int) -> Experience:
        lam = np.float32(self.lam)
        next_value = np.zeros((n_games, 5), dtype=np.float32)
        next_target = np.zeros((n_games, 5), dtype=np.float32)
        boards, targets = [], []
        gammons = backgammons = 0
        for games, chosen, values, over in reversed(record):
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


# Learning ----------------------------------------------------------------------------------------------------


class Learner:
    """Owns the network and its optimizer; trains on experience with binary cross-entropy on the 5 outputs."""

    def __init__(self, net: EquityNet, lr: float, batch_size: int, epochs: int):
        self.net = net
        self.optimizer = torch.optim.Adam(net.parameters(), lr=lr)
        self.batch_size = batch_size
        self.epochs = epochs
        self.loss_fn = nn.BCELoss()

    def update(self, experience: Experience, rng: np.random.Generator) -> float:
        """Train on one round of experience; returns the mean loss."""
        self.net.train()
        x = torch.from_numpy(encoding.encode(experience.boards))
        y = torch.from_numpy(experience.targets).clamp(0, 1)
        losses = []
        for _ in range(self.epochs):
            order = torch.from_numpy(rng.permutation(len(x)))
            for start in range(0, len(x), self.batch_size):
                batch = order[start:start + self.batch_size]
                pred = self.net(x[batch]).clamp(1e-6, 1 - 1e-6)
                loss = self.loss_fn(pred, y[batch])
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                self.optimizer.step()
                losses.append(loss.item())
        self.net.eval()
        return float(np.mean(losses)) if losses else float("nan")


# The training run --------------------------------------------------------------------------------------------


def benchmark(net: EquityNet, sequences: int, seed: int = 12345) -> dict:
    """Duplicate-game results of the network at 0-ply against pubeval and the heuristic player."""
    bot = Bot(copy.deepcopy(net))
    out = {}
    for name, opponent in (("pubeval", PubevalPlayer()), ("heuristic", HeuristicPlayer())):
        s = play_duplicate(bot, opponent, sequences, seed=seed, batch=1024).summary()
        out[name] = {k: s[k] for k in ("games", "ppg", "ppg_se", "win_rate", "gammon_rate", "backgammon_rate")}
    return out


def train(config: TrainConfig, run_dir: str | Path, resume: bool = False, progress: bool = True) -> dict:
    """Run (or continue) TD(λ) self-play training; returns the final summary. See the module docstring."""
    from torch.utils.tensorboard import SummaryWriter
    from tqdm.auto import tqdm

    run_dir = Path(run_dir)
    ckpt_path = run_dir / "checkpoint.pt"
    torch.set_num_threads(max(1, config.threads))
    hidden = config.hidden_sizes()
    torch.manual_seed(config.seed)
    net = EquityNet(encoding.N_FEATURES, hidden)
    learner = Learner(net, config.lr, config.batch_size, config.epochs)
    rng = np.random.default_rng(config.seed)
    games_done, history, seconds = 0, [], 0.0

    if resume:
        state = load_checkpoint(ckpt_path)
        if tuple(state["hidden"]) != hidden:
            raise CheckpointError(f"{ckpt_path} has hidden layers {tuple(state['hidden'])}, the config asks {hidden}")
        net.load_state_dict(state["model"])
        learner.optimizer.load_state_dict(state["optimizer"])
        rng.bit_generator.state = state["numpy_rng"]
        torch.set_rng_state(state["torch_rng"])
        games_done, history, seconds = state["games"], state["history"], state["seconds"]
    elif ckpt_path.exists():
        raise BgaiError(f"{ckpt_path} exists: pass --resume to continue that run, or choose another --run-dir")

    def save() -> None:
        save_checkpoint(ckpt_path, {
            "n_inputs": encoding.N_FEATURES,
            "hidden": list(hidden),
            "model": net.state_dict(),
            "optimizer": learner.optimizer.state_dict(),
            "config": dataclasses.asdict(config),
            "games": games_done,
            "seconds": seconds,
            "numpy_rng": rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(),
            "history": history,
        })

    worker = SelfPlayWorker(encoding.N_FEATURES, hidden, config.lam, config.seed, config.epsilon)
    writer = SummaryWriter(log_dir=str(run_dir / "tensorboard"), purge_step=games_done or None)
    if games_done == 0:
        writer.add_text("config", "\n".join(f"    {k} = {v!r}" for k, v in dataclasses.asdict(config).items()))
    last_save = time.monotonic()
    next_bench = (games_done // config.bench_every + 1) * config.bench_every
    last_bench = history[-1]["pubeval"]["ppg"] if history else float("nan")
    bar = tqdm(total=config.games, initial=games_done, unit="game", disable=not progress, desc=config.run_name)
    try:
        while games_done < config.games:
            started = time.perf_counter()
            n = min(config.parallel_games, config.games - games_done)
            if config.lr_end >= 0:
                for group in learner.optimizer.param_groups:
                    group["lr"] = config.lr + (config.lr_end - config.lr) * games_done / config.games
            worker.load_weights(net.state_dict())
            experience = worker.play(games_done, n, rng)
            play_seconds = time.perf_counter() - started
            loss = learner.update(experience, rng)
            elapsed = time.perf_counter() - started
            seconds += elapsed
            games_done += n
            bar.update(n)
            writer.add_scalar("loss/td", loss, games_done)
            writer.add_scalar("opt/lr", learner.optimizer.param_groups[0]["lr"], games_done)
            writer.add_scalar("perf/games_per_s", n / elapsed, games_done)
            writer.add_scalar("perf/selfplay_games_per_s", n / play_seconds, games_done)
            writer.add_scalar("selfplay/gammon_rate", experience.gammons / n, games_done)
            writer.add_scalar("selfplay/backgammon_rate", experience.backgammons / n, games_done)
            if games_done >= next_bench or games_done >= config.games:
                result = benchmark(net, config.bench_games)
                history.append({"games": games_done, "seconds": seconds, **result})
                for name, figures in result.items():
                    writer.add_scalar(f"eval/ppg_vs_{name}", figures["ppg"], games_done)
                    writer.add_scalar(f"eval/win_rate_vs_{name}", figures["win_rate"], games_done)
                last_bench = result["pubeval"]["ppg"]
                next_bench += config.bench_every
            bar.set_postfix(games_per_s=f"{n / elapsed:.0f}", td_loss=f"{loss:.4f}", ppg_pubeval=f"{last_bench:+.3f}")
            if time.monotonic() - last_save > 60 * config.checkpoint_minutes:
                save()
                last_save = time.monotonic()
        save()
    finally:
        bar.close()
    final = benchmark(net, config.final_bench_games, seed=777)
    summary = {"run_dir": str(run_dir), "games": games_done, "hours": seconds / 3600,
               "games_per_s": games_done / seconds if seconds else float("nan"), "final": final}
    writer.add_hparams(
        {k: v for k, v in dataclasses.asdict(config).items() if isinstance(v, (int, float, str))},
        {"hparam/ppg_vs_pubeval": final["pubeval"]["ppg"], "hparam/ppg_vs_heuristic": final["heuristic"]["ppg"]},
        run_name=".",
    )
    writer.close()
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary
