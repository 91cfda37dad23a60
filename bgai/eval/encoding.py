"""The batched position encoder: boards in, the input vector of bgai's equity network out.

``encode(boards)`` turns N boards (N×26 int8, seen from the player on roll, the layout of ``Position.board``) into
an N×``N_FEATURES`` float32 array. There is no per-position Python loop: every feature is numpy over the whole
batch, and the board-shaped ones are bit operations on one 32-bit mask per board and side.

Whose point of view
-------------------
"own" is the player on roll (positive checkers), "opp" the other player. The input is made of two halves with the
same layout, then one shared block::

    [ own half (SIDE_SIZE) | opp half (SIDE_SIZE) | contact (1) ]

Each half is one function, ``side features``, of a board seen from the side it describes (that side's checkers
positive, numbered by its own pip distance): the own half is computed on ``boards`` and the opp half on the
switched boards ``-boards[:, ::-1]``. So the encoding is symmetric by construction: ``encode(switch(b))`` is
``encode(b)`` with the two halves exchanged (``swap_sides``). Who is on roll is not an input: it is always "own".

A side's features (scaling in brackets; "we" is the side described, "they" the other side)
-----------------------------------------------------------------------------------------
Tesauro's encoding (G. Tesauro, "Practical issues in temporal difference learning", Machine Learning 8, 257-277,
1992; the same inputs as TD-Gammon 0.0, Tesauro, "TD-Gammon, a self-teaching backgammon program, achieves
master-level play", Neural Computation 6, 1994), without the two side-to-move units:

``points`` (96)
    For our points 1..24 in our numbering, 4 units each from our checker count n on it: ``[n >= 1, n >= 2,
    n >= 3, (n - 3) / 2 if n >= 4 else 0]``, read from the constant table ``POINT_UNITS[n]``. Point p's units are
    at ``4 * (p - 1)`` within the block. Points the other side holds read as n = 0.
``bar`` (1)
    Our checkers on the bar / 2.
``off`` (1)
    Our borne-off checkers / 15.

Expert features (in the spirit of GNU Backgammon's hand-crafted inputs, eval.c; definitions here are bgai's own):

``pips`` (1)
    Our pip count / 100 (a checker on the bar counts 25; 1.67 at the start, at most 3.75).
``pip_lead`` (1)
    (their pip count - our pip count) / 100: positive when we lead the race.
``blots`` (1)
    Our points 1..24 holding exactly one of our checkers, / 5 (checkers on the bar are not blots).
``hit_chance`` (1)
    The fraction of the 36 rolls with which they, were they to roll now, could hit at least one of our blots.
    For the opp half this is the chance that the player on roll hits now; for the own half it is the threat
    the opponent would have on its roll if nothing changed. Counted by the dice, over bit masks:

    * direct shots (one die) and indirect ones: a non-double's sum through either intermediate point, a
      double's 2, 3 or 4 steps, each intermediate landing point not one we hold (two or more of ours);
    * their checkers on the bar enter first (on our points 1..6, never onto one we hold): with one on the bar
      it enters with one die and any checker (it too) may hit with the other; with two or more only entering
      checkers can hit; a double enters them (up to four) and plays what is left of its four steps;
    * not modelled: the "use both dice" rule, which can forbid a hit that leaves the other die unplayable
      when a play without the hit uses both. So the count can only be too high, and rarely is: on 30,000
      afterstates from games, each seen from both sides, it equalled the exact count (every legal play of
      every roll, from the move generator) on 99.8% of them and was never lower (tests check this).
``back_checkers`` (1)
    Our checkers in their home board (our points 19..24) or on our bar, / 5.
``home_points`` (1)
    Points made (two or more of ours) in our home board, points 1..6, / 6.
``prime`` (1)
    The longest run of consecutive made points anywhere on 1..24, capped at 6 (a full prime), / 6.
``anchors`` (1)
    Points made in their home board (our points 19..24), / 2.
``escapes`` (1)
    The fraction of the 36 rolls with which our rearmost checker (the bar counts as point 25) could get past
    every point they have made in their home and outer boards (our points 13..24) in front of it: it moves
    alone, one die at a time (a double up to four times), never landing on a point they hold, and escapes once
    it lands below the lowest such point. 1.0 when they hold none of those points in front of it (always so in
    a race, or with no checker left); 15/36 from the starting position (past their 8 point). Approximate: it
    ignores the bar rule for our other checkers and the "use both dice" rule. Those points all lie within 12
    pips of the checker, so the value is read from ``ESCAPE_TABLE`` by the distance to the farthest of them and
    the 12-bit pattern of the points they hold in the 12 pips ahead (landings farther ahead count as open): the
    idea of GNU Backgammon's ``anEscapes`` table (eval.c), with bgai's own definition of an escape.

Version 2 adds seven features to each side, after ``escapes`` (definitions bgai's own, in the spirit of the
inputs GNU Backgammon's networks are documented to use in eval.c: I_BREAK_CONTACT, I_BACK_CHEQUER, I_BACK_ANCHOR,
I_FORWARD_ANCHOR, I_CONTAIN, I_PIPLOSS, I_ENTER2):

``break_contact`` (1)
    The pips we still have to move so that every one of our checkers has passed every one of theirs: for each of
    our checkers on a point at or behind their most advanced checker (the lowest point, in our numbering, holding
    one of theirs; their bar counts as point 0), the distance to one point past it. / 100. 0.0 in a race.
``back_checker`` (1)
    The point of our rearmost checker (the bar counts as 25), / 25; 0.0 with no checker left.
``back_anchor`` (1)
    Our rearmost made point in their home board (our points 19..24): (point - 18) / 6; 0.0 with none.
``forward_anchor`` (1)
    Our most advanced made point in their home board or on their bar point (our points 18..24): (25 - point) / 7;
    0.0 with none (so their bar point reads 1.0 and their ace point 1/7).
``containment`` (1)
    How well they contain us: 1 - the smallest, over the points 15..24, of the share of the 36 rolls with which a
    lone checker of ours on that point would escape past their points on our 13..24 in front of it (as for
    ``escapes``).
``pip_loss`` (1)
    The pips we would lose to their hit on their next roll, if nothing changed, averaged over the 36 rolls: for
    each roll, the largest 25 - p over our blots on points p that it hits (counted as for ``hit_chance``). / 25.
``double_shot`` (1)
    The share of the 36 rolls with which they could hit two different blots of ours (each by some play of the
    roll, counted as for ``hit_chance``; not always both in one play).
``enter`` (1)
    The share of the 36 rolls with which a checker of ours on the bar would enter: 1 - (their made home points /
    6)**2.

Version 3 adds four features to each side, after ``enter`` (definitions bgai's own, in the spirit of GNU
Backgammon's documented I_MOBILITY, I_TIMING, I_BACKG and I_BACKG1, eval.c):

``mobility`` (1)
    How freely our checkers move: over the die values 1..6, the number of our checkers (on the bar and points
    2..24) that could move that many pips without landing on a point they hold (two or more of theirs; bearing
    off not counted), summed and / 90 (15 checkers times 6 values). The bar rule and the other die are ignored.
``timing`` (1)
    The pips our checkers outside our home board (the bar counting 25) must travel to reach our 6 point, / 100:
    how long we can keep our position before the home board has to give way.
``back_game`` (1)
    With two or more made points in their home board (our points 19..24): our checkers there and on our bar,
    / 15; else 0.0.
``back_game1`` (1)
    The same count with exactly one such point; else 0.0.

Version 0 is Tesauro's units alone in each half (``points``, ``bar`` and ``off``), then ``contact``: 197 inputs
for the pruning nets (``training/pruner.py``), which rank a lookahead's plays so that the network judges few, as
GNU Backgammon's pruning nets read only its base inputs. Every input but ``contact`` depends on one board cell (a
point's count, a bar) or is a sum over them (``off``), so a first layer of these inputs is a sum of rows of a
table indexed by cell and count, computed from the boards without encoding them
(``bgai.eval.weights.ModelSnapshot.board_probabilities``).

Shared block:

``contact`` (1)
    1.0 when some checker can still meet an opposing one, 0.0 in a pure race: exactly
    ``not bgai.players.pubeval.is_race(board)``. Symmetric, so it appears once.

Names and offsets: ``BLOCKS`` lists every block of the latest version as ``Block(name, start, size)``, own blocks
prefixed ``own_``, opp blocks ``opp_``; ``block("own_points")`` finds one by name and ``Block.slice`` indexes the
features; ``LAYOUTS[version]`` has the same for each version. Changing any definition here must add a version
(checkpoints record theirs, and each version's inputs stay what they were, so old networks keep working).

    >>> from bgai import Position
    >>> x = encode(Position.start().board[None])
    >>> x.shape == (1, N_FEATURES), x.dtype
    (True, dtype('float32'))
    >>> x[0, block("own_points").slice].reshape(24, 4)[5].tolist()   # our 6 point: 5 checkers
    [1.0, 1.0, 1.0, 1.0]
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numba
import numpy as np

from bgai.core.dice import ROLL_COUNTS, ROLLS
from bgai.core.kernels import _highest, _lowest, _popcount
from bgai.core.movegen import BOARD_SIZE, CHECKERS, OWN_BAR, threads
from bgai.core.phase import is_race

__all__ = [
    "ENCODER_VERSION",
    "VERSIONS",
    "LAYOUTS",
    "Layout",
    "n_features",
    "N_FEATURES",
    "SIDE_SIZE",
    "Block",
    "BLOCKS",
    "SIDE_BLOCKS",
    "POINT_UNITS",
    "ESCAPE_TABLE",
    "block",
    "encode",
    "encode_torch",
    "swap_sides",
    "hit_rolls",
]

#: The encoder version of new models (the shipped networks'). Add a version whenever any feature's definition,
#: scaling or order changes. Version 3 is opt-in (a run's ``encoder = 3``) until a network trained on it plays
#: better.
ENCODER_VERSION = 2


class Block(NamedTuple):
    """A named run of features: ``x[:, start:start + size]``."""

    name: str
    start: int
    size: int

    @property
    def slice(self) -> slice:
        return slice(self.start, self.start + self.size)

    @property
    def stop(self) -> int:
        return self.start + self.size


def _layout(names_sizes, start: int = 0, prefix: str = "") -> tuple[Block, ...]:
    blocks = []
    for name, size in names_sizes:
        blocks.append(Block(prefix + name, start, size))
        start += size
    return tuple(blocks)


_SIDE_LAYOUT_V0 = (
    ("points", 96),
    ("bar", 1),
    ("off", 1),
)
_SIDE_LAYOUT_V1 = _SIDE_LAYOUT_V0 + (
    ("pips", 1),
    ("pip_lead", 1),
    ("blots", 1),
    ("hit_chance", 1),
    ("back_checkers", 1),
    ("home_points", 1),
    ("prime", 1),
    ("anchors", 1),
    ("escapes", 1),
)
_SIDE_LAYOUT_V2 = _SIDE_LAYOUT_V1 + (
    ("break_contact", 1),
    ("back_checker", 1),
    ("back_anchor", 1),
    ("forward_anchor", 1),
    ("containment", 1),
    ("pip_loss", 1),
    ("double_shot", 1),
    ("enter", 1),
)
_SIDE_LAYOUT_V3 = _SIDE_LAYOUT_V2 + (
    ("mobility", 1),
    ("timing", 1),
    ("back_game", 1),
    ("back_game1", 1),
)


class Layout:
    """The input vector of one encoder version: ``side_blocks`` (offsets within a half), ``blocks`` (all of them,
    tiling ``range(n_features)``), ``side_size`` and ``n_features``."""

    def __init__(self, version: int, side_layout) -> None:
        self.version = version
        self.side_blocks = _layout(side_layout)
        self.side_size = self.side_blocks[-1].stop
        self.blocks = (
            _layout(side_layout, 0, "own_")
            + _layout(side_layout, self.side_size, "opp_")
            + _layout((("contact", 1),), 2 * self.side_size)
        )
        self.n_features = self.blocks[-1].stop
        self.by_name = {b.name: b for b in self.blocks}
        self.offsets = {b.name: b.start for b in self.side_blocks}
        self.contact = self.by_name["contact"].start

    def block(self, name: str) -> Block:
        try:
            return self.by_name[name]
        except KeyError:
            raise KeyError(f"no block {name!r} in encoder version {self.version}; the blocks are "
                           f"{', '.join(self.by_name)}") from None


LAYOUTS = {0: Layout(0, _SIDE_LAYOUT_V0), 1: Layout(1, _SIDE_LAYOUT_V1), 2: Layout(2, _SIDE_LAYOUT_V2),
           3: Layout(3, _SIDE_LAYOUT_V3)}
VERSIONS = tuple(LAYOUTS)
_LATEST = LAYOUTS[ENCODER_VERSION]
#: The latest version's blocks of one side, offsets relative to the start of its half.
SIDE_BLOCKS = _LATEST.side_blocks
SIDE_SIZE = _LATEST.side_size
#: Every block of the latest version's input vector, in order; they tile ``range(N_FEATURES)``.
BLOCKS = _LATEST.blocks
N_FEATURES = _LATEST.n_features


def n_features(version: int = ENCODER_VERSION) -> int:
    """The width of encoder ``version``'s input vector."""
    return _layout_of(version).n_features


def _layout_of(version: int) -> Layout:
    try:
        return LAYOUTS[version]
    except KeyError:
        raise ValueError(f"unknown encoder version {version!r}; bgai has {', '.join(map(str, VERSIONS))}") from None


def block(name: str, version: int = ENCODER_VERSION) -> Block:
    """The block called ``name`` (e.g. ``"own_points"``, ``"opp_hit_chance"``, ``"contact"``) of ``version``."""
    return _layout_of(version).block(name)


#: Tesauro's 4 units for a point holding n checkers, n = 0..15.
POINT_UNITS = np.array(
    [[n >= 1, n >= 2, n >= 3, (n - 3) / 2 if n >= 4 else 0.0] for n in range(CHECKERS + 1)], dtype=np.float32
)
POINT_UNITS.setflags(write=False)

# Bit masks over board indices (bit i = index i).
_POINT_BITS = np.uint32(((1 << 25) - 1) & ~1)  # points 1..24
_HOME_BITS = np.uint32(0b1111110)  # points 1..6
_THEIR_HOME_BITS = np.uint32(0b111111 << 19)  # points 19..24
_THEIR_SIDE_BITS = np.uint32(((1 << 12) - 1) << 13)  # points 13..24: their home and outer boards
_ANCHOR_BITS = np.uint32(((1 << 7) - 1) << 18)  # points 18..24: their bar point and home board
_ROLLS = tuple((int(a), int(b)) for a, b in ROLLS)  # the 21 distinct rolls (bgai.core.dice), as Python ints
_ROLL_COUNTS = tuple(np.uint8(c) for c in ROLL_COUNTS)  # of the 36


def _escape_table() -> np.ndarray:
    """``table[f, pattern]``: fraction of the 36 rolls with which a lone checker lands more than ``f`` pips ahead.

    Bit ``12 - d`` of ``pattern`` is set when the point ``d`` pips ahead (d = 1..12) is blocked, and no landing
    before that one may be on a blocked point; points more than 12 pips ahead count as open. ``f = 0`` (nothing
    to escape) gives 1.
    """
    pattern = np.arange(1 << 12)
    table = np.zeros((13, len(pattern)), dtype=np.float32)

    def blocked(d: int) -> np.ndarray:
        return (pattern >> (12 - d)) & 1 == 1 if d <= 12 else np.zeros(len(pattern), dtype=bool)

    table[0] = 1.0
    for farthest in range(1, 13):
        rolls = np.zeros(len(pattern))
        for a, b in _ROLLS:
            orders = [(a, a, a, a)] if a == b else [(a, b), (b, a)]
            escaped = np.zeros(len(pattern), dtype=bool)
            for steps in orders:
                distance, path_open = 0, np.ones(len(pattern), dtype=bool)
                for step in steps:
                    distance += step
                    path_open &= ~blocked(distance)
                    escaped |= path_open & (distance > farthest)
            rolls += escaped * (1 if a == b else 2)
        table[farthest] = rolls / 36.0
    table.setflags(write=False)
    return table


#: ``ESCAPE_TABLE[f, pattern]``: see the ``escapes`` feature and ``_escape_table``.
ESCAPE_TABLE = _escape_table()


_PACK_MAGIC = np.uint64(0x0102040810204080)  # gathers the low bits of 8 bytes into the top byte


def _bits(masks: np.ndarray) -> np.ndarray:
    """(..., 32) bool -> (...) uint32 with bit i set where column i is.

    Each 8 columns read as one little-endian uint64 whose bytes are 0 or 1; multiplying by ``_PACK_MAGIC`` moves
    byte i's bit to bit 56 + i with no carries, so the top byte is those 8 columns packed. (About ten times
    faster than ``np.packbits`` here.)
    """
    words = (masks.view(np.uint64) * _PACK_MAGIC) >> np.uint64(56)
    return np.ascontiguousarray(words.astype(np.uint8)).view("<u4")[..., 0]


def hit_rolls(blots: np.ndarray, held: np.ndarray, shooters: np.ndarray, on_bar: np.ndarray) -> np.ndarray:
    """How many of the 36 rolls let "them" hit at least one of "our" blots (see the ``hit_chance`` feature).

    All arguments are per board (any shape, the same for all), seen from our side: ``blots``, ``held`` (points
    we have made) and ``shooters`` (points 1..24 holding their checkers) as uint32 bit masks over board indices
    (bit i = index i); ``on_bar`` their checkers on the bar (index 0). They move up the indices. Returns uint8
    counts, 0..36.
    """
    shape = blots.shape
    hits = np.zeros(blots.size, dtype=np.uint8)
    for weight, mask in zip(_ROLL_COUNTS, hit_masks(blots, held, shooters, on_bar)):
        hits += (mask != 0).view(np.uint8) * weight
    return hits.reshape(shape)


_DEBRUIJN = np.uint32(0x077CB531)
_DEBRUIJN_BIT = np.zeros(32, dtype=np.int8)
_DEBRUIJN_BIT[[((1 << i) * 0x077CB531 & 0xFFFFFFFF) >> 27 for i in range(32)]] = np.arange(32)


def lowest_bit(masks: np.ndarray) -> np.ndarray:
    """Index of the lowest set bit of each uint32 mask (0 for an empty mask): a de Bruijn multiply and a table."""
    with np.errstate(over="ignore"):
        return _DEBRUIJN_BIT[((masks & (~masks + np.uint32(1))) * _DEBRUIJN) >> np.uint32(27)]


def pip_loss(masks: list[np.ndarray]) -> np.ndarray:
    """Mean over the 36 rolls of the pips lost to the hit of each roll (``hit_masks``): 25 - p for the most
    advanced blot p it hits, 0 when it hits none (see the ``pip_loss`` feature)."""
    total = np.zeros(masks[0].shape, dtype=np.int16)
    for weight, mask in zip(_ROLL_COUNTS, masks):
        total += np.where(mask != 0, 25 - lowest_bit(mask), 0).astype(np.int16) * weight
    return total * np.float32(1 / 36)


def hit_masks(blots: np.ndarray, held: np.ndarray, shooters: np.ndarray, on_bar: np.ndarray) -> list[np.ndarray]:
    """For each of the 21 distinct rolls (``_ROLLS``), the uint32 mask of our blots that roll can hit, one per
    board (flattened); arguments as for ``hit_rolls``."""
    blots, held, shooters, on_bar = (np.ravel(a) for a in (blots, held, shooters, on_bar))
    open_ = ~held & _POINT_BITS  # where their checkers may land
    # (index d: one die of d pips; index 0 unused)
    lands: list = [None] + [shooters << np.uint32(d) for d in range(1, 7)]  # one checker moved d pips (none on bar)
    direct: list = [None] + [lands[d] & blots for d in range(1, 7)]
    via: list = [None] + [lands[d] & open_ for d in range(1, 7)]  # after one die, the other still to play
    masks = []
    for a, b in _ROLLS:
        if a != b:
            masks.append(direct[a] | direct[b] | (((via[a] << np.uint32(b)) | (via[b] << np.uint32(a))) & blots))
        else:
            reach, step = via[a], np.uint32(a)
            mask = direct[a].copy()
            for _ in range(3):
                reach = (reach << step) & open_
                mask |= reach & blots
            masks.append(mask)

    barred = np.flatnonzero(on_bar > 0)
    if len(barred):  # their checkers on the bar enter first: redo those boards
        from_bar = _hit_masks_from_bar(blots[barred], open_[barred], shooters[barred], on_bar[barred])
        for mask, redone in zip(masks, from_bar):
            mask[barred] = redone
    return masks


def _hit_masks_from_bar(blots, open_, shooters, on_bar) -> list[np.ndarray]:
    """``hit_masks`` for boards where they have ``on_bar >= 1`` checkers on the bar, which must enter first."""
    one, none = np.uint32(1), np.uint32(0)
    single = on_bar == 1
    steps_left = 4 - on_bar.astype(np.int16)  # of a double, once all of them have entered
    entry = [None] + [one << np.uint32(d) for d in range(1, 7)]
    can_enter = [None] + [(open_ & entry[d]) != 0 for d in range(1, 7)]  # entering on our point d
    hit_entering = [None] + [blots & entry[d] for d in range(1, 7)]
    masks = []
    for a, b in _ROLLS:
        if a != b:
            # One on the bar: it enters with one die, then any checker (it too) plays the other.
            then_a = np.where(can_enter[a], ((shooters | entry[a]) << np.uint32(b)) & blots, none)
            then_b = np.where(can_enter[b], ((shooters | entry[b]) << np.uint32(a)) & blots, none)
            # Two or more: only entering checkers move, and a blot on an entry point means that point is open.
            masks.append(hit_entering[a] | hit_entering[b] | np.where(single, then_a | then_b, none))
        else:
            reach, mask = shooters | entry[a], hit_entering[a].copy()
            for k in range(1, 4):
                reach = (reach << np.uint32(a)) & open_
                mask |= np.where(steps_left >= k, reach & blots, none)
            masks.append(np.where(can_enter[a], mask, none))
    return masks


def _side_features(sides: np.ndarray, out: np.ndarray, layout: Layout) -> None:
    """Write one side's features for ``sides`` (..., 32) int8 (boards padded with zeros to 32 columns, each seen
    from the side described) into ``out`` (..., side_size) float32, which may be a strided view. ``pip_lead`` is
    left to the caller, which pairs the sides."""
    _S = layout.offsets
    ours = np.maximum(sides[..., :BOARD_SIZE], 0)
    # Tesauro's units: a table row is 16 bytes, so gather whole rows as single 16-byte items.
    points = out[..., _S["points"]:_S["points"] + 96].view(_UNIT_ROW)
    np.take(_UNIT_ROWS, ours[..., 1:25], out=points, mode="clip")
    out[..., _S["bar"]] = ours[..., OWN_BAR] * np.float32(0.5)
    on_board = ours[..., 1:].sum(axis=-1, dtype=np.int16)
    out[..., _S["off"]] = (CHECKERS - on_board) * np.float32(1 / 15)
    if layout.version == 0:
        return
    pips = np.einsum("...i,i->...", ours, _PIP_WEIGHTS, dtype=np.int16)
    out[..., _S["pips"]] = pips * np.float32(0.01)
    out[..., _S["back_checkers"]] = ours[..., 19:].sum(axis=-1, dtype=np.int16) * np.float32(0.2)

    masks = np.empty((5,) + sides.shape, dtype=bool)
    np.equal(sides, 1, out=masks[0])
    np.greater_equal(sides, 2, out=masks[1])
    np.less(sides, 0, out=masks[2])
    np.less_equal(sides, -2, out=masks[3])
    np.greater(sides, 0, out=masks[4])
    blots, held, theirs, their_held, checkers = _bits(masks)
    blots &= _POINT_BITS
    held &= _POINT_BITS
    their_held &= _POINT_BITS
    shooters = theirs & _POINT_BITS

    out[..., _S["blots"]] = np.bitwise_count(blots) * np.float32(0.2)
    on_bar = np.maximum(-sides[..., 0], 0)
    roll_masks = hit_masks(blots, held, shooters, on_bar)
    hits = np.zeros(blots.size, dtype=np.uint8)
    for weight, mask in zip(_ROLL_COUNTS, roll_masks):
        hits += (mask != 0).view(np.uint8) * weight
    out[..., _S["hit_chance"]] = hits.reshape(blots.shape) * np.float32(1 / 36)
    out[..., _S["home_points"]] = np.bitwise_count(held & _HOME_BITS) * np.float32(1 / 6)
    out[..., _S["anchors"]] = np.bitwise_count(held & _THEIR_HOME_BITS) * np.float32(0.5)

    run, prime = held, np.zeros(held.shape, dtype=np.uint8)
    for _ in range(6):  # after k rounds, run has a bit wherever k + 1 made points in a row end
        prime += run != 0
        run = run & (run >> np.uint32(1))
    out[..., _S["prime"]] = prime * np.float32(1 / 6)

    # Rearmost checker: the highest set bit of `checkers` (0 when none is left: nothing ahead of it). The
    # blockade to pass: their points 13..24 ahead of it; the landings: all their points within 12 pips.
    rearmost = np.maximum(np.frexp(checkers.astype(np.float64))[1] - 1, 0).astype(np.uint32)
    ahead = their_held & ((np.uint32(1) << rearmost) - np.uint32(1))
    blockade = ahead & _THEIR_SIDE_BITS
    lowest = np.frexp((blockade & (~blockade + np.uint32(1))).astype(np.float64))[1] - 1  # -1 if none
    farthest = np.where(blockade != 0, rearmost.astype(np.int64) - lowest, 0)
    pattern = ((ahead.astype(np.uint64) << np.uint64(12)) >> rearmost.astype(np.uint64)) & np.uint64(0xFFF)
    out[..., _S["escapes"]] = ESCAPE_TABLE[farthest, pattern]
    if layout.version < 2:
        return

    # Their most advanced checker: the lowest index f holding one of theirs (their bar, index 0, included). Our
    # checkers on points p >= f each need p - f + 1 pips: from prefix sums of our checkers and pips below f.
    front = lowest_bit(theirs).astype(np.int64)[..., None]
    below = np.zeros(ours.shape[:-1] + (BOARD_SIZE + 1,), dtype=np.int16)
    np.cumsum(ours, axis=-1, out=below[..., 1:])
    count = ours.sum(axis=-1, dtype=np.int16) - np.take_along_axis(below, front, axis=-1)[..., 0]
    np.cumsum(ours * _PIP_WEIGHTS, axis=-1, out=below[..., 1:])
    behind_pips = pips - np.take_along_axis(below, front, axis=-1)[..., 0]
    needed = behind_pips - (front[..., 0] - 1) * count
    out[..., _S["break_contact"]] = np.where(theirs != 0, needed, 0) * np.float32(0.01)
    out[..., _S["back_checker"]] = rearmost * np.float32(1 / 25)
    back = held & _THEIR_HOME_BITS
    top = np.frexp(back.astype(np.float64))[1] - 1  # highest made point there, -1 if none
    out[..., _S["back_anchor"]] = np.where(back != 0, top - 18, 0) * np.float32(1 / 6)
    forward = held & _ANCHOR_BITS
    low = np.frexp((forward & (~forward + np.uint32(1))).astype(np.float64))[1] - 1
    out[..., _S["forward_anchor"]] = np.where(forward != 0, 25 - low, 0) * np.float32(1 / 7)
    worst = np.ones(held.shape, dtype=np.float32)
    blockade = their_held & _THEIR_SIDE_BITS
    lowest = np.where(blockade != 0, lowest_bit(blockade), 32).astype(np.int64)  # the same for every start
    wide = their_held.astype(np.uint64) << np.uint64(12)
    for start in range(15, 25):  # a lone checker of ours on each of their points 15..24 (our numbering)
        farthest = np.where(lowest < start, start - lowest, 0)
        pattern = (wide >> np.uint64(start)) & np.uint64(0xFFF)  # the 12 points in front of it
        np.minimum(worst, ESCAPE_TABLE[farthest, pattern], out=worst)
    out[..., _S["containment"]] = 1 - worst
    out[..., _S["pip_loss"]] = pip_loss(roll_masks).reshape(blots.shape) * np.float32(1 / 25)
    doubles = np.zeros(blots.size, dtype=np.uint8)
    for weight, mask in zip(_ROLL_COUNTS, roll_masks):
        doubles += (np.bitwise_count(mask) >= 2).view(np.uint8) * weight
    out[..., _S["double_shot"]] = doubles.reshape(blots.shape) * np.float32(1 / 36)
    closed = np.bitwise_count(their_held & _THEIR_HOME_BITS).astype(np.float32)
    out[..., _S["enter"]] = 1 - (closed / 6) ** 2
    if layout.version < 3:
        return

    blocked = sides[..., 1:25] <= -2  # their made points 1..24 (index k - 1 is point k)
    moves = np.zeros(sides.shape[:-1], dtype=np.int16)
    for d in range(1, 7):  # checkers on points d + 1..25 landing on points 1..25 - d
        moves += np.einsum("...i,...i->...", ours[..., d + 1:], ~blocked[..., :BOARD_SIZE - 1 - d], dtype=np.int16)
    out[..., _S["mobility"]] = moves.astype(np.float32) * np.float32(1 / 90)
    timing = np.einsum("...i,i->...", ours, _TIMING_WEIGHTS, dtype=np.int16)
    out[..., _S["timing"]] = timing.astype(np.float32) * np.float32(0.01)
    anchors = np.bitwise_count(held & _THEIR_HOME_BITS)
    back = ours[..., 19:].sum(axis=-1, dtype=np.int16).astype(np.float32) * np.float32(1 / 15)
    out[..., _S["back_game"]] = np.where(anchors >= 2, back, np.float32(0))
    out[..., _S["back_game1"]] = np.where(anchors == 1, back, np.float32(0))


_UNIT_ROW = np.dtype((np.void, 4 * POINT_UNITS.itemsize))
_UNIT_ROWS = POINT_UNITS.view(_UNIT_ROW).ravel()
_PIP_WEIGHTS = np.arange(BOARD_SIZE, dtype=np.int8)
_TIMING_WEIGHTS = np.maximum(np.arange(BOARD_SIZE) - 6, 0).astype(np.int8)  # pips to our 6 point
_WIDE = 32  # boards are padded to 32 columns so that each reads as four uint64 words in `_bits`


def _encode_chunk(boards: np.ndarray, out: np.ndarray, layout: Layout) -> None:
    n = len(boards)
    sides = np.zeros((n, 2, _WIDE), dtype=np.int8)  # [:, 0]: the boards as they are; [:, 1]: switched
    sides[:, 0, :BOARD_SIZE] = boards
    np.negative(boards[:, ::-1], out=sides[:, 1, :BOARD_SIZE])
    halves = out[:, : 2 * layout.side_size].reshape(n, 2, layout.side_size)  # a view: [own half | opp half]
    _side_features(sides, halves, layout)
    if layout.version > 0:
        pips = halves[:, :, layout.offsets["pips"]]
        halves[:, :, layout.offsets["pip_lead"]] = pips[:, ::-1] - pips
    out[:, layout.contact] = ~is_race(boards)


_POOL: ThreadPoolExecutor | None = None


def _chunk_size(n: int, workers: int) -> int:
    """Boards encoded together. Chunks of several thousand keep the temporaries in the processor's cache and the
    per-call overhead small; with two threads (the kernel releases the interpreter lock) somewhat larger chunks,
    one per thread, run fastest (docs/figures.md, "Tuning constants")."""
    if workers == 1:
        return 8192
    return int(min(16384, max(4096, -(-n // workers))))


def _pool(workers: int) -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None or _POOL._max_workers != workers:
        _POOL = ThreadPoolExecutor(workers, thread_name_prefix="bgai-encoding")
    return _POOL


def encode(boards, out: np.ndarray | None = None, version: int = ENCODER_VERSION) -> np.ndarray:
    """The network inputs of ``boards`` (..., 26), each seen from the player on roll: float32 (..., n_features),
    for encoder ``version`` (default the latest).

    See the module docstring for the features and ``LAYOUTS`` for their offsets. ``out``: an optional float32 array
    of that shape to write into, C-contiguous or a 2-D block of columns of a wider one (a hot loop can reuse one
    buffer instead of allocating pages; an environment writes the inputs into its observations' first columns).
    The compiled kernel (``encode_boards``) computes them; ``reference_encode`` is the numpy statement of the same
    features, which the tests hold it equal to (the kernel is 10 to 50 times faster on the batches of a move).
    """
    layout = _layout_of(version)
    b = np.asarray(boards)
    if b.ndim == 0 or b.shape[-1] != BOARD_SIZE:
        raise ValueError(f"boards must have shape (..., {BOARD_SIZE}), got {b.shape}")
    if b.dtype.kind not in "iu":  # (np.issubdtype(b.dtype, np.integer), a tenth of the time on a move's boards)
        raise TypeError(f"boards must be an integer array, got dtype {b.dtype}")
    lead = b.shape[:-1]
    b = np.ascontiguousarray(b.reshape(-1, BOARD_SIZE), dtype=np.int8)
    shape = lead + (layout.n_features,)
    if out is None:
        out = np.empty(shape, dtype=np.float32)
    elif out.shape != shape or out.dtype != np.float32 or not (
            out.flags.c_contiguous or (out.ndim == 2 and out.strides[1] == out.itemsize)):
        raise ValueError(f"out must be a C-contiguous float32 array of shape {shape} (or of its rows' columns), got "
                         f"{out.dtype} {out.shape}")
    result, out = out, out.reshape(len(b), layout.n_features)

    def chunk(lo, hi):
        encode_boards(b[lo:hi], out[lo:hi], layout.version, layout.side_size, POINT_UNITS, ESCAPE_TABLE)

    if len(b) <= 4096:  # one pass whatever the threads (the common case: a move's few dozen boards)
        chunk(0, len(b))
        return result
    size = _chunk_size(len(b), threads())
    starts = range(0, len(b), size)
    workers = min(threads(), len(starts))
    if workers > 1:
        list(_pool(workers).map(lambda i: chunk(i, i + size), starts))
    else:
        for i in starts:
            chunk(i, i + size)
    return result


def reference_encode(boards, version: int = ENCODER_VERSION) -> np.ndarray:
    """``encode`` in numpy, one vectorized statement per feature: the readable reference the compiled kernel is
    tested against (the same values), and what a check that must not load the compiler reads
    (``bgai.eval.weights.check_outputs``). Not a hot path: ten to fifty times slower."""
    layout = _layout_of(version)
    b = np.asarray(boards)
    if b.ndim == 0 or b.shape[-1] != BOARD_SIZE or b.dtype.kind not in "iu":
        raise ValueError(f"boards must be an integer array of shape (..., {BOARD_SIZE}), got {b.dtype} {b.shape}")
    flat = np.ascontiguousarray(b.reshape(-1, BOARD_SIZE), dtype=np.int8)
    out = np.empty((len(flat), layout.n_features), dtype=np.float32)
    _encode_chunk(flat, out, layout)
    return out.reshape(b.shape[:-1] + (layout.n_features,))


def encode_torch(boards, device=None, version: int = ENCODER_VERSION):
    """``encode(boards, version=version)`` as a float32 ``torch.Tensor`` (on ``device`` if given)."""
    import torch  # only the callers that want tensors pay for importing torch

    x = torch.from_numpy(encode(boards, version=version))
    return x if device is None else x.to(device)


def swap_sides(features: np.ndarray) -> np.ndarray:
    """The features with the own and opp halves exchanged: ``encode(switch(b)) == swap_sides(encode(b))`` (for
    any version, told by the width)."""
    width = np.shape(features)[-1]
    half = next((layout.side_size for layout in LAYOUTS.values() if layout.n_features == width), None)
    if half is None:
        raise ValueError(f"{width} features are no encoder version's input vector")
    x = np.array(features, copy=True)
    x[..., :half] = features[..., half:2 * half]
    x[..., half:2 * half] = features[..., :half]
    return x


# The compiled encoder (numba): the same features one board at a time in one loop. A 0-ply move encodes some twenty
# afterstates and a 1-ply move a few thousand; the numpy encoder above makes about 150 array calls per batch whatever
# its size, so on such batches it cost more than the network itself. It reads the constants above (numba compiles
# module-level numbers and arrays in as constants); the tests hold it equal to the numpy statement of each feature.
_K_POINT_BITS = int(_POINT_BITS)  # points 1..24
_K_HOME_BITS = int(_HOME_BITS)  # points 1..6
_K_THEIR_HOME_BITS = int(_THEIR_HOME_BITS)  # points 19..24
_K_THEIR_SIDE_BITS = int(_THEIR_SIDE_BITS)  # points 13..24
_K_ANCHOR_BITS = int(_ANCHOR_BITS)  # points 18..24
_K_ROLLS = ROLLS.astype(np.int64)  # the 21 distinct rolls (bgai.core.dice)

# Where each side feature goes within a half: version 3's offsets, versions 1's and 2's being prefixes of them.
_AT = LAYOUTS[3].offsets
assert all(_AT[name] == at for v in (1, 2) for name, at in LAYOUTS[v].offsets.items())
_POINTS, _BAR, _OFF, _PIPS, _PIP_LEAD, _BLOTS = (_AT[k] for k in ("points", "bar", "off", "pips", "pip_lead", "blots"))
_HIT_CHANCE, _BACK_CHECKERS, _HOME_POINTS, _PRIME, _ANCHORS, _ESCAPES = (
    _AT[k] for k in ("hit_chance", "back_checkers", "home_points", "prime", "anchors", "escapes"))
_BREAK_CONTACT, _BACK_CHECKER, _BACK_ANCHOR, _FORWARD_ANCHOR, _CONTAINMENT, _PIP_LOSS, _DOUBLE_SHOT, _ENTER = (
    _AT[k] for k in ("break_contact", "back_checker", "back_anchor", "forward_anchor", "containment", "pip_loss",
                     "double_shot", "enter"))
_MOBILITY, _TIMING, _BACK_GAME, _BACK_GAME1 = (_AT[k] for k in ("mobility", "timing", "back_game", "back_game1"))


@numba.njit(cache=True)
def _hit_masks(blots: int, held: int, shooters: int, on_bar: int, masks: np.ndarray) -> None:
    """``bgai.eval.encoding.hit_masks`` for one board: the mask of our blots each of the 21 rolls can hit."""
    open_ = ~held & _K_POINT_BITS
    for r in range(21):
        a, b = _K_ROLLS[r, 0], _K_ROLLS[r, 1]
        if on_bar == 0:
            via_a = (shooters << a) & open_
            if a != b:
                via_b = (shooters << b) & open_
                mask = ((shooters << a) | (shooters << b) | (via_a << b) | (via_b << a)) & blots
            else:
                mask, reach = (shooters << a) & blots, via_a
                for _ in range(3):
                    reach = (reach << a) & open_
                    mask |= reach & blots
        else:  # their checkers on the bar enter first
            entry_a, entry_b = 1 << a, 1 << b
            if a != b:
                mask = (blots & entry_a) | (blots & entry_b)
                if on_bar == 1:  # it enters with one die, then any checker (it too) plays the other
                    if open_ & entry_a:
                        mask |= ((shooters | entry_a) << b) & blots
                    if open_ & entry_b:
                        mask |= ((shooters | entry_b) << a) & blots
            elif open_ & entry_a:
                reach, mask = shooters | entry_a, blots & entry_a
                for k in range(1, 4):
                    reach = (reach << a) & open_
                    if 4 - on_bar >= k:
                        mask |= reach & blots
            else:
                mask = 0
        masks[r] = mask


@numba.njit(cache=True)
def _side(side: np.ndarray, out: np.ndarray, o: int, version: int, units: np.ndarray, escapes: np.ndarray,
          masks: np.ndarray) -> np.float32:
    """One side's features of one board ``side`` (26, seen from the side described) into ``out[o:]``; returns
    its pips feature (for ``pip_lead``, which the caller writes). Offsets from ``bgai.eval.encoding``'s layouts."""
    f32 = np.float32
    pips = 0
    on_board = 0
    back_checkers = 0
    blots = held = theirs = their_held = checkers = 0
    for j in range(26):
        n = side[j]
        if n > 0:
            pips += n * j
            checkers |= 1 << j
            if j >= 1:
                on_board += n
            if j >= 19:
                back_checkers += n
            if 1 <= j <= 24:
                if n == 1:
                    blots |= 1 << j
                else:
                    held |= 1 << j
        elif n < 0:
            theirs |= 1 << j
            if n <= -2 and 1 <= j <= 24:
                their_held |= 1 << j
    for p in range(1, 25):
        n = side[p] if side[p] > 0 else 0
        for k in range(4):
            out[o + _POINTS + 4 * (p - 1) + k] = units[n, k]
    own_bar = side[25] if side[25] > 0 else 0
    out[o + _BAR] = own_bar * f32(0.5)
    out[o + _OFF] = f32(15 - on_board) * f32(1 / 15)
    if version == 0:
        return f32(0.0)
    pips_feature = f32(pips) * f32(0.01)
    out[o + _PIPS] = pips_feature
    # pip_lead: written by the caller, which pairs the sides
    out[o + _BLOTS] = f32(_popcount(blots)) * f32(0.2)
    shooters = theirs & _K_POINT_BITS
    on_bar = -side[0] if side[0] < 0 else 0
    _hit_masks(blots, held, shooters, on_bar, masks)
    hits = 0
    for r in range(21):
        if masks[r]:
            hits += 1 if _K_ROLLS[r, 0] == _K_ROLLS[r, 1] else 2
    out[o + _HIT_CHANCE] = f32(hits) * f32(1 / 36)
    out[o + _BACK_CHECKERS] = f32(back_checkers) * f32(0.2)
    out[o + _HOME_POINTS] = f32(_popcount(held & _K_HOME_BITS)) * f32(1 / 6)
    run, prime = held, 0
    for _ in range(6):
        if run:
            prime += 1
        run &= run >> 1
    out[o + _PRIME] = f32(prime) * f32(1 / 6)
    out[o + _ANCHORS] = f32(_popcount(held & _K_THEIR_HOME_BITS)) * f32(0.5)
    rearmost = _highest(checkers) if checkers else 0
    ahead = their_held & ((1 << rearmost) - 1)
    blockade = ahead & _K_THEIR_SIDE_BITS
    farthest = rearmost - _lowest(blockade) if blockade else 0
    out[o + _ESCAPES] = escapes[farthest, ((ahead << 12) >> rearmost) & 0xFFF]
    if version < 2:
        return pips_feature

    front = _lowest(theirs) if theirs else 0
    count = 0
    below = 0  # pips of our checkers below ``front``, each point's in int8 as version 2 has always computed them
    for j in range(26):
        n = side[j]
        if n > 0:
            if j >= front:
                count += n
            else:
                below += ((n * j + 128) & 0xFF) - 128
    behind = pips - below
    out[o + _BREAK_CONTACT] = f32(behind - (front - 1) * count) * f32(0.01) if theirs else f32(0.0)
    out[o + _BACK_CHECKER] = f32(rearmost) * f32(1 / 25)
    back = held & _K_THEIR_HOME_BITS
    out[o + _BACK_ANCHOR] = f32(_highest(back) - 18) * f32(1 / 6) if back else f32(0.0)
    forward = held & _K_ANCHOR_BITS
    out[o + _FORWARD_ANCHOR] = f32(25 - _lowest(forward)) * f32(1 / 7) if forward else f32(0.0)
    worst = f32(1.0)
    wall = their_held & _K_THEIR_SIDE_BITS
    lowest = _lowest(wall) if wall else 32
    for start in range(15, 25):
        reach = start - lowest if lowest < start else 0
        value = escapes[reach, ((their_held << 12) >> start) & 0xFFF]
        if value < worst:
            worst = value
    out[o + _CONTAINMENT] = f32(1.0) - worst
    loss = 0
    doubles = 0
    for r in range(21):
        mask = masks[r]
        weight = 1 if _K_ROLLS[r, 0] == _K_ROLLS[r, 1] else 2
        if mask:
            loss += (25 - _lowest(mask)) * weight
        if _popcount(mask) >= 2:
            doubles += weight
    out[o + _PIP_LOSS] = (f32(loss) * f32(1 / 36)) * f32(1 / 25)
    out[o + _DOUBLE_SHOT] = f32(doubles) * f32(1 / 36)
    closed = f32(_popcount(their_held & _K_THEIR_HOME_BITS))
    out[o + _ENTER] = f32(1.0) - (closed / f32(6)) ** 2
    if version < 3:
        return pips_feature

    moves = 0
    timing = 0
    for p in range(2, 26):
        n = side[p]
        if n > 0:
            if p > 6:
                timing += n * (p - 6)
            for d in range(1, 7):
                if p - d >= 1 and not (their_held >> (p - d)) & 1:
                    moves += n
    out[o + _MOBILITY] = f32(moves) * f32(1 / 90)
    out[o + _TIMING] = f32(timing) * f32(0.01)
    anchors = _popcount(held & _K_THEIR_HOME_BITS)
    back_game = f32(back_checkers) * f32(1 / 15)
    out[o + _BACK_GAME] = back_game if anchors >= 2 else f32(0.0)
    out[o + _BACK_GAME1] = back_game if anchors == 1 else f32(0.0)
    return pips_feature


@numba.njit(cache=True, nogil=True)
def encode_boards(boards: np.ndarray, out: np.ndarray, version: int, side_size: int, units: np.ndarray,
                  escapes: np.ndarray) -> None:
    """``bgai.eval.encoding.encode`` of (N, 26) int8 boards into (N, n_features) float32 ``out``, for ``version``'s
    layout (own half, opp half, contact)."""
    side = np.empty(26, dtype=np.int64)
    masks = np.empty(21, dtype=np.int64)
    for i in range(boards.shape[0]):
        board = boards[i]
        for j in range(26):
            side[j] = board[j]
        own = _side(side, out[i], 0, version, units, escapes, masks)
        for j in range(26):
            side[j] = -board[25 - j]
        opp = _side(side, out[i], side_size, version, units, escapes, masks)
        if version > 0:
            out[i, _PIP_LEAD] = opp - own
            out[i, side_size + _PIP_LEAD] = own - opp
        # contact, as bgai.players.pubeval.is_race: our rearmost checker (1..25) behind their rearmost (0..24)
        back, opp_back = -1, 26
        for j in range(1, 26):
            if board[j] > 0:
                back = j
        for j in range(24, -1, -1):
            if board[j] < 0:
                opp_back = j
        out[i, 2 * side_size] = np.float32(1.0) if back > opp_back else np.float32(0.0)
