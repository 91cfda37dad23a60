"""Other people's training libraries on bgai's environments, each as its own docs write it, on a tiny budget.

Given the ``rl`` extra (Stable-Baselines3, sb3-contrib, Tianshou; the tests skip where it is absent),
- sb3-contrib's ``MaskablePPO`` learns, predicts with ``get_action_masks``, evaluates, saves and loads on
  ``gymnasium.make("bgai/Backgammon-v0")`` with its ``MultiInputPolicy``, and with ``MlpPolicy`` on box observations;
- SB3's ``make_vec_env`` of the registered id, and bgai's own SB3 ``VecEnv`` over the batched games
  (``bgai.envs.sb3``): terminal observations where games end, masks from ``env_method``, the same games as the
  Gymnasium vector environment for the same seed;
- self-play through ``SelfPlayEnv`` with the model as its own opponent;
- Tianshou 2's multi-agent pattern: ``PettingZooEnv`` of the AEC environment, a DQN against a random masked player,
  a collector and one short epoch of training.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
import gymnasium  # noqa: E402
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.evaluation import evaluate_policy  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks  # noqa: E402
from stable_baselines3.common.env_checker import check_env  # noqa: E402
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

import bgai.envs  # noqa: E402, F401 (registers the ids)
from bgai.envs import MAX_PLAYS, BackgammonVectorEnv  # noqa: E402
from bgai.envs.backgammon_v0 import SelfPlayEnv  # noqa: E402
from bgai.envs.sb3 import BackgammonVecEnv  # noqa: E402

ID = "bgai/Backgammon-v0"


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_maskable_ppo_on_the_registered_env_as_its_docs_write_it(tmp_path):
    env = gymnasium.make(ID)
    check_env(env.unwrapped)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=32, seed=0)
    model.learn(128)
    mean, _ = evaluate_policy(model, env, n_eval_episodes=2, warn=False)
    assert abs(mean) <= 3
    model.save(tmp_path / "ppo")
    loaded = MaskablePPO.load(tmp_path / "ppo")
    obs, _ = env.reset(seed=1)
    action, _ = loaded.predict(obs, action_masks=get_action_masks(env))
    assert 0 <= int(action) < int(obs["action_mask"].sum())  # a legal play
    box = gymnasium.make(ID, observation="box")
    model = MaskablePPO("MlpPolicy", box, n_steps=64, batch_size=32, seed=0)
    model.learn(128)
    obs, _ = box.reset(seed=1)
    action, _ = model.predict(obs, action_masks=get_action_masks(box))
    assert get_action_masks(box)[int(action)]


def test_sb3_make_vec_env_of_the_registered_id():
    """SB3's ``make_vec_env`` asks for ``render_mode="rgb_array"``: the env draws the board."""
    envs = make_vec_env(ID, n_envs=2, seed=0)
    model = MaskablePPO("MultiInputPolicy", envs, n_steps=32, batch_size=32, seed=0)
    model.learn(64)
    assert envs.render().ndim == 3


def test_bgais_sb3_vec_env_plays_the_vector_envs_games():
    """Given the same seed and actions, then ``BackgammonVecEnv`` returns the Gymnasium vector environment's
    observations and rewards, a finished game's last observation in its info, and each game's mask from
    ``env_method("action_masks")``."""
    sb3, gym = BackgammonVecEnv(8, "pubeval"), BackgammonVectorEnv(8, "pubeval")
    sb3.seed(7)
    obs = sb3.reset()
    expected, _ = gym.reset(seed=7)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(120):
        assert np.array_equal(obs["observation"], expected["observation"])
        masks = get_action_masks(sb3)
        assert masks.shape == (8, MAX_PLAYS) and np.array_equal(masks, expected["action_mask"] == 1)
        actions = (rng.random(8) * masks.sum(axis=1)).astype(np.int64)
        obs, rewards, dones, infos = sb3.step(actions)
        expected, gym_rewards, terminated, _, info = gym.step(actions)
        assert np.array_equal(rewards, gym_rewards) and np.array_equal(dones, terminated)
        for i in np.flatnonzero(dones):
            assert not infos[i]["terminal_observation"]["action_mask"].any()
            assert np.array_equal(infos[i]["terminal_observation"]["observation"],
                                  info["final_obs"][i]["observation"])
            ended += 1
    assert ended >= 8
    with pytest.raises(TypeError, match="autoreset_mode"):
        BackgammonVecEnv(2, autoreset_mode="next_step")


def test_maskable_ppo_on_bgais_sb3_vec_env_logs_its_episodes():
    envs = VecMonitor(BackgammonVecEnv(64, "random", observation="box", render_mode="rgb_array"))
    model = MaskablePPO("MlpPolicy", envs, n_steps=32, batch_size=256, seed=0)
    model.learn(64 * 32 * 2)
    returns = [episode["r"] for episode in model.ep_info_buffer]
    assert returns and all(abs(r) in (1, 2, 3) for r in returns)
    assert envs.render().shape[2] == 3


def test_self_play_with_the_model_as_its_own_opponent():
    env = SelfPlayEnv()
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=32, seed=0)
    env.opponent = lambda obs: model.predict(obs, action_masks=obs["action_mask"] == 1)[0]
    model.learn(256)
    returns = [episode["r"] for episode in model.ep_info_buffer]
    assert all(abs(r) in (1, 2, 3) for r in returns)


def test_tianshou_multi_agent_dqn_collects_and_trains_an_epoch(tmp_path):
    """Tianshou 2's pattern for PettingZoo games (its tic-tac-toe example): a DQN learner against a random masked
    player in a ``MultiAgentOffPolicyAlgorithm``, ``Collector``\\ s over ``DummyVectorEnv``\\ s of ``PettingZooEnv``,
    one short epoch."""
    ts = pytest.importorskip("tianshou")
    if int(ts.__version__.split(".")[0]) < 2:
        pytest.skip("Tianshou's 2.x API")
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    def make():
        return PettingZooEnv(bgai.envs.backgammon_v0.env())

    env = make()
    shape = env.observation_space.spaces["observation"].shape
    net = Net(state_shape=shape, action_shape=env.action_space.n, hidden_sizes=[64])
    learner = DQN(policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1,
                                                 eps_inference=0.05),
                  optim=AdamOptimizerFactory(lr=1e-4), n_step_return_horizon=1, gamma=0.9, target_update_freq=50)
    algorithm = MultiAgentOffPolicyAlgorithm(
        algorithms=[learner, MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)], env=env)
    training = DummyVectorEnv([make for _ in range(2)])
    test = DummyVectorEnv([make for _ in range(2)])
    training.seed(0)
    test.seed(1)
    collector = Collector[CollectStats](algorithm, training, VectorReplayBuffer(2000, 2), exploration_noise=True)
    collector.reset()
    stats = collector.collect(n_step=400)
    assert stats.n_collected_steps >= 400 and stats.n_collected_episodes >= 2
    result = algorithm.run_training(OffPolicyTrainerParams(
        training_collector=collector, test_collector=Collector[CollectStats](algorithm, test, exploration_noise=True),
        max_epochs=1, epoch_num_steps=100, collection_step_num_env_steps=10, test_step_num_episodes=2,
        batch_size=32, update_step_num_gradient_steps_per_sample=0.1, test_in_training=False,
        multi_agent_return_reduction=lambda returns: returns[:, 0]))
    assert result.update_step > 0 and result.train_step >= 100 and result.test_episode >= 2


def test_a_trained_model_benches_as_an_agent():
    from bgai.envs import policy_agent
    from bgai.play.agents import bench_agent

    env = gymnasium.make(ID, observation="box")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, seed=0).learn(64)
    (result,) = bench_agent(policy_agent(model, observation="box"), ["random"], games=3, seed=2).results
    assert not result.faults and result.summary()["games"] == 6


def test_the_maskable_ppo_example_learns_and_benches_on_a_tiny_budget(tmp_path):
    """examples/maskable_ppo.py at a few dozen steps: its curve has a bench point at the start, one after each
    ``--every`` steps and at the end, each with finite points a game over the duplicate games, no forfeits."""
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).parents[1] / "examples" / "maskable_ppo.py"
    spec = importlib.util.spec_from_file_location("maskable_ppo", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "curve.json"
    module.main(["--steps", "64", "--envs", "4", "--n-steps", "8", "--every", "32", "--games", "2", "--json",
                 str(out), "--save", str(tmp_path / "model.zip")])
    record = json.loads(out.read_text())
    assert [p["steps"] for p in record["curve"]] == [0, 32, 64]
    assert all(p["games"] == 4 and p["forfeits"] == 0 and abs(p["ppg"]) <= 3 for p in record["curve"])
    assert record["command"].startswith("python ") and (tmp_path / "model.zip").exists()
