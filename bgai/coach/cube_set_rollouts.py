"""Where the fast network's cube errors come from: its values against its own rollouts on the positions of the cube
reference set, both judged by the set's stored GNU Backgammon 2-ply cubeless probabilities.

    python -m bgai.coach.cube_set_rollouts [--positions 300] [--trials 72] [--seed 3] [--json FILE]
    python -m bgai.coach.cube_set_rollouts --errors [--trials 288] [--json FILE]

The positions are a random draw (``--seed``) of the set's distinct contact positions (``bgai.coach.cube_reference``:
positions of gnubg-nn's self-play near the doubling window, the player on roll before its roll). For each, the
cubeless equity of the player on roll by the fast network (``load_bot()``'s) at 0 and 1-ply, by its rollouts
truncated after 7 plies and by its rollouts played to the end (``bgai.eval.rollout.rollout_values``: 0-ply, variance
reduction, ``--trials`` trials). Printed for each value: its mean difference from gnubg 2-ply (the lean: positive
when it rates the player on roll higher, ± its standard error over positions), its mean absolute difference, and
the same two against the played-out rollouts.

With ``--errors`` the positions are instead those of every take decision the fast network's 0-ply cube gets wrong
(a wrong take or a wrong pass against the set's reference decision, every cube state of a position counting once):
are those the network's errors by its own rollouts' measure too, or where two engines disagree?

If the rollouts lean as the network does, a network that learned them would keep the lean: rollout targets could
only take away the per-position error. gnubg is the judge here only; nothing here trains anything.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from bgai.coach.cube_accuracy import REFERENCE, boards_and_cubes
from bgai.coach.cube_reference import reference_decisions
from bgai.core.files import module_command, provenance, write_json
from bgai.core.progress import ticking
from bgai.eval.bot import load_bot
from bgai.eval.rollout import rollout_values
from bgai.eval.weights import equity


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--trials", type=int, default=72)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--errors", action="store_true",
                        help="the positions of the 0-ply cube's wrong takes and wrong passes, not a random draw "
                             "(--positions and --seed then unused)")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)

    entries = json.loads(REFERENCE.read_text())["entries"]
    bot = load_bot()
    wrong: set[int] = set()
    if args.errors:
        takes = bot.cube_equities(*boards_and_cubes(entries)).should_take
        wrong = {i for i, (doubles, take) in enumerate(map(reference_decisions, entries))
                 if doubles and bool(takes[i]) != take}
    seen: set[str] = set()
    pool = []
    for i, e in enumerate(entries):
        if (i in wrong if args.errors else e["class"] != "race") and e["position_id"] not in seen:
            seen.add(e["position_id"])
            pool.append(i)
    if args.errors:
        chosen = [entries[i] for i in pool]
    else:
        rng = np.random.default_rng(args.seed)
        chosen = [entries[i] for i in sorted(rng.choice(pool, min(args.positions, len(pool)), replace=False))]
    boards, _ = boards_and_cubes(chosen)
    gnubg = np.array([e["probabilities"] for e in chosen])
    values = {"0-ply": bot.probabilities(boards), "1-ply": bot.lookahead(boards, 1)}
    seconds = {}
    for name, truncate, seed in (("rollouts truncated at 7", 7, 2), ("rollouts played out", None, 1)):
        started = time.perf_counter()
        values[name] = rollout_values(bot, boards, trials=args.trials, truncate=truncate, seed=seed)
        seconds[name] = time.perf_counter() - started
    played = equity(values["rollouts played out"])
    figures = {}
    for name, probs in values.items():
        row = {}
        for judge, reference in (("gnubg 2-ply", equity(gnubg)), ("played out", played)):
            d = equity(probs) - reference
            row[judge] = {"lean": round(float(d.mean()), 4), "lean_se": round(float(d.std() / np.sqrt(len(d))), 4),
                          "mean_abs": round(float(np.abs(d).mean()), 4)}
        figures[name] = row
        print(f"{name:24s}  v gnubg 2-ply: lean {row['gnubg 2-ply']['lean']:+.4f} ± {row['gnubg 2-ply']['lean_se']:.4f}"
              f", mean abs {row['gnubg 2-ply']['mean_abs']:.4f}   v played out: lean {row['played out']['lean']:+.4f}"
              f", mean abs {row['played out']['mean_abs']:.4f}")
    if args.json:
        result = {**provenance(module_command("bgai.coach.cube_set_rollouts", argv)), "positions": len(chosen),
                  "trials": args.trials, "seconds": seconds,
                  **({"chosen": "the 0-ply cube's wrong takes and wrong passes"} if args.errors else {}),
                  "figures": figures}
        write_json(args.json, result, indent=2)


if __name__ == "__main__":
    with ticking("cube_set_rollouts"):  # the time spent, on standard error, while the parts run
        main()
