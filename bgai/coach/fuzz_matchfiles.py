"""Fuzzing the match-file readers: mutated .mat and SGF texts must read to a match or be refused, never crash.

    python -m bgai.coach.fuzz_matchfiles [--inputs 100000] [--seed 1] [--out FOLDER]

The valid texts mutated are the files of ``tests/data/matches`` (each cut to its first game, so that an input is
quick to replay) and ``write_mat`` / ``write_sgf`` of small generated matches (random legal plays, then a double
and its answer or a resignation). Each input takes one to three mutations: a bit flipped in its UTF-8 bytes, a span
deleted, a line deleted, duplicated, swapped or spliced in from another text, a long run of one character (spaces,
digits, brackets, backslashes, colons), odd characters (NUL, U+2028, non-ASCII digits, BOM ...), a number made
huge, a cut. Each input is read with ``bgai.formats.matchfile.parse_match``: accepted (a ``MatchRecord``), refused
(``MatchFileError``) or a crash (any other exception). Printed: the counts and the slowest input's time, then that
input read again on its own (at low priority a first time may include waits for the CPU); the exit status is 1
on any crash. The inputs that crashed, and the slowest, go to ``--out``.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from bgai.core.errors import MatchFileError
from bgai.formats.matchfile import MatchRecord, parse_match, write_mat, write_sgf

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "matches"  # in a checkout of the repository
RUNS = " 0123456789([]\\:;/*"
ODD = ["\0", "\x0b", "\x1c", "\r", "\t", "\u00a0", "\u2028", "\ufeff", "\ufffd", "\u00b2", "\u0663", "\u0130",
       "\U0001f600", "\udc80", "é", "]", ")", "(", ";", "\\"]


def first_game(text: str) -> str:
    """A match text cut to its first game (a .mat file's lines before `` Game 2``, an SGF file's first tree)."""
    if text.lstrip().startswith("("):
        return text[:text.index(")\n") + 2] if ")\n" in text else text
    lines = text.splitlines(keepends=True)
    end = next((i for i, line in enumerate(lines) if line.strip() == "Game 2"), len(lines))
    return "".join(lines[:end])


def generated_match(rng: random.Random) -> MatchRecord:
    """A small match of random legal plays: two games, each ended by a double and its answer or a resignation."""
    length = rng.choice([0, 1, 3, 5, 7])
    match = MatchRecord(("Alice", "Bob Smith"), length, metadata={"Event": "fuzz"} if rng.random() < 0.5 else {})
    while len(match.games) < 2 and match.winner is None:
        game = match.new_game()
        for _ in range(rng.randint(1, 8)):
            dice = (rng.randint(1, 6), rng.randint(1, 6))
            while game.turn is None and dice[0] == dice[1]:
                dice = (rng.randint(1, 6), rng.randint(1, 6))
            moves = game.position.legal_moves(dice)
            game.add_play(dice, rng.choice(moves), player=rng.randint(0, 1) if game.turn is None else None)
            if game.is_over:
                break
        if game.is_over:
            continue
        if game.may_double and rng.random() < 0.6:
            game.add_double()
            if rng.random() < 0.5:
                game.add_take()
                game.add_resign(rng.randint(1, 3))
            else:
                game.add_drop()
        else:
            game.add_resign(rng.randint(1, 3))
    return match


def seed_texts(generated: int = 6, seed: int = 0) -> list[str]:
    """The valid texts to mutate: the test data's files, each cut to its first game, and ``generated`` small
    matches as .mat and as SGF."""
    texts = [first_game(path.read_text()) for path in sorted(DATA.glob("*.mat")) + sorted(DATA.glob("*.sgf"))]
    rng = random.Random(seed)
    for _ in range(generated):
        match = generated_match(rng)
        texts += [write_mat(match), write_sgf(match)]
    return texts


def mutate(text: str, others: list[str], rng: random.Random) -> str:
    """``text`` after one random mutation (see the module docstring)."""
    kind = rng.randrange(10)
    if kind == 0 and text:  # a bit flipped in the bytes
        data = bytearray(text.encode("utf-8", errors="surrogatepass"))
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        return data.decode("utf-8", errors="replace")
    at = rng.randrange(len(text) + 1)
    if kind == 1:
        return text[:at] + text[at + rng.randint(1, 20):]
    if kind == 2:
        return text[:at]
    if kind == 3:
        return text[:at] + rng.choice(RUNS) * rng.choice([1, 2, 10, 100, 1000, 5000]) + text[at:]
    if kind == 4:
        return text[:at] + "".join(rng.choice(ODD) for _ in range(rng.randint(1, 4))) + text[at:]
    if kind == 5:
        return text[:at] + rng.choice(["99999999999999999999", "0", "1000000", "64", "128", "-1"]) + text[at:]
    lines = text.splitlines(keepends=True) or [""]
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    if kind == 6:
        del lines[i]
    elif kind == 7:
        lines.insert(j, lines[i])
    elif kind == 8:
        lines[i], lines[j] = lines[j], lines[i]
    else:
        other = rng.choice(others).splitlines(keepends=True) or [""]
        lines[i] = rng.choice(other)
    return "".join(lines)


@dataclass
class FuzzReport:
    inputs: int = 0
    accepted: int = 0
    refused: int = 0
    crashes: list[tuple[str, str]] = field(default_factory=list)  # (input, traceback)
    slowest: float = 0.0
    slowest_input: str = ""

    def summary(self) -> str:
        return (f"inputs {self.inputs:,}, accepted {self.accepted:,}, refused {self.refused:,}, crashes "
                f"{len(self.crashes):,}; slowest input {self.slowest * 1000:.0f} ms ({len(self.slowest_input):,} "
                f"characters)")


def fuzz(inputs: int, seed: int = 1, texts: list[str] | None = None, progress: bool = False) -> FuzzReport:
    """Read ``inputs`` mutated texts (seeded by ``seed``) and count what became of them."""
    texts = texts or seed_texts()
    rng = random.Random(seed)
    report = FuzzReport()
    for n in range(inputs):
        text = rng.choice(texts)
        for _ in range(rng.choice([1, 1, 2, 3])):
            text = mutate(text, texts, rng)
        start = time.perf_counter()
        try:
            parse_match(text)
            report.accepted += 1
        except MatchFileError:
            report.refused += 1
        except Exception:  # noqa: BLE001 - any other exception is the crash being looked for
            report.crashes.append((text, traceback.format_exc()))
        elapsed = time.perf_counter() - start
        if elapsed > report.slowest:
            report.slowest, report.slowest_input = elapsed, text
        report.inputs += 1
        if progress and (n + 1) % 10_000 == 0:
            print(report.summary(), flush=True)
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000, help="mutated inputs to read (default 100,000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the mutations (default 1)")
    out = Path(tempfile.gettempdir()) / "bgai-fuzz-matchfiles"
    parser.add_argument("--out", type=Path, default=out, help=f"folder for the inputs that crashed and the slowest "
                                                             f"(default {out})")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    report = fuzz(args.inputs, args.seed, progress=True)
    again = time.perf_counter()
    try:
        parse_match(report.slowest_input)
    except Exception:  # noqa: BLE001 - fuzz has counted and kept what it raises
        pass
    again = time.perf_counter() - again
    print(report.summary() + f", {again * 1000:.0f} ms read again; {time.perf_counter() - start:.0f} s in all")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "slowest.txt").write_text(report.slowest_input, errors="surrogateescape")
    if report.crashes:
        for k, (text, trace) in enumerate(report.crashes):
            (args.out / f"crash-{k}.txt").write_text(text, errors="surrogateescape")
            (args.out / f"crash-{k}.traceback").write_text(trace)
        print(f"first crash:\n{report.crashes[0][1]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
