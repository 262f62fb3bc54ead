"""Signals and process lifetimes of a run: a Ctrl-C held over a few steps that belong together, and
workers that never outlive the process that started them.

A pool's workers are children of the run.  When the run ends in order it shuts the pool down; when
it is killed (``kill -9``, the OOM killer) nothing tells an idle worker, which waits on its task
queue for ever, and keeps the run's standard error open (a caller reading it to the end hangs:
issue 40, item 5).  So each worker asks the kernel for a signal when its parent dies
(``PR_SET_PDEATHSIG`` on Linux), and watches its parent besides (a thread that looks every
:data:`WATCH_SECONDS`): the kernel's signal is tied to the thread that forked the worker, which may
end before the run does, and other systems have no such signal at all.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["WATCH_SECONDS", "alive", "ctrl_c_deferred", "worker_start"]

#: How often a worker looks whether its parent is still there.
WATCH_SECONDS = 0.5

_PR_SET_PDEATHSIG = 1


@contextlib.contextmanager
def ctrl_c_deferred() -> Iterator[None]:
    """Hold a Ctrl-C that arrives inside the block until the block ends, then raise it as usual.

    A file's outcome is counted, printed and journaled in a few steps; a ``KeyboardInterrupt`` between
    two of them would count a file without its line, or journal one without counting it.  Blocking
    the signal would not do: the kernel hands it to another thread (a pool's), and CPython raises it
    in the main thread at its next instruction, so the handler itself is swapped for the block.
    Outside the main thread (where no handler can be set, and none runs) the block runs as it is."""
    old = signal.getsignal(signal.SIGINT) if threading.current_thread() is threading.main_thread() else None
    if old is None:  # not the main thread, or a handler set outside Python, which could not be put back
        yield
        return
    got: list[Any] = []
    signal.signal(signal.SIGINT, lambda *received: got.append(received))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
        if got and callable(old):
            old(*got[0])
        elif got and old == signal.SIG_DFL:
            signal.raise_signal(signal.SIGINT)  # what it would have done: end the process


def _ask_for_parent_death_signal() -> None:
    """``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills this process when its parent dies."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):  # no libc to be found: the watchdog alone does it
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs: it exists (another user's counts) and is no zombie (dead, not
    yet reaped: where nothing reaps orphans, a container's first process often being no init)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists
        pass
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read()
    except OSError:  # no /proc (not Linux), or it went meanwhile
        return True
    return state[state.rfind(b")") + 2:][:1] not in (b"Z", b"X")


def _watch(run: int) -> None:
    """End this process (without cleanup: nobody waits for its results) once the run's process
    ``run`` is gone.  The run is asked by its pid, not by ``getppid``: a worker may be the child of
    a fork server (``forkserver``, Python 3.14's default on Linux) rather than of the run."""
    stop = threading.Event()
    while not stop.wait(WATCH_SECONDS):
        if not alive(run):
            os._exit(1)


def worker_start(run: int) -> None:
    """A pool worker's initializer: Ctrl-C is the run's to handle (it stops the workers in order, so
    no file is left half-written), and the worker dies with the run's process ``run``, however that
    dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _ask_for_parent_death_signal()
    if not alive(run):  # the run died before the request was made
        os._exit(1)
    threading.Thread(target=_watch, args=(run,), name="godot-formats run watch", daemon=True).start()
