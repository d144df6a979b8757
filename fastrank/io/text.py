"""Reading text files line by line: plain or gzip (by content, not name), UTF-8, with
errors that name the file, the line number and the text."""

import gzip
import math
from pathlib import Path


def lines(path):
    """(line number, text) of a plain or gzip file, blank lines skipped."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    with open(path, "rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    opener = gzip.open if gzipped else open
    with opener(path, "rt", encoding="utf-8", errors="strict") as handle:
        try:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, line
        except UnicodeDecodeError as err:
            raise ValueError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") \
                from None


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
