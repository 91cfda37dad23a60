"""Work done inside GNU Backgammon: a function of one of the coach's scripts, run by Debian's gnubg program in its
embedded Python, on a job the project's Python hands it.

    result = gnubg_job.run(Path(__file__), "gnubg_evaluate", {"items": [...], "plies": [0, 2]})

``run`` writes the job to a file, starts ``gnubg -t -q -r -p`` on this file with ``BGAI_GNUBG_JOB`` naming it, and
returns what the function returned (through a JSON file). Inside gnubg this file loads the script by its path
(``runpy.run_path``, not as ``__main__``), calls the function with the job and writes its result. gnubg's Python
has no bgai (and the scripts' gnubg side imports only what it has), so this file imports only the standard
library. The coach's users: ``bgai.coach.move_reference``, ``bgai.coach.cube_reference``,
``bgai.coach.gnubg_matches``.
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import tempfile
from pathlib import Path

GNUBG = "/usr/games/gnubg"
#: The environment variable that names the job file, inside gnubg.
JOB_ENV = "BGAI_GNUBG_JOB"


def run(script: Path, function: str, job: dict, gnubg: str = GNUBG, timeout: float | None = None):
    """What ``function(job)`` of ``script`` returns, run in one gnubg process (JSON's types). ``RuntimeError`` with
    gnubg's output if it wrote no result.

    Each gnubg call waits about 10 ms however little it computes (gnubg runs it as an asynchronous task), so a
    job of many cheap evaluations takes time but hardly any CPU."""
    with tempfile.TemporaryDirectory() as tmp:
        job_path, out_path = Path(tmp, "job.json"), Path(tmp, "out.json")
        job_path.write_text(json.dumps({"script": str(Path(script).resolve()), "function": function, "job": job,
                                        "out": str(out_path)}))
        proc = subprocess.run([gnubg, "-t", "-q", "-r", "-p", str(Path(__file__).resolve())],
                              env={**os.environ, JOB_ENV: str(job_path)}, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)
        if not out_path.exists():
            raise RuntimeError(f"gnubg wrote no result of {Path(script).name}'s {function} (exit {proc.returncode}):"
                               f"\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        return json.loads(out_path.read_text())


def _main(job_path: str) -> None:
    """Inside gnubg: the job file's function on its job, the result written where the job says."""
    task = json.loads(Path(job_path).read_text())
    result = runpy.run_path(task["script"], run_name="bgai_gnubg_job")[task["function"]](task["job"])
    Path(task["out"]).write_text(json.dumps(result, default=str))


if __name__ == "__main__" and os.environ.get(JOB_ENV):
    _main(os.environ[JOB_ENV])
