"""What detection costs a user: ``gf.open(path)`` with the dialect left to it, against ``gf.open(path,
dialect=...)``, on large save files, with the GC on (as users call it).

Usage: ``python3 benchmarks/open_detect.py [--runs 7] [--records 20000]``

Each save is written to a temporary file (so the timings include the read, as for a user), then
opened ``--runs`` times each way, in turns; the fastest and the median of each are printed, with
the ratio of the medians (the target, issue 21: at most 1.2).  The GC stays on; each call starts
from a collected heap (``gc.collect()`` before it, outside the timing), since a decode's time with
the GC on depends on the garbage the collector walks, which earlier calls leave.  The file is read
once whatever the way (``godot_formats.saves.reading``): the extra cost of detection is the other dialects
failing at their first record (a rarer sibling version is told apart by the decoder's marks, with
no re-encoding: docs/detect.md).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import godot_formats as gf
from godot_formats.layers.framing import join_frames


def _records(dialect: str, n: int) -> bytes:
    values = [{"id": i, "name": f"player {i}", "pos": gf.Vector3(i, 2, 3), "tags": ["a", "b"], "hp": 97.5,
               "gold": 10**10 + i} for i in range(n)]
    return join_frames([gf.dumps(v, dialect) for v in values])


def _one_big(dialect: str, n: int) -> bytes:
    value = {"players": [{"id": i, "name": f"player {i}", "pos": gf.Vector3(i, 2, 3), "tags": ["a", "b"]}
                         for i in range(n * 5)]}
    return join_frames([gf.dumps(value, dialect)])


def _compressed(dialect: str, n: int) -> bytes:
    from godot_formats.layers.compression import ZSTD, GcpfInfo, write_gcpf
    return write_gcpf(_records(dialect, n), GcpfInfo(mode=ZSTD))


SAVES = {
    "store_var records": _records,
    "one large record": _one_big,
    "records, open_compressed Zstd": _compressed,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--records", type=int, default=20000)
    args = parser.parse_args()
    print(f"gf.open, GC on, median of {args.runs}; backend {gf.backend}; load {os.getloadavg()[0]:.2f}")
    print(f"{'save':<32} {'dialect':<8} {'MB':>6} {'given ms (min)':>15} {'auto ms (min)':>15} "
          f"{'auto/given':>10} {'(min)':>6}")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for label, make in SAVES.items():
            for dialect in ("godot3", "godot4"):
                path = Path(tmp) / "save.sav"
                path.write_bytes(make(dialect, args.records))
                times: dict[str, list[float]] = {"given": [], "auto": []}
                for _ in range(args.runs):
                    for way, given in (("given", dialect), ("auto", None)):
                        gc.collect()
                        t = time.perf_counter()
                        sf = gf.open(path, dialect=given)
                        times[way].append(time.perf_counter() - t)
                        assert sf.dialect.name == dialect, (label, way, sf.dialect.name)
                        del sf  # the next call starts without this one's values on the heap
                given_ms, auto_ms = (statistics.median(times[w]) * 1e3 for w in ("given", "auto"))
                given_min, auto_min = (min(times[w]) * 1e3 for w in ("given", "auto"))
                worst = max(worst, auto_ms / given_ms)
                print(f"{label:<32} {dialect:<8} {path.stat().st_size / 1e6:6.1f} {given_ms:7.1f} ({given_min:5.1f}) "
                      f"{auto_ms:7.1f} ({auto_min:5.1f}) {auto_ms / given_ms:10.2f} {auto_min / given_min:6.2f}")
    print(f"worst auto/given: {worst:.2f} (target: at most 1.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
