"""Tool-use environments (AgentGym's Weather, Movie, Academia, Sheet and Todo), each backed by a
deterministic simulated service; the shared machinery is in :mod:`llmgym.envs.tools.base`."""
