"""Writing files so that nothing is lost: a crash or a kill never leaves a half-written file behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable, IO


def write_atomically(path: str | Path, write: Callable[[IO[bytes]], None]) -> None:
    """Call ``write`` on a temporary file next to ``path``, flush it to disk and rename it over ``path``; the
    folder's entry is flushed too. Readers see the old file or the whole new one, never a part."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)  # mkstemp's files are private; these are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
