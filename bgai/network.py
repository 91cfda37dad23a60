"""The equity network: encoded positions in, GNU Backgammon's five cumulative probabilities out.

Every evaluation is from the side of the player on roll in the evaluated position. The five outputs are

    win, win_gammon, win_backgammon, lose_gammon, lose_backgammon

with gammons including backgammons (so ``win >= win_gammon >= win_backgammon`` and the same for losses). They are
coherent by construction: the network's five logits give a win probability and four conditional probabilities
(a gammon given a win, a backgammon given a gammon win, the same for losses), which multiply out to the
cumulative ones. Cubeless money equity is then

    equity = 2 win - 1 + win_gammon + win_backgammon - lose_gammon - lose_backgammon.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from bgai.phase import BEAROFF, CONTACT, OVER, RACE

OUTPUTS = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")

#: The nets a model may have, and the phases (``bgai.phase``) each evaluates. A model's nets cover every phase
#: once: ``("all",)`` or ``("contact", "race")``. (Finished games are scored exactly; a race net also sees
#: bear-offs, for bots that do not use the bear-off database.)
PHASE_NETS = {"all": (OVER, BEAROFF, RACE, CONTACT), "contact": (CONTACT,), "race": (OVER, BEAROFF, RACE)}


class EquityNet(nn.Module):
    """An MLP from ``n_inputs`` features to the five cumulative probabilities (see the module docstring)."""

    def __init__(self, n_inputs: int, hidden: tuple[int, ...] = (128,)) -> None:
        super().__init__()
        self.n_inputs = n_inputs
        self.hidden = tuple(int(h) for h in hidden)
        layers: list[nn.Module] = []
        width = n_inputs
        for size in self.hidden:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, len(OUTPUTS))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return cumulative(torch.sigmoid(self.head(self.body(x))))


def cumulative(conditional: torch.Tensor) -> torch.Tensor:
    """(N, 5) conditional probabilities (win, gammon|win, bg|gammon win, gammon|loss, bg|gammon loss) to the
    cumulative outputs."""
    win = conditional[:, 0]
    win_gammon = win * conditional[:, 1]
    lose_gammon = (1 - win) * conditional[:, 3]
    return torch.stack(
        [win, win_gammon, win_gammon * conditional[:, 2], lose_gammon, lose_gammon * conditional[:, 4]], dim=1
    )


def bf16_supported() -> bool:
    """Whether this CPU multiplies bfloat16 matrices natively (oneDNN with AVX-512 BF16 or AMX). Elsewhere torch
    emulates bfloat16, slower than float32, so ``Bot(bf16=True)`` is only worth it where this is true."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def equity(probs):
    """Cubeless money equity of (N, 5) cumulative probabilities (numpy or torch), for the same player."""
    return 2 * probs[:, 0] - 1 + probs[:, 1] + probs[:, 2] - probs[:, 3] - probs[:, 4]


def flip(probs):
    """The same outcome distribution seen by the other player: its wins are our losses."""
    if isinstance(probs, torch.Tensor):
        return torch.stack([1 - probs[:, 0], probs[:, 3], probs[:, 4], probs[:, 1], probs[:, 2]], dim=1)
    return np.stack([1 - probs[:, 0], probs[:, 3], probs[:, 4], probs[:, 1], probs[:, 2]], axis=1)


class EquityModel(nn.Module):
    """A bot's networks: one ``EquityNet`` per group of phases (``PHASE_NETS``), all reading the inputs of one
    encoder version (``bgai.encoding``). This is the one network API: the bot evaluates with it, the trainers
    train it, checkpoints hold it.

    ``model(x, phase)`` evaluates N encoded positions, each by the net of its phase (``phase`` (N,) from
    ``bgai.phase.classify``; ignored when the model has one net).
    """

    def __init__(self, nets: dict[str, EquityNet], encoder_version: int) -> None:
        super().__init__()
        covered = sorted(p for name in nets for p in PHASE_NETS[name])
        if covered != sorted(PHASE_NETS["all"]):
            raise ValueError(f"the nets {sorted(nets)} must cover every phase exactly once: "
                             f"('all',) or ('contact', 'race')")
        self.nets = nn.ModuleDict(nets)
        self.encoder_version = int(encoder_version)
        route = torch.zeros(max(PHASE_NETS["all"]) + 1, dtype=torch.long)
        for i, name in enumerate(self.nets):
            route[list(PHASE_NETS[name])] = i
        self.register_buffer("route", route, persistent=False)

    @classmethod
    def create(cls, hidden: tuple[int, ...], phases=("all",), encoder_version: int | None = None):
        """A freshly initialised model reading encoder ``encoder_version`` (default: the latest)."""
        from bgai import encoding

        version = encoding.ENCODER_VERSION if encoder_version is None else encoder_version
        return cls({name: EquityNet(encoding.n_features(version), hidden) for name in phases}, version)

    @property
    def phases(self) -> tuple[str, ...]:
        return tuple(self.nets)

    @property
    def n_inputs(self) -> int:
        return next(iter(self.nets.values())).n_inputs

    @property
    def hidden(self) -> tuple[int, ...]:
        return next(iter(self.nets.values())).hidden

    def forward(self, x: torch.Tensor, phase=None) -> torch.Tensor:
        nets = list(self.nets.values())
        if len(nets) == 1:
            return nets[0](x)
        which = self.route[torch.as_tensor(phase, dtype=torch.long)]
        out = x.new_empty((len(x), len(OUTPUTS)))
        for i, net in enumerate(nets):
            rows = torch.nonzero(which == i).flatten()
            if len(rows):
                out[rows] = net(x[rows])
        return out

    def describe(self) -> str:
        nets = " + ".join(f"{name} {list(net.hidden)}" for name, net in self.nets.items())
        return f"{nets} hidden, encoder version {self.encoder_version} ({self.n_inputs} inputs)"


class ModelSnapshot:
    """An ``EquityModel``'s shape and weights as numpy arrays: what worker processes and Ray actors get once per
    round (``bgai.workers``). Plain arrays pickle compactly and read zero-copy from Ray's object store; the model is
    rebuilt from them once per snapshot, on first use (``model()``), and never sent back."""

    def __init__(self, hidden: tuple[int, ...], phases: tuple[str, ...], encoder_version: int,
                 weights: dict[str, np.ndarray]) -> None:
        self.hidden, self.phases, self.encoder_version = tuple(hidden), tuple(phases), int(encoder_version)
        self.weights = weights
        self._model: EquityModel | None = None

    @classmethod
    def of(cls, model: EquityModel) -> ModelSnapshot:
        weights = {key: value.detach().cpu().numpy().copy() for key, value in model.state_dict().items()}
        return cls(model.hidden, model.phases, model.encoder_version, weights)

    @property
    def nbytes(self) -> int:
        return sum(array.nbytes for array in self.weights.values())

    def model(self) -> EquityModel:
        """The model, in eval mode, with exactly the snapshot's weights."""
        if self._model is None:
            with torch.random.fork_rng(devices=[]):  # initialising it must not move the caller's torch RNG
                model = EquityModel.create(self.hidden, self.phases, self.encoder_version)
            model.load_state_dict({key: torch.tensor(value) for key, value in self.weights.items()})
            self._model = model.eval()
        return self._model

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_model": None}
