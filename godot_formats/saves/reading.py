"""One reading of a file: the one place that decides its layers, framing and dialect.

``gf.open``, ``loads(..., "auto")``, ``convert`` and every command ask :func:`read` and
nothing else, so a file is read the same way everywhere, each record is decoded once, and
damage is reported as damage (a :class:`~godot_formats.errors.DamagedFileError`), never
as a reading in another engine version.  The rule, written out in docs/detect.md:

* A reading must explain the bytes.  A ``store_var`` frame may hold bytes after its value
  (``get_var`` skips them), but a value that leaves most of its frame unread is not a
  reading of it.
* Of the readings that explain every byte, the best ranked by :mod:`.detection` wins; when
  readings of different engine versions (or framings) read different values, the file is
  ambiguous (:class:`~godot_formats.errors.AmbiguousDialectError`) and the caller chooses.
* When no reading explains the file, it is damaged: the error is that of the most plausible
  reading, the one that reads the most bytes and records before failing (with the layers'
  own evidence first: an encrypted file says which engine wrote it), naming the record.
  With ``salvage`` the other records are kept, as ``get_var`` reads them (null for a bad
  one, whose frame it skips whole).

The file layers are a table, as ``tarfile.open`` has ``OPEN_METH``: :data:`LAYERS`, one row
per layer that Godot's ``FileAccess`` puts around the bytes (encryption, compression),
read outside in and written inside out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from ..core.dialects import Dialect, get_dialect
from ..core.errors import (
    AmbiguousDialectError,
    DamagedFileError,
    DecodeError,
    LostRecord,
    NotBinaryError,
    PasswordRequiredError,
    Remedy,
    SizeLimitError,
    WrongPasswordError,
)
from ..core.keys import same_value
from ..core.limits import MAX_FILE_SIZE, MAX_RATIO, RATIO_FLOOR
from ..layers import compression, encryption
from ..layers.base64form import sniff_base64
from ..layers.compression import BareStream
from ..layers.files import Readable, read_bounded
from ..layers.framing import MAX_FRAME_LENGTH, PREFIX_SIZE, FramingError, scan_frames
from ..layers.layer import Layer
from ..layers.magic import RESOURCE_MAGICS, SCENE_NOT_READ, looks_like_config, resource_form
from .detection import (
    LOST,
    Attempt,
    Candidate,
    Layout,
    engine_dialects,
    mostly_unread,
    rank,
    read_layout,
    readings,
)

__all__ = ["Layer", "LAYERS", "BareStream", "Reading", "read", "read_peeled", "read_value", "read_bounded", "peel",
           "Peeled", "config_text", "inflate_budget", "read_layer", "DEFAULT_MAX_RATIO", "RATIO_FLOOR",
           "DEFAULT_MAX_FILE_SIZE", "FRAMINGS"]

#: The largest file, and the largest plaintext after decryption and decompression, read unless
#: the caller says otherwise (:data:`godot_formats.core.limits.MAX_FILE_SIZE`, every kind's).
DEFAULT_MAX_FILE_SIZE = MAX_FILE_SIZE

#: A compressed layer may hold at most this many bytes per byte of the file (with a floor of
#: :data:`RATIO_FLOOR`), unless the caller says otherwise (:mod:`godot_formats.core.limits`);
#: ``max_ratio=0`` lifts the budget (``max_size`` still holds).
DEFAULT_MAX_RATIO = MAX_RATIO

#: ``framing=``: ``store_var`` records, one bare ``var_to_bytes`` value (``none``), or decided here.
FRAMINGS = ("auto", "none", "store_var")

#: What the readers take: a path, bytes or a binary file object (read by :func:`read_bounded`).
FileLike = Readable


# -- the layers ---------------------------------------------------------------------------------


#: The layers, outside in (``FileAccessEncrypted`` over ``FileAccessCompressed`` is how a file
#: could nest them; each is taken off at most once), each declared by its own module.
LAYERS: tuple[Layer, ...] = (encryption.LAYER, compression.LAYER)
LAYER_BY_NAME = {layer.name: layer for layer in LAYERS}


@attrs.define
class Peeled:
    """The bytes inside the layers, each layer's info, and the bytes after each layer's end."""

    raw: bytes
    data: bytes
    infos: dict[str, Any] = attrs.field(factory=dict)
    trailing: dict[str, bytes] = attrs.field(factory=dict)
    key: bytes | None = None
    #: Where ``data`` starts in the file (None: its positions do not map to the file's, decompressed).
    start: int | None = 0

    @property
    def offsets(self) -> str:
        """How offsets in ``data`` are named (the innermost layer's words), or "" for the file's own."""
        inner = [layer for layer in LAYERS if layer.name in self.infos]
        return f" {inner[-1].offsets}" if inner else ""


def _mode_id(mode: str | int) -> int:
    from ..layers.compression import MODES
    for m in MODES:
        names = (m.name.lower(), f"compression_{m.name}".lower())
        if mode == m.id or (isinstance(mode, str) and mode.lower() in names):
            return m.id
    raise ValueError(f"unknown compression mode {mode!r}; one of {', '.join(m.name for m in MODES)}")


def _key(password: str | None, key: bytes | None) -> bytes | None:
    if key is not None or password is None:
        return key
    from ..layers.encryption import key_from_password
    return key_from_password(password)


def inflate_budget(size: int, max_size: int, max_ratio: int) -> int:
    """The most bytes a layer of a ``size``-byte file may decompress to (see :data:`DEFAULT_MAX_RATIO`)."""
    return min(max_size, max(RATIO_FLOOR, size * max_ratio)) if max_ratio else max_size


def peel(raw: bytes, *, password: str | None = None, key: bytes | None = None, compressed: str | int | None = None,
         max_size: int = DEFAULT_MAX_FILE_SIZE, max_ratio: int = DEFAULT_MAX_RATIO) -> Peeled:
    """Take every layer of :data:`LAYERS` off ``raw``, outside in, each at most once.

    ``compressed`` names the mode of a bare ``PackedByteArray.compress`` stream, which has no
    header to know it by.  Bytes after a layer's end are kept in ``trailing`` (the engine
    never reads them; a writer puts them back).  A layer decompresses to at most
    :func:`inflate_budget` bytes (``max_ratio`` times the file's size, ``max_size`` at most).
    """

    out = Peeled(raw, raw, key=_key(password, key))
    budget = inflate_budget(len(raw), max_size, max_ratio)
    for layer in LAYERS:
        if bytes(out.data[:4]) not in layer.magics:
            continue
        inner, info, end = read_layer(layer, out.data, out.key, max_size, max_ratio, size=len(raw), within=out)
        inner_start = layer.inner_start(info)
        out.start = None if out.start is None or inner_start is None else out.start + inner_start
        out.infos[layer.name] = info
        if end < len(out.data):
            out.trailing[layer.name] = out.data[end:]
        out.data = inner
    if not out.infos and compressed is not None:
        from ..layers.compression import decompress
        mode = _mode_id(compressed)
        try:
            out.data = decompress(raw, mode, max_size=budget)
        except SizeLimitError as e:
            raise _over_budget(e, len(raw), budget, max_size, max_ratio) from None
        out.infos["compression"] = BareStream(mode)
    return out


def read_layer(layer: Layer, data: bytes, key: bytes | None, max_size: int, max_ratio: int = DEFAULT_MAX_RATIO, *,
               size: int | None = None, within: Peeled | None = None) -> tuple[bytes, Any, int]:
    """``layer.read`` within the budget of a file of ``size`` bytes (``len(data)`` by default):
    shared by :func:`peel` and ``FileAccess.open``, so both refuse the same bombs in the same words,
    and say where an error is in the same words (:func:`_where_in_layer`).  ``within``: the layers
    ``data`` was found inside (None: ``data`` is the file)."""

    file_size = len(data) if size is None else size
    budget = inflate_budget(file_size, max_size, max_ratio)
    try:
        try:
            return layer.read(data, key, budget)
        except SizeLimitError as e:
            raise _over_budget(e, file_size, budget, max_size, max_ratio) from None
    except DecodeError as e:
        e.where = _where_in_layer(e, layer, data, within)
        raise


def _where_in_layer(e: DecodeError, layer: Layer, data: bytes, within: Peeled | None) -> str:
    """Where a layer's error is, the one place that says it: in which bytes (the file's, or those
    inside an outer layer, with the file's own byte when it is known) and, for a field of the
    layer's header, that it is the header: ``at byte 8 of the file, in the compressed file's
    header: block size 0`` rather than an offset the reader cannot place."""
    outer = within.offsets if within is not None else ""
    if isinstance(e, (WrongPasswordError, PasswordRequiredError)) or e.offset >= layer.header_size(data):
        return outer  # the data after the header, or a password: no header field to point at
    if not outer:
        return f" of the file, in the {layer.noun} file's header"
    start = within.start if within is not None else None
    in_file = f" (byte {start + e.offset} of the file)" if start is not None else ""
    return f"{outer}{in_file}, in the {layer.noun} layer's header"


def _over_budget(e: DecodeError, size: int, budget: int, max_size: int, max_ratio: int) -> DecodeError:
    """A layer over its budget, in words that say which limit it is and how to lift it."""
    if budget < max_size:
        how = (f"more than {budget} bytes, the budget for a file of {size} bytes (max_ratio={max_ratio} times its "
               f"size, at least {RATIO_FLOOR}): a decompression bomb, or a save that compresses unusually well "
               f"(max_ratio= lifts it)")
    else:
        how = f"more than max_size={max_size} bytes"
    return DecodeError(e.offset, f"{e.reason}: the layer would decompress to {how}")


# -- text where bytes were expected -------------------------------------------------------------------

def config_text(data: bytes) -> str | None:
    """The text of a ``ConfigFile`` (:func:`~godot_formats.layers.magic.looks_like_config`: a ``[section]``
    or a ``key=`` first), or None; bytes that are not UTF-8 kept as the engines read them."""
    return data.decode("utf-8", "surrogateescape") if looks_like_config(data) else None


def _text_kind(data: bytes) -> tuple[str, str] | None:
    """What text ``data`` is, and the way to read it, or None for bytes that are not text.

    Binary Variants always hold a NUL byte (the second byte of every header is 0, and so is the
    last byte of every ``store_var`` length under 16 MiB), so text is UTF-8 with none.
    """
    if not data or b"\0" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        pass
    else:
        return "json", ("JSON text (a game's to_json / JSON.stringify save, or the JSON of `dump --json`), not "
                        "binary Variants: Godot reads it with JSON.parse as it is, so a migration leaves it alone; "
                        "only the JSON that `dump --json` writes is turned back into bytes, by `godot-formats load`")
    form = resource_form(data)
    if form == "text":
        return "resource", ("a text resource (gd_resource, what ResourceSaver.save writes as .tres), not binary "
                            "Variants: `gf.open` reads it and `godot-formats scan` checks it for code, without "
                            "loading it")
    if form == "scene":
        return "scene", SCENE_NOT_READ
    if looks_like_config(data):
        return "configfile", ("a ConfigFile text file (sections of key=value lines), not binary Variants: Godot "
                              "reads it with ConfigFile.load; `gf.open` reads it value by value, and `dump`, "
                              "`set`, `edit`, `convert` and `scan` work on it")
    if _godot_text(text):
        return "var2str", ("Godot text (var2str / var_to_str), not binary Variants: `godot-formats load FILE -o OUT` "
                           "writes it as bytes")
    return "text", "a text file (not Godot text, JSON nor ConfigFile), not binary Variants"


def _godot_text(text: str) -> bool:
    """Whether ``text`` is one value of Godot text in some engine version (the parser is linear)."""
    from ..core.errors import GodotFormatsError
    from ..views.text import from_text

    for version in ("godot4", "godot3"):
        try:
            from_text(text, version)
        except (GodotFormatsError, RecursionError):
            continue
        return True
    return False


# -- the reading ------------------------------------------------------------------------------------


@attrs.define(eq=False)
class Reading:
    """A file, read: its layers, framing, dialect (and why), and its records' values, decoded once.

    ``inner``: the bytes the records are spans of (the plaintext; for base64 text, the bytes it
    encodes).  ``spans``: each record's payload in ``inner``; ``ends``: where each value ends
    (the rest of its frame is slack).  ``values[i]`` is None for a record in ``lost`` (salvaged).
    ``damage``: what ended a salvaged file whose framing breaks.  ``candidates``: the ranked
    readings (what ``detect`` shows).
    """

    peeled: Peeled
    container: str
    dialect: Dialect
    why: str
    inner: bytes = b""
    byteorder: str = "little"
    spans: tuple[tuple[int, int], ...] = ()
    ends: tuple[int, ...] = ()
    values: list[Any] = attrs.field(factory=list)
    lost: list[LostRecord] = attrs.field(factory=list)
    damage: DecodeError | None = None
    settings_info: Any = None
    candidates: list[Candidate] = attrs.field(factory=list)
    also: list[str] = attrs.field(factory=list)  # other readings that read the same values


@attrs.frozen
class _Ask:
    """What the caller knows."""

    dialect: Dialect | None
    framing: str
    allow_objects: bool
    salvage: bool
    prefer: int | None  # the engine major version the layers say wrote the file
    bare_stream: bool
    thorough: bool = False  # every dialect's reading ranked (detect), not only what picks the winner


def read(file: FileLike, *, password: str | None = None, key: bytes | None = None,
         dialect: str | Dialect | None = None, framing: str = "auto", allow_objects: bool = False,
         max_size: int = DEFAULT_MAX_FILE_SIZE, salvage: bool = False,
         compressed: str | int | None = None, max_ratio: int = DEFAULT_MAX_RATIO) -> Reading:
    """Read a file of any engine version and layer once; see the module docstring.

    Raises :class:`~godot_formats.errors.AmbiguousDialectError` when readings disagree,
    :class:`~godot_formats.errors.DamagedFileError` (or a
    :class:`~godot_formats.framing.FramingError` when the frames break) when none explains
    the file, :class:`~godot_formats.errors.NotBinaryError` for text, and
    :class:`~godot_formats.errors.DecodeError` for a bad layer.
    """
    raw, _ = read_bounded(file, max_size)
    peeled = peel(raw, password=password, key=key, compressed=compressed, max_size=max_size, max_ratio=max_ratio)
    return read_peeled(peeled, dialect=dialect, framing=framing, allow_objects=allow_objects, salvage=salvage,
                       max_size=max_size)




def read_peeled(peeled: Peeled, *, dialect: str | Dialect | None = None, framing: str = "auto",
                allow_objects: bool = False, salvage: bool = False,
                max_size: int = DEFAULT_MAX_FILE_SIZE, thorough: bool = False) -> Reading:
    """:func:`read` of bytes whose layers are already off (errors name those bytes in ``where``).

    ``thorough``: rank every dialect's reading in ``candidates`` (what ``detect`` lists), not only
    what it takes to find the best one."""
    if bytes(peeled.raw[:4]) in RESOURCE_MAGICS:
        raise NotBinaryError("resource", f"a binary resource file ({bytes(peeled.raw[:4]).decode()}: what "
                             "ResourceSaver.save writes as .res), not store_var data: `gf.open` reads it "
                             "and `godot-formats scan` checks it for code, without loading it")
    if framing not in FRAMINGS:
        raise ValueError(f"framing must be one of {', '.join(FRAMINGS)}, not {framing!r}")
    try:
        reading = _read_peeled(peeled, dialect, framing, allow_objects, salvage, max_size, thorough)
    except DecodeError as e:
        e.where = peeled.offsets
        raise
    for error in [lost.error for lost in reading.lost] + ([reading.damage] if reading.damage else []):
        error.where = peeled.offsets
    return reading


def _read_peeled(peeled: Peeled, dialect: str | Dialect | None, framing: str, allow_objects: bool, salvage: bool,
                 max_size: int, thorough: bool) -> Reading:
    enc = peeled.infos.get("encryption")
    ask = _Ask(None if dialect is None else get_dialect(dialect), framing, allow_objects, salvage,
               enc.version if enc is not None else None, isinstance(peeled.infos.get("compression"), BareStream),
               thorough)
    data = peeled.data
    if data[:4] == b"ECFG":
        return _read_settings(peeled, ask, max_size)
    layered = bool(peeled.infos)
    if layered and not data:
        # Opened for writing and closed: a container of nothing, no record in it.
        return Reading(peeled, "store_var", _container_dialect(ask), "the file holds no record")
    if layered and not ask.bare_stream:
        text = config_text(data)
        if text is not None:
            return Reading(peeled, "text", _container_dialect(ask), "ConfigFile text", values=[text])
    decoded = None if ask.bare_stream else sniff_base64(data)
    if decoded is not None:
        return _choose(peeled, decoded, "base64", attrs.evolve(ask, framing="none"))
    if not layered:
        kind = _text_kind(data)
        if kind is not None:
            raise NotBinaryError(*kind)
    if ask.bare_stream:
        ask = attrs.evolve(ask, framing="none")
    return _choose(peeled, data, "store_var", ask)


def read_value(data: bytes | bytearray | memoryview, *, allow_objects: bool = False) -> Reading:
    """One bare ``var_to_bytes`` value of an unknown engine version (``loads(data, "auto")``): the
    same rule as for files, without layers or framing."""
    raw = bytes(data)
    ask = _Ask(None, "none", allow_objects, False, None, False)
    return _choose(Peeled(raw, raw), raw, "var_to_bytes", ask)


def _container_dialect(ask: _Ask) -> Dialect:
    return ask.dialect if ask.dialect is not None else get_dialect(f"godot{ask.prefer or 4}")


def _layouts(data: bytes, ask: _Ask) -> list[Layout]:
    out = [Layout.bare(data)] if ask.framing != "store_var" else []
    if ask.framing != "none":
        for byteorder in ("little", "big"):
            framed = Layout.frames(data, byteorder)
            if framed is not None:
                out.append(framed)
    return out


def _choose(peeled: Peeled, data: bytes, container: str, ask: _Ask) -> Reading:
    dialects = [ask.dialect] if ask.dialect is not None else engine_dialects()
    layouts = _layouts(data, ask)
    found = readings(data, layouts, dialects, ask.allow_objects, thorough=ask.thorough) if layouts else []
    ranked = rank(data, found, thorough=ask.thorough) if found else []
    fits = [(c, a) for c, a in ranked if c.confidence > 0 and (
        c.complete or (ask.bare_stream and not c.framed and a.read_all))]
    candidates = [c for c, _ in ranked]
    if not fits:
        try:
            return _damaged(peeled, data, container, ask, found, dialects, candidates)
        except DamagedFileError as e:
            e.ranked = candidates
            raise
    try:
        attempt, why, also = _pick(fits, ask.prefer)
    except AmbiguousDialectError as e:
        e.ranked = candidates
        raise
    if ask.dialect is not None:
        why = f"{ask.dialect.name} (given)"
    framed = attempt.framed
    return Reading(peeled, "store_var" if framed else ("base64" if container == "base64" else "var_to_bytes"),
                   attempt.dialect, why, data, attempt.layout.byteorder, attempt.layout.spans, attempt.ends,
                   list(attempt.values), candidates=candidates, also=also)


def _label(a: Attempt) -> str:
    return a.dialect.name + (" (store_var framed)" if a.framed else "")


def _pick(fits: list[tuple[Candidate, Attempt]], prefer: int | None) -> tuple[Attempt, str, list[str]]:
    """The best reading; among equally good ones, the layers' own version (``prefer``), unless
    they read different values: then the file is ambiguous."""
    top = [(c, a) for c, a in fits if c.ambiguous] or fits[:1]
    first: dict[tuple[int, bool], tuple[Candidate, Attempt]] = {}
    for c, a in top:
        first.setdefault((a.dialect.major, a.framed), (c, a))
    if len(first) > 1:
        chosen = next(iter(first.values()))[1]
        if not all(_same_values(chosen, a) for _, a in first.values()):
            names = sorted(first.values(), key=lambda ca: (ca[1].dialect.name in ("godot2",), ca[1].dialect.name))
            raise AmbiguousDialectError([a.dialect.name for _, a in names], [a.framed for _, a in names],
                                        [a.values for _, a in names])
    c, a = next(((c, a) for c, a in top if a.dialect.major == prefer), top[0])
    also = [_label(o) for _, o in first.values() if (o.dialect.major, o.framed) != (a.dialect.major, a.framed)]
    return a, f"detected {a.dialect.name}: {c.reason}", also


def _same_values(a: Attempt, b: Attempt) -> bool:
    try:
        return len(a.values) == len(b.values) and all(map(same_value, a.values, b.values))
    except (TypeError, ValueError):
        return False


def _plausible(ask: _Ask, order: dict[str, int]) -> Callable[[Attempt], tuple[int, int, int, int]]:
    """How plausible a failed reading is: the layers' own evidence first, then the bytes and the
    records it read before failing, then the dialects' order."""
    def key(a: Attempt) -> tuple[int, int, int, int]:
        return (int(a.dialect.major == ask.prefer), _explained(a), len(a.ends) if a.framed else 0,
                -order.get(a.dialect.name, len(order)))
    return key


def _explained(a: Attempt) -> int:
    """The bytes a failed reading explains: as far as it got, but nothing for one value that leaves most of
    the file unread (as for a frame: such a value is not a reading of the file)."""
    if not a.framed and a.read_all and mostly_unread(*a.layout.spans[0], a.ends[0]):
        return 0
    return a.bytes_read


def _damaged(peeled: Peeled, data: bytes, container: str, ask: _Ask, found: list[Attempt],
             dialects: Sequence[Dialect], candidates: list[Candidate]) -> Reading:
    """No reading explains the file: name the damage of the most plausible one (or salvage)."""
    held = _held_objects(data, ask, found)
    if held is not None:
        raise held
    frames, broken = scan_frames(data, "little")
    partial: Layout | None = None
    if broken is not None and frames and container != "base64" and ask.framing != "none":
        partial = Layout(True, tuple((pos + PREFIX_SIZE, pos + PREFIX_SIZE + size) for pos, size in frames))
        intact = readings(data, [partial], dialects, ask.allow_objects)
        if any(a.ends for a in intact):
            found = found + intact
        else:  # no dialect reads a value in the first frame: these are no frames (a bare value's bytes)
            partial = None
    if broken is not None and ask.framing == "store_var" and (partial is None or _one_value(data, dialects, ask)):
        raise FramingError(broken.offset, f"not store_var framed: the u32 length prefixes do not tile the file "
                                          f"(try --framing none): {broken.reason}")
    if not found:
        raise DecodeError(0, "no engine version reads this file: it is empty" if not data else
                          "no engine version reads this file")
    order = {d.name: i for i, d in enumerate(dialects)}
    best = max(found, key=_plausible(ask, order))
    if not best.framed:
        if _explained(best) == 0 and broken is not None and _a_frame_length(data) and container != "base64" \
                and ask.framing != "none":
            raise broken  # not even a header reads: what there is to say is how the frames break
        return _bare_damage(best, ask)
    every = read_layout(best.dialect, data, best.layout, ask.allow_objects, past_errors=True)
    n = len(best.layout.spans)
    lost = [LostRecord(i + 1, best.layout.spans[i][0] - PREFIX_SIZE, error) for i, error in every.lost]
    framing_damage = broken if best.layout is partial else None
    if ask.salvage and (every.values or framing_damage is None):
        values = [None if v is LOST else v for v in every.values]
        return Reading(peeled, "store_var", best.dialect,
                       f"salvaged as {best.dialect.name}: the dialect that reads the most of this damaged file",
                       data, best.layout.byteorder, best.layout.spans, every.ends, values, lost,
                       framing_damage or (lost[0].error if lost else None), candidates=candidates)
    if lost:
        first = lost[0]
        total = f"{n}+" if framing_damage is not None else str(n)
        others = len(every.values) - len(lost)
        damage = f"the file is damaged; {best.dialect.name} reads {others} other record(s)"
        raise DamagedFileError(first.error.offset, dialect=best.dialect.name, record=first.record, lost=lost,
                               **_record_damage(first.error, f"record {first.record} of {total}: ", damage))
    if framing_damage is not None:
        k = len(best.layout.spans)
        raise FramingError(framing_damage.offset, f"{framing_damage.reason}; records 1 to {k} are intact (",
                           remedy=Remedy.SALVAGE, then=" keeps them)")
    assert best.error is not None and best.failed is not None
    raise DamagedFileError(best.error.offset, dialect=best.dialect.name, record=best.failed + 1,
                           **best.error.reason_in(f"record {best.failed + 1} of {n}: ",
                                                  f" (the file is damaged; read as {best.dialect.name})"))


def _held_objects(data: bytes, ask: _Ask, found: Sequence[Attempt]) -> DamagedFileError | None:
    """The error of a file that no reading explains only because it holds full Objects the caller did not
    allow: a reading that a refused Object stopped (:attr:`Remedy.ALLOW_OBJECTS`) and that, reading them,
    explains every byte.  The reader finds this out once, on its way to the error, so that the error names
    the remedy and no caller reads the file again to learn what would help.  None for anything else."""
    if ask.allow_objects:
        return None
    tried: set[tuple[str, Layout]] = set()
    for a in found:
        if a.error is None or a.error.remedy is not Remedy.ALLOW_OBJECTS or (a.dialect.name, a.layout) in tried:
            continue
        tried.add((a.dialect.name, a.layout))
        if any(c.complete for c, _ in rank(data, [read_layout(a.dialect, data, a.layout, True)])):
            record = None if not a.framed or a.failed is None else a.failed + 1
            before = f"record {record} of {len(a.layout.spans)}: " if record is not None else ""
            return DamagedFileError(a.error.offset, dialect=a.dialect.name, record=record,
                                    **a.error.reason_in(before, f"; {a.dialect.name} reads the rest of the file"))
    return None


def _record_damage(error: DecodeError, before: str, damage: str) -> dict[str, Any]:
    """The words of a damaged file whose first bad record failed with ``error``: that error's own remedy when it
    names one (a full Object: allow_objects reads the record, and loses nothing), else salvage, which keeps the
    other records."""
    if error.remedy is not None:
        return error.reason_in(before, f" ({damage})")
    return {"reason": f"{before}{error.reason} ({damage}: ", "remedy": Remedy.SALVAGE, "then": " keeps them)"}


def _a_frame_length(data: bytes) -> bool:
    """Whether ``data`` starts with a length the engine could have written (it reads it as a signed int)."""
    return len(data) >= PREFIX_SIZE and int.from_bytes(data[:PREFIX_SIZE], "little") <= MAX_FRAME_LENGTH


def _one_value(data: bytes, dialects: Sequence[Dialect], ask: _Ask) -> bool:
    """Whether some dialect reads ``data`` whole as one bare value (then its "frames" are no frames)."""
    return any(a.read_all and a.ends[0] == len(data)
               for a in readings(data, [Layout.bare(data)], dialects, ask.allow_objects))


def _bare_damage(best: Attempt, ask: _Ask) -> Reading:
    error = best.error
    if error is None:  # the value reads, and bytes follow it
        end = best.ends[0]
        error = DecodeError(end, f"{best.layout.spans[0][1] - end} byte(s) after the value, which ends at byte {end}")
    before, after = ("", "") if ask.dialect is not None else \
        (f"no engine dialect reads this file (as {best.dialect.name}, the one that reads the most: ", ")")
    if ask.salvage:
        after += "; it is one var_to_bytes value, with no records to salvage"
    raise DamagedFileError(error.offset, dialect=best.dialect.name, explained=_explained(best),
                           **error.reason_in(before, after))


def _read_settings(peeled: Peeled, ask: _Ask, max_size: int) -> Reading:
    from ..layers.project_settings import read_ecfg
    names = [ask.dialect] if ask.dialect is not None else [get_dialect(n) for n in ("godot4", "godot3", "godot2")]
    errors = []
    for d in names:
        try:
            settings, info = read_ecfg(peeled.data, d, allow_objects=True, max_size=max_size,
                                       strict=ask.dialect is None)
        except DecodeError as e:
            errors.append((d.name, e))
            continue
        return Reading(peeled, "project_settings", d, f"project settings, read as {d.name}", peeled.data,
                       values=[settings], settings_info=info)
    name, err = max(errors, key=lambda pair: pair[1].offset)
    raise DecodeError(err.offset, f"project settings, as {name}: {err.reason}")
