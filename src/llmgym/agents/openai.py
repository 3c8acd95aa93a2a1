"""An agent backed by any OpenAI-compatible chat-completions endpoint."""

from __future__ import annotations

import logging
from typing import Any

from llmgym.agents.base import Agent, Playable
from llmgym.llm import ChatClient, ChatError

__all__ = ["OpenAIChatAgent"]

logger = logging.getLogger(__name__)


class OpenAIChatAgent(Agent):
    """Sends the conversation to a chat-completions endpoint: vLLM, Ollama, llama.cpp's server,
    or a hosted API.

    The messages are ``info["messages"]`` when a :class:`~llmgym.wrappers.ChatHistory` provides
    them, otherwise the observation as one user message. A request that still fails after the
    client's retries yields an empty reply (the ReAct wrapper reports a format error) and is
    counted in :attr:`errors`, so one bad response never stops an evaluation.

    Args:
        model: Model name on the server.
        base_url: API root, e.g. ``http://localhost:8000/v1`` (default: ``$OPENAI_BASE_URL``).
        api_key: Bearer token (default: ``$OPENAI_API_KEY``; may be empty for local servers).
        temperature, top_p, max_tokens, stop, seed: Sampling parameters (``None``: server default).
        timeout: Seconds per request. max_retries: Retries on connection errors, 429 and 5xx.
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
        timeout: float = 60.0,
        max_retries: int = 3,
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
        self.last_error: str | None = None

    def reset(self, env: Playable | None, *, seed: int | None = None) -> None:
        super().reset(env, seed=seed)
        schemas = getattr(env.unwrapped, "tool_schemas", None) if env is not None else None
        self._tools = schemas() if self.native_tools and callable(schemas) else None

    def act(self, observation: str, info: dict[str, Any]) -> str:
        messages = info.get("messages") or [{"role": "user", "content": observation}]
        params = {**self.params, "tools": self._tools} if self._tools else self.params
        try:
            reply = self.client.complete(messages, **params)
        except ChatError as error:
            self.errors += 1
            self.last_error = str(error)
            logger.warning("chat request failed: %s", error)
            return ""
        self.usage.add(reply.usage)
        return reply.text
