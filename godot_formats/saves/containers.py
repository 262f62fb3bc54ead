"""What holds a save's values inside its layers, one row per container, beside the layers' table
(:data:`godot_formats.saves.reading.LAYERS`): every question about a container (are its values
Variants, one per record? behind ``store_var`` length prefixes? one value or many? how are its
Variants put together, and how is it said in words) is asked of its row, never of its name.

The rows, as the engines write them:

- ``store_var``: ``FileAccess.store_var``/``StreamPeer.put_var`` records, each a u32 length (in the
  file's byte order) then the Variant (core/io/file_access.cpp ``store_var``);
- ``var_to_bytes``: one bare Variant, no length (``var_to_bytes``/``var2bytes``);
- ``base64``: one Variant as ``Marshalls.variant_to_base64`` text (core/core_bind.cpp);
- ``project_settings``: ``project.binary``/``engine.cfb``, the ``ECFG`` table of settings
  (core/config/project_settings.cpp ``_save_settings_binary``), one mapping of the settings;
- ``text``: ConfigFile text (``ConfigFile.save_encrypted_pass``), one ``str``.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import attrs

from ..layers.framing import join_frames

__all__ = ["CONTAINERS", "Container", "container"]


@attrs.frozen
class Container:
    """One container.

    ``variants``: its values are Variants, one per record, whose bytes (slack, an engine's padding)
    are kept; ``framed``: each behind a ``store_var`` length prefix (byte order, many records);
    ``plain``: a file whose container says nothing more than its dialect does (a line need not
    name it); ``objects``: the engine writes its Variants with full Objects
    (``encode_variant(value, full_objects=true)``), so they are read so; ``join(blobs,
    byteorder)``: the plaintext of a Variant container from its values' bytes (None: the container
    writes its values itself); ``words(sf)``: it, in words; ``decoded``: for a container that is an
    encoding of its bytes (base64 text), what a listing of the bytes inside says was done (None: the
    bytes are the file's own)."""

    name: str
    variants: bool
    framed: bool
    plain: bool
    objects: bool
    join: Callable[[list[bytes], str], bytes] | None
    words: Callable[[Any], str]
    decoded: str | None = None


def _records(sf: Any) -> str:
    n = len(sf.values)
    return f"store_var, {n} record{'s' if n != 1 else ''}" + (", big-endian lengths" if sf.byteorder == "big" else "")


#: The containers, by name.
CONTAINERS: dict[str, Container] = {row.name: row for row in (
    Container("store_var", True, True, True, False, join_frames, _records),
    Container("var_to_bytes", True, False, True, False, lambda blobs, order: blobs[0],
              lambda sf: "one var_to_bytes value (no length prefix)"),
    Container("base64", True, False, False, False, lambda blobs, order: base64.b64encode(blobs[0]),
              lambda sf: "Marshalls.variant_to_base64 text", decoded="base64-decoded"),
    Container("project_settings", False, False, False, True, None, lambda sf: "project settings (ECFG)"),
    Container("text", False, False, False, False, None, lambda sf: "ConfigFile text"),
)}


def container(name: str) -> Container:
    """The row of the container ``name`` (``ValueError`` for a name no row has)."""
    try:
        return CONTAINERS[name]
    except KeyError:
        raise ValueError(f"unknown container {name!r}; containers: {', '.join(CONTAINERS)}") from None
