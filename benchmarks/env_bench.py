"""The environments' speed: bgai's vector environment beside OpenSpiel's and pgx's backgammon, random play, this CPU.

    python benchmarks/env_bench.py --json benchmarks/results/env_speed.json

One run measures, one after the other, each for a few seconds of wall time (``--seconds``):

1. **bgai's vector environment** (``BackgammonVectorEnv``, ``--envs`` games at once in its default two blocks, one
   a thread): a random agent (uniform over its mask, its count of legal actions read from the mask, the draw in
   numpy) against the random opponent. Games and decisions a second; a decision is one play of either side, so a
   turn. Then again on one thread (``bgai.core.movegen.one_thread``: OpenSpiel's part runs on one).
2. **SB3's VecEnv and checker steps**: the same random play through ``bgai.envs.sb3.BackgammonVecEnv`` (SB3's
   step API, a list of infos, the masks from ``env_method``), and through the vector environment with
   ``action="steps"`` (a turn a checker at a time): games and agent steps a second.
3. **bgai's own batched games** (``bgai.core.game.play_games``, random against random, what ``bgai duel random random``
   runs, ``--envs`` games at once): the same games without the environment around them.
4. **bgai's single environment** (``BackgammonEnv``, one game, random against random): the time of a step, and the
   time of the move generation and the random choices that step makes (the agent's plays, the opponent's plays and
   its choice, played here on the same positions with bgai's own functions): the difference is the environment's
   overhead a step.
5. **OpenSpiel's backgammon** (``pyspiel``, its C++ game through its Python API, one thread): uniform over the legal
   actions, the dice drawn from the chance outcomes' probabilities. OpenSpiel's action is a whole play of a roll,
   except doubles, which take two; a decision is one action.
6. **pgx's backgammon** (JAX on the CPU, ``--pgx-batch`` games, ``jit`` of ``vmap``, pgx's auto-reset): uniform over
   the legal actions. pgx's action moves one checker, so a game has several times as many decisions. After the
   compilation (timed apart), the clock runs for ``--pgx-seconds``; all games start together, so the games that
   end within the window undercount the steady rate unless the window spans several game lengths. The figure
   beside it, decisions a second over the mean decisions of the games that ended, overcounts it (the first games
   to end are the short ones): the steady rate lies between the two.

The peers are not bgai's dependencies: ``pip install open_spiel pgx jax`` to measure them (pgx 2.6.0's wheel also
installs a top-level package named ``tests``, which hides bgai's own from its test suite: delete
``site-packages/tests`` after installing it). A peer that cannot be
imported is skipped, and the JSON says so. The load average before and after each part is recorded: the machine is
shared, and a busy core slows every part.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import threading
import time

import numpy as np

from bgai.core.files import provenance, write_json
from bgai.core.game import play_games
from bgai.core.movegen import afterstates, one_thread, threads
from bgai.core.progress import ticking
from bgai.envs import BackgammonEnv, BackgammonVectorEnv
from bgai.players import RandomPlayer

NOTES = {
    "decisions": "one action of one side: a whole turn in bgai (both seats' plays counted) and in OpenSpiel (which "
                 "plays a double as two actions), one checker move in pgx",
    "pgx_games_per_s": "games ended within the window, all games having started together: fewer than the steady "
                       "rate unless the window spans several game lengths; games_per_s_upper (decisions a second "
                       "over the mean length of the games that ended) is more: the steady rate lies between",
    "bgai_single_env": "engine_us_per_step: the step's move generation and the opponent's random choice, replayed "
                       "on the same positions with bgai's functions; overhead_us_per_step: the rest",
}


class CountingRandom(RandomPlayer):
    """The random player, counting the positions it plays (safely from several threads, as the built-in one is
    called: the vector environment's blocks of games step in parallel)."""

    threadsafe = True

    def __init__(self) -> None:
        self.decisions = 0
        self._lock = threading.Lock()

    def choose(self, boards, after, owner, rng, dice=None):
        with self._lock:
            self.decisions += len(boards)
        return super().choose(boards, after, owner, rng, dice)


def legal_counts(masks: np.ndarray) -> np.ndarray:
    """The legal actions of each game, as a random agent reads them from its masks: a mask's ones are its first
    entries, so its first zero is their count, looked for in the first 256 entries (one game in a hundred has more
    than 141 plays), then in the whole mask of the games whose 256 are all legal (a tenth of the time of summing
    the masks; no position has ``MAX_PLAYS`` plays, so every mask has a zero)."""
    counts = masks[:, :256].argmin(axis=1)
    many = masks[:, 255] == 1
    if many.any():
        counts[many] = masks[many].argmin(axis=1)
    return counts


def load() -> float:
    return round(os.getloadavg()[0], 2)


def bgai_vector(envs: int, seconds: float, threads: int | None = None) -> dict:
    if threads == 1:
        with one_thread():
            return bgai_vector(envs, seconds)
    opponent = CountingRandom()
    env = BackgammonVectorEnv(envs, opponent)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    for _ in range(20):  # compiled kernels loaded, games under way
        counts = legal_counts(obs["action_mask"])
        obs, *_ = env.step((rng.random(envs) * counts).astype(np.int64))
    games = steps = 0
    opponent.decisions = 0
    before = load()
    started, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - started < seconds:
        counts = legal_counts(obs["action_mask"])
        obs, _, terminated, _, _ = env.step((rng.random(envs) * counts).astype(np.int64))
        games += int(terminated.sum())
        steps += 1
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    decisions = steps * envs + opponent.decisions
    return {"games_per_s": games / elapsed, "decisions_per_s": decisions / elapsed, "games": games,
            "steps": steps, "ms_per_step": 1e3 * elapsed / steps, "cpu_ms_per_step": 1e3 * cpu / steps,
            "cpu_us_per_decision": 1e6 * cpu / decisions, "seconds": elapsed, "load_before": before,
            "load_after": load()}


def bgai_sb3(envs: int, seconds: float, action: str = "plays") -> dict:
    """The same random play through ``bgai.envs.sb3.BackgammonVecEnv``, SB3's own ``VecEnv`` over the vector
    environment (its list of infos, the masks from ``env_method``), or with ``action="steps"`` the vector
    environment played a checker at a time (a decision is then one step)."""
    if action == "steps":
        env = BackgammonVectorEnv(envs, "random", action="steps")
        obs, _ = env.reset(seed=0)

        def step(actions):
            obs, _, done, _, _ = env.step(actions)
            return obs["action_mask"], done
        masks = obs["action_mask"]
    else:
        try:
            from bgai.envs.sb3 import BackgammonVecEnv
        except Exception as error:  # noqa: BLE001 (the rl extra missing: say so in the results)
            return {"skipped": f"stable-baselines3 not installed ({error})"}
        venv = BackgammonVecEnv(envs, "random")
        venv.seed(0)
        venv.reset()

        def step(actions):
            _, _, done, _ = venv.step(actions)
            return np.stack(venv.env_method("action_masks")), done
        masks = np.stack(venv.env_method("action_masks"))
    rng = np.random.default_rng(0)

    def random_steps(masks):  # a uniformly random legal action of each game
        counts = masks.sum(axis=1)
        pick = (rng.random(len(masks)) * counts).astype(np.int64)
        if action == "plays":  # (the legal plays are the first actions)
            return pick
        return np.argmax(np.cumsum(masks, axis=1) > pick[:, None], axis=1)  # the pick-th legal step
    for _ in range(20):
        masks, _ = step(random_steps(masks))
    games = steps = 0
    before = load()
    started, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - started < seconds:
        masks, done = step(random_steps(masks))
        games += int(done.sum())
        steps += 1
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {"games_per_s": games / elapsed, "agent_steps_per_s": steps * envs / elapsed, "games": games,
            "steps": steps, "ms_per_step": 1e3 * elapsed / steps, "cpu_ms_per_step": 1e3 * cpu / steps,
            "seconds": elapsed, "load_before": before, "load_after": load()}


def bgai_engine(envs: int, seconds: float) -> dict:
    play_games(RandomPlayer(), RandomPlayer(), envs, seed=1, batch=envs)  # warm
    games = turns = 0
    before = load()
    started, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - started < seconds:
        result = play_games(RandomPlayer(), RandomPlayer(), envs, seed=2 + games, batch=envs)
        games += result.games
        turns += int(result.turns.sum())
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {"games_per_s": games / elapsed, "decisions_per_s": turns / elapsed, "games": games,
            "cpu_us_per_decision": 1e6 * cpu / turns, "seconds": elapsed, "load_before": before,
            "load_after": load()}


def bgai_single(seconds: float) -> dict:
    """The single environment's step, and the engine's share of it: the same steps replayed with bgai's own
    functions (the agent's plays, the opponent's plays and its choice), positions and dice taken from the env."""
    env = BackgammonEnv(CountingRandom(), afterstates=True)  # (the plays' afterstates in every info, as measured)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    record = []  # (agent's board, dice, its play's afterstate) of each step that went on
    steps = 0
    before = load()
    started, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - started < seconds:
        n = int(obs["action_mask"].sum())
        action = int(rng.integers(n))
        played = info["afterstate_boards"][action]
        board, dice = info["board"], info["dice"]
        obs, _, terminated, _, info = env.step(action)
        steps += 1
        if terminated:
            obs, info = env.reset()
        else:
            record.append((board, dice, played))
    step_s, step_cpu = (time.perf_counter() - started) / steps, (time.process_time() - cpu) / steps
    load_after = load()
    player, rolls = RandomPlayer(), np.random.default_rng(1)
    started, cpu = time.perf_counter(), time.process_time()
    for board, dice, played in record:
        afterstates(board[None], dice[None], return_steps=True, validate=False)
        opponent_dice = rolls.integers(1, 7, size=(1, 2)).astype(np.int8)
        replies = afterstates(played[None], opponent_dice, validate=False)
        player.choose(played[None], replies.after, replies.owner, rolls)
    engine_s, engine_cpu = (time.perf_counter() - started) / len(record), (time.process_time() - cpu) / len(record)
    return {"us_per_step": 1e6 * step_s, "engine_us_per_step": 1e6 * engine_s,
            "overhead_us_per_step": 1e6 * (step_s - engine_s), "cpu_us_per_step": 1e6 * step_cpu,
            "engine_cpu_us_per_step": 1e6 * engine_cpu, "steps": steps, "load_before": before,
            "load_after": load_after}


def openspiel(seconds: float) -> dict:
    try:
        import pyspiel
    except ImportError as error:
        return {"skipped": f"open_spiel could not be imported ({error}); pip install open_spiel"}
    game = pyspiel.load_game("backgammon")
    draw = random.Random(0)
    games = decisions = 0
    before = load()
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                x, total, chosen = draw.random(), 0.0, outcomes[-1][0]
                for action, p in outcomes:
                    total += p
                    if x < total:
                        chosen = action
                        break
                state.apply_action(chosen)
            else:
                state.apply_action(draw.choice(state.legal_actions()))
                decisions += 1
        games += 1
    elapsed = time.perf_counter() - started
    return {"version": pyspiel.__version__ if hasattr(pyspiel, "__version__") else _version("open_spiel"),
            "games_per_s": games / elapsed, "decisions_per_s": decisions / elapsed, "games": games,
            "decisions_per_game": decisions / max(games, 1), "seconds": elapsed, "load_before": before,
            "load_after": load()}


def pgx_backgammon(batch: int, seconds: float) -> dict:
    try:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        import jax.numpy as jnp
        import pgx
        from pgx.experimental.wrappers import auto_reset
    except ImportError as error:
        return {"skipped": f"pgx or jax could not be imported ({error}); pip install pgx jax"}
    env = pgx.make("backgammon")
    init = jax.jit(jax.vmap(env.init))
    step = jax.jit(jax.vmap(auto_reset(env.step, env.init)))

    @jax.jit
    def act(key, mask):
        return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf), axis=-1)

    key = jax.random.PRNGKey(0)
    compiling = time.perf_counter()
    key, k0, k1, k2 = jax.random.split(key, 4)
    state = init(jax.random.split(k0, batch))
    state = step(state, act(k1, state.legal_action_mask), jax.random.split(k2, batch))
    state.terminated.block_until_ready()
    compile_s = time.perf_counter() - compiling
    games = steps = 0
    lengths = []
    before = load()
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        key, k1, k2 = jax.random.split(key, 3)
        length = np.asarray(state._step_count)
        state = step(state, act(k1, state.legal_action_mask), jax.random.split(k2, batch))
        ended = np.asarray(state.terminated)
        games += int(ended.sum())
        lengths.extend((length[ended] + 1).tolist())
        steps += 1
    elapsed = time.perf_counter() - started
    decisions_per_s = steps * batch / elapsed
    mean_length = float(np.mean(lengths)) if lengths else None
    return {"version": pgx.__version__, "jax": jax.__version__, "batch": batch, "compile_s": compile_s,
            "games_per_s": games / elapsed, "decisions_per_s": decisions_per_s, "games": games,
            "games_per_s_upper": decisions_per_s / mean_length if mean_length else None,
            "mean_decisions_of_ended_games": mean_length, "seconds": elapsed, "load_before": before,
            "load_after": load()}


def _version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", type=int, default=2048, help="games at once in bgai's vector env (default 2048)")
    parser.add_argument("--seconds", type=float, default=10.0, help="wall time of each bgai and OpenSpiel part")
    parser.add_argument("--pgx-batch", type=int, default=2048, help="pgx's games at once (default 2048)")
    parser.add_argument("--pgx-seconds", type=float, default=45.0, help="pgx's window after compiling (default 45)")
    parser.add_argument("--no-pgx", action="store_true", help="skip pgx (its compilation alone takes 20-30 s)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()

    results: dict = {**provenance(), "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
                     f"Python {platform.python_version()}, numpy {np.__version__}", "bgai_threads": threads(),
                     "peers_installed": {name: _version(name) for name in ("open_spiel", "pgx", "jax")},
                     "notes": NOTES, "load_at_start": load()}
    parts = [
        ("bgai_vector_env", lambda: bgai_vector(args.envs, args.seconds)),
        ("bgai_vector_env_one_thread", lambda: bgai_vector(args.envs, args.seconds, threads=1)),
        ("bgai_batched_games", lambda: bgai_engine(args.envs, args.seconds)),
        ("bgai_sb3_vec_env", lambda: bgai_sb3(args.envs, args.seconds)),
        ("bgai_vector_env_checker_steps", lambda: bgai_sb3(args.envs, args.seconds, action="steps")),
        ("bgai_single_env", lambda: bgai_single(args.seconds / 2)),
        ("openspiel", lambda: openspiel(args.seconds)),
        ("pgx", (lambda: {"skipped": "--no-pgx"}) if args.no_pgx
         else (lambda: pgx_backgammon(args.pgx_batch, args.pgx_seconds))),
    ]
    for name, measure in parts:
        results[name] = measure()
        print(f"{name}: {json.dumps(results[name])}", flush=True)
    ours = results["bgai_vector_env"]["games_per_s"]
    results["bgai_vector_env_games_per_s_over"] = {
        peer: ours / results[peer]["games_per_s"] for peer in ("openspiel", "pgx")
        if results[peer].get("games_per_s")}
    print(json.dumps(results["bgai_vector_env_games_per_s_over"]))
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    with ticking("env_bench"):  # the time spent, on standard error, while the parts run
        main()
