"""Do two networks' errors differ? A 0-ply player that averages their probabilities, against the first alone.

    python -m bgai.coach.ensemble_bench --second CHECKPOINT [CHECKPOINT ...] [--first CHECKPOINT]
        [--seeds 2024 2025] [--games 1000] [--decisions N] [--skip-reference] [--json benchmarks/results/ensemble.json]

Issue 37's diagnostic of a network learned from scratch on the rollout labels: if its errors are not those of
``split-scale`` (``--first``, the default), the average of the two networks' five probabilities (every other
thing the first's: bear-offs, pruning) plays better than ``split-scale`` alone, though each evaluation costs two.
With several ``--second`` networks the player averages all of them with the first (each evaluation costing one
more a network), and "second" below is the first of them. Printed, each paired with the first network alone:

* duplicate games at 0-ply, ``--games`` dice sequences a seed, luck-adjusted (the luck of every roll judged by the
  first network at 0-ply) beside the plain points;
* checker play at 0-ply on the reference set (``bgai.coach.move_accuracy``'s, judged by gnubg 2-ply);
* 0-ply cube decisions with the manual's cube efficiency, judged by gnubg 2-ply (``bgai.coach.cube_accuracy``'s
  set) and by gnubg's rollouts of the entries rolled out so far.

``--skip-reference`` plays the games alone.

``--decisions N`` keeps the first N entries of each reference set (default: all of them).

The averaged player is an experiment, not a bgai player: nothing here ships it.
"""

from __future__ import annotations

import argparse
import json
import math
from functools import partial
from pathlib import Path

import numpy as np

from bgai.coach import move_accuracy
from bgai.coach.cube_accuracy import REFERENCE, ROLLOUTS, bgai_decisions, judged_by_rollouts, paired_difference
from bgai.coach.cube_reference import decision_losses
from bgai.core.files import module_command, provenance, write_json
from bgai.core.game import play_duplicate
from bgai.eval.bot import Bot, Ensemble, load_bot
from bgai.play.analysis import roll_luck

SPLIT_SCALE = "checkpoints/shipped/experiments/split-scale.pt"


def averaged(first: Bot, *others: Bot) -> Ensemble:
    """The 0-ply bot averaging ``first``'s network with each of ``others``' (``first``'s pruning net and
    bear-offs; ``Ensemble`` refuses none)."""
    return Ensemble(first.model, [other.model for other in others], name="averaged", pruner=first.pruner,
                    use_bearoff=first.use_bearoff)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--second", required=True, nargs="+", help="the network(s) averaged with the first")
    parser.add_argument("--first", default=SPLIT_SCALE, help=f"default: {SPLIT_SCALE}")
    parser.add_argument("--seeds", type=int, nargs="+", default=[2024, 2025])
    parser.add_argument("--games", type=int, default=1000, help="dice sequences a seed, each played twice")
    parser.add_argument("--decisions", type=int, help="the first N entries of each reference set (default: all)")
    parser.add_argument("--skip-reference", action="store_true", help="the games alone: no checker play or cube")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.games < 2:
        parser.error("--games must be at least 2")
    if args.decisions is not None and args.decisions < 2:
        parser.error("--decisions must be at least 2")
    keep = slice(args.decisions)

    first = load_bot(args.first, cube_efficiency=False)
    seconds = [load_bot(path, cube_efficiency=False) for path in args.second]
    second = seconds[0]
    pair = averaged(first, *seconds)
    named = args.second[0] if len(args.second) == 1 else args.second
    out: dict = {"first": args.first, "second": named, "games": []}
    luck = partial(roll_luck, first)
    for seed in args.seeds:
        s = play_duplicate(pair, first, args.games, seed=seed, luck=luck, progress=False).summary()
        row = {"seed": seed, **{k: s[k] for k in ("games", "ppg", "ppg_se", "ppg_luck_adjusted",
                                                   "ppg_luck_adjusted_se")}}
        out["games"].append(row)
        print(f"averaged v first, seed {seed}: {row['ppg_luck_adjusted']:+.3f} ± {row['ppg_luck_adjusted_se']:.3f} "
              f"luck-adjusted, plain {row['ppg']:+.3f} ± {row['ppg_se']:.3f} ({row['games']} games)")
    if len(args.seeds) > 1:
        games = out["games"]
        out["games_pooled"] = {
            "ppg_luck_adjusted": float(np.mean([g["ppg_luck_adjusted"] for g in games])),
            "ppg_luck_adjusted_se": float(math.sqrt(sum(g["ppg_luck_adjusted_se"] ** 2 for g in games)) / len(games))}
        p = out["games_pooled"]
        print(f"  pooled: {p['ppg_luck_adjusted']:+.3f} ± {p['ppg_luck_adjusted_se']:.3f}")
    if args.skip_reference:
        _write(args, argv, out)
        return

    moves = json.loads(Path(move_accuracy.REFERENCE).read_text())["entries"][keep]
    base_moves = move_accuracy.bot_choices(first, moves)[0]
    out["checker_play"] = {}
    for name, bot in (("second", second), ("averaged", pair)):
        d = move_accuracy.paired_difference(moves, move_accuracy.bot_choices(bot, moves)[0], base_moves)
        out["checker_play"][name] = d
        print(f"checker play, {name} minus first: {d['mp_per_move']:+.2f} ± {d['mp_se']:.2f} mp a move")

    entries = json.loads(REFERENCE.read_text())["entries"]
    judged = judged_by_rollouts(entries, json.loads(ROLLOUTS.read_text()))[0][keep]
    entries = entries[keep]
    out["cube"] = {}
    for judge, es in (("gnubg 2-ply", entries), ("gnubg's rollouts", judged)):
        theirs = bgai_decisions(first, es)[:2]
        base = decision_losses(es, *theirs)
        out["cube"][judge] = {"first_mp": 1000 * float(base.mean()), "decisions": len(base)}
        for name, bot in (("second", second), ("averaged", pair)):
            d = paired_difference(es, bgai_decisions(bot, es)[:2], theirs)
            out["cube"][judge][name] = {"minus_first_mp": d["mp_per_decision"], "se": d["mp_se"]}
            print(f"cube at 0-ply (the manual's x), {judge}, {name} minus first: {d['mp_per_decision']:+.2f} ± "
                  f"{d['mp_se']:.2f} mp a decision ({len(base)} decisions; the first {1000 * base.mean():.2f})")
    _write(args, argv, out)


def _write(args, argv, out: dict) -> None:
    if args.json:
        out = {**out, "decisions": args.decisions, **provenance(module_command("bgai.coach.ensemble_bench", argv))}
        write_json(args.json, out)


if __name__ == "__main__":
    main()
