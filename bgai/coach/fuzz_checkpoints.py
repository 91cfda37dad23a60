"""Random corruptions of network files: each must be refused with ``CheckpointError`` or load bit-identical.

    nice -n 10 python -m bgai.coach.fuzz_checkpoints [--inputs 3000] [--seed 0]

The originals are a small split network as a training checkpoint (``.pt``, with an optimizer state, random-number
states and history) and for play (``.npz``), and the shipped network in both files. Each input is one of them
with one corruption: a flipped bit, a few random bytes, a zeroed or deleted span, inserted bytes, or a truncation,
at a random place, half the time near a zip member's header or the file's ends, where the structure lives. It is
loaded as bgai loads it (``load_checkpoint`` then ``snapshot_from_checkpoint``; ``ModelSnapshot.load_npz``) and
counted as

* refused: ``CheckpointError``;
* identical: it loaded, and to the same contents (every tensor's bytes, every field; the same network);
* different network: it loaded to something else;
* crash: any other exception.

It prints the counts and exits 1 on any different-network load or crash.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import torch

from bgai.eval.bot import SHIPPED, SHIPPED_NPZ
from bgai.eval.checkpoint import (
    CheckpointError,
    load_checkpoint,
    model_payload,
    save_checkpoint,
    snapshot_from_checkpoint,
)
from bgai.eval.network import EquityModel
from bgai.eval.weights import ModelSnapshot, content_hash

OUTCOMES = ("refused", "identical", "different network", "crash")


def originals(folder: Path) -> list[Path]:
    """The files to corrupt, written to ``folder``: a small split network (``.pt`` with training state, ``.npz``)
    and the shipped network's two files."""
    torch.manual_seed(0)
    model = EquityModel.create((16, 8), ("contact", "race"))
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.rand(4, model.n_inputs), torch.tensor([3, 2, 1, 3])).sum().backward()
    optimizer.step()
    small_pt, small_npz = folder / "small.pt", folder / "small.npz"
    save_checkpoint(small_pt, {**model_payload(model), "optimizer": optimizer.state_dict(), "games": 64,
                               "seconds": 1.5, "torch_rng": torch.get_rng_state(), "history": [{"step": 1}],
                               "numpy_rng": np.random.default_rng(0).bit_generator.state})
    ModelSnapshot.of(model).save_npz(small_npz, info={"games": 64})
    return [small_pt, small_npz, SHIPPED, SHIPPED_NPZ]


def contents(path: Path):
    """What bgai reads from ``path``, as a hash of all of it: the checkpoint's fields and the network played."""
    if path.suffix == ".npz":
        snapshot, info = ModelSnapshot.load_npz(path)
        return content_hash([snapshot.hidden, snapshot.phases, snapshot.encoder_version, snapshot.weights, info])
    payload = load_checkpoint(path)
    snapshot = snapshot_from_checkpoint(payload)
    return content_hash([payload, snapshot.hidden, snapshot.phases, snapshot.encoder_version, snapshot.weights])


def corrupt(data: bytes, rng: np.random.Generator, members: list[int]) -> bytes:
    """``data`` with one random corruption; ``members``: where the zip's members start (their local headers)."""
    n = len(data)
    where = rng.integers(4)
    if where == 0 or not members:
        at = int(rng.integers(n))
    elif where == 1:
        at = min(int(rng.integers(2048)), n - 1)
    elif where == 2:
        at = max(n - 1 - int(rng.integers(2048)), 0)
    else:
        at = min(members[int(rng.integers(len(members)))] + int(rng.integers(256)), n - 1)
    out = bytearray(data)
    kind = rng.integers(6)
    if kind == 0:  # one flipped bit
        out[at] ^= 1 << int(rng.integers(8))
    elif kind == 1:  # a few random bytes
        span = int(rng.integers(1, 9))
        out[at:at + span] = rng.integers(256, size=len(out[at:at + span]), dtype=np.uint8).tobytes()
    elif kind == 2:  # a zeroed span
        span = int(rng.integers(1, 513))
        out[at:at + span] = bytes(len(out[at:at + span]))
    elif kind == 3:  # a deleted span
        del out[at:at + int(rng.integers(1, 65))]
    elif kind == 4:  # inserted bytes
        out[at:at] = rng.integers(256, size=int(rng.integers(1, 17)), dtype=np.uint8).tobytes()
    else:  # truncated
        del out[at:]
    return bytes(out) if bytes(out) != data else corrupt(data, rng, members)


def fuzz(inputs: int, seed: int, folder: Path, progress: bool = False) -> dict:
    """Corrupt the ``originals`` ``inputs`` times (seeded) and count the outcomes; the crashes and different-network
    loads are listed by input under ``"failures"``."""
    rng = np.random.default_rng(seed)
    files = originals(folder)
    sources = []
    for path in files:
        with zipfile.ZipFile(path) as archive:
            members = [info.header_offset for info in archive.infolist()]
        sources.append((path, path.read_bytes(), contents(path), members))
    counts: dict = {outcome: 0 for outcome in OUTCOMES} | {"inputs": inputs, "failures": []}
    for i in range(inputs):
        path, data, original, members = sources[i % len(sources)]
        target = folder / f"corrupt{path.suffix}"
        target.write_bytes(corrupt(data, rng, members))
        try:
            outcome = "identical" if contents(target) == original else "different network"
        except CheckpointError:
            outcome = "refused"
        except Exception as error:  # noqa: BLE001 (what the fuzzer is looking for)
            outcome = "crash"
            counts["failures"].append(f"input {i} ({path.name}): {type(error).__name__}: {error}"[:300])
        if outcome == "different network":
            counts["failures"].append(f"input {i} ({path.name}): loaded as a different network")
        counts[outcome] += 1
        if progress and (i + 1) % 500 == 0:
            print(f"{i + 1} inputs: " + ", ".join(f"{k} {counts[k]}" for k in OUTCOMES), flush=True)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=3000, help="corrupted files to load")
    parser.add_argument("--seed", type=int, default=0, help="seed of the corruptions")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        counts = fuzz(args.inputs, args.seed, Path(folder), progress=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"inputs {counts['inputs']}, " + ", ".join(f"{k} {counts[k]}" for k in OUTCOMES)
          + f" ({time.perf_counter() - start:.0f} s, seed {args.seed}, peak memory {peak:.0f} MiB)")
    for failure in counts["failures"]:
        print(failure)
    return 1 if counts["crash"] or counts["different network"] else 0


if __name__ == "__main__":
    sys.exit(main())
