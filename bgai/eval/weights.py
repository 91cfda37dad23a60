"""The network's outputs and its weights as numpy arrays, evaluated without torch: how bgai plays.

``bgai.eval.network`` defines the equity network in torch, for training. Playing needs only its forward pass, which this
module does in numpy on a ``ModelSnapshot`` of the weights: a bot loaded from a checkpoint (``bgai.eval.bot.load_bot``)
evaluates with it, so a hint or an evaluation never imports torch (seconds of start-up), and a pass over a
few positions skips torch's per-call overhead (docs/figures.md measures both). The same snapshot is what
worker processes get once per round (``bgai.core.workers``) and what the shipped network is stored as for play
(``save_npz`` / ``load_npz``, beside its checkpoint).

Network files are checked before they are trusted (``load_npz`` here, ``bgai.eval.checkpoint.load_checkpoint`` for
torch checkpoints): the declared architecture is bounded (``check_architecture``) before anything is allocated,
every array must have the dtype and shape it needs, the weights must be finite, the sha256 stored with them
(``content_hash``) must match, and the network's outputs on a few fixed positions must be probabilities
(``check_finite``, ``check_outputs``). Files written before the hash was stored still load, with every other check.

Every evaluation is from the side of the player on roll in the evaluated position. The five outputs are

    win, win_gammon, win_backgammon, lose_gammon, lose_backgammon

cumulative (gammons include backgammons); the network's five sigmoid outputs are a win probability and four
conditional ones (a gammon given a win, a backgammon given a gammon win, the same for losses) that multiply out
to the cumulative ones (``cumulative``). Cubeless money equity is then

    equity = 2 win - 1 + win_gammon + win_backgammon - lose_gammon - lose_backgammon.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import reprlib
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from bgai.core.errors import BgaiError
from bgai.core.files import write_atomically
from bgai.core.phase import BEAROFF, CONTACT, CRASHED, OVER, RACE

OUTPUTS = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")

#: The sets of nets a model may have (sorted: what a network file may hold), and the phases (``bgai.core.phase``)
#: each net of the set evaluates: one net for everything, a contact and a race net, or those two and a crashed
#: net (GNU Backgammon's three classes). A set covers every phase once: crashed positions are contact ones to a
#: model without a crashed net. (Finished games are scored exactly; a race net also sees bear-offs, for bots that
#: do not use the bear-off database.)
NET_SETS: dict[tuple[str, ...], dict[str, tuple[int, ...]]] = {
    ("all",): {"all": (OVER, BEAROFF, RACE, CONTACT, CRASHED)},
    ("contact", "race"): {"contact": (CONTACT, CRASHED), "race": (OVER, BEAROFF, RACE)},
    ("contact", "crashed", "race"): {"contact": (CONTACT,), "crashed": (CRASHED,), "race": (OVER, BEAROFF, RACE)},
}
KNOWN_PHASES = tuple(list(names) for names in NET_SETS)
#: How many phases there are: the length of a phase-to-net table.
N_PHASES = CRASHED + 1


def phase_nets(names) -> dict[str, tuple[int, ...]]:
    """The phases each of the nets ``names`` (a model's, in its order) evaluates; ``ValueError`` unless they are
    one of ``NET_SETS``."""
    key = tuple(sorted(names))
    if key not in NET_SETS:
        raise ValueError(f"the nets {list(names)} are not one of bgai's sets: "
                         f"{' or '.join(map(str, KNOWN_PHASES))}")
    return {name: NET_SETS[key][name] for name in names}


def check_growth(hidden: tuple[int, ...], grown: tuple[int, ...]) -> None:
    """``ValueError`` unless ``EquityModel.grown`` can grow hidden layers ``hidden`` to ``grown``: every layer
    kept, none narrower, and each added one at least as wide as the last."""
    hidden, grown = tuple(hidden), tuple(grown)
    if (not hidden or len(grown) < len(hidden) or any(new < old for new, old in zip(grown, hidden))
            or any(size < hidden[-1] for size in grown[len(hidden):])):
        raise ValueError(f"hidden layers {list(grown)} do not grow {list(hidden)}: a grown network keeps every "
                         f"layer, none narrower, and the layers it adds are as wide as the last at least")


def net_route(names) -> np.ndarray:
    """(``N_PHASES``,) int64: for each phase, the index in ``names`` of the net that evaluates it."""
    route = np.zeros(N_PHASES, dtype=np.int64)
    for i, phases in enumerate(phase_nets(names).values()):
        route[list(phases)] = i
    return route
#: The largest network a file may describe (units of a hidden layer, hidden layers): checked before anything is
#: allocated, so that a corrupted or crafted size is refused at once instead of asking for gigabytes.
MAX_HIDDEN, MAX_LAYERS = 4096, 4


class CheckpointError(BgaiError):
    """A checkpoint or network file that is missing, unreadable, corrupted or crafted, or made for another encoder
    or network. (Defined here, without torch, for ``.npz`` files; ``bgai.eval.checkpoint`` exports it too.)"""


def equity(probs):
    """Cubeless money equity of (N, 5) cumulative probabilities (numpy or torch), for the same player."""
    return 2 * probs[:, 0] - 1 + probs[:, 1] + probs[:, 2] - probs[:, 3] - probs[:, 4]


def flip(probs):
    """The same outcome distribution seen by the other player: its wins are our losses (numpy or torch)."""
    if isinstance(probs, np.ndarray):
        return np.stack([1 - probs[:, 0], probs[:, 3], probs[:, 4], probs[:, 1], probs[:, 2]], axis=1)
    import torch

    return torch.stack([1 - probs[:, 0], probs[:, 3], probs[:, 4], probs[:, 1], probs[:, 2]], dim=1)


def cumulative(conditional: np.ndarray) -> np.ndarray:
    """(N, 5) conditional probabilities (win, gammon|win, bg|gammon win, gammon|loss, bg|gammon loss) to the
    cumulative outputs (numpy; ``bgai.eval.network.cumulative`` is the same in torch)."""
    win = conditional[:, 0]
    win_gammon = win * conditional[:, 1]
    lose_gammon = (1 - win) * conditional[:, 3]
    return np.stack([win, win_gammon, win_gammon * conditional[:, 2], lose_gammon, lose_gammon * conditional[:, 4]],
                    axis=1)


#: The format of ``save_npz`` files.
NPZ_FORMAT = 1
#: The entries of a ``save_npz`` file's ``__meta__`` (``sha256`` since files carry one; older files lack it).
NPZ_META_KEYS = {"format", "hidden", "phases", "encoder_version", "info", "sha256"}
#: The most characters a ``save_npz`` file's ``__meta__`` may have (its info is a config and a few figures).
NPZ_META_CHARS = 1 << 20


def check_architecture(where, hidden, phases, encoder_version) -> tuple[tuple[int, ...], tuple[str, ...], int]:
    """The network a file declares, as (hidden, phases, encoder_version), once each field is known to be of the
    right type and within bounds (``MAX_LAYERS`` hidden layers of 1..``MAX_HIDDEN`` units, nets of
    ``KNOWN_PHASES``, an encoder version of ``bgai.eval.encoding.VERSIONS``); else ``CheckpointError`` naming
    ``where``. Nothing is allocated before this passes."""
    from bgai.eval import encoding

    if type(encoder_version) is not int or encoder_version not in encoding.VERSIONS:
        raise CheckpointError(f"{where} was made for encoder version {reprlib.repr(encoder_version)}; this bgai "
                              f"has {list(encoding.VERSIONS)}")
    if not isinstance(phases, (list, tuple)) or not all(isinstance(name, str) for name in phases) \
            or sorted(phases) not in KNOWN_PHASES:
        raise CheckpointError(f"{where} has nets for phases {reprlib.repr(phases)}; bgai knows "
                              f"{' and '.join(map(str, KNOWN_PHASES))}")
    if not isinstance(hidden, (list, tuple)) or len(hidden) > MAX_LAYERS \
            or not all(type(size) is int and 1 <= size <= MAX_HIDDEN for size in hidden):
        raise CheckpointError(f"{where} declares hidden layers {reprlib.repr(hidden)}; bgai reads at most "
                              f"{MAX_LAYERS} layers of 1 to {MAX_HIDDEN} units")
    return tuple(hidden), tuple(phases), encoder_version


def weight_shapes(hidden: tuple[int, ...], phases: tuple[str, ...], encoder_version: int) -> dict[str, tuple]:
    """The ``state_dict`` keys of the model of this architecture and each one's shape, in the model's order."""
    from bgai.eval import encoding

    widths = [encoding.n_features(encoder_version), *hidden, len(OUTPUTS)]
    shapes: dict[str, tuple[int, ...]] = {}
    for name in phases:
        keys = [f"nets.{name}.body.{2 * i}" for i in range(len(hidden))] + [f"nets.{name}.head"]
        for key, n_in, n_out in zip(keys, widths[:-1], widths[1:]):
            shapes[f"{key}.weight"], shapes[f"{key}.bias"] = (n_out, n_in), (n_out,)
    return shapes


def content_hash(value) -> str:
    """The sha256 (hex) of ``value``: nested dicts (in sorted key order), lists, tuples, plain values (by type and
    ``repr``) and numpy arrays or torch tensors (by dtype, shape and bytes). It is what a checkpoint stores beside
    its contents and checks when read: a changed byte in any weight, size or name gives another hash."""
    digest = hashlib.sha256()
    _feed(digest, value)
    return digest.hexdigest()


def _feed(digest, value) -> None:
    torch = sys.modules.get("torch")  # a value can only be a tensor if torch was imported
    if torch is not None and isinstance(value, torch.Tensor):
        tensor = value.detach().cpu().contiguous().reshape(-1)
        dtype, data = str(value.dtype).removeprefix("torch."), tensor.view(torch.uint8).numpy()
        digest.update(f"array {dtype} {tuple(value.shape)}\n".encode())
        digest.update(data)
    elif isinstance(value, np.ndarray):
        digest.update(f"array {value.dtype.str} {value.shape}\n".encode())
        digest.update(np.ascontiguousarray(value).reshape(-1).view(np.uint8))
    elif isinstance(value, dict):
        digest.update(f"dict {len(value)}\n".encode())
        for key, item in sorted(value.items(), key=lambda pair: (type(pair[0]).__name__, repr(pair[0]))):
            _feed(digest, key)
            _feed(digest, item)
    elif isinstance(value, (list, tuple)):
        digest.update(f"{'list' if isinstance(value, list) else 'tuple'} {len(value)}\n".encode())
        for item in value:
            _feed(digest, item)
    else:
        text = repr(value)
        digest.update(f"{type(value).__name__} {len(text)} {text}\n".encode())


#: Boards every loaded network is evaluated on (on-roll view): the start, a race, a bear-off and a crashed
#: position, so that each net of a split model is tried. A network whose outputs there are not probabilities is
#: refused.
PROBE_BOARDS = np.array([
    [0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0],
    [0, 0, 0, 0, 0, 4, 5, 0, 3, 0, 3, 0, 0, 0, 0, 0, -5, 0, 0, -5, -5, 0, 0, 0, 0, 0],
    [0, 2, 2, 2, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -3, -3, -3, -2, -2, -2, 0],
    [0, 9, 2, 2, 0, -2, 0, 0, 2, 0, 0, 0, 0, -5, 0, 0, 0, 0, 0, -4, -4, 0, 0, 0, 0, 0],
], dtype=np.int8)
_PROBES: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # encoder version -> PROBE_BOARDS encoded, their phases


def check_finite(weights: dict[str, np.ndarray], where) -> None:
    """``CheckpointError`` naming ``where`` unless every weight is a finite number."""
    if not all(np.isfinite(w).all() for w in weights.values()):
        raise CheckpointError(f"{where}: its weights are not all finite numbers")


def check_outputs(snapshot: ModelSnapshot, where) -> None:
    """``CheckpointError`` naming ``where`` unless ``snapshot``'s outputs on ``PROBE_BOARDS`` are probabilities
    (finite, in [0, 1]): a net that answers NaN or overflows is never played. Each net evaluates the probes of
    its phases by the dense forward pass, on its weights as stored."""
    if snapshot.encoder_version not in _PROBES:
        from bgai.core.phase import reference_classify
        from bgai.eval import encoding

        # the numpy references: checking a file loads no compiler
        _PROBES[snapshot.encoder_version] = (encoding.reference_encode(PROBE_BOARDS, version=snapshot.encoder_version),
                                             reference_classify(PROBE_BOARDS))
    x, phase = _PROBES[snapshot.encoder_version]
    for name, phases in phase_nets(snapshot.phases).items():
        keys = [f"nets.{name}.body.{2 * i}" for i in range(len(snapshot.hidden))] + [f"nets.{name}.head"]
        layers = [(snapshot.weights[f"{key}.weight"].T, snapshot.weights[f"{key}.bias"]) for key in keys]
        with np.errstate(all="ignore"):  # an overflowing net is what this looks for
            probs = _forward(layers, x[np.isin(phase, phases)], False, None)
        if not (np.isfinite(probs).all() and (probs >= 0).all() and (probs <= 1).all()):
            raise CheckpointError(f"{where}: its {name} net's outputs on fixed positions (the start, a race, a "
                                  f"bear-off, a crashed one) are not probabilities: {probs.tolist()}")


class ModelSnapshot:
    """An ``EquityModel``'s shape and weights as numpy arrays (its ``state_dict``, by the same keys), with the
    model's forward pass in numpy (``probabilities``).

    It is what a bot plays with (``bgai.eval.bot.load_bot``) and what worker processes and Ray actors get once per
    round (``bgai.core.workers``): plain arrays pickle compactly and read zero-copy from Ray's object store. ``model()``
    rebuilds the torch model from them (once, on first use; it is never sent back)."""

    def __init__(self, hidden: tuple[int, ...], phases: tuple[str, ...], encoder_version: int,
                 weights: dict[str, np.ndarray]) -> None:
        self.hidden, self.phases = tuple(int(h) for h in hidden), tuple(phases)
        self.encoder_version = int(encoder_version)
        self.weights = weights
        self._model: Any = None  # the torch model of these weights, once bgai.eval.network.EquityModel.of made it
        self._layers: list[list[tuple[np.ndarray, np.ndarray]]] | None = None
        self._route: np.ndarray | None = None
        self._heads: list[np.ndarray] | None = None
        self._tables: list[functools.partial] | None = None

    @classmethod
    def of(cls, model) -> ModelSnapshot:
        """The snapshot of a torch ``EquityModel`` (a snapshot is its own)."""
        if isinstance(model, ModelSnapshot):
            return model
        weights = {key: value.detach().cpu().numpy().copy() for key, value in model.state_dict().items()}
        return cls(model.hidden, model.phases, model.encoder_version, weights)

    @property
    def nbytes(self) -> int:
        return sum(array.nbytes for array in self.weights.values())

    @property
    def n_inputs(self) -> int:
        return int(self.weights[f"nets.{self.phases[0]}.body.0.weight"].shape[1]) if self.hidden else \
            int(self.weights[f"nets.{self.phases[0]}.head.weight"].shape[1])

    def describe(self) -> str:
        nets = " + ".join(f"{name} {list(self.hidden)}" for name in self.phases)
        return f"{nets} hidden, encoder version {self.encoder_version} ({self.n_inputs} inputs)"

    def eval(self) -> ModelSnapshot:
        """Itself (a snapshot never trains), as ``torch.nn.Module.eval`` for a model."""
        return self

    # The forward pass in numpy ------------------------------------------------------------------------------

    def _net_layers(self) -> list[list[tuple[np.ndarray, np.ndarray]]]:
        """Per net, its (weight (in, out), bias) pairs, float32 and contiguous for ``x @ w``; the head last."""
        if self._layers is None:
            layers = []
            for name in self.phases:
                prefix = f"nets.{name}."
                keys = [f"{prefix}body.{2 * i}" for i in range(len(self.hidden))] + [f"{prefix}head"]
                layers.append([(np.ascontiguousarray(self.weights[f"{key}.weight"].T, dtype=np.float32),
                                np.asarray(self.weights[f"{key}.bias"], dtype=np.float32)) for key in keys])
            route = net_route(self.phases)
            # each net's head weights also as (out, in), the rows bgai.eval.kernels.head takes dot products with
            self._heads = [np.ascontiguousarray(net[-1][0].T) for net in layers]
            self._layers, self._route = layers, route
        return self._layers

    def probabilities(self, x: np.ndarray, phase: np.ndarray | None = None) -> np.ndarray:
        """(N, 5) float32 cumulative probabilities of N encoded positions ``x`` (N, n_inputs), each by the net of
        its phase (``phase`` (N,) from ``bgai.core.phase.classify``; ignored with one net): the torch model's forward
        pass, in numpy, every layer a compiled kernel (``bgai.eval.kernels``): the first from the inputs that
        changed since the row before (several times faster on a move's or a lookahead's boards), the values within
        about 1e-6 of ``reference_probabilities``'."""
        return self._probabilities(self._net_layers(), np.ascontiguousarray(x, dtype=np.float32), phase, True)

    def reference_probabilities(self, x: np.ndarray, phase: np.ndarray | None = None) -> np.ndarray:
        """``probabilities`` as dense numpy products, layer by layer: the reference the compiled pass is tested
        against. Not a hot path."""
        x = np.ascontiguousarray(x, dtype=np.float32)
        with _one_blas_thread(len(x) < MANY_THREADS_ROWS):
            return self._probabilities(self._net_layers(), x, phase, False)

    def board_probabilities(self, boards: np.ndarray, phase: np.ndarray | None = None) -> np.ndarray:
        """(N, 5) float32 cumulative probabilities of N boards (int8, on-roll view), each by the net of its phase:
        ``probabilities`` of their inputs (``bgai.eval.encoding.encode`` for the snapshot's encoder version). On encoder
        version 0 (Tesauro's units, the pruning nets') the boards are not encoded: the first layer is summed from
        their cells (``bgai.eval.kernels.board_first_layer``), the same values within about 1e-5."""
        if self.encoder_version != 0 or not self.hidden:
            from bgai.eval import encoding

            return self.probabilities(encoding.encode(boards, version=self.encoder_version), phase)
        nets, firsts = self._net_layers(), self._board_first_layers()
        return self._probabilities(nets, np.ascontiguousarray(boards, dtype=np.int8), phase, True, firsts)

    def _board_first_layers(self) -> list[functools.partial]:
        """Per net, its first layer from the boards (encoder version 0): ``_first_layer_from_cells`` with the net's
        table, bias and contact weights, made from the inputs of every single-cell board (the inputs but
        ``contact`` add up cell by cell)."""
        if self._tables is None:
            from bgai.eval import encoding

            layout = encoding.LAYOUTS[0]
            cells = np.zeros((1 + 26 * 31, 26), dtype=np.int8)  # an empty board, then each cell at each count
            cell, count = np.divmod(np.arange(26 * 31), 31)
            cells[1 + np.arange(26 * 31), cell] = count - 15
            x = encoding.reference_encode(cells, version=0).astype(np.float64)
            x[:, layout.contact] = 0
            tables = []
            for w, b in (net[0] for net in self._net_layers()):
                sums = x @ w.astype(np.float64)
                table = np.ascontiguousarray((sums[1:] - sums[0]).reshape(26, 31, -1), dtype=np.float32)
                tables.append(functools.partial(_first_layer_from_cells, table, (b + sums[0]).astype(np.float32),
                                                w[layout.contact].astype(np.float32)))
            self._tables = tables  # whole, at once: a rollout's threads share the snapshot
        return self._tables

    def _probabilities(self, nets, x: np.ndarray, phase, compiled: bool, firsts=None) -> np.ndarray:
        """Each row of ``x`` by the net of its phase; ``firsts``: per net, its first layer (``_forward``'s
        ``first``), when the rows are not its encoded inputs."""
        heads, route = self._heads, self._route
        assert heads is not None and route is not None  # (made with the layers, ``_net_layers``)
        if len(nets) == 1:
            return _forward(nets[0], x, compiled, heads[0], firsts and firsts[0])
        phase = np.asarray(phase)
        if len(phase):  # one net for them all (one board, most moves' boards): no routing, no copies
            first = int(route[phase[0]])
            if len(phase) == 1 or (route[phase] == first).all():
                return _forward(nets[first], x, compiled, heads[first], firsts and firsts[first])
        which = route[phase]
        out = np.empty((len(x), len(OUTPUTS)), dtype=np.float32)
        for i, layers in enumerate(nets):
            rows = np.flatnonzero(which == i)
            if len(rows):
                out[rows] = _forward(layers, x[rows], compiled, heads[i], firsts and firsts[i])
        return out

    # Files ------------------------------------------------------------------------------------------------------

    def save_npz(self, path: str | Path, info: dict | None = None) -> None:
        """Write the snapshot (and ``info``, JSON-able: games, config) to ``path`` atomically, for ``load_npz``, with
        the sha256 of it all (``content_hash``). The weights are written as float32, what they play in."""
        weights = {key: np.ascontiguousarray(value, dtype="<f4") for key, value in self.weights.items()}
        meta = json.loads(json.dumps({"format": NPZ_FORMAT, "hidden": list(self.hidden), "phases": list(self.phases),
                                      "encoder_version": self.encoder_version, "info": info or {}}))
        meta["sha256"] = content_hash({"meta": meta, "weights": weights})  # of the meta as load_npz reads it
        buffer = io.BytesIO()
        np.savez(buffer, __meta__=np.array(json.dumps(meta)), **weights)  # type: ignore[arg-type]
        write_atomically(path, lambda handle: handle.write(buffer.getvalue()))

    @classmethod
    def load_npz(cls, path: str | Path) -> tuple[ModelSnapshot, dict]:
        """The snapshot saved at ``path`` and its ``info``; ``CheckpointError`` (a ``BgaiError``) if the file is
        not one, is corrupted, or its weights do not fit the network it describes (see the module docstring). The
        archive is read member by member, each array's header checked against the declared network before its
        data is read."""
        path = Path(path)
        if not path.is_file():
            raise CheckpointError(f"no network file at {path}")
        try:
            with zipfile.ZipFile(path) as archive:
                meta = json.loads(str(_read_npy(archive, "__meta__.npy", path, None)))
                if not isinstance(meta, dict) or meta.get("format") != NPZ_FORMAT:
                    raise CheckpointError(f"{path} is not a readable bgai network (its meta is not bgai's format "
                                          f"{NPZ_FORMAT})")
                if not set(meta) <= NPZ_META_KEYS:
                    raise CheckpointError(f"{path} is not a readable bgai network (its meta has entries "
                                          f"{sorted(set(meta) - NPZ_META_KEYS)} that bgai never writes)")
                hidden, phases, version = check_architecture(path, meta.get("hidden"), meta.get("phases"),
                                                             meta.get("encoder_version"))
                shapes = weight_shapes(hidden, phases, version)
                stored = set(archive.namelist()) - {"__meta__.npy"}
                if stored != {f"{key}.npy" for key in shapes}:
                    raise CheckpointError(f"{path}: its weights do not fit a {list(hidden)} network of "
                                          f"{list(phases)} on encoder version {version}")
                weights = {key: _read_npy(archive, f"{key}.npy", path, shape) for key, shape in shapes.items()}
        except CheckpointError:
            raise
        except Exception as error:  # zipfile, numpy and json raise many types for foreign or truncated files
            reason = (str(error).strip().splitlines() or [""])[0]
            raise CheckpointError(f"{path} is not a readable bgai network ({type(error).__name__}: {reason})") \
                from None
        info = meta.get("info") or {}
        if not isinstance(info, dict):
            raise CheckpointError(f"{path} is not a readable bgai network (its info is not a dict)")
        check_finite(weights, path)  # (before the hash: the more telling error)
        if "sha256" in meta:
            stored_hash = meta.pop("sha256")
            if stored_hash != content_hash({"meta": meta, "weights": weights}):
                raise CheckpointError(f"{path} is corrupted: its contents do not match the sha256 stored with them")
        snapshot = cls(hidden, phases, version, weights)
        check_outputs(snapshot, path)
        return snapshot, info

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_model": None, "_layers": None, "_route": None, "_heads": None, "_tables": None}


#: Passes of fewer boards than this run numpy's BLAS on one thread. OpenBLAS splits a product as small as a 0-ply
#: move's (41 x 250 by 250 x 512) between threads, and on a busy machine waiting for the other thread costs a
#: hundred times the product itself.
MANY_THREADS_ROWS = 1024
_BLAS: list = []  # threadpoolctl's controllers of the BLAS libraries numpy loaded, found on first use


class _one_blas_thread:
    """A context that keeps numpy's BLAS on one thread (when ``active``), then restores its thread count."""

    __slots__ = ("active", "saved")

    def __init__(self, active: bool) -> None:
        self.active = active
        self.saved: list = []

    def __enter__(self) -> None:
        if not self.active:
            return
        if not _BLAS:
            from threadpoolctl import ThreadpoolController

            _BLAS.append(ThreadpoolController().select(user_api="blas").lib_controllers)
        for lib in _BLAS[0]:
            self.saved.append(lib.get_num_threads())
            if self.saved[-1] != 1:
                lib.set_num_threads(1)

    def __exit__(self, *exc) -> None:
        if self.active:
            for lib, n in zip(_BLAS[0], self.saved):
                if n != 1:
                    lib.set_num_threads(n)


def one_blas_thread() -> _one_blas_thread:
    """A context that keeps numpy's BLAS on one thread, whatever the size of the products inside it (rollouts,
    whose passes are many and large, and worker processes, one per core)."""
    return _one_blas_thread(True)


def _read_npy(archive: zipfile.ZipFile, name: str, path: Path, shape: tuple | None) -> np.ndarray:
    """The array ``name`` of an ``.npz`` archive, once its header says it is float32 of ``shape`` (``None``: the
    ``__meta__`` string, at most ``NPZ_META_CHARS``): nothing larger than the declared network is read. Reading it
    to its end checks the member's CRC."""
    with archive.open(name) as handle:
        version = np.lib.format.read_magic(handle)
        if version not in ((1, 0), (2, 0)):
            raise CheckpointError(f"{path} is not a readable bgai network ({name} has .npy version {version})")
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
            np.lib.format.read_array_header_2_0
        stored_shape, fortran, dtype = read_header(handle)
        if shape is None:
            fits = stored_shape == () and dtype.kind == "U" and dtype.itemsize <= 4 * NPZ_META_CHARS
        else:
            fits = stored_shape == shape and dtype == np.dtype("<f4")
        if not fits or fortran:
            needs = f"a string of at most {NPZ_META_CHARS} characters" if shape is None else \
                f"float32 {shape}; its weights do not fit the network it describes"
            order = " in Fortran order" if fortran else ""
            raise CheckpointError(f"{path} is not a readable bgai network: its {name} is {dtype} {stored_shape}"
                                  f"{order}, not {needs}")
        nbytes = dtype.itemsize * int(np.prod(stored_shape))
        data = handle.read(nbytes + 1)
    if len(data) != nbytes:
        raise CheckpointError(f"{path} is corrupted: its {name} holds {len(data)} bytes, not {nbytes}")
    return np.frombuffer(data, dtype=dtype).reshape(stored_shape).copy()


def _first_layer_from_cells(table: np.ndarray, bias: np.ndarray, contact: np.ndarray, boards: np.ndarray, w: np.ndarray,
                       b: np.ndarray, out: np.ndarray) -> None:
    """A first layer in ``_forward`` from boards (encoder version 0): ``bgai.eval.kernels.board_first_layer`` with the
    net's tables (``ModelSnapshot._board_first_layers``), which already hold ``w`` and ``b``."""
    from bgai.eval import kernels

    kernels.board_first_layer(boards, table, bias, contact, out)


def _forward(layers: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray, compiled: bool,
             head_t: np.ndarray | None, first=None) -> np.ndarray:
    """The MLP's (N, 5) cumulative probabilities: ReLU hidden layers, then the head's sigmoids (conditional
    probabilities) multiplied out (``cumulative``). With ``compiled``, by ``bgai.core.kernels``: the first hidden
    layer from the inputs that changed since the row before (``first_layer``), and the head in one pass
    (``head``, with ``head_t``, the head's weights as (out, in)); the layers between over the nonzero units of
    the layer before only (``sparse_layer``: about a fifth of a ReLU layer's units are active on a board).
    ``first``: the first layer's kernel instead of ``first_layer``, called as it is (``x``, its weights, bias
    and output), for rows that are not encoded inputs (compiled only: ``ModelSnapshot.board_probabilities``)."""
    h, hidden = x, layers[:-1]
    if compiled:
        from bgai.eval import kernels  # (numba's import, a quarter of a second, only where a compiled pass runs)

        for number, (w, b) in enumerate(hidden):
            out = np.empty((len(x), w.shape[1]), dtype=np.float32)
            ((first or kernels.first_layer) if number == 0 else kernels.sparse_layer)(h, w, b, out)
            h = out
        hidden = []
    for w, b in hidden:
        h = h @ w
        h += b
        np.maximum(h, 0, out=h)
    w, b = layers[-1]
    if compiled:
        out = np.empty((len(x), len(OUTPUTS)), dtype=np.float32)
        kernels.head(h, np.ascontiguousarray(w.T) if head_t is None else head_t, b, out)
        return out
    z = h @ w
    z += b
    with np.errstate(over="ignore"):  # exp(-z) of a very negative logit is inf: the probability is 0
        return cumulative(1 / (1 + np.exp(-z)))
