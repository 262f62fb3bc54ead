"""The files of ``godot-formats convert FOLDER...`` converted on a process pool (every core by
default; ``--jobs 1`` keeps one process).

The plan stays the one-process command's (every destination decided and checked before anything
is written) and each file goes through the same ``convert_one``, so the lines are the same; they
are printed in the plan's order, not as the files finish, so a run reads the same on one core and
on many.  At most ``2 * workers`` files are in flight.  A worker that dies (a crash, an
out-of-memory kill) breaks the pool: the files in flight are retried one by one, each alone in a
fresh worker, and a file that kills its worker twice fails alone.  Ctrl-C: the workers ignore it;
the parent cancels what has not started and lets the files being converted finish.
"""

from __future__ import annotations

import argparse
import collections
import os
from collections.abc import Callable, Generator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from ..batch import _ignore_sigint, submit

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
    pool = ProcessPoolExecutor(1, initializer=_ignore_sigint)
    try:
        return pool.submit(work, job).result()
    except BrokenProcessPool:
        return died(job)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _settled(job: J, future: Future[R], work: Callable[[J], R], died: Callable[[J], R],
             tidy: Callable[[J], None]) -> R:
    """A future's result when it finished before the pool broke, else the solo retry's."""
    if future.done() and not future.cancelled() and future.exception() is None:
        return future.result()
    return _solo(job, work, died, tidy)


def _finished_before_stop(flight: list[tuple[J, Future[R]]], pool: Executor) -> Generator[tuple[J, R], None, None]:
    """After Ctrl-C: the jobs not started are cancelled and those running finish (their outputs are
    written), so each of those is given with its outcome; a run that counted them as not done
    would leave outputs that the next run refuses as existing files."""
    pool.shutdown(wait=True, cancel_futures=True)
    for job, future in flight:
        if future.done() and not future.cancelled() and future.exception() is None:
            yield job, future.result()


def in_order(jobs: list[J], work: Callable[[J], R], workers: int, died: Callable[[J], R],
             tidy: Callable[[J], None]) -> Generator[tuple[J, R], None, None]:
    """``(job, work(job))`` for each job, in the order of ``jobs``, on ``workers`` processes.
    ``work`` never raises (it is ``convert_one``); ``died(job)`` is the result of a job that killed
    its worker twice; ``tidy(job)`` removes a job's temporary file, before its solo retry.  Closing
    the generator (Ctrl-C) cancels the jobs not started and waits for those running."""
    pool = ProcessPoolExecutor(workers, initializer=_ignore_sigint)
    window: collections.deque[tuple[J, Future[R]]] = collections.deque()
    todo = iter(jobs)
    try:
        while True:
            for job in todo:
                window.append((job, submit(pool, work, job)))
                if len(window) >= 2 * workers:
                    break
            if not window:
                return
            job, future = window.popleft()
            try:
                result = future.result()
            except KeyboardInterrupt:
                yield from _finished_before_stop([(job, future), *window], pool)
                raise
            except BrokenProcessPool:
                lost = [(job, future), *window]
                window.clear()
                pool.shutdown(wait=True, cancel_futures=True)
                for each, was in lost:
                    yield each, _settled(each, was, work, died, tidy)
                pool = ProcessPoolExecutor(workers, initializer=_ignore_sigint)
                continue
            yield job, result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
