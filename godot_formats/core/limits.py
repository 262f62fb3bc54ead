"""Every size and depth the library reads up to unless the caller says otherwise, in one place.

Each default of a ``max_size=``, ``max_ratio=``, ``max_depth=`` or ``max_packet_size=`` option,
in every module and entry point, reads its constant here (the old module-level names,
``reading.DEFAULT_MAX_FILE_SIZE``, ``codec.DEFAULT_MAX_DEPTH``, ``resources.opening.DEFAULT_MAX_SIZE``
..., are these same numbers).  Where the engine has the same limit, its source is named; the
others are ours and say why.  docs/security.md ("Limits and their defaults") is the table of them.

Imports nothing: every floor may read it.
"""

from __future__ import annotations

__all__ = ["MAX_FILE_SIZE", "MAX_BUFFER_SIZE", "MAX_RATIO", "RATIO_FLOOR", "RSCC_MAX_RATIO", "OBJECTS_PER_BYTE",
           "OBJECT_FLOOR", "MAX_DEPTH", "MAX_RESOURCE_DEPTH",
           "MAX_PACKET_SIZE"]

#: The largest file of any kind (a save, a resource, project settings, a compressed or encrypted
#: layer), and the largest plaintext a layer may hold: ``gf.open``, ``gf.open_resource``,
#: ``gf.scan_*``, ``FileAccess.open``, ``read_gcpf``, ``read_gdec`` and every command.  One value for
#: every kind, the larger of the two that were (saves 1 GiB, resources 256 MiB), so no file that
#: opened before is refused now; it is half of what the engines can read at all (their buffer
#: lengths are int32: :data:`MAX_BUFFER_SIZE`), and far beyond any game's save.  It bounds what a
#: file on disk may make us read; what a *small* file may make us allocate is bounded by
#: :data:`MAX_RATIO`, and a file that is not a regular file is never read (``layers.files.read_bounded``).
MAX_FILE_SIZE = 1 << 30

#: The largest buffer a Variant is read from (``loads``, ``decode``, ``Decoder``): the engines take
#: a buffer's length as an ``int`` (``decode_variant(..., int p_len, ...)`` in core/io/marshalls.cpp,
#: both engines), so no value they write or read is larger.
MAX_BUFFER_SIZE = 0x7FFFFFFF

#: A compressed layer may hold at most this many bytes per byte of the file (with a floor of
#: :data:`RATIO_FLOOR`): what a file may make us allocate follows the bytes it has, whatever its
#: headers declare (a 70-byte Brotli file once used 689 MiB).  Real saves compress 2-20x.  Ours:
#: the engine's ``FileAccessCompressed`` allocates what the header declares.  ``max_ratio=0`` lifts it.
MAX_RATIO = 100

#: The least a compressed layer may always decompress to, however small the file: a tiny file of a
#: few repeated values legitimately compresses far beyond :data:`MAX_RATIO`.
RATIO_FLOOR = 1 << 20

#: How many bytes a compressed ``.res`` (RSCC) may inflate to per byte of the file (and
#: :data:`RATIO_FLOOR` however small it is), unless ``max_ratio=`` says
#: otherwise.  Measured (tests/hostile/test_resource_budgets.py reads them): every compressed
#: resource the engines made in fixtures/resources (Godot 3.2.3 and 4.6, both savers write Zstd in
#: 4 KiB blocks) inflates to 1.5-2.5 times its size; sub-resources, names, numbers and text
#: compress like that.  32 is 13 times the most of them.  Zstd makes up to 178 times of a 4 KiB
#: block of one repeated byte, so a resource that is mostly one byte over and over (the pixels of
#: a blank image) can pass 32: ``max_ratio=`` lifts the bound for it.  At the 100 of the other
#: compressed layers, a 447 KB file inflated to 44 MB of one-word values (issue 40).
RSCC_MAX_RATIO = 32
#: The objects (values, strings, names, references, resources) reading a binary resource may make
#: per byte of the file as it is given (compressed, for an RSCC file), and at least
#: :data:`OBJECT_FLOOR`: the memory and the time of opening or explaining a file follow its size,
#: whatever it inflates to.  An uncompressed file cannot reach it (it spends 4 bytes or more on each
#: value, string or name, 8 on an external resource's four objects, 20 on a resource's eight).
#: The engine-made compressed ones make at most 0.22 per byte (tests/hostile/test_resource_budgets.py
#: measures them), so 2 leaves a margin of 9 for saves that compress better than those.
OBJECTS_PER_BYTE = 2
#: The objects any file may make, however small: as many as the
#: :data:`RATIO_FLOOR` bytes (1 MiB) any compressed file may inflate to
#: can hold, one a word (fuzz/crashes_resources has a 40 KB file of 40,000 external resources and
#: as many references to them, 200,010 objects, which reads).
OBJECT_FLOOR = RATIO_FLOOR // 4

#: The deepest nesting of Arrays, Dictionaries and Objects a Variant is read or written with: the
#: engines' ``Variant::MAX_RECURSION_DEPTH`` (1024, core/variant/variant.h in Godot 4, core/variant.h
#: in 3.x), which ``decode_variant`` checks (``p_depth > Variant::MAX_RECURSION_DEPTH``: "Variant is
#: too deep. Bailing.", core/io/marshalls.cpp; since 4.0 and 3.3.5/3.4.3/3.5).  So 1025 nested levels
#: decode and the 1026th is refused, as in Godot 4.
MAX_DEPTH = 1024

#: The deepest nesting of containers in a resource save (``.res``/``.tres``), read and written.
#: The engine's ``ResourceLoaderBinary::parse_variant`` (core/io/resource_format_binary.cpp) takes
#: no depth and recurses as deep as the file goes; ours walks with an explicit stack and stops at
#: the same number as the Variant decoder, so a resource holds what a Variant may.
MAX_RESOURCE_DEPTH = MAX_DEPTH

#: The largest frame or packet the stream readers take by default: the default of the engine's
#: ``PacketPeer.encode_buffer_max_size`` (8 MiB, its class reference's default), so anything a
#: default-configured engine can send fits, while a hostile 4 GiB length is refused before a byte
#: of it is read.
MAX_PACKET_SIZE = 8 * 1024 * 1024
