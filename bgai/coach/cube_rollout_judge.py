"""Are the rollout cube's remaining errors bgai's, or the judge's? Its worst decisions on the cube reference set,
judged again by GNU Backgammon's own cubeful rollouts.

    python -m bgai.coach.cube_rollout_judge [--top 30] [--trials 1296] [--jobs 2] [--sample N] [--json FILE]

The cube reference set (``bgai.coach.cube_reference``) is judged by gnubg 2-ply. bgai's rollout cube decision
(``Bot.cube_decision(..., rollout=True)``, the defaults) is made for every entry, and the ``--top`` entries where it
loses the most by that judge are rolled out again by Debian's gnubg: no double and double/take separately, cubeful,
0-ply checker play and cube decisions, played to the end, variance reduction, quasi-random dice, ``--trials`` trials
a cube state, a fixed seed each. On those entries it prints who the rollout sides with, and every decision's loss
judged by gnubg's rollout instead of its 2-ply: bgai's rollout's, and the 2-ply judge's own.

gnubg is the judge and nothing here trains anything. It needs the Debian package (``make install`` installs it).
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from bgai.coach.cube_accuracy import REFERENCE, rollout_cube_decisions
from bgai.coach.cube_reference import decision_losses, gnubg_cube_rollout, gnubg_version, reference_decisions
from bgai.core.files import module_command, provenance, write_json
from bgai.eval.bot import CUBE_ROLLOUT, load_bot


def bgai_rollout_equities(entries, progress: bool = True) -> list[dict]:
    """bgai's rollout cube equities (no double, double/take; the current cube's units) for every entry."""
    return [{"no_double": d.no_double, "double_take": d.double_take, "double": d.should_double,
             "take": d.should_take} for d in rollout_cube_decisions(load_bot(), entries, progress=progress)]


def entry_losses(judge_entries, decisions) -> np.ndarray:
    """Each entry's loss by ``judge_entries``' equities: its (double, take) decision's double, plus its take
    where the judge doubles (``decision_losses``, summed by entry)."""
    flat = decision_losses(judge_entries, [d for d, _ in decisions], [t for _, t in decisions])
    out = flat[:len(judge_entries)].copy()
    out[[k for k, e in enumerate(judge_entries) if reference_decisions(e)[0]]] += flat[len(judge_entries):]
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=30, help="entries rolled out by gnubg (default 30)")
    parser.add_argument("--trials", type=int, default=1296, help="gnubg's trials a cube state (default 1296)")
    parser.add_argument("--jobs", type=int, default=2, help="gnubg processes at once (default 2)")
    parser.add_argument("--sample", type=int, help="only a seeded sample of this many entries (a quick try)")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)

    entries = json.loads(REFERENCE.read_text())["entries"]
    if args.sample:
        entries = [entries[i] for i in np.sort(np.random.default_rng(38).choice(len(entries), args.sample, False))]
    started = time.perf_counter()
    mine = bgai_rollout_equities(entries)
    seconds_bgai = time.perf_counter() - started
    my_decisions = [(m["double"], m["take"]) for m in mine]
    losses = decision_losses(entries, [d for d, _ in my_decisions], [t for _, t in my_decisions])
    n_decisions = len(losses)
    per_entry = entry_losses(entries, my_decisions)
    top = [int(i) for i in np.argsort(-per_entry)[:args.top] if per_entry[i] > 0]

    started = time.perf_counter()
    with ThreadPoolExecutor(args.jobs) as pool:
        arbiter = list(pool.map(lambda i: gnubg_cube_rollout(entries[i]["position_id"], entries[i]["cube"],
                                                             entries[i]["owner"], args.trials, 1000 + i), top))
    seconds_gnubg = time.perf_counter() - started

    judged = [{**entries[i], **a} for i, a in zip(top, arbiter)]  # the entries, judged by gnubg's rollouts
    picked = [entries[i] for i in top]
    mine_top = [my_decisions[i] for i in top]
    judge_2ply = [reference_decisions(e) for e in picked]

    mine_by_rollout, judge_by_rollout = entry_losses(judged, mine_top), entry_losses(judged, judge_2ply)
    rows, sides = [], {"bgai's rollout": 0, "gnubg 2-ply": 0, "neither": 0}
    for k, i in enumerate(top):
        # whose decisions gnubg's rollout finds cheaper: bgai's rollout's or its own 2-ply's
        gap = judge_by_rollout[k] - mine_by_rollout[k]
        side = "bgai's rollout" if gap > 0 else "gnubg 2-ply" if gap < 0 else "neither"
        sides[side] += 1
        rows.append({"position_id": entries[i]["position_id"], "cube": entries[i]["cube"],
                     "owner": entries[i]["owner"], "class": entries[i].get("class"),
                     "gnubg_2ply": {k2: round(entries[i][k2], 4) for k2 in ("no_double", "double_take")},
                     "bgai_rollout": {k2: round(float(mine[i][k2]), 4) for k2 in ("no_double", "double_take")},
                     "gnubg_rollout": {k2: round(a, 4) for k2, a in arbiter[k].items() if k2 != "double_pass"},
                     "bgai_loss_by_2ply": round(float(per_entry[i]), 4),
                     "bgai_loss_by_rollout": round(float(mine_by_rollout[k]), 4),
                     "gnubg_2ply_loss_by_rollout": round(float(judge_by_rollout[k]), 4), "sides_with": side})

    result = {
        "what": __doc__.split("\n\n")[0].replace("\n", " "),
        **provenance(module_command("bgai.coach.cube_rollout_judge", argv)),
        "gnubg": gnubg_version(),
        "bgai_rollout_settings": {k: v for k, v in CUBE_ROLLOUT.items() if k != "jobs"},
        "gnubg_rollout_settings": f"{args.trials} trials a cube state, cubeful, 0-ply checker play and cube, played "
                                  "out, variance reduction, quasi-random dice, seed 1000 + the entry's index",
        "entries": len(entries), "decisions": n_decisions,
        "bgai_rollout_mp_per_decision": round(1000 * float(losses.mean()), 3),
        "top": len(top),
        "sides_with": sides,
        "on_the_top_entries_mp_summed_over_the_set": {
            "what": "millipoints lost on the top entries' decisions, summed and divided by all the set's decisions "
                    "(their share of a row's mp a decision)",
            "bgai rollout, judged by gnubg 2-ply": round(1000 * float(per_entry[top].sum()) / n_decisions, 3),
            "bgai rollout, judged by gnubg's rollouts": round(1000 * float(mine_by_rollout.sum()) / n_decisions, 3),
            "gnubg 2-ply, judged by gnubg's rollouts": round(1000 * float(judge_by_rollout.sum()) / n_decisions, 3),
        },
        "seconds": {"bgai_rollouts": round(seconds_bgai, 1), "gnubg_rollouts": round(seconds_gnubg, 1)},
        "positions": rows,
    }
    shares = result["on_the_top_entries_mp_summed_over_the_set"]
    print(f"bgai's rollout cube: {result['bgai_rollout_mp_per_decision']:.2f} mp a decision by gnubg 2-ply "
          f"({n_decisions} decisions, {seconds_bgai:.0f} s)")
    print(f"its {len(top)} worst entries rolled out by gnubg ({args.trials} trials a cube state, "
          f"{seconds_gnubg:.0f} s): gnubg's rollouts side with {sides}")
    for name, value in shares.items():
        if name != "what":
            print(f"  {name:<45} {value:6.2f} mp (of the set's mp a decision)")
    if args.json:
        write_json(args.json, result)


if __name__ == "__main__":
    main()
