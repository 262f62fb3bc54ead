"""``Marshalls.variant_to_base64`` / ``base64_to_variant``: a Variant as base64 text.

Both engines (checked on 3.2.3 and 4.6) write standard base64 (RFC 4648 alphabet, ``=``
padding, no line breaks) of the ``var_to_bytes`` bytes, with no length prefix; games use
it to put a save in a text field, a URL or ``ConfigFile``.  The engines decode with
mbedtls, which also skips line breaks, so this reader does too; anything else that is not
base64 is refused with the character offset, instead of being skipped or guessed at.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from ..core.codec import DEFAULT_MAX_SIZE, decoder_for, encoder_for
from ..core.dialects import Dialect, get_dialect
from ..core.errors import DecodeError

__all__ = ["variant_to_base64", "base64_to_variant", "base64_to_bytes"]

_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_LINE_BREAK = re.compile(r"\r?\n")


def variant_to_base64(value: Any, dialect: str | Dialect, full_objects: bool = False) -> str:
    """``Marshalls.variant_to_base64(value, full_objects)``: the value's bytes in the dialect, as base64."""
    data = encoder_for(get_dialect(dialect), full_objects).encode(value)
    return base64.b64encode(data).decode("ascii")


def base64_to_variant(text: str | bytes, dialect: str | Dialect, allow_objects: bool = False,
                      *, max_size: int = DEFAULT_MAX_SIZE) -> Any:
    """``Marshalls.base64_to_variant(text, allow_objects)``: the value in the base64 text.

    Bytes after the value are ignored, as by the engine.  Raises :class:`DecodeError`:
    for text that is not base64, at the offending character; for decoded bytes that are
    not a value, at the character where the 4-character group holding the bad byte
    starts (the reason names the byte offset in the decoded bytes).
    """
    data = base64_to_bytes(text, max_size=max_size)
    try:
        value, _ = decoder_for(get_dialect(dialect), allow_objects, max_size=max_size).decode(data)
    except DecodeError as e:
        raise DecodeError(_char_offset(text, e.offset), **e.reason_in(f"decoded byte {e.offset}: ")) from None
    return value


_ALPHABET_BYTES: frozenset[int] = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def sniff_base64(data: bytes) -> bytes | None:
    """The bytes of a file that is ``Marshalls.variant_to_base64`` text, or None when it is not such text.

    For recognising a file by its content (it has no magic): at least 8 characters of the
    standard alphabet, whole groups of 4, ``=`` only at the end.
    """
    text = data.strip()
    if len(text) < 8 or len(text) % 4 or not _ALPHABET_BYTES.issuperset(text) or b"=" in text.rstrip(b"="):
        return None
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error:
        return None


def base64_to_bytes(text: str | bytes, *, max_size: int = DEFAULT_MAX_SIZE) -> bytes:
    """The bytes of base64 ``text`` (standard alphabet and padding; line breaks skipped).

    Strict where Python's decoder is not: a character outside the alphabet, padding that
    is not at the end, or a last group that is cut short is a :class:`DecodeError` at
    that character's offset.
    """
    if isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        if not raw.isascii():
            bad = next(i for i, b in enumerate(raw) if b > 127)
            raise DecodeError(bad, f"byte 0x{raw[bad]:02x} is not base64")
        text = raw.decode("ascii")
    if len(text) // 4 * 3 > max_size:
        raise DecodeError(0, f"{len(text)} characters of base64 exceed max_size={max_size} bytes")
    compact = _LINE_BREAK.sub("", text) if "\n" in text else text
    try:
        if len(compact) % 4 == 0:
            return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):  # ValueError: a character that is not ASCII
        pass
    raise _where(text)


def _where(text: str) -> DecodeError:
    """The DecodeError for text that Python refused (or whose length is not a multiple of 4)."""
    count = 0  # base64 characters so far (line breaks excluded)
    padding = 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\n" or (c == "\r" and text.startswith("\n", i + 1)):
            i += 1 if c == "\n" else 2
            continue
        if c == "=":
            padding += 1
            if padding > 2 or count % 4 < 2:
                return DecodeError(i, "'=' padding out of place")
        elif c in _ALPHABET:
            if padding:
                return DecodeError(i, f"{c!r} after the '=' padding")
        else:
            return DecodeError(i, f"{c!r} is not a base64 character")
        count += 1
        i += 1
    if count % 4:
        return DecodeError(len(text), f"base64 text ends inside a 4-character group ({count % 4} of 4)")
    return DecodeError(len(text), "not base64")  # pragma: no cover - every refusal is found above


def _char_offset(text: str | bytes, byte_offset: int) -> int:
    """Where, in ``text``, the 4-character group that decodes to ``byte_offset`` starts."""
    target = byte_offset // 3 * 4
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("ascii")
    if "\n" not in text:
        return min(target, len(text))
    count = 0
    for i, c in enumerate(text):
        if c in "\r\n":
            continue
        if count == target:
            return i
        count += 1
    return len(text)
