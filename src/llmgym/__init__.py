"""llmgym: Gymnasium-compatible text environments for LLM agents.

import gymnasium as gym
import llmgym  # registers the "llmgym/..." ids

env = gym.make("llmgym/Wordle-v0")
observation, info = env.reset(seed=0, options={"split": "eval"})
observation, reward, terminated, truncated, info = env.step("crane")
"""

from llmgym.core import EnvConfig, Task, TaskRng, TextEnv, Transition, knob
from llmgym.core.registry import register_entries
from llmgym.envs import ENVIRONMENTS, get_entry, plugin_entries
from llmgym.errors import ConfigError, MissingDependencyError
from llmgym.serving import register_remote_env

__version__ = "0.1.0"

__all__ = [
    "ENVIRONMENTS",
    "ConfigError",
    "EnvConfig",
    "MissingDependencyError",
    "Task",
    "TaskRng",
    "TextEnv",
    "Transition",
    "__version__",
    "get_entry",
    "knob",
]

register_entries(ENVIRONMENTS)
plugin_entries()  # registers the environments of installed packages (entry points llmgym.envs)

register_remote_env()
