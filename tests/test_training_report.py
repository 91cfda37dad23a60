"""bgai.coach.report: the training report of a run, rendered from its figures (the benchmarks themselves are
bgai.coach.strength's, run by hand)."""

from bgai.coach import report


def row(checkpoint, ppg, **extra):
    return {"checkpoint": checkpoint, "model": "m", "pubeval": {"games": 10, "ppg": ppg, "ppg_se": 0.01},
            "checker_play": {"mp_per_move": 5.0, "mp_se": 0.3,
                             "minus_gnubg_0ply": {"mp_per_move": 2.4, "mp_se": 0.3}},
            "cube": {"mp_per_decision": 8.1}, **extra}


def test_the_report_names_every_stage_the_benchmarks_and_each_ablation_with_its_head_to_head():
    history = [{"stage": "distil", "seconds": 3600, "pubeval": {"ppg": 0.61, "ppg_se": 0.03, "games": 2000}}]
    stages = [{"name": "distil", "method": "lookahead", "generations": 1},
              {"name": "ply1", "method": "lookahead", "generations": 3}]
    r = {
        "run_dir": "runs/shipped", "command": "python -m bgai.coach.report runs/shipped",
        "config": {"run_name": "shipped", "hidden": "512,256", "stages": stages},
        "games": 36000, "hours": 1.0, "model": "m",
        "stages": report.stage_costs(history, stages),
        "benchmarks": {"network": row("runs/shipped/checkpoint.pt", 0.6), "baseline": row("td-v1.pt", 0.5)},
        "ablation": {"command": "python -m bgai.coach.ablation runs/shipped", "positions": 1000, "epochs": 8,
                     "results": [row("td-v1.pt", 0.5, variant="td-v1", change="TD alone"),
                                 row("a.pt", 0.55, variant="v2-512-256", change="+ a layer", fit={"equity_mae": 0.02},
                                     h2h={"versus": "td-v1", "games": 8000, "ppg": 0.031, "ppg_se": 0.015})]},
        "plies": [], "notes": ["The distil data was reused."],
    }
    text = report.render(r)
    assert "| distil | lookahead, 1 of 1 generations | 1.00 | +0.610 ± 0.030 (2,000 games) |" in text
    assert "| ply1 | lookahead | not run yet | |" in text
    assert "| network: `runs/shipped/checkpoint.pt` | +0.600 ± 0.010 |" in text
    ablation_row = ("| v2-512-256 | + a layer | +0.031 ± 0.015 v td-v1 | 0.0200 | +0.550 ± 0.010 | — | 5.00 ± 0.30 "
                    "| 8.1 |")
    assert ablation_row in text
    assert "The distil data was reused.\n" in text and "(8 epochs)" in text and "hidden = \"512,256\"" in text
    assert "Made by `python -m bgai.coach.ablation runs/shipped`." in text
    # The generations' table, when their strength results are given, in the order measured
    r["generations"] = [{"command": "python -m bgai.coach.strength g0.pt g1.pt",
                         "results": [row("gens/distil-000.pt", 0.56), row("gens/ply1-000.pt", 0.59)]}]
    text = report.render(r)
    assert "| distil-000 | +0.560 ± 0.010 | — | 5.00 ± 0.30 | 8.1 |\n| ply1-000 | +0.590 ± 0.010 |" in text
    assert "Made by `python -m bgai.coach.strength g0.pt g1.pt`." in text
    r["generations"][0]["note"] = "g1 is an experiment"
    assert "Made by `python -m bgai.coach.strength g0.pt g1.pt`.\n\nG1 is an experiment.\n" in report.render(r)
    # An ablation grown row by row (bgai.coach.ablation --keep) names every command that made its rows
    r["ablation"]["commands"] = [r["ablation"]["command"],
                                 "python -m bgai.coach.ablation runs/shipped --variants x --keep"]
    assert ("Made by `python -m bgai.coach.ablation runs/shipped`, then "
            "`python -m bgai.coach.ablation runs/shipped --variants x --keep`.") in report.render(r)
    # The lookahead table, from bgai.coach.ply_strength's results (one run, or one merged from parts)
    r["plies"] = [{"bot": "bgai@1ply", "opponent": "bgai", "games": 2000, "ppg": 0.066, "ppg_se": 0.026,
                   "command": "python -m bgai.coach.ply_strength --plies 1"},
                  {"bot": "bgai@2ply", "opponent": "bgai@1ply", "games": 640, "ppg": 0.02, "ppg_se": 0.05,
                   "ppg_luck_adjusted": 0.021, "ppg_luck_adjusted_se": 0.009, "parts": ["a.json", "b.json"],
                   "commands": ["python -m bgai.coach.ply_strength --plies 2", "python -m bgai.coach.ply_strength "
                                "--plies 2 --first-sequence 160"]}]
    text = report.render(r)
    assert "| bgai@1ply | bgai | 2,000 | +0.066 ± 0.026 | — | `python -m bgai.coach.ply_strength --plies 1` |" in text
    assert ("| bgai@2ply | bgai@1ply | 640 | +0.020 ± 0.050 | +0.021 ± 0.009 | `python -m bgai.coach.ply_strength "
            "--plies 2`; `python -m bgai.coach.ply_strength --plies 2 --first-sequence 160`, merged by "
            "`python -m bgai.coach.ply_strength --merge OUT a.json b.json` |") in text


def test_the_report_splits_the_cube_error_by_kind_when_the_benchmarks_have_it():
    kinds = {"missed double": {"count": 71, "mp": 1.24}, "wrong double": {"count": 145, "mp": 1.16},
             "wrong take": {"count": 21, "mp": 0.52}, "wrong pass": {"count": 27, "mp": 1.12}}
    r = {"run_dir": "runs/x", "command": "c", "config": {"run_name": "x", "stages": []}, "games": 0, "hours": 0.0,
         "model": "m", "stages": [], "plies": [], "notes": [],
         "benchmarks": {"network": row("runs/x/checkpoint.pt", 0.6)}}
    assert "errors by kind" not in report.render(r)  # figures measured before the kinds were counted
    r["benchmarks"]["network"]["cube"] = {"mp_per_decision": 4.04, "by_kind": kinds}
    text = report.render(r)
    assert "| network | missed double | wrong double | wrong take | wrong pass |" in text
    assert "| network | 71: 1.24 | 145: 1.16 | 21: 0.52 | 27: 1.12 |" in text


def test_the_strength_line_names_the_cube_error_of_each_kind():
    from bgai.coach.strength import describe

    line = describe({"cube": {"mp_per_decision": 4.04, "by_kind": {"missed double": {"count": 71, "mp": 1.24},
                                                                   "wrong pass": {"count": 27, "mp": 1.12}}}})
    assert line == "cube 4.0 mp/decision (missed double 1.24, wrong pass 1.12)"


def test_the_report_tabulates_levers_tried_on_another_network_and_rerenders_without_measuring(tmp_path):
    import json

    levers = {"what": "single generations from the fast network", "runs": {
        "split-scale": {"lever": "two nets", "minutes": 12.7, "held_out_error": [0.0202, 0.0179],
                        "versus": [{"opponent": "fast", "ppg": -0.001, "ppg_se": 0.023, "ppg_luck_adjusted": 0.0108,
                                    "ppg_luck_adjusted_se": 0.0032},
                                   {"opponent": "gnubg 0-ply", "ppg_luck_adjusted": 0.009,
                                    "ppg_luck_adjusted_se": 0.004}],
                        "checker_mp": 2.77, "cube_mp": 4.04},
        "gen2-crashed": {"lever": "a crashed net | three in all", "minutes_training": 3.6, "versus": []}}}
    path = tmp_path / "levers.json"
    path.write_text(json.dumps(levers))
    r = {"run_dir": "runs/x", "command": "python -m bgai.coach.report runs/x", "config": {"run_name": "x",
         "stages": []}, "games": 0, "hours": 0.0, "model": "m", "stages": [], "plies": [], "notes": [],
         "benchmarks": {"network": row("runs/x/checkpoint.pt", 0.6)}}
    (tmp_path / "report.json").write_text(json.dumps(r))
    report.main(["--render-only", "--out", str(tmp_path), "--levers", str(path)])
    text = (tmp_path / "REPORT.md").read_text()
    assert "## Levers tried since, on the fast network\n\nSingle generations from the fast network." in text
    assert ("| split-scale | two nets | 12.7 | 0.0202 → 0.0179 | +0.011 ± 0.003 (plain -0.001 ± 0.023) v fast; "
            "+0.009 ± 0.004 v gnubg 0-ply | 2.77 | 4.04 |") in text
    # a pipe in a lever's text does not break the table; a run with no figures shows dashes
    assert "| gen2-crashed | a crashed net / three in all | 3.6 of training | — | — | — | — |" in text
    assert f"Each run's command and each result's command are in `{path}`." in text
    # the rest of the report is the same as before, and report.json keeps the levers for the next rendering
    assert "| network: `runs/x/checkpoint.pt` | +0.600 ± 0.010 |" in text
    assert json.loads((tmp_path / "report.json").read_text())["levers"][0]["runs"].keys() == levers["runs"].keys()
    report.main(["--render-only", "--out", str(tmp_path)])
    assert (tmp_path / "REPORT.md").read_text() == text
    # a second table, with its own title, after the first
    second = tmp_path / "more.json"
    second.write_text(json.dumps({"what": "generations learned from rollouts", "title": "Rollout-labelled "
                                  "generations", "runs": {"pilot": {"lever": "20,000 labels", "versus": []},
                                                                 "seeds": {"lever": "pairs", "versus": [
        {"opponent": "s", "ppg_luck_adjusted": 0.004, "ppg_luck_adjusted_se": 0.003},
        {"opponent": "s", "ppg_luck_adjusted": 0.01, "ppg_luck_adjusted_se": 0.003}], "versus_pooled": {
        "opponent": "s", "ppg_luck_adjusted": 0.007, "ppg_luck_adjusted_se": 0.002}}}}))
    report.main(["--render-only", "--out", str(tmp_path), "--levers", str(path), str(second)])
    both = (tmp_path / "REPORT.md").read_text()
    assert both.index("## Levers tried since") < both.index("## Rollout-labelled generations\n\nGenerations learned")
    assert "| pilot | 20,000 labels | — | — | — | — | — |" in both
    # several seeds' results, and their pooled figure after them
    assert "| seeds | pairs | — | — | +0.004 ± 0.003 v s; +0.010 ± 0.003 v s; **pooled, +0.007 ± 0.002 v s** |" in both
    # the pooled 1-ply games beside the 0-ply ones, a paired checker-play difference against whichever network the
    # run started from, and a sentence after the table on what became of the runs
    third = tmp_path / "third.json"
    third.write_text(json.dumps({"what": "generations on top", "title": "On top", "after": "None shipped.", "runs": {
        "top": {"lever": "labels", "versus": [], "versus_pooled": {
            "opponent": "e", "ppg_luck_adjusted": 0.004, "ppg_luck_adjusted_se": 0.002}, "versus_pooled_1ply": {
            "opponent": "e at 1-ply", "ppg_luck_adjusted": -0.008, "ppg_luck_adjusted_se": 0.003},
            "move_accuracy": {"mp_per_move": 2.62, "minus_ens5_distil": 0.06, "minus_ens5_distil_se": 0.18}}}}))
    report.main(["--render-only", "--out", str(tmp_path), "--levers", str(third)])
    text = (tmp_path / "REPORT.md").read_text()
    assert ("| top | labels | — | — | **pooled, +0.004 ± 0.002 v e**; **pooled at 1-ply, -0.008 ± 0.003 v e at "
            "1-ply** | 2.62 (+0.06 ± 0.18 v ens5-distil) | — |") in text
    assert f"Each run's command and each result's command are in `{third}`. None shipped." in text


def test_several_ablation_tables_each_under_its_own_title_with_luck_adjusted_head_to_heads(tmp_path):
    """Given a report and two ablation files, the second with a title and luck-adjusted head-to-head games, When
    the report is rendered again with both (--render-only --ablation), Then each is a table under its heading, the
    second's head to head shows the luck-adjusted points with the plain ones beside them, and report.json keeps both
    for the next rendering."""
    import json

    first = {"command": "python -m bgai.coach.ablation runs/a", "positions": 1000, "epochs": 8,
             "results": [row("a.pt", 0.5, variant="base", change="the base")]}
    second = {"command": "python -m bgai.coach.ablation runs/depth", "positions": 950_000, "epochs": 8,
              "title": "Depth on the same data",
              "results": [row("d.pt", 0.6, variant="d-256x3", change="three layers",
                              h2h={"versus": "d-512-64", "games": 8000, "ppg": 0.002, "ppg_se": 0.014,
                                   "ppg_luck_adjusted": 0.0104, "ppg_luck_adjusted_se": 0.0021})]}
    paths = []
    for name, table in (("a.json", first), ("depth.json", second)):
        paths.append(tmp_path / name)
        paths[-1].write_text(json.dumps(table))
    r = {"run_dir": "runs/x", "command": "python -m bgai.coach.report runs/x", "config": {"run_name": "x",
         "stages": []}, "games": 0, "hours": 0.0, "model": "m", "stages": [], "plies": [], "notes": [],
         "benchmarks": {"network": row("runs/x/checkpoint.pt", 0.6)}, "ablation": first}
    (tmp_path / "report.json").write_text(json.dumps(r))
    report.main(["--render-only", "--out", str(tmp_path), "--ablation", *map(str, paths)])
    text = (tmp_path / "REPORT.md").read_text()
    assert text.index("## Ablations: each lever on the same data and budget") < text.index(
        "## Depth on the same data\n\nEvery model below learned from the same 950,000 positions")
    assert ("| d-256x3 | three layers | luck-adjusted +0.010 ± 0.002 (plain +0.002 ± 0.014) v d-512-64 |" in text)
    assert "Made by `python -m bgai.coach.ablation runs/depth`." in text
    report.main(["--render-only", "--out", str(tmp_path)])
    assert (tmp_path / "REPORT.md").read_text() == text
