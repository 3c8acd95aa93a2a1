"""Adapters from llmgym environments to trainers' interfaces.

* :mod:`llmgym.integrations.trl` — TRL's ``GRPOTrainer(environment_factory=...)``: an
  environment class for any llmgym id, the matching task dataset, several environments mixed.
* :mod:`llmgym.integrations.agentgym` — AgentGym's families, integer task indices and data
  files (AgentEval's ``<family>_test.json``, AgentTraj's JSON arrays); its protocol is served by
  ``llmgym serve`` at ``/agentgym/<family>``.
* :mod:`llmgym.integrations.verifiers` — a verifiers v1 taskset and environment for any llmgym
  id (``vf-eval``), Python 3.11+.

Each module imports its trainer's packages only when used (install the matching extra).
"""
