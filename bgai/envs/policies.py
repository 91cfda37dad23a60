"""A policy trained on bgai's environments, on bgai's bench: ``policy_agent`` turns it into a bench agent
(``bgai.play.agents``' contract) in one line."""

from __future__ import annotations

import numpy as np

from bgai.envs.spaces import check_action, check_observation, observe
from bgai.envs.steps import choose_by_steps
from bgai.eval.encoding import ENCODER_VERSION


def policy_agent(policy, encoder: int = ENCODER_VERSION, observation: str = "dict", action: str = "plays",
                 name: str | None = None):
    """A bench agent (``bgai.play.agents``' contract: ``agent(position, dice, plays) -> index``) of a policy trained
    on these environments: ``policy(observation) -> action`` called with the observation an environment would give
    (``encoder`` and ``observation`` as the environment's), or a model with Stable-Baselines3's ``predict`` (asked
    deterministically, with the mask where it takes one). ``action="steps"``: a policy of checker steps
    (``bgai.envs.steps``), asked for each step of the play.

        from bgai.play.agents import bench_agent
        bench_agent(policy_agent(model), ["random", "pubeval"], games=100)   # model: a trained SB3 model
    """
    check_observation(observation)
    check_action(action)
    predict = getattr(policy, "predict", None)

    def act(one: dict) -> int:
        shown = one["observation"] if observation == "box" else one
        if predict is None:
            return int(np.asarray(policy(shown)).item())
        try:
            chosen, _ = predict(shown, action_masks=one["action_mask"] == 1, deterministic=True)
        except TypeError:  # (a model without masks)
            chosen, _ = predict(shown, deterministic=True)
        return int(np.asarray(chosen).item())

    def agent(position, dice, plays) -> int:
        if action == "steps":
            return choose_by_steps(act, np.asarray(position.board), dice, encoder)
        obs = observe(np.asarray(position.board)[None], np.asarray([sorted(dice, reverse=True)]),
                      np.array([len(plays)]), encoder)
        return act({key: value[0] for key, value in obs.items()})

    agent.__name__ = str(name or getattr(policy, "__name__", type(policy).__name__))
    return agent
