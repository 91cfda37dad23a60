"""What a network costs a move in play, beside the fast network (issue 20's budget: a stronger network may cost no
more per evaluation than the one ``load_bot()`` plays 0 and 1-ply with).

    python benchmarks/network_cost.py NETWORK [NETWORK ...] [--positions 200] [--json FILE]

Each NETWORK (a checkpoint or an ``.npz``) and the fast network (``bgai/data/bgai-fast.npz``) choose a play at 0 and
at 1-ply (with the fast network's pruning net) on ``ply_speed.py``'s positions and rolls, one thread, alternating
three times, the fastest pass of each (``fast_network_bench.time_bots``); printed with each one's ratio to the fast
network at the same ply.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))

from fast_network_bench import time_bots  # noqa: E402

from bgai.bot import FAST_NPZ, FAST_PRUNER, load_bot  # noqa: E402


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("networks", nargs="+", type=Path)
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    networks = {"fast": FAST_NPZ, **{str(path): path for path in args.networks}}
    bots = {f"{plies}-ply {name}": load_bot(path, plies=plies, pruner=FAST_PRUNER if plies else None)
            for plies in (0, 1) for name, path in networks.items()}
    ms = time_bots(bots, args.positions)
    ratios = {name: value / ms[f"{name.split()[0]} fast"] for name, value in ms.items()}
    for name, ratio in ratios.items():
        print(f"  {name:<60} {ratio:.2f}x the fast network")
    result = {"positions": args.positions, "ms_per_move": ms, "ratio_to_fast": ratios,
              "command": "python benchmarks/network_cost.py " + " ".join(sys.argv[1:] if argv is None else argv)}
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
