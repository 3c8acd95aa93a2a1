"""Episodes of WebArena's original tasks in a real browser, and their oracle.

:class:`OriginalEpisodes` is what :class:`~llmgym.envs.webarena.env.WebArenaEnv` plays when its
config names the ``webarena`` source: each reset opens a fresh Chromium context on the task's
start URLs (one tab each, WebArena's ``" |AND| "``) with the task's storage state, each step
applies one action of WebArena's grammar through :class:`~llmgym.envs.webarena.live.LiveBrowser`,
and ``stop`` ends the episode with WebArena's evaluators
(:mod:`~llmgym.envs.webarena.evaluators`).

The oracle reads the answer key, as WebArena has no other: it replays the task's
``reference_action_sequence`` (WebArena's Playwright lines, ``page.get_by_role(...).click()``,
``.fill(...)``, ``.press(...)``, ``page.goto(...)``, ``page.stop(...)``, found in its example
configs) translated into the grammar on the ids of the tree in view; without one it opens the
``reference_url`` (``url_match``) and stops with the reference answer (``string_match``). So it
solves string_match and url_match tasks, and program_html tasks only where the config carries
the actions.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from llmgym.envs.webarena.evaluators import ChatJudge, Evaluation, Judge, evaluate, url_match
from llmgym.envs.webarena.live import CHROMIUM_VARIABLE, LiveBrowser, find_chromium
from llmgym.envs.webarena.original import (
    SITE_VARIABLES,
    OriginalTask,
    split_tasks,
    storage_state_path,
)
from llmgym.errors import DataError

__all__ = ["JUDGE_VARIABLE", "Finish", "OriginalEpisodes", "oracle_answer"]

JUDGE_VARIABLE = "LLMGYM_WEBARENA_JUDGE_MODEL"
"""The environment variable naming the fuzzy_match judge's model, asked at ``$OPENAI_BASE_URL``
(an environment variable, not a config field: a server's clients must not point the judge,
and the operator's API key with it, at another server)."""

_CHAIN_CALL = re.compile(r"\.(?![^()]*\))")


@dataclass
class Finish:
    """How an episode ended: the score, each evaluator's score and what was left undecided."""

    reward: float
    evaluation: Evaluation
    answer: str


def oracle_answer(config: Mapping[str, Any]) -> str:
    """The reference answer of a task, as a ``stop`` answer ("" where it has none)."""
    references = config["eval"].get("reference_answers") or {}
    if "exact_match" in references:
        return str(references["exact_match"])
    if "must_include" in references:
        return ", ".join(str(v) for v in references["must_include"])
    fuzzy = references.get("fuzzy_match")
    if fuzzy == "N/A":
        return "N/A"
    if isinstance(fuzzy, list):
        return "; ".join(str(v) for v in fuzzy)
    return ""


@dataclass(frozen=True)
class _Step:
    """One line of a reference action sequence: ``verb`` and its target and argument."""

    verb: str
    role: str = ""
    name: str = ""
    argument: str = ""


def _parse_reference(line: str) -> _Step | None:
    """A Playwright line of WebArena's ``reference_action_sequence``; ``None`` if it is none
    the oracle can play."""
    if not line.startswith("page."):
        return None
    role = name = ""
    chain = _CHAIN_CALL.split(line)[1:]
    for index, item in enumerate(chain):
        try:
            call = ast.parse(item, mode="eval").body
        except SyntaxError:
            return None
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            return None
        args = [a.value for a in call.args if isinstance(a, ast.Constant)]
        keywords = {
            k.arg: k.value.value for k in call.keywords if isinstance(k.value, ast.Constant)
        }
        verb = call.func.id
        last = index == len(chain) - 1
        if verb == "get_by_role" and args and not last:
            role, name = str(args[0]), str(keywords.get("name", ""))
        elif last and verb in ("goto", "stop") and index == 0:
            return _Step(verb, argument=str(args[0]) if args else "")
        elif last and verb in ("click", "fill", "press") and role:
            return _Step(verb, role, name, str(args[0]) if args else "")
        else:
            return None
    return None


@dataclass
class OriginalEpisodes:
    """The tasks of one WebArena directory and the browser that plays them."""

    data_dir: Path
    chromium: str
    viewport: tuple[int, int]
    current_viewport_only: bool
    settle_ms: int
    judge: Judge | None
    settings: tuple[Any, ...] = ()
    """What the config said of the browser and judge (a change needs new ones)."""
    browser: LiveBrowser | None = None
    task: OriginalTask | None = None
    config: dict[str, Any] = field(default_factory=dict)
    observation: str = ""
    url: str = ""
    _oracle_step: int = 0

    @staticmethod
    def settings_of(data_dir: Path, config: Any) -> tuple[Any, ...]:
        """The fields of a :class:`~llmgym.envs.webarena.env.WebArenaConfig` that this
        object is made from."""
        return (
            data_dir,
            config.viewport_width,
            config.viewport_height,
            config.current_viewport_only,
            config.settle_ms,
            os.environ.get(CHROMIUM_VARIABLE, ""),
            os.environ.get(JUDGE_VARIABLE, ""),
            os.environ.get("OPENAI_BASE_URL", ""),
        )

    @classmethod
    def from_config(cls, data_dir: Path, config: Any) -> OriginalEpisodes:
        """The episodes a :class:`~llmgym.envs.webarena.env.WebArenaConfig` describes."""
        judge: Judge | None = None
        model = os.environ.get(JUDGE_VARIABLE, "")
        if model:
            from llmgym.llm import ChatClient

            judge = ChatJudge(ChatClient(model))
        return cls(
            data_dir,
            find_chromium(),
            (config.viewport_width, config.viewport_height),
            config.current_viewport_only,
            config.settle_ms,
            judge,
            cls.settings_of(data_dir, config),
        )

    def reset(self, split: str, task_id: str, train_tasks: str) -> str:
        """Open the task's start pages; returns the first observation."""
        self.task = split_tasks(self.data_dir, train_tasks)[split][task_id]
        self.config = self.task.config()
        storage = self.config.get("storage_state")
        state_path = storage_state_path(self.data_dir, str(storage)) if storage else None
        if state_path is not None and not state_path.is_file():
            raise DataError(
                f"{state_path}: the storage state of WebArena task {self.task.task_id} is "
                "missing (WebArena's browser_env/auto_login.py writes it, signed in to the "
                "sites at the addresses in SHOPPING, REDDIT, ...)"
            )
        if self.browser is None:
            self.browser = LiveBrowser(
                self.chromium,
                viewport=self.viewport,
                current_viewport_only=self.current_viewport_only,
                settle_ms=self.settle_ms,
            )
        start_urls = str(self.config["start_url"]).split(" |AND| ")
        self.browser.open(start_urls, state_path)
        self._oracle_step = 0
        self.refresh()
        return self.observation

    @property
    def allowed_hosts(self) -> frozenset[str]:
        """The hosts ``goto`` may open: the sites' addresses and the task's start pages."""
        urls = [os.environ.get(name, "") for name in SITE_VARIABLES]
        urls += str(self.config.get("start_url", "")).split(" |AND| ")
        return frozenset(urlsplit(u).netloc.lower() for u in urls if u)

    def refresh(self) -> None:
        """Observe the active tab anew."""
        assert self.browser is not None
        self.observation = self.browser.observe()
        self.url = self.browser.url

    def act(self, verb: str, arguments: tuple[str, ...]) -> str:
        """Apply a parsed action other than ``stop``; returns why it failed ("" if done)."""
        assert self.browser is not None
        error = self.browser.act(verb, arguments, self.allowed_hosts)
        if not error or verb not in ("click", "hover", "type"):
            self.refresh()
        return error

    def finish(self, answer: str) -> Finish:
        """Evaluate the episode that ``stop [answer]`` ended."""
        assert self.browser is not None
        evaluation = evaluate(self.config, answer, self.browser, self.judge)
        return Finish(evaluation.score, evaluation, answer)

    # ------------------------------------------------------------------ oracle and sampling
    def oracle_action(self) -> str:
        """The next action of the oracle (see the module docstring)."""
        assert self.browser is not None
        lines = (self.config.get("reference_action_sequence") or {}).get("action_sequence")
        if isinstance(lines, list) and lines:
            return self._replay(lines)
        spec = self.config["eval"]
        reference_url = str(spec.get("reference_url") or "")
        if (
            "url_match" in spec["eval_types"]
            and reference_url
            and not url_match(reference_url, self.url)
        ):
            return f"goto [{reference_url.split(' |OR| ')[0]}]"
        return f"stop [{oracle_answer(self.config)}]"

    def _replay(self, lines: list[Any]) -> str:
        assert self.browser is not None
        if self._oracle_step >= len(lines):
            return f"stop [{oracle_answer(self.config)}]"
        step = _parse_reference(str(lines[self._oracle_step]))
        if step is None:
            self._oracle_step += 1
            return self._replay(lines)
        if step.verb in ("goto", "stop"):
            self._oracle_step += 1
            return f"{step.verb} [{step.argument}]"
        nodes = list(self.browser.nodes.values())
        wanted = step.name.lower()
        found = next(
            (n for n in nodes if n.role == step.role and n.name.lower() == wanted), None
        ) or next((n for n in nodes if n.role == step.role and wanted in n.name.lower()), None)
        if found is None:
            return "scroll [down]"
        self._oracle_step += 1
        if step.verb == "fill":
            return f"type [{found.node_id}] [{step.argument}] [0]"
        if step.verb == "press":
            return f"press [{step.argument}]"
        return f"click [{found.node_id}]"

    def sample_action(self, rng: np.random.Generator) -> str:
        """A random link click or scroll (links only: a random button could change the
        sites' data for every later episode)."""
        assert self.browser is not None
        links = sorted(n.node_id for n in self.browser.nodes.values() if n.role == "link")
        if rng.random() < 0.2 or not links:
            return "scroll [down]"
        return f"click [{links[int(rng.integers(len(links)))]}]"

    def close(self) -> None:
        if self.browser is not None:
            self.browser.close()
            self.browser = None
