"""Rollout figures: speed against GNU Backgammon's own rollouts, what variance reduction buys, and what the bear-off
database is worth to the bot in races.

    python benchmarks/rollout_bench.py [--json benchmarks/results/rollout.json] [--repeats 2]
        [--se-trials 1296] [--bearoff-games 3000] [--skip speed,se,bearoff] [--positions contact,prime,race]

* **Speed** (``speed``): trials per second of a 324-trial cubeless rollout of the opening position at 0-ply,
  played to the end or truncated at 7 plies, with and without variance reduction, by bgai (in this process,
  ``bgai.eval.rollout.rollout``; the bot and the bear-off database already loaded) and by Debian's ``gnubg`` (its
  ``rollout`` command from a command file, 2 threads, quasi-random dice, timed from outside). Each setting runs
  ``--repeats`` times, gnubg and bgai in turn, and the fastest run of each counts (the machine is shared). gnubg's
  time is given whole and less its start-up (the same command file without ``rollout``). Both end cubeless trials
  at bear-offs (bgai's default ``bearoff="race"``; gnubg's "truncated at one-sided bearoff"), and both evaluate
  truncated trials at 0-ply (gnubg is told to: its default is 2-ply). gnubg's other settings are its defaults (its
  0-ply checker play uses its pruning nets and cubeful evaluations). ``--positions`` adds other positions
  (``POSITIONS``: a contact position, a prime, a race), each with ``bgai rollout``'s defaults only.
* **Standard error** (``se``): a ``--se-trials`` rollout of a middle-game position (``MIDDLE_GAME``, the bot's own
  game ten turns in), played to the end: the cubeless equity's standard error with and without variance
  reduction, on the same trials.
* **Bear-off database** (``bearoff``): the bot's own 0-ply games (with the database); every position met with at
  most six checkers a side (where the two-sided database is exact), with its roll. The bot chooses a play with the
  database on and with it off (``Bot(..., use_bearoff=False)``: the network judges bear-offs); the exact equity
  (2 P(win) - 1: no gammons are left) of the best play minus that of the play chosen is the equity lost.

GNU Backgammon is a yardstick here only: nothing it computes is used by bgai.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
import time

import numpy as np

from bgai.core.files import provenance, write_json
from bgai.core.game import play_games
from bgai.core.movegen import afterstates
from bgai.core.progress import ticking
from bgai.eval import bearoff
from bgai.eval.bot import Bot, load_bot
from bgai.eval.rollout import rollout, torch_threads
from bgai.eval.weights import equity  # not bgai.eval.network: the workers import this script, and torch with it

GNUBG = "/usr/games/gnubg"
OPENING = "4HPwATDgc/ABMA"
MIDDLE_GAME = "4HPkAxDguWHAIQ"
# The other positions of the speed comparison (``--positions``), each rolled out with ``bgai rollout``'s defaults
# only (to the end, with variance reduction): a contact position (the bot's own game ten turns in), a prime (the
# player on roll's six points from its 8 to its 3 in front of two opposing checkers on its ace point) and a race
# (69 against 76 pips).
POSITIONS = {"opening": OPENING, "contact": MIDDLE_GAME, "prime": "trsDADBsuw0GAA", "race": "3N0zAAC2uycAAA"}
SPEED_TRIALS = 324
TRUNCATE = 7
SETTINGS = [(truncate, vr) for truncate in (None, TRUNCATE) for vr in (False, True)]


# Speed ------------------------------------------------------------------------------------------------------------


def gnubg_commands(trials: int, truncate: int | None, vr: bool, roll: bool = True, position: str = OPENING) -> str:
    lines = [
        "set threads 2",
        f"set rollout trials {trials}",
        "set rollout quasirandom on",
        "set rollout chequerplay plies 0",
        "set rollout cubeful off",
        f"set rollout varredn {'on' if vr else 'off'}",
        f"set rollout truncation enable {'on' if truncate else 'off'}",
    ]
    if truncate:  # evaluated at 0-ply where the trials stop, as bgai does (gnubg's default is 2-ply)
        lines += [f"set rollout truncation plies {truncate}", "set rollout truncation chequerplay plies 0",
                  "set rollout truncation cubedecision plies 0"]
    lines += ["new game", f"set board {position}"]
    if roll:
        lines.append("rollout")
    return "\n".join(lines) + "\n"


def run_gnubg(commands: str) -> tuple[float, str]:
    """Wall-clock seconds of ``gnubg -t -q`` on ``commands``, and its output. It prints rollout results only to a
    terminal, so it runs under ``script`` (a pseudo-terminal)."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(commands)
    try:
        started = time.perf_counter()
        out = subprocess.run(["script", "-qc", f"{GNUBG} -t -q < {f.name}", "/dev/null"], capture_output=True,
                             text=True, check=True).stdout
        return time.perf_counter() - started, out
    finally:
        os.unlink(f.name)


def parse_gnubg_rollout(out: str) -> dict:
    """The last result block: equity and its standard error (cubeless)."""
    values = re.findall(r"CL\s+([+-]?\d+\.\d+)", out)
    if len(values) < 2:
        raise RuntimeError(f"no rollout result in gnubg's output:\n{out[-2000:]}")
    return {"equity": float(values[-2]), "se": float(values[-1])}


def speed(bot: Bot, repeats: int, trials: int = SPEED_TRIALS, jobs: int = 1, position: str = OPENING,
          settings=SETTINGS) -> dict:
    startup, _ = min(run_gnubg(gnubg_commands(trials, None, False, roll=False, position=position))
                     for _ in range(repeats))
    rows = []
    for truncate, vr in settings:
        g_runs, b_runs = [], []
        for _ in range(repeats):
            seconds, out = run_gnubg(gnubg_commands(trials, truncate, vr, position=position))
            g_runs.append((seconds, parse_gnubg_rollout(out)))
            result = rollout(bot, position, trials=trials, truncate=truncate, variance_reduction=vr,
                             jobs=jobs)
            b_runs.append(result)
        g_seconds, g_result = min(g_runs, key=lambda r: r[0])
        best = min(b_runs, key=lambda r: r.seconds)
        row = {
            "setting": f"{f'truncated at {truncate} plies' if truncate else 'full'}, "
                       f"{'with' if vr else 'without'} variance reduction",
            "truncate": truncate,
            "variance_reduction": vr,
            "bgai_seconds": [round(r.seconds, 2) for r in b_runs],
            "bgai_trials_per_s": trials / best.seconds,
            "bgai_equity": best.equity.mean,
            "bgai_se": best.equity.se,
            "gnubg_seconds": [round(s, 2) for s, _ in g_runs],
            "gnubg_trials_per_s": trials / g_seconds,
            "gnubg_trials_per_s_less_startup": trials / max(g_seconds - startup, 1e-3),
            "gnubg_equity": g_result["equity"],
            "gnubg_se": g_result["se"],
        }
        row["ratio"] = row["bgai_trials_per_s"] / row["gnubg_trials_per_s"]
        row["ratio_less_startup"] = row["bgai_trials_per_s"] / row["gnubg_trials_per_s_less_startup"]
        rows.append(row)
        print(f"  {row['setting']:<45} bgai {row['bgai_trials_per_s']:7.1f}/s   gnubg "
              f"{row['gnubg_trials_per_s']:7.1f}/s ({row['gnubg_trials_per_s_less_startup']:7.1f}/s less start-up)"
              f"   ratio {row['ratio']:.2f} ({row['ratio_less_startup']:.2f})", flush=True)
    return {"trials": trials, "jobs": jobs, "position": position, "gnubg_startup_seconds": startup, "rows": rows,
            "gnubg_commands": {r["setting"]: gnubg_commands(trials, r["truncate"], r["variance_reduction"],
                                                            position=position) for r in rows}}


# Standard error ---------------------------------------------------------------------------------------------------


def standard_error(bot: Bot, trials: int) -> dict:
    result = rollout(bot, MIDDLE_GAME, trials=trials, variance_reduction=True)
    e = result.equity
    figures = {"position": MIDDLE_GAME, "trials": trials, "equity": e.mean, "se": e.se, "equity_without_vr":
               e.plain_mean, "se_without_vr": e.plain_se, "se_ratio": e.plain_se / e.se,
               "seconds": result.seconds, "trials_per_s": result.trials_per_s}
    print(f"  {trials} trials of {MIDDLE_GAME}: equity {e.mean:+.4f} ± {e.se:.4f} with variance reduction, "
          f"{e.plain_mean:+.4f} ± {e.plain_se:.4f} without: {figures['se_ratio']:.1f}x smaller "
          f"({result.seconds:.0f} s)", flush=True)
    return figures


# The bear-off database ----------------------------------------------------------------------------------------


class _Recorder:
    """The bot, writing down every exact bear-off position it moves in, with its roll."""

    def __init__(self, bot: Bot) -> None:
        self.bot, self.name, self.seen = bot, bot.name, []

    def choose(self, boards, after, owner, rng, dice=None):
        exact = bearoff.database().exact(boards)
        if exact.any():
            self.seen.append((boards[exact].copy(), np.asarray(dice)[exact].copy()))
        return self.bot.choose(boards, after, owner, rng, dice=dice)


def bearoff_value(bot: Bot, games: int) -> dict:
    recorder = _Recorder(bot)
    with torch_threads(1):
        play_games(recorder, recorder, games, seed=2024)
    boards = np.concatenate([b for b, _ in recorder.seen])
    dice = np.concatenate([d for _, d in recorder.seen])
    moves = afterstates(boards, dice)
    exact = -equity(bot.probabilities(moves.after).astype(np.float64))  # exact here (or over); for the mover
    counts = np.bincount(moves.owner, minlength=len(boards))
    best = np.maximum.reduceat(exact, np.cumsum(counts) - counts)
    unforced = counts > 1
    without = Bot(bot.model, name=f"{bot.name} (no bear-off database)", use_bearoff=False)
    figures = {"games": games, "positions": int(len(boards)), "unforced": int(unforced.sum())}
    for label, player in (("with_database", bot), ("without_database", without)):
        with torch_threads(1):
            pick = player.choose(boards, moves.after, moves.owner)
        lost = best - exact[pick]
        figures[label] = {
            "equity_lost_per_move": float(lost.mean()),
            "equity_lost_per_unforced_move": float(lost[unforced].mean()),
            "se_per_unforced_move": float(lost[unforced].std(ddof=1) / np.sqrt(unforced.sum())),
            "share_of_unforced_moves_wrong": float((lost[unforced] > 1e-9).mean()),
        }
        print(f"  {label.replace('_', ' '):<17} {1000 * lost[unforced].mean():7.2f} millipoints lost per unforced "
              f"move ({100 * (lost[unforced] > 1e-9).mean():.1f}% of {unforced.sum()} moves wrong)", flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--se-trials", type=int, default=1296)
    parser.add_argument("--bearoff-games", type=int, default=3000)
    parser.add_argument("--skip", default="", help="comma-separated: speed, se, bearoff")
    parser.add_argument("--trials", type=int, default=SPEED_TRIALS, help="trials of the speed rollouts")
    parser.add_argument("--jobs", type=int, default=1, help="bgai's jobs in the speed rollouts (threads, processes "
                        "beyond 4; 1: one thread; bgai rollout's default is one per core)")
    parser.add_argument("--positions", default="", help="comma-separated, of " + ", ".join(POSITIONS) + ": also "
                        "roll these out for speed with bgai rollout's defaults (to the end, variance reduction)")
    args = parser.parse_args()
    extra = [name for name in filter(None, args.positions.split(","))]
    if any(name not in POSITIONS for name in extra):
        parser.error(f"--positions: each of {', '.join(POSITIONS)}")
    skip = set(filter(None, args.skip.split(",")))
    bot = load_bot()
    bearoff.database()
    rollout(bot, OPENING, trials=36, truncate=2)  # warm up
    figures = {
        **provenance(),
        "load_average_at_start": os.getloadavg(),
        "bot": bot.name,
        "gnubg": subprocess.run([GNUBG, "--version"], capture_output=True, text=True).stdout.splitlines()[0],
    }
    if "speed" not in skip:
        print(f"Speed: {args.trials}-trial cubeless rollouts of the opening position at 0-ply, bgai on {args.jobs} "
              f"job(s)")
        figures["speed"] = speed(bot, args.repeats, args.trials, args.jobs)
        for name in extra:
            print(f"Speed: {args.trials}-trial rollout of the {name} position ({POSITIONS[name]})")
            figures[f"speed_{name}"] = speed(bot, args.repeats, args.trials, args.jobs, POSITIONS[name],
                                             [(None, True)])
    if "se" not in skip:
        print("Standard error with and without variance reduction")
        figures["standard_error"] = standard_error(bot, args.se_trials)
    if "bearoff" not in skip:
        print("Equity lost in exact bear-offs (six checkers a side or fewer), judged by the database")
        figures["bearoff_database"] = bearoff_value(bot, args.bearoff_games)
    if args.json:
        write_json(args.json, figures)


if __name__ == "__main__":
    with ticking("rollout_bench"):  # the time spent, on standard error, while the parts run
        main()
