"""The ``td`` training method: TD(λ) self-play (``bgai.train.selfplay``: the model plays itself, each position's target
its λ-return), ``lam = 0`` being TD(0) with sampled backups, each position's target the model's value of the next
position its game reached. A stage with ``hidden`` first grows the model (``EquityModel.grown``: wider and deeper,
computing the same function) and ``warmup`` raises the learning rate from 0 over its first games, so that the new
units' first steps are small; growth by self-play is a sequence of such stages (training/configs/deep.toml).
``average_half_life`` keeps a moving average of the weights beside the model (Polyak's averaging; the model plays
and learns as without it), saved as the stage's ``STAGE-avg`` network at its end. With a ``pruner`` (a small net
trained on the model's own values, ``training/pruner.py``) the model judges only the pruning net's best ``prune``
plays of each move (``Bot.replies``), as its lookahead's replies do: fewer evaluations a game, for a choice that now
and then misses the model's own best play.
"""

from __future__ import annotations

import concurrent.futures
import copy
import time
from typing import Any

import torch

from bgai.eval.bot import load_pruner
from bgai.eval.checkpoint import model_payload, save_checkpoint
from bgai.eval.network import ModelSnapshot
from bgai.train.config import TDStage
from bgai.train.learner import Learner, linear_lr
from bgai.train.selfplay import Experience, SelfPlayWorker, merge_experience, play_task, split_games
from bgai.train.state import Run


def train(state: Run, stage: TDStage) -> None:
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
        learner = Learner(state.model, stage.lr, stage.batch_size, stage.epochs, device=state.device,
                          precision=state.config.learner_precision)
        if state.optimizer_state is not None:
            learner.load_optimizer_state(state.optimizer_state)
    except BaseException:
        rounds.close()  # (the round in flight must not outlive the pool it plays on)
        raise
    next_bench = (state.step // stage.bench_every + 1) * stage.bench_every
    last = state.history[-1]["pubeval"] if state.history else None
    bar = tqdm(total=stage.games, initial=state.step, unit="game", disable=not state.progress,
               desc=f"{state.config.run_name}/{stage.name}")
    state.stops_at_checkpoint = True  # a stop asked for waits for the round's end and its checkpoint
    try:
        while state.step < stage.games:
            started = time.perf_counter()
            n = min(stage.parallel_games, stage.games - state.step)
            for group in learner.optimizer.param_groups:
                group["lr"] = learning_rate(stage, state.step)
            experience = rounds.next(n)
            play_seconds = time.perf_counter() - started
            loss = learner.fit(experience.boards, experience.targets, state.rng)
            if stage.average_half_life:
                update_average(state, 0.5 ** (n / stage.average_half_life))
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
        # The stage's network stays playable (load_bot), as a lookahead generation's: a growth run's milestones.
        save_checkpoint(state.run_dir / "generations" / f"{stage.name}.pt",
                        {**model_payload(state.model), "games": state.games, "seconds": state.seconds})
        if stage.average_half_life and state.average is not None:
            save_checkpoint(state.run_dir / "generations" / f"{stage.name}-avg.pt",
                            {**model_payload(averaged_model(state)), "games": state.games, "seconds": state.seconds})
    finally:
        state.stops_at_checkpoint = False
        rounds.close()
        bar.close()


def update_average(state: Run, keep: float) -> None:
    """Fold the model's weights into the run's moving average of them (``state.average``, begun from the weights
    themselves): each average weight keeps ``keep`` of itself and takes the rest from the model's."""
    weights = state.model.state_dict()
    if state.average is None:
        state.average = {key: value.detach().to("cpu", torch.float32, copy=True) for key, value in weights.items()}
        return
    for key, value in weights.items():
        state.average[key].mul_(keep).add_(value.detach().to("cpu", torch.float32), alpha=1 - keep)


def averaged_model(state: Run):
    """A copy of the model with the run's moving average of its weights."""
    model = copy.deepcopy(state.model)
    assert state.average is not None
    model.load_state_dict(state.average)
    return model


def learning_rate(stage: TDStage, step: int) -> float:
    """The learning rate at the stage's game ``step``: from ``lr`` to ``lr_end`` over the stage's games
    (``linear_lr``), times the warm-up's share over its first ``warmup`` games."""
    lr = linear_lr(stage.lr, stage.lr_end, step / stage.games)
    return lr * min(1.0, (step + 1) / stage.warmup) if stage.warmup else lr


class _TDRounds:
    """The self-play rounds of a TD stage (see ``_td_stage``): ``next(n)`` is the experience of the run's next ``n``
    games. Game ids follow the run's games, so every stage and round plays new dice."""

    def __init__(self, state: Run, stage: TDStage) -> None:
        self.state, self.stage = state, stage
        # the pruning net of the stage's moves (TDStage.pruner) and the plays it leaves the model
        self.pruning: dict[str, Any] = {}
        if stage.pruner:
            net, keep = load_pruner(stage.pruner)
            self.pruning = {"pruner": net, "prune": stage.prune or keep}
        self.worker: SelfPlayWorker | None = None
        self.ahead: tuple[int, concurrent.futures.Future] | None = None  # the round the workers are playing
        self.executor: concurrent.futures.ThreadPoolExecutor | None = None
        if state.pool is None:
            self.worker = SelfPlayWorker(ModelSnapshot.of(state.model), stage.lam, state.config.seed, stage.epsilon,
                                         **self.pruning)
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
                            epsilon=stage.epsilon, **self.pruning)
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
