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
   rollouts' (plus a little ridge), by L-BFGS. With ``shift`` (the default), a second set of weights moves the win
   chance the formula reads (``bgai.core.cube.shift_win``, faded in as ``shift_fade`` says), fitted jointly: the
   equities are piecewise linear in the win chance so moved, known on a grid of shifts ``GRID_STEP`` apart (at
   x = 0 and 1 each) and interpolated between. ``cross_validate`` scores the decisions of the fitted model against
   the manual's x and against x fitted alone, on held-out labels, judged by the same rollouts.

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
    SHIFT_RANGE,
    CubeState,
    EfficiencyModel,
    cube_equities,
    efficiency,
    efficiency_features,
    shift_fade,
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
#: The fit's ridge on every weight but x's bias: the best of 0, 1e-4, 1e-3 and 1e-2 held out on the first 5,774
#: labels for x alone (1.25 mp a decision below the manual's x, against 1.17, 1.13 and 0.92), kept for the shift.
RIDGE = 1e-4
ARRAYS = ("boards", "owner", "no_double", "double_take", "no_double_se", "double_take_se")
#: The win-chance shifts at which the fit knows Janowski's equities (``SHIFT_RANGE`` in steps of ``GRID_STEP``).
GRID_STEP = 0.005
SHIFTS = np.linspace(SHIFT_RANGE[0], SHIFT_RANGE[1], int(round((SHIFT_RANGE[1] - SHIFT_RANGE[0]) / GRID_STEP)) + 1)


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


def dead_and_live(probs, boards, state, shift: float = 0.0) -> tuple[np.ndarray, ...]:
    """(ND at x = 0, its slope in x, DT at x = 0, its slope), the win chance moved by ``shift``: Janowski's
    equities are linear in x."""
    moved = None if shift == 0 else np.full(len(probs), shift)
    dead = cube_equities(probs, boards, state, x=0.0, win_shift=moved)
    live = cube_equities(probs, boards, state, x=1.0, win_shift=moved)
    return dead.no_double, live.no_double - dead.no_double, dead.double_take, live.double_take - dead.double_take


def prepared(bot, arrays: dict, shift: bool = True) -> dict:
    """The labels the fit uses (exact bear-offs left out: the database answers those), with the network's
    probabilities, the features and Janowski's equities' dead values and slopes: ``lines`` unshifted, and with
    ``shift`` ``grid`` (4, N, len(SHIFTS)) at each shift of ``SHIFTS``; ``fade``, the share of a shift that applies
    (``bgai.core.cube.shift_fade``)."""
    boards, owner = arrays["boards"], arrays["owner"]
    keep = ~bot._exact_bearoffs(boards) & np.isfinite(arrays["no_double"]) & np.isfinite(arrays["double_take"])
    boards, owner = boards[keep], owner[keep]
    probs = bot.probabilities(boards)
    state = CubeState(np.ones(len(boards), np.int64), owner)
    grid = None if not shift else np.stack([np.stack(dead_and_live(probs, boards, state, float(d))) for d in SHIFTS],
                                           axis=2)
    return {"boards": boards, "features": efficiency_features(boards, probs, owner),
            "lines": dead_and_live(probs, boards, state), "grid": grid, "manual": efficiency(boards),
            "fade": shift_fade(probs[:, 0]), "no_double": arrays["no_double"][keep],
            "double_take": arrays["double_take"][keep]}


def _at_shift(grid, shift):
    """(4, N) the grid's lines interpolated at each row's ``shift`` (N,) (numpy or torch alike)."""
    t = (shift.clip(*SHIFT_RANGE) - SHIFT_RANGE[0]) / GRID_STEP
    i = (t.detach() // 1 if hasattr(t, "detach") else t // 1).clip(0, len(SHIFTS) - 2)
    f = t - i
    i = i.long() if hasattr(i, "long") else i.astype(np.int64)
    rows = np.arange(grid.shape[1])
    return grid[:, rows, i] * (1 - f) + grid[:, rows, i + 1] * f


def fit(data: dict, rows=None, ridge: float = RIDGE, shift: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """(weights of x, weights of the win chance's shift or None) that bring Janowski's no double and double/take
    closest to the rollouts' (least squares, ``ridge`` on the weights but x's bias), on the ``rows`` of ``prepared``
    labels (all by default); without ``shift``, x alone."""
    import torch

    rows = np.arange(len(data["no_double"])) if rows is None else np.asarray(rows)
    features = torch.tensor(data["features"][rows])
    grid = torch.tensor(data["grid"][:, rows]) if shift else None
    lines = [torch.tensor(a[rows]) for a in data["lines"]]
    fade = torch.tensor(data["fade"][rows])
    nd, dt = torch.tensor(data["no_double"][rows]), torch.tensor(data["double_take"][rows])
    w = torch.zeros(features.shape[1], dtype=torch.float64)
    w[0] = 0.68
    w.requires_grad_()
    u = torch.zeros(features.shape[1], dtype=torch.float64, requires_grad=shift)
    optimizer = torch.optim.LBFGS([w, u] if shift else [w], max_iter=1000 if shift else 500,
                                  line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        x = (features @ w).clamp(*EFFICIENCY_RANGE)
        nd0, nd1, dt0, dt1 = _at_shift(grid, fade * (features @ u).clamp(*SHIFT_RANGE)) if shift else lines
        loss = ((nd0 + x * nd1 - nd) ** 2 + (dt0 + x * dt1 - dt) ** 2).mean() + ridge * ((w[1:] ** 2).sum()
                                                                                         + (u ** 2).sum())
        loss.backward()
        return loss

    optimizer.step(closure)
    return w.detach().numpy().copy(), u.detach().numpy().copy() if shift else None


def decision_losses(data: dict, x: np.ndarray, rows=None, shift: np.ndarray | None = None) -> np.ndarray:
    """The equity each decision made with cube efficiency ``x`` (and the win chance moved by ``shift``) loses,
    judged by the labels' rollouts: the double decision of each position, then the take decision where the rollouts
    double, scored as bgai's cube benchmarks score theirs (``bgai.core.cube.decision_losses``: a tie is a
    double). With a shift the equities are the grid's, interpolated (within about 0.002 of the formula's)."""
    rows = np.arange(len(x)) if rows is None else rows
    if shift is None:
        nd0, nd1, dt0, dt1 = (a[rows] for a in data["lines"])
    else:
        nd0, nd1, dt0, dt1 = _at_shift(data["grid"][:, rows], np.asarray(shift))
    nd_x, dt_x = nd0 + x * nd1, dt0 + x * dt1
    nd = data["no_double"][rows]
    return cube_losses(nd, data["double_take"][rows], np.ones(len(nd)), np.fmin(dt_x, 1.0) > nd_x, dt_x <= 1.0)


def model_of(w: np.ndarray, u: np.ndarray | None, data: dict, rows=None) -> tuple[np.ndarray, np.ndarray | None]:
    """(x, shift) of the ``rows`` of ``prepared`` labels (all by default) by the weights ``fit`` found, as an
    ``EfficiencyModel`` of them gives them (the shift None without weights)."""
    rows = slice(None) if rows is None else rows
    features = data["features"][rows]
    shift = None if u is None else np.clip(features @ u, *SHIFT_RANGE) * data["fade"][rows]
    return np.clip(features @ w, *EFFICIENCY_RANGE), shift


def cross_validate(data: dict, folds: int = 5, ridge: float = RIDGE, seed: int = 0, shift: bool = True) -> dict:
    """Decisions on held-out labels, the fitted model against the manual's x (and, with ``shift``, against x fitted
    alone), each fold fitted on the others: millipoints a decision, and the paired differences with their standard
    errors."""
    fold = np.random.default_rng(seed).integers(0, folds, len(data["no_double"]))
    fitted, manual, alone = [], [], []
    for k in range(folds):
        test, train = np.flatnonzero(fold == k), np.flatnonzero(fold != k)
        x, moved = model_of(*fit(data, train, ridge, shift), data, test)
        fitted.append(decision_losses(data, x, test, moved))
        manual.append(decision_losses(data, data["manual"][test], test))
        if shift:
            alone.append(decision_losses(data, model_of(*fit(data, train, ridge, False), data, test)[0], test))
    a, b = np.concatenate(fitted), np.concatenate(manual)

    def paired(d):
        return 1000 * float(d.mean()), 1000 * float(d.std(ddof=1) / math.sqrt(len(d)))

    out = {"folds": folds, "decisions": len(a), "fitted_mp": 1000 * float(a.mean()),
           "manual_mp": 1000 * float(b.mean())}
    out["difference_mp"], out["difference_se"] = paired(a - b)
    if shift:
        c = np.concatenate(alone)
        out["x_alone_mp"] = 1000 * float(c.mean())
        out["minus_x_alone_mp"], out["minus_x_alone_se"] = paired(a - c)
    return out


def fit_model(bot, paths: list[Path], ridge: float = RIDGE, command: str | None = None, shift: bool = True
              ) -> EfficiencyModel:
    """The model fitted to every labels file of ``paths`` (made by this network: refused otherwise), with its
    cross-validated figures in its ``info``; ``shift``: with a shift of the win chance (else x alone)."""
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
    data = prepared(bot, {name: np.concatenate([p[name] for p in parts]) for name in ARRAYS}, shift)
    weights, shifts = fit(data, ridge=ridge, shift=shift)
    x, moved = model_of(weights, shifts, data)
    info = {"network": digest, "bot": bot.name, "labels": sources, "fitted_positions": len(x), "ridge": ridge,
            "x": {"mean": float(x.mean()), "p5": float(np.percentile(x, 5)), "p95": float(np.percentile(x, 95))},
            **({} if moved is None else {"shift": {"mean": float(moved.mean()), "p5": float(np.percentile(moved, 5)),
                                                   "p95": float(np.percentile(moved, 95))}}),
            "cross_validation": cross_validate(data, ridge=ridge, shift=shift), **provenance(command)}
    return EfficiencyModel(weights, info, shifts)


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
    fitting.add_argument("--no-shift", action="store_true", help="fit x alone (no shift of the win chance)")
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
    model = fit_model(bot, args.labels, args.ridge, command=command, shift=not args.no_shift)
    cv, info = model.info["cross_validation"], model.info
    print(f"{info['fitted_positions']} positions; x mean {info['x']['mean']:.3f} (5%: {info['x']['p5']:.3f}, 95%: "
          f"{info['x']['p95']:.3f})" + ("" if "shift" not in info else f"; win shift mean {info['shift']['mean']:+.4f}"
                                        f" (5%: {info['shift']['p5']:+.4f}, 95%: {info['shift']['p95']:+.4f})"))
    print(f"held out ({cv['folds']} folds, {cv['decisions']} decisions, judged by the bot's own rollouts): fitted "
          f"{cv['fitted_mp']:.2f} mp a decision, the manual's x {cv['manual_mp']:.2f}; difference "
          f"{cv['difference_mp']:+.2f} ± {cv['difference_se']:.2f}" + (
              "" if "x_alone_mp" not in cv else f"; x fitted alone {cv['x_alone_mp']:.2f}, difference "
              f"{cv['minus_x_alone_mp']:+.2f} ± {cv['minus_x_alone_se']:.2f}"))
    print("weights of x: " + ", ".join(f"{n} {w:+.3f}" for n, w in zip(EFFICIENCY_FEATURES, model.weights)))
    if model.shift is not None:
        print("weights of the shift: " + ", ".join(f"{n} {w:+.4f}" for n, w in zip(EFFICIENCY_FEATURES, model.shift)))
    if args.out:
        write_atomically(args.out, lambda f: f.write(model.to_json().encode()))
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
