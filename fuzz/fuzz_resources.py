#!/usr/bin/env python3
"""Coverage-guided fuzzing of the resource-file readers with atheris (libFuzzer for Python).

``fuzz_decode.py`` fuzzes the Variant decoder; this target fuzzes ``godot_formats.resources``:
``.res`` (RSRC), compressed ``.res`` (RSCC) and, once the text reader is in, ``.tres``.  For
every input it checks:

* only :class:`~godot_formats.GodotFormatsError` (a ``ValueError``) comes out of
  ``open_resource``; nothing else, no hang, no memory blow-up (the address space is limited to
  ``ADDRESS_SPACE`` and every input to ``HARD_SECONDS`` of CPU time);
* ``scan`` of what was read raises nothing, and ``explain`` lists it whole (no error);
* what was read, written as ``.tres`` (or refused with the library's error), reads back;
* what was read writes back: ``rf.to_bytes(allow_scripts=True)`` gives bytes or the library's
  error;
* the written bytes open again (any error is a finding: the writer wrote what the reader
  refuses), ``scan`` raises nothing on them, and writing them again gives the same bytes
  (writing is idempotent);
* no input of the fuzzing size (``MAX_SEED_BYTES``) takes more than ``SLOW_SECONDS`` of CPU time
  (timed three times, the machine is shared); a slow input is saved as
  ``crashes_resources/slow-*``.

Replaying saved files (``fuzz_resources.py FILE...``) runs the package uninstrumented, so the
time bounds hold the library to its own speed.

Mutating an RSCC file seldom gives blocks that still decompress, so an input that starts with
``WRAP`` is checked a second way: byte 4 picks a compression mode (FastLZ, Deflate, Zstd,
Gzip) and the rest is the plaintext, which the target compresses into an RSCC file and checks
as above.  The seeds hold the plaintext of every RSCC fixture in that form.

While ``godot_formats.resources.text.read_text`` raises NotImplementedError (the text reader has
not landed), text inputs (``[gd_resource``) are skipped: only the binary forms are fuzzed.

    python3 fuzz/fuzz_resources.py --write-seeds         # fixtures and variants -> fuzz/corpus_resources/
    GF_FUZZ_TARGET=resources fuzz/run.sh 1500 /tmp/gf-rfuzz
    python3 fuzz/fuzz_resources.py fuzz/crashes_resources/*          # replay (uninstrumented)
"""

from __future__ import annotations

import hashlib
import os
import resource
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CRASHES = HERE / "crashes_resources"
SLOW_SECONDS = 1.0        # CPU seconds for one input, all checks
HARD_SECONDS = 8          # CPU seconds before the input is stopped where it is (a hang)
ADDRESS_SPACE = 1 << 30   # RLIMIT_AS: a memory blow-up is a MemoryError, a finding
MAX_SEED_BYTES = 16384
WRAP = b"WRAP"
STRICT = os.environ.get("GF_FUZZ_STRICT") == "1"


class Hang(BaseException):
    """Raised by the CPU-time alarm inside the library: the traceback shows where it was (a
    BaseException, so that no ``except Exception`` in the library swallows it)."""


class Finding(AssertionError):
    """A broken check (not an exception that escaped the library): ``stage`` says which."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(f"{stage}: {message}")
        self.stage = stage


#: Findings already reported and not fixed yet, so that a long run looks for new ones instead
#: of finding the same one again: name -> predicate on (stage, exception).  Stages: "open",
#: "scan", "write", "reopen", "rescan", "rewrite", "idempotent".  Each needs its input in
#: crashes_resources/ and a line in fuzz/README.md.  GF_FUZZ_STRICT=1 ignores them.  Stages also
#: "explain", "as-text", "text-reopen".
#: Empty: the five findings so far are fixed in cbf5520 (fuzz/README.md).  The form of an entry that
#: was here until then:  "named-ids-flag-ignored": lambda stage, e: stage == "reopen" and
#: "no internal resource local://" in str(e)
KNOWN_FINDINGS: dict[str, Callable[[str, BaseException], bool]] = {}
KNOWN_HITS: dict[str, int] = {}
STATS = {"inputs": 0, "skipped_text": 0, "opened": 0, "write_refused": 0, "written": 0, "byte_exact": 0,
         "wrapped": 0, "as_text": 0, "text_refused": 0}
#: The library's errors out of writing something it read (tolerated by the contract, but
#: worth a look): first message of each kind -> count.
WRITE_REFUSALS: dict[str, int] = {}


#: Replaying files (no corpus folder among the arguments): the package is not instrumented, so
#: that the time bounds judge the library at its own speed on a large saved input (instrumented
#: code is about 20 times slower), and a slow input fails the replay instead of being saved.
REPLAY = any(Path(a).is_file() for a in sys.argv[1:] if not a.startswith("-")) and not any(
    Path(a).is_dir() for a in sys.argv[1:] if not a.startswith("-"))


def _import_package() -> Any:
    try:
        import atheris  # type: ignore[import-untyped]
        if REPLAY:
            raise ImportError
    except ImportError:  # replaying without atheris still works
        import godot_formats
        return godot_formats
    with atheris.instrument_imports(include=["godot_formats"]):
        import godot_formats
        import godot_formats.layers.compression  # noqa: F401
        import godot_formats.resources  # noqa: F401
    return godot_formats


gf = _import_package()
from godot_formats.core.errors import GodotFormatsError  # noqa: E402
from godot_formats.layers.compression import RSCC_MAGIC, GcpfInfo, write_gcpf  # noqa: E402
from godot_formats.resources import open_resource, resource_form, scan  # noqa: E402
from godot_formats.resources import text as _text  # noqa: E402
from godot_formats.resources.explain import explain_binary, explain_text  # noqa: E402


def _text_reader_works() -> bool:
    try:
        _text.read_text(b'[gd_resource type="Resource" format=3]\n\n[resource]\n')
    except NotImplementedError:
        return False
    except Exception:  # noqa: BLE001 - it exists; whatever it thinks of this is fuzzed later
        return True
    return True


TEXT = _text_reader_works()


def _known(stage: str, error: BaseException) -> bool:
    if STRICT:
        return False
    for name, predicate in KNOWN_FINDINGS.items():
        try:
            hit = predicate(stage, error)
        except Exception:  # noqa: BLE001
            hit = False
        if hit:
            KNOWN_HITS[name] = KNOWN_HITS.get(name, 0) + 1
            return True
    return False


def _stage(stage: str, call: Callable[[], Any], *, library_error_is_a_finding: bool) -> Any:
    """``call()``; an escaping non-library exception (or, if asked, a library one) is re-raised
    with the stage named, unless it is a known finding (then ``_SKIP``)."""
    try:
        return call()
    except GodotFormatsError as e:
        if not library_error_is_a_finding:
            raise
        if _known(stage, e):
            return _SKIP
        raise Finding(stage, f"{type(e).__name__}: {e}") from e
    except Hang:
        raise
    except Exception as e:
        if _known(stage, e):
            return _SKIP
        e.add_note(f"fuzz_resources stage: {stage}")
        raise


_SKIP = object()


def check_file(data: bytes) -> None:
    """The contract on one file's bytes."""
    try:
        rf = _stage("open", lambda: open_resource(data), library_error_is_a_finding=False)
    except GodotFormatsError:
        return
    if rf is _SKIP:
        return
    STATS["opened"] += 1
    if _stage("scan", lambda: scan(rf), library_error_is_a_finding=True) is _SKIP:
        return
    if _stage("explain", lambda: _explain(data), library_error_is_a_finding=True) is _SKIP:
        return
    _as_text(rf)
    try:
        first = _stage("write", lambda: rf.to_bytes(allow_scripts=True), library_error_is_a_finding=False)
    except GodotFormatsError as e:
        STATS["write_refused"] += 1
        kind = f"{type(e).__name__}: {str(e)[:70]}"
        WRITE_REFUSALS[kind] = WRITE_REFUSALS.get(kind, 0) + 1
        if WRITE_REFUSALS[kind] == 1:
            print(f"\n== note: a file that was read does not write back: {kind}", file=sys.stderr, flush=True)
        return
    if first is _SKIP:
        return
    assert isinstance(first, bytes), f"to_bytes gave a {type(first).__name__}"
    STATS["written"] += 1
    STATS["byte_exact"] += first == data
    again = _stage("reopen", lambda: open_resource(first), library_error_is_a_finding=True)
    if again is _SKIP:
        return
    if _stage("rescan", lambda: scan(again), library_error_is_a_finding=True) is _SKIP:
        return
    second = _stage("rewrite", lambda: again.to_bytes(allow_scripts=True), library_error_is_a_finding=True)
    if second is _SKIP:
        return
    if second != first:
        at = next((i for i, (a, b) in enumerate(zip(first, second)) if a != b), min(len(first), len(second)))
        finding = Finding("idempotent", f"writing is not idempotent: {len(first)} then {len(second)} bytes, "
                                        f"first difference at byte {at}\n{first.hex()}\n{second.hex()}")
        if not _known("idempotent", finding):
            raise finding


def _explain(data: bytes) -> None:
    """``explain`` of a file that opens lists it whole, with no error (it is the same reader)."""
    if resource_form(data) == "text":
        for _ in explain_text(data):
            pass
        return
    _, _, error = explain_binary(data)
    if error is not None:
        raise Finding("explain", f"the file opens, but explain stops: {error}")


def _as_text(rf: Any) -> None:
    """A file written as ``.tres`` (the library's error is fine: not every file has a text form)
    reads back as text."""
    try:
        text = _stage("as-text", lambda: rf.to_bytes(format="text", allow_scripts=True),
                      library_error_is_a_finding=False)
    except GodotFormatsError:
        STATS["text_refused"] += 1
        return
    if text is _SKIP:
        return
    STATS["as_text"] += 1
    _stage("text-reopen", lambda: open_resource(text), library_error_is_a_finding=True)


def wrapped(data: bytes) -> bytes | None:
    """``WRAP`` + mode byte + plaintext -> an RSCC file of that plaintext (None: not that form)."""
    if not data.startswith(WRAP) or len(data) < 5:
        return None
    mode = data[4] & 3  # FastLZ, Deflate, Zstd, Gzip: the modes the engines write
    return write_gcpf(data[5:], GcpfInfo(mode=mode, magic=RSCC_MAGIC))


def check(data: bytes, _retimed: bool = False) -> None:
    """The fuzz target: raises (a Finding, Hang, or whatever leaked) on a finding."""
    started = time.process_time()
    STATS["inputs"] += 1
    if not TEXT and resource_form(data) == "text":
        STATS["skipped_text"] += 1
    else:
        check_file(data)
    rscc = wrapped(data)
    if rscc is not None:
        STATS["wrapped"] += 1
        check_file(rscc)
    elapsed = time.process_time() - started
    # Inputs over the fuzzing -max_len (saved reproducers, replayed) get the hard bound only.
    if elapsed > SLOW_SECONDS and not _retimed and len(data) <= MAX_SEED_BYTES:
        elapsed = min([elapsed] + [_timed(data) for _ in range(2)])
        if elapsed > SLOW_SECONDS:
            if REPLAY:
                raise Finding("slow", f"{elapsed:.2f} CPU s for {len(data)} bytes")
            _save("slow", data, f"{elapsed:.2f} CPU s for {len(data)} bytes")


def _timed(data: bytes) -> float:
    started = time.process_time()
    check(data, _retimed=True)
    return time.process_time() - started


def _save(kind: str, data: bytes, why: str) -> None:
    CRASHES.mkdir(exist_ok=True)
    out = CRASHES / f"{kind}-{hashlib.sha1(data).hexdigest()}"
    if not out.exists():
        out.write_bytes(data)
        print(f"\n== {kind} input saved to {out}: {why}", file=sys.stderr, flush=True)


def _on_alarm(signum: int, frame: Any) -> None:
    raise Hang(f"over {HARD_SECONDS} CPU seconds on one input")


def _report() -> None:
    if STATS["inputs"] and STATS["inputs"] % 20000 == 0:
        print(f"\n== stats: {STATS} known={KNOWN_HITS} write refusals={len(WRITE_REFUSALS)}",
              file=sys.stderr, flush=True)


def test_one_input(data: bytes) -> None:
    signal.setitimer(signal.ITIMER_VIRTUAL, HARD_SECONDS)
    try:
        check(bytes(data))
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
    _report()


def limit_memory() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = ADDRESS_SPACE if hard == resource.RLIM_INFINITY else min(ADDRESS_SPACE, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    # CPU time, not wall time: others' load on the shared machine does not count.
    signal.signal(signal.SIGVTALRM, _on_alarm)


# --- seeds --------------------------------------------------------------------------------------


def seed_files() -> list[bytes]:
    """Every .res and .tres under fixtures/resources, and the plaintext of each RSCC one (WRAP)."""
    from godot_formats.layers.compression import read_gcpf

    seeds: list[bytes] = []
    for path in sorted((ROOT / "fixtures" / "resources").rglob("*")):
        if path.suffix not in (".res", ".tres") or not path.is_file():
            continue
        data = path.read_bytes()
        if len(data) <= MAX_SEED_BYTES:
            seeds.append(data)
        if data[:4] == RSCC_MAGIC:
            plain, info = read_gcpf(data)
            seeds.append(WRAP + bytes([info.mode]) + plain)
    return seeds


def variant_seeds(files: list[bytes]) -> list[bytes]:
    """Each binary fixture written again by the library in the shapes the fixtures lack: every
    format version 3 to 6, both byte orders, 64-bit reals (``use_real64``), and as the plaintext
    of an RSCC file (``WRAP``).  What a version cannot hold is skipped."""
    from godot_formats.resources import read_binary

    out: list[bytes] = []
    for data in files:
        if data[:4] not in (b"RSRC", RSCC_MAGIC):
            continue
        for version in (3, 4, 5, 6):
            for big in (False, True):
                try:
                    out.append(read_binary(data).to_bytes(version=version, big_endian=big, compressed=False,
                                                          allow_scripts=True))
                except GodotFormatsError:
                    pass
        rf = read_binary(data)
        rf.header["use_real64"] = 1
        try:
            out.append(rf.to_bytes(compressed=False, allow_scripts=True))
        except GodotFormatsError:
            pass
    plain = [blob for blob in out if blob[:4] == b"RSRC"]
    out += [WRAP + bytes([2]) + blob[4:] for blob in plain[::7]]
    return [blob for blob in out if len(blob) <= MAX_SEED_BYTES]


def write_seeds(directory: Path) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    written = 0
    files = seed_files()
    for blob in files + variant_seeds(files):
        target = directory / hashlib.sha1(blob).hexdigest()
        if not target.exists():
            target.write_bytes(blob)
            written += 1
    return written


def main() -> None:
    if sys.argv[1:2] == ["--write-seeds"]:
        print(f"{write_seeds(HERE / 'corpus_resources')} seed(s) written to {HERE / 'corpus_resources'}")
        return
    import atheris

    limit_memory()
    print(f"fuzzing {gf.__file__}: resources ({'binary and text' if TEXT else 'binary only: read_text is not in yet'})",
          file=sys.stderr, flush=True)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
