"""Read and write Godot Engine's binary Variant serialization, for every engine version.

The bytes behind ``var2bytes``/``bytes2var`` (Godot 3), ``var_to_bytes``/
``bytes_to_var`` (Godot 4), ``store_var``/``get_var`` and ``put_var``/``get_var``::

    >>> import godot_formats as gf
    >>> gf.dumps({"hp": 3}, "godot4").hex()
    '1b000000010000000400000002000000687000000200000003000000'
    >>> gf.loads(bytes.fromhex("0200000007000000"), "godot3")
    7

``dialect`` is a name from :func:`dialect_names` or a
:class:`~godot_formats.dialects.Dialect`; values are the types in
:mod:`godot_formats.types`, named after Godot 4, so data read in one dialect
can be written in another.
"""

from __future__ import annotations

import importlib as _importlib
from typing import Any as _Any

from . import _old_paths
from .core.version import __version__ as __version__

#: Every public name but the value model's: the module it comes from (and its name there, where
#: that differs).  Each is imported when first used, so ``import godot_formats`` costs what a
#: program uses: a command line call or a batch worker that never opens a save file never imports
#: the save files' layers (cryptography), the resources, streams or text parsers, and ``--version``
#: imports none of it.  The value model (``godot_formats.core.types``: ``Vector2`` ...) is exported
#: whole, as ``from godot_formats.core.types import *`` would.
_LAZY: dict[str, tuple[str, str]] = {
    **{name: ("api", name) for name in ("loads", "dumps", "load", "dump", "decode", "DEFAULT_DIALECT")},
    **{name: ("core.codec", name) for name in ("Decoder", "Encoder", "decoder_for", "encoder_for")},
    **{name: ("core.dialects", name) for name in ("Dialect", "dialect_names", "get_dialect")},
    # The whole hierarchy of the library's errors (every GodotFormatsError), so a caller catches any
    # of them as gf.<Name>: tests/hostile/test_special_files.py checks that none is missing; and
    # Remedy, what an error's ``remedy`` says the caller can do about it.
    **{name: ("core.errors", name) for name in (
        "GodotFormatsError", "Remedy", "DecodeError", "EncodeError", "ConversionError", "AmbiguousDialectError",
        "DamagedFileError", "NotBinaryError", "FramingError", "SizeLimitError", "NotRegularFileError",
        "WrongPasswordError", "PasswordRequiredError", "InvalidKeyError", "TextDecodeError", "ResourceFormatError",
        "ConfigFileError", "JSONFormatError", "FileChangedError", "AdapterError")},
    # The command line's own errors, with the command line.
    **{name: ("commands.common", name) for name in ("DetailedError", "EngineError", "UsageError")},
    "backend": ("core.accel", "BACKEND"),
    "types": ("core", "types"),
    **{name: ("migration", name) for name in ("Loss", "convert", "convert_value", "convert_with_report")},
    # One door for every kind of file; gf.open_resource is the resource reader that door reads a
    # resource with: the same document.
    **{name: ("documents", name) for name in ("open", "Document", "Kind", "KINDS", "register_kind",
                                               "unregister_kind")},
    **{name: ("resources", name) for name in ("ExtResource", "Resource", "ResourceFile", "open_resource",
                                               "scan_file", "scan_resource")},
    **{name: ("saves.detection", name) for name in ("Candidate", "detect", "is_ambiguous")},
    "FileAccess": ("saves.fileaccess", "FileAccess"),
    "SaveFile": ("saves.savefile", "SaveFile"),
    "StreamPeerBuffer": ("streams.streampeer", "StreamPeerBuffer"),
    **{name: ("views.text", name) for name in ("from_text", "to_text")},
}

_old_paths.install()  # godot_formats.codec and the other flat paths of 0.3 still import


def _value_model() -> _Any:
    return _importlib.import_module(f"{__name__}.core.types")


def __getattr__(name: str) -> _Any:
    if name == "__all__":  # from godot_formats import *
        value: _Any = [n for n in _LAZY if n != "types"] + list(_value_model().__all__)
    elif name in _LAZY:
        module, attribute = _LAZY[name]
        value = getattr(_importlib.import_module(f"{__name__}.{module}"), attribute)
    elif not name.startswith("_") and name in _value_model().__all__:
        value = getattr(_value_model(), name)
    else:
        return _old_paths.old_attribute(name)  # gf.codec, as the flat layout had it
    globals()[name] = value  # once: the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_value_model().__all__})
