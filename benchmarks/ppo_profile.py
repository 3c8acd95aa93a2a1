"""Where a PPO step's time goes on symbolic Crafter: the environment, the network, the framework.

    python benchmarks/ppo_profile.py                 # writes benchmarks/results/ppo_profile.json
    python benchmarks/ppo_profile.py --policy runs/paper-curriculum-s0/policy.pt   # + trained

On one CPU thread (``torch.set_num_threads(1)``), with the paper's PPO settings (4,096-step
rollouts as 256 steps x 16 games, 3 epochs, 8 minibatches) and a 256x256 MLP policy:

* ``env``: ``CrafterSymbolicVectorEnv`` (16 games in one process) with random actions, and the
  same 16 games as gymnasium's ``SyncVectorEnv`` of ``CrafterSymbolic-v0`` (per-game wrappers);
* ``torch_ppo``: ``benchmarks/ppo_torch.py`` on ``CrafterSymbolicVectorEnv``, its time split
  into the environment's ``step``, acting (the policy's forward pass, sampling, buffers) and
  the update (advantages and gradient epochs);
* ``sb3_ppo``: stable-baselines3's PPO (``MlpPolicy``, the same MLP and settings) on the same
  vector environment behind SB3's ``VecEnv`` interface, split the same way (``step_wait``,
  ``train``, and the rest of ``collect_rollouts``: SB3's forward pass, buffers, callbacks).

Each prints steps/s and the split, in CPU seconds of this process (``time.process_time``, one
thread: what the run itself spent; on a shared virtual machine even these grow with the load,
so compare the loops within one run of this script) and, for reference,
wall-clock seconds; ``torch_over_sb3`` is the whole-loop speed ratio (CPU time) in one run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gymnasium as gym
import numpy as np
import torch
from bench_utils import machine, write_json
from ppo_torch import PPO

import llmgym  # noqa: F401
from llmgym.envs.crafter.symbolic import SYMBOLIC_SIZE
from llmgym.envs.crafter.vector import CrafterSymbolicVectorEnv

NUM_ENVS, N_STEPS = 16, 256
PPO_SETTINGS = {
    "gamma": 0.95,
    "gae_lambda": 0.65,
    "n_epochs": 3,
    "ent_coef": 0.01,
    "clip_range": 0.2,
    "learning_rate": 3e-4,
    "max_grad_norm": 0.5,
    "vf_coef": 0.5,
}


def env_speed(steps: int) -> dict[str, float]:
    """Random-action steps per CPU second of the batched env and of gymnasium's SyncVectorEnv."""
    rng = np.random.default_rng(0)
    vec = CrafterSymbolicVectorEnv(NUM_ENVS, seed=0)
    vec.reset()
    started = time.process_time()
    for _ in range(steps // NUM_ENVS):
        vec.step(rng.integers(17, size=NUM_ENVS))
    batched = steps / (time.process_time() - started)
    sync = gym.make_vec("llmgym/CrafterSymbolic-v0", num_envs=NUM_ENVS, vectorization_mode="sync")
    sync.reset(seed=0)
    started = time.process_time()
    for _ in range(steps // NUM_ENVS):
        sync.step(rng.integers(17, size=NUM_ENVS))
    synced = steps / (time.process_time() - started)
    sync.close()
    return {
        "batched_steps_per_s": round(batched, 1),
        "sync_vector_env_steps_per_s": round(synced, 1),
        "batched_over_sync": round(batched / synced, 2),
    }


def env_speed_under_policy(steps: int, policy: str) -> dict[str, float]:
    """Steps per CPU second of the batched env when a trained policy (``policy.pt`` saved by
    ``envgen_crafter.py --obs symbolic``) chooses the actions; its forward pass is not counted.
    The game's cost per step depends on what the agent does (episode length, so resets; plants,
    tables and creatures near it), so a trained policy is the training regime's measure."""
    ppo = PPO(SYMBOLIC_SIZE, 17, NUM_ENVS, n_steps=N_STEPS)
    ppo.net.load_state_dict(torch.load(policy))
    vec = CrafterSymbolicVectorEnv(NUM_ENVS, seed=1)
    observations, _ = vec.reset()
    spent, episodes, lengths = 0.0, 0, 0
    for _ in range(steps // NUM_ENVS):
        actions = ppo.act(observations)
        started = time.process_time()
        observations, _, _, _, infos = vec.step(actions)
        spent += time.process_time() - started
        if "_episode" in infos:
            episodes += int(infos["_episode"].sum())
            lengths += int(infos["episode"]["l"].sum())
    return {
        "policy": policy,
        "steps_per_s": round(steps / spent, 1),
        "mean_episode_length": round(lengths / episodes, 1) if episodes else None,
    }


def torch_ppo(steps: int) -> dict[str, Any]:
    vec = CrafterSymbolicVectorEnv(NUM_ENVS, seed=0)
    settings = {k: v for k, v in PPO_SETTINGS.items()}
    ppo = PPO(SYMBOLIC_SIZE, 17, NUM_ENVS, n_steps=N_STEPS, n_minibatches=8, **settings)
    started, wall = time.process_time(), time.perf_counter()
    ppo.learn(vec, steps)
    seconds = time.process_time() - started
    return _split(ppo.num_timesteps, seconds, ppo.timing, time.perf_counter() - wall)


class _SB3Adapter:
    """``CrafterSymbolicVectorEnv`` behind stable-baselines3's ``VecEnv`` interface, timing
    ``step_wait``."""

    def __new__(cls, vec: CrafterSymbolicVectorEnv) -> Any:
        from stable_baselines3.common.vec_env import VecEnv

        class Adapter(VecEnv):
            def __init__(self) -> None:
                super().__init__(
                    vec.num_envs, vec.single_observation_space, vec.single_action_space
                )
                self.seconds = 0.0
                self._actions: np.ndarray | None = None

            def reset(self) -> np.ndarray:
                obs, _ = vec.reset()
                return obs

            def step_async(self, actions: np.ndarray) -> None:
                self._actions = actions

            def step_wait(self) -> Any:
                started = time.process_time()
                obs, rewards, terminated, truncated, infos = vec.step(self._actions)
                dones = terminated | truncated
                listed: list[dict[str, Any]] = [{} for _ in range(vec.num_envs)]
                for index in np.flatnonzero(dones):
                    listed[index] = {
                        "terminal_observation": infos["final_obs"][index],
                        "TimeLimit.truncated": bool(truncated[index]),
                    }
                self.seconds += time.process_time() - started
                return obs, rewards, dones, listed

            def close(self) -> None:
                return None

            def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
                return [getattr(vec, attr_name)] * vec.num_envs

            def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
                setattr(vec, attr_name, value)

            def env_method(self, method_name: str, *args: Any, **kwargs: Any) -> list[Any]:
                return [getattr(vec, method_name)(*args, **kwargs)]

            def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
                return [False] * vec.num_envs

        return Adapter()


def sb3_ppo(steps: int) -> dict[str, Any]:
    import stable_baselines3 as sb3

    adapter = _SB3Adapter(CrafterSymbolicVectorEnv(NUM_ENVS, seed=0))
    model = sb3.PPO(
        "MlpPolicy",
        adapter,
        n_steps=N_STEPS,
        batch_size=N_STEPS * NUM_ENVS // 8,
        policy_kwargs={"net_arch": [256, 256]},
        device="cpu",
        seed=0,
        verbose=0,
        **PPO_SETTINGS,
    )
    train = model.train
    spent = {"update": 0.0}

    def timed_train() -> None:
        started = time.process_time()
        train()
        spent["update"] += time.process_time() - started

    model.train = timed_train
    started, wall = time.process_time(), time.perf_counter()
    model.learn(total_timesteps=steps)
    seconds = time.process_time() - started
    wall = time.perf_counter() - wall
    timing = {
        "env": adapter.seconds,
        "act": seconds - adapter.seconds - spent["update"],
        "update": spent["update"],
    }
    return _split(model.num_timesteps, seconds, timing, wall)


def _split(steps: int, seconds: float, timing: dict[str, float], wall: float) -> dict[str, Any]:
    return {
        "steps": steps,
        "cpu_seconds": round(seconds, 2),
        "wall_seconds": round(wall, 2),
        "steps_per_s": round(steps / seconds, 1),
        "seconds_per_1_96M_steps": round(1_960_000 / (steps / seconds), 0),
        "split_seconds": {k: round(v, 2) for k, v in timing.items()},
        "split_share": {k: round(v / seconds, 3) for k, v in timing.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=8 * N_STEPS * NUM_ENVS)
    parser.add_argument("--json", default="benchmarks/results/ppo_profile.json")
    parser.add_argument("--policy", help="a trained policy.pt: also time the env under it")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    load_before = machine().get("load_average_1m")
    env = env_speed(args.steps // 2)
    if args.policy:
        env["trained_policy"] = env_speed_under_policy(args.steps, args.policy)
    print(f"env alone: {env}", flush=True)
    ours = torch_ppo(args.steps)
    print(f"torch PPO: {ours}", flush=True)
    theirs = sb3_ppo(args.steps)
    print(f"SB3 PPO:   {theirs}", flush=True)
    ratio = ours["steps_per_s"] / theirs["steps_per_s"]
    print(f"torch PPO / SB3 PPO steps per CPU second: {ratio:.2f}")
    write_json(
        args.json,
        {
            "benchmark": "ppo_profile",
            "num_envs": NUM_ENVS,
            "n_steps": N_STEPS,
            "policy": "MLP 256x256, 1 thread",
            "env": env,
            "torch_ppo": ours,
            "sb3_ppo": theirs,
            "torch_over_sb3": round(ratio, 2),
            "load_average_1m_before": load_before,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
