"""Reading text files line by line: plain or gzip (by content, not name), UTF-8, with
errors that name the file, the line number and the text."""

from __future__ import annotations

import gzip
import io
import math
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .._types import PathLike


class MissingFile(FileNotFoundError, ValueError):
    """A path that names no file: a FileNotFoundError that is also a ValueError, the
    error fastrank raises for bad input."""


class UnreadableFile(OSError, ValueError):
    """A path that is a directory or cannot be read (OSError and ValueError)."""


def writable(path: PathLike, role: str = "path") -> Path:
    """path as a Path that a file can be written to: not a directory, in a folder that
    exists; or an error naming it and the role it plays (--per-user, ...)."""
    path = Path(path)
    folder = path.parent
    with _os_errors(path, role, "written"):
        if path.is_dir():
            raise UnreadableFile(f"{role} {path}: is a directory; name a file in it")
        if not folder.is_dir():
            raise MissingFile(f"{role} {path}: the folder {str(folder)!r} does not exist; "
                              f"create it first, or name a file in an existing folder")
    return path


def readable(path: PathLike, role: str = "path") -> Path:
    """path as a Path to an existing file that is not a directory (a device or a pipe is
    fine), or an error naming it and the role it plays (qrels, run, --truth, ...)."""
    try:
        path = Path(path)
    except TypeError:
        raise TypeError(f"{role} must be a file path (str or os.PathLike); got "
                        f"{type(path).__name__}") from None
    named = f"{path}" if role == "path" else f"{role} {path}"  # the option or input
    with _os_errors(path, role, "read"):
        if path.is_dir():
            raise UnreadableFile(f"{named}: is a directory, not a file")
        if not path.exists():
            raise MissingFile(f"{named}: no such file")
    return path


@contextmanager
def _os_errors(path: Path, role: str, doing: str) -> Iterator[None]:
    """The OSError of a look at `path` (a name too long, a loop of links, ...) as an
    UnreadableFile naming its role; the errors the look raises itself pass as they are."""
    try:
        yield
    except OSError as err:
        if isinstance(err, ValueError):
            raise
        raise UnreadableFile(f"{role} {str(path)[:80]!r}...: cannot be {doing} "
                             f"({err.strerror or err})") from None


def lines(path: PathLike, *, comments: bool = False, bom: str = "strip",
          newline: str | None = None, role: str = "path") -> Iterator[tuple[int, str]]:
    """(line number, text) of a plain or gzip file; blank lines are skipped, and with
    `comments` so are lines whose first non-blank character is '#'. See `chunks`."""
    for start, chunk in chunks(path, bom=bom, newline=newline, role=role):
        for offset, line in enumerate(chunk):
            text = line.strip()
            if text and not (comments and text[0] == "#"):
                yield start + offset, line


def chunks(path: PathLike, *, bom: str = "strip", newline: str | None = None,
           role: str = "path", size: int = 1 << 20,
           errors: str = "strict") -> Iterator[tuple[int, list[str]]]:
    """(number of the first line, list of lines) of a plain or gzip file (by content, not
    name), UTF-8, about `size` characters at a time. A byte-order mark at the start is
    dropped (bom="strip") or an error (bom="reject"). `newline` is open()'s: None ends
    lines at \\n, \\r\\n or \\r; "\\n" only at \\n (as C reads them). `errors` is
    open()'s: "strict" refuses bytes that are not UTF-8, naming the first line that has
    one; "surrogateescape" keeps each such byte as a lone surrogate (U+DC80-U+DCFF),
    which encodes back to the byte."""
    path = readable(path, role)
    try:
        raw = open(path, "rb")
    except OSError as err:
        raise UnreadableFile(f"{path}: cannot be read ({err.strerror or err})") from None
    with raw:
        try:
            gzipped = raw.peek(2)[:2] == b"\x1f\x8b"  # by content; nothing consumed
        except OSError as err:
            raise UnreadableFile(f"{path}: cannot be read ({err.strerror or err})") from None
        source = gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw
        handle = io.TextIOWrapper(source, encoding="utf-8", errors=errors, newline=newline)
        number = 1
        try:
            while True:
                chunk = handle.readlines(size)
                if not chunk:
                    return
                if number == 1 and chunk[0].startswith("\ufeff"):
                    if bom == "reject":
                        raise ValueError(
                            f"{path}: the file starts with a byte-order mark (U+FEFF), which "
                            f"trec_eval reads as part of the first query id; save it as "
                            f"UTF-8 without a BOM")
                    chunk[0] = chunk[0][1:]
                yield number, chunk
                number += len(chunk)
        except UnicodeDecodeError as err:
            number, column = _first_undecodable(path, gzipped)
            raise ValueError(f"{path}:{number}: not UTF-8 text ({err.reason} at byte "
                             f"{column} of the line); save the file as UTF-8") from None
        except (EOFError, zlib.error, gzip.BadGzipFile) as err:
            raise ValueError(f"{path}: a corrupt or truncated gzip file ({err})") from None
        except OSError as err:
            if gzipped:
                raise ValueError(f"{path}: a corrupt or truncated gzip file ({err})") \
                    from None
            raise UnreadableFile(f"{path}: cannot be read ({err})") from None


def _first_undecodable(path: PathLike, gzipped: bool) -> tuple[int, int]:
    """(line number, byte within the line) of the first byte that is not UTF-8, read
    again from the start (only to name it: the decoder's own offset is within its
    buffer, not the file)."""
    opener = gzip.open if gzipped else open
    with opener(path, "rb") as raw:
        for number, line in enumerate(raw, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as err:
                return number, err.start + 1
    return 0, 0  # pragma: no cover - the decoder refused the file


def parse_number(text: str, path: PathLike, number: int, line: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(
            f"{path}:{number}: {what} {text!r} is not a number in line {line.rstrip()!r}") \
            from None
    if not math.isfinite(value):
        raise ValueError(f"{path}:{number}: {what} {text!r} is not finite in line "
                         f"{line.rstrip()!r}")
    return value
