"""Rollouts of many positions: the label of a training position (72 trials, truncated at 7 plies, variance
reduction, 0-ply play, cubeless), bgai beside GNU Backgammon on the same positions in one run.

    python benchmarks/rollout_positions_bench.py [--positions 60] [--seed 11] [--repeats 2] [--trials 72]
        [--truncate 7] [--json benchmarks/results/rollout_positions.json]

The positions are met in gnubg-nn's 0-ply self-play (``bgai.coach.oracles.gnubg_positions``: every phase, the
player on roll before the roll), written one Position ID a line to a file. Three whole processes are timed in
turn, ``--repeats`` times each (the fastest run of each counts; start-up included in all three):

* ``bgai rollout --positions FILE --jobs 2``: two threads of one process share the positions, a chunk of 12 at a
  time (``rollout_chunks``);
* ``bgai rollout --positions FILE --jobs 1``: one thread (the move generator's threads use the second core where
  they can);
* the code as it was before (``--baseline``, a commit: issue 37's "today", checked out in a temporary git
  worktree): its ``bgai.eval.rollout.rollout_values`` on the same positions in one process, as training labelled
  positions then (a first run, untimed, compiles its kernels);
* Debian's ``gnubg`` on 2 threads, every position of the file rolled out with the same settings (quasi-random
  dice, 0-ply play, truncation at 7 plies evaluated at 0-ply, cubeless, variance reduction), one command file.

bgai's two runs roll each position on the same dice (``--seed``) and must agree to rounding; gnubg's values are
shown beside them as a sanity check (another network: they differ by its evaluation, within a few hundredths).
GNU Backgammon is a yardstick here only: nothing it computes is used by bgai.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

GNUBG = "/usr/games/gnubg"
ROOT = Path(__file__).resolve().parents[1]
BGAI = [sys.executable, "-m", "bgai.frontends.cli"]


def gnubg_commands(position_ids: list[str], trials: int, truncate: int) -> str:
    lines = ["set threads 2", f"set rollout trials {trials}", "set rollout quasirandom on",
             "set rollout chequerplay plies 0", "set rollout cubeful off", "set rollout varredn on",
             "set rollout truncation enable on", f"set rollout truncation plies {truncate}",
             "set rollout truncation chequerplay plies 0", "set rollout truncation cubedecision plies 0",
             "new game"]
    for pid in position_ids:
        lines += [f"set board {pid}", "rollout"]
    return "\n".join(lines) + "\n"


def run_gnubg(commands: str) -> tuple[float, list[tuple[float, float]]]:
    """Wall-clock seconds of ``gnubg -t -q`` on ``commands`` and each rollout's (equity, standard error). It
    prints rollout results only to a terminal, so it runs under ``script``."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(commands)
    started = time.perf_counter()
    out = subprocess.run(["script", "-qc", f"{GNUBG} -t -q < {f.name}", "/dev/null"], capture_output=True,
                         text=True, check=True).stdout
    seconds = time.perf_counter() - started
    Path(f.name).unlink()
    results = []
    for block in out.split("Rollout done. Printing final results.")[1:]:
        values = re.findall(r"CL\s+([+-]?\d+\.\d+)", block)
        results.append((float(values[0]), float(values[1])))
    return seconds, results


def run_bgai(path: Path, jobs: int, trials: int, truncate: int, seed: int) -> tuple[float, list[dict]]:
    command = BGAI + ["rollout", "--positions", str(path), "--trials", str(trials), "--truncate", str(truncate),
                      "--seed", str(seed), "--jobs", str(jobs), "--json", "--quiet"]
    started = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT).stdout
    return time.perf_counter() - started, [json.loads(line) for line in out.splitlines()]


BASELINE = """
import sys, numpy as np
from bgai.eval.bot import load_bot
from bgai.eval.rollout import rollout_values
boards = np.load(sys.argv[1])
rollout_values(load_bot(), boards, trials=int(sys.argv[2]), truncate=int(sys.argv[3]), seed=int(sys.argv[4]))
"""


def run_baseline(tree: Path, boards_file: Path, trials: int, truncate: int, seed: int) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", BASELINE, str(boards_file), str(trials), str(truncate), str(seed)],
                   cwd=tree, check=True, env={**os.environ, "PYTHONPATH": str(tree)})
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=60)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--trials", type=int, default=72)
    parser.add_argument("--truncate", type=int, default=7)
    parser.add_argument("--baseline", default="b9a60d9",
                        help="commit of the code to compare with (default b9a60d9, before issue 37; '' for none)")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()

    from bgai.coach.oracles import gnubg_positions
    from bgai.core.files import provenance, write_json
    from bgai.core.phase import NAMES, classify
    from bgai.formats.position import Position

    boards, _, _, _ = gnubg_positions(args.positions, args.seed)
    ids = [Position(b).position_id() for b in boards]
    phases = classify(boards)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "positions.txt"
        path.write_text("\n".join(ids) + "\n")
        boards_file = Path(folder) / "boards.npy"
        np.save(boards_file, boards)
        runs: dict[str, list[float]] = {"bgai_jobs2": [], "bgai_jobs1": [], "gnubg": []}
        tree = Path(folder) / "baseline"
        if args.baseline:
            subprocess.run(["git", "worktree", "add", "--detach", str(tree), args.baseline], cwd=ROOT, check=True,
                           capture_output=True)
            run_baseline(tree, boards_file, args.trials, args.truncate, args.seed)  # its kernels compiled
            runs["baseline"] = []
        values: dict[str, list] = {}
        for _ in range(args.repeats):
            if args.baseline:
                seconds = run_baseline(tree, boards_file, args.trials, args.truncate, args.seed)
                runs["baseline"].append(round(seconds, 2))
                print(f"  {'baseline':<11} {seconds:6.1f} s", flush=True)
            for name, jobs in (("bgai_jobs2", 2), ("bgai_jobs1", 1)):
                seconds, records = run_bgai(path, jobs, args.trials, args.truncate, args.seed)
                runs[name].append(round(seconds, 2))
                values[name] = records
                print(f"  {name:<11} {seconds:6.1f} s", flush=True)
            seconds, gnubg = run_gnubg(gnubg_commands(ids, args.trials, args.truncate))
            if len(gnubg) != len(ids):
                raise SystemExit(f"gnubg gave {len(gnubg)} rollouts for {len(ids)} positions")
            runs["gnubg"].append(round(seconds, 2))
            values["gnubg"] = gnubg
            print(f"  {'gnubg':<11} {seconds:6.1f} s", flush=True)
        if args.baseline:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True)
    n = len(ids)
    rate = {name: n / min(seconds) for name, seconds in runs.items()}
    two = np.array([r["equity"]["mean"] for r in values["bgai_jobs2"]])
    one = np.array([r["equity"]["mean"] for r in values["bgai_jobs1"]])
    se = np.array([r["equity"]["se"] for r in values["bgai_jobs2"]])
    g_eq = np.array([g for g, _ in values["gnubg"]])
    g_se = np.array([s for _, s in values["gnubg"]])
    result = {
        **provenance(),
        "positions": n,
        "phases": {NAMES[c]: int((phases == c).sum()) for c in np.unique(phases)},
        "settings": {"trials": args.trials, "truncate": args.truncate, "variance_reduction": True, "plies": 0,
                     "cubeful": False, "seed": args.seed},
        "seconds": runs,
        "positions_per_s": {k: round(v, 2) for k, v in rate.items()},
        "speedup_jobs2_over_jobs1": round(rate["bgai_jobs2"] / rate["bgai_jobs1"], 2),
        "baseline": args.baseline or None,
        "speedup_jobs2_over_baseline": round(rate["bgai_jobs2"] / rate["baseline"], 2) if args.baseline else None,
        "ratio_to_gnubg": {"bgai_jobs2": round(rate["bgai_jobs2"] / rate["gnubg"], 2),
                           "bgai_jobs1": round(rate["bgai_jobs1"] / rate["gnubg"], 2)},
        "bgai_jobs2_v_jobs1_max_abs_equity": float(np.abs(two - one).max()),
        "bgai_mean_equity_se": float(se.mean()),
        "gnubg_mean_equity_se": float(g_se.mean()),
        "bgai_v_gnubg_mean_abs_equity": float(np.abs(two - g_eq).mean()),
        "gnubg_commands_head": gnubg_commands(ids[:1], args.trials, args.truncate),
    }
    print(f"{n} positions, {args.trials} trials truncated at {args.truncate}: bgai on 2 threads "
          f"{rate['bgai_jobs2']:.1f}/s, on one {rate['bgai_jobs1']:.1f}/s "
          f"(x{result['speedup_jobs2_over_jobs1']}), gnubg {rate['gnubg']:.2f}/s; bgai on 2 threads "
          f"x{result['ratio_to_gnubg']['bgai_jobs2']} gnubg's speed"
          + (f"; x{result['speedup_jobs2_over_baseline']} the code of {args.baseline} ({rate['baseline']:.1f}/s)"
             if args.baseline else ""))
    print(f"equity: bgai 2 threads v 1 max |diff| {result['bgai_jobs2_v_jobs1_max_abs_equity']:.1e}; "
          f"bgai v gnubg mean |diff| {result['bgai_v_gnubg_mean_abs_equity']:.3f} (standard errors "
          f"{result['bgai_mean_equity_se']:.3f} and {result['gnubg_mean_equity_se']:.3f})")
    if args.json:
        write_json(args.json, result)


if __name__ == "__main__":
    from bgai.core.progress import ticking

    with ticking("rollout_positions_bench"):  # the time spent, on standard error, while the parts run
        main()
