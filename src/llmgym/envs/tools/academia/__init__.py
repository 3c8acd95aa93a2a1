"""Academia: answer questions about papers, authors, venues and citations by walking two graphs
(PaperNet of citations, AuthorNet of collaborations), as in AgentGym's academia tools.

* :mod:`~llmgym.envs.tools.academia.graph` — the generated papers and authors;
* :mod:`~llmgym.envs.tools.academia.toolkit` — the graph tools;
* :mod:`~llmgym.envs.tools.academia.goals` — the goal templates;
* :mod:`~llmgym.envs.tools.academia.env` — :class:`AcademiaEnv`.
"""

from llmgym.envs.tools.academia.env import AcademiaConfig, AcademiaEnv
from llmgym.envs.tools.academia.graph import Author, Paper, ScholarGraph, scholar_graph

__all__ = ["AcademiaConfig", "AcademiaEnv", "Author", "Paper", "ScholarGraph", "scholar_graph"]
