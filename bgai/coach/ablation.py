"""Ablations of the first lessons: each lever's worth, on the same data and the same training budget.

The shipped run's first stage (``distil`` in training/configs/shipped.toml) trains a fresh model on the 1-ply
lookahead of bgai 0.1's TD network over positions from that network's self-play. This script trains other model
shapes on exactly that stage's data, with the same schedule (epochs, learning rates, batch, held-out share), one
lever changed at a time, and benchmarks each at 0-ply beside the TD network it learned from
(``bgai.coach.strength``: duplicate games against pubeval and GNU Backgammon 0-ply, checker play judged by GNU
Backgammon 2-ply).

    python -m bgai.coach.ablation runs/shipped [--variants v1-256 v2-256 v2-512 ...] [--pubeval 5000] [--gnubg 2000]
                                  [--positions N] [--epochs E] [--json benchmarks/results/ablation.json [--keep]]

``--positions`` and ``--epochs`` shrink the budget (the first N training positions of the stage's data, E epochs),
the same for every variant, when the full stage's budget per variant is more than the machine can spare.

Models are written to RUN_DIR/ablations/VARIANT.pt and reused if there (delete one to train it again).

The same command measures the students of the shipped network (training/configs/student.toml: the shipped
network's 1-ply lookahead on positions from its own self-play), each playing the shipped network head to head:

    python -m bgai.coach.ablation runs/student --config training/configs/student.toml \
        --teacher bgai/data/bgai-default.pt --teacher-name teacher --variants s-512 s-1024 --luck

Paths are relative to the folder it runs in, the repository's root (where ``training/`` and ``checkpoints/`` are).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from bgai.coach.strength import describe, duel, measure
from bgai.core.errors import BgaiError
from bgai.core.files import module_command, provenance, write_json
from bgai.eval.bot import load_bot
from bgai.eval.checkpoint import load_checkpoint, model_from_checkpoint, model_payload, save_checkpoint
from bgai.eval.network import EquityModel
from bgai.train.config import load_config
from bgai.train.learner import Learner, evaluation_error
from bgai.train.lookahead import load_generation

#: name -> (encoder version, hidden layers, nets, what it changes against the row it is played against)
VARIANTS = {
    "v1-256": (1, (256,), ("all",), "lookahead targets: the TD network's own shape and inputs"),
    "v2-256": (2, (256,), ("all",), "+ encoder version 2's inputs"),
    "v2-512": (2, (512,), ("all",), "+ capacity: 512 hidden units"),
    "v2-512-split": (2, (512,), ("contact", "race"), "v2-512 + separate contact and race nets"),
    "v2-512-256": (2, (512, 256), ("all",), "v2-512 + a second hidden layer of 256"),
    "v2-1024-512": (2, (1024, 512), ("all",), "v2-512-256 with both layers twice as wide"),
    # Students of the shipped network (training/configs/student.toml's data): one hidden layer, whose cost is
    # its first layer's, which bgai.eval.kernels.first_layer computes from a few changed inputs a board
    "s-256": (2, (256,), ("all",), "one hidden layer of 256"),
    "s-512": (2, (512,), ("all",), "one hidden layer of 512"),
    "s-1024": (2, (1024,), ("all",), "one hidden layer of 1024"),
    "s-512-64": (2, (512, 64), ("all",), "hidden layers of 512 and 64"),
    "s-1024-64": (2, (1024, 64), ("all",), "hidden layers of 1024 and 64"),
    "s-512-128": (2, (512, 128), ("all",), "hidden layers of 512 and 128"),
    "s-512-64-init": (2, (512, 64), ("all",), "hidden layers of 512 and 64, the first starting as the teacher's"),
    # Depth on the same data (training/configs/depth.toml: the fast network's own 1-ply lookahead), contact and race
    # nets as the fast network's
    "d-512-64": (2, (512, 64), ("contact", "race"), "the fast network's shape: two hidden layers, 512 and 64"),
    "d-256x3": (2, (256, 256, 256), ("contact", "race"), "three hidden layers of 256 (about the same cost)"),
    "d-256x4": (2, (256, 256, 256, 256), ("contact", "race"), "a fourth hidden layer of 256"),
    "d-512-256-128": (2, (512, 256, 128), ("contact", "race"), "three hidden layers, 512, 256 and 128"),
    # The teacher itself learning the same data, as it is or grown one layer deeper (EquityModel.grown: the same
    # function to start from)
    "g-512-64": (2, (512, 64), ("contact", "race"), "the teacher, fine-tuned on its own 1-ply lookahead"),
    "g-512-64-64": (2, (512, 64, 64), ("contact", "race"), "the teacher grown a hidden layer of 64 deeper, then "
                                                           "fine-tuned the same way"),
}
#: variants that start as the teacher grown to their shape
GROWN_FROM_TEACHER = {"g-512-64", "g-512-64-64"}
#: variants whose first hidden layer starts as the teacher's (the same width and inputs)
FIRST_LAYER_FROM_TEACHER = {"s-512-64-init"}
#: the row each variant is played against head to head: the one it changes one lever of
BASE = {"v1-256": "td-v1", "v2-256": "v1-256", "v2-512": "v2-256", "v2-512-split": "v2-512", "v2-512-256": "v2-512",
        "v2-1024-512": "v2-512-256", "s-256": "teacher", "s-512": "teacher", "s-1024": "teacher",
        "s-512-64": "teacher", "s-1024-64": "teacher", "s-512-128": "teacher",
        "s-512-64-init": "teacher", "d-512-64": "teacher", "d-256x3": "d-512-64", "d-256x4": "d-256x3",
        "d-512-256-128": "d-512-64", "g-512-64": "teacher", "g-512-64-64": "teacher"}


def train_variant(name: str, boards, targets, val_boards, val_targets, stage, seed: int,
                  teacher: str | None = None) -> tuple[EquityModel, dict]:
    encoder, hidden, nets, _ = VARIANTS[name]
    torch.manual_seed(seed)
    model = EquityModel.create(hidden, nets, encoder)
    if name in GROWN_FROM_TEACHER:
        if teacher is None:
            raise BgaiError(f"variant {name} starts as the teacher: give --teacher")
        model = model_from_checkpoint(load_checkpoint(teacher)).grown(hidden, seed=seed)
        if (model.phases, model.encoder_version) != (nets, encoder):
            raise BgaiError(f"variant {name} grows the teacher, whose nets and inputs must be {nets}, encoder "
                            f"{encoder}; it has {model.describe()}")
    if name in FIRST_LAYER_FROM_TEACHER:
        if teacher is None:
            raise BgaiError(f"variant {name} starts its first layer as the teacher's: give --teacher")
        first = model_from_checkpoint(load_checkpoint(teacher)).state_dict()
        with torch.no_grad():
            for key in ("weight", "bias"):
                model.state_dict()[f"nets.all.body.0.{key}"].copy_(first[f"nets.all.body.0.{key}"])
    learner = Learner(model, stage.lr, stage.batch_size, stage.epochs, loss=stage.loss)
    started = time.perf_counter()
    learner.fit(boards, targets, np.random.default_rng(seed), lr=(stage.lr, stage.lr_end), progress=True)
    return model, {"seconds": time.perf_counter() - started, **evaluation_error(model, val_boards, val_targets)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="the shipped run's folder (its distil stage must be done)")
    parser.add_argument("--config", default=str(Path("training") / "configs" / "shipped.toml"))
    parser.add_argument("--stage", default="distil")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--teacher", default=str(Path("checkpoints") / "td-v1" / "checkpoint.pt"),
                        help="benchmarked beside the variants")
    parser.add_argument("--teacher-name", default="td-v1", help="the teacher's row (variants whose base is "
                        "'teacher' play it head to head)")
    parser.add_argument("--luck", action="store_true", help="head to head also luck-adjusted (several times "
                        "less variance)")
    parser.add_argument("--pubeval", type=int, default=5000)
    parser.add_argument("--gnubg", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2024, help="dice of the benchmarks")
    parser.add_argument("--positions", type=int, default=0,
                        help="train every variant on the first N training positions only (default: all)")
    parser.add_argument("--epochs", type=int, default=0, help="epochs for every variant (default: the stage's)")
    parser.add_argument("--h2h", type=int, default=4000,
                        help="dice sequences of each variant against the row it changes, head to head (0: none)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--title", help="the heading of the results' table in a training report (python -m "
                                        "bgai.coach.report --ablation; --keep keeps the file's own)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the rows already in --json's file (the teacher's, and the variants not named by "
                             "--variants) instead of measuring them again: add or redo rows one at a time")
    args = parser.parse_args(argv)
    command = module_command("bgai.coach.ablation", argv)
    kept = json.loads(Path(args.json).read_text()) if args.keep and args.json and Path(args.json).exists() else None

    config = load_config(args.config)
    stage = next(s for s in config.stages if s.name == args.stage)
    boards, targets = load_generation(args.run_dir / "data" / f"{stage.name}-000")
    held = max(1, int(len(boards) * stage.validation))  # the same split as the run's
    val_boards, val_targets, boards, targets = boards[:held], targets[:held], boards[held:], targets[held:]
    if args.positions:
        boards, targets = boards[:args.positions], targets[:args.positions]
    if args.epochs:
        stage = stage.model_copy(update={"epochs": args.epochs})
    torch.set_num_threads(1)
    before = {row["variant"]: row for row in kept["results"]} if kept else {}
    if kept and (kept["positions"], kept["epochs"]) != (len(boards), stage.epochs):
        raise SystemExit(f"{args.json} holds rows of another budget ({kept['positions']} positions x "
                         f"{kept['epochs']} epochs); this one is {len(boards)} x {stage.epochs}")
    teacher = args.teacher_name
    change = "TD(λ) self-play alone (the teacher)" if teacher == "td-v1" else f"the teacher ({args.teacher})"
    rows = [before.get(teacher) or {"variant": teacher, "change": change,
                                    **measure(args.teacher, {"pubeval": args.pubeval, "gnubg": args.gnubg},
                                              args.seed)}]
    print(f"{teacher}: {describe(rows[0])}", flush=True)
    for name in VARIANTS:
        if name not in args.variants:
            if name in before:
                rows.append(before[name])
            continue
        budget = f"-{len(boards)}x{stage.epochs}" if args.positions or args.epochs else ""
        path = args.run_dir / "ablations" / f"{name}{budget}.pt"
        if path.exists():
            fit = load_checkpoint(path).get("fit")
        else:
            model, fit = train_variant(name, boards, targets, val_boards, val_targets, stage, config.seed,
                                       args.teacher)
            save_checkpoint(path, {**model_payload(model), "fit": fit})
        row = {"variant": name, "change": VARIANTS[name][3], "fit": fit,
               **measure(str(path), {"pubeval": args.pubeval, "gnubg": args.gnubg}, args.seed)}
        if args.h2h:
            versus = teacher if BASE[name] == "teacher" else BASE[name]
            base = next((r["checkpoint"] for r in rows if r["variant"] == versus), None)
            if base is None:
                raise SystemExit(f"{name} plays {versus} head to head: name that variant too (or --keep its row)")
            row["h2h"] = {"versus": versus, **duel(load_bot(path), load_bot(base), args.h2h, args.seed,
                                                   luck=args.luck)}
        rows.append(row)
        h2h = f"  v {row['h2h']['versus']} {row['h2h']['ppg']:+.3f} ± {row['h2h']['ppg_se']:.3f}" if args.h2h else ""
        if args.h2h and args.luck:
            h2h += (f" (luck-adjusted {row['h2h']['ppg_luck_adjusted']:+.3f} ± "
                    f"{row['h2h']['ppg_luck_adjusted_se']:.3f})")
        print(f"{name}: {describe(row)}{h2h}", flush=True)
    if args.json:
        commands = (kept.get("commands") or [kept["command"]]) + [command] if kept else [command]
        # (the date, commit and machine of this command's rows: the last that wrote the file)
        record = {**provenance(commands[0]), "commands": commands, "positions": len(boards),
                  "validation_positions": held, "epochs": stage.epochs, "results": rows}
        title = args.title or (kept or {}).get("title")
        if title:
            record["title"] = title
        write_json(args.json, record, indent=2)


if __name__ == "__main__":
    main()
