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

OUTPUTS = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")


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


def equity(probs):
    """Cubeless money equity of (N, 5) cumulative probabilities (numpy or torch), for the same player."""
    return 2 * probs[:, 0] - 1 + probs[:, 1] + probs[:, 2] - probs[:, 3] - probs[:, 4]


def flip(probs):
    """The same outcome distribution seen by the other player: its wins are our losses."""
    if isinstance(probs, torch.Tensor):
        return torch.stack([1 - probs[:, 0], probs[:, 3], probs[:, 4], probs[:, 1], probs[:, 2]], dim=1)
    return np.stack([1 - probs[:, 0], probs[:, 3], probs[:, 4], probs[:, 1], probs[:, 2]], axis=1)
