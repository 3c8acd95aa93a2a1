"""The per-step cost of the OpenEnv path: OpenEnv's own client (``GenericEnvClient``) over
``/ws`` of ``llmgym serve --protocol openenv``, next to a local ``step`` and to llmgym's own
WebSocket transport (:class:`llmgym.serving.client.RemoteEnv`) in the same run.

    python benchmarks/openenv_step.py                    # Wordle, 3 s per path
    python benchmarks/openenv_step.py --env llmgym/Maze-v0 --seconds 2

One server subprocess on 127.0.0.1 serves both protocols (``--protocol openenv`` serves the
environment alone at the root; llmgym's protocol is the same server with every environment also
at ``/openenv/<name>``, so the llmgym path is measured against a second, plain server). One
session per path steps the same random valid actions and resets when an episode ends. Reported:
p50 step latency as the client sees it, the added cost over a local step (p50 minus the local
mean), and the OpenEnv path's ratio to llmgym's WebSocket. Target: < 1 ms added per step.
Writes ``benchmarks/results/openenv_step.json``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from bench_utils import machine, write_json

import llmgym  # noqa: F401  (registers the environments)
from llmgym.serving.client import RemoteEnv

RESULTS = Path(__file__).resolve().parent / "results" / "openenv_step.json"
TARGET_ADDED_MS = 1.0


def sample_actions(env_id: str, count: int, seed: int = 0) -> list[str]:
    env = gym.make(env_id)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    return [env.unwrapped.sample_action(rng) for _ in range(count)]


def timed(step: Any, reset: Any, actions: list[str], seconds: float) -> list[float]:
    """Per-step seconds of ``step(action) -> done`` until ``seconds`` have passed."""
    times: list[float] = []
    reset()
    deadline = time.perf_counter() + seconds
    index = 0
    while time.perf_counter() < deadline:
        action = actions[index % len(actions)]
        index += 1
        start = time.perf_counter()
        done = step(action)
        times.append(time.perf_counter() - start)
        if done:
            reset()
    return times


def local(env_id: str, actions: list[str], seconds: float) -> list[float]:
    env = gym.make(env_id)

    def step(action: str) -> bool:
        _, _, terminated, truncated, _ = env.step(action)
        return terminated or truncated

    return timed(step, lambda: env.reset(seed=0), actions, seconds)


def openenv_path(url: str, actions: list[str], seconds: float) -> list[float]:
    from openenv import GenericEnvClient

    with GenericEnvClient(base_url=url).sync() as client:

        def step(action: str) -> bool:
            return client.step({"action": action}).done

        return timed(step, lambda: client.reset(seed=0), actions, seconds)


def llmgym_path(url: str, env_id: str, actions: list[str], seconds: float) -> list[float]:
    env = RemoteEnv(url, env_id, transport="websocket")
    try:

        def step(action: str) -> bool:
            _, _, terminated, truncated, _ = env.step(action)
            return terminated or truncated

        return timed(step, lambda: env.reset(seed=0), actions, seconds)
    finally:
        env.close()


def start_server(*args: str) -> tuple[subprocess.Popen, str]:
    command = [sys.executable, "-m", "llmgym.cli", "serve", "--port", "0"]
    process = subprocess.Popen(
        [*command, "--log-level", "warning", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "listening on " not in line:
        process.kill()
        raise RuntimeError(f"llmgym serve did not start: {line!r}")
    return process, line.rsplit("listening on ", 1)[1].strip()


def summary(times: list[float], local_mean_ms: float | None = None) -> dict[str, float]:
    """Steps, mean, p50 and p99 in ms, and the p50's excess over ``local_mean_ms``."""
    ms = np.array(times) * 1e3
    result = {
        "steps": len(times),
        "mean_ms": round(float(ms.mean()), 4),
        "p50_ms": round(float(np.percentile(ms, 50)), 4),
        "p99_ms": round(float(np.percentile(ms, 99)), 4),
    }
    if local_mean_ms is not None:
        result["added_p50_ms"] = round(result["p50_ms"] - local_mean_ms, 4)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="llmgym/Wordle-v0")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--json", default=str(RESULTS))
    args = parser.parse_args(argv)
    actions = sample_actions(args.env, 2000)
    baseline = summary(local(args.env, actions, args.seconds))
    servers = [start_server("--protocol", "openenv", "--env", args.env)]
    servers.append(start_server("--envs", args.env))
    try:
        openenv_times = openenv_path(servers[0][1], actions, args.seconds)
        llmgym_times = llmgym_path(servers[1][1], args.env, actions, args.seconds)
    finally:
        for process, _ in servers:
            process.terminate()
            process.wait(timeout=20)
    openenv = summary(openenv_times, baseline["mean_ms"])
    llmgym_ws = summary(llmgym_times, baseline["mean_ms"])
    result = {
        "env_id": args.env,
        "seconds_per_path": args.seconds,
        "local": baseline,
        "openenv_ws": openenv,
        "llmgym_ws": llmgym_ws,
        "openenv_over_llmgym_p50": round(openenv["p50_ms"] / llmgym_ws["p50_ms"], 3),
        "target_added_ms": TARGET_ADDED_MS,
        "meets_target": openenv["added_p50_ms"] < TARGET_ADDED_MS,
        "machine": machine(),
    }
    for name in ("local", "openenv_ws", "llmgym_ws"):
        print(f"{name:11s} {result[name]}")
    print(f"openenv/llmgym p50 ratio {result['openenv_over_llmgym_p50']}")
    write_json(args.json, result)
    return 0 if result["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
