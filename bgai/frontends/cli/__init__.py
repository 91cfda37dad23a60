"""The ``bgai`` command line: thin wrappers over the library.

Bad input (a malformed position, dice outside 1..6, an unknown player) ends with a one-line message on stderr and
exit status 2.
"""

from __future__ import annotations

import argparse
import gc
import os
import shlex
import sys

from bgai.core.errors import BgaiError
from bgai.frontends.cli import measure, network, play, position


def build_parser(train_settings: bool = True, label_settings: bool = True) -> argparse.ArgumentParser:
    """The command line, each command's arguments added by its group's module (``position``, ``network``,
    ``play``, ``measure``). ``train_settings``: give ``bgai train`` its settings' options, from the training config
    (``bgai.train.config``); ``label_settings`` likewise ``bgai label``'s, from ``bgai.train.labels``; each imports
    more than the other commands need, so ``main`` leaves them out for those."""
    from bgai._version import __version__

    parser = argparse.ArgumentParser(prog="bgai", description="bgai: a backgammon engine")
    parser.add_argument("--version", action="version", version=f"bgai {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    position.add_show(commands)
    position.add_moves(commands)
    position.add_eval(commands)
    position.add_hint(commands)
    position.add_rollout(commands)
    network.add_label(commands, label_settings)
    play.add_play(commands)
    play.add_serve(commands)
    play.add_external(commands)
    measure.add_duel(commands)
    play.add_analyse(commands)
    play.add_study(commands)
    network.add_train(commands, train_settings)
    measure.add_bench(commands)
    play.add_ubgi(commands)
    network.add_export(commands)
    return parser


# Packages of the extras, by the name an import of them fails with: (the extra, what it is).
_EXTRAS = {
    "torch": ("train", "torch (training, and reading .pt checkpoints)"),
    "tensorboard": ("train", "tensorboard (the training curves)"),
    "pydantic": ("train", "torch and pydantic (training: the run's config is read with pydantic)"),
    "onnx": ("env", "onnx"),
    "onnxruntime": ("env", "onnxruntime"),
    "gymnasium": ("env", "gymnasium"),
}


def _missing_extra(error: ModuleNotFoundError, command: str | None) -> int:
    """One line naming the extra that installs a missing package, or the error itself for any other module."""
    extra = _EXTRAS.get((error.name or "").partition(".")[0])
    if extra is None:
        raise error
    print(f"bgai {command}: error: this needs {extra[1]}, which a player's install leaves out: "
          f"pip install 'bgai[{extra[0]}]'", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    command = next((word for word in words if not word.startswith("-")), None)
    try:
        # (bgai train's and bgai label's options come from the training package, which other commands never import)
        args = build_parser(train_settings=command == "train", label_settings=command == "label").parse_args(argv)
    except ModuleNotFoundError as error:
        return _missing_extra(error, command)
    args.command_line = shlex.join(["bgai", *words])  # what a results file records as the command that made it
    try:
        args.run(args)
        if argv is None:
            # Run as the program, its work done: skip the collector's last walk over every object the interpreter
            # holds at exit (docs/figures.md, "Tuning constants"). Files are closed and workers stopped by now. (Not
            # when called with arguments, as tests and other programs do: they go on living.)
            gc.freeze()
    except (BgaiError, ValueError) as error:
        message = " ".join(str(error).split())  # always one line
        print(f"bgai {args.command}: error: {message}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:
        return _missing_extra(error, args.command)
    except BrokenPipeError:  # the reader went away (``bgai hint ... | head``): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
        return 141  # 128 + SIGPIPE, what a shell reports for a tool a closed pipe stopped
    return 0

