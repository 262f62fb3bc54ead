"""The values the benchmarks time, built the same way here and in GDScript, and the live heap.

``bench.py`` (the codec workloads), ``wholefile.py`` (whole save files against the engine) and
``scaling.py`` (50 MB and 500 MB saves) share them, so a row of one compares with a row of
another: the whole-file save is the ``dict_100k`` workload followed by the ``records_20k``
records, one ``store_var`` each.

:func:`live_heap` is the "as users call it" condition: a long-running program (a game server, a
save-migration service) holds millions of live objects, and the cyclic GC's full collections walk
all of them, so a decode that triggers collections costs more there than in a fresh benchmark
process.  Timing in a process that holds such a heap, with the GC on, gives the number users see.
"""

from __future__ import annotations

import gc
from typing import Any

from godot_formats.core import types as t

__all__ = ["SMALL", "DICT_SIZE", "RECORDS", "dict_of", "records_of", "save_values", "live_heap", "heap_objects"]

# The Dictionary values of perf.gd: 1, -7, 2^31 (int64), 0.5 (float32), 0.1 (float64), two
# Strings, true, null, Vector2(1, 2), Color(1, 0, 0).
SMALL: tuple[Any, ...] = (1, -7, 2147483648, 0.5, 0.1, "ab", "héllo", True, None,
                          t.Vector2(1, 2), t.Color(1, 0, 0, 1))

#: The whole-file save: one Dictionary of DICT_SIZE entries, then RECORDS records, one
#: ``store_var`` each (bench_files.gd builds the same): 6,654,912 bytes plain.
DICT_SIZE = 100_000
RECORDS = 32_000


def dict_of(n: int) -> dict[str, Any]:
    """The ``dict_100k`` workload with ``n`` entries."""
    return {f"k{i}": SMALL[i % len(SMALL)] for i in range(n)}


def records_of(n: int) -> list[dict[str, Any]]:
    """The ``records_20k`` workload with ``n`` records: a typical save's list of objects."""
    return [{"id": i, "pos": t.Vector3(i, i * 0.5, -i), "tags": ["a", "b"], "hp": 0.75} for i in range(n)]


def save_values(divisor: int = 1, scale: float = 1.0) -> list[Any]:
    """The whole-file save's ``store_var`` values: 6.7 MB plain, divided by ``divisor`` (as
    bench_files.gd does, with integer division) or multiplied by ``scale`` (the scaling rows)."""
    return [dict_of(round(DICT_SIZE * scale) // divisor)] + records_of(round(RECORDS * scale) // divisor)


def live_heap(items: int) -> list[Any]:
    """``items`` small live dicts, each with a str: about ``2 * items`` objects, ``items`` tracked by the GC.

    Collected once, so they sit in the oldest generation, as a long-running program's data does.
    Keep the result alive for as long as the measurements run.
    """
    heap = [{"id": i, "name": f"user{i}"} for i in range(items)]
    gc.collect()
    return heap


def heap_objects(items: int) -> int:
    """How many Python objects :func:`live_heap` holds (the dicts, their names, the list)."""
    return 2 * items + 1 if items else 0
