"""Players and benchmark opponents: ``random``, ``heuristic`` and ``pubeval``, all batched."""

from __future__ import annotations

from bgai.players.base import Player, RandomPlayer, ValuePlayer
from bgai.players.heuristic import HeuristicPlayer
from bgai.players.pubeval import PubevalPlayer

PLAYERS: dict[str, type[Player]] = {"random": RandomPlayer, "heuristic": HeuristicPlayer, "pubeval": PubevalPlayer}


def make_player(name: str) -> Player:
    """A player by name: one of ``PLAYERS``, ``gnubg`` (GNU Backgammon 0-ply), or ``sage`` and ``sage1`` (Open Sage at
    0 and 1-ply), each of those from its optional extra."""
    if name == "gnubg":
        from bgai.players.gnubg import GnubgPlayer

        return GnubgPlayer()
    if name in ("sage", "sage1"):
        from bgai.players.sage import SagePlayer

        return SagePlayer(plies=int(name[4:] or 0))
    try:
        return PLAYERS[name]()
    except KeyError:
        raise ValueError(f"unknown player {name!r}; choose one of {', '.join(PLAYERS)}, gnubg, sage or sage1") from None


__all__ = ["PLAYERS", "HeuristicPlayer", "Player", "PubevalPlayer", "RandomPlayer", "ValuePlayer", "make_player"]
