"""A lossless JSON form of every value, in the shape of Godot 4's ``JSON.from_native``.

Godot 4.4+ maps Variants to JSON with ``JSON.from_native`` / ``JSON.to_native``:
``"i:3"``, ``"f:0.5"``, ``"s:text"``, ``"sn:name"``, ``"np:path"`` for scalars,
``{"type": "Vector2", "args": [1.5, -2.0]}`` for math types and packed arrays,
``{"type": "Dictionary", "args": [key, value, ...]}``, ``{"type": "Array",
"elem_type": "int", "args": [...]}`` for typed containers and
``{"type": "Node", "props": [name, value, ...]}`` for full Objects.  We write
the same shapes, so a file made here is read by the engine and the other way
round, and deviate only where the engine's mapping loses what a byte-exact
round trip must keep (docs/json.md lists each deviation and why):

* floats are written with the shortest text that reads back to the same
  double (the engine rounds to 15 digits and turns ``-0.0`` into ``0.0``);
  non-finite numbers inside ``args`` are the strings ``"inf"``, ``"-inf"``
  and ``"nan"`` (the engine writes ``1e99999`` and ``null``, and reads
  ``null`` as ``0``, which we do too);
* a NaN whose bits are not the canonical quiet NaN is ``"nan(0x...)"``;
* RID, Signal and Object ids (the engine keeps none of them) are kept in
  extra keys the engine ignores: ``{"type": "RID", "id": 5}``;
* an Object written as an id is ``{"type": "EncodedObjectAsID", "object_id": N}``
  (no ``props``: the engine has no JSON for it);
* a NodePath whose text form would not read back to the same names is
  ``{"type": "NodePath", "names": [...], "subnames": [...], "absolute": false}``;
* ``packed_base64=True`` writes packed number arrays as little-endian bytes in
  base64 (``{"type": "PackedByteArray", "base64": "AQID"}``) instead of number
  lists: four times smaller for bytes, and bit-exact for every NaN.

Numbers in ``args`` are plain JSON numbers, read exactly by :func:`loads_json`;
tools that read every number as a double (the engine, JavaScript) round
integers beyond 2**53 in packed int64 arrays.

Both directions walk containers with an explicit stack, like the codec, so a
value nested 1024 levels deep converts without ``RecursionError``; so do
:func:`dumps_form` and :func:`loads_form`, which write and read a JSON form
already made (a document holding such forms: a resource save's, in
:mod:`godot_formats.resources.jsondoc`).  A value with no Godot type (a
resource save's reference to a resource) is written by the caller's
``default``, as ``json.dumps``'s, and read back by its ``object_hook``.
"""

from __future__ import annotations

from ...core.errors import JSONFormatError
from .common import JSONValue
from .parser import loads_form, loads_json, loads_json_documents
from .printer import MAX_INDENT_COLUMNS, dumps_form, dumps_json
from .reader import ObjectHook, from_json
from .writer import Default, to_json

__all__ = ["to_json", "from_json", "dumps_json", "loads_json", "loads_json_documents", "dumps_form", "loads_form",
           "Default", "ObjectHook", "JSONFormatError", "JSONValue", "MAX_INDENT_COLUMNS"]
