"""The Godot 3 oracle: Godot 3.2.3 (Debian's ``godot3-server``) run on generated scripts.

Every call writes one ``extends SceneTree`` script, ``res://run.gd``, into a throwaway
directory (also the engine's HOME and XDG directories, so nothing is written elsewhere) and
runs ``godot3-server --no-window -s run.gd`` there. The script is the helpers of
``godot3.gd`` (package data), the catalog's prelude, one ``func v_N()`` per encode case and
an ``_init()`` that runs the cases and quits. For each case it prints, on stderr, which is
unbuffered so the engine's own ``ERROR:`` lines land inside the right case::

    @@CASE i / [@@DECODED] / @@RESULT i typeof text-hex hex [hex_full_objects] / @@END i

A case that kills the engine (bytes2var of 27,000 nested arrays: SIGSEGV) is blamed and the
cases after it run again in a new engine process; when the script does not compile at all,
the cases run one by one so that the bad one is found. One engine start costs about 0.06 s.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..core.errors import OracleError
from ._process import run, tail

#: Variant.Type names of Godot 3, by type id (what the records call ``type_name``).
TYPE_NAMES = ("NIL", "BOOL", "INT", "REAL", "STRING", "VECTOR2", "RECT2", "VECTOR3",
              "TRANSFORM2D", "PLANE", "QUAT", "AABB", "BASIS", "TRANSFORM", "COLOR",
              "NODE_PATH", "_RID", "OBJECT", "DICTIONARY", "ARRAY", "POOL_BYTE_ARRAY",
              "POOL_INT_ARRAY", "POOL_REAL_ARRAY", "POOL_STRING_ARRAY",
              "POOL_VECTOR2_ARRAY", "POOL_VECTOR3_ARRAY", "POOL_COLOR_ARRAY")

#: Default wall-clock limit for one call, in seconds.
TIMEOUT = 300.0

INSTALL_HINT = "bash scripts/install-oracles.sh, or apt-get install godot3-server"

Case = Mapping[str, Any]
Record = dict[str, Any]

_BANNER = re.compile(r"Godot Engine v3\.[^\n]*\n \n?")
_NOT_LOADED = re.compile(r"Parse Error:.*\n\s*At: res://run\.gd:|Can't load the script \"run\.gd\"")
# A runtime error inside _init() stops it before quit(): the engine then idles forever.
_INIT_ERROR = re.compile(r"^SCRIPT ERROR: _init: ")


def binary() -> str | None:
    """The engine to run: ``$GODOT3`` (a path or a name on PATH), else ``godot3-server``."""
    exe = os.environ.get("GODOT3")
    if exe:
        return shutil.which(exe) or (exe if os.access(exe, os.X_OK) else None)
    return shutil.which("godot3-server")


@functools.cache
def _version(exe: str) -> str | None:
    """What ``exe --version`` prints when it is a 3.x engine (it exits 255 even then)."""
    try:
        p = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = p.stdout.strip().splitlines()
    return out[-1] if out and out[-1].startswith("3.") else None


def available() -> str | None:
    """None when the Godot 3 oracle can run here, else why not and how to install it."""
    exe = binary()
    if exe is None:
        if os.environ.get("GODOT3"):
            return f"godot3 engine: GODOT3={os.environ['GODOT3']} is not an executable"
        return f"godot3 engine not installed: godot3-server is not on PATH (install: {INSTALL_HINT})"
    if _version(exe) is None:
        return f"godot3 engine: {exe} --version does not print a 3.x version (broken install?)"
    return None


def _require() -> str:
    reason = available()
    if reason is not None:
        raise OracleError(reason)
    exe = binary()
    assert exe is not None
    return exe


def _run_engine(script: str, files: Mapping[str, bytes], timeout: float, what: str,
                abort: re.Pattern[str] | None = None) -> subprocess.CompletedProcess[str]:
    exe = _require()
    with tempfile.TemporaryDirectory(prefix="godot-formats-g3-") as tmp:
        for name, data in files.items():
            (Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / name).write_bytes(data)
        (Path(tmp) / "run.gd").write_text(script, encoding="utf-8")
        # The engine logs a locale error under LANG=C; HOME and XDG keep user:// in tmp.
        env = dict(os.environ, HOME=tmp, XDG_DATA_HOME=tmp, XDG_CONFIG_HOME=tmp,
                   XDG_CACHE_HOME=tmp, LANG="en_US.UTF-8")
        return run([exe, "--no-window", "-s", "run.gd"], cwd=Path(tmp), env=env, timeout=timeout,
                   what=what, abort=abort, abort_grace=2.0)


# ---------------------------------------------------------------------------------------
# cases in, records out


@dataclass
class _Segment:
    """What one case printed between its @@CASE and @@END markers."""
    result: list[str] | None = None
    errors: list[str] = field(default_factory=list)
    ended: bool = False
    decoded: bool = False
    exit: int | None = None  # set when the engine stopped inside this case


def _parse(stderr: str) -> tuple[dict[int, _Segment], list[str]]:
    segs: dict[int, _Segment] = {}
    cur: _Segment | None = None
    before: list[str] = []
    for line in stderr.splitlines():
        if line.startswith("@@CASE "):
            cur = segs[int(line.split(" ")[1])] = _Segment()
        elif cur is None:
            if line.strip():
                before.append(line.strip())
        elif line.startswith("@@END "):
            cur.ended, cur = True, None
        elif line == "@@DECODED":
            cur.decoded = True
        elif line.startswith("@@RESULT "):
            cur.result = line.split(" ")[2:]  # fields may be empty: var2str of a RID is ""
        elif line.strip():
            cur.errors.append(line.strip())
    return segs, before


Build = Callable[[list[int]], tuple[str, dict[str, bytes]]]


def _run_cases(build: Build, idxs: list[int], timeout: float, what: str) -> dict[int, _Segment]:
    """Run the cases ``idxs`` (``build`` makes their script and files), isolating crashes."""
    done: dict[int, _Segment] = {}
    todo = idxs
    while todo:
        script, files = build(todo)
        p = _run_engine(script, files, timeout, what)
        segs, before = _parse(p.stderr)
        if not segs:  # the script did not compile (or the engine died at once)
            if len(todo) == 1:
                done[todo[0]] = _Segment(errors=before, exit=p.returncode)
            else:
                for i in todo:
                    done.update(_run_cases(build, [i], timeout, what))
            break
        for seg in segs.values():
            if not seg.ended:
                seg.exit = p.returncode
        done.update(segs)
        todo = [i for i in todo if i not in segs]
    return done


def _outcome(rec: Record, seg: _Segment, hex_fields: Sequence[str]) -> Record:
    res = seg.result
    rec["ok"] = res is not None and not any(e.startswith("SCRIPT ERROR") for e in seg.errors)
    if res is not None:
        rec["type"] = int(res[0])
        rec["type_name"] = TYPE_NAMES[int(res[0])]
        rec["var2str"] = bytes.fromhex(res[1]).decode("utf-8", "replace")
        rec.update(zip(hex_fields, res[2:]))
    if seg.errors:
        rec["errors"] = seg.errors
    if seg.exit is not None:  # -11: SIGSEGV; 0: the script did not compile
        rec["engine_exit"] = seg.exit
        if seg.decoded:
            rec["died_after_bytes2var"] = True  # in var2str/var2bytes of the decoded value
    return rec


def _helpers() -> str:
    return resources.files(__package__).joinpath("godot3.gd").read_text(encoding="utf-8")


def encode(cases: Sequence[Case], prelude: Sequence[str] = (), *, timeout: float = TIMEOUT) -> list[Record]:
    """``var2bytes`` of each case's value: one record per case, in order (see the package doc)."""
    cases = [dict(c) for c in cases]
    helpers = _helpers()

    def build(idxs: list[int]) -> tuple[str, dict[str, bytes]]:
        src = ["extends SceneTree", helpers, *prelude]
        for i in idxs:
            body = cases[i].get("body") or ["return " + cases[i]["expr"]]
            src += [f"func v_{i}():", *("\t" + line for line in body)]
        src.append("func _init():")
        for i in idxs:
            raw = "true" if cases[i].get("raw") else "false"
            src.append(f'\tprinterr("@@CASE {i}"); emit({i}, v_{i}(), {raw}); printerr("@@END {i}")')
        src.append("\tquit()")
        return "\n".join(src) + "\n", {}

    segs = _run_cases(build, list(range(len(cases))), timeout, "godot3 encode") if cases else {}
    out = []
    for i, c in enumerate(cases):
        rec: Record = {"name": c["name"], **{k: c[k] for k in ("expr", "body", "raw") if k in c}}
        _outcome(rec, segs[i], ("hex", "hex_full_objects"))
        if rec.get("hex_full_objects") == rec.get("hex"):
            rec.pop("hex_full_objects", None)
        out.append(rec)
    return out


def decode(cases: Sequence[Case], *, allow_objects: bool = False, timeout: float = TIMEOUT) -> list[Record]:
    """``bytes2var`` of each case's ``hex``: one record per case, in order."""
    cases = [dict(c) for c in cases]

    def allow(i: int) -> bool:
        return bool(cases[i].get("allow_objects", allow_objects))

    def build(idxs: list[int]) -> tuple[str, dict[str, bytes]]:
        src = ["extends SceneTree", _helpers(), "func _init():"]
        for i in idxs:
            src.append(f'\tprinterr("@@CASE {i}"); dec({i}, {str(allow(i)).lower()}); printerr("@@END {i}")')
        src.append("\tquit()")
        return "\n".join(src) + "\n", {f"in_{i}.bin": bytes.fromhex(cases[i]["hex"]) for i in idxs}

    segs = _run_cases(build, list(range(len(cases))), timeout, "godot3 decode") if cases else {}
    out = []
    for i, c in enumerate(cases):
        rec: Record = {"name": c["name"], "in_hex": c["hex"], "allow_objects": allow(i)}
        if "note" in c:
            rec["note"] = c["note"]
        out.append(_outcome(rec, segs[i], ("hex",)))
    return out


def run_script(script_text: str, *, timeout: float = 120.0, raw: bool = False) -> str:
    """Run an ``extends SceneTree`` script whose ``_init()`` ends with ``quit()``; its stdout."""
    p = _run_engine(script_text, {}, timeout, "godot3 run", abort=_INIT_ERROR)
    if _NOT_LOADED.search(p.stderr):  # the engine exits 0 when the script doesn't load
        raise OracleError(f"godot3 run failed: the engine could not load the script\n--- stderr ---\n{tail(p.stderr)}")
    if p.returncode != 0:
        raise OracleError(f"godot3 run failed (exit status {p.returncode})\n--- stderr ---\n{tail(p.stderr)}"
                          + (f"\n--- stdout ---\n{tail(p.stdout)}" if p.stdout.strip() else ""))
    return p.stdout if raw else _BANNER.sub("", p.stdout, count=1)


def run_project(script_text: str, files: Mapping[str, bytes], *,
                timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """Run an ``extends SceneTree`` script (``godot3-server -s``) in a project holding ``files``
    (project path -> bytes: ``res://name``); the engine's exit status, stdout and stderr."""
    project = {"project.godot": b'config_version=4\n\n[application]\n\nconfig/name="godot-formats"\n', **files}
    return _run_engine(script_text, project, timeout, "godot3 run", abort=_INIT_ERROR)


def run_raw(script_text: str, *, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """Run a script and return the engine's exit status, stdout and stderr, whatever they are."""
    return _run_engine(script_text, {}, timeout, "godot3 run", abort=_INIT_ERROR)

