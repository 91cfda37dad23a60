"""Matches GNU Backgammon plays against itself: real match files for the tests and the analysis benchmark.

    python -m bgai.coach.gnubg_matches --length 5 --seed 11 --out tests/data/matches
    python -m bgai.coach.gnubg_matches --length 0 --games 3 --seed 3 --out tests/data/matches   # a money session
    python -m bgai.coach.gnubg_matches --length 7 --seed 1 --analyse --out /tmp/matches          # with its analysis

Each run writes ``gnubg-{length}pt-seed{seed}`` (``gnubg-money-seed{seed}`` for a session) ``.mat`` (GNU
Backgammon's ``export match mat``) and ``.sgf`` (``save match`` after ``analyse clear match``, so without the
evaluations gnubg stores while it plays). With ``--analyse`` gnubg also analyses the match with its default
analysis settings (2-ply, cubeful) and writes ``-analysis.json``: its statistics and, for every decision, its
evaluations (``gnubg.match(analysis=1)``), which ``benchmarks/analysis_vs_gnubg.py`` compares with bgai's.

How a match is made (Debian's gnubg 1.07 running ``run_in_gnubg`` in its embedded Python: ``bgai.coach.gnubg_job``):
both players are gnubg at 0-ply, with evaluation noise (``--noise`` for checker play, ``--cube-noise`` for the cube;
gnubg's "pseudo-random", deterministic noise) so that there are errors to find; ``set seed`` fixes the dice. The same
seed and settings give the same match. Player names are set after the play (``new match`` resets them).

GNU Backgammon is a source of test data and a judge here; nothing it computes becomes a training target.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

GNUBG = "/usr/games/gnubg"


def match_name(length: int, seed: int) -> str:
    return f"gnubg-{length}pt-seed{seed}" if length else f"gnubg-money-seed{seed}"


def commands(job: dict) -> list[str]:
    """The gnubg commands that play the match of ``job`` and save it."""
    out = Path(job["out"]) / job["name"]
    # A session never ends by itself: with "automatic game off" each "new game" plays one game.
    lines = [f"set seed {job['seed']}", "set jacoby off", f"set automatic game {'on' if job['length'] else 'off'}"]
    for player in (0, 1):
        lines += [
            f"set player {player} gnubg",
            f"set player {player} chequerplay evaluation plies 0",
            f"set player {player} cubedecision evaluation plies 0",
            f"set player {player} chequerplay evaluation noise {job['noise']}",
            f"set player {player} cubedecision evaluation noise {job['cube_noise']}",
        ]
    if job["length"]:
        lines.append(f"new match {job['length']}")
    else:
        lines += ["new session"] + ["new game"] * (job["games"] - 1)
    lines += [f"set player 0 name {job['players'][0]}", f"set player 1 name {job['players'][1]}"]
    kind = "match" if job["length"] else "session"
    lines += [f"export match mat {out}.mat", f"analyse clear {kind}", f"save match {out}.sgf"]
    if job["analyse"]:
        if job.get("analysis_plies") is not None:
            lines += [f"set analysis chequerplay evaluation plies {job['analysis_plies']}",
                      f"set analysis cubedecision evaluation plies {job['analysis_plies']}"]
        lines.append(f"analyse {kind}")
    return lines


def run_in_gnubg(job: dict) -> None:
    """Inside gnubg's embedded Python: play, save and (with ``analyse``) dump gnubg's analysis as JSON."""
    import gnubg

    gnubg.command("set threads 1")
    started = time.time()
    for line in commands(job):
        if line.startswith("analyse ") and "clear" not in line:
            played = time.time()
            gnubg.command(line)
            analysis_seconds = time.time() - played
        else:
            gnubg.command(line)
    if job["analyse"]:
        data = gnubg.match(analysis=1, boards=0, statistics=1, verbose=0)
        data["seconds"] = {"total": time.time() - started, "analysis": analysis_seconds}
        path = Path(job["out"]) / f"{job['name']}-analysis.json"
        path.write_text(json.dumps(data, default=str))


def make_match(out: Path, length: int, seed: int, *, games: int = 3, noise: float = 0.03, cube_noise: float = 0.01,
               players=("Alice", "Bob"), analyse: bool = False, analysis_plies: int | None = None) -> dict:
    """Have gnubg play a match (``length`` 0: a money session of ``games`` games) and save it under ``out``; with
    ``analyse``, gnubg's analysis too, at its default settings or with checker play and cube decisions judged at
    ``analysis_plies``. Returns the paths written and gnubg's time."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    name = match_name(length, seed)
    job = {"out": str(out.resolve()), "name": name, "length": length, "seed": seed, "games": games, "noise": noise,
           "cube_noise": cube_noise, "players": list(players), "analyse": analyse, "analysis_plies": analysis_plies}
    from bgai.coach import gnubg_job  # (here, not at the top: gnubg's Python, which reads this file, has no bgai)

    started = time.time()
    gnubg_job.run(Path(__file__), "run_in_gnubg", job, GNUBG, timeout=1800)
    paths = {"mat": out / f"{name}.mat", "sgf": out / f"{name}.sgf", "seconds": time.time() - started}
    if analyse:
        paths["analysis"] = out / f"{name}-analysis.json"
    return paths


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder of the files written")
    parser.add_argument("--length", type=int, default=7, help="match length; 0 for a money session (default 7)")
    parser.add_argument("--games", type=int, default=3, help="games of a money session (default 3)")
    parser.add_argument("--seed", type=int, nargs="+", default=[1], help="dice seeds, one match each (default 1)")
    parser.add_argument("--noise", type=float, default=0.03, help="checker-play evaluation noise (default 0.03)")
    parser.add_argument("--cube-noise", type=float, default=0.01, help="cube evaluation noise (default 0.01)")
    parser.add_argument("--players", nargs=2, default=["Alice", "Bob"], help="the two names (default Alice Bob)")
    parser.add_argument("--analyse", action="store_true", help="also write gnubg's analysis (-analysis.json)")
    args = parser.parse_args(argv)
    for seed in args.seed:
        paths = make_match(args.out, args.length, seed, games=args.games, noise=args.noise,
                           cube_noise=args.cube_noise, players=args.players, analyse=args.analyse)
        print(f"{paths['mat']} ({paths['seconds']:.1f} s)")


if __name__ == "__main__":
    main()
