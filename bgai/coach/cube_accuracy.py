"""bgai's money-game cube decisions judged on GNU Backgammon's 2-ply reference set, beside gnubg's own 0-ply.

    python -m bgai.coach.cube_accuracy [--plies 0 1] [--rollout N] [--json benchmarks/results/cube_accuracy.json]
    python -m bgai.coach.cube_accuracy --plies 0 --checkpoint P --versus Q      (paired: P's errors minus Q's)
    python -m bgai.coach.cube_accuracy --reference bgai/coach/data/cube_reference_match.json [--plies 0 1]
    python -m bgai.coach.cube_accuracy --judge rollouts [--plies 0 1 2] [--rollout N]
    python -m bgai.coach.cube_accuracy --plies 0 1 --manual-x      (paired: the fitted cube efficiency's errors
                                                                  minus the GNU Backgammon manual's x)

The reference set (``bgai/coach/data/cube_reference.json``, made by ``bgai.coach.cube_reference``) holds
positions near the doubling window from gnubg's own games, each with a centered cube or a 2-cube owned by the
player on roll, and gnubg's 2-ply cubeful equities. bgai decides each one (double? and, if doubled, take?) and
``score_decisions`` counts agreement and the equity those decisions lose, valued by gnubg's 2-ply equities.
Each ply's row is that ply's own cube; where a bot of that ply decides its cube deeper (``CUBE_PLIES``: the
1-ply bot at 2-ply, with its own network), a row ``bgai N-ply bot`` gives what that bot decides.
The match-play set (``cube_reference --match``: each position at a score of a 7-point match) is judged the same way,
its equities money-normalised to the cube as gnubg gives them. A bot decides with its network's fitted cube
efficiency where it has one (``bgai.train.cube_efficiency``; the fast network that plays at every ply);
``--manual-x`` adds each such row again with the manual's x, and where the model also shifts the win chance the
formula reads, with the model's own x alone ("x alone": fitted beside the shift, so not what a model of x fitted
alone decides; ``bgai/coach/cube_shift.py`` compares with that one); each with the paired difference.

``--judge rollouts`` judges by gnubg's own cubeful rollouts instead (``bgai/coach/data/cube_reference_rollouts.json``,
made by ``cube_reference --rollouts``): every row on the entries rolled out so far (a uniform sample of the set),
``gnubg 2-ply`` (the former judge) scored beside the others, and each row's paired differences from gnubg 0-ply's and
2-ply's.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from bgai.coach.cube_reference import (
    KINDS,
    REFERENCE,
    ROLLOUTS,
    decision_losses,
    gnubg_0ply_decisions,
    judged_by_rollouts,
    reference_decisions,
    score_decisions,
)
from bgai.core.cube import CENTERED, ON_ROLL, CubeState, EfficiencyModel, cube_equities
from bgai.core.files import provenance, write_json
from bgai.eval.bot import CUBE_PLIES, load_bot
from bgai.formats.position import Position

#: the match-play set: ``python -m bgai.coach.cube_reference --match``
MATCH_REFERENCE = REFERENCE.with_name("cube_reference_match.json")


def boards_and_cubes(entries) -> tuple[np.ndarray, CubeState]:
    """The boards and cube states of reference entries: money games, or with ``match`` in every entry (a set made
    with ``cube_reference --match``) its length and score, the player on roll's first."""
    boards = np.stack([Position.from_position_id(e["position_id"]).board for e in entries])
    value = np.array([e["cube"] for e in entries], dtype=np.int64)
    owner = np.array([CENTERED if e["owner"] == "centered" else ON_ROLL for e in entries], dtype=np.int8)
    matches = [e.get("match") for e in entries]
    if not any(matches):
        return boards, CubeState(value, owner)
    if not all(matches):
        raise ValueError("a reference set is all money games or all match play, not both")
    away = np.array([[m["length"] - m["score"][0], m["length"] - m["score"][1]] for m in matches], dtype=np.int64)
    return boards, CubeState(value, owner, away=away,
                             crawford=np.array([m["crawford"] for m in matches], dtype=bool),
                             post_crawford=np.array([m["post_crawford"] for m in matches], dtype=bool))


def bgai_decisions(bot, entries, runs: int = 1) -> tuple[np.ndarray, np.ndarray, float]:
    """(doubles, takes, seconds) of ``bot`` on the reference entries, all in one batch; the seconds are the
    fastest of ``runs`` runs (the first of a large batch also pays for growing the process's memory)."""
    boards, state = boards_and_cubes(entries)
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        equities = bot.cube_equities(boards, state)
        seconds.append(time.perf_counter() - started)
    return equities.should_double, equities.should_take, min(seconds)


def cube_key(bot) -> str:
    """A digest of everything ``Bot.cube_equities`` reads: the kind of bot, its network's weights (and an
    ``Ensemble``'s other networks', and whether they are evaluated in numpy or torch), its pruning net's, the depth
    of its cube and its lookahead's settings, and its cube efficiency. Two bots with the same key make the same cube
    decisions (the 1-ply bot, whose cube looks 2 plies ahead with the network the 2-ply bot plays with, and the 2-ply
    bot), so those are computed once."""
    from bgai.eval.weights import ModelSnapshot, content_hash

    def weights(model):
        return None if model is None else ModelSnapshot.of(model).weights

    model = bot.cube_efficiency
    return content_hash({"bot": type(bot).__name__, "model": weights(bot.model),
                         "numpy": isinstance(bot.model, ModelSnapshot),
                         "others": [weights(other.model) for other in getattr(bot, "others", ())],
                         "pruner": weights(bot.pruner), "prune": bot.prune,
                         "cube_plies": bot.cube_plies, "use_bearoff": bot.use_bearoff, "bf16": bot.bf16,
                         "cube_efficiency": None if model is None else model.to_json()})


def rollout_cube_decisions(bot, entries, options: dict | None = None, progress: bool = True) -> list:
    """``bot``'s rollout cube decisions (``Bot.cube_decision(..., rollout=True)``: ``bgai.eval.bot.CUBE_ROLLOUT``'s
    settings, ``options`` changing them) of the reference entries, one after another: a ``CubeDecision`` each."""
    from tqdm.auto import tqdm

    return [bot.cube_decision(Position.from_position_id(e["position_id"]), cube=e["cube"],
                              owner="centered" if e["owner"] == "centered" else "me", rollout=options or True)
            for e in tqdm(entries, desc="rollout cube decisions", unit="decision", disable=not progress,
                          mininterval=10)]


def rollout_decisions(bot, entries, options: dict | None = None, progress: bool = True
                      ) -> tuple[np.ndarray, np.ndarray, float]:
    """(doubles, takes, seconds) of ``rollout_cube_decisions``."""
    started = time.perf_counter()
    decisions = rollout_cube_decisions(bot, entries, options, progress)
    return (np.array([d.should_double for d in decisions]), np.array([d.should_take for d in decisions]),
            time.perf_counter() - started)


def paired_difference(entries, mine: tuple, theirs: tuple) -> dict:
    """Mean and standard error, in millipoints a decision, of the equity the (doubles, takes) ``mine`` lose minus
    what ``theirs`` lose on the same decisions."""
    diffs = decision_losses(entries, *mine) - decision_losses(entries, *theirs)
    return {"mp_per_decision": 1000 * float(diffs.mean()),
            "mp_se": 1000 * float(diffs.std(ddof=1) / math.sqrt(len(diffs)))}


#: With ``--judge rollouts``, the rows each other row is paired with, under these keys.
RIVALS = (("minus_gnubg_0ply", "gnubg 0-ply"), ("minus_gnubg_2ply", "gnubg 2-ply"))


def too_close_to_call(judged_entries) -> dict:
    """How many of the rollout-judged decisions lie within two standard errors of a tie: no double against
    min(double/take, 1), and double/take against 1 where the judge doubles (the two rollouts' errors taken as
    independent). Whichever way a player decides those, the judge's noise can charge it a few millipoints."""
    doubles = takes = 0
    for e in judged_entries:
        nd, dt, nd_se, dt_se = e["no_double"], e["double_take"], e["no_double_se"], e["double_take_se"]
        doubled_se = dt_se if dt < e["double_pass"] else 0.0
        doubles += abs(nd - min(dt, e["double_pass"])) < 2 * math.hypot(nd_se, doubled_se)
        if reference_decisions(e)[0]:
            takes += abs(dt - e["double_pass"]) < 2 * dt_se
    return {"double": int(doubles), "take": int(takes)}


def model_only(entries) -> dict:
    """bgai's cube model (Janowski, ``bgai.core.cube``) fed GNU Backgammon's own 2-ply cubeless probabilities: what the
    cube model loses by itself, apart from the network's errors. (A diagnostic; nothing is learned from it.)"""
    boards, state = boards_and_cubes(entries)
    equities = cube_equities(np.array([e["probabilities"] for e in entries]), boards, state)
    return score_decisions(entries, equities.should_double.tolist(), equities.should_take.tolist())


#: The network's outputs that ``profile`` replaces by the reference's, a group at a time: columns of the (N, 5)
#: probabilities (win, win gammon, win backgammon, lose gammon, lose backgammon).
OUTPUTS = {"win": [0], "gammons": [1, 3], "backgammons": [2, 4]}


def profile(entries, probs: np.ndarray, bot=None) -> dict:
    """Which of the network's outputs its cube errors come from. ``probs`` (N, 5) are the bot's cubeless
    probabilities of the entries (at any ply); Janowski's formula at the root (``bgai.core.cube.cube_equities``:
    no lookahead's recursion, no exact bear-off equities, so ``none`` is not quite the bot's own row) is fed them
    with one group of outputs (``OUTPUTS``) at a time replaced by the reference's own 2-ply probabilities (the rest
    kept, and kept consistent: no gammon above its win, no backgammon above its gammon), and each set of decisions
    is scored as the bot's are, with ``bot``'s cube efficiency (``Bot.janowski``) where given, else the manual's.
    ``difference``:
    each output's mean and mean absolute difference from the reference's. A diagnostic of where the error lies;
    nothing is learned from the reference's probabilities."""
    boards, state = boards_and_cubes(entries)
    judge = np.array([e["probabilities"] for e in entries], dtype=np.float64)
    probs = np.asarray(probs, dtype=np.float64)

    def score(p):
        equities = bot.janowski(p, boards, state) if bot is not None else cube_equities(p, boards, state)
        return score_decisions(entries, equities.should_double.tolist(), equities.should_take.tolist())

    rows = {"none": score(probs)}
    for name, columns in OUTPUTS.items():
        p = probs.copy()
        p[:, columns] = judge[:, columns]
        p[:, 1] = np.minimum(p[:, 1], p[:, 0])
        p[:, 3] = np.minimum(p[:, 3], 1 - p[:, 0])
        p[:, 2] = np.minimum(p[:, 2], p[:, 1])
        p[:, 4] = np.minimum(p[:, 4], p[:, 3])
        rows[name] = score(p)
    rows["all"] = score(judge)
    names = ("win", "win gammon", "win backgammon", "lose gammon", "lose backgammon")
    difference = {name: {"mean": float(d.mean()), "mean_abs": float(np.abs(d).mean())}
                  for name, d in zip(names, (probs - judge).T)}
    return {"replaced": {name: {"mp_per_decision": r["mp_per_decision"], "by_kind": r["by_kind"]}
                         for name, r in rows.items()},
            "difference": difference}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--checkpoint", help="default: the shipped network")
    parser.add_argument("--reference", default=str(REFERENCE))
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--rollout", type=int, default=0, metavar="N",
                        help="also the rollout cube decision (bgai eval --rollout), on a seeded sample of N of the "
                             "set's entries (a position and a cube state each; N at least their number: all of "
                             "them); every row is then measured on those (default 0: none, the whole set)")
    parser.add_argument("--versus", metavar="CHECKPOINT",
                        help="also each ply's paired difference from this network's decisions at the same ply (e.g. "
                             "the network a run started from)")
    parser.add_argument("--profile", action="store_true",
                        help="also each ply's profile: its cube errors with the network's win, gammon or backgammon "
                             "chances replaced by the reference's (a diagnostic of which output the errors come from)")
    parser.add_argument("--manual-x", action="store_true",
                        help="also each ply's decisions with the GNU Backgammon manual's cube efficiency in place of "
                             "the network's fitted one (bgai.train.cube_efficiency), and where the fitted model "
                             "shifts the win chance, with its own x without the shift; each row's paired difference "
                             "from them")
    parser.add_argument("--judge", choices=("2-ply", "rollouts"), default="2-ply",
                        help="what judges the decisions: the reference's gnubg 2-ply equities, or gnubg's cubeful "
                             "rollouts of the entries rolled out so far (cube_reference --rollouts; money set only)")
    parser.add_argument("--rollouts", type=Path, default=ROLLOUTS, metavar="FILE",
                        help="with --judge rollouts: the rollouts file (default: the committed one)")
    parser.add_argument("--trials", type=int, help="the rollout's trials (default: bgai.eval.bot.CUBE_ROLLOUT's)")
    parser.add_argument("--truncate", type=int, help="the rollout's truncation (default: CUBE_ROLLOUT's; 0: played "
                                                     "out)")
    args = parser.parse_args(argv)

    reference = json.loads(Path(args.reference).read_text())
    entries = reference["entries"]
    match = any("match" in e for e in entries)
    if match and args.rollout:
        parser.error("the rollout cube decision is for money games (the rollout's rules); --rollout needs a money "
                     "reference set")
    former = None  # with --judge rollouts: the entries as the 2-ply judge has them
    judge: dict = {}  # and what judged them
    if args.judge == "rollouts":
        if match or not args.rollouts.exists():
            parser.error(f"--judge rollouts needs the money set and its rollouts ({args.rollouts}: python -m "
                         "bgai.coach.cube_reference --rollouts)")
        rollouts = json.loads(args.rollouts.read_text())
        entries, former = judged_by_rollouts(entries, rollouts)
        if len(entries) < 2:
            parser.error(f"{args.rollouts} judges {len(entries)} entries so far: too few to score")
        judge = {"what": f"gnubg's cubeful rollouts ({args.rollouts.name}: {rollouts['metadata']['settings']}; "
                         f"{rollouts['metadata']['gnubg_version']}) of the first {len(entries)} entries of its "
                         "seeded order, a uniform sample of the set", "judged_entries": len(entries)}
    sampled = 0 < args.rollout < len(entries)
    if sampled:
        pick = np.sort(np.random.default_rng(38).choice(len(entries), args.rollout, replace=False))
        entries = [entries[i] for i in pick]
        former = [former[i] for i in pick] if former is not None else None
        if former is not None:
            judge["what"] += f"; a seeded sample of {len(entries)} of them (--rollout)"
    rows: dict[str, dict] = {}
    made: dict[str, tuple] = {}  # each row's (doubles, takes)
    decided: dict[str, tuple] = {}  # (doubles, takes, seconds) by cube_key: bots that decide alike, computed once

    def decide(bot, runs: int = 1) -> tuple:
        key = cube_key(bot)
        if key not in decided:
            decided[key] = bgai_decisions(bot, entries, runs)
        return decided[key]

    def scored(name: str, doubles, takes, **extra) -> dict:
        made[name] = (np.asarray(doubles, dtype=bool), np.asarray(takes, dtype=bool))
        rows[name] = {**score_decisions(entries, list(doubles), list(takes)), **extra}
        return rows[name]

    def beside_manual_x(name: str, bot, mine: tuple) -> None:
        """Row ``name`` again with ``bot``'s decisions under the manual's cube efficiency, and where its fitted
        model shifts the win chance, under the model's own x without the shift; each paired with the row."""
        manual = decide(bot.replace(cube_efficiency=None))[:2]
        scored(f"{name}, manual x", *manual)
        rows[name]["minus_manual_x"] = paired_difference(entries, mine, manual)
        model = bot.cube_efficiency
        if model.shift is not None:
            alone = decide(bot.replace(cube_efficiency=EfficiencyModel(model.weights, model.info)))
            scored(f"{name}, x alone", *alone[:2])
            rows[name]["minus_x_alone"] = paired_difference(entries, mine, alone[:2])

    if all("gnubg_0ply" in e for e in entries):  # gnubg's own 0-ply decisions, scored as bgai's are
        scored("gnubg 0-ply", *gnubg_0ply_decisions(entries))
    if former is not None:  # the former judge is a player now
        scored("gnubg 2-ply", *zip(*[reference_decisions(e) for e in former]))
    for plies in args.plies:
        bot = load_bot(args.checkpoint, plies=plies, cube_plies=plies)  # each ply's own cube (not CUBE_PLIES')
        doubles, takes, seconds = decide(bot, runs=2)
        row = scored(f"bgai {plies}-ply", doubles, takes, ms_per_position=1000 * seconds / len(entries))
        if args.profile:
            boards, _ = boards_and_cubes(entries)
            row["profile"] = profile(entries, bot.lookahead(boards, plies), bot)
        if args.versus:
            theirs = bgai_decisions(load_bot(args.versus, plies=plies, cube_plies=plies), entries)[:2]
            row["minus_versus"] = {"versus": args.versus, **paired_difference(entries, (doubles, takes), theirs)}
        manual = args.manual_x and bot.cube_efficiency is not None
        if manual:
            beside_manual_x(f"bgai {plies}-ply", bot, (doubles, takes))
        if CUBE_PLIES[plies] != plies:  # and what the bot of that ply decides: its cube looks CUBE_PLIES deep
            deeper = load_bot(args.checkpoint, plies=plies)
            doubles, takes, seconds = decide(deeper, runs=2)
            scored(f"bgai {plies}-ply bot", doubles, takes, cube_plies=CUBE_PLIES[plies],
                   ms_per_position=1000 * seconds / len(entries))
            if manual:
                beside_manual_x(f"bgai {plies}-ply bot", deeper, (doubles, takes))
    if args.rollout:
        options = {k: v for k, v in (("trials", args.trials), ("truncate", args.truncate)) if v is not None}
        if options.get("truncate") == 0:
            options["truncate"] = None
        doubles, takes, seconds = rollout_decisions(load_bot(args.checkpoint), entries, options)
        scored("bgai rollout", doubles, takes, ms_per_position=1000 * seconds / len(entries))
    rows["Janowski on gnubg's probabilities"] = model_only(entries)
    if former is not None:  # judged by rollouts on a sample: each beside gnubg 0-ply's and 2-ply's, paired
        for key, rival in RIVALS:
            for name, decisions in made.items():
                if rival in made and name not in ("gnubg 0-ply", rival):
                    rows[name][key] = paired_difference(entries, decisions, made[rival])
        # the judge's own noise: decisions its rollouts cannot call apart from their errors
        judge["too_close_to_call"] = too_close_to_call(entries)

    sample = f" (a sample of {len(entries)}, seed 38)" if sampled else ""
    kind = "match play, 7-point match" if match else "money, no Jacoby"
    judged_by = "gnubg's cubeful rollouts, a uniform sample of the set" if former is not None else "gnubg 2-ply"
    print(f"{len(entries)} reference entries{sample} ({judged_by}, {kind}): {args.reference}")
    if former is not None:
        close = judge["too_close_to_call"]
        print(f"too close for the rollouts to call (within 2 standard errors of a tie): {close['double']} double "
              f"and {close['take']} take decisions")
    print(f"{'':<34} {'mp/decision':>11} {'double agree':>13} {'double mp':>10} {'take agree':>11} {'take mp':>8}")
    for name, s in rows.items():
        print(f"{name:<34} {s['mp_per_decision']:>11.2f} {100 * s['double_agreement']:>12.1f}% "
              f"{s['double_mp']:>10.2f} {100 * s['take_agreement']:>10.1f}% {s['take_mp']:>8.2f}")
    for name, s in rows.items():
        for key, rival in RIVALS:
            if key in s:
                print(f"{name:<34} minus {rival}: {s[key]['mp_per_decision']:+.2f} ± {s[key]['mp_se']:.2f} mp a "
                      "decision (paired)")
    for name, s in rows.items():
        for key, what in (("minus_manual_x", "the manual's x"), ("minus_x_alone", "its own x without the shift")):
            if key in s:
                print(f"{name:<34} minus the same with {what}: {s[key]['mp_per_decision']:+.2f} ± "
                      f"{s[key]['mp_se']:.2f} mp a decision (paired)")
    for name, s in rows.items():
        if "minus_versus" in s:
            print(f"{name:<34} minus {args.versus} at the same ply: {s['minus_versus']['mp_per_decision']:+.2f} ± "
                  f"{s['minus_versus']['mp_se']:.2f} mp a decision (paired)")
    print(f"\nerrors by kind: how many, and their mp a decision\n{'':<34} " + " ".join(f"{k:>16}" for k in KINDS))
    for name, s in rows.items():
        print(f"{name:<34} " + " ".join(f"{s['by_kind'][k]['count']:>6} {s['by_kind'][k]['mp']:>9.2f}" for k in KINDS))
    for name, s in rows.items():
        if "profile" in s:
            replaced = s["profile"]["replaced"]
            print(f"\n{name}, profile: mp a decision with these outputs replaced by the reference's 2-ply ones\n"
                  + " ".join(f"{k:>12}" for k in replaced) + "\n" + " ".join(f"{r['mp_per_decision']:>12.2f}"
                                                                            for r in replaced.values()))
            print("each output minus the reference's: mean (mean absolute) " + ", ".join(
                f"{k} {d['mean']:+.4f} ({d['mean_abs']:.4f})" for k, d in s["profile"]["difference"].items()))
    classes = sorted({c for s in rows.values() for c in s.get("by_class", {})})
    if classes:
        print(f"\nby class: mp a decision (decisions)\n{'':<34} " + " ".join(f"{c:>16}" for c in classes))
        for name, s in rows.items():
            cells = [s["by_class"].get(c) for c in classes] if "by_class" in s else [None] * len(classes)
            print(f"{name:<34} " + " ".join(f"{c['mp_per_decision']:>9.2f} ({c['decisions']:>4})" if c else " " * 16
                                            for c in cells))
    print(json.dumps(rows))
    if args.json:
        command = "python -m bgai.coach.cube_accuracy " + shlex.join(argv if argv is not None else sys.argv[1:])
        figures = {**provenance(command.strip()), "reference": Path(args.reference).name,
                   **({"judge": judge} if former is not None else {}),
                   "positions": len(entries), **rows}
        write_json(args.json, figures, indent=2)


if __name__ == "__main__":
    main()
