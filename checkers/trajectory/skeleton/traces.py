"""Traces: the observed runs a skeleton is learned from and checked against, parsed
strictly from a YAML/JSON document or JSON Lines records; and the canonical JSON text
that hashes a trace and keys its states."""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...api import CheckerInputError

_STEP_KEYS = frozenset({"label", "attrs", "action", "at", "note"})


def canonical(value: Any) -> str:
    """The canonical JSON text of a value: sorted keys, no spaces, UTF-8 kept. YAML
    timestamps become ISO 8601 text; any other non-JSON value its ``repr``."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_as_text
    )


def _as_text(value: Any) -> str:
    if isinstance(value, datetime.date):  # also datetime.datetime
        return value.isoformat()
    return repr(value)


def invalid(message: str) -> CheckerInputError:
    return CheckerInputError("input.invalid", message)


@dataclass(frozen=True)
class Step:
    """One observed state of a trace, and the action that led to it."""

    number: int  # 1-based position in the trace
    label: str
    attrs: Mapping[str, Any]
    action: Any = None


@dataclass(frozen=True)
class Trace:
    """A parsed trace. ``sha256`` is the hash of its canonical JSON document, so the
    same trace written as YAML, JSON or JSON Lines has the same hash."""

    name: str
    steps: tuple[Step, ...]
    outcome: str | None
    sha256: str
    header: Mapping[str, Any] = field(default_factory=dict)


def parse_trace(value: Any) -> Trace:
    """A trace from a loaded YAML/JSON document or from JSON Lines records.

    Document: ``{trace: NAME, states: [STATE, ...], outcome?: success|failure, ...}``.
    JSON Lines (a list of ``(line number, value)`` pairs): the first record is the
    header (``{"trace": NAME, ...}``), every following record is one STATE.
    STATE: ``{label: TEXT, attrs?: {NAME: VALUE}, action?: VALUE, at?: TIME, note?: TEXT}``
    where ``action`` is what led from the previous state to this one.
    Raises ``CheckerInputError('input.invalid')`` naming the first problem found.
    """
    places: list[str]
    if isinstance(value, list) and value and all(_is_record(v) for v in value):
        (first_line, header), *rest = value
        if not isinstance(header, dict) or "label" in header:
            raise invalid(f"line {first_line}: the first record must be the trace header")
        document = {**header, "states": [record for _, record in rest]}
        places = [f"line {number}" for number, _ in rest]
    elif isinstance(value, dict):
        document = value
        raw_states = value.get("states")
        count = len(raw_states) if isinstance(raw_states, list) else 0
        places = [f"states[{i}]" for i in range(count)]
    else:
        raise invalid("a trace is a mapping with 'trace' and 'states' (or JSON Lines records)")
    # plain JSON data from here on: YAML timestamps become text, so the model file, the
    # hash and the comparison with a stored model see the same values
    document = json.loads(json.dumps(document, ensure_ascii=False, default=_as_text))
    name = document.get("trace")
    if not isinstance(name, str) or not name.strip():
        raise invalid("a trace needs a non-empty 'trace' name")
    states = document.get("states")
    if not isinstance(states, list) or not states:
        raise invalid(f"trace {name!r}: 'states' must be a non-empty list")
    outcome = document.get("outcome")
    if outcome is not None and not isinstance(outcome, str):
        raise invalid(f"trace {name!r}: 'outcome' must be text")
    steps = tuple(_parse_step(name, places[i], i + 1, record) for i, record in enumerate(states))
    header = {k: v for k, v in document.items() if k not in ("trace", "states")}
    digest = hashlib.sha256(canonical(document).encode("utf-8")).hexdigest()
    return Trace(name, steps, outcome, digest, header)


def _is_record(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], int)


def _parse_step(trace: str, where: str, number: int, record: Any) -> Step:
    if not isinstance(record, dict):
        raise invalid(f"trace {trace!r} {where}: a state must be a mapping")
    if not _STEP_KEYS.issuperset(record):
        unknown = sorted(set(record) - _STEP_KEYS)
        raise invalid(
            f"trace {trace!r} {where}: unknown field(s) {unknown}; a state has {sorted(_STEP_KEYS)}"
        )
    label = record.get("label")
    if not isinstance(label, str) or not label.strip():
        raise invalid(f"trace {trace!r} {where}: a state needs a non-empty 'label'")
    attrs = record.get("attrs", {})
    if not isinstance(attrs, dict) or not _names(attrs):
        raise invalid(f"trace {trace!r} {where}: 'attrs' must be a mapping of names")
    return Step(number, label, attrs, record.get("action"))


def _names(attrs: dict[Any, Any]) -> bool:
    """Every key is text (``str.join`` refuses any other, in C)."""
    try:
        "".join(attrs)
    except TypeError:
        return False
    return True
