"""Fixtures shared by several test modules, and the rule that CI runs every test."""

import os
import socket
import sys
import threading
import time
from pathlib import Path

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under ``CI=true`` (``.ci/run``) a skipped test fails: a test that skips itself when its oracle (gnubg,
    bgsage, Chromium, ...) is missing would otherwise leave CI green with the check never made."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("CI") == "true" and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = (f"skipped under CI=true, where every test must run: {reason} (make test installs what "
                           f"the tests need)")


@pytest.fixture(autouse=True, scope="session")
def study_database(tmp_path_factory):
    """Every test's study database (``bgai analyse`` keeps its analyses there) is a file of the test session, never
    the user's: ``$BGAI_DB``, which subprocesses inherit too."""
    before = os.environ.get("BGAI_DB")
    os.environ["BGAI_DB"] = str(tmp_path_factory.mktemp("study") / "study.sqlite")
    yield
    if before is None:
        os.environ.pop("BGAI_DB", None)
    else:
        os.environ["BGAI_DB"] = before


@pytest.fixture
def load_script(monkeypatch):
    """A loader of a script that is not a module of the package (``benchmarks/*.py``): ``load_script(path)`` runs it
    as a module named after its file, registered in ``sys.modules`` for the test (its dataclasses look their
    module up there), and returns it."""
    import importlib.util

    def load(path):
        path = Path(path)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, path.stem, module)
        spec.loader.exec_module(module)
        return module

    return load


def start_web_server(**options):
    """``bgai serve``'s app (``create_app(plies=0, **options)``) on a free localhost port, in a thread: (its base URL,
    a function that stops it)."""
    uvicorn = pytest.importorskip("uvicorn")

    from bgai.frontends.web import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(plies=0, **options), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not server.started:
        assert time.time() < deadline, "the server did not start"
        time.sleep(0.05)

    def stop():
        server.should_exit = True
        thread.join(10)
    return f"http://127.0.0.1:{port}", stop


@pytest.fixture(scope="module")
def web_server():
    """``bgai serve``'s app (the bot at 0-ply) on a free localhost port, in a thread: its base URL."""
    url, stop = start_web_server()
    yield url
    stop()


@pytest.fixture
def serve():
    """A starter of servers (``start_web_server``'s options, e.g. ``db``), each stopped after the test:
    ``serve(db=...)`` is its base URL and its stop (for a test that restarts one)."""
    stops = []

    def start(**options):
        url, stop = start_web_server(**options)
        stops.append(stop)
        return url, stop
    yield start
    for stop in stops:
        stop()
