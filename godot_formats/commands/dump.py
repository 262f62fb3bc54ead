"""``godot-formats dump FILE``: show a Variant file as Godot text, editable JSON or a tree.

The input options and the choice of dialect and framing are shared with
``explain`` and live in :mod:`godot_formats.commands.inputs`.
"""

from __future__ import annotations

import argparse
import json
import reprlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

from ..core import types as t
from ..core.dialects import Dialect, get_dialect
from ..core.errors import AmbiguousDialectError, EncodeError, GodotFormatsError
from ..core.registry import Family, TypeSpec, spec_for
from ..tool import read_input
from ..views.explain import MAX_INDENT_DEPTH, indentation
from .inputs import add_input_options

EPILOG = """\
examples:
  godot-formats dump save.dat                  Godot text (what var_to_str prints)
  godot-formats dump save.dat --json > s.json  JSON to edit, then: godot-formats load s.json -o new.dat
  godot-formats dump enc.sav --password hunter2   an encrypted save (or set GODOT_FORMATS_PASSWORD)
  godot-formats dump broken.sav --salvage      the intact records of a damaged save
  godot-formats dump save.dat --tree           an indented tree of types and values
  godot-formats dump - --dialect godot3 < blob.bin
  godot-formats dump player.sav --framing store_var --allow-objects

The file is opened through its layers (encrypted, compressed, base64) as
godot_formats.open does.  The first line of the text (a ';' comment, which
Godot's parser skips) or the first JSON document records those layers, so that
'godot-formats load' writes the file back exactly as it was.  A file that
several engine versions read completely, as different values, is refused with
its readings listed: choose one with --dialect.

--framing auto treats the file as store_var records (u32 length + value, as
FileAccess.store_var and StreamPeer.put_var write, either byte order) when the
lengths tile the file; --framing none/store_var decide it yourself.
"""


# -- the tree view -------------------------------------------------------------------------------


def _number(x: Any) -> str:
    return repr(x) if isinstance(x, float) else str(x)


def _quoted(s: str, limit: int = 80) -> str:
    from json import dumps

    shown = dumps(s[:limit], ensure_ascii=False)
    return shown if len(s) <= limit else f"{shown}… ({len(s)} characters)"


def _container_type(ct: t.ContainerType | None, d: Dialect) -> str:
    if ct is None:
        return "Variant"
    if ct.script is not None:
        return f'Script("{ct.script}")'
    return ct.class_name if ct.class_name is not None else d.native_name(ct.builtin)


def _plural(n: int, word: str, words: str = "") -> str:
    return f"{n} {word if n == 1 else words or word + 's'}"


def _field_text(value: Any, kind: str) -> str:
    if kind == "bytes":
        return _plural(len(value), "byte")
    if kind == "str":
        return _quoted(value)
    return str(list(value)) if kind == "u32s" else str(value)


def _describe_string(value: Any, spec: TypeSpec, d: Dialect) -> str:
    return f"StringName &{_quoted(value)}" if spec.name == "StringName" else f"String {_quoted(value)}"


def _describe_math(value: Any, spec: TypeSpec, d: Dialect) -> str:
    parts = ", ".join(_number(x) for x in d.math_type(spec.name).to_wire(value))
    return f"{d.native_name(spec.name)}({parts})"


def _describe_record(value: Any, spec: TypeSpec, d: Dialect) -> str:
    """A record as its fields (the registry row's), each named: ``RID(id=5)``."""
    fields = ", ".join(f"{f.attr}={_field_text(getattr(value, f.attr), f.kind)}" for f in spec.record)
    return f"{d.native_name(spec.name)}({fields})"


#: How a value without children is shown, by its registry row's family.
_DESCRIBE: dict[Family, Callable[[Any, TypeSpec, Dialect], str]] = {
    Family.NIL: lambda v, spec, d: "null",
    Family.BOOL: lambda v, spec, d: "true" if v else "false",
    Family.INT: lambda v, spec, d: f"int {int(v)}",
    Family.FLOAT: lambda v, spec, d: f"float {_number(float(v))}",
    Family.STRING: _describe_string,
    Family.NODE_PATH: lambda v, spec, d: f"NodePath {'^' if d.major >= 4 else ''}{_quoted(str(v))}",
    Family.MATH: _describe_math,
    Family.RECORD: _describe_record,
    Family.OBJECT: lambda v, spec, d: f"Object #{v.object_id} (an instance id)",  # the id form: no children
}


def describe(value: Any, d: Dialect) -> str:
    """One line for a value without children: its type (in the dialect's names) and its value."""
    spec = spec_for(value)
    show = None if spec is None else _DESCRIBE.get(spec.family)
    if show is None or (spec is not None and spec.family is Family.OBJECT and not hasattr(value, "object_id")):
        return reprlib.repr(value)  # not a Variant (the API takes any value): bounded, whatever it holds
    assert spec is not None
    return show(value, spec, d)


def _has_children(value: Any) -> bool:
    """Whether :func:`_children` gives ``value`` its own lines (without building them)."""
    spec = spec_for(value)
    return spec is not None and spec.family in _CHILDREN and not isinstance(value, t.EncodedObjectAsID)


def _packed_children(value: Any, spec: TypeSpec, d: Dialect, max_elements: int | None) -> tuple[str, list[Any]]:
    n = len(value)
    shown = n if max_elements is None else min(n, max_elements)
    name = d.native_name(spec.name)
    if spec.name == "PackedByteArray":
        stop = n if max_elements is None else min(n, 16 * max_elements)
        rows = [(f"[{i}]", _Raw(bytes(value[i:i + 16]).hex(" "))) for i in range(0, stop, 16)]
        more = n - min(n, 16 * len(rows))
        return f"{name}, {_plural(n, 'byte')}", rows + ([("", _Raw(f"… {more} more bytes"))] if more else [])
    items = [(f"[{i}]", _Raw(describe(value[i], d) if not isinstance(value[i], (int, float))
                             else _number(value[i]))) for i in range(shown)]
    if shown < n:
        items.append(("", _Raw(f"… {n - shown} more elements")))
    return f"{name}, {_plural(n, 'element')}", items


def _object_children(value: Any, spec: TypeSpec, d: Dialect, max_elements: int | None) -> tuple[str, list[Any]]:
    props = value.properties
    return f"Object {value.class_name}, {_plural(len(props), 'property', 'properties')}", \
        [(f"{k}:", v) for k, v in props.items()]


def _dictionary_children(value: Any, spec: TypeSpec, d: Dialect, max_elements: int | None) -> tuple[str, list[Any]]:
    heading = "Dictionary"
    if isinstance(value, t.TypedDictionary):
        heading += f"[{_container_type(value.key_type, d)}, {_container_type(value.value_type, d)}]"
    entries: list[tuple[str, Any]] = []
    for i, (k, v) in enumerate(value.items()):
        if type(k) is str:
            entries.append((_quoted(k) + ":", v))
        elif not _has_children(k):
            entries.append((describe(k, d) + ":", v))
        else:
            entries.append((f"key {i}:", k))
            entries.append((f"value {i}:", v))
    return f"{heading}, {_plural(len(value), 'entry', 'entries')}", entries


def _array_children(value: Any, spec: TypeSpec, d: Dialect, max_elements: int | None) -> tuple[str, list[Any]]:
    heading = "Array"
    if isinstance(value, t.TypedArray):
        heading += f"[{_container_type(value.element_type, d)}]"
    return f"{heading}, {_plural(len(value), 'item')}", [(f"[{i}]", v) for i, v in enumerate(value)]


#: The values with lines of their own under them, by their registry row's family.
_CHILDREN: dict[Family, Callable[[Any, TypeSpec, Dialect, int | None], tuple[str, list[Any]]]] = {
    Family.PACKED: _packed_children,
    Family.STRINGS: _packed_children,
    Family.OBJECT: _object_children,
    Family.DICTIONARY: _dictionary_children,
    Family.ARRAY: _array_children,
}


def _children(value: Any, d: Dialect, max_elements: int | None) -> tuple[str, list[tuple[str, Any]]] | None:
    """(heading, [(label, child)]) for a value with children, else None."""
    if not _has_children(value):
        return None
    spec = spec_for(value)
    assert spec is not None
    return _CHILDREN[spec.family](value, spec, d, max_elements)


class _Raw(str):
    """A tree line that is already text (packed array elements)."""

    __slots__ = ()




def tree_lines(value: Any, dialect: str | Dialect = "godot4", *, max_elements: int | None = 16,
               indent: str = "  ") -> Iterator[str]:
    """An indented tree of ``value``: one line per value, its type and, for leaves, its value.

    Lines are indented by depth up to :data:`MAX_INDENT_DEPTH` levels; deeper
    lines start with ``(depth N)`` at that indentation.  Any nesting is walked
    without recursion.
    """
    d = get_dialect(dialect)
    todo: list[tuple[str, Any, int]] = [("", value, 0)]
    while todo:
        label, node, depth = todo.pop()
        prefix = indentation(depth, indent) + (label + " " if label else "")
        if isinstance(node, _Raw):
            yield prefix + node
            continue
        kids = _children(node, d, max_elements)
        if kids is None:
            yield prefix + describe(node, d)
            continue
        heading, items = kids
        yield prefix + heading
        todo.extend((lab, child, depth + 1) for lab, child in reversed(items))


# -- the command -----------------------------------------------------------------------------------


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "dump", help="show a Variant file as Godot text, JSON or a tree",
        description="Decode a file of Godot binary Variant data (var_to_bytes, store_var, put_var) and "
                    "print its value: as Godot's own text (var_to_str) by default, as lossless JSON to "
                    "edit (--json; 'godot-formats load' turns it back into bytes), or as a tree (--tree).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_options(parser)
    from .common import add_salvage_option

    add_salvage_option(parser)
    parser.add_argument("--no-header", action="store_true",
                        help="leave out the first line (text) or document (JSON) that records the file's "
                             "layers for 'godot-formats load'")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_const", dest="form", const="json",
                      help="lossless JSON (Godot 4's JSON.from_native shape), one document per value")
    form.add_argument("--tree", action="store_const", dest="form", const="tree", help="an indented tree")
    form.add_argument("--text", action="store_const", dest="form", const="text",
                      help="Godot's text form, as var_to_str / var2str write it (the default)")
    parser.add_argument("--compact", action="store_true", help="with --json: one line per document")
    parser.add_argument("--base64", action="store_true",
                        help="with --json: packed number arrays as base64 instead of number lists")
    parser.add_argument("--max-elements", type=int, default=16, metavar="N",
                        help="with --tree: packed array elements shown per array, 0 for all (default: %(default)s)")
    parser.set_defaults(func=run, form="text")


def render_lines(values: list[Any], d: Dialect, args: argparse.Namespace) -> Iterator[str]:
    """The output of ``dump`` for the decoded values (one per record), a line or a document at a time.

    Text is all made before the first piece is given, so a value the text form
    cannot hold fails before anything is printed.
    """
    if args.form == "json":
        from ..views.jsonform import dumps_json

        for v in values:
            yield dumps_json(v, None if args.compact else 2, packed_base64=args.base64)
        return
    if args.form == "tree":
        limit = args.max_elements or None
        for i, v in enumerate(values):
            if len(values) > 1:
                yield f"record {i}:"
            yield from tree_lines(v, d, max_elements=limit, indent="  ")
        return
    from ..views.text import to_text

    texts = []
    for v in values:
        try:
            texts.append(to_text(v, d).rstrip("\n"))
        except EncodeError as e:
            raise EncodeError(f"{e} (use --json or --tree)") from None
    yield from texts


def render(values: list[Any], d: Dialect, args: argparse.Namespace) -> str:
    """The output of ``dump`` for the decoded values (one per record)."""
    return "\n".join(render_lines(values, d, args))


def _open(data: bytes, args: argparse.Namespace) -> tuple[Any, list[Any]]:
    """The save file (its layers) and its values, as the options ask: one reading (gf.open)."""
    from .common import ambiguity, note_damage, open_save

    try:
        sf = open_save(data, args, dialect=None if args.dialect == "auto" else args.dialect,
                       salvage=args.salvage, framing=args.framing)
    except AmbiguousDialectError as e:
        raise ambiguity(data, args, e.candidates) from None
    note_damage(sf, "dump")
    return sf, sf.values


def run(args: argparse.Namespace) -> int:
    from .common import TEXT_HEADER, header_of

    data = read_input(args.file)
    sf, values = _open(data, args)
    header = None if args.no_header or args.form == "tree" else header_of(sf)
    if args.form == "text":
        _check_text_keeps(values, sf.dialect)
    out = sys.stdout
    if header is not None:
        if args.form == "json":
            out.write(json.dumps(header, indent=None if args.compact else 2) + "\n")
        else:
            out.write(TEXT_HEADER + json.dumps(header) + "\n")
    if args.form == "text" and len(values) > 1:
        for i, line in enumerate(render_lines(values, sf.dialect, args)):
            out.write(f"; record {i + 1} of {len(values)}\n{line}\n")
        return 0
    # Written as it is made: the tree of a large file is never held whole.
    out.writelines(piece + "\n" for piece in render_lines(values, sf.dialect, args))
    return 0


def _check_text_keeps(values: list[Any], d: Dialect) -> None:
    """Say (on standard error) when Godot text does not keep a value exactly: nothing is lost silently."""
    from ..core.codec import encoder_for
    from ..views.text import from_text, to_text

    encoder = encoder_for(d, True)
    for i, v in enumerate(values):
        try:
            same = encoder.encode(from_text(to_text(v, d), d)) == encoder.encode(v)
        except GodotFormatsError:
            same = False
        if not same:
            where = f"record {i + 1}: " if len(values) > 1 else ""
            print(f"godot-formats dump: note: {where}the text form does not keep every bit of the value "
                  "(var_to_str sorts Dictionary keys; Godot 3 rounds floats; RID and Signal contents are dropped); "
                  "load writes the value as the text says: use --json to keep every bit",
                  file=sys.stderr)
            return


__all__ = ["add_parser", "tree_lines", "describe", "render", "render_lines", "run",
           "MAX_INDENT_DEPTH"]
