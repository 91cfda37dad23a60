"""bgai's match analysis beside GNU Backgammon's, on matches GNU Backgammon played against itself with noise.

    python benchmarks/analysis_vs_gnubg.py [--seeds 1 2 3 4 5 6] [--length 7] [--plies 0 1]
        [--json benchmarks/results/analysis_vs_gnubg.json]

For each seed, ``bgai.coach.gnubg_matches`` has gnubg (Debian's 1.07) play a noisy match against itself
(checker-play noise 0.03, cube noise 0.01, both players 0-ply) and analyse it with its default analysis settings
(2-ply, cubeful, pruning; marks at 0.03/0.06/0.12; ``--gnubg-plies`` another ply, for a quick run). bgai then
analyses the same .mat file at each of ``--plies``.
Reported, per player and analyser: unforced checker plays, close-or-actual cube decisions, checker, cube and
overall error rates (mEMG per decision), luck; per match the analysis time; and, over all matches, how the checker
plays marked very bad (>= 0.12 EMG lost) by gnubg and by bgai overlap.

GNU Backgammon's figures come from its own statistics (``gnubg.match(statistics=1)``): checker error = its
``error-skill`` total over ``unforced-moves``; cube error = the sum of its ``err-*-skill`` totals over
``close-cube``. Its per-play errors are the best play's ``score`` minus the play made's (``imove``), in EMG.

GNU Backgammon is the judge here only; nothing it computes becomes a training target. Needs ``/usr/games/gnubg``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bgai.coach.gnubg_matches import make_match
from bgai.core.files import provenance, write_json
from bgai.core.progress import ticking
from bgai.eval.bot import load_bot
from bgai.formats.matchfile import CheckerPlay, read_mat
from bgai.play.analysis import analyse_match

VERY_BAD = 0.12
CUBE_ERRORS = ("missed-double-below-cp", "missed-double-above-cp", "wrong-double-below-dp", "wrong-double-above-tg",
               "wrong-take", "wrong-drop")


def gnubg_figures(data: dict) -> dict:
    """Per-player figures from gnubg's analysis (players in seat order: X is seat 0)."""
    players = []
    for side in ("X", "O"):
        stats = data["stats"][side]
        moves, cube = stats["moves"], stats["cube"]
        unforced, close = moves["unforced-moves"], cube["close-cube"]
        checker_error = moves["error-skill"]
        cube_error = sum(cube[f"err-{name}-skill"] for name in CUBE_ERRORS)
        decisions = unforced + close
        players.append({
            "name": data["match-info"][side]["name"], "unforced": unforced, "close_cube": close,
            "checker_rate": 1000 * checker_error / unforced if unforced else 0.0,
            "cube_rate": 1000 * cube_error / close if close else 0.0,
            "error_rate": 1000 * (checker_error + cube_error) / decisions if decisions else 0.0,
            "checker_error": checker_error, "cube_error": cube_error, "luck": stats["dice"]["luck"],
            "very_bad_moves": moves["marked"]["very bad"],
        })
    return {"players": players}


def gnubg_move_errors(data: dict, record) -> dict:
    """{(game, n-th checker play of the game): EMG error} of gnubg's analysis, checked against the record's dice."""
    errors = {}
    for g, (game, ours) in enumerate(zip(data["games"], record.games), 1):
        plays = [a for a in ours.actions if isinstance(a, CheckerPlay)]
        moves = [a for a in game["game"] if a["action"] == "move"]
        if len(plays) != len(moves):
            raise RuntimeError(f"game {g}: gnubg has {len(moves)} checker plays, the .mat {len(plays)}")
        for k, (action, play) in enumerate(zip(moves, plays)):
            if sorted(action["dice"]) != sorted(play.dice):
                raise RuntimeError(f"game {g} play {k}: gnubg's dice {action['dice']}, the .mat's {play.dice}")
            analysis = action.get("analysis", {})
            if "imove" in analysis and len(analysis.get("moves", [])) > 1:
                scores = [m["score"] for m in analysis["moves"]]
                errors[(g, k)] = max(scores) - scores[analysis["imove"]]
    return errors


def bgai_figures(analysis) -> dict:
    players = []
    for p in analysis.players:
        players.append({"name": p.name, "unforced": p.unforced, "close_cube": p.close_cube,
                        "checker_rate": p.checker_rate, "cube_rate": p.cube_rate, "error_rate": p.error_rate,
                        "checker_error": p.checker_error, "cube_error": p.cube_error, "luck": p.luck,
                        "very_bad_moves": p.checker_marks["very bad"]})
    return {"players": players, "seconds": analysis.seconds}


def bgai_move_errors(analysis) -> dict:
    errors, count = {}, {}
    for d in analysis.decisions:
        if d.kind != "move":
            continue
        k = count.get(d.game, 0)
        count[d.game] = k + 1
        if d.counted:
            errors[(d.game, k)] = d.error
    return errors


def overlap(first: dict, second: dict, threshold: float = VERY_BAD) -> dict:
    a = {key for key, e in first.items() if e >= threshold}
    b = {key for key, e in second.items() if e >= threshold}
    return {"gnubg": len(a), "bgai": len(b), "both": len(a & b),
            "share_of_gnubg_found": len(a & b) / len(a) if a else None}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
    parser.add_argument("--length", type=int, default=7)
    parser.add_argument("--plies", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--noise", type=float, default=0.03)
    parser.add_argument("--cube-noise", type=float, default=0.01)
    parser.add_argument("--gnubg-plies", type=int, help="gnubg's analysis at this ply (default: its own, 2-ply)")
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/analysis_vs_gnubg.json"))
    args = parser.parse_args(argv)
    bots = {plies: load_bot(plies=plies) for plies in args.plies}
    matches = []
    pooled = {plies: ({}, {}) for plies in args.plies}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            paths = make_match(Path(tmp), args.length, seed, noise=args.noise, cube_noise=args.cube_noise,
                               analyse=True, analysis_plies=args.gnubg_plies)
            record = read_mat(paths["mat"])
            gnubg = json.loads(paths["analysis"].read_text())
            entry = {"seed": seed, "games": len(record.games), "score": list(record.score),
                     "gnubg": {**gnubg_figures(gnubg), "seconds": gnubg["seconds"]["analysis"]}}
            theirs = gnubg_move_errors(gnubg, record)
            for plies, bot in bots.items():
                started = time.perf_counter()
                analysis = analyse_match(record, bot, progress=False)
                figures = bgai_figures(analysis)
                figures["seconds"] = time.perf_counter() - started
                ours = bgai_move_errors(analysis)
                figures["very_bad_overlap"] = overlap(theirs, ours)
                entry[f"bgai_{plies}ply"] = figures
                for key, e in theirs.items():
                    pooled[plies][0][(seed,) + key] = e
                for key, e in ours.items():
                    pooled[plies][1][(seed,) + key] = e
            matches.append(entry)
            _print_match(entry, args.plies)
    summary = _summary(matches, args.plies, pooled)
    result = {
        **provenance(),
        "what": "bgai's match analysis beside GNU Backgammon 1.07's (2-ply, its defaults) on gnubg-played noisy "
                f"{args.length}-point matches",
        "settings": {"length": args.length, "seeds": args.seeds, "noise": args.noise, "cube_noise": args.cube_noise,
                     "plies": args.plies, "gnubg_plies": args.gnubg_plies, "very_bad": VERY_BAD},
        "matches": matches, "summary": summary,
    }
    write_json(args.json, result)
    print(json.dumps(summary, indent=1))


def _print_match(entry: dict, plies: list[int]) -> None:
    print(f"seed {entry['seed']}: {entry['games']} games, score {entry['score'][0]}-{entry['score'][1]}, "
          f"gnubg {entry['gnubg']['seconds']:.1f} s, " + ", ".join(
              f"bgai {p}-ply {entry[f'bgai_{p}ply']['seconds']:.1f} s" for p in plies))
    for seat in (0, 1):
        cells = [f"gnubg {entry['gnubg']['players'][seat]['error_rate']:5.1f}"]
        cells += [f"bgai-{p} {entry[f'bgai_{p}ply']['players'][seat]['error_rate']:5.1f}" for p in plies]
        print(f"  {entry['gnubg']['players'][seat]['name']:<6} error rate (mEMG/decision): " + "  ".join(cells))


def _summary(matches: list, plies: list[int], pooled: dict) -> dict:
    def mean(values):
        return sum(values) / len(values) if values else None

    out = {"matches": len(matches), "gnubg_seconds_per_match": mean([m["gnubg"]["seconds"] for m in matches])}
    for who in ["gnubg"] + [f"bgai_{p}ply" for p in plies]:
        rows = [pl for m in matches for pl in m[who]["players"]]
        unforced = sum(r["unforced"] for r in rows)
        close = sum(r["close_cube"] for r in rows)
        checker = sum(r["checker_error"] for r in rows)
        cube = sum(r["cube_error"] for r in rows)
        out[who] = {
            "unforced": unforced, "close_cube": close,
            "checker_rate": 1000 * checker / unforced, "cube_rate": 1000 * cube / close if close else None,
            "error_rate": 1000 * (checker + cube) / (unforced + close),
            "error_rate_per_player": [round(r["error_rate"], 1) for r in rows],
        }
        if who != "gnubg":
            out[who]["seconds_per_match"] = mean([m[who]["seconds"] for m in matches])
            out[who]["very_bad_overlap"] = overlap(*pooled[int(who.split("_")[1][0])])
    return out


if __name__ == "__main__":
    with ticking("analysis_vs_gnubg"):  # the time spent, on standard error, while the parts run
        main()
