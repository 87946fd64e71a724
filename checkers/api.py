"""The contract between the verifier and a built-in checker.

A checker is a pure function ``(inputs, params) -> Verdict``: it receives data the
runner has already loaded (never paths), does no I/O and never prints. Everything a
reviewer needs to trust it is declared next to it: its roles, params and the reason
codes it may return. Codes are part of the format: bundles name them in
``expect_reasons``, so a code never changes meaning within a checker version.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

Status = Literal["pass", "fail", "error"]

_NAME = re.compile(r"^[a-z][a-z0-9-]*\Z")
_CODE = re.compile(r"^[a-z][a-z_]*(\.[a-z][a-z_0-9<>]*)+\Z")


class InputKind(enum.Enum):
    """How the runner turns a role's file(s) into the value a checker receives."""

    DATA = "data"  # one YAML or JSON document, parsed
    JSONL = "jsonl"  # JSON Lines: a list of (line number, parsed value) pairs
    TEXT = "text"  # UTF-8 text
    BYTES = "bytes"  # raw bytes
    TREE = "tree"  # a folder: mapping of relative path -> bytes


class Reading(NamedTuple):
    """How the runner parses a role's YAML/JSON beyond the strict defaults. A checker
    version opts in; what older versions decide never changes with the reader."""

    yaml_aliases: bool = False  # expand anchors/aliases (bounded) instead of refusing them
    json_constants: bool = False  # NaN / Infinity read as numbers instead of refused
    # JSON Lines split at "\n" only, as the format says, not at every Unicode line break:
    # a writer with ensure_ascii=False leaves U+2028 or U+0085 unescaped inside a string
    lines_at_newline: bool = False


STRICT = Reading()


class Role(NamedTuple):
    """One named input of a checker."""

    name: str
    kind: InputKind
    doc: str
    many: bool = False  # the role takes a list of paths; the checker gets a list
    optional: bool = False
    reading: Reading = STRICT
    # compared with the checker's other compared roles: one file in two of them would
    # compare the file with itself, so the runner refuses it (input.same_file)
    compared: bool = False


_REQUIRED: Any = object()

# The widest tolerance a fraction may be compared with (exclusive): a wider one would admit
# a claim and its opposite (a pass rate of 1.0 within 0.99 of 0.01). Every checker
# comparing fractions caps its ``tolerance`` with ``Param(..., below=MAX_TOLERANCE)``.
MAX_TOLERANCE = 0.05


class Param(NamedTuple):
    """One documented parameter. ``types`` is checked by the runner before the call, and
    so is the range of a number: ``at_least`` and ``at_most`` (inclusive), ``below``
    (exclusive, for a tolerance: a wider one would admit a claim and its opposite).
    ``states`` marks a param that states what the evidence must show (a figure, or a
    mapping of figures) and names the reason codes a wrong statement fails with: the
    vacuity check asks, for each entry of a mapping on its own (the rest of the params
    as given), for an input that fails with one of them."""

    name: str
    doc: str
    types: tuple[type, ...]
    default: Any = _REQUIRED
    at_least: float | None = None
    at_most: float | None = None
    below: float | None = None
    states: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    @property
    def numeric(self) -> bool:
        return bool({int, float} & set(self.types))

    @property
    def range(self) -> str:
        """The accepted range in words (empty for a param that is not a number)."""
        if not self.numeric:
            return ""
        whole = float not in self.types
        bounds = [
            f"at least {_number(self.at_least)}" if self.at_least is not None else "",
            f"at most {_number(self.at_most)}" if self.at_most is not None else "",
            f"below {_number(self.below)}" if self.below is not None else "",
        ]
        words = ", ".join(b for b in bounds if b) or "any finite value"
        return f"{'a whole number' if whole else 'a number'}, {words}"

    def out_of_range(self, value: Any) -> str | None:
        """Why ``value`` is outside this param's range, or None. Only numbers are
        judged (a wrong type is the type check's); NaN and infinities never fit."""
        if isinstance(value, bool) or not isinstance(value, int | float) or not self.numeric:
            return None
        inside = math.isfinite(value)
        inside = inside and (self.at_least is None or value >= self.at_least)
        inside = inside and (self.at_most is None or value <= self.at_most)
        inside = inside and (self.below is None or value < self.below)
        if inside:
            return None
        return f"param {self.name!r} is {value!r}, outside its range: {self.range}"


def _number(value: float) -> str:
    return f"{value:g}"


@dataclass(frozen=True)
class Reason:
    """Why a checker failed (or errored): a stable code, a sentence, optional data."""

    code: str
    message: str
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    """What a checker returns."""

    status: Status
    message: str
    reasons: tuple[Reason, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def passed(cls, message: str, **details: Any) -> Verdict:
        return cls("pass", message, (), details)

    @classmethod
    def failed(cls, message: str, reasons: list[Reason], **details: Any) -> Verdict:
        if not reasons:
            raise ValueError("a failing verdict needs at least one reason")
        return cls("fail", message, tuple(reasons), details)

    @classmethod
    def errored(cls, code: str, message: str, **details: Any) -> Verdict:
        return cls("error", message, (Reason(code, message),), details)

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(sorted({r.code for r in self.reasons}))


class CheckerInputError(Exception):
    """Raised by a checker when its loaded input is not what its role documents.

    The runner turns it into an ``error`` verdict with the given code: malformed
    evidence is never a pass and never a fail.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def pattern_not_rerun(pattern: str, why: str, where: str = "") -> CheckerInputError:
    """``pattern.not_rerun``: a regular expression (run on ``where``, if given) that a
    checker version running patterns in linear time only does not run, and why."""
    on = f" on {where}" if where else ""
    return CheckerInputError(
        "pattern.not_rerun",
        f"the pattern {pattern[:200]!r} is not re-run{on}: {why}; outside the subset a "
        "linear engine reads as the original engine does, whose time is not bounded by "
        "the text's length",
    )


CheckFunction = Callable[[Mapping[str, Any], Mapping[str, Any]], Verdict]

# Given params the checker accepts (defaults filled in), loaded inputs (role -> value, as
# the runner passes them) on which the checker must fail with one of its own reason codes;
# ``None`` when no input can make it fail: those params are vacuous, and the runner
# refuses them (params.vacuous). A checker that declares none is refused too.
Counterexample = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]

# Error codes every checker may return; the runner produces them.
COMMON_ERRORS: Mapping[str, str] = {
    "input.unreadable": "an input file could not be read or parsed as its role requires",
    "input.invalid": "an input parsed but does not have the documented shape",
    "params.invalid": "a param is missing, unknown or of the wrong type",
    "params.out_of_range": "a number param is outside the range its checker documents",
    "params.vacuous": "under these params the checker cannot fail on any input (its "
    "counterexample does not fail it), so a pass would show nothing",
    "input.same_file": "one file is given to two roles the checker compares with each "
    "other: it would be compared with itself",
    "checker.raised": "the checker raised an unexpected exception (a bug, not a verdict)",
    "checker.bad_verdict": "the checker returned something that is not a valid verdict",
    "checker.unavailable": "this verifier has no checker of that name and version",
    "checker.timeout": "the checker ran past the verifier's time limit per case",
    "checker.memory": "the case needed more memory than the verifier's limit per case",
    "input.tampered": "an input changed after it was checked: its SHA-256 no longer matches",
    "pattern.not_rerun": "a regular expression from the evidence or the params is outside "
    "the subset a linear engine reads as the original engine does: it is not run, and the "
    "case is inconclusive",
}


def failed_substantively(verdict: Verdict) -> bool:
    """A fail for one of the checker's own reasons, not an input, param or checker error."""
    return verdict.status == "fail" and any(c not in COMMON_ERRORS for c in verdict.codes)


def first_failing(
    function: CheckFunction, params: Mapping[str, Any], candidates: Iterable[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """The first candidate inputs on which ``function`` fails substantively: how a
    counterexample searches when building one failing input directly is awkward. A
    ``params.invalid`` raised on the way is raised again (the params are wrong, not
    vacuous); other input errors only rule that candidate out."""
    for inputs in candidates:
        try:
            verdict = function(inputs, params)
        except CheckerInputError as exc:
            if exc.code == "params.invalid":
                raise
            continue
        if failed_substantively(verdict):
            return inputs
    return None


class Bound(NamedTuple):
    """A checker with the params of one case: checked against its declared params once,
    defaults filled in. The runner calls it; the claim rules compare ``params`` (``{}``
    and the defaults written out are one check)."""

    checker: Checker
    given: Mapping[str, Any]
    params: Mapping[str, Any]  # the given params over the declared defaults
    problems: tuple[str, ...]  # a param missing, unknown or of the wrong type
    outside: tuple[str, ...]  # a number outside its declared range

    @property
    def refused(self) -> Verdict | None:
        """The error verdict of params the checker does not take (``params.invalid``) or
        whose numbers are outside their declared range (``params.out_of_range``)."""
        if self.problems:
            return Verdict.errored("params.invalid", "; ".join(self.problems))
        if self.outside:
            return Verdict.errored("params.out_of_range", "; ".join(self.outside))
        return None

    def __call__(self, inputs: Mapping[str, Any]) -> Verdict:
        """The checker's function on ``inputs`` with these params (refused ones never:
        ask ``refused`` first)."""
        if self.problems or self.outside:
            raise ValueError(f"{self.checker.key}: params refused; ask refused first")
        return self.checker.function(inputs, self.params)


def _fits(value: Any, param: Param) -> bool:
    if isinstance(value, bool) and bool not in param.types:
        return False  # True is an int in Python, never in a param
    return isinstance(value, param.types)


class Checker(NamedTuple):
    """A registered built-in checker: ``name@version`` plus its documentation."""

    name: str
    version: int
    summary: str
    doc: str
    roles: tuple[Role, ...]
    params: tuple[Param, ...]
    reasons: Mapping[str, str]
    function: CheckFunction
    libraries: tuple[str, ...] = ()
    counterexample: Counterexample | None = None
    # params the checker accepts, as a bundle would give them: the counterexample property
    # is tested on each (tests/checkers/test_counterexamples.py), besides the examples' own
    example_params: tuple[Mapping[str, Any], ...] = ()

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"

    def role(self, name: str) -> Role | None:
        return next((r for r in self.roles if r.name == name), None)

    @property
    def all_reasons(self) -> Mapping[str, str]:
        return {**self.reasons, **COMMON_ERRORS}

    @property
    def module(self) -> str:
        """The module that declares it: the registry's index names it."""
        return self.function.__module__

    def bind(self, params: Mapping[str, Any]) -> Bound:
        """``params`` checked against the declared ones, defaults filled in: the one
        place both happen, for the runner, the build and the claim rules alike."""
        declared = {p.name: p for p in self.params}
        problems = []
        for name in params:
            if name not in declared:
                known = ", ".join(declared) or "none"
                problems.append(f"{self.key} has no param {name!r} (it takes: {known})")
        for param in self.params:
            if param.name not in params:
                if param.required:
                    problems.append(f"{self.key} needs param {param.name!r}: {param.doc}")
            elif not _fits(params[param.name], param):
                wanted = " or ".join(t.__name__ for t in param.types)
                observed = type(params[param.name]).__name__
                problems.append(f"param {param.name!r} must be {wanted}, observed {observed}")
        outside = []
        for param in self.params:
            why = param.out_of_range(params[param.name]) if param.name in params else None
            if why:
                outside.append(f"{self.key}: {why}")
        full = {p.name: p.default for p in self.params if not p.required}
        full.update(params)
        return Bound(self, params, full, tuple(problems), tuple(outside))


def checker(
    name: str,
    version: int,
    *,
    roles: list[Role],
    reasons: Mapping[str, str],
    counterexample: Counterexample,
    example_params: Iterable[Mapping[str, Any]],
    params: list[Param] | None = None,
    libraries: tuple[str, ...] = (),
) -> Callable[[CheckFunction], Checker]:
    """Declare a built-in checker. The function's docstring is its user documentation:
    first line a summary, the rest shown by ``reprobundle checkers``. ``counterexample``
    (its docstring says what it gives, and when it gives none: the checkers reference
    shows it) and ``example_params`` (at least one set of params the checker takes) are
    required: a declaration that lacks either, or whose parts disagree, is refused here,
    when its module is imported, not when a bundle first uses it."""

    if not _NAME.match(name) or version < 1:
        raise ValueError(f"bad checker name or version: {name}@{version}")
    key = f"{name}@{version}"
    for code in reasons:
        if not _CODE.match(code):
            raise ValueError(f"{key}: reason code {code!r} is not dotted lower case")
    examples = tuple(dict(e) for e in example_params)

    def wrap(function: CheckFunction) -> Checker:
        text = (function.__doc__ or "").strip()
        if not text:
            raise ValueError(f"{key}: a checker needs a docstring")
        summary, _, rest = text.partition("\n")
        declared = Checker(
            name=name,
            version=version,
            summary=summary.strip(),
            doc=_dedent(rest),
            roles=tuple(roles),
            params=tuple(params or ()),
            reasons=dict(reasons),
            function=function,
            libraries=libraries,
            counterexample=counterexample,
            example_params=examples,
        )
        problems = declaration_problems(declared)
        if problems:
            raise ValueError(f"{key}: " + "; ".join(problems))
        return declared

    return wrap


def declaration_problems(found: Checker) -> list[str]:
    """What is wrong with a checker's declaration, its parts read against each other:
    the checks ``@checker`` makes when a module is imported (and a test makes on every
    registered checker, however it was made)."""
    problems = []
    if found.counterexample is None or not callable(found.counterexample):
        problems.append(
            "declare counterexample=: the inputs on which it must fail (see checkers/README.md)"
        )
    elif not (found.counterexample.__doc__ or "").strip():
        problems.append("its counterexample needs a docstring: what it gives, and when none")
    for what, names in (
        ("role", [r.name for r in found.roles]),
        ("param", [p.name for p in found.params]),
    ):
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            problems.append(f"{what} names must be unique, observed {', '.join(twice)} twice")
    for param in found.params:
        undeclared = [code for code in param.states if code not in found.reasons]
        if undeclared:
            problems.append(
                f"param {param.name!r} states {', '.join(undeclared)}, not among its "
                f"declared reasons ({', '.join(found.reasons) or 'none'})"
            )
    if not found.example_params:
        problems.append("declare example_params=: at least one set of params it takes")
    for example in found.example_params:
        refused = found.bind(example).refused
        if refused is not None:
            problems.append(f"example params {dict(example)!r} are refused: {refused.message}")
    return problems


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text).strip()
