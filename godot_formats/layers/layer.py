"""What every layer ``FileAccess`` can put around a file's bytes answers: one row per layer, declared by
the layer's own module (``encryption.LAYER``, ``compression.LAYER``) and gathered, outside in, by the
one reading (:data:`godot_formats.saves.reading.LAYERS`), as ``tarfile.open`` gathers ``OPEN_METH``."""

from __future__ import annotations

from typing import Any, Callable, Union

import attrs

__all__ = ["Layer"]


@attrs.frozen
class Layer:
    """One layer ``FileAccess`` puts around a file's bytes.

    ``name`` is the :class:`~godot_formats.saves.savefile.SaveFile` attribute that holds its ``info``;
    ``read(data, key, max_size)`` gives the bytes inside, the info and where the layer ends
    in ``data`` (the engine reads no further); ``write(plaintext, info, key)`` puts it back.
    """

    name: str
    magics: tuple[bytes, ...]
    read: Callable[[bytes, Union[bytes, None], int], tuple[bytes, Any, int]]
    write: Callable[[bytes, Any, Union[bytes, None]], bytes]
    describe: Callable[[Any], str]
    offsets: str  # how an offset inside it is named: "of the decrypted data"
    noun: str  # what a file with this layer is: "encrypted" (the encrypted file's header)
    #: How many of the layer's first bytes are its header: an error before that is in a header field.
    header_size: Callable[[bytes], int]
    #: Where the bytes inside start in the layer's own (byte i inside is byte start + i), from its
    #: info; None when positions inside do not map to the outside (decompressed data).
    inner_start: Callable[[Any], Union[int, None]]
