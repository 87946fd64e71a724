"""TOML 1.0, not 1.1: what a manifest may be written in (FORMAT.md, "The manifest").

TOML 1.0's integers are 64-bit: one that is not "must" be an error, but tomli reads any
(and raises a bare ValueError past Python's 4,300 digits): ``integer_beyond_64_bits``
names one, looked for only where the text holds a long enough run of digits.

tomli reads TOML 1.1 from its version 2.3 (an inline table over several lines or with a
trailing comma, the escapes ``\\e`` and ``\\xHH``, a time without seconds), so what the
verifier accepted depended on the tomli installed. A manifest is TOML 1.0, which every
TOML reader reads: ``feature_of_1_1`` names the first TOML 1.1 feature in a text that
tomli parsed. A regular expression finds the texts that may hold one (a manifest the tool
writes holds none), and only those are walked, skipping strings and comments as TOML
writes them.
"""

from __future__ import annotations

import re

__all__ = ["feature_of_1_1", "integer_beyond_64_bits"]

_TIME_WITHOUT_SECONDS = re.compile(r"(?<![0-9:+\-])[0-9]{2}:[0-9]{2}(?![0-9]|:[0-9])")
_MAY_HOLD = re.compile(r"\\[ex]|,\s*}|\{[^}\n]*\n|" + _TIME_WITHOUT_SECONDS.pattern)


def feature_of_1_1(text: str) -> str | None:
    """The first TOML 1.1 feature of ``text`` (a document tomli parsed), or None."""
    if _MAY_HOLD.search(text) is None:
        return None
    stack: list[str] = []
    last = ""
    outside: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if c in "\"'":
            quote = c * 3 if text.startswith(c * 3, i) else c
            i += len(quote)
            while True:
                if i >= n:
                    return None
                if c == '"' and text[i] == "\\":
                    if text[i + 1 : i + 2] in ("e", "x"):
                        return f"the escape \\{text[i + 1]} is TOML 1.1"
                    i += 2
                    continue
                if text.startswith(quote, i):
                    i += len(quote)
                    extra = 0
                    while len(quote) == 3 and extra < 2 and text[i : i + 1] == c:
                        i, extra = i + 1, extra + 1
                    break
                i += 1
            last = c
            outside.append(" S ")
            continue
        if c == "\n" and stack and stack[-1] == "{":
            return "an inline table over several lines is TOML 1.1"
        if c in "{[":
            stack.append(c)
        elif c in "}]":
            if c == "}" and last == ",":
                return "a trailing comma in an inline table is TOML 1.1"
            if stack:
                stack.pop()
        if c not in " \t\r\n":
            last = c
        outside.append(c)
        i += 1
    if _TIME_WITHOUT_SECONDS.search("".join(outside)):
        return "a time without seconds is TOML 1.1"
    return None


# a literal of an integer outside 64 bits has at least 19 decimal digits (16 hex, 21 octal,
# 63 binary); underscores only make it longer
_LONG_NUMBER = re.compile(r"[0-9_]{19}|0x[0-9A-Fa-f_]{16}|0o[0-7_]{21}|0b[01_]{63}")
_LOW, _HIGH = -(1 << 63), (1 << 63) - 1


def integer_beyond_64_bits(text: str, doc: object) -> str | None:
    """An integer of ``doc`` (parsed from ``text``) outside 64 bits, named; or None."""
    if _LONG_NUMBER.search(text) is None:
        return None
    stack = [doc]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool) and not _LOW <= item <= _HIGH:
            return f"the integer {str(item)[:24]}... does not fit in 64 bits"
    return None
