"""Output files written whole or not at all: the per-user files of `fastrank evaluate
--per-user` and the plots.

    with written(path, "--per-user") as handle:
        write the file to `handle` (an open binary file)

The handle is that of a temporary file in the folder of `path`, which replaces `path` only
once it is complete. A write that fails (a full disk, a file-size limit, a full quota) removes
the temporary file, leaves `path` as it was, and raises an UnwritableFile (an OSError with
the errno of the failure) whose one-line message names `path`. A path that is not a
regular file (a device such as /dev/full or /dev/stdout, a named pipe) cannot be replaced:
it is written in place, with the same error naming it.
"""

from __future__ import annotations

import errno as errnos
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from ._types import PathLike

# what to do about the usual failures of a write
_HINTS = {
    errnos.ENOSPC: "free space on its disk, or write it elsewhere",
    errnos.EFBIG: "it passes the largest file allowed (ulimit -f, or the file system's "
                  "limit): raise the limit or write it elsewhere",
    errnos.EDQUOT: "the disk quota is used up: free space, or write it elsewhere",
}


class UnwritableFile(OSError):
    """A file that could not be written: an OSError with the errno of the failure and the
    file's name (`filename`), whose message names the file and what was left there."""

    def __str__(self) -> str:
        return str(self.args[0])  # the message, not OSError's "[Errno n] ...: name"


def _text(path: object) -> str:
    """A file name as text (bytes and os.PathLike decoded; a file object's name may be a
    descriptor)."""
    return os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)


def named(path: object, role: str) -> str:
    """How an error names a file: with the option it came from ("--per-user out.csv"), or
    as it is for a plain path."""
    return _text(path) if role == "path" else f"{role} {_text(path)}"


def unwritable(err: OSError, path: object, role: str, left: str) -> UnwritableFile:
    """The UnwritableFile of `err`, an error writing `path`; `left` says what is there
    now."""
    reason = err.strerror or str(err) or type(err).__name__
    hint = _HINTS.get(err.errno)  # type: ignore[arg-type]  # None: no hint
    text = f"{named(path, role)}: cannot be written ({reason})" + \
        (f"; {hint}" if hint else "") + (f"; {left}" if left else "")
    error = UnwritableFile(" ".join(text.split("\n")))  # one line, whatever the name holds
    error.errno, error.filename = err.errno, _text(path)
    return error


@contextmanager
def written(path: PathLike | bytes, role: str = "path") -> Iterator[BinaryIO]:
    """Yield a binary file to write `path` to: a temporary file beside `path` (with the
    permissions a new file gets, or those of the file it replaces), which replaces `path`
    once the block ends without an error. On an error the temporary file is removed; an
    OSError becomes an UnwritableFile naming `path` (`role`: the option it came from, e.g.
    "--per-user"), other errors pass as they are. A path that exists and is not a regular
    file (a device, a pipe) is written in place. The writers get the open file, never the
    path, so none of them can remove or replace what is there (pyarrow removes a path it
    failed to write: /dev/full, for root)."""
    target = Path(os.path.realpath(os.fsdecode(path)))  # a link's target is replaced
    try:
        mode: int | None = os.stat(target).st_mode
    except OSError:
        mode = None  # no file yet (or one that cannot be looked at: the open says why)
    in_place = mode is not None and not stat.S_ISREG(mode)
    try:
        temporary = target if in_place else _create_beside(target, mode)
    except OSError as err:
        raise unwritable(err, path, role, "nothing was written") from None
    try:
        with open(temporary, "wb") as handle:
            yield handle
        if not in_place:
            os.replace(temporary, target)
    except BaseException as err:
        if not in_place:
            temporary.unlink(missing_ok=True)
        if isinstance(err, OSError) and not isinstance(err, UnwritableFile):
            left = ("" if in_place else "the file there is as it was" if mode is not None
                    else "no partial file was left")
            raise unwritable(err, path, role, left) from None
        raise


def _create_beside(target: Path, mode: int | None) -> Path:
    """A new empty file in the folder of `target`, named after it and hidden: its mode is
    a new file's (0o666 less the umask) or `mode`, that of the file it will replace."""
    while True:  # the name cut short, so that the temporary's fits where the name does
        temporary = target.with_name(f".{target.name[:200]}.{secrets.token_hex(4)}.partial")
        try:
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(handle)
        if mode is not None:
            try:
                os.chmod(temporary, stat.S_IMODE(mode))
            except OSError:
                temporary.unlink(missing_ok=True)
                raise
        return temporary
