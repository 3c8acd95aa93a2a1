"""Worker threads for rollouts and matches: waiting for models is what takes the time, so
episodes run side by side, each worker thread with its own environment and agent fork."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Generic, TypeVar

from tqdm.auto import tqdm

from llmgym.errors import ConfigError

__all__ = ["PerThread", "SuccessBar", "check_count", "deferred_interrupt", "run_concurrently"]

T = TypeVar("T")


class PerThread(Generic[T]):
    """One object per worker thread, made on the thread's first :meth:`get`; the first thread
    to ask takes ``first`` (an object already made, e.g. the environment that was probed)."""

    def __init__(self, make: Callable[[], T], first: T | None = None) -> None:
        self._make = make
        self._spare = [] if first is None else [first]
        self._local = threading.local()
        self._lock = threading.Lock()
        self.made: list[T] = list(self._spare)
        """Every object handed out (and ``first``), e.g. to close them at the end."""

    def get(self) -> T:
        """This thread's object."""
        if not hasattr(self._local, "value"):
            with self._lock:
                if self._spare:
                    self._local.value = self._spare.pop()
                else:
                    self._local.value = self._make()
                    self.made.append(self._local.value)
        return self._local.value


def check_count(name: str, value: int, least: int = 1) -> None:
    """Raise :class:`~llmgym.errors.ConfigError` naming ``name`` unless ``value`` is an
    integer >= ``least`` (a run of -3 episodes is a mistake, not an empty run)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ConfigError(name, f"must be an integer >= {least}, got {value!r}")


def run_concurrently(
    count: int,
    play: Callable[[int], T],
    finish: Callable[[int, T], None],
    *,
    concurrency: int,
    name: str,
) -> None:
    """``play(i)`` for every ``i`` in ``range(count)``, ``concurrency`` at a time on worker
    threads named ``name`` (in this thread when ``concurrency <= 1``); ``finish(i, result)``
    runs in this thread as each one ends, whole: Ctrl-C during it takes effect after it
    (:func:`deferred_interrupt`), so that the records it keeps (a results list, a file) agree.
    When this thread is interrupted, the calls not yet started are cancelled; those running go
    on in their threads."""
    if concurrency <= 1:
        for index in range(count):
            result = play(index)
            with deferred_interrupt():
                finish(index, result)
        return
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=name)
    try:
        futures = {pool.submit(play, index): index for index in range(count)}
        for future in as_completed(futures):
            with deferred_interrupt():
                finish(futures[future], future.result())
    except BaseException:
        # on Ctrl-C (or a failing finish) the items not yet started are dropped, not played
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


@contextlib.contextmanager
def deferred_interrupt() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) off while the block runs, and deliver it when the block ends: what
    the block writes is written whole or not at all. Only the main thread receives signals;
    elsewhere (or where a handler not set from Python holds SIGINT) the block just runs."""
    main = threading.current_thread() is threading.main_thread()
    if not main or signal.getsignal(signal.SIGINT) is None:
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: caught.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught and callable(previous):
        previous(signal.SIGINT, None)  # Python's default handler raises KeyboardInterrupt


class SuccessBar:
    """A progress bar of finished episodes (or games) that shows the success rate so far."""

    def __init__(self, total: int, desc: str, *, unit: str = "ep", enabled: bool = True) -> None:
        self._bar = tqdm(total=total, desc=desc, unit=unit, disable=not enabled, leave=False)
        self._done = 0
        self._successes = 0

    def add(self, success: bool | None = None) -> None:
        """One more finished; ``success=None`` leaves the rate out."""
        self._done += 1
        self._bar.update()
        if success is not None:
            self._successes += bool(success)
            self._bar.set_postfix(success=f"{self._successes / self._done:.0%}", refresh=False)

    def close(self) -> None:
        """Remove the bar."""
        self._bar.close()
