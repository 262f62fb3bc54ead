"""The top-level calls: ``loads``/``dumps``/``load``/``dump``/``decode``, as ``pickle`` has them.

They live here, not in the package ``__init__``, so that modules inside the package
(conversion, detection, the command line) can use them without importing the package
they belong to; ``godot_formats`` re-exports them.
"""

from __future__ import annotations

import warnings
from typing import IO, Any

from .core import accel
from .core.codec import DEFAULT_MAX_DEPTH, DEFAULT_MAX_SIZE, decoder_for, encoder_for
from .core.dialects import Dialect, get_dialect

__all__ = ["loads", "dumps", "load", "dump", "decode", "DEFAULT_DIALECT"]

DEFAULT_DIALECT = "godot4"


def decode(
    data: bytes | bytearray | memoryview,
    dialect: str | Dialect = DEFAULT_DIALECT,
    *,
    offset: int = 0,
    end: int | None = None,
    allow_objects: bool = False,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_size: int = DEFAULT_MAX_SIZE,
    max_elements: int | None = None,
) -> tuple[Any, int]:
    """Decode the value that starts at ``offset``; return ``(value, value_end)``.

    ``value_end`` is the offset just past the value, so ``len(data) - value_end``
    bytes were trailing (the engine ignores them; so does :func:`loads`).  ``end``
    limits the bytes the value may use, e.g. to one frame of a larger buffer.

    Limits for untrusted input (docs/security.md): ``max_depth`` nesting levels
    (the engines' 1024), ``max_size`` bytes of input (the engines' int32 lengths),
    ``max_elements`` Array, Dictionary and Object elements in all (no limit by
    default: every count is already checked against the bytes that are left).
    ``dialect="auto"`` detects the engine version (:func:`godot_formats.reading.read_value`), and
    raises :class:`~godot_formats.errors.AmbiguousDialectError` when versions disagree,
    :class:`~godot_formats.errors.DamagedFileError` when none reads the bytes.
    """
    if dialect == "auto":
        from .saves.reading import read_value
        buf = memoryview(data).cast("B")[offset:end]
        reading = read_value(buf, allow_objects=allow_objects)
        if (max_depth, max_size, max_elements) == (DEFAULT_MAX_DEPTH, DEFAULT_MAX_SIZE, None):
            return reading.values[0], offset + reading.ends[0]  # read once, with these limits already
        chosen = reading.dialect
    else:
        chosen = get_dialect(dialect)
    decoder = decoder_for(chosen, allow_objects, max_depth, max_size, max_elements)
    return decoder.decode(data, offset, end)


def loads(
    data: bytes | bytearray | memoryview,
    dialect: str | Dialect = DEFAULT_DIALECT,
    *,
    allow_objects: bool = False,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_size: int = DEFAULT_MAX_SIZE,
    max_elements: int | None = None,
) -> Any:
    """Decode one value, as ``bytes_to_var`` does (trailing bytes are ignored).

    Full Objects are refused unless ``allow_objects=True``; even then they are
    inert :class:`~godot_formats.types.Object` data, never code.  The limits are
    those of :func:`decode`.
    """
    # A small message's decode costs about as much as finding its decoder: one lookup, by the
    # dialect alone when the options are the defaults (no tuple to build, hash and compare).
    key = dialect if allow_objects is False and max_depth == DEFAULT_MAX_DEPTH and max_size == DEFAULT_MAX_SIZE \
        and max_elements is None else (dialect, allow_objects, max_depth, max_size, max_elements)
    try:
        decode_one = _LOADS[key]
    except (KeyError, TypeError):  # new options, "auto", or a dialect object that is not hashable
        if dialect == "auto":
            return decode(data, dialect, allow_objects=allow_objects, max_depth=max_depth, max_size=max_size,
                          max_elements=max_elements)[0]
        decode_one = decoder_for(get_dialect(dialect), allow_objects, max_depth, max_size, max_elements).loads
        _remember(_LOADS, key, decode_one)
    return decode_one(data)


def dumps(
    value: Any,
    dialect: str | Dialect = DEFAULT_DIALECT,
    *,
    allow_objects: bool = False,
    max_depth: int = DEFAULT_MAX_DEPTH,
    full_objects: bool | None = None,
) -> bytes:
    """Encode one value, as ``var_to_bytes`` (or, with ``allow_objects``, ``var_to_bytes_with_objects``:
    full Objects, the same name :func:`loads` reads them back with).  ``full_objects`` is 0.3's name
    for ``allow_objects``, kept until 0.5 with a ``DeprecationWarning``."""
    full_objects = _objects(allow_objects, full_objects)
    key = dialect if full_objects is False and max_depth == DEFAULT_MAX_DEPTH else (dialect, full_objects, max_depth)
    try:  # as loads'
        encode = _DUMPS[key]
    except (KeyError, TypeError):
        encode = encoder_for(get_dialect(dialect), full_objects, max_depth).dumps
        _remember(_DUMPS, key, encode)
    out: bytes = encode(value)
    return out


#: The decoder and encoder of each set of options :func:`loads` and :func:`dumps` were called with,
#: by the dialect as given (a name or a Dialect; with the options when they are not the defaults):
#: resolving a name and finding the shared codec cost a small message about a third of its decode.
#: Bounded: a program that makes dialects or limits without end starts the table again.
#: The compiled fronts (below) hold these very dicts: change them in place, never rebind them.
_LOADS: dict[Any, Any] = {}
_DUMPS: dict[Any, Any] = {}
_REMEMBERED = 256


def _remember(table: dict[Any, Any], key: Any, value: Any) -> None:
    try:
        if len(table) >= _REMEMBERED:
            table.clear()
        table[key] = value
    except TypeError:  # an unhashable dialect object: found each time
        pass


#: Their common call, made in C when the compiled codec serves (accel.front: a codec already in
#: the table, called without the Python function's frame); the functions above keep every rule.
loads = accel.front(_LOADS, loads, DEFAULT_DIALECT)
dumps = accel.front(_DUMPS, dumps, DEFAULT_DIALECT)


def load(fp: IO[bytes], dialect: str | Dialect = DEFAULT_DIALECT, *, allow_objects: bool = False,
         byteorder: str = "little", max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Read the next value of a ``store_var`` file, as ``FileAccess.get_var`` does.

    The 4-byte length, then the value; bytes of the frame after the value are skipped, as
    the engine skips them.  Call again for the next record; ``EOFError`` at the end of
    the file.  ``byteorder="big"`` for files written with ``File.endian_swap`` /
    ``FileAccess.big_endian``.  A whole file with its layers: :func:`open`.
    """
    from .streams.stream import read_framed
    return read_framed(fp, dialect, allow_objects=allow_objects, byteorder=byteorder,  # type: ignore[arg-type]
                       max_depth=max_depth)


def _objects(allow_objects: bool, full_objects: bool | None) -> bool:
    """``allow_objects``, or 0.3's ``full_objects`` given instead (with its warning)."""
    if full_objects is None:
        return bool(allow_objects)
    warnings.warn("full_objects= is allow_objects= since 0.4 (the name loads reads full Objects with); "
                  "full_objects goes in 0.5", DeprecationWarning, stacklevel=3)
    return bool(full_objects) or bool(allow_objects)


def dump(value: Any, fp: IO[bytes], dialect: str | Dialect = DEFAULT_DIALECT, *, allow_objects: bool = False,
         byteorder: str = "little", max_depth: int = DEFAULT_MAX_DEPTH, full_objects: bool | None = None) -> None:
    """Write ``value`` as ``FileAccess.store_var`` does: its length as a u32, then its bytes.

    Godot's ``get_var`` reads it back.  For the bare bytes of ``var_to_bytes``, write
    :func:`dumps` yourself.  ``allow_objects`` writes full Objects (``full_objects``: 0.3's name).
    """
    from .streams.stream import write_framed
    write_framed(fp, value, dialect, full_objects=_objects(allow_objects, full_objects), byteorder=byteorder,  # type: ignore[arg-type]
                 max_depth=max_depth)
