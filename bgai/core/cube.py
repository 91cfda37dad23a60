"""The doubling cube: its state and the rules of who may double, for a batch of positions.

Rules (standard rules of backgammon): before rolling, a player may offer to double the stakes if the cube is in
the middle (centered) or on its side. The opponent either passes (resigns the game and loses the current stake)
or takes (plays on for twice the stake and owns the cube: only it may redouble). The cube goes no higher than 64
here. In a match, no one may double in the Crawford game: the first game after one player reaches one point away
from winning the match.

Every state is relative to the player on roll: ``owner`` is ``CENTERED``, ``ON_ROLL`` (the player on roll owns the
cube) or ``OPPONENT``; ``away`` counts the points each side still needs to win the match, on-roll side first.
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bgai.core.errors import BgaiError
from bgai.core.phase import CONTACT, CRASHED, classify

MAX_CUBE = 64


class CubeOwner(enum.IntEnum):
    """Who owns the cube, seen from the player on roll (bgai's one perspective): the codes of ``CubeState.owner``
    and of every cube owner the library takes or gives. The other ways of saying it are converted here only:

        >>> CubeOwner.parse("me"), CubeOwner.parse("center"), CubeOwner.parse(2)
        (<CubeOwner.ON_ROLL: 1>, <CubeOwner.CENTERED: 0>, <CubeOwner.OPPONENT: 2>)
        >>> CubeOwner.of_seat(1, on_roll=0), CubeOwner.of_seat(None, on_roll=0)   # a table's seats
        (<CubeOwner.OPPONENT: 2>, <CubeOwner.CENTERED: 0>)
        >>> CubeOwner.OPPONENT.seat(on_roll=0), CubeOwner.OPPONENT.switched(), CubeOwner.OPPONENT.word
        (1, <CubeOwner.ON_ROLL: 1>, 'opponent')
    """

    CENTERED = 0
    ON_ROLL = 1
    OPPONENT = 2

    @classmethod
    def parse(cls, owner) -> CubeOwner:
        """A ``CubeOwner``, its code, or a name: ``center``/``centered``, ``me``/``on_roll`` (the player on roll),
        ``opponent``/``opp``, in any case; ``BgaiError`` for anything else."""
        if isinstance(owner, (int, np.integer)) and not isinstance(owner, (bool, np.bool_)) and int(owner) in (0, 1, 2):
            return cls(int(owner))
        key = str(owner).strip().lower() if isinstance(owner, str) else None
        if key not in _OWNER_NAMES:
            raise BgaiError(f"cube owner must be center, me (the player on roll) or opponent; got {owner!r}")
        return _OWNER_NAMES[key]

    @classmethod
    def of_seat(cls, holder: int | None, on_roll: int) -> CubeOwner:
        """The owner of a cube held by seat ``holder`` (``None`` or -1: centered) for the seat ``on_roll``."""
        return cls.CENTERED if holder is None or holder == -1 else cls.ON_ROLL if holder == on_roll else cls.OPPONENT

    @staticmethod
    def of_seats(holder: np.ndarray, on_roll: np.ndarray) -> np.ndarray:
        """``of_seat`` of arrays: (N,) int8 codes for cubes held by seats ``holder`` (-1: centered)."""
        holder, on_roll = np.asarray(holder), np.asarray(on_roll)
        return np.select([holder == -1, holder == on_roll], [CENTERED, ON_ROLL], OPPONENT).astype(np.int8)

    def seat(self, on_roll: int) -> int | None:
        """The seat (0 or 1) that owns the cube when seat ``on_roll`` is on roll; ``None`` while it is centered."""
        return None if self is CubeOwner.CENTERED else on_roll if self is CubeOwner.ON_ROLL else 1 - on_roll

    def switched(self) -> CubeOwner:
        """The same cube seen from the other player."""
        return CubeOwner(int(_SWITCHED[self]))

    @property
    def word(self) -> str:
        """``"centered"``, ``"me"`` (the player on roll) or ``"opponent"``: how pictures and the web API say it."""
        return ("centered", "me", "opponent")[self]


CENTERED, ON_ROLL, OPPONENT = CubeOwner.CENTERED, CubeOwner.ON_ROLL, CubeOwner.OPPONENT
#: ``_SWITCHED[owner]``: the owner's code seen from the other player (on roll and opponent swap).
_SWITCHED = np.array([CENTERED, OPPONENT, ON_ROLL], dtype=np.int8)
_OWNER_NAMES = {"center": CENTERED, "centered": CENTERED, "me": ON_ROLL, "on_roll": ON_ROLL, "opponent": OPPONENT,
                "opp": OPPONENT}


@dataclass(frozen=True)
class CubeState:
    """The cube (and match score) of N positions, from the side of the player on roll in each.

    ``value`` (N,) the cube value 1..64; ``owner`` (N,) ``CENTERED``/``ON_ROLL``/``OPPONENT``; ``away`` (N, 2) the
    points the player on roll and its opponent still need, or ``None`` for money games; ``crawford`` (N,) whether
    this game is the Crawford game; ``post_crawford`` (N,) whether the Crawford game has been played. ``jacoby``
    (money: gammons count only once the cube has been turned) and ``beavers`` (money: the taker may redouble at
    once, keeping the cube) are options of the whole batch.
    """

    value: np.ndarray
    owner: np.ndarray
    away: np.ndarray | None = None
    crawford: np.ndarray | None = None
    post_crawford: np.ndarray | None = None
    jacoby: bool = False
    beavers: bool = False
    met: Any = None  # a match's ``bgai.core.match.MatchEquityTable`` (None: the default, Kazaross-XG2)

    @classmethod
    def money(cls, n: int, value: int = 1, owner: int = CENTERED, **options) -> CubeState:
        """N money positions with the same cube."""
        return cls(np.full(n, value, dtype=np.int64), np.full(n, owner, dtype=np.int8), **options)

    def __len__(self) -> int:
        return len(self.value)

    @property
    def is_match(self) -> bool:
        return self.away is not None

    def select(self, rows) -> CubeState:
        """The states of ``rows`` (an index or mask)."""
        pick = lambda a: None if a is None else np.asarray(a)[rows]  # noqa: E731
        return CubeState(np.asarray(self.value)[rows], np.asarray(self.owner)[rows], pick(self.away),
                         pick(self.crawford), pick(self.post_crawford), self.jacoby, self.beavers, self.met)

    def doubled(self) -> CubeState:
        """The cubes after the player on roll doubles and its opponent takes (kept at 64 where already there)."""
        return CubeState(np.minimum(np.asarray(self.value) * 2, MAX_CUBE), np.full(len(self), OPPONENT, np.int8),
                         self.away, self.crawford, self.post_crawford, self.jacoby, self.beavers, self.met)

    def switched(self) -> CubeState:
        """The same cubes seen from the other side (after the turn passes)."""
        away = None if self.away is None else self.away[:, ::-1].copy()
        return CubeState(self.value, _SWITCHED[np.asarray(self.owner)], away, self.crawford, self.post_crawford,
                         self.jacoby, self.beavers, self.met)


def may_double(state: CubeState) -> np.ndarray:
    """(N,) whether the rules let the player on roll double: the cube is centered or its own, below 64, and this
    is not the Crawford game. (Whether doubling can help it is for the cube decision to say.)"""
    allowed = (state.owner != OPPONENT) & (state.value < MAX_CUBE)
    if state.crawford is not None:
        allowed &= ~np.asarray(state.crawford, dtype=bool)
    return allowed


def validate(state: CubeState) -> None:
    """Raise ``BgaiError`` unless ``state`` is a possible cube: values powers of two 1..64, a known owner, a
    centered cube only at 1, match scores at least one point away."""
    value = np.asarray(state.value)
    if not np.isin(value, [1, 2, 4, 8, 16, 32, 64]).all():
        raise BgaiError(f"cube values must be 1, 2, 4, ..., 64; got {sorted(set(value.tolist()))}")
    owner = np.asarray(state.owner)
    if not np.isin(owner, [CENTERED, ON_ROLL, OPPONENT]).all():
        raise BgaiError("cube owner must be centered, the player on roll or its opponent")
    if ((owner == CENTERED) & (value != 1)).any():
        raise BgaiError("a centered cube has value 1 (once turned, the cube has an owner)")
    if state.away is not None:
        away = np.asarray(state.away)
        if away.ndim != 2 or away.shape[1] != 2 or (away < 1).any():
            raise BgaiError("match scores must leave each side at least one point away")


# Cubeful equity --------------------------------------------------------------------------------------------------
#
# Janowski's model (R. Janowski, "Take-Points in Money Games", 1993): the cubeful equity of a position is a blend of
# the equity with a dead cube (the cubeless equity) and the equity with a perfectly live cube, in which a player
# doubles exactly at its opponent's take point and the game ends at a cash point, so that with a live cube the
# equity is piecewise linear in the winning chance p:
#
#     E = x * E_live(p) + (1 - x) * E_dead(p),
#
# x being the cube efficiency, the share of the live cube's value a position lets its players realise. With money
# stakes and W, L the average points won and lost (gammons included) this gives the take point
# (L - 1/2) / (W + L + x/2) of the paper. The same construction serves match play (as GNU Backgammon does), with
# match-winning chances from a match equity table in place of points: the live-cube cash points are found level by
# level from the highest cube down, each the point where taking the next cube and passing are worth the same.
#
# Cube efficiency, as the GNU Backgammon manual documents for its use of Janowski's formula (the values Janowski
# suggested): 0.68 in contact positions; in races, linear in the pip count of the player on roll from 0.6 at 40 pips
# to 0.7 at 120 (kept within 0.6..0.7); 0.6 once both sides are bearing off (all checkers in their home boards).

CONTACT_EFFICIENCY = 0.68
RACE_EFFICIENCY = (0.55, 0.00125, 0.6, 0.7)  # intercept, per pip, lowest, highest


def efficiency(boards: np.ndarray) -> np.ndarray:
    """(N,) Janowski cube efficiency of N positions (on-roll view): fixed in contact, by pip count in a race."""
    boards = np.asarray(boards, dtype=np.int64)
    points = np.arange(boards.shape[1])
    mine = boards > 0
    theirs = boards < 0
    # Contact: some checker of the player on roll is still behind (at a higher point than) an opponent's checker.
    my_back = np.where(mine.any(axis=1), (mine * points).max(axis=1), -1)
    their_back = np.where(theirs.any(axis=1), np.where(theirs, points, 99).min(axis=1), 99)
    race = my_back < their_back
    bearoff = (my_back <= 6) & (their_back >= 19)
    pips = (np.where(mine, boards, 0) * points).sum(axis=1)
    intercept, per_pip, lowest, highest = RACE_EFFICIENCY
    in_race = np.where(bearoff, lowest, np.clip(intercept + per_pip * pips, lowest, highest))
    return np.where(race, in_race, CONTACT_EFFICIENCY)


# A fitted cube efficiency. Janowski's x need not be one number a class: how much of the live cube's value a player
# realises depends on the position (its volatility, its gammons, who is back). ``EfficiencyModel`` makes x a linear
# function of a few features of the position and of the network's own probabilities, clipped to EFFICIENCY_RANGE,
# its weights fitted by ``bgai.train.cube_efficiency`` to the bot's own cubeful rollouts of positions of its own play
# near the doubling window (no other engine's values). A model may also shift the win chance the formula reads (a
# second linear function of the same features, clipped to SHIFT_RANGE and faded in over SHIFT_DOMAIN; ``shift_win``),
# fitted jointly with x: the cubeless equity stays the network's. A model belongs to the network it was fitted with.

#: The features an ``EfficiencyModel`` reads (``efficiency_features``), on-roll view; probabilities are the network's.
EFFICIENCY_FEATURES = (
    "bias", "contact", "crashed", "win - 1/2", "win gammon", "lose gammon", "backgammons", "pips / 100",
    "pip lead / 100", "owns the cube", "checkers back / 5", "their checkers back / 5", "home points / 6",
    "their home points / 6", "blots / 3", "their blots / 3", "4 (win - 1/2)^2", "10 win gammon x lose gammon",
)
MAX_WEIGHT = 10.0  # the features are of order 1: a larger weight is no fit's
EFFICIENCY_RANGE = (0.4, 1.0)  # 1: the perfectly live cube, the formula's bound
SHIFT_RANGE = (-0.15, 0.15)  # the most a model moves the win chance the formula reads
#: The win chances over which a model's shift fades in (none below the first, all of it from the second on). Its
#: labels are positions whose player on roll is near its doubling window (99% of them at a win chance of 0.555 or
#: more); below, the shift is not known: unfaded, at the leaves of a 1-ply cube, where the player on roll is as
#: often the underdog, it lost 7 mp a decision more on the money reference set.
SHIFT_DOMAIN = (0.5, 0.55)


def efficiency_features(boards: np.ndarray, probs: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """(N, len(EFFICIENCY_FEATURES)) the features of N positions (on-roll view) that an ``EfficiencyModel`` reads:
    their class, the network's cubeless ``probs`` (N, 5), pip counts, who owns the cube (``owner``, ``CubeOwner``
    codes), the checkers each side has back (in the other's home board or on the bar), the points each has made in
    its home board and its blots."""
    b = np.asarray(boards, dtype=np.int64)
    p = np.asarray(probs, dtype=np.float64)
    phase = classify(np.asarray(boards, dtype=np.int8))
    mine, theirs = np.maximum(b, 0), np.maximum(-b, 0)
    points = np.arange(26)
    pips = (mine * points).sum(axis=1)  # index 25 is the player on roll's bar, 0 its opponent's
    their_pips = (theirs * (25 - points)).sum(axis=1)
    columns = [
        np.ones(len(b)), phase == CONTACT, phase == CRASHED, p[:, 0] - 0.5, p[:, 1], p[:, 3], p[:, 2] + p[:, 4],
        pips / 100, (their_pips - pips) / 100, np.asarray(owner) == ON_ROLL,
        mine[:, 19:26].sum(axis=1) / 5, theirs[:, 0:7].sum(axis=1) / 5,
        (b[:, 1:7] >= 2).sum(axis=1) / 6, (b[:, 19:25] <= -2).sum(axis=1) / 6,
        (b[:, 1:25] == 1).sum(axis=1) / 3, (b[:, 1:25] == -1).sum(axis=1) / 3,
        4 * (p[:, 0] - 0.5) ** 2, 10 * p[:, 1] * p[:, 3],
    ]
    return np.stack(columns, axis=1).astype(np.float64)


@dataclass(frozen=True)
class EfficiencyModel:
    """A cube efficiency fitted to the bot's own cubeful rollouts (``bgai.train.cube_efficiency``): x =
    ``efficiency_features`` · ``weights``, clipped to ``EFFICIENCY_RANGE``; with ``shift`` weights, also a shift of
    the win chance Janowski's formula reads, ``efficiency_features`` · ``shift`` clipped to ``SHIFT_RANGE``, faded in
    over ``SHIFT_DOMAIN`` (``shift_win``, ``shift_fade``; None: no shift). ``info`` says what it was fitted to (the
    network's digest, the labels, the fit's cross-validated figures). Saved as JSON."""

    weights: np.ndarray
    info: dict
    shift: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in ("weights", "shift"):
            w = getattr(self, name)
            if w is None and name == "shift":
                continue
            w = np.asarray(w, dtype=np.float64)
            if w.shape != (len(EFFICIENCY_FEATURES),) or not (np.abs(w) <= MAX_WEIGHT).all():
                raise BgaiError(f"a cube efficiency model's {name} are {len(EFFICIENCY_FEATURES)} finite weights of "
                                f"at most {MAX_WEIGHT} each, got shape {w.shape}")
            object.__setattr__(self, name, w)

    def __call__(self, boards: np.ndarray, probs: np.ndarray, owner: np.ndarray) -> np.ndarray:
        """(N,) the cube efficiency of N positions (on-roll view) with their network's ``probs`` and cube ``owner``."""
        return self.with_owner(self.base(boards, probs), owner)

    def base(self, boards: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """(N, 2) x and the win chance's shift before the cube's owner counts and before clipping: one position's
        for each of its cubes are ``with_owner(base, owner)`` and ``win_shift(base, owner)``, its features
        computed once."""
        columns = np.stack([self.weights, np.zeros_like(self.weights) if self.shift is None else self.shift], 1)
        return efficiency_features(boards, probs, np.full(len(boards), CENTERED)) @ columns

    def _owned(self, base: np.ndarray, owner: np.ndarray, column: int, weights: np.ndarray, bounds) -> np.ndarray:
        owns = np.asarray(owner) == ON_ROLL
        return np.clip(base[:, column] + weights[EFFICIENCY_FEATURES.index("owns the cube")] * owns, *bounds)

    def with_owner(self, base: np.ndarray, owner: np.ndarray) -> np.ndarray:
        """(N,) x of ``base``'s positions with these cube owners."""
        return self._owned(base, owner, 0, self.weights, EFFICIENCY_RANGE)

    def win_shift(self, base: np.ndarray, owner: np.ndarray, probs: np.ndarray) -> np.ndarray | None:
        """(N,) the shift of the win chance of ``base``'s positions with these cube owners and their network's
        ``probs``, faded in over ``SHIFT_DOMAIN`` (None: the model has none)."""
        if self.shift is None:
            return None
        return self._owned(base, owner, 1, self.shift, SHIFT_RANGE) * shift_fade(np.asarray(probs)[:, 0])

    def to_json(self) -> str:
        shift = {} if self.shift is None else {"shift": self.shift.tolist()}
        return json.dumps({"format": "bgai-cube-efficiency", "features": list(EFFICIENCY_FEATURES),
                           "weights": self.weights.tolist(), **shift, "info": self.info}, indent=1) + "\n"

    @classmethod
    def load(cls, path) -> EfficiencyModel:
        """The model of a file ``to_json`` wrote; anything else is refused with the file's name."""
        try:
            data = json.loads(Path(path).read_text())
            if data.get("format") != "bgai-cube-efficiency" or tuple(data["features"]) != EFFICIENCY_FEATURES:
                raise ValueError("not a bgai cube efficiency model for these features")
            shift = None if data.get("shift") is None else np.asarray(data["shift"], dtype=np.float64)
            return cls(np.asarray(data["weights"], dtype=np.float64), dict(data.get("info", {})), shift)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError, BgaiError) as e:
            raise BgaiError(f"{path}: unreadable cube efficiency model ({e})") from None


def shift_fade(win: np.ndarray) -> np.ndarray:
    """(N,) how much of a model's shift applies at these win chances: 0 below ``SHIFT_DOMAIN``, 1 above, linear
    between."""
    lo, hi = SHIFT_DOMAIN
    return np.clip((np.asarray(win, dtype=np.float64) - lo) / (hi - lo), 0.0, 1.0)


def shift_win(probs: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """(N, 5) cumulative probabilities (on-roll view) with the win chance moved by ``shift`` (N,) (kept within 0 and
    1), each side's gammon and backgammon chances scaled with its own chance of winning: the same share of a
    side's wins are gammons. Janowski's equities are piecewise linear in the win chance so moved."""
    p = np.asarray(probs, dtype=np.float64)
    win = np.clip(p[:, 0] + shift, 0.0, 1.0)
    mine = np.divide(win, p[:, 0], out=np.zeros_like(win), where=p[:, 0] > 0)
    theirs = np.divide(1 - win, 1 - p[:, 0], out=np.zeros_like(win), where=p[:, 0] < 1)
    out = np.stack([win, p[:, 1] * mine, p[:, 2] * mine, p[:, 3] * theirs, p[:, 4] * theirs], axis=1)
    out[:, 1] = np.minimum(out[:, 1], win)  # (a win chance of 0 moved up: no gammons come with it)
    out[:, 2] = np.minimum(out[:, 2], out[:, 1])
    out[:, 3] = np.minimum(out[:, 3], 1 - win)
    out[:, 4] = np.minimum(out[:, 4], out[:, 3])
    return out


@dataclass(frozen=True)
class CubeEquities:
    """Cubeful equities of N positions for the player on roll, before it rolls.

    Money: in units of the current stake (a pass of its double is worth +1). Match: match-winning chances.
    ``no_double``, ``double_take`` and ``double_pass`` are NaN where the player on roll may not double (then only
    ``no_double`` means anything). ``double_take`` is the opponent's better answer to a double when beavers are on
    and it would beaver. ``beaver`` tells where it would.
    """

    no_double: np.ndarray
    double_take: np.ndarray
    double_pass: np.ndarray
    may_double: np.ndarray
    beaver: np.ndarray
    efficiency: np.ndarray
    cubeless: np.ndarray
    stake: np.ndarray

    def emg(self, values: np.ndarray) -> np.ndarray:
        """Equities turned into money-game equivalents: -1 for losing the current stake, +1 for winning it (for
        money the same numbers)."""
        lose, win = self.stake[:, 0], self.stake[:, 1]
        return 2 * (values - lose) / (win - lose) - 1

    @property
    def should_double(self) -> np.ndarray:
        return self.may_double & (np.fmin(self.double_take, self.double_pass) > self.no_double)

    @property
    def should_take(self) -> np.ndarray:
        """Whether the opponent should take a double (its own best answer, whatever the doubler ought to do)."""
        return ~self.may_double | (self.double_take <= self.double_pass)

    @property
    def too_good(self) -> np.ndarray:
        """The player on roll does better playing on (for a gammon) than cashing the game."""
        return self.may_double & (self.no_double > self.double_pass)

    @property
    def margin(self) -> np.ndarray:
        """(N,) how close each position's cube decisions are, in equity: the smaller of |ND - min(DT, DP)| (double
        or not) and |DT - DP| (take or pass); infinite where the player on roll may not double."""
        close = np.fmin(np.abs(self.no_double - np.fmin(self.double_take, self.double_pass)),
                        np.abs(self.double_take - self.double_pass))
        return np.where(self.may_double, close, np.inf)

    @property
    def equity(self) -> np.ndarray:
        """The cubeful equity with correct cube action by both sides."""
        best = np.fmax(self.no_double, np.fmin(self.double_take, self.double_pass))
        return np.where(self.may_double, best, self.no_double)


def money_margin(probs: np.ndarray, boards: np.ndarray) -> np.ndarray:
    """(N,) the closest of each position's money cube decisions (``CubeEquities.margin``), with the cube centered
    or owned by the player on roll, from cubeless ``probs`` (on-roll view): small near the doubling window and the
    take point, large where the cube cannot matter."""
    n = len(probs)
    return np.fmin(*(cube_equities(probs, boards, CubeState.money(n, value, owner)).margin
                     for value, owner in ((1, CENTERED), (2, ON_ROLL))))


def _outcomes(probs: np.ndarray) -> np.ndarray:
    """(N, 6) exclusive probabilities (win 1, 2, 3 points; lose 1, 2, 3) from the 5 cumulative ones."""
    p, wg, wbg, lg, lbg = np.asarray(probs, dtype=np.float64).T
    out = np.stack([p - wg, wg - wbg, wbg, 1 - p - lg, lg - lbg, lbg], axis=1)
    return np.clip(out, 0.0, 1.0)


def _curve_at(xs: np.ndarray, ys: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Piecewise-linear curves (N, K breakpoints, x non-decreasing from 0 to 1) evaluated at p (N,)."""
    out = ys[:, 0].copy()
    for i in range(xs.shape[1] - 1):
        x0, x1, y0, y1 = xs[:, i], xs[:, i + 1], ys[:, i], ys[:, i + 1]
        width = x1 - x0
        inside = (p >= x0) & (p <= x1) & (width > 0)
        t = np.divide(p - x0, width, out=np.zeros_like(p), where=width > 0)
        out = np.where(inside, y0 + t * (y1 - y0), out)
    return out


def _solve(xs: np.ndarray, ys: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The p in 0..1 where increasing piecewise-linear curves reach ``target`` (clipped to the ends)."""
    out = np.where(target <= ys[:, 0], 0.0, 1.0)
    for i in reversed(range(xs.shape[1] - 1)):  # the first segment that reaches the target wins
        x0, x1, y0, y1 = xs[:, i], xs[:, i + 1], ys[:, i], ys[:, i + 1]
        rise = y1 - y0
        inside = (target >= y0) & (target <= y1) & (rise > 0)
        t = np.divide(target - y0, rise, out=np.zeros_like(target), where=rise > 0)
        out = np.where(inside, x0 + t * (x1 - x0), out)
    return np.clip(out, 0.0, 1.0)


def cube_equities(probs: np.ndarray, boards: np.ndarray, state: CubeState, x: np.ndarray | float | None = None,
                  win_shift: np.ndarray | None = None) -> CubeEquities:
    """Janowski cubeful equities (see above) of N positions from their cubeless probabilities.

    ``probs`` (N, 5) are the cumulative cubeless probabilities of the player on roll before it rolls, ``boards``
    the positions (for the cube efficiency), ``state`` their cubes and match scores; ``x`` overrides the cube
    efficiency (0: dead cube, 1: perfectly live); ``win_shift`` (N,) moves the win chance the cubeful equities read
    (``shift_win``; a fitted model's), the cubeless equity staying ``probs``' own.
    """
    validate(state)
    if state.is_match and (state.jacoby or state.beavers):
        raise BgaiError("the Jacoby rule and beavers are money-game options")
    outcomes = own_outcomes = _outcomes(probs)
    if win_shift is not None:
        probs = shift_win(probs, win_shift)
        outcomes = _outcomes(probs)
    p = np.asarray(probs, dtype=np.float64)[:, 0]
    n = len(p)
    x = efficiency(boards) if x is None else np.broadcast_to(np.asarray(x, dtype=np.float64), (len(probs),))
    value = np.asarray(state.value, dtype=np.int64)
    crawford = np.zeros(n, bool) if state.crawford is None else np.asarray(state.crawford, dtype=bool)
    payoff = payoff_of(state)

    # Levels j = 0, 1, 2, ...: the cube at value * 2**j, up to 64 (beyond a row's top level, levels repeat it).
    top = np.log2(MAX_CUBE // value).astype(np.int64)
    levels = int(top.max()) + 1
    cube = [value * 2 ** np.minimum(j, top) for j in range(levels)]
    won, lost, cash, drop = [], [], [], []
    for j in range(levels):
        # What the player on roll ends with on winning (losing) 1, 2 or 3 times the cube at level j; the first
        # column is also the value of a pass: by the opponent (cash) or by the player on roll (drop).
        win_values = payoff(cube[j][:, None] * np.array([1, 2, 3])).astype(np.float64)
        lose_values = payoff(-cube[j][:, None] * np.array([1, 2, 3])).astype(np.float64)
        cash.append(win_values[:, 0])
        drop.append(lose_values[:, 0])
        if j == 0:  # the cubeless equity: the probabilities' own, whatever the shift
            cubeless = np.sum(own_outcomes[:, :3] * win_values, axis=1) + np.sum(own_outcomes[:, 3:] * lose_values,
                                                                                 axis=1)
        # The average value of a win (a loss), given the gammon rates; a single one where there are none.
        wins = np.sum(outcomes[:, :3] * win_values, axis=1)
        losses = np.sum(outcomes[:, 3:] * lose_values, axis=1)
        won.append(np.divide(wins, p, out=win_values[:, 0].copy(), where=p > 0))
        lost.append(np.divide(losses, 1 - p, out=lose_values[:, 0].copy(), where=p < 1))
    away = state.away

    # Live-cube curves, from the top level down. At level j the player on roll ("me") cashes at ``cash_at`` (where
    # its opponent is indifferent between passing and owning the cube at level j + 1) and its opponent at
    # ``drop_at``; each curve is 4 breakpoints from (0, lost) to (1, won), an unused one lying on an end.
    zeros, ones = np.zeros(n), np.ones(n)
    curves = {}
    me_curve = opp_curve = None
    for j in reversed(range(levels)):
        alive = (j < top) & ~crawford
        cash_at = _solve(*opp_curve, cash[j]) if opp_curve is not None else ones
        drop_at = _solve(*me_curve, drop[j]) if me_curve is not None else zeros
        me_can = alive & (cash_at < 1) & (True if away is None else away[:, 0] > cube[j])
        opp_can = alive & (drop_at > 0) & (True if away is None else away[:, 1] > cube[j])
        curves[j] = (np.where(opp_can, drop_at, 0.0), np.where(me_can, cash_at, 1.0), opp_can, me_can)
        me_curve = _curve(j, ON_ROLL, curves, lost[j], won[j], drop, cash)
        opp_curve = _curve(j, OPPONENT, curves, lost[j], won[j], drop, cash)

    def cubeful(j: int, owner: int, w=None, l=None) -> np.ndarray:
        w = won[j] if w is None else w
        l = lost[j] if l is None else l
        return x * _curve_at(*_curve(j, owner, curves, l, w, drop, cash), p) + (1 - x) * (p * w + (1 - p) * l)

    owner = np.asarray(state.owner)
    no_double = np.select(
        [owner == CENTERED, owner == ON_ROLL],
        [cubeful(0, CENTERED), cubeful(0, ON_ROLL)],
        cubeful(0, OPPONENT),
    )
    if state.jacoby:
        # Jacoby: while the cube is centered, gammons and backgammons count as single games.
        jacoby = cubeful(0, CENTERED, w=cash[0], l=drop[0])
        no_double = np.where(owner == CENTERED, jacoby, no_double)
    allowed = may_double(state)
    double_take = cubeful(min(1, levels - 1), OPPONENT)
    beaver = np.zeros(n, dtype=bool)
    if state.beavers and levels > 2:
        beavered = cubeful(2, OPPONENT)
        beaver = allowed & (top >= 2) & (beavered < double_take)
        double_take = np.where(beaver, beavered, double_take)
    double_pass = cash[0]
    stake = np.stack([drop[0], cash[0]], axis=1)
    if not state.is_match:
        no_double, double_take, double_pass = no_double / value, double_take / value, double_pass / value
        cubeless, stake = cubeless / value, stake / value[:, None]
    nan = np.full(n, np.nan)
    return CubeEquities(
        no_double=no_double,
        double_take=np.where(allowed, double_take, nan),
        double_pass=np.where(allowed, double_pass, nan),
        may_double=allowed,
        beaver=beaver,
        efficiency=x,
        cubeless=cubeless,
        stake=stake,
    )


def _curve(j, owner, curves, lost, won, drop, cash) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints (xs, ys), each (N, 4), of the live-cube curve at level j for a cube owned by ``owner``."""
    drop_at, cash_at, opp_can, me_can = curves[j]
    n = len(drop_at)
    lo_x = drop_at if owner != ON_ROLL else np.zeros(n)
    lo_y = np.where((owner != ON_ROLL) & opp_can, drop[j], lost)
    hi_x = cash_at if owner != OPPONENT else np.ones(n)
    hi_y = np.where((owner != OPPONENT) & me_can, cash[j], won)
    # Freak match scores could cross the two cash points of a centered cube; keep the breakpoints in order.
    swap = lo_x > hi_x
    lo_x, hi_x = np.where(swap, hi_x, lo_x), np.where(swap, lo_x, hi_x)
    lo_y, hi_y = np.where(swap, hi_y, lo_y), np.where(swap, lo_y, hi_y)
    xs = np.stack([np.zeros(n), lo_x, hi_x, np.ones(n)], axis=1)
    ys = np.stack([lost, lo_y, hi_y, won], axis=1)
    return xs, ys


def payoff_of(state: CubeState):
    """What the player on roll ends with when it wins ``points`` (negative: loses them): points for money,
    match-winning chances for a match."""
    if not state.is_match:
        return lambda points: np.asarray(points, dtype=np.float64)
    from bgai.core.match import match_equity

    away = np.asarray(state.away, dtype=np.int64)
    n = len(away)
    crawford = np.zeros(n, bool) if state.crawford is None else np.asarray(state.crawford, dtype=bool)
    post = np.zeros(n, bool) if state.post_crawford is None else np.asarray(state.post_crawford, dtype=bool)
    # After this game a 1-away score is post-Crawford if the Crawford game is this one or already played.
    after_crawford = crawford | post
    table = state.met  # (None: the default table)

    def payoff(points: np.ndarray) -> np.ndarray:
        points = np.asarray(points, dtype=np.int64)
        shape = points.shape
        mine = away[:, 0].reshape((n,) + (1,) * (len(shape) - 1)) - np.maximum(points, 0)
        theirs = away[:, 1].reshape((n,) + (1,) * (len(shape) - 1)) - np.maximum(-points, 0)
        flag = np.broadcast_to(after_crawford.reshape((n,) + (1,) * (len(shape) - 1)), shape)
        return match_equity(mine, theirs, flag, table)

    return payoff


# One position ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CubeDecision:
    """The cube decision of the player on roll before it rolls, and its opponent's answer to a double.

    Equities are the player on roll's: for money in units of the current stake, for a match in match-winning
    chances (``emg`` gives them as money equivalents). Doubling is valued at the opponent's better answer.
    ``plies``: the lookahead the equities come from, where a bot said it (``Bot.cube_decision``); at n-ply the
    formula decides at the tree's leaves, and ``efficiency`` is the root position's own. ``fitted``: whether the
    cube efficiency (and the shift of the win chance the formula reads, where the model has one) is the bot's model
    fitted to its own rollouts (``EfficiencyModel``) rather than the manual's x, where a bot said it. ``exact``: the
    equities are the two-sided bear-off database's, not the formula's. ``rollout``: the cubeful rollout the
    equities come from (a ``bgai.eval.rollout.RolloutResult``), where a bot rolled one out.
    """

    should_double: bool
    should_take: bool
    too_good: bool
    beaver: bool
    may_double: bool
    no_double: float
    double_take: float | None
    double_pass: float | None
    cubeless: float
    efficiency: float
    action: str
    cube: int
    owner: CubeOwner
    match: object | None = None  # a bgai.core.match.MatchScore
    emg: tuple[float, float | None, float | None] | None = None
    plies: int | None = None
    fitted: bool | None = None
    exact: bool = False
    rollout: object | None = None

    def __str__(self) -> str:
        owner = {CENTERED: "centered cube", ON_ROLL: f"cube {self.cube} owned by the player on roll",
                 OPPONENT: f"cube {self.cube} owned by the opponent"}[self.owner]
        setting = "money game" if self.match is None else str(self.match)
        unit = "MWC" if self.match is not None else "equity"
        x = {None: "", True: " (fitted to the bot's own rollouts)", False: " (the manual's)"}[self.fitted]
        if math.isnan(self.efficiency):
            trials = getattr(self.rollout, "trials", None)
            how = "a cubeful rollout" + (f", {trials} trials" if trials else "")
        elif self.exact:
            how = "exact, from the bear-off database"
        else:
            how = "the bot" if self.plies is None else f"the bot at {self.plies}-ply"
        lines = [f"Cube decision ({setting}, {owner}; {how})"]

        def fmt(v, emg=None):
            if self.match is None:
                return f"{v:+.3f}"
            return f"{100 * v:6.2f}%" + (f"  (EMG {emg:+.3f})" if emg is not None else "")

        take, drop = self.double_take, self.double_pass
        best = self.no_double
        lines.append(f"  cubeless {unit:<13} {fmt(self.cubeless)}")
        rows: list[tuple[str, float, int]] = [("No double", self.no_double, 0)]
        if self.may_double and take is not None and drop is not None:
            best = max(self.no_double, min(take, drop))
            rows += [("Double, take" + (" (beaver)" if self.beaver else ""), take, 1), ("Double, pass", drop, 2)]
        # a rollout's standard errors, where the equities are a rollout's (double/pass is +1 exactly)
        errors = [getattr(getattr(self.rollout, name, None), "se", None) for name in ("no_double", "double_take")]
        for label, v, i in rows:
            emg = self.emg[i] if self.emg else None
            diff = "" if self.match is not None else f"  ({v - best:+.3f})"
            se = f" ± {errors[i]:.3f}" if i < 2 and errors[i] is not None else ""
            lines.append(f"  {label:<22} {fmt(v, emg)}{se}{diff}")
        if not (math.isnan(self.efficiency) or self.exact):
            lines.append(f"  cube efficiency        {self.efficiency:.2f}{x}")
        lines.append(f"Proper cube action: {self.action}")
        return "\n".join(lines)


def describe(eq: CubeEquities, i: int, state: CubeState) -> str:
    """The cube action of row ``i`` in words, as players say it."""
    verb = "redouble" if state.owner[i] == ON_ROLL else "double"
    if not eq.may_double[i]:
        if state.owner[i] == OPPONENT:
            return "No double: the opponent owns the cube"
        if state.crawford is not None and state.crawford[i]:
            return "No double: Crawford game"
        return f"No double: the cube is at {MAX_CUBE}"
    answer = "beaver" if eq.beaver[i] else "take" if eq.should_take[i] else "pass"
    if eq.should_double[i]:
        return f"{verb.capitalize()}, {answer}"
    if eq.too_good[i]:
        return f"Too good to {verb}, {answer}"
    return f"No {verb}, {answer}"


def cube_state(cube: int = 1, owner="centered", match=None, *, jacoby: bool = False,
               beavers: bool = False) -> CubeState:
    """The ``CubeState`` of one position: money when ``match`` is ``None``, else a ``bgai.core.match.MatchScore``."""
    owner = CubeOwner.parse(owner)
    if not isinstance(cube, (int, np.integer)) or isinstance(cube, bool) or not 1 <= cube <= MAX_CUBE:
        raise BgaiError(f"cube values must be 1, 2, 4, ..., {MAX_CUBE}; got {str(cube)[:40]}")
    if match is None:
        return CubeState.money(1, cube, owner, jacoby=jacoby, beavers=beavers)
    return CubeState(np.array([cube]), np.array([owner], np.int8), np.array([match.away]),
                     np.array([match.crawford]), np.array([match.post_crawford]), jacoby, beavers, match.table)


def decision_losses(no_double, double_take, double_pass, doubles, takes) -> np.ndarray:
    """The equity each of N cube decisions loses, judged by true cubeful equities (the player on roll's, in the
    current cube's units): the double decision of every position, then the take decision of each position where
    the truth doubles, in order. The truth doubles iff min(DT, DP) >= ND (a tie costs nothing either way, and its
    take decision is scored) and takes iff DT <= DP; doubling is worth min(DT, DP), the opponent answering right.
    ``doubles`` and ``takes`` are the decisions judged (N bools each; ``takes`` counts where the truth doubles).
    The rule of bgai's cube benchmarks (``bgai.coach.cube_reference.SCORING``) and of the cube efficiency's fit."""
    nd, dt, dp = (np.asarray(a, dtype=np.float64) for a in (no_double, double_take, double_pass))
    doubles, takes = np.asarray(doubles, dtype=bool), np.asarray(takes, dtype=bool)
    if not nd.shape == dt.shape == dp.shape == doubles.shape == takes.shape or nd.ndim != 1:
        raise ValueError("need one no double, double/take, double/pass, double and take decision per position")
    doubled = np.minimum(dt, dp)
    double_loss = np.maximum(nd, doubled) - np.where(doubles, doubled, nd)
    take_loss = np.where(takes != (dt <= dp), np.abs(dt - dp), 0.0)[doubled >= nd]
    return np.concatenate([double_loss, take_loss])


def decision(eq: CubeEquities, state: CubeState, match=None) -> CubeDecision:
    """The ``CubeDecision`` of the one position of ``eq``."""
    pick = lambda a: None if np.isnan(a[0]) else float(a[0])  # noqa: E731
    emg = None
    if match is not None:
        emg = (float(eq.emg(eq.no_double)[0]), pick(eq.emg(eq.double_take)), pick(eq.emg(eq.double_pass)))
    return CubeDecision(
        should_double=bool(eq.should_double[0]), should_take=bool(eq.should_take[0]), too_good=bool(eq.too_good[0]),
        beaver=bool(eq.beaver[0]), may_double=bool(eq.may_double[0]), no_double=float(eq.no_double[0]),
        double_take=pick(eq.double_take), double_pass=pick(eq.double_pass), cubeless=float(eq.cubeless[0]),
        efficiency=float(eq.efficiency[0]), action=describe(eq, 0, state), cube=int(state.value[0]),
        owner=CubeOwner(int(state.owner[0])), match=match, emg=emg,
    )


def decide(probs, board, cube: int = 1, owner="centered", match=None, *, jacoby: bool = False,
           beavers: bool = False, x: float | None = None, win_shift: float | None = None) -> CubeDecision:
    """The cube decision of one position from its cubeless probabilities (the player on roll's, before it rolls),
    by Janowski's formula. ``match`` is ``None`` for money or a ``bgai.core.match.MatchScore``; ``x`` the cube
    efficiency (default: the GNU Backgammon manual's, ``efficiency``); ``win_shift`` moves the win chance the
    formula reads (``shift_win``; default: none).
    """
    state = cube_state(cube, owner, match, jacoby=jacoby, beavers=beavers)
    eq = cube_equities(np.asarray(probs, dtype=np.float64).reshape(1, 5), np.asarray(board)[None], state, x=x,
                       win_shift=None if win_shift is None else np.array([win_shift], dtype=np.float64))
    return decision(eq, state, match)


#: A cube action's short form in a score grid (``ScoreGrid``), from ``describe``'s words.
SHORT_ACTIONS = {"No double": "ND", "No redouble": "ND", "Double": "D", "Redouble": "D", "Too good to double": "TG",
                 "Too good to redouble": "TG"}


def short_action(words: str) -> str:
    """``describe``'s words as a score grid writes them: ``ND/T``, ``D/T``, ``D/P``, ``TG/P`` (the verdict, then the
    opponent's answer to a double: take, pass, beaver), ``-`` where the player on roll may not double."""
    if words.startswith("No double:"):
        return "-"
    verdict, _, answer = words.partition(", ")
    return f"{SHORT_ACTIONS[verdict]}/{answer[:1].upper()}"


@dataclass(frozen=True)
class ScoreCell:
    """The cube decision of one position at one score: ``away`` (the points the player on roll and its opponent
    still need; ``None`` for money), the action in words and short (``short_action``), the no double, double/take
    and double/pass equities of the player on roll (match-winning chances in a match, the stake's units for money;
    ``None`` where it may not double) and the same as money equivalents (``emg``)."""

    away: tuple[int, int] | None
    action: str
    short: str
    no_double: float
    double_take: float | None
    double_pass: float | None
    emg: tuple[float, float | None, float | None]


@dataclass(frozen=True)
class ScoreGrid:
    """One position's cube action at every score of a match to ``length`` (``cells[i][j]``: the player on roll
    ``i + 1`` away, its opponent ``j + 1`` away; a side one away is post-Crawford, where the cube is alive) and for
    money (``money``), with the cube at ``cube`` held by ``owner``. ``Bot.score_grid`` makes one."""

    length: int
    cube: int
    owner: CubeOwner
    cells: tuple[tuple[ScoreCell, ...], ...]
    money: ScoreCell

    def __str__(self) -> str:
        n = self.length
        owner = {CENTERED: "centered cube", ON_ROLL: f"cube {self.cube} owned by the player on roll",
                 OPPONENT: f"cube {self.cube} owned by the opponent"}[self.owner]
        lines = [f"Cube action at every score of a {n}-point match ({owner}; a side 1-away post-Crawford)",
                 "rows: the player on roll's points to go; columns: its opponent's",
                 "      " + "".join(f"{f'{j}-away':>8}" for j in range(1, n + 1))]
        for i in range(n):
            lines.append(f"{f'{i + 1}-away':<6}" + "".join(f"{c.short:>8}" for c in self.cells[i]))
        m = self.money
        lines.append(f"money: {m.short}   (ND no double, D double, TG too good; /T take, /P pass, /B beaver)")
        lines.append("Equities of the player on roll, EMG: no double, double/take, double/pass")

        def emg(v):
            return "     -" if v is None else f"{v:+.3f}"
        for row in self.cells:
            for c in row:
                assert c.away is not None
                lines.append(f"  {c.away[0]:>2}-away {c.away[1]:>2}-away  {c.short:<5} {emg(c.emg[0])}  "
                             f"{emg(c.emg[1])}  {emg(c.emg[2])}")
        lines.append(f"  money          {m.short:<5} {emg(m.emg[0])}  {emg(m.emg[1])}  {emg(m.emg[2])}")
        return "\n".join(lines)


def score_cells(eq: CubeEquities, state: CubeState) -> list[ScoreCell]:
    """A ``ScoreCell`` for each row of ``eq`` (the cube decisions of ``state``'s rows)."""
    cells = []
    emg = [eq.emg(v) for v in (eq.no_double, eq.double_take, eq.double_pass)]
    def pick(values: np.ndarray, i: int) -> float | None:
        return None if np.isnan(values[i]) else float(values[i])

    for i in range(len(state)):
        words = describe(eq, i, state)
        away = None if state.away is None else (int(state.away[i, 0]), int(state.away[i, 1]))
        cells.append(ScoreCell(away, words, short_action(words), float(eq.no_double[i]), pick(eq.double_take, i),
                               pick(eq.double_pass, i), (float(emg[0][i]), pick(emg[1], i), pick(emg[2], i))))
    return cells
