"""A real browser for WebArena's original tasks: Playwright driving headless Chromium.

:class:`LiveBrowser` plays WebArena's action grammar on live sites and observes pages as
WebArena's ``browser_env`` does: Chromium's own accessibility tree (the DevTools protocol's
``Accessibility.getFullAXTree``), each node placed with ``getBoundingClientRect``, the nodes
outside the viewport left out (WebArena's ``current_viewport_only``), drawn as
``[id] role 'name' properties`` lines with repeated ``StaticText`` removed
(``processors.py``; WebArena shows Chromium's node ids, here the nodes are numbered in tree
order, see :func:`render_ax_tree`). ``click``, ``hover`` and ``type`` act with the mouse at
the centre of the element's box from the last observation, as WebArena's ``execute_action``
does; ``type`` clicks, then types the keys (appending), ``\\n`` (Enter) after unless the flag
is ``0``.

Playwright's synchronous API belongs to the thread that started it, and an environment may be
called from any thread (a server's pool), so every browser call runs on one worker thread of
its own.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from llmgym.errors import MissingDependencyError

__all__ = [
    "CHROMIUM_ARGS",
    "CHROMIUM_VARIABLE",
    "AxNode",
    "LiveBrowser",
    "find_chromium",
    "render_ax_tree",
]

CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
"""Flags for a closed network: without the background-networking ones Chromium keeps trying to
reach Google's hosts."""

CHROMIUM_VARIABLE = "LLMGYM_CHROMIUM"
"""The environment variable naming the Chromium binary to drive."""
IGNORED_PROPERTIES = frozenset(
    ["focusable", "editable", "readonly", "level", "settable", "multiline", "invalid"]
)
"""Accessibility properties WebArena's tree leaves out (``IGNORED_ACTREE_PROPERTIES``)."""
_HIDDEN_WHEN_UNNAMED = frozenset(
    [
        "generic",
        "img",
        "list",
        "strong",
        "paragraph",
        "banner",
        "navigation",
        "Section",
        "LabelText",
        "Legend",
        "listitem",
    ]
)
IN_VIEWPORT_RATIO_THRESHOLD = 0.6
_STATIC_TEXT = re.compile(r"\[\d+\] StaticText (.+)", re.S)
_BOUNDS_JS = """function() {
    if (this.nodeType == 3) {
        var range = document.createRange();
        range.selectNode(this);
        var rect = range.getBoundingClientRect().toJSON();
        range.detach();
        return rect;
    }
    return this.getBoundingClientRect().toJSON();
}"""
_SCROLL_JS = (
    "(document.scrollingElement || document.body).scrollTop = "
    "(document.scrollingElement || document.body).scrollTop {sign} window.innerHeight;"
)
MAX_TABS = 10
MAX_TYPED = 2_000
T = TypeVar("T")


def find_chromium() -> str:
    """The Chromium to launch: ``$LLMGYM_CHROMIUM`` if set, else ``chromium`` (or
    ``chromium-browser``, ``google-chrome``) on the ``PATH``. (Not a config field: a server's
    clients must not choose a program for the server to run.)

    Raises:
        MissingDependencyError: None of them exists.
    """
    executable = os.environ.get(CHROMIUM_VARIABLE, "")
    if executable:
        if not Path(executable).is_file():
            raise MissingDependencyError(f"${CHROMIUM_VARIABLE}={executable!r} is not a file")
        return executable
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise MissingDependencyError(
        "no Chromium found: install one (apt-get install chromium), or run 'playwright install "
        f"chromium' and set {CHROMIUM_VARIABLE} to the path of the binary"
    )


@dataclass(frozen=True)
class AxNode:
    """A node of the observed tree: its id, role, name and box (viewport pixels)."""

    node_id: str
    role: str
    name: str
    bounds: tuple[float, float, float, float]
    text: str


def _in_viewport_ratio(
    bounds: Sequence[float], viewport_width: float, viewport_height: float
) -> float:
    # WebArena's expression, kept as it is written (``/ width * height``, not ``/ (width *
    # height)``): it decides which nodes its agents saw.
    x, y, width, height = bounds
    overlap_width = max(0.0, min(x + width, viewport_width) - max(x, 0.0))
    overlap_height = max(0.0, min(y + height, viewport_height) - max(y, 0.0))
    return overlap_width * overlap_height / width * height


def render_ax_tree(
    nodes: list[dict[str, Any]],
    bounds: dict[str, tuple[float, float, float, float] | None],
    viewport: tuple[int, int] | None,
) -> tuple[str, dict[str, AxNode]]:
    """WebArena's text of a page's accessibility tree (``parse_accessibility_tree`` then
    ``clean_accesibility_tree``), from ``Accessibility.getFullAXTree``'s nodes and each node's
    box; ``viewport`` (width, height) leaves out the nodes outside it (``None``: keep all).
    Returns the text and the listed nodes by id.

    WebArena shows Chromium's accessibility node ids, which depend on what the renderer
    process did before (another context, an earlier page); here the nodes shown are numbered
    1, 2, ... in tree order once the repeated text is removed, so that the same page gives the
    same text in every episode."""
    unique: list[dict[str, Any]] = []
    seen: set[str] = set()
    for node in nodes:
        if node["nodeId"] not in seen:
            seen.add(node["nodeId"])
            unique.append({**node, "childIds": list(node.get("childIds", []))})
    by_id = {node["nodeId"]: node for node in unique}
    if viewport is not None:
        for node in unique:
            box = bounds.get(node["nodeId"])
            hidden = (
                box is None
                or box[2] == 0
                or box[3] == 0
                or _in_viewport_ratio(box, *viewport) < IN_VIEWPORT_RATIO_THRESHOLD
            )
            if hidden and node.get("parentId") in by_id:
                parent = by_id[node["parentId"]]
                index = parent["childIds"].index(node["nodeId"])
                parent["childIds"][index : index + 1] = node["childIds"]
                for child in node["childIds"]:
                    if child in by_id:
                        by_id[child]["parentId"] = node["parentId"]
                node["removed"] = True
    listed: dict[str, AxNode] = {}
    lines: list[str] = []

    def visit(node: dict[str, Any], depth: int) -> None:
        shown = True
        try:
            role = node["role"]["value"]
            name = node["name"]["value"]
            shown_id = str(len(listed) + 1)
            line = f"[{shown_id}] {role} {name!r}"
            properties = [
                f"{p['name']}: {p['value']['value']}"
                for p in node.get("properties", [])
                if p.get("name") not in IGNORED_PROPERTIES and "value" in p.get("value", {})
            ]
            if properties:
                line += " " + " ".join(properties)
            if not str(name).strip() and (
                (not properties and role in _HIDDEN_WHEN_UNNAMED) or role == "listitem"
            ):
                shown = False
            if shown:
                box = bounds.get(node["nodeId"]) or (0.0, 0.0, 0.0, 0.0)
                listed[shown_id] = AxNode(shown_id, role, str(name), box, line)
                lines.append("\t" * depth + line)
        except (KeyError, TypeError):
            shown = False
        for child in node["childIds"]:
            if child in by_id and not by_id[child].get("removed"):
                visit(by_id[child], depth + 1 if shown else depth)

    if unique:
        visit(unique[0], 0)
    kept: list[str] = []
    for line in lines:
        if "statictext" in line.lower():
            match = _STATIC_TEXT.search(line)
            if match:
                text = match.group(1)[1:-1]
                if text and all(text not in previous for previous in kept[-3:]):
                    kept.append(line)
        else:
            kept.append(line)
    numbered: list[str] = []
    shown: dict[str, AxNode] = {}
    for line in kept:
        depth = len(line) - len(line.lstrip("\t"))
        old_id, _, rest = line[depth + 1 :].partition("] ")
        node_id = str(len(shown) + 1)
        shown[node_id] = replace(listed[old_id], node_id=node_id, text=f"[{node_id}] {rest}")
        numbered.append("\t" * depth + shown[node_id].text)
    return "\n".join(numbered), shown


class LiveBrowser:
    """One Chromium, one browser context per episode; see the module docstring.

    Args:
        executable: The Chromium binary (see :func:`find_chromium`).
        viewport: Width and height in pixels (WebArena's runs: 1280 x 720).
        current_viewport_only: Leave out the nodes outside the viewport, as WebArena's runs do.
        timeout_ms: How long one navigation or action may take.
        settle_ms: How long to wait after an action for a navigation it starts.
    """

    def __init__(
        self,
        executable: str,
        *,
        viewport: tuple[int, int] = (1280, 720),
        current_viewport_only: bool = True,
        timeout_ms: int = 15_000,
        settle_ms: int = 100,
    ) -> None:
        self.executable = executable
        self.viewport = viewport
        self.current_viewport_only = current_viewport_only
        self.timeout_ms = timeout_ms
        self.settle_ms = settle_ms
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="llmgym-chromium")
        self._lock = threading.Lock()
        self._playwright: Any = None
        self._browser: Any = None
        self._context: Any = None
        self.page: Any = None
        self.nodes: dict[str, AxNode] = {}

    def call(self, function: Callable[..., T], *args: Any) -> T:
        """Run ``function(*args)`` on the browser's thread."""
        with self._lock:
            return self._worker.submit(function, *args).result()

    # ------------------------------------------------------------------ lifecycle
    def _launch(self) -> None:
        if self._browser is not None:
            return
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            raise MissingDependencyError(
                "WebArena's original tasks drive Chromium through Playwright: "
                "pip install 'llmgym[webarena]'"
            ) from None

        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(
            executable_path=self.executable, args=list(CHROMIUM_ARGS)
        )

    def open(self, start_urls: Sequence[str], storage_state: Path | None) -> None:
        """A fresh context (``storage_state``'s cookies, if given) with one tab per start URL;
        the first is active, as WebArena's ``setup``."""
        self.call(self._open, list(start_urls), storage_state)

    def _open(self, start_urls: list[str], storage_state: Path | None) -> None:
        self._launch()
        if self._context is not None:
            self._context.close()
        width, height = self.viewport
        self._context = self._browser.new_context(
            viewport={"width": width, "height": height},
            storage_state=str(storage_state) if storage_state else None,
            device_scale_factor=1,
        )
        self._context.set_default_timeout(self.timeout_ms)
        for url in start_urls:
            page = self._context.new_page()
            self._try(functools.partial(page.goto, url))
        self.page = self._context.pages[0]
        self.page.bring_to_front()

    def close(self) -> None:
        """Close the browser and its thread (idempotent)."""
        if self._browser is not None:
            self.call(self._close)
        self._worker.shutdown(wait=True)

    def _close(self) -> None:
        try:
            self._browser.close()
        finally:
            self._playwright.stop()
            self._browser = self._playwright = self._context = self.page = None

    @staticmethod
    def _try(action: Callable[[], object]) -> str:
        from playwright.sync_api import Error

        try:
            action()
        except Error as error:
            return str(error).splitlines()[0] if str(error) else type(error).__name__
        return ""

    # ------------------------------------------------------------------ observation
    def observe(self) -> str:
        """The tab bar and the tree, as WebArena's text observation."""
        return self.call(self._observe)

    def _observe(self) -> str:
        pages = self._context.pages
        titles = []
        for index, page in enumerate(pages):
            title = self._title(page)
            current = " (current)" if page is self.page else ""
            titles.append(f"Tab {index}{current}: {title}")
        tree, self.nodes = self._tree()
        return f"{' | '.join(titles)}\n\n{tree}"

    @staticmethod
    def _title(page: Any) -> str:
        try:
            return str(page.title())
        except Exception:  # a page still loading has no title yet
            return ""

    def _tree(self) -> tuple[str, dict[str, AxNode]]:
        from playwright.sync_api import Error

        page = self.page
        try:
            page.wait_for_load_state("load")
            client = page.context.new_cdp_session(page)
        except Error:
            return "", {}
        try:
            nodes = client.send("Accessibility.getFullAXTree", {})["nodes"]
            bounds: dict[str, tuple[float, float, float, float] | None] = {}
            for node in nodes:
                bounds[node["nodeId"]] = self._bounds(client, node)
            viewport = self.viewport if self.current_viewport_only else None
            return render_ax_tree(nodes, bounds, viewport)
        except Error:
            return "", {}
        finally:
            with contextlib.suppress(Error):
                client.detach()

    @staticmethod
    def _bounds(client: Any, node: dict[str, Any]) -> tuple[float, float, float, float] | None:
        from playwright.sync_api import Error

        if "backendDOMNodeId" not in node:
            return None
        if node.get("role", {}).get("value") == "RootWebArea":
            return (0.0, 0.0, 10.0, 10.0)
        try:
            remote = client.send("DOM.resolveNode", {"backendNodeId": node["backendDOMNodeId"]})
            response = client.send(
                "Runtime.callFunctionOn",
                {
                    "objectId": remote["object"]["objectId"],
                    "functionDeclaration": _BOUNDS_JS,
                    "returnByValue": True,
                },
            )
            value = response["result"]["value"]
            return (value["x"], value["y"], value["width"], value["height"])
        except (Error, KeyError):
            return None

    # ------------------------------------------------------------------ state for evaluators
    @property
    def url(self) -> str:
        """The active tab's URL."""
        return self.call(lambda: str(self.page.url))

    def goto_and_evaluate(self, url: str, scripts: Sequence[str], expression: str) -> str:
        """Open ``url`` in the active tab (``"last"``: stay), run ``scripts`` (errors ignored),
        then return ``expression``'s value as text (``""`` if it fails); an empty expression
        returns the page's HTML. WebArena's ``HTMLContentEvaluator`` step for one target."""
        return self.call(self._goto_and_evaluate, url, list(scripts), expression)

    def _goto_and_evaluate(self, url: str, scripts: list[str], expression: str) -> str:
        from playwright.sync_api import Error

        page = self.page
        if url != "last":
            self._try(lambda: page.goto(url))
            self._try(lambda: page.wait_for_load_state("load"))
        if not expression.strip():
            try:
                return str(page.content())
            except Error:
                return ""
        for script in scripts:
            self._try(functools.partial(page.evaluate, f"() => {script}"))
        try:
            value = page.evaluate(f"() => {expression}")
        except Error:
            return ""
        return str(value) if value else ""

    # ------------------------------------------------------------------ actions
    def act(self, verb: str, arguments: tuple[str, ...], allowed_hosts: frozenset[str]) -> str:
        """Apply one parsed action (``click``, ``type``, ...; not ``stop``); returns why it was
        refused or failed ("" if it was done). ``goto`` may only open ``allowed_hosts``."""
        return self.call(self._act, verb, arguments, allowed_hosts)

    def _act(self, verb: str, arguments: tuple[str, ...], allowed_hosts: frozenset[str]) -> str:
        page = self.page
        loads: list[object] = []
        navigations: list[object] = []

        def on_request(request: Any) -> None:
            if request.is_navigation_request() and request.frame == page.main_frame:
                navigations.append(request)

        def on_load(loaded: Any) -> None:
            loads.append(loaded)

        page.on("request", on_request)
        page.on("load", on_load)
        try:
            error = self._dispatch(verb, arguments, allowed_hosts)
            if self.page is page:
                page.wait_for_timeout(self.settle_ms)
                if navigations and not loads:
                    self._try(lambda: page.wait_for_event("load"))
            return error
        finally:
            page.remove_listener("request", on_request)
            page.remove_listener("load", on_load)

    def _center(self, element_id: str) -> tuple[float, float] | str:
        node = self.nodes.get(element_id)
        if node is None:
            return f"There is no element [{element_id}] in the current observation."
        x, y, width, height = node.bounds
        return x + width / 2, y + height / 2

    def _dispatch(
        self, verb: str, arguments: tuple[str, ...], allowed_hosts: frozenset[str]
    ) -> str:
        page = self.page
        if verb in ("click", "hover", "type"):
            center = self._center(arguments[0])
            if isinstance(center, str):
                return center
            if verb == "hover":
                return self._try(lambda: page.mouse.move(*center))
            if verb == "type" and len(arguments[1]) > MAX_TYPED:
                return f"The text is longer than {MAX_TYPED} characters."
            error = self._try(lambda: page.mouse.click(*center))
            if verb == "click" or error:
                return error
            text = arguments[1] + ("" if arguments[2] == "0" else "\n")
            return self._try(lambda: page.keyboard.type(text))
        if verb == "press":
            key = arguments[0].strip()
            if "Meta" in key:
                key = key.replace("Meta", "Control")
            return self._try(lambda: page.keyboard.press(key))
        if verb == "scroll":
            sign = "-" if arguments[0].lower() == "up" else "+"
            return self._try(lambda: page.evaluate(_SCROLL_JS.format(sign=sign)))
        if verb == "goto":
            url = arguments[0]
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or parts.netloc.lower() not in allowed_hosts:
                return (
                    f"Cannot open {url!r}: goto opens the task's sites only "
                    f"({', '.join(sorted(allowed_hosts))})."
                )
            return self._try(lambda: page.goto(url))
        if verb == "go_back":
            return self._try(page.go_back)
        if verb == "go_forward":
            return self._try(page.go_forward)
        pages = self._context.pages
        if verb == "new_tab":
            if len(pages) >= MAX_TABS:
                return f"At most {MAX_TABS} tabs can be open; close_tab first."
            self.page = self._context.new_page()
            return ""
        if verb == "tab_focus":
            index = int(arguments[0])
            if index >= len(pages):
                return f"There is no tab {index}; tabs are 0 to {len(pages) - 1}."
            self.page = pages[index]
            self.page.bring_to_front()
            return ""
        if verb == "close_tab":
            page.close()
            remaining = self._context.pages
            self.page = remaining[-1] if remaining else self._context.new_page()
            return ""
        return f"{verb} is not a browser action"
