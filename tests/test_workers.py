"""Worker pools (bgai.core.workers): results in task order, the shared object sent once per map, workers that die
replaced with nothing lost, and training runs on two worker processes and on a local Ray instance."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from bgai.core.errors import BgaiError
from bgai.core.phase import BEAROFF, OVER, classify
from bgai.core.workers import ProcessPool, RayPool, WorkerError, open_pool
from bgai.eval.checkpoint import load_checkpoint, model_from_checkpoint, model_payload, save_checkpoint
from bgai.eval.network import EquityModel, ModelSnapshot
from bgai.train import lookahead, td
from bgai.train.config import LookaheadStage, load_config
from bgai.train.lookahead import lookahead_targets
from bgai.train.run import run
from bgai.train.selfplay import merge_experience, play_task, sample_trajectories, split_games, trajectories_task
from bgai.train.state import benchmark

TINY = dict(hidden="8", bench_games=2, final_bench_games=2, threads=1, checkpoint_minutes=10**6, games=32,
            parallel_games=16, bench_every=10**6, epsilon=0.05, workers=2)
KILL_MARKER = "BGAI_TEST_KILL_MARKER"

# The module's tests share their workers (module fixtures): one xdist worker runs them all (make test: loadfile).


# Task functions (module level: the workers import them by name) ------------------------------------------------


class Counted:
    """A shared object that counts, in each process, how many times it was unpickled there."""

    loads = 0

    def __init__(self, payload):
        self.payload = payload

    def __setstate__(self, state):
        type(self).loads += 1
        self.__dict__.update(state)


def describe(shared: Counted, task: int) -> dict:
    time.sleep(0.02)
    return {"double": 2 * task, "payload": shared.payload, "pid": os.getpid(), "loads": Counted.loads,
            "bgai_threads": os.environ.get("BGAI_THREADS"), "torch_threads": torch.get_num_threads()}


def dies_once(marker: str, task: int) -> int:
    """Kills its own process (SIGKILL, as the OOM killer would) the first time any worker runs task 3."""
    if task == 3:
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
            os.kill(os.getpid(), signal.SIGKILL)
        except FileExistsError:
            pass
    return task * task


def always_dies(shared, task):
    os.kill(os.getpid(), signal.SIGKILL)


def fails(shared, task: int) -> int:
    if task == 2:
        raise ValueError("no such position")
    return task


def play_but_die_once(snapshot, task):
    """bgai.train.selfplay.play_task, but the worker dies the first time it starts a task of the second round."""
    if task.first_game >= 16:
        try:
            os.close(os.open(os.environ[KILL_MARKER], os.O_CREAT | os.O_EXCL))
            os.kill(os.getpid(), signal.SIGKILL)
        except FileExistsError:
            pass
    return play_task(snapshot, task)


# The process pool ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """Two worker processes, shared by the tests of this module (starting workers takes seconds). Their
    environment names the file whose creation lets ``play_but_die_once`` kill one worker once."""
    os.environ[KILL_MARKER] = str(tmp_path_factory.mktemp("kill") / "killed")
    with ProcessPool(2) as pool:
        yield pool
    del os.environ[KILL_MARKER]


def test_results_come_in_task_order_and_each_worker_unpickles_the_shared_object_once_per_map(pool):
    loads_by_map = []
    for payload in ("first", "second"):
        results = pool.map(describe, list(range(12)), shared=Counted(payload))
        assert [r["double"] for r in results] == [2 * i for i in range(12)]
        assert {r["payload"] for r in results} == {payload}
        assert {r["pid"] for r in results} <= set(pool.pids)
        assert {(r["bgai_threads"], r["torch_threads"]) for r in results} == {("1", 1)}
        loads = {r["pid"]: r["loads"] for r in results}
        assert all(r["loads"] == loads[r["pid"]] for r in results)  # not once per task
        loads_by_map.append(loads)
    first, second = loads_by_map
    assert all(second[pid] == first[pid] + 1 for pid in first.keys() & second.keys())  # once per map


def test_a_killed_worker_is_replaced_and_its_task_run_again(pool, tmp_path):
    marker = str(tmp_path / "killed")
    before, replaced = set(pool.pids), pool.replaced
    assert pool.map(dies_once, list(range(8)), shared=marker) == [i * i for i in range(8)]
    assert Path(marker).exists() and pool.replaced == replaced + 1
    assert len(before - set(pool.pids)) == 1  # one worker is new


def test_a_task_that_kills_its_workers_and_a_task_that_raises_are_errors_and_the_pool_goes_on(pool, monkeypatch):
    monkeypatch.setattr(pool, "max_retries", 1)
    with pytest.raises(WorkerError, match="task 0 of always_dies killed 1 workers"):
        pool.map(always_dies, [0])
    with pytest.raises(WorkerError, match="(?s)task 2 of fails failed in a worker.*ValueError: no such position"):
        pool.map(fails, list(range(4)))
    assert pool.map(fails, [5, 6]) == [5, 6]


def test_a_script_without_a_main_guard_gets_a_message_that_says_so(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text("from bgai.core.workers import ProcessPool\nProcessPool(1).map(max, [0])\n")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "if __name__ == '__main__':" in result.stderr.splitlines()[-1]


def test_without_ray_the_ray_option_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails
    with pytest.raises(BgaiError, match=r"pip install 'bgai\[ray\]'"):
        open_pool(2, ray="local")


def test_a_round_split_between_workers_plays_every_game_once():
    tasks = split_games(100, 7, 3, lam=0.7, seed=1)
    assert [(t.first_game, t.games) for t in tasks] == [(100, 2), (102, 3), (105, 2)]
    assert len(split_games(0, 2, 8, lam=0.7, seed=1)) == 2  # no empty tasks


def test_a_workers_experience_depends_only_on_its_task():
    """What makes runs reproducible for a seed and worker count, and a replayed task lose nothing."""
    snapshot = ModelSnapshot.of(EquityModel.create((8,)))
    tasks = split_games(0, 2, 2, lam=0.7, seed=3, epsilon=0.1)
    a = merge_experience([play_task(snapshot, t) for t in tasks])
    b = merge_experience([play_task(ModelSnapshot.of(EquityModel.of(snapshot)), t) for t in tasks])
    assert a.games == 2 and len(a.boards) > 2 * 10
    assert np.array_equal(a.boards, b.boards) and np.array_equal(a.targets, b.targets)


# Training on worker processes ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_worker_run(tmp_path_factory, pool):
    """The weights of a tiny TD run on two worker processes."""
    folder = tmp_path_factory.mktemp("two-workers")
    summary = run(load_config(None, TINY), folder, progress=False, pool=pool)
    assert summary["games"] == 32
    return load_checkpoint(folder / "checkpoint.pt")["model"]


def test_a_td_run_loses_nothing_when_a_worker_is_killed_mid_run(tmp_path, monkeypatch, pool, two_worker_run):
    monkeypatch.setattr(td, "play_task", play_but_die_once)
    replaced = pool.replaced
    summary = run(load_config(None, TINY), tmp_path, progress=False, pool=pool)
    assert Path(os.environ[KILL_MARKER]).exists() and pool.replaced == replaced + 1  # a worker did die
    state = load_checkpoint(tmp_path / "checkpoint.pt")
    assert summary["games"] == state["games"] == 32
    for key, weights in two_worker_run.items():  # the same weights as the run where nothing died
        assert torch.equal(state["model"][key], weights), key


def test_a_td_run_on_workers_overlaps_its_rounds_and_resumes_to_the_same_weights(tmp_path, pool, two_worker_run):
    # Given the same run stopped after its first round of 16 games (its second round already in flight) and resumed
    run(load_config(None, {**TINY, "games": 16}), tmp_path, progress=False, pool=pool)
    assert load_checkpoint(tmp_path / "checkpoint.pt")["play_weights"] is not None
    run(load_config(None, TINY), tmp_path, resume=True, progress=False, pool=pool)
    # Then it ends with the weights of the run that was never stopped
    state = load_checkpoint(tmp_path / "checkpoint.pt")
    assert state["games"] == 32
    for key, weights in two_worker_run.items():
        assert torch.equal(state["model"][key], weights), key


def test_the_benchmark_on_workers_plays_the_games_this_process_plays(pool):
    model = EquityModel.create((8,))
    assert benchmark(model, 5, seed=4, pool=pool) == benchmark(model, 5, seed=4)


def test_a_td_run_on_workers_benchmarks_between_rounds_with_the_weights_it_has_then(tmp_path, pool):
    # Given a run that benchmarks after every round of 16 games, its next round already in flight on the workers
    summary = run(load_config(None, {**TINY, "bench_every": 16}), tmp_path, progress=False, pool=pool)
    # Then both benchmarks were played, the last with the final weights (as this process would play it)
    saved = load_checkpoint(tmp_path / "checkpoint.pt")
    assert [entry["games"] for entry in saved["history"]] == [16, 32] and summary["games"] == 32
    model = model_from_checkpoint(saved)
    last = {name: saved["history"][-1][name] for name in ("pubeval", "heuristic")}
    assert last == benchmark(model, TINY["bench_games"])


def test_a_lookahead_generation_on_two_workers_writes_every_part_and_resumes_after_a_kill(tmp_path, monkeypatch,
                                                                                          pool):
    # Given a model, and a one-generation lookahead run from it on two workers, stopped after its first part
    start = EquityModel.create((8,), ("contact", "race"))
    save_checkpoint(tmp_path / "start.pt", model_payload(start))
    config = load_config(None, {**TINY, "nets": "contact,race", "init": str(tmp_path / "start.pt")})
    config.stages = [LookaheadStage(name="search", generations=1, games=8, positions=120, part=30, epochs=1)]
    write, parts_written = lookahead.write_npz, []

    def stops_after_one_part(path, **arrays):
        if "targets" in arrays:
            if parts_written:
                raise KeyboardInterrupt
            parts_written.append(path.name)
        write(path, **arrays)

    monkeypatch.setattr(lookahead, "write_npz", stops_after_one_part)
    with pytest.raises(KeyboardInterrupt):
        run(config, tmp_path / "run", progress=False, pool=pool)
    folder = tmp_path / "run" / "data" / "search-000"
    (first,) = folder.glob("targets-*.npz")
    first_written = first.stat().st_mtime_ns

    # When it is resumed
    monkeypatch.setattr(lookahead, "write_npz", write)
    run(config, tmp_path / "run", resume=True, progress=False, pool=pool)

    # Then the part written before is kept, and every target is the start model's 1-ply value
    boards = np.load(folder / "positions.npz")["boards"]
    parts = sorted(folder.glob("targets-*.npz"))
    assert len(boards) == 120 and len(parts) == 4 and first.stat().st_mtime_ns == first_written
    assert len(np.unique(boards, axis=0)) == 120 and not np.isin(classify(boards), (OVER, BEAROFF)).any()
    stored = np.concatenate([np.load(p)["targets"] for p in parts])
    assert np.allclose(stored, lookahead_targets(start, boards, 1), atol=1e-6)


def test_trajectories_sampled_on_workers_are_the_tasks_games_in_order(pool):
    model = EquityModel.create((8,))
    sample = sample_trajectories(model, 10, 40, seed=6, epsilon=0.1, rng=np.random.default_rng(0),
                                          keep=10**6, pool=pool)
    # The same games, task by task in this process: the same trajectories, up to each game's bear-off or end
    tasks = split_games(40, 10, 2, lam=0.0, seed=6, epsilon=0.1)
    parts = [trajectories_task(ModelSnapshot.of(model), task) for task in tasks]
    boards = np.concatenate([p.boards for p in parts])
    live = ~np.isin(classify(boards), (OVER, BEAROFF))
    assert np.array_equal(sample["game"], np.concatenate([p.game for p in parts])[live])
    assert np.array_equal(sample["explored"], np.concatenate([p.explored for p in parts])[live])
    assert np.array_equal(sample["boards"][sample["sequence"]], boards[live])


def _worker_processes(pid: int) -> list[int]:
    """The worker processes ``pid`` spawned (not multiprocessing's resource tracker)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            if parent == pid and b"spawn_main" in (stat.parent / "cmdline").read_bytes():
                found.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_sigkill_of_the_training_process_loses_at_most_a_checkpoint_interval(tmp_path, pool):
    # Given `bgai train` on two workers, a checkpoint after every round, killed with SIGKILL after its first one
    run_dir = tmp_path / "run"
    settings = {"games": 48, "parallel-games": 16, "hidden": 8, "bench-every": 10**6, "bench-games": 2,
                "final-bench-games": 2, "threads": 1, "checkpoint-minutes": 0, "workers": 2}
    argv = [sys.executable, "-m", "bgai.frontends.cli", "train", "--run-dir", str(run_dir), "--quiet"]
    argv += [arg for name, value in settings.items() for arg in (f"--{name}", str(value))]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not (run_dir / "checkpoint.pt").exists():
        assert process.poll() is None, process.stderr.read().decode()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    workers = _worker_processes(process.pid)
    process.kill()
    process.wait()
    saved = load_checkpoint(run_dir / "checkpoint.pt")["games"]
    assert 16 <= saved < 48 and len(workers) == 2

    # Then its workers end by themselves (their pipe to it closed)
    deadline = time.monotonic() + 30
    while any(_running(pid) for pid in workers):
        assert time.monotonic() < deadline, "orphaned workers still running"
        time.sleep(0.05)

    # And --resume goes on from the checkpoint and trains exactly the configured games
    config = load_config(None, {name.replace("-", "_"): value for name, value in settings.items()})
    summary = run(config, run_dir, resume=True, progress=False, pool=pool)
    assert summary["games"] == load_checkpoint(run_dir / "checkpoint.pt")["games"] == 48


# Ray -----------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray instance of two CPUs, whose workers can import this module's task functions."""
    ray = pytest.importorskip("ray")
    saved = os.environ.get("PYTHONPATH")
    here = Path(__file__).parent
    os.environ["PYTHONPATH"] = os.pathsep.join([str(here), str(here.parent)] + ([saved] if saved else []))
    try:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved
    yield ray
    ray.shutdown()


def test_ray_actors_return_results_in_order_fetch_the_shared_object_once_and_survive_a_lost_actor(local_ray,
                                                                                                 tmp_path):
    pool = RayPool(2)
    try:
        for round, payload in enumerate(("first", "second"), 1):
            results = pool.map(describe, list(range(10)), shared=Counted(payload))
            assert [r["double"] for r in results] == [2 * i for i in range(10)]
            assert {r["payload"] for r in results} == {payload}
            assert {r["loads"] for r in results} == {round}  # once per actor and map, however many tasks it ran
            assert {(r["bgai_threads"], r["torch_threads"]) for r in results} == {("1", 1)}
        marker = str(tmp_path / "killed")
        assert pool.map(dies_once, list(range(8)), shared=marker) == [i * i for i in range(8)]
        assert Path(marker).exists() and pool.replaced == 1
    finally:
        pool.close()
    assert local_ray.is_initialized()  # the pool did not start Ray, so it leaves it running


def test_a_td_run_on_ray_actors_equals_the_run_on_worker_processes(local_ray, tmp_path, two_worker_run):
    summary = run(load_config(None, {**TINY, "ray": "local"}), tmp_path, progress=False)
    state = load_checkpoint(tmp_path / "checkpoint.pt")
    assert summary["games"] == state["games"] == 32
    for key, weights in two_worker_run.items():
        assert torch.equal(state["model"][key], weights), key
