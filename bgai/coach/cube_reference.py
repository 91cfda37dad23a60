"""A reference set of money-game cube decisions near the doubling window, judged by GNU Backgammon 1.07 at 2-ply.

Writes ``bgai/coach/data/cube_reference.json``; ``score_decisions`` scores anyone's double/take choices on it.

    python -m bgai.coach.cube_reference [--games 200] [--seed 0] [--out bgai/coach/data/cube_reference.json]
    python -m bgai.coach.cube_reference --rollouts [--trials 1296] [--jobs 1] [--limit N]

How the set is made:

1. Positions come from games GNU Backgammon plays against itself at 0-ply (``gnubg_nn``, the PyPI wrapper; fixed
   seed), taken with the player on roll before it rolls. Finished games and the starting position are left out, and
   so is a position met twice.
2. Each position is paired with two cube states: centered (value 1) and owned by the player on roll (value 2).
   Debian's gnubg evaluates every pair cheaply (cubeful, 0-ply) and the screening rule (``SCREENING``) keeps a
   share of the pairs near the doubling window, most of them close to it.
3. The kept pairs are evaluated again at 2-ply (cubeful, with gnubg's pruning: its "world class" setting). Those
   equities are the reference. The 0-ply equities of the screen are kept next to them, so gnubg 0-ply can be scored
   on the set too (``gnubg_0ply_score`` in the metadata).

``--rollouts`` judges the judge: it rolls the money set's entries out with Debian gnubg itself (cubeful, played
out, 1,296 trials a cube state, variance reduction), in a fixed random order, into
``bgai/coach/data/cube_reference_rollouts.json``, resuming where the file stops; the entries done so far are a uniform
sample of the set, and ``bgai.coach.cube_accuracy --judge rollouts`` scores every player on them, gnubg 2-ply among
them. About 100 s an entry on one core: a background job across sessions.

GNU Backgammon is the judge here only; nothing in this file becomes a training target.

This one file runs in two interpreters. The project's Python plays the games, screens and writes the result. GNU
Backgammon's embedded Python (``bgai.coach.gnubg_job``, calling ``gnubg_evaluate``) does the evaluations. That Python
has neither numpy nor bgai, so the module imports no bgai at its top, and numpy only where there is one. It needs the
Debian package (``apt-get install gnubg``) and is not run in CI; tests/test_cube_reference.py checks the file it wrote
and ``score_decisions``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

try:
    import numpy as np
except ImportError:  # gnubg's embedded Python, which runs only gnubg_evaluate (bgai.coach.gnubg_job)
    pass

#: The money-game set (``bgai.coach.cube_accuracy``'s default); ``--match`` writes cube_reference_match.json.
REFERENCE = Path(__file__).resolve().parent / "data" / "cube_reference.json"
GNUBG = "/usr/games/gnubg"
CUBE_STATES = (("centered", 1), ("on_roll", 2))

SCORING = (
    "Equities are gnubg's 2-ply cubeful money equities for the player on roll, normalised to the current cube value "
    "(no double = ND, double/take = DT, double/pass = DP = 1). "
    "Doubler's decision, one for every entry: doubling is worth min(DT, DP) (the opponent answers correctly), not "
    "doubling is worth ND; the reference doubles iff min(DT, DP) >= ND (a tie is gnubg's 'optional double', and "
    "costs nothing either way); loss = max(ND, min(DT, DP)) minus the worth of the action chosen. "
    "Taker's decision, only for the entries where the reference doubles (the double is offered): "
    "the reference takes iff DT <= DP; loss = |DT - DP| if the other answer is chosen, else 0. "
    "Agreement is the share of decisions equal to the reference's. mp = millipoints (1/1000 of the current cube "
    "value); mp_per_decision = (sum of doubler losses + sum of taker losses) / (doubler decisions + taker "
    "decisions)."
)

SCREENING = (
    "Positions where the cube cannot matter are dropped first: a side wins with cubeless chance >= 0.995 (gnubg_nn "
    "0-ply) and both sides' gammon chances are < 0.005. With gnubg's 0-ply cubeful equities ND, DT, DP of a "
    "(position, cube state) pair, double margin = |ND - min(DT, DP)|, take margin = |DT - DP|, margin = the "
    "smaller. A pair with margin <= {close} is kept with probability {close_share}; one with {close} < margin <= "
    "{near} (clear doubles, passes, no doubles and too-goods near the window) with probability {near_share}; the "
    "rest are dropped. The draws are random.Random(seed).random(), one per pair in order."
)


# --- scoring (pure Python, imported by the other coach modules) --------------------------------------------------


#: The kinds of cube error ``score_decisions`` counts: the player on roll kept the cube where the reference
#: doubles, or doubled where it does not (too early, or too good to double); the opponent took a double the
#: reference passes, or passed one it takes.
KINDS = ("missed double", "wrong double", "wrong take", "wrong pass")


def reference_decisions(entry: dict) -> tuple[bool, bool]:
    """The (double, take) decisions an entry's equities call for: double iff min(DT, DP) >= ND, take iff DT <= DP."""
    nd, dt, dp = entry["no_double"], entry["double_take"], entry["double_pass"]
    return min(dt, dp) >= nd, dt <= dp


def decision_losses(reference_entries, doubles, takes) -> np.ndarray:
    """The equity each decision loses (``SCORING``; ``bgai.core.cube.decision_losses``): entry ``i``'s double
    decision, then, where the reference doubles, its take decision, in the order of the entries (the decisions
    ``score_decisions`` averages)."""
    from bgai.core import cube  # (here: gnubg's own Python runs this file alone)

    if not len(reference_entries) == len(doubles) == len(takes):
        raise ValueError("need one double and one take decision per reference entry")
    nd, dt, dp = ([float(e[key]) for e in reference_entries] for key in ("no_double", "double_take", "double_pass"))
    return cube.decision_losses(nd, dt, dp, [bool(d) for d in doubles], [bool(t) for t in takes])


def score_decisions(reference_entries, doubles, takes) -> dict:
    """Agreement with the 2-ply reference and equity lost, per the definition in ``SCORING``.

    ``doubles[i]`` and ``takes[i]`` are the decisions to judge on entry ``i`` (would the player on roll double; if
    doubled, would the opponent take); ``takes[i]`` counts only where the reference doubles. ``mp_se`` is the standard
    error of ``mp_per_decision`` (the losses' spread over the root of their number). ``by_kind`` splits the
    errors (the decisions that lose equity) into ``KINDS``: how many of each, and their millipoints over all the
    decisions (the four add up to ``mp_per_decision``). ``by_class``, where every entry has its ``class``
    (contact, crashed, race, bearoff), gives each class's decisions (a doubler's and, where the reference
    doubles, a taker's) and the millipoints they lose on average.
    """
    losses = decision_losses(reference_entries, doubles, takes)
    n_double = len(reference_entries)
    double_losses, take_losses = losses[:n_double], losses[n_double:]
    references = [reference_decisions(entry) for entry in reference_entries]
    double_agree = sum(bool(double) == ref_double for double, (ref_double, _) in zip(doubles, references))
    taken = [(bool(take), ref_take) for take, (ref_double, ref_take) in zip(takes, references) if ref_double]
    take_agree = sum(take == ref_take for take, ref_take in taken)
    kinds = {
        "missed double": [loss for loss, double in zip(double_losses, doubles) if loss > 0 and not double],
        "wrong double": [loss for loss, double in zip(double_losses, doubles) if loss > 0 and double],
        "wrong take": [loss for loss, (take, _) in zip(take_losses, taken) if loss > 0 and take],
        "wrong pass": [loss for loss, (take, _) in zip(take_losses, taken) if loss > 0 and not take],
    }
    n_take = len(take_losses)

    def mean_mp(values):
        return 1000 * sum(values.tolist()) / len(values) if len(values) else 0.0

    classes = [entry.get("class") for entry in reference_entries]
    by_class: dict[str, dict] = {}
    if classes and None not in classes:
        decision_class = np.array(classes + [c for c, (ref_double, _) in zip(classes, references) if ref_double])
        by_class = {c: {"decisions": int((decision_class == c).sum()),
                        "mp_per_decision": mean_mp(losses[decision_class == c])} for c in sorted(set(classes))}

    return {
        "double_decisions": n_double,
        "double_agreement": double_agree / n_double if n_double else 0.0,
        "double_mp": mean_mp(double_losses),
        "take_decisions": n_take,
        "take_agreement": take_agree / n_take if n_take else 0.0,
        "take_mp": mean_mp(take_losses),
        "decisions": n_double + n_take,
        "mp_per_decision": mean_mp(losses),
        "mp_se": 1000 * float(losses.std(ddof=1)) / len(losses) ** 0.5 if len(losses) > 1 else 0.0,
        "by_kind": {kind: {"count": len(lost), "mp": float(1000 * sum(lost) / (n_double + n_take)) if n_double else 0.0}
                    for kind, lost in kinds.items()},
        **({"by_class": by_class} if by_class else {}),
    }


def gnubg_0ply_decisions(reference_entries) -> tuple[list[bool], list[bool]]:
    """(doubles, takes): GNU Backgammon 0-ply's own decisions, from each entry's stored 0-ply equities."""
    decisions = [reference_decisions(entry["gnubg_0ply"]) for entry in reference_entries]
    return [d for d, _ in decisions], [t for _, t in decisions]


def gnubg_0ply_score(reference_entries) -> dict:
    """``score_decisions`` of GNU Backgammon 0-ply's own decisions (``gnubg_0ply_decisions``)."""
    return score_decisions(reference_entries, *gnubg_0ply_decisions(reference_entries))


# --- the GNU Backgammon side (its embedded Python: standard library and the gnubg module only) -------------------

GNUBG_CLASSES = {0: "over", 1: "hypergammon", 2: "hypergammon", 3: "hypergammon", 4: "bearoff", 5: "bearoff",
                 6: "bearoff", 7: "bearoff", 8: "race", 9: "crashed", 10: "contact"}


def gnubg_evaluate(job: dict) -> list[dict]:
    """Money-game evaluations of (position id, cube owner, cube value) items, at ``job["plies"]``.

    The board from ``gnubg.positionfromid`` is ``(opponent, player on roll)``; the cube info says player 0 is on roll
    (``move=0``), so owner 0 is the player on roll and -1 the centered cube.
    """
    import gnubg

    gnubg.command("set threads 1")
    gnubg.command("set jacoby off")
    gnubg.command("set beavers 0")
    plies = job["plies"]
    # evalcontext(cubeful, plies, deterministic, prune, noise); prune as in gnubg's "world class" setting
    cubeful = gnubg.evalcontext(1, plies, 1, 1, 0.0)
    cubeless = gnubg.evalcontext(0, plies, 1, 1, 0.0)
    results = []
    for item in job["items"]:
        position_id, owner, cube = item[:3]
        match = item[3] if len(item) > 3 else None
        board = gnubg.positionfromid(position_id)
        if match is None:
            # cubeinfo(cube value, cube owner, player on move); money game: match length 0 by default
            info = gnubg.cubeinfo(cube, -1 if owner == "centered" else 0, 0)
            if info["jacoby"] or info["beavers"] or info["matchto"]:
                raise RuntimeError(f"expected a money game without Jacoby or beavers, got {info}")
        else:
            # (..., match length, score (player 0 = the player on roll, player 1), whether this is the Crawford
            # game); a post-Crawford game is a score with a player one away outside the Crawford game
            info = gnubg.cubeinfo(cube, -1 if owner == "centered" else 0, 0, match["length"],
                                  tuple(match["score"]), 1 if match["crawford"] else 0)
            if info["matchto"] != match["length"] or list(info["score"]) != list(match["score"]):
                raise RuntimeError(f"gnubg read the match {match} as {info}")
        _, nd, dt, dp, _, text = gnubg.cfevaluate(board, info, cubeful)
        result = {
            "board": [list(row) for row in board],
            "class": GNUBG_CLASSES.get(gnubg.classifypos(board, 0), "unknown"),
            "no_double": nd, "double_take": dt, "double_pass": dp, "decision": text,
        }
        if job["probabilities"]:
            result["probabilities"] = list(gnubg.evaluate(board, info, cubeless)[:5])
        results.append(result)
    return results


# --- the project side ------------------------------------------------------------------------------------------


def run_gnubg(items: list, plies: int, probabilities: bool, gnubg: str = GNUBG) -> list[dict]:
    """Evaluate [position id, owner, cube] items in one Debian gnubg process (``gnubg_evaluate``, there)."""
    from bgai.coach import gnubg_job  # (here, not at the top: gnubg's Python, which reads this file, has no bgai)

    return gnubg_job.run(Path(__file__), "gnubg_evaluate", {"items": items, "plies": plies,
                                                            "probabilities": probabilities}, gnubg)


def gnubg_rollout_commands(position_id: str, cube: int, owner: str, trials: int, seed: int) -> str:
    """gnubg's commands for two cubeful money rollouts of a position, the player on roll being gnubg's player 1:
    with the cube as it is (no double), then doubled and owned by the opponent (double/take, in twice the cube's
    units). Both are played out with 0-ply checker play and cube decisions, variance reduction and quasi-random
    dice (``ROLLOUT_SETTINGS``)."""
    lines = ["set threads 1", "set jacoby off", "set beavers 0", f"set rollout trials {trials}",
             "set rollout quasirandom on", f"set rollout seed {seed}", "set rollout cubeful on",
             "set rollout varredn on", "set rollout chequerplay plies 0", "set rollout cubedecision plies 0",
             "set rollout truncation enable off", "new game"]
    held = "set cube centre" if owner == "centered" else "set cube owner 1"
    for value, holder in ((cube, held), (2 * cube, "set cube owner 0")):
        lines += [f"set cube value {value}", holder, "set turn 1", f"set board {position_id}", "rollout"]
    return "\n".join(lines) + "\n"


#: The gnubg rollouts running now (``_run_stoppable``), for ``stop_rollouts``.
_RUNNING: set[subprocess.Popen] = set()
_RUNNING_LOCK = threading.Lock()


def _run_stoppable(args: list[str]) -> str:
    """``args``' standard output (an error if it fails), run in a process group of its own that
    ``stop_rollouts`` can end."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            text=True, start_new_session=True)
    with _RUNNING_LOCK:
        _RUNNING.add(proc)
    try:
        out, err = proc.communicate()
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(proc)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, args, out, err)
    return out


def descendants(pid: int) -> list[int]:
    """The live processes below ``pid``, read from /proc (none where there is no /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def stop_rollouts() -> None:
    """End every gnubg rollout still running: its ``script`` and every process below it. gnubg runs in a session
    of its own on ``script``'s terminal and outlives the terminal's closing (it ignores the hang-up), so each is
    ended by its process id, found before ``script`` ends and leaves it to init."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for proc in running:
        below = descendants(proc.pid)
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        for pid in below:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def gnubg_cube_rollout(position_id: str, cube: int, owner: str, trials: int, seed: int,
                       gnubg: str = GNUBG) -> dict:
    """No double and double/take by Debian gnubg's cubeful rollout (``gnubg_rollout_commands``), in the current
    cube's units as the reference's equities are, each with its standard error (double/pass is 1). gnubg prints a
    rollout's results only to a terminal, so it runs under ``script``."""
    import re

    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(gnubg_rollout_commands(position_id, cube, owner, trials, seed))
    try:
        out = _run_stoppable(["script", "-qc", f"{gnubg} -t -q < {f.name}", "/dev/null"])
    finally:
        Path(f.name).unlink()
    found = []
    for block in out.split("Rollout done. Printing final results.")[1:]:
        values = re.findall(r"CF\s+([+-]?\d+\.\d+)", block)
        found.append((float(values[0]), float(values[1])))
    if len(found) != 2:
        raise RuntimeError(f"gnubg gave {len(found)} rollouts for {position_id}, not 2:\n{out[-2000:]}")
    (nd, nd_se), (dt, dt_se) = found
    return {"no_double": nd, "no_double_se": nd_se, "double_take": 2 * dt, "double_take_se": 2 * dt_se,
            "double_pass": 1.0}


# --- the reference judged again by rollouts ---------------------------------------------------------------------

#: gnubg's own cubeful rollouts of the money set's entries (``--rollouts``): a judge for the 2-ply judge, which
#: misjudges some decisions and shares its network's errors with gnubg 0-ply (one of the players it scores). The
#: rollouts play with that network too, but their values come from the games' ends, not from its evaluations.
ROLLOUTS = Path(__file__).resolve().parent / "data" / "cube_reference_rollouts.json"
ROLLOUT_SETTINGS = ("cubeful money rollouts by Debian gnubg (no Jacoby, no beavers) of no double and double/take "
                    "apart, played out, 0-ply checker play and cube decisions, variance reduction, quasi-random "
                    "dice, seed 1000 + the entry's index in the reference set")
#: The order the entries are rolled out in: a seeded shuffle, so that the entries rolled out so far are always a
#: uniform sample of the set.
ORDER_SEED = 38


def rollout_order(n: int) -> list[int]:
    """The reference entries' indices in the order ``--rollouts`` rolls them out."""
    return random.Random(ORDER_SEED).sample(range(n), n)


def judged_prefix(reference_entries: list, rollouts: dict) -> list[int]:
    """The indices of the entries that a rollouts file judges: the longest run of ``rollout_order`` it holds whole
    (a uniform sample of the set; entries finished beyond a gap wait until the gap is filled). Each judged entry
    must be the reference's own (the same position and cube), or this raises."""
    done = {}
    for row in rollouts["entries"]:
        i = row["index"]
        if not 0 <= i < len(reference_entries):
            raise ValueError(f"rollout of entry {i}: the reference set has {len(reference_entries)} entries")
        entry = reference_entries[i]
        if (row["position_id"], row["cube"], row["owner"]) != (entry["position_id"], entry["cube"], entry["owner"]):
            raise ValueError(f"rollout of entry {i} is of {row['position_id']} (cube {row['cube']}, {row['owner']}), "
                             f"the reference's entry {i} of {entry['position_id']} (cube {entry['cube']}, "
                             f"{entry['owner']}): the rollouts were made for another reference set")
        done[i] = row
    prefix = []
    for i in rollout_order(len(reference_entries)):
        if i not in done:
            break
        prefix.append(i)
    return prefix


def judged_by_rollouts(reference_entries: list, rollouts: dict) -> tuple[list[dict], list[dict]]:
    """(judged, former): the entries of ``judged_prefix``, each with its no double and double/take equities
    replaced by gnubg's rollouts (``no_double_se``, ``double_take_se`` beside them), and the same entries as the
    2-ply reference has them. Scoring ``former``'s own decisions on ``judged`` scores the 2-ply judge itself."""
    by_index = {row["index"]: row for row in rollouts["entries"]}
    prefix = judged_prefix(reference_entries, rollouts)
    former = [reference_entries[i] for i in prefix]
    judged = []
    for entry, i in zip(former, prefix):
        row = by_index[i]
        judged.append({**entry, "no_double": row["no_double"], "double_take": row["double_take"],
                       "double_pass": 1.0, "no_double_se": row["no_double_se"],
                       "double_take_se": row["double_take_se"], "decision": None})
    return judged, former


def roll_out_reference(reference: Path = REFERENCE, out: Path = ROLLOUTS, trials: int = 1296, jobs: int = 1,
                       limit: int | None = None, gnubg: str = GNUBG, progress: bool = True) -> dict:
    """Roll out the reference set's entries with gnubg (``gnubg_cube_rollout``), in ``rollout_order``, into ``out``.

    Resumable: the entries ``out`` already holds are kept and the rest follow, and ``out`` is rewritten (atomically)
    as each entry finishes, so a stopped run loses at most the entries in progress; where one entry's rollout fails,
    the others that finished are kept and the error names it. ``limit``: stop once this many entries are rolled out
    in all. Refuses an ``out`` made with other settings, another gnubg or for another reference set, and an ``out``
    that another process is writing (``locked_file``)."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from tqdm.auto import tqdm

    from bgai.core.files import locked_file, provenance, write_atomically

    entries = json.loads(Path(reference).read_text())["entries"]
    if any("match" in e for e in entries):
        raise ValueError("--rollouts rolls out money-game sets only (gnubg's rollouts here are money games)")
    settings = f"{trials} trials a cube state; {ROLLOUT_SETTINGS}"
    version = gnubg_version(gnubg)
    with locked_file(out, "gnubg rollout job"):
        rows = []
        if Path(out).exists():
            existing = json.loads(Path(out).read_text())
            made = existing["metadata"]
            if made["trials"] != trials:
                raise ValueError(f"{out} holds rollouts of {made['trials']} trials, not {trials}: finish it with the "
                                 "same --trials, or write another file")
            if (made.get("settings"), made.get("gnubg_version")) != (settings, version):
                raise ValueError(f"{out} was made by {made.get('gnubg_version')} with the settings "
                                 f"{made.get('settings')!r}, not by {version} with {settings!r}: write another file")
            judged_prefix(entries, existing)  # the same reference set, or this raises
            rows = existing["entries"]
        done = {row["index"] for row in rows}
        order = rollout_order(len(entries))
        rank = {i: k for k, i in enumerate(order)}
        todo = [i for i in (order[:limit] if limit is not None else order) if i not in done]
        command = f"python -m bgai.coach.cube_reference --rollouts --trials {trials}"

        def save() -> None:
            metadata = {
                "description": "GNU Backgammon's cubeful rollouts of entries of the money cube reference set "
                               f"({Path(reference).name}), in a seeded random order (random.Random({ORDER_SEED})."
                               "sample of the entries' indices): the entries rolled out so far are a uniform sample "
                               "of the set. A judge of the 2-ply judge (bgai.coach.cube_accuracy --judge "
                               "rollouts); a benchmark only, never a training target.",
                "reference": Path(reference).name, "entries_in_reference": len(entries), "trials": trials,
                "settings": settings, "gnubg_version": version,
                "normalisation": "no_double and double_take are the player on roll's cubeful equities in the current "
                                 "cube's units (double/pass is 1), each with its standard error",
                **provenance(command)}
            body = ",\n  ".join(json.dumps(row) for row in sorted(rows, key=lambda r: rank[r["index"]]))
            text = f'{{\n "metadata": {json.dumps(metadata, indent=1)},\n "entries": [\n  {body}\n ]\n}}\n'
            write_atomically(out, lambda f: f.write(text.encode()))

        def one(i: int) -> dict:
            e = entries[i]
            began = time.perf_counter()
            try:
                result = gnubg_cube_rollout(e["position_id"], e["cube"], e["owner"], trials, 1000 + i, gnubg)
            except Exception as error:
                raise RuntimeError(f"gnubg's rollout of entry {i} ({e['position_id']}, cube {e['cube']}, "
                                   f"{e['owner']}) failed: {error}") from error
            return {"index": i, "position_id": e["position_id"], "cube": e["cube"], "owner": e["owner"],
                    **{k: v for k, v in result.items() if k != "double_pass"},
                    "seconds": round(time.perf_counter() - began, 1)}

        pool = ThreadPoolExecutor(jobs)
        futures = [pool.submit(one, i) for i in todo]
        try:
            with tqdm(total=len(todo), desc="gnubg cube rollouts", unit="entry", disable=not progress,
                      mininterval=30) as bar:
                for future in as_completed(futures):
                    rows.append(future.result())  # an entry's error stops the run here
                    done.add(rows[-1]["index"])
                    save()
                    bar.update()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            stop_rollouts()  # a stop (Ctrl-C, SIGTERM) leaves no gnubg behind
            finished = [f.result() for f in futures if f.done() and not f.cancelled() and f.exception() is None]
            rows.extend(row for row in finished if row["index"] not in done)
            if rows:
                save()  # whatever finished before the stop is kept
            raise
        pool.shutdown()
        if not Path(out).exists():
            save()
    return json.loads(Path(out).read_text())


def gnubg_version(gnubg: str = GNUBG) -> str:
    return subprocess.run([gnubg, "--version"], capture_output=True, text=True).stdout.splitlines()[0].strip()


def self_play_positions(games: int, seed: int) -> list:
    """Boards (on-roll view, before the roll) met in gnubg_nn 0-ply self-play, first occurrence only, without the
    starting position and finished games."""
    import numpy as np

    from bgai.core.game import game_over
    from bgai.formats.position import START_BOARD
    from bgai.players.gnubg import from_gnubg, require_gnubg, to_gnubg

    gnubg_nn = require_gnubg()
    rng = np.random.default_rng(seed)
    seen = {START_BOARD.tobytes()}
    boards = []
    for _ in range(games):
        board = START_BOARD.copy()
        dice = rng.choice(6, size=2, replace=False) + 1  # the opening roll is never a double
        while True:
            _, key = gnubg_nn.best_move(to_gnubg(board), int(dice[0]), int(dice[1]), n=0, b=1)
            board = from_gnubg(gnubg_nn.board_from_position_key(key))
            if game_over(board[None])[0]:
                break
            if board.tobytes() not in seen:
                seen.add(board.tobytes())
                boards.append(board)
            dice = rng.integers(1, 7, size=2)
    return boards


#: The match of ``--match`` sets: a 7-point match (the length of most of the Depreli study's and of gnubg's
#: match tests); every score from 7-away/7-away to 2-away/2-away, and the post-Crawford games with either side
#: one away (the Crawford game itself has no cube).
MATCH_LENGTH = 7


def match_states(length: int = MATCH_LENGTH) -> list[dict]:
    """Every non-Crawford state of a match to ``length``: the score of (player on roll, opponent)."""
    states = []
    for mine in range(length):
        for theirs in range(length):
            one_away = [length - s == 1 for s in (mine, theirs)]
            if all(one_away):
                continue  # (1-away/1-away: no cube decision left, both sides double at once or never)
            states.append({"length": length, "score": [mine, theirs], "crawford": False,
                           "post_crawford": any(one_away)})
    return states


def cube_cannot_matter(probabilities) -> bool:
    """A side all but sure to win, and no gammons either way: cashing and playing on are worth the same."""
    win, win_gammon, _, lose_gammon, _ = probabilities
    return max(win, 1 - win) >= 0.995 and win_gammon < 0.005 and lose_gammon < 0.005


def margin(evaluation: dict) -> float:
    """How far the double or the take decision is from flipping, whichever is nearer."""
    nd, dt, dp = evaluation["no_double"], evaluation["double_take"], evaluation["double_pass"]
    return min(abs(nd - min(dt, dp)), abs(dt - dp))


def rounded(values):
    """gnubg's numbers are C floats: write each as the shortest decimal that reads back as the same float32, which
    keeps their order and ties exactly (rounding to fixed decimals can make two of them equal)."""
    import numpy as np

    return [float(np.format_float_positional(np.float32(value), unique=True)) for value in values]


def build(games: int, seed: int, close: float, near: float, close_share: float, near_share: float,
          gnubg: str = GNUBG, match: bool = False) -> dict:
    from bgai.formats.position import Position
    from bgai.players.gnubg import require_gnubg, to_gnubg

    gnubg_nn = require_gnubg()
    began = time.perf_counter()
    boards = self_play_positions(games, seed)
    boards = [board for board in boards if not cube_cannot_matter(gnubg_nn.probabilities(to_gnubg(board), 0))]
    ids = [Position(board).position_id() for board in boards]
    played = time.perf_counter()
    print(f"{len(ids)} distinct positions where the cube can matter, from {games} games ({played - began:.0f} s)",
          flush=True)

    items: list[list]
    if match:  # each position at one score of the match, drawn from every non-Crawford score alike
        states = match_states()
        drawn = random.Random(seed + 1)
        scores = [states[drawn.randrange(len(states))] for _ in ids]
        items = [[position_id, owner, cube, score] for position_id, score in zip(ids, scores)
                 for owner, cube in CUBE_STATES]
    else:
        items = [[position_id, owner, cube] for position_id in ids for owner, cube in CUBE_STATES]
    screen = run_gnubg(items, plies=0, probabilities=False, gnubg=gnubg)
    for board, position_id, evaluation in zip(boards, ids, screen[::len(CUBE_STATES)]):
        if evaluation["board"] != to_gnubg(board):  # the two readings of a Position ID agree
            raise RuntimeError(f"gnubg reads {position_id} as {evaluation['board']}, bgai as {to_gnubg(board)}")
    screened = time.perf_counter()
    print(f"screened {len(items)} (position, cube) pairs at 0-ply ({screened - played:.0f} s)", flush=True)

    chooser = random.Random(seed)
    kept: list[tuple[list, dict]] = []
    for item, evaluation in zip(items, screen):
        m = margin(evaluation)
        share = close_share if m <= close else near_share if m <= near else 0.0
        if chooser.random() < share:
            kept.append((item, evaluation))
    print(f"kept {len(kept)} pairs; evaluating them at 2-ply", flush=True)

    reference = run_gnubg([item for item, _ in kept], plies=2, probabilities=True, gnubg=gnubg)
    finished = time.perf_counter()
    print(f"2-ply done ({finished - screened:.0f} s)", flush=True)

    entries: list[dict] = []
    for (item, quick), slow in zip(kept, reference):
        position_id, owner, cube = item[:3]
        nd, dt, dp = rounded([slow["no_double"], slow["double_take"], slow["double_pass"]])
        quick_nd, quick_dt, quick_dp = rounded([quick["no_double"], quick["double_take"], quick["double_pass"]])
        entries.append({
            "position_id": position_id,
            "cube": cube,
            "owner": owner,
            "class": slow["class"],
            "no_double": nd,
            "double_take": dt,
            "double_pass": dp,
            "decision": slow["decision"],
            "probabilities": rounded(slow["probabilities"]),
            "gnubg_0ply": {"no_double": quick_nd, "double_take": quick_dt, "double_pass": quick_dp,
                           "decision": quick["decision"]},
            **({"match": item[3]} if match else {}),
        })
    zero_ply = gnubg_0ply_score(entries)
    counts = {owner: sum(entry["owner"] == owner for entry in entries) for owner, _ in CUBE_STATES}
    screening = SCREENING.format(close=close, near=near, close_share=close_share, near_share=near_share)
    return {
        "metadata": {
            "description": ("Match-play" if match else "Money-game") + " cube decisions near the doubling window, "
                           "GNU Backgammon 2-ply cubeful equities as the reference. A test oracle and benchmark "
                           "only, never a training target.",
            **({"match": f"a {MATCH_LENGTH}-point match: each position at one score drawn alike from every "
                         "non-Crawford score (random.Random(seed + 1)), the player on roll's first; 'match' in "
                         "each entry: length, score, crawford (never: the Crawford game has no cube), "
                         "post_crawford; gnubg.cubeinfo(cube, owner, 0, length, score, crawford)"}
               if match else {}),
            "gnubg_version": gnubg_version(gnubg),
            "positions_from": f"gnubg_nn {gnubg_nn_version()} 0-ply self-play (PyPI gnubg-nn), {games} games, "
                              f"numpy.random.default_rng({seed}) dice; the player on roll before its roll; each "
                              "distinct position once",
            "games": games,
            "seed": seed,
            "date": datetime.date.today().isoformat(),
            "evaluation": ("match play (gnubg's own match equity table), its cubeful equities normalised as "
                           "money equities to the cube (double_pass 1)" if match else
                           "money game, no Jacoby rule, no beavers") + "; gnubg.cfevaluate at 2-ply, cubeful, "
                          "deterministic, pruning on, no noise: evalcontext(1, 2, 1, 1, 0.0); "
                          "probabilities from gnubg.evaluate at 2-ply, cubeless: evalcontext(0, 2, 1, 1, 0.0)",
            "api": "gnubg.command('set jacoby off'); gnubg.command('set beavers 0'); "
                   "board = gnubg.positionfromid(position_id)  # (opponent, player on roll); "
                   "info = gnubg.cubeinfo(cube, owner, 0)  # owner -1 centered, 0 the player on roll, who is "
                   "player 0; optimal, nd, dt, dp, code, text = gnubg.cfevaluate(board, info, evalcontext); "
                   "probabilities = gnubg.evaluate(board, info, evalcontext)[:5]",
            "cube_states": "owner 'centered' with cube 1; owner 'on_roll' (the player on roll owns it) with cube 2",
            "normalisation": "no_double, double_take, double_pass are gnubg's cubeful equities for the player on "
                             "roll, normalised to the current cube value (double_pass is always 1)",
            "probabilities": "gnubg's cubeless probabilities for the player on roll, cumulative: win, win gammon, "
                             "win backgammon, lose gammon, lose backgammon",
            "decision": "gnubg's recommendation in words (cfevaluate's text)",
            "class": "gnubg.classifypos: contact, crashed, race or bearoff",
            "gnubg_0ply": "the same equities at 0-ply (the screen: evalcontext(1, 0, 1, 1, 0.0)), and gnubg's 0-ply "
                          "recommendation",
            "screening": screening,
            "candidates": {"positions": len(ids), "pairs": len(items)},
            "counts": {"entries": len(entries), **counts},
            "scoring": SCORING,
            "gnubg_0ply_score": zero_ply,
            "seconds": {"self_play": round(played - began, 1), "screen_0ply": round(screened - played, 1),
                        "reference_2ply": round(finished - screened, 1)},
            "command": f"python -m bgai.coach.cube_reference --games {games} --seed {seed} --close {close} "
                       f"--near {near} --close-share {close_share} --near-share {near_share}"
                       + (" --match --out bgai/coach/data/cube_reference_match.json" if match else ""),
        },
        "entries": entries,
    }


def gnubg_nn_version() -> str:
    from importlib.metadata import version

    return version("gnubg-nn")


def write(result: dict, out: Path) -> None:
    """The metadata indented, then one entry a line."""
    out.parent.mkdir(parents=True, exist_ok=True)
    metadata = json.dumps(result["metadata"], indent=1).replace("\n", "\n ")
    entries = ",\n  ".join(json.dumps(entry) for entry in result["entries"])
    out.write_text(f'{{\n "metadata": {metadata},\n "entries": [\n  {entries}\n ]\n}}\n')


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def argv_has(argv, *options: str) -> bool:
    """Whether the command line (``argv``, or this process's) names any of ``options``."""
    import sys

    given = sys.argv[1:] if argv is None else argv
    return any(arg == option or arg.startswith(option + "=") for arg in given for option in options)


def main(argv=None) -> None:
    # no abbreviations: which options were given is read from the command line itself (argv_has)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--games", type=int, default=200, help="gnubg_nn self-play games to take positions from")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--close", type=float, default=0.10, help="margin of the close pairs")
    parser.add_argument("--near", type=float, default=0.25, help="margin of the pairs near the window")
    parser.add_argument("--close-share", type=float, default=0.3, help="share of the close pairs kept")
    parser.add_argument("--near-share", type=float, default=0.15, help="share of the other near pairs kept")
    parser.add_argument("--gnubg", default=GNUBG, help="Debian's gnubg executable")
    parser.add_argument("--match", action="store_true", help=f"match play: each position at a score of a "
                                                               f"{MATCH_LENGTH}-point match")
    parser.add_argument("--out", type=Path, help="default: bgai/coach/data/cube_reference.json, or with --rollouts "
                                                 "bgai/coach/data/cube_reference_rollouts.json")
    parser.add_argument("--rollouts", action="store_true",
                        help="instead of building a set, roll the money set's entries out with gnubg (cubeful, "
                             "--trials a cube state) in a seeded random order, resuming --out")
    parser.add_argument("--trials", type=int, default=1296, help="with --rollouts: trials a cube state (1296)")
    parser.add_argument("--jobs", type=int, default=1, help="with --rollouts: gnubg processes at once (1)")
    parser.add_argument("--limit", type=int, help="with --rollouts: stop once this many entries are rolled out")
    args = parser.parse_args(argv)
    if args.rollouts and (args.match or argv_has(argv, "--games", "--seed", "--close", "--near", "--close-share",
                                                 "--near-share")):
        parser.error("--rollouts rolls out the money set as it is: it takes no option of building a set")
    if not args.rollouts and argv_has(argv, "--trials", "--jobs", "--limit"):
        parser.error("--trials, --jobs and --limit go with --rollouts")
    if args.rollouts:
        before = signal.signal(signal.SIGTERM, _interrupt)  # stopped like Ctrl-C: finished entries kept, gnubg ended
        try:
            done = roll_out_reference(out=args.out or ROLLOUTS, trials=args.trials, jobs=args.jobs,
                                      limit=args.limit, gnubg=args.gnubg)
        finally:
            signal.signal(signal.SIGTERM, before)
        print(f"{len(done['entries'])} entries rolled out in {args.out or ROLLOUTS}")
        return
    args.out = args.out or REFERENCE
    result = build(args.games, args.seed, args.close, args.near, args.close_share, args.near_share, args.gnubg,
                   match=args.match)
    write(result, args.out)
    print(json.dumps(result["metadata"]["counts"]), json.dumps(result["metadata"]["gnubg_0ply_score"], indent=1))


if __name__ == "__main__":
    main()
