"""A bot: an equity network that evaluates positions and chooses plays, one position or a batch at a time.

Every evaluation is from the side of the player on roll in the position evaluated. To choose a play, the bot
evaluates every legal afterstate (where the opponent is on roll), turns each evaluation around to the mover's side
and plays the one with the highest cubeless equity. Finished games are scored exactly, never by the network, and so
are bear-offs (every checker of both sides in its home board) when the bear-off database is on (``bgai.eval.bearoff``).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bgai.core import kernels
from bgai.core.cube import (
    CENTERED,
    MAX_CUBE,
    CubeDecision,
    CubeEquities,
    CubeOwner,
    CubeState,
    EfficiencyModel,
    ScoreGrid,
    cube_equities,
    cube_state,
    decision,
    may_double,
    payoff_of,
    score_cells,
)
from bgai.core.dice import ROLL_WEIGHTS, ROLLS
from bgai.core.errors import BgaiError
from bgai.core.files import DATA
from bgai.core.game import game_over, result_points
from bgai.core.movegen import CHECKERS, afterstates
from bgai.core.phase import BEAROFF, OVER, classify, is_race
from bgai.eval import bearoff, encoding
from bgai.eval import kernels as eval_kernels
from bgai.eval.weights import ModelSnapshot, equity, flip
from bgai.formats.position import Move, Position, parse_dice


def _five(row: np.ndarray) -> tuple[float, float, float, float, float]:
    """A row of five probabilities as floats (``Evaluation``'s first five fields)."""
    win, win_gammon, win_backgammon, lose_gammon, lose_backgammon = (float(v) for v in row)
    return win, win_gammon, win_backgammon, lose_gammon, lose_backgammon


@dataclass(frozen=True)
class Evaluation:
    """Cubeless probabilities and equity for the player on roll (gammons include backgammons)."""

    win: float
    win_gammon: float
    win_backgammon: float
    lose_gammon: float
    lose_backgammon: float
    equity: float
    source: str = "network"

    def __str__(self) -> str:
        return (
            f"win {100 * self.win:.1f}% (gammon {100 * self.win_gammon:.1f}%, backgammon "
            f"{100 * self.win_backgammon:.1f}%)  lose gammon {100 * self.lose_gammon:.1f}% (backgammon "
            f"{100 * self.lose_backgammon:.1f}%)  equity {self.equity:+.3f}"
        )


#: Where an evaluation came from (``Evaluation.source``).
SOURCES = {
    "network": "the network",
    "exact": "the bear-off database (exact, two-sided)",
    "race": "the bear-off database (one-sided race estimate)",
    "lookahead": "lookahead, with bear-offs at the leaves from the bear-off database",
    "over": "the finished game",
}


def exact_probabilities(boards: np.ndarray) -> np.ndarray:
    """(N, 5) outcome of finished games for the player on roll, who has lost (the mover bore off last)."""
    points = result_points(boards)
    probs = np.zeros((len(boards), 5), dtype=np.float32)
    probs[:, 3] = points >= 2
    probs[:, 4] = points == 3
    return probs


def without_impossible_outcomes(boards: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """``probs`` (N, 5, on-roll view) with the outcomes the rules make impossible set to zero, a network's small
    errors there being no chances at all: no gammon or backgammon against a side that has borne off a checker;
    in a race (no contact: ``bgai.players.pubeval.is_race``), no backgammon against a side with no checker in the
    winner's home board or on the bar, since checkers never move back. (GNU Backgammon applies such checks to its
    networks' outputs too.)"""
    boards = np.asarray(boards)
    probs = np.array(probs, copy=True)
    mine_off = np.maximum(boards, 0).sum(axis=1) < CHECKERS
    theirs_off = np.maximum(-boards, 0).sum(axis=1) < CHECKERS
    race = is_race(boards)
    theirs_back = ((boards[:, 1:7] < 0).any(axis=1)) | (boards[:, 0] < 0)  # in my home board or on their bar
    mine_back = ((boards[:, 19:25] > 0).any(axis=1)) | (boards[:, 25] > 0)
    probs[theirs_off, 1:3] = 0
    probs[mine_off, 3:5] = 0
    probs[race & ~theirs_back, 2] = 0
    probs[race & ~mine_back, 4] = 0
    return probs


@dataclass(frozen=True)
class RankedPlay:
    """One play of a hint: the ``move``, its cubeless ``equity`` for the mover, the ``plies`` it was judged at, the
    ``evaluation`` (the mover's chances after the play, the same equity) and its ``difference`` from the first
    play of the hint: its equity minus the first play's equity at the same ``plies``. A play that move filtering
    dropped keeps the equity of a shallower ply than the first play's, and its difference compares it with the
    first play judged at that ply too, never with a deeper value."""

    move: Move
    equity: float
    plies: int
    evaluation: Evaluation
    difference: float = 0.0


MAX_PLIES = 2
#: The lookahead of the bot a person plays and asks (``bgai play``, ``bgai serve``'s page and API, ``bgai hint``,
#: ``bgai eval``) unless told otherwise: the deepest, which plays best and still answers at once (its time and
#: strength by ply: docs/figures.md and the README).
PLAY_PLIES = 2
#: The lookahead of a bot's cube decisions, by the lookahead of its checker play (``Bot``'s ``cube_plies`` when not
#: given): an even ply. A 1-ply bot decides its cube at 2-ply with its own network, which loses less than half as
#: much as the 1-ply cube (``benchmarks/results/cube_accuracy.json``; docs/cube.md). One ply's lookahead leaves the
#: opponent on roll at the leaves, where the formula's errors fall on the other side; GNU Backgammon's odd plies are
#: known for the same weakness.
CUBE_PLIES = {0: 0, 1: 2, 2: 2}

# Memory bounds. A network pass takes at most NET_CHUNK boards; the encoder's temporaries make that about 5 KB a
# board. A lookahead level expands at most PAIR_CHUNK (position, roll) pairs at once (about 20 plays each: a few
# network passes) and deeper levels chunk their own input again, so memory does not grow with the batch beyond
# one chunk's worth (docs/figures.md, "Tuning constants": the peak memory of 2-ply on a batch).
NET_CHUNK = 32_768
# On one thread (rollouts run so, see bgai.eval.rollout) passes of a few thousand boards keep a layer's activations
# in the processor's cache; larger ones gain nothing (docs/figures.md, "Tuning constants").
NET_CHUNK_ONE_THREAD = 4_096
# A batch of at least DISTINCT_MIN boards goes through the network once per distinct board when at most
# DISTINCT_SHARE of its boards are distinct: a rollout's turn meets the same board in many trials and for many rolls
# (its first plies above all), a lookahead the same reply to several rolls.
DISTINCT_MIN = 2_048
DISTINCT_SHARE = 0.95
PAIR_CHUNK = 4_096


@dataclass(frozen=True)
class MoveFilter:
    """One stage of move filtering: of the plays judged at some ply, keep at most ``keep`` (best first) whose
    equity is within ``window`` of the best one's. The best play always survives."""

    keep: int
    window: float

    def __post_init__(self) -> None:
        if not (isinstance(self.keep, int) and not isinstance(self.keep, bool) and self.keep >= 1):
            raise BgaiError(f"a move filter keeps at least 1 play, got keep={self.keep!r}")
        if not (isinstance(self.window, (int, float)) and not isinstance(self.window, bool) and self.window >= 0):
            raise BgaiError(f"a move filter's window is an equity >= 0, got window={self.window!r}")

    def apply(self, values: np.ndarray, owner: np.ndarray) -> np.ndarray:
        """Mask of the plays kept: ``values`` (mover's equities) of plays grouped by ``owner`` (any labels)."""
        order = np.lexsort((-values, owner))  # by position, best first; ties keep their order
        ranked, group = values[order], owner[order]
        first = np.r_[True, group[1:] != group[:-1]]
        start = np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))
        kept = (np.arange(len(order)) - start < self.keep) & (ranked >= ranked[start] - self.window)
        mask = np.empty(len(values), dtype=bool)
        mask[order] = kept
        return mask


# Filters by the bot's plies: stage k filters the plays by their k-ply equity before they are judged deeper. Each
# was chosen against judging every play at full depth (benchmarks/lookahead_bench.py --filters: the equity it loses
# a move, and the plays it judges deeper) and in games against the filters before it: 1-ply keeps Open Sage's first
# stage, 2-ply GNU Backgammon's and then a narrow one at 1-ply. The figures are in docs/figures.md and
# benchmarks/results/filters_1ply.json, filter_5_008_1ply.json.
FILTERS: dict[int, tuple[MoveFilter | None, ...]] = {
    0: (),
    1: (MoveFilter(5, 0.08),),
    2: (MoveFilter(8, 0.16), MoveFilter(5, 0.04)),
}


#: Plays per roll a pruning net leaves the network in a lookahead's replies (``Bot.replies``), unless its file
#: says how many it was measured to need (``keep`` in its info; ``training/pruner.py`` writes it).
PRUNE_KEEP = 4


class Bot:
    """An equity network with ``plies`` of lookahead. It is a ``bgai.players.Player`` too.

    **Evaluating a position.** 0-ply evaluates a position with the network. n-ply averages, over the 21 rolls of
    the player on roll, the (n-1)-ply evaluation of the play it would make with that roll (chosen at 0-ply, among
    all its plays), seen from its side. So 1-ply judges a position by each of the 21 replies the network would
    pick, and 2-ply by the replies to those replies.

    **Bear-offs.** With ``use_bearoff`` (the default), positions where both sides are bearing off are scored by the
    bear-off database at every depth instead of the network: exactly when both sides have at most six checkers
    left (then no lookahead is needed either), otherwise by its one-sided race estimate. Money cube decisions in
    exact bear-offs come from the database's exact cubeful equities.

    **Choosing a play (move filtering).** Every legal play is first judged at 0-ply. Then, stage by stage, the
    ``filters`` (one ``MoveFilter`` or ``None`` per ply below ``plies``; default ``FILTERS[plies]``) keep the best
    few plays of each position within an equity window of the best, and only those are judged one ply deeper.
    The play with the best equity at ``plies`` among the survivors is chosen. ``filters=()`` judges every play
    at full depth. Defaults, measured against full width (``benchmarks/lookahead_bench.py --filters``):

    * 1-ply: keep 5 within 0.08 at 0-ply.
    * 2-ply: keep 8 within 0.16 at 0-ply, then 5 within 0.04 at 1-ply.

    Each loses well under a millipoint a move against full width (see ``FILTERS``).

    **Pruning the replies.** With a ``pruner`` (a small net trained on this network's own values,
    ``training/pruner.py``; the shipped bot has one), a lookahead's reply to each roll is chosen by the network
    among the ``prune`` plays the pruning net ranks best instead of among all (``replies``). The shipped
    pruning nets read Tesauro's inputs alone (encoder version 0: their first layer is summed from the boards'
    cells, far cheaper than encoding a board for the network) and leave the network their best 5, which nearly
    always hold its own choice (docs/figures.md, "What paid", has the figures).

    **The cube.** Cube decisions look ``cube_plies`` ahead (``cube_equities``): by default the even ply of
    ``CUBE_PLIES``, 2-ply for a 1-ply bot, whose odd ply decides the cube poorly.

    Finished games are scored exactly, at every depth. Large batches are cut into chunks (``NET_CHUNK``,
    ``PAIR_CHUNK``) so that memory stays bounded.

    **Evaluation.** A bot of a ``ModelSnapshot`` (``load_bot`` makes one) runs the network in numpy
    (``bgai.eval.weights``), one of a torch model (the trainers') in torch; the values agree within 5e-6.

    **Precision.** With ``bf16`` the network's matrix products run in bfloat16 (inputs and outputs stay float32):
    on a CPU with bfloat16 instructions (``bf16_supported()``) it evaluates several times faster, its values a
    little less exact (docs/training.md gives both). Training targets use it (``LookaheadStage.precision``); play
    stays in float32 by default, where close plays are told apart.
    """

    #: Threads may share a bot: nothing in it changes while it plays (its tables are built whole, once), so a
    #: rollout's threads and the vector environment's blocks of games call one bot at once.
    threadsafe = True

    def __init__(self, model, *, name: str = "bgai", plies: int = 0, info: dict | None = None,
                 filters: tuple[MoveFilter | None, ...] | None = None, use_bearoff: bool = True,
                 bf16: bool = False, pruner: ModelSnapshot | None = None, prune: int = PRUNE_KEEP,
                 network: str | None = None, cube_plies: int | None = None,
                 cube_efficiency: EfficiencyModel | None = None) -> None:
        for setting, value in (("plies", plies), ("cube_plies", plies if cube_plies is None else cube_plies)):
            if not (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_PLIES):
                raise BgaiError(f"{setting} must be an integer 0..{MAX_PLIES}, got {value!r}")
        filters = FILTERS[plies] if filters is None else tuple(filters)
        if len(filters) > plies or not all(f is None or isinstance(f, MoveFilter) for f in filters):
            raise BgaiError(f"filters must be at most {plies} MoveFilter or None stages for {plies}-ply "
                            f"(one per ply below it), got {filters!r}")
        if not isinstance(model, ModelSnapshot):
            from bgai.eval.network import EquityModel, EquityNet

            if isinstance(model, EquityNet):  # one net for every phase, on the inputs of its width
                version = next((v for v in encoding.VERSIONS if encoding.n_features(v) == model.n_inputs), None)
                if version is None:
                    raise BgaiError(f"a net of {model.n_inputs} inputs fits no encoder version")
                model = EquityModel({"all": model}, version)
        self.model = model.eval()
        self.name = name
        # The network's own name, the same at every ply (``name`` may say the plies: ``bgai:bgai-fast@1ply``), for
        # displays that give each value's ply apart.
        self.network = name if network is None else network
        self.plies = plies
        self.cube_plies = CUBE_PLIES[plies] if cube_plies is None else cube_plies
        self.filters = filters
        self.info = info or {}
        self.use_bearoff = use_bearoff
        self.bf16 = bool(bf16)
        if pruner is not None and not (isinstance(prune, int) and not isinstance(prune, bool) and prune >= 1):
            raise BgaiError(f"a pruned reply keeps at least 1 play per roll, got prune={prune!r}")
        self.pruner = None if pruner is None else ModelSnapshot.of(pruner)
        self.prune = prune
        if cube_efficiency is not None and not isinstance(cube_efficiency, EfficiencyModel):
            raise BgaiError(f"cube_efficiency must be a bgai.core.cube.EfficiencyModel or None, got "
                            f"{type(cube_efficiency).__name__}")
        self.cube_efficiency = cube_efficiency

    def replace(self, **changes) -> Bot:
        """A copy of this bot with some of its constructor's settings changed (``model``, ``name``, ``plies``,
        ``info``, ``filters``, ``use_bearoff``, ``bf16``, ``pruner``, ``prune``, ``network``, ``cube_plies``); the
        rest are kept. A different ``plies`` without ``filters`` or ``cube_plies`` gets that ply's defaults (the
        bot's own ``plies`` again keeps them)."""
        settings = {"model": self.model, "name": self.name, "plies": self.plies, "info": self.info,
                    "filters": self.filters, "use_bearoff": self.use_bearoff, "bf16": self.bf16,
                    "pruner": self.pruner, "prune": self.prune, "network": self.network,
                    "cube_plies": self.cube_plies, "cube_efficiency": self.cube_efficiency}
        unknown = sorted(set(changes) - set(settings))
        if unknown:
            raise BgaiError(f"a bot has no setting {', '.join(unknown)}")
        if "plies" in changes and changes["plies"] != self.plies:
            for default in ("filters", "cube_plies"):
                if default not in changes:
                    settings[default] = None
        settings.update(changes)
        model = settings.pop("model")
        return self._rebuilt(model, settings)

    def _rebuilt(self, model, settings: dict) -> Bot:
        """``replace``'s new bot of ``model`` with ``settings`` (a subclass keeps what it adds)."""
        return Bot(model, **settings)

    # Batched core ---------------------------------------------------------------------------------------------

    def probabilities(self, boards: np.ndarray, net=None) -> np.ndarray:
        """(N, 5) cumulative probabilities of N boards (on-roll view), finished games scored exactly. The
        network (``net``, default the bot's own) sees only the boards that neither the finished game nor the
        bear-off database answers, and the outcomes the rules rule out are zero
        (``without_impossible_outcomes``)."""
        boards = np.ascontiguousarray(boards, dtype=np.int8)
        phase = classify(boards)
        if len(phase) and phase.min() > (BEAROFF if self.use_bearoff else OVER):  # the network answers them all
            probs = self._network_values(boards, net, phase)
            eval_kernels.rule_out(boards, probs)
            return probs
        known = (phase <= BEAROFF) if self.use_bearoff else (phase == OVER)
        probs = np.empty((len(boards), 5), dtype=np.float32)
        over = phase == OVER
        if over.any():
            probs[over] = exact_probabilities(boards[over])
        db = known & ~over
        if db.any():
            probs[db] = bearoff.database().probabilities(boards[db])
        rows = np.flatnonzero(~known)
        if len(rows):
            live = boards[rows]
            out = self._network_values(live, net, phase[rows])
            eval_kernels.rule_out(live, out)
            probs[rows] = out
        return probs

    def _network_values(self, boards: np.ndarray, net=None, phase: np.ndarray | None = None) -> np.ndarray:
        """(N, 5) the network's own probabilities of N boards, each distinct board evaluated once (``_evaluate``)
        in a batch of at least ``DISTINCT_MIN`` boards that holds enough of them twice (``DISTINCT_SHARE``). The
        pruning net (``net``) costs too little a board for that to pay."""
        if len(boards) < DISTINCT_MIN or net is not None:
            return self._evaluate(boards, net, phase)
        padded = np.zeros((len(boards), 32), dtype=np.int8)
        padded[:, :26] = boards
        first, inverse = kernels.distinct_rows(padded.view(np.uint64))
        if len(first) > DISTINCT_SHARE * len(boards):
            return self._evaluate(boards, net, phase)
        return self._evaluate(boards[first], net, None if phase is None else phase[first])[inverse]

    def _evaluate(self, boards: np.ndarray, net=None, phase: np.ndarray | None = None) -> np.ndarray:
        """(N, 5) the network's own probabilities of N boards: in numpy for a snapshot (``bgai.eval.weights``), in
        passes of ``NET_CHUNK_ONE_THREAD`` boards; in torch for a torch model (as the trainers evaluate the model they
        train) or with ``bf16``, in passes of ``NET_CHUNK`` boards on several threads. ``phase``: the boards'
        ``classify``, when the caller has it."""
        net = self.model if net is None else net
        version, split = net.encoder_version, len(net.phases) > 1
        if split and phase is None:
            phase = classify(boards)
        if isinstance(net, ModelSnapshot) and not self.bf16:
            if len(boards) <= NET_CHUNK_ONE_THREAD:  # one pass (a move's boards), no copy
                return net.board_probabilities(boards, phase if split else None)
            out = np.empty((len(boards), 5), dtype=np.float32)
            for lo in range(0, len(boards), NET_CHUNK_ONE_THREAD):
                chunk = boards[lo:lo + NET_CHUNK_ONE_THREAD]
                out[lo:lo + len(chunk)] = net.board_probabilities(
                    chunk, phase[lo:lo + len(chunk)] if split and phase is not None else None)
            return out
        import torch

        from bgai.eval.network import EquityModel

        out = np.empty((len(boards), 5), dtype=np.float32)
        model = EquityModel.of(net)
        step = NET_CHUNK if torch.get_num_threads() > 1 else NET_CHUNK_ONE_THREAD
        with torch.inference_mode():
            for lo in range(0, len(boards), step):
                chunk = boards[lo:lo + step]
                x = torch.from_numpy(encoding.encode(chunk, version=version))
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
                    result = model(x, torch.from_numpy(phase[lo:lo + step]) if split and phase is not None else None)
                out[lo:lo + len(chunk)] = result.float().numpy()
        return out

    def _exact_bearoffs(self, boards: np.ndarray) -> np.ndarray:
        """(N,) where the bear-off database knows the answer exactly (never with ``use_bearoff`` off)."""
        if not self.use_bearoff:
            return np.zeros(len(boards), dtype=bool)
        return bearoff.is_bearoff(boards) & (
            (np.maximum(boards, 0).sum(axis=1) <= bearoff.TWO_SIDED_CHECKERS)
            & (np.maximum(-boards, 0).sum(axis=1) <= bearoff.TWO_SIDED_CHECKERS))

    def sources(self, boards: np.ndarray, plies: int | None = None) -> list[str]:
        """Where the bot's evaluation of each board at ``plies`` (default: its own) comes from: a key of
        ``SOURCES``."""
        boards = np.asarray(boards, dtype=np.int8)
        plies = self.plies if plies is None else plies
        over, exact = game_over(boards), self._exact_bearoffs(boards)
        race = self.use_bearoff & bearoff.is_bearoff(boards) & ~exact
        deep = "lookahead" if plies else "race"
        return ["over" if o else "exact" if e else deep if r else "network" for o, e, r in zip(over, exact, race)]

    def lookahead(self, boards: np.ndarray, plies: int) -> np.ndarray:
        """(N, 5) probabilities of N boards (on-roll view) at ``plies`` of lookahead (see the class docstring).

        All positions of one level go through the network together, ``PAIR_CHUNK`` (position, roll) pairs at a
        time.
        """
        boards = np.asarray(boards, dtype=np.int8)
        if plies == 0:
            return self.probabilities(boards)
        probs = np.zeros((len(boards), 5), dtype=np.float64)
        known = game_over(boards) | self._exact_bearoffs(boards)
        if known.any():
            probs[known] = self.probabilities(boards[known])
        live = np.flatnonzero(~known)
        step = max(1, PAIR_CHUNK // len(ROLLS))
        for lo in range(0, len(live), step):
            rows = live[lo:lo + step]
            probs[rows] = self._average_over_rolls(boards[rows], plies)
        return probs.astype(np.float32)

    def _average_over_rolls(self, boards: np.ndarray, plies: int) -> np.ndarray:
        """(N, 5) ``plies``-ply probabilities of N live boards: every roll, its play chosen at 0-ply, judged one
        ply shallower."""
        expanded = np.repeat(boards, len(ROLLS), axis=0)
        moves = afterstates(expanded, np.tile(ROLLS, (len(boards), 1)), validate=False)
        pick, pick_probs = self.replies(moves.after, moves.owner, len(expanded))
        # At 1-ply the chosen plays' 0-ply values are already at hand.
        chosen = pick_probs if plies == 1 else self.lookahead(moves.after[pick], plies - 1)
        replies = flip(chosen.astype(np.float64)).reshape(len(boards), len(ROLLS), 5)
        return (replies * ROLL_WEIGHTS[None, :, None]).sum(axis=1)

    def replies(self, after: np.ndarray, owner: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The play chosen at 0-ply in each of ``n`` (position, roll) groups of a lookahead, among their plays
        ``after`` (grouped by ``owner``): its index into ``after`` and its (on-roll view) probabilities.

        Without a pruning net every play goes through the network. With one (``pruner``), in a group of more
        than ``prune`` plays the pruning net ranks them first and only its best ``prune`` go through the network,
        which chooses among them, as GNU Backgammon's pruning nets do in its lookahead. The root's own plays are
        always judged by the network (``judge``)."""
        if self.pruner is None:
            probs = self.probabilities(after)
            pick = eval_kernels.best_plays(probs, owner, n)
            return pick, probs[pick]
        counts = np.bincount(owner, minlength=n)
        many = np.flatnonzero(counts[owner] > self.prune)
        keep = np.ones(len(after), dtype=bool)
        if len(many):
            rough = equity(flip(self.probabilities(after[many], self.pruner)))
            keep[many] = eval_kernels.keep_best(rough, owner[many], self.prune)
        kept = np.flatnonzero(keep)
        probs = self.probabilities(after[kept])
        pick = eval_kernels.best_plays(probs, owner[kept], n)
        return kept[pick], probs[pick]

    def judge(self, after: np.ndarray, owner: np.ndarray, n: int, settle: bool = False,
              return_probs: bool = False):
        """Judge the plays ``after`` (M×26, grouped by ``owner`` into ``n`` positions) through the filters.

        Returns ``(values, depth)``: each play's cubeless equity for the mover and the ply it was last judged at;
        with ``return_probs`` also the (M, 5) probabilities behind each value, for the mover. Survivors of every
        stage are judged at the bot's plies. With ``settle``, a position left with one surviving play stops there
        (its choice is made); its play then counts as judged at full depth.
        """
        probs = flip(self.probabilities(after).astype(np.float64))
        values = equity(probs)
        depth = np.zeros(len(after), dtype=np.int64)
        alive = np.arange(len(after))
        for ply in range(1, self.plies + 1):
            stage = self.filters[ply - 1] if ply - 1 < len(self.filters) else None
            if stage is not None:
                alive = alive[stage.apply(values[alive], owner[alive])]
            if settle:
                lone = np.bincount(owner[alive], minlength=n)[owner[alive]] == 1
                depth[alive[lone]] = self.plies
                alive = alive[~lone]
            next_stage = self.filters[ply] if ply < len(self.filters) else None
            if len(alive) == 0 or (ply < self.plies and next_stage is None):
                continue  # all settled, or nothing filters at this ply: go straight to the next
            probs[alive] = flip(self.lookahead(after[alive], ply).astype(np.float64))
            values[alive] = equity(probs[alive])
            depth[alive] = ply
        return (values, depth, probs) if return_probs else (values, depth)

    def choose(self, boards, after, owner, rng=None, dice=None):
        """Index into ``after`` of the best play of each position (the Player interface)."""
        if self.plies == 0:
            return eval_kernels.best_plays(self.probabilities(after), np.asarray(owner, dtype=np.int64), len(boards))
        values, depth = self.judge(after, owner, len(boards), settle=True)
        order = np.lexsort((-values, -depth, owner))  # by position, deepest first, then best
        return order[np.r_[True, owner[order][1:] != owner[order][:-1]]]

    # One position ---------------------------------------------------------------------------------------------

    def evaluate(self, pos: Position) -> Evaluation:
        """The evaluation of ``pos`` for the player on roll, before it rolls, at the bot's plies."""
        return self.evaluate_many([pos])[0]

    def evaluate_many(self, positions) -> list[Evaluation]:
        boards = np.stack([p.board for p in positions])
        probs = self.lookahead(boards, self.plies).astype(np.float64)
        return [Evaluation(*_five(row), float(equity(row[None])[0]), source)
                for row, source in zip(probs, self.sources(boards))]

    def choose_move(self, pos: Position, dice):
        """The play the bot picks for ``pos`` with ``dice`` (a ``Move``): the first of ``rank_moves``, found as in
        games (``choose``), with only the chosen play written out as a ``Move``."""
        d1, d2 = sorted(parse_dice(dice), reverse=True)
        board = pos.board[None]
        moves = afterstates(board, np.array([[d1, d2]]), return_steps=True, validate=False)
        i = int(self.choose(board, moves.after, moves.owner)[0]) if len(moves.after) > 1 else 0
        assert moves.steps is not None  # (asked for)
        return Move(pos, (d1, d2), Position._unchecked(moves.after[i]), moves.steps[i])

    def rank_moves(self, pos: Position, dice, with_plies: bool = False):
        """Every legal play with its cubeless equity for the mover, best first: (move, equity) pairs, or
        (move, equity, plies) with ``with_plies``.

        The plays that survive the filters come first, judged at the bot's plies; the plays a filter dropped
        follow, each with the equity of the ply it was dropped at (deepest first, then best), as in GNU
        Backgammon's hints. With ``filters=()`` every play is judged at the bot's plies. Equities of different
        plies do not compare: ``hint`` gives each play's difference from the first at the same ply.
        """
        ranked = self.hint(pos, dice)
        if with_plies:
            return [(r.move, r.equity, r.plies) for r in ranked]
        return [(r.move, r.equity) for r in ranked]

    def hint(self, pos: Position, dice) -> list[RankedPlay]:
        """``rank_moves`` with the probabilities behind each equity and each play's difference from the first
        play at the same ply: a ``RankedPlay`` per legal play, best first."""
        moves = pos.legal_moves(parse_dice(dice))
        after = np.stack([m.after.board for m in moves])
        values, depth, probs = self.judge(after, np.zeros(len(after), dtype=np.int64), 1, return_probs=True)
        order = np.lexsort((-values, -depth))
        first = order[0]
        # The first play survived every filter, so it has a value at each ply a dropped play stopped at: one
        # lookahead of one board per such ply (the value judge had for it there).
        first_at = {int(depth[first]): float(values[first])}
        for ply in sorted(set(depth.tolist()) - set(first_at)):
            first_at[ply] = float(equity(flip(self.lookahead(after[first][None], ply).astype(np.float64)))[0])
        return [RankedPlay(moves[i], float(values[i]), int(depth[i]), Evaluation(*_five(probs[i]), float(values[i])),
                           float(values[i]) - first_at[int(depth[i])]) for i in order]

    def choose_many(self, boards: np.ndarray, dice: np.ndarray) -> np.ndarray:
        """The chosen afterstates (N×26, opponent's view) of N positions and rolls."""
        moves = afterstates(boards, dice)
        return moves.after[self.choose(boards, moves.after, moves.owner)]

    # The cube (bgai.core.cube: Janowski's cubeful equities from the bot's cubeless probabilities, cube_plies deep) --

    def cube_equities(self, boards: np.ndarray, state: CubeState, probs: np.ndarray | None = None,
                      plies: int | None = None) -> CubeEquities:
        """Cubeful equities of N positions (on-roll view, before the roll) with the cubes of ``state``.

        At ``plies`` (n below; default the bot's ``cube_plies``). 0-ply: Janowski's formula (``bgai.core.cube``)
        on the network's probabilities. n-ply, as GNU Backgammon computes its cubeful equities: no double and
        double/take are each the average, over the 21 rolls, of the opponent's (n-1)-ply cubeful equity after the
        play chosen at 0-ply, the opponent taking its own best cube action; Janowski's formula applies at the
        leaves. (Beavers count at the root and the leaves.) The ``cubeless`` field is the bot's n-ply cubeless
        equity. ``probs``: the boards' probabilities at n-ply, when the caller already has them (rollouts), so that
        they are not computed again.
        """
        boards = np.asarray(boards, dtype=np.int8)
        plies = self.cube_plies if plies is None else plies
        if plies == 0:
            probs = self.probabilities(boards) if probs is None else probs
            return self._exact_cube(boards, state, self.janowski(probs, boards, state))
        states = [state, state.doubled()] + ([state.doubled().doubled()] if state.beavers else [])
        # one expansion of the tree serves every cube state and the cubeless lookahead alike
        deep_probs, after = self._after_rolls(boards, states, plies)
        if probs is None:  # as ``lookahead``: finished games and exact bear-offs valued directly
            probs = deep_probs.astype(np.float32)
            known = game_over(boards) | self._exact_bearoffs(boards)
            if known.any():
                probs[known] = self.probabilities(boards[known])
        root = self.janowski(probs, boards, state)
        allowed = root.may_double
        nd, dt = after[0], after[1]
        beaver = np.zeros(len(boards), dtype=bool)
        if state.beavers:
            beaver = allowed & (np.asarray(state.value) * 4 <= MAX_CUBE) & (after[2] < dt)
            dt = np.where(beaver, after[2], dt)
        scale = 1.0 if state.is_match else np.asarray(state.value, dtype=np.float64)
        deep = dataclasses.replace(
            root, no_double=nd / scale, double_take=np.where(allowed, dt / scale, np.nan), beaver=beaver
        )
        return self._exact_cube(boards, state, deep)

    def _exact_cube_rows(self, boards: np.ndarray, state: CubeState) -> np.ndarray:
        """(N,) where the bear-off database gives the boards' cube equities exactly: money games without beavers."""
        if state.is_match or state.beavers:
            return np.zeros(len(boards), dtype=bool)
        return self._exact_bearoffs(boards)

    def _exact_cube(self, boards: np.ndarray, state: CubeState, eq: CubeEquities) -> CubeEquities:
        """``eq`` with the bear-off database's exact money equities where it has them (``_exact_cube_rows``)."""
        rows = np.flatnonzero(self._exact_cube_rows(boards, state))
        if not len(rows):
            return eq
        nd, dt = bearoff.database().cube_equities(boards[rows], np.asarray(state.owner)[rows])
        no_double, double_take = eq.no_double.copy(), eq.double_take.copy()
        no_double[rows] = nd
        double_take[rows] = np.where(eq.may_double[rows], dt, np.nan)
        return dataclasses.replace(eq, no_double=no_double, double_take=double_take)

    def _after_rolls(self, boards: np.ndarray, states: list, plies: int) -> tuple[np.ndarray, list]:
        """One expansion of N live boards ``plies`` deep: every roll, its play chosen at 0-ply (``replies``), the
        opponent answering in turn. Returns the boards' ``plies``-ply cubeless probabilities (what ``lookahead``
        gives a live board, each level's finished games and exact bear-offs valued directly) and, for each cube
        state, the (N,) cubeful equity of the player on roll after it rolls and plays, the opponent taking its
        own best cube action at ``plies - 1`` (Janowski's formula at the leaves). In absolute units: points for
        money, match-winning chances for matches. The network sees each position of the tree once, whatever the
        number of cube states: each level's states are the states above, switched, and each of them doubled."""
        n = len(boards)
        rows = np.repeat(np.arange(n), len(ROLLS))
        moves = afterstates(boards[rows], np.tile(ROLLS, (n, 1)), validate=False)
        pick, pick_probs = self.replies(moves.after, moves.owner, len(rows))
        chosen = moves.after[pick]
        chosen_probs = pick_probs.astype(np.float64)  # the chosen plays' 0-ply probabilities, exact when over
        over = game_over(chosen)
        live, done = np.flatnonzero(~over), np.flatnonzero(over)
        expanded = [state.select(rows) for state in states]
        theirs = [e.select(live).switched() for e in expanded]
        children = [s for t in theirs for s in (t, t.doubled())]  # each state's no double, then double/take
        best = [np.empty(0)] * len(theirs)
        if len(live):
            if plies == 1:  # the cube efficiency's features once for every cube state
                base = None if self.cube_efficiency is None else self.cube_efficiency.base(chosen[live],
                                                                                         chosen_probs[live])
                best = [self._best_at_leaves(chosen_probs[live], chosen[live], t, base) for t in theirs]
            else:
                deeper, after = self._after_rolls(chosen[live], children, plies - 1)
                exact = self._exact_bearoffs(chosen[live])
                chosen_probs[live] = np.where(exact[:, None], chosen_probs[live], deeper)
                for k, t in enumerate(theirs):
                    nd, dt = after[2 * k], after[2 * k + 1]
                    dp = payoff_of(t)(np.asarray(t.value)[:, None])[:, 0]
                    best[k] = np.where(may_double(t), np.maximum(nd, np.minimum(dt, dp)), nd)
        probs = (flip(chosen_probs).reshape(n, len(ROLLS), 5) * ROLL_WEIGHTS[None, :, None]).sum(axis=1)
        results = []
        for state, e, their_best in zip(states, expanded, best):
            mine = np.empty(len(rows))
            if len(live):
                mine[live] = 1 - their_best if state.is_match else -their_best
            if len(done):  # the player on roll bore off its last checker: it wins at this cube
                finished = e.select(done)
                points = result_points(chosen[done]).astype(np.int64)
                if finished.jacoby:
                    points = np.where(finished.owner == CENTERED, 1, points)
                mine[done] = payoff_of(finished)((points * finished.value)[:, None])[:, 0]
            results.append((mine.reshape(n, len(ROLLS)) * ROLL_WEIGHTS).sum(axis=1))
        return probs, results

    def janowski(self, probs: np.ndarray, boards: np.ndarray, state: CubeState, base: np.ndarray | None = None
                 ) -> CubeEquities:
        """Janowski's cubeful equities (``bgai.core.cube.cube_equities``) of N positions from their probabilities,
        with the bot's fitted cube efficiency and win-chance shift where it has them (``cube_efficiency``; ``base``:
        its ``EfficiencyModel.base`` of these positions, when the caller has it), else the GNU Backgammon manual's
        x by class."""
        x = shift = None
        if self.cube_efficiency is not None:
            base = self.cube_efficiency.base(boards, probs) if base is None else base
            x = self.cube_efficiency.with_owner(base, state.owner)
            shift = self.cube_efficiency.win_shift(base, state.owner, probs)
        return cube_equities(probs, boards, state, x=x, win_shift=shift)

    def _best_at_leaves(self, probs: np.ndarray, boards: np.ndarray, state: CubeState,
                        base: np.ndarray | None = None) -> np.ndarray:
        """(N,) cubeful equity of the player on roll of each leaf with its best cube action, by Janowski's formula
        on its 0-ply probabilities (absolute units)."""
        best = self.janowski(probs, boards, state, base).equity
        return best if state.is_match else best * state.value

    def rollout(self, position, settings=None, **options):
        """Roll out ``position`` with this bot playing both sides: a ``bgai.eval.rollout.RolloutResult``.
        ``settings`` (a ``bgai.eval.rollout.RolloutSettings``) and the options (trials, truncate, plies, seed,
        cubeful, variance_reduction, progress, jobs, ...) as ``bgai.eval.rollout.rollout``."""
        from bgai.eval.rollout import rollout

        return rollout(self, position, settings, **options)

    def cube_actions(self, boards: np.ndarray, state: CubeState) -> tuple[np.ndarray, np.ndarray]:
        """(double, take): whether the player on roll of each position should double, and whether its opponent
        should take a double (the cube-player interface of ``bgai.core.game``)."""
        eq = self.cube_equities(boards, state)
        return eq.should_double, eq.should_take

    def score_grid(self, pos: Position, length: int, cube: int = 1, owner="centered", met: str | None = None
                   ) -> ScoreGrid:
        """The cube action of the player on roll in ``pos`` at every score of a match to ``length`` and for money
        (``bgai.core.cube.ScoreGrid``), with the cube at ``cube`` held by ``owner``, at the bot's ``cube_plies``:
        one batch of every score's cube state on the same position (its lookahead expanded once). ``met``: the
        match equity table (``bgai.core.match.METS``; default Kazaross-XG2)."""
        from bgai.core.match import DEFAULT_MET, MatchScore

        table = MatchScore(length, (0, 0), met=met or DEFAULT_MET).table  # (checks the length against it)
        base = cube_state(cube, owner)
        away = np.array([(i, j) for i in range(1, length + 1) for j in range(1, length + 1)], dtype=np.int64)
        n = len(away)
        state = CubeState(np.full(n, base.value[0]), np.full(n, base.owner[0], dtype=np.int8), away,
                          np.zeros(n, dtype=bool), (away == 1).any(axis=1), met=table)
        boards = np.repeat(pos.board[None], n, axis=0)
        cells = score_cells(self.cube_equities(boards, state), state)
        money = score_cells(self.cube_equities(pos.board[None], base), base)[0]
        rows = tuple(tuple(cells[i * length:(i + 1) * length]) for i in range(length))
        return ScoreGrid(length, int(base.value[0]), CubeOwner(int(base.owner[0])), rows, money)

    def cube_decision(self, pos: Position, cube: int = 1, owner="centered", match=None, *, jacoby: bool = False,
                      beavers: bool = False, rollout=False) -> CubeDecision:
        """The cube decision of the player on roll in ``pos``, before it rolls (see ``bgai.core.cube.decide``), at
        the bot's ``cube_plies``.

        ``cube`` 1..64; ``owner`` a ``bgai.core.cube.CubeOwner`` or its name: "centered", "me" (the player on
        roll) or "opponent"; ``match`` ``None`` for a money game or a ``bgai.core.match.MatchScore``; ``jacoby`` and
        ``beavers`` are money-game options.

        ``rollout``: ``True`` decides from a cubeful, variance-reduced, truncated rollout by this bot (no double and
        double/take on the same dice; ``CUBE_ROLLOUT``'s settings), a ``bgai.eval.rollout.RolloutSettings`` to roll out
        with (made cubeful), or a dict of ``bgai.eval.rollout.rollout``'s options to change ``CUBE_ROLLOUT``'s. Money
        games without the Jacoby rule or beavers only, the rollout's own rules. Its ``efficiency`` is NaN: no cube
        efficiency is assumed.
        """
        state = cube_state(cube, owner, match, jacoby=jacoby, beavers=beavers)
        if not rollout:
            exact = bool(self._exact_cube_rows(pos.board[None], state)[0])
            return dataclasses.replace(decision(self.cube_equities(pos.board[None], state), state, match),
                                       plies=self.cube_plies, fitted=self.cube_efficiency is not None, exact=exact)
        refusal = cube_rollout_refusal(match, jacoby=jacoby, beavers=beavers)
        if refusal:
            raise BgaiError(f"{refusal}; leave out the rollout, or the match, the Jacoby rule and beavers")
        from bgai.eval.rollout import RolloutSettings
        from bgai.eval.rollout import rollout as roll_out

        options = {**CUBE_ROLLOUT, **(rollout if isinstance(rollout, dict) else {})}
        jobs = options.pop("jobs")
        settings = rollout if isinstance(rollout, RolloutSettings) else None
        result = roll_out(self, pos, settings, cubeful=True, cube_owner=int(state.owner[0]), jobs=jobs,
                          **({} if settings is not None else options))
        allowed = may_double(state)
        nan = np.array([np.nan])
        assert result.no_double is not None  # (a cubeful rollout's)
        dt = np.array([result.double_take.mean]) if result.double_take is not None else nan
        eq = CubeEquities(no_double=np.array([result.no_double.mean]), double_take=np.where(allowed, dt, nan),
                          double_pass=np.where(allowed, 1.0, nan), may_double=allowed, beaver=np.zeros(1, bool),
                          efficiency=nan, cubeless=np.array([result.equity.mean]),
                          stake=np.array([[-1.0, 1.0]]))
        return dataclasses.replace(decision(eq, state, None), rollout=result)


#: The settings of a rollout cube decision (``Bot.cube_decision(..., rollout=True)``): 72 trials truncated after 11
#: plies with variance reduction, checker play at 0-ply whatever the bot's own lookahead (its cube decisions
#: inside and the value of a truncated trial by the 0-ply formula, with the manual's cube efficiency), on every
#: core. Truncated after 5 (Open Sage's cube rollouts) the 0-ply cube formula that values the truncated games
#: brought its errors back: 2.05 mp a decision against 1.37 after 11 on a 400-position sample (docs/cube.md), at
#: about twice the time (0.22 s a decision on the idle 2-core machine,
#: ``benchmarks/results/cube_rollout_accuracy.json``).
CUBE_ROLLOUT = {"trials": 72, "truncate": 11, "plies": 0, "jobs": 0}


def cube_rollout_refusal(match=None, *, jacoby: bool = False, beavers: bool = False) -> str | None:
    """Why a rollout cube decision (``Bot.cube_decision(..., rollout=...)``) cannot be made under these rules, in
    one line; ``None`` where it can: a money game (``match`` ``None``) without the Jacoby rule or beavers, the rules
    its rollout plays."""
    if match is None and not jacoby and not beavers:
        return None
    if match is not None:
        here = f"a {match.length}-point match" if hasattr(match, "length") else "a match"
    else:
        here = "a game with " + " and ".join(["the Jacoby rule"] * jacoby + ["beavers"] * beavers)
    return ("a rollout cube decision is for money games without the Jacoby rule or beavers (the rollout's rules), "
            f"not {here}")


#: The shipped network: its checkpoint (for training from it, and for torch), and the same weights for play
#: (``bgai.eval.weights``: loads without torch), written beside it by ``export_shipped``. Hidden layers of 512 and 256.
SHIPPED = DATA / "bgai-default.pt"
SHIPPED_NPZ = SHIPPED.with_suffix(".npz")
#: The shipped network's pruning net (``Bot.replies``; ``training/pruner.py``).
SHIPPED_PRUNER = SHIPPED.parent / "bgai-pruner.npz"
#: The fast network: a contact and a race net, each with hidden layers of 512 and 64, and its pruning net. They
#: began as one student of the shipped network (``checkpoints/shipped/experiments/s-512-64-init-24.pt``, the
#: shipped network's own 1-ply lookahead, ``training/configs/student.toml``), then learned one generation of their
#: own 1-ply lookahead on a million positions (issue 20's ``split-scale``), then the mean of five networks of
#: different lines on five million (issue 37's ``ens5-distil``, docs/strength.md). It plays better than the shipped
#: network at 0 and 1-ply, and as well at 2-ply, in 0.8 to 0.9 of the time (docs/figures.md).
FAST_NPZ = SHIPPED.parent / "bgai-fast.npz"
FAST_PRUNER = SHIPPED.parent / "bgai-fast-pruner.npz"
#: The pruning net each shipped network's file gets by default (``load_bot``).
OWN_PRUNERS: dict[Path, Path] = {SHIPPED: SHIPPED_PRUNER, SHIPPED_NPZ: SHIPPED_PRUNER, FAST_NPZ: FAST_PRUNER}
#: The fitted cube efficiency (``bgai.core.cube.EfficiencyModel``) each shipped network's file gets by default
#: (``load_bot``), fitted by ``bgai.train.cube_efficiency`` to that network's own cubeful rollouts.
FAST_CUBE_EFFICIENCY = SHIPPED.parent / "bgai-fast-cube-efficiency.json"
SHIPPED_CUBE_EFFICIENCY = SHIPPED.parent / "bgai-default-cube-efficiency.json"
OWN_CUBE_EFFICIENCY: dict[Path, Path] = {FAST_NPZ: FAST_CUBE_EFFICIENCY, SHIPPED: SHIPPED_CUBE_EFFICIENCY,
                                         SHIPPED_NPZ: SHIPPED_CUBE_EFFICIENCY}
#: The network ``load_bot()`` plays with at each ply: the fast one at every ply, since it plays as well as the
#: 512-256 network at 2-ply too, in 0.84 of its time (docs/figures.md, "Time per checker play").
DEFAULT_NETWORKS: dict[int, Path] = {0: FAST_NPZ, 1: FAST_NPZ, 2: FAST_NPZ}


class Ensemble(Bot):
    """A bot whose network is the mean of several: each evaluation's five probabilities are the mean of its own
    ``model``'s and each of ``others``' (``ModelSnapshot``s or torch models), at the cost of one evaluation a network.
    Everything else is the first network's bot: lookahead, bear-offs, the pruning net, the cube. Networks of
    different lines err differently, so their mean plays better than each (``bgai/coach/ensemble_bench.py``); a
    training stage may learn from it (``LookaheadStage.ensemble``). An experiment and a teacher, not a player bgai
    ships."""

    def __init__(self, model, others, **kwargs) -> None:
        super().__init__(model, **kwargs)
        if not others:
            raise ValueError("an Ensemble needs at least one network beside the first")
        self.others = tuple(Bot(other, bf16=self.bf16) for other in others)

    def _rebuilt(self, model, settings: dict) -> Bot:
        return Ensemble(model, [other.model for other in self.others], **settings)

    def _network_values(self, boards: np.ndarray, net=None, phase: np.ndarray | None = None) -> np.ndarray:
        mine = super()._network_values(boards, net, phase)
        if net is not None:  # the pruning net's pass stays the first bot's
            return mine
        total = np.array(mine, dtype=np.float32)
        for other in self.others:
            total += other._network_values(boards, None, phase)
        return total / np.float32(1 + len(self.others))


def load_pruner(path: str | Path) -> tuple[ModelSnapshot, int]:
    """A pruning net's file (``training/pruner.py``): its weights and the plays per roll it says it leaves the
    network (``PRUNE_KEEP`` if it does not say)."""
    net, info = ModelSnapshot.load_npz(path)
    keep = info.get("keep", PRUNE_KEEP)
    if not (isinstance(keep, int) and not isinstance(keep, bool) and 1 <= keep <= 1_000):
        raise BgaiError(f"the pruning net {path} says it leaves the network keep={keep!r} plays a roll; "
                        f"that must be a whole number from 1 to 1000")
    return net, keep


def load_bot(path: str | Path | None = None, plies: int = 0, filters=None, pruner=None,
             cube_plies: int | None = None, cube_efficiency=None) -> Bot:
    """The bot of a network file at ``plies`` of lookahead (0..``MAX_PLIES``); ``None`` loads the network bgai
    ships for that ply (``DEFAULT_NETWORKS``: the fast network at every ply).
    ``path``: a checkpoint (``.pt``, ``bgai.eval.checkpoint``) or a network saved for play (``.npz``,
    ``ModelSnapshot.save_npz``). ``filters`` overrides the move filters (see ``Bot``). The bot evaluates with the
    numpy forward pass (``bgai.eval.weights``) either way; only a ``.pt`` file needs torch, to be read.

    ``pruner``: the pruning net of its lookahead's replies and of a rollout's variance reduction (``Bot.replies``;
    a 0-ply bot's own plays never use it): ``None`` (the default) gives a shipped network its own (``OWN_PRUNERS``,
    trained on it by ``training/pruner.py``) and any other network none; ``False`` none; a path an ``.npz`` of one.
    The network judges the pruning net's best ``keep`` plays of each roll, as its file's info says (else
    ``PRUNE_KEEP``). ``cube_plies``: the lookahead of its cube decisions (default ``CUBE_PLIES[plies]``: 2-ply
    for a 1-ply bot), with the same network. ``cube_efficiency``: the cube efficiency of its Janowski formula
    (``Bot.cube_efficiency``): ``None`` (the default) gives a shipped network its own fitted model
    (``OWN_CUBE_EFFICIENCY``) and any other network the GNU Backgammon manual's values; ``False`` those values;
    a path a model's file (``bgai.train.cube_efficiency``)."""
    npz: Path | None
    if path is None:
        npz = DEFAULT_NETWORKS.get(plies, DEFAULT_NETWORKS[0])  # (Bot refuses plies that are not 0..MAX_PLIES)
        path = SHIPPED if npz == SHIPPED_NPZ else npz
    else:
        path = Path(path)
        npz = path if path.suffix == ".npz" else None
    own = OWN_PRUNERS.get(path.resolve())
    if pruner is None and own is not None and own.is_file():
        pruner = own
    own_cube = OWN_CUBE_EFFICIENCY.get(path.resolve())
    if cube_efficiency is None and own_cube is not None and own_cube.is_file():
        cube_efficiency = own_cube
    efficiency = EfficiencyModel.load(cube_efficiency) if cube_efficiency not in (None, False) else None
    if npz is not None and npz.is_file():
        snapshot, info = ModelSnapshot.load_npz(npz)
    else:
        from bgai.eval.checkpoint import load_checkpoint, snapshot_from_checkpoint

        checkpoint = load_checkpoint(path, weights_only_ok=True)
        snapshot = snapshot_from_checkpoint(checkpoint)
        info = {k: checkpoint.get(k) for k in ("games", "config")}
    deep = isinstance(plies, int) and plies > 0
    pruning, keep = None, PRUNE_KEEP
    if pruner not in (None, False):
        pruning, keep = load_pruner(pruner)
    network = f"bgai:{path.stem}"
    name = network + (f"@{plies}ply" if plies else "") + ("-unpruned" if deep and pruner is False else "")
    return Bot(snapshot, name=name, plies=plies, filters=filters, info=info, pruner=pruning, prune=keep,
               network=network, cube_plies=cube_plies, cube_efficiency=efficiency)


def export_shipped(checkpoint: str | Path = SHIPPED, target: str | Path = SHIPPED_NPZ) -> None:
    """Write the network of ``checkpoint`` (default the shipped one) for play, as ``target`` (``.npz``), with the
    games and config it was trained with."""
    from bgai.eval.checkpoint import load_checkpoint, model_from_checkpoint

    payload = load_checkpoint(checkpoint)
    info = {k: payload.get(k) for k in ("games", "config")}
    ModelSnapshot.of(model_from_checkpoint(payload)).save_npz(target, info=json.loads(json.dumps(info, default=str)))
