"""Your agent on the bench: a Python agent (``bgai bench --agent module:callable``) or any UBGI engine (``bgai bench
--engine "COMMAND"``) in duplicate cubeless games against bgai's built-in opponents (``bench_agent``).

The agent contract
------------------
An agent is a function, or any callable object, asked for each of its checker plays::

    agent(position, dice, plays) -> play

``position`` is a ``bgai.Position`` seen from the agent, on roll (its checkers positive, points numbered from its
side); ``dice`` the roll, ``(high, low)``; ``plays`` every distinct legal play of the roll, a list of ``bgai.Move``
(``position.legal_moves(dice)``, in that order). The agent is asked only when it has a choice: a forced play, or
a roll that cannot be played, is made for it. It answers with one of

* an index into ``plays`` (an ``int``);
* one of the ``plays`` (a ``Move`` of this position and roll);
* the play written in standard notation, ``"24/18 13/11"`` (read by ``bgai.core.notation.parse_move``: ``bar``,
  ``off``, ``*`` and ``(2)`` as bgai writes them, ``pass`` where nothing can move).

An object with a ``choose`` method is a batched player instead, bgai's own interface
(``bgai.players.Player``: ``choose(boards, after, owner, rng, dice)`` gives, for each of N boards, the index into
``after`` of its play); it is asked for every play, forced ones too, a batch of games at a time. ``--agent
module:Name`` naming a class makes one with no arguments. ``module`` is imported with the current folder on the
path, or loaded from a file: ``--agent path/to/agent.py:choose``.

A UBGI engine is driven as a dueller drives it (``UbgiEngine``): ``ubgi``/``ubgiok`` and ``isready``/``readyok``,
then for each decision ``newgame`` when the game is not the last decision's, ``position gnubgid <ID>``, ``dice <d1>
<d2>`` and ``go role chequer`` (``go chequer`` to an engine whose handshake says ``proto 0.2``), its ``bestmove``
read as a play of that position; ``info`` lines and any other line are skipped.

Faults and forfeits
-------------------
A decision fails when the agent answers anything that is not a legal play of the roll, raises, or takes longer than
the time limit (``timeout`` seconds a decision, 10 by default; an engine gets ``START_TIMEOUT`` for its handshake);
an engine's decision also fails when it answers ``error``, another ``best...`` line, or exits. The agent then
**forfeits the game, scored as a backgammon loss** (3 points), the worst result there is, so that failing is never
better than playing on. The rest of that game is not asked of it (its first legal play is made each turn to finish
the board), the luck of its rolls after the fault is not counted, and the fault is recorded (``Fault``: the game,
the seat, the position, the dice and what went wrong); the other games go on. A Python agent that hangs cannot be
stopped (Python cannot stop a thread): its call is left running on a thread of its own, its answer ignored, and the
next decision is asked on a new thread. An engine that hangs is killed and started again for its next decision;
one that cannot be started again ends the bench with an error.

Results are the agent's points a game (``bgai.core.game.GameResults``, duplicate: the standard errors are paired by dice
sequence), with the luck-adjusted figures when asked (``luck``), and the faults, per opponent (``AgentBench``);
``AgentBench.save`` writes them as JSON atomically (``bgai.core.files.write_atomically``): a file is the whole record or
not there.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import queue
import shlex
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from bgai.core.errors import BgaiError, IllegalMoveError, shown
from bgai.core.files import write_json
from bgai.core.game import GameResults, concat_results, new_games, run_turns
from bgai.core.movegen import group_starts
from bgai.formats.position import Move, Position, parse_move

#: Seconds an agent may take over one decision, by default.
DEFAULT_TIMEOUT = 10.0
#: Seconds an engine may take to start and answer its handshake (``ubgiok``, then ``readyok``): loading a network
#: takes longer than a decision.
START_TIMEOUT = 60.0
#: The points a forfeited game counts for the agent: a backgammon loss, the worst result.
FORFEIT_POINTS = -3
#: The built-in opponents, in the order they are played: ``gnubg`` only where its extra is installed; ``bgai`` is
#: the shipped network (``load_bot()``).
BUILT_IN = ("random", "heuristic", "pubeval", "gnubg", "bgai")


class AgentFault(Exception):
    """What went wrong with one decision of an agent (the message says it, for people). ``fatal``: the engine
    that made it hangs or is gone, and must be started again."""

    def __init__(self, message: str, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal


@dataclass(frozen=True)
class Fault:
    """A decision the agent failed, which forfeited its game: the dice sequence ``game``, the agent's ``seat`` in
    it (0 or 1, as ``bgai.core.game`` numbers them), the ``turn`` (0 the opening), the position (on-roll view, the
    agent's) and dice it was asked about, and ``reason``."""

    game: int
    seat: int
    turn: int
    position_id: str
    dice: tuple[int, int]
    reason: str

    def __str__(self) -> str:
        return (f"game {self.game} (seat {self.seat}), turn {self.turn}, position {self.position_id}, dice "
                f"{self.dice[0]}{self.dice[1]}: {self.reason}")

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "dice": list(self.dice)}


@dataclass(frozen=True)
class AgentResult:
    """The agent's games against one ``opponent``: ``results`` (the agent's points, duplicate games) and the
    ``faults`` that forfeited some of them."""

    opponent: str
    results: GameResults
    faults: tuple[Fault, ...]

    def summary(self) -> dict:
        """``GameResults.summary`` with the opponent's name and the number of forfeits."""
        return {"opponent": self.opponent, **self.results.summary(), "forfeits": len(self.faults)}


@dataclass(frozen=True)
class AgentBench:
    """A bench of ``agent`` (its name): ``sequences`` dice sequences of ``seed``, each played twice, against each
    opponent of ``results`` in turn."""

    agent: str
    sequences: int
    seed: int
    results: tuple[AgentResult, ...]

    def to_dict(self) -> dict:
        """The whole record, JSON-able: every opponent's summary and faults."""
        return {"agent": self.agent, "sequences": self.sequences, "seed": self.seed, "forfeit_points": FORFEIT_POINTS,
                "opponents": [{**_strict(r.summary()), "faults": [f.to_dict() for f in r.faults]}
                              for r in self.results]}

    def save(self, path: str | Path) -> None:
        """Write ``to_dict`` as JSON to ``path``, atomically: the file is the whole record or the one before."""
        write_json(path, self.to_dict())


def _strict(summary: dict) -> dict:
    """``summary`` with what strict JSON cannot hold (a standard error of one game, NaN) as ``None``."""
    return {key: None if isinstance(value, float) and not np.isfinite(value) else value
            for key, value in summary.items()}


# Python agents ------------------------------------------------------------------------------------------------


class _Deadline:
    """Calls functions on a worker thread and waits at most ``seconds`` for each (``None``: no limit, called on the
    caller's thread). A call past the limit is left to finish on its thread, its answer dropped; the next call
    gets a new thread."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._requests: queue.SimpleQueue | None = None

    def __call__(self, function: Callable, *args):
        if self.seconds is None:
            return function(*args)
        if self._requests is None:
            self._requests = queue.SimpleQueue()
            threading.Thread(target=_serve, args=(self._requests,), daemon=True, name="bgai-agent").start()
        reply: queue.SimpleQueue = queue.SimpleQueue()
        self._requests.put((function, args, reply))
        try:
            ok, value = reply.get(timeout=self.seconds)
        except queue.Empty:
            self._requests.put(None)  # the stuck thread ends once its call returns
            self._requests = None
            raise AgentFault(f"took longer than {self.seconds:g} s, the time limit of a decision") from None
        if not ok:
            raise value
        return value


def _serve(requests: queue.SimpleQueue) -> None:
    while (request := requests.get()) is not None:
        function, args, reply = request
        try:
            reply.put((True, function(*args)))
        except BaseException as error:  # handed to the caller, which judges it
            reply.put((False, error))


def _raised(error: BaseException) -> AgentFault:
    return AgentFault(f"raised {type(error).__name__}: {' '.join(str(error).split())}"[:300])


class FunctionAgent:
    """A Python agent by the contract of the module docstring: ``function(position, dice, plays)``."""

    def __init__(self, function: Callable, name: str | None = None) -> None:
        self.function = function
        self.name = name or getattr(function, "name", None) or getattr(function, "__name__", None) \
            or type(function).__name__
        self.deadline = _Deadline(DEFAULT_TIMEOUT)

    def decide(self, position: Position, dice: tuple[int, int], plays: list[Move], game: object) -> int:
        """The index in ``plays`` of the agent's play (``game``: which game, unused); ``AgentFault`` if it fails."""
        try:
            answer = self.deadline(self.function, position, dice, list(plays))  # its own list, to do with as it likes
        except AgentFault:
            raise
        except (Exception, SystemExit) as error:
            raise _raised(error) from None
        return _play_index(answer, position, dice, plays)


def _play_index(answer, position: Position, dice: tuple[int, int], plays: list[Move]) -> int:
    """The index in ``plays`` of an agent's answer (an index, a ``Move`` or a written play), else ``AgentFault``."""
    if isinstance(answer, (int, np.integer)) and not isinstance(answer, (bool, np.bool_)):
        if 0 <= answer < len(plays):
            return int(answer)
        raise AgentFault(f"returned index {answer}; there are {len(plays)} plays (0..{len(plays) - 1})")
    if isinstance(answer, Move):
        if answer.before != position:
            raise AgentFault(f"returned the play {answer} of another position")
        if sorted(answer.dice) != sorted(dice):
            raise AgentFault(f"returned the play {answer} of {answer.dice[0]}{answer.dice[1]}; the roll is "
                             f"{dice[0]}{dice[1]}")
        after = answer.after
    elif isinstance(answer, str):
        try:
            after = parse_move(position, answer, dice).after
        except IllegalMoveError as error:
            raise AgentFault(f"returned {shown(answer)}: {error}") from None
    else:
        raise AgentFault(f"returned {shown(answer)} ({type(answer).__name__}); an agent returns an index into the "
                         f"plays, one of the plays, or a play written as text")
    for i, play in enumerate(plays):
        if play.after == after:
            return i
    raise AgentFault(f"returned {answer}, which is not a legal play of {dice[0]}{dice[1]} here")


class BatchAgent:
    """An agent that is a batched ``bgai.players.Player``: its ``choose`` is asked for every position of a batch at
    once, its answers checked (one index a position, within that position's plays)."""

    def __init__(self, player, name: str | None = None) -> None:
        self.player = player
        self.name = name or getattr(player, "name", None) or type(player).__name__
        self.deadline = _Deadline(DEFAULT_TIMEOUT)

    def decide_batch(self, boards, after, owner, rng, dice) -> tuple[np.ndarray, dict[int, str]]:
        """(picks into ``after``, {row: reason} of the positions it failed)."""
        n = len(boards)
        starts, counts = group_starts(owner, n)
        try:
            picks = self.deadline(lambda: self.player.choose(boards, after, owner, rng, dice=dice))
        except AgentFault as fault:
            return starts, {row: str(fault) for row in range(n)}
        except (Exception, SystemExit) as error:
            return starts, {row: str(_raised(error)) for row in range(n)}
        try:
            picks = np.asarray(picks)
            if picks.shape != (n,) or picks.dtype.kind not in "iu":
                raise AgentFault(f"choose returned {picks.dtype} of shape {picks.shape}, not {n} integer indices")
        except AgentFault as fault:
            return starts, {row: str(fault) for row in range(n)}
        picks = picks.astype(np.int64)
        bad = np.flatnonzero((picks < starts) | (picks >= starts + counts))
        faults = {int(row): f"choose returned index {picks[row]} into the plays; this position's are "
                            f"{starts[row]}..{starts[row] + counts[row] - 1}" for row in bad}
        picks[bad] = starts[bad]
        return picks, faults


# UBGI engines -------------------------------------------------------------------------------------------------


class UbgiEngine:
    """A UBGI engine run as a subprocess and asked for checker plays, as a dueller asks (see the module docstring).

    ``command`` is split as a shell would split it (no shell runs it). ``start`` runs it and its handshake
    (``START_TIMEOUT``); ``decide`` asks for one play, within ``timeout`` seconds. An engine that hangs or exits
    is killed and started again at its next decision; ``close`` ends it (``quit``, then a kill if it lingers).
    ``name`` is the engine's own (its ``id name``) once started, ``proto`` the protocol version its handshake says
    (``0.1`` when it says none)."""

    def __init__(self, command: str, timeout: float | None = DEFAULT_TIMEOUT,
                 start_timeout: float = START_TIMEOUT) -> None:
        try:
            self.argv = shlex.split(command)
        except ValueError as error:
            raise BgaiError(f"cannot read the engine command {shown(command)}: {error}") from None
        if not self.argv:
            raise BgaiError("the engine command is empty")
        self.command = command
        self.name = command
        self.proto = "0.1"
        self.timeout = timeout
        self.start_timeout = start_timeout
        self._process: subprocess.Popen | None = None
        self._lines: queue.SimpleQueue = queue.SimpleQueue()
        self._stderr: deque[str] = deque(maxlen=3)
        self._game: object = None
        self.starts = 0

    # The process --------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Run the engine and its handshake; ``BgaiError`` saying why if it cannot be started."""
        self._stop()
        try:
            process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                                       bufsize=1)
        except OSError as error:
            raise BgaiError(f"cannot run the engine {shown(self.command)}: {error.strerror or error}") from None
        self._process, self._lines, self._stderr = process, queue.SimpleQueue(), deque(maxlen=3)
        self._game = None
        self.starts += 1
        threading.Thread(target=_pump, args=(process.stdout, self._lines), daemon=True).start()
        threading.Thread(target=_pump, args=(process.stderr, self._stderr), daemon=True).start()
        try:
            deadline = time.monotonic() + self.start_timeout
            self._send("ubgi")
            while (line := self._read(deadline, self.start_timeout, "the handshake")) != "ubgiok":
                words = line.split()
                if words[:2] == ["id", "name"] and len(words) > 2:
                    self.name = " ".join(words[2:])
                elif words[:1] == ["proto"] and len(words) == 2:
                    self.proto = words[1]
            self._send("isready")
            while (line := self._read(deadline, self.start_timeout, "the handshake")) != "readyok":
                if line.startswith("error "):
                    raise AgentFault(f"answered {shown(line, 120)} to isready")
        except AgentFault as fault:
            self._stop()
            raise BgaiError(f"the engine {shown(self.command)} did not start: {fault}") from None

    def close(self) -> None:
        """Tell the engine to quit, and kill it if it has not within a second."""
        process = self._process
        if process is None:
            return
        try:
            self._send("quit")
            process.wait(timeout=1)
        except (AgentFault, subprocess.TimeoutExpired):
            pass
        self._stop()

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            if process.poll() is None:
                process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout, process.stderr):
                try:
                    if stream is not None:
                        stream.close()
                except OSError:
                    pass

    def _send(self, line: str) -> None:
        process = self._process
        if process is None or process.stdin is None:
            raise AgentFault("the engine is not running")
        try:
            process.stdin.write(line + "\n")
            process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise AgentFault(self._exited(), fatal=True) from None

    def _read(self, deadline: float, limit: float | None, what: str) -> str:
        """The next nonblank line, before ``deadline`` (``limit`` seconds after the question); else a fatal
        ``AgentFault`` (it took too long over ``what``, or exited)."""
        while True:
            try:
                wait = None if limit is None else max(0.0, deadline - time.monotonic())
                line = self._lines.get(timeout=wait)
            except queue.Empty:
                raise AgentFault(f"took longer than {limit:g} s over {what}, the time limit", fatal=True) from None
            if line is None:
                raise AgentFault(self._exited(), fatal=True)
            if line.strip():
                return line.strip()

    def _exited(self) -> str:
        process = self._process
        status = None
        if process is not None:
            try:
                status = process.wait(timeout=1)
            except subprocess.TimeoutExpired:
                pass
        told = "; it said: " + " | ".join(self._stderr) if self._stderr else ""
        return f"the engine exited (status {status}){told}" if status is not None else \
            f"the engine closed its output{told}"

    # Decisions ----------------------------------------------------------------------------------------------

    def decide(self, position: Position, dice: tuple[int, int], plays: list[Move], game: object) -> int:
        """The index in ``plays`` of the engine's play in ``game`` (any key: ``newgame`` is sent when it is not the
        last decision's); ``AgentFault`` if it fails."""
        if self._process is None:
            try:
                self.start()
            except BgaiError as error:
                raise BgaiError(f"the engine stopped working and could not be started again: {error}") from None
        try:
            if game != self._game:
                self._send("newgame")
                self._game = game
            self._send(f"position gnubgid {position.position_id()}")
            self._send(f"dice {dice[0]} {dice[1]}")
            self._send("go chequer" if self.proto == "0.2" else "go role chequer")
            deadline = time.monotonic() + (self.timeout or 0)
            while True:
                line = self._read(deadline, self.timeout, "a decision")
                word = line.split()[0]
                if word == "bestmove":
                    break
                if word == "error" or word.startswith("best") and word != "bestmoveid":
                    self._resync(deadline)
                    raise AgentFault(f"answered {shown(line, 120)}")
        except AgentFault as fault:
            if fault.fatal:
                self._stop()  # hung or gone: the next decision starts it again
            raise
        payload = line[len("bestmove"):].strip()
        return _play_index(payload, position, dice, plays)

    def _resync(self, deadline: float) -> None:
        """After an answer out of turn: ``isready``, and every line up to its ``readyok`` dropped, so that no
        answer to this decision is read as the next one's."""
        self._send("isready")
        while self._read(deadline, self.timeout, "a decision") != "readyok":
            pass


def _pump(stream, sink) -> None:
    """Copy ``stream``'s lines into ``sink`` (a queue: then ``None`` at the end; or a deque of the last few)."""
    try:
        for line in stream:
            if isinstance(sink, deque):
                sink.append(line.strip())
            else:
                sink.put(line)
    except (OSError, ValueError):
        pass
    if not isinstance(sink, deque):
        sink.put(None)


# Loading agents -----------------------------------------------------------------------------------------------


def _from_current_folder(top: str) -> None:
    """Import the top-level module or package ``top`` from the current folder when the path has none of that name
    (as ``python -m`` and uvicorn's MODULE:APP find it), without putting the folder on ``sys.path``."""
    if top in sys.modules or importlib.util.find_spec(top) is not None:
        return
    spec = importlib.machinery.PathFinder.find_spec(top, [os.getcwd()])
    if spec is None or spec.loader is None:
        return  # import_module then says it is missing
    module = importlib.util.module_from_spec(spec)
    sys.modules[top] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[top]
        raise


def load_agent(spec: str):
    """The agent ``module:callable`` names (see the module docstring): the object itself, or an instance when it
    is a class. ``module`` may be a dotted module name, imported with the current folder on the path, or a
    ``.py`` file. ``BgaiError`` saying what is wrong otherwise."""
    module_name, colon, attribute = spec.rpartition(":")
    if not colon or not module_name or not attribute:
        raise BgaiError(f"--agent takes MODULE:CALLABLE (e.g. mybot:choose or mybot.py:choose), got {shown(spec)}")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise BgaiError(f"no agent file {module_name}")
            loader = importlib.util.spec_from_file_location(f"bgai_agent_{path.stem}", path)
            if loader is None or loader.loader is None:
                raise BgaiError(f"cannot load {module_name} as Python")
            module = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(module)
        else:
            _from_current_folder(module_name.partition(".")[0])
            module = importlib.import_module(module_name)
    except BgaiError:
        raise
    except Exception as error:
        raise BgaiError(f"cannot import the agent's module {shown(module_name)}: {type(error).__name__}: "
                        f"{' '.join(str(error).split())}") from None
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise BgaiError(f"the agent's module {module_name} has no {shown(attribute)}")
        target = getattr(target, part)
    if inspect.isclass(target):
        try:
            target = target()
        except Exception as error:
            raise BgaiError(f"cannot make the agent {attribute}(): {type(error).__name__}: {error}") from None
    if not (callable(target) or hasattr(target, "choose")):
        raise BgaiError(f"the agent {spec} is a {type(target).__name__}: neither callable nor a player with a "
                        f"choose method")
    return target


def as_agent(agent, name: str | None = None):
    """The adapter bgai plays an agent through: a ``UbgiEngine`` as it is, a batched player (an object with
    ``choose``) as ``BatchAgent``, a callable as ``FunctionAgent``; a ``module:callable`` string is loaded first."""
    if isinstance(agent, (UbgiEngine, FunctionAgent, BatchAgent)):
        return agent
    if isinstance(agent, str):
        spec, agent = agent, load_agent(agent)
        name = name or getattr(agent, "name", None) or spec.rpartition(":")[2]
    if hasattr(agent, "choose"):
        return BatchAgent(agent, name)
    if callable(agent):
        return FunctionAgent(agent, name)
    raise BgaiError(f"an agent is a callable or a player with a choose method, got {type(agent).__name__}")


# Opponents ----------------------------------------------------------------------------------------------------


def built_in_opponents() -> list[str]:
    """``BUILT_IN``, without ``gnubg`` where its extra is not installed."""
    return [name for name in BUILT_IN if name != "gnubg" or importlib.util.find_spec("gnubg_nn") is not None]


def bench_opponent(name: str, checkpoint: str | None = None, plies: int = 0):
    """A bench opponent by name: one of ``BUILT_IN`` (``bgai``: the network of ``checkpoint``, default the shipped
    one, at ``plies``), or a network file (``.pt``, ``.npz``) at 0-ply."""
    from bgai.eval.bot import load_bot
    from bgai.players import make_player

    if name == "bgai":
        return load_bot(checkpoint, plies=plies)
    if name.endswith((".pt", ".npz")):
        bot = load_bot(name)
        bot.name = f"{bot.name} ({name})"
        return bot
    try:
        return make_player(name)
    except BgaiError:
        raise  # (gnubg's extra missing: its own message says how to install it)
    except ValueError:
        raise BgaiError(f"unknown opponent {shown(name)}; choose from {', '.join(BUILT_IN)} or a network file "
                        f"(.pt, .npz)") from None


# The bench ----------------------------------------------------------------------------------------------------


class _Seat:
    """The agent's seat in ``bgai.core.game.run_turns``: a player that asks the agent for the games it still plays,
    records its faults and plays the first legal play of forfeited games. ``games`` and ``turn``, set before each
    turn by the runner's ``observe``, are the game ids of the boards it is asked about next."""

    def __init__(self, agent, seat: int) -> None:
        self.agent = agent
        self.name = agent.name
        self.seat = seat
        self.games = np.zeros(0, dtype=np.int64)
        self.turn = 0
        self.faults: dict[int, Fault] = {}

    def _fault(self, game: int, board: np.ndarray, dice, reason: str) -> None:
        d1, d2 = sorted((int(dice[0]), int(dice[1])), reverse=True)
        self.faults[game] = Fault(game, self.seat, self.turn, Position._unchecked(board).position_id(), (d1, d2),
                                  reason)

    def choose(self, boards, after, owner, rng, dice=None):
        n = len(boards)
        starts, counts = group_starts(owner, n)
        picks = starts.copy()  # forced plays, forfeited games: the first legal play
        playing = np.array([int(game) not in self.faults for game in self.games], dtype=bool)
        if isinstance(self.agent, BatchAgent):
            rows = np.flatnonzero(playing)
            if len(rows):
                local = np.full(n, -1, dtype=np.int64)
                local[rows] = np.arange(len(rows))
                mine = np.flatnonzero(playing[owner])
                chosen, faults = self.agent.decide_batch(boards[rows], after[mine], local[owner[mine]], rng,
                                                         dice[rows])
                picks[rows] = mine[chosen]
                for row, reason in faults.items():
                    i = rows[row]
                    self._fault(int(self.games[i]), boards[i], dice[i], reason)
                    picks[i] = starts[i]
            return picks
        for i in np.flatnonzero(playing & (counts > 1)):
            position = Position._unchecked(boards[i])
            roll = tuple(sorted((int(dice[i][0]), int(dice[i][1])), reverse=True))
            plays = position.legal_moves(roll)
            try:
                k = self.agent.decide(position, roll, plays, (self.seat, int(self.games[i])))
            except AgentFault as fault:
                self._fault(int(self.games[i]), boards[i], dice[i], str(fault))
                continue
            rows = after[starts[i]:starts[i] + counts[i]]
            played = plays[k].after.board
            picks[i] = starts[i] + int(np.flatnonzero((rows == played).all(axis=1))[0])
        return picks


def _play_seat(agent, opponent, ids: np.ndarray, seed: int, seat: int, luck, rng) -> tuple:
    """The games ``ids`` with the agent in ``seat``: its points, turns, luck (``luck`` given) and faults."""
    table, dice = new_games(ids, seed)  # the games bgai.core.game plays with these ids and seed
    me = _Seat(agent, seat)
    players = (me, opponent) if seat == 0 else (opponent, me)
    fortune = np.zeros(len(ids), dtype=np.float64)

    def observe(turn, rows, boards, rolls, seats):
        me.games, me.turn = ids[rows[seats == seat]], turn
        if luck is not None:
            counted = np.array([int(game) not in me.faults for game in ids[rows]], dtype=bool)
            if counted.any():
                sign = np.where(seats[counted] == seat, 1.0, -1.0)
                fortune[rows[counted]] += sign * luck(boards[counted], rolls[counted], turn == 0)

    run_turns(players, table, dice, rng, observe=observe)
    points = table.points * (1 if seat == 0 else -1)
    forfeited = np.isin(ids, list(me.faults))
    points = np.where(forfeited, FORFEIT_POINTS, points).astype(np.int32)
    return points, table.turns.copy(), fortune, [me.faults[game] for game in sorted(me.faults)]


def bench_agent(agent=None, opponents: Sequence[str] | None = None, *, engine: str | None = None,
                games: int = 100, seed: int = 0, luck: bool = False, timeout: float | None = DEFAULT_TIMEOUT,
                batch: int | None = None, checkpoint: str | None = None, plies: int = 0, progress: bool = False,
                name: str | None = None, on_fault: Callable[[Fault], None] | None = None) -> AgentBench:
    """Duplicate cubeless games of an agent against each of ``opponents`` (names, as ``bench_opponent``; default
    every built-in one, ``built_in_opponents``): ``games`` dice sequences of ``seed``, each played twice with the
    seats swapped, the agent's faults forfeiting games (see the module docstring).

    ``agent``: a callable or a batched player (the contract of the module docstring), or ``"module:callable"``;
    ``engine`` instead: a UBGI engine's command line. ``timeout``: seconds a decision (``None``: no limit).
    ``luck``: also the luck-adjusted results (the shipped network at 0-ply, or ``checkpoint``'s, judging each
    roll). ``batch``: games played at once (default 1 for an engine, which then plays game after game as a
    dueller would, 64 for a Python agent). ``checkpoint`` and ``plies``: the ``bgai`` opponent's network and
    lookahead. ``on_fault(fault)`` is told each fault as it happens. ``name``: the agent's, in the results."""
    if (agent is None) == (engine is None):
        raise BgaiError("bench an agent or an engine: give exactly one of them")
    if not (isinstance(games, int) and games >= 1):
        raise BgaiError(f"games must be at least 1 dice sequence, got {games!r}")
    if timeout is not None and not timeout > 0:
        raise BgaiError(f"the time limit of a decision must be more than 0 seconds, got {timeout!r}")
    names = list(built_in_opponents() if opponents is None else opponents)
    if not names:
        raise BgaiError("no opponent to play")
    unknown = [opponent for opponent in names if opponent not in BUILT_IN and not opponent.endswith((".pt", ".npz"))]
    if unknown:  # (before the agent's module is imported or any network loaded)
        bench_opponent(unknown[0])
    adapter = UbgiEngine(engine, timeout) if engine is not None else as_agent(agent, name)
    players = [bench_opponent(opponent, checkpoint, plies) for opponent in names]
    if not isinstance(adapter, UbgiEngine):
        adapter.deadline = _Deadline(timeout)
    if batch is None:
        batch = 1 if isinstance(adapter, UbgiEngine) else 64
    judge = None
    if luck:
        from functools import partial

        from bgai.eval.bot import load_bot
        from bgai.play.analysis import roll_luck

        judge = partial(roll_luck, load_bot(checkpoint))
    results = []
    try:
        if isinstance(adapter, UbgiEngine):
            adapter.start()
        label = name or adapter.name
        for opponent_name, opponent in zip(names, players):
            parts, faults = [], []
            rng = np.random.default_rng(seed)
            started = time.perf_counter()
            with tqdm(total=2 * games, disable=not progress, unit="game", desc=f"{label} v {opponent_name}") as bar:
                for seat in (0, 1):
                    for lo in range(0, games, batch):
                        ids = np.arange(lo, min(lo + batch, games), dtype=np.int64)
                        points, turns, fortune, found = _play_seat(adapter, opponent, ids, seed, seat, judge, rng)
                        parts.append(GameResults(points, turns, 0.0, luck=fortune if luck else None))
                        faults += found
                        for fault in found:
                            if on_fault is not None:
                                on_fault(fault)
                        bar.update(len(ids))
                        if faults:
                            bar.set_postfix(forfeits=len(faults))
            played = dataclasses.replace(concat_results(parts), seconds=time.perf_counter() - started, duplicate=True)
            results.append(AgentResult(opponent_name, played, tuple(faults)))
    finally:
        if isinstance(adapter, UbgiEngine):
            adapter.close()
    return AgentBench(name or adapter.name, games, seed, tuple(results))


__all__ = ["BUILT_IN", "DEFAULT_TIMEOUT", "FORFEIT_POINTS", "START_TIMEOUT", "AgentBench", "AgentFault",
           "AgentResult", "BatchAgent", "Fault", "FunctionAgent", "UbgiEngine", "as_agent", "bench_agent",
           "built_in_opponents", "load_agent", "bench_opponent"]
