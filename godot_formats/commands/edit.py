"""``godot-formats edit FILE``: edit a save file as Godot text (or JSON) in ``$EDITOR``.

As ``crontab -e`` and ``kubectl edit`` do: the values go to a temporary file, the editor
opens it, and on save the text is checked; if it is not valid, the editor opens again with
the error at the top (a ``;`` comment line).  Quitting without a change writes nothing.  The
file is written back with the same layers (encryption, compression, framing, dialect),
atomically, after a backup of the old file (``FILE.bak``; ``FILE.bak.1``, ``.2`` ... when
that exists: a backup is never replaced).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.errors import GodotFormatsError
from ..saves.containers import container
from .common import (
    add_dialect_option,
    add_password_options,
    describe_layers,
    json_documents,
    keep_untouched,
    kind_of_input,
    open_for_change,
    read_for_change,
    save_changed,
    text_values,
    write_config_back,
)
from .resourcechange import (
    describe,
    open_resource_for_change,
    parse_resource_edit,
    render_resource,
    write_resource_back,
)

EPILOG = """\
examples:
  godot-formats edit save.sav
  godot-formats edit save.sav --json
  GODOT_FORMATS_PASSWORD=hunter2 EDITOR=nano godot-formats edit enc.sav

The editor is $EDITOR, else $VISUAL, else vi.  Lines starting with ';' are
comments.  Invalid text brings the editor back with the error on top; saving it
again unchanged gives up (nothing written).  The old file is kept as FILE.bak
(FILE.bak.1, FILE.bak.2 ... if that exists).  Godot text sorts Dictionary keys
and, in Godot 3, rounds floats: what you leave unchanged keeps its key order and
its bits; what you change is written as its text says (--json shows every bit).
"""

COMMENT = "; "


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "edit", help="edit a save file as Godot text (or JSON) in $EDITOR, written back with its layers",
        description="Open the values of a save file (encrypted, compressed, store_var records ...) in an editor "
                    "as Godot text or JSON; on save, check them and write the file back with the same layers, "
                    "keeping a backup.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="the save file")
    parser.add_argument("--json", action="store_true", help="edit the lossless JSON form instead of Godot text")
    add_dialect_option(parser)
    parser.add_argument("--allow-objects", action="store_true",
                        help="read and write full Objects (as inert data, never code)")
    parser.add_argument("--allow-scripts", action="store_true",
                        help="write back a resource save that embeds a script (copied as it is, never run)")
    add_password_options(parser)
    parser.set_defaults(func=run)


def _render(sf: Any, path: Path, as_json: bool, lossy: list[int]) -> str:
    from ..views.jsonform import dumps_json
    from ..views.text import to_text

    n = len(sf.values)
    lines = [f"{COMMENT}godot-formats edit: {path} ({describe_layers(sf)})",
             f"{COMMENT}Lines starting with ';' are comments. Save and quit to write the file back (the old "
             "one is kept as a backup);",
             f"{COMMENT}quit without a change to write nothing."]
    for i in lossy:
        lines.append(f"{COMMENT}note: record {i + 1}: Godot text does not show this value exactly (sorted keys, "
                     "rounded floats); what you leave unchanged keeps its order and bits, what you change is "
                     "written as the text says (--json shows every bit)")
    if container(sf.container).framed:
        lines.append(f"{COMMENT}{n} store_var record(s): add or remove records as values one after another")
    for i, v in enumerate(sf.values):
        if n > 1:
            lines.append(f"{COMMENT}record {i + 1} of {n}")
        lines.append(dumps_json(v, 2) if as_json else to_text(v, sf.dialect).rstrip("\n"))
    return "\n".join(lines) + "\n"


def _strip_comments_json(text: str) -> str:
    """JSON with the ';' comment lines blanked (a JSON string never spans lines, so none is touched)."""
    return "\n".join("" if line.lstrip().startswith(";") else line for line in text.split("\n"))


def parse_edit(text: str, sf: Any, as_json: bool, original_text_values: list[Any] | None) -> list[Any]:
    """The values of an edited buffer; records whose text did not change keep their exact value."""
    from ..core.codec import encoder_for

    if as_json:
        body = _strip_comments_json(text)
        if not body.strip():
            return []
        header, values = json_documents(body)
        if header is not None:
            raise GodotFormatsError("a godot-formats save header cannot be edited here (the layers are kept)")
    else:
        values = text_values(text, sf.dialect, len(sf.values) if len(sf.values) == 1 else None)
    if not container(sf.container).framed and len(values) != 1:
        raise GodotFormatsError(f"this file holds one value ({sf.container}); the text holds {len(values)}")
    if original_text_values is not None:
        encoder = encoder_for(sf.dialect, True)
        for i, v in enumerate(values):
            if i < len(sf.values):
                values[i] = keep_untouched(v, sf.values[i], sf.dialect, encoder)
    return values


def editor_command() -> list[str]:
    editor = os.environ.get("EDITOR") or os.environ.get("VISUAL") or "vi"
    argv = shlex.split(editor)
    if not argv or shutil.which(argv[0]) is None:
        raise GodotFormatsError(f"editor {editor!r} not found (set EDITOR)")
    return argv


def _lossy(sf: Any) -> list[int]:
    from ..core.codec import encoder_for
    from ..views.text import from_text, to_text

    encoder = encoder_for(sf.dialect, True)
    out = []
    for i, v in enumerate(sf.values):
        try:
            if encoder.encode(from_text(to_text(v, sf.dialect), sf.dialect)) != encoder.encode(v):
                out.append(i)
        except GodotFormatsError:
            out.append(i)
    return out


def run(args: argparse.Namespace) -> int:
    path, original = read_for_change(args)
    change = CHANGES.get(kind_of_input(original, args))  # the kind, as gf.open tells it
    if change is not None:
        return change(args, path, original)
    sf = open_for_change(args, original)
    argv = editor_command()
    lossy = [] if args.json else _lossy(sf)
    given = _render(sf, path, args.json, lossy)
    original_text_values = None if args.json else text_values(given, sf.dialect, len(sf.values))

    def parse(edited: str) -> Any:
        values = parse_edit(edited, sf, args.json, original_text_values)
        old = sf.values
        sf.values = values
        try:
            sf.to_bytes()
        except GodotFormatsError:
            sf.values = old
            raise
        return sf

    if _edit_loop(argv, path, given, ".json" if args.json else ".txt", parse) is None:
        return 0
    return save_changed(path, original, sf, "edit")


def _edit_loop(argv: list[str], path: Path, given: str, suffix: str, parse: Callable[[str], Any]) -> Any:
    """Open ``given`` in the editor until ``parse`` takes what was saved: its result, or None when
    nothing changed.  Invalid text comes back with the error on top."""
    buffer, last = given, ""
    with tempfile.TemporaryDirectory(prefix="godot-formats-edit-") as tmp:
        work = Path(tmp) / (path.stem + suffix)
        while True:
            work.write_text(buffer, encoding="utf-8")
            status = subprocess.run([*argv, str(work)]).returncode
            if status != 0:
                raise GodotFormatsError(f"the editor exited with status {status}; {path} not written")
            raw = work.read_bytes()
            try:
                edited = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise GodotFormatsError(f"the editor saved bytes that are not UTF-8 (at byte {e.start} of the text: "
                                        f"{raw[e.start:e.start + 4].hex()}); {path} not written") from None
            if edited == given or edited == buffer and buffer != given:
                if buffer != given:
                    raise GodotFormatsError(f"the text is still not valid ({last}); {path} not written")
                print(f"godot-formats edit: no change; {path} not written", file=sys.stderr)
                return None
            try:
                return parse(edited)
            except GodotFormatsError as e:
                last = " ".join(str(e).split())
                kept = [line for line in edited.split("\n") if not line.startswith(f"{COMMENT}error: ")
                        and not line.startswith(f"{COMMENT}(fix it")]
                buffer = "\n".join([f"{COMMENT}error: {' '.join(str(e).split())}",
                                    f"{COMMENT}(fix it and save, or save it unchanged to give up)", *kept])


def _edit_resource(args: argparse.Namespace, path: Path, original: bytes) -> int:
    """A resource save edited as ``.tres`` text, written back in its own form (see
    :mod:`.resourcechange`)."""
    rf: Any = open_resource_for_change(path, original)  # a resource: told by the door already
    if args.json:
        raise GodotFormatsError("a resource save is edited as .tres text (--json is for store_var saves)")
    argv = editor_command()
    form = "text" if rf.format == "text" else "binary: shown as .tres text, written back as binary"
    header = [f"{COMMENT}godot-formats edit: {path} ({describe(rf)}; {form})",
              f"{COMMENT}Lines starting with ';' are comments. Save and quit to write the file back (the old "
              "one is kept as a backup);",
              f"{COMMENT}quit without a change to write nothing."]
    body = render_resource(rf, original)
    given = "\n".join(header) + "\n" + body

    def parse(edited: str) -> Any:
        lines = edited.split("\n")
        while lines and lines[0].startswith(COMMENT) and (lines[0] in header or lines[0].startswith(
                (f"{COMMENT}error: ", f"{COMMENT}(fix it"))):
            lines.pop(0)
        new = parse_resource_edit("\n".join(lines), rf)
        new.to_bytes(allow_scripts=args.allow_scripts)  # refused here, and shown in the editor
        return new

    new = _edit_loop(argv, path, given, ".tres", parse)
    if new is None:
        return 0
    return write_resource_back(path, original, new, "edit", args.allow_scripts)


def _edit_config(args: argparse.Namespace, path: Path, original: bytes) -> int:
    """A ConfigFile edited as its own text (decrypted), written back as the user saved it: plain, or
    encrypted again with its key (a fresh IV).  Text that the engine's reader does not take comes back
    with its line and column on top, and nothing is written."""
    from .common import config_layers, open_config

    if args.json:
        raise GodotFormatsError("a ConfigFile is edited as its own text (--json is for store_var saves)")
    doc = open_config(original, args)  # never salvaged: what is after a damage would be lost on writing
    argv = editor_command()
    header = [f"{COMMENT}godot-formats edit: {path} ({config_layers(doc)}, {doc.dialect.name})",
              f"{COMMENT}Lines starting with ';' are comments, the file's own ones too (these first lines are not "
              "written). Save and quit to write the file back (the old one is kept as a backup);",
              f"{COMMENT}quit without a change to write nothing."]
    given = "\n".join(header) + "\n" + doc.text

    def parse(edited: str) -> Any:
        text = _own_text(edited, header)
        return _config_bytes(text, edited, doc, args)

    data = _edit_loop(argv, path, given, ".cfg", parse)
    if data is None:
        return 0
    return write_config_back(path, original, doc, "edit", data)


def _own_text(edited: str, header: list[str]) -> str:
    """The file's text in an edited buffer: without the lines ``edit`` put on top (its header, an error)."""
    lines = edited.split("\n")
    while lines and lines[0].startswith(COMMENT) and (lines[0] in header or lines[0].startswith(
            (f"{COMMENT}error: ", f"{COMMENT}(fix it"))):
        lines.pop(0)
    return "\n".join(lines)


def _config_bytes(text: str, edited: str, doc: Any, args: argparse.Namespace) -> bytes:
    """The file's bytes for the edited ``text``, once the engine's reader takes it (the document's own
    :meth:`~godot_formats.configfile.ConfigFile.with_text`: same form, encryption and key); a line and
    column that it does not take are those of the buffer the user saved (the lines on top are comments
    to it too)."""
    from ..configfile import read_config
    from ..core.errors import ConfigFileError

    try:
        read_config(edited.encode("utf-8"), dialect=doc.dialect)
        new = doc.with_text(text)
    except ConfigFileError as e:
        raise GodotFormatsError(f"ConfigFile.load stops at line {e.line}, column {e.column}: {e.reason}") from None
    return bytes(new.to_bytes())


#: How ``edit`` changes each kind of document that is not a save (a save's records are the rest of
#: :func:`run`): one row per kind of :data:`godot_formats.documents.KINDS`.
CHANGES: dict[str, Callable[[argparse.Namespace, Path, bytes], int]] = {
    "resource": _edit_resource,
    "configfile": _edit_config,
}
