"""``godot-formats set FILE PATH VALUE``: change one value of a save file, without an editor.

``PATH`` walks into the value: ``player.hp``, ``inventory[1]``, ``["key with.dots"]``;
``--record N`` picks the record of a file of several ``store_var`` records.  ``VALUE`` is Godot
text in the file's dialect (``100``, ``"Ann"``, ``Vector2(1, 2)``), or JSON with ``--json``.
The file is written back with the same layers, atomically, after a backup (as ``edit``).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from typing import Any

from ..core import types as t
from ..core.errors import FileChangedError, GodotFormatsError
from ..core.registry import is_dictionary
from .common import (
    add_dialect_option,
    add_password_options,
    kind_of_input,
    open_for_change,
    read_for_change,
    save_changed,
    write_config_back,
)
from .resourcechange import open_resource_for_change, start_resource, text_dialect, write_resource_back

EPILOG = """\
examples:
  godot-formats set save.sav player.hp 100
  godot-formats set save.sav 'inventory[1]' '"shield"'
  godot-formats set save.sav pos 'Vector2(3, 4)' --record 2
  godot-formats set enc.sav gold 999 --password hunter2
  godot-formats set save.sav '["odd.key"]' true

PATH: names separated by dots (Dictionary keys that are Strings or StringNames,
Object properties), [N] for an Array index or an int key, ["text"] for any
String key.  An empty PATH ('') replaces the whole record.  A new key can be
added to a Dictionary; an Array index must exist.  VALUE is Godot text (as
var_to_str writes it) in the file's dialect, or JSON with --json.  The old file
is kept as FILE.bak (FILE.bak.1 ... if that exists).
"""

_TOKEN = re.compile(r'\.?([A-Za-z_][A-Za-z0-9_/:-]*)|\[(-?\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "set", help="change one value inside a save file (non-interactive edit)",
        description="Set the value at PATH inside a save file to VALUE and write the file back with its layers.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="the save file")
    parser.add_argument("path", metavar="PATH", help="where: player.hp, inventory[1], [\"key\"] ('' = the record)")
    parser.add_argument("value", metavar="VALUE", help="the new value, as Godot text (or JSON with --json)")
    parser.add_argument("--record", type=int, default=None, metavar="N",
                        help="the record (from 1) of a file of several store_var records")
    parser.add_argument("--resource", metavar="ID", default=None,
                        help="in a resource save (.tres, .res): start at the sub-resource with this id "
                             "(default: the main resource)")
    parser.add_argument("--allow-scripts", action="store_true",
                        help="write back a resource save that embeds a script (copied as it is, never run)")
    parser.add_argument("--json", action="store_true", help="VALUE is in the JSON form of 'dump --json'")
    add_dialect_option(parser)
    parser.add_argument("--allow-objects", action="store_true",
                        help="read and write full Objects (as inert data, never code)")
    add_password_options(parser)
    parser.set_defaults(func=run)


def parse_path(path: str) -> list[tuple[str, Any]]:
    """``player.items[2]`` → [("name", "player"), ("name", "items"), ("index", 2)]."""
    import json

    steps: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if m is None or (m.group(1) is not None and path[pos] != "." and pos > 0):
            raise GodotFormatsError(f"PATH {path!r}: cannot read it at character {pos} "
                                    '(names separated by dots, [N], ["key"])')
        if m.group(1) is not None:
            steps.append(("name", m.group(1)))
        elif m.group(2) is not None:
            steps.append(("index", int(m.group(2))))
        else:
            steps.append(("key", json.loads(m.group(3))))
        pos = m.end()
    return steps


def _label(steps: list[tuple[str, Any]]) -> str:
    out = ""
    for kind, x in steps:
        out += f".{x}" if kind == "name" else f"[{x}]" if kind == "index" else f"[{x!r}]"
    return out.lstrip(".") or "<record>"


def _find_key(container: Any, kind: str, x: Any) -> Any:
    """The existing key of a Dictionary that a step names, or the key to add."""
    keys = list(container.keys())
    if kind == "index":
        for k in keys:
            if type(k) is int and k == x:
                return k
        return x
    for k in keys:
        if isinstance(k, str) and str(k) == x and not isinstance(k, t.NodePath):
            return k
    return x


def _step(node: Any, kind: str, x: Any, where: str) -> tuple[Any, Any]:
    """(the container to assign into, the key or index) for one step."""
    from ..resources.model import ExtResource, Resource

    if isinstance(node, Resource):  # a resource file's resource: any property may be set
        if kind == "index":
            raise GodotFormatsError(f"{where}: a resource ({node.type}) has properties, not indices")
        return node.properties, x
    if isinstance(node, ExtResource):
        raise GodotFormatsError(f"{where}: an external resource ({node.path}) is another file, not this one's")
    if isinstance(node, t.Object):
        if kind == "index":
            raise GodotFormatsError(f"{where}: an Object has properties, not indices")
        if x not in node.properties:
            raise GodotFormatsError(f"{where}: the Object ({node.class_name}) has no property {x!r}")
        return node.properties, x
    if is_dictionary(node):
        return node, _find_key(node, kind, x)
    if isinstance(node, list):
        if kind != "index":
            raise GodotFormatsError(f"{where}: an Array is indexed with [N], not {x!r}")
        if not -len(node) <= x < len(node):
            raise GodotFormatsError(f"{where}: index {x} is out of range (the Array has {len(node)} items)")
        return node, x
    raise GodotFormatsError(f"{where}: cannot go inside a {type(node).__name__} value")


def assign(root: Any, steps: list[tuple[str, Any]], new: Any) -> tuple[Any, bool]:
    """Set the value at ``steps`` inside ``root`` to ``new``: (the old value, whether a key was added)."""
    node = root
    for i, (kind, x) in enumerate(steps[:-1]):
        container, key = _step(node, kind, x, _label(steps[:i + 1]))
        if is_dictionary(container) and key not in container:
            raise GodotFormatsError(f"{_label(steps[:i + 1])}: no such key")
        node = container[key]
    label = _label(steps)
    container, key = _step(node, *steps[-1], label)
    added = is_dictionary(container) and key not in container
    old = None if added else container[key]
    try:
        container[key] = new
    except TypeError as e:
        raise GodotFormatsError(f"{label}: cannot be changed in place ({e})") from None
    return old, added


def _float_hint(old: Any, new: Any, typed: str, json_form: bool) -> str:
    """How to keep a float a float, quoting what the user typed: only when a float becomes an int
    (``4`` for a float field is an int in Godot text, ``4.0`` the float; ``"i:4"`` and ``"f:4"`` in
    JSON)."""
    if not (type(old) is float and type(new) is int):  # bool is an int to isinstance, not here
        return ""
    text = typed.strip()
    if json_form:
        as_float = f'"f:{new}"'
    else:
        as_float = f"{text}.0" if re.fullmatch(r"[+-]?[0-9]+", text) else repr(float(new))
    return f" (write {as_float} for a float)"


#: Times ``set`` reads the file again when another process changed it between its read and its write.
ATTEMPTS = 20


def run(args: argparse.Namespace) -> int:
    """Set the value, on the file as it is when written: when another process changed the file after
    it was read (``edit``, another ``set``), it is read again and the change made again on it."""
    for _ in range(ATTEMPTS - 1):
        try:
            return _set_once(args)
        except FileChangedError:
            continue
    return _set_once(args)


def _set_once(args: argparse.Namespace) -> int:
    from ..views.jsonform import loads_json
    from ..views.text import from_text

    steps = parse_path(args.path)
    path, original = read_for_change(args)
    change = CHANGES.get(kind_of_input(original, args))  # the kind, as gf.open tells it
    if change is not None:
        return change(args, steps, path, original)
    if args.resource is not None:
        raise GodotFormatsError("--resource is for resource saves (.tres, .res); a store_var save has records")
    sf = open_for_change(args, original)
    n = len(sf.values)
    if n == 0:
        raise GodotFormatsError(f"{path} holds no record")
    if args.record is None:
        if n > 1:
            raise GodotFormatsError(f"{path} holds {n} store_var records: give --record N (1 to {n})")
        index = 0
    else:
        if not 1 <= args.record <= n:
            raise GodotFormatsError(f"--record {args.record}: {path} holds {n} record(s)")
        index = args.record - 1
    new = loads_json(args.value) if args.json else from_text(args.value, sf.dialect)
    added = False
    if not steps:
        old: Any = sf.values[index]
        sf.values[index] = new
    else:
        old, added = assign(sf.values[index], steps, new)
    where = f"record {index + 1}: " if n > 1 else ""
    before = "(new key)" if added else _shown(old, sf.dialect)
    print(f"{where}{_label(steps)}: {before} -> {_shown(new, sf.dialect)}", file=sys.stderr)
    if not added and old is not None and type(old) is not type(new):
        print(f"godot-formats set: note: the type changes from {type(old).__name__} to {type(new).__name__}"
              + _float_hint(old, new, args.value, args.json), file=sys.stderr)
    return save_changed(path, original, sf, "set")


def _shown(value: Any, dialect: Any) -> str:
    """A value on one line as the text form writes it (``repr`` for what it cannot write)."""
    from ..views.text import to_text

    try:
        return to_text(value, dialect).replace("\n", " ")
    except (TypeError, ValueError):  # the library's errors are ValueErrors too
        return repr(value)


def _set_in_resource(args: argparse.Namespace, steps: list[tuple[str, Any]], path: Any, original: bytes) -> int:
    """``set`` on a resource save: PATH starts at the main resource (or ``--resource ID``'s) and may
    walk into its sub-resources; the file is written back in its own form and format."""
    from ..views.jsonform import loads_json
    from ..views.text import from_text

    rf = open_resource_for_change(path, original)
    if args.record is not None:
        raise GodotFormatsError("--record is for store_var saves: a resource save has properties "
                                "(--resource ID starts at a sub-resource)")
    if not steps:
        raise GodotFormatsError("PATH is empty: name a property of the resource (player_name, stats.hp)")
    dialect = text_dialect(rf)
    new = loads_json(args.value) if args.json else from_text(args.value, dialect)
    old, added = assign(start_resource(rf, args.resource), steps, new)

    where = f"sub-resource {args.resource}: " if args.resource is not None else ""
    before = "(new property)" if added else _shown(old, dialect)
    print(f"{where}{_label(steps)}: {before} -> {_shown(new, dialect)}", file=sys.stderr)
    if added and len(steps) == 1:
        print("godot-formats set: note: a new property; the engine sets it on load only if the resource's "
              "class or script has it", file=sys.stderr)
    return write_resource_back(path, original, rf, "set", args.allow_scripts)


def _set_in_config(args: argparse.Namespace, steps: list[tuple[str, Any]], path: Any, original: bytes) -> int:
    """``set`` on a ConfigFile (plain or encrypted): PATH is ``section.key`` (then, as in a save, into the
    value); the value is set as ``ConfigFile.set_value`` sets it (``null`` erases the key) and the file is
    written back with only that entry's text changed, encrypted again with its key."""
    from ..configfile.model import resolver
    from ..views.jsonform import loads_json
    from ..views.text import from_text
    from .common import open_config

    if args.record is not None or args.resource is not None:
        raise GodotFormatsError("--record and --resource are for saves and resource saves: a ConfigFile has "
                                "sections and keys (PATH: section.key)")
    if len(steps) < 2 or "index" in (steps[0][0], steps[1][0]):
        raise GodotFormatsError(f"PATH {args.path!r}: a ConfigFile value is named by its section and key: "
                                'player.gold, input.jump, ["my section"].key, [""].key for keys before any section')
    doc = open_config(original, args)  # never salvaged: a damaged file is not written back
    (_, section), (_, key), inside = steps[0], steps[1], steps[2:]
    new = loads_json(args.value) if args.json else from_text(args.value, doc.dialect, resources=resolver)
    placed = f"[{section}] {key}" + (f" {_label(inside)}" if inside else "")
    if not inside:
        added, old = not doc.has_section_key(section, key), doc.get_value(section, key)
        doc.set_value(section, key, new)
    else:
        if not doc.has_section_key(section, key):
            raise GodotFormatsError(f"[{section}] {key}: no such key")
        value = doc.get_value(section, key)
        old, added = assign(value, inside, new)
        doc.set_value(section, key, value)
    print(f"{placed}: {'(new key)' if added else _shown(old, doc.dialect)} -> {_shown(new, doc.dialect)}",
          file=sys.stderr)
    if new is None and not inside:
        print("godot-formats set: note: null erases the key (and its section once empty), as ConfigFile.set_value "
              "does", file=sys.stderr)
    return write_config_back(path, original, doc, "set")


#: How ``set`` changes each kind of document that is not a save (a save's records are the rest of
#: :func:`_set_once`): one row per kind of :data:`godot_formats.documents.KINDS`.
CHANGES: dict[str, Callable[[argparse.Namespace, list[tuple[str, Any]], Any, bytes], int]] = {
    "resource": _set_in_resource,
    "configfile": _set_in_config,
}
