"""Writing files so that nothing is lost: a crash or a kill never leaves a half-written file behind, and two
processes never write into one run folder."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from bgai.core.errors import BgaiError

#: The package's data folder (``bgai/data``): the shipped networks, the bear-off database, the match equity table.
DATA = Path(__file__).resolve().parents[1] / "data"


def write_atomically(path: str | Path, write: Callable[[IO[bytes]], object]) -> None:
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


def write_json(path: str | Path, data, indent: int = 1) -> None:
    """``data`` as JSON (``indent`` spaces a level, a newline at the end) written to ``path`` by
    ``write_atomically``: a results file, a manifest."""
    text = json.dumps(data, indent=indent) + "\n"
    write_atomically(path, lambda handle: handle.write(text.encode()))


class FolderInUseError(BgaiError):
    """A folder (``locked_folder``) or a file (``locked_file``) that another process holds."""


@contextlib.contextmanager
def locked_folder(folder: str | Path, what: str = "training run") -> Iterator[Path]:
    """Hold ``folder`` (created if need be) for this process: a second process asking for it is refused with
    ``FolderInUseError`` naming the first one's PID, at once rather than after it has mixed its files in. The
    lock is the kernel's (``flock`` on ``folder/.lock``), so a process that dies, even killed, lets go of it."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with _flock(folder / ".lock", f"{folder} is in use by another {what}", "folder"):
        yield folder


@contextlib.contextmanager
def locked_file(path: str | Path, what: str) -> Iterator[Path]:
    """Hold the file ``path`` (which need not exist yet) for this process, as ``locked_folder`` holds a folder: the
    lock is ``flock`` on ``.NAME.lock`` beside it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _flock(path.with_name(f".{path.name}.lock"), f"{path} is being written by another {what}", "file"):
        yield path


@contextlib.contextmanager
def _flock(path: Path, busy: str, kind: str) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            raise FolderInUseError(f"{busy} (PID {holder}); wait for it to end or choose another {kind}") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the file lets go of the lock


def write_npz(path: str | Path, **arrays) -> None:
    """Write ``arrays`` to ``path`` as a compressed ``.npz``, atomically (``write_atomically``)."""
    import numpy as np

    write_atomically(path, lambda handle: np.savez_compressed(handle, **arrays))


def provenance(command: str | None = None) -> dict:
    """Where a results or data file came from: the ``command`` that wrote it (default: this process's own command
    line), the date (UTC), the commit of the code (``git``, where the code is a checkout) and the machine."""
    import datetime
    import platform
    import shlex
    import subprocess
    import sys

    try:
        commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                                timeout=10, cwd=Path(__file__).resolve().parent).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    if command is None:
        program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
        head = [program] if program == "bgai" else ["python", sys.argv[0]]
        command = shlex.join([*head, *sys.argv[1:]])  # quoted: the command reruns as it is written
    return {"command": command, "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "commit": commit,
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"}


def module_command(module: str, argv: list[str] | None = None) -> str:
    """The command line ``python -m MODULE ARGS`` that ran a module's ``main(argv)`` (``argv`` None: this process's
    arguments), as its results file records it (``provenance``): under ``-m`` the module's own name is
    ``__main__``, so it is given here."""
    import shlex
    import sys

    return shlex.join(["python", "-m", module, *(sys.argv[1:] if argv is None else argv)])


def games_dir() -> Path:
    """Where ``bgai play`` saves its games unless told (``--save``): ``$BGAI_GAMES_DIR``, else
    ``$XDG_DATA_HOME/bgai/games``, else ``~/.local/share/bgai/games`` (never the current folder: in a clone of the
    repository that filled its root with untracked match files)."""
    if os.environ.get("BGAI_GAMES_DIR"):
        return Path(os.environ["BGAI_GAMES_DIR"])
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "bgai" / "games"

