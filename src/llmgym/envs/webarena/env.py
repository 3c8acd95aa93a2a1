"""WebArena, offline: web tasks on generated, self-hosted sites, seen as accessibility trees."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from llmgym.core import EnvConfig, Task, TextEnv, Transition, knob
from llmgym.core.cache import bounded_cache
from llmgym.core.tasks import TaskRng, split_of
from llmgym.envs.webarena import (  # noqa: F401 (they register templates)
    admin_tasks,
    forum_tasks,
    gitlab_tasks,
    shop_tasks,
    wiki_tasks,
)
from llmgym.envs.webarena.browser import ACTION_HELP, Browser, parse_action
from llmgym.envs.webarena.evaluators import Judge
from llmgym.envs.webarena.forum_data import FORUM_SESSION
from llmgym.envs.webarena.gitlab_data import GITLAB_SESSION
from llmgym.envs.webarena.original import parse_train_tasks, split_tasks
from llmgym.envs.webarena.original_play import OriginalEpisodes
from llmgym.envs.webarena.shop_data import ADMIN_SESSION, SHOP_SESSION
from llmgym.envs.webarena.sites import Web
from llmgym.envs.webarena.tasks import (
    INSTANCES_PER_SLOT,
    Data,
    Instance,
    PageView,
    template,
    templates,
)
from llmgym.errors import ConfigError
from llmgym.originals import data_dir_knob, data_dir_of, source_knob

__all__ = ["WebArenaConfig", "WebArenaEnv", "instances"]

EVAL_FRACTION = 0.2
MAX_DRAWS = 2_000
"""Draws a template gets to find its instances."""
MAX_STALE_DRAWS = 100
"""A template whose last this many draws found nothing new has no more instances to give."""
START_COOKIES = {
    "localhost:7770": {"shop_sid": SHOP_SESSION},
    "localhost:7780": {"admin_sid": ADMIN_SESSION},
    "localhost:9999": {"forum_sid": FORUM_SESSION},
    "localhost:8023": {"gitlab_sid": GITLAB_SESSION},
}
"""The sessions every episode starts with: signed in to every site, as in WebArena."""


@dataclass(frozen=True)
class WebArenaConfig(EnvConfig):
    """Knobs of :class:`WebArenaEnv`."""

    viewport_lines: int = knob(
        80, low=10, high=2_000, doc="Lines of the accessibility tree in view; scroll to see more."
    )
    train_per_template: int = knob(
        40, low=1, high=300, doc="Train instances per intent template (fewer where it has fewer)."
    )
    eval_per_template: int = knob(
        10, low=1, high=100, doc="Eval instances per intent template (fewer where it has fewer)."
    )
    data_seed: int = knob(
        0, low=0, high=2**31 - 1, doc="Seed of the sites' generated data (another store, ...)."
    )
    source: str = source_knob("webarena")
    data_dir: str = data_dir_knob()
    viewport_width: int = knob(
        1280, low=320, high=3840, doc="Original tasks: the browser's width in pixels."
    )
    viewport_height: int = knob(
        720, low=240, high=2160, doc="Original tasks: the browser's height in pixels."
    )
    current_viewport_only: bool = knob(
        True, doc="Original tasks: the tree lists only what is in the viewport, as in WebArena."
    )
    settle_ms: int = knob(
        100,
        low=0,
        high=10_000,
        doc="Original tasks: milliseconds to wait after an action for a page load it starts.",
    )
    train_tasks: str = knob(
        "",
        doc="Original tasks: WebArena task ids moved to the train split ('0-99,200'); the rest "
        "are eval.",
    )

    def validate(self) -> None:
        original = data_dir_of(self) is not None
        fields = _GENERATED_ONLY if original else _ORIGINAL_ONLY
        for name in fields:
            value, default = getattr(self, name), getattr(WebArenaConfig, name)
            if value != default:
                kind = "llmgym's generated tasks" if original else "WebArena's original tasks"
                raise ConfigError(
                    f"WebArenaConfig.{name}",
                    f"{value!r} applies to {kind}; with source={self.source!r} allowed: "
                    f"{default!r}",
                )
        if original:
            parse_train_tasks(self.train_tasks)


_GENERATED_ONLY = ("viewport_lines", "train_per_template", "eval_per_template", "data_seed")
_ORIGINAL_ONLY = (
    "viewport_width",
    "viewport_height",
    "current_viewport_only",
    "settle_ms",
    "train_tasks",
)


@bounded_cache(8)
def instances(seed: int, train: int, evaluation: int) -> dict[str, dict[str, Instance]]:
    """The instances of each split by task id. Template ``t``'s ``k``-th instance has the id
    ``<split>/<t.slot * 1000 + k>``, so a new template never renumbers another's; the ids are
    listed interleaved (every template's first, then every template's second, ...).

    A template's candidates are drawn from its own stream and go to the split a hash of their
    content picks, so the splits never share one; a template whose draws stop finding new
    instances has fewer."""
    data = Data.pristine(seed)
    wanted = {"train": train, "eval": evaluation}
    columns: dict[str, list[list[tuple[str, Instance]]]] = {"train": [], "eval": []}
    for task_template in templates():
        found: dict[str, list[Instance]] = {"train": [], "eval": []}
        seen: set[str] = set()
        stale = 0
        for draw in range(MAX_DRAWS):
            if all(len(found[s]) >= wanted[s] for s in found) or stale >= MAX_STALE_DRAWS:
                break
            instance = task_template.draw(data, TaskRng("webarena", seed, task_template.id, draw))
            if instance is None or instance.key in seen:
                stale += 1
                continue
            stale = 0
            seen.add(instance.key)
            split = split_of(instance.key, EVAL_FRACTION)
            if len(found[split]) < wanted[split]:
                found[split].append(instance)
        for split, column in found.items():
            base = task_template.slot * INSTANCES_PER_SLOT
            columns[split].append([(f"{split}/{base + k:05d}", i) for k, i in enumerate(column)])
    return {split: dict(_interleave(split_columns)) for split, split_columns in columns.items()}


def _interleave(columns: list[list[tuple[str, Instance]]]) -> list[tuple[str, Instance]]:
    longest = max((len(column) for column in columns), default=0)
    return [column[i] for i in range(longest) for column in columns if i < len(column)]


class WebArenaEnv(TextEnv[WebArenaConfig]):
    """Web tasks on self-hosted sites, in WebArena's accessibility-tree observation and actions.

    ## Description
    An offline rebuild of WebArena (Zhou et al., 2024). The sites are real web applications —
    WSGI apps rendering HTML from sqlite databases generated from a seed — modelled on
    WebArena's: an online store (``localhost:7770``: products in categories, search, sort,
    price filters, pages, cart, checkout, customer account with order history, wish list,
    reviews), its admin back office (``localhost:7780``: order, product, customer and review
    grids with edit pages, order actions, best-seller and sales reports), a forum in the manner
    of Postmill (``localhost:9999``: forums, posts, threaded comments, votes, subscriptions,
    user pages, hot/new/top sorting, search, submissions), a code-hosting site in the manner of
    GitLab (``localhost:8023``: groups, projects, issues with labels, assignees and milestones,
    merge requests, members and roles, stars, search and filters) and a read-only wiki in the
    manner of WebArena's Kiwix Wikipedia (``localhost:8888``: articles about invented places
    and people with infoboxes, sections, links, categories and search). The environment drives
    them in-process through a small browser (tabs, history, cookies, forms) that turns each
    page into WebArena's accessibility tree; ``llmgym webarena serve`` serves the same sites on
    their ports for a real browser, and prints a login for each site that has a sign-in page
    (all but the wiki). Every episode starts signed in (the store as its customer
    Emma Lopez, the back office as ``admin``, the forum as ``MarvelsGrantMan136``, the code
    host as ``byteblaze``), and the databases are restored to their generated state on reset
    (a copy only when the episode wrote something). The sizes of the generated data are
    measured under "Measured" below.

    ![The store's search results in Chromium](img/webarena_shop.png)
    ![The back office's order grid in Chromium](img/webarena_admin.png)
    ![A forum in Chromium](img/webarena_forum.png)
    ![A project's issue list on the code host in Chromium](img/webarena_gitlab.png)
    ![A wiki article in Chromium](img/webarena_wiki.png)

    Tasks come from intent templates of WebArena's three kinds — information seeking,
    navigation, and content or configuration changes — each with its evaluator and an oracle
    that plays through the action grammar by reading the tree (elements found by role and
    name, never by the answer key).

    What differs from WebArena: the sites are small generated rebuilds, not Magento, Postmill,
    GitLab or Kiwix (same kinds of pages, far fewer features, no JavaScript); the tree comes from
    the HTML, not from Chromium (a test checks that Chromium shows every element it lists);
    ``type`` replaces a field's text instead of appending to it; an id outside the viewport
    is refused rather than clicked blind; a page's ids are numbered from 1 in document order;
    the fuzzy answer match is a string similarity, not an LLM judge; the reward is computed
    only on ``stop``; and the tasks are generated from templates over generated data, not
    WebArena's 812 hand-written intents (no map site yet).

    ## Action Space
    WebArena's grammar, inside a ```` ``` ```` block or bare: ``click [id]``,
    ``type [id] [text] [0|1]`` (replaces the field's text; ``1``, the default, presses Enter
    after), ``hover [id]``, ``press [key_comb]`` (``Enter``, ``PageDown``, ``Backspace``,
    ``Alt+ArrowLeft``, ...), ``scroll [up|down]``, ``goto [url]``, ``go_back``, ``go_forward``,
    ``new_tab``, ``tab_focus [tab_index]``, ``close_tab`` and ``stop [answer]``, which ends the
    episode (``stop []`` after a navigation or a change). Ids are those of the tree in view.
    Anything else, or an id not in view, changes nothing and is answered with the reason and
    ``info["invalid_action"] = True``.

    ## Observation Space
    Text, as WebArena's prompt shows it: the tab bar, the accessibility tree in view
    (``[12] link 'My Orders'``, ``[31] textbox 'Search entire store here...' focused: True
    required: False``, ``[40] cell '000000170'``, ...; a typed value shows as its text box's
    ``StaticText`` child), then ``URL:``, ``OBJECTIVE:`` and ``PREVIOUS ACTION:`` lines.

    ## Rewards
    On ``stop``: 1.0 if every evaluator of the task passes, else 0.0. Information seeking:
    WebArena's string match on the answer (``exact``, ``must_include``, or a normalised
    ``fuzzy`` match; WebArena's fuzzy match asks GPT-4, which needs a network, so it is
    replaced by normalisation and a similarity of 0.9). Navigation: the final URL's path and
    query parameters. Changes: a program that reads the site database after the episode.
    ``info["evaluation"]`` says which evaluator failed.

    ## Starting State
    One tab on the task's start page, signed in to every site, with the sites' data as
    generated by ``data_seed``.

    ## Episode End
    Terminates on ``stop``. Truncated by the registered turn limit (30; AgentGym uses 25).

    ## Arguments
    ``gymnasium.make("llmgym/WebArena-v0", viewport_lines=120)``; see
    :class:`WebArenaConfig`. Task ``split/N`` is instance ``N % 1000`` of the template numbered
    ``N // 1000`` (so adding templates never renumbers a task); ``task_ids`` lists them
    interleaved, one of each template in turn. Train and eval instances are disjoint by content.

    ## Original data
    With ``config={"source": "webarena", "data_dir": DIR}`` the environment plays WebArena's own
    812 test tasks (https://github.com/web-arena-x/webarena, Apache-2.0) on the user's running
    WebArena sites, in headless Chromium driven by Playwright (``pip install
    'llmgym[webarena]'``; Chromium from the ``PATH``, or the binary ``$LLMGYM_CHROMIUM``
    names). ``DIR`` is a checkout of
    WebArena's repository (or its ``config_files`` folder): the numbered
    ``config_files/<task_id>.json`` that its ``scripts/generate_test_data.py`` writes where there
    are any, else ``config_files/test.raw.json`` with its ``__SHOPPING__``-style placeholders
    replaced, as that script does, from WebArena's variables ``SHOPPING``, ``SHOPPING_ADMIN``,
    ``REDDIT``, ``GITLAB``, ``WIKIPEDIA``, ``MAP`` and ``HOMEPAGE`` (a task whose variable is
    unset says which one at reset). A task's ``storage_state`` (``./.auth/shopping_state.json``)
    is read from ``DIR``: WebArena's ``browser_env/auto_login.py`` writes those files; a missing
    one is named at reset. ``llmgym data check webarena DIR`` counts the tasks per eval type and
    says which storage states it finds; ``docs/originals.md`` gives the fetch command.

    WebArena has only a test set: its tasks form the ``eval`` split, ``eval/NNNNN`` the
    ``N``-th in ``task_id`` order (the full set's ``eval/00042`` is ``task_id`` 42, which is
    also AgentGym's WebArena item 42); ``train`` is empty unless ``train_tasks`` (``"0-99"``)
    moves some tasks there, for training on a part and evaluating on the rest.

    * **Observation**: WebArena's: the tab bar and Chromium's accessibility tree
      (``Accessibility.getFullAXTree``) of the part of the page in the viewport
      (``viewport_width`` x ``viewport_height``, 1280 x 720 as in WebArena's runs;
      ``current_viewport_only``), drawn by WebArena's rules (its ignored properties, unnamed
      containers left out, repeated ``StaticText`` removed), then the ``URL:``,
      ``OBJECTIVE:`` and ``PREVIOUS ACTION:`` lines. Ids are numbered in tree order (WebArena
      shows Chromium's node ids, which change with what the browser did before).
    * **Actions**: the grammar above, played as WebArena's ``execute_action`` plays it:
      ``click``/``hover``/``type`` with the mouse at the centre of the element's box, ``type``
      appending keystrokes (``[1]``, the default, ends with Enter), ``press`` with Playwright's
      key names, ``scroll`` by one window height. ``goto`` opens only the sites' addresses
      (the variables above and the task's start URLs); an unknown id, a failed action or a
      text over 2,000 characters is answered as invalid.
    * **Reward**: WebArena's ``evaluation_harness``: the product of the task's
      ``string_match`` (``exact_match``, ``must_include``, ``fuzzy_match``), ``url_match``
      (``GOLD in PRED``) and ``program_html`` (each target's ``url`` opened, its JavaScript
      ``locator`` run in the page) scores. ``fuzzy_match`` asks an LLM judge with WebArena's
      prompts through an OpenAI-compatible server: the model named by
      ``$LLMGYM_WEBARENA_JUDGE_MODEL`` at ``$OPENAI_BASE_URL`` (key ``$OPENAI_API_KEY``), or
      any object with ``fuzzy_match`` and ``unachievable_match`` given to
      ``env.unwrapped.use_judge``; without a judge such an answer is not scored: the
      reward is 0, ``info["evaluation"]`` has ``None`` for it and ``info["evaluation_notes"]``
      and the last observation say why. ``program_html`` helpers that read Magento's REST API
      (``shopping_get_latest_order_url``, ``shopping_get_sku_latest_review_*``) are not called
      and are reported the same way; ``reddit_get_post_url`` and
      ``gitlab_get_project_memeber_role`` are.
    * **Oracle**: it reads the answer key. With a ``reference_action_sequence`` (WebArena's
      Playwright lines, as in its example configs) it replays it on the ids of the tree;
      otherwise it opens the ``reference_url`` and stops with the reference answer. It solves
      ``string_match`` tasks (``fuzzy_match`` ones only with a judge) and ``url_match`` tasks;
      ``program_html`` tasks only where the config carries the actions.
    * Each reset opens a fresh browser context on the task's start URLs (one tab per
      ``" |AND| "`` part); the sites' data is not reset (WebArena resets its sites by
      restarting their containers, outside the harness).

    ## Version History
    * v0: Initial version.
    """

    config_class = WebArenaConfig
    env_name = "webarena"
    rules_text = (
        "You are an autonomous intelligent agent tasked with navigating a web browser to "
        "accomplish a task. You see the page's accessibility tree, where each element has an id "
        f"in brackets, and act with one action per turn: {ACTION_HELP}. Issue stop [answer] when "
        "done: with the answer to a question, or empty (stop []) after a navigation or a change. "
        "If the task cannot be done, stop [N/A]."
    )
    example = (
        "Observation: [8] textbox 'Search entire store here...' required: False\n"
        "Thought: I search the store for the product first.\n"
        "Action: ```type [8] [cat litter] [1]```"
    )

    _instance: Instance | None = None
    _browser: Browser | None = None
    _original: OriginalEpisodes | None = None
    """The original tasks' browser and episode (a config with the webarena source)."""
    _judge: Judge | None = None
    _previous = "None"
    _memory: dict[str, Any]

    def __init__(
        self, config: WebArenaConfig | dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(config, **kwargs)
        self.web = Web(self.config.data_seed)

    # ------------------------------------------------------------------ tasks
    def task_ids(self, split: str = "train", config: WebArenaConfig | None = None) -> Sequence[str]:
        config = config or self.config
        data_dir = data_dir_of(config)
        if data_dir is not None:
            return tuple(split_tasks(data_dir, config.train_tasks)[split])
        return tuple(self._instances(split, config))

    def _original_episodes(self, config: WebArenaConfig) -> OriginalEpisodes | None:
        """The original tasks' player for ``config`` (``None``: generated tasks); a new one
        (and browser) when the config's browser settings change."""
        data_dir = data_dir_of(config)
        if data_dir is None:
            return None
        current = self._original
        if current is not None:
            if current.settings == OriginalEpisodes.settings_of(data_dir, config):
                return current
            current.close()
        self._original = OriginalEpisodes.from_config(data_dir, config)
        if self._judge is not None:
            self._original.judge = self._judge
        return self._original

    def use_judge(self, judge: Judge) -> None:
        """Judge the original tasks' ``fuzzy_match`` answers with ``judge`` (any object with
        WebArena's two judge calls, see :class:`~llmgym.envs.webarena.evaluators.Judge`)
        instead of the one ``$LLMGYM_WEBARENA_JUDGE_MODEL`` names."""
        self._judge = judge
        if self._original is not None:
            self._original.judge = judge

    @staticmethod
    def _instances(split: str, config: WebArenaConfig) -> dict[str, Instance]:
        return instances(config.data_seed, config.train_per_template, config.eval_per_template)[
            split
        ]

    @property
    def instance(self) -> Instance:
        """The current task instance (after reset)."""
        return self.after_reset(self._instance)

    @property
    def browser(self) -> Browser:
        return self.after_reset(self._browser)

    def instance_key(self) -> str:
        if self._playing_original():
            assert self._original is not None and self._original.task is not None
            return self._original.task.raw
        return self.instance.key

    def _playing_original(self) -> bool:
        return self._original is not None and self.task.config.source != "generated"

    def _engine_holding_state(self) -> str | None:
        if self._original is not None and self._original.browser is not None:
            return "a live Chromium browser"
        return None

    def close(self) -> None:
        """Close the original tasks' browser, if one was started."""
        if self._original is not None:
            self._original.close()
            self._original = None
        super().close()

    def _reset_task(self, task: Task[WebArenaConfig]) -> tuple[str, str]:
        config = task.config
        original = self._original_episodes(config)
        if original is not None:
            original.reset(task.split, task.task_id, config.train_tasks)
            self._previous = "None"
            intent = str(original.config["intent"])
            return self._observe(), intent
        if config.data_seed != self.web.seed:
            self.web = Web(config.data_seed)
        self.web.reset()
        self._instance = self._instances(task.split, config)[task.task_id]
        self._browser = Browser(self.web.site_at, config.viewport_lines)
        self._browser.start(self._instance.start_url, START_COOKIES)
        self._previous, self._memory = "None", {}
        return self._observe(), self._instance.intent

    def _observe(self, feedback: str = "") -> str:
        if self._playing_original():
            assert self._original is not None
            page, url = self._original.observation, self._original.url
            intent = str(self._original.config["intent"])
        else:
            page, url, intent = self.browser.render(), self.browser.url, self.instance.intent
        text = f"{page}\n\nURL: {url}\nOBJECTIVE: {intent}\nPREVIOUS ACTION: {self._previous}"
        return f"{feedback}\n\n{text}" if feedback else text

    # ------------------------------------------------------------------ dynamics
    def _step(self, action: str) -> Transition:
        parsed = parse_action(action)
        if parsed is None:
            return self.invalid(
                self._observe(
                    f"Invalid action: {self.quote(action)} is not an action. "
                    f"Actions: {ACTION_HELP}."
                )
            )
        verb, arguments = parsed
        if self._playing_original():
            return self._step_original(verb, arguments)
        outcome = self.browser.act(verb, arguments)
        if not outcome.ok:
            return self.invalid(self._observe(f"Invalid action: {outcome.error}"))
        self._previous = " ".join([verb, *(f"[{a}]" for a in arguments if a != "")])
        if outcome.answer is None:
            return Transition(self._observe())
        return self._finish(outcome.answer)

    def _step_original(self, verb: str, arguments: tuple[str, ...]) -> Transition:
        original = self._original
        assert original is not None
        if verb != "stop":
            error = original.act(verb, arguments)
            if error:
                return self.invalid(self._observe(f"Invalid action: {error}"))
        self._previous = " ".join([verb, *(f"[{a}]" for a in arguments if a != "")])
        if verb != "stop":
            return Transition(self._observe())
        finish = original.finish(arguments[0].strip())
        evaluation = finish.evaluation
        observation = self._observe()
        if evaluation.notes:
            observation += "\n\nEvaluation: " + " ".join(evaluation.notes)
        success = finish.reward == 1.0
        return Transition(
            observation,
            reward=finish.reward,
            terminated=True,
            success=success,
            info={
                "evaluation": evaluation.scores,
                "evaluation_notes": evaluation.notes,
                "answer": finish.answer,
                "webarena_task_id": original.task.task_id if original.task else -1,
            },
        )

    def _finish(self, answer: str) -> Transition:
        instance = self.instance
        state = Data(self.web.connection, self.web.seed)
        results = {
            type(evaluator).__name__: evaluator.passes(answer, self.browser.url, state, instance)
            for evaluator in instance.evaluators
        }
        success = all(results.values())
        return Transition(
            self._observe(),
            reward=1.0 if success else 0.0,
            terminated=True,
            success=success,
            info={"evaluation": results, "answer": answer},
        )

    # ------------------------------------------------------------------ oracle
    def oracle_action(self) -> str:
        """The template's oracle on the active page. Where it finds nothing it knows (another
        tab, a page it did not expect), it closes the extra tab or goes back to the start page."""
        if self._playing_original():
            assert self._original is not None
            return self._original.oracle_action()
        instance, browser = self.instance, self.browser
        if len(browser.tabs) > 1:
            return "close_tab" if browser.active else "tab_focus [1]"
        try:
            return template(instance.template).oracle(
                PageView(browser), instance.params, self._memory
            )
        except LookupError:
            return f"goto [{instance.start_url}]"

    def sample_action(self, rng: np.random.Generator) -> str:
        if self._playing_original():
            assert self._original is not None
            return self._original.sample_action(rng)
        ids = sorted(self.browser.visible_ids() - {1})
        roll = rng.random()
        if roll < 0.1 or not ids:
            return "scroll [down]"
        node = self.browser.visit.page.node(ids[int(rng.integers(len(ids)))])
        assert node is not None
        if node.role == "textbox":
            return f"type [{node.id}] [test] [1]"
        return f"click [{node.id}]"
