"""Match play: the score, the Crawford rule and the match equity table.

A match is played to ``length`` points. The first game after one player first reaches ``length - 1`` points is the
Crawford game, in which no one may double; the games after it are post-Crawford. A score is told by how many
points each side still needs ("away"), the player on roll first.

The match equity table (MET) gives the chance of winning the match from a score, before a game starts: its
pre-Crawford part (whose 1-away entries are the chances at the start of the Crawford game) and its post-Crawford
part for the trailer against a 1-away leader. bgai uses Kazaross-XG2 (Neil Kazaross's table from eXtreme Gammon
rollouts, as distributed with GNU Backgammon) unless told otherwise; ``METS`` lists the published tables it ships
(``bgai.coach.met_tables`` converted them), each with its source, and ``met_table(name)`` loads one. A
``MatchScore``'s ``met`` names the table its cube decisions use.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from bgai.core.errors import BgaiError, shown
from bgai.core.files import DATA

MET_PATH = DATA / "met" / "kazaross-xg2.json"
#: The match equity tables shipped, by name (each file's ``source`` cites it), the default first.
METS = ("kazaross-xg2", "rockwell-kazaross", "jacobs-trice", "woolsey", "snowie")
DEFAULT_MET = METS[0]


@dataclass(frozen=True)
class MatchEquityTable:
    name: str
    source: str
    pre_crawford: np.ndarray  # (L, L): [a - 1, b - 1] = chance of the side a away against b away
    post_crawford: np.ndarray  # (L,): [b - 1] = chance of the trailer b away against a 1-away leader

    @property
    def length(self) -> int:
        return len(self.post_crawford)


@cache
def met_table(name: str = DEFAULT_MET) -> MatchEquityTable:
    """The shipped match equity table ``name`` (one of ``METS``; loaded once)."""
    if name not in METS:
        raise BgaiError(f"unknown match equity table {shown(name)}; choose one of {', '.join(METS)}")
    data = json.loads((DATA / "met" / f"{name}.json").read_text())
    return MatchEquityTable(
        name, data["source"], np.array(data["pre_crawford"], dtype=np.float64),
        np.array(data["post_crawford"], dtype=np.float64),
    )


def kazaross_xg2() -> MatchEquityTable:
    """The default table, Kazaross-XG2."""
    return met_table(DEFAULT_MET)


def match_equity(mine, theirs, post_crawford, table: MatchEquityTable | None = None) -> np.ndarray:
    """Chance that the side needing ``mine`` points wins the match against one needing ``theirs`` (arrays).

    A side needing 0 or fewer points has won. ``post_crawford`` says whether 1-away scores come after the Crawford
    game (otherwise the next game is the Crawford game).
    """
    table = table or kazaross_xg2()
    mine, theirs = np.asarray(mine, dtype=np.int64), np.asarray(theirs, dtype=np.int64)
    post = np.broadcast_to(np.asarray(post_crawford, dtype=bool), mine.shape)
    if max(mine.max(initial=0), theirs.max(initial=0)) > table.length:
        raise BgaiError(f"the match equity table {table.name} goes to {table.length} points")
    a, b = np.clip(mine, 1, table.length) - 1, np.clip(theirs, 1, table.length) - 1
    value = table.pre_crawford[a, b]
    value = np.where(post & (mine == 1), 1.0 - table.post_crawford[b], value)
    value = np.where(post & (theirs == 1), table.post_crawford[a], value)
    value = np.where(theirs <= 0, 0.0, value)
    return np.where(mine <= 0, 1.0, value)


@dataclass(frozen=True)
class MatchScore:
    """A match to ``length`` with ``score`` (player on roll, opponent) points won; ``crawford``: this game is the
    Crawford game; ``post_crawford``: it has been played. ``from_score`` fills these in from the score alone."""

    length: int
    score: tuple[int, int]
    crawford: bool = False
    post_crawford: bool = False
    met: str = DEFAULT_MET

    def __post_init__(self) -> None:
        table = met_table(self.met)
        if not (isinstance(self.length, int) and 1 <= self.length <= table.length):
            raise BgaiError(f"match length must be 1..{table.length} (the match equity table {self.met}'s), got "
                            f"{self.length!r}")
        if len(self.score) != 2 or any(not (0 <= s < self.length) for s in self.score):
            raise BgaiError(f"scores must be 0..{self.length - 1} in a match to {self.length}, got {self.score}")
        one_away = [self.length - s == 1 for s in self.score]
        if (self.crawford or self.post_crawford) and not any(one_away):
            raise BgaiError("Crawford and post-Crawford games need a player one point away")
        if self.crawford and (self.post_crawford or all(one_away)):
            raise BgaiError("the Crawford game is the only game with exactly one player one point away and no "
                            "Crawford game before it")

    @classmethod
    def from_score(cls, length: int, score: tuple[int, int], post_crawford: bool = False,
                   met: str = DEFAULT_MET) -> MatchScore:
        """The Crawford game when exactly one side is one point away (unless ``post_crawford``)."""
        one_away = sum(length - s == 1 for s in score)
        if one_away == 2:
            post_crawford = True
        return cls(length, (int(score[0]), int(score[1])), crawford=one_away == 1 and not post_crawford,
                   post_crawford=one_away >= 1 and post_crawford, met=met)

    @property
    def away(self) -> tuple[int, int]:
        return self.length - self.score[0], self.length - self.score[1]

    @property
    def table(self) -> MatchEquityTable:
        """The match equity table ``met`` names."""
        return met_table(self.met)

    def __str__(self) -> str:
        text = f"{self.score[0]}-{self.score[1]} in a {self.length}-point match"
        text += " (Crawford game)" if self.crawford else " (post-Crawford)" if self.post_crawford else ""
        return text + ("" if self.met == DEFAULT_MET else f", MET {self.met}")


def crawford_next(score, length: int, crawford_played) -> np.ndarray:
    """Whether the next game is the Crawford game, after a game that left ``score`` (..., 2) points won: the first
    game after one side reaches ``length - 1``, so only if none has been played (``crawford_played``, counting the
    game just finished) and the match is not over."""
    score = np.asarray(score)
    over = (score >= length).any(axis=-1)
    return ~np.asarray(crawford_played, dtype=bool) & (score == length - 1).any(axis=-1) & ~over


def parse_score(text: str) -> tuple[int, int]:
    """'A-B' → (A, B)."""
    found = re.fullmatch(r"\s*([0-9]{1,3})\s*-\s*([0-9]{1,3})\s*", str(text), re.ASCII)
    if not found:
        raise BgaiError(f"a score is written A-B (player on roll first), e.g. 2-3; got {shown(text)}")
    return int(found[1]), int(found[2])
