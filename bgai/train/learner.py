"""The learner every training method shares: the losses, the one learning-rate schedule (``linear_lr``), and
``Learner``, which owns a model and its optimizer and fits it to positions and their targets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bgai.core.phase import classify
from bgai.eval import encoding
from bgai.eval.weights import equity
from bgai.train.config import PRECISIONS

if TYPE_CHECKING:
    import torch

    from bgai.eval.network import EquityModel


def linear_lr(lr: float, lr_end: float, share: float) -> float:
    """The learning rate ``share`` (0..1) of the way through a schedule falling linearly from ``lr`` to ``lr_end``:
    every method's schedule. A negative ``lr_end`` keeps ``lr`` throughout."""
    return lr if lr_end < 0 else lr + (lr_end - lr) * share


def resolve_device(device: str) -> str:
    """The torch device a run's ``device`` setting names: ``"auto"`` is ``"cuda"`` where torch sees a CUDA device,
    else ``"cpu"``; ``"cpu"``, ``"cuda"`` and ``"cuda:N"`` as they are. ``ValueError`` for a CUDA device that is not
    there."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        index = int(device.partition(":")[2] or 0)
        if not torch.cuda.is_available() or index >= torch.cuda.device_count():
            raise ValueError(f"device {device!r}: torch sees {torch.cuda.device_count()} CUDA device(s) here; use "
                             f"'cpu' or 'auto'")
    return device


def bce(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Binary cross-entropy of the five cumulative outputs against targets in [0, 1]: the loss of every learner."""
    from torch import nn

    return nn.functional.binary_cross_entropy(pred.clamp(1e-6, 1 - 1e-6), target)


def outcomes(probs: torch.Tensor) -> torch.Tensor:
    """(N, 5) cumulative probabilities (win, win gammon, win backgammon, lose gammon, lose backgammon) to the (N, 6)
    chances of the six outcomes: a single win, a gammon win, a backgammon win, and the same three losses. Each
    difference is clamped at 0 (a target averaged from rollouts with variance reduction can put a gammon a hair
    above its win)."""
    import torch

    win, win_gammon, win_bg, lose_gammon, lose_bg = probs.unbind(1)
    six = torch.stack([win - win_gammon, win_gammon - win_bg, win_bg,
                       1 - win - lose_gammon, lose_gammon - lose_bg, lose_bg], dim=1)
    return six.clamp(min=0)


def outcome_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the six outcomes (``outcomes``) of ``pred`` against those of ``target``, a mean over the
    positions: the loss of a 6-way softmax over the game's results (wildbg's), here on bgai's own head, whose chain
    of conditional probabilities is a full parametrisation of the same six chances. Unlike ``bce`` it weighs each
    gammon and backgammon chance by how often its win or loss happens."""
    t = outcomes(target)
    t = t / t.sum(1, keepdim=True).clamp(min=1e-12)
    return -(t * outcomes(pred).clamp(min=1e-7).log()).sum(1).mean()


#: The supervised learners' losses: ``bce`` (binary cross-entropy of the five cumulative outputs, the default) and
#: ``outcomes`` (``outcome_loss``, the cross-entropy of the six outcomes).
LOSSES = {"bce": bce, "outcomes": outcome_loss}


def pair_loss(pred: torch.Tensor, target: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
    """Mean squared error of the cubeless equities of ``pred`` about the mean of their group, against the same of
    ``target`` (both (n, 5) probabilities; ``groups`` (n,) int64): the error of the differences between the
    members of a group, whatever error they share. A group of one adds nothing (its centred values are 0)."""
    import torch

    _, index = torch.unique(groups, return_inverse=True)
    k = int(index.max()) + 1 if len(index) else 0
    count = torch.zeros(k, device=pred.device).index_add_(0, index, torch.ones(len(index), device=pred.device))

    def centred(values: torch.Tensor) -> torch.Tensor:
        return values - (torch.zeros(k, device=values.device).index_add_(0, index, values) / count)[index]

    return ((centred(equity(pred)) - centred(equity(target))) ** 2).mean()


def inputs(model: EquityModel, boards: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """The encoded positions and their phases, as ``model`` reads them."""
    import torch

    return (torch.from_numpy(encoding.encode(boards, version=model.encoder_version)),
            torch.from_numpy(classify(boards)))


class Learner:
    """Owns a model and its optimizer (Adam, or AdamW: decoupled ``weight_decay``); trains on experience with
    ``loss`` (``LOSSES``: binary cross-entropy on the 5 outputs, or the cross-entropy of the 6 outcomes).

    ``device``: where ``fit`` computes (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...; ``resolve_device``). The model and
    the optimizer's state go there for each ``fit`` and come back to the CPU after it, so everything else (self-play
    on snapshots of the weights, checkpoints, benchmarks) sees a CPU model whatever the device.

    ``precision``: ``"fp32"``, or ``"bf16"``: the forward and backward passes' matrix products in bfloat16 (torch's
    autocast; the weights, the optimizer, the probabilities and the loss stay float32), on a CUDA device or a CPU
    with bfloat16 instructions (``bf16_supported``), float32 elsewhere (where torch would only emulate it, slower).
    What it saves, and what it costs in play: docs/training.md."""

    def __init__(self, model: EquityModel, lr: float, batch_size: int, epochs: int, optimizer: str = "adam",
                 weight_decay: float = 0.0, loss: str = "bce", device: str = "cpu", precision: str = "fp32"):
        import torch

        from bgai.eval.network import bf16_supported

        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {loss!r}")
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        self.loss = LOSSES[loss]
        self.model = model
        self.device = torch.device(device)
        # On the CPU, torch's fused Adam: one compiled pass over each weight tensor per step instead of a dozen
        # tensor operations, the same update (tests/test_training.py); a round of the growth run's
        # 512-512-256-256 network learns in 15% less time in bfloat16, 6% in float32
        # (benchmarks/learner_bench.py). CUDA keeps torch's default (foreach).
        self.fused = self.device.type == "cpu"
        self.optimizer: torch.optim.Optimizer
        if optimizer == "adamw":
            self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay,
                                               fused=self.fused or None)
        elif optimizer == "adam":
            self.optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay,
                                              fused=self.fused or None)
        else:
            raise ValueError(f"optimizer must be 'adam' or 'adamw', got {optimizer!r}")
        self.batch_size = batch_size
        self.epochs = epochs
        self.bf16 = precision == "bf16" and (self.device.type == "cuda" or bf16_supported())

    def load_optimizer_state(self, state: dict) -> None:
        """Go on from an optimizer's ``state_dict`` (a checkpoint's), made fused or not: its moments and step
        counts, with this learner's own way of stepping (torch's ``load_state_dict`` would take the saved one)."""
        self.optimizer.load_state_dict(state)
        for group in self.optimizer.param_groups:
            group["fused"] = self.fused or None
            if self.fused:
                group["foreach"] = None

    def _move(self, device) -> None:
        """The model and the optimizer's state to ``device``."""
        import torch

        self.model.to(device)
        for state in self.optimizer.state.values():
            for key, value in state.items():
                if torch.is_tensor(value) and key != "step":  # (Adam keeps its step count on the CPU)
                    state[key] = value.to(device)

    def fit(self, boards: np.ndarray, targets: np.ndarray, rng: np.random.Generator,
            lr: tuple[float, float] | None = None, progress: bool = False, groups: np.ndarray | None = None,
            pairs: float = 0.0, pair_targets: np.ndarray | None = None) -> float:
        """Train on ``boards`` (on-roll view) and their ``targets`` ((N, 5) probabilities) for ``epochs`` shuffled
        passes; returns the mean loss. ``lr`` ``(start, end)``: the learning rate moves from start to end over
        these passes (``linear_lr``); ``None``: it stays as it is.

        ``groups`` (N,) int: positions that are plays of one decision share a number (-1: none); with ``pairs``
        above 0 a decision's positions are shuffled together into the same minibatch, and the loss adds ``pairs``
        times the mean squared error of their cubeless equities about their decision's mean (``pair_loss``): the
        differences between a decision's plays, which choosing a play reads, learned as such. ``pair_targets``
        (N, 5): the targets whose differences that loss reads, where they are not ``targets``."""
        import torch
        from tqdm.auto import tqdm

        self.model.train()
        x, phase = inputs(self.model, boards)
        y = torch.from_numpy(np.asarray(targets, np.float32)).clamp(0, 1)
        on_device = self.device.type != "cpu"
        if on_device:
            self._move(self.device)
            x, phase, y = x.to(self.device), phase.to(self.device), y.to(self.device)
        if pair_targets is not None and np.shape(pair_targets) != tuple(y.shape):
            raise ValueError(f"pair_targets must have the targets' shape {tuple(y.shape)}, got "
                             f"{np.shape(pair_targets)}")
        y_pairs = y if pair_targets is None else \
            torch.from_numpy(np.asarray(pair_targets, np.float32)).clamp(0, 1).to(self.device)
        decision = None  # with pairs: each position's decision, numbered 0.. (a group of its own where none)
        if groups is not None and pairs > 0:
            numbers = np.asarray(groups, dtype=np.int64)
            if numbers.shape != (len(x),):
                raise ValueError(f"groups must hold one number a position ({len(x)}), got shape {numbers.shape}")
            numbers = np.where(numbers >= 0, numbers, numbers.max(initial=0) + 1 + np.arange(len(numbers)))
            decision = np.unique(numbers, return_inverse=True)[1].reshape(-1)
        steps = self.epochs * -(-len(x) // self.batch_size)
        losses: list[float] = []
        with tqdm(total=steps, unit="batch", disable=not progress, desc="training", leave=False) as bar:
            for _ in range(self.epochs):
                if decision is not None:  # the decisions in a random order, each one's plays together
                    rank = rng.permutation(int(decision.max()) + 1)[decision]
                    order = torch.from_numpy(np.argsort(rank, kind="stable"))
                else:
                    order = torch.from_numpy(rng.permutation(len(x)))
                order = order.to(self.device)
                for start in range(0, len(x), self.batch_size):
                    if lr is not None:
                        for group in self.optimizer.param_groups:
                            group["lr"] = linear_lr(*lr, len(losses) / steps)
                    batch = order[start:start + self.batch_size]
                    with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.bf16):
                        pred = self.model(x[batch], phase[batch])
                    loss = self.loss(pred, y[batch])
                    if decision is not None:
                        loss = loss + pairs * pair_loss(pred, y_pairs[batch],
                                                        torch.from_numpy(decision[batch.cpu().numpy()]).to(self.device))
                    self.optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    self.optimizer.step()
                    losses.append(loss.item())
                    bar.update()
        if on_device:
            self._move("cpu")
        self.model.eval()
        return float(np.mean(losses)) if losses else float("nan")


def evaluation_error(model: EquityModel, boards: np.ndarray, targets: np.ndarray) -> dict:
    """The model's cross-entropy and mean absolute cubeless-equity error against ``targets``."""
    import torch

    model.eval()
    with torch.inference_mode():
        x, phase = inputs(model, boards)
        pred = model(x, phase)
        y = torch.from_numpy(targets).clamp(0, 1)
        return {"bce": float(bce(pred, y)), "equity_mae": float((equity(pred) - equity(y)).abs().mean())}
