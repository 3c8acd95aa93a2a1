"""SearchQA: retrieval question answering over a generated, offline encyclopedia.

``corpus`` generates the encyclopedia and its BM25 index, ``questions`` the single-hop, bridge
and comparison questions and their exact-match scoring, ``env`` the environment.
"""

from llmgym.envs.searchqa.corpus import Encyclopedia
from llmgym.envs.searchqa.env import SearchQAConfig, SearchQAEnv
from llmgym.envs.searchqa.questions import exact_match, normalize_answer

__all__ = ["Encyclopedia", "SearchQAConfig", "SearchQAEnv", "exact_match", "normalize_answer"]
