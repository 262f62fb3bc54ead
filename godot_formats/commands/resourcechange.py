"""``set`` and ``edit`` on a resource save (``.tres``, ``.res``, compressed ``.res``).

A resource file is changed through its model (:class:`~godot_formats.resources.ResourceFile`)
and written back in its own form and format version, so that what the user did not touch keeps
its bytes: a ``.res`` keeps its string table, its resource ids and its order; a ``.tres`` its
attribute order and blank lines.  ``edit`` shows any resource file as ``.tres`` text, the form
a person can read; a binary file edited that way is written back as binary, with every
value whose text was left alone taken from the file, so no float loses a bit to the text.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..core.errors import GodotFormatsError
from ..documents.kinds import OpenOptions

__all__ = ["open_resource_for_change", "write_resource_back", "text_dialect", "start_resource",
           "render_resource", "parse_resource_edit"]


def open_resource_for_change(path: Path, data: bytes) -> Any | None:
    """The ResourceFile in ``data`` when it is a resource save; None for a save (a scene is refused by
    name): the kind as ``gf.open`` tells it (:data:`godot_formats.documents.KINDS`), read by its row."""
    from ..documents import kind_of

    kind = kind_of(data)
    if kind.name != "resource":  # set and edit know the save's records and the resource's model
        return None
    return kind.read(data, path, OpenOptions())


def write_resource_back(path: Path, original: bytes, rf: Any, command: str, allow_scripts: bool) -> int:
    """Write ``rf`` over ``path`` in its own form (a backup first), or say that nothing changed."""
    from .common import write_back

    data = rf.to_bytes(allow_scripts=allow_scripts)
    if data == original:
        print(f"godot-formats {command}: no change; {path} not written", file=sys.stderr)
        return 0
    kept = write_back(path, original, data)
    print(f"godot-formats {command}: {path} written ({describe(rf)}); the old file is {kept}", file=sys.stderr)
    return 0


def describe(rf: Any) -> str:
    form = f"binary format {rf.version}" if rf.format == "binary" else f"text format {rf.version}"
    extra = (", compressed" if rf.compression else "") + (", big-endian" if rf.byteorder == "big" else "")
    return f"Godot {rf.engine} resource, {form}{extra}"


def text_dialect(rf: Any) -> str:
    """The dialect of a value typed for this file: Godot 3's text for Godot 2 and 3 files."""
    return "godot3" if rf.engine <= 3 else "godot4"


def start_resource(rf: Any, ident: str | None) -> Any:
    """The main resource, or the sub-resource whose id is ``ident`` (``3``, ``Resource_bc5hj``,
    ``local://3``)."""
    if ident is None:
        return rf.main
    want = ident[len("local://"):] if ident.startswith("local://") else ident
    for res in rf.resources:
        own = str(res.id)
        if (own[len("local://"):] if own.startswith("local://") else own) == want:
            return res
    ids = ", ".join(str(r.id) for r in rf.resources) or "none"
    raise GodotFormatsError(f"--resource {ident}: no sub-resource has that id (the file's: {ids})")


# -- edit ------------------------------------------------------------------------------------------


def render_resource(rf: Any, original: bytes) -> str:
    """The text a person edits: a ``.tres`` file's own text, or a ``.res`` file as ``.tres``."""
    if rf.format == "text":
        return original.decode("utf-8")
    shown: str = rf.to_bytes(format="text", allow_scripts=True).decode("utf-8")  # shown, not written
    return shown


def parse_resource_edit(text: str, rf: Any) -> Any:
    """The file the edited ``text`` makes, in ``rf``'s own form and format version."""
    from ..resources.text import read_text

    edited = read_text(text.encode("utf-8"))
    if rf.format == "text":
        return edited
    return _onto_binary(rf, edited)


def _key(ident: Any) -> str:
    text = str(ident)
    return text[len("local://"):] if text.startswith("local://") else text


def _onto_binary(original: Any, edited: Any) -> Any:
    """``edited`` (read from text) as the binary file ``original`` was: its header, tables and
    resource order; each property whose text did not change keeps its value from ``original``."""
    import attrs

    from ..core.codec import encoder_for
    from ..core.dialects import get_dialect
    from ..resources.model import holds_reference
    from .common import keep_untouched

    by_key = {_key(r.id): r for r in (*original.resources, original.main)}
    order = {_key(r.id): i for i, r in enumerate(original.resources)}
    resources = sorted(edited.resources, key=lambda r: order.get(_key(r.id), len(order)))
    ext_order = {(e.type, e.path): i for i, e in enumerate(original.external)}
    external = sorted(edited.external, key=lambda e: ext_order.get((e.type, e.path), len(ext_order)))
    for i, ext in enumerate(external):
        ext.id = i
    dialect = get_dialect(text_dialect(original))
    encoder = encoder_for(dialect, True)
    pairs = [(r, by_key.get(_key(r.id))) for r in resources] + [(edited.main, original.main)]
    for new, old in pairs:
        if old is None:
            continue
        for name, value in new.properties.items():
            if name in old.properties and not holds_reference(value) and not holds_reference(old.properties[name]):
                new.properties[name] = keep_untouched(value, old.properties[name], dialect, encoder)
    for res in resources:  # the binary table's own paths for the resources it had
        old = by_key.get(_key(res.id))
        if old is not None and old is not original.main:
            res.id = old.id
    edited.main.id = original.main.id
    return attrs.evolve(original, main=edited.main, resources=resources, external=external,
                        notes=list(original.notes))
