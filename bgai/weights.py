"""The network's outputs and its weights as numpy arrays, evaluated without torch: how bgai plays.

``bgai.network`` defines the equity network in torch, for training. Playing needs only its forward pass, which this
module does in numpy on a ``ModelSnapshot`` of the weights: a bot loaded from a checkpoint (``bgai.bot.load_bot``)
evaluates with it, so a hint or an evaluation never imports torch (about 1.4 s of start-up), and a pass over a
few positions skips torch's per-call overhead (a 0-ply move's 20-odd afterstates: 0.20 ms in numpy against
0.26 ms in torch on one thread, the same within 10% on batches of hundreds or thousands). The same snapshot is what
worker processes get once per round (``bgai.workers``) and what the shipped network is stored as for play
(``save_npz`` / ``load_npz``, beside its checkpoint).

Every evaluation is from the side of the player on roll in the evaluated position. The five outputs are

    win, win_gammon, win_backgammon, lose_gammon, lose_backgammon

cumulative (gammons include backgammons); the network's five sigmoid outputs are a win probability and four
conditional ones (a gammon given a win, a backgammon given a gammon win, the same for losses) that multiply out
to the cumulative ones (``cumulative``). Cubeless money equity is then

    equity = 2 win - 1 + win_gammon + win_backgammon - lose_gammon - lose_backgammon.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from bgai.errors import BgaiError
from bgai.files import write_atomically
from bgai.phase import BEAROFF, CONTACT, OVER, RACE

OUTPUTS = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")

#: The nets a model may have, and the phases (``bgai.phase``) each evaluates. A model's nets cover every phase
#: once: ``("all",)`` or ``("contact", "race")``. (Finished games are scored exactly; a race net also sees
#: bear-offs, for bots that do not use the bear-off database.)
PHASE_NETS = {"all": (OVER, BEAROFF, RACE, CONTACT), "contact": (CONTACT,), "race": (OVER, BEAROFF, RACE)}
#: The sets of nets a model may have, sorted: what a network file may hold.
KNOWN_PHASES = (["all"], ["contact", "race"])


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
    cumulative outputs (numpy; ``bgai.network.cumulative`` is the same in torch)."""
    win = conditional[:, 0]
    win_gammon = win * conditional[:, 1]
    lose_gammon = (1 - win) * conditional[:, 3]
    return np.stack([win, win_gammon, win_gammon * conditional[:, 2], lose_gammon, lose_gammon * conditional[:, 4]],
                    axis=1)


#: The format of ``save_npz`` files.
NPZ_FORMAT = 1


class ModelSnapshot:
    """An ``EquityModel``'s shape and weights as numpy arrays (its ``state_dict``, by the same keys), with the
    model's forward pass in numpy (``probabilities``).

    It is what a bot plays with (``bgai.bot.load_bot``) and what worker processes and Ray actors get once per
    round (``bgai.workers``): plain arrays pickle compactly and read zero-copy from Ray's object store. ``model()``
    rebuilds the torch model from them (once, on first use; it is never sent back)."""

    def __init__(self, hidden: tuple[int, ...], phases: tuple[str, ...], encoder_version: int,
                 weights: dict[str, np.ndarray]) -> None:
        self.hidden, self.phases, self.encoder_version = tuple(int(h) for h in hidden), tuple(phases), int(encoder_version)
        self.weights = weights
        self._model = None
        self._layers: list[list[tuple[np.ndarray, np.ndarray]]] | None = None
        self._route: np.ndarray | None = None
        self._heads: list[np.ndarray] | None = None

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

    def model(self):
        """The torch model, in eval mode, with exactly the snapshot's weights."""
        if self._model is None:
            import torch

            from bgai.network import EquityModel

            with torch.random.fork_rng(devices=[]):  # initialising it must not move the caller's torch RNG
                model = EquityModel.create(self.hidden, self.phases, self.encoder_version)
            model.load_state_dict({key: torch.tensor(value) for key, value in self.weights.items()})
            self._model = model.eval()
        return self._model

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
            route = np.zeros(max(PHASE_NETS["all"]) + 1, dtype=np.int64)
            for i, name in enumerate(self.phases):
                route[list(PHASE_NETS[name])] = i
            # each net's head weights also as (out, in), the rows bgai.kernels.head takes dot products with
            self._heads = [np.ascontiguousarray(net[-1][0].T) for net in layers]
            self._layers, self._route = layers, route
        return self._layers

    def probabilities(self, x: np.ndarray, phase: np.ndarray | None = None, compiled: bool = True) -> np.ndarray:
        """(N, 5) float32 cumulative probabilities of N encoded positions ``x`` (N, n_inputs), each by the net of
        its phase (``phase`` (N,) from ``bgai.phase.classify``; ignored with one net): the torch model's forward
        pass, in numpy. ``compiled``: the first layer by ``bgai.kernels.first_layer`` (each row from the inputs
        that changed since the row before: several times faster on a move's or a lookahead's boards, the values
        within about 1e-6), else as a dense product."""
        nets = self._net_layers()
        x = np.ascontiguousarray(x, dtype=np.float32)
        with _one_blas_thread(len(x) < MANY_THREADS_ROWS):
            return self._probabilities(nets, x, phase, compiled)

    def _probabilities(self, nets, x: np.ndarray, phase, compiled: bool) -> np.ndarray:
        if len(nets) == 1:
            return _forward(nets[0], x, compiled, self._heads[0])
        which = self._route[np.asarray(phase, dtype=np.int64)]
        out = np.empty((len(x), len(OUTPUTS)), dtype=np.float32)
        for i, layers in enumerate(nets):
            rows = np.flatnonzero(which == i)
            if len(rows):
                out[rows] = _forward(layers, x[rows], compiled, self._heads[i])
        return out

    # Files ------------------------------------------------------------------------------------------------------

    def save_npz(self, path: str | Path, info: dict | None = None) -> None:
        """Write the snapshot (and ``info``, JSON-able: games, config) to ``path`` atomically, for ``load_npz``."""
        meta = {"format": NPZ_FORMAT, "hidden": list(self.hidden), "phases": list(self.phases),
                "encoder_version": self.encoder_version, "info": info or {}}
        buffer = io.BytesIO()
        np.savez(buffer, __meta__=np.array(json.dumps(meta)), **self.weights)
        write_atomically(path, lambda handle: handle.write(buffer.getvalue()))

    @classmethod
    def load_npz(cls, path: str | Path) -> tuple[ModelSnapshot, dict]:
        """The snapshot saved at ``path`` and its ``info``; ``BgaiError`` if the file is not one, or its weights
        do not fit the shape it describes."""
        from bgai import encoding

        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as stored:
                meta = json.loads(str(stored["__meta__"]))
                weights = {key: stored[key] for key in stored.files if key != "__meta__"}
            hidden, phases = tuple(int(h) for h in meta["hidden"]), tuple(meta["phases"])
            version, info = int(meta["encoder_version"]), dict(meta.get("info") or {})
            if meta.get("format") != NPZ_FORMAT:
                raise ValueError(f"format {meta.get('format')!r}, this bgai reads {NPZ_FORMAT}")
        except Exception as error:  # numpy, zipfile and json raise many types for foreign or truncated files
            reason = (str(error).strip().splitlines() or [""])[0]
            raise BgaiError(f"{path} is not a readable bgai network ({type(error).__name__}: {reason})") from None
        if version not in encoding.VERSIONS:
            raise BgaiError(f"{path} was made for encoder version {version}; this bgai has {list(encoding.VERSIONS)}")
        if sorted(phases) not in KNOWN_PHASES:
            raise BgaiError(f"{path} has nets for phases {list(phases)}; bgai knows "
                            f"{' and '.join(map(str, KNOWN_PHASES))}")
        widths = [encoding.n_features(version), *hidden, len(OUTPUTS)]
        expected = {}
        for name in phases:
            keys = [f"nets.{name}.body.{2 * i}" for i in range(len(hidden))] + [f"nets.{name}.head"]
            for key, (n_in, n_out) in zip(keys, zip(widths[:-1], widths[1:])):
                expected[f"{key}.weight"], expected[f"{key}.bias"] = (n_out, n_in), (n_out,)
        shapes = {key: value.shape for key, value in weights.items()}
        if shapes != expected or not all(np.issubdtype(w.dtype, np.floating) for w in weights.values()):
            raise BgaiError(f"{path}: its weights do not fit a {list(hidden)} network of {list(phases)} on encoder "
                            f"version {version}")
        if not all(np.isfinite(w).all() for w in weights.values()):
            raise BgaiError(f"{path}: its weights are not all finite numbers")
        return cls(hidden, phases, version, weights), info

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_model": None, "_layers": None, "_route": None, "_heads": None}


#: Passes of fewer boards than this run numpy's BLAS on one thread. OpenBLAS splits a product as small as a 0-ply
#: move's (41 x 250 by 250 x 512) between threads, and on a busy 2-core machine that took 16 ms instead of 0.14.
MANY_THREADS_ROWS = 1024
_BLAS: list = []  # threadpoolctl's controllers of the BLAS libraries numpy loaded, found on first use


class _one_blas_thread:
    """A context that keeps numpy's BLAS on one thread (when ``active``), then restores its thread count."""

    __slots__ = ("active", "saved")

    def __init__(self, active: bool) -> None:
        self.active, self.saved = active, []

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


def _forward(layers: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray, compiled: bool,
             head_t: np.ndarray) -> np.ndarray:
    """The MLP's (N, 5) cumulative probabilities: ReLU hidden layers, then the head's sigmoids (conditional
    probabilities) multiplied out (``cumulative``). With ``compiled``, by ``bgai.kernels``: the first hidden
    layer from the inputs that changed since the row before (``first_layer``), and the head in one pass
    (``head``, with ``head_t``, the head's weights as (out, in)). (The layers between stay dense products: about a
    quarter of the first layer's units are active on a board, but a compiled sum over them was slower than the
    BLAS product of all of them.)"""
    h, hidden = x, layers[:-1]
    if compiled:
        from bgai import kernels

        if hidden:
            w, b = hidden[0]
            h = np.empty((len(x), w.shape[1]), dtype=np.float32)
            kernels.first_layer(x, w, b, h)
            hidden = hidden[1:]
    for w, b in hidden:
        h = h @ w
        h += b
        np.maximum(h, 0, out=h)
    w, b = layers[-1]
    if compiled:
        out = np.empty((len(x), len(OUTPUTS)), dtype=np.float32)
        kernels.head(h, head_t, b, out)
        return out
    z = h @ w
    z += b
    with np.errstate(over="ignore"):  # exp(-z) of a very negative logit is inf: the probability is 0
        return cumulative(1 / (1 + np.exp(-z)))
