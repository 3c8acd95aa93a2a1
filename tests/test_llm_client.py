"""The chat-completions client and the OpenAI agent against a real local HTTP server."""

from __future__ import annotations

import time

import pytest

from llmgym.agents import OpenAIChatAgent, make_agent
from llmgym.errors import ChatError
from llmgym.llm import ChatClient
from tests.chat_server import ChatServer


def echo(messages):
    return "you said: " + messages[-1]["content"]


def test_complete_sends_model_messages_params_and_key() -> None:
    with ChatServer(echo) as server:
        client = ChatClient(
            "tiny", base_url=server.base_url, api_key="sk-test", default_params={"temperature": 0.2}
        )
        reply = client.complete([{"role": "user", "content": "hello"}], max_tokens=7)
        assert reply.text == "you said: hello" and reply.finish_reason == "stop"
        assert (
            reply.usage.completion_tokens > 0
            and client.usage.total_tokens == reply.usage.total_tokens
        )
        body = server.requests[0]["body"]
        assert body["model"] == "tiny" and body["temperature"] == 0.2 and body["max_tokens"] == 7
        assert server.requests[0]["auth"] == "Bearer sk-test"


@pytest.mark.parametrize("faults", [["500"], ["429", "500"], ["garbage"], ["no-choices"]])
def test_retryable_failures_are_retried(faults) -> None:
    with ChatServer(echo, faults=faults) as server:
        client = ChatClient("m", base_url=server.base_url, max_retries=3, backoff=0.01)
        assert client.complete([{"role": "user", "content": "x"}]).text == "you said: x"
        assert len(server.requests) == len(faults) + 1


def test_client_errors_are_not_retried() -> None:
    with ChatServer(echo, faults=["400"]) as server:
        client = ChatClient("m", base_url=server.base_url, max_retries=3, backoff=0.01)
        with pytest.raises(ChatError, match="HTTP 400"):
            client.complete([{"role": "user", "content": "x"}])
        assert len(server.requests) == 1


def test_a_read_timeout_fails_at_once() -> None:
    """A server that does not answer within ``timeout`` is not asked again: retrying a hung
    server multiplied the wait (minutes per episode)."""
    with ChatServer(echo, faults=[("slow", 1.0), ("slow", 1.0)]) as server:
        client = ChatClient("m", base_url=server.base_url, timeout=0.2, max_retries=3, backoff=0.01)
        start = time.perf_counter()
        with pytest.raises(ChatError, match=r"no answer within 0.2 s .*--timeout"):
            client.complete([{"role": "user", "content": "x"}])
        assert time.perf_counter() - start < 1 and len(server.requests) == 1


def test_connection_refused_is_a_clear_error() -> None:
    client = ChatClient(
        "m", base_url="http://127.0.0.1:9/v1", max_retries=1, backoff=0.01, timeout=1
    )
    with pytest.raises(ChatError, match="failed after 2 attempts"):
        client.complete([{"role": "user", "content": "x"}])


def test_agent_uses_chat_history_and_counts_tokens() -> None:
    with ChatServer(lambda m: f"Thought: {len(m)} messages\nAction: move up") as server:
        agent = make_agent("openai:tiny", base_url=server.base_url, temperature=0.0, max_tokens=32)
        assert isinstance(agent, OpenAIChatAgent) and agent.name == "openai:tiny"
        agent.reset(None)
        messages = [{"role": "system", "content": "rules"}, {"role": "user", "content": "obs"}]
        assert (
            agent.act("ignored", {"messages": messages}) == "Thought: 2 messages\nAction: move up"
        )
        assert agent.act("plain observation", {}) == "Thought: 1 messages\nAction: move up"
        assert agent.usage.total_tokens > 0
        assert server.requests[0]["body"]["max_tokens"] == 32


def test_agent_survives_a_failed_request() -> None:
    with ChatServer(echo, faults=["500", "500"]) as server:
        agent = OpenAIChatAgent("m", base_url=server.base_url, max_retries=1)
        agent.client.backoff = 0.01
        agent.reset(None)
        assert agent.act("x", {}) == "" and agent.errors == 1 and "HTTP 500" in agent.last_error
