"""The text resource file (``.tres``, ``[gd_resource ...]``): read into a :class:`~.model.ResourceFile`
and written back as the engine writes it.

Why a reader of our own: the engine *loads* a ``.tres`` (it builds every object, loads every
``[ext_resource]`` and runs scripts: an embedded ``GDScript`` sub-resource runs on load), and a
save file from a stranger must be read without any of that.  We parse and never load.

The file, as ``ResourceFormatSaverTextInstance::save`` writes it and ``ResourceLoaderText::load``
reads it (Godot 3 forms on the right)::

    [gd_resource type="Resource" script_class="SaveData" load_steps=4 format=3 uid="uid://..."]

    [ext_resource type="Script" uid="uid://..." path="res://inner.gd" id="1"]     path= type= id=1

    [sub_resource type="Resource" id="Resource_bc5hj"]                                     id=1
    script = ExtResource("1")                                              ExtResource( 1 )
    note = "hello"

    [resource]
    inner = SubResource("Resource_bc5hj")                                  SubResource( 1 )

Each value is ``VariantWriter`` text, which the library's :mod:`godot_formats.views.text` reads
and writes already; the only difference is that a resource is written ``ExtResource(id)``,
``SubResource(id)`` or ``Resource("path")``.  So the value parser hands those constructors to
this module's resolver (:data:`~godot_formats.views.text.parser.ResourceResolver`), and the
value writer asks this module how to write a resource
(:data:`~godot_formats.views.text.writer.ResourceEncoder`).

Formats: 1 is Godot 2's (from the sources only: no Godot 2 engine here to check it), 2 Godot 3's
(int ids, ``ExtResource( 1 )``), 3 Godot 4's (string ids), 4 Godot 4.3+'s when a value holds a
PackedVector4Array or a PackedByteArray over 64 bytes; every PackedByteArray of a format 4 file
is then base64, ``PackedByteArray("AQID")``.  ``load_steps`` (resources + external resources,
written when over 1) is gone from Godot 4.6's files.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Any, Union

import attrs

from ..core import types as t
from ..core.errors import EncodeError, ResourceFormatError, TextDecodeError
from ..core.registry import Family, spec_for
from ..layers.magic import SCENE_NOT_READ
from ..views.text.parser import ResourceResolver, read_value
from ..views.text.writer import c_escape_multiline, to_text
from .model import WRITERS, ExtResource, Resource, ResourceFile

__all__ = ["read_text", "write_text", "uid_from_text", "uid_to_text", "FORMAT_ENGINES"]

#: Text format version -> the engine major version that writes it.
FORMAT_ENGINES: dict[int, int] = {1: 2, 2: 3, 3: 4, 4: 4}
#: The value text of each file style: 3 for formats 1 and 2 (``Vector2( 1, 2 )``), 4 for 3 and 4.
_DIALECTS = {3: "godot3", 4: "godot4"}

#: Attribute order of each tag as the engines write them (Godot 3 writes no script_class or uid).
_HEADER_ORDER = ("type", "script_class", "load_steps", "format", "uid")
_EXT_ORDER = {3: ("path", "type", "id", "uid"), 4: ("type", "uid", "path", "id")}
_SUB_ORDER = ("type", "id")

_BLANKS = re.compile(r"[ \t\r\f\v]*")
_SPACES = re.compile(r"[\x00-\x20]*")  # the engine's tokenizer skips every character up to ' '
_LINE_END = re.compile(r"[ \t\r\f\v]*(;[^\n]*)?(?:\n|\Z)")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BARE_NAME = re.compile(r'[^\x00-\x20=";]+')
_MASK64 = (1 << 64) - 1
_BARE_LF = re.compile(r"(?<!\r)\n")

_Id = Union[int, str]


def _style(version: int) -> int:
    """The engine family whose text a format version holds: 3 (formats 1, 2) or 4 (formats 3, 4)."""
    return 3 if version <= 2 else 4


# -- uids ------------------------------------------------------------------------------------------

#: ``ResourceUID``'s text base: 25 letters (a-y) then 9 digits (0-8), ``('z' - 'a') + ('9' - '0')``.
_UID_BASE = 34
_UID_LETTERS = 25


def uid_from_text(text: str) -> int | None:
    """``ResourceUID::text_to_id``: the id a ``uid://...`` text stands for, None where the engine
    gets INVALID_ID.  The engine's own arithmetic (a uint64 that wraps, ``z`` and ``9`` taken as
    25 and 34), so that every text means here what it means to the engine."""
    if not text.startswith("uid://") or text == "uid://<invalid>":
        return None
    uid = 0
    for c in text[6:]:
        if "a" <= c <= "z":
            digit = ord(c) - ord("a")
        elif "0" <= c <= "9":
            digit = ord(c) - ord("0") + _UID_LETTERS
        else:
            return None
        uid = (uid * _UID_BASE + digit) & _MASK64
    return uid & 0x7FFF_FFFF_FFFF_FFFF


def uid_to_text(uid: int) -> str:
    """``ResourceUID::id_to_text``: ``0`` -> ``uid://a``, ``25`` -> ``uid://0``, negative -> ``uid://<invalid>``."""
    if uid < 0:
        return "uid://<invalid>"
    digits = []
    while True:
        uid, c = divmod(uid, _UID_BASE)
        digits.append(chr(ord("a") + c) if c < _UID_LETTERS else chr(ord("0") + c - _UID_LETTERS))
        if not uid:
            return "uid://" + "".join(reversed(digits))


def _attr_text(name: str, value: Any) -> str:
    """An attribute's value as the engine writes it in a tag: ``id=1``, ``id="1"``, ``uid="uid://..."``.

    The engine writes strings raw between quotes; we escape backslashes and quotes, which changes
    nothing for any path or id the engine could read back (a raw quote would end the string).
    """
    if name == "uid":
        return '"' + uid_to_text(value) + '"'
    if type(value) is int:
        return str(value)
    return '"' + c_escape_multiline(value) + '"'


# -- reading ---------------------------------------------------------------------------------------


@attrs.define
class _Tag:
    """One ``[name key=value ...]`` line: its attributes in file order, each with its source text."""

    name: str
    pos: int  # offset of its '['
    fields: dict[str, Any] = attrs.field(factory=dict)
    raws: dict[str, str] = attrs.field(factory=dict)  # each value's text as the file has it
    at: dict[str, int] = attrs.field(factory=dict)  # where each value starts, for an error

    def where(self, name: str) -> int:
        return self.at.get(name, self.pos)


class _Reader:
    """Reads one file, item by item (a tag, or a ``name = value`` property), left to right.

    The text is never split or copied: the value parser reads each value in place and says where
    it ended, so the work is linear in the file, and every error names the line and column.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.version = 3
        self.dialect = "godot4"  # until the header says the format: tag values are plain strings and ints
        self.external: list[ExtResource] = []
        self.ext_by_id: dict[str, ExtResource] = {}
        self.resources: list[Resource] = []
        self.sub_by_id: dict[str, Resource] = {}
        self.loose: dict[str, ExtResource] = {}  # Resource("path") references, one object per path
        self.ext_tags: dict[str, Any] = {}
        self.sub_tags: dict[str, Any] = {}
        self.comments = 0
        self.repeated = ""  # the first property a section sets twice (the engine keeps the last value)
        self.notes: list[str] = []

    def error(self, pos: int, reason: str) -> ResourceFormatError:
        return ResourceFormatError(pos, reason, self.text)

    # -- the lines

    def next_item(self) -> tuple[int, int]:
        """Skip blank and comment lines: how many blank lines there were, and where the next item
        starts (-1 at the end of the file)."""
        text, blank = self.text, 0
        while self.pos < len(text):
            start = _BLANKS.match(text, self.pos).end()  # type: ignore[union-attr]
            if start >= len(text) or text[start] == "\n":
                blank += 1
                self.pos = start + 1
            elif text[start] == ";":
                self.comments += 1
                end = text.find("\n", start)
                self.pos = len(text) if end < 0 else end + 1
            else:
                return blank, start
        return blank, -1

    def end_line(self, pos: int, what: str) -> None:
        """Nothing but blanks (and a ``;`` comment) may follow an item on its line."""
        m = _LINE_END.match(self.text, pos)
        if m is None:
            raise self.error(pos, f"unexpected text after {what}")
        self.comments += m.group(1) is not None
        self.pos = m.end()

    def value(self, pos: int, resources: ResourceResolver | None) -> tuple[Any, int]:
        """The value at ``pos`` and where it ends, read by the library's value parser."""
        try:
            return read_value(self.text, pos, self.dialect, resources=resources)
        except TextDecodeError as e:
            raise self.error(e.offset, e.reason) from None

    # -- tags

    def tag(self, pos: int) -> _Tag:
        """``[name key=value ...]`` at ``pos`` (its '['): values are read as the engine reads them."""
        text = self.text
        m = _WORD.match(text, pos + 1)
        if m is None:
            raise self.error(pos + 1, "expected a tag name after '['")
        tag = _Tag(m.group(), pos)
        at = m.end()
        while True:
            at = _SPACES.match(text, at).end()  # type: ignore[union-attr]
            if text.startswith("]", at):
                self.end_line(at + 1, f"the [{tag.name}] tag")
                return tag
            key = _WORD.match(text, at)
            if key is None:
                raise self.error(at, f"expected an attribute name or ']' in the [{tag.name}] tag")
            name = key.group()
            at = _SPACES.match(text, key.end()).end()  # type: ignore[union-attr]
            if not text.startswith("=", at):
                raise self.error(at, f"expected '=' after {name} in the [{tag.name}] tag")
            at = _SPACES.match(text, at + 1).end()  # type: ignore[union-attr]
            if name in tag.fields:
                raise self.error(key.start(), f"{name} is given twice in the [{tag.name}] tag")
            value, end = self.value(at, None)
            tag.fields[name], tag.raws[name], tag.at[name] = value, text[at:end], at
            at = end

    def field(self, tag: _Tag, name: str, kinds: tuple[type, ...], required: bool = True) -> Any:
        """An attribute of ``tag``, of one of ``kinds`` (exactly: a bool is no int here)."""
        if name not in tag.fields:
            if required:
                raise self.error(tag.pos, f"the [{tag.name}] tag has no {name}=")
            return None
        value = tag.fields[name]
        if type(value) not in kinds:
            wanted = " or ".join("an integer" if k is int else "a string" for k in kinds)
            raise self.error(tag.where(name), f"{name} in the [{tag.name}] tag must be {wanted}, not {value!r:.60}")
        return value

    def uid(self, tag: _Tag) -> int | None:
        """The tag's ``uid="uid://..."``; an invalid one stays in the file's text (as an unknown
        attribute, written back as it was) and the model has none, as the engine has none."""
        text = self.field(tag, "uid", (str,), required=False)
        return None if text is None else uid_from_text(text)

    @staticmethod
    def tag_layout(tag: _Tag, values: dict[str, Any]) -> dict[str, Any]:
        """What a tag says beyond the model's ``values`` (the attributes the model holds): the
        attribute order, unknown attributes' text, and a value's text where it is not the one the
        writer would give it (``id=01``), each with the value it stood for."""
        extra = {n: tag.raws[n] for n in tag.fields if n not in values}
        raw = {n: (tag.raws[n], v) for n, v in values.items() if _attr_text(n, v) != tag.raws[n]}
        return {"order": list(tag.fields), "extra": extra, "raw": raw}

    def header(self) -> tuple[dict[str, Any], dict[str, Any], int]:
        """The ``[gd_resource ...]`` tag: the model's header, its layout, and blank lines before it."""
        blank, pos = self.next_item()
        if pos < 0 or self.text[pos] != "[":
            raise self.error(len(self.text) if pos < 0 else pos, "a text resource starts with a [gd_resource ...] tag")
        tag = self.tag(pos)
        if tag.name == "gd_scene":
            raise self.error(pos, SCENE_NOT_READ)
        if tag.name != "gd_resource":
            raise self.error(pos, f"a text resource starts with [gd_resource ...], not [{tag.name} ...]")
        fmt = self.field(tag, "format", (int,))
        if fmt not in FORMAT_ENGINES:
            raise self.error(tag.where("format"), f"format={fmt}: text resources have formats 1 (Godot 2) "
                                                  "to 4 (Godot 4.3+)")
        self.version, self.dialect = fmt, _DIALECTS[_style(fmt)]
        header = {"type": self.field(tag, "type", (str,)),
                  "load_steps": self.field(tag, "load_steps", (int,), required=False),
                  "script_class": self.field(tag, "script_class", (str,), required=False),
                  "uid": self.uid(tag)}
        values = {n: v for n, v in header.items() if v is not None}
        values["format"] = fmt
        return header, self.tag_layout(tag, values), blank

    def ext_resource(self, tag: _Tag) -> None:
        ident = self.field(tag, "id", (int, str))
        values = {"type": self.field(tag, "type", (str,)), "path": self.field(tag, "path", (str,)), "id": ident}
        uid = self.uid(tag)
        if uid is not None:
            values["uid"] = uid
        key = str(ident)
        if key in self.ext_by_id:
            raise self.error(tag.where("id"), f"a second [ext_resource] with the id {ident!r}")
        ext = ExtResource(values["type"], values["path"], uid, ident)
        self.external.append(ext)
        self.ext_by_id[key] = ext
        self.ext_tags[key] = self.tag_layout(tag, values)

    def sub_resource(self, tag: _Tag) -> Resource:
        """A new sub-resource, known by its id from here on (its own properties may name it, as in
        the engine, which maps the id before it reads them)."""
        ident = self.field(tag, "id", (int, str))
        values = {"type": self.field(tag, "type", (str,)), "id": ident}
        key = str(ident)
        if key in self.sub_by_id:
            raise self.error(tag.where("id"), f"a second [sub_resource] with the id {ident!r}")
        res = Resource(values["type"], {}, ident)
        self.resources.append(res)
        self.sub_by_id[key] = res
        self.sub_tags[key] = self.tag_layout(tag, values)
        return res

    # -- properties

    def resolve(self, kind: str, args: tuple[_Id, ...]) -> Any:
        """The value parser's resolver: ``ExtResource(id)``, ``SubResource(id)``, ``Resource("path")``.

        Ids are compared as text, as the engine does (``String id = token.value``), so ``1`` and
        ``"1"`` are one id.  A sub-resource must be defined above its use, as the engine needs.
        """
        if kind == "ExtResource":
            ext = self.ext_by_id.get(str(args[0]))
            if ext is None:
                raise ValueError(f"ExtResource({args[0]!r}) names no [ext_resource] of this file")
            return ext
        if kind == "SubResource":
            sub = self.sub_by_id.get(str(args[0]))
            if sub is None:
                raise ValueError(f"SubResource({args[0]!r}) names no [sub_resource] above it (the engine "
                                 "reads sub-resources in file order)")
            return sub
        path = str(args[-1])
        ref = self.loose.get(path)
        if ref is None:
            uid = uid_from_text(str(args[0])) if len(args) == 2 else None
            ref = self.loose[path] = ExtResource("Resource", path, uid)
        return ref

    def property(self, owner: Resource, pos: int) -> None:
        """``name = value`` at ``pos``: the name bare, or quoted when it holds what a bare one cannot."""
        text = self.text
        if text[pos] == '"':
            name, at = self.value(pos, None)
        else:
            m = _BARE_NAME.match(text, pos)
            if m is None:
                raise self.error(pos, "expected a property name (or a [tag])")
            name, at = m.group(), m.end()
        if type(name) is not str or not name:
            raise self.error(pos, "expected a property name (a non-empty string)")
        at = _BLANKS.match(text, at).end()  # type: ignore[union-attr]
        if not text.startswith("=", at):
            raise self.error(at, f"expected '=' after the property name {name!r:.60}")
        at += 1
        if self.dialect == "godot3" and _LINE_END.match(text, at):
            value, end = t.RID(), at  # Godot 3 writes a RID as nothing at all
        else:
            value, end = self.value(at, self.resolve)
        if name in owner.properties and not self.repeated:
            self.repeated = f"line {text.count(chr(10), 0, pos) + 1}: property {name!r:.60} set again"
        owner.properties[name] = value
        self.end_line(end, f"the value of {name!r:.60}")

    # -- the file

    def section(self, tag: _Tag, current: Resource | None, main_type: str) -> Resource | None:
        """Start the section a tag opens: the resource that the next properties belong to."""
        if tag.name == "ext_resource":
            if current is not None:
                raise self.error(tag.pos, "[ext_resource] after a [sub_resource]: external resources come first")
            self.ext_resource(tag)
            return None
        if tag.name == "sub_resource":
            return self.sub_resource(tag)
        if tag.name == "resource":
            return Resource(main_type, {}, None)
        if tag.name in ("gd_resource", "gd_scene"):
            raise self.error(tag.pos, f"a second file header [{tag.name} ...]")
        raise self.error(tag.pos, f"unexpected tag [{tag.name}] in a resource file (it has [ext_resource], "
                                  "[sub_resource] and [resource] sections)")

    def read(self) -> ResourceFile:
        header, header_tag, leading = self.header()
        current: Resource | None = None
        main: Resource | None = None
        main_tag: dict[str, Any] = {}
        gaps: list[int] = []
        while True:
            blank, pos = self.next_item()
            if pos < 0:
                break
            if self.text[pos] != "[":
                if current is None:
                    raise self.error(pos, "a property outside a [sub_resource] or [resource] section")
                self.property(current, pos)
                continue
            gaps.append(blank)
            tag = self.tag(pos)
            if main is not None:
                raise self.error(pos, f"[{tag.name}] after [resource]: the main resource is the file's last section")
            current = self.section(tag, current, header["type"])
            if tag.name == "resource":
                main, main_tag = current, self.tag_layout(tag, {})
        if main is None:
            raise self.error(len(self.text), "the file ends without a [resource] section (the main resource)")
        if self.repeated:
            self.notes.append(f"{self.repeated} (and maybe others): the last value is kept, as the engine keeps it")
        if self.comments:
            self.notes.append(f"{self.comments} comment(s) dropped: the engine writes none and keeps none")
        layout = {"style": _style(self.version), "load_steps": header["load_steps"] is not None,
                  "header_tag": header_tag, "ext_tags": self.ext_tags, "sub_tags": self.sub_tags,
                  "resource_tag": main_tag, "gaps": gaps, "leading": leading, "trailing": blank,
                  "final_newline": self.text.endswith("\n")}
        return ResourceFile(main, self.resources, self.external, engine=FORMAT_ENGINES[self.version],
                            format="text", version=self.version, header=header, layout=layout, notes=self.notes)


def _decode(data: bytes | str) -> tuple[str, bool]:
    """The file's text (UTF-8, as the engine reads it) and whether it began with a byte order mark."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            shown = raw.decode("utf-8", "replace")
            offset = len(raw[:e.start].decode("utf-8", "replace"))
            raise ResourceFormatError(offset, "the file is not UTF-8 text", shown) from None
    elif isinstance(data, str):
        text = data
    else:
        raise TypeError(f"read_text() reads bytes or str, not {type(data).__name__}")
    bom = text.startswith("\ufeff")
    return (text[1:] if bom else text), bom


def read_text(data: bytes | str) -> ResourceFile:
    """Read a text resource (``.tres``): a :class:`ResourceFile` with ``format="text"``, ``version``
    the header's format, ``engine`` 2, 3 or 4 (formats 1, 2, 3-4).

    A sub-resource is one :class:`Resource` wherever it is used; an ``ExtResource(...)`` value is
    the :class:`ExtResource` of ``external`` it names, and a ``Resource("path")`` value an
    ExtResource that is not in ``external`` (one per path).  ``header`` holds ``type``,
    ``load_steps`` (None when absent), ``script_class`` and ``uid`` (int, or None); ``layout``
    holds what :func:`write_text` needs to write the same bytes back.

    Nothing is loaded or run.  A scene (``[gd_scene]``), anything out of place and any value that
    does not parse raise :class:`~godot_formats.errors.ResourceFormatError` naming the line.
    """
    text, bom = _decode(data)
    rf = _Reader(text).read()
    rf.layout["bom"] = bom
    rf.layout["crlf"] = "\n" in text and text.count("\n") == text.count("\r\n")
    return rf


# -- writing ---------------------------------------------------------------------------------------

#: What a generated Godot 4 sub-resource id is made of: the engine's 5 characters of ``a-y0-8``.
_ID_CHARS = "abcdefghijklmnopqrstuvwxy012345678"


def _fresh_sub_id(type_name: str, index: int, used: set[str]) -> str:
    """A Godot 4 sub-resource id for a resource that has none: ``<Class>_<5 characters>``, like the
    engine's (which seeds its generator from the save path; ours from the class and position, so
    the same model gives the same file)."""
    attempt = 0
    while True:
        digest = hashlib.blake2b(f"{type_name}_{index}_{attempt}".encode(), digest_size=8).digest()
        number = int.from_bytes(digest, "little")
        code = ""
        for _ in range(5):
            number, c = divmod(number, len(_ID_CHARS))
            code += _ID_CHARS[c]
        ident = f"{type_name}_{code}"
        if ident not in used:
            return ident
        attempt += 1


def _local_id(ident: Any) -> Any:
    """A binary file's sub-resource path (``local://Resource_bc5hj``) is its text id (``Resource_bc5hj``)."""
    return ident[len("local://"):] if isinstance(ident, str) and ident.startswith("local://") else ident


def _godot3_ids(objects: Sequence[Any], keep: bool) -> list[_Id]:
    """Godot 3 ids are ints: a text file's are kept when every one is a distinct int, else (and for
    a model from elsewhere: a binary file's ids are its table indexes) 1, 2 ... in file order."""
    ids = [o.id for o in objects]
    if keep and all(type(i) is int for i in ids) and len(set(ids)) == len(ids):
        return ids
    return list(range(1, len(objects) + 1))


def _godot3_sub_ids(resources: Sequence[Resource]) -> list[_Id]:
    """The ids Godot 3's text saver gives sub-resources loaded from a binary file: the loader
    sets each one's subindex from its path (``local://4`` is 4), the saver keeps a subindex that
    is not 0 and not taken already (in save order), and gives each other one the largest id
    taken + 1 (``ResourceFormatSaverTextInstance::save``)."""
    subindex = []
    for res in resources:
        local = _local_id(res.id)
        n = int(local) if isinstance(local, str) and local.isascii() and local.isdigit() else 0
        subindex.append(n if 0 < n < 1 << 31 else 0)
    used: set[int] = set()
    for i, n in enumerate(subindex):
        if n in used:
            subindex[i] = 0  # repeated
        elif n:
            used.add(n)
    top = max(used, default=0)
    out: list[_Id] = []
    for n in subindex:
        if not n:
            top = n = top + 1
        out.append(n)
    return out


def _save_order(rf: ResourceFile, major: int) -> tuple[list[Resource], list[ExtResource]]:
    """The sub-resources and external resources in the order the engine's text saver finds them
    (``_find_resources``): depth first from the main resource, each resource's properties sorted
    by name, a sub-resource after the ones it holds; Godot 3 looks into a Dictionary's values,
    Godot 4 into its keys and values.  A binary file lists them in another order (its saver does
    not sort), so a ``.res`` written as text takes this one, which is the engine's own ``.tres``.
    Resources nothing reaches are kept, after the others, in the file's order.

    The external resources' ids of an *editor* build (``TOOLS_ENABLED``) follow the address of
    each loaded resource in memory instead (``Map<RES, int>``): no file says what that is, so
    this is the order of the export templates, which games run."""
    by_path = {e.path: e for e in rf.external}
    subs: list[Resource] = []
    exts: list[ExtResource] = []
    seen: set[int] = {id(rf.main)}
    stack: list[tuple[Any, Resource | None]] = [(iter(_sorted_values(rf.main)), rf.main)]
    while stack:
        it, owner = stack[-1]
        value = next(it, _END)
        if value is _END:
            stack.pop()
            if owner is not None and owner is not rf.main:
                subs.append(owner)
            continue
        if isinstance(value, t.ContainerType) and value.script is not None:
            value = by_path.get(value.script)
        if isinstance(value, ExtResource):
            if id(value) not in seen:
                seen.add(id(value))
                exts.append(value)
        elif isinstance(value, Resource):
            if id(value) not in seen:
                seen.add(id(value))
                stack.append((iter(_sorted_values(value)), value))
        elif id(value) in seen:  # a container met before holds nothing new (and may hold itself)
            continue
        elif isinstance(value, list):  # an Array; a typed one's script first (Godot 4)
            seen.add(id(value))
            typed = getattr(value, "element_type", None)
            stack.append((iter([typed, *value] if typed is not None else value), None))
        elif isinstance(value, (dict, t.Dictionary)):
            seen.add(id(value))
            if major >= 4:
                types = [getattr(value, "key_type", None), getattr(value, "value_type", None)]
                stack.append((iter([*types, *(x for pair in value.items() for x in pair)]), None))
            else:
                stack.append((iter(list(value.values())), None))
    subs += [r for r in rf.resources if id(r) not in seen]
    exts += [e for e in rf.external if id(e) not in seen]
    return subs, exts


_END = object()


def _sorted_values(res: Resource) -> list[Any]:
    return [value for _, value in sorted(res.properties.items(), key=lambda item: str(item[0]))]


def _godot4_ids(objects: Sequence[Any], keep: bool, fresh: Callable[[int, set[str]], _Id]) -> list[_Id]:
    """Godot 4 ids: an id the model holds is kept (an int one becomes its text, as Godot 4 does
    with a Godot 3 file, unless ``keep``); a missing one is made by ``fresh(index, used)``."""
    out: list[_Id] = []
    used: set[str] = set()
    for i, o in enumerate(objects):
        ident = _local_id(o.id)
        if type(ident) is int and not keep:
            ident = str(ident)
        if type(ident) not in (int, str) or ident == "":
            ident = fresh(i, used)
        if str(ident) in used:
            raise EncodeError(f"two resources of the file have the id {ident!r}")
        used.add(str(ident))
        out.append(ident)
    return out


def _fresh_ext_id(index: int, used: set[str]) -> str:
    """``"1"``, ``"2"`` ...: what an export template writes (an editor adds ``_<5 characters>``)."""
    n = index + 1
    while str(n) in used:
        n += 1
    return str(n)


def _tag_layout(layout: Any) -> tuple[list[str], dict[str, str], dict[str, Any]]:
    """A tag's recorded layout (see :meth:`_Reader.tag_layout`), or nothing for anything else."""
    if not isinstance(layout, dict):
        return [], {}, {}
    order, extra, raw = layout.get("order"), layout.get("extra"), layout.get("raw")
    if not (isinstance(order, list) and isinstance(extra, dict) and isinstance(raw, dict)):
        return [], {}, {}
    return ([n for n in order if isinstance(n, str)], {n: v for n, v in extra.items() if isinstance(v, str)},
            {n: v for n, v in raw.items() if isinstance(v, (tuple, list)) and len(v) == 2 and isinstance(v[0], str)})


def _tag_line(name: str, values: dict[str, Any], engine_order: Sequence[str], layout: Any) -> str:
    """``[name key=value ...]``: the engine's attribute order, or the one the file had (and its
    unknown attributes, and a value's own text where the value is still the one it stood for)."""
    recorded, extra, raw = _tag_layout(layout)
    extra = {n: text for n, text in extra.items() if n not in values and _WORD.fullmatch(n)}
    order = [n for n in recorded if n in values or n in extra]
    order += [n for n in engine_order if n in values and n not in order]
    parts = [name]
    for n in order:
        if n in extra:
            parts.append(f"{n}={extra[n]}")
            continue
        value = values[n]
        kept = raw.get(n)
        same = kept is not None and type(kept[1]) is type(value) and kept[1] == value
        parts.append(f"{n}={kept[0] if same else _attr_text(n, value)}")  # type: ignore[index]
    return "[" + " ".join(parts) + "]"


def _property_name(name: Any) -> str:
    """``String::property_name_encode``: bare, or quoted and escaped when it holds ``= " ; [ ]``, a
    blank or anything beyond ASCII (the same rule in Godot 3 and 4)."""
    if not isinstance(name, str) or not name:
        raise EncodeError(f"a property name must be a non-empty string, not {name!r:.60}")
    if any(c in '=";[]' or not "!" <= c <= "~" for c in name):
        return '"' + c_escape_multiline(name).replace("\0", "\\u0000") + '"'  # a NUL ends an engine's string
    return name


def _string(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise EncodeError(f"{what} must be a string, not {value!r:.60}")
    return value


def _needs_format_4(rf: ResourceFile) -> bool:
    """Godot 4.3+'s choice (``_find_resources``): format 4 when a value holds a PackedVector4Array
    or a PackedByteArray over 64 bytes, else 3, which Godot 4.0-4.2 can read too."""
    stack: list[Any] = [r.properties for r in (*rf.resources, rf.main)]
    seen: set[int] = set()
    while stack:
        value = stack.pop()
        spec = spec_for(value)
        if spec is None or id(value) in seen:
            continue
        if spec.name == "PackedVector4Array" or (spec.name == "PackedByteArray" and len(bytes(value)) > 64):
            return True
        if spec.family in (Family.ARRAY, Family.DICTIONARY, Family.OBJECT):
            seen.add(id(value))
            if spec.family is Family.ARRAY:
                stack.extend(value)
            elif spec.family is Family.DICTIONARY:
                stack.extend(x for pair in value.items() for x in pair)
            elif isinstance(value, t.Object):
                stack.extend(value.properties.values())
    return False


def _target_version(rf: ResourceFile, version: int | None) -> int:
    """The format to write: the one asked for; else the file's own; else the engine's choice."""
    if version is not None:
        if type(version) is not int or version not in FORMAT_ENGINES:
            raise EncodeError(f"text resource format {version!r}: formats are 1 (Godot 2) to 4 (Godot 4.3+)")
        return version
    if rf.format == "text" and type(rf.version) is int and rf.version in FORMAT_ENGINES:
        return rf.version
    if rf.engine == 4:
        return 4 if _needs_format_4(rf) else 3
    if rf.engine in (2, 3):
        return rf.engine - 1
    raise EncodeError(f"no text resource format for Godot {rf.engine!r}: engines 2, 3 and 4 have one")


class _Writer:
    """Writes one model in the style of one format: ids, the tags, each section's properties."""

    def __init__(self, rf: ResourceFile, target: int, text_version: str | None) -> None:
        self.rf = rf
        self.target = target
        self.major = _style(target)
        if text_version is not None and not text_version.startswith(f"{self.major}."):
            raise EncodeError(f"format {target} holds Godot {self.major} text, not Godot {text_version}'s")
        self.text_version = text_version
        from_text = rf.format == "text" and type(rf.version) is int and rf.version in FORMAT_ENGINES
        # The layout a file was read with (attribute order, blank lines, its ids as they are ...)
        # holds for a file of the same style only; a converted or new model gets the engine's.
        self.same = isinstance(rf.layout, dict) and rf.layout.get("style") == self.major
        self.layout: dict[str, Any] = rf.layout if self.same else {}
        self.dialect = _DIALECTS[self.major]
        if len({id(r) for r in (*rf.resources, rf.main)}) != len(rf.resources) + 1:
            raise EncodeError("a resource is listed twice in the file's resources (or the main one among them)")
        #: A binary file's model is written in the order, with the ids, that the engine gives it
        #: when it loads the ``.res`` and saves it as ``.tres``; a text file's keeps its own.
        self.from_binary = rf.format == "binary"
        self.null_objects: dict[int, set[str]] = {}
        if self.from_binary:
            found = rf.layout.get("null_objects") if isinstance(rf.layout, dict) else None
            listed = [*rf.resources, rf.main]
            if isinstance(found, list) and len(found) == len(listed):
                self.null_objects = {id(res): set(names) for res, names in zip(listed, found) if names}
            subs, exts = _save_order(rf, self.major)
            self.rf = rf = attrs.evolve(rf, resources=subs, external=exts)
        ext_ids, sub_ids = self.ids(from_text)
        self.ext_ids = {id(e): i for e, i in zip(rf.external, ext_ids)}
        self.sub_ids: dict[int, tuple[int, _Id]] = {
            id(r): (n, i) for n, (r, i) in enumerate(zip(rf.resources, sub_ids))}
        self.ext_by_path: dict[str, _Id] = {}
        for e, i in zip(rf.external, ext_ids):
            self.ext_by_path.setdefault(e.path, i)
        self.current = 0  # index of the section being written (len(resources): the main resource)

    def ids(self, from_text: bool) -> tuple[list[_Id], list[_Id]]:
        """The ids of the external resources and of the sub-resources, in this file's style."""
        rf = self.rf
        if self.major == 3:
            subs = _godot3_sub_ids(rf.resources) if self.from_binary else _godot3_ids(rf.resources, from_text)
            return _godot3_ids(rf.external, from_text), subs
        ext_ids: list[_Id] = _godot4_ids(rf.external, self.same, _fresh_ext_id) if from_text else [
            _fresh_ext_id(i, set()) for i in range(len(rf.external))]
        sub_ids = _godot4_ids(rf.resources, self.same, lambda i, used: _fresh_sub_id(
            _string(rf.resources[i].type, "a sub-resource's type"), i, used))
        return ext_ids, sub_ids

    # -- resource references, for the value writer

    def ref(self, kind: str, ident: _Id) -> str:
        """``ExtResource( 1 )`` (Godot 3), ``ExtResource("1")`` (Godot 4)."""
        if self.major == 3:
            return f"{kind}( {ident} )"
        return f"{kind}({ident})" if type(ident) is int else f'{kind}("{c_escape_multiline(str(ident))}")'

    def encode(self, value: Any) -> str | None:
        """The value writer's resource encoder (see :data:`~godot_formats.views.text.writer.ResourceEncoder`)."""
        if isinstance(value, t.ContainerType):
            ident = self.ext_by_path.get(value.script) if value.script is not None else None
            return None if ident is None else self.ref("ExtResource", ident)
        if isinstance(value, ExtResource):
            ident = self.ext_ids.get(id(value))
            if ident is not None:
                return self.ref("ExtResource", ident)
            path = c_escape_multiline(_string(value.path, "an external resource's path"))
            return f'Resource( "{path}" )' if self.major == 3 else f'Resource("{path}")'
        if isinstance(value, Resource):
            entry = self.sub_ids.get(id(value))
            if entry is None:
                raise EncodeError(f"{value!r} is not one of the file's sub-resources (ResourceFile.resources)")
            if entry[0] > self.current:
                raise EncodeError(f"sub-resource {entry[1]!r} is used above its [sub_resource] section: the engine "
                                  "reads sub-resources in file order, so list it earlier in ResourceFile.resources")
            return self.ref("SubResource", entry[1])
        return None

    # -- the sections

    def header_line(self) -> str:
        rf = self.rf
        header = rf.header if isinstance(rf.header, dict) else {}
        values: dict[str, Any] = {"type": _string(rf.main.type, "the main resource's type")}
        script_class, uid = header.get("script_class"), header.get("uid")
        if script_class is not None and (self.major == 4 or self.same):
            values["script_class"] = _string(script_class, "the header's script_class")
        if self.load_steps():
            values["load_steps"] = 1 + len(rf.resources) + len(rf.external)
        values["format"] = self.target
        if type(uid) is int and uid >= 0 and (self.major == 4 or self.same):
            values["uid"] = uid
        return _tag_line("gd_resource", values, _HEADER_ORDER, self.layout.get("header_tag"))

    def load_steps(self) -> bool:
        """Whether the header says ``load_steps`` (always the count of resources, main included, and
        external resources): as the file did; else as the engine does, Godot 3 when the count is
        over 1 and Godot 4.6 never (4.0-4.5 wrote it as Godot 3 does)."""
        present = self.layout.get("load_steps")
        if isinstance(present, bool):
            return present
        return self.major == 3 and len(self.rf.resources) + len(self.rf.external) > 0

    def ext_line(self, ext: ExtResource) -> str:
        ident = self.ext_ids[id(ext)]
        values: dict[str, Any] = {"type": _string(ext.type, "an external resource's type"),
                                  "path": _string(ext.path, "an external resource's path"), "id": ident}
        if type(ext.uid) is int and ext.uid >= 0 and (self.major == 4 or self.same):
            values["uid"] = ext.uid
        return _tag_line("ext_resource", values, _EXT_ORDER[self.major], self.tags("ext_tags").get(str(ident)))

    def sub_line(self, res: Resource) -> str:
        ident = self.sub_ids[id(res)][1]
        values = {"type": _string(res.type, "a sub-resource's type"), "id": ident}
        return _tag_line("sub_resource", values, _SUB_ORDER, self.tags("sub_tags").get(str(ident)))

    def tags(self, key: str) -> dict[str, Any]:
        found = self.layout.get(key)
        return found if isinstance(found, dict) else {}

    def properties(self, res: Resource, where: str) -> list[str]:
        """``name = value`` lines; an error names the section and the property."""
        lines = []
        skipped = self.null_objects.get(id(res), ())
        for name, value in res.properties.items():
            if value is None and name in skipped and name != "script":
                continue  # a typed Object property left null: the text saver skips it (script it keeps)
            encoded = _property_name(name)
            try:
                text = to_text(value, self.dialect, version=self.text_version, resources=self.encode,
                               base64_bytes=self.target == 4)
            except EncodeError as e:
                raise EncodeError(path=f"{where} {encoded}{e.path}", **e.reason_in()) from None
            lines.append(f"{encoded} = {text}\n")
        return lines

    def gaps(self, kinds: list[str]) -> list[int]:
        """Blank lines before each tag: the file's, or the engine's (one after the header, after
        the external resources and between sections; none between two external resources)."""
        recorded = self.layout.get("gaps")
        if isinstance(recorded, list) and len(recorded) == len(kinds) and all(
                type(g) is int and g >= 0 for g in recorded):
            return recorded
        return [0 if i and kind == "ext" and kinds[i - 1] == "ext" else 1 for i, kind in enumerate(kinds)]

    def count(self, key: str, default: int) -> int:
        value = self.layout.get(key)
        return value if type(value) is int and value >= 0 else default

    def write(self) -> bytes:
        rf = self.rf
        sections: list[tuple[str, str, list[str]]] = [("ext", self.ext_line(e), []) for e in rf.external]
        for n, res in enumerate(rf.resources):
            self.current = n
            line = self.sub_line(res)
            sections.append(("sub", line, self.properties(res, line)))
        self.current = len(rf.resources)
        sections.append(("resource", _tag_line("resource", {}, (), self.layout.get("resource_tag")),
                         self.properties(rf.main, "[resource]")))
        out = ["\n" * self.count("leading", 0), self.header_line(), "\n"]
        carried = 0  # a value whose text ends with a newline (an Object's) made a blank line already
        for (_, line, props), gap in zip(sections, self.gaps([kind for kind, _, _ in sections])):
            out += ["\n" * max(0, gap - carried), line, "\n", *props]
            carried = 1 if props and props[-1].endswith("\n\n") else 0
        out.append("\n" * max(0, self.count("trailing", 0) - carried))
        text = "".join(out)
        if self.layout.get("final_newline") is False and text.endswith("\n"):
            text = text[:-1]
        if self.layout.get("crlf") is True:  # every line end was CRLF (a checkout's autocrlf, an editor)
            text = _BARE_LF.sub("\r\n", text)
        if self.layout.get("bom") is True:
            text = "\ufeff" + text
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise EncodeError(f"the text holds a lone surrogate (U+{ord(e.object[e.start]):04X}), which a UTF-8 "
                              "file cannot hold") from None


def write_text(rf: ResourceFile, *, version: int | None = None, text_version: str | None = None) -> bytes:
    """The text resource (``.tres``) the engine writes for ``rf``, in format ``version``.

    ``version`` 2 writes Godot 3's form (int ids, ``ExtResource( 1 )``, ``load_steps``, Godot 3
    value text), 3 and 4 Godot 4's (string ids, ``ExtResource("1")``; 4 writes every
    PackedByteArray as base64), 1 Godot 2's (from the sources, unverified).  By default: a text
    file's own format; else the engine's choice for ``rf.engine``.  The values are written as
    they are: converting them between engines is :mod:`godot_formats.migration`'s job.

    A file read by :func:`read_text` and written in its own style comes back byte for byte (its
    ``layout``: attribute order, unknown attributes, blank lines); written in the other style,
    ids are renumbered as that engine would (Godot 3: 1, 2 ...; Godot 4: ``"1"`` ...).
    ``text_version`` picks one engine version's value text (``"4.4"`` printed floats with 6
    digits); by default the newest of the style.  What the format cannot hold raises
    :class:`~godot_formats.errors.EncodeError` naming the section and the property.
    """
    return _Writer(rf, _target_version(rf, version), text_version).write()


WRITERS["text"] = write_text  # ResourceFile.to_bytes(format="text") (the model knows writers by this table)
