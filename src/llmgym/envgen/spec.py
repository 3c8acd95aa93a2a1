"""What an environment designer knows about an environment, read from the environment itself."""

from __future__ import annotations

import inspect
import json
import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator

from llmgym.core.config import EnvConfig, describe_allowed

__all__ = ["DesignSpec", "SkillStats"]

SUCCESS_SKILL = "success"


@dataclass(frozen=True)
class DesignSpec:
    """An environment as a designer sees it: description, skills, config schema and rules.

    Built from the registered class alone (:meth:`from_env_id`), so any registered environment
    with a config works: its docstring's *Description*, its ``skills`` (``("success",)`` when it
    declares none), ``config_class`` and its JSON Schema, ``design_notes``, ``skill_practice``,
    ``skill_requirements`` (each skill's prerequisite skills, the game's tech tree) and
    ``skill_practice_requirements`` (the skills that yield what a skill's practice world hands
    over, such as its starting tools).
    """

    env_id: str
    name: str
    description: str
    skills: tuple[str, ...]
    config_class: type[EnvConfig]
    notes: str = ""
    practice: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    requirements: Mapping[str, Sequence[str]] = field(default_factory=dict)
    practice_requirements: Mapping[str, Sequence[str]] = field(default_factory=dict)

    @classmethod
    def from_env_id(cls, env_id: str) -> DesignSpec:
        """The spec of a registered environment (its class is imported, not instantiated)."""
        entry_point = gym.spec(env_id).entry_point
        env_class = load_env_creator(entry_point) if isinstance(entry_point, str) else entry_point
        config_class = getattr(env_class, "config_class", None)
        if not isinstance(env_class, type) or not (
            isinstance(config_class, type) and issubclass(config_class, EnvConfig)
        ):
            raise ValueError(f"{env_id} has no config schema to design (no EnvConfig config_class)")
        return cls(
            env_id=env_id,
            name=env_id.split("/")[-1].rsplit("-v", 1)[0],
            description=_description(env_class),
            skills=tuple(getattr(env_class, "skills", ()) or (SUCCESS_SKILL,)),
            config_class=config_class,
            notes=str(getattr(env_class, "design_notes", "") or ""),
            practice=dict(getattr(env_class, "skill_practice", {}) or {}),
            requirements=dict(getattr(env_class, "skill_requirements", {}) or {}),
            practice_requirements=dict(getattr(env_class, "skill_practice_requirements", {}) or {}),
        )

    @property
    def schema(self) -> dict[str, Any]:
        return self.config_class.json_schema()

    def depths(self) -> dict[str, int]:
        """Each skill's tech-tree depth: 0 without prerequisites, else one more than its deepest
        prerequisite (``requirements``; skills it does not list have none).

        Raises:
            ValueError: For a prerequisite that is not a skill, or a cycle of prerequisites.
        """
        depths: dict[str, int] = {}

        def depth(skill: str, path: tuple[str, ...]) -> int:
            if skill in path:
                cycle = " -> ".join((*path[path.index(skill) :], skill))
                raise ValueError(f"{self.env_id}: skill requirements form a cycle: {cycle}")
            if skill not in depths:
                needs = tuple(self.requirements.get(skill, ()))
                unknown = sorted(set(needs) - set(self.skills))
                if unknown:
                    raise ValueError(
                        f"{self.env_id}: {skill!r} requires {unknown[0]!r}, which is not a skill"
                    )
                depths[skill] = 1 + max((depth(n, (*path, skill)) for n in needs), default=-1)
            return depths[skill]

        return {skill: depth(skill, ()) for skill in self.skills}

    def tech_tree_order(self) -> tuple[str, ...]:
        """The skills as a walk down the tech tree: the first pass takes one skill per depth,
        shallowest first, then the next pass the next skill of each depth, and so on. Within a
        depth, skills that more skills need (directly or through others) come first, then
        declaration order. Without ``requirements`` this is the declaration order.

        For Crafter the first pass is collect_wood, place_table, make_wood_pickaxe,
        collect_stone, make_stone_pickaxe, collect_iron, make_iron_pickaxe, collect_diamond.
        """
        depths = self.depths()
        needed_by: dict[str, set[str]] = {skill: set() for skill in self.skills}
        for skill in sorted(self.skills, key=depths.__getitem__, reverse=True):
            for need in self.requirements.get(skill, ()):
                needed_by[need] |= {skill} | needed_by[skill]
        levels: dict[int, list[str]] = {}
        for skill in self.skills:
            levels.setdefault(depths[skill], []).append(skill)
        for level in levels.values():
            level.sort(key=lambda skill: -len(needed_by[skill]))  # stable: declaration order
        passes = max(len(level) for level in levels.values())
        return tuple(
            levels[d][i] for i in range(passes) for d in sorted(levels) if i < len(levels[d])
        )

    def parameter_lines(self) -> list[str]:
        """One line per config knob: ``- name: allowed (default d). description``."""
        lines = []
        for name, field_schema in self.schema["properties"].items():
            default = field_schema.get("default")
            text = f"- {name}: {describe_allowed(field_schema)} (default {json.dumps(default)})"
            if field_schema.get("description"):
                text += f". {field_schema['description']}"
            lines.append(text)
        return lines


def _description(env_class: type) -> str:
    doc = inspect.cleandoc(env_class.__doc__ or "")
    match = re.search(r"## Description\n(.*?)(?:\n## |\Z)", doc, re.DOTALL)
    text = match.group(1) if match else doc.split("\n\n")[0]
    return " ".join(text.split())


@dataclass
class SkillStats:
    """Per-skill success rates in percent: ``{skill: (mean, std)}`` over evaluation runs."""

    rates: dict[str, tuple[float, float]]

    @classmethod
    def from_episodes(
        cls, achieved: Sequence[Iterable[str]], skills: Sequence[str], groups: int = 3
    ) -> SkillStats:
        """From the skills each evaluation episode achieved. Episodes are split into ``groups``
        consecutive evaluation runs; the mean and standard deviation are over those runs (as
        EnvGen reports them over evaluation seeds)."""
        episodes = [set(e) for e in achieved]
        if not episodes:
            return cls({skill: (0.0, 0.0) for skill in skills})
        groups = max(1, min(groups, len(episodes)))
        size = math.ceil(len(episodes) / groups)
        chunks = [episodes[i : i + size] for i in range(0, len(episodes), size)]
        rates = {}
        for skill in skills:
            per_run = [100.0 * sum(skill in e for e in chunk) / len(chunk) for chunk in chunks]
            rates[skill] = (
                statistics.fmean(per_run),
                statistics.pstdev(per_run) if len(per_run) > 1 else 0.0,
            )
        return cls(rates)

    @classmethod
    def from_trajectories(
        cls, trajectories: Sequence[Any], skills: Sequence[str], groups: int = 3
    ) -> SkillStats:
        """From evaluation trajectories (:class:`~llmgym.runner.trajectories.Trajectory`): each
        episode achieved its recorded ``skills``, plus ``"success"`` when it succeeded."""
        achieved = [set(t.skills) | ({SUCCESS_SKILL} if t.success else set()) for t in trajectories]
        return cls.from_episodes(achieved, skills, groups)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SkillStats:
        """Accepts ``{"skill": 42.0}`` (EnvGen's files), ``{"skill": [mean, std]}`` or
        ``{"skill": {"mean": m, "std": s}}``; values in percent."""
        rates = {}
        for skill, value in data.items():
            if isinstance(value, Mapping):
                mean, std = float(value.get("mean", 0.0)), float(value.get("std", 0.0))
            elif isinstance(value, (list, tuple)):
                mean, std = float(value[0]), float(value[1]) if len(value) > 1 else 0.0
            else:
                mean, std = float(value), 0.0
            if not (0.0 <= mean <= 100.0 and std >= 0.0):
                raise ValueError(
                    f"stats for {skill!r}: mean {mean} must be a percentage 0-100, std >= 0"
                )
            rates[str(skill)] = (mean, std)
        return cls(rates)

    @classmethod
    def load(cls, path: str | Path) -> SkillStats:
        """Read a stats JSON file (any form :meth:`from_dict` accepts)."""
        return cls.from_dict(json.loads(Path(path).read_text()))

    def to_dict(self) -> dict[str, dict[str, float]]:
        return {
            skill: {"mean": round(m, 2), "std": round(s, 2)} for skill, (m, s) in self.rates.items()
        }

    def lines(self) -> list[str]:
        """``- skill: 38% +/- 6%`` lines for prompts."""
        return [f"- {skill}: {m:.0f}% +/- {s:.0f}%" for skill, (m, s) in self.rates.items()]

    def weakest(self, skills: Sequence[str]) -> list[str]:
        """``skills`` ordered from least to most successful (unknown skills count as 0%)."""
        return sorted(
            skills, key=lambda skill: (self.rates.get(skill, (0.0, 0.0))[0], skills.index(skill))
        )
