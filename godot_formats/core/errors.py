"""Every error the package raises on purpose, in one hierarchy and one module.

All but :class:`OracleError` are ``ValueError`` subclasses under :class:`GodotFormatsError`, so
callers that only care about "bad input" can catch one thing; each carries enough context
(offset, path, record) to point at the exact spot.  The layers, views and commands raise the
classes defined here (and still export them under their old names, ``framing.FramingError``).
"""

from __future__ import annotations

__all__ = ["GodotFormatsError", "quoted", "QUOTED", "DecodeError", "EncodeError", "ConversionError",
           "AmbiguousDialectError", "DamagedFileError", "NotBinaryError", "LostRecord",
           "FramingError", "SizeLimitError", "WrongPasswordError", "PasswordRequiredError", "InvalidKeyError",
           "TextDecodeError", "ResourceFormatError", "JSONFormatError", "FileChangedError", "DetailedError",
           "EngineError", "UsageError", "AdapterError", "OracleError"]

from typing import TYPE_CHECKING, Any, Sequence

import attrs

if TYPE_CHECKING:  # pragma: no cover
    from ..saves.conversion import Loss  # what a ConversionError lists: the conversion's own record


class GodotFormatsError(ValueError):
    """Base class of every error this package raises on purpose."""


#: Characters of a key or a value an error message quotes at most: a message stays short, whatever
#: the input (a 4 MB key once made a 16.8 MB message).
QUOTED = 80


def quoted(text: str | bytes) -> str:
    """``repr(text)``, cut to :data:`QUOTED` characters with the length said, for an error message."""
    shown = repr(text[:QUOTED])
    return shown if len(text) <= QUOTED else f"{shown}… ({len(text)} characters)"


class DecodeError(GodotFormatsError):
    """Bytes that cannot be decoded in the chosen dialect.

    ``offset`` is the byte position (from the start of the buffer given to
    the decoder) of the field that was wrong; ``reason`` says what was wrong.
    ``where`` names those bytes when they are not the file's own (``" of the
    decrypted data"``), or says that they are a layer's header (``" of the file,
    in the compressed file's header"``): a file read through its layers sets it,
    and the message says it after the offset.
    """

    where: str = ""

    def __init__(self, offset: int, reason: str) -> None:
        self.offset = offset
        self.reason = reason
        super().__init__(f"at byte {offset}: {reason}")

    def __str__(self) -> str:
        if not self.where:
            return super().__str__()
        return f"at byte {self.offset}{self.where}: {self.reason}"


class AmbiguousDialectError(DecodeError):
    """Several readings explain the file completely, as different values: the caller must choose.

    ``candidates``: the dialects of those readings, best first; ``framings``: for each, whether
    it reads ``store_var`` records (True) or one bare value (False).
    """

    def __init__(self, candidates: Sequence[str], framings: Sequence[bool] = ()) -> None:
        self.candidates = list(candidates)
        self.framings = list(framings)
        self.ranked: list[Any] = []  # every reading, ranked (detection.Candidate), when the reader made them
        if len(set(self.candidates)) == 1 and len(self.framings) > 1:
            super().__init__(0, f"ambiguous: {self.candidates[0]} reads this file completely both as store_var "
                                "records and as one var_to_bytes value, as different values; choose one with "
                                "framing= (--framing on the command line)")
            return
        super().__init__(0, f"ambiguous: {' and '.join(self.candidates)} each read this file completely, as "
                            f"different values; choose one with dialect= (--dialect on the command line)")


@attrs.frozen
class LostRecord:
    """A ``store_var`` record whose frame is sound but whose value is not: ``get_var`` returns null for it.

    ``record`` counts from 1; ``offset`` is where its frame starts and ``error`` what is wrong in it
    (offsets in the bytes inside the file's layers, as every reading error).
    """

    record: int
    offset: int
    error: DecodeError

    def __str__(self) -> str:
        return f"record {self.record}, at byte {self.error.offset}: {self.error.reason}"


class DamagedFileError(DecodeError):
    """No reading explains the whole file: it is damaged.  The error is that of the most plausible
    reading (the dialect that reads the most records and bytes before failing), naming the record.

    ``dialect``: that reading's dialect; ``record``: the first bad record (from 1), None for a
    file that is one bare value; ``lost``: every record whose value is bad (``salvage=True`` keeps
    the others, as the engine's ``get_var`` reads them).
    """

    def __init__(self, offset: int, reason: str, *, dialect: str, record: int | None = None,
                 lost: Sequence[LostRecord] = (), explained: int | None = None) -> None:
        self.dialect = dialect
        self.explained = explained  # bytes the most plausible reading explained (0: none reads anything)
        self.record = record
        self.lost = list(lost)
        self.ranked: list[Any] = []  # every reading, ranked (detection.Candidate), when the reader made them
        super().__init__(offset, reason)


class NotBinaryError(DecodeError):
    """Not ``var_to_bytes``/``store_var`` data: ``kind`` says what instead (``configfile``, ``var2str``, ``json``,
    ``text``, or ``resource``: a resource save, which :mod:`godot_formats.resources` reads)."""

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        super().__init__(0, reason)


class EncodeError(GodotFormatsError):
    """A Python value that the chosen dialect cannot represent."""

    def __init__(self, reason: str, path: str = "") -> None:
        self.reason = reason
        self.path = path
        super().__init__(f"{path}: {reason}" if path else reason)


class ConversionError(GodotFormatsError):
    """A strict conversion that would have lost or changed data.

    ``losses`` lists every change that the conversion would have made, each
    with its path inside the value, so nothing is hidden behind the first one.
    """

    def __init__(self, losses: Sequence[Loss]) -> None:
        self.losses = list(losses)
        lines = "\n".join(f"  {loss}" for loss in self.losses)
        super().__init__(f"conversion would change {len(self.losses)} value(s):\n{lines}")


# -- the file layers ---------------------------------------------------------------------------------


class FramingError(DecodeError):
    """The framing is broken: a length over the limit, or data that ends inside a frame.

    Where the next frame would start is unknown, so nothing more can be read
    from this stream.  ``offset`` is where the broken frame starts.
    """


class SizeLimitError(DecodeError):
    """The data would decompress to more than the limit it was read with: nothing was allocated for it."""


class WrongPasswordError(DecodeError):
    """The decrypted data does not match the file's MD5: a wrong password or key, or a damaged file.

    The format cannot tell the two apart (the engine fails the same way), so neither do we; the
    offset is that of the MD5 field.
    """


class PasswordRequiredError(DecodeError):
    """The file is encrypted and no password or key was given.

    ``versions`` holds the engine major versions whose layout the file fits (``(3,)``, ``(4,)``,
    or both for a file that fits both), so a caller can say which engine wrote it.
    """

    def __init__(self, offset: int, reason: str, versions: tuple[int, ...]) -> None:
        super().__init__(offset, reason)
        self.versions = versions


class InvalidKeyError(GodotFormatsError):
    """A key or password that cannot be used: not 32 bytes, both given, or not encodable."""


# -- the views ---------------------------------------------------------------------------------------


class TextDecodeError(DecodeError):
    """Text that is not a value in Godot's text format.

    ``offset`` is the character position (not a byte position) of the
    problem; ``line`` and ``column`` (both from 1) say the same for humans.
    """

    def __init__(self, offset: int, reason: str, text: str = "") -> None:
        self.offset = offset
        self.reason = reason
        self.line = text.count("\n", 0, offset) + 1
        self.column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        ValueError.__init__(self, f"at character {offset} (line {self.line}, column {self.column}): {reason}")


class ResourceFormatError(TextDecodeError):
    """A text resource file (``.tres``) that is not one: a scene (``[gd_scene]``), a tag out of its
    place, a reference to a resource the file does not define, a value that does not parse ...

    It is a :class:`TextDecodeError` about the whole file, so ``line`` and ``column`` point at the
    spot; every error a ``.tres`` reader raises is one, whichever part of the file was wrong.
    """


class JSONFormatError(GodotFormatsError):
    """JSON that is not a value in our (or the engine's) JSON form.

    ``path`` points at the offending node, JSONPath style (``$.args[3]``).
    """

    def __init__(self, reason: str, path: str = "$") -> None:
        self.reason = reason
        self.path = path
        super().__init__(f"{path}: {reason}")


# -- the command line --------------------------------------------------------------------------------


class FileChangedError(GodotFormatsError):
    """The file changed between reading it and writing it back: nothing was written."""


class DetailedError(GodotFormatsError):
    """An error of one line followed by indented lines of detail (the readings of an ambiguous file)."""

    def __init__(self, message: str, details: list[str]) -> None:
        super().__init__(message)
        self.details = details


class EngineError(GodotFormatsError):
    """An engine is not installed, failed or could not be asked; ``details``: its output."""

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        super().__init__(message)
        self.details = details or []


class UsageError(GodotFormatsError):
    """Options of a command that do not go together: nothing was done (exit status 2)."""


# -- the conformance kit -----------------------------------------------------------------------------


class AdapterError(GodotFormatsError):
    """The adapter could not be started at all."""


# -- the engines -------------------------------------------------------------------------------------


class OracleError(RuntimeError):
    """An engine is missing, failed, timed out or printed something unreadable."""
