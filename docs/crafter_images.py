"""Draw whole generated Crafter worlds as PNGs for the docs (``docs/environments/img/``).

    python docs/crafter_images.py

Each picture is the 64x64-cell world of the eval task 0 under a ``target_biome``, drawn with
crafter's own textures (8 pixels per cell, full daylight), creatures included. Also draws a
Heist level (``HeistPixels-v0``'s renderer) for its page.
"""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import llmgym  # noqa: E402, F401

OUT = ROOT / "docs" / "environments" / "img"


def crafter_world(biome: str, unit: int = 8) -> np.ndarray:
    """The whole world of eval task 0 with ``target_biome=biome``, as an RGB array."""
    from crafter import engine

    env = gym.make("llmgym/Crafter-v0", target_biome=biome).unwrapped
    env.reset(options={"task_id": "eval/00000"})
    game = env.game
    world = game.world
    world.daylight = 1.0
    area = np.array(world.area)
    view = engine.LocalView(world, game.env._textures, area)
    center = type("Center", (), {"pos": area // 2, "sleeping": False})()
    canvas = view(center, np.array([unit, unit]))
    return canvas.transpose((1, 0, 2)).astype(np.uint8)


def heist_level(distribution: str = "hard") -> np.ndarray:
    env = gym.make("llmgym/HeistPixels-v0", distribution=distribution, num_keys=3)
    frame, _ = env.reset(options={"task_id": "eval/00001"})
    return np.kron(frame, np.ones((4, 4, 1), dtype=np.uint8))


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for biome in ("mountain", "beaches"):
        Image.fromarray(crafter_world(biome)).save(OUT / f"crafter_{biome}.png", optimize=True)
    Image.fromarray(heist_level()).save(OUT / "heist_hard.png", optimize=True)
    for path in sorted(OUT.glob("*.png")):
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
