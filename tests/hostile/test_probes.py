"""Hostile probes, each in a process of its own under a memory cap: the outcome is a result or one of
the library's errors, never a crash, a ``MemoryError``, a hang, a process left behind, or code run.

The cap is on the address space (``RLIMIT_AS``): a probe that allocates what its input declares
instead of what it holds dies with ``MemoryError`` there, whatever the machine has. The hang guard
is only that: a bound far above any honest run, never a measure of speed (time and memory per byte
are measured by benchmarks/hostile.py, and the work is counted in
tests/hostile/test_untrusted_bytes.py)."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
from capped import run_capped

resource = pytest.importorskip("resource", reason="no resource limits on this system")

ROOT = Path(__file__).resolve().parents[2]
#: Address space a probe may use: the interpreter, the library and its compiled core take about
#: 150 MiB of it; the inputs are at most a few MiB.
MEMORY_CAP = 768 << 20
#: Seconds after which a probe counts as hung (each takes well under 10 s here).
HANG_GUARD = 300

#: What each probe's child runs: ``probe()`` returns a short account of its result, or raises.
PRELUDE = """
import json, os, struct, sys
sys.path[:0] = [{tests!r}, {benchmarks!r}]
import godot_formats as gf
u = struct.Struct("<I").pack
def gcpf(mode, block_size, total, blocks):
    sizes = b"".join(u(len(b)) for b in blocks)
    return b"GCPF" + u(mode) + u(block_size) + u(total) + sizes + b"".join(blocks) + b"GCPF"
"""
EPILOGUE = """
try:
    outcome = {"outcome": "result", "detail": str(probe())[:300]}
except gf.GodotFormatsError as e:
    outcome = {"outcome": "library error", "error": type(e).__name__, "detail": str(e)[:300], "length": len(str(e))}
except BaseException as e:
    outcome = {"outcome": "other", "error": type(e).__name__, "detail": str(e)[:300]}
print(json.dumps(outcome))
"""

PROBES: dict[str, str] = {
    # 1. the engine command and a file that carries code: refused before any engine is asked
    "engine decode --allow-objects of bytes that carry code": """
        import tempfile
        from godot_formats.tool import main
        from godot_formats.core.types import Object
        marker = os.path.join(tempfile.mkdtemp(), "ran")
        source = "extends Reference\\nfunc _init():\\n\\tOS.execute('touch', ['" + marker + "'], true)\\n"
        blob = gf.dumps(Object("Reference", {"script": Object("GDScript", {"script/source": source})}), "godot3",
                        full_objects=True)
        def probe():
            status = main(["engine", "decode", "--hex", blob.hex(), "--engine", "godot3", "--allow-objects"])
            assert not os.path.exists(marker)
            return status
    """,
    # 2. decompression bombs: a few bytes that declare a huge block
    "Brotli block declaring 256 MiB of zeros": """
        import brotli
        c = brotli.Compressor(quality=1)
        stream = b"".join(c.process(bytes(1 << 20)) for _ in range(256)) + c.finish()
        def probe():
            return gf.open(gcpf(4, 1 << 28, 1 << 28, [stream]))
    """,
    "Zstd block declaring 256 MiB of zeros": """
        import zstandard
        c = zstandard.ZstdCompressor(level=3).compressobj()
        stream = b"".join(c.compress(bytes(1 << 20)) for _ in range(256)) + c.flush()
        def probe():
            return gf.open(gcpf(2, 1 << 28, 1 << 28, [stream]))
    """,
    "1 MB FastLZ file of 4 KiB zero blocks": """
        from hostile import fastlz_bomb
        def probe():
            return gf.open(fastlz_bomb(1 << 20))
    """,
    # 3. many empty Zstd frames in one block
    "4 MB Zstd block of empty frames": """
        from hostile import empty_zstd_frames
        def probe():
            return gf.open(empty_zstd_frames(4 << 20))
    """,
    # 5. the caller's code inside an encode
    "a value whose own code encodes it again": """
        sys.setrecursionlimit(200)
        calls = [0]
        class Again(str):
            def encode(self, *args, **kwargs):
                calls[0] += 1
                gf.dumps([self], "godot4")
                return str.encode(self, *args, **kwargs)
        def probe():
            try:
                return gf.dumps([Again("x")], "godot4")
            finally:
                print("calls", calls[0], file=sys.stderr)
                assert calls[0] < 200, calls  # once per level of the caller's own recursion, not again
    """,
    "a list that grows while it is written": """
        inventory = [1, "x", 3]
        class Grows(str):
            def encode(self, *args, **kwargs):
                inventory.append("INJECTED")
                return str.encode(self, *args, **kwargs)
        inventory.insert(1, Grows("y"))
        def probe():
            return gf.dumps({"inv": inventory, "gold": 100}, "godot3")
    """,
    # 6. the conformance runner fed an answer of 100,000 "["
    "an adapter answer of 100,000 [": """
        import tempfile
        from godot_formats.conformance import cases
        from godot_formats.conformance.runner import run
        adapter = os.path.join(tempfile.mkdtemp(), "adapter.py")
        open(adapter, "w").write("import sys\\nfor line in sys.stdin:\\n    print('[' * 100000, flush=True)\\n")
        def probe():
            result = run([sys.executable, adapter], cases(["godot3"])[:3], timeout=30, start_timeout=30)
            return [v.reason[:40] for v in result.verdicts]
    """,
    # 7. an ECFG key of 4 MB: the message quotes a bounded prefix
    "a project settings file with a 4 MB key": """
        key = b"k" * (4 << 20)
        data = b"ECFG" + u(1) + u(len(key)) + key + u(4) + u(99)
        def probe():
            return gf.open(data)
    """,
    # 8. open an earlier probe's file
    "convert_with_report with 500 losses 300 levels deep": """
        value = []
        cur = value
        for _ in range(300):
            nxt = []
            cur.append(nxt)
            cur = nxt
        cur.extend(gf.Vector2i(i, 2) for i in range(500))
        blob = gf.dumps(value, "godot4")
        def probe():
            return len(gf.convert_with_report(blob, "godot4", "godot3", policy="lossy")[1])
    """,
    "repr of a TypedArray under 900 lists": """
        from godot_formats.core import types as t
        value = t.TypedArray(t.ContainerType("int"), [1])
        for _ in range(900):
            value = [value]
        def probe():
            return len(repr(value))
    """,
    "a 2 MB store_var file of Nil records": """
        from hostile import tiny_records
        def probe():
            return len(gf.open(tiny_records(2 << 20)).values)
    """,
}

#: What each probe must end in: a result, or a library error whose class is named.
EXPECTED: dict[str, tuple[str, str | None]] = {
    "engine decode --allow-objects of bytes that carry code": ("result", None),  # exit status 1, nothing run
    "Brotli block declaring 256 MiB of zeros": ("library error", "DecodeError"),  # over the budget, said at once
    "Zstd block declaring 256 MiB of zeros": ("library error", "DecodeError"),
    "1 MB FastLZ file of 4 KiB zero blocks": ("library error", "FramingError"),  # inflated within budget: zeros
    "4 MB Zstd block of empty frames": ("result", None),  # an empty save
    # The caller's own code recursing without end: its RecursionError goes through, once (the compiled
    # core used to fall back and run the caller's code again, 28,688 times at a limit of 60).
    "a value whose own code encodes it again": ("other", "RecursionError"),
    "a list that grows while it is written": ("library error", "EncodeError"),
    "an adapter answer of 100,000 [": ("result", None),
    "a project settings file with a 4 MB key": ("library error", "DecodeError"),
    "convert_with_report with 500 losses 300 levels deep": ("result", None),
    "repr of a TypedArray under 900 lists": ("result", None),
    "a 2 MB store_var file of Nil records": ("result", None),
}


def _session_members(sid: int) -> list[int]:
    """Processes still in the probe's session (it was started as the leader of its own)."""
    members = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2:].split()
            if len(fields) > 3 and int(fields[3]) == sid and fields[0] != b"Z":
                members.append(int(name))
    return members


def run_probe(body: str) -> dict[str, Any]:
    code = PRELUDE.format(tests=str(ROOT / "tests"), benchmarks=str(ROOT / "benchmarks")) + \
        textwrap.dedent(body) + EPILOGUE
    proc = run_capped(code, cap=MEMORY_CAP, guard=HANG_GUARD)
    out, err = proc.stdout, proc.stderr
    left = _session_members(proc.pid) if os.path.isdir("/proc") else []
    assert not left, f"processes left behind: {left}"
    assert proc.returncode == 0 and out.strip(), f"the probe's process ended with {proc.returncode}: {err[-2000:]}"
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PROBES))
def test_probe_in_its_own_process_under_a_memory_cap(name: str) -> None:
    if "brotli" in PROBES[name]:
        pytest.importorskip("brotli")
    outcome = run_probe(PROBES[name])
    expected, error = EXPECTED[name]
    assert outcome["outcome"] == expected, outcome
    if error is not None:
        assert outcome["error"] == error, outcome
    if name.startswith("engine decode"):
        assert outcome["detail"] == "1"  # refused
    if outcome["outcome"] == "library error":
        assert outcome["length"] < 2000, outcome  # a bounded message, whatever the input quoted


def test_the_cap_is_real() -> None:
    """A probe that allocates what its input declares dies under the cap (so the probes above prove it does not)."""
    outcome = run_probe("""
        def probe():
            return len(bytearray(1 << 30))
    """)
    assert outcome == {"outcome": "other", "error": "MemoryError", "detail": ""}


def test_configfile_text_stays_linear_in_time_and_memory() -> None:
    # An unterminated quote in a comment (which both engines load) made the string blanking of dialect
    # detection quadratic, and a long string took 150 bytes of memory per character (issue 41 review).
    code = (
        "from godot_formats.configfile import read_config\n"
        "read_config(b'[a]\\nv=Vector2(1, 2)\\n;' + b'\\\\\"' * 1_000_000 + b'\\n')\n"
        "read_config(b'[a]\\nv=Vector2(1, 2)\\nk=\"' + b'x' * 20_000_000 + b'\"\\n')\n"
        "print('ok')\n")
    ended = run_capped(code, cap=1 << 30, guard=120, what="a ConfigFile of hostile text")
    assert ended.returncode == 0 and "ok" in ended.stdout, ended.stderr[-2000:]
