"""How an LLM designer talks to its model: a prompt style writes the requests and reads the
replies.

``generic`` works for any environment with a config schema: it lists the schema's knobs and asks
for ``{"environments": [{"purpose": ..., "config": {...}}]}``. ``envgen`` is EnvGen's published
Crafter prompt (aszala/EnvGen ``environment_generation/generate_initial_environment.py`` and
``update_environments.py``), word for word where EnvGen's text allows it, with a reader for
EnvGen's reply format (``Environment N:`` and a fenced JSON block of
``environment_settings`` and ``inventory_settings`` per environment) that maps it onto
:class:`~llmgym.envs.crafter.CrafterConfig`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from llmgym.envgen.parsing import (
    Design,
    ParsedReply,
    extract_json,
    parse_designs,
    validate_overrides,
)
from llmgym.envgen.spec import DesignSpec, SkillStats
from llmgym.envs.crafter.config import (
    BIOMES,
    MATERIAL_ITEMS,
    RARITIES,
    RARITY_LEVELS,
    TOOL_ITEMS,
    CrafterConfig,
)

__all__ = [
    "PROMPT_STYLES",
    "EnvGenPrompt",
    "GenericPrompt",
    "envgen_overrides",
    "initial_prompt",
    "prompt_style",
    "repair_prompt",
    "update_prompt",
]


def initial_prompt(spec: DesignSpec, n: int, stats: SkillStats | None = None) -> str:
    """The first request of the generic style."""
    parts = [
        f'You design training environments for an AI agent that is learning "{spec.name}". '
        f"Your job is to design {n} environments that teach the agent the skills it lacks. They "
        "should not be trivially easy: put the agent in situations where it can practise and "
        "learn on its own.",
        f"About the game:\n{spec.description}",
        "The skills the agent has to learn:\n" + "\n".join(f"- {skill}" for skill in spec.skills),
        "You control these parameters. Leave a parameter out to keep its default:\n"
        + "\n".join(spec.parameter_lines()),
    ]
    if spec.notes:
        parts.append(f"Rules of the game that a designer must respect:\n{spec.notes}")
    if stats is not None:
        parts.append(
            "How well the agent does in the original game now (success rate, mean +/- std):\n"
            + "\n".join(stats.lines())
        )
    parts.append(_format_request(n))
    return "\n\n".join(parts)


def update_prompt(spec: DesignSpec, stats: SkillStats, previous: Sequence[Design], n: int) -> str:
    """The generic style's adaptation request, sent in the same conversation after a cycle."""
    shown = json.dumps({"environments": [d.to_dict() for d in previous]}, indent=1)
    return "\n\n".join(
        [
            "The agent trained in your environments. In the original game it now reaches these "
            "success rates (mean +/- std over evaluation runs):\n" + "\n".join(stats.lines()),
            f"The environments it trained in were:\n```json\n{shown}\n```",
            f"Design {n} new environments that target what the agent still cannot do. In each "
            "purpose, say which of these scores you used. Keep to the parameters and rules above.",
            _format_request(n),
        ]
    )


def repair_prompt(problems: Sequence[str], n: int) -> str:
    """The generic style's answer to a reply with invalid environments."""
    return f"{_problem_list(problems)}Send all {n} environments again, corrected. " + (
        _format_request(n)
    )


def _problem_list(problems: Sequence[str]) -> str:
    listed = "\n".join(f"- {problem}" for problem in problems)
    return f"Some of those environments are invalid:\n{listed}\n\n"


def _format_request(n: int) -> str:
    example = {
        "environments": [
            {
                "purpose": "<one sentence: what this environment teaches>",
                "config": {"<parameter>": "<value>"},
            }
        ]
    }
    return (
        f"Reply with one JSON object holding exactly {n} environments, in a ```json block, "
        "shaped like this:\n"
        f"```json\n{json.dumps(example, indent=1)}\n```"
    )


class GenericPrompt:
    """The prompt for any environment: its description, skills, config schema and
    ``design_notes``; one conversation across all calls."""

    name = "generic"
    new_conversation_at_first_update = False
    """EnvGen starts its first adaptation request in a new conversation."""

    def first(
        self,
        spec: DesignSpec,
        n: int,
        stats: SkillStats | None,
        previous: Sequence[Design],
    ) -> str:
        """The first message of a conversation (``stats``: the agent's success, if known)."""
        return initial_prompt(spec, n, stats)

    def update(
        self, spec: DesignSpec, stats: SkillStats, previous: Sequence[Design], n: int
    ) -> str:
        """An adaptation request in a running conversation."""
        return update_prompt(spec, stats, previous, n)

    def again(self, n: int) -> str:
        """A request for different designs without new success rates."""
        return f"Design {n} different environments. {_format_request(n)}"

    def repair(self, problems: Sequence[str], n: int) -> str:
        """The problems of the last reply, sent back."""
        return repair_prompt(problems, n)

    def parse(self, reply: str, spec: DesignSpec) -> ParsedReply:
        """The designs of a reply, validated against the spec's config."""
        return parse_designs(reply, spec.config_class)


# EnvGen's Crafter prompt ---------------------------------------------------------------------
# The text below is EnvGen's (aszala/EnvGen, environment_generation/*.py, Copyright (c) 2024
# Abhay Zala, MIT License); only the number of environments and the list of skills are filled in.

_NUMBERS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")

_ENVGEN_PARAMETERS: dict[str, tuple[str, ...]] = {
    "target_biome": (*BIOMES[1:], BIOMES[0]),  # EnvGen lists "natural" last
    **{f"{resource}_rarity": RARITY_LEVELS for resource in RARITIES},
}
_ENVGEN_ITEMS = {**dict.fromkeys(MATERIAL_ITEMS, 9), **dict.fromkeys(TOOL_ITEMS, 1)}
_ENVGEN_SECTIONS = ("environment_settings", "inventory_settings")

_ENVGEN_CONSTRAINTS = """\
natural biome will set the environment to have all the biomes
coal, iron, and diamond can only be found in a mountain biome
trees and cows can only be found in a grassland biome
skeletons can only be found in a mountain biome and will shoot arrows at the agent
zombies can be found anywhere and will track/chase the agent
agents can only drink water
diamond can only be mined with a iron_pickaxe
iron can only be mined with a stone_pickaxe
stone can only be mined with a wood_pickaxe
you need a table to craft items and a furnace to craft iron items"""

_ENVGEN_SLEEP = """\
agent must sleep in order to get the wake up achievement
during sleep the agent cannot move and may be woken up by attacking monsters or by the sun rising"""

_ENVGEN_DEFAULTS = """\
You do not need to use every parameter setting, you can skip it to set to its standard setting.
You can leave some of them as default if they are not specifically needed for the task."""

_ENVGEN_TEMPLATE = """\
Environment 1:
```json
{
    "environment_settings": {
        ...
    },
    "inventory_settings": {
        ...
    }
}
```
Environment 2:
..."""


def _count(n: int) -> str:
    return _NUMBERS[n - 1] if n <= len(_NUMBERS) else str(n)


def _envgen_settings() -> str:
    parameters = "\n".join(f"{k}: {' | '.join(v)}" for k, v in _ENVGEN_PARAMETERS.items())
    items = "\n".join(f"{k}: 0-{high}" for k, high in _ENVGEN_ITEMS.items())
    return (
        f"Here is a list of parameters you can control when making an environment:\n{parameters}"
        f"\n\nHere is a list of items the agent can start with:\n{items}\n"
    )


def _envgen_scores(spec: DesignSpec, stats: SkillStats) -> str:
    """``collect_coal: 38% +/- 6%``, one line per skill, rounded as EnvGen rounds them."""
    rates = [stats.rates.get(skill, (0.0, 0.0)) for skill in spec.skills]
    return "\n".join(
        f"{skill}: {round(m)}% +/- {round(s)}%"
        for skill, (m, s) in zip(spec.skills, rates, strict=True)
    )


def _to_envgen(config: Mapping[str, Any]) -> dict[str, Any]:
    """A Crafter design's overrides in EnvGen's form: the inventory under
    ``inventory_settings``, every other knob under ``environment_settings``."""
    settings = {k: v for k, v in config.items() if k != "inventory"}
    return {
        "environment_settings": settings,
        "inventory_settings": dict(config.get("inventory", {})),
    }


class EnvGenPrompt(GenericPrompt):
    """EnvGen's Crafter prompt: role and task, the skills, the parameter and item vocabulary, the
    constraints in plain English, and the output format (``Environment N:`` and a ```json block
    per environment). The first adaptation request is EnvGen's update prompt — the agent's
    ``name: m% +/- s%`` per skill and the previous environments — in a new conversation, as
    EnvGen's ``update_environments.py`` builds it; later ones (``Those environments resulted in
    the agent improving up to these scores: ...``) continue that conversation."""

    name = "envgen"
    new_conversation_at_first_update = True

    def first(
        self,
        spec: DesignSpec,
        n: int,
        stats: SkillStats | None,
        previous: Sequence[Design],
    ) -> str:
        skills = "\n".join(spec.skills)
        intro = (
            'You are a environment designer agent for a game called "Crafter".\n'
            f"Your job is to design {_count(n)} environments which can be used to teach an agent "
            "how to play.\n"
        )
        not_easy = (
            "The environments should not be super easy, but instead focus on putting the agent "
            "in a situation where it can learn on its own eventually.\n\n"
        )
        control = (
            "You can control what the environments look like and what items the agent may start "
            "with.\n\n"
            f"Here is a list of things an agent would need to learn how to do:\n{skills}\n\n"
        )
        output = (
            "Output in the following format and include a brief explanation of the purpose of "
            "each environment"
        )
        if stats is None:
            return (
                f"{intro}{not_easy}{control}{_envgen_settings()}\n\n"
                f"Here is a list of constraints:\n{_ENVGEN_CONSTRAINTS}\n\n\n"
                f"{_ENVGEN_DEFAULTS}\n\n{output}: \n\n{_ENVGEN_TEMPLATE}\n"
            )
        shown = "".join(
            f"Environment {k}:\n```json\n{json.dumps(_to_envgen(d.config), indent=4)}\n```\n"
            for k, d in enumerate(previous, start=1)
        )
        learnt_in = ""
        if previous:
            learnt_in = (
                "Here is the set of environments that the agent learned the above tasks in:\n"
                f"{shown}\n\n"
            )
        return (
            f"{intro}The agent already knows certain tasks, but it needs to learn how to do the "
            f"rest.\n{not_easy}How can we update the pretraining environments to improve agent "
            f"performance overall?\n\n{control}"
            "Here is a list how well the agent already knows some of the tasks:\n"
            f"{_envgen_scores(spec, stats)}\n\n\n{learnt_in}{_envgen_settings()}\n\n"
            f"Here is a list of constraints:\n{_ENVGEN_SLEEP}\n{_ENVGEN_CONSTRAINTS}\n\n\n"
            f"{_ENVGEN_DEFAULTS}\n\n{output} and explicitly mention what information you used "
            "to come up with the environment settings. For example, you can mention the agents' "
            f"current knowledge of a specific task:\n\n{_ENVGEN_TEMPLATE}\n"
        )

    def update(
        self, spec: DesignSpec, stats: SkillStats, previous: Sequence[Design], n: int
    ) -> str:
        return (
            "Those environments resulted in the agent improving up to these scores: \n"
            f"{_envgen_scores(spec, stats)}\n\n"
            "Could you generate new environments based on these scores?\n"
        )

    def again(self, n: int) -> str:
        return (
            f"Could you generate {_count(n)} different environments? Output in the same format:"
            f"\n\n{_ENVGEN_TEMPLATE}\n"
        )

    def repair(self, problems: Sequence[str], n: int) -> str:
        return (
            f"{_problem_list(problems)}Send all {_count(n)} environments again, corrected, in "
            f"the same format:\n\n{_ENVGEN_TEMPLATE}\n"
        )

    def parse(self, reply: str, spec: DesignSpec) -> ParsedReply:
        result = ParsedReply()
        environments = _envgen_environments(reply)
        if not environments:
            result.problems.append(
                "Could not read the reply: no ```json block. Send each environment as "
                "'Environment N:' followed by a ```json block."
            )
            return result
        for number, (purpose, value) in enumerate(environments, start=1):
            if isinstance(value, str):
                result.problems.append(f"Environment {number}: {value}")
                continue
            overrides, problems = envgen_overrides(value)
            clean, errors = validate_overrides(spec.config_class, overrides)
            problems += errors
            result.problems += [f"Environment {number}: {problem}" for problem in problems]
            if not clean:
                if not problems:
                    result.problems.append(
                        f"Environment {number}: sets no parameter (that is the original game)"
                    )
                continue
            (result.partial if problems else result.designs).append(Design(purpose, clean))
        return result


_ENVGEN_HEADER = re.compile(r"(?im)^[ \t>*#_-]*(?:\d+\.\s*)?Environment\s*(\d+)\b[^\n]*$")
_HEADER_WORDS = re.compile(r"(?i)^[>*#_\s-]*(?:\d+\.\s*)?environment\s*\d+\s*[:.)-]*[*_\s]*")
_FENCED = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)


def _envgen_environments(reply: str) -> list[tuple[str, Any]]:
    """``(purpose, value)`` per environment of a reply in EnvGen's format: the text around each
    fenced JSON block in its ``Environment N:`` section (or, without headers, after the block)
    is the purpose; a value that cannot be read is the reason, as a string."""
    text = reply[:200_000]
    starts = [match.start() for match in _ENVGEN_HEADER.finditer(text)]
    if starts:
        sections = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    else:
        blocks = [match.start() for match in _FENCED.finditer(text)]
        sections = [text[a:b] for a, b in zip(blocks, [*blocks[1:], len(text)], strict=True)]
    environments: list[tuple[str, Any]] = []
    for section in sections:
        found = _FENCED.findall(section)
        if not found:
            continue
        prose = " ".join(_FENCED.sub(" ", section).replace("**", "").split())
        purpose = _HEADER_WORDS.sub("", prose).strip(" *_-")
        for block in found:
            try:
                value = extract_json(f"```json\n{block}\n```")
            except ValueError as error:
                environments.append((purpose, f"could not read its JSON block: {error}"))
                continue
            for item in value if isinstance(value, list) else [value]:
                environments.append((purpose, item))
    return environments


def envgen_overrides(environment: Any) -> tuple[dict[str, Any], list[str]]:
    """One environment of EnvGen's format as Crafter config overrides, restricted to the
    vocabulary EnvGen's prompt offers. Returns the overrides and the problems (naming the
    section, the key, the value and what is allowed). Inventory counts outside their range are
    clamped into it (EnvGen's runs clamp them too); anything else not allowed is left out."""
    if not isinstance(environment, Mapping):
        return {}, [f"expected an object with {' and '.join(_ENVGEN_SECTIONS)}"]
    problems: list[str] = []
    for section in sorted(set(environment) - set(_ENVGEN_SECTIONS)):
        problems.append(
            f"{section}: unknown section; the sections are {', '.join(_ENVGEN_SECTIONS)}"
        )
    overrides: dict[str, Any] = {}
    settings = environment.get("environment_settings") or {}
    inventory_settings = environment.get("inventory_settings") or {}
    for section, value in (
        ("environment_settings", settings),
        ("inventory_settings", inventory_settings),
    ):
        if not isinstance(value, Mapping):
            problems.append(f"{section}: expected an object, got {value!r:.60}")
    if not isinstance(settings, Mapping):
        settings = {}
    if not isinstance(inventory_settings, Mapping):
        inventory_settings = {}
    for key, value in settings.items():
        allowed = _ENVGEN_PARAMETERS.get(key)
        where = f"environment_settings.{key}"
        if allowed is None:
            problems.append(
                f"{where}: unknown parameter; the parameters are {', '.join(_ENVGEN_PARAMETERS)}"
            )
            continue
        level = " ".join(str(value).replace("_", " ").lower().split())
        if level not in allowed:
            problems.append(f"{where}: {value!r} is not allowed; allowed: {' | '.join(allowed)}")
            continue
        overrides[key] = level
    inventory: dict[str, int] = {}
    for item, value in inventory_settings.items():
        high = _ENVGEN_ITEMS.get(item)
        where = f"inventory_settings.{item}"
        if high is None:
            problems.append(f"{where}: unknown item; the items are {', '.join(_ENVGEN_ITEMS)}")
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = float("nan")
        if isinstance(value, bool) or not number.is_integer():
            problems.append(f"{where}: {value!r} is not a whole number in 0-{high}")
            continue
        count = min(high, max(0, int(number)))
        if count != number:
            problems.append(f"{where}: {value!r} is outside 0-{high}; clamped to {count}")
        if count:
            inventory[item] = count
    if inventory:
        overrides["inventory"] = inventory
    return overrides, problems


PROMPT_STYLES: dict[str, type[GenericPrompt]] = {"generic": GenericPrompt, "envgen": EnvGenPrompt}
"""The prompt styles by name."""


def prompt_style(spec: DesignSpec, name: str = "auto") -> GenericPrompt:
    """The prompt style ``name`` for ``spec``; ``auto`` is ``envgen`` for Crafter's configs
    (EnvGen's prompt) and ``generic`` for every other environment.

    Raises:
        ValueError: For an unknown style, or ``envgen`` for an environment that is not Crafter.
    """
    crafter = issubclass(spec.config_class, CrafterConfig)
    if name == "auto":
        name = "envgen" if crafter else "generic"
    if name not in PROMPT_STYLES:
        raise ValueError(f"prompt={name!r}: choose from auto, {', '.join(PROMPT_STYLES)}")
    if name == "envgen" and not crafter:
        raise ValueError(
            f"prompt='envgen' is EnvGen's Crafter prompt; {spec.env_id} is not Crafter "
            "(use 'generic')"
        )
    return PROMPT_STYLES[name]()
