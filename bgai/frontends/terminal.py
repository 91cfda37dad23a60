"""``bgai play``: a person plays the bot in the terminal, one line of input at a time.

The terminal only shows a ``bgai.play.session.Session`` and passes on what is typed; every rule and every decision is
the session's. Bad input of any kind gets a one-line explanation and the prompt again.
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from bgai.core.errors import BgaiError
from bgai.core.files import games_dir, write_atomically
from bgai.formats.position import render_board
from bgai.play.session import BOT, HUMAN, TUTOR_THRESHOLD, Phase, Session, TutorWarning

HELP = """Commands (any phase unless said):
  <play>        your play in standard notation, whole or in parts:
                13/7 8/7, bar/22*, 6/off, 8/5(2)
  undo          take back the last checker move of the play you are making
  roll | r      roll the dice (when you could also double; Enter does it too)
  double | d    double (or redouble) before rolling
  take | t      take bgai's double;   pass | p   pass it
  hint [N]      the N best plays of your roll (default 5), with equities and
                chances; before rolling or facing a double, the cube hint
  cube          the cube hint: to double before rolling, to take or pass
  tutor [on|off]
                the tutor: before a play or cube action that loses a doubtful
                error or worse, it says so and asks whether to make it
  pips          pip counts, and who leads
  id            the Position ID and XGID of the position
  board | b     draw the board again
  resign [single|gammon|backgammon]
                offer to resign (bgai accepts when its equity says so)
  save [FILE]   save the match so far as a .mat file
  next | n      the next game, when one is over (Enter does it too)
  quit | q      stop; once you have played, the match is saved (to --save FILE,
                else to ~/.local/share/bgai/games/; not with --no-save)"""

PHASE_WORDS = ("roll", "r", "double", "d", "take", "t", "pass", "p", "drop", "undo", "u", "next", "n")
RESIGN_WORDS = {"": 1, "1": 1, "s": 1, "single": 1, "2": 2, "g": 2, "gammon": 2, "3": 3, "b": 3, "bg": 3,
                "backgammon": 3}


#: The checkers' colours (ANSI): the person's X bold yellow, the bot's O bold cyan.
COLOURS = {"X": "\x1b[1;33mX\x1b[0m", "O": "\x1b[1;36mO\x1b[0m"}


def coloured(board: str) -> str:
    """``render_board``'s diagram with its checkers in colour: the X and O of its point rows (the lines between
    its borders), not of its captions."""
    lines = board.split("\n")
    return "\n".join("".join(COLOURS.get(c, c) for c in line) if line.startswith("|") else line for line in lines)


class Terminal:
    """Plays ``session`` with lines from ``read`` (``input``-like: takes the prompt, raises ``EOFError`` at the
    end), writing to ``out``. ``save_path``: where the match is saved on exit (``None``: not saved)."""

    def __init__(self, session: Session, read: Callable[[str], str] = input, out: TextIO | None = None,
                 save_path: str | Path | None = None, colour: bool | None = None) -> None:
        self.session = session
        self.read = read
        self.out = out or sys.stdout
        # the checkers in colour on a terminal that shows it (NO_COLOR, no-color.org, turns it off), else plain
        self.colour = colour if colour is not None else (
            self.out.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb")
        self.save_path = save_path
        self._shown_actions = 0
        self._shown_game = 0
        self._shown_version = -1

    def say(self, text: str = "") -> None:
        print(text, file=self.out)

    # The loop -------------------------------------------------------------------------------------------------

    def run(self) -> int:
        s = self.session
        kind = f"{s.match_length}-point match" if s.is_match else "money session"
        self.say(f"bgai ({s.bot.network}, {s.bot.plies}-ply) v {s.names[HUMAN]}: {kind}, dice seed {s.seed}.")
        self.say("Type help for the commands.")
        self.show()
        while s.phase is not Phase.MATCH_OVER:
            try:
                line = self.read(self.prompt())
            except EOFError:
                self.say()
                break
            except KeyboardInterrupt:
                self.say()
                break
            try:
                if not self.handle(line):
                    break
            except BgaiError as error:
                self.say("  " + " ".join(str(error).split()))
            self.show()
        if s.phase is Phase.MATCH_OVER:
            self.say(s.status())
        if self.save_path is not None:
            if any(action.player == HUMAN for game in s.games for action in game.actions):
                self.save(self.save_path)
            else:  # quit before doing anything: no empty match file
                self.say("Nothing played: no match file written.")
        return 0

    def prompt(self) -> str:
        s = self.session
        if s.phase is Phase.ROLL:
            return "Roll or double (r/d, help) > "
        if s.phase is Phase.MOVE:
            so_far = s.play_so_far
            return f"Your play with {s.roll_text}" + (f" [{so_far}]" if so_far else "") + " > "
        if s.phase is Phase.TAKE:
            return f"{s.names[BOT]} doubles to {2 * s.cube}: take or pass (t/p) > "
        return "Game over: Enter for the next game, q to quit > "

    def handle(self, line: str) -> bool:
        """Do what ``line`` says; False to stop."""
        s = self.session
        text = line.strip()
        word, _, rest = text.lower().partition(" ")
        rest = rest.strip()
        if word in ("quit", "q", "exit"):
            return False
        if word in ("help", "?", "h"):
            self.say(HELP)
        elif word in ("board", "b"):
            self._shown_version = -1
        elif word == "pips":
            self.say("  " + pips_line(s))
        elif word == "id":
            self.say(f"  Position ID: {s.position_id()}")
            self.say(f"  XGID:        {s.xgid()}")
        elif word == "hint" and s.phase in (Phase.ROLL, Phase.TAKE):
            self.cube_hint()  # before the roll, the decision to make is the cube's
        elif word == "hint":
            self.hint(int(rest) if rest.isdigit() else 5)
        elif word == "cube":
            self.cube_hint()
        elif word == "save":
            self.save(rest or self.save_path or games_dir() / "bgai-match.mat")
        elif word == "resign":
            if rest not in RESIGN_WORDS:
                raise BgaiError(f"resign single, gammon or backgammon, not {rest!r}")
            accepted = s.resign(RESIGN_WORDS[rest])
            if not accepted:
                self.say(f"  {s.names[BOT]} rejects: play on.")
        elif word == "tutor":
            if rest in ("on", "off"):
                s.tutor = TUTOR_THRESHOLD if rest == "on" else None
            elif rest:
                raise BgaiError(f"tutor on or off, not {rest!r}")
            state = "off" if s.tutor is None else f"on: it warns of errors of {s.tutor} EMG or more"
            self.say(f"  The tutor is {state}.")
        elif s.phase is Phase.ROLL and word in ("", "roll", "r"):
            self.act(lambda confirm: s.roll(confirm=confirm))
        elif s.phase is Phase.ROLL and word in ("double", "d"):
            self.act(lambda confirm: s.double(confirm=confirm))
        elif s.phase is Phase.TAKE and word in ("take", "t"):
            self.act(lambda confirm: s.take(confirm=confirm))
        elif s.phase is Phase.TAKE and word in ("pass", "p", "drop"):
            self.act(lambda confirm: s.drop(confirm=confirm))
        elif s.phase is Phase.GAME_OVER and word in ("", "next", "n"):
            s.next_game()
        elif s.phase is Phase.MOVE and word in ("undo", "u"):
            s.undo()
        elif word in PHASE_WORDS:
            raise BgaiError(f"{word!r} is not possible now: {s.status()}")
        elif s.phase is Phase.MOVE and text:
            self.act(lambda confirm: s.play(text, confirm=confirm))
        elif word == "":
            pass
        elif word[:1].isdigit() or word.startswith("bar"):
            raise BgaiError(f"{text!r}: no play now, {s.status()}")
        else:
            raise BgaiError(f"unknown command {text!r} (type help)")
        return True

    def act(self, action) -> None:
        """``action(confirm)``, a person's play or cube action; where the tutor warns of it, the warning and the
        question whether to make it all the same."""
        try:
            action(False)
        except TutorWarning as warning:
            text = (f"The tutor: {warning.action} loses {warning.error:.3f} EMG, a {warning.mark} error; "
                    f"{warning.best} is best.")
            self.say(textwrap.fill(text, 78, initial_indent="  ", subsequent_indent="  "))
            if self.read("  Make it anyway? (y/n) > ").strip().lower() in ("y", "yes"):
                action(True)
            else:
                self.say("  Taken back: choose again.")

    # Showing the game ---------------------------------------------------------------------------------------

    def show(self) -> None:
        """The actions since last shown, then the board if anything changed."""
        s = self.session
        for game in s.games[max(self._shown_game - 1, 0):]:
            if game.number > self._shown_game and game is not s.games[0]:
                self.say(f"--- Game {game.number} ---")
            start = self._shown_actions if game.number == self._shown_game else 0
            for action in game.actions[start:]:
                if action.kind in ("move", "double", "take", "drop", "win", "accept") and not (
                        action.player == HUMAN and action.kind == "move" and action.play != "no play"):
                    self.say("  " + action.describe(s.names) + ".")
            self._shown_game = game.number
            self._shown_actions = len(game.actions)
        if s.version == self._shown_version:
            return
        self._shown_version = s.version
        if s.phase in (Phase.GAME_OVER, Phase.MATCH_OVER):
            self.say(s.status() + ".")
            self.say(self.score_line())
            return
        board = render_board(s.human_board(), (f"X ({s.names[HUMAN]})", f"O ({s.names[BOT]})"))
        self.say(coloured(board) if self.colour else board)
        self.say(self.score_line())
        if s.phase is Phase.MOVE:
            self.say(f"You rolled {s.roll_text}." + (f" Played so far: {s.play_so_far}." if s.play_so_far else ""))

    def score_line(self) -> str:
        s = self.session
        owner = s.cube_owner()
        holder = "" if owner is None else s.names[owner] if s.names[owner] != "You" else "you"
        cube = f"Cube {s.cube}, " + ("centered" if owner is None else f"owned by {holder}")
        flag = " (Crawford game)" if s.is_match and s.crawford else ""
        kind = f"{s.match_length}-point match" if s.is_match else "Money"
        return f"{cube} · {kind}: {s.names[HUMAN]} {s.score[HUMAN]}, {s.names[BOT]} {s.score[BOT]}{flag}"

    def hint(self, top: int) -> None:
        """The ``top`` plays of the roll (``Session.play_hints``), ranked by the cubeful equity the first columns
        show, Diff against the first row's; then each play's cubeless equity and chances at the ply it was judged
        at."""
        s = self.session
        hints = s.play_hints(top)
        unit = "match winning %" if s.is_match else "units of the stake"
        legend = (f"Your plays of {s.roll_text} by {s.bot.network}, your equity after each: Cubeful at "
                  f"{s.bot.plies}-ply in {unit}, the cube as it is; Cubeless, chances (%) at its Ply.")
        self.say(textwrap.fill(legend, 78, initial_indent="  ", subsequent_indent="  "))
        self.say(f"   #  {'Play':<19}{'Cubeful':>8}{'Diff':>8}{'Cubeless':>9}{'Ply':>4}{'Win':>5}{'Gam':>5}{'Bg':>5}"
                 f"{'LGam':>5}{'LBg':>5}")
        for i, h in enumerate(hints, 1):
            e, r = h.ranked.evaluation, h.ranked
            diff = "" if i == 1 else f"{100 * h.difference:+.1f}%" if s.is_match else f"{h.difference:+.3f}"
            full = f"{100 * h.cubeful:.1f}%" if s.is_match else f"{h.cubeful:+.3f}"
            chances = "".join(f"{100 * p:5.1f}" for p in (e.win, e.win_gammon, e.win_backgammon, e.lose_gammon,
                                                          e.lose_backgammon))
            self.say(f"  {i:2d}. {str(r.move):<19}{full:>8}{diff:>8}{r.equity:>+9.3f}{r.plies:>4}{chances}")
        more = len(s.partial.legal) - len(hints) if s.partial is not None else 0
        if more > 0:
            self.say(f"      ... {more} more (hint {len(hints) + more})")

    def cube_hint(self) -> None:
        s = self.session
        h = s.cube_hint()
        unit = "match-winning chances" if s.is_match else "units of the stake"
        if h.kind == "double":
            self.say(f"  Your cube decision ({unit}, your view):")
            for line in str(h.decision).splitlines()[1:]:
                self.say("  " + line)
            return
        fmt = (lambda v: f"{100 * v:.1f}%") if s.is_match else (lambda v: f"{v:+.3f}")
        self.say(f"  {s.names[BOT]}'s double ({unit}, your view): take {fmt(h.equities['take'])}, pass "
                 f"{fmt(h.equities['pass'])}. Advice: {h.action}.")

    def save(self, path) -> None:
        s = self.session
        text = s.mat_text()
        try:
            write_atomically(path, lambda handle: handle.write(text.encode("utf-8")))
        except OSError as error:
            raise BgaiError(f"cannot save the match to {path}: {error.strerror or error}") from None
        left_out = s.games_left_out
        note = (f" ({left_out} game{'s' if left_out > 1 else ''} from a set-up position left out: .mat files start "
                "every game from the opening position)") if left_out else ""
        self.say(f"Saved the match to {path}.{note}")


def pips_line(s: Session) -> str:
    """The pip counts and who leads: ``Pips: You 159, bgai 158: bgai leads by 1``."""
    mine, theirs = s.pip_counts()
    names = s.names[HUMAN], s.names[BOT]
    # Fewer pips is ahead in the race.
    leader = names[0] if mine < theirs else names[1]
    verb = "lead" if leader == "You" else "leads"
    lead = "even" if mine == theirs else f"{leader} {verb} by {abs(mine - theirs)}"
    return f"Pips: {names[0]} {mine}, {names[1]} {theirs}: {lead}"


def play(session: Session, save_path=None, read=input, out=None) -> int:
    return Terminal(session, read, out, save_path).run()


__all__ = ["HELP", "Terminal", "play"]
