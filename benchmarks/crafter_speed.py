"""llmgym's Crafter against ``crafter.Env``, side by side in one run, on one CPU core.

    python benchmarks/crafter_speed.py            # writes benchmarks/results/crafter_speed.json

Measured (time inside ``reset``/``step`` only, random actions, the same seeds on both sides):

* reset: ``crafter.Env(seed=s).reset()`` vs ``gym.make("llmgym/Crafter-v0").reset(seed=s)``
  (the same world, see tests/test_crafter.py); target: at least 20x faster;
* step: ``crafter.Env.step`` (which always renders its 64x64 image and the semantic map) vs a
  text step of ``Crafter-v0`` (target: at least 3x faster) and a pixel step of
  ``CrafterPixels-v0`` (target: no slower).
"""

from __future__ import annotations

import argparse
import sys
import time

import crafter
import gymnasium as gym
import numpy as np
from bench_utils import pin_to_one_core, write_json

import llmgym
from llmgym.cli import format_table

TARGETS = {"reset_speedup": 20.0, "text_step_speedup": 3.0, "pixel_step_speedup": 1.0}


def crafter_resets(seeds: list[int]) -> float:
    """Seconds per ``crafter.Env(seed).reset()`` (construction excluded)."""
    spent = 0.0
    for seed in seeds:
        env = crafter.Env(seed=seed)
        start = time.perf_counter()
        env.reset()
        spent += time.perf_counter() - start
    return spent / len(seeds)


def llmgym_resets(seeds: list[int]) -> float:
    env = gym.make("llmgym/Crafter-v0")
    env.reset(seed=seeds[0])
    spent = 0.0
    for seed in seeds:
        start = time.perf_counter()
        env.reset(seed=seed)
        spent += time.perf_counter() - start
    return spent / len(seeds)


def crafter_steps(seconds: float) -> float:
    """Seconds per ``crafter.Env.step`` with random actions."""
    rng = np.random.default_rng(0)
    env = crafter.Env(seed=0)
    env.reset()
    spent, steps, episode = 0.0, 0, 0
    while spent < seconds:
        action = int(rng.integers(17))
        start = time.perf_counter()
        _, _, done, _ = env.step(action)
        spent += time.perf_counter() - start
        steps += 1
        if done:
            episode += 1
            env = crafter.Env(seed=episode)
            env.reset()
    return spent / steps


def llmgym_steps(env_id: str, seconds: float, *, names: bool) -> float:
    """Seconds per step of ``env_id`` with random actions (names for text, indices for pixels)."""
    rng = np.random.default_rng(0)
    env = gym.make(env_id, target="none")
    env.reset(seed=0)
    actions = [a.replace("_", " ") for a in llmgym.envs.crafter.ACTIONS]
    spent, steps, episode = 0.0, 0, 0
    while spent < seconds:
        index = int(rng.integers(17))
        action = actions[index] if names else index
        start = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(action)
        spent += time.perf_counter() - start
        steps += 1
        if terminated or truncated:
            episode += 1
            env.reset(seed=episode)
    return spent / steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resets", type=int, default=5, help="crafter resets (about 1 s each)")
    parser.add_argument("--seconds", type=float, default=5.0, help="stepping time per side")
    parser.add_argument("--json", default="benchmarks/results/crafter_speed.json")
    args = parser.parse_args(argv)
    pin_to_one_core()
    seeds = list(range(args.resets))
    reset_crafter = crafter_resets(seeds)
    reset_ours = llmgym_resets(seeds * 4)
    step_crafter = crafter_steps(args.seconds)
    step_text = llmgym_steps("llmgym/Crafter-v0", args.seconds, names=True)
    step_pixels = llmgym_steps("llmgym/CrafterPixels-v0", args.seconds, names=False)
    figures = {
        "reset_speedup": reset_crafter / reset_ours,
        "text_step_speedup": step_crafter / step_text,
        "pixel_step_speedup": step_crafter / step_pixels,
    }
    rows = [
        {"what": "reset", "crafter.Env": f"{reset_crafter * 1e3:.1f} ms",
         "llmgym": f"{reset_ours * 1e3:.1f} ms", "ratio": f"{figures['reset_speedup']:.1f}x",
         "target": ">= 20x"},
        {"what": "step (text)", "crafter.Env": f"{step_crafter * 1e3:.3f} ms",
         "llmgym": f"{step_text * 1e3:.3f} ms", "ratio": f"{figures['text_step_speedup']:.1f}x",
         "target": ">= 3x"},
        {"what": "step (pixels)", "crafter.Env": f"{step_crafter * 1e3:.3f} ms",
         "llmgym": f"{step_pixels * 1e3:.3f} ms",
         "ratio": f"{figures['pixel_step_speedup']:.2f}x", "target": ">= 1x"},
    ]  # fmt: skip
    print(format_table(rows, ["what", "crafter.Env", "llmgym", "ratio", "target"]))
    meets = {name: figures[name] >= target for name, target in TARGETS.items()}
    print("meets targets:", "yes" if all(meets.values()) else f"NO ({meets})")
    payload = {
        "benchmark": "crafter_speed",
        "crafter_version": getattr(crafter, "__version__", "1.8.3"),
        "seconds_per_reset": {"crafter": reset_crafter, "llmgym": reset_ours},
        "seconds_per_step": {
            "crafter": step_crafter,
            "llmgym_text": step_text,
            "llmgym_pixels": step_pixels,
        },
        "speedups": figures,
        "targets": TARGETS,
        "meets_targets": meets,
    }
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
