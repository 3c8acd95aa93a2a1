"""Agents: anything that turns an observation (and ``info``) into a text action.

``Agent`` is the protocol every agent follows; ``make_agent("oracle" | "random" | ...)`` builds the
built-in ones by name, as the command line does.
"""

from llmgym.agents.base import Agent, OracleAgent, RandomAgent, make_agent

__all__ = ["Agent", "OracleAgent", "RandomAgent", "make_agent"]
