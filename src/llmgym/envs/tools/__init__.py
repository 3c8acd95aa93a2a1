"""Tool-use environments (AgentGym's Weather, Movie, Academia, Sheet and Todo), each backed by a
deterministic simulated service, and what they share, by concern:

* :mod:`~llmgym.envs.tools.schema` — what a tool is as data: argument types, parameters, JSON
  Schemas, the checking of a call's arguments;
* :mod:`~llmgym.envs.tools.toolkit` — toolkits: groups of tools (``@tool`` methods) over the
  episode's state, listed and called by name;
* :mod:`~llmgym.envs.tools.calls` — reading a tool call from an agent's reply, writing one;
* :mod:`~llmgym.envs.tools.answers` — a question's true answer and how given answers match it;
* :mod:`~llmgym.envs.tools.planning` — goal templates and the oracle's plans;
* :mod:`~llmgym.envs.tools.progress` — AgentGym's progress rate;
* :mod:`~llmgym.envs.tools.services` — data files and helpers of the simulated services;
* :mod:`~llmgym.envs.tools.env` — :class:`ToolEnv`, a thin environment over toolkits.

The names needed to write a tool environment are importable from here; the exceptions a tool
or a goal template raises (``ToolError``, ``NoGoal``) are :mod:`llmgym.errors`'.
"""

from llmgym.envs.tools.answers import Answer, AnswerKind, answers_match, normalize_answer
from llmgym.envs.tools.calls import ToolCall, format_call, format_react, parse_tool_call
from llmgym.envs.tools.env import AGENTGYM_FORMAT_ERROR, ToolConfig, ToolEnv
from llmgym.envs.tools.planning import (
    DerivedCall,
    Episode,
    Goals,
    GoalTemplate,
    PlanStep,
    Results,
    call,
    finish_with,
    goal_template,
)
from llmgym.envs.tools.schema import ArgType, Param, Tool
from llmgym.envs.tools.services import (
    ItemSplit,
    load_data,
    parse_iso_date,
    prompt_texts,
    search_results,
)
from llmgym.envs.tools.toolkit import (
    CurrentDate,
    Toolkit,
    ToolTable,
    tool,
)

__all__ = [
    "AGENTGYM_FORMAT_ERROR",
    "Answer",
    "AnswerKind",
    "ArgType",
    "CurrentDate",
    "DerivedCall",
    "Episode",
    "GoalTemplate",
    "Goals",
    "ItemSplit",
    "Param",
    "PlanStep",
    "Results",
    "Tool",
    "ToolCall",
    "ToolConfig",
    "ToolEnv",
    "ToolTable",
    "Toolkit",
    "answers_match",
    "call",
    "finish_with",
    "format_call",
    "format_react",
    "goal_template",
    "load_data",
    "normalize_answer",
    "parse_iso_date",
    "parse_tool_call",
    "prompt_texts",
    "search_results",
    "tool",
]
