"""A resource file from one engine version to another: its classes, its ids and its values.

What changes, and how each change is told:

- values go through the library's Variant conversion (:func:`godot_formats.migration.convert_value`):
  Godot 3's Pool arrays become packed arrays with no change of data; a Vector2i written for Godot 3,
  a typed Array, a StringName ... become what that version has, and each is a
  :class:`~godot_formats.migration.Loss` at its path (``"main:items[2]"``);
- native classes Godot 4 renamed (``SpatialMaterial`` -> ``StandardMaterial3D``) take the new name
  from the one table of class renames (:mod:`godot_formats.core.renames`, the engine's own
  compatibility table), told in the result's ``notes``; classes Godot 4 only loads as an
  approximation (``ToolButton`` -> ``Button``) are losses.  The saves converter asks the same
  table the same way, for the resources' classes and for Objects inside their values alike;
- property renames come from the caller (``property_renames={"hp": "health"}`` or per class
  ``{"Stats.hp": "health"}``): no table can know a game's script variables, and Godot 4 drops a
  property its script no longer has without a word (godot#78893);
- metadata changes form: Godot 3 keeps it in one ``__meta__`` Dictionary, Godot 4 in one
  ``metadata/<key>`` property per key, and each engine drops the other's form silently;
- ids and the header are the writer's: a converted file is written fresh in the target's style.

Under ``policy="strict"`` any loss raises one :class:`~godot_formats.errors.ConversionError`
listing every loss of every resource.
"""

from __future__ import annotations

from typing import Any, Mapping

import attrs

from ..core import types as t
from ..core.dialects import Dialect, get_dialect
from ..core.errors import ConversionError
from ..core.renames import class_change
from ..migration import Loss, Note, convert_value
from .model import CONVERTERS, ExtResource, Resource, ResourceFile, holds, holds_reference

__all__ = ["convert_resource", "source_dialect"]

_SOURCE = {2: "godot2", 3: "godot3", 4: "godot4"}


def source_dialect(rf: ResourceFile) -> Dialect:
    """The Variant dialect of the file's values (its engine's)."""
    return get_dialect(_SOURCE.get(rf.engine, "godot4"))


_NO_RID = ("Godot 3 resource files keep no RID (its text saver writes nothing there and cannot load the file "
           "back; its binary loader reads an int): written as null")


@attrs.define
class _Converter:
    src: Dialect
    dst: Dialect
    objects: dict[int, Any]
    notes: list[str]
    losses: list[Loss] = attrs.field(factory=list)

    def value(self, value: Any, where: str) -> Any:
        """``value`` for the target; references to the file's resources become the new ones."""
        if self.dst.major == 3 and isinstance(value, t.RID):
            # Godot 3 resource files cannot keep a RID: its text saver writes nothing where one was
            # (the file then no longer loads) and its binary loader reads one back as an int.
            self.losses.append(Loss(where, _NO_RID))
            return None
        if not holds_reference(value) and not (self.dst.major == 3 and holds(value, t.RID)):
            found: list[Note] = []
            new, losses = convert_value(value, self.src, self.dst, policy="lossy", notes=found)
            self.losses += [attrs.evolve(loss, path=where + loss.path) for loss in losses]
            self.notes += [f"{where}{note.path}: {note.text}" for note in found]
            return new
        return self._walk(value, where)  # leaf by leaf: references and RIDs are the file's business

    def _walk(self, value: Any, where: str) -> Any:
        """A container holding references, rebuilt without recursion (leaves converted one by one)."""
        root: list[Any] = []
        stack: list[tuple[Any, str, Any]] = [(value, where, root.append)]
        while stack:
            v, path, put = stack.pop()
            if isinstance(v, (Resource, ExtResource)):
                put(self.objects.get(id(v), v))
            elif isinstance(v, (dict, t.Dictionary)):
                pairs: list[Any] = []
                items = list(v.items())
                put(_DictLater(pairs, len(items)))
                for k, (key, item) in reversed(list(enumerate(items))):
                    stack.append((item, f"{path}[{k}].value", pairs.append))
                    stack.append((key, f"{path}[{k}].key", pairs.append))
            elif isinstance(v, (list, tuple)) and not isinstance(v, t.Components):
                if isinstance(v, t.TypedArray) and not self.dst.typed_arrays:
                    self.losses.append(Loss(path, f"{self.dst.name} has no typed Array: written untyped"))
                out: list[Any] = []
                put(out)
                for k in reversed(range(len(v))):
                    stack.append((v[k], f"{path}[{k}]", out.append))
            else:
                put(self.value(v, path))
        return _finish(root[0])


class _DictLater:
    """A Dictionary whose keys and values are being converted (filled in file order, built last)."""

    def __init__(self, pairs: list[Any], n: int) -> None:
        self.pairs, self.n = pairs, n


def _finish(value: Any) -> Any:
    """Build the Dictionaries of a walked value, innermost first, without recursion."""
    order: list[Any] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, _DictLater):
            order.append(v)
            stack.extend(v.pairs)
        elif isinstance(v, list):
            order.append(v)
            stack.extend(v)
    built: dict[int, Any] = {}
    for v in reversed(order):
        if isinstance(v, _DictLater):
            items = [built.get(id(x), x) for x in v.pairs]
            it = iter(items)
            try:
                built[id(v)] = dict(zip(it, it))
            except TypeError:
                it = iter(items)
                built[id(v)] = t.Dictionary(list(zip(it, it)))
        else:
            v[:] = [built.get(id(x), x) for x in v]
    return built.get(id(value), value)


def _rename_class(name: str, conv: _Converter, where: str) -> str:
    """``name`` for the target, by the one table of class renames (as the saves converter names an
    Object's class): a rename is a note, an approximation a loss."""
    change = class_change(name, conv.src.object_classes, conv.dst.object_classes)
    if change is None:
        return name
    if change.loss is not None:
        conv.losses.append(Loss(where, change.loss, change.before, change.after))
    else:
        conv.notes.append(f"{where}: {change.note}")
    return change.after


def _property_name(res_type: str, name: str, renames: Mapping[str, str]) -> str:
    return renames.get(f"{res_type}.{name}", renames.get(name, name))


#: Godot 3 stores an object's metadata as one Dictionary property; Godot 4 as one property per key,
#: ``metadata/<key>``, after the others.  Each engine drops the other's form without a word.
META3 = "__meta__"
META4 = "metadata/"


def _metadata(props: dict[str, Any], src: int, dst: int, where: str, losses: list[Loss]) -> dict[str, Any]:
    """``props`` with the metadata in the target engine's form."""
    if src == 3 and dst >= 4 and isinstance(props.get(META3), (dict, t.Dictionary)):
        out = {k: v for k, v in props.items() if k != META3}
        for key, value in props[META3].items():
            if isinstance(key, str) and key:
                out[META4 + key] = value
            else:
                losses.append(Loss(f"{where}:{META3}", f"Godot 4 metadata keys are names: {key!r} is dropped"))
        return out
    if src >= 4 and dst == 3 and any(k.startswith(META4) for k in props):
        meta = {k[len(META4):]: v for k, v in props.items() if k.startswith(META4)}
        out = {}
        for k, v in props.items():
            if not k.startswith(META4):
                out[k] = v
                if k == "script":
                    out[META3] = meta
        out.setdefault(META3, meta)
        if "script" not in props:  # Godot 3 writes it first when there is no script
            out = {META3: meta, **{k: v for k, v in out.items() if k != META3}}
        return out
    return props


def convert_resource(rf: ResourceFile, target: str | Dialect, *, policy: str = "strict",
                     property_renames: Mapping[str, str] | None = None) -> tuple[ResourceFile, list[Loss]]:
    """``rf`` for the engine version of ``target`` (a dialect, e.g. "godot4"), and every loss.

    The result is a new file (``rf`` is not changed), written fresh by its writer in the target's
    format; what was renamed is in its ``notes``.
    """
    if policy not in ("strict", "lossy"):
        raise ValueError(f"policy must be 'strict' or 'lossy', not {policy!r}")
    src, dst = source_dialect(rf), get_dialect(target)
    renames = dict(property_renames or {})
    notes: list[str] = []
    objects: dict[int, Any] = {}
    conv = _Converter(src, dst, objects, notes)
    new_external = []
    for ext in rf.external:
        copy = ExtResource(_rename_class(ext.type, conv, f"ext:{ext.path}"), ext.path,
                           ext.uid if dst.major >= 4 else None, ext.id)
        objects[id(ext)] = copy
        new_external.append(copy)
    resources = [*rf.resources, rf.main]
    for res in resources:
        where = "main" if res is rf.main else str(res.id)
        objects[id(res)] = Resource(_rename_class(res.type, conv, where), {}, res.id)
    for res in resources:
        where = "main" if res is rf.main else str(res.id)
        new = objects[id(res)]
        props = _metadata(res.properties, src.major, dst.major, where, conv.losses)
        if props is not res.properties:
            notes.append(f"{where}: metadata written in Godot {dst.major}'s form")
        for name, value in props.items():
            new_name = _property_name(res.type, name, renames)
            if new_name != name:
                notes.append(f"{where}: property {name} renamed {new_name}")
            new.properties[new_name] = conv.value(value, f"{where}:{new_name}")
    if conv.losses and policy == "strict":
        raise ConversionError(conv.losses)
    header = {k: v for k, v in rf.header.items() if k in ("script_class",)}
    out = ResourceFile(objects[id(rf.main)], [objects[id(r)] for r in rf.resources], new_external,
                       engine=dst.major, format=rf.format, version=6 if dst.major >= 4 else 3,
                       header=header, notes=notes, compression=rf.compression, byteorder=rf.byteorder)
    if "gcpf" in rf.layout:  # compressed as the original was (mode, block size)
        out.layout["gcpf"] = rf.layout["gcpf"]
    if "null_objects" in rf.layout:  # the same resources in the same order: text leaves these out
        out.layout["null_objects"] = rf.layout["null_objects"]
    if rf.format == "text":
        out.version = 3 if dst.major >= 4 else 2
    return out, conv.losses


CONVERTERS.append(convert_resource)
