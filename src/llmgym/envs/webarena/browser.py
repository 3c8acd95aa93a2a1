"""The in-process browser: tabs, history, cookies, forms and WebArena's action grammar.

Requests go straight to the site's WSGI callable (no socket): the browser builds the WSGI
``environ`` from the URL's ``localhost:PORT`` (each site has its port, as in WebArena),
sends the cookies it keeps per host, follows redirects and parses the HTML into an
accessibility tree (:mod:`~llmgym.envs.webarena.axtree`). What the agent sees is the part of
the tree inside the viewport, a window of ``viewport_lines`` lines that ``scroll [down]`` moves;
only elements in view can be acted on, as in WebArena, where ids come from the visible tree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlencode, urljoin, urlsplit

from llmgym.envs.webarena.axtree import AxPage, FormState, Node, parse_page
from llmgym.envs.webarena.web import Site, esc, wsgi_environ

__all__ = ["ACTION_HELP", "ActionOutcome", "Browser", "Visit", "parse_action"]

BLANK = "about:blank"
MAX_REDIRECTS = 5
MAX_TYPED = 2_000
MAX_URL = 2_000
ACTION_HELP = (
    "click [id], type [id] [text] [0|1], hover [id], press [key_comb], scroll [up|down], "
    "goto [url], go_back, go_forward, new_tab, tab_focus [tab_index], close_tab, stop [answer]"
)

_FENCE = re.compile(r"```(.*?)```", re.S)
_GRAMMAR: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (verb, re.compile(pattern, re.S | re.I))
    for verb, pattern in (
        ("click", r"click *\[ *(\d{1,9}) *\]"),
        ("hover", r"hover *\[ *(\d{1,9}) *\]"),
        ("type", r"type *\[ *(\d{1,9}) *\] *\[(.*)\] *\[ *([01]) *\]"),
        ("type", r"type *\[ *(\d{1,9}) *\] *\[(.*)\]()"),
        ("press", r"press *\[ *([A-Za-z0-9+ ]{1,40}) *\]"),
        ("scroll", r"scroll *\[ *(up|down) *\]"),
        ("goto", r"goto *\[ *(\S{1,2000}) *\]"),
        ("go_back", r"go_back"),
        ("go_forward", r"go_forward"),
        ("new_tab", r"new_tab"),
        ("tab_focus", r"tab_focus *\[ *(\d{1,4}) *\]"),
        ("close_tab", r"close_tab"),
        ("stop", r"stop *\[(.*)\]"),
    )
)
_MODIFIERS = frozenset({"control", "ctrl", "meta", "alt", "shift"})
_KEYS = frozenset(
    [
        "enter",
        "tab",
        "escape",
        "backspace",
        "delete",
        "pagedown",
        "pageup",
        "home",
        "end",
        "arrowup",
        "arrowdown",
        "arrowleft",
        "arrowright",
        "space",
    ]
)


def parse_action(text: str) -> tuple[str, tuple[str, ...]] | None:
    """``(verb, arguments)`` of a WebArena action, from the first ```` ``` ```` block of
    ``text`` or from ``text`` itself; ``None`` if it is not one."""
    fence = _FENCE.search(text)
    candidate = (fence.group(1) if fence else text).strip()
    for verb, pattern in _GRAMMAR:
        match = pattern.fullmatch(candidate)
        if match:
            return verb, match.groups()
    return None


@dataclass
class Visit:
    """One entry of a tab's history: the page, its form state and the scroll position."""

    url: str
    page: AxPage
    state: FormState
    status: int = 200
    scroll: int = 0


@dataclass
class Tab:
    history: list[Visit]
    index: int = 0

    @property
    def visit(self) -> Visit:
        return self.history[self.index]


@dataclass
class ActionOutcome:
    """What an action did: an error message if it was refused, the answer of ``stop``."""

    error: str = ""
    answer: str | None = None

    @property
    def ok(self) -> bool:
        return not self.error


@dataclass
class Browser:
    """Tabs over the sites ``resolve`` finds by ``host:port``; see the module docstring."""

    resolve: Callable[[str], Site | None]
    viewport_lines: int = 80
    cookies: dict[str, dict[str, str]] = field(default_factory=dict)
    tabs: list[Tab] = field(default_factory=list)
    active: int = 0
    requests: int = 0
    _lines: list[tuple[int, str]] | None = field(default=None, repr=False)

    # ------------------------------------------------------------------ state
    @property
    def tab(self) -> Tab:
        return self.tabs[self.active]

    @property
    def visit(self) -> Visit:
        return self.tab.visit

    @property
    def url(self) -> str:
        return self.visit.url

    def start(self, url: str, cookies: Mapping[str, Mapping[str, str]]) -> None:
        """Forget every tab and cookie; open ``url`` in a single tab with ``cookies`` set."""
        self.cookies = {host: dict(jar) for host, jar in cookies.items()}
        self.tabs, self.active, self._lines = [], 0, None
        self.tabs.append(Tab([self._load("GET", url)]))

    # ------------------------------------------------------------------ HTTP
    def _load(self, method: str, url: str, body: bytes = b"") -> Visit:
        for _ in range(MAX_REDIRECTS + 1):
            if url == BLANK:
                blank = parse_page("<title></title>")
                return Visit(BLANK, blank, blank.fresh_state())
            parts = urlsplit(url)
            host = _host(parts.netloc)
            site = self.resolve(host)
            if site is None:
                document = _error_document(url)
                page = parse_page(document)
                return Visit(url, page, page.fresh_state(), 502)
            jar = self.cookies.setdefault(host, {})
            environ = wsgi_environ(
                method,
                parts.path or "/",
                parts.query,
                body,
                host,
                "; ".join(f"{key}={value}" for key, value in jar.items()),
            )
            self.requests += 1
            response = site.handle(environ)
            for header, value in response.headers:
                if header == "Set-Cookie":
                    key, _, rest = value.partition("=")
                    cookie = rest.split(";", 1)[0]
                    if cookie:
                        jar[key] = cookie
                    else:
                        jar.pop(key, None)
            location = next((v for k, v in response.headers if k == "Location"), None)
            if response.status in (301, 302, 303, 307) and location:
                url, method, body = urljoin(url, location), "GET", b""
                continue
            page = parse_page(response.body)
            return Visit(_canonical(url), page, page.fresh_state(), response.status)
        page = parse_page(_error_document(url, "Too many redirects."))
        return Visit(url, page, page.fresh_state(), 508)

    def navigate(self, url: str, method: str = "GET", body: bytes = b"") -> None:
        """Load ``url`` in the active tab, as a new history entry (forward history dropped)."""
        visit = self._load(method, url, body)
        tab = self.tab
        del tab.history[tab.index + 1 :]
        tab.history.append(visit)
        tab.index += 1

    # ------------------------------------------------------------------ view
    def lines(self) -> list[tuple[int, str]]:
        """All lines of the active page's tree, with its form state (drawn once per action)."""
        if self._lines is None:
            visit = self.visit
            self._lines = visit.page.lines(visit.state)
        return self._lines

    def window(self) -> tuple[list[tuple[int, str]], int, int]:
        """The lines in view (the page's own line first), and how many lie above and below."""
        lines = self.lines()
        root, rest = lines[0], lines[1:]
        offset = min(self.visit.scroll, max(0, len(rest) - 1))
        shown = rest[offset : offset + self.viewport_lines]
        return [root, *shown], offset, max(0, len(rest) - offset - len(shown))

    def visible_ids(self) -> set[int]:
        return {node_id for node_id, _ in self.window()[0]}

    def render(self) -> str:
        """The tab bar and the tree in view, WebArena's observation."""
        tabs = "\n".join(
            f"Tab {i}{' (current)' if i == self.active else ''}: {tab.visit.page.title}"
            for i, tab in enumerate(self.tabs)
        )
        shown, above, below = self.window()
        text = "\n".join(line for _, line in shown)
        if above:
            text = text.replace("\n", f"\n\t({above} lines above; scroll [up])\n", 1)
        if below:
            text += f"\n\t({below} more lines below; scroll [down])"
        return f"{tabs}\n\n{text}"

    # ------------------------------------------------------------------ actions
    def act(self, verb: str, arguments: tuple[str, ...]) -> ActionOutcome:
        """Apply one parsed action (see :func:`parse_action`); an error changes nothing."""
        handler = getattr(self, f"_do_{verb}")
        self._lines = None
        try:
            return handler(*arguments)
        finally:
            self._lines = None

    def _target(self, raw_id: str) -> Node | str:
        node = self.visit.page.node(int(raw_id))
        if node is None:
            return f"There is no element [{raw_id}] on this page."
        if node.id not in self.visible_ids():
            lines = [node_id for node_id, _ in self.lines()]
            first_shown = self.window()[1]
            where = "down" if node.id in lines[1 + first_shown :] else "up"
            return f"Element [{raw_id}] is not in view; scroll [{where}] to reach it."
        return node

    def _do_click(self, raw_id: str) -> ActionOutcome:
        node = self._target(raw_id)
        if isinstance(node, str):
            return ActionOutcome(node)
        state = self.visit.state
        role = node.role
        if role == "link":
            state.focused = node.id
            self.navigate(urljoin(self.url, node.attrs.get("href", "")))
        elif role == "button":
            if node.form >= 0 and node.attrs.get("type", "submit") in ("submit", ""):
                self._submit(node.form, node)
            else:
                state.focused = node.id
        elif role == "checkbox":
            state.checked[node.id] = not state.checked.get(node.id, False)
            state.focused = node.id
        elif role == "radio":
            self._check_radio(node)
        elif role == "option":
            state.selected[node.select] = node.id
            state.focused = node.select
        elif role in ("textbox", "combobox"):
            state.focused = node.id
        return ActionOutcome()

    def _check_radio(self, node: Node) -> None:
        state = self.visit.state
        group = node.attrs.get("name")
        for other in self.visit.page.nodes:
            if (
                other.role == "radio"
                and other.form == node.form
                and other.attrs.get("name") == group
            ):
                state.checked[other.id] = other.id == node.id
        state.focused = node.id

    def _do_hover(self, raw_id: str) -> ActionOutcome:
        node = self._target(raw_id)
        return ActionOutcome(node if isinstance(node, str) else "")

    def _do_type(self, raw_id: str, text: str, enter: str) -> ActionOutcome:
        node = self._target(raw_id)
        if isinstance(node, str):
            return ActionOutcome(node)
        if len(text) > MAX_TYPED:
            return ActionOutcome(f"The text is longer than {MAX_TYPED} characters.")
        state = self.visit.state
        if node.role == "combobox":
            wanted = text.strip().lower()
            page = self.visit.page
            matches = [
                i for i in page.options.get(node.id, ()) if page.nodes[i - 1].name.lower() == wanted
            ]
            if not matches:
                names = [page.nodes[i - 1].name for i in page.options.get(node.id, ())]
                return ActionOutcome(
                    f"[{raw_id}] has no option {text.strip()!r}; options: {names}."
                )
            state.selected[node.id] = matches[0]
        elif node.role != "textbox":
            return ActionOutcome(
                f"[{raw_id}] is a {node.role}, not a text box; type into a textbox."
            )
        else:
            state.values[node.id] = text if node.tag == "textarea" else " ".join(text.split())
        state.focused = node.id
        if enter != "0" and node.form >= 0 and node.tag != "textarea":
            self._submit(node.form, None)
        return ActionOutcome()

    def _submit(self, form_index: int, pressed: Node | None) -> None:
        page, state = self.visit.page, self.visit.state
        form = page.forms[form_index]
        if pressed is None:
            pressed = next(
                (page.nodes[i - 1] for i in form.fields if page.nodes[i - 1].role == "button"), None
            )
        pairs: list[tuple[str, str]] = list(form.hidden)
        for field_id in form.fields:
            node = page.nodes[field_id - 1]
            name = node.attrs.get("name")
            if not name:
                continue
            if node.role == "textbox":
                pairs.append((name, state.values.get(node.id, "")))
            elif node.role in ("checkbox", "radio"):
                if state.checked.get(node.id):
                    pairs.append((name, node.attrs.get("value", "on")))
            elif node.role == "combobox":
                chosen = state.selected.get(node.id)
                if chosen:
                    option = page.nodes[chosen - 1]
                    pairs.append((name, option.attrs.get("value", option.name)))
            elif node is pressed:
                pairs.append((name, node.attrs.get("value", "")))
        action = urljoin(self.url, form.action or self.url)
        encoded = urlencode(pairs)
        if form.method == "post":
            self.navigate(action, "POST", encoded.encode())
        else:
            self.navigate(f"{action.split('?', 1)[0]}?{encoded}")

    def _do_press(self, combination: str) -> ActionOutcome:
        keys = [key.strip().lower() for key in combination.split("+")]
        *modifiers, key = keys
        if any(m not in _MODIFIERS for m in modifiers) or not (key in _KEYS or len(key) == 1):
            return ActionOutcome(
                f"Unknown key combination {combination!r}; use keys such as Enter, PageDown, "
                "Backspace, Alt+ArrowLeft or Control+a."
            )
        visit = self.visit
        focused = visit.page.node(visit.state.focused)
        if "alt" in modifiers and key in ("arrowleft", "arrowright"):
            return self._do_go_back() if key == "arrowleft" else self._do_go_forward()
        if key in ("pagedown", "space") and not modifiers:
            return self._do_scroll("down")
        if key == "pageup":
            return self._do_scroll("up")
        if focused is None:
            return ActionOutcome()
        if key == "enter" and not modifiers:
            if focused.role == "textbox" and focused.form >= 0 and focused.tag != "textarea":
                self._submit(focused.form, None)
            elif focused.role in ("link", "button"):
                return self._do_click(str(focused.id))
        elif key == "backspace" and focused.role == "textbox":
            visit.state.values[focused.id] = visit.state.values.get(focused.id, "")[:-1]
        return ActionOutcome()

    def _do_scroll(self, direction: str) -> ActionOutcome:
        visit = self.visit
        total = len(self.lines()) - 1
        step = max(1, self.viewport_lines * 3 // 4)
        if direction.lower() == "down":
            visit.scroll = min(visit.scroll + step, max(0, total - self.viewport_lines))
        else:
            visit.scroll = max(0, visit.scroll - step)
        return ActionOutcome()

    def _do_goto(self, url: str) -> ActionOutcome:
        if len(url) > MAX_URL:
            return ActionOutcome(f"The URL is longer than {MAX_URL} characters.")
        if url != BLANK and "://" not in url:
            url = f"http://{url}"
        if url != BLANK and self.resolve(_host(urlsplit(url).netloc)) is None:
            return ActionOutcome(f"Cannot reach {url!r}: only the local sites are online.")
        self.navigate(url)
        return ActionOutcome()

    def _do_go_back(self) -> ActionOutcome:
        if self.tab.index == 0:
            return ActionOutcome("There is no previous page in this tab.")
        self.tab.index -= 1
        return ActionOutcome()

    def _do_go_forward(self) -> ActionOutcome:
        if self.tab.index + 1 >= len(self.tab.history):
            return ActionOutcome("There is no next page in this tab.")
        self.tab.index += 1
        return ActionOutcome()

    def _do_new_tab(self) -> ActionOutcome:
        if len(self.tabs) >= 10:
            return ActionOutcome("At most 10 tabs can be open; close_tab first.")
        self.tabs.append(Tab([self._load("GET", BLANK)]))
        self.active = len(self.tabs) - 1
        return ActionOutcome()

    def _do_tab_focus(self, raw_index: str) -> ActionOutcome:
        index = int(raw_index)
        if index >= len(self.tabs):
            return ActionOutcome(f"There is no tab {index}; tabs are 0 to {len(self.tabs) - 1}.")
        self.active = index
        return ActionOutcome()

    def _do_close_tab(self) -> ActionOutcome:
        if len(self.tabs) == 1:
            return ActionOutcome("This is the only tab; it cannot be closed.")
        del self.tabs[self.active]
        self.active = min(self.active, len(self.tabs) - 1)
        return ActionOutcome()

    def _do_stop(self, answer: str) -> ActionOutcome:
        return ActionOutcome(answer=answer.strip())


def _host(netloc: str) -> str:
    host = netloc.lower().rsplit("@", 1)[-1]
    return host.replace("127.0.0.1", "localhost", 1)


def _canonical(url: str) -> str:
    parts = urlsplit(url)
    path = parts.path or "/"
    return f"{parts.scheme}://{_host(parts.netloc)}{path}" + (
        f"?{parts.query}" if parts.query else ""
    )


def _error_document(url: str, reason: str = "This site can't be reached.") -> str:
    return f"<title>{esc(url)}</title><h1>{esc(reason)}</h1><p>{esc(url)}</p>"
