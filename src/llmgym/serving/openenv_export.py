"""``llmgym export openenv ENV_ID DIR``: what publishing an environment as an OpenEnv Hugging Face
Space needs (``openenv.yaml``, ``pyproject.toml``, ``Dockerfile``, ``README.md`` and
``server/app.py``), generated, not pushed (``openenv push DIR`` publishes it), and what
``openenv validate DIR`` checks it with up to its runtime level: the manifest's ``validation``
block, and the episode its runtime level plays (``validation/runtime.json``, the oracle's).

The Space runs ``llmgym serve --protocol openenv --env ENV_ID``: the environment alone, in
OpenEnv's protocol at the root, with the server's limits.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

import llmgym
from llmgym.core.env import unwrapped_text_env
from llmgym.core.tasks import SPLITS
from llmgym.envs import get_entry

__all__ = ["export_openenv", "oracle_reward_range", "runtime_plan"]

PORT = 8000
MAX_PLAN_ACTIONS = 100
RUNTIME_PLAN = "validation/runtime.json"


def oracle_reward_range(env_id: str, episodes: int = 5) -> tuple[float, float]:
    """The reward range to declare: from 0 (or the lowest oracle return, if below) to the
    highest episode return of the oracle over the first ``episodes`` eval tasks."""
    env = gym.make(env_id, disable_env_checker=True)
    try:
        task_ids = list(unwrapped_text_env(env).task_ids("eval"))[:episodes]
        returns = [sum(_oracle_episode(env, task_id)[1]) for task_id in task_ids]
    finally:
        env.close()
    return min(0.0, *returns), max(returns, default=1.0)


def _oracle_episode(env: gym.Env, task_id: str) -> tuple[list[Any], list[float]]:
    """The oracle's actions in the episode of ``task_id``, and their rewards."""
    inner = unwrapped_text_env(env)
    env.reset(options={"task_id": task_id})
    actions, rewards, done = [], [], False
    while not done:
        actions.append(inner.oracle_action())
        _, reward, terminated, truncated, _ = env.step(actions[-1])
        rewards.append(float(reward))
        done = terminated or truncated
    return actions, rewards


def runtime_plan(env_id: str, task_id: str = "eval/00000") -> dict[str, Any]:
    """What ``openenv validate`` plays at its runtime level (``validation/runtime.json``): a
    reset to ``task_id`` and the oracle's actions in that episode (100 at most, OpenEnv's
    limit)."""
    env = gym.make(env_id, disable_env_checker=True)
    try:
        actions, _ = _oracle_episode(env, task_id)
    finally:
        env.close()
    return {
        "plan_schema_version": "1",
        "reset": {
            "episode_id": f"llmgym-oracle-{task_id.replace('/', '-')}",
            "seed": 0,
            "options": {"task_id": task_id},
        },
        "actions": [{"action": action} for action in actions[:MAX_PLAN_ACTIONS]],
    }


def export_openenv(
    env_id: str, directory: str | Path, reward_range: Sequence[float] | None = None
) -> list[Path]:
    """Write the Space's files for ``env_id`` into ``directory`` (made if missing); returns
    the paths written."""
    entry = get_entry(env_id)
    name = entry.name.lower()
    low, high = reward_range if reward_range is not None else oracle_reward_range(entry.id)
    env = gym.make(entry.id, disable_env_checker=True)
    try:
        counts = {split: len(unwrapped_text_env(env).task_ids(split)) for split in SPLITS}
        tools = [t["function"]["name"] for t in getattr(env.unwrapped, "tool_schemas", list)()]
    finally:
        env.close()
    extras = ",".join(e for e in ("serve", entry.extra) if e)
    files = {
        "openenv.yaml": _manifest(name, entry.id, (low, high), counts, tools),
        "pyproject.toml": _pyproject(name, entry.summary, extras),
        "Dockerfile": _dockerfile(entry.id, extras),
        "README.md": _readme(name, entry.id, entry.summary, (low, high), counts),
        "server/__init__.py": "",
        "server/app.py": _app(entry.id),
        RUNTIME_PLAN: json.dumps(runtime_plan(entry.id), indent=2) + "\n",
    }
    root = Path(directory)
    written = []
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def _manifest(
    name: str,
    env_id: str,
    reward_range: tuple[float, float],
    counts: dict[str, int],
    tools: list[str],
) -> str:
    task_counts = ", ".join(f"{split}: {count}" for split, count in counts.items())
    return f"""\
# OpenEnv manifest (spec_version 1, openenv 0.10) of {env_id}, written by `llmgym export openenv`
spec_version: 1
name: llmgym-{name}
version: {llmgym.__version__}
type: space
runtime: fastapi
app: server.app:app
port: {PORT}
validation:
  reward:
    # from 0 to the best oracle episode return over the first eval tasks
    range: [{reward_range[0]:g}, {reward_range[1]:g}]
    oracle_tolerance: 0.0
    floor_margin: 0.1
  resources: {{cpu: 1, memory_mb: 2048, disk_mb: 2048, episode_timeout_s: 600}}
  network: {{mode: no-network}}
  # the runtime level (`openenv validate --level runtime`) builds the Dockerfile, runs it and
  # plays {RUNTIME_PLAN}: the oracle's episode of eval/00000
  execution:
    kind: openenv_ws
    probe_path: {RUNTIME_PLAN}
    dockerfile: Dockerfile
    context: .
  capabilities:
    verifier: {{kind: reward_channel}}
    task_api: true
    set_state: false
    declared_tools: {json.dumps(tools)}
    declared_task_count: {{{task_counts}}}
  types:
    tags: [llmgym, text, multi-turn]
"""


def _pyproject(name: str, summary: str, extras: str) -> str:
    return f"""\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "openenv-llmgym-{name}"
version = "{llmgym.__version__}"
description = {json.dumps(summary)}
requires-python = ">=3.10"
dependencies = ["llmgym[{extras}]>={llmgym.__version__}"]

[project.scripts]
server = "server.app:main"

[tool.setuptools]
packages = ["server"]
"""


def _dockerfile(env_id: str, extras: str) -> str:
    probe = f"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{PORT}/health')"
    command = ["llmgym", "serve", "--protocol", "openenv", "--env", env_id]
    command += ["--host", "0.0.0.0", "--port", str(PORT)]
    return f"""\
FROM python:3.11-slim
WORKDIR /app
COPY . /app
RUN pip install --no-cache-dir "llmgym[{extras}]" && pip install --no-cache-dir --no-deps .
EXPOSE {PORT}
HEALTHCHECK CMD python -c "{probe}"
CMD {json.dumps(command)}
"""


def _readme(
    name: str,
    env_id: str,
    summary: str,
    reward_range: tuple[float, float],
    counts: dict[str, int],
) -> str:
    tasks = ", ".join(f"{count} {split}" for split, count in counts.items())
    return f"""\
---
title: llmgym {name}
sdk: docker
app_port: {PORT}
tags: [openenv, llmgym]
---

# llmgym {name} (OpenEnv)

{summary}

`{env_id}` from [llmgym](https://github.com/llmgym/llmgym), served in OpenEnv's protocol by
`llmgym serve --protocol openenv --env {env_id}`: WebSocket sessions at `/ws`, `/health`,
`/metadata`, `/schema` and the task API (`/{name}/splits`, `tasks`, `num_tasks`, `task`,
`task_range`; {tasks} tasks).

- Action: `{{"action": "<text>"}}`; any text is answered (an unusable one with
  `invalid_action: true`, never an error).
- Observation: `text`, `info`, `invalid_action`, `success`, `terminated`, `truncated`,
  `task_id`; `done` is `terminated or truncated`. Reward range: [{reward_range[0]:g},
  {reward_range[1]:g}].
- Reset: `seed`, `task_id` (e.g. `eval/00000`), `split`, `index`, `config`.

```python
from openenv import GenericEnvClient

with GenericEnvClient(base_url="https://<space>.hf.space").sync() as env:
    result = env.reset(split="eval", index=0)
    result = env.step({{"action": "..."}})
```
"""


def _app(env_id: str) -> str:
    return f'''\
"""The Space's application: llmgym serve, {env_id} alone in OpenEnv's protocol."""

from llmgym.serving.server import ServerSettings, create_app, serve

SETTINGS = ServerSettings(protocols=("openenv",), envs=("{env_id}",))
app = create_app(SETTINGS)


def main() -> None:
    serve("0.0.0.0", {PORT}, SETTINGS)


if __name__ == "__main__":
    main()
'''
