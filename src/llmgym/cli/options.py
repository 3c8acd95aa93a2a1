"""The options of the commands that run agents (eval, match, collect), and what they build: the
agent, a multi-agent game's opponent, and where the environments live (here, on a server, in
Ray actors)."""

from __future__ import annotations

import argparse
from typing import Any

from llmgym.agents import AGENT_NAMES, Agent, HumanAgent, make_agent
from llmgym.cli.common import integer, json_object, number
from llmgym.runner.rollout import EnvSource

__all__ = [
    "add_agent_options",
    "add_placement_options",
    "add_record_frames_option",
    "agent",
    "connect",
    "env_source",
    "make_kwargs",
    "openai_options",
    "opponent_kwargs",
]


def add_agent_options(parser: argparse.ArgumentParser, *, agent: bool = True) -> None:
    """``--agent`` (unless ``agent`` is false), the model server's and sampling options,
    ``--concurrency``, ``--react``, ``--seed``, ``--config`` and ``--quiet``."""
    if agent:
        parser.add_argument(
            "--agent", default="oracle", help=f"one of: {', '.join(AGENT_NAMES)} (default: oracle)"
        )
    parser.add_argument("--base-url", help="chat-completions API root (default: $OPENAI_BASE_URL)")
    parser.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    parser.add_argument(
        "--temperature", type=number(0, inclusive=True), default=0.0, help="sampling temperature"
    )
    parser.add_argument("--max-tokens", type=integer(1), default=512, help="longest reply per turn")
    parser.add_argument(
        "--timeout",
        type=number(0),
        default=120.0,
        help="seconds to wait for a model's answer (connecting: 5)",
    )
    parser.add_argument(
        "--max-server-errors",
        type=integer(0),
        default=5,
        metavar="N",
        help="stop the run after N model requests in a row fail (0: never)",
    )
    parser.add_argument(
        "--native-tools",
        action="store_true",
        help="tool-use environments: send the tools for the server's native function calling "
        "(implies --no-react)",
    )
    parser.add_argument(
        "--concurrency", type=integer(1), default=1, help="episodes (or games) in flight at once"
    )
    parser.add_argument(
        "--react",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="ask for 'Thought: ... Action: ...' replies (--no-react: the action alone)",
    )
    parser.add_argument(
        "--seed",
        type=integer(0),
        default=0,
        help="episode i is reset with SEED + i; tasks drawn with it",
    )
    parser.add_argument(
        "--config",
        type=json_object,
        default=None,
        metavar="JSON",
        help="config overrides, e.g. '{\"width\": 8}'",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def add_placement_options(parser: argparse.ArgumentParser) -> None:
    """Where the environments live: here (default), on a server, or in Ray actors."""
    parser.add_argument(
        "--remote",
        metavar="URL",
        help="play environments served by `llmgym serve` at URL (token: $LLMGYM_SERVER_TOKEN)",
    )
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="play environments in Ray actors: auto, host:port, ray://host:port or local",
    )


def add_record_frames_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--record-frames",
        action="store_true",
        help="also record each step's picture (pixel environments, Crafter-v0, Heist-v0) in "
        "PATH.frames beside the trajectory file, for `llmgym view` and `llmgym render`",
    )


def openai_options(args: argparse.Namespace, spec: str) -> dict[str, Any]:
    """The keyword arguments of an ``openai:MODEL`` agent from the command line (none for
    other agents)."""
    if not spec.startswith("openai:"):
        return {}
    return {
        "base_url": args.base_url,
        "api_key": args.api_key,
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        "timeout": args.timeout,
        "max_consecutive_failures": args.max_server_errors or None,
        "native_tools": args.native_tools,
    }


def agent(args: argparse.Namespace) -> Agent:
    """The ``--agent``, its model server checked (:meth:`~llmgym.agents.Agent.preflight`)."""
    if args.agent == "human":
        return HumanAgent(react=args.react, read=_read_line)
    made = make_agent(
        args.agent, seed=args.seed, react=args.react, **openai_options(args, args.agent)
    )
    made.preflight()
    return made


def _read_line(prompt: str) -> str:
    """``input`` for the human agent: the end of the input is the person leaving, as Ctrl-C
    (not a failed episode after another)."""
    try:
        return input(prompt)
    except EOFError:
        print()
        raise KeyboardInterrupt from None


def make_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The ``gymnasium.make`` keyword arguments of ``--config``."""
    return {"config": args.config} if args.config else {}


def opponent_kwargs(args: argparse.Namespace, env_id: str) -> dict[str, Any]:
    """``gymnasium.make`` keyword arguments for ``--opponent`` (multi-agent games only)."""
    if not getattr(args, "opponent", None):
        return {}
    from llmgym.runner.matches import game_env_class, make_player

    game = game_env_class(env_id).game_class
    if args.opponent in game.policies:
        return {"opponent": args.opponent}
    return {
        "opponent": make_player(
            args.opponent,
            env_id,
            seed=args.seed,
            react=args.react,
            **openai_options(args, args.opponent),
        )
    }


def env_source(args: argparse.Namespace, env_id: str) -> EnvSource:
    """The environment id itself (made here), or a factory of the environment living on an
    ``llmgym serve`` server (``--remote``) or in Ray actors (``--ray``)."""
    if not (args.remote or args.ray):
        return env_id
    kwargs = {**make_kwargs(args), **opponent_kwargs(args, env_id)}
    if not isinstance(kwargs.get("opponent", ""), str):
        raise ValueError("with --remote or --ray, --opponent must be one of the game's policies")
    if args.remote:
        from llmgym.serving.client import remote_env_factory

        return remote_env_factory(args.remote, env_id, react=args.react, **kwargs)
    from llmgym.serving.ray_actors import ray_env_factory

    return ray_env_factory(env_id, react=args.react, **kwargs)


def connect(args: argparse.Namespace) -> None:
    """Check ``--remote`` and ``--ray``, and join the Ray cluster."""
    if args.remote and args.ray:
        raise ValueError("choose one of --remote and --ray")
    if args.ray:
        from llmgym.serving.ray_actors import init

        try:
            init(args.ray)
        except ConnectionError:
            raise ValueError(
                f"no Ray cluster is running at {args.ray!r}: start one with `ray start --head`, "
                "or use --ray local to start one in this process"
            ) from None
