"""EnvGen's training loop with PPO on llmgym's Crafter (pixels or symbolic) and Heist.

    pip install -e '.[crafter,train]'
    python benchmarks/envgen_crafter.py                        # CPU-sized, offline designer
    python benchmarks/envgen_crafter.py --designer none        # plain PPO, same total steps
    python benchmarks/envgen_crafter.py --schedule paper --obs symbolic --seed 0 --designer offline
    python benchmarks/envgen_crafter.py --schedule paper --obs symbolic --designer frontier
    python benchmarks/envgen_crafter.py --schedule paper --designer openai:gpt-4o --device cuda
    python benchmarks/envgen_crafter.py --env llmgym/HeistPixels-v0                # Heist

Two training paths. ``--obs pixels`` (default; the paper's setting): stable-baselines3 PPO with
its CNN on ``CrafterPixels-v0`` frames (``--device cuda`` for a GPU). ``--obs symbolic``: the
small PyTorch PPO of ``benchmarks/ppo_torch.py`` on ``CrafterSymbolic-v0``'s vectors,
all games stepped in one process by ``CrafterSymbolicVectorEnv`` — the path that runs the
paper's 1.96M steps in under half an hour on one CPU core (``benchmarks/ppo_profile.py``
measures why: per-step framework overhead, not the network, is what a CPU pays for with
stable-baselines3 at this scale).

Designers: ``offline`` (llmgym's rule-based designer: the weakest skills), ``frontier`` (the
weakest skills whose prerequisites the agent achieves; its choices and their reasons are printed
per cycle and kept in ``results.json``), ``openai:MODEL`` (EnvGen's prompt for Crafter; every
prompt and reply is recorded in ``--out``/designer), ``replay:FOLDER`` (the designs of a recorded
run, call by call, without a model), ``curriculum`` (a fixed easy-to-hard
sequence of practice environments that ignores the agent's success, the paper's easy-to-hard
baseline) and ``none`` (plain PPO in the original game for the same steps).

The symbolic path's agent: by default the paper's (an MLP, the PPO settings below:
``ppo_torch.PPO_SETTINGS``); ``--policy conv`` reads Crafter's local map grid with conv layers,
and every PPO setting has a flag (``--learning-rate``, ``--anneal-lr``, ``--norm-value``,
``--layer-norm``, ``--ent-coef``, ...). The run JSON records the agent (``agent``), and
``--variant NAME`` puts a name for it in the result file's name;
``benchmarks/envgen_agent_table.py`` tables the variants tried.

For each cycle: train in the designed environments, train in the original game, evaluate the
per-skill success (Crafter's 22 achievements) in the original game, and give it to the designer
for new environments; finally train in the original game. ``--designer none`` trains plain PPO
in the original game for the same total number of steps: the baseline, from the same script.

The Crafter score (geometric mean of per-achievement success, in percent) is computed, as in the
paper, over the episodes of the final training phase in the original game; the per-cycle
evaluations are what the designer sees.

Schedules: ``paper`` — 4 cycles of 0.12M designed + 0.12M original steps, then 1M original
steps; PPO with gamma 0.95, GAE lambda 0.65, 4096-step rollouts (512 x 8 environments),
3 epochs, 8 minibatches, entropy 0.01, clip 0.2, lr 3e-4. ``heist`` — the paper's Heist
ratio (5M designed then 20M original steps, one designer call) at a tenth: 0.5M steps in the
designs, then 2M in Heist's hard distribution (``--obs symbolic --env llmgym/Heist-v0``).
``cpu`` (default) — the same loop and
PPO settings scaled down to finish in minutes on a laptop CPU (episodes capped at 1,000 steps).
Writes ``results.json`` and ``success.png`` (per-skill success per cycle) in ``--out``, and the
run's result (arm, seed, schedule, steps, score, per-achievement success) to
``benchmarks/results/envgen/<env>-<arm>-<schedule>-seed<seed>.json`` when the schedule is a named
one (a run with an overridden knob writes it only where ``--results`` says), from which
``python docs/generate.py`` builds the table in docs/envgen.md. Paper-schedule runs go to
``benchmarks/results/envgen/paper/``; ``benchmarks/envgen_paper_table.py`` aggregates them.

Run as a program, the script pins portable float kernels before numpy and torch load
(``benchmarks/portable_kernels.py``: the same numbers on every x86-64 machine with AVX2;
``benchmarks/envgen_reproducibility.py`` measures what they remove and cost) and records them in
the run's JSON; ``--fast-kernels`` lets the CPU choose its own.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_utils, also when the tests load us
import portable_kernels

if __name__ == "__main__" and "--fast-kernels" not in sys.argv[1:]:
    portable_kernels.pin()  # before numpy and torch are imported: they read the pins once

from llmgym.core.registry import optional_import

sb3 = optional_import("stable_baselines3", extra="train", package="stable-baselines3")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
from bench_utils import number_in, write_json  # noqa: E402
from ppo_torch import PPO_SETTINGS  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv  # noqa: E402

import llmgym  # noqa: E402
from llmgym.envgen import ConfigMixture, Design, DesignSpec, SkillStats, make_designer  # noqa: E402
from llmgym.envgen.designers import Designer, RunLog, _scaled_config  # noqa: E402

SCHEDULES = {
    "paper": {
        "cycles": 4,
        "gen_steps": 120_000,
        "orig_steps": 120_000,
        "final_steps": 1_000_000,
        "num_envs": 8,
        "n_steps": 512,
        "eval_episodes": 12,
        "length": None,
    },
    "heist": {
        "cycles": 1,
        "gen_steps": 500_000,
        "orig_steps": 0,
        "final_steps": 2_000_000,
        "num_envs": 16,
        "n_steps": 256,
        "eval_episodes": 12,
        "length": None,
        "base": {"distribution": "hard"},
    },
    "cpu": {
        "cycles": 2,
        "gen_steps": 12_288,
        "orig_steps": 12_288,
        "final_steps": 24_576,
        "num_envs": 4,
        "n_steps": 256,
        "eval_episodes": 6,
        "length": 1_000,
    },
}

SYMBOLIC_LAYOUT = {
    "paper": {"num_envs": 16, "n_steps": 256},
    "heist": {},
    "cpu": {},
}
"""The symbolic path's rollout layout: the paper's 4,096-step rollouts as 256 steps x 16 games
(the same rollout size; more games per policy call halve the per-step overhead)."""

RESULTS = Path(__file__).resolve().parent / "results" / "envgen"


def arm(designer: str) -> str:
    """The arm a run belongs to: ``ppo`` (no designer), ``ppo-curriculum`` or
    ``ppo-envgen-<designer kind>``."""
    if designer in ("none", "curriculum"):
        return {"none": "ppo", "curriculum": "ppo-curriculum"}[designer]
    return f"ppo-envgen-{designer.split(':')[0]}"


def result_name(env_id: str, designer: str, schedule: str, seed: int, variant: str = "") -> str:
    """``crafterpixels-ppo-envgen-offline-cpu-seed0.json``: one file per run; a ``variant`` of
    the agent (``--variant``) comes before the schedule: ``craftersymbolic-ppo-conv-paper-seed0``.
    """
    env = env_id.split("/")[-1].split("-")[0].lower()
    agent = f"-{variant}" if variant else ""
    return f"{env}-{arm(designer)}{agent}-{schedule}-seed{seed}.json"


CRAFTER_STAGES: tuple[tuple[str, ...], ...] = (
    ("collect_wood", "collect_sapling", "collect_drink", "place_table"),
    ("make_wood_pickaxe", "make_wood_sword", "eat_cow", "collect_stone"),
    ("place_stone", "place_furnace", "make_stone_pickaxe", "collect_coal"),
    ("collect_iron", "make_iron_pickaxe", "make_iron_sword", "collect_diamond"),
)
"""Crafter's easy-to-hard curriculum: four stages of skills by tech-tree depth, one per cycle."""


class CurriculumDesigner(Designer):
    """The easy-to-hard curriculum baseline: call ``k`` returns stage ``k``'s practice
    environments whatever the agent's success (Crafter: :data:`CRAFTER_STAGES`, the skills'
    ``skill_practice`` configs). An environment without practice configs for those skills gets
    its numeric knobs scaled from small (easy) up to the defaults across the ``cycles`` calls."""

    name = "curriculum"

    def __init__(
        self, spec: DesignSpec, *, n: int = 4, cycles: int = 4, run_folder: Path | None = None
    ) -> None:
        super().__init__(spec, n=n, run=RunLog(run_folder))
        self.cycles = cycles
        self._call = 0

    def _design(self, stats: SkillStats | None) -> list[Design]:
        call = self._call
        self._call += 1
        if all(skill in self.spec.practice for stage in CRAFTER_STAGES for skill in stage):
            stage = CRAFTER_STAGES[min(call, len(CRAFTER_STAGES) - 1)]
            return [
                Design(f"Curriculum stage {call + 1}: practise {skill}.", self.spec.practice[skill])
                for skill in stage[: self.n]
            ]
        factor = min(1.0, (call + 1) / self.cycles)
        design = Design(
            f"Curriculum stage {call + 1}: every size knob x{factor:.2f}.",
            _scaled_config(self.spec, factor),
        )
        return [design] * self.n


def _commit() -> str | None:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


class SkillTracker(BaseCallback):
    """Collects, for every finished training episode, the skills it achieved (from
    ``info["achievements"]["unlocked"]`` or the environment's success)."""

    def __init__(self) -> None:
        super().__init__()
        self.episodes: list[set[str]] = []

    def _on_step(self) -> bool:
        for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
            if done:
                self.episodes.append(_achieved(info))
        return True


def _achieved(info: dict[str, Any]) -> set[str]:
    achieved = set(info.get("achievements", {}).get("unlocked", ()))
    achieved |= set(info.get("skills", ()))
    if info.get("success"):
        achieved.add("success")
    return achieved


def _base_config(args: argparse.Namespace, length: int | None) -> dict[str, Any]:
    """The run's fixed knobs: the episode cap (Crafter's ``length``, Heist's ``max_steps``) and,
    for Crafter, no target achievement (plain Crafter: survive and explore)."""
    knobs = DesignSpec.from_env_id(args.env).schema["properties"]
    config: dict[str, Any] = {"target": "none"} if "target" in knobs else {}
    config.update(getattr(args, "base_overrides", {}))
    if length is not None:
        config["length" if "length" in knobs else "max_steps"] = length
    return config


def make_vec_env(
    args: argparse.Namespace, schedule: dict[str, Any], designs: Sequence[Design], seed: int
) -> Any:
    """A vector env of ConfigMixture(original env); ratio 1.0 while training on designs."""
    base = _base_config(args, schedule["length"])

    def factory(index: int) -> Callable[[], gym.Env]:
        def make() -> gym.Env:
            env = gym.make(args.env, config=base)
            return ConfigMixture(env, _with_base(designs, base), ratio=0.0, seed=seed + index)

        return make

    factories = [factory(i) for i in range(schedule["num_envs"])]
    vec = SubprocVecEnv(factories) if args.subproc else DummyVecEnv(factories)
    vec.seed(seed)
    return vec


def _with_base(designs: Sequence[Design], base: dict[str, Any]) -> list[dict[str, Any]]:
    """Designs on top of the run's base config (the episode cap and, for Crafter, no target)."""
    return [{**base, **design.config} for design in designs]


def evaluate(
    model: Any, args: argparse.Namespace, schedule: dict[str, Any], skills: Sequence[str], seed: int
) -> SkillStats:
    """Per-skill success over evaluation episodes in the original game (3 groups for the std)."""
    env = gym.make(args.env, config=_base_config(args, schedule["length"]))
    achieved = []
    for episode in range(schedule["eval_episodes"]):
        observation, info = env.reset(seed=seed + episode)
        done = False
        while not done:
            action, _ = model.predict(observation, deterministic=False)
            observation, _, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated
        achieved.append(_achieved(info))
    env.close()
    return SkillStats.from_episodes(achieved, skills, groups=min(3, len(achieved)))


def score(args: argparse.Namespace, rates: dict[str, float]) -> float:
    """Crafter's score for Crafter; the success rate otherwise (Heist: stealing the gem)."""
    if "Crafter" in args.env:
        from llmgym.envs.crafter import score as crafter_score

        return crafter_score(rates)
    return rates.get("steal_gem", rates.get("success", 0.0))


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    skills = results["skills"]
    cycles = results["cycles"]
    grid = np.array(
        [[cycle["eval"][skill]["mean"] for skill in skills] for cycle in cycles]
        + [[results["final"]["success"][s] for s in skills]]
    )
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(skills)), 1.2 + 0.5 * len(grid)))
    image = ax.imshow(grid, vmin=0, vmax=100, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(skills)), skills, rotation=70, ha="right", fontsize=8)
    ax.set_yticks(range(len(grid)), [f"cycle {c['cycle']}" for c in cycles] + ["final"])
    for (row, column), value in np.ndenumerate(grid):
        ax.text(
            column,
            row,
            f"{value:.0f}",
            ha="center",
            va="center",
            fontsize=7,
            color="white" if value < 60 else "black",
        )
    fig.colorbar(image, ax=ax, label="success (%)")
    ax.set_title(
        f"{results['env']} — designer: {results['designer']}, score {results['final']['score']:.1f}"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


COUNT, NON_NEGATIVE = number_in(int, 1), number_in(int, 0)
RANGES: dict[str, Callable[[str], Any]] = {
    "hidden": COUNT,
    "layers": COUNT,
    "learning_rate": number_in(float, 0, above=True),
    "gamma": number_in(float, 0, 1, above=True),
    "gae_lambda": number_in(float, 0, 1),
    "n_epochs": COUNT,
    "n_minibatches": COUNT,
    "ent_coef": number_in(float, 0),
    "vf_coef": number_in(float, 0),
    "clip_range": number_in(float, 0, above=True),
    "max_grad_norm": number_in(float, 0, above=True),
}
"""The PPO knobs' flags and the values each takes."""


def _channels(text: str) -> tuple[int, ...]:
    return tuple(COUNT(part) for part in text.split(","))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--env",
        help="default: llmgym/CrafterPixels-v0 (--obs pixels) or llmgym/CrafterSymbolic-v0",
    )
    parser.add_argument(
        "--obs",
        choices=("pixels", "symbolic"),
        default="pixels",
        help="pixels: stable-baselines3's CNN on frames (the paper's setting); symbolic: the "
        "small PyTorch PPO on CrafterSymbolic-v0, all games in one process",
    )
    parser.add_argument("--device", default="cpu", help="torch device: cpu or cuda")
    parser.add_argument(
        "--crafter-engine",
        choices=("arrays", "crafter"),
        default="arrays",
        help="--obs symbolic on Crafter: 'arrays' steps the games in CrafterBatchedVectorEnv "
        "(the same games, step for step, several times faster: tests/test_crafter_batched.py), "
        "'crafter' on crafter's own engine (CrafterSymbolicVectorEnv)",
    )
    parser.add_argument(
        "--designer",
        default="offline",
        help="offline, frontier, openai:MODEL, replay:FOLDER (a recorded run's folder or its "
        "designer/ folder), curriculum or none",
    )
    parser.add_argument(
        "--base-url",
        help="chat-completions API root for openai:MODEL (default: $OPENAI_BASE_URL; the key "
        "is $OPENAI_API_KEY)",
    )
    parser.add_argument(
        "--prompt",
        choices=("auto", "envgen", "generic"),
        default="auto",
        help="openai:MODEL's prompt: EnvGen's (auto for Crafter) or llmgym's generic one",
    )
    parser.add_argument("--schedule", choices=sorted(SCHEDULES), default="cpu")
    parser.add_argument("--cycles", type=COUNT, help="override the schedule's cycles")
    parser.add_argument(
        "--gen-steps", type=NON_NEGATIVE, help="steps in designed environments per cycle"
    )
    parser.add_argument(
        "--orig-steps", type=NON_NEGATIVE, help="steps in the original game per cycle"
    )
    parser.add_argument("--final-steps", type=COUNT, help="steps in the original game at the end")
    parser.add_argument("--num-envs", type=COUNT)
    parser.add_argument("--n-steps", type=COUNT, help="rollout steps per environment")
    parser.add_argument("--eval-episodes", type=COUNT)
    parser.add_argument(
        "--length", type=NON_NEGATIVE, help="episode cap in steps (0: the game's own)"
    )
    parser.add_argument("--n-designs", type=COUNT, default=4)
    parser.add_argument("--subproc", action="store_true", help="one process per environment")
    parser.add_argument("--seed", type=NON_NEGATIVE, default=0)
    parser.add_argument(
        "--out",
        help="the run's folder: results.json, policy.pt, success.png and the designer's log "
        "(default: runs/envgen/<the result JSON's name>); a run starts afresh and replaces "
        "what an earlier run left there",
    )
    parser.add_argument(
        "--results",
        help="folder for the run's result JSON (default: benchmarks/results/envgen for a named "
        "schedule, none when a schedule knob is overridden; empty: none)",
    )
    parser.add_argument(
        "--fast-kernels",
        action="store_true",
        help="let torch and MKL choose float kernels by this CPU (AVX-512 where it has it) "
        "instead of the portable ones (portable_kernels.PORTABLE_KERNELS: the same numbers on "
        "every x86 machine with AVX2; pinned only when this script is run as a program)",
    )
    agent = parser.add_argument_group(
        "symbolic agent (--obs symbolic; defaults: PPO_SETTINGS, every value in the run JSON)"
    )
    agent.add_argument(
        "--policy",
        choices=("mlp", "conv"),
        help="mlp: a flat MLP; conv: conv layers over Crafter's local map grid beside an MLP "
        "input of inventory and status (CrafterSymbolic-v0 only)",
    )
    agent.add_argument(
        "--conv-channels",
        type=_channels,
        help="--policy conv: output channels per 3x3 conv layer, comma-separated (32,32)",
    )
    agent.add_argument("--conv-stride", type=COUNT, help="--policy conv: the last conv's stride")
    for name, kind in RANGES.items():
        agent.add_argument("--" + name.replace("_", "-"), type=kind)
    for flag in ("--anneal-lr", "--layer-norm", "--norm-value"):
        agent.add_argument(flag, action="store_true", default=None)
    agent.add_argument(
        "--variant",
        default="",
        help="a name for a non-default agent, put in the result JSON's file name "
        "(craftersymbolic-ppo-VARIANT-paper-seed0.json); required for a named schedule's "
        "default results folder when the agent differs from PPO_SETTINGS",
    )
    parser.add_argument("--quiet", action="store_true")
    return parser.parse_args(argv)


def ppo_settings(args: argparse.Namespace) -> dict[str, Any]:
    """``ppo_torch.PPO_SETTINGS`` (the paper's) with the run's ``--`` overrides (each setting
    has a flag of its name)."""
    settings = dict(PPO_SETTINGS)
    for key in settings:
        if getattr(args, key, None) is not None:
            settings[key] = getattr(args, key)
    return settings


class SB3Trainer:
    """stable-baselines3 PPO with its CNN on a pixel environment (the paper's setting)."""

    def __init__(
        self, args: argparse.Namespace, schedule: dict[str, Any], designs: Sequence[Design]
    ) -> None:
        self.args, self.schedule = args, schedule
        self.vec = make_vec_env(args, schedule, designs, args.seed)
        batch = schedule["n_steps"] * schedule["num_envs"]
        self.model = sb3.PPO(
            "CnnPolicy",
            self.vec,
            gamma=0.95,
            gae_lambda=0.65,
            n_steps=schedule["n_steps"],
            batch_size=batch // 8,
            n_epochs=3,
            ent_coef=0.01,
            clip_range=0.2,
            learning_rate=3e-4,
            max_grad_norm=0.5,
            vf_coef=0.5,
            seed=args.seed,
            verbose=0,
            device=args.device,
        )

    def learn(self, steps: int, ratio: float, episodes: list[set[str]] | None = None) -> None:
        self.vec.set_attr("ratio", ratio)
        tracker = SkillTracker() if episodes is not None else None
        self.model.learn(
            total_timesteps=steps,
            reset_num_timesteps=False,
            callback=tracker,
            progress_bar=not self.args.quiet,
        )
        if tracker is not None and episodes is not None:
            episodes.extend(tracker.episodes)

    def set_designs(self, designs: Sequence[Design]) -> None:
        base = _base_config(self.args, self.schedule["length"])
        self.vec.env_method("set_designs", _with_base(designs, base))

    def evaluate(self, skills: Sequence[str], seed: int) -> SkillStats:
        return evaluate(self.model, self.args, self.schedule, skills, seed)

    def timing(self) -> dict[str, float]:
        return {}

    def steps_run(self) -> int:
        return int(self.model.num_timesteps)

    def close(self) -> None:
        self.vec.close()


class SymbolicTrainer:
    """The small PyTorch PPO (``ppo_torch.py``, ``--policy``) on the symbolic observation, all
    games stepped in one process by ``CrafterSymbolicVectorEnv``."""

    def __init__(
        self, args: argparse.Namespace, schedule: dict[str, Any], designs: Sequence[Design]
    ) -> None:
        import torch
        from ppo_torch import PPO, GridLayout

        if args.device == "cpu":
            torch.set_num_threads(1)
        self.args, self.schedule = args, schedule
        self.base = _base_config(args, schedule["length"])
        self.skills = DesignSpec.from_env_id(args.env).skills
        self._vector = symbolic_vector_class(args.env, args.crafter_engine)
        self.vec = self._vector(
            schedule["num_envs"],
            self.base,
            designs=_with_base(designs, self.base),
            seed=args.seed,
        )
        settings = dict(args.ppo)
        layout = None
        if settings["policy"] == "conv":
            if args.env != "llmgym/CrafterSymbolic-v0":
                raise SystemExit(f"--policy conv: llmgym/CrafterSymbolic-v0 only, not {args.env}")
            from llmgym.envs.crafter.symbolic import CREATURES, MATERIALS, VIEW

            layout = GridLayout(VIEW[0], VIEW[1], len(MATERIALS) + len(CREATURES))
        anneal = settings.pop("anneal_lr")
        self.ppo = PPO(
            self.vec.single_observation_space.shape[0],
            int(self.vec.single_action_space.n),
            schedule["num_envs"],
            n_steps=schedule["n_steps"],
            anneal_steps=_total_steps(schedule) if anneal else 0,
            layout=layout,
            device=args.device,
            seed=args.seed,
            **settings,
        )
        self.progress = None
        if not args.quiet:
            from tqdm import tqdm

            self.progress = tqdm(total=_total_steps(schedule), unit="step", smoothing=0.05)

    def learn(self, steps: int, ratio: float, episodes: list[set[str]] | None = None) -> None:
        self.vec.ratio = ratio
        on_episode = None
        if episodes is not None:
            skills = self.skills

            def on_episode(episode: dict[str, Any]) -> None:
                achieved = episode["achievements"]
                episodes.append({name for name, hit in zip(skills, achieved, strict=True) if hit})

        before = self.ppo.num_timesteps
        self.ppo.learn(self.vec, steps, on_episode)
        if self.progress is not None:
            self.progress.update(self.ppo.num_timesteps - before)

    def set_designs(self, designs: Sequence[Design]) -> None:
        self.vec.set_designs(_with_base(designs, self.base))

    def evaluate(self, skills: Sequence[str], seed: int) -> SkillStats:
        """One episode in each of ``eval_episodes`` games of the original game, played by the
        current (stochastic) policy without updates."""
        count = self.schedule["eval_episodes"]
        vec = self._vector(count, self.base, seed=seed)
        observations, _ = vec.reset()
        achieved: list[set[str] | None] = [None] * count
        while any(a is None for a in achieved):
            observations, _, _, _, infos = vec.step(self.ppo.act(observations))
            for index in np.flatnonzero(infos.get("_episode", np.zeros(count, bool))):
                if achieved[index] is None:
                    hits = infos["achievements"][index]
                    achieved[index] = {n for n, hit in zip(self.skills, hits, strict=True) if hit}
        return SkillStats.from_episodes(achieved, skills, groups=min(3, count))

    def timing(self) -> dict[str, float]:
        return {key: round(value, 1) for key, value in self.ppo.timing.items()}

    def steps_run(self) -> int:
        return self.ppo.num_timesteps

    def close(self) -> None:
        """Save the policy (``policy.pt`` in ``--out``: the network's ``state_dict``)."""
        import torch

        if self.progress is not None:
            self.progress.close()
        torch.save(self.ppo.net.state_dict(), Path(self.args.out) / "policy.pt")


def symbolic_vector_class(env_id: str, crafter_engine: str = "arrays") -> Any:
    """The batched vector environment of ``--obs symbolic`` for ``env_id`` (Crafter's on
    ``crafter_engine``: ``"arrays"`` or ``"crafter"``)."""
    if env_id == "llmgym/CrafterSymbolic-v0":
        if crafter_engine == "arrays":
            from llmgym.envs.crafter.batched import CrafterBatchedVectorEnv

            return CrafterBatchedVectorEnv
        from llmgym.envs.crafter.vector import CrafterSymbolicVectorEnv

        return CrafterSymbolicVectorEnv
    if env_id == "llmgym/Heist-v0":
        from heist_symbolic import HeistSymbolicVectorEnv

        return HeistSymbolicVectorEnv
    raise SystemExit(f"--obs symbolic: llmgym/CrafterSymbolic-v0 or llmgym/Heist-v0, not {env_id}")


def crafter_engine(args: argparse.Namespace) -> str | None:
    """The engine the run's Crafter games ran on (None where the run plays no symbolic
    Crafter)."""
    if args.obs == "symbolic" and args.env == "llmgym/CrafterSymbolic-v0":
        return str(args.crafter_engine)
    return None


def software(portable: bool = True) -> dict[str, Any]:
    """What a run's numbers depend on beyond the code: the versions of torch, numpy, crafter
    and gymnasium, the CPU instruction set torch's kernels use, torch's thread count and the
    float kernels (portable or fast, :func:`portable_kernels.settings`)."""
    from importlib import metadata

    import torch

    versions: dict[str, Any] = {}
    for package in ("torch", "numpy", "crafter", "gymnasium"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    versions["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    versions["torch_threads"] = torch.get_num_threads()
    versions["kernels"] = portable_kernels.settings(portable)
    return versions


def _show_choices(args: argparse.Namespace, cycle: int, choices: dict[str, Any] | None) -> None:
    """Print what the designer chose for ``cycle`` and why (designers that say so)."""
    if choices is not None and not args.quiet:
        print(f"designs for cycle {cycle}: {choices['summary']}", flush=True)


def _agent(args: argparse.Namespace) -> dict[str, Any] | None:
    """The symbolic path's agent as the run JSON records it (None on pixels: SB3's CNN)."""
    if args.obs != "symbolic":
        return None
    return {"variant": args.variant, **args.ppo, "conv_channels": list(args.ppo["conv_channels"])}


def _total_steps(schedule: dict[str, Any]) -> int:
    return (
        schedule["cycles"] * (schedule["gen_steps"] + schedule["orig_steps"])
        + schedule["final_steps"]
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.env is None:
        args.env = (
            "llmgym/CrafterSymbolic-v0" if args.obs == "symbolic" else ("llmgym/CrafterPixels-v0")
        )
    if args.obs == "symbolic":
        symbolic_vector_class(args.env, args.crafter_engine)
    base_schedule = dict(SCHEDULES[args.schedule])
    if args.obs == "symbolic":
        base_schedule.update(SYMBOLIC_LAYOUT[args.schedule])
    schedule = dict(base_schedule)
    for key in (
        "cycles",
        "gen_steps",
        "orig_steps",
        "final_steps",
        "num_envs",
        "n_steps",
        "eval_episodes",
    ):
        if getattr(args, key) is not None:
            schedule[key] = getattr(args, key)
    if args.length is not None:
        schedule["length"] = args.length or None
    schedule_name = args.schedule if schedule == base_schedule else "custom"
    args.base_overrides = schedule.get("base", {})
    args.ppo = ppo_settings(args)
    if args.ppo["n_minibatches"] > schedule["num_envs"] * schedule["n_steps"]:
        raise SystemExit(
            f"--n-minibatches {args.ppo['n_minibatches']}: at most one per rollout step, "
            f"{schedule['num_envs'] * schedule['n_steps']} (--num-envs x --n-steps)"
        )
    if args.obs == "pixels" and (args.ppo != PPO_SETTINGS or args.variant):
        raise SystemExit("--policy, the PPO settings and --variant are --obs symbolic's")
    results_folder = args.results
    if results_folder is None:
        results_folder = ""
        if schedule_name != "custom" and (args.ppo == PPO_SETTINGS or args.variant):
            paper = schedule_name in ("paper", "heist")
            results_folder = str(RESULTS / "paper" if paper else RESULTS)
    if args.out is None:
        args.out = str(
            Path("runs/envgen")
            / Path(
                result_name(args.env, args.designer, schedule_name, args.seed, args.variant)
            ).stem
        )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = out / "designer"
    if args.designer.startswith("replay:") and Path(args.designer[7:]).resolve() == log.resolve():
        raise SystemExit(f"--out {out}: it holds the run to replay; give the new run another one")
    shutil.rmtree(log, ignore_errors=True)  # or this run's designer continues the earlier run's
    started, commit = time.perf_counter(), _commit()

    spec = DesignSpec.from_env_id(args.env)
    designer: Designer | None = None
    if args.designer == "curriculum":
        designer = CurriculumDesigner(
            spec, n=args.n_designs, cycles=schedule["cycles"], run_folder=log
        )
    elif args.designer != "none":
        try:
            designer = make_designer(
                spec,
                args.designer,
                n=args.n_designs,
                run_folder=log,
                base_url=args.base_url,
                prompt=args.prompt,
            )
        except ValueError as error:
            also = ", curriculum, none" if str(error).startswith("unknown designer") else ""
            raise SystemExit(f"--designer {args.designer}: {error}{also}") from None
    designs = designer.propose() if designer else []
    choices = designer.choices if designer else None
    _show_choices(args, 1, choices)
    trainer: SB3Trainer | SymbolicTrainer
    if args.obs == "symbolic":
        trainer = SymbolicTrainer(args, schedule, designs)
    else:
        trainer = SB3Trainer(args, schedule, designs)

    cycles = []
    for cycle in range(1, schedule["cycles"] + 1):
        # the baseline spends the designed phase's steps in the original game
        trainer.learn(schedule["gen_steps"], ratio=1.0 if designer else 0.0)
        trainer.learn(schedule["orig_steps"], ratio=0.0)
        stats = trainer.evaluate(spec.skills, seed=10_000 * cycle)
        cycles.append(
            {
                "cycle": cycle,
                "designs": [d.to_dict() for d in designs],
                **({"choices": choices} if choices is not None else {}),
                "eval": stats.to_dict(),
            }
        )
        if not args.quiet:
            top = sorted(stats.rates.items(), key=lambda item: -item[1][0])[:5]
            print(f"cycle {cycle}: " + ", ".join(f"{k} {m:.0f}%" for k, (m, _) in top), flush=True)
        if designer and cycle < schedule["cycles"]:
            designs = designer.propose(None if args.designer == "curriculum" else stats)
            choices = designer.choices
            _show_choices(args, cycle + 1, choices)
            trainer.set_designs(designs)

    episodes: list[set[str]] = []
    trainer.learn(schedule["final_steps"], ratio=0.0, episodes=episodes)
    trainer.close()
    final = SkillStats.from_episodes(episodes, spec.skills, groups=1)
    rates = {skill: mean for skill, (mean, _) in final.rates.items()}
    seconds = round(time.perf_counter() - started, 1)
    results = {
        "benchmark": "envgen",
        "llmgym_version": llmgym.__version__,
        "env": args.env,
        "obs": args.obs,
        "designer": args.designer,
        "schedule": schedule,
        "seed": args.seed,
        "skills": list(spec.skills),
        "cycles": cycles,
        "final": {"episodes": len(episodes), "success": rates, "score": score(args, rates)},
        "total_steps": _total_steps(schedule),
        "steps_run": trainer.steps_run(),
        "seconds": seconds,
        "timing": trainer.timing(),
        "agent": _agent(args),
        "crafter_engine": crafter_engine(args),
        "software": software(portable=not args.fast_kernels),
    }
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    if results_folder:
        write_json(
            Path(results_folder)
            / result_name(args.env, args.designer, schedule_name, args.seed, args.variant),
            {
                "benchmark": "envgen",
                "env": args.env,
                "obs": args.obs,
                "arm": arm(args.designer),
                "designer": args.designer,
                "schedule_name": schedule_name,
                "schedule": schedule,
                "seed": args.seed,
                "total_steps": results["total_steps"],
                "steps_run": results["steps_run"],
                "score": results["final"]["score"],
                "final_episodes": results["final"]["episodes"],
                "success": rates,
                "cycles": cycles,
                "seconds": seconds,
                "steps_per_s": round(results["total_steps"] / seconds, 1),
                "timing": results["timing"],
                "agent": results["agent"],
                "crafter_engine": results["crafter_engine"],
                "software": results["software"],
                "device": args.device,
                "command": "python benchmarks/envgen_crafter.py "
                + " ".join(sys.argv[1:] if argv is None else argv),
                "commit": commit,
                "date": datetime.date.today().isoformat(),
            },
        )
    plot(results, out / "success.png")
    print(
        f"final score {results['final']['score']:.2f} over {len(episodes)} episodes in "
        f"{seconds / 60:.1f} minutes; wrote {out / 'results.json'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
