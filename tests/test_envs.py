"""The Gymnasium and PettingZoo environments (``bgai.envs``).

Given ``bgai/Backgammon-v0`` (one agent against a built-in opponent), its vector version and the two-agent
PettingZoo environment,
- the ecosystems' own checkers pass: Gymnasium's ``check_env``, PettingZoo's ``api_test`` and ``seed_test``;
- random games end with the result the rules give their final position (1, 2 or 3 points, from the right side),
  a thousand of them through the vector environment;
- action ``i`` is the ``i``-th legal play of ``Position.legal_moves``, the mask covers exactly the legal plays, and
  the observation is the encoder's inputs and the roll;
- an action outside the mask resigns a single game, in every environment;
- a seed replays the same games, and the single environment is the vector environment of one game;
- ``MAX_PLAYS`` is the most distinct plays any roll can have, computed again here.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import threading
import time
import warnings
from collections import Counter

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

import bgai.envs  # noqa: F401 (registers bgai/Backgammon-v0)
from bgai import Position
from bgai.core.errors import BgaiError, GameStateError, IllegalMoveError
from bgai.core.game import result_points
from bgai.core.movegen import afterstates, one_thread
from bgai.envs import MAX_PLAYS, BackgammonEnv, BackgammonVectorEnv, backgammon_v0
from bgai.envs.games import legal_plays
from bgai.envs.spaces import DICE_UNITS, observe
from bgai.envs.vector import MIN_BLOCK
from bgai.eval.encoding import encode, n_features
from bgai.players import RandomPlayer

F = n_features()  # the encoder's inputs at the front of an observation


def points_by_the_rules(final: np.ndarray) -> int:
    """The agent's points from a game's final position, seen from its side (checkers positive), by the rules: the
    side with no checker left won; 1 point, 2 if the loser bore off none (gammon), 3 if it also has a checker on
    the bar or in the winner's home board (backgammon)."""
    mine, theirs = int(final[final > 0].sum()), int(-final[final < 0].sum())
    assert (mine == 0) != (theirs == 0), "exactly one side has borne off every checker"
    if mine == 0:  # the agent won; the opponent's bar is index 0, the agent's home board points 1..6
        left, back, sign = theirs, final[0] < 0 or (final[1:7] < 0).any(), 1
    else:  # the opponent won; the agent's bar is index 25, the opponent's home board the agent's points 19..24
        left, back, sign = mine, final[25] > 0 or (final[19:25] > 0).any(), -1
    return sign * (1 if left < 15 else 3 if back else 2)


def random_actions(obs: dict, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action for each game of a batch."""
    counts = obs["action_mask"].sum(axis=1)
    return (rng.random(len(counts)) * counts).astype(np.int64)


# The ecosystems' checkers ----------------------------------------------------------------------------------------

def test_importing_the_environments_never_imports_torch():
    code = ("import sys, gymnasium, numpy as np, bgai.envs\n"
            "from bgai.envs import backgammon_v0\n"
            "env = gymnasium.make('bgai/Backgammon-v0', opponent='bgai')\n"
            "obs, info = env.reset(seed=0)\n"
            "env.step(0)\n"
            "backgammon_v0.env().reset(seed=0)\n"
            "envs = gymnasium.make_vec('bgai/Backgammon-v0', num_envs=4, opponent='pubeval')\n"
            "envs.reset(seed=0); envs.step(np.zeros(4, dtype=np.int64))\n"
            "print('torch' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "False"


def test_the_id_is_registered_for_make_and_make_vec():
    assert "bgai/Backgammon-v0" in gymnasium.registry
    env = gymnasium.make("bgai/Backgammon-v0", opponent="heuristic")
    assert isinstance(env.unwrapped, BackgammonEnv) and env.unwrapped.opponent.name == "heuristic"
    envs = gymnasium.make_vec("bgai/Backgammon-v0", num_envs=3)
    assert isinstance(envs.unwrapped, BackgammonVectorEnv) and envs.num_envs == 3
    obs, _ = envs.reset(seed=0)
    assert obs in envs.observation_space


def test_gymnasium_check_env_passes_without_a_warning():
    env = gymnasium.make("bgai/Backgammon-v0", opponent="pubeval", render_mode="ansi")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


def test_pettingzoo_api_test_passes():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(backgammon_v0.env(), num_cycles=300)
    # The warnings expected: api_test warns of a dict observation (``observation`` and ``action_mask``, the layout
    # PettingZoo's own classic games use) for every game but those on its list of its own, and of a mask of zeros,
    # which is what each agent observes once the game is over.
    expected = {"Observation is not a NumPy array",
                "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
                "Action mask numpy array is all zeros (no legal actions)."}
    assert {str(w.message) for w in caught} <= expected


def test_pettingzoo_seed_test_passes():
    seed_test(backgammon_v0.env, num_cycles=200)


# Whole games -----------------------------------------------------------------------------------------------------

def test_a_thousand_random_games_through_the_vector_env_end_with_the_rules_result():
    """Given 1,000 games of a random agent against a random opponent, stepped until each has ended once, then every
    reward is the rules' points of the game's final position, rewards come only at the end, every position has
    fifteen checkers a side or fewer, and the masks count the generator's plays."""
    n = 1000
    envs = BackgammonVectorEnv(n, "random")
    obs, info = envs.reset(seed=11)
    rng = np.random.default_rng(0)
    first = np.full(n, np.nan)  # each game's reward when it first ended
    most = 0
    for step in range(2000):
        boards, dice = info["board"], info["dice"]
        assert ((boards > 0) * boards).sum(axis=1).max() <= 15 and ((boards < 0) * -boards).sum(axis=1).max() <= 15
        assert np.array_equal(obs["observation"][:, :F], encode(boards))
        counts = obs["action_mask"].sum(axis=1)
        most = max(most, int(counts.max()))
        if step % 10 == 0:
            assert np.array_equal(counts, np.bincount(afterstates(boards, dice).owner, minlength=n))
        obs, rewards, terminated, truncated, info = envs.step(random_actions(obs, rng))
        assert not truncated.any() and not rewards[~terminated].any()
        ended = np.flatnonzero(terminated)
        if len(ended):
            final = info["final_info"]["board"]
            assert np.array_equal(info["_final_obs"], terminated)
            by_rules = [points_by_the_rules(final[i]) for i in ended]
            assert rewards[ended].tolist() == by_rules
            won = rewards[ended] > 0
            engine = np.where(won, result_points(-final[ended][:, ::-1]), -result_points(final[ended]))
            assert np.array_equal(engine, rewards[ended])
            fresh = ended[np.isnan(first[ended])]
            first[fresh] = rewards[fresh]
        if not np.isnan(first).any():
            break
    assert not np.isnan(first).any(), "some games never ended"
    assert set(Counter(first.tolist())) == {-3.0, -2.0, -1.0, 1.0, 2.0, 3.0}
    assert 0.4 < (first > 0).mean() < 0.6  # two random players
    assert most <= MAX_PLAYS


def play_single(env: BackgammonEnv, games: int, seed: int) -> list[tuple[float, np.ndarray]]:
    """(reward, final board) of ``games`` random games through the single environment."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    results = []
    while len(results) < games:
        assert obs in env.observation_space
        obs, reward, terminated, truncated, info = env.step(int(random_actions(
            {"action_mask": obs["action_mask"][None]}, rng)[0]))
        assert not truncated
        if terminated:
            results.append((reward, info["board"]))
            obs, info = env.reset()
        else:
            assert reward == 0
    return results


def test_random_games_through_the_single_env_end_with_the_rules_result():
    results = play_single(BackgammonEnv("random"), 120, seed=3)
    assert all(reward == points_by_the_rules(board) for reward, board in results)
    assert {abs(reward) for reward, _ in results} == {1, 2, 3}


def test_random_games_through_the_pettingzoo_env_end_with_the_rules_result():
    """Given random games between the two agents, then the winner gets the rules' points of the final position
    (seen from its side) and the loser minus them."""
    env = backgammon_v0.env()
    rng = np.random.default_rng(5)
    seen = Counter()
    for game in range(60):
        env.reset(seed=game)
        totals = Counter()
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            totals[agent] += reward
            if terminated:
                assert reward == points_by_the_rules(info["board"])
                assert np.array_equal(obs["observation"][:F], encode(info["board"])) and not obs["action_mask"].any()
                env.step(None)
            else:
                env.step(int(random_actions({"action_mask": obs["action_mask"][None]}, rng)[0]))
        assert totals["player_0"] == -totals["player_1"] != 0
        seen[abs(totals["player_0"])] += 1
    assert set(seen) == {1, 2, 3}


def test_gammons_and_backgammons_are_scored_for_and_against_the_agent():
    """Given six positions where the next play ends the game: the agent bears off its last checker against an
    opponent with a checker in its home board (backgammon), with none off (gammon) and with one off (single); or the
    opponent, with two checkers on its ace point, bears them off after any play of an agent with checkers on the bar
    (backgammon), with none off (gammon) and with one off (single). Then the rewards are +3 +2 +1 -3 -2 -1, in the
    single, vector and PettingZoo environments."""
    positions = [
        Position.from_points({1: 1}, {3: 1, 20: 14}),
        Position.from_points({1: 1}, {20: 15}),
        Position.from_points({1: 1}, {20: 14}),
        Position.from_points({"bar": 15}, {24: 2}),
        Position.from_points({10: 15}, {24: 2}),
        Position.from_points({10: 14}, {24: 2}),
    ]
    expected = [3, 2, 1, -3, -2, -1]
    envs = BackgammonVectorEnv(6, "pubeval")
    envs.reset(seed=0, options={"positions": positions})
    _, rewards, terminated, _, _ = envs.step(np.zeros(6, dtype=np.int64))
    assert rewards.tolist() == expected and terminated.all()
    for position, points in zip(positions, expected):
        env = BackgammonEnv("random")
        env.reset(seed=1, options={"position": position.position_id()})
        _, reward, terminated, _, info = env.step(0)
        assert (reward, terminated) == (points, True) and points_by_the_rules(info["board"]) == points
    aec = backgammon_v0.env()
    for position, points in zip(positions[:3], expected):
        aec.reset(seed=2, options={"position": position, "agent": "player_1"})
        aec.step(0)
        assert aec.rewards == {"player_1": points, "player_0": -points}


# Actions, masks and observations -------------------------------------------------------------------------------

def test_action_i_is_the_ith_legal_play_of_the_position():
    """Given the agent's first roll in a few games, then the plays in info are ``Position.legal_moves`` in its
    order, the afterstate boards and encodings are those plays', and the mask has a one for each of them."""
    env = BackgammonEnv("heuristic", afterstates=True)
    for seed in range(5):
        obs, info = env.reset(seed=seed)
        moves = Position(info["board"]).legal_moves(tuple(info["dice"]))
        assert list(info["plays"]) == [str(m) for m in moves]
        assert np.array_equal(info["afterstate_boards"], np.stack([m.after.board for m in moves]))
        assert np.array_equal(info["afterstates"], encode(info["afterstate_boards"]))
        assert obs["action_mask"].dtype == np.int8 and obs["action_mask"][:len(moves)].all()
        assert obs["action_mask"].sum() == len(moves)
        i = len(moves) - 1
        _, _, terminated, _, after = env.step(i)
        assert not terminated
        # Then play i was played, and the opponent replied with a legal play of some roll.
        rolls = np.array([(a, b) for a in range(1, 7) for b in range(a, 7)])
        replies = afterstates(np.repeat(moves[i].after.board[None], len(rolls), axis=0), rolls)
        assert (replies.after == after["board"]).all(axis=1).any()


def test_the_observation_is_the_encoders_inputs_then_the_dice():
    boards = np.stack([Position.start().board] * 3)
    dice = np.array([[6, 5], [3, 3], [0, 0]])
    obs = observe(boards, dice, np.array([7, 73, 0]))
    x = obs["observation"]
    assert x.shape == (3, F + DICE_UNITS) and x.dtype == np.float32
    assert np.array_equal(x[:, :F], encode(boards))
    units = x[:, F:]
    assert np.flatnonzero(units[0]).tolist() == [5, 6 + 4]  # the 6, then the 5
    assert np.flatnonzero(units[1]).tolist() == [2, 6 + 2] and not units[2].any()
    assert obs["action_mask"].sum(axis=1).tolist() == [7, 73, 0]


def test_every_input_stays_in_the_observation_space_at_the_extremes():
    """Given the positions at the ends of each input's range (fifteen checkers on a bar, on a point, in a race),
    then every observation is inside the declared bounds."""
    extremes = [
        Position.from_points({"bar": 15}, {1: 1}),
        Position.from_points({1: 1}, {"bar": 15}),
        Position.from_points({24: 15}, {1: 15}),
        Position.from_points({1: 15}, {24: 15}),
        Position.from_points({6: 15}, {"bar": 15}),
    ]
    boards = np.stack([p.board for p in extremes])
    for encoder in (0, 1, 2, 3):
        space = BackgammonEnv(encoder=encoder).observation_space
        obs = observe(boards, np.array([[6, 6]] * len(boards)), np.ones(len(boards)), encoder)
        assert space["observation"].shape == (n_features(encoder) + DICE_UNITS,)
        assert all({k: v[i] for k, v in obs.items()} in space for i in range(len(boards)))


@pytest.mark.parametrize("action", ["count", -1, MAX_PLAYS, 10**9])
def test_an_action_outside_the_mask_resigns_a_single_game(action):
    env = BackgammonEnv("pubeval", afterstates=True)
    obs, info = env.reset(seed=4)
    a = int(obs["action_mask"].sum()) if action == "count" else action
    _, reward, terminated, truncated, after = env.step(a)
    assert (reward, terminated, truncated, after["illegal_action"]) == (-1.0, True, False, True)
    assert np.array_equal(after["board"], info["board"]) and len(after["plays"]) == 0
    with pytest.raises(GameStateError):
        env.step(0)
    obs, info = env.reset()
    assert not info["illegal_action"] and obs["action_mask"].any()


def test_an_action_outside_the_mask_resigns_only_its_game_in_the_vector_env():
    envs = BackgammonVectorEnv(4, "random")
    obs, info = envs.reset(seed=9)
    counts = obs["action_mask"].sum(axis=1)
    _, rewards, terminated, _, after = envs.step(np.array([0, counts[1], -5, 0]))
    assert after["illegal_action"].tolist() == [False, True, True, False]
    assert rewards[1:3].tolist() == [-1, -1] and terminated[1:3].all() and not terminated[[0, 3]].any()
    assert np.array_equal(after["final_info"]["board"][1:3], info["board"][1:3])


def test_an_action_outside_the_mask_resigns_in_the_pettingzoo_env():
    env = backgammon_v0.env()
    env.reset(seed=3)
    mover = env.agent_selection
    other = next(a for a in env.agents if a != mover)
    board = env.infos[mover]["board"]
    env.step(MAX_PLAYS - 1)
    assert env.rewards == {mover: -1, other: 1} and all(env.terminations.values())
    assert env.infos[mover]["illegal_action"] and not env.infos[other]["illegal_action"]
    # Then each agent observes the position as it stood, from its own side.
    assert np.array_equal(env.infos[mover]["board"], board)
    assert np.array_equal(env.observe(mover)["observation"][:F], encode(board))
    assert np.array_equal(env.observe(other)["observation"][:F], encode(-board[::-1]))


def test_only_the_agent_on_roll_has_a_roll_and_a_mask_in_the_pettingzoo_env():
    env = backgammon_v0.env(afterstates=True)
    env.reset(seed=8)
    mover = env.agent_selection
    other = next(a for a in env.agents if a != mover)
    mine, theirs = env.observe(mover), env.observe(other)
    assert mine["action_mask"].any() and mine["observation"][F:].sum() == 2
    assert not theirs["action_mask"].any() and not theirs["observation"][F:].any()
    # the waiting agent sees the same position from its own side
    board = env.unwrapped.infos[mover]["board"]
    assert np.array_equal(theirs["observation"][:F], encode(-board[::-1]))
    assert env.infos[other] == {} and len(env.infos[mover]["plays"]) == mine["action_mask"].sum()


def test_non_integer_actions_are_refused():
    env = BackgammonEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step(0.5)


# Seeds ---------------------------------------------------------------------------------------------------------

def test_a_seed_replays_the_same_games():
    one, two, other = BackgammonEnv("random"), BackgammonEnv("random"), BackgammonEnv("random")
    a = play_single(one, 3, seed=21)
    b = play_single(two, 3, seed=21)
    c = play_single(other, 3, seed=22)
    assert all(ra == rb and np.array_equal(ba, bb) for (ra, ba), (rb, bb) in zip(a, b))
    assert not all(np.array_equal(ba, bc) for (_, ba), (_, bc) in zip(a, c))
    envs = [BackgammonVectorEnv(16, "random") for _ in range(2)]
    runs = []
    for env in envs:
        rng = np.random.default_rng(1)
        obs, _ = env.reset(seed=5)
        trace = []
        for _ in range(60):
            obs, rewards, *_ = env.step(random_actions(obs, rng))
            trace.append((obs["observation"].copy(), rewards))
        runs.append(trace)
    assert all(np.array_equal(x, y) and np.array_equal(r, s) for (x, r), (y, s) in zip(*runs))


def test_the_single_env_is_the_vector_env_of_one_game():
    """Given the same seed and actions, then the single environment and a vector environment of one game see the
    same observations and rewards, across the ends of games (where one calls reset and the other restarts)."""
    single, vector = BackgammonEnv("random"), BackgammonVectorEnv(1, "random")
    rng = np.random.default_rng(2)
    obs, _ = single.reset(seed=13)
    vobs, _ = vector.reset(seed=13)
    ended = 0
    for _ in range(250):
        assert np.array_equal(obs["observation"], vobs["observation"][0])
        assert np.array_equal(obs["action_mask"], vobs["action_mask"][0])
        action = random_actions({"action_mask": obs["action_mask"][None]}, rng)
        obs, reward, terminated, _, _ = single.step(int(action[0]))
        vobs, rewards, terminations, _, _ = vector.step(action)
        assert (reward, terminated) == (rewards[0], terminations[0])
        if terminated:
            ended += 1
            obs, _ = single.reset()
    assert ended >= 3


def run_vector(envs: BackgammonVectorEnv, seed: int, steps: int) -> list[tuple[np.ndarray, ...]]:
    """(observation, mask, rewards, terminations) of ``steps`` random steps from ``reset(seed=seed)``."""
    rng = np.random.default_rng(seed)
    obs, _ = envs.reset(seed=seed)
    trace = []
    for _ in range(steps):
        obs, rewards, terminated, _, _ = envs.step(random_actions(obs, rng))
        trace.append((obs["observation"], obs["action_mask"], rewards, terminated))
    return trace


@pytest.mark.parametrize("opponent, steps", [("pubeval", 40), ("bgai", 40)])
def test_blocks_of_games_on_threads_play_the_games_of_one_thread(opponent, steps):
    """Given three blocks of games and a built-in opponent (or the shipped bot, which threads may share), then
    stepping the blocks on parallel threads gives every game the observations, masks and rewards of stepping them
    one after another."""
    n = 3 * MIN_BLOCK + 7
    envs = BackgammonVectorEnv(n, opponent, blocks=3)
    assert envs.opponent.threadsafe
    parallel = run_vector(envs, seed=21, steps=steps)
    with one_thread():
        serial = run_vector(BackgammonVectorEnv(n, opponent, blocks=3), seed=21, steps=steps)
    assert sum(int(t.sum()) for *_, t in serial) > 0  # games ended and restarted on the way
    for a, b in zip(parallel, serial):
        assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_a_callers_player_is_never_called_from_two_threads_at_once():
    """Given a player of the caller's own (bgai cannot know it is safe on threads) and several blocks of games, then
    no two of its calls overlap, and each sees no more than a block's games."""
    inside = threading.Lock()
    sizes = []

    class Careful(RandomPlayer):
        def choose(self, boards, after, owner, rng, dice=None):
            assert inside.acquire(blocking=False), "called from two threads at once"
            try:
                sizes.append(len(boards))
                time.sleep(0.001)
                return super().choose(boards, after, owner, rng, dice)
            finally:
                inside.release()

    run_vector(BackgammonVectorEnv(3 * MIN_BLOCK, Careful(), blocks=3), seed=4, steps=5)
    assert sizes and max(sizes) <= MIN_BLOCK


def test_a_policy_that_raises_in_one_block_leaves_every_game_as_it_was():
    """Given two blocks and a policy that raises on its second call (the second block's replies), then the step
    raises, and every game (the first block's too) is where it was: the same step again, with a policy that
    answers, plays as if the failed one had never been tried."""
    calls = []  # the calls since the policy was armed (after the resets, whose opening replies call it too)

    def flaky(observations, info):
        calls.append(len(observations["observation"]))
        if len(calls) == 3:
            raise IllegalMoveError("the second call fails")
        return np.zeros(len(observations["observation"]), dtype=np.int64)

    def steady(observations, info):
        return np.zeros(len(observations["observation"]), dtype=np.int64)

    n = 2 * MIN_BLOCK
    tried, clean = BackgammonVectorEnv(n, flaky), BackgammonVectorEnv(n, steady)
    tried.reset(seed=3)
    obs, _ = clean.reset(seed=3)
    calls[:] = [0]  # armed: the step's second call is the third
    actions = np.zeros(n, dtype=np.int64)
    with pytest.raises(IllegalMoveError, match="second call"):
        tried.step(actions)
    tried.opponent = clean.opponent
    for games in tried._shards:
        games.opponent = clean.opponent
    a, b = tried.step(actions), clean.step(actions)
    assert np.array_equal(a[0]["observation"], b[0]["observation"]) and np.array_equal(a[1], b[1])


def test_the_blocks_are_checked():
    for blocks in (0, 1.5, True, "2"):
        with pytest.raises(ValueError, match="blocks"):
            BackgammonVectorEnv(600, "random", blocks=blocks)


def test_the_plays_of_every_block_are_numbered_across_the_blocks():
    n = 2 * MIN_BLOCK + 5
    envs = BackgammonVectorEnv(n, "random", afterstates=True)
    obs, info = envs.reset(seed=8)
    for _ in range(3):
        obs, *_, info = envs.step(np.zeros(n, dtype=np.int64))
    counts = obs["action_mask"].sum(axis=1)
    assert np.array_equal(np.bincount(info["afterstate_env"], minlength=n), counts)
    moves = afterstates(info["board"], info["dice"])
    assert np.array_equal(info["afterstate_boards"], moves.after)
    assert np.array_equal(info["afterstate_env"], moves.owner)
    last = n - 1
    assert list(info["plays"][last]) == [str(m) for m in Position(info["board"][last]).legal_moves(
        tuple(info["dice"][last]))]


# Opponents -------------------------------------------------------------------------------------------------------

def test_opponents_by_name_player_and_policy():
    for name in ("random", "heuristic", "pubeval", "bgai"):
        env = gymnasium.make("bgai/Backgammon-v0", opponent=name)
        env.reset(seed=0)
        env.step(0)
    deep = BackgammonEnv("bgai", plies=1)
    assert deep.opponent.name.endswith("@1ply")
    deep.reset(seed=0)
    deep.step(0)
    assert BackgammonEnv(RandomPlayer()).opponent.name == "random"

    seen = []

    def last_play(observation, info):
        seen.append((observation, info))
        return len(info["plays"]) - 1

    env = BackgammonEnv(last_play)
    env.reset(seed=6)
    for _ in range(3):
        env.step(0)
    observation, info = seen[-1]
    assert observation in env.observation_space and len(info["plays"]) == observation["action_mask"].sum()

    batches = []

    def first_plays(observations, info):
        batches.append(len(observations["observation"]))
        assert len(info["afterstate_env"]) == observations["action_mask"].sum()
        return np.zeros(len(observations["observation"]), dtype=np.int64)

    envs = BackgammonVectorEnv(8, first_plays)
    envs.reset(seed=0)
    envs.step(np.zeros(8, dtype=np.int64))
    assert batches and max(batches) > 1


def test_bad_opponents_are_refused():
    with pytest.raises(BgaiError, match="unknown opponent"):
        BackgammonEnv("gnubg-2ply")
    with pytest.raises(BgaiError, match="plies"):
        BackgammonEnv("pubeval", plies=1)
    env = BackgammonEnv(lambda observation, info: MAX_PLAYS)
    with pytest.raises(IllegalMoveError, match="legal plays"):
        env.reset(seed=0)
        for _ in range(3):
            env.step(0)


# Info, rendering -------------------------------------------------------------------------------------------------

def test_the_vector_env_gives_every_games_plays_on_request():
    envs = BackgammonVectorEnv(5, "random", afterstates=True)
    obs, info = envs.reset(seed=3)
    counts = obs["action_mask"].sum(axis=1)
    assert np.array_equal(np.bincount(info["afterstate_env"], minlength=5), counts)
    assert np.array_equal(info["afterstates"], encode(info["afterstate_boards"]))
    assert [len(p) for p in info["plays"]] == counts.tolist()
    for i in range(5):
        moves = Position(info["board"][i]).legal_moves(tuple(info["dice"][i]))
        assert list(info["plays"][i]) == [str(m) for m in moves]


def test_render_shows_the_board_and_the_roll():
    env = BackgammonEnv("pubeval", render_mode="ansi")
    _, info = env.reset(seed=0)
    text = env.render()
    assert "agent (X)" in text and f"{info['dice'][0]}-{info['dice'][1]}" in text


# The bound on the plays ----------------------------------------------------------------------------------------

def _undominated(items):
    """The (checkers, counts) pairs no other pair beats: no more checkers and at least the same counts."""
    items = sorted(items, key=lambda item: (item[0], [-c for c in item[1]]))
    kept = []
    for placed, counts in items:
        if not any(p <= placed and all(x >= y for x, y in zip(c, counts)) for p, c in kept):
            kept.append((placed, counts))
    return kept


@functools.cache
def _chains(steps: int = 4, checkers: int = 15) -> dict[int, list]:
    """For a chain of each length 1..25 (its points ``d`` apart, taken from its highest point down), the undominated
    pairs (checkers placed on it, the number of step counts ``f`` on it with each total 0..steps) over every
    placement, where ``f[p] <= s[p] + f[p + d]``: a point's checkers leave only if they stood or arrived there."""
    tables = {}
    states = [(0, {(0, 0): 1})]  # (checkers placed, {(steps used, steps into the next point): ways})
    for length in range(1, 26):
        grown = []
        for placed, ways in states:
            for s in range(min(steps, checkers - placed) + 1):  # more than `steps` checkers never add a play
                nxt: Counter = Counter()
                for (used, inflow), w in ways.items():
                    for out in range(min(s + inflow, steps - used) + 1):
                        nxt[used + out, out] += w
                grown.append((placed + s, nxt))
        keys = sorted({k for _, ways in grown for k in ways})
        vectors = {}
        for placed, ways in grown:
            vectors.setdefault((placed, tuple(ways.get(k, 0) for k in keys)), ways)
        states = [(placed, vectors[placed, counts]) for placed, counts in _undominated(list(vectors))]
        tables[length] = _undominated([(placed, tuple(sum(w for (u, _), w in ways.items() if u == k)
                                                      for k in range(steps + 1))) for placed, ways in states])
    return tables


def most_double_plays(die: int, steps: int = 4, checkers: int = 15) -> int:
    """The most step counts of ``steps`` steps of a double of ``die`` that fifteen checkers allow, ignoring every
    other rule: an upper bound on the distinct plays (see ``bgai.envs.spaces``)."""
    lengths = [len(range(top, 0, -die)) for top in range(25, 25 - die, -1)]
    combined = [(0, (1,) + (0,) * steps)]
    for length in lengths:
        pairs = set()
        for placed, counts in combined:
            for more, chain in _chains(steps, checkers)[length]:
                if placed + more <= checkers:
                    pairs.add((placed + more, tuple(sum(counts[i] * chain[k - i] for i in range(k + 1))
                                                    for k in range(steps + 1))))
        combined = _undominated(pairs)
    return max(counts[steps] for _, counts in combined)


def test_max_plays_is_the_most_plays_a_roll_can_have():
    """Given the argument of ``bgai.envs.spaces`` (a non-double has at most 25 x 25 plays; a double's plays are
    step counts that fifteen checkers must supply), when the most step counts are computed for each die, then the
    largest is ``MAX_PLAYS``; and a position the tests know comes close to it."""
    assert 25 * 25 < MAX_PLAYS
    most = {die: most_double_plays(die) for die in range(1, 7)}
    assert max(most.values()) == most[1] == MAX_PLAYS
    assert max(most_double_plays(die, steps=k) for die in range(1, 7) for k in range(4)) < MAX_PLAYS  # fewer steps
    # Fifteen checkers spread over points 3..24, none of the opponent's in the way: 2,226 plays of 1-1.
    board = np.zeros(26, dtype=np.int8)
    board[[3, 4, 6, 7, 9, 10, 12, 13, 15, 16, 18, 19, 21, 23, 24]] = 1
    board[0] = -15
    plays = legal_plays(board[None], np.array([[1, 1]]))
    assert plays.counts[0] == 2226 <= MAX_PLAYS
    assert observe(board[None], np.array([[1, 1]]), plays.counts)["action_mask"].sum() == 2226


# What other libraries ask of an environment ----------------------------------------------------------------------

def test_the_infos_keep_one_shape_unless_the_plays_are_asked_for():
    """Given the default environments, then every info holds the same keys and shapes at every step (what a
    vectorizer stacks); with ``afterstates=True`` the plays come too."""
    env = BackgammonEnv("random")
    obs, info = env.reset(seed=3)
    shapes = {key: np.shape(value) for key, value in info.items()}
    assert set(shapes) == {"board", "dice", "illegal_action"}
    for _ in range(40):
        obs, _, terminated, _, info = env.step(0)
        assert {key: np.shape(value) for key, value in info.items()} == shapes
        if terminated:
            obs, info = env.reset()
    aec = backgammon_v0.env()
    aec.reset(seed=1)
    assert set(aec.infos[aec.agent_selection]) == {"board", "dice", "illegal_action"}
    assert {"plays", "afterstates", "afterstate_boards"} <= set(BackgammonEnv(afterstates=True).reset(seed=0)[1])


def test_gymnasiums_own_vectorizers_and_wrappers_run_the_registered_env():
    """Given Gymnasium's ``make_vec`` in its sync and async modes, with its documented wrappers, then a hundred
    steps run and the episode statistics add up to the rewards."""
    for mode in ("sync", "async"):
        envs = gymnasium.make_vec("bgai/Backgammon-v0", num_envs=2, vectorization_mode=mode)
        envs = gymnasium.wrappers.vector.RecordEpisodeStatistics(envs)
        obs, _ = envs.reset(seed=0)
        total, seen = np.zeros(2), []
        for _ in range(100):
            actions = random_actions(obs, np.random.default_rng(len(seen)))
            obs, rewards, terminated, _, info = envs.step(actions)
            total += rewards
            if "episode" in info:
                seen.extend(info["episode"]["r"][info["_episode"]].tolist())
        envs.close()
        assert seen and all(abs(r) in (1, 2, 3) for r in seen), mode


def test_next_step_autoreset_returns_the_last_observation_then_starts_the_next_game():
    """Given ``autoreset_mode="next_step"``, then a game that ends returns its final observation (an empty mask),
    and the step after ignores its action, gives it no reward and starts its next game; Gymnasium's observation
    wrappers, which refuse same-step autoreset, run on it."""
    envs = gymnasium.make_vec("bgai/Backgammon-v0", num_envs=8, autoreset_mode="next_step")
    assert envs.metadata["autoreset_mode"] is gymnasium.vector.AutoresetMode.NEXT_STEP
    rng = np.random.default_rng(0)
    obs, _ = envs.reset(seed=5)
    ended = np.zeros(8, dtype=bool)
    restarts = 0
    for _ in range(200):
        actions = random_actions(obs, rng)
        obs, rewards, terminated, _, info = envs.step(actions)
        assert "final_obs" not in info
        assert np.all(rewards[ended] == 0) and not terminated[ended].any()  # the step after an end
        assert np.all(obs["action_mask"][ended].sum(axis=1) > 0)  # the next game has begun
        restarts += int(ended.sum())
        assert np.all(np.isin(np.abs(rewards[terminated]), [1, 2, 3]))
        assert not obs["action_mask"][terminated].any()  # the ended game's last observation
        ended = terminated
    assert restarts >= 8
    for wrapper, kind in ((gymnasium.wrappers.vector.FlattenObservation, "dict"),
                          (gymnasium.wrappers.vector.NormalizeObservation, "box")):
        wrapped = wrapper(gymnasium.make_vec("bgai/Backgammon-v0", num_envs=4, autoreset_mode="next_step",
                                             observation=kind))
        wrapped.reset(seed=1)
        for _ in range(60):
            wrapped.step(np.zeros(4, dtype=np.int64))  # (action 0 is always legal; ignored after an end)
    with pytest.raises(ValueError, match="autoreset_mode"):
        BackgammonVectorEnv(2, autoreset_mode="sometimes")


def test_a_list_of_seeds_seeds_the_games_together():
    envs = BackgammonVectorEnv(3)
    first = envs.reset(seed=[1, 2, 3])[0]["observation"]
    assert np.array_equal(envs.reset(seed=[1, 2, 3])[0]["observation"], first)
    with pytest.raises(ValueError, match="one for each"):
        envs.reset(seed=[1, 2])


def test_box_observations_and_action_masks_carry_what_the_dict_does():
    """Given ``observation="box"``, then each environment's observation is the dict's ``observation`` array alone, in a
    plain Box, and ``action_masks()`` is the dict's mask as booleans, in the single, vector and self-play
    environments."""
    as_dict, as_box = BackgammonEnv("pubeval"), BackgammonEnv("pubeval", observation="box")
    assert isinstance(as_box.observation_space, gymnasium.spaces.Box)
    d, _ = as_dict.reset(seed=2)
    b, _ = as_box.reset(seed=2)
    for _ in range(30):
        assert np.array_equal(d["observation"], b) and b in as_box.observation_space
        assert np.array_equal(as_dict.action_masks(), d["action_mask"] == 1)
        assert np.array_equal(as_box.action_masks(), as_dict.action_masks())
        d, _, over, _, _ = as_dict.step(0)
        b, _, _, _, _ = as_box.step(0)
        if over:
            assert not as_dict.action_masks().any()
            d, _ = as_dict.reset()
            b, _ = as_box.reset()
    vd, vb = BackgammonVectorEnv(4), BackgammonVectorEnv(4, observation="box")
    od, ob = vd.reset(seed=1)[0], vb.reset(seed=1)[0]
    assert np.array_equal(od["observation"], ob) and np.array_equal(vd.action_masks(), od["action_mask"] == 1)
    with pytest.raises(ValueError, match="observation must be"):
        BackgammonEnv(observation="image")


def test_every_render_mode_draws_the_position():
    """Given each render mode, then "ansi" returns the board as text, "human" prints it at every step, and
    "rgb_array" returns a picture in which the player's and the opponent's checkers appear."""
    from bgai.envs.render import HEIGHT, WIDTH, board_image

    env = BackgammonEnv("random", render_mode="rgb_array")
    env.reset(seed=0)
    image = env.render()
    assert image.shape == (HEIGHT, WIDTH, 3) and image.dtype == np.uint8
    colours = {tuple(c) for c in image.reshape(-1, 3)}
    assert (245, 245, 240) in colours and (30, 30, 35) in colours
    empty = np.zeros(26, dtype=np.int8)
    assert not np.array_equal(board_image(Position.start().board), board_image(empty))
    with pytest.raises(ValueError):
        board_image(np.zeros(25))
    aec = backgammon_v0.env(render_mode="rgb_array")
    aec.reset(seed=0)
    assert aec.render().shape == (HEIGHT, WIDTH, 3)


def test_human_rendering_prints_the_board(capsys):
    env = BackgammonEnv("random", render_mode="human")
    env.reset(seed=0)
    env.step(0)
    assert capsys.readouterr().out.count("BAR") == 2  # the reset's board and the step's
    aec = backgammon_v0.env(render_mode="human")
    aec.reset(seed=0)
    assert aec.render() is None and "to play" in capsys.readouterr().out


def test_the_pettingzoo_env_is_registered_and_takes_numpy_actions():
    """Given ``pettingzoo.make("aec", "bgai/backgammon-v0")``, then it is the environment, and a numpy integer, a
    0-d array among them (what ``model.predict`` returns), is an action like a Python integer."""
    import pettingzoo

    env = pettingzoo.make("aec", bgai.envs.AEC_ID)
    env.reset(seed=2)
    mover = env.agent_selection
    env.step(np.array(0))
    assert env.agent_selection != mover
    env.step(np.int64(0))
    assert env.agent_selection == mover
    with pytest.raises(TypeError):
        env.step(np.array([0.5]))


def test_self_play_credits_the_learner_its_losses_from_both_seats():
    """Given ``SelfPlayEnv`` with the learner playing its first legal play against a random opponent, then the
    learner swaps seats every game, its reward is the game's points for it (losses included, though the game
    ends on the winner's play) and the opponent's seat never asks the learner to act."""
    from bgai.envs.backgammon_v0 import SelfPlayEnv

    env = SelfPlayEnv()
    seats, rewards = [], []
    env.reset(seed=4)
    for game in range(40):
        if game:
            env.reset()
        seats.append(env.learner)
        over = False
        while not over:
            assert env.game.agent_selection == env.learner and env.action_masks().any()
            _, reward, over, _, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        rewards.append(reward)
        assert reward == points_by_the_rules(info["board"])
    assert seats[:4] == ["player_0", "player_1", "player_0", "player_1"]
    assert min(rewards) < 0 < max(rewards)
    env.opponent = lambda obs: 10**6
    with pytest.raises(IllegalMoveError):
        for _ in range(3):
            env.reset()


def test_an_env_policy_benches_as_an_agent_in_one_line():
    """Given a policy of the environment's observations (its last legal play), then ``policy_agent`` makes a bench
    agent of it that plays the same plays as in the environment, and the bench plays it without a fault."""
    from bgai.envs import policy_agent
    from bgai.play.agents import bench_agent

    def last(obs):
        return int(obs["action_mask"].sum()) - 1

    agent = policy_agent(last)
    position = Position.start()
    plays = position.legal_moves((6, 5))
    assert agent(position, (5, 6), plays) == len(plays) - 1
    box = policy_agent(lambda obs: int(obs.shape == (F + DICE_UNITS,)), observation="box")
    assert box(position, (6, 5), plays) == 1
    bench = bench_agent(agent, ["random"], games=4, seed=1)
    (result,) = bench.results
    assert result.opponent == "random" and not result.faults and result.summary()["games"] == 8


# Checker steps as actions ----------------------------------------------------------------------------------------

def random_game_boards(n: int, seed: int) -> np.ndarray:
    """Positions of random games, on roll, both sides still in the game (bear-offs among them)."""
    rng = np.random.default_rng(seed)
    boards = np.repeat(Position.start().board[None], n, axis=0)
    kept = []
    for ply in range(80):
        plays = legal_plays(boards, rng.integers(1, 7, (n, 2)).astype(np.int8))
        pick = plays.starts + (rng.random(n) * plays.counts).astype(np.int64)
        after = plays.after[pick]
        live = (after > 0).any(axis=1) & (after < 0).any(axis=1)
        boards = np.where(live[:, None], after, boards)
        if ply % 10 == 9:
            kept.append(boards.copy())
    return np.concatenate(kept)


def test_each_legal_play_is_one_sequence_of_checker_steps():
    """Given positions of random games (bear-offs too) and rolls, then each legal play's step actions, replayed on
    the board one checker at a time (from the point, by the die, borne off past the last point), make exactly that
    play's afterstate; no two plays share a sequence; and a roll that cannot be played is the one pass, action 0."""
    from bgai.core.movegen import OPP_BAR, switch
    from bgai.envs.steps import step_labels

    boards = random_game_boards(60, seed=2)
    dice = np.random.default_rng(3).integers(1, 7, (len(boards), 2)).astype(np.int8)
    dice = np.sort(dice, axis=1)[:, ::-1].copy()
    plays = legal_plays(boards, dice, steps=True)
    labels = step_labels(plays, dice)
    passes = 0
    for g in range(len(boards)):
        rows = range(plays.starts[g], plays.starts[g] + plays.counts[g])
        assert len({tuple(labels[r]) for r in rows}) == len(rows)
        for r in rows:
            board = boards[g].copy()
            if labels[r, 0] == 0:
                passes += 1
                assert len(rows) == 1 and (labels[r, 1:] == -1).all()
            for action in labels[r][labels[r] > 0]:
                point, die = divmod(int(action), 6)
                die += 1
                assert die in dice[g]
                target = max(point - die, 0)
                assert board[point] > 0
                board[point] -= 1
                if target:
                    if board[target] == -1:
                        board[target], board[OPP_BAR] = 0, board[OPP_BAR] - 1
                    board[target] += 1
            assert np.array_equal(switch(board), plays.after[r])
    assert passes > 0


def test_step_actions_play_whole_games_to_the_rules_result():
    """Given random legal steps in 64 games at once against pubeval, then every game ends with the points the rules
    give its final position, every live game always has a legal step, and the observation counts the steps left."""
    envs = BackgammonVectorEnv(64, "pubeval", action="steps")
    assert envs.single_action_space.n == 156 and envs.single_observation_space["observation"].shape == (F + 16,)
    rng = np.random.default_rng(1)
    obs, _ = envs.reset(seed=2)
    results = []
    for _ in range(600):
        masks = obs["action_mask"]
        left = obs["observation"][:, -4:]
        assert (masks.sum(axis=1) > 0).all() and np.array_equal(left.sum(axis=1), np.ones(64))
        choice = (rng.random(64) * masks.sum(axis=1)).astype(int)
        actions = np.array([np.flatnonzero(m)[c] for m, c in zip(masks, choice)])
        obs, rewards, terminated, _, info = envs.step(actions)
        for i in np.flatnonzero(terminated):
            results.append(rewards[i])
            assert rewards[i] == points_by_the_rules(info["final_info"]["board"][i])
    assert len(results) >= 30 and set(results) <= {-3, -2, -1, 1, 2, 3}


def test_a_step_shows_the_position_so_far_and_the_dice_left():
    """Given the opening 6-5 played as 24/18 then 18/13, then after the first step the board has moved one checker,
    the 5 is the one die left, one step is left, and only steps of the 5 are allowed; the second completes the play
    and the opponent is on roll again (the agent at its next roll)."""
    env = BackgammonEnv("random", action="steps")
    obs, info = env.reset(options={"position": Position.start()}, seed=0)
    while tuple(info["dice"]) != (6, 5):
        obs, info = env.reset(options={"position": Position.start()})
    assert obs["action_mask"][6 * 24 + 5]
    obs, _, _, _, info = env.step(6 * 24 + 5)  # 24/18
    assert info["board"][24] == 1 and info["board"][18] == 1 and info["dice"].tolist() == [5, 0]
    assert obs["observation"][-4:].tolist() == [1, 0, 0, 0]
    allowed = np.flatnonzero(obs["action_mask"])
    assert len(allowed) and all(a % 6 + 1 == 5 for a in allowed) and 6 * 18 + 4 in allowed
    obs, reward, terminated, _, info = env.step(6 * 18 + 4)  # 18/13
    assert not terminated and info["board"][24] == 1 and info["board"][13] == 6  # before the reply: 13 has 6
    check_env(BackgammonEnv("random", action="steps"), skip_render_check=True)


def test_the_single_step_env_is_the_vector_step_env_of_one_game():
    single = BackgammonEnv("random", action="steps")
    vector = BackgammonVectorEnv(1, "random", action="steps")
    rng = np.random.default_rng(4)
    obs, _ = single.reset(seed=9)
    vobs, _ = vector.reset(seed=9)
    ended = 0
    for _ in range(300):
        assert np.array_equal(obs["observation"], vobs["observation"][0])
        assert np.array_equal(obs["action_mask"], vobs["action_mask"][0])
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, terminated, _, _ = single.step(action)
        vobs, rewards, terminations, _, _ = vector.step(np.array([action]))
        assert (reward, terminated) == (rewards[0], terminations[0])
        if terminated:
            ended += 1
            obs, _ = single.reset()
    assert ended >= 2


def test_a_step_policy_benches_as_an_agent():
    from bgai.envs import policy_agent

    highest = policy_agent(lambda obs: int(np.flatnonzero(obs["action_mask"])[-1]), action="steps")
    position = Position.start()
    plays = position.legal_moves((6, 5))
    assert str(plays[highest(position, (6, 5), plays)]) == "24/13"
    with pytest.raises(IllegalMoveError):
        policy_agent(lambda obs: 155, action="steps")(position, (6, 5), plays)
