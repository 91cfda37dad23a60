"""bgai against GNU Backgammon inside GNU Backgammon: cubeful money games through gnubg's external player interface.

    python benchmarks/external_bench.py --games 400 --json benchmarks/results/external.json

``bgai external`` (``bgai.frontends.external``, here in this process) serves one of Debian gnubg's two players; gnubg's
own player is the other, at 0-ply without noise, and gnubg runs the games: its dice, its rules (the Jacoby rule on, as
gnubg's default; beavers as gnubg allows them), its record. Half the games bgai is gnubg's player 0, half its
player 1, each half a session on the same seed. The result comes from gnubg's own record of the games (``export
match mat``, read back by ``bgai.formats.matchfile``): points per game for bgai, with the standard error of the mean.
``--cubeless G`` also runs ``bgai bench --opponent gnubg --games G`` (cubeless duplicate games against gnubg-nn
0-ply, the README's strength figure) in the same run, for the two side by side.

GNU Backgammon is the opponent and judge here, never a teacher.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from bgai.core.files import provenance, write_json
from bgai.core.progress import ticking
from bgai.eval.bot import load_bot
from bgai.formats.matchfile import read_match
from bgai.frontends.external import serve

GNUBG = "/usr/games/gnubg"


def session_commands(seat: int, port: int, games: int, seed: int, plies: int, out: Path) -> list[str]:
    other = 1 - seat
    return [f"set seed {seed}", "set threads 1", "set jacoby on", "set automatic game off",
            f"set player {seat} external 127.0.0.1:{port}", f"set player {other} gnubg",
            f"set player {other} chequerplay evaluation plies {plies}",
            f"set player {other} cubedecision evaluation plies {plies}",
            "new session", *["new game"] * (games - 1),
            f"set player {seat} name bgai", f"set player {other} name gnubg", f"export match mat {out}", "quit", "y"]


def play_session(seat: int, port: int, games: int, seed: int, plies: int, folder: Path) -> list[int]:
    """bgai's points in each game of a gnubg money session with bgai at ``seat``."""
    out = folder / f"seat{seat}.mat"
    done = subprocess.run([GNUBG, "-t", "-q"], input="\n".join(session_commands(seat, port, games, seed, plies, out)),
                          capture_output=True, text=True, timeout=24 * 3600)
    text = done.stdout + done.stderr
    for bad in ("Error (", "Unable", "badly formed", "External connection closed"):
        if bad in text:
            raise SystemExit(f"gnubg reported {bad!r}:\n{text[-2000:]}")
    record = read_match(out)
    points = []
    for game in record.games:
        win = game.result
        if win is None:
            raise SystemExit(f"game {game.number} of {out} has no result")
        points.append(win.points if win.player == seat else -win.points)
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=400, help="money games in all, half in each seat (default 400)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plies", type=int, default=0, help="both players' lookahead, their checker play's and "
                                                              "their cube's alike (default 0)")
    parser.add_argument("--cubeless", type=int, default=0, metavar="G",
                        help="also bgai bench --opponent gnubg --games G, side by side (default: not run)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()

    bot = load_bot(plies=args.plies, cube_plies=args.plies)  # gnubg's cube looks as deep as its checker play
    ports = []
    threading.Thread(target=serve, args=(bot, "127.0.0.1", 0), kwargs=dict(jacoby=True, ready=ports.append),
                     daemon=True).start()
    while not ports:
        time.sleep(0.01)
    started = time.time()
    points = []
    with tempfile.TemporaryDirectory() as folder, tqdm(total=2, desc="gnubg sessions", unit="session") as bar:
        for seat in (0, 1):
            points += play_session(seat, ports[0], args.games // 2, args.seed, args.plies, Path(folder))
            bar.update()
    seconds = time.time() - started
    p = np.array(points, dtype=np.float64)
    result = {**provenance(), "games": len(p), "ppg": float(p.mean()),
              "ppg_se": float(p.std(ddof=1) / np.sqrt(len(p))), "win_rate": float((p > 0).mean()),
              "mean_abs_points": float(np.abs(p).mean()), "plies": args.plies, "cube_plies": bot.cube_plies,
              "seed": args.seed, "seconds": seconds}
    print(f"bgai (external, {args.plies}-ply, cubeful) v gnubg {args.plies}-ply inside gnubg: {len(p)} money games, "
          f"{result['ppg']:+.3f} ± {result['ppg_se']:.3f} ppg for bgai, wins {100 * result['win_rate']:.1f}%, "
          f"{seconds:.0f} s")
    if args.cubeless:
        bench = subprocess.run([sys.executable, "-m", "bgai.frontends.cli", "bench", "--opponent", "gnubg", "--games",
                                str(args.cubeless), "--plies", str(args.plies), "--quiet"],
                               capture_output=True, text=True, check=True)
        cubeless = json.loads(bench.stdout.strip().splitlines()[-1])
        result["cubeless"] = {k: cubeless[k] for k in ("games", "ppg", "ppg_se") if k in cubeless}
        print(f"bgai bench --opponent gnubg (cubeless, duplicate): {cubeless['games']} games, "
              f"{cubeless['ppg']:+.3f} ± {cubeless['ppg_se']:.3f} ppg")
    if args.json:
        write_json(args.json, result, indent=2)


if __name__ == "__main__":
    with ticking("external_bench"):  # the time spent, on standard error, while the parts run
        main()
