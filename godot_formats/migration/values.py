"""The value walk: a Variant value read in one engine version, rebuilt so that another can write it.

Renames change no data and are not reported (``Quat`` is ``Quaternion``); every change of data is a
:class:`~godot_formats.core.changes.Loss` at its path (the package's docstring lists them), and a
class renamed without loss a :class:`~godot_formats.core.changes.Note`.  The walk is iterative
(decoded data may be 1,000 levels deep), and a value that needs no change is found so in one pass
that rebuilds nothing (most migrations: every value), in C when the compiled core is built.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable as _Fn
from collections.abc import Iterator, Mapping
from functools import lru_cache, partial
from typing import Any, Union

import attrs

from ..core import accel
from ..core import types as t
from ..core.codec import DEFAULT_MAX_DEPTH
from ..core.dialects import (
    Dialect,
    FloatFormat,
    IntFormat,
    ObjectFormat,
    RidFormat,
    get_dialect,
)
from ..core.errors import ConversionError, EncodeError
from ..core.keys import Memo, python_keys_agree
from ..core.registry import (
    INT32_MAX,
    INT32_MIN,
    REGISTRY,
    Downgrade,
    Family,
    TypeSpec,
    for_each_row,
    nesting_error,
    spec_for,
)
from ..core.registry import float32 as _to_f32
from ..core.registry import is_float32 as _is_f32
from ..core.renames import class_change
from ..core.switches import REAL
from .losses import POLICIES, SURROGATE, Known, Loss, Note, ValuePath, check_policy, format_path_key, quote, render
from .objects import (
    GODOT3_META,
    GODOT4_LAYOUTS,
    GODOT4_META_PREFIX,
    INPUT_EVENT_LIST,
    RULES_BY_3,
    RULES_BY_4,
    is_input_event,
    same,
    scripts_by_path,
)

__all__ = ["DOWNGRADES", "MAX_DEPTH", "DialectLike", "convert_value", "convert_records"]

#: How deep :func:`convert_value` follows nested containers before it assumes a
#: container that contains itself (decoded data is never deeper than the engines allow).
MAX_DEPTH = DEFAULT_MAX_DEPTH * 4

DialectLike = Union[str, Dialect]

_F32_STRUCTS: dict[int, struct.Struct] = {}


def _has_surrogate(text: str) -> bool:
    return not text.isascii() and SURROGATE.search(text) is not None


def _replace_surrogates(text: str) -> str:
    return SURROGATE.sub("\ufffd", text)


def _type_name(value: Any) -> str | None:
    """The Godot 4 type name of a leaf value (containers are handled by the walker)."""
    spec = spec_for(value)
    return None if spec is None else spec.name


#: Godot 4 type name -> what ``lossy`` writes when the target has no such type: the
#: registry rows' ``downgrade``.  A type whose data cannot be carried at all is written as null.
DOWNGRADES: dict[str, Downgrade] = {}


@for_each_row
def _add_row(spec: TypeSpec) -> None:
    if spec.downgrade is not None:
        DOWNGRADES[spec.name] = spec.downgrade


# --- the walker ------------------------------------------------------------------------

@attrs.define
class _Frame:
    children: Iterator[tuple[ValuePath, Any]]
    build: _Fn[[list[Any]], Any]
    items: list[Any] = attrs.field(factory=list)


class _Converter:
    """Walks a value (iteratively: decoded data may be 1,000 levels deep) and rebuilds it for the target."""

    __slots__ = ("source", "target", "known_paths", "losses", "notes", "cross_major", "checks", "plan", "key_memo")

    def __init__(self, source: Dialect, target: Dialect) -> None:
        self.source = source
        self.target = target
        self.known_paths: Known = {}  # for the loss paths: each node walked once
        self.losses: list[Loss] = []
        self.notes: list[Note] = []  # what changed without a loss: the classes renamed
        self.plan = plan = _plan(source, target)
        self.cross_major = plan.cross_major  # the class rules apply
        self.checks = plan.checks
        self.key_memo: Memo = {}  # identities of converted containers used as keys (linear, not per level)

    def loss(self, path: ValuePath, reason: str, before: Any = None, after: Any = None) -> None:
        self.losses.append(Loss(render(path, self.known_paths), reason, before, after))

    def renamed_class(self, path: ValuePath, name: str) -> str:
        """``name`` for the target, by the one table of class renames (core.renames): a rename is
        a note, an approximation or a guess among merged classes a loss."""
        change = class_change(name, self.source.object_classes, self.target.object_classes)
        if change is None:
            return name
        if change.loss is not None:
            self.loss(path, change.loss, change.before, change.after)
        else:
            self.notes.append(Note(render(path, self.known_paths), change.note))
        return change.after

    # -- a value that needs no change ------------------------------------------------

    def unchanged(self, root: Any) -> bool:
        """Whether ``root`` needs no change at all for the target, so that it is its own
        conversion: one pass over it, rebuilding nothing.  Most saves are such values (plain
        dicts and lists of ints, strings, floats and math types, read in Godot 3 and written
        for Godot 4), and rebuilding them cost many times their decoding.  Only what the walk
        of :meth:`run` would keep as it is passes: exact lists and dicts whose keys Python
        and the target key alike, leaves whose own check keeps them (the same object, no
        loss), within the depth :meth:`run` takes; anything else goes to :meth:`run`."""
        plan = self.plan
        scalars = plan.scalars
        decided = plan.c_unchanged(root)
        if decided is not None:
            return decided
        stack: list[tuple[Any, int]] = [(root, 0)]
        while stack:
            v, depth = stack.pop()
            tp = type(v)
            if tp is list:
                items: Any = v
            elif tp is dict:
                if not python_keys_agree(v):
                    return False
                items = [x for pair in v.items() for x in pair]
            elif self._leaf_unchanged(v, tp, scalars):
                continue
            else:
                return False
            if depth >= MAX_DEPTH:
                return False
            for x in items:
                tx = type(x)
                if tx is list or tx is dict:
                    stack.append((x, depth + 1))
                elif not self._leaf_unchanged(x, tx, scalars):
                    return False
        return True

    def _leaf_unchanged(self, v: Any, tp: type, scalars: dict[type, Any]) -> bool:
        check = _leaf_check(v, tp, scalars, self.checks, self.target)
        if check is True or check is False:
            return check
        return self._check_keeps(check, v)

    def _check_keeps(self, check: _Fn[[_Converter, ValuePath, Any], Any], v: Any) -> bool:
        """Whether the leaf ``check`` keeps ``v`` as it is, with no loss (the losses it reports are dropped)."""
        before = len(self.losses)
        try:
            kept = check(self, "", v) is v and len(self.losses) == before
        finally:
            del self.losses[before:]
        return kept

    def run(self, root: Any) -> Any:
        stack: list[_Frame] = []
        done, value = self._visit("", root, stack)
        if done:
            return value
        while True:
            frame = stack[-1]
            for path, child in frame.children:
                done, value = self._visit(path, child, stack)
                if not done:
                    break
                frame.items.append(value)
            else:
                stack.pop()
                value = frame.build(frame.items)
                if not stack:
                    return value
                stack[-1].items.append(value)

    def _visit(self, path: ValuePath, v: Any, stack: list[_Frame]) -> tuple[bool, Any]:
        """Convert a leaf (True, value) or push a frame for a container (False, None)."""
        spec = spec_for(v)
        family = None if spec is None else spec.family
        if family is Family.ARRAY:
            frame = self._array(path, v)
        elif family is Family.DICTIONARY:
            frame = self._dictionary(path, v)
        elif family is Family.OBJECT and type(v) is t.Object and self.target.object_format != ObjectFormat.UNSUPPORTED:
            frame = self._object(path, v)
        else:
            return True, self._leaf(path, v, spec)
        if len(stack) >= MAX_DEPTH:
            raise EncodeError(nesting_error(MAX_DEPTH), render(path))
        stack.append(frame)
        return False, None

    # -- containers ---------------------------------------------------------------

    def _array(self, path: ValuePath, v: Any) -> _Frame:
        element_type = v.element_type if isinstance(v, t.TypedArray) else None
        if element_type is not None and not self.target.typed_arrays:
            if element_type == t.ContainerType.of_class(INPUT_EVENT_LIST) and all(map(is_input_event, v)):
                self.notes.append(Note(render(path, self.known_paths), f"Array[{INPUT_EVENT_LIST}] written untyped, "
                                       "as Godot 3's InputMap.get_action_list returns input events"))
            else:
                self.loss(path, f"typed Array[{_type_label(element_type)}] written untyped: "
                                f"{self.target.name} has no typed Arrays", element_type, None)
            element_type = None
        children = (((path, "[]", i), e) for i, e in enumerate(v))
        if element_type is None and path == "" and self.cross_major and self.target.typed_arrays and type(v) is list \
                and v and all(map(is_input_event, v)):  # the value itself: what action_get_events returns
            element_type = t.ContainerType.of_class(INPUT_EVENT_LIST)
            self.notes.append(Note(render(path, self.known_paths), "a list of input events, typed "
                                   f"Array[{INPUT_EVENT_LIST}] as Godot 4's InputMap.action_get_events returns it"))
        if element_type is None:
            return _Frame(children, list)
        return _Frame(children, lambda items: t.TypedArray(element_type, items))

    def _dictionary(self, path: ValuePath, v: Any) -> _Frame:
        key_type = value_type = None
        if isinstance(v, t.TypedDictionary) and (v.key_type or v.value_type):
            key_type, value_type = v.key_type, v.value_type
            if not self.target.typed_dictionaries:
                self.loss(path, f"typed Dictionary[{_type_label(key_type)}, {_type_label(value_type)}] written "
                                f"untyped: {self.target.name} has no typed Dictionaries", (key_type, value_type), None)
                key_type = value_type = None
        pairs = list(v.items())
        plain = type(v) is dict and key_type is None and value_type is None

        def children() -> Iterator[tuple[ValuePath, Any]]:
            for k, val in pairs:
                yield (path, "<key>", k), k
                yield (path, "[key]", k), val

        def build(items: list[Any]) -> Any:
            if plain:  # fast path: a dict stays a dict unless converted keys collide or cannot be hashed
                fast: dict[Any, Any] = {}
                try:
                    for new_key, new_value in zip(items[0::2], items[1::2]):
                        fast[new_key] = new_value
                except TypeError:
                    pass
                else:
                    if len(fast) == len(pairs) and python_keys_agree(fast):
                        return fast
            rules = self.target.key_rules
            out = (t.Dictionary(key_rules=rules) if key_type is None and value_type is None
                   else t.TypedDictionary(key_type, value_type, key_rules=rules))
            for (src_key, _), new_key, new_value in zip(pairs, items[0::2], items[1::2]):
                if out._put(new_key, new_value, self.key_memo):
                    self.loss((path, "<key>", src_key),
                              f"after conversion this key equals the earlier key {format_path_key(new_key)}; "
                              "the engine keeps only the last value", src_key, new_key)
            return out if isinstance(out, t.TypedDictionary) else _as_plain_dict(out)

        return _Frame(children(), build)

    def _object(self, path: ValuePath, obj: t.Object) -> _Frame:
        class_name = self._text((path, "", "<class>"), obj.class_name)
        props = {self._text(((path, ".", k), "", "<name>"), k): v for k, v in obj.properties.items()}
        entries: list[tuple[ValuePath, str, Any]] = [((path, ".", k), k, v) for k, v in props.items()]
        if self.cross_major:
            class_name, entries = self._rename_object(path, class_name, props)
        entries = [self._script(e) for e in entries]
        names = [name for _, name, _ in entries]
        children = ((p, v) for p, _, v in entries)
        return _Frame(children, lambda items: t.Object(class_name, dict(zip(names, items))))

    def _script(self, entry: tuple[ValuePath, str, Any]) -> tuple[ValuePath, str, Any]:
        path, name, value = entry
        if name != "script" or value is None:
            return entry
        by_path = scripts_by_path(self.target)
        if by_path and not isinstance(value, str):
            self.loss(path, f"{self.target.name} references scripts by res:// path; the embedded "
                            f"{getattr(value, 'class_name', type(value).__name__)} has none: written as null "
                            "(the engine then ignores the script's properties)", value, None)
            return path, name, None
        if not by_path and isinstance(value, str):
            self.loss(path, f"{self.target.name} embeds the Script object, not a path: script "
                            f"{t.value_repr(value, 60)} written as null (the engine then ignores the "
                            "script's properties)", value, None)
            return path, name, None
        return entry

    def _rename_object(self, path: ValuePath, cls: str,
                       props: dict[str, Any]) -> tuple[str, list[tuple[ValuePath, str, Any]]]:
        """Apply the class renames, :data:`CLASS_RULES` and the metadata layout between Godot 3 and Godot 4."""
        to4 = self.target.object_classes == 4
        rule = (RULES_BY_3 if to4 else RULES_BY_4).get(cls)
        if to4 and rule is not None and rule.prepare4 is not None:
            prepared = rule.prepare4(props)
            if prepared is not None:
                new_cls, props, reason = prepared
                self.loss(path, reason, cls, new_cls)
                cls, rule = new_cls, RULES_BY_3.get(new_cls)
        out_cls = self.renamed_class(path, cls)
        by_name = {(p.godot3 if to4 else p.godot4): p for p in (rule.properties if rule else ()) if
                   (p.godot3 if to4 else p.godot4)}
        entries: list[tuple[ValuePath, str, Any]] = []
        meta: dict[str, Any] | None = None
        for name, value in props.items():
            p_path: ValuePath = (path, ".", name)
            if to4 and name == GODOT3_META and isinstance(value, (dict, t.Dictionary)):
                for key, item in value.items():
                    if isinstance(key, str):
                        entries.append(((p_path, "[key]", key), GODOT4_META_PREFIX + key, item))
                    else:
                        self.loss((p_path, "<key>", key),
                                  "Godot 4 metadata names are strings: this entry is dropped", key, None)
                continue
            if not to4 and name.startswith(GODOT4_META_PREFIX):
                if meta is None:
                    meta = {}
                    entries.append(((path, ".", GODOT4_META_PREFIX + "*"), GODOT3_META, meta))
                meta[name[len(GODOT4_META_PREFIX):]] = value
                continue
            prop = by_name.get(name)
            if prop is None:
                entries.append((p_path, name, value))
                continue
            new_name = prop.godot4 if to4 else prop.godot3
            if new_name is None:
                if not prop.can_drop(name, props):
                    self.loss(p_path, f"{out_cls}.{name} does not exist in Godot {self.target.major}: "
                                      f"dropped (value {t.value_repr(value, 60)})", value, None)
                continue
            mapper = prop.to4 if to4 else prop.to3
            new_value, why = mapper(value) if mapper else (value, None)
            if why:
                self.loss(p_path, why, value, new_value)
            if prop.omit_default and same(new_value, prop.default):
                continue
            entries.append((p_path, new_name, new_value))
        layout = GODOT4_LAYOUTS.get(out_cls) if to4 else None
        return out_cls, (entries if layout is None else _laid_out(path, entries, layout))

    # -- leaves -------------------------------------------------------------------

    def _leaf(self, path: ValuePath, v: Any, spec: TypeSpec | None) -> Any:
        if spec is None:
            raise EncodeError(f"cannot convert a {type(v).__name__} ({t.value_repr(v, 60)})", render(path))
        name = spec.name
        if not self.target.has(name):
            row = DOWNGRADES[name]
            new = row.apply(v, self.target)
            self.loss(path, f"{self.target.name} has no {name}: written as {row.writes}", v, new)
            v = new
            name = _type_name(v) or "Array"
        check = self.checks.get(name)
        return check(self, path, v) if check else v

    def _text(self, path: ValuePath, v: str) -> Any:
        if self.target.utf8_surrogates or not _has_surrogate(v):
            return v
        fixed = _replace_surrogates(v)
        new = t.StringName(fixed) if isinstance(v, t.StringName) else fixed
        self.loss(path, f"unpaired surrogate in {quote(v)}: {self.target.name} only stores valid UTF-8, "
                        "written as U+FFFD", v, new)
        return new

    def _node_path(self, path: ValuePath, v: t.NodePath) -> Any:
        if not any(_has_surrogate(p) for p in (*v.names, *v.subnames)):
            return v
        new = t.NodePath(names=map(_replace_surrogates, v.names), subnames=map(_replace_surrogates, v.subnames),
                         absolute=v.absolute)
        self.loss(path, f"unpaired surrogate in NodePath {str(v)!r}: written as U+FFFD", v, new)
        return new

    def _string_array(self, path: ValuePath, v: t.PackedStringArray) -> Any:
        if not any(_has_surrogate(s) for s in v):
            return v
        return t.PackedStringArray(self._text((path, "[]", i), s) for i, s in enumerate(v))

    def _signal(self, path: ValuePath, v: t.Signal) -> Any:
        return v if not _has_surrogate(v.name) else t.Signal(self._text((path, ".", "name"), v.name), v.object_id)

    def _object_id(self, path: ValuePath, v: Any) -> Any:
        if self.target.object_format == ObjectFormat.UNSUPPORTED:
            self.loss(path, f"{self.target.name} cannot write an Object: written as null", v, None)
            return None
        if isinstance(v, t.EncodedObjectAsID):
            self.loss(path, f"Object written as its instance id {v.object_id}: an id only means something in "
                            "the process that wrote it, written as null", v, None)
            return None
        return v

    def _rid(self, path: ValuePath, v: t.RID) -> Any:
        rid_format = self.target.rid_format
        if rid_format == RidFormat.UNSUPPORTED:
            self.loss(path, f"{self.target.name} cannot write a RID: written as null", v, None)
            return None
        if v.id and rid_format == RidFormat.NONE:
            self.loss(path, f"RID {v.id}: {self.target.name} writes no RID id, written as an empty RID", v, t.RID())
            return t.RID()
        return v

    def _float32(self, path: ValuePath, v: float) -> Any:
        if _is_f32(v):
            return v
        new = _to_f32(v)
        self.loss(path, f"float {v!r} is not exact in float32; {self.target.name} writes every float in 32 bits: "
                        "rounded", v, new)
        return new

    def _int32(self, path: ValuePath, v: int) -> Any:
        if INT32_MIN <= v <= INT32_MAX:
            return v
        new = (v + (1 << 31)) % (1 << 32) - (1 << 31)
        self.loss(path, f"int {v} does not fit in 32 bits; {self.target.name} writes every int in 32 bits: "
                        "truncated", v, new)
        return new

    def _real_math(self, path: ValuePath, v: Any) -> Any:
        spec = spec_for(v)
        assert spec is not None
        parts = spec.parts(v)
        packer = _F32_STRUCTS.get(len(parts)) or _F32_STRUCTS.setdefault(len(parts), struct.Struct(f"<{len(parts)}f"))
        try:
            if packer.unpack(packer.pack(*parts)) == parts:  # all exact (a NaN takes the slow path)
                return v
        except OverflowError:
            pass
        if all(_is_f32(x) for x in parts):
            return v
        new = spec.build(tuple(_to_f32(x) for x in parts))  # type: ignore[misc]
        self.loss(path, f"{spec.cls.__name__} has components that are not exact in float32 (a double-precision "
                        f"value); {self.target.name} stores 32-bit reals: rounded", v, new)
        return new

    def _real_packed(self, path: ValuePath, v: t.PackedArray) -> Any:
        data = v.data
        if data.typecode == "f":
            return v
        new = type(v).__new__(type(v))
        new.data = array("f", data)
        inexact = sum(1 for a in data if not _is_f32(a))
        if not inexact:
            return new
        self.loss(path, f"{type(v).__name__}: {inexact} of {len(data)} components are not exact in float32 "
                        f"(double-precision values); {self.target.name} stores 32-bit reals: rounded", v, new)
        return new


_Check = _Fn[[_Converter, ValuePath, Any], Any]


def _leaf_check(v: Any, tp: type, scalars: dict[type, Any], checks: dict[str, _Check],
                target: Dialect) -> _Check | bool:
    """What a leaf of type ``tp`` needs for the target, by its type alone: True, kept as it is;
    False, not a leaf the unchanged() walk keeps (a container type, a type the target lacks);
    else the check that decides for this value (which needs a converter to run)."""
    if tp in scalars:
        check = scalars[tp]
        return True if check is None else check  # type: ignore[no-any-return]
    spec = spec_for(v)
    if spec is None or spec.family in (Family.ARRAY, Family.DICTIONARY, Family.OBJECT) or not target.has(spec.name):
        return False
    found = checks.get(spec.name)
    return True if found is None else found


def _laid_out(path: ValuePath, entries: list[tuple[ValuePath, str, Any]],
              layout: tuple[tuple[str, Any], ...]) -> list[tuple[ValuePath, str, Any]]:
    """An object's properties in the engine's own order, each it stores present (a default where the
    source had none: a Godot 3 event has no ``window_id``); properties the layout does not name stay,
    before ``script``."""
    given = {name: entry for entry in entries for name in (entry[1],)}
    named = {name for name, _ in layout}
    extra = [e for e in entries if e[1] not in named]
    out: list[tuple[ValuePath, str, Any]] = []
    for name, default in layout:
        if name == "script":
            out += extra
            extra = []
        out.append(given.get(name) or ((path, ".", name), name, default))
    return out + extra


@attrs.frozen
class _Plan:
    """What a conversion between two dialects checks, made once per pair (:func:`_plan`): setting
    it up for every call cost more than converting most values (a save converted record by record
    spent most of its time here)."""

    checks: dict[str, _Check]  # by type name, the check of a leaf the target may have to change
    scalars: dict[type, _Check | None]  # the check of each exact scalar type the target has
    cross_major: bool
    c_flags: int | None  # the compiled unchanged() walk's flags, None: it cannot be used
    c_real: tuple[type, ...]  # the math types it checks as float32 tuples
    #: The compiled unchanged() walk with everything but the value bound (its leaf callback: a
    #: converter of its own, made only when a leaf the walk does not check asks), or None when
    #: it cannot be used (not built, or a target whose bool or Nil changes).
    c_check: _Fn[[Any], bool] | None

    def c_unchanged(self, value: Any) -> bool | None:
        """:meth:`_Converter.unchanged`, decided by the compiled walk with no converter made (a
        small record's convert_value spent most of its time making one); None: not decided."""
        check = self.c_check
        return None if check is None else check(value)


@lru_cache(maxsize=64)
def _plan(source: Dialect, target: Dialect) -> _Plan:
    checks: dict[str, _Check] = {"Object": _Converter._object_id, "RID": _Converter._rid}
    if target.float_format == FloatFormat.F32:
        checks["float"] = _Converter._float32
    if target.int_format == IntFormat.I32:
        checks["int"] = _Converter._int32
    if not target.utf8_surrogates:
        checks.update(String=_Converter._text, StringName=_Converter._text, NodePath=_Converter._node_path,
                      PackedStringArray=_Converter._string_array, Signal=_Converter._signal)
    if not target.real_is_double:
        real = {Family.MATH: _Converter._real_math, Family.PACKED: _Converter._real_packed}
        checks.update((spec.name, real[spec.family]) for spec in REGISTRY if spec.component == REAL)
    scalars = {tp: checks.get(name) for tp, name in ((str, "String"), (int, "int"), (float, "float"),
                                                    (bool, "bool"), (type(None), "Nil")) if target.has(name)}
    c_flags = None
    if len(scalars) == 5 and set(checks).isdisjoint(("bool", "Nil")):
        c_flags = (("String" in checks) * 1) | (("int" in checks) * 2) | (("float" in checks) * 4)
    # The math types that are tuples of floats, checked in C when their check is the float32 one
    # (a single-precision target); the others go through _leaf_unchanged().
    c_real = tuple(spec.cls for spec in REGISTRY if spec.family is Family.MATH and spec.component == REAL
                   and issubclass(spec.cls, tuple) and target.has(spec.name)
                   and checks.get(spec.name) is _Converter._real_math)

    def leaf(v: Any) -> bool:
        """A leaf the compiled walk does not check itself: most are kept by their type alone (a
        Color); a converter is made only for one whose check must run (a NodePath's text ...)."""
        check = _leaf_check(v, type(v), scalars, checks, target)
        if check is True or check is False:
            return check
        return _Converter(source, target)._check_keeps(check, v)

    c_check = None if c_flags is None or accel.cencode is None else \
        partial(accel.cencode.unchanged, c_flags, leaf, python_keys_agree, MAX_DEPTH, c_real)
    return _Plan(checks, scalars, source.object_classes != target.object_classes, c_flags, c_real, c_check)


def _type_label(ct: t.ContainerType | None) -> str:
    if ct is None:
        return "Variant"
    return ct.script or ct.class_name or ct.builtin


def _as_plain_dict(d: t.Dictionary) -> Any:
    """A plain ``dict`` when it holds the same entries exactly (what the decoder returns), else ``d``."""
    plain: dict[Any, Any] = {}
    try:
        for k, v in d.items():
            plain[k] = v
    except TypeError:
        return d
    return plain if len(plain) == len(d) and python_keys_agree(plain) else d


# --- the calls ------------------------------------------------------------------------

def convert_value(value: Any, source: DialectLike, target: DialectLike, *,
                  policy: str = "strict", notes: list[Note] | None = None) -> tuple[Any, list[Loss]]:
    """Rebuild ``value`` (read in ``source``) so that ``target`` can write it.

    Returns the converted value and every :class:`Loss`
    (empty when nothing changed but names).  Under ``policy="strict"`` any loss
    raises :class:`~godot_formats.errors.ConversionError` with all of them.
    The same dialect on both sides, or a value that needs no change for the target
    (nothing in it is renamed, narrowed or dropped), returns ``value`` itself, not a copy.
    ``notes``, when given, gets a :class:`Note` for each Object class renamed without loss
    (``Spatial`` -> ``Node3D``).
    """
    if policy not in POLICIES:
        check_policy(policy)
    src, dst = get_dialect(source), get_dialect(target)
    if src is dst:
        return value, []
    decided = _plan(src, dst).c_unchanged(value)  # most values of a migration: checked in C, nothing made
    if decided:
        return value, []
    converter = _Converter(src, dst)
    if decided is None and converter.unchanged(value):
        return value, []
    result = converter.run(value)
    if converter.losses and policy == "strict":
        raise ConversionError(converter.losses)
    if notes is not None:
        notes += converter.notes
    return result, converter.losses


def convert_records(values: list[Any], source: Dialect, target: Dialect, where: _Fn[[int], str],
                    damaged: Mapping[int, Loss], notes: list[Note] | None = None) -> tuple[list[Any], list[Loss]]:
    """A save's records converted (``lossy``) in one call, as :func:`convert_value` converts each:
    a save of many records converted one call at a time spent most of its time in the calls.  One
    pass over all of them finds whether any needs a change (most migrations: none); only then are
    they converted one by one.  ``where(i)`` is record ``i``'s path, put in front of its losses' and
    of an :class:`EncodeError`'s; ``damaged`` holds the loss of each record read as null because it
    was damaged in the file, listed in its place.  ``notes`` gets the renames, as from
    :func:`convert_value`."""
    if source is target or _Converter(source, target).unchanged(list(values)):
        return list(values), [damaged[i] for i in sorted(damaged)]
    converted: list[Any] = []
    losses: list[Loss] = []
    for i, v in enumerate(values):
        path = where(i)
        if i in damaged and v is None:
            losses.append(damaged[i])
            converted.append(None)
            continue
        converter = _Converter(source, target)
        try:
            new = v if converter.unchanged(v) else converter.run(v)
        except EncodeError as e:
            raise EncodeError(path=path + e.path, **e.reason_in()) from None
        converted.append(new)
        losses += [attrs.evolve(loss, path=path + loss.path) for loss in converter.losses]
        if notes is not None:
            notes += [Note(path + note.path, note.text) for note in converter.notes]
    return converted, losses
