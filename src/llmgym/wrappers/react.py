"""ReAct prompting: the observation becomes the prompt an LLM sees; the action is its raw reply.

How :func:`parse_reply` reads a reply; ``tests/data/react_replies.jsonl`` holds over 200 replies
with the parse each must give.

1. **Reasoning blocks.** ``<think>...</think>`` (also ``<thinking>``/``<reasoning>``, any case)
   is thought and is removed, any ``Action:`` in it included. Text before a ``</think>`` that was
   never opened (the chat template opened it) is reasoning too. After an unclosed ``<think>`` the
   rest of the reply is reasoning, so it has no action.
2. **Labels** begin a line: ``Thought:`` (``Thoughts``, ``Reasoning``, ``Thinking``),
   ``Action:`` (``Action 1``, ``Next Action``, ``Final Action``), ``Observation:``/``Result:``;
   in any case, inside markdown (``**Action:**``, ``*Action*:``, ``### Action``, ``> Action:``,
   ``- Action:``), after ``:``, ``：`` or a dash (a label alone on its line needs none). When no
   line begins with a label, ``Action:`` right after the end of a sentence counts too
   (``Thought: It is below. Action: move down``).
3. **Which action.** The turn ends at the first ``Observation:`` written after an action: a model
   that keeps going is imagining the environment's answer. Within the turn the action is **the
   first ``Action:`` after the last ``Thought:``**: thinking again and acting again revises the
   decision, while a second ``Action:`` with no new thought is a plan for later turns.
4. **Code fences** (three backticks or ``~~~``, with any language) wrapping the reply or part of
   it are markup: they never reach the action, and a fence left open or unbalanced is ignored.
5. **The action** is what follows its label, up to the next label or the end of a fence that
   wraps it. A fenced block there gives its content (an ``sql`` block keeps its fence, which
   SQL-v0 reads); a command followed by a fenced block keeps both (``submit`` and the query). JSON
   (``{...}``, ``[...]``) is kept as written, across lines. ``NAME with Action Input: {JSON}``
   (``Action Input:`` may start the next line) is kept up to the end of its JSON. An SQL query
   (``SELECT``, ``WITH``) runs to a line ending in ``;`` or to a blank line; a call whose
   bracket is open (``get_weather(``, ``search[``) runs until it closes. Otherwise the action is
   the first line without the quotes, backticks or emphasis around it and a trailing period.
6. **JSON replies.** ``{"thought": ..., "action": ...}`` gives its thought and action (with
   ``action_input``, the AgentGym form ``NAME with Action Input: {JSON}``); a JSON function call
   (``{"name": ..., "arguments": ...}``, ``tool_calls``, ...) is the action as written, which
   the tool environments parse. Both hold as the whole reply or after ``Action:``.
7. **The thought** is the reasoning blocks' text, then the text after the last ``Thought:`` before
   the action (with no ``Thought:``, the text before the action).
8. **Format errors.** In ``react`` format a reply without an action (no label, an empty action,
   reasoning only) is a format error. In ``action`` format (no thought asked for) a reply
   without a label is the action itself, read as in rule 5.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, NamedTuple, SupportsFloat, TypeAlias

import gymnasium as gym

from llmgym.wrappers.base import TextEnvWrapper

__all__ = ["ParsedReply", "ReActWrapper", "format_reply", "parse_reply", "system_prompt"]

_MAX_REPLY = 20_000
_REASONING_TAG = re.compile(r"<(/?)(?:think|thinking|reasoning)>", re.IGNORECASE)
_END_TOKEN = re.compile(r"(?:</s>|<\|[a-z_]{1,30}\|>|<end_of_turn>)\Z", re.IGNORECASE)
_MARK = re.compile(  # one line: a code fence or a label and the text after it
    r"^(?:[ \t>]*(?P<fence>```|~~~)[`~]*[ \t]*(?P<tag>[^`~\n]*?)[ \t]*$"
    r"|[-+*#_ \t>]*(?P<label>thoughts?|reasoning|thinking|observation|result"
    r"|(?:next[ \t]+|final[ \t]+)?action)(?:[ \t]*[0-9]+)?"
    r"[ \t*_]*(?:[:：]|[-–—](?=[ \t])|$)[ \t*_]*(?P<rest>[^\n]*))",
    re.IGNORECASE | re.MULTILINE,
)
_INLINE_LABEL = re.compile(  # "... end of a sentence. Action: ..."
    r"(?<=[.!?)\]\"'`*])[ \t]+(?=[*_]*(?:action|observation)[*_ \t]*[:：])", re.IGNORECASE
)
_REPEATED_LABEL = re.compile(r"[*_]*action[*_ \t]*[:：][ \t*_]*", re.IGNORECASE)
_FENCE_LINE = re.compile(r"[ \t>]*(?:```|~~~)[^`~\n]*")
_ACTION_INPUT = re.compile(r"action[ \t]+input[ \t]*:?", re.IGNORECASE)
_SQL_START = re.compile(r"(?:submit[ \t:]+)?(?:select|with)\b", re.IGNORECASE)
_SQL_TAGS = frozenset({"sql", "sqlite", "sqlite3"})
_PAIRS = {"`": "`", '"': '"', "'": "'", "*": "*", "_": "_", "“": "”", "‘": "’", "«": "»"}
_OPENERS = {closing: opening for opening, closing in _PAIRS.items()}
_MAX_WRAPPINGS = 8  # layers of quotes and emphasis _clean removes, as in "`**move up**`."
_BRACKETS = (("(", ")"), ("[", "]"), ("{", "}"))
_JSON = json.JSONDecoder()
_FENCE, _THOUGHT, _ACTION, _OBSERVATION = range(4)
_LABEL_KIND = {"tho": _THOUGHT, "rea": _THOUGHT, "thi": _THOUGHT, "obs": _OBSERVATION}


@dataclass(frozen=True)
class ParsedReply:
    """A model reply split into its parts; ``action`` is ``None`` when none could be found."""

    thought: str
    action: str | None
    error: str = ""


class _Mark(NamedTuple):
    """A line of the reply that is a code fence or a label."""

    kind: int
    start: int  # where the line starts
    end: int  # where the text after the label (or the fence's language) starts
    line_end: int  # the index of the newline ending the line, or the reply's length
    tag: str  # a fence's language, lower case


class _Block(NamedTuple):
    """A fenced block in an action's body."""

    tag: str
    content: str
    closed: bool


_BodyItem: TypeAlias = "tuple[int, str] | _Block"  # a line of an action's body (at its start)


def parse_reply(reply: str, *, require_label: bool = True) -> ParsedReply:
    """Extract the thought and the action from a ReAct reply (rules in the module docstring)."""
    if not isinstance(reply, str):
        return ParsedReply("", None, f"the reply must be text, got {type(reply).__name__}")
    text = reply[:_MAX_REPLY]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    reasoning, text, unclosed = _split_reasoning(text)
    text = _without_end_tokens(text)
    marks = _scan(text)
    chosen, thought_mark = _choose_action(marks)
    if chosen is None and _INLINE_LABEL.search(text):
        text = _INLINE_LABEL.sub("\n", text)
        marks = _scan(text)
        chosen, thought_mark = _choose_action(marks)
    if chosen is not None:
        thought = _join(reasoning, _thought_before(text, marks, chosen, thought_mark))
        action = _action_text(text, marks, chosen)
        if not action:
            return ParsedReply(thought, None, "the 'Action:' line is empty")
        return ParsedReply(thought, action)
    structured = _json_reply(text)
    if structured is not None:
        return ParsedReply(_join(reasoning, structured[0]), structured[1])
    if not require_label:
        action = _action_text(text, marks, None)
        if action:
            return ParsedReply(_join(reasoning, ""), action)
    thought = _join(reasoning, _thought_without_action(text, marks))
    if unclosed:
        error = "the reasoning block (<think>) is never closed, so the reply has no action"
    elif not text.strip():
        error = "the reply has only reasoning and no action" if reasoning else "the reply is empty"
    else:
        error = "the reply has no 'Action:' line" if require_label else "the reply has no action"
    return ParsedReply(thought, None, error)


def _split_reasoning(text: str) -> tuple[list[str], str, bool]:
    """The reasoning blocks' texts, the reply without them, and whether one is left open."""
    if "<" not in text:
        return [], text, False
    reasoning: list[str] = []
    kept: list[str] = []
    position, opened = 0, -1
    for tag in _REASONING_TAG.finditer(text):
        closing = bool(tag.group(1))
        if opened >= 0:
            if closing:
                reasoning.append(text[opened : tag.start()].strip())
                position, opened = tag.end(), -1
        elif not closing:
            kept.append(text[position : tag.start()])
            opened = tag.end()
        elif not reasoning and not kept:  # "...</think>": the template opened the block
            reasoning.append(text[: tag.start()].strip())
            position = tag.end()
        else:  # a stray closing tag
            kept.append(text[position : tag.start()])
            position = tag.end()
    if opened >= 0:
        reasoning.append(text[opened:].strip())
    else:
        kept.append(text[position:])
    return [part for part in reasoning if part], "\n".join(kept), opened >= 0


def _without_end_tokens(text: str) -> str:
    """``text`` without the end-of-turn tokens of a raw completion (``</s>``, ``<|im_end|>``)."""
    while text.rstrip().endswith(">"):
        stripped = text.rstrip()
        token = _END_TOKEN.search(stripped, max(0, len(stripped) - 40))
        if token is None:
            break
        text = stripped[: token.start()]
    return text


def _scan(text: str) -> list[_Mark]:
    marks = []
    for match in _MARK.finditer(text):
        if match.group("fence"):
            tag = match.group("tag").lower()
            marks.append(_Mark(_FENCE, match.start(), match.end(), match.end(), tag))
        else:
            kind = _LABEL_KIND.get(match.group("label")[:3].lower(), _ACTION)
            marks.append(_Mark(kind, match.start(), match.start("rest"), match.end(), ""))
    return marks


def _choose_action(marks: list[_Mark]) -> tuple[int | None, int | None]:
    """The index of the action's label and of the thought's label before it (rule 3)."""
    chosen = thought = latest_thought = None
    thought_since_action = False
    for index, mark in enumerate(marks):
        if mark.kind == _THOUGHT:
            latest_thought, thought_since_action = index, True
        elif mark.kind == _ACTION:
            if chosen is None or thought_since_action:
                chosen, thought, thought_since_action = index, latest_thought, False
        elif mark.kind == _OBSERVATION and chosen is not None:
            break
    return chosen, thought


def _inside_fence(marks: list[_Mark], index: int) -> bool:
    """Whether a fence opened before ``marks[index]`` is still open there."""
    inside = False
    for mark in marks[:index]:
        if mark.kind == _FENCE and (not inside or not mark.tag):
            inside = not inside
    return inside


def _action_text(text: str, marks: list[_Mark], chosen: int | None) -> str:
    """The action after the label ``marks[chosen]`` (the whole reply when ``None``), rule 5."""
    items: list[_BodyItem] = []
    block: tuple[str, int] | None = None  # an open block: its language, where its content starts
    if chosen is None:
        position, following, wrapped = 0, marks, False
    else:
        label = marks[chosen]
        position, following = label.line_end + 1, marks[chosen + 1 :]
        wrapped = _inside_fence(marks, chosen)
        repeated = _REPEATED_LABEL.match(text, label.end, label.line_end)  # "Action: Action: x"
        inline = text[repeated.end() if repeated else label.end : label.line_end]
        opening = inline.strip()
        if opening.startswith(("```", "~~~")) and not _has_fence(opening[3:]):
            block = (opening.strip("`~ \t").lower(), position)
        elif opening:
            items.append((label.line_end - len(inline), inline))
    end = len(text)
    for mark in following:
        if block is not None:
            if mark.kind == _FENCE and not mark.tag:
                items.append(_Block(block[0], text[block[1] : mark.start], closed=True))
                block, position = None, mark.line_end + 1
            continue
        _add_lines(items, text, position, mark.start - 1)
        if mark.kind != _FENCE or (wrapped and not mark.tag and _has_text(items)):
            end = mark.start  # the next label, or the end of the fence wrapping the reply
            break
        block, position = (mark.tag, mark.line_end + 1), mark.line_end + 1
    else:
        if block is not None:
            items.append(_Block(block[0], text[block[1] :], closed=False))
        else:
            _add_lines(items, text, position, len(text))
    return _read_body(text[:end], items)


def _read_body(text: str, items: list[_BodyItem]) -> str:
    for index, item in enumerate(items):
        if isinstance(item, _Block):
            content = item.content.strip()
            if not content:
                continue
            if item.tag in _SQL_TAGS:
                return f"```{item.tag}\n{content}\n```"
            return _json_action(content) if content.startswith(("{", "[")) else content
        head = item[1].strip()
        if not head:
            continue
        raw = text[item[0] :].strip()
        if head.startswith(("{", "[")):
            return _json_action(raw)
        if _ACTION_INPUT.search(head) or _next_line_has_action_input(items, index):
            return _through_action_input(raw)
        if _SQL_START.match(head):
            return _clean(_continue_lines(raw, sql=True))
        if ("(" in head or "[" in head) and _bracket_depth(head) > 0:
            return _clean(_continue_lines(raw, sql=False))
        for later in items[index + 1 :]:
            if isinstance(later, _Block) and later.content.strip() and (later.closed or later.tag):
                command = _clean(head)
                if not command or head.endswith(":"):  # "Here is the query:" introduces it
                    return _read_body(text, [later])
                return f"{command}\n```{later.tag}\n{later.content.strip()}\n```"
        return _clean(head)
    return ""


def _add_lines(items: list[_BodyItem], text: str, start: int, stop: int) -> None:
    while start < stop:
        newline = text.find("\n", start, stop)
        line_end = stop if newline < 0 else newline
        if not text[start:line_end].isspace() and line_end > start:
            items.append((start, text[start:line_end]))
        start = line_end + 1


def _has_fence(text: str) -> bool:
    return "```" in text or "~~~" in text


def _has_text(items: list[_BodyItem]) -> bool:
    return any(isinstance(item, _Block) or item[1].strip() for item in items)


def _next_line_has_action_input(items: list[_BodyItem], index: int) -> bool:
    for item in items[index + 1 :]:
        if isinstance(item, _Block):
            return False
        if item[1].strip():
            return _ACTION_INPUT.match(item[1].strip()) is not None
    return False


def _through_action_input(raw: str) -> str:
    """``NAME with Action Input: {JSON}`` up to the end of the JSON (or of its fenced block)."""
    label = _ACTION_INPUT.search(raw)
    assert label is not None
    value = raw[label.end() :].lstrip()
    start = len(raw) - len(value)
    if value.startswith(("```", "~~~")):
        newline = raw.find("\n", start)
        closing = raw.find(value[:3], newline) if newline >= 0 else -1
        return raw[: closing + 3] if closing >= 0 else raw
    if value.startswith(("{", "[")):
        decoded = _decode_json(raw, start)
        return raw[: decoded[1]] if decoded else raw
    newline = raw.find("\n", start)
    return raw if newline < 0 else raw[:newline].rstrip()


def _continue_lines(raw: str, *, sql: bool) -> str:
    """The first line of ``raw`` and the lines continuing it: an SQL query up to a ``;`` or a
    blank line, or a call up to the bracket closing it."""
    lines = raw.split("\n")
    depth = 0 if sql else _bracket_depth(lines[0])
    taken = [lines[0]]
    for line in lines[1:]:
        if (sql and taken[-1].rstrip().endswith(";")) or (not sql and depth <= 0):
            break
        if not line.strip() or _FENCE_LINE.fullmatch(line):
            break
        taken.append(line)
        if not sql:
            depth += _bracket_depth(line)
    return "\n".join(taken)


def _bracket_depth(line: str) -> int:
    return sum(line.count(opening) - line.count(closing) for opening, closing in _BRACKETS)


def _decode_json(text: str, start: int = 0) -> tuple[Any, int] | None:
    """The JSON value starting at ``text[start]`` and where it ends, or ``None``."""
    try:
        return _JSON.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None


def _json_action(raw: str) -> str:
    """The action in JSON text (rule 6): the JSON as written, or its ``action``."""
    decoded = _decode_json(raw)
    if decoded is None:
        return raw
    value, end = decoded
    return _action_of(value) or raw[:end]


def _action_of(value: Any) -> str | None:
    """The action named by a JSON object's ``action`` key, or ``None``."""
    if not isinstance(value, dict):
        return None
    action = value.get("action")
    if isinstance(action, dict):
        return json.dumps(action, ensure_ascii=False)
    if not isinstance(action, str):
        return None
    action_input = value.get("action_input", value.get("action input"))
    if isinstance(action_input, dict):
        arguments = json.dumps(action_input, ensure_ascii=False)
        return f"{action.strip()} with Action Input: {arguments}"
    return action.strip() if action_input is None else None


def _json_reply(text: str) -> tuple[str, str] | None:
    """``(thought, action)`` of a reply that is a JSON object with an action or a function call
    (possibly in a fenced block), else ``None``."""
    stripped = text.strip()
    if stripped.startswith(("```", "~~~")):
        newline = stripped.find("\n")
        stripped = "" if newline < 0 else stripped[newline + 1 :].rstrip("`~ \t\n")
    if not stripped.startswith(("{", "[")):
        return None
    decoded = _decode_json(stripped)
    if decoded is None:
        return None
    value, end = decoded
    action = _action_of(value)
    if action is not None:
        thought = next(
            (value[key] for key in ("thought", "thoughts", "reasoning") if key in value), ""
        )
        return (thought.strip() if isinstance(thought, str) else ""), action
    call = value[0] if isinstance(value, list) and len(value) == 1 else value
    if isinstance(call, dict) and (
        ("name" in call and ("arguments" in call or "parameters" in call))
        or isinstance(call.get("function"), dict)
        or "tool_calls" in call
        or "function_call" in call
    ):
        return "", stripped[:end]
    return None


def _clean(text: str) -> str:
    """``text`` without the quotes, backticks or emphasis around it, a list bullet before it or a
    period after it."""
    cleaned = text.strip()
    if cleaned[:1] in "-+*•" and cleaned[1:2] in (" ", "\t"):
        cleaned = cleaned[2:].lstrip()
    for _ in range(_MAX_WRAPPINGS):
        before = cleaned
        cleaned = cleaned.rstrip(". \t\n")
        closing = _PAIRS.get(cleaned[:1])
        if closing is not None:
            if len(cleaned) > 1 and cleaned.endswith(closing):
                cleaned = cleaned[1:-1].strip()
            elif closing not in cleaned.lstrip(cleaned[0]):  # opened, never closed
                cleaned = cleaned.lstrip(cleaned[0]).lstrip()
        opening = _OPENERS.get(cleaned[-1:])
        if opening is not None and opening not in cleaned.rstrip(cleaned[-1]):
            cleaned = cleaned.rstrip(cleaned[-1]).rstrip()  # closed, never opened
        if not cleaned or cleaned == before:
            break
    return cleaned


def _thought_before(text: str, marks: list[_Mark], chosen: int, thought: int | None) -> str:
    if thought is not None:
        stop = next(mark.start for mark in marks[thought + 1 :] if mark.kind != _FENCE)
        return _strip_fences(text[marks[thought].end : stop])
    previous = [mark for mark in marks[:chosen] if mark.kind != _FENCE]
    start = previous[-1].line_end if previous else 0
    return _strip_fences(text[start : marks[chosen].start])


def _thought_without_action(text: str, marks: list[_Mark]) -> str:
    labels = [mark for mark in marks if mark.kind != _FENCE]
    first = next((i for i, mark in enumerate(labels) if mark.kind == _THOUGHT), None)
    if first is None:
        return _strip_fences(text)
    stop = labels[first + 1].start if first + 1 < len(labels) else len(text)
    return _strip_fences(text[labels[first].end : stop])


def _strip_fences(text: str) -> str:
    """``text`` without the fence lines that begin or end it (a fence wrapping the reply)."""
    text = text.strip()
    if not _has_fence(text):
        return text
    lines = text.split("\n")
    first, last = 0, len(lines)
    while first < last and (not lines[first].strip() or _FENCE_LINE.fullmatch(lines[first])):
        first += 1
    while last > first and (not lines[last - 1].strip() or _FENCE_LINE.fullmatch(lines[last - 1])):
        last -= 1
    return "\n".join(lines[first:last]).strip()


def _join(reasoning: list[str], thought: str) -> str:
    return "\n".join([*reasoning, thought] if thought else reasoning)


def format_reply(action: str, thought: str = "", *, react: bool = True) -> str:
    """The canonical reply for ``action``: ``Thought: ...\\nAction: ...`` (or ``Action: ...``)."""
    if not react or not thought:
        return f"Action: {action}"
    return f"Thought: {thought}\nAction: {action}"


def system_prompt(rules: str, example: str = "", *, react: bool = True) -> str:
    """The instructions an LLM agent receives: the environment's rules, the reply format and a
    worked example."""
    if react:
        reply_format = (
            "Reply in exactly this format:\nThought: <your reasoning about what to do next>\n"
            "Action: <one action>"
        )
    else:
        reply_format = "Reply with exactly one line:\nAction: <one action>"
    parts = [rules.strip(), reply_format]
    if example:
        parts.append("Example:\n" + example.strip())
    return "\n\n".join(parts)


class ReActWrapper(TextEnvWrapper):
    """Turns an environment into a prompt-in, reply-out loop for LLM agents.

    The observation is the full prompt: the environment's rules and action grammar, the reply
    format, a worked example, the task's instruction and the latest observation. The action is the
    model's raw reply; the wrapper extracts ``Thought:`` and ``Action:`` (see :func:`parse_reply`)
    and passes only the action to the environment. ``info`` gains ``thought``,
    ``parsed_action``, ``format_error`` (bool), ``format_errors`` (consecutive count) and
    ``env_observation`` (the inner environment's own observation).

    A reply without a parseable action never reaches the environment: the observation explains
    the expected format, ``format_penalty`` is added to the reward, and after
    ``max_format_errors`` consecutive errors the episode is truncated.

    Args:
        env: Any llmgym environment (or a wrapper around one).
        react: ``True`` asks for ``Thought:`` and ``Action:``; ``False`` for ``Action:`` alone
            (then a bare reply also counts as the action).
        format_penalty: Reward added on a format error (e.g. ``-0.1``); ``0.0`` by default.
        max_format_errors: Consecutive format errors that truncate the episode (``None``: never).
        include_example: Whether the prompt shows the environment's worked example.
    """

    def __init__(
        self,
        env: gym.Env,
        *,
        react: bool = True,
        format_penalty: float = 0.0,
        max_format_errors: int | None = 3,
        include_example: bool = True,
    ) -> None:
        if not isinstance(env.observation_space, gym.spaces.Text):
            name = env.spec.id if env.spec else type(env.unwrapped).__name__
            raise TypeError(
                f"ReActWrapper needs a text environment; {name} observes "
                f"{type(env.observation_space).__name__} (pixel variants are for RL agents; use "
                "the text environment, e.g. llmgym/Crafter-v0)"
            )
        super().__init__(
            env,
            react=react,
            format_penalty=format_penalty,
            max_format_errors=max_format_errors,
            include_example=include_example,
        )
        self.react = react
        self.format_penalty = format_penalty
        self.max_format_errors = max_format_errors
        self.include_example = include_example
        self.system_prompt = ""
        self._instruction = ""
        self._last_observation = ""
        self._format_errors = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        inner = self.text_env
        example = inner.example if self.include_example else ""
        self.system_prompt = system_prompt(inner.rules(), example, react=self.react)
        self._instruction = info.get("instruction", "")
        self._last_observation = observation
        self._format_errors = 0
        info = {**info, "env_observation": observation, "system_prompt": self.system_prompt}
        return self.prompt(observation), info

    def prompt(self, observation: str) -> str:
        """The full prompt for the current turn."""
        task = f"Your task: {self._instruction}\n\n" if self._instruction else ""
        return f"{self.system_prompt}\n\n{task}Observation:\n{observation}"

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        parsed = parse_reply(action, require_label=self.react)
        if parsed.action is None:
            self._format_errors += 1
            truncated = (
                self.max_format_errors is not None and self._format_errors >= self.max_format_errors
            )
            expected = (
                "Thought: <reasoning>\nAction: <one action>"
                if self.react
                else "Action: <one action>"
            )
            feedback = (
                f"Format error: {parsed.error}. Reply in the format:\n{expected}\n"
                f"(consecutive format errors: {self._format_errors}"
                + (f" of {self.max_format_errors} allowed)" if self.max_format_errors else ")")
                + f"\n\nLatest observation:\n{self._last_observation}"
            )
            info = {
                "thought": parsed.thought,
                "parsed_action": None,
                "format_error": True,
                "format_errors": self._format_errors,
                "invalid_action": True,
                "success": self.text_env.success,
                "env_observation": feedback,
            }
            return self.prompt(feedback), self.format_penalty, False, truncated, info
        self._format_errors = 0
        observation, reward, terminated, truncated, info = self.env.step(parsed.action)
        self._last_observation = observation
        info = {
            **info,
            "thought": parsed.thought,
            "parsed_action": parsed.action,
            "format_error": False,
            "format_errors": 0,
            "env_observation": observation,
        }
        return self.prompt(observation), reward, terminated, truncated, info
