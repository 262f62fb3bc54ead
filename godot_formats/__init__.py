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

from . import types
from .accel import BACKEND as backend
from .api import DEFAULT_DIALECT, decode, dump, dumps, load, loads
from .codec import Decoder, Encoder
from .codec import decoder_for as decoder_for
from .codec import encoder_for as encoder_for
from .conversion import Loss, convert, convert_value, convert_with_report
from .detection import Candidate, detect, is_ambiguous
from .dialects import Dialect, dialect_names, get_dialect
from .errors import ConversionError, DecodeError, EncodeError, GodotFormatsError
from .fileaccess import FileAccess
from .savefile import AmbiguousDialectError, SaveFile
from .savefile import open as open  # noqa: A004  (gf.open, as tarfile.open)
from .streampeer import StreamPeerBuffer
from .text import from_text, to_text
from .types import *  # noqa: F401,F403  (the value model is part of the public API)
from .version import __version__ as __version__

__all__ = [
    "loads", "dumps", "load", "dump", "decode", "dialect_names", "get_dialect", "Dialect",
    "Decoder", "Encoder", "DecodeError", "EncodeError", "ConversionError", "GodotFormatsError",
    "Loss", "DEFAULT_DIALECT", "to_text", "from_text", "convert", "convert_value", "convert_with_report",
    "detect", "is_ambiguous", "Candidate", "open", "SaveFile", "AmbiguousDialectError",
    "StreamPeerBuffer", "FileAccess", "backend", *types.__all__,
]
