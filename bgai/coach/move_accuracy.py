"""bgai's checker play judged on GNU Backgammon's 2-ply reference set, beside gnubg's own 0-ply.

    python -m bgai.coach.move_accuracy [--plies 0 1 2] [--checkpoint P] [--versus Q] [--json FILE]

The reference set (``bgai/coach/data/move_reference.json``, made by ``bgai.coach.move_reference``) holds unforced
checker-play decisions from gnubg's own games, with gnubg's 2-ply cubeless equity of every legal play. bgai chooses
a play in each, all decisions in one batch (``Bot.choose``), and ``score_moves`` counts the equity those choices
give up against gnubg 2-ply's best play, in millipoints per move, and how often bgai plays that best play. gnubg
0-ply's score on the same set (its choices by its 0-ply equities, stored in the file) is printed beside it, with
the difference per decision (bgai minus gnubg 0-ply: mean and standard error of the paired differences).

gnubg is the judge here only; nothing it says reaches training.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from bgai.coach.move_reference import CLASSES, gnubg_0ply_choices, move_errors, score_moves
from bgai.core.files import module_command, provenance, write_json
from bgai.core.movegen import afterstates
from bgai.eval.bot import load_bot
from bgai.formats.position import decode_position_id, encode_position_id

REFERENCE = Path(__file__).resolve().parent / "data" / "move_reference.json"


def decisions(entries) -> tuple[np.ndarray, np.ndarray]:
    """The (boards, dice) of the reference entries: the player on roll before the move."""
    boards = np.stack([decode_position_id(e["position_id"]) for e in entries])
    return boards, np.array([e["dice"] for e in entries])


def bot_choices(bot, entries) -> tuple[list[int], float]:
    """(index into each entry's plays of the play ``bot`` chooses, seconds), all decisions in one batch."""
    boards, dice = decisions(entries)
    started = time.perf_counter()
    moves = afterstates(boards, dice)
    picks = bot.choose(boards, moves.after, moves.owner)
    seconds = time.perf_counter() - started
    chosen = []
    for entry, after in zip(entries, moves.after[picks]):
        play = encode_position_id(after)
        if play not in entry["plays"]:
            raise RuntimeError(f"{bot.name} played {play} in {entry['position_id']} {entry['dice']}, which the "
                               f"reference does not list")
        chosen.append(entry["plays"].index(play))
    return chosen, seconds


def paired_difference(entries, chosen, baseline) -> dict:
    """Mean and standard error, in millipoints a move, of (error of ``chosen``) - (error of ``baseline``)."""
    diffs = np.array(move_errors(entries, chosen)) - np.array(move_errors(entries, baseline))
    return {"mp_per_move": 1000 * float(diffs.mean()),
            "mp_se": 1000 * float(diffs.std(ddof=1) / math.sqrt(len(diffs)))}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--checkpoint", help="default: the shipped network")
    parser.add_argument("--reference", default=str(REFERENCE))
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--versus", metavar="CHECKPOINT",
                        help="also each ply's paired difference from this network's choices at the same ply (e.g. "
                             "the network a run started from)")
    args = parser.parse_args(argv)

    reference = json.loads(Path(args.reference).read_text())
    entries = reference["entries"]
    gnubg0 = gnubg_0ply_choices(entries)
    rows = {"gnubg 0-ply": score_moves(entries, gnubg0)}
    for plies in args.plies:
        bot = load_bot(args.checkpoint, plies=plies)
        chosen, seconds = bot_choices(bot, entries)
        rows[f"bgai {plies}-ply"] = {**score_moves(entries, chosen),
                                     "minus_gnubg_0ply": paired_difference(entries, chosen, gnubg0),
                                     "ms_per_position": 1000 * seconds / len(entries)}
        if args.versus:
            theirs, _ = bot_choices(load_bot(args.versus, plies=plies), entries)
            rows[f"bgai {plies}-ply"]["minus_versus"] = {"versus": args.versus,
                                                        **paired_difference(entries, chosen, theirs)}

    counts = reference["metadata"]["counts"]
    print(f"{len(entries)} unforced checker-play decisions judged by gnubg 2-ply ("
          + ", ".join(f"{counts[c]} {c}" for c in CLASSES) + f"): {args.reference}")
    print(f"{'':<12} {'mp/move':>13} {'best play':>10} " + " ".join(f"{c + ' mp':>11}" for c in CLASSES)
          + f" {'vs gnubg 0-ply':>15}")
    for name, s in rows.items():
        versus = s.get("minus_gnubg_0ply")
        print(f"{name:<12} {s['mp_per_move']:>6.2f} ± {s['mp_se']:<4.2f} {100 * s['best_play']:>9.1f}% "
              + " ".join(f"{s['by_class'][c]['mp_per_move']:>11.2f}" for c in CLASSES)
              + (f" {versus['mp_per_move']:>+8.2f} ± {versus['mp_se']:.2f}" if versus else ""))
        if "minus_versus" in s:
            print(f"{'':<12} minus {args.versus} at the same ply: {s['minus_versus']['mp_per_move']:+.2f} ± "
                  f"{s['minus_versus']['mp_se']:.2f} mp a move (paired)")
    print(json.dumps(rows))
    if args.json:
        command = module_command("bgai.coach.move_accuracy", argv)
        figures = {**provenance(command.strip()), "reference": Path(args.reference).name, **rows}
        write_json(args.json, figures, indent=2)


if __name__ == "__main__":
    main()
