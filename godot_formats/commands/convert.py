"""``godot-formats convert IN... --to DIALECT``: convert save files (or folders of them).

Each file is read (raw ``var_to_bytes`` data, or ``store_var``/``put_var`` records with
their u32 length prefix, which is kept and recomputed), read once
(:mod:`godot_formats.reading`, as ``gf.open`` reads it), converted with its layers
(``SaveFile.convert``) and written atomically: a temporary
file in the destination folder, then ``os.replace``, so a crash never leaves half a
save file (a symlink is written through: its target is replaced, the link kept).  An
input is never overwritten without ``--overwrite``.  Every destination is decided and
checked before anything is written: none outside ``--out-dir``, no two inputs with one
output, no output replacing another input.  The common shape (folders to ``--out-dir``:
:func:`streamable`) streams the listing instead, each file checked as it is listed
(:class:`Destinations`), so the first file is converted before the tree is walked whole.

Every file gets one line (``converted``, ``unchanged``, ``failed`` with the reason, or
``skipped`` for what a folder holds besides regular files: symlinks, FIFOs, devices,
our own leftover temporary files); under ``--policy lossy`` the changes are listed under
it.  One bad file never stops the batch, not even a bug (an ``internal error`` line).
The exit status is 1 when any file failed.

Several files (a folder) are converted on the batch engine's process pool, every core by
default (:mod:`godot_formats.batch.pool`; ``--jobs 1`` keeps one process), with the same plan (or
listing) and the same lines in the same order: the folder walk, the per-file conversion and the
pool are the batch engine's (:mod:`godot_formats.batch`), in every mode.  The batch options
(``--report``, ``--resume``, ``--shard``, ``--storage-option``, ``--dask``) and URLs go to
:mod:`.convert_batch` instead, which runs :func:`godot_formats.batch.convert`.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import os
import stat
import sys
import threading
import time
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import attrs

from ..batch.onefile import Step, convert_verified, failure, no_step, options_from_args
from ..batch.pool import in_order
from ..batch.walk import THE_OUT_DIR as THE_OUT_DIR_SKIP
from ..batch.walk import entries, inside, outside
from ..core.dialects import dialect_names
from ..core.errors import GodotFormatsError
from ..core.limits import MAX_FILE_SIZE
from ..layers.files import read_bounded, write_atomic, write_target
from ..migration import POLICIES, Loss
from ..resources.model import form_for_path
from ..saves.reading import FRAMINGS
from .common import (
    EXIT_BAD_INPUT,
    EXIT_USAGE,
    UsageError,
    add_password_options,
    credentials,
    ctrl_c_deferred,
    dialect_arg,
    internal_error,
    one_line,
    printable,
    write_stdout,
)
from .convert_batch import count_in_background


def add_parser(subparsers: Any) -> None:
    names = dialect_names()
    parser = subparsers.add_parser(
        "convert", help="convert files (or folders of save files) to another engine version",
        description="Convert Godot binary Variant files between engine versions (e.g. Godot 3 saves to "
                    "Godot 4). Folders are searched recursively. Nothing is changed silently: under the "
                    "default strict policy a file that would lose data fails with the list of losses; "
                    "under --policy lossy the documented downgrades are applied and listed.",
    )
    parser.add_argument("inputs", nargs="+", metavar="IN", help="files or folders ('-' for standard input)")
    parser.add_argument("--to", required=True, type=dialect_arg(False), metavar="DIALECT",
                        help=f"target dialect: {', '.join(names)}, or an alias (godot3.5, godot4.6 ...)")
    parser.add_argument("--from", dest="source", default="auto", type=dialect_arg(True), metavar="DIALECT",
                        help="source dialect, or auto to detect it per file (default: %(default)s)")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("-o", "--output", metavar="OUT", help="output file (one input file only; '-' for stdout)")
    out.add_argument("--out-dir", metavar="DIR", help="write outputs here, keeping the folder layout of each input")
    parser.add_argument("--format", choices=("text", "binary"),
                        help="for resource saves (.tres, .res): write this form (default: the input's)")
    parser.add_argument("--allow-scripts", action="store_true",
                        help="write a resource save that embeds a script (copied as it is, never run; "
                             "loading the output in Godot runs it)")
    parser.add_argument("--policy", choices=POLICIES, default="strict",
                        help="strict: refuse any loss; lossy: apply the documented downgrades (default: %(default)s)")
    parser.add_argument("--framing", choices=FRAMINGS, default="auto",
                        help="store_var: the file holds u32 length-prefixed records (File.store_var, "
                             "StreamPeer.put_var); none: raw var_to_bytes data; auto: whichever reads "
                             "completely (default: %(default)s)")
    parser.add_argument("--overwrite", action="store_true",
                        help="allow replacing existing files, inputs included (without -o/--out-dir: convert in place)")
    parser.add_argument("--allow-objects", action="store_true",
                        help="read and write full Objects (as inert data, never instantiated)")
    parser.add_argument("--salvage", action="store_true",
                        help="convert a damaged file as the engine reads it: a save's intact records, a "
                             "ConfigFile's keys before its damaged line (what is lost is a loss: --policy lossy)")
    parser.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                        help="progress counter on stderr (auto: when stderr is a terminal)")
    parser.add_argument("--verify", dest="verify", action=argparse.BooleanOptionalAction, default=True,
                        help="read each output back and compare it with the converted values (default: on)")
    parser.add_argument("--workers", "--jobs", dest="workers", type=int, metavar="N",
                        help="convert on N processes (default and 0: every core; 1: in this process); "
                             "a worker that dies fails its file only")
    many = parser.add_argument_group("batch (one folder or URL with --out-dir; godot_formats.batch)")
    many.add_argument("--resume", action="store_true",
                      help="skip the files the journal has as done whose input is unchanged (counted skipped)")
    many.add_argument("--report", metavar="FILE",
                      help="the report: FILE.jsonl (also the journal) or FILE.parquet (needs pyarrow)")
    many.add_argument("--shard", metavar="I/N", help="convert only the files whose path hashes to shard I of N")
    many.add_argument("--storage-option", dest="storage_option", action="append", default=[], metavar="K=V",
                      help="an fsspec option for s3:// or gs:// URLs (repeatable; V is read as JSON when it "
                           "parses, else as text): --storage-option anon=false --storage-option "
                           'client_kwargs=\'{"endpoint_url": "http://127.0.0.1:5000"}\'')
    many.add_argument("--dask", metavar="ADDRESS|local",
                      help="run on a Dask cluster: its scheduler's address, or local for a LocalCluster on "
                           "every core (needs the [dask] extra)")
    add_password_options(parser)
    parser.set_defaults(func=run)


@attrs.frozen
class Outcome:
    status: str  # "converted", "unchanged", "failed" or "skipped"
    detail: str
    losses: tuple[Loss, ...] = ()


@attrs.frozen
class Job:
    """One input file and where its conversion goes (None: standard output)."""

    source: Path | None  # None: standard input
    label: str
    dest: Path | None
    refused: Outcome | None = None  # decided while planning: skipped, or failed before anything is written


#: The line of the output folder met inside an input folder (it is not walked).
THE_OUT_DIR = Outcome("skipped", THE_OUT_DIR_SKIP.why)


def _walk(folder: Path, exclude: Path | None) -> Iterator[tuple[Path, Outcome | None]]:
    """Every entry below ``folder`` (:func:`godot_formats.batch.walk.entries`, the one walk of every
    run), each entry that is not converted with its line: ``(file, None)`` for a file to convert."""
    for path, skip in entries(folder, exclude):
        if skip is None:
            yield path, None
        elif skip is THE_OUT_DIR_SKIP:
            yield path, THE_OUT_DIR
        else:
            yield path, Outcome(skip.status, skip.why)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def plan(args: argparse.Namespace) -> list[Job]:
    """The files to convert and their destinations, all decided before anything is written."""
    out_dir = Path(args.out_dir) if args.out_dir else None
    if args.inputs.count("-") > 1:
        raise UsageError("standard input ('-') can only be read once")
    jobs: list[Job] = []
    for item in args.inputs:
        if item == "-":
            dest = None if args.output in (None, "-") else Path(args.output)
            jobs.append(Job(None, "<stdin>", dest))
            continue
        path = Path(item)
        if path.is_dir():
            if args.output:
                raise UsageError(f"-o needs a single input file, not the folder {item}; use --out-dir")
            # The folder's own name, with '.' and '..' resolved: 'convert .. --out-dir out' writes to
            # out/<name of the parent folder>/..., never to out/../...
            base = out_dir / Path(os.path.abspath(path)).name if out_dir else None
            for file, refused in _walk(path, _real(out_dir) if out_dir else None):
                if refused is not None:
                    jobs.append(Job(file, str(file), None, refused))
                else:
                    jobs.append(Job(file, str(file), base / file.relative_to(path) if base else file))
        else:
            if args.output:
                dest = None if args.output == "-" else Path(args.output)
            else:
                dest = (out_dir / path.name) if out_dir else path
            jobs.append(Job(path, str(path), dest))
    if args.output and len(jobs) != 1:
        raise UsageError("-o needs exactly one input file; use --out-dir for several")
    if not args.output and not out_dir and not args.overwrite and any(j.source for j in jobs):
        raise UsageError("give -o OUT, --out-dir DIR, or --overwrite to convert the inputs in place")
    return _check_destinations(jobs, out_dir)


def _outside(job: Job, real: Path, out_dir: Path, out_real: Path) -> Outcome | None:
    """An output that resolves outside ``--out-dir`` (through a symlink inside it) is refused: the
    batch engine's one rule (:func:`godot_formats.batch.walk.outside`), asked while planning."""
    if job.source is None or job.dest is None or inside(real, out_real):
        return None
    refused = outside(job.dest, out_dir, "--out-dir")
    return None if refused is None else Outcome("failed", refused)


def _named_twice(first: str) -> Outcome:
    """The same input file reached twice (``first``, the label it had first), with one output:
    converted once."""
    return Outcome("skipped", f"the same file as {first}, named twice (converted once)")


def _replaces_input(job: Job, other: Job) -> Outcome:
    return Outcome("failed", f"{job.dest} is the input {other.label}, which would be replaced before it is "
                             "converted; nothing written")


def _check_destinations(jobs: list[Job], out_dir: Path | None) -> list[Job]:
    """Refuse, before anything is written, every output that would go astray.

    An output outside ``--out-dir`` (through a symlink inside it), two different
    inputs with one output (both refused: neither would survive), an output that
    would replace another input before it is read; the same file named twice is
    converted once.  Paths are compared resolved (symlinks followed, as the
    writes follow them).  A streamed run checks each file as it is listed instead
    (:class:`Destinations`), with the same rules where it can know them.
    """
    out_real = _real(out_dir) if out_dir else None
    live = [i for i, j in enumerate(jobs) if j.refused is None]
    refused: dict[int, Outcome] = {}
    dest_real = {i: _real(jobs[i].dest) for i in live if jobs[i].dest is not None}  # type: ignore[arg-type]
    source_real = {i: _real(jobs[i].source) for i in live if jobs[i].source is not None}  # type: ignore[arg-type]
    if out_dir is not None and out_real is not None:
        for i, real in dest_real.items():
            if (outcome := _outside(jobs[i], real, out_dir, out_real)) is not None:
                refused[i] = outcome
    by_dest: dict[Path, list[int]] = {}
    for i, real in dest_real.items():
        if i not in refused:
            by_dest.setdefault(real, []).append(i)
    for group in by_dest.values():
        first = group[0]
        for i in group[1:]:
            if jobs[i].source is not None and source_real.get(i) == source_real.get(first):
                refused[i] = _named_twice(jobs[first].label)
        clash = [i for i in group if i not in refused]
        if len(clash) > 1:
            for i in clash:
                others = ", ".join(jobs[k].label for k in clash if k != i)
                refused[i] = Outcome("failed", f"{jobs[i].dest} is also the output of {others}; "
                                               "neither is written (convert them to different places)")
    sources = {real: i for i, real in source_real.items() if i not in refused}
    for i, real in dest_real.items():
        other = sources.get(real)
        if i not in refused and other is not None and other != i:
            refused[i] = _replaces_input(jobs[i], jobs[other])
    return [attrs.evolve(j, refused=refused[i]) if i in refused else j for i, j in enumerate(jobs)]


def streamable(args: argparse.Namespace) -> bool:
    """Whether the run is the common shape that can convert each file as it is listed: folders
    only, ``--out-dir``, folder names that differ (their outputs go to ``OUT/<name>/...``), and no
    folder inside the output folder (there an output could land on an input that is listed
    later).  An output folder inside an input folder is fine: the listing skips it.  In that shape
    no output can replace an input, so the rules left to check need only the files listed so far;
    any other shape is planned whole first (:func:`plan`)."""
    if not args.out_dir or args.output or "-" in args.inputs:
        return False
    folders = [Path(item) for item in args.inputs]
    if not all(folder.is_dir() for folder in folders):
        return False
    if len({Path(os.path.abspath(folder)).name for folder in folders}) != len(folders):
        return False
    out_real = _real(Path(args.out_dir))
    return not any(inside(_real(folder), out_real) for folder in folders)


class Destinations:
    """The per-file checks of :func:`_check_destinations` for a streamed run, as each file is
    listed: an output outside ``--out-dir`` is refused, and so is an output that resolves to the
    output of a file listed before it (a symlinked folder inside ``--out-dir``).  The whole plan
    refuses both of two such files; a streamed run cannot, since the first is converted (and
    written) before the second is listed, so the second fails naming the first.

    What is kept per file is small, a million files being the case this is for: an output reached
    without a symlink (``OUT/<folder name>/<path in the folder>``, resolved the same) cannot meet
    another such output, so only a 16-byte digest of it is kept, and its input is known again
    from the folder's name when an output through a symlink meets it; the outputs through a
    symlink (rare) are kept whole, with their input."""

    def __init__(self, out_dir: Path, folders: list[str]) -> None:
        self.out_dir, self.out_real = out_dir, _real(out_dir)
        self.folders = {Path(os.path.abspath(folder)).name: Path(folder) for folder in folders}
        self.straight: set[bytes] = set()  # digests of the resolved outputs reached without a symlink
        self.linked: dict[str, tuple[str, str]] = {}  # resolved output through a symlink: (resolved input, label)

    def check(self, job: Job) -> Job:
        if job.refused is not None or job.dest is None or job.source is None:
            return job
        real = _real(job.dest)
        outcome = _outside(job, real, self.out_dir, self.out_real)
        if outcome is None:
            mine = (os.path.realpath(job.source), job.label)
            first = self._first(real, job.dest.relative_to(self.out_dir), mine)
            if first is not None:
                outcome = _named_twice(first[1]) if first[0] == mine[0] else Outcome(
                    "failed", f"{job.dest} is also the output of {first[1]}, listed first; nothing written "
                              "(convert them to different places)")
        return job if outcome is None else attrs.evolve(job, refused=outcome)

    def _first(self, real: Path, inside: Path, mine: tuple[str, str]) -> tuple[str, str] | None:
        """The (resolved input, label) of the file listed before with the output ``real``, or None
        (then ``real`` is recorded as this file's).  ``inside``: the output's path in --out-dir."""
        key = str(real)
        digest = hashlib.blake2b(os.fsencode(key), digest_size=16).digest()
        if key in self.linked:
            return self.linked[key]
        if real == self.out_real / inside:  # no symlink on the way
            self.straight.add(digest)
            return None
        if digest in self.straight:  # the output of OUT/<name>/<path>: the file <name's folder>/<path>
            name, *path = parts = real.relative_to(self.out_real).parts
            if name in self.folders:
                source = self.folders[name].joinpath(*path)
            else:  # the folder with no name, "/": its outputs are OUT/<path>
                source = self.folders[""].joinpath(*parts)
            return os.path.realpath(source), str(source)
        self.linked[key] = mine
        return None


def listing(args: argparse.Namespace) -> Iterator[Job]:
    """The jobs of a :func:`streamable` run, each checked as it is listed (:class:`Destinations`),
    in the order :func:`plan` gives them: the first file is converted before the tree is walked
    whole, and no list of every job is held.  An output folder that did not exist when the run
    began gets no line when the listing meets it (made by this run, after a planned run's walk)."""
    out_dir = Path(args.out_dir)
    checks = Destinations(out_dir, args.inputs)
    new = not os.path.lexists(out_dir)
    for item in args.inputs:
        path = Path(item)
        base = out_dir / Path(os.path.abspath(path)).name
        for file, refused in _walk(path, checks.out_real):
            if new and refused == THE_OUT_DIR:
                continue
            dest = None if refused is not None else base / file.relative_to(path)
            yield checks.check(Job(file, str(file), dest, refused))




def converted(data: bytes, args: argparse.Namespace, step: Step = no_step,
              form: str | None = None) -> tuple[bytes, str, list[Loss]]:
    """One file's bytes converted as the command line's arguments say, through the batch engine's
    one per-file path (:func:`godot_formats.batch.onefile.convert_verified`).  Returns (output,
    description, losses).  ``step`` is told each stage as it starts, so a large file shows what it
    is doing (:class:`Progress`).  ``form`` is the form ``-o``'s extension names for a resource save
    (``.res`` binary, ``.tres`` text), when ``--format`` does not say."""
    from ..documents import kind_of

    password, key = credentials(args)
    opts = options_from_args(args, password, key)
    if form is not None and opts.format is None and kind_of(data).name == "resource":
        opts = attrs.evolve(opts, format=form)
    done = convert_verified(data, opts, step)
    return done.output, done.how, done.losses


def convert_one(job: Job, args: argparse.Namespace, step: Step = no_step) -> Outcome:
    """Convert one file; every failure, a bug included, is this file's outcome, and the batch goes on."""
    if job.refused is not None:
        return job.refused
    try:
        return _convert_one(job, args, step)
    except BrokenPipeError:
        raise  # standard output closed by its reader (-o -): the whole command ends quietly (tool.main)
    except Exception as e:  # a bug, not bad input: this file fails with one line
        return Outcome("failed", internal_error(e))


def _convert_one(job: Job, args: argparse.Namespace, step: Step) -> Outcome:
    through = ""
    same_file = False
    if job.dest is not None:
        # Checked before the input is opened: a FIFO or a device named for in-place conversion is
        # refused by write_target, never read nor replaced.
        try:
            target = write_target(job.dest)
            mode = target.stat().st_mode if target.exists() else None
        except OSError as e:
            return Outcome("failed", f"cannot write {job.dest}: {e.strerror or one_line(e)}")
        if target != job.dest:
            through = f" (through the symlink, to {target})"
        same_file = mode is not None and job.source is not None and os.path.samefile(job.source, target)
        if mode is not None and not args.overwrite:
            what = "the input" if same_file else "an existing file"
            return Outcome("failed", f"{job.dest} would replace {what}; use --overwrite")
    step("reading")
    try:  # a FIFO or a device named as an input is refused before it is read, never waited on
        data = read_bounded(sys.stdin.buffer if job.source is None else job.source, MAX_FILE_SIZE)[0]
    except GodotFormatsError as e:
        return Outcome("failed", f"cannot read: {e}")
    except OSError as e:
        return Outcome("failed", f"cannot read: {e.strerror or one_line(e)}")
    try:
        named = form_for_path(job.dest) if args.output and job.dest is not None else None
        out, how, losses = converted(data, args, step, named)
    except GodotFormatsError as e:  # worded as batch.convert_bytes words it: one wording everywhere
        _, text, lost = failure(e)
        return Outcome("failed", text, lost)
    status = "unchanged" if out == data else "converted"
    if job.dest is None:
        write_stdout(out)
        return Outcome(status, f"{how} -> <stdout>", tuple(losses))
    if same_file and status == "unchanged":
        return Outcome(status, how, tuple(losses))
    step("writing")
    refused = outside(job.dest, Path(args.out_dir), "--out-dir") if args.out_dir else None
    if refused is not None:  # checked when planned; again now, as the batch engine checks each write
        return Outcome("failed", refused)
    try:
        write_atomic(job.dest, out, like=job.source)
    except OSError as e:
        return Outcome("failed", f"cannot write {job.dest}: {e.strerror or one_line(e)}")
    where = "" if same_file else f" -> {job.dest}"
    return Outcome(status, f"{how}{where}{through}", tuple(losses))


def pooled(args: argparse.Namespace) -> bool:
    """Whether this run uses a pool: no file on standard input or output, and not ``--jobs 1``."""
    return getattr(args, "workers", None) != 1 and not args.output and "-" not in args.inputs


def workers_of(args: argparse.Namespace) -> int:
    """``--jobs N`` (0 or not given: every core)."""
    return getattr(args, "workers", None) or os.cpu_count() or 1


class Progress:
    """A counter on stderr, redrawn in place (only on a terminal unless forced).

    Between files it counts them; inside a file that takes a while (a 50 MB save takes seconds) a
    ticker thread redraws the line every :attr:`tick` seconds with what the file is doing and for
    how long (``reading``, ``converting``, ``writing``, from :func:`converted`), so a single
    large file never sits on a silent line.
    """

    #: Seconds between redraws inside a file, and before the first (a quick file shows no ticker).
    tick = 0.5

    def __init__(self, total: int | None, mode: str, stream: IO[str] | None = None) -> None:
        self.total = total  # None: not known yet (a streamed run counts it meanwhile: see counting)
        self.stream = sys.stderr if stream is None else stream  # the stderr of now, not of the import
        self.enabled = mode == "always" or (mode == "auto" and self.stream.isatty())
        self.width = 0
        self.index, self.label, self.doing = 0, "", ""
        self.started = time.monotonic()
        self._lock = threading.Lock()  # the ticker and the main thread draw the same line

    def counting(self, folders: list[str], exclude: Path | None) -> None:
        """Count the listing of ``folders`` in the background (only when the line is shown): until
        the count is in, the line shows ``n/?`` and the rate; then the bar and the ETA."""
        if self.enabled:
            count_in_background(folders, exclude, self._counted)

    def _counted(self, total: int) -> None:
        self.total = total

    def show(self, index: int, label: str) -> None:
        if not self.enabled:
            return
        self.index, self.label, self.doing = index, label, ""
        self._draw()

    #: The longest line drawn: the file's name is cut (from its start) to fit, never the rest.
    width_limit = 100

    def _draw(self, state: str = "") -> None:
        total = self.total
        rate = self.index / max(time.monotonic() - self.started, 1e-9)  # files per second
        if total is None:  # still counted: the files so far and the rate
            head = f"{self.index}/? " + (f"{rate:.1f}/s " if self.index else "")
        else:
            done = min(self.index * 20 // max(total, 1), 20)
            head = f"[{'#' * done}{'.' * (20 - done)}] {self.index}/{total} "
            if 0 < self.index < total:  # and the seconds left at that rate
                head += f"{rate:.1f}/s ETA {(total - self.index) / rate:.0f} s "
        room = max(self.width_limit - len(head) - len(state), 10)
        label = self.label if len(self.label) <= room else "…" + self.label[-(room - 1):]
        text = head + label + state
        with self._lock:
            self.stream.write("\r" + text.ljust(self.width))
            self.stream.flush()
            self.width = len(text)

    def step(self, doing: str) -> None:
        """What the current file is doing now (the ticker shows it)."""
        self.doing = doing

    @contextlib.contextmanager
    def working(self, index: int, label: str) -> Iterator[Step]:
        """Show file ``index``; while it is converted, tick (from :attr:`tick` seconds on) with what
        it is doing and the seconds spent.  Yields the :data:`Step` to give :func:`convert_one`."""
        self.show(index, label)
        if not self.enabled:
            yield no_step
            return
        stop = threading.Event()
        ticker = threading.Thread(target=self._tick, args=(stop, time.monotonic()), daemon=True)
        ticker.start()
        try:
            yield self.step
        finally:
            stop.set()
            ticker.join()

    def _tick(self, stop: threading.Event, started: float) -> None:
        while not stop.wait(self.tick):
            self._draw(f": {self.doing or 'working'}, {time.monotonic() - started:.0f} s")

    def clear(self) -> None:
        if self.enabled and self.width:
            with self._lock:
                self.stream.write("\r" + " " * self.width + "\r")
                self.stream.flush()
                self.width = 0


#: The options that make a run a :mod:`godot_formats.batch` run (a journal, resume, shards, URLs).
BATCH_OPTIONS = ("resume", "report", "shard", "storage_option", "dask")


def batch_mode(args: argparse.Namespace) -> bool:
    """Whether ``args`` ask for :func:`godot_formats.batch.convert` (a batch option, or a URL)."""
    if any(getattr(args, name, None) not in (None, False, []) for name in BATCH_OPTIONS):
        return True
    return any("://" in item for item in args.inputs) or "://" in (args.out_dir or "")


#: Each job with its outcome, in the plan's order.
Outcomes = Generator[tuple[Job, Outcome], None, None]


def _in_this_process(jobs: Iterable[Job], args: argparse.Namespace, progress: Progress,
                     spill: list[tuple[Job, Outcome]]) -> Outcomes:
    for i, job in enumerate(jobs):
        with progress.working(i, job.label) as step:
            outcome = convert_one(job, args, step)
        yield job, outcome


def _tidy(job: Job) -> None:
    """Remove the temporary file a killed worker left for ``job``'s output (its writer is dead)."""
    from ..batch.output import remove_stale_temps

    if job.dest is not None:
        remove_stale_temps(job.dest)


def _died(job: Job) -> Outcome:
    """A file that killed its worker process twice (the second time alone)."""
    _tidy(job)
    return Outcome("failed", "internal error: the worker process died converting this file, twice "
                             "(the second time alone); please report it")


def _on_a_pool(jobs: Iterable[Job], args: argparse.Namespace, progress: Progress,
               spill: list[tuple[Job, Outcome]]) -> Outcomes:
    """The jobs on a process pool (:func:`godot_formats.batch.pool.in_order`), in the plan's (or the listing's) order;
    closed (Ctrl-C), the outcomes of the files that finished meanwhile go to ``spill``."""
    work = functools.partial(convert_one, args=args)
    # A worker killed by a neighbour's crash after it renamed its output into place, but before it
    # reported, left a whole output of this run, which its solo retry would otherwise refuse as an
    # existing file.  Such an output (and only such) is removed before the retry writes it again:
    # one that was not there when its job was handed to the pool (each job is looked at then,
    # before a worker can write its output, so a streamed listing is never held whole), made since
    # by this user.  Another run's output that was there first is never touched.
    handed_at: dict[Path, float] = {}

    def handed(jobs: Iterable[Job]) -> Iterator[Job]:
        for job in jobs:
            if job.dest is not None and not os.path.lexists(job.dest):
                handed_at[job.dest] = time.time()
            yield job

    def tidy(job: Job) -> None:
        if job.refused is not None:  # never written: its dest may be another file's output
            return
        _tidy(job)
        since = handed_at.get(job.dest) if job.dest is not None else None
        if since is None or job.dest is None:
            return
        with contextlib.suppress(OSError):
            made = os.lstat(job.dest)
            mine = made.st_uid == os.getuid() if hasattr(os, "getuid") else True  # no owners to compare
            if stat.S_ISREG(made.st_mode) and mine and made.st_mtime >= since - 1:
                os.unlink(job.dest)

    outcomes = in_order(handed(jobs), work, workers_of(args), _died, tidy, spill)
    try:
        for i, pair in enumerate(outcomes):
            handed_at.pop(pair[0].dest, None)  # type: ignore[arg-type]  # given: never tidied, so no more needed
            yield pair  # the pair itself: the consumer skips it in the spill by identity
            progress.show(i + 1, pair[0].label)
    finally:
        with ctrl_c_deferred():
            outcomes.close()


def _jobs(args: argparse.Namespace) -> tuple[Iterable[Job], Progress, bool]:
    """The jobs (a planned list, or a streamed :func:`listing`), the progress line, and whether
    they go on a pool: a streamed run does unless ``--jobs 1``, without counting its files."""
    if args.workers is not None and args.workers < 0:
        raise UsageError("--jobs wants 0 (every core) or more")
    if streamable(args):
        progress = Progress(None, args.progress)
        progress.counting(args.inputs, _real(Path(args.out_dir)))
        return listing(args), progress, pooled(args)
    jobs = plan(args)
    live = sum(j.refused is None for j in jobs)
    return jobs, Progress(len(jobs), args.progress), pooled(args) and live > 1


def run(args: argparse.Namespace) -> int:
    if batch_mode(args):
        from .convert_batch import run_batch

        return run_batch(args)
    try:
        jobs, progress, on_a_pool = _jobs(args)
    except UsageError as e:
        print(f"godot-formats convert: {e}", file=sys.stderr)
        return EXIT_USAGE
    # Standard output carries a converted file (-o -, or '-' in): the lines go to stderr.  Only a
    # planned run can do that; a streamed one is folders and --out-dir.
    to_stdout = isinstance(jobs, list) and any(j.dest is None and j.refused is None for j in jobs)
    report = sys.stderr if to_stdout else sys.stdout
    counts = {"converted": 0, "unchanged": 0, "failed": 0, "skipped": 0}
    spill: list[tuple[Job, Outcome]] = []
    results = (_on_a_pool if on_a_pool else _in_this_process)(jobs, args, progress, spill)

    last: list[tuple[Job, Outcome]] = []  # the pair shown last (a closed pool may spill it again)

    def show(job: Job, outcome: Outcome, pair: tuple[Job, Outcome] | None = None) -> None:
        with ctrl_c_deferred():  # counted and printed, or neither
            last[:] = [] if pair is None else [pair]
            progress.clear()
            counts[outcome.status] += 1
            print(printable(f"{outcome.status:<9}  {job.label}: {outcome.detail}"), file=report)
            for loss in outcome.losses:
                print(printable(f"    {'loss' if outcome.status != 'failed' else 'would lose'}: {loss}"), file=report)
            report.flush()

    interrupted = False
    try:
        for pair in results:
            show(*pair, pair=pair)
    except KeyboardInterrupt:  # the files being written finish (closing the pool waits); the summary follows
        interrupted = True
    finally:
        with ctrl_c_deferred():  # a second Ctrl-C waits for the files being written and their lines
            results.close()
            given = last[0] if last else None
            for pair in spill:
                if pair is not given:
                    show(*pair)
    total = sum(counts.values())
    progress.total = total
    progress.show(total, "done")
    progress.clear()
    summary = ", ".join(f"{n} {status}" for status, n in counts.items())
    print(f"{total} file(s): {summary}" + (" (interrupted)" if interrupted else ""), file=report)
    if interrupted:
        return 130
    return EXIT_BAD_INPUT if counts["failed"] else 0
