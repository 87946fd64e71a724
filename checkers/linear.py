"""Python regular expressions from a bundle or a log, run in time linear in the text where
a linear engine means the same.

A pattern from a log (an Inspect ``pattern`` scorer) or a bundle is untrusted: Python's
``re`` backtracks, and ``(a+)+$`` on a long text of ``a``s followed by ``b`` takes for
ever. ``compile`` is a whitelist parser: it accepts a subset of Python's syntax whose
meaning RE2 (``google-re2``, which runs in time linear in the text) gives exactly, and
writes each construct as RE2 syntax; anything else raises ``NotInSubset`` naming the
construct. The subset:

- literal ASCII characters other than ``\\^$.|?*+()[]{}``, those escaped (``\\.``), and
  ``\\t \\n \\r \\f \\v``;
- ``.`` (any character but a newline), ``^`` (start of the text), ``$`` (end of the text:
  Python's ``$`` also matches before a final newline, so a text ending in a newline is
  outside the subset for a pattern with ``$``);
- ``\\d \\w \\s \\b \\B`` and ``\\D \\W \\S``, written as the ASCII sets Python means on
  ASCII text (Python's are Unicode sets, so a text that is not ASCII is outside the
  subset for a pattern holding one of them, or read ignoring case);
- classes ``[...]``, ``[^...]`` of ASCII characters, ranges and ``\\d \\w \\s``;
- groups ``(...)`` and ``(?:...)``, ``|``, and the quantifiers ``* + ? {n} {n,} {n,m}``
  (each optionally lazy), counts at most ``MAX_COUNT``, nested as deep as wanted: RE2
  gives the same match and the same groups as Python's leftmost-first search.

Refused, among others: lookarounds, back-references, named groups, inline flags,
conditionals, atomic groups and possessive quantifiers (no linear engine has them, or
RE2 reads them otherwise), ``{,n}``, a ``{`` or ``}`` that is not a whole quantifier,
non-ASCII pattern characters, and a set operation Python warns about (``--``, ``&&``,
``~~``, ``||`` in a class).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from .api import CheckerInputError, pattern_not_rerun
from .regexscan import Piece, Scanner, Uncompilable, re2_compile

MAX_COUNT = 1000  # RE2's largest repeat count
MAX_PATTERN = 10_000  # longest pattern compiled

_CONTROL = {"t": "\\t", "n": "\\n", "r": "\\r", "f": "\\f", "v": "\\v"}
_SETS = {"d": "0-9", "w": "0-9A-Za-z_", "s": "\\t\\n\\v\\f\\r\\x1c-\\x1f "}


class NotInSubset(ValueError):
    """The pattern (or, for a pattern, this text) is outside the subset RE2 reads alike."""


# set by a checker version that runs patterns on RE2 only (``only_linear``)
_LINEAR_ONLY: ContextVar[bool] = ContextVar("linear_only", default=False)


@contextlib.contextmanager
def only_linear() -> Iterator[None]:
    """Within: ``search`` and ``Routed`` never fall back to Python's engine; a pattern or
    text outside the subset raises ``not_rerun`` (the checker version's case is
    inconclusive, the pattern named)."""
    token = _LINEAR_ONLY.set(True)
    try:
        yield
    finally:
        _LINEAR_ONLY.reset(token)


def linear_only() -> bool:
    """Whether the running checker version runs patterns on RE2 only."""
    return _LINEAR_ONLY.get()


def linear_only_version(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` (a checker's) run under ``only_linear``: the next version of a checker
    whose patterns went through ``search``/``Routed``, deciding alike inside the subset."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        with only_linear():
            return function(*args, **kwargs)

    return run


def not_rerun(pattern: str, why: NotInSubset | str, where: str = "") -> CheckerInputError:
    """The error a checker version that runs patterns only on RE2 raises for a pattern (or a
    text, ``where``) outside the subset: the case is inconclusive, the pattern not re-run."""
    return pattern_not_rerun(pattern, str(why), where)


@dataclass(frozen=True)
class Linear:
    """A pattern inside the subset, compiled for RE2."""

    pattern: str
    translated: str
    needs_ascii: bool  # uses a class escape or ignores case: the text must be ASCII
    dollar: bool  # uses $: the text must not end with a newline
    compiled: Any
    empty: bool = False  # can match the empty text

    def count(self, text: str) -> int:
        """``len(re.findall(pattern, text))`` for a pattern that cannot match the empty
        text (each match found after the last one ends, as Python's are); raises
        ``NotInSubset`` as ``search`` does, and for a pattern that can match nothing (Python
        and RE2 step past an empty match differently)."""
        if self.empty:
            raise NotInSubset("a pattern that can match the empty text is counted by Python")
        found, at = 0, 0
        while at <= len(text):
            match = self.search(text) if at == 0 else self._from(text, at)
            if match is None:
                break
            found += 1
            at = match.end()
        return found

    def _from(self, text: str, at: int) -> Any:
        try:
            return self.compiled.search(text, at)
        except UnicodeEncodeError:
            raise NotInSubset("the text holds a character that is not valid Unicode") from None

    def search(self, text: str) -> Any:
        """RE2's search of ``text`` (a match with ``group`` and ``groups``, or None); raises
        ``NotInSubset`` for a text on which the two engines could differ."""
        if self.needs_ascii and not text.isascii():
            raise NotInSubset("the text is not ASCII, and the pattern's sets or case are Unicode")
        if self.dollar and text.endswith("\n"):
            raise NotInSubset("the text ends with a newline, where Python's $ also matches")
        try:
            return self.compiled.search(text)
        except UnicodeEncodeError:  # a lone surrogate
            raise NotInSubset("the text holds a character that is not valid Unicode") from None


@dataclass(frozen=True)
class _Piece(Piece):
    empty: bool  # can match the empty text


class _Parser(Scanner[_Piece]):
    refusal = NotInSubset

    def __init__(self, pattern: str) -> None:
        super().__init__(pattern)
        self.classes = False
        self.dollar = False

    def either(self, alternatives: list[_Piece]) -> _Piece:
        text = "|".join(a.text for a in alternatives)
        return _Piece(text, True, any(a.empty for a in alternatives))

    def sequence(self, parts: list[_Piece]) -> _Piece:
        return _Piece("".join(p.text for p in parts), True, all(p.empty for p in parts))

    def refuse_repeat(self, atom: _Piece, quantifier: str) -> str:
        if atom.empty:
            return (
                "a quantifier on a group that can match the empty text (Python and RE2 "
                "repeat it differently)"
            )
        return ""

    def repeated_quantifier(self) -> str:
        return "a quantifier after a quantifier (possessive or repeated)"

    def quantified(self, atom: _Piece, quantifier: str) -> _Piece:
        empty = quantifier[0] in "*?" or quantifier.startswith("{0")
        return _Piece(f"(?:{atom.text}){quantifier}", True, empty)

    def braces(self) -> str:
        end = self.s.find("}", self.i)
        body = self.s[self.i + 1 : end] if end > 0 else ""
        low, comma, high = body.partition(",")
        if not low.isdigit() or not (high.isdigit() or high == "") or not low.isascii():
            raise self.refuse("a '{' that is not a whole quantifier {n}, {n,} or {n,m}")
        if not high.isascii() or max(int(low), int(high or 0)) > MAX_COUNT:
            raise self.refuse(f"a count above {MAX_COUNT}")
        if high and int(high) < int(low):
            raise self.refuse("a quantifier {n,m} with m < n")
        self.i = end + 1
        return "{" + low + comma + high + "}"

    def atom(self) -> _Piece:
        char = self.peek()
        if char == "^":
            self.i += 1
            return _Piece("^", False, True)
        if char == "$":
            self.i += 1
            self.dollar = True
            return _Piece("\\z", False, True)
        if char == ".":
            self.i += 1
            return _Piece("[^\\n]", True, False)
        if char == "(":
            return self.group()
        if char == "[":
            return _Piece(self.character_class(), True, False)
        if char == "\\":
            text, quantifiable = self.escape()
            return _Piece(text, quantifiable, not quantifiable)
        if char in ("*", "+", "?"):
            raise self.refuse(f"a quantifier {char!r} on nothing")
        if char in ("{", "}", "]", ")"):
            raise self.refuse(f"a lone {char!r}")
        self.i += 1
        return _Piece(self.literal(char), True, False)

    def literal(self, char: str) -> str:
        if not char.isascii():
            raise self.refuse("a character that is not ASCII")
        if char.isalnum() or char in " _-,;:'\"!@#%&=<>/~`":
            return char
        return f"\\x{ord(char):02x}"

    def group(self) -> _Piece:
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
        inner = self.disjunction()
        if self.peek() != ")":
            raise self.refuse("an unclosed group")
        self.i += 1
        text = f"({inner.text})" if capturing else f"(?:{inner.text})"
        return _Piece(text, True, inner.empty)

    def escape(self) -> tuple[str, bool]:
        char = self.peek(1)
        self.i += 2
        if char in ("b", "B"):
            self.classes = True
            return f"\\{char}", False
        if char.lower() in _SETS:
            self.classes = True
            return f"[{'^' if char.isupper() else ''}{_SETS[char.lower()]}]", True
        if char in _CONTROL:
            return _CONTROL[char], True
        if char and char.isascii() and not char.isalnum() and char != "_" and char.isprintable():
            return f"\\x{ord(char):02x}", True
        self.i -= 2
        raise self.refuse(f"the escape \\{char or '(end)'}")

    def character_class(self) -> str:
        negated = self.open_class()
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
        if self.peek() == "\\" and self.peek(1) in _SETS:
            self.classes = True
            self.i += 2
            if self.peek() == "-" and self.peek(1) != "]":
                raise self.refuse("a class escape as the start of a range")
            return _SETS[self.peek(-1)]
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
            if following in _CONTROL:
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


@functools.lru_cache(maxsize=256)
def compile(pattern: str, ignore_case: bool = False) -> Linear:
    """``pattern`` (Python syntax) for RE2, or ``NotInSubset`` naming what is outside."""
    if len(pattern) > MAX_PATTERN:
        raise NotInSubset(f"a pattern longer than {MAX_PATTERN} characters")
    parser = _Parser(pattern)
    body = parser.whole()
    try:
        compiled = re2_compile(body.text, ignore_case)
    except Uncompilable as exc:  # the translation is ours: never expected
        raise NotInSubset(f"a translation RE2 cannot compile ({exc})") from None
    return Linear(
        pattern, body.text, parser.classes or ignore_case, parser.dollar, compiled, body.empty
    )


def search(pattern: str, text: str, ignore_case: bool = False) -> Any:
    """Python's ``re.search(pattern, text)`` (``re.IGNORECASE`` with ``ignore_case``), run
    by RE2 whenever the pattern and the text are inside the subset, so its time is linear
    in the text. Outside it, Python's engine, as the checker versions that exist always
    used (their verdicts are forever), within the case's time budget; under
    ``only_linear``, ``not_rerun`` instead."""
    if _LINEAR_ONLY.get():
        return search_linear(pattern, text, ignore_case)
    try:
        return compile(pattern, ignore_case).search(text)
    except NotInSubset:
        import re

        return re.search(pattern, text, re.IGNORECASE if ignore_case else 0)


def search_linear(pattern: str, text: str, ignore_case: bool = False, where: str = "") -> Any:
    """``re.search(pattern, text)`` by RE2 only: raises ``not_rerun`` (a
    ``CheckerInputError``) for a pattern, or a text (``where``), outside the subset."""
    try:
        return compile(pattern, ignore_case).search(text)
    except NotInSubset as exc:
        raise not_rerun(pattern, exc, where) from None


def require(pattern: str, ignore_case: bool = False) -> Linear:
    """``pattern`` compiled for RE2, or ``not_rerun`` naming why it is outside the subset."""
    try:
        return compile(pattern, ignore_case)
    except NotInSubset as exc:
        raise not_rerun(pattern, exc) from None


def sub(pattern: str, replace: str, text: str) -> str:
    """``re.sub(pattern, replace, text)`` by RE2 only, for a pattern that cannot match the
    empty text (Python and RE2 step past an empty match differently) and a replacement
    without a backslash (a literal: no group reference, no escape); raises ``not_rerun``
    for anything else, and for a text outside the subset."""
    try:
        compiled = compile(pattern)
        if compiled.empty:
            raise NotInSubset("a pattern that can match the empty text is substituted by Python")
        if "\\" in replace:
            raise NotInSubset("a replacement holding a backslash (a group reference or escape)")
        out, done = [], 0
        while done <= len(text):
            match = compiled.search(text) if done == 0 else compiled._from(text, done)
            if match is None:
                break
            out += [text[done : match.start()], replace]
            done = match.end()
        return "".join(out) + text[done:]
    except NotInSubset as exc:
        raise not_rerun(pattern, exc, f"the text {text[:80]!r}") from None


def count(pattern: str, text: str, ignore_case: bool = False) -> int:
    """``len(re.findall(pattern, text))``: by RE2 inside the subset, else by Python's
    engine (as ``search``)."""
    return Routed(pattern, ignore_case).count(text)


class Routed:
    """One pattern compiled once for many texts: RE2 where the subset allows, Python's
    engine for the rest (a pattern outside the subset, or a text on which they differ)."""

    def __init__(self, pattern: str, ignore_case: bool = False) -> None:
        import re

        self.python = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        self.ignore_case = ignore_case
        try:
            self.linear: Linear | None = compile(pattern, ignore_case)
        except NotInSubset:
            self.linear = None

    def count(self, text: str) -> int:
        """``len(re.findall(pattern, text))`` (under ``only_linear``: RE2 or ``not_rerun``)."""
        if _LINEAR_ONLY.get():
            try:
                return require(self.python.pattern, self.ignore_case).count(text)
            except NotInSubset as exc:
                raise not_rerun(self.python.pattern, exc) from None
        if self.linear is not None:
            try:
                return self.linear.count(text)
            except NotInSubset:
                pass
        return len(self.python.findall(text))
