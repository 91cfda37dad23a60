"""What several commands share: duplicate games and their records, and the default lookahead of the commands a
person plays or asks."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from bgai.core.errors import BgaiError

if TYPE_CHECKING:
    pass


LUCK_HELP = ("also the luck-adjusted points per game: the same estimate with several times less variance (each "
             "roll's luck measured by the network at 0-ply; slower; cubeless games only)")


def play_match(first, second, args: argparse.Namespace, labels: dict) -> None:
    """Duplicate games of ``first`` against ``second``; a summary for people, then a JSON line for scripts."""
    from bgai.core.game import play_duplicate

    if args.games < 1:
        raise BgaiError(f"--games must be at least 1, got {args.games}")
    luck = None
    if args.luck:
        from functools import partial

        from bgai.eval.bot import load_bot
        from bgai.play.analysis import roll_luck

        luck = partial(roll_luck, load_bot(getattr(args, "checkpoint", None)))
    results = play_duplicate(first, second, args.games, seed=args.seed, batch=args.batch, progress=not args.quiet,
                             luck=luck)
    s = results.summary()
    print_summary(first.name, second.name, s, args.games)
    print_record(args, {**labels, **s})


def print_summary(first: str, second: str, s: dict, sequences: int) -> None:
    """The figures of ``GameResults.summary`` (``s``) of duplicate games of ``first`` against ``second``."""
    print(f"{first} v {second}: {s['games']} duplicate games ({sequences} dice sequences x 2 seats)")
    print(f"  points per game  {s['ppg']:+.3f} ± {s['ppg_se']:.3f} (for {first}; ± the standard error, "
          f"paired by dice sequence)")
    if "ppg_luck_adjusted" in s:
        print(f"  luck-adjusted    {s['ppg_luck_adjusted']:+.3f} ± {s['ppg_luck_adjusted_se']:.3f} (luck of every roll "
              f"by the network at 0-ply)")
    print(f"  wins             {100 * s['win_rate']:.1f}%")
    print(f"  gammons          {100 * s['gammon_rate']:.1f}%   backgammons {100 * s['backgammon_rate']:.1f}%")
    print(f"  speed            {s['games_per_s']:.0f} games/s")


def print_record(args: argparse.Namespace, record: dict) -> None:
    """The results as one JSON line, for scripts; with ``--json PATH`` also written to PATH, atomically (the file
    is the whole record or not there). Both begin with the command, date, commit and machine that made it."""
    from bgai.core.files import provenance, write_json

    record = {**provenance(getattr(args, "command_line", None)), **record}
    print(json.dumps(record))
    path = getattr(args, "json", None)
    if path:
        write_json(path, record)


# The commands a person plays or asks (play, serve, hint, eval, analyse) share one default lookahead,
# bgai.eval.bot.PLAY_PLIES. The parser leaves --plies None so as not to import the bot for every command; its help
# says the value, which tests/test_web_api.py holds to the constant.
PERSON_PLIES_DEFAULT = "default 2, shared by bgai play, serve, hint, eval and analyse"


def person_plies(args: argparse.Namespace) -> int:
    """``--plies`` of play, serve, hint and eval: ``bgai.eval.bot.PLAY_PLIES`` when not given."""
    from bgai.eval.bot import PLAY_PLIES

    return PLAY_PLIES if args.plies is None else args.plies
