"""One file's conversion, the one code path for one input: the command line (``godot-formats
convert``, in every mode), the pool of :func:`godot_formats.batch.convert` and any other engine (a
Dask executor, Spark's ``mapInPandas``, Ray's ``map_batches``) all convert through
:func:`convert_data` and word every error with :func:`failure`.  :func:`convert_bytes` never raises:
it returns the output (or None) and the file's report row.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from typing import Any

import attrs

from ..core.errors import (
    AmbiguousDialectError,
    ConfigFileError,
    ConversionError,
    DecodeError,
    EncodeError,
    GodotFormatsError,
    NotBinaryError,
    PasswordRequiredError,
    Remedy,
    WrongPasswordError,
)
from ..migration import Loss
from ..saves.containers import container
from ..saves.describe import describe_layers
from .report import new_row, sha

__all__ = ["PASSWORD_ENV", "REMEDY_FLAGS", "BatchOptions", "Converted", "config_told", "convert_bytes",
           "convert_data", "convert_verified", "failure", "internal_error", "kind_name", "located", "one_line",
           "options_from_args", "told", "told_reason"]

#: The environment variable the command line reads a password from.
PASSWORD_ENV = "GODOT_FORMATS_PASSWORD"

#: Each remedy an error can name (:class:`~godot_formats.core.errors.Remedy`), as the command line says it: its
#: flag, in the slot where the library's message names its keyword (``a full Object is only decoded with
#: --allow-objects (as inert data, never code)``).  The one table: the commands and the batch engine word every
#: failure from it, and nothing reads the text of a message to find out what to suggest.
REMEDY_FLAGS: dict[Remedy, str] = {
    Remedy.ALLOW_OBJECTS: "--allow-objects (as inert data, never code)",
    Remedy.FULL_OBJECTS: "--allow-objects",
    Remedy.PASSWORD: f"--password or --key, or set {PASSWORD_ENV}",
    Remedy.SALVAGE: "--salvage",
    Remedy.POLICY_LOSSY: "--policy lossy",
    Remedy.GIVE_DIALECT: "--dialect",
    Remedy.GIVE_FRAMING: "--framing",
    Remedy.ALLOW_SCRIPTS: "--allow-scripts",
}


def one_line(e: BaseException) -> str:
    """An exception as one line of text (its first line; the type when it has no message)."""
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def internal_error(e: BaseException) -> str:
    """The one-line report of an exception we did not expect (a bug, not bad input)."""
    return f"internal error ({type(e).__name__}: {one_line(e)}); please report it"


def config_told(e: ConfigFileError, *, salvage: bool = True) -> str:
    """A damaged ConfigFile, said as text: its line and column, as the engine's ``ConfigFile parse error at
    FILE:LINE`` says it, and (``salvage``) what keeps the keys before it."""
    said = f"damaged ConfigFile text at line {e.line}, column {e.column}: {e.reason}"
    return said + (f" (ConfigFile.load keeps the keys before that line: {REMEDY_FLAGS[Remedy.SALVAGE]})"
                   if salvage else "")


def _text_words(e: BaseException) -> str | None:
    """The words for text that was read as text (a damaged ConfigFile), or None: the error's own words stand
    (text that is no save is named by the reading, :func:`godot_formats.saves.reading.read`)."""
    if isinstance(e, ConfigFileError):
        return config_told(e)
    return None


def told(e: BaseException) -> str:
    """An error's message with its remedy said as the command line's flag (:data:`REMEDY_FLAGS`)."""
    words = _text_words(e)
    if words is not None:
        return words
    if isinstance(e, (DecodeError, EncodeError)) and e.remedy is not None:
        return e.message_with(REMEDY_FLAGS[e.remedy])
    return str(e)


def told_reason(e: DecodeError) -> str:
    """A decoding error's reason with its remedy said as the command line's flag."""
    return e.reason if e.remedy is None else e.reason_with(REMEDY_FLAGS[e.remedy])


def located(e: DecodeError) -> GodotFormatsError:
    """A decoding error whose offset says which bytes it counts (the file's, or the decrypted data's), its
    remedy said as the command line's flag; the error keeps naming that remedy (``remedy``)."""
    words = _text_words(e)
    if words is not None:  # text: its line and column, not a byte
        return GodotFormatsError(words, remedy=e.remedy)
    reason = told_reason(e)
    if isinstance(e, (PasswordRequiredError, WrongPasswordError, NotBinaryError)):
        return GodotFormatsError(reason, remedy=e.remedy)
    return GodotFormatsError(f"at byte {e.offset}{e.where}: {reason}", remedy=e.remedy)


@attrs.frozen
class BatchOptions:
    """How to convert each file; the command line's options, for a library caller."""

    to: str
    source: str = "auto"
    policy: str = "strict"
    password: str | None = None
    key: bytes | None = None
    verify: bool = True
    framing: str = "auto"
    allow_objects: bool = False
    format: str | None = None
    allow_scripts: bool = False
    salvage: bool = False


@attrs.frozen
class Converted:
    """One file converted: the output bytes, the one-line description, the losses, and what the
    input was (its dialect and layers, for the report)."""

    output: bytes
    how: str
    losses: list[Loss]
    source_dialect: str | None
    layers: str | None
    reopen: Callable[[bytes], bool] = attrs.field(eq=False, repr=False)



#: Told what a file's conversion is doing now ("reading", "converting"), for a progress line.
Step = Callable[[str], None]


def no_step(what: str) -> None:
    """A step callback that shows nothing."""


@attrs.frozen
class _Way:
    """How a run writes and words one kind of document (:mod:`godot_formats.documents`): ``form``, the
    kind's own ``to_bytes`` options from the run's (a resource's ``format=``: None when the kind has
    no form to choose); ``how``, the line's description; ``layers``, the row's; ``same``, whether
    the written bytes read back (``back``) give what was meant; ``located``: whether a failure to
    read names the byte as a save's reading does; ``convert``, the kind's own ``convert`` options from
    the run's (a ConfigFile's ``allow_scripts``); ``after``, what the conversion did that no loss says
    (a layer migrated, comments not written), from the document and its conversion."""

    form: Callable[[Any, Any], dict[str, Any]] | None
    how: Callable[[Any, Any, dict[str, Any]], str]
    layers: Callable[[Any], str]
    same: Callable[[Any, Any, bytes, dict[str, Any]], bool]
    located: bool = False
    convert: Callable[[Any], dict[str, Any]] | None = None
    after: Callable[[Any, Any], str] | None = None


def _save_how(sf: Any, opts: Any, form: dict[str, Any]) -> str:
    how = f"{sf.dialect.name} -> {opts.to}"
    holder = container(sf.container)
    layered = sf.encryption is not None or sf.compression is not None
    if layered or not holder.plain:
        how += f" ({describe_layers(sf)})"
    elif holder.framed:
        how += f", {len(sf.values)} store_var record(s)" + (", big-endian lengths" if sf.byteorder == "big" else "")
    if sf.also:
        how += f" (the bytes also read as {', '.join(sf.also)}: same result)"
    return how


def _resource_form(rf: Any, opts: Any) -> dict[str, Any]:
    return {"format": getattr(opts, "format", None) or rf.format,
            "allow_scripts": getattr(opts, "allow_scripts", False)}


def config_layers(doc: Any) -> str:
    """A ConfigFile's layers in words: ``ConfigFile text``, inside its encryption when it has one."""
    from ..saves.reading import LAYER_BY_NAME

    if doc.encryption is None:
        return "ConfigFile text"
    return f"{LAYER_BY_NAME['encryption'].describe(doc.encryption)}, ConfigFile text"


def _config_how(doc: Any, opts: Any, form: dict[str, Any]) -> str:
    return f"configfile, {doc.dialect.name} -> {opts.to}" + ("" if doc.encryption is None else
                                                             f" ({config_layers(doc)})")


def _config_after(doc: Any, converted: Any) -> str:
    """What converting a ConfigFile did besides its values: the encryption's layout, the notes of the
    conversion (comment lines ``ConfigFile.save`` does not write, what the converter noted)."""
    said = []
    old, new = doc.encryption, converted.encryption
    if old is not None and new is not None and old.version != new.version:
        said.append(f"the encryption moves to Godot {new.version}'s layout, with the same key")
    said += [note for note in converted.notes if note != converted.why]
    return "; ".join(said)


def _held(doc: Any) -> dict[str, dict[str, Any]]:
    return {name: dict(keys) for name, keys in doc.sections.items()}


def _config_same(back: Any, meant: Any, written: bytes, form: dict[str, Any]) -> bool:
    """Whether the written ConfigFile, read back, holds every value the conversion meant (an encrypted
    one gets a fresh IV, so its bytes say nothing)."""
    from ..core.keys import same_value

    return same_value(_held(back), _held(meant))


#: Each kind's way; a kind a program registers gets :data:`_ANY_KIND`'s.
_WAYS: dict[str, _Way] = {
    "save": _Way(None, _save_how, describe_layers,
                 lambda back, meant, written, form: bool(back.values == meant.values) or back.to_bytes() == written,
                 located=True),
    "resource": _Way(_resource_form,
                     lambda rf, opts, form: f"resource, Godot {rf.engine} {rf.format} -> {opts.to} {form['format']}",
                     lambda rf: f"resource ({rf.format})",
                     lambda back, meant, written, form: bool(back.to_bytes(**form) == written)),
    "configfile": _Way(None, _config_how, config_layers, _config_same,
                       convert=lambda opts: {"allow_scripts": getattr(opts, "allow_scripts", False)},
                       after=_config_after),
}
_ANY_KIND = _Way(None, lambda doc, opts, form: f"{doc.kind}, {doc.dialect.name} -> {opts.to}", lambda doc: doc.kind,
                 lambda back, meant, written, form: bool(back.to_bytes() == written))


def kind_name(data: bytes, password: str | None = None, key: bytes | None = None) -> str:
    """The kind of document ``data`` is, as :func:`godot_formats.documents.open` reads it: the row
    :func:`~godot_formats.documents.kind_of` picks, and ``"configfile"`` for ConfigFile text inside an
    encryption layer (``save_encrypted_pass``), which the save row hands over to the ConfigFile reader
    (told by the same row's sniff on the plaintext), and for ConfigFile text damaged by a byte that is not
    UTF-8 (:func:`_damaged_config`), which the save row would read as store_var frames of 1.6 GB.  A file
    that cannot be decrypted (no password, a wrong one) stays a save: its reading says what is missing.
    Decrypting costs a few ms per MB, once more."""
    from ..documents import kind_of
    from ..layers.encryption import is_gdec, key_from_password, read_gdec

    kind = kind_of(data).name
    if kind != "save":
        return kind
    plain = data
    if is_gdec(data):
        try:
            plain, _ = read_gdec(data, key=key if key is not None else
                                 key_from_password(password) if password is not None else None)
        except GodotFormatsError:
            return kind
        if kind_of(plain).name == "configfile":
            return "configfile"
    return "configfile" if _damaged_config(plain) else kind


def _damaged_config(data: bytes) -> bool:
    """Whether ``data`` is ConfigFile text up to a byte that is not UTF-8 in its first 4 KiB (where the
    ConfigFile row's sniff looks, and refuses it): the text before that byte is sniffed as the row sniffs
    a file.  It holds no NUL byte, which binary Variants always hold and ConfigFile text never does."""
    from ..documents import kind_of

    try:
        bytes(data[:4096]).decode("utf-8")
    except UnicodeDecodeError as e:
        head = bytes(data[:e.start])
        return b"\0" not in head and kind_of(head).name == "configfile"
    return False


_OBJECT_TEXT = re.compile(r"\bObject\(\s*([A-Za-z_]\w*)")


def _strings_with_objects(root: Any) -> list[tuple[str, list[str]]]:
    """Each string of a JSON document that holds var2str text with ``Object(...)`` values: its JSONPath
    and the classes named, in document order (an explicit stack: any depth ``json`` reads)."""
    found: list[tuple[str, list[str]]] = []
    work: list[tuple[Any, str]] = [(root, "$")]
    while work:
        node, path = work.pop()
        if isinstance(node, str):
            classes = sorted(set(_OBJECT_TEXT.findall(node)))
            if classes:
                found.append((path, classes))
        elif isinstance(node, dict):
            work.extend((v, f"{path}.{k}" if k.isidentifier() else f"{path}[{json.dumps(k)}]")
                        for k, v in reversed(node.items()))
        elif isinstance(node, list):
            work.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(node))))
    return found


def _json_left_alone(data: bytes) -> str:
    """The note of a JSON save a conversion leaves alone, naming the var2str ``Object(...)`` strings in it."""
    note = "JSON text (a game's to_json save), left alone: Godot reads JSON as it is"
    found = _strings_with_objects(json.loads(data))
    if found:
        shown = ", ".join(f"{path} ({', '.join(classes)})" for path, classes in found[:3])
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        note += ("; its strings that hold var2str text with Object(...) values (key bindings and the like) are left "
                 f"alone as written, not converted: {shown}{more}")
    return note


#: Text that is no save and that the engines read as it is, by the save reader's name for it
#: (``NotBinaryError.kind``): a conversion leaves it alone (``unchanged``), with the note made from its bytes.
LEFT_ALONE: dict[str, Callable[[bytes], str]] = {
    "json": _json_left_alone,
    "text": lambda data: "plain text (no save, resource, ConfigFile, JSON nor Godot text), left alone",
}


def _left_alone(data: bytes, kind: str) -> Converted:
    return Converted(data, LEFT_ALONE[kind](data), [], None, kind, lambda written: written == data)


def _opened(data: bytes, kind: str, way: _Way, opts: Any, options: dict[str, Any]) -> Any:
    """The document in ``data`` (read by its kind's row), or the error worded for the command line; text
    that is no save and that every engine reads as it is (:data:`LEFT_ALONE`) is a :class:`Converted` already."""
    from ..documents import open as open_document

    try:
        return open_document(data, dialect=None if opts.source == "auto" else opts.source, kind=kind, **options)
    except AmbiguousDialectError as e:
        what = "give --framing" if e.remedy is Remedy.GIVE_FRAMING else "give --from"  # convert's name for --dialect
        raise GodotFormatsError(f"ambiguous: {' and '.join(e.candidates)} read this file completely, as "
                                f"different values; {what}") from None
    except NotBinaryError as e:
        if e.kind in LEFT_ALONE:
            return _left_alone(data, e.kind)
        if not way.located:
            raise
        raise located(e) from None
    except DecodeError as e:
        if not way.located:
            raise
        raise located(e) from None


def convert_data(data: bytes, opts: Any, step: Step = no_step) -> Converted:
    """Convert one file's bytes, of whichever kind it is: opened through the one door
    (:func:`godot_formats.documents.open`), converted by the document itself (a save's layers, a
    resource's form, a ConfigFile's encryption migrate with the values), written in the form asked.
    ``opts`` is an :class:`BatchOptions` (or the command line's arguments, which have the same names).
    Raises the library's errors; :func:`failure` words them, the same for every caller."""
    from ..documents import open as open_document

    step("reading")
    kind = kind_name(data, opts.password, opts.key)
    way = _WAYS.get(kind, _ANY_KIND)
    if getattr(opts, "format", None) and way.form is None:
        raise GodotFormatsError("--format applies to resource saves (.tres, .res) only")
    options = {"password": opts.password, "key": opts.key, "allow_objects": opts.allow_objects, "framing": opts.framing,
               "salvage": getattr(opts, "salvage", False)}
    doc = _opened(data, kind, way, opts, options)
    if isinstance(doc, Converted):
        return doc
    step("converting")
    converted, losses = doc.convert(opts.to, policy=opts.policy, **(way.convert(opts) if way.convert else {}))
    form = way.form(doc, opts) if way.form is not None else {}
    out = converted.to_bytes(**form)
    how = way.how(doc, opts, form)
    after = way.after(doc, converted) if way.after is not None else ""

    def reopen(written: bytes) -> bool:
        back = open_document(written, dialect=opts.to, kind=kind, **options)
        return way.same(back, converted, written, form)

    return Converted(out, f"{how}; {after}" if after else how, losses, doc.dialect.name, way.layers(doc), reopen)


def failure(e: Exception) -> tuple[str, str, tuple[Loss, ...]]:
    """``(error kind, error, losses)`` of a failed conversion: the one wording of every caller."""
    if isinstance(e, ConversionError):
        applies = f"; {REMEDY_FLAGS[e.remedy]} applies them" if e.remedy is not None else ""
        return "would lose", f"would lose data ({len(e.losses)} change(s){applies})", tuple(e.losses)
    if isinstance(e, ConfigFileError):  # a conversion keeps every key or none: no salvage to suggest
        return "bad input", config_told(e, salvage=False), ()
    if isinstance(e, GodotFormatsError):
        return "bad input", told(e), ()
    if isinstance(e, OSError):
        return "io", e.strerror or one_line(e), ()
    return "internal", internal_error(e), ()



def convert_verified(data: bytes, opts: Any, step: Step = no_step) -> Converted:
    """:func:`convert_data`, and with ``opts.verify`` the output read back: it must give what was meant
    (the converted values) before it counts.  The one per-file path of every run."""
    done = convert_data(data, opts, step)
    if opts.verify:
        step("verifying")
        if not done.reopen(done.output):
            raise RuntimeError("verification failed: the output reads back as other values")
    return done


def convert_bytes(data: bytes, *, name: str, to: str, source: str = "auto", policy: str = "strict",
                  password: str | None = None, key: bytes | None = None, verify: bool = True,
                  options: BatchOptions | None = None, run_id: str = "") -> tuple[bytes | None, dict[str, Any]]:
    """Convert one file's bytes; never raises (a bug of ours is a failed row of kind "internal").

    Returns ``(output, row)``: the output is None when the file failed.  With ``verify`` the
    output is read back and must give what was meant (the converted values) before it counts.
    ``options`` (an :class:`BatchOptions`) overrides the keyword arguments, for callers that hold one.
    """
    opts = options or BatchOptions(to=to, source=source, policy=policy, password=password, key=key, verify=verify)
    row = new_row(name, data, run_id)
    try:
        done = convert_verified(data, opts)
    except Exception as e:  # every failure, a bug included, is this file's row
        kind, text, losses = failure(e)
        row.update(status="failed", error_kind=kind, error=text, losses=[str(x) for x in losses])
        return None, row
    row.update(status="unchanged" if done.output == data else "converted", source_dialect=done.source_dialect,
               layers=done.layers, output_size=len(done.output), output_sha256=sha(done.output),
               losses=[str(x) for x in done.losses], detail=done.how)
    return done.output, row


def equivalent(existing: bytes, out: bytes, opts: BatchOptions) -> bool:
    """Whether an existing output already holds what ``out`` holds: the same bytes, or (an encrypted
    save gets a fresh IV each time) the same values read back.  This is how a rerun of a file whose
    journal row was lost to a kill counts it as converted, without replacing it."""
    if existing == out:
        return True
    from ..saves.savefile import open as open_file

    try:
        mine, theirs = (open_file(b, password=opts.password, key=opts.key, dialect=opts.to,
                                  allow_objects=opts.allow_objects, framing=opts.framing) for b in (out, existing))
        layers = [(x.container, x.encryption is None, x.compression is None) for x in (mine, theirs)]
        return bool(mine.values == theirs.values) and layers[0] == layers[1]
    except Exception:  # not a save of ours at all: not the same
        return False


def options_from_args(args: argparse.Namespace, password: str | None, key: bytes | None) -> BatchOptions:
    """The :class:`BatchOptions` of the command line's arguments."""
    return BatchOptions(to=args.to, source=args.source, policy=args.policy, password=password, key=key,
                        verify=getattr(args, "verify", True), framing=args.framing, allow_objects=args.allow_objects,
                        format=getattr(args, "format", None), allow_scripts=getattr(args, "allow_scripts", False),
                        salvage=getattr(args, "salvage", False))
