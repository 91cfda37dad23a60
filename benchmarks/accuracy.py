"""How close a bgai bot's judgement is to GNU Backgammon's 0-ply, on positions from games gnubg plays against itself.

* Equity: mean absolute difference between the bot's cubeless equity of a position (player on roll, before the
  roll) and ``gnubg_nn.probabilities(board, 0)``'s.
* Checker play: for each (position, roll), gnubg 0-ply evaluates every legal play; the bot's error is the equity
  of gnubg's favourite minus the equity of the bot's choice, both as gnubg sees them. Reported per move (all
  moves, including forced ones) and per non-forced move, with the share of moves where the bot plays gnubg's pick.

The headline checker-play figure is now ``benchmarks/move_accuracy.py``: every play judged by gnubg at 2-ply,
beside gnubg 0-ply's own error. This one stays as the quick check against gnubg 0-ply.

gnubg is the judge here only; nothing it says reaches training.

    python benchmarks/accuracy.py [--checkpoint P] [--games 100] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from bgai.bot import exact_probabilities, load_bot
from bgai.game import game_over
from bgai.movegen import afterstates
from bgai.network import equity, flip
from bgai.players.gnubg import from_gnubg, require_gnubg, to_gnubg
from bgai.position import START_BOARD


def gnubg_game_positions(games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions (on-roll view) met in gnubg-v-gnubg 0-ply games, with the roll played there."""
    gnubg = require_gnubg()
    rng = np.random.default_rng(seed)
    boards, rolls = [], []
    for _ in range(games):
        board = START_BOARD.copy()
        dice = rng.choice(6, size=2, replace=False) + 1
        while True:
            boards.append(board)
            rolls.append(dice)
            _, key = gnubg.best_move(to_gnubg(board), int(dice[0]), int(dice[1]), n=0, b=1)
            board = from_gnubg(gnubg.board_from_position_key(key))
            if game_over(board[None])[0]:
                break
            dice = rng.integers(1, 7, size=2)
    return np.array(boards, dtype=np.int8), np.array(rolls)


def gnubg_equities(boards: np.ndarray) -> np.ndarray:
    """gnubg 0-ply cubeless equity of each board, for its player on roll (finished games scored exactly)."""
    gnubg = require_gnubg()
    over = game_over(boards)
    out = np.empty(len(boards))
    out[over] = equity(exact_probabilities(boards[over]))
    for i in np.flatnonzero(~over):
        out[i] = equity(np.array([gnubg.probabilities(to_gnubg(boards[i]), 0)]))[0]
    return out


def measure(checkpoint: str | None, games: int, seed: int) -> dict:
    bot = load_bot(checkpoint)
    boards, rolls = gnubg_game_positions(games, seed)
    live = ~game_over(boards)
    gnubg_eq = gnubg_equities(boards)
    bot_eq = equity(bot.probabilities(boards).astype(np.float64))
    moves = afterstates(boards, rolls)
    chosen = bot.choose(boards, moves.after, moves.owner)
    judged = -gnubg_equities(moves.after)  # the mover's equity after each play, as gnubg sees it
    starts = np.searchsorted(moves.owner, np.arange(len(boards) + 1))
    best = np.maximum.reduceat(judged, starts[:-1])
    error = best - judged[chosen]
    forced = np.diff(starts) == 1
    return {
        "checkpoint": checkpoint or "shipped",
        "positions": int(len(boards)),
        "gnubg_games": games,
        "equity_mean_abs_diff": float(np.abs(bot_eq - gnubg_eq)[live].mean()),
        "checker_error_per_move": float(error.mean()),
        "checker_error_per_unforced_move": float(error[~forced].mean()),
        "same_play_as_gnubg": float((error[~forced] <= 1e-9).mean()),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", help="checkpoint (default: the shipped network)")
    parser.add_argument("--games", type=int, default=100, help="gnubg self-play games to take positions from")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    figures = measure(args.checkpoint, args.games, args.seed)
    for key, value in figures.items():
        print(f"{key:<32} {value:.4f}" if isinstance(value, float) else f"{key:<32} {value}")
    print(json.dumps(figures))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
