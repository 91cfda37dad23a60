"""Milliseconds per checker play of bgai, Open Sage (bgsage) and GNU Backgammon's network (gnubg-nn), one thread
each, on the same positions and rolls.

    python benchmarks/ply_speed.py [--positions 200] [--positions-2ply M] [--plies 0 1 2] [--network FILE]
        [--seed 0] [--json FILE]

The positions are met in GNU Backgammon's 0-ply games against itself (``gnubg_nn.best_move`` for both sides from
the opening, seeded dice, a finished game restarted): ``--positions`` distinct unfinished ones picked at random,
each with a fresh roll. Every engine sees the same (position, roll) pairs at every ply; ``--positions-2ply`` takes
only the first M of them at 2-ply and deeper. Forced positions (a single legal play, "no play" included) are kept
and counted.

* **bgai**: ``load_bot(network, plies=p).choose_move(position, dice)`` (``--network``: the shipped network of each
  ply by default), torch on one thread (``torch.set_num_threads(1)``),
  numpy's BLAS on one (``OMP/OPENBLAS/MKL_NUM_THREADS=1`` unless set), the move generator on one
  (``BGAI_THREADS=1``); its bear-off database is loaded before the clock starts, as bgsage's is.
* **bgsage**: its cubeless play at level ``f"{p + 1}ply"`` (Open Sage counts the raw network as one ply, so its
  "1ply" is bgai's 0-ply), its bear-off database on (its default), found the fastest way that plays exactly as
  ``BgBotAnalyzer(eval_level=level, cubeful=False).checker_play(board, d1, d2).moves[0]`` does:

  - every level: ``bgbot_cpp.possible_moves(board, d1, d2)`` first, and a forced position (one legal play, or
    none) answered without judging it, as bgai's ``choose_move`` does;
  - "1ply": ``MultiPlyStrategy.best_move_index(moves, board)`` of ``bgbot_cpp.create_multipy(..., n_plies=1)``
    with the bear-off database set (``multipy_set_bearoff_db``): the C++ argmax of the same network's cubeless
    equity over all legal plays, batched, which is what the analyzer's "1ply" ranks by (it evaluates each play
    from Python and builds an object per play: about 1.7 times slower);
  - "2ply" and deeper: the analyzer's own ``checker_play_analytics`` (its 1-ply filter, 5 plays within 0.08,
    the survivors judged at the level, the "no 1-ply value in the top two" promotion), skipping only the
    per-play result objects, and with the ``clear_cache()`` it calls at the end of every play moved out of the
    timing: the benchmark calls it before each position instead, untimed, so every search starts from an empty
    cache as with the plain call and nothing is reused from one benchmark position to the next. That wipe (a
    memset of its whole thread-local position table) costs 2-4 ms a call on this machine whatever the table
    holds, more than half of a 2-ply play's time, and is no part of the search; it is reported apart
    (``untimed_reset_ms_per_move``). ``set_cache_enabled(False)`` is no substitute: a repeated evaluation is
    still answered at once. ``best_move_index`` at 2-ply and deeper is not used: it filters on cubeless equity
    where the analyzer filters on Janowski's cubeful equity (cube centred, even with ``cubeful=False``), and
    it skips the promotion, so it picks another play in a few percent of positions.

  After the timing, every timed answer is compared with the plain ``checker_play`` (untimed); the count that
  differ is printed (``differs_from_reference``) and should be 0. Its multi-ply search takes its thread count
  from ``BGBOT_MULTIPLY_THREADS`` (its ``parallel_threads`` argument is raised to at least 2), so that is set to
  1, and the analyzer's thread count is checked to be 1. Its board is bgai's with the opponent's bar (index 0)
  counted positive; the play it returns is seen from the mover.
* **gnubg-nn** (0-ply only): ``gnubg_nn.best_move(board, d1, d2, n=0, b=1)`` on ``bgai.players.gnubg.to_gnubg``'s
  rows.

Each engine's input is converted before the clock starts and its answer mapped back to a bgai afterstate after it
stops. Each engine first plays a few other positions untimed (the warm-up: one of each phase, met in the same
games, each with all 21 rolls, so that every compiled kernel of bgai's is loaded before the clock starts: with one
roll each, a single play in a thousand, the first double of a phase, took 60 ms, more than the rest of the list's
0-ply plays together), then each play of the list is timed with ``time.perf_counter`` (total over count; an
engine's untimed ``reset`` before each position, bgsage's cache wipe, is left out), Python's garbage collector off
after a full collection, so that no collection of the whole heap (torch's and bgai's objects too: about 0.1 s)
lands in one engine's timing. Every answer is checked against bgai's legal afterstates: one that is not among
them is counted ("unmapped"), not fatal (bgsage also lists a shorter last bear-off where a hit would use both
dice: see ``bgai/coach/oracles.py``). "Same play" is the share of positions where bgai and bgsage chose the same
afterstate (and bgai and gnubg-nn at 0-ply), over all positions and over the unforced ones. ``cpu/wall``
(process time over wall time while timing) near 1 confirms that an engine ran on one thread.
"""

from __future__ import annotations

import os

# Before numpy and torch are imported: BLAS on one thread unless the caller chose otherwise; the engines' own
# thread settings are the benchmark's definition (one thread each), so they are set outright.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
os.environ["BGAI_THREADS"] = "1"
os.environ["BGBOT_MULTIPLY_THREADS"] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bgai.coach.oracles import gnubg_positions  # noqa: E402
from bgai.core.dice import ROLLS  # noqa: E402
from bgai.core.files import provenance, write_json  # noqa: E402
from bgai.core.movegen import afterstates, switch  # noqa: E402
from bgai.core.progress import ticking  # noqa: E402
from bgai.eval import bearoff  # noqa: E402
from bgai.eval.bot import MAX_PLIES, load_bot  # noqa: E402
from bgai.formats.position import Position  # noqa: E402
from bgai.players.gnubg import from_gnubg, require_gnubg, to_gnubg  # noqa: E402
from bgai.players.sage import from_sage, to_sage  # noqa: E402

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BGAI_THREADS",
                    "BGBOT_MULTIPLY_THREADS")


# Positions ------------------------------------------------------------------------------------------------------


# Engines: each converts a (board, dice) pair to its own input (untimed), plays (timed), and maps its answer back
# to a bgai afterstate (opponent's view; untimed). ------------------------------------------------------------


class BgaiEngine:
    def __init__(self, plies: int, network: Path | None = None) -> None:
        start = time.perf_counter()
        self.bot = load_bot(network, plies=plies)
        bearoff.database()  # loaded on first use otherwise: inside the timing, unless the warm-up is a bear-off
        self.load_seconds = time.perf_counter() - start
        self.name, self.level = "bgai", f"{plies}-ply"

    def prepare(self, board, dice):
        return Position(board), (int(dice[0]), int(dice[1]))

    def play(self, job):
        return self.bot.choose_move(*job)

    def after(self, board, dice, answer) -> np.ndarray:
        return answer.after.board


class _ClearBeforeNotAfter:
    """A bgsage multi-ply strategy whose ``clear_cache()`` (which its analyzer calls at the end of every checker
    play) does nothing: the benchmark clears the real one before each position instead, untimed (``reset``)."""

    def __init__(self, strategy) -> None:
        self.strategy, self.evaluate_board = strategy, strategy.evaluate_board

    def clear_cache(self) -> None:
        pass


class SageEngine:
    def __init__(self, plies: int) -> None:
        import bgbot_cpp
        import bgsage
        from bgsage.weights import bearoff_db_path

        start = time.perf_counter()
        self.name, self.level = "bgsage", f"{plies + 1}ply"
        self.moves = bgbot_cpp.possible_moves
        self.strategy = self.analyzer = self.cache = None
        if plies == 0:
            weights = bgsage.default_weights()
            self.strategy = bgbot_cpp.create_multipy(weights.strategy_type, weights.weight_paths_list,
                                                     weights.hidden_sizes_list, n_plies=1)
            self.database = bgbot_cpp.BearoffDB()  # kept: the strategy holds only a pointer to it
            if not self.database.load(bearoff_db_path()):
                raise SystemExit("bgsage's bear-off database did not load")
            bgbot_cpp.multipy_set_bearoff_db(self.strategy, self.database)
        else:
            self.analyzer = bgsage.BgBotAnalyzer(eval_level=self.level, cubeful=False)
            inner = self.analyzer._analyzer
            if type(inner).__name__ != "_MultiPlyAnalyzer" or inner._parallel_threads != 1:
                raise SystemExit(f"bgsage {self.level}: expected its cubeless multi-ply analyzer on one thread, got "
                                 f"{type(inner).__name__} on {getattr(inner, '_parallel_threads', '?')}")
            self.cache = inner._strategy_nply
            inner._strategy_nply = _ClearBeforeNotAfter(self.cache)
        self.load_seconds = time.perf_counter() - start
        # The plain analyzer, untouched, to check (untimed) that the timed path plays as its checker_play does.
        self.reference = bgsage.BgBotAnalyzer(eval_level=self.level, cubeful=False)

    def prepare(self, board, dice):
        return to_sage(board), int(dice[0]), int(dice[1])

    def reset(self) -> None:
        """Untimed, before each position: an empty position cache, as the analyzer leaves it after each play."""
        if self.cache is not None:
            self.cache.clear_cache()

    def play(self, job):
        board, d1, d2 = job
        moves = self.moves(board, d1, d2)
        if len(moves) <= 1:  # forced, or no play: nothing to judge (bgai's choose_move skips these too)
            return moves[0] if moves else None
        if self.strategy is not None:
            return moves[self.strategy.best_move_index(moves, board)]
        return self.analyzer._analyzer.checker_play_analytics(board, d1, d2)[0]["board"]

    def reference_play(self, job):
        moves = self.reference.checker_play(*job).moves
        return moves[0].board if moves else None

    def after(self, board, dice, answer) -> np.ndarray:
        if answer is None:  # no legal play: the position passes to the opponent as it is
            return switch(board)
        return switch(from_sage(answer))


class GnubgEngine:
    def __init__(self) -> None:
        self.gnubg = require_gnubg()
        self.load_seconds = 0.0
        self.name, self.level = "gnubg-nn", "0-ply"

    def prepare(self, board, dice):
        return to_gnubg(board), int(dice[0]), int(dice[1])

    def play(self, job):
        rows, d1, d2 = job
        return self.gnubg.best_move(rows, d1, d2, n=0, b=1)

    def after(self, board, dice, answer) -> np.ndarray:
        return from_gnubg(self.gnubg.board_from_position_key(answer[1]))


def time_engine(engine, boards, dice, legal: list[set], warm_up) -> dict:
    """Milliseconds per move over the whole list (each play timed, an engine's ``reset`` before it not), after an
    untimed warm-up, and the afterstates chosen."""
    jobs = [engine.prepare(b, d) for b, d in zip(boards, dice)]
    for board in warm_up[0]:  # every roll: a double's play, or a phase's, may take a path the others do not
        for d in ROLLS.astype(np.int64):  # (bgai.core.dice's 21 distinct rolls)
            engine.play(engine.prepare(board, d))
    answers, reset = [], getattr(engine, "reset", None)
    wall = reset_seconds = 0.0
    clock = time.perf_counter
    gc.collect()
    gc.disable()  # else a collection of the whole heap (torch, bgai: ~170k objects) may land inside the timing
    try:
        cpu, loop = time.process_time(), clock()
        for job in jobs:
            if reset is not None:
                start = clock()
                reset()
                reset_seconds += clock() - start
            start = clock()
            answers.append(engine.play(job))
            wall += clock() - start
        loop = clock() - loop
        cpu = time.process_time() - cpu
    finally:
        gc.enable()
    differs = None
    if hasattr(engine, "reference_play"):  # untimed: the timed path must play as the engine's plain call does
        differs = sum(list(answer or ()) != list(engine.reference_play(job) or ())
                      for job, answer in zip(jobs, answers))
    chosen, unmapped = [], 0
    for board, d, answer, moves in zip(boards, dice, answers, legal):
        try:
            after = engine.after(board, d, answer)
        except Exception:  # an answer that does not convert is counted with those that are not legal
            after = None
        if after is None or after.tobytes() not in moves:
            unmapped += 1
            after = None
        chosen.append(None if after is None else after.tobytes())
    return {"engine": engine.name, "level": engine.level, "moves": len(jobs), "ms_per_move": 1000 * wall / len(jobs),
            **({} if reset is None else {"untimed_reset_ms_per_move": 1000 * reset_seconds / len(jobs)}),
            "cpu_per_wall": cpu / loop, "unmapped": unmapped, "load_seconds": engine.load_seconds,
            **({} if differs is None else {"differs_from_reference": differs}), "_chosen": chosen}


def same_play(a: list, b: list, unforced: np.ndarray) -> tuple[float, float]:
    """Share of positions where two engines chose the same afterstate: over all, and over the unforced ones."""
    same = np.array([x is not None and x == y for x, y in zip(a, b)])
    return float(same.mean()), float(same[unforced].mean()) if unforced.any() else float("nan")


# The run ----------------------------------------------------------------------------------------------------


def machine() -> dict:
    """The machine in detail (``provenance``'s ``machine`` is the short form): processor, threads, versions."""
    processor = platform.processor()
    try:
        processor = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                         if line.startswith("model name")) or processor
    except (OSError, StopIteration):
        pass
    return {
        "platform": platform.platform(),
        "processor": processor,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        "thread_variables": {name: os.environ.get(name) for name in THREAD_VARIABLES},
        "bgsage": metadata.version("bgsage"),
        "gnubg_nn": metadata.version("gnubg-nn"),
        "load_average_at_start": os.getloadavg()[0],
    }


def bench(boards, dice, warm_up, plies: list[int], deep_positions: int, network: Path | None = None) -> list[dict]:
    moves = [afterstates(b[None], np.array([d])).after for b, d in zip(boards, dice)]
    legal = [{a.tobytes() for a in after} for after in moves]
    forced = np.array([len(after) == 1 for after in moves])
    rows = []
    for p in plies:
        n = deep_positions if p >= 2 else len(boards)
        args = (boards[:n], dice[:n], legal[:n], warm_up)
        ours, sage = time_engine(BgaiEngine(p, network), *args), time_engine(SageEngine(p), *args)
        row = {"plies": p, "positions": n, "forced": int(forced[:n].sum()), "bgai": ours, "bgsage": sage,
               "ratio_bgai_bgsage": ours["ms_per_move"] / sage["ms_per_move"]}
        row["same_play_bgsage"], row["same_play_bgsage_unforced"] = same_play(ours["_chosen"], sage["_chosen"],
                                                                              ~forced[:n])
        if p == 0:
            gnubg = time_engine(GnubgEngine(), *args)
            row["gnubg_nn"] = gnubg
            row["ratio_bgai_gnubg_nn"] = ours["ms_per_move"] / gnubg["ms_per_move"]
            row["same_play_gnubg_nn"], row["same_play_gnubg_nn_unforced"] = same_play(
                ours["_chosen"], gnubg["_chosen"], ~forced[:n])
        rows.append(row)
        print(f"  {p}-ply done: bgai {ours['ms_per_move']:.2f} ms, bgsage {sage['ms_per_move']:.2f} ms per move",
              flush=True)
    for row in rows:
        for key in ("bgai", "bgsage", "gnubg_nn"):
            row.get(key, {}).pop("_chosen", None)
    return rows


def print_table(rows: list[dict]) -> None:
    print(f"\n{'ply':<4} {'bgsage':<7} {'moves':>5} {'forced':>6}   {'bgai ms':>8} {'bgsage ms':>9} "
          f"{'gnubg-nn ms':>11}   {'bgai/bgsage':>11} {'bgai/gnubg':>10}   {'same play as bgsage':>19} "
          f"{'(unforced)':>10}")
    for r in rows:
        gnubg = r.get("gnubg_nn")
        print(f"{r['plies']:<4} {r['bgsage']['level']:<7} {r['positions']:>5} {r['forced']:>6}   "
              f"{r['bgai']['ms_per_move']:>8.2f} {r['bgsage']['ms_per_move']:>9.2f} "
              f"{gnubg['ms_per_move'] if gnubg else float('nan'):>11.3f}   {r['ratio_bgai_bgsage']:>11.2f} "
              f"{r.get('ratio_bgai_gnubg_nn', float('nan')):>10.2f}   {100 * r['same_play_bgsage']:>18.1f}% "
              f"{100 * r['same_play_bgsage_unforced']:>9.1f}%")
    if any("gnubg_nn" in r for r in rows):
        r = next(r for r in rows if "gnubg_nn" in r)
        print(f"bgai and gnubg-nn at 0-ply chose the same play in {100 * r['same_play_gnubg_nn']:.1f}% of positions "
              f"({100 * r['same_play_gnubg_nn_unforced']:.1f}% of unforced ones)")
    print("cpu/wall while timing (1.0 = one busy thread): " + ", ".join(
        f"{r[k]['engine']} {r[k]['level']} {r[k]['cpu_per_wall']:.2f}" for r in rows
        for k in ("bgai", "bgsage", "gnubg_nn") if k in r))
    unmapped = [f"{r[k]['engine']} {r[k]['level']}: {r[k]['unmapped']}" for r in rows
                for k in ("bgsage", "gnubg_nn", "bgai") if k in r and r[k]["unmapped"]]
    print("plays not among bgai's legal afterstates: " + (", ".join(unmapped) if unmapped else "none"))
    print("bgsage plays unlike its plain BgBotAnalyzer(...).checker_play: " + ", ".join(
        f"{r['bgsage']['level']} {r['bgsage'].get('differs_from_reference', '?')}/{r['positions']}" for r in rows))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=200, help="positions (each with a roll) at 0 and 1-ply")
    parser.add_argument("--positions-2ply", type=int, help="the first M of them at 2-ply (default: all)")
    parser.add_argument("--plies", type=int, nargs="+", default=list(range(MAX_PLIES + 1)),
                        choices=range(MAX_PLIES + 1), help="bgai's plies (bgsage's level is one more)")
    parser.add_argument("--network", type=Path,
                        help="bgai's network file at every ply (default: the one load_bot ships for each ply)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    deep = args.positions if args.positions_2ply is None else args.positions_2ply
    if not 1 <= deep <= args.positions:
        parser.error(f"--positions-2ply must be between 1 and --positions ({args.positions}), got {deep}")
    torch.set_num_threads(1)
    figures = {**provenance(), "system": machine(), "positions": args.positions, "positions_2ply": deep,
               "seed": args.seed, "network": str(args.network) if args.network else "shipped"}
    if args.network and not args.network.is_file():
        parser.error(f"--network: no such file: {args.network}")
    start = time.perf_counter()
    boards, dice, *warm_up = gnubg_positions(args.positions, args.seed)
    print(f"{args.positions} positions from gnubg-nn 0-ply self-play in {time.perf_counter() - start:.1f} s",
          flush=True)
    rows = bench(boards, dice, warm_up, sorted(set(args.plies)), deep, args.network)
    print_table(rows)
    figures["warm_up_positions"] = len(warm_up[0])
    figures["warm_up_rolls"] = len(ROLLS)
    figures["rows"] = rows
    figures["system"]["load_average_at_end"] = os.getloadavg()[0]
    if args.json:
        write_json(args.json, figures, indent=2)


if __name__ == "__main__":
    with ticking("ply_speed"):  # the time spent, on standard error, while the parts run
        main()
