"""What the commands share, in one module: passwords, opening through ``gf.open``, the layers
line, the header of the JSON and text views and parsing them back, writing back, the input
options of the reading commands, the ``--dialect`` option, exit statuses and one-line messages.

Not a command (``tool.COMMANDS`` does not list it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import attrs

from ..batch.onefile import PASSWORD_ENV as PASSWORD_ENV  # the commands' shared names, from where they live
from ..batch.onefile import REMEDY_FLAGS as REMEDY_FLAGS
from ..batch.onefile import config_layers as config_layers
from ..batch.onefile import config_told as config_told
from ..batch.onefile import internal_error as internal_error
from ..batch.onefile import located as located
from ..batch.onefile import one_line as one_line
from ..batch.onefile import told as told
from ..batch.onefile import told_reason
from ..batch.signals import ctrl_c_deferred as ctrl_c_deferred
from ..core.dialects import Dialect, dialect_names, get_dialect
from ..core.errors import (
    AmbiguousDialectError,
    ConfigFileError,
    DamagedFileError,
    DecodeError,
    FileChangedError,
    FramingError,
    GodotFormatsError,
    Remedy,
)
from ..layers.base64form import sniff_base64
from ..saves.describe import describe_layers as describe_layers
from ..saves.reading import FRAMINGS, Reading, read_peeled

#: The first line of the text view: ``; godot-formats save: {...}`` (a comment to Godot's parser too).
# -- the command line's own errors (the library's are godot_formats.core.errors) ---------------


class DetailedError(GodotFormatsError):
    """An error of one line followed by indented lines of detail (the readings of an ambiguous file)."""

    def __init__(self, message: str, details: list[str]) -> None:
        super().__init__(message)
        self.details = details


class EngineError(GodotFormatsError):
    """An engine is not installed, failed or could not be asked; ``details``: its output."""

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        super().__init__(message)
        self.details = details or []


class UsageError(GodotFormatsError):
    """Options of a command that do not go together: nothing was done (exit status 2)."""


TEXT_HEADER = "; godot-formats save: "
HEADER_KEY = "godot_formats_save"


# -- options ----------------------------------------------------------------------------------


def add_password_options(parser: argparse.ArgumentParser) -> None:
    """--password and --key (and the environment variable, read by :func:`credentials`)."""
    group = parser.add_argument_group(
        "encrypted files", f"the password can also come from the environment variable {PASSWORD_ENV}, "
                           "which keeps it out of the shell history")
    group.add_argument("--password", metavar="P",
                       help="the password of open_encrypted_with_pass / save_encrypted_pass")
    group.add_argument("--key", metavar="HEX",
                       help="the raw key of open_encrypted: 64 hex digits (or 32 ASCII characters)")


def add_salvage_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--salvage", action="store_true",
                        help="keep every intact record of a damaged store_var file (what ended it is said "
                             "on standard error)")


def credentials(args: argparse.Namespace) -> tuple[str | None, bytes | None]:
    """(password, key) from --password, --key or $GODOT_FORMATS_PASSWORD."""
    from ..layers.encryption import parse_key

    password = getattr(args, "password", None)
    key_text = getattr(args, "key", None)
    if password is not None and key_text is not None:
        raise GodotFormatsError("give --password or --key, not both")
    key = parse_key(key_text) if key_text is not None else None
    if password is None and key is None:
        password = os.environ.get(PASSWORD_ENV)
    return password, key


def dialect_arg(allow_auto: bool = True) -> Any:
    """An argparse ``type`` that accepts every dialect name and alias (``godot3.5``, ``godot4.6``...)
    and gives the dialect's own name."""
    def parse(text: str) -> str:
        if (allow_auto and text == "auto") or text == "":  # "": not given (load: the header's dialect)
            return text
        try:
            return get_dialect(text).name
        except (KeyError, ValueError, GodotFormatsError) as e:
            raise argparse.ArgumentTypeError(str(e).strip("'\"")) from None
    parse.__name__ = "dialect"
    return parse


# -- opening -----------------------------------------------------------------------------------


def open_save(data: bytes, args: argparse.Namespace, *, dialect: str | None = None, salvage: bool = False,
              allow_objects: bool | None = None, framing: str = "auto") -> Any:
    """``gf.open`` with the command's options; errors come out in the same words in every command."""
    from ..saves.savefile import open as open_file

    password, key = credentials(args)
    objects = getattr(args, "allow_objects", False) if allow_objects is None else allow_objects
    try:
        return open_file(data, password=password, key=key, dialect=dialect, salvage=salvage, allow_objects=objects,
                         framing=framing)
    except AmbiguousDialectError:
        raise
    except DecodeError as e:  # what would help (--allow-objects, --salvage ...) is the error's remedy
        raise located(e) from None


def kind_of_input(data: bytes, args: argparse.Namespace) -> str:
    """The kind of document ``data`` is (``"save"``, ``"resource"``, ``"configfile"`` ...), as ``gf.open``
    reads it with the command's password (:func:`godot_formats.batch.onefile.kind_name`: an encrypted
    ConfigFile is a ConfigFile): what picks the row of each command's table of views."""
    from ..batch.onefile import kind_name

    return kind_name(data, *credentials(args))


def open_config(data: bytes, args: argparse.Namespace, *, salvage: bool = False, notes: bool = True) -> Any:
    """The ConfigFile in ``data`` (plain or encrypted), read with the command's password, ``--dialect``
    and ``salvage``; a damaged one is named as text, with its line and column.  Its notes (what a
    salvage kept, and where the text is damaged) go to standard error, unless the command says them itself."""
    from ..configfile import read_config

    password, key = credentials(args)
    dialect = getattr(args, "dialect", "auto")
    try:
        doc = read_config(data, password=password, key=key, salvage=salvage,
                          dialect=None if dialect in ("auto", "", None) else dialect)
    except ConfigFileError as e:
        raise GodotFormatsError(config_told(e)) from None
    except DecodeError as e:  # the encryption layer: a password missing or wrong
        raise located(e) from None
    for note in doc.notes if notes else ():
        if note != doc.why:  # how the version was told is detect's to say; a salvage, a comment dropped ... here
            print(f"godot-formats {args.command}: note: {note}", file=sys.stderr)
    return doc


def ambiguity(e: AmbiguousDialectError) -> DetailedError:
    """The lines that say an ambiguous file is ambiguous, list its readings and say how to choose: the
    values each reading read are the error's own (``readings``), so nothing is read a second time."""
    shown_by: dict[str, list[str]] = {}
    for i, (name, framed) in enumerate(zip(e.candidates, e.framings or [False] * len(e.candidates))):
        framing = f"--framing {'store_var' if framed else 'none'}"
        label = framing if e.remedy is Remedy.GIVE_FRAMING else \
            f"--dialect {name}" + (f" {framing}" if e.candidates.count(name) > 1 else "")
        shown = _shown_reading(e.readings[i], name, framed) if i < len(e.readings) else ""
        shown_by.setdefault(shown, []).append(label)
    lines = []
    for shown, labels in shown_by.items():
        also = f" (also {', '.join(labels[1:])})" if len(labels) > 1 else ""
        lines.append(f"  {labels[0]}{also}" + (f": {shown}" if shown else ""))
    hint = REMEDY_FLAGS[e.remedy] if e.remedy is not None else "--dialect"
    return DetailedError(f"{e.reason_with(hint)}:", lines)


def _shown_reading(values: list[Any], dialect: str, framed: bool) -> str:
    """The values of one reading of an ambiguous file, on one line of at most 100 characters."""
    from ..views.text import to_text

    texts: list[str] = []
    for v in values:
        if sum(map(len, texts)) > 100:  # enough for the line: the rest of a large file is not written out
            texts.append("…")
            break
        try:
            texts.append(to_text(v, dialect).replace("\n", " "))
        except GodotFormatsError:
            texts.append(repr(v))
    shown = "; ".join(texts)
    if framed:
        shown += f"  ({len(values)} store_var record(s))"
    return shown if len(shown) <= 100 else shown[:99] + "…"


def header_of(sf: Any) -> dict[str, Any]:
    """The header of the views: :meth:`SaveFile.header` and the number of records."""
    header: dict[str, Any] = dict(sf.header)
    header["records"] = len(sf.values)
    return header


def note_damage(sf: Any, command: str) -> None:
    """Say on standard error what a salvaged file lost: every bad record, and where its framing broke."""
    for lost in sf.lost:
        print(f"godot-formats {command}: note: record {lost.record} is damaged and read as null, as get_var "
              f"reads it: at byte {lost.error.offset}{lost.error.where}: {told_reason(lost.error)}", file=sys.stderr)
    e = sf.damage
    if e is not None and not sf.lost or e is not None and all(e is not lost.error for lost in sf.lost):
        print(f"godot-formats {command}: note: kept the {len(sf.values)} intact record(s); the rest is lost: "
              f"at byte {e.offset}{e.where}: {told_reason(e)}", file=sys.stderr)
    for name, n in sf.layers.get("trailing", {}).items():
        print(f"godot-formats {command}: note: {n} byte(s) after the {name} layer's end: the engine never reads "
              "them; they are kept as they are when the file is written", file=sys.stderr)


# -- peeling the layers off (unwrap, wrap --like) -----------------------------------------------


@attrs.define
class Unwrapped:
    """The innermost bytes and each layer taken off, outside in, in words."""

    data: bytes
    encryption: Any = None
    compression: Any = None
    base64: bool = False
    layers: list[str] = attrs.field(factory=list)


def peel(data: bytes, args: argparse.Namespace, *, max_size: int | None = None) -> Unwrapped:
    """Decrypt, decompress and un-base64 ``data`` as far as it goes (each layer once: reading.peel)."""
    from ..saves.reading import DEFAULT_MAX_FILE_SIZE
    from ..saves.reading import peel as peel_layers

    password, key = credentials(args)
    try:
        peeled = peel_layers(data, password=password, key=key, max_size=max_size or DEFAULT_MAX_FILE_SIZE)
    except DecodeError as e:
        raise located(e) from None
    out = Unwrapped(peeled.data, peeled.infos.get("encryption"), peeled.infos.get("compression"))
    if out.encryption is not None:
        out.layers.append(f"decrypted (Godot {out.encryption.version})")
    if out.compression is not None:
        out.layers.append(f"decompressed ({out.compression.mode_name})")
    for name, rest in peeled.trailing.items():
        out.layers.append(f"{len(rest)} byte(s) after the {name} layer's end left out")
    decoded = sniff_base64(out.data)
    if decoded is not None:
        out.data, out.base64 = decoded, True
        out.layers.append("base64-decoded")
    return out


# -- the views: header, JSON documents, text ------------------------------------------------------


def split_text_header(text: str) -> tuple[dict[str, Any] | None, str]:
    """The header of a text view (its first line), and the text."""
    stripped = text.lstrip("\ufeff")
    first, _, rest = stripped.partition("\n")
    if not first.startswith(TEXT_HEADER):
        return None, text
    try:
        header = json.loads(first[len(TEXT_HEADER):])
    except json.JSONDecodeError as e:
        raise GodotFormatsError(f"line 1: the godot-formats save header is not valid JSON ({e.msg}, column "
                                f"{e.colno + len(TEXT_HEADER)})") from None
    if not isinstance(header, dict) or header.get(HEADER_KEY) != 1:
        raise GodotFormatsError("line 1: not a godot-formats save header (version 1)")
    # The header line is kept as a comment: character offsets in errors stay those of the text.
    return header, ";" + " " * (len(first) - 1) + "\n" + rest


def only_comments(text: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith(";") for line in text.splitlines())


#: Blanks and ``;`` comments: what may follow the last value of a text view.
_BLANKS = re.compile(r"(?:\s|;[^\n]*)*")


def text_values(text: str, dialect: str | Dialect, expected: int | None = None) -> list[Any]:
    """The values of a text view: Godot text values one after another (``;`` comments between), each read
    where the one before ended (an error names its line and column in the whole text)."""
    from ..views.text.parser import read_value

    d = get_dialect(dialect)
    if only_comments(text) and expected != 1:
        return []
    values: list[Any] = []
    pos = 0
    while True:
        value, pos = read_value(text, pos, d)
        values.append(value)
        blanks = _BLANKS.match(text, pos)  # it matches "" at least
        if blanks is None or blanks.end() == len(text):
            return values


def json_documents(text: str) -> tuple[dict[str, Any] | None, list[Any]]:
    """The header (a first document ``{"godot_formats_save": 1, ...}``) and the values of a JSON view."""
    from ..views.jsonform import JSONFormatError, from_json
    from ..views.jsonform.parser import _parse_documents

    docs = list(_parse_documents(text))
    header = None
    if docs and isinstance(docs[0][1], dict) and HEADER_KEY in docs[0][1]:
        header = docs.pop(0)[1]
        if header.get(HEADER_KEY) != 1:
            raise GodotFormatsError("not a godot-formats save header (version 1)")
    elif not docs:
        raise JSONFormatError("no JSON value in the text")
    values = []
    for i, (_, obj) in enumerate(docs):
        try:
            values.append(from_json(obj))
        except GodotFormatsError as e:
            if len(docs) > 1:
                raise GodotFormatsError(f"document {i + 1 + (header is not None)}: {e}") from None
            raise
    return header, values


def looks_like_json(text: str) -> bool:
    """Text whose first character (after ``;`` comment lines) opens a JSON document."""
    for line in text.lstrip("\ufeff").splitlines():
        s = line.strip()
        if not s or s.startswith(";"):
            continue
        return s[0] in "{[\""
    return False


def refuse_existing(out: str, overwrite: bool) -> None:
    """``-o OUT`` never replaces an existing file without ``--overwrite``."""
    from ..layers.files import write_target

    if out == "-":
        return
    write_target(Path(out))  # what is not a regular file (a FIFO, /dev/null, a folder) is never replaced
    if not overwrite and (Path(out).exists() or Path(out).is_symlink()):
        raise GodotFormatsError(f"{out} exists; add --overwrite to replace it")


def write_output(data: bytes, out: str | None, overwrite: bool, *, hex_out: bool = False) -> None:
    """Write bytes to ``-o OUT`` (atomically, never over a file unasked) or to standard output."""
    from ..layers.files import write_atomic

    if hex_out:
        print(data.hex())
        return
    if out in (None, "-"):
        if sys.stdout.isatty():
            raise GodotFormatsError("refusing to write binary data to a terminal: give -o FILE (or --hex)")
        write_stdout(data)
        return
    refuse_existing(out, overwrite)
    write_atomic(Path(out), data)


def backup(path: Path, data: bytes) -> Path:
    """Keep ``data`` (the file before a change) as ``FILE.bak``, or ``FILE.bak.1``, ``.2`` ... when
    that exists: an existing backup is never replaced, and a backup is whole or absent (written
    under a temporary name, then linked into place: a kill never leaves half of one)."""
    from ..layers.files import create_atomic

    candidates = [path.with_name(path.name + ".bak")] + [path.with_name(f"{path.name}.bak.{i}")
                                                          for i in range(1, 1000)]
    mode = path.stat().st_mode & 0o7777
    for candidate in candidates:
        if candidate.exists() or candidate.is_symlink():
            continue
        try:
            create_atomic(candidate, data, mode)
        except FileExistsError:
            continue
        except OSError as e:
            raise OSError(e.errno, f"cannot write the backup: {e.strerror}", str(candidate)) from None
        return candidate
    raise GodotFormatsError(f"{path}.bak and {path}.bak.1 to .999 all exist; remove some backups first")


def write_back(path: Path, original: bytes, data: bytes) -> Path:
    """Replace ``path`` (which held ``original``) by ``data``: under a lock, only if the file is still
    what was read (else nothing is written), the version replaced kept as a backup, then atomically."""
    from ..layers.files import locked, write_atomic
    from ..saves.reading import read_bounded

    with locked(path):
        current, _ = read_bounded(path)
        if current != original:
            raise FileChangedError(f"{path} changed on disk since it was read; nothing written")
        kept = backup(path, current)
        try:
            write_atomic(path, data)
        except OSError as e:
            raise OSError(e.errno, f"cannot write {path}: {e.strerror}", str(path)) from None
    return kept


def read_for_change(args: argparse.Namespace) -> tuple[Path, bytes]:
    """The file a command will write back, read once (a FIFO or a device is refused before it is
    opened): ``set`` and ``edit`` tell a resource save from a save file by these same bytes."""
    from ..layers.files import read_bounded

    if args.file == "-":
        raise GodotFormatsError("needs a file to write back, not standard input")
    path = Path(args.file)
    data, _ = read_bounded(path)
    return path, data


def open_for_change(args: argparse.Namespace, data: bytes) -> Any:
    """The save file in ``data``, for a command that writes it back."""
    try:
        sf = open_save(data, args, dialect=None if args.dialect == "auto" else args.dialect)
    except AmbiguousDialectError as e:
        raise ambiguity(e) from None
    note_damage(sf, args.command)
    return sf


def save_changed(path: Path, original: bytes, sf: Any, command: str) -> int:
    """Write ``sf`` back over ``path`` (a backup first), or say that nothing changed."""
    data = sf.to_bytes()
    if data == original:
        print(f"godot-formats {command}: no change; {path} not written", file=sys.stderr)
        return 0
    kept = write_back(path, original, data)
    print(f"godot-formats {command}: {path} written ({describe_layers(sf)}); the old file is {kept}",
          file=sys.stderr)
    return 0


#: The first line of a ConfigFile's text view (a ``;`` comment to the engine's reader too), and the key of
#: the JSON view's document: what ``load`` needs to write the file back (its dialect, its encryption).
CONFIG_HEADER = "; godot-formats configfile: "
CONFIG_KEY = "godot_formats_configfile"


def config_header(doc: Any, text: str) -> dict[str, Any]:
    """What the views of a ConfigFile record for ``load``: the dialect and, for an encrypted file, the
    layout and the MD5 of ``text`` (the text shown): unchanged, it is written back with the file's own
    IV, byte for byte; changed, with a fresh one."""
    import hashlib

    out: dict[str, Any] = {CONFIG_KEY: 1, "dialect": doc.dialect.name}
    if doc.encryption is not None:
        out["encryption"] = {f.name: getattr(doc.encryption, f.name).hex() if isinstance(
            getattr(doc.encryption, f.name), bytes) else getattr(doc.encryption, f.name)
            for f in attrs.fields(type(doc.encryption))}
        out["plaintext_md5"] = hashlib.md5(text.encode("utf-8", "surrogateescape")).hexdigest()
    return out


def config_file_bytes(text: str, header: dict[str, Any], args: argparse.Namespace, shown: str | None = None) -> bytes:
    """The file a ConfigFile view describes: ``text``, checked as the engine reads it (a line and column
    where it stops, in ``shown``, the view as the user has it, when given), encrypted as ``header`` says
    with the command's password or key."""
    import hashlib

    from ..configfile import read_config
    from ..layers.encryption import GdecInfo, key_from_password, write_gdec

    try:
        read_config((text if shown is None else shown).encode("utf-8", "surrogateescape"),
                    dialect=header.get("dialect") or None)
    except ConfigFileError as e:
        raise GodotFormatsError(config_told(e, salvage=False)) from None
    plain = text.encode("utf-8", "surrogateescape")
    layout = header.get("encryption")
    if layout is None:
        return plain
    if not isinstance(layout, dict):
        raise GodotFormatsError("the header's encryption is an object (as dump writes it)")
    fields = {f.name: f for f in attrs.fields(GdecInfo)}
    try:
        given: dict[str, Any] = {k: bytes.fromhex(v) if k == "iv" and isinstance(v, str) else v
                                 for k, v in layout.items() if k in fields}
        info = GdecInfo(**given)
    except (TypeError, ValueError) as e:
        raise GodotFormatsError(f"the header's encryption is not one dump writes ({e})") from None
    if hashlib.md5(plain).hexdigest() != header.get("plaintext_md5"):
        info = attrs.evolve(info, iv=None)  # a new text: a fresh IV, never one IV for two plaintexts
    password, key = credentials(args)
    if password is None and key is None:
        raise GodotFormatsError(f"the file is encrypted: give {REMEDY_FLAGS[Remedy.PASSWORD]}")
    return write_gdec(plain, info, key=key if key is not None else key_from_password(password or ""))


def write_config_back(path: Path, original: bytes, doc: Any, command: str, data: bytes | None = None) -> int:
    """Write a changed ConfigFile over ``path`` (a backup first): ``data``, or the document's own bytes,
    which rewrite only the entries that changed (encrypted again with its key); a change the engine would
    read back otherwise is refused, naming it, and nothing is written.  Or say that nothing changed."""
    from ..core.errors import ConversionError

    if data is None:
        try:
            data = doc.to_bytes()
        except ConversionError as e:
            lost = "; ".join(str(loss) for loss in e.losses[:3]) + (" ..." if len(e.losses) > 3 else "")
            raise GodotFormatsError(f"the engine would read the file back otherwise ({lost}); {path} not written") \
                from None
    if data == original:
        print(f"godot-formats {command}: no change; {path} not written", file=sys.stderr)
        return 0
    kept = write_back(path, original, data)
    print(f"godot-formats {command}: {path} written ({config_layers(doc)}, {doc.dialect.name}); the old file is "
          f"{kept}", file=sys.stderr)
    return 0


# -- the command line's own: exit statuses, one-line messages, input, the --dialect option ---------


EXIT_BAD_INPUT = 1
EXIT_USAGE = 2
#: The status after the reader of standard output went away (``godot-formats dump x | head -1``):
#: 128 + SIGPIPE (13), what a shell reports for ``cat`` in the same pipe, which the signal kills.
#: Not 0: the output was cut short, and a script under ``set -o pipefail`` should see that as it
#: does for ``cat``.  Not 1, which Python's own example exits with (the signal module's "Note on
#: SIGPIPE"): here 1 means bad input, and a cut pipe is not the input's fault.
EXIT_BROKEN_PIPE = 128 + 13


def write_stdout(data: bytes) -> None:
    """Write bytes to standard output, every one of them, or raise.

    A large ``sys.stdout.buffer.write`` into a pipe whose reader leaves half-way returns the count
    the kernel took (64 KiB, say) instead of raising, and the rest is dropped without a word: the
    command would report success.  Writing what is left until it is all taken makes the next write
    raise ``BrokenPipeError``, which :func:`closed_pipe` turns into the exit status.
    """
    stream = sys.stdout.buffer
    view = memoryview(data)
    while view:
        view = view[stream.write(view):]
    stream.flush()


def closed_pipe() -> int:
    """Standard output's reader went away: stop without a word, as ``cat`` does, and say so in the
    exit status (:data:`EXIT_BROKEN_PIPE`).

    What is still buffered for standard output is written by the interpreter at exit, which would
    fail again and print ``Exception ignored ... BrokenPipeError``; so, as the Python
    documentation advises, standard output is pointed at the null device first.  (Restoring the
    default SIGPIPE action instead would make the process die silently in the middle of anything,
    a write to a conformance adapter's or an engine's pipe included, whose errors are handled
    where they happen.)
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # standard output is not a file (a test's StringIO): nothing to quiet
        pass
    return EXIT_BROKEN_PIPE


def printable(text: str) -> str:
    """``text`` with every unprintable character escaped, so that a report line stays one line.

    File names may hold newlines or control characters, and bytes that are not
    UTF-8 (which Python keeps as lone surrogates, unprintable on a UTF-8
    terminal): ``\\n``, ``\\x1b``, ``\\xff`` instead.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def _escape(c: str) -> str:
    if "\udc80" <= c <= "\udcff":  # an undecodable byte of a file name (surrogateescape)
        return f"\\x{ord(c) - 0xDC00:02x}"
    return c.encode("unicode_escape").decode("ascii")


def read_input(path: str) -> bytes:
    """The bytes of a file, or of standard input for ``-``: the one bounded read of every entry point
    (a FIFO or a device is refused before it is read, never waited on; nothing over the size limit)."""
    from ..layers.files import read_bounded

    return read_bounded(sys.stdin.buffer if path == "-" else path)[0]


def add_dialect_option(parser: argparse.ArgumentParser, *, allow_auto: bool = True, default: str | None = None,
                       help_default: str | None = None) -> None:
    """``--dialect NAME``: every dialect name and alias of the README (``godot3.5``, ``godot4.6`` ...),
    checked with :func:`godot_formats.get_dialect` and given as the dialect's own name."""
    choices = [*dialect_names(), *(["auto"] if allow_auto else [])]
    parser.add_argument(
        "--dialect", "-d", type=dialect_arg(allow_auto),
        default=default if default is not None else ("auto" if allow_auto else "godot4"),
        metavar="NAME",
        help=f"format version: {', '.join(choices)}, or an alias such as godot3.5 or godot4.6 "
             f"(default: {help_default or '%(default)s'})",
    )


def os_error(e: OSError) -> str:
    """An OSError as one line: ``reason: file``."""
    return f"{e.strerror or one_line(e)}: {e.filename or ''}".rstrip(": ")


# -- the input side of the reading commands (dump, explain): one set of options, one reading ------
# Both must read a file the same way, or explain would annotate bytes that dump shows as another value.


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """FILE, --dialect (default auto), --framing, --allow-objects and the password options."""
    parser.add_argument("file", metavar="FILE", help="the file to read ('-' for standard input)")
    add_dialect_option(parser)
    parser.add_argument("--framing", choices=FRAMINGS, default="auto",
                        help="store_var: u32 length-prefixed records (store_var, put_var); none: raw "
                             "var_to_bytes data; auto: decide from the bytes (default: %(default)s)")
    parser.add_argument("--allow-objects", action="store_true",
                        help="decode full Objects (as inert data: class name and properties, never code)")
    add_password_options(parser)


def resolve_input(data: bytes, args: argparse.Namespace, framing: str) -> Reading:
    """The one reading of ``data`` with the command's options (its layers taken off first)."""
    from ..saves.reading import peel

    password, key = credentials(args)
    dialect: Any = None if args.dialect == "auto" else args.dialect
    try:
        peeled = peel(data, password=password, key=key)
        return read_peeled(peeled, dialect=dialect, framing=framing, allow_objects=args.allow_objects)
    except (AmbiguousDialectError, DamagedFileError, FramingError):
        raise  # the command decides what to say (explain lists a damaged file in a given dialect)
    except DecodeError as e:
        raise located(e) from None


# -- edits: what the text of an edit left alone keeps its exact value -----------------------------


def keep_untouched(new: Any, old: Any, dialect: Any, encoder: Any) -> Any:
    """``new`` (read from edited text) with every part the text did not change taken from ``old``:
    Dictionary keys back in their order, floats at their full precision. A work list, not
    recursion: an edited save may nest as deep as the decoder's ``max_depth``."""
    holder: list[Any] = [None]
    work: list[tuple[Any, Any, Any, Any]] = [(new, old, holder, 0)]
    while work:
        n, o, parent, slot = work.pop()
        if type(n) is dict and type(o) is dict:
            out: Any = {}
            for k in o:
                if k in n:
                    out[k] = None  # its place in the old order, filled when the pair is visited
                    work.append((n[k], o[k], out, k))
            out.update((k, v) for k, v in n.items() if k not in out)
        elif type(n) is list and type(o) is list and len(n) == len(o):
            out = [None] * len(n)
            work.extend((a, b, out, i) for i, (a, b) in enumerate(zip(n, o)))
        else:
            out = _untouched_leaf(n, o, dialect, encoder)
        parent[slot] = out
    return holder[0]


def _untouched_leaf(new: Any, old: Any, dialect: Any, encoder: Any) -> Any:
    from ..views.text import from_text, to_text

    try:
        if encoder.encode(from_text(to_text(old, dialect), dialect)) == encoder.encode(new):
            return old  # what the text said of the old value, unchanged
    except GodotFormatsError:
        pass
    return new


