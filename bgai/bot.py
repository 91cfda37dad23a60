"""A bot: an equity network that evaluates positions and chooses plays, one position or a batch at a time.

Every evaluation is from the side of the player on roll in the position evaluated. To choose a play, the bot
evaluates every legal afterstate (where the opponent is on roll), turns each evaluation around to the mover's side
and plays the one with the highest cubeless equity. Finished games are scored exactly, never by the network.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from bgai import encoding
from bgai.checkpoint import load_checkpoint
from bgai.cube import CubeDecision, CubeEquities, CubeState, cube_equities, decide
from bgai.errors import BgaiError
from bgai.game import game_over, result_points
from bgai.movegen import afterstates
from bgai.network import EquityNet, equity, flip
from bgai.players.base import segment_argmax
from bgai.position import Position, parse_dice


@dataclass(frozen=True)
class Evaluation:
    """Cubeless probabilities and equity for the player on roll (gammons include backgammons)."""

    win: float
    win_gammon: float
    win_backgammon: float
    lose_gammon: float
    lose_backgammon: float
    equity: float

    def __str__(self) -> str:
        return (
            f"win {100 * self.win:.1f}% (gammon {100 * self.win_gammon:.1f}%, backgammon "
            f"{100 * self.win_backgammon:.1f}%)  lose gammon {100 * self.lose_gammon:.1f}% (backgammon "
            f"{100 * self.lose_backgammon:.1f}%)  equity {self.equity:+.3f}"
        )


def exact_probabilities(boards: np.ndarray) -> np.ndarray:
    """(N, 5) outcome of finished games for the player on roll, who has lost (the mover bore off last)."""
    points = result_points(boards)
    probs = np.zeros((len(boards), 5), dtype=np.float32)
    probs[:, 3] = points >= 2
    probs[:, 4] = points == 3
    return probs


# The 21 distinct rolls and their weights out of 36 (a non-double comes two ways).
ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)], dtype=np.int8)
ROLL_WEIGHTS = np.where(ROLLS[:, 0] == ROLLS[:, 1], 1.0, 2.0) / 36.0
MAX_PLIES = 1


class Bot:
    """An equity network with ``plies`` of lookahead. It is a ``bgai.players.Player`` too.

    0-ply evaluates a position with the network. n-ply averages, over the 21 rolls of the player on roll, the
    (n-1)-ply evaluation of the play it would make with that roll (chosen at 0-ply), seen from its side. A bot
    choosing a play at n-ply evaluates every afterstate at n-ply: at 1-ply, each candidate is judged by the
    opponent's best reply to each of its rolls.
    """

    def __init__(self, net: EquityNet, *, name: str = "bgai", plies: int = 0, info: dict | None = None) -> None:
        if not (isinstance(plies, int) and 0 <= plies <= MAX_PLIES):
            raise BgaiError(f"plies must be 0..{MAX_PLIES} (deeper lookahead comes with the evaluator), got {plies!r}")
        self.net = net.eval()
        self.name = name
        self.plies = plies
        self.info = info or {}

    # Batched core ---------------------------------------------------------------------------------------------

    @torch.inference_mode()
    def probabilities(self, boards: np.ndarray) -> np.ndarray:
        """(N, 5) cumulative probabilities of N boards (on-roll view), finished games scored exactly."""
        boards = np.asarray(boards, dtype=np.int8)
        probs = self.net(torch.from_numpy(encoding.encode(boards))).numpy()
        over = game_over(boards)
        if over.any():
            probs[over] = exact_probabilities(boards[over])
        return probs

    def lookahead(self, boards: np.ndarray, plies: int) -> np.ndarray:
        """(N, 5) probabilities of N boards (on-roll view) at ``plies`` of lookahead (see the class docstring).

        All positions of one level go through the network in one batch.
        """
        boards = np.asarray(boards, dtype=np.int8)
        if plies == 0:
            return self.probabilities(boards)
        n = len(boards)
        probs = np.zeros((n, 5), dtype=np.float64)
        over = game_over(boards)
        if over.any():
            probs[over] = exact_probabilities(boards[over])
        live = np.flatnonzero(~over)
        if len(live) == 0:
            return probs.astype(np.float32)
        # Every live position with every roll, its plays chosen at 0-ply, then evaluated one ply shallower.
        expanded = np.repeat(boards[live], len(ROLLS), axis=0)
        rolls = np.tile(ROLLS, (len(live), 1))
        moves = afterstates(expanded, rolls, validate=False)
        pick = segment_argmax(equity(flip(self.probabilities(moves.after))), moves.owner, len(expanded))
        replies = flip(self.lookahead(moves.after[pick], plies - 1).astype(np.float64))
        weights = np.tile(ROLL_WEIGHTS, len(live))[:, None]
        probs[live] = (replies * weights).reshape(len(live), len(ROLLS), 5).sum(axis=1)
        return probs.astype(np.float32)

    def choose(self, boards, after, owner, rng=None, dice=None):
        """Index into ``after`` of the best play of each position (the Player interface)."""
        mover_equity = equity(flip(self.lookahead(after, self.plies)))
        return segment_argmax(mover_equity, owner, len(boards))

    # One position ---------------------------------------------------------------------------------------------

    def evaluate(self, pos: Position) -> Evaluation:
        """The evaluation of ``pos`` for the player on roll, before it rolls, at the bot's plies."""
        return self.evaluate_many([pos])[0]

    def evaluate_many(self, positions) -> list[Evaluation]:
        boards = np.stack([p.board for p in positions])
        probs = self.lookahead(boards, self.plies).astype(np.float64)
        return [Evaluation(*row.tolist(), float(equity(row[None])[0])) for row in probs]

    def choose_move(self, pos: Position, dice):
        """The play the bot picks for ``pos`` with ``dice`` (a ``Move``): the first of ``rank_moves``."""
        return self.rank_moves(pos, dice)[0][0]

    def rank_moves(self, pos: Position, dice):
        """Every legal play with its cubeless equity for the mover, best first."""
        moves = pos.legal_moves(parse_dice(dice))
        after = np.stack([m.after.board for m in moves])
        values = equity(flip(self.lookahead(after, self.plies)))
        order = np.argsort(-values, kind="stable")
        return [(moves[i], float(values[i])) for i in order]

    def choose_many(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        """The chosen afterstates (N×26, opponent's view) of N positions and rolls."""
        moves = afterstates(boards, dice)
        return moves.after[self.choose(boards, moves.after, moves.owner)]

    # The cube (bgai.cube: Janowski's cubeful equities from the bot's cubeless probabilities at its plies) -----

    def cube_equities(self, boards: np.ndarray, state: CubeState) -> CubeEquities:
        """Cubeful equities of N positions (on-roll view, before the roll) with the cubes of ``state``."""
        boards = np.asarray(boards, dtype=np.int8)
        return cube_equities(self.lookahead(boards, self.plies), boards, state)

    def cube_actions(self, boards: np.ndarray, state: CubeState) -> tuple[np.ndarray, np.ndarray]:
        """(double, take): whether the player on roll of each position should double, and whether its opponent
        should take a double (the cube-player interface of ``bgai.game``)."""
        eq = self.cube_equities(boards, state)
        return eq.should_double, eq.should_take

    def cube_decision(self, pos: Position, cube: int = 1, owner="centered", match=None, *, jacoby: bool = False,
                      beavers: bool = False) -> CubeDecision:
        """The cube decision of the player on roll in ``pos``, before it rolls (see ``bgai.cube.decide``).

        ``cube`` 1..64; ``owner`` "centered", "me" (the player on roll) or "opponent"; ``match`` ``None`` for a
        money game or a ``bgai.match.MatchScore``; ``jacoby`` and ``beavers`` are money-game options.
        """
        probs = self.lookahead(pos.board[None], self.plies)[0]
        return decide(probs, pos.board, cube, owner, match, jacoby=jacoby, beavers=beavers)


SHIPPED = Path(__file__).resolve().parent / "data" / "bgai-default.pt"


def load_bot(path: str | Path | None = None, plies: int = 0) -> Bot:
    """The bot of a checkpoint; ``None`` loads the network shipped with bgai."""
    path = SHIPPED if path is None else Path(path)
    checkpoint = load_checkpoint(path, weights_only_ok=True)
    net = EquityNet(checkpoint["n_inputs"], tuple(checkpoint["hidden"]))
    net.load_state_dict(checkpoint["model"])
    name = f"bgai:{path.stem}" + (f"@{plies}ply" if plies else "")
    return Bot(net, name=name, plies=plies, info={k: checkpoint.get(k) for k in ("games", "config")})
