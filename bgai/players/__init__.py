"""Players and benchmark opponents: ``random``, ``heuristic`` and ``pubeval``, all batched."""

from __future__ import annotations

from bgai.players.base import Player, RandomPlayer, ValuePlayer
from bgai.players.heuristic import HeuristicPlayer
from bgai.players.pubeval import PubevalPlayer

PLAYERS: dict[str, type[Player]] = {"random": RandomPlayer, "heuristic": HeuristicPlayer, "pubeval": PubevalPlayer}


def make_player(name: str) -> Player:
    """A player by name: one of ``PLAYERS``, or ``gnubg`` (GNU Backgammon 0-ply, from the optional extra)."""
    if name == "gnubg":
        from bgai.players.gnubg import GnubgPlayer

        return GnubgPlayer()
    try:
        return PLAYERS[name]()
    except KeyError:
        raise ValueError(f"unknown player {name!r}; choose one of {', '.join(PLAYERS)} or gnubg") from None


__all__ = ["PLAYERS", "HeuristicPlayer", "Player", "PubevalPlayer", "RandomPlayer", "ValuePlayer", "make_player"]
