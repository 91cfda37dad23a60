"""How well the labelling network's 0-ply outputs agree with its own rollouts: a calibration report by class.

    python -m bgai.coach.calibration [--labels checkpoints/labels/split-scale,checkpoints/labels/split-scale-plays]
        [--json benchmarks/results/calibration.json]
    python -m bgai.coach.calibration --labels checkpoints/labels/split-scale --relabelled checkpoints/labels/ens5-distil
        --json benchmarks/results/relabelled.json

Issue 38's first lever: before correcting the probabilities a cube decision reads, see whether they lean. Every
shard of the label folders holds positions the network met in its own play (``bgai label``), each with the
network's 0-ply probabilities (``ply0``) and a rollout of it by the same network (72 trials truncated at 7 plies,
variance reduction). For each class (contact, crashed, race), for the positions that are gammonish or not (0-ply
chance of a gammon either way above a quarter), and for bands of the 0-ply cubeless equity (the doubling window
among them), the report gives the mean of 0-ply minus rollout for each of the five outputs and for the equity (a
lean), the mean absolute equity difference (the scatter), and the rollouts' own mean standard error (how much of
the scatter is the labels' noise). A reliability table bins the 0-ply chance of winning by tenths and sets the
rollouts' mean beside each bin's.

With ``--relabelled FOLDER`` (the same positions rolled out again by another network: ``bgai label --relabel``) it
reports instead what the second rollouts changed, on the shards both folders hold: by class, the mean absolute and
the mean difference of the equity labels (second minus first) and its 95th percentile, and each labelling network's
0-ply equity error against its own labels.

All values are the player on roll's. Only bgai's own network and its own rollouts take part.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from bgai.core.files import module_command, provenance, write_json
from bgai.core.phase import NAMES, classify
from bgai.core.progress import ticking
from bgai.eval.weights import equity
from bgai.train.labels import load_labels, read_shard, shard_files

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
#: bands of the 0-ply cubeless equity of the player on roll; 0.2-0.8 holds most doubling decisions
BANDS = ((-3.0, -0.6), (-0.6, -0.2), (-0.2, 0.2), (0.2, 0.5), (0.5, 0.8), (0.8, 1.2), (1.2, 3.0))


def compare(ply0: np.ndarray, rollout: np.ndarray, se: np.ndarray) -> dict:
    """Lean (mean of 0-ply minus rollout) of each output and of the equity, scatter, and the labels' noise."""
    if not len(ply0):
        return {"positions": 0}
    diff = ply0 - rollout
    de = equity(ply0) - equity(rollout)
    return {"positions": int(len(ply0)),
            "lean": {name: round(float(diff[:, k].mean()), 5) for k, name in enumerate(OUTPUTS)},
            "equity_lean": round(float(de.mean()), 5),
            "equity_lean_se": round(float(de.std(ddof=1) / np.sqrt(len(de))) if len(de) > 1 else 0.0, 5),
            "equity_mean_abs": round(float(np.abs(de).mean()), 5),
            "label_equity_se": round(float(se.mean()), 5)}


def report(folders: str) -> dict:
    sets = [load_labels(folder.strip()) for folder in folders.split(",") if folder.strip()]
    boards = np.concatenate([s.boards for s in sets])
    ply0 = np.concatenate([s.ply0 for s in sets]).astype(np.float64)
    rollout = np.clip(np.concatenate([s.probabilities for s in sets]).astype(np.float64), 0, 1)
    se = np.concatenate([s.equity_se for s in sets]).astype(np.float64)
    classes = classify(boards)
    gammonish = ply0[:, 1] + ply0[:, 3] > 0.25
    eq0 = equity(ply0)
    out: dict = {"all": compare(ply0, rollout, se), "by_class": {}, "by_band": [], "reliability_win": []}
    for c in np.unique(classes):
        m = classes == c
        out["by_class"][NAMES[c]] = {"all": compare(ply0[m], rollout[m], se[m]),
                                     "gammonish": compare(ply0[m & gammonish], rollout[m & gammonish],
                                                          se[m & gammonish]),
                                     "not gammonish": compare(ply0[m & ~gammonish], rollout[m & ~gammonish],
                                                              se[m & ~gammonish])}
    for lo, hi in BANDS:
        m = (eq0 >= lo) & (eq0 < hi)
        out["by_band"].append({"equity_0ply": [lo, hi], **compare(ply0[m], rollout[m], se[m])})
    for k in range(10):
        m = (ply0[:, 0] >= k / 10) & (ply0[:, 0] < (k + 1) / 10 if k < 9 else ply0[:, 0] <= 1)
        if m.any():
            out["reliability_win"].append({"bin": [k / 10, (k + 1) / 10], "positions": int(m.sum()),
                                           "ply0": round(float(ply0[m, 0].mean()), 4),
                                           "rollout": round(float(rollout[m, 0].mean()), 4)})
    return out


def relabel_report(first: str, second: str) -> dict:
    """What rolling the positions of ``first`` out again (``second``, ``bgai label --relabel``) changed: the shards
    both folders hold, position by position (the same boards, refused otherwise), by class."""
    names = sorted({f.name for f in shard_files(first)} & {f.name for f in shard_files(second)})
    if not names:
        raise SystemExit(f"{first} and {second} hold no shard of the same number")
    parts = []
    for name in names:
        a, b = read_shard(Path(first) / name)[0], read_shard(Path(second) / name)[0]
        if not np.array_equal(a.boards, b.boards):
            raise SystemExit(f"{second}/{name} holds other positions than {first}/{name}")
        parts.append((a, b))
    firsts, seconds = [a for a, _ in parts], [b for _, b in parts]

    def equities(sets: list, field: str) -> np.ndarray:
        return equity(np.concatenate([getattr(s, field) for s in sets]).astype(np.float64))

    before, after = equities(firsts, "probabilities"), equities(seconds, "probabilities")
    ply0_before, ply0_after = equities(firsts, "ply0"), equities(seconds, "ply0")
    classes = classify(np.concatenate([a.boards for a in firsts]))

    def moved(m: np.ndarray) -> dict:
        change = after[m] - before[m]
        return {"positions": int(m.sum()), "equity_mean_abs_change": round(float(np.abs(change).mean()), 5),
                "equity_mean_change": round(float(change.mean()), 5),
                "equity_change_95th_percentile": round(float(np.percentile(np.abs(change), 95)), 5),
                "first_0ply_error": round(float(np.abs(ply0_before[m] - before[m]).mean()), 5),
                "second_0ply_error": round(float(np.abs(ply0_after[m] - after[m]).mean()), 5)}

    return {"shards": names, "all": moved(classes >= 0),
            "by_class": {NAMES[c]: moved(classes == c) for c in np.unique(classes)}}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", default="checkpoints/labels/split-scale,checkpoints/labels/split-scale-plays",
                        help="label folders (bgai label), comma separated")
    parser.add_argument("--json", default=str(ROOT / "benchmarks/results/calibration.json"))
    parser.add_argument("--relabelled", help="a folder of --labels' positions rolled out again (bgai label "
                                             "--relabel): report what that changed instead")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.relabelled:
        figures = {**provenance(module_command("bgai.coach.calibration", argv)),
                   "what": "the same positions' rollout labels by two networks, on the same dice "
                   "where the seeds agree: the second minus the first (equity of the player on roll), and each "
                   "network's 0-ply error against its own labels", "labels": args.labels,
                   "relabelled": args.relabelled, **relabel_report(args.labels, args.relabelled),
                   "seconds": round(time.perf_counter() - started, 1)}
        write_json(args.json, figures)
        for name, f in {"all": figures["all"], **figures["by_class"]}.items():
            print(f"  {name:8s} {f['positions']:7,}  labels moved {f['equity_mean_abs_change']:.4f} (mean "
                  f"{f['equity_mean_change']:+.4f}, 95th percentile {f['equity_change_95th_percentile']:.4f}); 0-ply "
                  f"error {f['first_0ply_error']:.4f} -> {f['second_0ply_error']:.4f}")
        return figures
    figures = {**provenance(module_command("bgai.coach.calibration", argv)),
               "what": "the labelling network's 0-ply outputs minus its own rollouts of the same "
               "positions (player on roll): lean (mean), scatter (mean absolute equity difference) and the "
               "labels' own standard error", "labels": args.labels, **report(args.labels),
               "seconds": round(time.perf_counter() - started, 1)}
    write_json(args.json, figures)
    a = figures["all"]
    print(f"{a['positions']:,} positions: equity lean {a['equity_lean']:+.4f} ± {a['equity_lean_se']:.4f}, "
          f"scatter {a['equity_mean_abs']:.4f} (labels' own standard error {a['label_equity_se']:.4f})")
    for name, c in figures["by_class"].items():
        for kind, f in c.items():
            if f["positions"]:
                leans = " ".join(f"{k} {v:+.4f}" for k, v in f["lean"].items())
                print(f"  {name:8s} {kind:14s} {f['positions']:7,}  {leans}  equity {f['equity_lean']:+.4f}, "
                      f"scatter {f['equity_mean_abs']:.4f}")
    for band in figures["by_band"]:
        if band["positions"]:
            lo, hi = band["equity_0ply"]
            print(f"  0-ply equity {lo:+.1f}..{hi:+.1f} {band['positions']:7,}  equity lean {band['equity_lean']:+.4f}"
                  f" ± {band['equity_lean_se']:.4f}, gammons won {band['lean']['win_gammon']:+.4f}, lost "
                  f"{band['lean']['lose_gammon']:+.4f}")
    return figures


if __name__ == "__main__":
    with ticking("calibration"):  # the time spent, on standard error, while the parts run
        main()
