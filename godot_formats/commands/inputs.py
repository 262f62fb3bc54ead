"""The input side of the reading commands (``dump``, ``explain``): one set of options, one decision.

Both commands must read a file the same way, or ``explain`` would annotate
bytes that ``dump`` shows as another value; so the ``FILE``, ``--dialect``,
``--framing`` and ``--allow-objects`` options and :func:`resolve_input`, which
picks the dialect (``auto``: :func:`godot_formats.detection.detect`) and
whether the file holds ``store_var`` records with their u32 length prefix,
live here rather than in either command.

Not a command (``tool.COMMANDS`` does not list it).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import attrs

from ..api import DEFAULT_DIALECT
from ..codec import decoder_for
from ..dialects import Dialect, get_dialect
from ..errors import DecodeError, GodotFormatsError
from ..tool import add_dialect_option
from .common import add_password_options

__all__ = ["FRAMINGS", "DEFAULT_DIALECT", "add_input_options", "Record", "Input", "resolve_input", "read_values"]

FRAMINGS = ("auto", "none", "store_var")
#: The dialect of a file no dialect reads completely: the library's own default, so the error
#: messages are those a plain ``gf.loads`` would give.


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """FILE, --dialect (default auto), --framing, --allow-objects and the password options."""
    parser.add_argument("file", metavar="FILE", help="the file to read ('-' for standard input)")
    add_dialect_option(parser)
    parser.add_argument("--framing", choices=FRAMINGS, default="auto",
                        help="store_var: u32 length-prefixed records (store_var, put_var); none: raw "
                             "var_to_bytes data; auto: decide from the bytes (default: %(default)s)")
    parser.add_argument("--allow-objects", action="store_true",
                        help="decode full Objects (as inert data: class name and properties, never code)")
    add_password_options(parser)


@attrs.frozen
class Record:
    """One value's bytes inside the input: ``data[start:end]`` (the prefix, if any, is before ``start``).

    Offsets, not slices, so that ``explain`` can print file offsets and no
    record is copied out of a large file.
    """

    start: int
    end: int
    prefixed: bool


@attrs.frozen
class Input:
    """What a file holds: its bytes, the dialect to read them in, and where each value is."""

    data: bytes
    dialect: Dialect
    records: tuple[Record, ...]
    note: str  # how the dialect and framing were chosen, for humans

    @property
    def framed(self) -> bool:
        """Whether the values carry ``store_var`` length prefixes (the file is then written back with them)."""
        return any(r.prefixed for r in self.records)


def _store_var_records(data: bytes) -> list[Record] | None:
    """The records when u32 length prefixes tile ``data`` exactly (each value at least 4 bytes)."""
    from ..detection import split_store_var

    payloads = split_store_var(data)
    if payloads is None:
        return None
    records: list[Record] = []
    pos = 0
    for p in payloads:
        records.append(Record(pos + 4, pos + 4 + len(p), True))
        pos += 4 + len(p)
    return records


def _reads_completely(data: bytes, records: list[Record], dialect: Dialect, allow_objects: bool) -> bool:
    """Whether every record decodes and ends exactly at its end: the test a framing must pass to be believed."""
    decoder = decoder_for(dialect, allow_objects)  # one for all the records: building one builds its tables
    for r in records:
        try:
            if decoder.decode(data, r.start, r.end)[1] != r.end:
                return False
        except GodotFormatsError:
            return False
    return True


def _detect(data: bytes, framing: str) -> tuple[str, bool, str] | None:
    """The best complete reading by :mod:`godot_formats.detection`: (dialect, framed, note), or None."""
    try:
        from ..detection import detect
    except ImportError:  # pragma: no cover - a build without detection
        return None
    for c in detect(data):
        if c.complete and (framing == "auto" or c.framed == (framing == "store_var")):
            note = f"detected {c.dialect}" + (" (ambiguous: give --dialect to choose)" if c.ambiguous else "")
            return c.dialect, c.framed, note
    return None


def resolve_input(data: bytes, dialect: str, framing: str, allow_objects: bool = False) -> Input:
    """Decide the dialect and the framing of ``data`` as the options ask.

    With ``--framing auto`` the records are believed only when they read
    completely and the whole file does not: a raw value can happen to look
    like length prefixes, and the raw reading then wins.
    """
    raw = [Record(0, len(data), False)]
    records = _store_var_records(data) if framing != "none" else None
    if framing == "store_var" and records is None:
        raise DecodeError(0, "not store_var framed: the u32 length prefixes do not tile the file "
                             "(try --framing none)")
    if dialect == "auto":
        found = _detect(data, framing)
        if found is not None:
            name, framed, note = found
            return Input(data, get_dialect(name), tuple(records or raw) if framed else tuple(raw), note)
        dialect, note = DEFAULT_DIALECT, f"no dialect reads it completely; reading it as {DEFAULT_DIALECT}"
    else:
        note = f"{dialect} (given)"
    d = get_dialect(dialect)
    if records is not None and (framing == "store_var" or (
            _reads_completely(data, records, d, allow_objects)
            and not _reads_completely(data, raw, d, allow_objects))):
        return Input(data, d, tuple(records), note)
    return Input(data, d, tuple(raw), note)


def read_values(source: Input, allow_objects: bool) -> list[Any]:
    """The value of every record; trailing bytes inside a record are ignored, as the engine does."""
    values = []
    decoder = decoder_for(source.dialect, allow_objects)
    for r in source.records:
        try:
            value, end = decoder.decode(source.data, r.start, r.end)  # ``end``: no copy of the file per record
        except DecodeError as e:
            if not allow_objects and "allow_objects" in e.reason:
                raise DecodeError(e.offset, "a full Object: add --allow-objects to decode it "
                                            "(as inert data, never code)") from None
            raise
        if end < r.end:
            print(f"godot-formats: note: {r.end - end} trailing byte(s) after the value at byte {r.start} "
                  "(ignored, as the engine does)", file=sys.stderr)
        values.append(value)
    return values
