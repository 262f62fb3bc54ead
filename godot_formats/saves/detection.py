"""Which engine version wrote a blob?  Ranked guesses, and honesty when the bytes cannot tell.

Every engine dialect is tried on the bytes as they are and, when they start with a
``store_var``/``put_var`` length prefix that matches, on the payload(s) after it.  A
dialect that decodes the blob completely *and* writes exactly the same bytes for the
value it read (NodePath padding aside, which old engines leave uninitialised) is the
best evidence there is: it is what that engine's ``var_to_bytes`` produces.  That one
test catches every version marker at once:

* type ids 27-38, Godot 4 only; containers and strings that only parse one way;
* typed Array headers (4.3+), typed Dictionary headers (4.4+), PackedVector4Array (4.3+);
* math types with the 64-bit flag (a ``precision=double`` 4.x build);
* small ints with the 64-bit flag (Godot 3.0.x, fixed in 3.1).

Bytes that several versions write identically (a bare int, a short string) are reported
as ambiguous instead of guessed: :func:`is_ambiguous`, and ``Candidate.ambiguous``.

Godot 2 is tried too, although :func:`~godot_formats.dialects.dialect_names` leaves it out
(:func:`~godot_formats.core.dialects.unlisted_engines`). Its ids 0-14 are Godot 3's, byte for byte,
and it never sets a header flag, so most small Godot 3 blobs are Godot 2 blobs as well. It therefore
counts as one more reading only where it reads *the same value* as an engine version that fits as
well (then the bytes are ambiguous, as for Godot 3 and 4); where such a version reads another value,
that version wins, Godot 2 data being the rarer guess; and where no listed version fits as well (an
Image, an InputEvent, a Dictionary with id 20, a "shared" Array), Godot 2 wins.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from typing import Any

import attrs

from ..core import accel
from ..core.codec import MARK_SMALL_INT64, MARK_WIDE_REAL, Encoder, decoder_for
from ..core.dialects import Dialect, dialect_names, get_dialect, registered, unlisted_engines
from ..core.errors import DecodeError, GodotFormatsError
from ..core.keys import same_value
from ..core.switches import IntFormat
from ..layers.framing import PREFIX_SIZE, join_frames, scan_frames, split_frames

__all__ = ["Candidate", "detect", "is_ambiguous", "split_store_var", "frame_store_var", "engine_order",
           "decodes_like", "reads_what_it_writes",
           "Layout", "Attempt", "LOST", "read_layout", "readings", "rank", "engine_dialects", "mostly_unread",
           "writes_as", "padding_runs", "reproduced", "sibling_marks", "cannot_beat"]

def engine_order() -> dict[str, float]:
    """The listed engine dialects, best first, with their weights: order among candidates that fit
    equally well, and each dialect's weight when it is only *as* good as a more common sibling (a 4.3
    blob is also a valid 4.4 blob, but the distinguishing feature of 3.0.x or of a double build must
    be seen to be believed).  Made from the registered dialects' ``prior`` and ``sibling`` each time,
    so a new dialect is one ``register`` call."""
    engines = [d for d in map(get_dialect, dialect_names()) if d.engine]
    engines.sort(key=lambda d: (-d.prior, -d.major, d.name))
    return {d.name: d.prior for d in engines}


SCORE_REPRODUCES = 1.0   # decodes completely and re-encodes to the same bytes
SCORE_COMPLETE = 0.6     # decodes completely, but this version would write other bytes
SCORE_SLACK = 0.4        # store_var records read whole, some with slack after the value (get_var skips it)
SCORE_TRAILING = 0.2     # decodes, with bytes left over
DOCUMENTED_WEIGHT = 0.95  # documented dialects describe pages, not engines: an engine that fits as well wins
TIE = 0.11               # candidates this close to the best fit as well (priors aside)
DEFERRED_WEIGHT = 0.5    # an unlisted engine's reading when a listed one fits as well and reads another value


@attrs.frozen
class Candidate:
    """One reading of a blob.

    ``complete``: the dialect decodes it, consuming exactly all bytes (of every
    payload, when ``framed``).  ``framed``: the blob is a ``store_var``/``put_var``
    length prefix + payload (or a sequence of them) and this candidate describes
    the payload(s).  ``ambiguous``: another reading, by another major version or
    with the other framing, fits just as well.
    """

    dialect: str
    confidence: float
    complete: bool
    framed: bool
    reason: str
    ambiguous: bool = False


def is_ambiguous(candidates: Sequence[Candidate]) -> bool:
    """True when the best candidates disagree on the engine (or on the framing)."""
    return bool(candidates) and candidates[0].ambiguous


def split_store_var(data: bytes | bytearray | memoryview) -> list[bytes] | None:
    """The payloads of a blob made of ``store_var``/``put_var`` records (u32 LE length + payload).

    Returns None unless the records tile the blob exactly (one record, or several
    ``store_var`` calls in a row, as save files often do).
    """
    return split_frames(data)


def frame_store_var(payloads: Sequence[bytes]) -> bytes:
    """``store_var`` framing: each payload preceded by its length as a u32 LE."""
    return join_frames(payloads)


class _MarkedPadding(Encoder):
    node_path_padding = b"\xff"


@lru_cache(maxsize=32)
def _encoders(dialect: Dialect) -> tuple[Encoder, Encoder]:
    return Encoder(dialect, full_objects=True), _MarkedPadding(dialect, full_objects=True)


def writes_as(value: Any, dialect: Dialect, blob: bytes) -> bool:
    """Would this dialect write exactly ``blob`` for ``value``, padding aside (engines leave some of it
    uninitialised: a byte that is padding in ``blob`` may hold anything)?"""
    return padding_runs(value, dialect, blob) is not None


#: Bytes compared at once by :func:`_differing`: equal stretches cost one ``memcmp``, not a loop.
_CHUNK = 4096


def _differing(a: bytes, b: bytes) -> Iterator[int]:
    """The indexes where ``a`` and ``b`` (of one length) differ, chunk by chunk: a large record that
    differs in a few padding bytes is compared at C speed, and only its differing chunks byte by byte."""
    for start in range(0, len(a), _CHUNK):
        end = start + _CHUNK
        if a[start:end] != b[start:end]:
            yield from (i for i in range(start, min(end, len(a))) if a[i] != b[i])


def padding_runs(value: Any, dialect: Dialect, blob: bytes | memoryview) -> list[tuple[int, bytes]] | None:
    """Where ``blob`` differs from what this dialect writes for ``value``, as ``(offset, blob's bytes)``
    runs, when every difference is in padding the engine leaves uninitialised (a NodePath's names, before
    Godot 4.6.3: godot#44999); ``[]`` when they are the same bytes, None when ``blob`` is not ``value``.

    What a writer needs to give back an engine's bytes exactly: the runs are the only bytes our
    encoding of an unchanged value lacks."""
    plain_encoder, marked_encoder = _encoders(dialect)
    try:
        plain = plain_encoder.encode(value)
    except (GodotFormatsError, OverflowError):
        return None
    blob = bytes(blob)
    if plain == blob:
        return []
    if len(plain) != len(blob):
        return None
    marked = marked_encoder.encode(value)  # padding written as 0xff: the bytes that differ from ``plain``
    runs: list[tuple[int, bytearray]] = []
    for i in _differing(plain, blob):
        if marked[i] == plain[i]:
            return None  # a byte of the value itself
        if runs and runs[-1][0] + len(runs[-1][1]) == i:
            runs[-1][1].append(blob[i])
        else:
            runs.append((i, bytearray(blob[i:i + 1])))
    return [(offset, bytes(run)) for offset, run in runs]


@attrs.frozen
class Layout:
    """Where the values of a blob are: one span per record, ``(start, end)`` in the blob.

    ``framed``: ``store_var`` records (each span is a frame's payload, after its length
    prefix, whose byte order is ``byteorder``); else one bare ``var_to_bytes`` value.
    """

    framed: bool
    spans: tuple[tuple[int, int], ...]
    byteorder: str = "little"

    @classmethod
    def bare(cls, data: bytes) -> Layout:
        return cls(False, ((0, len(data)),))

    @classmethod
    def frames(cls, data: bytes, byteorder: str = "little") -> Layout | None:
        """The records when ``store_var`` frames tile ``data`` exactly, else None."""
        if accel.cdecode is not None and byteorder in ("little", "big"):  # the same scan, in one compiled call
            spans = accel.cdecode.frame_spans(data, byteorder == "big")
            return None if spans is None else cls(True, spans, byteorder)
        frames, broken = scan_frames(data, byteorder)
        if broken is not None:
            return None
        return cls(True, tuple([(pos + PREFIX_SIZE, pos + PREFIX_SIZE + size) for pos, size in frames]), byteorder)


@attrs.define(eq=False)
class Attempt:
    """What one dialect made of a layout: the values of the records it read, and where it stopped.

    ``ends``: where each value ends (absolute); a frame's bytes after it are slack.
    ``error``: what stopped it (absolute offset), at record ``failed`` (0-based), or None.
    ``unexplained``: it stopped because a record was left mostly unread: not a reading.
    """

    dialect: Dialect
    layout: Layout
    values: tuple[Any, ...]
    ends: tuple[int, ...]
    error: DecodeError | None = None
    failed: int | None = None
    unexplained: bool = False
    reproduces: bool | None = None  # None: not asked yet (see reproduced())
    slack: int = 0  # bytes of the frames it read after their values
    lost: tuple[tuple[int, DecodeError], ...] = ()  # past_errors: each record that did not decode, and why
    marks: int = 0  # the decoder's marks over the records it read (codec.Decoder.decode_marked)

    @property
    def framed(self) -> bool:
        return self.layout.framed

    @property
    def read_all(self) -> bool:
        return self.error is None


    @property
    def bytes_read(self) -> int:
        """How far it got: the end of the last record it read, or the failing field's offset."""
        if self.error is not None and not self.unexplained:
            return self.error.offset
        if not self.ends:
            return 0
        return self.layout.spans[len(self.ends) - 1][1] if self.framed else self.ends[-1]


def mostly_unread(start: int, end: int, value_end: int) -> bool:
    """A frame whose value leaves more of it unread than it explains: ``get_var`` would skip the rest,
    but no writer leaves such slack, so it is not a reading of the frame (docs/detect.md)."""
    return value_end - start < end - value_end


def read_layout(dialect: Dialect, data: bytes, layout: Layout, allow_objects: bool = True, *,
                past_errors: bool = False) -> Attempt:
    """Decode every record of ``layout`` in ``dialect``; stop at the first that fails (or that it leaves
    mostly unread) unless ``past_errors``, which reads every frame, as ``get_var`` does.

    The records go to the compiled core in runs (:meth:`~godot_formats.codec.Decoder.decode_run`: one
    call for thousands of records); a record a run stops before is read through the reference here,
    so every value and error is what reading record by record gives."""
    decoder = decoder_for(dialect, allow_objects)
    got = _Got()
    spans = layout.spans
    i = 0
    next_run, wait = (0, 1) if layout.framed else (len(spans), 0)
    while i < len(spans):
        if i >= next_run:
            start = i
            i = _read_run(decoder, data, spans, i, past_errors, got)
            if i >= len(spans):
                break
            # A run the core ends at once (records it leaves to the reference, a dialect that fails):
            # the next waits twice as many records, so such a file costs no call per record.
            wait = 1 if i > start else wait * 2
            next_run = i + wait
        if not _read_one(decoder, data, layout, i, past_errors, got):
            break
        i += 1
    slack = sum(map(_frame_end, spans[:len(got.ends)])) - sum(got.ends)  # map: no Python frame per record
    return Attempt(dialect, layout, tuple(got.values), tuple(got.ends), got.error, got.failed, got.unexplained,
                   slack=slack, lost=tuple(got.lost), marks=got.marks)


_frame_end = operator.itemgetter(1)


@attrs.define
class _Got:
    """What :func:`read_layout` has read so far."""

    values: list[Any] = attrs.field(factory=list)
    ends: list[int] = attrs.field(factory=list)
    error: DecodeError | None = None
    failed: int | None = None
    unexplained: bool = False
    lost: list[tuple[int, DecodeError]] = attrs.field(factory=list)
    marks: int = 0


def _read_run(decoder: Any, data: bytes, spans: tuple[tuple[int, int], ...], i: int, past_errors: bool,
              got: _Got) -> int:
    """The records from ``i`` that the compiled core reads in one run (up to one it leaves mostly unread,
    which the reference reads again and reports); where the reference takes over."""
    run, run_ends, run_marks = decoder.decode_run(data, spans, i, stop_unread=not past_errors)
    got.values += run
    got.ends += run_ends
    got.marks |= run_marks
    return i + len(run)


def _read_one(decoder: Any, data: bytes, layout: Layout, i: int, past_errors: bool, got: _Got) -> bool:
    """Record ``i`` through the reference; False: the reading stops there."""
    start, end = layout.spans[i]
    try:
        value, value_end, mark = decoder.decode_marked(data, start, end)
    except DecodeError as e:
        e = e.with_traceback(None)  # kept without its traceback, whose frames (this one too) hold the values
        if got.error is None:
            got.error, got.failed = e, i
        if not past_errors:
            return False
        got.lost.append((i, e))
        got.values.append(LOST)
        got.ends.append(end)
        return True
    if layout.framed and mostly_unread(start, end, value_end) and not past_errors:
        got.error, got.failed, got.unexplained = DecodeError(value_end, f"the value ends after {value_end - start} "
                                                                        f"of the frame's {end - start} bytes"), i, True
        return False
    got.values.append(value)
    got.ends.append(value_end)
    got.marks |= mark
    return True


class _Lost:
    """The value of a record that did not decode (``get_var`` returns null for it)."""

    def __repr__(self) -> str:
        return "LOST"


LOST: Any = _Lost()


def reproduced(attempt: Attempt, data: bytes) -> bool:
    """Whether the dialect writes exactly the bytes of every record for the values it read (asked once)."""
    if attempt.reproduces is None:
        attempt.reproduces = attempt.read_all and not attempt.slack and (
            _writes_all_at_once(attempt, data) or all(
                writes_as(v, attempt.dialect, data[s:e]) for v, (s, e) in zip(attempt.values, attempt.layout.spans)))
    return attempt.reproduces


def _writes_all_at_once(attempt: Attempt, data: bytes) -> bool:
    """The values written as the elements of one Array (each element is exactly its value's
    ``var_to_bytes``) against the records' bytes: one encoding call for a file of many records.
    False says nothing (padding the engine left as is, nesting at the limit): ask record by record."""
    plain, _ = _encoders(attempt.dialect)
    spans = attempt.layout.spans
    try:
        if len(spans) == 1:  # compared in place: no copy of a large record
            out = plain.encode(attempt.values[0])
            return len(out) == spans[0][1] - spans[0][0] and data.startswith(out, spans[0][0])
        out = plain.encode(list(attempt.values))
    except (GodotFormatsError, OverflowError):
        return False
    return out == b"".join([out[:8], *[data[s:e] for s, e in spans]])  # one copy of the records, none of ``out``


def _shared(dialect: Dialect, data: bytes, done: list[Attempt]) -> Attempt | None:
    """A complete reading of the same major version whose values ``dialect`` writes back as exactly these
    bytes: it reads the bytes as those values (its decoder is the inverse of its encoder), so they need
    no decoding again."""
    for other in done:
        if other.dialect.major != dialect.major or not other.read_all or other.slack:
            continue
        if all(writes_as(v, dialect, data[s:e]) for v, (s, e) in zip(other.values, other.layout.spans)):
            return attrs.evolve(other, dialect=dialect, reproduces=True)
    return None


@lru_cache(maxsize=64)
def sibling_marks(dialect: Dialect, sibling: Dialect) -> int | None:
    """The decoder marks (``codec.MARK_*``) that a reading by ``sibling`` of every record must show for
    ``dialect`` to write those bytes exactly while the sibling does not; None: the two part in a way
    with no rule here.

    Where the sibling reads every record and shows none of these marks, the dialect could only tie it,
    and a tie goes to the commoner sibling: the dialect need not be read, nor the sibling's values
    written again to find out (that re-encoding was most of detection's cost).  Each rule stands for a
    switch in which the two part; tests/saves/test_detection.py checks every rule on both dialects' bytes.
    """
    marks = 0
    for field in attrs.fields(Dialect):
        if field.name in _NOT_IN_THE_BYTES or getattr(dialect, field.name) == getattr(sibling, field.name):
            continue
        rule = _PARTING.get(field.name)
        mark = rule(dialect, sibling) if rule is not None else None
        if mark is None:
            return None
        marks |= mark
    return marks


#: Switches that only the text, the conversions and detection's weights read (and the id index,
#: which follows ``types``).
_NOT_IN_THE_BYTES = frozenset({"name", "description", "notes", "native_names", "text_version", "prior", "sibling",
                               "decodes_like", "reads_what_it_writes",
                               "object_script", "object_classes", "_ids"})
_Rule = Callable[[Dialect, Dialect], "int | None"]


def _switch(name: str, mine: Any, theirs: Any, mark: int) -> _Rule:
    """The dialect writes with ``name`` = ``mine`` where the sibling has ``theirs``: the bytes where
    the two part carry ``mark`` (0: the dialect then fails or writes what the sibling reads alike)."""
    return lambda d, s: mark if (getattr(d, name), getattr(s, name)) == (mine, theirs) else None


#: One rule per switch in which an engine version parts from its sibling.
_PARTING: dict[str, _Rule] = {
    # Godot 3.0 writes every int with the 64-bit flag, 3.1+ only those past 32 bits.
    "int_format": _switch("int_format", IntFormat.FLAG64, IntFormat.AUTO, MARK_SMALL_INT64),
    # A double build writes real-valued math types and packed vectors with the flag, a single one never.
    "real_is_double": _switch("real_is_double", True, False, MARK_WIDE_REAL),
    # Without typed headers, a version reads their flag bits as nothing and writes none: it writes
    # only blobs without them, which the sibling reads alike.
    "typed_arrays": _switch("typed_arrays", False, True, 0),
    "typed_dictionaries": _switch("typed_dictionaries", False, True, 0),
    # Fewer ids (a prefix of the sibling's): it fails where the sibling reads the others.  More ids
    # (the sibling's a prefix of its): where the sibling reads every record, none of them was used.
    "types": lambda d, s: 0 if s.types[:len(d.types)] == d.types or d.types[:len(s.types)] == s.types else None,
}


def cannot_beat(dialect: Dialect, sibling: Attempt, data: bytes) -> bool:
    """Whether ``dialect`` could at best tie its ``sibling``'s reading of ``data`` (which then wins)."""
    if not sibling.read_all or sibling.slack:
        return False
    marks = sibling_marks(dialect, sibling.dialect)
    if marks is None:
        return reproduced(sibling, data)
    return not sibling.marks & marks


def readings(data: bytes, layouts: Sequence[Layout], dialects: Sequence[Dialect],
             allow_objects: bool = True, *, thorough: bool = True) -> list[Attempt]:
    """Every dialect's reading of every layout, each decoded once: dialects that read bytes alike
    (``Dialect.decodes_like``, ``Dialect.reads_what_it_writes``, or one that writes the same bytes back for
    another's values) share one decoding.  Not ``thorough``: a dialect whose more common sibling
    reads the layout without the marks of :func:`sibling_marks` is left out (it could
    only tie that sibling, which outranks it), as the reader of a file needs only the winner."""
    out: list[Attempt] = []
    for layout in layouts:
        done: list[Attempt] = []
        by_name: dict[str, Attempt] = {}
        for d in dialects:
            sibling = by_name.get(d.sibling or "")
            if not thorough and sibling is not None and cannot_beat(d, sibling, data):
                continue
            like = by_name.get(d.decodes_like or "")
            writer = by_name.get(d.reads_what_it_writes or "")
            if like is None and writer is not None and reproduced(writer, data):
                like = writer
            if like is not None:
                found = attrs.evolve(like, dialect=d, reproduces=None)
            else:
                found = _shared(d, data, done) or read_layout(d, data, layout, allow_objects)
            by_name[d.name] = found
            done.append(found)
        out += done
    return out


def decodes_like() -> dict[str, str]:
    """Each dialect that reads bytes exactly like another one, and that one (``Dialect.decodes_like``)."""
    return {d.name: d.decodes_like for d in registered() if d.decodes_like}


def reads_what_it_writes() -> dict[str, str]:
    """Each dialect that reads bytes like another one wherever that one writes them back exactly
    (``Dialect.reads_what_it_writes``)."""
    return {d.name: d.reads_what_it_writes for d in registered() if d.reads_what_it_writes}


@attrs.frozen
class _Trial:
    dialect: Dialect
    framed: bool
    score: float
    complete: bool
    status: str
    values: tuple[Any, ...] = ()
    reading: Attempt | None = None


def _score(reading: Attempt, data: bytes, records: int, slack_ok: bool, check: bool) -> _Trial:
    d, framed = reading.dialect, reading.framed
    if not reading.read_all:
        error = reading.error
        assert error is not None and reading.failed is not None
        where = f" (record {reading.failed + 1} of {records})" if framed and records > 1 else ""
        what = "leaves a record mostly unread" if reading.unexplained else "does not decode"
        return _Trial(d, framed, 0.0, False, f"{what}{where}: {error.reason}", (), reading)
    values = reading.values
    slack = reading.slack
    total = sum(e - s for s, e in reading.layout.spans) if slack else 0
    if slack and not (framed and slack_ok):
        return _Trial(d, framed, SCORE_TRAILING, False,
                      f"decodes, but leaves {slack} of {total} bytes unread", values, reading)
    if slack:
        return _Trial(d, framed, SCORE_SLACK, True,
                      f"decodes, with {slack} byte(s) of slack after values (skipped by get_var)", values, reading)
    if not check:
        return _Trial(d, framed, SCORE_COMPLETE, True, "decodes completely; no other reading does", values, reading)
    if reproduced(reading, data):
        return _Trial(d, framed, SCORE_REPRODUCES, True,
                      "decodes completely and re-encodes to exactly these bytes", values, reading)
    return _Trial(d, framed, SCORE_COMPLETE, True,
                  f"decodes completely, but {d.name} writes other bytes for this value "
                  "(not written as is by this engine version)", values, reading)


def _same_values(a: _Trial, b: _Trial) -> bool:
    try:
        return len(a.values) == len(b.values) and all(
            same_value(x, y) for x, y in zip(a.values, b.values))
    except (TypeError, ValueError):
        return False


def engine_dialects(include_documented: bool = False) -> list[Dialect]:
    """The dialects detection tries, in order: the listed engines best first (each after the sibling
    it is measured against), the documented ones if asked, then the unlisted engines (Godot 2)."""
    dialects = [get_dialect(n) for n in engine_order()]
    if include_documented:
        dialects += [d for d in map(get_dialect, dialect_names()) if not d.engine]
    return dialects + [d for d in map(get_dialect, unlisted_engines()) if d not in dialects]


def detect(data: bytes | bytearray | memoryview, *, include_documented: bool = False) -> list[Candidate]:
    """Rank the dialects that could have written ``data``, best first.

    Every engine dialect is tried (the unlisted ``godot2`` too, ranked as the module
    docstring says; documented ``docs-*`` dialects too with
    ``include_documented=True``), on the raw bytes and, when a ``store_var`` length
    prefix matches, on the payload after it.  Dialects that do not decode the bytes
    at all are listed last with confidence 0 and the error as the reason.
    """
    blob = bytes(data)
    layouts = [Layout.bare(blob)]
    framed = Layout.frames(blob)
    if framed is not None:
        layouts.append(framed)
    found = readings(blob, layouts, engine_dialects(include_documented))
    return [c for c, _ in rank(blob, found, slack_ok=False)]


def rank(data: bytes, found: Sequence[Attempt], *, slack_ok: bool = True,
         thorough: bool = True) -> list[tuple[Candidate, Attempt]]:
    """The readings as ranked candidates, best first, each with its reading.  Framed readings count
    only when one of them reads completely; ``slack_ok``: a frame's slack (bytes after its value,
    which ``get_var`` skips) is a complete reading, ranked below every exact one.  Not ``thorough``:
    a reading is only re-encoded (to tell versions apart) when another one reads completely too."""
    exact = sum(1 for a in found if a.read_all and not a.slack)
    check = thorough or exact > 1
    bare = [_score(r, data, 1, slack_ok, check) for r in found if not r.framed]
    framed = [_score(r, data, len(r.layout.spans), slack_ok, check) for r in found if r.framed]
    trials = bare + (framed if any(tr.complete for tr in framed) else [])
    records = max((len(r.layout.spans) for r in found if r.framed), default=None)
    return _rank(trials, records)


def _is_unlisted(trial: _Trial) -> bool:
    return trial.dialect.name in unlisted_engines()


def _weight(trial: _Trial, by_key: dict[tuple[str, bool], _Trial]) -> tuple[float, str]:
    """The trial's score after priors, and a note on what it is equivalent to."""
    d = trial.dialect
    if not d.engine:
        return trial.score * DOCUMENTED_WEIGHT, "a documented dialect (follows a documentation page, not an engine)"
    sibling = d.sibling
    if sibling is not None and trial.score == SCORE_REPRODUCES:
        other = by_key.get((sibling, trial.framed))
        if other is not None and other.score == SCORE_REPRODUCES:
            return trial.score * d.prior, f"{sibling} writes the same bytes"
    return trial.score, ""


_Weighted = tuple[_Trial, float, str]


def _fitting(weighted: list[_Weighted]) -> list[_Weighted]:
    """The complete readings as good as the best one (``weighted`` is sorted best first)."""
    best = weighted[0][1] if weighted else 0.0
    return [item for item in weighted if best > 0 and item[1] >= best - TIE and item[0].complete]


def _defer_unlisted(weighted: list[_Weighted]) -> list[_Weighted]:
    """Unlisted engine readings that a listed version contradicts, fitting as well, move down.

    A Godot 2 reading of bytes that Godot 3 (or 4) reads just as well but as another value is
    possible, never evidence: most such bytes are the listed version's, as they were before
    Godot 2 was tried.  The same value read by both stays a reading of its own (ambiguous).
    """
    top = _fitting(weighted)
    listed = [tr for tr, _, _ in top if tr.dialect.engine and not _is_unlisted(tr)]
    if not listed:
        return weighted
    out = []
    for tr, score, note in weighted:
        if _is_unlisted(tr) and any(tr is item[0] for item in top) and not any(
                o.framed == tr.framed and _same_values(o, tr) for o in listed):
            rival = listed[0]
            score *= DEFERRED_WEIGHT
            note = (f"{rival.dialect.name}{' (framed)' if rival.framed != tr.framed else ''} fits as well and "
                    f"reads another value: {tr.dialect.name} is only chosen where no listed version fits as well")
        out.append((tr, score, note))
    return out


def _ambiguity_note(trial: _Trial, others: list[_Trial]) -> str:
    """Who else fits as well, and whether they read what ``trial`` reads."""
    def label(o: _Trial) -> str:
        return o.dialect.name + (" (framed)" if o.framed != trial.framed else "")

    agree = [_same_values(trial, o) for o in others]
    same = [label(o) for o, a in zip(others, agree) if a]
    other = [label(o) for o, a in zip(others, agree) if not a]
    groups = [f"{', '.join(names)} {'reads' if len(names) == 1 else 'read'} {what}"
              for names, what in ((same, "the same value"), (other, "it differently")) if names]
    if len(groups) == 1:
        return f"ambiguous: {groups[0]} and {'fits' if len(others) == 1 else 'fit'} just as well"
    return f"ambiguous: {groups[0]}, {groups[1]}; all fit just as well"


def _rank(trials: list[_Trial], records: int | None) -> list[tuple[Candidate, Attempt]]:
    by_key = {(tr.dialect.name, tr.framed): tr for tr in trials}
    weighted = [(tr, *_weight(tr, by_key)) for tr in trials]
    order = [*engine_order(), *unlisted_engines()]

    def sort_key(item: _Weighted) -> tuple[float, bool, int, str]:
        tr, score, _ = item
        name = tr.dialect.name
        return (-score, tr.framed, order.index(name) if name in order else len(order), name)

    weighted.sort(key=sort_key)
    weighted = sorted(_defer_unlisted(weighted), key=sort_key)
    top = _fitting(weighted)
    readings = {(tr.dialect.major, tr.framed) for tr, _, _ in top if tr.dialect.engine}
    ambiguous = len(readings) > 1
    best_per_reading: dict[tuple[int, bool], tuple[_Trial, float, str]] = {}
    for item in top:
        best_per_reading.setdefault((item[0].dialect.major, item[0].framed), item)
    framing = f"{records} store_var records" if records and records > 1 else "a store_var payload"
    out = []
    for tr, score, note in weighted:
        in_top = ambiguous and any(tr is item[0] for item in top)
        confidence = score / max(len(readings), 1)  # equally good readings share the confidence
        parts = [("as " + framing + ": " if tr.framed else "") + tr.status]
        if note:
            parts.append(note)
        if in_top:
            others = [o for o, _, _ in best_per_reading.values()
                      if (o.dialect.major, o.framed) != (tr.dialect.major, tr.framed)]
            parts.append(_ambiguity_note(tr, others))
        assert tr.reading is not None
        out.append((Candidate(tr.dialect.name, round(max(confidence, 0.0), 4), tr.complete, tr.framed,
                              "; ".join(parts), in_top), tr.reading))
    return out
