"""Whole save files, against the Godot 3.2.3 engine: what a user's program calls, on the same files.

For each layer the engine writes -- a plain ``store_var`` file, ``File.open_compressed`` in FastLZ,
Deflate, Zstd and Gzip, and ``File.open_encrypted_with_pass`` -- the engine (``bench_files.gd``,
one engine process per layer) writes and reads the save (``bench_values.save_values``: 6.7 MB
plain) with ``File`` + ``store_var``/``get_var``, timing the whole open / ... / close inside
GDScript, and leaves its file.  Right after, on that same file, we time what a user calls:

* read: ``gf.open(path).values`` (the dialect detected) and ``gf.open(path, dialect="godot3").values``;
* write: ``sf.save(out)`` of a save opened from it with one value changed, so that every layer is
  written anew, as the engine's ``store_var`` does (a save written back unchanged returns the bytes
  it read: that is timed too, as ``unchanged save``, but it is not the engine's work);
* migrate: ``gf.open(path).save(out, dialect="godot4")``, against the engine reading the file and
  writing it again (it cannot write Godot 4).

Each of ours runs with the GC on, in the process that holds ``bench.py``'s live heap; before each
run ``gc.collect()`` runs and the output file is removed, outside the timed region.  Medians of
``--runs``; ratio = engine time / our time (above 1 we are faster).

Checks, outside the timings: the values we read equal the values built in Python (which
``bench_files.gd`` builds too); the plain file is our own encoding byte for byte; a compressed or
encrypted file is our layer's output for the same plaintext where the format is deterministic
(Zstd is not, across zstd versions); the engine reads back what ``sf.save`` wrote (a last engine
run stores the values it read in a plain file, compared with ours); the migrated file reads as
Godot 4 with the same values.
"""

from __future__ import annotations

import gc
import json
import re
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import bench_values

import godot_formats as gf
from godot_formats.core import types as t
from godot_formats.layers.compression import write_gcpf
from godot_formats.layers.encryption import write_gdec
from godot_formats.layers.framing import join_frames

__all__ = ["LAYERS", "PASSWORD", "run", "table", "set_consts", "row_from", "EngineFile"]

HERE = Path(__file__).resolve().parent
GD_SCRIPT = HERE / "bench_files.gd"

#: The layers, as bench_files.gd names them, and how ``gf.FileAccess`` writes each (--no-engine).
LAYERS = ("plain", "fastlz", "deflate", "zstd", "gzip", "encrypted")
COMPRESSION = {"fastlz": gf.FileAccess.COMPRESSION_FASTLZ, "deflate": gf.FileAccess.COMPRESSION_DEFLATE,
               "zstd": gf.FileAccess.COMPRESSION_ZSTD, "gzip": gf.FileAccess.COMPRESSION_GZIP}
LABELS = {"plain": "plain store_var", "fastlz": "open_compressed FastLZ", "deflate": "open_compressed Deflate",
          "zstd": "open_compressed Zstd", "gzip": "open_compressed Gzip",
          "encrypted": "open_encrypted_with_pass"}
PASSWORD = "bench-password"
DIALECT = "godot3"

#: What is timed on our side, and its engine counterpart (None: the engine has none).
OPS = (("open", "read"), ("open_given", "read"), ("save", "write"), ("save_unchanged", None),
       ("migrate", "migrate"))


def set_consts(text: str, settings: dict[str, str], what: str) -> str:
    """A GDScript with its ``const NAME = ...`` lines set (each must exist once)."""
    for const, value in settings.items():
        text, n = re.subn(rf"^const {const} = [^\n#]*", f"const {const} = {value} ", text, count=1, flags=re.M)
        if n != 1:
            raise RuntimeError(f"{what} has no 'const {const} =' line")
    return text


def _kwargs(layer: str) -> dict[str, Any]:
    return {"password": PASSWORD} if layer == "encrypted" else {}


# ---------------------------------------------------------------------------------------------
# the engine side


@dataclass
class EngineFile:
    """One layer through bench_files.gd: seconds per write, read and migrate, and its file."""

    version: str
    size: int
    count: int
    write: list[float]
    read: list[float]
    migrate: list[float]

    def joined(self, more: EngineFile) -> EngineFile:
        """These runs and ``more``'s, of the same layer and values."""
        if (more.size, more.count) != (self.size, self.count):
            raise RuntimeError("the engine's second run of a layer wrote another file")
        return EngineFile(self.version, self.size, self.count, self.write + more.write, self.read + more.read,
                          self.migrate + more.migrate)


def _script(settings: dict[str, str]) -> str:
    return set_consts(GD_SCRIPT.read_text(encoding="utf-8"), settings, "bench_files.gd")


def run_engine_layer(runs: int, divisor: int, layer: str, out_dir: Path) -> EngineFile:
    """Time one layer in Godot 3; its last written file stays in ``out_dir`` as ``<layer>.sav``."""
    from godot_formats.oracle import godot3_run
    script = _script({"RUNS": str(runs), "DIVISOR": str(divisor), "OUT_DIR": json.dumps(str(out_dir)),
                      "LAYER": json.dumps(layer), "MODE": '"time"', "PASSWORD": json.dumps(PASSWORD)})
    out = godot3_run(script, timeout=3600)
    version = "?"
    for line in out.splitlines():
        parts = line.split()
        if line.startswith("@@ENGINE "):
            version = line[len("@@ENGINE "):].strip()
        elif parts[:2] == ["@@FILE", layer] and len(parts) == 7:
            w, r, m = ([int(x) / 1e6 for x in p.split(",")] for p in parts[4:7])
            return EngineFile(version, int(parts[2]), int(parts[3]), w, r, m)
    raise RuntimeError(f"the engine reported nothing for the {layer} file; its output:\n{out[-4000:]}")


def run_engine_verify(out_dir: Path) -> dict[str, int]:
    """The engine reads each ``ours_<layer>.sav`` and stores its values plain in ``verify_<layer>.sav``."""
    from godot_formats.oracle import godot3_run
    out = godot3_run(_script({"OUT_DIR": json.dumps(str(out_dir)), "MODE": '"verify"',
                              "PASSWORD": json.dumps(PASSWORD)}), timeout=1800)
    counts = {}
    for line in out.splitlines():
        parts = line.split()
        if parts[:1] == ["@@VERIFY"] and len(parts) == 3:
            counts[parts[1]] = int(parts[2])
    return counts


def write_ours(path: Path, layer: str, values: list[Any]) -> None:
    """The save written by the library, as the engine would write it (--no-engine: no engine file)."""
    kwargs: dict[str, Any] = dict(_kwargs(layer), compression=COMPRESSION.get(layer))
    with gf.FileAccess.open(path, "w", dialect=DIALECT, **kwargs) as f:
        for v in values:
            f.store_var(v)


# ---------------------------------------------------------------------------------------------
# our side


def timed(fn: Callable[[int], Any], runs: int, before: Callable[[int], None] | None = None) -> list[float]:
    """Seconds per call of ``fn(run)``, GC on; ``before(run)``, a collection and dropping the
    result happen outside the timed region.  One untimed call comes first: the first read of a
    6.65 MB save in a process grows its heap from the system (page faults: 30-50 ms more, measured
    by timing the layers in another order), which a long-running program has done already, and
    which fell on whichever layer was timed first."""
    times = []
    for run_no in range(-1, runs):
        if before is not None:
            before(max(run_no, 0))
        gc.collect()
        t0 = time.perf_counter()
        result = fn(max(run_no, 0))
        t1 = time.perf_counter()
        del result
        if run_no >= 0:
            times.append(t1 - t0)
    return times


def _remove(path: Path) -> Callable[[int], None]:
    def before(_: int) -> None:
        path.unlink(missing_ok=True)
    return before


def _deterministic_bytes(layer: str, sf: gf.SaveFile, plaintext: bytes, engine_file: bytes) -> str:
    """Whether our layer writes the engine's bytes for the same plaintext ("yes", or why not)."""
    if layer == "plain":
        ours = plaintext
    elif layer == "encrypted":
        ours = write_gdec(plaintext, sf.encryption, password=PASSWORD)
    else:
        ours = write_gcpf(plaintext, sf.compression)
    if ours == engine_file:
        return "yes"
    return "differs (another zstd version)" if layer == "zstd" else "NO"


def time_ours(path: Path, layer: str, runs: int, expected: list[Any], work: Path) -> dict[str, Any]:
    """Our side of one layer on ``path``: times (seconds, every run) and the checks."""
    kw = _kwargs(layer)
    plaintext = join_frames([gf.dumps(v, DIALECT) for v in expected])
    out, migrated = work / f"ours_{layer}.sav", work / f"ours_{layer}.godot4.sav"
    first = gf.open(path, **kw)  # untimed warm-up, as for the codec rows
    checks = {"values": "yes" if first.values == expected else "NO",
              "same_bytes": _deterministic_bytes(layer, first, plaintext, path.read_bytes())}
    given = gf.open(path, dialect=DIALECT, **kw)
    checks["values"] = checks["values"] if given.values == expected else "NO"
    del first
    times = {"open": timed(lambda _: gf.open(path, **kw).values, runs),
             "open_given": timed(lambda _: gf.open(path, dialect=DIALECT, **kw).values, runs),
             "save_unchanged": timed(lambda _: given.save(out), runs, _remove(out))}
    checks["unchanged_same_bytes"] = "yes" if out.read_bytes() == path.read_bytes() else "NO"

    def change(run_no: int) -> None:
        out.unlink(missing_ok=True)
        given.values[-1]["hp"] = 1.5 + run_no  # float32-exact; the engine wrote 0.75

    times["save"] = timed(lambda _: given.save(out), runs, change)
    times["migrate"] = timed(lambda _: gf.open(path, **kw).save(migrated, dialect="godot4"), runs, _remove(migrated))
    back = gf.open(migrated, **kw)
    checks["migrated"] = "yes" if back.dialect.name == "godot4" and back.values == expected else "NO"
    if layer == "plain":
        times.update(floor_times(expected, runs))
    return {"times": times, "checks": checks,
            "saved_plain": join_frames([gf.dumps(v, DIALECT) for v in given.values])}


def _plain(value: Any) -> Any:
    """``value`` with each vector and Color as a list of its components (what msgspec can write)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return list(value) if isinstance(value, t.Components) else value


def floor_times(expected: list[Any], runs: int) -> dict[str, list[float]]:
    """The objects' own cost: the same values made by CPython's C unpickler (``pickle.loads``) and by
    msgspec's msgpack decoder (vectors as lists), in this process, GC on, from bytes in memory (no
    file, no layer).  A reader that returns these Python objects cannot take much less: it is the
    floor under every read and migration row, and the engine builds no Python objects at all."""
    import pickle

    data = pickle.dumps(expected, protocol=5)
    times = {"floor_pickle": timed(lambda _: pickle.loads(data), runs)}
    try:
        import msgspec  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        return times
    packed, decoder = msgspec.msgpack.encode(_plain(expected)), msgspec.msgpack.Decoder()
    times["floor_msgspec"] = timed(lambda _: decoder.decode(packed), runs)
    return times


# ---------------------------------------------------------------------------------------------
# rows


def _median_ms(times: list[float] | None) -> float | None:
    return None if not times else statistics.median(times) * 1e3


def row_from(layer: str, size: int, engine: EngineFile | None, ours: dict[str, Any]) -> dict[str, Any]:
    """One layer's row: medians in ms, every run, and engine time / our time per operation."""
    row: dict[str, Any] = {"layer": layer, "label": LABELS[layer], "size": size, **ours["checks"]}
    for op, engine_op in OPS:
        ms = _median_ms(ours["times"][op])
        row[f"ours_{op}_ms"] = ms
        row[f"ours_{op}_runs_ms"] = [x * 1e3 for x in ours["times"][op]]
        if engine_op is None:
            continue
        engine_runs = getattr(engine, engine_op) if engine is not None else None
        row[f"engine_{engine_op}_ms"] = _median_ms(engine_runs)
        row[f"engine_{engine_op}_runs_ms"] = [x * 1e3 for x in engine_runs or []]
        engine_ms = row[f"engine_{engine_op}_ms"]
        row[f"{op}_ratio"] = engine_ms / ms if engine_ms is not None and ms else None
    for floor in ("floor_pickle", "floor_msgspec"):
        if floor in ours["times"]:
            row[f"{floor}_ms"] = _median_ms(ours["times"][floor])
    return row


def _verify(rows: list[dict[str, Any]], saved: dict[str, bytes], work: Path, say: Callable[[str], None]) -> None:
    """The engine reads what we saved, one engine run for every layer; each row says whether it read our values."""
    say("files: Godot 3 reads what we saved...")
    counts = run_engine_verify(work)
    for row in rows:
        layer = row["layer"]
        verified = work / f"verify_{layer}.sav"
        row["engine_reads_ours"] = ("yes" if layer in counts and verified.exists()
                                    and verified.read_bytes() == saved[layer] else "NO")


def split_runs(runs: int) -> tuple[int, int]:
    """The engine's runs before ours and after (bench.py splits its workloads' and message's runs so too):
    this shared machine's speed moves over seconds, and both medians must span the same stretch."""
    before = (runs + 1) // 2
    return before, runs - before


def run(runs: int, divisor: int, use_engine: bool, say: Callable[[str], None],
        layers: tuple[str, ...] = LAYERS) -> tuple[list[dict[str, Any]], str | None]:
    """Every layer, the engine and we in turns (two engine processes per layer, half its runs before
    ours and the rest after); the rows and the engine's version (None without it)."""
    expected = bench_values.save_values(divisor)
    rows, saved, version = [], {}, None
    with tempfile.TemporaryDirectory(prefix="godot-formats-files-") as tmp:
        work = Path(tmp)
        for layer in layers:
            path = work / f"{layer}.sav"
            engine = None
            before, after = split_runs(runs)
            if use_engine:
                say(f"files, {layer}: Godot 3 writes, reads and re-saves it...")
                engine = run_engine_layer(before, divisor, layer, work)
                version = engine.version
            else:
                write_ours(path, layer, expected)
            say(f"files, {layer}: {path.stat().st_size:,} bytes, ours...")
            ours = time_ours(path, layer, runs, expected, work)
            if engine is not None and after:
                say(f"files, {layer}: Godot 3 again (its other {after} run(s), after ours)...")
                again = work / "again"  # the file ours read stays as the engine wrote it first
                again.mkdir(exist_ok=True)
                engine = engine.joined(run_engine_layer(after, divisor, layer, again))
            saved[layer] = ours.pop("saved_plain")
            rows.append(row_from(layer, path.stat().st_size, engine, ours))
        if use_engine:
            _verify(rows, saved, work, say)
        else:
            for row in rows:
                row["engine_reads_ours"] = "not run"
    return rows, version


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _size(size: int) -> str:
    return f"{size / 1e6:.2f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"


def _r(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: per layer, the engine's median and ours for read, write and migrate, and the ratios."""
    head = ("| layer | file | engine read ms | `gf.open(p).values` ms | ratio | with dialect ms | ratio | "
            "engine write ms | `sf.save(out)` ms | ratio | engine read+write ms | migrate to godot4 ms | ratio |")
    lines = [head, "| --- | ---: |" + " ---: |" * 11]
    for r in rows:
        lines.append(
            f"| {r['label']} | {_size(r['size'])} | {_ms(r['engine_read_ms'])} | {_ms(r['ours_open_ms'])} | "
            f"{_r(r['open_ratio'])} | {_ms(r['ours_open_given_ms'])} | {_r(r['open_given_ratio'])} | "
            f"{_ms(r['engine_write_ms'])} | {_ms(r['ours_save_ms'])} | {_r(r['save_ratio'])} | "
            f"{_ms(r['engine_migrate_ms'])} | {_ms(r['ours_migrate_ms'])} | {_r(r['migrate_ratio'])} |")
    return "\n".join(lines + [floor_text(r) for r in rows if r.get("floor_pickle_ms")])


def floor_text(row: dict[str, Any]) -> str:
    """The floor line under the table: what making the same Python objects costs without reading anything."""
    engine, pickled, packed = row.get("engine_read_ms"), row["floor_pickle_ms"], row.get("floor_msgspec_ms")
    text = (f"\nthe objects' own cost ({_size(row['size'])} save's values, GC on, same heap, from bytes in memory): "
            f"pickle.loads {_ms(pickled)} ms")
    if packed is not None:
        text += f", msgspec {_ms(packed)} ms"
    if engine is not None:
        best = min(x for x in (pickled, packed) if x is not None)
        text += f"; a read as fast as the faster of these would be {engine / best:.2f} x the engine's"
    return text


def check_table(rows: list[dict[str, Any]]) -> str:
    """Markdown: what was checked per layer, and the unchanged save (the bytes read, given back)."""
    head = ("| layer | values read = values written | our layer = engine's bytes | engine reads our save | "
            "migrated reads as godot4 | unchanged save ms (same bytes) |")
    lines = [head, "| --- | --- | --- | --- | --- | ---: |"]
    for r in rows:
        lines.append(f"| {r['label']} | {r['values']} | {r['same_bytes']} | {r['engine_reads_ours']} | "
                     f"{r['migrated']} | {_ms(r['ours_save_unchanged_ms'])} ({r['unchanged_same_bytes']}) |")
    return "\n".join(lines)


def all_ok(rows: list[dict[str, Any]]) -> bool:
    """Whether every check passed (a differing Zstd stream and an unrun engine check are not failures)."""
    return all(r["values"] == "yes" and r["same_bytes"] != "NO" and r["engine_reads_ours"] != "NO"
               and r["migrated"] == "yes" and r["unchanged_same_bytes"] == "yes" for r in rows)
