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
