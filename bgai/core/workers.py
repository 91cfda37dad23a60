"""Worker pools: one function run over a list of tasks by worker processes on this machine, or by Ray actors on a
cluster, with the results handed back in task order.

    from bgai.core.workers import open_pool

    with open_pool(workers=2) as pool:                     # or open_pool(8, ray="auto") on a Ray cluster
        results = pool.map(play_task, tasks, shared=ModelSnapshot.of(model))

``fn(shared, task)`` must be a module-level function (workers import it by name), deterministic given its arguments
(seed any randomness from the task: then results do not depend on which worker ran what, and a task run again gives
the same result), and must not modify ``shared``. ``shared`` (typically a ``bgai.eval.network.ModelSnapshot``) is
pickled once per ``map`` and sent once to each worker (with Ray: put in the object store once); ``tasks`` and results
travel one each way. ``pool.imap`` yields ``(task index, result)`` as tasks finish, for a caller that writes each result
as it comes (``bgai.train.lookahead`` writes target parts that way, so a killed run keeps every finished part).

Consumers: the training methods (``bgai.train.td``'s rounds: ``bgai.train.selfplay.play_task`` on game-id ranges;
``bgai.train.lookahead``'s generations: position sampling and target parts). Rollouts fit the same mould: a task is a
position and a range of trial ids whose dice come from ``roll_dice(seed, trial, turn)``, the shared object the bot's
``ModelSnapshot``, the result its trials' outcomes; ``bgai rollout --jobs N`` beyond ``bgai.eval.rollout.THREAD_JOBS``
is ``open_pool(N)`` (fewer jobs play on threads of one process).

Backends (``open_pool`` picks one):

``InProcessPool``
    ``workers=1``: runs the tasks here, one after another; nothing is pickled.
``ProcessPool``
    ``workers`` processes started with ``spawn`` (a fresh interpreter: no threads or locks inherited from a
    process that has torch's thread pools running). Each sets ``BGAI_THREADS=1`` (the numpy thread pools of
    ``bgai.core.movegen`` and ``bgai.eval.encoding``), one torch thread (``OMP_NUM_THREADS``, read when a task first
    imports torch: a rollout's never do) and one BLAS thread, so N workers keep N cores busy.
    Each worker imports the main script, as ``spawn`` does: a script that opens a pool must do so under ``if
    __name__ == "__main__":`` (a worker that fails to start says so).
``RayPool``
    ``workers`` Ray actors of one CPU each, on the cluster at ``address`` (``"local"``: the cluster ``ray start``
    made on this machine, else a new local Ray instance; ``"auto"``: a running cluster, an error if there is none;
    or ``host:port``). bgai must be installed on every node. Needs the ray extra: ``pip install 'bgai[ray]'``.

Faults. A worker process that dies (killed, out of memory) or a Ray actor that is lost mid-task is replaced and its
task run again by the replacement; tasks are deterministic, so the result is the same as if nothing had happened.
A task that has killed ``max_retries`` workers is a bug, not bad luck: ``WorkerError``. An exception raised
by ``fn`` is not retried either: ``WorkerError`` carries the worker's traceback. If the caller stops consuming
``imap`` (an error, Ctrl-C), the workers still busy are stopped and replaced, so no stale result reaches the next
call.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import os
import pickle
import signal
import threading
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import wait
from typing import Any

from bgai.core.errors import BgaiError

#: Environment of a worker: one thread for each of bgai's numpy pools, torch (OpenMP) and BLAS.
WORKER_ENVIRONMENT = {"BGAI_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                      "OPENBLAS_NUM_THREADS": "1"}


class WorkerError(BgaiError):
    """A task failed in a worker: it raised (the worker's traceback is in the message), or it killed its worker
    ``max_retries`` times."""


def default_workers() -> int:
    """The cores this process may use (its CPU affinity), the default number of workers."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class Pool(ABC):
    """Runs ``fn(shared, task)`` for every task on ``workers`` workers (see the module docstring)."""

    workers: int
    #: Workers replaced after they died, over the pool's life.
    replaced: int = 0

    @abstractmethod
    def imap(self, fn: Callable[[Any, Any], Any], tasks: Sequence, shared: Any = None) -> Iterator[tuple[int, Any]]:
        """``(i, fn(shared, tasks[i]))`` for every task, in the order they finish."""

    def map(self, fn: Callable[[Any, Any], Any], tasks: Sequence, shared: Any = None) -> list:
        """``[fn(shared, task) for task in tasks]``, computed by the workers."""
        results: list = [None] * len(tasks)
        for i, result in self.imap(fn, tasks, shared):
            results[i] = result
        return results

    def close(self) -> None:  # noqa: B027 (a pool without workers has nothing to stop)
        """Stop the workers (the pool cannot be used after)."""

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class InProcessPool(Pool):
    """One worker: this process, tasks one after another."""

    def __init__(self) -> None:
        self.workers = 1

    def imap(self, fn, tasks, shared=None):
        for i, task in enumerate(tasks):
            yield i, fn(shared, task)


# Processes -----------------------------------------------------------------------------------------------------


_ENVIRONMENT_LOCK = threading.Lock()


@contextlib.contextmanager
def _worker_environment():
    """``WORKER_ENVIRONMENT`` set in this process while a worker is started, so that the worker's numpy and torch
    read it when they load (a spawned process inherits the environment; it imports numpy before any bgai code of
    ours runs)."""
    with _ENVIRONMENT_LOCK:
        saved = {key: os.environ.get(key) for key in WORKER_ENVIRONMENT}
        os.environ.update(WORKER_ENVIRONMENT)
        try:
            yield
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


_READY = "ready"


def _serve(conn) -> None:
    """A worker process: receive shared objects and tasks, send back results, until told to stop or the pool's end
    of the pipe closes (the pool's process ended, however it ended)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the main process, which then stops the workers
    # torch is not imported here: the tasks that need it import it (training), and read WORKER_ENVIRONMENT's one
    # thread when they do; a rollout's tasks play with numpy and never pay its 1.5-3 s import.
    try:
        conn.send(_READY)
    except (EOFError, OSError):
        return
    shared = None
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        if message[0] == "shared":
            shared = pickle.loads(message[1])
            continue
        _, fn, task = message
        try:
            reply = (True, fn(shared, task))
        except BaseException:  # noqa: BLE001 - every failure goes back to the pool, which raises it there
            reply = (False, traceback.format_exc())
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return


class _Slot:
    """One worker process, its pipe, and the task it is running."""

    def __init__(self, context, name: str) -> None:
        self.conn, child = context.Pipe(duplex=True)
        self.process = context.Process(target=_serve, args=(child,), name=name, daemon=True)
        with _worker_environment():
            self.process.start()
        child.close()
        self.task: int | None = None
        self.shared: int | None = None  # which map's shared object it holds
        self.ready = False  # it started: it has imported what it needs and is reading tasks

    def ask_to_stop(self) -> None:
        """Tell the worker to exit once its task is done (``stop`` waits for it)."""
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)

    def stop(self, timeout: float = 5.0) -> None:
        self.ask_to_stop()
        self.process.join(timeout)
        if self.process.is_alive():
            self.kill()
        self.conn.close()

    def kill(self) -> None:
        self.process.kill()
        self.process.join()
        self.conn.close()


class ProcessPool(Pool):
    """``workers`` worker processes on this machine (see the module docstring)."""

    def __init__(self, workers: int, max_retries: int = 3) -> None:
        if workers < 1:
            raise BgaiError(f"a pool needs at least one worker, got {workers}")
        self.workers, self.max_retries = workers, max_retries
        self._context = multiprocessing.get_context("spawn")
        self._started = 0
        self._maps = 0
        self._slots: list[_Slot | None] | None = [self._start() for _ in range(workers)]

    def _start(self) -> _Slot:
        self._started += 1
        return _Slot(self._context, f"bgai-worker-{self._started}")

    @property
    def pids(self) -> list[int]:
        """The process ids of the running workers."""
        return [slot.process.pid for slot in self._slots or () if slot is not None]

    def imap(self, fn, tasks, shared=None):
        if self._slots is None:
            raise BgaiError("the pool is closed")
        self._maps += 1
        key = self._maps
        self._slots = [slot or self._start() for slot in self._slots]  # replace those an abandoned map stopped
        blob = pickle.dumps(shared, protocol=pickle.HIGHEST_PROTOCOL)  # once per map, whatever the workers
        pending = collections.deque(range(len(tasks)))
        deaths = collections.Counter()
        try:
            while pending or any(slot.task is not None for slot in self._slots if slot is not None):
                for slot in self._slots:
                    if slot.task is None and pending:
                        i = pending.popleft()
                        slot.task = i
                        try:
                            if slot.shared != key:
                                slot.conn.send(("shared", blob))
                                slot.shared = key
                            slot.conn.send(("task", fn, tasks[i]))
                        except (OSError, ValueError):
                            pass  # it died: seen below, by its sentinel
                busy = [slot for slot in self._slots if slot.task is not None]
                wait([slot.conn for slot in busy] + [slot.process.sentinel for slot in busy])
                for n, slot in enumerate(self._slots):
                    if slot.task is None:
                        continue
                    reply, gone = None, False
                    try:
                        while reply is None and slot.conn.poll():
                            reply = slot.conn.recv()
                            if reply == _READY:
                                slot.ready, reply = True, None
                    except (EOFError, OSError):
                        gone = True  # its end of the pipe closed: it is dying, if not dead yet
                    if reply is not None:
                        i, slot.task = slot.task, None
                        ok, value = reply
                        if not ok:
                            raise WorkerError(f"task {i} of {getattr(fn, '__qualname__', fn)} failed in a "
                                              f"worker:\n{value}")
                        yield i, value
                    elif gone or not slot.process.is_alive():
                        i, slot.task = slot.task, None
                        slot.process.join(5)
                        slot.kill()
                        self._slots[n] = None
                        status = slot.process.exitcode
                        if not slot.ready and status is not None and status >= 0:  # it exited by itself
                            raise WorkerError(
                                f"a worker process could not start (exit status {status}; its error is above). A "
                                f"script that uses worker processes must start them under `if __name__ == "
                                f"'__main__':` (each worker imports the main script), or use --workers 1")
                        deaths[i] += 1
                        if deaths[i] >= self.max_retries:
                            raise WorkerError(f"task {i} of {getattr(fn, '__qualname__', fn)} killed "
                                              f"{deaths[i]} workers (the last ended with status {status})")
                        self._slots[n] = self._start()
                        self.replaced += 1
                        pending.appendleft(i)  # the same task again: the same result
        finally:
            for n, slot in enumerate(self._slots):
                # Abandoned mid-task: its late result must not reach the next map.
                if slot is not None and slot.task is not None:
                    slot.kill()
                    self._slots[n] = None

    def close(self) -> None:
        if self._slots is not None:
            running = [slot for slot in self._slots if slot is not None]
            for slot in running:  # all at once: each exits as the others do
                slot.ask_to_stop()
            for slot in running:
                slot.stop()
            self._slots = None


# Ray -----------------------------------------------------------------------------------------------------------


class _RayWorker:
    """The body of a Ray actor: holds the shared object of the current map, runs tasks."""

    def __init__(self) -> None:
        os.environ.update(WORKER_ENVIRONMENT)
        import torch

        torch.set_num_threads(1)
        self._key, self._shared = None, None

    def run(self, fn, shared_box: list, task):
        import ray

        ref = shared_box[0]  # boxed, so that Ray hands the reference over rather than the object
        if ref.hex() != self._key:
            self._shared, self._key = ray.get(ref), ref.hex()
        return fn(self._shared, task)


def _require_ray():
    try:
        import ray
    except ImportError:
        raise BgaiError("--ray needs Ray: pip install 'bgai[ray]' (without --ray the workers are processes on "
                        "this machine)") from None
    return ray


class RayPool(Pool):
    """``workers`` Ray actors of one CPU each (see the module docstring). Connects to Ray unless this process
    already has; shuts Ray down on ``close`` only if it started it. ``workers=0``: one actor per free CPU of the
    cluster."""

    def __init__(self, workers: int = 0, address: str = "local", max_retries: int = 3) -> None:
        ray = _require_ray()
        self._ray = ray
        self._owns = False
        if not ray.is_initialized():
            try:
                ray.init(address=None if address in ("", "local") else address, include_dashboard=False,
                         logging_level="WARNING")
            except (ConnectionError, ValueError, RuntimeError) as error:
                raise BgaiError(f"cannot connect to Ray at {address!r}: {error}") from None
            self._owns = True
        # An actor waits for a free CPU: more actors than free CPUs would wait forever. CPUs of actors just killed
        # (a pool closed a moment ago) come free within a second or two.
        deadline = time.monotonic() + 15
        while True:
            free = int(ray.available_resources().get("CPU", 0))
            self.workers = workers or free
            if 0 < self.workers <= free or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        if not 0 < self.workers <= free:
            total = int(ray.cluster_resources().get("CPU", 0))
            self.close()
            raise BgaiError(f"{self.workers} Ray workers need as many free CPUs; the Ray cluster has {free} free "
                            f"of {total}")
        self.max_retries = max_retries
        self._actor_class = ray.remote(num_cpus=1, max_restarts=0)(_RayWorker)
        self._actors: list | None = [self._actor_class.remote() for _ in range(self.workers)]

    def imap(self, fn, tasks, shared=None):
        ray = self._ray
        actors = self._actors
        if actors is None:
            raise BgaiError("the pool is closed")
        box = [ray.put(shared)]  # once per map: every actor reads the one copy in the object store
        # An actor lost with its process or node, or killed for memory: replaced, its task run again.
        lost = tuple(getattr(ray.exceptions, name) for name in ("RayActorError", "WorkerCrashedError",
                                                                 "OutOfMemoryError", "NodeDiedError")
                     if hasattr(ray.exceptions, name))
        pending = collections.deque(range(len(tasks)))
        running: dict = {}  # object ref -> (actor slot, task index)
        deaths = collections.Counter()

        def submit(slot: int) -> None:
            i = pending.popleft()
            running[actors[slot].run.remote(fn, box, tasks[i])] = (slot, i)

        try:
            for slot in range(len(actors)):
                if pending:
                    submit(slot)
            while running:
                (ref,), _ = ray.wait(list(running), num_returns=1)
                slot, i = running.pop(ref)
                try:
                    result = ray.get(ref)
                except lost as error:
                    deaths[i] += 1
                    if deaths[i] >= self.max_retries:
                        raise WorkerError(f"task {i} of {getattr(fn, '__qualname__', fn)} lost {deaths[i]} Ray "
                                          f"actors: {error}") from None
                    self._replace(slot)
                    self.replaced += 1
                    pending.appendleft(i)
                except ray.exceptions.RayTaskError as error:
                    raise WorkerError(f"task {i} of {getattr(fn, '__qualname__', fn)} failed in a Ray actor:\n"
                                      f"{error}") from None
                else:
                    yield i, result
                if pending:
                    submit(slot)
        finally:
            for slot, _ in list(running.values()):  # abandoned mid-task
                self._replace(slot)

    def _replace(self, slot: int) -> None:
        actors = self._actors
        assert actors is not None  # (an open pool's)
        with contextlib.suppress(Exception):
            self._ray.kill(actors[slot], no_restart=True)
        actors[slot] = self._actor_class.remote()

    def close(self) -> None:
        actors = getattr(self, "_actors", None)  # (None too where __init__ stopped before making them)
        if actors:
            for actor in actors:
                with contextlib.suppress(Exception):
                    self._ray.kill(actor, no_restart=True)
        self._actors = None
        if self._owns and self._ray.is_initialized():
            self._ray.shutdown()
        self._owns = False


def open_pool(workers: int = 0, ray: str = "") -> Pool:
    """A pool of ``workers`` workers (0: one per core this process may use, or with Ray one per free CPU of the
    cluster): Ray actors if ``ray`` names a cluster (``"local"``, ``"auto"`` or an address), else worker processes,
    or this process alone for one worker."""
    if workers < 0:
        raise BgaiError(f"workers must be 0 (one per core) or more, got {workers}")
    if ray:
        return RayPool(workers, ray)
    workers = workers or default_workers()
    return InProcessPool() if workers == 1 else ProcessPool(workers)
