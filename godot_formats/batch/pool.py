"""Many jobs on a process pool, given back in order, hardened against workers that die: the one pool
of every run (``godot-formats convert`` on a folder, :func:`godot_formats.batch.convert`).

Jobs go to the workers in chunks (one job at first, growing to :data:`POOL_CHUNK` as jobs finish), at
most :data:`WINDOW` chunks per worker in flight, and come back in the order they were given, so a
run reads the same on one core and on many.  A worker that dies (a crash, an out-of-memory kill)
breaks the pool: the chunks that finished keep their results, the jobs of the others are retried one
by one, each alone in a fresh worker, and a job that kills its worker twice fails alone.  Ctrl-C:
the workers ignore it (:func:`.signals.worker_start`); the parent cancels what has not started and
lets the jobs being done finish.  Workers die with their parent, however it dies.

A caller's own executor (a Dask client's) runs jobs through :func:`on_executor` instead: chunks of
:data:`CHUNK`, given back as they finish.
"""

from __future__ import annotations

import collections
import functools
import itertools
import os
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from ..layers import compression
from .signals import ctrl_c_deferred, worker_start

__all__ = ["CHUNK", "POOL_CHUNK", "WINDOW", "in_order", "new_pool", "on_executor", "submit"]

J = TypeVar("J")
R = TypeVar("R")

#: The most jobs per future on the default pool: one future per small save costs the parent as
#: much CPU as the worker spends converting it (pickling, the pool's threads, waking them), which
#: kept ``--jobs 2`` from using both cores.  Chunks start at one job and grow to this as jobs
#: finish, so a run of a few files still spreads over every worker.
POOL_CHUNK = 8

#: Chunks in flight per worker.  The results are given in order, so a slow job at the head of the
#: window holds the others back: a deeper window keeps the other workers busy meanwhile.
WINDOW = 4

#: Jobs per future on an executor given by the caller: a Dask future costs milliseconds of
#: scheduling, more than a small save takes to convert.
CHUNK = 16


def new_pool(workers: int) -> ProcessPoolExecutor:
    """A process pool whose workers leave Ctrl-C to this process and die with it."""
    return ProcessPoolExecutor(workers, initializer=worker_start, initargs=(os.getpid(),))


def chunk_size(done: int, workers: int) -> int:
    """How many jobs the next chunk of the default pool takes, once ``done`` jobs are back."""
    return max(1, min(POOL_CHUNK, done // (4 * workers)))


def submit(pool: Executor, fn: Callable[[J], R], job: J) -> Future[R]:
    """``pool.submit(fn, job)``; a pool that broke already (a worker died since the last look) gives
    a future holding that error, so that the job gets its solo retry with the others in flight."""
    try:
        return pool.submit(fn, job)
    except BrokenProcessPool as e:
        future: Future[R] = Future()
        future.set_exception(e)
        return future


def many(work: Callable[[J], R], jobs: list[J]) -> list[R]:
    """``work`` on a chunk of jobs, in one future, each on one thread: the other workers keep the
    other cores busy (a process pool's, a Dask cluster's, a thread pool's)."""
    with compression.one_thread():
        return [work(job) for job in jobs]


def finished(future: Future[Any]) -> bool:
    """Whether ``future`` ran to its result (not cancelled, no error: a broken pool's raise)."""
    return future.done() and not future.cancelled() and future.exception() is None


def _solo(job: J, work: Callable[[J], R], died: Callable[[J], R], tidy: Callable[[J], None]) -> R:
    """``job`` again, alone in a fresh one-worker pool, after its pool broke (a broken pool kills its
    other workers too: ``tidy`` removes what one of them was writing)."""
    tidy(job)
    pool = new_pool(1)
    try:
        return pool.submit(work, job).result()
    except BrokenProcessPool:
        tidy(job)
        return died(job)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


class _Pending:
    """The mark of a job whose chunk was lost to a broken pool: it is retried alone."""


PENDING = _Pending()


def in_order(jobs: Iterable[J], work: Callable[[J], R], workers: int, died: Callable[[J], R],
             tidy: Callable[[J], None], spill: list[tuple[J, R]]) -> Generator[tuple[J, R], None, None]:
    """``(job, work(job))`` for each job, in the order of ``jobs``, on ``workers`` processes.  ``work``
    never raises; ``died(job)`` is the result of a job that killed its worker twice; ``tidy(job)``
    removes what a job's killed worker left, before its solo retry.

    Closing the generator (Ctrl-C) cancels the chunks not started and waits for those running; the
    results of every job that finished and was not given yet go to ``spill``: their outputs are
    written, and a run that did not count them would leave outputs that the next run refuses as
    existing files.  The pair given last is still in ``spill`` when the generator is closed at its
    ``yield``: the consumer, which knows the pair it was given last, skips it by identity."""
    pool = new_pool(workers)
    window: collections.deque[tuple[list[J], Future[list[R]]]] = collections.deque()
    back: collections.deque[tuple[J, R | _Pending]] = collections.deque()  # in order, not given yet
    todo = iter(jobs)
    done = 0
    try:
        while True:
            while len(window) < WINDOW * workers:
                chunk = list(itertools.islice(todo, chunk_size(done, workers)))
                if not chunk:
                    break
                window.append((chunk, submit(pool, functools.partial(many, work), chunk)))
            if not window:
                return
            chunk, future = window[0]
            try:
                results = future.result()
            except BrokenProcessPool:  # the chunks that finished keep their results; the others' jobs go alone
                pool.shutdown(wait=True, cancel_futures=True)
                with ctrl_c_deferred():
                    _settle(window, back)
                pool = new_pool(workers)
            else:
                with ctrl_c_deferred():  # moved whole: in both places it would be spilled twice, in neither lost
                    back.extend(zip(chunk, results))
                    window.popleft()
            while back:
                job, result = back[0]
                if isinstance(result, _Pending):
                    back[0] = (job, _solo(job, work, died, tidy))
                done += 1
                yield back[0]  # type: ignore[misc]  # a result now; dropped only once given
                back.popleft()
    finally:
        # Under ctrl_c_deferred: a first Ctrl-C in future.result() runs this on its way up, and a
        # second one must not cut it (the results of written files lost, the workers orphaned).
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
        back.extend(zip(chunk, future.result()) if finished(future) else ((j, PENDING) for j in chunk))


def on_executor(jobs: Iterable[J], work: Callable[[J], R], workers: int, executor: Executor,
                failed: Callable[[J, BaseException], R],
                spill: list[tuple[J, R]]) -> Generator[tuple[J, R], None, None]:
    """``(job, work(job))`` on the caller's executor (a Dask client's, a thread pool), as chunks of
    :data:`CHUNK` finish, at most ``2 * workers`` chunks in flight; a chunk whose future raised gives
    ``failed(job, error)`` for each of its jobs.  Closing the generator cancels the chunks not
    started; the results already back go to ``spill``."""
    inflight: dict[Future[list[R]], list[J]] = {}
    ready: collections.deque[tuple[J, R]] = collections.deque()
    source = iter(jobs)
    buf: list[J] = []
    exhausted = False
    try:
        while True:
            while not exhausted and len(inflight) < 2 * workers:
                item = next(source, _END)
                exhausted = item is _END
                if not exhausted:
                    buf.append(item)  # type: ignore[arg-type]
                if buf and (len(buf) >= CHUNK or exhausted):
                    inflight[executor.submit(functools.partial(many, work), buf)] = buf
                    buf = []
            while ready:
                yield ready[0]
                ready.popleft()
            if not inflight:
                return
            done, _ = wait(inflight, return_when=FIRST_COMPLETED)
            for future in done:
                with ctrl_c_deferred():
                    chunk = inflight.pop(future)
                    error = future.exception()
                    if error is None:
                        ready.extend(zip(chunk, future.result()))
                    else:
                        ready.extend((job, failed(job, error)) for job in chunk)
    finally:
        for future in inflight:
            future.cancel()
        spill.extend(ready)


_END = object()
