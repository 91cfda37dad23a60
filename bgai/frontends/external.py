"""bgai as GNU Backgammon's external player: ``bgai external`` listens on a TCP port, GNU Backgammon connects.

In GNU Backgammon (1.07, Debian's): ``set player 0 external 127.0.0.1:5555``. For each of that player's decisions
gnubg writes one FIBS board line (``bgai.formats.fibs``) and reads one answer line:

* dice on the board: the play, in GNU Backgammon's notation (``24/18 13/11``, ``bar/22*``, ``6/off``); an empty
  line when there is no legal play;
* no dice (gnubg asks only when its player may double): ``double`` or ``roll``;
* a double offered to bgai: ``take``, ``drop``, or ``beaver`` (with ``--beavers``, money games only);
* ``resign normal``/``resign gammon``/``resign backgammon`` in place of any of those when bgai can no longer win
  (certain results only: the bear-off database says it cannot, so gnubg's player accepts);
* ``Error (why)`` for a line bgai cannot read: gnubg shows it and stops the game until told to go on.

gnubg answers resignations offered to its external player itself (1.07 accepts a resignation of a backgammon and
declines the others), so they never reach bgai. It writes each line followed by a NUL byte; both are read.

Each decision is bgai's own (``Bot``: its plays at ``--plies``, its cube at an even ply, ``CUBE_PLIES``, by
Janowski's formula with the match score gnubg sends and the Kazaross XG2 match equity table), from the side of the
player deciding. One game follows another on the same connection; when gnubg closes it, bgai waits for the next.
Each connection is served by its own thread, so both of gnubg's players may be bgai.
"""

from __future__ import annotations

import socket
import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bgai.core.errors import BgaiError
from bgai.formats.fibs import MAX_LINE, FibsBoard
from bgai.formats.position import Position

if TYPE_CHECKING:
    from bgai.eval.bot import Bot

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 5555


@dataclass
class ExternalPlayer:
    """Answers GNU Backgammon's board lines for one connection (``answer``), with ``bot`` deciding.

    ``jacoby``: money games follow the Jacoby rule (set it as gnubg's ``set jacoby``); ``beavers``: bgai may
    beaver in money games (gnubg's ``set beavers``, 0 for none)."""

    bot: Bot
    jacoby: bool = False
    beavers: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    _resigned_at: str | None = None

    def answer(self, line: str) -> str:
        """The answer to one board line: a play, a cube action, a resignation, or ``Error (why)``."""
        try:
            board = FibsBoard.parse(line, dialect="gnubg")
            with self.lock:
                return self._decide(board, line)
        except BgaiError as exc:
            return f"Error ({_one_line(str(exc))})"

    def _decide(self, board: FibsBoard, line: str) -> str:
        from bgai.core.match import MatchScore

        match = None
        if board.match_length:
            match = MatchScore(board.match_length, board.score, crawford=board.crawford,
                               post_crawford=board.post_crawford)
        money = match is None

        def cube_decision():
            return self.bot.cube_decision(Position(board.board), board.cube, board.owner, match,
                                          jacoby=self.jacoby and money, beavers=self.beavers and money)

        if board.was_doubled:
            # On gnubg's boards the player on turn is the doubler; bgai answers for its opponent.
            decision = cube_decision()
            if decision.beaver and self.beavers and match is None:
                return "beaver"
            return "take" if decision.should_take else "drop"
        resign = self._resignation(board, line)
        if resign:
            return resign
        if board.dice is None:
            decision = cube_decision()
            return "double" if decision.may_double and decision.should_double else "roll"
        move = self.bot.choose_move(Position(board.board), board.dice)
        return "" if not move.checker_steps() else str(move)

    def _resignation(self, board: FibsBoard, line: str) -> str | None:
        """``resign ...`` when bgai has certainly lost (once per board: gnubg asks again if it is declined)."""
        if line == self._resigned_at:
            return None
        boards = board.board[None]
        if self.bot.sources(boards, plies=0)[0] != "exact":
            return None
        win, _, _, lose_gammon, lose_backgammon = self.bot.probabilities(boards)[0].tolist()
        if win > 0:
            return None
        self._resigned_at = line
        if lose_backgammon >= 1:
            return "resign backgammon"
        if lose_gammon >= 1:
            return "resign gammon"
        return "resign normal" if lose_gammon <= 0 else None


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace(")", "]").replace("(", "[")[:200]


def serve_connection(conn: socket.socket, player: ExternalPlayer, log=None) -> None:
    """Answer board lines on ``conn`` until the other side closes it."""
    buffer = b""
    with conn:
        while True:
            try:
                chunk = conn.recv(4096)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                raw, buffer = buffer.split(b"\n", 1)
                line = raw.replace(b"\0", b"").decode("utf-8", "replace").strip()
                if not line:
                    continue
                reply = player.answer(line)
                if log:
                    print(f"< {line}\n> {reply}", file=log, flush=True)
                try:
                    conn.sendall(reply.encode() + b"\n")
                except OSError:
                    return
            if len(buffer) > MAX_LINE:
                buffer = b""
                try:
                    conn.sendall(f"Error (a line longer than {MAX_LINE} characters)\n".encode())
                except OSError:
                    return


def serve(bot, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, jacoby: bool = False, beavers: bool = False,
          log=None, ready=None, connections: int | None = None) -> None:
    """Listen on ``host``:``port`` and serve every connection GNU Backgammon makes, each in its own thread.

    ``ready(port)`` is called once listening (port 0 picks a free port); ``connections`` stops after that many
    connections have closed (``None``: serve until interrupted)."""
    with socket.create_server((host, port), reuse_port=False) as server:
        if ready:
            ready(server.getsockname()[1])
        threads, served, lock = [], 0, threading.Lock()  # one bot, one decision at a time
        while connections is None or served < connections:
            conn, _ = server.accept()
            player = ExternalPlayer(bot, jacoby=jacoby, beavers=beavers, lock=lock)
            thread = threading.Thread(target=serve_connection, args=(conn, player, log), daemon=True)
            thread.start()
            threads.append(thread)
            served += 1
        for thread in threads:
            thread.join()


def main(args) -> None:
    """``bgai external``."""
    from bgai.eval.bot import load_bot

    bot = load_bot(args.checkpoint, plies=args.plies)

    def ready(port: int) -> None:
        print(f"bgai external: listening on {args.host}:{port}; in GNU Backgammon: "
              f"set player 0 external {args.host}:{port}", file=sys.stderr, flush=True)

    try:
        serve(bot, args.host, args.port, jacoby=args.jacoby, beavers=args.beavers,
              log=sys.stderr if args.verbose else None, ready=ready)
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        raise BgaiError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
