"""The scanner both whitelist pattern translators share: ``checkers/linear.py`` (Python
syntax for RE2, decision record 0013) and ``checkers/promptfoo/jsregex.py`` (JavaScript
syntax for Python's ``re`` and RE2).

Each translator reads a pattern left to right, one construct at a time, and refuses
anything outside its subset with a message naming the construct and where it stands. What
they read alike is here, once: the cursor, the refusal, alternatives (``|``), sequences,
a quantified term and its quantifier (``* + ?`` or ``{...}``, each optionally lazy), and
compiling a translation for RE2. What a language means by an atom, a class, an escape or a
brace, and how pieces combine, each translator says in its ``Scanner`` subclass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

REPEAT = ("*", "+", "?", "{")  # what may start a quantifier
RE2_MAX_MEM = 64 << 20  # bytes RE2 may use for one compiled pattern


@dataclass(frozen=True)
class Piece:
    """A translated part of a pattern: its text in the target syntax, and whether a
    quantifier may follow it (an atom, not an assertion such as ``^`` or ``\\b``)."""

    text: str
    quantifiable: bool


P = TypeVar("P", bound=Piece)


class Scanner(Generic[P]):
    """A cursor over a pattern, and the grammar both subsets share:

    ``disjunction := alternative ('|' alternative)*``, ``alternative := term*`` (up to
    ``|``, ``)`` or the end), ``term := atom quantifier?``. A subclass gives the atoms
    (``atom``), the brace quantifier (``braces``), how pieces join (``either``,
    ``sequence``, ``quantified``), the refusal a quantified atom may meet
    (``refuse_repeat``) and the words for a quantifier after a quantifier."""

    refusal: type[ValueError] = ValueError

    def __init__(self, pattern: str) -> None:
        self.s = pattern
        self.i = 0

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def refuse(self, what: str) -> ValueError:
        """The translator's refusal, naming the construct and where it stands."""
        return self.refusal(f"{what} (at {self.i})")

    def whole(self) -> P:
        """The whole pattern as one piece; refuses a character left unread."""
        piece = self.disjunction()
        if self.peek() != "":
            raise self.refuse(f"an unmatched {self.peek()!r}")
        return piece

    def disjunction(self) -> P:
        alternatives = [self.alternative()]
        while self.peek() == "|":
            self.i += 1
            alternatives.append(self.alternative())
        return self.either(alternatives)

    def alternative(self) -> P:
        parts: list[P] = []
        while self.peek() not in ("", "|", ")"):
            parts.append(self.term())
        return self.sequence(parts)

    def term(self) -> P:
        atom = self.atom()
        quantifier = self.quantifier()
        if quantifier is None:
            return atom
        if not atom.quantifiable:
            raise self.refuse("a quantifier on an assertion")
        refused = self.refuse_repeat(atom, quantifier)
        if refused:
            raise self.refuse(refused)
        if self.peek() in REPEAT:
            raise self.refuse(self.repeated_quantifier())
        return self.quantified(atom, quantifier)

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

    def open_class(self) -> bool:
        """Moves past a class's ``[`` and a ``^`` after it; whether the ``^`` negates it."""
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        return negated

    # what each language says for itself

    def atom(self) -> P:
        raise NotImplementedError

    def braces(self) -> str:
        """The quantifier ``{...}`` at the cursor, moved past; or a refusal."""
        raise NotImplementedError

    def either(self, alternatives: list[P]) -> P:
        raise NotImplementedError

    def sequence(self, parts: list[P]) -> P:
        raise NotImplementedError

    def quantified(self, atom: P, quantifier: str) -> P:
        raise NotImplementedError

    def refuse_repeat(self, atom: P, quantifier: str) -> str:
        """Why ``atom`` may not take ``quantifier`` in this subset ("" where it may)."""
        raise NotImplementedError

    def repeated_quantifier(self) -> str:
        """The refusal of a quantifier right after a quantifier (at the cursor)."""
        raise NotImplementedError


class Uncompilable(ValueError):
    """RE2 cannot compile a translation (its words): never expected of one."""


def re2_compile(translated: str, ignore_case: bool = False) -> Any:
    """``translated`` (RE2 syntax, written by a translator) compiled by RE2, whose search
    takes time linear in the text; raises ``Uncompilable`` with RE2's words where RE2 cannot
    compile it."""
    import re2  # google-re2: only where a pattern is run

    options = re2.Options()
    options.case_sensitive = not ignore_case
    options.max_mem = RE2_MAX_MEM
    try:
        return re2.compile(translated, options)
    except re2.error as exc:
        raise Uncompilable(str(exc)) from None
