"""State equivalence: when two observed steps are the same state (the declared identity
fields after the declared normalisers; in model format 2, canonical text first)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from ... import linear
from ...api import CheckerInputError
from .traces import Step

_RULE_KEYS = frozenset({"field", "pattern", "replace"})


def _bad_params(message: str) -> CheckerInputError:
    return CheckerInputError("params.invalid", message)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@dataclass(frozen=True)
class Normaliser:
    """``re.sub(pattern, replace, value)`` on a string identity field (``*`` = every one)."""

    pattern: str
    replace: str = ""
    field: str = "*"

    def applies_to(self, name: str) -> bool:
        return self.field in ("*", name)

    def to_dict(self) -> dict[str, str]:
        return {"field": self.field, "pattern": self.pattern, "replace": self.replace}


@dataclass(frozen=True)
class Equivalence:
    """When two observed states are the same state.

    ``identity`` names the fields that define a state: ``label`` is the state's label,
    any other name an attribute (absent and null are the same value). Normalisers run in
    order on string values. Attributes not named are ignored (screenshot ids, timings).
    """

    identity: tuple[str, ...] = ("label",)
    normalisers: tuple[Normaliser, ...] = ()
    canonical: bool = False  # model format 2: canonical_text() before the normalisers

    @classmethod
    def from_params(cls, identity: Any, normalise: Any, canonical: bool = False) -> Equivalence:
        """Validate the ``identity`` and ``normalise`` params (``params.invalid`` if wrong)."""
        if not isinstance(identity, list | tuple) or not identity:
            raise _bad_params("'identity' must be a non-empty list of field names")
        names: list[str] = []
        for name in identity:
            if not isinstance(name, str) or not name:
                raise _bad_params(f"'identity' entries must be field names, got {name!r}")
            if name in names:
                raise _bad_params(f"'identity' names {name!r} twice")
            names.append(name)
        if not isinstance(normalise, list | tuple):
            raise _bad_params("'normalise' must be a list of {field, pattern, replace} rules")
        rules: list[Normaliser] = []
        for i, rule in enumerate(normalise):
            if not isinstance(rule, dict):
                raise _bad_params(f"normalise[{i}] must be a mapping")
            unknown = sorted(set(rule) - _RULE_KEYS)
            if unknown:
                raise _bad_params(f"normalise[{i}]: unknown key(s) {unknown}")
            pattern = rule.get("pattern")
            replace = rule.get("replace", "")
            target = rule.get("field", "*")
            if not isinstance(pattern, str) or not pattern:
                raise _bad_params(f"normalise[{i}] needs a 'pattern' (a regular expression)")
            if not isinstance(replace, str) or not isinstance(target, str):
                raise _bad_params(f"normalise[{i}]: 'field' and 'replace' must be text")
            if target != "*" and target not in names:
                raise _bad_params(
                    f"normalise[{i}] targets {target!r}, which is not an identity field {names}"
                )
            try:
                _compiled(pattern)
            except re.error as exc:
                raise _bad_params(
                    f"normalise[{i}]: bad regular expression {pattern!r}: {exc}"
                ) from None
            rules.append(Normaliser(pattern, replace, target))
        return cls(tuple(names), tuple(rules), canonical)

    @classmethod
    def from_dict(cls, value: Any, canonical: bool = False) -> Equivalence:
        if not isinstance(value, dict):
            raise _bad_params("params must be a mapping with 'identity' and 'normalise'")
        return cls.from_params(value.get("identity"), value.get("normalise", []), canonical)

    def to_dict(self) -> dict[str, Any]:
        return {
            "identity": list(self.identity),
            "normalise": [rule.to_dict() for rule in self.normalisers],
        }

    def raw(self, step: Step) -> dict[str, Any]:
        """The identity fields of a step before normalisation."""
        return {
            name: step.label if name == "label" else step.attrs.get(name) for name in self.identity
        }

    def identify(self, step: Step) -> dict[str, Any]:
        """The normalised identity of a step."""
        return {name: self.normalised(name, value) for name, value in self.raw(step).items()}

    def normalised(self, name: str, value: Any) -> Any:
        """The value of identity field ``name`` after normalisation (text only)."""
        if isinstance(value, str):
            if self.canonical:
                value = canonical_text(value)
            for rule in self.normalisers:
                if rule.applies_to(name):
                    if linear.linear_only():  # a version running patterns on RE2 only
                        value = linear.sub(rule.pattern, rule.replace, value)
                    else:
                        value = _compiled(rule.pattern).sub(rule.replace, value)
        return value


def canonical_text(value: str) -> str:
    """Text as a person reads it: NFC, every Unicode space (no-break ones included) a
    space, trimmed and collapsed. ``"Search\u00a0 results "`` is ``"Search results"``."""
    return " ".join(unicodedata.normalize("NFC", value).split())


def is_blank(identity: Mapping[str, Any]) -> bool:
    """No identity field holds anything (null or empty text): not a state one can name."""
    return all(v is None or (isinstance(v, str) and not v.strip()) for v in identity.values())
