"""Does this file hold code?  Found by parsing, never by loading or matching text.

Loading a resource runs the scripts it embeds (``_init``, ``_static_init``, member initialisers:
godot#98168, godot-proposals#4925), and everything it references is loaded with it: a second file
an attacker dropped beside the save runs just the same.  A regular-expression scanner misses what
hides in a compressed file, a nested sub-resource, an inline ``Object(...)`` or a reference inside
a Dictionary.  Here the file is parsed (:mod:`.binary`, :mod:`.text`, :mod:`godot_formats.configfile`, or the
save-file reader) and **one walk** looks at every resource, every property and every element at any
depth; the same walk gates the writers (``allow_scripts``) and the ``engine`` command.  What counts
as code is stated once, in :mod:`godot_formats.core.classdb`.  The findings:

- ``embedded-script``: a resource or an inline ``Object(...)`` that is a script (a Script class, or
  one holding ``script/source``): Godot compiles and runs it when it loads the file;
- ``object-with-script``: an inline ``Object(...)`` with a ``script``: Godot makes the object and
  runs that script's ``_init``;
- ``script-outside-project`` / ``resource-outside-project``: a reference (``[ext_resource]``, a
  ``Resource("...")`` literal, a typed container's script) to a path outside ``res://``
  (``user://``, absolute, relative, another scheme, ``..``): Godot loads that file when it loads this
  one, and runs whatever script it holds; a resource file can hold one as well as a script can;
- ``code-class``: a resource or object of a class that loads or runs code (a scene, a native
  library), or a reference to one inside ``res://``, in a file that should only hold data.

An empty list means none was found.  A file that cannot be read raises: it is never called clean.
This is the question users ask of a shared save; it is not an antivirus (a script the save points
to inside ``res://`` is the game's own code).
"""

from __future__ import annotations

from typing import Any

import attrs

from ..core import types as t
from ..core.classdb import (
    CODE_CLASSES,
    CODE_EXTENSIONS,
    CODE_LOADING_CLASSES,
    SCRIPT_CLASSES,
    SCRIPT_EXTENSIONS,
    engine_name,
    extension,
    outside_project,
)
from ..core.errors import QUOTED, quoted
from .model import SCANNERS, ExtResource, Resource, ResourceFile

__all__ = ["Finding", "Walk", "scan", "scan_value", "walk_file"]


@attrs.frozen
class Finding:
    """One reason a file may run code: ``kind`` (see the module docstring), ``where`` (which resource,
    reference or value), the sentence that explains it, and ``file``: the file it was found in
    when the scan followed a reference into another file (None: the file scanned)."""

    kind: str
    where: str
    message: str
    file: str | None = None

    def __str__(self) -> str:
        inside = f"in {self.file}: " if self.file is not None else ""
        return f"{self.kind}: {inside}{self.where}: {self.message}"


def _key_text(key: Any) -> str:
    return quoted(key) if isinstance(key, str) else type(key).__name__


def _name_text(name: Any) -> str:
    return name if isinstance(name, str) and len(name) <= QUOTED and name.isprintable() else _key_text(name)


def _class_of(value: Any) -> str:
    """The class an engine would make for a resource or an inline Object, as Godot 3 reads the name."""
    name = value.type if isinstance(value, Resource) else value.class_name
    return engine_name(name) if isinstance(name, str) else ""


def _properties(value: Any) -> dict[str, Any]:
    """The properties of a resource or Object by the names an engine sets (cut at a NUL, as Godot 3)."""
    return {engine_name(k) if isinstance(k, str) else k: v for k, v in value.properties.items()}


class _Place:
    """Where a value is: the step from its parent's place (``.name``, ``[3]``, ``['key']``).  A
    place is made in constant time and shown in bounded text (the first and the last steps), so
    that a walk down a value a hundred thousand levels deep stays linear: paths are never built
    by copying the parent's text."""

    __slots__ = ("parent", "step", "depth", "head")
    _HEAD = _TAIL = 8
    parent: _Place | None
    step: str
    depth: int
    head: str

    def __init__(self, parent: _Place | None, step: str) -> None:
        self.parent, self.step = parent, step
        self.depth = 0 if parent is None else parent.depth + 1
        self.head = step if parent is None else parent.head + step if self.depth <= self._HEAD else parent.head

    def __str__(self) -> str:
        steps: list[str] = []
        place: _Place | None = self
        while place is not None and place.depth > self._HEAD and len(steps) < self._TAIL:
            steps.append(place.step)
            place = place.parent
        if place is None or place.depth <= self._HEAD:
            return (place.head if place is not None else "") + "".join(reversed(steps))
        return f"{place.head}...{''.join(reversed(steps))}"  # the steps between: (depth - 16) of them


#: What the walk looks into; every other value (numbers, strings, vectors, packed arrays) holds no code.
_WALKED = (Resource, t.Object, t.Dictionary, dict, list, tuple)
_HOLDERS = (ExtResource, *_WALKED)


class Walk:
    """The one walk over values: Resources of a file, inline Objects, Arrays and Dictionaries (typed
    ones with their scripts), and every reference to another file, at any depth, without recursion,
    each object once.  ``found`` holds the findings in the order met; ``references`` every path a
    load of the value would load, with where it was (what :func:`~.opening.scan_resource` follows)."""

    def __init__(self, listed: tuple[Resource, ...] = ()) -> None:
        self.found: list[Finding] = []
        self.references: list[tuple[str, str]] = []
        self._seen: set[int] = set()
        self._paths: set[str] = set()
        self._listed = {id(res) for res in listed}

    def reference(self, path: Any, type_name: str, where: str | _Place) -> None:
        """A path that loading the value loads: flagged when it is outside ``res://`` or loads code."""
        if not isinstance(path, str) or path in self._paths:
            return  # each path is named once, where it is met first
        self._paths.add(path)
        where = str(where)
        self.references.append((path, where))
        why = outside_project(path)
        shown = f"{path!r:.200}"
        if why is not None:
            is_code = engine_name(type_name) in CODE_CLASSES or extension(path) in CODE_EXTENSIONS
            kind = "script-outside-project" if is_code else "resource-outside-project"
            self.found.append(Finding(kind, where, f"the path {shown} {why}: Godot loads that file when it loads "
                                                   "this one, and runs whatever script it holds"))
        elif engine_name(type_name) in CODE_LOADING_CLASSES or extension(path) in CODE_EXTENSIONS - SCRIPT_EXTENSIONS:
            self.found.append(Finding("code-class", where, f"the path {shown} is a {type_name or 'file'} that "
                                                           "loads code: a save that loads it instantiates its scripts"))

    def _object(self, value: Any, place: _Place, inline: bool) -> None:
        where = str(place)
        cls, props = _class_of(value), _properties(value)
        what = "an inline Object" if inline else "a resource"
        if cls in SCRIPT_CLASSES or "script/source" in props:
            self.found.append(Finding("embedded-script", where, f"{what} of class {cls or '?'} that is a script "
                                                                "embedded in the file: Godot compiles and runs it "
                                                                "when it loads the file"))
        elif cls in CODE_CLASSES:
            self.found.append(Finding("code-class", where, f"{what} of class {cls}, which is not data: loading "
                                                           "it loads or runs code"))
        script = props.get("script")
        if inline and script is not None:
            if isinstance(script, str):  # Godot 4.3+ bytes: the script's path
                self.reference(script, "Script", f"{where}.script")
            self.found.append(Finding("object-with-script", f"{where}.script", "an inline Object with a script "
                                      "attached: Godot makes the object and runs its script's _init"))

    def _typed(self, value: Any, place: _Place) -> None:
        where = str(place)
        kinds = [("element", value.element_type)] if isinstance(value, t.TypedArray) else \
            [("key", value.key_type), ("value", value.value_type)]
        for part, ct in kinds:
            if ct is not None and ct.script is not None:
                self.reference(ct.script, "Script", f"{where} ({part} type's script)")

    def visit(self, value: Any, where: str, *, listed: bool = False) -> None:
        """Walk ``value``, found at ``where``, and everything inside it.  ``listed``: ``value`` is
        one of the file's own resources, walked under its own name (met elsewhere, it is only named)."""
        stack: list[tuple[_Place, Any, bool]] = [(_Place(None, where), value, listed)]
        while stack:
            place, v, own = stack.pop()
            stack.extend((p, x, False) for p, x in reversed(self._step(place, v, own)))

    def _step(self, place: _Place, v: Any, own: bool) -> list[tuple[_Place, Any]]:
        """Check one value; the values inside it, to walk next."""
        if isinstance(v, ExtResource):
            if id(v) not in self._seen:
                self._seen.add(id(v))
                self.reference(v.path, v.type, f"{place}: external resource {v.path!r:.200} ({v.type})")
            return []
        if not isinstance(v, _WALKED) or isinstance(v, t.Components):
            return []
        if id(v) in self._seen or (isinstance(v, Resource) and id(v) in self._listed and not own):
            return []
        self._seen.add(id(v))
        if isinstance(v, (Resource, t.Object)):
            self._object(v, place, inline=isinstance(v, t.Object))
            return [(_Place(place, f".{_name_text(k)}"), x) for k, x in v.properties.items() if isinstance(x, _HOLDERS)]
        if isinstance(v, (t.TypedArray, t.TypedDictionary)):
            self._typed(v, place)
        if isinstance(v, (dict, t.Dictionary)):
            inside: list[tuple[_Place, Any]] = []
            for k, x in v.items():
                if isinstance(k, _HOLDERS):
                    inside.append((_Place(place, f"<key {_key_text(k)}>"), k))
                if isinstance(x, _HOLDERS):
                    inside.append((_Place(place, f"[{_key_text(k)}]"), x))
            return inside
        return [(_Place(place, f"[{i}]"), x) for i, x in enumerate(v) if isinstance(x, _HOLDERS)]


def _label(res: Resource, rf: ResourceFile) -> str:
    return "the main resource" if res is rf.main else f"sub-resource {res.id} ({_name_text(res.type)})"


def walk_file(rf: ResourceFile) -> Walk:
    """The walk over ``rf`` in file order: its external resources, then each resource with
    everything its properties hold."""
    listed = (*rf.resources, rf.main)
    walk = Walk(listed)
    for ext in rf.external:
        walk.visit(ext, "[ext_resource]")
    for res in listed:
        walk.visit(res, _label(res, rf), listed=True)
    return walk


def scan(rf: ResourceFile) -> list[Finding]:
    """Every finding in ``rf``, in file order (empty: nothing that runs code was found)."""
    return walk_file(rf).found


def scan_value(value: Any, *, where: str = "<value>") -> list[Finding]:
    """Every finding in a value (a decoded Variant, a ConfigFile value, a resource's property):
    what a real engine would run if it made the objects the value describes."""
    walk = Walk()
    walk.visit(value, where)
    return walk.found


SCANNERS.append(scan)
