"""Turn a finished training run into a shipped bot and its training report.

    python training/report.py runs/shipped [--out checkpoints/shipped] [--pubeval-games 5000] [--ship]

Writes into ``--out``: the full training checkpoint (resumable) and its TensorBoard logs, ``learning_curve.png`` (points per game against
pubeval over games trained, read from the run's TensorBoard logs), ``report.json`` and ``REPORT.md`` with the
config, games, hours and final benchmarks (duplicate games against random, the heuristic player and pubeval,
and, when gnubg-nn is installed, equity and checker-play accuracy judged by GNU Backgammon 0-ply).
With ``--ship`` the playing part of the checkpoint also becomes the network bgai loads by default.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def learning_curve(run_dir: Path, image: Path) -> list[tuple[int, float]]:
    """Plot eval/ppg_vs_pubeval (and v heuristic) from the TensorBoard logs; return the pubeval points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir / "tensorboard"), size_guidance={"scalars": 0})
    events.Reload()
    fig, ax = plt.subplots(figsize=(7, 4))
    curves = {}
    for tag, label in (("eval/ppg_vs_pubeval", "v pubeval"), ("eval/ppg_vs_heuristic", "v heuristic")):
        if tag in events.Tags()["scalars"]:
            points = [(e.step, e.value) for e in events.Scalars(tag)]
            curves[tag] = points
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, label=label)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("self-play games trained")
    ax.set_ylabel("points per game (duplicate, 0-ply)")
    ax.set_title(f"bgai TD(λ) learning curve: {run_dir.name}")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(image, dpi=120)
    plt.close(fig)
    return curves.get("eval/ppg_vs_pubeval", [])


def main(argv=None) -> None:
    from bgai.bot import SHIPPED, load_bot
    from bgai.checkpoint import export_for_play, load_checkpoint
    from bgai.game import play_duplicate
    from bgai.players import make_player

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "checkpoints" / "shipped")
    parser.add_argument("--pubeval-games", type=int, default=5000, help="dice sequences v pubeval (x2 games)")
    parser.add_argument("--other-games", type=int, default=1000, help="dice sequences v random and heuristic")
    parser.add_argument("--gnubg-games", type=int, default=100, help="gnubg self-play games for accuracy")
    parser.add_argument("--ship", action="store_true", help="make this the network bgai loads by default")
    args = parser.parse_args(argv)

    source = args.run_dir / "checkpoint.pt"
    state = load_checkpoint(source)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.out.resolve() != args.run_dir.resolve():
        shutil.copyfile(source, args.out / "checkpoint.pt")
        shutil.copytree(args.run_dir / "tensorboard", args.out / "tensorboard", dirs_exist_ok=True)
    curve = learning_curve(args.run_dir, args.out / "learning_curve.png")
    if args.ship:
        export_for_play(source, SHIPPED)

    bot = load_bot(source)
    results = {}
    for name, sequences in (("random", args.other_games), ("heuristic", args.other_games),
                            ("pubeval", args.pubeval_games)):
        s = play_duplicate(bot, make_player(name), sequences, seed=2024, batch=2048, progress=True).summary()
        results[name] = s
    try:
        from accuracy import measure

        accuracy = measure(str(source), args.gnubg_games, seed=7)
    except Exception as error:  # gnubg-nn missing: the report says so
        accuracy = {"skipped": f"{type(error).__name__}: {error}"}

    report = {
        "run_dir": str(args.run_dir),
        "command": "python training/report.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "config": state["config"],
        "games": state["games"],
        "hours": state["seconds"] / 3600,
        "games_per_s": state["games"] / state["seconds"],
        "hidden": state["hidden"],
        "encoder_version": state["encoder_version"],
        "learning_curve_ppg_vs_pubeval": curve,
        "benchmarks": results,
        "gnubg_accuracy": accuracy,
    }
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "REPORT.md").write_text(render(report))
    print(render(report))


def render(r: dict) -> str:
    lines = [
        f"# Training report: {Path(r['run_dir']).name}",
        "",
        f"- Games of self-play: {r['games']:,} in {r['hours']:.2f} hours of training on 2 cores "
        f"({r['games_per_s']:.0f} games/s, learning included; benchmarks not counted).",
        f"- Network: encoder version {r['encoder_version']}, hidden layers {r['hidden']}, five coherent outputs.",
        "- Config (`bgai train --config training/configs/"
        f"{r['config']['run_name']}.toml`):",
        "",
        "```toml",
        *[f"{k} = {json.dumps(v)}" for k, v in r["config"].items()],
        "```",
        "",
        "## Learning curve",
        "",
        "![points per game against pubeval over games trained](learning_curve.png)",
        "",
        "## Final benchmarks (0-ply, duplicate games: every dice sequence played twice, seats swapped)",
        "",
        "| opponent | games | points/game | ± s.e. | wins | gammons | backgammons |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in r["benchmarks"].items():
        lines.append(f"| {name} | {s['games']:,} | {s['ppg']:+.3f} | {s['ppg_se']:.3f} | {100 * s['win_rate']:.2f}% | "
                     f"{100 * s['gammon_rate']:.1f}% | {100 * s['backgammon_rate']:.1f}% |")
    a = r["gnubg_accuracy"]
    lines += ["", "## Judged by GNU Backgammon 0-ply", ""]
    if "skipped" in a:
        lines.append(f"Not measured: {a['skipped']}")
    else:
        lines += [
            f"On {a['positions']:,} positions from {a['gnubg_games']} games gnubg played against itself "
            "(`python benchmarks/accuracy.py`):",
            "",
            f"- equity, mean absolute difference from gnubg 0-ply: {a['equity_mean_abs_diff']:.4f}",
            f"- checker-play error: {1000 * a['checker_error_per_move']:.1f} millipoints per move, "
            f"{1000 * a['checker_error_per_unforced_move']:.1f} per unforced move; same play as gnubg on "
            f"{100 * a['same_play_as_gnubg']:.1f}% of unforced moves",
        ]
    lines += ["", f"Made by `{r['command']}`.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
