"""The core contract every llmgym environment fulfils, and the helpers environments share."""

from llmgym.core.cache import cache_dir
from llmgym.core.config import ConfigT, EnvConfig, knob
from llmgym.core.env import (
    RESET_OPTIONS,
    ActT,
    ObsT,
    ResetInfo,
    StepInfo,
    TextEnv,
    TextEnvLike,
    Transition,
    text_space,
    unwrapped_text_env,
)
from llmgym.core.pixels import PixelAction, PixelEnv
from llmgym.core.registry import EnvEntry, optional_import
from llmgym.core.tasks import SPLITS, Task, TaskIdRange, TaskRng, split_of
from llmgym.core.text import CHARSET, normalize_command, quote_action, sanitize_text

__all__ = [
    "CHARSET",
    "RESET_OPTIONS",
    "SPLITS",
    "ActT",
    "ConfigT",
    "EnvConfig",
    "EnvEntry",
    "ObsT",
    "PixelAction",
    "PixelEnv",
    "ResetInfo",
    "StepInfo",
    "Task",
    "TaskIdRange",
    "TaskRng",
    "TextEnv",
    "TextEnvLike",
    "Transition",
    "cache_dir",
    "knob",
    "normalize_command",
    "optional_import",
    "quote_action",
    "sanitize_text",
    "split_of",
    "text_space",
    "unwrapped_text_env",
]
