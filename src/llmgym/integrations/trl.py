"""llmgym environments for TRL's ``GRPOTrainer(environment_factory=...)``.

TRL (>= 1.16) runs a multi-turn rollout as tool calls: before each rollout it calls
``reset(**row)`` on an environment instance with every column of the dataset row and appends the
returned text to the prompt; every other public method of the instance's class is a tool the
model may call (its schema comes from the type hints and the Google-style docstring); an
optional ``get_reward()`` scores the finished rollout. This module gives that class for any
llmgym id::

    from trl import GRPOConfig, GRPOTrainer
    from llmgym.integrations.trl import environment_factory, task_dataset

    trainer = GRPOTrainer(
        model="Qwen/Qwen3-0.6B",
        train_dataset=task_dataset("llmgym/Wordle-v0"),
        environment_factory=environment_factory("llmgym/Wordle-v0"),
        args=GRPOConfig(max_completion_length=1024),
    )

* Text environments expose one tool, ``act(action)``: one action, answered by the next
  observation.
* Tool-use environments (Weather, Movie, Academia, Sheet, Todo: those with ``tool_schemas()``)
  expose their own tools, one method each, with the environment's parameter names, types and
  descriptions; ``finish(answer)`` ends the episode.
* A tool's result is the observation, followed by a note in brackets when the action was
  invalid or the episode ended (solved or not, the return, or the turn limit); calls after the
  end say the episode is over. Nothing raises for a bad action.
* ``get_reward()`` is the episode's return (the sum of its rewards).

:func:`task_dataset` builds the matching dataset (one row per task, with the prompt), and
:func:`environment_factories` / :func:`mixed_task_dataset` train on several environments at
once (TRL's dict mode: each row's ``environment`` column picks its environment). A
:class:`~llmgym.wrappers.HorizonCurriculum` passed as ``curriculum=`` limits the turns per
episode; :func:`horizon_callback` moves it with the trainer's step.
"""

from __future__ import annotations

import inspect
import json
import re
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Literal, Union, cast

import gymnasium as gym

import llmgym  # noqa: F401  (registers the environments)
from llmgym.core.env import unwrapped_text_env
from llmgym.wrappers.horizon import HorizonCurriculum, HorizonLimit

__all__ = [
    "LlmgymTRLEnv",
    "environment_factories",
    "environment_factory",
    "horizon_callback",
    "mixed_task_dataset",
    "task_dataset",
]

RESET_COLUMNS = ("task_id", "split", "config", "seed")
"""The dataset columns :meth:`LlmgymTRLEnv.reset` reads; it ignores the others."""

_TEXT_TOOL_HINT = (
    "Play by calling the `act` tool with one action at a time; its result is the next "
    "observation. Stop calling tools when the episode is over."
)
_TOOL_ENV_HINT = (
    "Reach the goal by calling the tools, one call at a time; their results come back to you. "
    "Call `finish` with your answer to end the task."
)


class LlmgymTRLEnv:
    """One llmgym environment as a TRL environment: construct once, ``reset`` per rollout.

    Subclasses made by :func:`environment_factory` fix :attr:`env_id` (and the ``gym.make``
    arguments and curriculum); only they are instantiated. Public attributes are plain values
    or properties, so TRL does not take them for tools.
    """

    env_id: ClassVar[str] = ""
    make_kwargs: ClassVar[Mapping[str, Any]] = {}
    curriculum: ClassVar[HorizonCurriculum | None] = None

    def __init__(self) -> None:
        if not self.env_id:
            raise TypeError("use llmgym.integrations.trl.environment_factory(env_id)")
        env = gym.make(self.env_id, **dict(self.make_kwargs))
        self._horizon = HorizonLimit(env, self.curriculum) if self.curriculum else None
        self.env: gym.Env = self._horizon or env
        self.episode_return = 0.0
        self.done = False
        self.success = False
        self.steps = 0
        self.info: dict[str, Any] = {}

    def reset(self, **row: Any) -> str:
        """Start the episode a dataset row names (``task_id``, ``split``, ``config``, ``seed``;
        other columns are ignored); return the instruction and the first observation."""
        options: dict[str, Any] = {}
        for key in ("task_id", "split"):
            if row.get(key) is not None:
                options[key] = row[key]
        config = row.get("config")
        if isinstance(config, str):
            config = json.loads(config) if config else None
        if config:
            options["config"] = config
        seed = row.get("seed")
        observation, info = self.env.reset(
            seed=None if seed is None else int(seed), options=options or None
        )
        self.episode_return = 0.0
        self.done = False
        self.success = False
        self.steps = 0
        self.info = info
        instruction = str(info.get("instruction", ""))
        text = str(observation)
        return text if instruction in text else f"{instruction}\n\n{text}"

    def get_reward(self) -> float:
        """The episode's return: the sum of its rewards so far."""
        return self.episode_return

    def _play(self, action: str) -> str:
        """Step the environment with ``action``; the observation with notes for the model."""
        if self.done:
            return (
                "[The episode is over; no more actions are accepted. "
                f"Return: {self.episode_return:g}.]"
            )
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        self.episode_return += float(reward)
        self.success = bool(info.get("success", False))
        self.done = bool(terminated or truncated)
        self.info = info
        notes = []
        if info.get("invalid_action"):
            notes.append("[Invalid action: nothing changed.]")
        if terminated:
            outcome = "solved" if self.success else "not solved"
            notes.append(f"[Episode over: {outcome}. Return: {self.episode_return:g}.]")
        elif truncated:
            if self._horizon is not None and info.get("truncated_by") == "horizon":
                limit = f"the curriculum's limit of {self._horizon.limit} turns"
            else:
                limit = "the turn limit"
            notes.append(f"[Episode over: {limit} was reached. Return: {self.episode_return:g}.]")
        return "\n".join([str(observation), *notes])


class _TextActions(LlmgymTRLEnv):
    def act(self, action: str) -> str:
        """Take one action in the environment.

        Args:
            action: The action, written as the environment's rules say (e.g. a guess, a move or
                a command).

        Returns:
            The next observation, with a bracketed note when the action was invalid or the
            episode ended.
        """
        return self._play(action)


def environment_factory(
    env_id: str,
    *,
    curriculum: HorizonCurriculum | None = None,
    **make_kwargs: Any,
) -> type[LlmgymTRLEnv]:
    """A zero-argument TRL environment class for ``env_id`` (pass it as ``environment_factory``).

    Args:
        env_id: A registered llmgym id, e.g. ``"llmgym/Wordle-v0"``.
        curriculum: Truncate episodes at this :class:`~llmgym.wrappers.HorizonCurriculum`'s
            current horizon (shared by every instance).
        **make_kwargs: Passed to ``gymnasium.make`` (config knobs, ``max_episode_steps``).

    Returns:
        A subclass of :class:`LlmgymTRLEnv` named after the environment (TRL names the reward
        column after it); text environments have the tool ``act``, tool-use environments one
        method per tool.
    """
    probe = gym.make(env_id, **make_kwargs)
    schemas = getattr(probe.unwrapped, "tool_schemas", None)
    probe.close()
    name = _class_name(env_id)
    attributes: dict[str, Any] = {
        "env_id": env_id,
        "make_kwargs": dict(make_kwargs),
        "curriculum": curriculum,
        "__doc__": f"TRL environment for {env_id} (see llmgym.integrations.trl).",
        "__module__": __name__,
    }
    if schemas is None:
        return type(name, (_TextActions,), attributes)
    react = make_kwargs.get("action_format") == "react"
    for schema in schemas():
        function = schema["function"]
        if hasattr(LlmgymTRLEnv, function["name"]) or function["name"] in attributes:
            raise ValueError(f"{env_id}: tool {function['name']!r} clashes with an attribute")
        attributes[function["name"]] = _tool_method(function, react)
    return type(name, (LlmgymTRLEnv,), attributes)


def environment_factories(
    env_ids: Sequence[str] | Mapping[str, str],
    *,
    curriculum: HorizonCurriculum | None = None,
) -> dict[str, type[LlmgymTRLEnv]]:
    """``{name: class}`` for TRL's multi-environment mode (``environment_factory=`` a dict).

    Args:
        env_ids: llmgym ids (named by :func:`environment_name`, e.g. ``"wordle"``), or a mapping
            from the name each row's ``environment`` column uses to the id.
        curriculum: Shared by every environment (see :func:`environment_factory`).
    """
    named = env_ids if isinstance(env_ids, Mapping) else {environment_name(i): i for i in env_ids}
    return {name: environment_factory(i, curriculum=curriculum) for name, i in named.items()}


def environment_name(env_id: str) -> str:
    """The short name of an id in multi-environment datasets: ``"llmgym/Wordle-v0"`` ->
    ``"wordle"``."""
    return re.sub(r"-v\d+$", "", env_id.rsplit("/", 1)[-1]).lower()


def task_dataset(
    env_id: str,
    split: str = "train",
    n: int | None = None,
    *,
    config: Mapping[str, Any] | None = None,
    environment: str | None = None,
) -> Any:
    """A ``datasets.Dataset`` with one row per task of ``split``, as TRL's GRPOTrainer reads it.

    Columns: ``prompt`` (one user message: the rules and how to play with the tools; ``reset``
    appends the instruction and first observation), ``task_id``, ``split``, ``config`` (JSON
    text, ``""`` for the default) and, when ``environment`` is given, ``environment``.

    Args:
        env_id: A registered llmgym id.
        split: ``"train"`` or ``"eval"``.
        n: Keep the first ``n`` tasks (default: all).
        config: Config overrides for every row's episode.
        environment: The name in TRL's multi-environment mode (see :func:`mixed_task_dataset`).
    """
    import datasets

    env = gym.make(env_id, **dict(config or {}))
    unwrapped = env.unwrapped
    task_ids = list(unwrapped_text_env(env).task_ids(split))
    if n is not None:
        task_ids = task_ids[:n]
    prompt = [{"role": "user", "content": _rules(unwrapped)}]
    env.close()
    columns: dict[str, list[Any]] = {
        "prompt": [prompt] * len(task_ids),
        "task_id": task_ids,
        "split": [split] * len(task_ids),
        "config": [json.dumps(dict(config)) if config else ""] * len(task_ids),
    }
    if environment is not None:
        columns["environment"] = [environment] * len(task_ids)
    return datasets.Dataset.from_dict(columns)


def mixed_task_dataset(
    env_ids: Sequence[str] | Mapping[str, str],
    split: str = "train",
    n: int | None = None,
    *,
    seed: int = 0,
) -> Any:
    """The rows of :func:`task_dataset` for several environments, shuffled together, with the
    ``environment`` column naming each row's environment as :func:`environment_factories` does.

    Args:
        env_ids: As for :func:`environment_factories`.
        split: ``"train"`` or ``"eval"``.
        n: Tasks per environment (default: all).
        seed: Seeds the shuffle.
    """
    import datasets

    named = env_ids if isinstance(env_ids, Mapping) else {environment_name(i): i for i in env_ids}
    parts = [task_dataset(i, split, n, environment=name) for name, i in named.items()]
    return datasets.concatenate_datasets(parts).shuffle(seed=seed)


def horizon_callback(curriculum: HorizonCurriculum) -> Any:
    """A ``transformers.TrainerCallback`` that sets ``curriculum``'s position to the trainer's
    global step at the start of each step (for ``unit="step"``)."""
    import transformers

    class HorizonCallback(transformers.TrainerCallback):
        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            curriculum.set_position(state.global_step)

    return HorizonCallback()


# ------------------------------------------------------------------------------ helpers
def _class_name(env_id: str) -> str:
    words = re.split(r"[^0-9A-Za-z]+", re.sub(r"-v\d+$", "", env_id.rsplit("/", 1)[-1]))
    return "".join(word[:1].upper() + word[1:] for word in words if word) + "Env"


def _rules(unwrapped: Any) -> str:
    """The prompt's text: the rules, and how to play through native tool calls. Tool-use
    environments' own rules describe a text call format, so their service and notes are used."""
    parts: tuple[str, ...]
    if hasattr(unwrapped, "tool_schemas"):
        parts = (unwrapped.service, unwrapped.notes, _TOOL_ENV_HINT)
    else:
        parts = (unwrapped.rules(), _TEXT_TOOL_HINT)
    return "\n\n".join(part for part in parts if part)


_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict,
}


def _annotation(schema: Mapping[str, Any]) -> Any:
    """The Python type hint whose JSON schema (as transformers writes it) is ``schema``."""
    if "anyOf" in schema:
        return Union[tuple(_annotation(option) for option in schema["anyOf"])]  # noqa: UP007
    kind = schema.get("type")
    if isinstance(kind, list):
        return Union[tuple(_annotation({"type": k}) for k in kind)]  # noqa: UP007
    if kind == "array":
        items = schema.get("items")
        return types.GenericAlias(list, (_annotation(items),)) if items else list
    if kind == "string" and schema.get("enum"):
        return Literal[tuple(schema["enum"])]
    return _JSON_TYPES[str(kind)]


def _tool_method(function: Mapping[str, Any], react: bool) -> Callable[..., str]:
    """A method calling the tool ``function`` (an OpenAI function schema) in the environment,
    with the signature, type hints and Google-style docstring TRL builds its schema from."""
    tool_name = function["name"]
    parameters = function["parameters"]
    required = set(parameters.get("required", ()))

    def call(self: LlmgymTRLEnv, **arguments: Any) -> str:
        given = {key: value for key, value in arguments.items() if value is not None}
        if react:
            action = f"{tool_name} with Action Input: {json.dumps(given, ensure_ascii=False)}"
        else:
            action = json.dumps({"name": tool_name, "arguments": given}, ensure_ascii=False)
        return self._play(action)

    signature_parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    arg_docs = []
    for name, schema in parameters.get("properties", {}).items():
        hint = _annotation(schema)
        if name not in required:
            hint = Union[hint, None]  # noqa: UP007
        annotations[name] = hint
        signature_parameters.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=inspect.Parameter.empty if name in required else None,
                annotation=hint,
            )
        )
        description = " ".join(str(schema.get("description", name)).split())
        arg_docs.append(f"    {name}: {description}")
    annotations["return"] = str
    call.__name__ = call.__qualname__ = tool_name
    call.__annotations__ = annotations
    # transformers reads a tool's schema from its signature: this method's is built, not written
    cast(Any, call).__signature__ = inspect.Signature(signature_parameters, return_annotation=str)
    description = " ".join(str(function.get("description", tool_name)).split())
    sections = [description]
    if arg_docs:
        sections.append("Args:\n" + "\n".join(arg_docs))
    sections.append(
        "Returns:\n    The tool's result, with a bracketed note when the call was invalid or the "
        "episode ended."
    )
    call.__doc__ = "\n\n".join(sections)
    return call
