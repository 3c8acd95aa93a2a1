"""SQL: text-to-SQL over generated sqlite databases (or BIRD's), with the agent's SQL run in a
sandbox.

* :mod:`llmgym.envs.sql.env` — :class:`SQLEnv` and :class:`SQLConfig`.
* :mod:`llmgym.envs.sql.sandbox` — :class:`SqlSandbox`, safe execution of untrusted SQL.
* :mod:`llmgym.envs.sql.schema` — tables, columns and relations (data in
  ``envs/data/sql/schemas.json``).
* :mod:`llmgym.envs.sql.databases` — the five generated databases.
* :mod:`llmgym.envs.sql.templates` — the question templates (families of phrasings and SQL).
* :mod:`llmgym.envs.sql.questions` — the question bank, its splits and gold results.
* :mod:`llmgym.envs.sql.reading` — a question read back into its query (the oracle's).
* :mod:`llmgym.envs.sql.bird` — BIRD-SQL's original questions and databases (``source="bird"``).
"""

from llmgym.envs.sql.env import SQLConfig, SQLEnv
from llmgym.envs.sql.sandbox import QueryResult, SqlSandbox

__all__ = ["QueryResult", "SQLConfig", "SQLEnv", "SqlSandbox"]
