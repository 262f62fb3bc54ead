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

Godot 2 is tried too, although :func:`~godot_formats.dialects.dialect_names` leaves it
out (``UNLISTED_ENGINES``).  Its ids 0-14 are Godot 3's, byte for byte, and it never sets a
header flag, so most small Godot 3 blobs are Godot 2 blobs as well.  It therefore counts
as one more reading only where it reads *the same value* as an engine version that fits
as well (then the bytes are ambiguous, as for Godot 3 and 4); where such a version reads
another value, that version wins, Godot 2 data being the rarer guess; and where no listed
version fits as well (an Image, an InputEvent, a Dictionary with id 20, a "shared"
Array), Godot 2 wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import attrs

from .codec import Encoder
from .dialects import Dialect, dialect_names, get_dialect
from .errors import GodotFormatsError
from .framing import join_frames, split_frames
from .keys import same_value

__all__ = ["Candidate", "detect", "is_ambiguous", "split_store_var", "frame_store_var", "PRIOR", "UNLISTED_ENGINES"]

#: Order among candidates that fit equally well, and each dialect's weight when it is only
#: *as* good as a more common sibling (a 4.3 blob is also a valid 4.4 blob, but the
#: distinguishing feature of 3.0.x or of a double build must be seen to be believed).
#: The weights and siblings are the dialects' own (``Dialect.prior``, ``Dialect.sibling``).
PRIOR: dict[str, float] = {
    name: get_dialect(name).prior for name in ("godot4", "godot4.3", "godot4.0", "godot3", "godot3.0", "godot4-double")
}
#: The more common dialect each one is indistinguishable from when its marker is absent.
SIBLING_OF = {name: sibling for name in PRIOR if (sibling := get_dialect(name).sibling) is not None}
#: Engine dialects registered unlisted (``dialect_names()`` leaves them out: without their
#: markers their bytes are a listed version's) that detect() still tries, after the listed ones.
UNLISTED_ENGINES = ("godot2",)

SCORE_REPRODUCES = 1.0   # decodes completely and re-encodes to the same bytes
SCORE_COMPLETE = 0.6     # decodes completely, but this version would write other bytes
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


def _reproduces(value: Any, dialect: Dialect, blob: bytes) -> bool:
    """Would this dialect write exactly ``blob`` for ``value`` (NodePath padding aside)?"""
    plain_encoder, marked_encoder = _encoders(dialect)
    try:
        plain = plain_encoder.encode(value)
    except (GodotFormatsError, OverflowError):
        return False
    if plain == blob:
        return True
    if len(plain) != len(blob):
        return False
    marked = marked_encoder.encode(value)
    return all(a == b or a != m for a, b, m in zip(plain, blob, marked))


@attrs.frozen
class _Trial:
    dialect: Dialect
    framed: bool
    score: float
    complete: bool
    status: str
    values: tuple[Any, ...] = ()


#: Dialects that read bytes exactly like another one (they differ only in how they
#: write): detect() decodes once for both.  tests/test_detect.py checks the claim.
DECODES_LIKE = {"godot3.0": "godot3"}
# (godot4-double is not among them: a single-precision build narrows the doubles it reads.)

def _read_all(dialect: Dialect, payloads: Sequence[bytes]) -> tuple[list[tuple[Any, int]], str | None]:
    """Decode every payload: the (value, end) pairs, and the error that stopped it (None: all read)."""
    from .api import decode

    out: list[tuple[Any, int]] = []
    for blob in payloads:
        try:
            out.append(decode(blob, dialect, allow_objects=True))
        except GodotFormatsError as e:
            return out, str(e)
    return out, None


def _try(dialect: Dialect, framed: bool, payloads: Sequence[bytes],
         cache: dict[tuple[str, bool], tuple[list[tuple[Any, int]], str | None]]) -> _Trial:
    reader = DECODES_LIKE.get(dialect.name, dialect.name)
    key = (reader, framed)
    if key not in cache:
        cache[key] = _read_all(dialect, payloads)
    readings, error = cache[key]
    if error is not None:
        where = f" (record {len(readings) + 1} of {len(payloads)})" if framed and len(payloads) > 1 else ""
        return _Trial(dialect, framed, 0.0, False, f"does not decode{where}: {error}")
    values = tuple(value for value, _ in readings)
    used = sum(end for _, end in readings)
    total = sum(len(blob) for blob in payloads)
    if used < total:
        return _Trial(dialect, framed, SCORE_TRAILING, False,
                      f"decodes, but leaves {total - used} of {total} bytes unread", values)
    if all(_reproduces(v, dialect, blob) for v, blob in zip(values, payloads)):
        return _Trial(dialect, framed, SCORE_REPRODUCES, True,
                      "decodes completely and re-encodes to exactly these bytes", values)
    return _Trial(dialect, framed, SCORE_COMPLETE, True,
                  f"decodes completely, but {dialect.name} writes other bytes for this value "
                  "(not written as is by this engine version)", values)


def _same_values(a: _Trial, b: _Trial) -> bool:
    try:
        return len(a.values) == len(b.values) and all(
            same_value(x, y) for x, y in zip(a.values, b.values))
    except (TypeError, ValueError):
        return False


def detect(data: bytes | bytearray | memoryview, *, include_documented: bool = False) -> list[Candidate]:
    """Rank the dialects that could have written ``data``, best first.

    Every engine dialect is tried (the unlisted ``godot2`` too, ranked as the module
    docstring says; documented ``docs-*`` dialects too with
    ``include_documented=True``), on the raw bytes and, when a ``store_var`` length
    prefix matches, on the payload after it.  Dialects that do not decode the bytes
    at all are listed last with confidence 0 and the error as the reason.
    """
    blob = bytes(data)
    dialects = [d for d in (get_dialect(n) for n in dialect_names()) if d.engine or include_documented]
    dialects += [d for d in map(get_dialect, UNLISTED_ENGINES) if d not in dialects]
    cache: dict[tuple[str, bool], tuple[list[tuple[Any, int]], str | None]] = {}
    trials = [_try(d, False, [blob], cache) for d in dialects]
    records = split_store_var(blob)
    if records is not None:
        framed = [_try(d, True, records, cache) for d in dialects]
        if any(tr.complete for tr in framed):
            trials += framed
    return _rank(trials, records)


def _is_unlisted(trial: _Trial) -> bool:
    return trial.dialect.name in UNLISTED_ENGINES


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


def _rank(trials: list[_Trial], records: list[bytes] | None) -> list[Candidate]:
    by_key = {(tr.dialect.name, tr.framed): tr for tr in trials}
    weighted = [(tr, *_weight(tr, by_key)) for tr in trials]
    order = [*PRIOR, *UNLISTED_ENGINES]

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
    framing = f"{len(records)} store_var records" if records and len(records) > 1 else "a store_var payload"
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
        out.append(Candidate(tr.dialect.name, round(max(confidence, 0.0), 4), tr.complete, tr.framed,
                             "; ".join(parts), in_top))
    return out
