"""HTML to a WebArena-style accessibility tree: ``[12] link 'Orders'``, one node per line.

:func:`parse_page` turns a page's HTML into an :class:`AxPage`: the nodes Chromium's
accessibility tree would show (links, buttons, text boxes, comboboxes and their options,
headings, tables, rows, cells, lists, landmarks, static text), numbered in document order, plus
the page's forms. Containers without a role of their own (``div``, ``span``, ``p``, ``form``)
are flattened, as WebArena's tree leaves out Chromium's ``generic`` nodes. Links, buttons,
headings, cells and options take their name from their text, which then is not repeated as
``StaticText`` children.

The parser is a single regular-expression pass (stdlib only) over well-formed HTML such as the
sites render; it is lean on purpose, because it runs on every page load of every step. A parsed
page is immutable: a tab keeps the form state (typed text, checked boxes, selected options,
focus) beside it, and :meth:`AxPage.render` draws the tree with that state.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from functools import cached_property

from llmgym.core.cache import LruCache, bounded_cache

__all__ = ["AxPage", "FormInfo", "FormState", "Node", "parse_page"]

_TOKEN = re.compile(
    r"<(/?)([a-zA-Z][a-zA-Z0-9]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>|<!--.*?-->|<![^>]*>|([^<]+)",
    re.S,
)
_ATTRIBUTE = re.compile(
    r"([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'>]+)))?"
)
_SKIPPED = re.compile(r"<(script|style|head|title)\b.*?</\1\s*>", re.S | re.I)
_TITLE = re.compile(r"<title>(.*?)</title>", re.S | re.I)
_SPACE = re.compile(r"\s+")
_VOID = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
    ]
)
_LANDMARKS = {
    "nav": "navigation",
    "main": "main",
    "header": "banner",
    "footer": "contentinfo",
    "aside": "complementary",
    "table": "table",
    "tr": "row",
    "ul": "list",
    "ol": "list",
    "li": "listitem",
    "select": "combobox",
    "dialog": "dialog",
}
_NAMED_BY_TEXT = {
    "button": "button",
    "h1": "heading",
    "h2": "heading",
    "h3": "heading",
    "h4": "heading",
    "h5": "heading",
    "h6": "heading",
    "td": "cell",
    "th": "columnheader",
    "option": "option",
    "label": "",
}
_TEXT_NAMED_ROLES = frozenset({"link", "button", "heading", "cell", "columnheader", "option"})
_TEXT_INPUTS = frozenset(["text", "search", "email", "password", "tel", "url", "number", "date"])
_PAGE_CACHE: LruCache[str, AxPage] = LruCache(512, name="llmgym.envs.webarena.axtree.pages")


@dataclass(slots=True)
class Node:
    """One node of the tree. ``id`` is the number shown in brackets (1 is the page itself)."""

    id: int
    role: str
    name: str
    depth: int
    parent: int
    tag: str = ""
    attrs: dict[str, str] = field(default_factory=dict)
    form: int = -1
    """Index of the node's form in :attr:`AxPage.forms` (``-1``: none)."""
    select: int = 0
    """For an option: the id of its combobox."""

    @property
    def is_text_field(self) -> bool:
        return self.role == "textbox"


@dataclass(frozen=True, slots=True)
class FormInfo:
    """A form: where it goes, how, its hidden fields and the ids of its visible fields."""

    action: str
    method: str
    hidden: tuple[tuple[str, str], ...]
    fields: tuple[int, ...]


@dataclass
class FormState:
    """What the user changed on a loaded page: typed text, boxes, selections and focus."""

    values: dict[int, str]
    checked: dict[int, bool]
    selected: dict[int, int]
    focused: int = 1

    def copy(self) -> FormState:
        return FormState(dict(self.values), dict(self.checked), dict(self.selected), self.focused)


@dataclass(frozen=True)
class AxPage:
    """A parsed page: title, nodes in document order (``nodes[i].id == i + 1``) and forms."""

    title: str
    nodes: tuple[Node, ...]
    forms: tuple[FormInfo, ...]
    initial: FormState
    options: dict[int, tuple[int, ...]]
    """Each combobox's option ids."""
    value_ids: dict[int, int]
    """Each text box's id -> the id of the ``StaticText`` line that shows its value."""

    def node(self, node_id: int) -> Node | None:
        """The node numbered ``node_id``, if the page has it."""
        return self.nodes[node_id - 1] if 0 < node_id <= len(self.nodes) else None

    def fresh_state(self) -> FormState:
        return self.initial.copy()

    @cached_property
    def _bases(self) -> tuple[str, ...]:
        """Each node's line without its state (``\t\t[12] link 'Orders'``)."""
        return tuple(f"{_indent(n.depth)}[{n.id}] {n.role} {n.name!r}" for n in self.nodes)

    @cached_property
    def _value_of(self) -> dict[int, int]:
        return {value_id: box for box, value_id in self.value_ids.items()}

    def lines(self, state: FormState) -> list[tuple[int, str]]:
        """``(node id, text)`` of each line of the tree drawn with ``state`` (read only: the
        lines of the page as loaded are drawn once and shared)."""
        if state == self.initial:
            return self._initial_lines
        return self._draw(state)

    @cached_property
    def _initial_lines(self) -> list[tuple[int, str]]:
        return self._draw(self.initial)

    def _draw(self, state: FormState) -> list[tuple[int, str]]:
        out: list[tuple[int, str]] = []
        value_of, focused = self._value_of, state.focused
        for node, base in zip(self.nodes, self._bases, strict=True):
            role = node.role
            if role == "StaticText":
                if node.id in value_of:
                    value = state.values.get(value_of[node.id], "")
                    if value:
                        out.append(
                            (node.id, f"{_indent(node.depth)}[{node.id}] StaticText {value!r}")
                        )
                    continue
                out.append((node.id, base))
                continue
            text = base + " focused: True" if node.id == focused else base
            if role == "textbox":
                text += " required: " + ("True" if "required" in node.attrs else "False")
            elif role in ("checkbox", "radio"):
                text += " checked: " + ("true" if state.checked.get(node.id) else "false")
            elif role == "combobox":
                text += " hasPopup: menu expanded: False"
            elif role == "option":
                chosen = state.selected.get(node.select) == node.id
                text += " selected: " + ("True" if chosen else "False")
            out.append((node.id, text))
        return out


def _indent(depth: int) -> str:
    return "\t" * depth


def parse_page(document: str) -> AxPage:
    """The accessibility tree of ``document`` (cached: the same HTML parses once)."""
    return _PAGE_CACHE.get_or_create(document, lambda: _Parser(document).page())


class _Parser:
    def __init__(self, document: str) -> None:
        title = _TITLE.search(document)
        self.title = _text(title.group(1)) if title else ""
        self.body = _SKIPPED.sub("", document)
        self.nodes: list[Node] = [Node(1, "RootWebArea", self.title, 0, 0)]
        # open elements: (tag, id of the node it made or 0, id of the nearest kept ancestor)
        self.stack: list[tuple[str, int, int]] = [("", 1, 1)]
        self.collectors: list[tuple[Node, list[str]]] = []
        self.open_names: list[list[str]] = []
        """The name parts of the open elements named by their text (a link in a cell: both)."""
        self.forms: list[dict] = []
        self.form_stack: list[int] = []
        self.values: dict[int, str] = {}
        self.checked: dict[int, bool] = {}
        self.selected: dict[int, int] = {}
        self.options: dict[int, list[int]] = {}
        self.value_ids: dict[int, int] = {}
        self.select_stack: list[int] = []
        self.textarea: int = 0

    def page(self) -> AxPage:
        on_text, on_open, on_close = self._text, self._open, self._close
        for closing, tag, attributes, text in _TOKEN.findall(self.body):
            if text:
                on_text(text)
            elif not tag:
                continue
            elif closing:
                on_close(tag.lower())
            else:
                on_open(tag.lower(), attributes)
        for node, parts in self.collectors:
            node.name = _join(parts)
        forms = tuple(
            FormInfo(f["action"], f["method"], tuple(f["hidden"]), tuple(f["fields"]))
            for f in self.forms
        )
        for select, option_ids in self.options.items():
            if select not in self.selected and option_ids:
                self.selected[select] = option_ids[0]
        initial = FormState(self.values, self.checked, self.selected)
        options = {key: tuple(value) for key, value in self.options.items()}
        return AxPage(self.title, tuple(self.nodes), forms, initial, options, self.value_ids)

    # ------------------------------------------------------------------ tokens
    def _add(
        self, role: str, name: str, tag: str = "", attrs: dict[str, str] | None = None
    ) -> Node:
        """A new node, child of the nearest open element that made one."""
        nodes = self.nodes
        parent = self.stack[-1][2]
        depth = nodes[parent - 1].depth + 1
        node = Node(len(nodes) + 1, role, name, depth, parent, tag, attrs or {})
        if tag and self.form_stack:
            node.form = self.form_stack[-1]
        nodes.append(node)
        return node

    def _text(self, raw: str) -> None:
        if self.textarea:
            self.values[self.textarea] = self.values.get(self.textarea, "") + html.unescape(raw)
            return
        text = _text(raw)
        if not text:
            return
        if self.open_names:
            for parts in self.open_names:
                parts.append(text)
            return
        self._add("StaticText", text)

    def _open(self, tag: str, raw_attributes: str) -> None:
        attrs = _attributes(raw_attributes) if raw_attributes else {}
        if "hidden" in attrs or attrs.get("aria-hidden") == "true":
            if tag not in _VOID:
                self.stack.append((tag, 0, self.stack[-1][2]))
            return
        if tag == "form":
            self.forms.append(
                {
                    "action": attrs.get("action", ""),
                    "method": attrs.get("method", "get").lower(),
                    "hidden": [],
                    "fields": [],
                }
            )
            self.form_stack.append(len(self.forms) - 1)
            self.stack.append((tag, 0, self.stack[-1][2]))
            return
        if tag == "input":
            self._input(attrs)
            return
        if tag == "img":
            if attrs.get("alt"):
                self._add("img", attrs["alt"], tag, attrs)
            return
        if tag in _VOID:
            return
        names = len(self.collectors)
        node = self._element(tag, attrs)
        if len(self.collectors) > names:
            self.open_names.append(self.collectors[-1][1])
        self.stack.append((tag, node.id if node else 0, node.id if node else self.stack[-1][2]))

    def _element(self, tag: str, attrs: dict[str, str]) -> Node | None:
        label = attrs.get("aria-label", "")
        if tag == "a":
            if "href" not in attrs:
                return None
            return self._collecting(self._add("link", label, tag, attrs), label)
        if tag == "textarea":
            node = self._field(
                self._add("textbox", label or attrs.get("placeholder", ""), tag, attrs)
            )
            self.textarea = node.id
            self.values[node.id] = ""
            return node
        role = _NAMED_BY_TEXT.get(tag)
        if role:
            node = self._add(role, label, tag, attrs)
            if tag == "button":
                self._field(node)
            elif tag == "option":
                select = self.select_stack[-1] if self.select_stack else 0
                node.select = select
                self.options.setdefault(select, []).append(node.id)
                if "selected" in attrs:
                    self.selected[select] = node.id
            return self._collecting(node, label)
        if role == "":
            return None
        role = _LANDMARKS.get(tag, "")
        if not role:
            return None
        node = self._add(role, label, tag, attrs)
        if tag == "select":
            self._field(node)
            self.select_stack.append(node.id)
            self.options[node.id] = []
        return node

    def _collecting(self, node: Node, label: str) -> Node:
        self.collectors.append((node, [label] if label else []))
        return node

    def _field(self, node: Node) -> Node:
        if node.form >= 0:
            self.forms[node.form]["fields"].append(node.id)
        return node

    def _input(self, attrs: dict[str, str]) -> None:
        kind = attrs.get("type", "text").lower()
        if kind == "hidden":
            if self.form_stack and "name" in attrs:
                hidden = self.forms[self.form_stack[-1]]["hidden"]
                hidden.append((attrs["name"], attrs.get("value", "")))
            return
        name = attrs.get("aria-label") or attrs.get("placeholder") or attrs.get("name", "")
        if kind in ("submit", "button"):
            self._field(self._add("button", attrs.get("value") or name or "Submit", "input", attrs))
        elif kind in ("checkbox", "radio"):
            node = self._field(self._add(kind, name, "input", attrs))
            self.checked[node.id] = "checked" in attrs
        elif kind in _TEXT_INPUTS:
            node = self._field(self._add("textbox", name, "input", attrs))
            self.values[node.id] = attrs.get("value", "")
            value = self._add("StaticText", "")
            value.depth, value.parent = node.depth + 1, node.id
            self.value_ids[node.id] = value.id

    def _close(self, tag: str) -> None:
        if tag == "textarea" and self.textarea:
            box = self.nodes[self.textarea - 1]
            self.values[box.id] = self.values[box.id].strip("\n")
            value = self._add("StaticText", "")
            value.depth, value.parent = box.depth + 1, box.id
            self.value_ids[box.id] = value.id
            self.textarea = 0
        stack, nodes, open_names = self.stack, self.nodes, self.open_names
        for index in range(len(stack) - 1, 0, -1):
            if stack[index][0] == tag:
                # A node named by its text stops collecting its name parts when it closes.
                for _, node_id, _ in stack[index:]:
                    if node_id and open_names and nodes[node_id - 1].role in _TEXT_NAMED_ROLES:
                        open_names.pop()
                del stack[index:]
                break
        else:
            return
        if tag == "form" and self.form_stack:
            self.form_stack.pop()
        elif tag == "select" and self.select_stack:
            self.select_stack.pop()


@bounded_cache(8192)
def _attributes(raw: str) -> dict[str, str]:
    """The attributes in an opening tag's ``raw`` text (shared between equal tags: read only)."""
    out = {}
    for match in _ATTRIBUTE.finditer(raw):
        value = match.group(2)
        if value is None:
            value = match.group(3) if match.group(3) is not None else match.group(4) or ""
        out[match.group(1).lower()] = html.unescape(value) if "&" in value else value
    return out


@bounded_cache(8192)
def _text(raw: str) -> str:
    text = _SPACE.sub(" ", raw).strip()
    return html.unescape(text) if "&" in text else text


def _join(parts: list[str]) -> str:
    return " ".join(parts)
