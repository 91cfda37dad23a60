"""Your agent on the bench (bgai.play.agents, ``bgai bench --agent/--engine``): the agent contract, duplicate games, and
the faults that forfeit a game (an illegal play, an exception, a hang) without stopping the bench or spoiling its
record.

The agents here are small and their games few. The cross-checks: an agent that plays as bgai does scores exactly 0
against bgai in duplicate games; an agent's three ways of answering (an index, a Move, its notation) give the same
games; a UBGI engine that plays what a Python agent plays gets the same games as that agent; and a forfeited game
counts -3 while every other game is the one the agent would have played without the fault.
"""

import json
import re
import sys
import textwrap
import time

import numpy as np
import pytest

from bgai.core.errors import BgaiError
from bgai.eval.bot import load_bot
from bgai.formats.position import Position
from bgai.frontends.cli import main
from bgai.play.agents import (
    FORFEIT_POINTS,
    AgentBench,
    UbgiEngine,
    bench_agent,
    built_in_opponents,
    load_agent,
)
from bgai.players import PubevalPlayer, RandomPlayer


@pytest.fixture(scope="module")
def bot():
    return load_bot()


def first(position, dice, plays):
    return 0


def points(bench: AgentBench, opponent: int = 0) -> np.ndarray:
    return bench.results[opponent].results.points


def forfeited(bench: AgentBench, opponent: int = 0) -> np.ndarray:
    """(2 × sequences,) which games were forfeited, in the order of ``points`` (seat 0's games, then seat 1's)."""
    faults = bench.results[opponent].faults
    lost = np.zeros(2 * bench.sequences, dtype=bool)
    for fault in faults:
        lost[fault.seat * bench.sequences + fault.game] = True
    assert len(faults) == lost.sum(), "one fault a forfeited game"
    return lost


# The contract -----------------------------------------------------------------------------------------------------


def test_an_agent_that_plays_as_bgai_does_scores_exactly_0_against_bgai(bot):
    bench = bench_agent(lambda position, dice, plays: bot.choose_move(position, dice), ["bgai"], games=2, luck=True)
    s = bench.results[0].summary()
    assert s["games"] == 4 and s["forfeits"] == 0
    assert s["ppg"] == 0 and s["ppg_se"] == 0  # each dice sequence's two games are mirror images
    assert abs(s["ppg_luck_adjusted"]) < 1e-9


def test_an_index_a_move_and_its_notation_are_the_same_answer(bot):
    def by_index(position, dice, plays):
        chosen = bot.choose_move(position, dice)
        return [str(p) for p in plays].index(str(chosen))

    def by_move(position, dice, plays):
        return bot.choose_move(position, dice)

    def by_text(position, dice, plays):
        return str(bot.choose_move(position, dice))

    results = [points(bench_agent(agent, ["pubeval"], games=3)) for agent in (by_index, by_move, by_text)]
    assert (results[0] == results[1]).all() and (results[1] == results[2]).all()


def test_the_agent_is_asked_only_with_a_choice_from_its_own_side():
    asked = []

    def agent(position, dice, plays):
        asked.append((position, dice, plays))
        return len(plays) - 1

    bench_agent(agent, ["random"], games=2)
    assert asked
    for position, dice, plays in asked:
        assert isinstance(position, Position) and dice[0] >= dice[1]
        assert len(plays) >= 2 and [p.after for p in plays] == [m.after for m in position.legal_moves(dice)]
        assert all(p.before == position for p in plays)
    assert any(position == Position.start() for position, _, _ in asked)  # it opened some games


def test_a_batched_player_is_an_agent_too():
    bench = bench_agent(PubevalPlayer(), ["pubeval"], games=3)
    assert bench.agent == "pubeval" and points(bench).mean() == 0  # the same player on both sides: mirror games


# Faults -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("answer, reason", [
    (lambda position, dice, plays: "24/1", "returned '24/1'"),
    (lambda position, dice, plays: 99, "returned index 99"),
    (lambda position, dice, plays: -1, "returned index -1"),
    (lambda position, dice, plays: True, "returned True"),
    (lambda position, dice, plays: [0], "an agent returns an index"),
    (lambda position, dice, plays: Position.start().legal_moves((6, 6))[0], "another position|the roll is"),
])
def test_an_illegal_play_forfeits_the_game(answer, reason):
    bench = bench_agent(answer, ["heuristic"], games=2)
    result = bench.results[0]
    assert len(result.faults) == 4 and (points(bench) == FORFEIT_POINTS).all()
    assert all(re.search(reason, fault.reason) for fault in result.faults), result.faults[0]
    assert result.summary()["forfeits"] == 4


def test_an_agent_that_raises_forfeits_only_those_games_and_the_others_are_as_they_would_be():
    def fussy(position, dice, plays):
        if dice == (6, 6):
            raise ValueError("no double sixes, please")
        return 0

    plain = bench_agent(first, ["pubeval"], games=8)
    bench = bench_agent(fussy, ["pubeval"], games=8)
    lost = forfeited(bench)
    assert lost.any() and not lost.all()
    assert (points(bench)[lost] == FORFEIT_POINTS).all()
    assert (points(bench)[~lost] == points(plain)[~lost]).all()
    fault = bench.results[0].faults[0]
    assert fault.dice == (6, 6) and fault.reason == "raised ValueError: no double sixes, please"
    assert Position.from_position_id(fault.position_id)  # the position it was asked about
    assert "dice 66: raised ValueError" in str(fault)


def test_an_agent_that_hangs_loses_the_game_at_the_time_limit_and_the_bench_goes_on():
    def slow(position, dice, plays):
        if dice == (6, 5):
            time.sleep(1.5)  # far past the limit; its answer comes too late to count
        return 0

    plain = bench_agent(first, ["random"], games=4)
    started = time.perf_counter()
    bench = bench_agent(slow, ["random"], games=4, timeout=0.2)
    lost = forfeited(bench)
    assert lost.any() and time.perf_counter() - started < 1.5 * lost.sum()
    assert all(f.reason == "took longer than 0.2 s, the time limit of a decision" for f in bench.results[0].faults)
    assert (points(bench)[lost] == FORFEIT_POINTS).all() and (points(bench)[~lost] == points(plain)[~lost]).all()


def test_a_batched_player_that_answers_out_of_its_plays_forfeits_those_games():
    class Sloppy(RandomPlayer):
        name = "sloppy"

        def choose(self, boards, after, owner, rng, dice=None):
            picks = super().choose(boards, after, owner, rng, dice)
            picks[dice[:, 0] == dice[:, 1]] = len(after)  # past the end on doubles
            return picks

    bench = bench_agent(Sloppy(), ["heuristic"], games=4)
    lost = forfeited(bench)
    assert lost.any() and (points(bench)[lost] == FORFEIT_POINTS).all()
    assert all("choose returned index" in f.reason and f.dice[0] == f.dice[1] for f in bench.results[0].faults)


def test_the_record_holds_every_fault_and_is_written_whole(tmp_path):
    def boom(position, dice, plays):
        raise RuntimeError("boom")

    told = []
    bench = bench_agent(boom, ["random", "heuristic"], games=2, on_fault=told.append)
    path = tmp_path / "record.json"
    bench.save(path)
    record = json.loads(path.read_text())
    assert [o["opponent"] for o in record["opponents"]] == ["random", "heuristic"]
    assert [len(o["faults"]) for o in record["opponents"]] == [4, 4] and len(told) == 8
    assert record["opponents"][0]["faults"][0]["reason"] == "raised RuntimeError: boom"
    assert record["forfeit_points"] == FORFEIT_POINTS and record["opponents"][0]["ppg"] == FORFEIT_POINTS
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]  # no temporary file left behind


# Loading agents ---------------------------------------------------------------------------------------------------


AGENT_FILE = '''
def first(position, dice, plays):
    return 0


class Last:
    name = "last"

    def __call__(self, position, dice, plays):
        return str(plays[-1])


not_callable = 42
'''


def test_module_callable_from_a_file_or_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "my_agent_module.py").write_text(AGENT_FILE)
    assert load_agent(f"{tmp_path / 'my_agent_module.py'}:first")(None, None, [1, 2]) == 0
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".")])
    agent = load_agent("my_agent_module:Last")  # a class: made with no arguments
    assert agent.name == "last"
    bench = bench_agent("my_agent_module:Last", ["random"], games=1)
    assert bench.agent == "last" and bench.results[0].summary()["forfeits"] == 0


@pytest.mark.parametrize("spec, message", [
    ("no_colon", "MODULE:CALLABLE"),
    ("no_such_module_here:f", "cannot import the agent's module 'no_such_module_here'"),
    ("{dir}/my_agent_module.py:missing", "has no 'missing'"),
    ("{dir}/my_agent_module.py:not_callable", "neither callable nor a player"),
    ("{dir}/absent.py:f", "no agent file"),
])
def test_a_bad_agent_name_is_one_clear_error(tmp_path, spec, message):
    (tmp_path / "my_agent_module.py").write_text(AGENT_FILE)
    with pytest.raises(BgaiError, match=message):
        load_agent(spec.format(dir=tmp_path))


def test_bench_refuses_what_it_cannot_play():
    with pytest.raises(BgaiError, match="exactly one"):
        bench_agent(first, engine="x")
    with pytest.raises(BgaiError, match="unknown opponent 'nobody'"):
        bench_agent(first, ["nobody"])
    with pytest.raises(BgaiError, match="more than 0 seconds"):
        bench_agent(first, ["random"], timeout=-1)
    assert built_in_opponents()[:3] == ["random", "heuristic", "pubeval"] and built_in_opponents()[-1] == "bgai"


# UBGI engines -----------------------------------------------------------------------------------------------------


ENGINE = textwrap.dedent('''
    """A tiny UBGI engine: the first legal play of bgai's list. argv: mode, a log of the commands it reads, a
    marker file (modes that misbehave once: only while the marker does not exist yet)."""
    import os
    import sys
    import time

    import numpy as np

    from bgai.core.movegen import afterstates, reference_afterstates
    from bgai.formats.position import Move
    from bgai.formats.position import Position
    from bgai.frontends.ubgi import play_text


    def first_play(position, dice):
        """bgai's first legal play, by the numpy move generator (the compiled one's rows, in its order): no
        compiler to load, so the engine starts at once."""
        roll = tuple(sorted(dice, reverse=True))
        found = reference_afterstates(position.board[None], np.array([roll]), return_steps=True)
        return play_text(Move(position, roll, Position._unchecked(found.after[0]), found.steps[0]))


    mode, log, marker = sys.argv[1], open(sys.argv[2], "a"), sys.argv[3]
    once = not os.path.exists(marker)
    position = dice = None
    decisions = 0
    if mode == "dead":
        sys.exit("no network here")
    for line in sys.stdin:
        words = line.split()
        log.write(line)
        log.flush()
        if words[0] == "ubgi":
            print("id name tiny")
            if mode == "v02":
                print("proto 0.2")
            print("ubgiok", flush=True)
        elif words[0] == "isready":
            print("readyok", flush=True)
        elif words[0] == "position":
            position = Position.from_position_id(words[2])
        elif words[0] == "dice":
            dice = (int(words[1]), int(words[2]))
        elif words[0] == "go":
            decisions += 1
            if once and decisions == 3 and mode in ("hang", "crash"):
                open(marker, "w").close()
                if mode == "hang":
                    time.sleep(60)
                sys.exit(3)
            if mode == "error":
                print("error bad_argument not today", flush=True)
                continue
            if mode == "illegal":
                print("bestmove 13/1", flush=True)
                continue
            print("info depth 1")
            print("bestmove " + first_play(position, dice), flush=True)
        elif words[0] == "quit":
            break
''')


@pytest.fixture
def tiny(tmp_path):
    """The command line of the tiny engine in a mode, and the commands it read (a function of no arguments)."""
    script = tmp_path / "tiny_engine.py"
    script.write_text(ENGINE)
    log = tmp_path / "commands.log"

    def command(mode):
        return f"{sys.executable} {script} {mode} {log} {tmp_path / 'marker'}"

    command.commands = lambda: log.read_text().splitlines() if log.exists() else []
    return command


def test_an_engine_plays_the_games_a_python_agent_with_its_answers_plays(tiny):
    bench = bench_agent(engine=tiny("good"), opponents=["pubeval"], games=3, timeout=5)
    assert bench.agent == "tiny" and bench.results[0].summary()["forfeits"] == 0
    assert (points(bench) == points(bench_agent(first, ["pubeval"], games=3))).all()
    commands = tiny.commands()
    assert commands[:2] == ["ubgi", "isready"] and commands[-1] == "quit"
    assert commands.count("newgame") == 6  # one a game: an engine plays game after game
    assert "go role chequer" in commands and "go chequer" not in commands


def test_an_engine_that_says_proto_0_2_is_asked_with_go_chequer(tiny):
    bench = bench_agent(engine=tiny("v02"), opponents=["random"], games=1, timeout=5)
    assert bench.results[0].summary()["forfeits"] == 0
    assert "go chequer" in tiny.commands() and "go role chequer" not in tiny.commands()


@pytest.mark.parametrize("mode, reason", [("illegal", "'13/1'"), ("error", "answered 'error bad_argument not today'")])
def test_an_engine_that_answers_wrong_forfeits_every_game(tiny, mode, reason):
    bench = bench_agent(engine=tiny(mode), opponents=["random"], games=1, timeout=5)
    assert (points(bench) == FORFEIT_POINTS).all()
    assert all(reason in fault.reason for fault in bench.results[0].faults)


@pytest.mark.parametrize("mode, reason", [("hang", "took longer than 1 s over a decision"),
                                          ("crash", "the engine exited (status 3)")])
def test_an_engine_that_hangs_or_dies_is_started_again_and_loses_that_game_only(tiny, mode, reason):
    plain = bench_agent(first, ["pubeval"], games=2)
    bench = bench_agent(engine=tiny(mode), opponents=["pubeval"], games=2, timeout=1)
    lost = forfeited(bench)
    assert lost.sum() == 1 and points(bench)[lost][0] == FORFEIT_POINTS
    assert (points(bench)[~lost] == points(plain)[~lost]).all()
    assert reason in bench.results[0].faults[0].reason
    assert tiny.commands().count("ubgi") == 2  # killed or gone, then started again


def test_an_engine_that_cannot_start_is_a_clear_error(tiny):
    with pytest.raises(BgaiError, match="cannot run the engine 'no-such-engine-here"):
        bench_agent(engine="no-such-engine-here --x", opponents=["random"], games=1)
    with pytest.raises(BgaiError, match=r"did not start: the engine exited \(status 1\); it said: no network here"):
        bench_agent(engine=tiny("dead"), opponents=["random"], games=1)
    with pytest.raises(BgaiError, match="empty"):
        UbgiEngine("  ")


def test_bgai_ubgi_on_the_bench_against_bgai_scores_exactly_0():
    bench = bench_agent(engine=f"{sys.executable} -m bgai.frontends.cli ubgi", opponents=["bgai"], games=1, timeout=60)
    assert bench.agent.startswith("bgai ") and bench.results[0].summary()["forfeits"] == 0
    assert points(bench).sum() == 0  # it speaks v0.2 (proto 0.2 → go chequer) and plays as the bot does


# The command ------------------------------------------------------------------------------------------------------


def test_bgai_bench_agent_prints_the_figures_and_writes_the_record(tmp_path, capsys):
    (tmp_path / "my_agent_module.py").write_text(AGENT_FILE)
    record = tmp_path / "bench.json"
    argv = ["bench", "--agent", f"{tmp_path / 'my_agent_module.py'}:first", "--opponent", "random,heuristic",
            "--games", "2", "--quiet", "--json", str(record)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "first v random: 4 duplicate games" in out and "first v heuristic: 4 duplicate games" in out
    assert "  forfeits " not in out
    saved = json.loads(record.read_text())
    assert json.loads(out.splitlines()[-1]) == saved  # the last line is the record
    assert [o["opponent"] for o in saved["opponents"]] == ["random", "heuristic"]
    assert saved["command"].startswith("bgai bench --agent ")
    assert {"date", "commit", "machine"} <= saved.keys()


def test_bgai_bench_with_a_failing_agent_reports_its_forfeits(tmp_path, capsys):
    (tmp_path / "broken_agent.py").write_text("def play(position, dice, plays):\n    raise KeyError('oops')\n")
    argv = ["bench", "--agent", f"{tmp_path / 'broken_agent.py'}:play", "--opponent", "random", "--games", "3",
            "--quiet"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "forfeits         6 of 6 games, each scored -3" in captured.out
    assert captured.err.count("bgai bench: forfeit: game ") == 5 and "6 forfeits in all" in captured.err
    assert "raised KeyError: 'oops'" in captured.err


def test_bgai_bench_engine(tiny, capsys):
    assert main(["bench", "--engine", tiny("good"), "--opponent", "random", "--games", "1", "--quiet"]) == 0
    assert "tiny v random: 2 duplicate games" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--agent", "a:b", "--engine", "x"], "--agent or --engine, not both"),
    (["--agent", "nocolon"], "MODULE:CALLABLE"),
    (["--agent", "a:b", "--cube"], "cubeless"),
    (["--agent", "a:b", "--cube-plies", "2"], "cubeless"),
    (["--agent", "tests_no_such_module:f"], "cannot import the agent's module"),
    (["--engine", "no-such-engine-here"], "cannot run the engine"),
    (["--engine", "x", "--opponent", "random,nobody"], "unknown opponent 'nobody'"),
    (["--timeout", "3"], "--timeout is for --agent and --engine"),
    (["--agent", "a:b", "--games", "0"], "--games must be at least 1"),
])
def test_bgai_bench_bad_input_is_one_line_and_exit_status_2(capsys, argv, message):
    assert main(["bench", *argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bgai bench: error: ") and message in err and err.count("\n") == 1
