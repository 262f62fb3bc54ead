"""What every test shares: the tiers (markers given by folder), the Hypothesis profiles, the
command line run in this process, the engine fixtures and byte comparison with masked NodePath
padding.

The tiers (CONTRIBUTING.md): ``bash scripts/test --quick`` runs what is neither ``slow`` nor
``engine`` under the ``dev`` profile; ``bash scripts/test`` runs everything under ``ci``, then the
``backend`` tests again under the pure-Python reference.  A folder gives its tests their markers
(:data:`FOLDER_MARKS`); ``slow`` is given test by test, where one costs seconds.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

import godot_formats as gf
from godot_formats import tool
from godot_formats.core.codec import Encoder

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS.parent / "fixtures"

#: Hypothesis profiles, chosen by scripts/test (``GODOT_FORMATS_HYPOTHESIS``): ``ci`` is the full
#: budget, derandomized so that a run passes every time or never; ``dev`` is the inner loop's.
CI_EXAMPLES = 100
_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile("ci", max_examples=CI_EXAMPLES, deadline=None, derandomize=True, database=None,
                          suppress_health_check=_HEALTH)
settings.register_profile("dev", max_examples=10, deadline=None, suppress_health_check=_HEALTH)
settings.load_profile(os.environ.get("GODOT_FORMATS_HYPOTHESIS", "ci"))


def budget(n: int) -> int:
    """``n`` examples under the ``ci`` profile, scaled with the profile loaded: for a test that needs
    more than a property test's share (a fuzzer) or runs once per parameter (a share each)."""
    return max(1, round(n * settings.default.max_examples / CI_EXAMPLES))


#: The markers a folder gives every test in it: ``backend`` where the outcome depends on the
#: codec behind it (the pure-Python reference runs those again), ``cli`` for the command line,
#: ``engine`` where a real engine is launched.
FOLDER_MARKS: dict[str, tuple[str, ...]] = {
    "core": ("backend",), "saves": ("backend",), "streams": ("backend",), "views": ("backend",),
    "resources": ("backend",), "hostile": ("backend",), "cli": ("cli",), "batch": ("cli",),
    "conformance": ("cli",), "engine": ("engine",), "project": (), "documents": ("backend",),
    "configfile": ("backend",),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--sample", type=int, default=0, metavar="N",
                     help="run at most N cases of each parametrized test (an even sample: the first, the last and "
                          "those between); the quick tier's choice (scripts/test --quick): every test still runs")


def _sampled(items: list[pytest.Item], most: int) -> tuple[list[pytest.Item], list[pytest.Item]]:
    """Each test function's cases cut to ``most``, evenly spread: (kept, left out)."""
    cases: dict[tuple[str, str], list[pytest.Item]] = {}
    for item in items:
        cases.setdefault((str(item.fspath), getattr(item, "originalname", item.name)), []).append(item)
    keep: set[int] = set()
    for group in cases.values():
        step = max(1, len(group) / most) if most else 1
        keep.update(id(group[min(len(group) - 1, round(i * step))]) for i in range(min(most, len(group))))
        keep.add(id(group[-1]))
    return [i for i in items if id(i) in keep], [i for i in items if id(i) not in keep]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    most = config.getoption("--sample")
    if most > 0:
        items[:], dropped = _sampled(items, most)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
    for item in items:
        path = Path(str(item.fspath))
        for mark in FOLDER_MARKS.get(path.parent.name, ()):
            item.add_marker(mark)
        if path.parent.name == "engine":
            # one worker takes a whole engine module (scripts/test runs xdist with --dist loadgroup),
            # so a module's engine run, made once for all its cases, is made once in all
            item.add_marker(pytest.mark.xdist_group(path.stem))
# The component folders (core/, saves/ ... engine/) hold test modules with unique names, which
# import each other's helpers by name (``from test_batch import make_inputs``), as the shared
# helpers of this folder (strategies, oracles, measure) are imported: every folder is on the path.
for _folder in sorted(p for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))


def run_main(*args: Any, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``godot-formats ARGS`` in this process (:func:`cli`), its output as text: (exit status, stdout,
    stderr)."""
    p = cli(*args, env=env)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


class _Streams:
    """Standard input, output and error of one in-process command: text over bytes, as a process has
    them (``sys.stdout.buffer`` for bytes), written through so that text and bytes keep their order."""

    def __init__(self, stdin: bytes) -> None:
        self.input = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        self.out_bytes, self.err_bytes = io.BytesIO(), io.BytesIO()
        self.output = io.TextIOWrapper(self.out_bytes, encoding="utf-8", write_through=True)
        self.error = io.TextIOWrapper(self.err_bytes, encoding="utf-8", errors="backslashreplace", write_through=True)


def cli(*args: Any, stdin: bytes | None = None, cwd: Path | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``godot-formats ARGS`` run by ``main`` in this process, with the standard streams, the working
    folder and ``env`` a process would have: what ``subprocess.run(..., capture_output=True)`` of
    the console script returns, for a fraction of its cost (a process pays the import, about half a
    second, every call).  Tests of what only a process has (signals, a closed pipe, the exit of the
    interpreter) start one instead, and say so."""
    streams = _Streams(stdin or b"")
    saved = sys.stdin, sys.stdout, sys.stderr
    old_env = {k: os.environ.get(k) for k in (env or {})}
    old_cwd = os.getcwd()
    try:
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = streams.input, streams.output, streams.error
        try:
            status = tool.main([str(a) for a in args])
        except SystemExit as e:  # argparse: usage errors, --help
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        os.chdir(old_cwd)
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return subprocess.CompletedProcess(["godot-formats", *map(str, args)], status,
                                       streams.out_bytes.getvalue(), streams.err_bytes.getvalue())


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
