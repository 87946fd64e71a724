"""JavaScript regular expressions, re-run in Python only where both engines mean the same.

promptfoo's ``regex`` assertion is ``new RegExp(value).test(output)``: no flags, so the
pattern is read in JavaScript's non-Unicode mode (with the web-compatibility rules of
ECMA-262 Annex B), on UTF-16 code units. ``translate`` is a whitelist parser: it accepts a
small subset of that syntax and writes each construct as a Python ``re`` pattern with the
same meaning; anything else raises ``NotInSubset`` naming the construct, and the caller
lists the assertion as not re-run. The subset:

- literal characters other than ``^$\\.*+?()[]{}|``, and those escaped; ``\\t \\n \\v \\f
  \\r``, ``\\0`` (not before a digit), ``\\xHH``, ``\\uHHHH``. Text and pattern are matched
  as UTF-16 code units, as JavaScript does (a character past U+FFFF is two units);
- ``.`` as JavaScript reads it: any unit but ``\\n``, ``\\r``, U+2028, U+2029;
- ``\\d \\w \\s`` and their negations as JavaScript's sets (ASCII digits, ASCII word
  characters, JavaScript's white space and line terminators), ``\\b \\B`` on ASCII word
  characters; ``^`` and ``$`` as the start and end of the whole text (no ``m`` flag);
- classes ``[...]``/``[^...]`` of units, ranges between two units, ``\\d \\w \\s``;
- groups ``(...)``, ``(?:...)``, lookaheads ``(?=...)``, ``(?!...)``; ``|``;
- quantifiers ``* + ? {n} {n,} {n,m}`` (each optionally lazy), counts at most
  ``MAX_COUNT``, on a character, a class or a group.

Refused (not re-run), among others: inline flags and modifiers ``(?i)``, ``(?s)``,
``(?x)``, ``(?i:...)``, comments ``(?#...)``, atomic groups ``(?>...)``, possessive
quantifiers, lookbehinds, named groups, back-references, ``\\p{...}``, ``\\c``, octal
escapes, a ``{`` or ``}`` that is not a whole quantifier (``{,3}`` is literal text in
JavaScript and a quantifier in Python), a lone ``]``, empty classes, a quantifier on an
assertion or on nothing. A quantifier on a group is accepted only when the group holds
single characters and classes, with no quantifier, ``|`` or assertion inside: a nested
quantifier such as ``(a+)+b`` can backtrack for ever, and JavaScript and Python repeat a
group that matches the empty text differently. What is accepted matches the same set
of texts in both engines, and ``test`` asks only whether some match exists.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from ..regexscan import Piece, Scanner, Uncompilable, re2_compile

MAX_COUNT = 1000  # largest {n,m} count accepted
MAX_PATTERN = 10_000  # longest pattern (in UTF-16 units) translated

_WORD = "A-Za-z0-9_"
# JavaScript's WhiteSpace and LineTerminator (ECMA-262 \s): Unicode Zs, tab, VT, FF, BOM,
# and LF, CR, LS, PS
_SPACE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_CLASS_ESCAPES = {"d": "0-9", "w": _WORD, "s": _SPACE}
_CONTROL = {"t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}
_SYNTAX = frozenset("^$\\.*+?()[]{}|/")
_HEX = frozenset("0123456789abcdefABCDEF")
_QUANTIFIER = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")
_BOUNDARY = (
    f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))",
    f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))",
)


class NotInSubset(ValueError):
    """The pattern uses a construct outside the subset both engines read alike."""


def units(text: str) -> str:
    """``text`` as UTF-16 code units, one Python character each (as JavaScript sees it)."""
    if text.isascii() or max(text) < "\U00010000":
        return text
    out = []
    for char in text:
        code = ord(char)
        if code < 0x10000:
            out.append(char)
        else:
            code -= 0x10000
            out.append(chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF)))
    return "".join(out)


def _unit(char: str) -> str:
    """One code unit as a Python pattern escape (never syntax)."""
    return f"\\u{ord(char):04x}"


@dataclass(frozen=True)
class _Piece(Piece):
    simple: bool  # matches exactly one unit, or a group of such with no quantifier or |


class _Parser(Scanner[_Piece]):
    refusal = NotInSubset

    def __init__(self, pattern: str) -> None:
        super().__init__(units(pattern))

    def either(self, alternatives: list[_Piece]) -> _Piece:
        if len(alternatives) == 1:
            return alternatives[0]
        return _Piece("|".join(a.text for a in alternatives), True, False)

    def sequence(self, parts: list[_Piece]) -> _Piece:
        text = "".join(p.text for p in parts)
        return _Piece(text, True, bool(parts) and all(p.simple for p in parts))

    def refuse_repeat(self, atom: _Piece, quantifier: str) -> str:
        if not atom.simple and quantifier not in ("?", "??"):
            return (
                "a quantified group holding a quantifier, '|' or an assertion (may "
                "backtrack without bound; empty repeats differ between the engines)"
            )
        return ""

    def repeated_quantifier(self) -> str:
        return f"a quantifier after a quantifier ({self.peek()!r})"

    def quantified(self, atom: _Piece, quantifier: str) -> _Piece:
        return _Piece(f"(?:{atom.text}){quantifier}", True, False)

    def braces(self) -> str:
        match = _QUANTIFIER.match(self.s, self.i)
        if match is None:
            raise self.refuse("a '{' that is not a whole quantifier (JavaScript reads it as text)")
        low = int(match.group(1))
        high = low if match.group(2) is None else int(match.group(3) or -1)
        if max(low, high) > MAX_COUNT:
            raise self.refuse(f"a count above {MAX_COUNT}")
        if high != -1 and high < low:
            raise self.refuse("a quantifier {n,m} with m < n")
        self.i = match.end()
        return match.group(0)

    def atom(self) -> _Piece:
        char = self.peek()
        if char == "^":
            self.i += 1
            return _Piece("\\A", False, False)
        if char == "$":
            self.i += 1
            return _Piece("\\Z", False, False)
        if char == ".":
            self.i += 1
            return _Piece("[^\\n\\r\\u2028\\u2029]", True, True)
        if char == "(":
            return self.group()
        if char == "[":
            return self.character_class()
        if char == "\\":
            return self.escape()
        if char in ("*", "+", "?"):
            raise self.refuse(f"a quantifier {char!r} on nothing")
        if char in ("{", "}", "]"):
            raise self.refuse(f"a lone {char!r} (JavaScript reads it as text)")
        self.i += 1
        return _Piece(_unit(char), True, True)

    def group(self) -> _Piece:
        self.i += 1
        kind = ""
        if self.peek() == "?":
            kind = self.peek(1)
            if kind not in (":", "=", "!"):
                raise self.refuse(
                    f"the group syntax '(?{kind}' (inline flags, comments, atomic, "
                    "lookbehind or named groups)"
                )
            self.i += 2
        inner = self.disjunction()
        if self.peek() != ")":
            raise self.refuse("an unclosed group")
        self.i += 1
        if kind in ("=", "!"):
            return _Piece(f"(?{kind}{inner.text})", False, False)
        return _Piece(f"(?:{inner.text})", True, inner.simple)

    def escape(self) -> _Piece:
        char = self.peek(1)
        if char in ("b", "B"):
            self.i += 2
            return _Piece(_BOUNDARY[char == "B"], False, False)
        if char.lower() in _CLASS_ESCAPES:
            self.i += 2
            body = _CLASS_ESCAPES[char.lower()]
            return _Piece(f"[{'^' if char.isupper() else ''}{body}]", True, True)
        return _Piece(_unit(self.unit_escape()), True, True)

    def unit_escape(self) -> str:
        """The one unit an escape such as ``\\n``, ``\\x41`` or ``\\.`` stands for."""
        char = self.peek(1)
        if char in _CONTROL:
            self.i += 2
            return _CONTROL[char]
        if char == "0" and not self.peek(2).isdigit():
            self.i += 2
            return "\0"
        if char in ("x", "u"):
            width = 2 if char == "x" else 4
            digits = self.s[self.i + 2 : self.i + 2 + width]
            if len(digits) != width or not set(digits) <= _HEX:
                raise self.refuse(f"an incomplete \\{char} escape (JavaScript reads it as text)")
            self.i += 2 + width
            return chr(int(digits, 16))
        if char in _SYNTAX:
            self.i += 2
            return char
        raise self.refuse(f"the escape \\{char or '(end)'}")

    def character_class(self) -> _Piece:
        negated = self.open_class()
        members: list[str] = []
        first = True
        while self.peek() != "]":
            if self.peek() == "":
                raise self.refuse("an unclosed class")
            members.append(self.class_member(first))
            first = False
        if not members:
            raise self.refuse("an empty class ([] or [^])")
        self.i += 1
        return _Piece(f"[{'^' if negated else ''}{''.join(members)}]", True, True)

    def class_member(self, first: bool) -> str:
        char = self.peek()
        if char == "[":
            raise self.refuse("a '[' inside a class")
        if char == "-":
            if not first and self.peek(1) != "]":
                raise self.refuse("a '-' inside a class that is neither first nor last")
            self.i += 1
            return _unit("-")
        if char == "\\" and self.peek(1) in _CLASS_ESCAPES:
            self.i += 2
            if self.peek() == "-" and self.peek(1) != "]":
                raise self.refuse("a class escape as the end of a range")
            return _CLASS_ESCAPES[self.peek(-1)]
        low = self.class_unit()
        if self.peek() != "-" or self.peek(1) == "]":
            return _unit(low)
        self.i += 1
        if self.peek() == "\\" and self.peek(1).lower() in _CLASS_ESCAPES:
            raise self.refuse("a class escape as the end of a range")
        high = self.class_unit()
        if high < low:
            raise self.refuse("a range out of order in a class")
        return f"{_unit(low)}-{_unit(high)}"

    def class_unit(self) -> str:
        char = self.peek()
        if char != "\\":
            self.i += 1
            return char
        following = self.peek(1)
        if following.lower() in _CLASS_ESCAPES or following == "b":
            raise self.refuse(f"the class escape \\{following} here")
        if following == "-":
            self.i += 2
            return "-"
        return self.unit_escape()


def translate(pattern: str) -> re.Pattern[str]:
    """The compiled Python pattern that means what ``new RegExp(pattern)`` means, for
    ``search`` on ``units(text)``. Raises ``NotInSubset`` naming what is outside the
    subset (including syntax JavaScript refuses)."""
    parser = _Parser(pattern)
    if len(parser.s) > MAX_PATTERN:
        raise NotInSubset(f"a pattern longer than {MAX_PATTERN} units")
    piece = parser.whole()
    try:
        return re.compile(piece.text)
    except re.error as exc:  # the translation is ours: never expected
        raise NotInSubset(f"a translation Python cannot compile ({exc})") from None


_SURROGATE = re.compile("[\ud800-\udfff]")
_PYTHON_ONLY = re.compile(r"\\u([0-9a-f]{4})|\\Z")


@functools.lru_cache(maxsize=256)
def _for_re2(pattern: str) -> Any:
    """The translation as RE2 compiles it (linear time in the text), or None where RE2
    has no equal: a lookahead, or a surrogate unit (RE2 reads code points, not units).
    The word boundaries are JavaScript's (ASCII) in both."""
    python = translate(pattern).pattern
    python = python.replace(_BOUNDARY[0], "\\b").replace(_BOUNDARY[1], "\\B")
    if "(?=" in python or "(?!" in python or "(?<" in python:
        return None
    units_used = [int(m.group(1), 16) for m in _PYTHON_ONLY.finditer(python) if m.group(1)]
    if any(0xD800 <= u <= 0xDFFF for u in units_used):
        return None
    text = _PYTHON_ONLY.sub(lambda m: f"\\x{{{m.group(1)}}}" if m.group(1) else "\\z", python)
    try:
        return re2_compile(text)
    except Uncompilable:
        return None


def test(pattern: str, text: str) -> bool:
    """``new RegExp(pattern).test(text)``, for a pattern inside the subset: by RE2 (time
    linear in the text) when the pattern has no lookahead and the text no character past
    U+FFFF (where a UTF-16 unit and a code point are the same thing); else by Python's
    engine, as before, on which the subset refuses nested quantifiers."""
    seen = units(text)
    linear = _for_re2(pattern)
    if linear is not None and not _SURROGATE.search(seen):
        return linear.search(seen) is not None
    return translate(pattern).search(seen) is not None


def test_linear(pattern: str, text: str) -> bool:
    """``new RegExp(pattern).test(text)`` by RE2 only (time linear in the text); raises
    ``NotInSubset`` where ``test`` would fall back to Python's engine (a lookahead, a
    surrogate unit, or a text with a character past U+FFFF)."""
    seen = units(text)
    linear = _for_re2(pattern)
    if linear is None:
        raise NotInSubset("a lookahead or a surrogate unit, which RE2 does not read alike")
    if _SURROGATE.search(seen):
        raise NotInSubset("an output with a character past U+FFFF (RE2 reads code points)")
    return linear.search(seen) is not None
