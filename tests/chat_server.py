"""A real local HTTP server that speaks the OpenAI chat-completions protocol, for tests.

The "model" is a Python function from the request's messages to a reply (its text, or a whole
assistant message such as one with ``tool_calls``), answered as one JSON body or, when the request
asks for ``stream``, as server-sent events; a queue of scripted
faults (HTTP errors, garbage bodies, slow answers) can be served before it, and a server can be
broken for good (every request answered 500, or an HTML page, or never answered).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Model = Callable[[list[dict[str, Any]]], "str | dict[str, Any]"]

_HTML_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title><style>body{font:14px sans}"
    + b"</style></head><body><h1>Bad Gateway</h1>"
    + b"<p>The proxy server received an invalid response from an upstream server.</p>" * 40
    + b"</body></html>"
)


class ChatServer:
    """``with ChatServer(model) as server: server.base_url`` — serves until the block ends.

    ``faults`` is consumed one per chat request before the model answers: ``"500"``, ``"429"``,
    ``"400"``, ``"garbage"`` (not JSON), ``"no-choices"`` (JSON without choices), or
    ``("slow", seconds)``. ``GET /v1/models`` lists ``models`` (no fault is spent on it).

    ``broken`` answers every request alike: ``"500"`` (a JSON error), ``"html"`` (an HTTP 502
    HTML error page, as a proxy in front of a dead server sends), ``"webpage"`` (a 200 HTML
    page: a website, not an API) or ``"hang"`` (never answers).
    """

    def __init__(
        self,
        model: Model,
        faults: list[Any] | None = None,
        *,
        broken: str | None = None,
        models: Sequence[str] = (),
    ) -> None:
        self.model = model
        self.faults = deque(faults or [])
        self.broken = broken
        self.models = list(models)
        self.requests: list[dict[str, Any]] = []
        """Every POST (chat request), with its path, JSON body and Authorization header."""
        self.gets: list[str] = []
        """The path of every GET (the model listing)."""
        self._lock = threading.Lock()
        self._closing = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                with server._lock:
                    server.gets.append(self.path)
                if server.broken:
                    return self._send_broken()
                if self.path != "/v1/models":
                    return self._send(404, {"error": "not found"})
                data = [{"id": name, "object": "model"} for name in server.models]
                self._send(200, {"object": "list", "data": data})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append(
                        {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                    )
                    fault = server.faults.popleft() if server.faults else None
                if server.broken:
                    return self._send_broken()
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": "not found"})
                if isinstance(fault, tuple) and fault[0] == "slow":
                    time.sleep(fault[1])
                elif fault in ("500", "429", "400"):
                    return self._send(int(fault), {"error": {"message": f"scripted {fault}"}})
                elif fault == "garbage":
                    return self._send_raw(200, b"<html>this is not json")
                elif fault == "no-choices":
                    return self._send(200, {"id": "x", "object": "chat.completion"})
                reply = server.model(body["messages"])
                message = reply if isinstance(reply, dict) else {"content": reply}
                text = message.get("content") or ""
                prompt = sum(len(m.get("content") or "") for m in body["messages"]) // 4
                usage = {
                    "prompt_tokens": prompt,
                    "completion_tokens": len(text) // 4,
                    "total_tokens": prompt + len(text) // 4,
                }
                if body.get("stream"):
                    return self._send_stream(body, message, usage)
                self._send(
                    200,
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "model": body.get("model"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", **message},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": usage,
                    },
                )

            def _send_stream(
                self, body: dict[str, Any], message: dict[str, Any], usage: dict[str, int]
            ) -> None:
                """The reply as server-sent events: one delta with the whole message, the
                finish reason, the usage when asked for (``stream_options``), ``[DONE]``."""
                delta = {"role": "assistant", **message}
                if "tool_calls" in delta:
                    delta["tool_calls"] = [
                        {"index": i, **call} for i, call in enumerate(delta["tool_calls"])
                    ]
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                chunk: dict[str, Any] = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion.chunk",
                    "model": body.get("model"),
                }
                events: list[dict[str, Any]] = [
                    {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                    {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                ]
                if (body.get("stream_options") or {}).get("include_usage"):
                    events.append({**chunk, "choices": [], "usage": usage})
                lines = [f"data: {json.dumps(event)}\n\n" for event in events]
                data = "".join([*lines, "data: [DONE]\n\n"]).encode()
                self._send_raw(200, data, "text/event-stream")

            def _send_broken(self) -> None:
                if server.broken == "hang":
                    server._closing.wait(60)
                elif server.broken == "500":
                    self._send(500, {"error": {"message": "scripted: the engine is down"}})
                else:
                    status = 502 if server.broken == "html" else 200
                    self._send_raw(status, _HTML_PAGE, "text/html")

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                self._send_raw(status, json.dumps(payload).encode())

            def _send_raw(
                self, status: int, data: bytes, content_type: str = "application/json"
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
