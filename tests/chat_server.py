"""A real local HTTP server that speaks the OpenAI chat-completions protocol, for tests.

The "model" is a Python function from the request's messages to a reply (its text, or a whole
assistant message such as one with ``tool_calls``); a queue of scripted
faults (HTTP errors, garbage bodies, slow answers) can be served before it.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Model = Callable[[list[dict[str, Any]]], "str | dict[str, Any]"]


class ChatServer:
    """``with ChatServer(model) as server: server.base_url`` — serves until the block ends.

    ``faults`` is consumed one per request before the model answers: ``"500"``, ``"429"``,
    ``"400"``, ``"garbage"`` (not JSON), ``"no-choices"`` (JSON without choices), or
    ``("slow", seconds)``.
    """

    def __init__(self, model: Model, faults: list[Any] | None = None) -> None:
        self.model = model
        self.faults = deque(faults or [])
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append(
                        {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                    )
                    fault = server.faults.popleft() if server.faults else None
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
                        "usage": {
                            "prompt_tokens": prompt,
                            "completion_tokens": len(text) // 4,
                            "total_tokens": prompt + len(text) // 4,
                        },
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                self._send_raw(status, json.dumps(payload).encode())

            def _send_raw(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
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
        self._server.shutdown()
        self._server.server_close()
