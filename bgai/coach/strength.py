"""Strength of trained networks at 0-ply: duplicate games against pubeval and GNU Backgammon 0-ply, and checker
play and cube decisions judged by GNU Backgammon 2-ply, side by side.

Each checkpoint plays the same dice sequences against each opponent, twice (seats swapped). The standard error is
the paired one: the two games of a sequence are averaged first, so the luck of the dice they share cancels. The
checker-play error is the 0-ply bot's on the reference set of ``bgai.coach.move_reference`` (millipoints of
gnubg 2-ply equity lost per unforced move), with gnubg 0-ply's own beside it; the cube error is the 0-ply bot's on
the cube reference set of ``bgai.coach.cube_reference`` (millipoints per decision).

    python -m bgai.coach.strength CHECKPOINT [CHECKPOINT ...] [--pubeval 5000] [--gnubg 2000] [--seed 2024]
                                  [--json benchmarks/results/strength.json]

A checkpoint may be ``shipped`` (the network ``load_bot()`` loads). GNU Backgammon is an opponent here only;
nothing it plays reaches training.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from bgai.coach.cube_accuracy import REFERENCE as CUBE_REFERENCE
from bgai.coach.cube_accuracy import bgai_decisions
from bgai.coach.cube_reference import score_decisions
from bgai.coach.move_accuracy import REFERENCE, bot_choices, paired_difference
from bgai.coach.move_reference import gnubg_0ply_choices, score_moves
from bgai.core.files import provenance, write_json
from bgai.core.game import play_duplicate
from bgai.eval.bot import load_bot
from bgai.players import make_player


def checker_play(bot) -> dict:
    """The bot's score on the checker-play reference set, and its paired difference from gnubg 0-ply's."""
    entries = json.loads(REFERENCE.read_text())["entries"]
    chosen, _ = bot_choices(bot, entries)
    score = score_moves(entries, chosen)
    return {"mp_per_move": score["mp_per_move"], "mp_se": score["mp_se"], "best_play": score["best_play"],
            "minus_gnubg_0ply": paired_difference(entries, chosen, gnubg_0ply_choices(entries))}


def cube_play(bot) -> dict:
    """The bot's score on the cube-decision reference set (``bgai.coach.cube_reference``)."""
    entries = json.loads(CUBE_REFERENCE.read_text())["entries"]
    doubles, takes, _ = bgai_decisions(bot, entries)
    return score_decisions(entries, doubles.tolist(), takes.tolist())


def measure(checkpoint: str, opponents: dict[str, int], seed: int, progress: bool = False,
            moves: bool = True) -> dict:
    bot = load_bot(None if checkpoint == "shipped" else checkpoint)
    out = {"checkpoint": checkpoint, "model": bot.model.describe()}
    if moves:
        out["checker_play"] = checker_play(bot)
        out["cube"] = cube_play(bot)
    for name, sequences in opponents.items():
        if sequences > 0:
            out[name] = duel(bot, make_player(name), sequences, seed, progress)
    return out


def duel(bot, opponent, sequences: int, seed: int, progress: bool = False, luck: bool = False) -> dict:
    """Duplicate games of ``bot`` against ``opponent`` on ``sequences`` dice sequences: the bot's points per game
    with their paired standard error, its win and gammon rates; with ``luck`` also the luck-adjusted points per
    game (each roll's luck judged by ``bot`` at 0-ply, ``bgai.play.analysis.roll_luck``) and their standard error."""
    started = time.perf_counter()
    judge = None
    if luck:
        from functools import partial

        from bgai.play.analysis import roll_luck

        judge = partial(roll_luck, bot)
    s = play_duplicate(bot, opponent, sequences, seed=seed, batch=2048, progress=progress, luck=judge).summary()
    out = {"games": s["games"], "ppg": s["ppg"], "ppg_se": s["ppg_se"], "win_rate": s["win_rate"],
           "gammon_rate": s["gammon_rate"], "seconds": time.perf_counter() - started}
    if luck:
        out["ppg_luck_adjusted"], out["ppg_luck_adjusted_se"] = s["ppg_luck_adjusted"], s["ppg_luck_adjusted_se"]
    return out


def describe(row: dict) -> str:
    """One line of a ``measure`` result."""
    parts = [f"v {name} {row[name]['ppg']:+.3f} ± {row[name]['ppg_se']:.3f}" for name in ("pubeval", "gnubg")
             if name in row]
    if "checker_play" in row:
        c = row["checker_play"]
        parts.append(f"checker play {c['mp_per_move']:.2f} ± {c['mp_se']:.2f} mp/move "
                     f"({c['minus_gnubg_0ply']['mp_per_move']:+.2f} ± {c['minus_gnubg_0ply']['mp_se']:.2f} "
                     f"v gnubg 0-ply)")
    if "cube" in row:
        kinds = row["cube"].get("by_kind", {})
        split = " (" + ", ".join(f"{kind} {v['mp']:.2f}" for kind, v in kinds.items()) + ")" if kinds else ""
        parts.append(f"cube {row['cube']['mp_per_decision']:.1f} mp/decision{split}")
    return "  ".join(parts)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+", help="checkpoint files, or 'shipped'")
    parser.add_argument("--pubeval", type=int, default=5000, help="dice sequences against pubeval (x2 games)")
    parser.add_argument("--gnubg", type=int, default=2000, help="dice sequences against gnubg 0-ply (x2 games)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--no-moves", action="store_true", help="skip the checker-play reference set")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    rows = []
    for checkpoint in args.checkpoints:
        row = measure(checkpoint, {"pubeval": args.pubeval, "gnubg": args.gnubg}, args.seed, not args.quiet,
                      moves=not args.no_moves)
        rows.append(row)
        print(f"{checkpoint}: {describe(row)}  ({row['model']})", flush=True)
    if args.json:
        command = "python -m bgai.coach.strength " + " ".join(argv if argv is not None else sys.argv[1:])
        figures = {**provenance(command), "results": rows}
        write_json(args.json, figures, indent=2)


if __name__ == "__main__":
    main()
