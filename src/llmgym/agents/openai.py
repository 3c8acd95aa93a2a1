"""An agent backed by any OpenAI-compatible chat-completions endpoint."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from llmgym.agents.base import Agent, Playable
from llmgym.errors import ChatError, ServerUnavailableError
from llmgym.llm import ChatClient

__all__ = ["OpenAIChatAgent"]

logger = logging.getLogger(__name__)


class OpenAIChatAgent(Agent):
    """Sends the conversation to a chat-completions endpoint: vLLM, Ollama, llama.cpp's server,
    or a hosted API.

    The messages are ``info["messages"]`` when a :class:`~llmgym.wrappers.ChatHistory` provides
    them, otherwise the observation as one user message. A request that still fails after the
    client's retries yields an empty reply, is counted in :attr:`errors` and explained in
    :attr:`last_error` (a rollout then ends the episode as a server error, not a format error),
    so one bad response never stops an evaluation; ``max_consecutive_failures`` failures in a
    row (over every fork sharing the client) do, with
    :class:`~llmgym.errors.ServerUnavailableError`.

    Args:
        model: Model name on the server.
        base_url: API root, e.g. ``http://localhost:8000/v1`` (default: ``$OPENAI_BASE_URL``).
        api_key: Bearer token (default: ``$OPENAI_API_KEY``; may be empty for local servers).
        temperature, top_p, max_tokens, stop, seed: Sampling parameters (``None``: server default).
        timeout: Seconds to wait for an answer. max_retries: Retries on connection errors,
            429 and 5xx.
        max_consecutive_failures: Requests in a row that may fail for good before :meth:`act`
            raises :class:`~llmgym.errors.ServerUnavailableError` (``None``: never).
        client: An existing :class:`~llmgym.llm.ChatClient` to share (the other connection
            arguments are then ignored).
        react: Whether the agent is prompted for ``Thought:``/``Action:`` replies.
        native_tools: In tool-use environments (those with ``tool_schemas()``), send the tools
            in the request (OpenAI's ``tools`` field) so the server's native function calling
            is used; a reply that calls a tool becomes the action ``{"name": ..., "arguments":
            ...}``, which those environments read. Needs ``react=False`` (the call is the whole
            reply). Other environments are unaffected.
    """

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = 0.0,
        top_p: float | None = None,
        max_tokens: int | None = 512,
        stop: list[str] | None = None,
        seed: int | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        max_consecutive_failures: int | None = 5,
        client: ChatClient | None = None,
        react: bool = True,
        native_tools: bool = False,
    ) -> None:
        if native_tools and react:
            raise ValueError(
                "native_tools=True needs react=False: the function call is the whole reply"
            )
        super().__init__(react=react)
        self.native_tools = native_tools
        self._tools: list[dict[str, Any]] | None = None
        params = {
            "temperature": temperature,
            "top_p": top_p,
            "max_tokens": max_tokens,
            "stop": stop,
            "seed": seed,
        }
        self.params = {k: v for k, v in params.items() if v is not None}
        self.client = client or ChatClient(
            model, base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
        )
        self.name = f"openai:{model}"
        self.max_consecutive_failures = max_consecutive_failures

    def reset(self, env: Playable | None, *, seed: int | None = None) -> None:
        super().reset(env, seed=seed)
        schemas = getattr(env.unwrapped, "tool_schemas", None) if env is not None else None
        self._tools = schemas() if self.native_tools and callable(schemas) else None

    def preflight(self) -> None:
        """Check the server (:meth:`~llmgym.llm.ChatClient.preflight`); warn when it lists
        models but not this one."""
        served = self.client.preflight()
        if served and self.client.model not in served:
            logger.warning(
                "%s does not list model %r (it lists: %s); requests may fail",
                self.client.base_url,
                self.client.model,
                ", ".join(served[:10]),
            )

    def settings(self) -> dict[str, Any]:
        return {
            **super().settings(),
            "model": self.client.model,
            "base_url_host": urlsplit(self.client.base_url).netloc.rpartition("@")[2],
            "sampling": dict(self.params),
            "native_tools": self.native_tools,
            "timeout_s": self.client.timeout,
        }

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self._check_server()
        messages = info.get("messages") or [{"role": "user", "content": observation}]
        params = {**self.params, "tools": self._tools} if self._tools else self.params
        try:
            reply = self.client.complete(messages, **params)
        except ChatError as error:
            self.errors += 1
            self.last_error = str(error)
            self._check_server()
            logger.warning("chat request failed: %s", error)
            return ""
        self.usage.add(reply.usage)
        return reply.text

    def _check_server(self) -> None:
        limit = self.max_consecutive_failures
        if limit and self.client.consecutive_failures >= limit:
            raise ServerUnavailableError(
                f"stopped: {self.client.consecutive_failures} model requests in a row failed; "
                f"the last: {self.client.last_failure}"
            )
