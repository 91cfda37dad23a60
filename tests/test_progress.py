"""bgai.core.progress: the clock-driven progress line of the benchmark scripts."""

import threading
import time

from bgai.core.progress import ticking


def test_ticking_redraws_the_job_and_its_part_while_the_block_runs_and_stops_with_it(capsys):
    with ticking("demo", every=0.02) as part:
        part("first part")
        time.sleep(0.15)
        redrawn = capsys.readouterr().err
        part("second part")
        time.sleep(0.1)
    after = capsys.readouterr().err
    # redrawn several times (the clock moves) with the job's name and the part under way
    assert redrawn.count("demo, first part") >= 3
    assert "demo, second part" in after
    assert not [t for t in threading.enumerate() if t.name.startswith("ticking-")]  # its thread is gone


def test_ticking_stops_its_thread_when_the_block_raises():
    try:
        with ticking("failing", every=0.01):
            raise KeyError("boom")
    except KeyError:
        pass
    assert not [t for t in threading.enumerate() if t.name.startswith("ticking-")]
