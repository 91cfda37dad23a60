"""The games a second of each launch of a TD training run, read from its TensorBoard files: how a setting of the
launch (its workers, its learner's threads) changed the run's own speed, on the run's real work.

Each launch of ``bgai train`` (a start or a ``--resume``) writes its own events file under the run's
``tensorboard/``, with its config (the ``config`` text: ``workers``, ``threads``, ``learner_precision``) and each
round's ``perf/games_per_s``. For each launch, between ``--since`` and ``--until`` (UTC clock times, ``HH:MM``, of
the day of the launch) where given, and after its first ``--skip`` rounds (the pool's start): its settings, its span,
the games played and their rate (games over wall time, benchmarks against pubeval included; and the median of its
rounds' rates, which leaves them out).

    python benchmarks/run_speed.py checkpoints/deep [--since 14:00] [--until 15:00] [--json FILE]

Launches compared this way share the machine with whatever else ran then: compare windows in which nothing else
did (the results file says which were chosen, and why, in ``--note``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
from pathlib import Path

from bgai.core.files import provenance, write_json


def launches(run_dir: Path, since: str | None, until: str | None, skip: int) -> list[dict]:
    """Each events file's settings and speed within the window, in the order they were written."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = []
    for path in sorted((run_dir / "tensorboard").glob("events.out.tfevents.*")):
        events = EventAccumulator(str(path), size_guidance={"scalars": 0, "tensors": 0})
        events.Reload()
        speeds = [tag for tag in events.Tags()["scalars"] if tag.endswith("/perf/games_per_s")]
        if not speeds:
            continue
        config = _config(events)
        rounds = sorted((s for tag in speeds for s in events.Scalars(tag)), key=lambda s: s.wall_time)[skip:]
        rounds = [s for s in rounds if _within(s.wall_time, since, until)]
        if len(rounds) < 2:
            continue
        first, last = rounds[0], rounds[-1]
        out.append({
            "file": path.name,
            "workers": config.get("workers"), "threads": config.get("threads"),
            "learner_precision": config.get("learner_precision"),
            "stages": sorted({tag.split("/")[0] for tag in speeds}),
            "from": _clock(first.wall_time), "to": _clock(last.wall_time), "rounds": len(rounds),
            "games": last.step - first.step,
            "games_per_s": (last.step - first.step) / (last.wall_time - first.wall_time),
            "median_round_games_per_s": statistics.median(s.value for s in rounds),
        })
    return out


def _config(events) -> dict:
    """The launch's settings, as the run logged them (``bgai.train.state``: each launch its ``launch`` text, a run's
    first its whole ``config`` too); empty where neither is there (launches before the runs logged them)."""
    for tag in ("launch/text_summary", "config/text_summary"):
        try:
            return json.loads(events.Tensors(tag)[0].tensor_proto.string_val[0].decode())
        except (KeyError, IndexError):
            continue
    return {}


def _clock(wall_time: float) -> str:
    return datetime.datetime.fromtimestamp(wall_time, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")


def _within(wall_time: float, since: str | None, until: str | None) -> bool:
    clock = datetime.datetime.fromtimestamp(wall_time, datetime.UTC).strftime("%H:%M")
    return (since is None or clock >= since) and (until is None or clock < until)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="the run's folder (its tensorboard/ inside)")
    parser.add_argument("--since", help="only rounds from this UTC clock time on (HH:MM)")
    parser.add_argument("--until", help="only rounds before this UTC clock time (HH:MM)")
    parser.add_argument("--skip", type=int, default=3, help="first rounds of each launch left out (default 3)")
    parser.add_argument("--note", default="", help="what the windows were and why, for the results file")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)
    found = launches(args.run_dir, args.since, args.until, args.skip)
    for each in found:
        print(f"{each['from']} to {each['to'][11:]}  workers {each['workers']}, threads {each['threads']}, "
              f"{each['learner_precision']}: {each['games']:,} games, {each['games_per_s']:,.1f} games/s "
              f"(median round {each['median_round_games_per_s']:,.1f})")
    if args.json:
        write_json(args.json, {**provenance(), "run_dir": str(args.run_dir), "since": args.since, "until": args.until,
                               "skip": args.skip, "note": args.note, "launches": found}, indent=2)


if __name__ == "__main__":
    main()
