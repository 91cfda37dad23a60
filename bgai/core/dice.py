"""The dice: the 36 ordered rolls, the 21 distinct ones and their chances.

A roll is a pair of dice, each 1..6. Of the 36 equally likely ordered rolls, a double comes one way and a
non-double two, so the 21 distinct rolls (``ROLLS``, smaller die first) weigh 1/36 or 2/36 (``ROLL_WEIGHTS``).
``ROLL_INDEX[a, b]`` is the row of roll (a, b) in ``ROLLS``, in either order. The opening roll is never a double:
it is one of the 30 ``OPENING_ROLLS``.

    >>> len(ROLLS), float(ROLL_WEIGHTS.sum()), len(ORDERED_ROLLS), len(OPENING_ROLLS)
    (21, 1.0, 36, 30)
    >>> ROLLS[ROLL_INDEX[6, 3]].tolist()
    [3, 6]
"""

from __future__ import annotations

import re

import numpy as np

from bgai.core.errors import InvalidDiceError, shown

#: The 21 distinct rolls, (a, b) with a <= b.
ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)], dtype=np.int8)
ROLLS.flags.writeable = False
#: How many of the 36 ordered rolls each of ``ROLLS`` is: 1 for a double, 2 for the others.
ROLL_COUNTS = np.where(ROLLS[:, 0] == ROLLS[:, 1], 1, 2).astype(np.int64)
ROLL_COUNTS.flags.writeable = False
#: The chance of each of ``ROLLS``.
ROLL_WEIGHTS = ROLL_COUNTS / 36.0
ROLL_WEIGHTS.flags.writeable = False
#: ``ROLL_INDEX[a, b]``: the row of (a, b) or (b, a) in ``ROLLS`` (7 x 7, index 0 unused).
ROLL_INDEX = np.zeros((7, 7), dtype=np.int64)
for _i, (_a, _b) in enumerate(ROLLS):
    ROLL_INDEX[_a, _b] = ROLL_INDEX[_b, _a] = _i
ROLL_INDEX.flags.writeable = False
#: The 36 ordered rolls (first die, second die).
ORDERED_ROLLS = np.array([(a, b) for a in range(1, 7) for b in range(1, 7)], dtype=np.int8)
ORDERED_ROLLS.flags.writeable = False
#: The 30 ordered rolls that are not doubles: the opening roll's.
OPENING_ROLLS = ORDERED_ROLLS[ORDERED_ROLLS[:, 0] != ORDERED_ROLLS[:, 1]]
OPENING_ROLLS.flags.writeable = False


def parse_dice(dice) -> tuple[int, int]:
    """Two dice from a pair of integers or a string such as ``"63"``, ``"6-3"`` or ``"6 3"``.

    Only ASCII digits and whole numbers count: floats, bools and other digits (``"٦٣"``) are refused with
    ``InvalidDiceError``, never rounded."""
    if type(dice) is tuple and len(dice) == 2 and type(dice[0]) is int and type(dice[1]) is int \
            and 1 <= dice[0] <= 6 and 1 <= dice[1] <= 6:
        return dice  # the common case, from the bot's own callers: two plain ints already
    if isinstance(dice, str):
        digits = re.fullmatch(r"\s*([0-9])\s*[-, ]?\s*([0-9])\s*", dice, re.ASCII)
        if not digits:
            raise InvalidDiceError(f"dice must be two digits such as '63' or '6-3', got {shown(dice)}")
        dice = (int(digits[1]), int(digits[2]))
    try:
        pair = tuple(dice)
    except TypeError:
        raise InvalidDiceError(f"dice must be two integers, got {shown(dice)}") from None
    if len(pair) != 2 or not all(isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_))
                                 for d in pair):
        raise InvalidDiceError(f"dice must be two integers, got {shown(dice)}")
    d1, d2 = (int(d) for d in pair)
    if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
        raise InvalidDiceError(f"each die must be in 1..6, got {shown(d1)} and {shown(d2)}")
    return d1, d2
