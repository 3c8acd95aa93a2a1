"""Time bounds that hold on a loaded machine.

A test that bounds the work one call does reads ``Stopwatch.cpu``, the calling thread's CPU
seconds: a busy CI machine stretches the wall clock by pausing the worker, and the process's
CPU time also counts threads that earlier tests in the same worker left running. ``wall`` stays
for a loose bound that still catches a call that never returns.
"""

from __future__ import annotations

import time


class Stopwatch:
    """The calling thread's CPU seconds and the wall seconds since it was made."""

    def __init__(self) -> None:
        self._cpu_start = time.thread_time()
        self._wall_start = time.perf_counter()

    @property
    def cpu(self) -> float:
        return time.thread_time() - self._cpu_start

    @property
    def wall(self) -> float:
        return time.perf_counter() - self._wall_start
