"""The scanner ``checkers/linear.py`` and ``checkers/promptfoo/jsregex.py`` share
(``checkers/regexscan.py``) gives each translator what it gave before the fold, on every
input: each translation, each refusal's words, RE2's translation of a JavaScript pattern.

Below the tests is a frozen copy of the two parsers as they were before the fold (commit
c2648ab), never to be edited: a divergence of the live code from it fails here. The inputs:
every pattern of up to two characters over an alphabet of the syntax both read (and of
three over its metacharacters), every pattern of Node's table
(``tests/data/promptfoo/regex_cases.json``) and of the linear tests' generator, and
Hypothesis's texts over that alphabet.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import linear
from checkers.promptfoo import jsregex
from tests.checkers.test_linear_patterns import patterns

# the syntax both subsets read, some of what they refuse, and characters past ASCII and
# past U+FFFF
ALPHABET = "a1_ -,\\^$.|?*+()[]{}dDwWsSbBtnx0u:=!<P#\n\u00e9\U0001f600"
# the syntax itself, to three characters: where the two scanners' shared steps meet
SYNTAX = "a1\\^$.|?*+()[]{},-dbu"
SHORT = sorted(
    {"".join(chars) for n in range(3) for chars in itertools.product(ALPHABET, repeat=n)}
    | {"".join(chars) for chars in itertools.product(SYNTAX, repeat=3)}
)
NODE_TABLE = sorted(
    {
        case["pattern"]
        for case in json.loads(
            (
                Path(__file__).resolve().parent.parent / "data" / "promptfoo" / "regex_cases.json"
            ).read_text()
        )["cases"]
    }
)


def _linear_now(pattern: str, ignore_case: bool) -> tuple[Any, ...]:
    try:
        compiled = linear.compile(pattern, ignore_case)
    except linear.NotInSubset as exc:
        assert type(exc) is linear.NotInSubset
        return ("refused", str(exc))
    return ("read", compiled.translated, compiled.needs_ascii, compiled.dollar, compiled.empty)


def _linear_before(pattern: str, ignore_case: bool) -> tuple[Any, ...]:
    try:
        return ("read", *_old_linear_compile(pattern, ignore_case))
    except _OldRefusal as exc:
        return ("refused", str(exc))


def _js_now(pattern: str) -> tuple[Any, ...]:
    try:
        translated = jsregex.translate(pattern).pattern
    except jsregex.NotInSubset as exc:
        assert type(exc) is jsregex.NotInSubset
        return ("refused", str(exc))
    on_re2 = jsregex._for_re2.__wrapped__(pattern)
    return ("read", translated, None if on_re2 is None else on_re2.pattern)


def _js_before(pattern: str) -> tuple[Any, ...]:
    try:
        translated = _old_translate(pattern).pattern
    except _OldRefusal as exc:
        return ("refused", str(exc))
    on_re2 = _old_for_re2(pattern)
    return ("read", translated, None if on_re2 is None else on_re2.pattern)


def _same(pattern: str) -> None:
    for ignore_case in (False, True):
        assert _linear_now(pattern, ignore_case) == _linear_before(pattern, ignore_case), (
            pattern,
            ignore_case,
        )
    assert _js_now(pattern) == _js_before(pattern), pattern


def test_every_short_pattern_translates_as_before_the_fold() -> None:
    assert len(SHORT) > 10_000
    for pattern in SHORT:
        _same(pattern)


def test_every_pattern_node_answered_translates_as_before_the_fold() -> None:
    assert len(NODE_TABLE) > 100
    for pattern in NODE_TABLE:
        _same(pattern)


@settings(max_examples=600, deadline=None)
@given(pattern=st.text(alphabet=ALPHABET, max_size=24))
def test_generated_texts_translate_as_before_the_fold(pattern: str) -> None:
    _same(pattern)


@settings(max_examples=400, deadline=None)
@given(pattern=patterns())
def test_generated_patterns_translate_as_before_the_fold(pattern: str) -> None:
    _same(pattern)


@pytest.mark.parametrize(
    "pattern",
    ["a" * 10_001, "\U0001f600" * 5_001, "a{1000}", "a{1001}", "a{2,1}", "(a*)*", "(a|b)+"],
)
def test_edge_patterns_translate_as_before_the_fold(pattern: str) -> None:
    _same(pattern)


# ---- frozen: the parsers before the fold (commit c2648ab); never edit below this line ----


class _OldRefusal(ValueError):
    pass


_L_MAX_COUNT = 1000  # RE2's largest repeat count
_L_MAX_PATTERN = 10_000  # longest pattern compiled

_META = frozenset("\\^$.|?*+()[]{}")
_L_CONTROL = {"t": "\\t", "n": "\\n", "r": "\\r", "f": "\\f", "v": "\\v"}
_L_SETS = {"d": "0-9", "w": "0-9A-Za-z_", "s": "\\t\\n\\v\\f\\r\\x1c-\\x1f "}


class _OldLinearParser:
    def __init__(self, pattern: str) -> None:
        self.s = pattern
        self.i = 0
        self.classes = False
        self.dollar = False

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def refuse(self, what: str) -> _OldRefusal:
        return _OldRefusal(f"{what} (at {self.i})")

    def disjunction(self) -> tuple[str, bool]:
        """The RE2 text, and whether it can match the empty text."""
        parts = [self.alternative()]
        while self.peek() == "|":
            self.i += 1
            parts.append(self.alternative())
        return "|".join(p for p, _ in parts), any(empty for _, empty in parts)

    def alternative(self) -> tuple[str, bool]:
        out = []
        while self.peek() not in ("", "|", ")"):
            out.append(self.term())
        return "".join(p for p, _ in out), all(empty for _, empty in out)

    def term(self) -> tuple[str, bool]:
        atom, quantifiable, empty = self.atom()
        quantifier = self.quantifier()
        if quantifier is None:
            return atom, empty
        if not quantifiable:
            raise self.refuse("a quantifier on an assertion")
        if empty:
            raise self.refuse(
                "a quantifier on a group that can match the empty text (Python and RE2 "
                "repeat it differently)"
            )
        if self.peek() in ("*", "+", "?", "{"):
            raise self.refuse("a quantifier after a quantifier (possessive or repeated)")
        return f"(?:{atom}){quantifier}", quantifier[0] in "*?" or quantifier.startswith("{0")

    def quantifier(self) -> str | None:
        char = self.peek()
        if char in ("*", "+", "?"):
            self.i += 1
            text = char
        elif char == "{":
            text = self.braces()
        else:
            return None
        if self.peek() == "?":
            self.i += 1
            text += "?"
        return text

    def braces(self) -> str:
        end = self.s.find("}", self.i)
        body = self.s[self.i + 1 : end] if end > 0 else ""
        low, comma, high = body.partition(",")
        if not low.isdigit() or not (high.isdigit() or high == "") or not low.isascii():
            raise self.refuse("a '{' that is not a whole quantifier {n}, {n,} or {n,m}")
        if not high.isascii() or max(int(low), int(high or 0)) > _L_MAX_COUNT:
            raise self.refuse(f"a count above {_L_MAX_COUNT}")
        if high and int(high) < int(low):
            raise self.refuse("a quantifier {n,m} with m < n")
        self.i = end + 1
        return "{" + low + comma + high + "}"

    def atom(self) -> tuple[str, bool, bool]:
        """The RE2 text, whether it may be quantified, whether it can match nothing."""
        char = self.peek()
        if char == "^":
            self.i += 1
            return "^", False, True
        if char == "$":
            self.i += 1
            self.dollar = True
            return "\\z", False, True
        if char == ".":
            self.i += 1
            return "[^\\n]", True, False
        if char == "(":
            return self.group_atom()
        if char == "[":
            return self.character_class(), True, False
        if char == "\\":
            text, quantifiable = self.escape()
            return text, quantifiable, not quantifiable
        if char in ("*", "+", "?"):
            raise self.refuse(f"a quantifier {char!r} on nothing")
        if char in ("{", "}", "]", ")"):
            raise self.refuse(f"a lone {char!r}")
        self.i += 1
        return self.literal(char), True, False

    def group_atom(self) -> tuple[str, bool, bool]:
        text, empty = self.group()
        return text, True, empty

    def literal(self, char: str) -> str:
        if not char.isascii():
            raise self.refuse("a character that is not ASCII")
        if char.isalnum() or char in " _-,;:'\"!@#%&=<>/~`":
            return char
        return f"\\x{ord(char):02x}"

    def group(self) -> tuple[str, bool]:
        self.i += 1
        capturing = True
        if self.peek() == "?":
            if self.peek(1) != ":":
                raise self.refuse(
                    f"the group syntax '(?{self.peek(1)}' (lookaround, named group, flags, "
                    "comment, conditional or atomic group)"
                )
            self.i += 2
            capturing = False
        inner, empty = self.disjunction()
        if self.peek() != ")":
            raise self.refuse("an unclosed group")
        self.i += 1
        return (f"({inner})" if capturing else f"(?:{inner})"), empty

    def escape(self) -> tuple[str, bool]:
        char = self.peek(1)
        self.i += 2
        if char in ("b", "B"):
            self.classes = True
            return f"\\{char}", False
        if char.lower() in _L_SETS:
            self.classes = True
            return f"[{'^' if char.isupper() else ''}{_L_SETS[char.lower()]}]", True
        if char in _L_CONTROL:
            return _L_CONTROL[char], True
        if char and char.isascii() and not char.isalnum() and char != "_" and char.isprintable():
            return f"\\x{ord(char):02x}", True
        self.i -= 2
        raise self.refuse(f"the escape \\{char or '(end)'}")

    def character_class(self) -> str:
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        members: list[str] = []
        first = True
        while first or self.peek() != "]":
            if self.peek() == "":
                raise self.refuse("an unclosed class")
            if self.s.startswith(("--", "&&", "~~", "||"), self.i) or self.peek() == "[":
                raise self.refuse("a set operation or '[' inside a class")
            members.append(self.class_member())
            first = False
        self.i += 1
        return f"[{'^' if negated else ''}{''.join(members)}]"

    def class_member(self) -> str:
        if self.peek() == "\\" and self.peek(1) in _L_SETS:
            self.classes = True
            self.i += 2
            if self.peek() == "-" and self.peek(1) != "]":
                raise self.refuse("a class escape as the start of a range")
            return _L_SETS[self.peek(-1)]
        low = self.class_unit()
        if self.s.startswith(("--", "&&", "~~", "||"), self.i):
            raise self.refuse("a set operation inside a class")
        if self.peek() != "-" or self.peek(1) in ("]", ""):
            return f"\\x{ord(low):02x}"
        self.i += 1
        high = self.class_unit()
        if high < low:
            raise self.refuse("a range out of order in a class")
        return f"\\x{ord(low):02x}-\\x{ord(high):02x}"

    def class_unit(self) -> str:
        char = self.peek()
        if char == "\\":
            following = self.peek(1)
            if following in _L_CONTROL:
                self.i += 2
                return {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v"}[following]
            if following.isascii() and not following.isalnum() and following.isprintable():
                if following in ("", "_"):
                    raise self.refuse("the escape \\_ in a class")
                self.i += 2
                return following
            raise self.refuse(f"the class escape \\{following or '(end)'}")
        if not char.isascii() or not char.isprintable():
            raise self.refuse("a class member that is not printable ASCII")
        self.i += 1
        return char


def _old_linear_compile(pattern: str, ignore_case: bool = False) -> tuple[str, bool, bool, bool]:
    """``pattern`` (Python syntax) for RE2, or ``_OldRefusal`` naming what is outside."""
    if len(pattern) > _L_MAX_PATTERN:
        raise _OldRefusal(f"a pattern longer than {_L_MAX_PATTERN} characters")
    parser = _OldLinearParser(pattern)
    body, empty = parser.disjunction()
    if parser.peek() != "":
        raise parser.refuse(f"an unmatched {parser.peek()!r}")
    import re2  # google-re2: only where a pattern is run

    options = re2.Options()
    options.case_sensitive = not ignore_case
    options.max_mem = 64 << 20
    try:
        compiled = re2.compile(body, options)
    except re2.error as exc:  # the translation is ours: never expected
        raise _OldRefusal(f"a translation RE2 cannot compile ({exc})") from None
    assert compiled is not None
    return body, parser.classes or ignore_case, parser.dollar, empty


_J_MAX_COUNT = 1000  # largest {n,m} count accepted
_J_MAX_PATTERN = 10_000  # longest pattern (in UTF-16 _old_units) translated

_J_WORD = "A-Za-z0-9_"
# JavaScript's WhiteSpace and LineTerminator (ECMA-262 \s): Unicode Zs, tab, VT, FF, BOM,
# and LF, CR, LS, PS
_J_SPACE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_J_CLASS_ESCAPES = {"d": "0-9", "w": _J_WORD, "s": _J_SPACE}
_J_CONTROL = {"t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}
_J_SYNTAX = frozenset("^$\\.*+?()[]{}|/")
_J_HEX = frozenset("0123456789abcdefABCDEF")
_J_QUANTIFIER = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")
_J_BOUNDARY = (
    f"(?:(?<=[{_J_WORD}])(?![{_J_WORD}])|(?<![{_J_WORD}])(?=[{_J_WORD}]))",
    f"(?:(?<=[{_J_WORD}])(?=[{_J_WORD}])|(?<![{_J_WORD}])(?![{_J_WORD}]))",
)


def _old_units(text: str) -> str:
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


def _old_unit(char: str) -> str:
    """One code unit as a Python pattern escape (never syntax)."""
    return f"\\u{ord(char):04x}"


@dataclass
class _OldPiece:
    text: str  # the Python pattern
    simple: bool  # matches exactly one unit, or a group of such with no quantifier or |
    quantifiable: bool  # an atom (not an assertion)


class _OldJsParser:
    def __init__(self, pattern: str) -> None:
        self.s = _old_units(pattern)
        self.i = 0

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def refuse(self, what: str) -> _OldRefusal:
        return _OldRefusal(f"{what} (at {self.i})")

    def disjunction(self) -> _OldPiece:
        alternatives = [self.alternative()]
        while self.peek() == "|":
            self.i += 1
            alternatives.append(self.alternative())
        if len(alternatives) == 1:
            return alternatives[0]
        return _OldPiece("|".join(a.text for a in alternatives), False, True)

    def alternative(self) -> _OldPiece:
        parts: list[_OldPiece] = []
        while self.peek() not in ("", "|", ")"):
            parts.append(self.term())
        text = "".join(p.text for p in parts)
        return _OldPiece(text, bool(parts) and all(p.simple for p in parts), True)

    def term(self) -> _OldPiece:
        atom = self.atom()
        quantifier = self.quantifier()
        if quantifier is None:
            return atom
        if not atom.quantifiable:
            raise self.refuse("a quantifier on an assertion")
        if not atom.simple and quantifier not in ("?", "??"):
            raise self.refuse(
                "a quantified group holding a quantifier, '|' or an assertion (may "
                "backtrack without bound; empty repeats differ between the engines)"
            )
        if self.peek() in ("*", "+", "?", "{"):
            raise self.refuse(f"a quantifier after a quantifier ({self.peek()!r})")
        return _OldPiece(f"(?:{atom.text}){quantifier}", False, True)

    def quantifier(self) -> str | None:
        char = self.peek()
        if char in ("*", "+", "?"):
            self.i += 1
            text = char
        elif char == "{":
            text = self.braces()
        else:
            return None
        if self.peek() == "?":
            self.i += 1
            text += "?"
        return text

    def braces(self) -> str:
        match = _J_QUANTIFIER.match(self.s, self.i)
        if match is None:
            raise self.refuse("a '{' that is not a whole quantifier (JavaScript reads it as text)")
        low = int(match.group(1))
        high = low if match.group(2) is None else int(match.group(3) or -1)
        if max(low, high) > _J_MAX_COUNT:
            raise self.refuse(f"a count above {_J_MAX_COUNT}")
        if high != -1 and high < low:
            raise self.refuse("a quantifier {n,m} with m < n")
        self.i = match.end()
        return match.group(0)

    def atom(self) -> _OldPiece:
        char = self.peek()
        if char == "^":
            self.i += 1
            return _OldPiece("\\A", False, False)
        if char == "$":
            self.i += 1
            return _OldPiece("\\Z", False, False)
        if char == ".":
            self.i += 1
            return _OldPiece("[^\\n\\r\\u2028\\u2029]", True, True)
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
        return _OldPiece(_old_unit(char), True, True)

    def group(self) -> _OldPiece:
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
            return _OldPiece(f"(?{kind}{inner.text})", False, False)
        return _OldPiece(f"(?:{inner.text})", inner.simple, True)

    def escape(self) -> _OldPiece:
        char = self.peek(1)
        if char in ("b", "B"):
            self.i += 2
            return _OldPiece(_J_BOUNDARY[char == "B"], False, False)
        if char.lower() in _J_CLASS_ESCAPES:
            self.i += 2
            body = _J_CLASS_ESCAPES[char.lower()]
            return _OldPiece(f"[{'^' if char.isupper() else ''}{body}]", True, True)
        return _OldPiece(_old_unit(self.unit_escape()), True, True)

    def unit_escape(self) -> str:
        """The one unit an escape such as ``\\n``, ``\\x41`` or ``\\.`` stands for."""
        char = self.peek(1)
        if char in _J_CONTROL:
            self.i += 2
            return _J_CONTROL[char]
        if char == "0" and not self.peek(2).isdigit():
            self.i += 2
            return "\0"
        if char in ("x", "u"):
            width = 2 if char == "x" else 4
            digits = self.s[self.i + 2 : self.i + 2 + width]
            if len(digits) != width or not set(digits) <= _J_HEX:
                raise self.refuse(f"an incomplete \\{char} escape (JavaScript reads it as text)")
            self.i += 2 + width
            return chr(int(digits, 16))
        if char in _J_SYNTAX:
            self.i += 2
            return char
        raise self.refuse(f"the escape \\{char or '(end)'}")

    def character_class(self) -> _OldPiece:
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
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
        return _OldPiece(f"[{'^' if negated else ''}{''.join(members)}]", True, True)

    def class_member(self, first: bool) -> str:
        char = self.peek()
        if char == "[":
            raise self.refuse("a '[' inside a class")
        if char == "-":
            if not first and self.peek(1) != "]":
                raise self.refuse("a '-' inside a class that is neither first nor last")
            self.i += 1
            return _old_unit("-")
        if char == "\\" and self.peek(1) in _J_CLASS_ESCAPES:
            self.i += 2
            if self.peek() == "-" and self.peek(1) != "]":
                raise self.refuse("a class escape as the end of a range")
            return _J_CLASS_ESCAPES[self.peek(-1)]
        low = self.class_unit()
        if self.peek() != "-" or self.peek(1) == "]":
            return _old_unit(low)
        self.i += 1
        if self.peek() == "\\" and self.peek(1).lower() in _J_CLASS_ESCAPES:
            raise self.refuse("a class escape as the end of a range")
        high = self.class_unit()
        if high < low:
            raise self.refuse("a range out of order in a class")
        return f"{_old_unit(low)}-{_old_unit(high)}"

    def class_unit(self) -> str:
        char = self.peek()
        if char != "\\":
            self.i += 1
            return char
        following = self.peek(1)
        if following.lower() in _J_CLASS_ESCAPES or following == "b":
            raise self.refuse(f"the class escape \\{following} here")
        if following == "-":
            self.i += 2
            return "-"
        return self.unit_escape()


def _old_translate(pattern: str) -> re.Pattern[str]:
    """The compiled Python pattern that means what ``new RegExp(pattern)`` means, for
    ``search`` on ``_old_units(text)``. Raises ``_OldRefusal`` naming what is outside the
    subset (including syntax JavaScript refuses)."""
    parser = _OldJsParser(pattern)
    if len(parser.s) > _J_MAX_PATTERN:
        raise _OldRefusal(f"a pattern longer than {_J_MAX_PATTERN} units")
    piece = parser.disjunction()
    if parser.peek() != "":
        raise parser.refuse(f"an unmatched {parser.peek()!r}")
    try:
        return re.compile(piece.text)
    except re.error as exc:  # the translation is ours: never expected
        raise _OldRefusal(f"a translation Python cannot compile ({exc})") from None


_J_PYTHON_ONLY = re.compile(r"\\u([0-9a-f]{4})|\\Z")


def _old_for_re2(pattern: str) -> Any:
    """The translation as RE2 compiles it (linear time in the text), or None where RE2
    has no equal: a lookahead, or a surrogate unit (RE2 reads code points, not _old_units).
    The word boundaries are JavaScript's (ASCII) in both."""
    python = _old_translate(pattern).pattern
    python = python.replace(_J_BOUNDARY[0], "\\b").replace(_J_BOUNDARY[1], "\\B")
    if "(?=" in python or "(?!" in python or "(?<" in python:
        return None
    units_used = [int(m.group(1), 16) for m in _J_PYTHON_ONLY.finditer(python) if m.group(1)]
    if any(0xD800 <= u <= 0xDFFF for u in units_used):
        return None
    text = _J_PYTHON_ONLY.sub(lambda m: f"\\x{{{m.group(1)}}}" if m.group(1) else "\\z", python)
    import re2  # google-re2

    options = re2.Options()
    options.max_mem = 64 << 20
    try:
        return re2.compile(text, options)
    except re2.error:
        return None
