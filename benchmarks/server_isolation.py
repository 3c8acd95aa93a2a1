"""Server isolation: how fast ``/health`` and another session's steps answer while one session
runs a 10 s step.

    python benchmarks/server_isolation.py                  # 10 s step, both isolation modes
    python benchmarks/server_isolation.py --slow-step-s 3 --json /tmp/isolation.json

An ``llmgym serve`` subprocess on 127.0.0.1 serves ``llmgym/SQL-v0`` (its operator raised the
query time limit with ``--config-max``) and ``llmgym/Wordle-v0``. One client sends a SQL query
that runs until the time limit stops it (a recursive CTE that never ends: ``--slow-step-s``
seconds of sqlite work in the environment's step). Meanwhile a probe alternates ``GET /health``
(HTTP, one keep-alive connection) and a Wordle step (a :class:`~llmgym.serving.client.RemoteEnv`
over the WebSocket stream), ``--probe-interval-ms`` apart, and records each latency; the same
probe runs for ``--idle-s`` seconds with no slow step first, as the reference. Two servers are
measured: the SQL session's step in a worker thread of the server (every environment's default),
and in a child process (``--isolate llmgym/SQL-v0``, what TextWorld and ScienceWorld always get).

Target: while the slow step runs, every probe answers in under 100 ms (p99 and max). Writes
``benchmarks/results/server_isolation.json``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from bench_utils import write_json

from llmgym.cli import format_table
from llmgym.serving.client import RemoteEnv

RESULTS = Path(__file__).resolve().parent / "results" / "server_isolation.json"
TARGET_MS = 100.0
SLOW_ENV = "llmgym/SQL-v0"
PROBE_ENV = "llmgym/Wordle-v0"
ENDLESS_QUERY = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
)
"""A query that never ends on its own: the environment's time limit stops it."""
WORDS = ("crane", "slate", "pious", "mount", "fjord", "glyph")


def start_server(slow_step_s: float, isolate: bool) -> tuple[subprocess.Popen, str]:
    """``llmgym serve`` on a free loopback port, with the SQL time limit raised to the slow
    step's length and a step limit well past it."""
    command = [
        *(sys.executable, "-m", "llmgym.cli", "serve", "--port", "0"),
        *("--envs", SLOW_ENV, PROBE_ENV, "--log-level", "warning"),
        *("--config-max", f"{SLOW_ENV}.time_limit_ms={round(slow_step_s * 1000)}"),
        *("--step-timeout", str(slow_step_s + 30)),
        *(("--isolate", SLOW_ENV) if isolate else ()),
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline() if process.stdout else ""
    if "listening on " not in line:
        process.kill()
        raise RuntimeError(f"the server did not start: {line!r}")
    return process, line.rsplit("listening on ", 1)[1].strip()


def _summary(latencies: list[float]) -> dict[str, float]:
    values = np.asarray(latencies) * 1000
    return {
        "count": len(values),
        "p50_ms": float(np.percentile(values, 50)),
        "p99_ms": float(np.percentile(values, 99)),
        "max_ms": float(values.max()),
    }


class Probe:
    """Alternates ``GET /health`` and a Wordle step until stopped; records both latencies."""

    def __init__(self, url: str, interval_s: float) -> None:
        self.http = httpx.Client(base_url=url, timeout=60)
        self.env = RemoteEnv(url, PROBE_ENV, timeout=60)
        self.env.reset(seed=0)
        self.interval_s = interval_s
        self.turn = 0

    def run(self, until: threading.Event | float) -> dict[str, dict[str, float]]:
        health: list[float] = []
        steps: list[float] = []

        def going() -> bool:
            if isinstance(until, threading.Event):
                return not until.is_set()
            return time.perf_counter() < until

        while going():
            start = time.perf_counter()
            self.http.get("/health").raise_for_status()
            health.append(time.perf_counter() - start)
            start = time.perf_counter()
            *_, terminated, truncated, _ = self.env.step(WORDS[self.turn % len(WORDS)])
            steps.append(time.perf_counter() - start)
            self.turn += 1
            if terminated or truncated:
                self.env.reset()
            time.sleep(self.interval_s)
        return {"health": _summary(health), "wordle_step": _summary(steps)}

    def close(self) -> None:
        self.env.close()
        self.http.close()


def scenario(slow_step_s: float, isolate: bool, idle_s: float, interval_s: float) -> dict:
    """One server: the probe idle, then during the slow step."""
    server, url = start_server(slow_step_s, isolate)
    try:
        with httpx.Client(base_url=url, timeout=slow_step_s + 60) as http:
            created = http.post(
                "/sessions",
                json={
                    "env_id": SLOW_ENV,
                    "seed": 0,
                    "config": {"mode": "explore", "time_limit_ms": round(slow_step_s * 1000)},
                },
            )
            created.raise_for_status()
            session = created.json()["session_id"]
            probe = Probe(url, interval_s)
            idle = probe.run(time.perf_counter() + idle_s)
            done = threading.Event()
            slow: dict[str, Any] = {}

            def slow_step() -> None:
                start = time.perf_counter()
                reply = http.post(f"/sessions/{session}/step", json={"action": ENDLESS_QUERY})
                slow.update(
                    seconds=time.perf_counter() - start,
                    status=reply.status_code,
                    observation=reply.json().get("observation", "")[:80],
                )
                done.set()

            thread = threading.Thread(target=slow_step)
            thread.start()
            during = probe.run(done)
            thread.join()
            probe.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {
        "isolation": "process" if isolate else "thread",
        "slow_step_s": slow["seconds"],
        "slow_step_status": slow["status"],
        "slow_step_observation": slow["observation"],
        "idle": idle,
        "during": during,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slow-step-s", type=float, default=10.0)
    parser.add_argument("--idle-s", type=float, default=3.0)
    parser.add_argument("--probe-interval-ms", type=float, default=20.0)
    parser.add_argument("--json", default=str(RESULTS))
    args = parser.parse_args(argv)

    load_before = os.getloadavg()
    scenarios = [
        scenario(args.slow_step_s, isolate, args.idle_s, args.probe_interval_ms / 1000)
        for isolate in (False, True)
    ]
    load_after = os.getloadavg()
    rows = [
        {
            "isolation": s["isolation"],
            "slow step s": round(s["slow_step_s"], 2),
            "probe": probe,
            "n": s["during"][probe]["count"],
            "idle p50": round(s["idle"][probe]["p50_ms"], 2),
            "p50 ms": round(s["during"][probe]["p50_ms"], 2),
            "p99 ms": round(s["during"][probe]["p99_ms"], 2),
            "max ms": round(s["during"][probe]["max_ms"], 2),
        }
        for s in scenarios
        for probe in ("health", "wordle_step")
    ]
    print(format_table(rows, list(rows[0])))
    worst = max(
        s["during"][p][k] for s in scenarios for p in s["during"] for k in ("p99_ms", "max_ms")
    )
    met = worst < TARGET_MS
    print(
        f"worst p99/max while the slow step ran: {worst:.1f} ms (target < {TARGET_MS:g} ms): "
        f"{'met' if met else 'NOT met'}"
    )
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    write_json(
        args.json,
        {
            "slow_env": SLOW_ENV,
            "slow_action": ENDLESS_QUERY,
            "probe_env": PROBE_ENV,
            "slow_step_target_s": args.slow_step_s,
            "idle_s": args.idle_s,
            "probe_interval_ms": args.probe_interval_ms,
            "target_ms": TARGET_MS,
            "load_average_before": load_before,
            "load_average_after": load_after,
            "scenarios": scenarios,
            "worst_ms": worst,
            "met": met,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
