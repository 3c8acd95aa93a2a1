"""One client for OpenAI-compatible chat-completions endpoints (vLLM, Ollama, llama.cpp's server,
hosted APIs), shared by the LLM agents and by LLM-driven environment configuration.

    client = ChatClient(model="qwen2.5-7b-instruct", base_url="http://localhost:8000/v1")
    reply = client.complete([{"role": "user", "content": "Say hi."}], temperature=0.0)
    reply.text, reply.usage.total_tokens

Retries with exponential backoff (and jitter) on connection errors, connect timeouts, HTTP 429
and 5xx; other 4xx answers and read timeouts (a server that does not answer within ``timeout``)
raise :class:`ChatError` at once, malformed replies after the retries. Error messages summarise
the server's answer (its status and the first 200 characters of its text, an HTML page by its
title) instead of dumping it. :meth:`ChatClient.preflight` checks a server before a long run.

There is no implicit hosted endpoint: without ``base_url`` or ``$OPENAI_BASE_URL`` the client
uses ``api.openai.com`` only when an API key is given, and otherwise refuses to start.
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from llmgym.errors import ChatError

__all__ = [
    "OPENAI_URL",
    "ChatClient",
    "ChatReply",
    "Usage",
    "summarize_body",
]

Message = Mapping[str, Any]

OPENAI_URL = "https://api.openai.com/v1"
"""The hosted API, used only when an API key is given and no other server is named."""

_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
_HINTS = {
    401: "check the API key (--api-key or $OPENAI_API_KEY)",
    403: "check the API key (--api-key or $OPENAI_API_KEY)",
    404: "is the base URL the API root (usually ending in /v1) and the model name right?",
}


@dataclass
class Usage:
    """Token counts, as reported by the server (zero when it reports none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> None:
        """Accumulate ``other`` into this counter."""
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens

    def to_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass
class ChatReply:
    """One completion: its text, token usage, finish reason and the server's raw JSON."""

    text: str
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


class ChatClient:
    """A thread-safe client for ``POST {base_url}/chat/completions``.

    Args:
        model: The model name the server expects.
        base_url: The API root (``.../v1``). Default: ``$OPENAI_BASE_URL``; when neither is
            given, :data:`OPENAI_URL` if an API key is, else :class:`ValueError` (a run never
            goes to a hosted API unasked).
        api_key: Sent as a bearer token. Default: ``$OPENAI_API_KEY`` (may be empty for local
            servers).
        timeout: Seconds to wait for an answer (read and write); a server that does not answer
            in time fails the request at once, without retries.
        connect_timeout: Seconds to wait for a connection (retried).
        max_retries: Further attempts after a retryable failure.
        backoff: Base delay in seconds; attempt ``k`` waits ``backoff * 2**k`` (with jitter, capped
            at 30 s).
        default_params: Sampling parameters sent with every request (``temperature``,
            ``top_p``, ``max_tokens``, ``stop``, ``seed``, ...); per-call keywords override them.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        connect_timeout: float = 5.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        default_params: Mapping[str, Any] | None = None,
    ) -> None:
        self.model = model
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        root = base_url or os.environ.get("OPENAI_BASE_URL") or (OPENAI_URL if key else None)
        if root is None:
            raise ValueError(
                f"no chat server for model {model!r}: give its API root (--base-url or "
                "$OPENAI_BASE_URL, e.g. http://localhost:8000/v1), or an API key "
                "(--api-key or $OPENAI_API_KEY) to use api.openai.com"
            )
        self.base_url = root.rstrip("/")
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.default_params = dict(default_params or {})
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(connect_timeout, timeout)),
        )
        self._lock = threading.Lock()
        self.usage = Usage()
        """Tokens used by every request of this client so far."""
        self.consecutive_failures = 0
        """Requests in a row that failed for good (0 after any success)."""
        self.last_failure: str | None = None
        """Why the latest request that failed for good failed."""

    def complete(self, messages: Sequence[Message], **params: Any) -> ChatReply:
        """Send ``messages`` and return the first choice."""
        try:
            reply = self._complete(messages, params)
        except ChatError as error:
            with self._lock:
                self.consecutive_failures += 1
                self.last_failure = str(error)
            raise
        with self._lock:
            self.consecutive_failures = 0
            self.usage.add(reply.usage)
        return reply

    def _complete(self, messages: Sequence[Message], params: Mapping[str, Any]) -> ChatReply:
        body = {"model": self.model, "messages": list(messages), **self.default_params, **params}
        last_error = "no attempt made"
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(min(30.0, self.backoff * 2 ** (attempt - 1)) * (0.5 + random.random()))
            try:
                response = self._http.post("/chat/completions", json=body)
            except httpx.ReadTimeout:
                raise ChatError(
                    f"{self.base_url} sent no answer within {self.timeout:g} s "
                    "(a slow model needs a longer --timeout)"
                ) from None
            except httpx.TransportError as error:  # connection refused/reset, connect timeouts
                last_error = _transport_error(error)
                continue
            if response.status_code in _RETRY_STATUS:
                last_error = _http_error(response)
                continue
            if response.status_code >= 400:
                raise ChatError(f"{self.base_url} answered {_http_error(response)}")
            try:
                return _parse_reply(response.json())
            except (ValueError, KeyError, IndexError, TypeError) as error:
                last_error = f"malformed reply ({error}): {summarize_body(response)}"
                continue
        raise ChatError(
            f"chat request to {self.base_url} failed after {self.max_retries + 1} attempts: "
            f"{last_error}"
        )

    def preflight(self) -> list[str]:
        """Check, before a run, that the server is reachable and speaks the OpenAI API; return
        the model ids it lists (``GET /models``; a server without that route is sent a one-token
        chat request instead). Nothing is retried and the wait for an answer is at most 15 s.

        Raises:
            ChatError: In one line: unreachable, no answer, an HTTP error, or not an
                OpenAI-compatible API.
        """
        timeout = httpx.Timeout(min(15.0, self.timeout), connect=self._http.timeout.connect)
        try:
            response = self._http.get("/models", timeout=timeout)
            if response.status_code in (404, 405):
                response = self._http.post(
                    "/chat/completions",
                    json={"model": self.model, "messages": [{"role": "user", "content": "Hi"}],
                          "max_tokens": 1},
                    timeout=timeout,
                )  # fmt: skip
        except httpx.TimeoutException as error:
            if isinstance(error, httpx.ConnectTimeout):
                raise ChatError(f"cannot reach {self.base_url}: connect timeout") from None
            raise ChatError(
                f"{self.base_url} sent no answer within {timeout.read:g} s; is it hung, or "
                "still starting?"
            ) from None
        except httpx.TransportError as error:
            raise ChatError(
                f"cannot reach {self.base_url} ({_transport_error(error)}); is the server running?"
            ) from None
        request = f"{response.request.method} {response.request.url.path}"
        if response.status_code >= 400:
            raise ChatError(f"{self.base_url}: {request} answered {_http_error(response)}")
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if not isinstance(payload, dict) or not isinstance(
            payload.get("data", payload.get("choices")), list
        ):
            raise ChatError(
                f"{self.base_url} is not an OpenAI-compatible API: {request} answered "
                f"{summarize_body(response)}"
            )
        return [str(m.get("id")) for m in payload.get("data", []) if isinstance(m, dict)]

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _parse_reply(payload: Any) -> ChatReply:
    if not isinstance(payload, dict):
        raise TypeError(f"expected a JSON object, got {type(payload).__name__}")
    choice = payload["choices"][0]
    message = choice["message"]
    content = message.get("content")
    if not content and message.get("tool_calls"):  # a native function call is the reply
        content = json.dumps(message["tool_calls"][0].get("function", {}))
    if isinstance(content, list):  # content parts
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    if not isinstance(content, str):
        raise TypeError("the reply has no text content")
    usage = payload.get("usage") or {}
    return ChatReply(
        text=content,
        usage=Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)),
        finish_reason=choice.get("finish_reason"),
        raw=payload,
    )


def summarize_body(response: httpx.Response, limit: int = 200) -> str:
    """A server's answer in one short line: the error message of a JSON error, the title of an
    HTML page, else the first ``limit`` characters of the text."""
    text = response.text
    try:
        payload = json.loads(text)
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        error = payload.get("error", payload.get("detail", payload.get("message")))
        if isinstance(error, dict):
            error = error.get("message", error)
        if error is not None:
            text = error if isinstance(error, str) else json.dumps(error)
    elif re.search(r"<(!doctype|html|head|body|title)\b", text[:1000], re.IGNORECASE):
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
        text = f"an HTML page: {title.group(1)}" if title else re.sub(r"<[^>]*>", " ", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _http_error(response: httpx.Response) -> str:
    hint = _HINTS.get(response.status_code)
    summary = f"HTTP {response.status_code}: {summarize_body(response)}"
    return f"{summary} ({hint})" if hint else summary


def _transport_error(error: httpx.TransportError) -> str:
    reason = str(error) or type(error).__name__
    return f"{type(error).__name__}: {reason}"
