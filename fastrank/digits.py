"""Numbers as users write them in text (labels, trec_eval's options, TREC and CSV files),
read one way everywhere: ASCII digits only, where Python's int() and float() also take
other scripts' digits ('１０'), '1_0', 'inf' and 'nan'; and whole numbers read without
int()'s limit, which refuses a text of more than 4,300 digits with a message that names
no argument."""

from __future__ import annotations

import math
import re

# a decimal number as written in ASCII. (The digits after the point belong to the point's
# group: digits, an optional point and digits would try every split of a run of digits.)
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def decimal_number(text: str) -> float:
    """The float of a decimal number written in ASCII (sign, digits, point, exponent: no
    blanks), NaN for any other text."""
    return float(text) if _DECIMAL.fullmatch(text) else math.nan


def whole_number(text: str, largest: int) -> int:
    """The integer of `text` (ASCII digits with at most one leading sign, as checked by
    the caller's pattern), clamped to [-largest, largest]: digits past those of `largest`
    (after leading zeros) are not converted, the number being beyond it."""
    sign = -1 if text[:1] == "-" else 1
    digits = text.lstrip("+-").lstrip("0")
    if len(digits) > len(str(largest)):
        return sign * largest
    return max(-largest, min(sign * int(digits or "0"), largest))
