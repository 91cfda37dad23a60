"""The state of a training run (``Run``: the model, where the run stands, its history, clocks, workers and
TensorBoard writer) and the writing of its checkpoint; and ``benchmark``, the games a run measures itself by.

``Run.step`` counts what the current stage's method counts: games (td), finished generations (lookahead) or
finished epochs (rollouts).
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import numpy as np
import torch

from bgai.core.errors import BgaiError
from bgai.core.game import play_duplicate
from bgai.core.workers import Pool, default_workers, open_pool
from bgai.eval.bot import Bot
from bgai.eval.checkpoint import CheckpointError, load_checkpoint, model_from_checkpoint, model_payload, save_checkpoint
from bgai.eval.network import EquityModel, ModelSnapshot, phase_nets
from bgai.players import HeuristicPlayer, PubevalPlayer
from bgai.train.config import RunConfig
from bgai.train.learner import resolve_device

#: The run settings a launch may change without changing the run (``--resume`` with other ones), logged by each
#: launch to TensorBoard's ``launch`` text.
LAUNCH_SETTINGS = ("workers", "threads", "ray", "device", "learner_precision")


class Stopped(Exception):
    """The run was asked to stop (a signal: ``bgai.train.run``) and did, with its checkpoint written where it stood:
    ``--resume`` goes on from there with nothing lost."""

    def __init__(self, signum: int, state: Run) -> None:
        self.signum, self.games, self.path = signum, state.games, state.path
        stage = state.config.stages[state.stage].name if state.stage < len(state.config.stages) else "the end"
        super().__init__(f"stopped by {signal.Signals(signum).name} at {state.games:,} games (stage {stage}), "
                         f"its checkpoint written: {state.path}")


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
        try:
            self.device = resolve_device(config.device)  # the learner's
        except ValueError as error:
            raise BgaiError(str(error)) from None
        self.model = EquityModel.create(config.hidden_sizes(), config.net_names(), config.encoder)
        self.rng = np.random.default_rng(config.seed)
        self.stage, self.step, self.games, self.seconds, self.history = 0, 0, 0, 0.0, []
        self.optimizer_state = None
        self.play_weights = None  # a TD stage on workers: the weights its next round is played with
        self.average: dict[str, torch.Tensor] | None = None  # a TD stage's moving average of the weights
        # A stop asked for (the signal's number, ``bgai.train.run``), and whether the method under way stops at its
        # next checkpoint (``save_if_due``: a TD stage, after its round) rather than at once, losing what it was doing.
        self.stop_signal: int | None = None
        self.stops_at_checkpoint = False
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
            self.average = state.get("average")  # (absent from checkpoints written before it was kept)
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
        settings = config.as_dict()
        if not resume:
            self.writer.add_text("config", "    " + json.dumps(settings, indent=2).replace("\n", "\n    "))
        # Each launch's own settings (a resumed run may run on other workers or threads: benchmarks/run_speed.py)
        self.writer.add_text("launch", json.dumps({key: settings[key] for key in LAUNCH_SETTINGS}), self.games)
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
            "average": self.average,
        })
        self.last_save = time.monotonic()

    def save_if_due(self, optimizer: torch.optim.Optimizer) -> None:
        """Write the checkpoint if ``checkpoint_minutes`` have passed since the last one; or, if a stop was asked
        for, write it and stop (``Stopped``)."""
        if self.stop_signal is not None:
            self.save(optimizer)
            raise Stopped(self.stop_signal, self)
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
