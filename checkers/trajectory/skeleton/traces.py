"""Traces: the observed runs a skeleton is learned from and checked against, parsed
strictly from a YAML/JSON document or JSON Lines records; and the canonical JSON text
that hashes a trace and keys its states."""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, filterfalse, repeat
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


@dataclass(frozen=True)
class Observed:
    """A trace as matching reads it: its name and, step by step, the label and the
    attributes (step numbers count from 1)."""

    name: str
    labels: Sequence[str]
    attrs: Sequence[dict[str, Any]]

    @classmethod
    def of(cls, trace: Trace) -> Observed:
        attrs = [s.attrs if type(s.attrs) is dict else dict(s.attrs) for s in trace.steps]
        return cls(trace.name, [s.label for s in trace.steps], attrs)


def observe(value: Any) -> Observed:
    """What matching reads of ``parse_trace(value)``, and the same ``input.invalid`` (or
    other exception) when that refuses it. A document that is plain JSON data already (as
    the strict JSON readers build it) is read where it lies, column by column, without
    the copy and the per-step objects ``parse_trace`` makes: its copy would be equal."""
    found = _plain_observed(value)
    return found if found is not None else Observed.of(parse_trace(value))


_EMPTY: dict[str, Any] = {}
_TEXT_ONLY = frozenset({str})
_AS_THEY_ARE = frozenset({float, bool, type(None)})  # JSON text carries any of these back
_LEAVES = _AS_THEY_ARE | {str, int}
_PLAIN = _LEAVES | {dict, list}
_LEVELS = 100  # json.dumps and json.loads recurse; far below Python's recursion limit


def _plain_observed(value: Any) -> Observed | None:
    """The trace read without copying it, or None when ``parse_trace`` must read it: the
    document is not plain JSON data (``parse_trace`` copies it through JSON text, which
    may change or refuse it, and hashes that text, refusing a lone surrogate), or it has
    a problem (``parse_trace`` words it)."""
    if type(value) is dict:
        document = value
    elif isinstance(value, list) and value and all(_is_record(v) for v in value):
        (_, header), *rest = value
        if type(header) is not dict or "label" in header:
            return None
        document = {**header, "states": [record for _, record in rest]}
    else:
        return None
    name, states = document.get("trace"), document.get("states")
    if type(name) is not str or not name.strip() or type(states) is not list or not states:
        return None
    if type(document.get("outcome")) not in (str, type(None)):
        return None
    header = [v for k, v in document.items() if k != "states"]
    if not _text_keys([document]) or not _is_plain(header):
        return None
    if set(map(type, states)) != {dict} or not _text_keys(states, _STEP_KEYS):
        return None
    labels: list[Any] = list(map(dict.get, states, repeat("label")))
    if set(map(type, labels)) != _TEXT_ONLY or not all(map(str.strip, labels)):
        return None
    attrs = list(map(dict.get, states, repeat("attrs"), repeat(_EMPTY)))
    if set(map(type, attrs)) != {dict} or not _text_keys(attrs) or not _encodable(labels):
        return None
    # column by column: the values of a column are mostly of one type, checked at once
    columns = (
        [*chain.from_iterable(map(dict.values, attrs))],
        *([*map(dict.get, states, repeat(key))] for key in ("action", "at", "note")),
    )
    if not all(map(_is_plain, columns)):
        return None
    return Observed(name, labels, attrs)


def _of_type(level: list[Any], kinds: set[type], kind: type) -> list[Any]:
    if kind not in kinds:
        return []
    if len(kinds) == 1:
        return level
    if kinds == {kind, type(None)}:
        return list(filter(None, level))  # drops the nulls and only empty containers
    return [v for v in level if type(v) is kind]


def _text_keys(mappings: Sequence[dict[Any, Any]], within: frozenset[str] | None = None) -> bool:
    """Every key of the mappings is text (of type ``str``; a subclass equal to another key
    passes as that key, which it behaves as) that UTF-8 can encode, and one of ``within``
    when given. Checked on the distinct keys, found in C."""
    names = set(chain.from_iterable(mappings))
    if within is not None and not names <= within:
        return False
    return set(map(type, names)) <= _TEXT_ONLY and _encodable(names)


def _encodable(texts: Iterable[str]) -> bool:
    """UTF-8 encodes every text (no lone surrogate); the ASCII ones are known at once."""
    for text in filterfalse(str.isascii, texts):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return False
    return True


def _fine_leaves(leaves: list[Any], kinds: set[type]) -> bool:
    """Texts, ints, floats, booleans and nulls (of ``kinds``) that JSON text carries as
    they are: no int with more digits than ``str`` writes, no text UTF-8 cannot encode
    (found by writing them, in C, as the copy through JSON text and its hash do)."""
    if kinds <= _AS_THEY_ARE:
        return True
    if kinds == _TEXT_ONLY:
        return _encodable(leaves)
    try:
        json.dumps(leaves, ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False
    return True


def _is_plain(values: list[Any]) -> bool:
    """Each value is JSON data as ``json.loads`` builds it (dicts with text keys, lists,
    text, ints, floats, booleans, null; no subclass), which a copy through JSON text gives
    back equal; at most ``_LEVELS`` deep (so no cycle), no int too long for ``str``, no
    text UTF-8 cannot encode. Walked a level at a time, the types of a level found in C."""
    level = values
    for _ in range(_LEVELS):
        kinds = set(map(type, level))
        if not kinds <= _PLAIN:
            return False
        leaves = kinds - {dict, list}
        if leaves == kinds:
            return _fine_leaves(level, kinds)
        if leaves - {type(None)} and not _fine_leaves(
            [v for v in level if type(v) in leaves], leaves
        ):
            return False
        dicts = _of_type(level, kinds, dict)
        lists = _of_type(level, kinds, list)
        if not _text_keys(dicts):
            return False
        level = [*chain.from_iterable(map(dict.values, dicts)), *chain.from_iterable(lists)]
    return False
