"""WebArena's evaluators (``evaluation_harness/evaluators.py``), for its original task configs.

A task's ``eval.eval_types`` names its evaluators; its score is their product:

- ``string_match``: the ``stop`` answer against ``reference_answers`` — ``exact_match``,
  ``must_include`` (each phrase; a one-character phrase, when it is the only one, must be a
  whole token) and ``fuzzy_match`` (an LLM judge decides; ``"N/A"`` references are matched
  exactly, then by the judge against the task's ``string_note``). Answers are cleaned as
  WebArena's ``clean_answer``: stripped, one pair of outer quotes removed, lower-cased.
- ``url_match``: the active tab's URL against ``reference_url`` (alternatives joined by
  ``" |OR| "``) by WebArena's only rule, ``GOLD in PRED``: some reference's host and path is
  the URL's, and every reference query parameter has one of its values.
- ``program_html``: for each target, open its ``url`` (``"last"``: stay; ``func:`` a helper),
  run its ``locator`` (JavaScript, or ``func:`` a helper; empty: the page's HTML) in the page,
  and match the text with ``required_contents`` (``exact_match`` or ``must_include`` with
  ``" |OR| "`` alternatives).

WebArena runs ``func:`` expressions with Python's ``eval``; here they are parsed and only
WebArena's helpers are called. The fuzzy judge is pluggable (:class:`Judge`); without one a
``fuzzy_match`` cannot be decided and the evaluation says so.
"""

from __future__ import annotations

import ast
import html
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qs, urlparse

from llmgym.errors import ChatError
from llmgym.llm import ChatClient

__all__ = [
    "ChatJudge",
    "Evaluation",
    "Judge",
    "PageAccess",
    "clean_answer",
    "evaluate",
    "exact_match",
    "must_include",
    "url_match",
]

_TOKEN = re.compile(r"\d+(?:[.,:]\d+)*|\w+(?:'\w+)?|[^\w\s]")


class Judge(Protocol):
    """Decides WebArena's LLM-judged string matches (1.0 or 0.0)."""

    def fuzzy_match(self, pred: str, reference: str, question: str) -> float:
        """Whether ``pred`` answers ``question`` as ``reference`` does."""
        ...

    def unachievable_match(self, pred: str, reference: str, question: str) -> float:
        """Whether ``pred``'s reason for not doing ``question`` is ``reference``'s."""
        ...


class ChatJudge:
    """WebArena's judge prompts (``llm_fuzzy_match``, ``llm_ua_match``) sent to an
    OpenAI-compatible server through :class:`~llmgym.llm.ChatClient` (WebArena used
    ``gpt-4-1106-preview``), at temperature 0."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def _ask(self, message: str) -> str:
        reply = self.client.complete(
            [
                {"role": "system", "content": "You are a helpful assistant"},
                {"role": "user", "content": message},
            ],
            temperature=0,
            max_tokens=768,
            top_p=1.0,
        )
        return reply.text.lower()

    def fuzzy_match(self, pred: str, reference: str, question: str) -> float:
        message = (
            "Help a teacher to grade the answer of a student given a question. Keep in mind "
            "that the student may use different phrasing or wording to answer the question. "
            "The goal is to evaluate whether the answer is semantically equivalent to the "
            "reference answer.\n"
            f"question: {question}\n"
            f"reference answer: {reference}\n"
            "all the string 'N/A' that you see is a special sequence that means 'not "
            "achievable'\n"
            f"student answer: {pred}\n"
            "Conclude the judgement by correct/incorrect/partially correct."
        )
        response = self._ask(message)
        if "partially correct" in response or "incorrect" in response:
            return 0.0
        return 1.0 if "correct" in response else 0.0

    def unachievable_match(self, pred: str, reference: str, question: str) -> float:
        message = (
            f"task: {question}\n"
            f"actual unachievable reason: {reference}\n"
            f"reported unachievable reason: {pred}\n"
            "The task described above is inherently unachievable due to the reason specified "
            "under 'actual unachievable reason'. An individual previously attempted this task "
            "and was unable to complete it. They provided a reason for their failure, which is "
            "listed under 'reported unachievable reason'. Your role is to review both the "
            "actual and reported reasons. Determine if the reported reason aligns with the "
            "actual reason, even if implicitly. If the stated reason is in line with the "
            "actual reason, respond with 'same'. Otherwise, respond with 'different'."
        )
        response = self._ask(message)
        if "different" in response:
            return 0.0
        return 1.0 if "same" in response else 0.0


class PageAccess(Protocol):
    """What ``program_html`` needs of the browser."""

    @property
    def url(self) -> str: ...

    def goto_and_evaluate(self, url: str, scripts: Sequence[str], expression: str) -> str: ...


class _Undecided(Exception):
    """An evaluator cannot decide (no judge, a helper that needs what is not here)."""


@dataclass
class Evaluation:
    """Each evaluator's score (``None``: undecided) and notes saying why."""

    scores: dict[str, float | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def decided(self) -> bool:
        return all(score is not None for score in self.scores.values())

    @property
    def score(self) -> float:
        """The product of the scores; an undecided evaluator counts 0."""
        total = 1.0
        for score in self.scores.values():
            total *= score or 0.0
        return total


def clean_answer(answer: str) -> str:
    """WebArena's ``clean_answer``: stripped, one pair of outer quotes off, lower case."""
    answer = answer.strip()
    if len(answer) >= 2 and answer[0] == answer[-1] and answer[0] in "'\"":
        answer = answer[1:-1]
    elif answer in ("'", '"'):
        answer = ""
    return answer.lower()


def exact_match(ref: str, pred: str) -> float:
    """1.0 if the cleaned answers are equal."""
    return float(clean_answer(pred) == clean_answer(ref))


def must_include(ref: str, pred: str, tokenize: bool = False) -> float:
    """1.0 if the cleaned ``ref`` is in the cleaned ``pred``; with ``tokenize`` a
    one-character ``ref`` must be a whole token (so ``"0"`` is not found in ``"10"``)."""
    clean_ref, clean_pred = clean_answer(ref), clean_answer(pred)
    if tokenize and len(clean_ref) == 1:
        return float(clean_ref in _TOKEN.findall(clean_pred))
    return float(clean_ref in clean_pred)


def _string_match(
    references: Mapping[str, Any], answer: str, intent: str, string_note: str, judge: Judge | None
) -> float:
    pred = clean_answer(answer)
    score = 1.0
    for approach, value in references.items():
        if approach == "exact_match":
            score *= exact_match(str(value), pred)
        elif approach == "must_include":
            phrases = [str(v) for v in value]
            for phrase in phrases:
                score *= must_include(phrase, pred, tokenize=len(phrases) == 1)
        elif approach == "fuzzy_match":
            if value == "N/A":
                score *= exact_match("N/A", pred)
                if score != 1:
                    score = _judged(judge, "unachievable_match", pred, string_note, intent)
            else:
                for reference in value:
                    score *= _judged(judge, "fuzzy_match", pred, str(reference), intent)
        else:
            raise _Undecided(f"unknown reference_answers approach {approach!r}")
    return score


def _judged(judge: Judge | None, method: str, pred: str, reference: str, question: str) -> float:
    if judge is None:
        raise _Undecided(
            "fuzzy_match needs an LLM judge and none is configured (set "
            "$LLMGYM_WEBARENA_JUDGE_MODEL and $OPENAI_BASE_URL, or call use_judge); the answer "
            "is not scored"
        )
    try:
        verdict: float = getattr(judge, method)(pred, reference, question)
    except ChatError as error:
        raise _Undecided(
            f"the fuzzy_match judge failed ({error}); the answer is not scored"
        ) from None
    return verdict


def url_match(reference_url: str, url: str, rule: str = "GOLD in PRED") -> float:
    """WebArena's ``URLEvaluator``."""
    if rule != "GOLD in PRED":
        raise _Undecided(f"unknown url_note {rule!r} (WebArena knows only 'GOLD in PRED')")
    references = [ref.rstrip("/") for ref in reference_url.split(" |OR| ")]
    parsed = urlparse(url.rstrip("/"))
    pred_base = parsed.netloc + parsed.path
    pred_query = parse_qs(parsed.query)
    ref_bases: list[str] = []
    ref_queries: dict[str, set[str]] = {}
    for reference in references:
        ref = urlparse(reference)
        ref_bases.append(ref.netloc + ref.path)
        for key, found in parse_qs(ref.query).items():
            ref_queries.setdefault(key, set()).update(found)
    # WebArena tests ``ref_base in pred_base`` with pred_base a string: a substring test.
    score = float(any(base in pred_base for base in ref_bases))
    for key, values in ref_queries.items():
        score *= float(any(value in pred_query.get(key, []) for value in values))
    return score


def reddit_get_post_url(url: str) -> str:
    """WebArena's helper: a forum post's URL (``/f/<forum>/<id>/``) from a URL under it."""
    parts = urlparse(url)
    path = parts.path.split("/")
    if len(path) < 4 or path[1] != "f":
        return url
    return f"{parts.scheme}://{parts.netloc}/f/{path[2]}/{path[3]}/"


def _gitlab_member_role_js(account: str) -> str:
    name = repr("@" + account)
    return (
        "(() => { const accounts = document.querySelectorAll(\"td[data-label='Account'] "
        'span.gl-avatar-labeled-sublabel"); let index = -1; for (let i = 0; i < '
        f"accounts.length; i++) {{ if (accounts[i].outerText === {name}) {{ index = i; break; "
        '} } return document.querySelectorAll("td.col-max-role span")[index].outerText; })()'
    )


_URL_HELPERS: dict[str, Callable[..., str]] = {"reddit_get_post_url": reddit_get_post_url}
_API_HELPERS = frozenset(
    [
        "shopping_get_latest_order_url",
        "shopping_get_sku_latest_review_author",
        "shopping_get_sku_latest_review_rating",
    ]
)


def _call(expression: str) -> tuple[str, list[str]]:
    """The name and string arguments of a ``func:`` expression (``__page__`` stays a name)."""
    try:
        node = ast.parse(expression.strip(), mode="eval").body
    except SyntaxError:
        raise _Undecided(f"cannot read the helper call {expression!r}") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise _Undecided(f"{expression!r} is not a helper call")
    arguments = []
    for argument in node.args:
        if isinstance(argument, ast.Constant):
            arguments.append(str(argument.value))
        elif isinstance(argument, ast.Name):
            arguments.append(argument.id)
        else:
            raise _Undecided(f"cannot read the arguments of {expression!r}")
    name = node.func.id
    if name in _API_HELPERS:
        raise _Undecided(
            f"{name} reads Magento's REST API, which llmgym does not call; this target is "
            "not scored"
        )
    return name, arguments


def _target_url(url: str, page: PageAccess) -> str:
    if not url.startswith("func"):
        return url
    name, arguments = _call(url.split("func:", 1)[1].replace("__last_url__", page.url))
    if name not in _URL_HELPERS:
        raise _Undecided(f"unknown helper {name!r} in a program_html url")
    return _URL_HELPERS[name](*arguments)


def _selected(target: Mapping[str, Any], page: PageAccess) -> str:
    url = _target_url(str(target.get("url", "")), page)
    locator = str(target.get("locator", ""))
    scripts = [str(s) for s in target.get("prep_actions", [])]
    if not locator.strip() or locator.startswith(("document.", "[...document.")):
        return page.goto_and_evaluate(url, scripts, locator)
    if locator.startswith("func:"):
        name, arguments = _call(locator.split("func:", 1)[1])
        if name == "gitlab_get_project_memeber_role" and len(arguments) == 2:
            return page.goto_and_evaluate(url, [], _gitlab_member_role_js(arguments[1]))
        raise _Undecided(f"unknown helper {name!r} in a program_html locator")
    raise _Undecided(f"unknown locator {locator!r}")


def _program_html(targets: Sequence[Mapping[str, Any]], page: PageAccess) -> float:
    score = 1.0
    for target in targets:
        selected = html.unescape(_selected(target, page))
        required = target.get("required_contents", {})
        if "exact_match" in required:
            score *= exact_match(str(required["exact_match"]), selected)
        elif "must_include" in required:
            for content in required["must_include"]:
                alternatives = str(content).split(" |OR| ")
                score *= float(any(must_include(alt, selected) for alt in alternatives))
        else:
            raise _Undecided(f"unknown required_contents {sorted(required)}")
    return score


def evaluate(
    config: Mapping[str, Any], answer: str, page: PageAccess, judge: Judge | None
) -> Evaluation:
    """Score a finished episode of the task ``config`` (a WebArena task config) whose
    ``stop`` answer was ``answer``, on the browser as it was left."""
    spec = config["eval"]
    evaluation = Evaluation()
    for kind in spec["eval_types"]:
        try:
            if kind == "string_match":
                score = _string_match(
                    spec.get("reference_answers") or {},
                    answer,
                    str(config.get("intent", "")),
                    str(spec.get("string_note", "")),
                    judge,
                )
            elif kind == "url_match":
                score = url_match(
                    str(spec.get("reference_url", "")),
                    page.url,
                    str(spec.get("url_note") or "GOLD in PRED"),
                )
            elif kind == "program_html":
                score = _program_html(spec.get("program_html", []), page)
            else:
                raise _Undecided(f"unknown eval type {kind!r}")
        except _Undecided as undecided:
            evaluation.scores[kind] = None
            evaluation.notes.append(f"{kind}: {undecided}")
        else:
            evaluation.scores[kind] = score
    return evaluation
