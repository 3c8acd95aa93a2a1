"""The per-step cost of MCP: the ``mcp`` SDK's client calling ``act`` over streamable HTTP at
``/mcp/<name>`` of ``llmgym serve``, next to llmgym's own WebSocket transport
(:class:`llmgym.serving.client.RemoteEnv`) on the same server and to a local ``step``, in one run.

    python benchmarks/mcp_step.py                        # Wordle, 3 s per path
    python benchmarks/mcp_step.py --env llmgym/Maze-v0 --seconds 2

One ``llmgym serve`` subprocess on 127.0.0.1 answers both paths (MCP is one of its default
protocols). One session per path steps the same random valid actions and resets when an episode
ends; a reset is not timed. MCP is measured twice: with the SDK's client, and with a plain HTTP
client posting the same JSON-RPC (what the server's side costs). Reported: p50 and p99 step
latency as the client sees it, the cost over a local step (p50 minus the local mean), and what
MCP with the SDK's client adds per step over llmgym's WebSocket (the difference of their p50s,
and their ratio). Writes ``benchmarks/results/mcp_step.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench_utils import machine, write_json
from openenv_step import llmgym_path, local, sample_actions, start_server, summary, timed

from llmgym.envs import get_entry

RESULTS = Path(__file__).resolve().parent / "results" / "mcp_step.json"


async def mcp_path(url: str, actions: list[str], seconds: float) -> list[float]:
    """Per-step seconds of ``act`` calls by the ``mcp`` SDK's client, until ``seconds`` have
    passed (``reset`` when an episode ends, not timed)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(url) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await _timed(
            lambda action: session.call_tool("act", {"action": action}),
            lambda: session.call_tool("reset", {"seed": 0}),
            actions,
            seconds,
        )


def mcp_http_path(url: str, actions: list[str], seconds: float) -> list[float]:
    """:func:`mcp_path` with a plain HTTP client posting MCP's JSON-RPC (``httpx``, keep-alive):
    the server's share of MCP's cost, without the SDK client's."""
    import httpx

    headers = {"Accept": "application/json, text/event-stream"}
    with httpx.Client(headers=headers, timeout=60) as http:
        initialize = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "mcp_step", "version": "0"},
        }
        opened = http.post(url, json=_request("initialize", initialize))
        http.headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})

        def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            answer = http.post(
                url, json=_request("tools/call", {"name": name, "arguments": arguments})
            )
            return answer.json()["result"]["structuredContent"]

        times = timed(
            lambda action: call("act", {"action": action})["done"],
            lambda: call("reset", {"seed": 0}),
            actions,
            seconds,
        )
        http.delete(url)
        return times


def _request(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


async def _timed(
    act: Callable[[str], Awaitable[Any]],
    reset: Callable[[], Awaitable[Any]],
    actions: list[str],
    seconds: float,
) -> list[float]:
    times: list[float] = []
    await reset()
    deadline = time.perf_counter() + seconds
    index = 0
    while time.perf_counter() < deadline:
        action = actions[index % len(actions)]
        index += 1
        start = time.perf_counter()
        result = await act(action)
        times.append(time.perf_counter() - start)
        if result.structuredContent["done"]:
            await reset()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="llmgym/Wordle-v0")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--json", default=str(RESULTS))
    args = parser.parse_args(argv)
    actions = sample_actions(args.env, 2000)
    baseline = summary(local(args.env, actions, args.seconds))
    process, url = start_server("--envs", args.env)
    try:
        name = get_entry(args.env).name.lower()
        mcp_times = asyncio.run(mcp_path(f"{url}/mcp/{name}", actions, args.seconds))
        mcp_http_times = mcp_http_path(f"{url}/mcp/{name}", actions, args.seconds)
        llmgym_times = llmgym_path(url, args.env, actions, args.seconds)
    finally:
        process.terminate()
        process.wait(timeout=20)
    mcp = summary(mcp_times, baseline["mean_ms"])
    mcp_http = summary(mcp_http_times, baseline["mean_ms"])
    llmgym_ws = summary(llmgym_times, baseline["mean_ms"])
    result = {
        "env_id": args.env,
        "seconds_per_path": args.seconds,
        "local": baseline,
        "mcp": mcp,
        "mcp_plain_http": mcp_http,
        "llmgym_ws": llmgym_ws,
        "mcp_added_over_llmgym_p50_ms": round(mcp["p50_ms"] - llmgym_ws["p50_ms"], 4),
        "mcp_over_llmgym_p50": round(mcp["p50_ms"] / llmgym_ws["p50_ms"], 3),
        "machine": machine(),
    }
    for path in ("local", "mcp", "mcp_plain_http", "llmgym_ws"):
        print(f"{path:14s} {result[path]}")
    print(
        f"MCP adds {result['mcp_added_over_llmgym_p50_ms']} ms per step (p50) over llmgym's "
        f"WebSocket: {result['mcp_over_llmgym_p50']}x"
    )
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
