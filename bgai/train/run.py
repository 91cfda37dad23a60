"""Training runs: one model improved by a sequence of named stages, resumable, with TensorBoard curves.

A run's config (``bgai.train.config``: a TOML file read into a ``RunConfig``) says what model it trains and lists
its stages in order, each with a ``name`` and a ``method``; each method is a module of this package, which trains
one stage of it (``METHODS``):

``td`` (``bgai.train.td``)
    TD(λ) self-play: the model plays itself and learns from the λ-returns of its games; a stage may first grow the
    model (``hidden``: wider and deeper, the same function) and warm its learning rate up.
``lookahead`` (``bgai.train.lookahead``)
    Generations of supervised learning on the model's own search (its 1- or 2-ply lookahead, optionally carried
    along its games, or rollouts where it is least sure of itself).
``rollouts`` (``bgai.train.rollouts``)
    Supervised learning on positions labelled by rollouts of an earlier network (``bgai label``).

What every method shares lives once beside them: the run's state and checkpoints (``bgai.train.state``), the
learner, its losses and its learning-rate schedule (``bgai.train.learner``), and self-play (``bgai.train.selfplay``).

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

Stopping. While ``run`` works (in the main thread), SIGTERM, and SIGINT (Ctrl-C) unless the shell that started it
ignores SIGINT (``nohup``, a background job of a script), stop it with nothing lost: a TD stage plays out its round,
writes its checkpoint and raises ``Stopped``; a second signal, or a signal during any other method, stops it at once
(``KeyboardInterrupt``), with a lookahead stage's parts and generations on disk.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bgai.core.files import locked_folder, write_json
from bgai.core.workers import Pool
from bgai.train import lookahead, rollouts, td
from bgai.train.config import RunConfig
from bgai.train.state import Run, Stopped, benchmark

__all__ = ["METHODS", "Stopped", "run"]

#: How each training method trains its stages: ``METHODS[stage.method](state, stage)`` (the methods' settings:
#: ``bgai.train.config.STAGES``).
METHODS: dict[str, Callable[[Run, Any], None]] = {
    "td": td.train, "lookahead": lookahead.train, "rollouts": rollouts.train}


def run(config: RunConfig, run_dir: str | Path, resume: bool = False, progress: bool = True,
        pool: Pool | None = None) -> dict:
    """Run (or continue) the stages of ``config`` in ``run_dir``; returns the final summary. ``pool``: workers to
    use instead of those ``config.workers`` and ``config.ray`` ask for (``bgai.core.workers``; left open)."""
    run_dir = Path(run_dir)
    with locked_folder(run_dir):
        return _run(config, run_dir, resume, progress, pool)


def _run(config: RunConfig, run_dir: Path, resume: bool, progress: bool, pool: Pool | None) -> dict:
    state = Run(config, run_dir, resume, progress, pool)
    with _stops_on_signals(state):
        try:
            while state.stage < len(config.stages):
                if state.stop_signal is not None:  # asked as the stage before ended (its checkpoint written)
                    raise Stopped(state.stop_signal, state)
                stage = config.stages[state.stage]
                grown = config.hidden_at(state.stage)
                if state.model.hidden != grown:  # the stage grows the model as it starts; its optimizer starts anew
                    state.model = state.model.grown(grown, seed=config.seed + state.stage)
                    state.writer.add_text("growth", f"stage {stage.name}: {state.model.describe()}", state.games)
                METHODS[stage.method](state, stage)
                # Not saved: a finished run resumed with a longer last stage goes on with that stage.
                state.stage, state.step, state.optimizer_state, state.play_weights = state.stage + 1, 0, None, None
                state.average = None
            final = benchmark(state.model, config.final_bench_games, seed=777, pool=state.pool)
            summary = {"run_dir": str(run_dir), "games": state.games, "hours": state.seconds / 3600,
                       "stages": [s.name for s in config.stages], "final": final}
            state.writer.add_hparams(
                {k: v for k, v in config.as_dict().items() if isinstance(v, (int, float, str))},
                {f"hparam/ppg_vs_{name}": figures["ppg"] for name, figures in final.items() if figures["games"]},
                run_name=".",
            )
            write_json(run_dir / "summary.json", summary, indent=2)
            return summary
        finally:
            state.close()


@contextlib.contextmanager
def _stops_on_signals(state: Run) -> Iterator[None]:
    """While the run works, SIGTERM, and SIGINT unless it is ignored, stop it (see the module's doc)."""
    if threading.current_thread() is not threading.main_thread():  # (only the main thread may handle signals)
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        if state.stops_at_checkpoint and state.stop_signal is None:
            state.stop_signal = signum
            print(f"\nbgai train: {signal.Signals(signum).name}: stopping at the end of this round, with a "
                  "checkpoint (a second signal stops at once)", file=sys.stderr, flush=True)
            return
        raise KeyboardInterrupt(signal.Signals(signum).name)

    asked = [signal.SIGTERM] + ([signal.SIGINT] if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN else [])
    before = {signum: signal.signal(signum, stop) for signum in asked}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
