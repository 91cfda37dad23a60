"""The fast network against the 512-256 one, and a rollout's threads against its worker processes, side by side in
one process on this machine (the figures of docs/figures.md's "The fast network at 0 and 1-ply" and
docs/rollouts.md's "Threads instead of processes").

    python benchmarks/fast_network_bench.py [--positions 200] [--trials 648] [--json FILE]
    python benchmarks/fast_network_bench.py --networks NETWORK [NETWORK ...] [--plies 0 1] [--own-pruners]
                                            [--positions 200] [--json FILE]

With ``--networks`` it times those networks (checkpoints or ``.npz`` files) beside the fast network instead, at
``--plies`` (default 0 and 1; all with the fast network's pruning net, or with ``--own-pruners`` each with its own:
a shipped network's, ``OWN_PRUNERS``, any other none), each with its ratio to the fast network at the
same ply: what a candidate network costs a move (issue 20's budget: no more per evaluation than the fast network).
The fast network against the 512-256 one at 2-ply, as ``load_bot(plies=2)`` played each (docs/figures.md):
``--networks bgai/data/bgai-default.npz --plies 2 --own-pruners``.

* **Time per move**: ``choose_move`` of the fast network (``bgai/data/bgai-fast.npz``) and of the 512-256 one
  (``bgai-default.npz``), each with its own pruning net, on ``ply_speed.py``'s positions (met in gnubg-nn 0-ply
  self-play, each with a roll), one thread, alternating three times; the fastest pass of each. At 1-ply both with
  the default filter, and the 512-256 one also with the filter before it (8 plays within 0.16).
  And the fast network at 1-ply with the pruning net it had before (``OLD_FAST_PRUNER``: 231-64, on the
  network's own inputs, keeping 4) instead of its shipped one (197-128 on Tesauro's inputs, keeping 5).
* **Rollout jobs**: ``rollout(load_bot(), position, trials, jobs=2)`` of the opening and the prime position on 2
  threads (``jobs`` up to ``bgai.eval.rollout.THREAD_JOBS``), on 2 worker processes (``THREAD_JOBS`` set to 1: their
  start-up counted, as a user waits for it) and in one thread, with the equities of each (they must agree); and
  on 2 threads with ``OLD_FAST_PRUNER``.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import gc  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from bgai import Position  # noqa: E402
from bgai.coach.oracles import gnubg_positions  # noqa: E402
from bgai.core import movegen  # noqa: E402
from bgai.core.files import provenance, write_json  # noqa: E402
from bgai.core.progress import ticking  # noqa: E402
from bgai.eval import bearoff  # noqa: E402
from bgai.eval import rollout as ro  # noqa: E402
from bgai.eval.bot import FAST_NPZ, FAST_PRUNER, MAX_PLIES, OWN_PRUNERS, SHIPPED_NPZ, MoveFilter, load_bot  # noqa: E402

ROLLOUT_POSITIONS = {"opening": "4HPwATDgc/ABMA", "prime": "trsDADBsuw0GAA"}
OLD_FAST_PRUNER = Path(__file__).parents[1] / "checkpoints" / "shipped" / "experiments" / "s-512-64-init-24-pruner.npz"


def time_per_move(positions: int) -> dict:
    bots = {
        "0-ply fast": load_bot(FAST_NPZ, plies=0),
        "0-ply 512-256": load_bot(SHIPPED_NPZ, plies=0),
        "1-ply fast": load_bot(FAST_NPZ, plies=1),
        "1-ply fast, the 231-64 pruning net": load_bot(FAST_NPZ, plies=1, pruner=OLD_FAST_PRUNER),
        "1-ply 512-256": load_bot(SHIPPED_NPZ, plies=1),
        "1-ply 512-256, filter 8 within 0.16": load_bot(SHIPPED_NPZ, plies=1, filters=(MoveFilter(8, 0.16),)),
    }
    return {"positions": positions, "ms_per_move": time_bots(bots, positions)}


def time_bots(bots: dict, positions: int) -> dict[str, float]:
    """The fastest of three passes of each bot's ``choose_move`` over the first ``positions`` of ``ply_speed.py``'s
    positions and rolls, alternating, one thread: milliseconds a move by name."""
    boards, dice, *_ = gnubg_positions(positions, 0)
    jobs = [(Position(b), (int(d[0]), int(d[1]))) for b, d in zip(boards, dice)]
    bearoff.database()
    best = dict.fromkeys(bots, float("inf"))
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            for name, bot in bots.items():
                for job in jobs[:10]:
                    bot.choose_move(*job)
                start = time.perf_counter()
                for job in jobs:
                    bot.choose_move(*job)
                best[name] = min(best[name], (time.perf_counter() - start) / len(jobs) * 1000)
    finally:
        gc.enable()
    for name, ms in best.items():
        print(f"  {name:<38} {ms:.3f} ms a move", flush=True)
    return best


def network_cost(networks: list[Path], positions: int, plies=(0, 1), own_pruners: bool = False) -> dict:
    """Each of ``networks`` and the fast network timed at each of ``plies`` (``time_bots``), with its ratio to the
    fast network at the same ply."""
    paths = {"fast": FAST_NPZ, **{str(path): path for path in networks}}
    runs = {f"{ply}-ply {name}": (path, ply) for ply in plies for name, path in paths.items()}
    pruners = {key: (OWN_PRUNERS.get(Path(path).resolve()) if own_pruners else FAST_PRUNER) if ply else None
               for key, (path, ply) in runs.items()}
    bots = {key: load_bot(path, plies=ply, pruner=pruners[key] or False) for key, (path, ply) in runs.items()}
    ms = time_bots(bots, positions)
    ratios = {name: value / ms[f"{name.split()[0]} fast"] for name, value in ms.items()}
    for name, ratio in ratios.items():
        print(f"  {name:<60} {ratio:.2f}x the fast network", flush=True)
    return {"positions": positions, "plies": list(plies), "own_pruners": own_pruners,
            "pruners": {name: pruner.name if pruner else None for name, pruner in pruners.items()}, "ms_per_move": ms,
            "ratio_to_fast": ratios}


def rollout_jobs(trials: int) -> dict:
    bot, old = load_bot(), load_bot(pruner=OLD_FAST_PRUNER)
    figures = {}
    for label, position_id in ROLLOUT_POSITIONS.items():
        pos = Position.from_position_id(position_id)
        ro.rollout(bot, pos, trials=36, seed=1)  # warm-up: the kernels compiled, the database loaded
        row = {}
        for how, jobs, thread_jobs in (("2 threads", 2, ro.THREAD_JOBS), ("2 processes", 2, 1), ("1 thread", 1, 1),
                                       ("2 threads, the 231-64 pruning net", 2, ro.THREAD_JOBS)):
            saved, ro.THREAD_JOBS = ro.THREAD_JOBS, thread_jobs
            try:
                with movegen.one_thread() if jobs == 1 else contextlib.nullcontext():
                    start = time.perf_counter()
                    result = ro.rollout(old if "231-64" in how else bot, pos, trials=trials, seed=2, jobs=jobs)
                    seconds = time.perf_counter() - start
            finally:
                ro.THREAD_JOBS = saved
            row[how] = {"seconds": seconds, "equity": result.equity.mean}
            print(f"  {label:<8} {how:<34} {seconds:6.2f} s  equity {result.equity.mean:+.4f}", flush=True)
        figures[label] = row
    return {"trials": trials, "rollouts": figures}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--trials", type=int, default=648)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--networks", type=Path, nargs="+", help="time these networks beside the fast one instead")
    parser.add_argument("--plies", type=int, nargs="+", choices=range(MAX_PLIES + 1), default=[0, 1],
                        help="with --networks: the plies to time them at (default 0 1)")
    parser.add_argument("--own-pruners", action="store_true",
                        help="with --networks: each network's own pruning net (load_bot's default) instead of the "
                             "fast network's")
    args = parser.parse_args(argv)
    if not args.networks and (args.own_pruners or args.plies != [0, 1]):
        parser.error("--plies and --own-pruners need --networks")
    if args.networks:
        figures = {**provenance(), **network_cost(args.networks, args.positions, args.plies, args.own_pruners)}
    else:
        print(f"Time per move, {args.positions} positions, one thread (fastest of 3 alternating passes):")
        figures = {**provenance(), **time_per_move(args.positions)}
        print(f"Rollouts of {args.trials} trials, 0-ply, variance reduction:")
        figures.update(rollout_jobs(args.trials))
    if args.json:
        write_json(args.json, figures, indent=2)


if __name__ == "__main__":
    with ticking("fast_network_bench"):  # the time spent, on standard error, while the parts run
        main()
