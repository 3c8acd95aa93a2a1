"""A small WSGI web framework for the WebArena sites: routes, requests, responses, sessions, HTML.

Every site is a :class:`Site`, a plain WSGI application (``site(environ, start_response)``) over
one sqlite connection, so the same object serves a real browser through :mod:`wsgiref` (``llmgym
webarena serve``) and the in-process browser model of the environment, which calls it directly.

A site declares its pages with :func:`route`::

    class Forum(Site):
        name = "forum"
        title = "Postmill"

        @route("/f/<forum>")
        def forum_page(self, request: Request, forum: str) -> Response:
            return self.page(request, forum, h("h1", forum))

Path parameters are ``<name>`` (one path segment) or ``<int:name>`` (digits, passed as ``int``).
Sessions live in the site's own database (table ``sessions``, which
:data:`~llmgym.envs.webarena.database.SESSION_SCHEMA` adds to every dataset), so resetting the
database also logs everyone back to the state the data generator left.
"""

from __future__ import annotations

import hashlib
import html
import io
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import parse_qs, urlencode

from llmgym.errors import HttpError

if TYPE_CHECKING:
    from llmgym.envs.webarena.database import Dataset

__all__ = [
    "Request",
    "Response",
    "Site",
    "button",
    "checkbox",
    "esc",
    "flash_box",
    "form",
    "h",
    "hidden",
    "link",
    "pager",
    "password_hash",
    "route",
    "search_form",
    "select",
    "table",
    "textarea",
    "textbox",
    "wsgi_environ",
]

MAX_BODY_BYTES = 1_000_000
"""Request bodies over this size are refused (413)."""
MAX_SEARCH_CHARS = 200
"""Search text is cut to this many characters (sqlite refuses a LIKE pattern over 50,000
bytes, and no page needs more)."""


_PARAMETER = re.compile(r"<(?:(int):)?([a-z_]+)>")


def password_hash(password: str, salt: str) -> str:
    """The stored form of a password (salted SHA-256; the data are generated, not secret)."""
    return hashlib.sha256(f"{salt}:{password}".encode()).hexdigest()


# ---------------------------------------------------------------------------- requests
@dataclass
class Request:
    """One HTTP request, parsed from a WSGI ``environ``."""

    method: str
    path: str
    query: dict[str, str]
    form: dict[str, str]
    form_lists: dict[str, list[str]]
    cookies: dict[str, str]
    host: str
    session_id: str | None = None
    user_id: int | None = None
    flash: str = ""
    new_cookies: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_environ(cls, environ: Mapping[str, Any]) -> Request:
        method = str(environ.get("REQUEST_METHOD", "GET")).upper()
        query = _first_values(
            parse_qs(str(environ.get("QUERY_STRING", "")), keep_blank_values=True)
        )
        form_lists: dict[str, list[str]] = {}
        if method == "POST":
            length = _int(environ.get("CONTENT_LENGTH")) or 0
            if length > MAX_BODY_BYTES:
                raise HttpError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "The form is too large.")
            body = environ["wsgi.input"].read(length) if length else b""
            form_lists = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
        cookies = {}
        for part in str(environ.get("HTTP_COOKIE", "")).split(";"):
            key, _, value = part.strip().partition("=")
            if key:
                cookies[key] = value
        host = str(environ.get("HTTP_HOST") or environ.get("SERVER_NAME", "localhost"))
        path = str(environ.get("PATH_INFO", "/")) or "/"
        return cls(method, path, query, _first_values(form_lists), form_lists, cookies, host)

    def arg(self, name: str, default: str = "") -> str:
        """A query-string parameter, stripped."""
        return self.query.get(name, default).strip()

    def search_arg(self, name: str) -> str:
        """A search text from the query string: stripped, and cut to
        :data:`MAX_SEARCH_CHARS` characters."""
        return self.arg(name)[:MAX_SEARCH_CHARS]

    def int_arg(self, name: str, default: int, low: int = 1, high: int = 1_000_000) -> int:
        """A whole-number query parameter, clamped to ``[low, high]`` (``default`` if absent)."""
        value = _int(self.query.get(name))
        return default if value is None else min(max(value, low), high)

    def field(self, name: str) -> str:
        """A form field, stripped (``""`` if absent)."""
        return self.form.get(name, "").strip()

    def pagination(self, total: int, per_page: int) -> tuple[int, int]:
        """``(page, pages)`` of a listing of ``total`` rows: the ``page`` parameter, clamped to
        the pages there are (at least one)."""
        pages = max(1, -(-total // per_page))
        return min(self.int_arg("page", 1), pages), pages


def _first_values(lists: Mapping[str, list[str]]) -> dict[str, str]:
    return {key: values[0] for key, values in lists.items() if values}


def _int(value: object) -> int | None:
    text = str(value).strip() if value is not None else ""
    if not text or len(text) > 12 or not text.lstrip("-").isdigit():
        return None
    return int(text)


# ---------------------------------------------------------------------------- responses
@dataclass
class Response:
    """A response: status, body and headers (``Content-Type`` defaults to HTML)."""

    body: str
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    content_type: str = "text/html; charset=utf-8"

    @classmethod
    def redirect(cls, location: str) -> Response:
        """A 303 See Other to ``location`` (after a form post, as real sites do)."""
        return cls("", 303, [("Location", location)])


# ---------------------------------------------------------------------------- routes
def route(path: str, methods: Sequence[str] = ("GET",)) -> Callable[[Callable], Callable]:
    """Mark a :class:`Site` method as the handler of ``path`` for ``methods``."""

    def mark(handler: Callable) -> Callable:
        routes = [*getattr(handler, "_routes", ()), (path, tuple(m.upper() for m in methods))]
        setattr(handler, "_routes", routes)  # noqa: B010 (a function attribute)
        return handler

    return mark


@dataclass(frozen=True)
class _Route:
    pattern: re.Pattern[str]
    methods: tuple[str, ...]
    handler: str
    converters: tuple[tuple[str, bool], ...]


def _compile(path: str) -> tuple[re.Pattern[str], tuple[tuple[str, bool], ...]]:
    converters: list[tuple[str, bool]] = []
    pattern, last = "", 0
    for match in _PARAMETER.finditer(path):
        pattern += re.escape(path[last : match.start()])
        is_int = match.group(1) == "int"
        pattern += r"(\d{1,12})" if is_int else r"([^/]+)"
        converters.append((match.group(2), is_int))
        last = match.end()
    pattern += re.escape(path[last:])
    return re.compile(pattern + r"/?\Z"), tuple(converters)


# ---------------------------------------------------------------------------- sites
class Site:
    """Base class of a WebArena site: a WSGI application over one sqlite connection.

    Subclasses set ``name`` (short, stable: it names the cookie and the session rows), ``title``,
    ``dataset`` and ``port`` (the local port it is reached at, as in WebArena's
    ``localhost:7770``), define pages with :func:`route`, and implement :meth:`layout`. Handlers
    take the :class:`Request` and the path parameters and return a :class:`Response` (or raise
    :class:`HttpError`). With ``login_required``, every path but ``public_paths`` redirects to
    ``login_path`` without a logged-in session.
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    port: ClassVar[int] = 0
    dataset: ClassVar[type[Dataset]]
    """The data the site serves (sites with the same dataset share one database)."""
    login_path: ClassVar[str] = "/login"
    public_paths: ClassVar[tuple[str, ...]] = ("/login",)
    """Paths reachable without logging in, when :attr:`login_required` is set."""
    login_required: ClassVar[bool] = False
    stylesheet: ClassVar[str] = ""
    _routes: ClassVar[tuple[_Route, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        routes: list[_Route] = []
        for klass in reversed(cls.__mro__):
            for attribute, value in vars(klass).items():
                for path, methods in getattr(value, "_routes", ()):
                    pattern, converters = _compile(path)
                    routes.append(_Route(pattern, methods, attribute, converters))
        cls._routes = tuple(routes)

    def __init__(self, db: sqlite3.Connection, *, secret: str = "llmgym") -> None:
        self.db = db
        self.secret = secret
        self._lock = threading.RLock()

    @property
    def origin(self) -> str:
        """``http://localhost:PORT``: where the site is reached."""
        return f"http://localhost:{self.port}"

    @property
    def cookie_name(self) -> str:
        return f"{self.name}_sid"

    # ------------------------------------------------------------------ WSGI
    def __call__(
        self, environ: Mapping[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        with self._lock:
            response = self.handle(environ)
        body = response.body.encode("utf-8")
        headers = [("Content-Type", response.content_type), ("Content-Length", str(len(body)))]
        start_response(
            f"{response.status} {HTTPStatus(response.status).phrase}",
            [
                *headers,
                *response.headers,
            ],
        )
        return [body]

    def handle(self, environ: Mapping[str, Any]) -> Response:
        """Answer one request (the WSGI call without the byte encoding)."""
        request: Request | None = None
        try:
            request = Request.from_environ(environ)
            self._open_session(request)
            response = self._dispatch(request)
        except HttpError as error:
            response = self.error_page(request, error.status, error.message)
        except sqlite3.DatabaseError as error:
            response = self.error_page(request, 500, f"The database refused the request: {error}")
        for key, value in (request.new_cookies if request else {}).items():
            response.headers.append(("Set-Cookie", f"{key}={value}; Path=/; HttpOnly"))
        return response

    def _dispatch(self, request: Request) -> Response:
        allowed: list[str] = []
        for candidate in self._routes:
            match = candidate.pattern.match(request.path)
            if match is None:
                continue
            if request.method not in candidate.methods:
                allowed.extend(candidate.methods)
                continue
            if (
                self.login_required
                and request.user_id is None
                and not request.path.startswith(self.public_paths)
            ):
                return Response.redirect(self.login_path)
            arguments = {
                name: int(value) if is_int else value
                for (name, is_int), value in zip(candidate.converters, match.groups(), strict=True)
            }
            return getattr(self, candidate.handler)(request, **arguments)
        if allowed:
            raise HttpError(HTTPStatus.METHOD_NOT_ALLOWED, f"{request.method} is not allowed here.")
        raise HttpError(HTTPStatus.NOT_FOUND, "We can't find the page you are looking for.")

    # ------------------------------------------------------------------ sessions
    def _open_session(self, request: Request) -> None:
        sid = request.cookies.get(self.cookie_name)
        if not sid:
            return
        row = self.db.execute(
            "SELECT user_id, flash FROM sessions WHERE sid = ? AND site = ?", (sid, self.name)
        ).fetchone()
        if row is None:
            return
        request.session_id, request.user_id, request.flash = sid, row[0], row[1]
        if row[1]:
            self.db.execute("UPDATE sessions SET flash = '' WHERE sid = ?", (sid,))

    def log_in(self, request: Request, user_id: int) -> None:
        """Start a logged-in session for ``user_id`` (sets the session cookie)."""
        count = self.db.execute("SELECT count(*) FROM sessions").fetchone()[0]
        sid = hashlib.sha256(f"{self.secret}:{self.name}:{count}:{user_id}".encode()).hexdigest()
        self.db.execute(
            "INSERT OR REPLACE INTO sessions (sid, site, user_id) VALUES (?, ?, ?)",
            (sid, self.name, user_id),
        )
        request.session_id, request.user_id = sid, user_id
        request.new_cookies[self.cookie_name] = sid

    def log_out(self, request: Request) -> None:
        """End the request's session."""
        if request.session_id:
            self.db.execute("DELETE FROM sessions WHERE sid = ?", (request.session_id,))
        request.session_id, request.user_id = None, None
        request.new_cookies[self.cookie_name] = ""

    def sign_in(
        self,
        request: Request,
        *,
        heading: str,
        field: str,
        label: str,
        lookup: str,
        landing: str,
        submit: str = "Sign In",
        refused: str = "The account sign-in was incorrect.",
        match_case: bool = False,
    ) -> Response:
        """The sign-in page (GET) and its check (POST): ``lookup`` selects ``(id,
        password_hash)`` by the form's ``field`` (lower-cased unless ``match_case``), and the
        password must hash to it (:func:`password_hash` salted with the lower-cased login);
        success redirects to ``landing``, failure shows ``refused``."""
        note = ""
        if request.method == "POST":
            who = request.field(field)
            row = self.db.execute(lookup, (who if match_case else who.lower(),)).fetchone()
            if row and row[1] == password_hash(request.form.get("password", ""), who.lower()):
                self.log_in(request, row[0])
                return Response.redirect(landing)
            note = h("div", refused, class_="flash")
        inner = textbox(field, label) + textbox("password", "Password", kind="password")
        body = h("h1", esc(heading)) + note + form(request.path, inner + button(submit), "post")
        return self.page(request, heading, body)

    def flash(self, request: Request, message: str) -> None:
        """Show ``message`` on the next page the session loads ("You saved the product.")."""
        if request.session_id:
            self.db.execute(
                "UPDATE sessions SET flash = ? WHERE sid = ?", (message, request.session_id)
            )

    def row(self, sql: str, *params: object) -> dict[str, Any]:
        """The first row of ``sql`` as a dict by column name; a 404 page if there is none."""
        cursor = self.db.execute(sql, params)
        row = cursor.fetchone()
        if row is None:
            raise HttpError(HTTPStatus.NOT_FOUND, "We can't find the page you are looking for.")
        return dict(zip([d[0] for d in cursor.description], row, strict=True))

    # ------------------------------------------------------------------ pages
    def layout(self, request: Request | None, title: str, body: str) -> str:
        """The site's page around ``body`` (header, navigation, footer)."""
        raise NotImplementedError

    def page(self, request: Request | None, title: str, body: str, status: int = 200) -> Response:
        """A full HTML page."""
        return Response(self.layout(request, title, body), status)

    def error_page(self, request: Request | None, status: int, message: str) -> Response:
        """An error page with the HTTP status ``status``."""
        phrase = HTTPStatus(status).phrase
        body = h("h1", f"{status} {phrase}") + h("p", message)
        return self.page(request, phrase, body, status)

    def document(self, title: str, body: str) -> str:
        """The HTML document: ``<title>`` and ``body``, with the site's stylesheet."""
        return (
            f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}'
            f"</title><style>{BASE_STYLE}{self.stylesheet}</style></head><body>{body}</body></html>"
        )


BASE_STYLE = (
    "body{font-family:sans-serif;margin:0;color:#222}header,nav,main,footer{padding:8px 16px}"
    "header{background:#1f3b57;color:#fff}header a{color:#fff;margin-right:12px}"
    "nav a{margin-right:10px}table{border-collapse:collapse;margin:8px 0}"
    "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
    ".flash{background:#e6f4e6;padding:6px;border:1px solid #9c9}"
    ".product{display:inline-block;width:220px;vertical-align:top;margin:6px;"
    "border:1px solid #ddd;padding:6px}"
)


# ---------------------------------------------------------------------------- HTML helpers
def esc(value: object) -> str:
    """HTML-escape ``value``'s text."""
    text = value if type(value) is str else str(value)
    # Most texts (urls, names, numbers) have nothing to escape: testing is cheaper than escaping.
    if "&" in text or "<" in text or ">" in text or '"' in text or "'" in text:
        return html.escape(text, quote=True)
    return text


@lru_cache(maxsize=256)
def _attribute_name(key: str) -> str:
    return key.rstrip("_").replace("_", "-")


def _attributes(attrs: Mapping[str, object]) -> str:
    parts = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        name = _attribute_name(key)
        parts.append(f" {name}" if value is True else f' {name}="{esc(value)}"')
    return "".join(parts)


def h(tag: str, content: str = "", **attrs: object) -> str:
    """An element; ``content`` is HTML (escape text with :func:`esc`). ``class_`` -> ``class``,
    ``aria_label`` -> ``aria-label``; ``True`` gives a bare attribute, ``None``/``False`` none."""
    if not attrs:
        return f"<{tag}>{content}</{tag}>"
    return f"<{tag}{_attributes(attrs)}>{content}</{tag}>"


def link(href: str, text: str, **attrs: object) -> str:
    """A link with escaped ``text``."""
    extra = _attributes(attrs) if attrs else ""
    return f'<a href="{esc(href)}"{extra}>{esc(text)}</a>'


def textbox(name: str, label: str, value: object = "", kind: str = "text", **attrs: object) -> str:
    """A text input labelled ``label`` (its accessible name)."""
    attributes = {
        "type": kind,
        "name": name,
        "value": value,
        "aria_label": label,
        "placeholder": label,
        **attrs,
    }
    return f"<input{_attributes(attributes)}>"


def textarea(name: str, label: str, value: str = "", **attrs: object) -> str:
    """A multi-line text field labelled ``label``."""
    return h("textarea", esc(value), name=name, aria_label=label, placeholder=label, **attrs)


def hidden(name: str, value: object) -> str:
    """A hidden form field."""
    return f'<input type="hidden" name="{esc(name)}" value="{esc(value)}">'


def checkbox(name: str, label: str, checked: bool = False, value: str = "1") -> str:
    """A checkbox labelled ``label``."""
    attrs = {"type": "checkbox", "name": name, "value": value, "aria_label": label}
    return f"<input{_attributes({**attrs, 'checked': checked})}>"


def select(name: str, label: str, options: Sequence[tuple[str, str]], selected: str = "") -> str:
    """A drop-down (combobox) of ``(value, text)`` options."""
    inner = "".join(
        h("option", esc(text), value=value, selected=value == selected) for value, text in options
    )
    return h("select", inner, name=name, aria_label=label)


def button(text: str, name: str | None = None, value: str | None = None) -> str:
    """A submit button."""
    return h("button", esc(text), type="submit", name=name, value=value)


def form(action: str, inner: str, method: str = "get", **attrs: object) -> str:
    """A form posting (or getting) ``inner``'s fields to ``action``."""
    return h("form", inner, action=action, method=method, **attrs)


def search_form(
    request: Request | None, name: str, label: str, extra: str = "", action: str = "/search"
) -> str:
    """A site's search box: the text box ``name`` (showing the request's query) and ``Search``."""
    box = textbox(name, label, request.arg(name) if request else "")
    return form(action, box + extra + button("Search"), role="search")


def flash_box(request: Request | None) -> str:
    """The request's flash message (the confirmation of the last change), if it has one."""
    return h("div", esc(request.flash), class_="flash") if request and request.flash else ""


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], **attrs: object) -> str:
    """A table; ``headers`` are text, row cells are HTML."""
    head = "".join(h("th", esc(text)) for text in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return h("table", f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody>", **attrs)


def pager(path: str, query: Mapping[str, str], page: int, pages: int) -> str:
    """Page links (``Previous``, ``Page 2 of 9``, ``Next``) keeping the other query parameters."""
    if pages <= 1:
        return ""

    def to(number: int) -> str:
        return f"{path}?{urlencode({**query, 'page': number})}"

    parts = []
    if page > 1:
        parts.append(link(to(page - 1), "Previous"))
    parts.append(esc(f"Page {page} of {pages}"))
    if page < pages:
        parts.append(link(to(page + 1), "Next"))
    return h("nav", " ".join(parts), aria_label="Pagination")


def wsgi_environ(
    method: str, path: str, query: str, body: bytes, host: str, cookie: str
) -> dict[str, Any]:
    """The WSGI ``environ`` of one request (what the in-process browser sends a site)."""
    return {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "CONTENT_TYPE": "application/x-www-form-urlencoded",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_HOST": host,
        "HTTP_COOKIE": cookie,
        "SERVER_NAME": host.partition(":")[0],
        "SERVER_PORT": host.partition(":")[2] or "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0),
        "wsgi.errors": io.StringIO(),
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
