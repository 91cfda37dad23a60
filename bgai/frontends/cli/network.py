"""The commands that make and export networks: ``bgai label``, ``train`` and ``export``."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from typing import TYPE_CHECKING

from bgai.core.errors import BgaiError

if TYPE_CHECKING:
    pass


LABEL_OPTIONS = ("positions", "plays", "trials", "truncate", "batch", "seed", "epsilon", "race", "disagreement",
                 "candidates", "lockstep", "relabel")


def _qualified(pairs: list[str] | None) -> dict:
    """``--set STAGE.KEY=VALUE`` (or ``KEY=VALUE`` for a run setting) as ``{target: value}``; a value is read as TOML
    (``1e-4``, ``true``, ``"text"``), else taken as a string."""
    import tomllib

    out = {}
    for pair in pairs or []:
        target, eq, raw = pair.partition("=")
        if not eq or not target.strip():
            raise BgaiError(f"--set takes STAGE.KEY=VALUE (or KEY=VALUE for a run setting), got {pair!r}")
        try:
            value = tomllib.loads(f"v = {raw.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw.strip()
        out[target.strip()] = value
    return out


def _train_settings() -> dict:
    """The run and stage settings ``bgai train`` takes on the command line, by name (first definition wins)."""
    from bgai.train.config import STAGES, RunConfig, Settings

    settings: dict = {}
    classes: list[type[Settings]] = [RunConfig, *STAGES.values()]
    for cls in classes:
        for name, f in cls.model_fields.items():
            if name not in ("stages", "name", "method"):
                settings.setdefault(name, f)
    return settings


def _label(args: argparse.Namespace) -> None:
    from bgai.train.labels import LabelSettings, label_shard, parse_shards, write_manifest

    if args.status:
        manifest = write_manifest(args.out)
        phases = ", ".join(f"{k} {v:,}" for k, v in sorted(manifest["phases"].items()))
        print(f"{args.out}: {manifest['shards']} shards, {manifest['positions']:,} labelled positions ({phases})")
        return
    settings = LabelSettings(**{name: getattr(args, name) for name in LABEL_OPTIONS})
    shards: range | list[int] = parse_shards(args.shards or "0")
    if settings.relabel:  # the source's shards (those of --shards among them)
        if os.path.realpath(settings.relabel) == os.path.realpath(args.out):
            raise BgaiError("--relabel and --out must be different folders: the labels rolled out again are a new set")
        from bgai.train.labels import shard_files

        there = [int(f.stem.split("-")[1]) for f in shard_files(settings.relabel)]
        shards = [n for n in there if args.shards is None or n in shards]
        if not shards:
            raise BgaiError(f"{settings.relabel}: no label shards (shard-NNNNN.npz) to roll out again"
                            + (f" among --shards {args.shards}" if args.shards else ""))
    from bgai.eval.bot import load_bot

    bot = load_bot(args.checkpoint)
    for shard in shards:
        path = label_shard(bot, args.out, shard, settings, progress=not args.quiet, jobs=args.jobs)
        print(f"{path}", flush=True)


def add_label(commands, label_settings: bool = True) -> None:
    """``bgai label``: its arguments."""
    label = commands.add_parser("label", help="make rollout-labelled training positions, in resumable shards",
                                description="Sample positions from the bot's own play and label each by a rollout "
                                            "(bgai.train.labels): shards of --positions each, written to --out as they "
                                            "finish; the same command resumes a stopped run where it stood.")
    label.add_argument("--out", required=True, help="folder of the shards (shard-NNNNN.npz, MANIFEST.json)")
    label.add_argument("--shards", help="shard numbers: N, A-B or A- (from A on until stopped; default 0, or with "
                                        "--relabel every shard of that folder)")
    if label_settings:
        from bgai.train.labels import LabelSettings

        defaults = LabelSettings()
        for name in LABEL_OPTIONS:
            label.add_argument(f"--{name}", type=type(getattr(defaults, name)), default=getattr(defaults, name),
                               help=f"{LabelSettings.help(name)} (default {getattr(defaults, name) or 'none'})"
                               if name == "relabel" else
                               f"{LabelSettings.help(name)} (default {getattr(defaults, name)})")
    label.add_argument("--jobs", type=int, default=0, help="threads sharing the rollouts (default 0: one per core)")
    label.add_argument("--checkpoint", help="network that plays and labels (default: the network shipped for 0-ply)")
    label.add_argument("--status", action="store_true", help="print what the folder holds and stop")
    label.add_argument("--quiet", action="store_true", help="no progress bar")
    label.set_defaults(run=_label)


def _resume_command(args: argparse.Namespace) -> str:
    """The command that goes on with a stopped ``bgai train``: its own, with ``--resume``."""
    words = shlex.split(getattr(args, "command_line", "") or "bgai train")
    return shlex.join(words if "--resume" in words else [*words, "--resume"])


def _train(args: argparse.Namespace) -> None:
    from bgai.train.config import load_config
    from bgai.train.run import Stopped, run

    overrides = {name: getattr(args, name) for name in _train_settings()}
    config = load_config(args.config, overrides, _qualified(args.set))
    run_dir = args.run_dir or f"runs/{config.run_name}"
    try:
        summary = run(config, run_dir, resume=args.resume, progress=not args.quiet)
    except Stopped as stop:
        print(f"bgai train: {stop}; go on with: {_resume_command(args)}", file=sys.stderr)
        raise SystemExit(128 + stop.signum) from None  # as a shell reports a program a signal stopped
    final = summary["final"]
    if args.json:
        print(json.dumps(summary))
        return
    print(f"trained stages {', '.join(summary['stages'])}: {summary['games']:,} self-play games in "
          f"{summary['hours']:.2f} h")
    for name, figures in final.items():
        if not figures["games"]:  # final_bench_games = 0
            continue
        print(f"  v {name:<9} {figures['ppg']:+.3f} ± {figures['ppg_se']:.3f} points/game (± the standard error), "
              f"{100 * figures['win_rate']:.1f}% wins ({figures['games']} duplicate games)")
    checkpoint = f"{run_dir}/checkpoint.pt"
    print(f"the run is in {run_dir}/: checkpoint.pt (the network), summary.json (these figures), tensorboard/")
    print("next:")
    for command, what in ((f"tensorboard --logdir {run_dir}/tensorboard", "the training curves"),
                          (f"bgai play --checkpoint {checkpoint}", "play it in the terminal"),
                          (f"bgai bench --checkpoint {checkpoint} --opponent pubeval --games 2000",
                           "measure it against pubeval"),
                          (f"bgai train --config CONFIG --run-dir {run_dir} --resume", "train it on (a longer stage)")):
        print(f"  {command:<72} # {what}")


def add_train(commands, train_settings: bool = True) -> None:
    """``bgai train``: its arguments."""
    train = commands.add_parser("train", help="train a model: TD(λ) self-play and lookahead generations",
                                description="Train a model through the stages of a run config (see "
                                            "bgai.train.run and training/configs/). The settings below override "
                                            "the config's: run settings, and a stage setting of the one stage that has "
                                            "it; a setting several stages have is refused: name the stage with "
                                            "--set STAGE.KEY=VALUE.")
    train.add_argument("--config", help="TOML run config (see training/configs/)")
    train.add_argument("--run-dir", help="folder of the checkpoint and TensorBoard logs (default runs/RUN_NAME)")
    train.add_argument("--resume", action="store_true", help="continue the run in --run-dir from its checkpoint")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    train.add_argument("--json", action="store_true", help="print the run's summary as JSON (summary.json) instead")
    train.add_argument("--set", action="append", metavar="STAGE.KEY=VALUE",
                       help="a setting of one stage by its name (e.g. --set ply1.lr=1e-4), or KEY=VALUE for a run "
                            "setting; repeat for several")
    for name, f in (_train_settings() if train_settings else {}).items():
        # --ray alone: Ray on this machine (the cluster `ray start` made here, else a new local instance)
        bare: dict = {"nargs": "?", "const": "local", "metavar": "ADDRESS"} if name == "ray" else {}
        kind = str if isinstance(f.default, bool) else type(f.default)  # true or false, read by the config's rules
        train.add_argument(f"--{name.replace('_', '-')}", dest=name, type=kind, default=None,
                           help=f"{f.description} (default {f.default!r})", **bare)
    train.set_defaults(run=_train)


def _export(args: argparse.Namespace) -> None:
    checkpoints = args.checkpoint or []
    for path in checkpoints:
        if not os.path.isfile(path):
            raise BgaiError(f"no checkpoint file {path}")
    if (args.onnx is None) == (args.network is None):
        raise BgaiError("name one file to write: --onnx FILE (an ONNX file) or --network FILE (a bgai checkpoint)")
    if args.network is not None:
        _export_network(args, checkpoints)
        return
    if len(checkpoints) > 1 or args.average:
        raise BgaiError("--onnx exports one network: average several (or take a run's moving average) with "
                        "--network first, then export that file")
    from bgai.eval.export import export_onnx

    report = export_onnx(args.onnx, checkpoints[0] if checkpoints else None, check=args.check)
    if args.json:
        print(json.dumps(report))
        return
    inputs = " and ".join(f"'{name}'" for name in report["inputs"])
    print(f"wrote {report['path']} ({report['bytes'] / 1e6:.1f} MB): {report['network']}; inputs {inputs} "
          f"(bgai.onnx_feeds), output 'probabilities' (N, 5)")
    if args.check:
        print(f"onnxruntime agrees with bgai within {report['max_difference']:.1e} on {report['positions']:,} "
              f"positions of games (the largest difference of a probability)")
        print(f"boards a second, one thread, from the boards: onnxruntime {report['onnxruntime_boards_per_s']:,.0f} "
              f"in one batch, {report['onnxruntime_move_boards_per_s']:,.0f} in batches of 20; bgai "
              f"{report['bgai_boards_per_s']:,.0f} and {report['bgai_move_boards_per_s']:,.0f}")


def _export_network(args: argparse.Namespace, checkpoints: list[str]) -> None:
    from bgai.eval.checkpoint import export_network, network_shape

    if not checkpoints:
        raise BgaiError("--network needs the --checkpoint (or several, to average) it is made from")
    written = export_network(checkpoints, args.network, average=args.average)
    made = ("the moving average of its weights" if args.average else "its network") if len(checkpoints) == 1 else \
        f"the mean of {len(checkpoints)} networks' " + ("moving averages" if args.average else "weights")
    report = {"path": args.network, "checkpoints": checkpoints, "average": args.average,
              "hidden": list(written["hidden"]), "phases": list(written["phases"]),
              "encoder_version": written["encoder_version"], "games": written.get("games")}
    if args.json:
        print(json.dumps(report))
        return
    print(f"wrote {args.network}: {made} ({network_shape(written)})")


def add_export(commands) -> None:
    """``bgai export``: its arguments."""
    export = commands.add_parser("export", help="write a network as one ONNX file, for other runtimes, or as a "
                                                "playing checkpoint (one, a mean of several, a moving average)",
                                 description="Write the network bgai plays 0-ply with as one ONNX file "
                                             "(bgai.eval.export; inputs: bgai.onnx_feeds(boards)), after "
                                             "onnxruntime has evaluated it on positions of games within 1e-5 of "
                                             "bgai (needs the env extra); or, with --network, a checkpoint's "
                                             "network as a playing checkpoint for bgai itself "
                                             "(bgai.eval.checkpoint.export_network): the mean of the weights of "
                                             "several, or the moving average a run keeps beside its weights.")
    export.add_argument("--onnx", metavar="FILE", help="the ONNX file to write")
    export.add_argument("--network", metavar="FILE",
                        help="the bgai checkpoint to write instead: the network alone, no training state")
    export.add_argument("--checkpoint", action="append",
                        help="network to export: with --onnx a checkpoint or network file (default: the one "
                             "load_bot() plays 0-ply with); with --network a bgai checkpoint (.pt), required, "
                             "repeated to write the mean of several networks' weights (one shape)")
    export.add_argument("--average", action="store_true",
                        help="with --network: the run checkpoint's moving average of its weights (a TD stage with "
                             "average_half_life) instead of its weights")
    export.add_argument("--check", type=int, default=1000, metavar="N",
                        help="with --onnx: positions onnxruntime is checked on before the file is written (default "
                             "1000; 0: no check)")
    export.add_argument("--json", action="store_true", help="print what was written and measured as JSON")
    export.set_defaults(run=_export)
