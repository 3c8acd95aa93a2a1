"""llmgym's Crafter against ``crafter.Env``, side by side in one run, on one CPU core.

    python benchmarks/crafter_speed.py            # writes benchmarks/results/crafter_speed.json

Measured (time inside ``reset``/``step``/``render`` only, random actions, the same seeds on both
sides):

* reset: ``crafter.Env(seed=s).reset()`` vs ``gym.make("llmgym/Crafter-v0").reset(seed=s)``
  (the same world, see tests/test_crafter.py); target: at least 20x faster;
* step: ``crafter.Env.step`` (which always renders its 64x64 image and the semantic map) vs a
  text step of ``Crafter-v0`` (target: at least 3x faster) and a pixel step of
  ``CrafterPixels-v0`` (target: at least 3x faster). The three are stepped in alternating
  rounds, so that a change in the machine's load falls on all of them alike;
* frame: on the same game states (random play through day, night and sleep), crafter's own
  ``Env.render()`` vs llmgym's atlas renderer (the frames are equal, tests/test_crafter_frames.py),
  each drawing its night noise from the same random state.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import crafter
import gymnasium as gym
import numpy as np
from bench_utils import pin_to_one_core, write_json

import llmgym
from llmgym.cli import format_table
from llmgym.envs.crafter.config import CrafterConfig
from llmgym.envs.crafter.game import CrafterGame, crafter_world_seed

TARGETS = {"reset_speedup": 20.0, "text_step_speedup": 3.0, "pixel_step_speedup": 3.0}


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


class Stepper:
    """Random-action stepping of one side, resumable: :meth:`run` steps for about ``seconds``
    more and adds to :attr:`spent` and :attr:`steps` (time inside ``step`` only)."""

    def __init__(self, env_id: str | None) -> None:
        self.env_id = env_id
        self.rng = np.random.default_rng(0)
        self.episode = 0
        self.spent = 0.0
        self.steps = 0
        self.actions: list[Any] = list(range(17))
        if env_id is None:
            self.env = crafter.Env(seed=0)
            self.env.reset()
        else:
            self.env = gym.make(env_id, target="none")
            self.env.reset(seed=0)
            if env_id == "llmgym/Crafter-v0":
                self.actions = [a.replace("_", " ") for a in llmgym.envs.crafter.ACTIONS]

    def run(self, seconds: float) -> None:
        spent = 0.0
        while spent < seconds:
            action = self.actions[int(self.rng.integers(17))]
            start = time.perf_counter()
            if self.env_id is None:
                _, _, done, _ = self.env.step(action)
            else:
                _, _, terminated, truncated, _ = self.env.step(action)
                done = terminated or truncated
            spent += time.perf_counter() - start
            self.steps += 1
            if done:
                self.episode += 1
                if self.env_id is None:
                    self.env = crafter.Env(seed=self.episode)
                    self.env.reset()
                else:
                    self.env.reset(seed=self.episode)
        self.spent += spent

    @property
    def seconds_per_step(self) -> float:
        return self.spent / self.steps


def frame_times(frames: int) -> dict[str, Any]:
    """Seconds per frame of crafter's ``Env.render()`` and llmgym's renderer on the same states
    (random play without zombies, so it lives through nights and sleeps)."""
    game = CrafterGame()
    seed = 0
    game.reset(crafter_world_seed(seed), CrafterConfig(zombie_density=0.0))
    rng = np.random.default_rng(0)
    spent = {"crafter": 0.0, "llmgym": 0.0}
    kinds = {"day": 0, "night": 0, "asleep": 0}
    for _ in range(frames):
        result = game.step(int(rng.integers(17)), render=True)
        before = game.world.random.get_state()
        start = time.perf_counter()
        game.env.render()
        middle = time.perf_counter()
        game.world.random.set_state(before)
        game.render()
        spent["crafter"] += middle - start
        spent["llmgym"] += time.perf_counter() - middle
        kind = "asleep" if game.player.sleeping else "night" if game.world.daylight < 0.5 else "day"
        kinds[kind] += 1
        if result.dead or result.over:
            seed += 1
            game.reset(crafter_world_seed(seed), CrafterConfig(zombie_density=0.0))
    return {"seconds_per_frame": {k: v / frames for k, v in spent.items()}, "frames": kinds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resets", type=int, default=5, help="crafter resets (about 1 s each)")
    parser.add_argument("--seconds", type=float, default=6.0, help="stepping time per side")
    parser.add_argument("--rounds", type=int, default=6, help="alternating rounds per side")
    parser.add_argument("--frames", type=int, default=2000, help="frames drawn by each renderer")
    parser.add_argument("--json", default="benchmarks/results/crafter_speed.json")
    args = parser.parse_args(argv)
    pin_to_one_core()
    seeds = list(range(args.resets))
    reset_crafter = crafter_resets(seeds)
    reset_ours = llmgym_resets(seeds * 4)
    sides = {
        "crafter": Stepper(None),
        "llmgym_text": Stepper("llmgym/Crafter-v0"),
        "llmgym_pixels": Stepper("llmgym/CrafterPixels-v0"),
    }
    for _ in range(args.rounds):
        for stepper in sides.values():
            stepper.run(args.seconds / args.rounds)
    step = {name: stepper.seconds_per_step for name, stepper in sides.items()}
    frames = frame_times(args.frames)
    per_frame = frames["seconds_per_frame"]
    figures = {
        "reset_speedup": reset_crafter / reset_ours,
        "text_step_speedup": step["crafter"] / step["llmgym_text"],
        "pixel_step_speedup": step["crafter"] / step["llmgym_pixels"],
        "frame_speedup": per_frame["crafter"] / per_frame["llmgym"],
    }
    rows = [
        {"what": "reset", "crafter.Env": f"{reset_crafter * 1e3:.1f} ms",
         "llmgym": f"{reset_ours * 1e3:.1f} ms", "ratio": f"{figures['reset_speedup']:.1f}x",
         "target": ">= 20x"},
        {"what": "step (text)", "crafter.Env": f"{step['crafter'] * 1e3:.3f} ms",
         "llmgym": f"{step['llmgym_text'] * 1e3:.3f} ms",
         "ratio": f"{figures['text_step_speedup']:.1f}x", "target": ">= 3x"},
        {"what": "step (pixels)", "crafter.Env": f"{step['crafter'] * 1e3:.3f} ms",
         "llmgym": f"{step['llmgym_pixels'] * 1e3:.3f} ms",
         "ratio": f"{figures['pixel_step_speedup']:.1f}x", "target": ">= 3x"},
        {"what": "frame (render only)", "crafter.Env": f"{per_frame['crafter'] * 1e3:.3f} ms",
         "llmgym": f"{per_frame['llmgym'] * 1e3:.3f} ms",
         "ratio": f"{figures['frame_speedup']:.1f}x", "target": ""},
    ]  # fmt: skip
    print(format_table(rows, ["what", "crafter.Env", "llmgym", "ratio", "target"]))
    meets = {name: figures[name] >= target for name, target in TARGETS.items()}
    print("meets targets:", "yes" if all(meets.values()) else f"NO ({meets})")
    payload = {
        "benchmark": "crafter_speed",
        "crafter_version": getattr(crafter, "__version__", "1.8.3"),
        "seconds_per_reset": {"crafter": reset_crafter, "llmgym": reset_ours},
        "seconds_per_step": step,
        "steps": {name: stepper.steps for name, stepper in sides.items()},
        "rounds": args.rounds,
        "seconds_per_frame": per_frame,
        "frames": frames["frames"],
        "speedups": figures,
        "targets": TARGETS,
        "meets_targets": meets,
    }
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
