"""Do the training labels' rollouts rank plays well, and does a network trained on them agree with them more on
decisions it never saw? Issue 37's diagnosis, on contact decisions of the checker-play reference set.

    python -m bgai.coach.rollout_ranking [--decisions 400] [--seed 7] [--top 4] [--trials 72] [--truncate 7]
        [--checkpoint P ...] [--reuse FILE] [--json benchmarks/results/rollout_ranking.json]

A seeded sample of ``--decisions`` contact decisions of ``bgai/coach/data/move_reference.json`` (gnubg 2-ply's
equity of every legal play) is drawn; the ``--top`` best plays of each by the shipped network at 0-ply (the
labelling network, ``load_bot()``) are rolled out as ``bgai label`` rolls out its positions (72 trials truncated
at 7 plies, variance reduction, 0-ply play, cubeless, every play of a decision on the same dice). Then, in
millipoints a move that gnubg 2-ply says each choice gives up:

* the shipped network at 0-ply and at 1-ply, the rollout's best of the top plays, and the best of them by gnubg
  2-ply (the ceiling of choosing among them);
* each ``--checkpoint`` at 0-ply, paired with the shipped network's 0-ply (``minus_shipped``), and judged by the
  rollouts too: on the decisions where both picks were rolled out, the rollout equity its pick gives up against
  the rollout's best, paired with the shipped network's (``by_rollout``). A network that learned the labels well
  gives up less by the rollouts' judgement; if it gives up more by gnubg's at the same time, the labels teach
  something gnubg 2-ply disagrees with.

``--reuse FILE``: take the rollouts from a results file this script wrote with the same sample and settings (the
rollouts take most of its time; the checkpoints' scores are quick). gnubg is the judge only.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from bgai.coach.move_accuracy import REFERENCE, decisions
from bgai.core.errors import BgaiError
from bgai.core.files import module_command, provenance, write_json
from bgai.core.movegen import afterstates
from bgai.core.progress import ticking
from bgai.eval.bot import load_bot
from bgai.eval.rollout import rollout_batch
from bgai.eval.weights import equity
from bgai.formats.position import decode_position_id, encode_position_id

ROOT = Path(__file__).resolve().parents[1]


def sample(entries: list[dict], count: int, seed: int) -> list[dict]:
    contact = [e for e in entries if e["class"] == "contact"]
    rng = np.random.default_rng(seed)
    return [contact[i] for i in np.sort(rng.choice(len(contact), min(count, len(contact)), replace=False))]


def play_values(bot, entries: list[dict]) -> list[np.ndarray]:
    """Each decision's plays (in the reference's order) valued by ``bot`` at 0-ply, from the mover's side."""
    boards, dice = decisions(entries)
    moves = afterstates(boards, dice)
    mover = -equity(bot.probabilities(moves.after))
    values = []
    for i, entry in enumerate(entries):
        mine = moves.after[moves.owner == i]
        ids = [encode_position_id(b) for b in mine]
        order = [ids.index(p) for p in entry["plays"]]
        values.append(mover[moves.owner == i][order])
    return values


def pick_error(entry: dict, index: int) -> float:
    return 1000 * (max(entry["equities"]) - entry["equities"][index])


def mean_se(values) -> list[float]:
    v = np.asarray(values, dtype=np.float64)
    return [round(float(v.mean()), 3), round(float(v.std(ddof=1) / np.sqrt(len(v))), 3)]


def rolled_out(bot, shipped: list[np.ndarray], entries, top, trials, truncate, seed, progress) -> list[dict]:
    """The ``top`` best plays of each entry by the shipped 0-ply network (``bot``; ``shipped``: its values of each
    entry's plays), and their rollout equities (mover)."""
    tops = [np.argsort(-v, kind="stable")[:top] for v in shipped]
    boards = np.stack([decode_position_id(e["plays"][i]) for e, t in zip(entries, tops) for i in t])
    result = rollout_batch(bot, boards, trials=trials, truncate=truncate, seed=seed, progress=progress)
    values = -equity(result.probabilities)
    out, at = [], 0
    for t in tops:
        out.append({"plays": [int(i) for i in t], "rollout": [round(float(v), 5) for v in values[at:at + len(t)]]})
        at += len(t)
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--top", type=int, default=4)
    parser.add_argument("--trials", type=int, default=72)
    parser.add_argument("--truncate", type=int, default=7)
    parser.add_argument("--checkpoint", action="append", default=[], help="a network to score (repeatable)")
    parser.add_argument("--reuse", help="a results file of this script whose rollouts to take")
    parser.add_argument("--json", default=str(ROOT / "benchmarks/results/rollout_ranking.json"))
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    entries = sample(json.loads(REFERENCE.read_text())["entries"], args.decisions, args.seed)
    settings = {"decisions": len(entries), "seed": args.seed, "top": args.top, "trials": args.trials,
                "truncate": args.truncate}
    bot0 = load_bot()
    shipped = play_values(bot0, entries)
    started = time.perf_counter()
    if args.reuse:
        before = json.loads(Path(args.reuse).read_text())
        if before["settings"] != settings:
            raise BgaiError(f"{args.reuse} was made with {before['settings']}, not {settings}")
        rollouts = before["rollouts"]
    else:
        rollouts = rolled_out(bot0, shipped, entries, args.top, args.trials, args.truncate, args.seed,
                              not args.quiet)
    rollout_seconds = time.perf_counter() - started
    shipped0 = [int(np.argmax(v)) for v in shipped]
    bot1 = load_bot(plies=1)
    boards, dice = decisions(entries)
    moves = afterstates(boards, dice)
    chosen1 = moves.after[bot1.choose(boards, moves.after, moves.owner)]
    shipped1 = [e["plays"].index(encode_position_id(b)) for e, b in zip(entries, chosen1)]
    by_rollout = [r["plays"][int(np.argmax(r["rollout"]))] for r in rollouts]
    ceiling = [max(r["plays"], key=e["equities"].__getitem__) for r, e in zip(rollouts, entries)]
    scores = {name: mean_se([pick_error(e, i) for e, i in zip(entries, picks)])
              for name, picks in (("shipped 0-ply", shipped0), ("shipped 1-ply", shipped1),
                                  (f"rollout of the top {args.top}", by_rollout),
                                  (f"best of the top {args.top} by gnubg 2-ply", ceiling))}

    def rollout_regret(r: dict, index: int) -> float | None:
        if index not in r["plays"]:
            return None
        return 1000 * (max(r["rollout"]) - r["rollout"][r["plays"].index(index)])

    networks: dict[str, dict] = {}
    for path in args.checkpoint:
        picks = [int(np.argmax(v)) for v in play_values(load_bot(path), entries)]
        gnubg = [pick_error(e, i) - pick_error(e, j) for e, i, j in zip(entries, picks, shipped0)]
        pairs = [(rollout_regret(r, i), rollout_regret(r, j)) for r, i, j in zip(rollouts, picks, shipped0)]
        both = [(a, b) for a, b in pairs if a is not None and b is not None]
        networks[path] = {
            "mp_per_move": mean_se([pick_error(e, i) for e, i in zip(entries, picks)]),
            "minus_shipped": mean_se(gnubg),
            "by_rollout": {"decisions": len(both), "mp_per_move": mean_se([a for a, _ in both]),
                           "shipped_mp_per_move": mean_se([b for _, b in both]),
                           "minus_shipped": mean_se([a - b for a, b in both])},
        }
    figures = {**provenance(module_command("bgai.coach.rollout_ranking", argv)),
               "what": "contact decisions of the checker-play reference set judged by gnubg 2-ply "
               "(mp a move: mean, standard error); the top plays by the shipped 0-ply network rolled out as the "
               "training labels are", "settings": settings, "scores": scores, "networks": networks,
               "rollout_seconds": round(rollout_seconds, 1), "rollouts": rollouts}
    write_json(args.json, figures)
    if not args.quiet:
        for name, (m, s) in scores.items():
            print(f"{name:38s} {m:6.2f} ± {s:.2f} mp a move")
        for path, n in networks.items():
            r = n["by_rollout"]
            print(f"{path}: {n['mp_per_move'][0]:.2f} mp a move, {n['minus_shipped'][0]:+.2f} ± "
                  f"{n['minus_shipped'][1]:.2f} v shipped; by the rollouts ({r['decisions']} decisions) "
                  f"{r['minus_shipped'][0]:+.2f} ± {r['minus_shipped'][1]:.2f} v shipped")
    return figures


if __name__ == "__main__":
    with ticking("rollout_ranking"):  # the time spent, on standard error, while the parts run
        main()
