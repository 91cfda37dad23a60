"""A cube efficiency fitted to the bot's own cubeful rollouts (``bgai.core.cube.EfficiencyModel``).

Janowski's formula (``bgai.core.cube``) blends the dead cube's equity with a perfectly live cube's, ``x`` the share
of the live cube's value the position lets its players realise. GNU Backgammon's manual gives one x a class (0.68
in contact); here x is a linear function of a few features of the position and of the network's own probabilities
(``efficiency_features``), fitted in two steps:

1. **Labels** (``label``): positions of the bot's own play (the rollout-labelled shards of ``bgai.train.labels``),
   each with a cube drawn at random (centered, or a 2-cube the player on roll owns), of which those whose 0-ply
   cube decision lies within ``margin`` of changing (``CubeEquities.margin``, with the manual's x) are kept in a
   seeded random order; each rolled out by the bot, cubeful, no double and double/take on the same dice
   (``bgai.eval.bot.CUBE_ROLLOUT``'s 72 trials truncated after 11 plies, 0-ply, variance reduction; the manual's x
   in the rollout's own cube decisions). Every position of a file is rolled out on the same 72 dice sequences
   (the file's seed), as a rollout's cube branches are: their noise is correlated, so the fit's held-out standard
   error is a rough guide. One ``.npz``: ``boards``, ``owner``, ``no_double``, ``double_take`` and
   their standard errors (units of the cube, the player on roll's side; a pass is +1), and ``meta``; rewritten
   (atomically) every ``SAVE_EVERY`` positions, and a run resumes where its file stops.
2. **Fit** (``fit``): Janowski's equities are linear in x, so the no double and double/take equities each position
   would get at any x are known from x = 0 and x = 1; the weights minimise their squared distance from the
   rollouts' (plus a little ridge), by L-BFGS. ``cross_validate`` scores the decisions of the fitted x against the
   manual's on held-out labels, judged by the same rollouts.

No value here comes from another engine.

    python -m bgai.train.cube_efficiency label --shards 0-3 --seed 1 --out checkpoints/cube-efficiency/labels-1.npz
    python -m bgai.train.cube_efficiency fit checkpoints/cube-efficiency/labels-*.npz \
        --out bgai/data/bgai-fast-cube-efficiency.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from bgai.core.cube import (
    CENTERED,
    EFFICIENCY_FEATURES,
    EFFICIENCY_RANGE,
    ON_ROLL,
    CubeState,
    EfficiencyModel,
    cube_equities,
    efficiency,
    efficiency_features,
)
from bgai.core.cube import decision_losses as cube_losses
from bgai.core.errors import BgaiError
from bgai.core.files import provenance, write_atomically, write_npz
from bgai.core.game import game_over

CHECKOUT = Path(__file__).resolve().parents[2]  # in a checkout of the repository
#: Where the labelled positions come from by default: the rollout-labelled shards of the bot's own play.
SOURCE = CHECKOUT / "checkpoints" / "labels" / "split-scale-plays"
#: Where the committed labels and their commands are (``MANIFEST.md``).
LABELS = CHECKOUT / "checkpoints" / "cube-efficiency"
#: Labels a run writes between two saves of its file.
SAVE_EVERY = 240
#: Positions rolled out together (each twice: no double and double/take).
CHUNK = 12
#: The fit's ridge on the weights but the bias: the best of 0, 1e-4, 1e-3 and 1e-2 held out on the first 5,774
#: labels (1.25 mp a decision below the manual's x, against 1.17, 1.13 and 0.92).
RIDGE = 1e-4
ARRAYS = ("boards", "owner", "no_double", "double_take", "no_double_se", "double_take_se")


def window_positions(bot, boards: np.ndarray, seed: int, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """(boards, owner) of the live ``boards`` whose 0-ply cube decision lies within ``margin`` of changing, each with
    a cube drawn by ``seed`` (centered or owned by the player on roll, even odds), in a seeded random order. The
    manual's cube efficiency decides, whatever model the bot has, so that the positions do not depend on it."""
    rng = np.random.default_rng(seed)
    boards = np.asarray(boards, dtype=np.int8)
    boards = boards[~game_over(boards)]
    owner = np.where(rng.random(len(boards)) < 0.5, CENTERED, ON_ROLL).astype(np.int8)
    plain = bot.replace(cube_efficiency=None)
    eq = plain.cube_equities(boards, CubeState(np.ones(len(boards), np.int64), owner), plies=0)
    keep = np.flatnonzero(eq.margin < margin)
    rng.shuffle(keep)
    return boards[keep], owner[keep]


def cube_rollouts(bot, boards: np.ndarray, owner: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    """No double and double/take of N positions by the bot's cubeful rollouts (``CUBE_ROLLOUT``'s settings, the
    manual's cube efficiency inside), all on the same dice (``seed``): the ``ARRAYS`` but ``boards`` and ``owner``."""
    from bgai.eval.bot import CUBE_ROLLOUT
    from bgai.eval.rollout import RolloutSettings, Start, _estimates, run_trials

    settings = RolloutSettings(trials=CUBE_ROLLOUT["trials"], truncate=CUBE_ROLLOUT["truncate"],
                               plies=CUBE_ROLLOUT["plies"], cubeful=True, seed=seed)
    n = len(boards)
    holder = np.where(np.asarray(owner) == CENTERED, -1, 0)
    start = Start(np.repeat(np.asarray(boards, dtype=np.int8), 2, axis=0), np.tile([1, 2], n),
                  np.stack([holder, np.ones(n, dtype=np.int64)], axis=1).ravel(), first_offer=1)
    values = run_trials(bot, start, np.arange(settings.trials), settings)  # (its cube inside: the manual's x)
    out = {name: np.empty(n) for name in ARRAYS[2:]}
    for i in range(n):
        nd, dt = (_estimates(values, 2 * i + k, True, False)[2] for k in (0, 1))
        assert nd is not None and dt is not None  # (a cubeful rollout's)
        out["no_double"][i], out["no_double_se"][i] = nd.mean, nd.se
        out["double_take"][i], out["double_take_se"][i] = dt.mean, dt.se
    return out


def read_labels(path: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    """A labels file's arrays and meta; anything else is refused with its name."""
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {name: f[name] for name in ARRAYS}
            meta = json.loads(str(f["meta"]))
    except Exception as e:  # a missing, truncated or foreign file
        raise BgaiError(f"{path}: not a cube efficiency labels file ({type(e).__name__}: {e})") from None
    n = len(arrays["boards"])
    if arrays["boards"].shape != (n, 26) or any(arrays[a].shape != (n,) for a in ARRAYS[1:]):
        raise BgaiError(f"{path}: its arrays do not line up")
    return arrays, meta


def source_boards(shards: range, source: Path = SOURCE) -> np.ndarray:
    """The positions of the label shards ``shards`` of ``source`` (``bgai.train.labels``), in shard order."""
    from bgai.train.labels import SHARD_NAME, read_shard

    files = [Path(source) / SHARD_NAME.format(k) for k in shards]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise BgaiError(f"no such label shard: {', '.join(missing[:3])}")
    return np.concatenate([read_shard(f)[0].boards for f in files])


def label(bot, out: str | Path, shards: range, seed: int = 1, margin: float = 0.12, source: Path = SOURCE,
          limit: int | None = None, progress: bool = True, command: str | None = None) -> Path:
    """Label positions of ``source``'s ``shards`` (see the module docstring) into ``out``, resuming where it stops;
    ``limit``: at most this many positions in all."""
    from tqdm.auto import tqdm

    from bgai.train.labels import network_digest

    boards, owner = window_positions(bot, source_boards(shards, source), seed, margin)
    if limit is not None:
        boards, owner = boards[:limit], owner[:limit]
    shown = Path(source).resolve()
    shown = shown.relative_to(CHECKOUT) if shown.is_relative_to(CHECKOUT) else shown  # the same in every checkout
    settings = {"source": str(shown), "shards": f"{shards.start}-{shards.stop - 1}", "seed": seed, "margin": margin,
                "network": network_digest(bot), "bot": bot.name}
    out = Path(out)
    done: dict[str, list] = {name: [] for name in ARRAYS[2:]}
    if out.exists():
        before, meta = read_labels(out)
        if len(before["boards"]) > len(boards):
            raise BgaiError(f"{out} already holds {len(before['boards'])} positions, more than the {len(boards)} asked")
        if meta.get("settings") != settings or not np.array_equal(before["boards"], boards[:len(before["boards"])]):
            raise BgaiError(f"{out} was made with other settings or positions ({meta.get('settings')}); finish it "
                            "with those or write another file")
        done = {name: list(before[name]) for name in ARRAYS[2:]}
    started = time.perf_counter()
    first = len(done["no_double"])

    def save(rows: int) -> None:
        meta = {"settings": settings, "positions": rows, "rollout": "CUBE_ROLLOUT: 72 trials truncated after 11 "
                "plies, 0-ply, variance reduction, cubeful; no double then double/take on the same dice",
                **provenance(command), "seconds_this_run": round(time.perf_counter() - started, 1)}
        write_npz(out, boards=boards[:rows], owner=owner[:rows],
                  **{name: np.asarray(v, dtype=np.float64) for name, v in done.items()},
                  meta=np.array(json.dumps(meta)))

    saved = first
    with tqdm(total=len(boards), initial=first, unit="pos", desc="cube labels", disable=not progress,
              mininterval=10) as bar:
        for lo in range(first, len(boards), CHUNK):
            rows = slice(lo, min(lo + CHUNK, len(boards)))
            part = cube_rollouts(bot, boards[rows], owner[rows], seed=seed)
            for name, values in part.items():
                done[name] += list(values)
            bar.update(rows.stop - rows.start)
            if rows.stop - saved >= SAVE_EVERY or rows.stop == len(boards):
                save(rows.stop)
                saved = rows.stop
    if not out.exists():  # nothing near the window
        save(0)
    return out


# Fitting ----------------------------------------------------------------------------------------------------------


def dead_and_live(probs, boards, state) -> tuple[np.ndarray, ...]:
    """(ND at x = 0, its slope in x, DT at x = 0, its slope): Janowski's equities are linear in x."""
    dead, live = cube_equities(probs, boards, state, x=0.0), cube_equities(probs, boards, state, x=1.0)
    return dead.no_double, live.no_double - dead.no_double, dead.double_take, live.double_take - dead.double_take


def prepared(bot, arrays: dict) -> dict:
    """The labels the fit uses (exact bear-offs left out: the database answers those), with the network's
    probabilities, the features and Janowski's equities' dead values and slopes."""
    boards, owner = arrays["boards"], arrays["owner"]
    keep = ~bot._exact_bearoffs(boards) & np.isfinite(arrays["no_double"]) & np.isfinite(arrays["double_take"])
    boards, owner = boards[keep], owner[keep]
    probs = bot.probabilities(boards)
    state = CubeState(np.ones(len(boards), np.int64), owner)
    return {"boards": boards, "features": efficiency_features(boards, probs, owner),
            "lines": dead_and_live(probs, boards, state), "manual": efficiency(boards),
            "no_double": arrays["no_double"][keep], "double_take": arrays["double_take"][keep]}


def fit(data: dict, rows=None, ridge: float = RIDGE) -> np.ndarray:
    """The weights whose x brings Janowski's no double and double/take closest to the rollouts' (least squares,
    ``ridge`` on the weights but the bias), on the ``rows`` of ``prepared`` labels (all by default)."""
    import torch

    rows = slice(None) if rows is None else rows
    features = torch.tensor(data["features"][rows])
    nd0, nd1, dt0, dt1 = (torch.tensor(a[rows]) for a in data["lines"])
    nd, dt = torch.tensor(data["no_double"][rows]), torch.tensor(data["double_take"][rows])
    w = torch.zeros(features.shape[1], dtype=torch.float64)
    w[0] = 0.68
    w.requires_grad_()
    optimizer = torch.optim.LBFGS([w], max_iter=500, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        x = (features @ w).clamp(*EFFICIENCY_RANGE)
        loss = ((nd0 + x * nd1 - nd) ** 2 + (dt0 + x * dt1 - dt) ** 2).mean() + ridge * (w[1:] ** 2).sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    return w.detach().numpy().copy()


def decision_losses(data: dict, x: np.ndarray, rows=None) -> np.ndarray:
    """The equity each decision made with cube efficiency ``x`` loses, judged by the labels' rollouts: the double
    decision of each position, then the take decision where the rollouts double, scored as bgai's cube benchmarks
    score theirs (``bgai.core.cube.decision_losses``: a tie is a double)."""
    rows = np.arange(len(x)) if rows is None else rows
    nd0, nd1, dt0, dt1 = (a[rows] for a in data["lines"])
    nd_x, dt_x = nd0 + x * nd1, dt0 + x * dt1
    nd = data["no_double"][rows]
    return cube_losses(nd, data["double_take"][rows], np.ones(len(nd)), np.fmin(dt_x, 1.0) > nd_x, dt_x <= 1.0)


def cross_validate(data: dict, folds: int = 5, ridge: float = RIDGE, seed: int = 0) -> dict:
    """Decisions on held-out labels, the fitted x against the manual's, each fold fitted on the others: millipoints
    a decision, and the paired difference with its standard error."""
    fold = np.random.default_rng(seed).integers(0, folds, len(data["no_double"]))
    fitted, manual = [], []
    for k in range(folds):
        test = np.flatnonzero(fold == k)
        w = fit(data, np.flatnonzero(fold != k), ridge)
        fitted.append(decision_losses(data, np.clip(data["features"][test] @ w, *EFFICIENCY_RANGE), test))
        manual.append(decision_losses(data, data["manual"][test], test))
    a, b = np.concatenate(fitted), np.concatenate(manual)
    d = a - b
    return {"folds": folds, "decisions": len(d), "fitted_mp": 1000 * float(a.mean()),
            "manual_mp": 1000 * float(b.mean()), "difference_mp": 1000 * float(d.mean()),
            "difference_se": 1000 * float(d.std(ddof=1) / math.sqrt(len(d)))}


def fit_model(bot, paths: list[Path], ridge: float = RIDGE, command: str | None = None) -> EfficiencyModel:
    """The model fitted to every labels file of ``paths`` (made by this network: refused otherwise), with its
    cross-validated figures in its ``info``."""
    from bgai.train.labels import network_digest

    digest = network_digest(bot)
    parts, sources = [], []
    for path in paths:
        arrays, meta = read_labels(path)
        if meta["settings"]["network"] != digest:
            raise BgaiError(f"{path} was labelled by another network ({meta['settings']['network']}, this one is "
                            f"{digest}): a model belongs to the network it was fitted with")
        parts.append(arrays)
        sources.append({"file": Path(path).name, "positions": len(arrays["boards"]), **meta["settings"]})
    data = prepared(bot, {name: np.concatenate([p[name] for p in parts]) for name in ARRAYS})
    weights = fit(data, ridge=ridge)
    x = np.clip(data["features"] @ weights, *EFFICIENCY_RANGE)
    info = {"network": digest, "bot": bot.name, "labels": sources, "fitted_positions": len(x), "ridge": ridge,
            "x": {"mean": float(x.mean()), "p5": float(np.percentile(x, 5)), "p95": float(np.percentile(x, 95))},
            "cross_validation": cross_validate(data, ridge=ridge), **provenance(command)}
    return EfficiencyModel(weights, info)


def main(argv=None) -> None:
    from bgai.eval.bot import FAST_NPZ, load_bot
    from bgai.train.labels import parse_shards

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("label", help="cubeful rollouts of positions of the bot's own play near the doubling window")
    make.add_argument("--shards", required=True, help="source shards: N or A-B")
    make.add_argument("--seed", type=int, default=1)
    make.add_argument("--margin", type=float, default=0.12)
    make.add_argument("--source", type=Path, default=SOURCE)
    make.add_argument("--limit", type=int)
    make.add_argument("--out", type=Path, required=True)
    make.add_argument("--quiet", action="store_true")
    fitting = sub.add_parser("fit", help="fit the model to labels files")
    fitting.add_argument("labels", type=Path, nargs="+")
    fitting.add_argument("--ridge", type=float, default=RIDGE)
    fitting.add_argument("--out", type=Path, help="write the model here (JSON)")
    for p in (make, fitting):
        p.add_argument("--network", type=Path, default=FAST_NPZ, help="the network (default: the fast one, 0-ply)")
    args = parser.parse_args(argv)
    bot = load_bot(args.network, cube_efficiency=False)
    command = "python -m bgai.train.cube_efficiency " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.command == "label":
        shards = parse_shards(args.shards)
        if shards.stop > 100_000 - 1:
            parser.error("--shards takes N or A-B here (a finite range)")
        path = label(bot, args.out, shards, args.seed, args.margin, args.source, args.limit,
                     progress=not args.quiet, command=command)
        print(f"{path}: {len(read_labels(path)[0]['boards'])} positions")
        return
    model = fit_model(bot, args.labels, args.ridge, command=command)
    cv = model.info["cross_validation"]
    print(f"{model.info['fitted_positions']} positions; x mean {model.info['x']['mean']:.3f} (5%: "
          f"{model.info['x']['p5']:.3f}, 95%: {model.info['x']['p95']:.3f})")
    print(f"held out ({cv['folds']} folds, {cv['decisions']} decisions, judged by the bot's own rollouts): fitted x "
          f"{cv['fitted_mp']:.2f} mp a decision, the manual's {cv['manual_mp']:.2f}; difference "
          f"{cv['difference_mp']:+.2f} ± {cv['difference_se']:.2f}")
    print("weights: " + ", ".join(f"{n} {w:+.3f}" for n, w in zip(EFFICIENCY_FEATURES, model.weights)))
    if args.out:
        write_atomically(args.out, lambda f: f.write(model.to_json().encode()))
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
