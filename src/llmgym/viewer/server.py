"""``llmgym view``: a local web page over trajectory and results files (standard library only).

The page (``static/``: HTML, CSS and plain JavaScript, shipped in the package) asks a small JSON
API for what it shows; the server pages and filters in memory (:class:`TrajectoryStore`):

* ``GET /api/runs`` — the files given, and the values each filter can take;
* ``GET /api/episodes?run=&env_id=&agent=&split=&success=&min_invalid=&max_invalid=&min_turns=
  &max_turns=&q=&offset=&limit=`` — ``{"total", "offset", "items"}``;
* ``GET /api/episodes/ID`` — one episode's full record;
* ``GET /api/episodes/ID/frames/I.png`` — its recorded frame ``I``;
* ``GET /api/compare?a=RUN&b=RUN&outcome=&offset=&limit=`` — the tasks both runs played, which
  one solved each, with ``counts`` per outcome.

It serves nothing else: the assets are a fixed list, episodes are read only from the files it
was given (at the byte ranges its index holds), and requests whose ``Host`` is not the address
it listens on are refused (a web page elsewhere cannot reach it through DNS rebinding). Errors
are JSON: ``{"error": "..."}`` with a 4xx status.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from llmgym.viewer.store import OUTCOMES, EpisodeFilter, TrajectoryStore

__all__ = ["ViewerServer", "make_server"]

_ASSETS = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/app.css": ("app.css", "text/css; charset=utf-8"),
}
_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_MAX_PAGE = 500
_EPISODE = re.compile(r"/api/episodes/(\d{1,9})")
_FRAME = re.compile(r"/api/episodes/(\d{1,9})/frames/(\d{1,9})\.png")


class _BadRequest(ValueError):
    """A query parameter out of range: answered with 400 and the message."""


class ViewerServer(ThreadingHTTPServer):
    """An HTTP server over one :class:`TrajectoryStore`."""

    daemon_threads = True
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], store: TrajectoryStore) -> None:
        super().__init__(address, _Handler)
        self.store = store
        host, port = str(self.server_address[0]), self.server_address[1]
        self.url = f"http://{_url_host(host)}:{port}/"
        self.allowed_hosts: set[str] | None = None
        """The ``Host`` headers answered when listening on loopback (``None``: any, for a
        server its user chose to expose)."""
        if host in ("127.0.0.1", "::1", "localhost"):
            names = ("127.0.0.1", "localhost", "[::1]")
            self.allowed_hosts = {f"{name}:{port}" for name in names}


def make_server(store: TrajectoryStore, host: str = "127.0.0.1", port: int = 8765) -> ViewerServer:
    """A viewer server bound to ``host:port`` (``port=0`` picks a free one; see ``.url``)."""
    return ViewerServer((host, port), store)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


class _Handler(BaseHTTPRequestHandler):
    server: ViewerServer
    server_version = "llmgym-view"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows the address, not every request."""

    def do_GET(self) -> None:
        allowed = self.server.allowed_hosts
        if allowed is not None and self.headers.get("Host", "") not in allowed:
            self._json({"error": "unexpected Host header"}, HTTPStatus.FORBIDDEN)
            return
        parts = urlsplit(self.path)
        path, query = parts.path, parse_qs(parts.query)
        try:
            if path in _ASSETS:
                self._asset(*_ASSETS[path])
            elif path == "/api/runs":
                self._json(self._runs())
            elif path == "/api/episodes":
                self._json(self._episodes(query))
            elif path == "/api/compare":
                self._json(self._compare(query))
            elif match := _EPISODE.fullmatch(path):
                self._json(self.server.store.episode(int(match[1])))
            elif match := _FRAME.fullmatch(path):
                frame = self.server.store.frame(int(match[1]), int(match[2]))
                self._send(frame, "image/png")
            else:
                self._json({"error": f"not found: {path}"}, HTTPStatus.NOT_FOUND)
        except _BadRequest as error:
            self._json({"error": str(error)}, HTTPStatus.BAD_REQUEST)
        except KeyError as error:
            self._json({"error": str(error.args[0])}, HTTPStatus.NOT_FOUND)
        except (OSError, ValueError) as error:
            self._json({"error": str(error)}, HTTPStatus.INTERNAL_SERVER_ERROR)

    def do_POST(self) -> None:
        self._json({"error": "the viewer only reads"}, HTTPStatus.METHOD_NOT_ALLOWED)

    do_PUT = do_DELETE = do_PATCH = do_POST

    # ------------------------------------------------------------------ answers
    def _runs(self) -> dict[str, Any]:
        store = self.server.store
        return {
            "runs": [run.to_dict(store) for run in store.runs],
            "episodes": len(store.episodes),
            **store.facets(),
        }

    def _episodes(self, query: Mapping[str, list[str]]) -> dict[str, Any]:
        keep = EpisodeFilter(
            run=_int(query, "run"),
            env_id=_text(query, "env_id"),
            agent=_text(query, "agent"),
            split=_text(query, "split"),
            success=_flag(query, "success"),
            min_invalid=_int(query, "min_invalid"),
            max_invalid=_int(query, "max_invalid"),
            min_turns=_int(query, "min_turns"),
            max_turns=_int(query, "max_turns"),
            search=_text(query, "q"),
        )
        offset, limit = _page(query)
        total, page = self.server.store.query(keep, offset, limit)
        return {"total": total, "offset": offset, "items": [e.to_row() for e in page]}

    def _compare(self, query: Mapping[str, list[str]]) -> dict[str, Any]:
        run_a, run_b = _int(query, "a"), _int(query, "b")
        if run_a is None or run_b is None:
            raise _BadRequest("compare needs two runs: a=RUN&b=RUN")
        outcome = _text(query, "outcome")
        if outcome and outcome not in OUTCOMES:
            raise _BadRequest(f"outcome={outcome!r}: one of {', '.join(OUTCOMES)}")
        rows = self.server.store.compare(run_a, run_b)
        counts = {name: 0 for name in OUTCOMES}
        for row in rows:
            counts[row.outcome] += 1
        chosen = [row for row in rows if not outcome or row.outcome == outcome]
        offset, limit = _page(query)
        return {
            "total": len(chosen),
            "offset": offset,
            "counts": counts,
            "items": [row.to_dict() for row in chosen[offset : offset + limit]],
        }

    # ------------------------------------------------------------------ sending
    def _asset(self, name: str, content_type: str) -> None:
        body = (resources.files("llmgym.viewer") / "static" / name).read_bytes()
        self._send(body, content_type)

    def _json(self, payload: Any, status: HTTPStatus = HTTPStatus.OK) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self._send(body, "application/json; charset=utf-8", status)

    def _send(self, body: bytes, content_type: str, status: HTTPStatus = HTTPStatus.OK) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in _SECURITY_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


def _text(query: Mapping[str, list[str]], name: str) -> str:
    return query.get(name, [""])[-1]


def _parsed(query: Mapping[str, list[str]], name: str, parse: Callable[[str], Any]) -> Any:
    text = _text(query, name).strip()
    if not text:
        return None
    try:
        return parse(text)
    except ValueError:
        raise _BadRequest(f"{name}={text!r} is not valid here") from None


def _int(query: Mapping[str, list[str]], name: str) -> int | None:
    value = _parsed(query, name, int)
    if value is not None and value < 0:
        raise _BadRequest(f"{name}={value} must be >= 0")
    return value


def _flag(query: Mapping[str, list[str]], name: str) -> bool | None:
    def parse(text: str) -> bool:
        if text not in ("true", "false"):
            raise ValueError(text)
        return text == "true"

    return _parsed(query, name, parse)


def _page(query: Mapping[str, list[str]]) -> tuple[int, int]:
    offset = _int(query, "offset") or 0
    limit = _int(query, "limit")
    if limit is None:
        limit = 50
    if not 1 <= limit <= _MAX_PAGE:
        raise _BadRequest(f"limit={limit} must be 1-{_MAX_PAGE}")
    return offset, limit
