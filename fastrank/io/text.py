"""Reading text files line by line: plain or gzip (by content, not name), UTF-8, with
errors that name the file, the line number and the text."""

import gzip
import math
import zlib
from pathlib import Path


class MissingFile(FileNotFoundError, ValueError):
    """A path that names no file: a FileNotFoundError that is also a ValueError, the
    error fastrank raises for bad input."""


class UnreadableFile(OSError, ValueError):
    """A path that is a directory or cannot be read (OSError and ValueError)."""


def readable(path):
    """path as a Path to an existing regular file, or an error naming it."""
    try:
        path = Path(path)
    except TypeError:
        raise TypeError(f"a file path must be a str or os.PathLike; got "
                        f"{type(path).__name__}") from None
    if path.is_dir():
        raise UnreadableFile(f"{path}: is a directory, not a file")
    if not path.is_file():
        raise MissingFile(f"{path}: no such file")
    return path


def lines(path, *, comments=False, bom="strip"):
    """(line number, text) of a plain or gzip file; blank lines are skipped, and with
    `comments` so are lines whose first non-blank character is '#'. A UTF-8 byte-order
    mark at the start is dropped (bom="strip") or an error (bom="reject")."""
    path = readable(path)
    try:
        with open(path, "rb") as probe:
            gzipped = probe.read(2) == b"\x1f\x8b"
        handle = (gzip.open if gzipped else open)(path, "rt", encoding="utf-8",
                                                  errors="strict")
    except OSError as err:
        raise UnreadableFile(f"{path}: cannot be read ({err.strerror or err})") from None
    with handle:
        try:
            for number, line in enumerate(handle, start=1):
                if number == 1 and line.startswith("\ufeff"):
                    if bom == "reject":
                        raise ValueError(
                            f"{path}: the file starts with a byte-order mark (U+FEFF), which "
                            f"trec_eval reads as part of the first query id; save it as "
                            f"UTF-8 without a BOM")
                    line = line[1:]
                text = line.strip()
                if text and not (comments and text.startswith("#")):
                    yield number, line
        except UnicodeDecodeError as err:
            raise ValueError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") \
                from None
        except (EOFError, zlib.error, gzip.BadGzipFile) as err:
            raise ValueError(f"{path}: a corrupt or truncated gzip file ({err})") from None
        except OSError as err:
            if gzipped:
                raise ValueError(f"{path}: a corrupt or truncated gzip file ({err})") \
                    from None
            raise UnreadableFile(f"{path}: cannot be read ({err})") from None


def parse_number(text, path, number, line, what):
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
