"""Every error the package raises on purpose, in one hierarchy and one module.

All but :class:`OracleError` are ``ValueError`` subclasses under :class:`GodotFormatsError`, so
callers that only care about "bad input" can catch one thing; each carries enough context
(offset, path, record) to point at the exact spot, and what the caller can do about it (its
``remedy``, a :class:`Remedy`: data, which the command line words as its flags from one table).  The
layers, views and commands raise the classes defined here (and still export them under their old
names, ``framing.FramingError``).
"""

from __future__ import annotations

__all__ = ["GodotFormatsError", "Remedy", "quoted", "QUOTED", "DecodeError", "EncodeError", "ConversionError",
           "AmbiguousDialectError", "DamagedFileError", "NotBinaryError", "LostRecord",
           "FramingError", "SizeLimitError", "NotRegularFileError", "WrongPasswordError", "PasswordRequiredError",
           "InvalidKeyError",
           "TextDecodeError", "ResourceFormatError", "ConfigFileError", "JSONFormatError", "FileChangedError",
           "AdapterError", "OracleError"]

import enum
from typing import TYPE_CHECKING, Any, Sequence

import attrs

if TYPE_CHECKING:  # pragma: no cover
    from .changes import Loss  # what a ConversionError lists: the record every converter makes


class Remedy(enum.Enum):
    """What the caller can do about an error, as data: the closed vocabulary of an error's ``remedy``.

    The error that needs one names it where it is raised, so a caller never reads a message's text
    to learn it: the command line says each in its own words (its flag) from one table,
    ``godot_formats.batch.onefile.REMEDY_FLAGS``.  A member's value is how the library's own
    messages say it (``a full Object is only decoded with allow_objects=True``).
    """

    #: A full Object, refused by the reader: ``allow_objects=True`` reads it as inert data, never code.
    ALLOW_OBJECTS = "allow_objects=True"
    #: A full Object, refused by the writer: ``full_objects=True`` writes it in full.
    FULL_OBJECTS = "full_objects=True"
    #: An encrypted file read (or written) without its password or key.
    PASSWORD = "password= or key= (--password or --key on the command line)"
    #: A damaged ``store_var`` file whose other records read: ``salvage=True`` keeps them.
    SALVAGE = "salvage=True (--salvage on the command line)"
    #: A strict conversion that would lose or change data: ``policy="lossy"`` applies the documented downgrades.
    POLICY_LOSSY = 'policy="lossy" (--policy lossy on the command line)'
    #: Engine versions that read the file as different values: name the version.
    GIVE_DIALECT = "dialect= (--dialect on the command line)"
    #: Both framings (``store_var`` records, one bare value) read the file as different values: name one.
    GIVE_FRAMING = "framing= (--framing on the command line)"
    #: A resource that carries code, refused by the writer: ``allow_scripts=True`` writes it all the same.
    ALLOW_SCRIPTS = "allow_scripts=True (--allow-scripts on the command line)"


class GodotFormatsError(ValueError):
    """Base class of every error this package raises on purpose.

    ``remedy``: what the caller can do about it (a :class:`Remedy`), None when there is nothing to do
    but fix the input.
    """

    remedy: Remedy | None = None

    def __init__(self, *args: object, remedy: Remedy | None = None) -> None:
        super().__init__(*args)
        if remedy is not None:
            self.remedy = remedy


class _Remedied:
    """A reason whose remedy is a slot in its words (``a full Object is only decoded with «allow_objects=True»``):
    the library fills it with the remedy's own words; :meth:`reason_with` with a caller's (the command line's
    flag), so that no caller rewrites, or reads, the text of a message.

    ``_before`` and ``_then`` are the words either side of the slot (without a remedy, the reason and "").
    """

    remedy: Remedy | None
    reason: str
    _before: str = ""
    _then: str = ""

    def _word(self, reason: str, remedy: Remedy | None, then: str) -> str:
        """Keep the reason's two sides and the remedy; the reason in the library's words."""
        self._before, self._then = reason, then
        if remedy is not None:
            self.remedy = remedy
        self.reason = self.reason_with(remedy.value) if remedy is not None else reason + then
        return self.reason

    def reason_with(self, words: str) -> str:
        """The reason with its remedy said in ``words`` (the reason itself when it names no remedy)."""
        if self.remedy is None:
            return self.reason
        return f"{self._before}{words}{self._then}"

    def reason_in(self, before: str = "", after: str = "") -> dict[str, Any]:
        """The keywords of a new error whose reason is this one's between ``before`` and ``after``, with its
        remedy kept in its slot: ``DecodeError(offset, **e.reason_in("record 2: "))``."""
        if self.remedy is None:
            return {"reason": before + self.reason + after, "remedy": None, "then": ""}
        return {"reason": before + self._before, "remedy": self.remedy, "then": self._then + after}


#: Characters of a key or a value an error message quotes at most: a message stays short, whatever
#: the input (a 4 MB key once made a 16.8 MB message).
QUOTED = 80


def quoted(text: str | bytes) -> str:
    """``repr(text)``, cut to :data:`QUOTED` characters with the length said, for an error message."""
    shown = repr(text[:QUOTED])
    return shown if len(text) <= QUOTED else f"{shown}… ({len(text)} characters)"


class DecodeError(_Remedied, GodotFormatsError):
    """Bytes that cannot be decoded in the chosen dialect.

    ``offset`` is the byte position (from the start of the buffer given to
    the decoder) of the field that was wrong; ``reason`` says what was wrong.
    ``where`` names those bytes when they are not the file's own (``" of the
    decrypted data"``), or says that they are a layer's header (``" of the file,
    in the compressed file's header"``): a file read through its layers sets it,
    and the message says it after the offset.

    With a ``remedy``, ``reason`` is the words before it and ``then`` those after it
    (``DecodeError(8, "a full Object is only decoded with ", remedy=Remedy.ALLOW_OBJECTS)``).
    """

    where: str = ""

    def __init__(self, offset: int, reason: str, *, remedy: Remedy | None = None, then: str = "") -> None:
        self.offset = offset
        super().__init__(f"at byte {offset}: {self._word(reason, remedy, then)}")

    def __str__(self) -> str:
        if not self.where:
            return super().__str__()
        return f"at byte {self.offset}{self.where}: {self.reason}"

    def message_with(self, words: str) -> str:
        """The message with the remedy said in ``words`` (the command line's flag)."""
        if self.remedy is None:
            return str(self)
        return f"at byte {self.offset}{self.where}: {self.reason_with(words)}"


class AmbiguousDialectError(DecodeError):
    """Several readings explain the file completely, as different values: the caller must choose.

    ``candidates``: the dialects of those readings, best first; ``framings``: for each, whether
    it reads ``store_var`` records (True) or one bare value (False); ``readings``: for each, the
    values it read (one per record), so that a caller can show them without reading the file again.
    ``remedy``: :attr:`Remedy.GIVE_FRAMING` when one dialect reads it both ways, else
    :attr:`Remedy.GIVE_DIALECT`.
    """

    def __init__(self, candidates: Sequence[str], framings: Sequence[bool] = (),
                 readings: Sequence[Sequence[Any]] = ()) -> None:
        self.candidates = list(candidates)
        self.framings = list(framings)
        self.readings = [list(values) for values in readings]
        self.ranked: list[Any] = []  # every reading, ranked (detection.Candidate), when the reader made them
        if len(set(self.candidates)) == 1 and len(self.framings) > 1:
            super().__init__(0, f"ambiguous: {self.candidates[0]} reads this file completely both as store_var "
                                "records and as one var_to_bytes value, as different values; choose one with ",
                             remedy=Remedy.GIVE_FRAMING)
            return
        super().__init__(0, f"ambiguous: {' and '.join(self.candidates)} each read this file completely, as "
                            f"different values; choose one with ", remedy=Remedy.GIVE_DIALECT)


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
                 lost: Sequence[LostRecord] = (), explained: int | None = None, remedy: Remedy | None = None,
                 then: str = "") -> None:
        self.dialect = dialect
        self.explained = explained  # bytes the most plausible reading explained (0: none reads anything)
        self.record = record
        self.lost = list(lost)
        self.ranked: list[Any] = []  # every reading, ranked (detection.Candidate), when the reader made them
        super().__init__(offset, reason, remedy=remedy, then=then)


class NotBinaryError(DecodeError):
    """Not ``var_to_bytes``/``store_var`` data: ``kind`` says what instead (``configfile``, ``var2str``, ``json``,
    ``text``, or ``resource``: a resource save, which :mod:`godot_formats.resources` reads)."""

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        super().__init__(0, reason)


class EncodeError(_Remedied, GodotFormatsError):
    """A Python value that the chosen dialect cannot represent.

    ``path`` points at it inside the value written; with a ``remedy``, ``reason`` and ``then`` are the
    words either side of it, as for :class:`DecodeError`.
    """

    def __init__(self, reason: str, path: str = "", *, remedy: Remedy | None = None, then: str = "") -> None:
        self.path = path
        worded = self._word(reason, remedy, then)
        super().__init__(f"{path}: {worded}" if path else worded)

    def message_with(self, words: str) -> str:
        """The message with the remedy said in ``words`` (the command line's flag)."""
        reason = self.reason_with(words)
        return f"{self.path}: {reason}" if self.path else reason


class ConversionError(GodotFormatsError):
    """A strict conversion that would have lost or changed data.

    ``losses`` lists every change that the conversion would have made, each
    with its path inside the value, so nothing is hidden behind the first one.
    """

    remedy: Remedy | None = Remedy.POLICY_LOSSY  # the documented downgrades apply what it lists

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


class NotRegularFileError(GodotFormatsError):
    """A named file that is not a regular file (a FIFO, a device, a socket, a directory): refused
    before a byte of it is read, since reading one may block forever (a FIFO with no writer) or
    never end (``/dev/zero``).  ``path``: the file; ``kind``: what it is (``"a FIFO"``);
    ``reason``: the message without the path, for a line that names the file already."""

    def __init__(self, path: str, kind: str) -> None:
        self.path = path
        self.kind = kind
        self.reason = f"{kind}, not a regular file"
        super().__init__(f"{path}: {self.reason}")


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

    remedy: Remedy | None = Remedy.PASSWORD

    def __init__(self, offset: int, reason: str, versions: tuple[int, ...], *, then: str = "") -> None:
        super().__init__(offset, reason, remedy=Remedy.PASSWORD, then=then)
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


class ConfigFileError(TextDecodeError):
    """ConfigFile text (``settings.cfg``, ``project.godot``, ``override.cfg`` ...) that is not one: a header
    without its ``]``, a value that does not parse.  ``line`` and ``column`` point at the spot, as the
    engine's ``ConfigFile parse error at FILE:LINE`` does; ``ConfigFile.load`` keeps every key before it."""


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


# -- the conformance kit -----------------------------------------------------------------------------


class AdapterError(GodotFormatsError):
    """The adapter could not be started at all."""


# -- the engines -------------------------------------------------------------------------------------


class OracleError(RuntimeError):
    """An engine is missing, failed, timed out or printed something unreadable."""
