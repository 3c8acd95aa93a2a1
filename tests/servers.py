"""Real llmgym servers on 127.0.0.1 for tests: in a thread of the test process, or as an
``llmgym serve`` subprocess. Both stop by themselves when the ``with`` block ends."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.extras import need

if TYPE_CHECKING:
    import uvicorn

    from llmgym.serving.server import ServerSettings


class LiveServer:
    """``with LiveServer(ServerSettings(...)) as server: server.url`` — a uvicorn server in a
    thread. :meth:`restart` replaces it by a fresh process-equivalent (new app, same port)."""

    def __init__(
        self, settings: ServerSettings | None = None, port: int = 0, **uvicorn_options: Any
    ) -> None:
        self.settings = settings
        self.port = port
        self.uvicorn_options = uvicorn_options
        self.app: Any = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LiveServer:
        uvicorn = need("uvicorn")
        need("fastapi")
        from llmgym.serving.server import ServerSettings, create_app, uvicorn_config

        self.settings = self.settings or ServerSettings()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
        self.app = create_app(self.settings)
        config = uvicorn_config(
            self.app, self.settings, log_level="warning", access_log=False, **self.uvicorn_options
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=30)
            self._server = None

    def restart(self, settings: ServerSettings | None = None) -> None:
        """Stop, then serve a new app (new instance id, no sessions) on the same port."""
        self.stop()
        if settings is not None:
            self.settings = settings
        self.start()

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ServeProcess:
    """``llmgym serve`` as a subprocess on a free loopback port (or ``port``), with its
    open-file limit (soft and hard) set to ``open_files`` if given."""

    def __init__(self, *args: str, port: int = 0, open_files: int | None = None) -> None:
        self.args = args
        self.port = port
        self.open_files = open_files
        self.process: subprocess.Popen | None = None
        self.url = ""

    def start(self, timeout: float = 60.0) -> ServeProcess:
        command = [sys.executable, "-m", "llmgym.cli", "serve", "--port", str(self.port)]
        self.process = subprocess.Popen(
            [*command, "--log-level", "warning", *self.args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            preexec_fn=None if self.open_files is None else self._limit_open_files,
        )
        ready = threading.Event()
        lines: list[str] = []

        def read() -> None:
            assert self.process is not None and self.process.stdout is not None
            lines.append(self.process.stdout.readline())
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(timeout) or "listening on " not in lines[0]:
            self.stop()
            raise RuntimeError(f"llmgym serve did not start: {lines!r}")
        self.url = lines[0].rsplit("listening on ", 1)[1].strip()
        self.port = int(self.url.rsplit(":", 1)[1])
        return self

    def _limit_open_files(self) -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, self.open_files))

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)

    def __enter__(self) -> ServeProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def local_ray(num_cpus: int = 2) -> Iterator[None]:
    """A Ray instance in this process for the ``with`` block (servers with ``ray="local"``
    use it rather than start their own)."""
    ray = need("ray")
    from llmgym.serving import ray_actors

    if ray.is_initialized():
        ray.shutdown()
    ray_actors.init(
        "local",
        num_cpus=num_cpus,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="error",
    )
    try:
        yield
    finally:
        ray.shutdown()


class RayCluster:
    """A Ray cluster of nodes on 127.0.0.1, each a ``ray start --block`` process group of this
    test's own (so a node is killed, or the cluster stopped, by process group: other Ray
    instances on the machine are left alone). Logs and sockets go under ``temp_dir``."""

    def __init__(self, temp_dir: str, cpus_per_node: int = 1) -> None:
        self.temp_dir = temp_dir
        self.cpus_per_node = cpus_per_node
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.nodes: list[subprocess.Popen] = []

    def add_node(self) -> subprocess.Popen:
        """Start a node (the first is the head) and wait until the cluster counts it."""
        ray = need("ray")
        head = not self.nodes
        command = [
            str(Path(sys.executable).with_name("ray")),
            "start",
            "--block",
            "--node-ip-address=127.0.0.1",
            f"--num-cpus={self.cpus_per_node}",
            "--object-store-memory=80000000",
            "--disable-usage-stats",
            f"--node-manager-port={_free_port()}",
            f"--object-manager-port={_free_port()}",
            f"--dashboard-agent-listen-port={_free_port()}",
            f"--dashboard-agent-grpc-port={_free_port()}",
            f"--runtime-env-agent-port={_free_port()}",
            f"--metrics-export-port={_free_port()}",
        ]
        if head:
            command += [
                "--head",
                f"--port={self.port}",
                "--include-dashboard=false",
                f"--temp-dir={self.temp_dir}",
            ]
        else:
            command.append(f"--address={self.address}")
        log = Path(self.temp_dir, f"node{len(self.nodes)}.log")
        with log.open("w") as output:
            node = subprocess.Popen(
                command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.nodes.append(node)
        deadline = time.monotonic() + 120

        def check() -> None:
            if time.monotonic() > deadline or node.poll() is not None:
                raise RuntimeError(f"a Ray node did not start: {log.read_text()[-2000:]}")
            time.sleep(0.2)

        if head:
            while not _accepts(self.port):
                check()
            ray.init(address=self.address, log_to_driver=False, logging_level="error")
        while sum(1 for n in ray.nodes() if n["Alive"]) < len(self.nodes):
            check()
        return node

    def kill(self, node: subprocess.Popen) -> None:
        """Kill ``node`` and every process it started, at once (a machine that fails): the
        processes of its session (its workers have process groups of their own)."""
        for pid in _session_processes(node.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        node.wait(timeout=30)

    def stop(self) -> None:
        """Disconnect, then kill every node (a test cluster keeps nothing worth draining)."""
        need("ray").shutdown()
        for node in self.nodes:
            self.kill(node)


def _session_processes(session: int) -> list[int]:
    """The processes of the session whose leader is ``session`` (Linux)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if os.getsid(int(entry)) == session:
                    found.append(int(entry))
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0
