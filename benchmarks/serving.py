"""Serving overhead: steps/s and latency through ``llmgym serve``, next to in-process stepping.

    python benchmarks/serving.py                         # Wordle, 1/16/64 sessions, 5 s each
    python benchmarks/serving.py --env llmgym/Maze-v0 --sessions 1 8 --seconds 3
    python benchmarks/serving.py --env llmgym/HeistPixels-v0 --sessions 1 16 \
        --json benchmarks/results/serving_pixels.json    # 64x64 RGB frames, Discrete actions

A server is started as a subprocess on 127.0.0.1 (a free port) and driven by
:class:`llmgym.serving.client.RemoteEnv` clients — the real client, one thread per session,
spread over ``--client-processes`` processes — over each transport: ``websocket`` (the default:
one stream per session) and ``http`` (a request per step). Each session steps with random valid
actions and resets when an episode ends. Reported per transport and concurrency level: aggregate
steps/s, p50/p99 step latency as the client sees it, and the CPU time the server and the
clients spent per step (which depends much less than wall-clock figures on how busy the machine
is). The in-process baseline steps the same environment and actions in this process. Writes
``benchmarks/results/serving.json``.

Targets (Wordle, 2 cores; checked only for Wordle): >= 3,000 steps/s at 64 sessions; <= 1 ms
added per step at 1 session (p50 remote latency minus the in-process step time).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from bench_utils import write_json

from llmgym.cli import format_table
from llmgym.serving.client import RemoteEnv

RESULTS = Path(__file__).resolve().parent / "results" / "serving.json"
TARGETS = {"steps_per_s_at_64": 3_000.0, "added_ms_at_1": 1.0}
TARGET_ENV = "llmgym/Wordle-v0"


def _actions(env_id: str, count: int, seed: int) -> list[str]:
    env = gym.make(env_id)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    return [env.unwrapped.sample_action(rng) for _ in range(count)]


def in_process(env_id: str, actions: list[str], seconds: float) -> dict[str, float]:
    """Steps per second and mean step time of the local environment (made like the server)."""
    env = gym.make(env_id)
    env.reset(seed=0)
    steps, spent, index = 0, 0.0, 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(actions[index % len(actions)])
        if terminated or truncated:
            env.reset()
        spent += time.perf_counter() - start
        steps += 1
        index += 1
    return {"steps_per_s": steps / spent, "step_ms": 1000 * spent / steps}


def _client_process(
    url: str,
    env_id: str,
    transport: str,
    sessions: int,
    seconds: float,
    seed: int,
    queue: mp.Queue,
) -> None:
    try:
        queue.put(_drive(url, env_id, transport, sessions, seconds, seed))
    except BaseException as error:
        queue.put(error)


def _drive(
    url: str, env_id: str, transport: str, sessions: int, seconds: float, seed: int
) -> tuple[list[float], float]:
    """Step ``sessions`` sessions in threads for ``seconds``; latencies and this process's CPU."""
    actions = _actions(env_id, 512, seed)
    envs = [RemoteEnv(url, env_id, transport=transport) for _ in range(sessions)]
    for i, env in enumerate(envs):
        env.reset(seed=seed + i)
    latencies: list[list[float]] = [[] for _ in envs]
    barrier = threading.Barrier(sessions + 1)
    deadline = 0.0

    def run(i: int) -> None:
        env, record = envs[i], latencies[i]
        index = i * 7
        barrier.wait()
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(actions[index % len(actions)])
            record.append(time.perf_counter() - start)
            index += 1
            if terminated or truncated:
                env.reset()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(sessions)]
    for thread in threads:
        thread.start()
    cpu_before = time.process_time()
    deadline = time.perf_counter() + seconds
    barrier.wait()
    for thread in threads:
        thread.join()
    cpu = time.process_time() - cpu_before
    for env in envs:
        env.close()
    return np.concatenate([np.asarray(r) for r in latencies]).tolist(), cpu


def _server_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def remote(
    url: str,
    server_pid: int,
    env_id: str,
    transport: str,
    sessions: int,
    processes: int,
    seconds: float,
) -> dict[str, Any]:
    """Aggregate steps/s, latency percentiles and CPU per step with ``sessions`` clients."""
    processes = max(1, min(processes, sessions))
    shares = [sessions // processes + (i < sessions % processes) for i in range(processes)]
    context = mp.get_context("spawn")
    queue = context.Queue()
    workers = [
        context.Process(
            target=_client_process,
            args=(url, env_id, transport, share, seconds, 1000 * i, queue),
        )
        for i, share in enumerate(shares)
    ]
    for worker in workers:
        worker.start()
    server_before = _server_cpu_s(server_pid)
    results = [queue.get(timeout=seconds + 60) for _ in workers]
    failures = [r for r in results if isinstance(r, BaseException)]
    if failures:
        raise RuntimeError(f"a client process failed: {failures[0]!r}") from failures[0]
    server_cpu = _server_cpu_s(server_pid) - server_before
    for worker in workers:
        worker.join(timeout=30)
    latencies = np.concatenate([np.asarray(r[0]) for r in results])
    steps = len(latencies)
    return {
        "transport": transport,
        "sessions": sessions,
        "steps": steps,
        "steps_per_s": steps / seconds,
        "p50_ms": float(np.percentile(latencies, 50) * 1000),
        "p99_ms": float(np.percentile(latencies, 99) * 1000),
        "server_cpu_us_per_step": 1e6 * server_cpu / steps,
        "client_cpu_us_per_step": 1e6 * sum(r[1] for r in results) / steps,
    }


def start_server(env_id: str) -> tuple[subprocess.Popen, str]:
    """``llmgym serve`` on a free loopback port; returns the process and its URL."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llmgym.cli",
            "serve",
            "--port",
            "0",
            "--envs",
            env_id,
            "--max-sessions",
            "512",
            "--max-sessions-per-client",
            "512",
            "--log-level",
            "warning",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline() if process.stdout else ""
    if "listening on " not in line:
        process.kill()
        raise RuntimeError(f"the server did not start: {line!r}")
    return process, line.rsplit("listening on ", 1)[1].strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="llmgym/Wordle-v0")
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--seconds", type=float, default=5.0, help="per concurrency level")
    parser.add_argument("--client-processes", type=int, default=2)
    parser.add_argument(
        "--transports", nargs="+", choices=("websocket", "http"), default=["websocket", "http"]
    )
    parser.add_argument("--json", default=str(RESULTS))
    args = parser.parse_args(argv)

    load_before = os.getloadavg()
    actions = _actions(args.env, 512, 0)
    local = in_process(args.env, actions, args.seconds)
    server, url = start_server(args.env)
    try:
        rows = [
            remote(url, server.pid, args.env, transport, n, args.client_processes, args.seconds)
            for transport in args.transports
            for n in args.sessions
        ]
    finally:
        server.terminate()
        server.wait(timeout=30)
    for row in rows:
        row["added_ms_p50"] = row["p50_ms"] - local["step_ms"]
    print(f"{args.env}: in-process {local['steps_per_s']:,.0f} steps/s ({local['step_ms']:.3f} ms)")
    print(format_table(rows, list(rows[0])))
    checks: dict[str, float] = {}
    for row in rows if args.env == TARGET_ENV else ():
        if row["sessions"] == 64:
            checks[f"steps_per_s_at_64 ({row['transport']})"] = row["steps_per_s"]
        if row["sessions"] == 1:
            checks[f"added_ms_at_1 ({row['transport']})"] = row["added_ms_p50"]
    for name, value in checks.items():
        target = TARGETS[name.split(" ")[0]]
        met = value >= target if name.startswith("steps") else value <= target
        print(f"target {name}: {value:,.2f} (target {target:,.2f}) {'met' if met else 'NOT met'}")
    load_after = os.getloadavg()
    print(
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
        f"on {os.cpu_count()} cores"
    )
    payload = {
        "env_id": args.env,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "seconds_per_level": args.seconds,
        "client_processes": args.client_processes,
        "machine_note": "wall-clock figures depend on how busy the machine was (load average); "
        "CPU per step does much less",
        "in_process": local,
        "remote": rows,
        "targets": TARGETS if args.env == TARGET_ENV else {},
        "measured": checks,
    }
    write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
