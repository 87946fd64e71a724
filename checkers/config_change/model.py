"""What the config-change checkers share: reading their evidence strictly.

Params and records are checked here once (a list of strings, a mapping, a dotted field,
JSON Lines of objects, a config given as YAML text); ``reading_version`` makes the @2 of
a checker that differs from its @1 only in reading YAML with aliases expanded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .. import yamlfile
from ..api import (
    Checker,
    CheckerInputError,
    Counterexample,
    InputKind,
    Reading,
    Reason,
    Verdict,
)
from ..plain import SAME, brief, plain


def str_list(params: Mapping[str, Any], name: str) -> list[str]:
    value = params[name]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CheckerInputError("params.invalid", f"param {name!r} must be a list of strings")
    return list(value)


def choice(params: Mapping[str, Any], name: str, allowed: Sequence[str]) -> str:
    value = params[name]
    if value not in allowed:
        raise CheckerInputError(
            "params.invalid",
            f"param {name!r} is {value!r}; expected one of {', '.join(allowed)}",
        )
    return str(value)


def require_mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise CheckerInputError(
            "input.invalid", f"{what} must be a mapping, got {json_type(value)}"
        )
    return value


def lookup(document: Any, dotted: str, what: str) -> Any:
    """Follow ``a.b.c`` through nested mappings; a missing step is malformed evidence."""
    node = document
    walked: list[str] = []
    for part in dotted.split("."):
        walked.append(part)
        if not isinstance(node, Mapping):
            parent = ".".join(walked[:-1])
            raise CheckerInputError(
                "input.invalid",
                f"{what}: no field {'.'.join(walked)!r}: {parent} is a {json_type(node)}, "
                "not a mapping",
            )
        if part not in node:
            raise CheckerInputError(
                "input.invalid", f"{what}: no field {'.'.join(walked)!r} in the record"
            )
        node = node[part]
    return node


def ident(value: Any) -> str:
    """An identifier as the API wrote it: an ETag keeps its own quotes (``"cfg-41"``)."""
    return value if isinstance(value, str) else brief(value)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def jsonl_records(value: Any, role: str) -> list[tuple[int, Mapping[str, Any]]]:
    """The runner's JSONL form, ``[(line, value), ...]``, checked to hold objects."""
    if not isinstance(value, list):
        raise CheckerInputError("input.invalid", f"{role}: expected JSON Lines records")
    records: list[tuple[int, Mapping[str, Any]]] = []
    for item in value:
        if not isinstance(item, list | tuple) or len(item) != 2:
            raise CheckerInputError("input.invalid", f"{role}: expected (line, value) pairs")
        line, record = item
        if not isinstance(record, Mapping):
            raise CheckerInputError(
                "input.invalid",
                f"{role} line {line}: expected a JSON object, got {json_type(record)}",
            )
        records.append((int(line), record))
    if not records:
        raise CheckerInputError(
            "input.invalid", f"{role} is empty: no records, so it shows nothing either way"
        )
    return records


def as_document(value: Any, what: str, *, aliases: bool = False) -> Any:
    """A config carried as YAML text (e.g. a request's ``yaml`` field) or as data.

    Text is read by the runner's own strict YAML reader (no aliases, no merge keys,
    no duplicate keys), so embedded evidence is read exactly like a bundled file;
    ``aliases`` (the @2 versions) expands anchors and aliases, bounded."""
    if not isinstance(value, str):
        return value
    try:
        data, _ = yamlfile.load(value, aliases=aliases)
    except yamlfile.YamlProblem as exc:
        where = f" (line {exc.line})" if exc.line else ""
        raise CheckerInputError("input.invalid", f"{what}{where}: {exc.message}") from None
    return data


ALIASES_EXPANDED = Reading(yaml_aliases=True)


def finite(value: Any) -> Any:
    """Plain data for a verdict (@2): YAML's .inf and .nan (floats JSON cannot hold) as text."""
    return plain(value, key=SAME, other=SAME)


def plain_verdict(verdict: Verdict) -> Verdict:
    reasons = tuple(Reason(r.code, r.message, finite(r.details)) for r in verdict.reasons)
    return Verdict(verdict.status, verdict.message, reasons, finite(verdict.details))


def observed_nothing(value: Any) -> bool:
    """Null, NaN, blank text, or an empty list or mapping: nothing was observed."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    if isinstance(value, str):
        return not value.strip()
    return isinstance(value, list | tuple | Mapping) and not value


def reading_version(old: Checker, counterexample: Counterexample) -> Checker:
    """``old`` as version 2 whose YAML inputs are read with anchors and aliases expanded:
    the same function, params and reasons, so the same verdict on every input @1 reads."""
    roles = tuple(
        r._replace(reading=ALIASES_EXPANDED) if r.kind is InputKind.DATA else r for r in old.roles
    )
    note = (
        f"\n\nVersion 2 decides as {old.key} on every input that version reads; YAML "
        "inputs are read with anchors and aliases expanded (bounded) instead of refused."
    )
    return old._replace(version=2, roles=roles, doc=old.doc + note, counterexample=counterexample)
