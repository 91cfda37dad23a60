"""What the fitted cube model's shift of the win chance buys: each shipped model against a model of x alone fitted
to the same labels, on the cube reference sets, paired.

    python -m bgai.coach.cube_shift [--limit N] [--json benchmarks/results/cube_shift.json]

A shipped network's cube model (``bgai.core.cube.EfficiencyModel``) is x and a shift of the win chance Janowski's
formula reads, fitted together to the network's own cubeful rollouts (``bgai.train.cube_efficiency``). Its own x
without the shift (``cube_accuracy --manual-x``'s "x alone" rows) is not the model a fit of x alone would give,
so this script fits that one here (``fit(..., shift=False)``, the same labels files, named in the model's
``info``), and both decide every entry: the fast network's 0-ply cube and its 2-ply one (the 1-ply and the 2-ply
bot's), the 512-256 network's 2-ply cube (the 2-ply bot's until 2026-12-06), on the money set and the 7-point
match set (judged by gnubg 2-ply) and on the entries gnubg's own cubeful rollouts have judged so far. Each row:
both models' millipoints a decision and the paired difference, shift minus x alone. gnubg only judges; the models
learn from bgai's rollouts alone.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from bgai.coach.cube_accuracy import MATCH_REFERENCE, boards_and_cubes
from bgai.coach.cube_reference import REFERENCE, ROLLOUTS, decision_losses, judged_by_rollouts
from bgai.core.cube import EfficiencyModel
from bgai.core.files import module_command, provenance, write_json
from bgai.eval.bot import FAST_NPZ, SHIPPED_NPZ, load_bot
from bgai.train import cube_efficiency as ce

#: (row name, the network, the bot's plies): each bot decides its cube at ``bgai.eval.bot.CUBE_PLIES``' depth
BOTS = (("fast network, 0-ply", FAST_NPZ, 0), ("fast network, the 1-ply bot (2-ply cube)", FAST_NPZ, 1),
        ("512-256 network, 2-ply", SHIPPED_NPZ, 2))


def x_alone(network: Path) -> EfficiencyModel:
    """The model of x alone fitted to the labels the network's shipped model was fitted to."""
    shipped = load_bot(network).cube_efficiency
    assert shipped is not None and shipped.shift is not None, f"{network}: no shipped model with a shift"
    paths = [ce.LABELS / source["file"] for source in shipped.info["labels"]]
    return ce.fit_model(load_bot(network, cube_efficiency=False), paths, shift=False)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, help="the first N entries of each set only (a quick look)")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)

    money = json.loads(REFERENCE.read_text())["entries"]
    judged, _ = judged_by_rollouts(money, json.loads(ROLLOUTS.read_text()))
    sets = {"money, judged by gnubg 2-ply": money,
            "7-point match, judged by gnubg 2-ply": json.loads(MATCH_REFERENCE.read_text())["entries"],
            "money, judged by gnubg's rollouts": judged}
    sets = {name: entries[:args.limit] for name, entries in sets.items()}
    alone = {network: x_alone(network) for network in {n for _, n, _ in BOTS}}
    rows = []
    for set_name, entries in sets.items():
        boards, state = boards_and_cubes(entries)
        for bot_name, network, plies in BOTS:
            shipped = load_bot(network, plies=plies)
            losses = [decision_losses(entries, e.should_double, e.should_take) for e in (
                bot.cube_equities(boards, state) for bot in (shipped, shipped.replace(cube_efficiency=alone[network])))]
            d = losses[0] - losses[1]
            rows.append({"set": set_name, "bot": bot_name, "entries": len(entries), "decisions": len(d),
                         "shift_mp": 1000 * float(losses[0].mean()), "x_alone_mp": 1000 * float(losses[1].mean()),
                         "difference_mp": 1000 * float(d.mean()),
                         "difference_se": 1000 * float(d.std(ddof=1) / math.sqrt(len(d)))})
            r = rows[-1]
            print(f"{set_name} ({r['decisions']} decisions), {bot_name}: with the shift {r['shift_mp']:.2f} mp a "
                  f"decision, x fitted alone {r['x_alone_mp']:.2f}; difference {r['difference_mp']:+.2f} ± "
                  f"{r['difference_se']:.2f}", flush=True)
    if args.json:
        labels = {network.name: [source["file"] for source in model.info["labels"]] for network, model in alone.items()}
        figures = {**provenance(module_command("bgai.coach.cube_shift", argv)), "x_alone_labels": labels, "rows": rows}
        write_json(args.json, figures, indent=2)


if __name__ == "__main__":
    main()
