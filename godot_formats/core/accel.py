"""Which backend does the codec's work: the compiled core, or the pure-Python reference.

The compiled core (``godot_formats.core._cdecode`` and ``_cencode``, built by ``pip install``
where a C compiler is present) is a fast path in front of the reference codec, as
``_pickle`` is in front of ``pickle.py``: it handles the common values and hands
anything else -- any error, any type or limit it does not cover -- back to the
reference, which then decides (raises the precise error, or reads the odd case).  So
both backends give the same values and the same errors, byte offsets and messages
included, and the reference remains the one readable statement of the rules.

``GODOT_FORMATS_PURE=1`` in the environment turns the compiled core off for the
process; ``Decoder(..., backend="python")`` for one codec.
"""

from __future__ import annotations

import os
from types import ModuleType

__all__ = ["BACKEND", "BACKENDS", "cdecode", "cencode", "choose"]

#: The backends a codec can be asked for.
BACKENDS = ("c", "python")


def _load() -> tuple[ModuleType | None, ModuleType | None]:
    if os.environ.get("GODOT_FORMATS_PURE", "") not in ("", "0"):
        return None, None
    try:
        from . import _cdecode, _cencode  # type: ignore[attr-defined]
    except ImportError:  # not built (no compiler at install time): the reference serves
        return None, None
    return _cdecode, _cencode


cdecode, cencode = _load()

#: "c" when the compiled core is in use, "python" when the reference codec does everything.
BACKEND = "c" if cdecode is not None and cencode is not None else "python"


def choose(backend: str | None) -> bool:
    """Whether a codec asked for ``backend`` (None: the process's) uses the compiled core."""
    if backend is None:
        return BACKEND == "c"
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)} or None, not {backend!r}")
    if backend == "c" and BACKEND != "c":
        raise ValueError("the compiled core is not available (not built, or GODOT_FORMATS_PURE is set)")
    return backend == "c"
