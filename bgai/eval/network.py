"""The equity network in torch, for training: encoded positions in, GNU Backgammon's five cumulative probabilities
out (``bgai.eval.weights`` says what they are, and evaluates the same network in numpy for play).

Every evaluation is from the side of the player on roll in the evaluated position. The five outputs are coherent
by construction: the network's five logits give a win probability and four conditional probabilities (a gammon
given a win, a backgammon given a gammon win, the same for losses), which multiply out to the cumulative ones.
"""

from __future__ import annotations

import torch
from torch import nn

from bgai.eval.weights import (  # noqa: F401 (its API)
    OUTPUTS,
    ModelSnapshot,
    check_growth,
    equity,
    flip,
    net_route,
    phase_nets,
)


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
        # (the logits to float32 first: under bfloat16 autocast, the learner's or Bot(bf16=True)'s, the products run
        # in bfloat16 and the probabilities are still computed, and differentiated, in float32)
        return cumulative(torch.sigmoid(self.head(self.body(x)).float()))


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


class EquityModel(nn.Module):
    """A bot's networks: one ``EquityNet`` per group of phases (``bgai.eval.weights.NET_SETS``), all reading the inputs
    of one encoder version (``bgai.eval.encoding``). This is the one network API: the bot evaluates with it, the
    trainers train it, checkpoints hold it.

    ``model(x, phase)`` evaluates N encoded positions, each by the net of its phase (``phase`` (N,) from
    ``bgai.core.phase.classify``; ignored when the model has one net).
    """

    route: torch.Tensor  # (a buffer: the net of each phase)

    def __init__(self, nets: dict[str, EquityNet], encoder_version: int) -> None:
        super().__init__()
        route = torch.from_numpy(net_route(list(nets)))  # ValueError unless the nets are one of bgai's sets
        self.nets = nn.ModuleDict(nets)
        self.encoder_version = int(encoder_version)
        self.register_buffer("route", route, persistent=False)

    @classmethod
    def of(cls, net: EquityModel | ModelSnapshot) -> EquityModel:
        """``net`` if it is a torch model; for a ``ModelSnapshot`` (the numpy weights play with), the torch model
        with exactly its weights, in eval mode, made once and kept on the snapshot."""
        if not isinstance(net, ModelSnapshot):
            return net
        if net._model is None:
            with torch.random.fork_rng(devices=[]):  # initialising it must not move the caller's torch RNG
                model = cls.create(net.hidden, net.phases, net.encoder_version)
            model.load_state_dict({key: torch.tensor(value) for key, value in net.weights.items()})
            net._model = model.eval()
        return net._model

    @classmethod
    def create(cls, hidden: tuple[int, ...], phases=("all",), encoder_version: int | None = None):
        """A freshly initialised model reading encoder ``encoder_version`` (default: the latest)."""
        from bgai.eval import encoding

        version = encoding.ENCODER_VERSION if encoder_version is None else encoder_version
        return cls({name: EquityNet(encoding.n_features(version), hidden) for name in phases}, version)

    @property
    def phases(self) -> tuple[str, ...]:
        return tuple(self.nets)

    def _first(self) -> EquityNet:
        """The first net (every net of a model has the same inputs and hidden layers)."""
        return next(iter(self._nets()))

    def _nets(self) -> list[EquityNet]:
        return [net for net in self.nets.values() if isinstance(net, EquityNet)]

    @property
    def n_inputs(self) -> int:
        return self._first().n_inputs

    @property
    def hidden(self) -> tuple[int, ...]:
        return self._first().hidden

    def forward(self, x: torch.Tensor, phase=None) -> torch.Tensor:
        nets = self._nets()
        if len(nets) == 1:
            return nets[0](x)
        which = self.route[torch.as_tensor(phase, dtype=torch.long)]
        out = x.new_empty((len(x), len(OUTPUTS)))
        for i, net in enumerate(nets):
            rows = torch.nonzero(which == i).flatten()
            if len(rows):
                out[rows] = net(x[rows]).to(out.dtype)  # (the input's dtype: bfloat16 under Bot(bf16=True)'s autocast)
        return out

    def reading(self, version: int) -> EquityModel:
        """A copy of this model that reads encoder ``version``'s inputs, which must include every input block of its
        own version: each first layer keeps its weights for those inputs and gives the new ones zero weight, so the
        copy computes the same function until it learns to use them (a run's ``init`` from a network trained on
        an older encoder). ``ValueError`` if ``version`` lacks one of the blocks."""
        from bgai.eval import encoding

        old, new = encoding.LAYOUTS[self.encoder_version], encoding.LAYOUTS[version]
        missing = [b.name for b in old.blocks if b.name not in new.by_name or new.by_name[b.name].size != b.size]
        if missing:
            raise ValueError(f"encoder version {version} lacks the inputs {', '.join(missing)} of version "
                             f"{self.encoder_version}")
        columns = torch.cat([torch.arange(new.by_name[b.name].start, new.by_name[b.name].stop) for b in old.blocks])
        nets = {}
        for name, net in zip(self.nets, self._nets()):
            wider = EquityNet(new.n_features, net.hidden)
            state = net.state_dict()
            first = state["body.0.weight"]
            weight = first.new_zeros((first.shape[0], new.n_features))
            weight[:, columns] = first
            state["body.0.weight"] = weight
            wider.load_state_dict(state)
            nets[name] = wider
        return EquityModel(nets, version)

    def grown(self, hidden: tuple[int, ...], seed: int = 0) -> EquityModel:
        """A copy of this model with the hidden layers ``hidden`` that computes the same function (Net2Net-style
        growth, Chen et al. 2016): each of its own layers widened to its new size, each new unit with seeded random
        incoming weights, as a fresh layer's, and zero weight out, so it starts silent and learns what to add; and
        the layers ``hidden`` adds beyond its own depth inserted before the head, each starting as the identity on
        the last hidden layer's units (exact, since what a ReLU layer passes on is never negative), then widened
        as the others. ``ValueError`` if ``hidden`` drops a layer, narrows one, or adds one narrower than the last
        hidden layer."""
        hidden = tuple(int(h) for h in hidden)
        check_growth(self.hidden, hidden)
        added = len(hidden) - len(self.hidden)
        generator = torch.Generator().manual_seed(seed)
        nets = {}
        for name, net in zip(self.nets, self._nets()):
            nets[name] = _widened(_deepened(net, added), hidden, generator)
        return EquityModel(nets, self.encoder_version)

    def describe(self) -> str:
        nets = " + ".join(f"{name} {list(net.hidden)}" for name, net in zip(self.nets, self._nets()))
        return f"{nets} hidden, encoder version {self.encoder_version} ({self.n_inputs} inputs)"


def _deepened(net: EquityNet, layers: int) -> EquityNet:
    """``net`` with ``layers`` more hidden layers before its head, each the identity on the last hidden layer."""
    if not layers:
        return net
    width = net.hidden[-1]
    deeper = EquityNet(net.n_inputs, net.hidden + (width,) * layers)
    state = deeper.state_dict()
    for key, value in net.state_dict().items():  # the body's layers keep their numbers; the head its name
        state[key] = value
    for k in range(len(net.hidden), len(deeper.hidden)):
        state[f"body.{2 * k}.weight"] = torch.eye(width)
        state[f"body.{2 * k}.bias"] = torch.zeros(width)
    deeper.load_state_dict(state)
    return deeper


def _widened(net: EquityNet, hidden: tuple[int, ...], generator: torch.Generator) -> EquityNet:
    """``net`` with each hidden layer widened to ``hidden``'s size (as many layers, none narrower): the new units'
    incoming weights a fresh layer's uniform initialisation, drawn from ``generator``, their outgoing weights 0."""
    if hidden == net.hidden:
        return net
    wider = EquityNet(net.n_inputs, hidden)
    state = wider.state_dict()
    old = net.state_dict()
    for k, layer in enumerate([f"body.{2 * k}" for k in range(len(hidden))] + ["head"]):
        weight, bias = old[f"{layer}.weight"], old[f"{layer}.bias"]
        out_old, in_old = weight.shape
        new_weight = state[f"{layer}.weight"]
        if k < len(hidden):  # the new units' incoming weights: a fresh layer's uniform initialisation
            bound = 1 / new_weight.shape[1] ** 0.5
            new_weight.copy_(torch.rand(new_weight.shape, generator=generator) * 2 * bound - bound)
            state[f"{layer}.bias"].copy_(torch.rand(len(new_weight), generator=generator) * 2 * bound - bound)
        new_weight[:, in_old:] = 0  # the new units of the layer below start silent
        new_weight[:out_old, :in_old] = weight
        state[f"{layer}.bias"][:out_old] = bias
    wider.load_state_dict(state)
    return wider
