"""One client for OpenAI-compatible chat-completions endpoints (vLLM, Ollama, llama.cpp's server,
hosted APIs), shared by the LLM agents and by LLM-driven environment configuration.

    client = ChatClient(model="qwen2.5-7b-instruct", base_url="http://localhost:8000/v1")
    reply = client.complete([{"role": "user", "content": "Say hi."}], temperature=0.0)
    reply.text, reply.usage.total_tokens

Retries with exponential backoff (and jitter) on connection errors, timeouts, HTTP 429 and 5xx;
other 4xx answers and malformed replies raise :class:`ChatError` at once or after the retries.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

__all__ = ["ChatClient", "ChatError", "ChatReply", "Usage"]

Message = Mapping[str, Any]

_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class ChatError(RuntimeError):
    """A chat request failed for good (after retries where retrying made sense)."""


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
        base_url: The API root (``.../v1``). Default: ``$OPENAI_BASE_URL`` or OpenAI's.
        api_key: Sent as a bearer token. Default: ``$OPENAI_API_KEY`` (may be empty for local
            servers).
        timeout: Seconds per request (connect, read and write).
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
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        default_params: Mapping[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.base_url = (
            base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        ).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.max_retries = max_retries
        self.backoff = backoff
        self.default_params = dict(default_params or {})
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)
        self._lock = threading.Lock()
        self.usage = Usage()
        """Tokens used by every request of this client so far."""

    def complete(self, messages: Sequence[Message], **params: Any) -> ChatReply:
        """Send ``messages`` and return the first choice."""
        body = {"model": self.model, "messages": list(messages), **self.default_params, **params}
        last_error = "no attempt made"
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(min(30.0, self.backoff * 2 ** (attempt - 1)) * (0.5 + random.random()))
            try:
                response = self._http.post("/chat/completions", json=body)
            except httpx.TransportError as error:  # connection refused/reset, timeouts
                last_error = f"{type(error).__name__}: {error}"
                continue
            if response.status_code in _RETRY_STATUS:
                last_error = f"HTTP {response.status_code}: {response.text[:300]}"
                continue
            if response.status_code >= 400:
                raise ChatError(
                    f"{self.base_url} answered HTTP {response.status_code}: {response.text[:500]}"
                )
            try:
                reply = _parse_reply(response.json())
            except (ValueError, KeyError, IndexError, TypeError) as error:
                last_error = f"malformed reply ({error}): {response.text[:300]}"
                continue
            with self._lock:
                self.usage.add(reply.usage)
            return reply
        raise ChatError(
            f"chat request to {self.base_url} failed after {self.max_retries + 1} attempts: "
            f"{last_error}"
        )

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
