"""A reference set of checker-play decisions from GNU Backgammon's own games, every play judged by gnubg 1.07 at 2-ply.

Writes ``bgai/coach/data/move_reference.json``; ``score_moves`` scores anyone's choice of plays on it.

    python -m bgai.coach.move_reference [--games 160] [--share 0.3] [--seed 0] [--out FILE]

How the set is made:

1. Decisions come from games GNU Backgammon plays against itself at 0-ply (``gnubg_nn``, the PyPI wrapper; fixed
   seed): the player on roll, with the roll it played there. A decision met twice (same position, same roll) counts
   once, and forced ones (fewer than two distinct legal plays by bgai's generator) are left out. Of the rest a
   random share is kept (one ``random.Random(seed)`` draw per decision, in order), so contact, race and bear-off
   positions come in the proportions of gnubg's games, from more games than the whole of a few.
2. Every legal play is listed as its afterstate (bgai's move generator: the distinct positions a roll can reach,
   seen from the opponent). Debian's gnubg evaluates each afterstate, cubeless, at 2-ply and at 0-ply, and the
   play's equity is the mover's cubeless money equity after it (see ``TWO_PLY``). The 2-ply equities are the
   reference; the 0-ply ones let gnubg 0-ply be scored on the same set (``gnubg_0ply_score`` in the metadata).

GNU Backgammon is the judge here only; nothing in this file becomes a training target.

This one file runs in two interpreters. The project's Python plays the games, lists the plays and writes the result. GNU
Backgammon's embedded Python (``bgai.coach.gnubg_job``, calling ``gnubg_evaluate``) does the evaluations. That Python
has neither numpy nor bgai, so the module imports only the standard library at its top. It needs the Debian package
(``apt-get install gnubg``) and is not run in CI; tests/test_move_reference.py checks the file it wrote and
``score_moves``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import random
import subprocess
import time
from pathlib import Path

GNUBG = "/usr/games/gnubg"
CLASSES = ("contact", "crashed", "race", "bearoff")  # bgai.core.phase names, the ones a decision can have
DIGITS = 5  # equities are stored rounded to 1e-5

TWO_PLY = (
    "A play's n-ply equity is gnubg's n-ply cubeless evaluation of its afterstate, from the side of the opponent "
    "(on roll there, before its roll), turned around to the mover: "
    "equity = -(2 P(win) - 1 + P(win gammon) - P(lose gammon) + P(win backgammon) - P(lose backgammon)) of the "
    "opponent, cumulative probabilities, money game, no Jacoby rule. This is how gnubg's own checker play scores a "
    "play at n-ply (ScoreMove: the afterstate, sides swapped, evaluated at n plies). At 0-ply the neural net (or "
    "gnubg's bear-off database) evaluates the afterstate; at 2-ply gnubg averages, over the opponent's 21 rolls, "
    "its reply's value, itself the average over the mover's 21 rolls of the mover's reply to that, evaluated at "
    "0-ply. With pruning on (prune = 1, as in gnubg's 'world class' and other n-ply settings) each reply is chosen "
    "by FindBestMoveInEval: gnubg's fast pruning net short-lists a few candidate plays and the full 0-ply net picks "
    "the best of them. Every legal play is judged at 2-ply (full width), where gnubg's 'world class' hint would "
    "2-ply only the plays within 0.16 of the best at 0-ply (at most 8) and keep the 0-ply equity of the others."
)

SCORING = (
    "Equities are the stored 2-ply equities of the plays, for the mover, rounded to 1e-5. For each decision, "
    "error = the largest equity among its plays minus the equity of the play chosen; a play whose rounded equity "
    "equals the largest is a best play (error 0), so a tie for best costs nothing either way. "
    "mp_per_move = 1000 x the mean error over the decisions (all of them unforced: at least two distinct legal "
    "plays), with mp_se its standard error (sample standard deviation / sqrt(decisions)); best_play = the share of "
    "decisions where the play chosen is a best play. The same figures are given by position class (bgai.core.phase."
    "classify of the position before the move: contact, crashed, race, bearoff). "
    "gnubg 0-ply's choice is the play with the largest stored 0-ply equity (the first of them on a tie)."
)


# --- scoring (pure Python, imported by the other coach modules) --------------------------------------------------


def move_errors(entries, chosen) -> list[float]:
    """The 2-ply equity each chosen play gives up against the best play of its decision (0 for a best play)."""
    if len(entries) != len(chosen):
        raise ValueError(f"need one chosen play per reference entry, got {len(chosen)} for {len(entries)}")
    errors = []
    for entry, index in zip(entries, chosen):
        equities = entry["equities"]
        if not 0 <= index < len(equities):
            raise ValueError(f"play {index} is not one of the {len(equities)} plays of {entry['position_id']}")
        errors.append(max(equities) - equities[index])
    return errors


def _summary(errors: list[float]) -> dict:
    n = len(errors)
    if not n:
        return {"decisions": 0, "mp_per_move": 0.0, "mp_se": 0.0, "best_play": 0.0}
    mean = sum(errors) / n
    spread = math.sqrt(sum((e - mean) ** 2 for e in errors) / (n - 1)) if n > 1 else 0.0
    return {"decisions": n, "mp_per_move": 1000 * mean, "mp_se": 1000 * spread / math.sqrt(n),
            "best_play": sum(e <= 0 for e in errors) / n}


def score_moves(entries, chosen_indices) -> dict:
    """Equity lost against the 2-ply reference and the share of best plays, overall and by class (``SCORING``).

    ``chosen_indices[i]`` is the index, into ``entries[i]["plays"]``, of the play chosen on decision ``i``.
    """
    errors = move_errors(entries, chosen_indices)
    by_class = {name: _summary([e for e, entry in zip(errors, entries) if entry["class"] == name])
                for name in CLASSES}
    return {**_summary(errors), "by_class": by_class}


def gnubg_0ply_choices(entries) -> list[int]:
    """gnubg 0-ply's play of each decision: the largest stored 0-ply equity, the first on a tie."""
    return [max(range(len(e["equities_0ply"])), key=e["equities_0ply"].__getitem__) for e in entries]


# --- the GNU Backgammon side (its embedded Python: standard library and the gnubg module only) -------------------


def gnubg_evaluate(job: dict) -> dict:
    """Cubeless money evaluations of afterstates (Position IDs, the player on roll being the opponent of the mover)
    at each of ``job["plies"]``: gnubg's five probabilities and its equity, for that player.

    The board from ``gnubg.positionfromid`` is ``(opponent, player on roll)``; cubeinfo(1, -1, 0) is a centered
    cube with player 0 on roll, the player on roll in the board.
    """
    import gnubg

    gnubg.command("set threads 1")
    gnubg.command("set jacoby off")
    info = gnubg.cubeinfo(1, -1, 0)
    if info["jacoby"] or info["matchto"]:
        raise RuntimeError(f"expected a money game without the Jacoby rule, got {info}")
    # evalcontext(cubeful, plies, deterministic, prune, noise); prune as in gnubg's "world class" setting
    contexts = [(plies, gnubg.evalcontext(0, plies, 1, 1, 0.0)) for plies in job["plies"]]
    results = []
    started, cpu = time.time(), time.process_time()
    for position_id in job["items"]:
        board = gnubg.positionfromid(position_id)
        result = {"board": [list(row) for row in board]}
        for plies, context in contexts:
            result[str(plies)] = list(gnubg.evaluate(board, info, context)[:6])
        results.append(result)
    return {"results": results, "seconds": time.time() - started, "cpu_seconds": time.process_time() - cpu}


# --- the project side ------------------------------------------------------------------------------------------


def run_gnubg(items: list[str], plies: list[int], gnubg: str = GNUBG) -> dict:
    """Evaluate afterstate Position IDs in one Debian gnubg process (``gnubg_evaluate``, there)."""
    from bgai.coach import gnubg_job  # (here, not at the top: gnubg's Python, which reads this file, has no bgai)

    return gnubg_job.run(Path(__file__), "gnubg_evaluate", {"items": items, "plies": plies}, gnubg)


def evaluate_in_parts(items: list[str], plies: list[int], part: int, gnubg: str = GNUBG) -> dict:
    """``run_gnubg`` on ``part`` items at a time, one gnubg process after another, with progress on stdout."""
    results, seconds, cpu = [], 0.0, 0.0
    for lo in range(0, len(items), part):
        out = run_gnubg(items[lo:lo + part], plies, gnubg)
        results += out["results"]
        seconds += out["seconds"]
        cpu += out["cpu_seconds"]
        print(f"  {len(results)}/{len(items)} afterstates at plies {plies}: {seconds:.0f} s, "
              f"{cpu:.0f} s of CPU in gnubg", flush=True)
    return {"results": results, "seconds": seconds, "cpu_seconds": cpu}


def gnubg_version(gnubg: str = GNUBG) -> str:
    return subprocess.run([gnubg, "--version"], capture_output=True, text=True).stdout.splitlines()[0].strip()


def gnubg_nn_version() -> str:
    from importlib.metadata import version

    return version("gnubg-nn")


def self_play_decisions(games: int, seed: int) -> tuple[list, list]:
    """(boards, dice) of the decisions met in gnubg_nn 0-ply self-play: the player on roll (on-roll view) and the
    roll it played, the larger die first; a (position, roll) met again is left out."""
    import numpy as np

    from bgai.core.game import game_over
    from bgai.formats.position import START_BOARD
    from bgai.players.gnubg import from_gnubg, require_gnubg, to_gnubg

    gnubg_nn = require_gnubg()
    rng = np.random.default_rng(seed)
    seen = set()
    boards, dice = [], []
    for _ in range(games):
        board = START_BOARD.copy()
        roll = rng.choice(6, size=2, replace=False) + 1  # the opening roll is never a double
        while True:
            key = (board.tobytes(), max(roll), min(roll))
            if key not in seen:
                seen.add(key)
                boards.append(board)
                dice.append([int(max(roll)), int(min(roll))])
            _, after = gnubg_nn.best_move(to_gnubg(board), int(roll[0]), int(roll[1]), n=0, b=1)
            board = from_gnubg(gnubg_nn.board_from_position_key(after))
            if game_over(board[None])[0]:
                break
            roll = rng.integers(1, 7, size=2)
    return boards, dice


def to_equity(probabilities) -> float:
    """Cubeless money equity of cumulative (win, win gammon, win backgammon, lose gammon, lose backgammon)."""
    win, win_gammon, win_backgammon, lose_gammon, lose_backgammon = probabilities
    return 2 * win - 1 + win_gammon - lose_gammon + win_backgammon - lose_backgammon


def build(games: int, share: float, seed: int, part: int = 2000, gnubg: str = GNUBG) -> dict:
    import numpy as np

    from bgai.core.movegen import afterstates
    from bgai.core.phase import NAMES, classify
    from bgai.formats.position import encode_position_id
    from bgai.players.gnubg import to_gnubg

    began = time.perf_counter()
    boards, dice = self_play_decisions(games, seed)
    moves = afterstates(np.array(boards, dtype=np.int8), np.array(dice))
    starts = np.searchsorted(moves.owner, np.arange(len(boards) + 1))
    unforced = np.flatnonzero(np.diff(starts) >= 2)
    chooser = random.Random(seed)
    kept = [int(i) for i in unforced if chooser.random() < share]
    classes = classify(np.array(boards, dtype=np.int8))
    plays = {i: [encode_position_id(after) for after in moves.after[starts[i]:starts[i + 1]]] for i in kept}
    items = sorted({play for ids in plays.values() for play in ids})
    played = time.perf_counter()
    print(f"{len(boards)} distinct decisions in {games} games, {len(unforced)} unforced, {len(kept)} kept with "
          f"{sum(map(len, plays.values()))} plays ({len(items)} distinct afterstates) ({played - began:.0f} s)",
          flush=True)

    out = evaluate_in_parts(items, [0, 2], part, gnubg)
    evaluated = time.perf_counter()
    boards_after = {}
    for i in kept:
        for after in moves.after[starts[i]:starts[i + 1]]:
            boards_after[encode_position_id(after)] = after
    evaluation = {}
    for position_id, result in zip(items, out["results"]):
        if result["board"] != to_gnubg(boards_after[position_id]):  # the two readings of a Position ID agree
            raise RuntimeError(f"gnubg reads {position_id} as {result['board']}, bgai otherwise")
        for plies in ("0", "2"):
            if abs(to_equity(result[plies][:5]) - result[plies][5]) > 1e-5:
                raise RuntimeError(f"gnubg's equity of {position_id} is not the cubeless money equity: {result}")
        evaluation[position_id] = (-to_equity(result["2"][:5]), -to_equity(result["0"][:5]))

    entries = []
    for i in kept:
        ranked = sorted(plays[i], key=lambda play: -evaluation[play][0])  # best first at 2-ply
        entries.append({
            "position_id": encode_position_id(boards[i]),
            "dice": dice[i],
            "class": NAMES[classes[i]],
            "plays": ranked,
            "equities": [round(evaluation[play][0], DIGITS) for play in ranked],
            "equities_0ply": [round(evaluation[play][1], DIGITS) for play in ranked],
        })
    tied = [k for k, e in enumerate(entries) if e["equities"].count(max(e["equities"])) > 1]
    zero_ply = score_moves(entries, gnubg_0ply_choices(entries))
    counts = {"decisions": len(entries), **{name: sum(e["class"] == name for e in entries) for name in CLASSES},
              "plays": sum(len(e["plays"]) for e in entries), "afterstates_evaluated": len(items)}
    return {
        "metadata": {
            "description": "Checker-play decisions from gnubg's own games, every legal play judged by GNU "
                           "Backgammon at 2-ply (cubeless money equity). A test oracle and benchmark only, never a "
                           "training target.",
            "gnubg_version": gnubg_version(gnubg),
            "positions_from": f"gnubg_nn {gnubg_nn_version()} 0-ply self-play (PyPI gnubg-nn), {games} games, "
                              f"numpy.random.default_rng({seed}) dice; the player on roll with the roll played "
                              f"there; each distinct (position, roll) once; unforced ones only (at least two "
                              f"distinct legal plays); each kept with probability {share} "
                              f"(random.Random({seed}).random() < {share}, one draw per unforced decision in order)",
            "games": games,
            "share": share,
            "seed": seed,
            "date": datetime.date.today().isoformat(),
            "evaluation": "gnubg.evaluate(board, cubeinfo(1, -1, 0), evalcontext) with 'set jacoby off': 2-ply "
                          "cubeless, deterministic, pruning on, no noise: evalcontext(0, 2, 1, 1, 0.0); 0-ply: "
                          "evalcontext(0, 0, 1, 1, 0.0); board = gnubg.positionfromid(afterstate)",
            "two_ply": TWO_PLY,
            "entry": "position_id: the position before the move (GNU Backgammon Position ID, player on roll); dice: "
                     "the roll, larger die first; class: bgai.core.phase of the position; plays: every legal play, as "
                     "the Position ID of its afterstate (the opponent on roll), exactly the distinct afterstates "
                     "of bgai.core.movegen, sorted best first at 2-ply; equities: each play's 2-ply equity for the "
                     "mover; equities_0ply: the same at 0-ply",
            "counts": counts,
            "tied_best": {"entries": tied, "note": "entries whose largest 2-ply equity is shared by two or more "
                                                   "plays after rounding to 1e-5 (each of them a best play)"},
            "scoring": SCORING,
            "gnubg_0ply_score": zero_ply,
            "seconds": {"self_play": round(played - began, 1), "gnubg_wall": round(out["seconds"], 1),
                        "gnubg_cpu": round(out["cpu_seconds"], 1), "total": round(evaluated - began, 1)},
            "command": f"python -m bgai.coach.move_reference --games {games} --share {share} --seed {seed}",
        },
        "entries": entries,
    }


def write(result: dict, out: Path) -> None:
    """The metadata indented, then one entry a line."""
    out.parent.mkdir(parents=True, exist_ok=True)
    metadata = json.dumps(result["metadata"], indent=1).replace("\n", "\n ")
    entries = ",\n  ".join(json.dumps(entry, separators=(",", ":")) for entry in result["entries"])
    out.write_text(f'{{\n "metadata": {metadata},\n "entries": [\n  {entries}\n ]\n}}\n')


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=160, help="gnubg_nn self-play games to take decisions from")
    parser.add_argument("--share", type=float, default=0.3, help="share of the unforced decisions kept")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--part", type=int, default=2000, help="afterstates per gnubg process")
    parser.add_argument("--gnubg", default=GNUBG, help="Debian's gnubg executable")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "data" / "move_reference.json")
    args = parser.parse_args(argv)
    result = build(args.games, args.share, args.seed, args.part, args.gnubg)
    write(result, args.out)
    print(json.dumps(result["metadata"]["counts"]), json.dumps(result["metadata"]["gnubg_0ply_score"], indent=1))


if __name__ == "__main__":
    main()
