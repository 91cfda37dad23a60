"""How accurate each kind of training target is, and what it costs: the values bgai's own search gives positions (0-ply,
1-ply, 2-ply, rollouts truncated or played out), judged by GNU Backgammon 2-ply, on the same positions.

    python -m bgai.coach.target_bench [--positions 300] [--seed 3] [--trials 72] [--json FILE]

The positions are met in gnubg-nn's 0-ply self-play (``bgai.coach.oracles.gnubg_positions``: neither bgai's own games
nor its training data), the player on roll before its roll; those the bear-off database answers exactly are left out.
Each target is a cubeless equity for the player on roll: the fast network (``load_bot()``'s, 512-64) at 0, 1 and 2-ply
(its pruning net choosing the replies' plays, as in its 1-ply lookahead), the 512-256 network at 0, 1 and 2-ply, and
rollouts by the fast network at 0-ply (``bgai.eval.rollout.rollout_values``: variance reduction, ``--trials`` trials
truncated after 7 and after 11 plies, the network's value there, and played to the end; and four times the trials
truncated after 7: whether the labels' horizon or their trials limit them). Printed for each: the mean absolute
difference from gnubg's 2-ply equity over all positions, over the contact and race ones, and over the tenth of the
positions where the fast network's 1-ply and 0-ply values differ most (where issue 20's plan spends its rollouts), with
the seconds a position each took on this machine (the rollouts with bgai's thread pools on both cores, the rest on one
thread).

gnubg is the judge here only: no value it computes is a training target, and nothing here trains anything.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from bgai.coach.oracles import gnubg_positions
from bgai.core.files import module_command, provenance, write_json
from bgai.core.movegen import one_thread
from bgai.core.phase import BEAROFF, CONTACT, CRASHED, RACE, classify
from bgai.core.progress import ticking
from bgai.eval.bot import SHIPPED_NPZ, load_bot
from bgai.eval.rollout import rollout_values
from bgai.eval.weights import equity
from bgai.players.gnubg import require_gnubg, to_gnubg


def judge(boards: np.ndarray) -> np.ndarray:
    """gnubg 2-ply's cubeless equity of each board for the player on roll."""
    gnubg = require_gnubg()
    probs = np.array([gnubg.probabilities(to_gnubg(board), 2) for board in boards], dtype=np.float64)
    return equity(probs)


def targets(boards: np.ndarray, trials: int) -> dict[str, tuple[np.ndarray, float]]:
    """Each kind of target's equities of ``boards`` and its seconds a position."""
    fast, big = load_bot(), load_bot(SHIPPED_NPZ)
    kinds = {
        "fast 0-ply": lambda: fast.probabilities(boards),
        "fast 1-ply": lambda: fast.lookahead(boards, 1),
        "fast 2-ply": lambda: fast.lookahead(boards, 2),
        "512-256 0-ply": lambda: big.probabilities(boards),
        "512-256 1-ply": lambda: big.lookahead(boards, 1),
        "512-256 2-ply": lambda: big.lookahead(boards, 2),
        f"fast rollout, {trials} trials, truncated at 7": lambda: rollout_values(fast, boards, trials=trials,
                                                                                 truncate=7),
        f"fast rollout, {trials} trials, truncated at 11": lambda: rollout_values(fast, boards, trials=trials,
                                                                                  truncate=11),
        f"fast rollout, {trials} trials, played to the end": lambda: rollout_values(fast, boards, trials=trials,
                                                                                    truncate=None),
        f"fast rollout, {4 * trials} trials, truncated at 7": lambda: rollout_values(fast, boards, trials=4 * trials,
                                                                                   truncate=7),
    }
    fast.lookahead(boards[:4], 2), big.lookahead(boards[:4], 2)  # warm-up: kernels loaded, tables built
    out = {}
    for name, compute in kinds.items():
        start = time.perf_counter()
        if "rollout" in name:
            values = compute()
        else:
            with one_thread():
                values = compute()
        seconds = (time.perf_counter() - start) / len(boards)
        out[name] = (equity(np.asarray(values, dtype=np.float64)), seconds)
        print(f"  {name:<40} {1000 * seconds:8.2f} ms a position", flush=True)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--trials", type=int, default=72)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    boards, *_ = gnubg_positions(2 * args.positions, args.seed)
    phase = classify(boards)
    boards, phase = boards[phase > BEAROFF][:args.positions], phase[phase > BEAROFF][:args.positions]
    contact = np.isin(phase, (CONTACT, CRASHED))
    print(f"{len(boards)} positions ({contact.sum()} contact, {(phase == RACE).sum()} race), "
          f"judged by gnubg 2-ply", flush=True)
    reference = judge(boards)
    values = targets(boards, args.trials)
    moved = np.abs(values["fast 1-ply"][0] - values["fast 0-ply"][0])
    disputed = moved >= np.quantile(moved, 0.9)
    groups = {"all": np.ones(len(boards), bool), "contact": contact, "race": phase == RACE,
              "disputed tenth": disputed}
    rows = {}
    print(f"{'mean |equity - gnubg 2-ply|':<40} " + " ".join(f"{g:>14}" for g in groups) + "   ms a position")
    for name, (eq, seconds) in values.items():
        errors = {g: float(np.abs(eq[m] - reference[m]).mean()) for g, m in groups.items()}
        rows[name] = {"mean_abs_error": errors, "seconds_per_position": seconds}
        print(f"{name:<40} " + " ".join(f"{errors[g]:14.4f}" for g in groups) + f"   {1000 * seconds:10.2f}")
    figures = {**provenance(module_command("bgai.coach.target_bench", argv)), "positions": len(boards),
               "seed": args.seed, "trials": args.trials,
               "counts": {g: int(m.sum()) for g, m in groups.items()}, "targets": rows}
    if args.json:
        write_json(args.json, figures, indent=2)


if __name__ == "__main__":
    with ticking("target_bench"):  # the time spent, on standard error, while the parts run
        main()
