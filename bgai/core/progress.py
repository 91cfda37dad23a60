"""A progress line that moves with the clock, for long jobs whose work comes in uneven parts.

The games, rollouts, analyses and training epochs of bgai count their own progress (``tqdm`` bars over games,
trials, decisions or batches). A benchmark script is a row of timed parts of a few seconds to a few minutes each,
most of them one call that cannot report as it goes (a timed loop, an external program), and a bar inside the timed
code would be timed with it. ``ticking`` shows instead, on standard error, the job's name, the part under way and
the time spent, redrawn twice a second by a thread of its own that sleeps in between (the timed code pays a wake-up
every half second, well under a thousandth of its time)::

    with ticking("env_bench") as part:
        part("bgai vector env")
        ...
        part("OpenSpiel")
        ...
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def ticking(job: str, every: float = 0.5, disable: bool = False) -> Iterator[Callable[[str], None]]:
    """A line ``job, part 00:42`` on standard error, redrawn every ``every`` seconds until the block ends; the
    block gets a function that names the part under way."""
    from tqdm.auto import tqdm

    bar = tqdm(total=None, desc=job, bar_format="{desc}{postfix} {elapsed}", file=sys.stderr, disable=disable,
               leave=False)
    stop = threading.Event()

    def redraw() -> None:
        while not stop.wait(every):
            bar.refresh()

    def part(name: str) -> None:
        bar.set_postfix_str(name, refresh=True)

    thread = threading.Thread(target=redraw, name=f"ticking-{job}", daemon=True)
    thread.start()
    try:
        yield part
    finally:
        stop.set()
        thread.join()
        bar.close()
