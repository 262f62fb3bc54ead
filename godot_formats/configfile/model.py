"""A ConfigFile, read: its sections as the engine holds them, its exact text, and its layers.

``settings.cfg``, ``override.cfg``, ``export_presets.cfg``, ``*.import``, the class cache and the saves
that games keep with ``ConfigFile.save``/``save_encrypted_pass`` are one text format
(:mod:`.text`).  A :class:`ConfigFile` keeps the text it was read from and writes it back unchanged;
a value set again rewrites only its own entry, a key erased takes its line with it, a new key goes
after its section's last one, as the engine appends it.  Writing for another engine version writes
the whole file as that engine's ``ConfigFile.save`` would (:mod:`.writer`), through the one converter
(:func:`godot_formats.migration.convert_value`: class and property renames, key codes, joypad buttons),
every change reported.  Nothing that can run code is armed by a conversion: values that carry a
script are refused unless ``allow_scripts``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any, ClassVar

import attrs

from ..core.changes import Loss, Note
from ..core.dialects import Dialect, get_dialect
from ..core.errors import ConfigFileError, ConversionError, EncodeError, Remedy
from ..core.keys import same_value
from ..core.limits import MAX_FILE_SIZE
from ..layers.encryption import GdecInfo, is_gdec, key_from_password, read_gdec, write_gdec
from ..layers.files import save_to
from ..migration.losses import check_policy
from ..migration.values import convert_value
from ..resources.model import ExtResource, carries_code
from ..views.text import to_text
from .dialect import text_family
from .forms import FORMS, Form, form_of
from .text import SKIP as _SKIP
from .text import Entry, Header, Parsed, engine_view, parse, reread
from .writer import encode_key, encode_pieces, readback_changes, section_header

__all__ = ["ConfigFile", "Section", "read_config", "resolver", "IMMUTABLE"]

#: Values that cannot change in place: an entry holding one is unchanged while it is the same object.
IMMUTABLE: tuple[type, ...] = (str, int, float, type(None), bytes, tuple)  # tuple: the math types


def resolver(kind: str, args: tuple[Any, ...]) -> Any:
    """A ``Resource("path")`` of ConfigFile text, kept inert (the engine loads it): an ExtResource."""
    if kind != "Resource":
        raise ValueError(f"{kind}() names a resource of a .tres file: a ConfigFile has none")
    return ExtResource("Resource", str(args[-1]))


_CRLF = re.compile(r"\r\n")
#: What the text of a value that can carry code holds one of: an Object, a resource, a typed container
#: (whose element type may be a script), in either engine's spelling.
_CODE_WORDS = re.compile(r"Object ?\(|Resource ?\(|Array\[|Dictionary\[")
_NEWLINE = re.compile(r"\n")
_COMMENT_LINE = re.compile(r"^[ \t\r\f\v]*;", re.M)


class Section(MutableMapping[str, Any]):
    """One section's keys, live: setting or deleting a key changes the document (as ``set_value`` and
    ``erase_section_key`` do)."""

    def __init__(self, doc: ConfigFile, name: str) -> None:
        self._doc, self._name = doc, name

    def _keys(self) -> dict[str, Any]:
        return self._doc._sections.get(self._name, {})

    def __getitem__(self, key: str) -> Any:
        value = self._keys()[key]
        self._doc._handed_out.add((self._name, key))
        self._doc._touched = True
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        self._doc.set_value(self._name, key, value)

    def __delitem__(self, key: str) -> None:
        if key not in self._keys():
            raise KeyError(key)
        self._doc.erase_section_key(self._name, key)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._keys()))

    def __len__(self) -> int:
        return len(self._keys())

    def __repr__(self) -> str:
        return f"Section({self._name!r}, {self._keys()!r})"


class _Sections(Mapping[str, Section]):
    def __init__(self, doc: ConfigFile) -> None:
        self._doc = doc

    def __getitem__(self, name: str) -> Section:
        if name not in self._doc._sections:
            raise KeyError(name)
        return Section(self._doc, name)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._doc._sections))

    def __len__(self) -> int:
        return len(self._doc._sections)

    def __delitem__(self, name: str) -> None:
        self._doc.erase_section(name)

    def __repr__(self) -> str:
        return f"Sections({self._doc._sections!r})"


@attrs.define(eq=False)
class ConfigFile:
    """A ConfigFile document (``gf.open`` gives one for ConfigFile text, plain or encrypted).

    ``sections`` maps section -> key -> value as the engine holds them after ``load`` (the values
    are the library's: an ``Object(...)`` is an inert :class:`~godot_formats.types.Object`, a
    ``Resource("path")`` an :class:`~godot_formats.resources.ExtResource`).  The engine's own
    methods work as in GDScript: :meth:`get_value`, :meth:`set_value` (``None`` erases),
    :meth:`has_section`, :meth:`has_section_key`, :meth:`get_sections`, :meth:`get_section_keys`,
    :meth:`erase_section`, :meth:`erase_section_key`.
    """

    _text: str
    _pieces: list[Header | Entry]
    _dialect: Dialect
    why: str = ""
    path: Path | None = None
    form: Form = FORMS[-1]
    encryption: GdecInfo | None = None
    damage: ConfigFileError | None = None
    _sections: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    _original: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    _raw: bytes = b""
    _key: bytes | None = None
    _extra_notes: list[str] = attrs.field(factory=list)
    _newlines: list[int] | None = None
    #: The values given to the caller (who may change a container in place): only those are read again
    #: to tell whether they changed; ``_all_out`` when every one was (``entries()``).
    _handed_out: set[tuple[str, str]] = attrs.field(factory=set)
    _all_out: bool = False
    _written_entries: list[tuple[str, str]] = attrs.field(factory=list)
    #: Whether anything could have changed since the file was read: a value set or erased, or given out.
    _touched: bool = False

    kind: ClassVar[str] = "configfile"

    @classmethod
    def from_parsed(cls, parsed: Parsed, dialect: Dialect, why: str, **fields: Any) -> ConfigFile:
        original = engine_view(parsed.entries)
        live = {name: dict(keys) for name, keys in original.items()}
        return cls(parsed.text, parsed.pieces, dialect, why, damage=parsed.damage, sections=live,
                   original=original, **fields)

    # -- the engine's methods ---------------------------------------------------------------

    @property
    def sections(self) -> Mapping[str, Section]:
        """section -> key -> value, live (``doc.sections["player"]["gold"] = 99`` sets a value)."""
        return _Sections(self)

    def get_value(self, section: str, key: str, default: Any = None) -> Any:
        keys = self._sections.get(section, {})
        if key not in keys:
            return default
        self._handed_out.add((section, key))
        self._touched = True
        return keys[key]

    def set_value(self, section: str, key: str, value: Any) -> None:
        """``ConfigFile::set_value``: ``None`` erases the key (and the section once empty)."""
        if not isinstance(section, str) or not isinstance(key, str):
            raise TypeError("a ConfigFile's sections and keys are str")
        self._touched = True
        if value is None:
            keys = self._sections.get(section)
            if keys is not None:
                keys.pop(key, None)
                if not keys:
                    del self._sections[section]
            return
        self._sections.setdefault(section, {})[key] = value

    def has_section(self, section: str) -> bool:
        return section in self._sections

    def has_section_key(self, section: str, key: str) -> bool:
        return key in self._sections.get(section, {})

    def get_sections(self) -> list[str]:
        return list(self._sections)

    def get_section_keys(self, section: str) -> list[str]:
        return list(self._sections.get(section, {}))

    def erase_section(self, section: str) -> None:
        if section not in self._sections:
            raise KeyError(f"no section {section!r}")
        self._touched = True
        del self._sections[section]

    def erase_section_key(self, section: str, key: str) -> None:
        if key not in self._sections.get(section, {}):
            raise KeyError(f"no key {key!r} in section {section!r}")
        self.set_value(section, key, None)

    # -- describing ---------------------------------------------------------------------------

    @property
    def dialect(self) -> Dialect:
        return self._dialect

    @property
    def text(self) -> str:
        """The text as it stands now (the file's own while nothing changed)."""
        return self._edited()[0]

    @property
    def kept_text(self) -> str:
        """The text as it stands, up to the end of the line of the last entry a salvaged file kept (the
        damaged entry and what follows it left out: what ``ConfigFile.load`` read); all of it otherwise."""
        text = self.text
        if self.damage is None:
            return text
        last = self._pieces[-1].end if self._pieces else 0
        return text[:_after_line(text, last)] if last else ""

    @property
    def layers(self) -> dict[str, Any]:
        out: dict[str, Any] = {"container": "configfile", "form": self.form.name, "dialect": self._dialect.name,
                               "sections": len(self._sections), "keys": sum(map(len, self._sections.values()))}
        if self.encryption is not None:
            out["encryption"] = f"godot{self.encryption.version}"
        if self.damage is not None:
            out["damaged_at"] = {"line": self.damage.line, "column": self.damage.column}
        return out

    @property
    def notes(self) -> list[str]:
        out = [self.why] if self.why else []
        if self.damage is not None:
            out.append(f"damaged at line {self.damage.line}, column {self.damage.column} ({self.damage.reason}): "
                       f"the keys before it were kept, as ConfigFile.load keeps them (salvage)")
        return out + self._extra_notes

    def entries(self) -> list[Entry]:
        """Every ``key=value`` of the text as read, in file order, with its place (what ``explain`` shows)."""
        self._all_out = self._touched = True
        return [p for p in self._pieces if isinstance(p, Entry)]

    def line_of(self, offset: int) -> int:
        """The line (from 1) of a character offset of the text as read (an entry's ``start``)."""
        if self._newlines is None:
            self._newlines = [m.start() for m in _NEWLINE.finditer(self._text)]
        return bisect.bisect_left(self._newlines, offset) + 1

    # -- writing ----------------------------------------------------------------------------

    def to_bytes(self, *, dialect: str | Dialect | None = None, policy: str = "strict",
                 password: str | None = None, key: bytes | None = None, allow_scripts: bool = False) -> bytes:
        """The file's bytes: the ones it was read from while nothing changed; a changed value rewrites
        its own entry only.  ``dialect`` writes the file as that engine's ``ConfigFile.save`` does
        (:meth:`convert`).  An encrypted file is encrypted again with its key (``password``/``key``: another).
        What the engine would read back otherwise (a ``]`` in a section name, a Godot 3 key with a
        blank) is refused under ``policy="strict"``; ``"lossy"`` writes it."""
        return self._written(dialect, policy, password, key, allow_scripts)[0]

    def _written(self, dialect: str | Dialect | None, policy: str, password: str | None, key: bytes | None,
                 allow_scripts: bool) -> tuple[bytes, list[Loss]]:
        check_policy(policy)
        if dialect is not None and get_dialect(dialect) != self._dialect:
            doc, converted = self.convert(dialect, policy=policy, allow_scripts=allow_scripts)
            return doc._written(None, policy, password, key, allow_scripts)[0], converted
        text, changed = self._edited()
        losses: list[Loss] = []
        if changed and self.damage is not None:
            # A salvaged file, changed: written as the engine would save what it loaded (the damaged tail,
            # which no engine reads, would otherwise hide the keys written after it).
            losses = [self._damage_loss()]
            if policy == "strict":
                raise ConversionError(losses)
            text = (self.form.write or encode_pieces)(self._sections, self._dialect)[0]
        elif changed:
            losses = [Loss(place, why) for place, why in
                      readback_changes(self._sections, self._dialect, resolver, values=self._written_entries)]
            if losses and policy == "strict":
                raise ConversionError(losses)
        if not changed and password is None and key is None and self._raw:
            return self._raw, losses
        return self._wrap(text.encode("utf-8", "surrogateescape"), password, key, changed), losses

    def _wrap(self, plain: bytes, password: str | None, key: bytes | None, changed: bool) -> bytes:
        if self.encryption is None:
            if password is not None or key is not None:
                raise ValueError("this file is not encrypted: a password or key has nothing to do")
            return plain
        use_key = key if key is not None else key_from_password(password) if password is not None else self._key
        if use_key is None:
            raise EncodeError("the file is encrypted: give ", remedy=Remedy.PASSWORD, then=" to write it")
        info = self.encryption
        if info.iv is not None and (changed or use_key != self._key):
            info = attrs.evolve(info, iv=None)  # a fresh IV: never one IV for two plaintexts
        return write_gdec(plain, info, key=use_key)

    def save(self, file: Any = None, *, dialect: str | Dialect | None = None, policy: str = "strict",
             overwrite: bool = False, password: str | None = None, key: bytes | None = None,
             allow_scripts: bool = False) -> list[Loss]:
        """Write the file atomically to ``file`` or back where it was read; an existing other file is
        replaced only with ``overwrite``.  Returns what changed on the way (a conversion's losses,
        or what the engine would read back otherwise)."""
        data, losses = self._written(dialect, policy, password, key, allow_scripts)
        save_to(file, data, origin=self.path, overwrite=overwrite, what="ConfigFile")
        return losses

    # -- the edited text ------------------------------------------------------------------------

    def _unchanged(self, entry: Entry, value: Any) -> bool:
        """Whether ``value`` is still what ``entry`` says: the same object of a kind that cannot change
        in place, or the same data as the entry's text read again (a container may have changed in place)."""
        if value is entry.value and (isinstance(value, IMMUTABLE) or not self._all_out
                                     and (entry.section, entry.key) not in self._handed_out):
            return True
        return _still_reads(self, entry, value)

    def _edited(self) -> tuple[str, bool]:
        """The text with the current sections, and whether it differs from the file's (the entries it
        wrote anew are in ``_written_entries``)."""
        text = self._text
        self._written_entries = []
        if not self._touched:
            return text, False
        places = _Places(self._pieces)
        nl = "\r\n" if _CRLF.search(text) else "\n"
        self._written_entries = []
        edits = self._value_edits(places)
        tail = self._new_keys(places, nl, edits)
        if not edits and not tail:
            return text, False
        edits.sort(key=lambda e: (e[0], e[1]))
        out, at = [], 0
        for start, end, new in edits:
            if start < at:
                continue  # two edits of one span (an erased key's lines overlap): the first holds
            out += [text[at:start], new]
            at = end
        out.append(text[at:])
        out += tail
        new_text = "".join(out)
        return new_text, new_text != text

    def _value_edits(self, places: _Places) -> list[tuple[int, int, str]]:
        """A changed value's text replaced in its last entry; an erased key's every line removed."""
        edits: list[tuple[int, int, str]] = []
        for (section, key), entries in places.every.items():
            keys = self._sections.get(section)
            if not key:
                continue
            if keys is None or key not in keys:
                if key in self._original.get(section, {}):
                    edits += [_line_span(self._text, e) + ("",) for e in entries]  # erased: every line of it
                continue
            entry = entries[-1]
            if not self._unchanged(entry, keys[key]):
                edits.append((entry.value_start, entry.end, to_text(keys[key], self._dialect)))
                self._written_entries.append((section, key))
        return edits

    def _new_keys(self, places: _Places, nl: str, edits: list[tuple[int, int, str]]) -> list[str]:
        """Keys the text does not hold: after their section's last entry (or header), as the engine appends
        them; a new section at the end (Godot 4's header-less section "" at the start).  Returns the text to
        append, and adds insertions to ``edits``."""
        text, d = self._text, self._dialect
        appended: dict[str, list[str]] = {}
        for section, keys in self._sections.items():
            for key, value in keys.items():
                if (section, key) not in places.every:
                    appended.setdefault(section, []).append(f"{encode_key(key, d.major)}={to_text(value, d)}{nl}")
                    self._written_entries.append((section, key))
        tail: list[str] = []
        for section, lines in appended.items():
            anchor = places.last_of.get(section)
            if anchor is not None:
                at = _after_line(text, anchor.end)
                prefix = nl if at == len(text) and not text.endswith("\n") else ""
                if _SKIP.match(text, anchor.end).end() < at:  # type: ignore[union-attr]  # the line goes on:
                    at, prefix = anchor.end, nl  # the new keys go right after the anchor, on lines of their own
                    lines[-1] = lines[-1][:-len(nl)]
                elif isinstance(anchor, Header) and _blank_line_at(text, at):
                    at = _after_line(text, at)
                edits.append((at, at, prefix + "".join(lines)))
            elif not section:  # before the first header: both engines read such keys into the section ""
                start = 1 if text.startswith("\ufeff") else 0
                edits.append((start, start, "".join(lines) + (nl if self._sections.keys() - {""} else "")))
            else:
                sep = "" if not text.strip() and not tail else (nl if text.endswith("\n") or tail else nl + nl)
                tail.append(sep + section_header(section, d.major).replace("\n", nl) + "".join(lines))
        return tail

    # -- conversion ---------------------------------------------------------------------------------

    def convert(self, dialect: str | Dialect, *, policy: str = "strict",
                allow_scripts: bool = False) -> tuple[ConfigFile, list[Loss]]:
        """This file for another engine version, written as that engine's ``ConfigFile.save`` writes
        it, and every change: each value through :func:`~godot_formats.migration.convert_value` (its
        losses under ``[section] key``), then what the target engine would read back otherwise.
        Values that carry a script are refused unless ``allow_scripts`` (a Godot 3 ``Reference`` with a
        script is inert in Godot 4, which has no such class; renamed ``RefCounted``, it would run).
        The encryption migrates with the same key (the target engine's layout, a fresh IV)."""
        check_policy(policy)
        target = get_dialect(dialect)
        if target == self._dialect and self.damage is None:
            return self._copy(), []  # the same engine's text: nothing is armed that was not
        if target != self._dialect and not allow_scripts:
            refuse_code(self._values_that_may_carry_code())
        if target.major < 3:
            raise EncodeError(f"{target.name} ConfigFile text is read, not written, here")
        if self.form.convert is not None and target != self._dialect and (
                target.major != self._dialect.major or self.form.write is None):
            raise EncodeError(f"{self.form.description}: not converted to {target.name}: {self.form.convert}")
        losses: list[Loss] = []
        notes: list[Note] = []
        out: dict[str, dict[str, Any]] = {}
        for section, keys in self._sections.items():
            new_keys = out.setdefault(section, {})
            for key, value in keys.items():
                place = f"[{section}] {key}"
                kept: list[Note] = []
                try:
                    new, lost = convert_value(value, self._dialect, target, policy="lossy", notes=kept)
                except EncodeError as e:
                    raise EncodeError(path=place + e.path, **e.reason_in()) from None
                losses += [attrs.evolve(loss, path=place + loss.path) for loss in lost]
                notes += [Note(place + n.path, n.text) for n in kept]
                new_keys[key] = new
        write = self.form.write or encode_pieces  # a form no engine version change reaches has none
        text, pieces = write(out, target)
        losses += [Loss(place, why) for place, why in readback_changes(out, target, resolver)]
        if losses and policy == "strict":
            raise ConversionError(losses + ([self._damage_loss()] if self.damage is not None else []))
        comments = len(_COMMENT_LINE.findall(self._text))
        extra = _told_once(notes)
        if self.damage is not None:
            losses.append(self._damage_loss())
            if policy == "strict":
                raise ConversionError(losses)
            extra.append(self.notes[1] if len(self.notes) > 1 else str(self.damage))
        if comments:
            extra.append(f"{comments} comment line(s) of the file are not written: ConfigFile.save writes none")
        encryption = self.encryption
        version = 3 if target.major <= 3 else 4
        if encryption is not None and encryption.version != version:
            encryption = GdecInfo.for_version(version)
        doc = ConfigFile.from_parsed(Parsed(text, pieces), target, f"converted from {self._dialect.name}",
                                     form=self.form, encryption=encryption, key=self._key, extra_notes=extra)
        return doc, losses

    def with_text(self, text: str) -> ConfigFile:
        """The same file with its whole text replaced (``edit``): read as this file's engine reads it
        (:class:`~godot_formats.core.errors.ConfigFileError` names the line and column it stops at), in
        the same form, written with the same encryption and key (a fresh IV: a new text).  The text
        given is written as it is, byte for byte."""
        parsed = parse(text, self._dialect, resources=resolver)
        if text == self._text:
            return ConfigFile.from_parsed(parsed, self._dialect, self.why, path=self.path, form=self.form,
                                          encryption=self.encryption, raw=self._raw, key=self._key)
        return ConfigFile.from_parsed(parsed, self._dialect, self.why, path=self.path, form=self.form,
                                      encryption=None if self.encryption is None else attrs.evolve(
                                          self.encryption, iv=None), key=self._key)

    def _values_that_may_carry_code(self) -> dict[str, dict[str, Any]]:
        """The values the code scan must walk: those given out or set since reading (anything may be in
        them), and those whose text names an Object, a resource or a typed container; a value whose
        text names none of them holds no script, no embedded script and no path (a string is data).
        One pass over the text finds the words; each is the entry's whose text holds it."""
        entries = [p for p in self._pieces if isinstance(p, Entry)]
        starts = [e.value_start for e in entries]
        named: set[int] = set()
        for m in _CODE_WORDS.finditer(self._text):
            i = bisect.bisect_right(starts, m.start()) - 1
            if i >= 0 and m.start() < entries[i].end:
                named.add(id(entries[i]))
        last = {(e.section, e.key): e for e in entries}
        out: dict[str, dict[str, Any]] = {}
        for section, keys in self._sections.items():
            for key, value in keys.items():
                entry = last.get((section, key))
                if entry is None or value is not entry.value or self._all_out or id(entry) in named \
                        or (section, key) in self._handed_out:
                    out.setdefault(section, {})[key] = value
        return out

    def _copy(self) -> ConfigFile:
        text, _ = self._edited()
        parsed = parse(text, self._dialect, resources=resolver, salvage=self.damage is not None)
        return ConfigFile.from_parsed(parsed, self._dialect, self.why, form=self.form, encryption=self.encryption,
                                      key=self._key)

    def _damage_loss(self) -> Loss:
        """What a salvaged file loses when it is written anew: the text from its damage on, which the
        engine's ConfigFile.load does not read either."""
        assert self.damage is not None
        return Loss(f"line {self.damage.line}", f"the text from line {self.damage.line}, column "
                                                 f"{self.damage.column} on is damaged ({self.damage.reason}): "
                                                 "ConfigFile.load stops there, and it is not written")


class _Places:
    """Where each section's and key's text stands: every entry of a key (duplicates too) and each
    section's last piece (its last entry, else its header)."""

    def __init__(self, pieces: list[Header | Entry]) -> None:
        self.every: dict[tuple[str, str], list[Entry]] = {}
        self.last_of: dict[str, Entry | Header] = {}
        for p in pieces:
            if isinstance(p, Header):
                self.last_of.setdefault(p.name, p)
                continue
            self.every.setdefault((p.section, p.key), []).append(p)
            self.last_of[p.section] = p


def _still_reads(doc: ConfigFile, entry: Entry, value: Any) -> bool:
    """Whether the entry's own text, read again, is ``value`` (a container changed in place is not)."""
    return same_value(reread(doc._text, entry, doc._dialect, resolver), value)


def _told_once(notes: list[Note]) -> list[str]:
    """Each note's words once, with how many places they were said of (a key binding file types each
    action's list: one note for all of them)."""
    places: dict[str, list[str]] = {}
    for note in notes:
        places.setdefault(note.text, []).append(note.path)
    return [f"{paths[0]}: {text}" if len(paths) == 1 else f"{paths[0]} and {len(paths) - 1} more: {text}"
            for text, paths in places.items()]


def _line_span(text: str, e: Entry) -> tuple[int, int]:
    """Where an entry's line(s) stand, newline included, when nothing else shares them; else the entry."""
    line_start = text.rfind("\n", 0, e.start) + 1
    nl = text.find("\n", e.end)
    line_end = len(text) if nl < 0 else nl + 1
    if text[line_start:e.start].strip() or text[e.end:line_end].strip():
        return e.start, e.end
    return line_start, line_end


def _after_line(text: str, offset: int) -> int:
    nl = text.find("\n", offset)
    return len(text) if nl < 0 else nl + 1


def _blank_line_at(text: str, at: int) -> bool:
    nl = text.find("\n", at)
    return nl >= 0 and not text[at:nl].strip()


def refuse_code(sections: Mapping[str, Mapping[str, Any]]) -> None:
    """Raise, naming them, when values would run code once the engine makes them (a script on an
    Object, an embedded script, a resource outside ``res://``)."""
    from ..resources.scan import Walk
    walk = Walk()
    for section, keys in sections.items():
        for key, value in keys.items():
            walk.visit(value, f"[{section}] {key}")
    if walk.found:
        raise carries_code(walk.found, " to convert it anyway (a conversion can arm it)")


def read_config(data: bytes, *, path: Path | None = None, password: str | None = None, key: bytes | None = None,
                dialect: str | Dialect | None = None, salvage: bool = False, max_size: int | None = None) -> ConfigFile:
    """A ConfigFile from its file's bytes: plain UTF-8 text, or encrypted (``ConfigFile.save_encrypted_pass``:
    ``password``; ``save_encrypted``: ``key``).  The engine version is ``dialect`` when given, else
    told from the text (:mod:`.dialect`), else from the encryption layer."""
    raw = bytes(data)
    info: GdecInfo | None = None
    use_key: bytes | None = None
    plain = raw
    if is_gdec(raw):
        use_key = key if key is not None else key_from_password(password) if password is not None else None
        plain, info = read_gdec(raw, key=use_key, max_size=MAX_FILE_SIZE if max_size is None else max_size)
    text = plain.decode("utf-8", "surrogateescape")  # bytes that are not UTF-8 read as the engines read them
    form = form_of(path, text)
    d, why = _told_dialect(text, form, info, dialect)
    parsed = parse(text, d, resources=resolver, salvage=salvage)
    return ConfigFile.from_parsed(parsed, d, why, path=path, form=form, encryption=info, raw=raw, key=use_key)


def _told_dialect(text: str, form: Form, info: GdecInfo | None, dialect: str | Dialect | None) -> tuple[Dialect, str]:
    """The engine version that wrote the text, and how it was told: as asked; by the marks of its text
    (:mod:`.dialect`); by its form (``config_version``); by its encryption layer; else Godot 4's."""
    if dialect is not None:
        d = get_dialect(dialect)
        return d, f"read as {d.name}, as asked"
    family, marks = text_family(text)
    if family is not None:
        return get_dialect(f"godot{family}"), f"written by Godot {family}: the text has {'; '.join(marks)}"
    family = form.family(text)
    if family is not None:
        return get_dialect(f"godot{family}"), f"written by Godot {family}: its {form.family_clue} says so"
    if info is not None:
        return (get_dialect(f"godot{info.version}"),
                f"written by Godot {info.version}: no value names a version; the encryption is Godot {info.version}'s")
    return get_dialect("godot4"), ("no value or layout names an engine version: the text reads the same in Godot 3 "
                                   "and 4 (taken as godot4)")
