"""Shared helpers: the engine fixtures and byte comparison with masked NodePath padding."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path
from typing import Any

import godot_formats as gf
from godot_formats import tool
from godot_formats.codec import Encoder

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def run_main(*args: Any, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``godot-formats ARGS`` in this process, with ``env`` set for the call: (exit status, stdout,
    stderr). The console script itself is tested in subprocesses by test_cli_dump/test_cli_convert."""
    out, err = io.StringIO(), io.StringIO()
    old = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = tool.main([str(a) for a in args])
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return status, out.getvalue(), err.getvalue()


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def engine_cases(engine: str, kind: str = "encode") -> list[dict[str, Any]]:
    return read_jsonl(FIXTURES / engine / f"{kind}.jsonl")


class _MarkedPadEncoder(Encoder):
    node_path_padding = b"\xff"


def node_path_pad_mask(value: Any, dialect: str, full_objects: bool) -> set[int]:
    """Offsets of NodePath name padding in our encoding of ``value``.

    The engines before 4.6.3 leave those bytes uninitialised (godot#44999), so
    they are the only bytes a comparison with engine output may ignore.  We
    find them by encoding twice with two different fillers.
    """
    d = gf.get_dialect(dialect)
    plain = Encoder(d, full_objects=full_objects).encode(value)
    marked = _MarkedPadEncoder(d, full_objects=full_objects).encode(value)
    return {i for i, (a, b) in enumerate(zip(plain, marked)) if a != b}


def assert_same_bytes(ours: bytes, engine: bytes, mask: set[int] = frozenset()) -> None:  # type: ignore[assignment]
    assert len(ours) == len(engine), (
        f"length {len(ours)} != engine {len(engine)}\nours   {ours.hex()}\nengine {engine.hex()}")
    diff = [i for i, (a, b) in enumerate(zip(ours, engine)) if a != b and i not in mask]
    assert not diff, f"bytes differ at {diff[:10]}\nours   {ours.hex()}\nengine {engine.hex()}"


#: GDScript (Godot 3) for engine tests that hand files to the engine as hex and take them back:
#: ``unhex(h)``, ``put(path, hex)`` (write a file) and ``hexfile(path)`` (read one as hex).
GD3_FILE_HELPERS = """func unhex(h):
	var out = PoolByteArray()
	var digits = "0123456789abcdef"
	for i in range(0, h.length(), 2):
		out.append(digits.find(h[i]) * 16 + digits.find(h[i + 1]))
	return out
func put(path, hex):
	var w = File.new()
	w.open(path, File.WRITE)
	w.store_buffer(unhex(hex))
	w.close()
func hexfile(p):
	var f = File.new()
	f.open(p, File.READ)
	var b = f.get_buffer(f.get_len())
	f.close()
	return b.hex_encode()
"""


def pytest_report_header() -> list[str]:
    """Which package and backend the run tests: Python started inside the clone imports the source
    tree, which is pure Python until its compiled core is built in place (README, Quick start)."""
    where = Path(gf.__file__).parent
    line = f"godot-formats {gf.__version__} from {where} (backend: {gf.backend})"
    if gf.backend == "python" and not any(where.joinpath("core").glob("_cdecode*")):
        line += "; the compiled core is not built in this tree: pip install -e . builds it in place"
    return [line]
