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

from typing import Any as _Any

from . import _old_paths
from .api import DEFAULT_DIALECT, decode, dump, dumps, load, loads
from .core import types
from .core.accel import BACKEND as backend
from .core.codec import Decoder, Encoder
from .core.codec import decoder_for as decoder_for
from .core.codec import encoder_for as encoder_for
from .core.dialects import Dialect, dialect_names, get_dialect
from .core.errors import ConversionError, DecodeError, EncodeError, GodotFormatsError
from .core.types import *  # noqa: F401,F403  (the value model is part of the public API)
from .core.version import __version__ as __version__
from .resources import ExtResource, Resource, ResourceFile, open_resource, scan_file, scan_resource
from .saves.conversion import Loss, convert, convert_value, convert_with_report
from .saves.detection import Candidate, detect, is_ambiguous
from .saves.fileaccess import FileAccess
from .saves.savefile import AmbiguousDialectError, SaveFile
from .saves.savefile import open as open  # noqa: A004  (gf.open, as tarfile.open)
from .streams.streampeer import StreamPeerBuffer
from .views.text import from_text, to_text

__all__ = [
    "loads", "dumps", "load", "dump", "decode", "dialect_names", "get_dialect", "Dialect",
    "Decoder", "Encoder", "DecodeError", "EncodeError", "ConversionError", "GodotFormatsError",
    "Loss", "DEFAULT_DIALECT", "to_text", "from_text", "convert", "convert_value", "convert_with_report",
    "detect", "is_ambiguous", "Candidate", "open", "SaveFile", "AmbiguousDialectError",
    "StreamPeerBuffer", "FileAccess", "backend", "open_resource", "scan_resource", "scan_file", "ResourceFile",
    "Resource",
    "ExtResource", *types.__all__,
]

_old_paths.install()  # godot_formats.codec and the other flat paths of 0.3 still import


def __getattr__(name: str) -> _Any:
    return _old_paths.old_attribute(name)  # gf.codec, as the flat layout had it
