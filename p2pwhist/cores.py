"""Every core of this machine for a searching bot's moves: a ``Runner`` (``games.bots``) that
runs a move's parts at once, each in a worker process of its own.

A bot's move is pure work on plain values (``games.bots``: the parts and their sum do not
depend on the runner), so the only edge here is the pool. Why processes: the search is pure
Python, and threads would share one interpreter lock; why this shape:

- the pool starts with the first move that needs it and lives until ``close`` (one per
  program), its workers *spawned* (fresh interpreters, children of the program): a fork of a
  process running trio's threads could copy a lock held by another thread;
- the workers ignore Ctrl-C: it reaches the whole process group, and the program that owns them
  decides what it means (it stops, and ``close`` ends them); and each ends by itself within a
  second of its program, however the program ended (``_start_worker``);
- the parts' deadline is on ``time.perf_counter``, which on Linux reads the system's monotonic
  clock, the same in every process;
- a worker killed from outside costs no move: its parts are thought in this process, and the
  next move starts a fresh pool;
- a networked peer calls its bot in a trio worker thread (``net.Agent``), which waits here for
  the parts, so the event loop goes on answering while the cores think.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from p2pwhist.games.bots import in_turn

__all__ = ["Cores"]


# How often a worker looks whether the program that started it is still there.
_ORPHAN_CHECK_SECONDS = 1.0


def _start_worker(program: int) -> None:
    """A worker's set-up: it ignores Ctrl-C, and ends once its program (the pid ``program``,
    given, not read here: the program may be gone before this runs) has gone, however that
    ended (a SIGKILL runs no clean-up: without this its workers would wait for parts forever)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == program:
            time.sleep(_ORPHAN_CHECK_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


class Cores:
    """``workers`` processes (by default one per core) to run a move's parts; ``run`` is the
    runner. One worker runs them in this process (``in_turn``)."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or os.cpu_count() or 1
        self._pool: ProcessPoolExecutor | None = None

    def run(self, work: Callable[..., Any], jobs: Sequence[tuple[Any, ...]]) -> list[Any]:
        if self.workers == 1 or len(jobs) == 1:
            return in_turn(work, jobs)
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_start_worker, initargs=(os.getpid(),))
        try:
            return list(self._pool.map(work, *zip(*jobs, strict=True)))
        except BrokenProcessPool:  # a worker was killed (say, by the system short of memory)
            self.close()  # the next move starts a fresh pool; this one is thought here
            return in_turn(work, jobs)

    def close(self) -> None:
        """End the workers (a move still thinking is cut off)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> Cores:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
