"""Writing files so that no user file is ever half-written or replaced by surprise, and reading
them whole, bounded (:func:`read_bounded`, the one read of a file every entry point makes, over
:func:`read_at_most`).

Shared by the command line and :meth:`godot_formats.savefile.SaveFile.save`.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import platform
import re
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any, Union

from ..core.errors import NotRegularFileError, SizeLimitError
from ..core.limits import MAX_FILE_SIZE

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no advisory locks, the compare-and-swap still holds
    fcntl = None  # type: ignore[assignment]

__all__ = ["TEMP_MARK", "is_temp_name", "temp_prefix", "temp_writer", "write_target", "write_atomic", "save_to",
           "locked", "create_atomic", "read_at_most", "read_bounded", "file_kind", "Readable"]

#: Temporary files of :func:`write_atomic` are named ``.<name>.godot-formats-<random>.tmp``
#: so that one left behind by a killed process is recognisably ours.
TEMP_MARK = ".godot-formats-"
_TEMP_NAME = re.compile(r"\..*" + re.escape(TEMP_MARK) + r"[A-Za-z0-9_]+\.tmp", re.DOTALL)


def is_temp_name(name: str) -> bool:
    """Whether a file name is one of our temporary files (left behind by an interrupted write)."""
    return _TEMP_NAME.fullmatch(name) is not None


_WRITER = re.compile(re.escape(TEMP_MARK) + r"p([0-9]+)h([0-9a-f]{8})_[A-Za-z0-9_]*\.tmp\Z")


@functools.cache
def host_tag() -> str:
    """Eight hex digits of this machine's (or container's) name and boot: a process id means a
    process only here (another container on a shared volume has its own ids).  Read once per
    process (a name and a boot do not change under it): every write of a batch asks."""
    boot = ""
    with suppress(OSError), open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
        boot = f.read().strip()
    return hashlib.sha1(f"{platform.node()}/{boot}".encode()).hexdigest()[:8]


def temp_prefix(dest: Path) -> str:
    """The start of a temporary file's name for ``dest``: it names the process that writes it and
    where it runs, so that another process can tell a temporary file whose writer died (to be
    removed) from one being written right now by another run (to be left alone)."""
    return f".{dest.name}{TEMP_MARK}p{os.getpid()}h{host_tag()}_"


def temp_writer(name: str) -> tuple[int, str] | None:
    """The process id and host tag (:func:`host_tag`) of the writer a temporary file's name records
    (None: a name without them)."""
    found = _WRITER.search(name)
    return (int(found.group(1)), found.group(2)) if found is not None else None


def write_target(dest: Path) -> Path:
    """The file a write to ``dest`` replaces: ``dest``, or the file a symlink ``dest`` points to.

    Writing through a symlink replaces its target and keeps the link.  Refused
    with ``OSError``: a dangling symlink (as ``cp`` refuses it: we would create a
    file wherever it points), and anything that is not a regular file (a device
    such as ``/dev/null``, a FIFO, a folder), which a rename would replace.
    """
    target = dest
    if dest.is_symlink():
        target = Path(os.path.realpath(dest))
        if not target.exists():
            raise OSError(2, "a dangling symlink (its target does not exist); not writing through it", str(dest))
    with suppress(FileNotFoundError):
        if not stat.S_ISREG(target.stat().st_mode):  # /dev/null, a FIFO, a folder: never replaced by a file
            raise OSError(21, "not a regular file; refusing to replace it", str(dest))
    return target


def _written_temp(beside: Path, data: bytes) -> str:
    """A temporary file next to ``beside`` (``.<name>.godot-formats-<random>.tmp``) holding ``data``,
    on disk; removed again if that fails."""
    fd, tmp = tempfile.mkstemp(dir=beside.parent, prefix=temp_prefix(beside), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def write_atomic(dest: Path, data: bytes, like: Path | None = None) -> None:
    """Write ``data`` to ``dest`` through a temporary file in the same folder and ``os.replace``.

    Readers see the old file or the new one, never a partial write.  When
    ``dest`` is a symlink, the file it points to is replaced and the link kept.
    The new file keeps the permission bits of ``like`` (or of the file it
    replaces).  The temporary file is ``.<name>.godot-formats-<random>.tmp``
    (:func:`is_temp_name`), removed on any failure.
    """
    target = write_target(dest)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _written_temp(target, data)
    try:
        model = like if like is not None and like.exists() else (target if target.exists() else None)
        if model is not None:
            os.chmod(tmp, stat.S_IMODE(model.stat().st_mode))
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


def save_to(file: Any, data: bytes, *, origin: Path | None, overwrite: bool, what: str) -> None:
    """What ``save()`` of a file read from ``origin`` does: write ``data`` atomically to ``file`` (a
    path, or a binary file object), or back to ``origin`` when ``file`` is None; an existing file
    other than ``origin`` is only replaced with ``overwrite=True``."""
    if file is None:
        if origin is None:
            raise ValueError(f"this {what} was not read from a path: give save() a file")
        file = origin
    elif isinstance(file, (str, os.PathLike)) and Path(file).exists() and not overwrite and not (
            origin is not None and Path(file).resolve() == origin.resolve()):
        raise FileExistsError(17, "exists; pass overwrite=True to replace it", str(file))
    if isinstance(file, (str, os.PathLike)):
        write_atomic(Path(file), data)
    elif hasattr(file, "write"):
        file.write(data)
    else:
        raise TypeError("save() writes to a path or a binary file object")


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an advisory lock (``flock``) on the file ``path`` names now, for a read-compare-replace.

    A file replaced by :func:`write_atomic` is a new inode, so the lock is taken on the file and
    then checked to be the one the path still names (else taken again on the new one): two
    processes that change one file take turns, and the second sees the first one's file.
    Anything but a regular file is refused before it is opened (a FIFO would block).
    """
    while True:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise OSError(22, "not a regular file; refusing to change it", str(path))
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            held, now = os.fstat(fd), os.stat(path)
        except BaseException:
            os.close(fd)
            raise
        if (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
            break
        os.close(fd)  # replaced while we waited: lock the file that is there now
    try:
        yield
    finally:
        os.close(fd)  # releases the lock


def create_atomic(dest: Path, data: bytes, mode: int) -> None:
    """Create ``dest`` holding ``data``, whole or not at all, never over an existing file
    (``FileExistsError``): written under a temporary name, then linked into place."""
    tmp = _written_temp(dest, data)
    try:
        os.chmod(tmp, mode)
        os.link(tmp, dest)
    finally:
        with suppress(OSError):
            os.unlink(tmp)


def read_at_most(f: IO[bytes], limit: int) -> bytes:
    """At most ``limit`` bytes of ``f``, from where it stands to its end.

    A file opened by ``open()`` is asked for what ``fstat`` says is left and a byte more (to see that
    it has not grown), not for ``limit``: a buffered ``read(n)`` allocates ``n`` bytes first and shrinks
    them to what it got, and glibc then maps that buffer afresh on every call (a 5 MB save read in
    2.4 ms, a page fault for every 4 KiB of it, each time; sized, 0.2 ms once warm).  Any other
    object is only asked to ``read(limit)``: its ``fileno()`` may do work of its own (a
    ``SpooledTemporaryFile`` moves to disk) or fail in ways of its own.
    """
    if not isinstance(f, _OPENED):
        return f.read(limit)
    try:
        left = os.fstat(f.fileno()).st_size - f.tell()
    except (OSError, ValueError):  # a pipe or a socket (no position), a closed file
        return f.read(limit)
    if not 0 <= left < limit:
        return f.read(limit)
    data = f.read(left + 1)
    if data is None or len(data) <= left:  # None: a non-blocking file with nothing to read yet
        return data
    return data + (f.read(limit - len(data)) or b"")  # it grew while being read (or says 0: /proc)


#: What ``open(path, "rb")`` (buffered or not, or "r+b") returns: files whose fstat and tell mean
#: what read_at_most takes them to mean.
_OPENED = (io.FileIO, io.BufferedReader, io.BufferedRandom)


# -- the one bounded read ---------------------------------------------------------------------------

#: What :func:`read_bounded` reads: a path, the bytes themselves, or a binary file object.
Readable = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes]]

#: What a file that is not a regular file is, in words, by its ``st_mode`` (a table, looked up in order).
_KINDS: tuple[tuple[Any, str], ...] = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)

#: Opening never blocks (a FIFO with no writer), never makes a terminal ours, never leaks to a child.
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def file_kind(mode: int) -> str | None:
    """What a file of ``st_mode`` ``mode`` is when it is not a regular file ("a FIFO" ...); None for
    a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a file")


def read_bounded(file: Readable, max_size: int = MAX_FILE_SIZE) -> tuple[bytes, Path | None]:
    """The bytes of ``file`` (a path, bytes or a binary file object, read from where it stands), and
    its path (None when it is not a path): the one read every entry point makes.

    Nothing over ``max_size`` bytes is read: a named file by its size before a byte of it is read,
    a file object once ``max_size + 1`` bytes have come, each a :class:`SizeLimitError` naming the
    size and the limit.  A named file that is not a regular file (a FIFO, a character or block
    device such as ``/dev/zero``, a socket, a directory) is refused with
    :class:`NotRegularFileError` before it is read: by its ``stat`` before it is opened (opening a
    device can do things of its own), then by ``fstat`` of what was opened, without blocking (the
    name may have been swapped for a FIFO in between).  A missing or unreadable file raises the
    ``OSError`` that says so.
    """
    if isinstance(file, (bytes, bytearray, memoryview)):
        size = memoryview(file).nbytes
        if size > max_size:
            raise SizeLimitError(0, f"the input is {size} bytes, over max_size={max_size}")
        return bytes(file), None
    if isinstance(file, (str, os.PathLike)):
        path = Path(file)
        return _read_named(path, max_size), path
    if not hasattr(file, "read"):
        raise TypeError(f"a path, bytes or a binary file object is needed, not {type(file).__name__}")
    data = read_at_most(file, max_size + 1)
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError("a binary file object is needed")
    if len(data) > max_size:
        raise SizeLimitError(0, f"the file holds more than max_size={max_size} bytes")
    return bytes(data), None


def _refuse_special(path: Path, mode: int) -> None:
    kind = file_kind(mode)
    if kind is not None:
        raise NotRegularFileError(str(path), kind)


def _read_named(path: Path, max_size: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_size`` of them (see :func:`read_bounded`)."""
    _refuse_special(path, os.stat(path).st_mode)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        _refuse_special(path, os.stat(path).st_mode)  # replaced by a socket since (ENXIO): say what it is
        raise
    try:
        st = os.fstat(fd)
        _refuse_special(path, st.st_mode)
        if st.st_size > max_size:
            raise SizeLimitError(0, f"the file is {st.st_size} bytes, over max_size={max_size}")
        if fcntl is not None and _OPEN_FLAGS & getattr(os, "O_NONBLOCK", 0):
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        data = read_at_most(f, max_size + 1)
    if len(data) > max_size:  # it grew while being read
        raise SizeLimitError(0, f"the file grew past max_size={max_size} bytes while being read")
    return data
