"""The 0-ply network as one ONNX file, for other runtimes and languages (``bgai export --onnx FILE``).

The file holds the network alone, the forward pass of ``bgai.eval.weights.ModelSnapshot.probabilities``:

``inputs`` float32 (N, F)
    The encoder's features of N boards (``bgai.eval.encoding.encode``, for the network's encoder version: F is 231 for
    version 2, the shipped networks').
``phase`` int64 (N,)
    Only where the network is several nets (the default 0-ply network has a contact and a race net): each board's
    phase, ``bgai.core.phase.classify``, which picks the net that evaluates it (``bgai.eval.weights.NET_SETS``).
``probabilities`` float32 (N, 5), the output
    The cumulative chances of the player on roll: win, win_gammon, win_backgammon, lose_gammon, lose_backgammon
    (gammons include backgammons; cubeless money equity is ``2 win - 1 + win_gammon + win_backgammon -
    lose_gammon - lose_backgammon``).

``onnx_feeds(boards)`` makes those inputs from boards (N×26, the on-roll view of ``Position.board``), so that::

    session = onnxruntime.InferenceSession("bgai.onnx")
    probabilities = session.run(None, bgai.onnx_feeds(boards, session))[0]

What the file leaves out is what ``Bot.probabilities`` adds around the network: finished games scored exactly, the
bear-off database, and the outcomes the rules rule out set to zero; and every lookahead.

The graph is built from the numpy weights with ``onnx.helper`` (no torch): each net is Gemm and Relu layers, then
the head's five sigmoids multiplied out into the cumulative chances; with several nets, as in bgai, each net
evaluates only the rows its phase routes to (``Gather`` by the route table, ``ScatterND`` back into place). The
file is a function of the weights alone (fixed opset, IR version and producer, no time stamp), so exporting the
same network twice gives the same bytes. Its metadata (``bgai.encoder_version``, ``bgai.nets``, ``bgai.sha256`` of
the weights) is what ``onnx_feeds`` reads from a file or session.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

import numpy as np

from bgai._version import __version__
from bgai.core.errors import BgaiError
from bgai.core.files import write_atomically
from bgai.eval.weights import OUTPUTS, ModelSnapshot, content_hash, net_route

#: The ONNX operator set and file format the export writes: opset 17 (ONNX 1.12, 2022) and IR version 8, which
#: every onnxruntime since 1.12 reads.
OPSET = 17
IR_VERSION = 8
#: The names of the graph's inputs and output.
INPUTS, PHASE, PROBABILITIES = "inputs", "phase", "probabilities"
#: The largest difference of a probability between onnxruntime and bgai that ``export_onnx`` accepts.
TOLERANCE = 1e-5


def _require(module: str):
    """The optional module ``onnx`` or ``onnxruntime``, or a one-line error saying how to install it."""
    try:
        return __import__(module)
    except ImportError:
        raise BgaiError(f"the ONNX export needs {module}: pip install 'bgai[env]'") from None


def snapshot_of(network=None) -> ModelSnapshot:
    """The network to export: ``None`` for the one ``load_bot()`` plays 0-ply with, a ``ModelSnapshot``, a bot, or
    the path of a network file (``.npz`` or a ``.pt`` checkpoint)."""
    if network is None:
        return _default_snapshot()
    if isinstance(network, ModelSnapshot):
        return network
    if hasattr(network, "model"):  # a bgai.eval.bot.Bot
        return ModelSnapshot.of(network.model)
    if isinstance(network, (str, Path)):
        from bgai.eval.bot import load_bot

        return ModelSnapshot.of(load_bot(network).model)
    raise BgaiError(f"a network is a file, a ModelSnapshot or a bot, got {type(network).__name__}")


@functools.lru_cache(maxsize=1)
def _default_snapshot() -> ModelSnapshot:
    from bgai.eval.bot import DEFAULT_NETWORKS

    return ModelSnapshot.load_npz(DEFAULT_NETWORKS[0])[0]


def _net_layers(snapshot: ModelSnapshot, name: str) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(key, weight (out, in), bias) of each layer of the net ``name``, the head last, float32."""
    keys = [f"nets.{name}.body.{2 * i}" for i in range(len(snapshot.hidden))] + [f"nets.{name}.head"]
    return [(key, np.asarray(snapshot.weights[f"{key}.weight"], dtype=np.float32),
             np.asarray(snapshot.weights[f"{key}.bias"], dtype=np.float32)) for key in keys]


def onnx_model(network=None):
    """The ``onnx.ModelProto`` of a network (see ``snapshot_of``): the graph the module docstring describes,
    checked by ``onnx.checker``."""
    onnx = _require("onnx")
    from onnx import TensorProto, helper, numpy_helper

    snapshot = snapshot_of(network)
    split = len(snapshot.phases) > 1
    initializers = [numpy_helper.from_array(np.array([1.0], dtype=np.float32), "one"),
                    numpy_helper.from_array(np.ones(len(OUTPUTS), dtype=np.int64), "columns")]
    nodes = []
    rows_of = {}
    if split:  # each net evaluates the rows its phase routes to, as bgai does: Gather them, Scatter the results
        initializers += [numpy_helper.from_array(net_route(snapshot.phases), "route"),
                         numpy_helper.from_array(np.array([0], dtype=np.int64), "zero"),
                         numpy_helper.from_array(np.array([1], dtype=np.int64), "one_int"),
                         numpy_helper.from_array(np.array([len(OUTPUTS)], dtype=np.int64), "width")]
        nodes += [helper.make_node("Gather", ["route", PHASE], ["net"], axis=0),
                  helper.make_node("Shape", [INPUTS], ["shape"]),
                  helper.make_node("Slice", ["shape", "zero", "one_int"], ["rows"]),
                  helper.make_node("Concat", ["rows", "width"], ["out_shape"], axis=0),
                  helper.make_node("ConstantOfShape", ["out_shape"], ["empty"],
                                   value=numpy_helper.from_array(np.zeros(1, dtype=np.float32)))]
        for k, name in enumerate(snapshot.phases):
            initializers.append(numpy_helper.from_array(np.array(k, dtype=np.int64), f"{name}.number"))
            nodes += [helper.make_node("Equal", ["net", f"{name}.number"], [f"{name}.mine"]),
                      helper.make_node("NonZero", [f"{name}.mine"], [f"{name}.where"]),  # (1, M)
                      helper.make_node("Transpose", [f"{name}.where"], [f"{name}.index"]),  # (M, 1)
                      helper.make_node("Squeeze", [f"{name}.where", "zero"], [f"{name}.rows"]),  # (M,)
                      helper.make_node("Gather", [INPUTS, f"{name}.rows"], [f"{name}.inputs"], axis=0)]
            rows_of[name] = f"{name}.inputs"
    outs = []
    for name in snapshot.phases:
        h = rows_of.get(name, INPUTS)
        layers = _net_layers(snapshot, name)
        for number, (key, weight, bias) in enumerate(layers):
            initializers += [numpy_helper.from_array(weight, f"{key}.weight"),
                             numpy_helper.from_array(bias, f"{key}.bias")]
            z = f"{key}.out"
            nodes.append(helper.make_node("Gemm", [h, f"{key}.weight", f"{key}.bias"], [z], transB=1))
            if number < len(layers) - 1:
                nodes.append(helper.make_node("Relu", [z], [f"{key}.relu"]))
                h = f"{key}.relu"
            else:
                h = z
        # The head's sigmoids are a win and four conditional chances; multiplied out, the cumulative ones.
        c = [f"{name}.c{k}" for k in range(len(OUTPUTS))]
        nodes += [
            helper.make_node("Sigmoid", [h], [f"{name}.conditional"]),
            helper.make_node("Split", [f"{name}.conditional", "columns"], c, axis=1),
            helper.make_node("Mul", [c[0], c[1]], [f"{name}.win_gammon"]),
            helper.make_node("Mul", [f"{name}.win_gammon", c[2]], [f"{name}.win_backgammon"]),
            helper.make_node("Sub", ["one", c[0]], [f"{name}.lose"]),
            helper.make_node("Mul", [f"{name}.lose", c[3]], [f"{name}.lose_gammon"]),
            helper.make_node("Mul", [f"{name}.lose_gammon", c[4]], [f"{name}.lose_backgammon"]),
            helper.make_node("Concat", [c[0], f"{name}.win_gammon", f"{name}.win_backgammon", f"{name}.lose_gammon",
                                        f"{name}.lose_backgammon"], [f"{name}.probabilities"], axis=1),
        ]
        outs.append(f"{name}.probabilities")
    inputs = [helper.make_tensor_value_info(INPUTS, TensorProto.FLOAT, ["N", snapshot.n_inputs])]
    chosen = outs[0]
    if split:
        inputs.append(helper.make_tensor_value_info(PHASE, TensorProto.INT64, ["N"]))
        chosen = "empty"
        for name, out in zip(snapshot.phases, outs):
            nodes.append(helper.make_node("ScatterND", [chosen, f"{name}.index", out], [f"{name}.placed"]))
            chosen = f"{name}.placed"
    nodes.append(helper.make_node("Identity", [chosen], [PROBABILITIES]))
    output = helper.make_tensor_value_info(PROBABILITIES, TensorProto.FLOAT, ["N", len(OUTPUTS)])
    graph = helper.make_graph(nodes, "bgai", inputs, [output], initializers,
                              doc_string=f"bgai's 0-ply network: {snapshot.describe()}")
    model = helper.make_model(graph, producer_name="bgai", producer_version=__version__, ir_version=IR_VERSION,
                              opset_imports=[helper.make_opsetid("", OPSET)],
                              doc_string="inputs: bgai.eval.encoding.encode(boards); phase: "
                                         "bgai.core.phase.classify(boards) (several nets only); probabilities: "
                                         "win, win_gammon, win_backgammon, lose_gammon, lose_backgammon for the "
                                         "player on roll")
    helper.set_model_props(model, {
        "bgai.encoder_version": str(snapshot.encoder_version),
        "bgai.nets": ",".join(snapshot.phases),
        "bgai.hidden": ",".join(map(str, snapshot.hidden)),
        "bgai.outputs": ",".join(OUTPUTS),
        "bgai.sha256": content_hash({key: np.asarray(w, dtype=np.float32) for key, w in snapshot.weights.items()}),
    })
    onnx.checker.check_model(model)
    return model


def onnx_bytes(network=None) -> bytes:
    """The ONNX file of a network (see ``snapshot_of``), as bytes: the same network always gives the same bytes."""
    return onnx_model(network).SerializeToString(deterministic=True)


def export_onnx(path: str | Path, network=None, check: int = 1000, seed: int = 0) -> dict:
    """Write the ONNX file of a network (default: the one ``load_bot()`` plays 0-ply with) to ``path``,
    atomically. With ``check`` positions (0 for none), onnxruntime first evaluates the file on that many boards
    of games (``sample_boards``) and the file is written only if every probability is within ``TOLERANCE`` of
    bgai's own pass; else ``BgaiError``. Returns what was written and measured: ``path``, ``bytes``, ``network``
    (its description), ``inputs``, and with a check ``check_onnx``'s figures."""
    if check < 0:
        raise BgaiError(f"the check takes a number of positions >= 0, got {check}")
    snapshot = snapshot_of(network)
    data = onnx_bytes(snapshot)
    report: dict[str, Any] = {"path": str(path), "bytes": len(data), "network": snapshot.describe(),
                              "inputs": _input_names(snapshot)}
    if check:
        figures = check_onnx(data, snapshot, sample_boards(check, seed))
        if figures["max_difference"] > TOLERANCE:
            raise BgaiError(f"onnxruntime's probabilities differ from bgai's by up to {figures['max_difference']:.1e} "
                            f"(more than {TOLERANCE:.0e}); nothing written")
        report.update(figures)
    if Path(path).is_dir():
        raise BgaiError(f"{path} is a folder; give the ONNX file's name")
    try:
        write_atomically(path, lambda handle: handle.write(data))
    except OSError as error:
        raise BgaiError(f"cannot write {path}: {error.strerror or error}") from None
    return report


def _input_names(snapshot: ModelSnapshot) -> list[str]:
    return [INPUTS, PHASE] if len(snapshot.phases) > 1 else [INPUTS]


def onnx_feeds(boards, network=None) -> dict[str, np.ndarray]:
    """The inputs of the exported network for ``boards`` (N×26 or one board of 26, the on-roll view of
    ``Position.board``): ``{"inputs": encode(boards) (N, F) float32}``, with ``"phase": classify(boards) (N,)
    int64`` where the network is several nets. ``network``: which export they are for, read from its metadata
    when it is an ``.onnx`` file's path or an ``onnxruntime.InferenceSession``; else as ``snapshot_of`` (default:
    the network ``load_bot()`` plays 0-ply with, which ``bgai export --onnx`` writes by default).

        >>> import bgai
        >>> feeds = bgai.onnx_feeds(bgai.Position.start().board)
        >>> {name: (array.shape, str(array.dtype)) for name, array in feeds.items()}
        {'inputs': ((1, 231), 'float32'), 'phase': ((1,), 'int64')}
    """
    from bgai.core.phase import classify
    from bgai.eval import encoding

    version, split = _feed_layout(network)
    b = np.asarray(boards)
    if b.ndim == 1:
        b = b[None]
    if b.ndim != 2 or b.shape[1] != 26:
        raise BgaiError(f"boards are N×26 (or one board of 26), got shape {b.shape}")
    if b.dtype.kind not in "iu":
        raise BgaiError(f"boards are whole checker counts, got dtype {b.dtype}")
    if len(b) and (b.max() > 15 or b.min() < -15):
        raise BgaiError("a board holds at most 15 checkers of a side on a point")
    b = np.ascontiguousarray(b, dtype=np.int8)
    feeds = {INPUTS: encoding.encode(b, version=version)}
    if split:
        feeds[PHASE] = classify(b).astype(np.int64)
    return feeds


def _feed_layout(network) -> tuple[int, bool]:
    """(encoder version, several nets) of the network the feeds are for."""
    meta = None
    if hasattr(network, "get_modelmeta"):  # an onnxruntime.InferenceSession
        meta = dict(network.get_modelmeta().custom_metadata_map)
    elif isinstance(network, (str, Path)) and Path(network).suffix == ".onnx":
        if not Path(network).is_file():
            raise BgaiError(f"no ONNX file at {network}")
        onnx = _require("onnx")
        try:
            model = onnx.load(str(network), load_external_data=False)
        except Exception as error:  # protobuf's errors for a file that is not ONNX
            raise BgaiError(f"{network} is not a readable ONNX file ({type(error).__name__})") from None
        meta = {prop.key: prop.value for prop in model.metadata_props}
    if meta is not None:
        if "bgai.encoder_version" not in meta or "bgai.nets" not in meta:
            raise BgaiError("that ONNX network was not exported by bgai (its metadata has no bgai.encoder_version)")
        return int(meta["bgai.encoder_version"]), len(meta["bgai.nets"].split(",")) > 1
    snapshot = snapshot_of(network)
    return snapshot.encoder_version, len(snapshot.phases) > 1


def sample_boards(count: int, seed: int = 0) -> np.ndarray:
    """``count`` boards (on-roll view) met in games of the heuristic player against itself on the dice of
    ``seed``: contact, crashed, race and bear-off positions in the proportions games have them."""
    from bgai.core.game import Table, run_turns
    from bgai.formats.position import START_BOARD
    from bgai.players import HeuristicPlayer

    rng = np.random.default_rng(seed)
    games = max(1, -(-count // 40))
    seen: list[np.ndarray] = []
    table = Table.start(np.repeat(START_BOARD[None], games, axis=0), np.zeros(games, dtype=np.int64))
    player = HeuristicPlayer()
    run_turns((player, player), table, lambda rows, turn: rng.integers(1, 7, size=(len(rows), 2)), rng,
              observe=lambda turn, rows, boards, dice, seat: seen.append(boards.copy()))
    boards = np.concatenate(seen)
    return boards[np.sort(rng.choice(len(boards), size=min(count, len(boards)), replace=False))]


def check_onnx(model, network, boards: np.ndarray, repeats: int = 3) -> dict:
    """onnxruntime (one thread) against bgai's own pass on ``boards``, both from the boards: ``max_difference``,
    the largest difference of a probability, and each one's ``boards_per_s`` on the whole batch and on batches of
    a 0-ply move's 20 boards (the best of ``repeats`` timings). ``model``: the ONNX file's path or bytes."""
    ort = _require("onnxruntime")
    snapshot = snapshot_of(network)
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    source = str(model) if isinstance(model, (str, Path)) else model
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    split = len(snapshot.phases) > 1
    from bgai.core.phase import classify

    def by_onnx(b):
        return session.run(None, onnx_feeds(b, snapshot))[0]

    def by_bgai(b):
        return snapshot.board_probabilities(b, classify(b) if split else None)

    ours, theirs = by_bgai(boards), by_onnx(boards)
    figures: dict[str, Any] = {"positions": len(boards), "max_difference": float(np.abs(ours - theirs).max())}
    moves = [boards[lo:lo + 20] for lo in range(0, len(boards) - 19, 20)] or [boards]
    for name, run in (("onnxruntime", by_onnx), ("bgai", by_bgai)):
        whole = min(_seconds(run, [boards]) for _ in range(repeats))
        small = min(_seconds(run, moves) for _ in range(repeats))
        figures[f"{name}_boards_per_s"] = len(boards) / whole if whole else float("inf")
        figures[f"{name}_move_boards_per_s"] = sum(map(len, moves)) / small if small else float("inf")
    return figures


def _seconds(run, batches) -> float:
    started = time.perf_counter()
    for batch in batches:
        run(batch)
    return time.perf_counter() - started


__all__ = ["OPSET", "TOLERANCE", "check_onnx", "export_onnx", "onnx_bytes", "onnx_feeds", "onnx_model",
           "sample_boards", "snapshot_of"]
