"""SQL: text-to-SQL over generated sqlite databases, with the agent's SQL run in a sandbox.

* :mod:`llmgym.envs.sql.env` — :class:`SQLEnv` and :class:`SQLConfig`.
* :mod:`llmgym.envs.sql.sandbox` — :class:`SqlSandbox`, safe execution of untrusted SQL.
* :mod:`llmgym.envs.sql.databases` — the five generated databases.
* :mod:`llmgym.envs.sql.questions` — questions and gold SQL from templates.
"""

from llmgym.envs.sql.env import SQLConfig, SQLEnv
from llmgym.envs.sql.sandbox import QueryError, QueryResult, SqlSandbox

__all__ = ["QueryError", "QueryResult", "SQLConfig", "SQLEnv", "SqlSandbox"]
