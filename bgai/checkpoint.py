"""Self-describing checkpoints, written atomically and checked when read.

A checkpoint is a dict of plain values and tensors (it loads with ``torch.load(weights_only=True)``): the format
number, the encoder version and input width the network was trained with, the hidden layer sizes, the nets by
phase (``bgai.network.EquityModel``), the model and optimizer states, the training config, the games played, the
random-number generator states and the benchmark history. Format 1 (bgai 0.1's TD checkpoints) held one net for
every phase and still loads. It is written to a temporary file in the same folder, flushed to disk and renamed over the old one, so a
crash never leaves a half-written checkpoint behind.
"""

from __future__ import annotations

from pathlib import Path

import torch

from bgai import encoding
from bgai.errors import BgaiError
from bgai.files import write_atomically
from bgai.network import EquityModel
from bgai.weights import KNOWN_PHASES

FORMAT = 2
READABLE = (1, 2)
REQUIRED = ("format", "encoder_version", "n_inputs", "hidden", "model")


class CheckpointError(BgaiError):
    """A checkpoint that is missing, unreadable, corrupt, or made for another encoder or network."""


def model_payload(model: EquityModel) -> dict:
    """The checkpoint entries that describe and hold ``model``."""
    return {"encoder_version": model.encoder_version, "n_inputs": model.n_inputs, "hidden": list(model.hidden),
            "phases": list(model.phases), "model": model.state_dict()}


def model_from_checkpoint(payload: dict) -> EquityModel:
    """The ``EquityModel`` of a checked checkpoint (``load_checkpoint``), with its weights."""
    phases = tuple(payload.get("phases", ("all",)))
    model = EquityModel.create(tuple(payload["hidden"]), phases, payload["encoder_version"])
    state = payload["model"]
    if payload["format"] == 1:  # one EquityNet's weights
        state = {f"nets.all.{key}": value for key, value in state.items()}
    try:
        model.load_state_dict(state)
    except RuntimeError as error:
        raise CheckpointError(f"the checkpoint's weights do not fit its description: {error}") from None
    return model


def save_checkpoint(path: str | Path, payload: dict) -> None:
    """Write ``payload`` (with ``format`` added) to ``path`` atomically. A payload holding a model has the entries
    of ``model_payload``."""
    payload = {"format": FORMAT, **payload}
    write_atomically(path, lambda handle: torch.save(payload, handle))


def load_checkpoint(path: str | Path, weights_only_ok: bool = True) -> dict:
    """Read and check a checkpoint; ``CheckpointError`` says what is wrong with it."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=weights_only_ok)
    except Exception as error:  # torch raises many types for truncated or foreign files
        reason = (str(error).strip().splitlines() or [""])[0]
        raise CheckpointError(f"{path} is not a readable bgai checkpoint ({type(error).__name__}: {reason})") from None
    if not isinstance(payload, dict) or any(key not in payload for key in REQUIRED):
        missing = [key for key in REQUIRED if not isinstance(payload, dict) or key not in payload]
        raise CheckpointError(f"{path} is not a bgai checkpoint: it lacks {', '.join(missing)}")
    if payload["format"] not in READABLE:
        raise CheckpointError(f"{path} has checkpoint format {payload['format']}; this bgai reads formats "
                              f"{', '.join(map(str, READABLE))}")
    version = payload["encoder_version"]
    if version not in encoding.VERSIONS or payload["n_inputs"] != encoding.n_features(version):
        known = ", ".join(f"{v} ({encoding.n_features(v)} inputs)" for v in encoding.VERSIONS)
        raise CheckpointError(
            f"{path} was trained with encoder version {version} ({payload['n_inputs']} inputs); "
            f"this bgai encodes positions with versions {known}"
        )
    phases = payload.get("phases", ["all"])
    if sorted(phases) not in KNOWN_PHASES:
        raise CheckpointError(f"{path} has nets for phases {phases}; bgai knows {' and '.join(map(str, KNOWN_PHASES))}")
    return payload


PLAYING_KEYS = ("config", "games", "seconds", "history")


def export_for_play(source: str | Path, target: str | Path) -> dict:
    """Write the playing part of a training checkpoint (no optimizer or random states) to ``target``."""
    payload = load_checkpoint(source)
    slim = {key: payload[key] for key in PLAYING_KEYS if key in payload}
    slim.update(model_payload(model_from_checkpoint(payload)))  # format 1 weights are written as format 2
    save_checkpoint(target, slim)
    return slim
