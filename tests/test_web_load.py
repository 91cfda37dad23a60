"""The web load test (bgai.coach.web_load), short: concurrent clients on one server get no errors and lose no
session state."""

from __future__ import annotations

import asyncio

from bgai.coach.web_load import game_positions, load


def test_concurrent_clients_get_no_errors_and_lose_no_session_state(web_server):
    """Given 6 clients for 3 seconds, each with its own game session besides hints and evaluations,
    Then every request succeeds, and every session ends holding exactly what its client did."""
    result = asyncio.run(load(web_server, clients=6, seconds=3, positions=game_positions(100, seed=2)))
    assert result["errors"] == 0, result["failures"]
    assert result["lost_state"] == [] and result["sessions_verified"] == 6
    assert result["requests"] > 50 and result["plays_finished"] > 0
    assert {"hint (moves)", "evaluate", "session step"} <= set(result["endpoints"])


def test_the_command_times_hints_at_every_ply_and_records_where_its_figures_come_from(tmp_path):
    """The command as the docs run it, short: its own server, hints timed at 0, 1 and 2-ply, the load test, and a
    results file with its command, date and commit."""
    import json

    from bgai.coach.web_load import main
    from bgai.eval.bot import MAX_PLIES

    out = tmp_path / "web.json"
    main(["--clients", "2", "--seconds", "1", "--latency", "3", "--json", str(out)])
    figures = json.loads(out.read_text())
    assert list(figures["hint_latency"]) == [f"{p}-ply" for p in range(MAX_PLIES + 1)]
    assert all(h["requests"] == 3 and 0 < h["median_ms"] <= h["p95_ms"] for h in figures["hint_latency"].values())
    assert figures["load"]["errors"] == 0 and figures["load"]["sessions_verified"] == 2
    assert figures["command"] == f"python -m bgai.coach.web_load --clients 2 --seconds 1 --latency 3 --json {out}"
    assert figures["date"] and figures["commit"] and figures["machine"]
