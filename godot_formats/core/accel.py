"""Which backend does the codec's work: the compiled core, or the pure-Python reference.

The compiled core (``godot_formats.core._cdecode`` and ``_cencode``, built by ``pip install``
where a C compiler is present) is a fast path in front of the reference codec, as
``_pickle`` is in front of ``pickle.py``: it handles the common values and hands
anything else -- any error, any type or limit it does not cover -- back to the
reference, which then decides (raises the precise error, or reads the odd case).  So
both backends give the same values and the same errors, byte offsets and messages
included, and the reference remains the one readable statement of the rules.

FastLZ (``godot_formats.core._cfastlz``, Godot's default ``open_compressed`` mode) has its
compiled twin too: the same compressor step for step, so the same bytes, and a decoder with
the same errors; ``godot_formats.layers.fastlz`` holds the reference and asks
:func:`fastlz_core` which one serves.  It is built and loaded on its own, so a build without it
(or an older one) keeps the compiled codec and compresses in Python.

The text parser (``godot_formats.views.text.parser``, Godot's ``var2str`` / ``var_to_str`` text)
has a compiled fast path too, ``godot_formats.core._ctext`` (:data:`ctext`), on the same terms: it
reads the common grammar and answers exactly as the parser would, or says "not handled" and the
parser reads the value itself.  It also loads on its own.  The text writer has its twin,
``godot_formats.core._ctextw`` (:data:`ctextw`): it writes the common values and returns exactly
the text the writer (``godot_formats.views.text.writer``) would, or says "not handled" and the
writer writes the value itself; it loads on its own too.

``GODOT_FORMATS_PURE=1`` in the environment turns the whole compiled core off for the
process; ``Decoder(..., backend="python")`` for one codec, ``fastlz.compress(...,
backend="python")`` for one call.

``gf.loads`` and ``gf.dumps`` have a compiled front door (``godot_formats.core._cfront``,
:func:`front`): their common call, whose codec their table already holds, made without the
Python function's frame, which is a quarter of a small message's decode.  It comes and goes
with the compiled codec.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType
from typing import Any, Callable, TypeVar, cast

__all__ = ["BACKEND", "BACKENDS", "cdecode", "cencode", "cfastlz", "choose", "ctext", "ctextw", "fastlz_core", "front"]

F = TypeVar("F", bound=Callable[..., Any])

#: The backends a codec can be asked for.
BACKENDS = ("c", "python")


#: Read once, here: the one switch between the compiled core and the reference.
_PURE = os.environ.get("GODOT_FORMATS_PURE", "") not in ("", "0")


def _load() -> tuple[ModuleType | None, ModuleType | None]:
    if _PURE:
        return None, None
    try:
        from . import _cdecode, _cencode  # type: ignore[attr-defined]
    except ImportError:  # not built (no compiler at install time): the reference serves
        return None, None
    return _cdecode, _cencode


def _load_alone(name: str) -> ModuleType | None:
    """A compiled module that loads on its own (FastLZ, the front door), or None: not built (the
    reference serves), or GODOT_FORMATS_PURE is set."""
    if _PURE:
        return None
    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ImportError:
        return None


cdecode, cencode = _load()
#: The compiled FastLZ, or None (not built, or GODOT_FORMATS_PURE is set).
cfastlz = _load_alone("_cfastlz")
#: The compiled fast path of the text parser, or None (not built, or GODOT_FORMATS_PURE is set).
ctext = _load_alone("_ctext")
#: The compiled fast path of the text writer, or None (not built, or GODOT_FORMATS_PURE is set).
ctextw = _load_alone("_ctextw")

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


def fastlz_core(backend: str | None) -> ModuleType | None:
    """The compiled FastLZ for a call asking for ``backend`` (None: the process's), or None for the reference."""
    if backend is None:
        return cfastlz
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)} or None, not {backend!r}")
    if backend == "c" and cfastlz is None:
        raise ValueError("the compiled FastLZ is not available (not built, or GODOT_FORMATS_PURE is set)")
    return cfastlz if backend == "c" else None


_cfront = _load_alone("_cfront") if BACKEND == "c" else None


def front(table: dict[Any, Any], slow: F, dialect: str) -> F:
    """``slow`` (``loads`` or ``dumps``) behind its compiled front door, when the compiled codec serves.

    ``table`` is the function's own cache of codecs by dialect as given; the front calls
    ``table[dialect](first_argument)`` for a call with one or two positional arguments and no
    keywords (``dialect`` when the call names none), and ``slow`` for everything else, so
    ``slow`` keeps every rule.  It looks like ``slow`` (``functools.update_wrapper``) and
    pickles by name.  ``slow`` itself when the compiled core is off or not built.
    """
    if _cfront is None:
        return slow
    door = _cfront.Front(table, slow, dialect)
    functools.update_wrapper(door, slow)
    return cast(F, door)
