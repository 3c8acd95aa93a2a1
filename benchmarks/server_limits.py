"""What hostile clients can take from ``llmgym serve``: connections and memory (issue 26).

    python benchmarks/server_limits.py                       # everything (about 15 minutes)
    python benchmarks/server_limits.py --webarena-seeds 8 --json /tmp/limits.json

Each part starts its own ``llmgym serve`` subprocess on 127.0.0.1 and reads the server's memory
from ``/proc`` (resident set size; with its child processes, proportional set size):

* **connections**: the server's open-file limit is set to 1,024 (soft and hard, so that it
  cannot raise it) as in the issue, where ~1,100 raw connections made an authorised step fail.
  While ``N`` connections from the authorised client's own address are held (half idle, half
  having sent half a request line), the client steps a Maze session over its WebSocket stream
  and over HTTP; recorded: steps that failed, step latency, how many of the ``N`` the server
  still held then and after its header deadline;
* **household**: one session resets with 150 distinct ``task_types`` weight sets (each builds
  a layout pool; issue: +2.26 MB per set, kept); the server's memory before and after;
* **webarena**: 65 distinct ``data_seed`` values, on a default server (refused: the server
  serves data seed 0 only) and on one whose operator allows them (``--config-max``); the
  server's memory before and after (issue: 306 -> 820 MB, no plateau);
* **burst**: 32 SQL sessions at once each run heavy queries, then close (issue: the server
  stayed at ~1 GB); the server's memory idle, at the peak and 3 s after the last close;
* **session costs**: the memory one session of each isolated environment adds (its child
  process and engine), which its table row declares as ``memory_mb``.

Writes ``benchmarks/results/server_limits.json``; ``docs/generate.py`` renders it into
docs/serving.md's security section.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from bench_utils import write_json

from llmgym.envs import get_entry
from llmgym.envs.household.generation import TASK_TYPES
from llmgym.errors import ConfigError
from llmgym.serving.client import RemoteEnv
from llmgym.serving.server.connections import OPEN_FILES_RESERVE

RESULTS = Path(__file__).resolve().parent / "results" / "server_limits.json"
TOKEN = "bench-token-0123456789"
SERVER_OPEN_FILES = 1024
HEADER_TIMEOUT_S = 10.0
MAZE_MOVES = ("north", "south", "east", "west")
HEAVY_QUERY = (
    f"WITH RECURSIVE c(x, s) AS (SELECT 1, '{'a' * 200}' UNION ALL SELECT x + 1, s FROM c "
    "LIMIT 100000000) SELECT x, s FROM c ORDER BY s || x DESC"
)
"""A query that sorts rows in memory until the time limit (1 s) stops it: tens of MB."""


@contextlib.contextmanager
def server(*args: str, open_files: int | None = None) -> Iterator[tuple[str, psutil.Process]]:
    """``llmgym serve ARGS`` on a free loopback port: its URL and its process."""
    command = [sys.executable, "-m", "llmgym.cli", "serve", "--port", "0", "--token", TOKEN]
    command += ["--log-level", "warning", *args]

    def limit_open_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=None if open_files is None else limit_open_files,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        if "listening on " not in line:
            raise RuntimeError(f"the server did not start: {line!r}")
        yield line.rsplit("listening on ", 1)[1].strip(), psutil.Process(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=60)


def rss_mb(process: psutil.Process) -> float:
    return process.memory_info().rss / 2**20


def tree_pss_mb(process: psutil.Process) -> float:
    """The proportional set size of ``process`` and its descendants (shared pages counted
    once across them)."""
    total = 0.0
    for member in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += member.memory_full_info().pss
    return total / 2**20


def settle(process: psutil.Process, seconds: float = 3.0) -> float:
    """The server's resident memory once it has had ``seconds`` to give memory back."""
    time.sleep(seconds)
    return rss_mb(process)


def _latency(latencies: list[float]) -> dict[str, float]:
    values = np.asarray(latencies) * 1000
    return {
        "p50_ms": float(np.percentile(values, 50)),
        "p99_ms": float(np.percentile(values, 99)),
        "max_ms": float(values.max()),
    }


# ----------------------------------------------------------------------------- connections
def _still_open(sock: socket.socket) -> bool:
    sock.settimeout(0.01)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return True
    except OSError:
        return False
    return False


def connections(held: int, steps: int) -> dict[str, Any]:
    """An authorised client's steps while ``held`` idle or half-open connections from its own
    address are open."""
    args = ("--envs", "maze", "--header-timeout", str(HEADER_TIMEOUT_S))
    with server(*args, open_files=SERVER_OPEN_FILES) as (url, _process):
        port = int(url.rsplit(":", 1)[1])
        streamed = RemoteEnv(url, "maze", token=TOKEN, retries=0)
        plain = RemoteEnv(url, "maze", token=TOKEN, transport="http", retries=0)
        for env in (streamed, plain):
            env.reset(seed=0)
        sockets = []
        opened = time.monotonic()
        for index in range(held):
            sock = socket.create_connection(("127.0.0.1", port))
            if index % 2:
                sock.sendall(b"GET /heal")
            sockets.append(sock)
        open_s = time.monotonic() - opened
        latencies: list[float] = []
        failures: list[str] = []
        for index in range(steps):
            for env in (streamed, plain):
                start = time.monotonic()
                try:
                    *_, terminated, truncated, _ = env.step(MAZE_MOVES[index % 4])
                    if terminated or truncated:
                        env.reset(seed=index)
                except Exception as error:  # a failed step is the figure being measured
                    failures.append(type(error).__name__)
                    continue
                latencies.append(time.monotonic() - start)
        during = sum(_still_open(sock) for sock in sockets)
        time.sleep(max(0.0, HEADER_TIMEOUT_S + 2 - (time.monotonic() - opened)))
        after = sum(_still_open(sock) for sock in sockets)
        for sock in sockets:
            sock.close()
        for env in (streamed, plain):
            with contextlib.suppress(Exception):
                env.close()
    return {
        "held": held,
        "open_s": round(open_s, 3),
        "steps": steps * 2,
        "failed_steps": len(failures),
        "failures": sorted(set(failures)),
        "step_latency": _latency(latencies) if latencies else None,
        "held_by_server_while_stepping": during,
        "held_by_server_after_header_deadline": after,
    }


# ----------------------------------------------------------------------------- memory
def household(weight_sets: int) -> dict[str, Any]:
    with server("--envs", "household") as (url, process):
        with RemoteEnv(url, "household", token=TOKEN, timeout=120) as env:
            env.reset(seed=0)
            env.reset(seed=0, options={"config": {"task_types": {"heat": 2}}})
            before = settle(process)
            start = time.monotonic()
            for index in range(weight_sets):
                weights = {t: 1 + (index * 7 + k) % 13 for k, t in enumerate(TASK_TYPES)}
                env.reset(seed=index, options={"config": {"task_types": weights}})
            seconds = time.monotonic() - start
        after = settle(process)
    return {
        "weight_sets": weight_sets,
        "rss_before_mb": round(before, 1),
        "rss_after_mb": round(after, 1),
        "growth_mb": round(after - before, 1),
        "seconds_per_set": round(seconds / weight_sets, 3),
    }


def webarena(seeds: int) -> dict[str, Any]:
    """``seeds`` data seeds on a default server (refused) and on one that allows them."""
    refused = 0
    with (
        server("--envs", "webarena") as (url, _process),
        RemoteEnv(url, "webarena", token=TOKEN, timeout=300) as env,
    ):
        env.reset(seed=0)
        for seed in range(1, seeds + 1):
            try:
                env.reset(seed=0, options={"config": {"data_seed": seed}})
            except ConfigError:
                refused += 1
    allowed = ("--envs", "webarena", "--config-max", "llmgym/WebArena-v0.data_seed=1000000")
    with server(*allowed) as (url, process):
        with RemoteEnv(url, "webarena", token=TOKEN, timeout=300) as env:
            env.reset(seed=0)
            before = settle(process)
            trace = []
            start = time.monotonic()
            for seed in range(1, seeds + 1):
                env.reset(seed=0, options={"config": {"data_seed": seed}})
                if seed % 8 == 0 or seed == seeds:
                    trace.append({"seeds": seed, "rss_mb": round(rss_mb(process), 1)})
                    print(f"webarena: {seed} seeds, {trace[-1]['rss_mb']} MB", flush=True)
            seconds = time.monotonic() - start
        after = settle(process)
    return {
        "seeds": seeds,
        "refused_by_default": refused,
        "allowed": {
            "rss_before_mb": round(before, 1),
            "rss_after_mb": round(after, 1),
            "growth_mb": round(after - before, 1),
            "seconds_per_seed": round(seconds / seeds, 2),
            "trace": trace,
        },
    }


def burst(sessions: int, queries: int) -> dict[str, Any]:
    """``sessions`` SQL sessions at once, each running ``queries`` heavy queries, then closed."""
    config = {"mode": "explore", "max_queries": queries + 1}
    with server("--envs", "sql") as (url, process):
        with RemoteEnv(url, "sql", token=TOKEN, timeout=120, config=config) as warm:
            warm.reset(seed=0)
            warm.step(HEAVY_QUERY)
        idle = settle(process)
        peak = idle

        def one(index: int) -> None:
            with RemoteEnv(url, "sql", token=TOKEN, timeout=300, config=config) as env:
                env.reset(seed=index)
                for _ in range(queries):
                    env.step(HEAVY_QUERY)

        with concurrent.futures.ThreadPoolExecutor(sessions) as pool:
            running = [pool.submit(one, index) for index in range(sessions)]
            while not all(f.done() for f in running):
                peak = max(peak, rss_mb(process))
                time.sleep(0.05)
            for future in running:
                future.result()
        after = settle(process)
    return {
        "sessions": sessions,
        "queries_per_session": queries,
        "rss_idle_mb": round(idle, 1),
        "rss_peak_mb": round(peak, 1),
        "rss_after_mb": round(after, 1),
    }


def session_cost(env_id: str, sessions: int) -> dict[str, Any]:
    """What one session of ``env_id`` adds to the server's process tree (PSS)."""
    with (
        server("--envs", env_id) as (url, process),
        RemoteEnv(url, env_id, token=TOKEN, timeout=300) as first,
        contextlib.ExitStack() as stack,
    ):
        first.reset(seed=0)  # the server has loaded what every session shares
        before = tree_pss_mb(process)
        for index in range(sessions):
            env = stack.enter_context(RemoteEnv(url, env_id, token=TOKEN, timeout=300))
            env.reset(seed=index)
        time.sleep(1.0)
        after = tree_pss_mb(process)
    return {
        "env_id": get_entry(env_id).id,
        "sessions": sessions,
        "mb_per_session": round((after - before) / sessions, 1),
        "declared_mb": get_entry(env_id).memory_mb,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--held", type=int, nargs="+", default=[0, 550, 1100, 2200])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--weight-sets", type=int, default=150)
    parser.add_argument("--webarena-seeds", type=int, default=65)
    parser.add_argument("--burst-sessions", type=int, default=32)
    parser.add_argument("--json", default=str(RESULTS))
    args = parser.parse_args(argv)

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = max(args.held) + 512
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))
    load_before = os.getloadavg()
    held = []
    for count in args.held:
        held.append(connections(count, args.steps))
        row = held[-1]
        print(
            f"{count} connections held: {row['failed_steps']}/{row['steps']} steps failed, "
            f"latency {row['step_latency']}, server held {row['held_by_server_while_stepping']}"
            f" while stepping, {row['held_by_server_after_header_deadline']} after the deadline",
            flush=True,
        )
    memory = {"household": household(args.weight_sets)}
    print(f"household: {memory['household']}", flush=True)
    memory["burst"] = burst(args.burst_sessions, 3)
    print(f"burst: {memory['burst']}", flush=True)
    costs = [
        session_cost(env_id, 4)
        for env_id in ("llmgym/SciWorld-v0", "llmgym/TextWorld-v0")
        if get_entry(env_id).available
    ]
    print(f"session costs: {costs}", flush=True)
    memory["webarena"] = webarena(args.webarena_seeds)
    print(f"webarena: {memory['webarena']}", flush=True)
    load_after = os.getloadavg()
    write_json(
        args.json,
        {
            "server_open_files": SERVER_OPEN_FILES,
            "server_max_connections": SERVER_OPEN_FILES - OPEN_FILES_RESERVE,
            "header_timeout_s": HEADER_TIMEOUT_S,
            "connections": held,
            "memory": memory,
            "session_costs": costs,
            "target_growth_mb": 50,
            "load_average_before": load_before,
            "load_average_after": load_after,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
