"""WebArena, offline: generated, self-hosted web sites driven through accessibility trees.

Modules: :mod:`~llmgym.envs.webarena.web` (the WSGI site framework),
:mod:`~llmgym.envs.webarena.database` (generated sqlite data and its per-episode reset),
:mod:`~llmgym.envs.webarena.axtree` (HTML to an accessibility tree),
:mod:`~llmgym.envs.webarena.browser` (tabs, history, forms, WebArena's actions),
:mod:`~llmgym.envs.webarena.sites` (the sites and one environment's set of them),
:mod:`~llmgym.envs.webarena.tasks` (templates, evaluators, the oracle's page view), the sites
(:mod:`~llmgym.envs.webarena.shop`, :mod:`~llmgym.envs.webarena.admin`) and their templates
(``*_tasks``), and :mod:`~llmgym.envs.webarena.env` (the environment). WebArena's own task
configs (``source="webarena"``): :mod:`~llmgym.envs.webarena.original` (the loader and its
``llmgym data`` source), :mod:`~llmgym.envs.webarena.live` (Playwright and Chromium),
:mod:`~llmgym.envs.webarena.evaluators` (WebArena's evaluators) and
:mod:`~llmgym.envs.webarena.original_play` (episodes and the oracle).
"""

from llmgym.envs.webarena.env import WebArenaConfig, WebArenaEnv

__all__ = ["WebArenaConfig", "WebArenaEnv"]
