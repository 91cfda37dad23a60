"""Self-describing checkpoints, written atomically and checked when read.

A checkpoint is a dict of plain values and tensors (it loads with ``torch.load(weights_only=True)``): the format
number, the encoder version and input width the network was trained with, the hidden layer sizes, the nets by
phase (``bgai.eval.network.EquityModel``), the model and optimizer states, the training config, the games played, the
random-number generator states and the benchmark history (``REQUIRED`` and ``OPTIONAL``, nothing else), and the
sha256 of all of that (``bgai.eval.weights.content_hash``). Format 1 (bgai 0.1's TD checkpoints) held one net for
every phase and still loads. It is written to a temporary file in the same folder, flushed to disk and renamed over
the old one, so a crash never leaves a half-written checkpoint behind.

``load_checkpoint`` trusts nothing in the file: every field must have its type, the declared network must be
within ``bgai.eval.weights.MAX_LAYERS`` layers of ``MAX_HIDDEN`` units, every tensor must be float32 of the shape that
network needs (all before a model is built), the weights finite, the stored sha256 equal to the contents' (files
written before it was stored have none, and load with every other check), and the network's outputs on a few
positions probabilities. Whatever fails, it raises ``CheckpointError`` naming the file.
"""

from __future__ import annotations

import reprlib
from pathlib import Path

import torch

from bgai.core.files import write_atomically
from bgai.eval import encoding
from bgai.eval.network import EquityModel
from bgai.eval.weights import (
    CheckpointError,
    ModelSnapshot,
    check_architecture,
    check_finite,
    check_outputs,
    content_hash,
    weight_shapes,
)

FORMAT = 2
READABLE = (1, 2)
REQUIRED = ("format", "encoder_version", "n_inputs", "hidden", "model")
#: The entries a checkpoint may have beside ``REQUIRED``, and the types each may be.
OPTIONAL = {"phases": (list, tuple), "sha256": (str,), "optimizer": (dict, type(None)), "config": (dict,),
            "stage": (int,), "step": (int,), "games": (int,), "seconds": (int, float), "numpy_rng": (dict,),
            "torch_rng": (torch.Tensor,), "history": (list,), "play_weights": (dict, type(None)),
            "average": (dict, type(None)), "validation": (dict, type(None)), "fit": (dict, type(None))}


def model_payload(model: EquityModel) -> dict:
    """The checkpoint entries that describe and hold ``model``."""
    return {"encoder_version": model.encoder_version, "n_inputs": model.n_inputs, "hidden": list(model.hidden),
            "phases": list(model.phases), "model": model.state_dict()}


def model_from_checkpoint(payload: dict) -> EquityModel:
    """The ``EquityModel`` of a checked checkpoint (``load_checkpoint``), with its weights."""
    phases = tuple(payload.get("phases", ("all",)))
    model = EquityModel.create(tuple(payload["hidden"]), phases, payload["encoder_version"])
    try:
        model.load_state_dict(_model_state(payload))
    except RuntimeError as error:
        raise CheckpointError(f"the checkpoint's weights do not fit its description: {error}") from None
    return model


def snapshot_from_checkpoint(payload: dict) -> ModelSnapshot:
    """The network of a checked checkpoint (``load_checkpoint``) as a ``ModelSnapshot``, what a bot plays with,
    without building the torch model."""
    weights = {key: value.detach().numpy().copy() for key, value in _model_state(payload).items()}
    return ModelSnapshot(tuple(payload["hidden"]), tuple(payload.get("phases", ("all",))), payload["encoder_version"],
                         weights)


def _model_state(payload: dict) -> dict:
    """The checkpoint's model state, by ``EquityModel``'s keys (format 1 held one ``EquityNet``'s)."""
    state = payload["model"]
    return {f"nets.all.{key}": value for key, value in state.items()} if payload["format"] == 1 else state


def save_checkpoint(path: str | Path, payload: dict) -> None:
    """Write ``payload`` (with ``format`` added, and the sha256 of it all) to ``path`` atomically. A payload holding
    a model has the entries of ``model_payload``; its other entries are those of ``OPTIONAL``."""
    payload = {"format": FORMAT, **payload}
    payload.pop("sha256", None)  # (a loaded checkpoint saved again gets the hash of what it holds now)
    unknown = set(payload) - set(REQUIRED) - set(OPTIONAL)
    if unknown:
        raise ValueError(f"a checkpoint has no entries {sorted(unknown)}; add them to bgai.eval.checkpoint.OPTIONAL")
    payload["sha256"] = content_hash(payload)
    write_atomically(path, lambda handle: torch.save(payload, handle))


def load_checkpoint(path: str | Path, weights_only_ok: bool = True) -> dict:
    """Read and check a checkpoint (see the module docstring); ``CheckpointError`` says what is wrong with it. The
    payload comes back without its ``sha256``."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=weights_only_ok)
    except Exception as error:  # torch, zipfile and pickle raise many types for truncated or foreign files
        reason = (str(error).strip().splitlines() or [""])[0]
        raise CheckpointError(f"{path} is not a readable bgai checkpoint ({type(error).__name__}: {reason})") from None
    if not isinstance(payload, dict) or any(key not in payload for key in REQUIRED):
        missing = [key for key in REQUIRED if not isinstance(payload, dict) or key not in payload]
        raise CheckpointError(f"{path} is not a bgai checkpoint: it lacks {', '.join(missing)}")
    unknown = [key for key in payload if key not in REQUIRED and key not in OPTIONAL]
    if unknown:
        raise CheckpointError(f"{path} is not a bgai checkpoint: it has entries {unknown!r} that bgai never writes")
    for key, types in OPTIONAL.items():
        if key in payload and not isinstance(payload[key], types):
            raise CheckpointError(f"{path} is not a readable bgai checkpoint: its {key} is a "
                                  f"{type(payload[key]).__name__}")
    if type(payload["format"]) is not int or payload["format"] not in READABLE:
        raise CheckpointError(f"{path} has checkpoint format {reprlib.repr(payload['format'])}; this bgai reads "
                              f"formats {', '.join(map(str, READABLE))}")
    version, n_inputs = payload["encoder_version"], payload["n_inputs"]
    if version not in encoding.VERSIONS or type(n_inputs) is not int or n_inputs != encoding.n_features(version):
        known = ", ".join(f"{v} ({encoding.n_features(v)} inputs)" for v in encoding.VERSIONS)
        raise CheckpointError(f"{path} was trained with encoder version {reprlib.repr(version)} "
                              f"({reprlib.repr(n_inputs)} inputs); this "
                              f"bgai encodes positions with versions {known}")
    if payload["format"] == 1 and payload.get("phases", ["all"]) != ["all"]:
        raise CheckpointError(f"{path} has format 1, which holds one net, but nets for phases "
                              f"{reprlib.repr(payload['phases'])}")
    hidden, phases, version = check_architecture(path, payload["hidden"], payload.get("phases", ["all"]), version)
    shapes = weight_shapes(hidden, phases, version)
    nets = [ModelSnapshot(hidden, phases, version, _arrays(path, "model", _model_state(payload), shapes))]
    for entry in ("play_weights", "average"):  # a TD stage's weights of its next round, and its moving average
        if payload.get(entry) is not None:
            nets.append(ModelSnapshot(hidden, phases, version, _arrays(path, entry, payload[entry], shapes)))
    for net in nets:
        check_finite(net.weights, path)
    if "sha256" in payload:
        stored = payload.pop("sha256")
        if stored != content_hash(payload):
            raise CheckpointError(f"{path} is corrupted: its contents do not match the sha256 stored with them")
    for net in nets:
        check_outputs(net, path)
    return payload


def _arrays(path: Path, name: str, state, shapes: dict[str, tuple]) -> dict:
    """The tensors of the state dict ``state`` (the checkpoint's entry ``name``) as numpy arrays (the same memory),
    once they are exactly the float32 tensors of ``shapes``; else ``CheckpointError``."""
    fault = None if isinstance(state, dict) else f"is a {type(state).__name__}, not a dict of tensors"
    if fault is None and set(state) != set(shapes):
        missing, extra = [key for key in shapes if key not in state], [key for key in state if key not in shapes]
        fault = f"lacks {reprlib.repr(missing)} and has {reprlib.repr(extra)} besides"
    if fault:
        raise CheckpointError(f"{path}: its weights do not fit the network it describes: its {name} {fault}")
    for key, shape in shapes.items():
        tensor = state[key]
        if not isinstance(tensor, torch.Tensor) or tensor.layout != torch.strided or tensor.dtype != torch.float32 \
                or tuple(tensor.shape) != shape:
            found = f"{str(tensor.dtype).removeprefix('torch.')} {tuple(tensor.shape)}" \
                if isinstance(tensor, torch.Tensor) else type(tensor).__name__
            raise CheckpointError(f"{path}: its weights do not fit the network it describes: its {name} {key} is "
                                  f"{found}, not float32 {shape}")
    return {key: state[key].detach().numpy() for key in shapes}


PLAYING_KEYS = ("config", "games", "seconds", "history")


def export_for_play(source: str | Path, target: str | Path) -> dict:
    """Write the playing part of a training checkpoint (no optimizer or random states) to ``target``."""
    return export_network([source], target)


def export_network(sources, target: str | Path, average: bool = False) -> dict:
    """Write one network made from the checkpoints ``sources`` to ``target`` as a playing checkpoint (no optimizer
    or random states; ``bgai export --network``) and return what was written.

    One source: its network, with its config, games, seconds and benchmark history. ``average``: each source's
    moving average of its weights instead (a TD stage with ``average_half_life`` keeps one in its run's
    checkpoint while the stage runs), without the history (the benchmarks were the model's). Several: the mean of
    their weights, which must be networks of one shape (layers, nets, encoder); the first's config, the most games
    and seconds of theirs, and no history (their benchmarks are not the mean's). ``target`` may not be one of the
    sources (a run's checkpoint would lose its training state)."""
    sources = [Path(source) for source in sources]
    if not sources:
        raise ValueError("export_network needs at least one checkpoint")
    target = Path(target)
    if target.is_dir():
        raise CheckpointError(f"{target} is a folder; give the checkpoint file's name")
    if any(target.resolve() == source.resolve() for source in sources):
        raise CheckpointError(f"{target} is one of the checkpoints the network is made from; write it to another "
                              f"file (a run's checkpoint would lose its training state)")
    payloads = [load_checkpoint(source) for source in sources]
    shape = network_shape(payloads[0])
    for source, payload in zip(sources[1:], payloads[1:]):
        if network_shape(payload) != shape:
            raise CheckpointError(f"{source} is a network of another shape than {sources[0]} "
                                  f"({network_shape(payload)} against {shape}): only networks of one shape average")
    states = []
    for source, payload in zip(sources, payloads):
        if average and payload.get("average") is None:
            raise CheckpointError(f"{source} keeps no moving average of its weights (a TD stage with "
                                  f"average_half_life keeps one in its run's checkpoint.pt while the stage runs; "
                                  f"at the stage's end it is generations/STAGE-avg.pt)")
        states.append(payload["average"] if average else _model_state(payload))
    mean = {key: (sum(state[key].double() for state in states) / len(states)).float() for key in states[0]}
    first = payloads[0]
    slim = {key: first[key] for key in PLAYING_KEYS if key in first and (len(payloads) == 1 or key == "config")}
    if average or len(payloads) > 1:
        slim.pop("history", None)
        for key in ("games", "seconds"):
            if all(key in payload for payload in payloads):
                slim[key] = max(payload[key] for payload in payloads)
    model = model_from_checkpoint({**first, "format": FORMAT, "model": mean})
    slim.update(model_payload(model))  # format 1 weights are written as format 2
    try:
        save_checkpoint(target, slim)
    except OSError as error:
        raise CheckpointError(f"cannot write {target}: {error.strerror or error}") from None
    return slim


def network_shape(payload: dict) -> str:
    """What networks must share to be averaged, in words: layers, nets and encoder ("512-256, nets all, encoder 0")."""
    phases = payload.get("phases", ("all",))
    return f"{'-'.join(map(str, payload['hidden']))}, nets {','.join(phases)}, encoder {payload['encoder_version']}"
