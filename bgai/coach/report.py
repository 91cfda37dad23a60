"""Turn a training run into a shipped bot and its training report.

    python -m bgai.coach.report runs/shipped [--out checkpoints/shipped] [--baseline checkpoints/td-v1/checkpoint.pt]
                                [--pubeval 5000] [--gnubg 2000] [--ablation benchmarks/results/ablation.json]
                                [--plies benchmarks/results/plies.json] [--ship]

Writes into ``--out``: the run's full checkpoint (resumable) and TensorBoard logs, ``learning_curve.png`` (points
per game against pubeval and the heuristic player over the hours of training, stage by stage, from the run's
benchmark history), ``report.json`` and ``REPORT.md``: the config and its stages, what each stage cost, and the
final benchmarks of the network and of the baseline side by side on the same dice (``bgai.coach.strength``:
duplicate games against pubeval and GNU Backgammon 0-ply, checker play and cube decisions judged by GNU Backgammon
2-ply), with the ablation table and the lookahead results when their JSON files are given. With ``--ship`` the
playing part of the checkpoint becomes the network bgai loads by default.

Paths are relative to the folder it runs in, the repository's root (where ``checkpoints/`` is).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from bgai.coach.cube_reference import KINDS
from bgai.core.files import module_command, write_atomically, write_json


def learning_curve(history: list[dict], image: Path, title: str) -> None:
    """Points per game over hours of training, a marker colour per stage."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4))
    for name, style in (("pubeval", "-"), ("heuristic", "--")):
        hours = [h["seconds"] / 3600 for h in history]
        ax.plot(hours, [h[name]["ppg"] for h in history], style, color="grey", linewidth=0.8)
        for stage in dict.fromkeys(h.get("stage", "td") for h in history):
            points = [h for h in history if h.get("stage", "td") == stage]
            ax.plot([h["seconds"] / 3600 for h in points], [h[name]["ppg"] for h in points], "o", markersize=4,
                    label=f"{stage}: v {name}")
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("hours of training (2 cores)")
    ax.set_ylabel("points per game (duplicate, 0-ply)")
    ax.set_title(title)
    ax.legend(fontsize=8, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(image, dpi=120)
    plt.close(fig)


def stage_costs(history: list[dict], stages: list[dict]) -> list[dict]:
    """Per stage: hours of training (from the benchmark history's clock) and its last benchmark."""
    out, before = [], 0.0
    for stage in stages:
        points = [h for h in history if h.get("stage", "td") == stage["name"]]
        if not points:
            out.append({"name": stage["name"], "method": stage["method"], "done": False})
            continue
        last = points[-1]
        generations = stage.get("generations") if stage["method"] == "lookahead" else None
        done_generations = min(generations, len(points) * stage.get("bench_every", 1)) if generations else None
        out.append({"name": stage["name"], "method": stage["method"], "done": True,
                    "generations": generations, "generations_done": done_generations,
                    "hours": (last["seconds"] - before) / 3600, "ppg_vs_pubeval": last["pubeval"]["ppg"],
                    "ppg_vs_pubeval_se": last["pubeval"]["ppg_se"], "games": last["pubeval"]["games"]})
        before = last["seconds"]
    return out


def main(argv=None) -> None:
    from bgai.coach.strength import describe, measure
    from bgai.eval.bot import SHIPPED, export_shipped
    from bgai.eval.checkpoint import export_for_play, load_checkpoint

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, nargs="?", help="the training run (not with --render-only)")
    parser.add_argument("--out", type=Path, default=Path("checkpoints") / "shipped")
    parser.add_argument("--baseline", default=str(Path("checkpoints") / "td-v1" / "checkpoint.pt"))
    parser.add_argument("--pubeval", type=int, default=5000, help="dice sequences v pubeval (x2 games)")
    parser.add_argument("--gnubg", type=int, default=2000, help="dice sequences v gnubg 0-ply (x2 games)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--ablation", type=Path, nargs="*", default=[],
                        help="bgai.coach.ablation's JSONs, a table each (with --render-only: in place of the "
                             "report's)")
    parser.add_argument("--levers", type=Path, nargs="*", default=[],
                        help="JSONs of levers tried on another network, one run each (benchmarks/results/"
                             "issue20_generations.json), for a table of each")
    parser.add_argument("--render-only", action="store_true",
                        help="rewrite --out's REPORT.md from its report.json (adding --levers) without measuring")
    parser.add_argument("--plies", type=Path, help="bgai.coach.ply_strength results (JSON files) to tabulate",
                        nargs="*", default=[])
    parser.add_argument("--generations", type=Path, nargs="*", default=[],
                        help="bgai.coach.strength results (JSON files) of the run's networks by generation, for "
                             "the table of what each generation bought; the run's generations/ are copied to --out")
    parser.add_argument("--ship", action="store_true", help="make this the network bgai loads by default")
    parser.add_argument("--note", action="append", default=[],
                        help="a paragraph for the report (what the figures do not say); may be repeated")
    args = parser.parse_args(argv)
    levers = [_table(path) for path in args.levers] or None
    ablations = [_table(path) for path in args.ablation] or None
    if args.render_only:
        report = json.loads((args.out / "report.json").read_text())
        report["levers"] = levers or report.get("levers")
        report["ablation"] = ablations or report.get("ablation")
        _write(report, args.out)
        return
    if args.run_dir is None:
        parser.error("a run folder is needed unless --render-only")

    source = args.run_dir / "checkpoint.pt"
    state = load_checkpoint(source)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.out.resolve() != args.run_dir.resolve():
        shutil.copyfile(source, args.out / "checkpoint.pt")
        shutil.copytree(args.run_dir / "tensorboard", args.out / "tensorboard", dirs_exist_ok=True)
        if args.generations and (args.run_dir / "generations").is_dir():
            shutil.copytree(args.run_dir / "generations", args.out / "generations", dirs_exist_ok=True)
    learning_curve(state["history"], args.out / "learning_curve.png", f"bgai learning curve: {args.run_dir.name}")
    if args.ship:
        export_for_play(source, SHIPPED)
        export_shipped()  # the same network for play, read without torch (bgai/data/bgai-default.npz)

    opponents = {"pubeval": args.pubeval, "gnubg": args.gnubg}
    results = {}
    root = Path.cwd().resolve()
    for name, checkpoint in (("network", source), ("baseline", Path(args.baseline))):
        results[name] = measure(str(checkpoint), opponents, args.seed, progress=True)
        # shown relative to the repository, where it is in it
        where = checkpoint.resolve()
        results[name]["checkpoint"] = str(where.relative_to(root) if where.is_relative_to(root) else where)
        print(f"{name}: {describe(results[name])}", flush=True)
    report = {
        "run_dir": str(args.run_dir),
        "command": module_command("bgai.coach.report", argv),
        "config": state["config"],
        "games": state["games"],
        "hours": state["seconds"] / 3600,
        "model": results["network"]["model"],
        "stages": stage_costs(state["history"], state["config"]["stages"]),
        "benchmarks": results,
        "ablation": ablations,
        "plies": [json.loads(p.read_text()) for p in args.plies],
        "generations": [json.loads(p.read_text()) for p in args.generations],
        "notes": args.note,
        "levers": levers,
    }
    _write(report, args.out)


def _table(path: Path) -> dict:
    """A table's results file (an ablation's, or a lever table's), with the path it was read from."""
    return {**json.loads(path.read_text()), "path": str(path)}


def _write(report: dict, out: Path) -> None:
    text = render(report)
    write_json(out / "report.json", report, indent=2)
    write_atomically(out / "REPORT.md", lambda f: f.write(text.encode()))
    print(text)


def _fmt(row: dict, key: str) -> str:
    r = row.get(key)
    return f"{r['ppg']:+.3f} ± {r['ppg_se']:.3f}" if r else "—"


def _head_to_head(h2h: dict) -> str:
    """An ablation row's head-to-head points: luck-adjusted first where measured, the plain points beside them."""
    plain = f"{h2h['ppg']:+.3f} ± {h2h['ppg_se']:.3f}"
    if "ppg_luck_adjusted" not in h2h:
        return plain
    return f"luck-adjusted {h2h['ppg_luck_adjusted']:+.3f} ± {h2h['ppg_luck_adjusted_se']:.3f} (plain {plain})"


def _moves(row: dict, versus: bool = False) -> str:
    c = row.get("checker_play")
    if not c:
        return "—"
    text = f"{c['mp_per_move']:.2f} ± {c['mp_se']:.2f}"
    if versus:
        text += f" ({c['minus_gnubg_0ply']['mp_per_move']:+.2f} ± {c['minus_gnubg_0ply']['mp_se']:.2f})"
    return text


def _cube(row: dict) -> str:
    return f"{row['cube']['mp_per_decision']:.1f}" if row.get("cube") else "—"


def _versus(result: dict) -> str:
    """One head-to-head result of a lever's run: luck-adjusted, the plain points per game beside it where kept."""
    text = f"{result['ppg_luck_adjusted']:+.3f} ± {result['ppg_luck_adjusted_se']:.3f}"
    if "ppg" in result and "ppg_se" in result:
        text += f" (plain {result['ppg']:+.3f} ± {result['ppg_se']:.3f})"
    return f"{text} v {result['opponent']}"


def levers_table(levers: dict) -> list[str]:
    """Markdown lines of a lever table (``benchmarks/results/issue20_generations.json``): one row a run, with what
    it changed, its minutes, its held-out error before and after, its head-to-head results and its reference-set
    errors; the commands behind every figure stay in the JSON."""
    lines = [
        "| run | lever | minutes | held-out error | head to head, luck-adjusted | checker play, mp/move | "
        "cube, mp/decision |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, run in levers["runs"].items():
        minutes = (f"{run['minutes']:g}" if "minutes" in run
                   else f"{run['minutes_training']:g} of training" if "minutes_training" in run else "—")
        fit = " → ".join(f"{e:.4f}" for e in run["held_out_error"]) if run.get("held_out_error") else "—"
        results = [_versus(v) for v in run.get("versus", ())]
        if run.get("versus_pooled"):  # several seeds' games, pooled
            results.append(f"**pooled, {_versus(run['versus_pooled'])}**")
        if run.get("versus_pooled_1ply"):  # and at 1-ply
            results.append(f"**pooled at 1-ply, {_versus(run['versus_pooled_1ply'])}**")
        versus = "; ".join(results) or "—"
        if "checker_mp" in run:
            checker = f"{run['checker_mp']:.2f}"
        elif "move_accuracy" in run:  # its own and, paired, its difference from the network it started from
            m = run["move_accuracy"]
            checker = f"{m['mp_per_move']:.2f}"
            key = next((k for k in m if k.startswith("minus_") and f"{k}_se" in m), None)  # e.g. minus_split_scale
            if key is not None:
                checker += f" ({m[key]:+.2f} ± {m[f'{key}_se']:.2f} v {key[len('minus_'):].replace('_', '-')})"
        else:
            checker = "—"
        cube = f"{run['cube_mp']:.2f}" if "cube_mp" in run else "—"
        lever = run["lever"].replace("|", "/")
        lines.append(f"| {name} | {lever} | {minutes} | {fit} | {versus} | {checker} | {cube} |")
    return lines


def render(r: dict) -> str:
    config = {k: v for k, v in r["config"].items() if k != "stages"}
    lines = [
        f"# Training report: {Path(r['run_dir']).name}",
        "",
        f"- Model: {r['model']}.",
        f"- {r['hours']:.2f} hours of training on 2 cores (benchmarks not counted); {r['games']:,} self-play games "
        "played or sampled.",
        f"- Config (`bgai train --config training/configs/{config['run_name']}.toml`):",
        "",
        "```toml",
        *[f"{k} = {json.dumps(v)}" for k, v in config.items()],
        *[line for stage in r["config"]["stages"]
          for line in ["", "[[stage]]", *[f"{k} = {json.dumps(v)}" for k, v in stage.items()]]],
        "```",
        "",
        *[line for note in r.get("notes") or [] for line in (note, "")],
        "## Stages",
        "",
        "| stage | method | hours | v pubeval at its end (0-ply) |",
        "|---|---|---|---|",
    ]
    for s in r["stages"]:
        if s["done"]:
            method = s["method"]
            if s.get("generations"):
                method += f", {s['generations_done']} of {s['generations']} generations"
            lines.append(f"| {s['name']} | {method} | {s['hours']:.2f} | {s['ppg_vs_pubeval']:+.3f} ± "
                         f"{s['ppg_vs_pubeval_se']:.3f} ({s['games']:,} games) |")
        else:
            lines.append(f"| {s['name']} | {s['method']} | not run yet | |")
    lines += [
        "",
        "## Learning curve",
        "",
        "![points per game over the hours of training](learning_curve.png)",
        "",
        "## Final benchmarks, at 0-ply, beside the baseline on the same dice",
        "",
        "Duplicate games (every dice sequence played twice, seats swapped; paired standard errors); checker play "
        "and cube decisions judged by GNU Backgammon 2-ply on its reference sets (`python -m bgai.coach.strength`).",
        "",
        "| network | v pubeval | v gnubg 0-ply | checker play, mp/move (v gnubg 0-ply's) | cube, mp/decision |",
        "|---|---|---|---|---|",
    ]
    for name, row in r["benchmarks"].items():
        lines.append(f"| {name}: `{row['checkpoint']}` | {_fmt(row, 'pubeval')} | {_fmt(row, 'gnubg')} | "
                     f"{_moves(row, versus=True)} | {_cube(row)} |")
    games = [f"{v['games']:,} v {k}" for k, v in r["benchmarks"]["network"].items()
             if isinstance(v, dict) and "games" in v]
    lines += ["", f"Games per benchmark: {', '.join(games)}.", ""]
    kinds = {name: row["cube"]["by_kind"] for name, row in r["benchmarks"].items() if "by_kind" in row.get("cube", {})}
    if kinds:
        lines += ["The cube's errors by kind: how many of the decisions, and the mp a decision each kind loses (they "
                  "add up to the cube column).", "",
                  "| network | " + " | ".join(KINDS) + " |", "|---|" + "---|" * len(KINDS)]
        lines += [f"| {name} | " + " | ".join(f"{k[kind]['count']}: {k[kind]['mp']:.2f}" for kind in KINDS) + " |"
                  for name, k in kinds.items()]
        lines.append("")
    if r.get("generations"):
        lines += [
            "## What each generation bought",
            "",
            "Each generation's network (`generations/STAGE-NNN.pt`; experiments beside the run's line in "
            "`experiments/`) at 0-ply, on the same dice as above (`python -m bgai.coach.strength`), in the order they "
            "were trained.",
            "",
            "| generation | v pubeval | v gnubg 0-ply | checker play, mp/move | cube, mp/decision |",
            "|---|---|---|---|---|",
        ]
        for row in (row for g in r["generations"] for row in g["results"]):  # in the order they were measured
            lines.append(f"| {Path(row['checkpoint']).stem} | {_fmt(row, 'pubeval')} | {_fmt(row, 'gnubg')} | "
                         f"{_moves(row)} | {_cube(row)} |")
        lines += ["", "Made by " + ", then ".join(f"`{g['command']}`" for g in r["generations"]) + ".", ""]
        lines += [line for g in r["generations"] if g.get("note") for line in (g["note"][0].upper() + g["note"][1:]
                                                                                  + ".", "")]
    ablations = r.get("ablation") or []
    for a in [ablations] if isinstance(ablations, dict) else ablations:  # (one table, before there were several)
        lines += [
            f"## {a.get('title', 'Ablations: each lever on the same data and budget')}",
            "",
            f"Every model below learned from the same {a['positions']:,} positions and 1-ply targets (the first "
            f"stage's data) with the same schedule ({a.get('epochs', 'the stage')} epochs); one lever changes from "
            "row to row (`python -m bgai.coach.ablation`).",
            "",
            "| model | change | head to head | held-out equity error | v pubeval | v gnubg 0-ply | checker play, "
            "mp/move | cube, mp/decision |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in a["results"]:
            fit = f"{row['fit']['equity_mae']:.4f}" if row.get("fit") else "—"
            h2h = f"{_head_to_head(row['h2h'])} v {row['h2h']['versus']}" if row.get("h2h") else "—"
            lines.append(f"| {row['variant']} | {row['change']} | {h2h} | {fit} | {_fmt(row, 'pubeval')} | "
                         f"{_fmt(row, 'gnubg')} | {_moves(row)} | {_cube(row)} |")
        commands = a.get("commands") or [a["command"]]
        lines += ["", "Made by " + ", then ".join(f"`{c}`" for c in commands) + ".", ""]
    tables = r.get("levers") or []
    for levers in [tables] if isinstance(tables, dict) else tables:  # (one table, before there were several)
        what = levers["what"][0].upper() + levers["what"][1:]
        title = levers.get("title", "Levers tried since, on the fast network")
        after = f" {levers['after']}" if levers.get("after") else ""  # what became of the runs since, if anything
        lines += [f"## {title}", "", what + ".", "", *levers_table(levers), "",
                  f"Each run's command and each result's command are in `{levers['path']}`.{after}", ""]
    if r.get("plies"):
        lines += [
            "## What lookahead buys, head to head",
            "",
            "The network at one ply against itself at another on the same dice (`python -m bgai.coach.ply_strength`; "
            "paired standard errors). Luck-adjusted: each game's points minus the luck of its rolls, measured by "
            "the network at 0-ply (an unbiased estimate of the same points per game, with far less variance).",
            "",
            "| bot | opponent | games | points per game | luck-adjusted | made by |",
            "|---|---|---|---|---|---|",
        ]
        for result in r["plies"]:
            adjusted = (f"{result['ppg_luck_adjusted']:+.3f} ± {result['ppg_luck_adjusted_se']:.3f}"
                        if "ppg_luck_adjusted" in result else "—")
            made = "; ".join(f"`{c}`" for c in result.get("commands") or [result.get("command", "")])
            if result.get("parts"):
                made += f", merged by `python -m bgai.coach.ply_strength --merge OUT {' '.join(result['parts'])}`"
            lines.append(f"| {result['bot']} | {result['opponent']} | {result['games']:,} | {result['ppg']:+.3f} ± "
                         f"{result['ppg_se']:.3f} | {adjusted} | {made} |")
        lines.append("")
    lines += ["", f"Made by `{r['command']}`.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
