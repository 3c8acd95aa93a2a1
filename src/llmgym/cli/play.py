"""``llmgym play``: play an environment in the terminal."""

from __future__ import annotations

import argparse
from typing import Any

import gymnasium as gym

from llmgym.cli.common import ENV_ID_HELP, EXIT_INTERRUPTED, integer, resolve_id
from llmgym.core import unwrapped_text_env

_KEYS = (
    "Type an action; ':actions' lists valid ones, ':hint' asks the oracle, ':quit' leaves "
    "(and shows the answer)."
)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    play = commands.add_parser("play", help="play an environment in the terminal")
    play.add_argument("env_id", help=ENV_ID_HELP)
    play.add_argument(
        "--seed", type=integer(0), default=None, help="draws the task (default: random)"
    )
    play.add_argument(
        "--split", choices=("train", "eval"), default="train", help="the split tasks come from"
    )
    play.add_argument("--task-id", default=None, help="play exactly this task, e.g. eval/00003")
    play.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    env = gym.make(resolve_id(args.env_id))
    options: dict[str, Any] = {"split": args.split}
    if args.task_id:
        options = {"task_id": args.task_id}
    observation, info = env.reset(seed=args.seed, options=options)
    print(f"Task {info['task_id']}: {info['instruction']}")
    print(_KEYS + "\n")
    total = 0.0
    while True:
        print(observation)
        try:
            action = input("> ")
        except (EOFError, KeyboardInterrupt) as stop:
            print()
            _reveal(env)
            return EXIT_INTERRUPTED if isinstance(stop, KeyboardInterrupt) else 0
        if action.strip() == ":quit":
            _reveal(env)
            return 0
        if action.strip() == ":actions":
            print(_actions_text(env, info))
            continue
        if action.strip() == ":hint":
            print(f"oracle: {unwrapped_text_env(env, 'llmgym play').oracle_action()}")
            continue
        observation, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        if terminated or truncated:
            print(observation)
            outcome = (
                "success" if info.get("success") else ("out of turns" if truncated else "failed")
            )
            print(f"\nEpisode over: {outcome}, total reward {total:.2f}.")
            return 0


def _actions_text(env: gym.Env, info: dict[str, Any]) -> str:
    """``:actions``: the admissible actions, or the rules where the environment does not list
    them (a Wordle guess is any word of its list)."""
    actions = info.get("admissible_actions")
    if actions:
        return ", ".join(map(str, actions))
    rules = getattr(env.unwrapped, "rules", None)
    return "This environment does not list its actions." + (f" {rules()}" if rules else "")


def _reveal(env: gym.Env) -> None:
    """What a player who leaves may want to know: the answer where the environment can
    ``reveal()`` it (Wordle's word), else the oracle's next move."""
    unwrapped = env.unwrapped
    reveal = getattr(unwrapped, "reveal", None)
    if callable(reveal):
        print(f"The answer was: {reveal()}")
    elif hasattr(unwrapped, "oracle_action"):
        print(f"The oracle's next move would have been: {unwrapped.oracle_action()}")
