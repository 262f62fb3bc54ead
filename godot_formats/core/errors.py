"""The three ways a Godot byte blob or value can be refused.

All of them are ``ValueError`` subclasses, so callers that only care about
"bad input" can catch one thing; each carries enough context (offset, path)
to point at the exact spot.
"""

from __future__ import annotations

__all__ = ["GodotFormatsError", "quoted", "QUOTED", "DecodeError", "EncodeError", "ConversionError",
           "AmbiguousDialectError",
           "DamagedFileError", "NotBinaryError", "LostRecord"]

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
    decrypted data"``): a file read through its layers sets it.
    """

    where: str = ""

    def __init__(self, offset: int, reason: str) -> None:
        self.offset = offset
        self.reason = reason
        super().__init__(f"at byte {offset}: {reason}")


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
    """Text where bytes were expected: ``kind`` says which (``configfile``, ``var2str``, ``json``, ``text``)."""

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
