"""Training on worker processes and Ray actors, side by side in one run, and a paper estimate for more workers.

    python benchmarks/workers_bench.py [--games 8192] [--repeats 1] [--json benchmarks/results/workers.json]

1. **TD training with learning** (``bgai.train.run.run``, the TD stage, continuing the shipped run from its
   checkpoint so games have their normal length): games per second in this process as before (2 threads, and 1),
   on 1 and 2 worker processes, and on 2 Ray actors of a local Ray instance (``ray.init(num_cpus=2)``). The pools
   are started and warmed before the clock starts (a run starts them once); each setting runs ``--repeats`` times,
   interleaved, and the best is kept (the machine is shared: the load average is recorded around each run).
2. **Lookahead targets** (the lookahead stage's parts, ``_targets_task``): 1-ply targets per second of positions
   from the shipped bot's games, in this process and on 1 and 2 worker processes.
3. **Ingredients of the estimate**: one worker's self-play games per second by games per task (no learning), the
   learner's positions per second, the bytes of a weight snapshot and of a game's experience, and the per-map
   overhead of each backend.
4. **Paper estimate** for 8, 32 and 128 workers (``estimate``), written into the JSON and printed.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from bgai.core.files import provenance, write_json
from bgai.core.progress import ticking
from bgai.core.workers import InProcessPool, ProcessPool, RayPool
from bgai.eval.bot import load_bot
from bgai.eval.checkpoint import load_checkpoint
from bgai.eval.network import EquityModel, ModelSnapshot
from bgai.train.config import load_config
from bgai.train.learner import Learner
from bgai.train.lookahead import Pruning, RolloutTargets, TargetsTask, _targets_task
from bgai.train.run import run
from bgai.train.selfplay import merge_experience, play_task, sample_positions, split_games

SHIPPED = Path(__file__).parents[1] / "bgai" / "data" / "bgai-default.pt"


def nothing(shared, task):
    """A task that does nothing: the per-map overhead of a backend, and a warm-up."""
    return task


def load() -> float:
    return os.getloadavg()[0]


def pid(shared, task) -> int:
    time.sleep(0.2)  # long enough that each worker takes one
    return os.getpid()


def worker_pids(pool) -> list[int]:
    """The processes of a pool's workers (Ray actors here too: the instance is local)."""
    return [] if pool is None or isinstance(pool, InProcessPool) else sorted(set(pool.map(pid, range(pool.workers))))


def cpu_seconds(pids: list[int]) -> float:
    """CPU time (user and system) of this process and of ``pids`` so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    total = usage.ru_utime + usage.ru_stime
    tick = os.sysconf("SC_CLK_TCK")
    for p in pids:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def shipped_settings() -> dict:
    state = load_checkpoint(SHIPPED)
    return {"init": str(SHIPPED), "hidden": ",".join(map(str, state["hidden"])), "encoder": state["encoder_version"],
            "nets": ",".join(state.get("phases", ["all"]))}


def training_speed(games: int, parallel_games: int, pool, threads: int, bgai_threads: str | None) -> dict:
    """Games per second of a TD training run (self-play and learning) of ``games`` games, and the cores it got
    (CPU seconds of this process and the workers over the wall-clock seconds)."""
    pids = worker_pids(pool)
    # Benchmarks off: none during the stage, and the one it ends with and the run's last on one dice sequence each.
    overrides = {**shipped_settings(), "games": games, "parallel_games": parallel_games, "bench_every": 10**9,
                 "bench_games": 1, "final_bench_games": 1, "checkpoint_minutes": 10**6, "threads": threads,
                 "workers": 1}
    saved = os.environ.get("BGAI_THREADS")
    if bgai_threads is not None:
        os.environ["BGAI_THREADS"] = bgai_threads
    try:
        with tempfile.TemporaryDirectory() as folder:
            before, cpu = load(), cpu_seconds(pids)
            started = time.perf_counter()
            run(load_config(None, overrides), folder, progress=False, pool=pool)
            seconds = time.perf_counter() - started
            cpu = cpu_seconds(pids) - cpu
    finally:
        if saved is None:
            os.environ.pop("BGAI_THREADS", None)
        else:
            os.environ["BGAI_THREADS"] = saved
    return {"games_per_s": games / seconds, "seconds": seconds, "cores_used": cpu / seconds,
            "games_per_cpu_s": games / cpu, "load_before": before, "load_after": load()}


def targets_speed(boards: np.ndarray, part: int, pool, snapshot: ModelSnapshot) -> dict:
    tasks = [TargetsTask(boards[lo:lo + part], 1, 0.0, False, False, RolloutTargets(), Pruning())
             for lo in range(0, len(boards), part)]
    pids = worker_pids(pool)
    before, cpu = load(), cpu_seconds(pids)
    started = time.perf_counter()
    pool.map(_targets_task, tasks, snapshot)
    seconds = time.perf_counter() - started
    cpu = cpu_seconds(pids) - cpu
    return {"positions_per_s": len(boards) / seconds, "seconds": seconds, "cores_used": cpu / seconds,
            "positions_per_cpu_s": len(boards) / cpu, "load_before": before, "load_after": load()}


def map_overhead(pool, snapshot: ModelSnapshot, tasks: int = 8, repeats: int = 20) -> float:
    """Seconds of one map of ``tasks`` empty tasks with a model snapshot: send, schedule, collect."""
    started = time.perf_counter()
    for _ in range(repeats):
        pool.map(nothing, list(range(tasks)), snapshot)
    return (time.perf_counter() - started) / repeats


def ingredients(pool1: ProcessPool, snapshot: ModelSnapshot, parallel_games: int) -> dict:
    """One worker's self-play speed by games per task, the learner's speed (one thread), the sizes that travel.
    Speeds are per CPU second of the worker or learner (both single-threaded): what a core of its own gives, on a
    machine whose other users take part of the cores."""
    per_task = {}
    for games in [g for g in (16, 64, 256) if g < parallel_games] + [parallel_games]:
        tasks = split_games(10**6 + games, games, 1, lam=0.7, seed=5)
        cpu = cpu_seconds(pool1.pids)
        pool1.map(play_task, tasks, snapshot)
        per_task[games] = games / (cpu_seconds(pool1.pids) - cpu)
    experience = merge_experience([play_task(snapshot, t) for t in split_games(2 * 10**6, parallel_games, 1,
                                                                                lam=0.7, seed=5)])
    torch.set_num_threads(1)
    learner = Learner(EquityModel.of(snapshot), 1e-4, 512, 1)
    learner.fit(experience.boards, experience.targets, np.random.default_rng(0))  # warm-up
    cpu = cpu_seconds([])
    learner.fit(experience.boards, experience.targets, np.random.default_rng(1))
    learn_seconds = cpu_seconds([]) - cpu
    positions_per_game = len(experience.boards) / experience.games
    experience_bytes = len(pickle.dumps(experience, protocol=pickle.HIGHEST_PROTOCOL))
    return {
        "worker_games_per_cpu_s_by_games_per_task": per_task,
        "learner_positions_per_cpu_s": len(experience.boards) / learn_seconds,
        "learner_games_per_cpu_s": experience.games / learn_seconds,
        "learner_threads": torch.get_num_threads(),
        "positions_per_game": positions_per_game,
        "experience_bytes_per_game": experience_bytes / experience.games,
        "snapshot_bytes": len(pickle.dumps(snapshot, protocol=pickle.HIGHEST_PROTOCOL)),
    }


def estimate(parts: dict, parallel_games: int, bandwidth: float = 1e9, latency: float = 2e-3,
             per_worker_games: int = 128) -> dict:
    """Games per second of TD training on N workers of a core each, from the measured ingredients.

    A round: the main process sends one snapshot per worker (Ray: one to the object store, then one copy per node
    it is pulled to: the same bytes), the workers play their share, their experience comes back, the learner
    trains on it; nothing overlaps. ``bandwidth`` (bytes/s) and ``latency`` (s per round, scheduling and
    messages) are assumptions for a 10 Gb/s cluster network. Two ways to size a round: the same ``parallel_games``
    split more thinly (the learning is then exactly that of one worker's run), or ``per_worker_games`` each (the
    round grows with N; each worker stays efficient).
    """
    speed = {int(k): v for k, v in parts["worker_games_per_cpu_s_by_games_per_task"].items()}
    sizes = np.array(sorted(speed))

    def worker_speed(games_per_task: float) -> float:  # interpolated on the log of the task size
        return float(np.interp(np.log(games_per_task), np.log(sizes), [speed[s] for s in sizes]))

    out = {"assumptions": {"bandwidth_bytes_per_s": bandwidth, "latency_s_per_round": latency,
                           "per_worker_games": per_worker_games},
           "learner_limit_games_per_cpu_s": parts["learner_games_per_cpu_s"]}
    for n in (1, 2, 8, 32, 128):
        rows = {}
        for name, round_games in (("fixed_round", parallel_games), ("growing_round", n * per_worker_games)):
            share = round_games / n
            play = share / worker_speed(share)
            learn = round_games / parts["learner_games_per_cpu_s"]
            move = (n * parts["snapshot_bytes"] + round_games * parts["experience_bytes_per_game"]) / bandwidth
            total = play + learn + move + latency
            rows[name] = {"round_games": round_games, "games_per_s": round_games / total,
                          "share_playing": play / total, "share_learning": learn / total,
                          "share_moving_data": move / total}
        out[n] = rows
    # Where the learner becomes the bottleneck: N workers play as fast as one learner learns
    efficient = worker_speed(per_worker_games)
    out["workers_where_learning_takes_as_long_as_playing"] = parts["learner_games_per_cpu_s"] / efficient
    if "targets_1ply_positions_per_cpu_s" in parts:
        out["lookahead_generation"] = lookahead_estimate(parts)
    return out


def lookahead_estimate(parts: dict, positions: int = 100_000, buffer: int = 3, epochs: int = 2) -> dict:
    """Seconds of one lookahead generation with the default stage settings (``positions`` 1-ply targets, then
    ``epochs`` passes over ``buffer`` generations), on N workers: the targets spread, the training does not."""
    targets = positions / parts["targets_1ply_positions_per_cpu_s"]
    learning = buffer * positions * epochs / parts["learner_positions_per_cpu_s"]
    rows = {n: {"seconds": targets / n + learning, "share_learning": learning / (targets / n + learning)}
            for n in (1, 2, 8, 32, 128)}
    return {"positions": positions, "buffer": buffer, "epochs": epochs, "by_workers": rows,
            "workers_where_learning_takes_as_long_as_targets": targets / learning}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=8192,
                        help="games per training measurement (16 rounds: learning overlaps play after the first)")
    parser.add_argument("--parallel-games", type=int, default=512, help="games per round (the shipped run's)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each setting (the best is kept)")
    parser.add_argument("--positions", type=int, default=4000, help="positions of the target measurement")
    parser.add_argument("--part", type=int, default=500, help="positions per target part")
    parser.add_argument("--self-play", type=int, default=200, help="self-play games the target positions come from")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray measurements")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()

    result = {**provenance(), "cores_available": len(os.sched_getaffinity(0)), "torch": torch.__version__,
              "load_average_at_start": os.getloadavg(), "games": args.games, "parallel_games": args.parallel_games}
    snapshot = ModelSnapshot.of(load_bot(SHIPPED).model)
    pools = {"1 worker process": ProcessPool(1), "2 worker processes": ProcessPool(2)}
    if not args.no_ray:
        import ray

        ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
        pools["2 Ray actors"] = RayPool(2)
    for pool in pools.values():  # started and warmed: imports done, the shipped model built once
        pool.map(play_task, split_games(0, 2 * pool.workers, pool.workers, lam=0.7, seed=1), snapshot)

    settings = {
        "this process, 2 threads (as before)": (None, 2, None),
        "this process, 1 thread": (None, 1, "1"),
        **{name: (pool, 0, None) for name, pool in pools.items()},  # the default: one learner thread
    }
    warm_up = min(256, args.games, args.parallel_games)
    training_speed(warm_up, warm_up, None, 2, None)  # warm-up: the learner's first optimizer loads torch modules
    runs = {name: [] for name in settings}
    for _ in range(args.repeats):
        for name, (pool, threads, bgai_threads) in settings.items():
            runs[name].append(training_speed(args.games, args.parallel_games, pool, threads, bgai_threads))
            r = runs[name][-1]
            print(f"{name:<38} {r['games_per_s']:6.1f} games/s on {r['cores_used']:.2f} cores "
                  f"({r['games_per_cpu_s']:.0f} games per CPU second; load {r['load_before']:.1f})", flush=True)
    best = {name: max(r["games_per_s"] for r in rs) for name, rs in runs.items()}
    result["training"] = {"runs": runs, "best_games_per_s": best}
    ratios = {"2 processes / 1 process": best["2 worker processes"] / best["1 worker process"],
              "2 processes / this process, 1 thread": best["2 worker processes"] / best["this process, 1 thread"],
              "2 processes / this process, 2 threads (as before)":
                  best["2 worker processes"] / best["this process, 2 threads (as before)"]}
    if "2 Ray actors" in best:
        ratios["2 Ray actors / 2 processes"] = best["2 Ray actors"] / best["2 worker processes"]
    result["training"]["ratios"] = ratios

    # Lookahead targets
    boards = sample_positions(load_bot(SHIPPED).model, args.self_play, 0, seed=3, epsilon=0.0,
                              rng=np.random.default_rng(0), keep=args.positions)
    target_pools = {"this process": InProcessPool(), **pools}
    targets = {name: [] for name in target_pools}
    for _ in range(args.repeats):
        for name, pool in target_pools.items():
            targets[name].append(targets_speed(boards, args.part, pool, snapshot))
            r = targets[name][-1]
            print(f"1-ply targets, {name:<24} {r['positions_per_s']:7.1f} positions/s on {r['cores_used']:.2f} cores",
                  flush=True)
    best_targets = {name: max(r["positions_per_s"] for r in rs) for name, rs in targets.items()}
    result["targets_1ply"] = {"positions": len(boards), "part": args.part, "runs": targets,
                              "best_positions_per_s": best_targets,
                              "2 processes / 1 process": best_targets["2 worker processes"]
                              / best_targets["1 worker process"]}

    parts = ingredients(pools["1 worker process"], snapshot, args.parallel_games)
    parts["targets_1ply_positions_per_cpu_s"] = max(r["positions_per_cpu_s"] for r in targets["1 worker process"])
    parts["map_overhead_s"] = {name: map_overhead(pool, snapshot) for name, pool in pools.items()}
    result["ingredients"] = parts
    result["estimate"] = estimate(parts, args.parallel_games)
    result["load_average_at_end"] = os.getloadavg()
    for pool in pools.values():
        pool.close()
    if not args.no_ray:
        ray.shutdown()

    print(json.dumps({"ratios": ratios, "targets": result["targets_1ply"]["2 processes / 1 process"],
                      "estimate": result["estimate"]}, indent=1))
    if args.json:
        write_json(args.json, result, indent=2)


if __name__ == "__main__":
    with ticking("workers_bench"):  # the time spent, on standard error, while the parts run
        main()
