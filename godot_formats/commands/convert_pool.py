"""The files of ``godot-formats convert FOLDER...`` converted on a process pool (every core by
default; ``--jobs 1`` keeps one process).

The plan stays the one-process command's (every destination decided and checked before anything
is written; or its streamed listing, pulled only as the window has room, each file checked as it
is listed) and each file goes through the same ``convert_one``, so the lines are the same; they
are printed in the plan's order, not as the files finish, so a run reads the same on one core and
on many.  Files go to the workers in chunks (one at first, growing to
:data:`~godot_formats.batch.POOL_CHUNK`), at most :data:`WINDOW` chunks per worker in flight.  A
worker that dies (a crash, an out-of-memory kill) breaks the pool: the files in flight are retried
one by one, each alone in a fresh worker, and a file that kills its worker twice fails alone.
Ctrl-C: the workers ignore it; the parent cancels what has not started and lets the files being
converted finish.
"""

from __future__ import annotations

import argparse
import collections
import functools
import itertools
import os
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from ..batch import _chunk_size, _finished, _worker_start, submit
from ..layers import compression
from .common import ctrl_c_deferred

J = TypeVar("J")
R = TypeVar("R")


def pooled(args: argparse.Namespace) -> bool:
    """Whether this run uses a pool: no file on standard input or output, and not ``--jobs 1``."""
    return getattr(args, "workers", None) != 1 and not args.output and "-" not in args.inputs


def workers_of(args: argparse.Namespace) -> int:
    """``--jobs N`` (0 or not given: every core)."""
    return getattr(args, "workers", None) or os.cpu_count() or 1


def _solo(job: J, work: Callable[[J], R], died: Callable[[J], R], tidy: Callable[[J], None]) -> R:
    """``job`` again, alone in a fresh one-worker pool, after its pool broke (a broken pool kills its
    other workers too: ``tidy`` removes what one of them was writing)."""
    tidy(job)
    pool = ProcessPoolExecutor(1, initializer=_worker_start)
    try:
        return pool.submit(work, job).result()
    except BrokenProcessPool:
        return died(job)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _many(work: Callable[[J], R], jobs: list[J]) -> list[R]:
    """``work`` on a chunk of jobs, in one future (see :data:`godot_formats.batch.POOL_CHUNK`), each
    file on one thread: the other workers keep the other cores busy."""
    with compression.one_thread():
        return [work(job) for job in jobs]


#: Chunks in flight per worker.  The outcomes are given in order, so a slow file at the head of the
#: window holds the others back: a deeper window keeps the other workers busy meanwhile (an
#: outcome is a line of text: the depth costs no memory to speak of).
WINDOW = 4


class _Pending:
    """The mark of a job whose chunk was lost to a broken pool: it is retried alone."""


PENDING = _Pending()


def in_order(jobs: Iterable[J], work: Callable[[J], R], workers: int, died: Callable[[J], R],
             tidy: Callable[[J], None], spill: list[tuple[J, R]]) -> Generator[tuple[J, R], None, None]:
    """``(job, work(job))`` for each job, in the order of ``jobs``, on ``workers`` processes, the jobs
    sent in chunks (one at first, then up to :data:`~godot_formats.batch.POOL_CHUNK`), at most
    :data:`WINDOW` chunks per worker in flight.  ``work`` never raises (it is ``convert_one``);
    ``died(job)`` is the result of a job that killed its worker twice; ``tidy(job)`` removes what a
    job's killed worker left, before its solo retry.

    Closing the generator (Ctrl-C) cancels the chunks not started and waits for those running; the
    outcomes of every job that finished and was not given yet go to ``spill``: their outputs are
    written, and a run that did not count them would leave outputs that the next run refuses as
    existing files."""
    pool = ProcessPoolExecutor(workers, initializer=_worker_start)
    window: collections.deque[tuple[list[J], Future[list[R]]]] = collections.deque()
    back: collections.deque[tuple[J, R | _Pending]] = collections.deque()  # in order, not given yet
    todo = iter(jobs)
    done = 0
    try:
        while True:
            while len(window) < WINDOW * workers:
                chunk = list(itertools.islice(todo, _chunk_size(done, workers)))
                if not chunk:
                    break
                window.append((chunk, submit(pool, functools.partial(_many, work), chunk)))
            if not window:
                return
            chunk, future = window[0]
            try:
                results = future.result()
            except BrokenProcessPool:  # the chunks that finished keep their results; the others' jobs go alone
                pool.shutdown(wait=True, cancel_futures=True)
                with ctrl_c_deferred():
                    _settle(window, back)
                pool = ProcessPoolExecutor(workers, initializer=_worker_start)
            else:
                with ctrl_c_deferred():  # moved whole: in both places it would be spilled twice, in neither lost
                    back.extend(zip(chunk, results))
                    window.popleft()
            while back:
                job, result = back[0]
                if isinstance(result, _Pending):
                    back[0] = (job, _solo(job, work, died, tidy))
                done += 1
                yield back[0]  # type: ignore[misc]  # an outcome now; dropped only once given (batch._give)
                back.popleft()
    finally:
        # Under ctrl_c_deferred: a first Ctrl-C in future.result() runs this on its way up, and a
        # second one must not cut it (the outcomes of written files lost, the workers orphaned).
        with ctrl_c_deferred():
            pool.shutdown(wait=True, cancel_futures=True)
            _settle(window, back)
            for pair in back:
                if isinstance(pair[1], _Pending):
                    tidy(pair[0])
                else:
                    spill.append(pair)  # type: ignore[arg-type]


def _settle(window: collections.deque[tuple[list[J], Future[list[R]]]],
            back: collections.deque[tuple[J, R | _Pending]]) -> None:
    """Move every chunk of ``window`` to ``back``: with its results when it finished, else each job
    marked :data:`PENDING` (to retry alone, or to tidy when the run stops)."""
    while window:
        chunk, future = window.popleft()
        back.extend(zip(chunk, future.result()) if _finished(future) else ((j, PENDING) for j in chunk))
