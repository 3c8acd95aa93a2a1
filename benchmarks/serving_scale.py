"""Scaling ``llmgym serve`` past one process: steps/s at 64 and 256 sessions with 1 and 2 worker
processes (``--workers``), what a session costs the server (CPU per step, memory), and the
latency the Ray hop adds to a step (``--ray``).

    python benchmarks/serving_scale.py                  # the full run
    python benchmarks/serving_scale.py --quick          # a smoke test: 8 sessions, 2 s each
    python benchmarks/serving_scale.py --envs llmgym/Wordle-v0 --sessions 64 --seconds 10

For each environment — Wordle (light: microseconds a step), SearchQA (medium: a BM25 search over
its encyclopedia) and SciWorld (heavy: a JVM per session, in a child process) — and each number
of sessions, ``llmgym serve --workers W`` runs as a subprocess on 127.0.0.1 and clients drive
every session at once over its WebSocket stream (lean clients: a selector loop in each of
``--client-processes`` processes, so that the server gets the cores), stepping with valid random
actions and resetting when an episode ends. Reported: steps/s over ``--seconds`` after a warm-up,
p50/p99
step latency as the clients see it, the CPU time the server's processes spent per step and the
memory each session added to them (proportional set size). An environment whose declared memory
(the table's ``memory_mb``) does not let the sessions fit in half the machine's available
memory runs as many as fit, and the result says so (``capped_from``).

The Ray hop: one Wordle session stepped one step at a time by a server hosting sessions in the
server's process, then by one hosting them in Ray actors (``--ray local``); the difference of
the p50 latencies is what Ray adds to a step; and the memory one session's actor takes.
Writes ``benchmarks/results/serving_scale.json``.

Each worker count runs ``--repeats`` times (3), in pairs whose order alternates, and the ratio
is that of the median steps/s; a heavy environment (declared memory) runs one pair, at the most
sessions that fit, measured after its sessions have run for 30 s (their JVMs compile first).
``--update --envs ID`` measures one environment again and keeps the others' runs.

The clients' own CPU per step is reported too: with the clients on the same cores, 2 workers can
give at most 2s / (s + c) times 1 worker's steps/s (server CPU s, client CPU c per step).

Targets (2 cores): with 2 workers, Wordle's and SearchQA's steps/s >= 1.6x those with 1 worker.
Clients and server share the cores: run it on an otherwise idle machine, or above other work
(as root; Linux schedules each session's autogroup fairly, so the niceness is set on its own)::

    setsid sh -c 'echo -15 > /proc/self/autogroup &&
                  exec nice -n -15 python benchmarks/serving_scale.py'

The result records the niceness, the autogroup and the load average.
"""

from __future__ import annotations

import argparse
import base64
import json
import multiprocessing as mp
import os
import selectors
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from bench_utils import write_json

from llmgym.envs import get_entry

RESULTS = Path(__file__).resolve().parent / "results" / "serving_scale.json"
ENVS = ("llmgym/Wordle-v0", "llmgym/SearchQA-v0", "llmgym/SciWorld-v0")
TARGET_RATIO = 1.6
TARGET_ENVS = ("llmgym/Wordle-v0", "llmgym/SearchQA-v0")
HEAVY_WARMUP_S = 30.0


# ------------------------------------------------------------------------------ the server
class Server:
    """``llmgym serve`` as a subprocess on a free loopback port."""

    def __init__(self, *args: str) -> None:
        command = [sys.executable, "-m", "llmgym.cli", "serve", "--port", "0"]
        self.process = subprocess.Popen(
            [*command, "--log-level", "warning", "--protocol", "llmgym", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if "listening on " not in line:
            self.stop()
            raise RuntimeError(f"llmgym serve did not start: {line!r}")
        self.url = line.rsplit("listening on ", 1)[1].strip()

    def wait_ready(self, workers: int = 1, timeout: float = 300.0) -> None:
        """Wait until ``workers`` workers answer ``/health`` (they start after the port is
        bound): their start-up is not counted."""
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=10).json()["workers"] >= workers:
                    return
            except (httpx.HTTPError, ValueError, KeyError):
                pass
            time.sleep(0.5)
        raise RuntimeError(f"{workers} workers did not start in {timeout:g} s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, ()))
    return found


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of ``pid``'s process tree."""
    total, tick = 0.0, os.sysconf("SC_CLK_TCK")
    for member in _tree(pid):
        try:
            with open(f"/proc/{member}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return total


def pss_mb(pid: int) -> float:
    """Proportional set size of ``pid``'s process tree, in MiB."""
    total = 0.0
    for member in _tree(pid):
        try:
            with open(f"/proc/{member}/smaps_rollup") as rollup:
                for line in rollup:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) / 1024
                        break
        except OSError:
            continue
    return total


def available_mb() -> float:
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    return 4096.0


# ------------------------------------------------------------------------------ the clients
def sample_actions(env_id: str, count: int, seed: int) -> list[Any]:
    env = gym.make(env_id)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    actions = [env.unwrapped.sample_action(rng) for _ in range(count)]
    env.close()
    return actions


class _Stream:
    """One session's WebSocket stream, spoken with as little client work as a step allows (the
    clients share the server's cores: the less they spend, the more the server shows): frames
    are built once per action, with a zero mask (a no-op that the protocol allows), and a reply
    is read for its ``terminated`` and ``truncated`` flags only."""

    def __init__(self, url: str, session: str) -> None:
        host, port = url.split("//", 1)[1].rsplit(":", 1)
        request = (
            f"GET /sessions/{session}/stream HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n"
        )
        for attempt in range(9):  # as RemoteEnv: straight to the session's worker if it can
            self.sock = socket.create_connection((host, int(port)))
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            direct = "X-Llmgym-Direct: 1\r\n" if attempt < 8 else ""
            self.sock.sendall(f"{request}{direct}\r\n".encode())
            head = b""
            while b"\r\n\r\n" not in head:
                head += self.sock.recv(4096)
            status = head.split(b" ", 2)[1]
            if status == b"101":
                self.buffer = head.split(b"\r\n\r\n", 1)[1]
                return
            self.sock.close()
            if status != b"421":
                raise RuntimeError(f"the stream was refused: {head[:200]!r}")
        raise RuntimeError("no stream")

    @staticmethod
    def frame(message: dict[str, Any]) -> bytes:
        return _Stream._frame(0x1, json.dumps(message).encode())

    @staticmethod
    def _frame(opcode: int, payload: bytes) -> bytes:
        size = len(payload)
        if size < 126:
            head = bytes([0x80 | opcode, 0x80 | size])
        elif size < 1 << 16:
            head = bytes([0x80 | opcode, 0x80 | 126]) + size.to_bytes(2, "big")
        else:
            head = bytes([0x80 | opcode, 0x80 | 127]) + size.to_bytes(8, "big")
        return head + b"\0\0\0\0" + payload

    def reply(self) -> bytes | None:
        """A whole message from the buffer, or ``None`` (more bytes are needed). The
        server's pings are answered (it closes a stream that does not answer them)."""
        while True:
            buffer = self.buffer
            if len(buffer) < 2:
                return None
            size, start = buffer[1] & 0x7F, 2
            if size == 126:
                size, start = int.from_bytes(buffer[2:4], "big"), 4
            elif size == 127:
                size, start = int.from_bytes(buffer[2:10], "big"), 10
            if len(buffer) < start + size:
                return None
            self.buffer = buffer[start + size :]
            payload, opcode = buffer[start : start + size], buffer[0] & 0x0F
            if opcode == 0x9:  # ping
                self.sock.sendall(self._frame(0xA, payload))
            elif opcode == 0x8:
                raise RuntimeError(f"the server closed a stream: {payload[2:]!r}")
            elif opcode != 0xA:
                return payload


def _process_cpu(resource: Any) -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _client_process(
    url: str,
    env_id: str,
    seeds: list[int],
    actions: list[Any],
    start_at: float,
    warmup: float,
    seconds: float,
    queue: Any,
) -> None:
    """Make ``seeds`` sessions, then step them all at once from one loop until the window
    (``seconds`` from ``start_at``, wall clock, or from ``warmup`` seconds after every session
    is made, whichever is later) closes; put (steps, latencies in ms, window start, window end,
    the client's CPU seconds in the window) on ``queue``."""
    import resource

    import httpx

    try:
        sessions = []
        for seed in seeds:  # a new connection each: the kernel spreads them over the workers
            with httpx.Client(timeout=600, verify=False) as http:  # plain HTTP: no TLS set-up
                reply = http.post(f"{url}/sessions", json={"env_id": env_id, "seed": seed})
            reply.raise_for_status()
            sessions.append(reply.json()["session_id"])
        # the streams open once every session is made (a heavy one takes seconds)
        streams = [(session, _Stream(url, session)) for session in sessions]
        step_frames = [_Stream.frame({"op": "step", "action": a}) for a in actions]
        reset_frame = _Stream.frame({"op": "reset"})
        ended = (b'"terminated":true', b'"truncated":true')
        selector = selectors.DefaultSelector()
        sent_at: dict[int, float] = {}
        played: dict[int, int] = {}
        for number, (_, stream) in enumerate(streams):
            selector.register(stream.sock, selectors.EVENT_READ, (number, stream))
            played[number] = number
            stream.sock.sendall(step_frames[number % len(step_frames)])
            sent_at[number] = time.perf_counter()
        opens_at = max(start_at, time.time() + warmup)
        opens = time.perf_counter() + (opens_at - time.time())
        closes = opens + seconds
        steps, latencies, resetting = 0, [], set()
        window_cpu: list[float] = []  # this process's CPU seconds when the window opens, closes
        while time.perf_counter() < closes:
            if not window_cpu and time.perf_counter() >= opens:
                window_cpu.append(_process_cpu(resource))
            for key, _ in selector.select(timeout=1.0):
                number, stream = key.data
                data = stream.sock.recv(1 << 20)
                if not data:
                    raise RuntimeError("the server closed a stream")
                stream.buffer += data
                while (message := stream.reply()) is not None:
                    done = time.perf_counter()
                    if number in resetting:
                        resetting.discard(number)
                    else:
                        if message.startswith(b'{"error"'):
                            raise RuntimeError(f"{env_id}: {message[:300]!r}")
                        if opens <= sent_at[number] and done <= closes:
                            steps += 1
                            latencies.append(1000 * (done - sent_at[number]))
                        if any(flag in message for flag in ended):
                            resetting.add(number)
                            stream.sock.sendall(reset_frame)
                            continue
                    played[number] += 1
                    stream.sock.sendall(step_frames[played[number] % len(step_frames)])
                    sent_at[number] = time.perf_counter()
        window_cpu.append(_process_cpu(resource))
        with httpx.Client(timeout=60, verify=False) as http:
            for session, stream in streams:
                stream.sock.close()
                http.delete(f"{url}/sessions/{session}")
        client_cpu = window_cpu[-1] - window_cpu[0]
        queue.put((steps, latencies, opens_at, opens_at + seconds, client_cpu))
    except BaseException as error:  # reported by the parent
        queue.put(error)


def drive(
    url: str,
    env_id: str,
    sessions: int,
    processes: int,
    seconds: float,
    warmup: float,
    server_pid: int,
) -> dict[str, Any]:
    """Steps/s and latency of ``sessions`` sessions driven by ``processes`` client processes,
    and the CPU time the server's processes spent in the measured window."""
    samples: list[tuple[float, float]] = []
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.wait(0.25):
            samples.append((time.time(), cpu_seconds(server_pid)))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    actions = sample_actions(env_id, 200, 0)
    context = mp.get_context("spawn")
    queue = context.Queue()
    start_at = time.time() + warmup + 0.01 * sessions  # after every session is made
    workers = [
        context.Process(
            target=_client_process,
            args=(
                url,
                env_id,
                list(range(p, sessions, processes)),
                actions,
                start_at,
                warmup,
                seconds,
            ),
            kwargs={"queue": queue},
        )
        for p in range(processes)
    ]
    for worker in workers:
        worker.start()
    outcomes = [queue.get(timeout=3600) for _ in workers]
    sampling.set()
    sampler.join()
    for worker in workers:
        worker.join()
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    steps = sum(o[0] for o in outcomes)
    latencies = np.array([x for o in outcomes for x in o[1]])
    opens, closes = max(o[2] for o in outcomes), min(o[3] for o in outcomes)
    inside = [cpu for at, cpu in samples if opens <= at <= closes]
    spans = [at for at, _ in samples if opens <= at <= closes]
    cpu_share = (inside[-1] - inside[0]) / (spans[-1] - spans[0]) if len(inside) > 1 else None
    client_cpu = sum(o[4] for o in outcomes)
    return {
        "steps": steps,
        "steps_per_s": steps / seconds,
        "server_cpu_ms_per_step": None if cpu_share is None else 1000 * cpu_share * seconds / steps,
        "server_cores_busy": cpu_share,
        "client_cpu_ms_per_step": 1000 * client_cpu / steps if steps else None,
        "client_cores_busy": client_cpu / seconds,
        "p50_ms": float(np.percentile(latencies, 50)) if len(latencies) else None,
        "p99_ms": float(np.percentile(latencies, 99)) if len(latencies) else None,
    }


# ------------------------------------------------------------------------------ the runs
def fitting(env_id: str, sessions: int) -> int:
    """How many sessions of ``env_id`` fit in half the available memory (its declared cost)."""
    declared = get_entry(env_id).memory_mb
    if declared is None:
        return sessions
    return max(1, min(sessions, int(available_mb() / 2 / declared)))


def scale_run(
    env_id: str, workers: int, requested: int, processes: int, seconds: float, warmup: float
) -> dict[str, Any]:
    sessions = fitting(env_id, requested)
    if get_entry(env_id).memory_mb is not None:  # a heavy one: its sessions' JVMs compile first
        warmup = max(warmup, HEAVY_WARMUP_S)
    server = Server(
        "--envs",
        env_id,
        "--workers",
        str(workers),
        "--max-sessions",
        str(2 * sessions),
        "--max-sessions-per-client",
        str(2 * sessions),
        "--max-memory",
        str(max(available_mb(), 1024)),
    )
    try:
        server.wait_ready(workers)
        result = drive(server.url, env_id, sessions, processes, seconds, warmup, server.process.pid)
    except (OSError, RuntimeError) as error:  # a run that fails is reported as not got
        print(f"{env_id} workers={workers} sessions={sessions}: not got ({error!r})", flush=True)
        return {"env_id": env_id, "workers": workers, "sessions": sessions, "error": repr(error)}
    finally:
        server.stop()
    row = {"env_id": env_id, "workers": workers, "sessions": sessions, **result}
    if sessions < requested:
        row["capped_from"] = requested
    print(
        f"{env_id} workers={workers} sessions={sessions}: {result['steps_per_s']:,.0f} steps/s, "
        f"p50 {result['p50_ms']:.1f} ms, server {result['server_cores_busy'] or 0:.2f} cores",
        flush=True,
    )
    return row


def session_memory(env_id: str, sessions: int) -> dict[str, Any]:
    """What ``sessions`` sessions add to one server's memory, per session (PSS)."""
    import httpx

    sessions = fitting(env_id, sessions)
    server = Server("--envs", env_id, "--max-memory", str(max(available_mb(), 1024)))
    try:
        server.wait_ready()
        with httpx.Client(base_url=server.url, timeout=600) as http:
            made = 0
            for seed in range(sessions):
                http.post("/sessions", json={"env_id": env_id, "seed": seed}).raise_for_status()
                made += 1
                if made == 1:  # what sessions share is loaded: count the rest
                    before = pss_mb(server.process.pid)
            after = pss_mb(server.process.pid)
    finally:
        server.stop()
    return {
        "env_id": env_id,
        "sessions": made,
        "mb_per_session": (after - before) / max(made - 1, 1),
        "declared_mb": get_entry(env_id).memory_mb,
    }


def ray_hop(seconds: float, sessions: int = 8) -> dict[str, Any]:
    """p50 step latency of one Wordle session, in the server's process and in a Ray actor; and
    the memory a session's actor takes (of the server's process tree, which holds the local
    Ray instance that ``--ray local`` starts)."""
    import httpx

    env_id = "llmgym/Wordle-v0"
    latencies, actor_mb = {}, None
    for hosting, args in (("in_process", ()), ("ray", ("--ray", "local"))):
        server = Server("--envs", env_id, *args)
        try:
            server.wait_ready()
            run = drive(server.url, env_id, 1, 1, seconds, 2.0, server.process.pid)
            latencies[hosting] = run["p50_ms"]
            if hosting == "ray":
                with httpx.Client(base_url=server.url, timeout=600) as http:
                    http.post("/sessions", json={"env_id": env_id}).raise_for_status()
                    before = pss_mb(server.process.pid)
                    for _ in range(sessions):
                        http.post("/sessions", json={"env_id": env_id}).raise_for_status()
                    actor_mb = (pss_mb(server.process.pid) - before) / sessions
        finally:
            server.stop()
    return {
        "env_id": env_id,
        "in_process_p50_ms": latencies["in_process"],
        "ray_p50_ms": latencies["ray"],
        "added_ms": latencies["ray"] - latencies["in_process"],
        "actor_mb_per_session": actor_mb,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", nargs="+", default=list(ENVS))
    parser.add_argument("--sessions", nargs="+", type=int, default=[64, 256])
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--seconds", type=float, default=10.0, help="measured, per run")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--client-processes", type=int, default=1)
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs of each worker count, in alternating pairs"
    )
    parser.add_argument("--quick", action="store_true", help="8 sessions, 2 s: a smoke test")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray hop")
    parser.add_argument("--json", type=Path, default=RESULTS)
    parser.add_argument(
        "--update",
        action="store_true",
        help="measure --envs again and keep the other environments' runs of --json",
    )
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.seconds, args.warmup, args.repeats = [8], 2.0, 1.0, 1
    available = [e for e in args.envs if get_entry(e).available]
    load_before = os.getloadavg()
    runs = []
    for env_id in available:
        # a heavy environment (declared memory) runs one pair at the most sessions that fit:
        # its sessions' start-up (a JVM each) takes minutes
        heavy = get_entry(env_id).memory_mb is not None
        levels = sorted({fitting(env_id, s): s for s in args.sessions}.values())
        for sessions in levels[-1:] if heavy else levels:
            for repeat in range(1 if heavy else args.repeats):
                # the order alternates between repeats, so that a drift of the machine's speed
                # (other tenants of its host) does not favour one side
                for workers in args.workers if repeat % 2 == 0 else args.workers[::-1]:
                    run = scale_run(
                        env_id, workers, sessions, args.client_processes, args.seconds, args.warmup
                    )
                    runs.append({**run, "repeat": repeat, "load_average_1m": os.getloadavg()[0]})
    memory = [session_memory(env_id, min(args.sessions)) for env_id in available]
    hop = None if args.no_ray else ray_hop(args.seconds)
    if args.update and args.json.exists():  # keep the other environments' measurements
        kept = json.loads(args.json.read_text())
        runs = [r for r in kept["runs"] if r["env_id"] not in available] + runs
        memory = [m for m in kept["session_memory"] if m["env_id"] not in available] + memory
        hop = hop or kept.get("ray_hop")
    medians, ratios = {}, {}
    for env_id in dict.fromkeys(r["env_id"] for r in runs):
        for sessions in sorted(
            {r.get("capped_from", r["sessions"]) for r in runs if r["env_id"] == env_id}
        ):
            by_workers = {
                workers: [
                    r["steps_per_s"]
                    for r in runs
                    if r["env_id"] == env_id
                    and r["workers"] == workers
                    and r.get("capped_from", r["sessions"]) == sessions
                    and "error" not in r
                ]
                for workers in args.workers
            }
            key = f"{env_id}@{sessions}"
            medians[key] = {w: float(np.median(s)) for w, s in by_workers.items() if s}
            if 1 in medians[key] and 2 in medians[key]:
                ratios[key] = medians[key][2] / medians[key][1]
    write_json(
        args.json,
        {
            "seconds": args.seconds,
            "client_processes": args.client_processes,
            "repeats": args.repeats,
            "runs": runs,
            "median_steps_per_s": medians,
            "session_memory": memory,
            "ray_hop": hop,
            "ratio_2_to_1_worker": ratios,
            "target_ratio": TARGET_RATIO,
            "target_envs": list(TARGET_ENVS),
            "niceness": os.nice(0),
            "autogroup": Path("/proc/self/autogroup").read_text().strip()
            if Path("/proc/self/autogroup").exists()
            else None,
            "load_average_before": list(load_before),
            "load_average_after": list(os.getloadavg()),
        },
    )
    for key, ratio in ratios.items():
        verdict = "met" if ratio >= TARGET_RATIO else "NOT met"
        target = key.split("@")[0] in TARGET_ENVS
        print(f"{key}: 2 workers / 1 = {ratio:.2f}x" + (f" ({verdict})" if target else ""))
    if hop is not None:
        print(f"Ray hop: +{hop['added_ms']:.2f} ms per step (p50)")


if __name__ == "__main__":
    main()
