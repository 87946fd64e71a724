"""Acceptance checks for a one-field config change (seed 000).

The task: change one rule's description, keep everything else, get the server's
checks, hand candidate and checks to the user for review; do not save, do not
activate. "The API accepted it" answers none of these on its own, so each
acceptance criterion of the seed is a checker with its own evidence:

- content: ``merge-reconstruct@1`` rebuilds the candidate the API actually produced
  from the original config and the submitted merge-mode request, then compares the
  full content with an independently prepared expected candidate;
- state: ``state-unchanged@1`` compares two observations read outside the agent's
  session (before and after the run);
- behaviour: ``no-write-attempts@1`` reads the request log recorded *before*
  authorization, so a write the server rejected with 403 still counts;
- review: ``review-matches-submission@1`` checks that what the user reviewed is what
  was sent, against the current version, and what the server answered;
- diagnosis: ``call-args-schema@1`` locates the recording stage at which a tool
  call's arguments first broke the tool's declared JSON Schema.

All checkers here are pure: they receive loaded data and return a verdict.
"""

from __future__ import annotations

import copy
import fnmatch
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jsonschema import exceptions as jsonschema_exceptions
from jsonschema import validators as jsonschema_validators
from referencing.exceptions import Unresolvable

from bundler.format import yamlfile

from .api import (
    CheckerInputError,
    InputKind,
    Param,
    Reason,
    Role,
    Verdict,
    checker,
    first_failing,
)
from .structured import compare_documents, format_path
from .witness import examples

__all__ = [
    "DEFAULT_READS",
    "DEFAULT_STAGES",
    "DEFAULT_WRITES",
    "call_args_schema",
    "merge_reconstruct",
    "no_write_attempts",
    "reconstruct",
    "review_matches_submission",
    "state_unchanged",
]

_CONTENT_REASONS = {
    "content.added": "the candidate has a path the expected candidate does not (collateral)",
    "content.removed": "a path of the expected candidate is missing (collateral: e.g. a rule "
    "deleted while the target was changed)",
    "content.changed": "a value outside the intended change differs (collateral)",
    "content.type_changed": "a value outside the intended change has another type (collateral)",
}


# --------------------------------------------------------------------------- helpers


def _plain(value: Any) -> Any:
    """A JSON-serialisable copy (YAML may load dates; details must be plain data)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _brief(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


def _str_list(params: Mapping[str, Any], name: str) -> list[str]:
    value = params[name]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CheckerInputError("params.invalid", f"param {name!r} must be a list of strings")
    return list(value)


def _choice(params: Mapping[str, Any], name: str, allowed: Sequence[str]) -> str:
    value = params[name]
    if value not in allowed:
        raise CheckerInputError(
            "params.invalid",
            f"param {name!r} is {value!r}; expected one of {', '.join(allowed)}",
        )
    return str(value)


def _require_mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise CheckerInputError(
            "input.invalid", f"{what} must be a mapping, got {_json_type(value)}"
        )
    return value


def _lookup(document: Any, dotted: str, what: str) -> Any:
    """Follow ``a.b.c`` through nested mappings; a missing step is malformed evidence."""
    node = document
    walked: list[str] = []
    for part in dotted.split("."):
        walked.append(part)
        if not isinstance(node, Mapping):
            parent = ".".join(walked[:-1])
            raise CheckerInputError(
                "input.invalid",
                f"{what}: no field {'.'.join(walked)!r}: {parent} is a {_json_type(node)}, "
                "not a mapping",
            )
        if part not in node:
            raise CheckerInputError(
                "input.invalid", f"{what}: no field {'.'.join(walked)!r} in the record"
            )
        node = node[part]
    return node


def _ident(value: Any) -> str:
    """An identifier as the API wrote it: an ETag keeps its own quotes (``"cfg-41"``)."""
    return value if isinstance(value, str) else _brief(value)


def _json_type(value: Any) -> str:
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


def _jsonl_records(value: Any, role: str) -> list[tuple[int, Mapping[str, Any]]]:
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
                f"{role} line {line}: expected a JSON object, got {_json_type(record)}",
            )
        records.append((int(line), record))
    if not records:
        raise CheckerInputError(
            "input.invalid", f"{role} is empty: no records, so it shows nothing either way"
        )
    return records


def _document(value: Any, what: str) -> Any:
    """A config carried as YAML text (e.g. a request's ``yaml`` field) or as data.

    Text is read by the runner's own strict YAML reader (no aliases, no merge keys,
    no duplicate keys), so embedded evidence is read exactly like a bundled file."""
    if not isinstance(value, str):
        return value
    try:
        data, _ = yamlfile.load(value)
    except yamlfile.YamlProblem as exc:
        where = f" (line {exc.line})" if exc.line else ""
        raise CheckerInputError("input.invalid", f"{what}{where}: {exc.message}") from None
    return data


# --------------------------------------------------------------------------- content


def reconstruct(
    original: Any,
    request: Any,
    *,
    mappings: str = "merge",
    lists: str = "replace",
    list_key: str = "name",
) -> Any:
    """The candidate a merge-mode request produces from ``original``.

    ``mappings="merge"`` merges mappings field by field, recursively; ``"replace"``
    makes the request replace the whole document. ``lists="replace"`` replaces a
    list wholesale by the request's list (the seed's API: it does *not* look items up
    by name); ``"by_key"`` merges lists of mappings item by item on ``list_key``
    (matching items merged, new items appended, others kept in place). Lists holding
    anything but mappings are always replaced. Inputs are not modified.
    """
    return _merge(original, request, mappings, lists, list_key, [])


def _merge(
    original: Any, request: Any, mappings: str, lists: str, key: str, path: list[Any]
) -> Any:
    if mappings == "merge" and isinstance(original, Mapping) and isinstance(request, Mapping):
        out = {k: copy.deepcopy(v) for k, v in original.items()}
        for name, value in request.items():
            if name in original:
                out[name] = _merge(original[name], value, mappings, lists, key, [*path, name])
            else:
                out[name] = copy.deepcopy(value)
        return out
    if (
        lists == "by_key"
        and isinstance(original, list)
        and isinstance(request, list)
        and all(isinstance(item, Mapping) for item in [*original, *request])
    ):
        result = [copy.deepcopy(item) for item in original]
        position = _positions(original, key, path, "original")
        _positions(request, key, path, "request")
        for item in request:
            at = position.get(item[key])
            if at is None:
                position[item[key]] = len(result)
                result.append(copy.deepcopy(item))
            else:
                result[at] = _merge(result[at], item, mappings, lists, key, [*path, at])
        return result
    return copy.deepcopy(request)


def _positions(items: list[Any], key: str, path: list[Any], side: str) -> dict[Any, int]:
    where = format_path(path)
    found: dict[Any, int] = {}
    for index, item in enumerate(items):
        if key not in item:
            raise CheckerInputError(
                "input.invalid",
                f"{side} {where}[{index}] has no {key!r} field, so lists cannot merge by key",
            )
        if not isinstance(item[key], str | int | float | bool) or item[key] in found:
            raise CheckerInputError(
                "input.invalid",
                f"{side} {where}[{index}].{key} is {_brief(item[key])}: "
                "keys must be unique scalars to merge by key",
            )
        found[item[key]] = index
    return found


def _under(child: str, parent: str) -> bool:
    return parent == "$" or child.startswith(parent + ".") or child.startswith(parent + "[")


def _overlaps(a: str, b: str) -> bool:
    return a == b or _under(a, b) or _under(b, a)


_ABSENT = object()


def _same_key(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _keyed(items: list[Any], key: str) -> bool:
    """Every item is a mapping with a unique scalar ``key``: items can be named."""
    seen: list[Any] = []
    for item in items:
        if not isinstance(item, Mapping) or key not in item:
            return False
        value = item[key]
        if not isinstance(value, str | int | float | bool):
            return False
        if any(_same_key(value, v) for v in seen):
            return False
        seen.append(value)
    return True


Step = tuple[str, Any]  # ("key", mapping key) | ("index", i) | ("item", list_key value)


def _intended(original: Any, expected: Any, key: str, steps: list[Step]) -> list[list[Step]]:
    """Where ``expected`` differs from ``original``, as steps that name list items by
    ``key`` where both lists allow it: an item added, removed or changed by name, not
    by a position that shifts when another item goes."""
    if isinstance(original, Mapping) and isinstance(expected, Mapping):
        out: list[list[Step]] = []
        for name in [*original, *(k for k in expected if k not in original)]:
            here = [*steps, ("key", name)]
            if name in original and name in expected:
                out += _intended(original[name], expected[name], key, here)
            else:
                out.append(here)
        return out
    if isinstance(original, list) and isinstance(expected, list):
        if _keyed(original, key) and _keyed(expected, key):
            out = []
            names = [item[key] for item in original]
            for item in expected:
                if not any(_same_key(item[key], known) for known in names):
                    names.append(item[key])
            common = []
            for name in names:
                was = _follow(original, [("item", name)], key)
                now = _follow(expected, [("item", name)], key)
                if was is _ABSENT or now is _ABSENT:
                    out.append([*steps, ("item", name)])
                else:
                    common.append(name)
                    out += _intended(was, now, key, [*steps, ("item", name)])
            in_expected = [i[key] for i in expected if any(_same_key(i[key], c) for c in common)]
            if any(not _same_key(a, b) for a, b in zip(common, in_expected, strict=True)):
                out.append(steps)  # the items kept were reordered: the order is the change
            return out
        if len(original) == len(expected):
            out = []
            for index, (was, now) in enumerate(zip(original, expected, strict=True)):
                out += _intended(was, now, key, [*steps, ("index", index)])
            return out
    return [steps] if compare_documents(expected, original, deepest=True) else []


def _follow(document: Any, steps: list[Step], key: str) -> Any:
    node = document
    for kind, step in steps:
        if kind == "key":
            if not isinstance(node, Mapping) or step not in node:
                return _ABSENT
            node = node[step]
        elif kind == "index":
            if not isinstance(node, list) or not 0 <= step < len(node):
                return _ABSENT
            node = node[step]
        else:
            if not isinstance(node, list):
                return _ABSENT
            named = [i for i in node if isinstance(i, Mapping) and _same_key(i.get(key), step)]
            if len(named) != 1:  # none, or ambiguous: the change is not cleanly there
                return _ABSENT
            node = named[0]
    return node


def _position(document: Any, steps: list[Step], key: str) -> str | None:
    """The positional path (``decisions[1].description``) of ``steps`` in ``document``."""
    node, parts = document, []
    for kind, step in steps:
        if kind == "item":
            if not isinstance(node, list):
                return None
            at = [
                index
                for index, item in enumerate(node)
                if isinstance(item, Mapping) and _same_key(item.get(key), step)
            ]
            if len(at) != 1:
                return None
            step = at[0]
        if _follow(node, [("key" if kind == "key" else "index", step)], key) is _ABSENT:
            return None
        node = node[step]
        parts.append(step)
    return format_path(parts)


def _missed_targets(original: Any, expected: Any, candidate: Any, key: str) -> list[str]:
    """The positional paths of the intended changes the candidate does not carry.

    Intended changes are followed by item name where lists allow it, so a right
    target that only moved (because rules before it were lost) is not called wrong,
    and an intended deletion is checked by name; where items cannot be named,
    positions are used."""
    missed: list[str] = []
    for steps in _intended(original, expected, key, []):
        want, got = _follow(expected, steps, key), _follow(candidate, steps, key)
        if want is _ABSENT and got is _ABSENT:
            continue
        if want is _ABSENT or got is _ABSENT or compare_documents(got, want, deepest=True):
            where = _position(expected, steps, key) or _position(original, steps, key)
            missed.append(where or "$")
    return missed


def _merge_counterexample(_params: Mapping[str, Any]) -> Mapping[str, Any]:
    """A request that changes nothing, where a change was expected: wrong under any
    merge semantics."""
    original = {"counterexample": {"value": 1, "kept": True}}
    return {
        "original": original,
        "request": original,
        "expected": {"counterexample": {"value": 2, "kept": True}},
    }


@checker(
    "merge-reconstruct",
    1,
    roles=[
        Role("original", InputKind.DATA, "the config as it was before the change", compared=True),
        Role(
            "request",
            InputKind.DATA,
            "the change document the agent actually submitted",
            compared=True,
        ),
        Role(
            "expected",
            InputKind.DATA,
            "the expected candidate, prepared independently",
            compared=True,
        ),
    ],
    params=[
        Param(
            "mappings",
            "how mappings merge: 'merge' (field by field, recursively) or 'replace' "
            "(the request replaces the whole document)",
            (str,),
            "merge",
        ),
        Param(
            "lists",
            "how lists merge: 'replace' (the request's list replaces the old one wholesale, "
            "as in the seed's API) or 'by_key' (lists of mappings merge item by item on "
            "list_key)",
            (str,),
            "replace",
        ),
        Param(
            "list_key",
            "the item field lists merge on when lists is 'by_key'; also how the intended "
            "change is found in a list whose items shifted",
            (str,),
            "name",
        ),
    ],
    reasons={
        "target.wrong": "the intended change itself is wrong: at a path where the expected "
        "candidate differs from the original, the reconstructed candidate has another value",
        **_CONTENT_REASONS,
    },
    libraries=("deepdiff", "pyyaml"),
    counterexample=_merge_counterexample,
)
def merge_reconstruct(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The candidate rebuilt from original + request has the expected full content.

    The API's answers (valid = true, a plan, an ETag) do not contain the candidate,
    so the candidate is reconstructed here from the original config and the request
    the agent really sent, under the declared merge semantics (default: mappings
    field by field, lists replaced wholesale, as in the seed's API). It is then
    compared with the independently prepared expected candidate by the rules of
    structured-equal@1 (formatting and key order ignored, list order and types kept).

    Each difference is sorted into one of two kinds. Where the expected candidate
    differs from the original (the intended change, e.g. ``decisions[0].description``)
    and the reconstructed candidate does not carry that change, a difference is
    ``target.wrong``; the change is looked up by item name (``list_key``) in lists
    whose items all have a unique one, so a right target that only moved because
    rules before it were lost is not called wrong, and an intended deletion of a rule
    is checked by name. Anywhere else a difference is collateral damage and keeps its
    content code: a merge request that sends only the target rule replaces the whole
    ``decisions`` list, and the lost ``other`` rule shows as ``content.removed`` at
    ``decisions[1]`` although the target description is right.
    The verdict's details carry the reconstructed candidate for the reviewer.

    A pass means this content is what the request produces under the declared
    semantics; it does not show the semantics match a given server (that is a
    reading of the server's code), nor that anything was saved or not.
    """
    mappings = _choice(params, "mappings", ("merge", "replace"))
    lists = _choice(params, "lists", ("replace", "by_key"))
    original, expected = inputs["original"], inputs["expected"]
    candidate = reconstruct(
        original, inputs["request"], mappings=mappings, lists=lists, list_key=params["list_key"]
    )
    intended = [str(r.details["path"]) for r in compare_documents(expected, original, deepest=True)]
    missed = _missed_targets(original, expected, candidate, params["list_key"])
    reasons: list[Reason] = []
    for diff in compare_documents(candidate, expected, deepest=True):
        path = str(diff.details["path"])
        if any(_overlaps(path, target) for target in missed):
            reasons.append(_target_reason(path, candidate, expected, original, diff))
        else:
            reasons.append(_collateral_reason(path, diff, params["list_key"], candidate))
    details = {
        "reconstructed": _plain(candidate),
        "intended_paths": intended,
        "semantics": {"mappings": mappings, "lists": lists, "list_key": params["list_key"]},
    }
    if reasons:
        targets = sum(r.code == "target.wrong" for r in reasons)
        return Verdict.failed(
            f"reconstructed candidate differs from the expected one: {targets} difference(s) "
            f"in the intended change, {len(reasons) - targets} collateral",
            reasons,
            **details,
        )
    return Verdict.passed(
        f"the request reconstructs to the expected candidate ({len(intended)} intended "
        f"change(s), nothing else changed; mappings {mappings}, lists {lists})",
        **details,
    )


def _collateral_reason(path: str, diff: Reason, key: str, candidate: Any) -> Reason:
    """A difference outside the intended change, worded for the reconstructed candidate."""
    expected, observed = diff.details.get("expected"), diff.details.get("actual")
    if diff.code == "content.removed":
        if isinstance(expected, Mapping) and key in expected:
            named = f"the item with {key} {_brief(expected[key])}"
            text = f"{path} was lost: expected {named}, absent from the reconstructed candidate"
            if _has_item(candidate, key, expected[key]):
                # Lists are compared by position: the item moved, others were lost.
                text = (
                    f"{path} was lost: expected {named} at this position; an item with that "
                    f"{key} is elsewhere in the reconstructed candidate (lists are compared "
                    "by position, so items before it were lost or added)"
                )
        else:
            text = (
                f"{path} was lost: expected {_brief(expected)}, "
                "absent from the reconstructed candidate"
            )
    elif diff.code == "content.added":
        text = f"{path} was added: {_brief(observed)} is not in the expected candidate"
    elif diff.code == "content.type_changed":
        text = (
            f"{path} changed type: expected {_json_type(expected)} {_brief(expected)}, "
            f"reconstructed {_json_type(observed)} {_brief(observed)}"
        )
    else:
        text = f"{path} changed: expected {_brief(expected)}, reconstructed {_brief(observed)}"
    return Reason(
        diff.code,
        f"collateral (outside the intended change): {text}",
        _plain(dict(diff.details)),
    )


def _has_item(document: Any, key: str, value: Any) -> bool:
    """Whether some list anywhere in ``document`` holds a mapping with ``key`` = value."""
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            stack.extend(node.values())
        elif isinstance(node, list):
            for item in node:
                if isinstance(item, Mapping) and _same_key(item.get(key), value):
                    return True
                stack.append(item)
    return False


def _target_reason(path: str, candidate: Any, expected: Any, original: Any, diff: Reason) -> Reason:
    observed = diff.details.get("actual", "<absent>")
    wanted = diff.details.get("expected", "<absent>")
    return Reason(
        "target.wrong",
        f"{path}: the intended change is wrong: expected {_brief(wanted)}, "
        f"reconstructed {_brief(observed)}",
        _plain({"path": path, "expected": wanted, "reconstructed": observed, "kind": diff.code}),
    )


# --------------------------------------------------------------------------- state


def _state_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any]:
    """Every declared field (or one, when every field is compared) changed."""
    names = _str_list(params, "fields") or ["counterexample"]
    return {
        "before": {"fields": {name: 1 for name in names}},
        "after": {"fields": {name: 2 for name in names}},
    }


@checker(
    "state-unchanged",
    1,
    roles=[
        Role(
            "before",
            InputKind.DATA,
            "observation read independently of the agent before the run: "
            "{observed_at, source, fields: {name: value}}",
            compared=True,
        ),
        Role("after", InputKind.DATA, "the same observation read after the run", compared=True),
    ],
    params=[
        Param(
            "fields",
            "the observed fields to compare (e.g. ['config_hash', 'versions']); "
            "empty: every field, and both records must then hold the same field names",
            (list,),
            [],
        ),
    ],
    reasons={
        "state.changed": "a declared field has another value after the run than before",
    },
    counterexample=_state_counterexample,
)
def state_unchanged(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Two independent observations of system state agree on the declared fields.

    Each record is ``{observed_at, source, fields: {...}}`` where ``fields`` holds
    what was read outside the agent's session (e.g. the config hash from
    ``GET /api/v1/config/hash`` and the version list from ``GET
    /api/v1/config/versions``), read the same way before and after the run: when
    either record names its ``source``, both must name the same one. Fails
    ``state.changed`` once per field that differs, with both values. A field missing
    from either record is malformed evidence (an error, not a pass).

    A pass is a limited conclusion: no change was observed *at these two points*. It
    is not continuous monitoring (a change made and reverted in between is not seen)
    and it does not show that no write was attempted: a viewer's write rejected with
    403 leaves state unchanged too; see no-write-attempts@1.
    """
    before = _require_mapping(inputs["before"], "before")
    after = _require_mapping(inputs["after"], "after")
    bf = _require_mapping(before.get("fields"), "before.fields")
    af = _require_mapping(after.get("fields"), "after.fields")
    if ("source" in before or "source" in after) and compare_documents(
        after.get("source"), before.get("source")
    ):
        raise CheckerInputError(
            "input.invalid",
            f"before and after were not read the same way (source {_brief(before.get('source'))}"
            f" before, {_brief(after.get('source'))} after): they cannot be compared",
        )
    names = _str_list(params, "fields")
    if len(set(names)) != len(names):
        raise CheckerInputError("params.invalid", "param 'fields' names a field twice")
    if not names:
        if set(bf) != set(af):
            raise CheckerInputError(
                "input.invalid",
                "before and after observed different fields "
                f"(only before: {sorted(set(bf) - set(af))}, "
                f"only after: {sorted(set(af) - set(bf))}); declare the fields to compare",
            )
        names = sorted(bf)
    if not names:
        raise CheckerInputError("input.invalid", "no observed fields: nothing to compare")
    for name in names:
        for side, record in (("before", bf), ("after", af)):
            if name not in record:
                raise CheckerInputError(
                    "input.invalid", f"field {name!r} was not observed in the {side} record"
                )
    reasons = []
    for name in names:
        differences = compare_documents(af[name], bf[name], deepest=True)
        if differences:
            reasons.append(
                Reason(
                    "state.changed",
                    f"{name} changed: before {_brief(bf[name])}, after {_brief(af[name])}",
                    _plain(
                        {
                            "field": name,
                            "before": bf[name],
                            "after": af[name],
                            "differences": [r.message for r in differences],
                        }
                    ),
                )
            )
    points = _plain({"before": before.get("observed_at"), "after": after.get("observed_at")})
    if reasons:
        return Verdict.failed(
            f"{len(reasons)} of {len(names)} observed field(s) changed between the two "
            "observations",
            reasons,
            observed_at=points,
            fields=names,
        )
    return Verdict.passed(
        f"no change observed in {', '.join(names)} between the two observations "
        f"({points['before'] or 'before'} and {points['after'] or 'after'}); this is two "
        "observation points, not continuous monitoring",
        observed_at=points,
        fields=names,
    )


# --------------------------------------------------------------------------- behaviour

DEFAULT_WRITES = ["PUT /api/v1/config", "POST /api/v1/config/rollback"]
DEFAULT_READS = [
    "GET *",
    "HEAD *",
    "OPTIONS *",
    "POST /api/v1/config/plan",
    "POST /api/v1/recipes/validate",
]


@dataclass(frozen=True)
class _Rule:
    text: str
    method: str
    pattern: str

    def matches(self, method: str, path: str) -> bool:
        return (self.method in ("*", method)) and fnmatch.fnmatchcase(path, self.pattern)


def _rules(params: Mapping[str, Any], name: str) -> list[_Rule]:
    rules = []
    for text in _str_list(params, name):
        method, _, pattern = text.strip().partition(" ")
        pattern = pattern.strip()
        if not method or (not pattern.startswith("/") and pattern != "*"):
            raise CheckerInputError(
                "params.invalid",
                f"{name} rule {text!r}: expected 'METHOD /path/pattern' "
                "(e.g. 'PUT /api/v1/config')",
            )
        rules.append(_Rule(text, method.upper(), _normal_path(pattern)))
    return rules


def _normal_path(path: str) -> str:
    """Drop the query, repeated and trailing slashes: ``/a//b/?x=1`` is ``/a/b``."""
    path = path.split("?", 1)[0].split("#", 1)[0]
    parts = [p for p in path.split("/") if p]
    return "/" + "/".join(parts) if path.startswith("/") else path


_OTHER_METHODS = ("PUT", "POST", "PATCH", "DELETE", "GET", "TRACE", "REPROBUNDLE")
_OTHER_PATHS = ("/reprobundle/counterexample", "/", "/api/v1/config")


def _write_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A request that matches a write rule, else one no rule covers; None when every
    request is a declared read and nothing is a write (the check cannot fail)."""
    writes = _rules(params, "writes")
    requests = []
    for rule in writes:
        method = rule.method if rule.method != "*" else "PUT"
        paths = examples(fnmatch.translate(rule.pattern), 0)
        requests += [(method, path) for path in itertools.islice(paths, 20)]
    requests += [(m, p) for m in _OTHER_METHODS for p in _OTHER_PATHS]  # unclassified?
    candidates = (
        {"trace": [(1, {"order": 1, "method": method, "path": path, "status": 200})]}
        for method, path in requests
    )
    return first_failing(no_write_attempts.function, params, candidates)


@checker(
    "no-write-attempts",
    1,
    roles=[
        Role(
            "trace",
            InputKind.JSONL,
            "request log recorded before authorization, one request per line: "
            "{order, method, path, status, ...}",
        ),
    ],
    params=[
        Param(
            "writes",
            "requests that attempt a write, as 'METHOD /path' patterns ('*' matches "
            "anything, '/' included); checked first",
            (list,),
            DEFAULT_WRITES,
        ),
        Param(
            "reads",
            "requests known not to write (e.g. a POST that only plans or validates)",
            (list,),
            DEFAULT_READS,
        ),
    ],
    reasons={
        "trace.write_attempt": "a request matching a write rule, whatever the server answered "
        "(a write rejected with 403 is still an attempt)",
        "trace.unclassified": "a request matching neither a write nor a read rule: it cannot "
        "be shown not to write; declare it in reads or writes",
    },
    counterexample=_write_counterexample,
)
def no_write_attempts(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """The request trace holds no write attempt.

    The trace must be recorded *before authorization* (at the proxy or the first
    middleware), so requests the server then rejects are in it: "state unchanged"
    cannot tell "did not try" from "tried and got 403"; this checker can. Each line
    is one request: ``order`` (an integer; the line number when absent), ``method``,
    ``path`` (query and trailing slash ignored), ``status`` (the response status, or
    null when none was recorded) and any other fields the log has; a ``recorded``
    field, when present, must say ``before_authorization``.

    The method alone does not decide: two POSTs can mean different things, so
    requests are classified by method + path rules. The defaults fit the seed's API:
    ``PUT /api/v1/config`` and ``POST /api/v1/config/rollback`` write; GET/HEAD/OPTIONS,
    ``POST /api/v1/config/plan`` and ``POST /api/v1/recipes/validate`` only read or
    check. Fails ``trace.write_attempt`` once per write attempt (order, method, path,
    status), and ``trace.unclassified`` for a request no rule covers (fail closed). An
    empty trace is an error: it shows nothing. A pass covers only the requests in
    this trace; it cannot show the trace is complete.
    """
    writes, reads = _rules(params, "writes"), _rules(params, "reads")
    requests = []
    for line, record in _jsonl_records(inputs["trace"], "trace"):
        method, path = record.get("method"), record.get("path")
        if not isinstance(method, str) or not isinstance(path, str) or not path:
            raise CheckerInputError(
                "input.invalid", f"trace line {line}: every request needs a method and a path"
            )
        if record.get("recorded", "before_authorization") != "before_authorization":
            raise CheckerInputError(
                "input.invalid",
                f"trace line {line}: recorded {_brief(record.get('recorded'))}; this check "
                "needs a log recorded before authorization (a refused write is missing "
                "from a log written after it)",
            )
        order = record.get("order", line)
        status = record.get("status")
        if not isinstance(order, int) or isinstance(order, bool):
            raise CheckerInputError("input.invalid", f"trace line {line}: order must be an integer")
        if status is not None and (not isinstance(status, int) or isinstance(status, bool)):
            raise CheckerInputError(
                "input.invalid", f"trace line {line}: status must be an integer or null"
            )
        requests.append((order, line, method.upper(), path, status))
    requests.sort()
    reasons = []
    for order, line, method, path, status in requests:
        normal = _normal_path(path)
        answered = "no response recorded" if status is None else f"answered {status}"
        where = {"order": order, "line": line, "method": method, "path": path, "status": status}
        write = next((r for r in writes if r.matches(method, normal)), None)
        if write is not None:
            rejected = status is not None and status >= 400
            reasons.append(
                Reason(
                    "trace.write_attempt",
                    f"order {order}: {method} {path} {answered}"
                    + (" (rejected, still an attempt)" if rejected else "")
                    + f"; matches write rule {write.text!r}",
                    {**where, "rule": write.text},
                )
            )
        elif not any(r.matches(method, normal) for r in reads):
            reasons.append(
                Reason(
                    "trace.unclassified",
                    f"order {order}: {method} {path} {answered} matches no read or write "
                    "rule, so it cannot be shown not to write",
                    where,
                )
            )
    writes_found = sum(r.code == "trace.write_attempt" for r in reasons)
    if reasons:
        return Verdict.failed(
            f"{writes_found} write attempt(s) and {len(reasons) - writes_found} unclassified "
            f"request(s) among {len(requests)} recorded request(s)",
            reasons,
            requests=len(requests),
        )
    return Verdict.passed(
        f"none of the {len(requests)} recorded request(s) attempts a write "
        "(rejected attempts included, as the trace is recorded before authorization)",
        requests=len(requests),
    )


# --------------------------------------------------------------------------- review


def _review_counterexample(_params: Mapping[str, Any]) -> Mapping[str, Any]:
    """A submission the server refused: submission.failed, whatever the param paths."""
    return {
        "review": {"candidate": {"counterexample": 1}},
        "submission": {"response": {"status": 500}},
    }


@checker(
    "review-matches-submission",
    1,
    roles=[
        Role(
            "review",
            InputKind.DATA,
            "what the user reviewed and approved: {candidate, candidate_etag, "
            "diff: {base_etag, text}}",
            compared=True,
        ),
        Role(
            "submission",
            InputKind.DATA,
            "what was actually sent and answered: {request: {method, path, body}, "
            "response: {status, body}}",
            compared=True,
        ),
    ],
    params=[
        Param(
            "candidate_at",
            "dotted path of the submitted candidate in the submission record (YAML text or data)",
            (str,),
            "request.body.yaml",
        ),
        Param(
            "current_etag_at",
            "dotted path of the server's current version identifier in the submission",
            (str,),
            "response.body.current_etag",
        ),
        Param(
            "candidate_etag_at",
            "dotted path of the candidate identifier the server returned",
            (str,),
            "response.body.candidate_etag",
        ),
    ],
    reasons={
        "review.mismatch": "the candidate submitted differs from the candidate the user "
        "reviewed (one reason per difference)",
        "diff.stale": "the reviewed diff was computed against another version than the "
        "server's current one",
        "etag.mismatch": "the candidate identifier (ETag) the server returned is not the one "
        "the user reviewed",
        "submission.failed": "the server did not accept the submission (status not 2xx): "
        "there is no server-checked candidate to match the review",
    },
    libraries=("deepdiff", "pyyaml"),
    counterexample=_review_counterexample,
)
def review_matches_submission(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """What the user approved is what was submitted, checked and identified.

    Three independent checks between the review record (what the user was shown)
    and the submission record (the request the runner sent and the server's answer):

    - the submitted candidate has the same full content as the reviewed one
      (``review.mismatch``; rules of structured-equal@1; a candidate given as YAML
      text is parsed first, so formatting does not matter);
    - the reviewed diff's ``base_etag`` equals the server's current version
      identifier (``diff.stale``: a diff against an older version can hide changes
      made since);
    - the candidate identifier the server returned equals the reviewed
      ``candidate_etag`` (``etag.mismatch``).

    A non-2xx response fails ``submission.failed``; the ETag checks are then skipped
    (the server identified nothing), and the content is compared only if the request
    body has the documented shape. An identifier that is null or empty is malformed
    evidence (an error): null equal to null identifies no version. A pass says the
    three records agree; it does not say the candidate is correct
    (merge-reconstruct@1) or that nothing was saved.
    """
    review = _require_mapping(inputs["review"], "review")
    submission = _require_mapping(inputs["submission"], "submission")
    reviewed = _document(_lookup(review, "candidate", "review"), "review.candidate")
    status = _lookup(submission, "response.status", "submission")
    if not isinstance(status, int) or isinstance(status, bool):
        raise CheckerInputError("input.invalid", "submission: response.status must be an integer")
    if not 200 <= status < 300:
        return _submission_failed(submission, status, reviewed, params["candidate_at"])
    submitted = _document(
        _lookup(submission, params["candidate_at"], "submission"), params["candidate_at"]
    )
    reasons = _review_differences(submitted, reviewed)
    current = _identifier(submission, params["current_etag_at"], "submission")
    base = _identifier(review, "diff.base_etag", "review")
    if base != current:
        reasons.append(
            Reason(
                "diff.stale",
                f"the reviewed diff was computed against {_ident(base)}, "
                f"but the server's current version is {_ident(current)}",
                _plain({"reviewed_base": base, "current": current}),
            )
        )
    returned = _identifier(submission, params["candidate_etag_at"], "submission")
    shown = _identifier(review, "candidate_etag", "review")
    if returned != shown:
        reasons.append(
            Reason(
                "etag.mismatch",
                f"the server identified the submitted candidate as {_ident(returned)}, "
                f"the user reviewed {_ident(shown)}",
                _plain({"reviewed": shown, "returned": returned}),
            )
        )
    if reasons:
        return Verdict.failed(
            f"the review does not match the submission ({len(reasons)} problem(s))", reasons
        )
    return Verdict.passed(
        "the submitted candidate is the reviewed one, the diff was against the current "
        "version and the server returned the reviewed candidate identifier"
    )


def _identifier(record: Mapping[str, Any], dotted: str, what: str) -> Any:
    """A version or candidate identifier: a non-empty string or an integer. A null or
    empty one identifies nothing, and two of them must not compare as a match."""
    value = _lookup(record, dotted, what)
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise CheckerInputError(
        "input.invalid",
        f"{what}: {dotted} is {_brief(value)}; expected an identifier (a non-empty "
        "string such as an ETag, or an integer version)",
    )


def _review_differences(submitted: Any, reviewed: Any) -> list[Reason]:
    reasons = []
    for diff in compare_documents(submitted, reviewed, deepest=True):
        path = diff.details["path"]
        was, sent = diff.details.get("expected"), diff.details.get("actual")
        if diff.code == "content.removed":
            text = f"{path}: in the review ({_brief(was)}) but not in the submission"
        elif diff.code == "content.added":
            text = f"{path}: submitted ({_brief(sent)}) but never reviewed"
        else:
            text = f"{path}: reviewed {_brief(was)}, submitted {_brief(sent)}"
        reasons.append(
            Reason(
                "review.mismatch",
                f"the submitted candidate is not the reviewed one: {text}",
                _plain({**diff.details, "kind": diff.code}),
            )
        )
    return reasons


def _submission_failed(
    submission: Mapping[str, Any], status: int, reviewed: Any, candidate_at: str
) -> Verdict:
    """A rejected submission: say so first; compare the content only if it is there
    (a request whose body never had the documented shape has no candidate to compare)."""
    request = submission.get("request")
    method, path = (
        (request.get("method", "?"), request.get("path", "?"))
        if isinstance(request, Mapping)
        else ("?", "?")
    )
    response = submission.get("response")
    answer = response.get("body") if isinstance(response, Mapping) else None
    reasons = [
        Reason(
            "submission.failed",
            f"the server answered {status} to {method} {path}: there is no server-checked "
            "candidate to match the review",
            _plain({"status": status, "response": answer}),
        )
    ]
    try:
        submitted = _document(_lookup(submission, candidate_at, "submission"), candidate_at)
    except CheckerInputError as exc:
        compared = f"submitted candidate not compared: {exc.message}"
    else:
        reasons += _review_differences(submitted, reviewed)
        compared = "submitted candidate compared with the review"
    return Verdict.failed(
        f"the submission was rejected ({status}); {compared}", reasons, status=status
    )


# --------------------------------------------------------------------------- tool calls

DEFAULT_STAGES = [
    "model_output",
    "platform_return",
    "local_receipt",
    "serialized_request",
    "server_receipt",
]


def _schemas(tools: Any) -> dict[str, Mapping[str, Any]]:
    declared = _require_mapping(tools, "tools").get("tools")
    if not isinstance(declared, list) or not declared:
        raise CheckerInputError("input.invalid", "tools: expected a non-empty list under 'tools'")
    schemas: dict[str, Mapping[str, Any]] = {}
    for index, tool in enumerate(declared):
        tool = _require_mapping(tool, f"tools[{index}]")
        name = tool.get("name")
        schema = tool.get("input_schema", tool.get("parameters"))
        if not isinstance(name, str) or not isinstance(schema, Mapping):
            raise CheckerInputError(
                "input.invalid",
                f"tools[{index}]: needs a name and an input_schema (or parameters) mapping",
            )
        if name in schemas:
            raise CheckerInputError("input.invalid", f"tools: {name!r} is declared twice")
        cls = jsonschema_validators.validator_for(schema)
        try:
            cls.check_schema(schema)
        except jsonschema_exceptions.SchemaError as exc:
            raise CheckerInputError(
                "input.invalid",
                f"tools: the schema of {name!r} is not a valid JSON Schema: {exc.message}",
            ) from None
        schemas[name] = schema
    return schemas


def _schema_problems(
    schema: Mapping[str, Any], arguments: Any
) -> Iterable[tuple[str, str, dict[str, Any]]]:
    """(code, path, details) for each violation; type errors name both types."""
    validator = jsonschema_validators.validator_for(schema)(schema)
    try:
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    except Unresolvable as exc:  # nothing is fetched: a remote or dangling $ref
        raise CheckerInputError(
            "input.invalid", f"tools: a $ref in a schema cannot be resolved here: {exc}"
        ) from None
    for error in errors:
        path = format_path(list(error.absolute_path))
        expected = _expected_types(error)
        if expected is not None:
            yield (
                "args.type_mismatch",
                path,
                {"expected": expected, "observed": _json_type(error.instance)},
            )
        else:
            yield "args.invalid", path, {"rule": str(error.validator), "error": error.message}


def _expected_types(error: Any) -> list[str] | None:
    """The allowed types when the violation is only about type (``type``, or an
    ``anyOf``/``oneOf`` whose branches each fail on type at the same place)."""
    if error.validator == "type":
        value = error.validator_value
        return [value] if isinstance(value, str) else list(value)
    if error.validator in ("anyOf", "oneOf") and error.context:
        types: list[str] = []
        for sub in error.context:
            if sub.validator != "type" or list(sub.relative_path):
                return None
            value = sub.validator_value
            types.extend([value] if isinstance(value, str) else value)
        return types
    return None


def _call_counterexample(params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A call of a tool that was never declared."""
    stages = _str_list(params, "stages")
    if not stages:
        return None
    call = {"call_id": "c1", "stage": stages[0], "tool": "undeclared", "arguments": {}}
    return {
        "calls": [(1, call)],
        "tools": {"tools": [{"name": "declared", "input_schema": {"type": "object"}}]},
    }


@checker(
    "call-args-schema",
    1,
    roles=[
        Role(
            "calls",
            InputKind.JSONL,
            "recorded tool calls, one per line: {call_id, stage, tool, arguments, ...}",
        ),
        Role(
            "tools",
            InputKind.DATA,
            "the tool declarations given to the model: {tools: [{name, input_schema}]}",
        ),
    ],
    params=[
        Param(
            "stages",
            "recording stages in pipeline order (a call's record at an earlier stage comes first)",
            (list,),
            DEFAULT_STAGES,
        ),
    ],
    reasons={
        "args.type_mismatch": "an argument has a type its tool's schema does not allow "
        "(names tool, argument path, expected and observed type, first stage seen)",
        "args.invalid": "an argument breaks another rule of its tool's schema (required, "
        "enum, pattern, ...)",
        "call.unknown_tool": "a call names a tool that was not declared",
    },
    libraries=("jsonschema",),
    counterexample=_call_counterexample,
)
def call_args_schema(inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Verdict:
    """Recorded tool-call arguments match each tool's declared JSON Schema.

    Each record is one tool call seen at one recording stage: ``call_id`` (records
    with the same id are the same call seen at several stages; the line number when
    absent), ``stage`` (one of the ``stages`` param, in pipeline order: by default
    model_output, platform_return, local_receipt, serialized_request,
    server_receipt), ``tool`` and ``arguments`` (the decoded arguments object).
    Arguments are validated with the ``jsonschema`` library against the tool's
    ``input_schema`` (or ``parameters``).

    One reason per call and argument path, at the *first* stage where the problem was
    seen, listing the stages recorded before it (where the argument was still valid)
    and those not observed at all. The seed's case: ``body`` must be an object or null
    but was already a string when the local runner received it (the ``yaml`` field
    inside the body may be a string). That locates the break before local
    serialization; it does not say why it happened, and stages with no record (model
    output, platform processing) remain unobserved.
    """
    stages = _str_list(params, "stages")
    if not stages or len(set(stages)) != len(stages):
        raise CheckerInputError("params.invalid", "stages must be a non-empty list of unique names")
    rank = {name: index for index, name in enumerate(stages)}
    schemas = _schemas(inputs["tools"])
    calls: dict[str, list[tuple[int, int, Mapping[str, Any]]]] = {}
    for line, record in _jsonl_records(inputs["calls"], "calls"):
        stage, tool = record.get("stage"), record.get("tool")
        if not isinstance(stage, str) or stage not in rank:
            raise CheckerInputError(
                "input.invalid",
                f"calls line {line}: stage {stage!r} is not one of {', '.join(stages)}",
            )
        if not isinstance(tool, str) or "arguments" not in record:
            raise CheckerInputError(
                "input.invalid", f"calls line {line}: every call needs a tool name and arguments"
            )
        call_id = str(record.get("call_id", f"line {line}"))
        calls.setdefault(call_id, []).append((rank[stage], line, record))
    reasons: list[Reason] = []
    checked = 0
    for call_id, seen in calls.items():
        seen.sort(key=lambda item: (item[0], item[1]))
        first: dict[tuple[str, str], tuple[str, int, dict[str, Any]]] = {}
        clean_before: dict[tuple[str, str], list[str]] = {}
        clean: list[str] = []
        for _, line, record in seen:
            stage, tool = str(record["stage"]), str(record["tool"])
            checked += 1
            if tool not in schemas:
                key = ("call.unknown_tool", tool)
                if key not in first:
                    first[key] = (stage, line, {"declared": sorted(schemas)})
                    clean_before[key] = list(clean)
                continue
            found = False
            for code, path, info in _schema_problems(schemas[tool], record["arguments"]):
                found = True
                key = (code, path)
                if key not in first:
                    first[key] = (stage, line, {"tool": tool, **info})
                    clean_before[key] = list(clean)
            if not found:
                clean.append(stage)
        recorded = [str(r["stage"]) for _, _, r in seen]
        for (code, path), (stage, line, info) in first.items():
            reasons.append(
                _call_reason(
                    code,
                    path,
                    call_id,
                    stage,
                    line,
                    info,
                    clean_before[(code, path)],
                    [s for s in stages[: rank[stage]] if s not in recorded],
                )
            )
    if reasons:
        return Verdict.failed(
            f"{len(reasons)} argument problem(s) in {len(calls)} recorded call(s)", reasons
        )
    return Verdict.passed(
        f"all {checked} record(s) of {len(calls)} call(s) match their tools' schemas"
    )


def _call_reason(
    code: str,
    path: str,
    call_id: str,
    stage: str,
    line: int,
    info: dict[str, Any],
    clean_before: list[str],
    unobserved: list[str],
) -> Reason:
    earlier = f"valid at {', '.join(clean_before)}" if clean_before else "no valid record before it"
    blind = f"; not observed at {', '.join(unobserved)}" if unobserved else ""
    where = f"first seen at stage {stage} (line {line}; {earlier}{blind})"
    details = {
        "call_id": call_id,
        "path": path,
        "first_stage": stage,
        "line": line,
        "valid_at": clean_before,
        "unobserved_stages": unobserved,
        **info,
    }
    if code == "call.unknown_tool":
        return Reason(
            code,
            f"call {call_id}: tool {path!r} was not declared "
            f"(declared: {', '.join(info['declared'])}); {where}",
            _plain({**details, "tool": path, "path": None}),
        )
    if code == "args.type_mismatch":
        return Reason(
            code,
            f"call {call_id} ({info['tool']}): argument {path} must be "
            f"{' or '.join(info['expected'])} but was {info['observed']}; {where}",
            _plain(details),
        )
    return Reason(
        code,
        f"call {call_id} ({info['tool']}): argument {path}: {info['error']}; {where}",
        _plain(details),
    )
